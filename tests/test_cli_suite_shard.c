/*
 * test_cli_suite_shard.c — `ggfuzz suite --shard I/N` and `--merge`: three shards of the seed
 * corpus under a mutant (passes, structural failures and skips) merge into the verdict, exit
 * code, result JSON and JUnit XML of the single-process run, apart from timings (compared by
 * tests/slurm/suite_equal.py); the shards split the cases by identity, every case once; a
 * missing, repeated or foreign shard is refused naming it; --merge takes no --baseline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define SUITE_ARGS GG_SOURCE_DIR "/corpus/seeds --kernel grouped_bf16_cpu_tiled " \
                   "--mutant tail_rows_unwritten"

TestSuite(cli_suite_shard, .timeout = 300);

static char out[1 << 17];
static char root[64];

/* Runs a shell command in the temporary root; returns the exit code, output in out. */
static int sh(const char *fmt, const char *arg)
{
    char cmd[4096], line[2048];
    snprintf(line, sizeof line, fmt, arg);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s 2>&1", root, line);
    return cli_shell(cmd, out, sizeof out);
}

static int ggfuzz(const char *args)
{
    return sh("'" GGFUZZ_BIN "' %s", args);
}

/* The number after "key": in a result JSON's summary (the first occurrence). */
static int summary_of(const char *file, const char *key)
{
    char args[512];
    snprintf(args, sizeof args, "grep -m1 '\"%.64s\":' %.256s", key, file);
    sh("%s", args);
    const char *colon = strchr(out, ':');
    return colon ? atoi(colon + 1) : -1;
}

Test(cli_suite_shard, three_shards_merge_into_the_single_run)
{
    cli_temp_dir(root, sizeof root, "suite-shard");
    int single = ggfuzz("suite " SUITE_ARGS " --gate --json s.json --junit s.xml");
    cr_assert_eq(single, 30, "the mutant should fail the gate: %s", out);
    int cases = 0;
    for (int i = 0; i < 3; i++) {
        char args[512];
        snprintf(args, sizeof args, "suite " SUITE_ARGS " --shard %d/3 --json r%d.json", i, i);
        cr_expect_eq(ggfuzz(args), 0, "%s", out);
        snprintf(args, sizeof args, "r%d.json", i);
        int n = summary_of(args, "cases");
        cr_expect(n >= 8 && n <= 11, "shard %d ran %d of the 28 cases", i, n);
        cases += n;
    }
    cr_expect_eq(cases, 28, "the shards ran %d cases, not each of the 28 once", cases);
    cr_expect_eq(ggfuzz("suite --merge r2.json r0.json r1.json --gate --json m.json "
                        "--junit m.xml --report rep"), 30, "%s", out);
    cr_expect(strstr(out, "gate: FAIL (7 cases with a structural fault)"), "%s", out);
    cr_expect(strstr(out, "report: rep/index.html"), "%s", out);
    cr_expect_eq(sh("/usr/bin/python3 " GG_SOURCE_DIR "/tests/slurm/suite_equal.py %s",
                    "s.json m.json s.xml m.xml"), 0, "%s", out);
    /* the shards' results carry their shard, the merged one does not */
    cr_expect_eq(sh("grep -c '\"shard\"' %s", "r1.json"), 0, "%s", out);
    cr_expect_neq(sh("grep -c '\"shard\"' %s", "m.json"), 0, "%s", out);
    cli_remove_dir(root);
}

Test(cli_suite_shard, missing_repeated_and_foreign_shards_are_refused)
{
    cli_temp_dir(root, sizeof root, "suite-shard");
    cr_assert_eq(ggfuzz("suite " SUITE_ARGS " --shard 0/3 --json r0.json"), 0, "%s", out);
    cr_assert_eq(ggfuzz("suite " SUITE_ARGS " --shard 1/3 --json r1.json"), 0, "%s", out);
    cr_assert_eq(ggfuzz("suite " SUITE_ARGS " --json s.json"), 0, "%s", out);
    cr_assert_eq(ggfuzz("suite " SUITE_ARGS " --shard 0/2 --json q0.json"), 0, "%s", out);
    cr_expect_eq(ggfuzz("suite --merge r0.json r1.json"), 3, "%s", out);
    cr_expect(strstr(out, "shard 2/3 is missing"), "%s", out);
    cr_expect_eq(ggfuzz("suite --merge r0.json r1.json r1.json"), 3, "%s", out);
    cr_expect(strstr(out, "are both shard 1"), "%s", out);
    cr_expect_eq(ggfuzz("suite --merge r0.json s.json"), 3, "%s", out);
    cr_expect(strstr(out, "s.json: not a shard's result"), "%s", out);
    cr_expect_eq(ggfuzz("suite --merge r0.json q0.json"), 3, "%s", out);
    cr_expect(strstr(out, "q0.json: shard.count differs"), "%s", out);
    cr_expect_eq(ggfuzz("suite --merge --baseline s.json r0.json r1.json"), 2, "%s", out);
    cr_expect_eq(ggfuzz("suite --merge"), 2, "%s", out);
    cr_expect_eq(ggfuzz("suite --shard 3/3"), 2, "%s", out);
    cli_remove_dir(root);
}

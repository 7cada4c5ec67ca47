/*
 * test_cli_shard.c — `ggfuzz fuzz` run as shards of one campaign directory and `ggfuzz merge`:
 * which shard a process is (--shard, Slurm's environment, refused past the shard limit), the
 * shard directories, distinct seed streams, the cases one shard imports from another, the merged
 * store (one finding per signature with the counts summed, idempotent, whole when four merges run
 * at once, refusing its own output as an input), and a shard that goes on where it stopped
 * without filing its findings again.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define KERNEL "grouped_bf16_cpu_tiled"
#define MUTANT "wgrad_zero_uninit"

TestSuite(cli_shard, .timeout = 300);

static char out[1 << 17];
static char root[64];

/* Runs `env ENV ggfuzz ARGS` in the temporary root; returns the exit code, output in out. */
static int ggfuzz_env(const char *env, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID "
             "-u SLURM_NTASKS -u SLURM_ARRAY_TASK_COUNT %s '%s' %s 2>&1", root, env, GGFUZZ_BIN,
             args);
    return cli_shell(cmd, out, sizeof out);
}

static int ggfuzz(const char *args)
{
    return ggfuzz_env("", args);
}

/* The value of key in the fuzzer_stats file at path ("" when absent). */
static void stat_of(const char *path, const char *key, char *val, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    val[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ' ') {
            char *v = strchr(line, ':');
            snprintf(val, len, "%s", v ? v + 2 : "");
            val[strcspn(val, "\n")] = '\0';
        }
    fclose(f);
}

/* Sum of the @finding counts of every finding in store dir, and how many findings it holds. */
static long long store_count(const char *dir, int *files)
{
    DIR *d = opendir(dir);
    long long sum = 0;
    *files = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 5 || strcmp(e->d_name + n - 5, ".case"))
            continue;
        char path[1024], line[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            const char *c = strstr(line, "@finding count=");
            if (c)
                sum += atoll(c + strlen("@finding count="));
        }
        if (f)
            fclose(f);
        (*files)++;
    }
    if (d)
        closedir(d);
    return sum;
}

Test(cli_shard, bad_shards_are_usage_errors)
{
    cli_temp_dir(root, sizeof root, "cli-shard");
    const char *bad[] = {"4/4", "1/0", "-1/2", "a/2", "1/2x", "1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[256];
        snprintf(args, sizeof args, "fuzz --kernel " KERNEL " --shard %s --runs 1", bad[i]);
        cr_expect_eq(ggfuzz(args), 2, "--shard %s: %s", bad[i], out);
        cr_expect(strstr(out, "--shard: expected I/N"), "%s", out);
    }
    cr_expect_eq(ggfuzz("fuzz --kernel " KERNEL " --shard 0/2 --artifacts a --runs 1"), 2, "%s",
                 out);
    cr_expect(strstr(out, "--artifacts and --stats-dir do not go with a shard"), "%s", out);
    cr_expect_eq(ggfuzz_env("SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_COUNT=4",
                            "fuzz --kernel " KERNEL " --runs 1"), 2, "%s", out);
    cr_expect(strstr(out, "cannot tell which shard this is"), "%s", out);
    cr_expect_eq(ggfuzz("merge s1 s2"), 2, "%s", out);
    cr_expect(strstr(out, "-o STORE is needed"), "%s", out);
    cli_remove_dir(root);
}

/* Array tasks times tasks past GG_CLI_SHARD_MAX (65536) shards: a usage error that names the
   variables and the limit, never a campaign that every task runs as shard 0/1. */
Test(cli_shard, more_slurm_shards_than_the_limit_are_a_usage_error)
{
    cli_temp_dir(root, sizeof root, "cli-shard");
    static const struct { const char *env, *says; } over[] = {
        {"SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=300 SLURM_PROCID=1 SLURM_NTASKS=300",
         "SLURM_ARRAY_TASK_COUNT=300 array tasks times SLURM_NTASKS=300 tasks make 90000 "
         "shards, more than 65536"},
        {"SLURM_PROCID=1 SLURM_NTASKS=70000", "SLURM_NTASKS=70000 shards are more than 65536"},
        {"SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=65537",
         "SLURM_ARRAY_TASK_COUNT=65537 shards are more than 65536"},
    };
    for (size_t i = 0; i < sizeof over / sizeof *over; i++) {
        for (int campaign = 0; campaign < 2; campaign++) {
            cr_expect_eq(ggfuzz_env(over[i].env, campaign ? "fuzz --kernel " KERNEL " --runs 1 "
                                                            "--workers 1 --campaign c"
                                                          : "fuzz --kernel " KERNEL " --runs 1 "
                                                            "--workers 1"),
                         2, "%s: %s", over[i].env, out);
            cr_expect(strstr(out, "cannot tell which shard this is") &&
                          strstr(out, over[i].says), "%s: %s", over[i].env, out);
        }
    }
    struct stat sb;
    char path[128];
    snprintf(path, sizeof path, "%s/c", root);
    cr_expect_neq(stat(path, &sb), 0, "a campaign directory was made");
    /* An array index past the limit is fine when the count is not. */
    cr_expect_eq(ggfuzz_env("SLURM_ARRAY_TASK_ID=100001 SLURM_ARRAY_TASK_MIN=100000 "
                            "SLURM_ARRAY_TASK_COUNT=4",
                            "fuzz --kernel " KERNEL " --runs 1 --workers 1 --seed 1 --campaign c"),
                 0, "%s", out);
    cr_expect(strstr(out, "INFO: shard 1/4 (SLURM_ARRAY_TASK_ID=100001 of "
                          "SLURM_ARRAY_TASK_COUNT=4)"), "%s", out);
    cli_remove_dir(root);
}

Test(cli_shard, slurm_environment_names_the_shard_and_the_flag_wins)
{
    cli_temp_dir(root, sizeof root, "cli-shard");
    cr_expect_eq(ggfuzz_env("SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_COUNT=4",
                            "fuzz --kernel " KERNEL " --runs 2 --workers 1 --seed 1 --campaign c"),
                 0, "%s", out);
    cr_expect(strstr(out, "INFO: shard 2/4 (SLURM_ARRAY_TASK_ID=5 of SLURM_ARRAY_TASK_COUNT=4)"),
              "%s", out);
    cr_expect_eq(ggfuzz_env("SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_PROCID=2 "
                            "SLURM_NTASKS=3",
                            "fuzz --kernel " KERNEL " --runs 2 --workers 1 --seed 1 --campaign c"),
                 0, "%s", out);
    cr_expect(strstr(out, "INFO: shard 5/6 (array task 1 of 2, task 2 of 3)"), "%s", out);
    cr_expect_eq(ggfuzz_env("SLURM_PROCID=1 SLURM_NTASKS=8",
                            "fuzz --kernel " KERNEL " --runs 2 --workers 1 --seed 1 --campaign c "
                            "--shard 3/4"), 0, "%s", out);
    cr_expect(strstr(out, "INFO: shard 3/4 (--shard) of campaign c"), "%s", out);
    char path[256], shard[64];
    snprintf(path, sizeof path, "%s/c/shard-3/fuzzer_stats", root);
    stat_of(path, "shard", shard, sizeof shard);
    cr_expect_str_eq(shard, "3/4");
    /* a single task is no shard: a plain campaign */
    cr_expect_eq(ggfuzz_env("SLURM_PROCID=0 SLURM_NTASKS=1",
                            "fuzz --kernel " KERNEL " --runs 2 --workers 1 --seed 1"), 0, "%s",
                 out);
    cr_expect_null(strstr(out, "INFO: shard"), "%s", out);
    cli_remove_dir(root);
}

Test(cli_shard, shards_share_cases_merge_their_findings_and_go_on_where_they_stopped)
{
    cli_temp_dir(root, sizeof root, "cli-shard");
    char cmd[4096];
    /* Two shards at once on one campaign directory, syncing every second. */
    snprintf(cmd, sizeof cmd, "cd '%s' && for i in 0 1; do '%s' fuzz --kernel " KERNEL
             " --mutant " MUTANT " --shard $i/2 --campaign c --max-total-time 12 --workers 1 "
             "--seed 5 --sync-interval 1 > log$i 2>&1 & done; wait; cat log0 log1", root,
             GGFUZZ_BIN);
    cli_shell(cmd, out, sizeof out);
    cr_expect(strstr(out, "[shard 0/2] #"), "%s", out);
    cr_expect(strstr(out, "SYNC"), "no shard imported a case: %s", out);
    cr_expect(strstr(out, "INFO: merged the findings of 2 shards into c/artifacts"), "%s", out);
    char p0[256], p1[256], s0[64], s1[64], imported[64];
    snprintf(p0, sizeof p0, "%s/c/shard-0/fuzzer_stats", root);
    snprintf(p1, sizeof p1, "%s/c/shard-1/fuzzer_stats", root);
    stat_of(p0, "seed", s0, sizeof s0);
    stat_of(p1, "seed", s1, sizeof s1);
    cr_expect_str_neq(s0, s1, "the shards drew from one seed stream");
    stat_of(p0, "imported", imported, sizeof imported);
    char i1[64];
    stat_of(p1, "imported", i1, sizeof i1);
    cr_expect(atoll(imported) + atoll(i1) > 0, "nothing imported");

    /* The merged store: one finding per signature, the shards' counts summed. */
    char dir[256];
    int f0, f1, fm, n_files;
    snprintf(dir, sizeof dir, "%s/c/shard-0/artifacts", root);
    long long c0 = store_count(dir, &f0);
    snprintf(dir, sizeof dir, "%s/c/shard-1/artifacts", root);
    long long c1 = store_count(dir, &f1);
    cr_assert_gt(c0 + c1, 0, "the mutant was not found");
    cr_expect_eq(ggfuzz("merge c"), 0, "%s", out);
    snprintf(dir, sizeof dir, "%s/c/artifacts", root);
    long long cm = store_count(dir, &fm);
    cr_expect_eq(cm, c0 + c1, "merged count %lld, shards %lld + %lld", cm, c0, c1);
    cr_expect_leq(fm, f0 + f1);
    cr_expect(strstr(out, "0 files written"), "a second merge changed the store: %s", out);
    /* Into another store, named by its shards' stores; the output may not be an input. */
    cr_expect_eq(ggfuzz("merge c/shard-0/artifacts c/shard-1/artifacts -o m2"), 0, "%s", out);
    snprintf(dir, sizeof dir, "%s/m2", root);
    cr_expect_eq(store_count(dir, &n_files), cm);
    /* Four merges at once into a fresh store leave it whole and the same. */
    snprintf(cmd, sizeof cmd, "cd '%s' && for i in 1 2 3 4; do '%s' merge c -o m3 > /dev/null & "
             "done; wait", root, GGFUZZ_BIN);
    cli_shell(cmd, out, sizeof out);
    snprintf(dir, sizeof dir, "%s/m3", root);
    cr_expect_eq(store_count(dir, &n_files), cm, "merges at once left another count");
    cr_expect_eq(n_files, fm);
    cr_expect_eq(ggfuzz("merge c/shard-0/artifacts m2 -o m2"), 3, "%s", out);
    cr_expect(strstr(out, "is also an input"), "%s", out);

    /* Shard 0 again: it goes on with its seed at the case it stopped at, replaying nothing. */
    char next[64], again[64], execs[64];
    stat_of(p0, "next_case", next, sizeof next);
    int rc = ggfuzz("fuzz --kernel " KERNEL " --mutant " MUTANT " --shard 0/2 --campaign c "
                    "--runs 3 --workers 1 --seed 99");
    cr_expect(rc == 0 || rc == 15, "exit %d: %s", rc, out); /* 15: an unwritten finding */
    cr_expect(strstr(out, "going on where it stopped"), "%s", out);
    char line[256];
    snprintf(line, sizeof line, "INFO: resuming at case %s of seed %s", next, s0);
    cr_expect(strstr(out, line), "expected '%s': %s", line, out);
    cr_expect(strstr(out, "0 stored failures to replay"), "%s", out);
    stat_of(p0, "seed", again, sizeof again);
    cr_expect_str_eq(again, s0);
    stat_of(p0, "execs_done", execs, sizeof execs);
    snprintf(dir, sizeof dir, "%s/c/shard-0/artifacts", root);
    long long after = store_count(dir, &n_files);
    cr_expect_leq(after, c0 + atoll(execs), "findings filed again on resume");
    cli_remove_dir(root);
}

/* A shard killed after cases ended but before its fuzzer_stats recorded them (--stats-interval
   keeps the first one): requeued, it goes on at that fuzzer_stats' next_case and skips the cases
   that had ended, instead of running them again and counting their findings twice. */
Test(cli_shard, a_requeued_shard_skips_the_cases_that_ended_after_its_statistics)
{
    cli_temp_dir(root, sizeof root, "cli-shard");
    char cmd[4096];
    const char *args = "fuzz --kernel " KERNEL " --mutant tail_rows_unwritten --shard 0/1 "
                       "--campaign c --workers 1 --seed 11 --no-minimize";
    snprintf(cmd, sizeof cmd, "cd '%s' && (setsid '%s' %s --stats-interval 1000 "
             "--max-total-time 60 > log 2>&1 & echo $! > pid); for i in $(seq 600); do "
             "[ \"$(grep -c FAULT log)\" -ge 2 ] && break; sleep 0.05; done; "
             "kill -9 -$(cat pid); sleep 0.5; grep -c FAULT log", root, GGFUZZ_BIN, args);
    cli_shell(cmd, out, sizeof out);
    cr_assert_geq(atoi(out), 2, "no finding before the kill: %s", out);
    char p[256], next[64], done_file[256], line[64];
    snprintf(p, sizeof p, "%s/c/shard-0/fuzzer_stats", root);
    stat_of(p, "next_case", next, sizeof next);
    snprintf(done_file, sizeof done_file, "%s/c/shard-0/done_cases", root);
    FILE *f = fopen(done_file, "r");
    cr_assert_not_null(f, "%s", done_file);
    long ended = -1; /* lines after the header */
    while (fgets(line, sizeof line, f))
        ended++;
    fclose(f);
    cr_assert_gt(ended, 0);
    int files;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/c/shard-0/artifacts", root);
    long long before = store_count(dir, &files);

    char again[512];
    snprintf(again, sizeof again, "%s --runs 60", args);
    int rc = ggfuzz(again);
    cr_expect(rc == 0 || rc == 15, "exit %d: %s", rc, out);
    char want[256];
    snprintf(want, sizeof want, "INFO: resuming at case %s of seed", next);
    cr_expect(strstr(out, want), "%s", out);
    snprintf(want, sizeof want, "INFO: skipping %ld cases that ended after the last fuzzer_stats",
             ended);
    cr_expect(strstr(out, want), "%s", out);
    /* The shard's corpus is run first, then drawn cases, past the skipped numbers. */
    long replays = -1, seeds = -1;
    const char *q = strstr(out, " stored failures to replay, ");
    cr_assert_not_null(q, "%s", out);
    while (q > out && q[-1] != ' ')
        q--;
    cr_assert_eq(sscanf(q, "%ld stored failures to replay, %ld corpus seeds", &replays, &seeds),
                 2, "%s", out);
    cr_assert_lt(replays + seeds, 60);
    char after[64];
    stat_of(p, "next_case", after, sizeof after);
    cr_expect_geq(atoll(after), atoll(next) + ended + 60 - replays - seeds,
                  "the skipped cases were drawn again: next_case %s, then %s, %ld skipped: %s",
                  next, after, ended, out);
    cr_expect_leq(store_count(dir, &files), before + 60, "findings counted again");
    cli_remove_dir(root);
}

/*
 * test_cli_minimize.c — `ggfuzz minimize` as a user drives it: a mutant's case shrinks into a
 * file that replays on its own with its @expect and @min lines, the default output name, a
 * passing case is refused, and usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"
#include "fuzz/case/gg_case.h"
#include "fuzz/run/gg_run.h"

#define N_TAIL GG_SOURCE_DIR "/corpus/mutants/n_tail.case"

static char out[1 << 16];

/* Runs ggfuzz with args; returns the exit code, with stdout and stderr in out. */
static int ggfuzz(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", GGFUZZ_BIN, args);
    return cli_shell(cmd, out, sizeof out);
}

/* A fresh directory holding a copy of the n_tail mutant's case as n_tail.case. */
static void scratch_copy(char dir[64], char path[128])
{
    snprintf(dir, 64, "/tmp/ggfuzz-clim-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, 128, "%s/n_tail.case", dir);
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_load(N_TAIL, &c, err, sizeof err), GG_OK, "%s", err);
    /* as a finding of a campaign: what the stored case showed, and its sightings */
    cr_assert_eq(gg_case_set_meta(&c, "observed", "what the case as found showed"), GG_OK);
    cr_assert_eq(gg_case_set_meta(&c, "finding", "count=7 first_seen=2001-02-03T04:05:06Z"),
                 GG_OK);
    cr_assert_eq(gg_case_save(&c, path, err, sizeof err), GG_OK, "%s", err);
    gg_case_free(&c);
}

static void remove_files(const char *dir, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        char path[192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

Test(cli_minimize, shrinks_into_a_file_that_replays)
{
    char dir[64], path[128], min[160], args[512], err[512];
    scratch_copy(dir, path);
    snprintf(min, sizeof min, "%s/small.case", dir);
    snprintf(args, sizeof args, "minimize %s -o %s --max-total-time 8 --timeout 60", path, min);
    cr_assert_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "before:") && strstr(out, "after:"), "%s", out);

    struct gg_case orig, c;
    cr_assert_eq(gg_case_load(path, &orig, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_load(min, &c, err, sizeof err), GG_OK, "%s", err);
    char from[GG_CASE_ID_HEX + 1], id[GG_CASE_ID_HEX + 1], want[64];
    gg_case_id(&orig, from);
    gg_case_id(&c, id);
    snprintf(want, sizeof want, "from=%s ", from);
    const char *minline = gg_case_meta(&c, "min"), *expect = gg_case_meta(&c, "expect");
    cr_assert_not_null(minline);
    cr_expect(strstr(minline, want) && strstr(minline, "attempts=") && strstr(minline, "seconds="),
              "@min %s", minline);
    cr_assert_not_null(expect);
    cr_expect(strncmp(expect, "class=snr sig=snr/batched_bf16_cpu_tiled/", 41) == 0, "%s", expect);
    cr_expect(strstr(out, from) && strstr(out, id), "before and after ids: %s", out);
    /* Every @ line is true of the minimised case: its own run's @observed, none of the
       original's sightings; the note stays. */
    cr_expect_null(gg_case_meta(&c, "finding"));
    cr_expect_not_null(gg_case_meta(&c, "note"));
    struct gg_run_result r;
    struct gg_run_opts o = {0};
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_str_eq(gg_case_meta(&c, "observed"), r.verdict.detail);
    gg_run_result_free(&r);
    cr_expect_eq(c.groups, 1, "n_tail shows in one batch");
    cr_expect_leq(c.m * c.n, orig.m * orig.n);
    gg_case_free(&orig);
    gg_case_free(&c);

    snprintf(args, sizeof args, "replay %s", min);
    cr_expect_eq(ggfuzz(args), 0, "the minimised case does not replay: %s", out);
    static const char *const names[] = {"n_tail.case", "small.case"};
    remove_files(dir, names, 2);
}

Test(cli_minimize, default_output_name)
{
    char dir[64], path[128], args[512], min[160];
    scratch_copy(dir, path);
    snprintf(args, sizeof args, "minimize --max-total-time 8 --repeats 1 %s", path);
    cr_assert_eq(ggfuzz(args), 0, "%s", out);
    snprintf(min, sizeof min, "%s/n_tail.min.case", dir);
    struct stat sb;
    cr_expect_eq(stat(min, &sb), 0, "no %s: %s", min, out);
    static const char *const names[] = {"n_tail.case", "n_tail.min.case"};
    remove_files(dir, names, 2);
}

Test(cli_minimize, a_passing_case_is_refused)
{
    char dir[64], path[128], args[512], min[160];
    scratch_copy(dir, path);
    snprintf(min, sizeof min, "%s/never.case", dir);
    snprintf(args, sizeof args, "minimize %s --mutant none -o %s", path, min);
    cr_expect_eq(ggfuzz(args), 3, "%s", out);
    cr_expect(strstr(out, "passes"), "%s", out);
    struct stat sb;
    cr_expect_neq(stat(min, &sb), 0, "a passing case must not be written");
    static const char *const names[] = {"n_tail.case"};
    remove_files(dir, names, 1);
}

Test(cli_minimize, usage_errors)
{
    cr_expect_eq(ggfuzz("minimize"), 2, "%s", out);
    cr_expect_eq(ggfuzz("minimize " N_TAIL " " N_TAIL), 2, "%s", out);
    cr_expect_eq(ggfuzz("minimize --max-total-time soon " N_TAIL), 2, "%s", out);
    cr_expect_eq(ggfuzz("minimize --repeats 1.5 " N_TAIL), 2, "%s", out);
    cr_expect_eq(ggfuzz("minimize /nonexistent/x.case"), 3, "%s", out);
    cr_expect_eq(ggfuzz("minimize --help"), 0, "%s", out);
    cr_expect(strstr(out, "usage: ggfuzz minimize") && strstr(out, "--repeats"), "%s", out);
}

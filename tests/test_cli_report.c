/*
 * test_cli_report.c — `ggfuzz report` as a user drives it: the report directory is written from a
 * suite result, campaigns and a history of nights, usage errors exit 2, unreadable or malformed inputs exit 3 with the
 * file and the field named, and a missing gnuplot is said on stderr, not fatal.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/cli/cli_int.h"

#define REPORT_DATA GG_TEST_DATA "/report"

static char out_text[1 << 14], err_text[1 << 14];

/* Reads what fd's file holds into buf (from the start). */
static void drain(int fd, char *buf, size_t len)
{
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
}

/* Runs `ggfuzz report ARGS` in this process (ARGS split on spaces) with stdout and stderr caught
   in out_text and err_text; returns its exit code. */
static int report(const char *args)
{
    char copy[2048], name[] = "report", *argv[32] = {name};
    int argc = 1;
    snprintf(copy, sizeof copy, "%s", args);
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && argc < 31;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    char out_path[] = "/tmp/ggfuzz-cli-report-out-XXXXXX";
    char err_path[] = "/tmp/ggfuzz-cli-report-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0);
    unlink(out_path);
    unlink(err_path);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    int rc = gg_cli_report(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    drain(out_fd, out_text, sizeof out_text);
    drain(err_fd, err_text, sizeof err_text);
    return rc;
}

static void scratch(char dir[64])
{
    snprintf(dir, 64, "/tmp/ggfuzz-cli-report-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Removes the report files written into dir, then dir. */
static void remove_report(const char *dir)
{
    const char *names[] = {"index.html", "summary.md", "snr_margin.png", "groups_1.png",
                           "groups_2.png", "groups_3.png", "groups_4.png", "groups_5.png",
                           "groups_6.png", "campaign_1.png", "campaign_2.png"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    cr_expect_eq(rmdir(dir), 0, "only report files in %s", dir);
}

static int exists(const char *dir, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

Test(cli_report, writes_the_report_directory)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], args[512];
    scratch(dir);
    snprintf(args, sizeof args, "--suite %s/suite_bad_expert.json --campaign %s/campaign -o %s",
             REPORT_DATA, REPORT_DATA, dir);
    cr_assert_eq(report(args), 0, "%s%s", out_text, err_text);
    cr_expect(strstr(out_text, "index.html") && strstr(out_text, "summary.md"), "%s", out_text);
    cr_expect(strstr(err_text, "plots skipped: GGFUZZ_GNUPLOT=/nonexistent/gnuplot") != NULL, "%s",
              err_text);
    cr_expect(exists(dir, "index.html") && exists(dir, "summary.md"));
    remove_report(dir);

    /* Into a directory that does not exist yet, campaign only. */
    char nested[128];
    snprintf(nested, sizeof nested, "%s/a/b", dir);
    snprintf(args, sizeof args, "--campaign %s/campaign --output %s", REPORT_DATA, nested);
    cr_assert_eq(report(args), 0, "%s%s", out_text, err_text);
    cr_expect(exists(nested, "index.html"));
    remove_report(nested);
    snprintf(nested, sizeof nested, "%s/a", dir);
    rmdir(nested);
    rmdir(dir);
}

Test(cli_report, usage_errors_exit_2)
{
    static const char *const cases[][2] = {
        {"", "-o OUTDIR is required"},
        {"--suite x.json", "-o OUTDIR is required"},
        {"-o /tmp/ggfuzz-cli-report-never", "give --suite FILE, --campaign DIR, --history DIR or more"},
        {"--suite x.json -o /tmp/ggfuzz-cli-report-never extra", "unexpected argument extra"},
        {"--suite a.json --suite b.json -o /tmp/ggfuzz-cli-report-never", "--suite: given twice"},
        {"--history a --history b -o /tmp/ggfuzz-cli-report-never", "--history: given twice"},
        {"--bogus -o /tmp/ggfuzz-cli-report-never", "unknown option '--bogus'"},
        {"--suite", "a value is missing after '--suite'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_expect_eq(report(cases[i][0]), GG_EXIT_USAGE, "'%s'", cases[i][0]);
        cr_expect(strstr(err_text, cases[i][1]) != NULL, "'%s': %s", cases[i][0], err_text);
        /* One line, then where to look; not the whole usage text. */
        const char *hint = strstr(err_text, "\ntry 'ggfuzz report --help'\n");
        cr_expect(hint && hint[strlen("\ntry 'ggfuzz report --help'\n")] == '\0' &&
                  strchr(err_text, '\n') == hint, "'%s': %s", cases[i][0], err_text);
    }
    cr_expect_neq(access("/tmp/ggfuzz-cli-report-never", F_OK), 0);
    cr_expect_eq(report("--help"), 0);
    cr_expect(strstr(out_text, "usage: ggfuzz report") != NULL);
}

Test(cli_report, bad_inputs_exit_3)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char args[512];
    snprintf(args, sizeof args, "--suite %s/suite_bad_field.json -o /tmp/ggfuzz-cli-report-never",
             REPORT_DATA);
    cr_expect_eq(report(args), GG_EXIT_HARNESS);
    cr_expect(strstr(err_text, "suite_bad_field.json: cases[1].threshold_db:") != NULL, "%s",
              err_text);
    snprintf(args, sizeof args, "--suite %s/suite_bad_expert.json --campaign %s/nowhere "
             "-o /tmp/ggfuzz-cli-report-never", REPORT_DATA, REPORT_DATA);
    cr_expect_eq(report(args), GG_EXIT_HARNESS);
    cr_expect(strstr(err_text, "nowhere: cannot open the campaign directory") != NULL, "%s",
              err_text);
    cr_expect_neq(access("/tmp/ggfuzz-cli-report-never", F_OK), 0, "nothing written");
}

/* A FIFO where a finding or the suite result should be is never waited on (the test's timeout
   bounds it): the finding is listed with the reader's message, the suite refused by name. */
Test(cli_report, a_fifo_among_the_inputs_is_not_waited_on, .timeout = 30)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], campaign[128], cmd[512], args[512];
    scratch(dir);
    snprintf(campaign, sizeof campaign, "%s/campaign", dir);
    snprintf(cmd, sizeof cmd, "cp -r '%s/campaign' '%s' && mkfifo '%s/artifacts/"
             "crash-00000000000000ff.case' '%s/suite.json'", REPORT_DATA, dir, campaign, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "--campaign %s -o %s/out", campaign, dir);
    cr_expect_eq(report(args), 0, "%s%s", out_text, err_text);
    snprintf(cmd, sizeof cmd, "grep -q 'crash-00000000000000ff.case: cannot read: not a regular "
             "file' '%s/out/summary.md'", dir);
    cr_expect_eq(system(cmd), 0, "the FIFO is not listed with its reason");
    snprintf(args, sizeof args, "--suite %s/suite.json -o %s/out", dir, dir);
    cr_expect_eq(report(args), GG_EXIT_HARNESS);
    cr_expect(strstr(err_text, "suite.json: cannot read: not a regular file"), "%s", err_text);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* --history: every campaign directory under it is a night; the latest is shown in full. A
   history that cannot be opened is an input error. */
Test(cli_report, a_history_of_nights)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], cmd[1024], args[512];
    scratch(dir);
    snprintf(cmd, sizeof cmd, "mkdir '%s/h' && cp -r '%s/campaign' '%s/h/n1' && "
             "cp -r '%s/buckets' '%s/h/n2'", dir, REPORT_DATA, dir, REPORT_DATA, dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "--history %s/h -o %s/out", dir, dir);
    cr_expect_eq(report(args), 0, "%s%s", out_text, err_text);
    snprintf(cmd, sizeof cmd, "grep -q '^## Nights (2)$' '%s/out/summary.md' && "
             "grep -c '^## Campaign ' '%s/out/summary.md' | grep -qx 1 && "
             "grep -q '^## Campaign `%s/h/n2`$' '%s/out/summary.md'", dir, dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "the nights, and the latest night in full");
    snprintf(args, sizeof args, "--history %s/none -o %s/out", dir, dir);
    cr_expect_eq(report(args), GG_EXIT_HARNESS);
    cr_expect(strstr(err_text, "none: cannot open") != NULL, "%s", err_text);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

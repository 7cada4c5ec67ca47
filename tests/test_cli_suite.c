/*
 * test_cli_suite.c — `ggfuzz suite` as a release manager drives it, on committed quick-tier
 * cases: the gate passes on the correct CPU kernels and fails with exit code 30, naming the
 * cases, under an SNR mutant; without --gate a failure is reported but exits 0; JUnit output is
 * valid XML and the HTML report is written; usage errors exit 2 and harness errors 3; --generate writes the tiers.
 * Without --suite-dir the tiers are those of the source tree the build came from, whatever the
 * current directory (an installed ggfuzz uses its prefix's).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/cli/gg_cli.h"
#include "fuzz/suite/gg_suite.h"

static char out[1 << 16];

/* The suite generated afresh into a temporary directory (the committed copy is compared with
   the generator in test_suite_generate.c), and in it the cheapest quick cases: the small-M
   MX-FP8 path on each of its two kernels. */
static char gen_root[64], case_gemv[160], case_tiled[160];

static void generate_suite(void)
{
    snprintf(gen_root, sizeof gen_root, "/tmp/ggfuzz-cli-suite-XXXXXX");
    cr_assert_not_null(mkdtemp(gen_root));
    char err[1024];
    cr_assert_eq(gg_suite_generate(gen_root, NULL, err, sizeof err), GG_OK, "%s", err);
    snprintf(case_gemv, sizeof case_gemv, "%s/quick/llama1b_gate_up_dense_m1_mxfp8.case", gen_root);
    snprintf(case_tiled, sizeof case_tiled, "%s/quick/llama1b_down_dense_m64_mxfp8.case", gen_root);
}

static void remove_suite(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", gen_root);
    cr_assert_eq(system(cmd), 0);
}

/* Runs gg_cli_suite on the words of args with stdout and stderr captured in out. */
static int suite(const char *args)
{
    char *copy = strdup(args), *argv[32];
    int argc = 0;
    argv[argc++] = "suite";
    for (char *w = strtok(copy, " "); w && argc < 31; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    char path[] = "/tmp/ggfuzz-cli-suite-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    int code = gg_cli_suite(argc, argv, NULL, 0);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    free(copy);
    return code;
}

Test(cli_suite, usage_errors)
{
    cr_expect_eq(suite("--tier nightly"), 2, "%s", out);
    cr_expect(strstr(out, "quick, release or stress"), "%s", out);
    cr_expect_eq(suite("--kernel no_such_kernel x.case"), 2, "%s", out);
    cr_expect(strstr(out, "unknown kernel 'no_such_kernel'"), "%s", out);
    cr_expect_eq(suite("--snr-drop -1 x.case"), 2, "%s", out);
    cr_expect_eq(suite("--help"), 0);
    cr_expect(strstr(out, "--baseline FILE"), "%s", out);
}

Test(cli_suite, gate_passes_on_correct_kernels_with_valid_junit, .init = generate_suite,
     .fini = remove_suite)
{
    const char *dir = gen_root;
    char args[1024];
    snprintf(args, sizeof args, "--gate --junit %s/junit.xml --json %s/result.json --report %s/rep "
             "%s %s", dir, dir, dir, case_gemv, case_tiled);
    cr_expect_eq(suite(args), 0, "%s", out);
    cr_expect(strstr(out, "2 cases: 2 pass, 0 fail"), "%s", out);
    cr_expect(strstr(out, "gate: PASS"), "%s", out);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "xmllint --noout %s/junit.xml", dir);
    if (system("command -v xmllint >/dev/null") == 0)
        cr_expect_eq(system(cmd), 0, "invalid JUnit XML");
    snprintf(cmd, sizeof cmd, "%s/rep/index.html", dir);
    cr_expect_eq(access(cmd, R_OK), 0, "no HTML report: %s", out);
    snprintf(cmd, sizeof cmd, "%s/result.json", dir);
    json_error_t je;
    json_t *j = json_load_file(cmd, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    json_t *c = json_array_get(json_object_get(j, "cases"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(c, "model")), "llama-3.2-1b");
    cr_expect_str_eq(json_string_value(json_object_get(c, "recipe")), "mxfp8");
    cr_expect_str_eq(json_string_value(json_object_get(c, "kernel")), "mx_e4m3_cpu_gemv");
    json_decref(j);
}

/* A progress line at the interval: cases done of all, time spent, an estimate of what is left. */
Test(cli_suite, progress_lines_count_the_cases, .init = generate_suite, .fini = remove_suite)
{
    char args[1024];
    snprintf(args, sizeof args, "--status-interval 0.001 %s %s", case_gemv, case_tiled);
    cr_expect_eq(suite(args), 0, "%s", out);
    cr_expect(strstr(out, "suite: 1/2 cases, ") && strstr(out, "suite: 2/2 cases, ") &&
              strstr(out, " s left\n"), "%s", out);
    cr_expect_eq(suite("--status-interval 0 x.case"), 2, "%s", out);
}

Test(cli_suite, snr_mutant_fails_the_gate_with_exit_30, .init = generate_suite,
     .fini = remove_suite)
{
    char args[1024];
    snprintf(args, sizeof args, "--gate --kernel mx_e4m3_cpu_gemv --kernel mx_e4m3_cpu_tiled "
             "--mutant mx_k_tail %s %s", case_gemv, case_tiled);
    cr_expect_eq(suite(args), GG_EXIT_GATE, "%s", out);
    cr_expect(strstr(out, "FAIL   mx_e4m3_cpu_gemv+mx_k_tail"), "%s", out);
    cr_expect(strstr(out, "llama1b_gate_up_dense_m1_mxfp8\n"), "%s", out);
    cr_expect(strstr(out, "llama1b_down_dense_m64_mxfp8\n"), "%s", out);
    cr_expect(strstr(out, "gate: FAIL"), "%s", out);
    /* Each kernel runs only the case it supports (the GEMV kernel M <= 16, the tiled one 8..64). */
    cr_expect(strstr(out, "SKIP   mx_e4m3_cpu_gemv+mx_k_tail"), "%s", out);
    /* Without --gate the same failures are printed and the exit code stays 0. */
    snprintf(args, sizeof args, "--kernel mx_e4m3_cpu_gemv --mutant mx_k_tail %s", case_gemv);
    cr_expect_eq(suite(args), 0, "%s", out);
    cr_expect(strstr(out, "gate: FAIL"), "%s", out);
}

Test(cli_suite, harness_errors_exit_3, .init = generate_suite, .fini = remove_suite)
{
    char args[1024];
    snprintf(args, sizeof args, "--baseline /nonexistent/baseline.json %s", case_gemv);
    cr_expect_eq(suite(args), 3, "%s", out);
    cr_expect(strstr(out, "/nonexistent/baseline.json"), "%s", out);
    cr_expect_eq(suite("--gate --suite-dir /nonexistent --tier stress"), 3, "%s", out);
    snprintf(args, sizeof args, "--gate --max-mem 1M %s", case_gemv);
    cr_expect_eq(suite(args), 3, "%s", out);
    cr_expect(strstr(out, "ERROR") && strstr(out, "--max-mem allows"), "%s", out);
}

/* Shard 0 of 21 of the quick tier: one case, run from a directory that holds no corpus. */
Test(cli_suite, the_default_tiers_are_the_source_trees_from_any_directory)
{
    char home[4096], dir[] = "/tmp/ggfuzz-cli-suite-XXXXXX", cwd[4096];
    cr_expect_eq(gg_cli_home("corpus", home, sizeof home), 0, "%s", home);
    cr_expect_str_eq(home, GG_SOURCE_DIR "/corpus");
    cr_expect_eq(gg_cli_home("python", home, sizeof home), 0, "%s", home);
    cr_expect_str_eq(home, GG_SOURCE_DIR "/kernels/python");
    cr_expect_eq(gg_cli_home("nothing", home, sizeof home), -1);
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    int code = suite("--tier quick --shard 0/21");
    cr_assert_eq(chdir(cwd), 0);
    cr_expect_eq(rmdir(dir), 0);
    cr_expect_eq(code, 0, "%s", out);
    cr_expect(strstr(out, "suite quick: 1 cases: 1 pass") && strstr(out, "gate: PASS"), "%s", out);
}

Test(cli_suite, generate_writes_the_tiers)
{
    char dir[] = "/tmp/ggfuzz-cli-suite-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char args[256];
    snprintf(args, sizeof args, "--generate %s/suite", dir);
    cr_expect_eq(suite(args), 0, "%s", out);
    cr_expect(strstr(out, "quick ") && strstr(out, "release ") && strstr(out, "stress "), "%s",
              out);
    char path[512];
    snprintf(path, sizeof path, "%s/suite/quick/llama1b_gate_up_dense_m1_mxfp8.case", dir);
    cr_expect_eq(access(path, R_OK), 0, "%s missing", path);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_assert_eq(system(args), 0);
}

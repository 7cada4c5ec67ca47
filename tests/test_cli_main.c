/*
 * test_cli_main.c — the ggfuzz command line as a user drives it: help and version (every flag of
 * every command's table documented), list, run and replay on corpus cases, malformed files,
 * refused cases, JSON output (where a failing group's first bad and worst elements are) and the
 * exit codes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "cli_fixture.h"
#include "fuzz/cli/cli_int.h"

#define SEEDS GG_SOURCE_DIR "/corpus/seeds"

/* Runs ggfuzz with args; returns the exit code and the captured stdout+stderr in out. */
static int ggfuzz(const char *args, char *out, size_t len)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", GGFUZZ_BIN, args);
    return cli_shell(cmd, out, len);
}

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ggfuzz-cli-XXXXXX.case");
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static char out[1 << 16];

/* Runs "ggfuzz command FILE" with FILE a temporary case file holding text, removed afterwards
   (its name is left in *path when path is not NULL). Returns the exit code; output in out. */
static int ggfuzz_on_case(const char *command, const char *text, const char **path)
{
    const char *file = write_temp(text);
    char args[256];
    snprintf(args, sizeof args, "%s %s", command, file);
    int code = ggfuzz(args, out, sizeof out);
    unlink(file);
    if (path)
        *path = file;
    return code;
}

Test(cli, version_and_help)
{
    cr_expect_eq(ggfuzz("--version", out, sizeof out), 0);
    cr_expect(strstr(out, "ggfuzz ") && strstr(out, "kernel ABI 3"), "%s", out);
    cr_expect_eq(ggfuzz("--help", out, sizeof out), 0);
    cr_expect(strstr(out, "usage: ggfuzz") && strstr(out, "--replay"), "%s", out);
    cr_expect_eq(ggfuzz("frobnicate", out, sizeof out), 2);
    cr_expect(strstr(out, "unknown command 'frobnicate'"), "%s", out);
    cr_expect_eq(ggfuzz("", out, sizeof out), 2);
    cr_expect_eq(ggfuzz("run", out, sizeof out), 2);
    cr_expect_eq(ggfuzz("run --max-mem lots " SEEDS, out, sizeof out), 2);
    /* A usage error is the line naming it and where to look, not the whole usage text. */
    cr_expect_eq(ggfuzz("fuzz --kernel grouped_bf16_cpu_tiled --bogus", out, sizeof out), 2);
    cr_expect_str_eq(out, "ggfuzz fuzz: unknown option '--bogus'\ntry 'ggfuzz fuzz --help'\n");
    cr_expect_eq(ggfuzz("run --timeout", out, sizeof out), 2);
    cr_expect_str_eq(out, "ggfuzz run: a value is missing after '--timeout'\n"
                          "try 'ggfuzz run --help'\n");
    cr_expect_eq(ggfuzz("suite --workers many", out, sizeof out), 2);
    cr_expect(strstr(out, "many") && strstr(out, "\ntry 'ggfuzz suite --help'\n"), "%s", out);
    cr_expect_eq(ggfuzz("frobnicate", out, sizeof out), 2);
    cr_expect_str_eq(out, "ggfuzz: unknown command 'frobnicate'\ntry 'ggfuzz --help'\n");
}

/* Every row of every command's flag table (its getopt options) is in ggfuzz --help and in the
   command's own --help, as its help line shows it. */
Test(cli, usage_documents_every_flag)
{
    static char all[1 << 16];
    cr_assert_eq(ggfuzz("--help", all, sizeof all), 0);
    cr_expect(strstr(all, "-h, --help"), "%s", all);
    for (const struct gg_cli_command *const *c = gg_cli_commands; *c; c++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", (*c)->name);
        cr_assert_eq(ggfuzz(args, out, sizeof out), 0, "%s: %s", args, out);
        int rows = 0;
        for (const struct gg_cli_flag *f = (*c)->flags; f->name; f++, rows++) {
            char want[96];
            int at = f->short_name ? snprintf(want, sizeof want, "-%c, ", f->short_name) : 0;
            snprintf(want + at, sizeof want - (size_t)at, "--%s%s%s", f->name, f->arg ? " " : "",
                     f->arg ? f->arg : "");
            cr_expect(strstr(all, want), "ggfuzz --help lacks '%s'", want);
            cr_expect(strstr(out, want), "ggfuzz %s lacks '%s'", args, want);
        }
        cr_expect_lt(rows, GG_CLI_FLAGS_MAX, "%s: too many flags for one table", (*c)->name);
    }
}

Test(cli, list_shows_kernels)
{
    cr_assert_eq(ggfuzz("list", out, sizeof out), 0);
    cr_expect(strstr(out, "grouped_bf16_cpu_tiled"), "%s", out);
    cr_expect(strstr(out, "grouped_fwd,grouped_dgrad,grouped_wgrad"), "%s", out);
}

Test(cli, run_passes_on_a_seed)
{
    cr_assert_eq(ggfuzz("run " SEEDS "/fwd_basic.case", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "PASS") && strstr(out, "worst group snr"), "%s", out);
    cr_expect(strstr(out, "1 cases: 1 passed, 0 failed"), "%s", out);
}

/* --reference: a bad value is a usage error, the device is refused for a CPU kernel (and in a
   build without GPU support) with the reason, and --certify says where it certified. */
Test(cli, reference_where)
{
    cr_expect_eq(ggfuzz("run --reference gpu " SEEDS "/fwd_basic.case", out, sizeof out), 2, "%s",
                 out);
    cr_expect(strstr(out, "--reference: 'gpu' is not host, device or auto"), "%s", out);
    cr_expect_eq(ggfuzz("run --reference device " SEEDS "/fwd_basic.case", out, sizeof out), 4,
                 "%s", out);
    cr_expect(strstr(out, "--reference device") &&
                  (strstr(out, "needs a GPU kernel") || strstr(out, "without GPU support")),
              "%s", out);
    cr_assert_eq(ggfuzz("run --reference host --certify 16 " SEEDS "/fwd_basic.case", out,
                        sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "reference on the host, certified by MPFR on 16 outputs"), "%s", out);
    cr_assert_eq(ggfuzz("run --certify 8 " SEEDS "/dgrad_basic.case", out, sizeof out), 0, "%s",
                 out);
    cr_expect(strstr(out, "reference on the host, certified by MPFR on 8 outputs"), "%s", out);
}

Test(cli, replay_corpus_reproduces)
{
    cr_assert_eq(ggfuzz("--replay " GG_SOURCE_DIR "/corpus/seeds " GG_SOURCE_DIR "/corpus/mutants",
                        out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, ", 0 did not reproduce"), "%s", out);
    cr_expect_null(strstr(out, "DIFF"), "%s", out);
}

Test(cli, replay_reports_an_expectation_that_does_not_hold)
{
    const char *text = "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
                       "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 2\n"
                       "group_lens 3 5\nn 16\nk 32\nseed 7\n@expect class=snr\n";
    cr_expect_eq(ggfuzz_on_case("replay", text, NULL), 20, "%s", out);
    cr_expect(strstr(out, "DIFF") && strstr(out, "did not reproduce"), "%s", out);
}

Test(cli, malformed_case_names_file_and_line)
{
    const char *text = "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
                       "dtypes a=bf16 b=bf17 c=bf16\n";
    const char *path;
    cr_expect_eq(ggfuzz_on_case("run", text, &path), 3, "%s", out);
    char want[128];
    snprintf(want, sizeof want, "%s:4:", path);
    cr_expect(strstr(out, want), "expected '%s' in: %s", want, out);
}

Test(cli, missing_file_is_an_error)
{
    cr_expect_eq(ggfuzz("run /nonexistent/x.case", out, sizeof out), 3, "%s", out);
    cr_expect(strstr(out, "/nonexistent/x.case"), "%s", out);
}

Test(cli, oversized_case_is_refused_before_allocation)
{
    cr_expect_eq(ggfuzz("run --max-mem 1M " SEEDS "/fwd_basic.case", out, sizeof out), 4, "%s", out);
    cr_expect(strstr(out, "REFUSED " SEEDS "/fwd_basic.case: "), "%s", out);
    cr_expect(strstr(out, "case needs") && strstr(out, "--max-mem allows"), "%s", out);
    /* Refused cases beside ones that ran: listed and counted, not a failure. */
    cr_expect_eq(ggfuzz("run --kernel grouped_bf16_cpu_tiled " SEEDS "/fwd_basic.case " SEEDS
                        "/batched_bf16_nk.case", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "REFUSED " SEEDS "/batched_bf16_nk.case: kernel grouped_bf16_cpu_tiled "
                          "does not implement op batched"), "%s", out);
    cr_expect(strstr(out, "2 cases: 1 passed, 0 failed, 1 refused, 0 errors"), "%s", out);
    /* Terabytes of output: refused against the machine's available memory. */
    const char *text = "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
                       "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 1\n"
                       "group_lens 4000000\nn 65536\nk 4096\nseed 1\n";
    cr_expect_eq(ggfuzz_on_case("run", text, NULL), 4, "%s", out);
    cr_expect(strstr(out, "GiB of host memory"), "%s", out);
}

Test(cli, sizes_are_parsed_strictly)
{
    static const char *const bad[] = {"nan", "inf", "1e30", "1e-3", "0", "-1", "0x10", "5Q", "",
                                      "8388608T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "run --max-mem '%s' " SEEDS "/fwd_basic.case", bad[i]);
        cr_expect_eq(ggfuzz(args, out, sizeof out), 2, "--max-mem %s: %s", bad[i], out);
        char want[64];
        snprintf(want, sizeof want, "ggfuzz run: --max-mem: ");
        cr_expect(strstr(out, want) && strstr(out, bad[i]), "--max-mem %s: %s", bad[i], out);
        snprintf(args, sizeof args, "fuzz --kernel grouped_bf16_cpu_tiled --runs 1 --max-mem '%s'",
                 bad[i]);
        cr_expect_eq(ggfuzz(args, out, sizeof out), 2, "fuzz --max-mem %s: %s", bad[i], out);
    }
    cr_expect_eq(ggfuzz("run --timeout inf " SEEDS "/fwd_basic.case", out, sizeof out), 2, "%s",
                 out);
    cr_expect(strstr(out, "--timeout: not a number >= 0: 'inf'"), "%s", out);
    static const char *const good[] = {"1.5G", "8g", "512MiB", "100000000", ".5T", "2KB"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "run --max-mem %s " SEEDS "/fwd_basic.case", good[i]);
        int code = ggfuzz(args, out, sizeof out);
        cr_expect(code == 0 || code == 4, "--max-mem %s: exit %d: %s", good[i], code, out);
    }
}

/* A directory below the one to run that cannot be read is an error line naming it; the walk goes
   on with the rest and the exit code says that not everything ran. A loop of symbolic links
   cannot be read by anyone; a directory without permissions by anyone but root. */
Test(cli, an_unreadable_directory_does_not_stop_the_walk)
{
    char dir[] = "/tmp/ggfuzz-cli-walk-XXXXXX", cmd[512], args[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir a b c && for d in a b c; do cp '" SEEDS "/fwd_basic.case' $d/; "
             "done && ln -s loop loop && chmod 000 b", dir);
    cr_assert_eq(system(cmd), 0);
    int root = geteuid() == 0;
    for (int replay = 0; replay < 2; replay++) {
        snprintf(args, sizeof args, "%s %s", replay ? "--replay" : "run", dir);
        cr_expect_eq(ggfuzz(args, out, sizeof out), 3, "%s", out);
        char want[256];
        snprintf(want, sizeof want, "ERROR  %s/loop: Too many levels of symbolic links (skipped: "
                 "its cases are not run)", dir);
        cr_expect(strstr(out, want), "%s", out);
        snprintf(want, sizeof want, "ERROR  %s/b: Permission denied (skipped", dir);
        cr_expect(root || strstr(out, want), "%s", out);
        snprintf(want, sizeof want, "%s/c/fwd_basic.case", dir);
        cr_expect(strstr(out, want), "the walk stopped: %s", out);
        snprintf(want, sizeof want, replay ? "%d reproduced (%d pass" : "%d passed", 3 - !root,
                 3 - !root);
        cr_expect(strstr(out, want), "%s", out);
        snprintf(want, sizeof want, "%d errors", 2 - root);
        cr_expect(strstr(out, want), "%s", out);
    }
    snprintf(cmd, sizeof cmd, "chmod 755 '%s/b' && rm -rf '%s'", dir, dir);
    cr_expect_eq(system(cmd), 0);
}

/* A FIFO named like a case in the walk is an error line naming it, never a wait (the test's
   timeout bounds it), and the walk goes on. */
Test(cli, a_fifo_among_the_cases_is_an_error_not_a_wait, .timeout = 60)
{
    char dir[] = "/tmp/ggfuzz-cli-fifo-XXXXXX", cmd[512], args[256], want[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cd '%s' && mkfifo a.case && cp '" SEEDS "/fwd_basic.case' b.case",
             dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "run %s", dir);
    cr_expect_eq(ggfuzz(args, out, sizeof out), 3, "%s", out);
    snprintf(want, sizeof want, "%s/a.case: cannot read: not a regular file", dir);
    cr_expect(strstr(out, want), "%s", out);
    cr_expect(strstr(out, "1 passed") && strstr(out, "1 errors"), "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(cli, unknown_kernel_and_mutant)
{
    cr_expect_eq(ggfuzz("run --kernel nope " SEEDS "/fwd_basic.case", out, sizeof out), 3, "%s", out);
    cr_expect(strstr(out, "unknown kernel 'nope'"), "%s", out);
    cr_expect_eq(ggfuzz("run --mutant nope " SEEDS "/fwd_basic.case", out, sizeof out), 3, "%s", out);
    cr_expect(strstr(out, "has no mutant 'nope'"), "%s", out);
    cr_expect_eq(ggfuzz("run --mutant wgrad_zero_uninit,nope " SEEDS "/fwd_basic.case", out,
                        sizeof out),
                 3, "%s", out);
    cr_expect(strstr(out, "kernel grouped_bf16_cpu_tiled has no mutant 'nope'"), "%s", out);
    cr_expect_eq(ggfuzz("run --mutant missing_fence,,missing_fence " SEEDS "/fwd_basic.case", out,
                        sizeof out),
                 3, "%s", out);
    cr_expect(strstr(out, "mutant list 'missing_fence,,missing_fence': item 2 is empty"), "%s",
              out);
}

/* --mutant A,B runs the kernel with both faults: the corpus case of each fails with the list,
   and both pass with none. */
Test(cli, mutant_list)
{
    static const char cases[] = " " GG_SOURCE_DIR "/corpus/mutants/wgrad_zero_uninit.case "
                                GG_SOURCE_DIR "/corpus/mutants/tail_rows_unwritten.case";
    char args[1024];
    snprintf(args, sizeof args, "run --mutant wgrad_zero_uninit,tail_rows_unwritten%s", cases);
    cr_expect_eq(ggfuzz(args, out, sizeof out), 15, "%s", out);
    cr_expect(strstr(out, "2 cases: 0 passed, 2 failed"), "%s", out);
    cr_expect(strstr(out, "grouped_bf16_cpu_tiled+wgrad_zero_uninit,tail_rows_unwritten"), "%s",
              out);
    snprintf(args, sizeof args, "run --mutant none%s", cases);
    cr_expect_eq(ggfuzz(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "2 cases: 2 passed"), "%s", out);
}

/* `ggfuzz run --json FILE ARGS`, which must exit with code: the JSON written (decref it). */
static json_t *run_json(const char *run_args, int code)
{
    char json[64], args[1024];
    snprintf(json, sizeof json, "/tmp/ggfuzz-cli-%d.json", (int)getpid());
    snprintf(args, sizeof args, "run --json %s %s", json, run_args);
    cr_assert_eq(ggfuzz(args, out, sizeof out), code, "%s", out);
    json_error_t e;
    json_t *root = json_load_file(json, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    unlink(json);
    cr_assert_eq(json_array_size(json_object_get(root, "cases")), 2);
    return root;
}

Test(cli, json_report)
{
    json_t *root = run_json(SEEDS "/fwd_basic.case " SEEDS "/wgrad_basic.case", 0);
    json_t *c0 = json_array_get(json_object_get(root, "cases"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(c0, "class")), "pass");
    cr_expect_eq(json_array_size(json_object_get(c0, "groups")), 4);
    cr_expect_eq(strlen(json_string_value(json_object_get(c0, "id"))), 32);
    json_decref(root);
}

/* A failing group places its first bad element and its worst one in its block; a refused case
   says so. n_tail: the last, partial N tile is wrong (N 100, tile 64: columns 64..99). */
Test(cli, json_report_places_the_failures)
{
    json_t *root = run_json("--kernel batched_bf16_cpu_tiled --mutant n_tail " GG_SOURCE_DIR
                            "/corpus/mutants/n_tail.case " SEEDS "/fwd_basic.case", 19);
    json_t *cases = json_object_get(root, "cases");
    json_t *g0 = json_array_get(json_object_get(json_array_get(cases, 0), "groups"), 0);
    json_t *first = json_object_get(g0, "first_bad"), *worst = json_object_get(g0, "worst");
    cr_assert(first && worst, "%s", json_dumps(g0, 0));
    cr_expect_eq(json_integer_value(json_object_get(first, "row")), 0);
    cr_expect_geq(json_integer_value(json_object_get(first, "col")), 64);
    cr_expect_geq(json_integer_value(json_object_get(worst, "col")), 64);
    cr_expect(json_real_value(json_object_get(worst, "bound")) > 0);
    json_t *refused = json_array_get(cases, 1);
    cr_expect(json_is_true(json_object_get(refused, "refused")), "%s", json_dumps(refused, 0));
    cr_expect_not_null(json_object_get(refused, "error"));
    json_decref(root);
}

Test(cli, bench_times_a_kernel_on_case_files)
{
    char csv[] = "/tmp/ggfuzz-bench-XXXXXX";
    int fd = mkstemp(csv);
    cr_assert(fd >= 0);
    close(fd);
    char args[512];
    snprintf(args, sizeof args, "bench --kernel grouped_bf16_cpu_tiled --reps 3 --warmup 1 "
                                "--csv %s " SEEDS "/fwd_basic.case", csv);
    cr_expect_eq(ggfuzz(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "TIMED") && strstr(out, "3 runs, wall clock") &&
              strstr(out, "1 cases: 1 timed, 0 refused, 0 errors"), "%s", out);
    FILE *f = fopen(csv, "r");
    cr_assert(f != NULL);
    char line[1024], row[1024] = "";
    cr_assert(fgets(line, sizeof line, f) != NULL);
    cr_expect(strncmp(line, "case,kernel,mutant,op,", 22) == 0, "%s", line);
    cr_assert(fgets(row, sizeof row, f) != NULL);
    fclose(f);
    unlink(csv);
    /* fwd_basic: 272 rows, N 256, K 512 */
    cr_expect(strstr(row, "grouped_bf16_cpu_tiled,,grouped_fwd,4,272,256,512,7.13032e+07,") != NULL,
              "%s", row);
    /* A kernel that does not implement the op is a refusal; bad counts are usage errors. */
    cr_expect_eq(ggfuzz("bench --kernel batched_bf16_cpu_tiled " SEEDS "/fwd_basic.case", out,
                        sizeof out), GG_EXIT_REFUSED, "%s", out);
    cr_expect(strstr(out, "REFUSED") != NULL, "%s", out);
    cr_expect_eq(ggfuzz("bench --reps 0 " SEEDS "/fwd_basic.case", out, sizeof out),
                 GG_EXIT_USAGE);
    cr_expect(strstr(out, "--reps") != NULL, "%s", out);
    cr_expect_eq(ggfuzz("bench " SEEDS "/no_such.case", out, sizeof out), GG_EXIT_HARNESS);
    cr_expect(strstr(out, "no_such.case") != NULL, "%s", out);
}

/*
 * test_cli_fuzz.c — `ggfuzz fuzz` and `ggfuzz selftest` as a user drives them: the seed line,
 * libFuzzer-style final statistics, the stop reason and the exit codes on a correct kernel and on
 * a mutant; usage errors; SIGINT ending a campaign cleanly. The self-test: test_cli_selftest.c.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#include "oracles/gg_oracle.h"

TestSuite(cli_fuzz, .timeout = 120);

static char out[1 << 17];
static char root[64];

/* Runs ggfuzz with args (in the temporary root); returns the exit code, output in out. */
static int ggfuzz(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", root, GGFUZZ_BIN, args);
    return cli_shell(cmd, out, sizeof out);
}

Test(cli_fuzz, a_correct_kernel_exits_0_with_final_statistics)
{
    cli_temp_dir(root, sizeof root, "cli-fuzz");
    int code = ggfuzz("fuzz corpus --kernel grouped_bf16_cpu_tiled --max-total-time 2 --workers 2 "
                      "--seed 0");
    cr_expect_eq(code, 0, "%s", out);
    unsigned long long seed = 0;
    const char *s = strstr(out, "INFO: seed=");
    cr_assert_not_null(s, "%s", out);
    cr_expect_eq(sscanf(s, "INFO: seed=%llu", &seed), 1);
    cr_expect_neq(seed, 0, "--seed 0 must pick a seed");
    cr_expect(strstr(out, "stat::number_of_executed_units:"), "%s", out);
    cr_expect(strstr(out, "stat::average_exec_per_sec:"), "%s", out);
    cr_expect(strstr(out, "stat::new_units_added:"), "%s", out);
    cr_expect(strstr(out, "stat::slowest_unit_time_sec:"), "%s", out);
    cr_expect(strstr(out, "stat::unique_faults:            0"), "%s", out);
    cr_expect(strstr(out, "stopped because the time budget"), "%s", out);
    /* Default locations: ./ggfuzz-out/{artifacts,fuzzer_stats,plot_data}. */
    char path[256];
    snprintf(path, sizeof path, "%s/ggfuzz-out/fuzzer_stats", root);
    cr_expect_eq(access(path, R_OK), 0, "no %s", path);
    snprintf(path, sizeof path, "%s/ggfuzz-out/plot_data", root);
    cr_expect_eq(access(path, R_OK), 0, "no %s", path);
    snprintf(path, sizeof path, "%s/corpus", root);
    cr_expect_eq(access(path, R_OK), 0, "no %s", path);
    cli_remove_dir(root);
}

Test(cli_fuzz, a_mutant_exits_with_the_class_code_of_its_finding)
{
    cli_temp_dir(root, sizeof root, "cli-fuzz");
    int code = ggfuzz("fuzz --kernel grouped_bf16_cpu_tiled --mutant wgrad_zero_uninit "
                      "--max-total-time 4 --workers 2 --seed 42 --no-minimize --artifacts out/a");
    cr_expect(strstr(out, "INFO: seed=42\n"), "%s", out);
    cr_expect_eq(code, gg_class_exit_code(GG_CLASS_UNWRITTEN), "%s", out);
    cr_expect(strstr(out, "FAULT unwritten (new) unwritten/grouped_bf16_cpu_tiled/"), "%s", out);
    cr_expect(strstr(out, "-> out/a/unwritten-"), "%s", out);
    char path[256];
    snprintf(path, sizeof path, "%s/out/fuzzer_stats", root);
    cr_expect_eq(access(path, R_OK), 0, "statistics go beside the artifacts: no %s", path);
    /* The stored findings replay with their signatures. */
    cr_expect_eq(ggfuzz("--replay out/a"), 0, "%s", out);
    cli_remove_dir(root);
}

Test(cli_fuzz, usage_errors)
{
    cli_temp_dir(root, sizeof root, "cli-fuzz");
    cr_expect_eq(ggfuzz("fuzz --max-total-time 1"), 2, "%s", out);
    cr_expect(strstr(out, "--kernel"), "%s", out);
    cr_expect_eq(ggfuzz("fuzz --kernel grouped_bf16_cpu_tiled --strategy clever"), 2, "%s", out);
    cr_expect_eq(ggfuzz("fuzz --kernel grouped_bf16_cpu_tiled --faults fp64"), 2, "%s", out);
    cr_expect_eq(ggfuzz("fuzz --kernel grouped_bf16_cpu_tiled --runs many"), 2, "%s", out);
    cr_expect_eq(ggfuzz("fuzz --kernel no_such_kernel --runs 1"), 3, "%s", out);
    cr_expect(strstr(out, "unknown kernel 'no_such_kernel'"), "%s", out);
    cr_expect_eq(ggfuzz("selftest extra"), 2, "%s", out);
    cr_expect_eq(ggfuzz("selftest --kernel no_such_kernel"), 3, "%s", out);
    cli_remove_dir(root);
}

/* --known: a missing path or a FIFO is refused with its name before the campaign (the FIFO at
   once: the test's timeout bounds the wait); the directory above a store (a campaign's) is read
   as its store, and a directory with no store is said to hold none. */
Test(cli_fuzz, known_paths_are_checked_and_a_campaign_directory_read_as_its_store,
     .timeout = 60)
{
    cli_temp_dir(root, sizeof root, "cli-fuzz");
    const char *night = "fuzz --kernel grouped_bf16_cpu_tiled --mutant wgrad_zero_uninit "
                        "--runs 30 --workers 1 --seed 42 --no-minimize";
    char args[512], path[256];
    snprintf(args, sizeof args, "%s --artifacts n1/artifacts", night);
    cr_assert_eq(ggfuzz(args), gg_class_exit_code(GG_CLASS_UNWRITTEN), "%s", out);
    snprintf(args, sizeof args, "%s --artifacts n2/artifacts --known n1/artfacts", night);
    cr_expect_eq(ggfuzz(args), 3, "%s", out);
    cr_expect(strstr(out, "ggfuzz: --known: n1/artfacts: cannot read: No such file or directory"),
              "%s", out);
    cr_expect_null(strstr(out, "FAULT"), "the campaign ran: %s", out);
    snprintf(path, sizeof path, "%s/known.fifo", root);
    cr_assert_eq(mkfifo(path, 0644), 0);
    snprintf(args, sizeof args, "%s --artifacts n2/artifacts --known known.fifo", night);
    cr_expect_eq(ggfuzz(args), 3, "%s", out);
    cr_expect(strstr(out, "--known: known.fifo: cannot read: not a regular file"), "%s", out);
    snprintf(args, sizeof args, "%s --artifacts n2/artifacts --known n1", night);
    cr_expect_eq(ggfuzz(args), 0, "the first night's findings are known: %s", out);
    cr_expect(strstr(out, "INFO: --known n1: ") && strstr(out, "known signatures and buckets"),
              "%s", out);
    snprintf(path, sizeof path, "%s/n2/corpus", root);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(args, sizeof args, "%s --artifacts n3/artifacts --known n2/corpus", night);
    cr_expect_eq(ggfuzz(args), gg_class_exit_code(GG_CLASS_UNWRITTEN), "%s", out);
    cr_expect(strstr(out, "WARNING: --known n2/corpus: holds no findings store"), "%s", out);
    cli_remove_dir(root);
}

Test(cli_fuzz, sigint_ends_the_campaign_cleanly)
{
    cli_temp_dir(root, sizeof root, "cli-fuzz");
    char log[128];
    snprintf(log, sizeof log, "%s/log", root);
    char *argv[] = {GGFUZZ_BIN, "fuzz", "--kernel", "grouped_bf16_cpu_tiled",
                    "--max-total-time", "60", "--workers", "2", "--artifacts", NULL, NULL};
    char artifacts[128];
    snprintf(artifacts, sizeof artifacts, "%s/artifacts", root);
    argv[9] = artifacts;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    extern char **environ;
    cr_assert_eq(posix_spawn(&pid, GGFUZZ_BIN, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    struct timespec ts = {1, 500000000};
    nanosleep(&ts, NULL);
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "ggfuzz died instead of stopping cleanly");
    cr_expect_eq(WEXITSTATUS(st), 0);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    cr_expect(strstr(out, "stat::number_of_executed_units:"), "%s", out);
    cr_expect(strstr(out, "(signal)"), "%s", out);
    char path[256];
    snprintf(path, sizeof path, "%s/fuzzer_stats", root);
    cr_expect_eq(access(path, R_OK), 0);
    cli_remove_dir(root);
}

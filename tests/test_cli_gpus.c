/*
 * test_cli_gpus.c — `--gpus` on a machine without a visible GPU (CUDA_VISIBLE_DEVICES set to none,
 * or to a list this machine does not have), where a list only labels the processes and the
 * binding can be watched through the environment: a malformed or repeated list is a usage error,
 * `all` without a GPU a harness error and `auto` runs unbound. A campaign binds worker i to
 * GPU i mod n for its life: a Python kernel that aborts in a process bound to GPU 1 (and checks
 * that CUDA_VISIBLE_DEVICES names its GPU alone, the right entry of the parent's list) is found
 * there alone, GPU 1's workers restart and GPU 0's do not; fuzzer_stats and the final lines count
 * cases, faults and restarts per GPU, as does the report, and the finding names its GPU. A GPU
 * whose workers exit before they start three times in a row is given up while the campaign goes
 * on on the others. A suite spread over three
 * GPUs writes the verdict, JSON and JUnit of one process (apart from timings), sharded or not,
 * and refuses --no-fork; so does a suite run by several workers (`--workers`), on no GPU or
 * dealt to two, and it records where each case's time went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define FAULTY GG_SOURCE_DIR "/tests/plugins/faulty_kernels.py"
#define SUITE_ARGS GG_SOURCE_DIR "/corpus/seeds --kernel grouped_bf16_cpu_tiled " \
                   "--mutant tail_rows_unwritten"
#define NO_GPU "CUDA_VISIBLE_DEVICES= HIP_VISIBLE_DEVICES= "

TestSuite(cli_gpus, .timeout = 300);

static char out[1 << 18];
static char root[64];

/* Runs a shell command line in the temporary root; the exit code, output in out. */
static int sh(const char *line)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && GGFUZZ_PLUGINS= %s 2>&1", root, line);
    return cli_shell(cmd, out, sizeof out);
}

static int ggfuzz(const char *env, const char *args)
{
    char line[4096];
    snprintf(line, sizeof line, "%s '%s' %s", env, GGFUZZ_BIN, args);
    return sh(line);
}

/* The value of key in ggfuzz-out/fuzzer_stats, or -1. */
static long stat_of(const char *key)
{
    char line[512];
    snprintf(line, sizeof line, "sed -n 's/^%s *: //p' ggfuzz-out/fuzzer_stats", key);
    sh(line);
    return out[0] ? strtol(out, NULL, 10) : -1;
}

Test(cli_gpus, bad_lists_and_no_gpu)
{
    cli_temp_dir(root, sizeof root, "gpus");
    const char *k = "fuzz --kernel grouped_bf16_cpu_tiled --runs 1 ";
    char args[512];
    snprintf(args, sizeof args, "%s--gpus 0,0", k);
    cr_expect_eq(ggfuzz(NO_GPU, args), 2, "%s", out);
    cr_expect(strstr(out, "device 0 is listed twice"), "%s", out);
    snprintf(args, sizeof args, "%s--gpus 3-1", k);
    cr_expect_eq(ggfuzz(NO_GPU, args), 2, "%s", out);
    cr_expect(strstr(out, "a list of device ordinals"), "%s", out);
    snprintf(args, sizeof args, "%s--gpus 0,", k);
    cr_expect_eq(ggfuzz(NO_GPU, args), 2, "%s", out);
    snprintf(args, sizeof args, "%s--gpus all", k);
    cr_expect_eq(ggfuzz(NO_GPU, args), 3, "%s", out);
    cr_expect(strstr(out, "ggfuzz fuzz: --gpus all: "), "%s", out);
    snprintf(args, sizeof args, "%s--gpus auto", k);
    cr_expect_eq(ggfuzz(NO_GPU, args), 0, "%s", out);
    cr_expect(strstr(out, "INFO: --gpus auto: ") && strstr(out, "running as without --gpus"),
              "%s", out);
    cr_expect(strstr(out, "stat::gpu") == NULL, "%s", out);
    cr_expect_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --gpus 0,1 --no-fork"), 2, "%s", out);
    cr_expect(strstr(out, "not with --no-fork"), "%s", out);
    cli_remove_dir(root);
}

Test(cli_gpus, campaign_binds_workers_and_counts_per_gpu)
{
    cli_temp_dir(root, sizeof root, "gpus");
    /* the parent sees GPUs 5 and 7 (as under Slurm): GPU 0 of --gpus is 5, GPU 1 is 7 */
    int rc = ggfuzz("CUDA_VISIBLE_DEVICES=5,7 HIP_VISIBLE_DEVICES=5,7 GGFUZZ_TEST_VISIBLE=5,7",
                    "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_on_gpu1 --gpus 0,1 "
                    "--workers 3 --max-total-time 20 --timeout 120 --no-minimize --seed 1");
    cr_expect(rc >= 11 && rc <= 19, "a crash finding's exit code, not %d: %s", rc, out);
    cr_expect(strstr(out, "INFO: gpus=0,1: each worker sees its GPU alone"), "%s", out);
    cr_expect(strstr(out, "stat::gpu0: 2 workers, "), "%s", out);
    cr_expect(strstr(out, "stat::gpu1: 1 worker, "), "%s", out);
    cr_expect_str_eq(strstr(out, "CUDA_VISIBLE_DEVICES=") ? "binding error" : "", "", "%s", out);
    char log[sizeof out];
    memcpy(log, out, sizeof out);
    cr_expect_eq(stat_of("gpu0_faults_total"), 0, "%s", log);
    cr_expect_eq(stat_of("gpu0_worker_restarts"), 0, "%s", log);
    cr_expect_gt(stat_of("gpu0_execs_done"), 5, "%s", log);
    cr_expect_gt(stat_of("gpu1_faults_total"), 0, "%s", log);
    cr_expect_gt(stat_of("gpu1_faults_new"), 0, "%s", log);
    cr_expect_gt(stat_of("gpu1_worker_restarts"), 0, "%s", log);
    cr_expect_eq(stat_of("gpu0_execs_done") + stat_of("gpu1_execs_done"), stat_of("execs_done"));
    cr_expect_eq(stat_of("faults_total"), stat_of("faults_crash"), "%s", log);
    cr_expect_eq(sh("grep -l '^@gpu 1' ggfuzz-out/artifacts/crash-*.case >/dev/null"), 0, "%s",
                 log);
    cr_expect_neq(sh("grep -l '^@gpu 0' ggfuzz-out/artifacts/*.case >/dev/null"), 0, "%s", log);
    /* the report's table per GPU */
    cr_expect_eq(ggfuzz("", "report --campaign ggfuzz-out -o rep"), 0, "%s", out);
    cr_expect_eq(sh("grep -c '^| [01] | [12] | [0-9]* | ' rep/summary.md"), 0, "%s", out);
    cr_expect(strncmp(out, "2", 1) == 0, "two rows, one per GPU: %s", out);
    cli_remove_dir(root);
}

Test(cli_gpus, a_gpu_whose_workers_cannot_start_is_given_up)
{
    cli_temp_dir(root, sizeof root, "gpus");
    /* a process bound to GPU 1 cannot load the plugin: its workers exit before they start */
    int rc = ggfuzz(NO_GPU "GGFUZZ_TEST_UNUSABLE_GPU=1",
                    "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_on_gpu1 --gpus 0,1 "
                    "--workers 2 --max-total-time 10 --timeout 120 --seed 1");
    cr_expect_eq(rc, 0, "no finding on GPU 0, and GPU 1 is no finding: %s", out);
    cr_expect(strstr(out, "WARNING: GPU 1 given up: its workers exited before they started 3 "
                          "times in a row; the campaign goes on on 1 other GPU\n"), "%s", out);
    cr_expect(strstr(out, "0 units (0/s), 0 faults, 0 new, 2 restarts, given up"), "%s", out);
    char log[sizeof out];
    memcpy(log, out, sizeof out);
    cr_expect_eq(stat_of("gpu1_retired"), 1, "%s", log);
    cr_expect_eq(stat_of("gpu0_retired"), 0, "%s", log);
    cr_expect_gt(stat_of("gpu0_execs_done"), 5, "%s", log);
    sh("sed -n 's/^stop_reason *: //p' ggfuzz-out/fuzzer_stats");
    cr_expect_str_eq(out, "time budget\n", "%s", log);
    cli_remove_dir(root);
}

/* The suite run by one process, as s.json and s.xml. */
static void one_process_suite(void)
{
    cr_assert_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --gate --json s.json --junit s.xml"), 30,
                 "%s", out);
    cr_expect(strstr(out, "time in the cases: setup "), "%s", out);
}

/* The suite with options, as R.json and R.xml, equals the one process's (apart from timings);
   exit code rc. */
static void same_suite(const char *options, const char *r, int rc)
{
    char line[1024];
    snprintf(line, sizeof line, "suite " SUITE_ARGS " %s --gate --json %s.json --junit %s.xml",
             options, r, r);
    cr_expect_eq(ggfuzz(NO_GPU, line), rc, "%s", out);
    if (rc == 30)
        cr_expect(strstr(out, "gate: FAIL (7 cases with a structural fault)"), "%s", out);
    snprintf(line, sizeof line, "/usr/bin/python3 " GG_SOURCE_DIR "/tests/slurm/suite_equal.py "
             "s.json %s.json s.xml %s.xml", r, r);
    cr_expect_eq(sh(line), 0, "%s", out);
}

Test(cli_gpus, suite_over_gpus_is_one_process_result)
{
    cli_temp_dir(root, sizeof root, "gpus");
    one_process_suite();
    same_suite("--gpus 0-2", "g", 30);
    /* each shard on its node's GPUs, then merged */
    cr_expect_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --shard 0/2 --gpus 0,1 --json r0.json"), 0,
                 "%s", out);
    cr_expect_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --shard 1/2 --gpus 0-2 --json r1.json"), 0,
                 "%s", out);
    cr_expect_eq(ggfuzz(NO_GPU, "suite --merge r1.json r0.json --gate --json m.json "
                                "--junit m.xml"), 30, "%s", out);
    cr_expect_eq(sh("/usr/bin/python3 " GG_SOURCE_DIR "/tests/slurm/suite_equal.py s.json m.json "
                    "s.xml m.xml"), 0, "%s", out);
    cli_remove_dir(root);
}

Test(cli_gpus, suite_workers_is_one_process_result)
{
    cli_temp_dir(root, sizeof root, "workers");
    one_process_suite();
    same_suite("--workers 3", "w", 30);
    same_suite("--workers 4 --gpus 0,1", "g", 30);
    /* each case ran: its phases are in the result */
    cr_expect_eq(sh("/usr/bin/python3 -c \"import json; cs = json.load(open('w.json'))['cases']; "
                    "ok = [c for c in cs if c['verdict'] != 'skipped']; "
                    "assert ok and all(set(c['phase_seconds']) == {'setup', 'inputs', 'runs', "
                    "'reference', 'compare'} for c in ok), ok\""), 0, "%s", out);
    cr_expect_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --workers 0"), 2, "%s", out);
    cr_expect(strstr(out, "--workers: 1 to 64, not 0"), "%s", out);
    cr_expect_eq(ggfuzz(NO_GPU, "suite " SUITE_ARGS " --workers 2 --no-fork"), 2, "%s", out);
    cr_expect(strstr(out, "not with --no-fork"), "%s", out);
    cli_remove_dir(root);
}

/*
 * test_cli_python.c — Python kernels on the ggfuzz command line: a `.py` plugin makes ggfuzz
 * hand over to `python -m ggfuzz` (GGFUZZ_PYTHON: an interpreter with NumPy, found by CMake),
 * whose kernels then show in `list`, replay the seeds they support, and are fuzzed in worker
 * processes: the NumPy grouped GEMM's planted empty-group wgrad bug is found and minimised; a
 * kernel that raises gives an error carrying the exception's last line, one that calls
 * os.abort() a crash finding, one that never returns a timeout finding, and each run and
 * campaign goes on; faults still waiting for their confirmation when a campaign's time is up are
 * filed unconfirmed. A plugin that fails to import, or a missing interpreter, is refused with
 * exit code 3 and a message. A plugin whose import exits, crashes or hangs is refused the same
 * way (it is imported in a trial child first), and so is a GGFUZZ_PYTHON that is not a Python
 * running ggfuzz's host; python3 on PATH without NumPy says how to choose another, naming the
 * interpreters on PATH that have it. A supports()
 * that ends its process on the capability probe ends the campaign with a message, one that
 * crashes on a drawn case is a crash finding, and the campaign's own process survives both.
 * Every adapter of kernels/python/adapters and the Triton example list their kernels where torch,
 * Triton and JAX cannot be imported (they import them lazily).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define SEEDS GG_SOURCE_DIR "/corpus/seeds"
#define NUMPY_PLUGIN GG_SOURCE_DIR "/kernels/python/examples/numpy_grouped.py"
#define NUMPY_KERNEL "grouped_bf16_numpy_ref"
#define FAULTY GG_SOURCE_DIR "/tests/plugins/faulty_kernels.py"
#define HOSTILE GG_SOURCE_DIR "/tests/plugins/hostile.py"
#define HOSTILE_KERNEL "grouped_bf16_hostile_py"
/* A case the hostile kernel supports, expected to pass. */
#define HOSTILE_CASE SEEDS "/fwd_ints_exact.case"
#define ADAPTERS GG_SOURCE_DIR "/kernels/python/adapters/"
/* Modules named torch, jax and triton whose import fails. */
#define NO_FRAMEWORKS "PYTHONPATH=" GG_SOURCE_DIR "/tests/plugins/no_frameworks"

static char out[1 << 18];

/* Runs `env ggfuzz args` through the shell with stdout and stderr in out; returns the exit code
   (a death by signal fails the test). */
static int ggfuzz_env(const char *env, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "GGFUZZ_PLUGINS= %s '%s' %s 2>&1", env, GGFUZZ_BIN, args);
    return cli_shell(cmd, out, sizeof out);
}

static int ggfuzz(const char *args)
{
    return ggfuzz_env("", args);
}

/* The value of a `stat::name:` line of a campaign's output, or -1. */
static long stat_value(const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "stat::%s:", name);
    const char *s = strstr(out, key);
    return s ? strtol(s + strlen(key), NULL, 10) : -1;
}

Test(cli_python, list_shows_the_python_kernel)
{
    cr_assert_eq(ggfuzz("--plugin " NUMPY_PLUGIN " list"), 0, "%s", out);
    cr_expect(strstr(out, NUMPY_KERNEL) && strstr(out, "empty_group_garbage"), "%s", out);
    cr_expect(strstr(out, "grouped_bf16_cpu_tiled"), "%s", out);
    cr_assert_eq(ggfuzz_env("GGFUZZ_PLUGINS=" NUMPY_PLUGIN, "list"), 0, "%s", out);
    cr_expect(strstr(out, NUMPY_KERNEL), "%s", out);
}

Test(cli_python, replays_the_seeds_it_supports)
{
    static const char *const seeds[] = {
        "dgrad_basic", "dgrad_empty_first_last", "fwd_all_empty", "fwd_basic",
        "fwd_empty_every_other", "fwd_empty_first", "fwd_empty_last", "fwd_ints_exact",
        "fwd_splitk", "fwd_weights_past_2_31", "wgrad_all_empty", "wgrad_basic",
        "wgrad_empty_first_splitk", "wgrad_many_groups"};
    char args[4096];
    size_t used = (size_t)snprintf(args, sizeof args, "--plugin " NUMPY_PLUGIN
                                   " --replay --kernel " NUMPY_KERNEL);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        used += (size_t)snprintf(args + used, sizeof args - used, " " SEEDS "/%s.case", seeds[i]);
    cr_assert_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "14 cases: 14 reproduced (14 pass, 0 faults), 0 did not reproduce"),
              "%s", out);
    /* The whole seed folder: the others are refused with the kernel's reason, which alone is
       no failure when cases ran. */
    cr_assert_eq(ggfuzz("run --plugin " NUMPY_PLUGIN " --kernel " NUMPY_KERNEL " " SEEDS), 0,
                 "%s", out);
    cr_expect(strstr(out, "14 passed, 0 failed, 14 refused, 0 errors"), "%s", out);
    cr_expect(strstr(out, "inputs must be bf16 (a=e4m3 b=e4m3)"), "%s", out);
}

Test(cli_python, campaign_finds_and_minimises_the_planted_bug)
{
    char dir[256], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args, "--plugin " NUMPY_PLUGIN " fuzz --kernel " NUMPY_KERNEL
             " --mutant empty_group_garbage --max-total-time 30 --seed 1 --workers 2"
             " --artifacts %s/artifacts", dir);
    int rc = ggfuzz(args);
    cr_expect(rc >= 11 && rc <= 19, "exit code %d: %s", rc, out);
    cr_expect(stat_value("new_faults") >= 1, "%s", out);
    cr_expect(strstr(out, "MIN ") && strstr(out, "BUCKET "), "%s", out);
    cr_expect(strstr(out, "/grouped_wgrad/") && strstr(out, "g:empty"), "%s", out);
    cr_expect_eq(stat_value("worker_restarts"), 0, "%s", out);
    /* The replay command it printed works pasted into a fresh shell elsewhere, and so does the
       command_line fuzzer_stats records (run again for a second). */
    static char pasted[1 << 16];
    cr_expect_eq(cli_paste(out, "    replay: ", pasted, sizeof pasted), 0, "%s\n%s", out, pasted);
    cr_expect(strstr(pasted, "1 cases: 1 reproduced"), "%s", pasted);
    char stats[512], line[1 << 14] = "command_line      : ";
    snprintf(stats, sizeof stats, "sed -n 's/^command_line *: //p' %s/fuzzer_stats", dir);
    cli_shell(stats, line + strlen(line), sizeof line - strlen(line));
    line[strcspn(line, "\n")] = '\0';
    strncat(line, " --max-total-time 1 --runs 1", sizeof line - strlen(line) - 1);
    int again = cli_paste(line, "command_line      : ", pasted, sizeof pasted);
    cr_expect(again == 0 || (again >= 11 && again <= 19), "exit %d: %s", again, pasted);
    cr_expect(strstr(pasted, "INFO: kernel=" NUMPY_KERNEL " mutant=empty_group_garbage"), "%s",
              pasted);
    cli_remove_dir(dir);
}

Test(cli_python, selftest_finds_the_python_mutant_and_passes_the_correct_kernel)
{
    cr_expect_eq(ggfuzz("--plugin " NUMPY_PLUGIN " selftest --kernel " NUMPY_KERNEL
                        " --max-total-time-per-mutant 5 --workers 1"),
                 0, "%s", out);
    cr_expect(strstr(out, "empty_group_garbage") && strstr(out, "found"), "%s", out);
    cr_expect(strstr(out, "1 of 1 mutants found, 1 of 1 correct kernels clean"), "%s", out);
}

Test(cli_python, raising_kernel_is_a_kernel_error)
{
    cr_expect_eq(ggfuzz("run --plugin " FAULTY " --kernel grouped_bf16_pyfault_raises " SEEDS
                        "/fwd_empty_first.case " SEEDS "/fwd_basic.case"),
                 3, "%s", out);
    cr_expect(strstr(out, "kernel grouped_bf16_pyfault_raises failed: ValueError: planted "
                          "failure: an empty group among 3 (faulty_kernels.py:"), "%s", out);
    cr_expect(strstr(out, "1 passed, 0 failed, 0 refused, 1 errors"), "%s", out);
    char dir[256], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args, "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_raises"
             " --max-total-time 8 --seed 2 --workers 2 --artifacts %s/artifacts", dir);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "could not run") && strstr(out, "ValueError: planted failure"), "%s",
              out);
    cr_expect(stat_value("number_of_executed_units") > 10, "%s", out);
    cli_remove_dir(dir);
}

/* An operand with no elements (K = 0 here: A is [M, 0], B [G, N, 0]) is still given the
   problem's strides, as a C kernel's pointer and leading dimension would be. */
Test(cli_python, an_empty_operand_has_the_problems_strides)
{
    char dir[256], path[512], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(path, sizeof path, "%s/k0.case", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_pyfault_strides\n"
          "dtypes a=bf16 b=bf16 c=bf16 acc=f32\ngroups 3\n"
          "group_lens 5 0 9\nn 24\nk 0\nld a=16 b=40 c=32\nstride b=1000\nseed 7\n",
          f);
    fclose(f);
    snprintf(args, sizeof args, "run --plugin " FAULTY " --kernel grouped_bf16_pyfault_strides %s",
             path);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "1 passed, 0 failed"), "%s", out);
    cli_remove_dir(dir);
}

Test(cli_python, aborting_kernel_is_a_crash)
{
    cr_expect_eq(ggfuzz("run --plugin " FAULTY " --kernel grouped_bf16_pyfault_aborts " SEEDS
                        "/fwd_empty_first.case " SEEDS "/fwd_basic.case"),
                 11, "%s", out);
    cr_expect(strstr(out, "crash") && strstr(out, "1 passed, 1 failed"), "%s", out);
    char dir[256], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args, "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_aborts"
             " --max-total-time 10 --seed 3 --workers 2 --no-minimize --artifacts %s/artifacts",
             dir);
    cr_expect_eq(ggfuzz(args), 11, "%s", out);
    /* Each crash costs two fresh workers (the re-run confirms it): a few cases, not many. */
    cr_expect(stat_value("worker_restarts") >= 2, "%s", out);
    cr_expect(stat_value("number_of_executed_units") >= 4, "%s", out);
    cli_remove_dir(dir);
}

/* A kernel whose first call in a process is slow confirms its faults slowly (each in a fresh
   process): when the campaign's time is up, the faults still waiting are filed as found, each
   saying it was not confirmed, rather than run past the budget. */
Test(cli_python, faults_waiting_for_confirmation_at_the_time_limit_are_filed_unconfirmed)
{
    char dir[256], args[1024], cmd[1024], notes[4096];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args,
             "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_slow_start"
             " --max-total-time 8 --seed 3 --workers 1 --no-minimize --artifacts %s/artifacts",
             dir);
    cr_expect_eq(ggfuzz(args), 16, "%s", out);
    cr_expect(strstr(out, "not run again in a fresh process (the campaign's time was up first)"),
              "%s", out);
    snprintf(cmd, sizeof cmd, "grep -h '^@note not confirmed' %s/artifacts/*.case", dir);
    cli_shell(cmd, notes, sizeof notes);
    cr_expect(strstr(notes, "@note not confirmed in a fresh process (the campaign's time was up "
                            "first)"),
              "%s\n%s", notes, out);
    cli_remove_dir(dir);
}

Test(cli_python, hanging_kernel_is_a_timeout)
{
    cr_expect_eq(ggfuzz("run --timeout 2 --plugin " FAULTY " --kernel grouped_bf16_pyfault_hangs "
                        SEEDS "/fwd_empty_first.case " SEEDS "/fwd_basic.case"),
                 12, "%s", out);
    cr_expect(strstr(out, "timeout") && strstr(out, "1 passed, 1 failed"), "%s", out);
    char dir[256], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args, "--plugin " FAULTY " fuzz --kernel grouped_bf16_pyfault_hangs"
             " --max-total-time 15 --timeout 1 --seed 4 --workers 2 --no-minimize"
             " --artifacts %s/artifacts", dir);
    cr_expect_eq(ggfuzz(args), 12, "%s", out);
    cr_expect(stat_value("timeouts") >= 1, "%s", out);
    cr_expect(stat_value("number_of_executed_units") >= 4, "%s", out);
    cli_remove_dir(dir);
}

Test(cli_python, refusals_are_clean)
{
    cr_expect_eq(ggfuzz("--plugin " GG_SOURCE_DIR "/tests/plugins/raises_at_import.py list"), 3,
                 "%s", out);
    cr_expect(strstr(out, "raises_at_import.py: registration failed: RuntimeError: this plugin "
                          "cannot be imported"), "%s", out);
    cr_expect_eq(ggfuzz_env("GGFUZZ_PYTHON=/nonexistent/python3", "--plugin " NUMPY_PLUGIN
                            " list"), 3, "%s", out);
    cr_expect(strstr(out, "cannot start the Python interpreter '/nonexistent/python3'"), "%s",
              out);
    cr_expect_eq(ggfuzz_env("GGFUZZ_PYTHONPATH=/nonexistent", "--plugin " NUMPY_PLUGIN " list"),
                 3, "%s", out);
    cr_expect(strstr(out, "needs the ggfuzz Python package"), "%s", out);
}

Test(cli_python, adapters_list_without_torch_triton_or_jax)
{
    static const struct {
        const char *file, *kernels[3];
    } plugins[] = {
        {ADAPTERS "torch_grouped_mm.py", {"grouped_bf16_torch_grouped_mm"}},
        {ADAPTERS "torch_scaled_grouped_mm.py",
         {"grouped_fp8_torch_scaled_grouped_mm"}},
        {ADAPTERS "torch_scaled_mm.py",
         {"dense_fp8_torch_scaled_mm_tensorwise", "dense_fp8_torch_scaled_mm_rowwise",
          "dense_fp8_torch_scaled_mm_blockwise"}},
        {ADAPTERS "torch_bmm.py", {"batched_bf16_torch_bmm"}},
        {ADAPTERS "inductor_grouped_mm.py", {"grouped_bf16_inductor_triton"}},
        {ADAPTERS "jax_ragged_dot.py",
         {"grouped_bf16_jax_ragged_dot", "grouped_bf16_jax_ragged_dot_general"}},
        {GG_SOURCE_DIR "/kernels/python/examples/triton_grouped.py",
         {"grouped_bf16_triton_example"}},
    };
    char args[1024];
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++) {
        snprintf(args, sizeof args, "--plugin %s list", plugins[i].file);
        cr_assert_eq(ggfuzz_env(NO_FRAMEWORKS, args), 0, "%s: %s", plugins[i].file, out);
        for (int k = 0; k < 3 && plugins[i].kernels[k]; k++)
            cr_expect(strstr(out, plugins[i].kernels[k]), "%s lacks %s: %s", plugins[i].file,
                      plugins[i].kernels[k], out);
    }
    /* The stand-ins do stop an import: a plugin that imports torch at once is refused. */
    cr_expect_eq(ggfuzz_env(NO_FRAMEWORKS, "--plugin " GG_SOURCE_DIR
                            "/tests/plugins/no_frameworks/imports_torch.py list"), 3, "%s", out);
    cr_expect(strstr(out, "torch is not importable in this test"), "%s", out);
}

Test(cli_python, a_plugin_that_exits_crashes_or_hangs_at_import_is_refused)
{
    cr_assert_eq(ggfuzz("--plugin " HOSTILE " --replay --kernel " HOSTILE_KERNEL " " HOSTILE_CASE),
                 0, "%s", out);
    /* Exit code 0 here would read as "every expectation reproduced". */
    cr_expect_eq(ggfuzz_env("GG_HOSTILE=import_exit", "--plugin " HOSTILE " --replay --kernel "
                            HOSTILE_KERNEL " " HOSTILE_CASE), 3, "%s", out);
    cr_expect(strstr(out, "hostile.py: the import (its module code) ended the process (exit "
                          "status 0)"), "%s", out);
    cr_expect_eq(ggfuzz_env("GG_HOSTILE=import_segv", "--plugin " HOSTILE " list"), 3, "%s", out);
    cr_expect(strstr(out, "hostile.py: the import (its module code) died on signal 11 "
                          "(Segmentation fault)"), "%s", out);
    cr_expect_eq(ggfuzz_env("GG_HOSTILE=import_hang GGFUZZ_PLUGIN_TIMEOUT=1", "--plugin " HOSTILE
                            " list"), 3, "%s", out);
    cr_expect(strstr(out, "hostile.py: the import (its module code) did not return within 1 s "
                          "(GGFUZZ_PLUGIN_TIMEOUT)"), "%s", out);
}

Test(cli_python, a_supports_that_ends_its_process_does_not_end_the_campaign_silently)
{
    char dir[256], args[1024];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    snprintf(args, sizeof args, "--plugin " HOSTILE " fuzz --kernel " HOSTILE_KERNEL
             " --runs 2 --max-total-time 30 --seed 5 --workers 1 --no-minimize"
             " --artifacts %s/artifacts", dir);
    /* On the capability probe's problems: the campaign ends with a message. */
    cr_expect_eq(ggfuzz_env("GG_HOSTILE=supports_exit", args), 3, "%s", out);
    cr_expect(strstr(out, "kernel " HOSTILE_KERNEL ", asked in a probe process: supports() ended "
                          "the process (exit status 0)"), "%s", out);
    /* On the cases drawn: each goes to a worker, where the crash is a finding. */
    cr_expect_eq(ggfuzz_env("GG_HOSTILE=supports_segv", args), 11, "%s", out);
    cr_expect(strstr(out, "kernel " HOSTILE_KERNEL ", asked in a probe process: supports() died "
                          "on signal 11 (Segmentation fault); case 0 goes to a worker as it is"),
              "%s", out);
    cr_expect(strstr(out, "FAULT crash (new)"), "%s", out);
    cli_remove_dir(dir);
}

Test(cli_python, a_program_that_is_not_the_python_host_is_refused)
{
    static const struct {
        const char *python, *how;
    } programs[] = {
        {"/bin/true", "exited with status 0 without answering"},
        {"/bin/false", "exited with status 1 without answering"},
        {"/bin/echo", "answered '-m ggfuzz --handshake', not the host's token"},
    };
    char env[256];
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        snprintf(env, sizeof env, "GGFUZZ_PYTHON=%s", programs[i].python);
        cr_expect_eq(ggfuzz_env(env, "--plugin " NUMPY_PLUGIN " --replay --kernel " NUMPY_KERNEL
                                " " SEEDS "/fwd_basic.case"), 3, "%s: %s", env, out);
        cr_expect(strstr(out, env) && strstr(out, "does not run ggfuzz's Python host") &&
                  strstr(out, programs[i].how) && strstr(out, "set GGFUZZ_PYTHON to a Python 3"),
                  "%s: %s", env, out);
    }
}

/* python3 on PATH is a Python whose numpy cannot be imported (the interpreter without its site
   packages: -S, which its children do not inherit), GGFUZZ_PYTHON unset; python3.99 after it on
   PATH is one with NumPy, which the message names. */
Test(cli_python, a_python_without_numpy_says_how_to_choose_another)
{
    const char *python = getenv("GGFUZZ_PYTHON");
    cr_assert(python && python[0], "GGFUZZ_PYTHON is not set for this test");
    char dir[256], path[512];
    cli_temp_dir(dir, sizeof dir, "cli-python");
    static const char *const wrappers[][2] = {{"python3", " -S"}, {"python3.99", ""}};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, wrappers[i][0]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\nexec '%s'%s \"$@\"\n", python, wrappers[i][1]);
        fclose(f);
        cr_assert_eq(chmod(path, 0755), 0);
    }
    char env[1024];
    snprintf(env, sizeof env, "GGFUZZ_PYTHON= PATH='%s':\"$PATH\"", dir);
    cr_expect_eq(ggfuzz_env(env, "--plugin " NUMPY_PLUGIN " list"), 3, "%s", out);
    snprintf(path, sizeof path, "found on PATH with numpy: %s/python3.99", dir);
    cr_expect(strstr(out, "No module named 'numpy'") &&
              strstr(out, "set GGFUZZ_PYTHON to a Python 3 interpreter that can import numpy") &&
              strstr(out, path), "%s", out);
    cli_remove_dir(dir);
}

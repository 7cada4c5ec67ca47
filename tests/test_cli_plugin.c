/*
 * test_cli_plugin.c — plugins on the ggfuzz command line: `--plugin PATH` before or after the
 * command and GGFUZZ_PLUGINS load the example plugin, whose kernel then shows in `list` and runs
 * and replays cases; a bad plugin, also one that crashes, exits or hangs while it registers, stops
 * ggfuzz with exit code 3 and a message on stderr naming the plugin and the problem, never a crash
 * or a hang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define SEEDS GG_SOURCE_DIR "/corpus/seeds"
#define EXAMPLE_KERNEL "grouped_bf16_plugin_naive"
#define BAD(variant) GG_TEST_PLUGINS "/" variant ".so"

static char out[1 << 16];

/* Runs `env ggfuzz args` through the shell; out gets stdout and stderr (stderr only when
   stderr_only is set). Returns the exit code; a death by signal fails the test. */
static int ggfuzz_env(const char *env, const char *args, int stderr_only)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s '%s' %s %s", env, GGFUZZ_BIN, args,
             stderr_only ? "2>&1 >/dev/null" : "2>&1");
    return cli_shell(cmd, out, sizeof out);
}

static int ggfuzz(const char *args)
{
    return ggfuzz_env("GGFUZZ_PLUGINS=", args, 0);
}

Test(cli_plugin, list_shows_the_plugin_kernel)
{
    cr_assert_eq(ggfuzz("--plugin " GG_EXAMPLE_PLUGIN " list"), 0, "%s", out);
    cr_expect(strstr(out, EXAMPLE_KERNEL) && strstr(out, "skip_last_k"), "%s", out);
    cr_expect(strstr(out, "grouped_bf16_cpu_tiled"), "%s", out);
    cr_assert_eq(ggfuzz("list --plugin " GG_EXAMPLE_PLUGIN), 0, "%s", out);
    cr_expect(strstr(out, EXAMPLE_KERNEL), "%s", out);
    cr_assert_eq(ggfuzz("list"), 0, "%s", out);
    cr_expect_null(strstr(out, EXAMPLE_KERNEL), "%s", out);
}

Test(cli_plugin, plugin_kernel_runs_and_replays)
{
    cr_expect_eq(ggfuzz("run --plugin " GG_EXAMPLE_PLUGIN " --kernel " EXAMPLE_KERNEL " " SEEDS
                        "/fwd_basic.case " SEEDS "/wgrad_basic.case"),
                 0, "%s", out);
    cr_expect(strstr(out, "2 cases: 2 passed, 0 failed"), "%s", out);
    cr_expect_eq(ggfuzz("--plugin " GG_EXAMPLE_PLUGIN " replay --kernel " EXAMPLE_KERNEL " " SEEDS
                        "/dgrad_basic.case"),
                 0, "%s", out);
    cr_expect(strstr(out, ", 0 did not reproduce"), "%s", out);
}

Test(cli_plugin, case_file_names_the_plugin_kernel)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/ggfuzz-cli-plugin-XXXXXX.case");
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    static const char text[] = "ggfuzz-case 1\nop grouped_wgrad\nkernel " EXAMPLE_KERNEL "\n"
                               "dtypes a=bf16 b=bf16 c=f32\nscaling none\ngroups 3\n"
                               "group_lens 9 0 30\nn 24\nk 40\nseed 3\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char args[256];
    snprintf(args, sizeof args, "run %s", path);
    cr_expect_eq(ggfuzz(args), 3, "%s", out); /* without the plugin: unknown kernel */
    cr_expect(strstr(out, "unknown kernel '" EXAMPLE_KERNEL "'"), "%s", out);
    snprintf(args, sizeof args, "--plugin %s run %s", GG_EXAMPLE_PLUGIN, path);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "PASS") && strstr(out, EXAMPLE_KERNEL), "%s", out);
    unlink(path);
}

Test(cli_plugin, plugin_mutant_is_caught)
{
    cr_expect_eq(ggfuzz("run --plugin " GG_EXAMPLE_PLUGIN " --kernel " EXAMPLE_KERNEL
                        " --mutant skip_last_k " SEEDS "/fwd_basic.case"),
                 19, "%s", out);
    cr_expect(strstr(out, "snr"), "%s", out);
}

Test(cli_plugin, environment_variable_loads_plugins)
{
    cr_assert_eq(ggfuzz_env("GGFUZZ_PLUGINS=:" GG_EXAMPLE_PLUGIN ":", "list", 0), 0, "%s", out);
    cr_expect(strstr(out, EXAMPLE_KERNEL), "%s", out);
    /* Named twice, by the variable and the option: loaded once. */
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGINS=" GG_EXAMPLE_PLUGIN,
                            "run --plugin " GG_EXAMPLE_PLUGIN " --kernel " EXAMPLE_KERNEL " " SEEDS
                            "/fwd_basic.case",
                            0),
                 0, "%s", out);
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGINS=" BAD("no_kernel"), "list", 1), 3, "%s", out);
    cr_expect(strstr(out, "GGFUZZ_PLUGINS: " BAD("no_kernel") ": registers no kernel"), "%s", out);
    /* Commands that run no kernel do not load plugins. */
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGINS=" BAD("no_kernel"), "--version", 0), 0, "%s", out);
}

/* hang_register is refused after GGFUZZ_PLUGIN_TIMEOUT seconds. */
#define ENV "GGFUZZ_PLUGINS= GGFUZZ_PLUGIN_TIMEOUT=1"

Test(cli_plugin, bad_plugins_exit_3_with_a_message)
{
    static const struct {
        const char *path, *want;
    } bad[] = {
        {BAD("abi_version"), "plugin ABI version"},
        {BAD("no_abi_symbol"), "symbol gg_plugin_abi_version missing"},
        {BAD("no_register"), "symbol gg_plugin_register missing"},
        {BAD("null_run"), "required slot 'run' is NULL"},
        {BAD("register_error"), "registration failed: no licence for this kernel"},
        {BAD("partial"), "kernel grouped_bf16_cpu_tiled is already registered"},
        {BAD("segv_register"), "gg_plugin_register died on signal 11 (Segmentation fault)"},
        {BAD("exit_register"), "gg_plugin_register ended the process (exit status 0)"},
        {BAD("segv_init"), "loading (its initialisers) died on signal 11"},
        {BAD("hang_register"), "gg_plugin_register did not return within 1 s"},
        {GG_TEST_PLUGINS "/no_such_plugin.so", "cannot load: "},
        {GG_SOURCE_DIR "/README.md", "cannot load: "},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[1024], want[1024];
        snprintf(args, sizeof args, "--plugin %s list", bad[i].path);
        cr_expect_eq(ggfuzz_env(ENV, args, 1), 3, "%s: %s", bad[i].path, out);
        snprintf(want, sizeof want, "ggfuzz: %s: ", bad[i].path);
        cr_expect(strncmp(out, want, strlen(want)) == 0 && strstr(out, bad[i].want),
                  "expected '%s...%s' on stderr, got: %s", want, bad[i].want, out);
        snprintf(args, sizeof args, "run --plugin %s %s/fwd_basic.case", bad[i].path, SEEDS);
        cr_expect_eq(ggfuzz_env(ENV, args, 0), 3, "%s: %s", bad[i].path, out);
        cr_expect_null(strstr(out, "PASS"), "ran cases despite a bad plugin: %s", out);
        snprintf(args, sizeof args, "fuzz --plugin %s --kernel grouped_bf16_cpu_tiled --runs 1",
                 bad[i].path);
        cr_expect_eq(ggfuzz_env(ENV, args, 1), 3, "fuzz: %s: %s", bad[i].path, out);
        cr_expect(strstr(out, bad[i].want), "fuzz: expected '%s' on stderr, got: %s",
                  bad[i].want, out);
    }
}

Test(cli_plugin, a_case_killed_from_outside_is_an_error_not_a_crash)
{
    char path[64], args[512];
    snprintf(path, sizeof path, "/tmp/ggfuzz-cli-kill-XXXXXX.case");
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    static const char text[] = "ggfuzz-case 1\nop grouped_fwd\nkernel bad_crash_run\n"
                               "dtypes a=bf16 b=bf16 c=f32\nscaling none\ngroups 2\n"
                               "group_lens 3 4\nn 8\nk 16\nseed 3\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    snprintf(args, sizeof args, "run --plugin %s %s", BAD("crash_run"), path);
    /* SIGKILL, which a kernel does not raise as a bug: killed from outside (kill -9, OOM). */
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGINS= BAD_PLUGIN_SIGNAL=9", args, 0), 3, "%s", out);
    cr_expect(strstr(out, "was killed by signal 9 (Killed) from outside ggfuzz (out of memory?)"),
              "%s", out);
    cr_expect(strstr(out, "1 cases: 0 passed, 0 failed, 0 refused, 1 errors"), "%s", out);
    /* A signal the kernel raises itself is a crash verdict. */
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGINS= BAD_PLUGIN_SIGNAL=11", args, 0), 11, "%s", out);
    cr_expect(strstr(out, "died on signal 11"), "%s", out);
    unlink(path);
}

Test(cli_plugin, a_campaign_logs_the_cases_a_kernel_cannot_run)
{
    char dir[] = "/tmp/ggfuzz-plugin-XXXXXX", args[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "fuzz %s/corpus --plugin %s --kernel bad_run_error --max-total-time 2 --workers 1 "
             "--artifacts %s/art --seed 7",
             dir, BAD("run_error"), dir);
    /* Nothing was verified: the harness's exit code, and the last line says why. */
    cr_expect_eq(ggfuzz(args), 3, "%s", out);
    const char *end = strstr(out, "ERROR: none of the ");
    cr_expect(end && strstr(end, " cases could run (") && strstr(end, "the kernel was not verified\n"),
              "%s", out);
    cr_expect(end && strchr(end, '\n') && strchr(end, '\n')[1] == '\0', "not the last line: %s",
              out);
    cr_expect(strstr(out, "stat::errors:"), "%s", out);
    const char *first = strstr(out, "WARNING: #1 could not run (status -3): ");
    cr_expect(first && strstr(first, "cudaLaunchKernel: too many resources requested for launch"),
              "%s", out);
    cr_expect(strstr(out, "WARNING: 8 cases could not run; further ones are only counted"), "%s",
              out);
    const char *last = out, *s;
    int logged = 0;
    while ((s = strstr(last, "could not run (status")) != NULL)
        logged++, last = s + 1;
    cr_expect_eq(logged, 8, "%s", out);
    /* The statistics and the report say so too. */
    char stats[4096] = "";
    snprintf(args, sizeof args, "cat '%s/fuzzer_stats'", dir);
    cli_shell(args, stats, sizeof stats);
    cr_expect(strstr(stats, "not_verified      : none of the "), "%s", stats);
    snprintf(args, sizeof args, "report --campaign %s -o %s/report", dir, dir);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    snprintf(args, sizeof args, "cat '%s/report/summary.md'", dir);
    cli_shell(args, stats, sizeof stats);
    cr_expect(strstr(stats, "**Not verified:** none of the "), "%s", stats);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}

/* A kernel with a weight cache keyed by address and shape: a campaign files its fault with the
   earlier case it needs; --replay runs that case first (a bare run of the last case passes); the
   report says so. */
Test(cli_plugin, a_history_dependent_finding_replays_with_its_earlier_cases)
{
    char dir[] = "/tmp/ggfuzz-plugin-XXXXXX", args[2048], text[1 << 14];
    cr_assert_null(mkdtemp(dir) == NULL ? "mkdtemp" : NULL);
    for (int i = 1; i <= 2; i++) {
        snprintf(args, sizeof args, "mkdir -p '%s/seeds' && printf 'ggfuzz-case 1\nop grouped_fwd\n"
                 "kernel grouped_bf16_weight_cache\ndtypes a=bf16 b=bf16 c=f32\ngroups 2\n"
                 "group_lens 8 8\nn 32\nk 32\nseed %d\n' > '%s/seeds/%d.case'",
                 dir, i, dir, i);
        cr_assert_eq(system(args), 0);
    }
    snprintf(args, sizeof args,
             "fuzz %s/seeds --plugin %s --kernel grouped_bf16_weight_cache --mutant "
             "stale_weight_cache --runs 2 --workers 1 --no-minimize --artifacts %s/art --seed 1",
             dir, BAD("stateful"), dir);
    cr_expect_eq(ggfuzz(args), 19, "%s", out);
    cr_expect(strstr(out, "fails only after 1 earlier case in its process (@after)"), "%s", out);
    cr_expect(strstr(out, "stat::history_dependent:        1"), "%s", out);
    snprintf(args, sizeof args, "--plugin %s --replay %s/art", BAD("stateful"), dir);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    cr_expect(strstr(out, "ran after the 1 case it fails only after (@after), in one process"),
              "%s", out);
    cr_expect(strstr(out, "1 cases: 1 reproduced"), "%s", out);
    snprintf(args, sizeof args, "cp %s/art/snr-*.case %s/alone.case && sed -i '/^@after/d' "
             "%s/alone.case", dir, dir, dir);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "--plugin %s --replay %s/alone.case", BAD("stateful"), dir);
    cr_expect_eq(ggfuzz(args), 20, "without its @after case it passes: %s", out);
    snprintf(args, sizeof args, "report --campaign %s -o %s/report", dir, dir);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    snprintf(args, sizeof args, "cat '%s/report/summary.md'", dir);
    cli_shell(args, text, sizeof text);
    cr_expect(strstr(text, "**Fails only after 1 earlier case** in the same process"), "%s",
              text);
    snprintf(args, sizeof args, "grep -c '<b>Fails only after 1 earlier case</b>' "
             "'%s/report/index.html'", dir);
    cli_shell(args, text, sizeof text);
    cr_expect_str_eq(text, "1\n");
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}

/* Without a terminal a campaign prints a status line at least every --status-interval seconds,
   not only at doubling case counts: a slow kernel (half a second a case) meets few of those. */
Test(cli_plugin, a_campaign_in_a_log_says_how_it_goes_at_an_interval)
{
    char dir[] = "/tmp/ggfuzz-plugin-XXXXXX", args[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "fuzz --plugin %s --kernel grouped_bf16_weight_cache --workers 1 "
             "--max-total-time 4 --stats-interval 0.25 --status-interval 0.5 --seed 3 "
             "--no-minimize --artifacts %s/art", BAD("stateful"), dir);
    ggfuzz_env("GGFUZZ_PLUGINS= STATEFUL_PLUGIN_DELAY_MS=250", args, 0);
    int lines = 0;
    for (const char *p = out; (p = strstr(p, " pulse exec/s: ")) != NULL; p++)
        lines++;
    cr_expect_geq(lines, 6, "%d status lines: %s", lines, out);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}

/* A campaign of a plugin's kernel prints replay commands that work pasted into a fresh shell in
   another directory; its report gives the same command. */
Test(cli_plugin, the_replay_command_printed_for_a_plugin_kernel_works_elsewhere)
{
    char dir[] = "/tmp/ggfuzz-plugin-XXXXXX", args[1024];
    static char pasted[1 << 16], text[1 << 16];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "cd %s && GGFUZZ_PLUGINS= '%s' --plugin '%s' fuzz --kernel "
             EXAMPLE_KERNEL " --mutant skip_last_k --max-total-time 10 --workers 1 --seed 3 "
             "--artifacts a 2>&1", dir, GGFUZZ_BIN, GG_EXAMPLE_PLUGIN);
    int rc = cli_shell(args, out, sizeof out);
    cr_expect(rc >= 11 && rc <= 19, "exit %d: %s", rc, out);
    cr_expect_eq(cli_paste(out, "    replay: ", pasted, sizeof pasted), 0, "%s\n%s", out, pasted);
    cr_expect(strstr(pasted, "1 cases: 1 reproduced"), "%s", pasted);
    snprintf(args, sizeof args, "report --campaign %s -o %s/report", dir, dir);
    cr_expect_eq(ggfuzz(args), 0, "%s", out);
    snprintf(args, sizeof args, "cat %s/report/summary.md", dir);
    cli_shell(args, text, sizeof text);
    cr_expect_eq(cli_paste(text, "```sh\n", pasted, sizeof pasted), 0, "%s\n%s", text, pasted);
    cr_expect(strstr(pasted, "1 cases: 1 reproduced"), "%s", pasted);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}

Test(cli_plugin, plugin_option_needs_a_path)
{
    cr_expect_eq(ggfuzz("--plugin"), 2, "%s", out);
    cr_expect(strstr(out, "--plugin needs a path"), "%s", out);
    cr_expect_eq(ggfuzz("list --plugin"), 2, "%s", out);
}

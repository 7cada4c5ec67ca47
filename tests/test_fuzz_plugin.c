/*
 * test_fuzz_plugin.c — plugin loading: the example plugin registers its kernel, passes cases of
 * every op through the runner and is caught by the runner under its own mutant; every broken
 * plugin of tests/plugins/ is refused with a message naming the problem and leaves the registry
 * as it was; a plugin that crashes, exits or hangs while it loads or registers is refused with a
 * message saying so and this process goes on; the example source includes nothing but gg_kernel.h
 * and the C standard library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"
#include "kernels/builtin/gg_builtin.h"

#define EXAMPLE_KERNEL "grouped_bf16_plugin_naive"
#define BAD(variant) GG_TEST_PLUGINS "/" variant ".so"

static char err[1024];

static void load_ok(const char *path)
{
    cr_assert_eq(gg_plugin_load(path, err, sizeof err), GG_OK, "%s", err);
}

/* Loads path, expecting a refusal with status st whose message starts with "path: " and holds
   want; the registry must be unchanged. */
static void load_refused(const char *path, enum gg_status st, const char *want)
{
    gg_registry_init();
    size_t before = gg_registry_count();
    cr_expect_eq(gg_plugin_load(path, err, sizeof err), st, "%s: %s", path, err);
    cr_expect(strncmp(err, path, strlen(path)) == 0 && strncmp(err + strlen(path), ": ", 2) == 0,
              "message does not start with the path: %s", err);
    cr_expect(strstr(err, want), "expected '%s' in: %s", want, err);
    cr_expect_eq(gg_registry_count(), before, "%s left kernels behind", path);
}

static void run_example(const char *op, const char *c_dtype, const char *mutant,
                        struct gg_verdict *v)
{
    char text[512];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop %s\nkernel " EXAMPLE_KERNEL "\ndtypes a=bf16 b=bf16 c=%s\n"
             "scaling none\ngroups 4\ngroup_lens 0 37 1 64\nn 48\nk 96\nseed 5\n",
             op, c_dtype);
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, strlen(text), "plugin", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_opts o = {.mutant = mutant, .certify_samples = 8};
    struct gg_run_result r;
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    *v = r.verdict;
    gg_run_result_free(&r);
    gg_case_free(&c);
}

Test(plugin, example_registers_its_kernel)
{
    load_ok(GG_EXAMPLE_PLUGIN);
    const struct gg_kernel *k = gg_registry_find(EXAMPLE_KERNEL);
    cr_assert_not_null(k);
    cr_expect_eq(k->backend, GG_BACKEND_CPU);
    cr_expect_eq(k->ops, GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                             GG_OP_BIT(GG_OP_GROUPED_WGRAD));
    cr_assert_not_null(k->mutants);
    cr_expect_str_eq(k->mutants[0], "skip_last_k");
    cr_expect_null(k->mutants[1]);
    /* The in-tree kernels come first and stay. */
    size_t builtin = 0;
    gg_kernels_builtin(&builtin);
    cr_expect_eq(gg_registry_count(), builtin + 1);
    cr_expect_not_null(gg_registry_find("grouped_bf16_cpu_tiled"));
}

Test(plugin, loading_the_same_plugin_twice_adds_nothing)
{
    load_ok(GG_EXAMPLE_PLUGIN);
    size_t n = gg_registry_count();
    load_ok(GG_EXAMPLE_PLUGIN);
    cr_expect_eq(gg_registry_count(), n);
}

Test(plugin, example_passes_every_op)
{
    load_ok(GG_EXAMPLE_PLUGIN);
    static const char *ops[] = {"grouped_fwd", "grouped_dgrad", "grouped_wgrad"};
    for (int i = 0; i < 6; i++) {
        struct gg_verdict v;
        run_example(ops[i % 3], i < 3 ? "bf16" : "f32", NULL, &v);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s c=%s: %s %s", ops[i % 3], i < 3 ? "bf16" : "f32",
                     v.signature, v.detail);
    }
}

Test(plugin, example_mutant_fails_with_snr)
{
    load_ok(GG_EXAMPLE_PLUGIN);
    static const char *ops[] = {"grouped_fwd", "grouped_dgrad", "grouped_wgrad"};
    for (int i = 0; i < 3; i++) {
        struct gg_verdict v;
        run_example(ops[i], "bf16", "skip_last_k", &v);
        cr_expect_eq(v.cls, GG_CLASS_SNR, "%s: %s %s", ops[i], v.signature, v.detail);
    }
}

Test(plugin, example_refuses_what_it_does_not_support)
{
    load_ok(GG_EXAMPLE_PLUGIN);
    static const char text[] = "ggfuzz-case 1\nop grouped_fwd\nkernel " EXAMPLE_KERNEL "\n"
                               "dtypes a=e4m3 b=e4m3 c=bf16\nscaling tensor\ngroups 1\n"
                               "group_lens 4\nn 8\nk 32\nseed 1\n";
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, strlen(text), "plugin", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_opts o = {0};
    struct gg_run_result r;
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect(strstr(err, EXAMPLE_KERNEL ": bf16 inputs only"), "%s", err);
    gg_case_free(&c);
}

Test(plugin, wrong_abi_version_is_refused_before_any_call)
{
    /* Its gg_plugin_register aborts: reaching it would kill this test. */
    char want[128];
    snprintf(want, sizeof want, "plugin ABI version %u, this ggfuzz speaks %u",
             GG_KERNEL_ABI_VERSION - 1, GG_KERNEL_ABI_VERSION);
    load_refused(BAD("abi_version"), GG_E_ABI, want);
}

Test(plugin, missing_symbols_are_refused)
{
    load_refused(BAD("no_abi_symbol"), GG_E_ABI,
                 "not a ggfuzz plugin: symbol gg_plugin_abi_version missing");
    cr_expect_null(gg_registry_find("bad_plugin_kernel"), "register ran without a version");
    load_refused(BAD("no_register"), GG_E_ABI,
                 "not a ggfuzz plugin: symbol gg_plugin_register missing");
}

Test(plugin, malformed_descriptors_are_refused)
{
    load_refused(BAD("null_run"), GG_E_ABI, "kernel bad_null_run: required slot 'run' is NULL");
    char want[128];
    snprintf(want, sizeof want, "kernel bad_kernel_abi: ABI version %u, this ggfuzz speaks %u",
             GG_KERNEL_ABI_VERSION - 1, GG_KERNEL_ABI_VERSION);
    load_refused(BAD("kernel_abi"), GG_E_ABI, want);
    /* Refused even when the plugin ignores add_kernel's status and reports success. */
    load_refused(BAD("ignores_refusal"), GG_E_ABI,
                 "kernel bad_no_supports: required slot 'supports' is NULL");
    cr_expect_null(gg_registry_find("bad_no_supports"));
}

Test(plugin, a_refused_kernel_removes_the_kernels_added_before_it)
{
    load_refused(BAD("partial"), GG_E_INVAL, "kernel grouped_bf16_cpu_tiled is already registered");
    cr_expect_null(gg_registry_find("bad_partial_first"));
    cr_expect_not_null(gg_registry_find("grouped_bf16_cpu_tiled"));
}

Test(plugin, register_failure_and_no_kernel_are_refused)
{
    load_refused(BAD("register_error"), GG_E_UNSUPPORTED,
                 "registration failed: no licence for this kernel");
    load_refused(BAD("no_kernel"), GG_E_ABI, "registers no kernel");
}

Test(plugin, a_crash_in_registration_or_loading_is_refused)
{
    load_refused(BAD("segv_register"), GG_E_ABI,
                 "gg_plugin_register died on signal 11 (Segmentation fault)");
    load_refused(BAD("segv_init"), GG_E_ABI,
                 "loading (its initialisers) died on signal 11 (Segmentation fault)");
    load_refused(BAD("exit_register"), GG_E_ABI,
                 "gg_plugin_register ended the process (exit status 0)");
    /* This process is intact and loads a good plugin afterwards. */
    load_ok(GG_EXAMPLE_PLUGIN);
    cr_expect_not_null(gg_registry_find(EXAMPLE_KERNEL));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(plugin, a_hang_in_registration_is_refused_at_the_time_limit, .timeout = 30)
{
    cr_assert_eq(setenv("GGFUZZ_PLUGIN_TIMEOUT", "0.5", 1), 0);
    double t0 = now_s();
    load_refused(BAD("hang_register"), GG_E_ABI,
                 "gg_plugin_register did not return within 0.5 s (GGFUZZ_PLUGIN_TIMEOUT)");
    double took = now_s() - t0;
    cr_expect(took >= 0.5 && took < 5, "refused after %.2f s", took);
    /* A limit that is not a number of seconds refuses every plugin. */
    static const char *const bad[] = {"-1", "ten", "nan", "inf", "1s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(setenv("GGFUZZ_PLUGIN_TIMEOUT", bad[i], 1), 0);
        cr_expect_eq(gg_plugin_load(GG_EXAMPLE_PLUGIN, err, sizeof err), GG_E_INVAL, "%s", bad[i]);
        cr_expect(strstr(err, "GGFUZZ_PLUGIN_TIMEOUT: not a number of seconds >= 0"), "%s", err);
    }
    cr_expect_null(gg_registry_find(EXAMPLE_KERNEL));
    cr_assert_eq(setenv("GGFUZZ_PLUGIN_TIMEOUT", "0", 1), 0); /* 0: no limit */
    load_ok(GG_EXAMPLE_PLUGIN);
    unsetenv("GGFUZZ_PLUGIN_TIMEOUT");
}

Test(plugin, files_that_are_not_plugins_are_refused)
{
    load_refused(GG_TEST_PLUGINS "/no_such_plugin.so", GG_E_IO, "cannot load: ");
    cr_expect(strstr(err, "No such file"), "%s", err);
    char path[64];
    snprintf(path, sizeof path, "/tmp/ggfuzz-plugin-XXXXXX.so");
    int fd = mkstemps(path, 3);
    cr_assert(fd >= 0);
    static const char text[] = "this is not a shared object\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    load_refused(path, GG_E_IO, "cannot load: ");
    unlink(path);
    cr_expect_eq(gg_plugin_load("", err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "plugin path is empty"), "%s", err);
}

Test(plugin, a_plugin_still_loads_after_a_refused_one)
{
    load_refused(BAD("null_run"), GG_E_ABI, "required slot 'run'");
    load_ok(GG_EXAMPLE_PLUGIN);
    cr_expect_not_null(gg_registry_find(EXAMPLE_KERNEL));
}

Test(plugin, path_lists_load_in_order_and_stop_at_a_refusal)
{
    cr_expect_eq(gg_plugin_load_list("", err, sizeof err), GG_OK);
    cr_expect_eq(gg_plugin_load_list("::" GG_EXAMPLE_PLUGIN ":", err, sizeof err), GG_OK, "%s", err);
    cr_expect_not_null(gg_registry_find(EXAMPLE_KERNEL));
    cr_expect_eq(gg_plugin_load_list(GG_EXAMPLE_PLUGIN ":" BAD("no_kernel"), err, sizeof err),
                 GG_E_ABI);
    cr_expect(strstr(err, BAD("no_kernel") ": registers no kernel"), "%s", err);
}

/* The example is the recipe an outside team copies: it may include gg_kernel.h and headers of
   the C standard library, nothing else. (Its CMake target also has only kernels/ on the include
   path and links with --no-undefined.) */
Test(plugin, example_source_includes_only_gg_kernel_h)
{
    static const char *const c_std[] = {
        "assert.h",  "complex.h",  "ctype.h",    "errno.h",       "fenv.h",    "float.h",
        "inttypes.h", "iso646.h",  "limits.h",   "locale.h",      "math.h",    "setjmp.h",
        "signal.h",  "stdalign.h", "stdarg.h",   "stdatomic.h",   "stdbool.h", "stddef.h",
        "stdint.h",  "stdio.h",    "stdlib.h",   "stdnoreturn.h", "string.h",  "tgmath.h",
        "threads.h", "time.h",     "uchar.h",    "wchar.h",       "wctype.h"};
    FILE *f = fopen(GG_SOURCE_DIR "/kernels/plugins/example_plugin.c", "r");
    cr_assert_not_null(f);
    char line[512];
    int n_kernel_h = 0, n_includes = 0;
    while (fgets(line, sizeof line, f)) {
        const char *s = line + strspn(line, " \t");
        if (*s != '#')
            continue;
        s += 1 + strspn(s + 1, " \t");
        if (strncmp(s, "include", 7) != 0)
            continue;
        n_includes++;
        s += 7 + strspn(s + 7, " \t");
        char name[128] = "";
        if (sscanf(s, "\"%127[^\"]\"", name) == 1) {
            cr_expect_str_eq(name, "gg_kernel.h", "includes \"%s\"", name);
            n_kernel_h++;
        } else if (sscanf(s, "<%127[^>]>", name) == 1) {
            int std = 0;
            for (size_t i = 0; i < sizeof c_std / sizeof c_std[0]; i++)
                std |= strcmp(name, c_std[i]) == 0;
            cr_expect(std, "includes <%s>, not a C standard header", name);
        } else {
            cr_expect_fail("unreadable include: %s", line);
        }
    }
    fclose(f);
    cr_expect_eq(n_kernel_h, 1);
    cr_expect_gt(n_includes, 1);
}

/*
 * test_fuzz_isolate.c — a kernel that crashes, hangs or exits ends only the child process that
 * ran it: the caller gets a crash or timeout verdict with a signature, and the next case runs. A
 * child killed by SIGKILL (as kill -9 or the OOM killer would) is a harness failure, not a crash
 * verdict, so the minimiser never keeps a step because of one.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/minimize/gg_minimize.h"

static int accept_all(const struct gg_problem *p, char *why, size_t len)
{
    (void)p, (void)why, (void)len;
    return 1;
}

/* Writes zeros, then misbehaves as its mutant says. */
static enum gg_status misbehave(const struct gg_problem *p, const struct gg_operands *o, char *err,
                                size_t len)
{
    (void)err, (void)len;
    if (gg_mutant_is(p, "segv"))
        raise(SIGSEGV);
    if (gg_mutant_is(p, "sigkill"))
        raise(SIGKILL);
    /* A segfault on the 7 rows of the case below; any other shape is killed "from outside". */
    if (gg_mutant_is(p, "segv_or_killed"))
        raise(p->m == 7 ? SIGSEGV : SIGKILL);
    if (gg_mutant_is(p, "hang"))
        for (;;)
            pause();
    if (gg_mutant_is(p, "exit"))
        exit(3);
    for (int64_t m = 0; m < p->m; m++)
        for (int64_t n = 0; n < p->n; n++)
            memset((char *)o->c + (m * p->ldc + n) * 4, 0, 4);
    return GG_OK;
}

static const char *const mutants[] = {"segv", "hang", "exit", "sigkill", "segv_or_killed", NULL};
static const struct gg_kernel k = {.abi_version = GG_KERNEL_ABI_VERSION,
                                   .name = "test_misbehaving_cpu",
                                   .backend = GG_BACKEND_CPU,
                                   .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
                                   .tile_m = 64, .tile_n = 64,
                                   .mutants = mutants,
                                   .supports = accept_all,
                                   .run = misbehave};

static void setup(void)
{
    char err[256];
    gg_registry_init();
    if (!gg_registry_find(k.name))
        cr_assert_eq(gg_registry_add(&k, err, sizeof err), GG_OK, "%s", err);
}

TestSuite(isolate, .init = setup, .timeout = 60);

/* Zero inputs make the zero output exact, so the correct run passes. */
static const char text[] = "ggfuzz-case 1\nop grouped_fwd\nkernel test_misbehaving_cpu\n"
                           "dtypes a=bf16 b=bf16 c=f32\nscaling none\ngroups 2\ngroup_lens 3 4\n"
                           "n 8\nk 16\ndata a=const(0) b=const(0)\nseed 1\n";

static enum gg_status run(const char *mutant, double timeout, struct gg_run_result *r)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_opts o = {.mutant = mutant};
    enum gg_status st = gg_run_case_isolated(&c, &o, timeout, r, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s", err);
    gg_case_free(&c);
    return st;
}

Test(isolate, a_correct_kernel_passes_with_its_metrics)
{
    struct gg_run_result r;
    run("none", 30, &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.detail);
    cr_assert(r.compared);
    cr_expect_eq(r.cmp.n_groups, 2);
    cr_expect_eq(r.cmp.groups[1].elems, 4 * 8);
    cr_expect_str_eq(r.kernel, "test_misbehaving_cpu");
    gg_run_result_free(&r);
}

Test(isolate, a_segfault_is_a_crash_finding)
{
    struct gg_run_result r;
    run("segv", 30, &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_CRASH);
    cr_expect(strstr(r.verdict.detail, "signal 11"), "%s", r.verdict.detail);
    cr_expect(strncmp(r.verdict.signature, "crash/test_misbehaving_cpu/bf16-bf16-f32/grouped_fwd/",
                      53) == 0, "%s", r.verdict.signature);
    cr_expect_str_eq(r.mutant, "segv");
    gg_run_result_free(&r);
    /* The caller goes on: the next case runs normally. */
    run("none", 30, &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS);
    gg_run_result_free(&r);
}

Test(isolate, a_hang_is_killed_as_a_timeout)
{
    struct gg_run_result r;
    run("hang", 0.5, &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_TIMEOUT);
    cr_expect(strstr(r.verdict.detail, "0.5 s limit"), "%s", r.verdict.detail);
    cr_expect_lt(r.total_seconds, 10.0);
    gg_run_result_free(&r);
}

Test(isolate, an_exit_without_a_result_is_a_crash)
{
    struct gg_run_result r;
    run("exit", 30, &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_CRASH);
    cr_expect(strstr(r.verdict.detail, "exited without a result"), "%s", r.verdict.detail);
    gg_run_result_free(&r);
}

Test(isolate, a_child_killed_from_outside_is_an_error_not_a_crash)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_opts o = {.mutant = "sigkill"};
    struct gg_run_result r;
    cr_expect_eq(gg_run_case_isolated(&c, &o, 30, &r, err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, "was killed by signal 9 (Killed) from outside ggfuzz (out of memory?)"),
              "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "a verdict was made: %s", r.verdict.signature);
    gg_run_result_free(&r);
    gg_case_free(&c);
}

Test(isolate, the_minimiser_keeps_no_step_whose_run_was_killed_from_outside)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", &c, err, sizeof err), GG_OK, "%s", err);
    snprintf(c.mutant, sizeof c.mutant, "segv_or_killed");
    struct gg_run_opts o = {0};
    struct gg_run_result r;
    cr_assert_eq(gg_run_case_isolated(&c, &o, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(r.verdict.cls, GG_CLASS_CRASH);
    char sig[GG_SIGNATURE_MAX];
    snprintf(sig, sizeof sig, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    /* Every candidate with other than 7 rows is killed: none of them may count as the crash. */
    struct gg_min_opts mo = {.max_total_time_s = 30, .timeout_s = 30};
    struct gg_min_stats ms;
    cr_assert_eq(gg_minimize(&c, sig, &mo, &ms, err, sizeof err), GG_OK, "%s", err);
    cr_expect_gt(ms.attempts, 1);
    cr_expect_eq(ms.elems_after / c.n, 7, "kept a step with %lld rows",
                 (long long)(ms.elems_after / c.n));
    gg_case_free(&c);
}

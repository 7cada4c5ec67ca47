/*
 * test_fuzz_probe.c — a kernel's supports() and workspace_bytes() asked in a probe process
 * (gg_probe.c): answers, reasons and workspace sizes come back as the kernel gave them, from a
 * problem that arrived whole (group arrays, MoE ids, options, mutant list); a call that crashes,
 * exits or hangs ends only the probe and is answered GG_PROBE_DIED with
 * a message naming the kernel, the function and how, and the next question starts a fresh probe;
 * for every in-tree kernel the generator draws through a probe exactly the cases it draws in
 * process; a probe death lets a drawn case through but ends the capability probe with an error.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/run/gg_run.h"

static void setup(void)
{
    gg_registry_init();
}

TestSuite(fuzz_probe, .init = setup, .timeout = 120);

/* What supports() does by N: 1 segfaults, 2 exits with status 0, 3 never returns, 5 says no
   with a reason made of the whole problem, 64 says yes for a bf16 grouped forward GEMM with f32
   output only (the generator's capability probe asks about N = 64 alone), anything else dies on
   SIGSEGV while off_64_crashes is set and says yes otherwise. workspace_bytes() aborts for N = 6
   and gives the sum of the group lengths plus 1000·split_k otherwise. */
static int off_64_crashes;

static int test_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    switch (p->n) {
    case 1:
        raise(SIGSEGV);
        break;
    case 2:
        _exit(0);
    case 3:
        for (;;)
            pause();
    case 5: {
        int64_t lens = 0;
        for (int64_t g = 0; g < p->groups; g++)
            lens += p->group_lens[g];
        snprintf(why, why_len, "no: groups=%lld lens=%lld end=%lld ids=%d,%d experts=%d "
                 "split_k=%lld mutant=%s", (long long)p->groups, (long long)lens,
                 (long long)p->group_offs[p->groups], p->sorted_ids[0],
                 p->sorted_ids[p->sorted_len - 1], p->expert_ids[p->sorted_len / p->block_m - 1],
                 (long long)gg_kopt_get(p, "split_k", -1), p->mutant);
        return 0;
    }
    case 64:
        if (p->op == GG_OP_GROUPED_FWD && p->a_dtype == GG_DTYPE_BF16 &&
            p->b_dtype == GG_DTYPE_BF16 && p->c_dtype == GG_DTYPE_F32 &&
            p->scaling == GG_SCALING_NONE && p->bias_dtype == GG_DTYPE_NONE)
            return 1;
        snprintf(why, why_len, "fwd bf16 -> f32 only");
        return 0;
    default:
        if (off_64_crashes)
            raise(SIGSEGV);
        return 1;
    }
    return 1;
}

static int always_crashes(const struct gg_problem *p, char *why, size_t why_len)
{
    (void)p, (void)why, (void)why_len;
    raise(SIGSEGV);
    return 1;
}

static size_t test_workspace(const struct gg_problem *p)
{
    if (p->n == 6)
        abort();
    size_t lens = 0;
    for (int64_t g = 0; p->group_lens && g < p->groups; g++)
        lens += (size_t)p->group_lens[g];
    return lens + 1000u * (size_t)gg_kopt_get(p, "split_k", 0);
}

static enum gg_status never_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    (void)p, (void)o;
    snprintf(err, err_len, "never run");
    return GG_E_INTERNAL;
}

static const struct gg_kernel test_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION, .name = "grouped_bf16_probe_test",
    .backend = GG_BACKEND_CPU, .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
    .supports = test_supports, .workspace_bytes = test_workspace, .run = never_run};

/* A MoE-like problem with every array and string set: 3 groups (lens 2, 0, 5), N = n. */
static const int64_t LENS[] = {2, 0, 5}, OFFS[] = {0, 2, 2, 7};
static const int32_t IDS[] = {4, 1, 9, 9, 0, 3, 2, 8};
static const int32_t EXPERTS[] = {0, 2};
static const struct gg_kopt OPTS[] = {{"streams", 2}, {"split_k", 3}};

static struct gg_problem problem(int64_t n)
{
    return (struct gg_problem){.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                               .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_F32,
                               .acc_dtype = GG_DTYPE_F32, .groups = 3, .m = 7, .n = n, .k = 16,
                               .group_lens = LENS, .group_offs = OFFS, .topk = 1, .block_m = 4,
                               .sorted_len = 8, .sorted_ids = IDS, .expert_ids = EXPERTS,
                               .opts = OPTS, .n_opts = 2, .mutant = "skip_k,drop_tail"};
}

static struct gg_probe *open_probe(double limit)
{
    struct gg_probe *pr;
    cr_assert_eq(gg_probe_open(&test_kernel, limit, "--timeout", &pr), GG_OK);
    return pr;
}

Test(fuzz_probe, answers_come_back_from_the_whole_problem)
{
    struct gg_probe *pr = open_probe(10);
    char why[512] = "";
    struct gg_problem p = problem(5);
    cr_expect_eq(gg_probe_ask(pr, &p, NULL, why, sizeof why), GG_PROBE_NO);
    cr_expect_str_eq(why, "no: groups=3 lens=7 end=7 ids=4,8 experts=2 split_k=3 "
                          "mutant=skip_k,drop_tail");
    p = problem(7);
    size_t ws = 0;
    cr_expect_eq(gg_probe_ask(pr, &p, &ws, why, sizeof why), GG_PROBE_YES, "%s", why);
    cr_expect_eq(ws, 3007u);
    /* Without options, arrays or a mutant, and without asking for the workspace. */
    p.opts = NULL, p.n_opts = 0, p.mutant = NULL, p.group_lens = NULL, p.group_offs = NULL;
    p.sorted_ids = p.expert_ids = NULL;
    cr_expect_eq(gg_probe_ask(pr, &p, &ws, why, sizeof why), GG_PROBE_YES, "%s", why);
    cr_expect_eq(ws, 0u);
    cr_expect_eq(gg_probe_ask(pr, &p, NULL, why, sizeof why), GG_PROBE_YES, "%s", why);
    const char *last = NULL;
    cr_expect_eq(gg_probe_deaths(pr, &last), 0);
    cr_expect_str_eq(last, "");
    gg_probe_close(pr);
}

/* Asks about N = n and expects the probe to die with want in the message. */
static void expect_death(struct gg_probe *pr, int64_t n, int want_ws, const char *want)
{
    char why[512] = "";
    struct gg_problem p = problem(n);
    size_t ws;
    cr_expect_eq(gg_probe_ask(pr, &p, want_ws ? &ws : NULL, why, sizeof why), GG_PROBE_DIED,
                 "N=%lld: %s", (long long)n, why);
    cr_expect(strstr(why, want), "N=%lld: expected '%s' in: %s", (long long)n, want, why);
    const char *last;
    gg_probe_deaths(pr, &last);
    cr_expect_str_eq(last, why);
    /* A fresh probe answers the next question. */
    p = problem(7);
    cr_expect_eq(gg_probe_ask(pr, &p, NULL, why, sizeof why), GG_PROBE_YES, "%s", why);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(fuzz_probe, a_crash_exit_or_hang_ends_only_the_probe)
{
    struct gg_probe *pr = open_probe(0.5);
    expect_death(pr, 1, 0, "kernel grouped_bf16_probe_test, asked in a probe process: "
                           "supports() died on signal 11 (Segmentation fault)");
    expect_death(pr, 2, 1, "supports() ended the process (exit status 0)");
    expect_death(pr, 6, 1, "workspace_bytes() died on signal 6 (Aborted)");
    double t0 = now_s();
    expect_death(pr, 3, 0, "supports() did not return within 0.5 s (--timeout)");
    cr_expect_lt(now_s() - t0, 5.0);
    cr_expect_eq(gg_probe_deaths(pr, NULL), 4);
    gg_probe_close(pr);
}

/* Every case of the first draws (generated and mutated) of kernel k, with and without a
   probe, as text. */
static void expect_same_draws(const struct gg_kernel *k)
{
    struct gg_probe *pr;
    cr_assert_eq(gg_probe_open(k, 10, "--timeout", &pr), GG_OK);
    struct gg_gen_config cfg[2] = {
        {.kernel = k, .mutant = k->mutants ? k->mutants[0] : "", .max_host_bytes = 1 << 30},
        {.kernel = k, .mutant = k->mutants ? k->mutants[0] : "", .max_host_bytes = 1 << 30,
         .probe = pr}};
    struct gg_gen_caps *caps[2];
    char err[512];
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(gg_gen_caps_probe(&cfg[i], &caps[i], err, sizeof err), GG_OK, "%s: %s",
                     k->name, err);
        cfg[i].caps = caps[i];
    }
    for (uint64_t n = 0; n < 12; n++) {
        char *text[2];
        struct gg_case c[2];
        for (int i = 0; i < 2; i++) {
            cr_assert_eq(gg_generate(&cfg[i], 5, n, &c[i], err, sizeof err), GG_OK, "%s", err);
            if (n % 2) { /* a mutation of the generated case */
                struct gg_case parent = c[i];
                cr_assert_eq(gg_mutate(&cfg[i], &parent, 5, n, &c[i], err, sizeof err), GG_OK,
                             "%s", err);
                gg_case_free(&parent);
            }
            cr_assert_eq(gg_case_format(&c[i], 0, &text[i]), GG_OK);
            gg_case_free(&c[i]);
        }
        cr_expect_str_eq(text[1], text[0], "%s, case %llu", k->name, (unsigned long long)n);
        free(text[0]);
        free(text[1]);
    }
    cr_expect_eq(gg_probe_deaths(pr, NULL), 0, "%s", k->name);
    for (int i = 0; i < 2; i++)
        gg_gen_caps_free(caps[i]);
    gg_probe_close(pr);
}

Test(fuzz_probe, the_generator_draws_the_same_cases_through_a_probe)
{
    for (size_t i = 0; i < gg_registry_count(); i++)
        if (gg_registry_at(i)->backend == GG_BACKEND_CPU)
            expect_same_draws(gg_registry_at(i));
}

Test(fuzz_probe, a_death_admits_a_drawn_case_but_ends_the_capability_probe)
{
    /* Drawn cases whose N is not 64 kill the probe (a fork: it sees the flag as it was then):
       each is let through as drawn. */
    off_64_crashes = 1;
    struct gg_probe *pr = open_probe(10);
    struct gg_gen_config cfg = {.kernel = &test_kernel, .max_host_bytes = 1 << 30, .probe = pr};
    struct gg_gen_caps *caps;
    char err[512] = "";
    cr_assert_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_OK, "%s", err);
    cfg.caps = caps;
    int64_t deaths = 0;
    for (uint64_t n = 0; n < 4; n++) {
        struct gg_case c;
        cr_assert_eq(gg_generate(&cfg, 9, n, &c, err, sizeof err), GG_OK, "%s", err);
        deaths += c.n != 64;
        cr_expect_eq(gg_probe_deaths(pr, NULL), deaths);
        gg_case_free(&c);
    }
    cr_expect_gt(deaths, 0);
    off_64_crashes = 0;
    gg_gen_caps_free(caps);
    gg_probe_close(pr);
    /* A kernel whose supports() dies on the first probe problem ends the probing there. */
    struct gg_kernel always = test_kernel;
    always.supports = always_crashes;
    cr_assert_eq(gg_probe_open(&always, 10, "--timeout", &pr), GG_OK);
    cfg = (struct gg_gen_config){.kernel = &always, .max_host_bytes = 1 << 30, .probe = pr};
    cr_expect_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_E_ABI, "%s", err);
    cr_expect_null(caps);
    cr_expect_str_eq(err, "generator: probing grouped_fwd a=bf16 b=bf16 c=bf16 scaling none: "
                          "kernel grouped_bf16_probe_test, asked in a probe process: supports() "
                          "died on signal 11 (Segmentation fault)");
    cr_expect_eq(gg_probe_deaths(pr, NULL), 1);
    /* Without a capability table, a draw probes and fails the same way. */
    struct gg_case c;
    cr_expect_eq(gg_generate(&cfg, 9, 0, &c, err, sizeof err), GG_E_ABI);
    gg_case_free(&c);
    gg_probe_close(pr);
}

/*
 * test_fuzz_generate.c — campaign case generation: draws are pure functions of (config, seed,
 * case number); every case parses back from its canonical text, passes gg_case_check, is
 * supported by the kernel and fits the memory bound, for every in-tree kernel; each targeted
 * class produces its signature shapes; special codes reach one targeted case in five; the
 * uniform baseline stays untargeted; mutations are
 * valid and different; features separate residue classes and are stable; and a short smoke
 * run of generated cases against every kernel and mutant completes without harness errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"
#include "fuzz/gen/gg_gen.h"

#define MAX_BYTES ((int64_t)1 << 30)

static void setup(void)
{
    gg_registry_init();
}

TestSuite(fuzz_generate, .init = setup, .timeout = 120);

/* A configuration with the capabilities of kernel probed once; free with caps_done(). */
static struct gg_gen_config config(const char *kernel, const char *mutant, unsigned faults,
                                   enum gg_strategy strategy)
{
    const struct gg_kernel *k = gg_registry_find(kernel);
    cr_assert_not_null(k, "no kernel %s", kernel);
    struct gg_gen_config cfg = {.kernel = k, .mutant = mutant, .faults = faults,
                                .strategy = strategy, .max_host_bytes = MAX_BYTES};
    struct gg_gen_caps *caps;
    char err[256];
    cr_assert_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_OK, "%s", err);
    cfg.caps = caps;
    return cfg;
}

static void caps_done(struct gg_gen_config *cfg)
{
    gg_gen_caps_free((struct gg_gen_caps *)cfg->caps);
    cfg->caps = NULL;
}

static void generate(const struct gg_gen_config *cfg, uint64_t seed, uint64_t i, struct gg_case *c)
{
    char err[512];
    cr_assert_eq(gg_generate(cfg, seed, i, c, err, sizeof err), GG_OK, "case %llu: %s",
                 (unsigned long long)i, err);
}

/* Canonical identity text (freed by the caller). */
static char *text_of(const struct gg_case *c)
{
    char *t = NULL;
    cr_assert_eq(gg_case_format(c, 0, &t), GG_OK);
    return t;
}

/* The case as the runner sees it: parses back to the same text, passes the checks, the kernel
   supports it and it fits the bound. */
static void expect_valid(const struct gg_gen_config *cfg, const struct gg_case *c)
{
    char err[512], *text = text_of(c);
    struct gg_case back;
    cr_assert_eq(gg_case_parse(text, strlen(text), "generated", &back, err, sizeof err), GG_OK,
                 "%s\n%s", err, text);
    char *again = text_of(&back);
    cr_expect_str_eq(again, text);
    cr_expect_eq(gg_case_check(&back, err, sizeof err), GG_OK, "%s\n%s", err, text);
    struct gg_tensors t;
    cr_assert_eq(gg_tensors_plan(&back, &t, err, sizeof err), GG_OK, "%s\n%s", err, text);
    char why[256] = "";
    cr_expect(cfg->kernel->supports(&t.p, why, sizeof why), "%s: %s\n%s", cfg->kernel->name, why,
              text);
    gg_tensors_free(&t);
    int64_t bytes = gg_case_mem_estimate(&back);
    cr_expect(bytes > 0 && bytes <= cfg->max_host_bytes, "estimate %lld bytes\n%s",
              (long long)bytes, text);
    cr_expect_str_eq(back.kernel, cfg->kernel->name);
    cr_expect_str_eq(back.mutant, cfg->mutant ? cfg->mutant : "");
    free(again);
    free(text);
    gg_case_free(&back);
}

Test(fuzz_generate, faults_parse)
{
    cr_expect_eq(gg_faults_parse("snr,i64,zero,alias"), GG_FAULTS_ALL);
    cr_expect_eq(gg_faults_parse("all"), GG_FAULTS_ALL);
    cr_expect_eq(gg_faults_parse("zero"), GG_FAULTS_ZERO);
    cr_expect_eq(gg_faults_parse("alias,snr"), GG_FAULTS_ALIAS | GG_FAULTS_SNR);
    cr_expect_eq(gg_faults_parse("i64"), GG_FAULTS_I64);
    cr_expect_eq(gg_faults_parse(""), 0u);
    cr_expect_eq(gg_faults_parse(NULL), 0u);
    cr_expect_eq(gg_faults_parse("snr,,zero"), 0u);
    cr_expect_eq(gg_faults_parse("zero,"), 0u);
    cr_expect_eq(gg_faults_parse("nan"), 0u);
    cr_expect_eq(gg_faults_parse("SNR"), 0u);
}

Test(fuzz_generate, draws_are_pure_functions_of_seed_and_number)
{
    static const char *const kernels[] = {"grouped_bf16_cpu_tiled", "moe_mx_e4m3_cpu_sorted",
                                          "batched_a8w8_cpu_tiled"};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        struct gg_gen_config cfg = config(kernels[k], "", 0, GG_STRATEGY_TARGETED);
        /* Without the probed table, the same cases. */
        struct gg_gen_config bare = cfg;
        bare.caps = NULL;
        enum { N = 40 };
        char *texts[N];
        int distinct = 0;
        for (int i = 0; i < N; i++) {
            struct gg_case a, b, d;
            generate(&cfg, 1234, (uint64_t)i, &a);
            generate(i < 4 ? &bare : &cfg, 1234, (uint64_t)i, &b);
            generate(&cfg, 1235, (uint64_t)i, &d);
            texts[i] = text_of(&a);
            char *tb = text_of(&b), *td = text_of(&d);
            cr_expect_str_eq(texts[i], tb, "case %d differs between two draws", i);
            cr_expect_str_neq(texts[i], td, "case %d: seeds 1234 and 1235 agree", i);
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = strcmp(texts[i], texts[j]) == 0;
            distinct += !seen;
            free(tb);
            free(td);
            gg_case_free(&a);
            gg_case_free(&b);
            gg_case_free(&d);
        }
        cr_expect_geq(distinct, N - 1, "%s: only %d distinct cases of %d", kernels[k], distinct,
                      N);
        for (int i = 0; i < N; i++)
            free(texts[i]);
        caps_done(&cfg);
    }
}

Test(fuzz_generate, every_case_is_valid_for_every_in_tree_kernel)
{
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (k->backend != GG_BACKEND_CPU)
            continue;
        for (int strategy = 0; strategy < 2; strategy++) {
            struct gg_gen_config cfg = config(k->name, k->mutants ? k->mutants[0] : "", 0,
                                              (enum gg_strategy)strategy);
            for (uint64_t n = 0; n < (strategy ? 10u : 40u); n++) {
                struct gg_case c;
                generate(&cfg, 77, n, &c);
                expect_valid(&cfg, &c);
                gg_case_free(&c);
            }
            caps_done(&cfg);
        }
    }
}

Test(fuzz_generate, a_mutant_the_kernel_lacks_is_refused)
{
    const struct gg_kernel *k = gg_registry_find("grouped_bf16_cpu_tiled");
    struct gg_gen_config cfg = {.kernel = k, .mutant = "no_such_mutant"};
    struct gg_case c;
    char err[256] = "";
    cr_expect_eq(gg_generate(&cfg, 1, 0, &c, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "no_such_mutant") != NULL, "%s", err);
    gg_case_free(&c);
}

/* A list of the kernel's mutants is written into every case; a list with an item the kernel
   lacks, an empty or a repeated item is refused naming it. */
Test(fuzz_generate, a_mutant_list_is_checked_item_by_item)
{
    const struct gg_kernel *k = gg_registry_find("grouped_bf16_cpu_tiled");
    struct gg_gen_config cfg = {.kernel = k, .mutant = "wgrad_zero_uninit,tail_rows_unwritten"};
    struct gg_case c;
    char err[256] = "";
    cr_assert_eq(gg_generate(&cfg, 1, 0, &c, err, sizeof err), GG_OK, "%s", err);
    cr_expect_str_eq(c.mutant, "wgrad_zero_uninit,tail_rows_unwritten");
    gg_case_free(&c);
    static const char *const bad[][2] = {
        {"wgrad_zero_uninit,no_such_mutant", "has no mutant 'no_such_mutant'"},
        {"wgrad_zero_uninit,", "item 2 is empty"},
        {"tail_rows_unwritten,tail_rows_unwritten", "'tail_rows_unwritten' appears twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.mutant = bad[i][0];
        cr_expect_eq(gg_generate(&cfg, 1, 0, &c, err, sizeof err), GG_E_INVAL, "%s", bad[i][0]);
        cr_expect(strstr(err, bad[i][1]) && strstr(err, "grouped_bf16_cpu_tiled"), "%s", err);
        gg_case_free(&c);
    }
}

static int refuse_all(const struct gg_problem *p, char *why, size_t len)
{
    (void)p;
    snprintf(why, len, "refuses everything");
    return 0;
}

Test(fuzz_generate, a_kernel_that_supports_nothing_gets_no_case)
{
    const struct gg_kernel k = {.abi_version = GG_KERNEL_ABI_VERSION,
                                .name = "test_refusing_cpu",
                                .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_DENSE),
                                .supports = refuse_all};
    struct gg_gen_config cfg = {.kernel = &k};
    struct gg_gen_caps *caps = NULL;
    struct gg_case c;
    char err[256] = "";
    cr_expect_eq(gg_generate(&cfg, 1, 0, &c, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect(strstr(err, "test_refusing_cpu") != NULL, "%s", err);
    cr_expect_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect_null(caps);
    gg_case_free(&c);
}

/* Dense bf16 with M a multiple of 16 (as cuBLASLt's blockwise FP8 GEMM wants). */
static int m_multiple_of_16(const struct gg_problem *p, char *why, size_t len)
{
    if (p->op != GG_OP_DENSE || p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16 ||
        p->c_dtype != GG_DTYPE_BF16 || p->bias_dtype != GG_DTYPE_NONE || p->m % 16) {
        snprintf(why, len, "dense bf16, M a multiple of 16");
        return 0;
    }
    return 1;
}

Test(fuzz_generate, a_kernel_that_wants_m_aligned_gets_aligned_cases)
{
    const struct gg_kernel k = {.abi_version = GG_KERNEL_ABI_VERSION,
                                .name = "test_m16_cpu",
                                .ops = GG_OP_BIT(GG_OP_DENSE),
                                .supports = m_multiple_of_16};
    struct gg_gen_config cfg = {.kernel = &k, .max_host_bytes = MAX_BYTES};
    struct gg_gen_caps *caps = NULL;
    char err[256] = "";
    cr_assert_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_OK, "%s", err);
    cfg.caps = caps;
    int nonzero = 0;
    for (uint64_t i = 0; i < 200; i++) {
        struct gg_case c;
        cr_assert_eq(gg_generate(&cfg, 7, i, &c, err, sizeof err), GG_OK, "case %llu: %s",
                     (unsigned long long)i, err);
        cr_expect_eq(c.m % 16, 0, "case %llu: M = %lld", (unsigned long long)i, (long long)c.m);
        nonzero += c.m > 0;
        gg_case_free(&c);
    }
    cr_expect_gt(nonzero, 100, "only %d of 200 cases have rows", nonzero);
    gg_gen_caps_free(caps);
}

/* Group sizes of an expanded grouped case. */
static int64_t count_empty(const struct gg_case *c)
{
    int64_t n = 0;
    for (int64_t g = 0; g < c->groups; g++)
        n += c->lens[g] == 0;
    return n;
}

Test(fuzz_generate, zero_class_signature_shapes)
{
    struct gg_gen_config cfg = config("grouped_bf16_cpu_tiled", "", GG_FAULTS_ZERO,
                                      GG_STRATEGY_TARGETED);
    int first = 0, last = 0, all = 0, wgrad = 0, single = 0, zero_k = 0, many_wgrad = 0;
    for (uint64_t n = 0; n < 300; n++) {
        struct gg_case c;
        generate(&cfg, 5, n, &c);
        int64_t empty = count_empty(&c);
        first += c.groups > 1 && c.lens[0] == 0 && empty < c.groups;
        last += c.groups > 1 && c.lens[c.groups - 1] == 0 && empty < c.groups;
        all += c.groups > 0 && empty == c.groups;
        wgrad += c.op == GG_OP_GROUPED_WGRAD && empty > 0;
        single += c.groups >= 64 && empty == c.groups - 1;
        zero_k += c.k == 0 || c.n == 0;
        /* a wgrad of many groups writes groups x N x K: N and K stay small there */
        if (c.op == GG_OP_GROUPED_WGRAD && c.groups >= 17) {
            many_wgrad++;
            cr_expect_leq(c.groups * c.n * c.k, (int64_t)1 << 22, "case %llu: %lld x %lld x %lld",
                          (unsigned long long)n, (long long)c.groups, (long long)c.n,
                          (long long)c.k);
        }
        gg_case_free(&c);
    }
    cr_expect_gt(many_wgrad, 0, "no wgrad case with many groups");
    cr_expect_gt(first, 0, "no case with an empty first group");
    cr_expect_gt(last, 0, "no case with an empty last group");
    cr_expect_gt(all, 0, "no case with every group empty");
    cr_expect_gt(wgrad, 0, "no wgrad case with an empty group");
    cr_expect_gt(single, 0, "no case with one non-empty group among many");
    cr_expect_gt(zero_k, 0, "no case with N or K equal to 0");
    caps_done(&cfg);
}

Test(fuzz_generate, i64_class_crosses_2_pow_31)
{
    struct gg_gen_config cfg = config("grouped_bf16_cpu_tiled", "", GG_FAULTS_I64,
                                      GG_STRATEGY_TARGETED);
    const int64_t limit = (int64_t)1 << 31;
    int weights = 0, rows = 0, sparse = 0;
    for (uint64_t n = 0; n < 120; n++) {
        struct gg_case c;
        generate(&cfg, 9, n, &c);
        int64_t last = -1;
        for (int64_t g = 0; g < c.groups; g++)
            if (c.lens[g] > 0)
                last = g;
        int64_t stride = c.stride_b ? c.stride_b : c.n * (c.ldb ? c.ldb : c.k);
        int fwd = c.op != GG_OP_GROUPED_WGRAD;
        weights += fwd && last >= 0 && last * stride >= limit;
        int64_t ld = c.lda ? c.lda : c.ldb;
        rows += last >= 0 && c.offs[last] * ld >= limit;
        sparse += c.groups - count_empty(&c) <= 4;
        expect_valid(&cfg, &c);
        gg_case_free(&c);
    }
    cr_expect_gt(weights, 0, "no case whose weight offset crosses 2^31 elements");
    cr_expect_gt(rows, 0, "no case whose row offset m_start*ld crosses 2^31 elements");
    cr_expect_gt(sparse, 60, "only %d of 120 cases have few groups with tokens", sparse);
    caps_done(&cfg);
}

/* Value of option key in c, or dflt. */
static int64_t opt_of(const struct gg_case *c, const char *key, int64_t dflt)
{
    for (int i = 0; i < c->n_opts; i++)
        if (strcmp(c->opt_key[i], key) == 0)
            return c->opt_value[i];
    return dflt;
}

Test(fuzz_generate, alias_class_uses_split_k_streams_and_workers)
{
    static const struct {
        const char *kernel, *key;
    } cases[] = {{"grouped_bf16_cpu_tiled", "split_k"},
                 {"grouped_bf16_cpu_streams", "streams"},
                 {"grouped_fp8_cpu_persistent", "workers"},
                 {"batched_bf16_cpu_tiled", "split_k"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gg_gen_config cfg = config(cases[k].kernel, "", GG_FAULTS_ALIAS,
                                          GG_STRATEGY_TARGETED);
        int split = 0, with_key = 0;
        for (uint64_t n = 0; n < 60; n++) {
            struct gg_case c;
            generate(&cfg, 11, n, &c);
            split += opt_of(&c, "split_k", 1) > 1;
            with_key += opt_of(&c, cases[k].key, 1) > 1;
            gg_case_free(&c);
        }
        cr_expect_gt(split, 20, "%s: split_k > 1 in only %d of 60 cases", cases[k].kernel, split);
        cr_expect_gt(with_key, 10, "%s: %s > 1 in only %d of 60 cases", cases[k].kernel,
                     cases[k].key, with_key);
        caps_done(&cfg);
    }
    /* A kernel without options gets none. */
    struct gg_gen_config cfg = config("moe_mx_e4m3_cpu_sorted", "", GG_FAULTS_ALIAS,
                                      GG_STRATEGY_TARGETED);
    for (uint64_t n = 0; n < 20; n++) {
        struct gg_case c;
        generate(&cfg, 11, n, &c);
        cr_expect_eq(c.n_opts, 0);
        gg_case_free(&c);
    }
    caps_done(&cfg);
}

Test(fuzz_generate, uniform_baseline_is_untargeted)
{
    struct gg_gen_config cfg = config("grouped_bf16_cpu_tiled", "", 0, GG_STRATEGY_UNIFORM);
    int64_t groups = 0, empty = 0, codes = 0, layouts = 0;
    for (uint64_t n = 0; n < 300; n++) {
        struct gg_case c;
        generate(&cfg, 3, n, &c);
        cr_expect(c.groups >= 1 && c.groups <= 16, "groups %lld", (long long)c.groups);
        for (int64_t g = 0; g < c.groups; g++)
            cr_expect(c.lens[g] >= 0 && c.lens[g] <= 512);
        cr_expect(c.n >= 1 && c.n <= 2048 && c.k >= 1 && c.k <= 2048);
        /* Layouts uniform too: up to 256 elements past packed, offsets up to 63. */
        int64_t row_a = c.op == GG_OP_GROUPED_FWD ? c.k : c.n;
        int64_t row_c = c.op == GG_OP_GROUPED_FWD ? c.n : c.k;
        cr_expect(c.lda == 0 || (c.lda > row_a && c.lda <= row_a + 256), "lda %lld",
                  (long long)c.lda);
        cr_expect(c.ldb == 0 || (c.ldb > c.k && c.ldb <= c.k + 256), "ldb %lld",
                  (long long)c.ldb);
        cr_expect(c.ldc == 0 || (c.ldc > row_c && c.ldc <= row_c + 256), "ldc %lld",
                  (long long)c.ldc);
        cr_expect(c.off_a <= 63 && c.off_b <= 63 && c.off_c <= 63);
        layouts += c.lda || c.ldb || c.ldc || c.stride_b || c.stride_c || c.off_a || c.off_b ||
                   c.off_c;
        cr_expect(c.dist_a.kind == GG_DIST_NORMAL || c.dist_a.kind == GG_DIST_UNIFORM ||
                  (c.dist_a.kind == GG_DIST_CODES && c.dist_b.kind == GG_DIST_CODES));
        codes += c.dist_a.kind == GG_DIST_CODES;
        cr_expect_eq(c.plant_e8m0, 0.0);
        groups += c.groups;
        empty += count_empty(&c);
        gg_case_free(&c);
    }
    /* Each size is uniform in 0..512: an empty group has probability 1/513. Over about 2500
       groups that is about 5; 20 would be a 1e-6 event. */
    cr_expect_lt(empty, 20, "%lld empty groups of %lld", (long long)empty, (long long)groups);
    /* Special codes in one case in ten (300 cases: 30 expected). */
    cr_expect(codes >= 12 && codes <= 55, "%lld cases with codes", (long long)codes);
    /* Half the cases keep every layout packed. */
    cr_expect(layouts >= 110 && layouts <= 170, "%lld cases with a layout set",
              (long long)layouts);
    caps_done(&cfg);
    /* MX recipes keep K a multiple of 32. */
    cfg = config("mx_e4m3_cpu_grouped", "", 0, GG_STRATEGY_UNIFORM);
    for (uint64_t n = 0; n < 30; n++) {
        struct gg_case c;
        generate(&cfg, 3, n, &c);
        cr_expect_eq(c.k % 32, 0);
        gg_case_free(&c);
    }
    caps_done(&cfg);
}

/* One targeted case in five carries special codes in both inputs with saturation off, for
   every format a kernel takes (fp8 with tensor scales, MX e4m3 and e2m1, bf16), about 0.5 to 6
   per reduction vector; none without the snr class, and none over planted E8M0 scales. Codes
   under an MX recipe never saturate (gen_fit_data). */
Test(fuzz_generate, special_codes_aimed_at_the_nan_class)
{
    static const char *const kernels[] = {"grouped_fp8_cpu_tiled", "batched_afp4wfp4_cpu_tiled",
                                          "mx_e4m3_cpu_grouped", "grouped_bf16_cpu_tiled",
                                          "batched_a16wfp4_cpu_tiled"};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        struct gg_gen_config cfg = config(kernels[k], "", 0, GG_STRATEGY_TARGETED);
        int codes = 0, formats = 0;
        unsigned seen = 0;
        enum { N = 400 };
        for (uint64_t n = 0; n < N; n++) {
            struct gg_case c;
            generate(&cfg, 21, n, &c);
            int mx = c.scaling == GG_SCALING_MX || c.scaling == GG_SCALING_MX_B;
            if (mx && (c.dist_a.kind == GG_DIST_CODES || c.dist_b.kind == GG_DIST_CODES))
                cr_expect_eq(c.quant_sat, GG_SAT_NONE, "%s: codes under MX saturate",
                             kernels[k]);
            if (c.dist_a.kind == GG_DIST_CODES && c.dist_b.kind == GG_DIST_CODES &&
                c.quant_sat == GG_SAT_NONE) {
                codes++;
                seen |= 1u << c.a_dtype | 1u << c.b_dtype;
                cr_expect_eq(c.plant_e8m0, 0.0);
                int64_t red = c.op == GG_OP_GROUPED_DGRAD ? c.n : c.k;
                double per_vector = c.dist_a.p[0] * (double)red;
                cr_expect(c.op == GG_OP_GROUPED_WGRAD || (per_vector > 0.1 && per_vector < 12) ||
                              c.dist_a.p[0] == 0.5 || c.dist_a.p[0] == 1e-5,
                          "%s: codes(%g) over a reduction of %lld", kernels[k], c.dist_a.p[0],
                          (long long)red);
            }
            gg_case_free(&c);
        }
        for (unsigned t = 0; t < 32; t++)
            formats += (seen >> t) & 1u;
        cr_expect(codes > N / 10 && codes < N / 3, "%s: %d cases with codes of %d", kernels[k],
                  codes, N);
        cr_expect_geq(formats, k == 0 ? 3 : 1, "%s: codes in %d input formats", kernels[k],
                      formats);
        caps_done(&cfg);
    }
    struct gg_gen_config cfg = config("grouped_fp8_cpu_tiled", "", GG_FAULTS_I64 | GG_FAULTS_ZERO,
                                      GG_STRATEGY_TARGETED);
    for (uint64_t n = 0; n < 60; n++) {
        struct gg_case c;
        generate(&cfg, 21, n, &c);
        cr_expect_neq(c.dist_a.kind, GG_DIST_CODES);
        gg_case_free(&c);
    }
    caps_done(&cfg);
}

/* A kernel that takes unscaled fp8 codes only (dense, f32 out). */
static int unscaled_fp8_only(const struct gg_problem *p, char *why, size_t len)
{
    int ok = p->op == GG_OP_DENSE && p->scaling == GG_SCALING_NONE &&
             gg_dtype_is_float8(p->a_dtype) && gg_dtype_is_float8(p->b_dtype) &&
             p->c_dtype == GG_DTYPE_F32 && p->bias_dtype == GG_DTYPE_NONE;
    if (!ok)
        snprintf(why, len, "unscaled fp8 dense only");
    return ok;
}

/* Unscaled fp8 is on the probe menu: such a kernel gets cases, and codes reach it as Inf and
   NaN codes. */
Test(fuzz_generate, unscaled_fp8_kernels_get_special_codes)
{
    const struct gg_kernel k = {.abi_version = GG_KERNEL_ABI_VERSION,
                                .name = "test_unscaled_fp8_cpu",
                                .ops = GG_OP_BIT(GG_OP_DENSE),
                                .supports = unscaled_fp8_only};
    struct gg_gen_config cfg = {.kernel = &k, .strategy = GG_STRATEGY_TARGETED,
                                .max_host_bytes = MAX_BYTES};
    int codes = 0, e5m2 = 0;
    for (uint64_t n = 0; n < 100; n++) {
        struct gg_case c;
        generate(&cfg, 5, n, &c);
        cr_expect_eq(c.scaling, GG_SCALING_NONE);
        cr_expect(gg_dtype_is_float8(c.a_dtype) && gg_dtype_is_float8(c.b_dtype));
        codes += c.dist_a.kind == GG_DIST_CODES && c.quant_sat == GG_SAT_NONE;
        e5m2 += c.a_dtype == GG_DTYPE_E5M2 || c.b_dtype == GG_DTYPE_E5M2;
        gg_case_free(&c);
    }
    cr_expect_gt(codes, 5, "%d cases with codes", codes);
    cr_expect_gt(e5m2, 10, "%d cases with an e5m2 input", e5m2);
}

static struct gg_case load(const char *name)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/corpus/mutants/%s", GG_SOURCE_DIR, name);
    struct gg_case c;
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
    return c;
}

Test(fuzz_generate, mutations_are_valid_and_different)
{
    static const struct {
        const char *file, *kernel, *mutant;
    } parents[] = {{"zero_len_ptr_skip.case", "grouped_bf16_cpu_serial", "zero_len_ptr_skip"},
                   {"sorted_ids_padding.case", "moe_mx_e4m3_cpu_sorted", ""},
                   {"n_tail.case", "batched_bf16_cpu_tiled", "n_tail"},
                   {"fnuz_as_ocp.case", "grouped_fp8_cpu_persistent", ""}};
    for (size_t p = 0; p < sizeof parents / sizeof parents[0]; p++) {
        struct gg_case parent = load(parents[p].file);
        struct gg_gen_config cfg = config(parents[p].kernel, parents[p].mutant, 0,
                                          GG_STRATEGY_TARGETED);
        char *ptext = text_of(&parent), err[512];
        int same_shape = 0;
        for (uint64_t n = 0; n < 30; n++) {
            struct gg_case c, again;
            cr_assert_eq(gg_mutate(&cfg, &parent, 21, n, &c, err, sizeof err), GG_OK, "%s", err);
            cr_assert_eq(gg_mutate(&cfg, &parent, 21, n, &again, err, sizeof err), GG_OK, "%s",
                         err);
            char *t = text_of(&c), *ta = text_of(&again);
            cr_expect_str_neq(t, ptext, "mutation %llu equals its parent",
                              (unsigned long long)n);
            cr_expect_str_eq(t, ta, "mutation %llu is not reproducible", (unsigned long long)n);
            cr_expect_eq(c.n_meta, 0, "metadata of the parent kept");
            same_shape += c.op == parent.op && c.a_dtype == parent.a_dtype;
            expect_valid(&cfg, &c);
            free(t);
            free(ta);
            gg_case_free(&c);
            gg_case_free(&again);
        }
        /* A mutation is a small edit: most keep the parent's op and types. */
        cr_expect_gt(same_shape, 20, "%s: only %d of 30 mutations keep the parent's shape",
                     parents[p].file, same_shape);
        free(ptext);
        gg_case_free(&parent);
        caps_done(&cfg);
    }
}

/* 1 when feature sets a and b are equal. */
static int same_features(const struct gg_features *a, const struct gg_features *b)
{
    return a->n == b->n && memcmp(a->v, b->v, (size_t)a->n * sizeof a->v[0]) == 0;
}

static struct gg_case parse(const char *text)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", &c, err, sizeof err), GG_OK, "%s", err);
    return c;
}

#define HEAD \
    "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n" \
    "dtypes a=bf16 b=bf16 c=bf16\nscaling none\nseed 5\n"

Test(fuzz_generate, features_separate_residue_classes_and_are_stable)
{
    const struct gg_kernel *k = gg_registry_find("grouped_bf16_cpu_tiled");
    static const char *const texts[] = {
        HEAD "groups 2\ngroup_lens 64 64\nn 64\nk 256\n",   /* aligned everywhere */
        HEAD "groups 2\ngroup_lens 64 64\nn 65\nk 256\n",   /* N tail */
        HEAD "groups 2\ngroup_lens 64 64\nn 64\nk 255\n",   /* K tail */
        HEAD "groups 2\ngroup_lens 64 1\nn 64\nk 256\n",    /* a group of one row */
        HEAD "groups 2\ngroup_lens 0 64\nn 64\nk 256\n",    /* empty first group */
        HEAD "options split_k=2\ngroups 2\ngroup_lens 64 64\nn 64\nk 256\n",
        HEAD "groups 3\ngroup_lens 0*2 64\nn 64\nk 256\nstride b=1073741824\n",
    };
    enum { N = sizeof texts / sizeof texts[0] };
    struct gg_features f[N];
    for (int i = 0; i < N; i++) {
        struct gg_case c = parse(texts[i]), d = parse(texts[i]);
        struct gg_features again;
        gg_case_features(&c, k, NULL, &f[i]);
        gg_case_features(&d, k, NULL, &again);
        cr_expect(same_features(&f[i], &again), "features of case %d are not stable", i);
        cr_expect_gt(f[i].n, 5);
        for (int j = 1; j < f[i].n; j++)
            cr_expect_lt(f[i].v[j - 1], f[i].v[j], "features not sorted and unique");
        cr_expect(f[i].snr_margin_db == INFINITY, "no run: no margin");
        /* The same case with a mutant has the same features. */
        snprintf(c.mutant, sizeof c.mutant, "tail_rows_unwritten");
        gg_case_features(&c, k, NULL, &again);
        cr_expect(same_features(&f[i], &again), "features of case %d depend on the mutant", i);
        gg_case_free(&c);
        gg_case_free(&d);
    }
    for (int i = 1; i < N; i++)
        cr_expect(!same_features(&f[0], &f[i]), "case %d has the features of case 0", i);
    cr_expect_lt(f[0].offset_bits, 20);
    /* Expert 2 of W at 2^31 elements (2^32 bytes) plus its N·K block. */
    cr_expect_eq(f[N - 1].offset_bits, 33);
}

Test(fuzz_generate, features_margins_come_from_the_run)
{
    const struct gg_kernel *k = gg_registry_find("grouped_bf16_cpu_tiled");
    struct gg_case c = parse(HEAD "groups 2\ngroup_lens 30 70\nn 64\nk 128\n");
    struct gg_run_result r;
    char err[512];
    cr_assert_eq(gg_run_case(&c, NULL, &r, err, sizeof err), GG_OK, "%s", err);
    struct gg_features f;
    gg_case_features(&c, k, &r, &f);
    cr_expect_float_eq(f.snr_margin_db, r.verdict.worst_snr_db - r.verdict.snr_fail_db, 1e-9);
    cr_expect_gt(f.snr_margin_db, 0.0);
    gg_run_result_free(&r);
    gg_case_free(&c);
}

/*
 * Smoke: one targeted case against every in-tree kernel without a mutant and with each of its
 * mutants, each in its own process, the fault class turning from one run to the next: every
 * one runs to a verdict (GG_OK) without a harness error. No assertion on finding rates here.
 */
Test(fuzz_generate, generated_cases_run_on_every_kernel_and_mutant, .timeout = 300)
{
    unsigned turn = 0;
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (k->backend != GG_BACKEND_CPU)
            continue;
        for (int m = -1; m < 0 || (k->mutants != NULL && k->mutants[m] != NULL); m++) {
            const char *mutant = m < 0 ? "" : k->mutants[m];
            struct gg_gen_config cfg = config(k->name, mutant, 1u << (turn++ % 4),
                                              GG_STRATEGY_TARGETED);
            struct gg_case c;
            generate(&cfg, 2024, i, &c);
            struct gg_run_result r;
            struct gg_run_opts o = {.max_mem_bytes = MAX_BYTES};
            char err[512], *text = text_of(&c);
            cr_expect_eq(gg_run_case_isolated(&c, &o, 120, &r, err, sizeof err), GG_OK,
                         "%s/%s: %s\n%s", k->name, mutant, err, text);
            gg_run_result_free(&r);
            free(text);
            gg_case_free(&c);
            caps_done(&cfg);
        }
    }
}

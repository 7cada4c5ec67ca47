/*
 * test_fuzz_determinism.c — two runs of a kernel are compared as values: NaNs of any sign and
 * payload are one value in every output format (IEEE 754 leaves a NaN result's sign and payload
 * open), while a changed finite value, and an element written in one run and left at the
 * sentinel in the other, are still differences. First the comparison itself, format by format,
 * then the runner with a test kernel that changes its NaNs, a value or a write between runs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"

/* Element i of an n-element buffer of dtype t set to code (f64: the raw 64-bit pattern). */
static void put(enum gg_dtype t, uint8_t *buf, int64_t i, uint64_t code)
{
    if (t == GG_DTYPE_F64)
        memcpy(buf + 8 * i, &code, 8);
    else
        gg_store_code(t, buf, i, (uint32_t)code);
}

/* NaN codes of each format that a kernel may write (several signs and payloads), a value, and a
   second value. */
static const struct nan_codes {
    enum gg_dtype t;
    uint64_t nans[4];
    int n_nans;
    uint64_t one, two;
} FORMATS[] = {
    {GG_DTYPE_BF16, {0x7FC0, 0xFFC0, 0x7FC1, 0xFF81}, 4, 0x3F80, 0x4000},
    {GG_DTYPE_F16, {0x7E00, 0xFE00, 0x7E01, 0xFC01}, 4, 0x3C00, 0x4000},
    {GG_DTYPE_F32, {0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFF800001}, 4, 0x3F800000, 0x40000000},
    {GG_DTYPE_F64,
     {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF8000000000001ull, 0xFFF0000000000001ull},
     4, 0x3FF0000000000000ull, 0x4000000000000000ull},
    {GG_DTYPE_E4M3, {0x7F, 0xFF}, 2, 0x38, 0x40},
    {GG_DTYPE_E5M2, {0x7E, 0xFE, 0x7F, 0xFF}, 4, 0x3C, 0x40},
    {GG_DTYPE_E4M3FNUZ, {0x80}, 1, 0x40, 0x48},
    {GG_DTYPE_E5M2FNUZ, {0x80}, 1, 0x40, 0x44},
    {GG_DTYPE_E8M0, {0xFF}, 1, 0x7F, 0x80},
};

Test(output_values, nans_of_any_sign_and_payload_are_one_value)
{
    for (size_t f = 0; f < sizeof FORMATS / sizeof FORMATS[0]; f++) {
        const struct nan_codes *c = &FORMATS[f];
        size_t es = (size_t)gg_dtype_bits(c->t) / 8, n = 3000; /* crosses a 4 KiB block */
        uint8_t x[3000 * 8] = {0}, y[3000 * 8] = {0};
        for (int64_t i = 0; i < (int64_t)n; i++) {
            put(c->t, x, i, i % 7 ? c->one : c->nans[i % c->n_nans]);
            put(c->t, y, i, i % 7 ? c->one : c->nans[(i / 7 + 1) % c->n_nans]);
        }
        cr_expect_eq(gg_oracle_first_value_diff(c->t, x, y, n * es), -1, "%s",
                     gg_dtype_name(c->t));
        put(c->t, y, 2001, c->two); /* a value changed */
        cr_expect_eq(gg_oracle_first_value_diff(c->t, x, y, n * es), (int64_t)(2001 * es),
                     "%s: a changed value", gg_dtype_name(c->t));
        put(c->t, y, 2001, c->one);
        put(c->t, y, 1001, c->two); /* a value where the other run has a NaN (1001 = 7·143) */
        cr_expect_eq(gg_oracle_first_value_diff(c->t, x, y, n * es), (int64_t)(1001 * es),
                     "%s: a NaN against a value", gg_dtype_name(c->t));
    }
}

/* The sentinel marks an element nobody wrote: where no computed NaN can take its pattern, a run
   that left an element unwritten differs from one that wrote a NaN there; E4M3's sentinel is its
   positive NaN and the fnuz formats have one NaN, so there it is a NaN like any other. */
Test(output_values, the_sentinel_differs_from_a_written_nan_where_it_can_be_told_apart)
{
    for (size_t f = 0; f < sizeof FORMATS / sizeof FORMATS[0]; f++) {
        const struct nan_codes *c = &FORMATS[f];
        size_t es = (size_t)gg_dtype_bits(c->t) / 8;
        uint32_t s = gg_oracle_sentinel(c->t);
        uint8_t x[4 * 8] = {0}, y[4 * 8] = {0};
        for (int64_t i = 0; i < 4; i++) {
            put(c->t, x, i, c->one);
            put(c->t, y, i, c->one);
        }
        put(c->t, x, 2, c->t == GG_DTYPE_F64 ? (uint64_t)s << 32 | s : s);
        put(c->t, y, 2, c->nans[c->n_nans - 1]);
        int distinct = c->t == GG_DTYPE_BF16 || c->t == GG_DTYPE_F16 || c->t == GG_DTYPE_F32 ||
                       c->t == GG_DTYPE_F64 || c->t == GG_DTYPE_E5M2;
        int64_t want = distinct ? (int64_t)(2 * es) : -1;
        cr_expect_eq(gg_oracle_first_value_diff(c->t, x, y, 4 * es), want, "%s",
                     gg_dtype_name(c->t));
    }
}

Test(output_values, e2m1_has_no_nan_and_compares_by_codes)
{
    uint8_t x[64] = {0}, y[64] = {0};
    cr_expect_eq(gg_oracle_first_value_diff(GG_DTYPE_E2M1, x, y, sizeof x), -1);
    y[40] = 0x10; /* element 81 */
    cr_expect_eq(gg_oracle_first_value_diff(GG_DTYPE_E2M1, x, y, sizeof x), 40);
}

/* ------------------------------------------------------------------------------------------ */
/* The runner                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static unsigned runs;         /* run() calls so far: the kernel changes with its parity */
static long long nans_written; /* NaN outputs written, over all runs */

/* A NaN of dtype t whose sign and payload depend on v (0..3). */
static uint64_t nan_code(enum gg_dtype t, unsigned v)
{
    uint64_t sign = v & 1, pay = v >> 1 & 1;
    switch (t) {
    case GG_DTYPE_F64: return sign << 63 | 0x7FF8000000000000ull | pay;
    case GG_DTYPE_F32: return sign << 31 | 0x7FC00000u | pay;
    case GG_DTYPE_F16: return sign << 15 | 0x7E00u | pay;
    default: return sign << 15 | 0x7FC0u | pay; /* bf16 */
    }
}

/*
 * A grouped fwd with a correct value everywhere (fp64 sums rounded once); its mutants change
 * something between one run and the next: nan_flip the sign and payload of every NaN it writes
 * (a correct kernel), nudge the last bit of one finite output, skip_nan leaves one NaN output
 * unwritten.
 */
static int det_supports(const struct gg_problem *p, char *why, size_t len)
{
    if (p->op != GG_OP_GROUPED_FWD || p->scaling != GG_SCALING_NONE || p->bias_dtype) {
        snprintf(why, len, "test kernel: grouped_fwd without scaling or bias only");
        return 0;
    }
    return 1;
}

static enum gg_status det_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                              size_t len)
{
    (void)err, (void)len;
    unsigned run = runs++;
    int nudged = 0, skipped = 0;
    for (int64_t g = 0; g < p->groups; g++)
        for (int64_t m = p->group_offs[g]; m < p->group_offs[g + 1]; m++)
            for (int64_t n = 0; n < p->n; n++) {
                double acc = 0.0;
                for (int64_t k = 0; k < p->k; k++)
                    acc += gg_load(p->a_dtype, o->a, m * p->lda + k) *
                           gg_load(p->b_dtype, o->b, g * p->stride_b + n * p->ldb + k);
                int64_t at = m * p->ldc + n;
                uint64_t code;
                if (isnan(acc)) {
                    nans_written++;
                    if (gg_mutant_is(p, "skip_nan") && run % 2 && !skipped++)
                        continue;
                    code = nan_code(p->c_dtype, gg_mutant_is(p, "nan_flip") ? run % 4 : 0);
                } else if (p->c_dtype == GG_DTYPE_F64) {
                    memcpy(&code, &acc, sizeof code);
                } else {
                    code = gg_encode(p->c_dtype, acc, GG_SAT_NONE);
                }
                if (gg_mutant_is(p, "nudge") && run % 2 && isfinite(acc) && !nudged++)
                    code ^= 1;
                put(p->c_dtype, o->c, at, code);
            }
    return GG_OK;
}

static const char *const det_mutants[] = {"nan_flip", "nudge", "skip_nan", NULL};
static const struct gg_kernel det_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION, .name = "test_det_cpu_naive",
    .backend = GG_BACKEND_CPU, .ops = GG_OP_BIT(GG_OP_GROUPED_FWD), .mutants = det_mutants,
    .supports = det_supports, .run = det_run};

static void setup(void)
{
    char err[256];
    gg_registry_init();
    if (!gg_registry_find(det_kernel.name))
        cr_assert_eq(gg_registry_add(&det_kernel, err, sizeof err), GG_OK, "%s", err);
}

/* The verdict of mutant on a case of c-type out whose A holds NaN specials (and ±max, whose
   sums overflow) and special codes, so that its outputs hold NaNs. */
static enum gg_class run_on(const char *out, const char *data, const char *mutant,
                            struct gg_verdict *v)
{
    char text[1024], err[512];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_fwd\nkernel test_det_cpu_naive\n"
             "dtypes a=bf16 b=bf16 c=%s\nscaling none\ngroups 3\ngroup_lens 9 0 14\nn 24\n"
             "k 40\nld c=27\ndata a=%s b=normal(0,1)\nseed 5\n",
             out, data);
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, strlen(text), "test", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_opts o = {.mutant = mutant};
    struct gg_run_result r;
    nans_written = 0;
    runs = 0; /* the first run is the one judged against the reference */
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    *v = r.verdict;
    gg_run_result_free(&r);
    gg_case_free(&c);
    return v->cls;
}

static const char *const OUTS[] = {"bf16", "f16", "f32", "f64"};

TestSuite(runs, .init = setup);

/* Runs mutant on a case of every output type and expects class want. */
static void expect_on_every_output(const char *data, const char *mutant, enum gg_class want)
{
    for (size_t i = 0; i < sizeof OUTS / sizeof OUTS[0]; i++) {
        struct gg_verdict v;
        enum gg_class got = run_on(OUTS[i], data, mutant, &v);
        cr_assert_gt(nans_written + !strcmp(data, "normal(0,1)"), 0,
                     "c=%s a=%s: the case must give NaN outputs", OUTS[i], data);
        cr_expect_eq(got, want, "%s on c=%s a=%s: %s (%s)", mutant, OUTS[i], data,
                     gg_class_name(got), v.detail);
    }
}

Test(runs, nans_that_change_sign_or_payload_between_runs_are_no_nondeterminism)
{
    expect_on_every_output("specials(0.05)", "nan_flip", GG_CLASS_PASS);
    expect_on_every_output("codes(0.1)", "nan_flip", GG_CLASS_PASS);
}

Test(runs, a_value_that_changes_between_runs_is_nondeterminism)
{
    expect_on_every_output("specials(0.05)", "nudge", GG_CLASS_NONDETERMINISM);
    expect_on_every_output("normal(0,1)", "nudge", GG_CLASS_NONDETERMINISM);
}

Test(runs, a_nan_written_in_one_run_only_is_nondeterminism)
{
    expect_on_every_output("specials(0.05)", "skip_nan", GG_CLASS_NONDETERMINISM);
}

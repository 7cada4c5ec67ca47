/*
 * MPFR exact outputs and certification of the dgemm reference: exact sums of integer data, one
 * correct rounding (subnormal ties, cancellation past the binary64 range), specials, certification
 * of random bf16 / e4m3 / MX results up to K = 4096, and planted errors the certifier must find.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ref_fixture.h"

/* Approximately normal(0, 1): sum of 4 uniforms, centred and scaled. */
static double normal(uint64_t *s)
{
    double x = 0;
    for (int i = 0; i < 4; i++)
        x += (double)(splitmix64(s) >> 11) * 0x1p-53;
    return (x - 2) * 1.7320508075688772;
}

/* A random code: bf16 of a normal value (truncated to 8 significant bits), or a finite 8-bit code. */
static uint32_t random_code(uint64_t *s, enum gg_dtype dt)
{
    if (dt != GG_DTYPE_BF16)
        return ref_random_finite_code(s, dt);
    return ref_bf16_bits((float)normal(s));
}

/* Builds one case with every operand element random (whole spans) and room for the
   reference's outputs. lens is used by grouped ops. */
static void setup(struct ref_case *t, enum gg_op op, enum gg_layout layout, int64_t groups,
                  const int64_t *lens, int64_t m, int64_t n, int64_t k, enum gg_dtype dt,
                  enum gg_scaling scaling)
{
    ref_case_init(t, 777u + (uint64_t)k * 3u + (uint64_t)op, op, layout, groups, lens, m, n, k, dt,
                  scaling);
    t->a = ref_random_codes(&t->rng, dt, gg_problem_a_span(&t->p), random_code);
    t->b = ref_random_codes(&t->rng, dt, gg_problem_b_span(&t->p), random_code);
    t->o = (struct gg_operands){.a = t->a, .b = t->b};
    t->sa = 0.375f;
    t->sb = 1.0f / 3.0f; /* a 24-bit significand: products are still exact in double */
    ref_case_scales(t, 117, 21); /* MX scales 2^-10 .. 2^10 */
    ref_case_outputs(t);
}

/* A dense 1×1×k problem over f64 inputs a and b. */
static double exact_f64(const double *a, const double *b, int64_t k)
{
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_F64, .b_dtype = GG_DTYPE_F64,
                           .c_dtype = GG_DTYPE_F64, .acc_dtype = GG_DTYPE_F32, .groups = 1,
                           .m = 1, .n = 1, .k = k};
    char err[256] = "";
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    struct gg_operands o = {.a = a, .b = b};
    return gg_ref_exact(&p, &o, 0, 0, 0);
}

Test(reference_mpfr, exact_sum_of_integers)
{
    static const int64_t lens[3] = {3, 0, 70};
    for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++) {
        struct ref_case t;
        setup(&t, (enum gg_op)op, GG_LAYOUT_NK, 3, lens, 0, 5, 60, GG_DTYPE_BF16,
              GG_SCALING_NONE);
        /* Replace the data by integers in [-100, 100] (exact in bf16). */
        uint16_t *a = t.a, *b = t.b;
        int64_t na = gg_problem_a_span(&t.p), nb = gg_problem_b_span(&t.p);
        for (int64_t i = 0; i < na + nb; i++) {
            float f = (float)((int)(splitmix64(&t.rng) % 201) - 100);
            (i < na ? a : b)[i < na ? i : i - na] = (uint16_t)ref_bf16_bits(f);
        }
        for (int64_t g = 0; g < 3; g++) {
            struct gg_out_block bl;
            gg_problem_out_block(&t.p, g, &bl);
            double va[128], vb[128];
            cr_assert_leq(bl.red, 128);
            for (int64_t r = 0; r < bl.rows; r++)
                for (int64_t col = 0; col < bl.cols; col++) {
                    gg_ref_gather(&t.p, &t.o, 0, g, r, va);
                    gg_ref_gather(&t.p, &t.o, 1, g, col, vb);
                    int64_t s = 0;
                    for (int64_t k = 0; k < bl.red; k++)
                        s += (int64_t)va[k] * (int64_t)vb[k];
                    cr_assert_eq(gg_ref_exact(&t.p, &t.o, g, r, col), (double)s,
                                 "op %d g %lld (%lld,%lld)", op, (long long)g, (long long)r,
                                 (long long)col);
                }
        }
        ref_case_free(&t);
    }
}

Test(reference_mpfr, one_correct_rounding)
{
    /* 1 + 2^-60 - 1: recursive summation in double gives 0. */
    const double a1[3] = {1, 0x1p-60, -1}, ones[3] = {1, 1, 1};
    cr_expect_eq(exact_f64(a1, ones, 3), 0x1p-60);
    /* Below the binary64 range: 2^-1075 is a tie (to even: 0); a hair above it rounds up;
       3·2^-1076 rounds to 2^-1074. Rounding to 53 bits first would lose the hair. */
    const double a2[2] = {0x1p-600, 0x1p-600}, b_tie[2] = {0x1p-475, 0};
    const double b_hair[2] = {0x1p-475, 0x1p-600};
    cr_expect_eq(exact_f64(a2, b_tie, 2), 0.0);
    cr_expect_eq(exact_f64(a2, b_hair, 2), 0x1p-1074);
    const double a3[2] = {3 * 0x1p-600, 0x1p-600}, b3[2] = {0x1p-476, -0x1p-600};
    cr_expect_eq(exact_f64(a3, b3, 1), 0x1p-1074);
    /* In the subnormal range: 1.5·2^-1074 less a hair is below the tie, so 2^-1074 (rounding
       to 53 bits first would give the tie and then 2^-1073). */
    const double b3h[2] = {0x1p-475, -0x1p-600};
    cr_expect_eq(exact_f64(a3, b3h, 2), 0x1p-1074);
    cr_expect_eq(exact_f64(a3, b3h, 1), 0x1p-1073); /* the tie itself goes to even */
    /* Products beyond the binary64 range cancel exactly; an uncancelled one overflows. */
    const double a4[3] = {0x1p600, -0x1p600, 1.5}, b4[3] = {0x1p500, 0x1p500, 1};
    cr_expect_eq(exact_f64(a4, b4, 3), 1.5);
    cr_expect_eq(exact_f64(a4, b4, 1), INFINITY);
    /* Specials: NaN terms and Inf - Inf give NaN; an empty sum is +0. */
    const double a5[2] = {INFINITY, -INFINITY}, a6[2] = {NAN, 1};
    cr_expect(isnan(exact_f64(a5, ones, 2)));
    cr_expect_eq(exact_f64(a5, ones, 1), INFINITY);
    cr_expect(isnan(exact_f64(a6, ones, 2)));
    double z = exact_f64(a1, ones, 0);
    cr_expect(z == 0 && !signbit(z));
}

/* Certifies one random case and returns its struct for further planting (caller releases). */
static void certified_case(struct ref_case *t, enum gg_op op, enum gg_layout layout, int64_t groups,
                           const int64_t *lens, int64_t m, int64_t n, int64_t k, enum gg_dtype dt,
                           enum gg_scaling scaling)
{
    setup(t, op, layout, groups, lens, m, n, k, dt, scaling);
    ref_case_run(t);
    int64_t first = 0;
    int64_t bad = gg_ref_certify(&t->p, &t->o, t->c, t->abs, 64, 5, &first);
    cr_assert_eq(bad, 0, "op %d K %lld: %lld violations, first at %lld", (int)op, (long long)k,
                 (long long)bad, (long long)first);
    cr_assert_eq(first, -1);
    /* Without abs the certifier derives its own bound. */
    cr_assert_eq(gg_ref_certify(&t->p, &t->o, t->c, NULL, 16, 6, NULL), 0);
}

Test(reference_mpfr, certifies_random_bf16)
{
    static const int64_t lens[4] = {0, 7, 33, 1};
    const int64_t ks[3] = {64, 1000, 4096};
    for (int i = 0; i < 3; i++) {
        struct ref_case t;
        certified_case(&t, GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 4, lens, 0, 24, ks[i],
                       GG_DTYPE_BF16, GG_SCALING_NONE);
        ref_case_free(&t);
        certified_case(&t, GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 4, lens, 0, ks[i], 16,
                       GG_DTYPE_BF16, GG_SCALING_NONE);
        ref_case_free(&t);
        certified_case(&t, GG_OP_BATCHED, GG_LAYOUT_KN, 2, NULL, 5, 12, ks[i], GG_DTYPE_BF16,
                       GG_SCALING_NONE);
        ref_case_free(&t);
        certified_case(&t, GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 1, 40, ks[i], GG_DTYPE_BF16,
                       GG_SCALING_NONE);
        ref_case_free(&t);
    }
    static const int64_t wlens[3] = {1500, 0, 4000};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, wlens, 0, 6, 5, GG_DTYPE_BF16,
                   GG_SCALING_NONE);
    ref_case_free(&t);
}

Test(reference_mpfr, certifies_random_e4m3)
{
    static const int64_t lens[3] = {9, 0, 20};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 16, 4096, GG_DTYPE_E4M3,
                   GG_SCALING_TENSOR);
    ref_case_free(&t);
    certified_case(&t, GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 16, 2048, GG_DTYPE_E4M3,
                   GG_SCALING_MX);
    ref_case_free(&t);
    certified_case(&t, GG_OP_BATCHED, GG_LAYOUT_NK, 2, NULL, 3, 8, 1024, GG_DTYPE_E5M2,
                   GG_SCALING_MX);
    ref_case_free(&t);
    certified_case(&t, GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, lens, 0, 8, 8,
                   GG_DTYPE_E4M3FNUZ, GG_SCALING_TENSOR);
    ref_case_free(&t);
}

/* γ_n(2^-53)·abs + 2^-1074, the certification bound. */
static double bound(int64_t red, double abs)
{
    double nu = (double)red * 0x1p-53;
    return nu / (1 - nu) * abs + 0x1p-1074;
}

Test(reference_mpfr, finds_planted_errors)
{
    static const int64_t lens[3] = {0, 6, 5};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 10, 2048, GG_DTYPE_BF16,
                   GG_SCALING_NONE);
    int64_t first = 0;
    /* Packed index 0 is the (0,0) corner of group 1 (group 0 is empty). */
    double saved = t.c[0];
    t.c[0] += 1e-6 * t.abs[0];
    cr_expect_geq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 32, 5, &first), 1);
    cr_expect_eq(first, 0);
    t.c[0] = saved;

    /* The last element is the bottom-right corner of group 2: twice the bound away fails, half
       of it passes. */
    int64_t i = t.out - 1;
    double exact = gg_ref_exact(&t.p, &t.o, 2, 4, 9);
    double tol = bound(2048, t.abs[i]);
    t.c[i] = exact + 2 * tol;
    cr_expect_geq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 32, 5, &first), 1);
    cr_expect_eq(first, i);
    t.c[i] = exact - 0.5 * tol;
    cr_expect_eq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 32, 5, &first), 0);
    cr_expect_eq(first, -1);

    /* A NaN where the exact value is finite is a violation too. */
    t.c[i] = NAN;
    cr_expect_geq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 32, 5, &first), 1);
    cr_expect_eq(first, i);
    ref_case_free(&t);
}

Test(reference_mpfr, sampled_errors_are_found)
{
    /* An error everywhere in one block: some uniform sample must hit it (256 samples, half of
       the outputs wrong). */
    static const int64_t lens[2] = {8, 8};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 2, lens, 0, 32, 256, GG_DTYPE_BF16,
                   GG_SCALING_NONE);
    for (int64_t i = t.out / 2; i < t.out; i++)
        t.c[i] *= 1 + 1e-9;
    int64_t first = -2;
    int64_t bad = gg_ref_certify(&t.p, &t.o, t.c, t.abs, 256, 11, &first);
    cr_expect_gt(bad, 2, "only %lld violations", (long long)bad); /* the corners and samples */
    cr_expect_geq(first, t.out / 2);
    ref_case_free(&t);
}

Test(reference_mpfr, cancellation_is_certified)
{
    /* Row r of A is (x, x) and column c of B is (y, -y) plus a tiny last term: the exact sums are
       ~2^-30 while Σ|ab| is ~K. */
    struct ref_case t;
    setup(&t, GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 4, 4, 513, GG_DTYPE_BF16, GG_SCALING_NONE);
    uint16_t *a = t.a, *b = t.b;
    for (int64_t r = 0; r < 4; r++)
        for (int64_t k = 0; k < 256; k++) {
            a[r * 513 + 256 + k] = a[r * 513 + k];
            b[r * 513 + 256 + k] = (uint16_t)(b[r * 513 + k] ^ 0x8000u);
        }
    for (int64_t r = 0; r < 4; r++) {
        a[r * 513 + 512] = 0x3080; /* 2^-30 */
        b[r * 513 + 512] = 0x3F80; /* 1 */
    }
    ref_case_run(&t);
    for (int64_t i = 0; i < 16; i++) {
        cr_expect_eq(gg_ref_exact(&t.p, &t.o, 0, i / 4, i % 4), 0x1p-30);
        cr_expect_gt(t.abs[i], 1e3 * 0x1p-30);
    }
    cr_expect_eq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 64, 3, NULL), 0);
    ref_case_free(&t);
}

Test(reference_mpfr, nan_inputs_need_nan_outputs)
{
    struct ref_case t;
    setup(&t, GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 3, 3, 40, GG_DTYPE_BF16, GG_SCALING_NONE);
    ((uint16_t *)t.a)[5] = 0x7FC0; /* NaN in row 0 */
    ref_case_run(&t);
    cr_assert(isnan(gg_ref_exact(&t.p, &t.o, 0, 0, 2)));
    cr_assert(isnan(t.c[2]));
    int64_t first = 0;
    cr_expect_eq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 16, 1, &first), 0);
    t.c[2] = 0; /* (0,2) is a corner */
    cr_expect_geq(gg_ref_certify(&t.p, &t.o, t.c, t.abs, 16, 1, &first), 1);
    cr_expect_eq(first, 2);
    ref_case_free(&t);
}

/* A gather that does what the device path does on the host: the vector's codes packed into a
   buffer of their own, then decoded with gg_ref_gather_operand(). fail: the call that fails. */
struct packed_gather {
    const struct ref_case *t;
    int calls, fail;
};

static int packed_vector(void *ctx, int which, int64_t g, int64_t idx, double *out, char *err,
                         size_t err_len)
{
    struct packed_gather *pg = ctx;
    if (++pg->calls == pg->fail) {
        snprintf(err, err_len, "planted gather failure");
        return -1;
    }
    struct gg_ref_operand d;
    gg_ref_operand(&pg->t->p, &pg->t->o, which, g, &d);
    int64_t row = gg_ref_vec_row(&d, idx);
    uint8_t *codes = calloc((size_t)d.red + 1, 8);
    cr_assert(codes);
    for (int64_t j = 0; j < d.red; j++)
        gg_store_code(d.dt, codes, j,
                      gg_load_code(d.dt, d.base, d.off + row * d.vec_step + j * d.red_step));
    d.base = codes;
    d.off = 0;
    d.vec_step = 0;
    d.red_step = 1;
    d.tensor = d.sk == GG_REF_SCALE_TENSOR ? ((const float *)d.scale)[d.tensor_at] : 1.0;
    gg_ref_gather_operand(&d, row, out);
    free(codes);
    return 0;
}

/* The device reference's certification path: vectors through a gather callback give the
   gathers, the verdicts and the first violation of the default path; a failing gather is an
   error with its message. */
Test(reference_mpfr, certifies_through_a_gather_callback)
{
    static const int64_t lens[3] = {5, 0, 9};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 3, lens, 0, 96, 40, GG_DTYPE_E4M3,
                   GG_SCALING_TENSOR);
    struct packed_gather pg = {.t = &t};
    double want[128], got[128];
    char err[128] = "";
    for (int which = 0; which < 2; which++)
        for (int64_t g = 0; g < 3; g++)
            for (int64_t idx = 0; idx < (which ? 40 : lens[g]); idx++) {
                gg_ref_gather(&t.p, &t.o, which, g, idx, want);
                cr_assert_eq(packed_vector(&pg, which, g, idx, got, err, sizeof err), 0);
                cr_assert_eq(memcmp(want, got, 96 * sizeof(double)), 0,
                             "side %d group %lld vector %lld", which, (long long)g,
                             (long long)idx);
            }
    int64_t first = -2;
    cr_expect_eq(gg_ref_certify_with(&t.p, &t.o, t.c, t.abs, 64, 5, packed_vector, &pg, &first,
                                     err, sizeof err), 0, "%s", err);
    cr_expect_eq(first, -1);
    int64_t i = t.out - 1;
    t.c[i] += 1e-3 * t.abs[i] + 1e-30;
    cr_expect_geq(gg_ref_certify_with(&t.p, &t.o, t.c, t.abs, 64, 5, packed_vector, &pg, &first,
                                      err, sizeof err), 1);
    cr_expect_eq(first, i);
    pg.calls = 0;
    pg.fail = 3;
    cr_expect_eq(gg_ref_certify_with(&t.p, &t.o, t.c, t.abs, 64, 5, packed_vector, &pg, &first,
                                     err, sizeof err), -1);
    cr_expect_str_eq(err, "planted gather failure");
    ref_case_free(&t);
}

/* The certification of a reference never held whole: the points are the corners of every
   non-empty group and the samples, in checking order, and certifying their values alone gives
   what certifying the whole arrays gives, violations and first violation included. */
Test(reference_mpfr, certifies_picked_points)
{
    static const int64_t lens[3] = {5, 0, 9};
    struct ref_case t;
    certified_case(&t, GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 3, lens, 0, 96, 40, GG_DTYPE_E4M3,
                   GG_SCALING_TENSOR);
    int64_t n = gg_ref_certify_points(&t.p, 16, 5, NULL);
    cr_assert_eq(n, 4 + 4 + 16, "two corner sets of four, then the samples");
    int64_t idx[24];
    double c[24], abs[24];
    cr_assert_eq(gg_ref_certify_points(&t.p, 16, 5, idx), n);
    const int64_t corners[8] = {0, 39, 4 * 40, 4 * 40 + 39, 200, 239, 200 + 8 * 40,
                                200 + 8 * 40 + 39};
    cr_expect_eq(memcmp(idx, corners, sizeof corners), 0);
    char err[128] = "";
    for (int round = 0; round < 2; round++) {
        for (int64_t j = 0; j < n; j++) {
            cr_assert(idx[j] >= 0 && idx[j] < t.out);
            c[j] = t.c[idx[j]];
            abs[j] = t.abs[idx[j]];
        }
        int64_t first_at = -2, first_whole = -2;
        int64_t at = gg_ref_certify_at(&t.p, &t.o, n, idx, c, abs, NULL, NULL, &first_at, err,
                                       sizeof err);
        int64_t whole = gg_ref_certify_with(&t.p, &t.o, t.c, t.abs, 16, 5, NULL, NULL,
                                            &first_whole, err, sizeof err);
        cr_expect_eq(at, whole, "round %d", round);
        cr_expect_eq(first_at, first_whole, "round %d", round);
        cr_expect(round == 0 ? at == 0 : at >= 1 && first_at == 239, "round %d", round);
        /* Round 1: the reference is wrong at the last corner of group 2. */
        t.c[239] += 1e-3 * t.abs[239] + 1e-30;
    }
    ref_case_free(&t);
}

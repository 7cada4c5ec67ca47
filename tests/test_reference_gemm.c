/*
 * The OpenBLAS reference GEMM against a naive loop written from the addressing table of
 * gg_kernel.h: every op and layout, empty groups, padded leading dimensions (padding holds NaN
 * codes, so a stray read shows), bf16 / e4m3 / fnuz codes with tensor and MX scales, 64-bit
 * offsets past 2^31 elements on a sparse mapping, and special inputs (Inf, NaN, ±0) whose outputs
 * must be the IEEE values: Inf·0 and Inf - Inf NaN, infinities with their signs, sums of -0
 * terms -0, and Σ|ab| over the finite terms only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ref_fixture.h"

/* Element index of t-th entry of reduction vector v of side which in group g (the table of
   gg_kernel.h, written out independently of the code under test). */
static int64_t elem_index(const struct gg_problem *p, int which, int64_t g, int64_t v, int64_t t)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        return which ? g * p->stride_b + v * p->ldb + t : (p->group_offs[g] + v) * p->lda + t;
    case GG_OP_GROUPED_DGRAD:
        return which ? g * p->stride_b + t * p->ldb + v : (p->group_offs[g] + v) * p->lda + t;
    case GG_OP_GROUPED_WGRAD:
        return which ? (p->group_offs[g] + t) * p->ldb + v : (p->group_offs[g] + t) * p->lda + v;
    case GG_OP_BATCHED:
        if (!which)
            return g * p->stride_a + v * p->lda + t;
        return p->b_layout == GG_LAYOUT_KN ? g * p->stride_b + t * p->ldb + v
                                           : g * p->stride_b + v * p->ldb + t;
    default:
        return which ? v * p->ldb + t : v * p->lda + t;
    }
}

/* A random non-NaN code: bf16 small integers in [-8, 8] (sums exact in double), 8-bit formats
   any finite code. */
static uint32_t random_code(struct ref_case *t, enum gg_dtype dt)
{
    if (dt != GG_DTYPE_BF16)
        return ref_random_finite_code(&t->rng, dt);
    return ref_bf16_bits((float)((int)(splitmix64(&t->rng) % 17) - 8));
}

/* Sets up the problem: pad is added to every packed leading dimension (0 for packed). */
static void make(struct ref_case *t, enum gg_op op, enum gg_layout layout, int64_t groups,
                 const int64_t *lens, int64_t m, int64_t n, int64_t k, int64_t pad,
                 enum gg_dtype dt, enum gg_scaling scaling)
{
    ref_case_init(t, 12345u + (uint64_t)op * 77u + (uint64_t)k, op, layout, groups, lens, m, n, k,
                  dt, scaling);
    struct gg_problem *p = &t->p;
    if (pad) { /* re-derive with padded leading dimensions and strides */
        char err[256] = "";
        p->lda += pad;
        p->ldb += pad;
        p->ldc += pad;
        p->stride_a = p->stride_b = p->stride_c = 0;
        cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_OK, "%s", err);
        p->stride_a += pad;
        p->stride_b += pad;
        p->stride_c += pad;
    }
}

/* Allocates A and B (B through a sparse anonymous mapping when mapped) and the outputs; heap
   operands are filled with NaN codes so only addressed elements are finite. */
static void alloc_operands(struct ref_case *t, int mapped)
{
    const struct gg_problem *p = &t->p;
    t->b_bytes = (size_t)gg_dtype_bytes(p->b_dtype, gg_problem_b_span(p)) + 1;
    t->a = malloc((size_t)gg_dtype_bytes(p->a_dtype, gg_problem_a_span(p)) + 1);
    cr_assert_not_null(t->a);
    uint32_t nan_a = ref_nan_code(p->a_dtype), nan_b = ref_nan_code(p->b_dtype);
    for (int64_t i = 0; i < gg_problem_a_span(p); i++)
        ref_put_code(p->a_dtype, t->a, i, nan_a);
    t->b_mapped = mapped;
    if (mapped) {
        t->b = mmap(NULL, t->b_bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        cr_assert_neq(t->b, MAP_FAILED, "cannot reserve %zu bytes", t->b_bytes);
    } else {
        t->b = malloc(t->b_bytes);
        cr_assert_not_null(t->b);
        for (int64_t i = 0; i < gg_problem_b_span(p); i++)
            ref_put_code(p->b_dtype, t->b, i, nan_b);
    }
    t->o = (struct gg_operands){.a = t->a, .b = t->b};
    t->sa = 0.75f;
    t->sb = 2.5f;
    ref_case_scales(t, 120, 15); /* MX scales 2^-7 .. 2^7 */
    ref_case_outputs(t);
}

/* Random codes at every element a non-empty block reads. */
static void fill_operands(struct ref_case *t)
{
    const struct gg_problem *p = &t->p;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block bl;
        gg_problem_out_block(p, g, &bl);
        if (bl.rows * bl.cols * bl.red == 0)
            continue;
        for (int64_t v = 0; v < bl.rows; v++)
            for (int64_t r = 0; r < bl.red; r++)
                ref_put_code(p->a_dtype, t->a, elem_index(p, 0, g, v, r),
                             random_code(t, p->a_dtype));
        for (int64_t v = 0; v < bl.cols; v++)
            for (int64_t r = 0; r < bl.red; r++)
                ref_put_code(p->b_dtype, t->b, elem_index(p, 1, g, v, r),
                             random_code(t, p->b_dtype));
    }
}

/* Dequantised element t of vector v of side which in group g; with mag, its alignment magnitude
   (ref_align_mag of the code, times the scale) as Σ|ab| counts it. */
static long double value(const struct ref_case *tc, int which, int64_t g, int64_t v, int64_t t,
                         int mag)
{
    const struct gg_problem *p = &tc->p;
    enum gg_dtype dt = which ? p->b_dtype : p->a_dtype;
    int64_t at = elem_index(p, which, g, v, t);
    long double x = gg_decode(dt, ref_code_at(dt, which ? tc->b : tc->a, at));
    if (mag)
        x = ref_align_mag(dt, x);
    if (p->scaling == GG_SCALING_TENSOR)
        return x * (which ? tc->sb : tc->sa);
    if (p->scaling != GG_SCALING_MX)
        return x;
    int64_t kb = p->k / GG_MX_BLOCK;
    if (which) {
        int64_t mat = p->op == GG_OP_DENSE ? 0 : g;
        return x * ref_e8m0(tc->mxb[(mat * p->n + v) * kb + t / GG_MX_BLOCK]);
    }
    int64_t row = p->op == GG_OP_GROUPED_FWD ? p->group_offs[g] + v
                  : p->op == GG_OP_BATCHED  ? g * p->m + v
                                            : v;
    return x * ref_e8m0(tc->mxa[row * kb + t / GG_MX_BLOCK]);
}

/* The IEEE value of an exact sum of the products of one output: NaN for a NaN product (a NaN
   factor, Inf·0) or both infinities, else the infinity; a finite sum in long double, -0 when
   every product is -0; Σ|ab| over the products whose factors are both finite. */
struct ieee_sum {
    long double s, sa;
    int nan, pinf, ninf, all_negzero;
};

static struct ieee_sum ieee_sum_of(const struct ref_case *t, int64_t g, int64_t r, int64_t col,
                                   int64_t red)
{
    struct ieee_sum e = {.all_negzero = red > 0};
    for (int64_t k = 0; k < red; k++) {
        long double a = value(t, 0, g, r, k, 0), b = value(t, 1, g, col, k, 0), ab = a * b;
        e.nan |= isnan(ab);
        e.pinf |= isinf(ab) && ab > 0;
        e.ninf |= isinf(ab) && ab < 0;
        e.all_negzero &= ab == 0 && signbit(ab);
        if (isfinite(a) && isfinite(b)) {
            e.s += ab;
            e.sa += fabsl(value(t, 0, g, r, k, 1) * value(t, 1, g, col, k, 1));
        }
    }
    return e;
}

/* Runs the reference on t and checks every output and Σ|ab| against ieee_sum_of: finite sums
   bitwise when exact (the data make every sum exact in double), else within the dgemm error
   bound; NaN, the infinities and the sign of a zero sum as IEEE arithmetic gives them. The MPFR
   certification agrees on a sample. Returns the number of non-finite outputs. */
static int64_t run_and_compare(struct ref_case *t, int exact)
{
    const struct gg_problem *p = &t->p;
    ref_case_run(t);
    int64_t pos = 0, special = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block bl;
        gg_problem_out_block(p, g, &bl);
        for (int64_t r = 0; r < bl.rows; r++)
            for (int64_t col = 0; col < bl.cols; col++, pos++) {
                struct ieee_sum e = ieee_sum_of(t, g, r, col, bl.red);
                double got = t->c[pos];
                double tol = exact ? 0.0 : 2 * ref_gamma53(bl.red + 1) * (double)e.sa;
                int ok = e.nan || (e.pinf && e.ninf) ? isnan(got)
                         : e.pinf || e.ninf          ? got == (e.pinf ? INFINITY : -INFINITY)
                                                     : fabs(got - (double)e.s) <= tol &&
                                                  (!e.all_negzero || signbit(got));
                cr_assert(ok, "op %d g %lld (%lld, %lld): %a", (int)p->op, (long long)g,
                          (long long)r, (long long)col, got);
                special += !isfinite(got);
                cr_assert_leq(fabs(t->abs[pos] - (double)e.sa), tol, "op %d: abs at %lld",
                              (int)p->op, (long long)pos);
            }
    }
    cr_assert_eq(pos, t->out);
    cr_assert_eq(gg_ref_certify(p, &t->o, t->c, t->abs, 64, 7, NULL), 0);
    return special;
}

/* A whole bf16 case: build, fill, compare exactly. */
static void bf16_case(enum gg_op op, enum gg_layout layout, int64_t groups, const int64_t *lens,
                      int64_t m, int64_t n, int64_t k, int64_t pad)
{
    struct ref_case t;
    make(&t, op, layout, groups, lens, m, n, k, pad, GG_DTYPE_BF16, GG_SCALING_NONE);
    alloc_operands(&t, 0);
    fill_operands(&t);
    cr_assert_eq(run_and_compare(&t, 1), 0);
    ref_case_free(&t);
}

static const int64_t empty_patterns[][4] = {
    {3, 2, 4, 1}, {0, 3, 2, 5}, {3, 2, 5, 0}, {2, 0, 0, 3}, {0, 0, 0, 0}, {1, 0, 1, 0}};
#define N_PATTERNS (sizeof empty_patterns / sizeof empty_patterns[0])

Test(reference_gemm, grouped_fwd_bf16)
{
    for (size_t i = 0; i < N_PATTERNS; i++)
        for (int64_t pad = 0; pad <= 3; pad += 3)
            bf16_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 4, empty_patterns[i], 0, 5, 7, pad);
}

Test(reference_gemm, grouped_dgrad_bf16)
{
    for (size_t i = 0; i < N_PATTERNS; i++)
        for (int64_t pad = 0; pad <= 3; pad += 3)
            bf16_case(GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 4, empty_patterns[i], 0, 6, 9, pad);
}

Test(reference_gemm, grouped_wgrad_bf16)
{
    for (size_t i = 0; i < N_PATTERNS; i++)
        for (int64_t pad = 0; pad <= 3; pad += 3)
            bf16_case(GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 4, empty_patterns[i], 0, 6, 5, pad);
}

Test(reference_gemm, wgrad_empty_group_is_positive_zero)
{
    static const int64_t lens[3] = {4, 0, 3};
    struct ref_case t;
    make(&t, GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, lens, 0, 3, 4, 1, GG_DTYPE_BF16,
         GG_SCALING_NONE);
    alloc_operands(&t, 0);
    fill_operands(&t);
    run_and_compare(&t, 1);
    struct gg_out_block bl;
    gg_problem_out_block(&t.p, 1, &bl);
    int64_t start = 12; /* group 0 owns a 3x4 block */
    for (int64_t i = start; i < start + bl.rows * bl.cols; i++) {
        uint64_t bits, abits;
        memcpy(&bits, &t.c[i], sizeof bits);
        memcpy(&abits, &t.abs[i], sizeof abits);
        cr_assert_eq(bits, 0, "dW of the empty group at %lld is not +0.0", (long long)i);
        cr_assert_eq(abits, 0);
    }
    ref_case_free(&t);
}

Test(reference_gemm, batched_nk_and_kn_bf16)
{
    for (int layout = GG_LAYOUT_NK; layout <= GG_LAYOUT_KN; layout++)
        for (int64_t pad = 0; pad <= 2; pad += 2) {
            bf16_case(GG_OP_BATCHED, (enum gg_layout)layout, 3, NULL, 4, 5, 7, pad);
            bf16_case(GG_OP_BATCHED, (enum gg_layout)layout, 1, NULL, 1, 9, 3, pad);
            bf16_case(GG_OP_BATCHED, (enum gg_layout)layout, 2, NULL, 3, 2, 0, pad);
        }
}

Test(reference_gemm, dense_bf16)
{
    for (int64_t pad = 0; pad <= 5; pad += 5) {
        bf16_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 1, 17, 33, pad);
        bf16_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 5, 3, 11, pad);
        bf16_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 0, 3, 11, pad);
    }
}

/* gg_ref_gather returns exactly the naive vector for every op, side and layout. */
Test(reference_gemm, gather_matches_addressing)
{
    static const int64_t lens[3] = {2, 0, 3};
    for (int op = 0; op < GG_OP_COUNT; op++)
        for (int layout = GG_LAYOUT_NK; layout <= GG_LAYOUT_KN; layout++) {
            if ((layout == GG_LAYOUT_KN && op != GG_OP_BATCHED) || op == GG_OP_MOE_SORTED)
                continue; /* moe sorted: test_reference_recipes.c */
            struct ref_case t;
            make(&t, (enum gg_op)op, (enum gg_layout)layout, op == GG_OP_DENSE ? 1 : 3, lens, 2,
                 4, 6, 2, GG_DTYPE_E4M3, GG_SCALING_TENSOR);
            alloc_operands(&t, 0);
            fill_operands(&t);
            double v[16];
            for (int64_t g = 0; g < t.p.groups; g++) {
                struct gg_out_block bl;
                gg_problem_out_block(&t.p, g, &bl);
                if (bl.rows * bl.cols * bl.red == 0)
                    continue;
                for (int which = 0; which < 2; which++)
                    for (int64_t i = 0; i < (which ? bl.cols : bl.rows); i++) {
                        gg_ref_gather(&t.p, &t.o, which, g, i, v);
                        for (int64_t k = 0; k < bl.red; k++)
                            cr_assert_eq(v[k], (double)value(&t, which, g, i, k, 0),
                                         "op %d side %d g %lld vec %lld t %lld", op, which,
                                         (long long)g, (long long)i, (long long)k);
                    }
            }
            ref_case_free(&t);
        }
}

static void scaled_case(enum gg_op op, enum gg_layout layout, int64_t groups, const int64_t *lens,
                        int64_t m, int64_t n, int64_t k, enum gg_dtype dt, int exact)
{
    struct ref_case t;
    make(&t, op, layout, groups, lens, m, n, k, 2, dt, GG_SCALING_TENSOR);
    alloc_operands(&t, 0);
    fill_operands(&t);
    cr_assert_eq(run_and_compare(&t, exact), 0);
    ref_case_free(&t);
}

/* e4m3 codes times these scales span fewer than 53 bits, so every sum is exact; e5m2's wider
   exponent range is compared within the dgemm bound. */
Test(reference_gemm, fp8_tensor_scaled_every_op)
{
    static const int64_t lens[3] = {3, 0, 4};
    const enum gg_dtype e4 = GG_DTYPE_E4M3, e5 = GG_DTYPE_E5M2;
    scaled_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 5, 19, e4, 1);
    scaled_case(GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 3, lens, 0, 5, 19, e4, 1);
    scaled_case(GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, lens, 0, 5, 19, e4, 1);
    scaled_case(GG_OP_BATCHED, GG_LAYOUT_NK, 2, NULL, 3, 5, 19, e4, 1);
    scaled_case(GG_OP_BATCHED, GG_LAYOUT_KN, 2, NULL, 3, 5, 19, e4, 1);
    scaled_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 2, 5, 19, e4, 1);
    scaled_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 5, 19, GG_DTYPE_E4M3FNUZ, 1);
    scaled_case(GG_OP_BATCHED, GG_LAYOUT_KN, 2, NULL, 3, 5, 19, e5, 0);
    scaled_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 2, 5, 19, GG_DTYPE_E5M2FNUZ, 0);
}

/* Groups of up to 8 rows take the reference's small-M path, larger groups dgemm. Both give the
   exact sums over several column tiles and reduction steps, the last of each partial: with B
   read vector-major (fwd, batched NK: tiles of 64 vectors, GG_REF_CHUNK indices at a time) and
   reduction-major (dgrad, batched KN: panels of 512 vectors, 128 indices at a time), and under
   tensor scales. */
Test(reference_gemm, small_and_large_groups_over_tiles_and_chunks)
{
    static const int64_t lens[4] = {1, 8, 0, 9}, wlens[3] = {600, 0, 700};
    const int64_t vm_red = 2 * GG_REF_CHUNK + 76, vm_cols = 150, rm_red = 300, rm_cols = 1100;
    bf16_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 4, lens, 0, vm_cols, vm_red, 0);
    bf16_case(GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 4, lens, 0, rm_red, rm_cols, 1);
    bf16_case(GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, wlens, 0, 5, vm_cols, 0);
    for (int64_t m = 8; m <= 9; m++) {
        bf16_case(GG_OP_BATCHED, GG_LAYOUT_NK, 2, NULL, m, vm_cols, vm_red, 0);
        bf16_case(GG_OP_BATCHED, GG_LAYOUT_KN, 2, NULL, m, rm_cols, rm_red, 0);
    }
    scaled_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 4, lens, 0, vm_cols, vm_red, GG_DTYPE_E4M3, 1);
    scaled_case(GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 4, lens, 0, rm_red, rm_cols, GG_DTYPE_E4M3, 1);
}

/* One-element dense product of two codes of dt. */
static double one_product(enum gg_dtype dt, uint8_t ca, uint8_t cb)
{
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = dt, .b_dtype = dt,
                           .c_dtype = GG_DTYPE_F32, .acc_dtype = GG_DTYPE_F32, .groups = 1,
                           .m = 1, .n = 1, .k = 1};
    char err[256] = "";
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    struct gg_operands o = {.a = &ca, .b = &cb};
    double c = 0, abs = 0;
    cr_assert_eq(gg_ref_gemm(&p, &o, &c, &abs, err, sizeof err), GG_OK, "%s", err);
    return c;
}

Test(reference_gemm, fnuz_decoded_as_fnuz)
{
    /* 0x38 is 1.0 in OCP e4m3 (bias 7) and 0.5 in e4m3fnuz (bias 8). */
    cr_expect_eq(one_product(GG_DTYPE_E4M3, 0x38, 0x38), 1.0);
    cr_expect_eq(one_product(GG_DTYPE_E4M3FNUZ, 0x38, 0x38), 0.25);
    /* 0x80 is -0 in OCP and the only NaN in fnuz. */
    cr_expect_eq(one_product(GG_DTYPE_E4M3, 0x80, 0x38), 0.0);
    cr_expect(isnan(one_product(GG_DTYPE_E4M3FNUZ, 0x80, 0x38)));
    cr_expect(isnan(one_product(GG_DTYPE_E4M3, 0x7F, 0x38)));
}

/* MX case with planted edge scales; returns the number of NaN outputs. */
static int64_t mx_case(enum gg_op op, int64_t groups, const int64_t *lens, int64_t m, int64_t n,
                       int64_t k)
{
    struct ref_case t;
    make(&t, op, GG_LAYOUT_NK, groups, lens, m, n, k, 1, GG_DTYPE_E4M3, GG_SCALING_MX);
    alloc_operands(&t, 0);
    fill_operands(&t);
    int64_t kb = k / GG_MX_BLOCK;
    t.mxa[0 * kb + kb - 1] = 0xFF; /* row 0 of A: NaN scale in its last block */
    t.mxa[1 * kb + 0] = 0x00;      /* 2^-127 */
    t.mxa[1 * kb + kb - 1] = 0xFE; /* 2^127 in the same row */
    t.mxb[2 * kb + 0] = 0xFF;      /* column 2 of the first B matrix */
    t.mxb[1 * kb + 0] = 0xFE;
    t.mxb[0 * kb + kb - 1] = 0x00;
    int64_t nans = run_and_compare(&t, 0);
    ref_case_free(&t);
    return nans;
}

Test(reference_gemm, mx_e4m3_with_edge_scales)
{
    static const int64_t lens[3] = {2, 0, 3};
    /* fwd: row 0 (group 0) is NaN across n = 4 columns, column 2 of group 0 adds one more. */
    cr_expect_eq(mx_case(GG_OP_GROUPED_FWD, 3, lens, 0, 4, 64), 4 + 1);
    cr_expect_eq(mx_case(GG_OP_DENSE, 1, NULL, 3, 4, 96), 4 + 2);
    cr_expect_eq(mx_case(GG_OP_BATCHED, 2, NULL, 3, 4, 64), 4 + 2);
    cr_expect_eq(mx_case(GG_OP_DENSE, 1, NULL, 3, 4, 1056), 4 + 2); /* several K chunks */
}

Test(reference_gemm, rejects_missing_scales_and_huge_groups)
{
    struct ref_case t;
    make(&t, GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 2, 3, 32, 0, GG_DTYPE_E4M3, GG_SCALING_MX);
    alloc_operands(&t, 0);
    t.o.b_scale = NULL;
    char err[256] = "";
    cr_expect_eq(gg_ref_gemm(&t.p, &t.o, t.c, NULL, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    ref_case_free(&t);

    /* More rows than a BLAS int holds: refused before anything is read or allocated. */
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .groups = 1, .m = INT64_C(1) << 31, .n = 1, .k = 1};
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    uint16_t dummy = 0;
    struct gg_operands o = {.a = &dummy, .b = &dummy};
    double c;
    err[0] = '\0';
    cr_expect_eq(gg_ref_gemm(&p, &o, &c, NULL, err, sizeof err), GG_E_NOMEM);
    cr_expect_neq(err[0], '\0');
}

/* The single-vector paths (gather, MPFR exact value, certification) on the last block of group
   g, which is the last block of the packed output; the data are integers, so the reference
   output is exact. */
static void check_single_outputs(struct ref_case *t, int64_t g)
{
    struct gg_out_block bl;
    gg_problem_out_block(&t->p, g, &bl);
    int64_t last = t->out - 1;
    cr_assert_eq(gg_ref_exact(&t->p, &t->o, g, bl.rows - 1, bl.cols - 1), t->c[last]);
    cr_assert_eq(gg_ref_exact(&t->p, &t->o, g, 0, 0), t->c[last - bl.rows * bl.cols + 1]);
    int64_t first = 0;
    cr_assert_eq(gg_ref_certify(&t->p, &t->o, t->c, t->abs, 8, 1, &first), 0);
}

/* Checks t's problem, whose B spans more than 2^31 elements, runs it with B a sparse mapping,
   compares every output and the single-output paths on the last block of group g. */
static void run_past_2_pow_31(struct ref_case *t, int64_t g)
{
    char err[256] = "";
    cr_assert_eq(gg_problem_check(&t->p, err, sizeof err), GG_OK, "%s", err);
    cr_assert_gt(gg_problem_b_span(&t->p), INT64_C(1) << 31);
    alloc_operands(t, 1);
    fill_operands(t);
    cr_assert_eq(run_and_compare(t, 1), 0);
    check_single_outputs(t, g);
    ref_case_free(t);
}

/*
 * 64-bit offsets: W of a grouped fwd problem spans more than 2^31 elements (G·N·K ≈ 2.15e9 bf16,
 * 4.3 GB of address space) and only the last group has tokens. W is a sparse mapping of which only
 * the last group's 1 MB slice is written, so the test touches a few MB of real memory.
 */
Test(reference_gemm, fwd_past_2_pow_31)
{
    enum { G = 4100 };
    static int64_t lens[G];
    lens[G - 1] = 8;
    struct ref_case t;
    memset(&t, 0, sizeof t);
    t.rng = 99;
    int64_t offs[G + 1] = {0};
    for (int64_t g = 0; g < G; g++)
        offs[g + 1] = offs[g] + lens[g];
    t.p = (struct gg_problem){.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                              .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_F32,
                              .acc_dtype = GG_DTYPE_F32, .groups = G, .n = 512, .k = 1024,
                              .group_lens = lens, .group_offs = offs};
    run_past_2_pow_31(&t, G - 1);
}

/* The same for wgrad with a long leading dimension of X: the last group's rows lie past element
   2^31 of X (one page per row is touched). */
Test(reference_gemm, wgrad_past_2_pow_31)
{
    static const int64_t lens[3] = {0, 512, 6};
    struct ref_case t;
    make(&t, GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, lens, 0, 3, 4, 0, GG_DTYPE_BF16,
         GG_SCALING_NONE);
    t.p.ldb = INT64_C(1) << 22;
    run_past_2_pow_31(&t, 2);
}

/* ---- special inputs ------------------------------------------------------------------------ */

/* A code of dt that is special (Inf, NaN of either sign, ±0) with probability 1/rate, else a
   small finite one (bf16 integers in [-8, 8], any finite 8-bit code). */
static uint32_t special_or_small(struct ref_case *t, enum gg_dtype dt, uint64_t rate)
{
    static const uint32_t BF16[] = {0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x8000, 0x0000};
    static const uint32_t E5M2[] = {0x7C, 0xFC, 0x7D, 0xFF, 0x80, 0x00};
    static const uint32_t E4M3[] = {0x7F, 0xFF, 0x7F, 0xFF, 0x80, 0x00};
    uint64_t r = splitmix64(&t->rng);
    if (r % rate != 0)
        return random_code(t, dt);
    const uint32_t *v = dt == GG_DTYPE_BF16 ? BF16 : dt == GG_DTYPE_E5M2 ? E5M2 : E4M3;
    return v[(r >> 8) % 6];
}

static void special_case(enum gg_op op, enum gg_layout layout, int64_t groups,
                         const int64_t *lens, int64_t m, int64_t n, int64_t k, enum gg_dtype dt,
                         enum gg_scaling scaling)
{
    /* about one special per two reduction vectors for long ones: some outputs stay finite */
    uint64_t rate = k > 16 ? 2 * (uint64_t)k : 8;
    struct ref_case t;
    make(&t, op, layout, groups, lens, m, n, k, 1, dt, scaling);
    alloc_operands(&t, 0);
    for (int64_t g = 0; g < t.p.groups; g++) {
        struct gg_out_block bl;
        gg_problem_out_block(&t.p, g, &bl);
        for (int64_t v = 0; v < bl.rows; v++)
            for (int64_t r = 0; r < bl.red; r++)
                ref_put_code(dt, t.a, elem_index(&t.p, 0, g, v, r),
                             special_or_small(&t, dt, rate));
        for (int64_t v = 0; v < bl.cols; v++)
            for (int64_t r = 0; r < bl.red; r++)
                ref_put_code(dt, t.b, elem_index(&t.p, 1, g, v, r),
                             special_or_small(&t, dt, rate));
    }
    int64_t special = run_and_compare(&t, dt == GG_DTYPE_BF16);
    cr_expect_gt(special, 0, "op %d: no special output", (int)op);
    cr_expect_lt(special, t.out, "op %d: no finite output", (int)op);
    ref_case_free(&t);
}

/* Every op and layout (vector-major and reduction-major chunks), bf16, scaled e5m2 and e4m3 (no
   Inf: its NaN codes), and a reduction over several chunks of the reference. */
Test(reference_gemm, special_inputs_give_ieee_results)
{
    static const int64_t lens[3] = {5, 0, 6};
    const enum gg_dtype bf = GG_DTYPE_BF16, e5 = GG_DTYPE_E5M2;
    special_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 7, 9, bf, GG_SCALING_NONE);
    special_case(GG_OP_GROUPED_DGRAD, GG_LAYOUT_NK, 3, lens, 0, 7, 9, bf, GG_SCALING_NONE);
    special_case(GG_OP_GROUPED_WGRAD, GG_LAYOUT_NK, 3, lens, 0, 7, 9, bf, GG_SCALING_NONE);
    special_case(GG_OP_BATCHED, GG_LAYOUT_KN, 2, NULL, 4, 7, 9, bf, GG_SCALING_NONE);
    special_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 6, 5, 700, bf, GG_SCALING_NONE);
    special_case(GG_OP_GROUPED_FWD, GG_LAYOUT_NK, 3, lens, 0, 7, 9, e5, GG_SCALING_TENSOR);
    special_case(GG_OP_BATCHED, GG_LAYOUT_NK, 2, NULL, 4, 7, 9, GG_DTYPE_E4M3, GG_SCALING_TENSOR);
    special_case(GG_OP_DENSE, GG_LAYOUT_NK, 1, NULL, 4, 5, 64, e5, GG_SCALING_MX);
}

/* One dense output of k bf16 terms a[t]·b[t] (+ an f32 bias when bias is not NULL); *abs gets
   Σ|ab| (+ |bias|). */
static double dense_bf16(const float *a, const float *b, int64_t k, const float *bias,
                         double *abs)
{
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .c_dtype = GG_DTYPE_F32, .acc_dtype = GG_DTYPE_F32, .groups = 1,
                           .m = 1, .n = 1, .k = k,
                           .bias_dtype = bias ? GG_DTYPE_F32 : GG_DTYPE_NONE};
    char err[256] = "";
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    uint16_t ca[8], cb[8];
    for (int64_t t = 0; t < k; t++) {
        ca[t] = (uint16_t)ref_bf16_bits(a[t]);
        cb[t] = (uint16_t)ref_bf16_bits(b[t]);
    }
    struct gg_operands o = {.a = ca, .b = cb, .bias = bias};
    double c = 0;
    cr_assert_eq(gg_ref_gemm(&p, &o, &c, abs, err, sizeof err), GG_OK, "%s", err);
    double exact = gg_ref_exact(&p, &o, 0, 0, 0);
    cr_assert(memcmp(&c, &exact, sizeof c) == 0 || (isnan(c) && isnan(exact)),
              "MPFR exact %a, reference %a", exact, c);
    return c;
}

/* Σ|ab| takes a subnormal factor at its format's smallest normal (the exponent a tensor core
   aligns its product by), the sum itself the exact value; normal and zero factors as they are. */
Test(reference_gemm, subnormal_factors_count_at_their_alignment_magnitude)
{
    const float a[4] = {0x1.fep127f, 1.0f, 0x1p-130f, 3.0f};
    const float b[4] = {0x1p-133f, -0.5f, 4.0f, 0.0f};
    double abs = 0;
    double c = dense_bf16(a, b, 4, NULL, &abs);
    cr_expect_eq(c, 0x1.fep127 * 0x1p-133 - 0.5 + 0x1p-128, "%a", c);
    cr_expect_eq(abs, 0x1.fep127 * 0x1p-126 + 0.5 + 0x1p-126 * 4.0, "%a", abs);
    const float n[2] = {0x1p-126f, -2.0f}, m[2] = {3.0f, 0x1p-20f};
    dense_bf16(n, m, 2, NULL, &abs);
    cr_expect_eq(abs, 0x1p-126 * 3.0 + 0x1p-19, "normal factors as they are: %a", abs);
}

Test(reference_gemm, inf_times_zero_inf_minus_inf_and_negative_zero_sums)
{
    const float inf = INFINITY, nan = NAN;
    double abs;
    /* Inf·0 is NaN whatever the other terms; the finite terms' Σ|ab| is kept. */
    cr_expect(isnan(dense_bf16((float[]){inf, 2}, (float[]){0, 3}, 2, NULL, &abs)));
    cr_expect_eq(abs, 6.0);
    /* Inf - Inf is NaN; Inf + finite and -Inf + finite keep the sign of the product. */
    cr_expect(isnan(dense_bf16((float[]){inf, inf}, (float[]){1, -1}, 2, NULL, &abs)));
    cr_expect_eq(abs, 0.0);
    cr_expect_eq(dense_bf16((float[]){inf, 1}, (float[]){-2, 5}, 2, NULL, &abs), -INFINITY);
    cr_expect_eq(abs, 5.0);
    cr_expect_eq(dense_bf16((float[]){-inf, -inf}, (float[]){-1, -2}, 2, NULL, &abs), INFINITY);
    /* NaN propagates, also against Inf. */
    cr_expect(isnan(dense_bf16((float[]){nan, inf}, (float[]){1, 1}, 2, NULL, &abs)));
    /* Sums of -0 terms are -0; one +0 term (or a +0 bias) makes +0; a -0 bias keeps -0. */
    double z = dense_bf16((float[]){-0.0f, 0.0f, -0.0f}, (float[]){1, -2, 3}, 3, NULL, &abs);
    cr_expect(z == 0 && signbit(z), "%g", z);
    cr_expect_eq(abs, 0.0);
    z = dense_bf16((float[]){-0.0f, 0.0f}, (float[]){1, 2}, 2, NULL, &abs);
    cr_expect(z == 0 && !signbit(z), "%g", z);
    z = dense_bf16((float[]){-0.0f}, (float[]){1}, 1, (float[]){-0.0f}, &abs);
    cr_expect(z == 0 && signbit(z), "%g", z);
    z = dense_bf16((float[]){-0.0f}, (float[]){1}, 1, (float[]){0.0f}, &abs);
    cr_expect(z == 0 && !signbit(z), "%g", z);
    /* Exact cancellation of finite terms is +0, as IEEE addition gives it. */
    z = dense_bf16((float[]){2, -2}, (float[]){3, 3}, 2, NULL, &abs);
    cr_expect(z == 0 && !signbit(z), "%g", z);
}

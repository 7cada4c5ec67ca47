/*
 * ref_fixture.h — one reference-GEMM case for the reference tests: a checked problem over the
 * case's own group arrays, its operands and scales wired into gg_operands, room for the
 * reference's packed outputs and Σ|ab|, and its release. Each test fills the operands its own
 * way (the data decide whether sums are exact); the fixture builds and owns the buffers, and
 * gives the tests' own reading of the storage formats (codes in memory, NaN codes, E8M0) and the
 * comparison of one reference output with a naive sum.
 */
#ifndef REF_FIXTURE_H
#define REF_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "reference/gg_ref.h"
#include "splitmix.h"

#define REF_MAX_G 8

struct ref_case {
    struct gg_problem p;
    int64_t lens[REF_MAX_G], offs[REF_MAX_G + 1];
    void *a, *b;
    size_t b_bytes;
    int b_mapped;       /* b is an anonymous mapping of b_bytes, else heap memory */
    float sa, sb;       /* tensor scales (the caller's values) */
    float sb_mats[REF_MAX_G]; /* sb repeated for each matrix of B (the recipe's b_scale) */
    uint8_t *mxa, *mxb; /* MX scales (E8M0 codes) */
    struct gg_operands o;
    double *c, *abs; /* the reference's packed outputs and Σ|ab| */
    int64_t out;     /* number of packed outputs */
    uint64_t rng;    /* splitmix64 state of the case's random data */
};

/* Zeroes t and sets up a checked problem: dt inputs, f32 output and accumulator, the group
   lengths lens (read for the grouped ops only) with their prefix sums, every leading dimension
   and stride packed. */
static inline void ref_case_init(struct ref_case *t, uint64_t seed, enum gg_op op,
                                 enum gg_layout layout, int64_t groups, const int64_t *lens,
                                 int64_t m, int64_t n, int64_t k, enum gg_dtype dt,
                                 enum gg_scaling scaling)
{
    memset(t, 0, sizeof *t);
    t->rng = seed;
    t->p = (struct gg_problem){.op = op, .a_dtype = dt, .b_dtype = dt, .c_dtype = GG_DTYPE_F32,
                               .acc_dtype = GG_DTYPE_F32, .scaling = scaling, .b_layout = layout,
                               .groups = groups, .m = m, .n = n, .k = k};
    if (op <= GG_OP_GROUPED_WGRAD) {
        cr_assert_leq(groups, REF_MAX_G);
        for (int64_t g = 0; g < groups; g++) {
            t->lens[g] = lens[g];
            t->offs[g + 1] = t->offs[g] + lens[g];
        }
        t->p.group_lens = t->lens;
        t->p.group_offs = t->offs;
    }
    char err[256] = "";
    cr_assert_eq(gg_problem_check(&t->p, err, sizeof err), GG_OK, "%s", err);
}

/* Points the operands' scales at the case's: sa and sb (one per matrix of B) for tensor
   scaling; for MX, scale codes drawn uniformly from [mx_lo, mx_lo + mx_span), one spare byte
   past each array. */
static inline void ref_case_scales(struct ref_case *t, unsigned mx_lo, unsigned mx_span)
{
    if (t->p.scaling == GG_SCALING_TENSOR) {
        cr_assert_leq(gg_problem_b_mats(&t->p), REF_MAX_G);
        for (int64_t i = 0; i < gg_problem_b_mats(&t->p); i++)
            t->sb_mats[i] = t->sb;
        t->o.a_scale = &t->sa;
        t->o.b_scale = t->sb_mats;
    } else if (t->p.scaling == GG_SCALING_MX) {
        int64_t na = gg_problem_a_scale_count(&t->p), nb = gg_problem_b_scale_count(&t->p);
        t->mxa = malloc((size_t)na + 1);
        t->mxb = malloc((size_t)nb + 1);
        cr_assert(t->mxa && t->mxb);
        for (int64_t i = 0; i < na; i++)
            t->mxa[i] = (uint8_t)(mx_lo + splitmix64(&t->rng) % mx_span);
        for (int64_t i = 0; i < nb; i++)
            t->mxb[i] = (uint8_t)(mx_lo + splitmix64(&t->rng) % mx_span);
        t->o.a_scale = t->mxa;
        t->o.b_scale = t->mxb;
    }
}

/* Room for the packed outputs and Σ|ab| (one spare element each). */
static inline void ref_case_outputs(struct ref_case *t)
{
    t->out = gg_problem_out_elems(&t->p);
    t->c = malloc((size_t)(t->out + 1) * sizeof(double));
    t->abs = malloc((size_t)(t->out + 1) * sizeof(double));
    cr_assert(t->c && t->abs);
}

/* The reference GEMM into c and abs, over a sentinel in every output: each must be written. */
static inline void ref_case_run(struct ref_case *t)
{
    char err[256] = "";
    for (int64_t i = 0; i < t->out; i++)
        t->c[i] = t->abs[i] = 1e300;
    cr_assert_eq(gg_ref_gemm(&t->p, &t->o, t->c, t->abs, err, sizeof err), GG_OK, "%s", err);
}

static inline void ref_case_free(struct ref_case *t)
{
    free(t->a);
    if (t->b_mapped)
        munmap(t->b, t->b_bytes);
    else
        free(t->b);
    free(t->mxa);
    free(t->mxb);
    free(t->c);
    free(t->abs);
}

/* ---- storage formats, read the tests' own way --------------------------------------------- */

/* Code i of an array of dt: 32-, 16- and 8-bit codes whole, 4-bit codes two to a byte, the
   even element in the low nibble. */
static inline uint32_t ref_code_at(enum gg_dtype dt, const void *base, int64_t i)
{
    switch (gg_dtype_bits(dt)) {
    case 32: return ((const uint32_t *)base)[i];
    case 16: return ((const uint16_t *)base)[i];
    case 8: return ((const uint8_t *)base)[i];
    default: return (((const uint8_t *)base)[i / 2] >> (4 * (i % 2))) & 0xF;
    }
}

static inline void ref_put_code(enum gg_dtype dt, void *base, int64_t i, uint32_t code)
{
    switch (gg_dtype_bits(dt)) {
    case 32: ((uint32_t *)base)[i] = code; break;
    case 16: ((uint16_t *)base)[i] = (uint16_t)code; break;
    case 8: ((uint8_t *)base)[i] = (uint8_t)code; break;
    default: {
        uint8_t *q = (uint8_t *)base + i / 2;
        int sh = 4 * (int)(i % 2);
        *q = (uint8_t)((*q & ~(0xF << sh)) | ((code & 0xF) << sh));
    }
    }
}

/* The bf16 code of f cut to its top 16 bits (exact for values with 8 significant bits). */
static inline uint32_t ref_bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u >> 16;
}

/* A NaN code of dt (bf16 or an 8-bit format). */
static inline uint32_t ref_nan_code(enum gg_dtype dt)
{
    if (dt == GG_DTYPE_BF16)
        return 0x7FC0;
    for (uint32_t c = 0; c < 256; c++)
        if (isnan(gg_decode(dt, c)))
            return c;
    cr_assert_fail("%s has no NaN code", gg_dtype_name(dt));
    return 0;
}

/* A random finite code of an 8- or 4-bit format. */
static inline uint32_t ref_random_finite_code(uint64_t *rng, enum gg_dtype dt)
{
    uint32_t mask = (1u << gg_dtype_bits(dt)) - 1;
    for (;;) {
        uint32_t c = (uint32_t)(splitmix64(rng) & mask);
        if (isfinite(gg_decode(dt, c)))
            return c;
    }
}

/* n codes of dt drawn by draw from *rng, in an array with two spare bytes. */
static inline void *ref_random_codes(uint64_t *rng, enum gg_dtype dt, int64_t n,
                                     uint32_t (*draw)(uint64_t *, enum gg_dtype))
{
    void *buf = calloc((size_t)gg_dtype_bytes(dt, n > 0 ? n : 1) + 2, 1);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++)
        ref_put_code(dt, buf, i, draw(rng, dt));
    return buf;
}

/* The value of an E8M0 scale: 2^(code - 127), NaN for 0xFF. */
static inline long double ref_e8m0(uint8_t code)
{
    return code == 0xFF ? (long double)NAN : ldexpl(1.0L, (int)code - 127);
}

/* ---- comparing with a naive sum ------------------------------------------------------------ */

/* γ_n(2^-53) = n·2^-53 / (1 - n·2^-53). */
static inline double ref_gamma53(int64_t n)
{
    double nu = (double)n * 0x1p-53;
    return nu / (1 - nu);
}

/* The smallest normal of the formats a tensor core takes, from their definitions (0 for fp32 and
   fp64); the reference's Σ|ab| counts a subnormal factor at it (its alignment magnitude). */
static inline long double ref_min_normal(enum gg_dtype dt)
{
    switch (dt) {
    case GG_DTYPE_BF16: return 0x1p-126L;
    case GG_DTYPE_F16: return 0x1p-14L;
    case GG_DTYPE_E4M3: return 0x1p-6L;
    case GG_DTYPE_E5M2: return 0x1p-14L;
    case GG_DTYPE_E4M3FNUZ: return 0x1p-7L;
    case GG_DTYPE_E5M2FNUZ: return 0x1p-15L;
    case GG_DTYPE_E2M1: return 1.0L;
    default: return 0.0L;
    }
}

/* The alignment magnitude of an unscaled code value x of dt: |x|, or the smallest normal for a
   non-zero subnormal x. */
static inline long double ref_align_mag(enum gg_dtype dt, long double x)
{
    long double m = fabsl(x), lo = ref_min_normal(dt);
    return m < lo && m != 0 ? lo : m;
}

/* A naive sum in long double of the products of one output: s = Σ ab (+ bias), sa = Σ|ab|
   (+ |bias|), over terms additions. */
struct ref_naive {
    long double s, sa;
    int64_t terms;
};

/* Asserts that output pos of t (c and abs), element (r, col) of group g, is the naive sum nv: a
   NaN on both sides or on neither; bitwise when exact (the data make every sum exact in
   double), else within the dgemm bound 2·γ_terms·Σ|ab|. Returns 1 for a NaN output, else 0. */
static inline int ref_expect_naive(const struct gg_problem *p, const double *c,
                                   const double *abs, int64_t pos, int64_t g, int64_t r,
                                   int64_t col, struct ref_naive nv, int exact)
{
    double got = c[pos], want = (double)nv.s;
    if (isnan(want) || isnan(got)) {
        cr_assert(isnan(want) && isnan(got), "op %d g %lld (%lld,%lld): %g vs %g", (int)p->op,
                  (long long)g, (long long)r, (long long)col, got, want);
        return 1;
    }
    if (exact) {
        cr_assert_eq(got, want, "op %d g %lld (%lld,%lld): %.17g vs %.17g", (int)p->op,
                     (long long)g, (long long)r, (long long)col, got, want);
        cr_assert_eq(abs[pos], (double)nv.sa, "abs at %lld", (long long)pos);
        return 0;
    }
    double tol = 2 * ref_gamma53(nv.terms) * (double)nv.sa + 0x1p-1074;
    cr_assert_leq(fabs(got - want), tol, "op %d g %lld (%lld,%lld): %.17g vs %.17g", (int)p->op,
                  (long long)g, (long long)r, (long long)col, got, want);
    cr_assert_leq(fabs(abs[pos] - (double)nv.sa), tol, "abs at %lld: %.17g vs %.17g",
                  (long long)pos, abs[pos], (double)nv.sa);
    return 0;
}

#endif /* REF_FIXTURE_H */

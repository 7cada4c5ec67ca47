/*
 * The reference under the scaling recipes of the ABI, the bias and the moe sorted op, against a
 * naive loop written here from gg_decode and the tables of gg_kernel.h: tensor scales per matrix
 * of B, BLOCK128 with a partial last K group, weight-only MX (bf16 x e2m1) and MX with NaN and
 * extreme E8M0 scales, ROWWISE on every op (wgrad per (group, column)), BLOCKWISE 1x128 /
 * 128x128 with tail blocks (dgrad reading W's blocks transposed), a small rowwise and blockwise
 * case computed by hand, bias in bf16 and fp32, and fused-MoE routings with padding ids (which
 * point at NaN rows of X, so reading one shows), experts without tokens and experts out of
 * order. Every case is also certified against MPFR.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "moe_routing.h"
#include "ref_fixture.h"

#define MAXG REF_MAX_G

struct spec {
    enum gg_op op;
    enum gg_layout layout;
    int64_t groups;
    int64_t lens[MAXG]; /* grouped ops */
    int64_t m, n, k;    /* m: batched, dense */
    enum gg_dtype a_dt, b_dt, bias_dt;
    enum gg_scaling scaling;
    int64_t pad;         /* extra elements per row of A */
    struct moe_spec moe; /* moe sorted: experts, tokens, ... (groups and m come from here) */
    uint64_t seed;
};

/* A case: the problem, operands, E8M0 scales (mxa, mxb) and outputs in base; the recipe's own
   fp32 scales, bias and routing here. */
struct rc {
    struct ref_case base;
    struct spec s;
    struct moe_routing rt;
    void *bias;
    float *fa, *fb; /* fp32 scales (TENSOR, BLOCK128, ROWWISE, BLOCKWISE) */
    int64_t na, nb; /* scale counts, derived here from the recipe table */
};

/* ---- storage and values, written from the format definitions ---------------------------- */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A random finite code: 16/32-bit floats from [-4, 4) (bf16 keeps 8 bits), any finite code of
   an 8- or 4-bit format. */
static uint32_t random_code(uint64_t *rng, enum gg_dtype dt)
{
    int bits = gg_dtype_bits(dt);
    if (bits >= 16) {
        uint32_t u = float_bits((float)(8.0 * (double)(splitmix64(rng) >> 11) * 0x1p-53 - 4.0));
        return bits == 16 ? u >> 16 : u;
    }
    return ref_random_finite_code(rng, dt);
}

/* ---- geometry, from the tables of gg_kernel.h --------------------------------------------- */

static int grouped(enum gg_op op)
{
    return op <= GG_OP_GROUPED_WGRAD;
}

/* Matrices of B (and of B's tensor scales, MX scale planes and bias rows). */
static int64_t mats(const struct rc *t)
{
    const struct gg_problem *p = &t->base.p;
    return p->op == GG_OP_GROUPED_WGRAD || p->op == GG_OP_DENSE ? 1 : p->groups;
}

static int64_t mat_of(const struct rc *t, int64_t g)
{
    return mats(t) == 1 ? 0 : g;
}

/* Output block of group g: rows x cols, reduction length red. */
static void dims(const struct rc *t, int64_t g, int64_t *rows, int64_t *cols, int64_t *red)
{
    const struct gg_problem *p = &t->base.p;
    switch (p->op) {
    case GG_OP_GROUPED_FWD: *rows = t->s.lens[g], *cols = p->n, *red = p->k; break;
    case GG_OP_GROUPED_DGRAD: *rows = t->s.lens[g], *cols = p->k, *red = p->n; break;
    case GG_OP_GROUPED_WGRAD: *rows = p->n, *cols = p->k, *red = t->s.lens[g]; break;
    case GG_OP_MOE_SORTED: *rows = t->rt.loads[g], *cols = p->n, *red = p->k; break;
    default: *rows = p->m, *cols = p->n, *red = p->k; break;
    }
}

/* The row of A (counted across batches; moe: the token) read by row vector v of group g. */
static int64_t a_row(const struct rc *t, int64_t g, int64_t v)
{
    switch (t->base.p.op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD: return t->base.offs[g] + v;
    case GG_OP_BATCHED: return g * t->base.p.m + v;
    case GG_OP_MOE_SORTED: return t->rt.valid[t->rt.first[g] + v] / t->base.p.topk;
    default: return v;
    }
}

/* Element index of entry j of reduction vector v of side which in group g. */
static int64_t elem_index(const struct rc *t, int which, int64_t g, int64_t v, int64_t j)
{
    const struct gg_problem *p = &t->base.p;
    switch (p->op) {
    case GG_OP_GROUPED_DGRAD:
        return which ? g * p->stride_b + j * p->ldb + v : a_row(t, g, v) * p->lda + j;
    case GG_OP_GROUPED_WGRAD:
        return which ? (t->base.offs[g] + j) * p->ldb + v : (t->base.offs[g] + j) * p->lda + v;
    case GG_OP_BATCHED:
        if (!which)
            return g * p->stride_a + v * p->lda + j;
        return p->b_layout == GG_LAYOUT_KN ? g * p->stride_b + j * p->ldb + v
                                           : g * p->stride_b + v * p->ldb + j;
    case GG_OP_DENSE: return which ? v * p->ldb + j : v * p->lda + j;
    default: /* grouped fwd, moe */
        return which ? g * p->stride_b + v * p->ldb + j : a_row(t, g, v) * p->lda + j;
    }
}

/* Dequantised entry j of vector v of side which in group g, by the scale table of gg_kernel.h. */
/* Dequantised element j of vector v of side which in group g; with mag, its alignment magnitude
   (ref_align_mag of the code, times the scale) as Σ|ab| counts it. */
static long double value(const struct rc *t, int which, int64_t g, int64_t v, int64_t j, int mag)
{
    const struct gg_problem *p = &t->base.p;
    enum gg_dtype dt = which ? p->b_dtype : p->a_dtype;
    const void *x_codes = which ? t->base.b : t->base.a;
    long double x = gg_decode(dt, ref_code_at(dt, x_codes, elem_index(t, which, g, v, j)));
    if (mag)
        x = ref_align_mag(dt, x);
    int64_t kb32 = p->k / GG_MX_BLOCK, kb128 = (p->k + GG_BLOCK128 - 1) / GG_BLOCK128;
    int64_t nb128 = (p->n + GG_BLOCK128 - 1) / GG_BLOCK128;
    int64_t mat = mat_of(t, g);
    int dgrad = p->op == GG_OP_GROUPED_DGRAD, wgrad = p->op == GG_OP_GROUPED_WGRAD;
    switch (p->scaling) {
    case GG_SCALING_TENSOR: return x * (which ? t->fb[mat] : t->fa[0]);
    case GG_SCALING_ROWWISE: /* v is an output row of A's side, an output column of B's */
        if (!which)
            return x * t->fa[wgrad ? g * p->n + v : a_row(t, g, v)];
        return x * t->fb[wgrad ? g * p->k + v : mat * (dgrad ? p->k : p->n) + v];
    case GG_SCALING_BLOCKWISE: /* dgrad: v is k, j is n; otherwise v is n, j is k */
        if (!which)
            return x * t->fa[a_row(t, g, v) * (dgrad ? nb128 : kb128) + j / GG_BLOCK128];
        if (dgrad)
            return x * t->fb[(mat * nb128 + j / GG_BLOCK128) * kb128 + v / GG_BLOCK128];
        return x * t->fb[(mat * nb128 + v / GG_BLOCK128) * kb128 + j / GG_BLOCK128];
    case GG_SCALING_BLOCK128:
        return x * (which ? t->fb[mat] : t->fa[a_row(t, g, v) * kb128 + j / GG_BLOCK128]);
    case GG_SCALING_MX:
    case GG_SCALING_MX_B:
        if (which)
            return x * ref_e8m0(t->base.mxb[(mat * p->n + v) * kb32 + j / GG_MX_BLOCK]);
        if (p->scaling == GG_SCALING_MX_B)
            return x; /* weight-only: A unscaled */
        return x * ref_e8m0(t->base.mxa[a_row(t, g, v) * kb32 + j / GG_MX_BLOCK]);
    default: return x;
    }
}

static long double bias_of(const struct rc *t, int64_t g, int64_t col)
{
    if (t->base.p.bias_dtype == GG_DTYPE_NONE)
        return 0;
    enum gg_dtype dt = t->base.p.bias_dtype;
    return gg_decode(dt, ref_code_at(dt, t->bias, mat_of(t, g) * t->base.p.n + col));
}

/* ---- building a case ---------------------------------------------------------------------- */

static void *random_array(struct rc *t, enum gg_dtype dt, int64_t n)
{
    return ref_random_codes(&t->base.rng, dt, n, random_code);
}

/* Scales by recipe, counted from the table: fp32 values are random positive floats with full
   24-bit significands, E8M0 codes uniform in 2^-7 .. 2^7; the tensor scale of matrix i of B is
   a distinct non-dyadic value. */
static void make_scales(struct rc *t)
{
    const struct gg_problem *p = &t->base.p;
    int64_t a_rows = p->op == GG_OP_BATCHED ? p->groups * p->m : p->m;
    int64_t kb32 = p->k / GG_MX_BLOCK, kb128 = (p->k + GG_BLOCK128 - 1) / GG_BLOCK128;
    switch (p->scaling) {
    case GG_SCALING_TENSOR:
    case GG_SCALING_BLOCK128:
        t->na = p->scaling == GG_SCALING_TENSOR ? 1 : a_rows * kb128;
        t->nb = mats(t);
        t->fa = malloc((size_t)(t->na + 1) * sizeof(float));
        t->fb = malloc((size_t)(t->nb + 1) * sizeof(float));
        cr_assert(t->fa && t->fb);
        for (int64_t i = 0; i < t->na; i++)
            t->fa[i] = i == 0 ? 0.75f
                              : (float)(0.1 + (double)(splitmix64(&t->base.rng) >> 11) * 0x1p-53);
        for (int64_t i = 0; i < t->nb; i++)
            t->fb[i] = (float)(i + 1) / 3.0f;
        t->base.o.a_scale = t->fa;
        t->base.o.b_scale = t->fb;
        break;
    case GG_SCALING_ROWWISE:
    case GG_SCALING_BLOCKWISE:
        if (p->scaling == GG_SCALING_ROWWISE && p->op == GG_OP_GROUPED_WGRAD) {
            t->na = p->groups * p->n;
            t->nb = p->groups * p->k;
        } else if (p->scaling == GG_SCALING_ROWWISE) {
            t->na = a_rows;
            t->nb = mats(t) * (p->op == GG_OP_GROUPED_DGRAD ? p->k : p->n);
        } else {
            int64_t nb128 = (p->n + GG_BLOCK128 - 1) / GG_BLOCK128;
            t->na = a_rows * (p->op == GG_OP_GROUPED_DGRAD ? nb128 : kb128);
            t->nb = mats(t) * nb128 * kb128;
        }
        t->fa = malloc((size_t)(t->na + 1) * sizeof(float));
        t->fb = malloc((size_t)(t->nb + 1) * sizeof(float));
        cr_assert(t->fa && t->fb);
        for (int64_t i = 0; i < t->na; i++)
            t->fa[i] = (float)(0.1 + (double)(splitmix64(&t->base.rng) >> 11) * 0x1p-53);
        for (int64_t i = 0; i < t->nb; i++)
            t->fb[i] = (float)(0.1 + (double)(splitmix64(&t->base.rng) >> 11) * 0x1p-53);
        t->base.o.a_scale = t->fa;
        t->base.o.b_scale = t->fb;
        break;
    case GG_SCALING_MX:
    case GG_SCALING_MX_B:
        t->na = p->scaling == GG_SCALING_MX ? a_rows * kb32 : 0;
        t->nb = mats(t) * p->n * kb32;
        t->base.mxa = malloc((size_t)t->na + 1);
        t->base.mxb = malloc((size_t)t->nb + 1);
        cr_assert(t->base.mxa && t->base.mxb);
        for (int64_t i = 0; i < t->na; i++)
            t->base.mxa[i] = (uint8_t)(120 + splitmix_below(&t->base.rng, 15));
        for (int64_t i = 0; i < t->nb; i++)
            t->base.mxb[i] = (uint8_t)(120 + splitmix_below(&t->base.rng, 15));
        t->base.o.a_scale = p->scaling == GG_SCALING_MX ? t->base.mxa : NULL;
        t->base.o.b_scale = t->base.mxb;
        break;
    default: break;
    }
    cr_assert_eq(gg_problem_a_scale_count(p), t->na);
    cr_assert_eq(gg_problem_b_scale_count(p), t->nb);
}

static void make(struct rc *t, const struct spec *s)
{
    memset(t, 0, sizeof *t);
    t->s = *s;
    t->base.rng = s->seed;
    struct gg_problem *p = &t->base.p;
    *p = (struct gg_problem){.op = s->op, .a_dtype = s->a_dt, .b_dtype = s->b_dt,
                             .c_dtype = GG_DTYPE_F32, .acc_dtype = GG_DTYPE_F32,
                             .scaling = s->scaling, .b_layout = s->layout, .groups = s->groups,
                             .m = s->m, .n = s->n, .k = s->k, .bias_dtype = s->bias_dt};
    if (grouped(s->op)) {
        for (int64_t g = 0; g < s->groups; g++)
            t->base.offs[g + 1] = t->base.offs[g] + s->lens[g];
        p->group_lens = t->s.lens;
        p->group_offs = t->base.offs;
    } else if (s->op == GG_OP_MOE_SORTED) {
        moe_routing_make(&t->rt, &s->moe);
        moe_routing_problem(&t->rt, &s->moe, p);
    }
    char err[256] = "";
    cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_OK, "%s", err);
    if (s->pad) { /* re-derive the strides with a padded lda */
        p->lda += s->pad;
        p->stride_a = 0;
        cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_OK, "%s", err);
    }
    /* moe: two rows of X past the last token hold NaN codes; the padding ids point there. */
    int64_t extra = s->op == GG_OP_MOE_SORTED ? 2 * p->lda : 0, na = gg_problem_a_span(p);
    t->base.a = random_array(t, p->a_dtype, na + extra);
    for (int64_t i = na; i < na + extra; i++)
        ref_put_code(p->a_dtype, t->base.a, i, ref_nan_code(p->a_dtype));
    t->base.b = random_array(t, p->b_dtype, gg_problem_b_span(p));
    t->base.o = (struct gg_operands){.a = t->base.a, .b = t->base.b};
    if (s->bias_dt != GG_DTYPE_NONE) {
        cr_assert_eq(gg_problem_bias_count(p), mats(t) * p->n);
        t->bias = random_array(t, s->bias_dt, mats(t) * p->n);
        t->base.o.bias = t->bias;
    }
    make_scales(t);
    ref_case_outputs(&t->base);
}

static void rc_free(struct rc *t)
{
    ref_case_free(&t->base);
    free(t->bias);
    free(t->fa);
    free(t->fb);
    moe_routing_free(&t->rt);
}

/* ---- checks ------------------------------------------------------------------------------- */

/* Runs the reference and compares every output and Σ|ab| (+|bias|) with the naive loop in
   long double, within the dgemm bound over red + 2 terms; NaN outputs must match. Then certifies
   the result against MPFR (with and without abs). Returns the number of NaN outputs. */
static int64_t check(struct rc *t)
{
    ref_case_run(&t->base);
    const struct gg_problem *p = &t->base.p;
    int64_t pos = 0, nans = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        int64_t rows, cols, red;
        dims(t, g, &rows, &cols, &red);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t col = 0; col < cols; col++, pos++) {
                struct ref_naive nv = {bias_of(t, g, col), 0, red + 2};
                nv.sa = fabsl(nv.s);
                for (int64_t j = 0; j < red; j++) {
                    nv.s += value(t, 0, g, r, j, 0) * value(t, 1, g, col, j, 0);
                    nv.sa += fabsl(value(t, 0, g, r, j, 1) * value(t, 1, g, col, j, 1));
                }
                nans += ref_expect_naive(p, t->base.c, t->base.abs, pos, g, r, col, nv, 0);
            }
    }
    cr_assert_eq(pos, t->base.out);
    int64_t first = 0;
    cr_assert_eq(gg_ref_certify(p, &t->base.o, t->base.c, t->base.abs, 48, t->s.seed, &first), 0,
                 "certify: first bad at %lld", (long long)first);
    cr_assert_eq(gg_ref_certify(p, &t->base.o, t->base.c, NULL, 16, t->s.seed + 1, &first), 0);
    return nans;
}

/* One case from s: built, checked, freed. Returns its NaN outputs. */
static int64_t check_spec(const struct spec *s)
{
    struct rc t;
    make(&t, s);
    int64_t nans = check(&t);
    rc_free(&t);
    return nans;
}

/* The default moe routing of the tests: 6 experts, expert 1 idle with a padding block, expert 4
   idle without one, blocks in descending order. */
static struct moe_spec moe_default(int64_t tokens, int64_t topk, int64_t block_m)
{
    return (struct moe_spec){.experts = 6, .tokens = tokens, .topk = topk, .block_m = block_m,
                             .idle = 1u << 1 | 1u << 4, .padding_only = 1u << 1,
                             .descending = 1, .seed = 4242};
}

/* Routes a moe spec by moe: its experts are the groups, its tokens the rows of X. */
static void set_moe(struct spec *s, struct moe_spec moe)
{
    s->moe = moe;
    s->groups = moe.experts;
    s->m = moe.tokens;
}

static struct spec spec_of(enum gg_op op, int64_t n, int64_t k, enum gg_dtype a_dt,
                           enum gg_dtype b_dt, enum gg_scaling scaling)
{
    struct spec s = {.op = op, .layout = GG_LAYOUT_NK, .groups = 3, .lens = {3, 0, 4}, .m = 3,
                     .n = n, .k = k, .a_dt = a_dt, .b_dt = b_dt, .scaling = scaling, .pad = 2,
                     .moe = moe_default(5, 2, 4), .seed = 1000u + (uint64_t)op * 31u + (uint64_t)k};
    if (op == GG_OP_DENSE)
        s.groups = 1;
    if (op == GG_OP_MOE_SORTED)
        set_moe(&s, s.moe);
    return s;
}

/* spec_of() the moe op under the routing moe. */
static struct spec moe_spec_of(int64_t n, int64_t k, enum gg_dtype a_dt, enum gg_dtype b_dt,
                               enum gg_scaling scaling, struct moe_spec moe)
{
    struct spec s = spec_of(GG_OP_MOE_SORTED, n, k, a_dt, b_dt, scaling);
    set_moe(&s, moe);
    return s;
}

/* ---- tests -------------------------------------------------------------------------------- */

Test(reference_recipes, tensor_scale_per_matrix_every_op)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD,
                              GG_OP_BATCHED, GG_OP_DENSE, GG_OP_MOE_SORTED};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int layout = GG_LAYOUT_NK; layout <= GG_LAYOUT_KN; layout++) {
            if (layout == GG_LAYOUT_KN && ops[i] != GG_OP_BATCHED)
                continue;
            struct spec s = spec_of(ops[i], 5, 19, GG_DTYPE_E4M3, GG_DTYPE_E4M3,
                                    GG_SCALING_TENSOR);
            s.layout = (enum gg_layout)layout;
            cr_expect_eq(check_spec(&s), 0);
        }
}

/* Doubling the tensor scale of one matrix of B doubles exactly the block of that group (or
   expert) and leaves every other block bitwise unchanged. */
Test(reference_recipes, tensor_scale_belongs_to_one_matrix)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_BATCHED, GG_OP_MOE_SORTED};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        struct rc t;
        struct spec s = spec_of(ops[i], 4, 40, GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_SCALING_TENSOR);
        make(&t, &s);
        ref_case_run(&t.base);
        double *before = malloc((size_t)t.base.out * sizeof(double) + 1);
        cr_assert_not_null(before);
        memcpy(before, t.base.c, (size_t)t.base.out * sizeof(double));
        int64_t hit = 2; /* group / expert 2 has outputs in every op here */
        t.fb[hit] *= 2;
        ref_case_run(&t.base);
        int64_t pos = 0;
        for (int64_t g = 0; g < t.base.p.groups; g++) {
            int64_t rows, cols, red;
            dims(&t, g, &rows, &cols, &red);
            cr_assert(g != hit || rows * cols > 0);
            for (int64_t i2 = 0; i2 < rows * cols; i2++, pos++)
                cr_assert_eq(t.base.c[pos], g == hit ? 2 * before[pos] : before[pos],
                             "op %d g %lld at %lld", (int)ops[i], (long long)g, (long long)pos);
        }
        free(before);
        rc_free(&t);
    }
}

/* BLOCK128: per-row, per-128-K fp32 scales of A, including K not a multiple of 128 (a partial
   last group) and K past one reference chunk. */
Test(reference_recipes, block128_every_k_op)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_BATCHED, GG_OP_DENSE, GG_OP_MOE_SORTED};
    const int64_t ks[] = {5, 128, 300, 1100};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            struct spec s = spec_of(ops[i], 3, ks[j], GG_DTYPE_E4M3, GG_DTYPE_E4M3,
                                    GG_SCALING_BLOCK128);
            if (j == 2)
                s.a_dt = s.b_dt = GG_DTYPE_E4M3FNUZ;
            cr_expect_eq(check_spec(&s), 0);
        }
}

/* Each K group of a row has its own scale: scaling one of them by 2 doubles exactly that
   group's contribution, visible when the other groups' codes are zero. */
Test(reference_recipes, block128_scale_covers_its_group_only)
{
    struct rc t;
    struct spec s = spec_of(GG_OP_DENSE, 2, 300, GG_DTYPE_E4M3, GG_DTYPE_E4M3,
                            GG_SCALING_BLOCK128);
    s.pad = 0;
    s.m = 2;
    make(&t, &s);
    /* Row 1 of A: codes only in K group 2 (t = 256 .. 299), all other codes +0. */
    for (int64_t j = 0; j < 256; j++)
        ref_put_code(GG_DTYPE_E4M3, t.base.a, 1 * t.base.p.lda + j, 0);
    ref_case_run(&t.base);
    double c0 = t.base.c[1 * 2 + 0], c1 = t.base.c[1 * 2 + 1], r0 = t.base.c[0];
    t.fa[1 * 3 + 2] *= 2;  /* row 1, K group 2 */
    t.fa[1 * 3 + 0] = NAN; /* row 1, K group 0 scales only +0 codes, but 0 x NaN is NaN */
    ref_case_run(&t.base);
    cr_expect(isnan(t.base.c[2]) && isnan(t.base.c[3]), "a NaN scale poisons its row");
    t.fa[1 * 3 + 0] = 1.0f;
    ref_case_run(&t.base);
    cr_expect_eq(t.base.c[1 * 2 + 0], 2 * c0);
    cr_expect_eq(t.base.c[1 * 2 + 1], 2 * c1);
    cr_expect_eq(t.base.c[0], r0, "row 0 has its own scales");
    rc_free(&t);
}

/* ROWWISE on every op and both batched layouts: one fp32 per output row and per output column
   (wgrad per (group, n) and (group, k)), reductions past one reference chunk included. */
Test(reference_recipes, rowwise_every_op)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD,
                              GG_OP_BATCHED, GG_OP_DENSE, GG_OP_MOE_SORTED};
    const int64_t ks[] = {19, 700};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int layout = GG_LAYOUT_NK; layout <= GG_LAYOUT_KN; layout++)
            for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
                if (layout == GG_LAYOUT_KN && ops[i] != GG_OP_BATCHED)
                    continue;
                struct spec s = spec_of(ops[i], 6, ks[j], GG_DTYPE_E4M3, GG_DTYPE_E5M2,
                                        GG_SCALING_ROWWISE);
                s.layout = (enum gg_layout)layout;
                if (ops[i] == GG_OP_GROUPED_WGRAD && j == 1)
                    s.lens[2] = 600; /* a reduction past one chunk */
                cr_expect_eq(check_spec(&s), 0, "op %d layout %d k %lld", (int)ops[i], layout,
                             (long long)ks[j]);
            }
}

/* BLOCKWISE on the ops it is defined for: N and K below, at and past 128 with tail blocks, K
   past one reference chunk; dgrad reads W's 128x128 blocks transposed. */
Test(reference_recipes, blockwise_every_op)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_BATCHED,
                              GG_OP_DENSE, GG_OP_MOE_SORTED};
    const int64_t nk[][2] = {{5, 19}, {130, 128}, {129, 300}, {3, 1100}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof nk / sizeof nk[0]; j++) {
            struct spec s = spec_of(ops[i], nk[j][0], nk[j][1], GG_DTYPE_E4M3FNUZ,
                                    GG_DTYPE_E4M3FNUZ, GG_SCALING_BLOCKWISE);
            cr_expect_eq(check_spec(&s), 0, "op %d n %lld k %lld", (int)ops[i],
                         (long long)nk[j][0], (long long)nk[j][1]);
        }
}

/* A grouped fwd small enough to compute by hand: X [2, 2] and W [1, 2, 2] of e4m3 codes 1.0
   (0x38) and 2.0 (0x40). Rowwise a_scale {0.5, 3}, b_scale {0.25, 4}: Y[i][j] = sa[i]·sb[j]·
   Σ_k x·w. Blockwise with K = 2 (one block) is the same sum times one scale each. */
Test(reference_recipes, fine_recipes_by_hand)
{
    for (int blockwise = 0; blockwise <= 1; blockwise++) {
        struct rc t;
        struct spec s = spec_of(GG_OP_GROUPED_FWD, 2, 2, GG_DTYPE_E4M3, GG_DTYPE_E4M3,
                                blockwise ? GG_SCALING_BLOCKWISE : GG_SCALING_ROWWISE);
        s.groups = 1;
        s.lens[0] = 2;
        s.pad = 0;
        make(&t, &s);
        const uint32_t x[4] = {0x38, 0x40, 0x40, 0x40}, w[4] = {0x40, 0x38, 0x38, 0x38};
        for (int i = 0; i < 4; i++) {
            ref_put_code(GG_DTYPE_E4M3, t.base.a, i, x[i]);
            ref_put_code(GG_DTYPE_E4M3, t.base.b, i, w[i]);
        }
        /* X = [[1, 2], [2, 2]], W = [[2, 1], [1, 1]]: X·Wᵀ = [[4, 3], [6, 4]]. */
        const double xw[2][2] = {{4, 3}, {6, 4}};
        t.fa[0] = 0.5f, t.fa[1] = 3.0f;
        if (blockwise)
            t.fb[0] = 0.25f; /* one 128x128 block: both columns */
        else
            t.fb[0] = 0.25f, t.fb[1] = 4.0f;
        ref_case_run(&t.base);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double sb = blockwise ? 0.25 : (j == 0 ? 0.25 : 4.0);
                cr_expect_eq(t.base.c[i * 2 + j], (i == 0 ? 0.5 : 3.0) * sb * xw[i][j],
                             "blockwise %d: y[%d][%d] = %g", blockwise, i, j,
                             t.base.c[i * 2 + j]);
            }
        rc_free(&t);
    }
}

/* Weight-only MX: bf16 activations (a_scale NULL) times e2m1 weights with E8M0 scales, with
   planted NaN, 2^-127 and 2^127 scales; NaN positions are compared with the naive loop. */
Test(reference_recipes, mx_b_bf16_e2m1)
{
    const enum gg_op ops[] = {GG_OP_DENSE, GG_OP_GROUPED_FWD, GG_OP_BATCHED, GG_OP_MOE_SORTED};
    const int64_t ks[] = {64, 1056};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
            struct rc t;
            struct spec s = spec_of(ops[i], 4, ks[j], GG_DTYPE_BF16, GG_DTYPE_E2M1,
                                    GG_SCALING_MX_B);
            make(&t, &s);
            cr_assert_null(t.base.o.a_scale);
            int64_t kb = ks[j] / GG_MX_BLOCK, last = t.nb / (t.base.p.n * kb) - 1;
            t.base.mxb[2 * kb + kb - 1] = 0xFF;      /* column 2 of matrix 0: NaN */
            t.base.mxb[1 * kb + 0] = 0x00;           /* 2^-127 */
            t.base.mxb[1 * kb + 1] = 0xFE;           /* 2^127 */
            t.base.mxb[(last * t.base.p.n + 3) * kb] = 0xFF; /* column 3 of the last matrix */
            int64_t nans = check(&t);
            /* Column 2 of matrix 0 and column 3 of the last one are NaN in every row that
               reads them. */
            int64_t rows0, rows_last, cols, red;
            dims(&t, 0, &rows0, &cols, &red);
            dims(&t, t.base.p.groups - 1, &rows_last, &cols, &red);
            int64_t want = t.base.p.op == GG_OP_DENSE ? 2 * rows0 : rows0 + rows_last;
            cr_expect_eq(nans, want, "op %d: %lld NaN outputs, expected %lld", (int)ops[i],
                         (long long)nans, (long long)want);
            rc_free(&t);
        }
}

/* MX on the moe op: A's scale rows are token rows, so a NaN scale in token 0 reaches the topk
   output rows of token 0; B's scale planes are per expert. */
Test(reference_recipes, mx_moe_token_scales)
{
    struct rc t;
    struct spec s = moe_spec_of(4, 96, GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_SCALING_MX,
                                moe_default(7, 3, 2));
    make(&t, &s);
    t.base.mxa[0 * 3 + 1] = 0xFF;  /* token 0, K block 1 */
    t.base.mxa[1 * 3 + 0] = 0x00;
    t.base.mxa[1 * 3 + 2] = 0xFE;
    cr_expect_eq(check(&t), s.moe.topk * t.base.p.n);
    rc_free(&t);
}

/* Bias after the GEMM, bf16 and fp32, one row per matrix of B; with K = 0 the output is the bias
   exactly and Σ|ab| is |bias|. */
Test(reference_recipes, bias_every_op)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_BATCHED, GG_OP_DENSE, GG_OP_MOE_SORTED};
    const enum gg_dtype bias_dts[] = {GG_DTYPE_BF16, GG_DTYPE_F32};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < 2; j++) {
            struct spec s = spec_of(ops[i], 5, 33, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE);
            s.bias_dt = bias_dts[j];
            cr_expect_eq(check_spec(&s), 0);
            s.a_dt = s.b_dt = GG_DTYPE_E4M3;
            s.scaling = j ? GG_SCALING_BLOCK128 : GG_SCALING_TENSOR;
            cr_expect_eq(check_spec(&s), 0);
        }
}

Test(reference_recipes, bias_with_k_zero_is_the_bias)
{
    const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_BATCHED, GG_OP_DENSE, GG_OP_MOE_SORTED};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        struct rc t;
        struct spec s = spec_of(ops[i], 4, 0, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE);
        s.bias_dt = GG_DTYPE_F32;
        make(&t, &s);
        cr_expect_eq(check(&t), 0);
        int64_t pos = 0;
        for (int64_t g = 0; g < t.base.p.groups; g++) {
            int64_t rows, cols, red;
            dims(&t, g, &rows, &cols, &red);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t col = 0; col < cols; col++, pos++) {
                    double b = (double)bias_of(&t, g, col);
                    cr_assert_eq(t.base.c[pos], b);
                    cr_assert_eq(t.base.abs[pos], fabs(b));
                    cr_assert_eq(gg_ref_exact(&t.base.p, &t.base.o, g, r, col), b);
                }
        }
        rc_free(&t);
    }
}

/* Fused-MoE layouts: topk 1 to 3, block_m 1 to 16, idle experts with and without padding
   blocks, ascending and descending expert order, padded lda. Padding ids point at NaN rows of X
   or at INT32_MAX, so one read by mistake gives a NaN or a crash. */
Test(reference_recipes, moe_sorted_layouts)
{
    const int64_t topks[] = {1, 2, 3}, block_ms[] = {1, 4, 16};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            for (int desc = 0; desc <= 1; desc++) {
                struct moe_spec moe = moe_default(9, topks[i], block_ms[j]);
                moe.descending = desc;
                moe.padding_only = desc ? 1u << 1 : 0;
                moe.seed += i * 10 + j;
                struct spec s = moe_spec_of(6, 40, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE,
                                            moe);
                cr_expect_eq(check_spec(&s), 0, "topk %lld block_m %lld", (long long)topks[i],
                             (long long)block_ms[j]);
            }
}

/* The reference's gather, exact value and output order on a moe case: row r of expert e is X's
   row (sorted id)/topk; experts appear in expert order whatever the order of their blocks. */
Test(reference_recipes, moe_gather_and_exact)
{
    struct rc t;
    struct spec s = moe_spec_of(3, 50, GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_SCALING_TENSOR,
                                moe_default(6, 2, 3));
    make(&t, &s);
    cr_assert_eq(check(&t), 0);
    double v[64];
    int64_t pos = 0;
    for (int64_t e = 0; e < t.base.p.groups; e++) {
        struct gg_out_block b;
        gg_problem_out_block(&t.base.p, e, &b);
        cr_assert_eq(b.rows, t.rt.loads[e]);
        for (int64_t r = 0; r < b.rows; r++) {
            cr_assert_eq(b.row_map[r], t.rt.valid[t.rt.first[e] + r]);
            gg_ref_gather(&t.base.p, &t.base.o, 0, e, r, v);
            for (int64_t j = 0; j < t.base.p.k; j++)
                cr_assert_eq(v[j], (double)value(&t, 0, e, r, j, 0));
            for (int64_t col = 0; col < b.cols; col++, pos++)
                cr_assert_leq(fabs(gg_ref_exact(&t.base.p, &t.base.o, e, r, col) - t.base.c[pos]),
                              ref_gamma53(b.red) * t.base.abs[pos], "e %lld (%lld, %lld)",
                              (long long)e, (long long)r, (long long)col);
        }
        for (int64_t col = 0; col < b.cols; col++) {
            gg_ref_gather(&t.base.p, &t.base.o, 1, e, col, v);
            for (int64_t j = 0; j < t.base.p.k; j++)
                cr_assert_eq(v[j], (double)value(&t, 1, e, col, j, 0));
        }
    }
    cr_assert_eq(pos, t.base.out);
    rc_free(&t);
}

/* A certification that must fail: one moe output off by far more than the dgemm bound. */
Test(reference_recipes, certify_catches_a_moe_error)
{
    struct rc t;
    struct spec s = spec_of(GG_OP_MOE_SORTED, 3, 64, GG_DTYPE_BF16, GG_DTYPE_BF16,
                            GG_SCALING_NONE);
    s.bias_dt = GG_DTYPE_BF16;
    make(&t, &s);
    ref_case_run(&t.base);
    int64_t last = t.base.out - 1, first = 0;
    t.base.c[last] += 1e-6 * (1 + fabs(t.base.c[last]));
    cr_expect_geq(gg_ref_certify(&t.base.p, &t.base.o, t.base.c, t.base.abs, 4, 7, &first), 1);
    cr_expect_eq(first, last, "the last corner of the last expert");
    rc_free(&t);
}

/* The reference on t as it stands, for the refusals of incomplete operands. */
static enum gg_status gemm_status(struct rc *t, char *err, size_t err_len)
{
    return gg_ref_gemm(&t->base.p, &t->base.o, t->base.c, t->base.abs, err, err_len);
}

Test(reference_recipes, rejects_missing_recipe_pointers)
{
    struct rc t;
    char err[256] = "";
    struct spec s = spec_of(GG_OP_DENSE, 2, 32, GG_DTYPE_BF16, GG_DTYPE_E2M1, GG_SCALING_MX_B);
    s.bias_dt = GG_DTYPE_BF16;
    make(&t, &s);
    cr_expect_eq(gemm_status(&t, err, sizeof err), GG_OK, "%s", err);
    t.base.o.bias = NULL;
    cr_expect_eq(gemm_status(&t, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    t.base.o.bias = t.bias;
    t.base.o.b_scale = NULL;
    err[0] = '\0';
    cr_expect_eq(gemm_status(&t, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    rc_free(&t);

    s = spec_of(GG_OP_BATCHED, 2, 40, GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_SCALING_BLOCK128);
    make(&t, &s);
    t.base.p.b_layout = GG_LAYOUT_KN; /* block scales need the reduction along K */
    err[0] = '\0';
    cr_expect_eq(gemm_status(&t, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    rc_free(&t);
}

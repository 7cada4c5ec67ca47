/*
 * oracles_fixture.h — a grouped, batched or dense bf16 problem for the oracle tests: inputs from
 * the counter RNG (normal, small integers or special codes), the reference (gg_ref_gemm), and a correct output RN(ref) in the output dtype,
 * laid out with the problem's padding, every non-output element of C holding the sentinel.
 * Faults are then planted element by element.
 */
#ifndef ORACLES_FIXTURE_H
#define ORACLES_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracles/gg_oracle.h"

#define FX_MAX_GROUPS 24

struct fx_spec {
    enum gg_op op;
    int64_t groups;
    int64_t lens[FX_MAX_GROUPS]; /* grouped ops: tokens per group */
    int64_t m, n, k;             /* m: rows per batch (batched) or M (dense) */
    enum gg_dtype c_dtype;
    int64_t ldc_pad, stride_pad; /* extra elements per row of C and between group blocks */
    int ints;                    /* ints(4) data instead of normal(0,1) */
    double codes;                /* > 0: codes(codes) data (bf16 special codes, unsaturated) */
    uint64_t seed;
};

struct fx {
    struct gg_problem p;
    int64_t lens[FX_MAX_GROUPS], offs[FX_MAX_GROUPS + 1];
    void *a, *b, *c;
    int64_t a_span, b_span, c_span;
    size_t c_bytes;
    double *ref, *abs;
    int64_t n_out;
};

static inline int fx_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* bf16 codes of n samples of stream s. */
static inline void *fx_operand(const struct fx_spec *s, uint64_t stream, int64_t n)
{
    struct gg_dist d = {s->ints ? GG_DIST_INTS : GG_DIST_NORMAL, {s->ints ? 4.0 : 0.0, 1.0, 0.0},
                        GG_DTYPE_BF16};
    if (s->codes > 0)
        d = (struct gg_dist){GG_DIST_CODES, {s->codes, 0.0, 0.0}, GG_DTYPE_BF16};
    void *buf = calloc((size_t)(n > 0 ? n : 1), 2);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++)
        gg_store_code(GG_DTYPE_BF16, buf, i,
                      gg_encode(GG_DTYPE_BF16, gg_dist_sample(&d, s->seed, stream, i), GG_SAT_NONE));
    return buf;
}

/* Row length of C for the op (its columns). */
static inline int64_t fx_c_cols(const struct fx_spec *s)
{
    return s->op == GG_OP_GROUPED_DGRAD || s->op == GG_OP_GROUPED_WGRAD ? s->k : s->n;
}

static inline void fx_make(struct fx *f, const struct fx_spec *s)
{
    memset(f, 0, sizeof *f);
    struct gg_problem *p = &f->p;
    p->op = s->op;
    p->a_dtype = p->b_dtype = GG_DTYPE_BF16;
    p->c_dtype = s->c_dtype;
    p->acc_dtype = GG_DTYPE_F32;
    p->groups = s->op == GG_OP_DENSE ? 1 : s->groups;
    p->m = s->m;
    p->n = s->n;
    p->k = s->k;
    if (fx_grouped(s->op)) {
        for (int64_t g = 0; g < s->groups; g++) {
            f->lens[g] = s->lens[g];
            f->offs[g + 1] = f->offs[g] + s->lens[g];
        }
        p->group_lens = f->lens;
        p->group_offs = f->offs;
    }
    p->ldc = fx_c_cols(s) + s->ldc_pad;
    if (s->op == GG_OP_GROUPED_WGRAD)
        p->stride_c = s->n * p->ldc + s->stride_pad;
    else if (s->op == GG_OP_BATCHED)
        p->stride_c = s->m * p->ldc + s->stride_pad;
    char err[256];
    cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_OK, "%s", err);
    f->a_span = gg_problem_a_span(p);
    f->b_span = gg_problem_b_span(p);
    f->c_span = gg_problem_c_span(p);
    f->a = fx_operand(s, GG_STREAM_A, f->a_span);
    f->b = fx_operand(s, GG_STREAM_B, f->b_span);
    f->c_bytes = (size_t)gg_dtype_bytes(p->c_dtype, f->c_span > 0 ? f->c_span : 1);
    f->c = malloc(f->c_bytes);
    cr_assert_not_null(f->c);
    for (int64_t i = 0; i < f->c_span; i++)
        gg_store_code(p->c_dtype, f->c, i, gg_oracle_sentinel(p->c_dtype));
    f->n_out = gg_problem_out_elems(p);
    size_t nb = (size_t)(f->n_out > 0 ? f->n_out : 1) * sizeof(double);
    f->ref = malloc(nb);
    f->abs = malloc(nb);
    cr_assert(f->ref && f->abs);
    struct gg_operands o = {.a = f->a, .b = f->b, .c = f->c};
    cr_assert_eq(gg_ref_gemm(p, &o, f->ref, f->abs, err, sizeof err), GG_OK, "%s", err);
}

/* Packed (reference) index of element (r, col) of group g, and its index in C's storage. */
static inline int64_t fx_packed(const struct fx *f, int64_t g, int64_t r, int64_t col)
{
    int64_t pos = 0;
    struct gg_out_block b;
    for (int64_t h = 0; h < g; h++) {
        gg_problem_out_block(&f->p, h, &b);
        pos += b.rows * b.cols;
    }
    gg_problem_out_block(&f->p, g, &b);
    return pos + r * b.cols + col;
}

static inline int64_t fx_storage(const struct fx *f, int64_t g, int64_t r, int64_t col)
{
    struct gg_out_block b;
    gg_problem_out_block(&f->p, g, &b);
    return b.base + r * b.ld + col;
}

static inline void fx_set(struct fx *f, int64_t g, int64_t r, int64_t col, double v)
{
    gg_store_code(f->p.c_dtype, f->c, fx_storage(f, g, r, col),
                  gg_encode(f->p.c_dtype, v, GG_SAT_NONE));
}

static inline void fx_set_code(struct fx *f, int64_t g, int64_t r, int64_t col, uint32_t code)
{
    gg_store_code(f->p.c_dtype, f->c, fx_storage(f, g, r, col), code);
}

static inline double fx_ref(const struct fx *f, int64_t g, int64_t r, int64_t col)
{
    return f->ref[fx_packed(f, g, r, col)];
}

/* The correct output: every element of every group is RN(ref) in the output dtype. */
static inline void fx_write_rn(struct fx *f)
{
    for (int64_t g = 0; g < f->p.groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(&f->p, g, &b);
        for (int64_t r = 0; r < b.rows; r++)
            for (int64_t col = 0; col < b.cols; col++)
                fx_set(f, g, r, col, fx_ref(f, g, r, col));
    }
}

/* A fixture holding the correct output. */
static inline void fx_make_rn(struct fx *f, const struct fx_spec *s)
{
    fx_make(f, s);
    fx_write_rn(f);
}

/* Group block dimensions. */
static inline struct gg_out_block fx_block(const struct fx *f, int64_t g)
{
    struct gg_out_block b;
    gg_problem_out_block(&f->p, g, &b);
    return b;
}

static inline void fx_compare(const struct fx *f, int64_t tile_m, int64_t tile_n,
                              struct gg_compare *cmp)
{
    cr_assert_eq(gg_compare_output(&f->p, f->c, f->ref, f->abs, NULL, tile_m, tile_n, cmp), GG_OK);
    cr_assert_eq(cmp->n_groups, f->p.groups);
}

/* Compare and verdict in one step, with optional observations. */
static inline void fx_verdict(const struct fx *f, int64_t tile_m, int64_t tile_n,
                              const struct gg_observations *obs, struct gg_compare *cmp,
                              struct gg_verdict *v)
{
    fx_compare(f, tile_m, tile_n, cmp);
    gg_verdict_make(&f->p, "grouped_bf16_cpu_tiled", tile_m, tile_n, 32, cmp, obs, v);
}

/* The verdict names group g, and only g, as failing. */
static inline void fx_expect_one_fail_group(const struct gg_verdict *v, int64_t g)
{
    cr_expect_eq(v->n_fail_groups, 1, "%lld failing groups, want only %lld",
                 (long long)v->n_fail_groups, (long long)g);
    cr_expect_eq(v->fail_groups[0], g, "failing group %lld, want %lld",
                 (long long)v->fail_groups[0], (long long)g);
}

static inline void fx_free(struct fx *f)
{
    free(f->a);
    free(f->b);
    free(f->c);
    free(f->ref);
    free(f->abs);
    memset(f, 0, sizeof *f);
}

#endif /* ORACLES_FIXTURE_H */

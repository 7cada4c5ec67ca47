/*
 * ref_fixture.h — one reference-GEMM case for the reference tests: a checked problem over the
 * case's own group arrays, its operands and scales wired into gg_operands, room for the
 * reference's packed outputs and Σ|ab|, and its release. Each test fills the operands its own
 * way (the data decide whether sums are exact); the fixture only builds and owns the buffers.
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

/* The reference GEMM into c and abs. */
static inline void ref_case_run(struct ref_case *t)
{
    char err[256] = "";
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

/* A random finite code of an 8-bit format. */
static inline uint32_t ref_random_code8(uint64_t *rng, enum gg_dtype dt)
{
    for (;;) {
        uint32_t c = (uint32_t)(splitmix64(rng) & 0xFF);
        if (isfinite(gg_decode(dt, c)))
            return c;
    }
}

#endif /* REF_FIXTURE_H */

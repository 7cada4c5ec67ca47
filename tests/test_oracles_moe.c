/*
 * The oracles on the moe sorted op: the comparison reads expert e's row r at C row
 * sorted_ids[...] (the block's row_map), the padding of C is every element no valid sorted id
 * names (the ldc tail of each row, and whole rows when the routing leaves some out), and the
 * verdicts of the usual faults come out with the right class and failing expert: a correct
 * output, a write into the padding, a missed row, a kernel that ignores the sorted ids, one
 * wrong expert. Also the threshold rows of the quantised moe recipes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "moe_routing.h"
#include "oracles/gg_oracle.h"
#include "splitmix.h"

/* A bf16 moe problem with a bf16 bias and bf16 output C of leading dimension n + ldc_pad. */
struct mo {
    struct moe_spec ms;
    struct moe_routing rt;
    struct gg_problem p;
    void *a, *b, *bias, *c;
    int64_t c_span;
    double *ref, *abs;
    int64_t n_out;
};

static void *bf16_random(uint64_t *rng, int64_t n)
{
    uint16_t *q = malloc((size_t)(n > 0 ? n : 1) * 2);
    cr_assert_not_null(q);
    for (int64_t i = 0; i < n; i++) {
        double x = 0;
        for (int j = 0; j < 4; j++) /* roughly normal(0, 1) */
            x += (double)(splitmix64(rng) >> 11) * 0x1p-53;
        q[i] = (uint16_t)gg_encode(GG_DTYPE_BF16, (x - 2) * 1.7320508075688772, GG_SAT_NONE);
    }
    return q;
}

/* Builds and checks the problem; drop >= 0 then takes the last valid id of expert drop out of
   the routing (its load shrinks by one and the entry becomes padding), leaving one C row that
   no sorted id names. Then runs the reference and fills C with the sentinel. */
static void mo_make(struct mo *f, int64_t tokens, int64_t topk, int64_t n, int64_t k,
                    int64_t ldc_pad, int64_t drop)
{
    memset(f, 0, sizeof *f);
    f->ms = (struct moe_spec){.experts = 5, .tokens = tokens, .topk = topk, .block_m = 4,
                              .idle = 1u << 2, .padding_only = 1u << 2, .descending = 1,
                              .seed = 77 + (uint64_t)tokens};
    moe_routing_make(&f->rt, &f->ms);
    struct gg_problem *p = &f->p;
    *p = (struct gg_problem){.a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                             .c_dtype = GG_DTYPE_BF16, .acc_dtype = GG_DTYPE_F32, .n = n, .k = k,
                             .ldc = n + ldc_pad, .bias_dtype = GG_DTYPE_BF16};
    moe_routing_problem(&f->rt, &f->ms, p);
    char err[256] = "";
    cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_OK, "%s", err);
    if (drop >= 0) {
        cr_assert_gt(f->rt.loads[drop], 0);
        int64_t at = 0; /* the expert's first sorted entry */
        while (f->rt.expert_ids[at / f->ms.block_m] != drop)
            at += f->ms.block_m;
        f->rt.sorted[at + --f->rt.loads[drop]] = (int32_t)f->rt.pairs;
    }
    uint64_t rng = f->ms.seed;
    f->a = bf16_random(&rng, gg_problem_a_span(p));
    f->b = bf16_random(&rng, gg_problem_b_span(p));
    f->bias = bf16_random(&rng, gg_problem_bias_count(p));
    f->c_span = gg_problem_c_span(p);
    cr_assert_eq(f->c_span, (tokens * topk - 1) * p->ldc + n);
    f->c = malloc((size_t)f->c_span * 2);
    cr_assert_not_null(f->c);
    for (int64_t i = 0; i < f->c_span; i++)
        gg_store_code(GG_DTYPE_BF16, f->c, i, gg_oracle_sentinel(GG_DTYPE_BF16));
    f->n_out = gg_problem_out_elems(p);
    f->ref = malloc((size_t)f->n_out * sizeof(double));
    f->abs = malloc((size_t)f->n_out * sizeof(double));
    cr_assert(f->ref && f->abs);
    struct gg_operands o = {.a = f->a, .b = f->b, .bias = f->bias};
    cr_assert_eq(gg_ref_gemm(p, &o, f->ref, f->abs, err, sizeof err), GG_OK, "%s", err);
}

static void mo_free(struct mo *f)
{
    moe_routing_free(&f->rt);
    free(f->a);
    free(f->b);
    free(f->bias);
    free(f->c);
    free(f->ref);
    free(f->abs);
}

/* Packed (reference) index of row r, column col of expert e. */
static int64_t packed(const struct mo *f, int64_t e, int64_t r, int64_t col)
{
    int64_t pos = 0;
    for (int64_t x = 0; x < e; x++)
        pos += f->rt.loads[x] * f->p.n;
    return pos + r * f->p.n + col;
}

/* C row of row r of expert e: the sorted id, from the routing itself. */
static int64_t c_row(const struct mo *f, int64_t e, int64_t r)
{
    return f->rt.valid[f->rt.first[e] + r];
}

static void put(struct mo *f, int64_t at, double v)
{
    gg_store_code(GG_DTYPE_BF16, f->c, at, gg_encode(GG_DTYPE_BF16, v, GG_SAT_NONE));
}

/* The correct output, RN(ref), each row where its sorted id says; factor scales expert only's
   rows (only < 0: every expert). */
static void write_output(struct mo *f, int64_t only, double factor)
{
    for (int64_t e = 0; e < f->p.groups; e++)
        for (int64_t r = 0; r < f->rt.loads[e]; r++)
            for (int64_t col = 0; col < f->p.n; col++)
                put(f, c_row(f, e, r) * f->p.ldc + col,
                    f->ref[packed(f, e, r, col)] * (e == only ? factor : 1.0));
}

static void verdict(const struct mo *f, const struct gg_observations *obs, struct gg_compare *cmp,
                    struct gg_verdict *v)
{
    cr_assert_eq(gg_compare_output(&f->p, f->c, f->ref, f->abs, NULL, f->ms.block_m, 16, cmp),
                 GG_OK);
    cr_assert_eq(cmp->n_groups, f->p.groups);
    gg_verdict_make(&f->p, "moe_bf16_cpu_test", f->ms.block_m, 16, 32, cmp, obs, v);
}

/* The busy expert with the most rows. */
static int64_t busiest(const struct mo *f)
{
    int64_t best = 0;
    for (int64_t e = 1; e < f->p.groups; e++)
        if (f->rt.loads[e] > f->rt.loads[best])
            best = e;
    return best;
}

Test(oracles_moe, correct_output_passes)
{
    const int64_t topks[] = {1, 2, 3}, pads[] = {0, 3};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            struct mo f;
            mo_make(&f, 24, topks[i], 20, 48, pads[j], -1);
            write_output(&f, -1, 1.0);
            struct gg_compare cmp;
            struct gg_verdict v;
            verdict(&f, NULL, &cmp, &v);
            cr_expect_eq(cmp.n_unwritten + cmp.n_nan + cmp.n_bound, 0);
            cr_expect_gt(cmp.snr_db, 50.0);
            cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
            cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
            for (int64_t e = 0; e < f.p.groups; e++)
                cr_expect_eq(cmp.groups[e].elems, f.rt.loads[e] * f.p.n);
            gg_compare_free(&cmp);
            mo_free(&f);
        }
}

/* A write into the ldc tail of any row is found at its exact index and is an oob_write. */
Test(oracles_moe, padding_write_is_oob)
{
    struct mo f;
    mo_make(&f, 16, 2, 12, 32, 5, -1);
    write_output(&f, -1, 1.0);
    const int64_t rows[] = {0, 7, 30}, cols[] = {12, 16, 14};
    for (int i = 0; i < 3; i++) {
        int64_t at = rows[i] * f.p.ldc + cols[i];
        put(&f, at, 1.0);
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), at);
        struct gg_observations obs = {.padding_hit = 1};
        struct gg_compare cmp;
        struct gg_verdict v;
        verdict(&f, &obs, &cmp, &v);
        cr_expect_eq(cmp.n_unwritten + cmp.n_nan + cmp.n_bound, 0, "outputs are intact");
        cr_expect_eq(v.cls, GG_CLASS_OOB_WRITE);
        cr_expect(strstr(v.signature, "oob_write/") == v.signature, "%s", v.signature);
        cr_expect_not_null(strstr(v.signature, "/moe_sorted/"), "%s", v.signature);
        gg_compare_free(&cmp);
        gg_store_code(GG_DTYPE_BF16, f.c, at, gg_oracle_sentinel(GG_DTYPE_BF16));
    }
    cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
    mo_free(&f);
}

/* A valid sorted id whose row the kernel skipped: its n outputs are unwritten, in that expert. */
Test(oracles_moe, missed_row_is_unwritten)
{
    struct mo f;
    mo_make(&f, 16, 2, 12, 32, 0, -1);
    write_output(&f, -1, 1.0);
    int64_t e = busiest(&f), r = f.rt.loads[e] - 1, row = c_row(&f, e, r);
    for (int64_t col = 0; col < f.p.n; col++)
        gg_store_code(GG_DTYPE_BF16, f.c, row * f.p.ldc + col, gg_oracle_sentinel(GG_DTYPE_BF16));
    cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1, "a named row is not padding");
    struct gg_compare cmp;
    struct gg_verdict v;
    verdict(&f, NULL, &cmp, &v);
    cr_expect_eq(cmp.n_unwritten, f.p.n);
    cr_expect_eq(cmp.groups[e].n_unwritten, f.p.n);
    cr_expect_eq(cmp.groups[e].first_bad, packed(&f, e, r, 0));
    cr_expect_eq(v.cls, GG_CLASS_UNWRITTEN);
    cr_expect_eq(v.n_fail_groups, 1);
    cr_expect_eq(v.fail_groups[0], e);
    gg_compare_free(&cmp);
    mo_free(&f);
}

/* With one (token, slot) id left out of the routing, its C row is padding: the correct output
   leaves it alone and passes, a write anywhere in it is caught. */
Test(oracles_moe, unnamed_row_is_padding)
{
    struct mo f;
    mo_make(&f, 16, 2, 12, 32, 2, 0);
    int64_t dropped = f.rt.valid[f.rt.first[0] + f.rt.loads[0]];
    write_output(&f, -1, 1.0);
    cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
    struct gg_compare cmp;
    struct gg_verdict v;
    verdict(&f, NULL, &cmp, &v);
    cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
    gg_compare_free(&cmp);
    for (int64_t col = 0; col < f.p.n; col += 5) {
        int64_t at = dropped * f.p.ldc + col;
        put(&f, at, 2.0);
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), at, "col %lld", (long long)col);
        gg_store_code(GG_DTYPE_BF16, f.c, at, gg_oracle_sentinel(GG_DTYPE_BF16));
    }
    mo_free(&f);
}

/* A kernel that ignores the sorted ids and writes each expert's rows one after the other from
   row 0 (the grouped-fwd layout): every row is written, most with another row's values. */
Test(oracles_moe, ignoring_sorted_ids_fails)
{
    struct mo f;
    mo_make(&f, 16, 2, 12, 32, 0, -1);
    int64_t row = 0;
    for (int64_t e = 0; e < f.p.groups; e++)
        for (int64_t r = 0; r < f.rt.loads[e]; r++, row++)
            for (int64_t col = 0; col < f.p.n; col++)
                put(&f, row * f.p.ldc + col, f.ref[packed(&f, e, r, col)]);
    struct gg_compare cmp;
    struct gg_verdict v;
    verdict(&f, NULL, &cmp, &v);
    cr_expect_eq(cmp.n_unwritten, 0);
    cr_expect_gt(cmp.n_bound, 0);
    cr_expect_eq(v.cls, GG_CLASS_SNR, "%s", v.detail);
    cr_expect_not_null(strstr(v.signature, "/moe_sorted/"), "%s", v.signature);
    gg_compare_free(&cmp);
    mo_free(&f);
}

/* One expert's outputs 1% off: an snr verdict naming that expert only. */
Test(oracles_moe, one_wrong_expert)
{
    struct mo f;
    mo_make(&f, 24, 2, 16, 64, 1, -1);
    int64_t e = busiest(&f);
    write_output(&f, e, 1.01);
    struct gg_compare cmp;
    struct gg_verdict v;
    verdict(&f, NULL, &cmp, &v);
    cr_expect_eq(v.cls, GG_CLASS_SNR, "%s", v.detail);
    cr_expect_eq(v.n_fail_groups, 1);
    cr_expect_eq(v.fail_groups[0], e);
    cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
    gg_compare_free(&cmp);
    mo_free(&f);
}

/* The quantised moe recipes take the rows of their most quantised operand. */
Test(oracles_moe, threshold_rows_of_moe_recipes)
{
    struct gg_problem p = {.op = GG_OP_MOE_SORTED, .a_dtype = GG_DTYPE_BF16,
                           .b_dtype = GG_DTYPE_E2M1, .c_dtype = GG_DTYPE_BF16,
                           .scaling = GG_SCALING_MX_B};
    cr_expect_str_eq(gg_threshold_for(&p)->name, "e2m1->bf16");
    p.c_dtype = GG_DTYPE_F32;
    cr_expect_str_eq(gg_threshold_for(&p)->name, "e2m1->f32");
    p.a_dtype = p.b_dtype = GG_DTYPE_E4M3;
    p.scaling = GG_SCALING_BLOCK128;
    cr_expect_str_eq(gg_threshold_for(&p)->name, "e4m3->f32");
    p.a_dtype = p.b_dtype = GG_DTYPE_E4M3FNUZ;
    p.c_dtype = GG_DTYPE_BF16;
    cr_expect_str_eq(gg_threshold_for(&p)->name, "e4m3->bf16");
    cr_expect_gt(gg_threshold_for(&p)->kappa, 0.0);
}

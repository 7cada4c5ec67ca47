/*
 * Problem geometry: packed defaults and validity rules of gg_problem_check, the output block of
 * every group, operand spans and scale counts, on small hand-worked examples for each op.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "reference/gg_ref.h"

/* A grouped problem over lens (copied with its prefix sums into the caller's arrays). */
static struct gg_problem grouped(enum gg_op op, int64_t groups, const int64_t *lens,
                                 int64_t *lens_buf, int64_t *offs_buf, int64_t n, int64_t k)
{
    offs_buf[0] = 0;
    for (int64_t g = 0; g < groups; g++) {
        lens_buf[g] = lens[g];
        offs_buf[g + 1] = offs_buf[g] + lens[g];
    }
    return (struct gg_problem){.op = op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                               .c_dtype = GG_DTYPE_F32, .acc_dtype = GG_DTYPE_F32,
                               .groups = groups, .n = n, .k = k, .group_lens = lens_buf,
                               .group_offs = offs_buf};
}

static struct gg_problem flat(enum gg_op op, int64_t groups, int64_t m, int64_t n, int64_t k)
{
    return (struct gg_problem){.op = op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                               .c_dtype = GG_DTYPE_F32, .acc_dtype = GG_DTYPE_F32,
                               .groups = groups, .m = m, .n = n, .k = k};
}

static void check_ok(struct gg_problem *p)
{
    char err[256] = "";
    enum gg_status st = gg_problem_check(p, err, sizeof err);
    cr_assert_eq(st, GG_OK, "unexpected rejection: %s", err);
}

static void check_rejected(struct gg_problem *p, const char *what)
{
    char err[256] = "";
    cr_assert_eq(gg_problem_check(p, err, sizeof err), GG_E_INVAL, "%s accepted", what);
    cr_assert_neq(err[0], '\0', "%s rejected without a message", what);
}

static void expect_block(const struct gg_problem *p, int64_t g, int64_t base, int64_t rows,
                         int64_t cols, int64_t ld, int64_t red)
{
    struct gg_out_block b;
    gg_problem_out_block(p, g, &b);
    cr_expect_eq(b.base, base, "group %lld base %lld", (long long)g, (long long)b.base);
    cr_expect_eq(b.rows, rows, "group %lld rows %lld", (long long)g, (long long)b.rows);
    cr_expect_eq(b.cols, cols, "group %lld cols %lld", (long long)g, (long long)b.cols);
    cr_expect_eq(b.ld, ld, "group %lld ld %lld", (long long)g, (long long)b.ld);
    cr_expect_eq(b.red, red, "group %lld red %lld", (long long)g, (long long)b.red);
}

static void expect_lds(const struct gg_problem *p, int64_t lda, int64_t ldb, int64_t ldc)
{
    cr_expect_eq(p->lda, lda, "op %d lda %lld", (int)p->op, (long long)p->lda);
    cr_expect_eq(p->ldb, ldb, "op %d ldb %lld", (int)p->op, (long long)p->ldb);
    cr_expect_eq(p->ldc, ldc, "op %d ldc %lld", (int)p->op, (long long)p->ldc);
}

static void expect_strides(const struct gg_problem *p, int64_t sa, int64_t sb, int64_t sc)
{
    cr_expect_eq(p->stride_a, sa, "op %d stride_a %lld", (int)p->op, (long long)p->stride_a);
    cr_expect_eq(p->stride_b, sb, "op %d stride_b %lld", (int)p->op, (long long)p->stride_b);
    cr_expect_eq(p->stride_c, sc, "op %d stride_c %lld", (int)p->op, (long long)p->stride_c);
}

/* Lengths {3, 0, 2}, N = 4, K = 5: M is the total 5 and the per-group weights (W for fwd and
   dgrad, dW for wgrad) are packed N x K matrices 20 elements apart. */
Test(reference_geom, packed_defaults_grouped)
{
    static const struct {
        enum gg_op op;
        int64_t lda, ldb, ldc;
    } want[] = {
        {GG_OP_GROUPED_FWD, 5, 5, 4},
        {GG_OP_GROUPED_DGRAD, 4, 5, 5},
        {GG_OP_GROUPED_WGRAD, 4, 5, 5},
    };
    int64_t lens[3] = {3, 0, 2}, lb[3], ob[4];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct gg_problem p = grouped(want[i].op, 3, lens, lb, ob, 4, 5);
        check_ok(&p);
        cr_expect_eq(p.m, 5, "op %d", (int)p.op);
        expect_lds(&p, want[i].lda, want[i].ldb, want[i].ldc);
        int64_t stride_w = p.op == GG_OP_GROUPED_WGRAD ? p.stride_c : p.stride_b;
        cr_expect_eq(stride_w, 20, "op %d", (int)p.op);
    }
}

Test(reference_geom, packed_defaults_flat)
{
    struct gg_problem nk = flat(GG_OP_BATCHED, 2, 3, 4, 5);
    check_ok(&nk);
    expect_lds(&nk, 5, 5, 4);
    expect_strides(&nk, 15, 20, 12);

    struct gg_problem kn = flat(GG_OP_BATCHED, 2, 3, 4, 5);
    kn.b_layout = GG_LAYOUT_KN;
    check_ok(&kn);
    cr_expect_eq(kn.ldb, 4);
    cr_expect_eq(kn.stride_b, 20);

    struct gg_problem dn = flat(GG_OP_DENSE, 1, 3, 4, 5);
    check_ok(&dn);
    expect_lds(&dn, 5, 5, 4);
}

Test(reference_geom, explicit_fields_kept)
{
    struct gg_problem p = flat(GG_OP_BATCHED, 2, 3, 4, 5);
    p.lda = 7;
    p.ldb = 9;
    p.ldc = 6;
    p.stride_a = 100;
    check_ok(&p);
    expect_lds(&p, 7, 9, 6);
    expect_strides(&p, 100, 36, 18);
}

Test(reference_geom, rejects_bad_sizes)
{
    struct gg_problem p = flat(GG_OP_DENSE, 1, 3, -4, 5);
    check_rejected(&p, "negative n");
    p = flat(GG_OP_DENSE, 1, -3, 4, 5);
    check_rejected(&p, "negative m");
    p = flat(GG_OP_BATCHED, 0, 3, 4, 5);
    check_rejected(&p, "zero groups");
    p = flat(GG_OP_DENSE, 2, 3, 4, 5);
    check_rejected(&p, "dense with two groups");
    p = flat(GG_OP_COUNT, 1, 3, 4, 5);
    check_rejected(&p, "unknown op");
}

Test(reference_geom, rejects_bad_groups)
{
    int64_t lens[2] = {3, 2}, lb[2], ob[3];
    struct gg_problem p = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 5);
    ob[1] = 2;
    check_rejected(&p, "offsets that are not the prefix sum");
    p = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 5);
    ob[2] = 6;
    check_rejected(&p, "a wrong total");
    int64_t neg[2] = {-1, 2};
    p = grouped(GG_OP_GROUPED_WGRAD, 2, neg, lb, ob, 4, 5);
    check_rejected(&p, "a negative group length");
    p = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 5);
    p.group_offs = NULL;
    check_rejected(&p, "a grouped op without offsets");
}

Test(reference_geom, rejects_short_leading_dimensions)
{
    struct gg_problem p = flat(GG_OP_DENSE, 1, 3, 4, 5);
    p.lda = 4;
    check_rejected(&p, "lda < K");
    p = flat(GG_OP_BATCHED, 2, 3, 4, 5);
    p.b_layout = GG_LAYOUT_KN;
    p.ldb = 3;
    check_rejected(&p, "ldb < N for a KN batch");
    int64_t lens[1] = {3}, lb[1], ob[2];
    p = grouped(GG_OP_GROUPED_DGRAD, 1, lens, lb, ob, 4, 5);
    p.ldc = 4;
    check_rejected(&p, "ldc < K for dgrad");
    p = grouped(GG_OP_GROUPED_DGRAD, 1, lens, lb, ob, 4, 5);
    p.lda = 3;
    check_rejected(&p, "lda < N for dgrad");
    p = flat(GG_OP_BATCHED, 2, 3, 4, 5);
    p.stride_a = 14;
    check_rejected(&p, "overlapping batches of A");
}

Test(reference_geom, mx_rules)
{
    struct gg_problem p = flat(GG_OP_DENSE, 1, 3, 4, 48);
    p.scaling = GG_SCALING_MX;
    check_rejected(&p, "MX with K % 32 != 0");
    p = flat(GG_OP_DENSE, 1, 3, 4, 64);
    p.scaling = GG_SCALING_MX;
    check_ok(&p);
    p = flat(GG_OP_BATCHED, 2, 3, 4, 64);
    p.scaling = GG_SCALING_MX;
    p.b_layout = GG_LAYOUT_KN;
    check_rejected(&p, "MX on a KN batch");
    int64_t lens[2] = {3, 1}, lb[2], ob[3];
    p = grouped(GG_OP_GROUPED_DGRAD, 2, lens, lb, ob, 64, 64);
    p.scaling = GG_SCALING_MX;
    check_rejected(&p, "MX on dgrad");
    p = grouped(GG_OP_GROUPED_WGRAD, 2, lens, lb, ob, 64, 64);
    p.scaling = GG_SCALING_MX;
    check_rejected(&p, "MX on wgrad");
    p = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 64, 64);
    p.scaling = GG_SCALING_MX;
    check_ok(&p);
    cr_expect_eq(gg_problem_a_scale_count(&p), 4 * 2);
    cr_expect_eq(gg_problem_b_scale_count(&p), 2 * 64 * 2);
}

Test(reference_geom, rejects_int64_overflow)
{
    struct gg_problem p = flat(GG_OP_DENSE, 1, INT64_C(1) << 40, 4, INT64_C(1) << 40);
    check_rejected(&p, "an A of 2^80 elements");
    p = flat(GG_OP_BATCHED, INT64_C(1) << 40, 1 << 20, 4, 1 << 20);
    check_rejected(&p, "a batch of 2^80 elements");
    int64_t wl[1] = {4}, wlb[1], wob[2];
    p = grouped(GG_OP_GROUPED_WGRAD, 1, wl, wlb, wob, 1, 5);
    p.ldb = INT64_C(1) << 61; /* one W row: only X's M·ldb = 2^63 overflows */
    check_rejected(&p, "a wgrad X of 4 rows 2^61 apart");
    int64_t lens[2] = {1, 1}, lb[2], ob[3];
    p = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 5);
    int64_t huge_lens[2] = {INT64_MAX, 1}, huge_offs[3] = {0, INT64_MAX, INT64_MIN};
    p.group_lens = huge_lens;
    p.group_offs = huge_offs;
    check_rejected(&p, "group lengths summing past INT64_MAX");
}

Test(reference_geom, blocks_fwd_and_dgrad)
{
    int64_t lens[3] = {2, 0, 3}, lb[3], ob[4];
    struct gg_problem f = grouped(GG_OP_GROUPED_FWD, 3, lens, lb, ob, 4, 6);
    f.ldc = 7;
    check_ok(&f);
    expect_block(&f, 0, 0, 2, 4, 7, 6);
    expect_block(&f, 1, 14, 0, 4, 7, 6);
    expect_block(&f, 2, 14, 3, 4, 7, 6);
    cr_expect_eq(gg_problem_out_elems(&f), 5 * 4);
    cr_expect_eq(gg_problem_c_span(&f), 4 * 7 + 4);

    struct gg_problem d = grouped(GG_OP_GROUPED_DGRAD, 3, lens, lb, ob, 4, 6);
    check_ok(&d);
    expect_block(&d, 0, 0, 2, 6, 6, 4);
    expect_block(&d, 2, 12, 3, 6, 6, 4);
    cr_expect_eq(gg_problem_out_elems(&d), 5 * 6);
}

Test(reference_geom, blocks_wgrad_with_empty_group)
{
    int64_t lens[3] = {2, 0, 3}, lb[3], ob[4];
    struct gg_problem w = grouped(GG_OP_GROUPED_WGRAD, 3, lens, lb, ob, 4, 6);
    w.ldc = 8;
    check_ok(&w);
    cr_expect_eq(w.stride_c, 32);
    expect_block(&w, 0, 0, 4, 6, 8, 2);
    expect_block(&w, 1, 32, 4, 6, 8, 0); /* dW_1 = 0: a full block with nothing to reduce */
    expect_block(&w, 2, 64, 4, 6, 8, 3);
    cr_expect_eq(gg_problem_out_elems(&w), 3 * 24);
    cr_expect_eq(gg_problem_a_span(&w), 4 * 4 + 4);
    cr_expect_eq(gg_problem_b_span(&w), 4 * 6 + 6);
    cr_expect_eq(gg_problem_c_span(&w), 2 * 32 + 3 * 8 + 6);
}

Test(reference_geom, blocks_and_spans_batched_kn)
{
    struct gg_problem p = flat(GG_OP_BATCHED, 3, 2, 4, 5);
    p.b_layout = GG_LAYOUT_KN;
    p.ldb = 6;
    p.stride_b = 40;
    check_ok(&p);
    expect_block(&p, 0, 0, 2, 4, 4, 5);
    expect_block(&p, 2, 16, 2, 4, 4, 5);
    cr_expect_eq(gg_problem_a_span(&p), 2 * 10 + 5 + 5);
    cr_expect_eq(gg_problem_b_span(&p), 2 * 40 + 4 * 6 + 4);
    cr_expect_eq(gg_problem_c_span(&p), 2 * 8 + 8);
}

Test(reference_geom, spans_fwd_dense_and_scales)
{
    int64_t lens[2] = {3, 2}, lb[2], ob[3];
    struct gg_problem f = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 64);
    f.lda = 70;
    f.ldb = 66;
    check_ok(&f);
    cr_expect_eq(f.stride_b, 4 * 66);
    cr_expect_eq(gg_problem_a_span(&f), 4 * 70 + 64);
    cr_expect_eq(gg_problem_b_span(&f), 4 * 66 + 3 * 66 + 64);
    cr_expect_eq(gg_problem_a_scale_count(&f), 0);
    f.scaling = GG_SCALING_TENSOR;
    cr_expect_eq(gg_problem_a_scale_count(&f), 1);
    cr_expect_eq(gg_problem_b_scale_count(&f), 2); /* one per expert */
    f.scaling = GG_SCALING_BLOCK128;
    cr_expect_eq(gg_problem_a_scale_count(&f), 5 * 1); /* 5 rows, ceil(64/128) */
    cr_expect_eq(gg_problem_b_scale_count(&f), 2);
    f.scaling = GG_SCALING_MX_B;
    cr_expect_eq(gg_problem_a_scale_count(&f), 0);
    cr_expect_eq(gg_problem_b_scale_count(&f), 2 * 4 * 2);
    f.bias_dtype = GG_DTYPE_F32;
    cr_expect_eq(gg_problem_bias_count(&f), 2 * 4);

    struct gg_problem d = flat(GG_OP_DENSE, 1, 1, 3, 64);
    d.scaling = GG_SCALING_MX;
    check_ok(&d);
    expect_block(&d, 0, 0, 1, 3, 3, 64);
    cr_expect_eq(gg_problem_a_scale_count(&d), 2);
    cr_expect_eq(gg_problem_b_scale_count(&d), 6);
    cr_expect_eq(gg_problem_b_span(&d), 3 * 64);

    struct gg_problem b = flat(GG_OP_BATCHED, 3, 2, 4, 32);
    b.scaling = GG_SCALING_MX;
    check_ok(&b);
    cr_expect_eq(gg_problem_a_scale_count(&b), 3 * 2);
    cr_expect_eq(gg_problem_b_scale_count(&b), 3 * 4);
}

Test(reference_geom, empty_problems_have_empty_spans)
{
    int64_t lens[2] = {0, 0}, lb[2], ob[3];
    struct gg_problem f = grouped(GG_OP_GROUPED_FWD, 2, lens, lb, ob, 4, 5);
    check_ok(&f);
    cr_expect_eq(f.m, 0);
    cr_expect_eq(gg_problem_a_span(&f), 0);
    cr_expect_eq(gg_problem_c_span(&f), 0);
    cr_expect_eq(gg_problem_out_elems(&f), 0);
    struct gg_problem w = grouped(GG_OP_GROUPED_WGRAD, 2, lens, lb, ob, 4, 5);
    check_ok(&w);
    cr_expect_eq(gg_problem_out_elems(&w), 2 * 20); /* all of dW is zero, still an output */
}

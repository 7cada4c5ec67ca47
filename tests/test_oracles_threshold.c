/*
 * test_oracles_threshold.c — the versioned threshold table: every number of version 5, which row
 * each dtype combination gets, that every row is internally consistent, and how the bf16->f32
 * levels fall with the reduction length.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "oracles/gg_oracle.h"

static const struct gg_threshold *row(enum gg_dtype a, enum gg_dtype b, enum gg_dtype c,
                                      enum gg_scaling s)
{
    struct gg_problem p = {.op = GG_OP_GROUPED_FWD, .a_dtype = a, .b_dtype = b, .c_dtype = c,
                           .scaling = s, .groups = 1};
    const struct gg_threshold *t = gg_threshold_for(&p);
    cr_assert_not_null(t);
    return t;
}

/*
 * Version 1 of the table, row by row: name; SNR fail, expected and source-fail levels (dB);
 * u_out and η_out of the output format; u_acc of fp32 accumulation; κ (fp8 and fp4 inputs).
 * Any change to these numbers comes with a new version.
 */
#define OUT_BF16 0x1p-8, 0x1p-134 /* u = 2^-8, half of the smallest subnormal 2^-133 */
#define OUT_F32 0x1p-24, 0x1p-150
#define U_ACC 0x1p-23
#define KAPPA 0x1p-8
enum { BF16_BF16, BF16_F32, E4M3_F32, E5M2_F32, E4M3_BF16, E5M2_BF16, E5M2X2_F32, E5M2X2_BF16,
       E2M1_F32, E2M1_BF16, FALLBACK };
static const struct gg_threshold V1[] = {
    [BF16_BF16] = {"bf16->bf16", 50.0, 55.6, 0.0, OUT_BF16, U_ACC, 0},
    /* Version 5: k_ref, past which the levels fall 20 dB per decade of the reduction. */
    [BF16_F32] = {"bf16->f32", 90.0, 102.0, 0.0, OUT_F32, U_ACC, 0, 7168.0},
    [E4M3_F32] = {"e4m3->f32", 60.0, 77.9, 25.0, OUT_F32, U_ACC, KAPPA},
    [E5M2_F32] = {"e5m2->f32", 60.0, 77.9, 20.0, OUT_F32, U_ACC, KAPPA},
    [E4M3_BF16] = {"e4m3->bf16", 50.0, 55.6, 25.0, OUT_BF16, U_ACC, KAPPA},
    [E5M2_BF16] = {"e5m2->bf16", 50.0, 55.6, 20.0, OUT_BF16, U_ACC, KAPPA},
    /* Version 2: e5m2 on both sides, the two quantisation noises add (3 dB lower). */
    [E5M2X2_F32] = {"e5m2x2->f32", 60.0, 77.9, 17.0, OUT_F32, U_ACC, KAPPA},
    [E5M2X2_BF16] = {"e5m2x2->bf16", 50.0, 55.6, 17.0, OUT_BF16, U_ACC, KAPPA},
    [E2M1_F32] = {"e2m1->f32", 60.0, 77.9, 0.0, OUT_F32, U_ACC, KAPPA},
    [E2M1_BF16] = {"e2m1->bf16", 50.0, 55.6, 0.0, OUT_BF16, U_ACC, KAPPA},
    /* The loosest: E2M1's u and η (the coarsest output), fp8 fast-accumulation κ = 2^-8. */
    [FALLBACK] = {"fallback", 20.0, 25.5, 0.0, 0x1p-2, 0x1p-2, U_ACC, 0x1p-8},
};

/* Every field of t is want's. */
static void expect_row(const struct gg_threshold *t, const struct gg_threshold *want)
{
    const char *w = want->name;
    cr_expect_str_eq(t->name, w);
    cr_expect_eq(t->snr_fail_db, want->snr_fail_db, "%s snr_fail_db", w);
    cr_expect_eq(t->snr_expected_db, want->snr_expected_db, "%s snr_expected_db", w);
    cr_expect_eq(t->snr_src_fail_db, want->snr_src_fail_db, "%s snr_src_fail_db", w);
    cr_expect_eq(t->u_out, want->u_out, "%s u_out", w);
    cr_expect_eq(t->eta_out, want->eta_out, "%s eta_out", w);
    cr_expect_eq(t->u_acc, want->u_acc, "%s u_acc", w);
    cr_expect_eq(t->kappa, want->kappa, "%s kappa", w);
    cr_expect_eq(t->k_ref, want->k_ref, "%s k_ref", w);
}

Test(oracle_threshold, version)
{
    cr_expect_eq(GG_THRESHOLDS_VERSION, 7);
}

Test(oracle_threshold, bf16_rows)
{
    const struct gg_threshold *t =
        row(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE);
    expect_row(t, &V1[BF16_BF16]);
    /* f16 inputs share the row. */
    cr_expect_eq(row(GG_DTYPE_F16, GG_DTYPE_F16, GG_DTYPE_BF16, GG_SCALING_NONE), t);
    cr_expect_eq(row(GG_DTYPE_F16, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE), t);
    expect_row(row(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_F32, GG_SCALING_NONE), &V1[BF16_F32]);
}

/* Every e4m3 / e5m2 pairing, OCP or fnuz, under every scaling. */
Test(oracle_threshold, fp8_rows)
{
    const enum gg_dtype e4[] = {GG_DTYPE_E4M3, GG_DTYPE_E4M3FNUZ};
    const enum gg_dtype e5[] = {GG_DTYPE_E5M2, GG_DTYPE_E5M2FNUZ};
    const enum gg_scaling sc[] = {GG_SCALING_TENSOR, GG_SCALING_MX, GG_SCALING_NONE};
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 2; j++) {
                expect_row(row(e4[i], e4[j], GG_DTYPE_F32, sc[s]), &V1[E4M3_F32]);
                const struct gg_threshold *t = row(e4[i], e5[j], GG_DTYPE_F32, sc[s]);
                expect_row(t, &V1[E5M2_F32]);
                cr_expect_eq(row(e5[j], e4[i], GG_DTYPE_F32, sc[s]), t);
                expect_row(row(e5[i], e5[j], GG_DTYPE_F32, sc[s]), &V1[E5M2X2_F32]);
                expect_row(row(e5[i], e5[j], GG_DTYPE_BF16, sc[s]), &V1[E5M2X2_BF16]);
                expect_row(row(e4[i], e4[j], GG_DTYPE_BF16, sc[s]), &V1[E4M3_BF16]);
                expect_row(row(e5[i], e4[j], GG_DTYPE_BF16, sc[s]), &V1[E5M2_BF16]);
            }
        }
    }
}

Test(oracle_threshold, e2m1_rows)
{
    expect_row(row(GG_DTYPE_E2M1, GG_DTYPE_E2M1, GG_DTYPE_F32, GG_SCALING_MX), &V1[E2M1_F32]);
    expect_row(row(GG_DTYPE_E2M1, GG_DTYPE_E4M3, GG_DTYPE_BF16, GG_SCALING_MX), &V1[E2M1_BF16]);
}

Test(oracle_threshold, fallback_is_loosest)
{
    const struct gg_threshold *f = row(GG_DTYPE_F32, GG_DTYPE_F32, GG_DTYPE_F32, GG_SCALING_NONE);
    expect_row(f, &V1[FALLBACK]);
    cr_expect_eq(row(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_F16, GG_SCALING_NONE), f);
    cr_expect_eq(row(GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_SCALING_NONE), f);
    cr_expect_eq(row(GG_DTYPE_NONE, GG_DTYPE_NONE, GG_DTYPE_NONE, GG_SCALING_NONE), f);
    const enum gg_dtype in[] = {GG_DTYPE_BF16, GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E2M1};
    const enum gg_dtype out[] = {GG_DTYPE_BF16, GG_DTYPE_F32};
    for (int i = 0; i < 4; i++) {
        for (int o = 0; o < 2; o++) {
            const struct gg_threshold *t = row(in[i], in[i], out[o], GG_SCALING_NONE);
            cr_expect_neq(t, f);
            cr_expect_leq(f->snr_fail_db, t->snr_fail_db, "%s", t->name);
            cr_expect_geq(f->u_out, t->u_out, "%s", t->name);
            cr_expect_geq(f->eta_out, t->eta_out, "%s", t->name);
        }
    }
}

Test(oracle_threshold, rows_consistent)
{
    const enum gg_dtype in[] = {GG_DTYPE_BF16, GG_DTYPE_F16, GG_DTYPE_E4M3, GG_DTYPE_E5M2,
                                GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1, GG_DTYPE_F32};
    const enum gg_dtype out[] = {GG_DTYPE_BF16, GG_DTYPE_F32, GG_DTYPE_F16};
    for (int i = 0; i < 8; i++) {
        for (int o = 0; o < 3; o++) {
            const struct gg_threshold *t = row(in[i], in[i], out[o], GG_SCALING_NONE);
            cr_expect(t->name && t->name[0]);
            cr_expect_lt(t->snr_fail_db, t->snr_expected_db, "%s", t->name);
            cr_expect_lt(t->snr_src_fail_db, t->snr_fail_db, "%s", t->name);
            cr_expect(t->u_out > 0 && t->u_out < 1 && t->eta_out > 0, "%s", t->name);
            /* Output rounding from the table matches the format when the row names it. */
            if (out[o] != GG_DTYPE_F16 && strcmp(t->name, "fallback") != 0) {
                cr_expect_eq(t->u_out, gg_dtype_unit_roundoff(out[o]), "%s", t->name);
                cr_expect_eq(t->eta_out, gg_dtype_min_subnormal(out[o]) / 2, "%s", t->name);
            }
        }
    }
}

/* The levels gg_threshold_at gives a problem of op with reduction lengths n, k and group_lens. */
static struct gg_threshold levels_at(enum gg_op op, enum gg_dtype c, int64_t n, int64_t k,
                                     const int64_t *lens, int64_t groups)
{
    struct gg_problem p = {.op = op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .c_dtype = c, .groups = groups, .n = n, .k = k, .group_lens = lens};
    return gg_threshold_at(&p);
}

Test(oracle_threshold, f32_levels_fall_with_the_reduction)
{
    int64_t one[] = {16};
    struct gg_threshold t = levels_at(GG_OP_GROUPED_FWD, GG_DTYPE_F32, 64, 7168, one, 1);
    cr_expect_eq(t.snr_fail_db, 90.0, "flat up to k_ref");
    cr_expect_eq(t.snr_expected_db, 102.0);
    t = levels_at(GG_OP_GROUPED_FWD, GG_DTYPE_F32, 64, 71680, one, 1);
    cr_expect_float_eq(t.snr_fail_db, 70.0, 1e-9, "a decade past k_ref: 20 dB lower");
    cr_expect_float_eq(t.snr_expected_db, 82.0, 1e-9);
    /* the campaign's case: K = 55391, measured 82.3-83.7 dB on the H100 */
    t = levels_at(GG_OP_GROUPED_FWD, GG_DTYPE_F32, 15, 55391, one, 1);
    cr_expect_lt(t.snr_fail_db, 82.3 - 6.0);
    /* dgrad reduces over N, wgrad over each group's tokens (the longest decides) */
    t = levels_at(GG_OP_GROUPED_DGRAD, GG_DTYPE_F32, 71680, 64, one, 1);
    cr_expect_float_eq(t.snr_fail_db, 70.0, 1e-9);
    int64_t lens[] = {10, 71680, 5};
    t = levels_at(GG_OP_GROUPED_WGRAD, GG_DTYPE_F32, 64, 64, lens, 3);
    cr_expect_float_eq(t.snr_fail_db, 70.0, 1e-9);
    t = levels_at(GG_OP_GROUPED_WGRAD, GG_DTYPE_F32, 71680, 71680, one, 1);
    cr_expect_eq(t.snr_fail_db, 90.0, "wgrad: N and K are not reduced");
    /* bf16 out: the output rounding sets the level at any K */
    t = levels_at(GG_OP_GROUPED_FWD, GG_DTYPE_BF16, 64, 716800, one, 1);
    cr_expect_eq(t.snr_fail_db, 50.0);
}

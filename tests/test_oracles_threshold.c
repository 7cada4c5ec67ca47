/*
 * test_oracles_threshold.c — the versioned threshold table: which row each dtype combination
 * gets, and that every row is internally consistent.
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

Test(oracle_threshold, version)
{
    cr_expect_eq(GG_THRESHOLDS_VERSION, 1);
}

Test(oracle_threshold, bf16_rows)
{
    const struct gg_threshold *t = row(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE);
    cr_expect_str_eq(t->name, "bf16->bf16");
    cr_expect_eq(t->snr_fail_db, 50.0);
    cr_expect_eq(t->snr_expected_db, 55.6);
    cr_expect_eq(t->snr_src_fail_db, 0.0);
    cr_expect_eq(t->u_out, 0x1p-8);
    cr_expect_eq(t->eta_out, 0x1p-134);
    cr_expect_eq(t->u_acc, 0x1p-23);
    cr_expect_eq(t->kappa, 0.0);
    /* f16 inputs share the row. */
    cr_expect_eq(row(GG_DTYPE_F16, GG_DTYPE_F16, GG_DTYPE_BF16, GG_SCALING_NONE), t);
    cr_expect_eq(row(GG_DTYPE_F16, GG_DTYPE_BF16, GG_DTYPE_BF16, GG_SCALING_NONE), t);

    t = row(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_F32, GG_SCALING_NONE);
    cr_expect_str_eq(t->name, "bf16->f32");
    cr_expect_eq(t->snr_fail_db, 90.0);
    cr_expect_eq(t->snr_expected_db, 102.0);
    cr_expect_eq(t->u_out, 0x1p-24);
    cr_expect_eq(t->eta_out, 0x1p-150);
    cr_expect_eq(t->u_acc, 0x1p-23);
    cr_expect_eq(t->kappa, 0.0);
}

Test(oracle_threshold, fp8_rows)
{
    const enum gg_dtype e4[] = {GG_DTYPE_E4M3, GG_DTYPE_E4M3FNUZ};
    const enum gg_dtype e5[] = {GG_DTYPE_E5M2, GG_DTYPE_E5M2FNUZ};
    const enum gg_scaling sc[] = {GG_SCALING_TENSOR, GG_SCALING_MX, GG_SCALING_NONE};
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 2; j++) {
                const struct gg_threshold *t = row(e4[i], e4[j], GG_DTYPE_F32, sc[s]);
                cr_expect_str_eq(t->name, "e4m3->f32");
                cr_expect_eq(t->snr_fail_db, 70.0);
                cr_expect_eq(t->snr_expected_db, 77.9);
                cr_expect_eq(t->snr_src_fail_db, 25.0);
                cr_expect_eq(t->kappa, 0x1p-12);
                cr_expect_eq(t->u_out, 0x1p-24);
                t = row(e4[i], e5[j], GG_DTYPE_F32, sc[s]);
                cr_expect_str_eq(t->name, "e5m2->f32");
                cr_expect_eq(t->snr_fail_db, 70.0);
                cr_expect_eq(t->snr_src_fail_db, 20.0);
                cr_expect_eq(row(e5[j], e4[i], GG_DTYPE_F32, sc[s]), t);
                cr_expect_eq(row(e5[i], e5[j], GG_DTYPE_F32, sc[s]), t);
                t = row(e4[i], e4[j], GG_DTYPE_BF16, sc[s]);
                cr_expect_str_eq(t->name, "e4m3->bf16");
                cr_expect_eq(t->snr_fail_db, 50.0);
                cr_expect_eq(t->snr_expected_db, 55.6);
                cr_expect_eq(t->snr_src_fail_db, 25.0);
                cr_expect_eq(t->kappa, 0x1p-12);
                cr_expect_eq(t->u_out, 0x1p-8);
                cr_expect_eq(t->eta_out, 0x1p-134);
                t = row(e5[i], e4[j], GG_DTYPE_BF16, sc[s]);
                cr_expect_str_eq(t->name, "e5m2->bf16");
                cr_expect_eq(t->snr_src_fail_db, 20.0);
            }
        }
    }
}

Test(oracle_threshold, e2m1_rows)
{
    const struct gg_threshold *t = row(GG_DTYPE_E2M1, GG_DTYPE_E2M1, GG_DTYPE_F32, GG_SCALING_MX);
    cr_expect_str_eq(t->name, "e2m1->f32");
    cr_expect_eq(t->snr_fail_db, 70.0);
    cr_expect_eq(t->snr_src_fail_db, 0.0);
    cr_expect_eq(t->kappa, 0x1p-12);
    t = row(GG_DTYPE_E2M1, GG_DTYPE_E4M3, GG_DTYPE_BF16, GG_SCALING_MX);
    cr_expect_str_eq(t->name, "e2m1->bf16");
    cr_expect_eq(t->snr_fail_db, 50.0);
    cr_expect_eq(t->snr_src_fail_db, 0.0);
}

Test(oracle_threshold, fallback_is_loosest)
{
    const struct gg_threshold *f = row(GG_DTYPE_F32, GG_DTYPE_F32, GG_DTYPE_F32, GG_SCALING_NONE);
    cr_expect_str_eq(f->name, "fallback");
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

/*
 * test_oracles_snr.c — the element-level mathematics of the oracles: SNR edge cases, the
 * per-element bound τ, the NaN sentinels, and the 55.6 dB SNR of bf16 output rounding on normal
 * data (docs/checks.md §4).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "oracles/gg_oracle.h"

Test(oracle_snr, edge_cases)
{
    cr_expect(isinf(gg_oracle_snr_db(4.0, 0.0)) && gg_oracle_snr_db(4.0, 0.0) > 0);
    cr_expect(isinf(gg_oracle_snr_db(0.0, 0.0)) && gg_oracle_snr_db(0.0, 0.0) > 0);
    cr_expect(isinf(gg_oracle_snr_db(0.0, 1e-30)) && gg_oracle_snr_db(0.0, 1e-30) < 0);
    cr_expect_float_eq(gg_oracle_snr_db(100.0, 1.0), 20.0, 1e-12);
    cr_expect_float_eq(gg_oracle_snr_db(1.0, 1.0), 0.0, 1e-12);
    cr_expect_float_eq(gg_oracle_snr_db(1.0, 10.0), -10.0, 1e-12);
}

static struct gg_problem problem(enum gg_dtype a, enum gg_dtype b, enum gg_dtype c)
{
    return (struct gg_problem){.op = GG_OP_DENSE, .a_dtype = a, .b_dtype = b, .c_dtype = c,
                               .groups = 1};
}

Test(oracle_snr, bound_gamma_row)
{
    struct gg_problem p = problem(GG_DTYPE_BF16, GG_DTYPE_BF16, GG_DTYPE_BF16);
    const struct gg_threshold *t = gg_threshold_for(&p);
    double u = 0x1p-8, ua = 0x1p-23;
    double want = u / (1 - u) * 2.5 + (100 * ua / (1 - 100 * ua)) * 40.0 + 0x1p-134 + 102 * 0x1p-150;
    cr_expect_float_eq(gg_oracle_bound(t, -2.5, 40.0, 100), want, 1e-15 * want);
    /* Zero output, zero magnitudes: only η and the fp32 underflow of h + 2 operations remain. */
    cr_expect_eq(gg_oracle_bound(t, 0.0, 0.0, 100), 0x1p-134 + 102 * 0x1p-150);
    /* h·u ≥ 1: γ is infinite, the bound too, unless every product is zero. */
    cr_expect(isinf(gg_oracle_bound(t, 1.0, 1.0, (int64_t)1 << 23)));
    cr_expect(isinf(gg_oracle_bound(t, 1.0, 1.0, ((int64_t)1 << 23) + 5)));
    cr_expect(isfinite(gg_oracle_bound(t, 1.0, 0.0, (int64_t)1 << 23)));
    /* The bound grows with h. */
    cr_expect_lt(gg_oracle_bound(t, 1.0, 10.0, 64), gg_oracle_bound(t, 1.0, 10.0, 7168));
    /* docs/checks.md §3.4: K = 7168, Σ|ab| = 4563 gives an accumulation term of about 3.9. */
    double acc = gg_oracle_bound(t, 0.0, 4563.0, 7168) - 0x1p-134;
    cr_expect(acc > 3.85 && acc < 3.95, "γ term %g", acc);
}

Test(oracle_snr, bound_kappa_row)
{
    struct gg_problem p = problem(GG_DTYPE_E4M3, GG_DTYPE_E4M3, GG_DTYPE_F32);
    const struct gg_threshold *t = gg_threshold_for(&p);
    double u = 0x1p-24;
    double want = u / (1 - u) * 3.0 + 0x1p-8 * 4563.0 + 0x1p-150;
    /* κ replaces γ_h: h does not matter, even past h·u = 1. */
    cr_expect_float_eq(gg_oracle_bound(t, 3.0, 4563.0, 7168), want, 1e-15 * want);
    cr_expect_float_eq(gg_oracle_bound(t, 3.0, 4563.0, (int64_t)1 << 40), want, 1e-15 * want);
    /* Version 3: κ·Σ|ab| ≈ 17.8 at K = 7168 (docs/checks.md §3.4 gave 1.1 for version 2's 2^-12). */
    cr_expect(want > 17.8 && want < 17.85);
}

/* Bits of the float nearest x, and back. */
static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float f32_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

Test(oracle_snr, sentinels_are_uncommon_nans)
{
    const enum gg_dtype types[] = {GG_DTYPE_F32, GG_DTYPE_BF16, GG_DTYPE_F16};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        enum gg_dtype t = types[i];
        uint32_t s = gg_oracle_sentinel(t);
        cr_expect(isnan(gg_decode(t, s)), "%s sentinel is not NaN", gg_dtype_name(t));
        /* The NaN a conversion produces is not the sentinel. */
        cr_expect_neq(gg_encode(t, NAN, GG_SAT_NONE), s, "%s", gg_dtype_name(t));
        cr_expect_neq(gg_encode(t, -NAN, GG_SAT_NONE), s, "%s", gg_dtype_name(t));
    }
    /* Canonical CPU NaNs differ from the sentinels. */
    cr_expect_neq(gg_oracle_sentinel(GG_DTYPE_F32), 0x7FC00000u);
    cr_expect_neq(gg_oracle_sentinel(GG_DTYPE_F32), 0xFFC00000u);
    cr_expect_neq(gg_oracle_sentinel(GG_DTYPE_BF16), 0x7FC0u);
    cr_expect_neq(gg_oracle_sentinel(GG_DTYPE_BF16), 0xFFC0u);
    cr_expect_neq(gg_oracle_sentinel(GG_DTYPE_F16), 0x7E00u);
    /* Arithmetic on the sentinel (a kernel reading C) yields a NaN that is not the sentinel. */
    volatile float s = f32_of(gg_oracle_sentinel(GG_DTYPE_F32));
    float r = s + 1.0f;
    cr_expect(isnan(r));
    cr_expect_neq(f32_bits(r), gg_oracle_sentinel(GG_DTYPE_F32));
    cr_expect(isnan(f32_of(f32_bits(0.0f / s))));
    /* 8-bit outputs use a NaN code. */
    cr_expect(isnan(gg_decode(GG_DTYPE_E4M3, gg_oracle_sentinel(GG_DTYPE_E4M3))));
    cr_expect(isnan(gg_decode(GG_DTYPE_E5M2, gg_oracle_sentinel(GG_DTYPE_E5M2))));
    cr_expect(isnan(gg_decode(GG_DTYPE_E4M3FNUZ, gg_oracle_sentinel(GG_DTYPE_E4M3FNUZ))));
}

/* docs/checks.md §4: RN_bf16(x) for x ~ N(0,1) has SNR 6.02·7 + 13.46 = 55.6 dB. */
Test(oracle_snr, bf16_rounding_snr)
{
    struct gg_dist d = {GG_DIST_NORMAL, {0.0, 1.0, 0.0}, GG_DTYPE_F64};
    double sig = 0, err = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        double x = gg_dist_sample(&d, 7, GG_STREAM_A, i);
        double y = gg_decode(GG_DTYPE_BF16, gg_encode(GG_DTYPE_BF16, x, GG_SAT_NONE));
        sig += x * x;
        err += (y - x) * (y - x);
    }
    double snr = gg_oracle_snr_db(sig, err);
    cr_expect(snr > 54.6 && snr < 56.6, "bf16 rounding snr %.2f dB", snr);
}

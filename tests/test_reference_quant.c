/*
 * test_reference_quant.c — MX scale rules (OCP floor rule and the TransformerEngine / cuBLAS ceil
 * rule), MX block quantisation and the tensor-wise FP8 scale (gg_quant.c): hand cases where the
 * rules differ, clamp edges of E8M0, special values, and properties over random blocks.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>

#include "reference/gg_ref.h"
#include "splitmix.h"

static const enum gg_dtype mx_elems[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                         GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1};
#define N_MX_ELEMS ((int)(sizeof mx_elems / sizeof mx_elems[0]))

/* Exponent of the element format's largest normal, written out from the specifications. */
static int emax_of(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_E4M3: return 8;
    case GG_DTYPE_E5M2: return 15;
    case GG_DTYPE_E4M3FNUZ: return 7;
    case GG_DTYPE_E5M2FNUZ: return 15;
    case GG_DTYPE_E2M1: return 2;
    default: return 0;
    }
}

/* Significand of max_elem: the two rules agree for amax significands up to this value. */
static double max_significand(enum gg_dtype t)
{
    return ldexp(gg_dtype_max(t), -emax_of(t));
}

/* Uniform in (-1, 1) with 24 random bits (an fp32 value), times 2^k. */
static double random_f32_scaled(uint64_t *st, int k)
{
    int64_t r = (int64_t)(splitmix64(st) >> 40) - (1 << 23);
    return ldexp((double)r, k - 23);
}

/* ------------------------------------------------------------------------------------------ */
/* Scale rules                                                                                   */
/* ------------------------------------------------------------------------------------------ */

Test(reference_quant, rules_agree_up_to_max_significand_and_differ_above)
{
    static const int binades[] = {-100, -20, -1, 0, 1, 7, 40, 100};
    for (int i = 0; i < N_MX_ELEMS; i++) {
        enum gg_dtype t = mx_elems[i];
        int emax = emax_of(t);
        double sig = max_significand(t); /* 1.75 for e4m3/e5m2/e5m2fnuz, 1.875 e4m3fnuz, 1.5 e2m1 */
        for (size_t b = 0; b < sizeof binades / sizeof binades[0]; b++) {
            int k = binades[b];
            uint8_t want = (uint8_t)(127 + k - emax);
            static const double below[] = {1.0, 1.25, 1.5};
            for (size_t j = 0; j < sizeof below / sizeof below[0]; j++) {
                if (below[j] > sig)
                    continue;
                double amax = ldexp(below[j], k);
                cr_assert_eq(gg_mx_scale_code(amax, t, GG_MX_RULE_FLOOR), want, "%s %a",
                             gg_dtype_name(t), amax);
                cr_assert_eq(gg_mx_scale_code(amax, t, GG_MX_RULE_CEIL), want, "%s %a",
                             gg_dtype_name(t), amax);
            }
            /* significand exactly max_sig: amax / X = max_elem, both rules agree */
            double at = ldexp(sig, k);
            cr_assert_eq(gg_mx_scale_code(at, t, GG_MX_RULE_FLOOR), want, "%s %a", gg_dtype_name(t),
                         at);
            cr_assert_eq(gg_mx_scale_code(at, t, GG_MX_RULE_CEIL), want, "%s %a", gg_dtype_name(t),
                         at);
            /* significands in (max_sig, 2): the ceil rule takes the next binade */
            double above[3] = {(double)nextafterf((float)sig, 2.0f), (sig + 2.0) / 2,
                               (double)nextafterf(2.0f, 0.0f)};
            for (int j = 0; j < 3; j++) {
                double amax = ldexp(above[j], k);
                cr_assert_eq(gg_mx_scale_code(amax, t, GG_MX_RULE_FLOOR), want, "%s %a",
                             gg_dtype_name(t), amax);
                cr_assert_eq(gg_mx_scale_code(amax, t, GG_MX_RULE_CEIL), want + 1, "%s %a",
                             gg_dtype_name(t), amax);
            }
        }
    }
    /* the e4m3 figures of the specification: amax 1 -> 2^-8, 1.75 -> 2^-8, 1.76 -> 2^-8 / 2^-7 */
    cr_assert_eq(gg_mx_scale_code(1.0, GG_DTYPE_E4M3, GG_MX_RULE_FLOOR), 119);
    cr_assert_eq(gg_mx_scale_code(1.75, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 119);
    cr_assert_eq(gg_mx_scale_code(1.76, GG_DTYPE_E4M3, GG_MX_RULE_FLOOR), 119);
    cr_assert_eq(gg_mx_scale_code(1.76, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 120);
    cr_assert_eq(gg_mx_scale_code(-1.76, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 120, "sign ignored");
}

Test(reference_quant, ceil_rule_emulates_fp32_arithmetic)
{
    /* amax is rounded to fp32 before the product, as in TE: 1.75·(1 + 2^-30) becomes 1.75 and
       t = 2^-8 exactly, although the exact amax / 448 lies just above 2^-8 */
    double amax = 1.75 * (1.0 + 0x1p-30);
    cr_assert_gt(amax / 448.0, 0x1p-8);
    cr_assert_eq(gg_mx_scale_code(amax, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 119);
    cr_assert_eq(gg_mx_scale_code(ldexp(amax, 50), GG_DTYPE_E5M2, GG_MX_RULE_CEIL), 127 + 50 - 15);
    /* 1.75 + 0.875·2^-24 rounds to 1.75 in fp32 (119), although the binary64 product with
       fl32(1/448) would round up; 1.75 + 1.0625·2^-24 rounds up to the next fp32 (120), although
       fl32(amax / 448) is exactly 2^-8 */
    cr_assert_eq(gg_mx_scale_code(1.75 + 0x1.cp-25, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 119);
    cr_assert_eq(gg_mx_scale_code(1.75 + 0x1.1p-24, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 120);
    /* one fp32 ulp higher, the product leaves the power of two and rounds up a binade */
    cr_assert_eq(gg_mx_scale_code(1.75 + 0x1p-22, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), 120);
    /* bit pattern checks of the emulation: t = fl32(amax·fl32(1/448)) */
    uint64_t st = 5;
    for (int k = 0; k < 20000; k++) {
        float a = (float)ldexp(1.0 + ldexp((double)(splitmix64(&st) >> 40), -24),
                               (int)(splitmix64(&st) % 200) - 100);
        volatile float rcp = 1.0f / 448.0f;
        volatile float t = a * rcp;
        int e;
        float f = frexpf(t, &e); /* t = f·2^e, f in [0.5, 1) */
        int want = 127 + (f == 0.5f ? e - 1 : e);
        cr_assert_eq(gg_mx_scale_code(a, GG_DTYPE_E4M3, GG_MX_RULE_CEIL), want, "amax %a",
                     (double)a);
    }
}

Test(reference_quant, zero_inf_nan_amax)
{
    for (int i = 0; i < N_MX_ELEMS; i++) {
        enum gg_dtype t = mx_elems[i];
        /* amax = 0: floor uses log2(FP32_MIN_NORMAL) = -126, below -127 after - emax: clamp */
        cr_assert_eq(gg_mx_scale_code(0.0, t, GG_MX_RULE_FLOOR), 0x00, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_mx_scale_code(0.0, t, GG_MX_RULE_CEIL), 0x00, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_mx_scale_code(INFINITY, t, GG_MX_RULE_FLOOR), 0xFF, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_mx_scale_code(NAN, t, GG_MX_RULE_FLOOR), 0xFF, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_mx_scale_code(INFINITY, t, GG_MX_RULE_CEIL), 0xFE, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_mx_scale_code(NAN, t, GG_MX_RULE_CEIL), 0xFF, "%s", gg_dtype_name(t));
    }
}

Test(reference_quant, clamp_edges_near_two_to_the_127)
{
    const enum gg_dtype t = GG_DTYPE_E4M3;
    /* floor: e = floor(log2 amax) - 8; 448·2^127 gives e = 127, 2^136 gives 128 -> NaN */
    cr_assert_eq(gg_mx_scale_code(ldexp(448.0, 127), t, GG_MX_RULE_FLOOR), 0xFE);
    cr_assert_eq(gg_mx_scale_code(nextafter(0x1p136, 0.0), t, GG_MX_RULE_FLOOR), 0xFE);
    cr_assert_eq(gg_mx_scale_code(0x1p136, t, GG_MX_RULE_FLOOR), 0xFF);
    cr_assert_eq(gg_mx_scale_code(DBL_MAX, t, GG_MX_RULE_FLOOR), 0xFF);
    /* ceil: fl32(amax) overflows to Inf above FLT_MAX: 0xFE; FLT_MAX·fl(1/448) ≈ 2^119.2 */
    cr_assert_eq(gg_mx_scale_code(ldexp(448.0, 127), t, GG_MX_RULE_CEIL), 0xFE);
    cr_assert_eq(gg_mx_scale_code(DBL_MAX, t, GG_MX_RULE_CEIL), 0xFE);
    cr_assert_eq(gg_mx_scale_code(FLT_MAX, t, GG_MX_RULE_CEIL), 127 + 120);
    cr_assert_eq(gg_mx_scale_code(FLT_MAX, GG_DTYPE_E2M1, GG_MX_RULE_CEIL), 127 + 126);

    /* the quantised block at the top edge: amax / X = 448 with X = 2^127 */
    double v[2] = {ldexp(448.0, 127), -ldexp(1.0, 127)};
    uint8_t scale;
    uint32_t codes[2];
    gg_mx_quantise_block(v, 2, t, GG_MX_RULE_FLOOR, &scale, codes);
    cr_assert_eq(scale, 0xFE);
    cr_assert_eq(codes[0], 0x7E);
    cr_assert_eq(codes[1], 0xB8); /* -1.0 */
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, scale) * gg_decode(t, codes[0]), v[0]);
}

Test(reference_quant, clamp_edges_near_two_to_the_minus_127)
{
    const enum gg_dtype t = GG_DTYPE_E4M3;
    /* floor: 2^-119 gives e = -127 (code 0), 2^-118 code 1, smaller amax clamp to code 0 */
    cr_assert_eq(gg_mx_scale_code(0x1p-118, t, GG_MX_RULE_FLOOR), 0x01);
    cr_assert_eq(gg_mx_scale_code(0x1p-119, t, GG_MX_RULE_FLOOR), 0x00);
    cr_assert_eq(gg_mx_scale_code(0x1p-120, t, GG_MX_RULE_FLOOR), 0x00);
    cr_assert_eq(gg_mx_scale_code(0x1p-127, t, GG_MX_RULE_FLOOR), 0x00);
    cr_assert_eq(gg_mx_scale_code(0x1p-1074, t, GG_MX_RULE_FLOOR), 0x00);
    /* ceil: t = amax·fl(1/448) becomes an fp32 subnormal; t ≤ 2^-127 stays at code 0 */
    cr_assert_eq(gg_mx_scale_code(0x1.cp-118, t, GG_MX_RULE_CEIL), 0x01); /* t = 2^-126 */
    cr_assert_eq(gg_mx_scale_code(0x1.cp-119, t, GG_MX_RULE_CEIL), 0x00); /* t = 2^-127 */
    cr_assert_eq(gg_mx_scale_code(0x1.dp-119, t, GG_MX_RULE_CEIL), 0x01); /* t > 2^-127 */
    cr_assert_eq(gg_mx_scale_code(0x1p-140, t, GG_MX_RULE_CEIL), 0x00);
    cr_assert_eq(gg_mx_scale_code(0x1p-200, t, GG_MX_RULE_CEIL), 0x00); /* fl32(amax) = 0 */
    /* TE's subnormal rounding keeps code 0 one fp32 ulp above 448·2^-127: amax / X then
       exceeds 448 by less than an e4m3 half-ulp, and the element still rounds to 448 */
    double amax = (double)nextafterf(0x1.cp-119f, 1.0f);
    cr_assert_eq(gg_mx_scale_code(amax, t, GG_MX_RULE_CEIL), 0x00);
    cr_assert_gt(ldexp(amax, 127), 448.0);
    uint8_t scale;
    uint32_t code;
    gg_mx_quantise_block(&amax, 1, t, GG_MX_RULE_CEIL, &scale, &code);
    cr_assert_eq(scale, 0x00);
    cr_assert_eq(code, 0x7E);
    cr_assert_eq(gg_encode(t, ldexp(amax, 127), GG_SAT_NONE), 0x7E, "rounded, not saturated");
    /* subnormal-only block: elements are exact multiples of 2^-127 · 2^-9 */
    double tiny[3] = {0x1p-136, 0x1p-130, -0x1.8p-134};
    uint32_t c3[3];
    gg_mx_quantise_block(tiny, 3, t, GG_MX_RULE_FLOOR, &scale, c3);
    cr_assert_eq(scale, 0x00);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(gg_decode(t, c3[i]) * 0x1p-127, tiny[i], "element %d", i);
}

/* ------------------------------------------------------------------------------------------ */
/* Block quantisation                                                                            */
/* ------------------------------------------------------------------------------------------ */

Test(reference_quant, nan_and_inf_in_block)
{
    for (int i = 0; i < N_MX_ELEMS; i++) {
        enum gg_dtype t = mx_elems[i];
        double v[32];
        for (int j = 0; j < 32; j++)
            v[j] = (j - 16) * 0.25;
        for (int rule = 0; rule < 2; rule++) {
            uint8_t scale;
            uint32_t codes[32];
            v[5] = NAN;
            gg_mx_quantise_block(v, 32, t, (enum gg_mx_rule)rule, &scale, codes);
            cr_assert_eq(scale, 0xFF, "%s rule %d", gg_dtype_name(t), rule);
            for (int j = 0; j < 32; j++) {
                cr_assert_eq(codes[j], 0u);
                /* a NaN scale makes every value of the block NaN */
                cr_assert(isnan(gg_decode(GG_DTYPE_E8M0, scale) * gg_decode(t, codes[j])));
            }
            v[5] = -INFINITY;
            gg_mx_quantise_block(v, 32, t, (enum gg_mx_rule)rule, &scale, codes);
            if (rule == GG_MX_RULE_FLOOR) {
                cr_assert_eq(scale, 0xFF, "%s", gg_dtype_name(t));
                for (int j = 0; j < 32; j++)
                    cr_assert_eq(codes[j], 0u);
            } else {
                /* TE maps an infinite amax to 0xFE; the Inf element saturates to -max */
                cr_assert_eq(scale, 0xFE, "%s", gg_dtype_name(t));
                cr_assert_eq(gg_decode(t, codes[5]), -gg_dtype_max(t), "%s", gg_dtype_name(t));
                cr_assert_eq(gg_decode(t, codes[16]), 0.0);
            }
            v[5] = -11 * 0.25;
        }
    }
}

Test(reference_quant, all_zero_and_empty_blocks)
{
    double v[32] = {0};
    v[3] = -0.0;
    uint8_t scale = 0x55;
    uint32_t codes[32];
    for (int rule = 0; rule < 2; rule++) {
        gg_mx_quantise_block(v, 32, GG_DTYPE_E4M3, (enum gg_mx_rule)rule, &scale, codes);
        cr_assert_eq(scale, 0x00);
        for (int j = 0; j < 32; j++)
            cr_assert_eq(codes[j], j == 3 ? 0x80u : 0u);
        gg_mx_quantise_block(v, 0, GG_DTYPE_E4M3, (enum gg_mx_rule)rule, &scale, codes);
        cr_assert_eq(scale, 0x00);
    }
    gg_mx_quantise_block(v, 32, GG_DTYPE_E4M3FNUZ, GG_MX_RULE_FLOOR, &scale, codes);
    cr_assert_eq(codes[3], 0u, "fnuz has no -0");
}

/* Random blocks of fp32 values spread over many binades, both rules, every element format:
   codes are the saturating RNE of v / X; the ceil rule never needs saturation (|v| / X ≤ max,
   so its codes equal the non-saturating encoding); the floor rule puts amax / X in
   [2^emax, 2^(emax+1)) and saturates some blocks. */
Test(reference_quant, random_block_properties)
{
    uint64_t st = 42;
    for (int i = 0; i < N_MX_ELEMS; i++) {
        enum gg_dtype t = mx_elems[i];
        int emax = emax_of(t);
        double max = gg_dtype_max(t);
        long saturated_floor = 0;
        for (int blk = 0; blk < 4000; blk++) {
            int k = (int)(splitmix64(&st) % 200) - 100;
            double v[32], amax = 0.0;
            for (int j = 0; j < 32; j++) {
                v[j] = random_f32_scaled(&st, k - (int)(splitmix64(&st) % 4));
                amax = fmax(amax, fabs(v[j]));
            }
            for (int rule = 0; rule < 2; rule++) {
                uint8_t x;
                uint32_t codes[32];
                gg_mx_quantise_block(v, 32, t, (enum gg_mx_rule)rule, &x, codes);
                cr_assert_eq(x, gg_mx_scale_code(amax, t, (enum gg_mx_rule)rule));
                cr_assert(x != 0xFF && x != 0x00, "block %d: scale 0x%x", blk, x);
                double X = gg_decode(GG_DTYPE_E8M0, x);
                double ratio = amax / X; /* exact: X is a power of two */
                if (rule == GG_MX_RULE_CEIL) {
                    cr_assert_leq(ratio, max, "%s block %d: amax/X = %a", gg_dtype_name(t), blk,
                                  ratio);
                    cr_assert_gt(ratio, max / 2,
                                 "ceil picks the smallest X that avoids saturation");
                } else {
                    cr_assert(ratio >= ldexp(1.0, emax) && ratio < ldexp(1.0, emax + 1),
                              "%s block %d: amax/X = %a", gg_dtype_name(t), blk, ratio);
                    saturated_floor += ratio > max;
                }
                for (int j = 0; j < 32; j++) {
                    double q = ldexp(v[j], 127 - x);
                    cr_assert_eq(codes[j], gg_encode(t, q, GG_SAT_FINITE));
                    if (rule == GG_MX_RULE_CEIL)
                        cr_assert_eq(codes[j], gg_encode(t, q, GG_SAT_NONE), "no saturation");
                    /* dequantised error within half an element ulp (relative 2^-p) or half
                       the scaled smallest subnormal */
                    double err = fabs(gg_decode(t, codes[j]) * X - v[j]);
                    double tol = fmax(gg_dtype_unit_roundoff(t) * fabs(v[j]),
                                      gg_dtype_min_subnormal(t) * X / 2);
                    if (rule == GG_MX_RULE_CEIL || fabs(q) <= max)
                        cr_assert_leq(err, tol, "%s: v = %a, X = %a", gg_dtype_name(t), v[j], X);
                }
            }
        }
        /* blocks whose amax significand exceeds max_sig saturate under the floor rule */
        if (max_significand(t) < 2.0)
            cr_assert_gt(saturated_floor, 0, "%s", gg_dtype_name(t));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Tensor-wise scale                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* max_elem / amax correctly rounded to binary32 by MPFR (results in the fp32 normal range). */
static float mpfr_div_f32(double num, double den)
{
    mpfr_t n, d, q;
    mpfr_inits2(64, n, d, (mpfr_ptr)0);
    mpfr_init2(q, 24);
    mpfr_set_d(n, num, MPFR_RNDN);
    mpfr_set_d(d, den, MPFR_RNDN);
    mpfr_div(q, n, d, MPFR_RNDN);
    float f = mpfr_get_flt(q, MPFR_RNDN);
    mpfr_clears(n, d, q, (mpfr_ptr)0);
    return f;
}

Test(reference_quant, tensor_scale_values)
{
    cr_assert_eq(gg_tensor_scale(0.0, GG_DTYPE_E4M3), 1.0f);
    cr_assert_eq(gg_tensor_scale(INFINITY, GG_DTYPE_E4M3), 1.0f);
    cr_assert_eq(gg_tensor_scale(NAN, GG_DTYPE_E4M3), 1.0f);
    cr_assert_eq(gg_tensor_scale(448.0, GG_DTYPE_E4M3), 1.0f);
    cr_assert_eq(gg_tensor_scale(1.0, GG_DTYPE_E4M3), 448.0f);
    cr_assert_eq(gg_tensor_scale(2.0, GG_DTYPE_E5M2), 28672.0f);
    cr_assert_eq(gg_tensor_scale(1.0, GG_DTYPE_E4M3FNUZ), 240.0f);
    cr_assert_eq(gg_tensor_scale(3.0, GG_DTYPE_E4M3), 448.0f / 3.0f);
    cr_assert_eq(gg_tensor_scale(-3.0, GG_DTYPE_E4M3), 448.0f / 3.0f);
    /* quotients outside binary32 are clamped so that s and 1/s stay finite and non-zero */
    cr_assert_eq(gg_tensor_scale(1e-300, GG_DTYPE_E4M3), FLT_MAX);
    cr_assert_eq(gg_tensor_scale(1e300, GG_DTYPE_E4M3), 0x1p-149f);

    uint64_t st = 7;
    for (int k = 0; k < 100000; k++) {
        double amax = ldexp(1.0 + ldexp((double)(splitmix64(&st) >> 11), -53),
                            (int)(splitmix64(&st) % 200) - 100);
        cr_assert_eq(gg_tensor_scale(amax, GG_DTYPE_E4M3), mpfr_div_f32(448.0, amax), "amax %a",
                     amax);
    }
}

/* Inputs for which (float)(448.0 / amax) double-rounds: the binary64 quotient lands exactly
   on a binary32 midpoint m although the true quotient does not. */
Test(reference_quant, tensor_scale_rounds_once)
{
    uint64_t st = 99;
    int candidates = 0, naive_wrong = 0;
    for (int k = 0; k < 20000; k++) {
        /* m: a 25-bit odd significand, the midpoint of two binary32 neighbours */
        double m =
            ldexp((double)((splitmix64(&st) >> 40) | (1u << 24) | 1u), -24 + (int)(k % 20) - 10);
        double amax = 448.0 / m;
        if (448.0 / amax != m || fma(-m, amax, 448.0) == 0.0)
            continue;
        candidates++;
        float want = mpfr_div_f32(448.0, amax);
        naive_wrong += (float)(448.0 / amax) != want;
        cr_assert_eq(gg_tensor_scale(amax, GG_DTYPE_E4M3), want, "amax %a", amax);
    }
    cr_assert_gt(candidates, 100);
    cr_assert_gt(naive_wrong, 0, "the test inputs must include real double-rounding cases");
}

Test(reference_quant, tensor_scale_round_trip)
{
    static const enum gg_dtype elems[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ};
    uint64_t st = 2024;
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
        enum gg_dtype t = elems[e];
        for (int trial = 0; trial < 200; trial++) {
            int k = (int)(splitmix64(&st) % 120) - 60;
            double x[64], amax = 0.0;
            for (int j = 0; j < 64; j++) {
                x[j] = random_f32_scaled(&st, k);
                amax = fmax(amax, fabs(x[j]));
            }
            float s = gg_tensor_scale(amax, t);
            float scale_inv = (float)(1.0 / s);
            for (int j = 0; j < 64; j++) {
                uint32_t c = gg_encode(t, x[j] * s, GG_SAT_NONE);
                double d = gg_decode(t, c);
                cr_assert(isfinite(d), "%s: amax·s stays within max (no overflow)",
                          gg_dtype_name(t));
                double back = d * (double)scale_inv;
                double tol =
                    (gg_dtype_unit_roundoff(t) * fabs(x[j]) + gg_dtype_min_subnormal(t) / 2 / s) *
                    (1 + 0x1p-20);
                cr_assert_leq(fabs(back - x[j]), tol, "%s: x = %a back %a", gg_dtype_name(t), x[j],
                              back);
            }
            /* the largest element lands at max_elem */
            cr_assert_eq(gg_decode(t, gg_encode(t, amax * s, GG_SAT_NONE)), gg_dtype_max(t));
        }
    }
}

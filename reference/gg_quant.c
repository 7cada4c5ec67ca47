/*
 * gg_quant.c — quantisation of real data into scaled low-precision codes: the E8M0 scale of an
 * MX block under the OCP floor rule and under the ceil rule of TransformerEngine / cuBLAS (a
 * bit-exact emulation of its fp32 arithmetic), MX block quantisation, and the fp32 multiplier of
 * tensor-wise FP8 scaling. Pure functions; element codes come from gg_encode.
 */
#include "reference/gg_ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Exponent of the element format's largest normal: e4m3 8, e5m2 15, e4m3fnuz 7 (max 240),
   e5m2fnuz 15, e2m1 2. */
static int elem_emax(enum gg_dtype elem)
{
    double max = gg_dtype_max(elem);
    return max > 0.0 ? ilogb(max) : 0;
}

/*
 * OCP rule (MX v1.0 §6.3; microxcaling _shared_exponents): e = floor(log2 amax) - emax_elem,
 * with floor(log2) taken exactly (ilogb) rather than through a rounded log2. amax = 0 uses
 * log2(FP32_MIN_NORMAL) = -126. e > 127 (also Inf or NaN in the block) gives the NaN scale
 * 0xFF; e < -127 is clamped to -127 (code 0x00).
 */
static uint8_t scale_floor(double amax, int emax)
{
    if (!isfinite(amax))
        return 0xFF;
    int e = (amax == 0.0 ? -126 : ilogb(amax)) - emax;
    if (e > 127)
        return 0xFF;
    if (e < -127)
        e = -127;
    return (uint8_t)(e + 127);
}

/*
 * Ceil rule, as TransformerEngine's float_to_e8m0(amax * max_norm_rcp) computes it in fp32:
 * t = fl32(fl32(amax) · fl32(1/max_elem)); NaN gives 0xFF, Inf 0xFE, 0 gives 0x00; otherwise
 * the biased fp32 exponent of t, incremented when the fraction is non-zero (round up to a power
 * of two), except that 0xFE stays 0xFE (satfinite) and a subnormal t ≤ 2^-127 (exponent field
 * 0, fraction ≤ 0x400000) stays at 0x00 = 2^-127. Every operation is forced to binary32.
 */
static uint8_t scale_ceil(double amax, double max_elem)
{
    volatile float rcp = 1.0f / (float)max_elem;
    volatile float t = (float)amax * rcp;
    float tv = t;
    if (isnan(tv))
        return 0xFF;
    if (isinf(tv))
        return 0xFE;
    if (tv == 0.0f)
        return 0x00;
    uint32_t u;
    memcpy(&u, &tv, sizeof u);
    uint32_t exponent = (u >> 23) & 0xFFu, mantissa = u & 0x7FFFFFu;
    if (mantissa > 0 && exponent != 0xFE && !(exponent == 0 && mantissa <= 0x400000u))
        exponent++;
    return (uint8_t)exponent;
}

uint8_t gg_mx_scale_code(double amax, enum gg_dtype elem, enum gg_mx_rule rule)
{
    amax = fabs(amax);
    if (rule == GG_MX_RULE_CEIL)
        return scale_ceil(amax, gg_dtype_max(elem));
    return scale_floor(amax, elem_emax(elem));
}

/*
 * amax propagates NaN (fmax would drop it). Elements are v / X = ldexp(v, 127 - scale), exact
 * unless the quotient falls below the binary64 normal range, where every element format
 * rounds it to zero anyway; gg_encode then rounds once, saturating.
 */
void gg_mx_quantise_block(const double *v, int n, enum gg_dtype elem, enum gg_mx_rule rule,
                          uint8_t *scale, uint32_t *codes)
{
    double amax = 0.0;
    for (int i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (isnan(a) || a > amax)
            amax = a;
        if (isnan(a))
            break;
    }
    uint8_t x = gg_mx_scale_code(amax, elem, rule);
    *scale = x;
    for (int i = 0; i < n; i++)
        codes[i] = x == 0xFF ? 0u : gg_encode(elem, ldexp(v[i], 127 - (int)x), GG_SAT_FINITE);
}

/*
 * s = max_elem / amax correctly rounded to binary32 (rounding once: the binary64 quotient is
 * turned into a round-to-odd value with the exact fma residual, so the final conversion cannot
 * double-round; for binary32 amax this equals the fp32 division fp8_max / amax). 1 when amax is
 * 0 or not finite. A quotient beyond the binary32 range is clamped to [2^-149, FLT_MAX] so that
 * s and 1/s stay finite and non-zero.
 */
float gg_tensor_scale(double amax, enum gg_dtype elem)
{
    amax = fabs(amax);
    if (amax == 0.0 || !isfinite(amax))
        return 1.0f;
    double max = gg_dtype_max(elem);
    double q = max / amax;
    double r = fma(-q, amax, max); /* exact: max - q·amax */
    if (r != 0.0) {
        /* round toward zero, then set the last bit: round-to-odd, safe to round again */
        double rz = r < 0.0 ? nextafter(q, 0.0) : q;
        uint64_t bits;
        memcpy(&bits, &rz, sizeof bits);
        bits |= 1u;
        memcpy(&q, &bits, sizeof q);
    }
    if (q > FLT_MAX)
        return FLT_MAX;
    float s = (float)q;
    return s > 0.0f ? s : 0x1p-149f;
}

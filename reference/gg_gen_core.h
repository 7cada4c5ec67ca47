/*
 * gg_gen_core.h — the single source of case data: Philox4x32-10 and the draws built on it, the
 * per-element samplers of every distribution, E8M0 planting, the round-to-nearest-even encoders
 * of every format, MX block quantisation and the tensor-wise FP8 scale. Every function is a
 * static inline GG_HD function: the C files of reference/ wrap them in the public API of
 * gg_ref.h, and the device generator (fuzz/run/device) compiles the same text for the GPU.
 *
 * Bit-identity between host and device rests on three rules, kept by every function here:
 *   - integers only, or binary64/binary32 + - * / and fma, each correctly rounded, written
 *     through GG_DMUL/GG_DADD/... so that no compiler may contract a*b+c into a fused operation;
 *   - no libm (ilogb, ldexp, floor, fmod, nextafter are exact bit manipulations here);
 *   - the format properties are constants in switch statements, not tables in host memory.
 * Changing any output bit changes every generated case (tests/test_reference_golden.c).
 */
#ifndef GG_GEN_CORE_H
#define GG_GEN_CORE_H

#include <stdint.h>
#include <string.h>

#include "reference/gg_ref.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define GG_HD __host__ __device__
#else
#define GG_HD
#endif

/* Correctly rounded binary64 and binary32 operations that a compiler cannot fuse. */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define GG_DMUL(a, b) __dmul_rn((a), (b))
#define GG_DADD(a, b) __dadd_rn((a), (b))
#define GG_DFMA(a, b, c) __fma_rn((a), (b), (c))
#define GG_FMUL(a, b) __fmul_rn((a), (b))
#define GG_FDIV(a, b) __fdiv_rn((a), (b))
#define GG_D2F(x) __double2float_rn(x)
#else
#include <math.h>
/* Separate functions: C's contraction (GCC's default in ISO C mode is off anyway) only fuses
   within one expression, so a product returned from one and added in another stays rounded. */
static inline double gg_core_dmul(double a, double b)
{
    return a * b;
}
static inline double gg_core_dadd(double a, double b)
{
    return a + b;
}
static inline float gg_core_fmul(float a, float b)
{
    volatile float p = a * b; /* binary32, whatever FLT_EVAL_METHOD */
    return p;
}
static inline float gg_core_fdiv(float a, float b)
{
    volatile float q = a / b;
    return q;
}
#define GG_DMUL(a, b) gg_core_dmul((a), (b))
#define GG_DADD(a, b) gg_core_dadd((a), (b))
#define GG_DFMA(a, b, c) fma((a), (b), (c))
#define GG_FMUL(a, b) gg_core_fmul((a), (b))
#define GG_FDIV(a, b) gg_core_fdiv((a), (b))
#define GG_D2F(x) ((float)(x))
#endif

/* ------------------------------------------------------------------------------------------ */
/* Bits                                                                                         */
/* ------------------------------------------------------------------------------------------ */

GG_HD static inline uint64_t gg_core_d2u(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

GG_HD static inline double gg_core_u2d(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

GG_HD static inline uint32_t gg_core_f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

#define GG_CORE_NAN_BITS 0x7FF8000000000000ull
#define GG_CORE_ABS_MASK 0x7FFFFFFFFFFFFFFFull
#define GG_CORE_INF_BITS 0x7FF0000000000000ull

/* 2^e for -1022 <= e <= 1023 (exact). */
GG_HD static inline double gg_core_pow2(int e)
{
    return gg_core_u2d((uint64_t)(e + 1023) << 52);
}

/* floor(log2 |x|) of a finite non-zero double whose exponent field is not zero; callers treat
   binary64 subnormals (far below every format here) separately. */
GG_HD static inline int gg_core_exp(uint64_t abs_bits)
{
    return (int)(abs_bits >> 52) - 1023;
}

/* ------------------------------------------------------------------------------------------ */
/* Philox4x32-10 and draws                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Round multipliers and Weyl key increments (golden ratio and sqrt(3)-1 in 32-bit fixed point). */
#define GG_PHILOX_M0 0xD2511F53u
#define GG_PHILOX_M1 0xCD9E8D57u
#define GG_PHILOX_W0 0x9E3779B9u
#define GG_PHILOX_W1 0xBB67AE85u
#define GG_PHILOX_ROUNDS 10

/* One Philox S-box round (Random123's philox4x32round): two 32x32->64 products, the high halves
   xored with the other counter words and the round key, then the word permutation. */
GG_HD static inline void gg_core_philox_round(uint32_t *c0, uint32_t *c1, uint32_t *c2,
                                              uint32_t *c3, uint32_t k0, uint32_t k1)
{
    uint64_t p0 = (uint64_t)GG_PHILOX_M0 * *c0, p1 = (uint64_t)GG_PHILOX_M1 * *c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ *c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ *c3 ^ k1;
    *c0 = n0;
    *c1 = (uint32_t)p1;
    *c2 = n2;
    *c3 = (uint32_t)p0;
}

/* Ten rounds; the key is bumped by the Weyl increments between rounds. */
GG_HD static inline void gg_core_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < GG_PHILOX_ROUNDS; r++) {
        gg_core_philox_round(&c0, &c1, &c2, &c3, k0, k1);
        k0 += GG_PHILOX_W0;
        k1 += GG_PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* Key = (seed lo, seed hi); counter = (i lo, i hi, stream lo, q). Draws 2q and 2q+1 are the
   low and high 64-bit halves (words 0,1 and 2,3) of one Philox block. */
GG_HD static inline void gg_core_rng_pair(uint64_t seed, uint64_t stream, uint64_t i, uint32_t q,
                                          uint64_t out[2])
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream, q};
    uint32_t w[4];
    gg_core_philox(ctr, key, w);
    out[0] = (uint64_t)w[0] | ((uint64_t)w[1] << 32);
    out[1] = (uint64_t)w[2] | ((uint64_t)w[3] << 32);
}

GG_HD static inline uint64_t gg_core_rng_u64(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    uint64_t pair[2];
    gg_core_rng_pair(seed, stream, i, j / 2u, pair);
    return pair[j % 2u];
}

/* The top 53 bits as a multiple of 2^-53: exact, in [0, 1 - 2^-53]. */
GG_HD static inline double gg_core_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    return (double)(gg_core_rng_u64(seed, stream, i, j) >> 11) * 0x1p-53;
}

/* Draws used by the E8M0 planting: far above those of any distribution (draws 0..8), so
   planting on a scale stream is independent of the scale values drawn there. */
#define GG_PLANT_DRAW_SELECT 16u
#define GG_PLANT_DRAW_CHOICE 17u

GG_HD static inline int gg_core_plant_e8m0(uint64_t seed, uint64_t stream, uint64_t i, double frac,
                                           uint8_t *code)
{
    if (!(gg_core_rng_uniform(seed, stream, i, GG_PLANT_DRAW_SELECT) < frac))
        return 0;
    /* The top two bits pick one of the four edge codes 0x00, 0x01, 0xFE, 0xFF uniformly. */
    uint32_t top = (uint32_t)(gg_core_rng_u64(seed, stream, i, GG_PLANT_DRAW_CHOICE) >> 62);
    *code = top == 0 ? 0x00 : top == 1 ? 0x01 : top == 2 ? 0xFE : 0xFF;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Format properties                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Largest finite value (E8M0: 2^127); 0 for none. gg_format.c's table holds the same constants. */
GG_HD static inline double gg_core_dtype_max(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64: return 0x1.fffffffffffffp+1023;
    case GG_DTYPE_F32: return 0x1.fffffep+127;
    case GG_DTYPE_F16: return 0x1.ffcp+15;
    case GG_DTYPE_BF16: return 0x1.fep+127;
    case GG_DTYPE_E4M3: return 0x1.cp+8;
    case GG_DTYPE_E5M2: return 0x1.cp+15;
    case GG_DTYPE_E4M3FNUZ: return 0x1.ep+7;
    case GG_DTYPE_E5M2FNUZ: return 0x1.cp+15;
    case GG_DTYPE_E2M1: return 0x1.8p+2;
    case GG_DTYPE_E8M0: return 0x1p+127;
    default: return 0.0;
    }
}

/* Smallest positive value (subnormal where the format has them; E8M0: 2^-127). */
GG_HD static inline double gg_core_dtype_min_sub(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64: return 0x1p-1074;
    case GG_DTYPE_F32: return 0x1p-149;
    case GG_DTYPE_F16: return 0x1p-24;
    case GG_DTYPE_BF16: return 0x1p-133;
    case GG_DTYPE_E4M3: return 0x1p-9;
    case GG_DTYPE_E5M2: return 0x1p-16;
    case GG_DTYPE_E4M3FNUZ: return 0x1p-10;
    case GG_DTYPE_E5M2FNUZ: return 0x1p-17;
    case GG_DTYPE_E2M1: return 0x1p-1;
    case GG_DTYPE_E8M0: return 0x1p-127;
    default: return 0.0;
    }
}

/* Significand precision p including the implicit bit (E8M0: 1); 0 for none. */
GG_HD static inline int gg_core_dtype_precision(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64: return 53;
    case GG_DTYPE_F32: return 24;
    case GG_DTYPE_F16: return 11;
    case GG_DTYPE_BF16: return 8;
    case GG_DTYPE_E4M3: case GG_DTYPE_E4M3FNUZ: return 4;
    case GG_DTYPE_E5M2: case GG_DTYPE_E5M2FNUZ: return 3;
    case GG_DTYPE_E2M1: return 2;
    case GG_DTYPE_E8M0: return 1;
    default: return 0;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Samplers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * Draws of element i (j in gg_rng_u64):
 *   0..5  the Irwin-Hall normal (12 32-bit halves); uniform and ints use draw 0
 *   0, 1  nearsat: table index, sign
 *   6     mixtures (outliers, subnormal, specials, codes): the selector, taken when u < frac
 *   7     mixtures: the sign (outliers), the special's index (specials, codes), the magnitude
 *         (subnormal)
 *   8     subnormal, codes: the sign (top bit); codes: a NaN's payload index (low bits)
 * The normal part of a mixture uses draws 0..5, so a mixture with frac = 0 is bitwise normal.
 */
#define GG_DRAW_NORMAL_BLOCKS 3
#define GG_DRAW_SELECT 6u
#define GG_DRAW_CHOICE 7u
#define GG_DRAW_SIGN 8u

/* Largest integer argument of ints(r). */
#define GG_INTS_MAX_R 1073741824.0 /* 2^30 */

/* floor(a * b / 2^64): the high word of the 128-bit product, from 32-bit partial products. */
GG_HD static inline uint64_t gg_core_mulhi64(uint64_t a, uint64_t b)
{
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
    uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

/* Uniform integer in [0, n): floor(u64 · n / 2^64). The bias is below n / 2^64. */
GG_HD static inline uint64_t gg_core_draw_below(uint64_t seed, uint64_t stream, uint64_t i,
                                                uint32_t j, uint64_t n)
{
    return gg_core_mulhi64(gg_core_rng_u64(seed, stream, i, j), n);
}

/* x with the sign of the top bit of draw j (a sign flip: exact). */
GG_HD static inline double gg_core_signed(double x, uint64_t seed, uint64_t stream, uint64_t i,
                                          uint32_t j)
{
    uint64_t neg = gg_core_rng_u64(seed, stream, i, j) >> 63;
    return gg_core_u2d(gg_core_d2u(x) ^ (neg << 63));
}

/* Irwin-Hall: S = sum of twelve uniform 32-bit integers (exact, S < 12 · 2^32 < 2^36), and
   z = S · 2^-32 - 6 is exact too (a multiple of 2^-32 below 2^3 in magnitude). z has mean
   -6·2^-32, variance 1 - 2^-64, and lies in [-6, 6). The value is mean + std·z with the product
   rounded, then the sum rounded. */
GG_HD static inline double gg_core_normal(double mean, double std, uint64_t seed, uint64_t stream,
                                          uint64_t i)
{
    uint64_t s = 0;
    for (uint32_t q = 0; q < GG_DRAW_NORMAL_BLOCKS; q++) { /* draws 2q and 2q+1: one block */
        uint64_t x[2];
        gg_core_rng_pair(seed, stream, i, q, x);
        s += (x[0] & 0xFFFFFFFFu) + (x[0] >> 32) + (x[1] & 0xFFFFFFFFu) + (x[1] >> 32);
    }
    double z = (double)s * 0x1p-32 - 6.0; /* both steps exact */
    return GG_DADD(mean, GG_DMUL(std, z));
}

/* True with probability frac (exactly frac rounded to a multiple of 2^-53). */
GG_HD static inline int gg_core_selected(double frac, uint64_t seed, uint64_t stream, uint64_t i)
{
    return gg_core_rng_uniform(seed, stream, i, GG_DRAW_SELECT) < frac;
}

/* The format whose subnormals and max a distribution uses: fmt itself, or E4M3 when fmt has no
   meaningful one (none, E8M0, out of range). */
GG_HD static inline enum gg_dtype gg_core_value_format(enum gg_dtype fmt)
{
    if (fmt <= GG_DTYPE_NONE || fmt >= GG_DTYPE_COUNT || fmt == GG_DTYPE_E8M0)
        return GG_DTYPE_E4M3;
    return fmt;
}

/* The format nearsat targets: the narrow float formats and fp16 keep their own, wide formats
   (bf16, fp32, fp64: data that is usually quantised to fp8 afterwards) use E4M3's. */
GG_HD static inline enum gg_dtype gg_core_nearsat_format(enum gg_dtype fmt)
{
    switch (fmt) {
    case GG_DTYPE_F16:
    case GG_DTYPE_E4M3:
    case GG_DTYPE_E5M2:
    case GG_DTYPE_E4M3FNUZ:
    case GG_DTYPE_E5M2FNUZ:
    case GG_DTYPE_E2M1:
        return fmt;
    default:
        return GG_DTYPE_E4M3;
    }
}

#define GG_NEARSAT_COUNT 6

/* Magnitudes that stress saturation, max M, spacing below max q = 2^(floor(log2 M) + 1 - p),
   tie point T = M + q/2 (e4m3: M = 448, q = 32):
     M             the largest finite value
     T             rounds to M under RNE (448's significand is even), overflows above (464)
     T(1 + 2^-20)  just above the tie: overflows
     T(1 - 2^-20)  just below the tie: rounds to M
     M + q         the overflow threshold of PyTorch's non-saturating cast (e4m3: 480, fnuz: 256)
     M - q/2       the tie between max and its predecessor: rounds to M (432) */
GG_HD static inline double gg_core_nearsat_value(enum gg_dtype t, unsigned idx)
{
    double m = gg_core_dtype_max(t);
    double q = gg_core_pow2(gg_core_exp(gg_core_d2u(m)) + 1 - gg_core_dtype_precision(t));
    double half_q = 0.5 * q, tie = m + half_q; /* exact */
    switch (idx) {
    case 0: return m;
    case 1: return tie;
    case 2: return GG_DMUL(tie, 1.0 + 0x1p-20);
    case 3: return GG_DMUL(tie, 1.0 - 0x1p-20);
    case 4: return m + q;
    default: return m - half_q;
    }
}

/* k · min_sub with k uniform in [1, 2^(p-1) - 1]: every positive subnormal of t; exact. */
GG_HD static inline double gg_core_subnormal_value(enum gg_dtype fmt, uint64_t seed, uint64_t stream,
                                                   uint64_t i)
{
    enum gg_dtype t = gg_core_value_format(fmt);
    int p = gg_core_dtype_precision(t);
    uint64_t n = p >= 2 && p <= 63 ? ((uint64_t)1 << (p - 1)) - 1u : 1u;
    uint64_t k = 1u + gg_core_draw_below(seed, stream, i, GG_DRAW_CHOICE, n);
    return gg_core_signed((double)k * gg_core_dtype_min_sub(t), seed, stream, i, GG_DRAW_SIGN);
}

GG_HD static inline double gg_core_special(enum gg_dtype fmt, uint64_t seed, uint64_t stream,
                                           uint64_t i)
{
    double max = gg_core_dtype_max(gg_core_value_format(fmt));
    switch (gg_core_draw_below(seed, stream, i, GG_DRAW_CHOICE, 3)) {
    case 0: return gg_core_u2d(GG_CORE_NAN_BITS);
    case 1: return max;
    default: return -max;
    }
}

#define GG_CODES_COUNT 5

/*
 * A special code of codes(frac) as the value whose encoding into fmt (at scale 1) is that code:
 * the kind is draw GG_DRAW_CHOICE, the sign the top bit of draw GG_DRAW_SIGN, and a NaN's payload
 * index (gg_encode: which of the format's NaN codes) that draw's low 32 bits mod 3.
 *   0  ±Inf             1  NaN of either sign      2  -0
 *   3  ±max finite      4  ±min subnormal
 * Formats without Inf see ±Inf as an overflow (sat=none: NaN; sat=finite: ±max); fnuz turns -0
 * into +0 and every NaN into 0x80.
 */
GG_HD static inline double gg_core_code_value(enum gg_dtype fmt, uint64_t seed, uint64_t stream,
                                              uint64_t i)
{
    enum gg_dtype t = gg_core_value_format(fmt);
    uint64_t draw = gg_core_rng_u64(seed, stream, i, GG_DRAW_SIGN);
    uint64_t sign = draw & ~GG_CORE_ABS_MASK;
    switch (gg_core_draw_below(seed, stream, i, GG_DRAW_CHOICE, GG_CODES_COUNT)) {
    case 0: return gg_core_u2d(sign | GG_CORE_INF_BITS);
    case 1: return gg_core_u2d(sign | GG_CORE_NAN_BITS | (uint32_t)draw % 3u);
    case 2: return gg_core_u2d(~GG_CORE_ABS_MASK);
    case 3: return gg_core_u2d(sign | gg_core_d2u(gg_core_dtype_max(t)));
    default: return gg_core_u2d(sign | gg_core_d2u(gg_core_dtype_min_sub(t)));
    }
}

/* Element i of stream for seed under distribution d (gg_dist_sample). */
GG_HD static inline double gg_core_sample(const struct gg_dist *d, uint64_t seed, uint64_t stream,
                                          uint64_t i)
{
    switch (d->kind) {
    case GG_DIST_NORMAL:
        return gg_core_normal(d->p[0], d->p[1], seed, stream, i);
    case GG_DIST_UNIFORM: {
        double width = d->p[1] - d->p[0];
        return GG_DADD(d->p[0], GG_DMUL(width, gg_core_rng_uniform(seed, stream, i, 0)));
    }
    case GG_DIST_INTS: {
        /* r as gg_dist_parse accepts it; other values (unchecked structs) act as r = 0. */
        uint64_t r = (d->p[0] >= 0.0 && d->p[0] <= GG_INTS_MAX_R) ? (uint64_t)d->p[0] : 0u;
        uint64_t k = gg_core_draw_below(seed, stream, i, 0, 2u * r + 1u);
        return (double)((int64_t)k - (int64_t)r);
    }
    case GG_DIST_CONST:
        return d->p[0];
    case GG_DIST_OUTLIERS:
        if (gg_core_selected(d->p[1], seed, stream, i))
            return gg_core_signed(GG_DMUL(d->p[2], d->p[0]), seed, stream, i, GG_DRAW_CHOICE);
        return gg_core_normal(0.0, d->p[0], seed, stream, i);
    case GG_DIST_NEARSAT: {
        enum gg_dtype t = gg_core_nearsat_format(d->fmt);
        unsigned idx = (unsigned)gg_core_draw_below(seed, stream, i, 0, GG_NEARSAT_COUNT);
        return gg_core_signed(gg_core_nearsat_value(t, idx), seed, stream, i, 1);
    }
    case GG_DIST_SUBNORMAL:
        if (gg_core_selected(d->p[0], seed, stream, i))
            return gg_core_subnormal_value(d->fmt, seed, stream, i);
        return gg_core_normal(0.0, 1.0, seed, stream, i);
    case GG_DIST_SPECIALS:
        if (gg_core_selected(d->p[0], seed, stream, i))
            return gg_core_special(d->fmt, seed, stream, i);
        return gg_core_normal(0.0, 1.0, seed, stream, i);
    case GG_DIST_CODES:
        if (gg_core_selected(d->p[0], seed, stream, i))
            return gg_core_code_value(d->fmt, seed, stream, i);
        return gg_core_normal(0.0, 1.0, seed, stream, i);
    default:
        return gg_core_u2d(GG_CORE_NAN_BITS);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Encoders                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * A binary format as the encoder sees it: m fraction bits, the bias, the width, the code
 * magnitude (code without its sign bit) of the largest finite value, the code every NaN input
 * gets, the magnitude a non-saturating overflow gets (with the input's sign unless fnuz), and
 * whether the format is fnuz (no -0, one unsigned NaN code 0x80 that also takes overflow).
 * E2M1 has neither Inf nor NaN: its overflow magnitude is its maximum (it always saturates) and
 * NaN inputs encode as ±6 (0x7 with the NaN's sign), a documented choice since the format
 * cannot represent NaN.
 * nbits = 0: no 32-bit code (f64, none).
 */
struct gg_core_binfmt {
    int mbits, bias, nbits;
    uint32_t max_mag, nan_code, ovf_mag;
    int fnuz;
};

GG_HD static inline struct gg_core_binfmt gg_core_binfmt_make(int mbits, int bias, int nbits,
                                                              uint32_t max_mag, uint32_t nan_code,
                                                              uint32_t ovf_mag, int fnuz)
{
    struct gg_core_binfmt f;
    f.mbits = mbits;
    f.bias = bias;
    f.nbits = nbits;
    f.max_mag = max_mag;
    f.nan_code = nan_code;
    f.ovf_mag = ovf_mag;
    f.fnuz = fnuz;
    return f;
}

GG_HD static inline struct gg_core_binfmt gg_core_binfmt_of(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F32: return gg_core_binfmt_make(23, 127, 32, 0x7F7FFFFFu, 0x7FC00000u, 0x7F800000u, 0);
    case GG_DTYPE_F16: return gg_core_binfmt_make(10, 15, 16, 0x7BFFu, 0x7E00u, 0x7C00u, 0);
    case GG_DTYPE_BF16: return gg_core_binfmt_make(7, 127, 16, 0x7F7Fu, 0x7FC0u, 0x7F80u, 0);
    case GG_DTYPE_E4M3: return gg_core_binfmt_make(3, 7, 8, 0x7Eu, 0x7Fu, 0x7Fu, 0);
    case GG_DTYPE_E5M2: return gg_core_binfmt_make(2, 15, 8, 0x7Bu, 0x7Fu, 0x7Cu, 0);
    case GG_DTYPE_E4M3FNUZ: return gg_core_binfmt_make(3, 8, 8, 0x7Fu, 0x80u, 0x80u, 1);
    case GG_DTYPE_E5M2FNUZ: return gg_core_binfmt_make(2, 16, 8, 0x7Fu, 0x80u, 0x80u, 1);
    case GG_DTYPE_E2M1: return gg_core_binfmt_make(1, 1, 4, 0x7u, 0x7u, 0x7u, 0);
    default: return gg_core_binfmt_make(0, 0, 0, 0, 0, 0, 0);
    }
}

/* The code of a NaN with sign bit sign and absolute bits a (gg_encode): fnuz has one unsigned
   NaN; a format with Inf codes has NaN codes besides the canonical one, chosen by the payload's
   low two bits (1: the one next to Inf, 2: the canonical one with its lowest bit flipped). */
GG_HD static inline uint32_t gg_core_nan_code(const struct gg_core_binfmt *f, uint32_t sign,
                                              uint64_t a)
{
    if (f->fnuz)
        return f->nan_code;
    uint32_t mag = f->nan_code, idx = (uint32_t)(a & 3u);
    if (f->ovf_mag != f->nan_code && idx != 0 && idx != 3)
        mag = idx == 1 ? f->ovf_mag + 1u : f->nan_code ^ 1u;
    return sign | mag;
}

/* The code of an overflowing input (rounded magnitude above max, or ±Inf) with sign bit sign. */
GG_HD static inline uint32_t gg_core_overflow(const struct gg_core_binfmt *f, uint32_t sign,
                                              enum gg_sat sat)
{
    if (sat == GG_SAT_FINITE)
        return sign | f->max_mag;
    return f->fnuz ? f->ovf_mag : sign | f->ovf_mag;
}

/*
 * Round-to-nearest-even of x into f, from the exact binary64 value. With e = floor(log2 |x|)
 * and emin = 1 - bias, the quantum of the target binade is 2^q, q = max(e, emin) - m. In
 * integers: |x| = M·2^(e-52) with the 53-bit significand M, so |x|/2^q = M / 2^sh with
 * sh = 52 - m + max(e, emin) - e, and n = RNE(M / 2^sh) comes from the discarded bits (above,
 * at or below the half). The code magnitude is ((max(e, emin) + bias - 1) << m) + n: the
 * concatenation of exponent and fraction fields, in which n = 2^m (subnormal to normal) or
 * n = 2^(m+1) (next binade) carries into the exponent. Code magnitudes are monotonic in value,
 * so the rounded value exceeds max exactly when the magnitude exceeds max_mag. binary64
 * subnormals lie far below half of every format's smallest subnormal and give zero.
 */
GG_HD static inline uint32_t gg_core_encode_binary(const struct gg_core_binfmt *f, double x,
                                                   enum gg_sat sat)
{
    uint64_t u = gg_core_d2u(x), a = u & GG_CORE_ABS_MASK;
    uint32_t sign = (u >> 63) ? 1u << (f->nbits - 1) : 0u;
    if (a > GG_CORE_INF_BITS)
        return gg_core_nan_code(f, sign, a);
    if (a == GG_CORE_INF_BITS)
        return gg_core_overflow(f, sign, sat);
    uint32_t mag = 0;
    if ((a >> 52) != 0) {
        int emin = 1 - f->bias;
        int emax = (int)(f->max_mag >> f->mbits) - f->bias;
        int e = gg_core_exp(a);
        if (e > emax + 1)
            return gg_core_overflow(f, sign, sat);
        int eq = e < emin ? emin : e;
        uint64_t sig = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
        int sh = 52 - f->mbits + (eq - e);
        uint64_t n = 0;
        if (sh < 54) { /* sh >= 54: M / 2^sh < 1/2, rounds to 0 */
            uint64_t rest = sig & ((1ull << sh) - 1u), half = 1ull << (sh - 1);
            n = sig >> sh;
            if (rest > half || (rest == half && (n & 1u)))
                n++;
        }
        int64_t m64 = ((int64_t)(eq + f->bias - 1) << f->mbits) + (int64_t)n;
        if (m64 > (int64_t)f->max_mag)
            return gg_core_overflow(f, sign, sat);
        mag = (uint32_t)m64;
    }
    if (mag == 0 && f->fnuz)
        return 0; /* fnuz has no -0: every result that rounds to zero is +0 */
    return sign | mag;
}

/*
 * E8M0 (no sign, no zero): x = f·2^e with f in [1, 2) goes to 2^e when f < 1.5 and to 2^(e+1)
 * otherwise (nearest power of two, the linear midpoint rounding up, as torch's float8_e8m0fnu
 * cast does): f >= 1.5 is the top fraction bit. Results below 2^-127, zero and negative inputs
 * give 0x00 (2^-127); results above 2^127, ±Inf and NaN give 0xFF (NaN).
 */
GG_HD static inline uint32_t gg_core_encode_e8m0(double x)
{
    uint64_t u = gg_core_d2u(x), a = u & GG_CORE_ABS_MASK;
    if (a >= GG_CORE_INF_BITS)
        return 0xFFu;
    if ((u >> 63) || (a >> 52) == 0) /* negative, zero, or a binary64 subnormal (< 2^-1022) */
        return 0x00u;
    int code = gg_core_exp(a) + 127 + (int)((a >> 51) & 1u);
    if (code < 0)
        return 0x00u;
    return code > 254 ? 0xFFu : (uint32_t)code;
}

/* gg_encode: RNE of x into t (E8M0 to the nearest power of two); 0 for f64 and none. */
GG_HD static inline uint32_t gg_core_encode(enum gg_dtype t, double x, enum gg_sat sat)
{
    if (t == GG_DTYPE_E8M0)
        return gg_core_encode_e8m0(x);
    struct gg_core_binfmt f = gg_core_binfmt_of(t);
    return f.nbits ? gg_core_encode_binary(&f, x, sat) : 0u;
}

/* gg_encode_scaled: the code of v·s, a NaN v encoded as it is (a GPU's product would return its
   canonical NaN and lose the sign and payload that pick the code). */
GG_HD static inline uint32_t gg_core_encode_scaled(enum gg_dtype t, double v, double s,
                                                   enum gg_sat sat)
{
    return gg_core_encode(t, (gg_core_d2u(v) & GG_CORE_ABS_MASK) > GG_CORE_INF_BITS ? v
                                                                                     : GG_DMUL(v, s),
                          sat);
}

/* ------------------------------------------------------------------------------------------ */
/* Quantisers                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * OCP rule (MX v1.0 §6.3; microxcaling _shared_exponents): e = floor(log2 amax) - emax_elem,
 * with floor(log2) taken exactly rather than through a rounded log2; emax_elem is the exponent
 * of the element format's largest normal (e4m3 8, e5m2 15, e4m3fnuz 7, e5m2fnuz 15, e2m1 2).
 * amax = 0 uses log2(FP32_MIN_NORMAL) = -126. e > 127 (also Inf or NaN in the block) gives the
 * NaN scale 0xFF; e < -127 is clamped to -127 (code 0x00).
 */
GG_HD static inline uint8_t gg_core_scale_floor(double amax, enum gg_dtype elem)
{
    uint64_t a = gg_core_d2u(amax) & GG_CORE_ABS_MASK, mb = gg_core_d2u(gg_core_dtype_max(elem));
    if (a >= GG_CORE_INF_BITS)
        return 0xFF;
    int emax = mb != 0 ? gg_core_exp(mb) : 0;
    int la = a == 0 ? -126 : (a >> 52) == 0 ? -1023 : gg_core_exp(a); /* subnormal: below -1022 */
    int e = la - emax;
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
 * 0, fraction ≤ 0x400000) stays at 0x00 = 2^-127. Every operation is binary32.
 */
GG_HD static inline uint8_t gg_core_scale_ceil(double amax, enum gg_dtype elem)
{
    float rcp = GG_FDIV(1.0f, GG_D2F(gg_core_dtype_max(elem)));
    uint32_t u = gg_core_f2u(GG_FMUL(GG_D2F(amax), rcp));
    uint32_t exponent = (u >> 23) & 0xFFu, mantissa = u & 0x7FFFFFu;
    if (exponent == 0xFFu)
        return mantissa ? 0xFF : 0xFE;
    if ((u & 0x7FFFFFFFu) == 0)
        return 0x00;
    if (mantissa > 0 && exponent != 0xFE && !(exponent == 0 && mantissa <= 0x400000u))
        exponent++;
    return (uint8_t)exponent;
}

/* gg_mx_scale_code. */
GG_HD static inline uint8_t gg_core_mx_scale_code(double amax, enum gg_dtype elem, enum gg_mx_rule rule)
{
    amax = gg_core_u2d(gg_core_d2u(amax) & GG_CORE_ABS_MASK);
    return rule == GG_MX_RULE_CEIL ? gg_core_scale_ceil(amax, elem) : gg_core_scale_floor(amax, elem);
}

/* |v| as bits: for non-negative doubles the bit order is the value order, and every NaN lies
   above +Inf, so the running maximum of these bits is the absolute maximum with NaN winning. */
GG_HD static inline uint64_t gg_core_abs_bits(double v)
{
    return gg_core_d2u(v) & GG_CORE_ABS_MASK;
}

/* Absolute maximum of n values, NaN when any is NaN (canonical NaN: the value is only ever
   compared and turned into a scale). */
GG_HD static inline double gg_core_amax(const double *v, int64_t n)
{
    uint64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = gg_core_abs_bits(v[i]);
        m = a > m ? a : m;
    }
    return gg_core_u2d(m > GG_CORE_INF_BITS ? GG_CORE_NAN_BITS : m);
}

/* Absolute maximum of the finite ones of n values (0 when none is). */
GG_HD static inline double gg_core_amax_finite(const double *v, int64_t n)
{
    uint64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = gg_core_abs_bits(v[i]);
        m = a > m && a < GG_CORE_INF_BITS ? a : m;
    }
    return gg_core_u2d(m);
}

/*
 * gg_mx_quantise_block_sat: elements are v / X = v · 2^(127 - scale), a product by a power of
 * two (|127 - scale| ≤ 127, a normal binary64), exact unless the quotient falls below the
 * binary64 normal range, where it is rounded once like any product and every element format
 * rounds it to zero anyway; the encoder then rounds once, saturating. GG_SAT_FINITE: an Inf or
 * NaN in the block makes the amax, hence the scale, NaN (the ceil rule turns Inf into 0xFE and
 * saturates). GG_SAT_NONE: the scale comes from the finite values, and Inf and NaN elements keep
 * their codes (non-saturating encoding; a NaN's sign and payload as gg_encode takes them).
 */
GG_HD static inline void gg_core_mx_quantise_block(const double *v, int n, enum gg_dtype elem,
                                                   enum gg_mx_rule rule, enum gg_sat sat,
                                                   uint8_t *scale, uint32_t *codes)
{
    int keep = sat == GG_SAT_NONE;
    uint8_t x = gg_core_mx_scale_code(keep ? gg_core_amax_finite(v, n) : gg_core_amax(v, n), elem,
                                      rule);
    *scale = x;
    double f = gg_core_pow2(127 - (int)x);
    for (int i = 0; i < n; i++) {
        int special = keep && gg_core_abs_bits(v[i]) >= GG_CORE_INF_BITS;
        codes[i] = x == 0xFF ? 0u
                             : gg_core_encode_scaled(elem, v[i], f,
                                                     special ? GG_SAT_NONE : GG_SAT_FINITE);
    }
}

/*
 * gg_tensor_scale: s = max_elem / amax correctly rounded to binary32, rounding once: the binary64
 * quotient is turned into a round-to-odd value with the exact fma residual (toward zero, then
 * the last bit set), so the final conversion cannot double-round. 1 when amax is 0 or not
 * finite. A quotient beyond the binary32 range is clamped to [2^-149, FLT_MAX].
 */
GG_HD static inline float gg_core_tensor_scale(double amax, enum gg_dtype elem)
{
    uint64_t a = gg_core_abs_bits(amax);
    if (a == 0 || a >= GG_CORE_INF_BITS)
        return 1.0f;
    amax = gg_core_u2d(a);
    double max = gg_core_dtype_max(elem);
    double q = max / amax;
    double r = GG_DFMA(-q, amax, max); /* exact: max - q·amax */
    if (r != 0.0) {
        uint64_t bits = gg_core_d2u(q);
        if (r < 0.0) /* q > 0 was rounded up: step toward zero */
            bits -= 1u;
        q = gg_core_u2d(bits | 1u);
    }
    if (q > 0x1.fffffep+127)
        return 0x1.fffffep+127f;
    float s = GG_D2F(q);
    return s > 0.0f ? s : 0x1p-149f;
}

/* ------------------------------------------------------------------------------------------ */
/* Generated operands                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* How an operand's codes are scaled. */
enum gg_gen_quant {
    GG_GEN_PLAIN = 0, /* encode the values directly (codes of v · 1) */
    GG_GEN_MX,        /* E8M0 per 32 along the row (gg_mx_quantise_block_sat, then planting) */
    GG_GEN_BLOCK128,  /* fp32 per 128 along the row: s = gg_tensor_scale(amax of the 128) */
    GG_GEN_TENSOR,    /* fp32 per tensor, or per matrix when per_mat */
    GG_GEN_GRID       /* fp32 per block of grid_rows rows × grid_cols columns of each matrix
                         (grid_rows 0: the row blocks are the groups of row_offs; -1: one row
                         block, the whole matrix): s = gg_tensor_scale(amax of the block) */
};

/*
 * One generated operand, the same description for the host materialiser and the device
 * generator. The operand is mats matrices of rows × rowlen elements, matrix i at element
 * i·mstride, row r at r·ld. Element (i, r, col) has the logical row L = i·rows + r and takes
 * generator element L·rowlen + col of stream. With group_lens (host memory) set, matrix i is
 * generated only when group_lens[i] > 0 (the weights of empty groups are never touched).
 * Scales: MX code of block b of logical row L at L·(rowlen/32) + b; block128 factor of group b
 * at L·ceil(rowlen/128) + b; tensor factor at 0, or at i per matrix (1 for empty matrices);
 * grid factor of block (rb, cb) of matrix i at gg_gen_grid_slot (1 for empty matrices and
 * blocks without rows). Factors are dequantisation factors 1/s as fp32; codes are
 * encode(v · s).
 */
struct gg_gen_plan {
    struct gg_dist dist; /* fmt set to dtype */
    enum gg_dtype dtype;
    uint64_t seed, stream, scale_stream;
    enum gg_gen_quant quant;
    int per_mat;
    enum gg_sat sat;     /* saturation of the element encoder (MX: finite values always
                            saturate, see gg_mx_quantise_block_sat) */
    enum gg_mx_rule mx_rule;
    double plant_e8m0;   /* MX: fraction of scale codes replaced by edge codes */
    int64_t mats, rows, rowlen, mstride, ld;
    const int64_t *group_lens;
    /* GG_GEN_GRID: the block shape; with grid_rows 0, row block b is rows row_offs[b] ..
       row_offs[b+1]-1 (row_groups + 1 host entries: the groups' rows of a wgrad operand), with
       grid_rows -1 one block holds every row (even none: the scales of a matrix's columns). */
    int64_t grid_rows, grid_cols, row_groups;
    const int64_t *row_offs;
};

/* GG_GEN_GRID: row blocks per matrix, column blocks per row. */
GG_HD static inline int64_t gg_gen_grid_row_blocks(const struct gg_gen_plan *g)
{
    if (g->grid_rows < 0)
        return 1;
    return g->grid_rows > 0 ? (g->rows + g->grid_rows - 1) / g->grid_rows : g->row_groups;
}

GG_HD static inline int64_t gg_gen_grid_col_blocks(const struct gg_gen_plan *g)
{
    return (g->rowlen + g->grid_cols - 1) / g->grid_cols;
}

/* GG_GEN_GRID: the scale slot of row block rb and column col of matrix mat. */
GG_HD static inline int64_t gg_gen_grid_slot(const struct gg_gen_plan *g, int64_t mat,
                                             int64_t rb, int64_t col)
{
    return (mat * gg_gen_grid_row_blocks(g) + rb) * gg_gen_grid_col_blocks(g) +
           col / g->grid_cols;
}

#endif /* GG_GEN_CORE_H */

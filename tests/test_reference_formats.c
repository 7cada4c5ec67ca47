/*
 * test_reference_formats.c — exact decoding and encoding of every number format (gg_format.c),
 * checked against an independent MPFR decoder built from the bit fields and the parameters of
 * the specifications (OFP8 Rev 1.0, OCP MX v1.0, IEEE 754, fnuz), a brute-force nearest-code
 * search and MPFR's own correctly rounded conversions.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include "reference/gg_ref.h"
#include "splitmix.h"

/* ------------------------------------------------------------------------------------------ */
/* Independent format descriptions                                                               */
/* ------------------------------------------------------------------------------------------ */

/* Use of the top codes: IEEE (E all ones: Inf or NaN), FN (only S.1..1.1..1 is NaN), FNUZ (the
   negative zero pattern is the only NaN), NONE (every code finite), E8M0 (2^(x-127), 0xFF NaN). */
enum spec_kind { K_IEEE, K_FN, K_FNUZ, K_NONE, K_E8M0 };

struct spec {
    enum gg_dtype t;
    int ebits, mbits, bias;
    enum spec_kind kind;
};

static const struct spec small_specs[] = {
    {GG_DTYPE_E4M3, 4, 3, 7, K_FN},       {GG_DTYPE_E5M2, 5, 2, 15, K_IEEE},
    {GG_DTYPE_E4M3FNUZ, 4, 3, 8, K_FNUZ}, {GG_DTYPE_E5M2FNUZ, 5, 2, 16, K_FNUZ},
    {GG_DTYPE_E2M1, 2, 1, 1, K_NONE},     {GG_DTYPE_E8M0, 8, 0, 127, K_E8M0},
};
#define N_SMALL ((int)(sizeof small_specs / sizeof small_specs[0]))

static const struct spec spec_bf16 = {GG_DTYPE_BF16, 8, 7, 127, K_IEEE};
static const struct spec spec_f16 = {GG_DTYPE_F16, 5, 10, 15, K_IEEE};
static const struct spec spec_f32 = {GG_DTYPE_F32, 8, 23, 127, K_IEEE};

/* The formats encoded by RNE with a sign (all but E8M0). */
static const enum gg_dtype rne_small[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1};
#define N_RNE_SMALL ((int)(sizeof rne_small / sizeof rne_small[0]))

enum cls { C_FINITE, C_INF, C_NAN };

static int spec_bits(const struct spec *s)
{
    return s->kind == K_E8M0 ? 8 : 1 + s->ebits + s->mbits;
}

/* Class of code under s; for finite codes v receives the exact value, built in MPFR from the
   fields: E > 0: (-1)^S (2^m + M) 2^(E-bias-m), E = 0: (-1)^S M 2^(1-bias-m). */
static enum cls spec_decode(const struct spec *s, uint32_t code, mpfr_t v)
{
    if (s->kind == K_E8M0) {
        if (code == 0xFF)
            return C_NAN;
        mpfr_set_ui(v, 1, MPFR_RNDN);
        mpfr_mul_2si(v, v, (long)code - 127, MPFR_RNDN);
        return C_FINITE;
    }
    uint32_t S = code >> (s->ebits + s->mbits);
    uint32_t E = (code >> s->mbits) & ((1u << s->ebits) - 1u);
    uint32_t M = code & ((1u << s->mbits) - 1u);
    uint32_t emask = (1u << s->ebits) - 1u, mmask = (1u << s->mbits) - 1u;
    if (s->kind == K_IEEE && E == emask)
        return M == 0 ? C_INF : C_NAN;
    if (s->kind == K_FN && E == emask && M == mmask)
        return C_NAN;
    if (s->kind == K_FNUZ && S == 1 && E == 0 && M == 0)
        return C_NAN;
    uint32_t sig = E == 0 ? M : (1u << s->mbits) + M;
    long exp2 = (E == 0 ? 1L : (long)E) - s->bias - s->mbits;
    mpfr_set_ui(v, sig, MPFR_RNDN);
    mpfr_mul_2si(v, v, exp2, MPFR_RNDN);
    if (S)
        mpfr_neg(v, v, MPFR_RNDN);
    return C_FINITE;
}

/* 1 when gg_decode(s->t, code) agrees with the MPFR decoder (value, sign of zero, class). */
static int decode_matches(const struct spec *s, uint32_t code, mpfr_t v)
{
    double d = gg_decode(s->t, code);
    switch (spec_decode(s, code, v)) {
    case C_NAN: return isnan(d);
    case C_INF: return isinf(d) && (signbit(d) != 0) == (int)((code >> (spec_bits(s) - 1)) & 1u);
    default:
        return !isnan(d) && mpfr_cmp_d(v, d) == 0 && (signbit(d) != 0) == (mpfr_signbit(v) != 0);
    }
}

/* Checks codes [0, n) with stride step; reports the count and the first mismatch. */
static void check_decode_range(const struct spec *s, uint64_t n, uint64_t step)
{
    mpfr_t v;
    mpfr_init2(v, 64);
    uint64_t bad = 0, first = 0;
    for (uint64_t c = 0; c < n; c += step) {
        if (!decode_matches(s, (uint32_t)c, v) && bad++ == 0)
            first = c;
    }
    mpfr_clear(v);
    cr_assert_eq(bad, 0, "%s: %llu codes decode wrongly, first 0x%llx -> %a", gg_dtype_name(s->t),
                 (unsigned long long)bad, (unsigned long long)first,
                 gg_decode(s->t, (uint32_t)first));
}

/* A double with random sign and 52 random fraction bits, log-uniform in [2^lo, 2^hi). */
static double random_double(uint64_t *st, int lo, int hi)
{
    uint64_t r = splitmix64(st);
    int e = lo + (int)(splitmix64(st) % (uint64_t)(hi - lo));
    double f = 1.0 + ldexp((double)(r >> 12), -52);
    double x = ldexp(f, e);
    return (r & 1) ? -x : x;
}

/* Code magnitude of the largest finite value (the code without its sign bit). */
static uint32_t max_mag(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_E4M3: return 0x7E;
    case GG_DTYPE_E5M2: return 0x7B;
    case GG_DTYPE_E4M3FNUZ:
    case GG_DTYPE_E5M2FNUZ: return 0x7F;
    case GG_DTYPE_E2M1: return 0x7;
    case GG_DTYPE_F16: return 0x7BFF;
    case GG_DTYPE_BF16: return 0x7F7F;
    case GG_DTYPE_F32: return 0x7F7FFFFF;
    default: return 0;
    }
}

static int is_fnuz(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3FNUZ || t == GG_DTYPE_E5M2FNUZ;
}

static uint32_t sign_bit(enum gg_dtype t)
{
    return 1u << (gg_dtype_bits(t) - 1);
}

/* ------------------------------------------------------------------------------------------ */
/* Names and properties                                                                          */
/* ------------------------------------------------------------------------------------------ */

Test(reference_formats, names_round_trip)
{
    static const char *const expect[GG_DTYPE_COUNT] = {"none",     "f64",  "f32",  "f16",
                                                       "bf16",     "e4m3", "e5m2", "e4m3fnuz",
                                                       "e5m2fnuz", "e2m1", "e8m0"};
    for (int t = 0; t < GG_DTYPE_COUNT; t++) {
        cr_assert_str_eq(gg_dtype_name((enum gg_dtype)t), expect[t]);
        cr_assert_eq(gg_dtype_from_name(expect[t]), (enum gg_dtype)t);
    }
    cr_assert_eq(gg_dtype_from_name("fp32"), GG_DTYPE_F32);
    cr_assert_eq(gg_dtype_from_name("fp16"), GG_DTYPE_F16);
    cr_assert_eq(gg_dtype_from_name("fp64"), GG_DTYPE_F64);
    cr_assert_eq(gg_dtype_from_name("e4m3fn"), GG_DTYPE_NONE);
    cr_assert_eq(gg_dtype_from_name("BF16"), GG_DTYPE_NONE);
    cr_assert_eq(gg_dtype_from_name(""), GG_DTYPE_NONE);
    cr_assert_eq(gg_dtype_from_name(NULL), GG_DTYPE_NONE);
    cr_assert_str_eq(gg_dtype_name(GG_DTYPE_COUNT), "none");
}

Test(reference_formats, properties)
{
    static const struct {
        enum gg_dtype t;
        int bits;
        double max, min_sub, u;
        int f8;
    } rows[] = {
        {GG_DTYPE_F64, 64, 0x1.fffffffffffffp+1023, 0x1p-1074, 0x1p-53, 0},
        {GG_DTYPE_F32, 32, 0x1.fffffep+127, 0x1p-149, 0x1p-24, 0},
        {GG_DTYPE_F16, 16, 65504.0, 0x1p-24, 0x1p-11, 0},
        {GG_DTYPE_BF16, 16, 0x1.fep+127, 0x1p-133, 0x1p-8, 0},
        {GG_DTYPE_E4M3, 8, 448.0, 0x1p-9, 0x1p-4, 1},
        {GG_DTYPE_E5M2, 8, 57344.0, 0x1p-16, 0x1p-3, 1},
        {GG_DTYPE_E4M3FNUZ, 8, 240.0, 0x1p-10, 0x1p-4, 1},
        {GG_DTYPE_E5M2FNUZ, 8, 57344.0, 0x1p-17, 0x1p-3, 1},
        {GG_DTYPE_E2M1, 4, 6.0, 0.5, 0x1p-2, 0},
        {GG_DTYPE_E8M0, 8, 0x1p127, 0x1p-127, 0x1p-1, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        enum gg_dtype t = rows[i].t;
        cr_assert_eq(gg_dtype_bits(t), rows[i].bits, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_max(t), rows[i].max, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_min_subnormal(t), rows[i].min_sub, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_unit_roundoff(t), rows[i].u, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_is_float8(t), rows[i].f8, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_bytes(t, 7), (7 * rows[i].bits + 7) / 8, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_dtype_bytes(t, 0), 0);
        if (t == GG_DTYPE_F64)
            continue;
        /* max and min_sub are the values of the codes that should hold them */
        uint32_t min_code = t == GG_DTYPE_E8M0 ? 0x00 : 0x01;
        uint32_t max_code = t == GG_DTYPE_E8M0 ? 0xFE : max_mag(t);
        cr_assert_eq(gg_decode(t, max_code), rows[i].max, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_decode(t, min_code), rows[i].min_sub, "%s", gg_dtype_name(t));
    }
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_E2M1, 3), 2);
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_E2M1, 4), 2);
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_BF16, 3000000000LL), 6000000000LL);
    /* Byte counts past int64 saturate instead of wrapping. */
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_BF16, (int64_t)1 << 62), GG_SIZE_MAX);
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_F64, ((int64_t)1 << 60) + 1), GG_SIZE_MAX);
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_E8M0, INT64_MAX), INT64_MAX);
    cr_assert_eq(gg_dtype_bytes(GG_DTYPE_E2M1, INT64_MAX), ((int64_t)1 << 62));
    cr_assert_eq(gg_size_add(INT64_MAX - 1, 2), GG_SIZE_MAX);
    cr_assert_eq(gg_size_mul((int64_t)1 << 32, (int64_t)1 << 31), GG_SIZE_MAX);
    cr_assert_eq(gg_size_mul(GG_SIZE_MAX, 3), GG_SIZE_MAX);
    cr_assert_eq(gg_size_add(GG_SIZE_MAX, 0), GG_SIZE_MAX);
    cr_assert_eq(gg_size_mul(3, 5), 15);
    cr_assert_eq(gg_dtype_bits(GG_DTYPE_NONE), 0);
    cr_assert_eq(gg_dtype_is_float8(GG_DTYPE_NONE), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Decoding                                                                                      */
/* ------------------------------------------------------------------------------------------ */

Test(reference_formats, decode_small_formats_all_codes_vs_mpfr)
{
    for (int i = 0; i < N_SMALL; i++)
        check_decode_range(&small_specs[i], 1u << spec_bits(&small_specs[i]), 1);
}

Test(reference_formats, decode_bf16_all_codes_vs_mpfr)
{
    check_decode_range(&spec_bf16, 65536, 1);
}

Test(reference_formats, decode_f16_all_codes_vs_mpfr)
{
    check_decode_range(&spec_f16, 65536, 1);
}

Test(reference_formats, decode_f32_sampled_codes_vs_mpfr)
{
    /* a stride coprime to 2^32 visits every exponent and a spread of fractions */
    check_decode_range(&spec_f32, 1ull << 32, 65521);
    static const uint32_t edges[] = {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u,
                                     0x7F7FFFFFu, 0x7F800000u, 0x7F800001u, 0x7FC00000u,
                                     0x80000000u, 0x80000001u, 0xFF800000u, 0xFFFFFFFFu};
    mpfr_t v;
    mpfr_init2(v, 64);
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        cr_expect(decode_matches(&spec_f32, edges[i], v), "f32 0x%08x", edges[i]);
    mpfr_clear(v);
}

Test(reference_formats, decode_tables_match_decode)
{
    for (int i = 0; i < N_SMALL; i++) {
        enum gg_dtype t = small_specs[i].t;
        const double *tab = gg_decode_table(t);
        cr_assert_not_null(tab, "%s", gg_dtype_name(t));
        cr_assert_eq(gg_decode_table(t), tab, "the table is static");
        uint32_t n = 1u << gg_dtype_bits(t);
        for (uint32_t c = 0; c < n; c++) {
            double d = gg_decode(t, c);
            cr_assert(memcmp(&d, &tab[c], sizeof d) == 0 || (isnan(d) && isnan(tab[c])),
                      "%s code 0x%x", gg_dtype_name(t), c);
            /* only the low bits of the code are used */
            double hi = gg_decode(t, c | (0xABCDu << gg_dtype_bits(t)));
            cr_assert(memcmp(&d, &hi, sizeof d) == 0 || (isnan(d) && isnan(hi)));
        }
    }
    static const enum gg_dtype untabled[] = {GG_DTYPE_NONE, GG_DTYPE_F64, GG_DTYPE_F32,
                                             GG_DTYPE_F16, GG_DTYPE_BF16};
    for (size_t i = 0; i < sizeof untabled / sizeof untabled[0]; i++)
        cr_assert_null(gg_decode_table(untabled[i]), "%s", gg_dtype_name(untabled[i]));
    cr_assert_eq(gg_decode(GG_DTYPE_BF16, 0xABCD3F80u), 1.0);
    cr_assert_eq(gg_decode(GG_DTYPE_F16, 0x12343C00u), 1.0);
}

Test(reference_formats, e8m0_edges)
{
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, 0x00), ldexp(1.0, -127));
    cr_assert(gg_decode(GG_DTYPE_E8M0, 0x00) > 0.0, "E8M0 has no zero");
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, 0x01), ldexp(1.0, -126));
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, 0x7F), 1.0);
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, 0xFE), ldexp(1.0, 127));
    cr_assert(isnan(gg_decode(GG_DTYPE_E8M0, 0xFF)));
    /* scale products reach 2^±254 without leaving binary64 */
    cr_assert_eq(gg_decode(GG_DTYPE_E8M0, 0x00) * gg_decode(GG_DTYPE_E8M0, 0x00), ldexp(1.0, -254));

    /* encoding: nearest power of two, linear midpoint up; clamps documented in gg_ref.h */
    static const struct {
        double x;
        uint32_t code;
    } enc[] = {
        {1.0, 0x7F},
        {1.49, 0x7F},
        {1.5, 0x80},
        {3.0, 0x81},
        {3.5, 0x81},
        {0.75, 0x7F},
        {0.7, 0x7E},
        {0.0, 0x00},
        {-0.0, 0x00},
        {-4.0, 0x00},
        {0x1p-127, 0x00},
        {0x1p-130, 0x00},
        {0x1p-1074, 0x00},
        {0x1.8p-128, 0x00},
        {0x1p127, 0xFE},
        {0x1.4p127, 0xFE},
        {0x1.8p127, 0xFF},
        {0x1p128, 0xFF},
        {INFINITY, 0xFF},
        {-INFINITY, 0xFF},
        {NAN, 0xFF},
        {0x1p-126, 0x01},
        {0x1.7ffffffffffffp0, 0x7F},
    };
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++)
        for (int sat = 0; sat < 2; sat++)
            cr_assert_eq(gg_encode(GG_DTYPE_E8M0, enc[i].x, (enum gg_sat)sat), enc[i].code,
                         "e8m0 encode %a: 0x%x", enc[i].x,
                         gg_encode(GG_DTYPE_E8M0, enc[i].x, (enum gg_sat)sat));
}

Test(reference_formats, fnuz_is_half_of_ocp)
{
    static const struct {
        enum gg_dtype ocp, fnuz;
        uint32_t exceptions[16];
        int n_exceptions;
    } pairs[] = {
        {GG_DTYPE_E4M3, GG_DTYPE_E4M3FNUZ, {0x7F, 0x80, 0xFF}, 3},
        {GG_DTYPE_E5M2,
         GG_DTYPE_E5M2FNUZ,
         {0x7C, 0x7D, 0x7E, 0x7F, 0x80, 0xFC, 0xFD, 0xFE, 0xFF},
         9},
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        int n_exc = 0;
        for (uint32_t c = 0; c < 256; c++) {
            double o = gg_decode(pairs[p].ocp, c), f = gg_decode(pairs[p].fnuz, c);
            int is_exc = 0;
            for (int k = 0; k < pairs[p].n_exceptions; k++)
                is_exc |= pairs[p].exceptions[k] == c;
            int finite_pair = isfinite(o) && isfinite(f) && !(o == 0.0 && signbit(o));
            cr_assert_eq(finite_pair, !is_exc, "%s code 0x%02x", gg_dtype_name(pairs[p].fnuz), c);
            if (finite_pair)
                cr_assert_eq(f, o / 2.0, "code 0x%02x: fnuz %a, ocp %a", c, f, o);
            n_exc += is_exc;
        }
        cr_assert_eq(n_exc, pairs[p].n_exceptions);
    }
    /* the exception codes themselves */
    cr_assert(isnan(gg_decode(GG_DTYPE_E4M3, 0x7F)));
    cr_assert_eq(gg_decode(GG_DTYPE_E4M3FNUZ, 0x7F), 240.0);
    cr_assert_eq(gg_decode(GG_DTYPE_E4M3FNUZ, 0xFF), -240.0);
    cr_assert(isnan(gg_decode(GG_DTYPE_E4M3FNUZ, 0x80)));
    cr_assert(gg_decode(GG_DTYPE_E4M3, 0x80) == 0.0 && signbit(gg_decode(GG_DTYPE_E4M3, 0x80)));
    cr_assert_eq(gg_decode(GG_DTYPE_E5M2, 0x7C), INFINITY);
    cr_assert_eq(gg_decode(GG_DTYPE_E5M2, 0xFC), -INFINITY);
    cr_assert(isnan(gg_decode(GG_DTYPE_E5M2, 0x7D)));
    cr_assert_eq(gg_decode(GG_DTYPE_E5M2FNUZ, 0x7C), 32768.0);
    cr_assert_eq(gg_decode(GG_DTYPE_E5M2FNUZ, 0x7F), 57344.0);
    cr_assert_eq(gg_decode(GG_DTYPE_E5M2FNUZ, 0xFF), -57344.0);
    cr_assert(isnan(gg_decode(GG_DTYPE_E5M2FNUZ, 0x80)));
    /* no infinities in fnuz, a single NaN */
    for (uint32_t c = 0; c < 256; c++) {
        cr_assert(!isinf(gg_decode(GG_DTYPE_E4M3FNUZ, c)) &&
                  !isinf(gg_decode(GG_DTYPE_E5M2FNUZ, c)));
        cr_assert_eq(isnan(gg_decode(GG_DTYPE_E5M2FNUZ, c)) != 0, c == 0x80);
    }
}

Test(reference_formats, e2m1_values)
{
    static const double pos[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    for (uint32_t c = 0; c < 8; c++) {
        cr_assert_eq(gg_decode(GG_DTYPE_E2M1, c), pos[c]);
        cr_assert_eq(gg_decode(GG_DTYPE_E2M1, c | 8u), -pos[c]);
    }
    cr_assert(signbit(gg_decode(GG_DTYPE_E2M1, 0x8)));
}

/* ------------------------------------------------------------------------------------------ */
/* Encoding                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* encode(decode(c)) == c for codes [0, n) with stride step, both modes. */
static void check_round_trip(enum gg_dtype t, uint64_t n, uint64_t step)
{
    uint64_t bad = 0, first = 0, finite = 0;
    for (uint64_t c = 0; c < n; c += step) {
        double d = gg_decode(t, (uint32_t)c);
        if (!isfinite(d))
            continue;
        finite++;
        for (int sat = 0; sat < 2; sat++)
            if (gg_encode(t, d, (enum gg_sat)sat) != (uint32_t)c && bad++ == 0)
                first = c;
    }
    cr_assert_gt(finite, 0);
    cr_assert_eq(bad, 0, "%s: %llu round-trip failures, first code 0x%llx -> 0x%x",
                 gg_dtype_name(t), (unsigned long long)bad, (unsigned long long)first,
                 gg_encode(t, gg_decode(t, (uint32_t)first), GG_SAT_FINITE));
}

Test(reference_formats, round_trip_every_finite_code)
{
    for (int i = 0; i < N_SMALL; i++)
        check_round_trip(small_specs[i].t, 1u << gg_dtype_bits(small_specs[i].t), 1);
    check_round_trip(GG_DTYPE_BF16, 65536, 1);
    check_round_trip(GG_DTYPE_F16, 65536, 1);
    check_round_trip(GG_DTYPE_F32, 1ull << 32, 65521);
    check_round_trip(GG_DTYPE_F32, 0x800000, 1); /* every f32 subnormal and zero */
}

/* A NaN whose low payload bits are idx, with the sign bit neg. */
static double nan_with(int neg, unsigned idx)
{
    uint64_t u = 0x7FF8000000000000ull | (uint64_t)idx | ((uint64_t)neg << 63);
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* NaN keeps its sign (as NVIDIA's and PyTorch's conversions do; fnuz has one unsigned NaN), and
   the low two payload bits pick one of the format's NaN codes (codes() uses 1 and 2; 0 and 3,
   and every NaN arithmetic makes, give the canonical one). */
Test(reference_formats, nan_encodes_to_nan_code)
{
    static const struct {
        enum gg_dtype t;
        uint32_t code[3]; /* payload index 0, 1, 2 */
    } rows[] = {
        {GG_DTYPE_E4M3, {0x7F, 0x7F, 0x7F}},
        {GG_DTYPE_E5M2, {0x7F, 0x7D, 0x7E}},
        {GG_DTYPE_E4M3FNUZ, {0x80, 0x80, 0x80}},
        {GG_DTYPE_E5M2FNUZ, {0x80, 0x80, 0x80}},
        {GG_DTYPE_BF16, {0x7FC0, 0x7F81, 0x7FC1}},
        {GG_DTYPE_F16, {0x7E00, 0x7C01, 0x7E01}},
        {GG_DTYPE_F32, {0x7FC00000u, 0x7F800001u, 0x7FC00001u}},
        {GG_DTYPE_E2M1, {0x7, 0x7, 0x7}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        enum gg_dtype t = rows[i].t;
        uint32_t sign = is_fnuz(t) ? 0 : sign_bit(t);
        for (int sat = 0; sat < 2; sat++) {
            cr_assert_eq(gg_encode(t, NAN, (enum gg_sat)sat), rows[i].code[0], "%s",
                         gg_dtype_name(t));
            for (unsigned idx = 0; idx < 4; idx++)
                for (int neg = 0; neg < 2; neg++)
                    cr_assert_eq(gg_encode(t, nan_with(neg, idx), (enum gg_sat)sat),
                                 rows[i].code[idx % 3] | (neg ? sign : 0), "%s idx %u neg %d",
                                 gg_dtype_name(t), idx, neg);
        }
        /* e2m1 cannot represent NaN and documents ±max; every other NaN code decodes to NaN */
        for (int j = 0; j < 3 && t != GG_DTYPE_E2M1; j++)
            cr_assert(isnan(gg_decode(t, rows[i].code[j])), "%s", gg_dtype_name(t));
    }
}

/* Expected codes of x in both modes, for x and -x. For fnuz the negative overflow code is the
   unsigned NaN; elsewhere the sign bit is added. */
static void expect_both(enum gg_dtype t, double x, uint32_t sat_code, uint32_t none_code)
{
    uint32_t s = sign_bit(t);
    int fnuz = is_fnuz(t);
    cr_assert_eq(gg_encode(t, x, GG_SAT_FINITE), sat_code, "%s %a finite: 0x%x", gg_dtype_name(t),
                 x, gg_encode(t, x, GG_SAT_FINITE));
    cr_assert_eq(gg_encode(t, x, GG_SAT_NONE), none_code, "%s %a none: 0x%x", gg_dtype_name(t), x,
                 gg_encode(t, x, GG_SAT_NONE));
    uint32_t neg_none = fnuz && none_code == 0x80 ? 0x80 : none_code | s;
    cr_assert_eq(gg_encode(t, -x, GG_SAT_FINITE), sat_code | s, "%s %a", gg_dtype_name(t), -x);
    cr_assert_eq(gg_encode(t, -x, GG_SAT_NONE), neg_none, "%s %a", gg_dtype_name(t), -x);
}

Test(reference_formats, overflow_thresholds)
{
    const double up = INFINITY, down = 0.0;
    /* e4m3: 464 ties to 448 (mantissa 110 even), anything above overflows to NaN 0x7F */
    expect_both(GG_DTYPE_E4M3, 448.0, 0x7E, 0x7E);
    expect_both(GG_DTYPE_E4M3, 464.0, 0x7E, 0x7E);
    expect_both(GG_DTYPE_E4M3, nextafter(464.0, up), 0x7E, 0x7F);
    expect_both(GG_DTYPE_E4M3, 480.0, 0x7E, 0x7F);
    expect_both(GG_DTYPE_E4M3, 1e300, 0x7E, 0x7F);
    expect_both(GG_DTYPE_E4M3, INFINITY, 0x7E, 0x7F);
    /* e5m2: below 61440 rounds to 57344; 61440 ties up to 2^16, overflow to Inf 0x7C */
    expect_both(GG_DTYPE_E5M2, nextafter(61440.0, down), 0x7B, 0x7B);
    expect_both(GG_DTYPE_E5M2, 61440.0, 0x7B, 0x7C);
    expect_both(GG_DTYPE_E5M2, 65536.0, 0x7B, 0x7C);
    expect_both(GG_DTYPE_E5M2, INFINITY, 0x7B, 0x7C);
    /* e4m3fnuz: 240 = 1.111b·2^7 is odd, so 248 ties up and overflows to NaN 0x80 */
    expect_both(GG_DTYPE_E4M3FNUZ, 240.0, 0x7F, 0x7F);
    expect_both(GG_DTYPE_E4M3FNUZ, nextafter(248.0, down), 0x7F, 0x7F);
    expect_both(GG_DTYPE_E4M3FNUZ, 248.0, 0x7F, 0x80);
    expect_both(GG_DTYPE_E4M3FNUZ, 256.0, 0x7F, 0x80);
    expect_both(GG_DTYPE_E4M3FNUZ, INFINITY, 0x7F, 0x80);
    /* e5m2fnuz: max 57344 = 1.11b·2^15 odd, 61440 ties up and overflows; 0x7C..0x7F finite */
    expect_both(GG_DTYPE_E5M2FNUZ, 32768.0, 0x7C, 0x7C);
    expect_both(GG_DTYPE_E5M2FNUZ, nextafter(61440.0, down), 0x7F, 0x7F);
    expect_both(GG_DTYPE_E5M2FNUZ, 61440.0, 0x7F, 0x80);
    expect_both(GG_DTYPE_E5M2FNUZ, INFINITY, 0x7F, 0x80);
    /* bf16 (numerics check values) */
    expect_both(GG_DTYPE_BF16, (double)3.3895314e38f, 0x7F7F, 0x7F7F);
    expect_both(GG_DTYPE_BF16, (double)3.4e38f, 0x7F7F, 0x7F80);
    expect_both(GG_DTYPE_BF16, 0x1.ffp127, 0x7F7F, 0x7F80); /* tie above max (odd): up */
    expect_both(GG_DTYPE_BF16, nextafter(0x1.ffp127, down), 0x7F7F, 0x7F7F);
    expect_both(GG_DTYPE_BF16, INFINITY, 0x7F7F, 0x7F80);
    /* f16: 65520 ties up past 65504 */
    expect_both(GG_DTYPE_F16, nextafter(65520.0, down), 0x7BFF, 0x7BFF);
    expect_both(GG_DTYPE_F16, 65520.0, 0x7BFF, 0x7C00);
    expect_both(GG_DTYPE_F16, INFINITY, 0x7BFF, 0x7C00);
    /* f32 */
    expect_both(GG_DTYPE_F32, nextafter(0x1.ffffffp127, down), 0x7F7FFFFFu, 0x7F7FFFFFu);
    expect_both(GG_DTYPE_F32, 0x1.ffffffp127, 0x7F7FFFFFu, 0x7F800000u);
    expect_both(GG_DTYPE_F32, DBL_MAX, 0x7F7FFFFFu, 0x7F800000u);
    expect_both(GG_DTYPE_F32, INFINITY, 0x7F7FFFFFu, 0x7F800000u);
    /* e2m1 has no Inf or NaN: it saturates in both modes; 7 ties up past 6 */
    expect_both(GG_DTYPE_E2M1, nextafter(5.0, down), 0x6, 0x6);
    expect_both(GG_DTYPE_E2M1, 5.0, 0x6, 0x6); /* tie between 4 (even) and 6 */
    expect_both(GG_DTYPE_E2M1, 7.0, 0x7, 0x7);
    expect_both(GG_DTYPE_E2M1, 100.0, 0x7, 0x7);
    expect_both(GG_DTYPE_E2M1, INFINITY, 0x7, 0x7);
}

Test(reference_formats, underflow)
{
    static const enum gg_dtype ts[] = {GG_DTYPE_E4M3,     GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                       GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1, GG_DTYPE_BF16,
                                       GG_DTYPE_F16,      GG_DTYPE_F32};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        enum gg_dtype t = ts[i];
        double ms = gg_dtype_min_subnormal(t);
        uint32_t nz = is_fnuz(t) ? 0u : sign_bit(t); /* code of -0, or +0 for fnuz */
        for (int sat = 0; sat < 2; sat++) {
            enum gg_sat m = (enum gg_sat)sat;
            cr_assert_eq(gg_encode(t, ms / 2, m), 0u, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, -ms / 2, m), nz, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, 0x1p-1074, m), 0u, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, -0x1p-1074, m), nz, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, 0.0, m), 0u, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, -0.0, m), nz, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, nextafter(ms / 2, 1.0), m), 1u, "%s", gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, -nextafter(ms / 2, 1.0), m), sign_bit(t) | 1u, "%s",
                         gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, 1.5 * ms, m), 2u, "%s: tie 1.5 min_sub -> 2",
                         gg_dtype_name(t));
            cr_assert_eq(gg_encode(t, ms, m), 1u, "%s", gg_dtype_name(t));
        }
    }
}

/* Every adjacent pair of finite non-negative codes (lo, lo+1): the midpoint goes to the even
   code, one binary64 ulp either side goes to the nearer code; the same for negative values. */
static void check_ties(enum gg_dtype t)
{
    uint32_t top = max_mag(t), s = sign_bit(t);
    uint64_t bad = 0, first = 0;
    for (uint32_t lo = 0; lo < top; lo++) {
        double a = gg_decode(t, lo), b = gg_decode(t, lo + 1);
        double mid = a + (b - a) / 2;
        uint32_t even = (lo & 1u) ? lo + 1 : lo;
        for (int neg = 0; neg < 2; neg++) {
            double sg = neg ? -1.0 : 1.0;
            uint32_t sb = neg ? s : 0u;
            uint32_t c_lo = lo == 0 && is_fnuz(t) ? 0u : lo | sb;
            uint32_t c_even = even == 0 && is_fnuz(t) ? 0u : even | sb;
            for (int sat = 0; sat < 2; sat++) {
                enum gg_sat m = (enum gg_sat)sat;
                int ok = gg_encode(t, sg * mid, m) == c_even &&
                         gg_encode(t, sg * nextafter(mid, 0.0), m) == c_lo &&
                         gg_encode(t, sg * nextafter(mid, INFINITY), m) == ((lo + 1) | sb);
                if (!ok && bad++ == 0)
                    first = lo | sb;
            }
        }
    }
    cr_assert_eq(bad, 0, "%s: %llu tie failures, first at code 0x%llx", gg_dtype_name(t),
                 (unsigned long long)bad, (unsigned long long)first);
}

Test(reference_formats, ties_to_even_between_all_neighbours)
{
    for (int i = 0; i < N_RNE_SMALL; i++)
        check_ties(rne_small[i]);
    check_ties(GG_DTYPE_BF16);
    check_ties(GG_DTYPE_F16);
}

/* Nearest finite code to x (|x| ≤ max) by exhaustive search: only codes of x's sign (and +0
   for fnuz, which has no -0); on equal distance the even code wins. */
static uint32_t brute_nearest(enum gg_dtype t, double x)
{
    const double *tab = gg_decode_table(t);
    uint32_t n = 1u << gg_dtype_bits(t), best = 0;
    double best_d = INFINITY;
    for (uint32_t c = 0; c < n; c++) {
        double v = tab[c];
        if (!isfinite(v))
            continue;
        int same_sign = (signbit(v) != 0) == (signbit(x) != 0);
        if (!same_sign && !(is_fnuz(t) && c == 0))
            continue;
        double d = fabs(x - v);
        if (d < best_d || (d == best_d && (c & 1u) == 0)) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

Test(reference_formats, rne_matches_brute_force_nearest)
{
    uint64_t st = 20240611;
    for (int i = 0; i < N_RNE_SMALL; i++) {
        enum gg_dtype t = rne_small[i];
        const double *tab = gg_decode_table(t);
        double max = gg_dtype_max(t);
        int lo = ilogb(gg_dtype_min_subnormal(t)) - 3, hi = ilogb(max) + 1;
        uint32_t top = max_mag(t);
        uint64_t bad = 0;
        double first = 0.0;
        for (int k = 0; k < 30000; k++) {
            double x;
            switch (k % 3) {
            case 0: x = random_double(&st, lo, hi); break;
            case 1: { /* exact midpoint of a random pair of neighbours */
                uint32_t c = (uint32_t)(splitmix64(&st) % top);
                x = tab[c] + (tab[c + 1] - tab[c]) / 2;
                break;
            }
            default: { /* a random value close to a random code */
                uint32_t c = (uint32_t)(splitmix64(&st) % (top + 1));
                x = tab[c] * (1.0 + random_double(&st, -30, -1));
                break;
            }
            }
            if (splitmix64(&st) & 1)
                x = -x;
            if (fabs(x) > max)
                continue;
            uint32_t want = brute_nearest(t, x);
            if ((gg_encode(t, x, GG_SAT_FINITE) != want || gg_encode(t, x, GG_SAT_NONE) != want) &&
                bad++ == 0)
                first = x;
        }
        cr_assert_eq(bad, 0, "%s: %llu mismatches, first x = %a -> 0x%x, nearest 0x%x",
                     gg_dtype_name(t), (unsigned long long)bad, first,
                     gg_encode(t, first, GG_SAT_FINITE), brute_nearest(t, first));
    }
}

/* MPFR's correctly rounded conversion of x into an IEEE-style format with p significand bits,
   emin/emax in MPFR's 0.1b·2^e convention: round once, overflow to Inf, gradual underflow. */
static double mpfr_round_ieee(double x, int p, long emin, long emax)
{
    mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
    mpfr_t r;
    mpfr_init2(r, p);
    int tern = mpfr_set_d(r, x, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    tern = mpfr_check_range(r, tern, MPFR_RNDN);
    mpfr_subnormalize(r, tern, MPFR_RNDN);
    double d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);
    mpfr_clear(r);
    return d;
}

static void check_vs_mpfr(const struct spec *s, int n)
{
    uint64_t st = 777u + (uint64_t)s->t;
    int p = s->mbits + 1;
    long emin = 2 - s->bias - s->mbits, emax = s->bias + 1;
    double max = gg_dtype_max(s->t);
    int lo = ilogb(gg_dtype_min_subnormal(s->t)) - 3, hi = ilogb(max) + 2;
    uint64_t bad = 0;
    double first = 0.0;
    for (int k = 0; k < n; k++) {
        double x = random_double(&st, lo, hi);
        if (k % 4 == 3) { /* a midpoint of p-bit neighbours, the hardest input for rounding */
            int e = ilogb(x);
            x = copysign(ldexp(floor(ldexp(fabs(x), p - 1 - e)) + 0.5, e - (p - 1)), x);
        }
        double want = mpfr_round_ieee(x, p, emin, emax);
        double got = gg_decode(s->t, gg_encode(s->t, x, GG_SAT_NONE));
        double got_sat = gg_decode(s->t, gg_encode(s->t, x, GG_SAT_FINITE));
        double want_sat = isinf(want) ? copysign(max, want) : want;
        int ok = got == want && (signbit(got) != 0) == (signbit(want) != 0) && got_sat == want_sat;
        if (!ok && bad++ == 0)
            first = x;
    }
    cr_assert_eq(bad, 0, "%s: %llu mismatches vs MPFR, first x = %a", gg_dtype_name(s->t),
                 (unsigned long long)bad, first);
}

Test(reference_formats, rne_matches_mpfr_for_ieee_formats)
{
    check_vs_mpfr(&spec_bf16, 200000);
    check_vs_mpfr(&spec_f16, 200000);
    check_vs_mpfr(&spec_f32, 200000);
}

/* gg_encode_run gives gg_encode_scaled's codes for f32 and bf16 (their runs take fast paths):
   normal, subnormal and overflowing doubles, the boundaries and their neighbours, NaNs. */
Test(reference_formats, encode_run_is_encode)
{
    uint64_t st = 77;
    enum { N = 300000 };
    static double v[N];
    static uint32_t run32[N];
    static uint16_t run16[N];
    const double edges[] = {0.0, -0.0, FLT_MAX, -FLT_MAX, 0x1.ffffffp127, 0x1.fffffefffffffp127,
                            0x1p128, FLT_MIN, 0x1p-149, 0x1p-150, 0x1.0000000000001p-150,
                            0x1.8p-149, 0x1p-126 - 0x1p-150, DBL_MAX, DBL_TRUE_MIN, INFINITY,
                            -INFINITY, NAN, -NAN, 0x1.fefp127, 0x1.ff8p-134};
    for (int i = 0; i < N; i++)
        v[i] = i < (int)(sizeof edges / sizeof edges[0]) ? edges[i]
               : random_double(&st, i % 3 == 0 ? -160 : i % 3 == 1 ? -130 : 100,
                               i % 3 == 0 ? -120 : i % 3 == 1 ? 100 : 140);
    const double scales[2] = {1.0, 0x1p-3};
    for (int k = 0; k < 2; k++) {
        gg_encode_run(GG_DTYPE_F32, v, N, scales[k], GG_SAT_NONE, run32, 0);
        gg_encode_run(GG_DTYPE_BF16, v, N, scales[k], GG_SAT_NONE, run16, 0);
        int64_t bad = 0;
        for (int i = 0; i < N; i++) {
            bad += run32[i] != gg_encode_scaled(GG_DTYPE_F32, v[i], scales[k], GG_SAT_NONE);
            bad += run16[i] != gg_encode_scaled(GG_DTYPE_BF16, v[i], scales[k], GG_SAT_NONE);
        }
        cr_expect_eq(bad, 0, "scale %g: %lld codes differ", scales[k], (long long)bad);
    }
}

Test(reference_formats, rounds_once_not_through_float)
{
    /* 1 + 2^-8 + 2^-30 is above the bf16 midpoint 1 + 2^-8; through fp32 it would first round
       to 1 + 2^-8 exactly and then tie to even (1.0) */
    double x = 1.0 + 0x1p-8 + 0x1p-30;
    cr_assert_eq(gg_encode(GG_DTYPE_BF16, x, GG_SAT_NONE), 0x3F81u);
    cr_assert_eq(gg_encode(GG_DTYPE_BF16, (double)(float)x, GG_SAT_NONE), 0x3F80u);
    /* e4m3: 1.0625 + 2^-40 is just above the midpoint between 1 and 1.125 */
    cr_assert_eq(gg_encode(GG_DTYPE_E4M3, 1.0625 + 0x1p-40, GG_SAT_FINITE), 0x39u);
    cr_assert_eq(gg_encode(GG_DTYPE_E4M3, 1.0625, GG_SAT_FINITE), 0x38u);
    cr_assert_eq(gg_encode(GG_DTYPE_E4M3, 1.1875, GG_SAT_FINITE), 0x3Au);
    /* f16 from a double whose fp32 rounding lands on an f16 midpoint */
    double y = 1.0 + 0x1p-11 + 0x1p-40;
    cr_assert_eq(gg_encode(GG_DTYPE_F16, y, GG_SAT_NONE), 0x3C01u);
}

/* ------------------------------------------------------------------------------------------ */
/* Packed storage                                                                                */
/* ------------------------------------------------------------------------------------------ */

Test(reference_formats, e2m1_nibbles)
{
    unsigned char buf[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    static const uint32_t codes[5] = {0x1, 0xA, 0x7, 0x0, 0xC};
    for (int i = 0; i < 5; i++)
        gg_store_code(GG_DTYPE_E2M1, buf, i, codes[i]);
    cr_assert_eq(buf[0], 0xA1);
    cr_assert_eq(buf[1], 0x07);
    cr_assert_eq(buf[2], 0xFC, "the high nibble of element 5 is untouched");
    cr_assert_eq(buf[3], 0xFF);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(gg_load_code(GG_DTYPE_E2M1, buf, i), codes[i]);
    cr_assert_eq(gg_load(GG_DTYPE_E2M1, buf, 1), -1.0);
    cr_assert_eq(gg_load(GG_DTYPE_E2M1, buf, 2), 6.0);
    gg_store_code(GG_DTYPE_E2M1, buf, 1, 0x13); /* only the low 4 bits are stored */
    cr_assert_eq(buf[0], 0x31);
}

Test(reference_formats, wide_codes_unaligned)
{
    unsigned char buf[16];
    memset(buf, 0xEE, sizeof buf);
    unsigned char *base = buf + 1; /* deliberately misaligned */
    gg_store_code(GG_DTYPE_F32, base, 1, 0x3F800000u);
    cr_assert_eq(gg_load_code(GG_DTYPE_F32, base, 1), 0x3F800000u);
    cr_assert_eq(gg_load(GG_DTYPE_F32, base, 1), 1.0);
    cr_assert_eq(buf[1], 0xEE);
    gg_store_code(GG_DTYPE_BF16, base, 3, 0xC040u);
    cr_assert_eq(gg_load(GG_DTYPE_BF16, base, 3), -3.0);
    gg_store_code(GG_DTYPE_F16, base, 5, 0x3C00u);
    cr_assert_eq(gg_load(GG_DTYPE_F16, base, 5), 1.0);
    gg_store_code(GG_DTYPE_E4M3, base, 0, 0x7E);
    cr_assert_eq(gg_load(GG_DTYPE_E4M3, base, 0), 448.0);
    cr_assert_eq(gg_load(GG_DTYPE_E4M3FNUZ, base, 0), 224.0);
    gg_store_code(GG_DTYPE_E8M0, base, 2, 0x81);
    cr_assert_eq(gg_load(GG_DTYPE_E8M0, base, 2), 4.0);
    cr_assert_eq(buf[0], 0xEE);
    cr_assert_eq(buf[15], 0xEE);
}

/*
 * test_reference_golden.c — golden digests of the generator, the samplers, the encoders and the
 * quantisers. Case files name data by (seed, distribution), so these functions are part of the
 * file format: any change of one output bit changes a digest here. The digests were recorded
 * from the implementation that the corpus was generated with.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "reference/gg_ref.h"
#include "splitmix.h"

/* A running 64-bit digest: each word is mixed with the running state (order-dependent). */
struct digest {
    uint64_t h;
};

static void eat(struct digest *d, uint64_t w)
{
    uint64_t s = d->h ^ (w + 0x9E3779B97F4A7C15ull);
    d->h = splitmix64(&s);
}

static void eat_double(struct digest *d, double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    eat(d, u);
}

static const enum gg_dtype ENCODABLE[] = {GG_DTYPE_F32,      GG_DTYPE_F16,      GG_DTYPE_BF16,
                                          GG_DTYPE_E4M3,     GG_DTYPE_E5M2,     GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1,     GG_DTYPE_E8M0};
#define N_ENCODABLE (sizeof ENCODABLE / sizeof ENCODABLE[0])

static const char *const DISTS[] = {"normal(0,1)",         "normal(3,0.25)",   "uniform(-2,5)",
                                    "ints(8)",             "ints(0)",          "const(-1.5)",
                                    "outliers(1,0.01,100)", "nearsat",         "subnormal(0.5)",
                                    "specials(0.05)"};
#define N_DISTS (sizeof DISTS / sizeof DISTS[0])

/* Doubles that exercise every path of an encoder: random bit patterns (every binade, NaN,
   Inf, subnormals), random values near the formats' ranges, and exact ties. */
static double probe_value(uint64_t *s, int64_t i)
{
    uint64_t r = splitmix64(s);
    switch (i % 4) {
    case 0: {
        double x;
        memcpy(&x, &r, sizeof x);
        return x;
    }
    case 1: /* |x| in [2^-160, 2^140) */
        return ldexp((double)(r >> 11) * 0x1p-53 + 0.5, (int)(r % 300) - 160) * ((r >> 10) & 1 ? -1 : 1);
    case 2: /* multiples of 2^-12 up to 2^20: many exact ties of the narrow formats */
        return (double)(int64_t)(r >> 32) * 0x1p-12 * ((r & 1) ? -1.0 : 1.0);
    default: /* small-mantissa values at every scale: ties of every format */
        return ldexp((double)(r % 64) - 32.0, (int)((r >> 8) % 280) - 150);
    }
}

Test(reference_golden, rng)
{
    struct digest d = {0};
    for (uint64_t i = 0; i < 4096; i++) {
        eat(&d, gg_rng_u64(0x0123456789ABCDEFull + i * 7919u, i % 9, i * 0x100000001ull, (uint32_t)(i % 19)));
        eat_double(&d, gg_rng_uniform(i, 3, i, (uint32_t)(i % 5)));
        uint8_t code = 0xAA;
        int planted = gg_rng_plant_e8m0(42, GG_STREAM_A_SCALE, i, 0.3, &code);
        eat(&d, (uint64_t)planted << 8 | code);
    }
    cr_expect_eq(d.h, 0xfe6f4dbd9e793537ull, "rng digest %#llx", (unsigned long long)d.h);
}

Test(reference_golden, samplers)
{
    struct digest d = {0};
    for (size_t k = 0; k < N_DISTS; k++) {
        struct gg_dist dist;
        cr_assert_eq(gg_dist_parse(DISTS[k], &dist, NULL, 0), GG_OK);
        for (size_t f = 0; f < N_ENCODABLE + 1; f++) {
            dist.fmt = f < N_ENCODABLE ? ENCODABLE[f] : GG_DTYPE_NONE;
            for (uint64_t i = 0; i < 512; i++)
                eat_double(&d, gg_dist_sample(&dist, 1000 + k, GG_STREAM_A + (f & 1), i * 3 + f));
        }
    }
    cr_expect_eq(d.h, 0xdb0be6ebe04f4837ull, "sampler digest %#llx", (unsigned long long)d.h);
}

/* 1 for a NaN other than the canonical positive quiet NaN that every recipe but codes() makes
   (and arithmetic on it keeps): only codes() reaches the encoder with one. */
static int other_nan(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return isnan(x) && u != 0x7FF8000000000000ull;
}

/* The digest was recorded before NaNs kept their sign and payload index: other NaNs are probed
   as the canonical one, which encodes as it always did; encoders_other_nans covers the rest. */
Test(reference_golden, encoders)
{
    struct digest d = {0};
    uint64_t s = 77;
    for (int64_t i = 0; i < 40000; i++) {
        double x = probe_value(&s, i);
        if (other_nan(x))
            x = NAN;
        for (size_t f = 0; f < N_ENCODABLE; f++) {
            eat(&d, gg_encode(ENCODABLE[f], x, GG_SAT_FINITE));
            eat(&d, gg_encode(ENCODABLE[f], x, GG_SAT_NONE));
        }
    }
    cr_expect_eq(d.h, 0x0a3805e5f4bdac53ull, "encoder digest %#llx", (unsigned long long)d.h);
}

/* NaNs of every sign and payload (encoders keep the sign and read the payload index), the
   codes() sampler on every format, and MX blocks quantised with their specials kept
   (gg_mx_quantise_block_sat, sat none). Recorded when codes() was added. */
Test(reference_golden, codes_and_other_nans)
{
    struct digest d = {0};
    uint64_t s = 78;
    for (int64_t i = 0; i < 4096; i++) {
        uint64_t u = splitmix64(&s) | 0x7FF0000000000001ull;
        double x;
        memcpy(&x, &u, sizeof x);
        for (size_t f = 0; f < N_ENCODABLE; f++)
            for (int sat = 0; sat < 2; sat++)
                eat(&d, gg_encode(ENCODABLE[f], x, (enum gg_sat)sat));
    }
    struct gg_dist dist;
    cr_assert_eq(gg_dist_parse("codes(0.25)", &dist, NULL, 0), GG_OK);
    for (size_t f = 0; f < N_ENCODABLE + 1; f++) {
        dist.fmt = f < N_ENCODABLE ? ENCODABLE[f] : GG_DTYPE_NONE;
        for (uint64_t i = 0; i < 2048; i++)
            eat_double(&d, gg_dist_sample(&dist, 2000 + f, GG_STREAM_B, i));
    }
    static const enum gg_dtype elems[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1};
    for (uint64_t it = 0; it < 512; it++) {
        double v[GG_MX_BLOCK];
        dist.fmt = elems[it % 5];
        for (int j = 0; j < GG_MX_BLOCK; j++)
            v[j] = gg_dist_sample(&dist, 77, GG_STREAM_A, it * GG_MX_BLOCK + (uint64_t)j);
        for (int rule = 0; rule < 2; rule++) {
            uint8_t scale;
            uint32_t codes[GG_MX_BLOCK];
            gg_mx_quantise_block_sat(v, GG_MX_BLOCK, dist.fmt, (enum gg_mx_rule)rule,
                                     GG_SAT_NONE, &scale, codes);
            eat(&d, scale);
            for (int j = 0; j < GG_MX_BLOCK; j++)
                eat(&d, codes[j]);
        }
    }
    cr_expect_eq(d.h, 0xb7922da89d400a56ull, "codes digest %#llx", (unsigned long long)d.h);
}

Test(reference_golden, quantisers)
{
    static const enum gg_dtype elems[] = {GG_DTYPE_E4M3, GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ,
                                          GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1};
    struct digest d = {0};
    uint64_t s = 5;
    for (int it = 0; it < 3000; it++) {
        double v[GG_MX_BLOCK];
        int shift = (int)splitmix_below(&s, 320) - 160;
        for (int j = 0; j < GG_MX_BLOCK; j++)
            v[j] = ldexp(probe_value(&s, 1 + 2 * (j % 2)), shift / 4);
        if (it % 97 == 0)
            v[it % GG_MX_BLOCK] = it % 2 ? NAN : INFINITY;
        if (it % 89 == 0)
            memset(v, 0, sizeof v);
        for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++)
            for (int rule = 0; rule < 2; rule++) {
                uint8_t scale;
                uint32_t codes[GG_MX_BLOCK];
                gg_mx_quantise_block(v, GG_MX_BLOCK, elems[e], (enum gg_mx_rule)rule, &scale, codes);
                eat(&d, scale);
                for (int j = 0; j < GG_MX_BLOCK; j++)
                    eat(&d, codes[j]);
                float ts = gg_tensor_scale(v[it % GG_MX_BLOCK], elems[e]);
                uint32_t u;
                memcpy(&u, &ts, sizeof u);
                eat(&d, u);
            }
    }
    for (int64_t i = 0; i < 20000; i++) {
        double x = probe_value(&s, i);
        for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
            float ts = gg_tensor_scale(x, elems[e]);
            uint32_t u;
            memcpy(&u, &ts, sizeof u);
            eat(&d, u);
            eat(&d, gg_mx_scale_code(x, elems[e], (enum gg_mx_rule)(i & 1)));
        }
    }
    cr_expect_eq(d.h, 0xfcca75d2871350a7ull, "quantiser digest %#llx", (unsigned long long)d.h);
}

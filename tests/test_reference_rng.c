/*
 * test_reference_rng.c — the deterministic data generator: Philox4x32-10 against the Random123
 * known answers, the (seed, stream, element, draw) mapping, slice purity and statistics of every
 * distribution, E8M0 planting, the text form of distributions, and golden values that pin the
 * generator (part of the case-file format version).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/gg_ref.h"

/* ------------------------------------------------------------------------------------------ */
/* Philox and the draw mapping                                                                  */
/* ------------------------------------------------------------------------------------------ */

struct philox_kat {
    uint32_t ctr[4], key[2], out[4];
};

/* Random123 kat_vectors, philox4x32_10. */
static const struct philox_kat KATS[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

Test(reference_rng, philox_known_answers)
{
    for (size_t t = 0; t < sizeof KATS / sizeof KATS[0]; t++) {
        uint32_t out[4];
        gg_philox4x32(KATS[t].ctr, KATS[t].key, out);
        for (int w = 0; w < 4; w++)
            cr_expect_eq(out[w], KATS[t].out[w], "vector %zu word %d: got %08x, want %08x", t, w,
                         out[w], KATS[t].out[w]);
    }
}

Test(reference_rng, u64_maps_counter_key_and_draw)
{
    const uint64_t seed = 0x0123456789abcdefull, stream = 3, i = 0xfedcba9876543210ull;
    const uint32_t key[2] = {0x89abcdefu, 0x01234567u};
    for (uint32_t j = 0; j < 8; j++) {
        const uint32_t ctr[4] = {0x76543210u, 0xfedcba98u, 3u, j / 2};
        uint32_t out[4];
        gg_philox4x32(ctr, key, out);
        uint64_t want = (j % 2 == 0) ? ((uint64_t)out[1] << 32 | out[0])
                                     : ((uint64_t)out[3] << 32 | out[2]);
        cr_expect_eq(gg_rng_u64(seed, stream, i, j), want, "draw %u", j);
        double u = gg_rng_uniform(seed, stream, i, j);
        cr_expect_eq(u, (double)(want >> 11) * 0x1p-53, "uniform of draw %u", j);
        cr_expect(u >= 0.0 && u < 1.0);
    }
}

/* Counts positions where two sequences of 64 draws agree. */
static int agreements(uint64_t s0, uint64_t t0, uint64_t i0, uint64_t s1, uint64_t t1, uint64_t i1)
{
    int same = 0;
    for (uint64_t k = 0; k < 64; k++)
        same += gg_rng_u64(s0, t0, i0 + k, 0) == gg_rng_u64(s1, t1, i1 + k, 0);
    return same;
}

Test(reference_rng, seeds_streams_and_elements_differ)
{
    cr_expect_eq(agreements(1, 1, 0, 1, 1, 0), 64);
    cr_expect_eq(agreements(1, 1, 0, 2, 1, 0), 0, "seed");
    cr_expect_eq(agreements(1, 1, 0, 1ull << 32 | 1, 1, 0), 0, "high seed word");
    cr_expect_eq(agreements(1, 1, 0, 1, 2, 0), 0, "stream");
    cr_expect_eq(agreements(1, 1, 0, 1, 1, 1ull << 32), 0, "high element word");
    for (uint32_t j = 1; j < 6; j++)
        cr_expect_neq(gg_rng_u64(1, 1, 0, 0), gg_rng_u64(1, 1, 0, j), "draw %u", j);

    const struct gg_dist d = {.kind = GG_DIST_NORMAL, .p = {0, 1}};
    double a[64], b[64], c[64];
    gg_dist_fill(&d, 7, GG_STREAM_A, 0, 64, a);
    gg_dist_fill(&d, 8, GG_STREAM_A, 0, 64, b);
    gg_dist_fill(&d, 7, GG_STREAM_B, 0, 64, c);
    cr_expect_neq(memcmp(a, b, sizeof a), 0);
    cr_expect_neq(memcmp(a, c, sizeof a), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Distributions                                                                                */
/* ------------------------------------------------------------------------------------------ */

static struct gg_dist parse_ok(const char *text)
{
    struct gg_dist d;
    char err[256] = "";
    enum gg_status st = gg_dist_parse(text, &d, err, sizeof err);
    cr_assert_eq(st, GG_OK, "parse '%s': %s", text, err);
    return d;
}

static const char *const EVERY_KIND[] = {
    "normal(0.5,2)", "uniform(-3,5)",  "ints(7)",          "const(1.25)",
    "outliers(1,0.05,100)", "nearsat", "subnormal(0.3)", "specials(0.1)", "codes(0.2)",
};
#define N_KINDS (sizeof EVERY_KIND / sizeof EVERY_KIND[0])

Test(reference_rng, every_kind_is_covered)
{
    int seen[GG_DIST_COUNT] = {0};
    for (size_t k = 0; k < N_KINDS; k++)
        seen[parse_ok(EVERY_KIND[k]).kind]++;
    for (int k = 0; k < GG_DIST_COUNT; k++)
        cr_expect_eq(seen[k], 1, "kind %d", k);
}

/* Filling [0, n) at once equals filling any slice alone, and each element alone. */
Test(reference_rng, slices_are_pure)
{
    enum { N = 400 };
    static const int64_t slices[][2] = {{0, 1}, {0, N}, {1, 7}, {123, 200}, {399, 1}, {57, 0}};
    double all[N], part[N];
    for (size_t k = 0; k < N_KINDS; k++) {
        struct gg_dist d = parse_ok(EVERY_KIND[k]);
        d.fmt = GG_DTYPE_E4M3;
        gg_dist_fill(&d, 42, GG_STREAM_B, 0, N, all);
        for (size_t s = 0; s < sizeof slices / sizeof slices[0]; s++) {
            int64_t i0 = slices[s][0], len = slices[s][1];
            gg_dist_fill(&d, 42, GG_STREAM_B, (uint64_t)i0, len, part);
            cr_expect_eq(memcmp(part, all + i0, (size_t)len * sizeof(double)), 0,
                         "%s slice [%lld, +%lld)", EVERY_KIND[k], (long long)i0, (long long)len);
        }
        /* element by element too, from 0 and across the carry of the counter's low word (the
           batched fill of uniform and normal runs 64 elements at a time) */
        for (int from = 0; from < 2; from++) {
            uint64_t i0 = from ? ((uint64_t)1 << 32) - 100 : 0;
            gg_dist_fill(&d, 42, GG_STREAM_B, i0, N, all);
            for (int64_t i = 0; i < N; i++) {
                double v = gg_dist_sample(&d, 42, GG_STREAM_B, i0 + (uint64_t)i);
                cr_expect_eq(memcmp(&v, &all[i], sizeof v), 0, "%s element %llu", EVERY_KIND[k],
                             (unsigned long long)(i0 + (uint64_t)i));
            }
        }
    }
}

struct moments {
    double mean, var, min, max;
};

static struct moments moments_of(const struct gg_dist *d, uint64_t seed, int64_t n)
{
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    gg_dist_fill(d, seed, GG_STREAM_A, 0, n, v);
    struct moments m = {0, 0, v[0], v[0]};
    for (int64_t i = 0; i < n; i++) {
        m.mean += v[i];
        m.min = fmin(m.min, v[i]);
        m.max = fmax(m.max, v[i]);
    }
    m.mean /= (double)n;
    for (int64_t i = 0; i < n; i++)
        m.var += (v[i] - m.mean) * (v[i] - m.mean);
    m.var /= (double)(n - 1);
    free(v);
    return m;
}

/* Tolerances are about 5 standard errors for n = 1e5. */
Test(reference_rng, normal_moments)
{
    struct gg_dist d = parse_ok("normal(0,1)");
    struct moments m = moments_of(&d, 1, 100000);
    cr_expect(fabs(m.mean) < 0.016, "mean %g", m.mean);
    cr_expect(fabs(m.var - 1.0) < 0.022, "var %g", m.var);
    cr_expect(m.min >= -6.0 && m.max < 6.0, "range [%g, %g]", m.min, m.max);
    cr_expect(m.min < -3.5 && m.max > 3.5, "tails [%g, %g]", m.min, m.max);

    d = parse_ok("normal(3,2)");
    m = moments_of(&d, 2, 100000);
    cr_expect(fabs(m.mean - 3.0) < 0.032, "mean %g", m.mean);
    cr_expect(fabs(m.var - 4.0) < 0.09, "var %g", m.var);
    cr_expect(m.min >= 3.0 - 12.0 && m.max < 3.0 + 12.0);
}

/* The sample is exactly mean + std·z with z the Irwin-Hall sum and two separate roundings (a
   fused multiply-add would break GPU reproducibility). */
Test(reference_rng, normal_matches_its_definition)
{
    const double mean = 1.0 / 3.0, std = 1.0 / 7.0;
    const struct gg_dist d = {.kind = GG_DIST_NORMAL, .p = {mean, std}};
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t s = 0;
        for (uint32_t j = 0; j < 6; j++) {
            uint64_t x = gg_rng_u64(9, 1, i, j);
            s += (x & 0xFFFFFFFFu) + (x >> 32);
        }
        double z = (double)s * 0x1p-32 - 6.0;
        volatile double t = std * z;
        double want = mean + t;
        double got = gg_dist_sample(&d, 9, 1, i);
        cr_assert_eq(memcmp(&got, &want, sizeof got), 0, "element %llu: %a vs %a",
                     (unsigned long long)i, got, want);
    }
}

Test(reference_rng, uniform_moments)
{
    struct gg_dist d = parse_ok("uniform(-1,3)");
    struct moments m = moments_of(&d, 3, 100000);
    cr_expect(fabs(m.mean - 1.0) < 0.02, "mean %g", m.mean);
    cr_expect(fabs(m.var - 16.0 / 12.0) < 0.02, "var %g", m.var);
    cr_expect(m.min >= -1.0 && m.max <= 3.0, "range [%g, %g]", m.min, m.max);
}

Test(reference_rng, ints_cover_their_range)
{
    struct gg_dist d = parse_ok("ints(3)");
    int hits[7] = {0};
    for (uint64_t i = 0; i < 7000; i++) {
        double v = gg_dist_sample(&d, 5, 1, i);
        cr_assert(v >= -3 && v <= 3 && v == (double)(int)v, "value %g", v);
        hits[(int)v + 3]++;
    }
    for (int k = 0; k < 7; k++)
        cr_expect(hits[k] > 850 && hits[k] < 1150, "value %d hit %d times", k - 3, hits[k]);

    d = parse_ok("ints(0)");
    for (uint64_t i = 0; i < 100; i++)
        cr_expect_eq(gg_dist_sample(&d, 5, 1, i), 0.0);

    d = parse_ok("ints(1073741824)");
    double lo = 0, hi = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        double v = gg_dist_sample(&d, 5, 1, i);
        cr_assert(fabs(v) <= 0x1p30 && v == trunc(v), "value %g", v);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    cr_expect(lo < -0x1p29 && hi > 0x1p29, "range [%g, %g]", lo, hi);
}

Test(reference_rng, const_is_constant)
{
    struct gg_dist d = parse_ok("const(-2.5)");
    for (uint64_t i = 0; i < 100; i++)
        cr_expect_eq(gg_dist_sample(&d, 5, 1, i), -2.5);
}

Test(reference_rng, outliers_frequency_and_magnitude)
{
    struct gg_dist d = parse_ok("outliers(2,0.05,100)");
    int big = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        double v = gg_dist_sample(&d, 6, 1, i);
        if (fabs(v) == 200.0)
            big++;
        else
            cr_assert(fabs(v) <= 12.0, "value %g", v);
    }
    cr_expect(big > 800 && big < 1200, "outliers %d of 20000", big);

    /* frac = 0 is exactly normal(0, std). */
    struct gg_dist o = parse_ok("outliers(2,0,100)"), n = parse_ok("normal(0,2)");
    for (uint64_t i = 0; i < 1000; i++)
        cr_expect_eq(gg_dist_sample(&o, 6, 1, i), gg_dist_sample(&n, 6, 1, i));
}

struct format_case {
    enum gg_dtype fmt;
    double max, tie, pytorch, below; /* max, RNE tie to overflow, M + ulp, M - ulp/2 */
};

static const struct format_case NEARSAT_CASES[] = {
    {GG_DTYPE_E4M3, 448, 464, 480, 432},
    {GG_DTYPE_E4M3FNUZ, 240, 248, 256, 232},
    {GG_DTYPE_E5M2, 57344, 61440, 65536, 53248},
    {GG_DTYPE_E5M2FNUZ, 57344, 61440, 65536, 53248},
    {GG_DTYPE_BF16, 448, 464, 480, 432}, /* wide formats use e4m3's table */
    {GG_DTYPE_NONE, 448, 464, 480, 432},
};

Test(reference_rng, nearsat_values_stress_the_format_max)
{
    for (size_t c = 0; c < sizeof NEARSAT_CASES / sizeof NEARSAT_CASES[0]; c++) {
        const struct format_case *fc = &NEARSAT_CASES[c];
        const double table[6] = {fc->max, fc->tie, fc->tie * (1 + 0x1p-20),
                                 fc->tie * (1 - 0x1p-20), fc->pytorch, fc->below};
        int hits[6][2] = {{0}};
        struct gg_dist d = parse_ok("nearsat");
        d.fmt = fc->fmt;
        for (uint64_t i = 0; i < 2000; i++) {
            double v = gg_dist_sample(&d, 11, 2, i);
            int found = 0;
            for (int t = 0; t < 6; t++)
                if (fabs(v) == table[t]) {
                    hits[t][v < 0]++;
                    found = 1;
                }
            cr_assert(found, "%s: unexpected value %a", gg_dtype_name(fc->fmt), v);
            cr_assert(fabs(v) >= fc->max - (fc->pytorch - fc->max) && fabs(v) <= fc->pytorch);
            if (fc->fmt != GG_DTYPE_E5M2 && fc->fmt != GG_DTYPE_E5M2FNUZ)
                cr_assert(fabs(v) <= 1.1 * fc->max && fabs(v) >= fc->max / 1.1, "value %g", v);
        }
        for (int t = 0; t < 6; t++)
            for (int s = 0; s < 2; s++)
                cr_expect(hits[t][s] > 0, "%s: value %a sign %d never drawn",
                          gg_dtype_name(fc->fmt), table[t], s);
    }
}

/* The largest value rounding to max really rounds to it, and the next one overflows. */
Test(reference_rng, nearsat_thresholds_match_the_encoder)
{
    cr_expect_eq(gg_encode(GG_DTYPE_E4M3, 464.0, GG_SAT_NONE), 0x7Eu);
    cr_expect_eq(gg_encode(GG_DTYPE_E4M3, 464.0 * (1 + 0x1p-20), GG_SAT_NONE), 0x7Fu);
    cr_expect_eq(gg_encode(GG_DTYPE_E4M3, 464.0 * (1 - 0x1p-20), GG_SAT_NONE), 0x7Eu);
    cr_expect_eq(gg_encode(GG_DTYPE_E4M3, 432.0, GG_SAT_NONE), 0x7Eu);
}

struct subnormal_case {
    enum gg_dtype fmt;
    double min_sub, min_normal;
};

static const struct subnormal_case SUBNORMAL_CASES[] = {
    {GG_DTYPE_E4M3, 0x1p-9, 0x1p-6},       {GG_DTYPE_E5M2, 0x1p-16, 0x1p-14},
    {GG_DTYPE_E4M3FNUZ, 0x1p-10, 0x1p-7},  {GG_DTYPE_E5M2FNUZ, 0x1p-17, 0x1p-15},
    {GG_DTYPE_BF16, 0x1p-133, 0x1p-126},   {GG_DTYPE_F16, 0x1p-24, 0x1p-14},
    {GG_DTYPE_F32, 0x1p-149, 0x1p-126},    {GG_DTYPE_NONE, 0x1p-9, 0x1p-6},
};

Test(reference_rng, subnormal_values_are_subnormal)
{
    for (size_t c = 0; c < sizeof SUBNORMAL_CASES / sizeof SUBNORMAL_CASES[0]; c++) {
        const struct subnormal_case *sc = &SUBNORMAL_CASES[c];
        struct gg_dist d = parse_ok("subnormal(1)");
        d.fmt = sc->fmt;
        int neg = 0;
        for (uint64_t i = 0; i < 2000; i++) {
            double v = gg_dist_sample(&d, 12, 1, i), a = fabs(v);
            cr_assert(a > 0 && a < sc->min_normal, "%s: %a", gg_dtype_name(sc->fmt), v);
            double k = a / sc->min_sub;
            cr_assert_eq(k, trunc(k), "%s: %a is not a multiple of %a", gg_dtype_name(sc->fmt), v,
                         sc->min_sub);
            neg += v < 0;
        }
        cr_expect(neg > 800 && neg < 1200, "%s: %d negative", gg_dtype_name(sc->fmt), neg);
    }

    /* e4m3 has 7 subnormal magnitudes: all are drawn. */
    struct gg_dist d = parse_ok("subnormal(1)");
    d.fmt = GG_DTYPE_E4M3;
    int hit[8] = {0};
    for (uint64_t i = 0; i < 700; i++)
        hit[(int)(fabs(gg_dist_sample(&d, 12, 1, i)) * 512.0)]++;
    for (int k = 1; k < 8; k++)
        cr_expect(hit[k] > 0, "subnormal %d * 2^-9 never drawn", k);

    /* In bf16 no normal(0,1) sample lies below 2^-126, so the subnormals can be counted. */
    d = parse_ok("subnormal(0.3)");
    d.fmt = GG_DTYPE_BF16;
    int sub = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        double a = fabs(gg_dist_sample(&d, 13, 1, i));
        sub += a > 0 && a < 0x1p-126;
    }
    cr_expect(sub > 5700 && sub < 6300, "subnormals %d of 20000", sub);
}

Test(reference_rng, specials_frequency)
{
    struct gg_dist d = parse_ok("specials(0.1)");
    d.fmt = GG_DTYPE_E4M3;
    int nan = 0, pmax = 0, nmax = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        double v = gg_dist_sample(&d, 14, 1, i);
        if (isnan(v))
            nan++;
        else if (v == 448.0)
            pmax++;
        else if (v == -448.0)
            nmax++;
        else
            cr_assert(fabs(v) <= 6.0, "value %g", v);
    }
    int all = nan + pmax + nmax;
    cr_expect(all > 9500 && all < 10500, "specials %d of 100000", all);
    cr_expect(nan > 3000 && pmax > 3000 && nmax > 3000, "nan %d +max %d -max %d", nan, pmax, nmax);

    d.fmt = GG_DTYPE_E5M2;
    d.p[0] = 1.0;
    for (uint64_t i = 0; i < 100; i++) {
        double v = gg_dist_sample(&d, 14, 1, i);
        cr_expect(isnan(v) || fabs(v) == 57344.0, "value %g", v);
    }
    d.p[0] = 0.0;
    struct gg_dist n = parse_ok("normal(0,1)");
    for (uint64_t i = 0; i < 1000; i++)
        cr_expect_eq(gg_dist_sample(&d, 14, 1, i), gg_dist_sample(&n, 14, 1, i));
}

/* codes(frac): a fraction frac of special values, the five kinds about equally often, with
   both signs (but -0), NaNs with payload indices 0, 1 and 2; frac 0 is bitwise normal(0,1). */
Test(reference_rng, codes_frequency_and_kinds)
{
    static const struct {
        enum gg_dtype fmt;
        double max, min_sub;
    } formats[] = {{GG_DTYPE_E4M3, 448.0, 0x1p-9},     {GG_DTYPE_E5M2, 57344.0, 0x1p-16},
                   {GG_DTYPE_E4M3FNUZ, 240.0, 0x1p-10}, {GG_DTYPE_E5M2FNUZ, 57344.0, 0x1p-17},
                   {GG_DTYPE_E2M1, 6.0, 0.5},           {GG_DTYPE_BF16, 0x1.fep127, 0x1p-133},
                   {GG_DTYPE_NONE, 448.0, 0x1p-9}};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        struct gg_dist d = parse_ok("codes(0.1)");
        d.fmt = formats[f].fmt;
        /* Inf, NaN, -0, max, min_sub by sign (-0 only negative), NaN by payload index */
        int kind[5][2] = {{0}}, payload[3] = {0}, other = 0;
        for (uint64_t i = 0; i < 100000; i++) {
            double v = gg_dist_sample(&d, 15, 2, i), a = fabs(v);
            int neg = signbit(v) != 0;
            uint64_t u;
            memcpy(&u, &v, sizeof u);
            if (isinf(v))
                kind[0][neg]++;
            else if (isnan(v))
                kind[1][neg]++, payload[(u & 3) < 3 ? u & 3 : 0]++;
            else if (v == 0 && neg)
                kind[2][neg]++;
            else if (a == formats[f].max)
                kind[3][neg]++;
            else if (a == formats[f].min_sub)
                kind[4][neg]++;
            else
                other++;
            cr_assert(isnan(v) || isinf(v) || a <= 6.0 || a == formats[f].max, "%s: value %a",
                      gg_dtype_name(d.fmt), v);
            cr_assert(!isnan(v) || (u & ~(1ull << 63)) == 0x7FF8000000000000ull + (u & 3),
                      "NaN bits %#llx", (unsigned long long)u);
        }
        int all = 0;
        for (int k = 0; k < 5; k++) {
            all += kind[k][0] + kind[k][1];
            cr_expect(kind[k][0] + kind[k][1] > 1600, "%s: kind %d drawn %d times",
                      gg_dtype_name(d.fmt), k, kind[k][0] + kind[k][1]);
            if (k != 2)
                cr_expect(kind[k][0] > 700 && kind[k][1] > 700, "%s: kind %d signs %d/%d",
                          gg_dtype_name(d.fmt), k, kind[k][0], kind[k][1]);
        }
        cr_expect(all > 9500 && all < 10500, "%s: codes %d of 100000", gg_dtype_name(d.fmt), all);
        for (int j = 0; j < 3; j++)
            cr_expect(payload[j] > 500, "NaN payload index %d drawn %d times", j, payload[j]);
        cr_expect_eq(other + all, 100000);
    }
    struct gg_dist d = parse_ok("codes(0)"), n = parse_ok("normal(0,1)");
    d.fmt = GG_DTYPE_E5M2;
    for (uint64_t i = 0; i < 1000; i++)
        cr_expect_eq(gg_dist_sample(&d, 14, 1, i), gg_dist_sample(&n, 14, 1, i));
}

Test(reference_rng, plant_e8m0)
{
    uint8_t code = 0x55;
    for (uint64_t i = 0; i < 1000; i++)
        cr_expect_eq(gg_rng_plant_e8m0(3, GG_STREAM_A_SCALE, i, 0.0, &code), 0);
    cr_expect_eq(code, 0x55, "code untouched when not planted");

    int hits[4] = {0}, planted = 0;
    for (uint64_t i = 0; i < 4000; i++) {
        cr_assert_eq(gg_rng_plant_e8m0(3, GG_STREAM_A_SCALE, i, 1.0, &code), 1);
        cr_assert(code == 0x00 || code == 0x01 || code == 0xFE || code == 0xFF, "code %02x",
                  code);
        hits[code == 0x00 ? 0 : code == 0x01 ? 1 : code == 0xFE ? 2 : 3]++;
        planted += gg_rng_plant_e8m0(3, GG_STREAM_B_SCALE, i, 0.25, &code);
    }
    for (int k = 0; k < 4; k++)
        cr_expect(hits[k] > 850 && hits[k] < 1150, "edge code %d: %d", k, hits[k]);
    cr_expect(planted > 880 && planted < 1120, "planted %d of 4000", planted);
}

/* ------------------------------------------------------------------------------------------ */
/* Text form                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static const struct {
    const char *text, *canonical;
} CANONICAL[] = {
    {"normal(0,1)", "normal(0,1)"},
    {" normal ( 0x1p-2 , 0x1.8p0 ) ", "normal(0.25,1.5)"},
    {"uniform(-1,1)", "uniform(-1,1)"},
    {"ints(8)", "ints(8)"},
    {"const(1)", "const(1)"},
    {"const(-0)", "const(-0)"},
    {"outliers(1,0.001,100)", "outliers(1,0.001,100)"},
    {"nearsat", "nearsat"},
    {"nearsat()", "nearsat"},
    {"subnormal(0.5)", "subnormal(0.5)"},
    {"specials(1e-3)", "specials(0.001)"},
    {"codes( 1e-2 )", "codes(0.01)"},
    {"uniform(1e300,1e300)", "uniform(1e+300,1e+300)"},
};

Test(reference_rng, format_is_canonical)
{
    for (size_t c = 0; c < sizeof CANONICAL / sizeof CANONICAL[0]; c++) {
        struct gg_dist d = parse_ok(CANONICAL[c].text);
        char buf[128];
        int n = gg_dist_format(&d, buf, sizeof buf);
        cr_expect_str_eq(buf, CANONICAL[c].canonical, "text '%s'", CANONICAL[c].text);
        cr_expect_eq(n, (int)strlen(buf));
    }
}

/* parse(format(d)) == d, bitwise in the parameters, for awkward values of every kind. */
Test(reference_rng, parse_format_round_trip)
{
    const struct gg_dist dists[] = {
        {GG_DIST_NORMAL, {0.1, 1.0 / 3.0, 0}, GG_DTYPE_NONE},
        {GG_DIST_NORMAL, {-1e-300, 5e-324, 0}, GG_DTYPE_NONE},
        {GG_DIST_UNIFORM, {-0x1.8p-3, 1e300, 0}, GG_DTYPE_NONE},
        {GG_DIST_INTS, {0, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_INTS, {0x1p30, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_CONST, {-0.0, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_CONST, {0x1.fffffffffffffp+1000, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_OUTLIERS, {2.5, 0.001, 100.0 / 3.0}, GG_DTYPE_NONE},
        {GG_DIST_NEARSAT, {0, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_SUBNORMAL, {0.7, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_SPECIALS, {1.0 / 3.0, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_SPECIALS, {1.0, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_CODES, {0.001, 0, 0}, GG_DTYPE_NONE},
        {GG_DIST_CODES, {1.0 / 7.0, 0, 0}, GG_DTYPE_NONE},
    };
    for (size_t c = 0; c < sizeof dists / sizeof dists[0]; c++) {
        char buf[128];
        int n = gg_dist_format(&dists[c], buf, sizeof buf);
        cr_assert(n > 0 && n < (int)sizeof buf);
        struct gg_dist back = parse_ok(buf);
        cr_expect_eq(back.kind, dists[c].kind, "'%s'", buf);
        cr_expect_eq(memcmp(back.p, dists[c].p, sizeof back.p), 0, "'%s': %a %a %a", buf,
                     back.p[0], back.p[1], back.p[2]);
        cr_expect_eq(back.fmt, GG_DTYPE_NONE);
    }
}

Test(reference_rng, format_truncates_like_snprintf)
{
    struct gg_dist d = parse_ok("outliers(1,0.001,100)");
    char small[8];
    int n = gg_dist_format(&d, small, sizeof small);
    cr_expect_eq(n, (int)strlen("outliers(1,0.001,100)"));
    cr_expect_str_eq(small, "outlier");
}

static const struct {
    const char *text, *message; /* a fragment the message must contain */
} MALFORMED[] = {
    {"", "empty"},
    {"   ", "empty"},
    {"gauss(0,1)", "unknown distribution 'gauss'"},
    {"normal2(0,1)", "unknown distribution"},
    {"normal(0)", "normal expects 2 arguments (mean,std), got 1"},
    {"normal", "normal expects 2 arguments"},
    {"const()", "const expects 1 argument (v), got 0"},
    {"outliers(1,0.1)", "outliers expects 3 arguments"},
    {"nearsat(1)", "nearsat expects 0 arguments"},
    {"normal(0,-1)", "std must be >= 0"},
    {"outliers(-1,0.1,10)", "std must be >= 0"},
    {"specials(1.5)", "frac must be in [0,1]"},
    {"codes(-0.5)", "codes: frac must be in [0,1]"},
    {"codes", "codes expects 1 argument (frac), got 0"},
    {"subnormal(-0.1)", "frac must be in [0,1]"},
    {"outliers(1,2,10)", "frac must be in [0,1]"},
    {"outliers(1,0.1,-5)", "mag must be >= 0"},
    {"normal(0,1)x", "after ')'"},
    {"normal(0,1))", "after ')'"},
    {"normal(0,1", "missing ')'"},
    {"normal(0,abc)", "argument 2 is not a number"},
    {"normal(0,,1)", "argument 2 is not a number"},
    {"normal(0 1)", "unexpected '1'"},
    {"normal 0,1", "expected '('"},
    {"(0,1)", "expected a name"},
    {"normal(0,inf)", "not finite"},
    {"normal(nan,1)", "not finite"},
    {"normal(0,1e999)", "not finite"},
    {"uniform(1,0)", "lo must be <= hi"},
    {"uniform(-1e308,1e308)", "overflows"},
    {"ints(2.5)", "ints: r must be an integer"},
    {"ints(-1)", "ints: r must be an integer"},
    {"ints(2000000000)", "ints: r must be an integer"},
    {"normal(1e308,1e308)", "overflows"},
};

Test(reference_rng, malformed_text_is_rejected)
{
    for (size_t c = 0; c < sizeof MALFORMED / sizeof MALFORMED[0]; c++) {
        struct gg_dist d = {.kind = GG_DIST_CONST, .p = {7, 7, 7}, .fmt = GG_DTYPE_E5M2};
        char err[256] = "";
        enum gg_status st = gg_dist_parse(MALFORMED[c].text, &d, err, sizeof err);
        cr_expect_eq(st, GG_E_PARSE, "'%s' accepted", MALFORMED[c].text);
        cr_expect(strstr(err, MALFORMED[c].message) != NULL, "'%s': message '%s' lacks '%s'",
                  MALFORMED[c].text, err, MALFORMED[c].message);
        cr_expect(d.kind == GG_DIST_CONST && d.p[0] == 7 && d.fmt == GG_DTYPE_E5M2,
                  "'%s': output written on failure", MALFORMED[c].text);
    }
    struct gg_dist d;
    cr_expect_eq(gg_dist_parse(NULL, &d, NULL, 0), GG_E_PARSE);
    cr_expect_eq(gg_dist_parse("gauss", &d, NULL, 0), GG_E_PARSE);
}

/* ------------------------------------------------------------------------------------------ */
/* Golden values: a change here changes every case file (bump the format version).             */
/* ------------------------------------------------------------------------------------------ */

/* Also reproduced by an independent implementation of Philox4x32-10 and Irwin-Hall. */
Test(reference_rng, golden_normal_seed1_stream1)
{
    static const double golden[4] = {-0x1.5dc71d3p+0, 0x1.a366dbap-1, 0x1.766cbb4cp-1,
                                     -0x1.749ed461p+0};
    const struct gg_dist d = {.kind = GG_DIST_NORMAL, .p = {0, 1}};
    double v[4];
    gg_dist_fill(&d, 1, 1, 0, 4, v);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(v[i], golden[i], "element %d: got %a, want %a", i, v[i], golden[i]);
}

/*
 * gg_dist.c — value distributions of case data: the text form "name(args)" (parse, canonical
 * format) and the sampler that turns draws of gg_rng_u64 into element values. Sampling uses only
 * integer operations and single correctly rounded binary64 + - * (no libm, no fused
 * multiply-add), so a GPU that follows the same steps produces the same bits. Like gg_rng.c,
 * the sampler is part of the case-file format version.
 */
/* No contraction of a*b + c into a fused multiply-add (its single rounding would differ from
   the GPU's two). GCC ignores the standard pragma (and warns), so it gets its own; the tests
   check the result bitwise against separately rounded operations. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#else
#pragma STDC FP_CONTRACT OFF
#endif

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/gg_ref.h"

/*
 * Draws of element i (j in gg_rng_u64):
 *   0..5  the Irwin-Hall normal (12 32-bit halves); uniform and ints use draw 0
 *   0, 1  nearsat: table index, sign
 *   6     mixtures (outliers, subnormal, specials): the selector, taken when u < frac
 *   7     mixtures: the sign (outliers), the special's index (specials), the magnitude (subnormal)
 *   8     subnormal: the sign
 * The normal part of a mixture uses draws 0..5, so a mixture with frac = 0 is bitwise normal.
 */
enum {
    DRAW_NORMAL_COUNT = 6,
    DRAW_SELECT = 6,
    DRAW_CHOICE = 7,
    DRAW_SIGN = 8
};

/* Largest integer argument of ints(r). */
#define INTS_MAX_R 1073741824.0 /* 2^30 */

/* ------------------------------------------------------------------------------------------ */
/* Sampling                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* floor(a * b / 2^64): the high word of the 128-bit product, from 32-bit partial products so
   that any platform (and __umul64hi on a GPU) gives the same result. */
static uint64_t mulhi64(uint64_t a, uint64_t b)
{
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
    uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

/* Uniform integer in [0, n): floor(u64 · n / 2^64). The bias is below n / 2^64. */
static uint64_t draw_below(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j, uint64_t n)
{
    return mulhi64(gg_rng_u64(seed, stream, i, j), n);
}

/* +1.0 or -1.0 from the top bit of a draw. */
static double draw_sign(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    return (gg_rng_u64(seed, stream, i, j) >> 63) ? -1.0 : 1.0;
}

/* Irwin-Hall: S = sum of twelve uniform 32-bit integers (exact, S < 12 · 2^32 < 2^36), and
   z = S · 2^-32 - 6 is exact too (a multiple of 2^-32 below 2^3 in magnitude). z has mean
   -6·2^-32, variance 1 - 2^-64, and lies in [-6, 6). The value is mean + std·z with the product
   rounded, then the sum rounded. */
static double sample_normal(double mean, double std, uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t s = 0;
    for (uint32_t q = 0; q < DRAW_NORMAL_COUNT / 2; q++) { /* draws 2q and 2q+1: one block */
        uint64_t x[2];
        gg_rng_pair(seed, stream, i, q, x);
        s += (x[0] & 0xFFFFFFFFu) + (x[0] >> 32) + (x[1] & 0xFFFFFFFFu) + (x[1] >> 32);
    }
    double z = (double)s * 0x1p-32 - 6.0;
    double t = std * z;
    return mean + t;
}

/* True with probability frac (exactly frac rounded to a multiple of 2^-53). */
static int selected(double frac, uint64_t seed, uint64_t stream, uint64_t i)
{
    return gg_rng_uniform(seed, stream, i, DRAW_SELECT) < frac;
}

/* The format whose subnormals and max a distribution uses: fmt itself, or E4M3 when fmt has no
   meaningful one (none, E8M0, out of range). */
static enum gg_dtype value_format(enum gg_dtype fmt)
{
    if (fmt <= GG_DTYPE_NONE || fmt >= GG_DTYPE_COUNT || fmt == GG_DTYPE_E8M0)
        return GG_DTYPE_E4M3;
    return fmt;
}

/* The format nearsat targets: the narrow float formats and fp16 keep their own, wide formats
   (bf16, fp32, fp64: data that is usually quantised to fp8 afterwards) use E4M3's. */
static enum gg_dtype nearsat_format(enum gg_dtype fmt)
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

/* Spacing of representable values just below max: 2^floor(log2 max) · 2u, found by exact
   doubling and halving (no libm). */
static double ulp_at_max(enum gg_dtype t)
{
    double max = gg_dtype_max(t), b = 1.0;
    while (b * 2.0 <= max)
        b *= 2.0;
    while (b > max)
        b *= 0.5;
    double two_u = 2.0 * gg_dtype_unit_roundoff(t);
    return b * two_u;
}

#define NEARSAT_COUNT 6

/* Magnitudes that stress saturation, max M, spacing below max q, tie point T = M + q/2
   (e4m3: M = 448, q = 32):
     M             the largest finite value
     T             rounds to M under RNE (448's significand is even), overflows above (464)
     T(1 + 2^-20)  just above the tie: overflows
     T(1 - 2^-20)  just below the tie: rounds to M
     M + q         the overflow threshold of PyTorch's non-saturating cast (e4m3: 480, fnuz: 256)
     M - q/2       the tie between max and its predecessor: rounds to M (432) */
static double nearsat_value(enum gg_dtype t, unsigned idx)
{
    double m = gg_dtype_max(t), q = ulp_at_max(t);
    double half_q = 0.5 * q, tie = m + half_q;
    switch (idx) {
    case 0: return m;
    case 1: return tie;
    case 2: return tie * (1.0 + 0x1p-20);
    case 3: return tie * (1.0 - 0x1p-20);
    case 4: return m + q;
    default: return m - half_q;
    }
}

static double sample_nearsat(enum gg_dtype fmt, uint64_t seed, uint64_t stream, uint64_t i)
{
    enum gg_dtype t = nearsat_format(fmt);
    unsigned idx = (unsigned)draw_below(seed, stream, i, 0, NEARSAT_COUNT);
    double v = nearsat_value(t, idx);
    return draw_sign(seed, stream, i, 1) * v;
}

/* k · min_sub with k uniform in [1, 2^(p-1) - 1]: every positive subnormal of t; exact. */
static double sample_subnormal_value(enum gg_dtype fmt, uint64_t seed, uint64_t stream, uint64_t i)
{
    enum gg_dtype t = value_format(fmt);
    double half_over_u = 0.5 / gg_dtype_unit_roundoff(t); /* 2^(p-1), subnormals per binade + 1 */
    uint64_t n = (half_over_u >= 2.0 && half_over_u <= 0x1p62) ? (uint64_t)half_over_u - 1u : 1u;
    uint64_t k = 1u + draw_below(seed, stream, i, DRAW_CHOICE, n);
    double v = (double)k * gg_dtype_min_subnormal(t);
    return draw_sign(seed, stream, i, DRAW_SIGN) * v;
}

static double sample_special(enum gg_dtype fmt, uint64_t seed, uint64_t stream, uint64_t i)
{
    double max = gg_dtype_max(value_format(fmt));
    switch (draw_below(seed, stream, i, DRAW_CHOICE, 3)) {
    case 0: return (double)NAN;
    case 1: return max;
    default: return -max;
    }
}

double gg_dist_sample(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i)
{
    switch (d->kind) {
    case GG_DIST_NORMAL:
        return sample_normal(d->p[0], d->p[1], seed, stream, i);
    case GG_DIST_UNIFORM: {
        double width = d->p[1] - d->p[0];
        double t = width * gg_rng_uniform(seed, stream, i, 0);
        return d->p[0] + t;
    }
    case GG_DIST_INTS: {
        /* r as gg_dist_parse accepts it; other values (unchecked structs) act as r = 0. */
        uint64_t r = (d->p[0] >= 0.0 && d->p[0] <= INTS_MAX_R) ? (uint64_t)d->p[0] : 0u;
        uint64_t k = draw_below(seed, stream, i, 0, 2u * r + 1u);
        return (double)((int64_t)k - (int64_t)r);
    }
    case GG_DIST_CONST:
        return d->p[0];
    case GG_DIST_OUTLIERS:
        if (selected(d->p[1], seed, stream, i)) {
            double big = d->p[2] * d->p[0];
            return draw_sign(seed, stream, i, DRAW_CHOICE) * big;
        }
        return sample_normal(0.0, d->p[0], seed, stream, i);
    case GG_DIST_NEARSAT:
        return sample_nearsat(d->fmt, seed, stream, i);
    case GG_DIST_SUBNORMAL:
        if (selected(d->p[0], seed, stream, i))
            return sample_subnormal_value(d->fmt, seed, stream, i);
        return sample_normal(0.0, 1.0, seed, stream, i);
    case GG_DIST_SPECIALS:
        if (selected(d->p[0], seed, stream, i))
            return sample_special(d->fmt, seed, stream, i);
        return sample_normal(0.0, 1.0, seed, stream, i);
    default:
        return (double)NAN;
    }
}

void gg_dist_fill(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i0, int64_t n,
                  double *out)
{
    for (int64_t j = 0; j < n; j++)
        out[j] = gg_dist_sample(d, seed, stream, i0 + (uint64_t)j);
}

/* ------------------------------------------------------------------------------------------ */
/* Text form                                                                                    */
/* ------------------------------------------------------------------------------------------ */

struct kind_info {
    const char *name;
    int arity;
    const char *args; /* argument names, for messages */
};

static const struct kind_info KINDS[GG_DIST_COUNT] = {
    [GG_DIST_NORMAL] = {"normal", 2, "(mean,std)"},
    [GG_DIST_UNIFORM] = {"uniform", 2, "(lo,hi)"},
    [GG_DIST_INTS] = {"ints", 1, "(r)"},
    [GG_DIST_CONST] = {"const", 1, "(v)"},
    [GG_DIST_OUTLIERS] = {"outliers", 3, "(std,frac,mag)"},
    [GG_DIST_NEARSAT] = {"nearsat", 0, "()"},
    [GG_DIST_SUBNORMAL] = {"subnormal", 1, "(frac)"},
    [GG_DIST_SPECIALS] = {"specials", 1, "(frac)"},
};

#define MAX_ARGS 3

static enum gg_status fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes the message into err (when there is room) and returns GG_E_PARSE. */
static enum gg_status fail(char *err, size_t err_len, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return GG_E_PARSE;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Range checks of a parsed distribution (all arguments already finite). */
static enum gg_status check_ranges(const struct gg_dist *d, char *err, size_t err_len)
{
    const char *name = KINDS[d->kind].name;
    const double *p = d->p;
    switch (d->kind) {
    case GG_DIST_NORMAL:
    case GG_DIST_OUTLIERS: {
        double mean = d->kind == GG_DIST_NORMAL ? p[0] : 0.0;
        double std = d->kind == GG_DIST_NORMAL ? p[1] : p[0];
        if (!(std >= 0.0))
            return fail(err, err_len, "%s: std must be >= 0, got %.17g", name, std);
        if (!isfinite(fabs(mean) + 6.0 * std))
            return fail(err, err_len, "%s: mean + 6*std overflows", name);
        if (d->kind == GG_DIST_OUTLIERS) {
            if (!(p[1] >= 0.0 && p[1] <= 1.0))
                return fail(err, err_len, "%s: frac must be in [0,1], got %.17g", name, p[1]);
            if (!(p[2] >= 0.0))
                return fail(err, err_len, "%s: mag must be >= 0, got %.17g", name, p[2]);
            if (!isfinite(p[2] * std))
                return fail(err, err_len, "%s: mag*std overflows", name);
        }
        return GG_OK;
    }
    case GG_DIST_UNIFORM:
        if (!(p[0] <= p[1]))
            return fail(err, err_len, "uniform: lo must be <= hi, got lo=%.17g hi=%.17g", p[0], p[1]);
        if (!isfinite(p[1] - p[0]))
            return fail(err, err_len, "uniform: hi - lo overflows");
        return GG_OK;
    case GG_DIST_INTS:
        if (!(p[0] >= 0.0 && p[0] <= INTS_MAX_R) || p[0] != (double)(int64_t)p[0])
            return fail(err, err_len, "ints: r must be an integer in [0, 2^30], got %.17g", p[0]);
        return GG_OK;
    case GG_DIST_SUBNORMAL:
    case GG_DIST_SPECIALS:
        if (!(p[0] >= 0.0 && p[0] <= 1.0))
            return fail(err, err_len, "%s: frac must be in [0,1], got %.17g", name, p[0]);
        return GG_OK;
    default:
        return GG_OK;
    }
}

/* Looks up the name of length n; GG_DIST_COUNT when unknown. */
static enum gg_dist_kind find_kind(const char *name, size_t n)
{
    for (int k = 0; k < GG_DIST_COUNT; k++)
        if (strlen(KINDS[k].name) == n && strncmp(KINDS[k].name, name, n) == 0)
            return (enum gg_dist_kind)k;
    return GG_DIST_COUNT;
}

/* Parses "(a,b,...)" starting after the '(' at s: values into v (at most MAX_ARGS are kept,
   all are counted in *count); *end gets the position after ')'. */
static enum gg_status parse_args(const char *name, const char *s, double v[MAX_ARGS], int *count,
                                 const char **end, char *err, size_t err_len)
{
    *count = 0;
    s = skip_space(s);
    if (*s == ')') {
        *end = s + 1;
        return GG_OK;
    }
    for (;;) {
        char *after;
        s = skip_space(s);
        double x = strtod(s, &after);
        if (after == s)
            return fail(err, err_len, "%s: argument %d is not a number: '%.20s'", name,
                        *count + 1, s);
        if (!isfinite(x))
            return fail(err, err_len, "%s: argument %d is not finite: '%.*s'", name, *count + 1,
                        (int)(after - s), s);
        if (*count < MAX_ARGS)
            v[*count] = x;
        (*count)++;
        s = skip_space(after);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == ')') {
            *end = s + 1;
            return GG_OK;
        }
        if (*s == '\0')
            return fail(err, err_len, "%s: missing ')'", name);
        return fail(err, err_len, "%s: unexpected '%c' after argument %d", name, *s, *count);
    }
}

enum gg_status gg_dist_parse(const char *s, struct gg_dist *out, char *err, size_t err_len)
{
    if (s == NULL)
        return fail(err, err_len, "distribution: no text");
    const char *p = skip_space(s);
    const char *name = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
           (p > name && *p >= '0' && *p <= '9'))
        p++;
    size_t name_len = (size_t)(p - name);
    if (*name == '\0')
        return fail(err, err_len, "distribution: empty text");
    if (name_len == 0)
        return fail(err, err_len, "distribution: expected a name, got '%.20s'", name);
    enum gg_dist_kind kind = find_kind(name, name_len);
    if (kind == GG_DIST_COUNT)
        return fail(err, err_len,
                    "unknown distribution '%.*s' (expected normal, uniform, ints, const, outliers, "
                    "nearsat, subnormal or specials)",
                    (int)(name_len > 40 ? 40 : name_len), name);
    const struct kind_info *ki = &KINDS[kind];

    double v[MAX_ARGS] = {0.0, 0.0, 0.0};
    int count = 0;
    p = skip_space(p);
    if (*p == '(') {
        enum gg_status st = parse_args(ki->name, p + 1, v, &count, &p, err, err_len);
        if (st != GG_OK)
            return st;
        p = skip_space(p);
        if (*p != '\0')
            return fail(err, err_len, "%s: unexpected text after ')': '%.20s'", ki->name, p);
    } else if (*p != '\0') {
        return fail(err, err_len, "%s: expected '(' or the end, got '%.20s'", ki->name, p);
    }
    if (count != ki->arity)
        return fail(err, err_len, "%s expects %d argument%s %s, got %d", ki->name, ki->arity,
                    ki->arity == 1 ? "" : "s", ki->args, count);

    struct gg_dist d = {.kind = kind, .p = {v[0], v[1], v[2]}, .fmt = GG_DTYPE_NONE};
    enum gg_status st = check_ranges(&d, err, err_len);
    if (st != GG_OK)
        return st;
    *out = d;
    return GG_OK;
}

/* The shortest of the "%.{prec}g" texts of x (prec = 1..17) that strtod reads back as exactly x;
   "%.17g" always does. Comparing lengths, not precisions, prefers "100" to "1e+02". */
static void format_number(double x, char *buf, size_t len)
{
    snprintf(buf, len, "%.17g", x);
    size_t best = strlen(buf);
    for (int prec = 1; prec < 17; prec++) {
        char text[32];
        snprintf(text, sizeof text, "%.*g", prec, x);
        double back = strtod(text, NULL);
        if (back == x && signbit(back) == signbit(x) && strlen(text) < best) {
            snprintf(buf, len, "%s", text);
            best = strlen(text);
        }
    }
}

int gg_dist_format(const struct gg_dist *d, char *buf, size_t len)
{
    if ((int)d->kind < 0 || (int)d->kind >= (int)GG_DIST_COUNT) {
        if (buf != NULL && len > 0)
            buf[0] = '\0';
        return -1;
    }
    const struct kind_info *ki = &KINDS[d->kind];
    if (ki->arity == 0)
        return snprintf(buf, len, "%s", ki->name);
    char text[32 + MAX_ARGS * 32];
    size_t at = (size_t)snprintf(text, sizeof text, "%s(", ki->name);
    for (int a = 0; a < ki->arity; a++) {
        char num[32];
        format_number(d->p[a], num, sizeof num);
        at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", a ? "," : "", num);
    }
    snprintf(text + at, sizeof text - at, ")");
    return snprintf(buf, len, "%s", text);
}

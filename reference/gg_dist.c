/*
 * gg_dist.c — value distributions of case data: the text form "name(args)" (parse, canonical
 * format) and the host entry points of the sampler that turns draws of gg_rng_u64 into element
 * values. The sampler itself is in gg_gen_core.h: integer operations and single correctly
 * rounded binary64 + - * only (no libm, no fused multiply-add), compiled for the GPU too. Like
 * gg_rng.c, the sampler is part of the case-file format version.
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

#include "reference/gg_gen_core.h"

/* ------------------------------------------------------------------------------------------ */
/* Sampling (the per-element samplers are in gg_gen_core.h, shared with the GPU generator)      */
/* ------------------------------------------------------------------------------------------ */

double gg_dist_sample(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i)
{
    return gg_core_sample(d, seed, stream, i);
}

/* Elements filled together: Philox runs on FILL_LANES counters at once, one round
   (gg_core_philox_round) of all of them before the next, which the compiler turns into vector
   products. */
#define FILL_LANES 64

/* Words w[0..3][l] of the Philox block q of elements i0 + l, l < FILL_LANES (gg_core_rng_pair's
   key and counter). */
GG_HOST_VECTOR static void philox_lanes(uint64_t seed, uint64_t stream, uint64_t i0, uint32_t q,
                                        uint32_t w[4][FILL_LANES])
{
    uint32_t c0[FILL_LANES], c1[FILL_LANES], c2[FILL_LANES], c3[FILL_LANES];
    for (int l = 0; l < FILL_LANES; l++) {
        uint64_t i = i0 + (uint64_t)l;
        c0[l] = (uint32_t)i;
        c1[l] = (uint32_t)(i >> 32);
        c2[l] = (uint32_t)stream;
        c3[l] = q;
    }
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < GG_PHILOX_ROUNDS; r++) {
        for (int l = 0; l < FILL_LANES; l++)
            gg_core_philox_round(&c0[l], &c1[l], &c2[l], &c3[l], k0, k1);
        k0 += GG_PHILOX_W0;
        k1 += GG_PHILOX_W1;
    }
    memcpy(w[0], c0, sizeof c0);
    memcpy(w[1], c1, sizeof c1);
    memcpy(w[2], c2, sizeof c2);
    memcpy(w[3], c3, sizeof c3);
}

/* FILL_LANES elements from i0 of a uniform or normal distribution (gg_core_sample's values). */
static void fill_lanes(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i0,
                       double *out)
{
    uint32_t w[4][FILL_LANES];
    if (d->kind == GG_DIST_UNIFORM) { /* draw 0: words 0 and 1 of block 0 */
        double width = d->p[1] - d->p[0];
        philox_lanes(seed, stream, i0, 0, w);
        for (int l = 0; l < FILL_LANES; l++) {
            uint64_t u = (uint64_t)w[0][l] | ((uint64_t)w[1][l] << 32);
            out[l] = GG_DADD(d->p[0], GG_DMUL(width, (double)(u >> 11) * 0x1p-53));
        }
        return;
    }
    uint64_t s[FILL_LANES] = {0}; /* the Irwin-Hall sum of gg_core_normal */
    for (uint32_t q = 0; q < GG_DRAW_NORMAL_BLOCKS; q++) {
        philox_lanes(seed, stream, i0, q, w);
        for (int l = 0; l < FILL_LANES; l++)
            s[l] += (uint64_t)w[0][l] + w[1][l] + w[2][l] + w[3][l];
    }
    for (int l = 0; l < FILL_LANES; l++) {
        double z = (double)s[l] * 0x1p-32 - 6.0;
        out[l] = GG_DADD(d->p[0], GG_DMUL(d->p[1], z));
    }
}

void gg_dist_fill(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i0, int64_t n,
                  double *out)
{
    int64_t j = 0;
    if (d->kind == GG_DIST_UNIFORM || d->kind == GG_DIST_NORMAL)
        for (; j + FILL_LANES <= n; j += FILL_LANES)
            fill_lanes(d, seed, stream, i0 + (uint64_t)j, out + j);
    for (; j < n; j++)
        out[j] = gg_core_sample(d, seed, stream, i0 + (uint64_t)j);
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
    [GG_DIST_CODES] = {"codes", 1, "(frac)"},
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
        if (!(p[0] >= 0.0 && p[0] <= GG_INTS_MAX_R) || p[0] != (double)(int64_t)p[0])
            return fail(err, err_len, "ints: r must be an integer in [0, 2^30], got %.17g", p[0]);
        return GG_OK;
    case GG_DIST_SUBNORMAL:
    case GG_DIST_SPECIALS:
    case GG_DIST_CODES:
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
                    "nearsat, subnormal, specials or codes)",
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

/*
 * gg_ref_mpfr.c — exact outputs with MPFR and certification of the dgemm reference.
 * An output is Σ_t a_t·b_t (+ bias) over dequantised doubles: every product is exact at 106 bits
 * (the bias is one more term, bias·1), mpfr_sum rounds the sum once to 53 bits, and
 * mpfr_subnormalize makes that one rounding land on the binary64 grid (gradual underflow, no
 * double rounding). A reference result c over h terms is certified when
 * |c - exact| ≤ γ_h(2^-53)·Σ|terms| + 2^-1074, the error bound of any summation order.
 */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference/gg_ref.h"

/* Scratch for exact dot products of up to cap terms. */
struct exact_ws {
    int64_t cap;
    mpfr_t *terms;
    mpfr_ptr *ptrs;
    double *va, *vb;
    mpfr_t sum;
};

static void ws_free(struct exact_ws *w)
{
    if (w->terms) {
        for (int64_t t = 0; t < w->cap; t++)
            mpfr_clear(w->terms[t]);
        mpfr_clear(w->sum);
    }
    free(w->terms);
    free(w->ptrs);
    free(w->va);
    free(w->vb);
}

/* Returns 0 on allocation failure (w is then empty and safe to free). */
static int ws_init(struct exact_ws *w, int64_t cap)
{
    size_t n = (size_t)(cap > 0 ? cap : 1);
    w->cap = cap;
    w->terms = malloc(n * sizeof *w->terms);
    w->ptrs = malloc(n * sizeof *w->ptrs);
    w->va = malloc(n * sizeof *w->va);
    w->vb = malloc(n * sizeof *w->vb);
    if (!w->terms || !w->ptrs || !w->va || !w->vb) {
        free(w->terms);
        w->terms = NULL;
        ws_free(w);
        return 0;
    }
    for (int64_t t = 0; t < cap; t++) {
        mpfr_init2(w->terms[t], 2 * 53); /* a double times a double is exact at 106 bits */
        w->ptrs[t] = w->terms[t];
    }
    mpfr_init2(w->sum, 53);
    return 1;
}

/* Σ_t va[t]·vb[t], t < n ≤ cap, correctly rounded to binary64. NaN when a term is NaN or the
   sum is Inf - Inf. MPFR's exponent range is narrowed to binary64's only around the final
   rounding and restored before returning. */
static double exact_dot(struct exact_ws *w, int64_t n)
{
    for (int64_t t = 0; t < n; t++) {
        mpfr_set_d(w->terms[t], w->va[t], MPFR_RNDN);
        mpfr_mul_d(w->terms[t], w->terms[t], w->vb[t], MPFR_RNDN);
    }
    int inex = mpfr_sum(w->sum, w->ptrs, (unsigned long)n, MPFR_RNDN);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-1073); /* binary64 in MPFR's 0.1b·2^e convention: 2^-1074 = 0.1b·2^-1073 */
    mpfr_set_emax(1024);
    inex = mpfr_check_range(w->sum, inex, MPFR_RNDN);
    mpfr_subnormalize(w->sum, inex, MPFR_RNDN);
    double r = mpfr_get_d(w->sum, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return r;
}

/* Gathers the terms of output (g, r, col) into w->va and w->vb: the two reduction vectors, then
   the bias (times 1) when the problem has one. Returns the number of terms, at most red + 1. */
static int64_t gather_pair(const struct gg_problem *p, const struct gg_operands *o,
                           struct exact_ws *w, int64_t g, int64_t r, int64_t col,
                           gg_ref_gather_fn gather, void *ctx, char *err, size_t err_len)
{
    struct gg_out_block b;
    gg_problem_out_block(p, g, &b);
    if (gather) {
        if (gather(ctx, 0, g, r, w->va, err, err_len) != 0 ||
            gather(ctx, 1, g, col, w->vb, err, err_len) != 0)
            return -1;
    } else {
        gg_ref_gather(p, o, 0, g, r, w->va);
        gg_ref_gather(p, o, 1, g, col, w->vb);
    }
    if (p->bias_dtype == GG_DTYPE_NONE)
        return b.red;
    int64_t mat = gg_problem_b_mats(p) == 1 ? 0 : g;
    w->va[b.red] = gg_load(p->bias_dtype, o->bias, mat * p->n + col);
    w->vb[b.red] = 1.0;
    return b.red + 1;
}

double gg_ref_exact(const struct gg_problem *p, const struct gg_operands *o, int64_t g, int64_t r,
                    int64_t col)
{
    struct gg_out_block b;
    gg_problem_out_block(p, g, &b);
    struct exact_ws w;
    if (!ws_init(&w, b.red + 1))
        return NAN;
    double e = exact_dot(&w, gather_pair(p, o, &w, g, r, col, NULL, NULL, NULL, 0));
    ws_free(&w);
    return e;
}

/* γ_n(u) = n·u / (1 - n·u), u = 2^-53. */
static double gamma53(int64_t n)
{
    double nu = (double)n * 0x1p-53;
    return nu < 1 ? nu / (1 - nu) : INFINITY;
}

/* An upper bound on Σ|va·vb| from the gathered vectors, for callers without an abs array:
   the recursive sum in double inflated by its own error bound. */
static double abs_bound(const struct exact_ws *w, int64_t n)
{
    double s = 0;
    for (int64_t t = 0; t < n; t++)
        s += fabs(w->va[t] * w->vb[t]);
    return s * (1 + 2 * gamma53(n + 1));
}

/* 1 when c, a sum of h terms, is within the dgemm error bound of exact. NaN exact requires NaN c, infinite exact
   requires the same infinity. */
static int certified(double c, double exact, double abs, int64_t h)
{
    if (isnan(exact))
        return isnan(c);
    if (isinf(exact))
        return c == exact;
    if (isnan(c))
        return 0;
    return fabs(c - exact) <= gamma53(h) * abs + 0x1p-1074;
}

/* State of one certification run: the points idx[j] (packed indices) with their reference
   values c[j] and Σ|ab| abs[j] (NULL: bounded from the vectors). */
struct certify {
    const struct gg_problem *p;
    const struct gg_operands *o;
    const double *c, *abs;
    const int64_t *start; /* start[g]: packed index of group g's block; start[groups] = total */
    struct exact_ws w;
    int64_t bad, first_bad;
    gg_ref_gather_fn gather;
    void *gather_ctx;
    int failed;       /* gather failed: nothing more is checked */
    char *err;
    size_t err_len;
};

/* The group holding packed index i (binary search over the block starts; empty blocks own no
   index). */
static int64_t group_of(const int64_t *start, int64_t groups, int64_t i)
{
    int64_t lo = 0, hi = groups - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (start[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Checks point j, the output at packed index i. */
static void check_at(struct certify *s, int64_t j, int64_t i)
{
    int64_t g = group_of(s->start, s->p->groups, i);
    struct gg_out_block b;
    gg_problem_out_block(s->p, g, &b);
    int64_t local = i - s->start[g];
    if (s->failed)
        return;
    int64_t h = gather_pair(s->p, s->o, &s->w, g, local / b.cols, local % b.cols, s->gather,
                            s->gather_ctx, s->err, s->err_len);
    if (h < 0) {
        s->failed = 1;
        return;
    }
    double exact = exact_dot(&s->w, h);
    double abs = s->abs ? s->abs[j] : abs_bound(&s->w, h);
    if (!certified(s->c[j], exact, abs, h)) {
        if (s->bad++ == 0)
            s->first_bad = i;
    }
}

/* At most this many groups get their corners checked (spread evenly over the groups). */
#define CORNER_GROUPS 1024

/* The packed start of every group block (groups + 1 entries), and the longest reduction of a
   non-empty block in *max_red; NULL when memory runs out. */
static int64_t *block_starts(const struct gg_problem *p, int64_t *max_red)
{
    int64_t *start = malloc((size_t)(p->groups + 1) * sizeof *start);
    if (!start)
        return NULL;
    start[0] = 0;
    *max_red = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        start[g + 1] = start[g] + b.rows * b.cols;
        if (b.rows * b.cols > 0 && b.red > *max_red)
            *max_red = b.red;
    }
    return start;
}

int64_t gg_ref_certify_points(const struct gg_problem *p, int64_t n_samples, uint64_t seed,
                              int64_t *idx)
{
    int64_t max_red = 0, n = 0;
    int64_t *start = block_starts(p, &max_red);
    if (!start)
        return -1;
    int64_t total = start[p->groups];
    int64_t n_corner = p->groups < CORNER_GROUPS ? p->groups : CORNER_GROUPS;
    for (int64_t j = 0; j < n_corner; j++) {
        /* The corners of the block: every distinct (first/last row, first/last column). */
        int64_t g = j * p->groups / n_corner;
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        if (b.rows == 0 || b.cols == 0)
            continue;
        int64_t rs[2] = {0, b.rows - 1}, cs[2] = {0, b.cols - 1};
        for (int r = 0; r < (b.rows > 1 ? 2 : 1); r++)
            for (int c = 0; c < (b.cols > 1 ? 2 : 1); c++, n++)
                if (idx)
                    idx[n] = start[g] + rs[r] * b.cols + cs[c];
    }
    for (int64_t j = 0; total > 0 && j < n_samples; j++, n++) {
        /* Uniform index in [0, total): the high word of a 64x64-bit product (Lemire). */
        uint64_t u = gg_rng_u64(seed, 99, (uint64_t)j, 0);
        if (idx)
            idx[n] = (int64_t)(((unsigned __int128)u * (uint64_t)total) >> 64);
    }
    free(start);
    return n;
}

int64_t gg_ref_certify_at(const struct gg_problem *p, const struct gg_operands *o, int64_t n,
                          const int64_t *idx, const double *c, const double *abs,
                          gg_ref_gather_fn gather, void *gather_ctx, int64_t *first_bad,
                          char *err, size_t err_len)
{
    struct certify s = {.p = p, .o = o, .c = c, .abs = abs, .bad = 0, .first_bad = -1,
                        .gather = gather, .gather_ctx = gather_ctx, .err = err,
                        .err_len = err_len};
    int64_t max_red = 0;
    int64_t *start = block_starts(p, &max_red);
    snprintf(err, err_len, "out of memory for certification");
    if (!start)
        return -1;
    s.start = start;
    if (!ws_init(&s.w, max_red + 1)) { /* + 1: the bias term */
        free(start);
        return -1;
    }
    for (int64_t j = 0; j < n; j++)
        check_at(&s, j, idx[j]);
    ws_free(&s.w);
    free(start);
    if (first_bad)
        *first_bad = s.first_bad;
    if (s.failed)
        return -1;
    err[0] = '\0';
    return s.bad;
}

int64_t gg_ref_certify(const struct gg_problem *p, const struct gg_operands *o, const double *c,
                       const double *abs, int64_t n_samples, uint64_t seed, int64_t *first_bad)
{
    char err[8];
    return gg_ref_certify_with(p, o, c, abs, n_samples, seed, NULL, NULL, first_bad, err,
                               sizeof err);
}

int64_t gg_ref_certify_with(const struct gg_problem *p, const struct gg_operands *o,
                            const double *c, const double *abs, int64_t n_samples, uint64_t seed,
                            gg_ref_gather_fn gather, void *gather_ctx, int64_t *first_bad,
                            char *err, size_t err_len)
{
    int64_t n = gg_ref_certify_points(p, n_samples, seed, NULL);
    int64_t *idx = n >= 0 ? malloc((size_t)(n > 0 ? n : 1) * sizeof *idx) : NULL;
    double *cv = idx ? malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *cv) : NULL;
    int64_t bad = -1;
    snprintf(err, err_len, "out of memory for certification");
    if (cv) {
        gg_ref_certify_points(p, n_samples, seed, idx);
        for (int64_t j = 0; j < n; j++) {
            cv[j] = c[idx[j]];
            cv[n + j] = abs ? abs[idx[j]] : 0.0;
        }
        bad = gg_ref_certify_at(p, o, n, idx, cv, abs ? cv + n : NULL, gather, gather_ctx,
                                first_bad, err, err_len);
    }
    free(cv);
    free(idx);
    return bad;
}

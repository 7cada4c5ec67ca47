/*
 * gg_oracle_guard.c — structural checks on raw memory: canary bands around buffers, the padding
 * of C that no group owns (it must keep the sentinel; for moe sorted, every element no valid
 * sorted id names), the first difference between two buffers, and the first difference between
 * two outputs as values, where every NaN is one value (workspace dependence and determinism).
 */
#include <math.h>
#include <string.h>

#include "oracles/gg_oracle_int.h"

/* gg_oracle_canary(i) has period 256 in i (0x3D is odd), so a band is this pattern repeated. */
#define CANARY_PERIOD 256

static void canary_pattern(uint8_t pat[CANARY_PERIOD])
{
    for (size_t i = 0; i < CANARY_PERIOD; i++)
        pat[i] = gg_oracle_canary(i);
}

void gg_oracle_canary_fill(uint8_t *band, size_t n)
{
    uint8_t pat[CANARY_PERIOD];
    canary_pattern(pat);
    for (size_t off = 0; off < n; off += CANARY_PERIOD)
        memcpy(band + off, pat, n - off < CANARY_PERIOD ? n - off : CANARY_PERIOD);
}

/* Index of the first differing byte of x and y, known to differ within n bytes. */
static int64_t locate(const uint8_t *x, const uint8_t *y, size_t n)
{
    size_t i = 0;
    while (i < n && x[i] == y[i])
        i++;
    return (int64_t)i;
}

int64_t gg_oracle_canary_check(const uint8_t *band, size_t n)
{
    uint8_t pat[CANARY_PERIOD];
    canary_pattern(pat);
    for (size_t off = 0; off < n; off += CANARY_PERIOD) {
        size_t len = n - off < CANARY_PERIOD ? n - off : CANARY_PERIOD;
        if (memcmp(band + off, pat, len) != 0)
            return (int64_t)off + locate(band + off, pat, len);
    }
    return -1;
}

int64_t gg_oracle_first_diff(const void *x, const void *y, size_t n)
{
    enum { BLOCK = 4096 };
    const uint8_t *a = x, *b = y;
    if (n == 0 || memcmp(a, b, n) == 0)
        return -1;
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t len = n - off < BLOCK ? n - off : BLOCK;
        if (memcmp(a + off, b + off, len) != 0)
            return (int64_t)off + locate(a + off, b + off, len);
    }
    return -1;
}

/*
 * 1 when the sentinel of t is a pattern no computed NaN takes, so that an element still holding it
 * was not written: the signalling NaNs of the 16-, 32- and 64-bit formats and E5M2's 0x7D
 * (gg_oracle_sentinel). OCP E4M3's sentinel 0x7F is its positive NaN, the one a kernel writes, and
 * the fnuz formats and E8M0 have a single NaN code: there a NaN is a NaN whoever wrote it.
 */
static int sentinel_distinct(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64:
    case GG_DTYPE_F32:
    case GG_DTYPE_F16:
    case GG_DTYPE_BF16:
    case GG_DTYPE_E5M2: return 1;
    default: return 0;
    }
}

/* Whether the element of t at p is a NaN (*nan) and the sentinel (return value). */
static int elem_nan(enum gg_dtype t, const uint8_t *p, int *nan)
{
    uint32_t s = gg_oracle_sentinel(t);
    if (t == GG_DTYPE_F64) {
        uint64_t bits;
        double v;
        memcpy(&bits, p, sizeof bits);
        memcpy(&v, p, sizeof v);
        *nan = isnan(v);
        return bits == ((uint64_t)s << 32 | s);
    }
    uint32_t code = gg_load_code(t, p, 0);
    *nan = isnan(gg_decode(t, code));
    return code == s;
}

/*
 * Two elements of t whose bytes differ are still one value when both are NaNs: IEEE 754 leaves
 * the sign and payload of a NaN result open, so a correct kernel may return either from run to
 * run. The sentinel stays apart where it can be told from a written NaN (an element written in
 * one run and left unwritten in the other is a real difference).
 */
static int same_nan(enum gg_dtype t, const uint8_t *x, const uint8_t *y)
{
    int nx, ny;
    int sx = elem_nan(t, x, &nx), sy = elem_nan(t, y, &ny);
    return nx && ny && (sx == sy || !sentinel_distinct(t));
}

int64_t gg_oracle_first_value_diff(enum gg_dtype t, const void *x, const void *y, size_t n)
{
    enum { BLOCK = 4096 }; /* a multiple of every element size */
    const uint8_t *a = x, *b = y;
    int bits = gg_dtype_bits(t);
    size_t es = bits >= 8 ? (size_t)bits / 8 : 1; /* 4-bit codes: E2M1 has no NaN */
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t len = n - off < BLOCK ? n - off : BLOCK;
        if (memcmp(a + off, b + off, len) == 0)
            continue;
        for (size_t e = off; e < off + len; e += es) {
            size_t w = off + len - e < es ? off + len - e : es; /* a partial last element */
            if (memcmp(a + e, b + e, w) != 0 && (bits < 8 || w < es || !same_nan(t, a + e, b + e)))
                return (int64_t)e;
        }
    }
    return -1;
}

/* The elements of C that may be read: sorted, disjoint ranges, walked by gaps that come in
   storage order (the cursor only moves forward). */
struct live_walk {
    const struct gg_elem_range *r;
    size_t n, i;
};

/* First element in [lo, hi) of c that no longer holds the sentinel, or -1. Whole bytes are
   compared with the sentinel's byte pattern a run at a time; 4-bit codes one by one. */
static int64_t first_changed(enum gg_dtype t, const void *c, int64_t lo, int64_t hi)
{
    enum { RUN = 256 };
    double v;
    int bits = gg_dtype_bits(t);
    if (bits >= 8 && hi > lo) {
        size_t es = (size_t)bits / 8;
        uint8_t pat[RUN];
        uint32_t s = gg_oracle_sentinel(t);
        for (size_t e = 0; e < RUN / es; e++) /* f64: the 32-bit sentinel in both halves */
            for (size_t b = 0; b < es; b++)
                pat[e * es + b] = (uint8_t)(s >> (8 * (b % 4)));
        const uint8_t *p = (const uint8_t *)c + (size_t)lo * es;
        size_t n = (size_t)(hi - lo) * es;
        for (size_t off = 0; off < n; off += RUN) {
            size_t len = n - off < RUN ? n - off : RUN;
            if (memcmp(p + off, pat, len) != 0)
                return lo + (int64_t)((off + (size_t)locate(p + off, pat, len)) / es);
        }
        return -1;
    }
    for (int64_t i = lo; i < hi; i++)
        if (!gg_oracle_out_load(t, c, i, &v))
            return i;
    return -1;
}

/* First element in [from, to) ∩ live of c that no longer holds the sentinel, or -1. */
static int64_t check_gap(enum gg_dtype t, const void *c, struct live_walk *w, int64_t from,
                         int64_t to)
{
    while (w->i < w->n && w->r[w->i].hi <= from)
        w->i++;
    for (size_t j = w->i; j < w->n && w->r[j].lo < to; j++) {
        int64_t lo = from > w->r[j].lo ? from : w->r[j].lo, hi = to < w->r[j].hi ? to : w->r[j].hi;
        int64_t hit = first_changed(t, c, lo, hi);
        if (hit >= 0)
            return hit;
    }
    return -1;
}

/* C rows whose names are collected per pass of the moe padding check: a bitmap of 8 KiB on the
   stack (the check allocates nothing), so outputs of up to 2^16 rows take one pass over the ids. */
#define MOE_ROW_WINDOW (1 << 16)

/*
 * Moe sorted: C is Y [T·topk, N] with leading dimension ldc, and row v belongs to the output only
 * when a valid sorted id (a row of some expert's block) names it. The padding is every unnamed
 * row (none when the routing is complete) plus the tail n .. ldc-1 of every row but the last
 * (where C's span ends). Rows are checked in storage order, a window of MOE_ROW_WINDOW at a time,
 * each window after marking the ids that fall inside it.
 */
static int64_t moe_padding_check(const struct gg_problem *p, const void *c, struct live_walk *w)
{
    uint8_t named[MOE_ROW_WINDOW / 8];
    int64_t rows = p->m * p->topk, hit;
    if (p->n == 0)
        return -1;
    for (int64_t w0 = 0; w0 < rows; w0 += MOE_ROW_WINDOW) {
        int64_t w1 = rows - w0 < MOE_ROW_WINDOW ? rows : w0 + MOE_ROW_WINDOW;
        memset(named, 0, sizeof named);
        for (int64_t e = 0; e < p->groups; e++) {
            struct gg_out_block b;
            gg_problem_out_block(p, e, &b);
            for (int64_t r = 0; r < b.rows; r++)
                if (b.row_map[r] >= w0 && b.row_map[r] < w1)
                    named[(b.row_map[r] - w0) / 8] |= (uint8_t)(1u << ((b.row_map[r] - w0) % 8));
        }
        for (int64_t v = w0; v < w1; v++) {
            int64_t row = v * p->ldc, end = v + 1 < rows ? row + p->ldc : row + p->n;
            int is_named = named[(v - w0) / 8] >> ((v - w0) % 8) & 1;
            if ((hit = check_gap(p->c_dtype, c, w, is_named ? row + p->n : row, end)) >= 0)
                return hit;
        }
    }
    return -1;
}

/* C has no padding: rows are packed and, for ops with a stride between groups, so are groups. */
static int packed_output(const struct gg_problem *p)
{
    struct gg_out_block b;
    gg_problem_out_block(p, 0, &b);
    if (b.ld != b.cols)
        return 0;
    if (p->op == GG_OP_GROUPED_WGRAD || p->op == GG_OP_BATCHED)
        return p->groups == 1 || p->stride_c == b.rows * b.cols;
    return 1;
}

/*
 * Group blocks lie in C in group order (grouped fwd/dgrad by row offset, wgrad and batched by
 * g·stride_c), so the padding is the gap before each non-empty block plus the tail of every row
 * but the last inside it (row r ends at base + r·ld + cols, the next starts at base + (r+1)·ld).
 * The scan stops at the end of the last block: that is where C's span ends.
 */
int64_t gg_oracle_padding_check_live(const struct gg_problem *p, const void *c,
                                     const struct gg_elem_range *live, size_t n_live)
{
    struct live_walk w = {live, n_live, 0};
    if (p->op == GG_OP_MOE_SORTED)
        return moe_padding_check(p, c, &w);
    if (p->groups < 1 || packed_output(p))
        return -1;
    int64_t pos = 0, hit;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        if (b.rows == 0 || b.cols == 0)
            continue;
        if ((hit = check_gap(p->c_dtype, c, &w, pos, b.base)) >= 0)
            return hit;
        for (int64_t r = 0; r + 1 < b.rows; r++)
            if ((hit = check_gap(p->c_dtype, c, &w, b.base + r * b.ld + b.cols,
                                 b.base + (r + 1) * b.ld)) >= 0)
                return hit;
        pos = b.base + (b.rows - 1) * b.ld + b.cols;
    }
    return -1;
}

int64_t gg_oracle_padding_check(const struct gg_problem *p, const void *c)
{
    const struct gg_elem_range all = {0, INT64_MAX};
    return gg_oracle_padding_check_live(p, c, &all, 1);
}

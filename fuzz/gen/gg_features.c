/*
 * gg_features.c — structural features of a case for novelty search, and its margins. Each
 * feature is the FNV-1a hash of a small tagged tuple: dtypes and recipe; the residue class of
 * N, K and every group's M against the kernel's tiles; the empty-group pattern; the bit length
 * of the largest element and byte offset touched; dispatch options; data recipes; each layout
 * freedom away from packed with its edge classes (gg_freedoms.c). None depends on the kernel's
 * name or the mutant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen.h"

enum tag {
    F_TYPES = 1,
    F_RES_M,
    F_RES_M_LAST,
    F_RES_N,
    F_RES_K,
    F_GROUPS,
    F_OFFS_ELEM,
    F_OFFS_BYTE,
    F_OPTS,
    F_DATA,
    F_MOE,
    F_LAYOUT
};

/* Residue classes of a size against a tile. */
enum res { RES_ZERO, RES_ONE, RES_BELOW, RES_ALIGNED, RES_TAIL };

static enum res residue(int64_t v, int64_t tile)
{
    if (v == 0)
        return RES_ZERO;
    if (v == 1)
        return RES_ONE;
    if (tile <= 1)
        return RES_ALIGNED;
    if (v < tile)
        return RES_BELOW;
    return v % tile == 0 ? RES_ALIGNED : RES_TAIL;
}

/* FNV-1a (32 bits) over the bytes of a tag and four values. */
static uint32_t fnv1a(enum tag t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t v[5] = {t, a, b, c, d};
    const unsigned char *p = (const unsigned char *)v;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof v; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void add(struct gg_features *f, enum tag t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    if (f->n < GG_FEATURES_MAX)
        f->v[f->n++] = fnv1a(t, a, b, c, d);
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static int bits_of(int64_t x)
{
    return x > 0 ? 64 - __builtin_clzll((unsigned long long)x) : 0;
}

/* Offsets below 2^24 share a bucket per 8 bits; above, every bit length is its own. */
static int offset_bucket(int bits)
{
    return bits < 24 ? bits / 8 : bits;
}

static int64_t bucket_of(int64_t v)
{
    return v <= 1 ? v : v <= 2 ? 2 : v <= 4 ? 3 : v <= 8 ? 4 : 5;
}

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* Largest element offset of a matrix block: base + (rows-1)·ld + cols - 1 (-1 when empty). */
static int64_t block_end(int64_t base, int64_t rows, int64_t cols, int64_t ld)
{
    return rows > 0 && cols > 0 ? base + (rows - 1) * ld + cols - 1 : -1;
}

/* The last group (expert) with tokens, or -1. */
static int64_t last_used(const struct gg_problem *p)
{
    for (int64_t g = p->groups - 1; g >= 0; g--)
        if (p->group_lens != NULL && p->group_lens[g] > 0)
            return g;
    return -1;
}

/* Largest element offset the kernel touches in operand which (0 A, 1 B, 2 C) of checked p. */
static int64_t touched(const struct gg_problem *p, int which)
{
    const int64_t m = p->m, n = p->n, k = p->k, last = last_used(p);
    const int64_t mats = p->op == GG_OP_BATCHED ? p->groups : 1;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD: {
        int fwd = p->op == GG_OP_GROUPED_FWD;
        if (which == 0)
            return block_end(0, m, fwd ? k : n, p->lda);
        if (which == 1)
            return last < 0 ? -1 : block_end(last * p->stride_b, n, k, p->ldb);
        return block_end(0, m, fwd ? n : k, p->ldc);
    }
    case GG_OP_GROUPED_WGRAD:
        if (which < 2)
            return block_end(0, m, which == 0 ? n : k, which == 0 ? p->lda : p->ldb);
        return p->groups > 0 ? block_end((p->groups - 1) * p->stride_c, n, k, p->ldc) : -1;
    case GG_OP_MOE_SORTED:
        if (which == 0)
            return block_end(0, m, k, p->lda);
        if (which == 1)
            return last < 0 ? -1 : block_end(last * p->stride_b, n, k, p->ldb);
        return block_end(0, m * p->topk, n, p->ldc);
    default: { /* batched and dense: every batch is used */
        int kn = p->op == GG_OP_BATCHED && p->b_layout == GG_LAYOUT_KN;
        if (which == 0)
            return block_end((mats - 1) * p->stride_a, m, k, p->lda);
        if (which == 1)
            return block_end((mats - 1) * p->stride_b, kn ? k : n, kn ? n : k, p->ldb);
        return block_end((mats - 1) * p->stride_c, m, n, p->ldc);
    }
    }
}

/* Group pattern: empty groups first, last, inside, all, two in a row; count bucket. */
static void group_features(const struct gg_problem *p, int64_t tile_m, struct gg_features *f)
{
    int64_t g_n = p->groups, empty = 0, last = -1;
    unsigned pattern = 0, classes = 0;
    for (int64_t g = 0; g < g_n; g++) {
        int64_t len = p->group_lens[g];
        if (len == 0) {
            empty++;
            pattern |= g == 0 ? 1u : g == g_n - 1 ? 2u : 4u;
            if (g > 0 && p->group_lens[g - 1] == 0)
                pattern |= 16u;
        } else {
            last = g;
        }
        classes |= 1u << residue(len, tile_m);
    }
    if (g_n > 0 && empty == g_n)
        pattern |= 8u;
    add(f, F_GROUPS, pattern, bits_of(g_n), 0, 0);
    for (int r = RES_ZERO; r <= RES_TAIL; r++)
        if (classes & (1u << r))
            add(f, F_RES_M, r, 0, 0, 0);
    if (last >= 0)
        add(f, F_RES_M_LAST, residue(p->group_lens[last], tile_m), 0, 0, 0);
}

/* Offset buckets of the largest element and byte offsets touched; returns the bit length. */
static int offset_features(const struct gg_problem *p, struct gg_features *f)
{
    const enum gg_dtype types[3] = {p->a_dtype, p->b_dtype, p->c_dtype};
    int elem_bits = 0, byte_bits = 0;
    for (int w = 0; w < 3; w++) {
        int64_t off = touched(p, w);
        if (off < 0)
            continue;
        int e = bits_of(off), b = bits_of(gg_dtype_bytes(types[w], off + 1) - 1);
        elem_bits = e > elem_bits ? e : elem_bits;
        byte_bits = b > byte_bits ? b : byte_bits;
    }
    add(f, F_OFFS_ELEM, offset_bucket(elem_bits), 0, 0, 0);
    add(f, F_OFFS_BYTE, offset_bucket(byte_bits), 0, 0, 0);
    return elem_bits > byte_bits ? elem_bits : byte_bits;
}

static void case_features(const struct gg_case *c, const struct gg_problem *p,
                          const struct gg_kernel *k, struct gg_features *f)
{
    const int64_t tm = k && k->tile_m > 0 ? k->tile_m : 64;
    const int64_t tn = k && k->tile_n > 0 ? k->tile_n : 64;
    const int64_t tk = k && k->tile_k > 0 ? k->tile_k : 128;
    add(f, F_TYPES, c->op, c->a_dtype * 16 + c->b_dtype, c->c_dtype * 16 + c->bias_dtype,
        c->scaling * 4 + (c->op == GG_OP_BATCHED ? c->b_layout : 0));
    add(f, F_RES_N, residue(c->n, tn), 0, 0, 0);
    add(f, F_RES_K, residue(c->k, tk), 0, 0, 0);
    if (is_grouped(c->op) || c->op == GG_OP_MOE_SORTED)
        group_features(p, c->op == GG_OP_MOE_SORTED ? c->block_m : tm, f);
    else
        add(f, F_RES_M, residue(c->m, tm), bits_of(c->groups), 0, 0);
    if (c->op == GG_OP_MOE_SORTED)
        add(f, F_MOE, c->topk, residue(c->m, tm), bits_of(c->block_m), 0);
    add(f, F_OPTS, bucket_of(gg_kopt_get(p, "split_k", 1)), bucket_of(gg_kopt_get(p, "streams", 0)),
        bucket_of(gg_kopt_get(p, "workers", 0)) * 4 + (gg_kopt_get(p, "lens_from", 0) != 0),
        gg_kopt_get(p, "threshold", -1) >= 0);
    add(f, F_DATA, c->dist_a.kind * 16 + c->dist_b.kind, c->plant_e8m0 > 0,
        c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B ? 1 + (int)c->mx_rule : 0,
        c->bias_dtype != GG_DTYPE_NONE ? (int64_t)c->dist_bias.kind : -1);
    f->offset_bits = offset_features(p, f);
    unsigned edges[GG_FREEDOMS_MAX];
    if (gg_freedoms_of_case(c, edges) == 0)
        for (int i = 0; i < gg_n_freedoms; i++)
            if (edges[i] & GG_EDGES_LAYOUT & ~GG_EDGE_BIT(GG_EDGE_PACKED))
                add(f, F_LAYOUT, i, edges[i] & GG_EDGES_LAYOUT, 0, 0);
}

void gg_case_features(const struct gg_case *c, const struct gg_kernel *k,
                      const struct gg_run_result *r, struct gg_features *f)
{
    memset(f, 0, sizeof *f);
    f->snr_margin_db = INFINITY;
    if (r != NULL && r->verdict.worst_group >= 0 && !isnan(r->verdict.worst_snr_db))
        f->snr_margin_db = r->verdict.worst_snr_db - r->verdict.snr_fail_db;
    /* The problem with its defaults filled; a case whose sizes were not expanded yet is
       expanded in a copy. */
    struct gg_case copy;
    const struct gg_case *src = c;
    gg_case_init(&copy);
    char err[256];
    if ((is_grouped(c->op) || c->op == GG_OP_MOE_SORTED) && c->lens == NULL) {
        if (gg_case_copy(&copy, c) != GG_OK || gg_case_expand(&copy, err, sizeof err) != GG_OK) {
            gg_case_free(&copy);
            return;
        }
        src = &copy;
    }
    struct gg_tensors t;
    if (gg_tensors_shape(src, &t, err, sizeof err) == GG_OK) /* geometry only: no routing */
        case_features(src, &t.p, k, f);
    gg_tensors_free(&t);
    gg_case_free(&copy);
    qsort(f->v, (size_t)f->n, sizeof f->v[0], cmp_u32);
    int n = 0;
    for (int i = 0; i < f->n; i++)
        if (n == 0 || f->v[i] != f->v[n - 1])
            f->v[n++] = f->v[i];
    f->n = n;
}

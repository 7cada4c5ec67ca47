/*
 * gg_freedoms.c — the freedoms the kernel ABI gives a caller, in one table: per op, the leading
 * dimension, the stride and the offset of each operand (B in each layout of batched), and the
 * group sizes; the edge classes a case puts each of them in; values drawn in a class, for the
 * generator and the mutator; the probe of the classes a kernel's supports() takes; and a
 * campaign's tally of the classes its cases ran, with the line fuzzer_stats keeps of it.
 *
 * What the table leaves out, because neither the ABI nor the case model lets a caller choose
 * it: the scale tensors are packed by recipe (gg_kernel.h gives them no leading dimension,
 * stride or offset), and so is the bias ([mats][N]; present or NULL by bias_dtype, which the
 * configurations draw); the group arrays, sorted_ids and expert_ids come from the harness
 * packed, and the workspace is sized by the kernel. An operand's offset is invisible to
 * supports() (a problem holds no pointer): a kernel must take every element-aligned pointer,
 * so offsets are never probed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen_int.h"

/* Reach (elements or bytes) from which a freedom's offset is huge. */
#define HUGE_REACH ((int64_t)1 << 31)
/* Pads of the two padded classes, in elements. */
#define PAD_SMALL_MAX 63
#define UNIFORM_PAD_MAX 256
#define UNIFORM_OFFSET_MAX 63

#define ANY (-1)
#define ROW(op, lay, w, fld, r, l, s, name, what)                                                \
    {name, op, lay, w, fld, GG_DIM_##r, GG_DIM_##l, s, what}
#define LD(op, lay, w, r, l, s, name, what) ROW(op, lay, w, GG_FIELD_LD, r, l, s, name, what)
#define STRIDE(op, lay, w, r, l, name, what) ROW(op, lay, w, GG_FIELD_STRIDE, r, l, 1, name, what)
#define OFFSET(op, lay, w, r, l, s, name, what)                                                   \
    ROW(op, lay, w, GG_FIELD_OFFSET, r, l, s, name, what)
#define GROUPS(op, name, what) ROW(op, ANY, -1, GG_FIELD_GROUPS, M, M, 0, name, what)

#define FWD GG_OP_GROUPED_FWD
#define DGRAD GG_OP_GROUPED_DGRAD
#define WGRAD GG_OP_GROUPED_WGRAD
#define BATCHED GG_OP_BATCHED
#define DENSE GG_OP_DENSE
#define MOE GG_OP_MOE_SORTED
#define NK GG_LAYOUT_NK
#define KN GG_LAYOUT_KN

/*
 * The addressing table of gg_kernel.h, one row per freedom. Within an op: leading dimensions,
 * then strides (whose packed value is rows x ld), then offsets, then the group sizes.
 */
const struct gg_freedom gg_freedoms[] = {
    LD(FWD, ANY, 0, M, K, 0, "grouped_fwd.lda", "X [M,K]"),
    LD(FWD, ANY, 1, N, K, 1, "grouped_fwd.ldb", "W [G,N,K]"),
    LD(FWD, ANY, 2, M, N, 0, "grouped_fwd.ldc", "Y [M,N]"),
    STRIDE(FWD, ANY, 1, N, K, "grouped_fwd.stride_b", "W [G,N,K]: W_g at g x stride_b"),
    OFFSET(FWD, ANY, 0, M, K, 0, "grouped_fwd.off_a", "X"),
    OFFSET(FWD, ANY, 1, N, K, 1, "grouped_fwd.off_b", "W"),
    OFFSET(FWD, ANY, 2, M, N, 0, "grouped_fwd.off_c", "Y"),
    GROUPS(FWD, "grouped_fwd.group_lens", "rows per group"),

    LD(DGRAD, ANY, 0, M, N, 0, "grouped_dgrad.lda", "dY [M,N]"),
    LD(DGRAD, ANY, 1, N, K, 1, "grouped_dgrad.ldb", "W [G,N,K]"),
    LD(DGRAD, ANY, 2, M, K, 0, "grouped_dgrad.ldc", "dX [M,K]"),
    STRIDE(DGRAD, ANY, 1, N, K, "grouped_dgrad.stride_b", "W [G,N,K]: W_g at g x stride_b"),
    OFFSET(DGRAD, ANY, 0, M, N, 0, "grouped_dgrad.off_a", "dY"),
    OFFSET(DGRAD, ANY, 1, N, K, 1, "grouped_dgrad.off_b", "W"),
    OFFSET(DGRAD, ANY, 2, M, K, 0, "grouped_dgrad.off_c", "dX"),
    GROUPS(DGRAD, "grouped_dgrad.group_lens", "rows per group"),

    LD(WGRAD, ANY, 0, M, N, 0, "grouped_wgrad.lda", "dY [M,N]"),
    LD(WGRAD, ANY, 1, M, K, 0, "grouped_wgrad.ldb", "X [M,K]"),
    LD(WGRAD, ANY, 2, N, K, 1, "grouped_wgrad.ldc", "dW [G,N,K]"),
    STRIDE(WGRAD, ANY, 2, N, K, "grouped_wgrad.stride_c", "dW [G,N,K]: dW_g at g x stride_c"),
    OFFSET(WGRAD, ANY, 0, M, N, 0, "grouped_wgrad.off_a", "dY"),
    OFFSET(WGRAD, ANY, 1, M, K, 0, "grouped_wgrad.off_b", "X"),
    OFFSET(WGRAD, ANY, 2, N, K, 1, "grouped_wgrad.off_c", "dW"),
    GROUPS(WGRAD, "grouped_wgrad.group_lens", "rows per group (the reduction of dW_g)"),

    LD(BATCHED, ANY, 0, M, K, 1, "batched.lda", "A [B,M,K]"),
    LD(BATCHED, NK, 1, N, K, 1, "batched.ldb", "B [B,N,K]"),
    LD(BATCHED, KN, 1, K, N, 1, "batched.ldb_kn", "B [B,K,N]"),
    LD(BATCHED, ANY, 2, M, N, 1, "batched.ldc", "C [B,M,N]"),
    STRIDE(BATCHED, ANY, 0, M, K, "batched.stride_a", "A: A_b at b x stride_a"),
    STRIDE(BATCHED, NK, 1, N, K, "batched.stride_b", "B [B,N,K]: B_b at b x stride_b"),
    STRIDE(BATCHED, KN, 1, K, N, "batched.stride_b_kn", "B [B,K,N]: B_b at b x stride_b"),
    STRIDE(BATCHED, ANY, 2, M, N, "batched.stride_c", "C: C_b at b x stride_c"),
    OFFSET(BATCHED, ANY, 0, M, K, 1, "batched.off_a", "A"),
    OFFSET(BATCHED, NK, 1, N, K, 1, "batched.off_b", "B [B,N,K]"),
    OFFSET(BATCHED, KN, 1, K, N, 1, "batched.off_b_kn", "B [B,K,N]"),
    OFFSET(BATCHED, ANY, 2, M, N, 1, "batched.off_c", "C"),

    LD(DENSE, ANY, 0, M, K, 0, "dense.lda", "A [M,K]"),
    LD(DENSE, ANY, 1, N, K, 0, "dense.ldb", "B [N,K]"),
    LD(DENSE, ANY, 2, M, N, 0, "dense.ldc", "C [M,N]"),
    OFFSET(DENSE, ANY, 0, M, K, 0, "dense.off_a", "A"),
    OFFSET(DENSE, ANY, 1, N, K, 0, "dense.off_b", "B"),
    OFFSET(DENSE, ANY, 2, M, N, 0, "dense.off_c", "C"),

    LD(MOE, ANY, 0, M, K, 0, "moe_sorted.lda", "X [T,K]"),
    LD(MOE, ANY, 1, N, K, 1, "moe_sorted.ldb", "W [E,N,K]"),
    LD(MOE, ANY, 2, V, N, 0, "moe_sorted.ldc", "Y [T x topk,N]"),
    STRIDE(MOE, ANY, 1, N, K, "moe_sorted.stride_b", "W [E,N,K]: W_e at e x stride_b"),
    OFFSET(MOE, ANY, 0, M, K, 0, "moe_sorted.off_a", "X"),
    OFFSET(MOE, ANY, 1, N, K, 1, "moe_sorted.off_b", "W"),
    OFFSET(MOE, ANY, 2, V, N, 0, "moe_sorted.off_c", "Y"),
    GROUPS(MOE, "moe_sorted.group_lens", "tokens per expert"),
};
const int gg_n_freedoms = (int)(sizeof gg_freedoms / sizeof gg_freedoms[0]);
_Static_assert(sizeof gg_freedoms / sizeof gg_freedoms[0] <= GG_FREEDOMS_MAX,
               "GG_FREEDOMS_MAX holds the table");
_Static_assert(GG_EDGE_COUNT <= 32, "a class mask is an unsigned");

static const char *const EDGE_NAMES[GG_EDGE_COUNT] = {
    [GG_EDGE_PACKED] = "packed",         [GG_EDGE_PAD_SMALL] = "pad_small",
    [GG_EDGE_PAD_TILE] = "pad_tile",     [GG_EDGE_MIS1] = "mis1",
    [GG_EDGE_MIS2] = "mis2",             [GG_EDGE_MIS4] = "mis4",
    [GG_EDGE_MIS8] = "mis8",             [GG_EDGE_HUGE] = "huge",
    [GG_EDGE_NO_EMPTY] = "no_empty",     [GG_EDGE_EMPTY_FIRST] = "empty_first",
    [GG_EDGE_EMPTY_LAST] = "empty_last", [GG_EDGE_EMPTY_INSIDE] = "empty_inside",
    [GG_EDGE_ALL_EMPTY] = "all_empty",   [GG_EDGE_MANY] = "many"};

const char *gg_edge_name(enum gg_edge e)
{
    return (unsigned)e < GG_EDGE_COUNT ? EDGE_NAMES[e] : "unknown";
}

void gg_freedom_key(int i, char *buf, size_t len)
{
    snprintf(buf, len, "freedom_%s", gg_freedoms[i].name);
    for (char *p = buf; *p; p++)
        if (*p == '.')
            *p = '_';
}

static int is_layout(const struct gg_freedom *f)
{
    return f->field != GG_FIELD_GROUPS;
}

unsigned gg_freedom_edges(const struct gg_freedom *f, enum gg_dtype t)
{
    if (!is_layout(f))
        return GG_EDGES_GROUPS;
    unsigned e = GG_EDGE_BIT(GG_EDGE_PACKED);
    if (f->field != GG_FIELD_OFFSET)
        e |= GG_EDGE_BIT(GG_EDGE_PAD_SMALL) | GG_EDGE_BIT(GG_EDGE_PAD_TILE) |
             GG_EDGE_BIT(GG_EDGE_HUGE);
    /* A pitch or offset of whole elements lies off 16 bytes by at least the element's size. */
    int bits = gg_dtype_bits(t);
    for (int n = 1, edge = GG_EDGE_MIS1; n <= 8; n *= 2, edge++)
        if (bits <= 8 * n)
            e |= GG_EDGE_BIT(edge);
    return e;
}

/* The misalignment class of n elements of t (a pitch or an offset): MIS1..MIS8, or -1 when
   they fill whole 16-byte units or (e2m1) end within a byte. */
static int mis_edge(enum gg_dtype t, int64_t n)
{
    if (gg_dtype_bits(t) == 4 && n % 2 != 0)
        return -1;
    int64_t r = gg_dtype_bytes(t, n) & 15;
    if (r == 0)
        return -1;
    int64_t low = r & -r;
    return low == 1 ? GG_EDGE_MIS1 : low == 2 ? GG_EDGE_MIS2 : low == 4 ? GG_EDGE_MIS4
                                                                         : GG_EDGE_MIS8;
}

static int huge(enum gg_dtype t, int64_t reach)
{
    return reach >= HUGE_REACH || gg_dtype_bytes(t, reach) >= HUGE_REACH;
}

static int matches(const struct gg_freedom *f, enum gg_op op, enum gg_layout layout)
{
    return f->op == op && (f->layout == ANY || (enum gg_layout)f->layout == layout);
}

/* ---- the classes of a case ---------------------------------------------------------------- */

static int64_t dim_of_problem(const struct gg_problem *p, enum gg_dim d)
{
    return d == GG_DIM_M ? p->m : d == GG_DIM_N ? p->n : d == GG_DIM_K ? p->k : p->m * p->topk;
}

static enum gg_dtype dtype_of(enum gg_dtype a, enum gg_dtype b, enum gg_dtype c, int operand)
{
    return operand == 0 ? a : operand == 1 ? b : c;
}

/* The index of the last block of a strided operand that the kernel touches: the last group
   (expert) with rows for the weights of fwd, dgrad and moe, the last matrix otherwise. */
static int64_t last_block(const struct gg_problem *p, const struct gg_freedom *f)
{
    if (f->op == GG_OP_BATCHED || f->op == GG_OP_GROUPED_WGRAD)
        return p->groups - 1;
    for (int64_t g = p->groups - 1; g >= 0; g--)
        if (p->group_lens != NULL && p->group_lens[g] > 0)
            return g;
    return -1;
}

static unsigned group_edges(const struct gg_problem *p)
{
    int64_t n = p->groups, empty = 0;
    unsigned e = n >= 64 ? GG_EDGE_BIT(GG_EDGE_MANY) : 0;
    for (int64_t g = 0; g < n && p->group_lens != NULL; g++) {
        if (p->group_lens[g] != 0)
            continue;
        empty++;
        e |= GG_EDGE_BIT(g == 0 ? GG_EDGE_EMPTY_FIRST : g == n - 1 ? GG_EDGE_EMPTY_LAST
                                                                    : GG_EDGE_EMPTY_INSIDE);
    }
    if (n > 0 && empty == n)
        return GG_EDGE_BIT(GG_EDGE_ALL_EMPTY) | (e & GG_EDGE_BIT(GG_EDGE_MANY));
    return empty == 0 ? e | GG_EDGE_BIT(GG_EDGE_NO_EMPTY) : e;
}

/* The classes of freedom f in checked problem p (defaults filled) of case c. */
static unsigned edges_of(const struct gg_case *c, const struct gg_problem *p,
                         const struct gg_freedom *f)
{
    if (!is_layout(f))
        return group_edges(p);
    enum gg_dtype t = dtype_of(p->a_dtype, p->b_dtype, p->c_dtype, f->operand);
    const int64_t ld[3] = {p->lda, p->ldb, p->ldc};
    const int64_t stride[3] = {p->stride_a, p->stride_b, p->stride_c};
    const int64_t off[3] = {c->off_a, c->off_b, c->off_c};
    int64_t rows = dim_of_problem(p, f->rows), len = dim_of_problem(p, f->len);
    if (f->field == GG_FIELD_OFFSET) {
        int mis = mis_edge(t, off[f->operand]);
        return GG_EDGE_BIT(mis < 0 ? GG_EDGE_PACKED : mis);
    }
    int64_t v, packed, reach;
    if (f->field == GG_FIELD_LD) {
        v = ld[f->operand];
        packed = len;
        reach = rows > 1 ? gg_size_mul(rows - 1, v) : 0;
    } else {
        v = stride[f->operand];
        packed = gg_size_mul(rows, ld[f->operand]);
        int64_t last = last_block(p, f);
        reach = last > 0 ? gg_size_mul(last, v) : 0;
    }
    unsigned e = huge(t, reach) ? GG_EDGE_BIT(GG_EDGE_HUGE) : 0;
    if (v == packed)
        return e | GG_EDGE_BIT(GG_EDGE_PACKED);
    int64_t pad = v - packed;
    if (pad >= 1 && pad <= PAD_SMALL_MAX)
        e |= GG_EDGE_BIT(GG_EDGE_PAD_SMALL);
    else if (pad > PAD_SMALL_MAX && !(e & GG_EDGE_BIT(GG_EDGE_HUGE)))
        e |= GG_EDGE_BIT(GG_EDGE_PAD_TILE);
    int mis = mis_edge(t, v);
    return mis < 0 ? e : e | GG_EDGE_BIT(mis);
}

int gg_freedoms_of_case(const struct gg_case *c, unsigned edges[GG_FREEDOMS_MAX])
{
    memset(edges, 0, GG_FREEDOMS_MAX * sizeof *edges);
    struct gg_case copy;
    const struct gg_case *src = c;
    gg_case_init(&copy);
    char err[256];
    int items = gen_is_grouped(c->op) || c->op == GG_OP_MOE_SORTED;
    if (items && c->lens == NULL) {
        if (gg_case_copy(&copy, c) != GG_OK || gg_case_expand(&copy, err, sizeof err) != GG_OK) {
            gg_case_free(&copy);
            return -1;
        }
        src = &copy;
    }
    struct gg_tensors t;
    int rc = gg_tensors_shape(src, &t, err, sizeof err) == GG_OK ? 0 : -1;
    for (int i = 0; i < gg_n_freedoms && rc == 0; i++)
        if (matches(&gg_freedoms[i], src->op, src->b_layout))
            edges[i] = edges_of(src, &t.p, &gg_freedoms[i]);
    gg_tensors_free(&t);
    gg_case_free(&copy);
    return rc;
}

/* ---- values in a class -------------------------------------------------------------------- */

/* The case's field for freedom f. */
static int64_t *field_of(struct gg_case *c, const struct gg_freedom *f)
{
    int64_t *const ld[3] = {&c->lda, &c->ldb, &c->ldc};
    int64_t *const stride[3] = {&c->stride_a, &c->stride_b, &c->stride_c};
    int64_t *const off[3] = {&c->off_a, &c->off_b, &c->off_c};
    return f->field == GG_FIELD_LD ? ld[f->operand]
           : f->field == GG_FIELD_STRIDE ? stride[f->operand]
                                         : off[f->operand];
}

/* A dimension from the case being built (M of a grouped op: its rows, random items at most). */
static int64_t dim_of_case(const struct gg_case *c, enum gg_dim d)
{
    if (d == GG_DIM_N)
        return c->n;
    if (d == GG_DIM_K)
        return c->k;
    if (d == GG_DIM_V)
        return c->m * c->topk;
    if (!gen_is_grouped(c->op))
        return c->m;
    int64_t rows = 0;
    for (int i = 0; i < c->n_items; i++)
        rows += (c->items[i].is_rand ? c->items[i].hi : c->items[i].value) * c->items[i].repeat;
    return rows;
}

/* The row of the same op, layout and operand with field fld, or -1. */
static int sibling(int i, enum gg_field fld)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    for (int j = 0; j < gg_n_freedoms; j++) {
        const struct gg_freedom *s = &gg_freedoms[j];
        if (s->op == f->op && s->layout == f->layout && s->operand == f->operand &&
            s->field == fld)
            return j;
    }
    return -1;
}

/* The leading dimension an operand has in case c (its packed value when 0). */
static int64_t ld_in_case(struct gg_case *c, int i)
{
    int l = sibling(i, GG_FIELD_LD);
    int64_t v = l >= 0 ? *field_of(c, &gg_freedoms[l]) : 0;
    return v != 0 ? v : dim_of_case(c, gg_freedoms[i].len);
}

/* The packed value of freedom i in case c: the row length, rows x ld, or offset 0. */
static int64_t packed_in_case(struct gg_case *c, int i)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    if (f->field == GG_FIELD_LD)
        return dim_of_case(c, f->len);
    if (f->field == GG_FIELD_STRIDE)
        return gg_size_mul(dim_of_case(c, f->rows), ld_in_case(c, i));
    return 0;
}

/* A pad p in 1..PAD_SMALL_MAX, drawn from a random start, with base + p in class e (MIS*) or a
   whole number of 16-byte units past base (e = PACKED): -1 when none is. pair: p even. */
static int64_t search_pad(struct gen *g, enum gg_dtype t, int64_t base, int e, int pair)
{
    int64_t start = gen_range(&g->r, 1, PAD_SMALL_MAX);
    for (int64_t j = 0; j < PAD_SMALL_MAX; j++) {
        int64_t p = 1 + (start - 1 + j) % PAD_SMALL_MAX;
        if (pair && p % 2 != 0)
            continue;
        int mis = mis_edge(t, base + p);
        if (mis == e || (e == GG_EDGE_PACKED && mis < 0 && (!pair || (base + p) % 2 == 0)))
            return p;
    }
    return -1;
}

/* A pad of class e (PAD_SMALL, PAD_TILE, MIS*) past base for type t; -1 when none exists. */
static int64_t draw_pad(struct gen *g, enum gg_dtype t, int64_t base, enum gg_edge e)
{
    static const int64_t TILE_PADS[] = {64, 96, 128, 256};
    int pair = gg_dtype_bits(t) == 4; /* e2m1: rows and matrices start on a byte */
    if (e == GG_EDGE_PAD_TILE)
        return gen_pick(&g->r, TILE_PADS, 4);
    if (e != GG_EDGE_PAD_SMALL)
        return search_pad(g, t, base, e, pair);
    int64_t unit = pair ? 2 : 1;
    switch (gen_range(&g->r, 0, 2)) {
    case 0: /* one element */
        return unit;
    case 1: /* an odd count */
        return unit * (2 * gen_range(&g->r, 1, 7) + 1);
    default: { /* to the next 16 bytes */
        int64_t p = search_pad(g, t, base, GG_EDGE_PACKED, pair);
        return p > 0 ? p : unit;
    }
    }
}

/* A value of freedom f reaching 2^31 elements from rows (ld) or blocks (stride) of it: only the
   capability probe sets it, to ask supports() about huge values. */
static int64_t huge_value(struct gg_case *c, int i)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    int64_t span = f->field == GG_FIELD_LD ? dim_of_case(c, f->rows) - 1 : c->groups - 1;
    int64_t v = (HUGE_REACH + (span > 1 ? span : 1) - 1) / (span > 1 ? span : 1);
    v = (v + 63) / 64 * 64;
    int64_t packed = packed_in_case(c, i);
    return v > packed ? v : packed + 64;
}

int gen_freedom_set(struct gen *g, struct gg_case *c, int i, enum gg_edge e)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    if (!is_layout(f) || !matches(f, c->op, c->b_layout))
        return -1;
    enum gg_dtype t = dtype_of(c->a_dtype, c->b_dtype, c->c_dtype, f->operand);
    int64_t *v = field_of(c, f), base = packed_in_case(c, i), nv = 0;
    if (e == GG_EDGE_HUGE) {
        nv = huge_value(c, i);
    } else if (e != GG_EDGE_PACKED) {
        int64_t pad = draw_pad(g, t, base, e);
        if (pad < 0)
            return -1;
        nv = base + pad;
    }
    if (f->field == GG_FIELD_LD) {
        /* An explicit stride keeps its pad over the operand's matrices. */
        int s = sibling(i, GG_FIELD_STRIDE);
        int64_t *sv = s >= 0 ? field_of(c, &gg_freedoms[s]) : NULL;
        if (sv != NULL && *sv != 0) {
            int64_t rows = dim_of_case(c, f->rows), old = ld_in_case(c, i);
            *sv += rows * ((nv != 0 ? nv : base) - old);
        }
    }
    *v = nv;
    return 0;
}

unsigned gen_freedom_moves(const struct gen *g, const struct gg_case *c, int i)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    if (!is_layout(f) || !matches(f, c->op, c->b_layout))
        return 0;
    enum gg_dtype t = dtype_of(c->a_dtype, c->b_dtype, c->c_dtype, f->operand);
    unsigned e = gg_freedom_edges(f, t) & ~GG_EDGE_BIT(GG_EDGE_HUGE);
    if (g->conf != NULL)
        e &= g->conf->freedom_ok[i];
    return e | GG_EDGE_BIT(GG_EDGE_PACKED);
}

/* One class of mask, drawn uniformly. */
static enum gg_edge pick_edge(struct gen *g, unsigned mask)
{
    int pick = (int)gen_range(&g->r, 0, __builtin_popcount(mask) - 1), e = 0;
    for (; e < GG_EDGE_COUNT; e++)
        if ((mask & GG_EDGE_BIT(e)) && pick-- == 0)
            break;
    return (enum gg_edge)e;
}

/* An untargeted value: ld and stride up to UNIFORM_PAD_MAX past packed, offsets up to
   UNIFORM_OFFSET_MAX (even for e2m1, whose rows start on a byte). */
static void uniform_value(struct gen *g, struct gg_case *c, int i)
{
    const struct gg_freedom *f = &gg_freedoms[i];
    enum gg_dtype t = dtype_of(c->a_dtype, c->b_dtype, c->c_dtype, f->operand);
    int64_t unit = gg_dtype_bits(t) == 4 ? 2 : 1;
    int64_t x = unit * gen_range(&g->r, 0, (f->field == GG_FIELD_OFFSET ? UNIFORM_OFFSET_MAX
                                                                         : UNIFORM_PAD_MAX) / unit);
    if (f->field == GG_FIELD_OFFSET) {
        *field_of(c, f) = x;
        return;
    }
    int64_t base = packed_in_case(c, i);
    if (f->field == GG_FIELD_LD && (base + x) % unit != 0)
        x += 1;
    int s = f->field == GG_FIELD_LD ? sibling(i, GG_FIELD_STRIDE) : -1;
    if (s >= 0 && *field_of(c, &gg_freedoms[s]) != 0) /* keep the stride's pad */
        *field_of(c, &gg_freedoms[s]) += dim_of_case(c, f->rows) * x;
    *field_of(c, f) = x > 0 ? base + x : 0;
}

void gen_freedoms_draw(struct gen *g, struct gg_case *c, int uniform)
{
    if (g->conf == NULL || !gen_chance(&g->r, 0.5))
        return;
    for (int i = 0; i < gg_n_freedoms; i++) {
        const struct gg_freedom *f = &gg_freedoms[i];
        if (!is_layout(f) || !matches(f, c->op, c->b_layout) || !gen_chance(&g->r, 2.0 / 3))
            continue;
        if (*field_of(c, f) != 0)
            continue; /* the strategy chose it */
        unsigned moves = gen_freedom_moves(g, c, i) & ~GG_EDGE_BIT(GG_EDGE_PACKED);
        if (moves == 0)
            continue; /* the kernel takes this freedom packed only */
        if (uniform)
            uniform_value(g, c, i);
        else
            gen_freedom_set(g, c, i, pick_edge(g, moves));
    }
}

int gen_freedom_move(struct gen *g, struct gg_case *c)
{
    unsigned now[GG_FREEDOMS_MAX];
    int can[GG_FREEDOMS_MAX], n = 0;
    if (gg_freedoms_of_case(c, now) != 0)
        return -1;
    for (int i = 0; i < gg_n_freedoms; i++)
        if (gen_freedom_moves(g, c, i) & ~now[i])
            can[n++] = i;
    if (n == 0)
        return -1;
    int i = can[gen_range(&g->r, 0, n - 1)];
    return gen_freedom_set(g, c, i, pick_edge(g, gen_freedom_moves(g, c, i) & ~now[i]));
}

void gen_freedoms_probe(struct gen *g, struct gg_case *c, struct gen_config *k, int64_t m)
{
    memset(k->freedom_ok, 0, sizeof k->freedom_ok);
    for (int i = 0; i < gg_n_freedoms && !g->died && !g->nomem; i++) {
        const struct gg_freedom *f = &gg_freedoms[i];
        if (!matches(f, k->op, k->layout))
            continue;
        unsigned edges = gg_freedom_edges(f, dtype_of(k->a, k->b, k->c, f->operand));
        if (f->field == GG_FIELD_OFFSET || f->field == GG_FIELD_GROUPS) {
            k->freedom_ok[i] = edges;
            continue;
        }
        k->freedom_ok[i] = GG_EDGE_BIT(GG_EDGE_PACKED);
        for (int e = GG_EDGE_PACKED + 1; e < GG_EDGE_COUNT; e++) {
            if (!(edges & GG_EDGE_BIT(e)))
                continue;
            gen_probe_shape(g, c, k, m);
            if (gen_freedom_set(g, c, i, (enum gg_edge)e) == 0 && gen_admit(g, c, 0))
                k->freedom_ok[i] |= GG_EDGE_BIT(e);
        }
    }
}

/* ---- a campaign's tally ------------------------------------------------------------------- */

void gg_freedom_tally_init(struct gg_freedom_tally *t, const struct gg_gen_caps *caps)
{
    memset(t, 0, sizeof *t);
    for (int j = 0; caps != NULL && j < caps->n; j++) {
        const struct gen_config *k = &caps->v[j];
        for (int i = 0; i < gg_n_freedoms; i++) {
            const struct gg_freedom *f = &gg_freedoms[i];
            if (!matches(f, k->op, k->layout))
                continue;
            unsigned e = gg_freedom_edges(f, dtype_of(k->a, k->b, k->c, f->operand));
            t->edges[i] |= e;
            t->accepted[i] |= e & k->freedom_ok[i];
        }
    }
}

void gg_freedom_tally_add(struct gg_freedom_tally *t, const struct gg_case *c)
{
    unsigned edges[GG_FREEDOMS_MAX];
    if (gg_freedoms_of_case(c, edges) != 0)
        return;
    for (int i = 0; i < gg_n_freedoms; i++)
        for (int e = 0; e < GG_EDGE_COUNT; e++)
            t->ran[i][e] += (edges[i] >> e) & 1u;
}

void gg_freedom_cells(const struct gg_freedom_tally *t, int i, int64_t cells[GG_EDGE_COUNT])
{
    for (int e = 0; e < GG_EDGE_COUNT; e++) {
        unsigned bit = GG_EDGE_BIT(e);
        cells[e] = t->ran[i][e] > 0 ? t->ran[i][e]
                   : !(t->edges[i] & bit) ? GG_FREEDOM_ABSENT
                   : !(t->accepted[i] & bit) ? GG_FREEDOM_REFUSED
                                             : 0;
    }
}

void gg_freedom_cells_format(const int64_t cells[GG_EDGE_COUNT], char *buf, size_t len)
{
    size_t used = 0;
    if (len > 0)
        buf[0] = '\0';
    for (int e = 0; e < GG_EDGE_COUNT && used < len; e++) {
        if (cells[e] == GG_FREEDOM_ABSENT)
            continue;
        int n = cells[e] == GG_FREEDOM_REFUSED
                    ? snprintf(buf + used, len - used, "%s%s=refused", used ? " " : "",
                               EDGE_NAMES[e])
                    : snprintf(buf + used, len - used, "%s%s=%lld", used ? " " : "",
                               EDGE_NAMES[e], (long long)cells[e]);
        used += n > 0 ? (size_t)n : 0;
    }
}

int gg_freedom_cells_parse(const char *text, int64_t cells[GG_EDGE_COUNT])
{
    for (int e = 0; e < GG_EDGE_COUNT; e++)
        cells[e] = GG_FREEDOM_ABSENT;
    for (const char *s = text; *s;) {
        s += strspn(s, " \t");
        if (*s == '\0')
            break;
        size_t word = strcspn(s, " \t"), name = strcspn(s, "=");
        if (name >= word)
            return -1;
        const char *value = s + name + 1;
        size_t vlen = word - name - 1;
        int e = 0;
        while (e < GG_EDGE_COUNT && !(strlen(EDGE_NAMES[e]) == name &&
                                      strncmp(EDGE_NAMES[e], s, name) == 0))
            e++;
        if (vlen == 7 && strncmp(value, "refused", 7) == 0) {
            if (e < GG_EDGE_COUNT)
                cells[e] = GG_FREEDOM_REFUSED;
        } else {
            char *end;
            long long n = strtoll(value, &end, 10);
            if (vlen == 0 || end != value + vlen || n < 0)
                return -1;
            if (e < GG_EDGE_COUNT) /* a class of a later version: left out */
                cells[e] = n;
        }
        s += word;
    }
    return 0;
}

int gg_freedom_cells_fold(const char *a, const char *b, char *out, size_t len)
{
    int64_t x[GG_EDGE_COUNT], y[GG_EDGE_COUNT];
    if (gg_freedom_cells_parse(a, x) != 0 || gg_freedom_cells_parse(b, y) != 0)
        return -1;
    for (int e = 0; e < GG_EDGE_COUNT; e++)
        x[e] = x[e] < 0 && y[e] < 0 ? (x[e] > y[e] ? x[e] : y[e])
               : (x[e] > 0 ? x[e] : 0) + (y[e] > 0 ? y[e] : 0);
    gg_freedom_cells_format(x, out, len);
    return 0;
}

void gg_freedom_sum_add(struct gg_freedom_sum *s, const int64_t cells[GG_EDGE_COUNT])
{
    for (int e = 0; e < GG_EDGE_COUNT; e++) {
        s->exercised += cells[e] > 0;
        s->never += cells[e] == 0;
        s->refused += cells[e] == GG_FREEDOM_REFUSED;
    }
}

int gg_freedom_list_add(char *buf, size_t len, const char *name,
                        const int64_t cells[GG_EDGE_COUNT], int64_t state)
{
    int n = 0;
    size_t used = strlen(buf);
    for (int e = 0; e < GG_EDGE_COUNT && used < len; e++) {
        if (cells[e] != state)
            continue;
        int w = n++ == 0 ? snprintf(buf + used, len - used, "%s%s %s", used ? "; " : "", name,
                                    EDGE_NAMES[e])
                         : snprintf(buf + used, len - used, " %s", EDGE_NAMES[e]);
        used += w > 0 ? (size_t)w : 0;
    }
    return n;
}

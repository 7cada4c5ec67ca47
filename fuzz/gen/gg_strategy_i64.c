/*
 * gg_strategy_i64.c — cases aimed at the `i64` class: an element or byte offset of an operand
 * passes 2^31 or 2^32 (counted in elements or in bytes, so fp8, bf16 and e2m1 cross at different
 * element offsets) while only a few groups hold tokens, so the case runs on an ordinary machine:
 * many experts with a late one holding tokens, an explicit stride of B (or A), a huge leading
 * dimension of A (or of X in wgrad) with enough rows before the last group, of B's few rows (the
 * weights of each expert, batch or the dense B), or of the few tokens of a moe_sorted X, or an
 * output whose few rows reach past the limit (a huge ldc, stride_c or offset of C).
 */
#include <stdlib.h>

#include "fuzz/gen/gg_gen_int.h"

enum i64_kind { I_EXPERTS, I_STRIDE, I_LD, I_OUTPUT, I_COUNT };

/* Tokens of a group that holds some: few, so the case stays cheap. */
static int64_t few_rows(struct gen *g)
{
    return gen_dim(g, g->tile_m, 64);
}

/* The target in elements of dtype t: 2^31 or 2^32 elements, or that many bytes. */
static int64_t target_elems(struct gen *g, enum gg_dtype t)
{
    int64_t target = (int64_t)1 << gen_range(&g->r, 31, 32);
    if (gen_chance(&g->r, 0.5))
        target = target * 8 / gg_dtype_bits(t);
    return target;
}

static int64_t ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

/* A power of two in [2^lo, 2^hi], sometimes a tile off it (straddling a power of two). */
static int64_t size_near_pow2(struct gen *g, int lo, int hi, int64_t tile)
{
    int64_t v = (int64_t)1 << gen_range(&g->r, lo, hi);
    if (gen_chance(&g->r, 0.3))
        v += gen_chance(&g->r, 0.5) ? tile : -(v < tile ? v : tile) / 2;
    return v;
}

/*
 * Many experts, tokens only in a late one (plus maybe expert 0) past the target: about 2^10 to
 * 2^14 experts of N·K = target / experts weights each, so neither the group arrays nor the
 * weights of one expert grow large.
 */
static void experts(struct gen *g, struct gg_case *c)
{
    int64_t t = target_elems(g, c->b_dtype);
    int64_t per = t >> gen_range(&g->r, 10, 14);
    c->n = size_near_pow2(g, 6, 10, g->tile_n);
    c->k = gen_fix_k(c, per / c->n > 1 ? per / c->n : 1);
    if (gen_chance(&g->r, 0.3))
        c->k = gen_fix_k(c, c->k + (gen_chance(&g->r, 0.5) ? g->tile_k : -c->k / 4));
    per = c->n * c->k;
    /* Expert `late` starts at late·N·K >= t, or straddles t. */
    int64_t late = gen_chance(&g->r, 0.75) ? ceil_div(t, per) : t / per;
    late += gen_range(&g->r, 0, 2);
    int64_t n = late + 1 + (gen_chance(&g->r, 0.3) ? gen_range(&g->r, 1, 3) : 0);
    int64_t *lens = calloc((size_t)n, sizeof *lens);
    if (lens == NULL) {
        g->nomem = 1;
        return;
    }
    lens[late] = gen_dim(g, g->tile_m, 32);
    if (gen_chance(&g->r, 0.3))
        lens[0] = gen_dim(g, g->tile_m, 32);
    gen_shape(g, c, lens, n);
    free(lens);
}

/* Two to four groups (or batches) of B an explicit stride apart, the last past the target. */
static void stride(struct gen *g, struct gg_case *c)
{
    gen_small_nk(g, c);
    int64_t lens[4], n = gen_range(&g->r, 2, 4);
    for (int64_t i = 0; i < n; i++)
        lens[i] = gen_chance(&g->r, 0.3) ? 0 : few_rows(g);
    lens[n - 1] = few_rows(g);
    gen_shape(g, c, lens, n);
    int on_a = c->op == GG_OP_BATCHED && gen_chance(&g->r, 0.5);
    int64_t t = target_elems(g, on_a ? c->a_dtype : c->b_dtype);
    int64_t s = ceil_div(t, c->groups - 1 > 0 ? c->groups - 1 : 1) + gen_range(&g->r, 0, 3) * 64;
    s = (s + 63) / 64 * 64; /* even for e2m1, aligned for every format */
    if (on_a)
        c->stride_a = s;
    else
        c->stride_b = s;
}

/* The first multiple of 64 at or above x (even for e2m1, 128-byte aligned for bf16). */
static int64_t round_up64(int64_t x)
{
    return (x + 63) / 64 * 64;
}

/* A leading dimension that puts the last of `rows` rows of a matrix at or past t elements. */
static int64_t ld_past(struct gen *g, int64_t t, int64_t rows, int64_t row_len)
{
    int64_t ld = round_up64(ceil_div(t, rows > 1 ? rows - 1 : 1)) + 64 * gen_range(&g->r, 0, 2);
    return ld > row_len ? ld : round_up64(row_len);
}

/*
 * A huge leading dimension of B, whose matrices have few rows: 2 to 8 rows of W_g (fwd, dgrad,
 * moe_sorted: a group or two with tokens), of B_b ([N,K] or [K,N]: 1 to 3 batches) or of the
 * dense B, the last one past the target. Each matrix then spans the target, so the weights of
 * the later groups lie further still (reserved, only their rows touched).
 */
static void weights_ld(struct gen *g, struct gg_case *c)
{
    int kn = c->op == GG_OP_BATCHED && c->b_layout == GG_LAYOUT_KN;
    int64_t rows = gen_range(&g->r, 2, 8);
    c->n = kn ? gen_dim(g, g->tile_n, 64) : rows;
    c->k = gen_fix_k(c, kn ? rows : gen_dim(g, g->tile_k, 64));
    rows = kn ? c->k : c->n; /* K of an E8M0 recipe is a whole block */
    int64_t lens[3], n = gen_range(&g->r, 1, 3);
    for (int64_t i = 0; i < n; i++)
        lens[i] = gen_is_grouped(c->op) && gen_chance(&g->r, 0.3) ? 0 : few_rows(g);
    lens[n - 1] = few_rows(g);
    gen_shape(g, c, lens, n);
    c->ldb = ld_past(g, target_elems(g, c->b_dtype), rows, kn ? c->n : c->k);
}

/* A huge leading dimension of a moe_sorted X: its few tokens (2 to 8) reach past the target. */
static void tokens_ld(struct gen *g, struct gg_case *c)
{
    c->n = gen_dim(g, g->tile_n, 64);
    c->k = gen_fix_k(c, gen_dim(g, g->tile_k, 64));
    int64_t lens[4], n = gen_range(&g->r, 1, 4), sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += lens[i] = gen_range(&g->r, 0, 8);
    lens[n - 1] += sum < 2 ? 2 : 0;
    gen_shape(g, c, lens, n);
    if (c->m < 2) { /* every entry its own token */
        c->m = c->m * c->topk;
        c->topk = 1;
    }
    c->lda = ld_past(g, target_elems(g, c->a_dtype), c->m, c->k);
}

/* A huge leading dimension of the row operand: rows before the last group reach the target.
   A third of the ops with rows of B put it on B instead (weights_ld), moe_sorted on the tokens
   of X or on B. */
static void leading(struct gen *g, struct gg_case *c)
{
    const unsigned b_rows = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                            GG_OP_BIT(GG_OP_MOE_SORTED) | GG_OP_BIT(GG_OP_BATCHED) |
                            GG_OP_BIT(GG_OP_DENSE);
    if ((b_rows & GG_OP_BIT(c->op)) &&
        (c->op == GG_OP_MOE_SORTED ? gen_chance(&g->r, 0.5) : gen_chance(&g->r, 1.0 / 3))) {
        weights_ld(g, c);
        return;
    }
    if (c->op == GG_OP_MOE_SORTED) {
        tokens_ld(g, c);
        return;
    }
    c->n = gen_dim(g, g->tile_n, 64);
    c->k = gen_fix_k(c, gen_dim(g, g->tile_k, 64));
    int x_of_wgrad = c->op == GG_OP_GROUPED_WGRAD && gen_chance(&g->r, 1.0 / 3);
    int64_t t = target_elems(g, x_of_wgrad ? c->b_dtype : c->a_dtype);
    int64_t row_len = c->op == GG_OP_GROUPED_FWD || x_of_wgrad ? c->k
                      : c->op == GG_OP_BATCHED || c->op == GG_OP_DENSE ? c->k
                                                                       : c->n;
    if (c->op == GG_OP_BATCHED || c->op == GG_OP_DENSE) {
        /* Rows of A: batch·M (batched, stride M·ld) or M (dense); the last row past t. A
           batched case puts the last row of the first batch past t one time in three: ld
           alone crosses it, not the batch stride. */
        int64_t lens[16], n = c->op == GG_OP_BATCHED ? gen_range(&g->r, 2, 16) : 1;
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_range(&g->r, 1, 16);
        lens[0] = lens[0] < 2 ? 2 : lens[0];
        gen_shape(g, c, lens, n);
        int within = c->op == GG_OP_BATCHED && c->m > 1 && gen_chance(&g->r, 1.0 / 3);
        int64_t rows = (c->op == GG_OP_BATCHED && !within ? c->groups : 1) * c->m;
        int64_t ld = ceil_div(t, rows > 1 ? rows - 1 : 1);
        c->lda = (ld > row_len ? ld : row_len + 2) + gen_range(&g->r, 0, 3) * 2;
        c->lda += c->lda & 1;
        return;
    }
    /* 2^24 to 2^27 elements: 16 to 256 rows before the last group reach the target. Each row
       of a leading dimension this large lies in pages (host) or granules (device) of its own,
       which a GPU kernel's buffers map one by one, so the fewer rows the cheaper the case;
       the last group's base passes the target all the same. */
    int64_t ld = (int64_t)1 << gen_range(&g->r, 24, 27);
    int64_t before = ceil_div(t, ld) + gen_range(&g->r, 0, 3), lens[8], n = 0;
    /* The rows before the last group, in one to three groups (an empty one between). */
    int64_t parts = gen_range(&g->r, 1, 3), left = before;
    for (int64_t i = 0; i < parts; i++) {
        int64_t r = i == parts - 1 ? left : gen_range(&g->r, 0, left);
        lens[n++] = r;
        left -= r;
        if (gen_chance(&g->r, 0.2))
            lens[n++] = 0;
    }
    lens[n++] = few_rows(g);
    gen_shape(g, c, lens, n);
    ld += gen_chance(&g->r, 0.3) ? 2 * gen_range(&g->r, 1, 8) : 0;
    if (ld < row_len)
        ld = row_len;
    if (x_of_wgrad)
        c->ldb = ld;
    else
        c->lda = ld;
}

/* Rows of C and its row length, after the shape is drawn (wgrad: per group, batched: per batch). */
static void output_geometry(const struct gg_case *c, int64_t *rows, int64_t *row_len)
{
    int64_t m = 0;
    for (int i = 0; i < c->n_items; i++)
        m += c->items[i].value * c->items[i].repeat;
    switch (c->op) {
    case GG_OP_GROUPED_FWD: *rows = m; *row_len = c->n; break;
    case GG_OP_GROUPED_DGRAD: *rows = m; *row_len = c->k; break;
    case GG_OP_GROUPED_WGRAD: *rows = c->n; *row_len = c->k; break;
    case GG_OP_MOE_SORTED: *rows = c->m * c->topk; *row_len = c->n; break;
    default: *rows = c->m; *row_len = c->n; break;
    }
}

/*
 * An output that reaches past the target with few rows written: the rows of C a huge ldc apart
 * (the last one past the target), or the last batch or dW_g a huge stride_c from the first. (An
 * offset of C in its allocation would not do: a kernel addresses C from the pointer it gets.)
 * The harness reserves C's span and touches only the pages of its rows. An output of one row
 * and one block (a GEMV) cannot reach far: the case aims at A's leading dimension instead.
 */
static void output(struct gen *g, struct gg_case *c)
{
    gen_small_nk(g, c);
    /* Each row of C far from the others costs a page and its protection: a handful of rows. */
    int64_t lens[4], n = gen_range(&g->r, 1, 4);
    for (int64_t i = 0; i < n; i++)
        lens[i] = gen_is_grouped(c->op) && gen_chance(&g->r, 0.3) ? 0 : gen_range(&g->r, 1, 8);
    lens[n - 1] = gen_range(&g->r, 1, 8);
    gen_shape(g, c, lens, n);
    if (c->op == GG_OP_GROUPED_WGRAD) /* dW_g has N rows */
        c->n = gen_range(&g->r, 1, 8);
    int64_t t = target_elems(g, c->c_dtype), rows, row_len;
    output_geometry(c, &rows, &row_len);
    int strided = (c->op == GG_OP_BATCHED || c->op == GG_OP_GROUPED_WGRAD) && c->groups > 1;
    if (rows < 2 && !strided) {
        leading(g, c);
        return;
    }
    if (rows >= 2 && (!strided || gen_chance(&g->r, 0.5))) {
        int64_t ld = round_up64(ceil_div(t, rows - 1)) + 64 * gen_range(&g->r, 0, 2);
        c->ldc = ld > row_len ? ld : round_up64(row_len);
    } else {
        c->stride_c = round_up64(ceil_div(t, c->groups - 1)) + 64 * gen_range(&g->r, 0, 2);
    }
}

void gen_strategy_i64(struct gen *g, struct gg_case *c)
{
    gen_use_config(g, c, ~0u);
    const unsigned experts_ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                                 GG_OP_BIT(GG_OP_MOE_SORTED);
    const unsigned stride_ops = experts_ops | GG_OP_BIT(GG_OP_BATCHED);
    const unsigned ld_ops = ~0u;
    unsigned kinds = ((experts_ops >> c->op) & 1u) << I_EXPERTS |
                     ((stride_ops >> c->op) & 1u) << I_STRIDE | ((ld_ops >> c->op) & 1u) << I_LD;
    /* An output past the limits one case in five: each of its far rows costs page tables and
       a protected gap, several times an input's. */
    int k = I_OUTPUT;
    if (!gen_chance(&g->r, 0.2)) {
        int pick = (int)gen_range(&g->r, 0, __builtin_popcount(kinds) - 1);
        for (k = 0; k < I_COUNT; k++)
            if ((kinds & (1u << k)) && pick-- == 0)
                break;
    }
    c->dist_a = gen_dist_plain(g);
    c->dist_b = gen_dist_plain(g);
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    gen_dispatch(g, c, 0.3, 4);
    if (k == I_EXPERTS)
        experts(g, c);
    else if (k == I_STRIDE)
        stride(g, c);
    else if (k == I_LD)
        leading(g, c);
    else
        output(g, c);
}

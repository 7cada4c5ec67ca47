/*
 * gg_case.c — the case model: defaults and ownership (init, free, copy), the semantic rules a
 * case must satisfy (gg_case_check), the expansion of the group-size spec into sizes and row
 * offsets (expert loads for moe_sorted), the mapping of a case onto the kernel's problem
 * descriptor, its one-line shape summary, metadata and op names.
 * Every message of gg_case_check() and gg_case_expand() starts with "KEY: ", KEY being the case
 * file key at fault; the parser relies on this to point at the right line.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/case/gg_case.h"

/* Largest value of one dimension: M, N, K, a group size, the batch count, M summed over groups. */
#define MAX_DIM ((int64_t)1 << 40)
/* Most groups of a grouped case: sizes and offsets are expanded into host arrays (16 MiB). */
#define MAX_GROUPS ((int64_t)1 << 20)


static enum gg_status fail(char *err, size_t err_len, enum gg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum gg_status fail(char *err, size_t err_len, enum gg_status st, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return st;
}

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* Ops with a group-size spec: the grouped ops (rows per group) and moe_sorted (expert loads). */
static int has_items(enum gg_op op)
{
    return is_grouped(op) || op == GG_OP_MOE_SORTED;
}

/* The default data recipe of every tensor: normal(0,1). */
static const struct gg_dist DEFAULT_DIST = {.kind = GG_DIST_NORMAL, .p = {0.0, 1.0, 0.0}};


void gg_case_init(struct gg_case *c)
{
    memset(c, 0, sizeof *c);
    c->op = GG_OP_GROUPED_FWD;
    c->a_dtype = c->b_dtype = c->c_dtype = GG_DTYPE_BF16;
    c->acc_dtype = GG_DTYPE_F32;
    c->scaling = GG_SCALING_NONE;
    c->mx_rule = GG_MX_RULE_CEIL;
    c->quant_sat = GG_SAT_FINITE;
    c->b_layout = GG_LAYOUT_NK;
    c->bias_dtype = GG_DTYPE_NONE;
    c->dist_a = DEFAULT_DIST;
    c->dist_a.fmt = GG_DTYPE_BF16;
    c->dist_b = c->dist_a;
    c->dist_bias = DEFAULT_DIST; /* fmt follows bias_dtype: none */
}

void gg_case_free(struct gg_case *c)
{
    free(c->items);
    free(c->lens);
    free(c->offs);
    for (int i = 0; i < c->n_meta; i++) {
        free(c->meta[i].key);
        free(c->meta[i].text);
    }
    free(c->meta);
    gg_case_init(c);
}

/* malloc'd copy of n elements of size sz (NULL for none); *ok = 0 when allocation failed. */
static void *dup_array(const void *src, size_t n, size_t sz, int *ok)
{
    if (src == NULL || n == 0)
        return NULL;
    void *p = malloc(n * sz);
    if (p == NULL)
        *ok = 0;
    else
        memcpy(p, src, n * sz);
    return p;
}

enum gg_status gg_case_copy(struct gg_case *dst, const struct gg_case *src)
{
    *dst = *src;
    dst->items = NULL;
    dst->lens = dst->offs = NULL;
    dst->meta = NULL;
    dst->n_meta = 0;
    int ok = 1;
    dst->items = dup_array(src->items, (size_t)src->n_items, sizeof *src->items, &ok);
    if (src->lens != NULL && has_items(src->op) && src->groups > 0) {
        dst->lens = dup_array(src->lens, (size_t)src->groups, sizeof *src->lens, &ok);
        dst->offs = dup_array(src->offs, (size_t)src->groups + 1, sizeof *src->offs, &ok);
    }
    for (int i = 0; ok && i < src->n_meta; i++)
        ok = gg_case_add_meta(dst, src->meta[i].key, src->meta[i].text, NULL, 0) == GG_OK;
    if (!ok) {
        gg_case_free(dst);
        return GG_E_NOMEM;
    }
    return GG_OK;
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Kernel and mutant names: printable ASCII without spaces or '#' (they are single tokens). */
static int name_ok(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~' || s[i] == '#')
            return 0;
    return 1;
}

/* Option keys: [a-z0-9_]+, shorter than the opt_key slot. */
static int opt_key_ok(const char *s)
{
    size_t n = strnlen(s, sizeof ((struct gg_case *)0)->opt_key[0]);
    if (n == 0 || n == sizeof ((struct gg_case *)0)->opt_key[0])
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

static enum gg_status check_names(const struct gg_case *c, char *err, size_t err_len)
{
    if (c->kernel[0] == '\0')
        return fail(err, err_len, GG_E_INVAL, "kernel: no kernel name");
    if (!name_ok(c->kernel, sizeof c->kernel))
        return fail(err, err_len, GG_E_INVAL,
                    "kernel: name must be printable ASCII without spaces or '#', under %d chars",
                    GG_CASE_NAME_MAX);
    if (c->mutant[0] != '\0' && !name_ok(c->mutant, sizeof c->mutant))
        return fail(err, err_len, GG_E_INVAL,
                    "mutant: name must be printable ASCII without spaces or '#', under %d chars",
                    GG_CASE_NAME_MAX);
    if (c->n_opts < 0 || c->n_opts > GG_CASE_MAX_OPTS)
        return fail(err, err_len, GG_E_INVAL, "options: %d options (at most %d)", c->n_opts,
                    GG_CASE_MAX_OPTS);
    for (int i = 0; i < c->n_opts; i++) {
        if (!opt_key_ok(c->opt_key[i]))
            return fail(err, err_len, GG_E_INVAL,
                        "options: key %d must be [a-z0-9_]+ and shorter than %zu chars", i,
                        sizeof c->opt_key[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(c->opt_key[i], c->opt_key[j]) == 0)
                return fail(err, err_len, GG_E_INVAL, "options: '%s' given twice", c->opt_key[i]);
    }
    return GG_OK;
}

static int dtype_known(enum gg_dtype t)
{
    return (unsigned)t < GG_DTYPE_COUNT && t != GG_DTYPE_NONE;
}

/* Element formats an MX block can hold. */
static int mx_elem(enum gg_dtype t)
{
    return gg_dtype_is_float8(t) || t == GG_DTYPE_E2M1;
}

static enum gg_status check_dtypes(const struct gg_case *c, char *err, size_t err_len)
{
    const enum gg_dtype in[2] = {c->a_dtype, c->b_dtype};
    for (int w = 0; w < 2; w++)
        if (!dtype_known(in[w]) || in[w] == GG_DTYPE_E8M0)
            return fail(err, err_len, GG_E_INVAL, "dtypes: %c=%s is not an input type",
                        "ab"[w], gg_dtype_name(in[w]));
    enum gg_dtype ct = c->c_dtype;
    if (ct != GG_DTYPE_F64 && ct != GG_DTYPE_F32 && ct != GG_DTYPE_F16 && ct != GG_DTYPE_BF16)
        return fail(err, err_len, GG_E_INVAL,
                    "dtypes: c=%s is not an output type (f64, f32, f16 or bf16)",
                    gg_dtype_name(ct));
    if (c->acc_dtype != GG_DTYPE_F32 && c->acc_dtype != GG_DTYPE_F64)
        return fail(err, err_len, GG_E_INVAL, "dtypes: acc=%s must be f32 or f64",
                    gg_dtype_name(c->acc_dtype));
    return GG_OK;
}

/* A dimension-like value in [0, 2^40]. */
static enum gg_status check_dim(const char *key, int64_t v, char *err, size_t err_len)
{
    if (v < 0)
        return fail(err, err_len, GG_E_INVAL, "%s: must not be negative (got %lld)", key,
                    (long long)v);
    if (v > MAX_DIM)
        return fail(err, err_len, GG_E_INVAL, "%s: %lld exceeds the limit 2^40", key,
                    (long long)v);
    return GG_OK;
}

/*
 * The group-size spec of a grouped case: every item well formed, sizes in [0, 2^40], item
 * counts summing to groups, and the largest possible M (random items at hi) at most 2^40.
 * *max_rows receives that largest M.
 */
static enum gg_status check_items(const struct gg_case *c, int64_t *max_rows, char *err,
                                  size_t err_len)
{
    if (c->groups < 1 || c->groups > MAX_GROUPS)
        return fail(err, err_len, GG_E_INVAL, "groups: must be between 1 and %lld (got %lld)",
                    (long long)MAX_GROUPS, (long long)c->groups);
    if (c->n_items < 1 || c->items == NULL)
        return fail(err, err_len, GG_E_INVAL, "group_lens: no group sizes");
    int64_t count = 0, rows = 0;
    for (int i = 0; i < c->n_items; i++) {
        const struct gg_group_item *it = &c->items[i];
        int64_t top = it->is_rand ? it->hi : it->value;
        if (it->repeat < 1)
            return fail(err, err_len, GG_E_INVAL, "group_lens: item %d: repeat %lld is below 1",
                        i + 1, (long long)it->repeat);
        if (it->is_rand && (it->lo < 0 || it->lo > it->hi))
            return fail(err, err_len, GG_E_INVAL,
                        "group_lens: item %d: rand(%lld,%lld) needs 0 <= lo <= hi", i + 1,
                        (long long)it->lo, (long long)it->hi);
        if ((!it->is_rand && it->value < 0) || top > MAX_DIM)
            return fail(err, err_len, GG_E_INVAL,
                        "group_lens: item %d: sizes must lie in [0, 2^40]", i + 1);
        int64_t span;
        if (__builtin_add_overflow(count, it->repeat, &count) ||
            __builtin_mul_overflow(top, it->repeat, &span) ||
            __builtin_add_overflow(rows, span, &rows) || rows > MAX_DIM)
            return fail(err, err_len, GG_E_INVAL,
                        "group_lens: up to more than 2^40 rows in all (item %d)", i + 1);
    }
    if (count != c->groups)
        return fail(err, err_len, GG_E_INVAL, "group_lens: %lld sizes for groups %lld",
                    (long long)count, (long long)c->groups);
    *max_rows = rows;
    return GG_OK;
}

/*
 * The routing of a moe_sorted case: T = m tokens, each sent to topk experts, so the expert loads
 * (constant group_lens items: a histogram fixed by the file, not drawn from the seed) sum to
 * T·topk, which must fit the int32 sorted ids. Every expert's entries are padded up to a
 * multiple of block_m; the padded length Σ ceil(load/block_m)·block_m is at most 2^40.
 */
static enum gg_status check_moe(const struct gg_case *c, char *err, size_t err_len)
{
    int64_t loads, pairs, padded = 0;
    enum gg_status st = check_items(c, &loads, err, err_len);
    if (st != GG_OK || (st = check_dim("m", c->m, err, err_len)) != GG_OK)
        return st;
    if (c->topk < 1)
        return fail(err, err_len, GG_E_INVAL, "topk: must be at least 1 (got %lld)",
                    (long long)c->topk);
    if (c->block_m < 1 || c->block_m > MAX_DIM)
        return fail(err, err_len, GG_E_INVAL, "block_m: must be between 1 and 2^40 (got %lld)",
                    (long long)c->block_m);
    if (__builtin_mul_overflow(c->m, c->topk, &pairs) || pairs > INT32_MAX)
        return fail(err, err_len, GG_E_INVAL,
                    "topk: m x topk = %lld x %lld exceeds 2^31 - 1 (the sorted ids are int32)",
                    (long long)c->m, (long long)c->topk);
    for (int i = 0; i < c->n_items; i++) {
        const struct gg_group_item *it = &c->items[i];
        int64_t blocks = (it->value + c->block_m - 1) / c->block_m, span;
        if (it->is_rand)
            return fail(err, err_len, GG_E_INVAL,
                        "group_lens: item %d: rand() is not valid for op moe_sorted (the expert "
                        "loads must sum to m x topk)",
                        i + 1);
        if (__builtin_mul_overflow(blocks * c->block_m, it->repeat, &span) ||
            __builtin_add_overflow(padded, span, &padded) || padded > MAX_DIM)
            return fail(err, err_len, GG_E_INVAL,
                        "block_m: the loads padded to multiples of %lld exceed 2^40 entries",
                        (long long)c->block_m);
    }
    if (loads != pairs)
        return fail(err, err_len, GG_E_INVAL,
                    "group_lens: the expert loads sum to %lld, but m x topk = %lld x %lld = %lld",
                    (long long)loads, (long long)c->m, (long long)c->topk, (long long)pairs);
    return GG_OK;
}

/* Sizes per op; *mrows receives the (largest) row count of A: M summed over groups, or m. */
static enum gg_status check_sizes(const struct gg_case *c, int64_t *mrows, char *err,
                                  size_t err_len)
{
    enum gg_status st;
    if ((unsigned)c->op >= GG_OP_COUNT)
        return fail(err, err_len, GG_E_INVAL, "op: unknown op %d", (int)c->op);
    const char *op = gg_op_name(c->op);
    if (c->op != GG_OP_MOE_SORTED && (c->topk != 0 || c->block_m != 0))
        return fail(err, err_len, GG_E_INVAL, "%s: not valid for op %s",
                    c->topk != 0 ? "topk" : "block_m", op);
    if (c->op == GG_OP_MOE_SORTED) {
        if ((st = check_moe(c, err, err_len)) != GG_OK)
            return st;
        *mrows = c->m;
    } else if (is_grouped(c->op)) {
        if ((st = check_items(c, mrows, err, err_len)) != GG_OK)
            return st;
        if (c->m != 0)
            return fail(err, err_len, GG_E_INVAL, "m: not valid for op %s (group_lens sets M)",
                        op);
    } else {
        if (c->n_items != 0)
            return fail(err, err_len, GG_E_INVAL, "group_lens: not valid for op %s", op);
        if (c->op == GG_OP_BATCHED && (c->groups < 1 || c->groups > MAX_DIM))
            return fail(err, err_len, GG_E_INVAL, "batch: must be between 1 and 2^40 (got %lld)",
                        (long long)c->groups);
        if ((st = check_dim("m", c->m, err, err_len)) != GG_OK)
            return st;
        *mrows = c->m;
    }
    if ((st = check_dim("n", c->n, err, err_len)) != GG_OK ||
        (st = check_dim("k", c->k, err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

/*
 * The operand types each scaling recipe of gg_kernel.h takes: tensor an fp8 a or b; mx fp8 or
 * e2m1 a and b; mx_b unscaled a (bf16, f16, f32) and fp8 or e2m1 b; block128, rowwise and
 * blockwise fp8 a and b. The ops each recipe is defined for are gg_scaling_op_ok's: the blocked
 * recipes need a reduction along K (blockwise also takes grouped_dgrad), MX blocks K a multiple
 * of 32; tensor and rowwise take every op. rule= and plant (MX scale codes) need a recipe with
 * E8M0 scales.
 */
static enum gg_status check_scaling(const struct gg_case *c, char *err, size_t err_len)
{
    const enum gg_scaling s = c->scaling;
    const enum gg_dtype a = c->a_dtype, b = c->b_dtype;
    if ((unsigned)s > GG_SCALING_BLOCKWISE || (unsigned)c->mx_rule > GG_MX_RULE_CEIL ||
        (unsigned)c->quant_sat > GG_SAT_FINITE)
        return fail(err, err_len, GG_E_INVAL, "scaling: unknown scaling, rule or saturation");
    const int e8m0 = s == GG_SCALING_MX || s == GG_SCALING_MX_B;
    const char *name = gg_scaling_name(s);
    if (s == GG_SCALING_TENSOR && !gg_dtype_is_float8(a) && !gg_dtype_is_float8(b))
        return fail(err, err_len, GG_E_INVAL, "scaling: tensor needs an fp8 a or b");
    if (s == GG_SCALING_MX && (!mx_elem(a) || !mx_elem(b)))
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: mx needs a and b in e4m3, e5m2, e4m3fnuz, e5m2fnuz or e2m1 "
                    "(got a=%s b=%s)",
                    gg_dtype_name(a), gg_dtype_name(b));
    if (s == GG_SCALING_MX_B && !mx_elem(b))
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: mx_b needs b in e4m3, e5m2, e4m3fnuz, e5m2fnuz or e2m1 (got b=%s)",
                    gg_dtype_name(b));
    if (s == GG_SCALING_MX_B && a != GG_DTYPE_BF16 && a != GG_DTYPE_F16 && a != GG_DTYPE_F32)
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: mx_b needs an unscaled a in bf16, f16 or f32 (got a=%s)",
                    gg_dtype_name(a));
    if ((s == GG_SCALING_BLOCK128 || s == GG_SCALING_ROWWISE || s == GG_SCALING_BLOCKWISE) &&
        (!gg_dtype_is_float8(a) || !gg_dtype_is_float8(b)))
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: %s needs a and b in e4m3, e5m2, e4m3fnuz or e5m2fnuz "
                    "(got a=%s b=%s)",
                    name, gg_dtype_name(a), gg_dtype_name(b));
    if (s == GG_SCALING_BLOCKWISE && !gg_scaling_op_ok(s, c->op, c->b_layout))
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: blockwise needs a reduction along K or grouped_dgrad (grouped_fwd, "
                    "grouped_dgrad, dense, moe_sorted, or batched with layout b=nk), not %s%s",
                    gg_op_name(c->op),
                    c->op == GG_OP_BATCHED ? " with layout b=kn" : "");
    if (!gg_scaling_op_ok(s, c->op, c->b_layout))
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: %s needs a reduction along K (grouped_fwd, dense, moe_sorted, or "
                    "batched with layout b=nk), not %s",
                    name, gg_op_name(c->op));
    if (e8m0 && c->k % GG_MX_BLOCK != 0)
        return fail(err, err_len, GG_E_INVAL,
                    "k: %lld is not a multiple of %d, as scaling %s needs", (long long)c->k,
                    GG_MX_BLOCK, name);
    if (!e8m0 && c->mx_rule != GG_MX_RULE_CEIL)
        return fail(err, err_len, GG_E_INVAL,
                    "scaling: rule= applies to scaling mx and mx_b only");
    if (!isfinite(c->plant_e8m0) || c->plant_e8m0 < 0.0 || c->plant_e8m0 > 1.0)
        return fail(err, err_len, GG_E_INVAL, "plant: e8m0 fraction must lie in [0, 1]");
    if (c->plant_e8m0 != 0.0 && !e8m0)
        return fail(err, err_len, GG_E_INVAL, "plant: needs scaling mx or mx_b");
    return GG_OK;
}

static int dist_eq(const struct gg_dist *x, const struct gg_dist *y)
{
    return x->kind == y->kind && x->p[0] == y->p[0] && x->p[1] == y->p[1] && x->p[2] == y->p[2];
}

/* Layout (batched only), bias (f32 or bf16, on ops with an output bias), data recipes (a bias
   recipe other than the default only with a bias: the canonical text would drop it). */
static enum gg_status check_inputs(const struct gg_case *c, char *err, size_t err_len)
{
    if ((unsigned)c->b_layout > GG_LAYOUT_KN)
        return fail(err, err_len, GG_E_INVAL, "layout: unknown layout");
    if ((unsigned)c->guard > GG_GUARD_START)
        return fail(err, err_len, GG_E_INVAL, "guard: unknown placement");
    if (c->b_layout != GG_LAYOUT_NK && c->op != GG_OP_BATCHED)
        return fail(err, err_len, GG_E_INVAL, "layout: not valid for op %s", gg_op_name(c->op));
    if (c->bias_dtype != GG_DTYPE_NONE && c->bias_dtype != GG_DTYPE_F32 &&
        c->bias_dtype != GG_DTYPE_BF16)
        return fail(err, err_len, GG_E_INVAL, "bias: %s is not a bias type (f32 or bf16)",
                    gg_dtype_name(c->bias_dtype));
    if (c->bias_dtype != GG_DTYPE_NONE &&
        (c->op == GG_OP_GROUPED_DGRAD || c->op == GG_OP_GROUPED_WGRAD))
        return fail(err, err_len, GG_E_INVAL, "bias: not valid for op %s", gg_op_name(c->op));
    if ((unsigned)c->dist_a.kind >= GG_DIST_COUNT || (unsigned)c->dist_b.kind >= GG_DIST_COUNT ||
        (unsigned)c->dist_bias.kind >= GG_DIST_COUNT)
        return fail(err, err_len, GG_E_INVAL, "data: unknown distribution");
    if (c->bias_dtype == GG_DTYPE_NONE && !dist_eq(&c->dist_bias, &DEFAULT_DIST))
        return fail(err, err_len, GG_E_INVAL, "data: bias= needs a bias (key bias)");
    return GG_OK;
}

/* ---- operand geometry ---------------------------------------------------------------------- */

/* DIM_V: the (token, slot) rows m·topk of the moe_sorted output. */
enum dim { DIM_M, DIM_N, DIM_K, DIM_V };

/* Rows and row length of A, B, C per op (the addressing table of gg_kernel.h, batched with
   layout b=nk); strided: the operand has one block per group, batch or expert. */
static const struct {
    enum dim rows, len;
    int strided;
} GEOM[GG_OP_COUNT][3] = {
    [GG_OP_GROUPED_FWD] = {{DIM_M, DIM_K, 0}, {DIM_N, DIM_K, 1}, {DIM_M, DIM_N, 0}},
    [GG_OP_GROUPED_DGRAD] = {{DIM_M, DIM_N, 0}, {DIM_N, DIM_K, 1}, {DIM_M, DIM_K, 0}},
    [GG_OP_GROUPED_WGRAD] = {{DIM_M, DIM_N, 0}, {DIM_M, DIM_K, 0}, {DIM_N, DIM_K, 1}},
    [GG_OP_BATCHED] = {{DIM_M, DIM_K, 1}, {DIM_N, DIM_K, 1}, {DIM_M, DIM_N, 1}},
    [GG_OP_DENSE] = {{DIM_M, DIM_K, 0}, {DIM_N, DIM_K, 0}, {DIM_M, DIM_N, 0}},
    [GG_OP_MOE_SORTED] = {{DIM_M, DIM_K, 0}, {DIM_N, DIM_K, 1}, {DIM_V, DIM_N, 0}},
};

struct operand {
    int64_t rows, len, blocks;  /* blocks: groups when strided, else 1 */
    const char *rows_key, *len_key;
    int64_t ld, stride, off;
};

static void operand_of(const struct gg_case *c, int64_t mrows, int w, struct operand *o)
{
    enum dim rows = GEOM[c->op][w].rows, len = GEOM[c->op][w].len;
    if (c->op == GG_OP_BATCHED && w == 1 && c->b_layout == GG_LAYOUT_KN) {
        rows = DIM_K;
        len = DIM_N;
    }
    /* m·topk ≤ 2^31 - 1 for moe_sorted (check_moe); topk is 0 for the other ops. */
    const int64_t size[4] = {mrows, c->n, c->k, c->op == GG_OP_MOE_SORTED ? mrows * c->topk : 0};
    const char *const key[4] = {is_grouped(c->op) ? "group_lens" : "m", "n", "k", "topk"};
    const int64_t ld[3] = {c->lda, c->ldb, c->ldc};
    const int64_t stride[3] = {c->stride_a, c->stride_b, c->stride_c};
    const int64_t off[3] = {c->off_a, c->off_b, c->off_c};
    *o = (struct operand){
        .rows = size[rows],
        .len = size[len],
        .blocks = GEOM[c->op][w].strided ? c->groups : 1,
        .rows_key = key[rows],
        .len_key = key[len],
        .ld = ld[w],
        .stride = stride[w],
        .off = off[w],
    };
}

/* Most bytes an operand's span (offset included) may reach: room is left for the guard bands
   and the page rounding of its buffer, which must still fit in int64. */
#define MAX_SPAN_BYTES ((int64_t)1 << 62)

static int span_too_big(enum gg_dtype t, int64_t elements)
{
    return elements == GG_SIZE_MAX || gg_dtype_bytes(t, elements) > MAX_SPAN_BYTES;
}

/*
 * Leading dimensions at least the row length, strides only on strided operands, offsets ≥ 0,
 * and the element span off + (blocks-1)·stride + rows·ld of every operand (defaults: ld = row
 * length, stride = rows·ld) representable in int64, and in bytes at most 2^62. The message names
 * the key whose value makes the span too large.
 */
static enum gg_status check_addressing(const struct gg_case *c, int64_t mrows, char *err,
                                       size_t err_len)
{
    for (int w = 0; w < 3; w++) {
        struct operand o;
        operand_of(c, mrows, w, &o);
        char name = "abc"[w], operand = "ABC"[w];
        if (o.ld < 0 || (o.ld != 0 && o.ld < o.len))
            return fail(err, err_len, GG_E_INVAL,
                        "ld: %c=%lld is less than the row length %lld (%s) of %c", name,
                        (long long)o.ld, (long long)o.len, o.len_key, operand);
        if (o.stride < 0)
            return fail(err, err_len, GG_E_INVAL, "stride: %c must not be negative", name);
        if (o.stride != 0 && !GEOM[c->op][w].strided)
            return fail(err, err_len, GG_E_INVAL, "stride: %c is not used by op %s", name,
                        gg_op_name(c->op));
        if (o.off < 0)
            return fail(err, err_len, GG_E_INVAL, "offset: %c must not be negative", name);
        const enum gg_dtype dtype[3] = {c->a_dtype, c->b_dtype, c->c_dtype};
        int64_t ld = o.ld ? o.ld : o.len;
        int64_t block = gg_size_mul(o.rows, ld);
        int64_t stride = o.stride ? o.stride : block;
        int64_t span = gg_size_add(gg_size_mul(o.blocks - 1, stride), block);
        if (span_too_big(dtype[w], block))
            return fail(err, err_len, GG_E_INVAL,
                        "%s: operand %c would span more than 2^62 bytes (rows x ld)",
                        o.ld ? "ld" : o.rows_key, operand);
        if (span_too_big(dtype[w], span))
            return fail(err, err_len, GG_E_INVAL,
                        "%s: operand %c would span more than 2^62 bytes (blocks x stride)",
                        o.stride ? "stride" : (c->op == GG_OP_BATCHED ? "batch" : "groups"),
                        operand);
        if (span_too_big(dtype[w], gg_size_add(span, o.off)))
            return fail(err, err_len, GG_E_INVAL,
                        "offset: operand %c would end beyond 2^62 bytes", operand);
    }
    return GG_OK;
}

enum gg_status gg_case_check(const struct gg_case *c, char *err, size_t err_len)
{
    enum gg_status st;
    int64_t mrows = 0;
    if ((st = check_names(c, err, err_len)) != GG_OK ||
        (st = check_sizes(c, &mrows, err, err_len)) != GG_OK ||
        (st = check_dtypes(c, err, err_len)) != GG_OK ||
        (st = check_scaling(c, err, err_len)) != GG_OK ||
        (st = check_inputs(c, err, err_len)) != GG_OK ||
        (st = check_addressing(c, mrows, err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

/* ---- expansion and problem ----------------------------------------------------------------- */

/* Size of group g for a random item: lo + floor(u · (hi − lo + 1)), u uniform in [0, 1) from
   stream GG_STREAM_GROUPS, element g; clamped to hi against rounding of the product. */
static int64_t rand_len(uint64_t seed, int64_t g, int64_t lo, int64_t hi)
{
    double u = gg_rng_uniform(seed, GG_STREAM_GROUPS, (uint64_t)g, 0);
    int64_t v = lo + (int64_t)floor(u * (double)(hi - lo + 1));
    return v > hi ? hi : v;
}

enum gg_status gg_case_expand(struct gg_case *c, char *err, size_t err_len)
{
    free(c->lens);
    free(c->offs);
    c->lens = c->offs = NULL;
    if (!has_items(c->op))
        return GG_OK;
    int64_t max_rows;
    enum gg_status st = check_items(c, &max_rows, err, err_len);
    if (st != GG_OK)
        return st;
    c->lens = malloc((size_t)c->groups * sizeof *c->lens);
    c->offs = malloc(((size_t)c->groups + 1) * sizeof *c->offs);
    if (c->lens == NULL || c->offs == NULL) {
        free(c->lens);
        free(c->offs);
        c->lens = c->offs = NULL;
        return fail(err, err_len, GG_E_NOMEM, "group_lens: out of memory for %lld groups",
                    (long long)c->groups);
    }
    int64_t g = 0;
    c->offs[0] = 0;
    for (int i = 0; i < c->n_items; i++) {
        const struct gg_group_item *it = &c->items[i];
        for (int64_t r = 0; r < it->repeat; r++, g++) {
            c->lens[g] = it->is_rand ? rand_len(c->seed, g, it->lo, it->hi) : it->value;
            /* Cannot overflow: check_items bounded the sum of the largest sizes by 2^40. */
            c->offs[g + 1] = c->offs[g] + c->lens[g];
        }
    }
    return GG_OK;
}

void gg_case_shape(const struct gg_case *c, char *buf, size_t len)
{
    int64_t m = c->m;
    if (c->offs)
        m = c->offs[c->groups];
    const char *gkey = c->op == GG_OP_BATCHED ? "B" : "G";
    snprintf(buf, len, "%s %s-%s-%s %s=%lld M=%lld N=%lld K=%lld", gg_op_name(c->op),
             gg_dtype_name(c->a_dtype), gg_dtype_name(c->b_dtype), gg_dtype_name(c->c_dtype), gkey,
             (long long)c->groups, (long long)m, (long long)c->n, (long long)c->k);
}

void gg_case_problem(const struct gg_case *c, struct gg_kopt opts[GG_CASE_MAX_OPTS],
                     struct gg_problem *p)
{
    int n_opts = c->n_opts < 0 ? 0 : c->n_opts > GG_CASE_MAX_OPTS ? GG_CASE_MAX_OPTS : c->n_opts;
    for (int i = 0; i < n_opts; i++)
        opts[i] = (struct gg_kopt){.key = c->opt_key[i], .value = c->opt_value[i]};
    int grouped = is_grouped(c->op), items = has_items(c->op), moe = c->op == GG_OP_MOE_SORTED;
    *p = (struct gg_problem){
        .op = c->op,
        .a_dtype = c->a_dtype,
        .b_dtype = c->b_dtype,
        .c_dtype = c->c_dtype,
        .acc_dtype = c->acc_dtype,
        .scaling = c->scaling,
        .b_layout = c->op == GG_OP_BATCHED ? c->b_layout : GG_LAYOUT_NK,
        .groups = c->op == GG_OP_DENSE ? 1 : c->groups,
        .m = grouped ? (c->offs != NULL ? c->offs[c->groups] : 0) : c->m,
        .n = c->n,
        .k = c->k,
        .lda = c->lda,
        .ldb = c->ldb,
        .ldc = c->ldc,
        .stride_a = c->stride_a,
        .stride_b = c->stride_b,
        .stride_c = c->stride_c,
        .group_lens = items ? c->lens : NULL,
        .group_offs = items ? c->offs : NULL,
        .bias_dtype = c->bias_dtype,
        .topk = moe ? c->topk : 0,
        .block_m = moe ? c->block_m : 0,
        .opts = n_opts ? opts : NULL,
        .n_opts = n_opts,
        .mutant = c->mutant[0] ? c->mutant : NULL,
    };
}

/* ---- metadata ------------------------------------------------------------------------------ */

/* Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF). */
static int utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char b = s[i];
        size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
                                   : (b & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0 || i + len > n)
            return 0;
        uint32_t cp = len == 1 ? b : (uint32_t)(b & (0x7F >> len));
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

/* Metadata keys are [A-Za-z0-9_.-]+; texts are UTF-8 without control characters but tab. */
static enum gg_status meta_ok(const char *key, const char *text, char *err, size_t err_len)
{
    if (key == NULL || key[0] == '\0')
        return fail(err, err_len, GG_E_INVAL, "metadata: empty key after '@'");
    for (const char *s = key; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return fail(err, err_len, GG_E_INVAL,
                        "metadata: key '@%.40s' may hold only letters, digits, '_', '.', '-'",
                        key);
    for (const char *s = text; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7F)
            return fail(err, err_len, GG_E_INVAL,
                        "metadata: control character in the text of '@%.40s'", key);
    if (!utf8_ok((const unsigned char *)text, strlen(text)))
        return fail(err, err_len, GG_E_INVAL, "metadata: text of '@%.40s' is not UTF-8", key);
    return GG_OK;
}

/* malloc'd copy of s without leading and trailing spaces and tabs. */
static char *trimmed_dup(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

const char *gg_case_meta(const struct gg_case *c, const char *key)
{
    for (int i = 0; key != NULL && i < c->n_meta; i++)
        if (strcmp(c->meta[i].key, key) == 0)
            return c->meta[i].text;
    return NULL;
}

enum gg_status gg_case_add_meta(struct gg_case *c, const char *key, const char *text, char *err,
                                size_t err_len)
{
    if (text == NULL)
        text = "";
    enum gg_status st = meta_ok(key, text, err, err_len);
    if (st != GG_OK)
        return st;
    struct gg_meta *m = realloc(c->meta, ((size_t)c->n_meta + 1) * sizeof *m);
    if (m == NULL)
        return fail(err, err_len, GG_E_NOMEM, "metadata: out of memory");
    c->meta = m;
    char *k = strdup(key), *t = trimmed_dup(text);
    if (k == NULL || t == NULL) {
        free(k);
        free(t);
        return fail(err, err_len, GG_E_NOMEM, "metadata: out of memory");
    }
    c->meta[c->n_meta++] = (struct gg_meta){.key = k, .text = t};
    return GG_OK;
}

void gg_case_meta_drop(struct gg_case *c, int (*drop)(const char *key))
{
    int kept = 0;
    for (int i = 0; i < c->n_meta; i++) {
        if (drop(c->meta[i].key)) {
            free(c->meta[i].key);
            free(c->meta[i].text);
        } else {
            c->meta[kept++] = c->meta[i];
        }
    }
    c->n_meta = kept;
}

enum gg_status gg_case_set_meta(struct gg_case *c, const char *key, const char *text)
{
    if (text == NULL)
        text = "";
    for (int i = 0; key != NULL && i < c->n_meta; i++) {
        if (strcmp(c->meta[i].key, key) != 0)
            continue;
        enum gg_status st = meta_ok(key, text, NULL, 0);
        if (st != GG_OK)
            return st;
        char *t = trimmed_dup(text);
        if (t == NULL)
            return GG_E_NOMEM;
        free(c->meta[i].text);
        c->meta[i].text = t;
        return GG_OK;
    }
    return gg_case_add_meta(c, key, text, NULL, 0);
}

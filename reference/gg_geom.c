/*
 * gg_geom.c — geometry of a problem: which part of C each group owns, how far each operand
 * reaches in memory, packed defaults for leading dimensions and strides, and the validity rules
 * every kernel may assume. All arithmetic is int64_t with overflow checks.
 */
#include <stdint.h>
#include <stdio.h>

#include "reference/gg_ref.h"

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); return GG_E_INVAL; } while (0)

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

static const char *const OP_NAMES[GG_OP_COUNT] = {
    [GG_OP_GROUPED_FWD] = "grouped_fwd",
    [GG_OP_GROUPED_DGRAD] = "grouped_dgrad",
    [GG_OP_GROUPED_WGRAD] = "grouped_wgrad",
    [GG_OP_BATCHED] = "batched",
    [GG_OP_DENSE] = "dense",
    [GG_OP_MOE_SORTED] = "moe_sorted",
};

const char *gg_op_name(enum gg_op op)
{
    return (unsigned)op < GG_OP_COUNT ? OP_NAMES[op] : "unknown";
}

const char *const gg_scaling_names[GG_SCALING_RECIPES] = {
    [GG_SCALING_NONE] = "none",         [GG_SCALING_TENSOR] = "tensor",
    [GG_SCALING_MX] = "mx",             [GG_SCALING_BLOCK128] = "block128",
    [GG_SCALING_MX_B] = "mx_b",         [GG_SCALING_ROWWISE] = "rowwise",
    [GG_SCALING_BLOCKWISE] = "blockwise",
};

const char *gg_scaling_name(enum gg_scaling s)
{
    return (unsigned)s < GG_SCALING_RECIPES ? gg_scaling_names[s] : "unknown";
}

enum gg_op gg_op_from_name(const char *name)
{
    for (int op = 0; name != NULL && op < GG_OP_COUNT; op++)
        if (strcmp(name, OP_NAMES[op]) == 0)
            return (enum gg_op)op;
    return GG_OP_COUNT;
}

/* First sorted entry of expert e's blocks, or -1 when it has none. */
static int64_t moe_start(const struct gg_problem *p, int64_t e)
{
    for (int64_t blk = 0; p->block_m > 0 && blk < p->sorted_len / p->block_m; blk++)
        if (p->expert_ids[blk] == e)
            return blk * p->block_m;
    return -1;
}

void gg_problem_out_block(const struct gg_problem *p, int64_t g, struct gg_out_block *b)
{
    int64_t rows0 = is_grouped(p->op) ? p->group_offs[g] : 0;
    int64_t len = is_grouped(p->op) ? p->group_lens[g] : 0;
    switch (p->op) {
    case GG_OP_MOE_SORTED: {
        int64_t start = moe_start(p, g);
        *b = (struct gg_out_block){0, start < 0 ? 0 : p->group_lens[g], p->n, p->ldc, p->k,
                                   start < 0 ? NULL : p->sorted_ids + start};
        break;
    }
    case GG_OP_GROUPED_FWD:
        *b = (struct gg_out_block){rows0 * p->ldc, len, p->n, p->ldc, p->k, NULL};
        break;
    case GG_OP_GROUPED_DGRAD:
        *b = (struct gg_out_block){rows0 * p->ldc, len, p->k, p->ldc, p->n, NULL};
        break;
    case GG_OP_GROUPED_WGRAD:
        *b = (struct gg_out_block){g * p->stride_c, p->n, p->k, p->ldc, len, NULL};
        break;
    case GG_OP_BATCHED:
        *b = (struct gg_out_block){g * p->stride_c, p->m, p->n, p->ldc, p->k, NULL};
        break;
    default:
        *b = (struct gg_out_block){0, p->m, p->n, p->ldc, p->k, NULL};
        break;
    }
}

int64_t gg_problem_out_elems(const struct gg_problem *p)
{
    int64_t total = 0;
    if (p->op == GG_OP_BATCHED && p->groups > 0) { /* alike blocks; a count may pass 2^40 */
        struct gg_out_block b;
        gg_problem_out_block(p, 0, &b);
        return gg_size_mul(p->groups, gg_size_mul(b.rows, b.cols));
    }
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        total = gg_size_add(total, gg_size_mul(b.rows, b.cols));
    }
    return total;
}

double gg_problem_flops(const struct gg_problem *p)
{
    double total = 0.0;
    int64_t n = p->op == GG_OP_BATCHED && p->groups > 0 ? 1 : p->groups;
    for (int64_t g = 0; g < n; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        total += 2.0 * (double)b.rows * (double)b.cols * (double)b.red;
    }
    return p->op == GG_OP_BATCHED ? total * (double)p->groups : total;
}

/* Span of a matrix of rows × cols with leading dimension ld: 0 when empty. */
static int64_t mat_span(int64_t rows, int64_t cols, int64_t ld)
{
    return (rows == 0 || cols == 0) ? 0 : (rows - 1) * ld + cols;
}

/* Span of count matrices placed stride apart. */
static int64_t stack_span(int64_t count, int64_t stride, int64_t one)
{
    return (count == 0 || one == 0) ? 0 : (count - 1) * stride + one;
}

int64_t gg_problem_a_span(const struct gg_problem *p)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD: return mat_span(p->m, p->k, p->lda);
    case GG_OP_GROUPED_DGRAD:
    case GG_OP_GROUPED_WGRAD: return mat_span(p->m, p->n, p->lda);
    case GG_OP_BATCHED: return stack_span(p->groups, p->stride_a, mat_span(p->m, p->k, p->lda));
    default: return mat_span(p->m, p->k, p->lda); /* dense, moe: X [T,K] */
    }
}

int64_t gg_problem_b_span(const struct gg_problem *p)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD:
    case GG_OP_MOE_SORTED: return stack_span(p->groups, p->stride_b, mat_span(p->n, p->k, p->ldb));
    case GG_OP_GROUPED_WGRAD: return mat_span(p->m, p->k, p->ldb);
    case GG_OP_BATCHED:
        return stack_span(p->groups, p->stride_b,
                          p->b_layout == GG_LAYOUT_KN ? mat_span(p->k, p->n, p->ldb)
                                                      : mat_span(p->n, p->k, p->ldb));
    default: return mat_span(p->n, p->k, p->ldb);
    }
}

int64_t gg_problem_c_span(const struct gg_problem *p)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD: return mat_span(p->m, p->n, p->ldc);
    case GG_OP_GROUPED_DGRAD: return mat_span(p->m, p->k, p->ldc);
    case GG_OP_GROUPED_WGRAD: return stack_span(p->groups, p->stride_c, mat_span(p->n, p->k, p->ldc));
    case GG_OP_BATCHED: return stack_span(p->groups, p->stride_c, mat_span(p->m, p->n, p->ldc));
    case GG_OP_MOE_SORTED: return mat_span(p->m * p->topk, p->n, p->ldc);
    default: return mat_span(p->m, p->n, p->ldc);
    }
}

int64_t gg_problem_b_mats(const struct gg_problem *p)
{
    return p->op == GG_OP_GROUPED_WGRAD || p->op == GG_OP_DENSE ? 1 : p->groups;
}

int64_t gg_problem_a_rows(const struct gg_problem *p)
{
    return p->op == GG_OP_BATCHED ? p->groups * p->m : p->m;
}

static int64_t blocks128(int64_t n)
{
    return (n + GG_BLOCK128 - 1) / GG_BLOCK128;
}

int64_t gg_problem_a_scale_count(const struct gg_problem *p)
{
    int dgrad = p->op == GG_OP_GROUPED_DGRAD;
    switch (p->scaling) {
    case GG_SCALING_TENSOR: return 1;
    case GG_SCALING_MX: return gg_problem_a_rows(p) * (p->k / GG_MX_BLOCK);
    case GG_SCALING_BLOCK128: return gg_problem_a_rows(p) * blocks128(p->k);
    case GG_SCALING_ROWWISE:
        return p->op == GG_OP_GROUPED_WGRAD ? p->groups * p->n : gg_problem_a_rows(p);
    case GG_SCALING_BLOCKWISE: return gg_problem_a_rows(p) * blocks128(dgrad ? p->n : p->k);
    default: return 0;
    }
}

int64_t gg_problem_b_scale_count(const struct gg_problem *p)
{
    switch (p->scaling) {
    case GG_SCALING_TENSOR:
    case GG_SCALING_BLOCK128: return gg_problem_b_mats(p);
    case GG_SCALING_MX:
    case GG_SCALING_MX_B: return gg_problem_b_mats(p) * p->n * (p->k / GG_MX_BLOCK);
    case GG_SCALING_ROWWISE:
        if (p->op == GG_OP_GROUPED_WGRAD)
            return p->groups * p->k;
        return gg_problem_b_mats(p) * (p->op == GG_OP_GROUPED_DGRAD ? p->k : p->n);
    case GG_SCALING_BLOCKWISE: return gg_problem_b_mats(p) * blocks128(p->n) * blocks128(p->k);
    default: return 0;
    }
}

int gg_scaling_op_ok(enum gg_scaling s, enum gg_op op, enum gg_layout b_layout)
{
    int along_k = op == GG_OP_GROUPED_FWD || op == GG_OP_DENSE || op == GG_OP_MOE_SORTED ||
                  (op == GG_OP_BATCHED && b_layout == GG_LAYOUT_NK);
    switch (s) {
    case GG_SCALING_NONE:
    case GG_SCALING_TENSOR:
    case GG_SCALING_ROWWISE: return 1;
    case GG_SCALING_BLOCKWISE: return along_k || op == GG_OP_GROUPED_DGRAD;
    default: return along_k;
    }
}

int64_t gg_problem_bias_count(const struct gg_problem *p)
{
    return p->bias_dtype == GG_DTYPE_NONE ? 0 : gg_problem_b_mats(p) * p->n;
}

/* Row lengths of A, B and C (the minimum leading dimensions) for the op. */
static void row_lengths(const struct gg_problem *p, int64_t *ra, int64_t *rb, int64_t *rc)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD: *ra = p->k; *rb = p->k; *rc = p->n; break;
    case GG_OP_GROUPED_DGRAD: *ra = p->n; *rb = p->k; *rc = p->k; break;
    case GG_OP_GROUPED_WGRAD: *ra = p->n; *rb = p->k; *rc = p->k; break;
    case GG_OP_BATCHED:
        *ra = p->k;
        *rb = p->b_layout == GG_LAYOUT_KN ? p->n : p->k;
        *rc = p->n;
        break;
    default: *ra = p->k; *rb = p->k; *rc = p->n; break; /* dense, moe */
    }
}

/* The moe sizes: topk and block_m positive, the (token, slot) ids within int32. */
static enum gg_status check_moe_sizes(const struct gg_problem *p, char *err, size_t err_len)
{
    int64_t pairs;
    if (!p->group_lens)
        FAIL("moe op without expert loads");
    if (p->topk < 1 || p->block_m < 1)
        FAIL("moe needs topk >= 1 and block_m >= 1 (got %lld, %lld)", (long long)p->topk,
             (long long)p->block_m);
    if (__builtin_mul_overflow(p->m, p->topk, &pairs) || pairs > INT32_MAX)
        FAIL("moe: tokens x topk = %lld x %lld does not fit the int32 sorted ids",
             (long long)p->m, (long long)p->topk);
    return GG_OK;
}

/* The moe sorted layout of gg_kernel.h: blocks of one expert each, every expert's blocks
   contiguous with its group_lens[e] valid entries first. (A duplicated id is legal here: the
   oracles see the row that no id names as padding.) */
static enum gg_status check_moe_routing(const struct gg_problem *p, char *err, size_t err_len)
{
    int64_t pairs = p->m * p->topk; /* fits: check_moe_sizes */
    if (p->sorted_len < 0 || p->sorted_len % p->block_m != 0 || !p->sorted_ids || !p->expert_ids)
        FAIL("moe: sorted_len %lld is not a multiple of block_m %lld, or arrays missing",
             (long long)p->sorted_len, (long long)p->block_m);
    int64_t total = 0;
    for (int64_t e = 0; e < p->groups; e++)
        total += p->group_lens[e] < 0 ? 0 : p->group_lens[e];
    if (total != pairs)
        FAIL("moe: expert loads sum to %lld, tokens x topk is %lld", (long long)total,
             (long long)pairs);
    for (int64_t e = 0; e < p->groups; e++) {
        int64_t start = moe_start(p, e), len = p->group_lens[e], seen = 0;
        if (len < 0)
            FAIL("moe: expert %lld has negative load %lld", (long long)e, (long long)len);
        for (int64_t s = start; start >= 0 && s < p->sorted_len &&
                                p->expert_ids[s / p->block_m] == e; s++, seen++) {
            int valid = p->sorted_ids[s] >= 0 && p->sorted_ids[s] < pairs;
            if (valid != (seen < len))
                FAIL("moe: expert %lld: sorted entry %lld should be %s", (long long)e,
                     (long long)s, seen < len ? "a valid id" : "padding");
        }
        if (seen < len)
            FAIL("moe: expert %lld has %lld sorted entries for a load of %lld", (long long)e,
                 (long long)seen, (long long)len);
    }
    for (int64_t blk = 0; blk < p->sorted_len / p->block_m; blk++)
        if (p->expert_ids[blk] < 0 || p->expert_ids[blk] >= p->groups ||
            (blk > 0 && p->expert_ids[blk] != p->expert_ids[blk - 1] &&
             moe_start(p, p->expert_ids[blk]) != blk * p->block_m))
            FAIL("moe: block %lld names expert %d out of order or out of range", (long long)blk,
                 p->expert_ids[blk]);
    return GG_OK;
}


/* a*b + c without overflow, or -1. All inputs are ≥ 0. */
static int64_t mul_add(int64_t a, int64_t b, int64_t c)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
        return -1;
    return r;
}

enum gg_status gg_problem_check_geometry(struct gg_problem *p, char *err, size_t err_len)
{
    if ((unsigned)p->op >= GG_OP_COUNT)
        FAIL("unknown op %d", (int)p->op);
    if (p->groups < 1)
        FAIL("groups must be at least 1 (got %lld)", (long long)p->groups);
    if (p->n < 0 || p->k < 0 || p->m < 0)
        FAIL("negative size (m %lld, n %lld, k %lld)", (long long)p->m, (long long)p->n,
             (long long)p->k);
    if (is_grouped(p->op)) {
        if (!p->group_lens || !p->group_offs)
            FAIL("grouped op without group arrays");
        int64_t sum = 0;
        for (int64_t g = 0; g < p->groups; g++) {
            if (p->group_lens[g] < 0)
                FAIL("group %lld has negative length %lld", (long long)g,
                     (long long)p->group_lens[g]);
            if (p->group_offs[g] != sum)
                FAIL("group_offs[%lld] = %lld is not the prefix sum %lld", (long long)g,
                     (long long)p->group_offs[g], (long long)sum);
            if (__builtin_add_overflow(sum, p->group_lens[g], &sum))
                FAIL("total group length overflows int64");
        }
        if (p->group_offs[p->groups] != sum)
            FAIL("group_offs[groups] = %lld differs from the total %lld",
                 (long long)p->group_offs[p->groups], (long long)sum);
        p->m = sum;
    } else if (p->op == GG_OP_MOE_SORTED) {
        enum gg_status st = check_moe_sizes(p, err, err_len);
        if (st != GG_OK)
            return st;
    } else if (p->op == GG_OP_DENSE && p->groups != 1) {
        FAIL("dense op with %lld groups", (long long)p->groups);
    }
    int64_t ra, rb, rc;
    row_lengths(p, &ra, &rb, &rc);
    if (p->lda == 0) p->lda = ra;
    if (p->ldb == 0) p->ldb = rb;
    if (p->ldc == 0) p->ldc = rc;
    if (p->lda < ra || p->ldb < rb || p->ldc < rc)
        FAIL("leading dimension below row length (lda %lld < %lld, ldb %lld < %lld or ldc %lld < %lld)",
             (long long)p->lda, (long long)ra, (long long)p->ldb, (long long)rb, (long long)p->ldc,
             (long long)rc);
    /* Default strides: packed matrices, one per group or batch. */
    int64_t rows_a = p->m, rows_b = p->op == GG_OP_BATCHED && p->b_layout == GG_LAYOUT_KN ? p->k : p->n;
    int64_t rows_c = p->op == GG_OP_GROUPED_WGRAD ? p->n
                     : p->op == GG_OP_MOE_SORTED ? p->m * p->topk : p->m;
    if (p->stride_a == 0) p->stride_a = mul_add(rows_a, p->lda, 0);
    if (p->stride_b == 0) p->stride_b = mul_add(rows_b, p->ldb, 0);
    if (p->stride_c == 0) p->stride_c = mul_add(rows_c, p->ldc, 0);
    if (p->stride_a < 0 || p->stride_b < 0 || p->stride_c < 0)
        FAIL("operand size overflows int64");
    if (p->op == GG_OP_BATCHED && p->stride_a < mat_span(p->m, p->k, p->lda))
        FAIL("stride_a %lld overlaps batches", (long long)p->stride_a);
    if ((p->op == GG_OP_BATCHED || p->op == GG_OP_GROUPED_FWD || p->op == GG_OP_GROUPED_DGRAD ||
         p->op == GG_OP_MOE_SORTED) &&
        p->stride_b < mat_span(rows_b, rb, p->ldb))
        FAIL("stride_b %lld overlaps groups", (long long)p->stride_b);
    if ((p->op == GG_OP_BATCHED || p->op == GG_OP_GROUPED_WGRAD) &&
        p->stride_c < mat_span(rows_c, rc, p->ldc))
        FAIL("stride_c %lld overlaps groups", (long long)p->stride_c);
    /* Every span must be representable. */
    int64_t n_stack = p->op == GG_OP_DENSE ? 1 : p->groups;
    int64_t ld_rows = p->lda > p->ldc ? p->lda : p->ldc; /* leading dims of matrices with M rows */
    if (p->op == GG_OP_GROUPED_WGRAD && p->ldb > ld_rows)
        ld_rows = p->ldb; /* wgrad's X is [M, K] */
    if (mul_add(n_stack, p->stride_a > p->stride_b ? p->stride_a : p->stride_b, 0) < 0 ||
        mul_add(n_stack, p->stride_c, 0) < 0 || mul_add(p->m, ld_rows, 0) < 0 ||
        mul_add(rows_c, p->ldc, 0) < 0)
        FAIL("operand size overflows int64");
    if (gg_dtype_bytes(p->a_dtype, gg_problem_a_span(p)) == GG_SIZE_MAX ||
        gg_dtype_bytes(p->b_dtype, gg_problem_b_span(p)) == GG_SIZE_MAX ||
        gg_dtype_bytes(p->c_dtype, gg_problem_c_span(p)) == GG_SIZE_MAX)
        FAIL("operand size in bytes overflows int64");
    if ((unsigned)p->scaling > GG_SCALING_BLOCKWISE)
        FAIL("unknown scaling recipe %d", (int)p->scaling);
    if (p->scaling == GG_SCALING_BLOCKWISE && !gg_scaling_op_ok(p->scaling, p->op, p->b_layout))
        FAIL("blockwise scaling needs the reduction along K or grouped dgrad (not wgrad, not "
             "batched with B as KN)");
    if (!gg_scaling_op_ok(p->scaling, p->op, p->b_layout))
        FAIL("this scaling recipe needs the reduction along K (grouped_fwd, dense, moe_sorted, "
             "batched with B as NK)");
    if ((p->scaling == GG_SCALING_MX || p->scaling == GG_SCALING_MX_B) && p->k % GG_MX_BLOCK != 0)
        FAIL("K = %lld is not a multiple of the MX block %d", (long long)p->k, GG_MX_BLOCK);
    if (p->bias_dtype != GG_DTYPE_NONE &&
        (p->op == GG_OP_GROUPED_DGRAD || p->op == GG_OP_GROUPED_WGRAD))
        FAIL("bias is defined for grouped_fwd, batched, dense and moe_sorted only");
    return GG_OK;
}

enum gg_status gg_problem_check(struct gg_problem *p, char *err, size_t err_len)
{
    enum gg_status st = gg_problem_check_geometry(p, err, err_len);
    if (st == GG_OK && p->op == GG_OP_MOE_SORTED)
        st = check_moe_routing(p, err, err_len);
    return st;
}

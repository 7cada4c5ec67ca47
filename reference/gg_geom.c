/*
 * gg_geom.c — geometry of a problem: which part of C each group owns, how far each operand
 * reaches in memory, packed defaults for leading dimensions and strides, and the validity rules
 * every kernel may assume. All arithmetic is int64_t with overflow checks.
 */
#include <stdio.h>

#include "reference/gg_ref.h"

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

void gg_problem_out_block(const struct gg_problem *p, int64_t g, struct gg_out_block *b)
{
    int64_t rows0 = is_grouped(p->op) ? p->group_offs[g] : 0;
    int64_t len = is_grouped(p->op) ? p->group_lens[g] : 0;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        *b = (struct gg_out_block){rows0 * p->ldc, len, p->n, p->ldc, p->k};
        break;
    case GG_OP_GROUPED_DGRAD:
        *b = (struct gg_out_block){rows0 * p->ldc, len, p->k, p->ldc, p->n};
        break;
    case GG_OP_GROUPED_WGRAD:
        *b = (struct gg_out_block){g * p->stride_c, p->n, p->k, p->ldc, len};
        break;
    case GG_OP_BATCHED:
        *b = (struct gg_out_block){g * p->stride_c, p->m, p->n, p->ldc, p->k};
        break;
    default:
        *b = (struct gg_out_block){0, p->m, p->n, p->ldc, p->k};
        break;
    }
}

int64_t gg_problem_out_elems(const struct gg_problem *p)
{
    int64_t total = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        total += b.rows * b.cols;
    }
    return total;
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
    default: return mat_span(p->m, p->k, p->lda);
    }
}

int64_t gg_problem_b_span(const struct gg_problem *p)
{
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD: return stack_span(p->groups, p->stride_b, mat_span(p->n, p->k, p->ldb));
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
    default: return mat_span(p->m, p->n, p->ldc);
    }
}

int64_t gg_problem_a_scale_count(const struct gg_problem *p)
{
    if (p->scaling == GG_SCALING_TENSOR)
        return 1;
    if (p->scaling != GG_SCALING_MX)
        return 0;
    int64_t rows = p->op == GG_OP_BATCHED ? p->groups * p->m : p->m;
    return rows * (p->k / GG_MX_BLOCK);
}

int64_t gg_problem_b_scale_count(const struct gg_problem *p)
{
    if (p->scaling == GG_SCALING_TENSOR)
        return 1;
    if (p->scaling != GG_SCALING_MX)
        return 0;
    int64_t mats = p->op == GG_OP_DENSE ? 1 : p->groups;
    return mats * p->n * (p->k / GG_MX_BLOCK);
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
    default: *ra = p->k; *rb = p->k; *rc = p->n; break;
    }
}

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); return GG_E_INVAL; } while (0)

/* a*b + c without overflow, or -1. All inputs are ≥ 0. */
static int64_t mul_add(int64_t a, int64_t b, int64_t c)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
        return -1;
    return r;
}

enum gg_status gg_problem_check(struct gg_problem *p, char *err, size_t err_len)
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
    int64_t rows_c = p->op == GG_OP_GROUPED_WGRAD ? p->n : p->m;
    if (p->stride_a == 0) p->stride_a = mul_add(rows_a, p->lda, 0);
    if (p->stride_b == 0) p->stride_b = mul_add(rows_b, p->ldb, 0);
    if (p->stride_c == 0) p->stride_c = mul_add(rows_c, p->ldc, 0);
    if (p->stride_a < 0 || p->stride_b < 0 || p->stride_c < 0)
        FAIL("operand size overflows int64");
    if (p->op == GG_OP_BATCHED && p->stride_a < mat_span(p->m, p->k, p->lda))
        FAIL("stride_a %lld overlaps batches", (long long)p->stride_a);
    if ((p->op == GG_OP_BATCHED || p->op == GG_OP_GROUPED_FWD || p->op == GG_OP_GROUPED_DGRAD) &&
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
        mul_add(n_stack, p->stride_c, 0) < 0 || mul_add(p->m, ld_rows, 0) < 0)
        FAIL("operand size overflows int64");
    if (p->scaling == GG_SCALING_MX) {
        int along_k = p->op == GG_OP_GROUPED_FWD || p->op == GG_OP_DENSE ||
                      (p->op == GG_OP_BATCHED && p->b_layout == GG_LAYOUT_NK);
        if (!along_k)
            FAIL("MX scaling needs the reduction along K (grouped_fwd, dense, batched with B as NK)");
        if (p->k % GG_MX_BLOCK != 0)
            FAIL("K = %lld is not a multiple of the MX block %d", (long long)p->k, GG_MX_BLOCK);
    }
    return GG_OK;
}

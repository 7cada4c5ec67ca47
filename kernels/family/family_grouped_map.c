/*
 * family_grouped_map.c — the addressing of the grouped ops (fwd NT, dgrad NN, variable-K wgrad
 * TN) shared by the grouped kernel families on every backend: packed defaults, the block of C
 * each group owns and where its operands start (with the 32-bit offset arithmetic of two real
 * bugs re-created on request), which operands a problem touches, and the checks of its sizes and
 * strides.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/family/family.h"

int family_is_grouped_op(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* Elements of a row of A and of C: fwd reads X [M,K] and writes Y [M,N]; dgrad and wgrad read
   dY [M,N], and write dX [M,K] or dW_g [N,K]. */
static int64_t row_a(enum gg_op op, int64_t n, int64_t k)
{
    return op == GG_OP_GROUPED_FWD ? k : n;
}

static int64_t row_c(enum gg_op op, int64_t n, int64_t k)
{
    return op == GG_OP_GROUPED_FWD ? n : k;
}

void family_grouped_map_init(const struct gg_problem *p, const int64_t *offs,
                             struct family_grouped_map *m)
{
    memset(m, 0, sizeof *m);
    m->op = p->op;
    m->groups = p->groups;
    m->m = p->m;
    m->n = p->n;
    m->k = p->k;
    m->lda = p->lda != 0 ? p->lda : row_a(p->op, p->n, p->k);
    m->ldb = p->ldb != 0 ? p->ldb : p->k;
    m->ldc = p->ldc != 0 ? p->ldc : row_c(p->op, p->n, p->k);
    m->stride_b = p->stride_b != 0 ? p->stride_b : p->n * m->ldb; /* W_g is N rows of ldb */
    m->stride_c = p->stride_c != 0 ? p->stride_c : p->n * m->ldc; /* dW_g is N rows of ldc */
    m->offs = offs;
    int transposed_a = p->op == GG_OP_GROUPED_WGRAD;
    m->a_si = transposed_a ? 1 : m->lda;
    m->a_sr = transposed_a ? m->lda : 1;
    m->b_sr = p->op == GG_OP_GROUPED_FWD ? 1 : m->ldb;
    m->b_sj = p->op == GG_OP_GROUPED_FWD ? m->ldb : 1;
    m->split = gg_kopt_get(p, "split_k", 1);
}

/* x·y as the int arithmetic of a real kernel computes it when flagged: the product of two int32
   values wraps modulo 2^32 into [-2^31, 2^31) (done in uint32 here, where wrapping is defined),
   so past 2^31 elements it points at the wrong group or before the buffer. */
static int64_t offset(int i32, int64_t x, int64_t y)
{
    if (!i32)
        return x * y;
    uint32_t w = (uint32_t)x * (uint32_t)y;
    return w <= (uint32_t)INT32_MAX ? (int64_t)w : (int64_t)w - ((int64_t)1 << 32);
}

struct family_grouped_block family_grouped_block_of(const struct family_grouped_map *m, int64_t g)
{
    int64_t row0 = m->offs[g], len = m->offs[g + 1] - m->offs[g];
    int64_t w_off = offset(m->i32_group_base, g, m->stride_b);
    switch (m->op) {
    case GG_OP_GROUPED_FWD:
        return (struct family_grouped_block){g, row0 * m->lda, w_off,
                                             offset(m->i32_row_offset, row0, m->ldc), row0, len,
                                             m->n, m->k};
    case GG_OP_GROUPED_DGRAD:
        return (struct family_grouped_block){g, row0 * m->lda, w_off,
                                             offset(m->i32_row_offset, row0, m->ldc), row0, len,
                                             m->k, m->n};
    default:
        return (struct family_grouped_block){g, offset(m->i32_row_offset, row0, m->lda),
                                             row0 * m->ldb, g * m->stride_c, 0, m->n, m->k, len};
    }
}

int family_grouped_ws_map(const struct gg_problem *p, struct family_grouped_map *m)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split <= 1 || split > FAMILY_SPLIT_K_MAX || !family_is_grouped_op(p->op) || p->groups < 0 ||
        p->group_offs == NULL)
        return 0;
    family_grouped_map_init(p, p->group_offs, m);
    return 1;
}

struct family_grouped_use family_grouped_uses(const struct family_grouped_map *m)
{
    int any_rows = m->m > 0, any_groups = m->groups > 0;
    int64_t rc = row_c(m->op, m->n, m->k);
    struct family_grouped_use u;
    u.a = any_rows && row_a(m->op, m->n, m->k) > 0;
    u.b = m->op == GG_OP_GROUPED_WGRAD ? any_rows && m->k > 0 : any_rows && m->n > 0 && m->k > 0;
    u.c = m->op == GG_OP_GROUPED_WGRAD ? any_groups && m->n > 0 && m->k > 0 : any_rows && rc > 0;
    return u;
}

enum gg_status family_grouped_check_sizes(const struct family_grouped_map *m, char *err,
                                          size_t err_len)
{
    if (m->groups < 0 || m->m < 0 || m->n < 0 || m->k < 0)
        return family_fail(err, err_len, GG_E_INVAL,
                           "negative size (groups %lld, m %lld, n %lld, k %lld)",
                           (long long)m->groups, (long long)m->m, (long long)m->n, (long long)m->k);
    return GG_OK;
}

enum gg_status family_grouped_check_strides(const struct family_grouped_map *m, char *err,
                                            size_t err_len)
{
    if (m->lda < row_a(m->op, m->n, m->k) || m->ldb < m->k || m->ldc < row_c(m->op, m->n, m->k) ||
        m->stride_b < 0 || m->stride_c < 0)
        return family_fail(err, err_len, GG_E_INVAL,
                           "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                           "stride_b %lld, stride_c %lld)",
                           (long long)m->lda, (long long)m->ldb, (long long)m->ldc,
                           (long long)m->stride_b, (long long)m->stride_c);
    return GG_OK;
}

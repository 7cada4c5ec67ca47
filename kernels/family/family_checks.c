/*
 * family_checks.c — the checks every kernel family makes on every backend: the parts of
 * supports() all families share (mutant names, integer options in range, grouped ops, bf16/f32
 * output with an f32 accumulator), and the checks of run() on the operand block (pointers
 * present and aligned, device group offsets consistent, a workspace that holds what the kernel
 * reported).
 */
#include <stdint.h>
#include <string.h>

#include "kernels/family/family.h"

int family_supports_mutant(const struct gg_problem *p, const char *const *mutants, char *why,
                           size_t why_len)
{
    return p->mutant == NULL || gg_mutant_list_check(p->mutant, mutants, NULL, why, why_len);
}

int family_supports_option(const struct gg_problem *p, const char *key, int64_t dflt, int64_t lo,
                           int64_t hi, char *why, size_t why_len)
{
    int64_t v = gg_kopt_get(p, key, dflt);
    if (v < lo || v > hi)
        return family_refuse(why, why_len, "%s %lld out of range %lld..%lld", key, (long long)v,
                             (long long)lo, (long long)hi);
    return 1;
}

int family_supports_no_split(const struct gg_problem *p, const char *what, char *why,
                             size_t why_len)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split != 1)
        return family_refuse(why, why_len, "split_k %lld not supported: %s has no split-K",
                             (long long)split, what);
    return 1;
}

int family_supports_grouped_op(const struct gg_problem *p, char *why, size_t why_len)
{
    if (!family_is_grouped_op(p->op))
        return family_refuse(why, why_len, "op %d not supported: grouped fwd, dgrad and wgrad only",
                             (int)p->op);
    return 1;
}

int family_supports_output(const struct gg_problem *p, char *why, size_t why_len)
{
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "output dtype %d not supported: bf16 or f32 only",
                             (int)p->c_dtype);
    if (p->acc_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "accumulator dtype %d not supported: f32 only",
                             (int)p->acc_dtype);
    return 1;
}

enum gg_status family_check_ptr(const void *ptr, int needed, size_t align, const char *name,
                                char *err, size_t err_len)
{
    if (needed && ptr == NULL)
        return family_fail(err, err_len, GG_E_INVAL, "operand %s is NULL", name);
    if ((uintptr_t)ptr % align != 0)
        return family_fail(err, err_len, GG_E_INVAL, "operand %s is not aligned to %zu bytes", name,
                           align);
    return GG_OK;
}

enum gg_status family_check_offsets(const int64_t *offs, int64_t groups, int64_t m, char *err,
                                    size_t err_len)
{
    if (offs == NULL)
        return family_fail(err, err_len, GG_E_INVAL, "group_offs_dev is NULL");
    if (offs[0] != 0)
        return family_fail(err, err_len, GG_E_INVAL, "group_offs_dev[0] = %lld, expected 0",
                           (long long)offs[0]);
    for (int64_t g = 0; g < groups; g++)
        if (offs[g + 1] < offs[g])
            return family_fail(err, err_len, GG_E_INVAL, "group_offs_dev decreases at group %lld",
                               (long long)g);
    if (offs[groups] != m)
        return family_fail(err, err_len, GG_E_INVAL,
                           "group_offs_dev[%lld] = %lld differs from m = %lld", (long long)groups,
                           (long long)offs[groups], (long long)m);
    return GG_OK;
}

enum gg_status family_check_workspace(const struct gg_operands *o, int needed, size_t bytes,
                                      int64_t split, char *err, size_t err_len)
{
    if (needed && (o->workspace == NULL || o->workspace_bytes < bytes ||
                   (uintptr_t)o->workspace % sizeof(float) != 0))
        return family_fail(err, err_len, GG_E_INVAL,
                           "the workspace must hold %zu bytes aligned to %zu (workspace_bytes() "
                           "for this problem, split_k %lld); got %zu bytes at %p",
                           bytes, sizeof(float), (long long)split, o->workspace_bytes,
                           o->workspace);
    return GG_OK;
}

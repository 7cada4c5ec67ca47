/*
 * mx_family.c — what the OCP MX-FP8 kernels accept on every backend: E4M3 or E5M2 payloads with
 * one E8M0 scale per 1x32 block along K (K a multiple of 32), bf16 or f32 out with f32
 * accumulation, an optional bf16 or f32 bias; the grouped fwd variant with split-K, the dense
 * GEMV (small M, no split-K) and tiled (split-K) variants, and the MoE sorted_token_ids variant
 * (no split-K).
 */
#include <stdint.h>

#include "kernels/family/family.h"

/* The dense tiled variant's range of M. */
#define TILED_MIN_M 8
#define TILED_MAX_M 64

/* The rules every MX kernel shares, for op. */
static int mx_supports(const struct gg_problem *p, enum gg_op op, const char *const *mutants,
                       char *why, size_t why_len)
{
    if (p->op != op)
        return family_refuse(why, why_len, "op %d not supported: this kernel runs op %d only",
                             (int)p->op, (int)op);
    if (p->scaling != GG_SCALING_MX)
        return family_refuse(
            why, why_len, "scaling %d not supported: MX scaling (E8M0 per 1x32 block along K) only",
            (int)p->scaling);
    if ((p->a_dtype != GG_DTYPE_E4M3 && p->a_dtype != GG_DTYPE_E5M2) ||
        (p->b_dtype != GG_DTYPE_E4M3 && p->b_dtype != GG_DTYPE_E5M2))
        return family_refuse(why, why_len,
                             "input dtypes %d/%d not supported: e4m3 or e5m2 MX payloads only",
                             (int)p->a_dtype, (int)p->b_dtype);
    if (!family_supports_output(p, why, why_len))
        return 0;
    if (p->bias_dtype != GG_DTYPE_NONE && p->bias_dtype != GG_DTYPE_BF16 &&
        p->bias_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "bias dtype %d not supported: bf16 or f32 only",
                             (int)p->bias_dtype);
    if (p->k % GG_MX_BLOCK != 0)
        return family_refuse(why, why_len, "K = %lld is not a multiple of the MX block %d",
                             (long long)p->k, GG_MX_BLOCK);
    return family_supports_mutant(p, mutants, why, why_len);
}

static int split_supported(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_supports_option(p, "split_k", 1, 1, FAMILY_SPLIT_K_MAX, why, why_len);
}

/* M must lie in lo..hi for the dense path called path. */
static int dense_m_supported(const struct gg_problem *p, const char *path, int64_t lo,
                             int64_t hi, char *why, size_t why_len)
{
    if (p->m < lo || p->m > hi)
        return family_refuse(why, why_len,
                             "M = %lld not supported: the %s path takes M in %lld..%lld",
                             (long long)p->m, path, (long long)lo, (long long)hi);
    return 1;
}

int family_mx_grouped_supports(const struct gg_problem *p, const char *const *mutants,
                               char *why, size_t why_len)
{
    return mx_supports(p, GG_OP_GROUPED_FWD, mutants, why, why_len) &&
           split_supported(p, why, why_len);
}

int family_mx_gemv_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                            size_t why_len)
{
    return mx_supports(p, GG_OP_DENSE, mutants, why, why_len) &&
           dense_m_supported(p, "GEMV", 0, FAMILY_MX_GEMV_MAX_M, why, why_len) &&
           family_supports_no_split(p, "the GEMV path", why, why_len);
}

int family_mx_tiled_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                             size_t why_len)
{
    return mx_supports(p, GG_OP_DENSE, mutants, why, why_len) &&
           dense_m_supported(p, "tiled", TILED_MIN_M, TILED_MAX_M, why, why_len) &&
           split_supported(p, why, why_len);
}

int family_moe_mx_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                           size_t why_len)
{
    return mx_supports(p, GG_OP_MOE_SORTED, mutants, why, why_len) &&
           family_supports_no_split(p, "the MoE kernel", why, why_len);
}

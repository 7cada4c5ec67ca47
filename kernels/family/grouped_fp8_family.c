/*
 * grouped_fp8_family.c — what the FP8 grouped kernels accept on every backend: grouped
 * fwd/dgrad/wgrad on a pair of OCP (e4m3, e5m2) or AMD fnuz (e4m3fnuz, e5m2fnuz) codes, never
 * the two encodings mixed nor e5m2 x e5m2, bf16 or f32 out, no bias, weights as [N, K], and
 * mutant names; the tensor-scaled kernels with one fp32 scale for A and one per matrix of B and
 * split_k, the finely scaled kernels with rowwise (fwd, dgrad, wgrad) or blockwise (fwd, dgrad)
 * scales and no options.
 */
#include <stdint.h>

#include "kernels/family/family.h"

static int is_ocp_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3 || t == GG_DTYPE_E5M2;
}

static int is_fnuz_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3FNUZ || t == GG_DTYPE_E5M2FNUZ;
}

/* The rules every FP8 grouped kernel shares, the op and the scaling aside. */
static int fp8_pair_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    int ocp = is_ocp_fp8(p->a_dtype) && is_ocp_fp8(p->b_dtype);
    int fnuz = is_fnuz_fp8(p->a_dtype) && is_fnuz_fp8(p->b_dtype);
    if ((is_ocp_fp8(p->a_dtype) && is_fnuz_fp8(p->b_dtype)) ||
        (is_fnuz_fp8(p->a_dtype) && is_ocp_fp8(p->b_dtype)))
        return family_refuse(why, why_len,
                             "input dtypes %d/%d not supported: fnuz mixed with OCP fp8",
                             (int)p->a_dtype, (int)p->b_dtype);
    if (!ocp && !fnuz)
        return family_refuse(why, why_len,
                             "input dtypes %d/%d not supported: fp8 inputs only (e4m3, e5m2, or "
                             "e4m3fnuz, e5m2fnuz)",
                             (int)p->a_dtype, (int)p->b_dtype);
    if (p->a_dtype == GG_DTYPE_E5M2 && p->b_dtype == GG_DTYPE_E5M2)
        return family_refuse(why, why_len, "e5m2 x e5m2 is not supported");
    if (!family_supports_output(p, why, why_len))
        return 0;
    if (p->bias_dtype != GG_DTYPE_NONE)
        return family_refuse(why, why_len, "bias not supported by this kernel");
    if (p->b_layout != GG_LAYOUT_NK)
        return family_refuse(why, why_len, "b_layout %d not supported: grouped weights are [N, K]",
                             (int)p->b_layout);
    return 1;
}

int family_fp8_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                        size_t why_len)
{
    if (!family_supports_grouped_op(p, why, why_len))
        return 0;
    if (p->scaling != GG_SCALING_TENSOR)
        return family_refuse(
            why, why_len,
            "scaling %d not supported: tensor-wise scaling only (a_scale one fp32, "
            "b_scale one fp32 per matrix of B)",
            (int)p->scaling);
    return fp8_pair_supports(p, why, why_len) &&
           family_supports_option(p, "split_k", 1, 1, FAMILY_SPLIT_K_MAX, why, why_len) &&
           family_supports_mutant(p, mutants, why, why_len);
}

int family_fp8_fine_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                             size_t why_len)
{
    if (!family_supports_grouped_op(p, why, why_len))
        return 0;
    if (p->scaling != GG_SCALING_ROWWISE && p->scaling != GG_SCALING_BLOCKWISE)
        return family_refuse(why, why_len,
                             "scaling %d not supported: rowwise or blockwise scaling only",
                             (int)p->scaling);
    if (p->scaling == GG_SCALING_BLOCKWISE && p->op == GG_OP_GROUPED_WGRAD)
        return family_refuse(why, why_len,
                             "blockwise scaling is not defined for grouped wgrad (its reduction "
                             "runs along the ragged M, which neither operand's blocks follow)");
    return fp8_pair_supports(p, why, why_len) &&
           family_supports_no_split(p, "this kernel", why, why_len) &&
           family_supports_mutant(p, mutants, why, why_len);
}

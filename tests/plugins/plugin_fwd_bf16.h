/*
 * plugin_fwd_bf16.h — what the test plugins of grouped forward bf16 GEMM share: the problems
 * they take and bf16 conversions. Test plugins are built as an outside team builds one, against
 * gg_kernel.h and the C library only; this header is theirs, not ggfuzz's.
 */
#ifndef PLUGIN_FWD_BF16_H
#define PLUGIN_FWD_BF16_H

#include <stdint.h>
#include <string.h>

#include "gg_kernel.h"

/* Why p is not a grouped forward GEMM with bf16 inputs, fp32 accumulation, a bf16 or f32 output,
   no scaling and no bias; NULL when it is. */
static inline const char *fwd_bf16_refusal(const struct gg_problem *p)
{
    if (p->op != GG_OP_GROUPED_FWD)
        return "grouped fwd only";
    if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16)
        return "bf16 inputs only";
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return "bf16 or f32 output only";
    if (p->acc_dtype != GG_DTYPE_F32)
        return "f32 accumulation only";
    if (p->scaling != GG_SCALING_NONE)
        return "unscaled inputs only";
    if (p->bias_dtype != GG_DTYPE_NONE)
        return "no bias";
    return NULL;
}

/* bf16 is the upper half of an IEEE binary32. */
static inline float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest, ties to even; a NaN stays a quiet NaN. */
static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#endif /* PLUGIN_FWD_BF16_H */

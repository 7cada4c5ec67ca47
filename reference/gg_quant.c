/*
 * gg_quant.c — quantisation of real data into scaled low-precision codes: the E8M0 scale of an
 * MX block under the OCP floor rule and under the ceil rule of TransformerEngine / cuBLAS (a
 * bit-exact emulation of its fp32 arithmetic), MX block quantisation, and the fp32 multiplier of
 * tensor-wise FP8 scaling. The arithmetic is in gg_gen_core.h (exact bit manipulation and
 * correctly rounded operations only), which the GPU generator compiles too.
 */
#include "reference/gg_gen_core.h"

uint8_t gg_mx_scale_code(double amax, enum gg_dtype elem, enum gg_mx_rule rule)
{
    return gg_core_mx_scale_code(amax, elem, rule);
}

void gg_mx_quantise_block(const double *v, int n, enum gg_dtype elem, enum gg_mx_rule rule,
                          uint8_t *scale, uint32_t *codes)
{
    gg_core_mx_quantise_block(v, n, elem, rule, GG_SAT_FINITE, scale, codes);
}

void gg_mx_quantise_block_sat(const double *v, int n, enum gg_dtype elem, enum gg_mx_rule rule,
                              enum gg_sat sat, uint8_t *scale, uint32_t *codes)
{
    gg_core_mx_quantise_block(v, n, elem, rule, sat, scale, codes);
}

float gg_tensor_scale(double amax, enum gg_dtype elem)
{
    return gg_core_tensor_scale(amax, elem);
}

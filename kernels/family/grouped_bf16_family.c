/*
 * grouped_bf16_family.c — what the BF16 grouped kernels accept on every backend (fwd NT, dgrad
 * NN, variable-K wgrad TN; bf16 in, f32 accumulation, bf16 or f32 out, no bias): the options
 * split_k and lens_from, the streams kernels' options, and mutant names.
 */
#include <stdint.h>

#include "kernels/family/family.h"

int family_bf16_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                         size_t why_len)
{
    if (!family_supports_grouped_op(p, why, why_len))
        return 0;
    if (p->scaling == GG_SCALING_MX)
        return family_refuse(why, why_len, "scaling mx not supported: bf16 kernel");
    if (p->scaling != GG_SCALING_NONE)
        return family_refuse(why, why_len, "scaling %d not supported: bf16 kernel",
                             (int)p->scaling);
    if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16)
        return family_refuse(why, why_len, "input dtypes %d/%d not supported: bf16 inputs only",
                             (int)p->a_dtype, (int)p->b_dtype);
    if (!family_supports_output(p, why, why_len))
        return 0;
    if (p->bias_dtype != GG_DTYPE_NONE)
        return family_refuse(why, why_len, "bias not supported: grouped bf16 kernel without bias");
    if (!family_supports_option(p, "split_k", 1, 1, FAMILY_SPLIT_K_MAX, why, why_len))
        return 0;
    int64_t lens_from = gg_kopt_get(p, "lens_from", 0);
    if (lens_from != 0 && lens_from != 1)
        return family_refuse(why, why_len, "lens_from %lld invalid: 0 (device array) or 1 (host)",
                             (long long)lens_from);
    return family_supports_mutant(p, mutants, why, why_len);
}

int family_bf16_streams_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                                 size_t why_len)
{
    if (!family_bf16_supports(p, mutants, why, why_len) ||
        !family_supports_option(p, "streams", FAMILY_STREAMS_DEFAULT, 1, FAMILY_STREAMS_MAX, why,
                                why_len))
        return 0;
    int64_t threshold = gg_kopt_get(p, "threshold", FAMILY_THRESHOLD_DEFAULT);
    if (threshold < 0)
        return family_refuse(why, why_len, "threshold %lld negative", (long long)threshold);
    return 1;
}

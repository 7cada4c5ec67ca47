/*
 * batched_family.c — what the batched kernels accept on every backend, one rule per kind:
 * bf16 (B as [N,K] or [K,N]), a8w8 (e4m3 or e4m3fnuz with per-token, per-128-K scales of A and
 * one scale per batch of B), a16wfp4 (bf16 times e2m1 weights with E8M0 1x32 scales) and
 * afp4wfp4 (e2m1 times e2m1, both MX-scaled); all with bf16 or f32 output, f32 accumulation,
 * an optional bf16 or f32 bias, split_k and mutant names.
 */
#include <stdint.h>

#include "kernels/family/family.h"

const struct family_batched family_batched_bf16 = {
    .label = "bf16", .scaling = GG_SCALING_NONE, .a_dtype = GG_DTYPE_BF16,
    .a_alt = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16, .b_alt = GG_DTYPE_BF16, .kn_ok = 1};
const struct family_batched family_batched_a8w8 = {
    .label = "a8w8", .scaling = GG_SCALING_BLOCK128, .a_dtype = GG_DTYPE_E4M3,
    .a_alt = GG_DTYPE_E4M3FNUZ, .b_dtype = GG_DTYPE_E4M3, .b_alt = GG_DTYPE_E4M3FNUZ, .kn_ok = 0};
const struct family_batched family_batched_a16wfp4 = {
    .label = "a16wfp4", .scaling = GG_SCALING_MX_B, .a_dtype = GG_DTYPE_BF16,
    .a_alt = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_E2M1, .b_alt = GG_DTYPE_E2M1, .kn_ok = 0};
const struct family_batched family_batched_afp4wfp4 = {
    .label = "afp4wfp4", .scaling = GG_SCALING_MX, .a_dtype = GG_DTYPE_E2M1,
    .a_alt = GG_DTYPE_E2M1, .b_dtype = GG_DTYPE_E2M1, .b_alt = GG_DTYPE_E2M1, .kn_ok = 0};

static const char *dtype_name(enum gg_dtype t)
{
    static const char *const names[GG_DTYPE_COUNT] = {
        "none", "f64", "f32", "f16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m1",
        "e8m0"};
    return (unsigned)t < GG_DTYPE_COUNT ? names[t] : "unknown";
}

static const char *scaling_name(enum gg_scaling s)
{
    static const char *const names[] = {"none",  "tensor",  "mx",       "block128",
                                        "mx_b", "rowwise", "blockwise"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

static int dtype_ok(enum gg_dtype t, enum gg_dtype want, enum gg_dtype alt)
{
    return t == want || t == alt;
}

/* E2M1 rows and matrices must start on a byte: leading dimensions and strides even. */
static int e2m1_ld_ok(enum gg_dtype t, int64_t ld, int64_t stride)
{
    return t != GG_DTYPE_E2M1 || (ld % 2 == 0 && stride % 2 == 0);
}

int family_batched_supports(const struct family_batched *r, const struct gg_problem *p,
                            const char *const *mutants, char *why, size_t why_len)
{
    if (p->op != GG_OP_BATCHED)
        return family_refuse(why, why_len, "op %d not supported: batched only", (int)p->op);
    if (p->scaling != r->scaling)
        return family_refuse(why, why_len, "scaling %s not supported: %s needs scaling %s",
                             scaling_name(p->scaling), r->label, scaling_name(r->scaling));
    if (!dtype_ok(p->a_dtype, r->a_dtype, r->a_alt) || !dtype_ok(p->b_dtype, r->b_dtype, r->b_alt))
        return family_refuse(why, why_len,
                             "input dtypes %s/%s not supported: %s takes %s A and %s B",
                             dtype_name(p->a_dtype), dtype_name(p->b_dtype), r->label,
                             dtype_name(r->a_dtype), dtype_name(r->b_dtype));
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "output dtype %s not supported: bf16 or f32 only",
                             dtype_name(p->c_dtype));
    if (p->acc_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "accumulator dtype %s not supported: f32 only",
                             dtype_name(p->acc_dtype));
    if (p->b_layout != GG_LAYOUT_NK && (p->b_layout != GG_LAYOUT_KN || !r->kn_ok))
        return family_refuse(why, why_len,
                             "layout %d of B not supported: %s takes B as [N,K] (its scales run "
                             "along K of B's rows)",
                             (int)p->b_layout, r->label);
    if ((r->scaling == GG_SCALING_MX || r->scaling == GG_SCALING_MX_B) && p->k % GG_MX_BLOCK != 0)
        return family_refuse(why, why_len, "K = %lld not supported: MX needs K a multiple of %d",
                             (long long)p->k, GG_MX_BLOCK);
    if (!e2m1_ld_ok(p->a_dtype, p->lda, p->stride_a) ||
        !e2m1_ld_ok(p->b_dtype, p->ldb, p->stride_b))
        return family_refuse(why, why_len,
                             "odd leading dimension or stride of an e2m1 operand (lda %lld, "
                             "stride_a %lld, ldb %lld, stride_b %lld): rows must start on a byte",
                             (long long)p->lda, (long long)p->stride_a, (long long)p->ldb,
                             (long long)p->stride_b);
    if (p->bias_dtype != GG_DTYPE_NONE && p->bias_dtype != GG_DTYPE_BF16 &&
        p->bias_dtype != GG_DTYPE_F32)
        return family_refuse(why, why_len, "bias dtype %s not supported: bf16 or f32 only",
                             dtype_name(p->bias_dtype));
    return family_supports_option(p, "split_k", 1, 1, FAMILY_SPLIT_K_MAX, why, why_len) &&
           family_supports_mutant(p, mutants, why, why_len);
}

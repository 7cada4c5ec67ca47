/*
 * mx_gpu.cu — the MX-FP8 kernels on the GPU, twins of mx_cpu.c and moe_mx_cpu.c:
 * mx_e4m3_<gpu>_grouped (grouped fwd, split-K), mx_e4m3_<gpu>_gemv (dense M <= 16, one 128-row
 * tile, no split-K) and moe_mx_e4m3_<gpu>_sorted (the fused-MoE sorted_token_ids layout: each
 * block_m block of ids is a group of gathered A rows and scattered C rows). E4M3/E5M2
 * payloads are decoded exactly to bf16; each 32-K block's tensor-core sum is scaled by
 * 2^(xa-127)·2^(xb-127) in one step from the row's and the column's E8M0 codes (decoded exactly,
 * 0xFF NaN) and added to the fp32 accumulator; bias in fp32, one rounding. Mutants: mx_k_tail
 * (the block count taken as (K - 1) / 32), e8m0_special (0x00 as 0, 0xFF as +Inf) and, for the
 * MoE kernel, sorted_ids_padding (padding ids not masked).
 */
#include "kernels/gpu/gpu_gemm_int.h"

[[maybe_unused]] static const char *const mx_mutants[] = {"mx_k_tail", "e8m0_special", NULL};

/* The MX recipe on a launch description: scales, bias, mutants. */
static void mx_recipe(const struct gg_problem *p, const struct gg_operands *o, gpu_grouped *P)
{
    P->recipe = GPU_R_MX;
    P->unit = GG_MX_BLOCK;
    P->k_groups = p->k / GG_MX_BLOCK;
    P->a_e8m0 = (const uint8_t *)o->a_scale;
    P->b_e8m0 = (const uint8_t *)o->b_scale;
    if (p->bias_dtype != GG_DTYPE_NONE) {
        P->bias = o->bias;
        P->bias_dtype = (int)p->bias_dtype;
    }
    P->e8m0_special = gg_mutant_is(p, "e8m0_special");
    if (gg_mutant_is(p, "mx_k_tail"))
        P->red_limit = (p->k - 1) / GG_MX_BLOCK * GG_MX_BLOCK;
}

/* Both scale arrays are read whenever a product is. */
static enum gg_status mx_check_scales(const struct gg_operands *o, int red, char *err,
                                      size_t err_len)
{
    enum gg_status st = family_check_ptr(o->a_scale, red, 1, "a_scale", err, err_len);
    return st != GG_OK ? st : family_check_ptr(o->b_scale, red, 1, "b_scale", err, err_len);
}

GG_GPU_ENTRY int grouped_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_mx_grouped_supports(p, mx_mutants, why, why_len);
}

GG_GPU_ENTRY size_t grouped_workspace_bytes(const struct gg_problem *p)
{
    struct family_grouped_map m;
    if (!grouped_supports(p, NULL, 0) || !family_grouped_ws_map(p, &m))
        return 0;
    struct gg_operands none;
    memset(&none, 0, sizeof none);
    gpu_grouped P = gpu_grouped_of(p, &none, &m);
    return gpu_list_ws(gpu_count_tiles(P, p->group_offs, 0, P.groups), P.split, 0);
}

GG_GPU_ENTRY enum gg_status grouped_run(const struct gg_problem *p, const struct gg_operands *o,
                                        char *err, size_t err_len)
{
    if (!grouped_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct family_grouped_map m;
    enum gg_status st = gpu_grouped_check(p, o, &m, 1, err, err_len);
    if (st != GG_OK || (st = mx_check_scales(o, p->m > 0 && p->n > 0 && p->k > 0, err,
                                               err_len)) != GG_OK)
        return st;
    gpu_grouped P = gpu_grouped_of(p, o, &m);
    mx_recipe(p, o, &P);
    int64_t tiles = gpu_count_tiles(P, p->group_offs, 0, P.groups);
    size_t used = gpu_list_ws(tiles, P.split, 0);
    if ((st = family_check_workspace(o, used > 0, used, P.split, err, err_len)) != GG_OK)
        return st;
    gpu_exec x = {0, 0, (cudaStream_t)o->stream};
    return gpu_run_list<uint8_t>(P, tiles, o->workspace, x, err, err_len);
}

GG_GPU_ENTRY int gemv_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_mx_gemv_supports(p, mx_mutants, why, why_len);
}

GG_GPU_ENTRY enum gg_status gemv_run(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    if (!gemv_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    gpu_grouped P = gpu_batched_of(p, o, 1);
    mx_recipe(p, o, &P);
    enum gg_status st = gpu_batched_check(P, 0, 1, err, err_len);
    if (st != GG_OK ||
        (st = mx_check_scales(o, p->m > 0 && p->n > 0 && p->k > 0, err, err_len)) != GG_OK)
        return st;
    gpu_exec x = {0, 0, (cudaStream_t)o->stream};
    return gpu_run_list<uint8_t>(P, gpu_count_tiles(P, NULL, 0, 1), NULL, x, err, err_len);
}

[[maybe_unused]] static const char *const moe_mutants[] = {"mx_k_tail", "e8m0_special",
                                                           "sorted_ids_padding", NULL};

GG_GPU_ENTRY int moe_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_moe_mx_supports(p, moe_mutants, why, why_len);
}

/* The routing of p from its host arrays: topk, block_m, whole blocks, experts in range. */
static enum gg_status moe_check(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    if (p->topk < 1 || p->block_m < 1 || p->m < 0 || p->n < 0 || p->k < 0 ||
        p->m > INT64_MAX / p->topk || p->sorted_len < 0 || p->sorted_len % p->block_m != 0)
        return family_fail(err, err_len, GG_E_INVAL, "moe needs topk >= 1, block_m >= 1 and whole "
                           "blocks (T %lld, topk %lld, block_m %lld, sorted_len %lld)",
                           (long long)p->m, (long long)p->topk, (long long)p->block_m,
                           (long long)p->sorted_len);
    if (p->sorted_len > 0 && (p->expert_ids == NULL || o->sorted_ids_dev == NULL ||
                              o->expert_ids_dev == NULL))
        return family_fail(err, err_len, GG_E_INVAL, "sorted or expert ids are NULL");
    for (int64_t blk = 0; blk < p->sorted_len / p->block_m; blk++)
        if (p->expert_ids[blk] < 0 || p->expert_ids[blk] >= p->groups)
            return family_fail(err, err_len, GG_E_INVAL, "expert_ids[%lld] = %d is outside 0..%lld",
                               (long long)blk, p->expert_ids[blk], (long long)p->groups - 1);
    return GG_OK;
}

GG_GPU_ENTRY enum gg_status moe_run(const struct gg_problem *p, const struct gg_operands *o,
                                    char *err, size_t err_len)
{
    if (!moe_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    enum gg_status st = moe_check(p, o, err, err_len);
    if (st != GG_OK)
        return st;
    gpu_grouped P = gpu_batched_of(p, o, p->sorted_len / p->block_m);
    P.op = GG_OP_MOE_SORTED;
    P.stride_b = p->stride_b != 0 ? p->stride_b : p->n * P.ldb;
    P.block_m = p->block_m;
    P.topk = p->topk;
    P.limit = gg_mutant_is(p, "sorted_ids_padding") ? INT64_MAX : p->m * p->topk;
    P.sorted_ids = o->sorted_ids_dev;
    P.expert_ids = o->expert_ids_dev;
    mx_recipe(p, o, &P);
    int64_t tiles = gpu_count_tiles(P, NULL, 0, P.groups);
    int work = tiles > 0 && p->k > 0;
    if ((st = family_check_ptr(o->a, work, 1, "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, work, 1, "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, tiles > 0, 2, "c", err, err_len)) != GG_OK ||
        (st = mx_check_scales(o, work, err, err_len)) != GG_OK)
        return st;
    gpu_exec x = {0, 0, (cudaStream_t)o->stream};
    return gpu_run_list<uint8_t>(P, tiles, NULL, x, err, err_len);
}

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_moe_mx_e4m3_gpu_sorted = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("moe_mx_e4m3", "sorted"),
    .summary = "MoE sorted_token_ids, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 tensor-core acc, "
               "bf16/f32 out, bias; one group of gathered rows per block_m block",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_MOE_SORTED),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GG_MX_BLOCK,
    .mutants = moe_mutants,
    .supports = moe_supports,
    .workspace_bytes = NULL,
    .run = moe_run,
};

extern "C" const struct gg_kernel gg_kernel_mx_e4m3_gpu_grouped = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("mx_e4m3", "grouped"),
    .summary = "grouped fwd, MX-FP8 (e4m3/e5m2, E8M0 1x32) scaled per 32-K block, fp32 "
               "tensor-core acc, bf16/f32 out, bias; split-K",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GG_MX_BLOCK,
    .mutants = mx_mutants,
    .supports = grouped_supports,
    .workspace_bytes = grouped_workspace_bytes,
    .run = grouped_run,
};

extern "C" const struct gg_kernel gg_kernel_mx_e4m3_gpu_gemv = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("mx_e4m3", "gemv"),
    .summary = "dense M <= 16, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 tensor-core acc, bf16/f32 "
               "out, bias; one 128-row tile per column block",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_DENSE),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GG_MX_BLOCK,
    .mutants = mx_mutants,
    .supports = gemv_supports,
    .workspace_bytes = NULL,
    .run = gemv_run,
};
#endif

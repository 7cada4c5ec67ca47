/*
 * batched_gpu.cu — the batched GEMM kernels on the GPU, twins of batched_cpu.c:
 * batched_bf16_<gpu>_tiled (bf16 in, B as [N,K] or [K,N], optional bias) and
 * batched_a8w8_<gpu>_tiled (e4m3 or e4m3fnuz A with fp32 scales per row and per 128 of K, e4m3
 * or e4m3fnuz B with one fp32 scale per batch: each 128-K group's tensor-core sum is scaled by
 * its row's scale and added, the total times the batch's scale in the epilogue). One tile list
 * over the batches on the grouped engine, split-K on 128-K group boundaries, the family's
 * supports() (kernels/family/family.h), and the mutants n_tail (the last partial N tile loads B
 * one column short) and i32_store_offset (C addressed by a 32-bit byte offset).
 */
#include "kernels/gpu/gpu_gemm_int.h"

[[maybe_unused]] static const char *const batched_mutants[] = {"n_tail", "i32_store_offset", NULL};

/* The launch description of p for kernel recipe r (plain bf16 or block128), checked. */
static enum gg_status batched_plan(const struct gg_problem *p, const struct gg_operands *o,
                                   int block128, gpu_grouped *P, int64_t *tiles, char *err,
                                   size_t err_len)
{
    *P = gpu_batched_of(p, o, p->groups);
    if (block128) {
        P->recipe = GPU_R_BLOCK128;
        P->unit = GG_BLOCK128;
        P->k_groups = (p->k + GG_BLOCK128 - 1) / GG_BLOCK128;
        P->a_scale = (const float *)o->a_scale;
        P->b_scale = (const float *)o->b_scale;
    }
    *tiles = gpu_count_tiles(*P, NULL, 0, P->groups);
    enum gg_status st = gpu_batched_check(*P, p->b_layout == GG_LAYOUT_KN, block128 ? 1 : 2,
                                          err, err_len);
    int out = *tiles > 0, red = out && p->k > 0;
    if (st == GG_OK && block128 &&
        ((st = family_check_ptr(o->a_scale, red, sizeof(float), "a_scale", err, err_len)) !=
             GG_OK ||
         (st = family_check_ptr(o->b_scale, out, sizeof(float), "b_scale", err, err_len)) != GG_OK))
        return st;
    return st;
}

static size_t plan_ws(const struct gg_problem *p)
{
    struct gg_operands none;
    memset(&none, 0, sizeof none);
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (p->op != GG_OP_BATCHED || split < 1 || split > FAMILY_SPLIT_K_MAX || p->m < 0 || p->n < 0 ||
        p->groups < 0)
        return 0;
    gpu_grouped P = gpu_batched_of(p, &none, p->groups);
    return gpu_list_ws(gpu_count_tiles(P, NULL, 0, P.groups), split, 0);
}

static enum gg_status batched_run(const struct family_batched *rule, int block128,
                                  const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    if (!family_batched_supports(rule, p, batched_mutants, err, err_len))
        return GG_E_UNSUPPORTED;
    gpu_grouped P;
    int64_t tiles = 0;
    enum gg_status st = batched_plan(p, o, block128, &P, &tiles, err, err_len);
    if (st != GG_OK)
        return st;
    size_t used = gpu_list_ws(tiles, P.split, 0);
    if ((st = family_check_workspace(o, used > 0, used, P.split, err, err_len)) != GG_OK)
        return st;
    gpu_exec x = {0, 0, (cudaStream_t)o->stream};
    if (block128)
        return gpu_run_list<uint8_t>(P, tiles, o->workspace, x, err, err_len);
    return gpu_run_list<uint16_t>(P, tiles, o->workspace, x, err, err_len);
}

GG_GPU_ENTRY int bf16_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_batched_supports(&family_batched_bf16, p, batched_mutants, why, why_len);
}

GG_GPU_ENTRY enum gg_status bf16_run(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    return batched_run(&family_batched_bf16, 0, p, o, err, err_len);
}

GG_GPU_ENTRY int a8w8_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_batched_supports(&family_batched_a8w8, p, batched_mutants, why, why_len);
}

GG_GPU_ENTRY enum gg_status a8w8_run(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    return batched_run(&family_batched_a8w8, 1, p, o, err, err_len);
}

GG_GPU_ENTRY size_t batched_workspace_bytes(const struct gg_problem *p)
{
    return plan_ws(p);
}

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_batched_bf16_gpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("batched_bf16", "tiled"),
    .summary = "batched, bf16 in, B as NK or KN, fp32 tensor-core acc, optional bias, bf16/f32 "
               "out; split-K",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_BATCHED),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GPU_BK,
    .mutants = batched_mutants,
    .supports = bf16_supports,
    .workspace_bytes = batched_workspace_bytes,
    .run = bf16_run,
};

extern "C" const struct gg_kernel gg_kernel_batched_a8w8_gpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("batched_a8w8", "tiled"),
    .summary = "batched a8w8: e4m3 A per-token per-128-K scales, e4m3 B per-batch scale, fp32 "
               "tensor-core acc; split-K",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_BATCHED),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GG_BLOCK128,
    .mutants = batched_mutants,
    .supports = a8w8_supports,
    .workspace_bytes = batched_workspace_bytes,
    .run = a8w8_run,
};
#endif

/*
 * grouped_fp8_gpu.cu — grouped_fp8_<gpu>_tiled, the GPU twin of grouped_fp8_cpu_tiled: grouped
 * fwd/dgrad/wgrad on 8-bit float codes (OCP e4m3/e5m2 or AMD e4m3fnuz/e5m2fnuz) with tensor-wise
 * fp32 scales. The loader decodes each code exactly to bf16 through a per-operand table in
 * shared memory (every fp8 value is a bf16 value, so the tensor-core products are exact and the
 * fnuz encodings need no hardware support), the tile accumulates unscaled in fp32, and the
 * epilogue multiplies by a_scale·b_scale[g] before one rounding, as the CPU kernel does.
 * Mutants: fnuz_as_ocp (fnuz codes decoded with the OCP table), i32_group_base (expert offset
 * g·stride_b in 32 bits), i32_byte_limit (loads through a 32-bit byte range).
 */
#include "kernels/gpu/gpu_gemm_int.h"

[[maybe_unused]] static const char *const fp8_mutants[] = {"fnuz_as_ocp", "i32_group_base", "i32_byte_limit",
                                          NULL};

/* The CPU kernel's rules (fp8 pairs, tensor scaling, outputs, split_k, the same mutants). */
GG_GPU_ENTRY int fp8_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return gg_kernel_grouped_fp8_cpu_tiled.supports(p, why, why_len);
}

GG_GPU_ENTRY size_t fp8_workspace_bytes(const struct gg_problem *p)
{
    struct cpu_grouped_map m;
    if (!cpu_grouped_ws_map(p, &m))
        return 0;
    struct gg_operands none;
    memset(&none, 0, sizeof none);
    gpu_grouped P = gpu_grouped_of(p, &none, &m);
    return gpu_list_ws(gpu_count_tiles(P, p->group_offs, 0, P.groups), P.split, 0);
}

/* fnuz_as_ocp: a fnuz operand decoded with the OCP table of the same field layout. */
static int decode_format(const struct gg_problem *p, enum gg_dtype t)
{
    if (gg_mutant_is(p, "fnuz_as_ocp") && t == GG_DTYPE_E4M3FNUZ)
        return GG_DTYPE_E4M3;
    if (gg_mutant_is(p, "fnuz_as_ocp") && t == GG_DTYPE_E5M2FNUZ)
        return GG_DTYPE_E5M2;
    return t;
}

GG_GPU_ENTRY enum gg_status fp8_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                              size_t err_len)
{
    if (!fp8_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct cpu_grouped_map m;
    enum gg_status st = gpu_grouped_check(p, o, &m, 1, err, err_len);
    if (st != GG_OK)
        return st;
    struct cpu_grouped_use use = cpu_grouped_uses(&m);
    if ((st = cpu_check_ptr(o->a_scale, use.c, sizeof(float), "a_scale", err, err_len)) !=
            GG_OK ||
        (st = cpu_check_ptr(o->b_scale, use.c, sizeof(float), "b_scale", err, err_len)) != GG_OK)
        return st;
    gpu_grouped P = gpu_grouped_of(p, o, &m);
    P.fmt_a = decode_format(p, p->a_dtype);
    P.fmt_b = decode_format(p, p->b_dtype);
    P.a_scale = (const float *)o->a_scale;
    P.b_scale = (const float *)o->b_scale;
    P.per_group_scale = p->op != GG_OP_GROUPED_WGRAD;
    P.recipe = GPU_R_TENSOR;
    int64_t tiles = gpu_count_tiles(P, p->group_offs, 0, P.groups);
    size_t used = gpu_list_ws(tiles, P.split, 0);
    if ((st = cpu_check_workspace(o, used > 0, used, P.split, err, err_len)) != GG_OK)
        return st;
    gpu_exec x = {0, 0, (cudaStream_t)o->stream};
    return gpu_run_list<uint8_t>(P, tiles, o->workspace, x, err, err_len);
}

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_grouped_fp8_gpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("grouped_fp8", "tiled"),
    .summary = "grouped fwd/dgrad/wgrad, fp8 (OCP or fnuz) in decoded exactly to bf16, tensor "
               "scales, fp32 tensor-core acc, bf16/f32 out; one CTA per tile, split-K",
    .backend = GG_GPU_BACKEND,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GPU_BK,
    .mutants = fp8_mutants,
    .supports = fp8_supports,
    .workspace_bytes = fp8_workspace_bytes,
    .run = fp8_run,
};
#endif

/*
 * grouped_fp8_gpu.cu — grouped_fp8_<gpu>_tiled, the GPU twin of grouped_fp8_cpu_tiled: grouped
 * fwd/dgrad/wgrad on 8-bit float codes (OCP e4m3/e5m2 or AMD e4m3fnuz/e5m2fnuz) with tensor-wise
 * fp32 scales. OCP formats run on Hopper's FP8 wgmma (gpu_wgmma_int.h), dgrad and wgrad on the
 * K-major copies it needs (gpu_transpose_int.h); fnuz formats (and OCP ones where wgmma does not
 * exist) are decoded exactly to bf16 through a per-operand table in shared memory (every fp8
 * value is a bf16 value, so the mma.sync products are exact). The tile accumulates unscaled in
 * fp32, and the epilogue multiplies by a_scale·b_scale[g] before one rounding, as the CPU kernel
 * does. Mutants: fnuz_as_ocp (fnuz codes read as OCP: decoded with the OCP table, or handed to
 * wgmma as OCP), i32_group_base (expert offset g·stride_b in 32 bits), i32_byte_limit (loads
 * through a 32-bit byte range), e5m2_inf_as_max (a software decoder reading the e5m2 infinities
 * as ±57344: its operands take the decode path, whose table holds the wrong values).
 */
#include "kernels/gpu/gpu_gemm_int.h"
#include "kernels/gpu/gpu_transpose_int.h"

[[maybe_unused]] static const char *const fp8_mutants[] = {"fnuz_as_ocp", "i32_group_base", "i32_byte_limit",
                                          "e5m2_inf_as_max", NULL};

/* The family's rules (fp8 pairs, tensor scaling, outputs, split_k, mutants). */
GG_GPU_ENTRY int fp8_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_fp8_supports(p, fp8_mutants, why, why_len);
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

/*
 * How a problem runs. OCP formats (as decoded) go to the wgmma main loop, on the K-major copies
 * of gpu_kmajor_plan_of for dgrad and wgrad; fnuz ones to the bf16 decode path (no copies).
 */
struct fp8_plan {
    int wg; /* GPU_WG_* format pair, or GPU_WG_NONE (bf16 decode path) */
    gpu_kmajor_plan copy;
};

static struct fp8_plan fp8_plan_of(const struct gg_problem *p, const struct family_grouped_map *m)
{
    struct fp8_plan pl;
    memset(&pl, 0, sizeof pl);
    /* e5m2_inf_as_max lives in a software decoder: its operands take the decode path. */
    pl.wg = gg_mutant_is(p, "e5m2_inf_as_max")
                ? GPU_WG_NONE
                : gpu_wg_formats(decode_format(p, p->a_dtype), decode_format(p, p->b_dtype));
    if (pl.wg != GPU_WG_NONE)
        pl.copy = gpu_kmajor_plan_of(p->op, m, 1);
    return pl;
}

GG_GPU_ENTRY size_t fp8_workspace_bytes(const struct gg_problem *p)
{
    if (p->group_offs == NULL || p->groups < 0)
        return 0;
    struct family_grouped_map m;
    family_grouped_map_init(p, p->group_offs, &m);
    struct fp8_plan pl = fp8_plan_of(p, &m);
    struct gg_operands none;
    memset(&none, 0, sizeof none);
    gpu_grouped P = gpu_grouped_of(p, &none, &m);
    size_t list = m.split > 1 ? gpu_list_ws(gpu_count_tiles(P, p->group_offs, 0, P.groups),
                                            m.split, 0)
                              : 0;
    return pl.copy.copies + list;
}

GG_GPU_ENTRY enum gg_status fp8_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                              size_t err_len)
{
    if (!fp8_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct family_grouped_map m;
    enum gg_status st = gpu_grouped_check(p, o, &m, 1, err, err_len);
    if (st != GG_OK)
        return st;
    struct family_grouped_use use = family_grouped_uses(&m);
    if ((st = family_check_ptr(o->a_scale, use.c, sizeof(float), "a_scale", err, err_len)) !=
            GG_OK ||
        (st = family_check_ptr(o->b_scale, use.c, sizeof(float), "b_scale", err, err_len)) != GG_OK)
        return st;
    gpu_grouped P = gpu_grouped_of(p, o, &m);
    P.fmt_a = decode_format(p, p->a_dtype);
    P.fmt_b = decode_format(p, p->b_dtype);
    P.inf_as_max = gg_mutant_is(p, "e5m2_inf_as_max");
    P.a_scale = (const float *)o->a_scale;
    P.b_scale = (const float *)o->b_scale;
    P.per_group_scale = p->op != GG_OP_GROUPED_WGRAD;
    P.recipe = GPU_R_TENSOR;
    struct fp8_plan pl = fp8_plan_of(p, &m);
    int64_t tiles = gpu_count_tiles(P, p->group_offs, 0, P.groups);
    size_t list = gpu_list_ws(tiles, P.split, 0);
    size_t copies = pl.copy.copies;
    if ((st = family_check_workspace(o, copies + list > 0, copies + list, P.split, err, err_len)) !=
        GG_OK)
        return st;
    cudaStream_t s = (cudaStream_t)o->stream;
    if (tiles > 0 && copies > 0 &&
        (st = gpu_kmajor_copies(pl.copy, &P, (uint8_t *)o->workspace, 1, s, err, err_len)) !=
            GG_OK)
        return st;
    gpu_finish_setup(&P);
    P.wg_formats = pl.wg;
    gpu_exec x = {0, 0, s};
    return gpu_run_list<uint8_t>(P, tiles, (uint8_t *)o->workspace + copies, x, err, err_len);
}

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_grouped_fp8_gpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("grouped_fp8", "tiled"),
    .summary = "grouped fwd/dgrad/wgrad, fp8 in (OCP on wgmma, promoted to fp32 every 128 K, "
               "persistent for bf16 out without split-K; fnuz decoded to bf16), tensor scales, "
               "bf16/f32 out; split-K",
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

/*
 * gpu_tma_int.h — Hopper's tensor memory accelerator (TMA, cp.async.bulk.tensor) as the loader
 * of the persistent wgmma kernel. A tensor map describes an operand as up to three dimensions of
 * elements (its reduction extent E, its rows R, its planes Z: the experts of a weight, the
 * experts' W_gᵀ copies of dgrad); one thread issues a stage's two 128-row boxes, each 128 bytes of
 * K wide, and the copy engine writes them in the 128-byte swizzle the wgmma descriptors read
 * (the layout gpu_wg_off computes for the cp.async loads) and completes them on the stage's full
 * barrier by their byte count. Past E, R or Z the engine writes zeros, which are the K tail, the
 * rows past a block and the last expert's missing rows. So the 256 threads' per-stage address
 * arithmetic, cp.async issue and barrier arrivals of the cp.async path become one thread's two
 * instructions. Only launches whose operands a map can describe take it (gpu_tma_maps_of); the
 * mutants, whose bugs live in the cp.async path's address arithmetic, never do.
 * Included by gpu_wgmma_int.h, whose pipeline it fills; the warp-specialized kernel that loads
 * this way is gpu_wg_ws_kernel of gpu_gemm_int.h.
 */
#ifndef GG_GPU_TMA_INT_H
#define GG_GPU_TMA_INT_H

#include <stdlib.h>

#include "kernels/gpu/gpu_tile_int.h"

/* The tensor maps of a launch's A and B, passed by value as a __grid_constant__ kernel
   parameter, and the element strides the kernel turns a tile's operand offset into box
   coordinates with: offset = z·s_z + y·s_mn + x. */
struct gpu_tmaps {
#if GG_GPU_HAVE_TMA
    CUtensorMap a, b;
#endif
    int64_t a_smn, a_sz, b_smn, b_sz; /* s_z 0: one plane */
};

/* Where a box of operand offset off (elements) starts: (x, y, z) as the tensor map counts. */
struct gpu_tcoord {
    int x, y, z;
};

__device__ __forceinline__ gpu_tcoord gpu_tcoord_of(int64_t off, int64_t s_mn, int64_t s_z)
{
    int64_t z = s_z > 0 ? off / s_z : 0, rem = off - z * s_z, y = rem / s_mn;
    return {(int)(rem - y * s_mn), (int)y, (int)z};
}

#if GG_GPU_HAVE_TMA
/* The mbarrier arrival that also announces tx bytes the copy engine will complete on it. */
__device__ __forceinline__ void gpu_mbar_arrive_tx(uint64_t *bar, unsigned tx)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                     gpu_smem_addr(bar)),
                 "r"(tx)
                 : "memory");
}

/* One box of map m at (x, y, z) into shared memory at dst (1024-byte aligned), completing its
   bytes on bar. */
__device__ __forceinline__ void gpu_tma_load(uint8_t *dst, const CUtensorMap *m, uint64_t *bar,
                                             gpu_tcoord c)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(gpu_smem_addr(dst)),
                 "l"((uint64_t)(uintptr_t)m), "r"(c.x), "r"(c.y), "r"(c.z),
                 "r"(gpu_smem_addr(bar))
                 : "memory");
}

/* cuTensorMapEncodeTiled, looked up through the runtime once (no link to the driver library). */
static inline PFN_cuTensorMapEncodeTiled_v12000 gpu_tma_encoder(void)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn =
        (PFN_cuTensorMapEncodeTiled_v12000)gpu_driver_entry("cuTensorMapEncodeTiled");
    return fn;
}

/* The map of an operand at base: E x R x Z elements of es bytes, rows s_mn and planes s_z
   elements apart (s_z 0: one plane), boxes of 128 bytes by 128 rows, 128-byte swizzle, zeros
   outside. 0 where the engine cannot describe it (alignment, strides of 2^40 bytes or more,
   extents from 2^31, which the signed box coordinates cannot reach) or the driver refuses. */
static inline int gpu_tma_encode(CUtensorMap *m, const void *base, int es, int64_t e, int64_t r,
                                 int64_t z, int64_t s_mn, int64_t s_z)
{
    const int64_t lim = (int64_t)1 << 40;
    int64_t sb = s_mn * es, zb = (s_z > 0 ? s_z : s_mn * r) * es;
    PFN_cuTensorMapEncodeTiled_v12000 enc = gpu_tma_encoder();
    if (enc == NULL || ((uintptr_t)base & 15) != 0 || e <= 0 || r <= 0 || z <= 0 ||
        e >= ((int64_t)1 << 31) || r >= ((int64_t)1 << 31) || z >= ((int64_t)1 << 31) ||
        sb <= 0 || sb % 16 != 0 || sb >= lim || zb % 16 != 0 || zb >= lim || zb <= 0)
        return 0;
    cuuint64_t dims[3] = {(cuuint64_t)e, (cuuint64_t)r, (cuuint64_t)z};
    cuuint64_t strides[2] = {(cuuint64_t)sb, (cuuint64_t)zb};
    cuuint32_t box[3] = {(cuuint32_t)(GPU_WG_BK / es), GPU_BM, 1}, one[3] = {1, 1, 1};
    return enc(m, es == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8, 3,
               (void *)base, dims, strides, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
#endif

/* Whether the persistent kernel may load through TMA: GGFUZZ_GPU_TMA=0 in the environment makes
   every launch take the cp.async loads (to compare the two; read at each launch). */
static inline int gpu_tma_enabled(void)
{
    const char *v = getenv("GGFUZZ_GPU_TMA");
    return v == NULL || strcmp(v, "0") != 0;
}

/*
 * The tensor maps of a grouped launch of P (its copies in place) whose operands have es-byte
 * elements, or 0 where the cp.async loads serve it: any mutant, split-K, a rescaling recipe, a
 * bias, a single-group launch, an operand a map cannot describe. The maps, per op (E the
 * reduction's extent, where the engine starts writing zeros):
 *   fwd    A: X, K x M;            B: W, K x N x groups (planes stride_b apart)
 *   dgrad  A: dY, N x M;           B: the W_gᵀ copies, N x K x groups (planes K·ld apart)
 *   wgrad  A: dY's copy, Mp x N;   B: X's copy, Mp x K (each group's run whole stages of zeros
 *          past its tokens, so a box never reads into the next group's run)
 * A box of rows past a group's block reads the next group's rows (fwd, dgrad) or the next
 * expert's (B of fwd and dgrad): rows of C the tile does not store.
 */
static inline int gpu_tma_maps_of(const gpu_grouped &P, int es, gpu_tmaps *M)
{
    memset(M, 0, sizeof *M);
#if GG_GPU_HAVE_TMA
    int op = P.op;
    if ((op != GG_OP_GROUPED_FWD && op != GG_OP_GROUPED_DGRAD && op != GG_OP_GROUPED_WGRAD) ||
        !gpu_tma_enabled() || P.mutant || !P.a_kmaj || !P.b_kmaj || P.split > 1 ||
        P.b_off_fixed >= 0 || P.bias != NULL || (P.recipe != GPU_R_PLAIN && P.recipe != GPU_R_TENSOR))
        return 0;
    if ((op == GG_OP_GROUPED_WGRAD || op == GG_OP_GROUPED_DGRAD) && P.remap == NULL)
        return 0;
    int64_t red = op == GG_OP_GROUPED_FWD ? P.k : P.n;
    M->a_smn = P.a_si;
    M->b_smn = P.b_sj;
    if (op == GG_OP_GROUPED_WGRAD)
        return gpu_tma_encode(&M->a, P.a, es, P.a_si, P.n, 1, P.a_si, 0) &&
               gpu_tma_encode(&M->b, P.b, es, P.b_sj, P.k, 1, P.b_sj, 0);
    int64_t rows_b = op == GG_OP_GROUPED_FWD ? P.n : P.k;
    M->b_sz = op == GG_OP_GROUPED_FWD ? P.stride_b : P.k * P.b_sj;
    /* the planes must not overlap for the offset to name its plane */
    if (P.groups > 1 && M->b_sz < rows_b * P.b_sj)
        return 0;
    return gpu_tma_encode(&M->a, P.a, es, red, P.m, 1, P.a_si, 0) &&
           gpu_tma_encode(&M->b, P.b, es, red, rows_b, P.groups, P.b_sj, M->b_sz);
#else
    (void)P;
    (void)es;
    return 0;
#endif
}

#endif /* GG_GPU_TMA_INT_H */

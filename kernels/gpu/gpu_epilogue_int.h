/*
 * gpu_epilogue_int.h — the epilogue of the grouped engine: a tile's fp32 sums times its scale,
 * plus the bias, each one fp32 operation as the CPU epilogue computes it, rounded once to C's
 * type and stored: staged through shared memory and copied out in 16-byte row chunks where the
 * launch has no bias or MoE rows, element by element otherwise. The mutants i32_store_offset
 * and tail_rows_unwritten live here.
 */
#ifndef GG_GPU_EPILOGUE_INT_H
#define GG_GPU_EPILOGUE_INT_H

#include "kernels/gpu/gpu_tile_int.h"

/* Element at of C as the stores address it: i32_store_offset sends its byte offset through
   32 bits, so an output past 2^32 bytes is written over its beginning. */
__device__ __forceinline__ int64_t gpu_c_index(const gpu_grouped &P, int64_t at)
{
    if (!P.store_wrap32)
        return at;
    uint64_t es = P.c_dtype == GG_DTYPE_BF16 ? 2 : 4;
    return (int64_t)((uint64_t)(uint32_t)((uint64_t)at * es) / es);
}

/* Stores one fp32 value of C at element at, rounded once (bf16) or as is (f32). */
__device__ __forceinline__ void gpu_store_c(const gpu_grouped &P, int64_t at, float v)
{
    at = gpu_c_index(P, at);
    if (P.c_dtype == GG_DTYPE_BF16)
        ((uint16_t *)P.c)[at] = gpu_f32_to_bf16(v);
    else
        ((float *)P.c)[at] = v;
}

/* The factor the epilogue multiplies by: a_scale·b_scale[g] (tensor), b_scale[g] (block128). */
__device__ __forceinline__ float gpu_tile_scale(const gpu_grouped &P, int64_t g)
{
    if (P.recipe == GPU_R_TENSOR)
        return __fmul_rn(P.a_scale[0], P.b_scale[P.per_group_scale ? g : 0]);
    return P.recipe == GPU_R_BLOCK128 ? P.b_scale[g] : 1.0f;
}

/* The epilogue of one element of column col (of the group's block): acc times the scale, plus
   the bias (EXTRA launches only), each one fp32 operation (no contraction), as the CPU epilogue
   computes it. */
template <bool EXTRA>
__device__ __forceinline__ float gpu_finish(const gpu_grouped &P, int64_t g, int64_t col, float v,
                                            float s)
{
    if (P.recipe == GPU_R_TENSOR || P.recipe == GPU_R_BLOCK128)
        v = __fmul_rn(v, s);
    if (EXTRA && P.bias != NULL) {
        int64_t at = g * P.n + col;
        float b = P.bias_dtype == GG_DTYPE_BF16 ? gpu_bf16_to_f32(((const uint16_t *)P.bias)[at])
                                                : ((const float *)P.bias)[at];
        v = __fadd_rn(v, b);
    }
    return v;
}

/* tail_rows_unwritten: the store stops at the last whole row tile of the output, so the rows of
   the output's final partial row tile are never written. */
__device__ __forceinline__ int gpu_tail_skipped(const gpu_grouped &P, const gpu_tile &tl)
{
    return P.tail_rows && P.op != GG_OP_GROUPED_WGRAD && tl.rows < GPU_BM &&
           tl.blk.row0 + tl.i0 + tl.rows == P.m;
}

/* Row pitch of the staged output tile: GPU_BN elements and 16 bytes, so that the 8 rows a
   warp's fragment pairs write start 4 banks apart (GPU_BM rows fit GPU_STG_BYTES). */
__host__ __device__ constexpr int gpu_out_pitch(int esize)
{
    return GPU_BN * esize + 16;
}

/*
 * The epilogue without a bias or MoE rows: each thread writes its finished values (scaled, in
 * C's type, adjacent columns in pairs) into the staged tile in shared memory stg, then the
 * block copies the tile's rows out in 16-byte chunks, whole 128-byte lines per warp where C's
 * rows are 16-byte aligned, element by element at a partial or misaligned chunk. The per-element
 * stores of the fragments it replaces were a quarter of the fp8 wgmma kernel's time. ES: C's
 * element size (bf16 or f32), so that the copy's index arithmetic is shifts.
 */
template <bool WG, int BAR, int ES>
static __device__ void gpu_store_staged_as(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                                           uint8_t *stg)
{
    constexpr int pitch = gpu_out_pitch(ES), per_chunk = 16 / ES, chunks = GPU_BN / per_chunk;
    float s = gpu_tile_scale(P, tl.mat);
    const float *a = &acc[0][0][0];
    gpu_team_sync<GPU_THREADS, BAR>(); /* every warp is done with the pipeline's shared memory */
    gpu_for_frag<WG>([&](int i, int row, int col) { /* pairs of columns: even e */
        if (i & 1)
            return;
        float v0 = gpu_finish<false>(P, tl.mat, tl.j0 + col, a[i], s);
        float v1 = gpu_finish<false>(P, tl.mat, tl.j0 + col + 1, a[i + 1], s);
        uint8_t *d = stg + row * pitch + col * ES;
        if constexpr (ES == 2)
            *(uint32_t *)d = gpu_f32x2_to_bf16x2(v0, v1);
        else
            *(float2 *)d = make_float2(v0, v1);
    });
    gpu_team_sync<GPU_THREADS, BAR>();
    int64_t c0 = tl.blk.c_off + tl.i0 * P.ldc + tl.j0;
    for (int e = threadIdx.x; e < tl.rows * chunks; e += GPU_THREADS) {
        int r = e / chunks, j = (e % chunks) * per_chunk;
        if (j >= tl.cols)
            continue;
        const uint8_t *src = stg + r * pitch + j * ES;
        int64_t at = c0 + r * P.ldc + j;
        uint8_t *dst = (uint8_t *)P.c + at * ES;
        if (j + per_chunk <= tl.cols && ((uintptr_t)dst & 15) == 0 && !P.store_wrap32) {
            *(uint4 *)dst = *(const uint4 *)src;
            continue;
        }
        for (int q = 0; q < per_chunk && j + q < tl.cols; q++)
            for (int y = 0; y < ES; y++)
                ((uint8_t *)P.c)[gpu_c_index(P, at + q) * ES + y] = src[q * ES + y];
    }
}

template <bool WG, int BAR>
static __device__ void gpu_store_staged(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                                        uint8_t *stg)
{
    if (P.c_dtype == GG_DTYPE_BF16)
        gpu_store_staged_as<WG, BAR, 2>(P, tl, acc, stg);
    else
        gpu_store_staged_as<WG, BAR, 4>(P, tl, acc, stg);
}

/* The epilogue that stores a tile into C. EXTRA: the launch may have a bias or MoE rows
   (without them the epilogue keeps fewer registers live). BAR: the barrier of the 256 threads
   that hold the tile (0: the block's). */
template <bool WG, bool EXTRA, int BAR = 0>
static __device__ void gpu_store_tile(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                                      uint8_t *stg)
{
    if (gpu_tail_skipped(P, tl))
        return;
    if (!EXTRA) {
        gpu_store_staged<WG, BAR>(P, tl, acc, stg);
        return;
    }
    const int64_t *c_row = tl.c_row;
    float s = gpu_tile_scale(P, tl.mat);
    int64_t c0 = tl.blk.c_off + tl.i0 * P.ldc + tl.j0;
    const float *a = &acc[0][0][0];
    gpu_for_frag<WG>([&](int i, int row, int col) {
        if (row >= tl.rows || col >= tl.cols || (c_row && c_row[row] < 0))
            return;
        int64_t at = c_row ? c_row[row] * P.ldc + tl.j0 + col : c0 + row * P.ldc + col;
        gpu_store_c(P, at, gpu_finish<EXTRA>(P, tl.mat, tl.j0 + col, a[i], s));
    });
}

#endif /* GG_GPU_EPILOGUE_INT_H */

/*
 * gpu_transpose_int.h — K-major copies of 8-bit operands for the wgmma path, which reads only
 * K-major fp8 (as cuBLASLt's FP8 GEMMs, and FP8 training stacks that keep transposed copies).
 * dgrad: each expert with tokens gets W_gᵀ ([K][ldt], ldt = N rounded up to 16) packed one
 * after another; wgrad: dY and X become [N][Mp] and [K][Mp], group g's tokens in columns
 * remap[g] .. (each group's run rounded up to 16 columns, so every run starts 16-byte aligned).
 * remap holds where each group starts in the copy, an exclusive scan computed on the device
 * from the device group offsets. The weight reads keep the fp8 mutants' arithmetic
 * (i32_group_base: expert offset in 32 bits; i32_byte_limit: offsets wrap at 2^32 bytes), which
 * is where those bugs would read wrongly.
 */
#ifndef GG_GPU_TRANSPOSE_INT_H
#define GG_GPU_TRANSPOSE_INT_H

#include "kernels/gpu/gpu_int.h"

#define GPU_TR_TILE 64

/* One transposing launch: dst[(item base) + c·ldd + col(r)] = src[(item base) + r·lds + c]. */
struct gpu_transpose {
    const uint8_t *src;
    uint8_t *dst;
    int64_t rows, cols, lds, ldd;
    int64_t groups;
    const int64_t *offs, *remap; /* device group offsets and the copy's group starts */
    int by_group;   /* 1: item g is expert g (rows x cols at g·src_stride), skipped when it has
                       no tokens, copied to remap[g], row r to column r; 0: one item, rows the
                       copy's Mp columns, row r of group g to column remap[g] + r - offs[g] and
                       each group's padding columns zero */
    int64_t src_stride;
    int i32_group_base, wrap32;
};

/* Exclusive scan over the groups of unit (dgrad: one unit per expert with tokens) or of each
   group's length rounded up to 16 (unit 0): remap[g], and remap[groups] the total. One block. */
__global__ void __launch_bounds__(256) gpu_remap_kernel(const int64_t *offs, int64_t groups,
                                                        int64_t unit, int64_t *remap)
{
    __shared__ int64_t sum[256];
    const int tid = threadIdx.x;
    int64_t base = 0;
    for (int64_t g0 = 0; g0 < groups; g0 += 256) {
        int64_t g = g0 + tid, v = 0;
        if (g < groups) {
            int64_t len = offs[g + 1] - offs[g];
            v = unit > 0 ? (len > 0 ? unit : 0) : (len + 15) / 16 * 16;
        }
        sum[tid] = v;
        __syncthreads();
        for (int off = 1; off < 256; off <<= 1) {
            int64_t w = tid >= off ? sum[tid - off] : 0;
            __syncthreads();
            sum[tid] += w;
            __syncthreads();
        }
        if (g < groups)
            remap[g] = base + sum[tid] - v;
        base += sum[255];
        __syncthreads();
    }
    if (tid == 0)
        remap[groups] = base;
}

/* The group that owns column d of a wgrad copy: the last g with remap[g] <= d (binary
   search; an empty group starts where the next one does, and the search lands on the one with
   tokens). */
__device__ __forceinline__ int64_t gpu_group_of_col(const int64_t *remap, int64_t groups, int64_t d)
{
    int64_t lo = 0, hi = groups - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (remap[mid] <= d)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* 64x64-byte tiles through shared memory, a grid-stride loop over (item, tile). A tile is 64
   columns of the copy (T.rows: N per expert in dgrad, Mp in wgrad) by 64 source columns. Each
   thread reads 16 bytes of the source row behind one copy column (none for a wgrad column of a
   group's zero padding) and writes 16 bytes of a copy row: by one vector access where the 16
   bytes are inside the operand, contiguous and aligned, else byte by byte. Walking the copy's
   columns, not the source rows, keeps every wgrad write aligned whatever the group offsets. */
__global__ void __launch_bounds__(256) gpu_transpose_kernel(const gpu_transpose T)
{
    __shared__ __align__(16) uint8_t t[GPU_TR_TILE][GPU_TR_TILE + 16];
    int64_t tr = (T.rows + GPU_TR_TILE - 1) / GPU_TR_TILE;
    int64_t tc = (T.cols + GPU_TR_TILE - 1) / GPU_TR_TILE;
    int64_t items = T.by_group ? T.groups : 1;
    const int lr = threadIdx.x >> 2, seg = (threadIdx.x & 3) * 16;
    for (int64_t it = blockIdx.x; it < items * tr * tc; it += gridDim.x) {
        int64_t g = it / (tr * tc), rem = it % (tr * tc);
        if (T.by_group && T.offs[g + 1] == T.offs[g])
            continue; /* uniform across the block */
        int64_t r0 = rem / tc * GPU_TR_TILE, c0 = rem % tc * GPU_TR_TILE;
        int64_t src0 = T.by_group ? gpu_offset(T.i32_group_base, g, T.src_stride) : 0;
        int64_t dst0 = T.by_group ? T.remap[g] : 0;
        /* the source row behind copy column r0 + lr, -1 for none */
        int64_t r = r0 + lr, c = c0 + seg;
        if (r >= T.rows) {
            r = -1;
        } else if (!T.by_group) {
            int64_t h = gpu_group_of_col(T.remap, T.groups, r);
            r = T.offs[h] + r - T.remap[h];
            r = r < T.offs[h + 1] ? r : -1;
        }
        int64_t at = src0 + r * T.lds + c;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r >= 0 && c + 16 <= T.cols && !T.wrap32 && ((uintptr_t)(T.src + at) & 15) == 0) {
            v = *(const uint4 *)(T.src + at);
        } else if (r >= 0) {
            uint8_t *b = (uint8_t *)&v;
            for (int j = 0; j < 16 && c + j < T.cols; j++) {
                int64_t e = at + j;
                b[j] = T.src[T.wrap32 ? (int64_t)((uint64_t)e & 0xFFFFFFFFull) : e];
            }
        }
        *(uint4 *)&t[lr][seg] = v;
        __syncthreads();
        /* copy row c0 + lr (a column of the source), copy columns r0 + seg .. + 15 */
        c = c0 + lr;
        r = r0 + seg;
        if (c < T.cols && r < T.rows) {
            uint4 w;
            uint8_t *b = (uint8_t *)&w;
#pragma unroll
            for (int j = 0; j < 16; j++)
                b[j] = t[seg + j][lr];
            uint8_t *d = T.dst + dst0 + c * T.ldd + r;
            if (r + 16 <= T.rows && ((uintptr_t)d & 15) == 0) {
                *(uint4 *)d = w;
            } else {
                for (int j = 0; j < 16 && r + j < T.rows; j++)
                    d[j] = b[j];
            }
        }
        __syncthreads();
    }
}

/* The group starts of a copy (gpu_remap_kernel) on stream s. */
static inline enum gg_status gpu_remap_run(const int64_t *offs, int64_t groups, int64_t unit,
                                           int64_t *remap, cudaStream_t s, char *err,
                                           size_t err_len)
{
    gpu_remap_kernel<<<1, 256, 0, s>>>(offs, groups, unit, remap);
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

/* Launches the transpose T (its remap filled first by gpu_remap_run) on stream s. */
static inline enum gg_status gpu_transpose_run(const gpu_transpose &T, cudaStream_t s, char *err,
                                               size_t err_len)
{
    int64_t tiles = gpu_ceil_div(T.rows, GPU_TR_TILE) * gpu_ceil_div(T.cols, GPU_TR_TILE) *
                    (T.by_group ? T.groups : 1);
    if (tiles == 0)
        return GG_OK;
    int sms = 0;
    enum gg_status st = gpu_sm_count(&sms, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t grid = tiles < (int64_t)sms * 8 ? tiles : (int64_t)sms * 8;
    gpu_transpose_kernel<<<(unsigned)grid, 256, 0, s>>>(T);
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

#endif /* GG_GPU_TRANSPOSE_INT_H */

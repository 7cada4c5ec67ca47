/*
 * gpu_splitk_int.h — split-K of the grouped engine. Slices of a tile hand a running fp32 sum
 * through one workspace slot in slice order (serial split-K: slice s waits on the tile's flag for
 * s, adds its partial, releases s + 1; the last slice runs the epilogue), or write one slot each
 * for a separate reduce kernel, which sums them in the order the CPU kernels do. The workspace
 * holds one wave of tiles: its flags and slots are laid out by the host functions at the end.
 * The mutant missing_fence lives here.
 */
#ifndef GG_GPU_SPLITK_INT_H
#define GG_GPU_SPLITK_INT_H

#include "kernels/gpu/gpu_epilogue_int.h"

/* (tile, slice) items per split-K wave: the workspace holds one wave's partials. */
#define GPU_WAVE_ITEMS 1024

/* Epilogue of a tile from the slots of its split slices: ((p0 + p1) + p2) + ..., the order the
   CPU kernels sum in, then the scale and one rounding. */
static __device__ void gpu_reduce_tile(const gpu_grouped &P, const gpu_tile &tl, const float *part)
{
    if (gpu_tail_skipped(P, tl))
        return;
    float s = gpu_tile_scale(P, tl.mat);
    int64_t c0 = tl.blk.c_off + tl.i0 * P.ldc + tl.j0;
    for (int64_t e = threadIdx.x; e < tl.rows * GPU_BN; e += GPU_THREADS) {
        int64_t r = e / GPU_BN, j = e % GPU_BN;
        if (j >= tl.cols)
            continue;
        float v = __ldcg(part + e);
        for (int64_t sl = 1; sl < P.split; sl++)
            v += __ldcg(part + sl * GPU_TILE_ELEMS + e);
        gpu_store_c(P, c0 + r * P.ldc + j, gpu_finish<true>(P, tl.mat, tl.j0 + j, v, s));
    }
}

/*
 * Writes the slice's partial into its slot: the warps' fragments are staged through shared
 * memory as a row-major fp32 tile, then copied out row by row (only the tile's logical elements,
 * row stride GPU_BN). missing_fence drops the barrier between staging and copying, a genuine
 * shared-memory race (racecheck reports it): threads copy elements other warps have not staged.
 */
template <bool WG>
static __device__ void gpu_write_slot(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                               float *stg, float *slot)
{
    __syncthreads(); /* every warp is done with the pipeline's shared memory */
    const float *a = &acc[0][0][0];
    gpu_for_frag<WG>([&](int i, int row, int col) { /* pairs of columns: even e */
        if ((i & 1) == 0)
            *(float2 *)(stg + row * GPU_STG_LD + col) = make_float2(a[i], a[i + 1]);
    });
    if (!P.missing_fence)
        __syncthreads();
    for (int e = threadIdx.x; e < GPU_BM * GPU_BN / 4; e += GPU_THREADS) {
        int r = e / (GPU_BN / 4), j = (e % (GPU_BN / 4)) * 4;
        if (r >= tl.rows || j >= tl.cols)
            continue;
        float4 v = *(const float4 *)(stg + r * GPU_STG_LD + j);
        float *d = slot + (int64_t)r * GPU_BN + j;
        if (j + 4 <= tl.cols && ((uintptr_t)d & 15) == 0) {
            *(float4 *)d = v;
        } else {
            const float *vv = &v.x;
            for (int q = 0; q < 4 && q < tl.cols - j; q++)
                d[q] = vv[q];
        }
    }
}

/* Serial split-K: adds the running sum of slices 0 .. sl-1 held in the slot to the fragments,
   ((p0 + p1) + p2) + ..., the order the CPU kernels sum in; gpu_take_turn first waits until it
   is slice sl's turn on the tile's flag. */
template <bool WG>
static __device__ void gpu_add_slot(const gpu_tile &tl, gpu_acc acc, const float *slot)
{
    float *a = &acc[0][0][0];
    gpu_for_frag<WG>([&](int i, int row, int col) {
        if (row < tl.rows && col < tl.cols)
            a[i] = __ldcg(slot + row * GPU_BN + col) + a[i];
    });
}

template <bool WG>
static __device__ void gpu_take_turn(const gpu_tile &tl, gpu_acc acc, volatile unsigned *flag,
                                     unsigned sl, const float *slot)
{
    if (threadIdx.x == 0)
        while (*flag != sl)
            ;
    __syncthreads();
    __threadfence();
    gpu_add_slot<WG>(tl, acc, slot);
}

/* Hands the tile to slice `next` once every warp's stores to the slot are visible. missing_fence
   drops the barrier: thread 0 releases the flag as soon as its own warp has stored, and the next
   slice (spinning on the flag) reads elements the other warps have not written yet. */
static __device__ void gpu_release(const gpu_grouped &P, volatile unsigned *flag, unsigned next)
{
    __threadfence();
    if (!P.missing_fence)
        __syncthreads();
    if (threadIdx.x == 0)
        *flag = next;
}

/*
 * missing_fence's handoff: a slice adds the slot's running sum without waiting for its turn on
 * the flag (the wait before the read-modify-write is missing), then counts itself in; the last
 * to arrive stores the tile, the others write their sums into the slot. Slices that finish close
 * together all read the slot before any has written it, so only the last one's partial reaches
 * the output, and which one that is changes from run to run. The slot writes also stage without
 * the staging barrier (the shared-memory race racecheck reports).
 */
template <bool WG, bool EXTRA>
static __device__ void gpu_unordered_turn(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                                          unsigned *flag, float *slot, float *stg,
                                          unsigned *turn)
{
    gpu_add_slot<WG>(tl, acc, slot);
    if (threadIdx.x == 0)
        *turn = atomicAdd(flag, 1u);
    __syncthreads();
    unsigned mine = *turn;
    if (mine + 1 == (unsigned)P.split) {
        gpu_store_tile<WG, EXTRA>(P, tl, acc, (uint8_t *)stg);
        if (threadIdx.x == 0)
            atomicExch(flag, 0u);
    } else {
        gpu_write_slot<WG>(P, tl, acc, stg, slot);
    }
    __syncthreads();
}

/* ---- host side ------------------------------------------------------------------------------ */

/* Tiles per split-K wave and the workspace of a list of `tiles` tiles: the flags (fused
   reduction only, padded to 256 bytes) and the wave's slots (one per tile fused, split per tile
   for the reduce launch). */
static inline int64_t gpu_wave_tiles(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return tiles;
    int64_t w = GPU_WAVE_ITEMS / split;
    return tiles < (w > 1 ? w : 1) ? tiles : (w > 1 ? w : 1);
}

static inline size_t gpu_ctr_bytes(int64_t tiles, int64_t split, int two_kernel)
{
    if (split <= 1 || two_kernel)
        return 0;
    return ((size_t)gpu_wave_tiles(tiles, split) * sizeof(unsigned) + 255) & ~(size_t)255;
}

static inline size_t gpu_list_ws(int64_t tiles, int64_t split, int two_kernel)
{
    if (split <= 1 || tiles == 0)
        return 0;
    int64_t slots = gpu_wave_tiles(tiles, split) * (two_kernel ? split : 1);
    return gpu_ctr_bytes(tiles, split, two_kernel) + (size_t)slots * GPU_SLOT_BYTES;
}

#endif /* GG_GPU_SPLITK_INT_H */

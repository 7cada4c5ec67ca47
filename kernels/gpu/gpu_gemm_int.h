/*
 * gpu_gemm_int.h — the grouped GEMM engine of the GPU kernels (fwd NT, dgrad NN, variable-K
 * wgrad TN; batched, dense and MoE sorted as one tile list each) for bf16 inputs and for 8-bit
 * float inputs: its kernels, their host launch, and the problem setup the .cu files of
 * kernels/gpu share. One CTA of 256 threads owns a 128x128 output tile (gpu_tile_int.h) and
 * computes it with the mma.sync main loop (gpu_mainloop_int.h) or, for OCP fp8 and the
 * persistent bf16 path on Hopper, the wgmma one (gpu_wgmma_int.h, loading by TMA where
 * gpu_tma_int.h can describe the operands); split-K slices meet in the workspace
 * (gpu_splitk_int.h), and the epilogue stores the tile (gpu_epilogue_int.h). The mutants of the
 * grouped families live in those parts at the places their real bugs live.
 */
#ifndef GG_GPU_GEMM_INT_H
#define GG_GPU_GEMM_INT_H

#include "kernels/gpu/gpu_mainloop_int.h"
#include "kernels/gpu/gpu_splitk_int.h"
#include "kernels/gpu/gpu_wgmma_int.h"

/*
 * The engine: item i of the launch is slice i mod split of tile t0 + i / split. Non-persistent
 * launches run one item per CTA; persistent ones stride over the items with a fixed grid, the
 * tile lookup's cursor moving forward only. WGF != GPU_WG_NONE: the fp8 main loop on wgmma for
 * that format pair (both operands K-major), one CTA per multiprocessor. EXTRA: the launch may have
 * a bias or the MoE layout (compiled out otherwise: those paths made the plain kernel spill).
 */
template <typename In, bool AK, bool BK, bool RESCALE, int WGF, bool EXTRA>
__global__ void __launch_bounds__(GPU_THREADS, RESCALE || WGF ? 1 : 2) gpu_grouped_kernel(const gpu_grouped P)
{
    constexpr bool WG = WGF != GPU_WG_NONE;
    extern __shared__ __align__(1024) uint8_t gpu_dyn_smem[];
    __shared__ gpu_scan sc;
    __shared__ uint16_t dec[2][256];
    __shared__ unsigned turn;
    __shared__ int64_t moe_rows[3][GPU_BM];
    if (sizeof(In) == 1 && !WG) {
        for (int c = threadIdx.x; c < 256; c += GPU_THREADS) {
            dec[0][c] = gpu_fp8_decode(P, P.fmt_a, (uint32_t)c);
            dec[1][c] = gpu_fp8_decode(P, P.fmt_b, (uint32_t)c);
        }
    }
    gpu_cursor cur = gpu_cursor_start(P);
    for (int64_t i = blockIdx.x; i < P.items; i += gridDim.x) {
        int64_t tl_idx = i / P.split, sl = i % P.split;
        gpu_tile tl;
        if (!gpu_locate(P, P.t0 + tl_idx, cur, sc, tl))
            return;
        if (EXTRA && P.op == GG_OP_MOE_SORTED)
            gpu_moe_rows(P, tl, moe_rows);
        gpu_operand a, b;
        int64_t r0 = gpu_tile_operands(P, tl, sl, a, b);
        if (EXTRA && P.op == GG_OP_MOE_SORTED)
            a.gather = moe_rows[2];
        gpu_acc acc;
        if constexpr (WG)
            gpu_wg_mainloop<WGF>(P, acc, a, b, r0, gpu_dyn_smem);
        else
            gpu_mainloop<In, AK, BK, RESCALE>(P, tl, acc, a, b, r0, (uint16_t *)gpu_dyn_smem,
                                              dec[0], dec[1]);
        if (P.mode == GPU_DIRECT) {
            gpu_store_tile<WG, EXTRA>(P, tl, acc, gpu_dyn_smem);
            __syncthreads();
            continue;
        }
        if (P.mode == GPU_PARTIAL) {
            float *part = P.slots + (tl_idx * P.split + sl) * GPU_TILE_ELEMS;
            gpu_write_slot<WG>(P, tl, acc, (float *)gpu_dyn_smem, part);
            __syncthreads();
            continue;
        }
        /* Serial split-K through the tile's slot; the last slice stores the tile and resets
           the flag for the next wave. */
        float *slot = P.slots + tl_idx * GPU_TILE_ELEMS;
        volatile unsigned *flag = P.ctr + tl_idx;
        if (P.missing_fence) {
            gpu_unordered_turn<WG, EXTRA>(P, tl, acc, (unsigned *)flag, slot, (float *)gpu_dyn_smem,
                                   &turn);
            continue;
        }
        if (sl > 0)
            gpu_take_turn<WG>(tl, acc, flag, (unsigned)sl, slot);
        if (sl + 1 < P.split) {
            gpu_write_slot<WG>(P, tl, acc, (float *)gpu_dyn_smem, slot);
            gpu_release(P, flag, (unsigned)sl + 1);
        } else {
            gpu_store_tile<WG, EXTRA>(P, tl, acc, gpu_dyn_smem);
            if (threadIdx.x == 0)
                *flag = 0;
        }
        __syncthreads();
    }
}

/* The reduce launch after GPU_PARTIAL: CTA i reduces wave tile i. */
static __global__ void __launch_bounds__(GPU_THREADS) gpu_reduce_kernel(const gpu_grouped P)
{
    __shared__ gpu_scan sc;
    gpu_cursor cur = gpu_cursor_start(P);
    gpu_tile tl;
    if (gpu_locate(P, P.t0 + blockIdx.x, cur, sc, tl))
        gpu_reduce_tile(P, tl, P.slots + (int64_t)blockIdx.x * P.split * GPU_TILE_ELEMS);
}

/* The persistent wgmma kernel's shared memory: the stage slots, the staged output tile (bf16),
   the stages' barriers. */
#define GPU_WGP_STG_OFF GPU_WG_PIPE_BYTES
#define GPU_WGP_BAR_OFF (GPU_WGP_STG_OFF + GPU_BM * gpu_out_pitch(2))
#define GPU_WGP_SMEM_BYTES (GPU_WGP_BAR_OFF + 2 * GPU_WG_STAGES * 8)

/*
 * The persistent wgmma engine (fp8, or bf16 where grouped_bf16_gpu.cu's wg_path applies) of a
 * launch without split-K, bias or MoE rows and with a bf16 output: a grid of one CTA per
 * multiprocessor strides over the tile list with one pipeline for its whole life. Once a
 * tile's sums are done it finds its next tile and issues that tile's first stages before
 * storing the current one, so the loads' latency hides behind the epilogue, which stages the
 * output outside the pipeline's slots. Per tile it saves the CTA start, the barriers' set-up
 * and an empty pipeline. Every thread loads by cp.async; gpu_wg_ws_kernel below is the same
 * engine where tensor maps describe the operands.
 */
template <int WGF>
__global__ void __launch_bounds__(GPU_THREADS, 1) gpu_wg_persistent_kernel(const gpu_grouped P)
{
    extern __shared__ __align__(1024) uint8_t gpu_dyn_smem[];
    __shared__ gpu_scan sc;
    gpu_wg_pipe pp = gpu_wg_pipe_init(gpu_dyn_smem, gpu_dyn_smem + GPU_WGP_BAR_OFF, NULL);
    __syncthreads();
    gpu_cursor cur = gpu_cursor_start(P);
    int64_t i = blockIdx.x;
    gpu_tile tl;
    if (i >= P.items || !gpu_locate<true>(P, P.t0 + i, cur, sc, tl))
        return;
    gpu_wg_job j;
    gpu_operand a, b;
    int64_t r0 = gpu_tile_operands(P, tl, 0, a, b);
    gpu_wg_job_of(pp, a, b, r0, gpu_wg_esize(WGF), P.wrap32, j);
    gpu_wg_prologue(pp, j, P.wrap32);
    for (;;) {
        gpu_acc acc;
        gpu_wg_consume<WGF, true>(pp, j, acc, P.wrap32);
        gpu_tile done = tl;
        i += gridDim.x;
        int more = i < P.items && gpu_locate<true>(P, P.t0 + i, cur, sc, tl);
        if (more) {
            r0 = gpu_tile_operands(P, tl, 0, a, b);
            gpu_wg_job_of(pp, a, b, r0, gpu_wg_esize(WGF), P.wrap32, j);
            gpu_wg_prologue(pp, j, P.wrap32);
        }
        gpu_store_tile<true, false>(P, done, acc, gpu_dyn_smem + GPU_WGP_STG_OFF);
        if (!more)
            return;
    }
}

/* The warp-specialized kernel's block: the two consumer warpgroups and a producer warpgroup, of
   which one warp works; the register limits the warpgroups move to (of 65536: 168 each at
   launch). */
#define GPU_WS_THREADS (GPU_THREADS + 128)
#define GPU_WS_PRODUCER_REGS 56
#define GPU_WS_CONSUMER_REGS 224

/* The producer warp's loop: the CTA's tiles in the consumers' order (its own lookup, a warp's
   scan), every stage of each by TMA from lane 0, up to GPU_WG_STAGES stages ahead of the
   consumers and across tile boundaries, the epilogues included. */
template <int WGF>
__device__ void gpu_wg_produce(const gpu_grouped &P, gpu_wg_pipe &pp, gpu_scan &sc)
{
    gpu_cursor cur = gpu_cursor_start(P);
    for (int64_t i = blockIdx.x; i < P.items; i += gridDim.x) {
        gpu_tile tl;
        if (!gpu_locate<true, 32, 1>(P, P.t0 + i, cur, sc, tl))
            return;
        gpu_operand a, b;
        gpu_wg_job j;
        int64_t r0 = gpu_tile_operands(P, tl, 0, a, b);
        gpu_wg_job_of(pp, a, b, r0, gpu_wg_esize(WGF), 0, j);
        if ((threadIdx.x & 31) == 0)
            for (int kt = 0; kt < j.ktiles; kt++)
                gpu_wg_fill_tma(pp, j, pp.n0 + kt, kt);
        pp.n0 += (unsigned)j.ktiles;
        gpu_team_sync<32, 1>();
    }
}

/* The stages of tile tl (no split-K): all the consumers of gpu_wg_ws_kernel need of its job. */
template <int WGF> __device__ __forceinline__ int gpu_wg_tile_stages(const gpu_grouped &P, gpu_tile &tl)
{
    gpu_operand a, b;
    int64_t r0 = gpu_tile_operands(P, tl, 0, a, b);
    return gpu_wg_ktiles(a, r0, gpu_wg_esize(WGF));
}

/*
 * The persistent wgmma engine where gpu_tma_maps_of describes the operands, warp-specialized as
 * CUTLASS's Hopper kernels are: a producer warp (gpu_wg_produce) keeps the pipeline's slots
 * filled by TMA while the two consumer warpgroups (threads 0 .. 255, as in the other kernels)
 * only multiply and store, synchronised among themselves by named barrier 2 (the producer warp
 * syncs by __syncwarp, and nothing by barrier 0 after the roles split). The producer gives
 * up registers to the consumers (setmaxnreg). Its loads run GPU_WG_STAGES deep instead of the
 * GPU_WG_AHEAD of the cp.async kernel, and keep going while the consumers store a tile.
 */
template <int WGF>
__global__ void __launch_bounds__(GPU_WS_THREADS, 1)
    gpu_wg_ws_kernel(const gpu_grouped P, const GG_GPU_GRID_CONSTANT gpu_tmaps M)
{
    extern __shared__ __align__(1024) uint8_t gpu_dyn_smem[];
    __shared__ gpu_scan sc[2]; /* the consumers' lookup, the producer's */
    gpu_wg_pipe pp = gpu_wg_pipe_init(gpu_dyn_smem, gpu_dyn_smem + GPU_WGP_BAR_OFF, &M);
    __syncthreads();
#if GG_GPU_HAVE_WGMMA
    if (threadIdx.x >= GPU_THREADS) {
        gpu_setmaxnreg_dec<GPU_WS_PRODUCER_REGS>();
        if (threadIdx.x < GPU_THREADS + 32)
            gpu_wg_produce<WGF>(P, pp, sc[1]);
        return;
    }
    gpu_setmaxnreg_inc<GPU_WS_CONSUMER_REGS>();
#endif
    /* The consumers find the next tile (and read its group's offsets) before storing the
       current one, so those loads' latency hides behind the epilogue. */
    gpu_cursor cur = gpu_cursor_start(P);
    int64_t i = blockIdx.x;
    gpu_tile tl;
    gpu_wg_job j;
    int more = i < P.items && gpu_locate<true, GPU_THREADS, 2>(P, P.t0 + i, cur, sc[0], tl);
    if (more)
        j.ktiles = gpu_wg_tile_stages<WGF>(P, tl);
    while (more) {
        gpu_acc acc;
        gpu_wg_consume<WGF, false>(pp, j, acc, 0);
        gpu_tile done = tl;
        i += gridDim.x;
        more = i < P.items && gpu_locate<true, GPU_THREADS, 2>(P, P.t0 + i, cur, sc[0], tl);
        if (more)
            j.ktiles = gpu_wg_tile_stages<WGF>(P, tl);
        gpu_store_tile<true, false, 2>(P, done, acc, gpu_dyn_smem + GPU_WGP_STG_OFF);
    }
}

/* ---- host side ------------------------------------------------------------------------------ */

/* How a tile list is launched. */
struct gpu_exec {
    int persistent;    /* fixed grid (SMs x occupancy) striding over the items */
    int two_kernel;    /* split-K reduced by a separate launch (no counters) */
    cudaStream_t stream;
};

/* Launches kern(args...) (one item per CTA, or with x.persistent a grid of as many CTAs as fit
   at once striding over the items) in blocks of threads with smem bytes of dynamic shared
   memory. */
template <typename K, typename... Args>
static enum gg_status gpu_start(K kern, int smem, int threads, int64_t items, const gpu_exec &x,
                                char *err, size_t err_len, const Args &...args)
{
    GG_GPU_CHECK(cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      smem));
    int64_t grid = items;
    if (x.persistent) {
        int sms = 0, per_sm = 0;
        enum gg_status st = gpu_sm_count(&sms, err, err_len);
        if (st != GG_OK)
            return st;
        GG_GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)kern,
                                                                   threads, smem));
        int64_t cap = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
        grid = items < cap ? items : cap;
    }
    if (grid > 0x7FFFFFFF)
        return family_fail(err, err_len, GG_E_UNSUPPORTED, "%lld CTAs exceed the grid limit",
                           (long long)grid);
    kern<<<(unsigned)grid, (unsigned)threads, smem, x.stream>>>(args...);
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

template <typename In, bool AK, bool BK, bool RESCALE, int WGF = GPU_WG_NONE, bool EXTRA = false>
static enum gg_status gpu_launch_t(const gpu_grouped &P, int64_t items, const gpu_exec &x,
                                   char *err, size_t err_len)
{
    return gpu_start(gpu_grouped_kernel<In, AK, BK, RESCALE, WGF, EXTRA>,
                     WGF != GPU_WG_NONE ? GPU_WG_SMEM_BYTES : GPU_SMEM_BYTES, GPU_THREADS, items,
                     x, err, err_len, P);
}

/* The wgmma launch of format pair WGF: the persistent kernel where it applies (no split-K, bf16
   out; grouped launches never have a bias or MoE rows; bf16 takes the wgmma path only there, see
   wg_path of grouped_bf16_gpu.cu), loading by TMA where the maps describe its operands, else the
   engine. */
template <int WGF>
static enum gg_status gpu_launch_wg(const gpu_grouped &P, int64_t items, const gpu_exec &x,
                                    char *err, size_t err_len)
{
    if constexpr (WGF != GPU_WG_BF16) {
        if (P.mode != GPU_DIRECT || P.c_dtype != GG_DTYPE_BF16)
            return gpu_launch_t<uint8_t, true, true, false, WGF>(P, items, x, err, err_len);
    }
    gpu_exec px = x;
    px.persistent = 1;
    gpu_tmaps M;
    if (gpu_tma_maps_of(P, gpu_wg_esize(WGF), &M))
        return gpu_start(gpu_wg_ws_kernel<WGF>, GPU_WGP_SMEM_BYTES, GPU_WS_THREADS, items, px,
                         err, err_len, P, M);
    return gpu_start(gpu_wg_persistent_kernel<WGF>, GPU_WGP_SMEM_BYTES, GPU_THREADS, items, px,
                     err, err_len, P);
}

/* The instantiation for P: K-major operands as the ops lay them out (fwd and batched NK: both;
   dgrad and batched KN: A; wgrad: neither), per-group rescaling for block128 and MX (which only
   exist for K-major operands), the wgmma main loop for its fp8 format pairs (grouped launches:
   never a bias or MoE rows), and the EXTRA epilogue only where a bias or MoE rows exist. */
template <typename In>
static enum gg_status gpu_launch(const gpu_grouped &P, int64_t items, const gpu_exec &x,
                                 char *err, size_t err_len)
{
#if GG_GPU_HAVE_WGMMA
    if constexpr (sizeof(In) == 2) {
        if (P.wg_formats == GPU_WG_BF16)
            return gpu_launch_wg<GPU_WG_BF16>(P, items, x, err, err_len);
    }
    if constexpr (sizeof(In) == 1) {
        switch (P.wg_formats) {
        case GPU_WG_E4M3_E4M3:
            return gpu_launch_wg<GPU_WG_E4M3_E4M3>(P, items, x, err, err_len);
        case GPU_WG_E4M3_E5M2:
            return gpu_launch_wg<GPU_WG_E4M3_E5M2>(P, items, x, err, err_len);
        case GPU_WG_E5M2_E4M3:
            return gpu_launch_wg<GPU_WG_E5M2_E4M3>(P, items, x, err, err_len);
        case GPU_WG_E5M2_E5M2:
            return gpu_launch_wg<GPU_WG_E5M2_E5M2>(P, items, x, err, err_len);
        default:
            break;
        }
    }
#endif
    const bool extra = P.bias != NULL || P.op == GG_OP_MOE_SORTED;
    if (P.recipe == GPU_R_BLOCK128 || P.recipe == GPU_R_MX)
        return gpu_launch_t<In, true, true, true, GPU_WG_NONE, true>(P, items, x, err, err_len);
    if (P.a_kmaj && P.b_kmaj)
        return extra ? gpu_launch_t<In, true, true, false, GPU_WG_NONE, true>(P, items, x, err, err_len)
                     : gpu_launch_t<In, true, true, false>(P, items, x, err, err_len);
    if (P.a_kmaj)
        return extra ? gpu_launch_t<In, true, false, false, GPU_WG_NONE, true>(P, items, x, err, err_len)
                     : gpu_launch_t<In, true, false, false>(P, items, x, err, err_len);
    return extra ? gpu_launch_t<In, false, false, false, GPU_WG_NONE, true>(P, items, x, err, err_len)
                 : gpu_launch_t<In, false, false, false>(P, items, x, err, err_len);
}

/*
 * Runs the tile list of P (groups P.g0 .., `tiles` tiles counted on the host) with workspace ws
 * laid out as gpu_list_ws() says. Without split-K one launch computes every tile; with split-K
 * the tiles go in waves whose partials fit the workspace, each wave one launch (serial fused
 * reduction; a slice only waits for lower items, which are dispatched first, so there is no
 * deadlock) or two (partials, then the reduce launch); the stream orders the waves.
 */
template <typename In>
static enum gg_status gpu_run_list(gpu_grouped P, int64_t tiles, void *ws, const gpu_exec &x,
                                   char *err, size_t err_len)
{
    if (tiles == 0)
        return GG_OK;
    if (P.split <= 1) {
        P.mode = GPU_DIRECT;
        P.t0 = 0;
        P.items = tiles;
        return gpu_launch<In>(P, tiles, x, err, err_len);
    }
    int64_t wave = gpu_wave_tiles(tiles, P.split);
    size_t ctr = gpu_ctr_bytes(tiles, P.split, x.two_kernel);
    P.ctr = (unsigned *)ws;
    P.slots = (float *)((uint8_t *)ws + ctr);
    P.mode = x.two_kernel ? GPU_PARTIAL : GPU_FUSED;
    /* The flags start at 0; missing_fence's kernel also zeroes its slots. */
    size_t zero = P.missing_fence && !x.two_kernel ? gpu_list_ws(tiles, P.split, 0) : ctr;
    if (zero > 0)
        GG_GPU_CHECK(cudaMemsetAsync(ws, 0, zero, x.stream));
    for (int64_t t0 = 0; t0 < tiles; t0 += wave) {
        int64_t nt = tiles - t0 < wave ? tiles - t0 : wave;
        P.t0 = t0;
        P.items = nt * P.split;
        enum gg_status st = gpu_launch<In>(P, P.items, x, err, err_len);
        if (st != GG_OK)
            return st;
        if (x.two_kernel) {
            gpu_reduce_kernel<<<(unsigned)nt, GPU_THREADS, 0, x.stream>>>(P);
            GG_GPU_CHECK(cudaGetLastError());
        }
    }
    return GG_OK;
}

/* ---- problem setup shared by the grouped GPU kernels ---------------------------------------- */

/* Fills the fields every launch derives: operand layouts, the plain recipe's K group. */
static inline void gpu_finish_setup(gpu_grouped *P)
{
    P->a_kmaj = P->a_sr == 1;
    P->b_kmaj = P->b_sr == 1;
    if (P->unit <= 0)
        P->unit = 1;
}

/* The launch description of p over all groups (no split-K state yet), from the host map. */
static inline gpu_grouped gpu_grouped_of(const struct gg_problem *p, const struct gg_operands *o,
                                         const struct family_grouped_map *m)
{
    gpu_grouped P;
    memset(&P, 0, sizeof P);
    P.op = (int)p->op;
    P.c_dtype = (int)p->c_dtype;
    P.fmt_a = (int)p->a_dtype;
    P.fmt_b = (int)p->b_dtype;
    P.groups = m->groups;
    P.m = m->m;
    P.n = m->n;
    P.k = m->k;
    P.lda = m->lda;
    P.ldb = m->ldb;
    P.ldc = m->ldc;
    P.stride_b = m->stride_b;
    P.stride_c = m->stride_c;
    P.a_si = m->a_si;
    P.a_sr = m->a_sr;
    P.b_sr = m->b_sr;
    P.b_sj = m->b_sj;
    P.offs = o->group_offs_dev;
    P.split = m->split;
    P.a = o->a;
    P.b = o->b;
    P.c = o->c;
    P.g0 = 0;
    P.ng = m->groups;
    P.b_off_fixed = -1;
    P.i32_row_offset = gg_mutant_is(p, "i32_cumulative_offset");
    P.i32_group_base = gg_mutant_is(p, "i32_group_base");
    P.skip_empty_wgrad = gg_mutant_is(p, "wgrad_zero_uninit");
    P.tail_rows = gg_mutant_is(p, "tail_rows_unwritten");
    P.missing_fence = gg_mutant_is(p, "missing_fence");
    P.wrap32 = gg_mutant_is(p, "i32_byte_limit");
    P.store_wrap32 = gg_mutant_is(p, "i32_store_offset");
    P.overread = gg_mutant_is(p, "read_past_end");
    P.mutant = p->mutant != NULL;
    P.red_limit = -1;
    gpu_finish_setup(&P);
    return P;
}

/*
 * The launch description of a batched problem (C_b = A_b · B_bᵀ with B as [N,K], or A_b · B_b
 * with B as [K,N]), packed defaults resolved; a dense problem is one batch of m rows. The recipe,
 * its scales and the bias are left to the caller.
 */
static inline gpu_grouped gpu_batched_of(const struct gg_problem *p, const struct gg_operands *o,
                                         int64_t batch)
{
    gpu_grouped P;
    memset(&P, 0, sizeof P);
    int kn = p->b_layout == GG_LAYOUT_KN;
    P.op = GG_OP_BATCHED;
    P.c_dtype = (int)p->c_dtype;
    P.fmt_a = (int)p->a_dtype;
    P.fmt_b = (int)p->b_dtype;
    P.groups = batch;
    P.m = P.bm = p->m;
    P.n = p->n;
    P.k = p->k;
    P.lda = p->lda != 0 ? p->lda : p->k;
    P.ldb = p->ldb != 0 ? p->ldb : (kn ? p->n : p->k);
    P.ldc = p->ldc != 0 ? p->ldc : p->n;
    P.sa = p->stride_a != 0 ? p->stride_a : p->m * P.lda;
    P.stride_b = p->stride_b != 0 ? p->stride_b : (kn ? p->k : p->n) * P.ldb;
    P.stride_c = p->stride_c != 0 ? p->stride_c : p->m * P.ldc;
    P.a_si = P.lda;
    P.a_sr = 1;
    P.b_sj = kn ? 1 : P.ldb;
    P.b_sr = kn ? P.ldb : 1;
    P.split = gg_kopt_get(p, "split_k", 1);
    P.a = o->a;
    P.b = o->b;
    P.c = o->c;
    P.ng = batch;
    P.b_off_fixed = -1;
    P.red_limit = -1;
    P.n_tail = gg_mutant_is(p, "n_tail");
    P.store_wrap32 = gg_mutant_is(p, "i32_store_offset");
    P.mutant = p->mutant != NULL;
    if (p->bias_dtype != GG_DTYPE_NONE) {
        P.bias = o->bias;
        P.bias_dtype = (int)p->bias_dtype;
    }
    gpu_finish_setup(&P);
    return P;
}

/* Sizes, leading dimensions and strides of a batched launch description (spans of one matrix
   fit its stride), and the operand pointers where read or written (esize: bytes of an input
   element). */
static inline enum gg_status gpu_batched_check(const gpu_grouped &P, int kn, size_t esize,
                                               char *err, size_t err_len)
{
    if (P.groups < 0 || P.bm < 0 || P.n < 0 || P.k < 0)
        return family_fail(err, err_len, GG_E_INVAL, "negative size (batch %lld, m %lld, n %lld, "
                           "k %lld)", (long long)P.groups, (long long)P.bm, (long long)P.n,
                           (long long)P.k);
    int64_t rows_b = kn ? P.k : P.n, row_b = kn ? P.n : P.k;
    auto span = [](int64_t r, int64_t c, int64_t ld) { return r == 0 || c == 0 ? 0 : (r - 1) * ld + c; };
    if (P.lda < P.k || P.ldb < row_b || P.ldc < P.n || (P.groups > 1 && (P.sa < span(P.bm, P.k, P.lda) ||
        P.stride_b < span(rows_b, row_b, P.ldb) || P.stride_c < span(P.bm, P.n, P.ldc))))
        return family_fail(err, err_len, GG_E_INVAL, "leading dimension or stride too small (lda "
                           "%lld, ldb %lld, ldc %lld)", (long long)P.lda, (long long)P.ldb,
                           (long long)P.ldc);
    int out = P.groups > 0 && P.bm > 0 && P.n > 0, red = out && P.k > 0;
    enum gg_status st;
    if ((st = family_check_ptr(P.a, red, esize, "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(P.b, red, esize, "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(P.c, out, P.c_dtype == GG_DTYPE_BF16 ? 2 : 4, "c", err, err_len)) !=
            GG_OK ||
        (st = family_check_ptr(P.bias, out && P.bias_dtype != GG_DTYPE_NONE, 1, "bias", err,
                               err_len)) != GG_OK)
        return st;
    return GG_OK;
}

/* Tiles of groups g0 .. g0 + ng - 1, counted from the host offsets (none for batched and MoE
   launches, whose blocks are all alike). */
static inline int64_t gpu_count_tiles(const gpu_grouped &P, const int64_t *host_offs, int64_t g0,
                                      int64_t ng)
{
    if (P.op == GG_OP_BATCHED || P.op == GG_OP_MOE_SORTED) { /* equal blocks, no offsets */
        int64_t rows = P.op == GG_OP_BATCHED ? P.bm : P.block_m;
        return rows > 0 && P.n > 0 ? ng * gpu_ceil_div(rows, GPU_BM) * gpu_ceil_div(P.n, GPU_BN)
                                   : 0;
    }
    if (host_offs == NULL)
        return 0;
    int64_t total = 0;
    for (int64_t g = g0; g < g0 + ng; g++)
        total += gpu_group_tiles(P, g, host_offs);
    return total;
}

/*
 * Checks p and o for a grouped GPU kernel whose element size is esize (bf16 2, fp8 1): sizes,
 * leading dimensions, the host group arrays (offs[0] = 0, lens[g] = offs[g+1] - offs[g] >= 0,
 * offs[G] = m), device group arrays present, operand pointers present where read or written.
 * Fills m with the host map.
 */
static inline enum gg_status gpu_grouped_check(const struct gg_problem *p,
                                               const struct gg_operands *o,
                                               struct family_grouped_map *m, size_t esize,
                                               char *err, size_t err_len)
{
    family_grouped_map_init(p, p->group_offs, m);
    enum gg_status st;
    if ((st = family_grouped_check_sizes(m, err, err_len)) != GG_OK ||
        (st = family_check_offsets(p->group_offs, m->groups, m->m, err, err_len)) != GG_OK ||
        (st = family_grouped_check_strides(m, err, err_len)) != GG_OK)
        return st;
    for (int64_t g = 0; g < m->groups; g++)
        if (p->group_lens == NULL || p->group_lens[g] != p->group_offs[g + 1] - p->group_offs[g])
            return family_fail(err, err_len, GG_E_INVAL, "group %lld: length and offsets disagree",
                               (long long)g);
    if (m->groups > 0 && (o->group_offs_dev == NULL || o->group_lens_dev == NULL))
        return family_fail(err, err_len, GG_E_INVAL, "device group arrays are NULL");
    struct family_grouped_use use = family_grouped_uses(m);
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? 2 : 4;
    if ((st = family_check_ptr(o->a, use.a, esize, "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, use.b, esize, "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, use.c, c_size, "c", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

#endif /* GG_GPU_GEMM_INT_H */

/*
 * gpu_tile_int.h — what every part of the grouped GPU engine works on: the launch description
 * (gpu_grouped) with the engine's tile and shared-memory geometry, a group's block of C and the
 * tiles it is cut into, the device building blocks both main loops and the epilogues use
 * (shared-memory addresses, cp.async, an operand tile, the accumulator fragments, team
 * barriers), and the tile list: tile t located from the device group offsets by a block-wide
 * prefix sum, the rows of a MoE tile, and the operands of one (tile, slice) item. Most mutants
 * live here, where their bugs live: 32-bit offsets and byte ranges, skipped empty wgrad groups,
 * load and reduction bounds off by one, unmasked MoE padding, and the e5m2 infinities decoded
 * as the largest finite value.
 */
#ifndef GG_GPU_TILE_INT_H
#define GG_GPU_TILE_INT_H

#include "kernels/gpu/gpu_int.h"

#define GPU_BM 128
#define GPU_BN 128
#define GPU_BK 32 /* bf16 elements of K per stage (64 bytes a row) */
#define GPU_STAGES 4
#define GPU_THREADS 256
#define GPU_TILE_ELEMS ((int64_t)GPU_BM * GPU_BN)
#define GPU_SLOT_BYTES ((size_t)GPU_TILE_ELEMS * sizeof(float))
/* Shared memory: the pipeline (two 128x32 bf16 tiles a stage) or the fp32 staging tile of a
   split-K partial (rows padded by 4 floats), whichever is larger. */
#define GPU_STAGE_ELEMS (GPU_BM * GPU_BK)
#define GPU_STG_LD (GPU_BN + 4)
#define GPU_PIPE_BYTES (GPU_STAGES * 2 * GPU_STAGE_ELEMS * 2)
#define GPU_STG_BYTES (GPU_BM * GPU_STG_LD * 4)
#define GPU_SMEM_BYTES (GPU_PIPE_BYTES > GPU_STG_BYTES ? GPU_PIPE_BYTES : GPU_STG_BYTES)

/* K per stage of the wgmma pipeline (gpu_wgmma_int.h), which its TMA boxes (gpu_tma_int.h) and
   the K-major copies (gpu_transpose_int.h) are cut to. */
#define GPU_WG_BK 128     /* fp8 elements (bytes) of K per stage: one swizzled 128-byte row */

/* How the reduction over K is scaled. */
enum gpu_recipe {
    GPU_R_PLAIN = 0, /* bf16: the sums as they are */
    GPU_R_TENSOR,    /* fp8 tensor-wise: the tile times a_scale[0]·b_scale[g] in the epilogue */
    GPU_R_BLOCK128,  /* a8w8: each 128-K group's sum times a_scale[row][group], added; the total
                        times b_scale[g] in the epilogue */
    GPU_R_MX         /* MX: each 32-K block's sum times 2^(ea-127)·2^(eb-127) in one step */
};

/* What a launch does with each (tile, slice) item. */
enum gpu_mode {
    GPU_DIRECT = 0, /* no split-K: compute the tile and store it */
    GPU_FUSED,      /* serial split-K: slices add into the tile's slot in order, the last stores */
    GPU_PARTIAL     /* write the slice's partial only (a reduce launch follows) */
};

/*
 * One launch of the grouped engine, passed by value. The addressing follows family_grouped_map:
 * A_g(i, r) = a[a_off + i·a_si + r·a_sr], B_g(r, j) = b[b_off + r·b_sr + j·b_sj].
 */
struct gpu_grouped {
    int op, c_dtype;
    int fmt_a, fmt_b; /* fp8 inputs: the format each operand's codes are decoded as */
    int64_t groups, m, n, k;
    int64_t lda, ldb, ldc, stride_b, stride_c;
    int64_t a_si, a_sr, b_sr, b_sj;
    const int64_t *offs; /* device group offsets, groups + 1 */
    int64_t split;
    int i32_row_offset, i32_group_base, skip_empty_wgrad, tail_rows, missing_fence, wrap32;
    int store_wrap32;      /* i32_store_offset: C's byte offsets go through 32 bits */
    int overread;          /* read_past_end: a partial row tile loads one row of A too many */
    int mutant;            /* the problem names a mutant (it keeps the cp.async loads) */
    const void *a, *b;
    void *c;
    const float *a_scale, *b_scale; /* fp8: tensor scales (b_scale per group when per_group) */
    int per_group_scale;
    int64_t g0, ng;        /* the groups of this launch's tile list */
    int64_t b_off_fixed;   /* >= 0: the weight offset of a single-group launch (fwd, dgrad) */
    float *slots;          /* split-K slots of GPU_TILE_ELEMS floats: one per wave tile (fused),
                              or split per wave tile (partial) */
    unsigned *ctr;         /* GPU_FUSED: one flag per wave tile, the slice whose turn it is */
    int64_t t0, items;     /* first tile of the wave, and its (tile, slice) items */
    int mode;
    int a_kmaj, b_kmaj;    /* operand contiguous along K (a_sr = 1, b_sr = 1) */
    /* Batched (and dense as one batch): A of batch g at g·sa, C at g·stride_c, bm rows. */
    int64_t sa, bm;
    int recipe;
    int64_t unit;          /* K group of a rescaling recipe (128 or 32), else 1 */
    int64_t k_groups;      /* scale groups along K: the row length of the scale arrays */
    int64_t red_limit;     /* >= 0: the reduction stops here (mx_k_tail) */
    const uint8_t *a_e8m0, *b_e8m0; /* MX scale codes */
    const void *bias;      /* bias[g][n] of bias_dtype, or NULL */
    int bias_dtype;
    int n_tail, e8m0_special;
    int inf_as_max;        /* e5m2_inf_as_max: the decode table reads e5m2 ±Inf as ±57344 */
    /* MoE sorted: block g of block_m entries of sorted_ids belongs to expert expert_ids[g];
       entry v < limit is (token v / topk, output row v), others are padding. */
    const int32_t *sorted_ids, *expert_ids;
    int64_t block_m, topk, limit;
    int wg_formats;             /* fp8 on wgmma: the format pair (GPU_WG_*), else GPU_WG_NONE */
    const int64_t *remap;       /* operands in transposed copies (gpu_transpose_int.h): where
                                   group g starts there (dgrad: B; wgrad: column of A and B) */
};

/* The bf16 value of fp8 code c of format fmt in the decode table; under e5m2_inf_as_max the e5m2
   infinities 0x7C/0xFC read as ±57344 (bf16 0x4760), the largest finite value. */
__host__ __device__ inline uint16_t gpu_fp8_decode(const struct gpu_grouped &P, int fmt,
                                                   uint32_t c)
{
    if (P.inf_as_max && fmt == GG_DTYPE_E5M2 && (c & 0x7Fu) == 0x7Cu)
        return (uint16_t)(((c & 0x80u) << 8) | 0x4760u);
    return gpu_fp8_to_bf16(fmt, c);
}

/* A group's block of C and where its operands start (family_grouped_block_of on the device). */
struct gpu_block {
    int64_t a_off, b_off, c_off, row0, rows, cols, red;
};

__host__ __device__ inline struct gpu_block gpu_block_of(const struct gpu_grouped &P, int64_t g,
                                                         const int64_t *offs)
{
    int grouped = P.op != GG_OP_BATCHED && P.op != GG_OP_MOE_SORTED;
    int64_t row0 = grouped ? offs[g] : 0, len = grouped ? offs[g + 1] - offs[g] : 0;
    int64_t w_off = gpu_offset(P.i32_group_base, g, P.stride_b);
    if (P.b_off_fixed >= 0)
        w_off = P.b_off_fixed;
    struct gpu_block b;
    if (P.op == GG_OP_BATCHED) {
        b = {g * P.sa, g * P.stride_b, g * P.stride_c, g * P.bm, P.bm, P.n, P.k};
    } else if (P.op == GG_OP_MOE_SORTED) {
        b = {0, 0, 0, 0, P.block_m, P.n, P.k}; /* B, rows of A and C: per tile, in the kernel */
    } else if (P.op == GG_OP_GROUPED_WGRAD) {
        b = {gpu_offset(P.i32_row_offset, row0, P.lda), row0 * P.ldb, g * P.stride_c, 0, P.n,
             P.k, len};
    } else {
        int64_t cols = P.op == GG_OP_GROUPED_FWD ? P.n : P.k;
        int64_t red = P.op == GG_OP_GROUPED_FWD ? P.k : P.n;
        b = {row0 * P.lda, w_off, gpu_offset(P.i32_row_offset, row0, P.ldc), row0, len, cols,
             red};
    }
    return b;
}

/* Where one tile lies: its group, its block, and its place in the block. */
struct gpu_tile {
    int64_t g;
    struct gpu_block blk;
    int64_t i0, j0, rows, cols;
    int64_t mat;             /* the matrix of B, bias and B scales: g, or the block's expert */
    const int64_t *a_row;    /* MoE: A row of each tile row (< 0: padding), else NULL */
    const int64_t *c_row;    /* MoE: C row of each tile row (< 0: padding), else NULL */
};

/* Tiles group g contributes: none for an empty block, and none for a wgrad group without
   tokens under wgrad_zero_uninit (otherwise it owns N x K tiles of zeros). */
__host__ __device__ inline int64_t gpu_group_tiles(const struct gpu_grouped &P, int64_t g,
                                                   const int64_t *offs)
{
    if (P.skip_empty_wgrad && P.op == GG_OP_GROUPED_WGRAD && offs[g + 1] == offs[g])
        return 0;
    struct gpu_block b = gpu_block_of(P, g, offs);
    if (b.rows <= 0 || b.cols <= 0)
        return 0;
    return ((b.rows + GPU_BM - 1) / GPU_BM) * ((b.cols + GPU_BN - 1) / GPU_BN);
}

/* Tile rows taken together by gpu_tile_ij. */
#define GPU_SWIZZLE 8

/* Where tile `local` of a block of rt x ct tiles lies: in strips of GPU_SWIZZLE tile rows, a
   strip column by column (the threadblock swizzle of CUTLASS). The CTAs running at once then
   share a few row blocks of A and column blocks of B in L2; row by row, a wgrad block with many
   column tiles and a long reduction streamed all of its B from memory again for every row of
   tiles. */
__host__ __device__ inline void gpu_tile_ij(int64_t local, int64_t rt, int64_t ct, int64_t &i,
                                            int64_t &j)
{
    int64_t strip = local / (GPU_SWIZZLE * ct), idx = local % (GPU_SWIZZLE * ct);
    int64_t h = rt - strip * GPU_SWIZZLE < GPU_SWIZZLE ? rt - strip * GPU_SWIZZLE : GPU_SWIZZLE;
    i = strip * GPU_SWIZZLE + idx % h;
    j = idx / h;
}

/* ---- device building blocks ------------------------------------------------------------- */

__device__ __forceinline__ uint32_t gpu_smem_addr(const void *p)
{
#if GG_GPU_HAVE_MMA
    return (uint32_t)__cvta_generic_to_shared(p);
#else
    return (uint32_t)(uintptr_t)p;
#endif
}

__device__ __forceinline__ void gpu_cp_async16(void *dst, const void *src)
{
#if GG_GPU_HAVE_MMA
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(gpu_smem_addr(dst)),
                 "l"(src));
#else
    *(uint4 *)dst = *(const uint4 *)src;
#endif
}

__device__ __forceinline__ void gpu_cp_async_commit(void)
{
#if GG_GPU_HAVE_MMA
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N> __device__ __forceinline__ void gpu_cp_async_wait(void)
{
#if GG_GPU_HAVE_MMA
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

/* One operand tile of a CTA: element (mn, r) at base[off + mn·s_mn + r·s_k] for mn < mn_lim,
   r in [r0, r1); everything else reads as zero. */
struct gpu_operand {
    const uint8_t *base;
    int64_t off, s_mn, s_k, mn_lim, r1;
    const int64_t *gather; /* K-major A of the MoE layout: row mn starts at gather[mn] (< 0:
                              a padding row, read as zero), replacing off + mn·s_mn */
};

/* Element offset e of an operand as the loads compute it (wrap32: a 32-bit buffer range). */
__device__ __forceinline__ int64_t gpu_wrap(int wrap32, int64_t e)
{
    return wrap32 ? (int64_t)((uint64_t)e & 0xFFFFFFFFull) : e;
}

/* Warp w owns rows (w / 4)·64 .. +63 and columns (w mod 4)·32 .. +31 of the tile: 4 x 4 mma
   tiles of 16x8; acc[mi][ni][e] is row g (+8 for e >= 2), column 2t + (e & 1) of mma tile
   (mi, ni), g = lane / 4, t = lane mod 4 (the mma.sync accumulator layout). */
typedef float gpu_acc[4][4][4];

/* The tile position of accumulator acc[mi][ni][e]: the mma.sync layout above, or with WG the
   wgmma layout (warpgroup w / 4 owns rows (w / 4)·64 .., warp w mod 4 its rows 16·(w mod 4) ..,
   and the 64 values are the m64n128 fragment: column chunk mi·4 + ni of 8). */
template <bool WG>
__device__ __forceinline__ void gpu_frag_rc(int mi, int ni, int e, int &row, int &col)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    if (WG) {
        row = (warp >> 2) * 64 + (warp & 3) * 16 + g + (e >> 1) * 8;
        col = (mi * 4 + ni) * 8 + 2 * t + (e & 1);
    } else {
        row = (warp >> 2) * 64 + mi * 16 + g + (e >> 1) * 8;
        col = (warp & 3) * 32 + ni * 8 + 2 * t + (e & 1);
    }
}

/* Calls f(i, row, col) for each of the thread's 64 accumulator values: i indexes the gpu_acc
   flattened (acc[mi][ni][e] is element 16·mi + 4·ni + e), (row, col) its place in the tile. */
template <bool WG, typename F> __device__ __forceinline__ void gpu_for_frag(F f)
{
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int row, col;
                gpu_frag_rc<WG>(mi, ni, e, row, col);
                f(16 * mi + 4 * ni + e, row, col);
            }
}

/* A barrier of a team of NT threads: the whole block (BAR 0), one warp (NT 32: __syncwarp, any
   BAR but 0), or named barrier BAR over NT threads (the consumer warpgroups of the
   warp-specialized kernel, which a producer warp never joins). Teams other than the block exist
   only in the wgmma kernels. */
template <int NT, int BAR> __device__ __forceinline__ void gpu_team_sync(void)
{
    if constexpr (BAR == 0) {
        __syncthreads();
    } else {
#if GG_GPU_HAVE_MMA
        if constexpr (NT == 32)
            __syncwarp();
        else
            asm volatile("bar.sync %0, %1;\n" ::"n"(BAR), "n"(NT) : "memory");
#endif
    }
}

/* ---- the tile list ---------------------------------------------------------------------- */

/* Per-CTA scratch of the tile lookup (static shared memory). */
struct gpu_scan {
    int64_t sum[GPU_THREADS];
    int64_t g, local, cnt; /* the owner found, t's place in it, its tiles */
};

/* A CTA's place in its tile list: the chunk of groups gpu_locate searches next (cg, and ct the
   index of that group's first tile), and the group of the last tile found (g, its tiles t0 ..
   t0 + nt - 1; g < 0: none yet). It only moves forward. */
struct gpu_cursor {
    int64_t cg, ct, g, t0, nt;
};

__device__ __forceinline__ gpu_cursor gpu_cursor_start(const gpu_grouped &P)
{
    return gpu_cursor{P.g0, 0, -1, 0, 0};
}

/* Fills the tile fields of local tile `local` of group g. */
static __device__ void gpu_tile_in_group(const gpu_grouped &P, int64_t g, int64_t local,
                                         gpu_tile &tile)
{
    tile.g = g;
    tile.blk = gpu_block_of(P, g, P.offs);
    int64_t ti, tj;
    gpu_tile_ij(local, (tile.blk.rows + GPU_BM - 1) / GPU_BM,
                (tile.blk.cols + GPU_BN - 1) / GPU_BN, ti, tj);
    tile.i0 = ti * GPU_BM;
    tile.j0 = tj * GPU_BN;
    tile.rows = gpu_min64(GPU_BM, tile.blk.rows - tile.i0);
    tile.cols = gpu_min64(GPU_BN, tile.blk.cols - tile.j0);
    tile.mat = g;
    tile.a_row = tile.c_row = NULL;
}

/*
 * Finds tile t of the launch's list (groups g0 .. g0 + ng - 1, tiles taken group by group, in
 * the order of gpu_tile_ij inside a group), t not below any tile found before with cursor c.
 * With FAST, a tile of the group of the last one is found without a search (a persistent
 * wgmma CTA's next tile mostly is; the mma.sync engine, capped at 128 registers, spilled with
 * the three more it keeps). Otherwise NT groups at a time from c.cg: each thread of the team
 * (NT threads, synchronised by gpu_team_sync<NT, BAR>) counts one group's tiles and a prefix sum
 * over the team finds the owner, so a team walking increasing t reads every group offset once.
 * Returns 0 past the end of the list. Every thread of the team must call it (every thread takes
 * the same path).
 */
template <bool FAST = false, int NT = GPU_THREADS, int BAR = 0>
static __device__ int gpu_locate(const gpu_grouped &P, int64_t t, gpu_cursor &c, gpu_scan &sc,
                                 gpu_tile &tile)
{
    static_assert(NT <= GPU_THREADS, "the scan holds GPU_THREADS sums");
    if (FAST && c.g >= 0 && t >= c.t0 && t < c.t0 + c.nt) {
        gpu_tile_in_group(P, c.g, t - c.t0, tile);
        return 1;
    }
    const int tid = threadIdx.x % NT;
    int64_t gend = P.g0 + P.ng;
    for (;;) {
        if (c.cg >= gend)
            return 0;
        int64_t g = c.cg + tid;
        int64_t cnt = g < gend ? gpu_group_tiles(P, g, P.offs) : 0;
        sc.sum[tid] = cnt;
        gpu_team_sync<NT, BAR>();
        for (int off = 1; off < NT; off <<= 1) {
            int64_t v = tid >= off ? sc.sum[tid - off] : 0;
            gpu_team_sync<NT, BAR>();
            sc.sum[tid] += v;
            gpu_team_sync<NT, BAR>();
        }
        int64_t incl = sc.sum[tid], total = sc.sum[NT - 1];
        if (cnt > 0 && t >= c.ct + incl - cnt && t < c.ct + incl) {
            sc.g = g;
            sc.local = t - (c.ct + incl - cnt);
            sc.cnt = cnt;
        }
        gpu_team_sync<NT, BAR>();
        if (t < c.ct + total) {
            int64_t owner = sc.g, local = sc.local, nt = sc.cnt;
            gpu_team_sync<NT, BAR>();
            c.g = owner;
            c.t0 = t - local;
            c.nt = nt;
            gpu_tile_in_group(P, owner, local, tile);
            return 1;
        }
        c.cg += NT;
        c.ct += total;
    }
}

/*
 * The rows of a MoE tile: entry i0 + r of block g of sorted_ids is v; a valid v (below the
 * limit T·topk) is token v / topk of A (rows[0], and its element offset in rows[2]) and row v of
 * C (rows[1]); padding entries get -1 and are neither read nor written. sorted_ids_padding
 * raises the limit, so the padding id T·topk reads row T of A and writes row T·topk of C. B,
 * its scales and the bias are the block's expert's.
 */
static __device__ void gpu_moe_rows(const gpu_grouped &P, gpu_tile &tl, int64_t (*rows)[GPU_BM])
{
    for (int r = threadIdx.x; r < GPU_BM; r += GPU_THREADS) {
        int64_t v = -1;
        if (r < tl.rows) {
            int64_t id = P.sorted_ids[tl.g * P.block_m + tl.i0 + r];
            v = id >= 0 && id < P.limit ? id : -1;
        }
        rows[0][r] = v < 0 ? -1 : v / P.topk;
        rows[1][r] = v;
        rows[2][r] = v < 0 ? -1 : v / P.topk * P.lda;
    }
    tl.mat = P.expert_ids[tl.g];
    tl.blk.b_off = tl.mat * P.stride_b;
    tl.a_row = rows[0];
    tl.c_row = rows[1];
    __syncthreads();
}

/*
 * The operands of slice sl of tile tl (their reduction ends at a.r1 = b.r1) and where the slice
 * starts: slices of ceil(red / split) rounded up to whole K groups of the recipe, mx_k_tail
 * ending the reduction early; operands in transposed copies start at remap[g] (wgrad: the
 * reduction runs over the group's whole run of the copies, zero padding included); n_tail loads the
 * last, partial N tile's B under a mask one column short.
 */
static __device__ __forceinline__ int64_t gpu_tile_operands(const gpu_grouped &P, gpu_tile &tl,
                                                            int64_t sl, gpu_operand &a,
                                                            gpu_operand &b)
{
    if (P.remap != NULL) {
        tl.blk.b_off = P.remap[tl.g];
        if (P.op == GG_OP_GROUPED_WGRAD) { /* the run to its end, zero padding included */
            tl.blk.a_off = tl.blk.b_off;
            tl.blk.red = P.remap[tl.g + 1] - tl.blk.b_off;
        }
    }
    int64_t red = P.red_limit >= 0 ? gpu_min64(tl.blk.red, P.red_limit) : tl.blk.red;
    int64_t chunk = (red + P.split - 1) / P.split;
    chunk = (chunk + P.unit - 1) / P.unit * P.unit;
    int64_t r0 = gpu_min64(sl * chunk, red), r1 = gpu_min64(r0 + chunk, red);
    int64_t b_lim = P.n_tail && tl.cols < GPU_BN ? tl.cols - 1 : tl.cols;
    /* read_past_end: a partial row tile loads one row of A too many (its product row is never
       stored), past A's end at the last row tile. */
    int64_t a_lim = P.overread && tl.rows < GPU_BM ? tl.rows + 1 : tl.rows;
    a = {(const uint8_t *)P.a, tl.blk.a_off + tl.i0 * P.a_si, P.a_si, P.a_sr, a_lim, r1, NULL};
    b = {(const uint8_t *)P.b, tl.blk.b_off + tl.j0 * P.b_sj, P.b_sj, P.b_sr, b_lim, r1, NULL};
    return r0;
}

#endif /* GG_GPU_TILE_INT_H */

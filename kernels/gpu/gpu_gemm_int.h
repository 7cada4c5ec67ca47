/*
 * gpu_gemm_int.h — the grouped GEMM engine of the GPU kernels (fwd NT, dgrad NN, variable-K
 * wgrad TN) for bf16 inputs and for 8-bit float inputs decoded exactly to bf16 in the loader.
 * One CTA of 256 threads owns a 128x128 output tile; operands stream through a 4-stage cp.async
 * pipeline into swizzled shared memory and are multiplied on tensor cores (ldmatrix, and
 * mma.sync m16n8k16 bf16 -> fp32; a portable per-thread path on HIP). The tile list over the
 * groups is located from the device group offsets by a block-wide prefix sum. Split-K slices of
 * a tile hand a running fp32 sum through one workspace slot in slice order (serial split-K:
 * slice s waits on the tile's flag for s, adds its partial, releases s + 1; the last slice runs
 * the epilogue), or write one slot each for a separate reduce kernel.
 * The mutants of the grouped families live here at the places their real bugs live.
 */
#ifndef GG_GPU_GEMM_INT_H
#define GG_GPU_GEMM_INT_H

#include "kernels/gpu/gpu_int.h"

#define GPU_BM 128
#define GPU_BN 128
#define GPU_BK 32 /* bf16 elements of K per stage (64 bytes a row) */
#define GPU_STAGES 4
#define GPU_THREADS 256
#define GPU_TILE_ELEMS ((int64_t)GPU_BM * GPU_BN)
#define GPU_SLOT_BYTES ((size_t)GPU_TILE_ELEMS * sizeof(float))
/* (tile, slice) items per split-K wave: the workspace holds one wave's partials. */
#define GPU_WAVE_ITEMS 1024
/* Shared memory: the pipeline (two 128x32 bf16 tiles a stage) or the fp32 staging tile of a
   split-K partial (rows padded by 4 floats), whichever is larger. */
#define GPU_STAGE_ELEMS (GPU_BM * GPU_BK)
#define GPU_STG_LD (GPU_BN + 4)
#define GPU_PIPE_BYTES (GPU_STAGES * 2 * GPU_STAGE_ELEMS * 2)
#define GPU_STG_BYTES (GPU_BM * GPU_STG_LD * 4)
#define GPU_SMEM_BYTES (GPU_PIPE_BYTES > GPU_STG_BYTES ? GPU_PIPE_BYTES : GPU_STG_BYTES)

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

/* Element index of (row, k) in a K-major 128x32 stage tile: 16-byte chunks of a 64-byte row
   XOR-swizzled by (row / 2) mod 4, so the 8 rows one ldmatrix reads hit 8 distinct bank groups. */
__device__ __forceinline__ int gpu_idx_k(int row, int k)
{
    return row * GPU_BK + ((((k >> 3) ^ (row >> 1)) & 3) << 3) + (k & 7);
}

/* Element index of (k, mn) in an MN-major 32x128 stage tile: chunks swizzled by k mod 8. */
__device__ __forceinline__ int gpu_idx_mn(int k, int mn)
{
    int ch = mn >> 3;
    return k * GPU_BM + (((ch & 8) | ((ch ^ k) & 7)) << 3) + (mn & 7);
}

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

/*
 * Loads the stage of K starting at r into the stage tile s (KMAJ: [128][32], else [32][128]).
 * 512 chunks of 8 elements along the contiguous dimension, two per thread. A whole, aligned
 * bf16 chunk goes by cp.async; a partial or misaligned one, and every fp8 chunk (decoded through
 * dec), by ordinary loads and stores.
 */
template <typename In, bool KMAJ>
__device__ __forceinline__ void gpu_load_stage(const gpu_operand &o, int64_t r, uint16_t *s,
                                               const uint16_t *dec, int wrap32)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int q = 0; q < 2; q++) {
        int c = tid + q * GPU_THREADS;
        int mn, kk, sidx;
        if (KMAJ) {
            mn = c >> 2;
            kk = (c & 3) * 8;
            sidx = gpu_idx_k(mn, kk);
        } else {
            kk = c >> 4;
            mn = (c & 15) * 8;
            sidx = gpu_idx_mn(kk, mn);
        }
        int64_t k = r + kk;
        int64_t e0 = o.off + (int64_t)mn * o.s_mn + k * o.s_k;
        int row_ok = mn < o.mn_lim;
        if (KMAJ && o.gather != NULL) {
            row_ok = row_ok && o.gather[mn] >= 0;
            e0 = o.gather[mn] + k * o.s_k;
        }
        int whole = KMAJ ? (row_ok && k + 8 <= o.r1) : (k < o.r1 && mn + 8 <= o.mn_lim);
        int64_t step = KMAJ ? o.s_k : o.s_mn; /* 1 along the contiguous dimension */
        if (sizeof(In) == 2) {
            const uint16_t *src = (const uint16_t *)o.base + e0;
            if (whole && ((uintptr_t)src & 15) == 0) {
                gpu_cp_async16(s + sidx, src);
                continue;
            }
            uint16_t v[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                int ok = KMAJ ? (row_ok && k + j < o.r1) : (k < o.r1 && mn + j < o.mn_lim);
                v[j] = ok ? ((const uint16_t *)o.base)[e0 + j * step] : (uint16_t)0;
            }
            *(uint4 *)(s + sidx) = *(const uint4 *)v;
        } else {
            uint16_t v[8];
            int64_t w0 = gpu_wrap(wrap32, e0);
            if (whole && (((uintptr_t)(o.base + w0)) & 7) == 0 &&
                (!wrap32 || w0 + 8 <= ((int64_t)1 << 32))) {
                uint2 raw = *(const uint2 *)(o.base + w0);
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    v[j] = dec[(raw.x >> (8 * j)) & 0xFF];
                    v[4 + j] = dec[(raw.y >> (8 * j)) & 0xFF];
                }
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    int ok =
                        KMAJ ? (row_ok && k + j < o.r1) : (k < o.r1 && mn + j < o.mn_lim);
                    v[j] = ok ? dec[o.base[gpu_wrap(wrap32, e0 + j * step)]] : (uint16_t)0;
                }
            }
            *(uint4 *)(s + sidx) = *(const uint4 *)v;
        }
    }
}

#if GG_GPU_HAVE_MMA
template <bool TRANS> __device__ __forceinline__ void gpu_ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(addr));
}

__device__ __forceinline__ void gpu_mma_bf16(float c[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

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

template <bool AK, bool BK>
__device__ __forceinline__ void gpu_compute_stage(gpu_acc acc, const uint16_t *As,
                                                  const uint16_t *Bs)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
#if GG_GPU_HAVE_MMA
#pragma unroll
    for (int kk = 0; kk < GPU_BK; kk += 16) {
        uint32_t af[4][4], bfr[4][2];
#pragma unroll
        for (int mi = 0; mi < 4; mi++) {
            int idx;
            if (AK)
                idx = gpu_idx_k(wm + mi * 16 + (lane & 15), kk + (lane >> 4) * 8);
            else
                idx = gpu_idx_mn(kk + (lane & 7) + ((lane >> 4) << 3),
                                 wm + mi * 16 + ((lane >> 3) & 1) * 8);
            gpu_ldmatrix_x4<!AK>(af[mi], gpu_smem_addr(As + idx));
        }
#pragma unroll
        for (int np = 0; np < 2; np++) {
            uint32_t r[4];
            int idx;
            if (BK)
                idx = gpu_idx_k(wn + np * 16 + (lane & 7) + ((lane >> 4) << 3),
                                kk + ((lane >> 3) & 1) * 8);
            else
                idx = gpu_idx_mn(kk + (lane & 7) + ((lane >> 3) & 1) * 8,
                                 wn + np * 16 + ((lane >> 4) << 3));
            gpu_ldmatrix_x4<!BK>(r, gpu_smem_addr(Bs + idx));
            bfr[2 * np][0] = r[0];
            bfr[2 * np][1] = r[1];
            bfr[2 * np + 1][0] = r[2];
            bfr[2 * np + 1][1] = r[3];
        }
#pragma unroll
        for (int mi = 0; mi < 4; mi++)
#pragma unroll
            for (int ni = 0; ni < 4; ni++)
                gpu_mma_bf16(acc[mi][ni], af[mi], bfr[ni]);
    }
#else
    const int g = lane >> 2, t = lane & 3;
    for (int mi = 0; mi < 4; mi++)
        for (int ni = 0; ni < 4; ni++)
            for (int e = 0; e < 4; e++) {
                int row = wm + mi * 16 + g + (e >> 1) * 8, col = wn + ni * 8 + 2 * t + (e & 1);
                float s = acc[mi][ni][e];
                for (int k = 0; k < GPU_BK; k++) {
                    uint16_t x = As[AK ? gpu_idx_k(row, k) : gpu_idx_mn(k, row)];
                    uint16_t y = Bs[BK ? gpu_idx_k(col, k) : gpu_idx_mn(k, col)];
                    s += gpu_bf16_to_f32(x) * gpu_bf16_to_f32(y);
                }
                acc[mi][ni][e] = s;
            }
#endif
}

/* The factor of one 32-K block's sum under MX: s·2^(ea-127)·2^(eb-127) in one step (an exact
   power-of-two multiply when the summed exponent is a normal fp32 exponent, ldexpf outside that
   range); a 0xFF code makes the block NaN. e8m0_special decodes the codes as an fp32
   exp2f(x - 127) with subnormals flushed: 0x00 is 0 and 0xFF is +Inf. */
__device__ __forceinline__ float gpu_mx_block(float s, uint32_t ca, uint32_t cb, int special)
{
    if (ca != 0xFFu && cb != 0xFFu && (!special || (ca != 0 && cb != 0))) {
        int e = (int)ca + (int)cb - 254;
        if (e < -126 || e > 127)
            return ldexpf(s, e);
        return __fmul_rn(s, __int_as_float((e + 127) << 23));
    }
    if (!special)
        return __int_as_float(0x7FC00000);
    float fa = ca == 0 ? 0.0f : ca == 0xFFu ? __int_as_float(0x7F800000) : ldexpf(1.0f, (int)ca - 127);
    float fb = cb == 0 ? 0.0f : cb == 0xFFu ? __int_as_float(0x7F800000) : ldexpf(1.0f, (int)cb - 127);
    return __fmul_rn(__fmul_rn(s, fa), fb);
}

/* Adds one K group's sums (part) to acc with their scales and clears part: block128 multiplies
   by a_scale[row][grp], MX by the E8M0 codes of the row and the column. Rows and columns past
   the tile are left alone. */
static __device__ void gpu_rescale(const gpu_grouped &P, const gpu_tile &tl, int64_t grp, gpu_acc acc,
                            gpu_acc part)
{
    float *a = &acc[0][0][0], *pt = &part[0][0][0];
    gpu_for_frag<false>([&](int i, int row, int col) {
        float v = pt[i];
        pt[i] = 0.0f;
        if (row >= tl.rows || col >= tl.cols)
            return;
        int64_t arow = tl.a_row ? tl.a_row[row] : tl.blk.row0 + tl.i0 + row;
        if (arow < 0)
            return;
        if (P.recipe == GPU_R_BLOCK128) {
            v = __fmul_rn(v, P.a_scale[arow * P.k_groups + grp]);
        } else {
            uint32_t ca = P.a_e8m0[arow * P.k_groups + grp];
            uint32_t cb = P.b_e8m0[(tl.mat * P.n + tl.j0 + col) * P.k_groups + grp];
            v = gpu_mx_block(v, ca, cb, P.e8m0_special);
        }
        a[i] = __fadd_rn(a[i], v);
    });
}

/*
 * acc = the tile's fp32 sums over reduction indices [r0, r1) of operands a and b. With RESCALE
 * the stages of each K group (P.unit long, groups start at multiples of it because r0 does)
 * accumulate into part, which is scaled into acc when the group ends.
 */
template <typename In, bool AK, bool BK, bool RESCALE>
__device__ void gpu_mainloop(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                             const gpu_operand &a, const gpu_operand &b, int64_t r0,
                             uint16_t *smem, const uint16_t *dec_a, const uint16_t *dec_b)
{
    gpu_acc part;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mi][ni][e] = part[mi][ni][e] = 0.0f;
    int64_t ktiles = a.r1 > r0 ? (a.r1 - r0 + GPU_BK - 1) / GPU_BK : 0;
    int64_t per_group = RESCALE ? P.unit / GPU_BK : 1;
    uint16_t *As = smem, *Bs = smem + GPU_STAGES * GPU_STAGE_ELEMS;
    const int wrap32 = P.wrap32;
#pragma unroll
    for (int s = 0; s < GPU_STAGES - 1; s++) {
        if (s < ktiles) {
            gpu_load_stage<In, AK>(a, r0 + s * GPU_BK, As + s * GPU_STAGE_ELEMS, dec_a, wrap32);
            gpu_load_stage<In, BK>(b, r0 + s * GPU_BK, Bs + s * GPU_STAGE_ELEMS, dec_b, wrap32);
        }
        gpu_cp_async_commit();
    }
    for (int64_t kt = 0; kt < ktiles; kt++) {
        gpu_cp_async_wait<GPU_STAGES - 2>();
        __syncthreads();
        int64_t nk = kt + GPU_STAGES - 1;
        if (nk < ktiles) {
            int st = (int)(nk % GPU_STAGES);
            gpu_load_stage<In, AK>(a, r0 + nk * GPU_BK, As + st * GPU_STAGE_ELEMS, dec_a, wrap32);
            gpu_load_stage<In, BK>(b, r0 + nk * GPU_BK, Bs + st * GPU_STAGE_ELEMS, dec_b, wrap32);
        }
        gpu_cp_async_commit();
        int cs = (int)(kt % GPU_STAGES);
        gpu_compute_stage<AK, BK>(RESCALE ? part : acc, As + cs * GPU_STAGE_ELEMS,
                                  Bs + cs * GPU_STAGE_ELEMS);
        if (RESCALE && ((kt + 1) % per_group == 0 || kt + 1 == ktiles))
            gpu_rescale(P, tl, (r0 + kt * GPU_BK) / P.unit, acc, part);
    }
    gpu_cp_async_wait<0>();
}

/* The FP8 main loop on wgmma (it uses the loader building blocks above). */
#include "kernels/gpu/gpu_wgmma_int.h"

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

/* A barrier of a team of NT threads: the whole block (BAR 0), one warp (NT 32: __syncwarp, any
   BAR but 0), or named barrier BAR over NT threads (the consumer warpgroups of the warp-specialized kernel, which a producer
   warp never joins). Teams other than the block exist only in the wgmma kernels. */
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

/* The epilogue that stores a tile into C (gpu_store_tile, below). EXTRA: the launch may have a
   bias or MoE rows (without them the epilogue keeps fewer registers live). BAR: the barrier of
   the 256 threads that hold the tile (0: the block's). */
template <bool WG, bool EXTRA, int BAR = 0>
static __device__ void gpu_store_tile(const gpu_grouped &P, const gpu_tile &tl, gpu_acc acc,
                                      uint8_t *stg);

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

template <bool WG, bool EXTRA, int BAR>
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

/*
 * gpu_transpose_int.h — K-major copies of operands for the wgmma path, which reads only K-major
 * operands (8-bit ones can be nothing else, as in cuBLASLt's FP8 GEMMs and the FP8 training
 * stacks that keep transposed copies; bf16 ones are read the same way). Elements of 1 or 2 bytes.
 * dgrad: each expert with tokens gets W_gᵀ ([K][ldt], ldt = N rounded up to 16) packed one
 * after another; wgrad: dY and X become [N][Mp] and [K][Mp], group g's tokens in columns
 * remap[g] .. (each group's run zero-padded to whole 128-byte stages of the wgmma main loop, 128
 * fp8 or 64 bf16 columns: every run starts aligned and a tile reads whole stages to the end of
 * its run, never the byte-wise path of a partial one).
 * remap holds where each group starts in the copy, an exclusive scan computed on the device
 * from the device group offsets. The weight reads keep the fp8 mutants' arithmetic
 * (i32_group_base: expert offset in 32 bits; i32_byte_limit: offsets wrap at 2^32 bytes), which
 * is where those bugs would read wrongly.
 */
#ifndef GG_GPU_TRANSPOSE_INT_H
#define GG_GPU_TRANSPOSE_INT_H

#include "kernels/gpu/gpu_tile_int.h"

#define GPU_TR_TILE 64
#define GPU_TR_GROUPS 512 /* groups whose offsets a wgrad copy's block keeps in shared memory */

/* One transposing launch: dst[(item base) + c·ldd + col(r)] = src[(item base) + r·lds + c], in
   elements of es bytes. */
struct gpu_transpose {
    const uint8_t *src;
    uint8_t *dst;
    int es;
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

/* Columns of a wgrad copy that a group of len tokens takes: whole stages of the wgmma main loop
   (GPU_WG_BK bytes), the rest zero padding. */
__host__ __device__ __forceinline__ int64_t gpu_kmajor_run(int64_t len, int es)
{
    int64_t per = GPU_WG_BK / es;
    return (len + per - 1) / per * per;
}

/* Exclusive scan over the groups of unit (dgrad: one unit per expert with tokens) or of each
   group's run (unit 0: gpu_kmajor_run of elements of es bytes): remap[g], and remap[groups] the
   total. One block. */
static __global__ void __launch_bounds__(256) gpu_remap_kernel(const int64_t *offs, int64_t groups,
                                                        int64_t unit, int es, int64_t *remap)
{
    __shared__ int64_t sum[256];
    const int tid = threadIdx.x;
    int64_t base = 0;
    for (int64_t g0 = 0; g0 < groups; g0 += 256) {
        int64_t g = g0 + tid, v = 0;
        if (g < groups) {
            int64_t len = offs[g + 1] - offs[g];
            v = unit > 0 ? (len > 0 ? unit : 0) : gpu_kmajor_run(len, es);
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
   columns of the copy (T.rows: N per expert in dgrad, Mp in wgrad) by 64 bytes of source columns
   (64 / ES elements). Each thread reads 16 bytes of the source row behind one copy column (none
   for a wgrad column of a group's zero padding) and writes 16 bytes of a copy row (16 / ES copy
   columns, gathered from the tile element by element into registers: byte by byte through a
   stack array, the two copies of a DeepSeek-V3 skewed wgrad took 1.6 times as long on the H100):
   by one vector access where the 16 bytes are inside the operand, contiguous and aligned, else
   element by element. Walking the copy's columns, not the source rows, keeps every wgrad write
   aligned whatever the group offsets. */
template <int ES>
static __global__ void __launch_bounds__(256) gpu_transpose_kernel(const gpu_transpose T)
{
    __shared__ __align__(16) uint8_t t[GPU_TR_TILE][GPU_TR_TILE + 16];
    /* A wgrad copy finds each column's group by a binary search over remap: from shared memory
       where the launch has few enough groups (the dependent global loads of the search were
       about 4% of the copies' time). */
    __shared__ int64_t s_offs[GPU_TR_GROUPS + 1], s_remap[GPU_TR_GROUPS + 1];
    const int64_t *offs = T.offs, *remap = T.remap;
    if (!T.by_group && T.groups <= GPU_TR_GROUPS) {
        for (int64_t i = threadIdx.x; i <= T.groups; i += blockDim.x) {
            s_offs[i] = T.offs[i];
            s_remap[i] = T.remap[i];
        }
        __syncthreads();
        offs = s_offs;
        remap = s_remap;
    }
    constexpr int es = ES, per = 16 / ES; /* elements in 16 bytes */
    int64_t tr = (T.rows + GPU_TR_TILE - 1) / GPU_TR_TILE;
    int64_t tc = (T.cols + GPU_TR_TILE / es - 1) / (GPU_TR_TILE / es);
    int64_t items = T.by_group ? T.groups : 1;
    const int lr = threadIdx.x >> 2, seg = (threadIdx.x & 3) * 16;
    /* the write side: copy row dr of the tile, its 16-byte chunk q */
    const int dr = threadIdx.x / (4 * es), q = threadIdx.x % (4 * es);
    for (int64_t it = blockIdx.x; it < items * tr * tc; it += gridDim.x) {
        int64_t g = items > 1 ? it / (tr * tc) : 0, rem = items > 1 ? it % (tr * tc) : it;
        if (T.by_group && T.offs[g + 1] == T.offs[g])
            continue; /* uniform across the block */
        int64_t r0 = rem / tc * GPU_TR_TILE, c0 = rem % tc * (GPU_TR_TILE / es);
        int64_t src0 = T.by_group ? gpu_offset(T.i32_group_base, g, T.src_stride) : 0;
        int64_t dst0 = T.by_group ? T.remap[g] : 0;
        /* the source row behind copy column r0 + lr, -1 for none */
        int64_t r = r0 + lr, c = c0 + seg / es;
        if (r >= T.rows) {
            r = -1;
        } else if (!T.by_group) {
            int64_t h = gpu_group_of_col(remap, T.groups, r);
            r = offs[h] + r - remap[h];
            r = r < offs[h + 1] ? r : -1;
        }
        int64_t at = src0 + r * T.lds + c;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r >= 0 && c + per <= T.cols && !T.wrap32 &&
            ((uintptr_t)(T.src + at * es) & 15) == 0) {
            v = *(const uint4 *)(T.src + at * es);
        } else if (r >= 0) { /* byte by byte, packed in registers */
            uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
            for (int j = 0; j < 16; j++) {
                int64_t e = at + j / es;
                e = T.wrap32 ? (int64_t)((uint64_t)e & 0xFFFFFFFFull) : e;
                if (c + j / es < T.cols)
                    w[j / 4] |= (uint32_t)T.src[e * es + j % es] << (8 * (j % 4));
            }
            v = make_uint4(w[0], w[1], w[2], w[3]);
        }
        *(uint4 *)&t[lr][seg] = v;
        __syncthreads();
        /* copy row c0 + dr (a column of the source), copy columns r0 + q·per .. + per - 1 */
        c = c0 + dr;
        r = r0 + q * per;
        if (c < T.cols && r < T.rows) {
            uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
            for (int j = 0; j < per; j++) {
                uint32_t x = ES == 2 ? *(const uint16_t *)&t[q * per + j][dr * 2]
                                     : (uint32_t)t[q * per + j][dr];
                w[j * ES / 4] |= x << (8 * (j * ES % 4));
            }
            uint8_t *d = T.dst + (dst0 + c * T.ldd + r) * es;
            if (r + per <= T.rows && ((uintptr_t)d & 15) == 0) {
                *(uint4 *)d = make_uint4(w[0], w[1], w[2], w[3]);
            } else {
                for (int j = 0; j < per * es && r + j / es < T.rows; j++)
                    d[j] = (uint8_t)(w[j / 4] >> (8 * (j % 4)));
            }
        }
        __syncthreads();
    }
}

/* The group starts of a copy (gpu_remap_kernel) on stream s. */
static inline enum gg_status gpu_remap_run(const int64_t *offs, int64_t groups, int64_t unit,
                                           int es, int64_t *remap, cudaStream_t s, char *err,
                                           size_t err_len)
{
    gpu_remap_kernel<<<1, 256, 0, s>>>(offs, groups, unit, es, remap);
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

/* Launches the transpose T (its remap filled first by gpu_remap_run) on stream s. */
static inline enum gg_status gpu_transpose_run(const gpu_transpose &T, cudaStream_t s, char *err,
                                               size_t err_len)
{
    int64_t tiles = gpu_ceil_div(T.rows, GPU_TR_TILE) * gpu_ceil_div(T.cols, GPU_TR_TILE / T.es) *
                    (T.by_group ? T.groups : 1);
    if (tiles == 0)
        return GG_OK;
    int sms = 0;
    enum gg_status st = gpu_sm_count(&sms, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t grid = tiles < (int64_t)sms * 8 ? tiles : (int64_t)sms * 8;
    if (T.es == 2)
        gpu_transpose_kernel<2><<<(unsigned)grid, 256, 0, s>>>(T);
    else
        gpu_transpose_kernel<1><<<(unsigned)grid, 256, 0, s>>>(T);
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

static inline size_t gpu_align256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/*
 * The K-major copies a grouped launch of op on the wgmma path needs, for elements of es bytes
 * (none for fwd, whose operands are K-major already): dgrad packed W_gᵀ copies of the experts
 * with tokens, wgrad [N][Mp] and [K][Mp] copies of dY and X, at the start of the workspace: A's
 * copy, B's copy, the group starts, each 256-byte aligned (from the workspace's first 256-byte
 * boundary); the split-K area follows.
 */
struct gpu_kmajor_plan {
    int64_t ld; /* row length of the copies, elements: N rounded to 16 (dgrad), Mp (wgrad) */
    size_t a_bytes, b_bytes, remap_bytes, copies;
};

static inline gpu_kmajor_plan gpu_kmajor_plan_of(int op, const struct family_grouped_map *m, int es)
{
    gpu_kmajor_plan pl;
    memset(&pl, 0, sizeof pl);
    if (op == GG_OP_GROUPED_FWD)
        return pl;
    int64_t units = 0; /* dgrad: experts with tokens; wgrad: Mp */
    for (int64_t g = 0; g < m->groups; g++) {
        int64_t len = m->offs[g + 1] - m->offs[g];
        units += op == GG_OP_GROUPED_DGRAD ? len > 0 : gpu_kmajor_run(len, es);
    }
    if (op == GG_OP_GROUPED_DGRAD) {
        pl.ld = (m->n + 15) / 16 * 16;
        pl.b_bytes = (size_t)units * (size_t)m->k * (size_t)pl.ld * (size_t)es;
    } else {
        pl.ld = units;
        pl.a_bytes = (size_t)m->n * (size_t)units * (size_t)es;
        pl.b_bytes = (size_t)m->k * (size_t)units * (size_t)es;
    }
    pl.remap_bytes = (size_t)(m->groups + 1) * sizeof(int64_t);
    /* + 256: the copies start at the first 256-byte boundary of the workspace */
    pl.copies = 256 + gpu_align256(pl.a_bytes) + gpu_align256(pl.b_bytes) +
                gpu_align256(pl.remap_bytes);
    return pl;
}

/*
 * Makes the copies of plan pl in ws and points P's operands at them: dgrad reads the packed
 * W_gᵀ (the weight reads there keep i32_group_base and i32_byte_limit), wgrad the transposed dY
 * and X with each group's columns at remap[g].
 */
static inline enum gg_status gpu_kmajor_copies(const gpu_kmajor_plan &pl, gpu_grouped *P,
                                               uint8_t *ws, int es, cudaStream_t s, char *err,
                                               size_t err_len)
{
    uint8_t *a_copy = (uint8_t *)gpu_align256((size_t)(uintptr_t)ws);
    uint8_t *b_copy = a_copy + gpu_align256(pl.a_bytes);
    int64_t *remap = (int64_t *)(b_copy + gpu_align256(pl.b_bytes));
    int dgrad = P->op == GG_OP_GROUPED_DGRAD;
    enum gg_status st = gpu_remap_run(P->offs, P->groups, dgrad ? P->k * pl.ld : 0, es, remap,
                                      s, err, err_len);
    if (st != GG_OK)
        return st;
    gpu_transpose T;
    memset(&T, 0, sizeof T);
    T.es = es;
    T.groups = P->groups;
    T.offs = P->offs;
    T.remap = remap;
    T.wrap32 = P->wrap32;
    T.ldd = pl.ld;
    P->remap = remap;
    if (dgrad) { /* W_g: N rows of K at g·stride_b, ldb */
        T.src = (const uint8_t *)P->b;
        T.dst = b_copy;
        T.rows = P->n;
        T.cols = P->k;
        T.lds = P->ldb;
        T.by_group = 1;
        T.src_stride = P->stride_b;
        T.i32_group_base = P->i32_group_base;
        P->b = b_copy;
        P->b_sr = 1;
        P->b_sj = pl.ld;
        return gpu_transpose_run(T, s, err, err_len);
    }
    /* wgrad: dY (M rows of N, lda) and X (M rows of K, ldb) into Mp columns each */
    T.src = (const uint8_t *)P->a;
    T.dst = a_copy;
    T.rows = pl.ld;
    T.cols = P->n;
    T.lds = P->lda;
    if ((st = gpu_transpose_run(T, s, err, err_len)) != GG_OK)
        return st;
    T.src = (const uint8_t *)P->b;
    T.dst = b_copy;
    T.cols = P->k;
    T.lds = P->ldb;
    P->a = a_copy;
    P->a_si = pl.ld;
    P->a_sr = 1;
    P->b = b_copy;
    P->b_sr = 1;
    P->b_sj = pl.ld;
    return gpu_transpose_run(T, s, err, err_len);
}

#endif /* GG_GPU_TRANSPOSE_INT_H */

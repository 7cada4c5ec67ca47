/*
 * gpu_wgmma_int.h — the main loop on Hopper's warpgroup MMA (sm_90a), for FP8 and, in the
 * persistent kernels, BF16: a CTA of two warpgroups computes a 128x128 tile, each warpgroup 64
 * rows with wgmma.mma_async m64n128k32 (e4m3/e5m2 in, fp32 accumulate), both operands read
 * straight from shared memory through matrix descriptors. Operands must be K-major (the only
 * layout the 8-bit wgmma reads). A stage holds 128 bytes of K of both tiles in the 128-byte
 * swizzled layout the descriptors describe; stages stream in by every thread's cp.async,
 * GPU_WG_AHEAD stages ahead, or by a producer warp's TMA (gpu_tma_int.h), GPU_WG_STAGES ahead.
 * The tensor cores accumulate FP8 products in less than fp32 precision (about 14 bits are kept,
 * as DeepSeek-V3 reports for H800), so each stage's 128-deep sum is taken fresh by the wgmmas and
 * added into the fp32 accumulators with ordinary fp32 adds, as DeepGEMM does every 128
 * (promoting every 64 measured 10-15% slower, for an error the per-step alignment loss of the
 * tensor cores dominates anyway); bf16 operands (m64n128k16), whose sums the tensor cores keep
 * in fp32, add straight into the accumulators. Stages pass between the loads and the
 * warpgroups through mbarriers (gpu_wg_mainloop). The accumulators land in the gpu_acc array of
 * the engine in wgmma's layout (see gpu_frag_rc). The cp.async loads use the building blocks of
 * gpu_tile_int.h; the kernels of gpu_gemm_int.h run this main loop.
 */
#ifndef GG_GPU_WGMMA_INT_H
#define GG_GPU_WGMMA_INT_H

#include "kernels/gpu/gpu_tma_int.h"

#ifndef GPU_WG_STAGES /* a tuning knob, -DGPU_WG_STAGES=N */
#define GPU_WG_STAGES 5
#endif
/* A slot is refilled two stages after its use, so that one warpgroup may run a stage ahead of
   the other without waiting. */
#define GPU_WG_AHEAD (GPU_WG_STAGES - 2)
#define GPU_WG_TILE_BYTES (GPU_BM * GPU_WG_BK) /* A or B of one stage: 16 KiB */
#define GPU_WG_PIPE_BYTES (GPU_WG_STAGES * 2 * GPU_WG_TILE_BYTES)
/* The stages' mbarriers (full, then empty) after the pipeline or the epilogue's staging. */
#define GPU_WG_BAR_OFF (GPU_WG_PIPE_BYTES > GPU_STG_BYTES ? GPU_WG_PIPE_BYTES : GPU_STG_BYTES)
#define GPU_WG_SMEM_BYTES (GPU_WG_BAR_OFF + 2 * GPU_WG_STAGES * 8)

/* The format pairs of the wgmma path (0: not the wgmma path). */
enum { GPU_WG_NONE = 0, GPU_WG_E4M3_E4M3, GPU_WG_E4M3_E5M2, GPU_WG_E5M2_E4M3, GPU_WG_E5M2_E5M2,
       GPU_WG_BF16 };

/* Bytes per element of format pair WGF's operands: a stage holds 128 bytes of K either way,
   128 fp8 or 64 bf16 elements, and one wgmma step reads 32 bytes of it (k32 or k16). */
__host__ __device__ constexpr int gpu_wg_esize(int wgf)
{
    return wgf == GPU_WG_BF16 ? 2 : 1;
}

/* The pair of OCP formats fa and fb, or GPU_WG_NONE when either is not an OCP fp8 format. */
static inline int gpu_wg_formats(int fa, int fb)
{
    int ok = (fa == GG_DTYPE_E4M3 || fa == GG_DTYPE_E5M2) &&
             (fb == GG_DTYPE_E4M3 || fb == GG_DTYPE_E5M2);
    if (!ok || !GG_GPU_HAVE_WGMMA)
        return GPU_WG_NONE;
    return GPU_WG_E4M3_E4M3 + 2 * (fa == GG_DTYPE_E5M2) + (fb == GG_DTYPE_E5M2);
}

/* Byte offset of (row, k) in a stage tile: row r at r·128, its 16-byte chunk c at chunk
   c ^ (r mod 8) (the 128-byte swizzle; tiles start at multiples of 1024 bytes). */
__device__ __forceinline__ int gpu_wg_off(int row, int k)
{
    return row * GPU_WG_BK + ((((k >> 4) ^ row) & 7) << 4) + (k & 15);
}

/* A thread's four 16-byte chunks of an operand tile: chunk c = thread + q·256 is row c / 8 and
   K bytes (c mod 8)·16 .., so chunk q lies 32·q rows below chunk 0, at the same place in the
   128-byte swizzle (32 is a multiple of 8). Kept: where chunk 0 starts at K = 0 and the step to
   the next chunk, its place in a stage, which rows exist, and whether whole stages may go by
   cp.async without checks (aligned rows, no wrap). */
struct gpu_wg_chunks {
    const uint8_t *src;
    int64_t step;
    int dst;
    unsigned live;
    int fast;
};

#define GPU_WG_CHUNK_ROWS (GPU_THREADS / 8) /* rows between a thread's chunks */

__device__ __forceinline__ void gpu_wg_chunks_of(const gpu_operand &o, int wrap32,
                                                 gpu_wg_chunks &ch)
{
    int mn = threadIdx.x >> 3, kk = (threadIdx.x & 7) * 16;
    ch.src = o.base + o.off + (int64_t)mn * o.s_mn + kk;
    ch.step = (int64_t)GPU_WG_CHUNK_ROWS * o.s_mn;
    ch.dst = gpu_wg_off(mn, kk);
    ch.live = 0;
#pragma unroll
    for (int q = 0; q < 4; q++)
        ch.live |= (unsigned)(mn + q * GPU_WG_CHUNK_ROWS < o.mn_lim) << q;
    ch.fast = !wrap32 && o.gather == NULL && (((uintptr_t)(o.base + o.off)) & 15) == 0 &&
              (o.s_mn & 15) == 0;
}

/*
 * Loads the stage of K starting at r into the stage tile s: 1024 chunks of 16 bytes, four per
 * thread. A stage wholly inside K with aligned rows and an aligned start (split-K slices start
 * anywhere) goes by cp.async without checks; otherwise
 * a whole, aligned chunk goes by cp.async and a partial or misaligned one (or one that would
 * cross the 32-bit range under wrap32) byte by byte, zeros outside the operand. Returns whether
 * the thread wrote shared memory with ordinary stores (zeros, or the byte path).
 */
__device__ __forceinline__ int gpu_wg_load_stage(const gpu_operand &o, const gpu_wg_chunks &ch,
                                                 int64_t r, uint8_t *s, int wrap32)
{
    /* The common case has its own branch without per-chunk tests: folded into the next one, the
       fp8 fwd of the H100 benchmark ran 7-13% slower. */
    if (ch.fast && ch.live == 15 && (r & 15) == 0 && r + GPU_WG_BK <= o.r1) {
#pragma unroll
        for (int q = 0; q < 4; q++)
            gpu_cp_async16(s + ch.dst + q * GPU_WG_CHUNK_ROWS * GPU_WG_BK,
                           ch.src + q * ch.step + r);
        return 0;
    }
    if (ch.fast && (r & 15) == 0 && r + GPU_WG_BK <= o.r1) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            uint8_t *dst = s + ch.dst + q * GPU_WG_CHUNK_ROWS * GPU_WG_BK;
            if (ch.live >> q & 1)
                gpu_cp_async16(dst, ch.src + q * ch.step + r);
            else
                *(uint4 *)dst = make_uint4(0, 0, 0, 0);
        }
        return 1;
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
        int c = threadIdx.x + q * GPU_THREADS;
        int mn = c >> 3, kk = (c & 7) * 16;
        int64_t k = r + kk;
        int64_t e0 = gpu_wrap(wrap32, o.off + (int64_t)mn * o.s_mn + k);
        uint8_t *dst = s + gpu_wg_off(mn, kk);
        if (mn >= o.mn_lim || k >= o.r1) { /* wholly outside the operand: the K tail of most shapes */
            *(uint4 *)dst = make_uint4(0, 0, 0, 0);
            continue;
        }
        if (k + 16 <= o.r1 && (((uintptr_t)(o.base + e0)) & 15) == 0 &&
            (!wrap32 || e0 + 16 <= ((int64_t)1 << 32))) {
            gpu_cp_async16(dst, o.base + e0);
            continue;
        }
        uint8_t v[16];
#pragma unroll
        for (int j = 0; j < 16; j++)
            v[j] = k + j < o.r1 ? o.base[gpu_wrap(wrap32, o.off + (int64_t)mn * o.s_mn + k + j)]
                                : (uint8_t)0;
        *(uint4 *)dst = *(const uint4 *)v;
    }
    return 1;
}

#if GG_GPU_HAVE_WGMMA
/* The shared-memory matrix descriptor of a K-major, 128-byte swizzled tile at p: start address,
   stride between 8-row groups 1024 bytes, layout 128B swizzle. */
__device__ __forceinline__ uint64_t gpu_wg_desc(const uint8_t *p)
{
    uint64_t a = gpu_smem_addr(p);
    return ((a & 0x3FFFF) >> 4) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

#define GPU_WGMMA_M64N128(KTYPES, TRANS)                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                               \
                 "wgmma.mma_async.sync.aligned.m64n128" KTYPES " {"              \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, " \
                 "%64, %65, p, 1, 1" TRANS ";\n}\n"                                                 \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
                 : "l"(da), "l"(db), "r"(scale_d))

/* d = A·Bᵀ (scale_d 0) or d += A·Bᵀ (1) for one 32-byte step of K (k32 fp8, k16 bf16): A 64
   rows at da, B 128 rows at db, both K-major; WGF is the format pair (gpu_wg_formats). */
template <int WGF>
__device__ __forceinline__ void gpu_wgmma(float *d, uint64_t da, uint64_t db, int scale_d)
{
    if constexpr (WGF == GPU_WG_E4M3_E4M3)
        GPU_WGMMA_M64N128("k32.f32.e4m3.e4m3", "");
    else if constexpr (WGF == GPU_WG_E4M3_E5M2)
        GPU_WGMMA_M64N128("k32.f32.e4m3.e5m2", "");
    else if constexpr (WGF == GPU_WG_E5M2_E4M3)
        GPU_WGMMA_M64N128("k32.f32.e5m2.e4m3", "");
    else if constexpr (WGF == GPU_WG_E5M2_E5M2)
        GPU_WGMMA_M64N128("k32.f32.e5m2.e5m2", "");
    else /* bf16: not transposed (K-major A and B) */
        GPU_WGMMA_M64N128("k16.f32.bf16.bf16", ", 0, 0");
}

/* Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs. */
__device__ __forceinline__ void gpu_wg_fence_acc(float *d)
{
#pragma unroll
    for (int i = 0; i < 64; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* mbarrier operations on shared-memory barriers (PTX ISA, "Parallel synchronization and
   communication instructions: mbarrier"). */
__device__ __forceinline__ void gpu_mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(gpu_smem_addr(bar)),
                 "r"(count)
                 : "memory");
}

__device__ __forceinline__ void gpu_mbar_arrive(uint64_t *bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(
                     gpu_smem_addr(bar))
                 : "memory");
}

/* An arrival on bar once all of the thread's earlier cp.async copies have landed (counted as
   one of the barrier's expected arrivals). */
__device__ __forceinline__ void gpu_mbar_arrive_cp_async(uint64_t *bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(
                     gpu_smem_addr(bar))
                 : "memory");
}

/* Waits until the phase of bar with this parity has completed. */
__device__ __forceinline__ void gpu_mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nwait_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n}\n" ::"r"(gpu_smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

#endif

/* The stage pipeline of a CTA: the slots of A and B, their full and empty barriers, the count
   of stages it has filled before the current tile (over the CTA's life, so that the barriers'
   phases carry from one tile to the next), and the launch's tensor maps where it loads by TMA. */
struct gpu_wg_pipe {
    uint8_t *As, *Bs;
    uint64_t *full, *empty;
    unsigned n0;
    const gpu_tmaps *tm;
};

/* One tile's reduction over [r0, a.r1) as the pipeline sees it: its operands, their chunks
   (cp.async) or the box coordinates of its first stage (TMA; a stage is kstep elements), and its
   number of stages. */
struct gpu_wg_job {
    gpu_operand a, b;
    gpu_wg_chunks ca, cb;
    gpu_tcoord ta, tb;
    int kstep;
    int64_t r0;
    int ktiles;
};

#if GG_GPU_HAVE_WGMMA
/* Waits until both warpgroups have released the slot of stage n's previous stage
   (n - GPU_WG_STAGES). */
__device__ __forceinline__ void gpu_wg_slot_free(const gpu_wg_pipe &pp, unsigned n)
{
    if (n >= GPU_WG_STAGES)
        gpu_mbar_wait(&pp.empty[n % GPU_WG_STAGES], (n / GPU_WG_STAGES - 1) & 1);
}

/* Fills the slot of stage n (a count over the CTA's life) with stage kt of job j by cp.async:
   every thread waits for the slot, issues its loads of both operands and arrives twice on the
   slot's full barrier: once when its copies have landed (cp.async's own arrival) and once now,
   after making any zeros or bytes it stored itself visible to the tensor cores' (async) proxy. */
__device__ __forceinline__ void gpu_wg_fill(const gpu_wg_pipe &pp, const gpu_wg_job &j,
                                            unsigned n, int kt, int wrap32)
{
    int st = n % GPU_WG_STAGES;
    gpu_wg_slot_free(pp, n);
    int64_t r = j.r0 + (int64_t)kt * GPU_WG_BK;
    int stored = gpu_wg_load_stage(j.a, j.ca, r, pp.As + st * GPU_WG_TILE_BYTES, wrap32);
    stored |= gpu_wg_load_stage(j.b, j.cb, r, pp.Bs + st * GPU_WG_TILE_BYTES, wrap32);
    gpu_mbar_arrive_cp_async(&pp.full[st]);
    if (stored)
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    gpu_mbar_arrive(&pp.full[st]);
}

/* Moves the warpgroup's register limit to N (sm_90a setmaxnreg): down for a producer, up for
   the consumers, within the block's registers at launch. */
template <int N> __device__ __forceinline__ void gpu_setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N> __device__ __forceinline__ void gpu_setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
#endif

/* The same by TMA, from one thread: it waits for the slot, announces the stage's bytes on the
   slot's full barrier and issues the two boxes, which complete them. */
__device__ __forceinline__ void gpu_wg_fill_tma(const gpu_wg_pipe &pp, const gpu_wg_job &j,
                                                unsigned n, int kt)
{
#if GG_GPU_HAVE_TMA
    int st = n % GPU_WG_STAGES, dk = kt * j.kstep;
    gpu_wg_slot_free(pp, n);
    gpu_mbar_arrive_tx(&pp.full[st], 2 * GPU_WG_TILE_BYTES);
    gpu_tma_load(pp.As + st * GPU_WG_TILE_BYTES, &pp.tm->a, &pp.full[st],
                 {j.ta.x + dk, j.ta.y, j.ta.z});
    gpu_tma_load(pp.Bs + st * GPU_WG_TILE_BYTES, &pp.tm->b, &pp.full[st],
                 {j.tb.x + dk, j.tb.y, j.tb.z});
#else
    (void)pp;
    (void)j;
    (void)n;
    (void)kt;
#endif
}

/* The pipeline over smem (slots at 0) with its barriers at bar, initialised, loading by TMA
   through the maps tm (else NULL: cp.async); every thread calls it, and a block barrier must
   follow before the first fill. A full barrier expects the producer's one arrival (TMA) or two
   of each of the GPU_THREADS threads (cp.async), an empty one an arrival of each consumer
   warp. */
__device__ __forceinline__ gpu_wg_pipe gpu_wg_pipe_init(uint8_t *smem, uint8_t *bar,
                                                        const gpu_tmaps *tm)
{
    gpu_wg_pipe pp = {smem, smem + GPU_WG_STAGES * GPU_WG_TILE_BYTES, (uint64_t *)bar,
                      (uint64_t *)bar + GPU_WG_STAGES, 0, tm};
#if GG_GPU_HAVE_WGMMA
    if (threadIdx.x < GPU_WG_STAGES) {
        gpu_mbar_init(&pp.full[threadIdx.x], tm != NULL ? 1 : 2 * GPU_THREADS);
        gpu_mbar_init(&pp.empty[threadIdx.x], GPU_THREADS / 32);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
    return pp;
}

/* Stages of 128 bytes from element r0 to the end of operand a's reduction (elements of es
   bytes). */
__device__ __forceinline__ int gpu_wg_ktiles(const gpu_operand &a, int64_t r0, int es)
{
    return a.r1 > r0 ? (int)(((a.r1 - r0) * es + GPU_WG_BK - 1) / GPU_WG_BK) : 0;
}

/* Job j of the operands a and b (element offsets) reduced from r0, for the pipeline pp, whose
   elements are es bytes. */
__device__ __forceinline__ void gpu_wg_job_of(const gpu_wg_pipe &pp, const gpu_operand &a,
                                              const gpu_operand &b, int64_t r0, int es,
                                              int wrap32, gpu_wg_job &j)
{
    if (pp.tm != NULL) { /* boxes of r0 = 0 (no split-K on TMA launches) */
        j.ta = gpu_tcoord_of(a.off, pp.tm->a_smn, pp.tm->a_sz);
        j.tb = gpu_tcoord_of(b.off, pp.tm->b_smn, pp.tm->b_sz);
        j.kstep = GPU_WG_BK / es;
    }
    j.ktiles = gpu_wg_ktiles(a, r0, es);
    /* the cp.async loads count bytes: element offsets, strides and the reduction's ends times
       es */
    j.a = a;
    j.b = b;
    j.a.off *= es;
    j.a.s_mn *= es;
    j.a.r1 *= es;
    j.b.off *= es;
    j.b.s_mn *= es;
    j.b.r1 *= es;
    r0 *= es;
    j.r0 = r0;
    if (pp.tm == NULL) {
        gpu_wg_chunks_of(j.a, wrap32, j.ca);
        gpu_wg_chunks_of(j.b, wrap32, j.cb);
    }
}

/* Issues the first GPU_WG_AHEAD stages of job j, which starts at stage pp.n0 (cp.async). */
__device__ __forceinline__ void gpu_wg_prologue(const gpu_wg_pipe &pp, const gpu_wg_job &j,
                                                int wrap32)
{
#if GG_GPU_HAVE_WGMMA
    for (int s = 0; s < GPU_WG_AHEAD && s < j.ktiles; s++)
        gpu_wg_fill(pp, j, pp.n0 + s, s, wrap32);
#else
    (void)pp;
    (void)j;
    (void)wrap32;
#endif
}

/*
 * acc = the fp32 sums of job j of operands of the format pair WGF; pp.n0 moves past its stages.
 * FILL: the consumers load by cp.async themselves (the first GPU_WG_AHEAD stages already issued
 * by gpu_wg_prologue, each later one while the tensor cores work); else a producer warp fills
 * the slots. Stages pass between the loads and the two warpgroups through mbarriers, not
 * block-wide barriers: a slot's full barrier completes when its bytes have landed (and, with
 * cp.async, every thread's own stores are visible), its empty barrier when all 8 consumer warps
 * have waited for the wgmmas that read it.
 * - fp8: the tensor cores keep about 14 bits of their sums, so each stage's sum is taken fresh
 *   into part, waited for, and added into acc in fp32 (the promotion), the slot released; the
 *   other warpgroup's wgmmas keep the tensor cores busy meanwhile.
 * - bf16: the tensor cores accumulate in fp32, so the wgmmas add into acc directly and a
 *   warpgroup keeps a stage of them in flight: it waits for stage kt - 1 (and releases its slot)
 *   only after issuing stage kt. Under the warp-specialized kernel's TMA producer this took the
 *   H100 benchmark's skewed bf16 wgrad from 0.40 to 0.43 of cuBLAS (DeepSeek-V3, Qwen3-235B);
 *   with the cp.async loads it was neither faster nor slower, and both loads keep it so that
 *   they sum in the same order.
 * Filling the next tile's first stages from inside this loop, once j has none left, made the fwd
 * of the H100 benchmark 4-10% slower and the short wgrad tiles no faster.
 */
template <int WGF, bool FILL>
__device__ void gpu_wg_consume(gpu_wg_pipe &pp, const gpu_wg_job &j, gpu_acc acc, int wrap32)
{
    float *d = &acc[0][0][0];
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.0f;
#if GG_GPU_HAVE_WGMMA
    constexpr bool PROMOTE = WGF != GPU_WG_BF16;
    float part[PROMOTE ? 64 : 1];
    float *sum = PROMOTE ? part : d; /* where the wgmmas add */
    const uint8_t *a_wg = pp.As + (threadIdx.x >> 7) * 64 * GPU_WG_BK;
    for (int kt = 0; kt < j.ktiles; kt++) {
        unsigned n = pp.n0 + kt;
        int cs = n % GPU_WG_STAGES;
        gpu_mbar_wait(&pp.full[cs], (n / GPU_WG_STAGES) & 1);
        if (FILL) /* (the copy engine writes through the async proxy already) */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        const uint8_t *at = a_wg + cs * GPU_WG_TILE_BYTES, *bt = pp.Bs + cs * GPU_WG_TILE_BYTES;
        gpu_wg_fence_acc(sum);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < GPU_WG_BK; kk += 32)
            gpu_wgmma<WGF>(sum, gpu_wg_desc(at + kk), gpu_wg_desc(bt + kk), !PROMOTE || kk > 0);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        if (FILL && kt + GPU_WG_AHEAD < j.ktiles)
            gpu_wg_fill(pp, j, n + GPU_WG_AHEAD, kt + GPU_WG_AHEAD, wrap32);
        if constexpr (PROMOTE) {
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            gpu_wg_fence_acc(part);
            if ((threadIdx.x & 31) == 0)
                gpu_mbar_arrive(&pp.empty[cs]);
#pragma unroll
            for (int i = 0; i < 64; i++)
                d[i] += part[i];
        } else {
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            if (kt > 0 && (threadIdx.x & 31) == 0)
                gpu_mbar_arrive(&pp.empty[(n - 1) % GPU_WG_STAGES]);
        }
    }
    if (!PROMOTE && j.ktiles > 0) {
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        gpu_wg_fence_acc(d);
        if ((threadIdx.x & 31) == 0)
            gpu_mbar_arrive(&pp.empty[(pp.n0 + j.ktiles - 1) % GPU_WG_STAGES]);
    }
#else /* never launched without wgmma (gpu_wg_formats gives GPU_WG_NONE) */
    (void)wrap32;
#endif
    pp.n0 += (unsigned)j.ktiles;
}

/* The main loop of one (tile, slice) item of the non-persistent engine: a fresh pipeline in
   smem (cp.async loads), its barriers at GPU_WG_BAR_OFF, and no shared memory in use when it
   returns. */
template <int WGF>
__device__ void gpu_wg_mainloop(const gpu_grouped &P, gpu_acc acc, const gpu_operand &a,
                                const gpu_operand &b, int64_t r0, uint8_t *smem)
{
    __syncthreads(); /* the previous item is done with the barriers and the slots */
    gpu_wg_pipe pp = gpu_wg_pipe_init(smem, smem + GPU_WG_BAR_OFF, NULL);
    __syncthreads();
    gpu_wg_job j;
    gpu_wg_job_of(pp, a, b, r0, gpu_wg_esize(WGF), P.wrap32, j);
    gpu_wg_prologue(pp, j, P.wrap32);
    gpu_wg_consume<WGF, true>(pp, j, acc, P.wrap32);
    __syncthreads(); /* the other warpgroup's wgmmas may still read a slot the epilogue reuses */
}

#endif /* GG_GPU_WGMMA_INT_H */

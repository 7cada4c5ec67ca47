/*
 * gpu_mainloop_int.h — the mma.sync main loop of the grouped engine, for bf16 inputs and for
 * 8-bit float inputs decoded exactly to bf16 in the loader: operands stream through a 4-stage
 * cp.async pipeline into swizzled shared memory and are multiplied on tensor cores (ldmatrix,
 * and mma.sync m16n8k16 bf16 -> fp32; a portable per-thread path on HIP); under block128 and MX
 * each K group's sums are scaled into the accumulators (the mutant e8m0_special lives there).
 * The wgmma main loop is gpu_wgmma_int.h.
 */
#ifndef GG_GPU_MAINLOOP_INT_H
#define GG_GPU_MAINLOOP_INT_H

#include "kernels/gpu/gpu_tile_int.h"

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

#endif /* GG_GPU_MAINLOOP_INT_H */

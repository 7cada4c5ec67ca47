/*
 * gpu_int.h — internal to kernels/gpu: picks the backend (backend/cuda.h or backend/hip.h),
 * turns runtime errors into GG_E_DEVICE with "call, file:line: error string", and holds the
 * helpers every GPU kernel shares: exact bf16 and fp8 decodes, the RNE bf16 encode the CPU
 * kernels use, the 32-bit offset arithmetic of the mutants, and the descriptor and launch
 * helpers. With it come the families' rules (kernels/family/family.h) and the descriptors
 * (gpu_kernels.h). Included only from kernels/gpu.
 */
#ifndef GG_GPU_INT_H
#define GG_GPU_INT_H

#ifdef GG_GPU_HIP
#include "kernels/gpu/backend/hip.h"
#else
#include "kernels/gpu/backend/cuda.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/family/family.h"
#include "kernels/gpu/gpu_kernels.h"

/* The host functions a kernel descriptor points at (unreferenced in a device-only pass). */
#define GG_GPU_ENTRY [[maybe_unused]] static

/* Kernel names follow <family>_<types>_<backend>_<variant>. */
#define GG_GPU_NAME(family, variant) family "_" GG_GPU_BACKEND_NAME "_" variant

/* Runs a runtime call; on failure writes "call, file:line: error string" into err and returns
   GG_E_DEVICE from the enclosing function (which must return enum gg_status). */
#define GG_GPU_CHECK(call)                                                                     \
    do {                                                                                       \
        cudaError_t gg_e_ = (call);                                                            \
        if (gg_e_ != cudaSuccess)                                                              \
            return gpu_fail(err, err_len, #call, __FILE__, __LINE__, cudaGetErrorString(gg_e_)); \
    } while (0)

/* The same after a kernel launch (launch configuration errors surface here). */
#define GG_GPU_CHECK_LAUNCH(what) GG_GPU_CHECK((what, cudaGetLastError()))

static inline enum gg_status gpu_fail(char *err, size_t err_len, const char *call,
                                      const char *file, int line, const char *msg)
{
    if (err != NULL && err_len > 0)
        snprintf(err, err_len, "%s, %s:%d: %s", call, file, line, msg);
    return GG_E_DEVICE;
}

/* ---- device helpers ------------------------------------------------------------------------ */

__device__ __forceinline__ float gpu_bf16_to_f32(uint16_t h)
{
    return __uint_as_float((uint32_t)h << 16);
}

/* binary32 -> bf16, round to nearest even; NaN keeps its top payload bits and turns quiet
   (the same function as cpu_f32_to_bf16, so GPU and CPU kernels round identically). */
__device__ __forceinline__ uint16_t gpu_f32_to_bf16(float f)
{
    uint32_t u = __float_as_uint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* Two binary32 values as a bf16 pair (lo in the low half), rounded as gpu_f32_to_bf16 rounds:
   by the hardware's round-to-nearest-even conversion where neither is NaN (the same result for
   every other value, subnormals and overflow to Inf included), else one by one, so that a NaN
   keeps its payload as on the CPU. */
__device__ __forceinline__ uint32_t gpu_f32x2_to_bf16x2(float lo, float hi)
{
#if GG_GPU_HAVE_MMA
    if (!isnan(lo) && !isnan(hi)) {
        uint32_t r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
#endif
    return gpu_f32_to_bf16(lo) | (uint32_t)gpu_f32_to_bf16(hi) << 16;
}

/* The exact bf16 code of an 8-bit float code (every e4m3, e5m2, e4m3fnuz and e5m2fnuz value is
   a bf16 value): sign, exponent rebiased to 127, mantissa shifted; subnormals normalised; the
   format's NaN and Inf codes mapped to bf16 NaN and Inf. fmt is one of the GG_DTYPE values. */
__host__ __device__ inline uint16_t gpu_fp8_to_bf16(int fmt, uint32_t c)
{
    int e4m3 = fmt == GG_DTYPE_E4M3 || fmt == GG_DTYPE_E4M3FNUZ;
    int fnuz = fmt == GG_DTYPE_E4M3FNUZ || fmt == GG_DTYPE_E5M2FNUZ;
    int mbits = e4m3 ? 3 : 2, ebits = e4m3 ? 4 : 5;
    int bias = (e4m3 ? 7 : 15) + fnuz;
    uint32_t sign = (c >> 7) & 1u, exp = (c >> mbits) & ((1u << ebits) - 1u);
    uint32_t man = c & ((1u << mbits) - 1u);
    if (fnuz && c == 0x80u)
        return 0x7FC0u;
    if (!fnuz && e4m3 && (c & 0x7Fu) == 0x7Fu)
        return (uint16_t)((sign << 15) | 0x7FC0u);
    if (!fnuz && !e4m3 && exp == 31u)
        return (uint16_t)((sign << 15) | (man ? 0x7FC0u : 0x7F80u));
    if (exp == 0 && man == 0)
        return (uint16_t)(sign << 15);
    int e = (int)exp - bias;
    if (exp == 0) { /* subnormal: normalise */
        e = 1 - bias;
        while (!(man & (1u << mbits))) {
            man <<= 1;
            e--;
        }
        man &= (1u << mbits) - 1u;
    }
    return (uint16_t)((sign << 15) | ((uint32_t)(e + 127) << 7) | (man << (7 - mbits)));
}

/* x·y as 32-bit int arithmetic computes it when i32 is set (wraps modulo 2^32 into
   [-2^31, 2^31)), else the exact int64 product: the offset mutants' arithmetic. */
__host__ __device__ inline int64_t gpu_offset(int i32, int64_t x, int64_t y)
{
    if (!i32)
        return x * y;
    uint32_t w = (uint32_t)x * (uint32_t)y;
    return w <= 0x7FFFFFFFu ? (int64_t)w : (int64_t)w - ((int64_t)1 << 32);
}

__host__ __device__ inline int64_t gpu_min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static inline int64_t gpu_ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

/* Multiprocessor count of the current device. */
static inline enum gg_status gpu_sm_count(int *sms, char *err, size_t err_len)
{
    int dev = 0;
    GG_GPU_CHECK(cudaGetDevice(&dev));
    GG_GPU_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    return GG_OK;
}

#endif /* GG_GPU_INT_H */

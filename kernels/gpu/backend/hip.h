/*
 * backend/hip.h — the HIP backend of the GPU kernels: names it, sets its feature switches, and
 * maps the CUDA runtime names used by kernels/gpu and by the harness's device services
 * (fuzz/run/device) onto HIP (the only place that does, as ggml's vendors/hip.h). Device code written
 * for CUDA compiles unchanged with hipcc; NVIDIA-only instructions are replaced by the portable
 * path (GG_GPU_HAVE_MMA is 0).
 */
#ifndef GG_GPU_BACKEND_HIP_H
#define GG_GPU_BACKEND_HIP_H

#include <hip/hip_runtime.h>

#define GG_GPU_BACKEND GG_BACKEND_HIP
#define GG_GPU_BACKEND_NAME "hip"
#define GG_GPU_VENDOR "HIP"
#define GG_GPU_HAVE_MMA 0
/* No warpgroup MMA (Hopper's wgmma, sm_90a): FP8 and the persistent kernel's BF16 take the
   portable path. */
#define GG_GPU_HAVE_WGMMA 0
/* HIP has no error codes for the kinds of kernel fault CUDA tells apart (hardware stack error,
   illegal instruction, misaligned address, invalid address space, invalid PC): code that tests
   for them leaves those cases out, and a fault the runtime reports at all comes as
   hipErrorLaunchFailure or hipErrorIllegalAddress (both mapped below). */
#define GG_GPU_HAVE_FAULT_CODES 0
/* A kernel parameter the kernel may take the address of: any const one on HIP. */
#define GG_GPU_GRID_CONSTANT
/* No tensor memory accelerator: the persistent kernel keeps its per-thread loads. */
#define GG_GPU_HAVE_TMA 0
/* clang emits namespace-scope const objects on the device too, so the kernel descriptors (which
   point at host functions) are left out of the device pass. */
#ifdef __HIP_DEVICE_COMPILE__
#define GG_GPU_DEVICE_PASS 1
#else
#define GG_GPU_DEVICE_PASS 0
#endif

#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorIllegalAddress hipErrorIllegalAddress
#define cudaErrorLaunchFailure hipErrorLaunchFailure
#define cudaErrorLaunchTimeout hipErrorLaunchTimeOut
#define cudaErrorAssert hipErrorAssert
#define cudaErrorECCUncorrectable hipErrorECCNotCorrectable
#define cudaErrorContextIsDestroyed hipErrorContextIsDestroyed
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMalloc hipMalloc
#define cudaFree hipFree
/* Pinned host memory: hipMallocHost is deprecated for hipHostMalloc (default flags). */
#define cudaMallocHost hipHostMalloc
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemcpyKind hipMemcpyKind
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStream_t hipStream_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaFuncSetAttribute hipFuncSetAttribute
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor

/* Loads that bypass the (incoherent) L1: HIP's global loads are coherent at the agent level for
   memory written by other workgroups once they are fenced, so a plain volatile load serves. */
template <typename T> __device__ __forceinline__ T __ldcg(const T *p)
{
    return *(const volatile T *)p;
}

/* A CUDA warp is 32 lanes, a wavefront of gfx90a and gfx940 64: with a width of 32 each half of
   the wavefront shuffles as one warp would. Every caller passes the full mask (all 32 lanes take
   part), which HIP's unsynchronised shuffle implies. Spelt through a macro so that a HIP that has
   its own __shfl_down_sync (with a 64-bit mask) does not clash. */
template <typename T>
__device__ __forceinline__ T gg_hip_shfl_down_sync(unsigned mask, T var, unsigned delta,
                                                    int width = 32)
{
    (void)mask;
    return __shfl_down(var, delta, width);
}
#define __shfl_down_sync gg_hip_shfl_down_sync

#endif /* GG_GPU_BACKEND_HIP_H */

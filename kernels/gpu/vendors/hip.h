/*
 * vendors/hip.h — maps the CUDA runtime names used by kernels/gpu onto HIP (the only place that
 * does, as ggml's vendors/hip.h). Device code written for CUDA compiles unchanged with hipcc;
 * NVIDIA-only instructions are replaced by the portable path (GG_GPU_HAVE_MMA is 0).
 */
#ifndef GG_GPU_VENDORS_HIP_H
#define GG_GPU_VENDORS_HIP_H

#include <hip/hip_runtime.h>

#define GG_GPU_BACKEND GG_BACKEND_HIP
#define GG_GPU_BACKEND_NAME "hip"
#define GG_GPU_HAVE_MMA 0
/* Hopper's warpgroup MMA (wgmma, sm_90a): the FP8 tensor-core path. */
#define GG_GPU_HAVE_WGMMA 0
/* clang emits namespace-scope const objects on the device too, so the kernel descriptors (which
   point at host functions) are left out of the device pass. */
#ifdef __HIP_DEVICE_COMPILE__
#define GG_GPU_DEVICE_PASS 1
#else
#define GG_GPU_DEVICE_PASS 0
#endif

#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMalloc hipMalloc
#define cudaFree hipFree
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

#endif /* GG_GPU_VENDORS_HIP_H */

/*
 * vendors/cuda.h — the CUDA side of the runtime names the GPU kernels use. The kernels are
 * written in the CUDA dialect, so this header only includes the toolkit and names the backend;
 * vendors/hip.h maps the same names onto HIP.
 */
#ifndef GG_GPU_VENDORS_CUDA_H
#define GG_GPU_VENDORS_CUDA_H

#include <cuda_runtime.h>

#define GG_GPU_BACKEND GG_BACKEND_CUDA
#define GG_GPU_BACKEND_NAME "cuda"
/* The runtime's name in messages. */
#define GG_GPU_VENDOR "CUDA"
/* The tensor-core path (ldmatrix, mma.sync, cp.async) exists on this backend. */
#define GG_GPU_HAVE_MMA 1
/* Hopper's warpgroup MMA (wgmma, sm_90a): the FP8 path, and BF16 of the persistent kernel. */
#define GG_GPU_HAVE_WGMMA 1
/* The runtime names the kind of a kernel fault in its error code (hardware stack error, illegal
   instruction, misaligned address, invalid address space, invalid PC). */
#define GG_GPU_HAVE_FAULT_CODES 1
/* Host-side globals (the kernel descriptors) are compiled in every pass. */
#define GG_GPU_DEVICE_PASS 0

#endif /* GG_GPU_VENDORS_CUDA_H */

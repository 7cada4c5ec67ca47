/*
 * backend/cuda.h — the CUDA backend of the GPU kernels: its runtime, its name and what its
 * hardware has. The kernels are written in the CUDA dialect, so this header only includes the
 * toolkit, names the backend and sets its feature switches; backend/hip.h does the same for HIP
 * and maps the runtime names onto it.
 */
#ifndef GG_GPU_BACKEND_CUDA_H
#define GG_GPU_BACKEND_CUDA_H

#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* the driver's types and entry-point signatures (no link to it) */

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
/* A kernel parameter the kernel may take the address of (a tensor map). */
#define GG_GPU_GRID_CONSTANT __grid_constant__
/* Hopper's tensor memory accelerator (cp.async.bulk.tensor with tensor maps). */
#define GG_GPU_HAVE_TMA 1
/* Host-side globals (the kernel descriptors) are compiled in every pass. */
#define GG_GPU_DEVICE_PASS 0

/* A driver function found through the runtime, or NULL (so a build links no driver library and
   still starts, and says it has no device, where none is installed). */
static inline void *gpu_driver_entry(const char *name)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        return NULL;
    return fn;
}

#endif /* GG_GPU_BACKEND_CUDA_H */

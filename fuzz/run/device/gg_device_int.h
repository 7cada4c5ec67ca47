/*
 * gg_device_int.h — internal to fuzz/run/device: the GPU runtime the device services are built on. The
 * sources are written in the CUDA dialect, like kernels/gpu: nvcc sees the CUDA runtime, hipcc
 * (GG_GPU_HIP) the same names mapped onto HIP by kernels/gpu/backend/hip.h. Included only from
 * the .cu files of fuzz/run/device.
 */
#ifndef GG_DEVICE_INT_H
#define GG_DEVICE_INT_H

#ifdef GG_GPU_HIP
#include "kernels/gpu/backend/hip.h"
#define cudaFreeHost hipHostFree
#else
#include "kernels/gpu/backend/cuda.h"
#endif

#endif /* GG_DEVICE_INT_H */

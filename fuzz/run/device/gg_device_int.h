/*
 * gg_device_int.h — internal to fuzz/run/device: the GPU runtime the device services are built on. The
 * sources are written in the CUDA dialect, like kernels/gpu: nvcc sees the CUDA runtime, hipcc
 * (GG_GPU_HIP) the same names mapped onto HIP by kernels/gpu/backend/hip.h. Included only from
 * the .cu files of fuzz/run/device. Also the process's device context, which the context's file
 * (gg_device_gpu.cu) and the buffers' (gg_devbuf_gpu.cu) share, and how both report a runtime
 * error.
 */
#ifndef GG_DEVICE_INT_H
#define GG_DEVICE_INT_H

#ifdef GG_GPU_HIP
#include "kernels/gpu/backend/hip.h"
#define cudaFreeHost hipHostFree
#else
#include "kernels/gpu/backend/cuda.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/run/device/gg_device.h"

/* ---- The device context (gg_device_gpu.cu) --------------------------------------------------- */

/* Allocations up to this size are pooled by power-of-two class; larger ones are freed at once. */
#define POOL_MAX_ALLOC ((size_t)256 << 20)
#define POOL_MAX_ENTRIES 64
#define POOL_MAX_BYTES ((size_t)1 << 30)

struct pooled {
    void *ptr;
    size_t len;
};

struct gg_device {
    cudaStream_t stream;
    int lost;
    uint8_t *canary;          /* device copy of the band pattern, GG_DEVICE_GUARD_BYTES + ALIGN */
    unsigned long long *scratch, *scratch_host; /* reduction results: device and pinned host */
    struct pooled pool[POOL_MAX_ENTRIES];
    int n_pool;
    size_t pool_bytes;
    cudaEvent_t timer[2]; /* the marks of gg_device_timer_start/stop (created on first use) */
    int have_timer;
};

/* The status of runtime error e of call at file:line, with the message in err: GG_E_NOMEM for
   an allocation, else GG_E_DEVICE; a sticky error (one that persists) marks d lost. */
enum gg_status dev_fail(struct gg_device *d, cudaError_t e, const char *call, const char *file,
                        int line, char *err, size_t err_len);

#define CK(d, call)                                                                  \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess)                                                       \
            return dev_fail((d), e_, #call, __FILE__, __LINE__, err, err_len);       \
    } while (0)

/* A context that has lost its device refuses work before touching the runtime again. */
#define LIVE(d)                                                                      \
    do {                                                                             \
        if ((d)->lost) {                                                             \
            snprintf(err, err_len, "sticky device error: the device context is lost"); \
            return GG_E_DEVICE;                                                      \
        }                                                                            \
    } while (0)

#endif /* GG_DEVICE_INT_H */

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

/* Device memory kept across cases (gg_devbuf_gpu.cu): a campaign's cases allocate and free a
   dozen buffers each, and the runtime's allocation, free and mapping calls cost more than a
   small case's GPU work (docs/benchmarks.md). Allocations up to POOL_MAX_ALLOC are kept by
   power-of-two class, flush buffers' mapped spans by layout, and the memory of sparse and flush
   buffers' one-granule pieces (most pieces: rows far apart) for the next piece. The blocks and
   spans give the least recently freed back first once they hold their entries or their bytes
   (blocks: pool_cap, an eighth of the device's memory and at most POOL_CAP_MAX; spans: half
   that); granules past half of pool_cap are released as they are freed; larger allocations are
   freed at once. All of it counts as free memory for admission and is
   given back whole when a case needs the room (gg_device_make_room), as are the read-only
   chunks of zeros mapped into unused granules (ZERO_KEPT_MAX granules at most). */
#define POOL_MAX_ALLOC ((size_t)256 << 20)
#define POOL_MAX_ENTRIES 256
#define POOL_CAP_MAX ((size_t)4 << 30)
#define FLUSH_MAX_ENTRIES 32

struct pooled {
    void *ptr;
    size_t len;
};

/* A flush buffer's span, kept mapped for the next buffer of the same layout (the same span and
   pieces; only spans without zero granules are kept). */
struct flushed {
    uint8_t *base;
    size_t span, mapped; /* mapped: bytes of memory behind the pieces */
    struct gg_devmap *maps;
    int n_maps;
};

struct gg_device {
    cudaStream_t stream;
    int lost;
    uint8_t *canary;          /* device copy of the band pattern, GG_DEVICE_GUARD_BYTES + ALIGN */
    unsigned long long *scratch, *scratch_host; /* reduction results: device and pinned host */
    struct pooled pool[POOL_MAX_ENTRIES]; /* least recently freed first */
    int n_pool;
    size_t pool_bytes, pool_cap;
    size_t runtime_free; /* the runtime's own free memory at the last gg_device_mem_info */
    struct flushed flush[FLUSH_MAX_ENTRIES]; /* least recently freed first */
    int n_flush;
    size_t flush_bytes;
    unsigned long long *granules; /* one-granule allocations of unmapped pieces, for the next */
    int n_granules, granules_room;
    struct gg_device_alloc_stats stats;
    cudaEvent_t timer[2]; /* the marks of gg_device_timer_start/stop (created on first use) */
    int have_timer;
};

/* Gives every kept allocation, span, granule and chunk of zeros back to the runtime
   (gg_devbuf_gpu.cu). */
void dev_pool_drain(struct gg_device *d);
/* The driver's granule of mapped memory; 0 without its virtual memory management. */
size_t dev_granule(void);
/* Bytes of the chunks of zeros the process keeps (gg_devbuf_gpu.cu). */
size_t dev_zeros_kept(void);
/* Sets out's tallies of the process's calls to the driver's virtual memory management
   (gg_devbuf_gpu.cu). */
void dev_vmm_tally(struct gg_device_alloc_stats *out);

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

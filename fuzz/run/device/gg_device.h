/*
 * gg_device.h — the harness's device services: one device context per process (stream, buffer
 * pool, scratch), guarded device buffers, fills, copies, guard checks and input hashes computed
 * on the device, and every runtime error turned into a status that names the failing call, file
 * and line. Built for CUDA or HIP from the same sources (gg_device_gpu.cu, gg_devbuf_gpu.cu and
 * the generator and reference); without a GPU toolchain every call returns GG_E_UNSUPPORTED
 * (gg_device_none.c).
 *
 * Process state: the context is created on first use and lives until the process exits (like the
 * kernel registry). A process that forks must not have touched the device before the fork: the
 * harness starts GPU work in worker processes only. After a sticky error (illegal address,
 * launch failure, ...) every later call fails too: gg_device_lost() turns 1 and the process
 * should report the finding and exit so that its supervisor starts a fresh one.
 */
#ifndef GG_DEVICE_H
#define GG_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the canary band before and after every device buffer (the host band's size). */
#define GG_DEVICE_GUARD_BYTES 65536
/* Alignment of a device buffer's data (and of the post band). */
#define GG_DEVICE_ALIGN 256

struct gg_device; /* opaque: the process's device context */

/* A guarded device buffer: [canary band][data: bytes][canary band]. Pointers are device
   pointers. owns = 1: gg_devbuf_free() returns the allocation to the pool. */
struct gg_devmap; /* the mapped pieces of a sparse buffer (gg_devbuf_gpu.cu) */

struct gg_devbuf {
    uint8_t *base;    /* the allocation */
    size_t alloc_len;
    uint8_t *data;
    size_t bytes;
    size_t pre_len, post_len;
    int owns;
    struct gg_devmap *maps; /* sparse buffers: the pieces with memory behind them; else NULL */
    int n_maps;
    int keep_span; /* a flush buffer whose span may be kept for reuse when it is freed */
};

/* A byte range [lo, hi) of a buffer's data (host or device). */
struct gg_range {
    size_t lo, hi;
};

/* A byte range in device memory. */
struct gg_devspan {
    const void *ptr;
    size_t bytes;
};

/* 1 when ggfuzz was built with a GPU backend. */
int gg_device_built(void);
/* 1 when kernels of backend can run here: always for GG_BACKEND_CPU; for a GPU backend when this
   build drives it and a device is present. Otherwise 0, with the reason in why (e.g. "no CUDA
   device (cudaGetDeviceCount: cudaErrorNoDevice: no CUDA-capable device is detected)"). The
   runtime is asked in a short-lived child process, so the caller never touches the device and
   may still fork; a process that already holds its context gets 1 at once. */
int gg_device_present(enum gg_backend backend, char *why, size_t why_len);
/* How many devices this build's runtime sees from this process (after CUDA_VISIBLE_DEVICES or
   HIP_VISIBLE_DEVICES): asked in a short-lived child like gg_device_present(). 0 with the reason
   in why when there are none or the build has no GPU support. */
int gg_device_count(char *why, size_t why_len);
/* The environment variable that narrows the devices a process sees: CUDA_VISIBLE_DEVICES or
   HIP_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES in a build without GPU support). */
const char *gg_device_visible_env(void);
/* The process's context, created on first call (device 0, a non-blocking stream). GG_E_DEVICE
   when no device can be used, GG_E_UNSUPPORTED in a build without GPU support. */
enum gg_status gg_device_get(struct gg_device **dev, char *err, size_t err_len);
/* 1 once the process's context has hit a sticky error; never creates a context. */
int gg_device_lost(void);
/* The context's stream (cudaStream_t / hipStream_t), for struct gg_operands. */
void *gg_device_stream(const struct gg_device *d);
/* Page-locked host memory of bytes (cudaMallocHost), which copies from the device reach several
   times faster than pageable memory; NULL when it cannot be had (the caller falls back to
   malloc). Pinning costs time in proportion to its size: worth it for memory that many copies
   reuse. */
void *gg_device_host_alloc(struct gg_device *d, size_t bytes);
void gg_device_host_free(struct gg_device *d, void *p);
/* Device name and free/total memory (cudaMemGetInfo); free counts the memory the context keeps
   for reuse (its pool of allocations, mapped spans and granules, and the chunks of zeros
   mapped into sparse buffers' unused granules). */
enum gg_status gg_device_mem_info(struct gg_device *d, int64_t *free_bytes, int64_t *total_bytes,
                                  char *err, size_t err_len);
/* Makes room for a case about to allocate need bytes: when the runtime's own free memory, as
   the last gg_device_mem_info (the case's admission) measured it, is short of it, what the
   context keeps for reuse is given back first. */
void gg_device_make_room(struct gg_device *d, int64_t need);
/* Calls of one kind and their wall time. */
struct gg_vmm_tally {
    uint64_t calls;
    double seconds;
};
/* How this process's device buffers were had: blocks taken from the context's pool or from the
   runtime and given back to it, flush buffers' spans reused, mapped and unmapped, and the
   one-granule pieces of sparse and flush buffers given kept memory or new. */
struct gg_device_alloc_stats {
    uint64_t pooled, allocated, freed;
    uint64_t spans_reused, spans_mapped, spans_unmapped;
    uint64_t granules_reused, granules_created; /* the memory of sparse buffers' pieces */
    /* The driver's virtual memory calls behind sparse and flush buffers, by call: physical
       memory created and released, address ranges reserved and freed, mappings made, unmapped
       and given their access. */
    struct gg_vmm_tally create, release, reserve, address_free, map, unmap, access;
};
/* The counts so far (zeros without a device context). */
void gg_device_alloc_stats(struct gg_device_alloc_stats *out);
/* Waits for all of the process's work on the device: the stream and any stream a kernel or
   library used on its own. Any error of earlier asynchronous work is reported here, named after
   what (e.g. the kernel that ran). */
enum gg_status gg_device_sync(struct gg_device *d, const char *what, char *err, size_t err_len);
/* Reports a launch error left by asynchronous work without waiting (cudaGetLastError). */
enum gg_status gg_device_check(struct gg_device *d, const char *what, char *err, size_t err_len);

/* The device time of the work queued on the context's stream between a start and a stop mark
   (a pair of events, created on first use): start records the first; stop records the second,
   waits for it and gives the milliseconds between them. Work a kernel queued on another stream
   counts only when the kernel waited for it before returning. */
enum gg_status gg_device_timer_start(struct gg_device *d, char *err, size_t err_len);
enum gg_status gg_device_timer_stop(struct gg_device *d, double *ms, char *err, size_t err_len);

/* Allocates a guarded buffer of bytes bytes (0 is allowed): data zeroed, both bands filled with
   the canary pattern of the host bands (gg_oracle_canary). Small buffers come from a pool. */
enum gg_status gg_devbuf_alloc(struct gg_device *d, struct gg_devbuf *b, size_t bytes, char *err,
                               size_t err_len);
/*
 * gg_devbuf_alloc for a buffer of which only the n sorted, disjoint ranges live[] of its data
 * are ever meant to be touched (the used rows of an operand whose strides leave gigabytes
 * between them). Where the device has virtual memory management and the span is large and
 * mostly unused, the span is reserved address space and only the granules that hold a live range
 * or a band get memory (zeroed); every other granule of the data maps one shared granule of
 * zeros read-only (up to 8192 of them; past that they stay unmapped and any access faults): the
 * device twin of the host's read-only zero pages, where a read sees zeros and a write is a fault
 * (a `device` finding). Otherwise, and on HIP, it is gg_devbuf_alloc.
 */
enum gg_status gg_devbuf_alloc_sparse(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                                      const struct gg_range *live, size_t n, char *err,
                                      size_t err_len);
/*
 * A buffer for an input placed flush against unmapped device memory: its data (aligned to
 * GG_DEVICE_ALIGN, so an over-read of fewer than -bytes mod GG_DEVICE_ALIGN bytes lands in
 * mapped slack) ends at (at_end) or starts at the edge of an unmapped granule, with no canary
 * band, and only the granules of the live ranges have memory (zeroed; the other granules of the
 * data read zeros and fault on a write, as for gg_devbuf_alloc_sparse): an access past the edge
 * is a fault (a `device` finding). Where the device has no virtual memory management (HIP), it
 * is gg_devbuf_alloc_sparse, with bands.
 */
enum gg_status gg_devbuf_alloc_flush(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                                     const struct gg_range *live, size_t n, int at_end, char *err,
                                     size_t err_len);
void gg_devbuf_free(struct gg_device *d, struct gg_devbuf *b);
/* Copies n bytes between host memory and the buffer's data at byte offset off (stream-ordered;
   a download waits for the stream). */
enum gg_status gg_devbuf_upload(struct gg_device *d, struct gg_devbuf *b, size_t off,
                                const void *src, size_t n, char *err, size_t err_len);
enum gg_status gg_devbuf_download(struct gg_device *d, const struct gg_devbuf *b, size_t off,
                                  void *dst, size_t n, char *err, size_t err_len);
/* Fills n bytes at device address dst with an elem_bytes-wide (1, 2 or 4) little-endian
   pattern, e.g. the output sentinel. n need not be a multiple of elem_bytes. */
enum gg_status gg_device_fill(struct gg_device *d, void *dst, size_t n, uint32_t pattern,
                              int elem_bytes, char *err, size_t err_len);
/* Checks the canary bands of n buffers on the device: *hit gets the index of the first buffer
   whose band changed (-1: none) and *pre whether its band before the data was hit. */
enum gg_status gg_device_guards_check(struct gg_device *d, const struct gg_devbuf *const *bufs,
                                      int n, int *hit, int *pre, char *err, size_t err_len);
/* 64-bit content hashes of n device ranges, out[i] for spans[i]: a sum over the 8-byte words of
   a 64-bit mixing function of (word, position), so any change of a word changes the sum except
   with probability about 2^-64. */
enum gg_status gg_device_hash(struct gg_device *d, const struct gg_devspan *spans, size_t n,
                              uint64_t *out, char *err, size_t err_len);

/* Test support: launches a kernel on stream that stores through a wild device address, which
   gives a sticky error at the next synchronisation (the `device` finding path). */
void gg_device_test_fault(void *stream);
/* Test support: cudaMemsetAsync on stream (errors surface at the next check). */
void gg_device_test_memset(void *dst, int byte, size_t n, void *stream);

/* ------------------------------------------------------------------------------------------ */
/* Data generated on the device (gg_devgen_gpu.cu)                                               */
/* ------------------------------------------------------------------------------------------ */

struct gg_gen_plan; /* reference/gg_gen_core.h */

/*
 * Generates operand g on the device with the host's per-element core: data is the device
 * address of the operand's element 0 in a zeroed buffer, scales the device scale array (E8M0
 * codes for MX, fp32 dequantisation factors for block128 and tensor scaling; NULL when plain).
 * Writes exactly the codes and scales the host materialiser writes, only in the rows of used
 * matrices. Waits for the stream.
 */
enum gg_status gg_device_generate(struct gg_device *d, const struct gg_gen_plan *g, void *data,
                                  void *scales, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* The reference on the device (gg_devref_gpu.cu)                                               */
/* ------------------------------------------------------------------------------------------ */

/* Outputs of one chunk of the device reference: its c and Σ|ab| (16 bytes each) and a flag byte
   stay below 1.1 GiB of device scratch (a larger group is a chunk alone). */
#define GG_DEVICE_REF_CHUNK ((int64_t)1 << 26)

/*
 * The reference of groups [g0, g1) of problem p (its group arrays and moe routing in host
 * memory, as the kernel's problem has them) on operands o in device memory (o->sorted_ids_dev:
 * the device copy of the sorted ids): c and abs (host arrays of those groups' outputs, packed in
 * reference order from group g0's first output; abs may be NULL) receive what gg_ref_gemm()
 * gives, special values and -0 included, each sum in another order: within γ_red(2^-53)·Σ|ab| of
 * the exact value, as the host's. Computed by an fp64 kernel, groups taken in chunks of at most
 * GG_DEVICE_REF_CHUNK outputs. Waits for the stream. For tests, GGFUZZ_TEST_DEVREF_FAULT=
 * group_offset or k_tail plants a wrong group offset or a dropped reduction tail.
 */
enum gg_status gg_device_reference(struct gg_device *d, const struct gg_problem *p,
                                   const struct gg_operands *o, int64_t g0, int64_t g1, double *c,
                                   double *abs, char *err, size_t err_len);
/* Copies the codes off + j·step (j < n) of dtype dt at device address dev_base into host out,
   packed (code j at element j of out, in dt's storage: E2M1 two to a byte), gathered on the
   device first: one transfer. */
enum gg_status gg_device_fetch_run(struct gg_device *d, enum gg_dtype dt, const void *dev_base,
                                   int64_t off, int64_t n, int64_t step, void *out, char *err,
                                   size_t err_len);

#ifdef __cplusplus
}
#endif
#endif /* GG_DEVICE_H */

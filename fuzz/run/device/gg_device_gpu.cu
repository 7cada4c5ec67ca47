/*
 * gg_device_gpu.cu — the device services of gg_device.h on the GPU runtime (CUDA, or HIP through
 * kernels/gpu/backend/hip.h): the process's context (stream, buffer pool, scratch for
 * reductions, timer events), the checks of a device's presence, and the kernels that fill
 * patterns, check guarded buffers' canary bands against a device image of the host pattern and
 * hash content order-independently in 64 bits. The buffers themselves are gg_devbuf_gpu.cu's.
 * Every runtime error becomes a status naming the call, file and line; a sticky error marks the
 * context lost.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/run/device/gg_device_int.h"

extern "C" {
#include "oracles/gg_oracle.h"
}
#include "fuzz/run/device/gg_device.h"

/* Bands checked, and spans hashed, per kernel launch (the results fit the scratch). */
#define BATCH 32
#define SCRATCH_WORDS (2 * BATCH)

/* The one piece of process state of the device services (see gg_device.h). */
static struct gg_device *process_device;

static const size_t CANARY_LEN = GG_DEVICE_GUARD_BYTES + GG_DEVICE_ALIGN;

/* Errors after which the context is unusable: every later call returns them too. */
static int is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
#if GG_GPU_HAVE_FAULT_CODES
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
#endif
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return 1;
    default:
        return 0;
    }
}

enum gg_status dev_fail(struct gg_device *d, cudaError_t e, const char *call, const char *file,
                        int line, char *err, size_t err_len)
{
    int sticky = is_sticky(e);
    if (!sticky) {
        /* A non-sticky error is cleared by reading it; one that persists is sticky. */
        (void)cudaGetLastError();
        cudaError_t again = cudaDeviceSynchronize();
        sticky = again != cudaSuccess && is_sticky(again);
    }
    if (sticky && d)
        d->lost = 1;
    snprintf(err, err_len, "%s%s (%s) in %s at %s:%d", sticky ? "sticky device error: " : "",
             cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
    if (e == cudaErrorMemoryAllocation)
        return GG_E_NOMEM;
    return GG_E_DEVICE;
}

extern "C" int gg_device_built(void)
{
    return 1;
}

extern "C" int gg_device_lost(void)
{
    return process_device != NULL && process_device->lost;
}

#define NO_DEVICE "no " GG_GPU_VENDOR " device"
/* The runtime's own name of its device count query (cudaGetDeviceCount, hipGetDeviceCount). */
#define DEVICE_COUNT_CALL GG_GPU_BACKEND_NAME "GetDeviceCount"

/* The child asks the runtime and writes the count, or why it cannot be used; the parent never
   initialises the runtime, since a context does not survive fork. */
extern "C" int gg_device_count(char *why, size_t why_len)
{
    why[0] = '\0';
    if (process_device != NULL) {
        int count = 0;
        return cudaGetDeviceCount(&count) == cudaSuccess ? count : 1;
    }
    int fds[2];
    pid_t pid = -1;
    char reply[512] = "";
    if (pipe(fds) == 0) {
        fflush(NULL);
        if ((pid = fork()) == 0) {
            int count = 0;
            cudaError_t e = cudaGetDeviceCount(&count);
            char msg[512] = "";
            if (e != cudaSuccess)
                snprintf(msg, sizeof msg, "-" NO_DEVICE " (" DEVICE_COUNT_CALL ": %s: %s)",
                         cudaGetErrorName(e), cudaGetErrorString(e));
            else if (count < 1)
                snprintf(msg, sizeof msg, "-" NO_DEVICE " (" DEVICE_COUNT_CALL " found none)");
            else
                snprintf(msg, sizeof msg, "%d", count);
            _exit(write(fds[1], msg, strlen(msg)) < 0 ? 1 : 0);
        }
        close(fds[1]);
        ssize_t n = pid > 0 ? read(fds[0], reply, sizeof reply - 1) : 0;
        reply[n > 0 ? n : 0] = '\0';
        close(fds[0]);
    }
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        snprintf(why, why_len, "cannot ask for a " GG_GPU_VENDOR " device: the query process %s",
                 pid < 0 ? "did not start" : "died");
        return 0;
    }
    if (reply[0] == '-' || reply[0] == '\0' || WEXITSTATUS(status) != 0) {
        snprintf(why, why_len, "%s", reply[0] == '-' ? reply + 1
                                                     : NO_DEVICE " (the query process failed)");
        return 0;
    }
    return atoi(reply);
}

extern "C" const char *gg_device_visible_env(void)
{
    return GG_GPU_BACKEND == GG_BACKEND_HIP ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
}

extern "C" int gg_device_present(enum gg_backend backend, char *why, size_t why_len)
{
    why[0] = '\0';
    if (backend == GG_BACKEND_CPU || process_device != NULL)
        return 1;
    if (backend != GG_GPU_BACKEND) {
        snprintf(why, why_len, "this ggfuzz drives " GG_GPU_VENDOR " devices only");
        return 0;
    }
    return gg_device_count(why, why_len) > 0;
}

static enum gg_status create(struct gg_device *d, char *err, size_t err_len)
{
    int count = 0;
    CK(d, cudaGetDeviceCount(&count));
    if (count < 1) {
        snprintf(err, err_len, NO_DEVICE);
        return GG_E_DEVICE;
    }
    CK(d, cudaSetDevice(0));
    CK(d, cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
    size_t fr = 0, tot = 0;
    CK(d, cudaMemGetInfo(&fr, &tot));
    d->pool_cap = tot / 8 < POOL_CAP_MAX ? tot / 8 : POOL_CAP_MAX;
    CK(d, cudaMalloc((void **)&d->canary, CANARY_LEN));
    CK(d, cudaMalloc((void **)&d->scratch, SCRATCH_WORDS * sizeof(unsigned long long)));
    CK(d, cudaMallocHost((void **)&d->scratch_host, SCRATCH_WORDS * sizeof(unsigned long long)));
    uint8_t *pattern = (uint8_t *)malloc(CANARY_LEN);
    if (!pattern) {
        snprintf(err, err_len, "out of memory for the canary pattern");
        return GG_E_NOMEM;
    }
    gg_oracle_canary_fill(pattern, CANARY_LEN);
    /* On the context's stream, and complete before any band is copied from it: a plain
       cudaMemcpy from pageable memory returns once the bytes are staged, and its transfer on the
       legacy default stream is not ordered before the work of a non-blocking stream, so the
       first buffers of a fresh process could get their bands from a partly written image. */
    cudaError_t e =
        cudaMemcpyAsync(d->canary, pattern, CANARY_LEN, cudaMemcpyHostToDevice, d->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(d->stream);
    free(pattern);
    CK(d, e);
    return GG_OK;
}

extern "C" enum gg_status gg_device_get(struct gg_device **dev, char *err, size_t err_len)
{
    if (!process_device) {
        struct gg_device *d = (struct gg_device *)calloc(1, sizeof *d);
        if (!d) {
            snprintf(err, err_len, "out of memory for the device context");
            return GG_E_NOMEM;
        }
        enum gg_status st = create(d, err, err_len);
        if (st != GG_OK) {
            free(d); /* the runtime frees what it handed out when the process exits */
            return st;
        }
        process_device = d;
    }
    *dev = process_device;
    LIVE(process_device);
    return GG_OK;
}

extern "C" void *gg_device_stream(const struct gg_device *d)
{
    return (void *)d->stream;
}

extern "C" enum gg_status gg_device_mem_info(struct gg_device *d, int64_t *free_bytes,
                                             int64_t *total_bytes, char *err, size_t err_len)
{
    LIVE(d);
    size_t fr = 0, tot = 0;
    CK(d, cudaMemGetInfo(&fr, &tot));
    d->runtime_free = fr;
    *free_bytes = (int64_t)(fr + d->pool_bytes + d->flush_bytes +
                            (size_t)d->n_granules * dev_granule() + dev_zeros_kept());
    *total_bytes = (int64_t)tot;
    return GG_OK;
}

extern "C" void gg_device_make_room(struct gg_device *d, int64_t need)
{
    if (!d->lost && need > 0 && (uint64_t)need > d->runtime_free)
        dev_pool_drain(d);
}

extern "C" void gg_device_alloc_stats(struct gg_device_alloc_stats *out)
{
    if (process_device)
        *out = process_device->stats;
    else
        memset(out, 0, sizeof *out);
    dev_vmm_tally(out);
}

extern "C" enum gg_status gg_device_sync(struct gg_device *d, const char *what, char *err,
                                         size_t err_len)
{
    LIVE(d);
    /* The whole device, not only the stream: work a kernel or library left on a stream of its
       own would otherwise still write after the guard check, or into buffers the pool has
       handed to the next case. */
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return dev_fail(d, e, what, __FILE__, __LINE__, err, err_len);
    return GG_OK;
}

extern "C" enum gg_status gg_device_check(struct gg_device *d, const char *what, char *err,
                                          size_t err_len)
{
    LIVE(d);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return dev_fail(d, e, what, __FILE__, __LINE__, err, err_len);
    return GG_OK;
}

extern "C" enum gg_status gg_device_timer_start(struct gg_device *d, char *err, size_t err_len)
{
    LIVE(d);
    if (!d->have_timer) {
        CK(d, cudaEventCreate(&d->timer[0]));
        CK(d, cudaEventCreate(&d->timer[1]));
        d->have_timer = 1;
    }
    CK(d, cudaEventRecord(d->timer[0], d->stream));
    return GG_OK;
}

extern "C" enum gg_status gg_device_timer_stop(struct gg_device *d, double *ms, char *err,
                                               size_t err_len)
{
    LIVE(d);
    float elapsed = 0.0f;
    CK(d, cudaEventRecord(d->timer[1], d->stream));
    CK(d, cudaEventSynchronize(d->timer[1]));
    CK(d, cudaEventElapsedTime(&elapsed, d->timer[0], d->timer[1]));
    *ms = (double)elapsed;
    return GG_OK;
}

/* ---- kernels ------------------------------------------------------------------------------ */

__global__ void fill_kernel(uint8_t *dst, size_t n, uint32_t pattern, int elem_bytes)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = (uint8_t)(pattern >> (8 * (i % (size_t)elem_bytes)));
}

static unsigned grid_for(size_t n, unsigned threads, unsigned cap)
{
    size_t blocks = (n + threads - 1) / threads;
    return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

extern "C" enum gg_status gg_device_fill(struct gg_device *d, void *dst, size_t n,
                                         uint32_t pattern, int elem_bytes, char *err,
                                         size_t err_len)
{
    LIVE(d);
    if (n == 0)
        return GG_OK;
    if (elem_bytes == 1 || (elem_bytes == 2 && (uint8_t)pattern == (uint8_t)(pattern >> 8) &&
                            !(n % 2))) {
        CK(d, cudaMemsetAsync(dst, (int)(pattern & 0xFF), n, d->stream));
        return GG_OK;
    }
    fill_kernel<<<grid_for(n, 256, 4096), 256, 0, d->stream>>>((uint8_t *)dst, n, pattern,
                                                               elem_bytes);
    CK(d, cudaGetLastError());
    return GG_OK;
}

/* Bands to compare with the pattern: band i has len[i] bytes at ptr[i]. */
struct band_batch {
    const uint8_t *ptr[BATCH];
    size_t len[BATCH];
};

/* out[blockIdx.y] = min over changed bytes of their index (ULLONG_MAX when intact). */
__global__ void band_kernel(struct band_batch bb, const uint8_t *pattern, unsigned long long *out)
{
    unsigned y = blockIdx.y;
    size_t n = bb.len[y];
    unsigned long long first = ~0ull;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (bb.ptr[y][i] != pattern[i] && i < first)
            first = i;
    if (first != ~0ull)
        atomicMin(&out[y], first);
}

extern "C" enum gg_status gg_device_guards_check(struct gg_device *d,
                                                 const struct gg_devbuf *const *bufs, int n,
                                                 int *hit, int *pre, char *err, size_t err_len)
{
    LIVE(d);
    *hit = -1;
    *pre = 0;
    for (int at = 0; at < n && *hit < 0; at += BATCH / 2) {
        int m = n - at < BATCH / 2 ? n - at : BATCH / 2;
        struct band_batch bb;
        memset(&bb, 0, sizeof bb);
        for (int i = 0; i < m; i++) {
            const struct gg_devbuf *b = bufs[at + i];
            bb.ptr[2 * i] = b->base;
            bb.len[2 * i] = b->base ? b->pre_len : 0;
            bb.ptr[2 * i + 1] = b->data + b->bytes;
            bb.len[2 * i + 1] = b->base ? b->post_len : 0;
        }
        CK(d, cudaMemsetAsync(d->scratch, 0xFF, 2 * (size_t)m * sizeof *d->scratch, d->stream));
        dim3 grid(64, (unsigned)(2 * m));
        band_kernel<<<grid, 256, 0, d->stream>>>(bb, d->canary, d->scratch);
        CK(d, cudaGetLastError());
        CK(d, cudaMemcpyAsync(d->scratch_host, d->scratch, 2 * (size_t)m * sizeof *d->scratch,
                              cudaMemcpyDeviceToHost, d->stream));
        CK(d, cudaStreamSynchronize(d->stream));
        for (int i = 0; i < 2 * m; i++)
            if (d->scratch_host[i] != ~0ull) {
                *hit = at + i / 2;
                *pre = i % 2 == 0;
                break;
            }
    }
    return GG_OK;
}

/* splitmix64's finaliser: a bijective 64-bit mixer. */
__device__ static unsigned long long mix64(unsigned long long x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

struct span_batch {
    const uint8_t *ptr[BATCH];
    size_t len[BATCH];
};

/* out[y] += Σ_w mix64(word_w + (w+1)·φ) over the 8-byte words of span y (the last one padded
   with zeros), plus its length, so spans of different lengths differ too. */
__global__ void hash_kernel(struct span_batch sb, unsigned long long *out)
{
    unsigned y = blockIdx.y;
    size_t n = sb.len[y];
    const uint8_t *p = sb.ptr[y];
    size_t words = (n + 7) / 8;
    unsigned long long acc = 0;
    for (size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x; w < words;
         w += (size_t)gridDim.x * blockDim.x) {
        unsigned long long v = 0;
        if (8 * w + 8 <= n && ((uintptr_t)p % 8) == 0) {
            v = ((const unsigned long long *)p)[w];
        } else {
            for (size_t j = 0; j < 8 && 8 * w + j < n; j++)
                v |= (unsigned long long)p[8 * w + j] << (8 * j);
        }
        acc += mix64(v + (w + 1) * 0x9E3779B97F4A7C15ull);
    }
    for (int o = 16; o > 0; o /= 2)
        acc += __shfl_down_sync(0xFFFFFFFFu, acc, o);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(&out[y], acc);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(&out[y], mix64((unsigned long long)n));
}

extern "C" enum gg_status gg_device_hash(struct gg_device *d, const struct gg_devspan *spans,
                                         size_t n, uint64_t *out, char *err, size_t err_len)
{
    LIVE(d);
    for (size_t at = 0; at < n; at += BATCH) {
        size_t m = n - at < BATCH ? n - at : BATCH;
        struct span_batch sb;
        memset(&sb, 0, sizeof sb);
        size_t longest = 0;
        for (size_t i = 0; i < m; i++) {
            sb.ptr[i] = (const uint8_t *)spans[at + i].ptr;
            sb.len[i] = spans[at + i].ptr ? spans[at + i].bytes : 0;
            longest = sb.len[i] > longest ? sb.len[i] : longest;
        }
        CK(d, cudaMemsetAsync(d->scratch, 0, m * sizeof *d->scratch, d->stream));
        dim3 grid(grid_for((longest + 7) / 8, 256, 1024), (unsigned)m);
        hash_kernel<<<grid, 256, 0, d->stream>>>(sb, d->scratch);
        CK(d, cudaGetLastError());
        CK(d, cudaMemcpyAsync(d->scratch_host, d->scratch, m * sizeof *d->scratch,
                              cudaMemcpyDeviceToHost, d->stream));
        CK(d, cudaStreamSynchronize(d->stream));
        for (size_t i = 0; i < m; i++)
            out[at + i] = d->scratch_host[i];
    }
    return GG_OK;
}

__global__ void fault_kernel(volatile int *wild)
{
    *wild = 1;
}

extern "C" void gg_device_test_fault(void *stream)
{
    fault_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((volatile int *)(uintptr_t)0x10);
}

extern "C" void gg_device_test_memset(void *dst, int byte, size_t n, void *stream)
{
    (void)cudaMemsetAsync(dst, byte, n, (cudaStream_t)stream);
}

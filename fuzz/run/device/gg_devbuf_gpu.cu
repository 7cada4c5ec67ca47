/*
 * gg_devbuf_gpu.cu — guarded device buffers (gg_device.h) on the GPU runtime: allocations
 * pooled by power-of-two class, each laid out between two canary bands copied from the
 * context's device image of the host pattern; sparse and flush buffers whose unused granules
 * are left unmapped or mapped read-only to shared chunks of zeros through the driver's virtual
 * memory management (CUDA; HIP falls back to whole buffers), flush buffers' spans kept mapped
 * for the next buffer of the same layout; pinned host memory; and the copies in and out of a
 * buffer on the context's stream. What is kept for reuse, and why: gg_device_int.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/run/device/gg_device_int.h"

#include "fuzz/run/device/gg_device.h"

/* ---- buffers ------------------------------------------------------------------------------ */

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Pool class of an allocation: the next power of two (small allocations only). */
static size_t pool_class(size_t len)
{
    size_t c = (size_t)1 << 20;
    while (c < len)
        c <<= 1;
    return c;
}

/* Gives the pool's oldest block back to the runtime (the stream waited for first). */
static void pool_evict_oldest(struct gg_device *d)
{
    (void)cudaStreamSynchronize(d->stream);
    (void)cudaFree(d->pool[0].ptr);
    d->pool_bytes -= d->pool[0].len;
    d->stats.freed++;
    memmove(d->pool, d->pool + 1, (size_t)--d->n_pool * sizeof *d->pool);
}

static void flush_drain(struct gg_device *d);

void dev_pool_drain(struct gg_device *d)
{
    while (d->n_pool > 0)
        pool_evict_oldest(d);
    flush_drain(d);
}

/* Keeps block ptr of class len for reuse, giving the oldest blocks back while the pool is full;
   0 when it is not kept (too large, or the context is lost). */
static int pool_put(struct gg_device *d, void *ptr, size_t len)
{
    if (d->lost || len > POOL_MAX_ALLOC || len > d->pool_cap)
        return 0;
    while (d->n_pool > 0 && (d->n_pool == POOL_MAX_ENTRIES || d->pool_bytes + len > d->pool_cap))
        pool_evict_oldest(d);
    /* Stream order keeps pending work on the block ahead of its next user. */
    d->pool[d->n_pool++] = (struct pooled){ptr, len};
    d->pool_bytes += len;
    return 1;
}

/* The most recently freed block of class len, or NULL. */
static void *pool_take(struct gg_device *d, size_t len)
{
    for (int i = d->n_pool - 1; i >= 0; i--)
        if (d->pool[i].len == len) {
            void *ptr = d->pool[i].ptr;
            d->pool_bytes -= len;
            memmove(d->pool + i, d->pool + i + 1, (size_t)(--d->n_pool - i) * sizeof *d->pool);
            d->stats.pooled++;
            return ptr;
        }
    return NULL;
}

static enum gg_status raw_alloc(struct gg_device *d, size_t len, void **ptr, size_t *got,
                                char *err, size_t err_len)
{
    if (len <= POOL_MAX_ALLOC) {
        len = pool_class(len);
        if ((*ptr = pool_take(d, len)) != NULL) {
            *got = len;
            return GG_OK;
        }
    }
    cudaError_t e = cudaMalloc(ptr, len);
    if (e == cudaErrorMemoryAllocation && (d->n_pool > 0 || d->n_flush > 0)) {
        (void)cudaGetLastError();
        dev_pool_drain(d);
        e = cudaMalloc(ptr, len);
    }
    d->stats.allocated += e == cudaSuccess;
    if (e != cudaSuccess) {
        enum gg_status st = dev_fail(d, e, "cudaMalloc", __FILE__, __LINE__, err, err_len);
        if (st == GG_E_NOMEM)
            snprintf(err, err_len, "cannot allocate %zu bytes of device memory", len);
        return st;
    }
    *got = len;
    return GG_OK;
}

/* The band before the data, the data rounded up to GG_DEVICE_ALIGN, and the band after it. */
static size_t layout_len(size_t bytes)
{
    return GG_DEVICE_GUARD_BYTES + round_up(bytes, GG_DEVICE_ALIGN) + GG_DEVICE_GUARD_BYTES;
}

/* Lays a buffer of bytes bytes into the allocation at base and copies both bands from the
   canary image. */
static enum gg_status place(struct gg_device *d, struct gg_devbuf *b, uint8_t *base, size_t len,
                            size_t bytes, char *err, size_t err_len)
{
    b->base = base;
    b->alloc_len = len;
    b->data = base + GG_DEVICE_GUARD_BYTES;
    b->bytes = bytes;
    b->pre_len = GG_DEVICE_GUARD_BYTES;
    b->post_len = layout_len(bytes) - GG_DEVICE_GUARD_BYTES - bytes; /* ≤ CANARY_LEN */
    b->owns = 1;
    CK(d, cudaMemcpyAsync(b->base, d->canary, b->pre_len, cudaMemcpyDeviceToDevice, d->stream));
    CK(d, cudaMemcpyAsync(b->data + bytes, d->canary, b->post_len, cudaMemcpyDeviceToDevice,
                          d->stream));
    return GG_OK;
}

extern "C" enum gg_status gg_devbuf_alloc(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                                          char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    LIVE(d);
    if (bytes > SIZE_MAX / 2) {
        snprintf(err, err_len, "device buffer of %zu bytes is too large", bytes);
        return GG_E_NOMEM;
    }
    void *ptr = NULL;
    size_t got = 0;
    enum gg_status st = raw_alloc(d, layout_len(bytes), &ptr, &got, err, err_len);
    if (st == GG_OK)
        st = place(d, b, (uint8_t *)ptr, got, bytes, err, err_len);
    if (st == GG_OK && bytes)
        CK(d, cudaMemsetAsync(b->data, 0, bytes, d->stream));
    return st;
}

/* ---- sparse buffers ------------------------------------------------------------------------ */

/* A span at least this large whose live ranges cover at most a quarter of it is mapped sparsely. */
#define SPARSE_MIN_SPAN ((size_t)64 << 20)

/* A piece of a sparse buffer with memory behind it: offset and length in the reserved span
   (whole granules) and its physical allocation (a CUmemGenericAllocationHandle). */
struct gg_devmap {
    size_t off, len;
    unsigned long long handle;
    int zero; /* a shared chunk of zeros, mapped read-only: never its buffer's to release */
};

#ifndef GG_GPU_HIP
/* The driver's virtual memory management calls, found through the runtime (gpu_driver_entry). */
static struct {
    PFN_cuMemGetAllocationGranularity_v10020 granularity;
    PFN_cuMemAddressReserve_v10020 reserve;
    PFN_cuMemAddressFree_v10020 unreserve;
    PFN_cuMemCreate_v10020 create;
    PFN_cuMemRelease_v10020 release;
    PFN_cuMemMap_v10020 map;
    PFN_cuMemUnmap_v10020 unmap;
    PFN_cuMemSetAccess_v10020 access;
    CUmemAllocationProp prop;
    size_t gran;
    int state; /* 0 not looked up, 1 usable, -1 not usable */
} vmm;

/* The calls made through vmm: their count and wall time, by call (gg_device_alloc_stats). */
static struct {
    struct gg_vmm_tally create, release, reserve, address_free, map, unmap, access;
} tally;

/* Calls fn(args...) and counts it and its time in t. */
template <typename F, typename... A> static CUresult timed(struct gg_vmm_tally *t, F fn, A... args)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CUresult r = fn(args...);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    t->calls++;
    t->seconds += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return r;
}

void dev_vmm_tally(struct gg_device_alloc_stats *out)
{
    out->create = tally.create, out->release = tally.release, out->reserve = tally.reserve;
    out->address_free = tally.address_free, out->map = tally.map, out->unmap = tally.unmap;
    out->access = tally.access;
}

static int vmm_entry(const char *name, void **fn)
{
    return (*fn = gpu_driver_entry(name)) != NULL;
}

static int vmm_usable(void)
{
    if (vmm.state != 0)
        return vmm.state > 0;
    int dev = 0, ok = cudaGetDevice(&dev) == cudaSuccess &&
                      vmm_entry("cuMemGetAllocationGranularity", (void **)&vmm.granularity) &&
                      vmm_entry("cuMemAddressReserve", (void **)&vmm.reserve) &&
                      vmm_entry("cuMemAddressFree", (void **)&vmm.unreserve) &&
                      vmm_entry("cuMemCreate", (void **)&vmm.create) &&
                      vmm_entry("cuMemRelease", (void **)&vmm.release) &&
                      vmm_entry("cuMemMap", (void **)&vmm.map) &&
                      vmm_entry("cuMemUnmap", (void **)&vmm.unmap) &&
                      vmm_entry("cuMemSetAccess", (void **)&vmm.access);
    memset(&vmm.prop, 0, sizeof vmm.prop);
    vmm.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    vmm.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    vmm.prop.location.id = dev;
    ok = ok && vmm.granularity(&vmm.gran, &vmm.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) ==
                   CUDA_SUCCESS && vmm.gran > 0;
    (void)cudaGetLastError();
    vmm.state = ok ? 1 : -1;
    return ok;
}

/* Zeros mapped read-only into the granules of a sparse or flush buffer's data that hold no live
   range: a read there sees zeros and a write faults, as on the host's read-only zero pages.
   Setting a range's access and unmapping it cost the driver about the same for each mapping in
   the range, whatever its length, so a run of gap granules takes as few mappings as can be:
   chunks of zeros of exactly the run's length, up to ZERO_CHUNK_MAX granules a chunk, made on
   first use and kept by the process. The rows of an operand a huge leading dimension apart
   leave runs of one length between them, which one chunk then serves: a row costs two mappings
   (its own memory and the zeros after it). The chunks kept hold at most ZERO_KEPT_MAX granules;
   past it the least recently used go (one still mapped somewhere is freed by the driver once
   its last mapping is gone). They are kept memory, given back by gg_device_make_room. */
#define ZERO_CHUNK_MAX 128
#define ZERO_KEPT_MAX 256
#define ZERO_KEPT_ENTRIES 32
static struct {
    unsigned long long handle;
    size_t granules;
    uint64_t used; /* when it was last used (zero_clock) */
} zeros[ZERO_KEPT_ENTRIES];
static int n_zeros;
static size_t zeros_kept; /* granules */
static uint64_t zero_clock;

/* At most this many granules of a buffer get zeros; past it they stay unmapped and a read there
   faults. */
#define ZERO_MAPS_MAX 8192

/* A new chunk of k granules of zeros in *handle: 1 when made. */
static int vmm_zero_make(size_t k, unsigned long long *handle)
{
    size_t len = k * vmm.gran;
    CUdeviceptr va = 0;
    CUmemAccessDesc rw;
    memset(&rw, 0, sizeof rw);
    rw.location = vmm.prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (timed(&tally.create, vmm.create, handle, len, &vmm.prop, 0) != CUDA_SUCCESS)
        return 0;
    int ok = timed(&tally.reserve, vmm.reserve, &va, len, vmm.gran, 0, 0) == CUDA_SUCCESS;
    int mapped = ok && timed(&tally.map, vmm.map, va, len, 0, *handle, 0) == CUDA_SUCCESS;
    ok = mapped && timed(&tally.access, vmm.access, va, len, &rw, 1) == CUDA_SUCCESS &&
         cudaMemset((void *)va, 0, len) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
    if (mapped)
        (void)timed(&tally.unmap, vmm.unmap, va, len);
    if (va)
        (void)timed(&tally.address_free, vmm.unreserve, va, len);
    (void)cudaGetLastError();
    if (!ok)
        (void)timed(&tally.release, vmm.release, *handle);
    return ok;
}

/* Releases kept chunk i (the last one takes its place). */
static void zero_drop(int i)
{
    (void)timed(&tally.release, vmm.release, zeros[i].handle);
    zeros_kept -= zeros[i].granules;
    zeros[i] = zeros[--n_zeros];
}

static void zeros_drain(void)
{
    while (n_zeros > 0)
        zero_drop(n_zeros - 1);
}

/* The kept chunk of exactly want granules, else the longest kept one shorter than that: its
   index, or -1. */
static int zero_find(size_t want)
{
    int best = -1;
    for (int i = 0; i < n_zeros; i++) {
        if (zeros[i].granules == want)
            return i;
        if (zeros[i].granules < want && (best < 0 || zeros[i].granules > zeros[best].granules))
            best = i;
    }
    return best;
}

/* The chunk of zeros for a run of k gap granules: one of min(k, ZERO_CHUNK_MAX) granules, kept
   or made (the least recently used chunks released to make room), else the longest kept one
   shorter than that. Its handle and granules in *handle and *got; 0 when there is none. */
static int zero_chunk(size_t k, unsigned long long *handle, size_t *got)
{
    size_t want = k < ZERO_CHUNK_MAX ? k : ZERO_CHUNK_MAX;
    int i = zero_find(want);
    if (i < 0 || zeros[i].granules != want) {
        while (n_zeros > 0 && (n_zeros == ZERO_KEPT_ENTRIES || zeros_kept + want > ZERO_KEPT_MAX)) {
            int lru = 0;
            for (int j = 1; j < n_zeros; j++)
                lru = zeros[j].used < zeros[lru].used ? j : lru;
            zero_drop(lru);
        }
        unsigned long long h;
        if (vmm_zero_make(want, &h)) {
            zeros[n_zeros].handle = h;
            zeros[n_zeros].granules = want;
            zeros_kept += want;
            i = n_zeros++;
        } else {
            i = zero_find(want);
        }
    }
    if (i < 0)
        return 0;
    zeros[i].used = ++zero_clock;
    *handle = zeros[i].handle;
    *got = zeros[i].granules;
    return 1;
}

/* Memory for a piece of len bytes: a kept granule when it is one granule long and one is kept,
   else a new allocation. */
static int granule_take(struct gg_device *d, size_t len, unsigned long long *handle)
{
    if (len == vmm.gran && d->n_granules > 0) {
        *handle = d->granules[--d->n_granules];
        d->stats.granules_reused++;
        return 1;
    }
    if (timed(&tally.create, vmm.create, handle, len, &vmm.prop, 0) != CUDA_SUCCESS)
        return 0;
    d->stats.granules_created++;
    return 1;
}

/* Keeps an unmapped piece's memory for the next piece of one granule, or releases it. */
static void granule_put(struct gg_device *d, size_t len, unsigned long long handle)
{
    size_t cap = vmm.gran ? d->pool_cap / 2 / vmm.gran : 0;
    if (len == vmm.gran && !d->lost && (size_t)d->n_granules < cap) {
        if (d->n_granules == d->granules_room) {
            int room = d->granules_room ? 2 * d->granules_room : 64;
            unsigned long long *grown = (unsigned long long *)realloc(
                d->granules, (size_t)room * sizeof *grown);
            if (grown) {
                d->granules = grown;
                d->granules_room = room;
            }
        }
        if (d->n_granules < d->granules_room) {
            d->granules[d->n_granules++] = handle;
            return;
        }
    }
    (void)timed(&tally.release, vmm.release, handle);
}

size_t dev_granule(void)
{
    return vmm_usable() ? vmm.gran : 0;
}

static void granules_drain(struct gg_device *d)
{
    while (d->n_granules > 0)
        (void)timed(&tally.release, vmm.release, d->granules[--d->n_granules]);
}

static int by_offset(const void *a, const void *b)
{
    size_t x = ((const struct gg_devmap *)a)->off, y = ((const struct gg_devmap *)b)->off;
    return x < y ? -1 : x > y;
}

/* Unmaps the first n pieces of b's span at va (their memory kept or released), then the span
   itself. Adjacent pieces (those with zero granules between them, most of a sparse buffer) are
   unmapped with one call a run; a run the driver refuses so is unmapped piece by piece. */
static void vmm_unwind(struct gg_device *d, CUdeviceptr va, size_t span,
                       const struct gg_devmap *maps, int n)
{
    struct gg_devmap *sorted = (struct gg_devmap *)malloc((size_t)(n > 0 ? n : 1) * sizeof *sorted);
    if (sorted) {
        memcpy(sorted, maps, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, by_offset);
    }
    for (int i = 0, j; i < n; i = j) {
        j = i + 1;
        while (sorted && j < n && sorted[j].off == sorted[j - 1].off + sorted[j - 1].len)
            j++;
        const struct gg_devmap *run = sorted ? sorted : maps;
        size_t len = run[j - 1].off + run[j - 1].len - run[i].off;
        if (j - i == 1 || timed(&tally.unmap, vmm.unmap, va + run[i].off, len) != CUDA_SUCCESS)
            for (int k = i; k < j; k++)
                (void)timed(&tally.unmap, vmm.unmap, va + run[k].off, run[k].len);
        for (int k = i; k < j; k++)
            if (!run[k].zero)
                granule_put(d, run[k].len, run[k].handle);
    }
    free(sorted);
    (void)timed(&tally.address_free, vmm.unreserve, va, span);
}

/* The granules of [lo, hi) of a span that none of the m sorted pieces covers. */
static size_t vmm_gaps(size_t lo, size_t hi, const struct gg_devmap *maps, int m)
{
    size_t gaps = 0;
    int p = 0;
    for (size_t at = lo / vmm.gran * vmm.gran; at < hi; at += vmm.gran) {
        while (p < m && maps[p].off + maps[p].len <= at)
            p++;
        gaps += !(p < m && maps[p].off <= at);
    }
    return gaps;
}

/* Maps zeros over the run [at, at + k granules) of gaps of the span at va (zero_chunk: a
   mapping for each ZERO_CHUNK_MAX granules), appending the pieces to maps[*n..], and makes the
   run readable with one call (piece by piece when the driver refuses the run). 1 when done; the
   pieces appended so far are in maps either way. */
static int vmm_zero_run(CUdeviceptr va, size_t at, size_t k, struct gg_devmap *maps, int *n,
                        const CUmemAccessDesc *ro)
{
    int first = *n;
    size_t start = at;
    while (k > 0) {
        unsigned long long handle;
        size_t got;
        if (!zero_chunk(k, &handle, &got))
            return 0;
        size_t len = got * vmm.gran;
        if (timed(&tally.map, vmm.map, va + at, len, 0, handle, 0) != CUDA_SUCCESS)
            return 0;
        maps[(*n)++] = (struct gg_devmap){at, len, handle, 1};
        at += len;
        k -= got;
    }
    if (timed(&tally.access, vmm.access, va + start, at - start, ro, 1) == CUDA_SUCCESS)
        return 1;
    for (int i = first; i < *n; i++)
        if (timed(&tally.access, vmm.access, va + maps[i].off, maps[i].len, ro, 1) != CUDA_SUCCESS)
            return 0;
    return 1;
}

/* Maps zeros read-only at every granule of [lo, hi) of the span at va that none of the m sorted
   pieces covers, appending the pieces to *maps (grown). Leaves those granules unmapped, and
   returns m, when there are more than ZERO_MAPS_MAX of them or a step fails (what it mapped is
   undone). */
static int vmm_map_zeros(CUdeviceptr va, size_t lo, size_t hi, struct gg_devmap **maps, int m)
{
    size_t first = lo / vmm.gran * vmm.gran, gaps = vmm_gaps(lo, hi, *maps, m);
    if (gaps == 0 || gaps > ZERO_MAPS_MAX)
        return m;
    struct gg_devmap *grown =
        (struct gg_devmap *)realloc(*maps, ((size_t)m + gaps) * sizeof *grown);
    if (!grown)
        return m;
    *maps = grown;
    CUmemAccessDesc ro;
    memset(&ro, 0, sizeof ro);
    ro.location = vmm.prop.location;
    ro.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    int n = m, p = 0, ok = 1;
    size_t run = 0; /* gap granules in a row before at */
    for (size_t at = first; ok && at < hi + vmm.gran; at += vmm.gran) {
        while (p < m && grown[p].off + grown[p].len <= at)
            p++;
        if (at < hi && !(p < m && grown[p].off <= at)) {
            run++;
            continue;
        }
        if (run > 0)
            ok = vmm_zero_run(va, at - run * vmm.gran, run, grown, &n, &ro);
        run = 0;
    }
    if (ok) /* every run of gaps mapped: all gaps granules */
        return n;
    for (int i = m; i < n; i++)
        (void)timed(&tally.unmap, vmm.unmap, va + grown[i].off, grown[i].len);
    return m;
}

/* The pieces of a span of len bytes that hold [lo[i], hi[i]) (span offsets, sorted), rounded
   out to granules and merged; returns their count (at most n). */
static int vmm_pieces(const size_t *lo, const size_t *hi, int n, size_t len, struct gg_devmap *out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        size_t a = lo[i] / vmm.gran * vmm.gran, z = round_up(hi[i], vmm.gran);
        z = z < len ? z : len;
        if (m > 0 && a <= out[m - 1].off + out[m - 1].len) {
            size_t end = out[m - 1].off + out[m - 1].len;
            out[m - 1].len = (z > end ? z : end) - out[m - 1].off;
        } else {
            out[m].off = a;
            out[m].len = z - a;
            out[m].handle = 0;
            out[m].zero = 0;
            m++;
        }
    }
    return m;
}

/* Gives each of the m pieces of the span reserved at va memory, mapped read-write: returns 0,
   the span unreserved and nothing left behind, when the driver refuses any step. */
static int vmm_map_all(struct gg_device *d, CUdeviceptr va, size_t span, struct gg_devmap *maps,
                       int m)
{
    CUmemAccessDesc rw;
    memset(&rw, 0, sizeof rw);
    rw.location = vmm.prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int i = 0; i < m; i++) {
        int ok = granule_take(d, maps[i].len, &maps[i].handle);
        if (ok && (timed(&tally.map, vmm.map, va + maps[i].off, maps[i].len, 0, maps[i].handle,
                         0) != CUDA_SUCCESS ||
                   timed(&tally.access, vmm.access, va + maps[i].off, maps[i].len, &rw, 1) !=
                       CUDA_SUCCESS)) {
            (void)timed(&tally.unmap, vmm.unmap, va + maps[i].off, maps[i].len);
            granule_put(d, maps[i].len, maps[i].handle);
            ok = 0;
        }
        if (!ok) {
            vmm_unwind(d, va, span, maps, i);
            return 0;
        }
    }
    return 1;
}

/* Room to plan a span of n live ranges: their offsets (n lo, then n hi, in *lo) and n pieces
   (zeroed): 0, nothing allocated, when memory is short. */
static int plan_room(size_t n, size_t **lo, struct gg_devmap **maps)
{
    *lo = (size_t *)malloc(n * 2 * sizeof(size_t));
    *maps = (struct gg_devmap *)calloc(n, sizeof **maps);
    if (*lo && *maps)
        return 1;
    free(*lo);
    free(*maps);
    return 0;
}

/* Maps the pieces of a sparse buffer for bytes bytes with live ranges live[0..n): returns 0
   (nothing left behind) when the driver refuses any step. */
static int vmm_build(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                     const struct gg_range *live, size_t n)
{
    size_t span = round_up(layout_len(bytes), vmm.gran), pre = GG_DEVICE_GUARD_BYTES;
    size_t *lo;
    struct gg_devmap *maps;
    if (!plan_room(n + 2, &lo, &maps))
        return 0;
    size_t *hi = lo + n + 2;
    lo[0] = 0, hi[0] = pre; /* the band before the data */
    for (size_t i = 0; i < n; i++)
        lo[i + 1] = pre + live[i].lo, hi[i + 1] = pre + live[i].hi;
    lo[n + 1] = pre + bytes, hi[n + 1] = layout_len(bytes); /* the band after it */
    int m = vmm_pieces(lo, hi, (int)n + 2, span, maps);
    free(lo);
    CUdeviceptr va = 0;
    if (timed(&tally.reserve, vmm.reserve, &va, span, vmm.gran, 0, 0) != CUDA_SUCCESS ||
        !vmm_map_all(d, va, span, maps, m)) {
        free(maps);
        return 0;
    }
    b->base = (uint8_t *)va;
    b->alloc_len = span;
    b->n_maps = vmm_map_zeros(va, pre, pre + bytes, &maps, m);
    b->maps = maps;
    return 1;
}

/* ---- flush spans kept for reuse ---- */

/* Bytes of memory behind the pieces of a span. */
static size_t pieces_bytes(const struct gg_devmap *maps, int n)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += maps[i].len;
    return sum;
}

/* Unmaps the oldest kept span (the stream waited for first). */
static void flush_evict_oldest(struct gg_device *d)
{
    struct flushed *f = &d->flush[0];
    (void)cudaStreamSynchronize(d->stream);
    vmm_unwind(d, (CUdeviceptr)f->base, f->span, f->maps, f->n_maps);
    free(f->maps);
    d->flush_bytes -= f->mapped;
    d->stats.spans_unmapped++;
    memmove(d->flush, d->flush + 1, (size_t)--d->n_flush * sizeof *d->flush);
}

static void flush_drain(struct gg_device *d)
{
    while (d->n_flush > 0)
        flush_evict_oldest(d);
    granules_drain(d);
    zeros_drain();
}

size_t dev_zeros_kept(void)
{
    return zeros_kept * vmm.gran;
}

/* Gives b a kept span of span bytes whose memory is the n pieces maps (no zero granules): 1
   when one was there. */
static int flush_take(struct gg_device *d, struct gg_devbuf *b, size_t span,
                      const struct gg_devmap *maps, int n)
{
    for (int i = d->n_flush - 1; i >= 0; i--) {
        struct flushed *f = &d->flush[i];
        int same = f->span == span && f->n_maps == n;
        for (int j = 0; same && j < n; j++)
            same = f->maps[j].off == maps[j].off && f->maps[j].len == maps[j].len;
        if (!same)
            continue;
        b->base = f->base;
        b->alloc_len = span;
        b->maps = f->maps;
        b->n_maps = n;
        b->keep_span = 1;
        d->flush_bytes -= f->mapped;
        memmove(d->flush + i, d->flush + i + 1, (size_t)(--d->n_flush - i) * sizeof *d->flush);
        d->stats.spans_reused++;
        return 1;
    }
    return 0;
}

/* Keeps b's span (its maps with it) for the next buffer of its layout, unmapping the oldest
   kept spans while the cache is full: 0 when it is not kept (larger than the cache's share). */
static int flush_put(struct gg_device *d, struct gg_devbuf *b)
{
    size_t mapped = pieces_bytes(b->maps, b->n_maps);
    if (mapped > d->pool_cap / 2)
        return 0;
    while (d->n_flush > 0 &&
           (d->n_flush == FLUSH_MAX_ENTRIES || d->flush_bytes + mapped > d->pool_cap / 2))
        flush_evict_oldest(d);
    /* Stream order keeps pending work on the span ahead of its next user. */
    d->flush[d->n_flush++] = (struct flushed){b->base, b->alloc_len, mapped, b->maps, b->n_maps};
    d->flush_bytes += mapped;
    return 1;
}

/* A buffer placed flush against unmapped memory: one unmapped granule, the data rounded up to
   GG_DEVICE_ALIGN at the end of whole granules (at_end) or at their start, one unmapped granule;
   only the granules of the live ranges get memory. No canary bands. */
static int vmm_build_flush(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                           const struct gg_range *live, size_t n, int at_end)
{
    size_t room = round_up(bytes, GG_DEVICE_ALIGN), body = round_up(room, vmm.gran);
    size_t data_off = vmm.gran + (at_end ? body - room : 0), span = vmm.gran + body + vmm.gran;
    size_t *lo;
    struct gg_devmap *maps;
    if (!plan_room(n + 1, &lo, &maps))
        return 0;
    size_t *hi = lo + n + 1, m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t h = live[i].hi < bytes ? live[i].hi : bytes;
        if (h > live[i].lo)
            lo[m] = data_off + live[i].lo, hi[m++] = data_off + h;
    }
    int pieces = vmm_pieces(lo, hi, (int)m, span - vmm.gran, maps);
    free(lo);
    /* A span without zero granules is kept for the next buffer of its layout (flush_put). */
    int keep = vmm_gaps(data_off, data_off + bytes, maps, pieces) == 0;
    if (keep && flush_take(d, b, span, maps, pieces)) {
        free(maps);
        b->data = b->base + data_off;
        return 1;
    }
    CUdeviceptr va = 0;
    if (timed(&tally.reserve, vmm.reserve, &va, span, vmm.gran, 0, 0) != CUDA_SUCCESS ||
        !vmm_map_all(d, va, span, maps, pieces)) {
        free(maps);
        return 0;
    }
    d->stats.spans_mapped++;
    b->base = (uint8_t *)va;
    b->alloc_len = span;
    b->n_maps = vmm_map_zeros(va, data_off, data_off + bytes, &maps, pieces);
    b->maps = maps;
    b->data = b->base + data_off;
    b->keep_span = keep;
    return 1;
}

static void sparse_free(struct gg_device *d, struct gg_devbuf *b)
{
    if (!d->lost && b->keep_span && flush_put(d, b))
        return; /* the maps went with the span */
    if (!d->lost) { /* pending work may still use the pieces */
        (void)cudaStreamSynchronize(d->stream);
        vmm_unwind(d, (CUdeviceptr)b->base, b->alloc_len, b->maps, b->n_maps);
        d->stats.spans_unmapped++;
    }
    free(b->maps);
}
#else
static int vmm_usable(void)
{
    return 0;
}

static int vmm_build(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                     const struct gg_range *live, size_t n)
{
    (void)d, (void)b, (void)bytes, (void)live, (void)n;
    return 0;
}

static int vmm_build_flush(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                           const struct gg_range *live, size_t n, int at_end)
{
    (void)d, (void)b, (void)bytes, (void)live, (void)n, (void)at_end;
    return 0;
}

static void sparse_free(struct gg_device *d, struct gg_devbuf *b)
{
    (void)d, (void)b;
}

static void flush_drain(struct gg_device *d)
{
    (void)d;
}

size_t dev_zeros_kept(void)
{
    return 0;
}

size_t dev_granule(void)
{
    return 0;
}

void dev_vmm_tally(struct gg_device_alloc_stats *out)
{
    (void)out; /* no virtual memory calls: every buffer is whole */
}
#endif

/* Zeroes the parts of the data that have memory behind them. */
static enum gg_status zero_mapped(struct gg_device *d, const struct gg_devbuf *b, char *err,
                                  size_t err_len)
{
    size_t data_off = (size_t)(b->data - b->base);
    for (int i = 0; i < b->n_maps; i++) {
        if (b->maps[i].zero)
            continue; /* read-only zeros */
        size_t lo = b->maps[i].off, hi = lo + b->maps[i].len;
        lo = lo > data_off ? lo : data_off;
        hi = hi < data_off + b->bytes ? hi : data_off + b->bytes;
        if (hi > lo)
            CK(d, cudaMemsetAsync(b->base + lo, 0, hi - lo, d->stream));
    }
    return GG_OK;
}

extern "C" enum gg_status gg_devbuf_alloc_sparse(struct gg_device *d, struct gg_devbuf *b,
                                                 size_t bytes, const struct gg_range *live,
                                                 size_t n, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    LIVE(d);
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        used += live[i].hi > live[i].lo ? live[i].hi - live[i].lo : 0;
    size_t len = bytes <= SIZE_MAX / 2 ? layout_len(bytes) : 0;
    if (len < SPARSE_MIN_SPAN || used > len / 4 || !vmm_usable() || !vmm_build(d, b, bytes, live, n))
        return gg_devbuf_alloc(d, b, bytes, err, err_len);
    enum gg_status st = place(d, b, b->base, b->alloc_len, bytes, err, err_len);
    return st == GG_OK ? zero_mapped(d, b, err, err_len) : st;
}

extern "C" enum gg_status gg_devbuf_alloc_flush(struct gg_device *d, struct gg_devbuf *b,
                                                size_t bytes, const struct gg_range *live,
                                                size_t n, int at_end, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    LIVE(d);
    if (bytes > SIZE_MAX / 4 || !vmm_usable() || !vmm_build_flush(d, b, bytes, live, n, at_end))
        return gg_devbuf_alloc_sparse(d, b, bytes, live, n, err, err_len);
    b->bytes = bytes;
    b->owns = 1;
    return zero_mapped(d, b, err, err_len);
}

extern "C" void *gg_device_host_alloc(struct gg_device *d, size_t bytes)
{
    void *p = NULL;
    if (!d || d->lost || cudaMallocHost(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: the caller falls back to pageable memory */
        return NULL;
    }
    return p;
}

extern "C" void gg_device_host_free(struct gg_device *d, void *p)
{
    (void)d;
    if (p && cudaFreeHost(p) != cudaSuccess)
        (void)cudaGetLastError(); /* nothing to do but leave the error unreported */
}

extern "C" void gg_devbuf_free(struct gg_device *d, struct gg_devbuf *b)
{
    if (!b->owns || !b->base)
        return;
    if (b->maps) {
        sparse_free(d, b);
        memset(b, 0, sizeof *b);
        return;
    }
    if (!pool_put(d, b->base, b->alloc_len) && !d->lost) {
        (void)cudaStreamSynchronize(d->stream);
        (void)cudaFree(b->base);
        d->stats.freed++;
    }
    memset(b, 0, sizeof *b);
}

extern "C" enum gg_status gg_devbuf_upload(struct gg_device *d, struct gg_devbuf *b, size_t off,
                                           const void *src, size_t n, char *err, size_t err_len)
{
    LIVE(d);
    if (off > b->bytes || n > b->bytes - off) {
        snprintf(err, err_len, "upload of %zu bytes at %zu past a %zu-byte device buffer", n, off,
                 b->bytes);
        return GG_E_INTERNAL;
    }
    if (n)
        CK(d, cudaMemcpyAsync(b->data + off, src, n, cudaMemcpyHostToDevice, d->stream));
    return GG_OK;
}

extern "C" enum gg_status gg_devbuf_download(struct gg_device *d, const struct gg_devbuf *b,
                                             size_t off, void *dst, size_t n, char *err,
                                             size_t err_len)
{
    LIVE(d);
    if (off > b->bytes || n > b->bytes - off) {
        snprintf(err, err_len, "download of %zu bytes at %zu past a %zu-byte device buffer", n,
                 off, b->bytes);
        return GG_E_INTERNAL;
    }
    if (n)
        CK(d, cudaMemcpyAsync(dst, b->data + off, n, cudaMemcpyDeviceToHost, d->stream));
    CK(d, cudaStreamSynchronize(d->stream));
    return GG_OK;
}

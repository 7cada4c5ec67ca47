/*
 * bench_vmm_mappings — what the driver's virtual memory calls cost against the length of a range
 * and the number of mappings in it: a reserved range of G granules is mapped with one shared
 * chunk of C granules of memory at each place (G / C mappings, as the chunks of zeros of a
 * sparse buffer are), made read-only with one cuMemSetAccess over the whole range, unmapped with
 * one cuMemUnmap over it (then, in a second pass, one call per mapping) and freed; each is
 * timed, as the mean of REPEATS passes. Then one granule mapped read-write and unmapped inside
 * reservations of growing length. This is the cost model behind the chunks of zeros of sparse
 * device buffers (fuzz/run/device/gg_devbuf_gpu.cu): the time goes by mapping, not by granule.
 * CUDA builds; needs a GPU.
 * Usage: bench_vmm_mappings [--device N] [--repeats R]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CK(call) \
    do { \
        CUresult r_ = (call); \
        if (r_ != CUDA_SUCCESS) { \
            const char *s_ = NULL; \
            cuGetErrorString(r_, &s_); \
            fprintf(stderr, "bench_vmm_mappings: %s: %s (line %d)\n", #call, s_ ? s_ : "?", \
                    __LINE__); \
            exit(1); \
        } \
    } while (0)

static CUmemAllocationProp prop;
static size_t gran;

/* Maps chunk (c granules) over all of a new g-granule reservation, read-only: its address. */
static CUdeviceptr map_range(size_t g, size_t c, CUmemGenericAllocationHandle chunk, double *t_map,
                             double *t_access)
{
    CUdeviceptr va = 0;
    CUmemAccessDesc ro;
    memset(&ro, 0, sizeof ro);
    ro.location = prop.location;
    ro.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
    CK(cuMemAddressReserve(&va, g * gran, gran, 0, 0));
    double t0 = now();
    for (size_t i = 0; i < g; i += c)
        CK(cuMemMap(va + i * gran, c * gran, 0, chunk, 0));
    double t1 = now();
    CK(cuMemSetAccess(va, g * gran, &ro, 1));
    *t_map += t1 - t0;
    *t_access += now() - t1;
    return va;
}

int main(int argc, char **argv)
{
    int dev = 0, repeats = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc)
            dev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_vmm_mappings [--device N] [--repeats R]\n");
            return 2;
        }
    }
    if (repeats < 1)
        repeats = 1;
    CUdevice d;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, dev));
    CK(cuDevicePrimaryCtxRetain(&ctx, d));
    CK(cuCtxSetCurrent(ctx));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, d));
    printf("%s, granule %zu bytes, mean of %d passes\n", name, gran, repeats);
    static const size_t chunks[] = {1, 64, 512}, ranges[] = {1, 8, 64, 512, 2048, 8192};
    printf("%9s %7s %9s %10s %11s %12s %14s\n", "granules", "chunk", "mappings", "map ms",
           "access ms", "unmap ms", "unmap each ms");
    for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
        size_t c = chunks[ci];
        CUmemGenericAllocationHandle chunk;
        CK(cuMemCreate(&chunk, c * gran, &prop, 0));
        for (size_t ri = 0; ri < sizeof ranges / sizeof *ranges; ri++) {
            size_t g = ranges[ri];
            if (g < c)
                continue;
            double t_map = 0, t_access = 0, t_unmap = 0, t_each = 0, ignore = 0;
            for (int r = 0; r < repeats; r++) {
                CUdeviceptr va = map_range(g, c, chunk, &t_map, &t_access);
                double t0 = now();
                CK(cuMemUnmap(va, g * gran));
                t_unmap += now() - t0;
                CK(cuMemAddressFree(va, g * gran));
                va = map_range(g, c, chunk, &ignore, &ignore);
                t0 = now();
                for (size_t i = 0; i < g; i += c)
                    CK(cuMemUnmap(va + i * gran, c * gran));
                t_each += now() - t0;
                CK(cuMemAddressFree(va, g * gran));
            }
            printf("%9zu %7zu %9zu %10.3f %11.3f %12.3f %14.3f\n", g, c, g / c,
                   1e3 * t_map / repeats, 1e3 * t_access / repeats, 1e3 * t_unmap / repeats,
                   1e3 * t_each / repeats);
        }
        CK(cuMemRelease(chunk));
    }
    CUmemGenericAllocationHandle one;
    CK(cuMemCreate(&one, gran, &prop, 0));
    CUmemAccessDesc rw;
    memset(&rw, 0, sizeof rw);
    rw.location = prop.location;
    rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (size_t ri = 0; ri < sizeof ranges / sizeof *ranges; ri++) {
        size_t g = ranges[ri];
        const int n = 20 * repeats;
        double t_access = 0, t_unmap = 0;
        CUdeviceptr va = 0;
        CK(cuMemAddressReserve(&va, g * gran, gran, 0, 0));
        for (int r = 0; r < n; r++) {
            CUdeviceptr at = va + (size_t)(r * 7919 % (int)g) * gran;
            CK(cuMemMap(at, gran, 0, one, 0));
            double t0 = now();
            CK(cuMemSetAccess(at, gran, &rw, 1));
            double t1 = now();
            CK(cuMemUnmap(at, gran));
            t_access += t1 - t0;
            t_unmap += now() - t1;
        }
        CK(cuMemAddressFree(va, g * gran));
        printf("one granule read-write in a reservation of %zu granules: access %.1f us, unmap "
               "%.1f us\n",
               g, 1e6 * t_access / n, 1e6 * t_unmap / n);
    }
    CK(cuMemRelease(one));
    CK(cuDevicePrimaryCtxRelease(d));
    return 0;
}

/*
 * gpu_runtime.cu — the device services gpu_kernels.h declares for the GPU tests and benchmarks:
 * device count, buffers, synchronous copies and fills, a device-wide sync that surfaces
 * asynchronous errors, and cudaEvent timing. Every runtime error becomes GG_E_DEVICE with the
 * call, file and line.
 */
#include "kernels/gpu/gpu_int.h"

extern "C" int gg_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" enum gg_status gg_gpu_malloc(void **ptr, size_t bytes, char *err, size_t err_len)
{
    *ptr = NULL;
    if (bytes == 0)
        return GG_OK;
    GG_GPU_CHECK(cudaMalloc(ptr, bytes));
    return GG_OK;
}

extern "C" void gg_gpu_free(void *ptr)
{
    if (ptr != NULL)
        (void)cudaFree(ptr);
}

extern "C" enum gg_status gg_gpu_copy(void *dst, const void *src, size_t bytes,
                                      enum gg_gpu_copy_kind kind, char *err, size_t err_len)
{
    if (bytes == 0)
        return GG_OK;
    cudaMemcpyKind k = kind == GG_GPU_H2D   ? cudaMemcpyHostToDevice
                       : kind == GG_GPU_D2H ? cudaMemcpyDeviceToHost
                                            : cudaMemcpyDeviceToDevice;
    GG_GPU_CHECK(cudaMemcpy(dst, src, bytes, k));
    return GG_OK;
}

extern "C" enum gg_status gg_gpu_fill(void *dst, int byte, size_t bytes, char *err,
                                      size_t err_len)
{
    if (bytes == 0)
        return GG_OK;
    GG_GPU_CHECK(cudaMemset(dst, byte, bytes));
    return GG_OK;
}

extern "C" enum gg_status gg_gpu_sync(char *err, size_t err_len)
{
    GG_GPU_CHECK(cudaDeviceSynchronize());
    GG_GPU_CHECK(cudaGetLastError());
    return GG_OK;
}

extern "C" enum gg_status gg_gpu_timer_init(struct gg_gpu_timer *t, char *err, size_t err_len)
{
    cudaEvent_t a, b;
    t->start = t->stop = NULL;
    GG_GPU_CHECK(cudaEventCreate(&a));
    t->start = (void *)a;
    GG_GPU_CHECK(cudaEventCreate(&b));
    t->stop = (void *)b;
    return GG_OK;
}

extern "C" enum gg_status gg_gpu_timer_start(struct gg_gpu_timer *t, char *err, size_t err_len)
{
    GG_GPU_CHECK(cudaEventRecord((cudaEvent_t)t->start, 0));
    return GG_OK;
}

extern "C" enum gg_status gg_gpu_timer_stop(struct gg_gpu_timer *t, double *ms, char *err,
                                            size_t err_len)
{
    float f = 0.0f;
    GG_GPU_CHECK(cudaEventRecord((cudaEvent_t)t->stop, 0));
    GG_GPU_CHECK(cudaEventSynchronize((cudaEvent_t)t->stop));
    GG_GPU_CHECK(cudaEventElapsedTime(&f, (cudaEvent_t)t->start, (cudaEvent_t)t->stop));
    *ms = (double)f;
    return GG_OK;
}

extern "C" void gg_gpu_timer_free(struct gg_gpu_timer *t)
{
    if (t->start != NULL)
        (void)cudaEventDestroy((cudaEvent_t)t->start);
    if (t->stop != NULL)
        (void)cudaEventDestroy((cudaEvent_t)t->stop);
    t->start = t->stop = NULL;
}

/*
 * gpu_kernels.h — the GPU kernels of kernels/gpu (CUDA or HIP, one build each) and a few device
 * services the GPU tests and benchmarks need (buffers, copies, event timing). Included by the
 * builtin table (GG_GPU_KERNELS), by kernels/gpu itself and by tests; C and C++ compatible.
 * Descriptor names say the backend at run time (grouped_bf16_cuda_tiled on CUDA, ..._hip_... on
 * HIP); the C symbols are backend-neutral.
 */
#ifndef GG_GPU_KERNELS_H
#define GG_GPU_KERNELS_H

#include <stddef.h>

#include "kernels/gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct gg_kernel gg_kernel_grouped_bf16_gpu_persistent;
extern const struct gg_kernel gg_kernel_grouped_bf16_gpu_tiled;
extern const struct gg_kernel gg_kernel_grouped_bf16_gpu_streams;
extern const struct gg_kernel gg_kernel_grouped_fp8_gpu_tiled;
extern const struct gg_kernel gg_kernel_batched_bf16_gpu_tiled;
extern const struct gg_kernel gg_kernel_batched_a8w8_gpu_tiled;
extern const struct gg_kernel gg_kernel_mx_e4m3_gpu_grouped;
extern const struct gg_kernel gg_kernel_mx_e4m3_gpu_gemv;
extern const struct gg_kernel gg_kernel_moe_mx_e4m3_gpu_sorted;

/* The builtin table's entries, comma-terminated. */
#define GG_GPU_KERNELS                                                                         \
    &gg_kernel_grouped_bf16_gpu_persistent, &gg_kernel_grouped_bf16_gpu_tiled,                 \
        &gg_kernel_grouped_bf16_gpu_streams, &gg_kernel_grouped_fp8_gpu_tiled,                \
        &gg_kernel_batched_bf16_gpu_tiled, &gg_kernel_batched_a8w8_gpu_tiled,                  \
        &gg_kernel_mx_e4m3_gpu_grouped, &gg_kernel_mx_e4m3_gpu_gemv,                           \
        &gg_kernel_moe_mx_e4m3_gpu_sorted,

/* ---- device services for tests and benchmarks (gpu_runtime.cu) --------------------------- */

/* Number of usable devices (0 when there is none or the runtime fails). */
int gg_gpu_device_count(void);

enum gg_gpu_copy_kind { GG_GPU_H2D = 0, GG_GPU_D2H, GG_GPU_D2D };

/* Device allocation of bytes (NULL for 0 bytes); freed by gg_gpu_free(). */
enum gg_status gg_gpu_malloc(void **ptr, size_t bytes, char *err, size_t err_len);
void gg_gpu_free(void *ptr);
/* Synchronous copy and fill. */
enum gg_status gg_gpu_copy(void *dst, const void *src, size_t bytes, enum gg_gpu_copy_kind kind,
                           char *err, size_t err_len);
enum gg_status gg_gpu_fill(void *dst, int byte, size_t bytes, char *err, size_t err_len);
/* Waits for the device; reports any pending (sticky or asynchronous) error. */
enum gg_status gg_gpu_sync(char *err, size_t err_len);

/* Event timer on the default stream: start, then stop returns the milliseconds between. */
struct gg_gpu_timer {
    void *start, *stop;
};
enum gg_status gg_gpu_timer_init(struct gg_gpu_timer *t, char *err, size_t err_len);
enum gg_status gg_gpu_timer_start(struct gg_gpu_timer *t, char *err, size_t err_len);
enum gg_status gg_gpu_timer_stop(struct gg_gpu_timer *t, double *ms, char *err, size_t err_len);
void gg_gpu_timer_free(struct gg_gpu_timer *t);

#ifdef __cplusplus
}
#endif
#endif /* GG_GPU_KERNELS_H */

/*
 * gg_kernels_builtin.c — the table of in-tree kernels, in a fixed order (gg_builtin.h). The
 * harness lists and looks kernels up through gg_kernels_builtin(); adding a kernel means adding
 * its descriptor here. GPU kernels join the table when the build has them (GG_CUDA or GG_HIP),
 * and so do the adapters of the vendor libraries under test (GG_CUDA).
 */
#include "kernels/builtin/gg_builtin.h"
#include "kernels/cpu/cpu_kernels.h"
#ifdef GG_HAVE_GPU_KERNELS
#include "kernels/gpu/gpu_kernels.h" /* defines GG_GPU_KERNELS, a list of &descriptor, */
#endif
#ifdef GG_HAVE_VENDOR_KERNELS
#include "kernels/vendor_libs/vendor_kernels.h" /* defines GG_VENDOR_KERNELS likewise */
#endif

static const struct gg_kernel *const builtin_kernels[] = {
    &gg_kernel_grouped_bf16_cpu_tiled,
    &gg_kernel_grouped_bf16_cpu_serial,
    &gg_kernel_grouped_bf16_cpu_streams,
    &gg_kernel_grouped_fp8_cpu_persistent,
    &gg_kernel_grouped_fp8_cpu_tiled,
    &gg_kernel_grouped_fp8_cpu_fine,
    &gg_kernel_batched_bf16_cpu_tiled,
    &gg_kernel_batched_a8w8_cpu_tiled,
    &gg_kernel_batched_a16wfp4_cpu_tiled,
    &gg_kernel_batched_afp4wfp4_cpu_tiled,
    &gg_kernel_mx_e4m3_cpu_grouped,
    &gg_kernel_mx_e4m3_cpu_gemv,
    &gg_kernel_mx_e4m3_cpu_tiled,
    &gg_kernel_moe_mx_e4m3_cpu_sorted,
#ifdef GG_HAVE_GPU_KERNELS
    GG_GPU_KERNELS
#endif
#ifdef GG_HAVE_VENDOR_KERNELS
    GG_VENDOR_KERNELS
#endif
};

const struct gg_kernel *const *gg_kernels_builtin(size_t *count)
{
    if (count != NULL)
        *count = sizeof builtin_kernels / sizeof builtin_kernels[0];
    return builtin_kernels;
}

/*
 * vendor_kernels.h — descriptors of the adapters that expose vendor libraries (cuBLAS,
 * cuBLASLt) through the kernel ABI, and GG_VENDOR_KERNELS, the comma-terminated list that
 * gg_kernels_builtin.c puts in the table of in-tree kernels.
 */
#ifndef GG_VENDOR_KERNELS_H
#define GG_VENDOR_KERNELS_H

#include "kernels/gg_kernel.h"

extern const struct gg_kernel gg_kernel_grouped_bf16_cublas_grouped;
extern const struct gg_kernel gg_kernel_batched_bf16_cublas_strided;
extern const struct gg_kernel gg_kernel_grouped_fp8_cublaslt_tensor;

#define GG_VENDOR_KERNELS                                                                  \
    &gg_kernel_grouped_bf16_cublas_grouped, &gg_kernel_batched_bf16_cublas_strided,        \
        &gg_kernel_grouped_fp8_cublaslt_tensor,

#endif /* GG_VENDOR_KERNELS_H */

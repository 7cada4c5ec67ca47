/*
 * cublas_batched.c — batched_bf16_cublas_strided: batched BF16 GEMM through
 * cublasGemmStridedBatchedEx_64, B as [N, K] or [K, N], bf16 or fp32 output, fp32 accumulation.
 * One call covers every batch: the batch strides of the problem are cuBLAS's strides (A and B
 * swap places under the column-major identity of vendor_int.h). An empty reduction (K = 0) is
 * written as zeros by a memset; an empty output calls nothing.
 */
#include <stdio.h>

#include "kernels/vendor_libs/vendor_int.h"

#define OPS GG_OP_BIT(GG_OP_BATCHED)

static int supports(const struct gg_problem *p, char *why, size_t why_len)
{
    if (!vendor_common_supports(p, OPS, why, why_len))
        return 0;
    if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16 ||
        (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)) {
        snprintf(why, why_len, "bf16 inputs and a bf16 or fp32 output only");
        return 0;
    }
    if (p->scaling != GG_SCALING_NONE) {
        snprintf(why, why_len, "unscaled inputs only");
        return 0;
    }
    return 1;
}

static enum gg_status run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                          size_t err_len)
{
    cudaStream_t stream = (cudaStream_t)o->stream;
    struct vendor_gemm v;
    vendor_group_gemm(p, o, 0, &v);
    if (p->groups == 0 || v.m == 0 || v.n == 0)
        return GG_OK;
    if (v.k == 0) {
        for (int64_t b = 0; b < p->groups; b++) {
            vendor_group_gemm(p, o, b, &v);
            enum gg_status st = vendor_zero_block(p, &v, stream, err, err_len);
            if (st != GG_OK)
                return st;
        }
        return GG_OK;
    }
    cublasHandle_t h;
    enum gg_status st = vendor_cublas(&h, err, err_len);
    if (st != GG_OK)
        return st;
    cudaDataType_t ctype;
    vendor_cuda_type(p->c_dtype, &ctype);
    const float alpha = 1.0f, beta = 0.0f;
    VENDOR_CUBLAS(cublasSetStream(h, stream));
    VENDOR_CUBLAS(cublasGemmStridedBatchedEx_64(
        h, v.ta, v.tb, v.m, v.n, v.k, &alpha, v.a, CUDA_R_16BF, v.lda, p->stride_b, v.b,
        CUDA_R_16BF, v.ldb, p->stride_a, &beta, v.c, ctype, v.ldc, p->stride_c, p->groups,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return GG_OK;
}

const struct gg_kernel gg_kernel_batched_bf16_cublas_strided = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "batched_bf16_cublas_strided",
    .summary = "cuBLAS cublasGemmStridedBatchedEx: batched bf16, B as NK or KN, fp32 accumulation",
    .backend = GG_BACKEND_CUDA,
    .ops = OPS,
    .supports = supports,
    .run = run,
};

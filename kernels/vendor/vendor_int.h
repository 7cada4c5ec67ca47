/*
 * vendor_int.h — internal to kernels/vendor/: the process's library handles, error mapping and
 * the row-major to column-major translation shared by the cuBLAS adapters.
 *
 * cuBLAS is column-major. A row-major matrix X[r][c] with leading dimension ld is the
 * column-major matrix Xᵀ (c × r, same ld), so the row-major product C = op(A)·op(B) is computed
 * as the column-major product Cᵀ = op(B)ᵀ·op(A)ᵀ: the operands swap places and each keeps or
 * drops its transpose.
 */
#ifndef GG_VENDOR_INT_H
#define GG_VENDOR_INT_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/gg_kernel.h"

/* The process's cuBLAS and cuBLASLt handles, created on first use and kept until the process
   exits: with the kernel registry, the only process state of the adapters. */
enum gg_status vendor_cublas(cublasHandle_t *h, char *err, size_t err_len);
enum gg_status vendor_cublaslt(cublasLtHandle_t *h, char *err, size_t err_len);

/* Status and message "LIB error NAME in CALL at FILE:LINE" for a failed library call. */
enum gg_status vendor_cublas_fail(cublasStatus_t s, const char *call, const char *file, int line,
                                  char *err, size_t err_len);
enum gg_status vendor_cuda_fail(cudaError_t e, const char *call, const char *file, int line,
                                char *err, size_t err_len);

#define VENDOR_CUBLAS(call)                                                                \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                   \
            return vendor_cublas_fail(s_, #call, __FILE__, __LINE__, err, err_len);        \
    } while (0)
#define VENDOR_CUDA(call)                                                                  \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess)                                                             \
            return vendor_cuda_fail(e_, #call, __FILE__, __LINE__, err, err_len);          \
    } while (0)

/* One column-major GEMM C = op(A)·op(B) (m × n, reduction k) in cuBLAS's terms. */
struct vendor_gemm {
    cublasOperation_t ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    const void *a, *b;
    void *c;
};

/* The column-major GEMM of group (or batch) g of a grouped or batched problem, addresses from
   o's device pointers and p's host group offsets. */
void vendor_group_gemm(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                       struct vendor_gemm *out);
/* Writes zeros over the rows × cols output block of a GEMM whose reduction is empty (a wgrad
   group without tokens, K = 0): cuBLAS is not asked to do it. */
enum gg_status vendor_zero_block(const struct gg_problem *p, const struct vendor_gemm *v,
                                 cudaStream_t stream, char *err, size_t err_len);
/* CUDA data type of a gg dtype (bf16, f32, e4m3, e5m2); 0 with a reason otherwise. */
int vendor_cuda_type(enum gg_dtype t, cudaDataType_t *out);
/* The checks every adapter shares: the op bit, fp32 accumulation, no bias (cuBLAS's plain
   GEMMs have no bias epilogue), no mutants. */
int vendor_common_supports(const struct gg_problem *p, uint32_t ops, char *why, size_t why_len);

#endif /* GG_VENDOR_INT_H */

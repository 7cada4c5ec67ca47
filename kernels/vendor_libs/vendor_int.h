/*
 * vendor_int.h — internal to kernels/vendor_libs/ (the vendor libraries under test): the
 * process's library handles, error mapping, the row-major to column-major translation shared by
 * the cuBLAS adapters, and the TN form of a GEMM that cuBLASLt's FP8 matmul takes.
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
/* For clean-up that must go on past a failure: st keeps the first failure, this call's
   included. */
#define VENDOR_CUBLAS_KEEP(st, call)                                                       \
    do {                                                                                   \
        cublasStatus_t s_ = (call);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS && (st) == GG_OK)                                  \
            (st) = vendor_cublas_fail(s_, #call, __FILE__, __LINE__, err, err_len);        \
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
   o's device pointers and p's host group offsets; an operand whose pointer in o is NULL gets a
   NULL address, so a zeroed o gives the shapes alone. */
void vendor_group_gemm(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                       struct vendor_gemm *out);
/* Writes zeros over the rows × cols output block of a GEMM whose reduction is empty (a wgrad
   group without tokens, K = 0): cuBLAS is not asked to do it. */
enum gg_status vendor_zero_block(const struct gg_problem *p, const struct vendor_gemm *v,
                                 cudaStream_t stream, char *err, size_t err_len);
/*
 * The "TN" form that cuBLASLt's FP8 matmul takes (A op T, B op N: both operands stored with the
 * reduction contiguous, "K-major"), reached by byte copies made with cublasLtMatrixTransform
 * (cublaslt_transpose.c). An A of op N (stored m × k) is copied as Aᵀ (stored k × m), a B of op
 * T (stored n × k) as Bᵀ (stored k × n), each with leading dimension ld = k rounded up to 16 and
 * the rows k .. ld-1 zero. When both operands are copies the matmul runs over the padded length
 * ld (cuBLASLt's FP8 path wants the reduction length a multiple of 16; the zeros add nothing),
 * otherwise over k.
 */
struct vendor_tn {
    int copy_a, copy_b;      /* whether A and B are read from copies */
    int64_t ld, k;           /* leading dimension of the copies; reduction length of the matmul */
    size_t a_bytes, b_bytes; /* workspace bytes of each copy: 256-byte multiples, 0 for none */
};
/* The copies the TN form of v needs (v's shapes and transposes only). */
void vendor_tn_plan(const struct vendor_gemm *v, struct vendor_tn *t);
/* Makes the copies of t at a_copy and b_copy (256-byte aligned device memory of t's sizes) on
   stream and rewrites v into its TN form reading them. */
enum gg_status vendor_tn_make(cublasLtHandle_t h, const struct vendor_tn *t, struct vendor_gemm *v,
                              void *a_copy, void *b_copy, cudaStream_t stream, char *err,
                              size_t err_len);
/* x rounded up to a multiple of 256 bytes: where the parts of an adapter's workspace start. */
static inline size_t vendor_align256(size_t x)
{
    return (x + 255) / 256 * 256;
}
/* CUDA data type of a gg dtype (bf16, f32, e4m3, e5m2); 0 with a reason otherwise. */
int vendor_cuda_type(enum gg_dtype t, cudaDataType_t *out);
/* The checks every adapter shares: the op bit, fp32 accumulation, no bias (cuBLAS's plain
   GEMMs have no bias epilogue), no mutants. */
int vendor_common_supports(const struct gg_problem *p, uint32_t ops, char *why, size_t why_len);

#endif /* GG_VENDOR_INT_H */

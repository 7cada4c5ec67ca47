/*
 * cublaslt_transpose.c — the TN form of a column-major GEMM for cuBLASLt's FP8 matmul
 * (vendor_int.h: struct vendor_tn): byte-exact transposed copies of the operands that are not
 * K-major, made with the library itself (cublasLtMatrixTransform), as cuBLASLt users that keep
 * transposed ("columnwise") FP8 copies do.
 *
 * FP8 codes are bytes, so they are transposed as CUDA_R_8I: C = alpha·op(A) + beta·op(B) with
 * alpha 1, beta 0 and no B. cublasLt.h (CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE) says the
 * inputs are converted to the scale type for scaling and summation and the results converted
 * back to the output type; NVIDIA's own int8 transform sample (CUDALibrarySamples,
 * cuBLASLt/LtIgemmTensor) transforms CUDA_R_8I matrices, with op T, under scale type CUDA_R_32F
 * and fp32 alpha 1, beta 0. Every int8 value is exact in fp32 and comes back unchanged, so the
 * copy is exact for all 256 codes. We found no statement in the cuBLAS documentation that the
 * transform takes CUDA_R_8F_E4M3 or CUDA_R_8F_E5M2 layouts; and an FP8-typed transform would go
 * through that decode and re-encode, which need not keep every code (NaN encodings), so the
 * copies are typed CUDA_R_8I.
 */
#include "kernels/vendor_libs/vendor_int.h"

void vendor_tn_plan(const struct vendor_gemm *v, struct vendor_tn *t)
{
    t->copy_a = v->ta == CUBLAS_OP_N;
    t->copy_b = v->tb == CUBLAS_OP_T;
    t->ld = (v->k + 15) / 16 * 16;
    t->k = t->copy_a && t->copy_b ? t->ld : v->k;
    t->a_bytes = t->copy_a ? vendor_align256((size_t)t->ld * (size_t)v->m) : 0;
    t->b_bytes = t->copy_b ? vendor_align256((size_t)t->ld * (size_t)v->n) : 0;
}

/* The descriptors of one transform. */
struct tr {
    cublasLtMatrixTransformDesc_t op;
    cublasLtMatrixLayout_t src, dst;
};

/* Enqueues dst = srcᵀ on stream: src is rows × cols (column-major, ld lds), dst cols × rows
   (ld ldd), both of bytes. */
static enum gg_status tr_issue(struct tr *t, cublasLtHandle_t h, const void *src, int64_t rows,
                               int64_t cols, int64_t lds, void *dst, int64_t ldd,
                               cudaStream_t stream, char *err, size_t err_len)
{
    const cublasOperation_t trans = CUBLAS_OP_T;
    const float alpha = 1.0f, beta = 0.0f;
    VENDOR_CUBLAS(cublasLtMatrixTransformDescCreate(&t->op, CUDA_R_32F));
    VENDOR_CUBLAS(cublasLtMatrixTransformDescSetAttribute(
        t->op, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &trans, sizeof trans));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&t->src, CUDA_R_8I, (uint64_t)rows, (uint64_t)cols,
                                             lds));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&t->dst, CUDA_R_8I, (uint64_t)cols, (uint64_t)rows,
                                             ldd));
    VENDOR_CUBLAS(cublasLtMatrixTransform(h, t->op, &alpha, src, t->src, &beta, NULL, NULL, dst,
                                          t->dst, stream));
    return GG_OK;
}

/* dst (cols × rows, ld ldd) = srcᵀ (src rows × cols, ld lds), the rows cols .. ldd-1 of dst
   zeroed first. The descriptors are host objects, free once the transform is enqueued. */
static enum gg_status transpose_bytes(cublasLtHandle_t h, const void *src, int64_t rows,
                                      int64_t cols, int64_t lds, void *dst, int64_t ldd,
                                      cudaStream_t stream, char *err, size_t err_len)
{
    if (ldd > cols)
        VENDOR_CUDA(cudaMemsetAsync(dst, 0, (size_t)ldd * (size_t)rows, stream));
    struct tr t = {0};
    enum gg_status st = tr_issue(&t, h, src, rows, cols, lds, dst, ldd, stream, err, err_len);
    if (t.dst)
        VENDOR_CUBLAS_KEEP(st, cublasLtMatrixLayoutDestroy(t.dst));
    if (t.src)
        VENDOR_CUBLAS_KEEP(st, cublasLtMatrixLayoutDestroy(t.src));
    if (t.op)
        VENDOR_CUBLAS_KEEP(st, cublasLtMatrixTransformDescDestroy(t.op));
    return st;
}

enum gg_status vendor_tn_make(cublasLtHandle_t h, const struct vendor_tn *t, struct vendor_gemm *v,
                              void *a_copy, void *b_copy, cudaStream_t stream, char *err,
                              size_t err_len)
{
    enum gg_status st;
    if (t->copy_a) { /* A: m × k (op N) becomes Aᵀ: k × m */
        st = transpose_bytes(h, v->a, v->m, v->k, v->lda, a_copy, t->ld, stream, err, err_len);
        if (st != GG_OK)
            return st;
        v->ta = CUBLAS_OP_T;
        v->a = a_copy;
        v->lda = t->ld;
    }
    if (t->copy_b) { /* B: n × k (op T) becomes Bᵀ: k × n */
        st = transpose_bytes(h, v->b, v->n, v->k, v->ldb, b_copy, t->ld, stream, err, err_len);
        if (st != GG_OK)
            return st;
        v->tb = CUBLAS_OP_N;
        v->b = b_copy;
        v->ldb = t->ld;
    }
    v->k = t->k;
    return GG_OK;
}

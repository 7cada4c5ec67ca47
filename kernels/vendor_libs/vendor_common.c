/*
 * vendor_common.c — what the cuBLAS adapters share: the process's library handles (created on
 * first use), library and runtime errors turned into statuses naming the call, file and line, the
 * per-group column-major GEMM of a row-major grouped or batched problem (see vendor_int.h), and
 * the zero output of an empty reduction.
 */
#include <stdio.h>

#include "kernels/vendor_libs/vendor_int.h"

/* Process state: one handle of each library for the process's device (see vendor_int.h). */
static cublasHandle_t cublas_handle;
static cublasLtHandle_t cublaslt_handle;

enum gg_status vendor_cublas_fail(cublasStatus_t s, const char *call, const char *file, int line,
                                  char *err, size_t err_len)
{
    snprintf(err, err_len, "cuBLAS error %s (%s) in %s at %s:%d", cublasGetStatusName(s),
             cublasGetStatusString(s), call, file, line);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
        return GG_E_UNSUPPORTED;
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        return GG_E_NOMEM;
    if (s == CUBLAS_STATUS_INVALID_VALUE)
        return GG_E_INVAL;
    return GG_E_DEVICE;
}

enum gg_status vendor_cuda_fail(cudaError_t e, const char *call, const char *file, int line,
                                char *err, size_t err_len)
{
    snprintf(err, err_len, "CUDA error %s (%s) in %s at %s:%d", cudaGetErrorName(e),
             cudaGetErrorString(e), call, file, line);
    return e == cudaErrorMemoryAllocation ? GG_E_NOMEM : GG_E_DEVICE;
}

/*
 * The handle's math mode keeps every reduction in the compute type (fp32), as the kernel ABI's
 * acc_dtype asks: by default cuBLAS may reduce split-K partials in the output type (bf16), and
 * a campaign of batched_bf16_cublas_strided on the H100 found that as elements past the fp32
 * accumulation bound (max ratio 1.13; m 2, n 4, K 3359, outlier data).
 */
enum gg_status vendor_cublas(cublasHandle_t *h, char *err, size_t err_len)
{
    if (!cublas_handle) {
        VENDOR_CUBLAS(cublasCreate(&cublas_handle));
        VENDOR_CUBLAS(cublasSetMathMode(cublas_handle, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    }
    *h = cublas_handle;
    return GG_OK;
}

enum gg_status vendor_cublaslt(cublasLtHandle_t *h, char *err, size_t err_len)
{
    if (!cublaslt_handle)
        VENDOR_CUBLAS(cublasLtCreate(&cublaslt_handle));
    *h = cublaslt_handle;
    return GG_OK;
}

static int64_t elem_bytes(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64: return 8;
    case GG_DTYPE_F32: return 4;
    case GG_DTYPE_F16:
    case GG_DTYPE_BF16: return 2;
    default: return 1;
    }
}

/* The address elems elements past base; NULL for a NULL base (shapes without operands). */
static const void *at(const void *base, enum gg_dtype t, int64_t elems)
{
    return base ? (const char *)base + elems * elem_bytes(t) : NULL;
}

void vendor_group_gemm(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                       struct vendor_gemm *v)
{
    int64_t row0 = p->group_offs ? p->group_offs[g] : 0;
    int64_t rows = p->group_offs ? p->group_offs[g + 1] - row0 : p->m;
    const void *a = at(o->a, p->a_dtype, row0 * p->lda);
    void *c = (void *)at(o->c, p->c_dtype, row0 * p->ldc);
    switch (p->op) {
    case GG_OP_GROUPED_FWD: /* Yᵀ (N × M_g) = W_g (stored K × N, transposed) · X_gᵀ (K × M_g) */
        *v = (struct vendor_gemm){CUBLAS_OP_T, CUBLAS_OP_N, p->n, rows, p->k, p->ldb, p->lda,
                                  p->ldc, at(o->b, p->b_dtype, g * p->stride_b), a, c};
        break;
    case GG_OP_GROUPED_DGRAD: /* dXᵀ (K × M_g) = W_gᵀ (stored K × N) · dY_gᵀ (N × M_g) */
        *v = (struct vendor_gemm){CUBLAS_OP_N, CUBLAS_OP_N, p->k, rows, p->n, p->ldb, p->lda,
                                  p->ldc, at(o->b, p->b_dtype, g * p->stride_b), a, c};
        break;
    case GG_OP_GROUPED_WGRAD: /* dW_gᵀ (K × N) = X_gᵀ (K × M_g) · dY_g (stored N × M_g, op T) */
        *v = (struct vendor_gemm){CUBLAS_OP_N, CUBLAS_OP_T, p->k, p->n, rows, p->ldb, p->lda,
                                  p->ldc, at(o->b, p->b_dtype, row0 * p->ldb), a,
                                  (void *)at(o->c, p->c_dtype, g * p->stride_c)};
        break;
    default: /* batched: Cᵀ (N × M) = op(B_b)ᵀ · A_bᵀ; NK stores B_bᵀ, KN stores it transposed */
        *v = (struct vendor_gemm){p->b_layout == GG_LAYOUT_KN ? CUBLAS_OP_N : CUBLAS_OP_T,
                                  CUBLAS_OP_N, p->n, p->m, p->k, p->ldb, p->lda, p->ldc,
                                  at(o->b, p->b_dtype, g * p->stride_b),
                                  at(o->a, p->a_dtype, g * p->stride_a),
                                  (void *)at(o->c, p->c_dtype, g * p->stride_c)};
        break;
    }
}

enum gg_status vendor_zero_block(const struct gg_problem *p, const struct vendor_gemm *v,
                                 cudaStream_t stream, char *err, size_t err_len)
{
    if (v->m == 0 || v->n == 0)
        return GG_OK;
    size_t e = (size_t)elem_bytes(p->c_dtype);
    VENDOR_CUDA(cudaMemset2DAsync(v->c, (size_t)v->ldc * e, 0, (size_t)v->m * e, (size_t)v->n,
                                  stream));
    return GG_OK;
}

int vendor_cuda_type(enum gg_dtype t, cudaDataType_t *out)
{
    switch (t) {
    case GG_DTYPE_BF16: *out = CUDA_R_16BF; return 1;
    case GG_DTYPE_F32: *out = CUDA_R_32F; return 1;
    case GG_DTYPE_E4M3: *out = CUDA_R_8F_E4M3; return 1;
    case GG_DTYPE_E5M2: *out = CUDA_R_8F_E5M2; return 1;
    default: return 0;
    }
}

int vendor_common_supports(const struct gg_problem *p, uint32_t ops, char *why, size_t why_len)
{
    if (!(ops & GG_OP_BIT(p->op))) {
        snprintf(why, why_len, "op not implemented by this adapter");
        return 0;
    }
    if (p->acc_dtype != GG_DTYPE_F32) {
        snprintf(why, why_len, "cuBLAS accumulates in fp32 here (CUBLAS_COMPUTE_32F)");
        return 0;
    }
    if (p->bias_dtype != GG_DTYPE_NONE) {
        snprintf(why, why_len, "no bias: the adapter calls cuBLAS without a bias epilogue");
        return 0;
    }
    if (p->mutant && p->mutant[0]) {
        snprintf(why, why_len, "a vendor library has no mutants");
        return 0;
    }
    return 1;
}

/*
 * cublas_grouped.c — grouped_bf16_cublas_grouped: grouped BF16 GEMM (fwd, dgrad, variable-K
 * wgrad) through one cublasGemmGroupedBatchedEx_64 call, bf16 inputs and output, fp32
 * accumulation (the library refuses an fp32 output for bf16 inputs here). Each group with work
 * is one cuBLAS group of size 1; its dimensions come from the host group offsets and its three
 * device pointers from a pointer table the adapter writes into the workspace (3 · groups
 * pointers, reported by workspace_bytes). Groups without outputs are left out (cuBLAS is not
 * asked for an m or n of 0); a group whose reduction is empty (a wgrad group without tokens, or
 * K = 0) gets its zeros from a memset instead.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/vendor_libs/vendor_int.h"

#define OPS (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) | \
             GG_OP_BIT(GG_OP_GROUPED_WGRAD))

static int supports(const struct gg_problem *p, char *why, size_t why_len)
{
    if (!vendor_common_supports(p, OPS, why, why_len))
        return 0;
    if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16 || p->c_dtype != GG_DTYPE_BF16) {
        /* bf16 in, fp32 out is refused by the library (CUBLAS_STATUS_NOT_SUPPORTED, CUDA 13). */
        snprintf(why, why_len, "bf16 inputs and a bf16 output only (cuBLAS grouped GEMM)");
        return 0;
    }
    if (p->scaling != GG_SCALING_NONE) {
        snprintf(why, why_len, "unscaled inputs only");
        return 0;
    }
    return 1;
}

static size_t workspace_bytes(const struct gg_problem *p)
{
    return (size_t)(p->groups > 0 ? p->groups : 0) * 3 * sizeof(void *);
}

/* Host arrays of one cublasGemmGroupedBatchedEx call, one entry per group with work. */
struct call {
    cublasOperation_t *ta, *tb;
    int64_t *m, *n, *k, *lda, *ldb, *ldc, *size;
    float *alpha, *beta;
    const void **ptrs; /* A[count], B[count], C[count] */
    int64_t count;
};

static void call_free(struct call *c)
{
    void *all[] = {c->ta, c->tb, c->m, c->n, c->k, c->lda, c->ldb, c->ldc, c->size, c->alpha,
                   c->beta, (void *)c->ptrs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static int call_alloc(struct call *c, int64_t groups)
{
    size_t n = (size_t)(groups > 0 ? groups : 1);
    c->ta = malloc(n * sizeof *c->ta);
    c->tb = malloc(n * sizeof *c->tb);
    int64_t **ints[] = {&c->m, &c->n, &c->k, &c->lda, &c->ldb, &c->ldc, &c->size};
    int ok = c->ta && c->tb;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        ok &= (*ints[i] = malloc(n * sizeof(int64_t))) != NULL;
    c->alpha = malloc(n * sizeof *c->alpha);
    c->beta = malloc(n * sizeof *c->beta);
    c->ptrs = malloc(3 * n * sizeof *c->ptrs);
    return ok && c->alpha && c->beta && c->ptrs;
}

/* Fills the call with every group that has outputs and a reduction; zeroes the outputs of
   groups with an empty reduction. */
static enum gg_status collect(const struct gg_problem *p, const struct gg_operands *o,
                              struct call *c, char *err, size_t err_len)
{
    int64_t groups = p->groups;
    const void **A = c->ptrs, **B = c->ptrs + groups, **C = c->ptrs + 2 * groups;
    for (int64_t g = 0; g < groups; g++) {
        struct vendor_gemm v;
        vendor_group_gemm(p, o, g, &v);
        if (v.m == 0 || v.n == 0)
            continue;
        if (v.k == 0) {
            enum gg_status st = vendor_zero_block(p, &v, (cudaStream_t)o->stream, err, err_len);
            if (st != GG_OK)
                return st;
            continue;
        }
        int64_t i = c->count++;
        c->ta[i] = v.ta;
        c->tb[i] = v.tb;
        c->m[i] = v.m;
        c->n[i] = v.n;
        c->k[i] = v.k;
        c->lda[i] = v.lda;
        c->ldb[i] = v.ldb;
        c->ldc[i] = v.ldc;
        c->size[i] = 1;
        c->alpha[i] = 1.0f;
        c->beta[i] = 0.0f;
        A[i] = v.a;
        B[i] = v.b;
        C[i] = v.c;
    }
    /* Pack the three tables next to each other: A[0..count), B[...], C[...]. */
    for (int64_t i = 0; i < c->count; i++)
        c->ptrs[c->count + i] = B[i];
    for (int64_t i = 0; i < c->count; i++)
        c->ptrs[2 * c->count + i] = C[i];
    return GG_OK;
}

static enum gg_status run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                          size_t err_len)
{
    cublasHandle_t h;
    enum gg_status st = vendor_cublas(&h, err, err_len);
    if (st != GG_OK)
        return st;
    struct call c = {0};
    if (!call_alloc(&c, p->groups)) {
        call_free(&c);
        snprintf(err, err_len, "out of memory for %lld groups", (long long)p->groups);
        return GG_E_NOMEM;
    }
    cudaStream_t stream = (cudaStream_t)o->stream;
    st = collect(p, o, &c, err, err_len);
    if (st == GG_OK && c.count > 0) {
        /* The pointer tables go to the workspace; the copy from pageable memory is staged
           before it returns, so the host tables may be freed afterwards. */
        const void **dev = (const void **)o->workspace;
        cudaError_t e = cudaMemcpyAsync(dev, c.ptrs, 3 * (size_t)c.count * sizeof(void *),
                                        cudaMemcpyHostToDevice, stream);
        cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
        if (e != cudaSuccess)
            st = vendor_cuda_fail(e, "cudaMemcpyAsync", __FILE__, __LINE__, err, err_len);
        else if ((s = cublasSetStream(h, stream)) != CUBLAS_STATUS_SUCCESS)
            st = vendor_cublas_fail(s, "cublasSetStream", __FILE__, __LINE__, err, err_len);
        else if ((s = cublasGemmGroupedBatchedEx_64(
                      h, c.ta, c.tb, c.m, c.n, c.k, c.alpha, (const void *const *)dev,
                      CUDA_R_16BF, c.lda, (const void *const *)(dev + c.count), CUDA_R_16BF,
                      c.ldb, c.beta, (void *const *)(dev + 2 * c.count), CUDA_R_16BF, c.ldc,
                      c.count, c.size, CUBLAS_COMPUTE_32F)) != CUBLAS_STATUS_SUCCESS)
            st = vendor_cublas_fail(s, "cublasGemmGroupedBatchedEx_64", __FILE__, __LINE__, err,
                                    err_len);
    }
    call_free(&c);
    return st;
}

const struct gg_kernel gg_kernel_grouped_bf16_cublas_grouped = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_bf16_cublas_grouped",
    .summary = "cuBLAS cublasGemmGroupedBatchedEx: grouped bf16 fwd/dgrad/wgrad, fp32 accumulation",
    .backend = GG_BACKEND_CUDA,
    .ops = OPS,
    .supports = supports,
    .workspace_bytes = workspace_bytes,
    .run = run,
};

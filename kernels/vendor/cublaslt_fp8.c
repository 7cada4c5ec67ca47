/*
 * cublaslt_fp8.c — grouped_fp8_cublaslt_tensor: grouped FP8 forward GEMM with tensor-wise
 * scaling, one cublasLtMatmul per group with tokens. Y_g = (a_scale · b_scale[g]) · X_g · W_gᵀ:
 * under the column-major identity (vendor_int.h) cuBLASLt's A is W_g (transposed) with scale
 * b_scale[g] and its B is X_g with scale a_scale, both device pointers the library reads.
 *
 * What cuBLASLt's FP8 path takes on sm_90, and supports() states: only the "TN" form (A
 * transposed, B not), which the forward pass is and dgrad/wgrad are not; OCP e4m3/e5m2 inputs
 * but not e5m2 × e5m2 and not the fnuz encodings; bf16 or fp32 output with fp32 accumulation
 * (no fast accumulation); 16-byte alignment of every leading dimension and of each expert's
 * weights, and N and K multiples of 16. A misaligned operand pointer is refused at run time.
 */
#include <stdint.h>
#include <stdio.h>

#include "kernels/vendor/vendor_int.h"

#define OPS GG_OP_BIT(GG_OP_GROUPED_FWD)
/* Workspace offered to cuBLASLt's heuristics (split-K and stream-K algorithms use it). */
#define LT_WORKSPACE ((size_t)32 << 20)
/* cuBLASLt rejects scale pointers that are not 16-byte aligned (CUBLAS_STATUS_NOT_SUPPORTED at
   cublasLtMatmul), so each expert's scale, and the activation scale after them, is copied to a
   16-byte slot at the start of the workspace; cuBLASLt's own workspace follows. */
#define SLOT 16
#define SLOTS_BYTES(groups) (((size_t)(groups) + 1) * SLOT + 255) / 256 * 256

static int supports(const struct gg_problem *p, char *why, size_t why_len)
{
    if (!vendor_common_supports(p, OPS, why, why_len))
        return 0;
    int fp8a = p->a_dtype == GG_DTYPE_E4M3 || p->a_dtype == GG_DTYPE_E5M2;
    int fp8b = p->b_dtype == GG_DTYPE_E4M3 || p->b_dtype == GG_DTYPE_E5M2;
    if (!fp8a || !fp8b || (p->a_dtype == GG_DTYPE_E5M2 && p->b_dtype == GG_DTYPE_E5M2)) {
        snprintf(why, why_len, "OCP e4m3/e5m2 inputs only, not e5m2 x e5m2 (cuBLASLt FP8)");
        return 0;
    }
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32) {
        snprintf(why, why_len, "bf16 or fp32 output only");
        return 0;
    }
    if (p->scaling != GG_SCALING_TENSOR) {
        snprintf(why, why_len, "tensor-wise scaling only");
        return 0;
    }
    int64_t csz = p->c_dtype == GG_DTYPE_F32 ? 4 : 2;
    if (p->n % 16 || p->k % 16 || p->lda % 16 || p->ldb % 16 || p->stride_b % 16 ||
        (p->ldc * csz) % 16) {
        snprintf(why, why_len, "cuBLASLt FP8 needs N, K, the leading dimensions and the expert "
                               "stride 16-byte aligned");
        return 0;
    }
    return 1;
}

static size_t workspace_bytes(const struct gg_problem *p)
{
    return SLOTS_BYTES(p->groups) + LT_WORKSPACE;
}

static int misaligned(const void *ptr)
{
    return ((uintptr_t)ptr) % 16 != 0;
}

/* The descriptors of one run: the operation, and the layouts of the current group. */
struct lt {
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulPreference_t pref;
};

static void lt_free(struct lt *l)
{
    if (l->a)
        cublasLtMatrixLayoutDestroy(l->a);
    if (l->b)
        cublasLtMatrixLayoutDestroy(l->b);
    if (l->c)
        cublasLtMatrixLayoutDestroy(l->c);
    if (l->op)
        cublasLtMatmulDescDestroy(l->op);
    if (l->pref)
        cublasLtMatmulPreferenceDestroy(l->pref);
}

static enum gg_status lt_init(struct lt *l, size_t ws, char *err, size_t err_len)
{
    enum gg_status st = vendor_cublaslt(&l->h, err, err_len);
    if (st != GG_OK)
        return st;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    VENDOR_CUBLAS(cublasLtMatmulDescCreate(&l->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                 sizeof ta));
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                 sizeof tb));
    VENDOR_CUBLAS(cublasLtMatmulPreferenceCreate(&l->pref));
    VENDOR_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        l->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    return GG_OK;
}

/* Layouts of group g (v from vendor_group_gemm), replacing the previous group's. */
static enum gg_status lt_layouts(struct lt *l, const struct gg_problem *p,
                                 const struct vendor_gemm *v, char *err, size_t err_len)
{
    cudaDataType_t ta, tb, tc;
    vendor_cuda_type(p->b_dtype, &ta); /* cuBLASLt's A is W_g */
    vendor_cuda_type(p->a_dtype, &tb);
    vendor_cuda_type(p->c_dtype, &tc);
    cublasLtMatrixLayout_t *all[] = {&l->a, &l->b, &l->c};
    for (int i = 0; i < 3; i++)
        if (*all[i]) {
            cublasLtMatrixLayoutDestroy(*all[i]);
            *all[i] = NULL;
        }
    /* Stored shapes: A is k × m (transposed), B is k × n, C and D are m × n. */
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->a, ta, (uint64_t)v->k, (uint64_t)v->m, v->lda));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->b, tb, (uint64_t)v->k, (uint64_t)v->n, v->ldb));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->c, tc, (uint64_t)v->m, (uint64_t)v->n, v->ldc));
    return GG_OK;
}

/* Copies b_scale[g] to slot g and a_scale to slot groups of the workspace. */
static enum gg_status copy_scales(const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    cudaStream_t stream = (cudaStream_t)o->stream;
    char *slots = o->workspace;
    VENDOR_CUDA(cudaMemcpy2DAsync(slots, SLOT, o->b_scale, sizeof(float), sizeof(float),
                                  (size_t)p->groups, cudaMemcpyDeviceToDevice, stream));
    VENDOR_CUDA(cudaMemcpyAsync(slots + (size_t)p->groups * SLOT, o->a_scale, sizeof(float),
                                cudaMemcpyDeviceToDevice, stream));
    return GG_OK;
}

static enum gg_status run_group(struct lt *l, const struct gg_problem *p,
                                const struct gg_operands *o, int64_t g, char *err,
                                size_t err_len)
{
    struct vendor_gemm v;
    vendor_group_gemm(p, o, g, &v);
    cudaStream_t stream = (cudaStream_t)o->stream;
    if (v.m == 0 || v.n == 0)
        return GG_OK;
    if (v.k == 0)
        return vendor_zero_block(p, &v, stream, err, err_len);
    if (misaligned(v.a) || misaligned(v.b) || misaligned(v.c)) {
        snprintf(err, err_len, "group %lld: an operand is not 16-byte aligned (cuBLASLt FP8)",
                 (long long)g);
        return GG_E_UNSUPPORTED;
    }
    const char *slots = o->workspace;
    const float *sa = (const float *)(slots + g * SLOT);
    const float *sb = (const float *)(slots + p->groups * SLOT);
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
                                                 sizeof sa));
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb,
                                                 sizeof sb));
    enum gg_status st = lt_layouts(l, p, &v, err, err_len);
    if (st != GG_OK)
        return st;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    VENDOR_CUBLAS(cublasLtMatmulAlgoGetHeuristic(l->h, l->op, l->a, l->b, l->c, l->c, l->pref, 1,
                                                 &res, &found));
    if (found < 1) {
        snprintf(err, err_len, "group %lld: cuBLASLt has no FP8 algorithm for m=%lld n=%lld "
                 "k=%lld", (long long)g, (long long)v.m, (long long)v.n, (long long)v.k);
        return GG_E_UNSUPPORTED;
    }
    const float alpha = 1.0f, beta = 0.0f;
    size_t skip = SLOTS_BYTES(p->groups);
    VENDOR_CUBLAS(cublasLtMatmul(l->h, l->op, &alpha, v.a, l->a, v.b, l->b, &beta, v.c, l->c,
                                 v.c, l->c, &res.algo, (char *)o->workspace + skip,
                                 o->workspace_bytes - skip, stream));
    return GG_OK;
}

static enum gg_status run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                          size_t err_len)
{
    struct lt l = {0};
    if (p->groups == 0)
        return GG_OK;
    enum gg_status st = lt_init(&l, LT_WORKSPACE, err, err_len);
    if (st == GG_OK)
        st = copy_scales(p, o, err, err_len);
    for (int64_t g = 0; st == GG_OK && g < p->groups; g++)
        st = run_group(&l, p, o, g, err, err_len);
    lt_free(&l);
    return st;
}

const struct gg_kernel gg_kernel_grouped_fp8_cublaslt_tensor = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_fp8_cublaslt_tensor",
    .summary = "cuBLASLt FP8 (e4m3/e5m2) tensor-scaled grouped fwd, one matmul per group",
    .backend = GG_BACKEND_CUDA,
    .ops = OPS,
    .supports = supports,
    .workspace_bytes = workspace_bytes,
    .run = run,
};

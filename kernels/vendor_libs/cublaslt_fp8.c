/*
 * cublaslt_fp8.c — grouped_fp8_cublaslt_tensor: grouped FP8 GEMM with tensor-wise scaling (fwd,
 * dgrad and variable-K wgrad), one cublasLtMatmul per group with work, in the "TN" form that
 * cuBLASLt's FP8 matmul takes on sm_90 (A transposed, B not: both operands K-major). Under the
 * column-major identity (vendor_int.h) cuBLASLt's A is always the ABI's B operand, with type
 * b_dtype and scale b_scale, and its B the ABI's A operand, with a_scale; both scales are device
 * pointers the library reads.
 *
 *   fwd    Y_g  = (a_scale·b_scale[g]) · X_g · W_gᵀ:  A = W_g, B = X_g, already K-major.
 *   dgrad  dX_g = (a_scale·b_scale[g]) · dY_g · W_g:  dX_gᵀ (K × M_g) = W_gᵀ · dY_gᵀ; A is a K × N
 *          row-major copy of W_gᵀ (reduction N contiguous), made only for experts with tokens;
 *          B = dY_g as it is.
 *   wgrad  dW_g = (a_scale·b_scale[0]) · dY_gᵀ · X_g (the scales are not per group):
 *          dW_gᵀ (K × N) = X_gᵀ · dY_g over the group's tokens; A and B are copies X_gᵀ (K × Mp)
 *          and dY_gᵀ (N × Mp) with the tokens contiguous, Mp = M_g rounded up to 16 and the
 *          padding zero, and the matmul runs over Mp. An expert without tokens gets dW_g = 0.
 *
 * The copies (cublaslt_transpose.c) are byte-exact transposes made by cublasLtMatrixTransform,
 * in the workspace. Workspace, from its first 256-byte boundary: the scale slots, cuBLASLt's own
 * workspace, then each group's copies in group order, every part 256-byte aligned.
 *
 * What cuBLASLt's FP8 path takes, and supports() states: OCP e4m3/e5m2 inputs but not e5m2 ×
 * e5m2 and not the fnuz encodings; bf16 or fp32 output with fp32 accumulation (no fast
 * accumulation); N and K multiples of 16 and 16-byte alignment of every leading dimension and
 * of each expert's matrix. A misaligned operand pointer is refused at run time.
 */
#include <stdint.h>
#include <stdio.h>

#include "kernels/vendor_libs/vendor_int.h"

#define OPS (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) | \
             GG_OP_BIT(GG_OP_GROUPED_WGRAD))
/* Workspace offered to cuBLASLt's heuristics (split-K and stream-K algorithms use it). */
#define LT_WORKSPACE ((size_t)32 << 20)
/* cuBLASLt rejects scale pointers that are not 16-byte aligned (CUBLAS_STATUS_NOT_SUPPORTED at
   cublasLtMatmul), so each scale of B, and the scale of A after them, is copied to a 16-byte
   slot at the start of the workspace. */
#define SLOT 16

/* Number of B's matrices, hence of its scales: one per expert, or one for wgrad's X. */
static int64_t b_mats(const struct gg_problem *p)
{
    return p->op == GG_OP_GROUPED_WGRAD ? 1 : p->groups;
}

static size_t slots_bytes(const struct gg_problem *p)
{
    return vendor_align256(((size_t)b_mats(p) + 1) * SLOT);
}

/*
 * Refuses what cuBLASLt's FP8 matmul cannot do: fwd, dgrad and wgrad all end as TN matmuls
 * over these operands, so the same checks hold for the three ops; the operands that dgrad and
 * wgrad copy are kept aligned too, and wgrad's dW_g start at multiples of stride_c.
 */
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
    int64_t sc = p->op == GG_OP_GROUPED_WGRAD ? p->stride_c : 0;
    if (p->n % 16 || p->k % 16 || p->lda % 16 || p->ldb % 16 || p->stride_b % 16 ||
        (p->ldc * csz) % 16 || (sc * csz) % 16) {
        snprintf(why, why_len, "cuBLASLt FP8 needs N, K, the leading dimensions and the expert "
                               "strides 16-byte aligned");
        return 0;
    }
    return 1;
}

/* Group g's GEMM (addresses from o) and the copies of its TN form; 0 when the group runs no
   matmul: it has no outputs, or its reduction is empty and its outputs are zeros. */
static int group_plan(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                      struct vendor_gemm *v, struct vendor_tn *t)
{
    vendor_group_gemm(p, o, g, v);
    vendor_tn_plan(v, t);
    return v->m > 0 && v->n > 0 && v->k > 0;
}

/* Bytes of every group's copies: exactly what run() places, from the problem's group sizes. */
static size_t copies_bytes(const struct gg_problem *p)
{
    const struct gg_operands none = {0};
    size_t sum = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct vendor_gemm v;
        struct vendor_tn t;
        if (group_plan(p, &none, g, &v, &t))
            sum += t.a_bytes + t.b_bytes;
    }
    return sum;
}

/* + 256: the parts start at the first 256-byte boundary of the workspace. */
static size_t workspace_bytes(const struct gg_problem *p)
{
    return 256 + slots_bytes(p) + LT_WORKSPACE + copies_bytes(p);
}

static int misaligned(const void *ptr)
{
    return ((uintptr_t)ptr) % 16 != 0;
}

/* The descriptors of one run (the operation, and the layouts of the current group) and where
   its workspace parts are: the scale slots, cuBLASLt's workspace and the next free copy byte. */
struct lt {
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulPreference_t pref;
    char *slots, *ws, *copies;
};

/* Destroys the layouts of the previous group. */
static enum gg_status lt_free_layouts(struct lt *l, enum gg_status st, char *err, size_t err_len)
{
    cublasLtMatrixLayout_t *all[] = {&l->a, &l->b, &l->c};
    for (int i = 0; i < 3; i++)
        if (*all[i]) {
            VENDOR_CUBLAS_KEEP(st, cublasLtMatrixLayoutDestroy(*all[i]));
            *all[i] = NULL;
        }
    return st;
}

/* Destroys everything l holds; returns st, or the first failure of a destroy after none. */
static enum gg_status lt_free(struct lt *l, enum gg_status st, char *err, size_t err_len)
{
    st = lt_free_layouts(l, st, err, err_len);
    if (l->op)
        VENDOR_CUBLAS_KEEP(st, cublasLtMatmulDescDestroy(l->op));
    if (l->pref)
        VENDOR_CUBLAS_KEEP(st, cublasLtMatmulPreferenceDestroy(l->pref));
    return st;
}

static enum gg_status lt_init(struct lt *l, char *err, size_t err_len)
{
    enum gg_status st = vendor_cublaslt(&l->h, err, err_len);
    if (st != GG_OK)
        return st;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const size_t ws = LT_WORKSPACE;
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

/* Layouts of a group's TN matmul v, replacing the previous group's. */
static enum gg_status lt_layouts(struct lt *l, const struct gg_problem *p,
                                 const struct vendor_gemm *v, char *err, size_t err_len)
{
    cudaDataType_t ta, tb, tc;
    vendor_cuda_type(p->b_dtype, &ta); /* cuBLASLt's A is the ABI's B (W_g, or X_g in wgrad) */
    vendor_cuda_type(p->a_dtype, &tb);
    vendor_cuda_type(p->c_dtype, &tc);
    enum gg_status st = lt_free_layouts(l, GG_OK, err, err_len);
    if (st != GG_OK)
        return st;
    /* Stored shapes: A is k × m (transposed), B is k × n, C and D are m × n. */
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->a, ta, (uint64_t)v->k, (uint64_t)v->m, v->lda));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->b, tb, (uint64_t)v->k, (uint64_t)v->n, v->ldb));
    VENDOR_CUBLAS(cublasLtMatrixLayoutCreate(&l->c, tc, (uint64_t)v->m, (uint64_t)v->n, v->ldc));
    return GG_OK;
}

/* Copies B's scales to slots 0 .. b_mats-1 and a_scale to slot b_mats. */
static enum gg_status copy_scales(const struct lt *l, const struct gg_problem *p,
                                  const struct gg_operands *o, char *err, size_t err_len)
{
    cudaStream_t stream = (cudaStream_t)o->stream;
    VENDOR_CUDA(cudaMemcpy2DAsync(l->slots, SLOT, o->b_scale, sizeof(float), sizeof(float),
                                  (size_t)b_mats(p), cudaMemcpyDeviceToDevice, stream));
    VENDOR_CUDA(cudaMemcpyAsync(l->slots + (size_t)b_mats(p) * SLOT, o->a_scale, sizeof(float),
                                cudaMemcpyDeviceToDevice, stream));
    return GG_OK;
}

static enum gg_status run_group(struct lt *l, const struct gg_problem *p,
                                const struct gg_operands *o, int64_t g, char *err,
                                size_t err_len)
{
    struct vendor_gemm v;
    struct vendor_tn t;
    cudaStream_t stream = (cudaStream_t)o->stream;
    if (!group_plan(p, o, g, &v, &t)) /* zeros for an empty reduction, nothing without outputs */
        return vendor_zero_block(p, &v, stream, err, err_len);
    if (misaligned(v.a) || misaligned(v.b) || misaligned(v.c)) {
        snprintf(err, err_len, "group %lld: an operand is not 16-byte aligned (cuBLASLt FP8)",
                 (long long)g);
        return GG_E_UNSUPPORTED;
    }
    char *a_copy = l->copies, *b_copy = a_copy + t.a_bytes;
    l->copies = b_copy + t.b_bytes;
    enum gg_status st = vendor_tn_make(l->h, &t, &v, a_copy, b_copy, stream, err, err_len);
    if (st != GG_OK)
        return st;
    const float *sa = (const float *)(l->slots + (p->op == GG_OP_GROUPED_WGRAD ? 0 : g) * SLOT);
    const float *sb = (const float *)(l->slots + b_mats(p) * SLOT);
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
                                                 sizeof sa));
    VENDOR_CUBLAS(cublasLtMatmulDescSetAttribute(l->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb,
                                                 sizeof sb));
    if ((st = lt_layouts(l, p, &v, err, err_len)) != GG_OK)
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
    VENDOR_CUBLAS(cublasLtMatmul(l->h, l->op, &alpha, v.a, l->a, v.b, l->b, &beta, v.c, l->c,
                                 v.c, l->c, &res.algo, l->ws, LT_WORKSPACE, stream));
    return GG_OK;
}

static enum gg_status run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                          size_t err_len)
{
    if (p->groups == 0)
        return GG_OK;
    size_t need = workspace_bytes(p);
    if (o->workspace == NULL || o->workspace_bytes < need) {
        snprintf(err, err_len, "workspace of %zu bytes, %zu needed", o->workspace_bytes, need);
        return GG_E_INVAL;
    }
    struct lt l = {0};
    l.slots = (char *)o->workspace + (256 - (uintptr_t)o->workspace % 256) % 256;
    l.ws = l.slots + slots_bytes(p);
    l.copies = l.ws + LT_WORKSPACE;
    enum gg_status st = lt_init(&l, err, err_len);
    if (st == GG_OK)
        st = copy_scales(&l, p, o, err, err_len);
    for (int64_t g = 0; st == GG_OK && g < p->groups; g++)
        st = run_group(&l, p, o, g, err, err_len);
    return lt_free(&l, st, err, err_len);
}

const struct gg_kernel gg_kernel_grouped_fp8_cublaslt_tensor = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_fp8_cublaslt_tensor",
    .summary = "cuBLASLt FP8 (e4m3/e5m2) tensor-scaled grouped fwd/dgrad/wgrad, one TN matmul "
               "per group (dgrad/wgrad on transposed copies)",
    .backend = GG_BACKEND_CUDA,
    .ops = OPS,
    .supports = supports,
    .workspace_bytes = workspace_bytes,
    .run = run,
};

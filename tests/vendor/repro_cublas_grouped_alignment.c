/*
 * repro_cublas_grouped_alignment.c — a standalone reproduction of a ggfuzz finding on
 * cublasGemmGroupedBatchedEx_64, small enough to file upstream (CUDA builds only; not a test).
 *
 * A grouped MoE wgrad, dW_g (N x K) = dY_gᵀ X_g, with the groups' pointers carved out of one X and
 * one dY buffer at their first token row, as every grouped GEMM over routed tokens does. With
 * K = 1 and group 1 starting at token row0 = 1, group 1's X pointer lies 2 bytes past a 16-byte
 * boundary (aligned for bf16). The grouped call then returns the product of the wrong rows (as if
 * the pointer were rounded down to 16 bytes); cublasGemmEx on the same pointers is right.
 *
 *   repro_cublas_grouped_alignment [ROW0]   (default 1; 8 puts the pointer on 16 bytes)
 *
 * Exit status: 0 when both calls match the host reference, 1 when the grouped call does not,
 * 2 on a CUDA or cuBLAS error.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 24, K = 1, LEN1 = 8 };

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16); /* exact for the small integers used here */
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#define CHECK(call)                                                                               \
    do {                                                                                          \
        int e_ = (int)(call);                                                                     \
        if (e_ != 0) {                                                                            \
            fprintf(stderr, "%s failed (%d) at line %d\n", #call, e_, __LINE__);                 \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

/* Outputs of group g (stored at c) that differ from the host reference. */
static int wrong(const uint16_t *c, const uint16_t *x, const uint16_t *dy, int64_t row0,
                 int64_t len, const char *what, int g)
{
    int bad = 0;
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < K; i++) {
            double ref = 0.0;
            for (int64_t l = 0; l < len; l++)
                ref += (double)from_bf16(x[(row0 + l) * K + i]) * from_bf16(dy[(row0 + l) * N + j]);
            float got = from_bf16(c[j * K + i]);
            if (!(fabs(got - ref) <= 1e-2 * (fabs(ref) + 1.0)) && bad++ < 3)
                printf("  %s, group %d, dW[%lld][%lld] = %g, expected %g\n", what, g,
                       (long long)j, (long long)i, got, ref);
        }
    return bad;
}

int main(int argc, char **argv)
{
    int64_t row0[2] = {0, argc > 1 ? atoll(argv[1]) : 1};
    int64_t len[2] = {row0[1], LEN1}, m_total = row0[1] + LEN1;
    if (row0[1] < 1) {
        fprintf(stderr, "usage: %s [ROW0 >= 1]\n", argv[0]);
        return 2;
    }
    uint16_t *x = malloc((size_t)(m_total * K) * 2), *dy = malloc((size_t)(m_total * N) * 2);
    uint16_t *c1 = malloc(2 * N * K * 2), *c2 = malloc(2 * N * K * 2);
    if (!x || !dy || !c1 || !c2)
        return 2;
    for (int64_t i = 0; i < m_total * K; i++)
        x[i] = to_bf16((float)(i % 3) - 1.0f);
    for (int64_t i = 0; i < m_total * N; i++)
        dy[i] = to_bf16(1.0f);
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    void *d_x, *d_dy, *d_c1, *d_c2, **d_ptrs;
    CHECK(cudaMalloc(&d_x, (size_t)(m_total * K) * 2));
    CHECK(cudaMalloc(&d_dy, (size_t)(m_total * N) * 2));
    CHECK(cudaMalloc(&d_c1, 2 * N * K * 2));
    CHECK(cudaMalloc(&d_c2, 2 * N * K * 2));
    CHECK(cudaMemcpy(d_x, x, (size_t)(m_total * K) * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_dy, dy, (size_t)(m_total * N) * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_c1, 0xFF, 2 * N * K * 2));
    CHECK(cudaMemset(d_c2, 0xFF, 2 * N * K * 2));
    /* Column-major: C (K x N, ldc K) = X_gᵀ (op N: K x len, lda K) · dY_g (op T: ld N). */
    cublasOperation_t ta[2] = {CUBLAS_OP_N, CUBLAS_OP_N}, tb[2] = {CUBLAS_OP_T, CUBLAS_OP_T};
    int64_t m[2] = {K, K}, n[2] = {N, N}, lda[2] = {K, K}, ldb[2] = {N, N}, ldc[2] = {K, K};
    int64_t size[2] = {1, 1};
    float alpha[2] = {1.0f, 1.0f}, beta[2] = {0.0f, 0.0f};
    void *ptrs[6];
    for (int g = 0; g < 2; g++) {
        ptrs[g] = (uint16_t *)d_x + row0[g] * K;
        ptrs[2 + g] = (uint16_t *)d_dy + row0[g] * N;
        ptrs[4 + g] = (uint16_t *)d_c1 + g * N * K;
        printf("group %d: %lld tokens, X pointer %% 16 = %d, dY pointer %% 16 = %d\n", g,
               (long long)len[g], (int)((uintptr_t)ptrs[g] % 16),
               (int)((uintptr_t)ptrs[2 + g] % 16));
    }
    CHECK(cudaMalloc((void **)&d_ptrs, sizeof ptrs));
    CHECK(cudaMemcpy(d_ptrs, ptrs, sizeof ptrs, cudaMemcpyHostToDevice));
    CHECK(cublasGemmGroupedBatchedEx_64(h, ta, tb, m, n, len, alpha, (const void *const *)d_ptrs,
                                        CUDA_R_16BF, lda, (const void *const *)(d_ptrs + 2),
                                        CUDA_R_16BF, ldb, beta, (void *const *)(d_ptrs + 4),
                                        CUDA_R_16BF, ldc, 2, size, CUBLAS_COMPUTE_32F));
    for (int g = 0; g < 2; g++)
        CHECK(cublasGemmEx(h, ta[g], tb[g], (int)m[g], (int)n[g], (int)len[g], &alpha[g],
                           ptrs[g], CUDA_R_16BF, (int)lda[g], ptrs[2 + g], CUDA_R_16BF,
                           (int)ldb[g], &beta[g], (uint16_t *)d_c2 + g * N * K, CUDA_R_16BF,
                           (int)ldc[g], CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c1, d_c1, 2 * N * K * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(c2, d_c2, 2 * N * K * 2, cudaMemcpyDeviceToHost));
    int bad_grouped = 0, bad_single = 0;
    for (int g = 0; g < 2; g++) {
        int b1 = wrong(c1 + g * N * K, x, dy, row0[g], len[g], "grouped", g);
        int b2 = wrong(c2 + g * N * K, x, dy, row0[g], len[g], "cublasGemmEx", g);
        printf("group %d: cublasGemmGroupedBatchedEx_64 %d of %d wrong, cublasGemmEx %d wrong\n",
               g, b1, N * K, b2);
        bad_grouped += b1;
        bad_single += b2;
    }
    cublasDestroy(h);
    return bad_grouped > 0 || bad_single > 0;
}

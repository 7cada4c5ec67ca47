/*
 * cuda_device_fault.cu — a test plugin for campaigns spread over GPUs: grouped_bf16_cuda_plugin_naive,
 * a plain correct grouped forward GEMM on a CUDA device (bf16 inputs, one fp32 accumulator per
 * output summed in order, bf16 or fp32 output), and its mutant illegal_address_on_gpu1, which in a
 * process bound to GPU 1 (GGFUZZ_DEVICE=1, set by `--gpus`) stores through a wild address: a
 * device fault on one GPU only, while the same kernel is correct on the others. Built like an
 * outside team's plugin: gg_kernel.h, the C library and the CUDA runtime only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "gg_kernel.h"
#include "plugin_fwd_bf16.h"

#define KERNEL_NAME "grouped_bf16_cuda_plugin_naive"

/* One thread per output element (row r of the packed rows, column j); the group of row r by a
   binary search of the device group offsets. */
__global__ void naive_fwd(const __nv_bfloat16 *a, const __nv_bfloat16 *b, void *c, int c_f32,
                          const int64_t *offs, int64_t groups, int64_t m, int64_t n, int64_t k,
                          int64_t lda, int64_t ldb, int64_t stride_b, int64_t ldc)
{
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t r = blockIdx.y; j < n && r < m; r += gridDim.y) {
        int64_t lo = 0, hi = groups; /* the last g with offs[g] <= r */
        while (hi - lo > 1) {
            int64_t mid = (lo + hi) / 2;
            if (offs[mid] <= r)
                lo = mid;
            else
                hi = mid;
        }
        const __nv_bfloat16 *x = a + r * lda, *w = b + lo * stride_b + j * ldb;
        float acc = 0.0f;
        for (int64_t t = 0; t < k; t++)
            acc = __fadd_rn(acc, __fmul_rn(__bfloat162float(x[t]), __bfloat162float(w[t])));
        if (c_f32)
            ((float *)c)[r * ldc + j] = acc;
        else
            ((__nv_bfloat16 *)c)[r * ldc + j] = __float2bfloat16_rn(acc);
    }
}

__global__ void wild_store(void)
{
    *(volatile int *)(uintptr_t)0x10 = 1;
}

static int naive_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    const char *no = fwd_bf16_refusal(p);
    if (no != NULL) {
        snprintf(why, why_len, KERNEL_NAME ": %s", no);
        return 0;
    }
    return 1;
}

static int on_gpu1(void)
{
    const char *d = getenv("GGFUZZ_DEVICE");
    return d != NULL && strcmp(d, "1") == 0;
}

static enum gg_status naive_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                                size_t err_len)
{
    if (!naive_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    cudaStream_t stream = (cudaStream_t)o->stream;
    if (gg_mutant_is(p, "illegal_address_on_gpu1") && on_gpu1()) {
        wild_store<<<1, 1, 0, stream>>>();
        return GG_OK; /* the harness meets the fault at its next synchronisation */
    }
    int64_t lda = p->lda ? p->lda : p->k, ldb = p->ldb ? p->ldb : p->k;
    int64_t ldc = p->ldc ? p->ldc : p->n, stride_b = p->stride_b ? p->stride_b : p->n * ldb;
    if (p->m == 0 || p->n == 0)
        return GG_OK;
    dim3 grid((unsigned)((p->n + 127) / 128), (unsigned)(p->m < 65535 ? p->m : 65535));
    naive_fwd<<<grid, 128, 0, stream>>>((const __nv_bfloat16 *)o->a, (const __nv_bfloat16 *)o->b,
                                        o->c, p->c_dtype == GG_DTYPE_F32, o->group_offs_dev,
                                        p->groups, p->m, p->n, p->k, lda, ldb, stride_b, ldc);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(err, err_len, KERNEL_NAME ": launch: %s", cudaGetErrorString(e));
        return GG_E_DEVICE;
    }
    return GG_OK;
}

static const char *const naive_mutants[] = {"illegal_address_on_gpu1", NULL};

static const struct gg_kernel naive_kernel = {
    GG_KERNEL_ABI_VERSION, KERNEL_NAME,
    "test plugin: naive grouped fwd bf16 on CUDA; its mutant faults on GPU 1 only",
    GG_BACKEND_CUDA, GG_OP_BIT(GG_OP_GROUPED_FWD), 0, 0, 0, naive_mutants, naive_supports,
    NULL, naive_run};

extern "C" {
const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;

enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len)
{
    return host->add_kernel(host->ctx, &naive_kernel, err, err_len);
}
}

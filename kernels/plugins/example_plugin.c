/*
 * example_plugin.c — an example ggfuzz kernel plugin: grouped_bf16_plugin_naive, the plainest
 * correct grouped GEMM (fwd NT, dgrad NN, variable-K wgrad TN) with bf16 inputs, one fp32
 * accumulator per output summed in order and one round-to-nearest-even to bf16 (or a plain fp32
 * store). Its mutant skip_last_k drops the last term of every dot product, a tail bug ggfuzz must
 * catch. It is also the recipe for testing your own kernel: copy this file.
 */

/*
 * Recipe. A plugin is a shared object that includes gg_kernel.h and the C standard library, and
 * nothing of ggfuzz:
 *
 *     cc -std=c11 -O2 -fPIC -shared -I ggfuzz/kernels my_kernel.c -o my_kernel.so
 *     ggfuzz --plugin ./my_kernel.so list
 *     ggfuzz --plugin ./my_kernel.so run --kernel my_kernel_name corpus/seeds
 *     GGFUZZ_PLUGINS=./my_kernel.so ggfuzz run --kernel my_kernel_name --mutant skip_last_k CASE
 *
 * It exports two symbols (with C linkage: wrap them in extern "C" in C++):
 *   gg_plugin_abi_version  the GG_KERNEL_ABI_VERSION it was built against; ggfuzz refuses the
 *                          plugin without calling anything when it differs from its own;
 *   gg_plugin_register     called once; hands each kernel descriptor to host->add_kernel.
 * Descriptors (and the names and mutant lists they point to) must live as long as the process:
 * make them static const. ggfuzz owns every buffer; a CPU kernel gets host pointers, reads the
 * group offsets from the problem (or the identical copy in the operands), writes every output
 * element its groups own and nothing else, and keeps no pointer after run() returns.
 * To port a real kernel, keep supports(), the descriptor and the two exports, and replace the
 * body of run() by a call into your kernel.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gg_kernel.h"

#define KERNEL_NAME "grouped_bf16_plugin_naive"

/* bf16 is the upper half of an IEEE binary32. */
static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest, ties to even: adding 0x7fff plus the lowest kept bit carries into the kept
   half exactly when the dropped half is above one half, or equal to it with the kept half odd.
   Overflow carries into the exponent and gives Inf; a NaN is returned quiet. */
static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/*
 * Group g of every op is one block C[i][j] = Σ_{r < red} A(i, r) · B(r, j), i < rows, j < cols,
 * laid out as in the addressing table of gg_kernel.h, with o = group_offs[g] its first row:
 *   fwd    Y_g  = X_g · W_gᵀ    rows M_g  cols N  red K    A(i,r) = a[(o+i)·lda + r]
 *                                                          B(r,j) = b[g·stride_b + j·ldb + r]
 *   dgrad  dX_g = dY_g · W_g    rows M_g  cols K  red N    A(i,r) = a[(o+i)·lda + r]
 *                                                          B(r,j) = b[g·stride_b + r·ldb + j]
 *   wgrad  dW_g = dY_gᵀ · X_g   rows N    cols K  red M_g  A(i,r) = a[(o+r)·lda + i]
 *                                                          B(r,j) = b[(o+r)·ldb + j]
 * and C[i][j] = c[(o+i)·ldc + j] (fwd, dgrad) or c[g·stride_c + i·ldc + j] (wgrad). A wgrad group
 * with M_g = 0 has red = 0: its dW_g is written as zeros.
 */
struct block {
    int64_t rows, cols, red;
    int64_t a0, a_i, a_r; /* A(i, r) = a[a0 + i·a_i + r·a_r] */
    int64_t b0, b_r, b_j; /* B(r, j) = b[b0 + r·b_r + j·b_j] */
    int64_t c0, c_i;      /* C[i][j] = c[c0 + i·c_i + j] */
};

static struct block group_block(const struct gg_problem *p, int64_t g)
{
    int64_t o = p->group_offs[g], len = p->group_offs[g + 1] - o;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        return (struct block){len, p->n, p->k, o * p->lda, p->lda, 1,
                              g * p->stride_b, 1, p->ldb, o * p->ldc, p->ldc};
    case GG_OP_GROUPED_DGRAD:
        return (struct block){len, p->k, p->n, o * p->lda, p->lda, 1,
                              g * p->stride_b, p->ldb, 1, o * p->ldc, p->ldc};
    default:
        return (struct block){p->n, p->k, len, o * p->lda, 1, p->lda,
                              o * p->ldb, p->ldb, 1, g * p->stride_c, p->ldc};
    }
}

/* Leading dimensions and strides of 0 mean packed. */
static struct gg_problem packed_defaults(const struct gg_problem *p)
{
    struct gg_problem q = *p;
    int64_t row_a = p->op == GG_OP_GROUPED_FWD ? p->k : p->n;
    int64_t row_c = p->op == GG_OP_GROUPED_FWD ? p->n : p->k;
    q.lda = q.lda ? q.lda : row_a;
    q.ldb = q.ldb ? q.ldb : p->k;
    q.ldc = q.ldc ? q.ldc : row_c;
    q.stride_b = q.stride_b ? q.stride_b : p->n * q.ldb;
    q.stride_c = q.stride_c ? q.stride_c : p->n * q.ldc;
    return q;
}

static int naive_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    const uint32_t ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                         GG_OP_BIT(GG_OP_GROUPED_WGRAD);
    const char *no = NULL;
    if ((unsigned)p->op >= GG_OP_COUNT || !(ops & GG_OP_BIT(p->op)))
        no = "grouped fwd, dgrad and wgrad only";
    else if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16)
        no = "bf16 inputs only";
    else if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        no = "bf16 or f32 output only";
    else if (p->acc_dtype != GG_DTYPE_F32)
        no = "f32 accumulation only";
    else if (p->scaling != GG_SCALING_NONE)
        no = "unscaled inputs only";
    else if (p->bias_dtype != GG_DTYPE_NONE)
        no = "no bias";
    else if (p->group_offs == NULL)
        no = "group offsets missing";
    if (no != NULL) {
        snprintf(why, why_len, KERNEL_NAME ": %s", no);
        return 0;
    }
    return 1;
}

static enum gg_status naive_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                                size_t err_len)
{
    if (!naive_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    const struct gg_problem q = packed_defaults(p);
    const uint16_t *a = o->a, *b = o->b;
    const int64_t drop = gg_mutant_is(p, "skip_last_k") ? 1 : 0;
    for (int64_t g = 0; g < q.groups; g++) {
        const struct block blk = group_block(&q, g);
        const int64_t red = blk.red > drop ? blk.red - drop : 0;
        for (int64_t i = 0; i < blk.rows; i++) {
            for (int64_t j = 0; j < blk.cols; j++) {
                float acc = 0.0f;
                for (int64_t r = 0; r < red; r++)
                    acc += bf16_to_f32(a[blk.a0 + i * blk.a_i + r * blk.a_r]) *
                           bf16_to_f32(b[blk.b0 + r * blk.b_r + j * blk.b_j]);
                int64_t at = blk.c0 + i * blk.c_i + j;
                if (q.c_dtype == GG_DTYPE_BF16)
                    ((uint16_t *)o->c)[at] = f32_to_bf16(acc);
                else
                    ((float *)o->c)[at] = acc;
            }
        }
    }
    return GG_OK;
}

static const char *const naive_mutants[] = {"skip_last_k", NULL};

static const struct gg_kernel naive_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = KERNEL_NAME,
    .summary = "example plugin: naive grouped bf16 GEMM, in-order fp32 sums, one rounding",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = 0, .tile_n = 0, .tile_k = 0, /* not tiled */
    .mutants = naive_mutants,
    .supports = naive_supports,
    .workspace_bytes = NULL, /* no workspace */
    .run = naive_run,
};

/* The two exported symbols of the plugin contract. */
const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;

enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len)
{
    return host->add_kernel(host->ctx, &naive_kernel, err, err_len);
}

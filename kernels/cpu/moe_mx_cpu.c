/*
 * moe_mx_cpu.c — moe_mx_e4m3_cpu_sorted: the fused-MoE GEMM of vLLM and aiter in the
 * sorted_token_ids layout, with MX-FP8 operands computed by the engine of mx_cpu.c. The work
 * items are the blocks of block_m sorted entries; block b belongs to expert expert_ids[b], and
 * each of its valid entries v (v < T·topk) makes output row v = X[v / topk] · W_eᵀ. Padding
 * entries (the out-of-range id that pads every expert to a multiple of block_m) are skipped.
 */
#include <stdint.h>

#include "kernels/cpu/cpu_gemm_int.h"

#define TILE_M CPU_MX_TILE_M
#define TILE_N CPU_MX_TILE_N

static const char *const moe_mutants[] = {"mx_k_tail", "e8m0_special", "sorted_ids_padding",
                                          NULL};

static int moe_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_moe_mx_supports(p, moe_mutants, why, why_len);
}

/* The routing arrays the kernel reads: positive topk and block_m, whole blocks, and an expert
   id in range for every block (checked before any output is written). */
static enum gg_status check_routing(const struct gg_problem *p, const struct gg_operands *o,
                                    char *err, size_t err_len)
{
    if (p->topk < 1 || p->block_m < 1 || p->m < 0 || p->m > INT64_MAX / p->topk)
        return family_fail(err, err_len, GG_E_INVAL, "moe needs topk >= 1, block_m >= 1 and "
                           "T·topk in range (T %lld, topk %lld, block_m %lld)", (long long)p->m,
                           (long long)p->topk, (long long)p->block_m);
    if (p->sorted_len < 0 || p->sorted_len % p->block_m != 0)
        return family_fail(err, err_len, GG_E_INVAL,
                           "sorted_len %lld is not a whole number of blocks of %lld",
                           (long long)p->sorted_len, (long long)p->block_m);
    if (p->sorted_len > 0 && (o->sorted_ids_dev == NULL || o->expert_ids_dev == NULL))
        return family_fail(err, err_len, GG_E_INVAL, "sorted_ids_dev or expert_ids_dev is NULL");
    for (int64_t blk = 0; blk < p->sorted_len / p->block_m; blk++)
        if (o->expert_ids_dev[blk] < 0 || o->expert_ids_dev[blk] >= p->groups)
            return family_fail(err, err_len, GG_E_INVAL,
                               "expert_ids_dev[%lld] = %d is outside 0..%lld", (long long)blk,
                               o->expert_ids_dev[blk], (long long)p->groups - 1);
    return GG_OK;
}

/* Rows a_rows[i] of X times expert e into rows c_rows[i] of Y, i < rows, over every column tile. */
static void run_rows(struct cpu_mx_engine *e, int64_t expert, const int64_t *a_rows,
                     const int64_t *c_rows, int64_t rows)
{
    for (int64_t j0 = 0; j0 < e->p->n; j0 += TILE_N) {
        int64_t cols = cpu_min64(e->p->n - j0, TILE_N);
        cpu_mx_tile(e, expert, a_rows, rows, j0, cols, 0, e->blocks_run);
        cpu_mx_store(e, e->acc, TILE_N, c_rows, rows, j0, cols, expert);
    }
}

static enum gg_status moe_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                              size_t err_len)
{
    if (!moe_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    enum gg_status st = check_routing(p, o, err, err_len);
    int64_t pairs = p->m * p->topk;
    struct cpu_mx_engine e;
    if (st != GG_OK || (st = cpu_mx_engine_init(&e, p, o, p->m, pairs, err, err_len)) != GG_OK)
        return st;
    /* sorted_ids_padding: the bound v < T·topk (the token mask of the real kernels) is
       missing, so the padding id is computed like a token: it reads X row T and writes Y row
       T·topk, one past the logical output. */
    int64_t limit = gg_mutant_is(p, "sorted_ids_padding") ? INT64_MAX : pairs;
    int64_t a_rows[TILE_M], c_rows[TILE_M];
    for (int64_t blk = 0; blk < p->sorted_len / p->block_m; blk++) {
        int64_t expert = o->expert_ids_dev[blk], rows = 0;
        const int32_t *ids = o->sorted_ids_dev + blk * p->block_m;
        for (int64_t s = 0; s < p->block_m; s++) {
            int64_t v = ids[s];
            if (v < 0 || v >= limit)
                continue;
            a_rows[rows] = v / p->topk;
            c_rows[rows++] = v;
            if (rows == TILE_M) {
                run_rows(&e, expert, a_rows, c_rows, rows);
                rows = 0;
            }
        }
        if (rows > 0)
            run_rows(&e, expert, a_rows, c_rows, rows);
    }
    cpu_mx_engine_free(&e);
    return GG_OK;
}

const struct gg_kernel gg_kernel_moe_mx_e4m3_cpu_sorted = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "moe_mx_e4m3_cpu_sorted",
    .summary = "MoE sorted_token_ids, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 acc, bf16/f32 out, bias",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_MOE_SORTED),
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = CPU_MX_TILE_K,
    .mutants = moe_mutants,
    .supports = moe_supports,
    .workspace_bytes = NULL,
    .run = moe_run,
};

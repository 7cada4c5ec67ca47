/*
 * grouped_fp8_fine_cpu.c — grouped_fp8_cpu_fine: grouped GEMM fwd (NT), dgrad (NN) and
 * variable-K wgrad (TN) on FP8 codes (OCP e4m3/e5m2, or AMD e4m3fnuz/e5m2fnuz) with the fine
 * scaling recipes of torch._scaled_grouped_mm and DeepSeek-V3 (gg_kernel.h): rowwise (fwd,
 * dgrad, wgrad) and blockwise 1x128 / 128x128 (fwd, dgrad). Codes are decoded through
 * 256-entry tables and summed in fp32, one output at a time. Rowwise: the unscaled sum times
 * (a_scale[row] · b_scale[col]), the product and the scaling each one fp32 multiplication, as
 * a rowwise epilogue does. Blockwise: each 128 of the reduction summed apart, times its two
 * scales' product in fp32, added to the fp32 total (the promotion of DeepSeek-V3's kernels).
 * Then one rounding to bf16 or fp32. The twin the fuzzer judges these recipes with, and the
 * carrier of their mutants.
 */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_gemm_int.h"

static const char *const fine_mutants[] = {"rowwise_a_per_group", "rowwise_b_group0",
                                           "blockwise_tail_prev", "blockwise_b_first_row", NULL};

/* What one output needs: the map, the decoded operands, the scales and the mutants. */
struct fine {
    struct family_grouped_map m;
    const uint8_t *a, *b;
    const float *a_scale, *b_scale;
    float table_a[256], table_b[256];
    int blockwise;
    int64_t kb, nb;        /* blockwise: ceil(K/128), ceil(N/128) */
    int a_per_group;       /* rowwise_a_per_group */
    int b_group0;          /* rowwise_b_group0 */
    int tail_prev;         /* blockwise_tail_prev */
    int b_first_row;       /* blockwise_b_first_row */
};

/*
 * Rowwise scales of output (i, j) of group block bl (gg_kernel.h): A's per output row (a row of
 * X or dY, counted across groups; wgrad: per (g, n)), B's per output column of group g's
 * matrix (fwd: n, dgrad and wgrad: k). rowwise_a_per_group takes the scale of the group's
 * first output row for all of its rows (a scale loaded once per group, as a tensor-wise
 * epilogue does); rowwise_b_group0 reads group 0's column scales for every group (the scale
 * pointer never advanced per expert).
 */
static float rowwise_scale(const struct fine *f, const struct family_grouped_block *bl,
                           int64_t i, int64_t j)
{
    int64_t row = f->a_per_group ? 0 : i;
    int64_t ia = f->m.op == GG_OP_GROUPED_WGRAD ? bl->g * f->m.n + row : bl->row0 + row;
    int64_t ib = (f->b_group0 ? 0 : bl->g) * bl->cols + j;
    return f->a_scale[ia] * f->b_scale[ib];
}

/*
 * Blockwise scales of output (i, j) over reduction block blk: A's of its row and block, B's of
 * block (n/128, k/128) of W_g as stored; in fwd j is n and the reduction k, in dgrad j is k and
 * the reduction n (W's blocks read transposed). blockwise_tail_prev takes the last, partial
 * block's scales from the block before it (a loop that handles whole blocks and reuses the
 * last scales for the remainder); blockwise_b_first_row reads B's first block row for every
 * output column block (B's scales indexed as if 1x128 per matrix).
 */
static float block_scale(const struct fine *f, const struct family_grouped_block *bl, int64_t i,
                         int64_t j, int64_t blk, int tail)
{
    if (tail && f->tail_prev && blk > 0)
        blk--;
    int64_t rb = (bl->red + GG_BLOCK128 - 1) / GG_BLOCK128;
    int64_t jb = f->b_first_row ? 0 : j / GG_BLOCK128;
    int64_t mat = bl->g * f->nb * f->kb;
    int64_t ib = f->m.op == GG_OP_GROUPED_DGRAD ? mat + blk * f->kb + jb : mat + jb * f->kb + blk;
    return f->a_scale[(bl->row0 + i) * rb + blk] * f->b_scale[ib];
}

/* The fp32 value of output (i, j) of group block bl, before the output rounding. */
static float output_value(const struct fine *f, const struct family_grouped_block *bl, int64_t i,
                          int64_t j)
{
    const uint8_t *a = f->a + bl->a_off + i * f->m.a_si;
    const uint8_t *b = f->b + bl->b_off + j * f->m.b_sj;
    if (!f->blockwise) {
        float acc = 0.0f;
        for (int64_t r = 0; r < bl->red; r++)
            acc += f->table_a[a[r * f->m.a_sr]] * f->table_b[b[r * f->m.b_sr]];
        return acc * rowwise_scale(f, bl, i, j);
    }
    float total = 0.0f;
    for (int64_t r0 = 0, blk = 0; r0 < bl->red; r0 += GG_BLOCK128, blk++) {
        int64_t r1 = r0 + GG_BLOCK128 < bl->red ? r0 + GG_BLOCK128 : bl->red;
        float part = 0.0f;
        for (int64_t r = r0; r < r1; r++)
            part += f->table_a[a[r * f->m.a_sr]] * f->table_b[b[r * f->m.b_sr]];
        total += part * block_scale(f, bl, i, j, blk, r1 - r0 < GG_BLOCK128);
    }
    return total;
}

static int fine_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_fp8_fine_supports(p, fine_mutants, why, why_len);
}

static enum gg_status fine_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                               size_t err_len)
{
    if (!fine_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct fine *f = malloc(sizeof *f);
    if (f == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the plan");
    family_grouped_map_init(p, o->group_offs_dev, &f->m);
    enum gg_status st = cpu_grouped_check_fp8(p, &f->m, o, 0, err, err_len);
    float *row = NULL;
    if (st == GG_OK) {
        f->a = o->a;
        f->b = o->b;
        f->a_scale = o->a_scale;
        f->b_scale = o->b_scale;
        cpu_decode_table(p->a_dtype, f->table_a);
        cpu_decode_table(p->b_dtype, f->table_b);
        f->blockwise = p->scaling == GG_SCALING_BLOCKWISE;
        f->kb = cpu_ceil_div(p->k, GG_BLOCK128);
        f->nb = cpu_ceil_div(p->n, GG_BLOCK128);
        f->a_per_group = gg_mutant_is(p, "rowwise_a_per_group");
        f->b_group0 = gg_mutant_is(p, "rowwise_b_group0");
        f->tail_prev = gg_mutant_is(p, "blockwise_tail_prev");
        f->b_first_row = gg_mutant_is(p, "blockwise_b_first_row");
        int64_t cols = p->op == GG_OP_GROUPED_FWD ? p->n : p->k;
        row = malloc((size_t)(cols > 0 ? cols : 1) * sizeof *row);
        if (row == NULL)
            st = family_fail(err, err_len, GG_E_NOMEM, "no memory for a row of %lld outputs",
                             (long long)cols);
    }
    const struct cpu_gemm_out out = {o->c, p->c_dtype, f->m.ldc, NULL, GG_DTYPE_NONE, 0};
    for (int64_t g = 0; st == GG_OK && g < f->m.groups; g++) {
        struct family_grouped_block bl = family_grouped_block_of(&f->m, g);
        for (int64_t i = 0; i < bl.rows; i++) {
            for (int64_t j = 0; j < bl.cols; j++)
                row[j] = output_value(f, &bl, i, j);
            struct cpu_gemm_dst d = {1, bl.cols, bl.c_off + i * f->m.ldc, NULL, NULL, 0};
            cpu_gemm_store(&out, &d, row, bl.cols);
        }
    }
    free(row);
    free(f);
    return st;
}

const struct gg_kernel gg_kernel_grouped_fp8_cpu_fine = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_fp8_cpu_fine",
    .summary = "grouped fwd/dgrad/wgrad, fp8 (OCP or fnuz) in, rowwise (fwd/dgrad/wgrad) or "
               "blockwise 1x128/128x128 (fwd/dgrad) scales, fp32 acc, bf16/f32 out",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_k = GG_BLOCK128,
    .mutants = fine_mutants,
    .supports = fine_supports,
    .run = fine_run,
};

/*
 * cpu_grouped_map.c — the grouped map of the families (kernels/family/family.h) on the CPU tile
 * engine: the tiles each group's block is cut into, the operands of one tile, and the checks of
 * a grouped FP8 problem's operand block.
 */
#include <stdint.h>

#include "kernels/cpu/cpu_gemm_int.h"

int64_t cpu_grouped_tiles(const struct family_grouped_map *m, int64_t g, int64_t tile_m,
                          int64_t tile_n)
{
    struct family_grouped_block b = family_grouped_block_of(m, g);
    return cpu_block_tiles(b.rows, b.cols, tile_m, tile_n);
}

struct cpu_gemm_src cpu_grouped_src(const struct family_grouped_map *m,
                                    const struct family_grouped_block *blk,
                                    const struct cpu_tile *t, const struct cpu_gemm_operand *a,
                                    const struct cpu_gemm_operand *b)
{
    return (struct cpu_gemm_src){a, b, blk->a_off + t->i0 * m->a_si, m->a_si, m->a_sr,
                                 blk->b_off + t->j0 * m->b_sj, m->b_sj, m->b_sr,
                                 t->rows, t->cols, t->cols, 0};
}

enum gg_status cpu_grouped_check_fp8(const struct gg_problem *p,
                                     const struct family_grouped_map *m,
                                     const struct gg_operands *o, int scales_by_output,
                                     char *err, size_t err_len)
{
    enum gg_status st;
    if ((st = family_grouped_check_sizes(m, err, err_len)) != GG_OK ||
        (st = family_check_offsets(m->offs, m->groups, m->m, err, err_len)) != GG_OK ||
        (st = family_grouped_check_strides(m, err, err_len)) != GG_OK)
        return st;
    struct family_grouped_use use = family_grouped_uses(m);
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    int need_a_scale = scales_by_output ? use.c : use.a;
    int need_b_scale = scales_by_output ? use.c : use.b;
    if ((st = family_check_ptr(o->a, use.a, 1, "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, use.b, 1, "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, use.c, c_size, "c", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->a_scale, need_a_scale, sizeof(float), "a_scale", err,
                               err_len)) != GG_OK ||
        (st = family_check_ptr(o->b_scale, need_b_scale, sizeof(float), "b_scale", err,
                               err_len)) != GG_OK)
        return st;
    return GG_OK;
}

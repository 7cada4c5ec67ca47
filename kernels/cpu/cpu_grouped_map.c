/*
 * cpu_grouped_map.c — the grouped map of the families (kernels/family/family.h) on the CPU tile
 * engine: the tiles each group's block is cut into, and the operands of one tile.
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

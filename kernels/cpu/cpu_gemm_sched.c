/*
 * cpu_gemm_sched.c — how the CPU kernels walk their output: tile lists over groups (a prefix sum
 * of per-group tile counts and the tile -> group lookup), split-K bookkeeping (waves of tiles
 * whose partials fit a bounded workspace, reduction slices, the fixed-order sum of the slices),
 * and the phase schedule that turns a tile list into work items for one thread or a pool.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm_int.h"

/* ---- tile lists ------------------------------------------------------------------------- */

int64_t cpu_block_tiles(int64_t rows, int64_t cols, int64_t tile_m, int64_t tile_n)
{
    return rows > 0 && cols > 0 ? cpu_ceil_div(rows, tile_m) * cpu_ceil_div(cols, tile_n) : 0;
}

struct cpu_tile cpu_tile_in_block(int64_t g, int64_t local, int64_t rows, int64_t cols,
                                  int64_t tile_m, int64_t tile_n)
{
    int64_t per_row = cpu_ceil_div(cols, tile_n);
    struct cpu_tile t = {g, (local / per_row) * tile_m, (local % per_row) * tile_n, 0, 0};
    t.rows = cpu_min64(tile_m, rows - t.i0);
    t.cols = cpu_min64(tile_n, cols - t.j0);
    return t;
}

int64_t cpu_tile_prefix(int64_t groups, int64_t (*tiles_of)(const void *ctx, int64_t g),
                        const void *ctx, int64_t *start)
{
    int64_t total = 0;
    for (int64_t g = 0; g < groups; g++) {
        if (start)
            start[g] = total;
        total += tiles_of(ctx, g);
    }
    if (start)
        start[groups] = total;
    return total;
}

int64_t cpu_tile_owner(const int64_t *start, int64_t groups, int64_t t)
{
    int64_t lo = 0, hi = groups; /* start[lo] <= t < start[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- split-K ---------------------------------------------------------------------------- */

int64_t cpu_splitk_wave(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return tiles;
    return cpu_min64(tiles, cpu_max64(CPU_SPLIT_K_WAVE_ITEMS / split, 1));
}

size_t cpu_splitk_ws(int64_t tiles, int64_t split, int64_t slot_elems)
{
    if (split <= 1)
        return 0;
    return (size_t)(split * cpu_splitk_wave(tiles, split) * slot_elems) * sizeof(float);
}

void cpu_splitk_slice(int64_t len, int64_t chunk, int64_t sl, int64_t *r0, int64_t *r1)
{
    *r0 = cpu_min64(sl * chunk, len);
    *r1 = cpu_min64(*r0 + chunk, len);
}

void cpu_splitk_save(float *slot, const float *acc, int64_t ld, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++)
        memcpy(slot + i * ld, acc + i * ld, (size_t)cols * sizeof(float));
}

void cpu_splitk_reduce(const float *part, int64_t split, int64_t slot_elems, int64_t ld,
                       int64_t rows, int64_t cols, float *acc)
{
    cpu_splitk_save(acc, part, ld, rows, cols);
    for (int64_t sl = 1; sl < split; sl++) {
        const float *ps = part + sl * slot_elems;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                acc[i * ld + j] += ps[i * ld + j];
    }
}

/* ---- phase schedule --------------------------------------------------------------------- */

void cpu_sched_init(struct cpu_sched *s, int64_t tiles, int64_t split, int64_t slot_elems,
                    int64_t ld, float *ws)
{
    s->tiles = tiles;
    s->split = split;
    s->wave = cpu_splitk_wave(tiles, split);
    int64_t waves = tiles > 0 ? cpu_ceil_div(tiles, s->wave) : 0;
    s->phases = split > 1 ? 2 * waves : waves;
    s->slot_elems = slot_elems;
    s->ld = ld;
    s->ws = ws;
}

int64_t cpu_sched_items(const struct cpu_sched *s, int64_t ph, int64_t *t0)
{
    int64_t reduce = s->split > 1 ? ph % 2 : 0, wave = s->split > 1 ? ph / 2 : ph;
    *t0 = wave * s->wave;
    int64_t tiles = cpu_min64(s->tiles - *t0, s->wave);
    return reduce || s->split == 1 ? tiles : tiles * s->split;
}

void cpu_sched_run_item(const struct cpu_sched *s, const struct cpu_sched_kernel *k, int64_t ph,
                        int64_t t0, int64_t item, void *scratch, float *acc)
{
    if (s->split == 1) {
        struct cpu_tile tile = k->locate(k->ctx, t0 + item);
        k->compute(k->ctx, &tile, 0, 1, scratch, acc);
        k->store(k->ctx, &tile, scratch, acc);
        return;
    }
    if (ph % 2 == 0) { /* partial of slice sl of tile t into slot (t - t0)·S + sl = item */
        struct cpu_tile tile = k->locate(k->ctx, t0 + item / s->split);
        k->compute(k->ctx, &tile, item % s->split, s->split, scratch, acc);
        cpu_splitk_save(s->ws + item * s->slot_elems, acc, s->ld, tile.rows, tile.cols);
        return;
    }
    struct cpu_tile tile = k->locate(k->ctx, t0 + item); /* reduction over the tile's slots */
    cpu_splitk_reduce(s->ws + item * s->split * s->slot_elems, s->split, s->slot_elems, s->ld,
                      tile.rows, tile.cols, acc);
    k->store(k->ctx, &tile, scratch, acc);
}

void cpu_sched_run(const struct cpu_sched *s, const struct cpu_sched_kernel *k, void *scratch,
                   float *acc)
{
    for (int64_t ph = 0; ph < s->phases; ph++) {
        int64_t t0, n = cpu_sched_items(s, ph, &t0);
        for (int64_t item = 0; item < n; item++)
            cpu_sched_run_item(s, k, ph, t0, item, scratch, acc);
    }
}

/*
 * gg_strategy_alias.c — cases aimed at the `alias` class (workspace misuse and races): split-K
 * with 2..8 slices over several small groups; long reductions in few slices, which keep the
 * window of a missing fence wide; small groups over concurrent streams with split-K; worker
 * pools of 1..8. The runner adds the workspace poisons and the repeated runs. Only the options
 * the kernel knows are set.
 */
#include "fuzz/gen/gg_gen_int.h"

enum alias_kind { A_SPLIT, A_RACE, A_STREAMS, A_WORKERS, A_COUNT };

#define MAX_GROUPS 16

static void split(struct gen *g, struct gg_case *c, int64_t lo, int64_t hi)
{
    if (gen_knows(g, GEN_OPT_SPLIT_K))
        gen_set_opt(g, c, "split_k", gen_range(&g->r, lo, hi));
}

void gen_strategy_alias(struct gen *g, struct gg_case *c)
{
    enum alias_kind k = (enum alias_kind)gen_range(&g->r, 0, A_COUNT - 1);
    gen_use_config(g, c, ~0u);
    c->dist_a = gen_dist_plain(g);
    c->dist_b = gen_dist_plain(g);
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    int64_t lens[MAX_GROUPS], n;
    switch (k) {
    case A_RACE: /* one or two groups of at most a tile, K long, few slices */
        n = gen_range(&g->r, 1, 2);
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_dim(g, g->tile_m, g->tile_m);
        if (n == 2 && gen_chance(&g->r, 0.3))
            lens[0] = 0;
        c->n = gen_dim(g, g->tile_n, g->tile_n);
        c->k = gen_fix_k(c, gen_log_range(&g->r, 2048, 8192));
        split(g, c, 2, 4);
        break;
    case A_STREAMS: /* several groups of a tile or two on concurrent streams */
        n = gen_range(&g->r, 4, 16);
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_chance(&g->r, 0.15) ? 0 : gen_dim(g, g->tile_m, 2 * g->tile_m);
        c->n = gen_dim(g, g->tile_n, 2 * g->tile_n);
        c->k = gen_fix_k(c, gen_log_range(&g->r, 256, 4096));
        split(g, c, 2, 4);
        if (gen_knows(g, GEN_OPT_STREAMS))
            gen_set_opt(g, c, "streams", gen_range(&g->r, 2, 8));
        if (gen_knows(g, GEN_OPT_THRESHOLD) && gen_chance(&g->r, 0.3))
            gen_set_opt(g, c, "threshold", gen_range(&g->r, 2 * g->tile_m, 1024));
        break;
    case A_WORKERS: /* a pool of workers over the tiles of several groups */
        n = gen_range(&g->r, 2, 8);
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_chance(&g->r, 0.2) ? 0 : gen_rows(g);
        gen_small_nk(g, c);
        split(g, c, 1, 4);
        if (gen_knows(g, GEN_OPT_WORKERS))
            gen_set_opt(g, c, "workers", gen_range(&g->r, 1, 8));
        break;
    default: /* A_SPLIT: 2..8 slices over several small groups */
        n = gen_range(&g->r, 1, 6);
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_chance(&g->r, 0.2) ? 0 : gen_rows(g);
        c->n = gen_dim(g, g->tile_n, 256);
        c->k = gen_fix_k(c, gen_dim(g, g->tile_k, 2048));
        split(g, c, 2, 8);
        if (gen_knows(g, GEN_OPT_WORKERS) && gen_chance(&g->r, 0.5))
            gen_set_opt(g, c, "workers", gen_range(&g->r, 2, 8));
    }
    if (gen_knows(g, GEN_OPT_LENS_FROM) && gen_chance(&g->r, 0.2))
        gen_set_opt(g, c, "lens_from", 1);
    gen_shape(g, c, lens, n);
}

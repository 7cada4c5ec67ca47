/*
 * gg_strategy_snr.c — cases aimed at the `snr` class (wrong or too noisy results): K from 1 to
 * 8192 log-uniform and on the K tile ±1 (±32 for MX, whose K is a multiple of the block), up to
 * 65536 on tiny outputs; N and M a few elements off the tile grid; every data distribution of
 * the foundation; planted E8M0 edge codes with both MX scale rules. Shapes stay small (M, N <=
 * 256) so that a CPU campaign runs hundreds of them per second.
 */
#include "fuzz/gen/gg_gen_int.h"

enum snr_kind { S_K, S_TAIL, S_DATA, S_PLANT, S_LONG, S_COUNT };

#define MAX_GROUPS 8

static int is_e8m0(const struct gg_case *c)
{
    return c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B;
}

/* K log-uniform in [1, hi] or on the tile grid ±1 (±one MX block). */
static int64_t draw_k(struct gen *g, const struct gg_case *c, int64_t hi)
{
    int64_t step = is_e8m0(c) ? GG_MX_BLOCK : 1, k;
    if (gen_chance(&g->r, 0.5))
        k = gen_log_range(&g->r, 1, hi);
    else
        k = gen_range(&g->r, 1, hi / g->tile_k > 1 ? hi / g->tile_k : 1) * g->tile_k +
            step * gen_range(&g->r, -1, 1);
    return gen_fix_k(c, k < 1 ? 1 : k);
}

/* n tile-tail sizes q·tile + r, r in [-3, 3], at most hi. */
static int64_t tail(struct gen *g, int64_t tile, int64_t hi)
{
    int64_t v = gen_range(&g->r, 1, hi / tile > 1 ? hi / tile : 1) * tile + gen_range(&g->r, -3, 3);
    return v < 1 ? 1 : v > hi ? hi : v;
}

void gen_strategy_snr(struct gen *g, struct gg_case *c)
{
    enum snr_kind k = (enum snr_kind)gen_range(&g->r, 0, S_COUNT - 1);
    const unsigned mx_ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_BATCHED) |
                            GG_OP_BIT(GG_OP_DENSE) | GG_OP_BIT(GG_OP_MOE_SORTED);
    gen_use_config(g, c, k == S_PLANT ? mx_ops : ~0u);
    int64_t lens[MAX_GROUPS], n = gen_range(&g->r, 1, k == S_LONG ? 2 : 6);
    for (int64_t i = 0; i < n; i++)
        lens[i] = k == S_TAIL ? tail(g, g->tile_m, 256) : gen_rows(g);
    gen_small_nk(g, c);
    switch (k) {
    case S_K:
        c->k = draw_k(g, c, 8192);
        if (c->k > 1024) /* long reductions on small outputs */
            c->n = gen_dim(g, g->tile_n, 128);
        break;
    case S_TAIL:
        c->n = tail(g, g->tile_n, 256);
        break;
    case S_PLANT: /* small outputs and K: planted codes stay rare per output (gen_plant) */
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_dim(g, g->tile_m, 64);
        c->n = gen_dim(g, g->tile_n, 128);
        c->k = gen_fix_k(c, gen_dim(g, g->tile_k, 512));
        break;
    case S_LONG:
        for (int64_t i = 0; i < n; i++)
            lens[i] = gen_range(&g->r, 1, 16);
        c->n = gen_range(&g->r, 1, 16);
        c->k = draw_k(g, c, 65536);
        break;
    default:
        break;
    }
    gen_shape(g, c, lens, n);
    /* Data: any distribution for one or both operands, or plain. */
    c->dist_a = k == S_DATA || gen_chance(&g->r, 0.3) ? gen_dist_any(g, c->a_dtype)
                                                      : gen_dist_plain(g);
    c->dist_b = k == S_DATA || gen_chance(&g->r, 0.3) ? gen_dist_any(g, c->b_dtype)
                                                      : gen_dist_plain(g);
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    if (c->bias_dtype != GG_DTYPE_NONE && gen_chance(&g->r, 0.3)) {
        c->dist_bias = gen_dist_plain(g);
        c->dist_bias.fmt = c->bias_dtype;
    }
    if (is_e8m0(c)) {
        c->mx_rule = gen_chance(&g->r, 0.5) ? GG_MX_RULE_FLOOR : GG_MX_RULE_CEIL;
        if (k == S_PLANT || gen_chance(&g->r, 0.1))
            gen_plant(g, c);
    }
    gen_dispatch(g, c, 0.2, 8);
}

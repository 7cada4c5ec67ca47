/*
 * gg_gen_build.c — the pieces every strategy builds a case from: counter-based draws (rejection
 * sampling for bounded integers), the drawing of a configuration the kernel accepts, dispatch
 * options, group sizes (run-length encoded into `V*R` items) and their mapping onto each op,
 * sizes on and around the kernel's tiles, data recipes, and planted E8M0 codes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen_int.h"

int gen_is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* ---- draws -------------------------------------------------------------------------------- */

uint64_t gen_u64(struct gen_rng *r)
{
    return gg_rng_u64(r->seed, r->stream, r->i, r->j++);
}

int64_t gen_range(struct gen_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1, x;
    if (span == 0) /* the whole 64-bit range */
        return (int64_t)gen_u64(r);
    uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    do
        x = gen_u64(r);
    while (x >= limit);
    return lo + (int64_t)(x % span);
}

int gen_chance(struct gen_rng *r, double p)
{
    return (double)(gen_u64(r) >> 11) * 0x1.0p-53 < p;
}

int64_t gen_log_range(struct gen_rng *r, int64_t lo, int64_t hi)
{
    if (lo < 1)
        lo = 1;
    if (hi <= lo)
        return lo;
    double u = (double)(gen_u64(r) >> 11) * 0x1.0p-53;
    double v = exp(log((double)lo) + u * (log((double)hi + 1.0) - log((double)lo)));
    int64_t x = (int64_t)v;
    return x < lo ? lo : x > hi ? hi : x;
}

int64_t gen_pick(struct gen_rng *r, const int64_t *v, int n)
{
    return v[gen_range(r, 0, n - 1)];
}

void gen_apply_config(struct gg_case *c, const struct gen_config *k)
{
    c->op = k->op;
    c->a_dtype = k->a;
    c->b_dtype = k->b;
    c->c_dtype = k->c;
    c->scaling = k->scaling;
    c->b_layout = k->layout;
    c->bias_dtype = k->bias;
    c->dist_a.fmt = k->a;
    c->dist_b.fmt = k->b;
    c->dist_bias.fmt = k->bias;
}

/* ---- building blocks ---------------------------------------------------------------------- */

void gen_use_config(struct gen *g, struct gg_case *c, unsigned op_mask)
{
    unsigned ops = g->caps->ops & op_mask;
    if (ops == 0)
        ops = g->caps->ops;
    int n_ops = __builtin_popcount(ops), pick = (int)gen_range(&g->r, 0, n_ops - 1), op = 0;
    for (; op < GG_OP_COUNT; op++)
        if ((ops & GG_OP_BIT(op)) && pick-- == 0)
            break;
    int n = 0;
    for (int i = 0; i < g->caps->n; i++)
        n += g->caps->v[i].op == (enum gg_op)op;
    int64_t at = gen_range(&g->r, 0, n - 1);
    for (int i = 0; i < g->caps->n; i++)
        if (g->caps->v[i].op == (enum gg_op)op && at-- == 0)
            g->conf = &g->caps->v[i];
    gen_apply_config(c, g->conf);
}

int gen_knows(const struct gen *g, unsigned opt)
{
    return g->conf != NULL && (g->conf->opts & opt) != 0;
}

void gen_set_opt(struct gen *g, struct gg_case *c, const char *key, int64_t value)
{
    int i = 0;
    while (i < c->n_opts && strcmp(c->opt_key[i], key) != 0)
        i++;
    if (i == GG_CASE_MAX_OPTS) {
        g->nomem = 1; /* a programming error: more options than slots */
        return;
    }
    snprintf(c->opt_key[i], sizeof c->opt_key[i], "%s", key);
    c->opt_value[i] = value;
    if (i == c->n_opts)
        c->n_opts++;
}

void gen_dispatch(struct gen *g, struct gg_case *c, double p, int64_t max_split)
{
    static const int64_t THRESHOLDS[] = {0, 1, 16, 64, 128, 256, 1024};
    if (gen_knows(g, GEN_OPT_SPLIT_K) && gen_chance(&g->r, p))
        gen_set_opt(g, c, "split_k", gen_range(&g->r, 2, max_split));
    if (gen_knows(g, GEN_OPT_STREAMS) && gen_chance(&g->r, p)) {
        gen_set_opt(g, c, "streams", gen_range(&g->r, 2, 8));
        if (gen_knows(g, GEN_OPT_THRESHOLD) && gen_chance(&g->r, 0.5))
            gen_set_opt(g, c, "threshold", gen_pick(&g->r, THRESHOLDS, 7));
    }
    if (gen_knows(g, GEN_OPT_WORKERS) && gen_chance(&g->r, p))
        gen_set_opt(g, c, "workers", gen_range(&g->r, 1, 8));
    if (gen_knows(g, GEN_OPT_LENS_FROM) && gen_chance(&g->r, p / 2))
        gen_set_opt(g, c, "lens_from", 1);
}

void gen_push(struct gen *g, struct gg_case *c, int64_t value, int64_t repeat)
{
    if (repeat < 1)
        return;
    c->groups += repeat;
    struct gg_group_item *last = c->n_items ? &c->items[c->n_items - 1] : NULL;
    if (last != NULL && !last->is_rand && last->value == value) {
        last->repeat += repeat;
        return;
    }
    struct gg_group_item *it = realloc(c->items, ((size_t)c->n_items + 1) * sizeof *it);
    if (it == NULL) {
        g->nomem = 1;
        return;
    }
    c->items = it;
    c->items[c->n_items++] = (struct gg_group_item){.value = value, .repeat = repeat};
}

void gen_set_lens(struct gen *g, struct gg_case *c, const int64_t *lens, int64_t n)
{
    free(c->items);
    c->items = NULL;
    c->n_items = 0;
    c->groups = 0;
    for (int64_t i = 0; i < n; i++)
        gen_push(g, c, lens[i], 1);
}

/* Largest power of two in {1, 2, 4, 8} dividing s, drawn among those that do. */
static int64_t draw_topk(struct gen *g, int64_t s)
{
    int64_t options[4], n = 0;
    for (int64_t t = 1; t <= 8; t *= 2)
        if (s % t == 0)
            options[n++] = t;
    return gen_pick(&g->r, options, (int)n);
}

int64_t gen_clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int64_t gen_config_m(const struct gen_config *k, int64_t v)
{
    if (k == NULL)
        return v;
    int64_t m = gen_clamp(v, k->m_lo, k->m_hi);
    if (k->m_align > 1 && m % k->m_align) {
        int64_t up = (m / k->m_align + 1) * k->m_align;
        m = up <= k->m_hi ? up : m - m % k->m_align;
    }
    return m < k->m_lo ? k->m_lo : m;
}

void gen_shape(struct gen *g, struct gg_case *c, const int64_t *lens, int64_t n)
{
    int64_t sum = 0, max = 0;
    for (int64_t i = 0; i < n; i++) {
        sum += lens[i];
        max = lens[i] > max ? lens[i] : max;
    }
    c->m = c->topk = c->block_m = 0;
    free(c->items);
    c->items = NULL;
    c->n_items = 0;
    c->groups = 0;
    if (gen_is_grouped(c->op)) {
        gen_set_lens(g, c, lens, n);
    } else if (c->op == GG_OP_MOE_SORTED) {
        static const int64_t BLOCKS[] = {1, 8, 16, 32, 64, 128};
        gen_set_lens(g, c, lens, n);
        c->topk = draw_topk(g, sum);
        c->m = sum / c->topk;
        c->block_m = gen_chance(&g->r, 0.5) ? g->tile_m : gen_pick(&g->r, BLOCKS, 6);
    } else {
        const struct gen_config *k = g->conf;
        c->m = gen_config_m(k, max);
        c->groups = c->op == GG_OP_BATCHED ? gen_clamp(n, 1, 16) : 0;
    }
}

int64_t gen_dim(struct gen *g, int64_t tile, int64_t hi)
{
    int64_t v;
    switch (gen_range(&g->r, 0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
        v = gen_range(&g->r, 1, hi);
        break;
    case 4:
    case 5:
    case 6:
        v = gen_range(&g->r, 1, hi / tile > 1 ? hi / tile : 1) * tile + gen_range(&g->r, -2, 2);
        break;
    case 7:
        v = gen_range(&g->r, 1, 4);
        break;
    case 8:
        v = tile;
        break;
    default:
        v = gen_log_range(&g->r, 1, hi);
    }
    return gen_clamp(v, 1, hi);
}

int64_t gen_rows(struct gen *g)
{
    return gen_dim(g, g->tile_m, g->tile_m * 2 + 32 > 160 ? g->tile_m * 2 + 32 : 160);
}

int64_t gen_fix_k(const struct gg_case *c, int64_t k)
{
    if (c->scaling != GG_SCALING_MX && c->scaling != GG_SCALING_MX_B)
        return k;
    return (k + GG_MX_BLOCK - 1) / GG_MX_BLOCK * GG_MX_BLOCK;
}

void gen_small_nk(struct gen *g, struct gg_case *c)
{
    c->n = gen_dim(g, g->tile_n, 192);
    c->k = gen_fix_k(c, gen_dim(g, g->tile_k, g->tile_k + 128 > 384 ? g->tile_k + 128 : 384));
}

struct gg_dist gen_dist_plain(struct gen *g)
{
    if (gen_chance(&g->r, 0.5))
        return (struct gg_dist){.kind = GG_DIST_NORMAL, .p = {0.0, 1.0, 0.0}};
    return (struct gg_dist){.kind = GG_DIST_UNIFORM, .p = {-1.0, 1.0, 0.0}};
}

/*
 * Any distribution of the foundation with parameters from a small menu. nearsat and specials
 * (values at the format's largest finite value) are drawn for the 8-bit and 4-bit formats only:
 * for bf16, f16 and f32 inputs their products overflow the fp32 accumulator of a correct
 * kernel, which is not a fault. outliers are drawn for those wide formats only: quantised to 8
 * or 4 bits, a block or tensor scaled to its outliers loses the rest of its values, and the
 * source SNR (quantiser plus kernel) falls below its level without any fault of the kernel.
 * codes are drawn for every format (outputs past the accumulator's range are not judged).
 */
struct gg_dist gen_dist_any(struct gen *g, enum gg_dtype fmt)
{
    static const double STD[] = {1.0, 1e-2, 1e2, 1e-9};
    static const double FRAC[] = {0.001, 0.01, 0.1, 0.5};
    int narrow = gg_dtype_bits(fmt) <= 8;
    struct gg_dist d = {.kind = (enum gg_dist_kind)gen_range(&g->r, 0, GG_DIST_COUNT - 1)};
    if (!narrow && (d.kind == GG_DIST_NEARSAT || d.kind == GG_DIST_SPECIALS))
        d.kind = GG_DIST_OUTLIERS;
    else if (narrow && d.kind == GG_DIST_OUTLIERS)
        d.kind = GG_DIST_NORMAL;
    switch (d.kind) {
    case GG_DIST_NORMAL:
        d.p[0] = gen_chance(&g->r, 0.8) ? 0.0 : 1.0;
        d.p[1] = STD[gen_range(&g->r, 0, 3)];
        break;
    case GG_DIST_UNIFORM:
        d.p[0] = gen_chance(&g->r, 0.7) ? -1.0 : 0.0;
        d.p[1] = 1.0;
        break;
    case GG_DIST_INTS:
        d.p[0] = (double)gen_range(&g->r, 1, 16);
        break;
    case GG_DIST_CONST:
        d.p[0] = gen_chance(&g->r, 0.5) ? 1.0 : -0.5;
        break;
    case GG_DIST_OUTLIERS:
        d.p[0] = 1.0;
        d.p[1] = FRAC[gen_range(&g->r, 0, 1)];
        d.p[2] = gen_chance(&g->r, 0.5) ? 100.0 : 1000.0;
        break;
    case GG_DIST_SUBNORMAL: /* a tenth to a half of the values */
        d.p[0] = FRAC[gen_range(&g->r, 1, 3)];
        break;
    case GG_DIST_SPECIALS: /* rare: one value in a thousand or a hundred */
    case GG_DIST_CODES:
        d.p[0] = FRAC[gen_range(&g->r, 0, 1)];
        break;
    default:
        break;
    }
    d.fmt = fmt;
    return d;
}

void gen_place(struct gen *g, struct gg_case *c)
{
    /* Most cases keep the canary bands; the others put the inputs' ends (or starts) against an
       inaccessible page, where an over-read (or under-read) faults. */
    int64_t roll = gen_range(&g->r, 0, 9);
    c->guard = roll < 2 ? GG_GUARD_END : roll < 3 ? GG_GUARD_START : GG_GUARD_BAND;
}

/* The length of c's reductions: N for dgrad, the mean group size for wgrad, K otherwise. */
static int64_t reduction_length(const struct gg_case *c)
{
    if (c->op == GG_OP_GROUPED_DGRAD)
        return c->n;
    if (c->op != GG_OP_GROUPED_WGRAD)
        return c->k;
    int64_t rows = 0;
    for (int i = 0; i < c->n_items; i++)
        rows += (c->items[i].is_rand ? c->items[i].hi : c->items[i].value) * c->items[i].repeat;
    return c->groups > 0 ? rows / c->groups : 0;
}

struct gg_dist gen_dist_codes(struct gen *g, const struct gg_case *c, enum gg_dtype fmt)
{
    static const double PER_VECTOR[] = {0.5, 2.0, 6.0};
    int64_t red = reduction_length(c);
    double f = PER_VECTOR[gen_range(&g->r, 0, 2)] / (double)(red > 1 ? red : 1);
    char text[32];
    snprintf(text, sizeof text, "%.0e", f < 1e-5 ? 1e-5 : f > 0.5 ? 0.5 : f);
    return (struct gg_dist){.kind = GG_DIST_CODES, .p = {strtod(text, NULL), 0.0, 0.0},
                            .fmt = fmt};
}

void gen_codes(struct gen *g, struct gg_case *c)
{
    c->dist_a = gen_dist_codes(g, c, c->a_dtype);
    c->dist_b = gen_dist_codes(g, c, c->b_dtype);
    c->quant_sat = GG_SAT_NONE;
}

void gen_fit_data(struct gg_case *c)
{
    struct gg_dist *d[2] = {&c->dist_a, &c->dist_b};
    if ((c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B) &&
        (d[0]->kind == GG_DIST_CODES || d[1]->kind == GG_DIST_CODES))
        c->quant_sat = GG_SAT_NONE;
    if (c->mx_rule != GG_MX_RULE_FLOOR)
        return;
    for (int w = 0; w < 2; w++)
        if ((d[w]->kind == GG_DIST_UNIFORM || d[w]->kind == GG_DIST_NEARSAT) &&
            (w == 1 || c->scaling == GG_SCALING_MX))
            *d[w] = (struct gg_dist){.kind = GG_DIST_NORMAL, .p = {0.0, 1.0, 0.0},
                                     .fmt = d[w]->fmt};
}

/* Rows of the output: at most the sum of the group sizes (random items at their top). */
static int64_t out_rows(const struct gg_case *c)
{
    if (c->op == GG_OP_BATCHED)
        return c->groups * c->m;
    if (c->op == GG_OP_MOE_SORTED)
        return c->m * c->topk;
    if (c->op == GG_OP_DENSE)
        return c->m;
    int64_t rows = 0;
    for (int i = 0; i < c->n_items; i++)
        rows += (c->items[i].is_rand ? c->items[i].hi : c->items[i].value) * c->items[i].repeat;
    return rows;
}

/* Planted fractions, short in the case text. */
static const double PLANT_FRACTIONS[] = {0.002, 0.003, 0.005, 0.01, 0.02, 0.03, 0.05};
#define N_FRACTIONS ((int)(sizeof PLANT_FRACTIONS / sizeof PLANT_FRACTIONS[0]))

double gen_plant_fraction(const struct gg_case *c)
{
    int64_t outputs = out_rows(c);
    double blocks = (double)(c->k / GG_MX_BLOCK), n_out = (double)outputs * (double)c->n;
    if (c->scaling != GG_SCALING_MX || blocks < 1 || n_out < 1)
        return 0.0;
    double f = 4.0 * pow(2e-5 / (n_out * blocks * blocks), 0.25);
    int i = N_FRACTIONS - 1;
    while (i >= 0 && PLANT_FRACTIONS[i] > f)
        i--;
    return i < 0 ? 0.0 : PLANT_FRACTIONS[i];
}

void gen_plant(struct gen *g, struct gg_case *c)
{
    double f = gen_plant_fraction(c);
    if (f <= 0.0)
        return;
    int i = N_FRACTIONS - 1;
    while (PLANT_FRACTIONS[i] > f)
        i--;
    i -= (int)gen_range(&g->r, 0, 1);
    c->plant_e8m0 = PLANT_FRACTIONS[i > 0 ? i : 0];
    c->dist_a = c->dist_b = (struct gg_dist){.kind = GG_DIST_NORMAL, .p = {0.0, 1e-9, 0.0}};
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
}

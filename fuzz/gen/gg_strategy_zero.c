/*
 * gg_strategy_zero.c — cases aimed at the `zero` class: empty groups (experts with no tokens)
 * first, last, scattered, in runs, everywhere; variable-K wgrad groups with K = M_g = 0, whose
 * dW_g must still be written as zeros; a single non-empty group among hundreds or thousands
 * (written as `0*R` items); and zero dimensions (M, N or K = 0) for every op.
 */
#include <stdlib.h>

#include "fuzz/gen/gg_gen_int.h"

enum zero_kind {
    Z_FIRST,     /* one to three empty groups first */
    Z_LAST,      /* one to three empty groups last */
    Z_SCATTERED, /* each group empty with probability 1/2 */
    Z_RUN,       /* a run of two to five empty groups inside */
    Z_ALL,       /* every group empty */
    Z_WGRAD,     /* one of the patterns above on wgrad: K = M_g = 0 */
    Z_SINGLE,    /* one non-empty group among 64..4096 */
    Z_DIMS,      /* M, N or K equal to 0 */
    Z_COUNT
};

#define OPS_GROUPED                                                                               \
    (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |                              \
     GG_OP_BIT(GG_OP_GROUPED_WGRAD))
#define OPS_GROUPS (OPS_GROUPED | GG_OP_BIT(GG_OP_MOE_SORTED))
#define SMALL_GROUPS 16
/* Outputs of a wgrad case with many groups: wgrad writes groups x N x K whatever the rows. */
#define WGRAD_MANY_OUT ((int64_t)1 << 22)

/* A wgrad case of hundreds or thousands of groups keeps N and K small enough that its output
   stays within WGRAD_MANY_OUT elements: the faults it aims at (an empty group's dW left
   unwritten, a group index past a limit) need the groups, not large N and K, and a dW of
   thousands of full-size groups (gigabytes with its reference) costs a campaign more than
   hundreds of other cases. */
static void fit_many_wgrad(struct gg_case *c)
{
    if (c->op != GG_OP_GROUPED_WGRAD)
        return;
    while (c->groups * c->n * c->k > WGRAD_MANY_OUT) {
        int64_t n = c->n, k = c->k;
        if (c->n >= c->k)
            c->n = (c->n + 1) / 2;
        else
            c->k = gen_fix_k(c, (c->k + 1) / 2);
        if (c->n == n && c->k == k)
            return;
    }
}

/* The empty-group pattern of kind k over n groups (non-empty groups get gen_rows()). */
static void pattern(struct gen *g, enum zero_kind k, int64_t *lens, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        lens[i] = gen_rows(g);
    int64_t run = gen_range(&g->r, 1, n > 3 ? 3 : n), at;
    switch (k) {
    case Z_FIRST:
        for (int64_t i = 0; i < run; i++)
            lens[i] = 0;
        break;
    case Z_LAST:
        for (int64_t i = 0; i < run; i++)
            lens[n - 1 - i] = 0;
        break;
    case Z_SCATTERED:
        for (int64_t i = 0; i < n; i++)
            if (gen_chance(&g->r, 0.5))
                lens[i] = 0;
        lens[gen_range(&g->r, 0, n - 1)] = 0;
        break;
    case Z_RUN:
        run = gen_range(&g->r, 2, n - 2 > 5 ? 5 : n - 2 > 2 ? n - 2 : 2);
        at = gen_range(&g->r, n > run + 1 ? 1 : 0, n - run > 1 ? n - run - 1 : 0);
        for (int64_t i = at; i < at + run && i < n; i++)
            lens[i] = 0;
        break;
    default: /* Z_ALL */
        for (int64_t i = 0; i < n; i++)
            lens[i] = 0;
    }
}

/* Zero dimensions: M = 0 (where the configuration accepts it), N = 0 or K = 0, or both. */
static void zero_dims(struct gen *g, struct gg_case *c)
{
    int64_t lens[SMALL_GROUPS], n = gen_range(&g->r, 1, 6);
    for (int64_t i = 0; i < n; i++)
        lens[i] = gen_rows(g);
    int which = (int)gen_range(&g->r, 0, 3);
    if (which == 0)
        for (int64_t i = 0; i < n; i++)
            lens[i] = 0;
    gen_shape(g, c, lens, n);
    if (which == 1 || which == 3)
        c->n = 0;
    if (which == 2 || which == 3)
        c->k = 0;
}

void gen_strategy_zero(struct gen *g, struct gg_case *c)
{
    enum zero_kind k = (enum zero_kind)gen_range(&g->r, 0, Z_COUNT - 1);
    gen_use_config(g, c, k == Z_WGRAD ? GG_OP_BIT(GG_OP_GROUPED_WGRAD)
                         : k == Z_DIMS ? ~0u
                                       : OPS_GROUPS);
    gen_small_nk(g, c);
    c->dist_a = gen_dist_plain(g);
    c->dist_b = gen_dist_plain(g);
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    gen_dispatch(g, c, 0.3, 4);
    if (k == Z_DIMS || !(GG_OP_BIT(c->op) & OPS_GROUPS)) {
        zero_dims(g, c);
        return;
    }
    if (k == Z_WGRAD)
        k = (enum zero_kind)gen_range(&g->r, Z_FIRST, Z_ALL);
    if (k == Z_SINGLE) {
        /* One group of tokens among many, first, last or anywhere. */
        int64_t n = gen_log_range(&g->r, 64, 4096), at;
        switch (gen_range(&g->r, 0, 2)) {
        case 0:
            at = 0;
            break;
        case 1:
            at = n - 1;
            break;
        default:
            at = gen_range(&g->r, 0, n - 1);
        }
        int64_t *lens = calloc((size_t)n, sizeof *lens);
        if (lens == NULL) {
            g->nomem = 1;
            return;
        }
        lens[at] = gen_rows(g);
        gen_shape(g, c, lens, n);
        free(lens);
        fit_many_wgrad(c);
        return;
    }
    int64_t lens[SMALL_GROUPS], n = gen_range(&g->r, k == Z_RUN ? 4 : 1, k == Z_ALL ? 16 : 10);
    pattern(g, k, lens, n);
    gen_shape(g, c, lens, n);
    if (k == Z_ALL && gen_chance(&g->r, 0.3)) { /* many empty groups: `0*R` */
        free(c->items);
        c->items = NULL;
        c->n_items = 0;
        c->groups = 0;
        gen_push(g, c, 0, gen_log_range(&g->r, 17, 4096));
        if (c->op == GG_OP_MOE_SORTED)
            c->m = 0;
        fit_many_wgrad(c);
    }
}

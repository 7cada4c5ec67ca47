/*
 * gg_mutate.c — new cases from corpus cases: one to three small edits of a parent (a group size,
 * an empty group inserted or deleted, N or K moved to a tile neighbour, split_k, a data recipe,
 * special values or codes, planted E8M0 codes, or a leading dimension, stride or offset moved to
 * another edge class of gg_freedoms.c), kept when the kernel supports the result
 * within the memory bound and it differs from the parent. Attempt t draws from stream
 * MUT_STREAM + t; the generator takes over after MUT_ATTEMPTS, or for a parent the kernel cannot
 * run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen_int.h"

/* Stream of the mutator ("mut"); attempt t adds t. */
#define MUT_STREAM UINT64_C(0x6d75740000)
#define MUT_ATTEMPTS 8

enum edit {
    EDIT_SIZE,         /* one group size (or M) to 0, 1, tile - 1, tile, tile + 1 or twice */
    EDIT_INSERT_EMPTY, /* an empty group anywhere */
    EDIT_DELETE_EMPTY, /* one of the empty groups */
    EDIT_N,            /* N to a tile neighbour */
    EDIT_K,            /* K to a tile neighbour */
    EDIT_SPLIT,        /* split_k to another value */
    EDIT_DATA,         /* the data recipe of one operand */
    EDIT_SPECIALS,     /* special values or codes (gen_codes), or planted E8M0 codes */
    EDIT_LAYOUT,       /* a layout freedom to another edge class the kernel takes */
    EDIT_COUNT
};

/* The group sizes of c (expanded) as an array of n + room entries; NULL when out of memory. */
static int64_t *lens_copy(const struct gg_case *c, int64_t room)
{
    int64_t *lens = malloc(((size_t)c->groups + (size_t)room) * sizeof *lens);
    if (lens != NULL && c->groups > 0)
        memcpy(lens, c->lens, (size_t)c->groups * sizeof *lens);
    return lens;
}

/* A tile neighbour of v: q·tile + r with q within one of v / tile and r in {-1, 0, 1}. */
static int64_t tile_neighbour(struct gen *g, int64_t v, int64_t tile, int64_t step)
{
    int64_t q = v / tile + gen_range(&g->r, -1, 1);
    int64_t x = (q < 1 ? 1 : q) * tile + step * gen_range(&g->r, -1, 1);
    return x < 1 ? 1 : x;
}

static int64_t new_size(struct gen *g, int64_t old)
{
    const int64_t t = g->tile_m, choice[6] = {0, 1, t - 1, t, t + 1, old > 0 ? 2 * old : 2};
    return gen_pick(&g->r, choice, 6);
}

/* Applies edit e to c (a copy of the parent, expanded). */
static void apply_edit(struct gen *g, struct gg_case *c, enum edit e)
{
    int items = gen_is_grouped(c->op) || c->op == GG_OP_MOE_SORTED;
    int e8m0 = c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B;
    if (e == EDIT_SIZE && !items) {
        c->m = g->conf ? gen_config_m(g->conf, new_size(g, c->m))
                       : gen_clamp(new_size(g, c->m), 0, GEN_M_UNBOUNDED);
    } else if (e == EDIT_SIZE || e == EDIT_INSERT_EMPTY || e == EDIT_DELETE_EMPTY) {
        int64_t n = c->groups, *lens = lens_copy(c, 1);
        if (lens == NULL) {
            g->nomem = 1;
            return;
        }
        int64_t at = gen_range(&g->r, 0, e == EDIT_INSERT_EMPTY ? n : n - 1);
        if (e == EDIT_SIZE) {
            lens[at] = new_size(g, lens[at]);
        } else if (e == EDIT_INSERT_EMPTY) {
            memmove(lens + at + 1, lens + at, (size_t)(n - at) * sizeof *lens);
            lens[at] = 0;
            n++;
        } else {
            for (int64_t s = 0; s < n && lens[at] != 0; s++) /* the next empty group */
                at = (at + 1) % n;
            if (lens[at] == 0 && n > 1) {
                memmove(lens + at, lens + at + 1, (size_t)(n - at - 1) * sizeof *lens);
                n--;
            }
        }
        int64_t topk = c->topk, block_m = c->block_m;
        gen_shape(g, c, lens, n);
        if (c->op == GG_OP_MOE_SORTED && topk > 0 && (c->m * c->topk) % topk == 0) {
            c->m = c->m * c->topk / topk; /* keep the parent's routing parameters */
            c->topk = topk;
            c->block_m = block_m;
        }
        free(lens);
    } else if (e == EDIT_N) {
        c->n = tile_neighbour(g, c->n, g->tile_n, 1);
    } else if (e == EDIT_K) {
        c->k = gen_fix_k(c, tile_neighbour(g, c->k, g->tile_k, e8m0 ? GG_MX_BLOCK : 1));
    } else if (e == EDIT_SPLIT) {
        gen_set_opt(g, c, "split_k", gen_range(&g->r, 1, 8));
    } else if (e == EDIT_LAYOUT) {
        gen_freedom_move(g, c);
    } else if (e == EDIT_DATA) {
        if (gen_chance(&g->r, 0.5))
            c->dist_a = gen_dist_any(g, c->a_dtype);
        else
            c->dist_b = gen_dist_any(g, c->b_dtype);
    } else if (e8m0 && gen_chance(&g->r, 0.5)) {
        gen_plant(g, c);
    } else if (c->plant_e8m0 == 0 && gen_chance(&g->r, 0.5)) {
        gen_codes(g, c); /* planted scales keep their small data (gen_plant) */
    } else {
        struct gg_dist *d = gen_chance(&g->r, 0.5) ? &c->dist_a : &c->dist_b;
        *d = (struct gg_dist){.kind = gg_dtype_bits(d->fmt) <= 8 ? GG_DIST_SPECIALS
                                                                 : GG_DIST_SUBNORMAL,
                              .p = {gen_chance(&g->r, 0.5) ? 0.001 : 0.01, 0.0, 0.0},
                              .fmt = d->fmt};
    }
}

/* The edits that apply to c under configuration k. */
static unsigned edits_for(const struct gg_case *c, const struct gen *g)
{
    unsigned m = (1u << EDIT_SIZE) | (1u << EDIT_N) | (1u << EDIT_K) | (1u << EDIT_DATA) |
                 (1u << EDIT_SPECIALS);
    if (gen_is_grouped(c->op) || c->op == GG_OP_MOE_SORTED) {
        m |= 1u << EDIT_INSERT_EMPTY;
        for (int64_t i = 0; i < c->groups && c->groups > 1; i++)
            if (c->lens[i] == 0) {
                m |= 1u << EDIT_DELETE_EMPTY;
                break;
            }
    }
    if (gen_knows(g, GEN_OPT_SPLIT_K))
        m |= 1u << EDIT_SPLIT;
    for (int i = 0; i < gg_n_freedoms; i++)
        if (gen_freedom_moves(g, c, i) & ~GG_EDGE_BIT(GG_EDGE_PACKED)) {
            m |= 1u << EDIT_LAYOUT;
            break;
        }
    return m;
}

/* The configuration of the capability table that c uses, or NULL. */
static const struct gen_config *config_of(const struct gg_gen_caps *caps, const struct gg_case *c)
{
    for (int i = 0; i < caps->n; i++) {
        const struct gen_config *k = &caps->v[i];
        if (k->op == c->op && k->a == c->a_dtype && k->b == c->b_dtype && k->c == c->c_dtype &&
            k->scaling == c->scaling && k->bias == c->bias_dtype &&
            (c->op != GG_OP_BATCHED || k->layout == c->b_layout))
            return k;
    }
    return NULL;
}

/* c = parent on this campaign's kernel and mutant, without metadata, expanded. */
static enum gg_status start_from(const struct gen *g, const struct gg_case *parent,
                                 struct gg_case *c)
{
    if (gg_case_copy(c, parent) != GG_OK)
        return GG_E_NOMEM;
    for (int i = 0; i < c->n_meta; i++) {
        free(c->meta[i].key);
        free(c->meta[i].text);
    }
    free(c->meta);
    c->meta = NULL;
    c->n_meta = 0;
    snprintf(c->kernel, sizeof c->kernel, "%s", g->cfg->kernel->name);
    snprintf(c->mutant, sizeof c->mutant, "%s", g->cfg->mutant ? g->cfg->mutant : "");
    char why[256];
    if (gg_case_expand(c, why, sizeof why) != GG_OK) {
        gg_case_free(c);
        return GG_E_INVAL;
    }
    return GG_OK;
}

/* 1 when a and b have the same canonical input lines. */
static int same_case(const struct gg_case *a, const char *b_text)
{
    char *t = NULL;
    int same = b_text != NULL && gg_case_format(a, 0, &t) == GG_OK && strcmp(t, b_text) == 0;
    free(t);
    return same;
}

static enum gg_status mutate(const struct gg_gen_config *cfg, const struct gg_gen_caps *caps,
                             const struct gg_case *parent, uint64_t seed, uint64_t i,
                             struct gg_case *c, char *err, size_t err_len)
{
    const struct gen_config *k = config_of(caps, parent);
    char *parent_text = NULL;
    if (k == NULL || gg_case_format(parent, 0, &parent_text) != GG_OK)
        return gen_draw(cfg, caps, seed, i, c, err, err_len);
    for (uint64_t t = 0; t < MUT_ATTEMPTS; t++) {
        struct gen g = gen_make(cfg, caps, seed, MUT_STREAM + t, i);
        g.conf = k;
        enum gg_status st = start_from(&g, parent, c);
        if (st == GG_E_INVAL)
            break;
        if (st != GG_OK) {
            free(parent_text);
            snprintf(err, err_len, "mutator: out of memory");
            return st;
        }
        unsigned edits = edits_for(c, &g);
        int n = (int)gen_range(&g.r, 1, gen_chance(&g.r, 0.7) ? 1 : 3);
        for (int e = 0; e < n && !g.nomem; e++) {
            int pick = (int)gen_range(&g.r, 0, __builtin_popcount(edits) - 1), which = 0;
            for (; which < EDIT_COUNT; which++)
                if ((edits & (1u << which)) && pick-- == 0)
                    break;
            apply_edit(&g, c, (enum edit)which);
            gen_fit_data(c);
            char why[256];
            if (gg_case_expand(c, why, sizeof why) != GG_OK)
                break;
            edits = edits_for(c, &g);
        }
        if (!g.nomem && gen_admit(&g, c, g.max_bytes) && !same_case(c, parent_text)) {
            free(parent_text);
            return GG_OK;
        }
        gg_case_free(c);
        if (g.nomem) {
            free(parent_text);
            snprintf(err, err_len, "mutator: out of memory");
            return GG_E_NOMEM;
        }
    }
    free(parent_text);
    return gen_draw(cfg, caps, seed, i, c, err, err_len);
}

enum gg_status gg_mutate(const struct gg_gen_config *cfg, const struct gg_case *parent,
                         uint64_t seed, uint64_t i, struct gg_case *c, char *err, size_t err_len)
{
    gg_case_init(c);
    struct gg_gen_caps own;
    const struct gg_gen_caps *caps;
    enum gg_status st = gen_caps_of(cfg, &own, &caps, err, err_len);
    if (st == GG_OK)
        st = parent != NULL ? mutate(cfg, caps, parent, seed, i, c, err, err_len)
                            : gen_draw(cfg, caps, seed, i, c, err, err_len);
    gen_caps_release(&own);
    return st;
}

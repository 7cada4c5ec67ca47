/*
 * moe_routing.h — a fused-MoE routing for the tests, built the way vLLM's moe_align_block_size
 * lays it out: every token picks topk distinct experts, each expert's (token, slot) ids form
 * whole blocks of block_m entries padded at their end, and the blocks of one expert are
 * contiguous. Knobs make the awkward cases: experts with no tokens (with or without a block of
 * pure padding), experts in descending order, ids within an expert out of order.
 */
#ifndef MOE_ROUTING_H
#define MOE_ROUTING_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gg_kernel.h"
#include "splitmix.h"

#define MOE_MAX_E 16

struct moe_spec {
    int64_t experts, tokens, topk, block_m;
    uint32_t idle;         /* bit e: expert e gets no tokens */
    uint32_t padding_only; /* bit e (of an idle expert): it still owns one block of padding */
    int descending;        /* blocks in descending expert order */
    uint64_t seed;
};

struct moe_routing {
    int64_t loads[MOE_MAX_E];     /* valid ids per expert */
    int64_t first[MOE_MAX_E + 1]; /* expert e's valid ids are valid[first[e] .. first[e+1]) */
    int32_t *valid;               /* in the order they appear in sorted */
    int32_t *sorted, *expert_ids;
    int64_t sorted_len, pairs;
};

/* A padding id: past tokens·topk. Most land on the two rows of X after the last token (a test
   fills those with NaN, so a kernel or reference that reads a padding entry shows); one per
   expert is INT32_MAX. */
static inline int32_t moe_padding_id(const struct moe_spec *s, int64_t j, int last)
{
    return last ? INT32_MAX : (int32_t)(s->tokens * s->topk + j % (2 * s->topk));
}

static inline void moe_routing_make(struct moe_routing *rt, const struct moe_spec *s)
{
    memset(rt, 0, sizeof *rt);
    cr_assert_leq(s->experts, MOE_MAX_E);
    uint64_t rng = s->seed;
    rt->pairs = s->tokens * s->topk;
    int32_t *expert_of = malloc((size_t)(rt->pairs + 1) * sizeof *expert_of);
    rt->valid = malloc((size_t)(rt->pairs + 1) * sizeof *rt->valid);
    cr_assert(expert_of && rt->valid);
    for (int64_t t = 0; t < s->tokens; t++)
        for (int64_t j = 0; j < s->topk; j++) {
            int32_t e;
            int taken;
            do { /* a busy expert not yet chosen by this token */
                e = (int32_t)splitmix_below(&rng, s->experts);
                taken = (s->idle >> e) & 1;
                for (int64_t i = 0; i < j; i++)
                    taken |= expert_of[t * s->topk + i] == e;
            } while (taken);
            expert_of[t * s->topk + j] = e;
            rt->loads[e]++;
        }
    for (int64_t e = 0; e < s->experts; e++)
        rt->first[e + 1] = rt->first[e] + rt->loads[e];
    int64_t fill[MOE_MAX_E];
    memcpy(fill, rt->first, sizeof fill);
    for (int64_t v = 0; v < rt->pairs; v++)
        rt->valid[fill[expert_of[v]]++] = (int32_t)v;
    for (int64_t e = 0; e < s->experts; e++) /* shuffle each expert's ids (Fisher-Yates) */
        for (int64_t i = rt->loads[e] - 1; i > 0; i--) {
            int64_t j = splitmix_below(&rng, i + 1);
            int32_t x = rt->valid[rt->first[e] + i];
            rt->valid[rt->first[e] + i] = rt->valid[rt->first[e] + j];
            rt->valid[rt->first[e] + j] = x;
        }
    free(expert_of);
    int64_t blocks[MOE_MAX_E], n_blocks = 0;
    for (int64_t e = 0; e < s->experts; e++) {
        blocks[e] = (rt->loads[e] + s->block_m - 1) / s->block_m;
        if (rt->loads[e] == 0 && ((s->padding_only >> e) & 1))
            blocks[e] = 1;
        n_blocks += blocks[e];
    }
    rt->sorted_len = n_blocks * s->block_m;
    rt->sorted = malloc((size_t)(rt->sorted_len + 1) * sizeof *rt->sorted);
    rt->expert_ids = malloc((size_t)(n_blocks + 1) * sizeof *rt->expert_ids);
    cr_assert(rt->sorted && rt->expert_ids);
    int64_t at = 0;
    for (int64_t i = 0; i < s->experts; i++) {
        int64_t e = s->descending ? s->experts - 1 - i : i, len = blocks[e] * s->block_m;
        for (int64_t b = 0; b < blocks[e]; b++)
            rt->expert_ids[at / s->block_m + b] = (int32_t)e;
        for (int64_t j = 0; j < len; j++)
            rt->sorted[at + j] = j < rt->loads[e]
                                     ? rt->valid[rt->first[e] + j]
                                     : moe_padding_id(s, j, j == len - 1);
        at += len;
    }
}

/* Points p (op, groups, m, topk, block_m and the routing arrays) at rt. */
static inline void moe_routing_problem(const struct moe_routing *rt, const struct moe_spec *s,
                                       struct gg_problem *p)
{
    p->op = GG_OP_MOE_SORTED;
    p->groups = s->experts;
    p->m = s->tokens;
    p->topk = s->topk;
    p->block_m = s->block_m;
    p->sorted_len = rt->sorted_len;
    p->sorted_ids = rt->sorted;
    p->expert_ids = rt->expert_ids;
    p->group_lens = rt->loads;
}

static inline void moe_routing_free(struct moe_routing *rt)
{
    free(rt->valid);
    free(rt->sorted);
    free(rt->expert_ids);
    memset(rt, 0, sizeof *rt);
}

#endif /* MOE_ROUTING_H */

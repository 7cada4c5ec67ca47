/*
 * gg_suite_gen.c — the generator of the SNR suite (corpus/suite): cases built from the published
 * configurations of real MoE models and one small dense model, over expert-parallel degree,
 * routing, op, phase and every dtype recipe each kernel family supports, with group sizes drawn
 * from a seeded routing model. A pure function of the tables below: every run writes the same
 * bytes, so the committed corpus can be checked against a fresh generation.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "fuzz/suite/gg_suite.h"

const char *const gg_suite_tier_names[GG_SUITE_TIERS] = {"quick", "release", "stress"};
enum tier { TIER_QUICK = 0, TIER_RELEASE, TIER_STRESS };

/* Mixture-of-experts models: hidden size, expert intermediate size, routed experts, top-k. */
struct moe_model {
    const char *name, *slug;
    int64_t hidden, inter, experts, topk;
};
static const struct moe_model MOE[] = {
    {"deepseek-v3", "dsv3", 7168, 2048, 256, 8},
    {"qwen3-235b-a22b", "qwen3", 4096, 1536, 128, 8},
    {"gpt-oss-20b", "gptoss20b", 2880, 2880, 32, 4},
    {"gpt-oss-120b", "gptoss120b", 2880, 2880, 128, 4},
    {"mixtral-8x7b", "mixtral", 4096, 14336, 8, 2},
};
#define N_MOE ((int)(sizeof MOE / sizeof MOE[0]))

/* The dense model whose projections exercise the batched and small-M paths. */
static const char DENSE_NAME[] = "llama-3.2-1b", DENSE_SLUG[] = "llama1b";
#define DENSE_HIDDEN 2048
#define DENSE_INTER 8192

/* Tokens in flight: a decode step and a prefill chunk (all tokens of the EP group). */
enum phase { DECODE = 0, PREFILL, N_PHASES };
static const char *const PHASE_NAMES[] = {"decode", "prefill"};
static const int64_t PHASE_TOKENS[] = {32, 4096};

enum routing { BALANCED = 0, SKEWED, EXTREME, N_ROUTINGS };
static const char *const ROUTING_NAMES[] = {"balanced", "skewed", "extreme"};

static const int EPS[] = {1, 8};
#define N_EPS 2

/*
 * Dtype recipes. "e5m2" is the hybrid recipe of FP8 training: the first operand (the gradient
 * dY in dgrad and wgrad) in e5m2, the second in e4m3 (no kernel multiplies e5m2 by e5m2). Each
 * names the kernel of its family that a case runs on by default (the CPU
 * kernels; `ggfuzz suite --kernel` runs the same cases on others) and the ops it applies to:
 * MX scales blocks along K, so MX-FP8 is forward only (gg_kernel.h).
 */
enum recipe { R_BF16 = 0, R_E4M3, R_E5M2, R_MXFP8, R_A8W8, N_RECIPES };
struct recipe_def {
    const char *name;
    const char *ab;       /* "a=.. b=.." of the dtypes line */
    const char *scaling;
    const char *grouped_kernel, *batched_kernel; /* NULL: the family has no such recipe */
};
static const struct recipe_def RECIPES[] = {
    [R_BF16] = {"bf16", "a=bf16 b=bf16", "none", "grouped_bf16_cpu_tiled", "batched_bf16_cpu_tiled"},
    [R_E4M3] = {"e4m3", "a=e4m3 b=e4m3", "tensor", "grouped_fp8_cpu_tiled", NULL},
    [R_E5M2] = {"e5m2", "a=e5m2 b=e4m3", "tensor", "grouped_fp8_cpu_tiled", NULL},
    [R_MXFP8] = {"mxfp8", "a=e4m3 b=e4m3", "mx rule=floor", "mx_e4m3_cpu_grouped", NULL},
    [R_A8W8] = {"a8w8", "a=e4m3 b=e4m3", "block128", NULL, "batched_a8w8_cpu_tiled"},
};

/* Grouped ops of the MoE grid, with the recipes each one is run in. */
static const enum gg_op GROUPED_OPS[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD,
                                         GG_OP_GROUPED_WGRAD};
static const char *const GROUPED_OP_SHORT[] = {"fwd", "dgrad", "wgrad"};
#define N_GROUPED_OPS 3
static int recipe_applies(enum recipe r, int op_index)
{
    if (!RECIPES[r].grouped_kernel)
        return 0;
    return r != R_MXFP8 || GROUPED_OPS[op_index] == GG_OP_GROUPED_FWD;
}

/*
 * The quick tier: decode steps at the real N and K, picked so that every model, op, recipe,
 * routing and both EP degrees appear while the whole tier runs in minutes on two CPU cores.
 * Generating a weight matrix dominates a CPU run, so the picks keep the experts that hold tokens
 * few (extreme routing, or EP 8 where a rank holds E/8 experts) and wgrad (whose output covers
 * every local expert) on the models with the fewest local weights.
 */
struct quick_pick {
    const char *slug;
    int ep;
    enum routing routing;
    int op_index;
    enum recipe recipe;
};
static const struct quick_pick QUICK[] = {
    {"dsv3", 8, EXTREME, 0, R_BF16},
    {"qwen3", 8, EXTREME, 0, R_MXFP8},
    {"qwen3", 8, SKEWED, 1, R_BF16},
    {"gptoss20b", 8, BALANCED, 0, R_E4M3},
    {"gptoss20b", 8, SKEWED, 1, R_E5M2},
    {"gptoss20b", 8, BALANCED, 2, R_BF16},
    {"gptoss20b", 1, EXTREME, 0, R_E5M2},
    {"gptoss20b", 8, EXTREME, 2, R_E5M2},
    {"gptoss120b", 8, SKEWED, 0, R_MXFP8},
    {"gptoss120b", 1, EXTREME, 1, R_E4M3},
    {"mixtral", 8, BALANCED, 0, R_BF16},
    {"mixtral", 1, EXTREME, 1, R_E4M3},
    {"mixtral", 8, SKEWED, 2, R_E4M3},
};
#define N_QUICK ((int)(sizeof QUICK / sizeof QUICK[0]))

/* Dense-model cases: batched projections (gate and up share a batch of two) and the small-M
   MX-FP8 path (M = 1 and 16 take the GEMV kernel, 64 the tiled one). */
struct dense_proj {
    const char *name;
    int64_t batch, n, k;
};
static const struct dense_proj DENSE_PROJ[] = {
    {"gate_up", 2, DENSE_INTER, DENSE_HIDDEN},
    {"down", 1, DENSE_HIDDEN, DENSE_INTER},
};
static const int64_t DENSE_SMALL_M[] = {1, 16, 64};

/* ---- output ------------------------------------------------------------------------------ */

/* A generated case: its file name, text, and the tiers that hold it. */
struct gen {
    const char *root;
    struct gg_suite_counts *counts;
    char *err;
    size_t err_len;
};

static uint64_t name_seed(const char *name)
{
    return XXH3_64bits(name, strlen(name)) & 0xffffffffu;
}

/* Appends "V" or "V*R" items of lens[0..n) (runs of equal values joined) to buf. */
static void append_lens(char *buf, size_t len, const int64_t *lens, int64_t n)
{
    size_t at = strlen(buf);
    for (int64_t g = 0; g < n && at < len;) {
        int64_t run = 1;
        while (g + run < n && lens[g + run] == lens[g])
            run++;
        int w = run > 1 ? snprintf(buf + at, len - at, " %lld*%lld", (long long)lens[g], (long long)run)
                        : snprintf(buf + at, len - at, " %lld", (long long)lens[g]);
        at += w > 0 ? (size_t)w : 0;
        g += run;
    }
}

/* Parses text (which gg_case_parse checks), adds the metadata and saves name.case into each tier
   of the mask: the canonical form, so the files are what gg_case_format prints. */
static enum gg_status emit(struct gen *gn, unsigned tiers, const char *name, const char *text,
                           const char *suite_meta, const char *note)
{
    struct gg_case c;
    enum gg_status st = gg_case_parse(text, strlen(text), name, &c, gn->err, gn->err_len);
    if (st != GG_OK)
        return st;
    for (int t = 0; t < GG_SUITE_TIERS && st == GG_OK; t++) {
        if (!(tiers & (1u << t)))
            continue;
        char meta[512], path[4096];
        snprintf(meta, sizeof meta, "%s tier=%s", suite_meta, gg_suite_tier_names[t]);
        st = gg_case_set_meta(&c, "suite", meta);
        if (st == GG_OK)
            st = gg_case_set_meta(&c, "expect", "class=pass");
        if (st == GG_OK && note)
            st = gg_case_set_meta(&c, "note", note);
        if (st != GG_OK) {
            snprintf(gn->err, gn->err_len, "%s: out of memory", name);
            break;
        }
        snprintf(path, sizeof path, "%s/%s/%s.case", gn->root, gg_suite_tier_names[t], name);
        if ((st = gg_case_save(&c, path, gn->err, gn->err_len)) == GG_OK && gn->counts)
            gn->counts->cases[t]++;
    }
    gg_case_free(&c);
    return st;
}

/* ---- the routing model ------------------------------------------------------------------- */

/*
 * Group sizes of the experts held by EP rank 0 (experts 0 .. E/ep-1) when each of tokens picks
 * topk distinct experts:
 *   balanced  every expert equally likely;
 *   skewed    expert e has popularity 1 + 3·u_e³ (u_e uniform from the seed): the hottest expert
 *             about 2.3x the mean, a mild imbalance;
 *   extreme   every token picks the same topk experts and the others get nothing. The suite
 *             models the rank that holds them: the hot experts are drawn among the local ones
 *             (all local experts when the rank holds fewer than topk).
 * Each token draws without replacement, proportionally to popularity, from stream
 * GG_STREAM_ROUTING of seed (element = token, draw = slot), so the sizes are a pure function
 * of the arguments. Pure arithmetic on the 53-bit uniforms: the same on every host.
 */
static enum gg_status route(const struct moe_model *m, int ep, enum routing r, int64_t tokens,
                            uint64_t seed, int64_t *lens)
{
    int64_t e_all = m->experts, e_local = m->experts / ep;
    memset(lens, 0, (size_t)e_local * sizeof *lens);
    if (r == EXTREME) {
        /* A seeded partial shuffle of the local experts; its first min(topk, E/ep) are hot. */
        int64_t *order = malloc((size_t)e_local * sizeof *order);
        if (!order)
            return GG_E_NOMEM;
        for (int64_t e = 0; e < e_local; e++)
            order[e] = e;
        int64_t hot = m->topk < e_local ? m->topk : e_local;
        for (int64_t j = 0; j < hot; j++) {
            int64_t pick = j + (int64_t)(gg_rng_uniform(seed, GG_STREAM_ROUTING, 0, (uint32_t)j) *
                                         (double)(e_local - j));
            int64_t tmp = order[j];
            order[j] = order[pick];
            order[pick] = tmp;
            lens[order[j]] = tokens;
        }
        free(order);
        return GG_OK;
    }
    double *w = malloc((size_t)e_all * sizeof *w);
    char *taken = malloc((size_t)e_all);
    if (!w || !taken) {
        free(w);
        free(taken);
        return GG_E_NOMEM;
    }
    double total = 0;
    for (int64_t e = 0; e < e_all; e++) {
        double u = gg_rng_uniform(seed, GG_STREAM_ROUTING, (uint64_t)e, 0);
        w[e] = r == SKEWED ? 1.0 + 3.0 * u * u * u : 1.0;
        total += w[e];
    }
    for (int64_t t = 0; t < tokens; t++) {
        memset(taken, 0, (size_t)e_all);
        double left = total;
        for (int64_t s = 0; s < m->topk; s++) {
            double x = gg_rng_uniform(seed, GG_STREAM_ROUTING, (uint64_t)(e_all + t),
                                      (uint32_t)s) * left;
            int64_t pick = -1;
            for (int64_t e = 0; e < e_all; e++) {
                if (taken[e])
                    continue;
                pick = e; /* the last free expert absorbs rounding at the end of the walk */
                if (x < w[e])
                    break;
                x -= w[e];
            }
            taken[pick] = 1;
            left -= w[pick];
            if (pick < e_local)
                lens[pick]++;
        }
    }
    free(w);
    free(taken);
    return GG_OK;
}

/* ---- the grids --------------------------------------------------------------------------- */

/* The output of a grouped op in recipe r: bf16 activations, fp32 weight gradients. */
static const char *grouped_out(int op_index)
{
    return GROUPED_OPS[op_index] == GG_OP_GROUPED_WGRAD ? "f32" : "bf16";
}

/* The data of a grouped case: activations and gradients normal(0,1); weights uniform with the
   same role in the error model, because a weight bank is most of the generated elements and a
   uniform costs one counter draw where a normal costs six (outputs, sums over K, are close to
   normal either way). */
static const char *grouped_data(int op_index)
{
    return GROUPED_OPS[op_index] == GG_OP_GROUPED_WGRAD ? "a=normal(0,1) b=normal(0,1)"
                                                        : "a=normal(0,1) b=uniform(-1,1)";
}

/* Text of a grouped case with W [groups, n, k] and the given group sizes. */
static void grouped_text(char *buf, size_t len, int op_index, enum recipe r, int64_t groups,
                         const int64_t *lens, int64_t n, int64_t k, uint64_t seed)
{
    snprintf(buf, len,
             "ggfuzz-case 1\nop %s\nkernel %s\ndtypes %s c=%s\nscaling %s\ngroups %lld\n"
             "group_lens",
             gg_op_name(GROUPED_OPS[op_index]), RECIPES[r].grouped_kernel, RECIPES[r].ab,
             grouped_out(op_index), RECIPES[r].scaling, (long long)groups);
    append_lens(buf, len, lens, groups);
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, "\nn %lld\nk %lld\ndata %s\nseed 0x%llx\n", (long long)n,
             (long long)k, grouped_data(op_index), (unsigned long long)seed);
}

static unsigned moe_tiers(const struct moe_model *m, int ep, enum routing rt, int op_index,
                          enum recipe r, enum phase ph)
{
    unsigned tiers = 1u << TIER_RELEASE;
    for (int i = 0; i < N_QUICK && ph == DECODE; i++)
        if (!strcmp(QUICK[i].slug, m->slug) && QUICK[i].ep == ep && QUICK[i].routing == rt &&
            QUICK[i].op_index == op_index && QUICK[i].recipe == r)
            tiers |= 1u << TIER_QUICK;
    return tiers;
}

/* The MoE grid: model x EP x routing x op x phase x recipe. W is the up projection of each
   expert, [E/ep, intermediate, hidden]: fwd reduces over hidden, dgrad over intermediate, wgrad
   over the tokens of each expert. */
static enum gg_status moe_grid(struct gen *gn)
{
    enum gg_status st = GG_OK;
    int64_t *lens = malloc(256 * sizeof *lens);
    char *text = malloc(1 << 16);
    if (!lens || !text) {
        free(lens);
        free(text);
        snprintf(gn->err, gn->err_len, "out of memory");
        return GG_E_NOMEM;
    }
    for (int mi = 0; mi < N_MOE && st == GG_OK; mi++) {
        const struct moe_model *m = &MOE[mi];
        for (int ei = 0; ei < N_EPS && st == GG_OK; ei++)
            for (int rt = 0; rt < N_ROUTINGS && st == GG_OK; rt++)
                for (int ph = 0; ph < N_PHASES && st == GG_OK; ph++) {
                    int ep = EPS[ei];
                    char rname[128];
                    snprintf(rname, sizeof rname, "%s_ep%d_%s_%s", m->slug, ep, ROUTING_NAMES[rt],
                             PHASE_NAMES[ph]);
                    uint64_t rseed = name_seed(rname);
                    if ((st = route(m, ep, (enum routing)rt, PHASE_TOKENS[ph], rseed, lens)) != GG_OK) {
                        snprintf(gn->err, gn->err_len, "out of memory");
                        break;
                    }
                    for (int oi = 0; oi < N_GROUPED_OPS && st == GG_OK; oi++)
                        for (int r = 0; r < N_RECIPES && st == GG_OK; r++) {
                            if (!recipe_applies((enum recipe)r, oi))
                                continue;
                            char name[160], meta[400];
                            snprintf(name, sizeof name, "%s_ep%d_%s_%s_%s_%s", m->slug, ep,
                                     ROUTING_NAMES[rt], GROUPED_OP_SHORT[oi], PHASE_NAMES[ph],
                                     RECIPES[r].name);
                            grouped_text(text, 1 << 16, oi, (enum recipe)r, m->experts / ep, lens,
                                         m->inter, m->hidden, name_seed(name));
                            snprintf(meta, sizeof meta,
                                     "model=%s ep=%d routing=%s phase=%s tokens=%lld topk=%lld "
                                     "experts=%lld proj=up recipe=%s routing_seed=0x%llx",
                                     m->name, ep, ROUTING_NAMES[rt], PHASE_NAMES[ph],
                                     (long long)PHASE_TOKENS[ph], (long long)m->topk,
                                     (long long)m->experts, RECIPES[r].name,
                                     (unsigned long long)rseed);
                            st = emit(gn, moe_tiers(m, ep, (enum routing)rt, oi, (enum recipe)r,
                                                    (enum phase)ph),
                                      name, text, meta, NULL);
                        }
                }
    }
    free(lens);
    free(text);
    return st;
}

/* The dense model: batched projections in each batched recipe and phase, and the small-M
   MX-FP8 path at decode sizes. The quick tier takes the batched decode cases and the smallest
   and largest M of the small-M path (one case for each of its two kernels). */
static enum gg_status dense_grid(struct gen *gn)
{
    enum gg_status st = GG_OK;
    char text[1024], name[160], meta[400];
    for (size_t pi = 0; pi < sizeof DENSE_PROJ / sizeof DENSE_PROJ[0] && st == GG_OK; pi++) {
        const struct dense_proj *pr = &DENSE_PROJ[pi];
        for (int ph = 0; ph < N_PHASES && st == GG_OK; ph++)
            for (int r = 0; r < N_RECIPES && st == GG_OK; r++) {
                if (!RECIPES[r].batched_kernel)
                    continue;
                snprintf(name, sizeof name, "%s_%s_batched_%s_%s", DENSE_SLUG, pr->name,
                         PHASE_NAMES[ph], RECIPES[r].name);
                snprintf(text, sizeof text,
                         "ggfuzz-case 1\nop batched\nkernel %s\ndtypes %s c=bf16\nscaling %s\n"
                         "batch %lld\nm %lld\nn %lld\nk %lld\nlayout b=nk\n"
                         "data a=normal(0,1) b=uniform(-1,1)\nseed 0x%llx\n",
                         RECIPES[r].batched_kernel, RECIPES[r].ab, RECIPES[r].scaling,
                         (long long)pr->batch, (long long)PHASE_TOKENS[ph], (long long)pr->n,
                         (long long)pr->k, (unsigned long long)name_seed(name));
                snprintf(meta, sizeof meta,
                         "model=%s ep=1 routing=none phase=%s tokens=%lld proj=%s recipe=%s",
                         DENSE_NAME, PHASE_NAMES[ph], (long long)PHASE_TOKENS[ph], pr->name,
                         RECIPES[r].name);
                unsigned tiers = (1u << TIER_RELEASE) | (ph == DECODE ? 1u << TIER_QUICK : 0u);
                st = emit(gn, tiers, name, text, meta, NULL);
            }
        for (size_t mi = 0; mi < sizeof DENSE_SMALL_M / sizeof DENSE_SMALL_M[0] && st == GG_OK;
             mi++) {
            int64_t m = DENSE_SMALL_M[mi];
            snprintf(name, sizeof name, "%s_%s_dense_m%lld_mxfp8", DENSE_SLUG, pr->name,
                     (long long)m);
            snprintf(text, sizeof text,
                     "ggfuzz-case 1\nop dense\nkernel %s\ndtypes %s c=bf16\nscaling %s\nm %lld\n"
                     "n %lld\nk %lld\ndata a=normal(0,1) b=uniform(-1,1)\nseed 0x%llx\n",
                     m <= 16 ? "mx_e4m3_cpu_gemv" : "mx_e4m3_cpu_tiled", RECIPES[R_MXFP8].ab,
                     RECIPES[R_MXFP8].scaling, (long long)m, (long long)pr->n, (long long)pr->k,
                     (unsigned long long)name_seed(name));
            snprintf(meta, sizeof meta,
                     "model=%s ep=1 routing=none phase=decode tokens=%lld proj=%s recipe=mxfp8",
                     DENSE_NAME, (long long)m, pr->name);
            unsigned tiers = (1u << TIER_RELEASE) | (m != 16 ? 1u << TIER_QUICK : 0u);
            st = emit(gn, tiers, name, text, meta, NULL);
        }
    }
    return st;
}

/*
 * The stress tier: DeepSeek-V3 without expert parallelism, whose 256-expert weight bank is past
 * 2^31 elements (up projection, W [256, 2048, 7168]: 3.76e9) and, fused with the gate
 * (W [256, 4096, 7168]: 7.5e9 elements), past 2^32 bytes in every recipe. Only the first and/or
 * the last expert hold a decode step's tokens, so the offsets of the last one cross both limits
 * while the host generates two experts' weights: the pages of the others are never touched.
 */
struct stress_case {
    const char *proj;
    int64_t n;
    int op_index;
    enum recipe recipe;
    int first; /* 1: the first expert holds tokens too */
};
static const struct stress_case STRESS[] = {
    {"up", 2048, 0, R_BF16, 0},     {"up", 2048, 1, R_BF16, 1},   {"up", 2048, 0, R_E4M3, 1},
    {"up", 2048, 1, R_E5M2, 0},     {"gate_up", 4096, 0, R_E4M3, 0},
    {"gate_up", 4096, 0, R_MXFP8, 1}, {"gate_up", 4096, 1, R_E4M3, 1},
    {"gate_up", 4096, 0, R_BF16, 0},
};

static enum gg_status stress_grid(struct gen *gn)
{
    const struct moe_model *m = &MOE[0];
    enum gg_status st = GG_OK;
    int64_t lens[256];
    char text[1024], name[160], meta[400];
    for (size_t i = 0; i < sizeof STRESS / sizeof STRESS[0] && st == GG_OK; i++) {
        const struct stress_case *s = &STRESS[i];
        memset(lens, 0, sizeof lens);
        lens[m->experts - 1] = PHASE_TOKENS[DECODE];
        if (s->first)
            lens[0] = PHASE_TOKENS[DECODE] / 2 + 3; /* not a tile multiple: a row tail too */
        snprintf(name, sizeof name, "%s_%s_%s_%s_%s", m->slug, s->proj,
                 GROUPED_OP_SHORT[s->op_index], RECIPES[s->recipe].name,
                 s->first ? "first_last" : "last");
        grouped_text(text, sizeof text, s->op_index, s->recipe, m->experts, lens, s->n, m->hidden,
                     name_seed(name));
        snprintf(meta, sizeof meta,
                 "model=%s ep=1 routing=%s phase=decode tokens=%lld experts=%lld proj=%s "
                 "recipe=%s",
                 m->name, s->first ? "first_last" : "last", (long long)PHASE_TOKENS[DECODE],
                 (long long)m->experts, s->proj, RECIPES[s->recipe].name);
        char note[256];
        snprintf(note, sizeof note,
                 "W holds %lld x %lld x %lld = %.3g elements; the last expert's weights start at "
                 "element %lld",
                 (long long)m->experts, (long long)s->n, (long long)m->hidden,
                 (double)m->experts * (double)s->n * (double)m->hidden,
                 (long long)((m->experts - 1) * s->n * m->hidden));
        st = emit(gn, 1u << TIER_STRESS, name, text, meta, note);
    }
    return st;
}

/* ---- directories ------------------------------------------------------------------------- */

/* Creates dir (one level) and removes the *.case files in it. */
static enum gg_status prepare_dir(const char *dir, char *err, size_t err_len)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create: %s", dir, strerror(errno));
        return GG_E_IO;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_len, "%s: cannot open: %s", dir, strerror(errno));
        return GG_E_IO;
    }
    enum gg_status st = GG_OK;
    for (struct dirent *e; st == GG_OK && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0) {
            snprintf(err, err_len, "%s/%s: cannot remove: %s", dir, e->d_name, strerror(errno));
            st = GG_E_IO;
        }
    }
    closedir(d);
    return st;
}

enum gg_status gg_suite_generate(const char *root, struct gg_suite_counts *counts, char *err,
                                 size_t err_len)
{
    char dir[8192];
    if (mkdir(root, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create: %s", root, strerror(errno));
        return GG_E_IO;
    }
    for (int t = 0; t < GG_SUITE_TIERS; t++) {
        snprintf(dir, sizeof dir, "%s/%s", root, gg_suite_tier_names[t]);
        enum gg_status st = prepare_dir(dir, err, err_len);
        if (st != GG_OK)
            return st;
    }
    struct gg_suite_counts local = {{0}};
    struct gen gn = {root, counts ? counts : &local, err, err_len};
    memset(gn.counts, 0, sizeof *gn.counts);
    enum gg_status st = moe_grid(&gn);
    if (st == GG_OK)
        st = dense_grid(&gn);
    if (st == GG_OK)
        st = stress_grid(&gn);
    return st;
}

/*
 * gg_gen_int.h — internal to fuzz/: what the case generator (gg_generate.c) shares with its
 * strategies (gg_strategy_*.c): counter-based draws, the configurations the kernel accepts, and
 * helpers that build a case step by step.
 */
#ifndef GG_GEN_INT_H
#define GG_GEN_INT_H

#include "fuzz/gen/gg_gen.h"

/* ---- draws ------------------------------------------------------------------------------- */

/* Draw j of attempt `stream` of case i: gg_rng_u64(seed, stream, i, j), j counting up. */
struct gen_rng {
    uint64_t seed, stream, i;
    uint32_t j;
};

uint64_t gen_u64(struct gen_rng *r);
/* Uniform in [lo, hi] (rejection sampling, unbiased); lo when hi <= lo. */
int64_t gen_range(struct gen_rng *r, int64_t lo, int64_t hi);
/* 1 with probability p. */
int gen_chance(struct gen_rng *r, double p);
/* floor(exp(U(log lo, log(hi + 1)))) clamped to [lo, hi]; lo >= 1. */
int64_t gen_log_range(struct gen_rng *r, int64_t lo, int64_t hi);
/* One of the n values. */
int64_t gen_pick(struct gen_rng *r, const int64_t *v, int n);

/* ---- what the kernel accepts --------------------------------------------------------------- */

/* Options a configuration's kernel knows: it refuses an invalid value of the key. */
enum gen_opt {
    GEN_OPT_SPLIT_K = 1u << 0,   /* split_k, and split_k = 2 is accepted */
    GEN_OPT_STREAMS = 1u << 1,   /* streams, and streams = 2 is accepted */
    GEN_OPT_THRESHOLD = 1u << 2, /* threshold (small-group limit of the streams dispatch) */
    GEN_OPT_WORKERS = 1u << 3,   /* workers, and workers = 2 is accepted */
    GEN_OPT_LENS_FROM = 1u << 4  /* lens_from (0: device group arrays, 1: host) */
};

/* One configuration (op, dtype tuple, recipe, layout, bias) the kernel supports on a small
   probe problem, with the options it knows and, for batched and dense, the row counts M of the
   probe menu it accepts (m_lo .. m_hi). */
struct gen_config {
    enum gg_op op;
    enum gg_dtype a, b, c, bias;
    enum gg_scaling scaling;
    enum gg_layout layout;
    unsigned opts;
    int64_t m_lo, m_hi;
    /* The smallest M > 0 of the probe menu the kernel took (0: only M = 0), and, when every
       M > 0 it took shares a factor that every M > 0 it refused lacks (a kernel that wants M a
       multiple of 16), that factor; else 1. */
    int64_t m_first, m_align;
    /* Per freedom of gg_freedoms (index), the edge classes this configuration's supports()
       took on the probe problem (offsets and group sizes: every class, supports() cannot see
       them). */
    unsigned freedom_ok[GG_FREEDOMS_MAX];
};

/* The capability table of gg_gen.h. */
struct gg_gen_caps {
    struct gen_config *v; /* owned */
    int n;
    unsigned ops; /* GG_OP_BIT mask of the ops of v */
};

/* Upper bound of M recorded for configurations accepting every M of the probe menu. */
#define GEN_M_UNBOUNDED ((int64_t)1 << 30)

/* ---- the state of one attempt -------------------------------------------------------------- */

struct gen {
    const struct gg_gen_config *cfg;
    const struct gg_gen_caps *caps;
    struct gen_rng r;
    int64_t tile_m, tile_n, tile_k; /* the kernel's tiles (64, 64, 128 when it has none) */
    int64_t max_bytes;              /* memory bound of a case */
    const struct gen_config *conf;  /* the configuration drawn for the case */
    int nomem;                      /* sticky: an allocation failed while building */
    int probing;                    /* the capability probe: a probe death refuses, not admits */
    int died;                       /* sticky while probing: the probe process died */
};

/* The state of attempt `stream` of case i (gg_generate.c). */
struct gen gen_make(const struct gg_gen_config *cfg, const struct gg_gen_caps *caps,
                    uint64_t seed, uint64_t stream, uint64_t i);
/* 1 when the runner would run c: it passes gg_case_check, the kernel supports it (op, problem,
   mutant) and the runner's estimate plus the workspace is at most max_bytes (0: no bound); or,
   outside the capability probe, when g->cfg->probe's process died on it. c is expanded on
   success. */
int gen_admit(struct gen *g, struct gg_case *c, int64_t max_bytes);
/* The capabilities of a call: cfg->caps, or probed into *own (release with
   gen_caps_release()). */
enum gg_status gen_caps_of(const struct gg_gen_config *cfg, struct gg_gen_caps *own,
                           const struct gg_gen_caps **caps, char *err, size_t err_len);
void gen_caps_release(struct gg_gen_caps *caps);
/* gg_generate() with the capabilities at hand (c initialised by the callee). */
enum gg_status gen_draw(const struct gg_gen_config *cfg, const struct gg_gen_caps *caps,
                        uint64_t seed, uint64_t i, struct gg_case *c, char *err,
                        size_t err_len);

/* Sets op, dtypes, recipe, layout, bias and data formats of c from configuration k. */
void gen_apply_config(struct gg_case *c, const struct gen_config *k);
/* 1 for grouped fwd, dgrad and wgrad. */
int gen_is_grouped(enum gg_op op);
/* v clamped into [lo, hi]. */
int64_t gen_clamp(int64_t v, int64_t lo, int64_t hi);
/* M for configuration k near v (k NULL: v): clamped into [m_lo, m_hi] and rounded to a
   multiple of m_align within them. */
int64_t gen_config_m(const struct gen_config *k, int64_t v);
/* A configuration whose op is in op_mask (drawn uniformly among the kernel's ops in the mask,
   then among that op's configurations); any op when the mask has none. Applies it to c (op,
   dtypes, recipe, layout, bias, data formats) and records it in g->conf. */
void gen_use_config(struct gen *g, struct gg_case *c, unsigned op_mask);
/* 1 when the configuration drawn knows option opt. */
int gen_knows(const struct gen *g, unsigned opt);
/* Sets option key (replacing an earlier value). */
void gen_set_opt(struct gen *g, struct gg_case *c, const char *key, int64_t value);
/* Draws the dispatch options the configuration knows: each one with probability p (split_k in
   2..max_split, streams 2..8 with a threshold, workers 2..8, lens_from 1). */
void gen_dispatch(struct gen *g, struct gg_case *c, double p, int64_t max_split);

/* Appends `repeat` groups of size value (merged with an equal previous item). */
void gen_push(struct gen *g, struct gg_case *c, int64_t value, int64_t repeat);
/* Replaces the group sizes by lens[0..n) (run-length encoded). */
void gen_set_lens(struct gen *g, struct gg_case *c, const int64_t *lens, int64_t n);
/*
 * Maps group sizes lens[0..n) onto the case's op: grouped ops take them as they are; moe_sorted
 * takes them as expert loads (topk a power of two dividing their sum, m = sum / topk);
 * batched takes n (at most 16) batches of M = the largest size, dense M = that size; M is
 * clamped into what the configuration accepts.
 */
void gen_shape(struct gen *g, struct gg_case *c, const int64_t *lens, int64_t n);

/* A size near the tile grid or small: tile neighbours q·tile + r (|r| <= 2), tiny sizes, or
   uniform in [1, hi]; always in [1, hi]. */
int64_t gen_dim(struct gen *g, int64_t tile, int64_t hi);
/* A group size for targeted cases: mostly 1..160, tile neighbours of tile_m. */
int64_t gen_rows(struct gen *g);
/* N and K for a small case: N up to 192, K up to 384 or a tile and a half (K rounded to what
   the recipe needs). */
void gen_small_nk(struct gen *g, struct gg_case *c);
/* K rounded up to a multiple of the MX block for E8M0 recipes (0 stays 0). */
int64_t gen_fix_k(const struct gg_case *c, int64_t k);

/* Data recipes: plain (normal or uniform), or any distribution safe for format fmt. */
struct gg_dist gen_dist_plain(struct gen *g);
struct gg_dist gen_dist_any(struct gen *g, enum gg_dtype fmt);

/*
 * Special codes aimed at the nan class. gen_dist_codes: codes() for format fmt with about 0.5,
 * 2 or 6 special values per reduction vector of c (its shape drawn), the fraction rounded to
 * one significant digit: some rows and columns stay free of Inf and NaN, so that the finite
 * specials (-0, ±max, ±min subnormal) are judged too. gen_codes: both operands get codes and
 * the encoders stop saturating (sat none), so that ±Inf reaches e5m2, bf16 and f16 as Inf codes
 * and e4m3 as its NaN codes, and MX blocks keep their Inf and NaN elements under a finite scale
 * (under saturation ±Inf would become ±max, which codes() draws anyway, and MX blocks NaN
 * scales, which specials() and planted scales give).
 */
struct gg_dist gen_dist_codes(struct gen *g, const struct gg_case *c, enum gg_dtype fmt);
void gen_codes(struct gen *g, struct gg_case *c);

/*
 * Keeps the data within what the quantiser represents well, so that the source SNR judges the
 * kernel: the OCP floor rule of MX scales a block so that its largest code stands for
 * 448·2^floor(log2 amax) / 256 (e4m3) and clips the values above, which uniform data (amax near
 * the top of its binade) hits for about one value in ten and nearsat data (464, 480 above 448)
 * for most; such operands of an MX block scale with the floor rule become normal(0,1).
 * codes() under an MX recipe turns saturation off: saturated, the ceil rule makes a block
 * holding an Inf a 0xFE scale over ±max elements (6·2^127 or 448·2^127, past fp32), which a
 * correct weight-only (mx_b) kernel overflows when it dequantises the weights to fp32 where the
 * binary64 reference does not (the reason gen_plant avoids mx_b).
 */
void gen_fit_data(struct gg_case *c);

/* The placement of the inputs against their guard pages (gg_case.guard): the canary bands
   mostly, an input's end or start flush against an inaccessible page otherwise. */
void gen_place(struct gen *g, struct gg_case *c);

/*
 * Planted E8M0 edge codes (recipe mx): a fraction f of the scale codes of A and B become
 * 0x00, 0x01, 0xFE or 0xFF, on small data (normal(0, 1e-9), natural scales near 2^-37). Two
 * 0xFE codes meeting in one product overflow fp32 (2^254), and two such products of opposite
 * signs in one output turn a correct fp32 accumulator into NaN where the binary64 reference is
 * finite. With λ = (K/32)·(f/4)^2 such products per output, an output holds two with
 * probability about λ²/2, so f is chosen to keep the expected count over the case's outputs
 * below 1e-5: f = 4·(2e-5 / (outputs·(K/32)^2))^(1/4) rounded down to a short value of
 * 0.002 .. 0.05 (none below 0.002).
 * Not under mx_b: a kernel that dequantises the weights to fp32 before the product (as a
 * correct weight-only kernel may) overflows on 0xFE times an element of 2 or more, where the
 * binary64 reference does not, which is no fault of the kernel.
 * gen_plant_fraction() returns that f (0: do not plant); gen_plant() plants f or the value
 * below it.
 */
double gen_plant_fraction(const struct gg_case *c);
void gen_plant(struct gen *g, struct gg_case *c);

/* ---- freedoms of the ABI (gg_freedoms.c) --------------------------------------------------- */

/* The probe problem of configuration k with m rows (batched and dense): two groups of 16 rows,
   two experts of 8 tokens with topk 2, or m rows; N = K = 64 (gg_generate.c). */
void gen_probe_shape(struct gen *g, struct gg_case *c, const struct gen_config *k, int64_t m);
/* Fills k->freedom_ok: each class of each freedom of k's op, set on the probe problem of m rows,
   and asked of the kernel. */
void gen_freedoms_probe(struct gen *g, struct gg_case *c, struct gen_config *k, int64_t m);
/* The layout freedoms of a drawn case: half the cases keep the layouts their strategy drew;
   in the others each freedom the strategy left packed goes, with probability 2/3, to a class
   drawn among those the configuration takes (huge aside: the i64 strategy's). Under the uniform
   strategy the values are drawn uniformly instead (ld and stride up to 256 elements past packed,
   offsets 0..63), untargeted. */
void gen_freedoms_draw(struct gen *g, struct gg_case *c, int uniform);
/* Moves freedom i of c (a layout freedom of c's op) to class e: a value drawn in it (packed: 0),
   an explicit stride of the same operand moved along with its leading dimension. Returns 0, or
   -1 when no value of that class exists for c. */
int gen_freedom_set(struct gen *g, struct gg_case *c, int i, enum gg_edge e);
/* The classes freedom i of c may move to: packed and those the configuration takes (huge
   aside); 0 when i is not a layout freedom of c. */
unsigned gen_freedom_moves(const struct gen *g, const struct gg_case *c, int i);
/* The mutator's layout edit: one layout freedom of c (expanded) that can move, moved to a class
   it is not in. Returns 0, or -1 when none can. */
int gen_freedom_move(struct gen *g, struct gg_case *c);

/* ---- strategies (one file per fault class) ------------------------------------------------- */

void gen_strategy_zero(struct gen *g, struct gg_case *c);
void gen_strategy_i64(struct gen *g, struct gg_case *c);
void gen_strategy_alias(struct gen *g, struct gg_case *c);
void gen_strategy_snr(struct gen *g, struct gg_case *c);

#endif /* GG_GEN_INT_H */

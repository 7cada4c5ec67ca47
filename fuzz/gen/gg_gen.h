/*
 * gg_gen.h — public header of fuzz/gen/: drawing new cases (the strategies aimed at fault
 * classes), mutating corpus cases, and the structural features a campaign keeps for novelty.
 */
#ifndef GG_GEN_H
#define GG_GEN_H

#include "fuzz/run/gg_run.h"

/* ------------------------------------------------------------------------------------------ */
/* Case generation (gg_generate.c) and features (gg_features.c)                                */
/* ------------------------------------------------------------------------------------------ */

/* Fault classes a campaign aims at (a bit mask). */
enum gg_faults {
    GG_FAULTS_SNR = 1u << 0,   /* accuracy: K from tiny to large, tile tails, data recipes, specials;
                                  and special codes in one case in five of any class (nan) */
    GG_FAULTS_I64 = 1u << 1,   /* offsets past 2^31 elements or 2^32 bytes, few groups with tokens */
    GG_FAULTS_ZERO = 1u << 2,  /* empty groups in every position, K = 0 wgrad groups, all empty */
    GG_FAULTS_ALIAS = 1u << 3, /* split-K, streams, workspace poisons, repeated runs */
    GG_FAULTS_ALL = 0xFu
};
/* Parses "snr,i64,zero,alias" or "all"; 0 on error. */
unsigned gg_faults_parse(const char *s);

enum gg_strategy {
    GG_STRATEGY_TARGETED = 0, /* draw from strategies aimed at each selected fault class */
    GG_STRATEGY_UNIFORM       /* shapes and data drawn uniformly from the same space */
};

/* What a kernel (with a mutant) supports among the configurations the generator draws, probed
   with supports() on small problems. Opaque; freed by gg_gen_caps_free(). */
struct gg_gen_caps;

struct gg_gen_config {
    const struct gg_kernel *kernel; /* the kernel under test: cases are drawn among what it supports */
    const char *mutant;             /* written into every case ("" or NULL: none; a list "a,b"
                                       of the kernel's mutants: all of them) */
    unsigned faults;                /* enum gg_faults mask (0: all) */
    enum gg_strategy strategy;
    int64_t max_host_bytes;         /* cases estimated above this are not drawn (0: 2 GiB) */
    const struct gg_gen_caps *caps; /* (optional) gg_gen_caps_probe() of this kernel and mutant,
                                       so that calls skip the probing; NULL: probe every call */
    struct gg_probe *probe;         /* (optional) asks the kernel's supports() and
                                       workspace_bytes() in a co-process (gg_probe_ask); NULL:
                                       calls them in this process */
};

/* Probes cfg->kernel with cfg->mutant (cfg->caps is ignored). Returns GG_E_UNSUPPORTED when
   the kernel supports none of the configurations, GG_E_INVAL for a mutant list with an item it
   does not have, an empty or a repeated item, or longer than GG_CASE_NAME_MAX - 1, GG_E_ABI
   when cfg->probe's process died on a probe problem (err says how and on which problem). */
enum gg_status gg_gen_caps_probe(const struct gg_gen_config *cfg, struct gg_gen_caps **caps,
                                 char *err, size_t err_len);
void gg_gen_caps_free(struct gg_gen_caps *caps);

/*
 * Case number i of a campaign with seed: a pure function of (config, seed, i), so a campaign is
 * reproducible and any case can be drawn again from its number. The case is initialised by the
 * callee (free with gg_case_free) and is supported by the kernel, or is one on which cfg->probe's
 * process died (gg_probe_deaths counts them): a kernel fault for the process that runs the case
 * to show. Returns GG_E_UNSUPPORTED when the kernel supports nothing the configuration can draw.
 */
enum gg_status gg_generate(const struct gg_gen_config *cfg, uint64_t seed, uint64_t i,
                           struct gg_case *c, char *err, size_t err_len);
/* A mutation of parent (case number i of the campaign): one or a few structural or data edits
   aimed at the selected fault classes. Same contract as gg_generate(). */
enum gg_status gg_mutate(const struct gg_gen_config *cfg, const struct gg_case *parent,
                         uint64_t seed, uint64_t i, struct gg_case *c, char *err, size_t err_len);

/* Structural features of a case run (for novelty), plus its margins. */
#define GG_FEATURES_MAX 48
struct gg_features {
    uint32_t v[GG_FEATURES_MAX]; /* hashed feature values, sorted, unique */
    int n;
    double snr_margin_db;        /* worst group SNR minus its threshold (+inf when exact) */
    int offset_bits;             /* bits of the largest element or byte offset the case reaches */
};
/* Features of case c on kernel k (tile residues per dimension, group pattern, offset-bit bucket,
   dispatch options, dtype tuple) and, when r is not NULL, its margins. */
void gg_case_features(const struct gg_case *c, const struct gg_kernel *k,
                      const struct gg_run_result *r, struct gg_features *f);

#endif /* GG_GEN_H */

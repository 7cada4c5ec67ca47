/*
 * gg_fuzz.h — public header of fuzz/: the case model and case files, the kernel registry, host
 * buffers with guard bands, the case runner and the corpus.
 */
#ifndef GG_FUZZ_H
#define GG_FUZZ_H

#include <stdint.h>
#include <stddef.h>

#include "kernels/gg_kernel.h"
#include "oracles/gg_oracle.h"
#include "reference/gg_ref.h"

#define GG_VERSION "0.1.0"

/* ------------------------------------------------------------------------------------------ */
/* Case model (gg_case.c) and case files (gg_case_io.c)                                          */
/* ------------------------------------------------------------------------------------------ */

/* Version of the case-file format, including the data generator (gg_rng.c, gg_dist.c). */
#define GG_CASE_VERSION 1
#define GG_CASE_MAX_OPTS 8
#define GG_CASE_NAME_MAX 64
#define GG_CASE_ID_HEX 32

/* One item of a group-size list: `V`, `V*R`, or `rand(LO,HI)*R` (R defaults to 1). Random
   sizes are drawn from stream GG_STREAM_GROUPS of the case seed, element = group index. */
struct gg_group_item {
    int is_rand;
    int64_t value;    /* constant items */
    int64_t lo, hi;   /* random items, inclusive */
    int64_t repeat;   /* ≥ 1 */
};

/* An `@key rest-of-line` metadata line, kept verbatim (not part of the case's identity). */
struct gg_meta {
    char *key;  /* without the '@' */
    char *text; /* the rest of the line, trimmed */
};

/*
 * A case: everything needed to reproduce one kernel run. Owns items, lens, offs and meta; freed
 * by gg_case_free(). Zero strides and leading dimensions mean packed (the default).
 */
struct gg_case {
    enum gg_op op;
    char kernel[GG_CASE_NAME_MAX];
    int n_opts;
    char opt_key[GG_CASE_MAX_OPTS][32];
    int64_t opt_value[GG_CASE_MAX_OPTS];
    char mutant[GG_CASE_NAME_MAX]; /* "" when none */
    enum gg_dtype a_dtype, b_dtype, c_dtype, acc_dtype;
    enum gg_scaling scaling;
    enum gg_mx_rule mx_rule;       /* MX scale rule of the quantiser */
    enum gg_sat quant_sat;         /* saturation of the input quantiser (default finite) */
    enum gg_layout b_layout;
    int64_t groups;                /* groups (grouped), experts (moe_sorted), batch, 1 (dense) */
    struct gg_group_item *items;   /* grouped ops: group sizes; moe_sorted: expert loads */
    int n_items;
    int64_t m, n, k;               /* m: batched, dense and moe_sorted (tokens) only */
    int64_t topk, block_m;         /* moe_sorted only */
    enum gg_dtype bias_dtype;      /* GG_DTYPE_NONE: no bias */
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int64_t off_a, off_b, off_c;   /* element offsets of each operand in its allocation */
    struct gg_dist dist_a, dist_b, dist_bias; /* dist_bias.fmt is bias_dtype */
    double plant_e8m0;             /* fraction of MX scale codes replaced by edge codes */
    uint64_t seed;
    /* Derived by gg_case_expand(): group_lens (groups) and group_offs (groups+1). */
    int64_t *lens, *offs;
    struct gg_meta *meta;
    int n_meta;
};

/* A case with every field at its default (op grouped_fwd, bf16 everywhere, f32 accumulation,
   normal(0,1) data, no groups). Free with gg_case_free(). */
void gg_case_init(struct gg_case *c);
void gg_case_free(struct gg_case *c);
/* Deep copy; dst is overwritten (not freed first). */
enum gg_status gg_case_copy(struct gg_case *dst, const struct gg_case *src);
/* Expands items into lens/offs (also for ungrouped ops, where it allocates nothing). */
enum gg_status gg_case_expand(struct gg_case *c, char *err, size_t err_len);
/* Checks the semantic rules (sizes ≥ 0, known dtypes, MX K % 32, lens count = groups, ...).
   Pure; message names the key at fault. */
enum gg_status gg_case_check(const struct gg_case *c, char *err, size_t err_len);
/* Fills p from c (after gg_case_expand). p points into c and opts; both must outlive p. */
void gg_case_problem(const struct gg_case *c, struct gg_kopt opts[GG_CASE_MAX_OPTS],
                     struct gg_problem *p);
/* Value of metadata key, or NULL. */
const char *gg_case_meta(const struct gg_case *c, const char *key);
/* Sets (replaces or appends) metadata key. */
enum gg_status gg_case_set_meta(struct gg_case *c, const char *key, const char *text);


/*
 * Parses case text. name is used in messages ("name:line: message"). On error, returns
 * GG_E_PARSE (or GG_E_INVAL for a semantic error, GG_E_NOMEM) with the message in err and c left
 * initialised and empty. On success c is checked and expanded.
 */
enum gg_status gg_case_parse(const char *text, size_t len, const char *name, struct gg_case *c,
                             char *err, size_t err_len);
/* Reads and parses a file. */
enum gg_status gg_case_load(const char *path, struct gg_case *c, char *err, size_t err_len);
/* Canonical text: header, input lines in fixed order with defaults left out, then metadata.
   *out is malloc'd, freed by the caller. with_meta = 0 prints the identity lines only. */
enum gg_status gg_case_format(const struct gg_case *c, int with_meta, char **out);
/* Identity: 32 hex digits of XXH3-128 of the canonical input lines. */
void gg_case_id(const struct gg_case *c, char id[GG_CASE_ID_HEX + 1]);
/* Atomic write: temporary file in the same directory, fsync, rename. */
enum gg_status gg_case_save(const struct gg_case *c, const char *path, char *err, size_t err_len);
/* Appends metadata key (even when present; gg_case_set_meta replaces). key is [A-Za-z0-9_.-]+,
   text UTF-8 without control characters but tab; text is stored trimmed. */
enum gg_status gg_case_add_meta(struct gg_case *c, const char *key, const char *text, char *err,
                                size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Kernel registry (gg_registry.c): the only global state besides the log callback              */
/* ------------------------------------------------------------------------------------------ */

/* Adds the in-tree kernels once; later calls do nothing. */
void gg_registry_init(void);
/* Validates and adds a kernel (ABI version, required slots, unique name). */
enum gg_status gg_registry_add(const struct gg_kernel *k, char *err, size_t err_len);
size_t gg_registry_count(void);
const struct gg_kernel *gg_registry_at(size_t i);
const struct gg_kernel *gg_registry_find(const char *name);
/* Removes every kernel after the first count (undoes the kernels of a refused plugin). */
void gg_registry_truncate(size_t count);

/* ------------------------------------------------------------------------------------------ */
/* Plugins (gg_plugin.c)                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * Loads a kernel plugin (the contract at the end of gg_kernel.h) after the in-tree kernels: all
 * of its kernels are registered or none. The ABI version is checked before any plugin code is
 * called; each descriptor is validated by gg_registry_add(). A refused plugin is closed again;
 * an accepted one stays loaded until the process exits (the registry points into it), and
 * loading it again does nothing. Returns GG_OK, or a status and "PATH: problem" in err: GG_E_IO
 * when it cannot be opened, GG_E_ABI for a missing symbol, an ABI mismatch, a refused descriptor
 * or no kernel at all, or the status the plugin's register function returned.
 */
enum gg_status gg_plugin_load(const char *path, char *err, size_t err_len);
/* Loads each path of a colon-separated list (GGFUZZ_PLUGINS) in order, skipping empty entries;
   stops at the first refusal. */
enum gg_status gg_plugin_load_list(const char *paths, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Host buffers with guard pages and canary bands (gg_hostbuf.c)                                */
/* ------------------------------------------------------------------------------------------ */

/* Layout: [PROT_NONE page][canary band][data ... ][canary band][PROT_NONE page]. The data is
   reserved (MAP_NORESERVE) and not touched: pages a case never writes cost no memory. */
/* Large enough that an overrun by a whole 64x64 fp32 tile lands in the band, not the page. */
#define GG_CANARY_BYTES 65536

struct gg_hostbuf {
    uint8_t *map;   /* whole mapping */
    size_t map_len;
    uint8_t *data;  /* bytes usable bytes */
    size_t bytes;
    uint8_t *pre, *post; /* canary bands, pre_len and post_len bytes */
    size_t pre_len, post_len;
    int owns;       /* 1: gg_hostbuf_free() unmaps */
};
enum gg_status gg_hostbuf_alloc(struct gg_hostbuf *b, size_t bytes, char *err, size_t err_len);
/* 0 when both canary bands are intact; else 1 and *pre = 1 if the band before was hit. */
int gg_hostbuf_guard_hit(const struct gg_hostbuf *b, int *pre);
void gg_hostbuf_free(struct gg_hostbuf *b);

/* ------------------------------------------------------------------------------------------ */
/* Running a case (gg_materialise.c, gg_runner.c)                                               */
/* ------------------------------------------------------------------------------------------ */

struct gg_run_opts {
    int64_t max_mem_bytes;  /* refuse cases whose estimate exceeds this; 0: available memory */
    int64_t certify_samples; /* MPFR-certified reference samples per case (0: none) */
    const char *kernel;     /* override the case's kernel (NULL: keep) */
    const char *mutant;     /* override the case's mutant (NULL: keep) */
};

/* Bytes a case needs on the host (operands, guards, reference), touched memory only. */
int64_t gg_case_mem_estimate(const struct gg_case *c);

struct gg_run_result {
    char kernel[GG_CASE_NAME_MAX]; /* the kernel and mutant that ran (after overrides) */
    char mutant[GG_CASE_NAME_MAX];
    struct gg_verdict verdict;
    struct gg_compare cmp;   /* owned; freed by gg_run_result_free() */
    int compared;            /* cmp is valid */
    int64_t mem_bytes;       /* estimate used for the admission check */
    double kernel_seconds;   /* wall time of the first kernel run */
    double total_seconds;
};
void gg_run_result_free(struct gg_run_result *r);

/*
 * Runs one case in this process: checks the kernel supports it, estimates memory, materialises
 * inputs with guard bands and poison, runs the kernel (twice with different workspace poisons,
 * three times when the outputs differ), computes the reference and applies every oracle.
 * Returns GG_OK with a verdict (which may be a fault), or a status and message for a case that
 * could not be run (unknown kernel, unsupported problem, out of memory).
 */
enum gg_status gg_run_case(const struct gg_case *c, const struct gg_run_opts *o,
                           struct gg_run_result *r, char *err, size_t err_len);

/*
 * gg_run_case() in a child process (gg_isolate.c): a kernel that kills its process gives a
 * `crash` verdict, one that runs past timeout_s (0: no limit) is killed and gives `timeout`;
 * the caller goes on either way. Forks without exec: for CPU kernels.
 */
enum gg_status gg_run_case_isolated(const struct gg_case *c, const struct gg_run_opts *o,
                                    double timeout_s, struct gg_run_result *r, char *err,
                                    size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Corpus (gg_corpus.c)                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Case files under path: path itself when it is a file, else every *.case below it (recursive,
   sorted, dot-files skipped). *files is freed by gg_corpus_list_free(). */
enum gg_status gg_corpus_list(const char *path, char ***files, size_t *count, char *err,
                              size_t err_len);
void gg_corpus_list_free(char **files, size_t count);
/* 1 when verdict v reproduces expect ("class=C [sig=S]"; NULL means class=pass): the class
   matches and, when the expectation names a signature, the signature matches too. */
int gg_expect_holds(const char *expect, const struct gg_verdict *v);

#endif /* GG_FUZZ_H */

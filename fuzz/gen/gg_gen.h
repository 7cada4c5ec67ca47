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
   dispatch options, dtype tuple, the layout freedoms away from packed) and, when r is not NULL,
   its margins. */
void gg_case_features(const struct gg_case *c, const struct gg_kernel *k,
                      const struct gg_run_result *r, struct gg_features *f);

/* ------------------------------------------------------------------------------------------ */
/* The freedoms of the kernel ABI and their edge classes (gg_freedoms.c)                       */
/* ------------------------------------------------------------------------------------------ */

/* What a freedom of a problem sets. */
enum gg_field {
    GG_FIELD_LD,     /* a leading dimension: the pitch of an operand's rows */
    GG_FIELD_STRIDE, /* a batch, group or expert stride: the pitch of an operand's matrices */
    GG_FIELD_OFFSET, /* an operand's offset in its allocation: the alignment of its pointer */
    GG_FIELD_GROUPS  /* the group sizes (expert loads for moe_sorted) */
};

/*
 * Edge classes. A layout freedom (ld, stride, offset) is in one value class (packed, pad_small,
 * pad_tile, or none of them for a stride below packed) and, away from packed, in the
 * misalignment class of its pitch or pointer; huge is a class of reach, counted whatever the
 * value. Group sizes have classes of their own. A case counts in every class it is in.
 */
enum gg_edge {
    GG_EDGE_PACKED,    /* ld = row length, stride = rows x ld; offset: the pointer 16-byte aligned */
    GG_EDGE_PAD_SMALL, /* 1 to 63 elements past packed (one, an odd count, to the next 16 bytes) */
    GG_EDGE_PAD_TILE,  /* 64 elements or more past packed, the reach not huge */
    GG_EDGE_MIS1,      /* away from packed, the pitch (or the pointer) lies an odd number of */
    GG_EDGE_MIS2,      /* bytes, 2 mod 4, 4 mod 8 or 8 mod 16 off 16-byte alignment (MIS1 only */
    GG_EDGE_MIS4,      /* for 1-byte and 4-bit types, MIS2 for 2-byte ones up: a pitch is a   */
    GG_EDGE_MIS8,      /* whole number of elements) */
    GG_EDGE_HUGE,      /* ld x (rows - 1) or stride x (last block) reaches 2^31 elements or bytes */
    GG_EDGE_NO_EMPTY,  /* group sizes: every group holds rows */
    GG_EDGE_EMPTY_FIRST,
    GG_EDGE_EMPTY_LAST,
    GG_EDGE_EMPTY_INSIDE,
    GG_EDGE_ALL_EMPTY,
    GG_EDGE_MANY, /* 64 groups or more */
    GG_EDGE_COUNT
};
#define GG_EDGE_BIT(e) (1u << (unsigned)(e))
/* The classes of layout freedoms and of group sizes. */
#define GG_EDGES_LAYOUT (GG_EDGE_BIT(GG_EDGE_HUGE + 1) - 1u)
#define GG_EDGES_GROUPS (GG_EDGE_BIT(GG_EDGE_COUNT) - GG_EDGE_BIT(GG_EDGE_NO_EMPTY))

/* The dimension a freedom's operand has rows or row elements of (V: moe_sorted's T x topk
   output rows). */
enum gg_dim { GG_DIM_M, GG_DIM_N, GG_DIM_K, GG_DIM_V };

/* One freedom: a field of one operand of one op (and layout of B, for batched). */
struct gg_freedom {
    const char *name;   /* "<op>.<field>", e.g. "grouped_fwd.ldb", "batched.stride_b_kn" */
    enum gg_op op;
    int layout;         /* batched: the layout of B the row is for; -1 any */
    int operand;        /* 0 A, 1 B, 2 C; -1 group sizes */
    enum gg_field field;
    enum gg_dim rows, len; /* the operand's rows and row length (ld and stride rows) */
    int strided;        /* the operand is one matrix per group, batch or expert */
    const char *what;   /* the tensor as gg_kernel.h names it */
};

/* The table: every freedom a gg_problem and the case model let a caller choose. */
#define GG_FREEDOMS_MAX 64
extern const struct gg_freedom gg_freedoms[];
extern const int gg_n_freedoms;

/* "packed", "pad_small", "pad_tile", "mis1".."mis8", "huge", "no_empty", ... */
const char *gg_edge_name(enum gg_edge e);
/* The classes a case can put freedom f in when its operand has type t. */
unsigned gg_freedom_edges(const struct gg_freedom *f, enum gg_dtype t);
/* The fuzzer_stats key of freedom i: "freedom_" and its name with '.' as '_'. */
void gg_freedom_key(int i, char *buf, size_t len);
/* For every freedom i, the classes case c is in (0 for freedoms of another op or layout).
   c need not be expanded. Returns 0, or -1 when c's geometry does not check (all 0 then). */
int gg_freedoms_of_case(const struct gg_case *c, unsigned edges[GG_FREEDOMS_MAX]);

/* A campaign's coverage of the freedoms: cases that ran (not refused) per freedom and class,
   and, from the capability probe, the classes each freedom can take with the kernel's
   configurations and those its supports() took on at least one of them. */
struct gg_freedom_tally {
    int64_t ran[GG_FREEDOMS_MAX][GG_EDGE_COUNT];
    unsigned edges[GG_FREEDOMS_MAX];    /* 0: the kernel has no configuration with the freedom */
    unsigned accepted[GG_FREEDOMS_MAX]; /* ⊆ edges */
};
/* Clears t and fills its edges and accepted from caps (NULL: nothing applies). */
void gg_freedom_tally_init(struct gg_freedom_tally *t, const struct gg_gen_caps *caps);
/* Counts case c, which ran. */
void gg_freedom_tally_add(struct gg_freedom_tally *t, const struct gg_case *c);

/* A cell of a freedom's line: a count, or one of these. */
#define GG_FREEDOM_ABSENT (-2)  /* the class does not apply */
#define GG_FREEDOM_REFUSED (-1) /* the kernel's supports() refused it on every configuration */
/* The cells of freedom i in t (a count where a case ran, else REFUSED or 0). */
void gg_freedom_cells(const struct gg_freedom_tally *t, int i, int64_t cells[GG_EDGE_COUNT]);
/* "packed=12 pad_small=3 mis1=refused ...": the present cells in class order. */
void gg_freedom_cells_format(const int64_t cells[GG_EDGE_COUNT], char *buf, size_t len);
/* Reads such a line back (cells it does not name are ABSENT); -1 for a malformed one. */
int gg_freedom_cells_parse(const char *text, int64_t cells[GG_EDGE_COUNT]);
/* The line of two shards' lines a and b summed class by class (a count over refused, refused
   only where both refuse) into out; -1 when either is malformed. */
int gg_freedom_cells_fold(const char *a, const char *b, char *out, size_t len);

/* The cells of a coverage table counted: those exercised (a case ran), those the kernel takes
   that no case exercised (never drawn), and those it refuses. */
struct gg_freedom_sum {
    int exercised, never, refused;
};
void gg_freedom_sum_add(struct gg_freedom_sum *s, const int64_t cells[GG_EDGE_COUNT]);
/* Appends "NAME class class" for the classes of cells in state (0: never drawn, or
   GG_FREEDOM_REFUSED) to the NUL-terminated list in buf, after a "; " when it is not empty;
   returns how many classes it named. */
int gg_freedom_list_add(char *buf, size_t len, const char *name,
                        const int64_t cells[GG_EDGE_COUNT], int64_t state);

#endif /* GG_GEN_H */

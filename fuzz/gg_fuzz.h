/*
 * gg_fuzz.h — public header of fuzz/: the case model and case files, the kernel registry, host
 * buffers with guard bands, the case runner and the corpus.
 */
#ifndef GG_FUZZ_H
#define GG_FUZZ_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

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

/* Where the harness places the inputs A and B in their guarded buffers. */
enum gg_guard {
    GG_GUARD_BAND = 0, /* a canary band on each side (writes into it are seen; reads are not) */
    GG_GUARD_END,      /* the input ends flush against an inaccessible page: an over-read faults */
    GG_GUARD_START     /* the input starts right after an inaccessible page: an under-read faults */
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
    char mutant[GG_CASE_NAME_MAX]; /* "" when none; "a,b": a list of the kernel's mutants */
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
    enum gg_guard guard;           /* placement of A and B against their guard pages */
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
 * loading it again does nothing. The plugin is first loaded in a forked child with a time limit
 * (GGFUZZ_PLUGIN_TIMEOUT seconds, default 10, 0: none), so a plugin whose initialisers or
 * register function crash, exit or hang is refused without harm to this process. Returns GG_OK,
 * or a status and "PATH: problem" in err: GG_E_IO when it cannot be opened, GG_E_ABI for a
 * missing symbol, an ABI mismatch, a refused descriptor, no kernel at all, or a trial that died
 * on a signal, exited or ran past the limit ("PATH: gg_plugin_register died on signal 11
 * (Segmentation fault)"), GG_E_INVAL for a malformed GGFUZZ_PLUGIN_TIMEOUT, or the status the
 * plugin's register function returned.
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
    int owns;       /* 1: gg_hostbuf_free() unmaps (or gives the mapping back to its pool) */
    int sealed;     /* some data pages were protected: never reused from a pool */
    int flush;      /* laid out by gg_hostbuf_alloc_flush (pooled apart from band buffers) */
};

/*
 * A pool of small guarded mappings, reused from case to case so that a tiny case costs no
 * mmap, page faults or munmap (whose TLB shootdowns dominate a tiny case otherwise). Taken
 * buffers look exactly like fresh ones: data zeroed, both canary bands written anew. Mappings
 * with data past GG_HOSTPOOL_MAX_BYTES or with sealed pages are unmapped instead. Owned by one
 * thread (a worker process has one); zero-initialise, release with gg_hostpool_drain().
 */
#define GG_HOSTPOOL_SLOTS 16
#define GG_HOSTPOOL_MAX_BYTES ((size_t)1 << 20)
struct gg_hostpool {
    struct gg_hostbuf slot[GG_HOSTPOOL_SLOTS];
    int n;
};
void gg_hostpool_drain(struct gg_hostpool *pool);

/* A guarded buffer of bytes bytes, taken from pool when one fits (pool may be NULL). */
enum gg_status gg_hostbuf_alloc(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                char *err, size_t err_len);
/* Alignment of the first byte of a buffer placed flush against a guard page: a buffer of bytes
   bytes placed at the end leaves (-bytes mod GG_GUARD_ALIGN) bytes of canary before the page,
   the longest over-read that goes unseen. */
#define GG_GUARD_ALIGN 64
/* A buffer whose data ends (at_end) at, or starts right after, an inaccessible page, with no
   canary band between: the first byte past the end (or before the start) faults. On the other
   side the rest of the data's pages is slack, then another inaccessible page. Taken from pool
   when one of its flush mappings has room (pool may be NULL); a pooled slack is not rewritten. */
enum gg_status gg_hostbuf_alloc_flush(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                      int at_end, char *err, size_t err_len);
/* 0 when both canary bands are intact; else 1 and *pre = 1 if the band before was hit. */
int gg_hostbuf_guard_hit(const struct gg_hostbuf *b, int *pre);
/* Gives b back to pool (when it qualifies and there is room) or unmaps it. */
void gg_hostbuf_free(struct gg_hostpool *pool, struct gg_hostbuf *b);

/* ------------------------------------------------------------------------------------------ */
/* Running a case (gg_materialise.c, gg_runner.c)                                               */
/* ------------------------------------------------------------------------------------------ */

struct gg_run_opts {
    int64_t max_mem_bytes;  /* refuse cases whose estimate exceeds this; 0: available memory */
    int64_t certify_samples; /* MPFR-certified reference samples per case (0: none) */
    const char *kernel;     /* override the case's kernel (NULL: keep) */
    const char *mutant;     /* override the case's mutant or mutant list (NULL: keep; "none":
                               the correct kernel) */
    struct gg_hostpool *pool; /* (optional) host buffers are reused from here; this process only */
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
 * the caller goes on either way. A child killed from outside (SIGKILL this function did not
 * send: kill -9, the OOM killer) gives GG_E_IO and a message saying so, not a verdict. Forks
 * without exec: for CPU kernels.
 */
enum gg_status gg_run_case_isolated(const struct gg_case *c, const struct gg_run_opts *o,
                                    double timeout_s, struct gg_run_result *r, char *err,
                                    size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Corpus (gg_corpus.c)                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Case files under path: path itself when it is a file, else every *.case below it (recursive,
   sorted, dot-files skipped). *files is freed by gg_corpus_list_free(). Fails only when path
   itself cannot be read: an entry below it that cannot be (a directory without permission, a
   dangling link) is left out, and when skipped is not NULL it is named with the reason in
   *skipped ("PATH: Permission denied"; *n_skipped entries, freed by gg_corpus_list_free()). */
enum gg_status gg_corpus_list(const char *path, char ***files, size_t *count, char ***skipped,
                              size_t *n_skipped, char *err, size_t err_len);
void gg_corpus_list_free(char **files, size_t count);
/* Creates directory path and its missing parents (mode 0755); 0, or -1 with errno set. */
int gg_mkdir_p(const char *path);

/* Temporary files of atomic writes (gg_tmpfile.c). A temporary file not modified for this long
   was abandoned, whichever host wrote it: an atomic write takes milliseconds. */
#define GG_TMPFILE_STALE_S 3600.0
/* The temporary file an atomic write of path goes through, "PATH.tmp.HOST.PID" (malloc'd, the
   caller frees it; NULL when out of memory). */
char *gg_tmpfile_name(const char *path);
/* Removes the temporary files in dir (not below it) of atomic writes to files whose name ends
   in target_suffix (".case", "fuzzer_stats") whose writer is gone: written on this host (or
   naming no host) by a process that is no longer alive, or not modified for
   GG_TMPFILE_STALE_S. Returns how many it removed; a missing directory has none. */
int gg_tmpfile_sweep(const char *dir, const char *target_suffix);
/* 1 when verdict v reproduces expect ("class=C [sig=S] [runs=N]"; NULL means class=pass): the
   class matches (C may list alternatives, "nondeterminism|snr", for a race that can also be lost
   the same way twice) and, when the expectation names a signature, the signature matches too. */
int gg_expect_holds(const char *expect, const struct gg_verdict *v);
#define GG_EXPECT_MAX_RUNS 64
/* How many runs a replay may take to reproduce expect: its runs=N (a race that a run can miss),
   else 1. */
int gg_expect_runs(const char *expect);

/* ------------------------------------------------------------------------------------------ */
/* Findings store (gg_findings.c)                                                               */
/* ------------------------------------------------------------------------------------------ */

/* Copies the value of `key=` in a line of space-separated key=value fields (an @expect or
   @finding line) into out (cap bytes); 0 when the field is absent. */
int gg_meta_field(const char *text, const char *key, char *out, size_t cap);

/*
 * A findings directory keeps one case per signature: the file <class>-<16 hex of XXH3-64 of the
 * signature>.case holds the (smallest known) case with metadata lines
 *   @expect class=C sig=S          the verdict it reproduces
 *   @finding count=N first_seen=T last_seen=T seed=0x... kernel=K [mutant=M]
 * (T in UTC, ISO 8601; seed, kernel and mutant are those of the run that gave the stored case).
 * Writes are atomic (gg_case_save), and each read-modify-write of a finding holds an exclusive
 * flock(2) on <dir>/.lock, so several processes may share one directory: no file is torn and no
 * count is lost.
 */

/* Records finding c (the case that ran) with verdict v. A new signature writes a new file
   (*is_new = 1); a known one raises its count and last_seen, and replaces the stored case when c
   is smaller (fewer groups, then fewer output elements), keeping the stored metadata. dir is
   created when missing (one level). path (may be NULL) receives the file's path, path_len bytes
   at most. A pass verdict or a signature with blanks is refused (GG_E_INVAL). */
enum gg_status gg_findings_record(const char *dir, const struct gg_case *c,
                                  const struct gg_verdict *v, uint64_t campaign_seed, int *is_new,
                                  char *path, size_t path_len, char *err, size_t err_len);

/* Sets metadata line @key text on the stored file path of store dir, under the store's lock. */
enum gg_status gg_findings_tag(const char *dir, const char *path, const char *key,
                               const char *text, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Buckets (gg_buckets.c): one root cause above the signatures                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * A bucket stands for one bug. Its rule: two findings share a bucket when their cases,
 * minimised in bucket mode (gg_min_opts.bucket: class family kept, smallest sizes, simplest
 * grouped op, dtypes, placement and data), give the same signature up to its magnitude: the form
 *   family/kernel/dtypes/op/shape classes/group pattern/region
 * of the normal form (gg_bucket_form), with snr and nan as one family, "value". Beside its
 * one-file-per-signature
 * findings, the store keeps
 *   <dir>/buckets/<family>-<id>.case  the bucket's representative: its smallest normal-form
 *                                     case, its own @expect, and
 *     @bucket id=ID form=F first_seen=T seed=0x... kernel=K [mutant=M]
 * with ID the 16 hex digits of XXH3-64 of the form, and each member finding carries
 * @bucket id=ID. A bucket's count, first and last sighting are its members' (read back by
 * gg_buckets_scan, so a sighting writes one file, the member's).
 */
#define GG_BUCKET_ID_HEX 16
#define GG_BUCKETS_SUBDIR "buckets"

/* The family a bucket keeps of a class: "value" for snr and nan (wrong values: whether a wrong
   value is NaN depends on the data and on what a stray read finds), "memory" for crash and
   oob_write (a stray access: whether it lands in a guard band or in unmapped memory depends on
   the layout), "race" for nondeterminism, the class name otherwise. */
const char *gg_bucket_family(enum gg_class c);
/* The form of signature, given by normal-form case c (may be NULL): its class's family, the
   kernel, dtypes, op, shape classes (one and lt_tile read "small": a minimised size that cannot
   reach one element stays under a tile), group pattern and region (all, single_tile and
   scattered read "some": how many elements of a small case fail is no root cause); the magnitude
   dropped. A race (nondeterminism, or a normal form whose verdict changes from run to run) keeps
   race/kernel/input dtypes (it shows in whatever op, sizes and output the schedule allowed; two
   races of one kernel share a bucket); a crash the fault handler placed keeps
   memory/kernel/dtypes/op/region.
   When c's data still needs planted values (special codes, subnormals, near-max values,
   outliers, E8M0 edge scales: a decoding bug, shared by every op), where they landed decides
   the op, shape, groups and region that show it and which input does, so the form names the
   inputs' dtypes in name order: family/kernel/dtypes/planted. When an operand of c
   reaches past 2^31 elements or 2^32 bytes, where a wrapped address lands decides the class and
   the groups it hits (crash, oob_write, unwritten or wrong values), and the output dtype where it
   lands; the ops share an operand's address arithmetic: address/kernel/input dtypes/far operands
   (of a, b and c, those past the limit: "address/k/bf16-bf16/c"). */
void gg_bucket_form(const char *signature, const struct gg_case *c, char *form, size_t cap);
/* The operands of expanded-or-not case c that reach past 2^31 elements or 2^32 bytes (offset,
   leading dimension and stride included), as "a", "b", "c" letters in out (empty: none, or c
   invalid): such a bug needs 64-bit addressing, and where a wrapped address lands decides
   whether it shows as a crash, a write into a guard band, unwritten outputs or wrong values. */
void gg_bucket_far_operands(const struct gg_case *c, char out[4]);
/* The id of a form: 16 lower-case hex digits. */
void gg_bucket_id(const char *form, char id[GG_BUCKET_ID_HEX + 1]);

/* Files normal-form case rep, whose verdict gave signature rep_sig, as the representative of its
   bucket in store dir: a new bucket writes its file (*is_new = 1), a known one keeps the smaller
   case (with the first sighting of the older). The representative's @expect is rep_expect, or
   (NULL) class and signature of rep_sig. id receives the bucket's id. */
enum gg_status gg_bucket_file(const char *dir, const struct gg_case *rep, const char *rep_sig,
                              const char *rep_expect, uint64_t campaign_seed,
                              char id[GG_BUCKET_ID_HEX + 1], int *is_new, char *err,
                              size_t err_len);

/* One bucket of a store, as gg_buckets_scan() reads it. */
struct gg_bucket {
    char id[GG_BUCKET_ID_HEX + 1];
    char cls[32];                    /* the representative's class name */
    char form[GG_SIGNATURE_MAX];
    char rep_sig[GG_SIGNATURE_MAX];  /* the representative's own signature */
    char *path;                      /* the representative's file (absolute when resolvable) */
    int64_t groups, elems;           /* its size (groups, logical output elements) */
    long long members, count;        /* member signatures and their summed sightings */
    char first_seen[32], last_seen[32]; /* over the members ("" when none) */
};
/* A store's buckets, and its member findings: signature -> bucket id ("" for a finding not yet
   filed in a bucket). */
struct gg_bucket_list {
    struct gg_bucket *b;
    size_t n;
    struct gg_bucket_member {
        char *sig;
        char id[GG_BUCKET_ID_HEX + 1];
    } *m;
    size_t n_members;
    long long untriaged; /* member findings without a bucket */
};
/* Reads the buckets and members of store dir (a missing directory is an empty store). Buckets
   come most severe class first, then most sightings. Free with gg_buckets_free(). */
enum gg_status gg_buckets_scan(const char *dir, struct gg_bucket_list *l, char *err,
                               size_t err_len);
/* The bucket id of member signature sig, or NULL when it is not filed. */
const char *gg_buckets_of(const struct gg_bucket_list *l, const char *sig);
void gg_buckets_free(struct gg_bucket_list *l);

/* A set of known signatures, one per line in a text file ('#' comments, blank lines ignored;
   the first word of a line is the signature, the rest a free note); a known bucket is written
   "bucket-<id>". A findings directory is read as the set of its signatures and buckets. */
struct gg_sigset {
    char **sigs;
    size_t n;
};
/* Loads path (a file or a findings directory); a missing file is an empty set. Free with
   gg_sigset_free(). */
enum gg_status gg_sigset_load(const char *path, struct gg_sigset *s, char *err, size_t err_len);
int gg_sigset_has(const struct gg_sigset *s, const char *signature);
void gg_sigset_free(struct gg_sigset *s);

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
};

/* Probes cfg->kernel with cfg->mutant (cfg->caps is ignored). Returns GG_E_UNSUPPORTED when
   the kernel supports none of the configurations, GG_E_INVAL for a mutant list with an item it
   does not have, an empty or a repeated item, or longer than GG_CASE_NAME_MAX - 1. */
enum gg_status gg_gen_caps_probe(const struct gg_gen_config *cfg, struct gg_gen_caps **caps,
                                 char *err, size_t err_len);
void gg_gen_caps_free(struct gg_gen_caps *caps);

/*
 * Case number i of a campaign with seed: a pure function of (config, seed, i), so a campaign is
 * reproducible and any case can be drawn again from its number. The case is initialised by the
 * callee (free with gg_case_free) and is supported by the kernel. Returns GG_E_UNSUPPORTED when
 * the kernel supports nothing the configuration can draw.
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

/* ------------------------------------------------------------------------------------------ */
/* Minimiser (gg_minimize.c)                                                                    */
/* ------------------------------------------------------------------------------------------ */

struct gg_min_opts {
    double max_total_time_s;     /* stop after this long (0: 600 s) */
    int repeats;                 /* a step counts when the signature reproduces this many times of
                                    as many runs (0: 1; intermittent faults want 2 or more) */
    double timeout_s;            /* per run (0: 300 s) */
    struct gg_run_opts run;      /* kernel/mutant overrides, memory limit */
    const char *progress_path;   /* (optional) saved after each pass that shrank the case */
    const char *findings_dir;    /* (optional) a different fault met on the way is recorded here */
    /* Bucket mode (the normal form of triage): a step counts when the verdict keeps the class's
       family (gg_bucket_family), whatever the rest of the signature, and the passes try the
       smallest sizes and the simplest op, dtypes and input placement first, so that every case
       of one bug ends at one case. */
    int bucket;
    /* (optional, bucket mode) called with the signature of each case kept; non-zero stops the
       minimisation there (a signature already filed in a bucket). */
    int (*stop_at)(const char *signature, void *arg);
    void *stop_arg;
    /* (bucket mode) runs of the normal form after a fixpoint, every other one pinned to one CPU
       (and half as many of the case as found, for wrong values and workspace dependence, which
       a race lost the same way by every run of a small case shows as, whose minimisation also
       runs its first few passing candidates once more): a verdict that changes from run to run
       of one case (its inputs are fixed, so only the schedule can change it) marks it unstable,
       a race whatever class it showed as. */
    int stability_runs;
};

struct gg_min_stats {
    int rounds, attempts, kept, other_faults;
    int cache_hits;                    /* candidates answered from the cache of tested cases */
    int64_t groups_before, groups_after;
    int64_t elems_before, elems_after; /* logical output elements */
    double seconds;
    char signature[GG_SIGNATURE_MAX];  /* the final case's signature (bucket mode: it may differ
                                          from the target's, within its class) */
    int stopped_at;                    /* 1 when stop_at ended the minimisation */
    int fixpoint;                      /* 1 when a whole round kept nothing (not cut short) */
    int unstable;                      /* a stability run gave another verdict */
    unsigned classes_seen;             /* bit per class those runs gave (bit 0: a pass) */
};

/*
 * Shrinks c in place while the verdict keeps signature (every run in its own process, see
 * gg_run_case_isolated): delete groups (ddmin), unify groups, shrink N and K together, shrink each
 * size in tile coordinates (q·tile + r, q first), canonicalise leading dimensions, strides and
 * offsets, simplify the data towards small integers. Stops at a fixpoint or the time limit.
 * In bucket mode (o->bucket) the verdict need only keep signature's class, and each round starts
 * with every size at its smallest (one row, one granule, one tile) and ends with the grouped op
 * (fwd, dgrad, wgrad), the dtypes and the input placement at their simplest; its normal form is
 * then run o->stability_runs more times (st->unstable: a race).
 */
enum gg_status gg_minimize(struct gg_case *c, const char *signature, const struct gg_min_opts *o,
                           struct gg_min_stats *st, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Campaigns (gg_campaign.c), workers (gg_worker.c), statistics (gg_stats.c), self-test        */
/* (gg_selftest.c)                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Why a campaign ended. */
enum gg_stop {
    GG_STOP_NONE = 0,
    GG_STOP_TIME,    /* the time budget was spent */
    GG_STOP_RUNS,    /* the number of runs was reached */
    GG_STOP_FILE,    /* the stop file appeared */
    GG_STOP_SIGNAL,  /* the stop flag was raised (SIGINT, SIGTERM) */
    GG_STOP_FINDING, /* stop_after_findings new signatures were found */
    GG_STOP_ERROR    /* the campaign could not go on (no case can be drawn, workers do not start) */
};
/* "time budget", "runs", "stop file", "signal", "finding", "error", "none". */
const char *gg_stop_name(enum gg_stop s);

/* What a campaign did. Times are seconds since its start. */
struct gg_campaign_stats {
    enum gg_stop stop;
    uint64_t seed;
    double seconds;
    int64_t execs;              /* cases run to an outcome (replays, crashes and timeouts too) */
    int64_t replayed;           /* stored failures replayed first */
    int64_t possibly_fixed;     /* ... of which now pass */
    int64_t mutated;            /* cases drawn by mutating a corpus case (the rest: generated) */
    int64_t corpus_count;       /* cases kept: loaded from the corpus directories and added */
    int64_t new_units;          /* cases this campaign added to the corpus */
    int64_t features;           /* distinct features seen */
    int64_t faults_total;       /* runs with a fault verdict */
    int64_t faults[GG_CLASS_COUNT]; /* ... by class (index GG_CLASS_PASS unused) */
    int64_t unique_sigs;        /* distinct signatures found */
    int64_t new_sigs;           /* ... of which not in the known-signatures file */
    int64_t stored_sigs;        /* ... of which new to the artifacts directory */
    int64_t minimized;          /* signatures minimised */
    int64_t buckets;            /* distinct buckets (bugs) met: signatures filed in them */
    int64_t new_buckets;        /* ... of which not in the known file */
    int64_t untriaged;          /* distinct signatures met that are in no bucket yet */
    enum gg_class worst_new;    /* most severe class among the new signatures (PASS: none) */
    int64_t worker_restarts, timeouts, refused, errors;
    int64_t worker_kills;       /* workers killed from outside (SIGKILL the supervisor did not
                                   send: kill -9, the OOM killer): harness events, not findings */
    int64_t crashes_unconfirmed; /* cases whose worker died (or exited) and whose re-run in a
                                   fresh worker did not end the same way: not findings */
    double slowest_s;           /* slowest run to an outcome */
    double min_snr_margin_db;   /* smallest SNR margin of a passing run (+inf: none) */
    int max_offset_bits;        /* largest offset a case reached, in bits */
    double last_new_s, last_fault_s; /* -1 when none */
    /* The first new signature. */
    double first_finding_s;     /* -1 when none */
    int64_t first_finding_execs;
    enum gg_class first_class;
    char first_signature[GG_SIGNATURE_MAX];
    char first_path[1024];      /* its file in the artifacts directory */
    int64_t first_groups;       /* groups of the case that found it */
    int64_t first_groups_min;   /* groups after minimisation (-1: not minimised) */
};

struct gg_campaign_config {
    const char *kernel;              /* the kernel under test */
    const char *mutant;              /* NULL or "": the correct kernel */
    unsigned faults;                 /* enum gg_faults mask (0: all) */
    enum gg_strategy strategy;
    double max_total_time_s;         /* 0: no limit */
    int64_t max_runs;                /* 0: no limit */
    uint64_t seed;                   /* 0: chosen from the clock and the process id */
    int workers;                     /* 0: one per online CPU for CPU kernels, else 1 */
    double timeout_s;                /* per case (0: 10 s); a case past it runs once more with
                                        4x the limit in a fresh worker before it is a timeout */
    const char *const *corpus_dirs;  /* loaded first; the first receives new cases */
    int n_corpus_dirs;
    const char *artifacts_dir;       /* findings (NULL: ggfuzz-out/artifacts) */
    const char *stats_dir;           /* fuzzer_stats, plot_data, cur_input.<w> (NULL: the
                                        artifacts directory's parent) */
    const char *known_path;          /* (optional) signatures that do not count as new */
    const char *stop_file;           /* (optional) the campaign ends once this file exists */
    int no_minimize;
    double minimize_s;               /* budget per new signature (0: 30 s), capped by the time
                                        left */
    int stop_after_findings;         /* end after this many new signatures (0: never) */
    struct gg_run_opts run;          /* memory limit and certification (kernel, mutant unused) */
    const char *worker_exe;          /* ggfuzz binary started as `worker` (NULL: /proc/self/exe) */
    const char *const *plugins;      /* passed to each worker as --plugin */
    int n_plugins;
    double stats_interval_s;         /* fuzzer_stats and plot_data period (0: 1 s) */
    FILE *log;                       /* INFO, FAULT and final lines (NULL: silent) */
    int status_line;                 /* live status line on log: -1 when log is a terminal */
    const char *command_line;        /* (optional) recorded in fuzzer_stats */
    const volatile sig_atomic_t *stop_flag; /* (optional) non-zero ends the campaign cleanly */
    /* (optional) called at every statistics tick with the live worker process ids. */
    void (*on_tick)(const struct gg_campaign_stats *s, const int *worker_pids, int n_workers,
                    void *user);
    void *user;
};

/*
 * Runs a campaign: replays the stored failures (cases with a non-pass @expect for this kernel and
 * mutant) of the corpus and artifacts directories, then runs generated and mutated cases until a
 * limit, the stop flag or the stop file ends it. Every case runs in a worker process (`worker`
 * command of worker_exe); the campaign itself never runs a kernel. Each fault is recorded with
 * gg_findings_record() and each signature new to the artifacts directory is minimised. st is
 * filled also when the campaign ends early. Returns GG_OK when it ran (findings are in st), or a
 * status and message for a harness failure (bad directory, no worker would start).
 */
enum gg_status gg_campaign_run(const struct gg_campaign_config *cfg, struct gg_campaign_stats *st,
                               char *err, size_t err_len);

/* The loop of `ggfuzz worker`: announces itself on out_fd, then reads case requests from in_fd
   and answers each with the outcome of gg_run_case(), until end of file (GG_OK) or a broken
   pipe (GG_E_IO). */
enum gg_status gg_worker_main(int in_fd, int out_fd, char *err, size_t err_len);

struct gg_selftest_config {
    double per_mutant_s;             /* budget of each campaign (0: 20 s) */
    int64_t runs_per_mutant;         /* (optional) also end each campaign after this many cases:
                                        with one worker and a fixed seed the cases are the same
                                        on every machine, so a missed mutant is not a slow one */
    double minimize_s;               /* budget to minimise each finding (0: 30 s) */
    uint64_t seed;                   /* 0: chosen and printed */
    const char *kernel;              /* NULL: every registered kernel */
    int workers;                     /* as in gg_campaign_config */
    double timeout_s;
    const char *worker_exe;
    const char *const *plugins;
    int n_plugins;
    FILE *out;                       /* one line per mutant and per kernel (NULL: silent) */
    const volatile sig_atomic_t *stop_flag;
};

struct gg_selftest_result {
    int mutants, found;              /* mutants tried, and found */
    int kernels, clean;              /* correct kernels run, and without findings */
    int stopped;                     /* the stop flag ended it early */
};

/*
 * For every mutant of every kernel (or of cfg->kernel), a fresh campaign in temporary
 * directories that stops at the first finding; then every correct kernel for the same budget,
 * which must find nothing. The self-test passes when found == mutants and clean == kernels.
 */
enum gg_status gg_selftest_run(const struct gg_selftest_config *cfg, struct gg_selftest_result *res,
                               char *err, size_t err_len);

#endif /* GG_FUZZ_H */

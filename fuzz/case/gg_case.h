/*
 * gg_case.h — public header of fuzz/case/: the case model (gg_case.c), case files and a case's
 * identity (gg_case_io.c, gg_case_keys.c), the temporary files of atomic writes (gg_tmpfile.c)
 * and the file helpers every room shares (gg_files.c). A case is one problem with its data
 * recipes, kernel, mutant and metadata; everything else in fuzz/ reads and writes cases through
 * this header.
 */
#ifndef GG_CASE_H
#define GG_CASE_H

#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "kernels/gg_kernel.h"
#include "oracles/gg_oracle.h"
#include "reference/gg_ref.h"

#define GG_VERSION "0.1.0"

/* ------------------------------------------------------------------------------------------ */
/* Case model (gg_case.c) and case files (gg_case_io.c, gg_case_keys.c)                        */
/* ------------------------------------------------------------------------------------------ */

/* Version of the case-file format, including the data generator (gg_rng.c, gg_dist.c). */
#define GG_CASE_VERSION 1
#define GG_CASE_MAX_OPTS 8
#define GG_CASE_NAME_MAX 64
#define GG_CASE_ID_HEX 32
#define GG_CASE_FILE_MAX (64L << 20) /* bytes of a case file gg_case_load() accepts */

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
/* The shape summary "grouped_fwd bf16-bf16-bf16 G=4 M=192 N=256 K=512" of a case. */
void gg_case_shape(const struct gg_case *c, char *buf, size_t len);
/* Value of metadata key, or NULL. */
const char *gg_case_meta(const struct gg_case *c, const char *key);
/* Sets (replaces or appends) metadata key. */
enum gg_status gg_case_set_meta(struct gg_case *c, const char *key, const char *text);
/* Removes every metadata line whose key drop() says to drop (returns non-zero for). */
void gg_case_meta_drop(struct gg_case *c, int (*drop)(const char *key));


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
/* History: the cases a case must follow (gg_case_after.c)                                     */
/* ------------------------------------------------------------------------------------------ */

/* Cases that must run before c, in one process, for c's verdict to show: its @after lines. */
int gg_case_after_count(const struct gg_case *c);
/* Appends prior (its identity, not its metadata) as the next @after line of c. */
enum gg_status gg_case_after_add(struct gg_case *c, const struct gg_case *prior, char *err,
                                 size_t err_len);
/* Removes every @after line of c. */
void gg_case_after_clear(struct gg_case *c);
/* The @after cases of c in their order, parsed and expanded: *out (NULL when none) is freed with
   gg_case_after_free(*out, *n_out). name (c's file) is used in messages, which name the line. */
enum gg_status gg_case_after_cases(const struct gg_case *c, const char *name,
                                   struct gg_case **out, int *n_out, char *err, size_t err_len);
void gg_case_after_free(struct gg_case *cases, int n);

/* ------------------------------------------------------------------------------------------ */
/* Files, lines and directories (gg_files.c)                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Opens path (links followed) for reading when it is a regular file, without ever waiting: a
   FIFO, socket, device or directory is refused before anything could block on it. Every reader
   of a file that another process or a user may have placed opens it through here. Returns the
   descriptor (close-on-exec, reads blocking as usual) with its status in *sb (may be NULL); or
   -1 with "PATH: cannot read: REASON" in err ("not a regular file", or errno's text) and errno
   set: ENOENT for a missing path, EINVAL for one that is not a regular file. */
int gg_file_open(const char *path, struct stat *sb, char *err, size_t err_len);
/* Reads the whole of path, opened by gg_file_open(), into *out (malloc'd, NUL-terminated; the
   caller frees it), its length without the NUL into *out_len (may be NULL). A file longer than
   max bytes is refused (EFBIG) before it is read. Errors are "PATH: cannot read: REASON":
   GG_E_IO (errno as gg_file_open leaves it when the open failed), or GG_E_NOMEM. */
enum gg_status gg_file_read(const char *path, size_t max, char **out, size_t *out_len, char *err,
                            size_t err_len);
/* s without its leading and trailing white space: the trailing is cut in place. */
char *gg_trim(char *s);
/* Appends word to the shell command in buf (a blank first unless buf is empty), quoted so that
   a POSIX shell reads it back as that one word: as it is when it holds only characters no shell
   treats specially, else in single quotes (each quote written '\''). Returns 0, or -1 (buf
   unchanged) when it would not fit in len bytes. */
int gg_shell_word(char *buf, size_t len, const char *word);
/* "DIR/NAME" (malloc'd; NULL when out of memory). */
char *gg_path_join(const char *dir, const char *name);
/* 1 when path (links followed) is a directory, a regular file. */
int gg_path_is_dir(const char *path);
int gg_path_is_file(const char *path);
/* The names in dir, not hidden, that pass keep(dir, name), sorted; GG_E_IO ("DIR: cannot open:
   REASON") or GG_E_NOMEM. Free *names with gg_dir_list_free(). */
enum gg_status gg_dir_list(const char *dir, int (*keep)(const char *dir, const char *name),
                           char ***names, size_t *n, char *err, size_t err_len);
void gg_dir_list_free(char **names, size_t n);

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

/* An atomic write of path: gg_atomic_open() opens its temporary file (gg_tmpfile_name) for the
   caller to write through a->f; gg_atomic_commit() closes it (fsync first when durable) and
   renames it over path, or removes it when anything failed (the caller sets bad when its own
   writing failed, e.g. a serialiser's error, or calls gg_atomic_fail() right after a failed
   call so that its errno is the REASON). what names the file in messages,
   "PATH: cannot write WHAT: REASON" (what "" gives "PATH: cannot write: REASON"; REASON is
   errno's text, "Input/output error" only when no call said more); GG_E_IO, or GG_E_NOMEM when
   the name cannot be made. Nothing is left behind on failure. */
struct gg_atomic {
    FILE *f;
    char *tmp;
    const char *path;
    const char *what;
    int bad;
    int errnum; /* errno of the first failure gg_atomic_fail() recorded; 0: none known */
};
enum gg_status gg_atomic_open(struct gg_atomic *a, const char *path, const char *what, char *err,
                              size_t err_len);
/* Marks the write failed, keeping errno (when it is set) as the reason the commit reports. */
void gg_atomic_fail(struct gg_atomic *a);
/* fwrite of n bytes to a->f; a short write marks the write failed with its errno. */
void gg_atomic_put(struct gg_atomic *a, const void *data, size_t n);
enum gg_status gg_atomic_commit(struct gg_atomic *a, int durable, char *err, size_t err_len);
/* Writes len bytes of data to path atomically (open, write, commit). */
enum gg_status gg_atomic_write(const char *path, const char *what, const void *data, size_t len,
                               int durable, char *err, size_t err_len);

#endif /* GG_CASE_H */

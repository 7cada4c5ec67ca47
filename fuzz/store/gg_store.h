/*
 * gg_store.h — public header of fuzz/store/: what is kept on disk between runs: corpus
 * directories, atomic writes, a campaign's statistics files (fuzzer_stats, plot_data), the
 * findings store (one case per signature) and its buckets (one per bug), the known-signature
 * sets of earlier nights, the merge of several stores into one, and the directory a campaign run
 * as shards shares.
 */
#ifndef GG_STORE_H
#define GG_STORE_H

#include "fuzz/run/gg_run.h"

/* Where a reader of files that peers or users place (a peer's log and cases, the stores a merge
   reads) tells what it skipped or started again: one line without its newline, "WARNING: ..."
   naming the file, or "INFO: ...", for the caller's log. */
typedef void (*gg_store_note_fn)(void *ctx, const char *line);

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

/* 1 when verdict v reproduces expect ("class=C [sig=S] [runs=N]"; NULL means class=pass): the
   class matches (C may list alternatives, "nondeterminism|snr", for a race that can also be lost
   the same way twice) and, when the expectation names a signature, the signature matches too. */
int gg_expect_holds(const char *expect, const struct gg_verdict *v);
#define GG_EXPECT_MAX_RUNS 64
/* How many runs a replay may take to reproduce expect: its runs=N (a race that a run can miss),
   else 1. */
int gg_expect_runs(const char *expect);

/* ------------------------------------------------------------------------------------------ */
/* A campaign's statistics files (gg_stats_files.c)                                            */
/* ------------------------------------------------------------------------------------------ */

/* fuzzer_stats: one `key : value` line per statistic (AFL's layout, keys padded to 18 columns),
   in the order the campaign added them; the reader keeps that order. */
#define GG_FUZZER_STATS_FILE "fuzzer_stats"
struct gg_fuzzer_stats {
    struct gg_stat {
        char *key, *value;
    } *kv;
    size_t n, cap;
};
/* Appends key with its printf-formatted value; GG_E_NOMEM when out of memory. s starts zeroed. */
enum gg_status gg_fuzzer_stats_add(struct gg_fuzzer_stats *s, const char *key, const char *fmt,
                                   ...) __attribute__((format(printf, 3, 4)));
/* Rewrites dir/fuzzer_stats atomically (temporary file and rename). */
enum gg_status gg_fuzzer_stats_write(const char *dir, const struct gg_fuzzer_stats *s, char *err,
                                     size_t err_len);
/* Reads a fuzzer_stats file (a regular file of at most 1 MiB); a line without ':' is
   GG_E_PARSE ("PATH:LINE: ..."). s is always left in a state gg_fuzzer_stats_free() accepts. */
enum gg_status gg_fuzzer_stats_read(const char *path, struct gg_fuzzer_stats *s, char *err,
                                    size_t err_len);
/* The value of key, or NULL. */
const char *gg_fuzzer_stats_get(const struct gg_fuzzer_stats *s, const char *key);
void gg_fuzzer_stats_free(struct gg_fuzzer_stats *s);
/* Where a campaign case's time went, in fuzzer_stats (milliseconds a case): each key with its
   label, in the order a campaign writes them. The first is a case's time in a worker from its
   dispatch to its result, the others its phases; gpu_only: told for a GPU kernel only. */
#define GG_CASE_PHASES 9
struct gg_case_phase {
    const char *key, *label;
    int gpu_only;
};
extern const struct gg_case_phase gg_case_phases[GG_CASE_PHASES];

/* plot_data: a '#' header naming the columns, then one row of comma-separated numbers per tick.
   The reader maps columns by their header names, so a file with fewer or other columns reads. */
#define GG_PLOT_DATA_FILE "plot_data"
enum gg_plot_col {
    GG_PLOT_RELATIVE_TIME, GG_PLOT_EXECS_DONE, GG_PLOT_EXECS_PER_SEC, GG_PLOT_CORPUS_COUNT,
    GG_PLOT_FEATURES_TOTAL, GG_PLOT_FAULTS_TOTAL, GG_PLOT_FAULTS_UNIQUE, GG_PLOT_FAULTS_NEW,
    GG_PLOT_WORKER_RESTARTS, GG_PLOT_TIMEOUTS, GG_PLOT_MIN_SNR_MARGIN_DB, GG_PLOT_MAX_OFFSET_BITS,
    GG_PLOT_BUCKETS, GG_PLOT_BUCKETS_NEW, GG_PLOT_COLUMNS
};
/* One row by column (read back: NaN for a column the file lacks). */
struct gg_plot_row {
    double v[GG_PLOT_COLUMNS];
};
/* Appends r to dir/plot_data, writing the header first when the file is new. */
enum gg_status gg_plot_data_append(const char *dir, const struct gg_plot_row *r, char *err,
                                   size_t err_len);
/* Reads a plot_data file (a regular file of at most 64 MiB) into *rows (*n_rows of them;
   malloc'd, the caller frees it, also on error). A header without relative_time and
   execs_done, data before the header or a row that is not as many numbers as the header names
   is GG_E_PARSE ("PATH:LINE: ..."). */
enum gg_status gg_plot_data_read(const char *path, struct gg_plot_row **rows, size_t *n_rows,
                                 char *err, size_t err_len);

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

#define GG_STAMP_MAX 32 /* "YYYY-MM-DDThh:mm:ssZ" and room for a longer stored stamp */
/* The fields of an @finding line. Unknown fields of a stored line are dropped on rewrite. */
struct gg_finding {
    long long count;
    char first_seen[GG_STAMP_MAX], last_seen[GG_STAMP_MAX];
    uint64_t seed;                   /* campaign seed of the run that produced the stored case */
    char kernel[GG_CASE_NAME_MAX];   /* kernel and mutant of that run ("" mutant: none) */
    char mutant[GG_CASE_NAME_MAX];
};
/* Reads the text of an @finding line (NULL: none) into f; absent or malformed fields keep the
   values already in f (a count is a whole number >= 0, a seed a number strtoull reads). */
void gg_finding_parse(const char *text, struct gg_finding *f);
/* 1 when name is a finding's file name, <class>-<16 hex>.case ([a-z_] class). */
int gg_findings_is_name(const char *name);
/* 1 when directory dir holds at least one finding's file. */
int gg_findings_in(const char *dir);

/* Records finding c (the case that ran) with verdict v. A new signature writes a new file
   (*is_new = 1); a known one raises its count and last_seen, and replaces the stored case when c
   is a better one, keeping the stored metadata but for the case's own @after lines: a case that
   gives the fault alone is better than one that needs preceding cases (@after), and among cases
   of the same kind the smaller (fewer groups, then fewer output elements) is. dir is created when
   missing (one level). path (may be NULL) receives the file's path, path_len bytes at most. A
   pass verdict or a signature with blanks is refused (GG_E_INVAL). */
/* Whether case cand (expanded) is a better record of a finding than rec: one that gives the
   fault alone beats one that needs preceding cases (@after), then the smaller one wins
   (gg_case_smaller). */
int gg_case_better(const struct gg_case *cand, const struct gg_case *rec);
/* One more sighting of the finding of v's signature, stored in dir already: its count and
   last_seen, not its case. GG_E_IO when dir holds no record of it. */
enum gg_status gg_findings_sighting(const char *dir, const struct gg_verdict *v, char *err,
                                    size_t err_len);
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
   "bucket-<id>". A findings directory is read as the set of its signatures and buckets; the
   directory of a campaign (no findings of its own) as the union of its stores, artifacts/ and
   each shard-<I>/artifacts. */
#define GG_SIGSET_MAX (64L << 20) /* bytes of a known-signatures file */
struct gg_sigset {
    char **sigs;
    size_t n;
    int stores; /* findings stores read: 0 for a file, or a directory that holds none */
};
/* Loads path (a regular file of at most GG_SIGSET_MAX bytes, or a directory). A path that is
   missing, or neither a directory nor a regular file, is GG_E_IO ("PATH: cannot read: REASON");
   a directory holding no store is an empty set with stores 0, for the caller to tell. Free with
   gg_sigset_free(). */
enum gg_status gg_sigset_load(const char *path, struct gg_sigset *s, char *err, size_t err_len);
int gg_sigset_has(const struct gg_sigset *s, const char *signature);
void gg_sigset_free(struct gg_sigset *s);

/* ------------------------------------------------------------------------------------------ */
/* Merging stores (gg_merge.c)                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* What a merge read and wrote. */
struct gg_merge_stats {
    int stores;                  /* input stores read */
    long long findings_in;       /* finding files read */
    long long buckets_in;        /* bucket representatives read */
    long long signatures;        /* distinct signatures in the output */
    long long buckets;           /* distinct buckets in the output */
    long long count;             /* summed sightings of the output's signatures (at most
                                    INT64_MAX) */
    long long written;           /* files (re)written in the output */
    long long skipped;           /* input files (or stores) that could not be read: not merged */
    long long duplicates;        /* inputs that named a store read already: read once */
};
/* Folds findings stores[0..n) into store out (created when missing): one finding per
   signature (the smallest case, its provenance, the summed count, the earliest first and the
   latest last sighting, a member's @bucket tag) and one representative per bucket (the smallest,
   the earliest first sighting). The output is recomputed from the inputs, never added to: a
   second merge of the same inputs leaves it as it is. Each file is written atomically and only
   when its stored count is not larger (a merge that ran meanwhile on a later snapshot), so two
   merges at once leave a consistent store; no lock is taken. A missing input is an empty store;
   out given among the inputs is GG_E_INVAL. Each store is read once: an input that is the same
   directory (device and inode) as an earlier one is passed over and told to note. A file named
   like a finding that cannot be read or parsed, or a store that cannot be listed, is passed over
   and told (ms->skipped), and the rest is merged. Counts saturate at INT64_MAX. Fails only when
   the output cannot be written or memory runs out. */
enum gg_status gg_store_merge(const char *const *stores, size_t n, const char *out,
                              struct gg_merge_stats *ms, gg_store_note_fn note, void *note_ctx,
                              char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* A campaign run as shards, and the corpus they share (gg_sync.c)                             */
/* ------------------------------------------------------------------------------------------ */

/* CAMPAIGN/shard-<I>/ holds shard I's corpus/, corpus.log (the ids of its kept cases, in the
   order kept), sync_cursors (how far it read each peer's log), artifacts/ (its findings),
   fuzzer_stats and plot_data. */
#define GG_SHARD_PREFIX "shard-"
#define GG_SHARD_MAX 100000      /* shard indexes are below this */
#define GG_SYNC_PATH_MAX 4096
/* CAMPAIGN/shard-<index> into out. */
void gg_shard_dir(const char *campaign, int index, char *out, size_t cap);
/* The indexes of the shard directories of campaign, ascending (*indexes malloc'd, the caller
   frees it): the entries named exactly as gg_shard_dir() names them ("shard-01" or "shard-1x"
   is no shard directory), so each index is listed once. GG_E_IO when campaign cannot be read. */
enum gg_status gg_shard_list(const char *campaign, int **indexes, size_t *n, char *err,
                             size_t err_len);

/* Bytes of a peer's log one pull reads at most, from its cursor. */
#define GG_SYNC_CHUNK (1L << 20)
/* One shard's view of its peers: a byte cursor into each peer's log, and what tells whether the
   cursor still points into the log it was read from. */
struct gg_sync_peer {
    int index;
    long long offset;   /* bytes of its log already read */
    uint64_t mark;      /* XXH3-64 of the (at most 64) bytes of the log that end at offset */
    int has_mark;       /* 0: none yet (offset 0, or cursors an older build saved) */
    int in_long_line;   /* offset is inside a line longer than a case id, skipped to its end */
    int misses;         /* pulls that found the case of the line at offset missing */
    int unreadable;     /* its log was there but could not be read at the last pull (told once) */
};
struct gg_sync {
    char *campaign;
    int self;
    struct gg_sync_peer *peers;
    size_t n_peers;
    int dirty;          /* cursors moved since they were saved */
    gg_store_note_fn note; /* (may be NULL) the pulls' WARNING and INFO lines; set after open */
    void *note_ctx;
};
/* What the pulls did, summed. */
struct gg_sync_stats {
    long long pulls, imported, skipped, bytes;
    size_t peers;
    double seconds;
};
/* Opens shard self's side of campaign's sync: cuts a torn last line off its log and reads its
   saved cursors (a requeued shard goes on where it was). Free with gg_sync_close(). */
enum gg_status gg_sync_open(struct gg_sync *s, const char *campaign, int self, char *err,
                            size_t err_len);
/* Appends case_id to the shard's log; the case file must be in its corpus already. */
enum gg_status gg_sync_publish(struct gg_sync *s, const char *case_id, char *err, size_t err_len);
/* The cases the other shards kept since the last pull (*cases malloc'd, *n of them, each freed
   with gg_case_free() by the caller), with ss updated; the cursors are saved when they moved.
   A pull never waits on a peer's file and reads at most GG_SYNC_CHUNK bytes of each log; what
   it passes over is told to s->note, once: a log or a case that is not a regular file or cannot
   be read, lines that are no case id, and a line longer than a case id (skipped to its end over
   as many pulls as it takes). A cursor that no longer points into the log it was read from (the
   log is shorter, or the bytes before the cursor changed: the peer's directory was made
   afresh) starts again at 0, with an INFO line. */
enum gg_status gg_sync_pull(struct gg_sync *s, struct gg_case **cases, size_t *n,
                            struct gg_sync_stats *ss, char *err, size_t err_len);
void gg_sync_close(struct gg_sync *s);

#endif /* GG_STORE_H */

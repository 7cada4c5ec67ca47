/*
 * campaign_int.h — internal to fuzz/campaign/: the campaign statistics writers (gg_stats.c),
 * shards and the cases a requeued one skips (gg_shard.c), the confirmation of a worker's
 * faults in a fresh process (gg_confirm.c), and the supervisor's state (struct campaign)
 * with what the files of the supervisor (gg_campaign*.c) share.
 */
#ifndef GG_CAMPAIGN_INT_H
#define GG_CAMPAIGN_INT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "fuzz/campaign/gg_campaign.h"

/* ---- Statistics (gg_stats.c) ------------------------------------------------------------- */

/* Everything the stats writers show, kept up to date by the supervisor. */
struct gg_stats_view {
    const struct gg_campaign_stats *s;
    const char *kernel, *mutant;
    uint64_t seed;
    double start_wall;        /* time(NULL) at start */
    double elapsed_s;
    double budget_s;          /* 0: none */
    int64_t max_runs;         /* 0: none */
    int workers;
    const char *command_line; /* may be NULL */
    const char *replay_command; /* may be NULL */
    const char *artifacts;    /* the findings store, by absolute path when it resolves */
    int shard_index, shard_count; /* count 0: not a shard */
};

/* Rewrites dir/fuzzer_stats atomically (temporary file and rename). */
enum gg_status gg_stats_write(const char *dir, const struct gg_stats_view *v, char *err,
                              size_t err_len);
/* Appends one row to dir/plot_data, writing the header first when the file is new. */
enum gg_status gg_stats_plot(const char *dir, const struct gg_stats_view *v, char *err,
                             size_t err_len);
/* The live status line (carriage return, no newline) and the clearing of it. */
void gg_stats_status_line(FILE *f, const struct gg_stats_view *v);
void gg_stats_clear_line(FILE *f);
/* libFuzzer-style final statistics and the reason the campaign stopped. */
void gg_stats_final(FILE *f, const struct gg_stats_view *v);
/* Adds a case's result r (a verdict), worker_s from its dispatch to its result, to p. */
void camp_phases_add(struct gg_phase_sums *p, const struct gg_run_result *r, double worker_s);

/* ---- Coverage of the ABI's freedoms (gg_campaign_freedoms.c) ------------------------------ */

/* Adds to o the fuzzer_stats lines of t: freedoms_exercised and freedoms_refused, then one
   freedom_<op>_<field> line per freedom the kernel has (gg_freedom_cells_format()). */
enum gg_status camp_freedom_stats(struct gg_fuzzer_stats *o, const struct gg_freedom_tally *t);
/* The log's lines on t: how many of the cells the kernel takes were exercised, which were never
   drawn, and which the kernel refuses. */
void camp_freedom_final(FILE *f, const struct gg_freedom_tally *t);

/* ---- Shards (gg_shard.c) ------------------------------------------------------------------ */

/* The seed of shard index of count drawn from campaign seed base: base itself for shard 0 of 1,
   else a mix of both (distinct for every index; never 0). */
uint64_t gg_shard_seed(uint64_t base, int index, int count);
/* Where a shard stopped, from the fuzzer_stats in stats_dir: 1 with *seed and *next_case set
   when the file names both, else 0. */
int gg_shard_resume_point(const char *stats_dir, uint64_t *seed, uint64_t *next_case);
/* At the end of shard self: unless another shard of campaign is still at work (its fuzzer_stats
   names no stop reason and changed within GG_SHARD_ALIVE_S; a shard killed without a word stops
   counting then), folds the findings of every shard into campaign/artifacts, so that the last
   shard to end merges once rather than every shard merging every store. Logs what it did on log
   (may be NULL). Returns the output's signatures, or -1 when it did not merge. */
#define GG_SHARD_ALIVE_S 120.0
long long gg_shard_merge_all(const char *campaign, int self, FILE *log);

/* The case numbers of a shard's seed stream that ran to an outcome since its fuzzer_stats was
   last written (file GG_SHARD_DONE_FILE in the shard's directory, appended to as cases end and
   cut back after each fuzzer_stats). A shard requeued after a kill goes on at that fuzzer_stats'
   next_case and skips these numbers instead of running their cases and counting their findings
   again. */
#define GG_SHARD_DONE_FILE "done_cases"
struct gg_shard_done {
    uint64_t *skip;       /* sorted: the numbers to skip, from the file as the shard started */
    size_t n_skip;
    int fd;               /* the file, open for appending (-1: none) */
    uint64_t seed;
    char path[GG_SYNC_PATH_MAX];
};
/* Reads dir's file (the numbers of seed from `from` on; a file of another seed or none: nothing
   to skip) and opens it for appending. Returns how many numbers are to be skipped; -1 when the
   file cannot be written (err says why; nothing is then recorded). */
long gg_shard_done_open(struct gg_shard_done *d, const char *dir, uint64_t seed, uint64_t from,
                        char *err, size_t err_len);
void gg_shard_done_add(struct gg_shard_done *d, uint64_t index);
/* After fuzzer_stats was written with next_case from: the file keeps only the numbers to skip
   from there on. */
void gg_shard_done_reset(struct gg_shard_done *d, uint64_t from);
int gg_shard_done_has(const struct gg_shard_done *d, uint64_t index);
void gg_shard_done_close(struct gg_shard_done *d);

/* ---- Confirmation in a fresh process (gg_confirm.c) --------------------------------------- */

/* The cases a worker ran before the one in flight, as case texts (identity lines): the last
   GG_HISTORY_MAX of them since the worker's process started. */
#define GG_HISTORY_MAX 64
struct gg_history {
    char *text[GG_HISTORY_MAX]; /* owned; a ring starting at head */
    int n, head;
};
/* Appends text (taken over), dropping the oldest when full. */
void gg_history_push(struct gg_history *h, char *text);
/* The i-th case text, oldest first (NULL past the end). */
const char *gg_history_at(const struct gg_history *h, int i);
void gg_history_clear(struct gg_history *h);

#define GG_CONFIRM_MAX_RUNS 48   /* sequences one confirmation may run */
#define GG_CONFIRM_ALONE_TRIES 4 /* runs alone before a fault is called not reproduced */

enum gg_confirm_outcome {
    GG_CONFIRM_NOT_REPRODUCED = 0, /* neither alone nor after the history */
    GG_CONFIRM_ALONE,              /* the case gives the fault alone: its own */
    GG_CONFIRM_AFTER               /* only after kept[] of the history */
};

struct gg_confirm_report {
    enum gg_confirm_outcome outcome;
    int n_kept;                  /* AFTER: the history's cases the fault needs ... */
    int kept[GG_HISTORY_MAX];    /* ... as indices into it, in the order they run */
    int runs;                    /* sequences run */
    double seconds;
    char detail[256];            /* the verdict's detail of the last run that gave the fault */
};

/*
 * Whether case c gives a fault of class cls in a fresh process: alone, else after history[0..
 * n_history-1] (oldest first), and which of those it needs (see the file comment). Each sequence
 * runs in a child of this process (gg_run_sequence_isolated) with timeout_s per case; the search
 * for the needed cases stops after budget_s (0: none) or GG_CONFIRM_MAX_RUNS sequences with the
 * smallest sequence found that gives the fault.
 */
void gg_confirm_find(const struct gg_case *history, int n_history, const struct gg_case *c,
                     enum gg_class cls, const struct gg_run_opts *o, double timeout_s,
                     double budget_s, struct gg_confirm_report *rep);

/* ---- The supervisor (gg_campaign.c and gg_campaign_*.c) ------------------------------------- */

#define CONFIRM_TRIES_MAX 3      /* confirmations of one signature that may come to nothing */
#define MIN_MINIMIZE_S 2.0      /* a minimisation shorter than this is not worth starting */
#define PATH_MAX_LEN 4096

enum origin { ORIGIN_GENERATE, ORIGIN_MUTATE, ORIGIN_SEED, ORIGIN_REPLAY };

/* A case to run, with where it came from. */
struct job {
    struct gg_case c;
    enum origin origin;
    int reruns;      /* times the case was given to a fresh worker again after an early end */
    int ended_early; /* it ended without a result before: end_signo says how */
    int end_signo;   /* > 0 died on that signal, -1 exited without a result, 0 timed out */
    char *path;      /* seed and replay: the file */
    uint64_t index;  /* generated and mutated: the case number */
};

enum wstate { W_NONE, W_STARTING, W_IDLE, W_BUSY };

struct worker {
    enum wstate state;
    int pid, fd;
    int gpu;         /* index into the campaign's devices (-1: unbound) */
    double since;    /* start of the process (STARTING) or of the case (BUSY) */
    double limit;    /* time limit of the case in flight (0: none) */
    struct job job;  /* BUSY: the case in flight; IDLE/STARTING with has_job: to run next */
    int has_job;
    char cur_path[PATH_MAX_LEN];
    struct gg_history hist; /* the cases its process ran, for faults that need them */
};

/* Features seen, each with the best (smallest) SNR-margin bucket a passing case reached. */
struct ftable {
    uint32_t *keys;
    int *best;
    unsigned char *used;
    size_t cap, n;
};

/* A new signature waiting to be minimised to its bucket's normal form. */
struct pending_min {
    char path[PATH_MAX_LEN];
    char sig[GG_SIGNATURE_MAX];
    enum gg_class cls;
    int done;
    int gpu;         /* the device of the worker that found it (-1: unbound or not known) */
};

/* A fault a worker gave after other cases, waiting to be run again in a fresh process. */
struct pending_confirm {
    struct gg_case kase;          /* as the worker ran it (@observed and @gpu set) */
    struct gg_verdict v;
    int gpu;                      /* the worker's device (-1: unbound) */
    int extra;                    /* further sightings of its signature while it waited */
    int n_hist;
    char *hist[GG_HISTORY_MAX];   /* the worker's history then, oldest first (owned) */
    char name[PATH_MAX_LEN];      /* the case, for log lines */
};

/* A signature whose faults a fresh process did not give, and how often that happened. */
struct unconfirmed_sig {
    char *sig;
    int tries;
};

/* A campaign's supervisor: what gg_campaign_run keeps while it runs. */
struct campaign {
    const struct gg_campaign_config *cfg;
    const struct gg_kernel *k;
    struct gg_gen_config gen;
    struct gg_gen_caps *caps; /* probed once: gen.caps points here */
    struct gg_probe *probe;   /* asks the kernel's supports(): gen.probe points here */
    int64_t probe_deaths;     /* of those, logged so far */
    struct gg_campaign_stats *st;
    char mutant[GG_CASE_NAME_MAX];
    char artifacts[PATH_MAX_LEN], stats_dir[PATH_MAX_LEN], exe[PATH_MAX_LEN];
    char artifacts_abs[PATH_MAX_LEN]; /* artifacts, absolute when it resolves */
    char corpus_out[PATH_MAX_LEN]; /* receives the cases kept ("" : none) */
    /* a shard (cfg->campaign_dir): its index and count, and its side of the sync */
    int shard, shards;
    struct gg_sync sync;
    int syncing;
    double next_sync;
    struct gg_sync_stats sync_stats;
    struct gg_shard_done done;     /* the cases that ended since fuzzer_stats was written */
    long skipping;                 /* cases a requeued shard skips (-1: not recorded) */
    char shard_tag[48];            /* "[shard I/N] " before pulse lines, "" when not a shard */
    double t0, start_wall, budget, stop_at;
    double timeout;  /* per case; 0: no limit (--timeout 0) */
    int tty;
    struct worker *w;
    int n_workers;
    int start_failures;
    const struct gg_gpus *gpus;        /* NULL: the workers are not bound to devices */
    int gpu_start_failures[GG_GPUS_MAX];
    /* cases to run before drawing any */
    struct job *queue;
    size_t n_queue, next_queue;
    /* corpus */
    struct gg_case *corpus;
    size_t n_corpus;
    struct ftable ft;
    /* signatures met in this campaign */
    char **sigs;
    size_t n_sigs;
    struct gg_sigset known;
    /* the store's buckets (read again after each minimisation), and those met in this campaign */
    struct gg_bucket_list buckets;
    char (*met)[GG_BUCKET_ID_HEX + 1];
    size_t n_met;
    /* minimiser */
    struct pending_min *mins;
    size_t n_mins;
    struct min_slot {       /* a minimiser child at work (pid 0: free) */
        int pid, fd;
        int pace_fd;            /* (paced) a byte written here ends its waits (0: none) */
        double started, budget; /* budget: its wall time, waits included */
        struct pending_min cur;
    } *ms;
    int n_ms;               /* slots: one per worker */
    int unpaced;            /* the workers stopped: minimisers run unpaced */
    /* confirmation of faults in a fresh process (gg_campaign_confirm.c): queued, and at work */
    struct pending_confirm *confirms;
    size_t n_confirms;
    struct confirm_slot {
        int pid, fd;
        double started, budget;
        struct pending_confirm cur;
    } *cs;
    int n_cs;
    struct unconfirmed_sig *unconf;
    size_t n_unconf;
    /* drawing */
    uint64_t next_index;
    int64_t dispatched;
    int gen_failures;
    double last_tick;
    int64_t next_pulse;
    double next_status;    /* a status line is due then, without a terminal */
    char *err;
    size_t err_len;
    enum gg_status fatal;
};

/* Seconds since the campaign started. */
static inline double camp_elapsed(const struct campaign *c)
{
    return gg_wire_now() - c->t0;
}

/* SplitMix64's finaliser: a 64-bit hash (of feature keys, case numbers, the clock). */
static inline uint64_t camp_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* ---- The run (gg_campaign.c) ---------------------------------------------------------------- */
/* Prints a line on cfg->log (clearing a terminal's status line first); none without a log. */
void camp_log(struct campaign *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Stops the campaign for why, unless it is stopping already (the first reason stays). */
void camp_request_stop(struct campaign *c, enum gg_stop why);

/* ---- Corpus and features (gg_campaign_corpus.c) --------------------------------------------- */
/* Frees the features seen. */
void camp_ftable_free(struct ftable *t);
/* Keeps j, which passed with r, when it adds a feature or a closer margin (a seed always). */
void camp_observe_pass(struct campaign *c, struct job *j, const struct gg_run_result *r);
/* Logs the probe's deaths since the last call (what: what became of the case). */
void camp_log_probe_deaths(struct campaign *c, const char *what);
/* Queues the stored failures of this kernel and mutant, then the corpus seeds. */
void camp_load_stored(struct campaign *c);
/* A shard imports the cases the others kept since it looked (force: now, whatever the interval). */
void camp_sync_peers(struct campaign *c, int force);

/* ---- Workers and their cases (gg_campaign_workers.c) ---------------------------------------- */
/* The names of the origins, by enum origin. */
extern const char *const camp_origin_names[];
/* Frees j's case and file name and clears it. */
void camp_job_free(struct job *j);
/* Starts w's process (STARTING); -1 with c->err set when it cannot. */
int camp_spawn_worker(struct campaign *c, struct worker *w);
/* How the campaign starts a worker process bound to device ordinal gpu (-1: this process's). */
struct gg_worker_launch camp_worker_launch(const struct campaign *c, int gpu);
/* Waits for w's process (killed first when kill_first) and frees its slot: the signal it
   died on, -1 when it exited (or had to be killed after closing its end), 0 when kill_first. */
int camp_reap(struct worker *w, int kill_first);
/* The case a job runs, for log lines: its file, or its number and origin. */
void camp_job_name(const struct job *j, char *out, size_t len);
/* Sends idle worker w its job, drawing one when it holds none. */
void camp_dispatch(struct campaign *c, struct worker *w);
/* Reads w's announcement, result or end, and restarts it when it is gone. */
void camp_on_readable(struct campaign *c, struct worker *w);
/* Ends the workers past their case's limit; one that does not start in time is fatal. */
void camp_check_deadlines(struct campaign *c);

/* ---- Faults and buckets (gg_campaign_faults.c) ---------------------------------------------- */
/* Groups (or batches, or experts) of the problem a case describes; 1 for dense. */
int64_t camp_case_groups(const struct gg_case *c);
/* "bucket-<id>": how a bucket is named in a known file. */
void camp_bucket_key(const char *id, char *out, size_t len);
/* Counts bucket id as met in this campaign (new when the known file lacks it); 1 the first time. */
int camp_meet_bucket(struct campaign *c, const char *id);
/* Reads the store's buckets again (after a minimiser filed one). */
void camp_rescan_buckets(struct campaign *c);
/* The store's bucket of that id (NULL: none). */
const struct gg_bucket *camp_bucket_info(const struct campaign *c, const char *id);
/* Records fault v of kase in the store; its signature is logged, counted and triaged once. */
void camp_file_fault(struct campaign *c, struct gg_case *kase, const struct gg_verdict *v, int gpu);
/* One more sighting of a signature filed already: its count, not its case. */
void camp_count_sighting(struct campaign *c, const struct gg_verdict *v);
/* A run of j by w with a fault: counted, then filed or queued for confirmation. */
void camp_handle_fault(struct campaign *c, struct worker *w, struct job *j,
                       const struct gg_run_result *r);
/* Signatures of this campaign that no bucket holds yet. */
int64_t camp_count_untriaged(const struct campaign *c);
/* Logs the buckets met, each with its members, sightings and replay command. */
void camp_log_buckets(struct campaign *c);

/* ---- Minimisers' and confirmations' processes (gg_campaign_child.c) ------------------------- */
/* Forks a minimiser or a confirmation reporting on a pipe: pid and read end in *fd, 0 in
   the child with the write end, -1 on failure. */
pid_t camp_fork_child(struct campaign *c, int *fd);
/* Whether child pid has ended (its group ended first when kill_it): 1 with *wst set. */
int camp_child_ended(int pid, int kill_it, int *wst);
/* The time a minimiser or a confirmation may take: --minimize-time, within the time left. */
double camp_child_budget(const struct campaign *c);

/* ---- Confirmation, the supervisor's side (gg_campaign_confirm.c) ---------------------------- */
/* The confirmation of sig, queued or at work (NULL: none). */
struct pending_confirm *camp_confirm_pending(struct campaign *c, const char *sig);
/* The entry of sig among the signatures a fresh process did not confirm (added when add). */
struct unconfirmed_sig *camp_unconfirmed_of(struct campaign *c, const char *sig, int add);
/* Frees pc's case and history and clears it. */
void camp_confirm_free(struct pending_confirm *pc);
/* Queues v of j's run by w, with w's history, for a fresh process; -1 out of memory. */
int camp_queue_confirm(struct campaign *c, const struct worker *w, const struct job *j,
                       const struct gg_verdict *v);
/* Confirmations at work. */
int camp_running_confirms(const struct campaign *c);
/* Starts the queued confirmations in the free slots. */
void camp_start_confirms(struct campaign *c);
/* Files the confirmations that ended (or ran past their time); kill_it ends them now
   and files the queued ones unconfirmed. */
void camp_poll_confirms(struct campaign *c, int kill_it);
/* Files the queued confirmations unconfirmed, saying why. */
void camp_file_queued_confirms(struct campaign *c, const char *why);

/* ---- Triage by minimisers (gg_campaign_minimize.c) ------------------------------------------ */
/* Queues the finding at path for triage (a signature once). */
void camp_queue_min(struct campaign *c, const char *path, const struct gg_verdict *v, int gpu);
/* Minimisers at work on device gpu (-1: on any). */
int camp_running_mins(const struct campaign *c, int gpu);
/* Whether minimisers are paced to a share of the wall time (a GPU kernel's), not given worker
   slots. */
int camp_min_paced(const struct campaign *c);
/* Ends the waits of the paced minimisers at work, and starts the next ones unpaced (the
   workers have stopped). */
void camp_unpace_mins(struct campaign *c);
/* Starts minimisers in the free slots: the first always, the others while a backlog waits. */
void camp_start_min(struct campaign *c);
/* Takes the reports of the minimisers that ended (or ran past their budget); kill_it ends
   them now. */
void camp_poll_min(struct campaign *c, int kill_it);
/* Takes up the minimisations a stopped campaign left in the artifacts directory. */
void camp_resume_mins(struct campaign *c);

#endif /* GG_CAMPAIGN_INT_H */

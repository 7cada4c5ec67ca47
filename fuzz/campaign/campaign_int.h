/*
 * campaign_int.h — internal to fuzz/campaign/: the campaign statistics writers (gg_stats.c),
 * shards and the cases a requeued one skips (gg_shard.c), and the confirmation of a worker's
 * faults in a fresh process (gg_confirm.c).
 */
#ifndef GG_CAMPAIGN_INT_H
#define GG_CAMPAIGN_INT_H

#include <stdint.h>
#include <stdio.h>

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

#endif /* GG_CAMPAIGN_INT_H */

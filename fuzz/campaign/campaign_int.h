/*
 * campaign_int.h — internal to fuzz/campaign/: the campaign statistics writers (gg_stats.c).
 */
#ifndef GG_CAMPAIGN_INT_H
#define GG_CAMPAIGN_INT_H

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

#endif /* GG_CAMPAIGN_INT_H */

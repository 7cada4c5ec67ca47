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

#endif /* GG_CAMPAIGN_INT_H */

/*
 * report_int.h — internal to reports/: the model of what an HTML or Markdown report shows (a
 * suite result, whose records gg_report.h declares, and campaign directories read from disk), the
 * gnuplot driver that turns it into PNG plots, and the two writers that lay it out.
 */
#ifndef GG_REPORT_INT_H
#define GG_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/gg_report.h"
#include "fuzz/store/gg_store.h"

/* ---- Suite results (gg_report_suite.c) ------------------------------------------------------ */

/* 1 for verdicts that fail the gate (fail, regressed, error). */
int gg_report_verdict_bad(const char *verdict);
/* (gg_report_input.c) Indices of the worst cases that have per-group numbers: failing verdicts first, then the
   smallest margin. Writes at most max into idx; returns how many. */
size_t gg_report_worst_cases(const struct gg_rsuite *s, size_t *idx, size_t max);

/* ---- Campaign directories (gg_report_input.c) ----------------------------------------------- */

/* One stored finding: a case file of the findings store with its metadata lines. */
struct gg_rfinding {
    char *path;       /* as found under the campaign directory */
    char *replay;     /* the path to give `ggfuzz --replay` (absolute when it resolves) */
    char *text;       /* the file as stored */
    char *signature;  /* @expect sig=, "" when absent */
    char *observed;   /* @observed, "" when absent */
    char cls[32];
    struct gg_finding meta; /* its @finding line (count -1 when absent) */
    char shape[160];  /* "" when the case does not parse */
    char *parse_error; /* NULL when the case parses */
    int n_after;      /* cases it fails only after, run first in one process (@after) */
};

struct gg_rcampaign {
    char *dir;          /* as given */
    char *findings_dir; /* NULL when no findings store was found */
    struct gg_fuzzer_stats stats; /* fuzzer_stats in file order */
    struct gg_plot_row *ticks;    /* plot_data */
    size_t n_ticks;
    struct gg_rfinding *findings; /* most severe class first, then the most frequent */
    size_t n_findings;
    struct gg_bucket_list buckets; /* the store's bugs (gg_buckets_scan) */
};

/*
 * Reads a campaign: dir is the statistics directory (fuzzer_stats, plot_data) or the findings
 * store itself (statistics then come from its parent). The findings store is the --artifacts
 * directory of the recorded command line when it exists, else a subdirectory of dir holding
 * finding files. Errors name the file and the line or field.
 */
enum gg_status gg_report_campaign_load(const char *dir, struct gg_rcampaign *c, char *err,
                                       size_t err_len);
void gg_report_campaign_free(struct gg_rcampaign *c);
/* Value of a fuzzer_stats key, or NULL. */
const char *gg_report_stat(const struct gg_rcampaign *c, const char *key);
/* A campaign spread over GPUs: the ordinals its fuzzer_stats lists under gpus (at most max of
   them into ids; 0 when none), and the columns of its per-GPU table: gpu<ordinal>_<key> of
   fuzzer_stats under their label. */
size_t gg_report_gpus(const struct gg_rcampaign *c, int *ids, size_t max);
#define GG_REPORT_GPU_COLUMNS 6
extern const char *const gg_report_gpu_columns[GG_REPORT_GPU_COLUMNS][2];
const char *gg_report_gpu_stat(const struct gg_rcampaign *c, int ordinal, const char *key);

/* ---- Plots (gg_report_plot.c) --------------------------------------------------------------- */

/* The gnuplot executable: GGFUZZ_GNUPLOT when set (a missing path means no gnuplot), else the first
   `gnuplot` on PATH. */
struct gg_plotter {
    char exe[4096];
    int available;
    char why[256];       /* why plots are skipped when not available */
    const char *out_dir; /* plots, and their temporary data and scripts, are written here */
    int seq;             /* numbers temporary files */
};

void gg_report_plot_init(struct gg_plotter *p, const char *out_dir);
/* Each writes out_dir/png (a file name): GG_OK, or a status with gnuplot's message in err. */
enum gg_status gg_report_plot_margins(struct gg_plotter *p, const struct gg_rsuite *s,
                                      const char *png, char *err, size_t err_len);
enum gg_status gg_report_plot_groups(struct gg_plotter *p, const struct gg_rcase *c,
                                     const char *png, char *err, size_t err_len);
enum gg_status gg_report_plot_campaign(struct gg_plotter *p, const struct gg_rcampaign *c,
                                       const char *png, char *err, size_t err_len);

/* ---- The report and its writers (gg_report_html.c, gg_report_md.c) -------------------------- */

#define GG_REPORT_WORST_MAX 6
/* Group tables: cases with at most GROUPS_INLINE groups list them all in order; larger ones list
   their GROUPS_SHOWN lowest first. */
#define GG_REPORT_GROUPS_INLINE 16
#define GG_REPORT_GROUPS_SHOWN 12

/* Everything a writer lays out; png names are "" for plots not made. */
struct gg_report_doc {
    const struct gg_rsuite *suite;       /* NULL: no suite */
    const struct gg_rcampaign *campaigns;
    size_t n_campaigns;
    char generated[32];                  /* UTC, ISO 8601 */
    char margin_png[64];
    size_t worst[GG_REPORT_WORST_MAX];   /* case indices */
    size_t n_worst;
    char worst_png[GG_REPORT_WORST_MAX][64];
    char campaign_png[GG_REPORT_CAMPAIGNS_MAX][64];
    char note[1024];                     /* plots skipped or failed, "" when none */
};

/* A writer's layout of d on f; out_dir is where the plots are. */
typedef void gg_report_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir);
/* The Markdown summary (gg_report_md.c). */
void gg_report_md_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir);
/* Lays d out in memory with lay_out, then writes it to path atomically (temporary file,
   rename). GG_E_NOMEM or GG_E_IO with a message naming path. */
enum gg_status gg_report_save(const char *path, gg_report_layout *lay_out,
                              const struct gg_report_doc *d, const char *out_dir, char *err,
                              size_t err_len);

/* Shared by the writers: the groups of c sorted by SNR, lowest first (empty groups last); idx
   receives n_groups indices. Median SNR of the groups at or above threshold, NaN when none. */
void gg_report_groups_by_snr(const struct gg_rcase *c, size_t *idx);
double gg_report_median_passing(const struct gg_rcase *c);
/* 1 when group gr is below the case's threshold. */
int gg_report_group_bad(const struct gg_rcase *c, const struct gg_rgroup *gr);
/* The replay command line for a case file, path quoted for a POSIX shell. */
void gg_report_replay_cmd(const struct gg_rcampaign *c, const char *path, char *buf,
                          size_t len);

#endif /* GG_REPORT_INT_H */

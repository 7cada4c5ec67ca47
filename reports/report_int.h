/*
 * report_int.h — internal to reports/: the model of what an HTML or Markdown report shows (a
 * suite result, whose records fuzz/suite/gg_suite.h declares, and campaign directories read from
 * disk), the gnuplot driver that turns it into PNG plots, and the two writers that lay it out.
 */
#ifndef GG_REPORT_INT_H
#define GG_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "reports/gg_report.h"
#include "fuzz/store/gg_store.h"

/* ---- JSON (gg_report_json.c) ---------------------------------------------------------------- */

/* x as a JSON number, or as the string "nan", "inf" or "-inf", which JSON has no number for. */
json_t *gg_report_json_num(double x);

/* ---- Suite results (gg_report_input.c) ------------------------------------------------------ */

/* Indices of the worst cases that have per-group numbers: failing verdicts first, then the
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
    char bucket[GG_BUCKET_ID_HEX + 1]; /* the id of its @bucket line, "" when none */
    int gpu;          /* the ordinal of its @gpu line, -1 when none */
};

/* A bug of a campaign: one bucket of its store, with its representative and its members. */
struct gg_rbucket {
    const struct gg_bucket *b;  /* in the campaign's buckets (not owned) */
    char *text;                 /* the representative's file ("" when it could not be read) */
    char *read_error;           /* why it could not be read or parsed; NULL when it could */
    char *observed;             /* its @observed, "" when absent */
    char shape[160];            /* "" when it does not parse */
    char kernel[GG_CASE_NAME_MAX], mutant[GG_CASE_NAME_MAX]; /* of its @bucket line, else of a
                                                                member's @finding; "" none */
    char gpus[96];              /* the members' @gpu ordinals, ascending ("0, 3"); "" none */
    size_t *members;            /* indices into the campaign's findings, in their order */
    size_t n_members;
    int new_tonight;            /* 1: no earlier night of the report holds it, 0: one does,
                                   -1: the report has no earlier night */
};

struct gg_rcampaign {
    char *dir;          /* as given */
    char *findings_dir; /* NULL when no findings store was found */
    struct gg_fuzzer_stats stats; /* fuzzer_stats in file order (a campaign of shards: their
                                     sums, see gg_report_campaign_load) */
    int shards;                   /* shard directories whose statistics were summed (0: none) */
    struct gg_plot_row *ticks;    /* plot_data */
    size_t n_ticks;
    struct gg_rfinding *findings; /* most severe class first, then the most frequent */
    size_t n_findings;
    struct gg_bucket_list buckets; /* the store's bugs (gg_buckets_scan) */
    struct gg_rbucket *bugs;      /* one per bucket, in the buckets' order */
    size_t n_bugs;
    size_t *untriaged;            /* indices of the findings in no bucket of the store */
    size_t n_untriaged;
};

/*
 * Reads a campaign: dir is the statistics directory (fuzzer_stats, plot_data) or the findings
 * store itself (statistics then come from its parent). The findings store is the --artifacts
 * directory of the recorded command line when it exists, else a subdirectory of dir holding
 * finding files. A campaign directory of shards (shard-<I>/fuzzer_stats, no fuzzer_stats of its
 * own) reads as one campaign: its cases, rates and faults summed over the shards, the earliest
 * start and the longest run time, its merged store artifacts/. Each finding goes to the bug
 * whose bucket its @bucket line names, or to the untriaged ones when that bucket has no
 * representative or it has no @bucket line. Errors name the file and the line or field.
 */
enum gg_status gg_report_campaign_load(const char *dir, struct gg_rcampaign *c, char *err,
                                       size_t err_len);
/* The same without plot_data and the findings' files: statistics and buckets only (a night of
   the trend). */
enum gg_status gg_report_campaign_load_summary(const char *dir, struct gg_rcampaign *c,
                                               char *err, size_t err_len);
void gg_report_campaign_free(struct gg_rcampaign *c);
/* Value of a fuzzer_stats key, or NULL. */
const char *gg_report_stat(const struct gg_rcampaign *c, const char *key);
/* Where a case's time went (fuzzer_stats' case_ms_*): "22.71 ms: setup 0.46, device buffers
   9.60, ..." in buf, or NULL when the campaign did not record it. */
const char *gg_report_case_time(const struct gg_rcampaign *c, char *buf, size_t len);
/* A campaign spread over GPUs: the ordinals its fuzzer_stats lists under gpus (at most max of
   them into ids; 0 when none), and the columns of its per-GPU table: gpu<ordinal>_<key> of
   fuzzer_stats under their label. */
size_t gg_report_gpus(const struct gg_rcampaign *c, int *ids, size_t max);
#define GG_REPORT_GPU_COLUMNS 6
extern const char *const gg_report_gpu_columns[GG_REPORT_GPU_COLUMNS][2];
const char *gg_report_gpu_stat(const struct gg_rcampaign *c, int ordinal, const char *key);

/* ---- Coverage of the ABI's freedoms (gg_report_coverage.c) ---------------------------------- */

/* A campaign's ABI freedoms part (its freedom_* statistics): a heading, how many of the cells
   the kernel takes were exercised, those never drawn and those refused, and the tables; nothing
   when its statistics hold none. ci numbers the heading's anchor (c<ci+1>-freedoms). */
void gg_report_coverage_html(FILE *f, const struct gg_rcampaign *c, size_t ci);
void gg_report_coverage_md(FILE *f, const struct gg_rcampaign *c);

/* ---- Nights: campaigns side by side (gg_report_nights.c) ------------------------------------ */

#define GG_REPORT_NIGHTS_MAX 1000 /* nights of one trend */
/* One night of the trend: a campaign's numbers. */
struct gg_rnight {
    char *dir;
    char label[64];            /* its start ("2026-12-05 02:00") or the directory's base name */
    char start[32];            /* start_time, "" when unknown */
    char kernel[GG_CASE_NAME_MAX], mutant[GG_CASE_NAME_MAX]; /* "" when unknown */
    double run_time, rate;     /* s and cases/s; NaN when unknown */
    long long cases, signatures, untriaged, buckets, buckets_new; /* -1 when unknown */
    int store;                 /* its findings store was read: ids are its buckets */
    char (*ids)[GG_BUCKET_ID_HEX + 1];
    size_t n_ids;
    char *error;               /* why the night could not be read (its numbers unknown); NULL */
    int campaign;              /* index of its section among the report's campaigns, -1 none */
};
struct gg_rnights {
    struct gg_rnight *n;       /* by start_time, then directory (unknown starts first) */
    size_t count;
    const char *history;       /* the history directory (not owned), NULL when none */
    size_t given;              /* campaign directories given besides the history */
};
/*
 * The nights of a report: every campaign directory directly under history (NULL: none), that
 * is a directory holding fuzzer_stats, artifacts/ or shard-<I>/, read by
 * gg_report_campaign_load_summary(), and the n campaigns camps already loaded (the same
 * directory as one of history's, by device and inode, is one night). A night that cannot be
 * read stays in the trend with its error. GG_E_IO when history cannot be listed, GG_E_PARSE
 * when it holds more than GG_REPORT_NIGHTS_MAX nights, GG_E_NOMEM. Free with
 * gg_report_nights_free() (also after an error).
 */
enum gg_status gg_report_nights_build(const char *history, const struct gg_rcampaign *camps,
                                      size_t n, struct gg_rnights *t, char *err, size_t err_len);
/* The latest night that could be read (-1: none). */
long gg_report_nights_latest(const struct gg_rnights *t);
/* Counts each night's new buckets (those no earlier night holds) and marks the bugs of the
   campaigns shown in full (gg_rbucket.new_tonight). camps are those the nights' campaign
   fields index. */
void gg_report_nights_mark(struct gg_rnights *t, struct gg_rcampaign *camps);
void gg_report_nights_free(struct gg_rnights *t);

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
/* A campaign over time, three panels on one time axis: bugs (buckets) and signatures, coverage
   (features and corpus), cases per second. Series plot_data lacks (an older ggfuzz's) are left
   out and the panel says so. */
enum gg_status gg_report_plot_campaign(struct gg_plotter *p, const struct gg_rcampaign *c,
                                       const char *png, char *err, size_t err_len);
/* Cases per second of each GPU over the whole run (fuzzer_stats' gpu<I>_execs_per_sec: plot_data
   has no series per GPU). */
enum gg_status gg_report_plot_gpus(struct gg_plotter *p, const struct gg_rcampaign *c,
                                   const char *png, char *err, size_t err_len);
/* The trend across nights: bugs per night (those new that night stacked on those seen before),
   and cases per night. */
enum gg_status gg_report_plot_nights(struct gg_plotter *p, const struct gg_rnights *t,
                                     const char *png, char *err, size_t err_len);

/* ---- The report and its writers (gg_report_write.c, gg_report_html.c, gg_report_md.c) ------- */

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
    char campaign_png[GG_REPORT_CAMPAIGNS_MAX][64]; /* over time */
    char gpu_png[GG_REPORT_CAMPAIGNS_MAX][64];      /* per GPU */
    const struct gg_rnights *nights;     /* the trend; shown when it has two nights or more */
    char nights_png[64];
    char note[1024];                     /* plots skipped or failed, "" when none */
};

/* What the writers cap, so that a report grows with the bugs, not with the signatures: member
   signatures listed under a bug, and untriaged signatures shown with their replay commands. */
#define GG_REPORT_MEMBERS_HTML 40
#define GG_REPORT_MEMBERS_MD 8
#define GG_REPORT_UNTRIAGED_HTML 25
#define GG_REPORT_UNTRIAGED_MD 10

/* A writer's layout of d on f; out_dir is where the plots are. */
typedef void gg_report_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir);
/* The HTML page (gg_report_html.c). */
void gg_report_html_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir);
/* The Markdown summary (gg_report_md.c). */
void gg_report_md_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir);
/* Lays d out in memory with lay_out, then writes it to path atomically (temporary file,
   rename). GG_E_NOMEM or GG_E_IO with a message naming path (gg_report_write.c). */
enum gg_status gg_report_save(const char *path, gg_report_layout *lay_out,
                              const struct gg_report_doc *d, const char *out_dir, char *err,
                              size_t err_len);

/* The HTML page's part of campaign ci of d (gg_report_html_campaign.c). */
void gg_report_html_campaign(FILE *f, const struct gg_report_doc *d, const char *out_dir,
                             size_t ci);
/* Text with & < > " ' escaped for HTML (gg_report_html.c). */
void gg_report_html_esc(FILE *f, const char *s);
/* The PNG png of out_dir embedded as an <img> with a data URI; nothing when png is "" (the plot
   was not made). */
void gg_report_html_img(FILE *f, const char *out_dir, const char *png, const char *alt);

/* Shared by the writers: the groups of c sorted by SNR, lowest first (empty groups last); idx
   receives n_groups indices. Median SNR of the groups at or above threshold, NaN when none. */
void gg_report_groups_by_snr(const struct gg_rcase *c, size_t *idx);
double gg_report_median_passing(const struct gg_rcase *c);
/* 1 when group gr is below the case's threshold. */
int gg_report_group_bad(const struct gg_rcase *c, const struct gg_rgroup *gr);
/* How many of c's bugs are new: with an earlier night in the report (*since_nights = 1), those
   no earlier night holds; else fuzzer_stats' buckets_new (-1 when it has none). */
long long gg_report_bugs_new(const struct gg_rcampaign *c, int *since_nights);
/* The line a campaign's part opens with, as plain UTF-8 text for the writers to escape: head
   "2 bugs (1 new)", rest "123 signatures, 9 not yet triaged · 688 cases in 46.1 s (14.9 a
   second) · KERNEL + mutant M · GPUs 0,1 · 4 shards" (the parts the statistics hold). */
void gg_report_campaign_lead(const struct gg_rcampaign *c, char *head, size_t head_len,
                             char *rest, size_t rest_len);
/* A command that lists the files of c's findings store filed in bucket_id, or (NULL) in none. */
void gg_report_list_cmd(const struct gg_rcampaign *c, const char *bucket_id, char *buf,
                        size_t len);
/* The replay command line for a case file, path quoted for a POSIX shell. */
void gg_report_replay_cmd(const struct gg_rcampaign *c, const char *path, char *buf,
                          size_t len);

#endif /* GG_REPORT_INT_H */

/*
 * gg_suite.h — public header of fuzz/suite/: the SNR suite. The generator of the committed suite
 * corpus (gg_suite_gen.c), the suite runner and gate (gg_suite.c); the `ggfuzz suite` command
 * (fuzz/cli/cli_suite.c) drives them.
 */
#ifndef GG_SUITE_H
#define GG_SUITE_H

#include <stdio.h>

#include "fuzz/case/gg_case.h"
#include "fuzz/run/gg_run.h"

struct gg_gpus; /* fuzz/run/gg_run.h */
struct gg_rsuite; /* a suite result's records */

/* The tiers, in the order of the generator's output directories. */
#define GG_SUITE_TIERS 3
extern const char *const gg_suite_tier_names[GG_SUITE_TIERS]; /* quick, release, stress */

/* Cases written per tier by gg_suite_generate(). */
struct gg_suite_counts {
    int cases[GG_SUITE_TIERS];
};

/*
 * Writes the suite corpus under root: root/quick, root/release and root/stress (created when
 * missing; *.case files already there are removed first, so the directories hold exactly the
 * generated set). Deterministic: the same files, byte for byte, on every run and host.
 * counts may be NULL.
 */
enum gg_status gg_suite_generate(const char *root, struct gg_suite_counts *counts, char *err,
                                 size_t err_len);

/* A progress line at least this often (status_interval_s 0; the command line's default). */
#define GG_SUITE_DEFAULT_STATUS_S 60

/* What `ggfuzz suite` runs and how it judges (cli_suite.c fills it from the command line). */
struct gg_suite_opts {
    const char *tier;                /* name written into the results ("quick", ...) */
    const char *const *paths;        /* case files and directories, run in order */
    int n_paths;
    const char *const *kernels;      /* run every case on each of these (n_kernels 0: the
                                        case's own kernel) */
    int n_kernels;
    const char *mutant;              /* (optional) run with this mutant (or list of mutants);
                                        kernels without one of them skip */
    int gate;                        /* the verdict decides the exit code */
    const char *baseline_path;       /* (optional) suite JSON to compare SNR and times with */
    double snr_drop_db;              /* a worst-group SNR lower than the baseline's by more
                                        than this regresses */
    int perf;                        /* time the kernels and apply the perf rule */
    int perf_runs;                   /* timed runs per case (median) */
    double timeout_s;                /* per case run (<= 0: none) */
    int no_fork;                     /* run in this process */
    int64_t max_mem_bytes;           /* 0: the memory available */
    enum gg_reference_where reference; /* where every run's reference is computed */
    const char *json_path, *save_baseline_path, *junit_path, *report_dir; /* (optional) outputs */
    /* The writers of the outputs that render a result, from reports/, which fuzz/suite does not
       include: the command line hands in reports/'s. write_junit writes res as JUnit XML to path
       (for junit_path); write_report the report of the result JSON at result_json into out_dir
       (for report_dir). An output asked for without its writer is not written (output_failed). */
    enum gg_status (*write_junit)(const struct gg_rsuite *res, const char *path, char *err,
                                  size_t err_len);
    enum gg_status (*write_report)(const char *result_json, const char *out_dir, char *err,
                                   size_t err_len);
    char **plugins;                  /* recorded in the results */
    int n_plugins;
    FILE *out;                       /* one line per case and the summary */
    int shard_index, shard_count;    /* --shard I/N: run the cases dealt to shard I of N (by
                                        case identity; count 0 or 1: all), and record each one's
                                        place in the whole run for gg_suite_merge() */
    const struct gg_gpus *gpus;      /* (optional) --gpus: with one device the run is bound to
                                        it; with several, one runner process per device takes
                                        the next case not yet taken, so the cases run on all of
                                        them at once, and the records are put back in the order
                                        of one process (the same result, apart from timings);
                                        --perf then times on the first. Not with no_fork. */
    double status_interval_s;        /* a progress line (cases done of all, time spent, an
                                        estimate of what is left) at most this often (0:
                                        GG_SUITE_DEFAULT_STATUS_S) */
    int workers;                     /* cases run at once (0: one per device of gpus, else
                                        one): that many runner processes, dealt to the devices
                                        of gpus in turn, take the next case not yet taken; a
                                        case starts when its host and device memory fit beside
                                        the running ones (gg_ledger.c). Not with no_fork. */
};

/* Counts of a suite run, by case verdict. */
struct gg_suite_summary {
    int cases, pass, fail, regressed, skipped, errors;
    int gate_failed;                 /* the gate's verdict is fail */
    int output_failed;               /* a requested output could not be written */
};

/* Runs the suite, prints each case and the summary, writes the requested outputs. Returns GG_OK
   (the outcome is in sum) or a status and message when it could not run at all (a baseline that
   cannot be read, no case found). */
enum gg_status gg_suite_run(const struct gg_suite_opts *o, struct gg_suite_summary *sum,
                            char *err, size_t err_len);

/* Merges the results of the shards of one run (paths[0..n), written by --shard I/N runs with
   --json) into the result one process would have written: the cases in the whole run's order,
   counted and gated the same way (a baseline, SNR drop and perf rule were applied by the
   shards), then printed and written as o asks (json_path, junit_path, report_dir,
   save_baseline_path, their writers, out; o's other fields are not used). A missing, repeated or mismatched
   shard (another count, tier, thresholds, kernels, mutant, baseline or gate setting) is
   GG_E_INVAL naming it. */
enum gg_status gg_suite_merge(const char *const *paths, int n, const struct gg_suite_opts *o,
                              struct gg_suite_summary *sum, char *err, size_t err_len);

#endif /* GG_SUITE_H */

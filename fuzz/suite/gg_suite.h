/*
 * gg_suite.h — public header of fuzz/suite/: the SNR suite. The generator of the committed suite
 * corpus (gg_suite_gen.c), the suite result's records and their JSON file (gg_suite_json.c), which
 * reports/ reads, the suite runner and gate (gg_suite.c); the `ggfuzz suite` command
 * (fuzz/cli/cli_suite.c) drives them.
 */
#ifndef GG_SUITE_H
#define GG_SUITE_H

#include <stdio.h>

#include "fuzz/case/gg_case.h"
#include "fuzz/run/gg_run.h"

struct gg_gpus; /* fuzz/run/gg_run.h */

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

/* ------------------------------------------------------------------------------------------ */
/* The suite result and its JSON file (gg_suite_json.c)                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * The suite result (gg_suite_json.c): `ggfuzz suite` writes it, `ggfuzz report` and a later
 * suite's --baseline read it. On disk, an object with "format": GG_SUITE_FORMAT and "version":
 * GG_SUITE_VERSION, the run's header, "host", "gate" and "summary" objects and a "cases" array of
 * case objects, each with its "groups". In memory, the records below; one field table per record
 * in gg_suite_json.c gives each field's key, type and absence rule to both the reader and the
 * writer.
 *
 * Ownership: a struct gg_rsuite owns every string and array it holds (malloc'd copies, released
 * by gg_suite_result_free()); records handed to gg_suite_result_add() and
 * gg_suite_result_set_header() only lend theirs, which are copied. Strings of a gg_rsuite are
 * never NULL: "" stands for a null or absent string, and the table tells the writer which of the
 * two to give back.
 */
#define GG_SUITE_FORMAT "ggfuzz-suite"
#define GG_SUITE_VERSION 1

/* A number that the JSON may leave null or out; set only when finite. */
struct gg_rnum {
    double v;
    int set;
};

/* One group (expert, batch) of a case. */
struct gg_rgroup {
    int64_t g, rows, outputs;  /* rows, outputs: -1 when not given */
    struct gg_rnum snr_db;     /* unset: empty group, or an exact result when exact is set */
    int exact;
};

/* One case on one kernel. A case without a verdict (skipped, error) has no class ("": null),
   no max_ratio and no detail. */
struct gg_rcase {
    const char *id, *file, *kernel, *mutant, *model;
    int64_t ep;               /* -1: null */
    const char *routing, *phase, *op, *recipe, *shape;
    const char *cls;          /* the verdict's class; "": no verdict */
    struct gg_rnum threshold_db;
    int64_t worst_group;      /* -1: null */
    struct gg_rnum worst_group_snr_db, pooled_snr_db, src_snr_db, margin_db, max_ratio;
    struct gg_rnum ref_src_snr_db; /* the exact reference against the source (unset: none) */
    const char *signature, *detail;
    const char *advisory;     /* "" or what the verdict says is not the kernel's fault */
    struct gg_rgroup *groups;
    size_t n_groups;
    struct gg_rnum seconds, baseline_snr_db, baseline_time_us, snr_drop_db;
    const char *baseline_record; /* with --baseline: "found" or "missing" (its record of this
                                    case and kernel); "": no baseline, or no verdict */
    /* Where the case's seconds went (ggfuzz run -v's phases; unset: the case did not run). */
    struct gg_rnum setup_s, inputs_s, runs_s, reference_s, compare_s;
    const char *verdict;      /* pass, fail, regressed, skipped or error */
    const char *reason;       /* why it is not a pass ("" for a pass); read from "detail" when a
                                 file has no reason */
    struct gg_rnum time_us;
    int perf_regressed;
    int64_t order;            /* a shard's result: the case's place in the whole run (-1: not
                                 a shard's, left out) */
    /* Derived when the case is loaded or added, not written. */
    int exact;                /* no worst-group number because every group with rows is exact */
    char label[96];           /* short name: the case file's base name, else the id */
};

struct gg_rsuite {
    const char *path;         /* the file it was loaded from (not owned), NULL when built */
    const char *tier;
    int64_t thresholds_version;
    const char *ggfuzz_version, *started;
    struct gg_rnum seconds;
    const char *hostname, *cpu, *gpu; /* "host"; gpu "": null (no GPU kernel ran) */
    const char *const *kernels;       /* the --kernel list */
    size_t n_kernels;
    const char *const *plugins;
    size_t n_plugins;
    const char *mutant;               /* --mutant; "": null */
    const char *gate_verdict, *baseline; /* "gate"; baseline "": null */
    struct gg_rnum gate_snr_drop_db;
    int perf;
    const char *const *reasons;
    size_t n_reasons;
    /* "summary": written as they stand; counted from the cases on load and by
       gg_suite_result_count(), so that they always agree with the cases. */
    int64_t n_counted, n_pass, n_fail, n_regressed, n_skipped, n_errors;
    /* "shard", a shard's result (ggfuzz suite --shard I/N) only: its index and the count, and
       the records of the whole run; -1 (the object left out) otherwise. */
    int64_t shard_index, shard_count, shard_records;
    struct gg_rcase *cases;
    size_t n_cases;
};

/* Reads and checks a suite result JSON (a regular file of at most 1 GiB). Errors name the file
   and the field ("F: cases[3].verdict: ..."): GG_E_IO when it cannot be read, GG_E_PARSE when
   it is not a suite result. s is always left in a state gg_suite_result_free() accepts. */
enum gg_status gg_suite_result_load(const char *path, struct gg_rsuite *s, char *err,
                                    size_t err_len);
/* Writes s to path atomically (temporary file, rename), indented one space, every case in the
   table's key order. GG_E_NOMEM, or GG_E_IO with a message naming path. */
enum gg_status gg_suite_result_save(const struct gg_rsuite *s, const char *path, char *err,
                                    size_t err_len);
/* Appends a copy of c to s's cases (its label and exact derived). GG_OK or GG_E_NOMEM (s is
   unchanged then). */
enum gg_status gg_suite_result_add(struct gg_rsuite *s, const struct gg_rcase *c);
/* Replaces s's header (every field but the cases and the counts) with a copy of h's. GG_OK or
   GG_E_NOMEM (some of the header's strings may then be NULL, which the writer takes as ""). */
enum gg_status gg_suite_result_set_header(struct gg_rsuite *s, const struct gg_rsuite *h);
/* Replaces the string *field of a record of s with a copy of value. GG_OK or GG_E_NOMEM (the
   field is unchanged then). */
enum gg_status gg_suite_result_set(const char **field, const char *value);
/* Counts the cases by verdict into the summary fields. */
void gg_suite_result_count(struct gg_rsuite *s);
/* The case for (id, kernel), or NULL. */
const struct gg_rcase *gg_suite_result_find(const struct gg_rsuite *s, const char *id,
                                            const char *kernel);
void gg_suite_result_free(struct gg_rsuite *s);
/* 1 for verdicts that fail the gate (fail, regressed, error). */
int gg_suite_verdict_bad(const char *verdict);

/* ------------------------------------------------------------------------------------------ */
/* Running and gating the suite (gg_suite.c, gg_suite_merge.c)                                 */
/* ------------------------------------------------------------------------------------------ */

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

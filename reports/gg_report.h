/*
 * gg_report.h — public header of reports/: writers that turn case results into what people
 * read (one line per case on a terminal, JSON for tools, a run's arrays as .npy files for
 * NumPy and torch), JUnit XML, and the HTML and Markdown report of suite results (whose records
 * fuzz/suite/gg_suite.h holds) and campaign directories.
 */
#ifndef GG_REPORT_H
#define GG_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/run/gg_run.h"
#include "fuzz/suite/gg_suite.h"

/* Outcome of one case in a run or replay. */
struct gg_report_case {
    const char *path;                  /* case file */
    const struct gg_case *kase;        /* parsed case, NULL when it could not be parsed */
    enum gg_status status;             /* GG_OK when a verdict exists */
    const char *error;                 /* message when status != GG_OK */
    const struct gg_run_result *result; /* NULL when status != GG_OK */
    const char *expect;                /* replay: the @expect text, or NULL */
    int replay_ok;                     /* replay: 1 when the expectation reproduced */
};

/* One human line per case (two with detail); verbose adds per-group SNR for failing groups. */
void gg_report_text_case(FILE *f, const struct gg_report_case *rc, int replay, int verbose);

/* JSON report: an array of case objects written to path (atomically). Returns GG_OK or GG_E_IO. */
struct gg_report_json;
struct gg_report_json *gg_report_json_open(void);
void gg_report_json_add(struct gg_report_json *j, const struct gg_report_case *rc);
enum gg_status gg_report_json_write(struct gg_report_json *j, const char *path, char *err,
                                    size_t err_len);
void gg_report_json_free(struct gg_report_json *j);

/*
 * Dumps of case runs (gg_report_dump.c), `ggfuzz run --dump DIR`: the case's inputs, scales,
 * group and routing arrays, its reference (ref: fp64 values; abs: Σ|ab|; bound: the part of each
 * element's bound that does not depend on the output) and the kernel's output C as .npy files
 * (dense, C order) and index.json (format "ggfuzz-dump", version 1): each array's file, dtype as
 * stored, NumPy descr of the raw bits, shape and the strides the kernel saw; the problem; the
 * state ("running" before the kernel returned, "done", "ended" when the parent recorded an
 * outcome the process could not, "inputs" without a kernel); the status and verdict; per group
 * its metrics and worst element; per failing group its first failing element.
 *
 * gg_report_dump_observe() is a gg_run_opts observer (ctx: a struct gg_report_dump): in the
 * process running the case it writes the inputs, the reference and a "running" index before the
 * kernel runs, then the output and the final index. Every file is written atomically; when one
 * cannot be, the files the dump wrote are removed and err names the file ("DIR/c.npy: cannot
 * write the kernel's output C: REASON (...)"): GG_E_IO or GG_E_NOMEM.
 */
struct gg_report_dump {
    char dir[4096];
    const char *case_path; /* for the index (not owned) */
    int arrays_written;    /* the inputs and reference are on disk */
    char **written;        /* files written, removed again when a later one fails */
    size_t n_written;
};
void gg_report_dump_init(struct gg_report_dump *d, const char *dir, const char *case_path);
void gg_report_dump_free(struct gg_report_dump *d);
enum gg_status gg_report_dump_observe(void *ctx, const struct gg_run_view *v, char *err,
                                      size_t err_len);
/* In the process that started the run, once it has ended: an index left at "running" (the
   process died, or was killed, while the kernel ran) gets the run's outcome rc, the state
   "ended" and, as the reason C is missing, the verdict's detail or the error; the temporary
   files of a write the process did not finish are removed. GG_OK when there is nothing to
   record; else GG_E_IO with a message naming the index. */
enum gg_status gg_report_dump_finish(const struct gg_report_dump *d,
                                     const struct gg_report_case *rc, char *err, size_t err_len);
/* Opens an .npy file (format 1.0) for an atomic write: the header for descr (a NumPy type string
   such as "<u2") and the C-order shape of ndim dimensions is written; the caller writes the data
   through a->f and commits with gg_atomic_commit(). what names the array in messages. */
enum gg_status gg_report_npy_open(struct gg_atomic *a, const char *path, const char *what,
                                  const char *descr, const int64_t *shape, int ndim, char *err,
                                  size_t err_len);

/*
 * HTML and Markdown report of a suite result JSON and of campaign directories: writes
 * out_dir/index.html (one self-contained file: inline CSS, plots as data URIs, no script),
 * out_dir/summary.md (plots referenced as the PNG files beside it) and the PNGs. A campaign's
 * part leads with its bugs, one per bucket of its findings store, with the member signatures
 * folded under each; signatures in no bucket follow as not yet triaged. Plots need gnuplot
 * (GGFUZZ_GNUPLOT, else PATH); without it the report has tables only and says so. Either input may
 * be absent (NULL, or n_campaigns 0), not both. Returns GG_E_IO or GG_E_PARSE with a message naming the file and
 * the field when an input cannot be read or is malformed (nothing is written then), GG_E_IO when
 * the output cannot be written. out (may be NULL) tells what happened to the plots.
 */
#define GG_REPORT_CAMPAIGNS_MAX 16 /* campaign directories in one report */
struct gg_report_out {
    int plots;          /* PNG plots made */
    int plots_failed;   /* plots gnuplot was asked for and did not make */
    char note[1024];    /* why plots were skipped or failed; "" when every plot was made */
};
enum gg_status gg_report_write(const char *suite_json_path, const char *const *campaign_dirs,
                               int n_campaigns, const char *out_dir, struct gg_report_out *out,
                               char *err, size_t err_len);
/*
 * The same with the trend across nights: history_dir (NULL: none) holds campaign directories,
 * one per night (a directory holding fuzzer_stats, artifacts/ or shard-<I>/; at most
 * GG_REPORT_NIGHTS_MAX of report_int.h). The report then opens with the nights, by start time:
 * cases, signatures, bugs and new bugs (those whose bucket no earlier night holds) per night,
 * the campaign directories given among them; two campaign directories or more without a history
 * make a trend too. With a history and no campaign directory, its latest night that can be read
 * is shown in full; a night that cannot be read is listed with the reason. A history without a
 * campaign directory in it is GG_E_PARSE.
 */
enum gg_status gg_report_write_nights(const char *suite_json_path,
                                      const char *const *campaign_dirs, int n_campaigns,
                                      const char *history_dir, const char *out_dir,
                                      struct gg_report_out *out, char *err, size_t err_len);
/* gg_report_write() with at most one campaign directory (NULL: none). */
enum gg_status gg_report_html_write(const char *suite_json_path, const char *campaign_dir,
                                    const char *out_dir, char *err, size_t err_len);

/*
 * JUnit XML (gg_report_junit.c), the format CI systems read: one <testsuites> holding one
 * <testsuite> with a <testcase> per entry, each with a <failure>, <error> or <skipped> element
 * unless it passed. Text is escaped for XML 1.0 (markup characters as entities; control
 * characters XML cannot carry and invalid UTF-8 become U+FFFD). Written atomically.
 */
enum gg_junit_outcome { GG_JUNIT_PASS = 0, GG_JUNIT_FAILURE, GG_JUNIT_ERROR, GG_JUNIT_SKIPPED };
struct gg_junit_case {
    const char *classname;  /* dotted group, e.g. "suite.quick.deepseek-v3" */
    const char *name;
    double seconds;
    enum gg_junit_outcome outcome;
    const char *message;    /* the message attribute of failure, error or skipped (may be NULL) */
    const char *type;       /* the type attribute of failure or error (may be NULL) */
    const char *text;       /* body of failure or error (may be NULL) */
    const char *system_out; /* (optional) <system-out> of the test case */
};
struct gg_junit_suite {
    const char *name;
    const char *timestamp;  /* ISO 8601, may be NULL */
    const char *hostname;   /* may be NULL */
    double seconds;
    const struct gg_junit_case *cases;
    size_t n_cases;
};
/* Writes suite to path. Returns GG_OK, or GG_E_IO with a message naming the path. */
enum gg_status gg_report_junit_write(const struct gg_junit_suite *suite, const char *path,
                                     char *err, size_t err_len);
/*
 * The JUnit suite of a suite result (gg_report_suite_junit.c): one test case "FILE on KERNEL" per
 * case, class "suite.TIER.MODEL", passing, skipped, an error (could not run) or a failure of
 * the verdict's class (or "regressed"), with the shape, worst-group SNR, signature and reason.
 * js and its strings are allocated; gg_report_suite_junit_free() releases them.
 */
enum gg_status gg_report_suite_junit(const struct gg_rsuite *s, struct gg_junit_suite *js,
                                     char *err, size_t err_len);
void gg_report_suite_junit_free(struct gg_junit_suite *js);
/* gg_report_suite_junit() of s written to path by gg_report_junit_write(): GG_OK, or a status
   with a message. The writer `ggfuzz suite` hands to the suite (gg_suite_opts.write_junit). */
enum gg_status gg_report_suite_junit_write(const struct gg_rsuite *s, const char *path, char *err,
                                           size_t err_len);

#endif /* GG_REPORT_H */

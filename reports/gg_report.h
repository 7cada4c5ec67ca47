/*
 * gg_report.h — public header of reports/: writers that turn case results into what people
 * read (one line per case on a terminal, JSON for tools).
 */
#ifndef GG_REPORT_H
#define GG_REPORT_H

#include <stdio.h>

#include "fuzz/run/gg_run.h"

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
/* The shape summary "grouped_fwd bf16-bf16-bf16 G=4 M=192 N=256 K=512" of a case. */
void gg_report_shape(const struct gg_case *c, char *buf, size_t len);

/* JSON report: an array of case objects written to path (atomically). Returns GG_OK or GG_E_IO. */
struct gg_report_json;
struct gg_report_json *gg_report_json_open(void);
void gg_report_json_add(struct gg_report_json *j, const struct gg_report_case *rc);
enum gg_status gg_report_json_write(struct gg_report_json *j, const char *path, char *err,
                                    size_t err_len);
void gg_report_json_free(struct gg_report_json *j);

/*
 * The suite result JSON (gg_report_suite.c): `ggfuzz suite` writes it, `ggfuzz report` and a
 * later suite's --baseline read it. A result is an object with "format": GG_SUITE_FORMAT and
 * "version": GG_SUITE_VERSION, the run's header and a "cases" array of case objects.
 */
#define GG_SUITE_FORMAT "ggfuzz-suite"
#define GG_SUITE_VERSION 1
typedef struct json_t json_t;
/* Writes root to path atomically (temporary file, rename), indented one space. GG_E_IO with a
   message naming path. */
enum gg_status gg_report_suite_save(json_t *root, const char *path, char *err, size_t err_len);
/* Loads a baseline result: *doc (json_decref() it) and its "cases" array in *cases. GG_E_PARSE
   with a message when it is not JSON or not a suite result with a cases array. */
enum gg_status gg_report_suite_baseline(const char *path, json_t **doc, json_t **cases,
                                        char *err, size_t err_len);
/* The case object of cases for (id, kernel), or NULL. */
json_t *gg_report_suite_find(json_t *cases, const char *id, const char *kernel);

/*
 * HTML and Markdown report of a suite result JSON and of campaign directories: writes
 * out_dir/index.html (one self-contained file: inline CSS, plots as data URIs), out_dir/summary.md
 * (plots referenced as the PNG files beside it) and the PNGs. Plots need gnuplot (GG_GNUPLOT, else
 * PATH); without it the report has tables only and says so. Either input may be absent (NULL,
 * or n_campaigns 0), not both. Returns GG_E_IO or GG_E_PARSE with a message naming the file and
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

#endif /* GG_REPORT_H */

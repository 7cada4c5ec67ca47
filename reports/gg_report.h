/*
 * gg_report.h — public header of reports/: writers that turn case results into what people
 * read (one line per case on a terminal, JSON for tools).
 */
#ifndef GG_REPORT_H
#define GG_REPORT_H

#include <stdio.h>

#include "fuzz/gg_fuzz.h"

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

#endif /* GG_REPORT_H */

/*
 * suite_int.h — internal to fuzz/suite/: what a suite run (gg_suite.c) and the merge of shards'
 * results (gg_suite_merge.c) both do with a result (gg_suite_result.c): print a case's line and
 * the summary, count the verdicts and the gate's reasons, and write the outputs; and the plan of a
 * run, its cases in order and their shards (gg_suite_plan.c).
 */
#ifndef GG_SUITE_INT_H
#define GG_SUITE_INT_H

#include <stdio.h>

#include "fuzz/suite/gg_suite.h"

/* Gate reasons, counted from the cases' records (GG_R_UNMATCHED: cases judged against a
   baseline that holds a record of none of them). */
enum gg_suite_reason { GG_R_BELOW, GG_R_STRUCTURAL, GG_R_DROPPED, GG_R_SLOWER, GG_R_ERRORS,
                       GG_R_UNMATCHED, GG_N_REASONS };

/* One line per case: verdict, kernel, model and deployment, shape and dtypes, recipe, worst
   group SNR against the threshold; failures add the signature and what fired. */
void gg_suite_print_case(FILE *f, const struct gg_rcase *c);
/* The gate's reasons as text (an SNR drop counts past allowed_db), one per reason that counted;
   returns how many. */
size_t gg_suite_reasons(const struct gg_rsuite *res, double allowed_db,
                        char text[GG_N_REASONS][128]);
/* Counts res's cases by verdict into its summary and into sum, and the gate's verdict (which
   fails too when a baseline was given and holds a record of none of the cases it judged). */
void gg_suite_count(struct gg_rsuite *res, struct gg_suite_summary *sum);
/* The summary lines of res on f (cpu_timed: the note that --perf timed CPU kernels; a WARNING
   line when the baseline lacks a record of some of the cases, a line when it has none). */
void gg_suite_print_summary(FILE *f, const struct gg_rsuite *res,
                            const struct gg_suite_summary *sum, double seconds, int cpu_timed);
/* The outputs o asks for (result JSON, baseline, JUnit, report); a failure is reported on
   o->out and counted in sum->output_failed. */
void gg_suite_write_outputs(const struct gg_suite_opts *o, const struct gg_rsuite *res,
                            struct gg_suite_summary *sum);

/* Every case file of a run in the order one process runs them (gg_suite_plan.c): a case, or a
   path that cannot be read (error), and the shard that runs it. */
struct gg_suite_entry {
    char *path, *error;            /* error: why path's cases cannot be run (NULL: a case) */
    struct gg_case c;              /* when loaded */
    int loaded;
    char id[GG_CASE_ID_HEX + 1];
    int shard;                     /* of shard_count (0 when not sharded) */
};
struct gg_suite_plan {
    struct gg_suite_entry *e;
    size_t n;
};
/* Lists and loads the cases of paths; with shard_count > 1, deals them to the shards by case
   identity. GG_E_NOMEM is its only failure. Free with gg_suite_plan_free(). */
enum gg_status gg_suite_plan_build(const char *const *paths, int n_paths, int shard_count,
                                   struct gg_suite_plan *p, char *err, size_t err_len);
void gg_suite_plan_free(struct gg_suite_plan *p);

/* A run spread over runner processes (gg_suite_devices.c). The entries of a plan are claimed
   one at a time from a counter the runners share. */
typedef struct gg_suite_claim gg_suite_claim;
/* The index of the next plan entry no runner has claimed yet (claims past the end are harmless). */
size_t gg_suite_claim_next(gg_suite_claim *claim);
/* 1 for the one runner that should print the run's progress now (it is interval seconds past
   the last progress line any runner printed, counted from the claim's creation); 0 for all
   the others. */
int gg_suite_claim_status(gg_suite_claim *claim, double interval_s);
/*
 * Starts n runner processes (2 <= n <= GG_GPUS_MAX): runner k is bound to device g->id[k % g->n]
 * before it touches one (gg_gpus_bind; unbound when g is NULL or names none), holds slot k of
 * the memory ledger (which the caller opened) and gets its share of the host's threads; each
 * calls run(ctx, claim, path), which runs the entries it claims and saves its result to path (its
 * exit code: 0 saved). The parent waits for all and loads their results into r[0..n). GG_OK, or
 * a status and message naming the runner that failed (r is then left for gg_suite_result_free
 * all the same).
 */
enum gg_status gg_suite_on_runners(const struct gg_gpus *g, int n,
                                   int (*run)(void *ctx, gg_suite_claim *claim, const char *path),
                                   void *ctx, struct gg_rsuite *r, char *err, size_t err_len);

#endif /* GG_SUITE_INT_H */

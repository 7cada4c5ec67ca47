/*
 * gg_minimize.h — public header of fuzz/minimize/: shrinking a failing case while its verdict
 * keeps its signature, or (bucket mode) its class family: the normal form triage files by.
 */
#ifndef GG_MINIMIZE_H
#define GG_MINIMIZE_H

#include "fuzz/store/gg_store.h"

/* ------------------------------------------------------------------------------------------ */
/* Minimiser (gg_minimize.c, gg_min_passes.c)                                                  */
/* ------------------------------------------------------------------------------------------ */

/* What the options' 0 stands for (the command line shows these as its defaults). */
#define GG_MIN_DEFAULT_TIME_S 600    /* the whole minimisation */
#define GG_MIN_DEFAULT_TIMEOUT_S 300 /* each run of a candidate */

struct gg_min_opts {
    double max_total_time_s;     /* stop after this long (0: GG_MIN_DEFAULT_TIME_S; GG_NO_LIMIT:
                                    at the fixpoint only) */
    int repeats;                 /* a step counts when the signature reproduces this many times of
                                    as many runs (0: 1; intermittent faults want 2 or more) */
    double timeout_s;            /* per run (0: GG_MIN_DEFAULT_TIMEOUT_S; GG_NO_LIMIT: none) */
    struct gg_run_opts run;      /* kernel/mutant overrides, memory limit */
    const char *progress_path;   /* (optional) saved after each pass that shrank the case */
    const char *findings_dir;    /* (optional) a different fault met on the way is recorded here */
    /* Bucket mode (the normal form of triage): a step counts when the verdict keeps the class's
       family (gg_bucket_family), whatever the rest of the signature, and the passes try the
       smallest sizes and the simplest op, dtypes and input placement first, so that every case
       of one bug ends at one case. */
    int bucket;
    /* (optional, bucket mode) called with the signature of each case kept; non-zero stops the
       minimisation there (a signature already filed in a bucket). */
    int (*stop_at)(const char *signature, void *arg);
    void *stop_arg;
    /* (bucket mode) runs of the normal form after a fixpoint, every other one pinned to one CPU
       (and half as many of the case as found, for wrong values and workspace dependence, which
       a race lost the same way by every run of a small case shows as, whose minimisation also
       runs its first few passing candidates once more): a verdict that changes from run to run
       of one case (its inputs are fixed, so only the schedule can change it) marks it unstable,
       a race whatever class it showed as. */
    int stability_runs;
    /* (optional) Where candidates run: in this worker process, one after another, instead of a
       forked child each (what a GPU kernel's runs want: one context, device memory kept). The
       case the minimisation ends at, and any other fault recorded on the way, is run again in a
       fresh process: when it fails there otherwise (a kernel whose state made it fail), the
       minimisation starts over with a fresh process per run. */
    struct gg_workerproc *proc;
    /* (optional) The share of the wall time the runs may take, in (0, 1): after each run the
       minimiser waits until its runs since it started took at most this share of it (0: it
       does not wait). A kernel's runs in another process slow those of the processes sharing
       its GPU while they last, and a campaign paces its minimisers on a GPU so. The waits do
       not count against max_total_time_s, but the minimisation ends max_total_time_s / duty
       after it started at the latest. */
    double duty;
    /* (optional, with duty; > 0) A descriptor that becomes readable (a byte, or its other end
       closed) when the waits should end: the minimisation goes on unpaced. */
    int pace_fd;
};

struct gg_min_stats {
    int rounds, attempts, kept, other_faults;
    int cache_hits;                    /* candidates answered from the cache of tested cases */
    int64_t groups_before, groups_after;
    int64_t elems_before, elems_after; /* logical output elements */
    double seconds;
    double runs_s, paced_s;            /* ... of which in runs, and waited for o->duty */
    char signature[GG_SIGNATURE_MAX];  /* the final case's signature (bucket mode: it may differ
                                          from the target's, within its class) */
    char detail[256];                  /* the verdict's detail of a last run of the final case
                                          ("" when that run did not give its failure) */
    int stopped_at;                    /* 1 when stop_at ended the minimisation */
    int fixpoint;                      /* 1 when a whole round kept nothing (not cut short) */
    int unstable;                      /* a stability run gave another verdict */
    unsigned classes_seen;             /* bit per class those runs gave (bit 0: a pass) */
    int restarted_fresh;               /* (proc) the case the worker process ended at failed
                                          otherwise in a fresh process: every run was then
                                          started over in one of its own */
};

/*
 * Shrinks c in place while the verdict keeps signature (every run in its own process, see
 * gg_run_case_isolated, or in o->proc): delete groups (ddmin), unify groups, shrink N and K together, shrink each
 * size in tile coordinates (q·tile + r, q first), canonicalise leading dimensions, strides and
 * offsets, simplify the data towards small integers. Stops at a fixpoint or the time limit.
 * In bucket mode (o->bucket) the verdict need only keep signature's class, and each round starts
 * with every size at its smallest (one row, one granule, one tile) and ends with the grouped op
 * (fwd, dgrad, wgrad), the dtypes and the input placement at their simplest; its normal form is
 * then run o->stability_runs more times (st->unstable: a race).
 */
enum gg_status gg_minimize(struct gg_case *c, const char *signature, const struct gg_min_opts *o,
                           struct gg_min_stats *st, char *err, size_t err_len);

#endif /* GG_MINIMIZE_H */

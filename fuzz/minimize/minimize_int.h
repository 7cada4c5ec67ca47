/*
 * minimize_int.h — internal to fuzz/minimize/: what the minimiser's driver and predicate
 * (gg_minimize.c) and its passes (gg_min_passes.c) share: the state of one minimisation, the
 * test that keeps a candidate, and the passes the driver runs in rounds.
 */
#ifndef GG_MINIMIZE_INT_H
#define GG_MINIMIZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/minimize/gg_minimize.h"

/* Outcomes of tested candidates, by case id: an open-addressing set of 128-bit keys. */
struct cache {
    struct entry {
        uint64_t hi, lo;
        int used, keep;
    } *slots;
    size_t cap, n;
};

struct ctx {
    const char *signature;
    enum gg_class cls;       /* bucket mode: the class whose family to keep */
    char cand_sig[GG_SIGNATURE_MAX]; /* signature of the candidate tested last */
    const struct gg_min_opts *o;
    struct gg_workerproc *proc; /* where candidates run (NULL: a fresh process each) */
    int in_proc;                /* a candidate ran in the worker process */
    int stale;                  /* (proc) a case kept there failed otherwise in a fresh process */
    double saved_at;            /* when the progress file was last written (0: never) */
    struct gg_min_stats *st;
    int repeats;
    int flaky_checks;        /* passes still to be run once more (bucket mode, see reproduces) */
    double timeout_s;       /* each run's limit (0: none) */
    double t0, deadline;    /* deadline INFINITY: none */
    double wall_end;        /* (o->duty) the latest end, waits included */
    int unpaced;            /* (o->duty) o->pace_fd said to stop waiting */
    int64_t tile[3];         /* the kernel's tile cutting rows (M), N and K (0: not tiled) */
    struct cache cache;
    char cur_id[GG_CASE_ID_HEX + 1];
    enum gg_status fatal;    /* a harness failure that ends the minimisation */
    char *err;
    size_t err_len;
};

/* ---- The predicate (gg_minimize.c) ---------------------------------------------------------- */

/* 1 when the minimisation must end: a harness failure, a stop asked for, or the time is up. */
int min_stopped(const struct ctx *x);
/* Starts a candidate: a copy of cur. 0 (and a fatal status) when out of memory. */
int min_clone_case(struct ctx *x, const struct gg_case *cur, struct gg_case *cand);
/* Tests cand: when interesting it replaces cur (returns 1), otherwise it is freed. */
int min_try_keep(struct ctx *x, struct gg_case *cur, struct gg_case *cand);

/* ---- The passes (gg_min_passes.c) ----------------------------------------------------------- */

/* Replaces the group-size spec by one constant item per group (the expanded sizes). */
enum gg_status min_explode_items(struct gg_case *c, char *err, size_t err_len);
/* The kernel's tile that cuts M, N and K, as the signature classes them (gg_verdict.c). */
void min_tiles_of(enum gg_op op, const struct gg_kernel *k, int64_t tile[3]);
/* Each pass tries its candidates on cur and returns how many it kept. */
int min_pass_smallest(struct ctx *x, struct gg_case *cur); /* bucket mode, first */
int min_pass_delete(struct ctx *x, struct gg_case *cur);
int min_pass_unify(struct ctx *x, struct gg_case *cur);
int min_pass_nk(struct ctx *x, struct gg_case *cur);
int min_pass_tiles(struct ctx *x, struct gg_case *cur);
int min_pass_canon(struct ctx *x, struct gg_case *cur);
int min_pass_data(struct ctx *x, struct gg_case *cur);
int min_pass_simplest(struct ctx *x, struct gg_case *cur); /* bucket mode, last */

#endif /* GG_MINIMIZE_INT_H */

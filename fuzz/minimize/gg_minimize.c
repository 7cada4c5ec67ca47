/*
 * gg_minimize.c — the minimiser: shrinks a failing case while its verdict keeps one signature.
 * A candidate counts when `repeats` runs of it out of `repeats` give the target signature, each in
 * a fresh process of its own, or one after another in a worker process (o->proc), whose case the
 * minimisation ends at is then run in a fresh process: one that fails otherwise there starts the
 * minimisation over with fresh processes. Passes run cheapest and highest-yield first, as rounds, until a round keeps
 * nothing or the time is up: delete groups (ddmin), unify group sizes, shrink N and K together,
 * shrink every size in tile coordinates (x = q·tile + r, q first so tail bugs survive), make the
 * layout packed and drop options, and simplify the data towards small integers. Every tested
 * candidate is remembered by case id, so nothing runs twice. Bucket mode keeps the class instead
 * of the signature, and adds a first pass to the smallest sizes and a last one to the simplest
 * op, dtypes and placement: the normal form that triage files buckets by; that form is then run
 * again to tell a race (a verdict that changes from run to run) from a deterministic bug. With
 * o->duty its runs take at most that share of its wall time: it waits after each run. Here
 * are the driver and the test that keeps a candidate; the passes are gg_min_passes.c's.
 */
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/minimize/minimize_int.h"

/* Passes run once more per bucket-mode minimisation of wrong values or workspace dependence, to
   see a race change its verdict. */
#define FLAKY_CHECKS 8
/* With candidates in a worker process, the progress is saved at most this often (seconds): each
   save first runs the case in a fresh process, which on a GPU creates a context. */
#define PROGRESS_EVERY_S 5.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int min_stopped(const struct ctx *x)
{
    return x->fatal != GG_OK || x->st->stopped_at || x->stale || now_s() >= x->deadline;
}

/* After a run that started at t: waits until the runs so far took at most o->duty of the time
   since the minimisation started (not past its deadline). */
static void pace(struct ctx *x, double t)
{
    double now = now_s();
    x->st->runs_s += now - t;
    const struct gg_min_opts *o = x->o;
    if (o->duty <= 0 || o->duty >= 1 || x->unpaced)
        return;
    double until = fmin(x->t0 + x->st->runs_s / o->duty, x->wall_end);
    struct pollfd end = {.fd = o->pace_fd > 0 ? o->pace_fd : -1, .events = POLLIN};
    for (double left = until - now; left > 0 && !x->unpaced; left = until - now_s()) {
        int rc = poll(&end, 1, (int)(1000 * left) + 1);
        x->unpaced = rc > 0;
    }
    double waited = now_s() - now;
    x->st->paced_s += waited;
    x->deadline = fmin(x->deadline + waited, x->wall_end); /* waits are not the budget's */
}

/* One run of c in a fresh process of its own, paced. */
static enum gg_status run_fresh(struct ctx *x, const struct gg_case *c, struct gg_run_result *r,
                                char *msg, size_t msg_len)
{
    double t = now_s();
    enum gg_status st = gg_run_case_isolated(c, &x->o->run, x->timeout_s, r, msg, msg_len);
    pace(x, t);
    return st;
}

/* One run of a candidate: in the worker process when there is one, else in a fresh one (from
   then on when no worker process can be started). */
static enum gg_status run_candidate(struct ctx *x, const struct gg_case *c, struct gg_run_result *r,
                                    char *msg, size_t msg_len)
{
    if (x->proc) {
        double t = now_s();
        enum gg_status st =
            gg_workerproc_run(x->proc, c, &x->o->run, x->timeout_s, r, msg, msg_len);
        pace(x, t);
        if (st != GG_E_IO || !x->proc->start_failed) {
            x->in_proc = 1;
            return st;
        }
        x->proc = NULL;
    }
    return run_fresh(x, c, r, msg, msg_len);
}

/* ---- the cache ----------------------------------------------------------------------------- */

static void id_key(const char id[GG_CASE_ID_HEX + 1], uint64_t *hi, uint64_t *lo)
{
    char half[17];
    memcpy(half, id, 16);
    half[16] = '\0';
    *hi = strtoull(half, NULL, 16);
    *lo = strtoull(id + 16, NULL, 16);
}

/* The slot of key (hi, lo): its own, or the empty one where it would go. */
static struct entry *cache_slot(const struct cache *k, uint64_t hi, uint64_t lo)
{
    size_t i = (size_t)(lo ^ hi) & (k->cap - 1);
    while (k->slots[i].used && (k->slots[i].hi != hi || k->slots[i].lo != lo))
        i = (i + 1) & (k->cap - 1);
    return &k->slots[i];
}

/* 1 and *keep when id was tested, else 0. */
static int cache_find(const struct cache *k, const char *id, int *keep)
{
    uint64_t hi, lo;
    id_key(id, &hi, &lo);
    const struct entry *e = k->cap ? cache_slot(k, hi, lo) : NULL;
    if (e == NULL || !e->used)
        return 0;
    *keep = e->keep;
    return 1;
}

/* Records id; the table doubles at half load. Returns GG_E_NOMEM when it cannot grow. */
static enum gg_status cache_put(struct cache *k, const char *id, int keep)
{
    if (2 * (k->n + 1) > k->cap) {
        struct cache grown = {.cap = k->cap ? 2 * k->cap : 256};
        grown.slots = calloc(grown.cap, sizeof *grown.slots);
        if (grown.slots == NULL)
            return GG_E_NOMEM;
        for (size_t i = 0; i < k->cap; i++)
            if (k->slots[i].used)
                *cache_slot(&grown, k->slots[i].hi, k->slots[i].lo) = k->slots[i];
        grown.n = k->n;
        free(k->slots);
        *k = grown;
    }
    uint64_t hi, lo;
    id_key(id, &hi, &lo);
    struct entry *e = cache_slot(k, hi, lo);
    if (!e->used)
        k->n++;
    *e = (struct entry){.hi = hi, .lo = lo, .used = 1, .keep = keep};
    return GG_OK;
}

/* ---- the predicate ------------------------------------------------------------------------- */

/* Records a different fault met on the way (findings_dir set), as the case that ran: effective
   kernel and mutant, no metadata of the case being minimised. */
static void record_other(struct ctx *x, const struct gg_case *c, const struct gg_run_result *r)
{
    x->st->other_faults++;
    if (x->o->findings_dir == NULL)
        return;
    struct gg_run_result fresh;
    char msg[256];
    if (x->proc) { /* a finding is a case's own: it fails so in a fresh process too */
        x->st->attempts++;
        int same = run_fresh(x, c, &fresh, msg, sizeof msg) == GG_OK &&
                   strcmp(fresh.verdict.signature, r->verdict.signature) == 0;
        gg_run_result_free(&fresh);
        if (!same)
            return;
    }
    struct gg_case f;
    if (gg_case_copy(&f, c) != GG_OK)
        return;
    for (int i = 0; i < f.n_meta; i++) {
        free(f.meta[i].key);
        free(f.meta[i].text);
    }
    free(f.meta);
    f.meta = NULL;
    f.n_meta = 0;
    snprintf(f.kernel, sizeof f.kernel, "%s", r->kernel);
    snprintf(f.mutant, sizeof f.mutant, "%s", r->mutant);
    int is_new;
    /* A store that cannot be written costs the finding, not the minimisation. */
    (void)gg_findings_record(x->o->findings_dir, &f, &r->verdict, 0, &is_new, NULL, 0, msg,
                             sizeof msg);
    gg_case_free(&f);
}

/* 1 when v fails the way the minimisation keeps: the target's class family (bucket mode) or
   signature. */
static int same_failure(const struct ctx *x, const struct gg_verdict *v)
{
    return v->cls != GG_CLASS_PASS &&
           (x->o->bucket ? strcmp(gg_bucket_family(v->cls), gg_bucket_family(x->cls)) == 0
                         : strcmp(v->signature, x->signature) == 0);
}

/* Runs c up to `repeats` times; 1 when every run gives the target signature. */
static int reproduces(struct ctx *x, const struct gg_case *c)
{
    for (int i = 0; i < x->repeats; i++) {
        if (min_stopped(x))
            return 0;
        struct gg_run_result r;
        char msg[1024];
        x->st->attempts++;
        enum gg_status st = run_candidate(x, c, &r, msg, sizeof msg);
        int same = st == GG_OK && same_failure(x, &r.verdict);
        /* While flaky checks last, a pass is run once more: a failure then is a race seen
           changing its verdict (the candidate is kept, and the bug filed as a race). */
        if (st == GG_OK && r.verdict.cls == GG_CLASS_PASS && x->flaky_checks > 0) {
            x->flaky_checks--;
            gg_run_result_free(&r);
            x->st->attempts++;
            st = run_candidate(x, c, &r, msg, sizeof msg);
            same = st == GG_OK && same_failure(x, &r.verdict);
            if (same) {
                x->st->unstable = 1;
                x->st->classes_seen |= 1u | 1u << r.verdict.cls;
            }
        }
        if (same)
            snprintf(x->cand_sig, sizeof x->cand_sig, "%s", r.verdict.signature);
        if (st == GG_OK && !same && r.verdict.cls != GG_CLASS_PASS)
            record_other(x, c, &r);
        gg_run_result_free(&r);
        if (!same)
            return 0;
    }
    return 1;
}

/* 1 when candidate c (edited, not yet checked) is valid, new and keeps the signature. */
static int interesting(struct ctx *x, struct gg_case *c)
{
    char msg[256], id[GG_CASE_ID_HEX + 1];
    if (min_stopped(x) || gg_case_check(c, msg, sizeof msg) != GG_OK ||
        gg_case_expand(c, msg, sizeof msg) != GG_OK)
        return 0;
    gg_case_id(c, id);
    int keep;
    if (strcmp(id, x->cur_id) == 0)
        return 0;
    /* In bucket mode a kept case is run again: its signature is part of the answer. */
    if (cache_find(&x->cache, id, &keep) && !(x->o->bucket && keep)) {
        x->st->cache_hits++;
        return keep;
    }
    keep = reproduces(x, c);
    if (min_stopped(x) && !keep) /* cut short by the clock: unknown, not a rejection */
        return 0;
    if (cache_put(&x->cache, id, keep) != GG_OK) {
        snprintf(x->err, x->err_len, "minimize: out of memory for the candidate cache");
        x->fatal = GG_E_NOMEM;
    }
    return keep;
}

/* One more run of case c in a fresh process: 1 when it fails with the signature the
   minimisation holds (its detail, for the @observed line, is then kept), else 0. A case kept in
   the worker process that fails otherwise here failed there because of the runs before it. */
static int fresh_run(struct ctx *x, const struct gg_case *c)
{
    struct gg_run_result r;
    char msg[512];
    x->st->attempts++;
    if (run_fresh(x, c, &r, msg, sizeof msg) != GG_OK)
        return 0;
    int same = same_failure(x, &r.verdict) && strcmp(r.verdict.signature, x->st->signature) == 0;
    if (same_failure(x, &r.verdict))
        snprintf(x->st->detail, sizeof x->st->detail, "%s", r.verdict.detail);
    gg_run_result_free(&r);
    return same;
}

/* Starts a candidate: a copy of cur. 0 (and a fatal status) when out of memory. */
int min_clone_case(struct ctx *x, const struct gg_case *cur, struct gg_case *cand)
{
    if (x->fatal == GG_OK && gg_case_copy(cand, cur) == GG_OK)
        return 1;
    if (x->fatal == GG_OK) {
        snprintf(x->err, x->err_len, "minimize: out of memory copying a candidate");
        x->fatal = GG_E_NOMEM;
    }
    return 0;
}

/* Tests cand: when interesting it replaces cur (returns 1), otherwise it is freed. */
int min_try_keep(struct ctx *x, struct gg_case *cur, struct gg_case *cand)
{
    if (!interesting(x, cand)) {
        gg_case_free(cand);
        return 0;
    }
    gg_case_free(cur);
    *cur = *cand;
    gg_case_id(cur, x->cur_id);
    x->st->kept++;
    snprintf(x->st->signature, sizeof x->st->signature, "%s", x->cand_sig);
    /* (a race is filed as a race, not at the signature it happened to show as) */
    if (x->o->bucket && x->o->stop_at && !x->st->unstable &&
        x->o->stop_at(x->cand_sig, x->o->stop_arg))
        x->st->stopped_at = 1;
    return 1;
}

/* ---- driver -------------------------------------------------------------------------------- */

/* Every other stability run is pinned to one CPU of the process's set (the run's child inherits
   it): a schedule that a kernel's threads rarely meet on several CPUs, so that a race whose
   outcome the usual schedule fixes still changes the verdict. 1 when pinned. */
static int pin_one_cpu(const cpu_set_t *all)
{
    if (CPU_COUNT(all) < 2)
        return 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, all)) {
            CPU_SET(cpu, &one);
            break;
        }
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

/* Runs c `runs` more times, every other one on one CPU: another verdict than sig (a pass
   included) marks the bug unstable. The classes the runs gave are added to st->classes_seen. */
static void check_stability(struct ctx *x, const struct gg_case *c, const char *sig, int runs)
{
    cpu_set_t all;
    int have_set = sched_getaffinity(0, sizeof all, &all) == 0;
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)strcspn(sig, "/"), sig);
    enum gg_class kept = gg_class_from_name(cls);
    if (kept != GG_CLASS_COUNT)
        x->st->classes_seen |= 1u << kept;
    for (int i = 0; i < runs && x->fatal == GG_OK; i++) {
        struct gg_run_result r;
        char msg[1024];
        x->st->attempts++;
        int pinned = have_set && i % 2 == 0 && pin_one_cpu(&all);
        enum gg_status st = run_fresh(x, c, &r, msg, sizeof msg);
        if (pinned)
            sched_setaffinity(0, sizeof all, &all);
        if (st != GG_OK)
            continue; /* the harness could not run it: no verdict to compare */
        if (r.verdict.cls != GG_CLASS_TIMEOUT) {
            x->st->classes_seen |= 1u << r.verdict.cls;
            x->st->unstable |= strcmp(r.verdict.signature, sig) != 0;
        }
        gg_run_result_free(&r);
    }
}

/* A race can be lost the same way by every run of a small case, so a finding of the families a
   lost race shows as (wrong values, workspace dependence) is checked as found too, before it
   shrinks: half the stability runs. Not one that reaches past 2^31 elements: a wrapped read finds
   whatever lies there, which changes from run to run without any race. */
static int check_found_case(const struct ctx *x, const struct gg_case *c)
{
    const char *family = gg_bucket_family(x->cls);
    char far[4];
    if (!x->o->bucket || x->o->stability_runs < 2 ||
        (strcmp(family, gg_bucket_family(GG_CLASS_SNR)) != 0 &&
         strcmp(family, gg_bucket_family(GG_CLASS_WORKSPACE)) != 0))
        return 0;
    gg_bucket_far_operands(c, far);
    return far[0] == '\0';
}

/* Groups and logical output elements of an expanded case (moe_sorted: m·topk rows of n, which
   needs no routing). */
static void measure(const struct gg_case *c, int64_t *groups, int64_t *elems)
{
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(c, opts, &p);
    *groups = p.groups;
    *elems = p.op == GG_OP_MOE_SORTED ? p.m * p.topk * p.n : gg_problem_out_elems(&p);
}

typedef int (*pass_fn)(struct ctx *x, struct gg_case *cur);
static const pass_fn PASSES[] = {min_pass_delete, min_pass_unify, min_pass_nk,
                                 min_pass_tiles,  min_pass_canon, min_pass_data};
static const pass_fn BUCKET_PASSES[] = {min_pass_smallest, min_pass_delete, min_pass_unify,
                                        min_pass_nk,       min_pass_tiles,  min_pass_canon,
                                        min_pass_data,     min_pass_simplest};

/* The passes in rounds until a round keeps nothing (st->fixpoint) or the minimisation stops.
   The case is saved after every pass that shrank it (a killed minimiser loses one pass); one
   kept in the worker process is saved once it failed so in a fresh process too, and at most
   every PROGRESS_EVERY_S. */
static void run_rounds(struct ctx *x, struct gg_case *c)
{
    const struct gg_min_opts *o = x->o;
    const pass_fn *passes = o->bucket ? BUCKET_PASSES : PASSES;
    size_t n_passes = o->bucket ? sizeof BUCKET_PASSES / sizeof BUCKET_PASSES[0]
                                : sizeof PASSES / sizeof PASSES[0];
    while (!min_stopped(x)) {
        int kept = 0;
        for (size_t i = 0; i < n_passes && !min_stopped(x); i++) {
            int by_pass = passes[i](x, c);
            kept += by_pass;
            if (by_pass == 0 || o->progress_path == NULL || x->fatal != GG_OK ||
                (x->in_proc && now_s() < x->saved_at + PROGRESS_EVERY_S))
                continue;
            if (x->in_proc && !fresh_run(x, c))
                x->stale = 1;
            else if ((x->fatal = gg_case_save(c, o->progress_path, x->err, x->err_len)) != GG_OK)
                return;
            x->saved_at = now_s();
        }
        x->st->rounds++;
        if (kept == 0) {
            x->st->fixpoint = !min_stopped(x);
            return;
        }
    }
}

enum gg_status gg_minimize(struct gg_case *c, const char *signature, const struct gg_min_opts *o,
                           struct gg_min_stats *st, char *err, size_t err_len)
{
    memset(st, 0, sizeof *st);
    struct ctx x = {
        .signature = signature,
        .o = o,
        .st = st,
        .repeats = o->repeats > 0 ? o->repeats : 1,
        /* 0 here: no limit (gg_run_case_isolated) */
        .timeout_s = o->timeout_s > 0   ? o->timeout_s
                     : o->timeout_s < 0 ? 0
                                        : GG_MIN_DEFAULT_TIMEOUT_S,
        .t0 = now_s(),
        .fatal = GG_OK,
        .err = err,
        .err_len = err_len,
    };
    x.deadline = o->max_total_time_s > 0   ? x.t0 + o->max_total_time_s
                 : o->max_total_time_s < 0 ? INFINITY
                                           : x.t0 + GG_MIN_DEFAULT_TIME_S;
    x.wall_end = o->duty > 0 && o->duty < 1 ? x.t0 + (x.deadline - x.t0) / o->duty : x.deadline;
    snprintf(st->signature, sizeof st->signature, "%s", signature);
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)strcspn(signature, "/"), signature);
    x.cls = gg_class_from_name(cls);
    enum gg_status s;
    if (o->bucket && (x.cls == GG_CLASS_COUNT || x.cls == GG_CLASS_PASS)) {
        snprintf(err, err_len, "minimize: signature '%s' names no fault class", signature);
        return GG_E_INVAL;
    }
    if ((s = gg_case_check(c, err, err_len)) != GG_OK ||
        (s = min_explode_items(c, err, err_len)) != GG_OK ||
        (s = gg_case_expand(c, err, err_len)) != GG_OK)
        return s;
    gg_registry_init();
    const struct gg_kernel *k = gg_registry_find(o->run.kernel ? o->run.kernel : c->kernel);
    if (k != NULL)
        min_tiles_of(c->op, k, x.tile);
    measure(c, &st->groups_before, &st->elems_before);
    gg_case_id(c, x.cur_id);
    if ((s = cache_put(&x.cache, x.cur_id, 1)) != GG_OK) {
        snprintf(err, err_len, "minimize: out of memory");
        return s;
    }
    if (check_found_case(&x, c)) {
        check_stability(&x, c, signature, o->stability_runs / 2);
        x.flaky_checks = FLAKY_CHECKS;
    }
    /* What a start over in fresh processes goes back to. */
    struct gg_min_stats first = *st;
    int flaky = x.flaky_checks;
    struct gg_case found;
    int have_found = o->proc && gg_case_copy(&found, c) == GG_OK;
    x.proc = have_found ? o->proc : NULL;
    for (;;) {
        run_rounds(&x, c);
        if (!x.in_proc || x.fatal != GG_OK || (!x.stale && fresh_run(&x, c)))
            break;
        /* A case kept in the worker process fails otherwise alone: each run from here on is a
           fresh process's, from the case as found. */
        gg_case_free(c);
        *c = found;
        have_found = 0;
        x.proc = NULL;
        x.in_proc = x.stale = 0;
        x.flaky_checks = flaky;
        int attempts = st->attempts, kept = st->kept, rounds = st->rounds;
        double runs_s = st->runs_s, paced = st->paced_s;
        *st = first;
        st->attempts = attempts, st->kept = kept, st->rounds = rounds;
        st->runs_s = runs_s, st->paced_s = paced;
        st->restarted_fresh = 1;
        gg_case_id(c, x.cur_id);
        x.cache.n = 0;
        memset(x.cache.slots, 0, x.cache.cap * sizeof *x.cache.slots);
        if ((s = cache_put(&x.cache, x.cur_id, 1)) != GG_OK) {
            x.fatal = s;
            snprintf(err, err_len, "minimize: out of memory");
        }
    }
    if (have_found)
        gg_case_free(&found);
    if (o->bucket && st->fixpoint && !st->stopped_at)
        check_stability(&x, c, st->signature, o->stability_runs);
    if (!x.in_proc) /* the detail of a last run (the worker's case ran in a fresh one already) */
        fresh_run(&x, c);
    measure(c, &st->groups_after, &st->elems_after);
    st->seconds = now_s() - x.t0;
    free(x.cache.slots);
    return x.fatal;
}

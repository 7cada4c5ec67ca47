/*
 * gg_bench.c — times a kernel on one case: the admission and materialisation of a run
 * (gg_run_setup), the kernel's target (host buffers, or a device mirror whose inputs are
 * generated on the device only), then untimed warm-up runs and timed runs, each waited for:
 * a GPU kernel between two events on the harness's stream (what a Python kernel's run() spends
 * before its launch counts: it is the cost of calling the kernel through its bridge), a CPU
 * kernel by the wall clock around run(). The median, the minimum and the maximum are kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/run/gg_target_int.h"
#include "fuzz/run/device/gg_device.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One run of k on the target's operands: *ms its time, or the failure named after k. */
static enum gg_status timed_run(struct gg_target *tg, const struct gg_kernel *k,
                                struct gg_device *dev, double *ms, char *err, size_t err_len)
{
    char kerr[256] = "", what[160];
    enum gg_status st;
    snprintf(what, sizeof what, "kernel %s", k->name);
    if (dev == NULL) {
        double t0 = now_ms();
        st = k->run(&tg->t->p, tg->iface->operands(tg), kerr, sizeof kerr);
        *ms = now_ms() - t0;
    } else {
        if ((st = gg_device_timer_start(dev, err, err_len)) != GG_OK)
            return st;
        st = k->run(&tg->t->p, tg->iface->operands(tg), kerr, sizeof kerr);
        enum gg_status tst = gg_device_timer_stop(dev, ms, err, err_len);
        if (st == GG_OK && tst != GG_OK)
            return tst;
        if (st == GG_OK && (st = gg_device_sync(dev, what, err, err_len)) != GG_OK)
            return st;
    }
    if (st != GG_OK)
        snprintf(err, err_len, "kernel %s failed: %s", k->name, kerr[0] ? kerr : "no message");
    return st;
}

/* The runs on a prepared target. */
static enum gg_status time_runs(struct gg_target *tg, const struct gg_kernel *k, int warmup,
                                int reps, struct gg_bench_result *r, char *err, size_t err_len)
{
    struct gg_device *dev = NULL;
    enum gg_status st;
    if (k->backend != GG_BACKEND_CPU && (st = gg_device_get(&dev, err, err_len)) != GG_OK)
        return st;
    double *ms = calloc((size_t)reps, sizeof *ms);
    if (!ms) {
        snprintf(err, err_len, "out of memory for %d timings", reps);
        return GG_E_NOMEM;
    }
    st = tg->iface->poison(tg, 0, err, err_len);
    for (int i = 0; st == GG_OK && i < warmup + reps; i++) {
        double t = 0.0;
        st = timed_run(tg, k, dev, &t, err, err_len);
        if (i >= warmup)
            ms[i - warmup] = t;
    }
    if (st == GG_OK) {
        qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
        r->median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
        r->min_ms = ms[0];
        r->max_ms = ms[reps - 1];
        r->reps = reps;
        r->device = dev != NULL;
    }
    free(ms);
    return st;
}

enum gg_status gg_bench_case(const struct gg_case *c, const struct gg_run_opts *o, int warmup,
                             int reps, struct gg_bench_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    if (reps < 1 || reps > GG_BENCH_MAX_REPS || warmup < 0) {
        snprintf(err, err_len, "timed runs must be 1..%d and warm-up runs >= 0 (%d, %d)",
                 GG_BENCH_MAX_REPS, reps, warmup);
        return GG_E_INVAL;
    }
    gg_registry_init();
    struct gg_case eff;
    gg_case_init(&eff);
    struct gg_tensors t;
    memset(&t, 0, sizeof t);
    struct gg_run_result rr;
    memset(&rr, 0, sizeof rr);
    const struct gg_kernel *k = NULL;
    enum gg_status st = gg_run_setup(c, o, 1, &k, &eff, &t, &rr, err, err_len);
    snprintf(r->kernel, sizeof r->kernel, "%s", rr.kernel);
    snprintf(r->mutant, sizeof r->mutant, "%s", rr.mutant);
    if (st == GG_OK) {
        r->op = t.p.op;
        r->groups = t.p.groups;
        r->m = t.p.m;
        r->n = t.p.n;
        r->k = t.p.k;
        r->flops = gg_problem_flops(&t.p);
        struct gg_target tg = {.iface = gg_run_target_of(k), .t = &t};
        st = tg.iface->prepare ? tg.iface->prepare(&tg, err, err_len) : GG_OK;
        if (st == GG_OK)
            st = time_runs(&tg, k, warmup, reps, r, err, err_len);
        if (tg.iface->release)
            tg.iface->release(&tg);
    }
    gg_tensors_free(&t);
    gg_case_free(&eff);
    return st;
}

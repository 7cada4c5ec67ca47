/*
 * gg_par.c — the host threads of the reference and of data generation: one count, set with the
 * BLAS's (gg_ref_threads), and a parallel loop over contiguous index ranges. Work is split into
 * ranges fixed by the count alone, and every caller writes disjoint outputs per index, so a
 * result is bit-identical whatever the count.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <cblas.h>

#include "reference/gg_ref.h"

/* 0: not set; the BLAS's own count applies (the online cores, or OPENBLAS_NUM_THREADS). */
static atomic_int thread_count;

void gg_ref_threads(int n)
{
    n = n > 0 ? n : 1;
    atomic_store(&thread_count, n);
    openblas_set_num_threads(n);
}

int gg_ref_thread_count(void)
{
    int n = atomic_load(&thread_count);
    if (n > 0)
        return n;
    int blas = openblas_get_num_threads();
    return blas > 1 ? (blas < GG_PAR_MAX_THREADS ? blas : GG_PAR_MAX_THREADS) : 1;
}

struct par_range {
    gg_par_fn fn;
    void *ctx;
    int64_t lo, hi;
    int tid;
};

static void *par_main(void *arg)
{
    struct par_range *r = arg;
    r->fn(r->ctx, r->lo, r->hi, r->tid);
    return NULL;
}

int gg_par_threads(int64_t n, int64_t min_per_thread)
{
    int64_t t = gg_ref_thread_count();
    if (t > GG_PAR_MAX_THREADS)
        t = GG_PAR_MAX_THREADS;
    if (min_per_thread < 1)
        min_per_thread = 1;
    if (n / min_per_thread < t)
        t = n / min_per_thread;
    return t > 1 ? (int)t : 1;
}

void gg_par_for(int64_t n, int64_t min_per_thread, gg_par_fn fn, void *ctx)
{
    int t = gg_par_threads(n, min_per_thread);
    if (n <= 0)
        return;
    if (t == 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    struct par_range r[GG_PAR_MAX_THREADS];
    pthread_t th[GG_PAR_MAX_THREADS];
    int started[GG_PAR_MAX_THREADS] = {0};
    for (int i = 0; i < t; i++)
        r[i] = (struct par_range){fn, ctx, n * i / t, n * (i + 1) / t, i};
    /* Range 0 runs here; a range whose thread cannot start runs here too. */
    for (int i = 1; i < t; i++)
        started[i] = pthread_create(&th[i], NULL, par_main, &r[i]) == 0;
    par_main(&r[0]);
    for (int i = 1; i < t; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            par_main(&r[i]);
    }
}

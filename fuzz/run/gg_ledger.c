/*
 * gg_ledger.c — the memory ledger of processes that run cases side by side on one node
 * (`suite --workers`): each runner has a slot in a page shared by all of them, and a case holds
 * there the host memory its admission estimated and the device memory its device admission
 * counted. A case is admitted beside the others only when the reservations of the others (of its
 * own device, for device memory) and its own fit in the node's limit; otherwise it waits for
 * them to end. A case that does not fit beside others at all waits until it is alone, then takes
 * its chance as a run of one process would. Waiting cases hold no device memory, so device
 * holders never wait and a wait always ends.
 *
 * The page's mutex is robust: a case killed while it held the lock (a timeout, a crash) leaves it
 * to the next taker. A runner clears its slot after each of its cases ends, however it ended.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fuzz/run/gg_run.h"

struct slot {
    int device;         /* -1: no device */
    int64_t bytes[GG_LEDGER_KINDS];
};

/* The memory of the node (host) or of one device. */
struct pool {
    int device;    /* of a device's pool; -1: unused */
    int64_t limit; /* 0: not measured yet */
    int alone;     /* the slot that runs, or waits to run, alone on it; -1: none */
};

struct ledger {
    pthread_mutex_t lock;
    int n;
    struct pool host, dev[GG_GPUS_MAX];
    struct slot slot[GG_GPUS_MAX];
};

static struct ledger *the_ledger;
static int my_slot = -1;

enum gg_status gg_ledger_open(int slots, int64_t host_limit, char *err, size_t err_len)
{
    if (slots < 1 || slots > GG_GPUS_MAX) {
        snprintf(err, err_len, "the memory ledger takes 1 to %d processes, not %d", GG_GPUS_MAX,
                 slots);
        return GG_E_INVAL;
    }
    struct ledger *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
    if (l == MAP_FAILED) {
        snprintf(err, err_len, "cannot map the memory ledger: %s", strerror(errno));
        return GG_E_NOMEM;
    }
    memset(l, 0, sizeof *l);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(&l->lock, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0) {
        munmap(l, sizeof *l);
        snprintf(err, err_len, "cannot set up the memory ledger's lock: %s", strerror(rc));
        return GG_E_INTERNAL;
    }
    l->n = slots;
    l->host = (struct pool){-1, host_limit, -1};
    for (int i = 0; i < GG_GPUS_MAX; i++) {
        l->slot[i].device = -1;
        l->dev[i] = (struct pool){-1, 0, -1};
    }
    the_ledger = l;
    return GG_OK;
}

void gg_ledger_close(void)
{
    if (!the_ledger)
        return;
    pthread_mutex_destroy(&the_ledger->lock);
    munmap(the_ledger, sizeof *the_ledger);
    the_ledger = NULL;
    my_slot = -1;
}

static void lock(struct ledger *l)
{
    if (pthread_mutex_lock(&l->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&l->lock);
}

void gg_ledger_join(int slot, int device)
{
    if (!the_ledger || slot < 0 || slot >= the_ledger->n)
        return;
    my_slot = slot;
    lock(the_ledger);
    the_ledger->slot[slot].device = device;
    memset(the_ledger->slot[slot].bytes, 0, sizeof the_ledger->slot[slot].bytes);
    pthread_mutex_unlock(&the_ledger->lock);
}

int gg_ledger_active(void)
{
    return the_ledger && my_slot >= 0;
}

/* What the other slots hold of kind (device memory: on this slot's device). Under the lock. */
static int64_t others(const struct ledger *l, enum gg_ledger_kind kind)
{
    int64_t sum = 0;
    for (int i = 0; i < l->n; i++)
        if (i != my_slot && (kind == GG_LEDGER_HOST || l->slot[i].device == l->slot[my_slot].device))
            sum += l->slot[i].bytes[kind];
    return sum;
}

/* The pool of kind for this slot (device: its device's; its limit is measured by the first case
   there that found the device to itself). NULL when every pool is taken. Under the lock. */
static struct pool *pool_of(struct ledger *l, enum gg_ledger_kind kind)
{
    if (kind == GG_LEDGER_HOST)
        return &l->host;
    int d = l->slot[my_slot].device, free_i = -1;
    for (int i = 0; i < GG_GPUS_MAX; i++) {
        if (l->dev[i].device == d)
            return &l->dev[i];
        if (free_i < 0 && l->dev[i].device == -1)
            free_i = i;
    }
    if (free_i < 0)
        return NULL;
    l->dev[free_i].device = d;
    return &l->dev[free_i];
}

static void nap(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

int64_t gg_ledger_take(enum gg_ledger_kind kind, int64_t bytes, int64_t measured)
{
    struct ledger *l = the_ledger;
    if (!gg_ledger_active())
        return 0;
    for (;;) {
        lock(l);
        int64_t held = others(l, kind);
        struct pool *p = pool_of(l, kind);
        if (p && p->limit == 0 && held == 0)
            p->limit = measured;
        int free_to_go = !p || p->alone < 0;
        if (free_to_go && (held == 0 || (p && p->limit > 0 && held <= p->limit - bytes))) {
            l->slot[my_slot].bytes[kind] = bytes;
            pthread_mutex_unlock(&l->lock);
            return held;
        }
        pthread_mutex_unlock(&l->lock);
        nap();
    }
}

void gg_ledger_alone(enum gg_ledger_kind kind)
{
    struct ledger *l = the_ledger;
    if (!gg_ledger_active())
        return;
    lock(l);
    int64_t mine = l->slot[my_slot].bytes[kind];
    pthread_mutex_unlock(&l->lock);
    for (;;) {
        lock(l);
        struct pool *p = pool_of(l, kind);
        if (p && p->alone < 0)
            p->alone = my_slot; /* no case is admitted beside this one from now on */
        if (p && p->alone != my_slot)
            l->slot[my_slot].bytes[kind] = 0; /* another waits to be alone first */
        else
            l->slot[my_slot].bytes[kind] = mine;
        int64_t held = others(l, kind);
        int done = (!p || p->alone == my_slot) && held == 0;
        pthread_mutex_unlock(&l->lock);
        if (done)
            return;
        nap();
    }
}

void gg_ledger_release(void)
{
    struct ledger *l = the_ledger;
    if (!gg_ledger_active())
        return;
    lock(l);
    memset(l->slot[my_slot].bytes, 0, sizeof l->slot[my_slot].bytes);
    for (int k = 0; k < GG_LEDGER_KINDS; k++) {
        struct pool *p = pool_of(l, (enum gg_ledger_kind)k);
        if (p && p->alone == my_slot)
            p->alone = -1;
    }
    pthread_mutex_unlock(&l->lock);
}

int64_t gg_ledger_admit(enum gg_ledger_kind kind, int64_t need, int64_t (*measure)(void *ctx),
                        void *ctx)
{
    int64_t have = measure(ctx);
    if (have < 0 || !gg_ledger_active())
        return have;
    int64_t held = gg_ledger_take(kind, need, have);
    have = measure(ctx); /* the others may have ended or grown while this case waited */
    if (have >= 0 && held > 0 && need > have) {
        gg_ledger_alone(kind);
        have = measure(ctx);
    }
    return have;
}

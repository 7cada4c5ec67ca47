/*
 * gg_suite_devices.c — a suite run spread over runner processes (`suite --gpus`, `--workers`):
 * one per device, or --workers of them dealt to the devices in turn, each forked before anything
 * touches a device and bound to its own one, takes the next case of the plan that no other runner
 * has taken (a counter in shared memory), so a slow case does not hold the others back. The
 * runners share the memory ledger (gg_ledger.c): a case starts when its host and device memory
 * fit beside the running ones. Each runner saves its records, which carry their place in the
 * run, to a file of a private temporary directory; the parent loads them and puts them back in
 * the order of one process. Every case still runs in a process of its own below its runner, so a
 * kernel that faults ends only that process.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/suite/suite_int.h"
#include "fuzz/run/gg_run.h"

struct gg_suite_claim {
    atomic_size_t next;
    atomic_llong last_status_ms; /* CLOCK_MONOTONIC of the last progress line, or the start */
};

static long long monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t gg_suite_claim_next(gg_suite_claim *claim)
{
    return atomic_fetch_add(&claim->next, 1);
}

int gg_suite_claim_status(gg_suite_claim *claim, double interval_s)
{
    long long now = monotonic_ms(), last = atomic_load(&claim->last_status_ms);
    return now - last >= (long long)(1000 * interval_s) &&
           atomic_compare_exchange_strong(&claim->last_status_ms, &last, now);
}

/* Runner k of n: bound to its device (g->id[k % g->n]; none when g names none), holder of
   ledger slot k, with its share of the cores; then run's exit code. */
static void runner(const struct gg_gpus *g, int k, int n,
                   int (*run)(void *, gg_suite_claim *, const char *), void *ctx,
                   gg_suite_claim *claim, const char *path)
{
    int device = g && g->n > 0 ? g->id[k % g->n] : -1;
    if (device >= 0 && gg_gpus_bind(device) != 0)
        _exit(2);
    gg_ledger_join(k, device);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    gg_ref_threads(cpus > n ? (int)(cpus / n) : 1);
    int rc = run(ctx, claim, path);
    fflush(NULL);
    _exit(rc);
}

/* "runner 3 (GPU 1)" */
static void runner_name(const struct gg_gpus *g, int k, char *buf, size_t len)
{
    if (g && g->n > 0)
        snprintf(buf, len, "runner %d (GPU %d)", k, g->id[k % g->n]);
    else
        snprintf(buf, len, "runner %d", k);
}

/* Why runner k ended as wst did, for the message; "" when it saved its result. */
static void runner_end(int wst, char *why, size_t len)
{
    why[0] = '\0';
    if (WIFSIGNALED(wst))
        snprintf(why, len, "died on signal %d (%s)", WTERMSIG(wst), strsignal(WTERMSIG(wst)));
    else if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
        snprintf(why, len, "exited with status %d without saving its result",
                 WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
}

enum gg_status gg_suite_on_runners(const struct gg_gpus *g, int n,
                                   int (*run)(void *ctx, gg_suite_claim *claim, const char *path),
                                   void *ctx, struct gg_rsuite *r, char *err, size_t err_len)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], path[4200], name[64];
    snprintf(dir, sizeof dir, "%s/ggfuzz-suite-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    pid_t pid[GG_GPUS_MAX] = {0};
    gg_suite_claim *claim = mmap(NULL, sizeof *claim, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (claim == MAP_FAILED || mkdtemp(dir) == NULL) {
        snprintf(err, err_len, "cannot set up the suite's runners (%s): %s", dir,
                 strerror(errno));
        if (claim != MAP_FAILED)
            munmap(claim, sizeof *claim);
        return GG_E_IO;
    }
    atomic_init(&claim->next, 0);
    atomic_init(&claim->last_status_ms, monotonic_ms());
    enum gg_status st = GG_OK;
    fflush(NULL);
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/runner%d.json", dir, k);
        pid[k] = fork();
        if (pid[k] == 0)
            runner(g, k, n, run, ctx, claim, path);
        if (pid[k] < 0) {
            runner_name(g, k, name, sizeof name);
            snprintf(err, err_len, "cannot start %s: %s", name, strerror(errno));
            st = GG_E_IO;
            /* the runners started take every case between them; their records are dropped */
            break;
        }
    }
    for (int k = 0; k < n && pid[k] != 0; k++) {
        int wst = 0;
        if (pid[k] < 0)
            break;
        while (waitpid(pid[k], &wst, 0) < 0 && errno == EINTR)
            ;
        char why[128], lerr[1024];
        snprintf(path, sizeof path, "%s/runner%d.json", dir, k);
        runner_name(g, k, name, sizeof name);
        runner_end(wst, why, sizeof why);
        if (why[0] && st == GG_OK) {
            snprintf(err, err_len, "%s %s", name, why);
            st = GG_E_IO;
        }
        if (!why[0] && st == GG_OK &&
            gg_suite_result_load(path, &r[k], lerr, sizeof lerr) != GG_OK) {
            snprintf(err, err_len, "the result of %s: %s", name, lerr);
            st = GG_E_IO;
        }
        unlink(path);
    }
    rmdir(dir);
    munmap(claim, sizeof *claim);
    return st;
}

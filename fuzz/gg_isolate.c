/*
 * gg_isolate.c — runs one case in a child process, so that a kernel that crashes, hangs or
 * scribbles over the harness's memory ends only that child. The parent turns a death by signal
 * into a `crash` verdict and a run past the time limit into a `timeout` verdict, and goes on with
 * the next case. The child sends its result back over a pipe as plain structs.
 *
 * The child is forked without exec, which suits CPU kernels (a plugin loaded before the fork is
 * inherited); kernels on a GPU need workers started with exec, since a CUDA or HIP context does
 * not survive fork.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/fuzz_int.h"

/* What the child writes: this header, then n_groups gg_group_metrics when compared. */
struct wire {
    enum gg_status status;
    char err[1024];
    struct gg_run_result res; /* res.cmp.groups is not meaningful on the wire */
};

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads n bytes unless the deadline passes (returns 1), the pipe closes early (-1) or it works (0). */
static int read_until(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        double left = deadline - now_s();
        if (deadline > 0 && left <= 0)
            return 1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ms = deadline > 0 ? (int)(left * 1000) + 1 : -1;
        int rc = poll(&pfd, 1, ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return 1;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static void child(int fd, const struct gg_case *c, const struct gg_run_opts *o)
{
    static struct wire w; /* large: keep it off the stack */
    memset(&w, 0, sizeof w);
    w.status = gg_run_case(c, o, &w.res, w.err, sizeof w.err);
    int ok = write_all(fd, &w, sizeof w) == 0;
    if (ok && w.status == GG_OK && w.res.compared)
        ok = write_all(fd, w.res.cmp.groups,
                       (size_t)w.res.cmp.n_groups * sizeof *w.res.cmp.groups) == 0;
    _exit(ok ? 0 : 1);
}

/* The verdict of a run that ended without a result: crash (signal, or -1 for an exit without
   a report) or timeout. */
static enum gg_status ended_early(const struct gg_case *c, const struct gg_run_opts *o, int signo,
                                  double timeout_s, struct gg_run_result *r, char *err,
                                  size_t err_len)
{
    struct gg_case eff;
    enum gg_status st = gg_case_copy(&eff, c);
    if (st != GG_OK) {
        snprintf(err, err_len, "out of memory copying the case");
        return st;
    }
    if (o && o->kernel)
        snprintf(eff.kernel, sizeof eff.kernel, "%s", o->kernel);
    if (o && o->mutant)
        snprintf(eff.mutant, sizeof eff.mutant, "%s", strcmp(o->mutant, "none") ? o->mutant : "");
    struct gg_tensors t;
    st = gg_tensors_plan(&eff, &t, err, err_len);
    if (st == GG_OK) {
        const struct gg_kernel *k = gg_registry_find(eff.kernel);
        struct gg_observations obs = {.crash_signal = signo, .timeout_s = timeout_s};
        snprintf(r->kernel, sizeof r->kernel, "%s", eff.kernel);
        snprintf(r->mutant, sizeof r->mutant, "%s", eff.mutant);
        gg_verdict_make(&t.p, eff.kernel, k ? k->tile_m : 0, k ? k->tile_n : 0,
                        k ? k->tile_k : 0, NULL, &obs, &r->verdict);
    }
    gg_tensors_free(&t);
    gg_case_free(&eff);
    return st;
}

enum gg_status gg_run_case_isolated(const struct gg_case *c, const struct gg_run_opts *o,
                                    double timeout_s, struct gg_run_result *r, char *err,
                                    size_t err_len)
{
    memset(r, 0, sizeof *r);
    gg_registry_init();
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, err_len, "cannot create a pipe: %s", strerror(errno));
        return GG_E_IO;
    }
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, err_len, "cannot fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return GG_E_NOMEM;
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], c, o);
    }
    close(fds[1]);
    static struct wire w;
    memset(&w, 0, sizeof w);
    double deadline = timeout_s > 0 ? t0 + timeout_s : 0;
    int got = read_until(fds[0], &w, sizeof w, deadline);
    struct gg_group_metrics *groups = NULL;
    if (got == 0 && w.status == GG_OK && w.res.compared) {
        size_t n = (size_t)w.res.cmp.n_groups;
        groups = calloc(n ? n : 1, sizeof *groups);
        got = groups ? read_until(fds[0], groups, n * sizeof *groups, deadline) : -1;
    }
    if (got == 1)
        kill(pid, SIGKILL);
    close(fds[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (got != 0) {
        free(groups);
        int signo = got == 1 ? 0 : WIFSIGNALED(wst) ? WTERMSIG(wst) : -1;
        enum gg_status st = ended_early(c, o, signo, got == 1 ? timeout_s : 0, r, err, err_len);
        r->total_seconds = now_s() - t0;
        return st;
    }
    *r = w.res;
    r->cmp.groups = groups;
    snprintf(err, err_len, "%s", w.err);
    return w.status;
}

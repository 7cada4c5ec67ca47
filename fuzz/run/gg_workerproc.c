/*
 * gg_workerproc.c — starting a `ggfuzz worker` process (its command line, its environment, the
 * device it is bound to), for the campaign's workers and for anything else that runs many cases
 * one after another: a worker process that lives from case to case keeps what a forked child
 * pays for on every case (a GPU context and its modules, device memory kept across cases, host
 * buffers), and is started with exec, so a GPU kernel can run in it.
 *
 * Also here, a synchronous client of one such process (gg_workerproc_run): the case goes out, the
 * result comes back, and a run that ends the process early (a crash, an exit, a time limit) gets
 * the verdict gg_run_case_isolated() would give it; the next run starts a fresh process.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

extern char **environ;

/* Whether environment entry e sets variable var (given as "NAME="). */
static int sets(const char *e, const char *var)
{
    return strncmp(e, var, strcspn(var, "=") + 1) == 0;
}

/* environ plus OPENBLAS_NUM_THREADS=1 unless set (workers share the cores already), and for a
   worker bound to a device the two entries that bind it (visible and device, which replace any
   of the same names). */
static char **worker_env(const char *visible, const char *device)
{
    size_t n = 0;
    int has = 0;
    for (char **e = environ; e && *e; e++, n++)
        has |= strncmp(*e, "OPENBLAS_NUM_THREADS=", 21) == 0;
    char **env = calloc(n + 4, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!visible || (!sets(environ[i], visible) && !sets(environ[i], device)))
            env[k++] = environ[i];
    if (!has)
        env[k++] = "OPENBLAS_NUM_THREADS=1";
    if (visible) {
        env[k++] = (char *)visible;
        env[k++] = (char *)device;
    }
    return env;
}

int gg_worker_launch(const struct gg_worker_launch *l, int *pid_out, int *fd_out, char *err,
                     size_t err_len)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, err_len, "cannot create a socket pair: %s", strerror(errno));
        return -1;
    }
    int argc = 0, n_cmd = l->cmd != NULL ? l->n_cmd : 0;
    char **argv = calloc((size_t)(2 * l->n_plugins + n_cmd + 3), sizeof *argv);
    char visible[320], device[64];
    if (l->gpu >= 0)
        gg_gpus_env(l->gpu, visible, sizeof visible, device, sizeof device);
    char **env = l->gpu >= 0 ? worker_env(visible, device) : worker_env(NULL, NULL);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    int rc = ENOMEM;
    pid_t pid = 0;
    if (argv && env) {
        argv[argc++] = (char *)l->exe;
        for (int i = 1; i < n_cmd; i++)
            argv[argc++] = (char *)l->cmd[i];
        for (int i = 0; i < l->n_plugins; i++) {
            argv[argc++] = "--plugin";
            argv[argc++] = (char *)l->plugins[i];
        }
        argv[argc++] = "worker";
        /* Its own process group, so a terminal's ^C reaches only the process that drives it. */
        sigset_t none, dflt;
        sigemptyset(&none);
        sigemptyset(&dflt);
        sigaddset(&dflt, SIGINT);
        sigaddset(&dflt, SIGTERM);
        sigaddset(&dflt, SIGPIPE);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &dflt);
        posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
        posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
        rc = posix_spawnp(&pid, l->exe, &fa, &attr, argv, env);
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(argv);
    free(env);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        snprintf(err, err_len, "cannot start worker %s: %s", l->exe, strerror(rc));
        return -1;
    }
    *pid_out = (int)pid;
    *fd_out = sv[0];
    return 0;
}

/* ---- the synchronous client ---------------------------------------------------------------- */

void gg_workerproc_init(struct gg_workerproc *p, const struct gg_worker_launch *how)
{
    memset(p, 0, sizeof *p);
    p->how = *how;
    p->fd = -1;
}

int gg_worker_reap(int pid, int kill_first)
{
    int wst = 0, signo = kill_first ? 0 : -1;
    if (pid <= 0)
        return signo;
    if (kill_first)
        kill(pid, SIGKILL);
    /* One whose end closed is exiting: a moment before it is forced. */
    for (int tries = 0; !kill_first && tries < 2000; tries++) {
        pid_t got = waitpid(pid, &wst, WNOHANG);
        if (got == pid && WIFSIGNALED(wst))
            signo = WTERMSIG(wst);
        if (got == pid || (got < 0 && errno != EINTR))
            return signo;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    return signo;
}

/* Ends the process (killing it first when kill_it): gg_worker_reap's answer. */
static int reap(struct gg_workerproc *p, int kill_it)
{
    if (p->pid <= 0)
        return kill_it ? 0 : -1;
    close(p->fd);
    int signo = gg_worker_reap(p->pid, kill_it);
    p->pid = 0;
    p->fd = -1;
    return signo;
}

void gg_workerproc_close(struct gg_workerproc *p)
{
    reap(p, 1);
}

/* Starts the process when none runs, and waits for its hello. GG_OK or GG_E_IO. */
static enum gg_status start(struct gg_workerproc *p, char *err, size_t err_len)
{
    if (p->pid > 0)
        return GG_OK;
    p->start_failed = 1;
    if (gg_worker_launch(&p->how, &p->pid, &p->fd, err, err_len) != 0)
        return GG_E_IO;
    p->starts++;
    struct gg_wire_hello h = {0};
    int got = gg_wire_read(p->fd, &h, sizeof h, gg_wire_now() + GG_WORKER_START_LIMIT_S);
    p->start_failed = !(got == 0 && h.magic == GG_WIRE_MAGIC);
    if (!p->start_failed)
        return GG_OK;
    int signo = reap(p, got >= 0); /* one that timed out or said something else is killed */
    if (got == 1)
        snprintf(err, err_len, "worker %s did not start within %.0f s", p->how.exe,
                 GG_WORKER_START_LIMIT_S);
    else if (got == 0)
        snprintf(err, err_len, "%s did not announce itself as a ggfuzz worker", p->how.exe);
    else
        snprintf(err, err_len, "worker %s %s before it started", p->how.exe,
                 signo > 0 ? "died" : "exited");
    return GG_E_IO;
}

enum gg_status gg_workerproc_run(struct gg_workerproc *p, const struct gg_case *c,
                                 const struct gg_run_opts *o, double timeout_s,
                                 struct gg_run_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    /* The overrides travel in the case's text: the wire carries no kernel or mutant. */
    struct gg_case eff;
    enum gg_status st = gg_case_overridden(c, o, &eff, err, err_len);
    char *text = NULL;
    if (st == GG_OK && (st = gg_case_format(&eff, 0, &text)) != GG_OK)
        snprintf(err, err_len, "cannot format the case");
    gg_case_free(&eff);
    if (st != GG_OK)
        return st;
    size_t len = strlen(text);
    /* A process that ended after its last reply (a device lost) is found when the case cannot
       be sent: a fresh one takes it. */
    int sent = -1;
    for (int attempt = 0; attempt < 2 && sent != 0; attempt++) {
        if ((st = start(p, err, err_len)) != GG_OK) {
            free(text);
            return st;
        }
        sent = gg_wire_send_case(p->fd, text, len, o);
        if (sent != 0)
            reap(p, 0);
    }
    free(text);
    if (sent != 0) {
        snprintf(err, err_len, "worker %s ended before it took the case", p->how.exe);
        return GG_E_IO;
    }
    double t0 = gg_wire_now();
    struct gg_wire_fault fault = {0};
    int got = gg_wire_recv_result(p->fd, timeout_s > 0 ? t0 + timeout_s : 0, &st, err, err_len, r,
                                  &fault);
    if (got == 0) {
        /* A sticky GPU error ends the process after this reply: the next run starts a fresh one
           rather than send it a case it would not run. */
        if (st == GG_OK && r->verdict.cls == GG_CLASS_DEVICE)
            reap(p, 0);
        return st;
    }
    int pid = p->pid, signo = reap(p, got == 1);
    char killed[256];
    if (gg_killed_from_outside(signo, killed, sizeof killed)) {
        snprintf(err, err_len, "the worker running the case (pid %d) was %s", pid, killed);
        return GG_E_IO;
    }
    st = gg_run_ended_early(c, o, signo, got == 1 ? timeout_s : 0, got == 2 ? &fault : NULL, r, err,
                            err_len);
    r->total_seconds = gg_wire_now() - t0;
    return st;
}

/*
 * gg_isolate.c — runs one case in a child process, so that a kernel that crashes, hangs or
 * scribbles over the harness's memory ends only that child. The parent turns a death by signal
 * into a `crash` verdict and a run past the time limit into a `timeout` verdict, and goes on with
 * the next case. The child replies over a pipe in the wire format of the campaign workers
 * (gg_worker.c). A child killed by SIGKILL that the parent did not send (kill -9, the OOM killer)
 * is no verdict but a harness failure (GG_E_IO): a kernel does not raise SIGKILL.
 *
 * The child may first run the cases the case must follow (a history-dependent finding's @after
 * cases), in order and in the same process, their verdicts discarded: it writes one marker byte
 * once they are done, so that a death or hang among them is told from one of the case itself
 * (which alone gives a verdict).
 *
 * The child is forked without exec, which suits CPU kernels (a plugin loaded before the fork is
 * inherited); kernels on a GPU need workers started with exec, since a CUDA or HIP context does
 * not survive fork.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

#define PRIOR_DONE 'P' /* the marker: the cases before the last one have run */

static void child(int fd, const struct gg_case *prior, int n_prior, const struct gg_case *c,
                  const struct gg_run_opts *o)
{
    struct gg_run_result r;
    char err[1024] = "";
    if (n_prior > 0) {
        gg_run_prior(prior, n_prior, o);
        if (gg_wire_write(fd, (char[]){PRIOR_DONE}, 1) != 0)
            _exit(1);
    }
    memset(&r, 0, sizeof r);
    gg_faultnote_install(fd);
    enum gg_status st = gg_run_case(c, o, &r, err, sizeof err);
    _exit(gg_wire_send_result(fd, st, err, st == GG_OK ? &r : NULL) == 0 ? 0 : 1);
}

void gg_run_prior(const struct gg_case *prior, int n_prior, const struct gg_run_opts *o)
{
    struct gg_run_opts quiet = *o; /* an observer (--dump) sees the last case only */
    quiet.observe = NULL;
    quiet.observe_ctx = NULL;
    for (int i = 0; i < n_prior; i++) {
        struct gg_run_result r;
        char err[256];
        memset(&r, 0, sizeof r);
        if (gg_run_case(&prior[i], &quiet, &r, err, sizeof err) == GG_OK)
            gg_run_result_free(&r);
    }
}

/* How the cases before the last one ended their process (got: 1 past the deadline, else the
   wait status wst), as a harness failure: the case itself did not run. */
static enum gg_status prior_failed(int n_prior, int got, int wst, double limit, char *err,
                                   size_t err_len)
{
    char how[160];
    if (got == 1)
        snprintf(how, sizeof how, "ran past %g s", limit);
    else if (WIFSIGNALED(wst))
        snprintf(how, sizeof how, "died on signal %d (%s)", WTERMSIG(wst),
                 strsignal(WTERMSIG(wst)));
    else
        snprintf(how, sizeof how, "exited (status %d)", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    snprintf(err, err_len, "the process %s while running the %d case%s this case must follow "
             "(@after); the case itself did not run", how, n_prior, n_prior == 1 ? "" : "s");
    return GG_E_IO;
}

enum gg_status gg_run_case_isolated(const struct gg_case *c, const struct gg_run_opts *o,
                                    double timeout_s, struct gg_run_result *r, char *err,
                                    size_t err_len)
{
    return gg_run_sequence_isolated(NULL, 0, c, o, timeout_s, r, err, err_len);
}

enum gg_status gg_run_sequence_isolated(const struct gg_case *prior, int n_prior,
                                        const struct gg_case *c, const struct gg_run_opts *o,
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
    double t0 = gg_wire_now();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, err_len, "cannot fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return GG_E_NOMEM;
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], prior, n_prior, c, o);
    }
    close(fds[1]);
    enum gg_status st = GG_OK;
    struct gg_wire_fault fault = {0};
    int got = 0;
    if (n_prior > 0) { /* each case before the last one has the same limit */
        double limit = timeout_s * n_prior;
        char mark = 0;
        got = gg_wire_read(fds[0], &mark, 1, timeout_s > 0 ? t0 + limit : 0);
        if (got == 0 && mark != PRIOR_DONE)
            got = -1;
        if (got != 0) {
            if (got == 1)
                kill(pid, SIGKILL);
            close(fds[0]);
            int wst = 0;
            while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
                ;
            gg_ledger_release();
            return prior_failed(n_prior, got, wst, limit, err, err_len);
        }
        t0 = gg_wire_now();
    }
    got = gg_wire_recv_result(fds[0], timeout_s > 0 ? t0 + timeout_s : 0, &st, err, err_len, r,
                              &fault);
    if (got == 1)
        kill(pid, SIGKILL);
    close(fds[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    gg_ledger_release(); /* what the case held, however it ended */
    if (got == 0)
        return st;
    int signo = got == 1 ? 0 : WIFSIGNALED(wst) ? WTERMSIG(wst) : -1;
    char killed[256];
    if (gg_killed_from_outside(signo, killed, sizeof killed)) {
        snprintf(err, err_len, "the process running the case (pid %d) was %s", (int)pid, killed);
        return GG_E_IO;
    }
    st = gg_run_ended_early(c, o, signo, got == 1 ? timeout_s : 0, got == 2 ? &fault : NULL, r,
                            err, err_len);
    r->total_seconds = gg_wire_now() - t0;
    return st;
}

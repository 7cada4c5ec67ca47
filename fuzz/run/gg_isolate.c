/*
 * gg_isolate.c — runs one case in a child process, so that a kernel that crashes, hangs or
 * scribbles over the harness's memory ends only that child. The parent turns a death by signal
 * into a `crash` verdict and a run past the time limit into a `timeout` verdict, and goes on with
 * the next case. The child replies over a pipe in the wire format of the campaign workers
 * (gg_worker.c). A child killed by SIGKILL that the parent did not send (kill -9, the OOM killer)
 * is no verdict but a harness failure (GG_E_IO): a kernel does not raise SIGKILL.
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
#include "fuzz/run/run_int.h"

static void child(int fd, const struct gg_case *c, const struct gg_run_opts *o)
{
    struct gg_run_result r;
    char err[1024] = "";
    memset(&r, 0, sizeof r);
    gg_faultnote_install(fd);
    enum gg_status st = gg_run_case(c, o, &r, err, sizeof err);
    _exit(gg_wire_send_result(fd, st, err, st == GG_OK ? &r : NULL) == 0 ? 0 : 1);
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
        child(fds[1], c, o);
    }
    close(fds[1]);
    enum gg_status st = GG_OK;
    struct gg_wire_fault fault = {0};
    int got = gg_wire_recv_result(fds[0], timeout_s > 0 ? t0 + timeout_s : 0, &st, err, err_len, r,
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

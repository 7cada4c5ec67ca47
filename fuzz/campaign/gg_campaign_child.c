/*
 * gg_campaign_child.c — the processes the supervisor forks beside its workers, minimisers and
 * confirmations: forking one with a pipe to report on, in a process group of its own so that
 * ending it ends every run it started; telling when one has ended; and the time one may take.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

/*
 * Forks a child of the supervisor (a minimiser or a confirmation) that reports over a pipe:
 * returns its pid with the read end in *fd, 0 in the child with the write end in *fd (the
 * child holds none of the workers' or other children's descriptors), or -1. The child has its
 * own process group, so that the supervisor ends it and every run it forked at once.
 */
pid_t camp_fork_child(struct campaign *c, int *fd)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(fds[0]);
        for (int i = 0; i < c->n_workers; i++)
            if (c->w[i].fd >= 0)
                close(c->w[i].fd);
        for (int i = 0; i < c->n_ms; i++)
            if (c->ms[i].pid) {
                close(c->ms[i].fd);
                if (c->ms[i].pace_fd > 0)
                    close(c->ms[i].pace_fd);
            }
        for (int i = 0; i < c->n_cs; i++)
            if (c->cs[i].pid)
                close(c->cs[i].fd);
        *fd = fds[1];
        return 0;
    }
    setpgid(pid, pid);
    close(fds[1]);
    *fd = fds[0];
    return pid;
}

/* Whether child pid (a minimiser or a confirmation, the leader of its process group) has
   ended: 1 with its wait status in *wst, after ending its group first when kill_it; else 0. */
int camp_child_ended(int pid, int kill_it, int *wst)
{
    if (!kill_it)
        return waitpid(pid, wst, WNOHANG) == pid;
    kill(-pid, SIGKILL);
    while (waitpid(pid, wst, 0) < 0 && errno == EINTR)
        ;
    return 1;
}

/* The budget of a child (minimiser or confirmation): --minimize-time, within the time left. */
double camp_child_budget(const struct campaign *c)
{
    double budget = c->cfg->minimize_s > 0 ? c->cfg->minimize_s : GG_CAMPAIGN_DEFAULT_MINIMIZE_S;
    return c->budget > 0 ? fmax(MIN_MINIMIZE_S, fmin(budget, c->budget - camp_elapsed(c))) : budget;
}

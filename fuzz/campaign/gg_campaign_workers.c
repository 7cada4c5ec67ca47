/*
 * gg_campaign_workers.c — the worker processes and the cases they run: starting a worker (its
 * environment, its device), reaping and restarting it, drawing the next case and sending it, and
 * what comes back: a result, which goes to the corpus or to the faults, or an early end (a crash,
 * an exit, a timeout), whose case runs again in a fresh worker before it is a finding. A worker
 * killed from outside is a harness event; a device whose workers keep exiting before they start
 * is given up.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

#define RETRY_FACTOR 4.0        /* a timeout is re-run once with this many times the limit */
#define MAX_RERUNS 2            /* re-runs of one case after early ends; then it is dropped */
#define MAX_START_FAILURES 3    /* consecutive failed starts end the campaign */
#define MAX_GEN_FAILURES 1000   /* consecutive cases that could not be drawn end it */
#define MAX_LOGGED_ERRORS 8     /* cases that could not run, logged with their message */
#define MUTATE_PERMILLE 300     /* share of cases mutated from the corpus */

const char *const camp_origin_names[] = {"generate", "mutate", "seed", "replay"};

void camp_job_free(struct job *j)
{
    gg_case_free(&j->c);
    free(j->path);
    memset(j, 0, sizeof *j);
}

/* ---- workers ------------------------------------------------------------------------------- */

struct gg_worker_launch camp_worker_launch(const struct campaign *c, int gpu)
{
    return (struct gg_worker_launch){.exe = c->exe,
                                     .cmd = c->cfg->worker_cmd,
                                     .n_cmd = c->cfg->n_worker_cmd,
                                     .plugins = c->cfg->plugins,
                                     .n_plugins = c->cfg->n_plugins,
                                     .gpu = gpu};
}

int camp_spawn_worker(struct campaign *c, struct worker *w)
{
    gg_history_clear(&w->hist); /* a new process: nothing ran in it yet */
    struct gg_worker_launch how = camp_worker_launch(c, w->gpu >= 0 ? c->gpus->id[w->gpu] : -1);
    if (gg_worker_launch(&how, &w->pid, &w->fd, c->err, c->err_len) != 0)
        return -1;
    w->state = W_STARTING;
    w->since = gg_wire_now();
    return 0;
}

/* Waits for a worker that has closed its end, or kills it first (kill_first). Returns how it
   ended: the signal it died on; -1 when it exited, or when it had to be killed because it did
   not exit after closing its end; 0 when kill_first. */
int camp_reap(struct worker *w, int kill_first)
{
    int signo = gg_worker_reap(w->pid, kill_first);
    close(w->fd);
    w->fd = -1;
    w->pid = 0;
    w->state = W_NONE;
    return signo;
}

/* The case a job runs, for log lines: its file, or its number and origin. */
void camp_job_name(const struct job *j, char *out, size_t len)
{
    if (j->path)
        snprintf(out, len, "%s", j->path);
    else
        snprintf(out, len, "case %llu (%s)", (unsigned long long)j->index,
                 camp_origin_names[j->origin]);
}

/* A worker (slot i, process pid) that ended on signo: when that was an outside kill, logs it as
   the harness event it is, counts it and returns 1. during: what it was doing ("starting",
   "idle", or the case it ran). */
static int outside_kill(struct campaign *c, const struct worker *w, int pid, int signo,
                        const char *during)
{
    char killed[256];
    if (!gg_killed_from_outside(signo, killed, sizeof killed))
        return 0;
    c->st->worker_kills++;
    camp_log(c, "WARNING: worker %d (pid %d) was %s while %s: a harness event, not a finding\n",
             (int)(w - c->w), pid, killed, during);
    return 1;
}

/* Replaces a worker that is gone, on its device; the job it holds (if any) stays to run next. */
static int restart(struct campaign *c, struct worker *w)
{
    c->st->worker_restarts++;
    if (w->gpu >= 0)
        c->st->gpu[w->gpu].restarts++;
    return camp_spawn_worker(c, w);
}

/* ---- drawing and dispatching --------------------------------------------------------------- */

/* The next case: queued seeds and replays first, then mutated or generated cases. 0 when j is
   filled, -1 when nothing can be drawn (c->fatal set when it never will). */
static int next_job(struct campaign *c, struct job *j)
{
    memset(j, 0, sizeof *j);
    if (c->next_queue < c->n_queue) {
        *j = c->queue[c->next_queue];
        memset(&c->queue[c->next_queue++], 0, sizeof *j);
        return 0;
    }
    char err[1024];
    uint64_t i = c->next_index++;
    while (c->shards && gg_shard_done_has(&c->done, i))
        i = c->next_index++; /* ran before this shard was requeued */
    uint64_t r = camp_mix64(c->st->seed ^ camp_mix64(i));
    enum gg_status st = GG_E_INVAL;
    if (c->n_corpus > 0 && c->gen.strategy == GG_STRATEGY_TARGETED &&
        r % 1000 < MUTATE_PERMILLE) {
        const struct gg_case *parent = &c->corpus[(r >> 10) % c->n_corpus];
        st = gg_mutate(&c->gen, parent, c->st->seed, i, &j->c, err, sizeof err);
        if (st == GG_OK)
            j->origin = ORIGIN_MUTATE;
        else
            gg_case_free(&j->c);
    }
    if (st != GG_OK) {
        st = gg_generate(&c->gen, c->st->seed, i, &j->c, err, sizeof err);
        j->origin = ORIGIN_GENERATE;
    }
    char what[96];
    snprintf(what, sizeof what, "case %llu goes to a worker as it is", (unsigned long long)i);
    camp_log_probe_deaths(c, what);
    if (st != GG_OK) {
        gg_case_free(&j->c);
        if (st == GG_E_UNSUPPORTED || ++c->gen_failures >= MAX_GEN_FAILURES) {
            snprintf(c->err, c->err_len, "cannot draw cases for %s: %s", c->k->name, err);
            c->fatal = st == GG_E_UNSUPPORTED ? st : GG_E_INTERNAL;
        } else {
            c->st->errors++;
        }
        return -1;
    }
    c->gen_failures = 0;
    if (j->origin == ORIGIN_MUTATE)
        c->st->mutated++;
    j->index = i;
    snprintf(j->c.kernel, sizeof j->c.kernel, "%s", c->k->name);
    snprintf(j->c.mutant, sizeof j->c.mutant, "%s", c->mutant);
    return 0;
}

/* cur_input.<w>: the case in flight, for when the supervisor itself goes down. Not synced:
   the workers' deaths are handled here. */
static void write_cur_input(const struct worker *w, const char *text, size_t len)
{
    int fd = open(w->cur_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t n = write(fd, text, len);
    (void)n;
    close(fd);
}

/* Sends the worker's job. On failure the worker is gone: the job stays with it for its
   replacement. */
void camp_dispatch(struct campaign *c, struct worker *w)
{
    if (!w->has_job) {
        if (c->cfg->max_runs > 0 && c->dispatched >= c->cfg->max_runs)
            return;
        int tries = 0;
        while (next_job(c, &w->job) != 0)
            if (c->fatal != GG_OK || ++tries >= 16)
                return;
        w->has_job = 1;
        if (w->job.origin == ORIGIN_REPLAY)
            c->st->replayed++;
        c->dispatched++;
    }
    char *text = NULL;
    if (gg_case_format(&w->job.c, 0, &text) != GG_OK) {
        c->st->errors++;
        camp_job_free(&w->job);
        w->has_job = 0;
        return;
    }
    size_t len = strlen(text);
    write_cur_input(w, text, len);
    double sent_at = gg_wire_now(); /* the worker may start on it before the send returns */
    int sent = gg_wire_send_case(w->fd, text, len, &c->cfg->run);
    free(text);
    if (sent != 0) {
        int pid = w->pid;
        outside_kill(c, w, pid, camp_reap(w, 0), "idle");
        if (restart(c, w) != 0)
            c->fatal = GG_E_IO;
        return;
    }
    w->state = W_BUSY;
    w->since = sent_at;
    w->limit = w->job.ended_early && w->job.end_signo == 0 ? RETRY_FACTOR * c->timeout
                                                           : c->timeout;
}

/* The job of w has ended, whatever its outcome; a shard records the case's number. */
static void done_job(struct campaign *c, struct worker *w)
{
    if (c->shards && (w->job.origin == ORIGIN_GENERATE || w->job.origin == ORIGIN_MUTATE))
        gg_shard_done_add(&c->done, w->job.index);
    camp_job_free(&w->job);
    w->has_job = 0;
    if (w->state == W_BUSY)
        w->state = W_IDLE;
}

/* A generated case that could not run for a reason other than a refusal: the first
   MAX_LOGGED_ERRORS are logged with their message, later ones only counted (stats' errors). */
static void log_error(struct campaign *c, enum gg_status status, const char *msg)
{
    long long n = c->st->errors;
    if (n <= MAX_LOGGED_ERRORS)
        camp_log(c, "WARNING: #%lld could not run (status %d): %s\n", (long long)c->st->execs,
                 (int)status, msg);
    if (n == MAX_LOGGED_ERRORS)
        camp_log(c, "WARNING: %d cases could not run; further ones are only counted\n",
                 MAX_LOGGED_ERRORS);
}

/* A crash of j's previous run that its re-run did not repeat: a harness event, not a finding. */
static void unconfirmed(struct campaign *c, const struct job *j, const char *how)
{
    char name[PATH_MAX_LEN];
    camp_job_name(j, name, sizeof name);
    c->st->crashes_unconfirmed++;
    if (j->end_signo > 0)
        camp_log(c, "WARNING: %s died on signal %d (%s), which did not reproduce on re-run (%s): "
                 "not a finding\n", name, j->end_signo, strsignal(j->end_signo), how);
    else
        camp_log(c, "WARNING: %s ended its worker without a result, which did not reproduce on "
                 "re-run (%s): not a finding\n", name, how);
}

static void handle_result(struct campaign *c, struct worker *w, enum gg_status status,
                          const char *msg, struct gg_run_result *r)
{
    struct gg_campaign_stats *st = c->st;
    struct job *j = &w->job;
    st->execs++;
    if (w->gpu >= 0)
        st->gpu[w->gpu].execs++;
    double secs = gg_wire_now() - w->since;
    if (secs > st->slowest_s)
        st->slowest_s = secs;
    if (j->ended_early && j->end_signo != 0)
        unconfirmed(c, j, "its re-run gave a result");
    if (status == GG_OK) {
        gg_freedom_tally_add(&st->freedoms, &j->c);
        camp_phases_add(&st->phases, r, secs);
    }
    if (status != GG_OK) {
        if (status == GG_E_UNSUPPORTED || status == GG_E_NOMEM)
            st->refused++;
        else
            st->errors++;
        if (j->origin == ORIGIN_REPLAY || j->origin == ORIGIN_SEED)
            camp_log(c, "INFO: could not run %s: %s\n", j->path, msg);
        else if (status != GG_E_UNSUPPORTED && status != GG_E_NOMEM)
            log_error(c, status, msg);
    } else if (r->verdict.cls == GG_CLASS_PASS) {
        if (j->origin == ORIGIN_REPLAY) {
            st->possibly_fixed++;
            camp_log(c, "INFO: possibly fixed (now passes): %s (expected %s)\n", j->path,
                     gg_case_meta(&j->c, "expect"));
        } else {
            camp_observe_pass(c, j, r);
        }
    } else {
        camp_handle_fault(c, w, j, r);
    }
    gg_run_result_free(r);
    char *text = NULL;
    if (gg_case_format(&j->c, 0, &text) == GG_OK)
        gg_history_push(&w->hist, text);
    done_job(c, w);
}

/*
 * The case of worker w (process pid) ended without a result: signo > 0 the worker died on that
 * signal (fault, may be NULL: where it hit), -1 it exited, 0 it ran past its limit and was
 * killed. An outside kill is logged and the
 * case re-run; a crash or timeout is a finding only when the case ended the same way before, else
 * the case is re-run in a fresh worker (a timeout with RETRY_FACTOR times the limit). A case that
 * keeps ending early in different ways is dropped after MAX_RERUNS re-runs. The job stays with w
 * for its replacement unless it is done.
 */
static void handle_early_end(struct campaign *c, struct worker *w, int pid, int signo,
                             const struct gg_wire_fault *fault)
{
    struct job *j = &w->job;
    char name[PATH_MAX_LEN], during[PATH_MAX_LEN + 16];
    camp_job_name(j, name, sizeof name);
    snprintf(during, sizeof during, "running %s", name);
    if (signo == 0)
        c->st->timeouts++;
    int killed = outside_kill(c, w, pid, signo, during);
    if (!killed && j->ended_early && j->end_signo == signo) {
        struct gg_run_result r;
        char msg[1024];
        j->ended_early = 0; /* confirmed */
        if (gg_run_ended_early(&j->c, NULL, signo, w->limit, fault, &r, msg, sizeof msg) == GG_OK)
            handle_result(c, w, GG_OK, "", &r);
        else
            handle_result(c, w, GG_E_INTERNAL, msg, &r);
        return;
    }
    if (!killed && j->ended_early && j->end_signo != 0)
        unconfirmed(c, j, signo == 0 ? "it timed out" : signo > 0 ? "it died on another signal"
                                                                  : "it exited");
    if (j->reruns >= MAX_RERUNS) {
        camp_log(c, "WARNING: %s dropped: it ended early %d times without a confirmed finding\n",
                 name, j->reruns + 1);
        done_job(c, w);
        return;
    }
    j->reruns++;
    if (killed)
        return;
    j->ended_early = 1;
    j->end_signo = signo;
    if (signo == 0)
        camp_log(c, "#%lld TIMEOUT of %s after %.1f s, re-running with %.0f s\n",
                 (long long)c->st->execs, name, w->limit, RETRY_FACTOR * c->timeout);
    else if (signo > 0)
        camp_log(c, "#%lld CRASH? %s: worker %d (pid %d) died on signal %d (%s), re-running in a "
                 "fresh worker to confirm\n", (long long)c->st->execs, name, (int)(w - c->w),
                 pid, signo, strsignal(signo));
    else
        camp_log(c, "#%lld CRASH? %s: worker %d (pid %d) exited without a result, re-running in "
                 "a fresh worker to confirm\n", (long long)c->st->execs, name, (int)(w - c->w),
                 pid);
}

/* Gives up device g, whose workers keep exiting before they start: its workers are ended and
   not started again, the cases they held are dropped. Returns 1 when the campaign goes on on
   other devices, 0 when g was the last one. */
static int retire_gpu(struct campaign *c, int g)
{
    struct gg_gpu_stats *gs = &c->st->gpu[g];
    gs->retired = 1;
    int left = 0;
    for (int i = 0; i < c->st->n_gpus; i++)
        left += !c->st->gpu[i].retired;
    for (int i = 0; left && i < c->n_workers; i++) {
        struct worker *w = &c->w[i];
        if (w->gpu != g)
            continue;
        if (w->state != W_NONE)
            camp_reap(w, 1);
        if (w->has_job)
            camp_job_free(&w->job);
        w->has_job = 0;
    }
    if (left)
        camp_log(c, "WARNING: GPU %d given up: its workers exited before they started %d times "
                 "in a row; the campaign goes on on %d other GPU%s\n", gs->ordinal,
                 MAX_START_FAILURES, left, left == 1 ? "" : "s");
    return left > 0;
}

/* Reads what a worker has to say: its announcement, a result, or its end. */
void camp_on_readable(struct campaign *c, struct worker *w)
{
    double now = gg_wire_now();
    if (w->state == W_STARTING) {
        struct gg_wire_hello h;
        if (gg_wire_read(w->fd, &h, sizeof h, now + 2) == 0 && h.magic == GG_WIRE_MAGIC) {
            w->state = W_IDLE;
            c->start_failures = 0;
            if (w->gpu >= 0)
                c->gpu_start_failures[w->gpu] = 0;
            return;
        }
        int pid = w->pid;
        if (outside_kill(c, w, pid, camp_reap(w, 0), "starting")) {
            if (restart(c, w) != 0) /* not a failure of the worker to start */
                c->fatal = GG_E_IO;
            return;
        }
        int *fails = w->gpu >= 0 ? &c->gpu_start_failures[w->gpu] : &c->start_failures;
        if (++*fails >= MAX_START_FAILURES) {
            if (w->gpu >= 0 && retire_gpu(c, w->gpu))
                return;
            snprintf(c->err, c->err_len, "workers (%s worker) exit before they start", c->exe);
            c->fatal = GG_E_IO;
        } else if (restart(c, w) != 0) {
            c->fatal = GG_E_IO;
        }
        return;
    }
    if (w->state == W_BUSY) {
        enum gg_status status = GG_OK;
        char msg[1024];
        struct gg_run_result r;
        struct gg_wire_fault fault = {0};
        int got = gg_wire_recv_result(w->fd, now + 2, &status, msg, sizeof msg, &r, &fault);
        if (got == 0) {
            /* A sticky GPU error ends the worker after this reply: start a fresh one now rather
               than hand it a case it would not run. */
            int lost = status == GG_OK && r.verdict.cls == GG_CLASS_DEVICE;
            handle_result(c, w, status, msg, &r);
            if (!lost)
                return;
            camp_reap(w, 0);
            if (restart(c, w) != 0)
                c->fatal = GG_E_IO;
            return;
        }
        int pid = w->pid;
        handle_early_end(c, w, pid, camp_reap(w, got == 1), got == 2 ? &fault : NULL);
    } else {
        /* An idle worker has nothing to say: it is gone. */
        int pid = w->pid;
        outside_kill(c, w, pid, camp_reap(w, 0), "idle");
    }
    if (restart(c, w) != 0)
        c->fatal = GG_E_IO;
}

void camp_check_deadlines(struct campaign *c)
{
    double now = gg_wire_now();
    for (int i = 0; i < c->n_workers; i++) {
        struct worker *w = &c->w[i];
        if (w->state == W_BUSY && w->limit > 0 && now > w->since + w->limit) {
            int pid = w->pid;
            handle_early_end(c, w, pid, camp_reap(w, 1), NULL);
            if (restart(c, w) != 0)
                c->fatal = GG_E_IO;
        } else if (w->state == W_STARTING && now > w->since + GG_WORKER_START_LIMIT_S) {
            camp_reap(w, 1);
            snprintf(c->err, c->err_len, "a worker did not start within %.0f s",
                     GG_WORKER_START_LIMIT_S);
            c->fatal = GG_E_IO;
        }
    }
}

/*
 * gg_campaign.c — the campaign supervisor. It never runs a kernel: it starts worker processes
 * (`ggfuzz worker`, or `python -m ggfuzz worker` under the Python host, by posix_spawnp),
 * replays stored failures, runs the corpus seeds, then draws cases (generated, or mutated from
 * the corpus) and feeds one case at a time to each worker,
 * writing it to cur_input.<w> first. A case whose worker dies or runs past the time limit is run
 * again in a fresh worker (after a timeout with 4x the limit) and is a `crash` or `timeout`
 * finding only when the re-run ends the same way (the same signal); a case that then passes or
 * fails differently is an unconfirmed crash, logged and counted, not a finding. A worker killed
 * by SIGKILL that the supervisor did not send (kill -9, the OOM killer) is a harness event,
 * logged and counted (worker_kills), never a finding; its case is re-run. Either way the worker
 * is restarted. Results feed the corpus (a case is
 * kept when it adds a feature or a margin closer to failing), the findings store, and the
 * minimiser, which runs in a child process of its own so the campaign keeps going meanwhile.
 *
 * The kernel's supports() and workspace_bytes(), which the generator and the seed admission
 * ask about every case, run in a probe process (gg_probe.c), never here: the same for every
 * kernel, in-tree ones included, since a mutant or a plugin's supports() may crash as well as
 * its run(). A probe that dies on the capability probe's small problems ends the campaign with
 * its message; one that dies on a case lets the case through to a worker, where the same call
 * makes a `crash` or `timeout` finding of it (or a case that runs, when it does not reproduce).
 *
 * This file holds the run itself: its setup and teardown, the loop and its stops, and the
 * statistics it writes. Files of their own hold the corpus and the features (gg_campaign_corpus.c),
 * the workers and the cases they run (gg_campaign_workers.c), faults and buckets
 * (gg_campaign_faults.c), confirmation in a fresh process (gg_campaign_confirm.c) and the processes
 * those two run in (gg_campaign_child.c); campaign_int.h holds what they share.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

#define DEFAULT_TIMEOUT_S 10.0
#define STOP_GRACE_S 1.0        /* in-flight cases may finish this long after a stop */
#define STABILITY_RUNS 4        /* runs of a normal form that tell a race from a stable bug */
#define RACE_REPLAY_RUNS 16     /* runs a race's representative may take to show on replay */
#define DEFAULT_STATUS_S 60.0   /* a status line at least this often, without a terminal */

/* What a minimiser child reports: its statistics and where it filed the signature. */
struct min_report {
    struct gg_min_stats ms;
    int replaced;                      /* the normal form kept the signature: the finding's
                                          case is now it (when smaller) */
    char bucket[GG_BUCKET_ID_HEX + 1]; /* "" when not filed */
    int new_bucket;                    /* the bucket's file was created */
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* The directory holding path ("." when it has no slash). */
static void parent_dir(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == out)
        out[1] = '\0';
    else
        *slash = '\0';
}

void camp_log(struct campaign *c, const char *fmt, ...)
{
    FILE *f = c->cfg->log;
    if (!f)
        return;
    if (c->tty)
        gg_stats_clear_line(f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f);
}

/* What the store's readers (the sync of shards) passed over or started again, for the log. */
static void store_note(void *ctx, const char *line)
{
    camp_log(ctx, "%s\n", line);
}

void camp_request_stop(struct campaign *c, enum gg_stop why)
{
    if (c->st->stop == GG_STOP_NONE) {
        c->st->stop = why;
        c->stop_at = gg_wire_now();
    }
}

void camp_queue_min(struct campaign *c, const char *path, const struct gg_verdict *v, int gpu)
{
    for (size_t i = 0; i < c->n_mins; i++)
        if (strcmp(c->mins[i].sig, v->signature) == 0)
            return; /* queued once (a resumed minimisation, then its replay) */
    struct pending_min *n = realloc(c->mins, (c->n_mins + 1) * sizeof *n);
    if (!n)
        return;
    c->mins = n;
    struct pending_min *m = &c->mins[c->n_mins++];
    snprintf(m->path, sizeof m->path, "%s", path);
    snprintf(m->sig, sizeof m->sig, "%s", v->signature);
    m->cls = v->cls;
    m->done = 0;
    m->gpu = gpu;
}

/* ---- confirmation in a fresh process -------------------------------------------------------- */

/* The index among the campaign's devices of the one named by a finding's @gpu (-1: unbound,
   or a device this campaign does not use). */
static int gpu_of_case(const struct campaign *c, const struct gg_case *kase)
{
    const char *g = gg_case_meta(kase, "gpu");
    for (int i = 0; c->gpus && g && i < c->gpus->n; i++)
        if (c->gpus->id[i] == atoi(g))
            return i;
    return -1;
}

/* Where the minimiser saves its progress: a dot-file beside the finding, which corpus listings
   skip. */
static void progress_path(const struct campaign *c, const struct pending_min *m, char *out,
                          size_t len)
{
    const char *base = strrchr(m->path, '/');
    int n = snprintf(out, len, "%s/.min-%s", c->artifacts, base ? base + 1 : m->path);
    if (n < 0 || (size_t)n >= len)
        snprintf(out, len, "%s", ".ggfuzz-min-progress.case");
}

/* Stops a triage minimisation at a signature already filed in a bucket (the minimiser child's
   snapshot of the store). */
static int filed(const char *signature, void *arg)
{
    const struct campaign *c = arg;
    return gg_buckets_of(&c->buckets, signature) != NULL;
}

/* How a normal form is filed: as its own signature, or, when its verdict changed from run to run,
   as a race (the signature's class made nondeterminism) whose representative expects any class
   the runs gave, within as many runs as a replay may need when one of them passed. */
static void race_filing(const struct gg_min_stats *ms, char *sig, size_t sig_len, char *expect,
                        size_t expect_len)
{
    snprintf(sig, sig_len, "%s", ms->signature);
    expect[0] = '\0';
    if (!ms->unstable)
        return;
    snprintf(sig, sig_len, "%s%s", gg_class_name(GG_CLASS_NONDETERMINISM),
             ms->signature + strcspn(ms->signature, "/"));
    size_t at = (size_t)snprintf(expect, expect_len, "class=%s",
                                 gg_class_name(GG_CLASS_NONDETERMINISM));
    for (int k = GG_CLASS_PASS + 1; k < GG_CLASS_COUNT && at < expect_len; k++)
        if (ms->classes_seen & (1u << k) && k != GG_CLASS_NONDETERMINISM)
            at += (size_t)snprintf(expect + at, expect_len - at, "|%s", gg_class_name(k));
    if (ms->classes_seen & 1u && at < expect_len)
        snprintf(expect + at, expect_len - at, " runs=%d", RACE_REPLAY_RUNS);
}

/*
 * The minimiser child: shrinks the stored case of one signature to its bucket's normal form
 * (bucket mode, stopped early at a signature already filed), files the signature in that bucket
 * (@bucket on its finding) and the normal form as the bucket's representative when it is new or
 * smaller; a normal form that kept the signature itself also replaces the stored case. Reports
 * on fd.
 */
static void minimize_child(struct campaign *c, const struct pending_min *m, double budget, int fd)
{
    struct min_report rep;
    memset(&rep, 0, sizeof rep);
    /* On the device of the worker that found it (the first one when not known). */
    if (c->gpus)
        gg_gpus_bind(c->gpus->id[m->gpu >= 0 ? m->gpu : 0]);
    struct gg_case kase;
    char err[1024], progress[PATH_MAX_LEN];
    int ok = 0;
    progress_path(c, m, progress, sizeof progress);
    if (gg_case_load(m->path, &kase, err, sizeof err) == GG_OK) {
        struct gg_min_opts mo = {.max_total_time_s = budget,
                                 .repeats = m->cls == GG_CLASS_NONDETERMINISM ||
                                                    m->cls == GG_CLASS_WORKSPACE ? 2 : 1,
                                 .timeout_s = c->timeout,
                                 .run = c->cfg->run,
                                 .findings_dir = c->artifacts,
                                 .bucket = 1,
                                 .stop_at = filed,
                                 .stop_arg = c,
                                 .stability_runs = STABILITY_RUNS};
        mo.run.kernel = mo.run.mutant = NULL;
        struct gg_min_stats *ms = &rep.ms;
        if (gg_minimize(&kase, m->sig, &mo, ms, err, sizeof err) == GG_OK) {
            /* what the normal form shows, not what the case it came from showed */
            gg_case_set_meta(&kase, "observed", ms->detail[0] ? ms->detail : "-");
            const char *known = ms->stopped_at ? gg_buckets_of(&c->buckets, ms->signature) : NULL;
            if (known) {
                snprintf(rep.bucket, sizeof rep.bucket, "%s", known);
                ok = 1;
            } else if (ms->fixpoint) { /* a normal form, not a case cut short */
                char sig[GG_SIGNATURE_MAX], expect[GG_SIGNATURE_MAX];
                race_filing(ms, sig, sizeof sig, expect, sizeof expect);
                ok = gg_bucket_file(c->artifacts, &kase, sig, ms->unstable ? expect : NULL,
                                    c->st->seed, rep.bucket, &rep.new_bucket, err,
                                    sizeof err) == GG_OK;
            }
            char text[GG_BUCKET_ID_HEX + 8];
            snprintf(text, sizeof text, "id=%s", rep.bucket);
            if (ok)
                ok = gg_findings_tag(c->artifacts, m->path, "bucket", text, err,
                                     sizeof err) == GG_OK;
            if (ok && strcmp(ms->signature, m->sig) == 0) {
                struct gg_verdict v = {.cls = m->cls};
                snprintf(v.signature, sizeof v.signature, "%s", m->sig);
                rep.replaced = gg_findings_record(c->artifacts, &kase, &v, c->st->seed, NULL,
                                                  NULL, 0, err, sizeof err) == GG_OK;
            }
            if (!ok)
                rep.bucket[0] = '\0';
        }
        gg_case_free(&kase);
    }
    unlink(progress);
    gg_wire_write(fd, &rep, sizeof rep);
    _exit(ok ? 0 : 1);
}

/* The next signature to triage: one whose class family has no bucket of this campaign's yet
   first (a new bug is more likely there), else the oldest; signatures filed meanwhile are
   skipped. */
static struct pending_min *next_min(struct campaign *c)
{
    struct pending_min *oldest = NULL;
    for (size_t i = 0; i < c->n_mins; i++) {
        struct pending_min *m = &c->mins[i];
        if (m->done)
            continue;
        const char *id = gg_buckets_of(&c->buckets, m->sig);
        if (id) {
            m->done = 1;
            camp_meet_bucket(c, id);
            continue;
        }
        int class_met = 0;
        for (size_t b = 0; b < c->n_met && !class_met; b++) {
            const struct gg_bucket *info = camp_bucket_info(c, c->met[b]);
            class_met = info && strcmp(gg_bucket_family(gg_class_from_name(info->cls)),
                                       gg_bucket_family(m->cls)) == 0;
        }
        if (!class_met)
            return m;
        if (!oldest)
            oldest = m;
    }
    return oldest;
}

/* Minimisers at work on device gpu (-1: on any; one whose finder's device is not known runs on
   the first). Minimisers that may run: one, or while signatures wait for triage one per worker
   (the fuzzing workers then give way, see may_dispatch). */
static int running_mins(const struct campaign *c, int gpu)
{
    int n = 0;
    for (int i = 0; i < c->n_ms; i++)
        n += c->ms[i].pid != 0 && (gpu < 0 || (c->ms[i].cur.gpu >= 0 ? c->ms[i].cur.gpu : 0) == gpu);
    return n;
}

static int backlog(const struct campaign *c)
{
    for (size_t i = 0; i < c->n_mins; i++)
        if (!c->mins[i].done)
            return 1;
    return 0;
}

static void start_one_min(struct campaign *c, struct min_slot *slot)
{
    struct pending_min *m = next_min(c);
    if (!m)
        return;
    double budget = c->cfg->minimize_s > 0 ? c->cfg->minimize_s : DEFAULT_MINIMIZE_S;
    if (c->budget > 0)
        budget = fmin(budget, c->budget - camp_elapsed(c));
    if (budget < MIN_MINIMIZE_S && c->budget > 0) {
        if (c->st->stop != GG_STOP_NONE) /* no time left for any of them */
            for (size_t i = 0; i < c->n_mins; i++)
                c->mins[i].done = 1;
        return;
    }
    m->done = 1;
    int fd;
    pid_t pid = camp_fork_child(c, &fd);
    if (pid == 0)
        minimize_child(c, m, budget, fd);
    if (pid > 0)
        *slot = (struct min_slot){.pid = (int)pid, .fd = fd, .started = gg_wire_now(),
                                  .budget = budget, .cur = *m};
}

/* Starts minimisers in the free slots: the first always, the others while a backlog waits. */
static void start_min(struct campaign *c)
{
    for (int i = 0; i < c->n_ms; i++)
        if (!c->ms[i].pid && (running_mins(c, -1) == 0 || backlog(c)))
            start_one_min(c, &c->ms[i]);
}

/* After a minimiser ended (or was killed): its report, the bucket it filed the signature in. */
static void finish_min(struct campaign *c, struct min_slot *slot, int wst, int killed)
{
    struct min_report rep;
    memset(&rep, 0, sizeof rep);
    const struct gg_min_stats *ms = &rep.ms;
    int got = !killed && gg_wire_read(slot->fd, &rep, sizeof rep, gg_wire_now() + 1) == 0;
    close(slot->fd);
    slot->pid = 0;
    const struct pending_min *m = &slot->cur;
    char progress[PATH_MAX_LEN];
    progress_path(c, m, progress, sizeof progress);
    unlink(progress);
    int ok = got && WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
    if (ok)
        c->st->minimized++;
    if (got)
        camp_log(c, "#%lld MIN %s: normal form of groups %lld -> %lld, output elements %lld -> "
                 "%lld, %d runs in %.1f s%s%s\n", (long long)c->st->execs, m->path,
                 (long long)ms->groups_before, (long long)ms->groups_after,
                 (long long)ms->elems_before, (long long)ms->elems_after, ms->attempts,
                 ms->seconds, ms->stopped_at ? " (reached a filed signature)" : "",
                 !ok ? " (minimiser failed)"
                 : rep.replaced ? "; it keeps the finding's signature (the store keeps the "
                                  "smaller case)"
                                : "; its signature differs: the finding keeps its case as found");
    else
        camp_log(c, "#%lld MIN %s: %s\n", (long long)c->st->execs, m->path,
                 killed ? "stopped" : "minimiser failed");
    if (!ok || !rep.bucket[0])
        return;
    camp_rescan_buckets(c);
    const struct gg_bucket *b = camp_bucket_info(c, rep.bucket);
    int first = camp_meet_bucket(c, rep.bucket);
    if (strcmp(m->path, c->st->first_path) == 0)
        c->st->first_groups_min = b ? b->groups : -1;
    char key[GG_BUCKET_ID_HEX + 16];
    camp_bucket_key(rep.bucket, key, sizeof key);
    camp_log(c, "#%lld BUCKET %s (%s) %s\n    <- %s\n    representative %s\n",
             (long long)c->st->execs, rep.bucket,
             !first ? "member" : gg_sigset_has(&c->known, key) ? "known" : "new",
             b ? b->form : "?", m->sig, b ? b->path : "?");
}

/* Checks on the minimisers; kill ends them now (and one past its budget). */
static void poll_min(struct campaign *c, int kill_it)
{
    for (int i = 0; i < c->n_ms; i++) {
        struct min_slot *slot = &c->ms[i];
        int wst = 0;
        int overdue = gg_wire_now() > slot->started + slot->budget + 2 * c->timeout + 5;
        if (slot->pid && camp_child_ended(slot->pid, kill_it || overdue, &wst))
            finish_min(c, slot, wst, kill_it || overdue);
    }
}

/* A progress file .min-NAME that a killed campaign left in the artifacts directory (name): its
   case, which reproduced the signature of its @expect line, goes into the findings store (which
   keeps it when it is smaller than the stored case of NAME), the file is removed, and the
   minimisation is queued to go on from the stored case. 0 when name is not a progress file. */
static int resume_min(struct campaign *c, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(name, ".min-", 5) != 0 || len <= 10 || strcmp(name + len - 5, ".case") != 0)
        return 0;
    char progress[PATH_MAX_LEN], path[PATH_MAX_LEN], err[1024], cls[64] = "", seed[32] = "";
    if (snprintf(progress, sizeof progress, "%s/%s", c->artifacts, name) >= (int)sizeof progress ||
        snprintf(path, sizeof path, "%s/%s", c->artifacts, name + 5) >= (int)sizeof path)
        return 1;
    struct gg_case kase;
    if (gg_case_load(progress, &kase, err, sizeof err) != GG_OK) {
        camp_log(c, "WARNING: removing a minimisation's progress that cannot be read: %s\n", err);
        unlink(progress);
        return 1;
    }
    const char *expect = gg_case_meta(&kase, "expect"), *finding = gg_case_meta(&kase, "finding");
    struct gg_verdict v = {.cls = GG_CLASS_COUNT};
    if (expect && gg_meta_field(expect, "class", cls, sizeof cls) &&
        gg_meta_field(expect, "sig", v.signature, sizeof v.signature))
        v.cls = gg_class_from_name(cls);
    if (finding)
        gg_meta_field(finding, "seed", seed, sizeof seed);
    if (v.cls == GG_CLASS_COUNT || v.cls == GG_CLASS_PASS) {
        camp_log(c, "WARNING: removing %s: no finding's @expect to minimise for\n", progress);
        unlink(progress);
    } else if (gg_findings_record(c->artifacts, &kase, &v, strtoull(seed, NULL, 0), NULL, path,
                                  sizeof path, err, sizeof err) != GG_OK) {
        camp_log(c, "WARNING: cannot resume the minimisation of %s: %s\n", progress, err);
    } else {
        unlink(progress);
        if (!c->cfg->no_minimize)
            camp_queue_min(c, path, &v, gpu_of_case(c, &kase));
        camp_log(c, "INFO: %s the minimisation of %s that a stopped campaign left at %lld "
                 "groups\n", c->cfg->no_minimize ? "stored the progress of" : "resuming", path,
                 (long long)camp_case_groups(&kase));
    }
    gg_case_free(&kase);
    return 1;
}

/* Resumes every minimisation whose progress file is in the artifacts directory. */
static void resume_mins(struct campaign *c)
{
    DIR *d = opendir(c->artifacts);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        resume_min(c, e->d_name);
    closedir(d);
}

/* ---- statistics ---------------------------------------------------------------------------- */

static void view_of(const struct campaign *c, struct gg_stats_view *v)
{
    memset(v, 0, sizeof *v);
    v->s = c->st;
    v->kernel = c->k->name;
    v->mutant = c->mutant;
    v->seed = c->st->seed;
    v->start_wall = c->start_wall;
    v->elapsed_s = camp_elapsed(c);
    v->budget_s = c->budget;
    v->max_runs = c->cfg->max_runs;
    v->workers = c->n_workers;
    v->command_line = c->cfg->command_line;
    v->replay_command = c->cfg->replay_command;
    v->artifacts = c->artifacts_abs;
    v->shard_index = c->shard;
    v->shard_count = c->shards;
}

static void tick(struct campaign *c, int force)
{
    double interval = c->cfg->stats_interval_s > 0 ? c->cfg->stats_interval_s : 1.0;
    double now = gg_wire_now();
    if (!force && now - c->last_tick < interval)
        return;
    c->last_tick = now;
    c->st->seconds = now - c->t0;
    c->st->untriaged = camp_count_untriaged(c);
    c->st->next_case = c->next_index;
    struct gg_stats_view v;
    view_of(c, &v);
    char err[1024];
    int written = gg_stats_write(c->stats_dir, &v, err, sizeof err) == GG_OK;
    if (written && c->shards)
        gg_shard_done_reset(&c->done, c->st->next_case);
    if (!written || gg_stats_plot(c->stats_dir, &v, err, sizeof err) != GG_OK)
        camp_log(c, "WARNING: %s\n", err);
    if (c->cfg->log && c->tty)
        gg_stats_status_line(c->cfg->log, &v);
    else if (c->st->execs >= c->next_pulse || now >= c->next_status)
        camp_log(c, "%s#%lld pulse exec/s: %.0f corp: %lld ft: %lld faults: %lld sigs: %lld\n",
                 c->shard_tag, (long long)c->st->execs,
                 v.elapsed_s > 0 ? (double)c->st->execs / v.elapsed_s : 0,
                 (long long)c->st->corpus_count, (long long)c->st->features,
                 (long long)c->st->faults_total, (long long)c->st->unique_sigs);
    while (c->next_pulse <= c->st->execs)
        c->next_pulse *= 2;
    if (now >= c->next_status)
        c->next_status = now + (c->cfg->status_interval_s > 0 ? c->cfg->status_interval_s
                                                              : DEFAULT_STATUS_S);
    if (c->cfg->on_tick) {
        int pids[c->n_workers > 0 ? c->n_workers : 1];
        for (int i = 0; i < c->n_workers; i++)
            pids[i] = c->w[i].pid;
        c->cfg->on_tick(c->st, pids, c->n_workers, c->cfg->user);
    }
}

/* ---- shards ------------------------------------------------------------------------------- */

/* A shard's directories in the campaign's, and where it goes on from. */
static enum gg_status setup_shard(struct campaign *c, const struct gg_campaign_config *cfg)
{
    c->shards = cfg->shard_count > 0 ? cfg->shard_count : 1;
    c->shard = cfg->shard_index;
    if (c->shard < 0 || c->shard >= c->shards || c->shards > GG_SHARD_MAX) {
        snprintf(c->err, c->err_len, "shard %d/%d: the index must be below the count (and the "
                 "count at most %d)", c->shard, c->shards, GG_SHARD_MAX);
        return GG_E_INVAL;
    }
    char dir[PATH_MAX_LEN - 16];
    gg_shard_dir(cfg->campaign_dir, c->shard, dir, sizeof dir);
    snprintf(c->artifacts, sizeof c->artifacts, "%s/artifacts", dir);
    snprintf(c->stats_dir, sizeof c->stats_dir, "%s", dir);
    snprintf(c->corpus_out, sizeof c->corpus_out, "%s/corpus", dir);
    snprintf(c->shard_tag, sizeof c->shard_tag, "[shard %d/%d] ", c->shard, c->shards);
    uint64_t seed, next;
    if (gg_shard_resume_point(dir, &seed, &next)) {
        c->st->seed = seed;
        c->next_index = next;
        c->st->resumed = 1;
    } else {
        c->st->seed = gg_shard_seed(c->st->seed, c->shard, c->shards);
    }
    return GG_OK;
}

/* ---- the loop ------------------------------------------------------------------------------ */

static void check_stop(struct campaign *c)
{
    if (c->fatal != GG_OK)
        camp_request_stop(c, GG_STOP_ERROR);
    if (c->cfg->stop_flag && *c->cfg->stop_flag)
        camp_request_stop(c, GG_STOP_SIGNAL);
    if (c->budget > 0 && camp_elapsed(c) >= c->budget)
        camp_request_stop(c, GG_STOP_TIME);
    if (c->cfg->max_runs > 0 && c->dispatched >= c->cfg->max_runs)
        camp_request_stop(c, GG_STOP_RUNS);
    struct stat sb;
    if (c->cfg->stop_file && stat(c->cfg->stop_file, &sb) == 0)
        camp_request_stop(c, GG_STOP_FILE);
}

/* Workers with a case in flight or one held to run again, on device gpu (-1: on any). */
static int busy_workers(const struct campaign *c, int gpu)
{
    int n = 0;
    for (int i = 0; i < c->n_workers; i++)
        n += (gpu < 0 || c->w[i].gpu == gpu) &&
             (c->w[i].state == W_BUSY || (c->w[i].has_job && c->w[i].job.reruns));
    return n;
}

/* While minimisers triage a backlog, fuzzing workers give way so that the processes at work
   stay at one more than the workers, at least one of them fuzzing: triage keeps up with the
   findings instead of falling behind all night. Spread over GPUs, the count is per GPU: a
   minimiser gives way to the workers of its own GPU only. */
static int may_dispatch(const struct campaign *c, const struct worker *w)
{
    int g = c->gpus ? w->gpu : -1;
    int busy = busy_workers(c, g), mins = running_mins(c, g);
    return busy == 0 || busy + mins <= (g >= 0 ? c->st->gpu[g].workers : c->n_workers);
}

static void loop(struct campaign *c)
{
    struct pollfd *pfd = calloc((size_t)c->n_workers, sizeof *pfd);
    if (!pfd) {
        c->fatal = GG_E_NOMEM;
        snprintf(c->err, c->err_len, "out of memory");
        return;
    }
    for (;;) {
        check_stop(c);
        if (c->st->stop != GG_STOP_NONE) {
            /* A run limit lets every case in flight end; other stops give them a grace. */
            int grace_over = c->st->stop != GG_STOP_RUNS &&
                             gg_wire_now() > c->stop_at + STOP_GRACE_S;
            if (busy_workers(c, -1) == 0 || grace_over || c->st->stop == GG_STOP_ERROR)
                break;
        }
        for (int i = 0; i < c->n_workers; i++) {
            struct worker *w = &c->w[i];
            int retry = w->has_job && w->job.reruns;
            if (w->state == W_IDLE && (c->st->stop == GG_STOP_NONE || retry) &&
                (retry || may_dispatch(c, w)))
                camp_dispatch(c, w);
        }
        double wait = 0.1;
        for (int i = 0; i < c->n_workers; i++) {
            pfd[i].fd = c->w[i].fd;
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
            if (c->w[i].state == W_BUSY)
                wait = fmin(wait, c->w[i].since + c->w[i].limit - gg_wire_now());
        }
        int rc = poll(pfd, (nfds_t)c->n_workers, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (rc < 0 && errno != EINTR) {
            snprintf(c->err, c->err_len, "poll: %s", strerror(errno));
            c->fatal = GG_E_IO;
        }
        for (int i = 0; rc > 0 && i < c->n_workers; i++)
            if (pfd[i].revents && c->w[i].fd == pfd[i].fd)
                camp_on_readable(c, &c->w[i]);
        camp_check_deadlines(c);
        poll_min(c, 0);
        start_min(c);
        camp_poll_confirms(c, 0);
        camp_start_confirms(c);
        tick(c, 0);
        camp_sync_peers(c, 0);
    }
    free(pfd);
}

/* Ends every worker (and drops what they were running) and the minimiser as the stop asks. */
static void wind_down(struct campaign *c)
{
    for (int i = 0; i < c->n_workers; i++) {
        struct worker *w = &c->w[i];
        if (w->state != W_NONE)
            camp_reap(w, 1);
        if (w->has_job)
            camp_job_free(&w->job);
        w->has_job = 0;
        unlink(w->cur_path);
    }
    int abrupt = c->st->stop == GG_STOP_SIGNAL || c->st->stop == GG_STOP_FILE ||
                 c->st->stop == GG_STOP_ERROR;
    for (;;) {
        int kill_now = abrupt || (c->cfg->stop_flag && *c->cfg->stop_flag);
        camp_poll_confirms(c, kill_now);
        if (!kill_now)
            camp_start_confirms(c);
        poll_min(c, kill_now);
        if (!kill_now)
            start_min(c);
        if (running_mins(c, -1) == 0 && camp_running_confirms(c) == 0 && c->n_confirms == 0)
            break;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        tick(c, 0);
    }
}

static enum gg_status setup(struct campaign *c, const struct gg_campaign_config *cfg)
{
    gg_registry_init();
    if (!cfg->kernel || !(c->k = gg_registry_find(cfg->kernel))) {
        snprintf(c->err, c->err_len, "unknown kernel '%s' (ggfuzz list shows the kernels)",
                 cfg->kernel ? cfg->kernel : "");
        return GG_E_INVAL;
    }
    const char *mut = cfg->mutant && strcmp(cfg->mutant, "none") ? cfg->mutant : "";
    if (mut[0] && !gg_mutant_list_check(mut, c->k->mutants, c->k->name, c->err, c->err_len))
        return GG_E_INVAL;
    if (strlen(mut) >= sizeof c->mutant) {
        snprintf(c->err, c->err_len, "mutant list '%s' is longer than %d characters", mut,
                 (int)sizeof c->mutant - 1);
        return GG_E_INVAL;
    }
    snprintf(c->mutant, sizeof c->mutant, "%s", mut);
    c->timeout = cfg->timeout_s > 0 ? cfg->timeout_s : DEFAULT_TIMEOUT_S;
    if (gg_probe_open(c->k, c->timeout, "--timeout", &c->probe) != GG_OK) {
        snprintf(c->err, c->err_len, "out of memory");
        return GG_E_NOMEM;
    }
    c->gen = (struct gg_gen_config){.kernel = c->k,
                                    .mutant = c->mutant,
                                    .faults = cfg->faults ? cfg->faults : GG_FAULTS_ALL,
                                    .strategy = cfg->strategy,
                                    .max_host_bytes = cfg->run.max_mem_bytes,
                                    .probe = c->probe};
    /* What the kernel supports is probed once here, not for every case drawn. */
    char perr[1024];
    enum gg_status pst = gg_gen_caps_probe(&c->gen, &c->caps, perr, sizeof perr);
    if (pst == GG_OK)
        c->gen.caps = c->caps;
    if (pst == GG_E_ABI) {
        snprintf(c->err, c->err_len, "%s", perr);
        return pst;
    }
    if (cfg->campaign_dir) {
        enum gg_status st = setup_shard(c, cfg);
        if (st != GG_OK)
            return st;
    } else {
        snprintf(c->artifacts, sizeof c->artifacts, "%s",
                 cfg->artifacts_dir ? cfg->artifacts_dir : "ggfuzz-out/artifacts");
        if (cfg->stats_dir)
            snprintf(c->stats_dir, sizeof c->stats_dir, "%s", cfg->stats_dir);
        else
            parent_dir(c->artifacts, c->stats_dir, sizeof c->stats_dir);
        if (cfg->n_corpus_dirs > 0)
            snprintf(c->corpus_out, sizeof c->corpus_out, "%s", cfg->corpus_dirs[0]);
    }
    snprintf(c->exe, sizeof c->exe, "%s",
             cfg->worker_cmd != NULL && cfg->n_worker_cmd > 0 ? cfg->worker_cmd[0]
             : cfg->worker_exe                                ? cfg->worker_exe
                                                              : "/proc/self/exe");
    const char *dirs[] = {c->artifacts, c->stats_dir, c->corpus_out[0] ? c->corpus_out : NULL};
    for (size_t i = 0; i < 3; i++) {
        if (dirs[i] && gg_mkdir_p(dirs[i]) != 0) {
            snprintf(c->err, c->err_len, "%s: cannot create the directory: %s", dirs[i],
                     strerror(errno));
            return GG_E_IO;
        }
        /* Temporary files of writers killed between their write and its rename: of case files
           in the artifacts and corpus directories, of fuzzer_stats in the statistics one (which
           may be a directory of the user's, such as "."). */
        int swept = dirs[i] ? gg_tmpfile_sweep(dirs[i], i == 1 ? "fuzzer_stats" : ".case")
                            : 0;
        if (swept > 0)
            camp_log(c, "INFO: removed %d temporary files left by writers that are gone from "
                     "%s\n", swept, dirs[i]);
    }
    if (realpath(c->artifacts, c->artifacts_abs) == NULL)
        snprintf(c->artifacts_abs, sizeof c->artifacts_abs, "%s", c->artifacts);
    if (c->shards) {
        char err[1024];
        c->skipping = gg_shard_done_open(&c->done, c->stats_dir, c->st->seed, c->next_index, err,
                                         sizeof err);
        if (c->skipping < 0)
            camp_log(c, "WARNING: %s: a requeue of this shard would count again the findings of "
                     "the cases after its last fuzzer_stats\n", err);
    }
    if (cfg->known_path) {
        char msg[1024];
        enum gg_status st = gg_sigset_load(cfg->known_path, &c->known, msg, sizeof msg);
        if (st != GG_OK) {
            snprintf(c->err, c->err_len, "--known: %s", msg);
            return st;
        }
        int dir = gg_path_is_dir(cfg->known_path);
        if (dir && c->known.stores == 0)
            camp_log(c, "WARNING: --known %s: holds no findings store (no findings, no "
                     "artifacts/, no shard-*/artifacts): no signature is known\n",
                     cfg->known_path);
        else if (dir)
            camp_log(c, "INFO: --known %s: %zu known signatures and buckets from %d findings "
                     "store%s\n", cfg->known_path, c->known.n, c->known.stores,
                     c->known.stores == 1 ? "" : "s");
        else
            camp_log(c, "INFO: --known %s: %zu known signatures and buckets\n", cfg->known_path,
                     c->known.n);
    }
    if (cfg->campaign_dir) {
        enum gg_status st = gg_sync_open(&c->sync, cfg->campaign_dir, c->shard, c->err,
                                         c->err_len);
        if (st != GG_OK)
            return st;
        c->sync.note = store_note;
        c->sync.note_ctx = c;
        c->syncing = 1;
    }
    c->budget = cfg->max_total_time_s > 0 ? cfg->max_total_time_s : 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c->gpus = cfg->gpus && cfg->gpus->n > 0 ? cfg->gpus : NULL;
    c->n_workers = cfg->workers > 0 ? cfg->workers
                   : c->k->backend == GG_BACKEND_CPU && cpus > 0 ? (int)cpus
                   : c->gpus ? c->gpus->n : 1;
    if (c->n_workers > 256)
        c->n_workers = 256;
    c->w = calloc((size_t)c->n_workers, sizeof *c->w);
    c->n_ms = c->n_workers;
    c->ms = calloc((size_t)c->n_ms, sizeof *c->ms);
    c->n_cs = c->n_workers > 1 ? c->n_workers / 2 : 1;
    c->cs = calloc((size_t)c->n_cs, sizeof *c->cs);
    if (!c->w || !c->ms || !c->cs) {
        snprintf(c->err, c->err_len, "out of memory");
        return GG_E_NOMEM;
    }
    c->st->n_gpus = c->gpus ? c->gpus->n : 0;
    for (int g = 0; g < c->st->n_gpus; g++)
        c->st->gpu[g].ordinal = c->gpus->id[g];
    for (int i = 0; i < c->n_workers; i++) {
        c->w[i].fd = -1;
        c->w[i].gpu = c->gpus ? i % c->gpus->n : -1;
        if (c->gpus)
            c->st->gpu[c->w[i].gpu].workers++;
        snprintf(c->w[i].cur_path, sizeof c->w[i].cur_path, "%s/cur_input.%d", c->stats_dir, i);
    }
    return GG_OK;
}

static void teardown(struct campaign *c)
{
    for (int i = 0; c->w && i < c->n_workers; i++) {
        if (c->w[i].has_job)
            camp_job_free(&c->w[i].job);
        gg_history_clear(&c->w[i].hist);
    }
    free(c->w);
    free(c->ms);
    for (size_t i = 0; i < c->n_confirms; i++)
        camp_confirm_free(&c->confirms[i]);
    free(c->confirms);
    for (int i = 0; c->cs && i < c->n_cs; i++)
        camp_confirm_free(&c->cs[i].cur);
    free(c->cs);
    for (size_t i = 0; i < c->n_unconf; i++)
        free(c->unconf[i].sig);
    free(c->unconf);
    for (size_t i = 0; i < c->n_queue; i++)
        camp_job_free(&c->queue[i]);
    free(c->queue);
    for (size_t i = 0; i < c->n_corpus; i++)
        gg_case_free(&c->corpus[i]);
    free(c->corpus);
    camp_ftable_free(&c->ft);
    for (size_t i = 0; i < c->n_sigs; i++)
        free(c->sigs[i]);
    free(c->sigs);
    free(c->mins);
    free(c->met);
    gg_buckets_free(&c->buckets);
    gg_sigset_free(&c->known);
    gg_gen_caps_free(c->caps);
    gg_probe_close(c->probe);
    if (c->syncing)
        gg_sync_close(&c->sync);
    if (c->shards)
        gg_shard_done_close(&c->done);
}

static uint64_t pick_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = camp_mix64((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
                 camp_mix64((uint64_t)getpid() << 32);
    return s ? s : 1;
}

enum gg_status gg_campaign_run(const struct gg_campaign_config *cfg, struct gg_campaign_stats *st,
                               char *err, size_t err_len)
{
    memset(st, 0, sizeof *st);
    st->first_finding_s = st->last_new_s = st->last_fault_s = -1;
    st->first_groups = st->first_groups_min = -1;
    st->min_snr_margin_db = INFINITY;
    st->worst_new = st->first_class = GG_CLASS_PASS;
    st->seed = cfg->seed ? cfg->seed : pick_seed();
    st->merged_sigs = -1;
    struct campaign c = {.cfg = cfg, .st = st, .err = err, .err_len = err_len, .next_pulse = 1,
                         };
    snprintf(err, err_len, "%s", "");
    c.done.fd = -1;
    c.next_status = gg_wire_now() + (cfg->status_interval_s > 0 ? cfg->status_interval_s
                                                                : DEFAULT_STATUS_S);
    c.tty = cfg->log && (cfg->status_line > 0 || (cfg->status_line < 0 && isatty(fileno(cfg->log))));
    c.t0 = gg_wire_now();
    c.start_wall = (double)time(NULL);
    enum gg_status rc = setup(&c, cfg);
    if (rc != GG_OK) {
        st->stop = GG_STOP_ERROR;
        teardown(&c);
        return rc;
    }
    static const char *const strategies[] = {"targeted", "uniform"};
    camp_log(&c, "INFO: seed=%llu\n", (unsigned long long)st->seed);
    if (c.shards)
        camp_log(&c, "INFO: shard %d/%d of %s: %s\n", c.shard, c.shards, cfg->campaign_dir,
                 st->resumed ? "going on where it stopped" : "a fresh start");
    if (st->resumed)
        camp_log(&c, "INFO: resuming at case %llu of seed %llu; its stored findings are not "
                 "replayed\n", (unsigned long long)c.next_index, (unsigned long long)st->seed);
    if (c.skipping > 0)
        camp_log(&c, "INFO: skipping %ld cases that ended after the last fuzzer_stats before the "
                 "shard stopped (their findings are counted already)\n", c.skipping);
    camp_log(&c, "INFO: kernel=%s mutant=%s strategy=%s workers=%d timeout=%gs "
             "max_total_time=%gs runs=%lld artifacts=%s\n", c.k->name,
             c.mutant[0] ? c.mutant : "none", strategies[cfg->strategy == GG_STRATEGY_UNIFORM],
             c.n_workers, c.timeout, c.budget, (long long)cfg->max_runs, c.artifacts);
    if (c.gpus) {
        char list[GG_GPUS_MAX * 6];
        gg_gpus_format(c.gpus, list, sizeof list);
        camp_log(&c, "INFO: gpus=%s: each worker sees its GPU alone (%s)\n", list,
                 gg_device_visible_env());
    }
    resume_mins(&c);
    camp_rescan_buckets(&c);
    camp_load_stored(&c);
    camp_sync_peers(&c, 1);
    for (int i = 0; i < c.n_workers && c.fatal == GG_OK; i++)
        if (camp_spawn_worker(&c, &c.w[i]) != 0)
            c.fatal = GG_E_IO;
    if (c.fatal == GG_OK)
        loop(&c);
    wind_down(&c);
    if (c.fatal != GG_OK)
        camp_request_stop(&c, GG_STOP_ERROR);
    tick(&c, 1);
    if (c.shards) {
        if (c.tty)
            gg_stats_clear_line(cfg->log);
        st->merged_sigs = gg_shard_merge_all(cfg->campaign_dir, c.shard, cfg->log);
    }
    if (cfg->log)
        camp_log_buckets(&c);
    if (cfg->log) {
        struct gg_stats_view v;
        view_of(&c, &v);
        if (c.tty)
            gg_stats_clear_line(cfg->log);
        gg_stats_final(cfg->log, &v);
        fprintf(cfg->log, "INFO: %lld buckets (%lld new%s), %lld signatures not yet in one\n",
                (long long)st->buckets, (long long)st->new_buckets,
                cfg->known_path ? ", not in the known file" : "", (long long)st->untriaged);
        fprintf(cfg->log, "INFO: %lld unique signatures (%lld new%s), %lld new to %s; "
                "statistics in %s/fuzzer_stats\n", (long long)st->unique_sigs,
                (long long)st->new_sigs, cfg->known_path ? ", not in the known file" : "",
                (long long)st->stored_sigs, c.artifacts, c.stats_dir);
        char why[160];
        if (gg_campaign_unverified(st, why, sizeof why))
            fprintf(cfg->log, "ERROR: %s\n", why);
        fflush(cfg->log);
    }
    rc = c.fatal;
    teardown(&c);
    return rc;
}

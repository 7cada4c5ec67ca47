/*
 * gg_campaign_minimize.c — triage: every new signature the campaign files is minimised in a child
 * process (gg_minimize in bucket mode) to its bucket's normal form, which files the signature in
 * that bucket. Signatures of a class family without a bucket yet go first; while a backlog waits,
 * minimisers of a CPU kernel take the campaign's share of the worker slots (--minimize-share),
 * and those of a GPU kernel run paced to that share of their GPU's time (camp_min_paced). A
 * minimiser runs its candidates in one `ggfuzz worker` process of its own, on the device of the
 * worker that found the signature, as the workers run cases: a GPU context and the device memory
 * kept across cases serve all of them, where a fresh process per candidate would create a
 * context each. A minimiser saves its progress beside the finding (.min-NAME), and the next
 * campaign on that store takes it up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

#define STABILITY_RUNS 4        /* runs of a normal form that tell a race from a stable bug */
#define RACE_REPLAY_RUNS 16     /* runs a race's representative may take to show on replay */

/* What a minimiser child reports: its statistics and where it filed the signature. */
struct min_report {
    struct gg_min_stats ms;
    int replaced;                      /* the normal form kept the signature: the finding's
                                          case is now it (when smaller) */
    char bucket[GG_BUCKET_ID_HEX + 1]; /* "" when not filed */
    int new_bucket;                    /* the bucket's file was created */
};

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
static void minimize_child(struct campaign *c, const struct pending_min *m, double budget,
                           double duty, int pace_fd, int fd)
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
                                 .timeout_s = c->timeout > 0 ? c->timeout : GG_NO_LIMIT,
                                 .run = c->cfg->run,
                                 .findings_dir = c->artifacts,
                                 .bucket = 1,
                                 .stop_at = filed,
                                 .stop_arg = c,
                                 .stability_runs = STABILITY_RUNS};
        mo.run.kernel = mo.run.mutant = NULL;
        mo.duty = duty;
        mo.pace_fd = pace_fd;
        /* Candidates run in one worker process on the bound device (gpu -1: this process's
           binding), as the campaign's workers run cases. */
        struct gg_worker_launch how = camp_worker_launch(c, -1);
        struct gg_workerproc proc;
        gg_workerproc_init(&proc, &how);
        mo.proc = &proc;
        struct gg_min_stats *ms = &rep.ms;
        enum gg_status mst = gg_minimize(&kase, m->sig, &mo, ms, err, sizeof err);
        gg_workerproc_close(&proc);
        if (mst == GG_OK) {
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

/* The device a minimiser of m runs on: its finder's (the first one when not known; -1 without
   devices). */
static int min_device(const struct campaign *c, const struct pending_min *m)
{
    return c->gpus ? (m->gpu >= 0 ? m->gpu : 0) : -1;
}

static double min_share(const struct campaign *c)
{
    return c->cfg->minimize_share > 0 ? c->cfg->minimize_share : GG_CAMPAIGN_DEFAULT_MINIMIZE_SHARE;
}

/* Minimisers that may run at once on device g (-1: the campaign's workers): for a CPU kernel
   the campaign's share of its worker slots, one at least; paced ones one per device, which takes
   the whole share of its time (camp_min_paced). Paced minimisers of one device splitting the
   share would triage as many signatures in the same time, each taking as much longer, and every
   one of them would hold a context of its own on the GPU. */
static int min_slots(const struct campaign *c, int g)
{
    if (camp_min_paced(c))
        return 1;
    int workers = g >= 0 ? c->st->gpu[g].workers : c->n_workers;
    int n = (int)(min_share(c) * workers + 0.5);
    return n < 1 ? 1 : n;
}

/* Whether the minimisers are paced (a kernel on a GPU): the runs of the minimisers of a device
   take together at most the campaign's share of the wall time, each waiting after a run, and
   the workers do not give way to them. A kernel's runs in another process slow the runs of the
   processes sharing its GPU while they last (its context and the workers' take turns), so the
   share is one of time; a CPU kernel's minimisers take worker slots instead, a core each. */
int camp_min_paced(const struct campaign *c)
{
    return c->k->backend != GG_BACKEND_CPU;
}

/* The next signature to triage, on a device with a minimiser slot free: one whose class family
   has no bucket of this campaign's yet first (a new bug is more likely there), else the oldest;
   signatures filed meanwhile are skipped. */
static struct pending_min *next_min(struct campaign *c)
{
    struct pending_min *oldest = NULL;
    for (size_t i = 0; i < c->n_mins; i++) {
        struct pending_min *m = &c->mins[i];
        int g = min_device(c, m);
        if (m->done || camp_running_mins(c, g) >= min_slots(c, g))
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
   the first). Minimisers that may run: one, or while signatures wait for triage the campaign's
   share of each device's workers (min_slots; the fuzzing workers then give way, see
   may_dispatch in gg_campaign.c). */
int camp_running_mins(const struct campaign *c, int gpu)
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

/* The socket that ends a paced minimiser's waits, both ends above fd 0 (0 marks "none" in the
   slot and in gg_min_opts, and a campaign whose stdin is closed may be given fd 0). */
static int pace_socket(int pace[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pace) != 0)
        return -1;
    for (int i = 0; i < 2; i++)
        if (pace[i] == 0) {
            int moved = fcntl(0, F_DUPFD_CLOEXEC, 1);
            close(0);
            pace[i] = moved;
            if (moved < 0) {
                close(pace[1 - i]);
                pace[0] = pace[1] = 0;
                return -1;
            }
        }
    return 0;
}

static void start_one_min(struct campaign *c, struct min_slot *slot)
{
    struct pending_min *m = next_min(c);
    if (!m)
        return;
    double budget = c->cfg->minimize_s > 0 ? c->cfg->minimize_s : GG_CAMPAIGN_DEFAULT_MINIMIZE_S;
    /* Paced: its runs take the share of the device's time, within the campaign's time left. */
    double duty = camp_min_paced(c) && !c->unpaced ? min_share(c) : 0;
    if (c->budget > 0)
        budget = fmin(budget, (duty > 0 ? duty : 1) * (c->budget - camp_elapsed(c)));
    if (budget < MIN_MINIMIZE_S && c->budget > 0) {
        if (c->st->stop != GG_STOP_NONE) /* no time left for any of them */
            for (size_t i = 0; i < c->n_mins; i++)
                c->mins[i].done = 1;
        return;
    }
    m->done = 1;
    /* A socket, not a pipe: the byte that ends the waits may find the minimiser gone, and a
       write to a socket without a reader fails (gg_wire_write) where a pipe's raises SIGPIPE. */
    int pace[2] = {0, 0};
    if (duty > 0 && pace_socket(pace) != 0)
        duty = 0;
    int fd;
    pid_t pid = camp_fork_child(c, &fd);
    if (pid == 0) {
        if (pace[1] > 0)
            close(pace[1]);
        minimize_child(c, m, budget, duty, pace[0], fd);
    }
    if (pace[0] > 0)
        close(pace[0]);
    if (pid > 0) {
        *slot = (struct min_slot){.pid = (int)pid,
                                  .fd = fd,
                                  .pace_fd = pace[1],
                                  .started = gg_wire_now(),
                                  .budget = duty > 0 ? budget / duty : budget,
                                  .cur = *m};
        return;
    }
    if (pace[1] > 0)
        close(pace[1]);
    camp_log(c, "WARNING: cannot start a minimiser for %s: %s; it stays untriaged\n", m->sig,
             strerror(errno));
}

void camp_unpace_mins(struct campaign *c)
{
    c->unpaced = 1;
    for (int i = 0; i < c->n_ms; i++) {
        struct min_slot *slot = &c->ms[i];
        if (slot->pace_fd <= 0)
            continue;
        if (gg_wire_write(slot->pace_fd, "u", 1) != 0 && errno != EPIPE && errno != ECONNRESET)
            camp_log(c, "WARNING: a minimiser stays paced: %s\n", strerror(errno));
        close(slot->pace_fd);
        slot->pace_fd = 0;
    }
}

/* Starts minimisers in the free slots: the first always, the others while a backlog waits. */
void camp_start_min(struct campaign *c)
{
    for (int i = 0; i < c->n_ms; i++)
        if (!c->ms[i].pid && (camp_running_mins(c, -1) == 0 || backlog(c)))
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
    if (slot->pace_fd > 0)
        close(slot->pace_fd);
    slot->pid = slot->pace_fd = 0;
    c->st->minimize_s += gg_wire_now() - slot->started;
    const struct pending_min *m = &slot->cur;
    char progress[PATH_MAX_LEN];
    progress_path(c, m, progress, sizeof progress);
    unlink(progress);
    int ok = got && WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
    if (ok)
        c->st->minimized++;
    char paced[48] = "";
    if (got && ms->paced_s > 0)
        snprintf(paced, sizeof paced, " (%.1f s of it paced)", ms->paced_s);
    if (got)
        camp_log(c,
                 "#%lld MIN %s: normal form of groups %lld -> %lld, output elements %lld -> "
                 "%lld, %d runs in %.1f s%s%s%s%s\n",
                 (long long)c->st->execs, m->path, (long long)ms->groups_before,
                 (long long)ms->groups_after, (long long)ms->elems_before,
                 (long long)ms->elems_after, ms->attempts, ms->seconds, paced,
                 ms->stopped_at ? " (reached a filed signature)" : "",
                 ms->restarted_fresh ? " (started over in fresh processes: a case the worker "
                                       "process kept failed otherwise alone)"
                                     : "",
                 !ok && !ms->fixpoint && !ms->stopped_at
                     ? " (not finished within its budget: the signature stays untriaged)"
                 : !ok          ? " (minimiser failed)"
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
void camp_poll_min(struct campaign *c, int kill_it)
{
    for (int i = 0; i < c->n_ms; i++) {
        struct min_slot *slot = &c->ms[i];
        int wst = 0;
        /* its budget and one run past it (without a limit per case: its budget alone) */
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
void camp_resume_mins(struct campaign *c)
{
    DIR *d = opendir(c->artifacts);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        resume_min(c, e->d_name);
    closedir(d);
}

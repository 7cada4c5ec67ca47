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
 * (gg_campaign_faults.c), confirmation in a fresh process (gg_campaign_confirm.c), triage by
 * minimisers (gg_campaign_minimize.c) and the processes those two run in (gg_campaign_child.c);
 * campaign_int.h holds what they share.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

#define STOP_GRACE_S 1.0        /* in-flight cases may finish this long after a stop */

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
    double interval = c->cfg->stats_interval_s > 0 ? c->cfg->stats_interval_s
                                                  : GG_CAMPAIGN_DEFAULT_STATS_S;
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
                                                              : GG_CAMPAIGN_DEFAULT_STATUS_S);
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
   minimiser gives way to the workers of its own GPU only. Paced minimisers (a GPU kernel's,
   camp_min_paced) take a share of the GPU's time instead: the workers do not give way. */
static int may_dispatch(const struct campaign *c, const struct worker *w)
{
    if (camp_min_paced(c))
        return 1;
    int g = c->gpus ? w->gpu : -1;
    int busy = busy_workers(c, g), mins = camp_running_mins(c, g);
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
        camp_poll_min(c, 0);
        camp_start_min(c);
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
    camp_unpace_mins(c); /* no worker left to make room for */
    int abrupt = c->st->stop == GG_STOP_SIGNAL || c->st->stop == GG_STOP_FILE ||
                 c->st->stop == GG_STOP_ERROR;
    /* With the time spent, the confirmations at work end, and those still queued (a flood of
       new signatures can queue hundreds) are filed as found rather than run past the budget. */
    if (c->st->stop == GG_STOP_TIME)
        camp_file_queued_confirms(c, "the campaign's time was up first");
    for (;;) {
        int kill_now = abrupt || (c->cfg->stop_flag && *c->cfg->stop_flag);
        camp_poll_confirms(c, kill_now);
        if (!kill_now)
            camp_start_confirms(c);
        camp_poll_min(c, kill_now);
        if (!kill_now)
            camp_start_min(c);
        if (camp_running_mins(c, -1) == 0 && camp_running_confirms(c) == 0 && c->n_confirms == 0)
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
    /* 0 within the campaign: no limit (a case, a probe, a minimiser's or a confirmation's run) */
    c->timeout = cfg->timeout_s > 0 ? cfg->timeout_s
                 : cfg->timeout_s < 0 ? 0 : GG_CAMPAIGN_DEFAULT_TIMEOUT_S;
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
    gg_freedom_tally_init(&c->st->freedoms, c->caps);
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
    int devices = c->gpus ? c->gpus->n : 1, per_gpu = GG_CAMPAIGN_WORKERS_PER_GPU;
    if (cpus > 0 && (long)devices * per_gpu > cpus)
        per_gpu = cpus / devices > 0 ? (int)(cpus / devices) : 1;
    c->n_workers = cfg->workers > 0                          ? cfg->workers
                   : c->k->backend == GG_BACKEND_CPU && cpus > 0 ? (int)cpus
                                                            : devices * per_gpu;
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
    c->st->gpu_kernel = c->k->backend != GG_BACKEND_CPU;
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
                                                                : GG_CAMPAIGN_DEFAULT_STATUS_S);
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
    char timeout[32] = "none";
    if (c.timeout > 0)
        snprintf(timeout, sizeof timeout, "%gs", c.timeout);
    camp_log(&c, "INFO: kernel=%s mutant=%s strategy=%s workers=%d timeout=%s "
             "max_total_time=%gs runs=%lld artifacts=%s\n", c.k->name,
             c.mutant[0] ? c.mutant : "none", strategies[cfg->strategy == GG_STRATEGY_UNIFORM],
             c.n_workers, timeout, c.budget, (long long)cfg->max_runs, c.artifacts);
    if (c.gpus) {
        char list[GG_GPUS_MAX * 6];
        gg_gpus_format(c.gpus, list, sizeof list);
        camp_log(&c, "INFO: gpus=%s: each worker sees its GPU alone (%s)\n", list,
                 gg_device_visible_env());
    }
    camp_resume_mins(&c);
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

/*
 * gg_suite.c — the SNR suite and the release gate: runs each suite case on its kernel (or on each
 * kernel asked for) with the ordinary runner, compares the worst-group SNR with the threshold and,
 * given a baseline (read by the suite result's loader), with the SNR and kernel time stored
 * there. Each case becomes a record of the suite result (reports/gg_report.h), from which it
 * prints one line per case and a summary, counts the gate, and writes the result JSON, JUnit XML
 * and the HTML report through reports/. The gate fails when a case is below its threshold, a
 * structural oracle fires, the SNR dropped past the allowed margin, or (--perf) a kernel got
 * slower.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/suite/suite_int.h"
#include "fuzz/store/gg_store.h"
#include "fuzz/run/gg_run.h"

/* The perf rule of kernel teams: below PERF_FLOOR_US of baseline time a case is not judged;
   above it a case regresses iff t > PERF_RATIO·t_base + PERF_SLACK_US. */
#define PERF_FLOOR_US 4.0
#define PERF_RATIO 1.005
#define PERF_SLACK_US 0.5

struct suite {
    const struct gg_suite_opts *o;
    struct gg_suite_summary *sum;
    struct gg_rsuite res;       /* the result: a record per case, in the order they ran */
    struct gg_rsuite baseline;  /* the --baseline result (no cases without one) */
    int cpu_timed;     /* --perf timed a CPU kernel */
    int gpu_used;      /* a kernel of another backend ran */
    int nomem;         /* a record could not be kept */
    int64_t next_order;  /* a shard's: the place of the next record in the whole run (-1: not a
                            shard) */
    int64_t records;     /* a shard's: the records of the whole run */
    const struct gg_suite_plan *plan;
    gg_suite_claim *claim; /* a device runner's: where it claims the entries it runs (NULL: it
                              runs them all, or its shard's, in order) */
    const char *started;
    double t0;
    double last_status;  /* when the last progress line was printed (or the start) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "2 min" or "45 s" */
static void fmt_duration(double s, char *buf, size_t len)
{
    if (s >= 120)
        snprintf(buf, len, "%.0f min", s / 60);
    else
        snprintf(buf, len, "%.0f s", s);
}

/* After done of total entries: a progress line when the status interval has passed since the
   last one (with runners on several devices, one of them prints it, done counting the entries
   they have taken). */
static void status_line(struct suite *s, size_t done, size_t total)
{
    double interval = s->o->status_interval_s > 0 ? s->o->status_interval_s
                                                  : GG_SUITE_DEFAULT_STATUS_S;
    double now = now_s();
    if (s->claim ? !gg_suite_claim_status(s->claim, interval) : now - s->last_status < interval)
        return;
    s->last_status = now;
    char spent[32], left[32];
    double elapsed = now - s->t0;
    fmt_duration(elapsed, spent, sizeof spent);
    fmt_duration(done > 0 ? elapsed * (double)(total - done) / (double)done : 0, left,
                 sizeof left);
    fprintf(s->o->out, "suite: %zu/%zu cases, %s, about %s left\n", done, total, spent, left);
    fflush(s->o->out);
}

/* A dB value or time; a non-finite one (exact, or an empty group) is unset. */
static struct gg_rnum num(double v)
{
    return (struct gg_rnum){v, isfinite(v)};
}

/* Value of key in a "k=v k=v" metadata text, copied into buf ("" when absent). */
static const char *meta_value(const char *text, const char *key, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t kl = strlen(key);
    for (const char *p = text; p && *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *end = p + strcspn(p, " \t");
        if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t n = (size_t)(end - p) - kl - 1;
            snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p + kl + 1);
            return buf;
        }
        p = end;
    }
    return buf;
}

/* Rows of group g: its tokens for grouped ops, m for batched and dense. */
static int64_t group_rows(const struct gg_case *c, int64_t g)
{
    return c->lens && g < c->groups ? c->lens[g] : c->m;
}

/* ---- one case on one kernel ---------------------------------------------------------------- */

/* The text a case's record borrows until it is added to the result. */
struct case_text {
    char id[GG_CASE_ID_HEX + 1], shape[160], model[64], routing[64], phase[64], recipe[64];
    char reason[512];
};

/* The fields every case has, from the file and the @suite line; the rest unset. */
static void case_base(const char *path, const struct gg_case *c, const char *kernel,
                      const char *mutant, struct case_text *t, struct gg_rcase *rc)
{
    char ep[64];
    const char *sm = c ? gg_case_meta(c, "suite") : NULL;
    t->id[0] = t->shape[0] = t->reason[0] = '\0';
    if (c) {
        gg_case_id(c, t->id);
        gg_case_shape(c, t->shape, sizeof t->shape);
    }
    meta_value(sm, "ep", ep, sizeof ep);
    *rc = (struct gg_rcase){
        .id = t->id, .file = path, .kernel = kernel ? kernel : "", .mutant = mutant ? mutant : "",
        .model = meta_value(sm, "model", t->model, sizeof t->model),
        .ep = ep[0] ? strtoll(ep, NULL, 10) : -1,
        .routing = meta_value(sm, "routing", t->routing, sizeof t->routing),
        .phase = meta_value(sm, "phase", t->phase, sizeof t->phase),
        .op = c ? gg_op_name(c->op) : "",
        .recipe = meta_value(sm, "recipe", t->recipe, sizeof t->recipe),
        .shape = t->shape, .cls = "", .worst_group = -1, .signature = "", .detail = "",
        .verdict = "", .reason = t->reason};
}

/* Every group: rows, outputs and SNR (unset when empty or exact). *groups is the caller's to
   free; NULL and 0 when out of memory. */
static size_t case_groups(const struct gg_case *c, const struct gg_compare *cmp,
                          struct gg_rgroup **groups)
{
    size_t n = cmp->n_groups > 0 ? (size_t)cmp->n_groups : 0;
    *groups = n ? calloc(n, sizeof **groups) : NULL;
    if (*groups == NULL)
        return 0;
    for (size_t g = 0; g < n; g++) {
        const struct gg_group_metrics *gm = &cmp->groups[g];
        (*groups)[g] = (struct gg_rgroup){
            (int64_t)g, group_rows(c, (int64_t)g), gm->elems, num(gm->snr_db),
            gm->elems > 0 && isinf(gm->snr_db) && gm->snr_db > 0};
    }
    return n;
}

/* Fills the metrics of a run that gave a verdict, and the baseline comparison. */
static void case_metrics(struct suite *s, struct gg_rcase *rc, struct case_text *t,
                         const struct gg_case *c, const struct gg_run_result *r)
{
    const struct gg_verdict *v = &r->verdict;
    int pass = v->cls == GG_CLASS_PASS;
    rc->cls = gg_class_name(v->cls);
    rc->threshold_db = num(v->snr_fail_db);
    rc->worst_group = v->worst_group >= 0 ? v->worst_group : -1;
    rc->worst_group_snr_db = num(v->worst_snr_db);
    if (r->compared) {
        rc->pooled_snr_db = num(r->cmp.snr_db);
        rc->src_snr_db = num(r->cmp.src_snr_db);
        rc->ref_src_snr_db = num(r->cmp.ref_src_snr_db);
        rc->n_groups = case_groups(c, &r->cmp, &rc->groups);
        s->nomem |= rc->n_groups == 0 && r->cmp.n_groups > 0;
    }
    rc->margin_db = num(v->worst_snr_db - v->snr_fail_db);
    rc->max_ratio = num(v->max_ratio);
    rc->signature = pass ? "" : v->signature;
    rc->detail = pass ? "" : v->detail;
    rc->advisory = v->advisory;
    /* Baseline: a drop is judged between two finite worst-group SNRs. */
    const struct gg_rcase *b = gg_suite_result_find(&s->baseline, rc->id, r->kernel);
    if (s->o->baseline_path)
        rc->baseline_record = b ? "found" : "missing";
    if (b) {
        rc->baseline_snr_db = b->worst_group_snr_db;
        rc->baseline_time_us = b->time_us;
    }
    double drop = b && b->worst_group_snr_db.set && isfinite(v->worst_snr_db)
                      ? b->worst_group_snr_db.v - v->worst_snr_db : NAN;
    rc->snr_drop_db = num(drop);
    rc->verdict = "pass";
    if (!pass) {
        rc->verdict = "fail";
        snprintf(t->reason, sizeof t->reason, "%s", v->detail);
    } else if (isfinite(drop) && drop > s->o->snr_drop_db) {
        rc->verdict = "regressed";
        snprintf(t->reason, sizeof t->reason,
                 "worst-group SNR dropped %.2f dB against the baseline (%.2f -> %.2f dB), more "
                 "than %.2f dB", drop, b->worst_group_snr_db.v, v->worst_snr_db,
                 s->o->snr_drop_db);
    }
}

/* A case without a verdict: skipped (the kernel does not support the case, or has no such
   mutant) or error (it could not run). */
static void case_no_verdict(struct gg_rcase *rc, struct case_text *t, int skipped,
                            const char *why)
{
    rc->verdict = skipped ? "skipped" : "error";
    snprintf(t->reason, sizeof t->reason, "%s", why);
}

/* Prints a case's line with one write, so that the lines of runners on several devices do not
   interleave. */
static void print_case(FILE *out, const struct gg_rcase *rc)
{
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    if (m) {
        gg_suite_print_case(m, rc);
        fclose(m);
    }
    fflush(out);
    int fd = fileno(out);
    size_t done = 0;
    while (line && fd >= 0 && done < len) {
        ssize_t n = write(fd, line + done, len - done);
        if (n <= 0 && errno != EINTR)
            break;
        done += n > 0 ? (size_t)n : 0;
    }
    if (line && fd < 0)
        fputs(line, out);
    if (!line)
        gg_suite_print_case(out, rc);
    fflush(out);
    free(line);
}

/* Keeps the record rc (its strings are copied) and prints it. */
static void keep(struct suite *s, const struct gg_rcase *rc)
{
    struct gg_rcase placed = *rc;
    placed.order = s->next_order;
    if (s->next_order >= 0)
        s->next_order++;
    if (gg_suite_result_add(&s->res, &placed) != GG_OK) {
        s->nomem = 1;
        return;
    }
    print_case(s->o->out, &s->res.cases[s->res.n_cases - 1]);
}

/* Runs case c (from path) on kernel (NULL: its own) and keeps its record. */
static void run_on(struct suite *s, const char *path, const struct gg_case *c, const char *kernel)
{
    const struct gg_suite_opts *o = s->o;
    const char *kname = kernel ? kernel : c->kernel;
    const char *mutant = o->mutant && strcmp(o->mutant, "none") ? o->mutant : c->mutant;
    struct case_text t;
    struct gg_rcase rc;
    case_base(path, c, kname, mutant, &t, &rc);
    const struct gg_kernel *k = gg_registry_find(kname);
    char err[1024] = "";
    struct gg_run_result r;
    memset(&r, 0, sizeof r);
    if (k && mutant[0] && !gg_mutant_list_check(mutant, k->mutants, kname, err, sizeof err)) {
        case_no_verdict(&rc, &t, 1, err);
    } else {
        struct gg_run_opts ro = {.max_mem_bytes = o->max_mem_bytes,
                                 .reference = o->reference,
                                 .kernel = kernel,
                                 .mutant = o->mutant};
        enum gg_status st = o->no_fork ? gg_run_case(c, &ro, &r, err, sizeof err)
                                       : gg_run_case_isolated(c, &ro, o->timeout_s, &r, err,
                                                              sizeof err);
        if (k && k->backend != GG_BACKEND_CPU)
            s->gpu_used = 1;
        if (st == GG_OK) {
            case_metrics(s, &rc, &t, c, &r);
            rc.setup_s = num(r.phase.setup);
            rc.inputs_s = num(r.phase.alloc + r.phase.inputs); /* device buffers included */
            rc.runs_s = num(r.phase.runs);
            rc.reference_s = num(r.phase.reference);
            rc.compare_s = num(r.phase.compare);
        } else
            case_no_verdict(&rc, &t, st == GG_E_UNSUPPORTED, err);
    }
    rc.seconds = num(r.total_seconds);
    keep(s, &rc);
    free(rc.groups);
    gg_run_result_free(&r);
}

/* A path whose cases could not be run (it or a directory below it cannot be read, or the case
   file is malformed): an error entry with the message. */
static void path_error(struct suite *s, const char *path, const char *err)
{
    struct case_text t;
    struct gg_rcase rc;
    case_base(path, NULL, NULL, NULL, &t, &rc);
    case_no_verdict(&rc, &t, 0, err);
    rc.seconds = num(0);
    keep(s, &rc);
}

/* Records of entry e: one per kernel asked for, or one. */
static int64_t records_of(const struct gg_suite_opts *o, const struct gg_suite_entry *e)
{
    return e->loaded && o->n_kernels > 0 ? o->n_kernels : 1;
}

/* Runs the plan's entries of this shard (all of them when not sharded; a device runner those
   it claims) on each kernel asked for; the records of a shard or of a device runner carry their
   place in the whole run. Returns the records of the whole run. */
static int64_t run_plan(struct suite *s, const struct gg_suite_plan *p)
{
    const struct gg_suite_opts *o = s->o;
    int sharded = o->shard_count > 1;
    int64_t order = 0;
    size_t next = 0, done = 0, total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += !sharded || p->e[i].shard == o->shard_index;
    for (;;) {
        /* A device runner claims its next entry only when it is ready to run it, so a slow case
           holds back no other. */
        size_t i = s->claim ? gg_suite_claim_next(s->claim) : next++;
        if (i >= p->n)
            break;
        for (; next < i; next++) /* the place of entry i: the records of those before it */
            order += records_of(o, &p->e[next]);
        next = i + 1;
        const struct gg_suite_entry *e = &p->e[i];
        s->next_order = sharded || s->claim ? order : -1;
        order += records_of(o, e);
        if (sharded && e->shard != o->shard_index)
            continue;
        if (!e->loaded)
            path_error(s, e->path, e->error);
        if (e->loaded && o->n_kernels == 0)
            run_on(s, e->path, &e->c, NULL);
        for (int j = 0; e->loaded && j < o->n_kernels; j++)
            run_on(s, e->path, &e->c, o->kernels[j]);
        done = s->claim ? i + 1 : done + 1;
        status_line(s, done, total);
    }
    for (; next < p->n; next++)
        order += records_of(o, &p->e[next]);
    return order;
}

/* ---- performance --------------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/*
 * Times the cases that passed: after a warm-up run, o->perf_runs runs of the case in this
 * process (so a GPU context and its modules stay loaded; no case is forked after this point),
 * the median of the kernel's wall time per run. Then the rule against the baseline time.
 */
static void perf_pass(struct suite *s)
{
    const struct gg_suite_opts *o = s->o;
    int runs = o->perf_runs > 0 ? o->perf_runs : 5;
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return;
    for (size_t i = 0; i < s->res.n_cases; i++) {
        struct gg_rcase *rc = &s->res.cases[i];
        if (strcmp(rc->cls, "pass"))
            continue;
        struct gg_case c;
        char err[1024];
        if (gg_case_load(rc->file, &c, err, sizeof err))
            continue;
        const char *kname = rc->kernel;
        const struct gg_kernel *k = gg_registry_find(kname);
        struct gg_run_opts ro = {.max_mem_bytes = o->max_mem_bytes,
                                 .reference = o->reference,
                                 .kernel = kname,
                                 .mutant = o->mutant};
        int got = 0;
        for (int r = -1; r < runs; r++) {
            struct gg_run_result res;
            if (gg_run_case(&c, &ro, &res, err, sizeof err) != GG_OK)
                break;
            if (r >= 0)
                t[got++] = res.kernel_seconds * 1e6;
            gg_run_result_free(&res);
        }
        gg_case_free(&c);
        if (got < runs)
            continue;
        if (k && k->backend == GG_BACKEND_CPU)
            s->cpu_timed = 1;
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        double med = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
        rc->time_us = num(med);
        double base = rc->baseline_time_us.set ? rc->baseline_time_us.v : NAN;
        int slow = isfinite(base) && base >= PERF_FLOOR_US && med > PERF_RATIO * base + PERF_SLACK_US;
        rc->perf_regressed = slow;
        char line[160];
        snprintf(line, sizeof line, "perf   %s  %.1f us", kname, med);
        fprintf(o->out, "%s", line);
        if (isfinite(base))
            fprintf(o->out, " vs baseline %.1f us%s", base,
                    base < PERF_FLOOR_US ? " (under 4 us: not judged)" : slow ? ": SLOWER" : "");
        fprintf(o->out, "  %s\n", rc->label);
        if (slow) {
            char reason[512];
            snprintf(reason, sizeof reason, "%s%skernel time %.1f us > 1.005 x %.1f + 0.5 us",
                     rc->reason, rc->reason[0] ? "; " : "", med, base);
            if (gg_suite_result_set(&rc->reason, reason) != GG_OK ||
                (!strcmp(rc->verdict, "pass") &&
                 gg_suite_result_set(&rc->verdict, "regressed") != GG_OK))
                s->nomem = 1;
        }
    }
    free(t);
}

/* ---- results ------------------------------------------------------------------------------- */

/* "model name" of /proc/cpuinfo, or "". */
static void cpu_name(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && !strncmp(line, "model name", 10)) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, len, "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
}

/* The NVIDIA driver's name of the first GPU ("unknown" without one) when a GPU kernel ran; ""
   (null) otherwise. */
static void gpu_name(const struct suite *s, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!s->gpu_used)
        return;
    char line[512];
    FILE *p = popen("cat /proc/driver/nvidia/gpus/*/information 2>/dev/null", "r");
    while (p && !buf[0] && fgets(line, sizeof line, p)) {
        if (!strncmp(line, "Model:", 6)) {
            char *v = line + 6 + strspn(line + 6, " \t");
            v[strcspn(v, "\n")] = '\0';
            snprintf(buf, len, "%s", v);
        }
    }
    if (p)
        pclose(p);
    if (!buf[0])
        snprintf(buf, len, "unknown");
}

/* The result's header: the run, its host and the gate. */
static void set_header(struct suite *s, const char *started, double seconds)
{
    const struct gg_suite_opts *o = s->o;
    char host[256] = "", cpu[256], gpu[256], reasons[GG_N_REASONS][128];
    const char *reason_ptrs[GG_N_REASONS];
    gethostname(host, sizeof host - 1);
    cpu_name(cpu, sizeof cpu);
    gpu_name(s, gpu, sizeof gpu);
    size_t n_reasons = gg_suite_reasons(&s->res, o->snr_drop_db, reasons);
    for (size_t i = 0; i < n_reasons; i++)
        reason_ptrs[i] = reasons[i];
    struct gg_rsuite h = {
        .tier = o->tier ? o->tier : "custom", .thresholds_version = GG_THRESHOLDS_VERSION,
        .ggfuzz_version = GG_VERSION, .started = started, .seconds = {seconds, 1},
        .hostname = host, .cpu = cpu, .gpu = gpu,
        .kernels = o->kernels, .n_kernels = (size_t)o->n_kernels,
        .plugins = (const char *const *)o->plugins, .n_plugins = (size_t)o->n_plugins,
        .mutant = o->mutant ? o->mutant : "",
        .gate_verdict = s->sum->gate_failed ? "fail" : "pass",
        .baseline = o->baseline_path ? o->baseline_path : "",
        .gate_snr_drop_db = {o->snr_drop_db, 1}, .perf = o->perf,
        .reasons = reason_ptrs, .n_reasons = n_reasons,
        .shard_index = o->shard_count > 1 ? o->shard_index : -1,
        .shard_count = o->shard_count > 1 ? o->shard_count : -1,
        .shard_records = o->shard_count > 1 ? s->records : -1};
    if (gg_suite_result_set_header(&s->res, &h) != GG_OK)
        s->nomem = 1;
}

/* ---- a run spread over devices ------------------------------------------------------------ */

/* A device runner (gg_suite_devices.c): the entries it claims, then its records saved to path
   with a header, as a shard's are. */
static int device_runner(void *ctx, gg_suite_claim *claim, const char *path)
{
    struct suite *s = ctx;
    char err[1024];
    s->claim = claim;
    s->records = run_plan(s, s->plan);
    gg_suite_count(&s->res, s->sum);
    set_header(s, s->started, now_s() - s->t0);
    if (s->nomem || gg_suite_result_save(&s->res, path, err, sizeof err) != GG_OK)
        return 1;
    return 0;
}

static int by_order(const void *x, const void *y)
{
    const struct gg_rcase *a = *(const struct gg_rcase *const *)x;
    const struct gg_rcase *b = *(const struct gg_rcase *const *)y;
    return (a->order > b->order) - (a->order < b->order);
}

/* Runs the plan with `runners` runner processes (on the devices of --gpus in turn), which share
   a memory ledger, and puts their records into s->res in the order of one process (their
   places, kept only by a shard). */
static enum gg_status run_on_runners(struct suite *s, int runners, char *err, size_t err_len)
{
    const struct gg_gpus *g = s->o->gpus;
    struct gg_rsuite r[GG_GPUS_MAX];
    memset(r, 0, sizeof r);
    enum gg_status st = gg_ledger_open(runners, s->o->max_mem_bytes, err, err_len);
    if (st != GG_OK)
        return st;
    st = gg_suite_on_runners(g, runners, device_runner, s, r, err, err_len);
    gg_ledger_close();
    size_t n = 0;
    for (int k = 0; k < runners; k++)
        n += r[k].n_cases;
    const struct gg_rcase **all = calloc(n ? n : 1, sizeof *all);
    if (st == GG_OK && !all) {
        snprintf(err, err_len, "out of memory");
        st = GG_E_NOMEM;
    }
    n = 0;
    for (int k = 0; st == GG_OK && k < runners; k++) {
        for (size_t i = 0; i < r[k].n_cases; i++)
            all[n++] = &r[k].cases[i];
        s->gpu_used |= r[k].gpu && r[k].gpu[0];
        s->records = r[k].shard_records;
    }
    if (st == GG_OK)
        qsort(all, n, sizeof *all, by_order);
    for (size_t i = 0; st == GG_OK && i < n; i++) {
        struct gg_rcase rc = *all[i];
        if (i > 0 && rc.order == all[i - 1]->order) {
            snprintf(err, err_len, "two runners ran record %lld", (long long)rc.order);
            st = GG_E_INTERNAL;
        }
        if (s->o->shard_count <= 1)
            rc.order = -1;
        if (st == GG_OK && gg_suite_result_add(&s->res, &rc) != GG_OK)
            s->nomem = 1;
    }
    free(all);
    for (int k = 0; k < runners; k++)
        gg_suite_result_free(&r[k]);
    return st;
}

/* Records of a baseline ordered by case id and kernel, then by place. */
static int by_case_kernel(const void *x, const void *y)
{
    const struct gg_rcase *a = *(const struct gg_rcase *const *)x;
    const struct gg_rcase *b = *(const struct gg_rcase *const *)y;
    int c = strcmp(a->id, b->id);
    c = c ? c : strcmp(a->kernel, b->kernel);
    return c ? c : (a > b) - (a < b);
}

/* Refuses a baseline (loaded from path) holding two records of one case on one kernel: which of
   them would judge the case is arbitrary. GG_E_PARSE with why naming both, or GG_E_NOMEM. */
static enum gg_status baseline_unique(const struct gg_rsuite *b, const char *path, char *why,
                                      size_t why_len)
{
    const struct gg_rcase **by = malloc((b->n_cases ? b->n_cases : 1) * sizeof *by);
    if (!by) {
        snprintf(why, why_len, "%s: out of memory", path);
        return GG_E_NOMEM;
    }
    for (size_t i = 0; i < b->n_cases; i++)
        by[i] = &b->cases[i];
    qsort(by, b->n_cases, sizeof *by, by_case_kernel);
    enum gg_status st = GG_OK;
    for (size_t i = 1; st == GG_OK && i < b->n_cases; i++)
        if (!strcmp(by[i]->id, by[i - 1]->id) && !strcmp(by[i]->kernel, by[i - 1]->kernel)) {
            snprintf(why, why_len, "%s: cases[%zu] records case %s on kernel %s again (first at "
                     "cases[%zu]): a baseline holds one record of each case and kernel",
                     path, (size_t)(by[i] - b->cases), by[i]->id, by[i]->kernel,
                     (size_t)(by[i - 1] - b->cases));
            st = GG_E_PARSE;
        }
    free(by);
    return st;
}

enum gg_status gg_suite_run(const struct gg_suite_opts *o, struct gg_suite_summary *sum,
                            char *err, size_t err_len)
{
    memset(sum, 0, sizeof *sum);
    struct suite s = {.o = o, .sum = sum};
    if (o->baseline_path) {
        char why[1024];
        enum gg_status st = gg_suite_result_load(o->baseline_path, &s.baseline, why, sizeof why);
        if (st == GG_OK)
            st = baseline_unique(&s.baseline, o->baseline_path, why, sizeof why);
        if (st != GG_OK) {
            snprintf(err, err_len, "--baseline: %s", why);
            gg_suite_result_free(&s.baseline);
            return st;
        }
    }
    gg_registry_init();
    char started[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    double t0 = now_s();
    struct gg_suite_plan plan;
    if (gg_suite_plan_build(o->paths, o->n_paths, o->shard_count, &plan, err, err_len) != GG_OK) {
        gg_suite_result_free(&s.baseline);
        return GG_E_NOMEM;
    }
    s.plan = &plan;
    s.started = started;
    s.t0 = s.last_status = t0;
    int devices = o->gpus ? o->gpus->n : 0;
    int runners = o->workers > 0 ? o->workers : devices;
    if (runners <= 1 && devices >= 1)
        gg_gpus_bind(o->gpus->id[0]);
    if (runners > 1) {
        enum gg_status st = run_on_runners(&s, runners, err, err_len);
        if (st != GG_OK) {
            gg_suite_plan_free(&plan);
            gg_suite_result_free(&s.res);
            gg_suite_result_free(&s.baseline);
            return st;
        }
        if (devices >= 1)
            gg_gpus_bind(o->gpus->id[0]); /* --perf times there */
    } else {
        s.records = run_plan(&s, &plan);
    }
    gg_suite_plan_free(&plan);
    if (o->perf)
        perf_pass(&s);
    gg_suite_count(&s.res, sum);
    double seconds = now_s() - t0;
    set_header(&s, started, seconds);
    gg_suite_print_summary(o->out, &s.res, sum, seconds, s.cpu_timed);
    enum gg_status st = GG_OK;
    if (s.nomem) {
        snprintf(err, err_len, "out of memory keeping the suite's results");
        st = GG_E_NOMEM;
    } else {
        gg_suite_write_outputs(o, &s.res, sum);
        if (sum->cases == 0 && o->shard_count <= 1) {
            snprintf(err, err_len, "no case found");
            st = GG_E_IO;
        }
    }
    gg_suite_result_free(&s.res);
    gg_suite_result_free(&s.baseline);
    return st;
}

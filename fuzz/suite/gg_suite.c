/*
 * gg_suite.c — the SNR suite and the release gate: runs each suite case on its kernel (or on each
 * kernel asked for) with the ordinary runner, compares the worst-group SNR with the threshold and,
 * given a baseline, with the SNR and kernel time stored there, then prints one line per case and
 * a summary and writes the suite result JSON (the contract `ggfuzz report` and --baseline read),
 * JUnit XML and the HTML report. The gate fails when a case is below its threshold, a structural
 * oracle fires, the SNR dropped past the allowed margin, or (--perf) a kernel got slower.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz/suite/gg_suite.h"
#include "reports/gg_report.h"
#include "fuzz/store/gg_store.h"

/* The perf rule of kernel teams: below PERF_FLOOR_US of baseline time a case is not judged;
   above it a case regresses iff t > PERF_RATIO·t_base + PERF_SLACK_US. */
#define PERF_FLOOR_US 4.0
#define PERF_RATIO 1.005
#define PERF_SLACK_US 0.5

/* Gate reasons, counted while the cases run. */
enum reason { R_BELOW, R_STRUCTURAL, R_DROPPED, R_SLOWER, R_ERRORS, N_REASONS };

struct suite {
    const struct gg_suite_opts *o;
    struct gg_suite_summary *sum;
    json_t *cases;     /* the "cases" array of the result */
    json_t *baseline;  /* the baseline's "cases" array, or NULL */
    int reasons[N_REASONS];
    int cpu_timed;     /* --perf timed a CPU kernel */
    int gpu_used;      /* a kernel of another backend ran */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* JSON has no infinities: a non-finite dB value (exact, or an empty group) is null. */
static json_t *db_json(double db)
{
    return isfinite(db) ? json_real(db) : json_null();
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

/* The case's name: its file name without directory and ".case". */
static void case_name(const char *path, char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".case"))
        n -= 5;
    snprintf(buf, len, "%.*s", (int)n, base);
}

/* Rows of group g: its tokens for grouped ops, m for batched and dense. */
static int64_t group_rows(const struct gg_case *c, int64_t g)
{
    return c->lens && g < c->groups ? c->lens[g] : c->m;
}

/* ---- one case on one kernel ---------------------------------------------------------------- */

/* The fields every case object has, from the file and the @suite line. */
static json_t *case_base(const char *path, const struct gg_case *c, const char *kernel,
                         const char *mutant)
{
    char id[GG_CASE_ID_HEX + 1] = "", shape[160] = "", v[64];
    const char *sm = c ? gg_case_meta(c, "suite") : NULL;
    if (c) {
        gg_case_id(c, id);
        gg_report_shape(c, shape, sizeof shape);
    }
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "file", json_string(path));
    json_object_set_new(o, "kernel", json_string(kernel ? kernel : ""));
    json_object_set_new(o, "mutant", json_string(mutant ? mutant : ""));
    json_object_set_new(o, "model", json_string(meta_value(sm, "model", v, sizeof v)));
    const char *ep = meta_value(sm, "ep", v, sizeof v);
    json_object_set_new(o, "ep", ep[0] ? json_integer(strtoll(ep, NULL, 10)) : json_null());
    static const char *const keys[] = {"routing", "phase"};
    for (int i = 0; i < 2; i++)
        json_object_set_new(o, keys[i], json_string(meta_value(sm, keys[i], v, sizeof v)));
    json_object_set_new(o, "op", json_string(c ? gg_op_name(c->op) : ""));
    json_object_set_new(o, "recipe", json_string(meta_value(sm, "recipe", v, sizeof v)));
    json_object_set_new(o, "shape", json_string(shape));
    return o;
}

/* The per-group array: every group, rows and SNR (null when empty or exact). */
static json_t *groups_json(const struct gg_case *c, const struct gg_compare *cmp)
{
    json_t *a = json_array();
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        const struct gg_group_metrics *gm = &cmp->groups[g];
        json_array_append_new(
            a, json_pack("{s:I, s:I, s:I, s:o, s:b}", "g", (json_int_t)g, "rows",
                         (json_int_t)group_rows(c, g), "outputs", (json_int_t)gm->elems, "snr_db",
                         db_json(gm->snr_db), "exact", gm->elems > 0 && isinf(gm->snr_db) &&
                                                           gm->snr_db > 0));
    }
    return a;
}

/* Fills the metrics of a run that gave a verdict, and the baseline comparison. */
static void case_metrics(struct suite *s, json_t *o, const struct gg_case *c,
                         const struct gg_run_result *r)
{
    const struct gg_verdict *v = &r->verdict;
    int pass = v->cls == GG_CLASS_PASS;
    json_object_set_new(o, "class", json_string(gg_class_name(v->cls)));
    json_object_set_new(o, "threshold_db", json_real(v->snr_fail_db));
    json_object_set_new(o, "worst_group", v->worst_group >= 0 ? json_integer(v->worst_group)
                                                              : json_null());
    json_object_set_new(o, "worst_group_snr_db", db_json(v->worst_snr_db));
    json_object_set_new(o, "pooled_snr_db", r->compared ? db_json(r->cmp.snr_db) : json_null());
    json_object_set_new(o, "src_snr_db", r->compared ? db_json(r->cmp.src_snr_db) : json_null());
    json_object_set_new(o, "margin_db", db_json(v->worst_snr_db - v->snr_fail_db));
    json_object_set_new(o, "max_ratio", json_real(v->max_ratio));
    json_object_set_new(o, "signature", json_string(pass ? "" : v->signature));
    json_object_set_new(o, "detail", json_string(pass ? "" : v->detail));
    json_object_set_new(o, "groups", r->compared ? groups_json(c, &r->cmp) : json_array());
    json_object_set_new(o, "seconds", json_real(r->total_seconds));
    /* Baseline: a drop is judged between two finite worst-group SNRs. */
    json_t *b = s->baseline ? gg_report_suite_find(s->baseline,
                                                   json_string_value(json_object_get(o, "id")),
                                                   r->kernel) : NULL;
    json_t *bsnr = b ? json_object_get(b, "worst_group_snr_db") : NULL;
    json_t *btime = b ? json_object_get(b, "time_us") : NULL;
    json_object_set_new(o, "baseline_snr_db", json_is_number(bsnr) ? json_real(json_number_value(bsnr))
                                                                   : json_null());
    json_object_set_new(o, "baseline_time_us", json_is_number(btime)
                                                   ? json_real(json_number_value(btime))
                                                   : json_null());
    double drop = json_is_number(bsnr) && isfinite(v->worst_snr_db)
                      ? json_number_value(bsnr) - v->worst_snr_db : NAN;
    json_object_set_new(o, "snr_drop_db", isfinite(drop) ? json_real(drop) : json_null());
    const char *verdict = "pass";
    char reason[512] = "";
    if (!pass) {
        verdict = "fail";
        snprintf(reason, sizeof reason, "%s", v->detail);
        s->reasons[v->cls == GG_CLASS_SNR ? R_BELOW : R_STRUCTURAL]++;
    } else if (isfinite(drop) && drop > s->o->snr_drop_db) {
        verdict = "regressed";
        snprintf(reason, sizeof reason,
                 "worst-group SNR dropped %.2f dB against the baseline (%.2f -> %.2f dB), more "
                 "than %.2f dB", drop, json_number_value(bsnr), v->worst_snr_db, s->o->snr_drop_db);
        s->reasons[R_DROPPED]++;
    }
    json_object_set_new(o, "verdict", json_string(verdict));
    json_object_set_new(o, "reason", json_string(reason));
}

/* The case object of a run without a verdict: skipped (the kernel does not support the case, or
   has no such mutant) or error (it could not run). */
static void case_no_verdict(struct suite *s, json_t *o, int skipped, const char *why)
{
    json_object_set_new(o, "verdict", json_string(skipped ? "skipped" : "error"));
    json_object_set_new(o, "class", json_null());
    json_object_set_new(o, "reason", json_string(why));
    static const char *const nulls[] = {"threshold_db", "worst_group", "worst_group_snr_db",
                                        "pooled_snr_db", "src_snr_db", "margin_db",
                                        "baseline_snr_db", "snr_drop_db", "baseline_time_us"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        json_object_set_new(o, nulls[i], json_null());
    json_object_set_new(o, "groups", json_array());
    json_object_set_new(o, "signature", json_string(""));
    if (!skipped)
        s->reasons[R_ERRORS]++;
}

static void fmt_db(const json_t *v, char *buf, size_t len)
{
    if (json_is_number(v))
        snprintf(buf, len, "%.1f dB", json_number_value(v));
    else
        snprintf(buf, len, "exact");
}

/* One line per case: verdict, kernel, model and deployment, shape and dtypes, recipe, worst
   group SNR against the threshold; failures add the signature and what fired. */
static void print_case(FILE *f, const json_t *o)
{
    const char *verdict = json_string_value(json_object_get(o, "verdict"));
    static const char *const tags[][2] = {{"pass", "PASS"}, {"fail", "FAIL"},
                                          {"regressed", "REGR"}, {"skipped", "SKIP"},
                                          {"error", "ERROR"}};
    const char *tag = "?";
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (!strcmp(verdict, tags[i][0]))
            tag = tags[i][1];
    char name[256], where[160] = "";
    case_name(json_string_value(json_object_get(o, "file")), name, sizeof name);
    const char *model = json_string_value(json_object_get(o, "model"));
    if (model[0])
        snprintf(where, sizeof where, "%s ep%lld %s %s  ", model,
                 (long long)json_integer_value(json_object_get(o, "ep")),
                 json_string_value(json_object_get(o, "routing")),
                 json_string_value(json_object_get(o, "phase")));
    const char *mutant = json_string_value(json_object_get(o, "mutant"));
    fprintf(f, "%-6s %s%s%s  %s%s [%s]", tag, json_string_value(json_object_get(o, "kernel")),
            mutant[0] ? "+" : "", mutant, where, json_string_value(json_object_get(o, "shape")),
            json_string_value(json_object_get(o, "recipe")));
    if (json_is_null(json_object_get(o, "class"))) {
        fprintf(f, "  %s\n       %s\n", name, json_string_value(json_object_get(o, "reason")));
        return;
    }
    char worst[32], thr[32], pooled[32];
    fmt_db(json_object_get(o, "worst_group_snr_db"), worst, sizeof worst);
    fmt_db(json_object_get(o, "threshold_db"), thr, sizeof thr);
    fmt_db(json_object_get(o, "pooled_snr_db"), pooled, sizeof pooled);
    json_t *wg = json_object_get(o, "worst_group");
    fprintf(f, "  worst group");
    if (json_is_integer(wg))
        fprintf(f, " g%lld", (long long)json_integer_value(wg));
    fprintf(f, " %s vs %s", worst, thr);
    json_t *margin = json_object_get(o, "margin_db");
    if (json_is_number(margin))
        fprintf(f, " (%+.1f)", json_number_value(margin));
    fprintf(f, ", pooled %s  [%.2f s]  %s\n", pooled,
            json_number_value(json_object_get(o, "seconds")), name);
    if (!strcmp(verdict, "fail"))
        fprintf(f, "       signature %s\n       %s\n",
                json_string_value(json_object_get(o, "signature")),
                json_string_value(json_object_get(o, "detail")));
    else if (!strcmp(verdict, "regressed"))
        fprintf(f, "       %s\n", json_string_value(json_object_get(o, "reason")));
}

/* Runs case c (from path) on kernel (NULL: its own) and appends its object. */
static void run_on(struct suite *s, const char *path, const struct gg_case *c, const char *kernel)
{
    const struct gg_suite_opts *o = s->o;
    const char *kname = kernel ? kernel : c->kernel;
    const char *mutant = o->mutant && strcmp(o->mutant, "none") ? o->mutant : c->mutant;
    json_t *obj = case_base(path, c, kname, mutant);
    const struct gg_kernel *k = gg_registry_find(kname);
    char err[1024] = "";
    struct gg_run_result r;
    memset(&r, 0, sizeof r);
    if (k && mutant[0] && !gg_mutant_list_check(mutant, k->mutants, kname, err, sizeof err)) {
        case_no_verdict(s, obj, 1, err);
    } else {
        struct gg_run_opts ro = {.max_mem_bytes = o->max_mem_bytes, .kernel = kernel,
                                 .mutant = o->mutant};
        enum gg_status st = o->no_fork ? gg_run_case(c, &ro, &r, err, sizeof err)
                                       : gg_run_case_isolated(c, &ro, o->timeout_s, &r, err,
                                                              sizeof err);
        if (k && k->backend != GG_BACKEND_CPU)
            s->gpu_used = 1;
        if (st == GG_OK)
            case_metrics(s, obj, c, &r);
        else
            case_no_verdict(s, obj, st == GG_E_UNSUPPORTED, err);
    }
    if (!json_object_get(obj, "seconds"))
        json_object_set_new(obj, "seconds", json_real(r.total_seconds));
    json_object_set_new(obj, "time_us", json_null());
    json_object_set_new(obj, "perf_regressed", json_false());
    gg_run_result_free(&r);
    print_case(o->out, obj);
    fflush(o->out);
    json_array_append_new(s->cases, obj);
}

/* A path whose cases could not be run (it or a directory below it cannot be read, or the case
   file is malformed): an error entry with the message. */
static void path_error(struct suite *s, const char *path, const char *err)
{
    json_t *obj = case_base(path, NULL, NULL, NULL);
    case_no_verdict(s, obj, 0, err);
    json_object_set_new(obj, "seconds", json_real(0));
    json_object_set_new(obj, "time_us", json_null());
    json_object_set_new(obj, "perf_regressed", json_false());
    print_case(s->o->out, obj);
    json_array_append_new(s->cases, obj);
}

/* Runs every case of path on each kernel asked for. A file or a directory below path that
   cannot be read is an error. */
static void run_path(struct suite *s, const char *path)
{
    char **files = NULL, **skipped = NULL, err[1024];
    size_t n = 0, n_skipped = 0;
    if (gg_corpus_list(path, &files, &n, &skipped, &n_skipped, err, sizeof err) != GG_OK) {
        path_error(s, path, err);
        return;
    }
    for (size_t i = 0; i < n_skipped; i++)
        path_error(s, path, skipped[i]);
    gg_corpus_list_free(skipped, n_skipped);
    for (size_t i = 0; i < n; i++) {
        struct gg_case c;
        if (gg_case_load(files[i], &c, err, sizeof err) != GG_OK) {
            path_error(s, files[i], err);
            continue;
        }
        if (s->o->n_kernels == 0)
            run_on(s, files[i], &c, NULL);
        for (int j = 0; j < s->o->n_kernels; j++)
            run_on(s, files[i], &c, s->o->kernels[j]);
        gg_case_free(&c);
    }
    gg_corpus_list_free(files, n);
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
    size_t i;
    json_t *obj;
    int runs = o->perf_runs > 0 ? o->perf_runs : 5;
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return;
    json_array_foreach(s->cases, i, obj) {
        const char *cls = json_string_value(json_object_get(obj, "class"));
        if (!cls || strcmp(cls, "pass"))
            continue;
        struct gg_case c;
        char err[1024];
        if (gg_case_load(json_string_value(json_object_get(obj, "file")), &c, err, sizeof err))
            continue;
        const char *kname = json_string_value(json_object_get(obj, "kernel"));
        const struct gg_kernel *k = gg_registry_find(kname);
        struct gg_run_opts ro = {.max_mem_bytes = o->max_mem_bytes, .kernel = kname,
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
        json_object_set_new(obj, "time_us", json_real(med));
        json_t *b = json_object_get(obj, "baseline_time_us");
        double base = json_is_number(b) ? json_number_value(b) : NAN;
        int slow = isfinite(base) && base >= PERF_FLOOR_US && med > PERF_RATIO * base + PERF_SLACK_US;
        json_object_set_new(obj, "perf_regressed", json_boolean(slow));
        char line[160];
        snprintf(line, sizeof line, "perf   %s  %.1f us", kname, med);
        fprintf(o->out, "%s", line);
        if (isfinite(base))
            fprintf(o->out, " vs baseline %.1f us%s", base,
                    base < PERF_FLOOR_US ? " (under 4 us: not judged)" : slow ? ": SLOWER" : "");
        char name[256];
        case_name(json_string_value(json_object_get(obj, "file")), name, sizeof name);
        fprintf(o->out, "  %s\n", name);
        if (slow) {
            s->reasons[R_SLOWER]++;
            const char *verdict = json_string_value(json_object_get(obj, "verdict"));
            char reason[512];
            snprintf(reason, sizeof reason, "%s%skernel time %.1f us > 1.005 x %.1f + 0.5 us",
                     json_string_value(json_object_get(obj, "reason")),
                     json_string_value(json_object_get(obj, "reason"))[0] ? "; " : "", med, base);
            json_object_set_new(obj, "reason", json_string(reason));
            if (!strcmp(verdict, "pass"))
                json_object_set_new(obj, "verdict", json_string("regressed"));
        }
    }
    free(t);
}

/* ---- results ------------------------------------------------------------------------------- */

static void count(struct suite *s)
{
    struct gg_suite_summary *sum = s->sum;
    size_t i;
    json_t *obj;
    json_array_foreach(s->cases, i, obj) {
        const char *v = json_string_value(json_object_get(obj, "verdict"));
        sum->cases++;
        sum->pass += !strcmp(v, "pass");
        sum->fail += !strcmp(v, "fail");
        sum->regressed += !strcmp(v, "regressed");
        sum->skipped += !strcmp(v, "skipped");
        sum->errors += !strcmp(v, "error");
    }
    sum->gate_failed = sum->fail + sum->regressed + sum->errors > 0;
}

static json_t *reasons_json(const struct suite *s)
{
    static const char *const text[N_REASONS] = {
        "below threshold", "with a structural fault",
        "dropped more than the allowed SNR margin against the baseline",
        "slower than the baseline", "could not run"};
    json_t *a = json_array();
    for (int r = 0; r < N_REASONS; r++)
        if (s->reasons[r])
            json_array_append_new(a, json_sprintf("%d case%s %s", s->reasons[r],
                                                  s->reasons[r] == 1 ? "" : "s", text[r]));
    return a;
}

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

/* The NVIDIA driver's name of the first GPU, when a GPU kernel ran; null otherwise. */
static json_t *gpu_name(const struct suite *s)
{
    if (!s->gpu_used)
        return json_null();
    char line[512];
    FILE *p = popen("cat /proc/driver/nvidia/gpus/*/information 2>/dev/null", "r");
    json_t *name = NULL;
    while (p && !name && fgets(line, sizeof line, p)) {
        if (!strncmp(line, "Model:", 6)) {
            char *v = line + 6 + strspn(line + 6, " \t");
            v[strcspn(v, "\n")] = '\0';
            name = json_string(v);
        }
    }
    if (p)
        pclose(p);
    return name ? name : json_string("unknown");
}

static json_t *result_json(struct suite *s, const char *started, double seconds)
{
    const struct gg_suite_opts *o = s->o;
    char host[256] = "", cpu[256];
    gethostname(host, sizeof host - 1);
    cpu_name(cpu, sizeof cpu);
    json_t *kernels = json_array(), *plugins = json_array();
    for (int i = 0; i < o->n_kernels; i++)
        json_array_append_new(kernels, json_string(o->kernels[i]));
    for (int i = 0; i < o->n_plugins; i++)
        json_array_append_new(plugins, json_string(o->plugins[i]));
    const struct gg_suite_summary *m = s->sum;
    json_t *root = json_pack(
        "{s:s, s:i, s:s, s:i, s:s, s:s, s:f, s:{s:s, s:s, s:o}, s:o, s:o, s:s?}",
        "format", GG_SUITE_FORMAT, "version", GG_SUITE_VERSION, "tier", o->tier ? o->tier : "custom",
        "thresholds_version", GG_THRESHOLDS_VERSION, "ggfuzz_version", GG_VERSION, "started",
        started, "seconds", seconds, "host", "hostname", host, "cpu", cpu, "gpu", gpu_name(s),
        "kernels", kernels, "plugins", plugins, "mutant", o->mutant);
    json_object_set_new(root, "gate",
                        json_pack("{s:s, s:o, s:f, s:b, s:o}", "verdict",
                                  m->gate_failed ? "fail" : "pass", "baseline",
                                  o->baseline_path ? json_string(o->baseline_path) : json_null(),
                                  "snr_drop_db", o->snr_drop_db, "perf", o->perf, "reasons",
                                  reasons_json(s)));
    json_object_set_new(root, "summary",
                        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "cases", m->cases, "pass",
                                  m->pass, "fail", m->fail, "regressed", m->regressed, "skipped",
                                  m->skipped, "errors", m->errors));
    json_object_set(root, "cases", s->cases);
    return root;
}

/* JUnit: one test case per case and kernel, grouped by tier and model. */
static enum gg_status write_junit(const struct suite *s, const char *started, double seconds,
                                  const char *path, char *err, size_t err_len)
{
    size_t n = json_array_size(s->cases);
    struct gg_junit_case *jc = calloc(n ? n : 1, sizeof *jc);
    char (*names)[320] = calloc(n ? n : 1, sizeof *names);
    char (*classes)[160] = calloc(n ? n : 1, sizeof *classes);
    char (*texts)[1024] = calloc(n ? n : 1, sizeof *texts);
    enum gg_status st = GG_E_NOMEM;
    snprintf(err, err_len, "out of memory writing %s", path);
    if (!jc || !names || !classes || !texts)
        goto done;
    size_t i;
    json_t *o;
    json_array_foreach(s->cases, i, o) {
        char name[256];
        case_name(json_string_value(json_object_get(o, "file")), name, sizeof name);
        const char *model = json_string_value(json_object_get(o, "model"));
        snprintf(classes[i], sizeof classes[i], "suite.%s.%s", s->o->tier ? s->o->tier : "custom",
                 model && model[0] ? model : "case");
        snprintf(names[i], sizeof names[i], "%s on %s", name,
                 json_string_value(json_object_get(o, "kernel")));
        const char *v = json_string_value(json_object_get(o, "verdict"));
        const char *reason = json_string_value(json_object_get(o, "reason"));
        jc[i].classname = classes[i];
        jc[i].name = names[i];
        jc[i].seconds = json_number_value(json_object_get(o, "seconds"));
        jc[i].outcome = !strcmp(v, "pass") ? GG_JUNIT_PASS
                        : !strcmp(v, "skipped") ? GG_JUNIT_SKIPPED
                        : !strcmp(v, "error") ? GG_JUNIT_ERROR : GG_JUNIT_FAILURE;
        jc[i].message = reason;
        jc[i].type = !strcmp(v, "regressed") ? "regressed"
                     : json_is_string(json_object_get(o, "class"))
                         ? json_string_value(json_object_get(o, "class")) : "error";
        char worst[32] = "", thr[32] = "";
        fmt_db(json_object_get(o, "worst_group_snr_db"), worst, sizeof worst);
        fmt_db(json_object_get(o, "threshold_db"), thr, sizeof thr);
        snprintf(texts[i], sizeof texts[i], "%s\nworst group SNR %s vs %s\nsignature %s\n%s",
                 json_string_value(json_object_get(o, "shape")), worst, thr,
                 json_string_value(json_object_get(o, "signature")), reason);
        jc[i].text = texts[i];
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char sname[64];
    snprintf(sname, sizeof sname, "ggfuzz suite %s", s->o->tier ? s->o->tier : "custom");
    struct gg_junit_suite js = {sname, started, host, seconds, jc, n};
    st = gg_report_junit_write(&js, path, err, err_len);
done:
    free(jc);
    free(names);
    free(classes);
    free(texts);
    return st;
}

/* The requested outputs; a failure is reported on o->out and counted. */
static void write_outputs(struct suite *s, const char *started, double seconds)
{
    const struct gg_suite_opts *o = s->o;
    json_t *root = result_json(s, started, seconds);
    char err[1024], path[4096];
    const char *json_path = o->json_path;
    if (!json_path && o->report_dir) { /* the report reads the result from a file */
        mkdir(o->report_dir, 0777);
        snprintf(path, sizeof path, "%s/suite.json", o->report_dir);
        json_path = path;
    }
    const char *targets[] = {json_path, o->save_baseline_path};
    for (int i = 0; i < 2; i++)
        if (targets[i] && gg_report_suite_save(root, targets[i], err, sizeof err) != GG_OK) {
            fprintf(o->out, "ggfuzz suite: %s\n", err);
            s->sum->output_failed = 1;
            if (i == 0)
                json_path = NULL;
        }
    if (o->junit_path && write_junit(s, started, seconds, o->junit_path, err, sizeof err) != GG_OK) {
        fprintf(o->out, "ggfuzz suite: %s\n", err);
        s->sum->output_failed = 1;
    }
    if (o->report_dir && json_path) {
        if (gg_report_html_write(json_path, NULL, o->report_dir, err, sizeof err) != GG_OK) {
            fprintf(o->out, "ggfuzz suite: report: %s\n", err);
            s->sum->output_failed = 1;
        } else {
            fprintf(o->out, "report: %s/index.html\n", o->report_dir);
        }
    }
    json_decref(root);
}

static void print_summary(const struct suite *s, double seconds)
{
    const struct gg_suite_summary *m = s->sum;
    FILE *f = s->o->out;
    fprintf(f, "suite %s: %d cases: %d pass, %d fail, %d regressed, %d skipped, %d errors  "
               "[%.1f s]\n", s->o->tier ? s->o->tier : "custom", m->cases, m->pass, m->fail,
            m->regressed, m->skipped, m->errors, seconds);
    if (s->o->perf && s->cpu_timed)
        fprintf(f, "note: --perf timed CPU kernels: the perf rule is meant for GPU kernels and was "
                   "applied to the CPU times all the same\n");
    json_t *reasons = reasons_json(s);
    fprintf(f, "gate: %s", m->gate_failed ? "FAIL" : "PASS");
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i, r)
        fprintf(f, "%s%s", i ? "; " : " (", json_string_value(r));
    fprintf(f, "%s\n", json_array_size(reasons) ? ")" : "");
    json_decref(reasons);
}

enum gg_status gg_suite_run(const struct gg_suite_opts *o, struct gg_suite_summary *sum,
                            char *err, size_t err_len)
{
    memset(sum, 0, sizeof *sum);
    struct suite s = {.o = o, .sum = sum};
    json_t *baseline_doc = NULL;
    if (o->baseline_path &&
        gg_report_suite_baseline(o->baseline_path, &baseline_doc, &s.baseline, err, err_len) !=
            GG_OK)
        return GG_E_PARSE;
    gg_registry_init();
    s.cases = json_array();
    char started[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    double t0 = now_s();
    for (int i = 0; i < o->n_paths; i++)
        run_path(&s, o->paths[i]);
    if (o->perf)
        perf_pass(&s);
    count(&s);
    double seconds = now_s() - t0;
    print_summary(&s, seconds);
    write_outputs(&s, started, seconds);
    json_decref(s.cases);
    json_decref(baseline_doc);
    if (sum->cases == 0) {
        snprintf(err, err_len, "no case found");
        return GG_E_IO;
    }
    return GG_OK;
}

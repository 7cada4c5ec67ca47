/*
 * gg_report_input.c — reads what `ggfuzz report` shows: a suite result JSON (checked field by
 * field against its format, so a malformed file is named with the field at fault) and a campaign
 * directory (fuzzer_stats, the plot_data time series and the findings store, one case file per
 * signature). Nothing here writes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

#define SUITE_FORMAT "ggfuzz-suite"
#define SUITE_VERSION 1

/* ---- suite result JSON --------------------------------------------------------------------- */

/* Where a field lives, for messages: the file, then "cases[3]." or "". */
struct jctx {
    const char *path;
    char where[64];
    char *err;
    size_t err_len;
    enum gg_status st;
};

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: case JSON_REAL: return "a number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static void jfail(struct jctx *x, const char *key, const char *what, const json_t *found)
{
    if (x->st != GG_OK)
        return;
    x->st = GG_E_PARSE;
    if (found != NULL)
        snprintf(x->err, x->err_len, "%s: %s%s: expected %s, found %s", x->path, x->where, key,
                 what, json_kind(found));
    else
        snprintf(x->err, x->err_len, "%s: %s%s: %s", x->path, x->where, key, what);
}

/* A string field; "" when null or absent unless required. */
static const char *jstr(struct jctx *x, const json_t *o, const char *key, int required)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        return json_string_value(v);
    if (v == NULL && required)
        jfail(x, key, "missing (a string is required)", NULL);
    else if (v != NULL && !json_is_null(v))
        jfail(x, key, "a string", v);
    return "";
}

static struct gg_rnum jnum(struct jctx *x, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    struct gg_rnum r = {0, 0};
    if (json_is_number(v)) {
        r.v = json_number_value(v);
        r.set = 1;
    } else if (v != NULL && !json_is_null(v)) {
        jfail(x, key, "a number or null", v);
    }
    return r;
}

/* A whole number field, -1 when null or absent. */
static int64_t jint(struct jctx *x, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (v != NULL && !json_is_null(v))
        jfail(x, key, "a whole number or null", v);
    return -1;
}

static int jbool(struct jctx *x, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (v != NULL && !json_is_null(v) && !json_is_boolean(v))
        jfail(x, key, "true or false", v);
    return json_is_true(v);
}

/* An object field; NULL when null or absent (then required is an error). */
static const json_t *jobj(struct jctx *x, const json_t *o, const char *key, int required)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        return v;
    if (v == NULL && required)
        jfail(x, key, "missing (an object is required)", NULL);
    else if (v != NULL && !json_is_null(v))
        jfail(x, key, "an object", v);
    return NULL;
}

static const char *const verdicts[] = {"pass", "fail", "regressed", "skipped", "error"};

static int verdict_index(const char *v)
{
    for (size_t i = 0; i < sizeof verdicts / sizeof *verdicts; i++)
        if (strcmp(v, verdicts[i]) == 0)
            return (int)i;
    return -1;
}

int gg_report_verdict_bad(const char *verdict)
{
    return strcmp(verdict, "fail") == 0 || strcmp(verdict, "regressed") == 0 ||
           strcmp(verdict, "error") == 0;
}

static void case_label(struct gg_rcase *c, size_t i)
{
    if (c->file[0]) {
        const char *base = strrchr(c->file, '/');
        base = base ? base + 1 : c->file;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".case") == 0)
            n -= 5;
        snprintf(c->label, sizeof c->label, "%.*s", (int)n, base);
    } else if (c->id[0]) {
        snprintf(c->label, sizeof c->label, "%.12s", c->id);
    } else {
        snprintf(c->label, sizeof c->label, "case %zu", i + 1);
    }
}

static void read_groups(struct jctx *x, const json_t *o, struct gg_rcase *c)
{
    const json_t *arr = json_object_get(o, "groups");
    if (arr == NULL || json_is_null(arr))
        return;
    if (!json_is_array(arr)) {
        jfail(x, "groups", "an array", arr);
        return;
    }
    size_t n = json_array_size(arr);
    if (n == 0)
        return;
    c->groups = calloc(n, sizeof *c->groups);
    if (c->groups == NULL) {
        jfail(x, "groups", "out of memory", NULL);
        return;
    }
    char where[sizeof x->where];
    memcpy(where, x->where, sizeof where);
    for (size_t i = 0; i < n && x->st == GG_OK; i++) {
        const json_t *g = json_array_get(arr, i);
        snprintf(x->where, sizeof x->where, "%sgroups[%zu].", where, i);
        if (!json_is_object(g)) {
            jfail(x, "", "an object", g);
            break;
        }
        struct gg_rgroup *gr = &c->groups[i];
        gr->g = jint(x, g, "g");
        if (gr->g < 0)
            gr->g = (int64_t)i;
        gr->rows = jint(x, g, "rows");
        gr->snr_db = jnum(x, g, "snr_db");
        gr->exact = jbool(x, g, "exact");
        c->n_groups = i + 1;
    }
    memcpy(x->where, where, sizeof where);
}

static void read_case(struct jctx *x, const json_t *o, struct gg_rcase *c, size_t i)
{
    snprintf(x->where, sizeof x->where, "cases[%zu].", i);
    if (!json_is_object(o)) {
        jfail(x, "", "an object", o);
        return;
    }
    c->id = jstr(x, o, "id", 1);
    c->kernel = jstr(x, o, "kernel", 1);
    c->verdict = jstr(x, o, "verdict", 1);
    if (x->st == GG_OK && verdict_index(c->verdict) < 0)
        jfail(x, "verdict", "not one of pass, fail, regressed, skipped, error", NULL);
    c->file = jstr(x, o, "file", 0);
    c->mutant = jstr(x, o, "mutant", 0);
    c->model = jstr(x, o, "model", 0);
    c->routing = jstr(x, o, "routing", 0);
    c->phase = jstr(x, o, "phase", 0);
    c->op = jstr(x, o, "op", 0);
    c->recipe = jstr(x, o, "recipe", 0);
    c->shape = jstr(x, o, "shape", 0);
    c->cls = jstr(x, o, "class", 0);
    c->reason = jstr(x, o, "reason", 0);
    if (c->reason[0] == '\0')
        c->reason = jstr(x, o, "detail", 0);
    c->signature = jstr(x, o, "signature", 0);
    c->ep = jint(x, o, "ep");
    c->worst_group = jint(x, o, "worst_group");
    c->threshold_db = jnum(x, o, "threshold_db");
    c->worst_group_snr_db = jnum(x, o, "worst_group_snr_db");
    c->pooled_snr_db = jnum(x, o, "pooled_snr_db");
    c->margin_db = jnum(x, o, "margin_db");
    c->baseline_snr_db = jnum(x, o, "baseline_snr_db");
    c->snr_drop_db = jnum(x, o, "snr_drop_db");
    c->time_us = jnum(x, o, "time_us");
    c->baseline_time_us = jnum(x, o, "baseline_time_us");
    c->perf_regressed = jbool(x, o, "perf_regressed");
    read_groups(x, o, c);
    if (!c->margin_db.set && c->worst_group_snr_db.set && c->threshold_db.set)
        c->margin_db = (struct gg_rnum){c->worst_group_snr_db.v - c->threshold_db.v, 1};
    for (size_t g = 0; g < c->n_groups && !c->worst_group_snr_db.set; g++)
        c->exact |= c->groups[g].exact;
    case_label(c, i);
}

static void read_header(struct jctx *x, const json_t *root, struct gg_rsuite *s)
{
    const char *format = jstr(x, root, "format", 1);
    if (x->st == GG_OK && strcmp(format, SUITE_FORMAT) != 0)
        jfail(x, "format", "not \"" SUITE_FORMAT "\" (not a suite result)", NULL);
    int64_t version = jint(x, root, "version");
    if (x->st == GG_OK && version != SUITE_VERSION) {
        char what[96];
        snprintf(what, sizeof what, "version %lld is not supported (this ggfuzz reads %d)",
                 (long long)version, SUITE_VERSION);
        jfail(x, "version", what, NULL);
    }
    s->tier = jstr(x, root, "tier", 0);
    s->thresholds_version = jint(x, root, "thresholds_version");
    s->ggfuzz_version = jstr(x, root, "ggfuzz_version", 0);
    s->started = jstr(x, root, "started", 0);
    s->mutant = jstr(x, root, "mutant", 0);
    s->seconds = jnum(x, root, "seconds");
    const json_t *host = jobj(x, root, "host", 0);
    snprintf(x->where, sizeof x->where, "host.");
    s->hostname = jstr(x, host, "hostname", 0);
    s->cpu = jstr(x, host, "cpu", 0);
    s->gpu = jstr(x, host, "gpu", 0);
    x->where[0] = '\0';
    const json_t *gate = jobj(x, root, "gate", 0);
    snprintf(x->where, sizeof x->where, "gate.");
    s->gate_verdict = jstr(x, gate, "verdict", 0);
    s->baseline = jstr(x, gate, "baseline", 0);
    s->gate_snr_drop_db = jnum(x, gate, "snr_drop_db");
    s->perf = jbool(x, gate, "perf");
    const json_t *reasons = json_object_get(gate, "reasons");
    size_t n = json_array_size(reasons);
    if (reasons != NULL && !json_is_null(reasons) && !json_is_array(reasons))
        jfail(x, "reasons", "an array of strings", reasons);
    if (n > 0 && (s->reasons = calloc(n, sizeof *s->reasons)) == NULL)
        jfail(x, "reasons", "out of memory", NULL);
    for (size_t i = 0; i < n && x->st == GG_OK; i++) {
        const json_t *r = json_array_get(reasons, i);
        char key[32];
        snprintf(key, sizeof key, "reasons[%zu]", i);
        if (json_is_string(r))
            s->reasons[s->n_reasons++] = json_string_value(r);
        else
            jfail(x, key, "a string", r);
    }
    x->where[0] = '\0';
}

static void count_verdicts(struct gg_rsuite *s)
{
    int64_t *counts[] = {&s->n_pass, &s->n_fail, &s->n_regressed, &s->n_skipped, &s->n_errors};
    for (size_t i = 0; i < s->n_cases; i++)
        (*counts[verdict_index(s->cases[i].verdict)])++;
    if (s->gate_verdict[0] == '\0')
        s->gate_verdict = s->n_fail + s->n_regressed + s->n_errors > 0 ? "fail" : "pass";
}

enum gg_status gg_report_suite_load(const char *path, struct gg_rsuite *s, char *err,
                                    size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    char *text;
    size_t len;
    enum gg_status st = gg_file_read(path, SIZE_MAX, &text, &len, err, err_len);
    if (st != GG_OK)
        return st;
    json_error_t je;
    s->root = json_loadb(text, len, 0, &je);
    free(text);
    if (s->root == NULL) {
        snprintf(err, err_len, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
        return GG_E_PARSE;
    }
    struct jctx x = {.path = path, .err = err, .err_len = err_len, .st = GG_OK};
    if (!json_is_object(s->root)) {
        jfail(&x, "(top level)", "an object", s->root);
        return x.st;
    }
    read_header(&x, s->root, s);
    const json_t *cases = json_object_get(s->root, "cases");
    if (x.st == GG_OK && !json_is_array(cases))
        jfail(&x, "cases", cases ? "an array" : "missing (an array is required)", cases);
    size_t n = x.st == GG_OK ? json_array_size(cases) : 0;
    if (n > 0 && (s->cases = calloc(n, sizeof *s->cases)) == NULL)
        jfail(&x, "cases", "out of memory", NULL);
    for (size_t i = 0; i < n && x.st == GG_OK; i++) {
        read_case(&x, json_array_get(cases, i), &s->cases[i], i);
        s->n_cases = i + 1;
    }
    if (x.st == GG_OK)
        count_verdicts(s);
    return x.st;
}

void gg_report_suite_free(struct gg_rsuite *s)
{
    for (size_t i = 0; i < s->n_cases; i++)
        free(s->cases[i].groups);
    free(s->cases);
    free(s->reasons);
    json_decref(s->root);
    memset(s, 0, sizeof *s);
}

/* Order of the worst cases: gate-failing verdicts first, then by margin (unknown last). */
static int worse(const struct gg_rcase *a, const struct gg_rcase *b)
{
    int ba = gg_report_verdict_bad(a->verdict), bb = gg_report_verdict_bad(b->verdict);
    if (ba != bb)
        return ba > bb;
    if (a->margin_db.set != b->margin_db.set)
        return a->margin_db.set;
    return a->margin_db.set && a->margin_db.v < b->margin_db.v;
}

size_t gg_report_worst_cases(const struct gg_rsuite *s, size_t *idx, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_cases; i++) {
        const struct gg_rcase *c = &s->cases[i];
        int has_snr = 0;
        for (size_t g = 0; g < c->n_groups && !has_snr; g++)
            has_snr = c->groups[g].snr_db.set;
        if (!has_snr)
            continue;
        /* Insertion into the kept prefix, which stays sorted worst first. */
        size_t at = n;
        while (at > 0 && worse(c, &s->cases[idx[at - 1]]))
            at--;
        if (at >= max)
            continue;
        size_t end = n < max ? n : max - 1;
        memmove(idx + at + 1, idx + at, (end - at) * sizeof *idx);
        idx[at] = i;
        if (n < max)
            n++;
    }
    return n;
}

/* ---- campaign directories ------------------------------------------------------------------ */

/* Fills the metadata fields of f from the '@' lines of its text. */
static void finding_meta(struct gg_rfinding *f)
{
    for (const char *line = f->text, *next; *line; line = next) {
        size_t len = strcspn(line, "\n");
        next = line + len + (line[len] == '\n');
        if (*line != '@')
            continue;
        char *copy = strndup(line + 1, len - 1);
        if (copy == NULL)
            return;
        char *rest = copy + strcspn(copy, " \t");
        if (*rest)
            *rest++ = '\0';
        rest = gg_trim(rest);
        if (strcmp(copy, "expect") == 0) {
            char sig[GG_SIGNATURE_MAX];
            gg_meta_field(rest, "class", f->cls, sizeof f->cls);
            if (gg_meta_field(rest, "sig", sig, sizeof sig)) {
                free(f->signature);
                f->signature = strdup(sig);
            }
        } else if (strcmp(copy, "finding") == 0) {
            gg_finding_parse(rest, &f->meta);
        } else if (strcmp(copy, "observed") == 0 && f->observed[0] == '\0') {
            free(f->observed);
            f->observed = strdup(rest);
        }
        free(copy);
    }
}

/* Reads one finding file; a case that does not parse is still listed, with the parser's
   message. */
static enum gg_status read_finding(const char *dir, const char *name, struct gg_rfinding *f,
                                   char *err, size_t err_len)
{
    memset(f, 0, sizeof *f);
    f->meta.count = -1;
    f->path = gg_path_join(dir, name);
    f->signature = strdup("");
    f->observed = strdup("");
    if (f->path == NULL || f->signature == NULL || f->observed == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    size_t len;
    enum gg_status st = gg_file_read(f->path, SIZE_MAX, &f->text, &len, err, err_len);
    if (st != GG_OK)
        return st;
    char real[PATH_MAX];
    f->replay = strdup(realpath(f->path, real) ? real : f->path);
    snprintf(f->cls, sizeof f->cls, "%.*s", (int)(strrchr(name, '-') - name), name);
    finding_meta(f);
    struct gg_case c;
    char perr[512];
    if (gg_case_parse(f->text, len, f->path, &c, perr, sizeof perr) == GG_OK)
        gg_report_shape(&c, f->shape, sizeof f->shape);
    else
        f->parse_error = strdup(perr);
    gg_case_free(&c);
    return f->replay ? GG_OK : GG_E_NOMEM;
}

static void finding_free(struct gg_rfinding *f)
{
    free(f->path);
    free(f->replay);
    free(f->text);
    free(f->signature);
    free(f->observed);
    free(f->parse_error);
}

/* Most severe class first (gg_class_precedence), then the most frequent. */
static int cmp_finding(const void *pa, const void *pb)
{
    const struct gg_rfinding *a = pa, *b = pb;
    int ca = gg_class_precedence(gg_class_from_name(a->cls)),
        cb = gg_class_precedence(gg_class_from_name(b->cls));
    if (ca != cb)
        return ca < cb ? -1 : 1;
    if (a->meta.count != b->meta.count)
        return a->meta.count > b->meta.count ? -1 : 1;
    return strcmp(a->signature, b->signature);
}

static int keep_finding(const char *dir, const char *name)
{
    (void)dir;
    return gg_findings_is_name(name);
}

static int keep_findings_dir(const char *dir, const char *name)
{
    char *path = gg_path_join(dir, name);
    int ok = path != NULL && gg_path_is_dir(path) && gg_findings_in(path);
    free(path);
    return ok;
}

static enum gg_status read_findings(struct gg_rcampaign *c, char *err, size_t err_len)
{
    char **names;
    size_t n;
    enum gg_status st = gg_dir_list(c->findings_dir, keep_finding, &names, &n, err, err_len);
    if (st == GG_OK && n > 0 && (c->findings = calloc(n, sizeof *c->findings)) == NULL) {
        snprintf(err, err_len, "%s: out of memory", c->findings_dir);
        st = GG_E_NOMEM;
    }
    for (size_t i = 0; i < n && st == GG_OK; i++) {
        st = read_finding(c->findings_dir, names[i], &c->findings[i], err, err_len);
        c->n_findings = i + 1;
    }
    gg_dir_list_free(names, n);
    if (st == GG_OK && c->n_findings > 1)
        qsort(c->findings, c->n_findings, sizeof *c->findings, cmp_finding);
    return st;
}

/* The --artifacts directory named in a recorded command line, when it exists. */
static char *artifacts_of(const char *command_line)
{
    char *copy = command_line ? strdup(command_line) : NULL, *found = NULL, *save = NULL;
    int next = 0;
    for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w && !found;
         w = strtok_r(NULL, " ", &save)) {
        const char *dir = next ? w : strncmp(w, "--artifacts=", 12) == 0 ? w + 12 : NULL;
        next = strcmp(w, "--artifacts") == 0;
        if (dir && gg_path_is_dir(dir))
            found = strdup(dir);
    }
    free(copy);
    return found;
}

/* Finds the findings store of a campaign whose statistics are in dir. */
static enum gg_status find_findings(struct gg_rcampaign *c, const char *dir, char *err,
                                    size_t err_len)
{
    if ((c->findings_dir = artifacts_of(gg_report_stat(c, "command_line"))) != NULL)
        return GG_OK;
    /* The default store, even when the campaign found nothing. */
    char *deflt = gg_path_join(dir, "artifacts");
    if (deflt != NULL && gg_path_is_dir(deflt)) {
        c->findings_dir = deflt;
        return GG_OK;
    }
    free(deflt);
    char **names;
    size_t n, pick = 0;
    enum gg_status st = gg_dir_list(dir, keep_findings_dir, &names, &n, err, err_len);
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], "artifacts") == 0)
            pick = i;
    if (st == GG_OK && n > 0 && (c->findings_dir = gg_path_join(dir, names[pick])) == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        st = GG_E_NOMEM;
    }
    gg_dir_list_free(names, n);
    return st;
}

enum gg_status gg_report_campaign_load(const char *dir, struct gg_rcampaign *c, char *err,
                                       size_t err_len)
{
    memset(c, 0, sizeof *c);
    if ((c->dir = strdup(dir)) == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    struct stat sb;
    int found = stat(dir, &sb) == 0;
    if (!found || !S_ISDIR(sb.st_mode)) {
        snprintf(err, err_len, "%s: cannot open the campaign directory: %s", dir,
                 found ? "not a directory" : strerror(errno));
        return GG_E_IO;
    }
    /* dir holds the statistics, or is a findings store whose parent holds them. */
    int direct = gg_findings_in(dir);
    char *own = gg_path_join(dir, GG_FUZZER_STATS_FILE);
    char *stats_dir = direct && own && !gg_path_is_file(own) ? gg_path_join(dir, "..") : strdup(dir);
    free(own);
    if (direct)
        c->findings_dir = strdup(dir);
    char *stats = stats_dir ? gg_path_join(stats_dir, GG_FUZZER_STATS_FILE) : NULL;
    char *plot = stats_dir ? gg_path_join(stats_dir, GG_PLOT_DATA_FILE) : NULL;
    enum gg_status st = stats && plot && (!direct || c->findings_dir) ? GG_OK : GG_E_NOMEM;
    if (st != GG_OK)
        snprintf(err, err_len, "%s: out of memory", dir);
    if (st == GG_OK && gg_path_is_file(stats))
        st = gg_fuzzer_stats_read(stats, &c->stats, err, err_len);
    if (st == GG_OK && gg_path_is_file(plot))
        st = gg_plot_data_read(plot, &c->ticks, &c->n_ticks, err, err_len);
    if (st == GG_OK && c->findings_dir == NULL)
        st = find_findings(c, stats_dir, err, err_len);
    if (st == GG_OK && c->stats.n == 0 && c->findings_dir == NULL) {
        snprintf(err, err_len, "%s: not a campaign directory: no fuzzer_stats and no findings "
                 "store", dir);
        st = GG_E_PARSE;
    }
    if (st == GG_OK && c->findings_dir != NULL)
        st = read_findings(c, err, err_len);
    if (st == GG_OK && c->findings_dir != NULL)
        st = gg_buckets_scan(c->findings_dir, &c->buckets, err, err_len);
    free(stats);
    free(plot);
    free(stats_dir);
    return st;
}

void gg_report_campaign_free(struct gg_rcampaign *c)
{
    for (size_t i = 0; i < c->n_findings; i++)
        finding_free(&c->findings[i]);
    gg_buckets_free(&c->buckets);
    gg_fuzzer_stats_free(&c->stats);
    free(c->ticks);
    free(c->findings);
    free(c->findings_dir);
    free(c->dir);
    memset(c, 0, sizeof *c);
}

const char *gg_report_stat(const struct gg_rcampaign *c, const char *key)
{
    return gg_fuzzer_stats_get(&c->stats, key);
}

/* ---- shared by the writers ----------------------------------------------------------------- */

int gg_report_group_bad(const struct gg_rcase *c, const struct gg_rgroup *gr)
{
    return gr->snr_db.set && c->threshold_db.set && gr->snr_db.v < c->threshold_db.v;
}

/* Sort key of a group: its SNR; exact groups above every number, empty groups after them. */
static double group_key(const struct gg_rgroup *g)
{
    if (g->snr_db.set)
        return g->snr_db.v;
    return g->exact ? HUGE_VAL : NAN;
}

void gg_report_groups_by_snr(const struct gg_rcase *c, size_t *idx)
{
    for (size_t i = 0; i < c->n_groups; i++) {
        double k = group_key(&c->groups[i]);
        size_t at = i;
        /* Stable insertion: NaN keys (empty groups) sink to the end. */
        while (at > 0) {
            double prev = group_key(&c->groups[idx[at - 1]]);
            if (!isnan(k) && (isnan(prev) || k < prev))
                at--;
            else
                break;
        }
        memmove(idx + at + 1, idx + at, (i - at) * sizeof *idx);
        idx[at] = i;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gg_report_median_passing(const struct gg_rcase *c)
{
    double *v = malloc((c->n_groups + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v != NULL && i < c->n_groups; i++)
        if (c->groups[i].snr_db.set && !gg_report_group_bad(c, &c->groups[i]))
            v[n++] = c->groups[i].snr_db.v;
    double med = NAN;
    if (n > 0) {
        qsort(v, n, sizeof *v, cmp_double);
        med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
    free(v);
    return med;
}

void gg_report_replay_cmd(const char *path, char *buf, size_t len)
{
    int plain = 1;
    for (const char *p = path; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("/._-+=:,@%", *p) != NULL;
    if (plain) {
        snprintf(buf, len, "ggfuzz --replay %s", path);
        return;
    }
    /* Single quotes, each embedded quote written as '\''. */
    size_t at = (size_t)snprintf(buf, len, "ggfuzz --replay '");
    for (const char *p = path; *p && at + 5 < len; p++)
        at += (size_t)snprintf(buf + at, len - at, *p == '\'' ? "'\\''" : "%c", *p);
    if (at + 1 < len)
        snprintf(buf + at, len - at, "'");
}

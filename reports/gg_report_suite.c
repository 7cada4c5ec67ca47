/*
 * gg_report_suite.c — the suite result JSON, the contract between `ggfuzz suite` (which writes
 * it) and `ggfuzz report` and --baseline (which read it): its format name and version, the atomic
 * write of a result, the baseline's lookup of a case, and the reader that checks a result field
 * by field, so that a malformed file is named with the field at fault.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_int.h"

enum gg_status gg_report_suite_save(json_t *root, const char *path, char *err, size_t err_len)
{
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "the suite result", err, err_len);
    if (st != GG_OK)
        return st;
    a.bad = json_dumpf(root, a.f, JSON_INDENT(1)) != 0;
    return gg_atomic_commit(&a, 0, err, err_len);
}

enum gg_status gg_report_suite_baseline(const char *path, json_t **doc, json_t **cases,
                                        char *err, size_t err_len)
{
    json_error_t je;
    *cases = NULL;
    *doc = json_load_file(path, 0, &je);
    if (!*doc) {
        snprintf(err, err_len, "%s:%d: cannot read the baseline: %s", path, je.line, je.text);
        return GG_E_PARSE;
    }
    const char *fmt = json_string_value(json_object_get(*doc, "format"));
    *cases = json_object_get(*doc, "cases");
    if (!fmt || strcmp(fmt, GG_SUITE_FORMAT) || !json_is_array(*cases)) {
        snprintf(err, err_len, "%s: not a suite result (format \"" GG_SUITE_FORMAT "\" with a "
                 "\"cases\" array)", path);
        json_decref(*doc);
        *doc = NULL;
        *cases = NULL;
        return GG_E_PARSE;
    }
    return GG_OK;
}

json_t *gg_report_suite_find(json_t *cases, const char *id, const char *kernel)
{
    size_t i;
    json_t *b;
    json_array_foreach(cases, i, b) {
        const char *bid = json_string_value(json_object_get(b, "id"));
        const char *bk = json_string_value(json_object_get(b, "kernel"));
        if (bid && bk && !strcmp(bid, id) && !strcmp(bk, kernel))
            return b;
    }
    return NULL;
}

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
    if (x->st == GG_OK && strcmp(format, GG_SUITE_FORMAT) != 0)
        jfail(x, "format", "not \"" GG_SUITE_FORMAT "\" (not a suite result)", NULL);
    int64_t version = jint(x, root, "version");
    if (x->st == GG_OK && version != GG_SUITE_VERSION) {
        char what[96];
        snprintf(what, sizeof what, "version %lld is not supported (this ggfuzz reads %d)",
                 (long long)version, GG_SUITE_VERSION);
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


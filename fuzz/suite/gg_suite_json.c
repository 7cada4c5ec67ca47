/*
 * gg_suite_json.c — the suite result JSON, the contract between `ggfuzz suite` (which writes
 * it) and `ggfuzz report` and --baseline (which read it). One field table per record (the
 * header, a case, a group) gives each field's key, type, place in the record, whether a reader
 * requires it and how the writer gives back an unset value; the reader that checks a result field
 * by field (so that a malformed file is named with the field at fault), the writer, the copy into
 * a result and the release all walk those tables. Also the case lookup of a baseline and the
 * counts by verdict.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz/suite/gg_suite.h"

/* Bytes of a suite result the reader accepts: a record is a few kB, so a tier of a hundred
   thousand cases fits many times over. */
#define RESULT_MAX_BYTES ((size_t)1 << 30)

/* ---- the field tables ----------------------------------------------------------------------- */

enum ftype {
    F_STR,  /* const char *: a string */
    F_INT,  /* int64_t: a whole number, -1 when unset */
    F_NUM,  /* struct gg_rnum: a number */
    F_BOOL, /* int: true or false */
    F_STRS, /* const char *const * and a size_t count: an array of strings */
    F_OBJ,  /* an object whose fields (sub) live in the same record */
    F_RECS  /* a pointer to records (sub) and a size_t count: an array of objects */
};

/* How the writer gives back an unset value ("" string, -1 whole number, unset number). */
enum fabsent {
    A_WRITE, /* written all the same */
    A_NULL,  /* null */
    A_OMIT   /* the key is left out */
};

struct table;

struct field {
    const char *key;
    enum ftype type;
    size_t off;               /* of the value in the record */
    int required;             /* a reader refuses a result without it */
    enum fabsent absent;
    const char *only_with;    /* written only when this key of the same table is set */
    const char *fixed_str;    /* F_STR with no place in the record: the value it must have */
    int64_t fixed_int;        /* F_INT with no place in the record (fixed_int > 0) */
    const char *const *one_of; /* F_STR: the values it may take (NULL-terminated) */
    size_t n_off;             /* F_STRS, F_RECS: of the count */
    const struct table *sub;  /* F_OBJ, F_RECS */
};

struct table {
    const struct field *rows;
    size_t n_rows;
    size_t size;                          /* of one record (F_RECS) */
    void (*finish)(void *rec, size_t i);  /* derives what is not written, after a read or copy */
};

#define ROWS(r) (r), sizeof(r) / sizeof *(r)

static const char *const verdicts[] = {"pass", "fail", "regressed", "skipped", "error", NULL};

static void finish_group(void *rec, size_t i);
static void finish_case(void *rec, size_t i);

#define G(k, t, m, ...) {.key = k, .type = t, .off = offsetof(struct gg_rgroup, m), __VA_ARGS__}
static const struct field group_rows[] = {
    G("g", F_INT, g), G("rows", F_INT, rows), G("outputs", F_INT, outputs),
    G("snr_db", F_NUM, snr_db, .absent = A_NULL), G("exact", F_BOOL, exact),
};
static const struct table group_table = {ROWS(group_rows), sizeof(struct gg_rgroup), finish_group};

#define C(k, t, m, ...) {.key = k, .type = t, .off = offsetof(struct gg_rcase, m), __VA_ARGS__}
static const struct field phase_rows[] = {
    C("setup", F_NUM, setup_s, .absent = A_OMIT), C("inputs", F_NUM, inputs_s, .absent = A_OMIT),
    C("runs", F_NUM, runs_s, .absent = A_OMIT),
    C("reference", F_NUM, reference_s, .absent = A_OMIT),
    C("compare", F_NUM, compare_s, .absent = A_OMIT),
};
static const struct table phase_table = {ROWS(phase_rows), 0, NULL};

static const struct field case_rows[] = {
    C("id", F_STR, id, .required = 1),
    C("file", F_STR, file),
    C("kernel", F_STR, kernel, .required = 1),
    C("mutant", F_STR, mutant),
    C("model", F_STR, model),
    C("ep", F_INT, ep, .absent = A_NULL),
    C("routing", F_STR, routing),
    C("phase", F_STR, phase),
    C("op", F_STR, op),
    C("recipe", F_STR, recipe),
    C("shape", F_STR, shape),
    C("class", F_STR, cls, .absent = A_NULL),
    C("threshold_db", F_NUM, threshold_db, .absent = A_NULL),
    C("worst_group", F_INT, worst_group, .absent = A_NULL),
    C("worst_group_snr_db", F_NUM, worst_group_snr_db, .absent = A_NULL),
    C("pooled_snr_db", F_NUM, pooled_snr_db, .absent = A_NULL),
    C("src_snr_db", F_NUM, src_snr_db, .absent = A_NULL),
    C("ref_src_snr_db", F_NUM, ref_src_snr_db, .absent = A_OMIT),
    C("margin_db", F_NUM, margin_db, .absent = A_NULL),
    C("max_ratio", F_NUM, max_ratio, .absent = A_OMIT),
    C("signature", F_STR, signature),
    C("detail", F_STR, detail, .only_with = "class"),
    C("advisory", F_STR, advisory, .absent = A_OMIT),
    C("groups", F_RECS, groups, .n_off = offsetof(struct gg_rcase, n_groups), .sub = &group_table),
    C("seconds", F_NUM, seconds),
    C("phase_seconds", F_OBJ, setup_s, .absent = A_OMIT, .sub = &phase_table),
    C("baseline_snr_db", F_NUM, baseline_snr_db, .absent = A_NULL),
    C("baseline_time_us", F_NUM, baseline_time_us, .absent = A_NULL),
    C("snr_drop_db", F_NUM, snr_drop_db, .absent = A_NULL),
    C("baseline_record", F_STR, baseline_record, .absent = A_OMIT),
    C("verdict", F_STR, verdict, .required = 1, .one_of = verdicts),
    C("reason", F_STR, reason),
    C("time_us", F_NUM, time_us, .absent = A_NULL),
    C("perf_regressed", F_BOOL, perf_regressed),
    C("order", F_INT, order, .absent = A_OMIT),
};
static const struct table case_table = {ROWS(case_rows), sizeof(struct gg_rcase), finish_case};

#define S(k, t, m, ...) {.key = k, .type = t, .off = offsetof(struct gg_rsuite, m), __VA_ARGS__}
static const struct field host_rows[] = {
    S("hostname", F_STR, hostname), S("cpu", F_STR, cpu), S("gpu", F_STR, gpu, .absent = A_NULL),
};
static const struct table host_table = {ROWS(host_rows), 0, NULL};

static const struct field gate_rows[] = {
    S("verdict", F_STR, gate_verdict),
    S("baseline", F_STR, baseline, .absent = A_NULL),
    S("snr_drop_db", F_NUM, gate_snr_drop_db),
    S("perf", F_BOOL, perf),
    S("reasons", F_STRS, reasons, .n_off = offsetof(struct gg_rsuite, n_reasons)),
};
static const struct table gate_table = {ROWS(gate_rows), 0, NULL};

static const struct field summary_rows[] = {
    S("cases", F_INT, n_counted), S("pass", F_INT, n_pass), S("fail", F_INT, n_fail),
    S("regressed", F_INT, n_regressed), S("skipped", F_INT, n_skipped),
    S("errors", F_INT, n_errors),
};
static const struct table summary_table = {ROWS(summary_rows), 0, NULL};

static const struct field shard_rows[] = {
    S("index", F_INT, shard_index, .absent = A_OMIT),
    S("count", F_INT, shard_count, .absent = A_OMIT),
    S("records", F_INT, shard_records, .absent = A_OMIT),
};
static const struct table shard_table = {ROWS(shard_rows), 0, NULL};

static const struct field suite_rows[] = {
    {.key = "format", .type = F_STR, .required = 1, .fixed_str = GG_SUITE_FORMAT},
    {.key = "version", .type = F_INT, .fixed_int = GG_SUITE_VERSION},
    S("tier", F_STR, tier),
    S("thresholds_version", F_INT, thresholds_version),
    S("ggfuzz_version", F_STR, ggfuzz_version),
    S("started", F_STR, started),
    S("seconds", F_NUM, seconds),
    S("host", F_OBJ, hostname, .sub = &host_table),
    S("kernels", F_STRS, kernels, .n_off = offsetof(struct gg_rsuite, n_kernels)),
    S("plugins", F_STRS, plugins, .n_off = offsetof(struct gg_rsuite, n_plugins)),
    S("mutant", F_STR, mutant, .absent = A_NULL),
    S("gate", F_OBJ, gate_verdict, .sub = &gate_table),
    S("summary", F_OBJ, n_counted, .sub = &summary_table),
    S("shard", F_OBJ, shard_index, .absent = A_OMIT, .sub = &shard_table),
    S("cases", F_RECS, cases, .required = 1, .n_off = offsetof(struct gg_rsuite, n_cases),
      .sub = &case_table),
};
static const struct table suite_table = {ROWS(suite_rows), sizeof(struct gg_rsuite), NULL};

static int fixed(const struct field *f)
{
    return f->fixed_str != NULL || f->fixed_int > 0;
}

/* Places of a field's value and count in rec. */
#define AT(rec, f, T) ((T *)(void *)((char *)(rec) + (f)->off))
#define CAT(rec, f, T) ((const T *)(const void *)((const char *)(rec) + (f)->off))
#define COUNT(rec, f) ((size_t *)(void *)((char *)(rec) + (f)->n_off))
#define CCOUNT(rec, f) (*(const size_t *)(const void *)((const char *)(rec) + (f)->n_off))

/* ---- release and copy ----------------------------------------------------------------------- */

static void free_rec(const struct table *t, void *rec);

static void free_field(const struct field *f, void *rec)
{
    if (fixed(f))
        return;
    switch (f->type) {
    case F_STR:
        free((char *)*AT(rec, f, const char *));
        *AT(rec, f, const char *) = NULL;
        break;
    case F_STRS: {
        const char **a = (const char **)*AT(rec, f, const char *const *);
        for (size_t i = 0; a && i < *COUNT(rec, f); i++)
            free((char *)a[i]);
        free(a);
        *AT(rec, f, const char *const *) = NULL;
        *COUNT(rec, f) = 0;
        break;
    }
    case F_OBJ:
        free_rec(f->sub, rec);
        break;
    case F_RECS: {
        char *a = *AT(rec, f, char *);
        for (size_t i = 0; a && i < *COUNT(rec, f); i++)
            free_rec(f->sub, a + i * f->sub->size);
        free(a);
        *AT(rec, f, char *) = NULL;
        *COUNT(rec, f) = 0;
        break;
    }
    default:
        break;
    }
}

static void free_rec(const struct table *t, void *rec)
{
    for (size_t i = 0; i < t->n_rows; i++)
        free_field(&t->rows[i], rec);
}

static const char *dup_str(const char *s)
{
    return strdup(s ? s : "");
}

static int copy_rec(const struct table *t, void *dst, const void *src);

/* Copies field f of src into dst, whose value for f is taken to be empty. 0, or -1 when out of
   memory (then dst's value for f is empty again). */
static int copy_field(const struct field *f, void *dst, const void *src)
{
    if (fixed(f))
        return 0;
    switch (f->type) {
    case F_STR:
        *AT(dst, f, const char *) = dup_str(*CAT(src, f, char *));
        return *AT(dst, f, const char *) ? 0 : -1;
    case F_INT:
        *AT(dst, f, int64_t) = *CAT(src, f, int64_t);
        return 0;
    case F_NUM:
        *AT(dst, f, struct gg_rnum) = *CAT(src, f, struct gg_rnum);
        return 0;
    case F_BOOL:
        *AT(dst, f, int) = *CAT(src, f, int);
        return 0;
    case F_STRS: {
        size_t n = CCOUNT(src, f);
        const char *const *from = *CAT(src, f, char *const *);
        const char **a = n ? calloc(n, sizeof *a) : NULL;
        if (n && !a)
            return -1;
        *AT(dst, f, const char *const *) = a;
        *COUNT(dst, f) = n;
        for (size_t i = 0; i < n; i++)
            if ((a[i] = dup_str(from[i])) == NULL) {
                free_field(f, dst);
                return -1;
            }
        return 0;
    }
    case F_OBJ:
        return copy_rec(f->sub, dst, src);
    case F_RECS: {
        size_t n = CCOUNT(src, f), size = f->sub->size;
        const char *from = *CAT(src, f, char *);
        char *a = n ? calloc(n, size) : NULL;
        if (n && !a)
            return -1;
        *AT(dst, f, char *) = a;
        *COUNT(dst, f) = 0;
        for (size_t i = 0; i < n; i++) {
            if (copy_rec(f->sub, a + i * size, from + i * size) != 0) {
                free_field(f, dst);
                return -1;
            }
            *COUNT(dst, f) = i + 1;
            if (f->sub->finish)
                f->sub->finish(a + i * size, i);
        }
        return 0;
    }
    }
    return 0;
}

/* Copies every field of t from src into dst (whose fields of t are taken to be empty). 0, or -1
   when out of memory (then they are empty again). */
static int copy_rec(const struct table *t, void *dst, const void *src)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (copy_field(&t->rows[i], dst, src) != 0) {
            for (size_t j = 0; j < i; j++)
                free_field(&t->rows[j], dst);
            return -1;
        }
    return 0;
}

/* ---- the writer ----------------------------------------------------------------------------- */

static const struct field *row_of(const struct table *t, const char *key)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].key, key) == 0)
            return &t->rows[i];
    return NULL;
}

/* Whether field f of rec holds a value (not "", -1 or an unset number). */
static int is_set(const struct field *f, const void *rec)
{
    switch (f->type) {
    case F_STR: {
        const char *s = *CAT(rec, f, char *);
        return s != NULL && s[0] != '\0';
    }
    case F_INT:
        return *CAT(rec, f, int64_t) >= 0;
    case F_NUM: {
        const struct gg_rnum *n = CAT(rec, f, struct gg_rnum);
        return n->set && isfinite(n->v);
    }
    default:
        return 1;
    }
}

static json_t *write_rec(const struct table *t, const void *rec);

/* The JSON value of field f of rec; NULL leaves the key out. */
static json_t *write_field(const struct field *f, const void *rec)
{
    if (f->fixed_str != NULL)
        return json_string(f->fixed_str);
    if (f->fixed_int > 0)
        return json_integer(f->fixed_int);
    if (f->type <= F_NUM && !is_set(f, rec) && f->absent != A_WRITE)
        return f->absent == A_NULL ? json_null() : NULL;
    switch (f->type) {
    case F_STR: {
        const char *s = *CAT(rec, f, char *);
        return json_string(s ? s : "");
    }
    case F_INT:
        return json_integer(*CAT(rec, f, int64_t));
    case F_NUM:
        return json_real(CAT(rec, f, struct gg_rnum)->v);
    case F_BOOL:
        return json_boolean(*CAT(rec, f, int));
    case F_STRS: {
        json_t *a = json_array();
        const char *const *v = *CAT(rec, f, char *const *);
        for (size_t i = 0; a && i < CCOUNT(rec, f); i++)
            json_array_append_new(a, json_string(v[i] ? v[i] : ""));
        return a;
    }
    case F_OBJ: {
        json_t *o = write_rec(f->sub, rec);
        if (o != NULL && f->absent == A_OMIT && json_object_size(o) == 0) {
            json_decref(o); /* every field of it unset: the object is left out */
            return NULL;
        }
        return o;
    }
    case F_RECS: {
        json_t *a = json_array();
        const char *v = *CAT(rec, f, char *);
        for (size_t i = 0; a && i < CCOUNT(rec, f); i++)
            json_array_append_new(a, write_rec(f->sub, v + i * f->sub->size));
        return a;
    }
    }
    return NULL;
}

static json_t *write_rec(const struct table *t, const void *rec)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < t->n_rows; i++) {
        const struct field *f = &t->rows[i];
        if (f->only_with && !is_set(row_of(t, f->only_with), rec))
            continue;
        json_t *v = write_field(f, rec);
        if (v != NULL)
            json_object_set_new(o, f->key, v);
    }
    return o;
}

enum gg_status gg_suite_result_save(const struct gg_rsuite *s, const char *path, char *err,
                                    size_t err_len)
{
    json_t *root = write_rec(&suite_table, s);
    if (root == NULL) {
        snprintf(err, err_len, "%s: cannot write the suite result: out of memory", path);
        return GG_E_NOMEM;
    }
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "the suite result", err, err_len);
    if (st == GG_OK) {
        if (json_dumpf(root, a.f, JSON_INDENT(1)) != 0)
            gg_atomic_fail(&a);
        st = gg_atomic_commit(&a, 0, err, err_len);
    }
    json_decref(root);
    return st;
}

/* ---- the reader ----------------------------------------------------------------------------- */

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

static void read_rec(struct jctx *x, const struct table *t, const json_t *o, void *rec);

/* Sets where to the field key (element i of it, when i is not SIZE_MAX) below outer; a path too
   long for where is cut, still ending in '.'. */
static void descend(struct jctx *x, const char *outer, const char *key, size_t i)
{
    int n = i == SIZE_MAX ? snprintf(x->where, sizeof x->where, "%s%s.", outer, key)
                          : snprintf(x->where, sizeof x->where, "%s%s[%zu].", outer, key, i);
    if (n < 0 || (size_t)n >= sizeof x->where)
        x->where[sizeof x->where - 2] = '.';
}

/* A string: "" when null or absent (absent is an error when required). */
static const char *read_str(struct jctx *x, const struct field *f, const json_t *v)
{
    const char *s = "";
    if (json_is_string(v))
        s = json_string_value(v);
    else if (v == NULL && f->required)
        jfail(x, f->key, "missing (a string is required)", NULL);
    else if (v != NULL && !json_is_null(v))
        jfail(x, f->key, "a string", v);
    if (x->st != GG_OK)
        return s;
    if (f->fixed_str != NULL && strcmp(s, f->fixed_str) != 0) {
        char what[96];
        snprintf(what, sizeof what, "not \"%s\" (not a suite result)", f->fixed_str);
        jfail(x, f->key, what, NULL);
    }
    if (f->one_of != NULL) {
        char what[160] = "not one of ";
        int found = 0;
        for (size_t i = 0; f->one_of[i]; i++) {
            found |= strcmp(s, f->one_of[i]) == 0;
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", i ? ", " : "",
                     f->one_of[i]);
        }
        if (!found)
            jfail(x, f->key, what, NULL);
    }
    return s;
}

/* An array of records: each element an object read with f->sub, then finished. */
static void read_recs(struct jctx *x, const struct field *f, const json_t *v, void *rec)
{
    if (v == NULL || json_is_null(v)) {
        if (f->required)
            jfail(x, f->key, v ? "an array" : "missing (an array is required)", v);
        return;
    }
    if (!json_is_array(v)) {
        jfail(x, f->key, "an array", v);
        return;
    }
    size_t n = json_array_size(v), size = f->sub->size;
    char *a = n ? calloc(n, size) : NULL;
    if (n && !a) {
        jfail(x, f->key, "out of memory", NULL);
        return;
    }
    *AT(rec, f, char *) = a;
    *COUNT(rec, f) = n;
    char where[sizeof x->where];
    memcpy(where, x->where, sizeof where);
    for (size_t i = 0; i < n && x->st == GG_OK; i++) {
        const json_t *e = json_array_get(v, i);
        descend(x, where, f->key, i);
        if (!json_is_object(e)) {
            jfail(x, "", "an object", e);
            break;
        }
        read_rec(x, f->sub, e, a + i * size);
        if (x->st == GG_OK && f->sub->finish)
            f->sub->finish(a + i * size, i);
    }
    memcpy(x->where, where, sizeof where);
}

static void read_field(struct jctx *x, const struct field *f, const json_t *o, void *rec)
{
    const json_t *v = json_object_get(o, f->key);
    switch (f->type) {
    case F_STR: {
        const char *s = read_str(x, f, v);
        if (!fixed(f) && (*AT(rec, f, const char *) = strdup(s)) == NULL)
            jfail(x, f->key, "out of memory", NULL);
        break;
    }
    case F_INT: {
        int64_t n = -1;
        if (json_is_integer(v))
            n = (int64_t)json_integer_value(v);
        else if (v != NULL && !json_is_null(v))
            jfail(x, f->key, "a whole number or null", v);
        if (f->fixed_int > 0 && x->st == GG_OK && n != f->fixed_int) {
            char what[96];
            snprintf(what, sizeof what, "%s %lld is not supported (this ggfuzz reads %lld)",
                     f->key, (long long)n, (long long)f->fixed_int);
            jfail(x, f->key, what, NULL);
        }
        if (!fixed(f))
            *AT(rec, f, int64_t) = n;
        break;
    }
    case F_NUM: {
        struct gg_rnum r = {0, 0};
        if (json_is_number(v))
            r = (struct gg_rnum){json_number_value(v), 1};
        else if (v != NULL && !json_is_null(v))
            jfail(x, f->key, "a number or null", v);
        *AT(rec, f, struct gg_rnum) = r;
        break;
    }
    case F_BOOL:
        if (v != NULL && !json_is_null(v) && !json_is_boolean(v))
            jfail(x, f->key, "true or false", v);
        *AT(rec, f, int) = json_is_true(v);
        break;
    case F_STRS: {
        if (v != NULL && !json_is_null(v) && !json_is_array(v)) {
            jfail(x, f->key, "an array of strings", v);
            break;
        }
        size_t n = json_array_size(v);
        const char **a = n ? calloc(n, sizeof *a) : NULL;
        if (n && !a) {
            jfail(x, f->key, "out of memory", NULL);
            break;
        }
        *AT(rec, f, const char *const *) = a;
        *COUNT(rec, f) = n;
        for (size_t i = 0; i < n && x->st == GG_OK; i++) {
            const json_t *e = json_array_get(v, i);
            char key[64];
            snprintf(key, sizeof key, "%s[%zu]", f->key, i);
            if (!json_is_string(e))
                jfail(x, key, "a string", e);
            else if ((a[i] = strdup(json_string_value(e))) == NULL)
                jfail(x, key, "out of memory", NULL);
        }
        break;
    }
    case F_OBJ: {
        if (v != NULL && !json_is_null(v) && !json_is_object(v))
            jfail(x, f->key, "an object", v);
        else if (v == NULL && f->required)
            jfail(x, f->key, "missing (an object is required)", NULL);
        char where[sizeof x->where];
        memcpy(where, x->where, sizeof where);
        descend(x, where, f->key, SIZE_MAX);
        read_rec(x, f->sub, json_is_object(v) ? v : NULL, rec);
        memcpy(x->where, where, sizeof where);
        break;
    }
    case F_RECS:
        read_recs(x, f, v, rec);
        break;
    }
}

/* Reads every field of t from o (NULL: all absent), stopping at the first error. */
static void read_rec(struct jctx *x, const struct table *t, const json_t *o, void *rec)
{
    for (size_t i = 0; i < t->n_rows && x->st == GG_OK; i++)
        read_field(x, &t->rows[i], o, rec);
}

/* ---- what is derived ------------------------------------------------------------------------ */

static void finish_group(void *rec, size_t i)
{
    struct gg_rgroup *gr = rec;
    if (gr->g < 0)
        gr->g = (int64_t)i;
}

static void finish_case(void *rec, size_t i)
{
    struct gg_rcase *c = rec;
    if (c->reason[0] == '\0' && c->detail[0] != '\0') {
        const char *reason = strdup(c->detail);
        if (reason != NULL) {
            free((char *)c->reason);
            c->reason = reason;
        }
    }
    if (!c->margin_db.set && c->worst_group_snr_db.set && c->threshold_db.set)
        c->margin_db = (struct gg_rnum){c->worst_group_snr_db.v - c->threshold_db.v, 1};
    c->exact = 0;
    for (size_t g = 0; g < c->n_groups && !c->worst_group_snr_db.set; g++)
        c->exact |= c->groups[g].exact;
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

static int verdict_index(const char *v)
{
    for (size_t i = 0; verdicts[i]; i++)
        if (strcmp(v, verdicts[i]) == 0)
            return (int)i;
    return -1;
}

int gg_suite_verdict_bad(const char *verdict)
{
    return strcmp(verdict, "fail") == 0 || strcmp(verdict, "regressed") == 0 ||
           strcmp(verdict, "error") == 0;
}

void gg_suite_result_count(struct gg_rsuite *s)
{
    int64_t *counts[] = {&s->n_pass, &s->n_fail, &s->n_regressed, &s->n_skipped, &s->n_errors};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        *counts[i] = 0;
    for (size_t i = 0; i < s->n_cases; i++) {
        int v = verdict_index(s->cases[i].verdict);
        if (v >= 0)
            (*counts[v])++;
    }
    s->n_counted = (int64_t)s->n_cases;
}

/* ---- a result ------------------------------------------------------------------------------- */

enum gg_status gg_suite_result_load(const char *path, struct gg_rsuite *s, char *err,
                                    size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    char *text;
    size_t len;
    enum gg_status st = gg_file_read(path, RESULT_MAX_BYTES, &text, &len, err, err_len);
    if (st != GG_OK)
        return st;
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    free(text);
    if (root == NULL) {
        snprintf(err, err_len, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
        return GG_E_PARSE;
    }
    struct jctx x = {.path = path, .err = err, .err_len = err_len, .st = GG_OK};
    if (!json_is_object(root))
        jfail(&x, "(top level)", "an object", root);
    else
        read_rec(&x, &suite_table, root, s);
    json_decref(root);
    if (x.st != GG_OK)
        return x.st;
    gg_suite_result_count(s);
    if (s->gate_verdict[0] == '\0') {
        int bad = s->n_fail + s->n_regressed + s->n_errors > 0;
        if (gg_suite_result_set(&s->gate_verdict, bad ? "fail" : "pass") != GG_OK) {
            snprintf(err, err_len, "%s: out of memory", path);
            return GG_E_NOMEM;
        }
    }
    return GG_OK;
}

enum gg_status gg_suite_result_add(struct gg_rsuite *s, const struct gg_rcase *c)
{
    struct gg_rcase *cases = realloc(s->cases, (s->n_cases + 1) * sizeof *cases);
    if (cases == NULL)
        return GG_E_NOMEM;
    s->cases = cases;
    struct gg_rcase *dst = &cases[s->n_cases];
    memset(dst, 0, sizeof *dst);
    if (copy_rec(&case_table, dst, c) != 0)
        return GG_E_NOMEM;
    finish_case(dst, s->n_cases++);
    return GG_OK;
}

enum gg_status gg_suite_result_set_header(struct gg_rsuite *s, const struct gg_rsuite *h)
{
    enum gg_status st = GG_OK;
    for (size_t i = 0; i < suite_table.n_rows; i++) {
        const struct field *f = &suite_table.rows[i];
        if (f->type == F_RECS || f->sub == &summary_table)
            continue;
        free_field(f, s);
        if (st == GG_OK && copy_field(f, s, h) != 0)
            st = GG_E_NOMEM;
    }
    return st;
}

enum gg_status gg_suite_result_set(const char **field, const char *value)
{
    const char *copy = dup_str(value);
    if (copy == NULL)
        return GG_E_NOMEM;
    free((char *)*field);
    *field = copy;
    return GG_OK;
}

const struct gg_rcase *gg_suite_result_find(const struct gg_rsuite *s, const char *id,
                                            const char *kernel)
{
    for (size_t i = 0; i < s->n_cases; i++)
        if (strcmp(s->cases[i].id, id) == 0 && strcmp(s->cases[i].kernel, kernel) == 0)
            return &s->cases[i];
    return NULL;
}

void gg_suite_result_free(struct gg_rsuite *s)
{
    free_rec(&suite_table, s);
    memset(s, 0, sizeof *s);
}

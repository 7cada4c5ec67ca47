/*
 * gg_stats_files.c — the two files a campaign leaves beside its findings store to tell of its
 * progress, written by the campaign and read back by `ggfuzz report`: `fuzzer_stats`, AFL's
 * `key : value` lines (the keys padded to one column, rewritten atomically), and `plot_data`, a
 * CSV time series under a `# name, name, ...` header (one row appended per tick). One table of
 * columns gives plot_data's header, the precision of each value and the reader's map.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/store/gg_store.h"

#define STATS_KEY_WIDTH 18 /* fuzzer_stats keys are padded to this many columns */
#define PLOT_MAX_COLUMNS 64 /* values of one plot_data row the reader accepts */
/* Bytes the readers accept: fuzzer_stats holds a few dozen lines; plot_data a row of about 100
   bytes per tick, so 64 MiB is years of ticks. */
#define STATS_MAX_BYTES (1L << 20)
#define PLOT_MAX_BYTES (64L << 20)

/* plot_data's columns in file order, with the decimals each value is written with. */
static const struct {
    const char *name;
    int decimals;
} plot_columns[GG_PLOT_COLUMNS] = {
    [GG_PLOT_RELATIVE_TIME] = {"relative_time", 1},
    [GG_PLOT_EXECS_DONE] = {"execs_done", 0},
    [GG_PLOT_EXECS_PER_SEC] = {"execs_per_sec", 1},
    [GG_PLOT_CORPUS_COUNT] = {"corpus_count", 0},
    [GG_PLOT_FEATURES_TOTAL] = {"features_total", 0},
    [GG_PLOT_FAULTS_TOTAL] = {"faults_total", 0},
    [GG_PLOT_FAULTS_UNIQUE] = {"faults_unique", 0},
    [GG_PLOT_FAULTS_NEW] = {"faults_new", 0},
    [GG_PLOT_WORKER_RESTARTS] = {"worker_restarts", 0},
    [GG_PLOT_TIMEOUTS] = {"timeouts", 0},
    [GG_PLOT_MIN_SNR_MARGIN_DB] = {"min_snr_margin_db", 2},
    [GG_PLOT_MAX_OFFSET_BITS] = {"max_offset_bits", 0},
    [GG_PLOT_BUCKETS] = {"buckets", 0},
    [GG_PLOT_BUCKETS_NEW] = {"buckets_new", 0},
};

/* dir/name into out; 0, or -1 (with the message) when it does not fit. */
static int file_path(char *out, size_t len, const char *dir, const char *name, char *err,
                     size_t err_len)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    if (n > 0 && (size_t)n < len)
        return 0;
    snprintf(err, err_len, "%s: path too long", dir);
    return -1;
}

/* Reads a line-oriented file of at most max bytes, and allocates *records: one zeroed record of size bytes per line
   (a bound on the records the text holds). */
static enum gg_status read_records(const char *path, size_t max, char **text, void **records,
                                   size_t size, char *err, size_t err_len)
{
    enum gg_status st = gg_file_read(path, max, text, NULL, err, err_len);
    if (st != GG_OK)
        return st;
    size_t lines = 1;
    for (const char *p = *text; *p; p++)
        lines += *p == '\n';
    if ((*records = calloc(lines, size)) == NULL) {
        free(*text);
        snprintf(err, err_len, "%s: out of memory", path);
        return GG_E_NOMEM;
    }
    return GG_OK;
}

/* ---- fuzzer_stats -------------------------------------------------------------------------- */

enum gg_status gg_fuzzer_stats_add(struct gg_fuzzer_stats *s, const char *key, const char *fmt,
                                   ...)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        struct gg_stat *grown = realloc(s->kv, cap * sizeof *grown);
        if (grown == NULL)
            return GG_E_NOMEM;
        s->kv = grown;
        s->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *value = NULL;
    int n = vasprintf(&value, fmt, ap);
    va_end(ap);
    char *k = n >= 0 ? strdup(key) : NULL;
    if (k == NULL) {
        if (n >= 0)
            free(value);
        return GG_E_NOMEM;
    }
    s->kv[s->n++] = (struct gg_stat){k, value};
    return GG_OK;
}

const char *gg_fuzzer_stats_get(const struct gg_fuzzer_stats *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->kv[i].key, key) == 0)
            return s->kv[i].value;
    return NULL;
}

const struct gg_case_phase gg_case_phases[GG_CASE_PHASES] = {
    {"case_ms_worker", "worker", 0},
    {"case_ms_setup", "setup", 0},
    {"case_ms_device_buffers", "device buffers", 1},
    {"case_ms_inputs", "inputs", 1},
    {"case_ms_runs", "runs", 0},
    {"case_ms_kernel", "the kernel", 0},
    {"case_ms_reference", "reference", 0},
    {"case_ms_compare", "compare", 0},
    {"case_ms_release", "release", 0}};

void gg_fuzzer_stats_free(struct gg_fuzzer_stats *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->kv[i].key);
        free(s->kv[i].value);
    }
    free(s->kv);
    memset(s, 0, sizeof *s);
}

enum gg_status gg_fuzzer_stats_write(const char *dir, const struct gg_fuzzer_stats *s, char *err,
                                     size_t err_len)
{
    char path[4096];
    if (file_path(path, sizeof path, dir, GG_FUZZER_STATS_FILE, err, err_len) != 0)
        return GG_E_INVAL;
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "", err, err_len);
    if (st != GG_OK)
        return st;
    for (size_t i = 0; i < s->n; i++)
        fprintf(a.f, "%-*s: %s\n", STATS_KEY_WIDTH, s->kv[i].key, s->kv[i].value);
    return gg_atomic_commit(&a, 0, err, err_len);
}

enum gg_status gg_fuzzer_stats_read(const char *path, struct gg_fuzzer_stats *s, char *err,
                                    size_t err_len)
{
    memset(s, 0, sizeof *s);
    char *text;
    void *records;
    enum gg_status st = read_records(path, STATS_MAX_BYTES, &text, &records, sizeof *s->kv, err,
                                      err_len);
    if (st != GG_OK)
        return st;
    s->kv = records;
    int line_no = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && st == GG_OK;
         line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char *colon = strchr(line, ':');
        if (gg_trim(line)[0] == '\0')
            continue;
        if (colon == NULL) {
            snprintf(err, err_len, "%s:%d: not a 'key : value' line", path, line_no);
            st = GG_E_PARSE;
            break;
        }
        *colon = '\0';
        struct gg_stat *kv = &s->kv[s->n];
        kv->key = strdup(gg_trim(line));
        kv->value = strdup(gg_trim(colon + 1));
        s->n++;
        if (kv->key == NULL || kv->value == NULL) {
            snprintf(err, err_len, "%s: out of memory", path);
            st = GG_E_NOMEM;
        }
    }
    s->cap = s->n;
    free(text);
    return st;
}

/* ---- plot_data ----------------------------------------------------------------------------- */

enum gg_status gg_plot_data_append(const char *dir, const struct gg_plot_row *r, char *err,
                                   size_t err_len)
{
    char path[4096];
    if (file_path(path, sizeof path, dir, GG_PLOT_DATA_FILE, err, err_len) != 0)
        return GG_E_INVAL;
    struct stat sb;
    int fresh = stat(path, &sb) != 0 || sb.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return GG_E_IO;
    }
    for (int i = 0; fresh && i < GG_PLOT_COLUMNS; i++)
        fprintf(f, "%s%s", i ? ", " : "# ", plot_columns[i].name);
    if (fresh)
        fputc('\n', f);
    for (int i = 0; i < GG_PLOT_COLUMNS; i++)
        fprintf(f, "%s%.*f", i ? ", " : "", plot_columns[i].decimals, r->v[i]);
    fputc('\n', f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return GG_E_IO;
    }
    return GG_OK;
}

/* Maps the header's columns to plot_columns (map[i] = column of plot_columns[i], or -1); 0 when
   it names the time and executions columns. */
static int read_plot_header(char *line, int map[GG_PLOT_COLUMNS], int *n_cols)
{
    for (size_t i = 0; i < GG_PLOT_COLUMNS; i++)
        map[i] = -1;
    *n_cols = 0;
    char *save = NULL;
    for (char *name = strtok_r(line + 1, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        name = gg_trim(name);
        for (size_t i = 0; i < GG_PLOT_COLUMNS; i++)
            if (strcmp(name, plot_columns[i].name) == 0)
                map[i] = *n_cols;
        (*n_cols)++;
    }
    return map[GG_PLOT_RELATIVE_TIME] >= 0 && map[GG_PLOT_EXECS_DONE] >= 0 ? 0 : -1;
}

static enum gg_status read_plot_row(char *line, const int map[GG_PLOT_COLUMNS], int n_cols,
                                    struct gg_plot_row *r)
{
    double vals[PLOT_MAX_COLUMNS];
    int n = 0;
    char *save = NULL;
    for (char *f = strtok_r(line, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
        char *end;
        f = gg_trim(f);
        if (n >= PLOT_MAX_COLUMNS)
            return GG_E_PARSE;
        vals[n] = strtod(f, &end);
        if (end == f || *end != '\0')
            return GG_E_PARSE;
        n++;
    }
    if (n != n_cols)
        return GG_E_PARSE;
    for (size_t i = 0; i < GG_PLOT_COLUMNS; i++)
        r->v[i] = map[i] >= 0 ? vals[map[i]] : NAN;
    return GG_OK;
}

enum gg_status gg_plot_data_read(const char *path, struct gg_plot_row **rows, size_t *n_rows,
                                 char *err, size_t err_len)
{
    char *text;
    void *records;
    *n_rows = 0;
    enum gg_status st = read_records(path, PLOT_MAX_BYTES, &text, &records, sizeof **rows, err,
                                      err_len);
    *rows = st == GG_OK ? records : NULL;
    if (st != GG_OK)
        return st;
    int map[GG_PLOT_COLUMNS], n_cols = 0, have_header = 0, line_no = 0;
    char *rest = text;
    for (char *line = rest; st == GG_OK && line != NULL; line = rest) {
        rest = strchr(line, '\n');
        if (rest != NULL)
            *rest++ = '\0';
        line_no++;
        if (gg_trim(line)[0] == '\0')
            continue;
        if (line[0] == '#') {
            if (!have_header && read_plot_header(line, map, &n_cols) != 0) {
                snprintf(err, err_len, "%s:%d: the header names no %s and %s columns", path,
                         line_no, plot_columns[GG_PLOT_RELATIVE_TIME].name,
                         plot_columns[GG_PLOT_EXECS_DONE].name);
                st = GG_E_PARSE;
            }
            have_header = 1;
        } else if (!have_header) {
            snprintf(err, err_len, "%s:%d: data before the '# %s, ...' header", path, line_no,
                     plot_columns[0].name);
            st = GG_E_PARSE;
        } else if (read_plot_row(line, map, n_cols, &(*rows)[*n_rows]) != GG_OK) {
            snprintf(err, err_len, "%s:%d: expected %d comma-separated numbers", path, line_no,
                     n_cols);
            st = GG_E_PARSE;
        } else {
            (*n_rows)++;
        }
    }
    free(text);
    return st;
}

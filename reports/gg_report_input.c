/*
 * gg_report_input.c — reads what `ggfuzz report` shows of a campaign directory (fuzzer_stats,
 * the plot_data time series and the findings store, one case file per signature, through the
 * store's readers of those formats), and the orders and summaries the writers share (the worst
 * cases of a suite result, groups by SNR, the replay command). Nothing here writes.
 */
#include <ctype.h>
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

/* Reads one finding file; a case that does not parse, or a file that cannot be read (not a
   regular file, too large), is still listed, with the parser's or the reader's message. */
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
    size_t len = 0;
    char rerr[512];
    enum gg_status st = gg_file_read(f->path, (size_t)GG_CASE_FILE_MAX, &f->text, &len, rerr,
                                     sizeof rerr);
    if (st == GG_E_IO) {
        f->text = strdup("");
        f->parse_error = strdup(rerr);
        st = f->text && f->parse_error ? GG_OK : GG_E_NOMEM;
    }
    if (st != GG_OK) {
        snprintf(err, err_len, "%s: out of memory", f->path);
        return st;
    }
    char real[PATH_MAX];
    f->replay = strdup(realpath(f->path, real) ? real : f->path);
    snprintf(f->cls, sizeof f->cls, "%.*s", (int)(strrchr(name, '-') - name), name);
    finding_meta(f);
    struct gg_case c;
    char perr[512];
    gg_case_init(&c);
    if (f->parse_error == NULL && gg_case_parse(f->text, len, f->path, &c, perr, sizeof perr) ==
                                      GG_OK) {
        gg_report_shape(&c, f->shape, sizeof f->shape);
        f->n_after = gg_case_after_count(&c);
    } else if (f->parse_error == NULL)
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
    const char *recorded = gg_report_stat(c, "artifacts");
    if (recorded && recorded[0] && gg_path_is_dir(recorded))
        return (c->findings_dir = strdup(recorded)) != NULL ? GG_OK : GG_E_NOMEM;
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

const char *const gg_report_gpu_columns[GG_REPORT_GPU_COLUMNS][2] = {
    {"workers", "workers"},         {"execs_done", "executions"},
    {"execs_per_sec", "executions / s"}, {"faults_total", "faults"},
    {"faults_new", "new signatures"}, {"worker_restarts", "worker restarts"}};

size_t gg_report_gpus(const struct gg_rcampaign *c, int *ids, size_t max)
{
    const char *list = gg_report_stat(c, "gpus");
    size_t n = 0;
    for (const char *p = list; p && *p && n < max;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        ids[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

const char *gg_report_gpu_stat(const struct gg_rcampaign *c, int ordinal, const char *key)
{
    char k[96];
    snprintf(k, sizeof k, "gpu%d_%s", ordinal, key);
    return gg_report_stat(c, k);
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

void gg_report_replay_cmd(const struct gg_rcampaign *c, const char *path, char *buf,
                          size_t len)
{
    const char *prefix = c ? gg_report_stat(c, "replay_command") : NULL;
    snprintf(buf, len, "%s", prefix && prefix[0] ? prefix : "ggfuzz --replay");
    gg_shell_word(buf, len, path);
}

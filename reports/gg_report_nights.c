/*
 * gg_report_nights.c — the trend across nights: which campaign directories a history directory
 * holds, each night's numbers (cases, signatures, bugs and its buckets' ids) from its statistics
 * and its findings store, and which bugs are new on a night: those whose bucket no earlier night
 * of the report holds (bucket ids are hashes of the bug's form, the same on every night).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

/* A directory under the history that a campaign left: its statistics, its store or its shards. */
static int is_night(const char *history, const char *name)
{
    char *dir = gg_path_join(history, name);
    char *stats = dir ? gg_path_join(dir, GG_FUZZER_STATS_FILE) : NULL;
    char *store = dir ? gg_path_join(dir, "artifacts") : NULL;
    int yes = stats && store && gg_path_is_dir(dir) &&
              (gg_path_is_file(stats) || gg_path_is_dir(store));
    if (dir && !yes && gg_path_is_dir(dir)) {
        int *idx = NULL;
        size_t n = 0;
        char err[256];
        yes = gg_shard_list(dir, &idx, &n, err, sizeof err) == GG_OK && n > 0;
        free(idx);
    }
    free(stats);
    free(store);
    free(dir);
    return yes;
}

static double stat_num(const struct gg_rcampaign *c, const char *key)
{
    const char *v = gg_report_stat(c, key);
    char *end;
    double d = v ? strtod(v, &end) : NAN;
    return v && end != v ? d : NAN;
}

static long long stat_count(const struct gg_rcampaign *c, const char *key)
{
    double d = stat_num(c, key);
    return isfinite(d) && d >= 0 && d < 9.2e18 ? (long long)d : -1;
}

/* The label of a night: its start to the minute, else its directory's base name. */
static void night_label(struct gg_rnight *n)
{
    if (n->start[0]) {
        snprintf(n->label, sizeof n->label, "%.16s", n->start);
        char *t = strchr(n->label, 'T');
        if (t)
            *t = ' ';
        return;
    }
    size_t len = strlen(n->dir);
    while (len > 1 && n->dir[len - 1] == '/')
        len--;
    size_t at = len;
    while (at > 0 && n->dir[at - 1] != '/')
        at--;
    snprintf(n->label, sizeof n->label, "%.*s", (int)(len - at), n->dir + at);
}

/* The numbers of night n from campaign c (loaded in full or as a summary). */
static enum gg_status night_of(struct gg_rnight *n, const struct gg_rcampaign *c)
{
    const char *start = gg_report_stat(c, "start_time"), *kernel = gg_report_stat(c, "kernel"),
               *mutant = gg_report_stat(c, "mutant");
    snprintf(n->start, sizeof n->start, "%s", start ? start : "");
    snprintf(n->kernel, sizeof n->kernel, "%s", kernel ? kernel : "");
    snprintf(n->mutant, sizeof n->mutant, "%s",
             mutant && strcmp(mutant, "none") != 0 ? mutant : "");
    night_label(n);
    n->run_time = stat_num(c, "run_time");
    n->rate = stat_num(c, "execs_per_sec");
    n->cases = stat_count(c, "execs_done");
    n->store = c->findings_dir != NULL;
    if (!n->store) {
        n->signatures = stat_count(c, "faults_unique");
        n->untriaged = stat_count(c, "untriaged");
        n->buckets = stat_count(c, "buckets");
        n->buckets_new = stat_count(c, "buckets_new");
        return GG_OK;
    }
    const struct gg_bucket_list *l = &c->buckets;
    n->signatures = c->n_findings ? (long long)c->n_findings : (long long)l->n_members;
    n->untriaged = c->n_findings ? (long long)c->n_untriaged : l->untriaged;
    n->buckets = (long long)l->n;
    n->buckets_new = -1;
    if (l->n > 0 && (n->ids = malloc(l->n * sizeof *n->ids)) == NULL)
        return GG_E_NOMEM;
    for (size_t k = 0; k < l->n; k++)
        memcpy(n->ids[k], l->b[k].id, sizeof n->ids[k]);
    n->n_ids = l->n;
    return GG_OK;
}

static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int cmp_night(const void *pa, const void *pb)
{
    const struct gg_rnight *a = pa, *b = pb;
    int c = strcmp(a->start, b->start);
    return c ? c : strcmp(a->dir, b->dir);
}

/* A night of the history that is none of the loaded campaigns: read as a summary; one that
   cannot be read keeps the reason. */
static enum gg_status read_night(struct gg_rnight *n)
{
    struct gg_rcampaign c;
    char msg[2048];
    enum gg_status st = gg_report_campaign_load_summary(n->dir, &c, msg, sizeof msg);
    if (st == GG_OK)
        st = night_of(n, &c);
    else if (st != GG_E_NOMEM)
        st = (n->error = strdup(msg)) ? GG_OK : GG_E_NOMEM;
    if (n->error)
        night_label(n);
    gg_report_campaign_free(&c);
    return st;
}

enum gg_status gg_report_nights_build(const char *history, const struct gg_rcampaign *camps,
                                      size_t n, struct gg_rnights *t, char *err, size_t err_len)
{
    memset(t, 0, sizeof *t);
    t->history = history;
    t->given = n;
    char **names = NULL;
    size_t nn = 0;
    enum gg_status st = GG_OK;
    if (history && (st = gg_dir_list(history, is_night, &names, &nn, err, err_len)) != GG_OK)
        return st;
    if (nn > GG_REPORT_NIGHTS_MAX) {
        snprintf(err, err_len, "%s: %zu campaign directories, more than the %d one trend shows",
                 history, nn, GG_REPORT_NIGHTS_MAX);
        gg_dir_list_free(names, nn);
        return GG_E_PARSE;
    }
    int used[GG_REPORT_CAMPAIGNS_MAX] = {0};
    if (nn + n > 0 && (t->n = calloc(nn + n, sizeof *t->n)) == NULL)
        st = GG_E_NOMEM;
    for (size_t i = 0; i < nn + n && st == GG_OK; i++) {
        struct gg_rnight *night = &t->n[t->count];
        long shown = -1;
        if (i < nn) {
            night->dir = gg_path_join(history, names[i]);
            for (size_t j = 0; j < n && shown < 0 && night->dir; j++)
                if (!used[j] && same_dir(night->dir, camps[j].dir))
                    shown = (long)j;
        } else if (!used[i - nn]) {
            shown = (long)(i - nn);
            night->dir = strdup(camps[shown].dir);
        } else {
            continue;
        }
        t->count++;
        night->campaign = (int)shown;
        if (night->dir == NULL)
            st = GG_E_NOMEM;
        else if (shown >= 0)
            st = night_of(night, &camps[shown]);
        else
            st = read_night(night);
        if (shown >= 0)
            used[shown] = 1;
    }
    gg_dir_list_free(names, nn);
    if (st == GG_E_NOMEM)
        snprintf(err, err_len, "%s: out of memory reading the nights", history ? history : "");
    if (st == GG_OK && t->count > 1)
        qsort(t->n, t->count, sizeof *t->n, cmp_night);
    return st;
}

long gg_report_nights_latest(const struct gg_rnights *t)
{
    for (size_t k = t->count; k > 0; k--)
        if (t->n[k - 1].error == NULL)
            return (long)(k - 1);
    return -1;
}

/* 1 when a night before the k-th holds bucket id. */
static int held_before(const struct gg_rnights *t, size_t k, const char *id)
{
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < t->n[j].n_ids; i++)
            if (strcmp(t->n[j].ids[i], id) == 0)
                return 1;
    return 0;
}

void gg_report_nights_mark(struct gg_rnights *t, struct gg_rcampaign *camps)
{
    for (size_t k = 0; k < t->count; k++) {
        struct gg_rnight *night = &t->n[k];
        if (night->store) {
            night->buckets_new = 0;
            for (size_t i = 0; i < night->n_ids; i++)
                night->buckets_new += !held_before(t, k, night->ids[i]);
        }
        if (night->campaign < 0)
            continue;
        struct gg_rcampaign *c = &camps[night->campaign];
        for (size_t b = 0; b < c->n_bugs; b++)
            c->bugs[b].new_tonight = k == 0 ? -1 : !held_before(t, k, c->bugs[b].b->id);
    }
}

void gg_report_nights_free(struct gg_rnights *t)
{
    for (size_t k = 0; k < t->count; k++) {
        free(t->n[k].dir);
        free(t->n[k].ids);
        free(t->n[k].error);
    }
    free(t->n);
    memset(t, 0, sizeof *t);
}

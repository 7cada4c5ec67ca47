/*
 * gg_report_input.c — reads what `ggfuzz report` shows of a campaign directory (fuzzer_stats,
 * summed over its shards when it ran as shards, the plot_data time series and the findings
 * store, one case file per signature, with its buckets, through the store's readers of those
 * formats), sorts the findings into the bugs (buckets) they belong to and the untriaged rest,
 * and the orders and summaries the writers share (the worst cases of a suite result, groups by
 * SNR, the replay command). Nothing here writes.
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

#include "fuzz/gen/gg_gen.h"
#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

/* Order of the worst cases: gate-failing verdicts first, then by margin (unknown last). */
static int worse(const struct gg_rcase *a, const struct gg_rcase *b)
{
    int ba = gg_suite_verdict_bad(a->verdict), bb = gg_suite_verdict_bad(b->verdict);
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
        } else if (strcmp(copy, "bucket") == 0) {
            gg_meta_field(rest, "id", f->bucket, sizeof f->bucket);
        } else if (strcmp(copy, "gpu") == 0 && isdigit((unsigned char)rest[0])) {
            f->gpu = atoi(rest);
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
    f->gpu = -1;
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
        gg_case_shape(&c, f->shape, sizeof f->shape);
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

/* ---- a campaign run as shards --------------------------------------------------------------- */

/* How a shard's statistic goes into its campaign's: 's' summed (each shard counts its own cases
   and faults), 'f' summed class by class (a freedom's coverage line), '<' the earliest, '>' the
   latest or longest, '=' the first shard's; 0 left out (a shard's seed, place and command, what
   the merged store tells better: signatures and buckets, and the freedoms' totals, which the
   report counts from the summed lines). */
static char shard_rule(const char *key)
{
    static const char *const summed[] = {
        "workers", "execs_done", "execs_per_sec", "replayed", "possibly_fixed", "faults_total",
        "worker_restarts", "worker_kills", "crashes_unconfirmed", "faults_history",
        "faults_unconfirmed", "timeouts", "refused", "errors", "minimized", "imported"};
    static const char *const first[] = {"replay_command", "ggfuzz_version", "kernel", "mutant"};
    for (size_t i = 0; i < sizeof summed / sizeof *summed; i++)
        if (strcmp(key, summed[i]) == 0)
            return 's';
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        if (strcmp(key, first[i]) == 0)
            return '=';
    if (strncmp(key, "faults_", 7) == 0 && gg_class_from_name(key + 7) != GG_CLASS_COUNT)
        return 's';
    if (strncmp(key, "freedom_", 8) == 0)
        return 'f';
    if (strcmp(key, "start_time") == 0)
        return '<';
    if (strcmp(key, "last_update") == 0 || strcmp(key, "run_time") == 0)
        return '>';
    return 0;
}

/* Folds one shard's statistics into the campaign's (keys in the order first met). */
static enum gg_status shard_fold(struct gg_fuzzer_stats *s, const struct gg_fuzzer_stats *shard)
{
    enum gg_status st = GG_OK;
    for (size_t i = 0; i < shard->n && st == GG_OK; i++) {
        const char *k = shard->kv[i].key, *v = shard->kv[i].value;
        char rule = shard_rule(k);
        if (rule == 0)
            continue;
        struct gg_stat *have = NULL;
        for (size_t j = 0; j < s->n && have == NULL; j++)
            if (strcmp(s->kv[j].key, k) == 0)
                have = &s->kv[j];
        if (have == NULL) {
            st = gg_fuzzer_stats_add(s, k, "%s", v);
            continue;
        }
        char sum[512];
        const char *keep = NULL;
        if (rule == 'f') {
            keep = gg_freedom_cells_fold(have->value, v, sum, sizeof sum) == 0 ? sum : NULL;
        } else if (rule == 's') {
            snprintf(sum, sizeof sum, "%.15g", strtod(have->value, NULL) + strtod(v, NULL));
            keep = sum;
        } else if (rule == '<' || rule == '>') {
            /* ISO 8601 stamps order as strings; run times as numbers. */
            int later = strcmp(k, "run_time") == 0 ? strtod(v, NULL) > strtod(have->value, NULL)
                                                   : strcmp(v, have->value) > 0;
            keep = (rule == '>') == later ? v : NULL;
        }
        if (keep != NULL) {
            char *copy = strdup(keep);
            if (copy == NULL)
                return GG_E_NOMEM;
            free(have->value);
            have->value = copy;
        }
    }
    return st;
}

/* The statistics of a campaign directory of shards, one shard's fuzzer_stats after the other;
   c->shards says how many were read (0: dir has no shard with statistics). */
static enum gg_status shard_stats(struct gg_rcampaign *c, const char *dir, char *err,
                                  size_t err_len)
{
    int *idx = NULL;
    size_t n = 0;
    if (gg_shard_list(dir, &idx, &n, err, err_len) != GG_OK)
        n = 0; /* not listable: not a campaign of shards */
    enum gg_status st = GG_OK;
    for (size_t i = 0; i < n && st == GG_OK; i++) {
        char sdir[4096];
        gg_shard_dir(dir, idx[i], sdir, sizeof sdir);
        char *path = gg_path_join(sdir, GG_FUZZER_STATS_FILE);
        struct gg_fuzzer_stats one = {0};
        if (path == NULL)
            st = GG_E_NOMEM;
        else if (gg_path_is_file(path) &&
                 (st = gg_fuzzer_stats_read(path, &one, err, err_len)) == GG_OK) {
            st = shard_fold(&c->stats, &one);
            c->shards += st == GG_OK;
        }
        gg_fuzzer_stats_free(&one);
        free(path);
    }
    free(idx);
    if (st == GG_OK && c->shards > 0)
        st = gg_fuzzer_stats_add(&c->stats, "shards", "%d", c->shards);
    if (st == GG_E_NOMEM)
        snprintf(err, err_len, "%s: out of memory", dir);
    return st;
}

/* ---- bugs and untriaged signatures --------------------------------------------------------- */

/* The rest of the first line "@key ..." of a case file's text (malloc'd), or NULL. */
static char *meta_of(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *line = text, *next; *line; line = next) {
        size_t len = strcspn(line, "\n");
        next = line + len + (line[len] == '\n');
        if (line[0] == '@' && len > klen && strncmp(line + 1, key, klen) == 0 &&
            (line[klen + 1] == ' ' || line[klen + 1] == '\t')) {
            const char *v = line + klen + 1;
            size_t vlen = len - klen - 1;
            for (; vlen > 0 && (*v == ' ' || *v == '\t'); v++)
                vlen--;
            char *copy = strndup(v, vlen);
            if (copy != NULL)
                gg_trim(copy); /* no leading blank left: cuts the trailing ones in place */
            return copy;
        }
    }
    return NULL;
}

/* Reads bug r's representative: its text, shape, @observed and the kernel and mutant of its
   @bucket line. A file that cannot be read or parsed keeps the reader's message. */
static enum gg_status read_representative(struct gg_rbucket *r)
{
    size_t len = 0;
    char msg[512];
    enum gg_status st = gg_file_read(r->b->path, (size_t)GG_CASE_FILE_MAX, &r->text, &len, msg,
                                     sizeof msg);
    if (st == GG_E_IO) {
        r->text = strdup("");
        r->read_error = strdup(msg);
        st = r->text && r->read_error ? GG_OK : GG_E_NOMEM;
    }
    if (st != GG_OK)
        return st;
    struct gg_case c;
    gg_case_init(&c);
    if (r->read_error == NULL && gg_case_parse(r->text, len, r->b->path, &c, msg, sizeof msg) ==
                                     GG_OK)
        gg_case_shape(&c, r->shape, sizeof r->shape);
    else if (r->read_error == NULL && (r->read_error = strdup(msg)) == NULL)
        st = GG_E_NOMEM;
    gg_case_free(&c);
    char *observed = meta_of(r->text, "observed"), *line = meta_of(r->text, "bucket");
    r->observed = observed ? observed : strdup("");
    if (line != NULL) {
        gg_meta_field(line, "kernel", r->kernel, sizeof r->kernel);
        gg_meta_field(line, "mutant", r->mutant, sizeof r->mutant);
    }
    free(line);
    return st == GG_OK && r->observed ? GG_OK : GG_E_NOMEM;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* What r takes from its members: the GPUs they were found on, and the kernel and mutant when its
   representative does not name them. */
static void member_facts(const struct gg_rcampaign *c, struct gg_rbucket *r)
{
    int gpus[64];
    size_t n = 0;
    for (size_t i = 0; i < r->n_members && n < sizeof gpus / sizeof *gpus; i++)
        if (c->findings[r->members[i]].gpu >= 0)
            gpus[n++] = c->findings[r->members[i]].gpu;
    qsort(gpus, n, sizeof *gpus, cmp_int);
    size_t at = 0;
    for (size_t i = 0; i < n && at < sizeof r->gpus; i++)
        if (i == 0 || gpus[i] != gpus[i - 1])
            at += (size_t)snprintf(r->gpus + at, sizeof r->gpus - at, "%s%d", at ? ", " : "",
                                   gpus[i]);
    if (r->kernel[0] == '\0' && r->n_members > 0) {
        const struct gg_finding *m = &c->findings[r->members[0]].meta;
        snprintf(r->kernel, sizeof r->kernel, "%s", m->kernel);
        snprintf(r->mutant, sizeof r->mutant, "%s", m->mutant);
    }
}

/* Sorts the findings into c's bugs, by the bucket their @bucket line names, and the untriaged
   ones: no @bucket line, or a bucket without a representative. Both keep the findings' order. */
static enum gg_status sort_into_bugs(struct gg_rcampaign *c)
{
    size_t nb = c->buckets.n, nf = c->n_findings;
    long *of = nf ? malloc(nf * sizeof *of) : NULL;
    c->bugs = nb ? calloc(nb, sizeof *c->bugs) : NULL;
    c->untriaged = nf ? malloc(nf * sizeof *c->untriaged) : NULL;
    if ((nf && (of == NULL || c->untriaged == NULL)) || (nb && c->bugs == NULL)) {
        free(of);
        return GG_E_NOMEM;
    }
    c->n_bugs = nb;
    for (size_t k = 0; k < nb; k++)
        c->bugs[k].b = &c->buckets.b[k];
    for (size_t i = 0; i < nf; i++) {
        of[i] = -1;
        for (size_t k = 0; k < nb && of[i] < 0 && c->findings[i].bucket[0]; k++)
            if (strcmp(c->buckets.b[k].id, c->findings[i].bucket) == 0)
                of[i] = (long)k;
        if (of[i] < 0)
            c->untriaged[c->n_untriaged++] = i;
        else
            c->bugs[of[i]].n_members++;
    }
    enum gg_status st = GG_OK;
    for (size_t k = 0; k < nb && st == GG_OK; k++) {
        struct gg_rbucket *r = &c->bugs[k];
        r->new_tonight = -1;
        size_t want = r->n_members;
        r->n_members = 0;
        if (want > 0 && (r->members = malloc(want * sizeof *r->members)) == NULL) {
            st = GG_E_NOMEM;
            break;
        }
        for (size_t i = 0; i < nf; i++)
            if (of[i] == (long)k)
                r->members[r->n_members++] = i;
        if ((st = read_representative(r)) == GG_OK)
            member_facts(c, r);
    }
    free(of);
    return st;
}

/* ---- loading ------------------------------------------------------------------------------- */

static enum gg_status load(const char *dir, struct gg_rcampaign *c, int full, char *err,
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
    else if (st == GG_OK && !direct)
        st = shard_stats(c, stats_dir, err, err_len);
    if (st == GG_OK && full && gg_path_is_file(plot))
        st = gg_plot_data_read(plot, &c->ticks, &c->n_ticks, err, err_len);
    if (st == GG_OK && c->findings_dir == NULL)
        st = find_findings(c, stats_dir, err, err_len);
    if (st == GG_OK && c->stats.n == 0 && c->findings_dir == NULL) {
        snprintf(err, err_len, "%s: not a campaign directory: no fuzzer_stats and no findings "
                 "store", dir);
        st = GG_E_PARSE;
    }
    if (st == GG_OK && full && c->findings_dir != NULL)
        st = read_findings(c, err, err_len);
    if (st == GG_OK && c->findings_dir != NULL)
        st = gg_buckets_scan(c->findings_dir, &c->buckets, err, err_len);
    if (st == GG_OK && full && (st = sort_into_bugs(c)) != GG_OK)
        snprintf(err, err_len, "%s: out of memory", c->findings_dir);
    free(stats);
    free(plot);
    free(stats_dir);
    return st;
}

enum gg_status gg_report_campaign_load(const char *dir, struct gg_rcampaign *c, char *err,
                                       size_t err_len)
{
    return load(dir, c, 1, err, err_len);
}

enum gg_status gg_report_campaign_load_summary(const char *dir, struct gg_rcampaign *c,
                                               char *err, size_t err_len)
{
    return load(dir, c, 0, err, err_len);
}

void gg_report_campaign_free(struct gg_rcampaign *c)
{
    for (size_t i = 0; i < c->n_findings; i++)
        finding_free(&c->findings[i]);
    for (size_t k = 0; k < c->n_bugs; k++) {
        free(c->bugs[k].text);
        free(c->bugs[k].read_error);
        free(c->bugs[k].observed);
        free(c->bugs[k].members);
    }
    free(c->bugs);
    free(c->untriaged);
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

const char *gg_report_case_time(const struct gg_rcampaign *c, char *buf, size_t len)
{
    const char *worker = gg_report_stat(c, gg_case_phases[0].key);
    if (worker == NULL || len == 0)
        return NULL;
    size_t used = (size_t)snprintf(buf, len, "%s ms", worker);
    for (size_t i = 1; i < GG_CASE_PHASES && used < len; i++) {
        const char *v = gg_report_stat(c, gg_case_phases[i].key);
        if (v != NULL)
            used += (size_t)snprintf(buf + used, len - used, "%s%s %s", i == 1 ? ": " : ", ",
                                     gg_case_phases[i].label, v);
    }
    return buf;
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

long long gg_report_bugs_new(const struct gg_rcampaign *c, int *since_nights)
{
    long long n = 0;
    *since_nights = 0;
    for (size_t k = 0; k < c->n_bugs; k++) {
        if (c->bugs[k].new_tonight >= 0)
            *since_nights = 1;
        n += c->bugs[k].new_tonight == 1;
    }
    if (*since_nights)
        return n;
    const char *v = gg_report_stat(c, "buckets_new");
    return v && isdigit((unsigned char)v[0]) ? strtoll(v, NULL, 10) : -1;
}

void gg_report_campaign_lead(const struct gg_rcampaign *c, char *head, size_t head_len,
                             char *rest, size_t rest_len)
{
    int since = 0;
    long long fresh = gg_report_bugs_new(c, &since);
    size_t at = (size_t)snprintf(head, head_len, "%zu bug%s", c->n_bugs, c->n_bugs == 1 ? "" : "s");
    if (fresh >= 0 && at < head_len)
        snprintf(head + at, head_len - at, " (%lld new%s)", fresh,
                 since ? " since the earlier nights" : "");
    at = (size_t)snprintf(rest, rest_len, "%zu signature%s", c->n_findings,
                          c->n_findings == 1 ? "" : "s");
#define PUT(...)                                                                         \
    do {                                                                                 \
        if (at < rest_len)                                                               \
            at += (size_t)snprintf(rest + at, rest_len - at, __VA_ARGS__);               \
    } while (0)
    if (c->n_untriaged > 0)
        PUT(", %zu not yet triaged", c->n_untriaged);
    const char *cases = gg_report_stat(c, "execs_done"), *secs = gg_report_stat(c, "run_time"),
               *rate = gg_report_stat(c, "execs_per_sec"), *kernel = gg_report_stat(c, "kernel"),
               *mutant = gg_report_stat(c, "mutant"), *gpus = gg_report_stat(c, "gpus");
    if (cases)
        PUT(" \xc2\xb7 %s cases", cases);
    if (cases && secs)
        PUT(" in %s s", secs);
    if (cases && rate)
        PUT(" (%s a second)", rate);
    if (kernel)
        PUT(" \xc2\xb7 %s", kernel);
    if (kernel && mutant && strcmp(mutant, "none") != 0)
        PUT(" + mutant %s", mutant);
    if (gpus)
        PUT(" \xc2\xb7 GPU%s %s", strchr(gpus, ',') || strchr(gpus, '-') ? "s" : "", gpus);
    if (c->shards > 0)
        PUT(" \xc2\xb7 %d shards", c->shards);
#undef PUT
}

void gg_report_list_cmd(const struct gg_rcampaign *c, const char *bucket_id, char *buf,
                        size_t len)
{
    char pattern[64];
    snprintf(buf, len, "grep %s", bucket_id ? "-l" : "-L");
    if (bucket_id)
        snprintf(pattern, sizeof pattern, "^@bucket id=%s", bucket_id);
    else
        snprintf(pattern, sizeof pattern, "^@bucket ");
    gg_shell_word(buf, len, pattern);
    gg_shell_word(buf, len, c->findings_dir ? c->findings_dir : ".");
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, "/*.case");
}

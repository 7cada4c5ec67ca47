/*
 * gg_findings.c — the findings store: one case file per signature in a directory, named
 * <class>-<16 hex of XXH3-64 of the signature>.case, holding the smallest case known to give that
 * signature, its @expect line and an @finding line (count, first and last sighting, and the
 * campaign seed, kernel and mutant of the stored case); and the set of known signatures that a
 * nightly run subtracts from what it reports.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "fuzz/store/store_int.h"

#define LOCK_NAME ".lock"
#define NAME_HEX 16 /* hex digits of a finding's file name */
#define CASE_SUFFIX ".case"

/* A signature is stored as one token of an @expect line: printable, no blanks. */
static int signature_ok(const char *s)
{
    if (s[0] == '\0')
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~')
            return 0;
    return 1;
}

int gg_findings_is_name(const char *name)
{
    const char *dash = strrchr(name, '-');
    if (dash == NULL || dash == name || strlen(dash) != 1 + NAME_HEX + strlen(CASE_SUFFIX) ||
        strcmp(dash + 1 + NAME_HEX, CASE_SUFFIX) != 0)
        return 0;
    for (const char *p = name; p < dash; p++)
        if (!islower((unsigned char)*p) && *p != '_')
            return 0;
    for (int i = 1; i <= NAME_HEX; i++)
        if (!isxdigit((unsigned char)dash[i]))
            return 0;
    return 1;
}

int gg_findings_in(const char *dir)
{
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d != NULL && !found && (e = readdir(d)) != NULL;)
        found = gg_findings_is_name(e->d_name);
    if (d != NULL)
        closedir(d);
    return found;
}

/* Now in UTC, ISO 8601 to the second. */
void gg_store_now(char stamp[GG_STAMP_MAX])
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(stamp, GG_STAMP_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(stamp, GG_STAMP_MAX, "1970-01-01T00:00:00Z");
}

int gg_meta_field(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = text; p != NULL && *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, " \t");
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            snprintf(out, cap, "%.*s", (int)(len - klen - 1), p + klen + 1);
            return 1;
        }
        p += len;
    }
    return 0;
}

void gg_finding_parse(const char *text, struct gg_finding *f)
{
    char buf[64];
    if (text == NULL)
        return;
    if (gg_meta_field(text, "count", buf, sizeof buf)) {
        char *end;
        long long n = strtoll(buf, &end, 10);
        if (*end == '\0' && n >= 0)
            f->count = n;
    }
    gg_meta_field(text, "first_seen", f->first_seen, sizeof f->first_seen);
    gg_meta_field(text, "last_seen", f->last_seen, sizeof f->last_seen);
    if (gg_meta_field(text, "seed", buf, sizeof buf)) {
        char *end;
        unsigned long long s = strtoull(buf, &end, 0);
        if (*end == '\0')
            f->seed = (uint64_t)s;
    }
    gg_meta_field(text, "kernel", f->kernel, sizeof f->kernel);
    gg_meta_field(text, "mutant", f->mutant, sizeof f->mutant);
}

static void finding_format(const struct gg_finding *f, char *out, size_t cap)
{
    int n = snprintf(out, cap, "count=%lld first_seen=%s last_seen=%s seed=0x%016" PRIx64
                     " kernel=%s", f->count, f->first_seen, f->last_seen, f->seed,
                     f->kernel[0] ? f->kernel : "-");
    if (f->mutant[0] && n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, " mutant=%s", f->mutant);
}

/* The run that produced case c in campaign seed: fills the provenance fields of f. */
static void finding_source(struct gg_finding *f, const struct gg_case *c, uint64_t seed)
{
    f->seed = seed;
    snprintf(f->kernel, sizeof f->kernel, "%s", c->kernel);
    snprintf(f->mutant, sizeof f->mutant, "%s", c->mutant);
}

/* Size of an expanded case for minimality: (groups, logical output elements). MoE problems get
   their routing only when materialised; their output is [m·topk, n] whatever the routing. */
void gg_case_size(const struct gg_case *c, int64_t *groups, int64_t *elems)
{
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(c, opts, &p);
    *groups = p.groups;
    *elems = c->op == GG_OP_MOE_SORTED ? c->m * c->topk * c->n : gg_problem_out_elems(&p);
}

int gg_case_smaller(const struct gg_case *a, const struct gg_case *b)
{
    int64_t ga, ea, gb, eb;
    gg_case_size(a, &ga, &ea);
    gg_case_size(b, &gb, &eb);
    return ga < gb || (ga == gb && ea < eb);
}

/* Moves src's metadata into dst, replacing dst's. */
static void move_meta(struct gg_case *dst, struct gg_case *src)
{
    for (int i = 0; i < dst->n_meta; i++) {
        free(dst->meta[i].key);
        free(dst->meta[i].text);
    }
    free(dst->meta);
    dst->meta = src->meta;
    dst->n_meta = src->n_meta;
    src->meta = NULL;
    src->n_meta = 0;
}

/*
 * Exclusive advisory lock on dir/.lock (created with dir when missing), held by *fd until it is
 * closed. Every writer of a findings directory takes it around the read-modify-write of a
 * finding, so concurrent sightings of one signature neither lose counts nor race on which case
 * is kept. flock(2) locks belong to the open file description: threads or processes that open
 * the lock file separately exclude each other; the lock is released if the holder dies.
 */
enum gg_status gg_store_lock(const char *dir, int *fd, char *err, size_t err_len)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create the findings directory: %s", dir,
                 strerror(errno));
        return GG_E_IO;
    }
    char *path = gg_path_join(dir, LOCK_NAME);
    if (path == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int rc = *fd < 0 ? -1 : 0;
    while (rc == 0 && (rc = flock(*fd, LOCK_EX)) != 0 && errno == EINTR)
        rc = 0;
    if (rc != 0) {
        snprintf(err, err_len, "%s: cannot lock: %s", path, strerror(errno));
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
    }
    free(path);
    return rc == 0 ? GG_OK : GG_E_IO;
}

int gg_case_better(const struct gg_case *cand, const struct gg_case *rec)
{
    int cand_after = gg_case_after_count(cand) > 0, rec_after = gg_case_after_count(rec) > 0;
    return cand_after != rec_after ? rec_after : gg_case_smaller(cand, rec);
}

/* Metadata that describes a case's own run, not the finding: the cases it follows, what its
   run showed, the device it ran on. */
static int case_meta(const char *key)
{
    return strcmp(key, "after") == 0 || strcmp(key, "observed") == 0 || strcmp(key, "gpu") == 0;
}

/* Moves src's metadata into dst, replacing dst's, but for the lines that describe dst's own case
   (case_meta): dst keeps its own, and src's are dropped. */
static enum gg_status take_meta(struct gg_case *dst, struct gg_case *src)
{
    struct gg_case own;
    gg_case_init(&own);
    enum gg_status st = GG_OK;
    for (int i = 0; i < dst->n_meta && st == GG_OK; i++)
        if (case_meta(dst->meta[i].key))
            st = gg_case_add_meta(&own, dst->meta[i].key, dst->meta[i].text, NULL, 0);
    gg_case_meta_drop(src, case_meta);
    move_meta(dst, src);
    for (int i = 0; i < own.n_meta && st == GG_OK; i++)
        st = gg_case_add_meta(dst, own.meta[i].key, own.meta[i].text, NULL, 0);
    gg_case_free(&own);
    return st;
}

/* The stored record of a known signature at path, updated for one more sighting of case c (NULL:
   a sighting only): *rec is the case to write back (c when it is better, with the stored
   metadata). */
static enum gg_status update_known(const char *path, const struct gg_case *c, const char *sig,
                                   uint64_t seed, const char *now, struct gg_case *rec,
                                   char *err, size_t err_len)
{
    enum gg_status st = gg_case_load(path, rec, err, err_len);
    if (st != GG_OK)
        return st;
    char stored_sig[GG_SIGNATURE_MAX] = "";
    const char *expect = gg_case_meta(rec, "expect");
    if (expect == NULL || !gg_meta_field(expect, "sig", stored_sig, sizeof stored_sig) ||
        strcmp(stored_sig, sig) != 0) {
        snprintf(err, err_len, "%s: holds signature '%s', not '%s'", path, stored_sig, sig);
        return GG_E_INVAL;
    }
    struct gg_finding f = {0};
    finding_source(&f, rec, 0);
    snprintf(f.first_seen, sizeof f.first_seen, "%s", now);
    gg_finding_parse(gg_case_meta(rec, "finding"), &f);

    struct gg_case cand;
    if (c != NULL && (st = gg_case_copy(&cand, c)) != GG_OK) {
        snprintf(err, err_len, "%s: out of memory", path);
        return st;
    }
    if (c != NULL && (st = gg_case_expand(&cand, err, err_len)) == GG_OK &&
        gg_case_better(&cand, rec)) {
        if ((st = take_meta(&cand, rec)) != GG_OK)
            snprintf(err, err_len, "%s: out of memory", path);
        gg_case_free(rec);
        *rec = cand;
        finding_source(&f, rec, seed);
    } else if (c != NULL) {
        gg_case_free(&cand);
    }
    if (st != GG_OK)
        return st;
    f.count = gg_count_add(f.count, 1);
    snprintf(f.last_seen, sizeof f.last_seen, "%s", now);
    char text[512];
    finding_format(&f, text, sizeof text);
    if ((st = gg_case_set_meta(rec, "finding", text)) != GG_OK)
        snprintf(err, err_len, "%s: cannot update the finding (status %d)", path, (int)st);
    return st;
}

/* A new record: case c with its @expect and a first @finding line. */
static enum gg_status make_new(const struct gg_case *c, const struct gg_verdict *v,
                               uint64_t seed, const char *now, struct gg_case *rec)
{
    enum gg_status st = gg_case_copy(rec, c);
    if (st != GG_OK)
        return st;
    struct gg_finding f = {.count = 1};
    finding_source(&f, c, seed);
    snprintf(f.first_seen, sizeof f.first_seen, "%s", now);
    snprintf(f.last_seen, sizeof f.last_seen, "%s", now);
    char expect[GG_SIGNATURE_MAX + 64], text[512];
    snprintf(expect, sizeof expect, "class=%s sig=%s", gg_class_name(v->cls), v->signature);
    finding_format(&f, text, sizeof text);
    if ((st = gg_case_set_meta(rec, "expect", expect)) == GG_OK)
        st = gg_case_set_meta(rec, "finding", text);
    return st;
}

/* gg_findings_record(), or with c NULL gg_findings_sighting(). */
static enum gg_status record(const char *dir, const struct gg_case *c, const struct gg_verdict *v,
                             uint64_t campaign_seed, int *is_new, char *path, size_t path_len,
                             char *err, size_t err_len);

enum gg_status gg_findings_record(const char *dir, const struct gg_case *c,
                                  const struct gg_verdict *v, uint64_t campaign_seed, int *is_new,
                                  char *path, size_t path_len, char *err, size_t err_len)
{
    return record(dir, c, v, campaign_seed, is_new, path, path_len, err, err_len);
}

enum gg_status gg_findings_sighting(const char *dir, const struct gg_verdict *v, char *err,
                                    size_t err_len)
{
    return record(dir, NULL, v, 0, NULL, NULL, 0, err, err_len);
}

static enum gg_status record(const char *dir, const struct gg_case *c, const struct gg_verdict *v,
                             uint64_t campaign_seed, int *is_new, char *path, size_t path_len,
                             char *err, size_t err_len)
{
    if (is_new != NULL)
        *is_new = 0;
    if (v->cls == GG_CLASS_PASS || (unsigned)v->cls >= GG_CLASS_COUNT ||
        !signature_ok(v->signature)) {
        snprintf(err, err_len, "not a finding: class %s, signature '%s'", gg_class_name(v->cls),
                 v->signature);
        return GG_E_INVAL;
    }
    const char *cls = gg_class_name(v->cls);
    size_t file_len = strlen(dir) + strlen(cls) + 32;
    char *file = malloc(file_len);
    if (file == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    snprintf(file, file_len, "%s/%s-%0*llx" CASE_SUFFIX, dir, cls, NAME_HEX,
             (unsigned long long)XXH3_64bits(v->signature, strlen(v->signature)));
    if (path != NULL && path_len > 0)
        snprintf(path, path_len, "%s", file);

    int lock_fd;
    enum gg_status st = gg_store_lock(dir, &lock_fd, err, err_len);
    if (st != GG_OK) {
        free(file);
        return st;
    }
    char now[GG_STAMP_MAX];
    gg_store_now(now);
    struct gg_case rec;
    gg_case_init(&rec);
    struct stat sb;
    int known = stat(file, &sb) == 0;
    if (!known && (errno != ENOENT || c == NULL)) {
        snprintf(err, err_len, "%s: %s", file, strerror(errno));
        st = GG_E_IO;
    } else if (known) {
        st = update_known(file, c, v->signature, campaign_seed, now, &rec, err, err_len);
    } else if ((st = make_new(c, v, campaign_seed, now, &rec)) != GG_OK) {
        snprintf(err, err_len, "%s: cannot build the record (status %d)", file, (int)st);
    }
    if (st == GG_OK)
        st = gg_case_save(&rec, file, err, err_len);
    if (st == GG_OK && is_new != NULL)
        *is_new = !known;
    gg_case_free(&rec);
    close(lock_fd);
    free(file);
    return st;
}

enum gg_status gg_findings_tag(const char *dir, const char *path, const char *key,
                               const char *text, char *err, size_t err_len)
{
    int lock_fd;
    enum gg_status st = gg_store_lock(dir, &lock_fd, err, err_len);
    if (st != GG_OK)
        return st;
    struct gg_case rec;
    if ((st = gg_case_load(path, &rec, err, err_len)) == GG_OK) {
        if ((st = gg_case_set_meta(&rec, key, text)) != GG_OK)
            snprintf(err, err_len, "%s: cannot set @%s (status %d)", path, key, (int)st);
        else
            st = gg_case_save(&rec, path, err, err_len);
        gg_case_free(&rec);
    }
    close(lock_fd);
    return st;
}

/* ---- known signatures ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the first word of line to s unless the line is blank or a '#' comment; the rest of
   the line is free text (a bug number, a note). Returns -1 when out of memory. */
static int add_line(struct gg_sigset *s, size_t *cap, const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    if (*line == '\0' || *line == '#')
        return 0;
    size_t len = 0;
    while (line[len] && !isspace((unsigned char)line[len]))
        len++;
    if (s->n == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 16;
        char **grown = realloc(s->sigs, grown_cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->sigs = grown;
        *cap = grown_cap;
    }
    char *sig = strndup(line, len);
    if (sig == NULL)
        return -1;
    s->sigs[s->n++] = sig;
    return 0;
}

/* Adds the known set of a findings store to s: its member signatures and "bucket-<id>" of its
   buckets. */
static enum gg_status load_store(const char *dir, struct gg_sigset *s, size_t *cap, char *err,
                                 size_t err_len)
{
    struct gg_bucket_list l;
    enum gg_status st = gg_buckets_scan(dir, &l, err, err_len);
    char line[GG_SIGNATURE_MAX + 16];
    for (size_t i = 0; st == GG_OK && i < l.n_members + l.n; i++) {
        if (i < l.n_members)
            snprintf(line, sizeof line, "%s", l.m[i].sig);
        else
            snprintf(line, sizeof line, "bucket-%s", l.b[i - l.n_members].id);
        if (add_line(s, cap, line) != 0) {
            snprintf(err, err_len, "%s: out of memory", dir);
            st = GG_E_NOMEM;
        }
    }
    gg_buckets_free(&l);
    s->stores += st == GG_OK;
    return st;
}

/* Adds dir/rel to s when it is a directory (a campaign's store). */
static enum gg_status load_store_in(const char *dir, const char *rel, struct gg_sigset *s,
                                    size_t *cap, char *err, size_t err_len)
{
    char *path = gg_path_join(dir, rel);
    enum gg_status st = path == NULL ? GG_E_NOMEM : GG_OK;
    if (path == NULL)
        snprintf(err, err_len, "%s: out of memory", dir);
    else if (gg_path_is_dir(path))
        st = load_store(path, s, cap, err, err_len);
    free(path);
    return st;
}

/* A directory: a findings store when it holds findings or buckets; else the directory of a
   campaign, whose stores are its artifacts/ and, sharded, each shard-<I>/artifacts (read too:
   findings filed after the last merge are only there). */
static enum gg_status load_dir(const char *dir, struct gg_sigset *s, size_t *cap, char *err,
                               size_t err_len)
{
    char *buckets = gg_path_join(dir, GG_BUCKETS_SUBDIR);
    int store = gg_findings_in(dir) || (buckets != NULL && gg_path_is_dir(buckets));
    free(buckets);
    if (store)
        return load_store(dir, s, cap, err, err_len);
    enum gg_status st = load_store_in(dir, "artifacts", s, cap, err, err_len);
    int *idx = NULL;
    size_t n = 0;
    char msg[256];
    if (st == GG_OK && gg_shard_list(dir, &idx, &n, msg, sizeof msg) != GG_OK)
        n = 0;
    for (size_t i = 0; st == GG_OK && i < n; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, GG_SHARD_PREFIX "%d/artifacts", idx[i]);
        st = load_store_in(dir, rel, s, cap, err, err_len);
    }
    free(idx);
    return st;
}

/* The lines of a known-signatures file (text, NUL-terminated) into s. */
static enum gg_status load_lines(const char *path, char *text, struct gg_sigset *s, size_t *cap,
                                 char *err, size_t err_len)
{
    for (char *line = text, *next; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = '\0';
        if (add_line(s, cap, line) != 0) {
            snprintf(err, err_len, "%s: out of memory", path);
            return GG_E_NOMEM;
        }
    }
    return GG_OK;
}

enum gg_status gg_sigset_load(const char *path, struct gg_sigset *s, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    size_t cap = 0;
    enum gg_status st;
    if (gg_path_is_dir(path)) {
        st = load_dir(path, s, &cap, err, err_len);
    } else {
        char *text;
        st = gg_file_read(path, (size_t)GG_SIGSET_MAX, &text, NULL, err, err_len);
        if (st == GG_OK) {
            st = load_lines(path, text, s, &cap, err, err_len);
            free(text);
        }
    }
    if (st != GG_OK) {
        gg_sigset_free(s);
        return st;
    }
    if (s->n > 1)
        qsort(s->sigs, s->n, sizeof *s->sigs, cmp_str);
    return GG_OK;
}

int gg_sigset_has(const struct gg_sigset *s, const char *signature)
{
    if (s->n == 0 || signature == NULL)
        return 0;
    return bsearch(&signature, s->sigs, s->n, sizeof *s->sigs, cmp_str) != NULL;
}

void gg_sigset_free(struct gg_sigset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->sigs[i]);
    free(s->sigs);
    s->sigs = NULL;
    s->n = 0;
    s->stores = 0;
}

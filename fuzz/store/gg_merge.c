/*
 * gg_merge.c — folds findings stores (the shards' of a campaign) into one: one finding per
 * signature and one representative per bucket. A signature seen by several stores keeps the
 * smallest case (fewer groups, then fewer output elements; then the earliest first sighting, then
 * the first store given), with its provenance, and the sum of the counts, the earliest first and
 * the latest last sighting; a bucket keeps its smallest representative and its earliest first
 * sighting. A member's @bucket tag is kept from whichever store filed it.
 *
 * The output is computed from the inputs alone, never added to, so a merge run again gives the
 * same store (idempotent). Every file is written to a temporary file and renamed, and an entry
 * whose stored count is already larger than the merged one is left alone: two merges at once
 * (each shard merges at its end) leave whole files, the later snapshot's where they differ. No
 * lock is taken, so a store on NFS, where flock(2) cannot be trusted, merges the same.
 *
 * What a merge reads may have been placed by anyone: each store is read once, however many
 * names (a link, a store given twice) lead to it, known by its device and inode; a file that
 * cannot be read or parsed (a FIFO, a truncated case) is passed over with a WARNING naming it,
 * and every readable finding is merged. Counts add up saturating at INT64_MAX, so a count read
 * near the limit cannot wrap and every signature counted is written.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/store/store_int.h"

/* One signature (or bucket) of the merge: its file name, the case kept so far and the sums. */
struct entry {
    char *name;
    struct gg_case best;
    struct gg_finding f;          /* summed count, first and last sighting; best's provenance */
    char bucket_tag[GG_BUCKET_ID_HEX + 8]; /* @bucket of a member, "" when no store filed it */
    int has;                      /* a case was folded in */
};

struct table {
    struct entry *e;
    size_t n;
};

static struct entry *find_or_add(struct table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return &t->e[i];
    struct entry *grown = realloc(t->e, (t->n + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    t->e = grown;
    struct entry *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    if ((e->name = strdup(name)) == NULL)
        return NULL;
    gg_case_init(&e->best);
    t->n++;
    return e;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].name);
        gg_case_free(&t->e[i].best);
    }
    free(t->e);
    t->e = NULL;
    t->n = 0;
}

/* Stamps are ISO 8601 in UTC: their order is the string order. "" is no stamp. */
static void stamp_min(char *acc, size_t cap, const char *s)
{
    if (s[0] && (!acc[0] || strcmp(s, acc) < 0))
        snprintf(acc, cap, "%s", s);
}

static void stamp_max(char *acc, size_t cap, const char *s)
{
    if (s[0] && strcmp(s, acc) > 0)
        snprintf(acc, cap, "%s", s);
}

/* Folds case c (a finding's file, or a bucket's representative when rep) into e. */
static void fold(struct entry *e, struct gg_case *c, int rep)
{
    struct gg_finding f = {0};
    const char *bucket = gg_case_meta(c, "bucket");
    if (rep)
        gg_meta_field(bucket ? bucket : "", "first_seen", f.first_seen, sizeof f.first_seen);
    else
        gg_finding_parse(gg_case_meta(c, "finding"), &f);
    int take = !e->has || gg_case_better(c, &e->best) ||
               (!gg_case_better(&e->best, c) && f.first_seen[0] &&
                strcmp(f.first_seen, e->f.first_seen) < 0);
    if (!rep && bucket && !e->bucket_tag[0])
        snprintf(e->bucket_tag, sizeof e->bucket_tag, "%s", bucket);
    char first_seen[GG_STAMP_MAX], last_seen[GG_STAMP_MAX];
    snprintf(first_seen, sizeof first_seen, "%s", e->f.first_seen);
    snprintf(last_seen, sizeof last_seen, "%s", e->f.last_seen);
    long long count = gg_count_add(e->f.count, f.count);
    if (take) {
        gg_case_free(&e->best);
        e->best = *c;
        gg_case_init(c);
        e->f = f;
        e->has = 1;
    }
    e->f.count = count;
    snprintf(e->f.first_seen, sizeof e->f.first_seen, "%s", first_seen);
    snprintf(e->f.last_seen, sizeof e->f.last_seen, "%s", last_seen);
    stamp_min(e->f.first_seen, sizeof e->f.first_seen, f.first_seen);
    stamp_max(e->f.last_seen, sizeof e->f.last_seen, f.last_seen);
}

/* What the inputs of a merge gave, and where its notes go. */
struct inputs {
    struct table finds, reps;
    struct gg_merge_stats *ms;
    gg_store_note_fn note;
    void *note_ctx;
};

/* Reads every finding (rep: every bucket representative; both are named <word>-<16 hex>.case)
   of directory dir into in. A missing directory is an empty store; a directory or a file that
   cannot be read is passed over, told and counted in ms->skipped (a file renamed away between
   the listing and the read is not). Fails only when out of memory. */
static enum gg_status read_dir(const char *dir, int rep, struct inputs *in, char *err,
                               size_t err_len)
{
    char **paths = NULL, msg[2048];
    size_t n = 0;
    enum gg_status st = gg_store_case_files(dir, &paths, &n, msg, sizeof msg);
    if (st == GG_E_IO) {
        gg_store_note(in->note, in->note_ctx, "WARNING: %s; its findings are not merged", msg);
        in->ms->skipped++;
        st = GG_OK;
    }
    for (size_t i = 0; st == GG_OK && i < n; i++) {
        const char *slash = strrchr(paths[i], '/'), *name = slash ? slash + 1 : paths[i];
        struct gg_case c;
        struct stat sb;
        if (!gg_findings_is_name(name))
            continue;
        enum gg_status lst = gg_case_load(paths[i], &c, msg, sizeof msg);
        struct entry *e = lst == GG_OK ? find_or_add(rep ? &in->reps : &in->finds, name) : NULL;
        if (lst == GG_E_NOMEM || (lst == GG_OK && e == NULL)) {
            snprintf(err, err_len, "%s: out of memory", dir);
            st = GG_E_NOMEM;
        } else if (lst == GG_OK) {
            fold(e, &c, rep);
            (*(rep ? &in->ms->buckets_in : &in->ms->findings_in))++;
        } else if (lstat(paths[i], &sb) == 0 || errno != ENOENT) {
            gg_store_note(in->note, in->note_ctx, "WARNING: %s; not merged", msg);
            in->ms->skipped++;
        }
        gg_case_free(&c);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return st;
}

/* Replaces field key's value in a "k=v k=v" text with value (appends it when absent). */
static void set_field(const char *text, const char *key, const char *value, char *out, size_t cap)
{
    size_t used = 0, klen = strlen(key);
    int done = 0;
    out[0] = '\0';
    for (const char *p = text; *p && used < cap;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            used += (size_t)snprintf(out + used, cap - used, "%s%s=%s", used ? " " : "", key,
                                     value);
            done = 1;
        } else {
            used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? " " : "", (int)len,
                                     p);
        }
        p += len;
    }
    if (!done && used < cap)
        snprintf(out + used, cap - used, "%s%s=%s", used ? " " : "", key, value);
}

/* The count a stored file at path holds (-1: none, or no such file). */
static long long stored_count(const char *path, int rep, char **text)
{
    struct gg_case c;
    char err[256];
    *text = NULL;
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK)
        return -1;
    struct gg_finding f = {.count = -1};
    if (!rep)
        gg_finding_parse(gg_case_meta(&c, "finding"), &f);
    if (gg_case_format(&c, 1, text) != GG_OK)
        *text = NULL;
    gg_case_free(&c);
    return rep ? 0 : f.count;
}

/* Writes entry e into directory dir unless the file there holds a larger count (a later merge's)
   or the same text already. *written counts the files written. */
static enum gg_status write_entry(const char *dir, struct entry *e, int rep, long long *written,
                                  char *err, size_t err_len)
{
    char text[1024];
    enum gg_status st;
    if (rep) {
        const char *b = gg_case_meta(&e->best, "bucket");
        set_field(b ? b : "", "first_seen", e->f.first_seen, text, sizeof text);
        st = gg_case_set_meta(&e->best, "bucket", text);
    } else {
        char line[512];
        int n = snprintf(line, sizeof line, "count=%lld first_seen=%s last_seen=%s seed=0x%016"
                         PRIx64 " kernel=%s", e->f.count, e->f.first_seen, e->f.last_seen,
                         e->f.seed, e->f.kernel[0] ? e->f.kernel : "-");
        if (e->f.mutant[0] && n >= 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n, " mutant=%s", e->f.mutant);
        st = gg_case_set_meta(&e->best, "finding", line);
        if (st == GG_OK && e->bucket_tag[0] && !gg_case_meta(&e->best, "bucket"))
            st = gg_case_set_meta(&e->best, "bucket", e->bucket_tag);
    }
    char *path = gg_path_join(dir, e->name), *ours = NULL, *theirs = NULL;
    if (st != GG_OK || path == NULL || gg_case_format(&e->best, 1, &ours) != GG_OK) {
        snprintf(err, err_len, "%s/%s: out of memory", dir, e->name);
        free(path);
        return GG_E_NOMEM;
    }
    long long count = stored_count(path, rep, &theirs);
    if ((rep || count <= e->f.count) && (theirs == NULL || strcmp(theirs, ours) != 0)) {
        st = gg_case_save(&e->best, path, err, err_len);
        *written += st == GG_OK;
    }
    free(ours);
    free(theirs);
    free(path);
    return st;
}

/* 1 when paths a and b name the same directory. */
static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The index of an earlier store than stores[i] that is the same directory, or -1. */
static long earlier_name(const char *const *stores, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (same_dir(stores[j], stores[i]))
            return (long)j;
    return -1;
}

enum gg_status gg_store_merge(const char *const *stores, size_t n, const char *out,
                              struct gg_merge_stats *ms, gg_store_note_fn note, void *note_ctx,
                              char *err, size_t err_len)
{
    memset(ms, 0, sizeof *ms);
    for (size_t i = 0; i < n; i++)
        if (same_dir(stores[i], out)) {
            snprintf(err, err_len, "%s: the output store is also an input (its counts would be "
                     "added twice)", out);
            return GG_E_INVAL;
        }
    struct inputs in = {.ms = ms, .note = note, .note_ctx = note_ctx};
    enum gg_status st = GG_OK;
    for (size_t i = 0; st == GG_OK && i < n; i++) {
        long first = earlier_name(stores, i);
        if (first >= 0) {
            gg_store_note(note, note_ctx, "WARNING: %s: the same store as %s (named twice, or "
                          "through a link); read once", stores[i], stores[first]);
            ms->duplicates++;
            continue;
        }
        char *bdir = gg_path_join(stores[i], GG_BUCKETS_SUBDIR);
        st = bdir == NULL ? GG_E_NOMEM : read_dir(stores[i], 0, &in, err, err_len);
        if (st == GG_OK)
            st = read_dir(bdir, 1, &in, err, err_len);
        free(bdir);
        ms->stores++;
    }
    struct table *finds = &in.finds, *reps = &in.reps;
    char *bout = st == GG_OK ? gg_path_join(out, GG_BUCKETS_SUBDIR) : NULL;
    if (st == GG_OK && (bout == NULL || gg_mkdir_p(out) != 0 ||
                        (reps->n > 0 && gg_mkdir_p(bout) != 0))) {
        snprintf(err, err_len, "%s: cannot create the store: %s", out,
                 bout ? strerror(errno) : "out of memory");
        st = bout ? GG_E_IO : GG_E_NOMEM;
    }
    for (size_t i = 0; st == GG_OK && i < finds->n; i++) {
        st = write_entry(out, &finds->e[i], 0, &ms->written, err, err_len);
        ms->count = gg_count_add(ms->count, finds->e[i].f.count);
    }
    for (size_t i = 0; st == GG_OK && i < reps->n; i++)
        st = write_entry(bout, &reps->e[i], 1, &ms->written, err, err_len);
    ms->signatures = (long long)finds->n;
    ms->buckets = (long long)reps->n;
    free(bout);
    table_free(finds);
    table_free(reps);
    return st;
}

/*
 * gg_buckets.c — the buckets of a findings store (the rule and the file layout are in
 * gg_store.h): a signature's form and a form's id, filing a normal-form case as a bucket's
 * representative, and reading a store back as buckets with their members.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "fuzz/store/store_int.h"

const char *gg_bucket_family(enum gg_class c)
{
    return c == GG_CLASS_SNR || c == GG_CLASS_NAN             ? "value"
           : c == GG_CLASS_CRASH || c == GG_CLASS_OOB_WRITE ? "memory"
           : c == GG_CLASS_NONDETERMINISM                   ? "race"
                                                            : gg_class_name(c);
}

/* The shape classes as the form keeps them: a size of one element and one under a tile are both
   "small" (a minimised case that cannot reach one element stays under a tile). */
static void form_shape(const char *shape, size_t len, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < len && at + 1 < cap;) {
        size_t item = strcspn(shape + i, ",");
        if (item > len - i)
            item = len - i;
        size_t key = strcspn(shape + i, ":");
        const char *val = shape + i + key + 1;
        size_t vlen = key < item ? item - key - 1 : 0;
        int small = (vlen == 3 && strncmp(val, "one", 3) == 0) ||
                    (vlen == 7 && strncmp(val, "lt_tile", 7) == 0);
        at += (size_t)snprintf(out + at, cap - at, "%s%.*s", at ? "," : "",
                               small ? (int)key + 1 : (int)item, shape + i);
        if (small && at + 1 < cap)
            at += (size_t)snprintf(out + at, cap - at, "small");
        i += item + 1;
    }
}

/* Planted values the normal form could not do without: special codes, subnormals, values at
   the format's max, outliers, or E8M0 edge scales. Where they land decides where the bug shows. */
static int needs_planted(const struct gg_case *c)
{
    const struct gg_dist *d[2] = {&c->dist_a, &c->dist_b};
    for (int i = 0; i < 2; i++)
        if (d[i]->kind == GG_DIST_CODES || d[i]->kind == GG_DIST_SPECIALS ||
            d[i]->kind == GG_DIST_SUBNORMAL || d[i]->kind == GG_DIST_NEARSAT ||
            d[i]->kind == GG_DIST_OUTLIERS)
            return 1;
    return c->plant_e8m0 > 0.0;
}

void gg_bucket_far_operands(const struct gg_case *c, char out[4])
{
    struct gg_case e;
    char err[256];
    out[0] = '\0';
    if (gg_case_copy(&e, c) != GG_OK)
        return;
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    if (gg_case_check(&e, err, sizeof err) == GG_OK &&
        gg_case_expand(&e, err, sizeof err) == GG_OK &&
        (gg_case_problem(&e, opts, &p), gg_problem_check_geometry(&p, err, sizeof err)) == GG_OK) {
        /* geometry checked: default leading dimensions and strides filled in */
        const int64_t span[3] = {gg_size_add(gg_problem_a_span(&p), e.off_a),
                                 gg_size_add(gg_problem_b_span(&p), e.off_b),
                                 gg_size_add(gg_problem_c_span(&p), e.off_c)};
        const enum gg_dtype dt[3] = {e.a_dtype, e.b_dtype, e.c_dtype};
        size_t n = 0;
        for (int i = 0; i < 3; i++)
            if (span[i] > INT32_MAX || gg_dtype_bytes(dt[i], span[i]) > UINT32_MAX)
                out[n++] = (char)('a' + i);
        out[n] = '\0';
    }
    gg_case_free(&e);
}

/* A region as the form keeps it: how many elements of a small case failed (all, one tile,
   scattered) is "some"; tails, guard bands and fault regions stay. */
static const char *form_region(const char *region, size_t len)
{
    static const char *const some[] = {"all", "single_tile", "scattered"};
    for (size_t i = 0; i < sizeof some / sizeof *some; i++)
        if (strlen(some[i]) == len && strncmp(region, some[i], len) == 0)
            return "some";
    return NULL;
}

void gg_bucket_form(const char *signature, const struct gg_case *c, char *form, size_t cap)
{
    /* class/kernel/dtypes/op/shape/groups/region/magnitude */
    const char *f[8];
    size_t len[8], n = 0;
    for (const char *p = signature; n < 8;) {
        f[n] = p;
        len[n] = strcspn(p, "/");
        n++;
        if (p[len[n - 1]] != '/')
            break;
        p += len[n - 1] + 1;
    }
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)len[0], f[0]);
    const char *family = gg_bucket_family(gg_class_from_name(cls));
    if (n < 8) { /* not a signature of the usual shape: all but its class, as it is */
        snprintf(form, cap, "%s%s", family, signature + len[0]);
        return;
    }
    const char *region = form_region(f[6], len[6]);
    enum gg_class k = gg_class_from_name(cls);
    char shape[128];
    form_shape(f[4], len[4], shape, sizeof shape);
    size_t in = len[2]; /* the input dtypes: the dtypes field up to its second '-' */
    for (size_t dash = 0, i = 0; i < len[2]; i++)
        if (f[2][i] == '-' && ++dash == 2)
            in = i;
    char far[4] = "";
    if (c != NULL && (k == GG_CLASS_CRASH || k == GG_CLASS_OOB_WRITE || k == GG_CLASS_UNWRITTEN ||
                      k == GG_CLASS_SNR || k == GG_CLASS_NAN || k == GG_CLASS_NONDETERMINISM))
        gg_bucket_far_operands(c, far);
    if (far[0]) {
        /* The output dtype moves the wrap by its element size, and the ops share the address
           arithmetic of an operand: the inputs' dtypes and the far operands are kept. (A wrapped
           read finds whatever lies there, so its verdict may change from run to run too.) */
        snprintf(form, cap, "address/%.*s/%.*s/%s", (int)len[1], f[1], (int)in, f[2], far);
        return;
    }
    if (k == GG_CLASS_NONDETERMINISM) {
        /* A race shows in whatever op, sizes and output dtype the schedule allowed: the kernel
           and the inputs are all a form can hold of it. */
        snprintf(form, cap, "race/%.*s/%.*s", (int)len[1], f[1], (int)in, f[2]);
        return;
    }
    if (k == GG_CLASS_CRASH && !(len[6] == 4 && strncmp(f[6], "none", 4) == 0)) {
        /* A fault the handler placed (a read past the end of A, a write between C's rows): the
           place is the bug, whatever sizes led there. */
        snprintf(form, cap, "%s/%.*s/%.*s/%.*s/%.*s", family, (int)len[1], f[1], (int)len[2],
                 f[2], (int)len[3], f[3], (int)len[6], f[6]);
        return;
    }
    if (c != NULL && needs_planted(c)) {
        /* Which input, op and groups the planted values landed in is circumstance too (a decoder
           is shared by every op): the inputs' dtypes are written in name order. */
        char a[32], b[32];
        size_t la = strcspn(f[2], "-"), lb = la < len[2] ? strcspn(f[2] + la + 1, "-") : 0;
        snprintf(a, sizeof a, "%.*s", (int)la, f[2]);
        snprintf(b, sizeof b, "%.*s", (int)lb, la < len[2] ? f[2] + la + 1 : "");
        int swap = strcmp(a, b) > 0;
        size_t rest = la + 1 + lb < len[2] ? la + 1 + lb : len[2];
        snprintf(form, cap, "%s/%.*s/%s-%s%.*s/planted", family, (int)len[1], f[1],
                 swap ? b : a, swap ? a : b, (int)(len[2] - rest), f[2] + rest);
        return;
    }
    snprintf(form, cap, "%s/%.*s/%.*s/%.*s/%s/%.*s/%.*s", family, (int)len[1], f[1], (int)len[2],
             f[2], (int)len[3], f[3], shape, (int)len[5], f[5],
             region ? (int)strlen(region) : (int)len[6], region ? region : f[6]);
}

void gg_bucket_id(const char *form, char id[GG_BUCKET_ID_HEX + 1])
{
    snprintf(id, GG_BUCKET_ID_HEX + 1, "%016llx",
             (unsigned long long)XXH3_64bits(form, strlen(form)));
}

/* The class name at the head of a signature or form. */
static void class_of(const char *sig, char *cls, size_t cap)
{
    snprintf(cls, cap, "%.*s", (int)strcspn(sig, "/"), sig);
}

static int not_observed(const char *key)
{
    return strcmp(key, "observed") != 0;
}

/* The representative record: rep with its @expect and @bucket lines (first_seen given) and its
   own @observed. */
static enum gg_status make_rep(const struct gg_case *rep, const char *rep_sig,
                               const char *rep_expect, const char *form, const char *id,
                               const char *first_seen, uint64_t seed, struct gg_case *rec)
{
    enum gg_status st = gg_case_copy(rec, rep);
    if (st != GG_OK)
        return st;
    gg_case_meta_drop(rec, not_observed);
    char cls[32], expect[GG_SIGNATURE_MAX + 64], bucket[2 * GG_SIGNATURE_MAX + 256];
    class_of(rep_sig, cls, sizeof cls);
    if (rep_expect)
        snprintf(expect, sizeof expect, "%s", rep_expect);
    else
        snprintf(expect, sizeof expect, "class=%s sig=%s", cls, rep_sig);
    int n = snprintf(bucket, sizeof bucket, "id=%s form=%s first_seen=%s seed=0x%016" PRIx64
                     " kernel=%s", id, form, first_seen, seed, rep->kernel[0] ? rep->kernel : "-");
    if (rep->mutant[0] && n >= 0 && (size_t)n < sizeof bucket)
        snprintf(bucket + n, sizeof bucket - (size_t)n, " mutant=%s", rep->mutant);
    if ((st = gg_case_set_meta(rec, "expect", expect)) == GG_OK)
        st = gg_case_set_meta(rec, "bucket", bucket);
    return st;
}

enum gg_status gg_bucket_file(const char *dir, const struct gg_case *rep, const char *rep_sig,
                              const char *rep_expect, uint64_t campaign_seed,
                              char id[GG_BUCKET_ID_HEX + 1], int *is_new, char *err,
                              size_t err_len)
{
    char form[GG_SIGNATURE_MAX], cls[32], now[GG_STAMP_MAX];
    gg_bucket_form(rep_sig, rep, form, sizeof form);
    gg_bucket_id(form, id);
    class_of(form, cls, sizeof cls); /* the family names the file */
    if (is_new)
        *is_new = 0;
    char *bdir = gg_path_join(dir, GG_BUCKETS_SUBDIR);
    size_t len = bdir ? strlen(bdir) + strlen(cls) + GG_BUCKET_ID_HEX + 16 : 0;
    char *file = bdir ? malloc(len) : NULL;
    if (file == NULL) {
        free(bdir);
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    snprintf(file, len, "%s/%s-%s.case", bdir, cls, id);
    int lock_fd;
    enum gg_status st = gg_store_lock(dir, &lock_fd, err, err_len);
    if (st == GG_OK && mkdir(bdir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "%s: cannot create: %s", bdir, strerror(errno));
        st = GG_E_IO;
        close(lock_fd);
    }
    if (st != GG_OK) {
        free(bdir);
        free(file);
        return st;
    }
    gg_store_now(now);
    struct gg_case old, rec, cand;
    int have_old = gg_case_load(file, &old, err, err_len) == GG_OK;
    int write = !have_old;
    if (have_old) {
        char first[GG_STAMP_MAX] = "";
        const char *line = gg_case_meta(&old, "bucket");
        if (line && gg_meta_field(line, "first_seen", first, sizeof first))
            snprintf(now, sizeof now, "%s", first);
        write = gg_case_copy(&cand, rep) == GG_OK &&
                gg_case_expand(&cand, err, err_len) == GG_OK && gg_case_smaller(&cand, &old);
        gg_case_free(&cand);
        gg_case_free(&old);
    } else if (access(file, F_OK) == 0) {
        /* A representative that cannot be read is replaced. */
        write = 1;
    }
    if (write) {
        gg_case_init(&rec);
        st = make_rep(rep, rep_sig, rep_expect, form, id, now, campaign_seed, &rec);
        if (st != GG_OK)
            snprintf(err, err_len, "%s: cannot build the record (status %d)", file, (int)st);
        else
            st = gg_case_save(&rec, file, err, err_len);
        gg_case_free(&rec);
    }
    if (st == GG_OK && is_new)
        *is_new = !have_old;
    close(lock_fd);
    free(bdir);
    free(file);
    return st;
}

/* ---- reading a store back ------------------------------------------------------------------ */

enum gg_status gg_store_case_files(const char *dir, char ***names, size_t *n, char *err,
                                   size_t err_len)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT)
            return GG_OK;
        snprintf(err, err_len, "%s: %s", dir, strerror(errno));
        return GG_E_IO;
    }
    enum gg_status st = GG_OK;
    size_t cap = 0;
    for (struct dirent *e; st == GG_OK && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        if (*n == cap) {
            size_t grown_cap = cap ? 2 * cap : 64;
            char **grown = realloc(*names, grown_cap * sizeof *grown);
            if (grown == NULL) {
                st = GG_E_NOMEM;
                break;
            }
            *names = grown;
            cap = grown_cap;
        }
        if (((*names)[*n] = gg_path_join(dir, e->d_name)) == NULL) {
            st = GG_E_NOMEM;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (st != GG_OK)
        snprintf(err, err_len, "%s: out of memory", dir);
    return st;
}

static struct gg_bucket *bucket_by_id(struct gg_bucket_list *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->b[i].id, id) == 0)
            return &l->b[i];
    return NULL;
}

/* Adds the representative at path to l; a file that does not parse or lacks @bucket is skipped. */
static enum gg_status add_bucket(struct gg_bucket_list *l, const char *path)
{
    struct gg_case c;
    char err[512];
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK)
        return GG_OK;
    const char *line = gg_case_meta(&c, "bucket"), *expect = gg_case_meta(&c, "expect");
    struct gg_bucket b;
    memset(&b, 0, sizeof b);
    int ok = line && expect && gg_meta_field(line, "id", b.id, sizeof b.id) &&
             gg_meta_field(line, "form", b.form, sizeof b.form) &&
             gg_meta_field(expect, "class", b.cls, sizeof b.cls);
    enum gg_status st = GG_OK;
    if (ok && bucket_by_id(l, b.id) == NULL) {
        /* A race's representative expects a list of classes and no signature: the first names
           the bucket's class. */
        if (!gg_meta_field(expect, "sig", b.rep_sig, sizeof b.rep_sig))
            b.rep_sig[0] = '\0';
        b.cls[strcspn(b.cls, "|")] = '\0';
        if (gg_case_expand(&c, err, sizeof err) == GG_OK)
            gg_case_size(&c, &b.groups, &b.elems);
        struct gg_bucket *grown = realloc(l->b, (l->n + 1) * sizeof *grown);
        char real[PATH_MAX];
        if (grown == NULL || (b.path = strdup(realpath(path, real) ? real : path)) == NULL) {
            if (grown)
                l->b = grown;
            st = GG_E_NOMEM;
        } else {
            l->b = grown;
            l->b[l->n++] = b;
        }
    }
    gg_case_free(&c);
    return st;
}

/* Adds the finding at path as a member (signature -> bucket) and counts it into its bucket. */
static enum gg_status add_member(struct gg_bucket_list *l, const char *path)
{
    struct gg_case c;
    char err[512], sig[GG_SIGNATURE_MAX] = "";
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK)
        return GG_OK;
    const char *expect = gg_case_meta(&c, "expect"), *line = gg_case_meta(&c, "bucket");
    const char *finding = gg_case_meta(&c, "finding");
    enum gg_status st = GG_OK;
    if (expect && gg_meta_field(expect, "sig", sig, sizeof sig) && finding) {
        struct gg_bucket_member m = {.sig = strdup(sig)};
        if (line == NULL || !gg_meta_field(line, "id", m.id, sizeof m.id))
            m.id[0] = '\0';
        struct gg_bucket_member *grown = realloc(l->m, (l->n_members + 1) * sizeof *grown);
        if (m.sig == NULL || grown == NULL) {
            free(m.sig);
            if (grown)
                l->m = grown;
            st = GG_E_NOMEM;
        } else {
            l->m = grown;
            l->m[l->n_members++] = m;
            struct gg_bucket *b = m.id[0] ? bucket_by_id(l, m.id) : NULL;
            if (b == NULL) {
                l->untriaged++;
            } else {
                struct gg_finding fd = {0};
                gg_finding_parse(finding, &fd);
                const char *first = fd.first_seen, *last = fd.last_seen;
                b->members++;
                b->count = gg_count_add(b->count, fd.count);
                if (first[0] && (!b->first_seen[0] || strcmp(first, b->first_seen) < 0))
                    snprintf(b->first_seen, sizeof b->first_seen, "%s", first);
                if (last[0] && strcmp(last, b->last_seen) > 0)
                    snprintf(b->last_seen, sizeof b->last_seen, "%s", last);
            }
        }
    }
    gg_case_free(&c);
    return st;
}

static int cmp_member(const void *pa, const void *pb)
{
    return strcmp(((const struct gg_bucket_member *)pa)->sig,
                  ((const struct gg_bucket_member *)pb)->sig);
}

/* Most severe class first (gg_class_precedence), then the most sightings, then id. */
static int cmp_bucket(const void *pa, const void *pb)
{
    const struct gg_bucket *a = pa, *b = pb;
    int ca = gg_class_precedence(gg_class_from_name(a->cls)),
        cb = gg_class_precedence(gg_class_from_name(b->cls));
    if (ca != cb)
        return ca - cb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return strcmp(a->id, b->id);
}

enum gg_status gg_buckets_scan(const char *dir, struct gg_bucket_list *l, char *err,
                               size_t err_len)
{
    memset(l, 0, sizeof *l);
    char *bdir = gg_path_join(dir, GG_BUCKETS_SUBDIR), **names = NULL;
    size_t n = 0;
    if (bdir == NULL) {
        snprintf(err, err_len, "%s: out of memory", dir);
        return GG_E_NOMEM;
    }
    enum gg_status st = gg_store_case_files(bdir, &names, &n, err, err_len);
    for (size_t i = 0; st == GG_OK && i < n; i++)
        st = add_bucket(l, names[i]);
    gg_dir_list_free(names, n);
    free(bdir);
    if (st == GG_OK)
        st = gg_store_case_files(dir, &names, &n, err, err_len);
    else
        names = NULL, n = 0;
    for (size_t i = 0; st == GG_OK && i < n; i++)
        st = add_member(l, names[i]);
    gg_dir_list_free(names, n);
    if (st != GG_OK) {
        if (st == GG_E_NOMEM)
            snprintf(err, err_len, "%s: out of memory reading the buckets", dir);
        gg_buckets_free(l);
        return st;
    }
    if (l->n > 1)
        qsort(l->b, l->n, sizeof *l->b, cmp_bucket);
    if (l->n_members > 1) /* by signature, for gg_buckets_of */
        qsort(l->m, l->n_members, sizeof *l->m, cmp_member);
    return GG_OK;
}

const char *gg_buckets_of(const struct gg_bucket_list *l, const char *sig)
{
    const struct gg_bucket_member key = {.sig = (char *)sig};
    const struct gg_bucket_member *m =
        l->n_members ? bsearch(&key, l->m, l->n_members, sizeof *l->m, cmp_member) : NULL;
    return m && m->id[0] ? m->id : NULL;
}

void gg_buckets_free(struct gg_bucket_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->b[i].path);
    for (size_t i = 0; i < l->n_members; i++)
        free(l->m[i].sig);
    free(l->b);
    free(l->m);
    memset(l, 0, sizeof *l);
}

/*
 * gg_corpus.c — the corpus as the harness sees it: finding case files under a path (an entry
 * below it that cannot be read is reported and passed over, not the end of the walk), and judging
 * whether a replayed verdict reproduces the case's stored expectation (`@expect class=C sig=S`).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/store/gg_store.h"

struct list {
    char **v;
    size_t n, cap;
};

static int push(struct list *l, char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

static int has_case_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".case") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return s;
}

/* An entry below the top that cannot be read: "path: reason" goes to skipped (when listing
   them), and the walk goes on. At the top it is the error of the listing. */
static enum gg_status unreadable(const char *path, int top, struct list *skipped, char *err,
                                 size_t err_len)
{
    char msg[4200];
    snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
    if (top) {
        snprintf(err, err_len, "%s", msg);
        return GG_E_IO;
    }
    char *s = skipped ? strdup(msg) : NULL;
    if (skipped && (!s || push(skipped, s) != 0)) {
        free(s);
        snprintf(err, err_len, "out of memory listing %s", path);
        return GG_E_NOMEM;
    }
    return GG_OK;
}

static enum gg_status walk(const char *path, int top, struct list *out, struct list *skipped,
                           char *err, size_t err_len)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return unreadable(path, top, skipped, err, err_len);
    if (!S_ISDIR(sb.st_mode)) {
        if (!top && !has_case_suffix(path))
            return GG_OK;
        char *s = strdup(path);
        if (!s || push(out, s) != 0) {
            free(s);
            snprintf(err, err_len, "out of memory listing %s", path);
            return GG_E_NOMEM;
        }
        return GG_OK;
    }
    DIR *d = opendir(path);
    if (!d)
        return unreadable(path, top, skipped, err, err_len);
    struct list names = {0};
    enum gg_status st = GG_OK;
    for (struct dirent *e; st == GG_OK && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *full = join(path, e->d_name);
        if (!full || push(&names, full) != 0) {
            free(full);
            snprintf(err, err_len, "out of memory listing %s", path);
            st = GG_E_NOMEM;
        }
    }
    closedir(d);
    if (names.n > 0) /* an empty directory has no list to sort */
        qsort(names.v, names.n, sizeof *names.v, cmp_str);
    for (size_t i = 0; i < names.n; i++) {
        if (st == GG_OK)
            st = walk(names.v[i], 0, out, skipped, err, err_len);
        free(names.v[i]);
    }
    free(names.v);
    return st;
}

enum gg_status gg_corpus_list(const char *path, char ***files, size_t *count, char ***skipped,
                              size_t *n_skipped, char *err, size_t err_len)
{
    struct list out = {0}, skips = {0};
    enum gg_status st = walk(path, 1, &out, skipped ? &skips : NULL, err, err_len);
    if (st != GG_OK) {
        gg_corpus_list_free(out.v, out.n);
        gg_corpus_list_free(skips.v, skips.n);
        out = skips = (struct list){0};
    }
    *files = out.v;
    *count = out.n;
    if (skipped) {
        *skipped = skips.v;
        *n_skipped = skips.n;
    }
    return st;
}

void gg_corpus_list_free(char **files, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(files[i]);
    free(files);
}

int gg_expect_holds(const char *expect, const struct gg_verdict *v)
{
    char cls[64] = "pass", sig[GG_SIGNATURE_MAX] = "";
    if (expect) {
        const char *c = strstr(expect, "class=");
        const char *s = strstr(expect, "sig=");
        if (c)
            sscanf(c + 6, "%63s", cls);
        if (s)
            sscanf(s + 4, "%255s", sig);
    }
    /* class=A|B: a race may show as either (both runs losing it the same way look like snr). */
    const char *name = gg_class_name(v->cls);
    size_t n = strlen(name);
    int match = 0;
    for (const char *c = cls; *c && !match; c += strcspn(c, "|"), c += *c == '|') {
        size_t len = strcspn(c, "|");
        match = len == n && strncmp(c, name, n) == 0;
    }
    return match && (!sig[0] || strcmp(sig, v->signature) == 0);
}

int gg_expect_runs(const char *expect)
{
    const char *r = expect ? strstr(expect, "runs=") : NULL;
    int n = r ? atoi(r + 5) : 1;
    return n < 1 ? 1 : n > GG_EXPECT_MAX_RUNS ? GG_EXPECT_MAX_RUNS : n;
}

int gg_mkdir_p(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

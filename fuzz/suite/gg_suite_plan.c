/*
 * gg_suite_plan.c — every case file of a suite run, in the order one process runs them (the
 * paths in order, each directory's files as the corpus listing gives them), with the path of
 * each one that cannot be read, and which shard runs it under --shard I/N. The shard is the
 * case's identity's: the distinct case ids, sorted, are dealt out in turn (rank mod N), so every
 * shard computes the same parts, of sizes within one of each other, whatever the order of the
 * files; an entry that cannot be read goes by a hash of its path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/suite/suite_int.h"
#include "fuzz/store/gg_store.h"

static int add(struct gg_suite_plan *p, const char *path, struct gg_case *c, const char *error)
{
    struct gg_suite_entry *grown = realloc(p->e, (p->n + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    p->e = grown;
    struct gg_suite_entry *e = &p->e[p->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(path);
    e->error = error ? strdup(error) : NULL;
    if (e->path == NULL || (error && e->error == NULL)) {
        free(e->path);
        free(e->error);
        return -1;
    }
    if (c != NULL) {
        e->c = *c;
        e->loaded = 1;
        gg_case_id(c, e->id);
    }
    p->n++;
    return 0;
}

/* The entries of path: its cases, or errors for what cannot be read. */
static int add_path(struct gg_suite_plan *p, const char *path)
{
    char **files = NULL, **skipped = NULL, err[1024];
    size_t n = 0, n_skipped = 0;
    if (gg_corpus_list(path, &files, &n, &skipped, &n_skipped, err, sizeof err) != GG_OK)
        return add(p, path, NULL, err);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n_skipped; i++)
        rc = add(p, path, NULL, skipped[i]);
    gg_corpus_list_free(skipped, n_skipped);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct gg_case c;
        if (gg_case_load(files[i], &c, err, sizeof err) != GG_OK) {
            rc = add(p, files[i], NULL, err);
        } else if ((rc = add(p, files[i], &c, NULL)) != 0) {
            gg_case_free(&c);
        }
    }
    gg_corpus_list_free(files, n);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FNV-1a of s. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Deals the distinct ids out to count shards in sorted order. */
static int deal(struct gg_suite_plan *p, int count)
{
    char **ids = calloc(p->n ? p->n : 1, sizeof *ids);
    if (ids == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->e[i].loaded)
            ids[n++] = p->e[i].id;
    qsort(ids, n, sizeof *ids, cmp_str);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (unique == 0 || strcmp(ids[unique - 1], ids[i]) != 0)
            ids[unique++] = ids[i];
    for (size_t i = 0; i < p->n; i++) {
        struct gg_suite_entry *e = &p->e[i];
        if (!e->loaded) {
            e->shard = (int)(fnv1a(e->path) % (uint64_t)count);
            continue;
        }
        const char *key = e->id;
        char **at = bsearch(&key, ids, unique, sizeof *ids, cmp_str);
        e->shard = (int)((size_t)(at - ids) % (size_t)count);
    }
    free(ids);
    return 0;
}

enum gg_status gg_suite_plan_build(const char *const *paths, int n_paths, int shard_count,
                                   struct gg_suite_plan *p, char *err, size_t err_len)
{
    memset(p, 0, sizeof *p);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n_paths; i++)
        rc = add_path(p, paths[i]);
    if (rc == 0 && shard_count > 1)
        rc = deal(p, shard_count);
    if (rc != 0) {
        snprintf(err, err_len, "out of memory listing the suite's cases");
        gg_suite_plan_free(p);
        return GG_E_NOMEM;
    }
    return GG_OK;
}

void gg_suite_plan_free(struct gg_suite_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->e[i].path);
        free(p->e[i].error);
        if (p->e[i].loaded)
            gg_case_free(&p->e[i].c);
    }
    free(p->e);
    memset(p, 0, sizeof *p);
}

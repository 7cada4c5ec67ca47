/*
 * gg_shard.c — what a campaign does as one shard of many: its seed stream, drawn from the
 * campaign seed and its index; where a requeued shard goes on (the seed and case number its
 * fuzzer_stats recorded) and which cases it skips there (those that ended after that
 * fuzzer_stats was written); and the merge of every shard's findings by the last shard to end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

uint64_t gg_shard_seed(uint64_t base, int index, int count)
{
    if (count <= 1 && index == 0)
        return base;
    /* splitmix64 of base moved by the index: a bijection of base for each index, so shards of
       one campaign seed never share a stream. */
    uint64_t x = base + 0x9E3779B97F4A7C15ull * (uint64_t)(index + 1);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x ? x : 1;
}

int gg_shard_resume_point(const char *stats_dir, uint64_t *seed, uint64_t *next_case)
{
    char *path = gg_path_join(stats_dir, GG_FUZZER_STATS_FILE), err[512];
    struct gg_fuzzer_stats fs = {0};
    int ok = path != NULL && gg_fuzzer_stats_read(path, &fs, err, sizeof err) == GG_OK;
    const char *s = ok ? gg_fuzzer_stats_get(&fs, "seed") : NULL;
    const char *n = ok ? gg_fuzzer_stats_get(&fs, "next_case") : NULL;
    char *end1 = NULL, *end2 = NULL;
    unsigned long long sv = s ? strtoull(s, &end1, 0) : 0, nv = n ? strtoull(n, &end2, 10) : 0;
    ok = s && n && *end1 == '\0' && *end2 == '\0' && sv != 0;
    if (ok) {
        *seed = (uint64_t)sv;
        *next_case = (uint64_t)nv;
    }
    gg_fuzzer_stats_free(&fs);
    free(path);
    return ok;
}

/* ---- the cases a requeued shard skips -------------------------------------------------------- */

#define DONE_HEADER "ggfuzz-done-cases seed=0x%016" PRIx64 "\n"
#define DONE_MAX_BYTES ((size_t)64 << 20) /* a day of cases between two fuzzer_stats, and more */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The numbers from `from` on that text (the file) lists for d->seed, into d->skip. */
static void done_parse(struct gg_shard_done *d, const char *text, uint64_t from)
{
    char header[64];
    snprintf(header, sizeof header, DONE_HEADER, d->seed);
    if (strncmp(text, header, strlen(header)) != 0)
        return; /* another seed stream, or not this file */
    size_t cap = 0;
    for (const char *p = text + strlen(header); *p;) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        int whole = end != p && *end == '\n' && errno == 0;
        p = strchr(p, '\n');
        p = p ? p + 1 : "";
        if (!whole || v < from)
            continue; /* a line cut by a kill, or a case before the resume point */
        if (d->n_skip == cap) {
            size_t grown_cap = cap ? 2 * cap : 64;
            uint64_t *grown = realloc(d->skip, grown_cap * sizeof *grown);
            if (grown == NULL)
                break;
            d->skip = grown;
            cap = grown_cap;
        }
        d->skip[d->n_skip++] = (uint64_t)v;
    }
    if (d->n_skip > 1)
        qsort(d->skip, d->n_skip, sizeof *d->skip, cmp_u64);
}

/* Rewrites the file with the numbers to skip from `from` on, and opens it for appending. */
static int done_rewrite(struct gg_shard_done *d, uint64_t from, char *err, size_t err_len)
{
    struct gg_atomic a;
    if (gg_atomic_open(&a, d->path, "the cases done", err, err_len) != GG_OK)
        return -1;
    fprintf(a.f, DONE_HEADER, d->seed);
    for (size_t i = 0; i < d->n_skip; i++)
        if (d->skip[i] >= from)
            fprintf(a.f, "%" PRIu64 "\n", d->skip[i]);
    if (gg_atomic_commit(&a, 0, err, err_len) != GG_OK)
        return -1;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = open(d->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (d->fd < 0) {
        snprintf(err, err_len, "%s: %s", d->path, strerror(errno));
        return -1;
    }
    return 0;
}

long gg_shard_done_open(struct gg_shard_done *d, const char *dir, uint64_t seed, uint64_t from,
                        char *err, size_t err_len)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
    d->seed = seed;
    snprintf(d->path, sizeof d->path, "%s/" GG_SHARD_DONE_FILE, dir);
    char *text = NULL, rerr[512];
    if (gg_file_read(d->path, DONE_MAX_BYTES, &text, NULL, rerr, sizeof rerr) == GG_OK)
        done_parse(d, text, from);
    free(text);
    return done_rewrite(d, from, err, err_len) == 0 ? (long)d->n_skip : -1;
}

void gg_shard_done_add(struct gg_shard_done *d, uint64_t index)
{
    char line[32];
    int n = snprintf(line, sizeof line, "%" PRIu64 "\n", index);
    if (d->fd >= 0 && write(d->fd, line, (size_t)n) != n) {
        close(d->fd); /* a full disk: nothing more is recorded */
        d->fd = -1;
    }
}

void gg_shard_done_reset(struct gg_shard_done *d, uint64_t from)
{
    char err[512];
    if (d->fd >= 0)
        done_rewrite(d, from, err, sizeof err);
}

int gg_shard_done_has(const struct gg_shard_done *d, uint64_t index)
{
    return d->n_skip > 0 &&
           bsearch(&index, d->skip, d->n_skip, sizeof *d->skip, cmp_u64) != NULL;
}

void gg_shard_done_close(struct gg_shard_done *d)
{
    if (d->fd >= 0)
        close(d->fd);
    free(d->skip);
    memset(d, 0, sizeof *d);
    d->fd = -1;
}

/* 1 when shard index of campaign is at work: its fuzzer_stats changed within GG_SHARD_ALIVE_S
   and names no stop reason. */
static int at_work(const char *campaign, int index)
{
    char dir[GG_SYNC_PATH_MAX - 16], path[GG_SYNC_PATH_MAX], err[512];
    gg_shard_dir(campaign, index, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" GG_FUZZER_STATS_FILE, dir);
    struct stat sb;
    if (stat(path, &sb) != 0 || difftime(time(NULL), sb.st_mtime) > GG_SHARD_ALIVE_S)
        return 0;
    struct gg_fuzzer_stats fs = {0};
    int working = 0;
    if (gg_fuzzer_stats_read(path, &fs, err, sizeof err) == GG_OK) {
        const char *why = gg_fuzzer_stats_get(&fs, "stop_reason");
        working = why != NULL && strcmp(why, gg_stop_name(GG_STOP_NONE)) == 0;
    }
    gg_fuzzer_stats_free(&fs);
    return working;
}

/* A merge's WARNING lines, in the campaign's log. */
static void merge_note(void *ctx, const char *line)
{
    if (ctx != NULL)
        fprintf(ctx, "%s\n", line);
}

long long gg_shard_merge_all(const char *campaign, int self, FILE *log)
{
    int *idx = NULL;
    size_t n = 0;
    char err[2048], out[GG_SYNC_PATH_MAX];
    if (gg_shard_list(campaign, &idx, &n, err, sizeof err) != GG_OK) {
        if (log)
            fprintf(log, "WARNING: cannot merge the shards' findings: %s\n", err);
        free(idx);
        return -1;
    }
    int working = 0;
    for (size_t i = 0; i < n; i++)
        working += idx[i] != self && at_work(campaign, idx[i]);
    if (working > 0) {
        if (log)
            fprintf(log, "INFO: %d other shards are still at work: the last to end merges the "
                    "findings into %s/artifacts (or ggfuzz merge %s)\n", working, campaign,
                    campaign);
        free(idx);
        return -1;
    }
    char (*dirs)[GG_SYNC_PATH_MAX] = calloc(n ? n : 1, sizeof *dirs);
    const char **stores = calloc(n ? n : 1, sizeof *stores);
    long long sigs = -1;
    struct gg_merge_stats ms;
    snprintf(out, sizeof out, "%s/artifacts", campaign);
    if (dirs && stores) {
        for (size_t i = 0; i < n; i++) {
            char shard[GG_SYNC_PATH_MAX - 16];
            gg_shard_dir(campaign, idx[i], shard, sizeof shard);
            snprintf(dirs[i], sizeof dirs[i], "%s/artifacts", shard);
            stores[i] = dirs[i];
        }
        if (gg_store_merge(stores, n, out, &ms, merge_note, log, err, sizeof err) == GG_OK)
            sigs = ms.signatures;
    } else {
        snprintf(err, sizeof err, "out of memory");
    }
    if (log && sigs >= 0)
        fprintf(log, "INFO: merged the findings of %d shards into %s: %lld signatures, %lld "
                "buckets, %lld sightings%s\n", ms.stores, out, ms.signatures, ms.buckets, ms.count,
                ms.skipped > 0 ? "; unreadable files skipped (WARNING lines above)" : "");
    else if (log)
        fprintf(log, "WARNING: cannot merge the shards' findings: %s\n", err);
    free(dirs);
    free(stores);
    free(idx);
    return sigs;
}

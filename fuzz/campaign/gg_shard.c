/*
 * gg_shard.c — what a campaign does as one shard of many: its seed stream, drawn from the
 * campaign seed and its index; where a requeued shard goes on (the seed and case number its
 * fuzzer_stats recorded); and the merge of every shard's findings by the last shard to end.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

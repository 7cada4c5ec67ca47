/*
 * cli_merge.c — `ggfuzz merge CAMPAIGN|STORE... [-o STORE]`: folds findings stores into one
 * (gg_store_merge): a campaign directory stands for its shards' stores (shard-I/artifacts) and
 * merges into its own artifacts/ unless -o says otherwise. What it passes over (a file it cannot
 * read or parse, a store named twice) goes to stderr as WARNING lines. Exit 0 merged, 5 merged
 * but unreadable files skipped, 2 usage, 3 the output could not be written.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/store/gg_store.h"

#define MAX_STORES 4096

/* What the options of merge set. */
struct merge_args {
    const char *out;
};

static const struct gg_cli_flag merge_flags[] = {
    {"output", 'o', GG_CLI_STRING, "STORE", GG_CLI_AT(struct merge_args, out),
     GG_CLI_DEFAULT_TEXT("CAMPAIGN/artifacts when one campaign directory is named"),
     .help = "the merged store"},
    {0}};
const struct gg_cli_command gg_cli_merge_command = {
    "merge", "merge CAMPAIGN|STORE... [-o STORE]",
    "Folds findings stores into one: one case per signature (the smallest), the counts summed, "
    "the first and last sightings kept, one representative per bucket. A campaign directory "
    "(the --campaign of sharded fuzz runs) stands for the stores of its shards, shard-*/artifacts. "
    "The output is computed from the inputs, so merging again changes nothing, and it is "
    "written file by file with renames, so merges running at once leave a whole store. Each "
    "store is read once, however it is named; a file named like a finding that cannot be read "
    "or parsed is skipped with a WARNING naming it and the rest merged. Exit 0 merged, 5 "
    "merged but unreadable files skipped, 2 usage, 3 the output cannot be written.",
    merge_flags};

/* A merge's WARNING lines, on stderr. */
static void merge_note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line);
}

/* Appends the stores path stands for to stores: its shards' when it is a campaign directory
   (returns 1), else path itself (0); -1 when there are too many. */
static int add_stores(const char *path, char **stores, size_t *n)
{
    int *idx = NULL;
    size_t n_idx = 0;
    char err[512];
    int campaign = gg_shard_list(path, &idx, &n_idx, err, sizeof err) == GG_OK && n_idx > 0;
    for (size_t i = 0; campaign && i < n_idx; i++) {
        char dir[GG_SYNC_PATH_MAX];
        gg_shard_dir(path, idx[i], dir, sizeof dir - 16);
        if (*n == MAX_STORES || (stores[*n] = gg_path_join(dir, "artifacts")) == NULL) {
            free(idx);
            return -1;
        }
        (*n)++;
    }
    free(idx);
    if (!campaign) {
        if (*n == MAX_STORES || (stores[*n] = strdup(path)) == NULL)
            return -1;
        (*n)++;
    }
    return campaign;
}

int gg_cli_merge(int argc, char **argv)
{
    struct merge_args a = {NULL};
    int rc = gg_cli_parse(&gg_cli_merge_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    const char *out = a.out;
    if (optind >= argc) {
        fprintf(stderr, "ggfuzz merge: name a campaign directory or findings stores\n");
        return GG_EXIT_USAGE;
    }
    char **stores = calloc(MAX_STORES, sizeof *stores), *dflt = NULL;
    size_t n = 0;
    int campaigns = 0;
    for (int i = optind; stores && i < argc && rc == GG_CLI_TAKEN; i++) {
        int kind = add_stores(argv[i], stores, &n);
        if (kind < 0) {
            fprintf(stderr, "ggfuzz merge: more than %d stores, or out of memory\n", MAX_STORES);
            rc = GG_EXIT_HARNESS;
        }
        campaigns += kind == 1;
    }
    if (rc == GG_CLI_TAKEN && out == NULL && (campaigns != 1 || argc - optind != 1)) {
        fprintf(stderr, "ggfuzz merge: -o STORE is needed unless one campaign directory is "
                "named\n");
        rc = GG_EXIT_USAGE;
    }
    if (rc == GG_CLI_TAKEN && out == NULL)
        out = dflt = gg_path_join(argv[optind], "artifacts");
    char err[2048];
    struct gg_merge_stats ms;
    if (rc == GG_CLI_TAKEN) {
        if (stores == NULL || out == NULL) {
            fprintf(stderr, "ggfuzz merge: out of memory\n");
            rc = GG_EXIT_HARNESS;
        } else if (gg_store_merge((const char *const *)stores, n, out, &ms, merge_note, NULL,
                                  err, sizeof err) != GG_OK) {
            fprintf(stderr, "ggfuzz merge: %s\n", err);
            rc = GG_EXIT_HARNESS;
        } else {
            printf("merged %d stores (%lld findings, %lld bucket files) into %s: %lld "
                   "signatures, %lld buckets, %lld sightings; %lld files written", ms.stores,
                   ms.findings_in, ms.buckets_in, out, ms.signatures, ms.buckets, ms.count,
                   ms.written);
            if (ms.skipped > 0)
                printf("; %lld unreadable file%s skipped (see the WARNING lines)", ms.skipped,
                       ms.skipped == 1 ? "" : "s");
            printf("\n");
            rc = ms.skipped > 0 ? GG_EXIT_SKIPPED : 0;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(stores[i]);
    free(stores);
    free(dflt);
    return rc;
}

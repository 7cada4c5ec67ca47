/*
 * bench_sync — what sharing a campaign costs. Part 1 runs `ggfuzz fuzz` against a correct CPU
 * kernel (default grouped_bf16_cpu_tiled, one worker per shard): one shard alone, then N shards
 * at once without syncing (a sync interval longer than the run) and N shards at once syncing
 * every S seconds, and prints cases per second per shard for each (from each shard's
 * fuzzer_stats), the cases taken from other shards (into the corpus, not run) and the time
 * spent reading their logs. With more shards than cores the shards share the cores, so the figure of merit of
 * the sync is N syncing shards against N shards that do not; the shard alone is the throughput a
 * shard with a core (or a GPU) of its own has. Part 2 measures the import itself against the
 * size of a peer's corpus: a peer of M kept cases (for each M), the first pull of all of them,
 * then a pull of 100 cases added to it, against a listing of the peer's corpus directory (what a
 * sync that lists directories would pay every time).
 *
 * Usage: bench_sync [--shards N] [--seconds T] [--sync S] [--kernel K] [--sizes M,M,...]
 *                   [--skip-campaigns] [--dir DIR]
 * (defaults: 16 shards, 300 s, 10 s, grouped_bf16_cpu_tiled, 100,1000,10000; the work goes to a
 * temporary directory removed at the end, or to DIR, kept).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/store/gg_store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct shard_stats {
    double execs, run_time, imported, sync_s, kept;
};

/* The numbers of dir/fuzzer_stats that the benchmark reads. */
static int read_stats(const char *dir, struct shard_stats *s)
{
    char line[1024], *path = gg_path_join(dir, "fuzzer_stats");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f)
        return -1;
    memset(s, 0, sizeof *s);
    while (fgets(line, sizeof line, f)) {
        char key[64];
        double v;
        if (sscanf(line, "%63s : %lf", key, &v) != 2)
            continue;
        if (!strcmp(key, "execs_done"))
            s->execs = v;
        else if (!strcmp(key, "run_time"))
            s->run_time = v;
        else if (!strcmp(key, "imported"))
            s->imported = v;
        else if (!strcmp(key, "sync_seconds"))
            s->sync_s = v;
        else if (!strcmp(key, "new_units"))
            s->kept = v;
    }
    fclose(f);
    return 0;
}

/* Runs n shards of a campaign in campaign at once for seconds, syncing every sync_s; prints a
   line and returns the mean cases per second per shard. */
static double campaign(const char *label, const char campaign[600], const char *kernel, int n,
                       double seconds, double sync_s)
{
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    char shard[32], secs[32], sync[32], log[700];
    snprintf(secs, sizeof secs, "%g", seconds);
    snprintf(sync, sizeof sync, "%g", sync_s);
    for (int i = 0; i < n; i++) {
        snprintf(shard, sizeof shard, "%d/%d", i, n);
        snprintf(log, sizeof log, "%s.log%d", campaign, i);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            FILE *f = freopen(log, "w", stderr);
            (void)f;
            execl(GG_GGFUZZ_EXE, GG_GGFUZZ_EXE, "fuzz", "--kernel", kernel, "--shard", shard,
                  "--campaign", campaign, "--workers", "1", "--max-total-time", secs,
                  "--sync-interval", sync, "--seed", "1", (char *)NULL);
            _exit(127);
        }
        pids[i] = pid;
    }
    for (int i = 0; i < n; i++)
        waitpid(pids[i], NULL, 0);
    free(pids);
    double sum = 0, lo = 1e300, hi = 0, execs = 0, imported = 0, sync_total = 0, kept = 0;
    for (int i = 0; i < n; i++) {
        char dir[700];
        struct shard_stats s;
        snprintf(dir, sizeof dir, "%s/shard-%d", campaign, i);
        if (read_stats(dir, &s) != 0 || s.run_time <= 0) {
            fprintf(stderr, "%s: no statistics (log %s.log%d)\n", dir, campaign, i);
            continue;
        }
        double rate = s.execs / s.run_time;
        sum += rate;
        lo = rate < lo ? rate : lo;
        hi = rate > hi ? rate : hi;
        execs += s.execs;
        imported += s.imported;
        sync_total += s.sync_s;
        kept += s.kept;
    }
    double mean = sum / n;
    printf("%-26s %3d shards  %6.2f cases/s per shard (min %.2f, max %.2f), %5.0f cases run, "
           "%4.0f kept, %5.0f imported, %.3f s reading logs per shard\n", label, n, mean, lo, hi,
           execs, kept, imported, sync_total / n);
    fflush(stdout);
    return mean;
}

/* Writes m small cases of kernel k into peer's corpus and log (the first index is base). */
static int grow_peer(struct gg_sync *peer, const char corpus[800], const struct gg_kernel *k,
                     uint64_t base, int m)
{
    struct gg_gen_config cfg = {.kernel = k, .faults = GG_FAULTS_ALL};
    char err[1024];
    for (int i = 0; i < m; i++) {
        struct gg_case c;
        if (gg_generate(&cfg, 0x5e9cu, base + (uint64_t)i, &c, err, sizeof err) != GG_OK) {
            fprintf(stderr, "generate: %s\n", err);
            return -1;
        }
        char id[GG_CASE_ID_HEX + 1], path[1000];
        gg_case_id(&c, id);
        snprintf(path, sizeof path, "%s/%s.case", corpus, id);
        enum gg_status st = gg_case_save(&c, path, err, sizeof err);
        gg_case_free(&c);
        if (st != GG_OK || gg_sync_publish(peer, id, err, sizeof err) != GG_OK) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
    }
    return 0;
}

/* Seconds to list dir and stat each entry (what a sync by directory listing pays). */
static double list_dir(const char *dir, int *entries)
{
    double t0 = now_s();
    DIR *d = opendir(dir);
    *entries = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char *path = gg_path_join(dir, e->d_name);
        struct stat sb;
        *entries += path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
        free(path);
    }
    if (d)
        closedir(d);
    return now_s() - t0;
}

/* Pulls with self and returns the seconds; *n the cases it got. */
static double timed_pull(struct gg_sync *self, size_t *n)
{
    struct gg_case *cases;
    struct gg_sync_stats ss = {0};
    char err[1024];
    double t0 = now_s();
    if (gg_sync_pull(self, &cases, n, &ss, err, sizeof err) != GG_OK)
        fprintf(stderr, "pull: %s\n", err);
    double t = now_s() - t0;
    for (size_t i = 0; i < *n; i++)
        gg_case_free(&cases[i]);
    free(cases);
    return t;
}

static int import_cost(const char root[512], const char *kernel, const char *sizes)
{
    gg_registry_init();
    const struct gg_kernel *k = gg_registry_find(kernel);
    if (!k) {
        fprintf(stderr, "no kernel %s\n", kernel);
        return 1;
    }
    printf("\nimport cost against the peer's corpus size (one peer, cases of %s):\n", kernel);
    printf("%8s  %14s %16s  %16s %14s  %16s\n", "corpus", "first pull", "per case",
           "pull of +100", "per case", "listing corpus");
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int m = atoi(tok);
        if (m <= 0)
            continue;
        char campaign[700], corpus[800], cmd[1700];
        snprintf(campaign, sizeof campaign, "%s/import-%d", root, m);
        snprintf(corpus, sizeof corpus, "%s/shard-1/corpus", campaign);
        snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/shard-0'", corpus, campaign);
        if (system(cmd) != 0)
            return 1;
        struct gg_sync peer, self;
        char err[1024];
        if (gg_sync_open(&peer, campaign, 1, err, sizeof err) != GG_OK ||
            gg_sync_open(&self, campaign, 0, err, sizeof err) != GG_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (grow_peer(&peer, corpus, k, 0, m) != 0)
            return 1;
        size_t got1, got2;
        double first = timed_pull(&self, &got1);
        if (grow_peer(&peer, corpus, k, (uint64_t)m, 100) != 0)
            return 1;
        double more = timed_pull(&self, &got2);
        int entries;
        double listing = list_dir(corpus, &entries);
        printf("%8d  %12.4f s %13.1f us  %14.4f s %11.1f us  %14.4f s  (%zu, %zu cases; %d "
               "files)\n", m, first, got1 ? 1e6 * first / (double)got1 : 0, more,
               got2 ? 1e6 * more / (double)got2 : 0, listing, got1, got2, entries);
        fflush(stdout);
        gg_sync_close(&peer);
        gg_sync_close(&self);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = 16, skip = 0;
    double seconds = 300, sync_s = 10;
    const char *kernel = "grouped_bf16_cpu_tiled", *sizes = "100,1000,10000", *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--shards") && v)
            n = atoi(argv[++i]);
        else if (!strcmp(a, "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(a, "--sync") && v)
            sync_s = atof(argv[++i]);
        else if (!strcmp(a, "--kernel") && v)
            kernel = argv[++i];
        else if (!strcmp(a, "--sizes") && v)
            sizes = argv[++i];
        else if (!strcmp(a, "--dir") && v)
            dir = argv[++i];
        else if (!strcmp(a, "--skip-campaigns"))
            skip = 1;
        else {
            fprintf(stderr, "usage: bench_sync [--shards N] [--seconds T] [--sync S] [--kernel K] "
                    "[--sizes M,M,...] [--skip-campaigns] [--dir DIR]\n");
            return 2;
        }
    }
    if (n < 1 || seconds <= 0 || sync_s <= 0) {
        fprintf(stderr, "bench_sync: --shards >= 1, --seconds and --sync > 0\n");
        return 2;
    }
    char root[512];
    if (dir)
        snprintf(root, sizeof root, "%s", dir);
    else
        snprintf(root, sizeof root, "/tmp/ggfuzz-bench-sync-XXXXXX");
    if (!dir && mkdtemp(root) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench_sync: %s, %d shards of one worker for %g s each run, sync every %g s, %ld "
           "online CPUs; work in %s\n", kernel, n, seconds, sync_s, cores, root);
    if (!skip) {
        char c1[600], c2[600], c3[600];
        snprintf(c1, sizeof c1, "%s/alone", root);
        snprintf(c2, sizeof c2, "%s/nosync", root);
        snprintf(c3, sizeof c3, "%s/sync", root);
        double alone = campaign("one shard alone", c1, kernel, 1, seconds, 1e9);
        double nosync = campaign("shards at once, no sync", c2, kernel, n, seconds, 1e9);
        double synced = campaign("shards at once, syncing", c3, kernel, n, seconds, sync_s);
        printf("syncing against not syncing: %.1f%%; against one shard alone: %.1f%% (%.1f%% "
               "per core: %d shards on %ld CPUs)\n", nosync > 0 ? 100 * synced / nosync : 0,
               alone > 0 ? 100 * synced / alone : 0,
               alone > 0 ? 100 * synced * n / ((double)(n < cores ? n : cores) * alone) : 0, n,
               cores);
    }
    int rc = import_cost(root, kernel, sizes);
    if (!dir) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        rc |= system(cmd) != 0;
    }
    return rc;
}

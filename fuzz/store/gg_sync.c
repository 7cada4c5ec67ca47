/*
 * gg_sync.c — the directory of a campaign run as shards, and how shards share their corpus
 * through it (AFL++'s sync directory, adapted to a shared file system):
 *
 *   CAMPAIGN/shard-<I>/corpus/<id>.case   the cases shard I kept
 *   CAMPAIGN/shard-<I>/corpus.log         their ids, one line each, in the order kept
 *   CAMPAIGN/shard-<I>/sync_cursors       "J OFFSET" lines: how far shard I read shard J's log
 *   CAMPAIGN/shard-<I>/artifacts/         shard I's findings store
 *   CAMPAIGN/shard-<I>/fuzzer_stats, plot_data
 *
 * A shard appends the id of a kept case to its own log after the case file is in place (each
 * log has one writer, so appends never interleave). A peer reads each other log from its cursor
 * on: what it reads costs what is new, not the whole corpus, and no corpus directory is listed.
 * Only whole lines are consumed, so a line being written (or torn by a kill) is read once it is
 * whole; a writer that starts again cuts a torn last line off. A case file a peer cannot see yet
 * (a shared file system's caches) holds that peer's cursor until a later pull, at most
 * GG_SYNC_RETRIES pulls, and is then skipped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/store/gg_store.h"

#define LOG_NAME "corpus.log"
#define CURSORS_NAME "sync_cursors"
#define GG_SYNC_RETRIES 3

void gg_shard_dir(const char *campaign, int index, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" GG_SHARD_PREFIX "%d", campaign, index);
}

/* The index of a shard directory's name, or -1. */
static int shard_index(const char *name)
{
    size_t plen = strlen(GG_SHARD_PREFIX);
    if (strncmp(name, GG_SHARD_PREFIX, plen) != 0 || !isdigit((unsigned char)name[plen]))
        return -1;
    char *end;
    long v = strtol(name + plen, &end, 10);
    return *end == '\0' && v >= 0 && v < GG_SHARD_MAX ? (int)v : -1;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

enum gg_status gg_shard_list(const char *campaign, int **indexes, size_t *n, char *err,
                             size_t err_len)
{
    *indexes = NULL;
    *n = 0;
    DIR *d = opendir(campaign);
    if (d == NULL) {
        snprintf(err, err_len, "%s: %s", campaign, strerror(errno));
        return GG_E_IO;
    }
    enum gg_status st = GG_OK;
    for (struct dirent *e; st == GG_OK && (e = readdir(d)) != NULL;) {
        int i = shard_index(e->d_name);
        if (i < 0)
            continue;
        int *grown = realloc(*indexes, (*n + 1) * sizeof *grown);
        if (grown == NULL) {
            snprintf(err, err_len, "%s: out of memory", campaign);
            st = GG_E_NOMEM;
        } else {
            *indexes = grown;
            (*indexes)[(*n)++] = i;
        }
    }
    closedir(d);
    if (*n > 1)
        qsort(*indexes, *n, sizeof **indexes, cmp_int);
    return st;
}

/* ---- cursors ------------------------------------------------------------------------------- */

static struct gg_sync_peer *peer_of(struct gg_sync *s, int index)
{
    for (size_t i = 0; i < s->n_peers; i++)
        if (s->peers[i].index == index)
            return &s->peers[i];
    struct gg_sync_peer *grown = realloc(s->peers, (s->n_peers + 1) * sizeof *grown);
    if (grown == NULL)
        return NULL;
    s->peers = grown;
    s->peers[s->n_peers] = (struct gg_sync_peer){.index = index};
    return &s->peers[s->n_peers++];
}

static void path_in(const struct gg_sync *s, int shard, const char *name, char *out, size_t cap)
{
    char dir[GG_SYNC_PATH_MAX - 64];
    gg_shard_dir(s->campaign, shard, dir, sizeof dir);
    snprintf(out, cap, "%s/%s", dir, name);
}

static void load_cursors(struct gg_sync *s)
{
    char path[GG_SYNC_PATH_MAX];
    path_in(s, s->self, CURSORS_NAME, path, sizeof path);
    FILE *f = fopen(path, "r");
    int index;
    long long offset;
    while (f && fscanf(f, "%d %lld", &index, &offset) == 2) {
        struct gg_sync_peer *p = index >= 0 && index != s->self && offset >= 0
                                     ? peer_of(s, index) : NULL;
        if (p != NULL)
            p->offset = offset;
    }
    if (f)
        fclose(f);
}

static enum gg_status save_cursors(struct gg_sync *s, char *err, size_t err_len)
{
    char path[GG_SYNC_PATH_MAX], text[64];
    path_in(s, s->self, CURSORS_NAME, path, sizeof path);
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "the sync cursors", err, err_len);
    if (st != GG_OK)
        return st;
    for (size_t i = 0; i < s->n_peers; i++) {
        snprintf(text, sizeof text, "%d %lld\n", s->peers[i].index, s->peers[i].offset);
        fputs(text, a.f);
    }
    return gg_atomic_commit(&a, 0, err, err_len);
}

/* ---- the own log --------------------------------------------------------------------------- */

/* Cuts a last line without its newline (a write that a kill tore) off the log at path. */
static void repair_tail(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END), keep = end;
    char buf[4096];
    while (keep > 0) {
        off_t from = keep > (off_t)sizeof buf ? keep - (off_t)sizeof buf : 0;
        ssize_t got = pread(fd, buf, (size_t)(keep - from), from);
        if (got <= 0)
            break;
        ssize_t i = got;
        while (i > 0 && buf[i - 1] != '\n')
            i--;
        if (i > 0) {
            keep = from + i;
            break;
        }
        keep = from;
    }
    if (keep != end && ftruncate(fd, keep) != 0)
        keep = end;
    close(fd);
}

enum gg_status gg_sync_open(struct gg_sync *s, const char *campaign, int self, char *err,
                            size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->self = self;
    if ((s->campaign = strdup(campaign)) == NULL) {
        snprintf(err, err_len, "%s: out of memory", campaign);
        return GG_E_NOMEM;
    }
    char path[GG_SYNC_PATH_MAX];
    path_in(s, self, LOG_NAME, path, sizeof path);
    repair_tail(path);
    load_cursors(s);
    return GG_OK;
}

enum gg_status gg_sync_publish(struct gg_sync *s, const char *case_id, char *err, size_t err_len)
{
    char path[GG_SYNC_PATH_MAX], line[GG_CASE_ID_HEX + 2];
    path_in(s, s->self, LOG_NAME, path, sizeof path);
    int n = snprintf(line, sizeof line, "%s\n", case_id);
    /* Opened and closed for each line: a shared file system publishes data on close. */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ssize_t put = fd >= 0 ? write(fd, line, (size_t)n) : -1;
    int e = put == n ? 0 : errno ? errno : EIO;
    if (fd >= 0 && close(fd) != 0 && e == 0)
        e = errno;
    if (e != 0) {
        snprintf(err, err_len, "%s: cannot append: %s", path, strerror(e));
        return GG_E_IO;
    }
    return GG_OK;
}

/* ---- reading the peers --------------------------------------------------------------------- */

/* 1 when line is a case id: GG_CASE_ID_HEX hex digits. */
static int case_id(const char *line)
{
    size_t n = 0;
    while (isxdigit((unsigned char)line[n]))
        n++;
    return n == GG_CASE_ID_HEX && line[n] == '\0';
}

/* Appends the loaded case c to the caller's array. */
static int push(struct gg_case **cases, size_t *n, struct gg_case *c)
{
    struct gg_case *grown = realloc(*cases, (*n + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    *cases = grown;
    (*cases)[(*n)++] = *c;
    return 0;
}

/* Reads peer p's log from its cursor on: each whole line's case goes to cases. */
static void pull_peer(struct gg_sync *s, struct gg_sync_peer *p, struct gg_case **cases,
                      size_t *n, struct gg_sync_stats *ss)
{
    char path[GG_SYNC_PATH_MAX], dir[GG_SYNC_PATH_MAX - 64];
    path_in(s, p->index, LOG_NAME, path, sizeof path);
    gg_shard_dir(s->campaign, p->index, dir, sizeof dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= p->offset) {
        close(fd);
        return;
    }
    size_t len = (size_t)(sb.st_size - p->offset);
    char *buf = malloc(len + 1);
    ssize_t got = buf ? pread(fd, buf, len, p->offset) : -1;
    close(fd);
    if (got <= 0) {
        free(buf);
        return;
    }
    ss->bytes += got;
    buf[got] = '\0';
    for (char *line = buf, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        long long next = p->offset + (long long)(nl + 1 - line);
        char file[GG_SYNC_PATH_MAX + GG_CASE_ID_HEX + 32], err[512];
        snprintf(file, sizeof file, "%s/corpus/%s.case", dir, line);
        struct gg_case c;
        struct stat fsb;
        int id = case_id(line);
        int missing = id && stat(file, &fsb) != 0 && errno == ENOENT;
        if (missing && ++p->misses < GG_SYNC_RETRIES)
            break; /* not visible here yet: the same line next time */
        int ok = !missing && id && gg_case_load(file, &c, err, sizeof err) == GG_OK;
        if (ok && push(cases, n, &c) != 0) {
            gg_case_free(&c);
            break;
        }
        ss->imported += ok;
        ss->skipped += !ok;
        p->misses = 0;
        p->offset = next;
        s->dirty = 1;
    }
    free(buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum gg_status gg_sync_pull(struct gg_sync *s, struct gg_case **cases, size_t *n,
                            struct gg_sync_stats *ss, char *err, size_t err_len)
{
    double t0 = now_s();
    *cases = NULL;
    *n = 0;
    int *shards = NULL;
    size_t n_shards = 0;
    enum gg_status st = gg_shard_list(s->campaign, &shards, &n_shards, err, err_len);
    for (size_t i = 0; st == GG_OK && i < n_shards; i++) {
        if (shards[i] == s->self)
            continue;
        struct gg_sync_peer *p = peer_of(s, shards[i]);
        if (p == NULL) {
            snprintf(err, err_len, "%s: out of memory", s->campaign);
            st = GG_E_NOMEM;
        } else {
            pull_peer(s, p, cases, n, ss);
        }
    }
    free(shards);
    ss->peers = s->n_peers;
    ss->pulls++;
    if (st == GG_OK && s->dirty) {
        st = save_cursors(s, err, err_len);
        s->dirty = 0;
    }
    ss->seconds += now_s() - t0;
    return st;
}

void gg_sync_close(struct gg_sync *s)
{
    free(s->campaign);
    free(s->peers);
    memset(s, 0, sizeof *s);
}

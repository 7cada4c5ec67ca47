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
 *
 * Anything in a peer's directory may have been put there by someone else: a log or a case is
 * read only when it is a regular file (gg_file_open never waits on a FIFO), a pull reads at
 * most GG_SYNC_CHUNK bytes of a log, and a line longer than a case id is passed over to its
 * newline, however many pulls that takes, instead of being read whole.
 *
 * A cursor is kept with a hash of the bytes of the log that end at it (MARK_BYTES: the last
 * line or two read). A peer whose directory was made afresh writes a new log: shorter than the
 * cursor, or with other bytes before it, and the cursor then starts again at 0. The bytes are
 * what identifies the log, not its inode or device: a file system hands a freed inode number to
 * the next file it creates (a log removed and written again may well get the same one), device
 * numbers differ from one NFS client to the next (a requeued shard may run on another node),
 * and a log copied or restored elsewhere keeps its bytes but not its inode. Checking the bytes
 * just before the cursor, rather than the log's first line, also catches a log written again
 * the same at first (the same seed) that differs by the time it reaches the cursor.
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

#include <xxhash.h>

#include "fuzz/store/store_int.h"

#define LOG_NAME "corpus.log"
#define CURSORS_NAME "sync_cursors"
#define GG_SYNC_RETRIES 3
#define MARK_BYTES 64         /* bytes before a cursor that identify the log it points into */
#define CURSORS_MAX (8L << 20) /* bytes of a sync_cursors file: a line per peer */

void gg_shard_dir(const char *campaign, int index, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" GG_SHARD_PREFIX "%d", campaign, index);
}

/* The index of a shard directory's name, or -1: only the name gg_shard_dir() gives an index
   (no sign, no leading zero), so that no two entries stand for one shard. */
static int shard_index(const char *name)
{
    size_t plen = strlen(GG_SHARD_PREFIX);
    if (strncmp(name, GG_SHARD_PREFIX, plen) != 0 || !isdigit((unsigned char)name[plen]) ||
        (name[plen] == '0' && name[plen + 1] != '\0'))
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

/* sync_cursors: "J OFFSET MARK LONG" lines, MARK the 16 hex digits of the peer's mark ("-"
   when there is none; absent, with LONG, in the files of older builds) and LONG 1 when the
   cursor is inside a long line. The file is
   this shard's own, but read like a peer's: only when regular, and bounded. */
static void load_cursors(struct gg_sync *s)
{
    char path[GG_SYNC_PATH_MAX], err[GG_SYNC_PATH_MAX + 64], *text;
    path_in(s, s->self, CURSORS_NAME, path, sizeof path);
    if (gg_file_read(path, (size_t)CURSORS_MAX, &text, NULL, err, sizeof err) != GG_OK)
        return;
    for (char *line = text, *next; *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next)
            *next++ = '\0';
        int index, in_long = 0;
        long long offset;
        char mark[17] = "-", *end;
        int fields = sscanf(line, "%d %lld %16s %d", &index, &offset, mark, &in_long);
        struct gg_sync_peer *p = fields >= 2 && index >= 0 && index != s->self && offset >= 0
                                     ? peer_of(s, index) : NULL;
        if (p != NULL) {
            p->offset = offset;
            p->mark = strtoull(mark, &end, 16);
            p->has_mark = offset > 0 && strlen(mark) == 16 && *end == '\0';
            p->in_long_line = fields >= 4 && in_long == 1;
        }
    }
    free(text);
}

static enum gg_status save_cursors(struct gg_sync *s, char *err, size_t err_len)
{
    char path[GG_SYNC_PATH_MAX];
    path_in(s, s->self, CURSORS_NAME, path, sizeof path);
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "the sync cursors", err, err_len);
    if (st != GG_OK)
        return st;
    for (size_t i = 0; i < s->n_peers; i++) {
        const struct gg_sync_peer *p = &s->peers[i];
        char mark[17] = "-";
        if (p->has_mark)
            snprintf(mark, sizeof mark, "%016llx", (unsigned long long)p->mark);
        fprintf(a.f, "%d %lld %s %d\n", p->index, p->offset, mark, p->in_long_line);
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

/* The mark of the (at most MARK_BYTES) bytes of the log fd that end at offset; 0 when they
   cannot be read whole. */
static int mark_at(int fd, long long offset, uint64_t *mark)
{
    char tail[MARK_BYTES];
    size_t k = offset < MARK_BYTES ? (size_t)offset : MARK_BYTES;
    if (pread(fd, tail, k, (off_t)(offset - (long long)k)) != (ssize_t)k)
        return 0;
    *mark = XXH3_64bits(tail, k);
    return 1;
}

/* Puts p's cursor back to the start of its log when it no longer points into the log it was
   read from (the top of the file says why the bytes before it, not the inode, decide). */
static void check_cursor(struct gg_sync *s, struct gg_sync_peer *p, int fd, long long size,
                         const char *log)
{
    uint64_t mark;
    char why[128] = "";
    if (p->offset > size)
        snprintf(why, sizeof why, "shorter (%lld bytes) than this shard's cursor (%lld)", size,
                 p->offset);
    else if (p->has_mark && (!mark_at(fd, p->offset, &mark) || mark != p->mark))
        snprintf(why, sizeof why, "other bytes than this shard read before its cursor (%lld)",
                 p->offset);
    if (why[0] == '\0')
        return;
    gg_store_note(s->note, s->note_ctx, "INFO: %s: %s: the shard's directory was made afresh; "
                  "reading its log again from the start", log, why);
    *p = (struct gg_sync_peer){.index = p->index};
    s->dirty = 1;
}

/* Moves p's cursor by len bytes (its mark is taken once the pull is done with the log). */
static void advance(struct gg_sync *s, struct gg_sync_peer *p, size_t len)
{
    p->offset += (long long)len;
    p->misses = 0;
    s->dirty = 1;
}

/* Consumes the whole lines of buf (got > 0 bytes of peer p's log at path, from its cursor):
   each line's case goes to cases; what cannot be read is passed over and told. */
static void take_lines(struct gg_sync *s, struct gg_sync_peer *p, const char *path,
                       const char *buf, size_t got, struct gg_case **cases, size_t *n,
                       struct gg_sync_stats *ss)
{
    char dir[GG_SYNC_PATH_MAX - 64], err[GG_SYNC_PATH_MAX + 128];
    gg_shard_dir(s->campaign, p->index, dir, sizeof dir);
    long long not_ids = 0;
    for (const char *line = buf, *end = buf + got; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = (size_t)((nl ? nl : end) - line);
        if (p->in_long_line || len > GG_CASE_ID_HEX) {
            /* Longer than any case id: passed over to its newline, over as many pulls as it
               takes, told once. */
            if (!p->in_long_line) {
                gg_store_note(s->note, s->note_ctx, "WARNING: %s: the line at byte %lld is "
                              "longer than a case id; skipped to its end", path, p->offset);
                ss->skipped++;
            }
            p->in_long_line = nl == NULL;
            advance(s, p, len + (nl != NULL));
            line += len + (nl != NULL);
            continue;
        }
        if (nl == NULL)
            break; /* being written: read once it is whole */
        char id[GG_CASE_ID_HEX + 1], file[GG_SYNC_PATH_MAX + GG_CASE_ID_HEX + 32];
        memcpy(id, line, len);
        id[len] = '\0';
        snprintf(file, sizeof file, "%s/corpus/%s.case", dir, id);
        struct gg_case c;
        struct stat fsb;
        int is_id = case_id(id);
        int missing = is_id && stat(file, &fsb) != 0 && errno == ENOENT;
        if (missing && ++p->misses < GG_SYNC_RETRIES)
            break; /* not visible here yet: the same line next time */
        int ok = is_id && !missing && gg_case_load(file, &c, err, sizeof err) == GG_OK;
        if (ok && push(cases, n, &c) != 0) {
            gg_case_free(&c);
            break;
        }
        if (is_id && !ok)
            gg_store_note(s->note, s->note_ctx, "WARNING: %s%s; skipped",
                          missing ? file : err, missing ? ": still missing" : "");
        not_ids += !is_id;
        ss->imported += ok;
        ss->skipped += !ok;
        advance(s, p, len + 1);
        line = nl + 1;
    }
    if (not_ids > 0)
        gg_store_note(s->note, s->note_ctx, "WARNING: %s: %lld lines that are no case id "
                      "skipped", path, not_ids);
}

/* Reads peer p's log from its cursor on, at most GG_SYNC_CHUNK bytes, into cases. */
static void pull_peer(struct gg_sync *s, struct gg_sync_peer *p, struct gg_case **cases,
                      size_t *n, struct gg_sync_stats *ss)
{
    char path[GG_SYNC_PATH_MAX], err[GG_SYNC_PATH_MAX + 128];
    path_in(s, p->index, LOG_NAME, path, sizeof path);
    struct stat sb;
    int fd = gg_file_open(path, &sb, err, sizeof err);
    if (fd < 0) {
        int bad = errno != ENOENT; /* a peer that kept nothing yet has no log */
        if (bad && !p->unreadable)
            gg_store_note(s->note, s->note_ctx, "WARNING: %s; not read while it is so", err);
        p->unreadable = bad;
        return;
    }
    p->unreadable = 0;
    check_cursor(s, p, fd, (long long)sb.st_size, path);
    long long from = p->offset, avail = (long long)sb.st_size - p->offset;
    size_t len = avail > GG_SYNC_CHUNK ? (size_t)GG_SYNC_CHUNK : avail > 0 ? (size_t)avail : 0;
    char *buf = len > 0 ? malloc(len) : NULL;
    ssize_t got = buf ? pread(fd, buf, len, (off_t)p->offset) : -1;
    if (got > 0) {
        ss->bytes += got;
        take_lines(s, p, path, buf, (size_t)got, cases, n, ss);
    }
    if (p->offset > 0 && (p->offset != from || !p->has_mark)) {
        p->has_mark = mark_at(fd, p->offset, &p->mark);
        s->dirty = 1;
    }
    free(buf);
    close(fd);
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

/*
 * gg_hostbuf.c — host buffers the harness hands to CPU kernels: a reserved mapping with an
 * inaccessible page on each side and a canary band between each page and the data. A write just
 * past either end lands in a canary band (an oob_write finding); a wild access further out hits
 * a PROT_NONE page. Data pages are reserved with MAP_NORESERVE and cost nothing until touched, so
 * tensors past 2^32 bytes can be laid out on an ordinary machine when only a few groups are used.
 * Small mappings are kept in a caller's pool and handed out again, zeroed and with fresh bands.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

/* Bytes between the data start and the trailing PROT_NONE page of a mapping. */
static size_t capacity(const struct gg_hostbuf *b)
{
    return b->map_len - (size_t)(b->data - b->map) - (size_t)sysconf(_SC_PAGESIZE);
}

/* Lays data of bytes bytes into b's mapping and writes both canary bands. */
static void place(struct gg_hostbuf *b, size_t bytes)
{
    b->bytes = bytes;
    b->post = b->data + bytes;
    b->post_len = capacity(b) - bytes;
    gg_oracle_canary_fill(b->pre, b->pre_len);
    gg_oracle_canary_fill(b->post, b->post_len);
}

/* A pooled buffer's bands: reading an intact band costs less than writing it again. */
static void replace(struct gg_hostbuf *b, size_t bytes)
{
    if (bytes == b->bytes && gg_oracle_canary_check(b->pre, b->pre_len) < 0 &&
        gg_oracle_canary_check(b->post, b->post_len) < 0)
        return;
    place(b, bytes);
}

/* The accessible run of a flush mapping (between its two inaccessible pages). */
static size_t flush_run(const struct gg_hostbuf *b)
{
    return b->map_len - 2 * (size_t)sysconf(_SC_PAGESIZE);
}

/* Room a pooled mapping offers for bytes of data: a band mapping up to its trailing band, a
   flush mapping its whole run. */
static size_t room_of(const struct gg_hostbuf *b)
{
    if (b->flush)
        return flush_run(b);
    return capacity(b) > GG_CANARY_BYTES ? capacity(b) - GG_CANARY_BYTES : 0;
}

/* Index of the smallest pooled mapping of the kind flush with room for bytes, or -1. */
static int best_slot(const struct gg_hostpool *pool, size_t bytes, int flush)
{
    int best = -1;
    for (int i = 0; pool && i < pool->n; i++)
        if (pool->slot[i].flush == flush && room_of(&pool->slot[i]) >= bytes &&
            (best < 0 || room_of(&pool->slot[i]) < room_of(&pool->slot[best])))
            best = i;
    return best;
}

/* The smallest pooled mapping with room for bytes and a full post band, removed from pool. */
static int take(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes)
{
    int best = best_slot(pool, bytes, 0);
    if (best < 0)
        return 0;
    *b = pool->slot[best];
    pool->slot[best] = pool->slot[--pool->n];
    memset(b->data, 0, bytes);
    replace(b, bytes);
    return 1;
}

enum gg_status gg_hostbuf_alloc(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    if (take(pool, b, bytes))
        return GG_OK;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pre = (GG_CANARY_BYTES + page - 1) / page * page;
    /* The post band is at least GG_CANARY_BYTES and runs to the next page boundary. */
    size_t tail = bytes + GG_CANARY_BYTES;
    size_t body = (tail + page - 1) / page * page;
    if (bytes > SIZE_MAX / 2) {
        snprintf(err, err_len, "buffer of %zu bytes is too large", bytes);
        return GG_E_NOMEM;
    }
    size_t len = page + pre + body + page;
    uint8_t *map = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        snprintf(err, err_len, "cannot reserve %zu bytes: %s", len, strerror(errno));
        return GG_E_NOMEM;
    }
    if (mprotect(map + page, pre + body, PROT_READ | PROT_WRITE) != 0) {
        snprintf(err, err_len, "cannot map %zu bytes: %s", pre + body, strerror(errno));
        munmap(map, len);
        return GG_E_NOMEM;
    }
    b->map = map;
    b->map_len = len;
    b->pre = map + page;
    b->pre_len = pre;
    b->data = b->pre + pre;
    b->owns = 1;
    place(b, bytes);
    return GG_OK;
}

/* Lays data of bytes bytes flush against the end or the start of a flush mapping's run. */
static void place_flush(struct gg_hostbuf *b, size_t bytes, int at_end)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), run = flush_run(b);
    size_t room = (bytes + GG_GUARD_ALIGN - 1) / GG_GUARD_ALIGN * GG_GUARD_ALIGN;
    b->data = at_end ? b->map + page + run - room : b->map + page;
    b->bytes = bytes;
    b->pre = b->map + page;
    b->pre_len = (size_t)(b->data - b->pre);
    b->post = b->data + bytes;
    b->post_len = (size_t)(b->map + page + run - b->post);
}

enum gg_status gg_hostbuf_alloc_flush(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                      int at_end, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = (bytes + GG_GUARD_ALIGN - 1) / GG_GUARD_ALIGN * GG_GUARD_ALIGN;
    int best = bytes <= SIZE_MAX / 4 ? best_slot(pool, need, 1) : -1;
    if (best >= 0) { /* zeroed data; the slack keeps what it held (an input's is never read) */
        *b = pool->slot[best];
        pool->slot[best] = pool->slot[--pool->n];
        place_flush(b, bytes, at_end);
        memset(b->data, 0, bytes);
        return GG_OK;
    }
    if (bytes > SIZE_MAX / 4) {
        snprintf(err, err_len, "buffer of %zu bytes is too large", bytes);
        return GG_E_NOMEM;
    }
    /* One accessible run of whole pages holding the data rounded up to GG_GUARD_ALIGN, between
       two inaccessible pages; the data at the run's end (at_end) or at its start, the rest of
       its pages a canary slack on the other side (an input's bands are never checked: no full
       band is written, which would cost fresh pages on every case). */
    size_t room = (bytes + GG_GUARD_ALIGN - 1) / GG_GUARD_ALIGN * GG_GUARD_ALIGN;
    size_t run = (room + page - 1) / page * page, len = page + (run ? run : page) + page;
    run = len - 2 * page;
    uint8_t *map = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        snprintf(err, err_len, "cannot reserve %zu bytes: %s", len, strerror(errno));
        return GG_E_NOMEM;
    }
    if (mprotect(map + page, run, PROT_READ | PROT_WRITE) != 0) {
        snprintf(err, err_len, "cannot map %zu bytes: %s", run, strerror(errno));
        munmap(map, len);
        return GG_E_NOMEM;
    }
    b->map = map;
    b->map_len = len;
    b->owns = 1;
    b->flush = 1;
    place_flush(b, bytes, at_end);
    gg_oracle_canary_fill(b->pre, b->pre_len);
    gg_oracle_canary_fill(b->post, b->post_len);
    return GG_OK;
}

int gg_hostbuf_guard_hit(const struct gg_hostbuf *b, int *pre)
{
    if (gg_oracle_canary_check(b->pre, b->pre_len) >= 0) {
        *pre = 1;
        return 1;
    }
    *pre = 0;
    return gg_oracle_canary_check(b->post, b->post_len) >= 0;
}

void gg_hostbuf_free(struct gg_hostpool *pool, struct gg_hostbuf *b)
{
    if (b->owns && b->map) {
        if (pool && pool->n < GG_HOSTPOOL_SLOTS && !b->sealed &&
            room_of(b) <= GG_HOSTPOOL_MAX_BYTES + (size_t)sysconf(_SC_PAGESIZE))
            pool->slot[pool->n++] = *b;
        else
            munmap(b->map, b->map_len);
    }
    memset(b, 0, sizeof *b);
}

void gg_hostpool_drain(struct gg_hostpool *pool)
{
    for (int i = 0; i < pool->n; i++)
        munmap(pool->slot[i].map, pool->slot[i].map_len);
    pool->n = 0;
}

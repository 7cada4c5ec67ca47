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

#include "fuzz/gg_fuzz.h"

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

/* The smallest pooled mapping with room for bytes and a full post band, removed from pool. */
static int take(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes)
{
    int best = -1;
    for (int i = 0; pool && i < pool->n; i++)
        if (capacity(&pool->slot[i]) >= bytes + GG_CANARY_BYTES &&
            (best < 0 || capacity(&pool->slot[i]) < capacity(&pool->slot[best])))
            best = i;
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

enum gg_status gg_hostbuf_alloc_flush(struct gg_hostbuf *b, size_t bytes, int at_end, char *err,
                                      size_t err_len)
{
    memset(b, 0, sizeof *b);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (bytes > SIZE_MAX / 4) {
        snprintf(err, err_len, "buffer of %zu bytes is too large", bytes);
        return GG_E_NOMEM;
    }
    /* One accessible run of a canary band and the data rounded up to GG_GUARD_ALIGN, between
       two inaccessible pages; the data at the run's end (at_end) or at its start. */
    size_t room = (bytes + GG_GUARD_ALIGN - 1) / GG_GUARD_ALIGN * GG_GUARD_ALIGN;
    size_t run = (room + GG_CANARY_BYTES + page - 1) / page * page, len = page + run + page;
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
    b->data = at_end ? map + page + run - room : map + page;
    b->bytes = bytes;
    b->pre = map + page;
    b->pre_len = (size_t)(b->data - b->pre);
    b->post = b->data + bytes;
    b->post_len = (size_t)(map + page + run - b->post);
    b->owns = 1;
    b->sealed = 1; /* never pooled: a pooled buffer has bands on both sides */
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
            capacity(b) <= GG_HOSTPOOL_MAX_BYTES + GG_CANARY_BYTES + (size_t)sysconf(_SC_PAGESIZE))
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

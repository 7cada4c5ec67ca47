/*
 * gg_hostbuf.c — host buffers the harness hands to CPU kernels: a reserved mapping with an
 * inaccessible page on each side and a canary band between each page and the data. A write just
 * past either end lands in a canary band (an oob_write finding); a wild access further out hits
 * a PROT_NONE page. Data pages are reserved with MAP_NORESERVE and cost nothing until touched, so
 * tensors past 2^32 bytes can be laid out on an ordinary machine when only a few groups are used.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/gg_fuzz.h"

enum gg_status gg_hostbuf_alloc(struct gg_hostbuf *b, size_t bytes, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
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
    b->bytes = bytes;
    b->post = b->data + bytes;
    b->post_len = body - bytes;
    b->owns = 1;
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

void gg_hostbuf_free(struct gg_hostbuf *b)
{
    if (b->owns && b->map)
        munmap(b->map, b->map_len);
    memset(b, 0, sizeof *b);
}

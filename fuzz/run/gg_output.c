/*
 * gg_output.c — the part of C a run may touch: the page-rounded ranges around the rows a kernel
 * writes (gg_tensors_make records them; the pages between them are inaccessible). The sentinel
 * fill, the copy of a run's output, the comparison of two runs and the padding check all walk
 * these ranges only, so an output whose rows lie gigabytes apart costs what its rows cost. The
 * run protocol (gg_runner.c) and its targets (gg_hostrun.c, gg_devrun.c) use them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz/run/run_int.h"

int gg_output_range(const struct gg_tensors *t, size_t i, struct gg_range *r)
{
    size_t skip = (size_t)((const uint8_t *)t->ops.c - t->c.data);
    size_t lo = t->live[2][i].lo, hi = t->live[2][i].hi;
    lo = lo > skip ? lo - skip : 0;
    hi = hi > skip ? hi - skip : 0;
    hi = hi < t->c_bytes ? hi : t->c_bytes;
    *r = (struct gg_range){lo, hi > lo ? hi : lo};
    return hi > lo;
}

/* Fills bytes bytes at dst with the sentinel of ct: one element (a byte of two codes for 4-bit
   types; f64: the sentinel in both halves), then doubling copies. dst is element-aligned. */
static void fill_sentinel(uint8_t *dst, size_t bytes, enum gg_dtype ct)
{
    uint32_t s = gg_oracle_sentinel(ct);
    int bits = gg_dtype_bits(ct);
    size_t unit = bits == 4 ? 1 : (size_t)bits / 8;
    if (bytes < unit || unit == 0)
        return;
    if (bits == 64)
        memcpy(dst, (uint32_t[2]){s, s}, 8);
    else
        gg_store_code(ct, dst, 0, s);
    if (bits == 4)
        gg_store_code(ct, dst, 1, s);
    for (size_t done = unit; done < bytes; done *= 2)
        memcpy(dst + done, dst, done < bytes - done ? done : bytes - done);
}

void gg_tensors_poison(struct gg_tensors *t, uint8_t ws_poison)
{
    struct gg_range r;
    for (size_t i = 0; i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            fill_sentinel((uint8_t *)t->ops.c + r.lo, r.hi - r.lo, t->p.c_dtype);
    if (t->ops.workspace)
        memset(t->ops.workspace, ws_poison, t->ops.workspace_bytes);
}

/* Copies of outputs up to this size come from the heap (a worker keeps it from case to case);
   larger ones are reserved mappings whose untouched pages cost nothing. */
#define HEAP_COPY_MAX ((size_t)1 << 20)

void *gg_output_alloc(const struct gg_tensors *t)
{
    if (t->c_bytes <= HEAP_COPY_MAX)
        return malloc(t->c_bytes ? t->c_bytes : 1);
    void *m = mmap(NULL, t->c_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

void gg_output_free(const struct gg_tensors *t, void *copy)
{
    if (copy && t->c_bytes <= HEAP_COPY_MAX)
        free(copy);
    else if (copy)
        munmap(copy, t->c_bytes);
}

void gg_output_save(const struct gg_tensors *t, void *copy)
{
    struct gg_range r;
    for (size_t i = 0; i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            memcpy((uint8_t *)copy + r.lo, (const uint8_t *)t->ops.c + r.lo, r.hi - r.lo);
}

int gg_output_differs(const struct gg_tensors *t, const void *copy)
{
    struct gg_range r;
    for (size_t i = 0; i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r) &&
            gg_oracle_first_diff((const uint8_t *)copy + r.lo, (const uint8_t *)t->ops.c + r.lo,
                                 r.hi - r.lo) >= 0)
            return 1;
    return 0;
}

int gg_output_padding_hit(const struct gg_tensors *t)
{
    size_t bits = (size_t)gg_dtype_bits(t->p.c_dtype), n = 0;
    struct gg_elem_range *live = malloc((t->n_live[2] ? t->n_live[2] : 1) * sizeof *live);
    if (!live) /* cannot happen at the sizes admitted; the check is skipped, never wrong */
        return 0;
    for (size_t i = 0; i < t->n_live[2]; i++) {
        struct gg_range r;
        if (gg_output_range(t, i, &r))
            live[n++] = (struct gg_elem_range){(int64_t)(r.lo * 8 / bits), (int64_t)(r.hi * 8 / bits)};
    }
    int hit = gg_oracle_padding_check_live(&t->p, t->ops.c, live, n) >= 0;
    free(live);
    return hit;
}

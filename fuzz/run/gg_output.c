/*
 * gg_output.c — the part of C a run may touch: the page-rounded ranges around the rows a kernel
 * writes (gg_tensors_make records them; the pages between them are inaccessible). The sentinel
 * fill, the copy of a run's output, the comparison of two runs (as values: every NaN is one, see
 * gg_oracle_first_value_diff) and the padding check all walk these ranges only, so an output
 * whose rows lie gigabytes apart costs what its rows cost. The run protocol (gg_runner.c) and its
 * targets (gg_hostrun.c, gg_devrun.c) use them.
 */
#include <stdatomic.h>
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

/* A pass over the live part of C (and the same bytes of a copy), split over the reference's
   threads when it is large: a multi-gigabyte output's copies, comparisons and first touches
   (with their page faults) then run on every core. The result does not depend on the split. */
enum span_op { SPAN_COPY, SPAN_DIFF, SPAN_ZERO };

struct span_job {
    const struct gg_tensors *t;
    enum span_op op;
    uint8_t *copy;
    atomic_int differs;
};

/* Bytes per thread at least. */
#define SPAN_MIN_BYTES ((int64_t)64 << 20)

static void span_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct span_job *j = ctx;
    uint8_t *c = (uint8_t *)j->t->ops.c;
    enum gg_dtype ct = j->t->p.c_dtype;
    /* A comparison takes whole elements: the elements that start in [lo, hi) (ranges start on
       element boundaries: whole pages from an element-aligned C, or C's start). */
    int64_t unit = j->op == SPAN_DIFF && gg_dtype_bits(ct) > 8 ? gg_dtype_bits(ct) / 8 : 1;
    int64_t at = 0; /* flat offset of range i's first byte */
    struct gg_range r;
    for (size_t i = 0; i < j->t->n_live[2] && at < hi; i++) {
        if (!gg_output_range(j->t, i, &r))
            continue;
        int64_t len = (int64_t)(r.hi - r.lo), a = lo > at ? lo : at;
        int64_t b = hi < at + len ? hi : at + len;
        a = at + (a - at + unit - 1) / unit * unit;
        b = at + (b - at + unit - 1) / unit * unit;
        b = b < at + len ? b : at + len;
        if (a < b) {
            size_t off = r.lo + (size_t)(a - at), n = (size_t)(b - a);
            if (j->op == SPAN_COPY)
                memcpy(j->copy + off, c + off, n);
            else if (j->op == SPAN_ZERO)
                memset(c + off, 0, n);
            else if (gg_oracle_first_value_diff(ct, j->copy + off, c + off, n) >= 0)
                atomic_store(&j->differs, 1);
        }
        at += len;
    }
}

static int over_output(const struct gg_tensors *t, enum span_op op, const void *copy)
{
    struct span_job j = {.t = t, .op = op, .copy = (uint8_t *)copy};
    atomic_init(&j.differs, 0);
    int64_t total = 0;
    struct gg_range r;
    for (size_t i = 0; i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            total += (int64_t)(r.hi - r.lo);
    gg_par_for(total, SPAN_MIN_BYTES, span_range, &j);
    return atomic_load(&j.differs);
}

void gg_output_save(const struct gg_tensors *t, void *copy)
{
    over_output(t, SPAN_COPY, copy);
}

int gg_output_differs(const struct gg_tensors *t, const void *copy)
{
    return over_output(t, SPAN_DIFF, copy);
}

void gg_output_touch(struct gg_tensors *t)
{
    struct gg_range r;
    int64_t total = 0;
    for (size_t i = 0; i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            total += (int64_t)(r.hi - r.lo);
    if (gg_par_threads(total, SPAN_MIN_BYTES) > 1)
        over_output(t, SPAN_ZERO, NULL);
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

struct zero_job {
    uint8_t *p;
};

static void zero_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    memset(((struct zero_job *)ctx)->p + lo, 0, (size_t)(hi - lo));
}

void gg_par_zero(void *p, size_t n)
{
    struct zero_job j = {p};
    if (gg_par_threads((int64_t)n, SPAN_MIN_BYTES) > 1)
        gg_par_for((int64_t)n, SPAN_MIN_BYTES, zero_range, &j);
}

/*
 * store_int.h — internal to fuzz/store/: the parts the findings (gg_findings.c), their buckets
 * (gg_buckets.c), the merge of stores (gg_merge.c) and the sync of shards (gg_sync.c) share.
 */
#ifndef GG_STORE_INT_H
#define GG_STORE_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/store/gg_store.h"

/* Tells fn (when not NULL) one line made from fmt: a reader's "WARNING: ..." or "INFO: ...". */
static inline void gg_store_note(gg_store_note_fn fn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void gg_store_note(gg_store_note_fn fn, void *ctx, const char *fmt, ...)
{
    if (fn == NULL)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fn(ctx, line);
}

/* a + b for counts of sightings (both >= 0), saturating at INT64_MAX instead of overflowing. */
static inline long long gg_count_add(long long a, long long b)
{
    long long sum;
    return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

/* The findings store's shared parts (gg_findings.c), for its bucket files (gg_buckets.c): the
   exclusive lock on <dir>/.lock (created with dir when missing; held until *fd is closed), the
   time stamp of a sighting (GG_STAMP_MAX, gg_store.h), and the order that keeps the smaller case (fewer groups, then fewer
   output elements; 1 when a is strictly smaller than b). */
enum gg_status gg_store_lock(const char *dir, int *fd, char *err, size_t err_len);
void gg_store_now(char stamp[GG_STAMP_MAX]);
int gg_case_smaller(const struct gg_case *a, const struct gg_case *b);
/* The paths of the .case files of dir, not hidden (*names malloc'd, each entry too; NULL list
   when dir is missing), for the buckets' scan and the merge (gg_buckets.c). */
enum gg_status gg_store_case_files(const char *dir, char ***names, size_t *n, char *err,
                                   size_t err_len);
/* Groups and logical output elements of an expanded case (moe_sorted: m·topk rows of n). */
void gg_case_size(const struct gg_case *c, int64_t *groups, int64_t *elems);

#endif /* GG_STORE_INT_H */

/*
 * store_int.h — internal to fuzz/store/: the parts the findings (gg_findings.c), their buckets
 * (gg_buckets.c) and the merge of stores (gg_merge.c) share.
 */
#ifndef GG_STORE_INT_H
#define GG_STORE_INT_H

#include "fuzz/store/gg_store.h"

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

/*
 * gg_suite_merge.c — `ggfuzz suite --merge`: the results of the shards of one run (each case
 * judged by its shard exactly as one process judges it, against the same baseline) put back into
 * the result one process would have written. The shards must be all there, once each, from the
 * same run's settings; their records are put in the whole run's order (each carries its place),
 * and the counts, the gate's verdict and its reasons are derived from them as a run derives them
 * (gg_suite_result.c). The header is the first shard's, its start the earliest and its duration
 * the longest shard's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/suite/suite_int.h"

/* A string field of the header that every shard must share, for messages. */
struct same {
    const char *name;
    size_t off;
};

#define SAME(f) {#f, offsetof(struct gg_rsuite, f)}
static const struct same same_strs[] = {SAME(tier), SAME(ggfuzz_version), SAME(mutant),
                                        SAME(baseline)};

/* 0 when shard b was run with a's settings; else -1 with the message. */
static int same_run(const struct gg_rsuite *a, const struct gg_rsuite *b, char *err,
                    size_t err_len)
{
    for (size_t i = 0; i < sizeof same_strs / sizeof *same_strs; i++) {
        const char *x = *(const char *const *)(const void *)((const char *)a + same_strs[i].off);
        const char *y = *(const char *const *)(const void *)((const char *)b + same_strs[i].off);
        if (strcmp(x, y) != 0) {
            snprintf(err, err_len, "%s: %s is '%s', but '%s' in %s: not shards of one run",
                     b->path, same_strs[i].name, y, x, a->path);
            return -1;
        }
    }
    int kernels_differ = a->n_kernels != b->n_kernels;
    for (size_t i = 0; !kernels_differ && i < a->n_kernels; i++)
        kernels_differ = strcmp(a->kernels[i], b->kernels[i]) != 0;
    const char *what = kernels_differ ? "kernels" :
                       a->thresholds_version != b->thresholds_version ? "thresholds_version" :
                       a->gate_snr_drop_db.v != b->gate_snr_drop_db.v ? "gate.snr_drop_db" :
                       a->perf != b->perf ? "gate.perf" :
                       a->shard_count != b->shard_count ? "shard.count" :
                       a->shard_records != b->shard_records ? "shard.records" : NULL;
    if (what) {
        snprintf(err, err_len, "%s: %s differs from %s's: not shards of one run", b->path, what,
                 a->path);
        return -1;
    }
    return 0;
}

/* Loads and checks the shards: every index of the count once. */
static enum gg_status load_shards(const char *const *paths, int n, struct gg_rsuite *r,
                                  char *err, size_t err_len)
{
    for (int i = 0; i < n; i++) {
        enum gg_status st = gg_suite_result_load(paths[i], &r[i], err, err_len);
        if (st != GG_OK)
            return st;
        if (r[i].shard_count < 1 || r[i].shard_index < 0 || r[i].shard_records < 0) {
            snprintf(err, err_len, "%s: not a shard's result (ggfuzz suite --shard I/N --json "
                     "FILE writes one)", paths[i]);
            return GG_E_INVAL;
        }
        if (i > 0 && same_run(&r[0], &r[i], err, err_len) != 0)
            return GG_E_INVAL;
        for (int j = 0; j < i; j++)
            if (r[j].shard_index == r[i].shard_index) {
                snprintf(err, err_len, "%s and %s are both shard %lld", paths[j], paths[i],
                         (long long)r[i].shard_index);
                return GG_E_INVAL;
            }
    }
    if (n != r[0].shard_count) {
        int64_t missing = 0;
        for (int64_t k = 0; k < r[0].shard_count; k++) {
            int found = 0;
            for (int i = 0; i < n; i++)
                found |= r[i].shard_index == k;
            if (!found) {
                missing = k;
                break;
            }
        }
        snprintf(err, err_len, "%d results of a run in %lld shards: shard %lld/%lld is missing",
                 n, (long long)r[0].shard_count, (long long)missing,
                 (long long)r[0].shard_count);
        return GG_E_INVAL;
    }
    return GG_OK;
}

/* Puts every shard's records at their place in the whole run; -1 with the message when a place
   is taken twice, out of range or left empty. */
static int place(const struct gg_rsuite *r, int n, const struct gg_rcase **at, char *err,
                 size_t err_len)
{
    int64_t total = r[0].shard_records;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].n_cases; k++) {
            const struct gg_rcase *c = &r[i].cases[k];
            if (c->order < 0 || c->order >= total || at[c->order] != NULL) {
                snprintf(err, err_len, "%s: cases[%zu].order %lld is %s", r[i].path, k,
                         (long long)c->order, c->order < 0 || c->order >= total
                                                  ? "out of the run" : "given twice");
                return -1;
            }
            at[c->order] = c;
        }
    for (int64_t k = 0; k < total; k++)
        if (at[k] == NULL) {
            snprintf(err, err_len, "the shards hold no record %lld of the %lld of the run",
                     (long long)k, (long long)total);
            return -1;
        }
    return 0;
}

/* The merged header: the first shard's, not a shard's any more, with the earliest start, the
   longest duration and the gate as the merged cases give it. */
static enum gg_status merged_header(struct gg_rsuite *m, const struct gg_rsuite *r, int n,
                                    const struct gg_suite_summary *sum)
{
    struct gg_rsuite h = r[0];
    for (int i = 1; i < n; i++) {
        if (strcmp(r[i].started, h.started) < 0)
            h.started = r[i].started;
        if (r[i].seconds.set && (!h.seconds.set || r[i].seconds.v > h.seconds.v))
            h.seconds = r[i].seconds;
        if (!h.gpu[0])
            h.gpu = r[i].gpu;
    }
    char reasons[GG_N_REASONS][128];
    const char *ptrs[GG_N_REASONS];
    h.n_reasons = gg_suite_reasons(m, r[0].gate_snr_drop_db.v, reasons);
    for (size_t i = 0; i < h.n_reasons; i++)
        ptrs[i] = reasons[i];
    h.reasons = ptrs;
    h.gate_verdict = sum->gate_failed ? "fail" : "pass";
    h.shard_index = h.shard_count = h.shard_records = -1;
    return gg_suite_result_set_header(m, &h);
}

enum gg_status gg_suite_merge(const char *const *paths, int n, const struct gg_suite_opts *o,
                              struct gg_suite_summary *sum, char *err, size_t err_len)
{
    memset(sum, 0, sizeof *sum);
    if (n < 1) {
        snprintf(err, err_len, "--merge needs the shards' result files");
        return GG_E_INVAL;
    }
    struct gg_rsuite *r = calloc((size_t)n, sizeof *r), m;
    memset(&m, 0, sizeof m);
    if (r == NULL) {
        snprintf(err, err_len, "out of memory");
        return GG_E_NOMEM;
    }
    enum gg_status st = load_shards(paths, n, r, err, err_len);
    const struct gg_rcase **at = NULL;
    if (st == GG_OK) {
        at = calloc(r[0].shard_records ? (size_t)r[0].shard_records : 1, sizeof *at);
        if (at == NULL) {
            snprintf(err, err_len, "out of memory");
            st = GG_E_NOMEM;
        } else if (place(r, n, at, err, err_len) != 0) {
            st = GG_E_INVAL;
        }
    }
    for (int64_t k = 0; st == GG_OK && k < r[0].shard_records; k++) {
        struct gg_rcase c = *at[k];
        c.order = -1;
        if (gg_suite_result_add(&m, &c) != GG_OK) {
            snprintf(err, err_len, "out of memory");
            st = GG_E_NOMEM;
        }
        else
            gg_suite_print_case(o->out, &m.cases[m.n_cases - 1]);
    }
    if (st == GG_OK) {
        gg_suite_count(&m, sum);
        if (merged_header(&m, r, n, sum) != GG_OK) {
            snprintf(err, err_len, "out of memory");
            st = GG_E_NOMEM;
        }
    }
    if (st == GG_OK) {
        fprintf(o->out, "merged %d shards of %s\n", n, paths[0]);
        gg_suite_print_summary(o->out, &m, sum, m.seconds.v, 0);
        gg_suite_write_outputs(o, &m, sum);
    }
    free(at);
    for (int i = 0; i < n; i++)
        gg_suite_result_free(&r[i]);
    free(r);
    gg_suite_result_free(&m);
    return st;
}

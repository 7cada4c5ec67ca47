/*
 * stateful_plugin.c — a test-only plugin whose kernel keeps state between calls, as real kernels
 * do: grouped_bf16_weight_cache converts W to fp32 once and keeps the copy for later calls. It
 * computes the grouped forward GEMM (bf16 X and W, fp32 sums in order, bf16 or f32 output).
 * Correct, it keys the copy by W's address, shape and a hash of its bytes; its mutant
 * stale_weight_cache keys it by address and shape alone, the way a prepacked-weight cache keyed
 * by data_ptr goes wrong: a later call whose W has the same address and shape but other values
 * gets the old weights. Such a fault shows only after an earlier case in the same process.
 * STATEFUL_PLUGIN_DELAY_MS makes each run take that much longer (a slow kernel, for tests of what
 * a campaign prints over time).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gg_kernel.h"
#include "plugin_fwd_bf16.h"

#define KERNEL_NAME "grouped_bf16_weight_cache"

static struct {
    const void *b;
    int64_t groups, n, k;
    uint64_t hash; /* 0 under the mutant */
    float *w;
} cache;

static uint64_t fnv1a(const uint16_t *p, int64_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h | 1; /* never 0 */
}

static int cache_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    const char *no = fwd_bf16_refusal(p);
    if (no == NULL && ((p->lda && p->lda != p->k) || (p->ldb && p->ldb != p->k) ||
             (p->ldc && p->ldc != p->n) || (p->stride_b && p->stride_b != p->n * p->k)))
        no = "packed operands only";
    else if (no == NULL && p->groups * p->n * p->k > ((int64_t)1 << 26))
        no = "W of at most 2^26 elements";
    if (no != NULL) {
        snprintf(why, why_len, KERNEL_NAME ": %s", no);
        return 0;
    }
    return 1;
}

static enum gg_status cache_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    if (!cache_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    const char *delay = getenv("STATEFUL_PLUGIN_DELAY_MS");
    long ms = delay ? atol(delay) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (ms > 0 && nanosleep(&ts, &ts) != 0)
        ;
    const int64_t nw = p->groups * p->n * p->k;
    const uint16_t *a = o->a, *b = o->b;
    uint64_t hash = gg_mutant_is(p, "stale_weight_cache") ? 0 : fnv1a(b, nw);
    if (cache.w == NULL || cache.b != o->b || cache.groups != p->groups || cache.n != p->n ||
        cache.k != p->k || cache.hash != hash) {
        float *w = malloc((size_t)(nw > 0 ? nw : 1) * sizeof *w);
        if (w == NULL) {
            snprintf(err, err_len, KERNEL_NAME ": out of memory");
            return GG_E_NOMEM;
        }
        for (int64_t i = 0; i < nw; i++)
            w[i] = bf16_to_f32(b[i]);
        free(cache.w);
        cache.w = w;
        cache.b = o->b;
        cache.groups = p->groups, cache.n = p->n, cache.k = p->k, cache.hash = hash;
    }
    for (int64_t g = 0; g < p->groups; g++) {
        const float *wg = cache.w + g * p->n * p->k;
        for (int64_t i = p->group_offs[g]; i < p->group_offs[g + 1]; i++)
            for (int64_t j = 0; j < p->n; j++) {
                float acc = 0.0f;
                for (int64_t r = 0; r < p->k; r++)
                    acc += bf16_to_f32(a[i * p->k + r]) * wg[j * p->k + r];
                if (p->c_dtype == GG_DTYPE_BF16)
                    ((uint16_t *)o->c)[i * p->n + j] = f32_to_bf16(acc);
                else
                    ((float *)o->c)[i * p->n + j] = acc;
            }
    }
    return GG_OK;
}

static const char *const cache_mutants[] = {"stale_weight_cache", NULL};

static const struct gg_kernel cache_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = KERNEL_NAME,
    .summary = "test plugin: grouped bf16 fwd with W converted once and cached between calls",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
    .mutants = cache_mutants,
    .supports = cache_supports,
    .run = cache_run,
};

const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;

enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len)
{
    return host->add_kernel(host->ctx, &cache_kernel, err, err_len);
}

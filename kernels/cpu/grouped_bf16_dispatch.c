/*
 * grouped_bf16_dispatch.c — two dispatch modes of a real grouped-GEMM library over the shared
 * BF16 machinery: grouped_bf16_cpu_serial launches one GEMM per group in order, walking the
 * weight pointer expert by expert, each launch with its own slice of the workspace;
 * grouped_bf16_cpu_streams spreads the groups with at most `threshold` tokens round-robin over
 * `streams` concurrent threads (one workspace slice each) and then runs the larger groups one
 * after another with the slice of stream 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/grouped_bf16_int.h"

/* Workspace bytes of group g's own launch. */
static size_t group_ws(const struct cpu_bf16_map *m, int64_t g)
{
    return cpu_bf16_launch_ws(cpu_bf16_group_tiles(m, g), m->geo.split);
}

/* The launch of group g alone, its weights at element w_off, its partials in ws. */
static struct cpu_bf16_launch group_launch(const struct cpu_bf16_map *m,
                                           const struct gg_problem *p,
                                           const struct gg_operands *o, int64_t g,
                                           int64_t w_off, float *ws)
{
    struct cpu_bf16_launch l = {.m = m, .a = o->a, .b = o->b, .c = o->c,
                                .c_dtype = p->c_dtype, .g0 = g, .ng = 1, .tile_start = NULL,
                                .blk = family_grouped_block_of(&m->geo, g),
                                .tiles = cpu_bf16_group_tiles(m, g), .ws = ws};
    if (m->geo.op != GG_OP_GROUPED_WGRAD)
        l.blk.b_off = w_off;
    return l;
}

/* ---- grouped_bf16_cpu_serial ------------------------------------------------------------ */

static const char *const serial_mutants[] = {"zero_len_ptr_skip", FAMILY_BF16_MUTANTS_SHARED,
                                             NULL};

static int serial_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_bf16_supports(p, serial_mutants, why, why_len);
}

/* Every group owns the workspace of its launch: the sum of the per-group needs. */
static size_t serial_used(const struct cpu_bf16_map *m)
{
    size_t total = 0;
    for (int64_t g = 0; g < m->geo.groups; g++)
        total += group_ws(m, g);
    return total;
}

static size_t serial_workspace_bytes(const struct gg_problem *p)
{
    struct cpu_bf16_map m;
    return cpu_bf16_ws_map(p, &m) ? cpu_bf16_reported_ws(p, serial_used(&m)) : 0;
}

static enum gg_status serial_groups(const struct gg_problem *p, const struct gg_operands *o,
                                    const struct cpu_bf16_map *m, struct cpu_bf16_worker *w,
                                    char *err, size_t err_len)
{
    int ptr_skip = gg_mutant_is(p, "zero_len_ptr_skip") && m->geo.op != GG_OP_GROUPED_WGRAD;
    float *ws = o->workspace;
    int64_t w_off = 0; /* the weight pointer of the group being launched, W_g at g·stride_b */
    for (int64_t g = 0; g < m->geo.groups; g++) {
        /* zero_len_ptr_skip: an empty group is skipped before the weight pointer moves on, so
           every later group reads the weights of the expert before it. */
        if (ptr_skip && m->geo.offs[g + 1] == m->geo.offs[g])
            continue;
        size_t bytes = group_ws(m, g);
        struct cpu_bf16_launch l = group_launch(m, p, o, g, w_off, bytes ? ws : NULL);
        enum gg_status st = cpu_bf16_run_launch(&l, w, err, err_len);
        if (st != GG_OK)
            return st;
        if (bytes) /* without a workspace ws is NULL */
            ws += bytes / sizeof(float);
        w_off += m->geo.stride_b;
    }
    return GG_OK;
}

static enum gg_status serial_run(const struct gg_problem *p, const struct gg_operands *o,
                                 char *err, size_t err_len)
{
    struct cpu_bf16_map m;
    struct cpu_bf16_worker w = {NULL};
    enum gg_status st;
    if ((st = cpu_bf16_prepare(p, serial_mutants, o, &m, err, err_len)) == GG_OK &&
        (st = cpu_bf16_check_ws(p, o, serial_used(&m), err, err_len)) == GG_OK &&
        (st = cpu_bf16_worker_init(&w, err, err_len)) == GG_OK)
        st = serial_groups(p, o, &m, &w, err, err_len);
    cpu_bf16_worker_free(&w);
    return st;
}

const struct gg_kernel gg_kernel_grouped_bf16_cpu_serial = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_bf16_cpu_serial",
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 acc, bf16/f32 out; one GEMM launch per "
               "group, split-K with a workspace slice per group",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = CPU_BF16_TILE_M,
    .tile_n = CPU_BF16_TILE_N,
    .tile_k = CPU_BF16_TILE_K,
    .mutants = serial_mutants,
    .supports = serial_supports,
    .workspace_bytes = serial_workspace_bytes,
    .run = serial_run,
};

/* ---- grouped_bf16_cpu_streams ----------------------------------------------------------- */

static const char *const streams_mutants[] = {"shared_workspace_parallel",
                                              FAMILY_BF16_MUTANTS_SHARED, NULL};

static int streams_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_bf16_streams_supports(p, streams_mutants, why, why_len);
}

/* One stream's slice holds the largest launch of any group (a stream runs its groups one after
   another, and stream 0 also runs the large groups). */
static size_t stream_slice(const struct cpu_bf16_map *m)
{
    size_t most = 0;
    for (int64_t g = 0; g < m->geo.groups; g++) {
        size_t b = group_ws(m, g);
        most = b > most ? b : most;
    }
    return most;
}

static size_t streams_workspace_bytes(const struct gg_problem *p)
{
    struct cpu_bf16_map m;
    int64_t streams = gg_kopt_get(p, "streams", FAMILY_STREAMS_DEFAULT);
    if (streams < 1 || streams > FAMILY_STREAMS_MAX || !cpu_bf16_ws_map(p, &m))
        return 0;
    return cpu_bf16_reported_ws(p, (size_t)streams * stream_slice(&m));
}

/* One stream: its groups, run in order on its own thread with its own worker and slice. */
struct stream {
    const struct gg_problem *p;
    const struct gg_operands *o;
    const struct cpu_bf16_map *m;
    const int64_t *groups;
    int64_t count;
    float *ws;
    struct cpu_bf16_worker w;
    enum gg_status st;
    char err[256];
};

static enum gg_status stream_groups(struct stream *s)
{
    for (int64_t i = 0; i < s->count; i++) {
        int64_t g = s->groups[i];
        struct cpu_bf16_launch l = group_launch(s->m, s->p, s->o, g, g * s->m->geo.stride_b,
                                                group_ws(s->m, g) ? s->ws : NULL);
        enum gg_status st = cpu_bf16_run_launch(&l, &s->w, s->err, sizeof s->err);
        if (st != GG_OK)
            return st;
    }
    return GG_OK;
}

static void *stream_main(void *arg)
{
    struct stream *s = arg;
    s->st = stream_groups(s);
    return NULL;
}

/*
 * Splits the groups with tiles into order[]: the small ones (at most threshold tokens) dealt
 * round-robin to the streams, stream i's at order[first[i] .. first[i+1]), then the large ones
 * at order[first[streams] .. first[streams+1]).
 */
static void deal_groups(const struct cpu_bf16_map *m, int64_t streams, int64_t threshold,
                        int64_t *order, int64_t *first)
{
    int64_t count[FAMILY_STREAMS_MAX + 1] = {0}, small = 0;
    for (int64_t g = 0; g < m->geo.groups; g++) {
        if (cpu_bf16_group_tiles(m, g) == 0)
            continue;
        if (m->geo.offs[g + 1] - m->geo.offs[g] <= threshold)
            count[small++ % streams]++;
        else
            count[streams]++;
    }
    first[0] = 0;
    for (int64_t i = 0; i <= streams; i++)
        first[i + 1] = first[i] + count[i];
    int64_t fill[FAMILY_STREAMS_MAX + 1];
    memcpy(fill, first, sizeof fill);
    small = 0;
    for (int64_t g = 0; g < m->geo.groups; g++) {
        if (cpu_bf16_group_tiles(m, g) == 0)
            continue;
        int64_t len = m->geo.offs[g + 1] - m->geo.offs[g];
        int64_t to = len <= threshold ? small++ % streams : streams;
        order[fill[to]++] = g;
    }
}

/* Starts the streams that hold groups, joins them, then runs the large groups on stream 0. */
static enum gg_status streams_dispatch(struct stream *s, int64_t streams, const int64_t *order,
                                       const int64_t *first, char *err, size_t err_len)
{
    pthread_t threads[FAMILY_STREAMS_MAX];
    int started[FAMILY_STREAMS_MAX] = {0};
    enum gg_status st = GG_OK;
    for (int64_t i = 0; i < streams && st == GG_OK; i++) {
        s[i].groups = order + first[i];
        s[i].count = first[i + 1] - first[i];
        s[i].st = GG_OK;
        if (s[i].count == 0)
            continue;
        if (pthread_create(&threads[i], NULL, stream_main, &s[i]) != 0)
            st = family_fail(err, err_len, GG_E_NOMEM, "cannot start stream %lld", (long long)i);
        else
            started[i] = 1;
    }
    for (int64_t i = 0; i < streams; i++) {
        if (!started[i])
            continue;
        pthread_join(threads[i], NULL);
        if (st == GG_OK && s[i].st != GG_OK)
            st = family_fail(err, err_len, s[i].st, "stream %lld: %s", (long long)i, s[i].err);
    }
    if (st != GG_OK)
        return st;
    s[0].groups = order + first[streams];
    s[0].count = first[streams + 1] - first[streams];
    if ((st = stream_groups(&s[0])) != GG_OK)
        return family_fail(err, err_len, st, "large groups: %s", s[0].err);
    return GG_OK;
}

static enum gg_status streams_run(const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    struct cpu_bf16_map m;
    if (!streams_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    enum gg_status st = cpu_bf16_prepare(p, streams_mutants, o, &m, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t streams = gg_kopt_get(p, "streams", FAMILY_STREAMS_DEFAULT);
    int64_t threshold = gg_kopt_get(p, "threshold", FAMILY_THRESHOLD_DEFAULT);
    size_t slice = stream_slice(&m);
    if ((st = cpu_bf16_check_ws(p, o, (size_t)streams * slice, err, err_len)) != GG_OK)
        return st;
    int64_t *order = malloc((size_t)(m.geo.groups > 0 ? m.geo.groups : 1) * sizeof(int64_t));
    struct stream s[FAMILY_STREAMS_MAX];
    memset(s, 0, sizeof s);
    if (order == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the dispatch order");
    int64_t first[FAMILY_STREAMS_MAX + 2];
    deal_groups(&m, streams, threshold, order, first);
    /* shared_workspace_parallel: every stream is handed the first slice of the workspace. */
    int shared = gg_mutant_is(p, "shared_workspace_parallel");
    for (int64_t i = 0; i < streams && st == GG_OK; i++) {
        s[i] = (struct stream){.p = p, .o = o, .m = &m, .st = GG_OK};
        int64_t at = (shared ? 0 : i) * (int64_t)(slice / sizeof(float));
        s[i].ws = slice == 0 ? NULL : (float *)o->workspace + at;
        st = cpu_bf16_worker_init(&s[i].w, err, err_len);
    }
    if (st == GG_OK)
        st = streams_dispatch(s, streams, order, first, err, err_len);
    for (int64_t i = 0; i < streams; i++)
        cpu_bf16_worker_free(&s[i].w);
    free(order);
    return st;
}

const struct gg_kernel gg_kernel_grouped_bf16_cpu_streams = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_bf16_cpu_streams",
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 acc, bf16/f32 out; small groups spread "
               "over concurrent streams (options streams, threshold), large groups serially",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = CPU_BF16_TILE_M,
    .tile_n = CPU_BF16_TILE_N,
    .tile_k = CPU_BF16_TILE_K,
    .mutants = streams_mutants,
    .supports = streams_supports,
    .workspace_bytes = streams_workspace_bytes,
    .run = streams_run,
};

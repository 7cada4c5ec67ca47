/*
 * grouped_fp8_cpu.c — grouped_fp8_cpu_persistent and grouped_fp8_cpu_tiled: grouped GEMM fwd
 * (NT), dgrad (NN) and variable-K wgrad (TN) on FP8 codes (OCP e4m3/e5m2, or AMD
 * e4m3fnuz/e5m2fnuz) with tensor-wise fp32 scales, fp32 accumulation and bf16 or fp32 output.
 * Codes are decoded through 256-entry tables into fp32 panels, each output tile is accumulated
 * unscaled, and the epilogue multiplies it by a_scale·b_scale[g] in fp32 (as cuBLASLt applies
 * scale_a·scale_b) before one rounding to the output type. Both kernels execute the same phase
 * schedule over all groups: a fixed pool of threads taking items from an atomic counter, or a
 * plain loop.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm_int.h"

/* Output tile of one work item and the K step of one packing round (an FP8 MMA K-step). */
#define TILE_M CPU_GEMM_TILE_M
#define TILE_N CPU_GEMM_TILE_N
#define TILE_K 128
#define TILE_ELEMS CPU_GEMM_TILE_ELEMS
/* Accepted values of the option "workers", and the default pool size. */
#define WORKERS_MAX 64
#define WORKERS_DEFAULT 2

static const char *const fp8_mutants[] = {"fnuz_as_ocp", "i32_group_base", "i32_byte_limit",
                                          "e5m2_inf_as_max", "wgrad_ldc_packed", NULL};

/* Everything a work item reads: the grouped map (offsets are element offsets, which for
   one-byte codes are also byte offsets), the operands with their decode tables, the output,
   the scales, and the tile list with its schedule. */
struct plan {
    struct family_grouped_map m;
    struct cpu_gemm_operand a, b;
    struct cpu_gemm_out out;
    float table_a[256], table_b[256];
    float a_scale;
    const float *b_scale;
    int per_group_scale;  /* b_scale[g] (fwd, dgrad) or b_scale[0] (wgrad) */
    int64_t *tile_start;  /* groups + 1 entries: first tile of each group (prefix sum) */
    struct cpu_sched sched;
};

/* ---- the tile list ----------------------------------------------------------------------- */

static int64_t group_tiles(const void *m, int64_t g)
{
    return cpu_grouped_tiles(m, g, TILE_M, TILE_N);
}

/* Total tile count; fills start[0..groups] with the prefix sum when start is not NULL. */
static int64_t count_tiles(const struct family_grouped_map *m, int64_t *start)
{
    return cpu_tile_prefix(m->groups, group_tiles, m, start);
}

static struct cpu_tile locate_tile(const void *ctx, int64_t t)
{
    const struct plan *pl = ctx;
    int64_t g = cpu_tile_owner(pl->tile_start, pl->m.groups, t);
    struct family_grouped_block b = family_grouped_block_of(&pl->m, g);
    return cpu_tile_in_block(g, t - pl->tile_start[g], b.rows, b.cols, TILE_M, TILE_N);
}

/* Unscaled fp32 sums of the tile over slice sl of its reduction into acc (an empty range leaves
   exact zeros). */
static void compute_tile(const void *ctx, const struct cpu_tile *tile, int64_t sl, int64_t split,
                         void *scratch, float *acc)
{
    const struct plan *pl = ctx;
    const struct cpu_gemm_scratch *s = scratch;
    struct family_grouped_block b = family_grouped_block_of(&pl->m, tile->g);
    struct cpu_gemm_src src = cpu_grouped_src(&pl->m, &b, tile, &pl->a, &pl->b);
    int64_t r0, r1;
    cpu_splitk_slice(b.red, cpu_ceil_div(b.red, split), sl, &r0, &r1);
    cpu_gemm_clear(acc, tile->rows);
    cpu_gemm_accumulate(&src, r0, r1, TILE_K, &s->pn, acc);
}

/* Epilogue: C = RN(acc · (a_scale · b_scale)), the scale product and the scaling each one fp32
   multiplication. */
static void store_tile(const void *ctx, const struct cpu_tile *tile, void *scratch, float *acc)
{
    const struct plan *pl = ctx;
    (void)scratch;
    struct family_grouped_block b = family_grouped_block_of(&pl->m, tile->g);
    float s = pl->a_scale * pl->b_scale[pl->per_group_scale ? tile->g : 0];
    struct cpu_gemm_dst d = {tile->rows, tile->cols, b.c_off + tile->i0 * pl->m.ldc + tile->j0,
                             NULL, &s, 0};
    cpu_gemm_store(&pl->out, &d, acc, TILE_N);
}

/* ---- the persistent execution model ------------------------------------------------------- */

/*
 * Persistent: a fixed pool of workers that lives for the whole run. In each phase every worker
 * takes the next item from the phase's atomic counter until the list is exhausted, then waits
 * at a barrier for the others (the barrier also publishes the workspace partials to the
 * reduction phase). Workers wait at the start gate until the whole pool exists, so a pool that
 * cannot be created is abandoned before any barrier is entered. The fixed order of the split-K
 * sum makes the output independent of which worker ran which item.
 */
struct pool {
    const struct cpu_sched *sched;
    const struct cpu_sched_kernel *kernel;
    atomic_llong *next; /* one counter per phase */
    pthread_barrier_t barrier;
    pthread_mutex_t gate_lock;
    pthread_cond_t gate;
    int open, abandon;
};

struct worker {
    struct pool *pool;
    struct cpu_gemm_scratch s;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pool *pool = w->pool;
    pthread_mutex_lock(&pool->gate_lock);
    while (!pool->open)
        pthread_cond_wait(&pool->gate, &pool->gate_lock);
    int abandon = pool->abandon;
    pthread_mutex_unlock(&pool->gate_lock);
    if (abandon)
        return NULL;
    const struct cpu_sched *sched = pool->sched;
    for (int64_t ph = 0; ph < sched->phases; ph++) {
        int64_t t0, n = cpu_sched_items(sched, ph, &t0);
        for (long long item; (item = atomic_fetch_add(&pool->next[ph], 1)) < n;)
            cpu_sched_run_item(sched, pool->kernel, ph, t0, (int64_t)item, &w->s, w->s.acc);
        pthread_barrier_wait(&pool->barrier);
    }
    return NULL;
}

static void open_gate(struct pool *pool, int abandon)
{
    pthread_mutex_lock(&pool->gate_lock);
    pool->open = 1;
    pool->abandon = abandon;
    pthread_cond_broadcast(&pool->gate);
    pthread_mutex_unlock(&pool->gate_lock);
}

/* Runs the schedule on `workers` threads whose scratch areas start at buf. */
static enum gg_status run_persistent(const struct cpu_sched *sched,
                                     const struct cpu_sched_kernel *kernel, int64_t workers,
                                     float *buf, char *err, size_t err_len)
{
    struct pool pool = {.sched = sched, .kernel = kernel};
    struct worker *w = calloc((size_t)workers, sizeof *w);
    pthread_t *th = calloc((size_t)workers, sizeof *th);
    pool.next = malloc((size_t)(sched->phases > 0 ? sched->phases : 1) * sizeof *pool.next);
    if (w == NULL || th == NULL || pool.next == NULL) {
        free(w), free(th), free(pool.next);
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for a pool of %lld workers",
                           (long long)workers);
    }
    for (int64_t ph = 0; ph < sched->phases; ph++)
        atomic_init(&pool.next[ph], 0);
    enum gg_status st = GG_OK;
    if (pthread_barrier_init(&pool.barrier, NULL, (unsigned)workers) != 0) {
        free(w), free(th), free(pool.next);
        return family_fail(err, err_len, GG_E_INTERNAL, "cannot create a barrier for %lld workers",
                           (long long)workers);
    }
    pthread_mutex_init(&pool.gate_lock, NULL);
    pthread_cond_init(&pool.gate, NULL);
    int64_t started = 0;
    for (; started < workers; started++) {
        w[started] = (struct worker){&pool, cpu_gemm_scratch_at(buf, TILE_K, started)};
        if (pthread_create(&th[started], NULL, worker_main, &w[started]) != 0) {
            st = family_fail(err, err_len, GG_E_NOMEM, "cannot start worker %lld of %lld",
                             (long long)started, (long long)workers);
            break;
        }
    }
    open_gate(&pool, st != GG_OK);
    for (int64_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_cond_destroy(&pool.gate);
    pthread_mutex_destroy(&pool.gate_lock);
    pthread_barrier_destroy(&pool.barrier);
    free(w), free(th), free(pool.next);
    return st;
}

/* ---- supports(), workspace_bytes(), run() -------------------------------------------------- */

static int is_fnuz_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3FNUZ || t == GG_DTYPE_E5M2FNUZ;
}

/* The decode table of operand type t; the mutant fnuz_as_ocp reads fnuz codes with the OCP
   table of the same field layout (finite values twice too large, 0x80 -0 instead of NaN,
   e4m3 0x7F/0xFF NaN instead of ±240, e5m2 top codes Inf/NaN instead of finite), and
   e5m2_inf_as_max decodes the e5m2 infinities 0x7C/0xFC as ±57344, the largest finite value (a
   decoder that clamps the exponent field, or saturates Inf as a quantiser would). */
static void operand_table(const struct gg_problem *p, enum gg_dtype t, float table[256])
{
    if (gg_mutant_is(p, "fnuz_as_ocp") && is_fnuz_fp8(t))
        t = t == GG_DTYPE_E4M3FNUZ ? GG_DTYPE_E4M3 : GG_DTYPE_E5M2;
    cpu_decode_table(t, table);
    if (gg_mutant_is(p, "e5m2_inf_as_max") && t == GG_DTYPE_E5M2) {
        table[0x7C] = 57344.0f;
        table[0xFC] = -57344.0f;
    }
}

static int fp8_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_fp8_supports(p, fp8_mutants, why, why_len);
}

static int persistent_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_supports_option(p, "workers", WORKERS_DEFAULT, 1, WORKERS_MAX, why, why_len) &&
           fp8_supports(p, why, why_len);
}

/* Counts tiles from the host group offsets; 0 without split-K or for a problem it cannot run. */
static size_t fp8_workspace_bytes(const struct gg_problem *p)
{
    struct family_grouped_map m;
    if (!family_grouped_ws_map(p, &m))
        return 0;
    return cpu_splitk_ws(count_tiles(&m, NULL), m.split, TILE_ELEMS);
}

/* Builds the plan of p: map, tile list from the device group offsets, tables, scales. */
static enum gg_status make_plan(const struct gg_problem *p, const struct gg_operands *o,
                                struct plan *pl, char *err, size_t err_len)
{
    family_grouped_map_init(p, o->group_offs_dev, &pl->m);
    /* i32_group_base: the offset g·stride_b of expert g's weights computed in a 32-bit int, so
       past 2^31 elements it points at the wrong expert or before the buffer. */
    pl->m.i32_group_base = gg_mutant_is(p, "i32_group_base");
    enum gg_status st = cpu_grouped_check_fp8(p, &pl->m, o, 1, err, err_len);
    if (st != GG_OK)
        return st;
    /* wgrad_ldc_packed: the wgrad epilogue stores row n of dW_g at n·K, the pitch of packed
       weights, not at n·ldc: with padded rows it writes into the padding of the rows above
       and leaves the ends of dW_g unwritten. */
    if (gg_mutant_is(p, "wgrad_ldc_packed") && p->op == GG_OP_GROUPED_WGRAD)
        pl->m.ldc = p->k;
    operand_table(p, p->a_dtype, pl->table_a);
    operand_table(p, p->b_dtype, pl->table_b);
    /* i32_byte_limit: loads through a buffer descriptor with a 32-bit range, so reads past
       4 GiB land at the start of the buffer. */
    int wrap = gg_mutant_is(p, "i32_byte_limit");
    pl->a = (struct cpu_gemm_operand){o->a, p->a_dtype, pl->table_a, wrap};
    pl->b = (struct cpu_gemm_operand){o->b, p->b_dtype, pl->table_b, wrap};
    pl->out = (struct cpu_gemm_out){o->c, p->c_dtype, pl->m.ldc, NULL, GG_DTYPE_NONE, 0};
    pl->a_scale = o->a_scale != NULL ? *(const float *)o->a_scale : 0.0f;
    pl->b_scale = o->b_scale;
    pl->per_group_scale = p->op != GG_OP_GROUPED_WGRAD;
    pl->tile_start = malloc((size_t)(pl->m.groups + 1) * sizeof(int64_t));
    if (pl->tile_start == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                           (long long)pl->m.groups + 1);
    int64_t tiles = count_tiles(&pl->m, pl->tile_start);
    size_t ws_need = cpu_splitk_ws(tiles, pl->m.split, TILE_ELEMS);
    if ((st = family_check_workspace(o, ws_need > 0, ws_need, pl->m.split, err, err_len)) !=
        GG_OK) {
        free(pl->tile_start);
        return st;
    }
    cpu_sched_init(&pl->sched, tiles, pl->m.split, TILE_ELEMS, TILE_N, o->workspace);
    return GG_OK;
}

/* Shared body of both kernels: workers = 0 runs the non-persistent model, one work item per
   tile (or per (tile, slice)) launched as a grid in list order on the calling thread. */
static enum gg_status fp8_run(const struct gg_problem *p, const struct gg_operands *o,
                              int64_t workers, char *err, size_t err_len)
{
    struct plan *pl = malloc(sizeof *pl);
    if (pl == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the plan");
    enum gg_status st = make_plan(p, o, pl, err, err_len);
    if (st != GG_OK) {
        free(pl);
        return st;
    }
    const struct cpu_sched_kernel kernel = {pl, locate_tile, compute_tile, store_tile};
    int64_t phases = pl->sched.phases;
    size_t nbuf = workers > 0 ? (size_t)workers : 1;
    float *buf = phases > 0 ? malloc(nbuf * cpu_gemm_scratch_floats(TILE_K) * sizeof(float))
                            : NULL;
    if (phases > 0 && buf == NULL) {
        st = family_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    } else if (phases > 0 && workers > 0) {
        st = run_persistent(&pl->sched, &kernel, workers, buf, err, err_len);
    } else if (phases > 0) {
        struct cpu_gemm_scratch s = cpu_gemm_scratch_at(buf, TILE_K, 0);
        cpu_sched_run(&pl->sched, &kernel, &s, s.acc);
    }
    free(buf);
    free(pl->tile_start);
    free(pl);
    return st;
}

static enum gg_status persistent_run(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    if (!persistent_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    return fp8_run(p, o, gg_kopt_get(p, "workers", WORKERS_DEFAULT), err, err_len);
}

static enum gg_status tiled_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    if (!fp8_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    return fp8_run(p, o, 0, err, err_len);
}

#define FP8_OPS                                                                                  \
    (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |                           \
     GG_OP_BIT(GG_OP_GROUPED_WGRAD))

const struct gg_kernel gg_kernel_grouped_fp8_cpu_persistent = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_fp8_cpu_persistent",
    .summary = "grouped fwd/dgrad/wgrad, fp8 (OCP or fnuz) in, tensor scales, fp32 acc, bf16/f32 "
               "out; worker pool over one tile list (option workers), split-K",
    .backend = GG_BACKEND_CPU,
    .ops = FP8_OPS,
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = TILE_K,
    .mutants = fp8_mutants,
    .supports = persistent_supports,
    .workspace_bytes = fp8_workspace_bytes,
    .run = persistent_run,
};

const struct gg_kernel gg_kernel_grouped_fp8_cpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_fp8_cpu_tiled",
    .summary = "grouped fwd/dgrad/wgrad, fp8 (OCP or fnuz) in, tensor scales, fp32 acc, bf16/f32 "
               "out; one work item per tile, split-K",
    .backend = GG_BACKEND_CPU,
    .ops = FP8_OPS,
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = TILE_K,
    .mutants = fp8_mutants,
    .supports = fp8_supports,
    .workspace_bytes = fp8_workspace_bytes,
    .run = tiled_run,
};

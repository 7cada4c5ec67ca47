/*
 * grouped_bf16_cpu.c — the machinery shared by the BF16 grouped kernels (fwd NT, dgrad NN,
 * variable-K wgrad TN; bf16 in, fp32 accumulation, one RNE rounding to bf16 or fp32 out) and
 * the tile-list kernel grouped_bf16_cpu_tiled: launches of tiles computed by the shared tile
 * engine, split-K slices on two threads reduced through the workspace, and the mutants of that
 * machinery at the places their real bugs live (offsets, group skip, reduction fence, epilogue,
 * workspace).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/grouped_bf16_int.h"

#define TILE_M CPU_BF16_TILE_M
#define TILE_N CPU_BF16_TILE_N
#define TILE_K CPU_BF16_TILE_K
#define TILE_ELEMS CPU_GEMM_TILE_ELEMS
#define WAVE_TILES_MAX (CPU_SPLIT_K_WAVE_ITEMS / 2)

/* ---- addressing ------------------------------------------------------------------------- */

void cpu_bf16_map_init(const struct gg_problem *p, const int64_t *offs, struct cpu_bf16_map *m)
{
    family_grouped_map_init(p, offs, &m->geo);
    /* i32_cumulative_offset: m_start·ld, the element offset of a group's first row, computed as
       the product of two int32 values, as the int arithmetic of the real kernels does. */
    m->geo.i32_row_offset = gg_mutant_is(p, "i32_cumulative_offset");
    m->skip_empty_wgrad = gg_mutant_is(p, "wgrad_zero_uninit");
    m->tail_rows = gg_mutant_is(p, "tail_rows_unwritten");
    m->missing_fence = gg_mutant_is(p, "missing_fence");
    /* i32_store_offset: the epilogue addresses C by a 32-bit byte offset, so an output that
       reaches past 2^32 bytes (a large ldc or offset of C, or wgrad's dW with a large stride)
       is written over its own beginning. */
    m->store_wrap32 = gg_mutant_is(p, "i32_store_offset");
    /* read_past_end: the load bound of A's rows is off by one in a partial row tile, so the
       last tile of the last group reads one row past A (the row is discarded: every result is
       right, and only a read guard sees it). */
    m->overread = gg_mutant_is(p, "read_past_end");
    /* ldb_packed: grouped fwd reads row n of W_g at n·K, the pitch of packed weights, not at
       n·ldb: right while ldb = K, wrong rows of W_g (n >= 1) as soon as its rows are padded. */
    if (gg_mutant_is(p, "ldb_packed") && p->op == GG_OP_GROUPED_FWD)
        m->geo.b_sj = p->k;
}

int64_t cpu_bf16_group_tiles(const struct cpu_bf16_map *m, int64_t g)
{
    /* wgrad_zero_uninit: the dispatcher skips every group that holds no tokens, which is right
       for fwd and dgrad but leaves a wgrad group's dW_g = 0 unwritten. */
    if (m->skip_empty_wgrad && m->geo.offs[g + 1] == m->geo.offs[g])
        return 0;
    return cpu_grouped_tiles(&m->geo, g, TILE_M, TILE_N);
}

static int64_t group_tiles_of(const void *m, int64_t g)
{
    return cpu_bf16_group_tiles(m, g);
}

/* Total tile count of all groups; fills start[0..groups] with the prefix sum when not NULL. */
static int64_t count_tiles(const struct cpu_bf16_map *m, int64_t *start)
{
    return cpu_tile_prefix(m->geo.groups, group_tiles_of, m, start);
}

/* ---- workspace -------------------------------------------------------------------------- */

size_t cpu_bf16_launch_ws(int64_t tiles, int64_t split)
{
    return cpu_splitk_ws(tiles, split, TILE_ELEMS);
}

size_t cpu_bf16_reported_ws(const struct gg_problem *p, size_t used)
{
    /* workspace_underreport: the size formula counts one tile of partials fewer than the
       kernel lays out, so the last slot lies past the end of what the caller allocates. */
    if (gg_mutant_is(p, "workspace_underreport") && used >= CPU_BF16_SLOT_BYTES)
        return used - CPU_BF16_SLOT_BYTES;
    return used;
}

int cpu_bf16_ws_map(const struct gg_problem *p, struct cpu_bf16_map *m)
{
    if (!family_grouped_ws_map(p, &m->geo))
        return 0;
    cpu_bf16_map_init(p, p->group_offs, m);
    return 1;
}

enum gg_status cpu_bf16_check_ws(const struct gg_problem *p, const struct gg_operands *o,
                                 size_t used, char *err, size_t err_len)
{
    return family_check_workspace(o, used > 0, cpu_bf16_reported_ws(p, used),
                                  gg_kopt_get(p, "split_k", 1), err, err_len);
}

/* ---- tile computation ------------------------------------------------------------------- */

/* Where tile t of a launch lies: its group's block, and its place in that block. */
struct tile_pos {
    struct family_grouped_block blk;
    struct cpu_tile at;
};

static struct tile_pos locate_tile(const struct cpu_bf16_launch *l, int64_t t)
{
    struct tile_pos tp;
    int64_t local = t;
    if (l->tile_start == NULL) {
        tp.blk = l->blk;
    } else {
        int64_t i = cpu_tile_owner(l->tile_start, l->ng, t);
        tp.blk = family_grouped_block_of(&l->m->geo, l->g0 + i);
        local = t - l->tile_start[i];
    }
    tp.at = cpu_tile_in_block(tp.blk.g, local, tp.blk.rows, tp.blk.cols, TILE_M, TILE_N);
    return tp;
}

/* acc += the tile at tp reduced over r0 .. r1-1 (acc row stride TILE_N, already cleared). */
static void accumulate_tile(const struct cpu_bf16_launch *l, const struct tile_pos *tp,
                            int64_t r0, int64_t r1, const struct cpu_gemm_scratch *s,
                            float *acc)
{
    struct cpu_gemm_operand a = {l->a, GG_DTYPE_BF16, NULL, 0};
    struct cpu_gemm_operand b = {l->b, GG_DTYPE_BF16, NULL, 0};
    struct cpu_gemm_src src = cpu_grouped_src(&l->m->geo, &tp->blk, &tp->at, &a, &b);
    src.a_overread = l->m->overread && tp->at.rows < TILE_M;
    cpu_gemm_accumulate(&src, r0, r1, TILE_K, &s->pn, acc);
}

/* Epilogue of one tile: its logical elements rounded once to C's dtype. */
static void epilogue(const struct cpu_bf16_launch *l, const struct tile_pos *tp, float *acc)
{
    const struct cpu_bf16_map *m = l->m;
    /* tail_rows_unwritten: the store loop stops at the last whole row tile of the output, so
       the rows of the final partial row tile (the last group's rows past a multiple of TILE_M)
       keep whatever C held. (The real bug leaves the padded rows past the last group's end
       unwritten; here C has exactly M rows, so the tail of the last group stands for them.) */
    if (m->tail_rows && m->geo.op != GG_OP_GROUPED_WGRAD && tp->at.rows < TILE_M &&
        tp->blk.row0 + tp->at.i0 + tp->at.rows == m->geo.m)
        return;
    struct cpu_gemm_out out = {l->c, l->c_dtype, m->geo.ldc, NULL, GG_DTYPE_NONE, m->store_wrap32};
    struct cpu_gemm_dst d = {tp->at.rows, tp->at.cols,
                             tp->blk.c_off + tp->at.i0 * m->geo.ldc + tp->at.j0, NULL, NULL, 0};
    cpu_gemm_store(&out, &d, acc, TILE_N);
}

/* ---- launches --------------------------------------------------------------------------- */

enum gg_status cpu_bf16_worker_init(struct cpu_bf16_worker *w, char *err, size_t err_len)
{
    w->buf = malloc(2 * cpu_gemm_scratch_floats(TILE_K) * sizeof(float));
    if (w->buf == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    return GG_OK;
}

void cpu_bf16_worker_free(struct cpu_bf16_worker *w)
{
    free(w->buf);
    w->buf = NULL;
}

/* Without split-K every tile is computed and stored in turn. */
static void run_direct(const struct cpu_bf16_launch *l, const struct cpu_gemm_scratch *s)
{
    for (int64_t t = 0; t < l->tiles; t++) {
        struct tile_pos tp = locate_tile(l, t);
        cpu_gemm_clear(s->acc, tp.at.rows);
        accumulate_tile(l, &tp, 0, tp.blk.red, s, s->acc);
        epilogue(l, &tp, s->acc);
    }
}

/*
 * Split-K state shared by the two threads of a launch. Tiles go in waves of `wave`; item
 * i = tl·split + sl of a wave is slice sl of the wave's tile tl, and thread i mod 2 runs the
 * items in order of i, like a static grid of (tile, slice) CTAs on two processors. Slice sl
 * reduces [sl·ceil(L/S), (sl+1)·ceil(L/S)) ∩ [0, L) into slot i (empty for the trailing slices
 * when L < S: exact zeros). Items 2q and 2q+1 start together: each zeroes its slot, raises
 * begun[i], and waits until its partner has begun, as the co-resident CTAs of a wave run side
 * by side. started[tl] counts the slices of tile tl whose slot is initialised, done[tl] the
 * finished ones; the thread whose increment of done[tl] completes the count (an acquire-release
 * read-modify-write, so every other slice's stores are visible) sums the slots in slice order
 * and stores the tile. A barrier closes each wave before its slots are reused.
 */
struct splitk {
    const struct cpu_bf16_launch *l;
    const struct cpu_bf16_worker *w;
    int64_t wave;
    pthread_barrier_t barrier;
    atomic_int begun[CPU_SPLIT_K_WAVE_ITEMS];
    atomic_int started[WAVE_TILES_MAX], done[WAVE_TILES_MAX], claimed[WAVE_TILES_MAX];
};

struct splitk_thread {
    struct splitk *s;
    int id;
};

static void splitk_reset(struct splitk *s, int64_t tiles)
{
    for (int64_t i = 0; i < tiles * s->l->m->geo.split; i++)
        atomic_store_explicit(&s->begun[i], 0, memory_order_relaxed);
    for (int64_t t = 0; t < tiles; t++) {
        atomic_store_explicit(&s->started[t], 0, memory_order_relaxed);
        atomic_store_explicit(&s->done[t], 0, memory_order_relaxed);
        atomic_store_explicit(&s->claimed[t], 0, memory_order_relaxed);
    }
}

/* True for the one thread that must reduce tile tl after finishing a slice of it. */
static int reducer_of(struct splitk *s, int64_t tl)
{
    int split = (int)s->l->m->geo.split;
    /* missing_fence: the reducer waits only until every slice has begun (its slot zeroed and
       the flag raised before the accumulation, a semaphore released too early) and then reads
       the slots, so it may sum a partial another thread is still accumulating. */
    if (s->l->m->missing_fence)
        return atomic_load_explicit(&s->started[tl], memory_order_acquire) == split &&
               atomic_exchange_explicit(&s->claimed[tl], 1, memory_order_acq_rel) == 0;
    return atomic_fetch_add_explicit(&s->done[tl], 1, memory_order_acq_rel) + 1 == split;
}

/* Item i of the wave starting at tile t0, out of `items`. */
static void splitk_item(struct splitk *s, const struct cpu_gemm_scratch *sc, int64_t t0,
                        int64_t i, int64_t items)
{
    const struct cpu_bf16_launch *l = s->l;
    int64_t split = l->m->geo.split, tl = i / split, sl = i % split, r0, r1;
    struct tile_pos tp = locate_tile(l, t0 + tl);
    float *part = l->ws + tl * split * TILE_ELEMS, *slot = part + sl * TILE_ELEMS;
    cpu_splitk_slice(tp.blk.red, cpu_ceil_div(tp.blk.red, split), sl, &r0, &r1);
    cpu_gemm_clear(slot, tp.at.rows);
    atomic_fetch_add_explicit(&s->started[tl], 1, memory_order_release);
    atomic_store_explicit(&s->begun[i], 1, memory_order_release);
    if ((i ^ 1) < items)
        while (!atomic_load_explicit(&s->begun[i ^ 1], memory_order_acquire))
            sched_yield();
    accumulate_tile(l, &tp, r0, r1, sc, slot);
    if (reducer_of(s, tl)) {
        cpu_splitk_reduce(part, split, TILE_ELEMS, TILE_N, tp.at.rows, tp.at.cols, sc->acc);
        epilogue(l, &tp, sc->acc);
    }
}

static void *splitk_main(void *arg)
{
    struct splitk_thread *th = arg;
    struct splitk *s = th->s;
    struct cpu_gemm_scratch sc = cpu_gemm_scratch_at(s->w->buf, TILE_K, th->id);
    const struct cpu_bf16_launch *l = s->l;
    for (int64_t t0 = 0; t0 < l->tiles; t0 += s->wave) {
        int64_t nt = cpu_min64(s->wave, l->tiles - t0), items = nt * l->m->geo.split;
        for (int64_t i = th->id; i < items; i += 2)
            splitk_item(s, &sc, t0, i, items);
        pthread_barrier_wait(&s->barrier);
        if (th->id == 0)
            splitk_reset(s, nt);
        pthread_barrier_wait(&s->barrier);
    }
    return NULL;
}

static enum gg_status run_split(const struct cpu_bf16_launch *l, const struct cpu_bf16_worker *w,
                                char *err, size_t err_len)
{
    struct splitk *s = malloc(sizeof *s);
    if (s == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the split-K state");
    s->l = l;
    s->w = w;
    s->wave = cpu_splitk_wave(l->tiles, l->m->geo.split);
    splitk_reset(s, s->wave);
    if (pthread_barrier_init(&s->barrier, NULL, 2) != 0) {
        free(s);
        return family_fail(err, err_len, GG_E_NOMEM, "cannot create the split-K barrier");
    }
    pthread_t helper;
    struct splitk_thread th[2] = {{s, 0}, {s, 1}};
    enum gg_status st = GG_OK;
    if (pthread_create(&helper, NULL, splitk_main, &th[1]) != 0) {
        st = family_fail(err, err_len, GG_E_NOMEM, "cannot start the split-K helper thread");
    } else {
        splitk_main(&th[0]);
        pthread_join(helper, NULL);
    }
    pthread_barrier_destroy(&s->barrier);
    free(s);
    return st;
}

enum gg_status cpu_bf16_run_launch(const struct cpu_bf16_launch *l, struct cpu_bf16_worker *w,
                                   char *err, size_t err_len)
{
    if (l->tiles == 0)
        return GG_OK;
    if (l->m->geo.split > 1)
        return run_split(l, w, err, err_len);
    struct cpu_gemm_scratch s = cpu_gemm_scratch_at(w->buf, TILE_K, 0);
    run_direct(l, &s);
    return GG_OK;
}

/* ---- checks ----------------------------------------------------------------------------- */

/* The group arrays of `side`: offs[0] = 0, lens[g] = offs[g+1] - offs[g] >= 0, offs[G] = m. */
static enum gg_status check_groups(const struct family_grouped_map *m, const int64_t *lens,
                                   const char *side, char *err, size_t err_len)
{
    const int64_t *offs = m->offs;
    if (offs == NULL || (m->groups > 0 && lens == NULL))
        return family_fail(err, err_len, GG_E_INVAL, "%s group arrays are NULL", side);
    if (offs[0] != 0)
        return family_fail(err, err_len, GG_E_INVAL, "%s group_offs[0] = %lld, expected 0", side,
                           (long long)offs[0]);
    for (int64_t g = 0; g < m->groups; g++)
        if (lens[g] < 0 || offs[g + 1] - offs[g] != lens[g])
            return family_fail(err, err_len, GG_E_INVAL,
                               "%s group %lld: length %lld, offsets %lld..%lld", side, (long long)g,
                               (long long)lens[g], (long long)offs[g], (long long)offs[g + 1]);
    if (offs[m->groups] != m->m)
        return family_fail(err, err_len, GG_E_INVAL,
                           "%s group_offs[%lld] = %lld differs from m = %lld", side,
                           (long long)m->groups, (long long)offs[m->groups], (long long)m->m);
    return GG_OK;
}

/* Checks sizes, the group arrays, leading dimensions and the operand pointers. */
static enum gg_status check_problem(const struct gg_problem *p, const struct family_grouped_map *m,
                                    const int64_t *lens, const char *side,
                                    const struct gg_operands *o, char *err, size_t err_len)
{
    enum gg_status st;
    if ((st = family_grouped_check_sizes(m, err, err_len)) != GG_OK ||
        (st = check_groups(m, lens, side, err, err_len)) != GG_OK ||
        (st = family_grouped_check_strides(m, err, err_len)) != GG_OK)
        return st;
    struct family_grouped_use use = family_grouped_uses(m);
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    if ((st = family_check_ptr(o->a, use.a, sizeof(uint16_t), "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, use.b, sizeof(uint16_t), "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, use.c, c_size, "c", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

enum gg_status cpu_bf16_prepare(const struct gg_problem *p, const char *const *mutants,
                                const struct gg_operands *o, struct cpu_bf16_map *m, char *err,
                                size_t err_len)
{
    if (!family_bf16_supports(p, mutants, err, err_len))
        return GG_E_UNSUPPORTED;
    int host = gg_kopt_get(p, "lens_from", 0) == 1;
    cpu_bf16_map_init(p, host ? p->group_offs : o->group_offs_dev, m);
    return check_problem(p, &m->geo, host ? p->group_lens : o->group_lens_dev,
                         host ? "host" : "device", o, err, err_len);
}

/* ---- grouped_bf16_cpu_tiled ------------------------------------------------------------- */

static const char *const tiled_mutants[] = {FAMILY_BF16_MUTANTS_SHARED, "i32_store_offset",
                                            "read_past_end", "ldb_packed", NULL};

static int tiled_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_bf16_supports(p, tiled_mutants, why, why_len);
}

/* One launch over every group: its split-K wave holds partials of tiles of any group. */
static size_t tiled_workspace_bytes(const struct gg_problem *p)
{
    struct cpu_bf16_map m;
    if (!cpu_bf16_ws_map(p, &m))
        return 0;
    return cpu_bf16_reported_ws(p, cpu_bf16_launch_ws(count_tiles(&m, NULL), m.geo.split));
}

static enum gg_status tiled_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    struct cpu_bf16_map m;
    enum gg_status st = cpu_bf16_prepare(p, tiled_mutants, o, &m, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t *start = malloc((size_t)(m.geo.groups + 1) * sizeof(int64_t));
    if (start == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                           (long long)m.geo.groups + 1);
    struct cpu_bf16_launch l = {.m = &m, .a = o->a, .b = o->b, .c = o->c,
                                .c_dtype = p->c_dtype, .g0 = 0, .ng = m.geo.groups,
                                .tile_start = start};
    l.tiles = count_tiles(&m, start);
    size_t used = cpu_bf16_launch_ws(l.tiles, m.geo.split);
    l.ws = used > 0 ? o->workspace : NULL;
    struct cpu_bf16_worker w = {NULL};
    if ((st = cpu_bf16_check_ws(p, o, used, err, err_len)) == GG_OK &&
        (st = cpu_bf16_worker_init(&w, err, err_len)) == GG_OK)
        st = cpu_bf16_run_launch(&l, &w, err, err_len);
    cpu_bf16_worker_free(&w);
    free(start);
    return st;
}

const struct gg_kernel gg_kernel_grouped_bf16_cpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_bf16_cpu_tiled",
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 acc, bf16/f32 out; one tile list over "
               "all groups, split-K",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = TILE_K,
    .mutants = tiled_mutants,
    .supports = tiled_supports,
    .workspace_bytes = tiled_workspace_bytes,
    .run = tiled_run,
};

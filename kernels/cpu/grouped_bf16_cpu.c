/*
 * grouped_bf16_cpu.c — the machinery shared by the BF16 grouped kernels (fwd NT, dgrad NN,
 * variable-K wgrad TN; bf16 in, fp32 accumulation, one RNE rounding to bf16 or fp32 out) and
 * the tile-list kernel grouped_bf16_cpu_tiled: launches of packed micro-kernel tiles, split-K
 * slices on two threads reduced through the workspace, and the mutants of that machinery at
 * the places their real bugs live (offsets, group skip, reduction fence, epilogue, workspace).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/grouped_bf16_int.h"

#define TILE_M CPU_GROUPED_TILE_M
#define TILE_N CPU_GROUPED_TILE_N
#define TILE_K CPU_GROUPED_TILE_K
/* Register block of the micro-kernel: MICRO_M x MICRO_N fp32 accumulators. 2 x 16 is eight
   4-lane vectors plus four for a row of B, which fits the 16 SSE registers of baseline x86-64;
   of the blocks measured (2x16, 4x8, 4x16, 8x8) it was the fastest, and 4x16 and 8x8 spill. */
#define MICRO_M 2
#define MICRO_N 16
/* Accepted values of the option "split_k". */
#define SPLIT_K_MAX 64
/* Work items (tile, slice) per split-K wave. The workspace holds the partials of one wave, as a
   GPU holds those of its resident CTAs, so its size is bounded whatever the problem size. */
#define SPLIT_K_WAVE_ITEMS 1024
#define WAVE_TILES_MAX (SPLIT_K_WAVE_ITEMS / 2)

_Static_assert(TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0, "micro-tiles must cover a tile");

#define TILE_ELEMS ((int64_t)TILE_M * TILE_N)
/* Floats of one thread's packing buffers and tile accumulator. */
#define SCRATCH_FLOATS ((size_t)(TILE_M * TILE_K + TILE_K * TILE_N + TILE_ELEMS))

/* Packing buffers and the tile accumulator of one thread. */
struct scratch {
    float *ap;  /* TILE_M x TILE_K, in MICRO_M-row panels */
    float *bp;  /* TILE_K x TILE_N, in MICRO_N-column panels */
    float *acc; /* TILE_M x TILE_N, row stride TILE_N */
};

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static int64_t ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

static int is_grouped_op(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* ---- addressing ------------------------------------------------------------------------- */

void cpu_grouped_map_init(const struct gg_problem *p, const int64_t *offs,
                          struct cpu_grouped_map *m)
{
    int64_t row_a = p->op == GG_OP_GROUPED_FWD ? p->k : p->n;
    int64_t row_c = p->op == GG_OP_GROUPED_FWD ? p->n : p->k;
    memset(m, 0, sizeof *m);
    m->op = p->op;
    m->groups = p->groups;
    m->m = p->m;
    m->n = p->n;
    m->k = p->k;
    m->lda = p->lda != 0 ? p->lda : row_a;
    m->ldb = p->ldb != 0 ? p->ldb : p->k;
    m->ldc = p->ldc != 0 ? p->ldc : row_c;
    m->stride_b = p->stride_b != 0 ? p->stride_b : p->n * m->ldb; /* W_g is N rows of ldb */
    m->stride_c = p->stride_c != 0 ? p->stride_c : p->n * m->ldc; /* dW_g is N rows of ldc */
    m->offs = offs;
    int transposed_a = p->op == GG_OP_GROUPED_WGRAD;
    m->a_si = transposed_a ? 1 : m->lda;
    m->a_sr = transposed_a ? m->lda : 1;
    m->b_sr = p->op == GG_OP_GROUPED_FWD ? 1 : m->ldb;
    m->b_sj = p->op == GG_OP_GROUPED_FWD ? m->ldb : 1;
    m->split = gg_kopt_get(p, "split_k", 1);
    m->i32_offsets = gg_mutant_is(p, "i32_cumulative_offset");
    m->skip_empty_wgrad = gg_mutant_is(p, "wgrad_zero_uninit");
    m->tail_rows = gg_mutant_is(p, "tail_rows_unwritten");
    m->missing_fence = gg_mutant_is(p, "missing_fence");
    m->underreport = gg_mutant_is(p, "workspace_underreport");
}

/* m_start·ld, the element offset of a group's first row. Under i32_cumulative_offset it is
   computed as the product of two int32 values and wraps modulo 2^32 into [-2^31, 2^31), as the
   int arithmetic of the real kernels does (done in uint32 here, where wrapping is defined). */
static int64_t row_offset(const struct cpu_grouped_map *m, int64_t row0, int64_t ld)
{
    if (!m->i32_offsets)
        return row0 * ld;
    uint32_t w = (uint32_t)row0 * (uint32_t)ld;
    return w <= (uint32_t)INT32_MAX ? (int64_t)w : (int64_t)w - ((int64_t)1 << 32);
}

struct cpu_grouped_block cpu_grouped_block_of(const struct cpu_grouped_map *m, int64_t g)
{
    int64_t row0 = m->offs[g], len = m->offs[g + 1] - m->offs[g];
    switch (m->op) {
    case GG_OP_GROUPED_FWD:
        return (struct cpu_grouped_block){row0 * m->lda, g * m->stride_b,
                                          row_offset(m, row0, m->ldc), row0, len, m->n, m->k};
    case GG_OP_GROUPED_DGRAD:
        return (struct cpu_grouped_block){row0 * m->lda, g * m->stride_b,
                                          row_offset(m, row0, m->ldc), row0, len, m->k, m->n};
    default:
        return (struct cpu_grouped_block){row_offset(m, row0, m->lda), row0 * m->ldb,
                                          g * m->stride_c, 0, m->n, m->k, len};
    }
}

/* Tiles per block row; a block with no rows or no columns has no tiles (a wgrad group with
   M_g = 0 has N x K tiles and a reduction of length 0). */
static int64_t tiles_per_row(const struct cpu_grouped_block *b)
{
    return ceil_div(b->cols, TILE_N);
}

int64_t cpu_grouped_group_tiles(const struct cpu_grouped_map *m, int64_t g)
{
    /* wgrad_zero_uninit: the dispatcher skips every group that holds no tokens, which is right
       for fwd and dgrad but leaves a wgrad group's dW_g = 0 unwritten. */
    if (m->skip_empty_wgrad && m->offs[g + 1] == m->offs[g])
        return 0;
    struct cpu_grouped_block b = cpu_grouped_block_of(m, g);
    return b.rows > 0 && b.cols > 0 ? ceil_div(b.rows, TILE_M) * tiles_per_row(&b) : 0;
}

/* Total tile count of all groups; fills start[0..groups] with the prefix sum when not NULL. */
static int64_t count_tiles(const struct cpu_grouped_map *m, int64_t *start)
{
    int64_t total = 0;
    for (int64_t g = 0; g < m->groups; g++) {
        if (start)
            start[g] = total;
        total += cpu_grouped_group_tiles(m, g);
    }
    if (start)
        start[m->groups] = total;
    return total;
}

/* ---- workspace -------------------------------------------------------------------------- */

/* Tiles per wave: the whole list without split-K, else what fits SPLIT_K_WAVE_ITEMS items. */
static int64_t wave_tiles(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return tiles;
    int64_t w = SPLIT_K_WAVE_ITEMS / split;
    return min64(tiles, w > 0 ? w : 1);
}

size_t cpu_grouped_launch_ws(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return 0;
    return (size_t)(split * wave_tiles(tiles, split)) * CPU_GROUPED_SLOT_BYTES;
}

size_t cpu_grouped_reported_ws(const struct gg_problem *p, size_t used)
{
    /* workspace_underreport: the size formula counts one tile of partials fewer than the
       kernel lays out, so the last slot lies past the end of what the caller allocates. */
    if (gg_mutant_is(p, "workspace_underreport") && used >= CPU_GROUPED_SLOT_BYTES)
        return used - CPU_GROUPED_SLOT_BYTES;
    return used;
}

int cpu_grouped_ws_map(const struct gg_problem *p, struct cpu_grouped_map *m)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split <= 1 || split > SPLIT_K_MAX || !is_grouped_op(p->op) || p->groups < 0 ||
        p->group_offs == NULL)
        return 0;
    cpu_grouped_map_init(p, p->group_offs, m);
    return 1;
}

enum gg_status cpu_grouped_check_ws(const struct gg_problem *p, const struct gg_operands *o,
                                    size_t used, char *err, size_t err_len)
{
    size_t need = cpu_grouped_reported_ws(p, used);
    if (used > 0 && (o->workspace == NULL || o->workspace_bytes < need ||
                     (uintptr_t)o->workspace % sizeof(float) != 0))
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "split_k %lld needs an aligned workspace of %zu bytes (got %zu at %p)",
                        (long long)gg_kopt_get(p, "split_k", 1), need, o->workspace_bytes,
                        o->workspace);
    return GG_OK;
}

/* ---- tile computation ------------------------------------------------------------------- */

/*
 * Copies count x kc elements of a bf16 matrix, element (q, r) at src[q·s_q + r·s_r], into
 * fp32 panels of `width` rows q: panel p holds q = p·width .. p·width + width - 1 at
 * dst[p·width·kc + r·width + q mod width]. Rows past count in the last panel are zero, so the
 * micro-kernel can always run on whole panels.
 */
static void pack_panels(float *restrict dst, const uint16_t *src, int64_t s_q, int64_t s_r,
                        int64_t count, int64_t kc, int64_t width)
{
    for (int64_t q0 = 0; q0 < count; q0 += width) {
        int64_t w = min64(width, count - q0);
        float *restrict d = dst + q0 * kc;
        const uint16_t *sp = src + q0 * s_q;
        if (w < width)
            memset(d, 0, (size_t)(kc * width) * sizeof(float));
        if (s_r == 1) {
            for (int64_t q = 0; q < w; q++)
                for (int64_t r = 0; r < kc; r++)
                    d[r * width + q] = cpu_bf16_to_f32(sp[q * s_q + r]);
        } else {
            for (int64_t r = 0; r < kc; r++)
                for (int64_t q = 0; q < w; q++)
                    d[r * width + q] = cpu_bf16_to_f32(sp[r * s_r + q * s_q]);
        }
    }
}

/*
 * acc[i][j] += Σ_{r < kc} ap[r][i] · bp[r][j] for one MICRO_M x MICRO_N block (acc row stride
 * TILE_N), each term added in order of r with one fp32 multiply and one fp32 add. The products
 * of bf16 values are exact in fp32, so fused or unfused evaluation gives the same sums.
 * Not inlined, so its register allocation does not depend on the caller.
 */
__attribute__((noinline)) static void micro_kernel(int64_t kc, const float *restrict ap,
                                                   const float *restrict bp, float *restrict acc)
{
    float c[MICRO_M][MICRO_N];
    for (int64_t i = 0; i < MICRO_M; i++)
        for (int64_t j = 0; j < MICRO_N; j++)
            c[i][j] = acc[i * TILE_N + j];
    for (int64_t r = 0; r < kc; r++) {
        const float *a = ap + r * MICRO_M;
        const float *b = bp + r * MICRO_N;
        for (int64_t i = 0; i < MICRO_M; i++)
            for (int64_t j = 0; j < MICRO_N; j++)
                c[i][j] += a[i] * b[j];
    }
    for (int64_t i = 0; i < MICRO_M; i++)
        for (int64_t j = 0; j < MICRO_N; j++)
            acc[i * TILE_N + j] = c[i][j];
}

/* Where tile t of a launch lies: its group's block, its origin (i0, j0) and its extent. */
struct tile_pos {
    struct cpu_grouped_block blk;
    int64_t i0, j0, rows, cols;
};

/* The launch-local group owning tile t: the last i with start[i] <= t (empty groups own no
   tiles, so they share their start with the next group). */
static int64_t tile_group(const int64_t *start, int64_t ng, int64_t t)
{
    int64_t lo = 0, hi = ng; /* start[lo] <= t < start[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static struct tile_pos locate_tile(const struct cpu_grouped_launch *l, int64_t t)
{
    struct tile_pos tp;
    int64_t local = t;
    if (l->tile_start == NULL) {
        tp.blk = l->blk;
    } else {
        int64_t i = tile_group(l->tile_start, l->ng, t);
        tp.blk = cpu_grouped_block_of(l->m, l->g0 + i);
        local = t - l->tile_start[i];
    }
    int64_t per_row = tiles_per_row(&tp.blk);
    tp.i0 = (local / per_row) * TILE_M;
    tp.j0 = (local % per_row) * TILE_N;
    tp.rows = min64(TILE_M, tp.blk.rows - tp.i0);
    tp.cols = min64(TILE_N, tp.blk.cols - tp.j0);
    return tp;
}

/* Zeroes the rows of acc (row stride TILE_N) that the micro-kernels of a tile of `rows` rows
   touch: the rows rounded up to whole MICRO_M panels, each a full TILE_N. */
static void clear_acc(float *acc, int64_t rows)
{
    int64_t panel_rows = ceil_div(rows, MICRO_M) * MICRO_M;
    memset(acc, 0, (size_t)(panel_rows * TILE_N) * sizeof(float));
}

/* acc += the tile at tp reduced over r0 .. r1-1 (acc row stride TILE_N, already cleared). */
static void accumulate_tile(const struct cpu_grouped_launch *l, const struct tile_pos *tp,
                            int64_t r0, int64_t r1, struct scratch *s, float *acc)
{
    const struct cpu_grouped_map *m = l->m;
    for (int64_t rk = r0; rk < r1; rk += TILE_K) {
        int64_t kc = min64(TILE_K, r1 - rk);
        pack_panels(s->ap, l->a + tp->blk.a_off + tp->i0 * m->a_si + rk * m->a_sr, m->a_si,
                    m->a_sr, tp->rows, kc, MICRO_M);
        pack_panels(s->bp, l->b + tp->blk.b_off + rk * m->b_sr + tp->j0 * m->b_sj, m->b_sj,
                    m->b_sr, tp->cols, kc, MICRO_N);
        for (int64_t i = 0; i < tp->rows; i += MICRO_M)
            for (int64_t j = 0; j < tp->cols; j += MICRO_N)
                micro_kernel(kc, s->ap + i * kc, s->bp + j * kc, acc + i * TILE_N + j);
    }
}

/* Writes the rows x cols logical elements of acc to C at element offset c_off, with one RNE
   rounding for bf16; the padding between rows (ldc > cols) is never touched. */
static void store_tile(const float *acc, int64_t rows, int64_t cols, enum gg_dtype c_dtype,
                       void *c, int64_t c_off, int64_t ldc)
{
    if (c_dtype == GG_DTYPE_BF16) {
        uint16_t *cp = (uint16_t *)c + c_off;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                cp[i * ldc + j] = cpu_f32_to_bf16(acc[i * TILE_N + j]);
    } else {
        float *cp = (float *)c + c_off;
        for (int64_t i = 0; i < rows; i++)
            memcpy(cp + i * ldc, acc + i * TILE_N, (size_t)cols * sizeof(float));
    }
}

/* Epilogue of one tile. */
static void epilogue(const struct cpu_grouped_launch *l, const struct tile_pos *tp,
                     const float *acc)
{
    const struct cpu_grouped_map *m = l->m;
    /* tail_rows_unwritten: the store loop stops at the last whole row tile of the output, so
       the rows of the final partial row tile (the last group's rows past a multiple of TILE_M)
       keep whatever C held. (The real bug leaves the padded rows past the last group's end
       unwritten; here C has exactly M rows, so the tail of the last group stands for them.) */
    if (m->tail_rows && m->op != GG_OP_GROUPED_WGRAD && tp->rows < TILE_M &&
        tp->blk.row0 + tp->i0 + tp->rows == m->m)
        return;
    store_tile(acc, tp->rows, tp->cols, l->c_dtype, l->c, tp->blk.c_off + tp->i0 * m->ldc + tp->j0,
               m->ldc);
}

/* acc = ((p_0 + p_1) + p_2) + ... over the split partials of one tile, which lie one slot apart
   from part; only the rows x cols elements of the tile are read. */
static void reduce_partials(const float *part, int64_t split, int64_t rows, int64_t cols,
                            float *acc)
{
    for (int64_t i = 0; i < rows; i++)
        memcpy(acc + i * TILE_N, part + i * TILE_N, (size_t)cols * sizeof(float));
    for (int64_t sl = 1; sl < split; sl++) {
        const float *ps = part + sl * TILE_ELEMS;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                acc[i * TILE_N + j] += ps[i * TILE_N + j];
    }
}

/* ---- launches --------------------------------------------------------------------------- */

static struct scratch scratch_of(const struct cpu_grouped_worker *w, int thread)
{
    float *base = w->buf + (size_t)thread * SCRATCH_FLOATS;
    return (struct scratch){base, base + TILE_M * TILE_K, base + TILE_M * TILE_K + TILE_K * TILE_N};
}

enum gg_status cpu_grouped_worker_init(struct cpu_grouped_worker *w, char *err, size_t err_len)
{
    w->buf = malloc(2 * SCRATCH_FLOATS * sizeof(float));
    if (w->buf == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    return GG_OK;
}

void cpu_grouped_worker_free(struct cpu_grouped_worker *w)
{
    free(w->buf);
    w->buf = NULL;
}

/* Without split-K every tile is computed and stored in turn. */
static void run_direct(const struct cpu_grouped_launch *l, struct scratch *s)
{
    for (int64_t t = 0; t < l->tiles; t++) {
        struct tile_pos tp = locate_tile(l, t);
        clear_acc(s->acc, tp.rows);
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
    const struct cpu_grouped_launch *l;
    const struct cpu_grouped_worker *w;
    int64_t wave;
    pthread_barrier_t barrier;
    atomic_int begun[SPLIT_K_WAVE_ITEMS];
    atomic_int started[WAVE_TILES_MAX], done[WAVE_TILES_MAX], claimed[WAVE_TILES_MAX];
};

struct splitk_thread {
    struct splitk *s;
    int id;
};

static void splitk_reset(struct splitk *s, int64_t tiles)
{
    for (int64_t i = 0; i < tiles * s->l->m->split; i++)
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
    int split = (int)s->l->m->split;
    /* missing_fence: the reducer waits only until every slice has begun (its slot zeroed and
       the flag raised before the accumulation, a semaphore released too early) and then reads
       the slots, so it may sum a partial another thread is still accumulating. */
    if (s->l->m->missing_fence)
        return atomic_load_explicit(&s->started[tl], memory_order_acquire) == split &&
               atomic_exchange_explicit(&s->claimed[tl], 1, memory_order_acq_rel) == 0;
    return atomic_fetch_add_explicit(&s->done[tl], 1, memory_order_acq_rel) + 1 == split;
}

/* Item i of the wave starting at tile t0, out of `items`. */
static void splitk_item(struct splitk *s, struct scratch *sc, int64_t t0, int64_t i,
                        int64_t items)
{
    const struct cpu_grouped_launch *l = s->l;
    int64_t split = l->m->split, tl = i / split, sl = i % split;
    struct tile_pos tp = locate_tile(l, t0 + tl);
    float *part = l->ws + tl * split * TILE_ELEMS, *slot = part + sl * TILE_ELEMS;
    int64_t chunk = ceil_div(tp.blk.red, split);
    int64_t r0 = min64(sl * chunk, tp.blk.red), r1 = min64(r0 + chunk, tp.blk.red);
    clear_acc(slot, tp.rows);
    atomic_fetch_add_explicit(&s->started[tl], 1, memory_order_release);
    atomic_store_explicit(&s->begun[i], 1, memory_order_release);
    if ((i ^ 1) < items)
        while (!atomic_load_explicit(&s->begun[i ^ 1], memory_order_acquire))
            sched_yield();
    accumulate_tile(l, &tp, r0, r1, sc, slot);
    if (reducer_of(s, tl)) {
        reduce_partials(part, split, tp.rows, tp.cols, sc->acc);
        epilogue(l, &tp, sc->acc);
    }
}

static void *splitk_main(void *arg)
{
    struct splitk_thread *th = arg;
    struct splitk *s = th->s;
    struct scratch sc = scratch_of(s->w, th->id);
    const struct cpu_grouped_launch *l = s->l;
    for (int64_t t0 = 0; t0 < l->tiles; t0 += s->wave) {
        int64_t nt = min64(s->wave, l->tiles - t0), items = nt * l->m->split;
        for (int64_t i = th->id; i < items; i += 2)
            splitk_item(s, &sc, t0, i, items);
        pthread_barrier_wait(&s->barrier);
        if (th->id == 0)
            splitk_reset(s, nt);
        pthread_barrier_wait(&s->barrier);
    }
    return NULL;
}

static enum gg_status run_split(const struct cpu_grouped_launch *l,
                                const struct cpu_grouped_worker *w, char *err, size_t err_len)
{
    struct splitk *s = malloc(sizeof *s);
    if (s == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for the split-K state");
    s->l = l;
    s->w = w;
    s->wave = wave_tiles(l->tiles, l->m->split);
    splitk_reset(s, s->wave);
    if (pthread_barrier_init(&s->barrier, NULL, 2) != 0) {
        free(s);
        return cpu_fail(err, err_len, GG_E_NOMEM, "cannot create the split-K barrier");
    }
    pthread_t helper;
    struct splitk_thread th[2] = {{s, 0}, {s, 1}};
    enum gg_status st = GG_OK;
    if (pthread_create(&helper, NULL, splitk_main, &th[1]) != 0) {
        st = cpu_fail(err, err_len, GG_E_NOMEM, "cannot start the split-K helper thread");
    } else {
        splitk_main(&th[0]);
        pthread_join(helper, NULL);
    }
    pthread_barrier_destroy(&s->barrier);
    free(s);
    return st;
}

enum gg_status cpu_grouped_run_launch(const struct cpu_grouped_launch *l,
                                      struct cpu_grouped_worker *w, char *err, size_t err_len)
{
    if (l->tiles == 0)
        return GG_OK;
    if (l->m->split > 1)
        return run_split(l, w, err, err_len);
    struct scratch s = scratch_of(w, 0);
    run_direct(l, &s);
    return GG_OK;
}

/* ---- checks ----------------------------------------------------------------------------- */

int cpu_grouped_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                         size_t why_len)
{
    if (!is_grouped_op(p->op))
        return cpu_refuse(why, why_len, "op %d not supported: grouped fwd, dgrad and wgrad only",
                          (int)p->op);
    if (p->scaling == GG_SCALING_MX)
        return cpu_refuse(why, why_len, "scaling mx not supported: bf16 kernel");
    if (p->scaling != GG_SCALING_NONE)
        return cpu_refuse(why, why_len, "scaling %d not supported: bf16 kernel", (int)p->scaling);
    if (p->a_dtype != GG_DTYPE_BF16 || p->b_dtype != GG_DTYPE_BF16)
        return cpu_refuse(why, why_len, "input dtypes %d/%d not supported: bf16 inputs only",
                          (int)p->a_dtype, (int)p->b_dtype);
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "output dtype %d not supported: bf16 or f32 only",
                          (int)p->c_dtype);
    if (p->acc_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "accumulator dtype %d not supported: f32 only",
                          (int)p->acc_dtype);
    if (p->bias_dtype != GG_DTYPE_NONE)
        return cpu_refuse(why, why_len, "bias not supported: grouped bf16 kernel without bias");
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split < 1 || split > SPLIT_K_MAX)
        return cpu_refuse(why, why_len, "split_k %lld out of range 1..%d", (long long)split,
                          SPLIT_K_MAX);
    int64_t lens_from = gg_kopt_get(p, "lens_from", 0);
    if (lens_from != 0 && lens_from != 1)
        return cpu_refuse(why, why_len, "lens_from %lld invalid: 0 (device array) or 1 (host)",
                          (long long)lens_from);
    if (p->mutant != NULL) {
        for (const char *const *mu = mutants; mu != NULL && *mu != NULL; mu++)
            if (strcmp(*mu, p->mutant) == 0)
                return 1;
        return cpu_refuse(why, why_len, "mutant %s not provided by this kernel", p->mutant);
    }
    return 1;
}

/* Pointer p must be non-NULL when the operand has elements, and aligned to its element size. */
static enum gg_status check_ptr(const void *ptr, int needed, size_t align, const char *name,
                                char *err, size_t err_len)
{
    if (needed && ptr == NULL)
        return cpu_fail(err, err_len, GG_E_INVAL, "operand %s is NULL", name);
    if ((uintptr_t)ptr % align != 0)
        return cpu_fail(err, err_len, GG_E_INVAL, "operand %s is not aligned to %zu bytes", name,
                        align);
    return GG_OK;
}

/* The group arrays of `side`: offs[0] = 0, lens[g] = offs[g+1] - offs[g] >= 0, offs[G] = m. */
static enum gg_status check_groups(const struct cpu_grouped_map *m, const int64_t *lens,
                                   const char *side, char *err, size_t err_len)
{
    const int64_t *offs = m->offs;
    if (offs == NULL || (m->groups > 0 && lens == NULL))
        return cpu_fail(err, err_len, GG_E_INVAL, "%s group arrays are NULL", side);
    if (offs[0] != 0)
        return cpu_fail(err, err_len, GG_E_INVAL, "%s group_offs[0] = %lld, expected 0", side,
                        (long long)offs[0]);
    for (int64_t g = 0; g < m->groups; g++)
        if (lens[g] < 0 || offs[g + 1] - offs[g] != lens[g])
            return cpu_fail(err, err_len, GG_E_INVAL,
                            "%s group %lld: length %lld, offsets %lld..%lld", side, (long long)g,
                            (long long)lens[g], (long long)offs[g], (long long)offs[g + 1]);
    if (offs[m->groups] != m->m)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "%s group_offs[%lld] = %lld differs from m = %lld", side,
                        (long long)m->groups, (long long)offs[m->groups], (long long)m->m);
    return GG_OK;
}

/* Checks sizes, the group arrays, leading dimensions and the operand pointers. */
static enum gg_status check_problem(const struct gg_problem *p, const struct cpu_grouped_map *m,
                                    const int64_t *lens, const char *side,
                                    const struct gg_operands *o, char *err, size_t err_len)
{
    if (m->groups < 0 || m->m < 0 || m->n < 0 || m->k < 0)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "negative size (groups %lld, m %lld, n %lld, k %lld)", (long long)m->groups,
                        (long long)m->m, (long long)m->n, (long long)m->k);
    enum gg_status st = check_groups(m, lens, side, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t row_a = m->op == GG_OP_GROUPED_FWD ? m->k : m->n;
    int64_t row_c = m->op == GG_OP_GROUPED_FWD ? m->n : m->k;
    if (m->lda < row_a || m->ldb < m->k || m->ldc < row_c || m->stride_b < 0 || m->stride_c < 0)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                        "stride_b %lld, stride_c %lld)",
                        (long long)m->lda, (long long)m->ldb, (long long)m->ldc,
                        (long long)m->stride_b, (long long)m->stride_c);
    int any_rows = m->m > 0, any_groups = m->groups > 0;
    int a_used = any_rows && row_a > 0;
    int b_used = m->op == GG_OP_GROUPED_WGRAD ? any_rows && m->k > 0
                                              : any_rows && m->n > 0 && m->k > 0;
    int c_used = m->op == GG_OP_GROUPED_WGRAD ? any_groups && m->n > 0 && m->k > 0
                                              : any_rows && row_c > 0;
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    if ((st = check_ptr(o->a, a_used, sizeof(uint16_t), "a", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b, b_used, sizeof(uint16_t), "b", err, err_len)) != GG_OK ||
        (st = check_ptr(o->c, c_used, c_size, "c", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

enum gg_status cpu_grouped_prepare(const struct gg_problem *p, const char *const *mutants,
                                   const struct gg_operands *o, struct cpu_grouped_map *m,
                                   char *err, size_t err_len)
{
    if (!cpu_grouped_supports(p, mutants, err, err_len))
        return GG_E_UNSUPPORTED;
    int host = gg_kopt_get(p, "lens_from", 0) == 1;
    cpu_grouped_map_init(p, host ? p->group_offs : o->group_offs_dev, m);
    return check_problem(p, m, host ? p->group_lens : o->group_lens_dev,
                         host ? "host" : "device", o, err, err_len);
}

/* ---- grouped_bf16_cpu_tiled ------------------------------------------------------------- */

static const char *const tiled_mutants[] = {CPU_GROUPED_MUTANTS_SHARED, NULL};

static int tiled_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return cpu_grouped_supports(p, tiled_mutants, why, why_len);
}

/* One launch over every group: its split-K wave holds partials of tiles of any group. */
static size_t tiled_workspace_bytes(const struct gg_problem *p)
{
    struct cpu_grouped_map m;
    if (!cpu_grouped_ws_map(p, &m))
        return 0;
    return cpu_grouped_reported_ws(p, cpu_grouped_launch_ws(count_tiles(&m, NULL), m.split));
}

static enum gg_status tiled_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    struct cpu_grouped_map m;
    enum gg_status st = cpu_grouped_prepare(p, tiled_mutants, o, &m, err, err_len);
    if (st != GG_OK)
        return st;
    int64_t *start = malloc((size_t)(m.groups + 1) * sizeof(int64_t));
    if (start == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                        (long long)m.groups + 1);
    struct cpu_grouped_launch l = {.m = &m, .a = o->a, .b = o->b, .c = o->c,
                                   .c_dtype = p->c_dtype, .g0 = 0, .ng = m.groups,
                                   .tile_start = start};
    l.tiles = count_tiles(&m, start);
    size_t used = cpu_grouped_launch_ws(l.tiles, m.split);
    l.ws = used > 0 ? o->workspace : NULL;
    struct cpu_grouped_worker w = {NULL};
    if ((st = cpu_grouped_check_ws(p, o, used, err, err_len)) == GG_OK &&
        (st = cpu_grouped_worker_init(&w, err, err_len)) == GG_OK)
        st = cpu_grouped_run_launch(&l, &w, err, err_len);
    cpu_grouped_worker_free(&w);
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

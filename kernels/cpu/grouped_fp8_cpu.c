/*
 * grouped_fp8_cpu.c — grouped_fp8_cpu_persistent and grouped_fp8_cpu_tiled: grouped GEMM fwd (NT),
 * dgrad (NN) and variable-K wgrad (TN) on FP8 codes (OCP e4m3/e5m2, or AMD e4m3fnuz/e5m2fnuz)
 * with tensor-wise fp32 scales, fp32 accumulation and bf16 or fp32 output. Codes are decoded
 * through 256-entry tables into fp32 panels, each output tile is accumulated unscaled, and the
 * epilogue multiplies it by a_scale·b_scale[g] in fp32 (as cuBLASLt applies scale_a·scale_b)
 * before one rounding to the output type. Both kernels execute the same list of work items over
 * all groups: a fixed pool of threads taking items from an atomic counter, or a plain loop.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_int.h"

/* Output tile of one work item and the K step of one packing round (an FP8 MMA K-step). */
#define TILE_M 64
#define TILE_N 64
#define TILE_K 128
/* Register block of the micro-kernel: MICRO_M x MICRO_N fp32 accumulators (eight 4-lane
   vectors plus four for a row of B fit the 16 SSE registers of baseline x86-64). */
#define MICRO_M 2
#define MICRO_N 16
/* Accepted values of the options "split_k" and "workers"; the default pool size. */
#define SPLIT_K_MAX 64
#define WORKERS_MAX 64
#define WORKERS_DEFAULT 2
/* (tile, slice) items per split-K wave: the workspace holds the fp32 partials of one wave, as a
   GPU holds those of its resident CTAs, so its size is bounded whatever the problem size. */
#define SPLIT_K_WAVE_ITEMS 1024

_Static_assert(TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0, "micro-tiles must cover a tile");

#define TILE_ELEMS ((int64_t)TILE_M * TILE_N)

static const char *const fp8_mutants[] = {"fnuz_as_ocp", "i32_group_base", "i32_byte_limit",
                                          NULL};

/*
 * Every grouped op is C_g[i][j] = s_g · Σ_r A_g(i, r) · B_g(r, j) over one block of C, with
 *   A_g(i, r) = a[a_off + i·a_si + r·a_sr],  B_g(r, j) = b[b_off + r·b_sr + j·b_sj],
 *   C_g[i][j] = c[c_off + i·ldc + j],  s_g = a_scale · b_scale[g or 0]:
 *   fwd    rows M_g, cols N, reduction K     a_si = lda, a_sr = 1     b_sr = 1,   b_sj = ldb
 *   dgrad  rows M_g, cols K, reduction N     a_si = lda, a_sr = 1     b_sr = ldb, b_sj = 1
 *   wgrad  rows N,   cols K, reduction M_g   a_si = 1,   a_sr = lda   b_sr = ldb, b_sj = 1
 * Offsets are element offsets, which for one-byte codes are also byte offsets.
 */
struct gemm_map {
    enum gg_op op;
    int64_t groups, m, n, k;
    int64_t lda, ldb, ldc, stride_b, stride_c; /* defaults resolved */
    int64_t a_si, a_sr, b_sr, b_sj;
    const int64_t *offs; /* groups + 1 row offsets */
    int i32_group_base;  /* mutant: g·stride_b computed in 32-bit */
};

/* The block of C that group g owns, where its operands start, and its reduction length. */
struct block {
    int64_t g;
    int64_t a_off, b_off, c_off;
    int64_t rows, cols, red;
};

/* Everything a work item reads: the map, the operands, decode tables, scales, the schedule. */
struct plan {
    struct gemm_map m;
    const uint8_t *a, *b;
    void *c;
    float *ws;
    enum gg_dtype c_dtype;
    float table_a[256], table_b[256];
    float a_scale;
    const float *b_scale;
    int per_group_scale; /* b_scale[g] (fwd, dgrad) or b_scale[0] (wgrad) */
    int wrap_bytes;      /* mutant i32_byte_limit: load byte offsets taken modulo 2^32 */
    int64_t tiles, split, wave, phases;
    int64_t *tile_start; /* groups + 1 entries: first tile of each group (prefix sum) */
};

/* Packing buffers and the tile accumulator of one worker. */
struct scratch {
    float *ap;  /* TILE_M x TILE_K, in MICRO_M-row panels */
    float *bp;  /* TILE_K x TILE_N, in MICRO_N-column panels */
    float *acc; /* TILE_M x TILE_N, row stride TILE_N */
};

#define SCRATCH_FLOATS ((size_t)(TILE_M * TILE_K + TILE_K * TILE_N + TILE_ELEMS))

/* Scratch area i of an allocation of SCRATCH_FLOATS floats per worker. */
static struct scratch scratch_at(float *buf, int64_t i)
{
    float *sb = buf + (size_t)i * SCRATCH_FLOATS;
    return (struct scratch){sb, sb + TILE_M * TILE_K, sb + TILE_M * TILE_K + TILE_K * TILE_N};
}

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static int64_t ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

/* ---- problem geometry -------------------------------------------------------------------- */

static int is_grouped_op(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* Builds the map of p with packed defaults in every zero leading dimension and stride. */
static void resolve_map(const struct gg_problem *p, const int64_t *offs, struct gemm_map *m)
{
    int64_t row_a = p->op == GG_OP_GROUPED_FWD ? p->k : p->n;
    int64_t row_c = p->op == GG_OP_GROUPED_FWD ? p->n : p->k;
    int transposed_a = p->op == GG_OP_GROUPED_WGRAD;
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
    m->a_si = transposed_a ? 1 : m->lda;
    m->a_sr = transposed_a ? m->lda : 1;
    m->b_sr = p->op == GG_OP_GROUPED_FWD ? 1 : m->ldb;
    m->b_sj = p->op == GG_OP_GROUPED_FWD ? m->ldb : 1;
    m->i32_group_base = gg_mutant_is(p, "i32_group_base");
}

/*
 * Offset of expert g's weights, g·stride_b. The mutant i32_group_base re-creates the product
 * computed in a 32-bit int: the low 32 bits of the product, read as a signed value (done in
 * unsigned arithmetic so the wrap is defined), so past 2^31 elements it points at the wrong
 * expert or before the buffer.
 */
static int64_t weight_base(const struct gemm_map *m, int64_t g)
{
    if (!m->i32_group_base)
        return g * m->stride_b;
    uint32_t low = (uint32_t)g * (uint32_t)m->stride_b;
    return low >= UINT32_C(0x80000000) ? (int64_t)low - (INT64_C(1) << 32) : (int64_t)low;
}

static struct block group_block(const struct gemm_map *m, int64_t g)
{
    int64_t row0 = m->offs[g], len = m->offs[g + 1] - m->offs[g];
    switch (m->op) {
    case GG_OP_GROUPED_FWD:
        return (struct block){g, row0 * m->lda, weight_base(m, g), row0 * m->ldc, len, m->n, m->k};
    case GG_OP_GROUPED_DGRAD:
        return (struct block){g, row0 * m->lda, weight_base(m, g), row0 * m->ldc, len, m->k, m->n};
    default:
        return (struct block){g, row0 * m->lda, row0 * m->ldb, g * m->stride_c, m->n, m->k, len};
    }
}

/* Tiles per block row and in the whole block; a block with no rows or no columns has none
   (a wgrad group with M_g = 0 has N x K tiles and a reduction of length 0: exact zeros). */
static int64_t tiles_per_row(const struct block *b)
{
    return ceil_div(b->cols, TILE_N);
}

static int64_t block_tiles(const struct block *b)
{
    return b->rows > 0 && b->cols > 0 ? ceil_div(b->rows, TILE_M) * tiles_per_row(b) : 0;
}

/* Total tile count; fills start[0..groups] with the prefix sum when start is not NULL. */
static int64_t count_tiles(const struct gemm_map *m, int64_t *start)
{
    int64_t total = 0;
    for (int64_t g = 0; g < m->groups; g++) {
        if (start)
            start[g] = total;
        struct block b = group_block(m, g);
        total += block_tiles(&b);
    }
    if (start)
        start[m->groups] = total;
    return total;
}

/* Tiles per wave: the whole list without split-K, else as many as fit SPLIT_K_WAVE_ITEMS items. */
static int64_t wave_tiles(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return tiles;
    int64_t w = SPLIT_K_WAVE_ITEMS / split;
    return min64(tiles, w > 0 ? w : 1);
}

static size_t workspace_for(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return 0;
    return (size_t)(split * wave_tiles(tiles, split) * TILE_ELEMS) * sizeof(float);
}

/* Where tile t lies: its group's block, its origin (i0, j0) and its extent. Empty groups own no
   tiles, so the owner is the last g with tile_start[g] <= t. */
struct tile_pos {
    struct block blk;
    int64_t i0, j0, rows, cols;
};

static struct tile_pos locate_tile(const struct plan *pl, int64_t t)
{
    int64_t lo = 0, hi = pl->m.groups; /* tile_start[lo] <= t < tile_start[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pl->tile_start[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    struct tile_pos tp;
    tp.blk = group_block(&pl->m, lo);
    int64_t local = t - pl->tile_start[lo], per_row = tiles_per_row(&tp.blk);
    tp.i0 = (local / per_row) * TILE_M;
    tp.j0 = (local % per_row) * TILE_N;
    tp.rows = min64(TILE_M, tp.blk.rows - tp.i0);
    tp.cols = min64(TILE_N, tp.blk.cols - tp.j0);
    return tp;
}

/* ---- one work item ------------------------------------------------------------------------ */

/*
 * Decodes count x kc codes, element (q, r) at byte off + q·s_q + r·s_r of base, into fp32 panels
 * of `width` rows q: panel p holds q = p·width .. p·width + width - 1 at
 * dst[p·width·kc + r·width + q mod width]; rows past count in the last panel are zero. With wrap
 * (mutant i32_byte_limit) each byte offset is reduced modulo 2^32, as a load through a buffer
 * descriptor with a 32-bit range does: reads past 4 GiB land at the start of the buffer.
 */
static void pack_panels(float *restrict dst, const uint8_t *base, int64_t off, int64_t s_q,
                        int64_t s_r, int64_t count, int64_t kc, int64_t width,
                        const float *restrict table, int wrap)
{
    for (int64_t q0 = 0; q0 < count; q0 += width) {
        int64_t w = min64(width, count - q0);
        float *restrict d = dst + q0 * kc;
        int64_t at0 = off + q0 * s_q;
        if (w < width)
            memset(d, 0, (size_t)(kc * width) * sizeof(float));
        if (wrap) {
            for (int64_t r = 0; r < kc; r++)
                for (int64_t q = 0; q < w; q++)
                    d[r * width + q] = table[base[(uint32_t)(at0 + q * s_q + r * s_r)]];
        } else if (s_r == 1) {
            const uint8_t *sp = base + at0;
            for (int64_t q = 0; q < w; q++)
                for (int64_t r = 0; r < kc; r++)
                    d[r * width + q] = table[sp[q * s_q + r]];
        } else {
            const uint8_t *sp = base + at0;
            for (int64_t r = 0; r < kc; r++)
                for (int64_t q = 0; q < w; q++)
                    d[r * width + q] = table[sp[r * s_r + q * s_q]];
        }
    }
}

/*
 * acc[i][j] += Σ_{r < kc} ap[r][i] · bp[r][j] for one MICRO_M x MICRO_N block (acc row stride
 * TILE_N), each term added in order of r. A product of two FP8 values (at most 4 x 4 significand
 * bits, exponents within ±70) is exact in fp32, so fused and unfused evaluation agree.
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

/* Unscaled fp32 sums of tile tp over the reduction range r0 .. r1-1 into s->acc (an empty range
   leaves exact zeros). */
static void compute_tile(const struct plan *pl, const struct tile_pos *tp, int64_t r0, int64_t r1,
                         struct scratch *s)
{
    const struct gemm_map *m = &pl->m;
    memset(s->acc, 0, (size_t)TILE_ELEMS * sizeof(float));
    for (int64_t rk = r0; rk < r1; rk += TILE_K) {
        int64_t kc = min64(TILE_K, r1 - rk);
        pack_panels(s->ap, pl->a, tp->blk.a_off + tp->i0 * m->a_si + rk * m->a_sr, m->a_si,
                    m->a_sr, tp->rows, kc, MICRO_M, pl->table_a, pl->wrap_bytes);
        pack_panels(s->bp, pl->b, tp->blk.b_off + rk * m->b_sr + tp->j0 * m->b_sj, m->b_sj,
                    m->b_sr, tp->cols, kc, MICRO_N, pl->table_b, pl->wrap_bytes);
        for (int64_t i = 0; i < tp->rows; i += MICRO_M)
            for (int64_t j = 0; j < tp->cols; j += MICRO_N)
                micro_kernel(kc, s->ap + i * kc, s->bp + j * kc, s->acc + i * TILE_N + j);
    }
}

/*
 * Epilogue: C = RN(acc · (a_scale · b_scale)) for the rows x cols logical elements of the tile,
 * the scale product and the scaling each one fp32 multiplication, then one RNE rounding to bf16
 * (none for f32). The padding between rows (ldc > cols) is never touched.
 */
static void store_tile(const struct plan *pl, const struct tile_pos *tp, const float *acc)
{
    float s = pl->a_scale * pl->b_scale[pl->per_group_scale ? tp->blk.g : 0];
    int64_t c_off = tp->blk.c_off + tp->i0 * pl->m.ldc + tp->j0, ldc = pl->m.ldc;
    if (pl->c_dtype == GG_DTYPE_BF16) {
        uint16_t *cp = (uint16_t *)pl->c + c_off;
        for (int64_t i = 0; i < tp->rows; i++)
            for (int64_t j = 0; j < tp->cols; j++)
                cp[i * ldc + j] = cpu_f32_to_bf16(acc[i * TILE_N + j] * s);
    } else {
        float *cp = (float *)pl->c + c_off;
        for (int64_t i = 0; i < tp->rows; i++)
            for (int64_t j = 0; j < tp->cols; j++)
                cp[i * ldc + j] = acc[i * TILE_N + j] * s;
    }
}

/*
 * The schedule is a sequence of phases, each a list of independent work items; a phase starts
 * only when the previous one is complete. Without split-K there is one phase, one item per tile,
 * which computes and stores its tile. With split-K S the tiles go in waves; wave w is phase 2w
 * (one item per (tile, slice): the unscaled partial of slice sl, covering reduction range
 * [sl·ceil(L/S), (sl+1)·ceil(L/S)) ∩ [0, L), into its workspace slot) and phase 2w+1 (one item per
 * tile: acc = ((p_0 + p_1) + p_2) + ..., then the epilogue). The fixed order of the sum makes
 * the output independent of which worker ran which item.
 */
static int64_t phase_items(const struct plan *pl, int64_t ph, int64_t *t0)
{
    int64_t reduce = pl->split > 1 ? ph % 2 : 0, wave = pl->split > 1 ? ph / 2 : ph;
    *t0 = wave * pl->wave;
    int64_t tiles = min64(pl->tiles - *t0, pl->wave);
    return reduce || pl->split == 1 ? tiles : tiles * pl->split;
}

static void run_item(const struct plan *pl, int64_t ph, int64_t t0, int64_t item,
                     struct scratch *s)
{
    if (pl->split == 1) {
        struct tile_pos tp = locate_tile(pl, t0 + item);
        compute_tile(pl, &tp, 0, tp.blk.red, s);
        store_tile(pl, &tp, s->acc);
        return;
    }
    if (ph % 2 == 0) { /* partial of slice sl of tile t into slot (t - t0)·S + sl */
        int64_t t = t0 + item / pl->split, sl = item % pl->split;
        struct tile_pos tp = locate_tile(pl, t);
        int64_t chunk = ceil_div(tp.blk.red, pl->split);
        int64_t r0 = min64(sl * chunk, tp.blk.red), r1 = min64(r0 + chunk, tp.blk.red);
        compute_tile(pl, &tp, r0, r1, s);
        float *slot = pl->ws + item * TILE_ELEMS;
        for (int64_t i = 0; i < tp.rows; i++)
            memcpy(slot + i * TILE_N, s->acc + i * TILE_N, (size_t)tp.cols * sizeof(float));
        return;
    }
    struct tile_pos tp = locate_tile(pl, t0 + item); /* reduction over the tile's slots */
    const float *part = pl->ws + item * pl->split * TILE_ELEMS;
    for (int64_t i = 0; i < tp.rows; i++)
        memcpy(s->acc + i * TILE_N, part + i * TILE_N, (size_t)tp.cols * sizeof(float));
    for (int64_t sl = 1; sl < pl->split; sl++) {
        const float *ps = part + sl * TILE_ELEMS;
        for (int64_t i = 0; i < tp.rows; i++)
            for (int64_t j = 0; j < tp.cols; j++)
                s->acc[i * TILE_N + j] += ps[i * TILE_N + j];
    }
    store_tile(pl, &tp, s->acc);
}

/* ---- the two execution models -------------------------------------------------------------- */

/* Non-persistent: one work item per tile (or per (tile, slice)), launched as a grid in list
   order on the calling thread, phase after phase. */
static void run_tiled(const struct plan *pl, struct scratch *s)
{
    for (int64_t ph = 0; ph < pl->phases; ph++) {
        int64_t t0, n = phase_items(pl, ph, &t0);
        for (int64_t item = 0; item < n; item++)
            run_item(pl, ph, t0, item, s);
    }
}

/*
 * Persistent: a fixed pool of workers that lives for the whole run. In each phase every worker
 * takes the next item from the phase's atomic counter until the list is exhausted, then waits
 * at a barrier for the others (the barrier also publishes the workspace partials to the
 * reduction phase). Workers wait at the start gate until the whole pool exists, so a pool that
 * cannot be created is abandoned before any barrier is entered.
 */
struct pool {
    const struct plan *pl;
    atomic_llong *next; /* one counter per phase */
    pthread_barrier_t barrier;
    pthread_mutex_t gate_lock;
    pthread_cond_t gate;
    int open, abandon;
};

struct worker {
    struct pool *pool;
    struct scratch s;
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
    const struct plan *pl = pool->pl;
    for (int64_t ph = 0; ph < pl->phases; ph++) {
        int64_t t0, n = phase_items(pl, ph, &t0);
        for (long long item; (item = atomic_fetch_add(&pool->next[ph], 1)) < n;)
            run_item(pl, ph, t0, (int64_t)item, &w->s);
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

/* Runs the plan on `workers` threads whose scratch areas start at buf. */
static enum gg_status run_persistent(const struct plan *pl, int64_t workers, float *buf,
                                     char *err, size_t err_len)
{
    struct pool pool = {.pl = pl};
    struct worker *w = calloc((size_t)workers, sizeof *w);
    pthread_t *th = calloc((size_t)workers, sizeof *th);
    pool.next = malloc((size_t)(pl->phases > 0 ? pl->phases : 1) * sizeof *pool.next);
    if (w == NULL || th == NULL || pool.next == NULL) {
        free(w), free(th), free(pool.next);
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for a pool of %lld workers",
                        (long long)workers);
    }
    for (int64_t ph = 0; ph < pl->phases; ph++)
        atomic_init(&pool.next[ph], 0);
    enum gg_status st = GG_OK;
    if (pthread_barrier_init(&pool.barrier, NULL, (unsigned)workers) != 0) {
        free(w), free(th), free(pool.next);
        return cpu_fail(err, err_len, GG_E_INTERNAL, "cannot create a barrier for %lld workers",
                        (long long)workers);
    }
    pthread_mutex_init(&pool.gate_lock, NULL);
    pthread_cond_init(&pool.gate, NULL);
    int64_t started = 0;
    for (; started < workers; started++) {
        w[started] = (struct worker){&pool, scratch_at(buf, started)};
        if (pthread_create(&th[started], NULL, worker_main, &w[started]) != 0) {
            st = cpu_fail(err, err_len, GG_E_NOMEM, "cannot start worker %lld of %lld",
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

static int is_ocp_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3 || t == GG_DTYPE_E5M2;
}

static int is_fnuz_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3FNUZ || t == GG_DTYPE_E5M2FNUZ;
}

/* The decode table of operand type t; the mutant fnuz_as_ocp reads fnuz codes with the OCP
   table of the same field layout (finite values twice too large, 0x80 -0 instead of NaN,
   e4m3 0x7F/0xFF NaN instead of ±240, e5m2 top codes Inf/NaN instead of finite). */
static void operand_table(const struct gg_problem *p, enum gg_dtype t, float table[256])
{
    if (gg_mutant_is(p, "fnuz_as_ocp") && is_fnuz_fp8(t))
        t = t == GG_DTYPE_E4M3FNUZ ? GG_DTYPE_E4M3 : GG_DTYPE_E5M2;
    cpu_decode_table(t, table);
}

static int known_mutant(const char *name)
{
    for (int i = 0; fp8_mutants[i] != NULL; i++)
        if (strcmp(fp8_mutants[i], name) == 0)
            return 1;
    return 0;
}

static int fp8_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    if (!is_grouped_op(p->op))
        return cpu_refuse(why, why_len, "op %d not supported: grouped fwd, dgrad and wgrad only",
                          (int)p->op);
    if (p->scaling != GG_SCALING_TENSOR)
        return cpu_refuse(why, why_len,
                          "scaling %d not supported: tensor-wise scaling only (a_scale one fp32, "
                          "b_scale one fp32 per matrix of B)",
                          (int)p->scaling);
    int ocp = is_ocp_fp8(p->a_dtype) && is_ocp_fp8(p->b_dtype);
    int fnuz = is_fnuz_fp8(p->a_dtype) && is_fnuz_fp8(p->b_dtype);
    if ((is_ocp_fp8(p->a_dtype) && is_fnuz_fp8(p->b_dtype)) ||
        (is_fnuz_fp8(p->a_dtype) && is_ocp_fp8(p->b_dtype)))
        return cpu_refuse(why, why_len,
                          "input dtypes %d/%d not supported: fnuz mixed with OCP fp8",
                          (int)p->a_dtype, (int)p->b_dtype);
    if (!ocp && !fnuz)
        return cpu_refuse(why, why_len,
                          "input dtypes %d/%d not supported: fp8 inputs only (e4m3, e5m2, or "
                          "e4m3fnuz, e5m2fnuz)",
                          (int)p->a_dtype, (int)p->b_dtype);
    if (p->a_dtype == GG_DTYPE_E5M2 && p->b_dtype == GG_DTYPE_E5M2)
        return cpu_refuse(why, why_len, "e5m2 x e5m2 is not supported");
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "output dtype %d not supported: bf16 or f32 only",
                          (int)p->c_dtype);
    if (p->acc_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "accumulator dtype %d not supported: f32 only",
                          (int)p->acc_dtype);
    if (p->bias_dtype != GG_DTYPE_NONE)
        return cpu_refuse(why, why_len, "bias not supported by this kernel");
    if (p->b_layout != GG_LAYOUT_NK)
        return cpu_refuse(why, why_len, "b_layout %d not supported: grouped weights are [N, K]",
                          (int)p->b_layout);
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split < 1 || split > SPLIT_K_MAX)
        return cpu_refuse(why, why_len, "split_k %lld out of range 1..%d", (long long)split,
                          SPLIT_K_MAX);
    if (p->mutant != NULL && !known_mutant(p->mutant))
        return cpu_refuse(why, why_len, "mutant %s not provided by this kernel", p->mutant);
    return 1;
}

static int persistent_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    int64_t workers = gg_kopt_get(p, "workers", WORKERS_DEFAULT);
    if (workers < 1 || workers > WORKERS_MAX)
        return cpu_refuse(why, why_len, "workers %lld out of range 1..%d", (long long)workers,
                          WORKERS_MAX);
    return fp8_supports(p, why, why_len);
}

/* Counts tiles from the host group offsets; 0 without split-K or for a problem it cannot run. */
static size_t fp8_workspace_bytes(const struct gg_problem *p)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split <= 1 || split > SPLIT_K_MAX || !is_grouped_op(p->op) || p->groups < 0 ||
        p->group_offs == NULL)
        return 0;
    struct gemm_map m;
    resolve_map(p, p->group_offs, &m);
    return workspace_for(count_tiles(&m, NULL), split);
}

/* Pointer ptr must be non-NULL when the operand is read or written, and aligned. */
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

/* Checks sizes, leading dimensions, the device group offsets and the operand pointers. */
static enum gg_status check_problem(const struct gg_problem *p, const struct gemm_map *m,
                                    const struct gg_operands *o, char *err, size_t err_len)
{
    if (m->groups < 0 || m->m < 0 || m->n < 0 || m->k < 0)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "negative size (groups %lld, m %lld, n %lld, k %lld)",
                        (long long)m->groups, (long long)m->m, (long long)m->n, (long long)m->k);
    if (m->offs == NULL)
        return cpu_fail(err, err_len, GG_E_INVAL, "group_offs_dev is NULL");
    if (m->offs[0] != 0)
        return cpu_fail(err, err_len, GG_E_INVAL, "group_offs_dev[0] = %lld, expected 0",
                        (long long)m->offs[0]);
    for (int64_t g = 0; g < m->groups; g++)
        if (m->offs[g + 1] < m->offs[g])
            return cpu_fail(err, err_len, GG_E_INVAL, "group_offs_dev decreases at group %lld",
                            (long long)g);
    if (m->offs[m->groups] != m->m)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "group_offs_dev[%lld] = %lld differs from m = %lld", (long long)m->groups,
                        (long long)m->offs[m->groups], (long long)m->m);
    int64_t row_a = m->op == GG_OP_GROUPED_FWD ? m->k : m->n;
    int64_t row_c = m->op == GG_OP_GROUPED_FWD ? m->n : m->k;
    if (m->lda < row_a || m->ldb < m->k || m->ldc < row_c || m->stride_b < 0 || m->stride_c < 0)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                        "stride_b %lld, stride_c %lld)",
                        (long long)m->lda, (long long)m->ldb, (long long)m->ldc,
                        (long long)m->stride_b, (long long)m->stride_c);
    int any_rows = m->m > 0, any_groups = m->groups > 0;
    int b_used = m->op == GG_OP_GROUPED_WGRAD ? any_rows && m->k > 0
                                              : any_rows && m->n > 0 && m->k > 0;
    int c_used = m->op == GG_OP_GROUPED_WGRAD ? any_groups && m->n > 0 && m->k > 0
                                              : any_rows && row_c > 0;
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    enum gg_status st;
    if ((st = check_ptr(o->a, any_rows && row_a > 0, 1, "a", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b, b_used, 1, "b", err, err_len)) != GG_OK ||
        (st = check_ptr(o->c, c_used, c_size, "c", err, err_len)) != GG_OK ||
        (st = check_ptr(o->a_scale, c_used, sizeof(float), "a_scale", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b_scale, c_used, sizeof(float), "b_scale", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

/* Builds the plan of p: map, tile list from the device group offsets, tables, scales. */
static enum gg_status make_plan(const struct gg_problem *p, const struct gg_operands *o,
                                struct plan *pl, char *err, size_t err_len)
{
    resolve_map(p, o->group_offs_dev, &pl->m);
    enum gg_status st = check_problem(p, &pl->m, o, err, err_len);
    if (st != GG_OK)
        return st;
    pl->a = o->a;
    pl->b = o->b;
    pl->c = o->c;
    pl->ws = o->workspace;
    pl->c_dtype = p->c_dtype;
    operand_table(p, p->a_dtype, pl->table_a);
    operand_table(p, p->b_dtype, pl->table_b);
    pl->a_scale = o->a_scale != NULL ? *(const float *)o->a_scale : 0.0f;
    pl->b_scale = o->b_scale;
    pl->per_group_scale = p->op != GG_OP_GROUPED_WGRAD;
    pl->wrap_bytes = gg_mutant_is(p, "i32_byte_limit");
    pl->split = gg_kopt_get(p, "split_k", 1);
    pl->tile_start = malloc((size_t)(pl->m.groups + 1) * sizeof(int64_t));
    if (pl->tile_start == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                        (long long)pl->m.groups + 1);
    pl->tiles = count_tiles(&pl->m, pl->tile_start);
    pl->wave = wave_tiles(pl->tiles, pl->split);
    int64_t waves = pl->tiles > 0 ? ceil_div(pl->tiles, pl->wave) : 0;
    pl->phases = pl->split > 1 ? 2 * waves : waves;
    size_t ws_need = workspace_for(pl->tiles, pl->split);
    if (ws_need > 0 && (o->workspace == NULL || o->workspace_bytes < ws_need ||
                        (uintptr_t)o->workspace % sizeof(float) != 0)) {
        free(pl->tile_start);
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "split_k %lld needs an aligned workspace of %zu bytes (got %zu at %p)",
                        (long long)pl->split, ws_need, o->workspace_bytes, o->workspace);
    }
    return GG_OK;
}

/* Shared body of both kernels: workers = 0 runs the non-persistent model. */
static enum gg_status fp8_run(const struct gg_problem *p, const struct gg_operands *o,
                              int64_t workers, char *err, size_t err_len)
{
    struct plan *pl = malloc(sizeof *pl);
    if (pl == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for the plan");
    enum gg_status st = make_plan(p, o, pl, err, err_len);
    if (st != GG_OK) {
        free(pl);
        return st;
    }
    size_t nbuf = workers > 0 ? (size_t)workers : 1;
    float *buf = pl->phases > 0 ? malloc(nbuf * SCRATCH_FLOATS * sizeof(float)) : NULL;
    if (pl->phases > 0 && buf == NULL) {
        st = cpu_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    } else if (pl->phases > 0 && workers > 0) {
        st = run_persistent(pl, workers, buf, err, err_len);
    } else if (pl->phases > 0) {
        struct scratch s = scratch_at(buf, 0);
        run_tiled(pl, &s);
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

/*
 * grouped_bf16_cpu.c — grouped_bf16_cpu_tiled: grouped GEMM fwd (NT), dgrad (NN) and variable-K
 * wgrad (TN) with bf16 inputs, fp32 accumulation and bf16 or fp32 output, organised like a GPU
 * grouped kernel: a flat list of output tiles over all groups, each tile computed from packed
 * fp32 panels by a register-blocked micro-kernel, optional split-K through a workspace of fp32
 * partials summed in fixed slice order, and one round-to-nearest-even per output element.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_int.h"

/* Output tile owned by one work item, and the reduction step of one packing round. */
#define TILE_M 64
#define TILE_N 64
#define TILE_K 256
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

_Static_assert(TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0, "micro-tiles must cover a tile");

#define TILE_ELEMS ((int64_t)TILE_M * TILE_N)

/*
 * Every grouped op is C_g[i][j] = Σ_r A_g(i, r) · B_g(r, j) over one block of C, with
 *   A_g(i, r) = a[a_off + i·a_si + r·a_sr],  B_g(r, j) = b[b_off + r·b_sr + j·b_sj],
 *   C_g[i][j] = c[c_off + i·ldc + j]:
 *   fwd    rows M_g, cols N, reduction K     a_si = lda, a_sr = 1     b_sr = 1,   b_sj = ldb
 *   dgrad  rows M_g, cols K, reduction N     a_si = lda, a_sr = 1     b_sr = ldb, b_sj = 1
 *   wgrad  rows N,   cols K, reduction M_g   a_si = 1,   a_sr = lda   b_sr = ldb, b_sj = 1
 */
struct gemm_map {
    enum gg_op op;
    int64_t groups, m, n, k;
    int64_t lda, ldb, ldc, stride_b, stride_c; /* defaults resolved */
    int64_t a_si, a_sr, b_sr, b_sj;
    const int64_t *offs; /* groups + 1 row offsets */
};

/* The block of C that group g owns, where its operands start, and its reduction length. */
struct block {
    int64_t a_off, b_off, c_off;
    int64_t rows, cols, red;
};

/* Split-K schedule: tiles are processed in waves of `wave` tiles, each tile in `split` slices. */
struct schedule {
    int64_t tiles, split, wave;
    int64_t *tile_start; /* groups + 1 entries: first tile of each group (prefix sum) */
};

/* Packing buffers and the tile accumulator, allocated once per run. */
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

/* Builds the map of p with packed defaults in every zero leading dimension and stride. */
static void resolve_map(const struct gg_problem *p, const int64_t *offs, struct gemm_map *m)
{
    int64_t row_a = p->op == GG_OP_GROUPED_FWD ? p->k : p->n;
    int64_t row_c = p->op == GG_OP_GROUPED_FWD ? p->n : p->k;
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
}

static struct block group_block(const struct gemm_map *m, int64_t g)
{
    int64_t row0 = m->offs[g], len = m->offs[g + 1] - m->offs[g];
    switch (m->op) {
    case GG_OP_GROUPED_FWD:
        return (struct block){row0 * m->lda, g * m->stride_b, row0 * m->ldc, len, m->n, m->k};
    case GG_OP_GROUPED_DGRAD:
        return (struct block){row0 * m->lda, g * m->stride_b, row0 * m->ldc, len, m->k, m->n};
    default:
        return (struct block){row0 * m->lda, row0 * m->ldb, g * m->stride_c, m->n, m->k, len};
    }
}

/* Tiles per block row and in the whole block; a block with no rows or no columns has none
   (a wgrad group with M_g = 0 has N x K tiles and a reduction of length 0). */
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

/* Tiles per wave: the whole list without split-K, else what fits SPLIT_K_WAVE_ITEMS items. */
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

/* The group owning tile t: the last g with start[g] <= t (empty groups own no tiles). */
static int64_t tile_group(const struct schedule *s, int64_t groups, int64_t t)
{
    int64_t lo = 0, hi = groups; /* start[lo] <= t < start[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->tile_start[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

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
__attribute__((noinline)) static void micro_kernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict acc)
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

/*
 * One work item: the rows x cols tile at (i0, j0) of block blk, reduced over r0 .. r1-1, into
 * s->acc as fp32 sums. An empty reduction range leaves exact zeros.
 */
static void compute_tile(const struct gemm_map *m, const uint16_t *a, const uint16_t *b,
                         const struct block *blk, int64_t i0, int64_t j0, int64_t rows,
                         int64_t cols, int64_t r0, int64_t r1, struct scratch *s)
{
    memset(s->acc, 0, (size_t)TILE_ELEMS * sizeof(float));
    for (int64_t rk = r0; rk < r1; rk += TILE_K) {
        int64_t kc = min64(TILE_K, r1 - rk);
        pack_panels(s->ap, a + blk->a_off + i0 * m->a_si + rk * m->a_sr, m->a_si, m->a_sr, rows,
                    kc, MICRO_M);
        pack_panels(s->bp, b + blk->b_off + rk * m->b_sr + j0 * m->b_sj, m->b_sj, m->b_sr, cols,
                    kc, MICRO_N);
        for (int64_t i = 0; i < rows; i += MICRO_M)
            for (int64_t j = 0; j < cols; j += MICRO_N)
                micro_kernel(kc, s->ap + i * kc, s->bp + j * kc, s->acc + i * TILE_N + j);
    }
}

/* Epilogue: writes the rows x cols logical elements of acc to C at element offset c_off, with
   one RNE rounding for bf16; the padding between rows (ldc > cols) is never touched. */
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

/* Reduction pass of one tile: acc = ((p_0 + p_1) + p_2) + ... over its split partials, which lie
   one tile slot apart from part; only the rows x cols elements each slice wrote are read. */
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

/* Where tile t lies: its group's block, its origin (i0, j0) and its extent. */
struct tile_pos {
    struct block blk;
    int64_t i0, j0, rows, cols;
};

static struct tile_pos locate_tile(const struct gemm_map *m, const struct schedule *s, int64_t t)
{
    struct tile_pos tp;
    int64_t g = tile_group(s, m->groups, t);
    tp.blk = group_block(m, g);
    int64_t local = t - s->tile_start[g], per_row = tiles_per_row(&tp.blk);
    tp.i0 = (local / per_row) * TILE_M;
    tp.j0 = (local % per_row) * TILE_N;
    tp.rows = min64(TILE_M, tp.blk.rows - tp.i0);
    tp.cols = min64(TILE_N, tp.blk.cols - tp.j0);
    return tp;
}

/* The tile list in waves; within a wave, every (tile, slice) item, then the reduction pass.
   Slice sl of a reduction of length L covers [sl·ceil(L/S), (sl+1)·ceil(L/S)) ∩ [0, L), which is
   empty for the trailing slices when L < S: those partials are written as exact zeros. */
static void run_tiles(const struct gemm_map *m, const struct schedule *s,
                      const struct gg_operands *o, enum gg_dtype c_dtype, struct scratch *sc)
{
    const uint16_t *a = o->a, *b = o->b;
    float *ws = o->workspace;
    for (int64_t t0 = 0; t0 < s->tiles; t0 += s->wave) {
        int64_t t1 = min64(s->tiles, t0 + s->wave);
        for (int64_t t = t0; t < t1; t++) {
            struct tile_pos tp = locate_tile(m, s, t);
            int64_t chunk = ceil_div(tp.blk.red, s->split);
            for (int64_t sl = 0; sl < s->split; sl++) {
                int64_t r0 = min64(sl * chunk, tp.blk.red), r1 = min64(r0 + chunk, tp.blk.red);
                compute_tile(m, a, b, &tp.blk, tp.i0, tp.j0, tp.rows, tp.cols, r0, r1, sc);
                if (s->split == 1) {
                    store_tile(sc->acc, tp.rows, tp.cols, c_dtype, o->c,
                               tp.blk.c_off + tp.i0 * m->ldc + tp.j0, m->ldc);
                } else {
                    float *slot = ws + ((t - t0) * s->split + sl) * TILE_ELEMS;
                    for (int64_t i = 0; i < tp.rows; i++)
                        memcpy(slot + i * TILE_N, sc->acc + i * TILE_N,
                               (size_t)tp.cols * sizeof(float));
                }
            }
        }
        if (s->split == 1)
            continue;
        for (int64_t t = t0; t < t1; t++) {
            struct tile_pos tp = locate_tile(m, s, t);
            reduce_partials(ws + (t - t0) * s->split * TILE_ELEMS, s->split, tp.rows, tp.cols,
                            sc->acc);
            store_tile(sc->acc, tp.rows, tp.cols, c_dtype, o->c,
                       tp.blk.c_off + tp.i0 * m->ldc + tp.j0, m->ldc);
        }
    }
}

static int is_grouped_op(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

static int grouped_supports(const struct gg_problem *p, char *why, size_t why_len)
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
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split < 1 || split > SPLIT_K_MAX)
        return cpu_refuse(why, why_len, "split_k %lld out of range 1..%d", (long long)split,
                          SPLIT_K_MAX);
    if (p->mutant != NULL)
        return cpu_refuse(why, why_len, "mutant %s not provided by this kernel", p->mutant);
    return 1;
}

/* Counts tiles from the host group offsets; 0 without split-K or for a problem it cannot run. */
static size_t grouped_workspace_bytes(const struct gg_problem *p)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split <= 1 || split > SPLIT_K_MAX || !is_grouped_op(p->op) || p->groups < 0 ||
        p->group_offs == NULL)
        return 0;
    struct gemm_map m;
    resolve_map(p, p->group_offs, &m);
    return workspace_for(count_tiles(&m, NULL), split);
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

/* Checks sizes, leading dimensions, the device group offsets and the operand pointers. */
static enum gg_status check_problem(const struct gg_problem *p, const struct gemm_map *m,
                                    const struct gg_operands *o, char *err, size_t err_len)
{
    if (m->groups < 0 || m->m < 0 || m->n < 0 || m->k < 0)
        return cpu_fail(err, err_len, GG_E_INVAL, "negative size (groups %lld, m %lld, n %lld, k %lld)",
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
        return cpu_fail(err, err_len, GG_E_INVAL, "group_offs_dev[%lld] = %lld differs from m = %lld",
                        (long long)m->groups, (long long)m->offs[m->groups], (long long)m->m);
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
    enum gg_status st;
    if ((st = check_ptr(o->a, a_used, sizeof(uint16_t), "a", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b, b_used, sizeof(uint16_t), "b", err, err_len)) != GG_OK ||
        (st = check_ptr(o->c, c_used, c_size, "c", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

static enum gg_status grouped_run(const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    if (!grouped_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct gemm_map m;
    resolve_map(p, o->group_offs_dev, &m);
    enum gg_status st = check_problem(p, &m, o, err, err_len);
    if (st != GG_OK)
        return st;

    struct schedule s = {0, gg_kopt_get(p, "split_k", 1), 0, NULL};
    s.tile_start = malloc((size_t)(m.groups + 1) * sizeof(int64_t));
    if (s.tile_start == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                        (long long)m.groups + 1);
    s.tiles = count_tiles(&m, s.tile_start);
    s.wave = wave_tiles(s.tiles, s.split);
    size_t ws_need = workspace_for(s.tiles, s.split);
    if (ws_need > 0 && (o->workspace == NULL || o->workspace_bytes < ws_need ||
                        (uintptr_t)o->workspace % sizeof(float) != 0)) {
        free(s.tile_start);
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "split_k %lld needs an aligned workspace of %zu bytes (got %zu at %p)",
                        (long long)s.split, ws_need, o->workspace_bytes, o->workspace);
    }

    size_t scratch_floats = (size_t)(TILE_M * TILE_K + TILE_K * TILE_N + TILE_ELEMS);
    float *buf = malloc(scratch_floats * sizeof(float));
    if (buf == NULL) {
        free(s.tile_start);
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    }
    struct scratch sc = {buf, buf + TILE_M * TILE_K, buf + TILE_M * TILE_K + TILE_K * TILE_N};
    run_tiles(&m, &s, o, p->c_dtype, &sc);
    free(buf);
    free(s.tile_start);
    return GG_OK;
}

const struct gg_kernel gg_kernel_grouped_bf16_cpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "grouped_bf16_cpu_tiled",
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 acc, bf16/f32 out; tiled, split-K",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
           GG_OP_BIT(GG_OP_GROUPED_WGRAD),
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = TILE_K,
    .mutants = NULL,
    .supports = grouped_supports,
    .workspace_bytes = grouped_workspace_bytes,
    .run = grouped_run,
};

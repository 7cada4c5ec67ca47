/*
 * mx_cpu.c — the OCP MX-FP8 kernels on the CPU and the engine they share with moe_mx_cpu.c.
 * Both operands carry E4M3 (or E5M2) payloads with one E8M0 scale per 1x32 block along K. Each
 * block's fp32 sum of payload products is scaled by 2^(xa-127)·2^(xb-127) in one step (ldexp by
 * the summed exponents; a 0xFF scale makes the block NaN) and added to an fp32 accumulator; bias
 * is added in fp32 and the output rounded once. Kernels: grouped fwd and a dense tiled path over
 * one tile list with optional split-K, and a dense small-M GEMV making one pass over B.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm_int.h"

/* Register block of the micro-kernel: MICRO_M x MICRO_N block sums plus as many accumulators,
   eight 4-lane vectors in all, which leaves room for a row of B in the 16 SSE registers. */
#define MICRO_M 2
#define MICRO_N 8
#define TILE_M CPU_MX_TILE_M
#define TILE_N CPU_MX_TILE_N
#define TILE_ELEMS ((int64_t)TILE_M * TILE_N)
/* 32-blocks per packing step. */
#define STEP_BLOCKS (CPU_MX_TILE_K / GG_MX_BLOCK)
/* The dense GEMV path: rows (the family's limit of M) and columns per pass over B. */
#define GEMV_MAX_M FAMILY_MX_GEMV_MAX_M
#define GEMV_COLS 8

_Static_assert(TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0, "micro-tiles must cover a tile");
_Static_assert(CPU_MX_TILE_K % GG_MX_BLOCK == 0, "the K step must hold whole MX blocks");

/* Scale exponents: E8M0 code x stands for 2^(x-127), so a normal exponent lies in [-127, 127].
   The markers lie outside: 0xFF (NaN), and under the e8m0_special mutant 0x00 read as zero and
   0xFF read as +Inf. */
#define EXP_NAN 4096
#define EXP_ZERO (-4096)
#define EXP_INF 8192

static const char *const mx_mutants[] = {"mx_k_tail", "e8m0_special", NULL};
/* The GEMV's own: its fast path assumes B 16-byte aligned. */
static const char *const gemv_mutants[] = {"mx_k_tail", "e8m0_special", "b_align16", NULL};

/* ---- block scaling ----------------------------------------------------------------------- */

/* 0, +Inf or 2^e: what the e8m0_special decode (an fp32 exp2f with subnormals flushed) makes
   of a scale. */
static float special_factor(int32_t e)
{
    return e == EXP_ZERO ? 0.0f : e == EXP_INF ? INFINITY : ldexpf(1.0f, e);
}

/*
 * The contribution of one block: s·2^ea·2^eb, rounded once. When ea + eb is a normal fp32
 * exponent the factor is an exact fp32 power of two and the product is the correctly rounded
 * s·2^(ea+eb), which is what ldexpf returns; outside that range ldexpf does the scaling. A NaN
 * scale makes the block NaN whatever s is.
 */
static inline float block_scale(float s, int32_t ea, int32_t eb)
{
    if ((uint32_t)(ea + 127) <= 254u && (uint32_t)(eb + 127) <= 254u) {
        int32_t e = ea + eb;
        if (e < -126 || e > 127)
            return ldexpf(s, e);
        uint32_t bits = (uint32_t)(e + 127) << 23;
        float f;
        memcpy(&f, &bits, sizeof f);
        return s * f;
    }
    if (ea == EXP_NAN || eb == EXP_NAN)
        return NAN;
    return s * special_factor(ea) * special_factor(eb);
}

/* ---- the engine ---------------------------------------------------------------------------- */

/* Resolves packed defaults, checks sizes, leading dimensions and pointers. */
static enum gg_status engine_geometry(struct cpu_mx_engine *e, int64_t a_rows, int64_t c_rows,
                                      char *err, size_t err_len)
{
    const struct gg_problem *p = e->p;
    const struct gg_operands *o = e->o;
    if (a_rows < 0 || c_rows < 0 || p->n < 0 || p->k < 0 || e->mats < 0)
        return family_fail(err, err_len, GG_E_INVAL,
                           "negative size (rows %lld, n %lld, k %lld, matrices %lld)",
                           (long long)a_rows, (long long)p->n, (long long)p->k, (long long)e->mats);
    e->lda = p->lda != 0 ? p->lda : p->k;
    e->ldb = p->ldb != 0 ? p->ldb : p->k;
    e->ldc = p->ldc != 0 ? p->ldc : p->n;
    e->stride_b = p->stride_b != 0 ? p->stride_b : p->n * e->ldb;
    if (e->lda < p->k || e->ldb < p->k || e->ldc < p->n || e->stride_b < 0)
        return family_fail(err, err_len, GG_E_INVAL,
                           "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                           "stride_b %lld)",
                           (long long)e->lda, (long long)e->ldb, (long long)e->ldc,
                           (long long)e->stride_b);
    int work = a_rows > 0 && c_rows > 0 && p->n > 0;
    int reads = work && p->k > 0 && e->mats > 0;
    size_t c_size = p->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    size_t bias_size = p->bias_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    enum gg_status st;
    if ((st = family_check_ptr(o->a, reads, 1, "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, reads, 1, "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->a_scale, reads, 1, "a_scale", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b_scale, reads, 1, "b_scale", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, work, c_size, "c", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->bias, work && p->bias_dtype != GG_DTYPE_NONE, bias_size, "bias",
                               err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

enum gg_status cpu_mx_engine_init(struct cpu_mx_engine *e, const struct gg_problem *p,
                                  const struct gg_operands *o, int64_t a_rows, int64_t c_rows,
                                  char *err, size_t err_len)
{
    memset(e, 0, sizeof *e);
    e->p = p;
    e->o = o;
    e->mats = p->op == GG_OP_DENSE ? 1 : p->groups;
    enum gg_status st = engine_geometry(e, a_rows, c_rows, err, err_len);
    if (st != GG_OK)
        return st;
    e->blocks = p->k / GG_MX_BLOCK;
    /* mx_k_tail: the block count written as (K - 1) / 32, which drops the last block. */
    e->blocks_run = gg_mutant_is(p, "mx_k_tail") ? (p->k - 1) / GG_MX_BLOCK : e->blocks;
    cpu_decode_table(p->a_dtype, e->dec_a);
    cpu_decode_table(p->b_dtype, e->dec_b);
    for (int c = 0; c < 255; c++)
        e->exp_of[c] = c - 127;
    e->exp_of[255] = EXP_NAN;
    if (gg_mutant_is(p, "e8m0_special")) {
        /* Scales decoded as fp32 exp2f(x - 127) with subnormals flushed: 2^-127 becomes 0 and
           0xFF becomes 2^128 = +Inf instead of NaN. */
        e->exp_of[0] = EXP_ZERO;
        e->exp_of[255] = EXP_INF;
    }
    size_t floats = (size_t)(TILE_M + TILE_N) * CPU_MX_TILE_K + (size_t)TILE_ELEMS;
    size_t exps = (size_t)(TILE_M + TILE_N) * STEP_BLOCKS;
    e->ap = malloc(floats * sizeof(float));
    e->ea = malloc(exps * sizeof(int32_t));
    if (e->ap == NULL || e->ea == NULL) {
        cpu_mx_engine_free(e);
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for MX packing buffers");
    }
    e->bp = e->ap + (size_t)TILE_M * CPU_MX_TILE_K;
    e->acc = e->bp + (size_t)TILE_N * CPU_MX_TILE_K;
    e->eb = e->ea + (size_t)TILE_M * STEP_BLOCKS;
    return GG_OK;
}

void cpu_mx_engine_free(struct cpu_mx_engine *e)
{
    free(e->ap);
    free(e->ea);
    e->ap = e->bp = e->acc = NULL;
    e->ea = e->eb = NULL;
}

/*
 * Decodes nb blocks (from block kb0) of count rows of an MX operand into fp32 panels of `width`
 * rows: panel q0/width holds rows q0 .. q0+width-1, value (q, r) at d[q0·kc + r·width + q mod
 * width] with kc = 32·nb, and the scale exponent of (q, block) at x[q0·nb + block·width + q mod
 * width]. Row q is rows[q] when rows is given, else row0 + q. Lanes past count are zero.
 */
static void pack_panels(float *restrict d, int32_t *restrict x, const uint8_t *codes,
                        const uint8_t *scales, int64_t ld, int64_t blocks, const int64_t *rows,
                        int64_t row0, int64_t count, int64_t kb0, int64_t nb, int64_t width,
                        const float *dec, const int32_t *exp_of)
{
    int64_t kc = nb * GG_MX_BLOCK;
    for (int64_t q0 = 0; q0 < count; q0 += width) {
        int64_t w = cpu_min64(width, count - q0);
        float *restrict dp = d + q0 * kc;
        int32_t *restrict xp = x + q0 * nb;
        if (w < width) {
            memset(dp, 0, (size_t)(kc * width) * sizeof(float));
            memset(xp, 0, (size_t)(nb * width) * sizeof(int32_t));
        }
        for (int64_t q = 0; q < w; q++) {
            int64_t row = rows != NULL ? rows[q0 + q] : row0 + q0 + q;
            const uint8_t *src = codes + row * ld + kb0 * GG_MX_BLOCK;
            const uint8_t *sc = scales + row * blocks + kb0;
            for (int64_t r = 0; r < kc; r++)
                dp[r * width + q] = dec[src[r]];
            for (int64_t b = 0; b < nb; b++)
                xp[b * width + q] = exp_of[sc[b]];
        }
    }
}

/*
 * acc[i][j] += Σ_blocks block_scale(Σ_{t<32} ap[t][i]·bp[t][j], ea[i], eb[j]) over nb blocks
 * for one MICRO_M x MICRO_N block (acc row stride TILE_N). Within a block the products are
 * added in order of t, starting from zero; blocks are added in order. Products of E4M3 or E5M2
 * values are exact in fp32, so fused or unfused evaluation gives the same sums.
 */
__attribute__((noinline)) static void micro_kernel(int64_t nb, const float *restrict ap,
                                                   const int32_t *restrict ea,
                                                   const float *restrict bp,
                                                   const int32_t *restrict eb,
                                                   float *restrict acc)
{
    float c[MICRO_M][MICRO_N];
    for (int64_t i = 0; i < MICRO_M; i++)
        for (int64_t j = 0; j < MICRO_N; j++)
            c[i][j] = acc[i * TILE_N + j];
    for (int64_t blk = 0; blk < nb; blk++) {
        float s[MICRO_M][MICRO_N] = {{0}};
        for (int64_t t = 0; t < GG_MX_BLOCK; t++) {
            const float *a = ap + (blk * GG_MX_BLOCK + t) * MICRO_M;
            const float *b = bp + (blk * GG_MX_BLOCK + t) * MICRO_N;
            for (int64_t i = 0; i < MICRO_M; i++)
                for (int64_t j = 0; j < MICRO_N; j++)
                    s[i][j] += a[i] * b[j];
        }
        for (int64_t i = 0; i < MICRO_M; i++)
            for (int64_t j = 0; j < MICRO_N; j++)
                c[i][j] += block_scale(s[i][j], ea[blk * MICRO_M + i], eb[blk * MICRO_N + j]);
    }
    for (int64_t i = 0; i < MICRO_M; i++)
        for (int64_t j = 0; j < MICRO_N; j++)
            acc[i * TILE_N + j] = c[i][j];
}

void cpu_mx_tile(struct cpu_mx_engine *e, int64_t mat, const int64_t *a_rows, int64_t rows,
                 int64_t j0, int64_t cols, int64_t kb0, int64_t kb1)
{
    memset(e->acc, 0, (size_t)TILE_ELEMS * sizeof(float));
    if (kb0 >= kb1)
        return; /* nothing to read: B and its scales may be NULL (K = 0) */
    const uint8_t *a = e->o->a, *as = e->o->a_scale;
    const uint8_t *b = (const uint8_t *)e->o->b + mat * e->stride_b;
    const uint8_t *bs = (const uint8_t *)e->o->b_scale + mat * e->p->n * e->blocks;
    for (int64_t kb = kb0; kb < kb1; kb += STEP_BLOCKS) {
        int64_t nb = cpu_min64(STEP_BLOCKS, kb1 - kb), kc = nb * GG_MX_BLOCK;
        pack_panels(e->ap, e->ea, a, as, e->lda, e->blocks, a_rows, 0, rows, kb, nb, MICRO_M,
                    e->dec_a, e->exp_of);
        pack_panels(e->bp, e->eb, b, bs, e->ldb, e->blocks, NULL, j0, cols, kb, nb, MICRO_N,
                    e->dec_b, e->exp_of);
        for (int64_t i = 0; i < rows; i += MICRO_M)
            for (int64_t j = 0; j < cols; j += MICRO_N)
                micro_kernel(nb, e->ap + i * kc, e->ea + i * nb, e->bp + j * kc, e->eb + j * nb,
                             e->acc + i * TILE_N + j);
    }
}

void cpu_mx_store(const struct cpu_mx_engine *e, float *acc, int64_t acc_ld,
                  const int64_t *c_rows, int64_t rows, int64_t j0, int64_t cols, int64_t mat)
{
    struct cpu_gemm_out out = {e->o->c, e->p->c_dtype, e->ldc, e->o->bias, e->p->bias_dtype, 0};
    struct cpu_gemm_dst d = {rows, cols, j0, c_rows, NULL, mat * e->p->n + j0};
    cpu_gemm_store(&out, &d, acc, acc_ld);
}

/* ---- grouped fwd and dense tiled: one tile list with optional split-K ---------------------- */

/*
 * Tiles run in list order: groups, then row tiles, then column tiles. Group g owns rows
 * offs[g] .. offs[g+1]-1 of X and Y and matrix g of W (dense: one group of M rows). With split
 * S, the blocks_run blocks of K are cut into S slices of ceil(blocks_run / S) blocks on 32-block
 * boundaries (trailing slices may be empty and give zeros); the partials of a wave of tiles go
 * to the workspace and are summed in slice order.
 */
struct tile_list {
    int64_t groups, n, split;
    const int64_t *offs;
    int64_t *start; /* groups + 1 prefix sums of the tile counts (NULL when only counting) */
};

static int64_t group_tiles(const void *ctx, int64_t g)
{
    const struct tile_list *l = ctx;
    return cpu_block_tiles(l->offs[g + 1] - l->offs[g], l->n, TILE_M, TILE_N);
}

static int64_t count_tiles(const struct tile_list *l, int64_t *start)
{
    return cpu_tile_prefix(l->groups, group_tiles, l, start);
}

static struct cpu_tile locate_tile(const void *ctx, int64_t t)
{
    const struct tile_list *l = ctx;
    int64_t g = cpu_tile_owner(l->start, l->groups, t);
    return cpu_tile_in_block(g, t - l->start[g], l->offs[g + 1] - l->offs[g], l->n, TILE_M,
                             TILE_N);
}

/* The row indices of a tile (A rows and C rows coincide for these ops). */
static void tile_rows(const struct tile_list *l, const struct cpu_tile *t, int64_t idx[TILE_M])
{
    for (int64_t i = 0; i < t->rows; i++)
        idx[i] = l->offs[t->g] + t->i0 + i;
}

/* scratch is the engine, and acc its accumulator, which cpu_mx_tile fills. */
static void compute_tile(const void *ctx, const struct cpu_tile *tile, int64_t sl, int64_t split,
                         void *scratch, float *acc)
{
    struct cpu_mx_engine *e = scratch;
    int64_t idx[TILE_M], kb0, kb1;
    (void)acc;
    tile_rows(ctx, tile, idx);
    cpu_splitk_slice(e->blocks_run, cpu_ceil_div(e->blocks_run, split), sl, &kb0, &kb1);
    cpu_mx_tile(e, tile->g, idx, tile->rows, tile->j0, tile->cols, kb0, kb1);
}

static void store_tile(const void *ctx, const struct cpu_tile *tile, void *scratch, float *acc)
{
    int64_t idx[TILE_M];
    tile_rows(ctx, tile, idx);
    cpu_mx_store(scratch, acc, TILE_N, idx, tile->rows, tile->j0, tile->cols, tile->g);
}

/* The tile list of p over the row offsets offs (grouped: the group offsets; dense: {0, M}). */
static struct tile_list make_list(const struct gg_problem *p, const int64_t *offs)
{
    return (struct tile_list){p->op == GG_OP_DENSE ? 1 : p->groups, p->n,
                              gg_kopt_get(p, "split_k", 1), offs, NULL};
}

static size_t list_workspace(const struct tile_list *l)
{
    return cpu_splitk_ws(count_tiles(l, NULL), l->split, TILE_ELEMS);
}

/* Runs the tile list of p over the row offsets offs (m rows of X and Y in all) after checking
   the workspace against what the list needs. */
static enum gg_status run_offsets(const struct gg_problem *p, const struct gg_operands *o,
                                  const int64_t *offs, char *err, size_t err_len)
{
    struct tile_list l = make_list(p, offs);
    size_t need = list_workspace(&l);
    enum gg_status st = family_check_workspace(o, need > 0, need, l.split, err, err_len);
    if (st != GG_OK)
        return st;
    l.start = malloc((size_t)(l.groups + 1) * sizeof(int64_t));
    if (l.start == NULL)
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for %lld tile offsets",
                           (long long)l.groups + 1);
    struct cpu_mx_engine e;
    if ((st = cpu_mx_engine_init(&e, p, o, p->m, p->m, err, err_len)) == GG_OK) {
        const struct cpu_sched_kernel kernel = {&l, locate_tile, compute_tile, store_tile};
        struct cpu_sched sched;
        cpu_sched_init(&sched, count_tiles(&l, l.start), l.split, TILE_ELEMS, TILE_N,
                       o->workspace);
        cpu_sched_run(&sched, &kernel, &e, e.acc);
        cpu_mx_engine_free(&e);
    }
    free(l.start);
    return st;
}

static int grouped_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_mx_grouped_supports(p, mx_mutants, why, why_len);
}

static size_t grouped_workspace_bytes(const struct gg_problem *p)
{
    if (!grouped_supports(p, NULL, 0) || p->groups < 0 || p->group_offs == NULL)
        return 0;
    struct tile_list l = make_list(p, p->group_offs);
    return list_workspace(&l);
}

/* Grouped fwd: the device group offsets checked, then one tile list over the groups. */
static enum gg_status grouped_run(const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    if (!grouped_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    if (p->groups < 0)
        return family_fail(err, err_len, GG_E_INVAL, "negative group count %lld",
                           (long long)p->groups);
    enum gg_status st = family_check_offsets(o->group_offs_dev, p->groups, p->m, err, err_len);
    return st != GG_OK ? st : run_offsets(p, o, o->group_offs_dev, err, err_len);
}

static int tiled_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_mx_tiled_supports(p, mx_mutants, why, why_len);
}

static size_t tiled_workspace_bytes(const struct gg_problem *p)
{
    if (!tiled_supports(p, NULL, 0))
        return 0;
    const int64_t offs[2] = {0, p->m};
    struct tile_list l = make_list(p, offs);
    return list_workspace(&l);
}

static enum gg_status tiled_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    if (!tiled_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    const int64_t offs[2] = {0, p->m};
    return run_offsets(p, o, offs, err, err_len);
}

/* ---- dense GEMV ------------------------------------------------------------------------------ */

static int gemv_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_mx_gemv_supports(p, gemv_mutants, why, why_len);
}

/*
 * All M (≤ 16) rows of A are decoded once; then each column block of GEMV_COLS columns of C is
 * produced by one pass over its rows of B: every 32-block of a row of B is decoded once and
 * dotted with the M rows, the block sums scaled and accumulated exactly as in the tile engine.
 */
static void gemv_columns(struct cpu_mx_engine *e, const float *af, const int32_t *xa, int64_t j0,
                         int64_t cols, float acc[GEMV_MAX_M * GEMV_COLS])
{
    const struct gg_problem *p = e->p;
    const uint8_t *b = e->o->b, *bs = e->o->b_scale;
    /* b_align16: the rows of B are loaded from the base pointer rounded down to 16 bytes, as a
       vectorised path that assumes an aligned weight tensor does: right for an aligned B, every
       code shifted by the misalignment otherwise. */
    if (gg_mutant_is(p, "b_align16"))
        b = (const uint8_t *)((uintptr_t)b & ~(uintptr_t)15);
    float bf[GG_MX_BLOCK];
    memset(acc, 0, sizeof(float) * GEMV_MAX_M * GEMV_COLS);
    if (e->blocks_run == 0)
        return; /* nothing to read: B and its scales may be NULL (K = 0) */
    for (int64_t jj = 0; jj < cols; jj++) {
        const uint8_t *brow = b + (j0 + jj) * e->ldb, *srow = bs + (j0 + jj) * e->blocks;
        for (int64_t kb = 0; kb < e->blocks_run; kb++) {
            for (int64_t t = 0; t < GG_MX_BLOCK; t++)
                bf[t] = e->dec_b[brow[kb * GG_MX_BLOCK + t]];
            int32_t eb = e->exp_of[srow[kb]];
            for (int64_t i = 0; i < p->m; i++) {
                const float *ar = af + i * p->k + kb * GG_MX_BLOCK;
                float s = 0.0f;
                for (int64_t t = 0; t < GG_MX_BLOCK; t++)
                    s += ar[t] * bf[t];
                acc[i * GEMV_COLS + jj] += block_scale(s, xa[i * e->blocks + kb], eb);
            }
        }
    }
}

static enum gg_status gemv_run(const struct gg_problem *p, const struct gg_operands *o,
                               char *err, size_t err_len)
{
    if (!gemv_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct cpu_mx_engine e;
    enum gg_status st = cpu_mx_engine_init(&e, p, o, p->m, p->m, err, err_len);
    if (st != GG_OK)
        return st;
    float *af = malloc((size_t)(p->m * p->k + 1) * sizeof(float));
    int32_t *xa = malloc((size_t)(p->m * e.blocks + 1) * sizeof(int32_t));
    if (af == NULL || xa == NULL) {
        free(af);
        free(xa);
        cpu_mx_engine_free(&e);
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the decoded rows of A");
    }
    const uint8_t *a = o->a, *as = o->a_scale;
    int64_t rows[GEMV_MAX_M];
    for (int64_t i = 0; i < p->m; i++) {
        rows[i] = i;
        for (int64_t kk = 0; kk < p->k; kk++)
            af[i * p->k + kk] = e.dec_a[a[i * e.lda + kk]];
        for (int64_t kb = 0; kb < e.blocks; kb++)
            xa[i * e.blocks + kb] = e.exp_of[as[i * e.blocks + kb]];
    }
    float acc[GEMV_MAX_M * GEMV_COLS];
    for (int64_t j0 = 0; j0 < p->n && p->m > 0; j0 += GEMV_COLS) {
        int64_t cols = cpu_min64(GEMV_COLS, p->n - j0);
        gemv_columns(&e, af, xa, j0, cols, acc);
        cpu_mx_store(&e, acc, GEMV_COLS, rows, p->m, j0, cols, 0);
    }
    free(af);
    free(xa);
    cpu_mx_engine_free(&e);
    return GG_OK;
}

/* ---- descriptors ----------------------------------------------------------------------------- */

const struct gg_kernel gg_kernel_mx_e4m3_cpu_grouped = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "mx_e4m3_cpu_grouped",
    .summary = "grouped fwd, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 acc, bf16/f32 out, bias; "
               "tiled, split-K",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = CPU_MX_TILE_K,
    .mutants = mx_mutants,
    .supports = grouped_supports,
    .workspace_bytes = grouped_workspace_bytes,
    .run = grouped_run,
};

const struct gg_kernel gg_kernel_mx_e4m3_cpu_gemv = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "mx_e4m3_cpu_gemv",
    .summary = "dense M <= 16, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 acc, bf16/f32 out, bias; "
               "GEMV, one pass over B",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_DENSE),
    .tile_m = GEMV_MAX_M,
    .tile_n = GEMV_COLS,
    .tile_k = GG_MX_BLOCK,
    .mutants = gemv_mutants,
    .supports = gemv_supports,
    .workspace_bytes = NULL,
    .run = gemv_run,
};

const struct gg_kernel gg_kernel_mx_e4m3_cpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = "mx_e4m3_cpu_tiled",
    .summary = "dense M in 8..64, MX-FP8 (e4m3/e5m2, E8M0 1x32), fp32 acc, bf16/f32 out, bias; "
               "tiled, split-K",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_DENSE),
    .tile_m = TILE_M,
    .tile_n = TILE_N,
    .tile_k = CPU_MX_TILE_K,
    .mutants = mx_mutants,
    .supports = tiled_supports,
    .workspace_bytes = tiled_workspace_bytes,
    .run = tiled_run,
};

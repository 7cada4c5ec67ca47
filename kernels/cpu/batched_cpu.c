/*
 * batched_cpu.c — the batched GEMM kernels C_b = A_b · B_bᵀ (B in [N,K]) or A_b · B_b (B in
 * [K,N]): bf16, a8w8 (e4m3 with per-token, per-128-K fp32 scales and one fp32 scale per batch of
 * B), a16wfp4 (bf16 times e2m1 weights with E8M0 1x32 scales) and afp4wfp4 (e2m1 times e2m1, both
 * MX-scaled). One tile engine serves all four: a flat tile list over batches, codes decoded into
 * fp32 panels, a register-blocked fp32 micro-kernel, scales applied per K group as the GPU
 * kernels do, optional split-K through a workspace, bias in fp32 and one RNE rounding at the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_int.h"

/* Output tile of one work item. */
#define TILE_M 64
#define TILE_N 64
/* Register block of the micro-kernel: MICRO_M x MICRO_N fp32 accumulators (eight 4-lane
   vectors plus four for a row of B fit the 16 SSE registers of baseline x86-64). */
#define MICRO_M 2
#define MICRO_N 16
/* K step of one packing round: 128 for a8w8 (one scale group per round, as its GPU kernels
   do), 256 otherwise; the packing buffers are sized for the deepest. */
#define TILE_K_WIDE 256
#define TILE_K_A8W8 GG_BLOCK128
#define TILE_K_MAX TILE_K_WIDE
#define SPLIT_K_MAX 64
/* Work items (tile, slice) per split-K wave: the workspace holds one wave's partials. */
#define SPLIT_K_WAVE_ITEMS 1024

_Static_assert(TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0, "micro-tiles must cover a tile");

#define TILE_ELEMS ((int64_t)TILE_M * TILE_N)

/* How a kernel scales its K reduction. */
enum recipe {
    R_PLAIN,    /* bf16: products summed straight into the accumulator */
    R_BLOCK128, /* a8w8: each 128-K group summed apart, times a_scale[row][group], added;
                   the total times b_scale[batch] */
    R_MX_B,     /* a16wfp4: B dequantised (code · 2^(e-127)) while packing, then plain */
    R_MX        /* afp4wfp4: each 32-K block summed apart (exact for e2m1 products), times
                   2^(ea-127) · 2^(eb-127), added */
};

/* What one kernel accepts and how it walks K. */
struct variant {
    const char *label;
    enum recipe recipe;
    enum gg_scaling scaling;
    enum gg_dtype a_dtype, a_alt, b_dtype, b_alt; /* accepted input dtypes (alt: or this) */
    int kn_ok;                                    /* accepts B as [K,N] */
    int64_t tile_k;                               /* K step of one packing round */
    int64_t group_k; /* K group whose partial sum is rescaled; 0 for none */
};

static const struct variant V_BF16 = {
    .label = "bf16", .recipe = R_PLAIN, .scaling = GG_SCALING_NONE,
    .a_dtype = GG_DTYPE_BF16, .a_alt = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
    .b_alt = GG_DTYPE_BF16, .kn_ok = 1, .tile_k = TILE_K_WIDE, .group_k = 0};
static const struct variant V_A8W8 = {
    .label = "a8w8", .recipe = R_BLOCK128, .scaling = GG_SCALING_BLOCK128,
    .a_dtype = GG_DTYPE_E4M3, .a_alt = GG_DTYPE_E4M3FNUZ, .b_dtype = GG_DTYPE_E4M3,
    .b_alt = GG_DTYPE_E4M3FNUZ, .kn_ok = 0, .tile_k = TILE_K_A8W8, .group_k = GG_BLOCK128};
static const struct variant V_A16WFP4 = {
    .label = "a16wfp4", .recipe = R_MX_B, .scaling = GG_SCALING_MX_B,
    .a_dtype = GG_DTYPE_BF16, .a_alt = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_E2M1,
    .b_alt = GG_DTYPE_E2M1, .kn_ok = 0, .tile_k = TILE_K_WIDE, .group_k = 0};
static const struct variant V_AFP4WFP4 = {
    .label = "afp4wfp4", .recipe = R_MX, .scaling = GG_SCALING_MX,
    .a_dtype = GG_DTYPE_E2M1, .a_alt = GG_DTYPE_E2M1, .b_dtype = GG_DTYPE_E2M1,
    .b_alt = GG_DTYPE_E2M1, .kn_ok = 0, .tile_k = TILE_K_WIDE, .group_k = GG_MX_BLOCK};

static const char *const MUTANTS[] = {"n_tail", NULL};

/* An input operand: codes at base, element e decoded through table (8- and 4-bit codes). */
struct operand {
    const void *base;
    enum gg_dtype dtype;
    const float *table;
};

/* Everything one run needs, with packed defaults resolved. */
struct ctx {
    const struct variant *v;
    int64_t batch, m, n, k;
    int64_t lda, ldb, ldc, sa, sb, sc;
    int kn;             /* B is [K,N] */
    int64_t b_sq, b_sr; /* B element (n, k) at b·sb + n·b_sq + k·b_sr */
    int64_t k_groups;   /* scale groups along K: ceil(K/128) or K/32 */
    struct operand a, b;
    const float *a_scale_f, *b_scale_f;    /* BLOCK128 */
    const uint8_t *a_scale_e, *b_scale_e;  /* MX, MX_B (E8M0 codes) */
    const void *bias;
    enum gg_dtype bias_dtype, c_dtype;
    void *c;
    int n_tail; /* mutant: the tail mask of the last partial N tile drops its last column */
    float table_a[256], table_b[256], table_e8m0[256];
};

/* Where tile t lies: batch, origin, extent. */
struct tile {
    int64_t b, i0, j0, rows, cols;
};

struct scratch {
    float *ap;   /* TILE_M x TILE_K_MAX, MICRO_M-row panels */
    float *bp;   /* TILE_K_MAX x TILE_N, MICRO_N-column panels */
    float *acc;  /* TILE_M x TILE_N, row stride TILE_N */
    float *part; /* one K group's partial sums, same layout */
};

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static int64_t max64(int64_t x, int64_t y)
{
    return x > y ? x : y;
}

static int64_t ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

static const char *dtype_name(enum gg_dtype t)
{
    static const char *const names[GG_DTYPE_COUNT] = {
        "none", "f64", "f32", "f16", "bf16", "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m1",
        "e8m0"};
    return (unsigned)t < GG_DTYPE_COUNT ? names[t] : "unknown";
}

static const char *scaling_name(enum gg_scaling s)
{
    static const char *const names[] = {"none", "tensor", "mx", "block128", "mx_b"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

/* ---- geometry ------------------------------------------------------------------------------ */

static int64_t tiles_per_batch(int64_t m, int64_t n)
{
    return m > 0 && n > 0 ? ceil_div(m, TILE_M) * ceil_div(n, TILE_N) : 0;
}

static int64_t tile_count(const struct gg_problem *p)
{
    return p->groups > 0 ? p->groups * tiles_per_batch(p->m, p->n) : 0;
}

static struct tile locate_tile(const struct ctx *x, int64_t t)
{
    int64_t per_batch = tiles_per_batch(x->m, x->n), per_row = ceil_div(x->n, TILE_N);
    int64_t local = t % per_batch;
    struct tile tl = {t / per_batch, (local / per_row) * TILE_M, (local % per_row) * TILE_N, 0, 0};
    tl.rows = min64(TILE_M, x->m - tl.i0);
    tl.cols = min64(TILE_N, x->n - tl.j0);
    return tl;
}

/* Split-K slice length: ceil(K/S) rounded up to whole scale groups, so that no group straddles
   two slices. Slice sl covers [sl·chunk, (sl+1)·chunk) ∩ [0, K), empty for trailing slices. */
static int64_t slice_chunk(const struct variant *v, int64_t k, int64_t split)
{
    int64_t chunk = ceil_div(k, split);
    return v->group_k > 0 ? ceil_div(chunk, v->group_k) * v->group_k : chunk;
}

static int64_t wave_tiles(int64_t tiles, int64_t split)
{
    if (split <= 1)
        return tiles;
    return min64(tiles, max64(SPLIT_K_WAVE_ITEMS / split, 1));
}

static size_t workspace_for(int64_t tiles, int64_t split)
{
    if (split <= 1 || tiles <= 0)
        return 0;
    return (size_t)(split * wave_tiles(tiles, split) * TILE_ELEMS) * sizeof(float);
}

/* ---- packing ------------------------------------------------------------------------------- */

/* out[i·ostride] = value of element e0 + i·step, for i < count. One switch per run of codes. */
static void decode_run(const struct operand *op, int64_t e0, int64_t step, int64_t count,
                       float *restrict out, int64_t ostride)
{
    switch (op->dtype) {
    case GG_DTYPE_BF16: {
        const uint16_t *s = (const uint16_t *)op->base + e0;
        for (int64_t i = 0; i < count; i++)
            out[i * ostride] = cpu_bf16_to_f32(s[i * step]);
        break;
    }
    case GG_DTYPE_E2M1:
        for (int64_t i = 0; i < count; i++)
            out[i * ostride] = op->table[cpu_e2m1_code(op->base, e0 + i * step)];
        break;
    default: {
        const uint8_t *s = (const uint8_t *)op->base + e0;
        for (int64_t i = 0; i < count; i++)
            out[i * ostride] = op->table[s[i * step]];
        break;
    }
    }
}

/*
 * Decodes count x kc elements, element (q, r) at off + q·s_q + r·s_r, into fp32 panels of
 * `width` values of q: panel p holds q = p·width .. p·width + width - 1 at
 * dst[p·width·kc + r·width + q mod width]. Only q < valid is loaded (the tail mask); the rest of
 * each panel is zero, so the micro-kernel always runs on whole panels.
 */
static void pack_panels(float *restrict dst, const struct operand *op, int64_t off, int64_t s_q,
                        int64_t s_r, int64_t count, int64_t valid, int64_t kc, int64_t width)
{
    for (int64_t q0 = 0; q0 < count; q0 += width) {
        int64_t wv = max64(min64(width, valid - q0), 0);
        float *restrict d = dst + q0 * kc;
        if (wv < width)
            memset(d, 0, (size_t)(kc * width) * sizeof(float));
        if (s_r == 1) {
            for (int64_t q = 0; q < wv; q++)
                decode_run(op, off + (q0 + q) * s_q, 1, kc, d + q, width);
        } else {
            for (int64_t r = 0; r < kc; r++)
                decode_run(op, off + q0 * s_q + r * s_r, s_q, wv, d + r * width, 1);
        }
    }
}

/* MX_B: the first `valid` columns of a packed B panel (k from rk) times their E8M0 scales,
   2^(e-127) for code e of column j0+q and block k/32. Exact while the product is in range. */
static void dequant_b_panel(const struct ctx *x, float *restrict bp, const struct tile *tl,
                            int64_t rk, int64_t kc, int64_t valid)
{
    for (int64_t q = 0; q < valid; q++) {
        float *restrict d = bp + (q / MICRO_N) * MICRO_N * kc + q % MICRO_N;
        const uint8_t *sc = x->b_scale_e + (tl->b * x->n + tl->j0 + q) * x->k_groups;
        for (int64_t r = 0; r < kc; r++)
            d[r * MICRO_N] *= x->table_e8m0[sc[(rk + r) / GG_MX_BLOCK]];
    }
}

/* ---- compute ------------------------------------------------------------------------------- */

/*
 * acc[i][j] += Σ_{r < kc} ap[r][i] · bp[r][j] for one MICRO_M x MICRO_N block (acc row stride
 * TILE_N), in order of r, one fp32 multiply and one fp32 add per term. Not inlined, so its
 * register allocation does not depend on the caller.
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

/* out += the products over packed depth r0 .. r0+len-1 of panels packed kc deep. */
static void multiply_panels(const struct scratch *s, int64_t rows, int64_t cols, int64_t kc,
                            int64_t r0, int64_t len, float *out)
{
    for (int64_t i = 0; i < rows; i += MICRO_M)
        for (int64_t j = 0; j < cols; j += MICRO_N)
            micro_kernel(len, s->ap + i * kc + r0 * MICRO_M, s->bp + j * kc + r0 * MICRO_N,
                         out + i * TILE_N + j);
}

/* acc += part times the scales of K group grp: a_scale[row][grp] (BLOCK128) or
   2^(ea-127)·2^(eb-127) from the E8M0 codes of row and column (MX). */
static void rescale_add(const struct ctx *x, const struct tile *tl, int64_t grp,
                        const float *part, float *acc)
{
    int64_t row0 = tl->b * x->m + tl->i0;
    for (int64_t i = 0; i < tl->rows; i++) {
        const float *pi = part + i * TILE_N;
        float *ai = acc + i * TILE_N;
        if (x->v->recipe == R_BLOCK128) {
            float sa = x->a_scale_f[(row0 + i) * x->k_groups + grp];
            for (int64_t j = 0; j < tl->cols; j++)
                ai[j] += pi[j] * sa;
        } else {
            float sa = x->table_e8m0[x->a_scale_e[(row0 + i) * x->k_groups + grp]];
            const uint8_t *sb = x->b_scale_e + (tl->b * x->n + tl->j0) * x->k_groups + grp;
            for (int64_t j = 0; j < tl->cols; j++)
                ai[j] += pi[j] * sa * x->table_e8m0[sb[j * x->k_groups]];
        }
    }
}

/*
 * One work item: tile tl reduced over k0 .. k1-1 into s->acc (fp32, before the epilogue). Each
 * round packs up to tile_k of K; scaled recipes split the round into their K groups, which start
 * at multiples of group_k because k0 and tile_k are multiples of it.
 */
static void compute_tile(const struct ctx *x, const struct tile *tl, int64_t k0, int64_t k1,
                         struct scratch *s)
{
    const struct variant *v = x->v;
    /* n_tail: the last, partial N tile loads B under a mask one column short. */
    int64_t b_valid = x->n_tail && tl->cols < TILE_N ? tl->cols - 1 : tl->cols;
    int64_t a_off = tl->b * x->sa + tl->i0 * x->lda;
    int64_t b_off = tl->b * x->sb + tl->j0 * x->b_sq;
    memset(s->acc, 0, (size_t)TILE_ELEMS * sizeof(float));
    for (int64_t rk = k0; rk < k1; rk += v->tile_k) {
        int64_t kc = min64(v->tile_k, k1 - rk);
        pack_panels(s->ap, &x->a, a_off + rk, x->lda, 1, tl->rows, tl->rows, kc, MICRO_M);
        pack_panels(s->bp, &x->b, b_off + rk * x->b_sr, x->b_sq, x->b_sr, tl->cols, b_valid, kc,
                    MICRO_N);
        if (v->recipe == R_MX_B)
            dequant_b_panel(x, s->bp, tl, rk, kc, b_valid);
        if (v->group_k == 0) {
            multiply_panels(s, tl->rows, tl->cols, kc, 0, kc, s->acc);
            continue;
        }
        for (int64_t g0 = 0; g0 < kc; g0 += v->group_k) {
            memset(s->part, 0, (size_t)TILE_ELEMS * sizeof(float));
            multiply_panels(s, tl->rows, tl->cols, kc, g0, min64(v->group_k, kc - g0), s->part);
            rescale_add(x, tl, (rk + g0) / v->group_k, s->part, s->acc);
        }
    }
}

/* Epilogue: acc times b_scale[batch] (BLOCK128), plus bias[batch][col] in fp32, rounded once
   (RNE) to C's dtype and written to the tile's logical elements only (row padding untouched). */
static void store_tile(const struct ctx *x, const struct tile *tl, float *acc)
{
    float sb = x->v->recipe == R_BLOCK128 ? x->b_scale_f[tl->b] : 1.0f;
    int64_t bias0 = tl->b * x->n + tl->j0;
    for (int64_t i = 0; i < tl->rows; i++) {
        float *ai = acc + i * TILE_N;
        for (int64_t j = 0; j < tl->cols; j++) {
            float v = x->v->recipe == R_BLOCK128 ? ai[j] * sb : ai[j];
            if (x->bias_dtype == GG_DTYPE_BF16)
                v += cpu_bf16_to_f32(((const uint16_t *)x->bias)[bias0 + j]);
            else if (x->bias_dtype == GG_DTYPE_F32)
                v += ((const float *)x->bias)[bias0 + j];
            ai[j] = v;
        }
    }
    int64_t c_off = tl->b * x->sc + tl->i0 * x->ldc + tl->j0;
    if (x->c_dtype == GG_DTYPE_BF16) {
        uint16_t *cp = (uint16_t *)x->c + c_off;
        for (int64_t i = 0; i < tl->rows; i++)
            for (int64_t j = 0; j < tl->cols; j++)
                cp[i * x->ldc + j] = cpu_f32_to_bf16(acc[i * TILE_N + j]);
    } else {
        float *cp = (float *)x->c + c_off;
        for (int64_t i = 0; i < tl->rows; i++)
            memcpy(cp + i * x->ldc, acc + i * TILE_N, (size_t)tl->cols * sizeof(float));
    }
}

/* acc = ((p_0 + p_1) + p_2) + ... over the split partials of one tile, one tile slot apart. */
static void reduce_partials(const float *part, int64_t split, const struct tile *tl, float *acc)
{
    for (int64_t i = 0; i < tl->rows; i++)
        memcpy(acc + i * TILE_N, part + i * TILE_N, (size_t)tl->cols * sizeof(float));
    for (int64_t sl = 1; sl < split; sl++) {
        const float *ps = part + sl * TILE_ELEMS;
        for (int64_t i = 0; i < tl->rows; i++)
            for (int64_t j = 0; j < tl->cols; j++)
                acc[i * TILE_N + j] += ps[i * TILE_N + j];
    }
}

/* The tile list in waves: every (tile, slice) item of a wave, then its reduction pass. */
static void run_tiles(const struct ctx *x, int64_t tiles, int64_t split, float *ws,
                      struct scratch *s)
{
    int64_t wave = wave_tiles(tiles, split), chunk = slice_chunk(x->v, x->k, split);
    for (int64_t t0 = 0; t0 < tiles; t0 += wave) {
        int64_t t1 = min64(tiles, t0 + wave);
        for (int64_t t = t0; t < t1; t++) {
            struct tile tl = locate_tile(x, t);
            for (int64_t sl = 0; sl < split; sl++) {
                int64_t k0 = min64(sl * chunk, x->k), k1 = min64(k0 + chunk, x->k);
                compute_tile(x, &tl, k0, k1, s);
                if (split == 1) {
                    store_tile(x, &tl, s->acc);
                    continue;
                }
                float *slot = ws + ((t - t0) * split + sl) * TILE_ELEMS;
                for (int64_t i = 0; i < tl.rows; i++)
                    memcpy(slot + i * TILE_N, s->acc + i * TILE_N,
                           (size_t)tl.cols * sizeof(float));
            }
        }
        if (split == 1)
            continue;
        for (int64_t t = t0; t < t1; t++) {
            struct tile tl = locate_tile(x, t);
            reduce_partials(ws + (t - t0) * split * TILE_ELEMS, split, &tl, s->acc);
            store_tile(x, &tl, s->acc);
        }
    }
}

/* ---- supports, workspace, checks ------------------------------------------------------------ */

static int dtype_ok(enum gg_dtype t, enum gg_dtype want, enum gg_dtype alt)
{
    return t == want || t == alt;
}

/* E2M1 rows and matrices must start on a byte: leading dimensions and strides even. */
static int e2m1_ld_ok(enum gg_dtype t, int64_t ld, int64_t stride)
{
    return t != GG_DTYPE_E2M1 || (ld % 2 == 0 && stride % 2 == 0);
}

static int batched_supports(const struct variant *v, const struct gg_problem *p, char *why,
                            size_t why_len)
{
    if (p->op != GG_OP_BATCHED)
        return cpu_refuse(why, why_len, "op %d not supported: batched only", (int)p->op);
    if (p->scaling != v->scaling)
        return cpu_refuse(why, why_len, "scaling %s not supported: %s needs scaling %s",
                          scaling_name(p->scaling), v->label, scaling_name(v->scaling));
    if (!dtype_ok(p->a_dtype, v->a_dtype, v->a_alt) || !dtype_ok(p->b_dtype, v->b_dtype, v->b_alt))
        return cpu_refuse(why, why_len, "input dtypes %s/%s not supported: %s takes %s A and %s B",
                          dtype_name(p->a_dtype), dtype_name(p->b_dtype), v->label,
                          dtype_name(v->a_dtype), dtype_name(v->b_dtype));
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "output dtype %s not supported: bf16 or f32 only",
                          dtype_name(p->c_dtype));
    if (p->acc_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "accumulator dtype %s not supported: f32 only",
                          dtype_name(p->acc_dtype));
    if (p->b_layout != GG_LAYOUT_NK && (p->b_layout != GG_LAYOUT_KN || !v->kn_ok))
        return cpu_refuse(why, why_len,
                          "layout %d of B not supported: %s takes B as [N,K] (its scales run "
                          "along K of B's rows)",
                          (int)p->b_layout, v->label);
    if (v->recipe >= R_MX_B && p->k % GG_MX_BLOCK != 0)
        return cpu_refuse(why, why_len, "K = %lld not supported: MX needs K a multiple of %d",
                          (long long)p->k, GG_MX_BLOCK);
    if (!e2m1_ld_ok(p->a_dtype, p->lda, p->stride_a) ||
        !e2m1_ld_ok(p->b_dtype, p->ldb, p->stride_b))
        return cpu_refuse(why, why_len,
                          "odd leading dimension or stride of an e2m1 operand (lda %lld, "
                          "stride_a %lld, ldb %lld, stride_b %lld): rows must start on a byte",
                          (long long)p->lda, (long long)p->stride_a, (long long)p->ldb,
                          (long long)p->stride_b);
    if (p->bias_dtype != GG_DTYPE_NONE && p->bias_dtype != GG_DTYPE_BF16 &&
        p->bias_dtype != GG_DTYPE_F32)
        return cpu_refuse(why, why_len, "bias dtype %s not supported: bf16 or f32 only",
                          dtype_name(p->bias_dtype));
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (split < 1 || split > SPLIT_K_MAX)
        return cpu_refuse(why, why_len, "split_k %lld out of range 1..%d", (long long)split,
                          SPLIT_K_MAX);
    if (p->mutant != NULL && strcmp(p->mutant, "n_tail") != 0)
        return cpu_refuse(why, why_len, "mutant %s not provided by this kernel", p->mutant);
    return 1;
}

static size_t batched_workspace_bytes(const struct gg_problem *p)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (p->op != GG_OP_BATCHED || split > SPLIT_K_MAX || p->m < 0 || p->n < 0)
        return 0;
    return workspace_for(tile_count(p), split);
}

/* Fills x from p and o: packed defaults for zero leading dimensions and strides. */
static void resolve(const struct variant *v, const struct gg_problem *p,
                    const struct gg_operands *o, struct ctx *x)
{
    int kn = p->b_layout == GG_LAYOUT_KN;
    x->v = v;
    x->batch = p->groups;
    x->m = p->m;
    x->n = p->n;
    x->k = p->k;
    x->lda = p->lda != 0 ? p->lda : p->k;
    x->ldb = p->ldb != 0 ? p->ldb : (kn ? p->n : p->k);
    x->ldc = p->ldc != 0 ? p->ldc : p->n;
    x->sa = p->stride_a != 0 ? p->stride_a : p->m * x->lda;
    x->sb = p->stride_b != 0 ? p->stride_b : (kn ? p->k : p->n) * x->ldb;
    x->sc = p->stride_c != 0 ? p->stride_c : p->m * x->ldc;
    x->kn = kn;
    x->b_sq = kn ? 1 : x->ldb;
    x->b_sr = kn ? x->ldb : 1;
    x->k_groups = v->recipe == R_BLOCK128 ? ceil_div(p->k, GG_BLOCK128) : p->k / GG_MX_BLOCK;
    x->a = (struct operand){o->a, p->a_dtype, x->table_a};
    x->b = (struct operand){o->b, p->b_dtype, x->table_b};
    x->a_scale_f = v->recipe == R_BLOCK128 ? o->a_scale : NULL;
    x->b_scale_f = v->recipe == R_BLOCK128 ? o->b_scale : NULL;
    x->a_scale_e = v->recipe == R_MX ? o->a_scale : NULL;
    x->b_scale_e = v->recipe >= R_MX_B ? o->b_scale : NULL;
    x->bias = o->bias;
    x->bias_dtype = p->bias_dtype;
    x->c_dtype = p->c_dtype;
    x->c = o->c;
    x->n_tail = gg_mutant_is(p, "n_tail");
    cpu_decode_table(p->a_dtype, x->table_a);
    cpu_decode_table(p->b_dtype, x->table_b);
    cpu_decode_table(GG_DTYPE_E8M0, x->table_e8m0);
}

/* Pointer ptr must be non-NULL when needed, and aligned to align bytes. */
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

/* Span of a matrix of rows x cols with leading dimension ld: 0 when empty. */
static int64_t mat_span(int64_t rows, int64_t cols, int64_t ld)
{
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

static size_t dtype_size(enum gg_dtype t)
{
    return t == GG_DTYPE_BF16 ? sizeof(uint16_t) : t == GG_DTYPE_F32 ? sizeof(float) : 1;
}

static enum gg_status check_problem(const struct ctx *x, const struct gg_operands *o, char *err,
                                    size_t err_len)
{
    if (x->batch < 0 || x->m < 0 || x->n < 0 || x->k < 0)
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "negative size (batch %lld, m %lld, n %lld, k %lld)", (long long)x->batch,
                        (long long)x->m, (long long)x->n, (long long)x->k);
    int64_t rows_b = x->kn ? x->k : x->n, row_b = x->kn ? x->n : x->k;
    if (x->lda < x->k || x->ldb < row_b || x->ldc < x->n || x->sa < mat_span(x->m, x->k, x->lda) ||
        x->sb < mat_span(rows_b, row_b, x->ldb) || x->sc < mat_span(x->m, x->n, x->ldc))
        return cpu_fail(err, err_len, GG_E_INVAL,
                        "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                        "stride_a %lld, stride_b %lld, stride_c %lld)",
                        (long long)x->lda, (long long)x->ldb, (long long)x->ldc,
                        (long long)x->sa, (long long)x->sb, (long long)x->sc);
    int out = x->batch > 0 && x->m > 0 && x->n > 0, red = out && x->k > 0;
    enum recipe r = x->v->recipe;
    enum gg_status st;
    if ((st = check_ptr(o->a, red, dtype_size(x->a.dtype), "a", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b, red, dtype_size(x->b.dtype), "b", err, err_len)) != GG_OK ||
        (st = check_ptr(o->c, out, dtype_size(x->c_dtype), "c", err, err_len)) != GG_OK ||
        (st = check_ptr(o->a_scale, (r == R_BLOCK128 || r == R_MX) && red,
                        r == R_BLOCK128 ? sizeof(float) : 1, "a_scale", err, err_len)) != GG_OK ||
        (st = check_ptr(o->b_scale, r == R_BLOCK128 ? out : r != R_PLAIN && red,
                        r == R_BLOCK128 ? sizeof(float) : 1, "b_scale", err, err_len)) != GG_OK ||
        (st = check_ptr(o->bias, out && x->bias_dtype != GG_DTYPE_NONE, dtype_size(x->bias_dtype),
                        "bias", err, err_len)) != GG_OK)
        return st;
    return GG_OK;
}

static enum gg_status batched_run(const struct variant *v, const struct gg_problem *p,
                                  const struct gg_operands *o, char *err, size_t err_len)
{
    if (!batched_supports(v, p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct ctx *x = malloc(sizeof *x);
    if (x == NULL)
        return cpu_fail(err, err_len, GG_E_NOMEM, "no memory for the run context");
    resolve(v, p, o, x);
    enum gg_status st = check_problem(x, o, err, err_len);
    int64_t split = gg_kopt_get(p, "split_k", 1), tiles = tile_count(p);
    size_t ws_need = workspace_for(tiles, split);
    if (st == GG_OK && ws_need > 0 &&
        (o->workspace == NULL || o->workspace_bytes < ws_need ||
         (uintptr_t)o->workspace % sizeof(float) != 0))
        st = cpu_fail(err, err_len, GG_E_INVAL,
                      "split_k %lld needs an aligned workspace of %zu bytes (got %zu at %p)",
                      (long long)split, ws_need, o->workspace_bytes, o->workspace);
    float *buf = NULL;
    if (st == GG_OK && tiles > 0) {
        size_t floats = (size_t)(TILE_M * TILE_K_MAX + TILE_K_MAX * TILE_N + 2 * TILE_ELEMS);
        buf = malloc(floats * sizeof(float));
        if (buf == NULL)
            st = cpu_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    }
    if (st == GG_OK && tiles > 0) {
        struct scratch s = {buf, buf + TILE_M * TILE_K_MAX,
                            buf + TILE_M * TILE_K_MAX + TILE_K_MAX * TILE_N,
                            buf + TILE_M * TILE_K_MAX + TILE_K_MAX * TILE_N + TILE_ELEMS};
        run_tiles(x, tiles, split, o->workspace, &s);
    }
    free(buf);
    free(x);
    return st;
}

/* One descriptor per variant; the slots bind the shared engine to it. */
#define BATCHED_KERNEL(id, var, tile_k_, text)                                                     \
    static int id##_supports(const struct gg_problem *p, char *why, size_t why_len)                \
    {                                                                                              \
        return batched_supports(&var, p, why, why_len);                                            \
    }                                                                                              \
    static enum gg_status id##_run(const struct gg_problem *p, const struct gg_operands *o,        \
                                   char *err, size_t err_len)                                      \
    {                                                                                              \
        return batched_run(&var, p, o, err, err_len);                                              \
    }                                                                                              \
    const struct gg_kernel gg_kernel_##id = {                                                      \
        .abi_version = GG_KERNEL_ABI_VERSION,                                                      \
        .name = #id,                                                                               \
        .summary = text,                                                                           \
        .backend = GG_BACKEND_CPU,                                                                 \
        .ops = GG_OP_BIT(GG_OP_BATCHED),                                                           \
        .tile_m = TILE_M,                                                                          \
        .tile_n = TILE_N,                                                                          \
        .tile_k = tile_k_,                                                                         \
        .mutants = MUTANTS,                                                                        \
        .supports = id##_supports,                                                                 \
        .workspace_bytes = batched_workspace_bytes,                                                \
        .run = id##_run,                                                                           \
    }

BATCHED_KERNEL(batched_bf16_cpu_tiled, V_BF16, TILE_K_WIDE,
               "batched, bf16 in, B as NK or KN, fp32 acc, optional bias, bf16/f32 out; split-K");
BATCHED_KERNEL(batched_a8w8_cpu_tiled, V_A8W8, TILE_K_A8W8,
               "batched a8w8: e4m3 A per-token per-128-K scales, e4m3 B per-batch scale; split-K");
BATCHED_KERNEL(batched_a16wfp4_cpu_tiled, V_A16WFP4, TILE_K_WIDE,
               "batched a16wfp4: bf16 A, e2m1 B with E8M0 1x32 scales (mx_b); split-K");
BATCHED_KERNEL(batched_afp4wfp4_cpu_tiled, V_AFP4WFP4, TILE_K_WIDE,
               "batched afp4wfp4: e2m1 A and B with E8M0 1x32 scales (mx); split-K");

/*
 * batched_cpu.c — the batched GEMM kernels C_b = A_b · B_bᵀ (B in [N,K]) or A_b · B_b (B in
 * [K,N]): bf16, a8w8 (e4m3 or e4m3fnuz with per-token, per-128-K fp32 scales and one fp32 scale
 * per batch of B), a16wfp4 (bf16 times e2m1 weights with E8M0 1x32 scales) and afp4wfp4 (e2m1
 * times e2m1, both MX-scaled); what each accepts is its family rule (kernels/family). One tile
 * engine serves all four: a flat tile list over batches, codes decoded into fp32 panels, a
 * register-blocked fp32 micro-kernel, scales applied per K group as the GPU kernels do, optional
 * split-K through a workspace, bias in fp32 and one RNE rounding at the end.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/cpu/cpu_gemm_int.h"

/* Output tile of one work item, and the column panels of B the engine packs. */
#define TILE_M CPU_GEMM_TILE_M
#define TILE_N CPU_GEMM_TILE_N
#define TILE_ELEMS CPU_GEMM_TILE_ELEMS
#define MICRO_N CPU_GEMM_MICRO_N
/* K step of one packing round: 128 for a8w8 (one scale group per round, as its GPU kernels
   do), 256 otherwise; the packing buffers are sized for the deepest. */
#define TILE_K_WIDE 256
#define TILE_K_A8W8 GG_BLOCK128
#define TILE_K_MAX TILE_K_WIDE

/* How a kernel scales its K reduction. */
enum recipe {
    R_PLAIN,    /* bf16: products summed straight into the accumulator */
    R_BLOCK128, /* a8w8: each 128-K group summed apart, times a_scale[row][group], added;
                   the total times b_scale[batch] */
    R_MX_B,     /* a16wfp4: B dequantised (code · 2^(e-127)) while packing, then plain */
    R_MX        /* afp4wfp4: each 32-K block summed apart (exact for e2m1 products), times
                   2^(ea-127) · 2^(eb-127), added */
};

/* What one kernel accepts (its family's rule) and how it walks K. */
struct variant {
    const struct family_batched *rule;
    enum recipe recipe;
    int64_t tile_k;  /* K step of one packing round */
    int64_t group_k; /* K group whose partial sum is rescaled; 0 for none */
};

static const struct variant V_BF16 = {&family_batched_bf16, R_PLAIN, TILE_K_WIDE, 0};
static const struct variant V_A8W8 = {&family_batched_a8w8, R_BLOCK128, TILE_K_A8W8, GG_BLOCK128};
static const struct variant V_A16WFP4 = {&family_batched_a16wfp4, R_MX_B, TILE_K_WIDE, 0};
static const struct variant V_AFP4WFP4 = {&family_batched_afp4wfp4, R_MX, TILE_K_WIDE,
                                          GG_MX_BLOCK};

static const char *const MUTANTS[] = {"n_tail", "i32_store_offset", "stride_a_packed", NULL};

/* Everything one run needs, with packed defaults resolved. */
struct ctx {
    const struct variant *v;
    int64_t batch, m, n, k;
    int64_t lda, ldb, ldc, sa, sb, sc;
    int kn;             /* B is [K,N] */
    int64_t b_sq, b_sr; /* B element (n, k) at b·sb + n·b_sq + k·b_sr */
    int64_t k_groups;   /* scale groups along K: ceil(K/128) or K/32 */
    struct cpu_gemm_operand a, b;
    const float *a_scale_f, *b_scale_f;    /* BLOCK128 */
    const uint8_t *a_scale_e, *b_scale_e;  /* MX, MX_B (E8M0 codes) */
    struct cpu_gemm_out out;               /* C and the bias */
    int n_tail; /* mutant: the tail mask of the last partial N tile drops its last column */
    float table_a[256], table_b[256], table_e8m0[256];
};

/* The engine's scratch (TILE_K_MAX deep) and one K group's partial sums (laid out as acc). */
struct scratch {
    struct cpu_gemm_scratch e;
    float *part;
};

/* ---- geometry ------------------------------------------------------------------------------ */

static int64_t tile_count(const struct gg_problem *p)
{
    return p->groups > 0 ? p->groups * cpu_block_tiles(p->m, p->n, TILE_M, TILE_N) : 0;
}

/* Tile t: batch t / (tiles per batch), then row by row within the batch. */
static struct cpu_tile locate_tile(const void *ctx, int64_t t)
{
    const struct ctx *x = ctx;
    int64_t per_batch = cpu_block_tiles(x->m, x->n, TILE_M, TILE_N);
    return cpu_tile_in_block(t / per_batch, t % per_batch, x->m, x->n, TILE_M, TILE_N);
}

/* Split-K slice length: ceil(K/S) rounded up to whole scale groups, so that no group straddles
   two slices. */
static int64_t slice_chunk(const struct variant *v, int64_t k, int64_t split)
{
    int64_t chunk = cpu_ceil_div(k, split);
    return v->group_k > 0 ? cpu_ceil_div(chunk, v->group_k) * v->group_k : chunk;
}

/* ---- scaling ------------------------------------------------------------------------------- */

/* MX_B: the first `valid` columns of a packed B panel (k from rk) times their E8M0 scales,
   2^(e-127) for code e of column j0+q and block k/32. Exact while the product is in range. */
static void dequant_b_panel(const struct ctx *x, float *restrict bp, const struct cpu_tile *tl,
                            int64_t rk, int64_t kc, int64_t valid)
{
    for (int64_t q = 0; q < valid; q++) {
        float *restrict d = bp + (q / MICRO_N) * MICRO_N * kc + q % MICRO_N;
        const uint8_t *sc = x->b_scale_e + (tl->g * x->n + tl->j0 + q) * x->k_groups;
        for (int64_t r = 0; r < kc; r++)
            d[r * MICRO_N] *= x->table_e8m0[sc[(rk + r) / GG_MX_BLOCK]];
    }
}

/* acc += part times the scales of K group grp: a_scale[row][grp] (BLOCK128) or
   2^(ea+eb-254) from the E8M0 codes of row and column (MX). */
static void rescale_add(const struct ctx *x, const struct cpu_tile *tl, int64_t grp,
                        const float *part, float *acc)
{
    int64_t row0 = tl->g * x->m + tl->i0;
    for (int64_t i = 0; i < tl->rows; i++) {
        const float *pi = part + i * TILE_N;
        float *ai = acc + i * TILE_N;
        if (x->v->recipe == R_BLOCK128) {
            float sa = x->a_scale_f[(row0 + i) * x->k_groups + grp];
            for (int64_t j = 0; j < tl->cols; j++)
                ai[j] += pi[j] * sa;
        } else {
            /* One scaling by 2^(ea+eb-254), as the MX dot product defines it: applying the two
               scales one after the other overflows or underflows fp32 in between. */
            int ea = x->a_scale_e[(row0 + i) * x->k_groups + grp];
            const uint8_t *sb = x->b_scale_e + (tl->g * x->n + tl->j0) * x->k_groups + grp;
            for (int64_t j = 0; j < tl->cols; j++) {
                int eb = sb[j * x->k_groups];
                ai[j] += ea == 0xFF || eb == 0xFF ? NAN : ldexpf(pi[j], ea + eb - 254);
            }
        }
    }
}

/* ---- compute ------------------------------------------------------------------------------- */

/*
 * One work item: tile tl reduced over slice sl of K into acc (fp32, before the epilogue). Each
 * round packs up to tile_k of K; scaled recipes split the round into their K groups, which start
 * at multiples of group_k because the slice start and tile_k are multiples of it.
 */
static void compute_tile(const void *ctx, const struct cpu_tile *tl, int64_t sl, int64_t split,
                         void *scratch, float *acc)
{
    const struct ctx *x = ctx;
    const struct scratch *s = scratch;
    const struct variant *v = x->v;
    int64_t k0, k1;
    cpu_splitk_slice(x->k, slice_chunk(v, x->k, split), sl, &k0, &k1);
    /* n_tail: the last, partial N tile loads B under a mask one column short. */
    int64_t b_valid = x->n_tail && tl->cols < TILE_N ? tl->cols - 1 : tl->cols;
    struct cpu_gemm_src src = {&x->a, &x->b, tl->g * x->sa + tl->i0 * x->lda, x->lda, 1,
                               tl->g * x->sb + tl->j0 * x->b_sq, x->b_sq, x->b_sr,
                               tl->rows, tl->cols, b_valid, 0};
    cpu_gemm_clear(acc, tl->rows);
    for (int64_t rk = k0; rk < k1; rk += v->tile_k) {
        int64_t kc = cpu_min64(v->tile_k, k1 - rk);
        cpu_gemm_pack_step(&src, rk, kc, &s->e.pn);
        if (v->recipe == R_MX_B)
            dequant_b_panel(x, s->e.pn.bp, tl, rk, kc, b_valid);
        if (v->group_k == 0) {
            cpu_gemm_multiply(&s->e.pn, tl->rows, tl->cols, kc, 0, kc, acc);
            continue;
        }
        for (int64_t g0 = 0; g0 < kc; g0 += v->group_k) {
            cpu_gemm_clear(s->part, tl->rows);
            cpu_gemm_multiply(&s->e.pn, tl->rows, tl->cols, kc, g0,
                              cpu_min64(v->group_k, kc - g0), s->part);
            rescale_add(x, tl, (rk + g0) / v->group_k, s->part, acc);
        }
    }
}

/* Epilogue: acc times b_scale[batch] (BLOCK128), plus bias[batch][col] in fp32, rounded once
   (RNE) to C's dtype and written to the tile's logical elements only (row padding untouched). */
static void store_tile(const void *ctx, const struct cpu_tile *tl, void *scratch, float *acc)
{
    const struct ctx *x = ctx;
    (void)scratch;
    int block128 = x->v->recipe == R_BLOCK128;
    float sb = block128 ? x->b_scale_f[tl->g] : 1.0f;
    struct cpu_gemm_dst d = {tl->rows, tl->cols, tl->g * x->sc + tl->i0 * x->ldc + tl->j0, NULL,
                             block128 ? &sb : NULL, tl->g * x->n + tl->j0};
    cpu_gemm_store(&x->out, &d, acc, TILE_N);
}

/* ---- supports, workspace, checks ------------------------------------------------------------ */

static int batched_supports(const struct variant *v, const struct gg_problem *p, char *why,
                            size_t why_len)
{
    return family_batched_supports(v->rule, p, MUTANTS, why, why_len);
}

static size_t batched_workspace_bytes(const struct gg_problem *p)
{
    int64_t split = gg_kopt_get(p, "split_k", 1);
    if (p->op != GG_OP_BATCHED || split > FAMILY_SPLIT_K_MAX || p->m < 0 || p->n < 0)
        return 0;
    return cpu_splitk_ws(tile_count(p), split, TILE_ELEMS);
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
    /* stride_a_packed: batch b of A read at b·M·lda, the batches taken as packed one after the
       other: right for the packed stride, batch 1 on reads from the wrong rows once stride_a
       is padded. */
    if (gg_mutant_is(p, "stride_a_packed"))
        x->sa = p->m * x->lda;
    x->sb = p->stride_b != 0 ? p->stride_b : (kn ? p->k : p->n) * x->ldb;
    x->sc = p->stride_c != 0 ? p->stride_c : p->m * x->ldc;
    x->kn = kn;
    x->b_sq = kn ? 1 : x->ldb;
    x->b_sr = kn ? x->ldb : 1;
    x->k_groups = v->recipe == R_BLOCK128 ? cpu_ceil_div(p->k, GG_BLOCK128) : p->k / GG_MX_BLOCK;
    x->a = (struct cpu_gemm_operand){o->a, p->a_dtype, x->table_a, 0};
    x->b = (struct cpu_gemm_operand){o->b, p->b_dtype, x->table_b, 0};
    x->a_scale_f = v->recipe == R_BLOCK128 ? o->a_scale : NULL;
    x->b_scale_f = v->recipe == R_BLOCK128 ? o->b_scale : NULL;
    x->a_scale_e = v->recipe == R_MX ? o->a_scale : NULL;
    x->b_scale_e = v->recipe >= R_MX_B ? o->b_scale : NULL;
    /* i32_store_offset: C addressed by a 32-bit byte offset (see cpu_gemm_out). */
    x->out = (struct cpu_gemm_out){o->c, p->c_dtype, x->ldc, o->bias, p->bias_dtype,
                                   gg_mutant_is(p, "i32_store_offset")};
    x->n_tail = gg_mutant_is(p, "n_tail");
    cpu_decode_table(p->a_dtype, x->table_a);
    cpu_decode_table(p->b_dtype, x->table_b);
    cpu_decode_table(GG_DTYPE_E8M0, x->table_e8m0);
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
        return family_fail(err, err_len, GG_E_INVAL,
                           "negative size (batch %lld, m %lld, n %lld, k %lld)",
                           (long long)x->batch, (long long)x->m, (long long)x->n, (long long)x->k);
    int64_t rows_b = x->kn ? x->k : x->n, row_b = x->kn ? x->n : x->k;
    if (x->lda < x->k || x->ldb < row_b || x->ldc < x->n || x->sa < mat_span(x->m, x->k, x->lda) ||
        x->sb < mat_span(rows_b, row_b, x->ldb) || x->sc < mat_span(x->m, x->n, x->ldc))
        return family_fail(err, err_len, GG_E_INVAL,
                           "leading dimension or stride too small (lda %lld, ldb %lld, ldc %lld, "
                           "stride_a %lld, stride_b %lld, stride_c %lld)",
                           (long long)x->lda, (long long)x->ldb, (long long)x->ldc,
                           (long long)x->sa, (long long)x->sb, (long long)x->sc);
    int out = x->batch > 0 && x->m > 0 && x->n > 0, red = out && x->k > 0;
    enum recipe r = x->v->recipe;
    enum gg_status st;
    enum gg_dtype bias_dtype = x->out.bias_dtype;
    if ((st = family_check_ptr(o->a, red, dtype_size(x->a.dtype), "a", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->b, red, dtype_size(x->b.dtype), "b", err, err_len)) != GG_OK ||
        (st = family_check_ptr(o->c, out, dtype_size(x->out.c_dtype), "c", err, err_len)) !=
            GG_OK ||
        (st = family_check_ptr(o->a_scale, (r == R_BLOCK128 || r == R_MX) && red,
                               r == R_BLOCK128 ? sizeof(float) : 1, "a_scale", err, err_len)) !=
            GG_OK ||
        (st = family_check_ptr(o->b_scale, r == R_BLOCK128 ? out : r != R_PLAIN && red,
                               r == R_BLOCK128 ? sizeof(float) : 1, "b_scale", err, err_len)) !=
            GG_OK ||
        (st = family_check_ptr(o->bias, out && bias_dtype != GG_DTYPE_NONE, dtype_size(bias_dtype),
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
        return family_fail(err, err_len, GG_E_NOMEM, "no memory for the run context");
    resolve(v, p, o, x);
    enum gg_status st = check_problem(x, o, err, err_len);
    int64_t split = gg_kopt_get(p, "split_k", 1), tiles = tile_count(p);
    size_t ws_need = cpu_splitk_ws(tiles, split, TILE_ELEMS);
    if (st == GG_OK)
        st = family_check_workspace(o, ws_need > 0, ws_need, split, err, err_len);
    float *buf = NULL;
    if (st == GG_OK && tiles > 0) {
        buf = malloc((cpu_gemm_scratch_floats(TILE_K_MAX) + TILE_ELEMS) * sizeof(float));
        if (buf == NULL)
            st = family_fail(err, err_len, GG_E_NOMEM, "no memory for packing buffers");
    }
    if (st == GG_OK && tiles > 0) {
        struct scratch s = {cpu_gemm_scratch_at(buf, TILE_K_MAX, 0), NULL};
        s.part = s.e.acc + TILE_ELEMS;
        const struct cpu_sched_kernel kernel = {x, locate_tile, compute_tile, store_tile};
        struct cpu_sched sched;
        cpu_sched_init(&sched, tiles, split, TILE_ELEMS, TILE_N, o->workspace);
        cpu_sched_run(&sched, &kernel, &s, s.e.acc);
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

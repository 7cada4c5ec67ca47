/*
 * gg_ref_gemm.c — the OpenBLAS reference: each group's operands are decoded exactly into double
 * (codes times their tensor, per-row block or MX scales), a chunk of the reduction at a time, and
 * multiplied by dgemm, or for groups of a few rows by fp64 dot products and axpys over tiles of
 * B that stay in cache; either way the error is at most γ_red(2^-53)·Σ|ab| per output. A bias
 * is added afterwards. Each operand is read in its own memory order (no strided gathers): the dgemm
 * transpose flags absorb the layout, and the moe sorted ids select the rows of X. Inputs that
 * decode to Inf or NaN never reach dgemm: the outputs they touch get their IEEE value (NaN for
 * Inf·0, Inf - Inf or a NaN term, else the infinity) exactly, and a sum of -0 terms is -0, so
 * the result does not depend on what a BLAS makes of special values. Also the single-vector
 * gather that the MPFR exact outputs and the oracles use.
 */
#include <cblas.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/gg_ref.h"

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* The matrix of B (and of the B scales and the bias) that group g uses. */
static int64_t mat_of(const struct gg_problem *p, int64_t g)
{
    return gg_problem_b_mats(p) == 1 ? 0 : g;
}

/* The storage row of vector v (see struct gg_ref_operand). */
static inline int64_t vec_row(const struct gg_ref_operand *d, int64_t v)
{
    return gg_ref_vec_row(d, v);
}

static int64_t blocks128(int64_t n)
{
    return (n + GG_BLOCK128 - 1) / GG_BLOCK128;
}

/* A block scale of vblock vectors by block reduction indices, laid out from at with the
   strides of struct gg_ref_operand. */
static void set_blocks(struct gg_ref_operand *d, enum gg_ref_scale sk, int64_t vblock, int64_t block,
                       int64_t at, int64_t vstride, int64_t rstride)
{
    d->sk = sk;
    d->vblock = vblock;
    d->block = block;
    d->scale_at = at;
    d->vstride = vstride;
    d->rstride = rstride;
}

/* The scales of side which of group g, by recipe (the scale table of gg_kernel.h): A's per-row
   scales count rows across groups and batches; B's follow its matrix; wgrad's rowwise scales
   are per (group, column). Called once operand_of has set the vectors and the reduction. */
static void scale_of(const struct gg_problem *p, const struct gg_operands *o, int which,
                     int64_t g, struct gg_ref_operand *d)
{
    int64_t mat = mat_of(p, g), red_blocks = blocks128(d->red);
    int64_t whole = d->red > 0 ? d->red : 1; /* one block over the whole reduction */
    int wgrad = p->op == GG_OP_GROUPED_WGRAD, dgrad = p->op == GG_OP_GROUPED_DGRAD;
    d->sk = GG_REF_SCALE_NONE;
    d->scale = which ? o->b_scale : o->a_scale;
    switch (p->scaling) {
    case GG_SCALING_TENSOR:
    case GG_SCALING_BLOCK128:
        if (p->scaling == GG_SCALING_TENSOR || which) {
            d->sk = GG_REF_SCALE_TENSOR;
            d->tensor_at = which ? mat : 0;
        } else {
            set_blocks(d, GG_REF_SCALE_F32, 1, GG_BLOCK128, d->scale_row0 * red_blocks,
                       red_blocks, 1);
        }
        break;
    case GG_SCALING_MX:
    case GG_SCALING_MX_B:
        if (which || p->scaling == GG_SCALING_MX) {
            int64_t per_row = d->red / GG_MX_BLOCK;
            int64_t row0 = which ? mat * p->n : d->scale_row0;
            set_blocks(d, GG_REF_SCALE_E8M0, 1, GG_MX_BLOCK, row0 * per_row, per_row, 1);
        }
        break;
    case GG_SCALING_ROWWISE: /* vectors of A are output rows, of B output columns */
        if (!which)
            set_blocks(d, GG_REF_SCALE_F32, 1, whole, wgrad ? g * p->n : d->scale_row0, 1, 0);
        else
            set_blocks(d, GG_REF_SCALE_F32, 1, whole,
                       wgrad ? g * p->k : mat * (dgrad ? p->k : p->n), 1, 0);
        break;
    case GG_SCALING_BLOCKWISE:
        if (!which) {
            set_blocks(d, GG_REF_SCALE_F32, 1, GG_BLOCK128, d->scale_row0 * red_blocks,
                       red_blocks, 1);
        } else { /* [mat][N/128][K/128]; dgrad's vectors are the columns k, its reduction n */
            int64_t kb = blocks128(p->k), at = mat * blocks128(p->n) * kb;
            if (dgrad)
                set_blocks(d, GG_REF_SCALE_F32, GG_BLOCK128, GG_BLOCK128, at, 1, kb);
            else
                set_blocks(d, GG_REF_SCALE_F32, GG_BLOCK128, GG_BLOCK128, at, kb, 1);
        }
        break;
    default:
        break;
    }
}

void gg_ref_operand(const struct gg_problem *p, const struct gg_operands *o, int which,
                    int64_t g, struct gg_ref_operand *d)
{
    int64_t row0 = is_grouped(p->op) ? p->group_offs[g] : 0;
    int64_t len = is_grouped(p->op) ? p->group_lens[g] : 0;
    d->dt = which ? p->b_dtype : p->a_dtype;
    d->base = which ? o->b : o->a;
    d->vec_step = which ? p->ldb : p->lda;
    d->red_step = 1;
    d->red = p->k;
    d->map = NULL;
    d->map_div = 1;
    d->scale_row0 = 0;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        d->off = which ? g * p->stride_b : row0 * p->lda;
        d->nvec = which ? p->n : len;
        d->scale_row0 = row0;
        break;
    case GG_OP_GROUPED_DGRAD:
        d->red = p->n;
        d->off = which ? g * p->stride_b : row0 * p->lda;
        d->nvec = which ? p->k : len;
        d->scale_row0 = row0;
        if (which) { /* column idx of W_g [N,K] */
            d->vec_step = 1;
            d->red_step = p->ldb;
        }
        break;
    case GG_OP_GROUPED_WGRAD: /* column idx of dY_g or X_g, reduced over the group's rows */
        d->red = len;
        d->off = row0 * d->vec_step;
        d->nvec = which ? p->k : p->n;
        d->red_step = d->vec_step;
        d->vec_step = 1;
        break;
    case GG_OP_BATCHED:
        d->off = g * (which ? p->stride_b : p->stride_a);
        d->nvec = which ? p->n : p->m;
        d->scale_row0 = g * p->m;
        if (which && p->b_layout == GG_LAYOUT_KN) {
            d->vec_step = 1;
            d->red_step = p->ldb;
        }
        break;
    case GG_OP_MOE_SORTED: { /* expert g: row r of its block is X[sorted id / topk] */
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        d->off = which ? g * p->stride_b : 0;
        d->nvec = which ? p->n : b.rows;
        if (!which) {
            d->map = b.row_map;
            d->map_div = p->topk;
        }
        break;
    }
    default: /* dense */
        d->off = 0;
        d->nvec = which ? p->n : p->m;
        break;
    }
    scale_of(p, o, which, g, d);
}

/* gg_ref_operand() on host operands, the tensor scale read. */
static void operand_of(const struct gg_problem *p, const struct gg_operands *o, int which,
                       int64_t g, struct gg_ref_operand *d)
{
    gg_ref_operand(p, o, which, g, d);
    d->tensor = d->sk == GG_REF_SCALE_TENSOR ? ((const float *)d->scale)[d->tensor_at] : 1.0;
}

static inline double bf16_value(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/*
 * Stores x0, x1 at out (16-byte aligned). With SSE2 the stores bypass the caches: the decode
 * buffers are read by OpenBLAS threads on the other core, and rewriting cache lines another core
 * holds is slow (in bench_reference streaming cuts the decode overhead over raw dgemm by about
 * a third).
 */
static inline void store2(double *out, double x0, double x1)
{
#if defined(__SSE2__)
    _mm_stream_pd(out, _mm_set_pd(x1, x0));
#else
    out[0] = x0;
    out[1] = x1;
#endif
}

/* Orders streamed stores before the buffers are handed to dgemm's threads. */
static inline void publish(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* Bit 63 is set exactly when x is Inf or NaN: its exponent field plus one carries out of the
   field only when the field is all ones. ORed over many values, it says whether any is. */
static inline uint64_t nonfinite_bit(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7FF0000000000000ull) + (1ull << 52);
}

/* 1 when x is a non-zero value of magnitude below lo, in integers (vectorised like
   nonfinite_bit): with lo_m1 = bits(lo) - 1 (0 for lo = 0, which never holds), |x|'s bits minus
   one lie below lo_m1 exactly when 0 < |x| < lo. */
static inline uint64_t below_bit(double x, uint64_t lo_m1)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7FFFFFFFFFFFFFFFull) - 1u < lo_m1 ? 1u : 0u;
}

static inline uint64_t below_m1(double lo)
{
    uint64_t u;
    memcpy(&u, &lo, sizeof u);
    return lo > 0.0 ? u - 1u : 0u;
}

/*
 * Defines a decoder of one storage type: out[j] = VALUE(q[j*step]), j < n; returns GG_RUN_NONFINITE
 * when a decoded value is Inf or NaN, GG_RUN_SUBNORMAL when one is a non-zero value below lo (the
 * format's smallest normal; 0 for none). Contiguous runs go in blocks of 8, which the compiler
 * vectorises; with stream set and out 16-byte aligned they are stored with store2.
 */
#define DEFINE_DECODER(name, T, VALUE)                                                           \
    GG_HOST_VECTOR static int name(const T *restrict q, int64_t n, int64_t step,                 \
                                   const double *restrict table, double lo, int stream,          \
                                   double *restrict out)                                         \
    {                                                                                            \
        (void)table;                                                                             \
        int64_t j = 0;                                                                           \
        uint64_t nf = 0, sub = 0, lo_m1 = below_m1(lo);                                          \
        stream = stream && ((uintptr_t)out & 15) == 0;                                           \
        if (step == 1)                                                                           \
            for (; j + 8 <= n; j += 8) {                                                         \
                double v[8];                                                                     \
                for (int i = 0; i < 8; i++) {                                                    \
                    v[i] = VALUE(q[j + i]);                                                      \
                    nf |= nonfinite_bit(v[i]);                                                   \
                    sub |= below_bit(v[i], lo_m1);                                               \
                }                                                                                \
                for (int i = 0; i < 8; i += 2) {                                                 \
                    if (stream)                                                                  \
                        store2(out + j + i, v[i], v[i + 1]);                                     \
                    else                                                                         \
                        memcpy(out + j + i, v + i, 2 * sizeof *v);                               \
                }                                                                                \
            }                                                                                    \
        for (; j < n; j++) {                                                                     \
            out[j] = VALUE(q[j * step]);                                                         \
            nf |= nonfinite_bit(out[j]);                                                         \
            sub |= below_bit(out[j], lo_m1);                                                     \
        }                                                                                        \
        return (int)(nf >> 63) * GG_RUN_NONFINITE | (int)sub * GG_RUN_SUBNORMAL;                 \
    }

enum { GG_RUN_NONFINITE = 1, GG_RUN_SUBNORMAL = 2 };

#define BF16_VALUE(x) bf16_value(x)
#define PLAIN_VALUE(x) ((double)(x))
#define TABLE_VALUE(x) table[x]
DEFINE_DECODER(decode_bf16, uint16_t, BF16_VALUE)
DEFINE_DECODER(decode_f32, float, PLAIN_VALUE)
DEFINE_DECODER(decode_f64, double, PLAIN_VALUE)
DEFINE_DECODER(decode_table, uint8_t, TABLE_VALUE)

/*
 * The smallest normal of the formats a tensor core takes (16 bits or fewer); 0 for fp32 and fp64,
 * whose subnormals the reference's own arithmetic handles as a CPU kernel's does.
 */
static double alignment_floor(enum gg_dtype dt)
{
    return gg_dtype_bits(dt) <= 16 ? gg_dtype_min_normal(dt) : 0.0;
}

/*
 * Alignment magnitudes (mag set): |x|, raised to lo for a non-zero x below it. A tensor core
 * aligns the products of one MMA by their factors' exponents and truncates what falls below its
 * window; a subnormal factor enters with the format's minimum exponent and an unnormalised
 * significand, so its product moves that window up to 2^(p-1) above the product's own magnitude
 * (p the format's precision). Bounding the truncation by the product of the raised factors keeps
 * the bound's |A||B| term true for such sums (docs/checks.md §3.2).
 */
static void raise_subnormals(double *out, int64_t n, double lo)
{
    for (int64_t j = 0; j < n; j++) {
        double x = fabs(out[j]);
        out[j] = x < lo && x != 0.0 ? lo : x;
    }
}

/* out[j] = exact value of code off + j*step of base, j < n (its alignment magnitude with mag):
   one table lookup per 8-bit code, bit operations for bf16, fp32 and fp64, gg_load for the other
   formats. stream: see DEFINE_DECODER (for buffers that dgemm reads next, not rescaled in
   place). Returns GG_RUN_NONFINITE and GG_RUN_SUBNORMAL as DEFINE_DECODER does. */
static int decode_run(enum gg_dtype dt, const void *base, int64_t off, int64_t n, int64_t step,
                      int stream, int mag, double *restrict out)
{
    const double *table = gg_dtype_bits(dt) == 8 ? gg_decode_table(dt) : NULL;
    double lo = alignment_floor(dt);
    int flags;
    if (table)
        flags = decode_table((const uint8_t *)base + off, n, step, table, lo, stream, out);
    else if (dt == GG_DTYPE_BF16)
        flags = decode_bf16((const uint16_t *)base + off, n, step, NULL, lo, stream, out);
    else if (dt == GG_DTYPE_F32)
        flags = decode_f32((const float *)base + off, n, step, NULL, lo, stream, out);
    else if (dt == GG_DTYPE_F64)
        flags = decode_f64((const double *)base + off, n, step, NULL, lo, stream, out);
    else {
        uint64_t nf = 0;
        int sub = 0;
        for (int64_t j = 0; j < n; j++) {
            out[j] = gg_load(dt, base, off + j * step);
            nf |= nonfinite_bit(out[j]);
            sub |= fabs(out[j]) < lo && out[j] != 0.0;
        }
        flags = (int)(nf >> 63) * GG_RUN_NONFINITE | sub * GG_RUN_SUBNORMAL;
    }
    if (mag) {
        publish();
        raise_subnormals(out, n, lo);
    }
    return flags;
}

/* pow2[c] = 2^(c-127), the E8M0 value of c; code 0xFF is NaN. Exact in double. */
static void e8m0_values(double pow2[256])
{
    for (int c = 0; c < 255; c++)
        pow2[c] = ldexp(1.0, c - 127);
    pow2[255] = NAN;
}

/* Block scale i of d as a double: an E8M0 power of two or an fp32 value. */
static inline double scale_value(const struct gg_ref_operand *d, int64_t i, const double pow2[256])
{
    return d->sk == GG_REF_SCALE_E8M0 ? pow2[((const uint8_t *)d->scale)[i]]
                                     : (double)((const float *)d->scale)[i];
}

/*
 * Multiplies out[j] = element t0 + j of vector v of d (j < n) by its block scale (a code of at
 * most 24 significant bits times a float or a power of two is exact in double). Returns 1 when
 * a scale is Inf or NaN (the E8M0 NaN code 0xFF).
 */
static int apply_blocks(const struct gg_ref_operand *d, int64_t v, int64_t t0, int64_t n,
                        const double pow2[256], double *out)
{
    int64_t at = d->scale_at + vec_row(d, v) / d->vblock * d->vstride;
    uint64_t nf = 0;
    for (int64_t j0 = 0; j0 < n;) {
        int64_t blk = (t0 + j0) / d->block;
        int64_t end = (blk + 1) * d->block - t0;
        double x = scale_value(d, at + blk * d->rstride, pow2);
        nf |= nonfinite_bit(x);
        if (end > n)
            end = n;
        for (int64_t j = j0; j < end; j++)
            out[j] *= x;
        j0 = end;
    }
    return (int)(nf >> 63);
}

/* Multiplies out[v - v0] = element t of vector v of a reduction-major d (v0 <= v < v1, no row
   map) by its block scale, one run of vblock vectors at a time; returns 1 when a scale is Inf or
   NaN. */
static int apply_across(const struct gg_ref_operand *d, int64_t t, int64_t v0, int64_t v1,
                        const double pow2[256], double *out)
{
    int64_t at = d->scale_at + t / d->block * d->rstride;
    uint64_t nf = 0;
    for (int64_t v = v0; v < v1;) {
        int64_t vb = v / d->vblock, end = (vb + 1) * d->vblock;
        double x = scale_value(d, at + vb * d->vstride, pow2);
        nf |= nonfinite_bit(x);
        if (end > v1)
            end = v1;
        for (int64_t u = v; u < end; u++)
            out[u - v0] *= x;
        v = end;
    }
    return (int)(nf >> 63);
}

/* Multiplies n decoded values by the operand's tensor scale (exact, as above); returns 1 when
   the scale is Inf or NaN. */
static int apply_tensor(const struct gg_ref_operand *d, int64_t n, double *out)
{
    double s = d->tensor;
    for (int64_t j = 0; j < n; j++)
        out[j] *= s;
    return !isfinite(s);
}

/* Vector idx of d (its storage row vec_row(d, idx)); returns the flags of decode_run, with
   GG_RUN_NONFINITE also for an Inf or NaN scale. */
static int gather_vector(const struct gg_ref_operand *d, int64_t idx, double *out)
{
    int flags = decode_run(d->dt, d->base, d->off + vec_row(d, idx) * d->vec_step, d->red,
                           d->red_step, 0, 0, out);
    if (d->sk == GG_REF_SCALE_TENSOR) {
        flags |= apply_tensor(d, d->red, out) * GG_RUN_NONFINITE;
    } else if (d->sk != GG_REF_SCALE_NONE) {
        double pow2[256];
        e8m0_values(pow2);
        flags |= apply_blocks(d, idx, 0, d->red, pow2, out) * GG_RUN_NONFINITE;
    }
    return flags;
}

void gg_ref_gather(const struct gg_problem *p, const struct gg_operands *o, int which, int64_t g,
                   int64_t idx, double *out)
{
    struct gg_ref_operand d;
    operand_of(p, o, which, g, &d);
    gather_vector(&d, idx, out);
}

void gg_ref_gather_operand(const struct gg_ref_operand *d, int64_t v, double *out)
{
    struct gg_ref_operand e = *d;
    e.map = NULL;
    gather_vector(&e, v, out);
}

/* Asks for the n codes from element off of d to be brought into cache. */
static void prefetch_run(const struct gg_ref_operand *d, int64_t off, int64_t n)
{
    int bits = gg_dtype_bits(d->dt);
    const char *q = (const char *)d->base + off * bits / 8;
    for (int64_t i = 0; i < n * bits / 8; i += 64)
        __builtin_prefetch(q + i);
}

/* Vectors prefetched ahead of the one being decoded: a vector-major chunk reads short runs one
   page apart, where the hardware prefetcher restarts on every run. */
#define PREFETCH_AHEAD 4

/* One gather_chunk, split over threads: rows [lo, hi) of buf (vectors when vector-major,
   reduction indices when reduction-major), the flags ORed over the ranges. */
struct chunk_job {
    const struct gg_ref_operand *d;
    int64_t t0, len;
    const double *pow2;
    int mag;
    double *buf;
    atomic_int flags;
};

/*
 * Decodes vectors [v0, v1) × reduction indices t0 + [j0, j1) of d into buf, each row of buf one
 * contiguous run of codes: vector-major buf[(v - v0)·(j1 - j0) + j - j0], reduction-major
 * buf[(j - j0)·(v1 - v0) + v - v0]. Block and tensor scales are applied; mag and stream as for
 * decode_run. Returns decode_run's flags, with GG_RUN_NONFINITE also for an Inf or NaN scale.
 */
static int decode_block(const struct gg_ref_operand *d, int64_t t0, int64_t j0, int64_t j1,
                        int64_t v0, int64_t v1, const double pow2[256], int mag, int stream,
                        double *buf)
{
    int blocks = d->sk == GG_REF_SCALE_F32 || d->sk == GG_REF_SCALE_E8M0, flags = 0;
    int64_t len = j1 - j0, w = v1 - v0;
    if (d->red_step != 1) {
        for (int64_t j = j0; j < j1; j++) {
            double *out = buf + (j - j0) * w;
            flags |= decode_run(d->dt, d->base, d->off + (t0 + j) * d->red_step + v0, w, 1,
                                stream, mag, out);
            if (blocks)
                flags |= apply_across(d, t0 + j, v0, v1, pow2, out) * GG_RUN_NONFINITE;
        }
    } else {
        for (int64_t v = v0; v < v1; v++) {
            if (v + PREFETCH_AHEAD < v1)
                prefetch_run(d, d->off + vec_row(d, v + PREFETCH_AHEAD) * d->vec_step + t0 + j0,
                             len);
            double *out = buf + (v - v0) * len;
            flags |= decode_run(d->dt, d->base, d->off + vec_row(d, v) * d->vec_step + t0 + j0,
                                len, 1, stream, mag, out);
            if (blocks)
                flags |= apply_blocks(d, v, t0 + j0, len, pow2, out) * GG_RUN_NONFINITE;
        }
    }
    if (d->sk == GG_REF_SCALE_TENSOR)
        flags |= apply_tensor(d, len * w, buf) * GG_RUN_NONFINITE;
    return flags;
}

static void chunk_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct chunk_job *c = ctx;
    const struct gg_ref_operand *d = c->d;
    int stream = d->sk == GG_REF_SCALE_NONE, flags;
    if (d->red_step != 1)
        flags = decode_block(d, c->t0, lo, hi, 0, d->nvec, c->pow2, c->mag, stream,
                             c->buf + lo * d->nvec);
    else
        flags = decode_block(d, c->t0, 0, c->len, lo, hi, c->pow2, c->mag, stream,
                             c->buf + lo * c->len);
    publish(); /* this thread's streamed stores, before the join hands buf on */
    atomic_fetch_or(&c->flags, flags);
}

/* Values decoded per thread at least: below this a thread costs more than it saves. */
#define DECODE_MIN_VALUES ((int64_t)1 << 15)

/*
 * Decodes reduction indices t0 .. t0+len-1 of every vector of d into buf, in the operand's memory
 * order: vector-major gives buf[v*len + j] ([nvec × len]), reduction-major gives
 * buf[j*nvec + v] ([len × nvec]). Every row of buf is one contiguous run of codes. With mag, the
 * codes' alignment magnitudes (raise_subnormals) instead of their values. Returns
 * GG_RUN_NONFINITE when a value of buf is Inf or NaN (a code, a scale or their product) and
 * GG_RUN_SUBNORMAL when a code is subnormal in its format. Split over the reference's threads
 * (each writes its own rows of buf), so buf is the same whatever their number.
 */
static int gather_chunk(const struct gg_ref_operand *d, int64_t t0, int64_t len, const double pow2[256],
                        int mag, double *buf)
{
    struct chunk_job c = {.d = d, .t0 = t0, .len = len, .pow2 = pow2, .mag = mag, .buf = buf};
    atomic_init(&c.flags, 0);
    int64_t rows = d->red_step != 1 ? len : d->nvec, row_len = d->red_step != 1 ? d->nvec : len;
    gg_par_for(rows, DECODE_MIN_VALUES / (row_len > 0 ? row_len : 1) + 1, chunk_range, &c);
    return atomic_load(&c.flags);
}

/*
 * Non-finite terms. Every decoded code and scale lies below 2^128 in magnitude (f64 inputs
 * aside), so the finite terms of an output never overflow binary64 and its exact value is
 * decided by the products
 * with an Inf or NaN factor alone: NaN when one of them is NaN (a NaN factor, Inf·0) or when
 * both infinities occur, else the infinity that occurs. The classes of those products are ORed
 * into one byte per output of the group, and the factors are then replaced by zeros, so that
 * dgemm (whatever a BLAS does with Inf and NaN) sums the finite terms only: the finite part of
 * each output and of its Σ|ab|, which the oracles use to tell an accumulator overflow.
 */
enum { NF_NONE = 0, NF_POS = 1, NF_NEG = 2, NF_NAN = 3 };

static inline uint8_t nf_class(double p)
{
    return isnan(p) ? NF_NAN : p > 0 ? NF_POS : NF_NEG;
}

static double nf_value(uint8_t state)
{
    return state == NF_POS ? INFINITY : state == NF_NEG ? -INFINITY : NAN;
}

/* Position of element (v, j) of a chunk of len reduction indices of d (see gather_chunk). */
static inline int64_t chunk_at(const struct gg_ref_operand *d, int64_t v, int64_t j, int64_t len)
{
    return d->red_step != 1 ? j * d->nvec + v : v * len + j;
}

/* For every non-finite x of one side's chunk buffer (vectors of side x, partners of the other
   side y), ORs the classes of its products into state (row-major over the output, x's vectors
   along rows when x_rows). */
static void class_nonfinite(const struct gg_ref_operand *dx, const double *x, const struct gg_ref_operand *dy,
                            const double *y, int64_t len, int x_rows, uint8_t *state)
{
    int64_t cols = x_rows ? dy->nvec : dx->nvec;
    for (int64_t v = 0; v < dx->nvec; v++)
        for (int64_t j = 0; j < len; j++) {
            double xv = x[chunk_at(dx, v, j, len)];
            if (isfinite(xv))
                continue;
            for (int64_t w = 0; w < dy->nvec; w++)
                state[x_rows ? v * cols + w : w * cols + v] |=
                    nf_class(xv * y[chunk_at(dy, w, j, len)]);
        }
}

static void zero_nonfinite(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            x[i] = 0.0;
}

/* 1 when n > 0 and every product a[t]·b[t] is -0: the IEEE sum is then -0, where dgemm, which
   accumulates from +0, gives +0. */
static int all_negative_zero(const double *a, const double *b, int64_t n)
{
    for (int64_t t = 0; t < n; t++) {
        double p = a[t] * b[t];
        if (p != 0.0 || !signbit(p))
            return 0;
    }
    return n > 0;
}

/*
 * Gives the zero outputs of group g (c, abs: its packed block) whose terms are all -0 the sign
 * IEEE addition gives them. Candidates have c = 0 and, with abs, Σ|ab| = 0; each is checked on
 * its gathered vectors (a row's gathered once), stopping at the first term that is not -0.
 */
static enum gg_status negative_zeros(const struct gg_problem *p, const struct gg_operands *o,
                                     int64_t g, int64_t rows, int64_t cols, int64_t red, double *c,
                                     const double *abs, char *err, size_t err_len)
{
    double *va = NULL, *vb = NULL;
    int64_t have_row = -1;
    for (int64_t i = 0; i < rows * cols; i++) {
        if (c[i] != 0.0 || (abs && abs[i] != 0.0))
            continue;
        if (!va) {
            va = malloc((size_t)gg_size_mul(red, sizeof(double)));
            vb = malloc((size_t)gg_size_mul(red, sizeof(double)));
            if (!va || !vb) {
                free(va);
                free(vb);
                snprintf(err, err_len, "reference: cannot allocate 2 x %lld doubles",
                         (long long)red);
                return GG_E_NOMEM;
            }
        }
        if (i / cols != have_row) {
            have_row = i / cols;
            gg_ref_gather(p, o, 0, g, have_row, va);
        }
        gg_ref_gather(p, o, 1, g, i % cols, vb);
        if (all_negative_zero(va, vb, red))
            c[i] = -0.0;
    }
    free(va);
    free(vb);
    return GG_OK;
}

/* x[j] = |x[j]|, j < n (streamed like the decode). */
static void abs_inplace(double *x, int64_t n)
{
    int64_t j = 0;
    if (((uintptr_t)x & 15) != 0 && n > 0) {
        x[0] = fabs(x[0]);
        j = 1;
    }
    for (; j + 2 <= n; j += 2)
        store2(x + j, fabs(x[j]), fabs(x[j + 1]));
    if (j < n)
        x[j] = fabs(x[j]);
}

/* out [rows × cols] (=, or += when accumulate) A·Bᵀ over a chunk of len reduction indices, with a
   and b each in their operand's memory order (see gather_chunk). */
static void product(int64_t rows, int64_t cols, int64_t len, const double *a, int a_red_major,
                    const double *b, int b_red_major, int accumulate, double *out)
{
    cblas_dgemm(CblasRowMajor, a_red_major ? CblasTrans : CblasNoTrans,
                b_red_major ? CblasNoTrans : CblasTrans, (blasint)rows, (blasint)cols,
                (blasint)len, 1.0, a, (blasint)(a_red_major ? rows : len), b,
                (blasint)(b_red_major ? cols : len), accumulate ? 1.0 : 0.0, out, (blasint)cols);
}

/*
 * Reduction indices decoded per dgemm call. Each chunk's operands stay in cache, and the buffers
 * do not grow with the reduction length. Accumulating the chunks into C is one more summation
 * order, so the γ_red bound is unchanged. A multiple of the MX block and of BLOCK128, so a
 * chunk never splits a block scale.
 */
#define CHUNK GG_REF_CHUNK

/*
 * Groups of at most SMALL_ROWS rows (decode, small M). dgemm would stream every decoded chunk of
 * B through memory three times (decode, pack, |B| and pack again) for a few flops per element.
 * Instead each thread takes tiles of B's columns and, a part of the reduction at a time, decodes
 * its tile into a buffer that stays in its cache and accumulates the outputs and their Σ|ab|
 * from it (|a·b| = |a|·|b| exactly). A tile reads B in runs of contiguous codes: SMALL_TILE
 * vectors × GG_REF_CHUNK indices of a vector-major B, SMALL_PANEL vectors × SMALL_STEPS indices
 * of a reduction-major one. Each output is summed by one thread in an order fixed by the tile
 * boundaries, so the result does not depend on the thread count; any order stays within the
 * γ_red bound. Groups with an Inf, NaN or subnormal input go the dgemm way, which handles them.
 */
#define SMALL_ROWS 8
#define SMALL_TILE 64
#define SMALL_PANEL 512
#define SMALL_STEPS 128 /* a multiple of the MX block and of GG_BLOCK128 */

/* Eight doubles as one value (GCC and Clang vector extensions): each operation is the
   element-wise IEEE one, which the compiler maps to the clone's vector unit. Macros rather than
   functions: a vector argument or result would have a different ABI in each clone. */
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
#define V8_ABS(x) ((v8d)((v8u)(x) & 0x7FFFFFFFFFFFFFFFull))
/* The sum of the eight elements, in a fixed order. */
#define V8_SUM(x) ((((x)[0] + (x)[1]) + ((x)[2] + (x)[3])) + (((x)[4] + (x)[5]) + ((x)[6] + (x)[7])))

/* s[r] += Σ_j a[r·lda + j]·b[j] and sa[r] += Σ_j |a·b| over j < n, r < rows (a vector-major
   tile: one dot product per row and vector): sixteen partial sums per output and a tail sum,
   joined in a fixed order. */
GG_HOST_VECTOR static void small_dots(const double *a, int64_t lda, int64_t rows, const double *b,
                                      int64_t n, double *s, double *sa)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *x = a + r * lda;
        v8d p0 = {0}, p1 = {0}, q0 = {0}, q1 = {0}, x0, x1, b0, b1;
        double pt = 0.0, qt = 0.0;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            memcpy(&x0, x + j, sizeof x0);
            memcpy(&x1, x + j + 8, sizeof x1);
            memcpy(&b0, b + j, sizeof b0);
            memcpy(&b1, b + j + 8, sizeof b1);
            v8d t0 = x0 * b0, t1 = x1 * b1;
            p0 += t0;
            p1 += t1;
            q0 += V8_ABS(t0);
            q1 += V8_ABS(t1);
        }
        for (; j < n; j++) {
            double t = x[j] * b[j];
            pt += t;
            qt += fabs(t);
        }
        v8d p = p0 + p1, q = q0 + q1;
        s[r] += V8_SUM(p) + pt;
        sa[r] += V8_SUM(q) + qt;
    }
}

/* acc[r·lds + v] += a[r·lda + j]·b[j·ldb + v] and accabs likewise += |a·b|, for r < rows, j < len,
   v < w, in order of j (a reduction-major tile: one axpy per row and index). SMALL_TILE columns
   keep a row's sums in vector registers (16 of 8 doubles) while it runs over the indices. */
GG_HOST_VECTOR static void small_axpys(const double *a, int64_t lda, int64_t rows, const double *b,
                                       int64_t ldb, int64_t len, int64_t w, double *acc,
                                       double *accabs, int64_t lds)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *x = a + r * lda;
        double *out = acc + r * lds, *outabs = accabs + r * lds;
        int64_t v0 = 0;
        for (; v0 + SMALL_TILE <= w; v0 += SMALL_TILE) {
            v8d s[SMALL_TILE / 8], sa[SMALL_TILE / 8];
            memcpy(s, out + v0, sizeof s);
            memcpy(sa, outabs + v0, sizeof sa);
            for (int64_t j = 0; j < len; j++)
                for (int u = 0; u < SMALL_TILE / 8; u++) {
                    v8d y;
                    memcpy(&y, b + j * ldb + v0 + 8 * u, sizeof y);
                    v8d t = x[j] * y;
                    s[u] += t;
                    sa[u] += V8_ABS(t);
                }
            memcpy(out + v0, s, sizeof s);
            memcpy(outabs + v0, sa, sizeof sa);
        }
        for (int64_t j = 0; j < len && v0 < w; j++)
            for (int64_t v = v0; v < w; v++) {
                double t = x[j] * b[j * ldb + v];
                out[v] += t;
                outabs[v] += fabs(t);
            }
    }
}

/* The tile shape for B's memory order: vectors per tile and reduction indices per step. */
static void small_shape(const struct gg_ref_operand *db, int64_t *vecs, int64_t *steps)
{
    int rm = db->red_step != 1;
    *vecs = rm ? SMALL_PANEL : SMALL_TILE;
    *steps = rm ? SMALL_STEPS : CHUNK;
}

struct small_job {
    const struct gg_ref_operand *db;
    const double *a; /* the group's rows × red values of A, row-major */
    int64_t rows, cols, red;
    const double *pow2;
    double *c, *abs; /* the group's blocks */
    atomic_int flags;
};

static void small_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct small_job *k = ctx;
    const struct gg_ref_operand *db = k->db;
    int64_t rows = k->rows, red = k->red, tv, tj;
    small_shape(db, &tv, &tj);
    int64_t len0 = red < tj ? red : tj;
    double *buf = malloc((size_t)(tv * len0 + 2 * rows * tv) * sizeof *buf);
    if (!buf) {
        atomic_fetch_or(&k->flags, GG_RUN_NONFINITE); /* not done: the dgemm way */
        return;
    }
    double *acc = buf + tv * len0, *accabs = acc + rows * tv;
    int flags = 0;
    for (int64_t tile = lo; tile < hi && !flags; tile++) {
        int64_t v0 = tile * tv, v1 = v0 + tv < k->cols ? v0 + tv : k->cols, w = v1 - v0;
        memset(acc, 0, (size_t)(2 * rows * tv) * sizeof *acc);
        for (int64_t t0 = 0; t0 < red && !flags; t0 += tj) {
            int64_t len = red - t0 < tj ? red - t0 : tj;
            flags |= decode_block(db, t0, 0, len, v0, v1, k->pow2, 0, 0, buf);
            if (db->red_step != 1) {
                small_axpys(k->a + t0, red, rows, buf, w, len, w, acc, accabs, tv);
                continue;
            }
            for (int64_t v = 0; v < w; v++) { /* buf[v·len + j] */
                double s[SMALL_ROWS] = {0}, sa[SMALL_ROWS] = {0};
                small_dots(k->a + t0, red, rows, buf + v * len, len, s, sa);
                for (int64_t r = 0; r < rows; r++) {
                    acc[r * tv + v] += s[r];
                    accabs[r * tv + v] += sa[r];
                }
            }
        }
        for (int64_t r = 0; r < rows && !flags; r++) {
            memcpy(k->c + r * k->cols + v0, acc + r * tv, (size_t)w * sizeof(double));
            if (k->abs)
                memcpy(k->abs + r * k->cols + v0, accabs + r * tv, (size_t)w * sizeof(double));
        }
    }
    free(buf);
    atomic_fetch_or(&k->flags, flags);
}

int64_t gg_ref_gemm_scratch(int64_t rows, int64_t cols, int64_t red, int threads)
{
    int64_t len = red < CHUNK ? red : CHUNK;
    int64_t bytes = gg_size_mul(8, gg_size_mul(gg_size_add(rows, cols), len));
    if (rows > SMALL_ROWS)
        return bytes;
    /* A's values, and per thread the larger tile of the two shapes with its sums */
    int64_t tiles = (cols + SMALL_TILE - 1) / SMALL_TILE;
    int64_t busy = threads < tiles ? threads : tiles;
    int64_t tile = SMALL_TILE * CHUNK > SMALL_PANEL * SMALL_STEPS ? SMALL_TILE * CHUNK
                                                                  : SMALL_PANEL * SMALL_STEPS;
    tile += 2 * SMALL_ROWS * SMALL_PANEL;
    return gg_size_add(bytes, gg_size_mul(8, gg_size_add(gg_size_mul(rows, red),
                                                         gg_size_mul(busy, tile))));
}

/* The product of a group of rows <= SMALL_ROWS rows into c and abs (its blocks); returns 0, with
   c and abs partly written, when an input is Inf, NaN or (with abs) subnormal, or when a buffer
   cannot be had: the dgemm way then computes the group. */
static int small_group(const struct gg_ref_operand *da, const struct gg_ref_operand *db,
                       int64_t rows, int64_t cols, int64_t red, const double pow2[256], double *c,
                       double *abs)
{
    double *a = malloc((size_t)gg_size_mul(gg_size_mul(rows, red), sizeof *a));
    if (!a)
        return 0;
    int bad = GG_RUN_NONFINITE | (abs ? GG_RUN_SUBNORMAL : 0), flags = 0;
    for (int64_t r = 0; r < rows; r++)
        flags |= gather_vector(da, r, a + r * red);
    struct small_job k = {.db = db, .a = a, .rows = rows, .cols = cols, .red = red,
                          .pow2 = pow2, .c = c, .abs = abs};
    atomic_init(&k.flags, 0);
    int64_t tv, tj;
    small_shape(db, &tv, &tj);
    if (!(flags & bad))
        gg_par_for((cols + tv - 1) / tv, 1, small_range, &k);
    free(a);
    return !((flags | atomic_load(&k.flags)) & bad);
}

/* Checks what the reference itself relies on: the pointers the recipe and the bias need, each
   recipe only on the ops gg_kernel.h defines it for, MX blocks dividing K, a moe topk to
   divide by. */
static enum gg_status check_operands(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    /* Scale arrays may be absent only when they would be empty (K = 0 under a block recipe). */
    if ((gg_problem_a_scale_count(p) > 0 && !o->a_scale) ||
        (gg_problem_b_scale_count(p) > 0 && !o->b_scale)) {
        snprintf(err, err_len, "reference: scaled problem without a_scale/b_scale");
        return GG_E_INVAL;
    }
    if (gg_problem_bias_count(p) > 0 && !o->bias) {
        snprintf(err, err_len, "reference: bias_dtype %s without a bias",
                 gg_dtype_name(p->bias_dtype));
        return GG_E_INVAL;
    }
    int mx = p->scaling == GG_SCALING_MX || p->scaling == GG_SCALING_MX_B;
    if (!gg_scaling_op_ok(p->scaling, p->op, p->b_layout) || (mx && p->k % GG_MX_BLOCK)) {
        snprintf(err, err_len, "reference: scaling %d is not defined for op %d (or K %% %d != 0 "
                 "for MX)", (int)p->scaling, (int)p->op, GG_MX_BLOCK);
        return GG_E_INVAL;
    }
    if (p->op == GG_OP_MOE_SORTED && p->topk < 1) {
        snprintf(err, err_len, "reference: moe sorted with topk %lld", (long long)p->topk);
        return GG_E_INVAL;
    }
    return GG_OK;
}

/* c[r·cols + col] += bias[mat(g)·N + col] for the block's rows (exact decode, one rounding in
   double, covered by γ_{red+1}), and abs gets |bias| so that the bound covers the term too.
   row is scratch for cols doubles. */
static void add_bias(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                     int64_t rows, int64_t cols, double *row, double *c, double *abs)
{
    decode_run(p->bias_dtype, o->bias, mat_of(p, g) * p->n, cols, 1, 0, 0, row);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t col = 0; col < cols; col++) {
            c[r * cols + col] += row[col];
            if (abs)
                abs[r * cols + col] += fabs(row[col]);
        }
}

enum gg_status gg_ref_gemm(const struct gg_problem *p, const struct gg_operands *o, double *c,
                           double *abs, char *err, size_t err_len)
{
    enum gg_status st = check_operands(p, o, err, err_len);
    if (st != GG_OK)
        return st;
    /* Buffer sizes: the most vectors of any group times the chunk length. */
    int64_t max_rows = 0, max_cols = 0, max_len = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_ref_operand da, db;
        operand_of(p, o, 0, g, &da);
        operand_of(p, o, 1, g, &db);
        if (da.nvec > INT_MAX || db.nvec > INT_MAX) {
            snprintf(err, err_len, "reference: group %lld has a dimension above %d (BLAS int)",
                     (long long)g, INT_MAX);
            return GG_E_NOMEM;
        }
        if (da.nvec * db.nvec * da.red == 0)
            continue;
        int64_t len = da.red < CHUNK ? da.red : CHUNK;
        if (da.nvec > max_rows) max_rows = da.nvec;
        if (db.nvec > max_cols) max_cols = db.nvec;
        if (len > max_len) max_len = len;
    }
    int has_bias = p->bias_dtype != GG_DTYPE_NONE;
    int64_t a_len = gg_size_mul(max_rows, max_len), b_len = gg_size_mul(max_cols, max_len);
    double *a_buf = malloc((size_t)gg_size_mul(gg_size_add(a_len, 1), sizeof(double)));
    double *b_buf = malloc((size_t)gg_size_mul(gg_size_add(b_len, 1), sizeof(double)));
    double *bias_row = has_bias ? malloc((size_t)gg_size_mul(p->n + 1, sizeof(double))) : NULL;
    if (!a_buf || !b_buf || (has_bias && !bias_row)) {
        free(a_buf);
        free(b_buf);
        free(bias_row);
        snprintf(err, err_len, "reference: cannot allocate %lld + %lld doubles",
                 (long long)a_len, (long long)b_len);
        return GG_E_NOMEM;
    }
    double pow2[256];
    e8m0_values(pow2);
    int64_t pos = 0; /* packed offset of the current group's block */
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_ref_operand da, db;
        operand_of(p, o, 0, g, &da);
        operand_of(p, o, 1, g, &db);
        int64_t rows = da.nvec, cols = db.nvec, red = da.red, count = rows * cols;
        if (count == 0)
            continue;
        if (red == 0) {
            memset(c + pos, 0, (size_t)count * sizeof(double));
            if (abs)
                memset(abs + pos, 0, (size_t)count * sizeof(double));
        }
        int a_rm = da.red_step != 1, b_rm = db.red_step != 1;
        uint8_t *state = NULL; /* non-finite classes, allocated at the first Inf or NaN */
        int done = rows <= SMALL_ROWS && red > 0 &&
                   small_group(&da, &db, rows, cols, red, pow2, c + pos, abs ? abs + pos : NULL);
        for (int64_t t0 = 0; !done && t0 < red && st == GG_OK; t0 += CHUNK) {
            int64_t len = red - t0 < CHUNK ? red - t0 : CHUNK;
            int flags = gather_chunk(&da, t0, len, pow2, 0, a_buf);
            flags |= gather_chunk(&db, t0, len, pow2, 0, b_buf);
            int nf = flags & GG_RUN_NONFINITE;
            if (nf && !state && !(state = calloc((size_t)count, 1))) {
                snprintf(err, err_len, "reference: cannot allocate %lld bytes", (long long)count);
                st = GG_E_NOMEM;
                break;
            }
            if (nf) { /* classes first: a product of two non-finite factors needs both */
                class_nonfinite(&da, a_buf, &db, b_buf, len, 1, state);
                class_nonfinite(&db, b_buf, &da, a_buf, len, 0, state);
                zero_nonfinite(a_buf, rows * len);
                zero_nonfinite(b_buf, cols * len);
            }
            publish();
            product(rows, cols, len, a_buf, a_rm, b_buf, b_rm, t0 > 0, c + pos);
            if (abs) {
                if (flags & GG_RUN_SUBNORMAL) { /* Σ|ab| over alignment magnitudes */
                    gather_chunk(&da, t0, len, pow2, 1, a_buf);
                    gather_chunk(&db, t0, len, pow2, 1, b_buf);
                    if (nf) {
                        zero_nonfinite(a_buf, rows * len);
                        zero_nonfinite(b_buf, cols * len);
                    }
                }
                abs_inplace(a_buf, rows * len);
                abs_inplace(b_buf, cols * len);
                publish();
                product(rows, cols, len, a_buf, a_rm, b_buf, b_rm, t0 > 0, abs + pos);
            }
        }
        for (int64_t i = 0; state && i < count; i++)
            if (state[i] != NF_NONE)
                c[pos + i] = nf_value(state[i]);
        free(state);
        if (st == GG_OK && red > 0)
            st = negative_zeros(p, o, g, rows, cols, red, c + pos, abs ? abs + pos : NULL, err,
                                err_len);
        if (st != GG_OK)
            break;
        if (has_bias)
            add_bias(p, o, g, rows, cols, bias_row, c + pos, abs ? abs + pos : NULL);
        pos += count;
    }
    free(a_buf);
    free(b_buf);
    free(bias_row);
    return st;
}


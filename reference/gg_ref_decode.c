/*
 * gg_ref_decode.c — the reference's exact decoding: codes of every format into double (one table
 * lookup per 8-bit code, bit operations for bf16, fp32 and fp64), times their tensor, block or
 * MX scales (every product exact in double), a vector at a time for the gathers the MPFR exact
 * outputs and the oracles use, or a chunk of the reduction at a time in the operand's own memory
 * order for the host GEMM, split over the reference's threads. Decoding also tells whether a
 * value is Inf or NaN and whether a code is subnormal, which the GEMM handles apart.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_int.h"

/* The storage row of vector v (see struct gg_ref_operand). */
static inline int64_t vec_row(const struct gg_ref_operand *d, int64_t v)
{
    return gg_ref_vec_row(d, v);
}

static inline double bf16_value(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
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
 * vectorises; with stream set and out 16-byte aligned they are stored with ref_store2.
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
                        ref_store2(out + j + i, v[i], v[i + 1]);                                 \
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
int ref_decode_run(enum gg_dtype dt, const void *base, int64_t off, int64_t n, int64_t step,
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
        ref_publish();
        raise_subnormals(out, n, lo);
    }
    return flags;
}

/* pow2[c] = 2^(c-127), the E8M0 value of c; code 0xFF is NaN. Exact in double. */
void ref_e8m0_values(double pow2[256])
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

/* Vector idx of d (its storage row vec_row(d, idx)); returns the flags of ref_decode_run, with
   GG_RUN_NONFINITE also for an Inf or NaN scale. */
int ref_gather_vector(const struct gg_ref_operand *d, int64_t idx, double *out)
{
    int flags = ref_decode_run(d->dt, d->base, d->off + vec_row(d, idx) * d->vec_step, d->red,
                           d->red_step, 0, 0, out);
    if (d->sk == GG_REF_SCALE_TENSOR) {
        flags |= apply_tensor(d, d->red, out) * GG_RUN_NONFINITE;
    } else if (d->sk != GG_REF_SCALE_NONE) {
        double pow2[256];
        ref_e8m0_values(pow2);
        flags |= apply_blocks(d, idx, 0, d->red, pow2, out) * GG_RUN_NONFINITE;
    }
    return flags;
}

void gg_ref_gather(const struct gg_problem *p, const struct gg_operands *o, int which, int64_t g,
                   int64_t idx, double *out)
{
    struct gg_ref_operand d;
    ref_operand_of(p, o, which, g, &d);
    ref_gather_vector(&d, idx, out);
}

void gg_ref_gather_operand(const struct gg_ref_operand *d, int64_t v, double *out)
{
    struct gg_ref_operand e = *d;
    e.map = NULL;
    ref_gather_vector(&e, v, out);
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

/* One ref_gather_chunk, split over threads: rows [lo, hi) of buf (vectors when vector-major,
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
 * ref_decode_run. Returns ref_decode_run's flags, with GG_RUN_NONFINITE also for an Inf or NaN
 * scale.
 */
int ref_decode_block(const struct gg_ref_operand *d, int64_t t0, int64_t j0, int64_t j1,
                     int64_t v0, int64_t v1, const double pow2[256], int mag, int stream,
                     double *buf)
{
    int blocks = d->sk == GG_REF_SCALE_F32 || d->sk == GG_REF_SCALE_E8M0, flags = 0;
    int64_t len = j1 - j0, w = v1 - v0;
    if (d->red_step != 1) {
        for (int64_t j = j0; j < j1; j++) {
            double *out = buf + (j - j0) * w;
            flags |= ref_decode_run(d->dt, d->base, d->off + (t0 + j) * d->red_step + v0, w, 1,
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
            flags |= ref_decode_run(d->dt, d->base, d->off + vec_row(d, v) * d->vec_step + t0 + j0,
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
        flags = ref_decode_block(d, c->t0, lo, hi, 0, d->nvec, c->pow2, c->mag, stream,
                             c->buf + lo * d->nvec);
    else
        flags = ref_decode_block(d, c->t0, 0, c->len, lo, hi, c->pow2, c->mag, stream,
                             c->buf + lo * c->len);
    ref_publish(); /* this thread's streamed stores, before the join hands buf on */
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
int ref_gather_chunk(const struct gg_ref_operand *d, int64_t t0, int64_t len,
                     const double pow2[256], int mag, double *buf)
{
    struct chunk_job c = {.d = d, .t0 = t0, .len = len, .pow2 = pow2, .mag = mag, .buf = buf};
    atomic_init(&c.flags, 0);
    int64_t rows = d->red_step != 1 ? len : d->nvec, row_len = d->red_step != 1 ? d->nvec : len;
    gg_par_for(rows, DECODE_MIN_VALUES / (row_len > 0 ? row_len : 1) + 1, chunk_range, &c);
    return atomic_load(&c.flags);
}

/*
 * cpu_gemm_tile.c — the tile engine of the CPU kernels: operands (bf16, fp8 and E2M1 codes)
 * decoded into fp32 panels, the register-blocked fp32 micro-kernel that sums their products in a
 * fixed order, and the epilogue that scales, adds the bias in fp32 and rounds once to bf16 or
 * stores f32, writing only the logical elements of a tile.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_gemm_int.h"

#define TILE_N CPU_GEMM_TILE_N
#define MICRO_M CPU_GEMM_MICRO_M
#define MICRO_N CPU_GEMM_MICRO_N

_Static_assert(CPU_GEMM_TILE_M % MICRO_M == 0 && TILE_N % MICRO_N == 0,
               "micro-tiles must cover a tile");

/* ---- scratch ---------------------------------------------------------------------------- */

size_t cpu_gemm_scratch_floats(int64_t tile_k)
{
    return (size_t)((CPU_GEMM_TILE_M + TILE_N) * tile_k + CPU_GEMM_TILE_ELEMS);
}

struct cpu_gemm_scratch cpu_gemm_scratch_at(float *buf, int64_t tile_k, int64_t i)
{
    float *ap = buf + (size_t)i * cpu_gemm_scratch_floats(tile_k);
    float *bp = ap + CPU_GEMM_TILE_M * tile_k;
    return (struct cpu_gemm_scratch){{ap, bp}, bp + tile_k * TILE_N};
}

/* ---- packing ---------------------------------------------------------------------------- */

/* out[i·ostride] = value of element e0 + i·step of op, for i < count; one switch per run. */
__attribute__((always_inline)) static inline void decode_run(const struct cpu_gemm_operand *op,
                                                             int64_t e0, int64_t step,
                                                             int64_t count, float *restrict out,
                                                             int64_t ostride)
{
    if (op->wrap32) {
        const uint8_t *s = op->base;
        for (int64_t i = 0; i < count; i++)
            out[i * ostride] = op->table[s[(uint32_t)(e0 + i * step)]];
        return;
    }
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
 * Decodes count x kc elements of op, element (q, r) at off + q·s_q + r·s_r, into fp32 panels of
 * `width` values of q: panel p holds q = p·width .. p·width + width - 1 at
 * dst[p·width·kc + r·width + q mod width]. Only q < valid is loaded; the rest of each panel is
 * zero, so the micro-kernel always runs on whole panels. Inlined with a constant width (MICRO_M
 * or MICRO_N), which the addressing of its loops needs to be as cheap as the micro-kernel's.
 */
__attribute__((always_inline)) static inline void pack_panels(float *restrict dst,
                                                              const struct cpu_gemm_operand *op,
                                                              int64_t off, int64_t s_q,
                                                              int64_t s_r, int64_t count,
                                                              int64_t valid, int64_t kc,
                                                              int64_t width)
{
    for (int64_t q0 = 0; q0 < count; q0 += width) {
        int64_t wv = cpu_max64(cpu_min64(width, valid - q0), 0);
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

/* Loads row `row` of A's step into a throw-away row (read_past_end). */
static void overread_row(const struct cpu_gemm_src *src, int64_t rk, int64_t kc, int64_t row)
{
    float sink[64];
    for (int64_t r0 = 0; r0 < kc; r0 += 64) {
        int64_t n = cpu_min64(64, kc - r0);
        decode_run(src->a, src->a_off + row * src->a_si + (rk + r0) * src->a_sr, src->a_sr, n,
                   sink, 1);
        __asm__ volatile("" : : "r"(sink) : "memory"); /* the loads happen */
    }
}

void cpu_gemm_pack_step(const struct cpu_gemm_src *src, int64_t rk, int64_t kc,
                        const struct cpu_gemm_panels *pn)
{
    if (src->a_overread)
        overread_row(src, rk, kc, src->rows);
    pack_panels(pn->ap, src->a, src->a_off + rk * src->a_sr, src->a_si, src->a_sr, src->rows,
                src->rows, kc, MICRO_M);
    pack_panels(pn->bp, src->b, src->b_off + rk * src->b_sr, src->b_sj, src->b_sr, src->cols,
                src->b_valid, kc, MICRO_N);
}

/* ---- compute ---------------------------------------------------------------------------- */

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

void cpu_gemm_multiply(const struct cpu_gemm_panels *pn, int64_t rows, int64_t cols, int64_t kc,
                       int64_t r0, int64_t len, float *acc)
{
    for (int64_t i = 0; i < rows; i += MICRO_M)
        for (int64_t j = 0; j < cols; j += MICRO_N)
            micro_kernel(len, pn->ap + i * kc + r0 * MICRO_M, pn->bp + j * kc + r0 * MICRO_N,
                         acc + i * TILE_N + j);
}

void cpu_gemm_accumulate(const struct cpu_gemm_src *src, int64_t r0, int64_t r1, int64_t tile_k,
                         const struct cpu_gemm_panels *pn, float *acc)
{
    for (int64_t rk = r0; rk < r1; rk += tile_k) {
        int64_t kc = cpu_min64(tile_k, r1 - rk);
        cpu_gemm_pack_step(src, rk, kc, pn);
        cpu_gemm_multiply(pn, src->rows, src->cols, kc, 0, kc, acc);
    }
}

void cpu_gemm_clear(float *acc, int64_t rows)
{
    int64_t panel_rows = cpu_ceil_div(rows, MICRO_M) * MICRO_M;
    memset(acc, 0, (size_t)(panel_rows * TILE_N) * sizeof(float));
}

/* ---- epilogue --------------------------------------------------------------------------- */

/* One row of acc with a bias finished in place: times the scale (when there is one), then plus
   the bias row, each one fp32 operation per element. */
static void add_bias_row(const struct cpu_gemm_out *out, const struct cpu_gemm_dst *d, float *ai)
{
    if (d->scale != NULL) {
        float s = *d->scale;
        for (int64_t j = 0; j < d->cols; j++)
            ai[j] *= s;
    }
    if (out->bias_dtype == GG_DTYPE_BF16) {
        const uint16_t *bias = (const uint16_t *)out->bias + d->bias0;
        for (int64_t j = 0; j < d->cols; j++)
            ai[j] += cpu_bf16_to_f32(bias[j]);
    } else {
        const float *bias = (const float *)out->bias + d->bias0;
        for (int64_t j = 0; j < d->cols; j++)
            ai[j] += bias[j];
    }
}

/* Element at of C after its byte offset went through 32 bits (wrap32). */
static int64_t wrapped(const struct cpu_gemm_out *out, int64_t at)
{
    int64_t size = out->c_dtype == GG_DTYPE_BF16 ? 2 : 4;
    return (int64_t)(uint32_t)((uint64_t)at * (uint64_t)size) / size;
}

/* C[at + j] = RN(ai[j] · scale), or RN(ai[j]) when scale is NULL, for j < cols. */
static void write_row(const struct cpu_gemm_out *out, int64_t at, const float *ai, int64_t cols,
                      const float *scale)
{
    if (out->wrap32) { /* element by element: a row may cross a multiple of 2^32 bytes */
        for (int64_t j = 0; j < cols; j++) {
            float v = scale != NULL ? ai[j] * *scale : ai[j];
            if (out->c_dtype == GG_DTYPE_BF16)
                ((uint16_t *)out->c)[wrapped(out, at + j)] = cpu_f32_to_bf16(v);
            else
                ((float *)out->c)[wrapped(out, at + j)] = v;
        }
        return;
    }
    if (out->c_dtype == GG_DTYPE_BF16) {
        uint16_t *cp = (uint16_t *)out->c + at;
        if (scale != NULL) {
            float s = *scale;
            for (int64_t j = 0; j < cols; j++)
                cp[j] = cpu_f32_to_bf16(ai[j] * s);
        } else {
            for (int64_t j = 0; j < cols; j++)
                cp[j] = cpu_f32_to_bf16(ai[j]);
        }
    } else {
        float *cp = (float *)out->c + at;
        if (scale != NULL) {
            float s = *scale;
            for (int64_t j = 0; j < cols; j++)
                cp[j] = ai[j] * s;
        } else {
            memcpy(cp, ai, (size_t)cols * sizeof(float));
        }
    }
}

void cpu_gemm_store(const struct cpu_gemm_out *out, const struct cpu_gemm_dst *d, float *acc,
                    int64_t acc_ld)
{
    int biased = out->bias_dtype == GG_DTYPE_BF16 || out->bias_dtype == GG_DTYPE_F32;
    for (int64_t i = 0; i < d->rows; i++) {
        float *ai = acc + i * acc_ld;
        int64_t at = d->c_off + (d->c_rows != NULL ? d->c_rows[i] : i) * out->ldc;
        if (biased)
            add_bias_row(out, d, ai);
        write_row(out, at, ai, d->cols, biased ? NULL : d->scale);
    }
}

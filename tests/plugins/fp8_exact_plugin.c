/*
 * fp8_exact_plugin.c — a test plugin kernel, grouped_fp8_plugin_exact: grouped fwd on 8-bit float
 * inputs (OCP E4M3 / E5M2 and their fnuz variants, mixed freely), unscaled or tensor-scaled, with
 * a bf16 or fp32 output. Every code is decoded exactly, every product is exact in binary64 and
 * the sums are binary64 (off by at most γ_K(2^-53)·Σ|ab|), then scaled and rounded once to fp32
 * (and to bf16 from there). It is as accurate as a kernel can be, so any finding on it is the
 * harness's. Its mutant drop_mantissa decodes each code with its last significand bit cleared:
 * a kernel that really loses accuracy. Built like an outside team's plugin: gg_kernel.h and the
 * C library only.
 */
#include <math.h> /* NAN and INFINITY only: the plugin links no libm */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gg_kernel.h"

#define KERNEL_NAME "grouped_fp8_plugin_exact"

/* 2^e as a binary64, for the exponents of 8-bit formats and their products (|e| < 1000). */
static double pow2(int e)
{
    uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

struct fp8_format {
    int man_bits, bias;
    int fnuz; /* 0x80 is the only NaN, no -0, no Inf */
    int inf;  /* the top exponent holds Inf and NaN (E5M2) */
};

static int fp8_format(enum gg_dtype t, struct fp8_format *f)
{
    switch (t) {
    case GG_DTYPE_E4M3: *f = (struct fp8_format){3, 7, 0, 0}; return 1;
    case GG_DTYPE_E5M2: *f = (struct fp8_format){2, 15, 0, 1}; return 1;
    case GG_DTYPE_E4M3FNUZ: *f = (struct fp8_format){3, 8, 1, 0}; return 1;
    case GG_DTYPE_E5M2FNUZ: *f = (struct fp8_format){2, 16, 1, 0}; return 1;
    default: return 0;
    }
}

/*
 * The value of code c: (-1)^s · 2^(e - bias) · 1.m, or 2^(1 - bias) · 0.m when e = 0. NaN codes:
 * fnuz 0x80; E4M3 S.1111.111; E5M2 an all-ones exponent with m != 0 (m = 0: ±Inf). drop clears
 * the last significand bit first (the mutant).
 */
static double fp8_decode(const struct fp8_format *f, uint8_t c, int drop)
{
    int exp_bits = 7 - f->man_bits, top = (1 << exp_bits) - 1;
    int s = c >> 7, e = (c >> f->man_bits) & top, m = c & ((1 << f->man_bits) - 1);
    if (f->fnuz && c == 0x80)
        return (double)NAN;
    if (!f->fnuz && f->inf && e == top)
        return m ? (double)NAN : s ? -(double)INFINITY : (double)INFINITY;
    if (!f->fnuz && !f->inf && e == top && m == (1 << f->man_bits) - 1)
        return (double)NAN;
    if (drop)
        m &= ~1;
    double v = e ? (double)((1 << f->man_bits) + m) * pow2(e - f->bias - f->man_bits)
                 : (double)m * pow2(1 - f->bias - f->man_bits);
    return s ? -v : v;
}

/* bf16 from fp32 by round-to-nearest-even on the dropped 16 bits (NaN kept quiet). */
static uint16_t bf16_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)(u >> 16 | 0x40u)
                                           : (uint16_t)((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

/* Why p is not this kernel's, or NULL. */
static const char *refusal(const struct gg_problem *p)
{
    struct fp8_format f;
    if (p->op != GG_OP_GROUPED_FWD)
        return "grouped fwd only";
    if (!fp8_format(p->a_dtype, &f) || !fp8_format(p->b_dtype, &f))
        return "8-bit float inputs only (e4m3, e5m2 and their fnuz variants)";
    if (p->c_dtype != GG_DTYPE_BF16 && p->c_dtype != GG_DTYPE_F32)
        return "bf16 or f32 output only";
    if (p->scaling != GG_SCALING_NONE && p->scaling != GG_SCALING_TENSOR)
        return "unscaled or tensor-scaled inputs only";
    return p->bias_dtype != GG_DTYPE_NONE ? "no bias" : NULL;
}

static int exact_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    const char *no = refusal(p);
    if (no != NULL)
        snprintf(why, why_len, KERNEL_NAME ": %s", no);
    return no == NULL;
}

/* Y_g = X_g · W_gᵀ, times a_scale[0] · b_scale[g] under tensor scaling. */
static enum gg_status exact_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    if (!exact_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct fp8_format fa, fb;
    fp8_format(p->a_dtype, &fa);
    fp8_format(p->b_dtype, &fb);
    int drop = gg_mutant_is(p, "drop_mantissa");
    double va[256], vb[256]; /* the value of every code */
    for (int c = 0; c < 256; c++) {
        va[c] = fp8_decode(&fa, (uint8_t)c, drop);
        vb[c] = fp8_decode(&fb, (uint8_t)c, drop);
    }
    const uint8_t *a = o->a, *b = o->b;
    const float *sa = o->a_scale, *sb = o->b_scale;
    for (int64_t g = 0; g < p->groups; g++) {
        double scale = p->scaling == GG_SCALING_TENSOR ? (double)sa[0] * (double)sb[g] : 1.0;
        for (int64_t m = p->group_offs[g]; m < p->group_offs[g + 1]; m++)
            for (int64_t n = 0; n < p->n; n++) {
                double acc = 0.0;
                for (int64_t k = 0; k < p->k; k++)
                    acc += va[a[m * p->lda + k]] * vb[b[g * p->stride_b + n * p->ldb + k]];
                float y = (float)(acc * scale);
                if (p->c_dtype == GG_DTYPE_BF16)
                    ((uint16_t *)o->c)[m * p->ldc + n] = bf16_of(y);
                else
                    ((float *)o->c)[m * p->ldc + n] = y;
            }
    }
    return GG_OK;
}

static const char *const exact_mutants[] = {"drop_mantissa", NULL};

static const struct gg_kernel exact_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = KERNEL_NAME,
    .summary = "test plugin: grouped fwd on fp8 inputs, exact decode, fp64 sums, one rounding",
    .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
    .mutants = exact_mutants,
    .supports = exact_supports,
    .run = exact_run,
};

const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;

enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len)
{
    return host->add_kernel(host->ctx, &exact_kernel, err, err_len);
}

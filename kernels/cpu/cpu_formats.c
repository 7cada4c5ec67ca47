/*
 * cpu_formats.c — the number formats as the CPU kernels see them, written independently of
 * reference/ (a kernel never includes the harness): 8-bit and 4-bit codes decoded to fp32 the way
 * hardware converts them, and E8M0 scales as powers of two (the bf16 conversions are inline in
 * cpu_int.h). Decoding goes through a 256-entry table each kernel builds once per run in its run
 * state.
 */
#include <math.h>

#include "kernels/cpu/cpu_int.h"

/* Field layout of a small float format: exponent bits, mantissa bits, bias, and how the top
   codes are used. */
struct fmt {
    int ebits, mbits, bias;
    int fnuz;     /* 0x80 is the only NaN, no -0, no Inf */
    int ieee_top; /* all-ones exponent is Inf/NaN (E5M2) */
    int e4m3_nan; /* S.1111.111 is NaN (OCP E4M3) */
};

static int fmt_of(enum gg_dtype t, struct fmt *f)
{
    switch (t) {
    case GG_DTYPE_E4M3: *f = (struct fmt){4, 3, 7, 0, 0, 1}; return 1;
    case GG_DTYPE_E5M2: *f = (struct fmt){5, 2, 15, 0, 1, 0}; return 1;
    case GG_DTYPE_E4M3FNUZ: *f = (struct fmt){4, 3, 8, 1, 0, 0}; return 1;
    case GG_DTYPE_E5M2FNUZ: *f = (struct fmt){5, 2, 16, 1, 0, 0}; return 1;
    case GG_DTYPE_E2M1: *f = (struct fmt){2, 1, 1, 0, 0, 0}; return 1;
    default: return 0;
    }
}

float cpu_decode_small(enum gg_dtype t, uint32_t code)
{
    struct fmt f;
    if (t == GG_DTYPE_E8M0)
        return code == 0xFFu ? NAN : ldexpf(1.0f, (int)code - 127);
    if (!fmt_of(t, &f))
        return NAN;
    int bits = 1 + f.ebits + f.mbits;
    code &= (1u << bits) - 1u;
    uint32_t sign = code >> (bits - 1), e = (code >> f.mbits) & ((1u << f.ebits) - 1u);
    uint32_t m = code & ((1u << f.mbits) - 1u), emax = (1u << f.ebits) - 1u;
    if (f.fnuz && code == 1u << (bits - 1))
        return NAN;
    if (f.ieee_top && e == emax)
        return m ? NAN : (sign ? -INFINITY : INFINITY);
    if (f.e4m3_nan && e == emax && m == (1u << f.mbits) - 1u)
        return NAN;
    float v = e == 0 ? ldexpf((float)m, 1 - f.bias - f.mbits)
                     : ldexpf((float)((1u << f.mbits) | m), (int)e - f.bias - f.mbits);
    return sign ? -v : v;
}

void cpu_decode_table(enum gg_dtype t, float table[256])
{
    for (uint32_t c = 0; c < 256; c++)
        table[c] = cpu_decode_small(t, c);
}

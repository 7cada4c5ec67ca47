/*
 * cpu_int.h — internal helpers shared by the CPU kernels of ggfuzz: exact bf16 <-> fp32
 * conversion (decode is a shift, encode is round-to-nearest-even with NaN kept quiet), error
 * messages, and the descriptors of the in-tree CPU kernels. Included only from kernels/.
 */
#ifndef GG_CPU_INT_H
#define GG_CPU_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/gg_kernel.h"

/* bf16 is the upper half of binary32: the decode is exact for every code (subnormals, ±Inf, NaN). */
static inline float cpu_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/*
 * binary32 -> bf16 rounded to nearest, ties to even. Adding 0x7FFF plus the lowest kept bit
 * carries into bit 16 exactly when the dropped half is above one half ulp, or equal to it with
 * an odd kept part; a carry out of the mantissa bumps the exponent (and the largest finite values
 * round to Inf, as RNE requires). NaN is handled first so the carry cannot turn it into Inf: its
 * payload's top bits are kept and the quiet bit is set.
 */
static inline uint16_t cpu_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* Writes a formatted message into err (when err_len > 0) and returns status. */
__attribute__((format(printf, 4, 5))) static inline enum gg_status
cpu_fail(char *err, size_t err_len, enum gg_status status, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* Same for the why buffer of supports(): writes the reason and returns 0 (not supported). */
__attribute__((format(printf, 3, 4))) static inline int cpu_refuse(char *why, size_t why_len,
                                                                  const char *fmt, ...)
{
    if (why != NULL && why_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* In-tree CPU kernel descriptors (listed by gg_kernels_builtin()). */
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_tiled;

#endif /* GG_CPU_INT_H */

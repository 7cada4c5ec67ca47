/*
 * cpu_kernels.h — the CPU kernels of kernels/cpu: their descriptors, which the builtin table
 * lists and the tests name, and the exact fp32 decoders of the small formats the kernels share
 * (cpu_formats.c), which the tests check against the reference. Their internals are cpu_int.h
 * and cpu_gemm_int.h.
 */
#ifndef GG_CPU_KERNELS_H
#define GG_CPU_KERNELS_H

#include <stdint.h>

#include "kernels/gg_kernel.h"

/* The descriptors (listed by gg_kernels_builtin()). */
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_tiled;
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_serial;
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_streams;
extern const struct gg_kernel gg_kernel_grouped_fp8_cpu_persistent;
extern const struct gg_kernel gg_kernel_grouped_fp8_cpu_tiled;
extern const struct gg_kernel gg_kernel_grouped_fp8_cpu_fine;
extern const struct gg_kernel gg_kernel_batched_bf16_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_a8w8_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_a16wfp4_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_afp4wfp4_cpu_tiled;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_grouped;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_gemv;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_tiled;
extern const struct gg_kernel gg_kernel_moe_mx_e4m3_cpu_sorted;

/* Value of an 8-bit code (E4M3, E5M2, their fnuz forms, E8M0) or a 4-bit E2M1 code as the
   hardware converts it to fp32; NaN for NaN codes, ±Inf for E5M2 infinities. */
float cpu_decode_small(enum gg_dtype t, uint32_t code);
/* table[c] = cpu_decode_small(t, c) for every byte c (E2M1: the low nibble). */
void cpu_decode_table(enum gg_dtype t, float table[256]);

/* Code i of an E2M1 tensor stored two per byte, element 2j in the low nibble of byte j. */
static inline uint32_t cpu_e2m1_code(const uint8_t *base, int64_t i)
{
    return (base[i >> 1] >> ((i & 1) * 4)) & 0xFu;
}

#endif /* GG_CPU_KERNELS_H */

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

/* ---- MX-FP8 engine (mx_cpu.c), shared by the kernels of mx_cpu.c and moe_mx_cpu.c --------- */

/* Output tile and K step (a multiple of the MX block) of the tiled MX paths. */
#define CPU_MX_TILE_M 32
#define CPU_MX_TILE_N 64
#define CPU_MX_TILE_K 128

/*
 * A resolved MX problem: X [rows, K] (row r at a + r·lda, scales a_scale[r][K/32]) times
 * W_matᵀ (W [mats, N, K], row n of matrix w at b + w·stride_b + n·ldb, scales
 * b_scale[w][n][K/32]) into Y rows of ldc; payload decode tables, E8M0 exponents, and the
 * scratch of one tile. Built by cpu_mx_engine_init, released by cpu_mx_engine_free.
 */
struct cpu_mx_engine {
    const struct gg_problem *p;
    const struct gg_operands *o;
    int64_t mats, lda, ldb, ldc, stride_b; /* packed defaults resolved */
    int64_t blocks;     /* K / 32: the row length of every scale array */
    int64_t blocks_run; /* blocks the K loop covers */
    float dec_a[256], dec_b[256];
    int32_t exp_of[256]; /* E8M0 code -> exponent x - 127, special codes marked */
    float *ap, *bp, *acc; /* packed panels; tile accumulator, row stride CPU_MX_TILE_N */
    int32_t *ea, *eb;     /* packed scale exponents */
};

/* The checks every MX kernel shares: op, MX scaling, e4m3/e5m2 payloads, bf16/f32 output, f32
   accumulation, bf16/f32/no bias, K a multiple of 32, and a mutant from the NULL-terminated
   list mutants. Returns 1, or 0 with a reason. */
int cpu_mx_supports(const struct gg_problem *p, enum gg_op op, const char *const *mutants,
                    char *why, size_t why_len);
/* Resolves and checks p for a_rows rows of X and c_rows rows of Y, builds the tables and
   allocates the scratch. */
enum gg_status cpu_mx_engine_init(struct cpu_mx_engine *e, const struct gg_problem *p,
                                  const struct gg_operands *o, int64_t a_rows, int64_t c_rows,
                                  char *err, size_t err_len);
void cpu_mx_engine_free(struct cpu_mx_engine *e);
/* e->acc[i][j] = Σ over blocks kb0..kb1-1 of X row a_rows[i] · W_mat row j0 + j, for
   i < rows ≤ CPU_MX_TILE_M and j < cols ≤ CPU_MX_TILE_N. */
void cpu_mx_tile(struct cpu_mx_engine *e, int64_t mat, const int64_t *a_rows, int64_t rows,
                 int64_t j0, int64_t cols, int64_t kb0, int64_t kb1);
/* Epilogue: Y[c_rows[i]][j0 + j] = round(acc[i·acc_ld + j] + bias[mat][j0 + j]); acc may be
   overwritten. */
void cpu_mx_store(const struct cpu_mx_engine *e, float *acc, int64_t acc_ld,
                  const int64_t *c_rows, int64_t rows, int64_t j0, int64_t cols, int64_t mat);

/* In-tree CPU kernel descriptors (listed by gg_kernels_builtin()). */
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_tiled;
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_serial;
extern const struct gg_kernel gg_kernel_grouped_bf16_cpu_streams;
extern const struct gg_kernel gg_kernel_grouped_fp8_cpu_persistent;
extern const struct gg_kernel gg_kernel_grouped_fp8_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_bf16_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_a8w8_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_a16wfp4_cpu_tiled;
extern const struct gg_kernel gg_kernel_batched_afp4wfp4_cpu_tiled;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_grouped;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_gemv;
extern const struct gg_kernel gg_kernel_mx_e4m3_cpu_tiled;
extern const struct gg_kernel gg_kernel_moe_mx_e4m3_cpu_sorted;

#endif /* GG_CPU_INT_H */

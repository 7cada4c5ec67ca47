/*
 * cpu_int.h — internal helpers shared by the CPU kernels of ggfuzz: exact bf16 <-> fp32
 * conversion (decode is a shift, encode is round-to-nearest-even with NaN kept quiet) and the
 * MX-FP8 engine; with them come the families' rules and messages (kernels/family/family.h) and
 * the descriptors and small-format decoders of kernels/cpu (cpu_kernels.h). Included only from
 * kernels/cpu/.
 */
#ifndef GG_CPU_INT_H
#define GG_CPU_INT_H

#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/family/family.h"

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

#endif /* GG_CPU_INT_H */

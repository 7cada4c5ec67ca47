/*
 * family.h — the rules a kernel family keeps on every backend, shared by the CPU kernels
 * (kernels/cpu) and the GPU kernels (kernels/gpu) so that twins accept exactly the same
 * problems: what each family supports (ops, dtypes, scaling, options, mutant names), the
 * addressing of the grouped ops (which block of C a group owns, where its operands start, with
 * the 32-bit offset arithmetic of two real bugs), the checks of a problem and its operand block
 * that every run() makes, and the messages they write. Tile sizes, workspace layouts and
 * engines stay with each backend. C and C++ compatible; includes only gg_kernel.h.
 */
#ifndef GG_FAMILY_H
#define GG_FAMILY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/gg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- messages ----------------------------------------------------------------------------- */

/* Writes a formatted message into err (when err_len > 0) and returns status. */
__attribute__((format(printf, 4, 5))) static inline enum gg_status
family_fail(char *err, size_t err_len, enum gg_status status, const char *fmt, ...)
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
__attribute__((format(printf, 3, 4))) static inline int family_refuse(char *why, size_t why_len,
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

/* ---- the parts of supports() every family makes (family_checks.c) ------------------------- */

/* Accepted values of the option "split_k" of every kernel with split-K. */
#define FAMILY_SPLIT_K_MAX 64

/* 1 when p asks for no mutant or for a list of mutants of the NULL-terminated list (each once),
   else 0 with a reason. */
int family_supports_mutant(const struct gg_problem *p, const char *const *mutants, char *why,
                           size_t why_len);
/* 1 when option key (dflt when absent) lies in lo .. hi, else 0 with a reason. */
int family_supports_option(const struct gg_problem *p, const char *key, int64_t dflt, int64_t lo,
                           int64_t hi, char *why, size_t why_len);
/* 1 without the option split_k (or split_k 1), else 0: `what` (e.g. "the GEMV path") has none. */
int family_supports_no_split(const struct gg_problem *p, const char *what, char *why,
                             size_t why_len);
/* 1 for the grouped fwd, dgrad and wgrad ops, else 0 with a reason. */
int family_supports_grouped_op(const struct gg_problem *p, char *why, size_t why_len);
/* 1 for a bf16 or f32 output and an f32 accumulator, else 0 with a reason. */
int family_supports_output(const struct gg_problem *p, char *why, size_t why_len);

/* ---- the checks of run() (family_checks.c) ------------------------------------------------ */

/* A pointer must be non-NULL when its operand is read or written (needed), and aligned to
   align bytes. */
enum gg_status family_check_ptr(const void *ptr, int needed, size_t align, const char *name,
                                char *err, size_t err_len);
/* The device group offsets: offs[0] = 0, never decreasing, offs[groups] = m. */
enum gg_status family_check_offsets(const int64_t *offs, int64_t groups, int64_t m, char *err,
                                    size_t err_len);
/* When needed, o's workspace must hold `bytes` and be aligned for floats. */
enum gg_status family_check_workspace(const struct gg_operands *o, int needed, size_t bytes,
                                      int64_t split, char *err, size_t err_len);

/* ---- grouped addressing (family_grouped_map.c) -------------------------------------------- */

/*
 * Every grouped op is C_g[i][j] = Σ_r A_g(i, r) · B_g(r, j) over one block of C, with
 *   A_g(i, r) = a[a_off + i·a_si + r·a_sr],  B_g(r, j) = b[b_off + r·b_sr + j·b_sj],
 *   C_g[i][j] = c[c_off + i·ldc + j]:
 *   fwd    rows M_g, cols N, reduction K     a_si = lda, a_sr = 1     b_sr = 1,   b_sj = ldb
 *   dgrad  rows M_g, cols K, reduction N     a_si = lda, a_sr = 1     b_sr = ldb, b_sj = 1
 *   wgrad  rows N,   cols K, reduction M_g   a_si = 1,   a_sr = lda   b_sr = ldb, b_sj = 1
 * The two flags re-create 32-bit offset arithmetic; the family whose mutant it is sets them.
 */
struct family_grouped_map {
    enum gg_op op;
    int64_t groups, m, n, k;
    int64_t lda, ldb, ldc, stride_b, stride_c; /* defaults resolved */
    int64_t a_si, a_sr, b_sr, b_sj;
    const int64_t *offs; /* groups + 1 row offsets */
    int64_t split;       /* split_k option */
    int i32_row_offset;  /* offs[g]·ld of C (wgrad: of dY) computed as an int32 product */
    int i32_group_base;  /* g·stride_b of the weights computed as an int32 product */
};

/* The block of C that group g owns, where its operands start, and its reduction length.
   row0 is the group's first output row for fwd/dgrad (0 for wgrad). */
struct family_grouped_block {
    int64_t g;
    int64_t a_off, b_off, c_off;
    int64_t row0, rows, cols, red;
};

int family_is_grouped_op(enum gg_op op);

/* The map of p over the group offsets offs (packed defaults in every zero leading dimension),
   both int32 flags off. */
void family_grouped_map_init(const struct gg_problem *p, const int64_t *offs,
                             struct family_grouped_map *m);

struct family_grouped_block family_grouped_block_of(const struct family_grouped_map *m,
                                                    int64_t g);

/* For workspace_bytes(): the map of p over its host group offsets when p is a grouped problem
   with a valid split_k > 1 (returns 1), else 0 (no workspace). */
int family_grouped_ws_map(const struct gg_problem *p, struct family_grouped_map *m);

/* Which operands a grouped problem reads or writes (a NULL pointer is an error only for those). */
struct family_grouped_use {
    int a, b, c;
};
struct family_grouped_use family_grouped_uses(const struct family_grouped_map *m);

/* No negative size. */
enum gg_status family_grouped_check_sizes(const struct family_grouped_map *m, char *err,
                                          size_t err_len);
/* Leading dimensions hold a row, strides are not negative. */
enum gg_status family_grouped_check_strides(const struct family_grouped_map *m, char *err,
                                            size_t err_len);

/* ---- grouped BF16 (grouped_bf16_family.c) ------------------------------------------------- */

/* Mutants every BF16 grouped kernel offers (they live in the machinery all of them share). */
#define FAMILY_BF16_MUTANTS_SHARED                                                             \
    "wgrad_zero_uninit", "workspace_underreport", "missing_fence", "tail_rows_unwritten",      \
        "i32_cumulative_offset"

/* supports() of every BF16 grouped kernel: ops, dtypes, scaling, the options split_k and
   lens_from, and each item of p->mutant against the kernel's NULL-terminated list. */
int family_bf16_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                         size_t why_len);

/* The streams kernels' options: "streams" (1 .. FAMILY_STREAMS_MAX concurrent streams) and
   "threshold" (the token count up to which a group counts as small). */
#define FAMILY_STREAMS_MAX 16
#define FAMILY_STREAMS_DEFAULT 2
#define FAMILY_THRESHOLD_DEFAULT 128

/* family_bf16_supports() plus the streams kernels' options (CPU threads or GPU streams alike). */
int family_bf16_streams_supports(const struct gg_problem *p, const char *const *mutants,
                                 char *why, size_t why_len);

/* ---- grouped FP8, tensor-wise or finely scaled (grouped_fp8_family.c) ---------------------- */

/* Grouped fwd/dgrad/wgrad on OCP (e4m3, e5m2) or fnuz (e4m3fnuz, e5m2fnuz) pairs, not mixed and
   not e5m2 x e5m2, with tensor scales, bf16/f32 out, no bias, B as [N,K], split_k, mutants. */
int family_fp8_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                        size_t why_len);
/* The same pairs, outputs and layout with rowwise scales (fwd, dgrad, wgrad) or blockwise
   scales (fwd, dgrad) of gg_kernel.h, without split-K. */
int family_fp8_fine_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                             size_t why_len);

/* ---- batched (batched_family.c) ----------------------------------------------------------- */

/* What a batched kernel accepts: its scaling recipe, the input dtypes (alt: or this), and
   whether B may be [K,N]; MX recipes need K a multiple of the MX block. label names the kernel
   in reasons. */
struct family_batched {
    const char *label;
    enum gg_scaling scaling;
    enum gg_dtype a_dtype, a_alt, b_dtype, b_alt;
    int kn_ok;
};

/* bf16; a8w8 (e4m3 or e4m3fnuz, block128 scales); a16wfp4 (bf16 x e2m1, mx_b); afp4wfp4
   (e2m1 x e2m1, mx). */
extern const struct family_batched family_batched_bf16, family_batched_a8w8,
    family_batched_a16wfp4, family_batched_afp4wfp4;

/* supports() of the batched kernels of rule r: op, scaling, dtypes, bf16/f32 output, f32
   accumulator, B's layout, MX K, e2m1 rows starting on a byte, bf16/f32/no bias, split_k,
   mutants. */
int family_batched_supports(const struct family_batched *r, const struct gg_problem *p,
                            const char *const *mutants, char *why, size_t why_len);

/* ---- MX-FP8 (mx_family.c) ----------------------------------------------------------------- */

/* Every MX kernel takes MX scaling, e4m3/e5m2 payloads, bf16/f32 output, f32 accumulation,
   bf16/f32/no bias and K a multiple of 32; each variant adds its op and the rules below. */

/* mx_e4m3 grouped: grouped fwd, split_k. */
int family_mx_grouped_supports(const struct gg_problem *p, const char *const *mutants,
                               char *why, size_t why_len);
/* Rows of the GEMV variant: M at most this. */
#define FAMILY_MX_GEMV_MAX_M 16

/* mx_e4m3 gemv: dense, M in 0 .. FAMILY_MX_GEMV_MAX_M, no split-K. */
int family_mx_gemv_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                            size_t why_len);
/* mx_e4m3 tiled: dense, M in 8 .. 64, split_k. */
int family_mx_tiled_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                             size_t why_len);
/* moe_mx_e4m3 sorted: the MoE sorted_token_ids op, no split-K. */
int family_moe_mx_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                           size_t why_len);

#ifdef __cplusplus
}
#endif
#endif /* GG_FAMILY_H */

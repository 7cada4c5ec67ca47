/*
 * ref_int.h — internal to reference/: what the host reference's files share. Where a group's
 * operands lie (gg_ref_operand.c), their exact decoding into double (gg_ref_decode.c), which the
 * host GEMM (gg_ref_gemm.c) runs a chunk of the reduction at a time, and the streamed stores
 * both write their buffers with.
 */
#ifndef GG_REF_INT_H
#define GG_REF_INT_H

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdint.h>

#include "reference/gg_ref.h"

/* The matrix of B (and of the B scales and the bias) that group g uses. */
static inline int64_t ref_mat_of(const struct gg_problem *p, int64_t g)
{
    return gg_problem_b_mats(p) == 1 ? 0 : g;
}

/* gg_ref_operand() on host operands, the tensor scale read (gg_ref_operand.c). */
void ref_operand_of(const struct gg_problem *p, const struct gg_operands *o, int which,
                    int64_t g, struct gg_ref_operand *d);

/*
 * Stores x0, x1 at out (16-byte aligned). With SSE2 the stores bypass the caches: the decode
 * buffers are read by OpenBLAS threads on the other core, and rewriting cache lines another core
 * holds is slow (in bench_reference streaming cuts the decode overhead over raw dgemm by about
 * a third).
 */
static inline void ref_store2(double *out, double x0, double x1)
{
#if defined(__SSE2__)
    _mm_stream_pd(out, _mm_set_pd(x1, x0));
#else
    out[0] = x0;
    out[1] = x1;
#endif
}

/* Orders streamed stores before the buffers are handed to dgemm's threads. */
static inline void ref_publish(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* ---- Exact decoding (gg_ref_decode.c) ------------------------------------------------------- */

/* What a decode met: a value that is Inf or NaN (a code, a scale or their product), a code that
   is subnormal in its format. */
enum { GG_RUN_NONFINITE = 1, GG_RUN_SUBNORMAL = 2 };

/* out[j] = exact value of code off + j*step of base, j < n (its alignment magnitude with mag),
   streamed with stream; returns GG_RUN_NONFINITE and GG_RUN_SUBNORMAL. */
int ref_decode_run(enum gg_dtype dt, const void *base, int64_t off, int64_t n, int64_t step,
                   int stream, int mag, double *restrict out);
/* pow2[c] = 2^(c-127), the E8M0 value of c; code 0xFF is NaN. */
void ref_e8m0_values(double pow2[256]);
/* Vector idx of d, scaled; returns ref_decode_run's flags, GG_RUN_NONFINITE also for an Inf or
   NaN scale. */
int ref_gather_vector(const struct gg_ref_operand *d, int64_t idx, double *out);
/* Vectors [v0, v1) × reduction indices t0 + [j0, j1) of d into buf in d's memory order, scaled;
   flags as ref_gather_vector. */
int ref_decode_block(const struct gg_ref_operand *d, int64_t t0, int64_t j0, int64_t j1,
                     int64_t v0, int64_t v1, const double pow2[256], int mag, int stream,
                     double *buf);
/* Reduction indices t0 .. t0+len-1 of every vector of d into buf in d's memory order (vector-
   major buf[v*len + j], reduction-major buf[j*nvec + v]), over the reference's threads; flags
   as ref_gather_vector. */
int ref_gather_chunk(const struct gg_ref_operand *d, int64_t t0, int64_t len,
                     const double pow2[256], int mag, double *buf);

#endif /* GG_REF_INT_H */

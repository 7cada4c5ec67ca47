/*
 * gg_ref.h — public header of reference/: exact number formats, quantisation, deterministic data,
 * problem geometry, the OpenBLAS reference GEMM and MPFR exact outputs.
 *
 * Everything here is a pure function of its arguments (no global state, no I/O).
 */
#ifndef GG_REF_H
#define GG_REF_H

#include <stdint.h>
#include <stddef.h>

#include "kernels/gg_kernel.h"

/* A host loop over many elements (the batched generator, the bf16 encoder, the reference's
   decoders and small-M products), built for the widest vector unit the CPU has: one clone per
   unit, picked when the program loads. Integer results and correctly rounded binary64
   operations in the order the source gives do not depend on the clone: these loops write each
   product and each sum as a statement of its own, which neither GCC in ISO C mode nor Clang
   contracts into the fused multiply-add that x86-64-v4 has. x86-64-v4 (AVX-512 F, BW, DQ, VL)
   rather than AVX-512F alone: without BW and VL the compiler keeps 32-bit lanes in 256-bit
   vectors. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__HIPCC__)
#define GG_HOST_VECTOR __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("O3")))
#elif defined(__x86_64__) && defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define GG_HOST_VECTOR __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define GG_HOST_VECTOR
#endif

/* Saturation mode of an encoder (OFP8 §5.2). */
enum gg_sat {
    GG_SAT_NONE = 0, /* overflow goes to Inf (E5M2, bf16, fp16, fp32) or NaN (E4M3, fnuz) */
    GG_SAT_FINITE    /* finite overflow and ±Inf go to ±max finite; NaN stays NaN */
};

/* ------------------------------------------------------------------------------------------ */
/* Checked sizes                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Element and byte counts of the harness go through these: a result that does not fit int64
   saturates at GG_SIZE_MAX instead of wrapping, and a saturated argument stays saturated (but
   for a product with 0), so a chain needs one test at its end and a saturated size is never
   admitted or allocated. Arguments are ≥ 0. */
#define GG_SIZE_MAX INT64_MAX
static inline int64_t gg_size_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? GG_SIZE_MAX : r;
}
static inline int64_t gg_size_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? GG_SIZE_MAX : r;
}

/* ------------------------------------------------------------------------------------------ */
/* Formats (gg_format.c)                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Lower-case name ("bf16", "e4m3", "e4m3fnuz", "e8m0", ...) or "none". */
const char *gg_dtype_name(enum gg_dtype t);
/* GG_DTYPE_NONE when name is unknown. */
enum gg_dtype gg_dtype_from_name(const char *name);
/* Bits per element: 64, 32, 16, 8 or 4. */
int gg_dtype_bits(enum gg_dtype t);
/* Bytes that n ≥ 0 packed elements occupy (E2M1: two per byte, rounded up); GG_SIZE_MAX when
   that does not fit int64. */
int64_t gg_dtype_bytes(enum gg_dtype t, int64_t n);
/* Largest finite value, smallest positive subnormal (E8M0: smallest value 2^-127). */
double gg_dtype_max(enum gg_dtype t);
double gg_dtype_min_subnormal(enum gg_dtype t);
/* Smallest positive normal value: 2^-126 for bf16 and fp32, 2^-6 for e4m3, 2^-14 for e5m2,
   1 for e2m1 (E8M0, which has no subnormals: its smallest value). */
double gg_dtype_min_normal(enum gg_dtype t);
/* Unit roundoff u = 2^-p, p the significand precision including the implicit bit. */
double gg_dtype_unit_roundoff(enum gg_dtype t);
/* 1 for the FP8 formats: E4M3, E5M2 and their fnuz forms. */
int gg_dtype_is_float8(enum gg_dtype t);

/* Exact value of code (the low gg_dtype_bits(t) bits are used). NaN codes give NaN, Inf codes
   ±Inf. 8-bit and 4-bit formats decode through tables. E8M0 never goes through fp32. */
double gg_decode(enum gg_dtype t, uint32_t code);
/* The 256-entry decode table of an 8-bit format (16 entries for E2M1), or NULL. Static. */
const double *gg_decode_table(enum gg_dtype t);

/* Round-to-nearest-even encoding of x into t, rounding once from the exact double.
   E8M0 rounds to the nearest power of two (the midpoint rounds up), ignores sat: 0, negative
   values and values below 2^-127 give 0x00; above 2^127, Inf and NaN give 0xFF. F64 has no
   32-bit code: use doubles directly. A NaN keeps its sign (fnuz: the one NaN code 0x80) and
   the low two bits of its payload pick one of the format's NaN codes: 0 (every NaN that
   arithmetic makes) the canonical quiet one, 1 the one next to Inf, 2 the canonical one with its
   lowest bit flipped (e5m2 0x7F, 0x7D, 0x7E; bf16 0x7FC0, 0x7F81, 0x7FC1); formats with one NaN
   code (e4m3: 0x7F|sign) always give it, and E2M1, which has none, gives ±6. */
uint32_t gg_encode(enum gg_dtype t, double x, enum gg_sat sat);
/* gg_encode(t, v·s, sat) for a quantisation multiplier s > 0, except that a NaN v is encoded as
   it is: its sign and payload choose the code whatever a product would make of them. */
uint32_t gg_encode_scaled(enum gg_dtype t, double v, double s, enum gg_sat sat);

/* gg_store_code(t, base, off + j, gg_encode_scaled(t, v[j], s, sat)) for j < n, the format
   decoded once for the run. */
void gg_encode_run(enum gg_dtype t, const double *v, int64_t n, double s, enum gg_sat sat,
                   void *base, int64_t off);

/* Element access in packed storage (E2M1 nibbles handled). */
uint32_t gg_load_code(enum gg_dtype t, const void *base, int64_t i);
void gg_store_code(enum gg_dtype t, void *base, int64_t i, uint32_t code);
static inline double gg_load(enum gg_dtype t, const void *base, int64_t i)
{
    return gg_decode(t, gg_load_code(t, base, i));
}

/* ------------------------------------------------------------------------------------------ */
/* Quantisation (gg_quant.c)                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* MX scale rules: OCP floor rule (e = floor(log2 amax) - emax_elem) and the ceil rule of
   TransformerEngine / cuBLAS (X = 2^ceil(log2(amax · fl32(1/max_elem))), no saturation). */
enum gg_mx_rule { GG_MX_RULE_FLOOR = 0, GG_MX_RULE_CEIL };

/* E8M0 scale code for a block with absolute maximum amax (may be 0, Inf or NaN). */
uint8_t gg_mx_scale_code(double amax, enum gg_dtype elem, enum gg_mx_rule rule);
/* Quantises n ≤ 32 values: *scale gets the block's E8M0 code and codes[i] the saturating RNE
   encoding of v[i] / 2^(scale-127). A NaN scale (0xFF) gives element codes of 0. */
void gg_mx_quantise_block(const double *v, int n, enum gg_dtype elem, enum gg_mx_rule rule,
                          uint8_t *scale, uint32_t *codes);
/* gg_mx_quantise_block with sat = GG_SAT_FINITE; with GG_SAT_NONE the scale comes from the
   block's finite values and its Inf and NaN values keep element codes (e5m2 Inf, e4m3 NaN, ...,
   encoded without saturation), as MX lets special elements propagate under a finite scale. */
void gg_mx_quantise_block_sat(const double *v, int n, enum gg_dtype elem, enum gg_mx_rule rule,
                              enum gg_sat sat, uint8_t *scale, uint32_t *codes);

/* Tensor-wise FP8: the quantisation multiplier s = max_elem / amax rounded to fp32 (1 when amax
   is 0 or not finite). Codes are encode(x · s); the kernel receives scale_inv = (float)(1/s). */
float gg_tensor_scale(double amax, enum gg_dtype elem);

/* ------------------------------------------------------------------------------------------ */
/* Deterministic data (gg_rng.c, gg_dist.c)                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Streams: element i of tensor t is a pure function of (seed, t, i). */
enum gg_stream {
    GG_STREAM_A = 1,
    GG_STREAM_B = 2,
    GG_STREAM_A_SCALE = 3,
    GG_STREAM_B_SCALE = 4,
    GG_STREAM_GROUPS = 5,
    GG_STREAM_BIAS = 6,
    GG_STREAM_ROUTING = 7
};

/* Philox4x32-10 (Salmon et al., SC'11): four 32-bit outputs for a 128-bit counter and 64-bit key. */
void gg_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Draw j (0..3 within one Philox block, more by advancing) of element i of stream t:
   64 uniform bits from counter (i lo, i hi, t, j/2). Only integer operations: a GPU reproduces it. */
uint64_t gg_rng_u64(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j);
/* Draws 2q and 2q+1 at once (one Philox block): out[0] = gg_rng_u64(.., 2q), out[1] = (.., 2q+1). */
void gg_rng_pair(uint64_t seed, uint64_t stream, uint64_t i, uint32_t q, uint64_t out[2]);
/* Uniform in [0, 1) with 53 random bits, from gg_rng_u64(seed, stream, i, j). */
double gg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j);

enum gg_dist_kind {
    GG_DIST_NORMAL = 0, /* normal(mean,std): Irwin-Hall sum of 12 uniforms, bounded at ±6 std */
    GG_DIST_UNIFORM,    /* uniform(lo,hi) */
    GG_DIST_INTS,       /* ints(r): integers uniform in [-r, r] */
    GG_DIST_CONST,      /* const(v) */
    GG_DIST_OUTLIERS,   /* outliers(std,frac,mag): normal(0,std), a fraction frac at ±mag·std */
    GG_DIST_NEARSAT,    /* nearsat: values at the target format's max and its rounding
                           thresholds (e4m3: 448, 464, 480, ...), random sign */
    GG_DIST_SUBNORMAL,  /* subnormal(frac): a fraction frac of subnormals of the target format,
                           the rest normal(0,1) */
    GG_DIST_SPECIALS,   /* specials(frac): normal(0,1) with a fraction frac of NaN, +max, -max */
    GG_DIST_CODES,      /* codes(frac): normal(0,1) with a fraction frac of the target format's
                           special codes: ±Inf, NaN (both signs, several codes), -0, ±max,
                           ±min subnormal (gg_core_code_value in gg_gen_core.h) */
    GG_DIST_COUNT
};

/* A distribution. fmt is the format the values are generated for (nearsat, subnormal,
   specials); the case layer sets it to the operand's dtype. */
struct gg_dist {
    enum gg_dist_kind kind;
    double p[3];
    enum gg_dtype fmt;
};

/* Parses "normal(0,1)", "uniform(-1,1)", "ints(8)", "const(1)", "outliers(1,0.001,100)",
   "nearsat", "subnormal(0.5)", "specials(0.001)", "codes(0.01)". Returns GG_OK or GG_E_PARSE
   with a message. */
enum gg_status gg_dist_parse(const char *s, struct gg_dist *out, char *err, size_t err_len);
/* Canonical text of d (parses back to the same d). Returns the length written. */
int gg_dist_format(const struct gg_dist *d, char *buf, size_t len);
/* Element i of tensor stream t for seed. Pure; the same on every platform. */
double gg_dist_sample(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i);
/* out[j] = gg_dist_sample(d, seed, stream, i0 + j) for j < n. */
void gg_dist_fill(const struct gg_dist *d, uint64_t seed, uint64_t stream, uint64_t i0, int64_t n,
                  double *out);
/* With probability frac, element i gets one of the E8M0 edge codes 0x00, 0x01, 0xFE, 0xFF:
   returns 1 and sets *code; otherwise returns 0. */
int gg_rng_plant_e8m0(uint64_t seed, uint64_t stream, uint64_t i, double frac, uint8_t *code);

/* ------------------------------------------------------------------------------------------ */
/* Problem geometry (gg_geom.c)                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* Names of ops as written in case files and signatures ("grouped_fwd", ..., "moe_sorted"), and
   back (GG_OP_COUNT when unknown). */
const char *gg_op_name(enum gg_op op);
enum gg_op gg_op_from_name(const char *name);
/* The scaling recipes of gg_kernel.h by their case-file names ("none", "tensor", "mx",
   "block128", "mx_b", "rowwise", "blockwise"), indexed by enum gg_scaling. */
#define GG_SCALING_RECIPES 7
extern const char *const gg_scaling_names[GG_SCALING_RECIPES];
const char *gg_scaling_name(enum gg_scaling s);

/* The part of C that group (or batch, or expert) g owns: rows × cols elements, each the dot
   product of length red (the reduction length: K, N or M_g). Row r of the block is at
   c[base + r*ld + col], or, when row_map is set (moe sorted), at c[row_map[r]*ld + col]. */
struct gg_out_block {
    int64_t base, rows, cols, ld, red;
    const int32_t *row_map;
};
void gg_problem_out_block(const struct gg_problem *p, int64_t g, struct gg_out_block *b);
/* Number of output elements summed over all groups (the logical output size). */
int64_t gg_problem_out_elems(const struct gg_problem *p);
/* Floating-point operations of the problem: 2 x output elements x reduction length, summed over
   the groups (what TFLOP/s figures divide). */
double gg_problem_flops(const struct gg_problem *p);
/* Elements from the first to one past the last addressable element of A, B and C. */
int64_t gg_problem_a_span(const struct gg_problem *p);
int64_t gg_problem_b_span(const struct gg_problem *p);
int64_t gg_problem_c_span(const struct gg_problem *p);
/* Matrices of B: groups (grouped fwd/dgrad, batched, moe) or 1 (wgrad, dense). */
int64_t gg_problem_b_mats(const struct gg_problem *p);
/* Rows of A across batches (scale rows of the MX and BLOCK128 recipes). */
int64_t gg_problem_a_rows(const struct gg_problem *p);
/* Scale elements of A and B for the problem's recipe (see gg_kernel.h), 0 when unscaled. */
int64_t gg_problem_a_scale_count(const struct gg_problem *p);
int64_t gg_problem_b_scale_count(const struct gg_problem *p);
/* 1 when recipe s is defined for op (b_layout: batched only), per gg_kernel.h: none, tensor
   and rowwise on every op; blockwise on a reduction along K and grouped dgrad; mx, mx_b and
   block128 on a reduction along K (grouped fwd, batched NK, dense, moe sorted). */
int gg_scaling_op_ok(enum gg_scaling s, enum gg_op op, enum gg_layout b_layout);
/* Bias elements (mats·N), 0 without bias. */
int64_t gg_problem_bias_count(const struct gg_problem *p);
/* Fills defaults for zero fields (packed leading dimensions and strides) and checks that the
   problem is well formed (sizes ≥ 0, lds ≥ row lengths, offsets consistent, MX only with K a
   multiple of 32 on an op whose reduction is along K, the moe sorted layout of gg_kernel.h).
   Returns GG_OK or GG_E_INVAL + message. */
enum gg_status gg_problem_check(struct gg_problem *p, char *err, size_t err_len);
/* gg_problem_check() but for the moe routing arrays (sorted_len, sorted_ids, expert_ids), which
   need not exist yet: what sizing a problem before anything is allocated needs. */
enum gg_status gg_problem_check_geometry(struct gg_problem *p, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Reference: operands, decoding, GEMM (gg_ref_operand/_decode/_gemm.c), MPFR (gg_ref_mpfr.c)  */
/* ------------------------------------------------------------------------------------------ */

/* How the decoded codes of one operand are scaled (the recipe of gg_kernel.h seen from one
   side): not at all, by one value, or by one value per block of vectors and of reduction
   indices (fp32 values for BLOCK128, ROWWISE and BLOCKWISE, E8M0 codes for MX). */
enum gg_ref_scale { GG_REF_SCALE_NONE = 0, GG_REF_SCALE_TENSOR, GG_REF_SCALE_F32, GG_REF_SCALE_E8M0 };

/*
 * One operand of one group as a matrix of reduction vectors: element t of vector v is code
 * off + row(v)*vec_step + t*red_step of base, where row(v) = v, or map[v] / map_div for the rows
 * of X that moe sorted ids select. Every op keeps one of the two steps at 1, so the operand is
 * either vector-major (red_step = 1: each vector contiguous) or reduction-major (vec_step = 1:
 * each reduction index a contiguous run over the vectors). The block scale of element t of
 * vector v is scale[scale_at + (row(v) / vblock)·vstride + (t / block)·rstride]: a per-row block
 * along the reduction has vblock 1 and rstride 1, a rowwise scale rstride 0 (block covers the
 * whole reduction), a 128x128 block vblock 128. A tensor scale is the float scale[tensor_at].
 * Pointers are those of the operands it was made from (host or device); nothing is read.
 */
struct gg_ref_operand {
    enum gg_dtype dt;
    const void *base;
    int64_t off, vec_step, red_step;
    int64_t nvec, red;
    const int32_t *map; /* moe A: the expert's sorted ids, NULL otherwise */
    int64_t map_div;    /* topk */
    enum gg_ref_scale sk;
    int64_t tensor_at;  /* GG_REF_SCALE_TENSOR: the float of this operand's matrix */
    double tensor;      /* its value (host operands, set by the reference itself) */
    const void *scale;  /* block scales: floats or E8M0 codes, indexed as above */
    int64_t block;      /* reduction indices per block scale */
    int64_t vblock;     /* vectors per block scale */
    int64_t scale_at, vstride, rstride;
    int64_t scale_row0; /* the global row of A of row(v) = 0 (rows across groups, batches) */
};

/* Side which (0 = A: the row side, 1 = B: the column side) of group g, per the addressing table
   of gg_kernel.h. o's pointers are only offset, never read (they may be device pointers); the
   moe row map is p->sorted_ids. */
void gg_ref_operand(const struct gg_problem *p, const struct gg_operands *o, int which, int64_t g,
                    struct gg_ref_operand *d);
/* The storage row of vector v of d. */
static inline int64_t gg_ref_vec_row(const struct gg_ref_operand *d, int64_t v)
{
    return d->map ? d->map[v] / d->map_div : v;
}

/* gg_ref_gather() on an operand description over host storage (d->tensor set for a tensor
   scale): vector v, read at storage row v (d->map is not applied). */
void gg_ref_gather_operand(const struct gg_ref_operand *d, int64_t v, double *out);
/* Dequantised reduction vector number idx of operand which (0 = A: the row side, 1 = B: the
   column side) of group g: out[t], t < red, such that C_g[r][col] = Σ_t A(g,r)[t] · B(g,col)[t].
   Exact: decoded codes times their scales, in double. Host pointers. */
void gg_ref_gather(const struct gg_problem *p, const struct gg_operands *o, int which, int64_t g,
                   int64_t idx, double *out);

/* Threads the reference may use: OpenBLAS's own pool, the decoding of the reference's operands
   and the generation of a case's inputs (gg_par_for). A process that runs one case at a time
   beside other such processes (a campaign worker) sets 1: tiny GEMMs gain nothing from threads,
   and idle BLAS threads spin on the cores the other workers need. Until it is called, the
   BLAS's own count (the online cores, or OPENBLAS_NUM_THREADS; at most GG_PAR_MAX_THREADS). */
void gg_ref_threads(int n);
int gg_ref_thread_count(void);

/* A parallel loop (gg_par.c): fn(ctx, lo, hi, tid) runs on contiguous ranges [lo, hi) that
   cover [0, n), one per thread tid < gg_par_threads(n, min_per_thread), each range at least
   min_per_thread long; the split depends on n and the thread count only. Range 0 runs on the
   calling thread; a thread that cannot start has its range run there too. Callers write
   disjoint results per index, which makes them independent of the thread count. */
#define GG_PAR_MAX_THREADS 64
typedef void (*gg_par_fn)(void *ctx, int64_t lo, int64_t hi, int tid);
int gg_par_threads(int64_t n, int64_t min_per_thread);
void gg_par_for(int64_t n, int64_t min_per_thread, gg_par_fn fn, void *ctx);

/* Reduction indices the reference decodes per dgemm call: its decode buffers hold one chunk of
   one group's operands (rows + columns) × GG_REF_CHUNK doubles, values and magnitudes in turn. */
#define GG_REF_CHUNK 512

/* Host memory gg_ref_gemm takes beside c and abs for one group of rows × cols outputs over red
   reduction indices, with threads threads (gg_ref_thread_count): its decode buffers, and for a
   small-M group also A's values and one column tile per thread. */
int64_t gg_ref_gemm_scratch(int64_t rows, int64_t cols, int64_t red, int threads);

/*
 * Reference for the whole problem: c and abs (each gg_problem_out_elems(p) doubles, group
 * blocks one after the other in group order, each block packed rows × cols) receive the product
 * of the dequantised inputs (OpenBLAS dgemm, error ≤ γ_red(2^-53)·Σ|ab|) and Σ_t |a_t·b_t|; with
 * a bias, c includes the bias and abs |bias| (the bound then counts red + 1 terms).
 * abs may be NULL. An output with an Inf or NaN term gets its IEEE value exactly (NaN for a NaN
 * term, Inf·0 or Inf - Inf, else the infinity), and abs then holds Σ|a_t·b_t| over its finite
 * terms only; an output whose terms are all -0 is -0. Groups are decoded one at a time with
 * 64-bit offsets; a group with red = 0 yields exact zeros. Host pointers. Returns GG_OK, or
 * GG_E_NOMEM with a message.
 */
enum gg_status gg_ref_gemm(const struct gg_problem *p, const struct gg_operands *o, double *c,
                           double *abs, char *err, size_t err_len);

/* The exact value of output element (g, r, col), rounded once to binary64 (MPFR). */
double gg_ref_exact(const struct gg_problem *p, const struct gg_operands *o, int64_t g, int64_t r,
                    int64_t col);

/* Certification of a reference result on n_samples outputs drawn from seed (plus every corner
   of every group block): each c value must lie within γ_red(2^-53)·abs + 2^-1074 of the MPFR
   exact value. Returns the number of violations; *first_bad (may be NULL) gets the packed index
   of the first one, or -1. */
int64_t gg_ref_certify(const struct gg_problem *p, const struct gg_operands *o, const double *c,
                       const double *abs, int64_t n_samples, uint64_t seed, int64_t *first_bad);
/* Gathers what gg_ref_gather(p, o, which, g, idx, out) would from operands kept elsewhere (e.g.
   on a device, fetched only where certification looks): 0 on success, else -1 with a message in
   err. */
typedef int (*gg_ref_gather_fn)(void *ctx, int which, int64_t g, int64_t idx, double *out,
                                char *err, size_t err_len);
/* gg_ref_certify() with the vectors from gather (when not NULL; o then serves the bias alone).
   Returns -1 when gather fails (its message in err) or memory runs out. */
int64_t gg_ref_certify_with(const struct gg_problem *p, const struct gg_operands *o,
                            const double *c, const double *abs, int64_t n_samples, uint64_t seed,
                            gg_ref_gather_fn gather, void *gather_ctx, int64_t *first_bad,
                            char *err, size_t err_len);
/* The outputs gg_ref_certify() checks, as packed indices in the order it checks them: the
   corners of up to 1024 groups spread over the problem, then n_samples uniform draws from seed.
   Writes them into idx (when not NULL) and returns their count; -1 when memory runs out. */
int64_t gg_ref_certify_points(const struct gg_problem *p, int64_t n_samples, uint64_t seed,
                              int64_t *idx);
/* Certifies the n outputs at packed indices idx[j], whose reference values are c[j] and Σ|ab|
   abs[j] (abs NULL: bounded from the vectors), for a reference never held whole; gather as in
   gg_ref_certify_with(). Returns the number of violations (*first_bad the packed index of the
   first), or -1 as gg_ref_certify_with(). */
int64_t gg_ref_certify_at(const struct gg_problem *p, const struct gg_operands *o, int64_t n,
                          const int64_t *idx, const double *c, const double *abs,
                          gg_ref_gather_fn gather, void *gather_ctx, int64_t *first_bad,
                          char *err, size_t err_len);

#endif /* GG_REF_H */

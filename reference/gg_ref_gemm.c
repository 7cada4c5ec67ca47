/*
 * gg_ref_gemm.c — the OpenBLAS reference: each group's operands are decoded exactly into double
 * (codes times their tensor, per-row block or MX scales), a chunk of the reduction at a time, and
 * multiplied by dgemm, or for groups of a few rows by fp64 dot products and axpys over tiles of
 * B that stay in cache; either way the error is at most γ_red(2^-53)·Σ|ab| per output. A bias
 * is added afterwards. Each operand is read in its own memory order (no strided gathers): the dgemm
 * transpose flags absorb the layout, and the moe sorted ids select the rows of X. Inputs that
 * decode to Inf or NaN never reach dgemm: the outputs they touch get their IEEE value (NaN for
 * Inf·0, Inf - Inf or a NaN term, else the infinity) exactly, and a sum of -0 terms is -0, so
 * the result does not depend on what a BLAS makes of special values. The decoding itself is
 * gg_ref_decode.c's.
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref_int.h"

/*
 * Non-finite terms. Every decoded code and scale lies below 2^128 in magnitude (f64 inputs
 * aside), so the finite terms of an output never overflow binary64 and its exact value is
 * decided by the products
 * with an Inf or NaN factor alone: NaN when one of them is NaN (a NaN factor, Inf·0) or when
 * both infinities occur, else the infinity that occurs. The classes of those products are ORed
 * into one byte per output of the group, and the factors are then replaced by zeros, so that
 * dgemm (whatever a BLAS does with Inf and NaN) sums the finite terms only: the finite part of
 * each output and of its Σ|ab|, which the oracles use to tell an accumulator overflow.
 */
enum { NF_NONE = 0, NF_POS = 1, NF_NEG = 2, NF_NAN = 3 };

static inline uint8_t nf_class(double p)
{
    return isnan(p) ? NF_NAN : p > 0 ? NF_POS : NF_NEG;
}

static double nf_value(uint8_t state)
{
    return state == NF_POS ? INFINITY : state == NF_NEG ? -INFINITY : NAN;
}

/* Position of element (v, j) of a chunk of len reduction indices of d (see ref_gather_chunk). */
static inline int64_t chunk_at(const struct gg_ref_operand *d, int64_t v, int64_t j, int64_t len)
{
    return d->red_step != 1 ? j * d->nvec + v : v * len + j;
}

/* For every non-finite x of one side's chunk buffer (vectors of side x, partners of the other
   side y), ORs the classes of its products into state (row-major over the output, x's vectors
   along rows when x_rows). */
static void class_nonfinite(const struct gg_ref_operand *dx, const double *x, const struct gg_ref_operand *dy,
                            const double *y, int64_t len, int x_rows, uint8_t *state)
{
    int64_t cols = x_rows ? dy->nvec : dx->nvec;
    for (int64_t v = 0; v < dx->nvec; v++)
        for (int64_t j = 0; j < len; j++) {
            double xv = x[chunk_at(dx, v, j, len)];
            if (isfinite(xv))
                continue;
            for (int64_t w = 0; w < dy->nvec; w++)
                state[x_rows ? v * cols + w : w * cols + v] |=
                    nf_class(xv * y[chunk_at(dy, w, j, len)]);
        }
}

static void zero_nonfinite(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            x[i] = 0.0;
}

/* 1 when n > 0 and every product a[t]·b[t] is -0: the IEEE sum is then -0, where dgemm, which
   accumulates from +0, gives +0. */
static int all_negative_zero(const double *a, const double *b, int64_t n)
{
    for (int64_t t = 0; t < n; t++) {
        double p = a[t] * b[t];
        if (p != 0.0 || !signbit(p))
            return 0;
    }
    return n > 0;
}

/*
 * Gives the zero outputs of group g (c, abs: its packed block) whose terms are all -0 the sign
 * IEEE addition gives them. Candidates have c = 0 and, with abs, Σ|ab| = 0; each is checked on
 * its gathered vectors (a row's gathered once), stopping at the first term that is not -0.
 */
static enum gg_status negative_zeros(const struct gg_problem *p, const struct gg_operands *o,
                                     int64_t g, int64_t rows, int64_t cols, int64_t red, double *c,
                                     const double *abs, char *err, size_t err_len)
{
    double *va = NULL, *vb = NULL;
    int64_t have_row = -1;
    for (int64_t i = 0; i < rows * cols; i++) {
        if (c[i] != 0.0 || (abs && abs[i] != 0.0))
            continue;
        if (!va) {
            va = malloc((size_t)gg_size_mul(red, sizeof(double)));
            vb = malloc((size_t)gg_size_mul(red, sizeof(double)));
            if (!va || !vb) {
                free(va);
                free(vb);
                snprintf(err, err_len, "reference: cannot allocate 2 x %lld doubles",
                         (long long)red);
                return GG_E_NOMEM;
            }
        }
        if (i / cols != have_row) {
            have_row = i / cols;
            gg_ref_gather(p, o, 0, g, have_row, va);
        }
        gg_ref_gather(p, o, 1, g, i % cols, vb);
        if (all_negative_zero(va, vb, red))
            c[i] = -0.0;
    }
    free(va);
    free(vb);
    return GG_OK;
}

/* x[j] = |x[j]|, j < n (streamed like the decode). */
static void abs_inplace(double *x, int64_t n)
{
    int64_t j = 0;
    if (((uintptr_t)x & 15) != 0 && n > 0) {
        x[0] = fabs(x[0]);
        j = 1;
    }
    for (; j + 2 <= n; j += 2)
        ref_store2(x + j, fabs(x[j]), fabs(x[j + 1]));
    if (j < n)
        x[j] = fabs(x[j]);
}

/* out [rows × cols] (=, or += when accumulate) A·Bᵀ over a chunk of len reduction indices, with a
   and b each in their operand's memory order (see ref_gather_chunk). */
static void product(int64_t rows, int64_t cols, int64_t len, const double *a, int a_red_major,
                    const double *b, int b_red_major, int accumulate, double *out)
{
    cblas_dgemm(CblasRowMajor, a_red_major ? CblasTrans : CblasNoTrans,
                b_red_major ? CblasNoTrans : CblasTrans, (blasint)rows, (blasint)cols,
                (blasint)len, 1.0, a, (blasint)(a_red_major ? rows : len), b,
                (blasint)(b_red_major ? cols : len), accumulate ? 1.0 : 0.0, out, (blasint)cols);
}

/*
 * Reduction indices decoded per dgemm call. Each chunk's operands stay in cache, and the buffers
 * do not grow with the reduction length. Accumulating the chunks into C is one more summation
 * order, so the γ_red bound is unchanged. A multiple of the MX block and of BLOCK128, so a
 * chunk never splits a block scale.
 */
#define CHUNK GG_REF_CHUNK

/*
 * Groups of at most SMALL_ROWS rows (decode, small M). dgemm would stream every decoded chunk of
 * B through memory three times (decode, pack, |B| and pack again) for a few flops per element.
 * Instead each thread takes tiles of B's columns and, a part of the reduction at a time, decodes
 * its tile into a buffer that stays in its cache and accumulates the outputs and their Σ|ab|
 * from it (|a·b| = |a|·|b| exactly). A tile reads B in runs of contiguous codes: SMALL_TILE
 * vectors × GG_REF_CHUNK indices of a vector-major B, SMALL_PANEL vectors × SMALL_STEPS indices
 * of a reduction-major one. Each output is summed by one thread in an order fixed by the tile
 * boundaries, so the result does not depend on the thread count; any order stays within the
 * γ_red bound. Groups with an Inf, NaN or subnormal input go the dgemm way, which handles them.
 */
#define SMALL_ROWS 8
#define SMALL_TILE 64
#define SMALL_PANEL 512
#define SMALL_STEPS 128 /* a multiple of the MX block and of GG_BLOCK128 */

/* Eight doubles as one value (GCC and Clang vector extensions): each operation is the
   element-wise IEEE one, which the compiler maps to the clone's vector unit. Macros rather than
   functions: a vector argument or result would have a different ABI in each clone. */
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
#define V8_ABS(x) ((v8d)((v8u)(x) & 0x7FFFFFFFFFFFFFFFull))
/* The sum of the eight elements, in a fixed order. */
#define V8_SUM(x) ((((x)[0] + (x)[1]) + ((x)[2] + (x)[3])) + (((x)[4] + (x)[5]) + ((x)[6] + (x)[7])))

/* s[r] += Σ_j a[r·lda + j]·b[j] and sa[r] += Σ_j |a·b| over j < n, r < rows (a vector-major
   tile: one dot product per row and vector): sixteen partial sums per output and a tail sum,
   joined in a fixed order. */
GG_HOST_VECTOR static void small_dots(const double *a, int64_t lda, int64_t rows, const double *b,
                                      int64_t n, double *s, double *sa)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *x = a + r * lda;
        v8d p0 = {0}, p1 = {0}, q0 = {0}, q1 = {0}, x0, x1, b0, b1;
        double pt = 0.0, qt = 0.0;
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) {
            memcpy(&x0, x + j, sizeof x0);
            memcpy(&x1, x + j + 8, sizeof x1);
            memcpy(&b0, b + j, sizeof b0);
            memcpy(&b1, b + j + 8, sizeof b1);
            v8d t0 = x0 * b0, t1 = x1 * b1;
            p0 += t0;
            p1 += t1;
            q0 += V8_ABS(t0);
            q1 += V8_ABS(t1);
        }
        for (; j < n; j++) {
            double t = x[j] * b[j];
            pt += t;
            qt += fabs(t);
        }
        v8d p = p0 + p1, q = q0 + q1;
        s[r] += V8_SUM(p) + pt;
        sa[r] += V8_SUM(q) + qt;
    }
}

/* acc[r·lds + v] += a[r·lda + j]·b[j·ldb + v] and accabs likewise += |a·b|, for r < rows, j < len,
   v < w, in order of j (a reduction-major tile: one axpy per row and index). SMALL_TILE columns
   keep a row's sums in vector registers (16 of 8 doubles) while it runs over the indices. */
GG_HOST_VECTOR static void small_axpys(const double *a, int64_t lda, int64_t rows, const double *b,
                                       int64_t ldb, int64_t len, int64_t w, double *acc,
                                       double *accabs, int64_t lds)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *x = a + r * lda;
        double *out = acc + r * lds, *outabs = accabs + r * lds;
        int64_t v0 = 0;
        for (; v0 + SMALL_TILE <= w; v0 += SMALL_TILE) {
            v8d s[SMALL_TILE / 8], sa[SMALL_TILE / 8];
            memcpy(s, out + v0, sizeof s);
            memcpy(sa, outabs + v0, sizeof sa);
            for (int64_t j = 0; j < len; j++)
                for (int u = 0; u < SMALL_TILE / 8; u++) {
                    v8d y;
                    memcpy(&y, b + j * ldb + v0 + 8 * u, sizeof y);
                    v8d t = x[j] * y;
                    s[u] += t;
                    sa[u] += V8_ABS(t);
                }
            memcpy(out + v0, s, sizeof s);
            memcpy(outabs + v0, sa, sizeof sa);
        }
        for (int64_t j = 0; j < len && v0 < w; j++)
            for (int64_t v = v0; v < w; v++) {
                double t = x[j] * b[j * ldb + v];
                out[v] += t;
                outabs[v] += fabs(t);
            }
    }
}

/* The tile shape for B's memory order: vectors per tile and reduction indices per step. */
static void small_shape(const struct gg_ref_operand *db, int64_t *vecs, int64_t *steps)
{
    int rm = db->red_step != 1;
    *vecs = rm ? SMALL_PANEL : SMALL_TILE;
    *steps = rm ? SMALL_STEPS : CHUNK;
}

struct small_job {
    const struct gg_ref_operand *db;
    const double *a; /* the group's rows × red values of A, row-major */
    int64_t rows, cols, red;
    const double *pow2;
    double *c, *abs; /* the group's blocks */
    atomic_int flags;
};

static void small_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct small_job *k = ctx;
    const struct gg_ref_operand *db = k->db;
    int64_t rows = k->rows, red = k->red, tv, tj;
    small_shape(db, &tv, &tj);
    int64_t len0 = red < tj ? red : tj;
    double *buf = malloc((size_t)(tv * len0 + 2 * rows * tv) * sizeof *buf);
    if (!buf) {
        atomic_fetch_or(&k->flags, GG_RUN_NONFINITE); /* not done: the dgemm way */
        return;
    }
    double *acc = buf + tv * len0, *accabs = acc + rows * tv;
    int flags = 0;
    for (int64_t tile = lo; tile < hi && !flags; tile++) {
        int64_t v0 = tile * tv, v1 = v0 + tv < k->cols ? v0 + tv : k->cols, w = v1 - v0;
        memset(acc, 0, (size_t)(2 * rows * tv) * sizeof *acc);
        for (int64_t t0 = 0; t0 < red && !flags; t0 += tj) {
            int64_t len = red - t0 < tj ? red - t0 : tj;
            flags |= ref_decode_block(db, t0, 0, len, v0, v1, k->pow2, 0, 0, buf);
            if (db->red_step != 1) {
                small_axpys(k->a + t0, red, rows, buf, w, len, w, acc, accabs, tv);
                continue;
            }
            for (int64_t v = 0; v < w; v++) { /* buf[v·len + j] */
                double s[SMALL_ROWS] = {0}, sa[SMALL_ROWS] = {0};
                small_dots(k->a + t0, red, rows, buf + v * len, len, s, sa);
                for (int64_t r = 0; r < rows; r++) {
                    acc[r * tv + v] += s[r];
                    accabs[r * tv + v] += sa[r];
                }
            }
        }
        for (int64_t r = 0; r < rows && !flags; r++) {
            memcpy(k->c + r * k->cols + v0, acc + r * tv, (size_t)w * sizeof(double));
            if (k->abs)
                memcpy(k->abs + r * k->cols + v0, accabs + r * tv, (size_t)w * sizeof(double));
        }
    }
    free(buf);
    atomic_fetch_or(&k->flags, flags);
}

int64_t gg_ref_gemm_scratch(int64_t rows, int64_t cols, int64_t red, int threads)
{
    int64_t len = red < CHUNK ? red : CHUNK;
    int64_t bytes = gg_size_mul(8, gg_size_mul(gg_size_add(rows, cols), len));
    if (rows > SMALL_ROWS)
        return bytes;
    /* A's values, and per thread the larger tile of the two shapes with its sums */
    int64_t tiles = (cols + SMALL_TILE - 1) / SMALL_TILE;
    int64_t busy = threads < tiles ? threads : tiles;
    int64_t tile = SMALL_TILE * CHUNK > SMALL_PANEL * SMALL_STEPS ? SMALL_TILE * CHUNK
                                                                  : SMALL_PANEL * SMALL_STEPS;
    tile += 2 * SMALL_ROWS * SMALL_PANEL;
    return gg_size_add(bytes, gg_size_mul(8, gg_size_add(gg_size_mul(rows, red),
                                                         gg_size_mul(busy, tile))));
}

/* The product of a group of rows <= SMALL_ROWS rows into c and abs (its blocks); returns 0, with
   c and abs partly written, when an input is Inf, NaN or (with abs) subnormal, or when a buffer
   cannot be had: the dgemm way then computes the group. */
static int small_group(const struct gg_ref_operand *da, const struct gg_ref_operand *db,
                       int64_t rows, int64_t cols, int64_t red, const double pow2[256], double *c,
                       double *abs)
{
    double *a = malloc((size_t)gg_size_mul(gg_size_mul(rows, red), sizeof *a));
    if (!a)
        return 0;
    int bad = GG_RUN_NONFINITE | (abs ? GG_RUN_SUBNORMAL : 0), flags = 0;
    for (int64_t r = 0; r < rows; r++)
        flags |= ref_gather_vector(da, r, a + r * red);
    struct small_job k = {.db = db, .a = a, .rows = rows, .cols = cols, .red = red,
                          .pow2 = pow2, .c = c, .abs = abs};
    atomic_init(&k.flags, 0);
    int64_t tv, tj;
    small_shape(db, &tv, &tj);
    if (!(flags & bad))
        gg_par_for((cols + tv - 1) / tv, 1, small_range, &k);
    free(a);
    return !((flags | atomic_load(&k.flags)) & bad);
}

/* Checks what the reference itself relies on: the pointers the recipe and the bias need, each
   recipe only on the ops gg_kernel.h defines it for, MX blocks dividing K, a moe topk to
   divide by. */
static enum gg_status check_operands(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    /* Scale arrays may be absent only when they would be empty (K = 0 under a block recipe). */
    if ((gg_problem_a_scale_count(p) > 0 && !o->a_scale) ||
        (gg_problem_b_scale_count(p) > 0 && !o->b_scale)) {
        snprintf(err, err_len, "reference: scaled problem without a_scale/b_scale");
        return GG_E_INVAL;
    }
    if (gg_problem_bias_count(p) > 0 && !o->bias) {
        snprintf(err, err_len, "reference: bias_dtype %s without a bias",
                 gg_dtype_name(p->bias_dtype));
        return GG_E_INVAL;
    }
    int mx = p->scaling == GG_SCALING_MX || p->scaling == GG_SCALING_MX_B;
    if (!gg_scaling_op_ok(p->scaling, p->op, p->b_layout) || (mx && p->k % GG_MX_BLOCK)) {
        snprintf(err, err_len, "reference: scaling %d is not defined for op %d (or K %% %d != 0 "
                 "for MX)", (int)p->scaling, (int)p->op, GG_MX_BLOCK);
        return GG_E_INVAL;
    }
    if (p->op == GG_OP_MOE_SORTED && p->topk < 1) {
        snprintf(err, err_len, "reference: moe sorted with topk %lld", (long long)p->topk);
        return GG_E_INVAL;
    }
    return GG_OK;
}

/* c[r·cols + col] += bias[mat(g)·N + col] for the block's rows (exact decode, one rounding in
   double, covered by γ_{red+1}), and abs gets |bias| so that the bound covers the term too.
   row is scratch for cols doubles. */
static void add_bias(const struct gg_problem *p, const struct gg_operands *o, int64_t g,
                     int64_t rows, int64_t cols, double *row, double *c, double *abs)
{
    ref_decode_run(p->bias_dtype, o->bias, ref_mat_of(p, g) * p->n, cols, 1, 0, 0, row);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t col = 0; col < cols; col++) {
            c[r * cols + col] += row[col];
            if (abs)
                abs[r * cols + col] += fabs(row[col]);
        }
}

enum gg_status gg_ref_gemm(const struct gg_problem *p, const struct gg_operands *o, double *c,
                           double *abs, char *err, size_t err_len)
{
    enum gg_status st = check_operands(p, o, err, err_len);
    if (st != GG_OK)
        return st;
    /* Buffer sizes: the most vectors of any group times the chunk length. */
    int64_t max_rows = 0, max_cols = 0, max_len = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_ref_operand da, db;
        ref_operand_of(p, o, 0, g, &da);
        ref_operand_of(p, o, 1, g, &db);
        if (da.nvec > INT_MAX || db.nvec > INT_MAX) {
            snprintf(err, err_len, "reference: group %lld has a dimension above %d (BLAS int)",
                     (long long)g, INT_MAX);
            return GG_E_NOMEM;
        }
        if (da.nvec * db.nvec * da.red == 0)
            continue;
        int64_t len = da.red < CHUNK ? da.red : CHUNK;
        if (da.nvec > max_rows) max_rows = da.nvec;
        if (db.nvec > max_cols) max_cols = db.nvec;
        if (len > max_len) max_len = len;
    }
    int has_bias = p->bias_dtype != GG_DTYPE_NONE;
    int64_t a_len = gg_size_mul(max_rows, max_len), b_len = gg_size_mul(max_cols, max_len);
    double *a_buf = malloc((size_t)gg_size_mul(gg_size_add(a_len, 1), sizeof(double)));
    double *b_buf = malloc((size_t)gg_size_mul(gg_size_add(b_len, 1), sizeof(double)));
    double *bias_row = has_bias ? malloc((size_t)gg_size_mul(p->n + 1, sizeof(double))) : NULL;
    if (!a_buf || !b_buf || (has_bias && !bias_row)) {
        free(a_buf);
        free(b_buf);
        free(bias_row);
        snprintf(err, err_len, "reference: cannot allocate %lld + %lld doubles",
                 (long long)a_len, (long long)b_len);
        return GG_E_NOMEM;
    }
    double pow2[256];
    ref_e8m0_values(pow2);
    int64_t pos = 0; /* packed offset of the current group's block */
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_ref_operand da, db;
        ref_operand_of(p, o, 0, g, &da);
        ref_operand_of(p, o, 1, g, &db);
        int64_t rows = da.nvec, cols = db.nvec, red = da.red, count = rows * cols;
        if (count == 0)
            continue;
        if (red == 0) {
            memset(c + pos, 0, (size_t)count * sizeof(double));
            if (abs)
                memset(abs + pos, 0, (size_t)count * sizeof(double));
        }
        int a_rm = da.red_step != 1, b_rm = db.red_step != 1;
        uint8_t *state = NULL; /* non-finite classes, allocated at the first Inf or NaN */
        int done = rows <= SMALL_ROWS && red > 0 &&
                   small_group(&da, &db, rows, cols, red, pow2, c + pos, abs ? abs + pos : NULL);
        for (int64_t t0 = 0; !done && t0 < red && st == GG_OK; t0 += CHUNK) {
            int64_t len = red - t0 < CHUNK ? red - t0 : CHUNK;
            int flags = ref_gather_chunk(&da, t0, len, pow2, 0, a_buf);
            flags |= ref_gather_chunk(&db, t0, len, pow2, 0, b_buf);
            int nf = flags & GG_RUN_NONFINITE;
            if (nf && !state && !(state = calloc((size_t)count, 1))) {
                snprintf(err, err_len, "reference: cannot allocate %lld bytes", (long long)count);
                st = GG_E_NOMEM;
                break;
            }
            if (nf) { /* classes first: a product of two non-finite factors needs both */
                class_nonfinite(&da, a_buf, &db, b_buf, len, 1, state);
                class_nonfinite(&db, b_buf, &da, a_buf, len, 0, state);
                zero_nonfinite(a_buf, rows * len);
                zero_nonfinite(b_buf, cols * len);
            }
            ref_publish();
            product(rows, cols, len, a_buf, a_rm, b_buf, b_rm, t0 > 0, c + pos);
            if (abs) {
                if (flags & GG_RUN_SUBNORMAL) { /* Σ|ab| over alignment magnitudes */
                    ref_gather_chunk(&da, t0, len, pow2, 1, a_buf);
                    ref_gather_chunk(&db, t0, len, pow2, 1, b_buf);
                    if (nf) {
                        zero_nonfinite(a_buf, rows * len);
                        zero_nonfinite(b_buf, cols * len);
                    }
                }
                abs_inplace(a_buf, rows * len);
                abs_inplace(b_buf, cols * len);
                ref_publish();
                product(rows, cols, len, a_buf, a_rm, b_buf, b_rm, t0 > 0, abs + pos);
            }
        }
        for (int64_t i = 0; state && i < count; i++)
            if (state[i] != NF_NONE)
                c[pos + i] = nf_value(state[i]);
        free(state);
        if (st == GG_OK && red > 0)
            st = negative_zeros(p, o, g, rows, cols, red, c + pos, abs ? abs + pos : NULL, err,
                                err_len);
        if (st != GG_OK)
            break;
        if (has_bias)
            add_bias(p, o, g, rows, cols, bias_row, c + pos, abs ? abs + pos : NULL);
        pos += count;
    }
    free(a_buf);
    free(b_buf);
    free(bias_row);
    return st;
}

/*
 * grouped_fixture.h — one materialised case of a grouped kernel (fwd, dgrad, wgrad) for the
 * kernel tests, bf16 or fp8 with tensor scales: the problem (kernel, op, options, mutant, padded
 * leading dimensions), inputs drawn from the tests' own generator, C at the sentinel plus a
 * guard, a poisoned workspace with its guard band; a naive double-precision reference, read
 * correctly or as a mutant reads, with the per-element bound the kernels must meet; the
 * catalogue of shapes around the tile edges; and the properties every grouped kernel has
 * (empty groups, workspace, device offsets, refusals).
 */
#ifndef GROUPED_FIXTURE_H
#define GROUPED_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel_fixture.h"
#include "reference/gg_ref.h"
#include "splitmix.h"

#define MAX_GROUPS 24
#define MAX_EXTRA_OPTS 4
#define HUGE_B_BYTES (INT64_C(1) << 30) /* B buffers above this are reserved, not allocated */

/* ---- test's own bf16 codec ------------------------------------------------------------- */

static inline float bf16_decode(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* RNE; only finite inputs are encoded by these tests. */
static inline uint16_t bf16_encode(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ---- one materialised case ------------------------------------------------------------- */

struct tcase {
    const char *kernel; /* NULL: grouped_bf16_cpu_tiled */
    const char *mutant; /* NULL: the correct kernel */
    enum gg_op op;
    enum gg_dtype a_dtype, b_dtype; /* GG_DTYPE_NONE: bf16; fp8 inputs take tensor scales */
    enum gg_dtype c_dtype;
    int64_t split;   /* split_k (0: 1) */
    int64_t workers; /* > 0: the workers option */
    int64_t groups;
    int64_t lens[MAX_GROUPS];
    int64_t n, k;
    int64_t pad_a, pad_b, pad_c, pad_sb, pad_sc; /* extra elements per row / per group */
    int64_t stride_b; /* > 0: explicit stride_b (huge strides for the 32-bit mutants) */
    int packed;       /* leave every leading dimension and stride 0 for the kernel to resolve */
    int int_data;     /* small integers and power-of-two scales: every result exact in fp32 */
    uint64_t seed;
    struct gg_kopt extra[MAX_EXTRA_OPTS]; /* options besides split_k and workers */
    int n_extra;
};

struct tbuf {
    const struct gg_kernel *kern;
    struct gg_problem p;
    struct gg_kopt opts[2 + MAX_EXTRA_OPTS];
    enum gg_dtype a_dt, b_dt; /* resolved input dtypes */
    int64_t lens[MAX_GROUPS], offs[MAX_GROUPS + 1];
    int64_t lens_dev[MAX_GROUPS], offs_dev[MAX_GROUPS + 1];
    int64_t lda, ldb, ldc, sb, sc; /* resolved */
    uint8_t *a, *b;                /* codes: two bytes each for bf16, one for fp8 */
    void *c;
    float a_scale, b_scale[MAX_GROUPS]; /* fp8 only */
    int64_t a_len, b_len, c_len;        /* elements; c_len includes GUARD_ELEMS */
    int b_mapped;                       /* b is a sparse reservation of b_len elements */
    unsigned char *ws;                  /* ws_bytes (the reported size) + the guard band */
    size_t ws_bytes;
};

static inline void set_lens(struct tcase *t, int64_t groups, const int64_t *lens)
{
    t->groups = groups;
    for (int64_t g = 0; g < groups; g++)
        t->lens[g] = lens[g];
}

static inline void add_opt(struct tcase *t, const char *key, int64_t value)
{
    cr_assert_lt(t->n_extra, MAX_EXTRA_OPTS);
    t->extra[t->n_extra++] = (struct gg_kopt){key, value};
}

static inline int64_t row_len_a(const struct tcase *t)
{
    return t->op == GG_OP_GROUPED_FWD ? t->k : t->n;
}

static inline int64_t row_len_c(const struct tcase *t)
{
    return t->op == GG_OP_GROUPED_FWD ? t->n : t->k;
}

static inline int64_t split_of(const struct tcase *t)
{
    return t->split > 0 ? t->split : 1;
}

static inline size_t code_bytes(enum gg_dtype dt)
{
    return dt == GG_DTYPE_BF16 ? 2 : 1;
}

static inline uint32_t code_at(enum gg_dtype dt, const uint8_t *x, int64_t i)
{
    return dt == GG_DTYPE_BF16 ? ((const uint16_t *)(const void *)x)[i] : x[i];
}

/* A random finite code of dt: bf16 uniform in ±[0, 2) times 2^-3 .. 2^3, an fp8 code over its
   whole range (subnormals and the largest values included); or a small integer in [-3, 3]. */
static inline uint32_t draw_code(enum gg_dtype dt, int int_data, uint64_t *rng)
{
    if (dt == GG_DTYPE_BF16) {
        float v;
        if (int_data)
            v = (float)(splitmix_below(rng, 7) - 3);
        else
            v = ldexpf((float)splitmix_below(rng, 1 << 20) / (float)(1 << 19) - 1.0f,
                       (int)splitmix_below(rng, 7) - 3);
        return bf16_encode(v);
    }
    if (int_data)
        return gg_encode(dt, (double)(splitmix_below(rng, 7) - 3), GG_SAT_FINITE);
    for (;;) {
        uint8_t c = (uint8_t)splitmix64(rng);
        if (isfinite(gg_decode(dt, c)))
            return c;
    }
}

static inline void fill_codes(uint8_t *x, int64_t len, enum gg_dtype dt, int int_data,
                              uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++) {
        if (dt == GG_DTYPE_BF16)
            ((uint16_t *)(void *)x)[i] = (uint16_t)draw_code(dt, int_data, rng);
        else
            x[i] = (uint8_t)draw_code(dt, int_data, rng);
    }
}

/* A scale in [2^lo, 2^hi): a power of two for exact data, else with a random significand. */
static inline float draw_scale(int int_data, int lo, int hi, uint64_t *rng)
{
    int e = lo + (int)splitmix_below(rng, hi - lo);
    float f = int_data ? 1.0f : 1.0f + (float)splitmix_below(rng, 1 << 23) / (float)(1 << 23);
    return ldexpf(f, e);
}

/* Builds the problem and the buffers: inputs (and fp8 scales) drawn from t->seed, C filled with
   the sentinel, the workspace (exactly workspace_bytes, then a guard band) filled with byte
   poison. A B of more than HUGE_B_BYTES is a sparse reservation in which only the weights of
   experts with tokens are written. */
static inline void setup(const struct tcase *t, struct tbuf *b, unsigned char poison)
{
    memset(b, 0, sizeof *b);
    b->kern = kernel_named(t->kernel ? t->kernel : "grouped_bf16_cpu_tiled");
    cr_assert(t->groups <= MAX_GROUPS);
    b->a_dt = t->a_dtype ? t->a_dtype : GG_DTYPE_BF16;
    b->b_dt = t->b_dtype ? t->b_dtype : GG_DTYPE_BF16;
    int scaled = b->a_dt != GG_DTYPE_BF16;
    for (int64_t g = 0; g < t->groups; g++) {
        b->lens[g] = t->lens[g];
        b->offs[g + 1] = b->offs[g] + t->lens[g];
    }
    memcpy(b->lens_dev, b->lens, sizeof b->lens);
    memcpy(b->offs_dev, b->offs, sizeof b->offs);
    int64_t m = b->offs[t->groups];
    int wgrad = t->op == GG_OP_GROUPED_WGRAD;
    b->lda = row_len_a(t) + t->pad_a;
    b->ldb = t->k + t->pad_b;
    b->ldc = row_len_c(t) + t->pad_c;
    b->sb = t->stride_b > 0 ? t->stride_b : t->n * b->ldb + t->pad_sb;
    b->sc = t->n * b->ldc + t->pad_sc;
    if (t->packed) {
        b->lda = row_len_a(t);
        b->ldb = t->k;
        b->ldc = row_len_c(t);
        b->sb = t->n * t->k;
        b->sc = t->n * t->k;
    }
    int n_opts = 0;
    b->opts[n_opts++] = (struct gg_kopt){"split_k", split_of(t)};
    if (t->workers > 0)
        b->opts[n_opts++] = (struct gg_kopt){"workers", t->workers};
    for (int i = 0; i < t->n_extra; i++)
        b->opts[n_opts++] = t->extra[i];
    b->p = (struct gg_problem){
        .op = t->op, .a_dtype = b->a_dt, .b_dtype = b->b_dt, .c_dtype = t->c_dtype,
        .acc_dtype = GG_DTYPE_F32, .scaling = scaled ? GG_SCALING_TENSOR : GG_SCALING_NONE,
        .b_layout = GG_LAYOUT_NK, .groups = t->groups, .m = m, .n = t->n, .k = t->k,
        .lda = t->packed ? 0 : b->lda, .ldb = t->packed ? 0 : b->ldb,
        .ldc = t->packed ? 0 : b->ldc, .stride_b = t->packed ? 0 : b->sb,
        .stride_c = t->packed ? 0 : b->sc, .group_lens = b->lens, .group_offs = b->offs,
        .opts = b->opts, .n_opts = n_opts, .mutant = t->mutant};
    b->a_len = m * b->lda;
    b->b_len = wgrad ? m * b->ldb : (t->groups > 0 ? (t->groups - 1) * b->sb + t->n * b->ldb : 0);
    b->c_len = (wgrad ? t->groups * b->sc : m * b->ldc) + GUARD_ELEMS;
    b->a = xcalloc(b->a_len, code_bytes(b->a_dt));
    size_t b_bytes = (size_t)b->b_len * code_bytes(b->b_dt);
    b->b_mapped = b_bytes > (size_t)HUGE_B_BYTES;
    b->b = b->b_mapped ? reserve_sparse(b_bytes) : xcalloc(b->b_len, code_bytes(b->b_dt));
    b->c = xcalloc(b->c_len, out_elem_bytes(t->c_dtype));
    fill_sentinel(b->c, t->c_dtype, b->c_len);
    uint64_t rng = t->seed;
    fill_codes(b->a, b->a_len, b->a_dt, t->int_data, &rng);
    if (wgrad || !b->b_mapped)
        fill_codes(b->b, b->b_len, b->b_dt, t->int_data, &rng);
    else
        for (int64_t g = 0; g < t->groups; g++)
            if (t->lens[g] > 0)
                fill_codes(b->b + (size_t)(g * b->sb) * code_bytes(b->b_dt), t->n * b->ldb,
                           b->b_dt, t->int_data, &rng);
    if (scaled) {
        b->a_scale = draw_scale(t->int_data, -1, 2, &rng);
        for (int64_t g = 0; g < MAX_GROUPS; g++) /* wgrad reads b_scale[0] only */
            b->b_scale[g] = wgrad && g > 0 ? NAN : draw_scale(t->int_data, -4, 4, &rng);
    }
    b->ws_bytes = b->kern->workspace_bytes(&b->p);
    b->ws = ws_alloc(b->ws_bytes, poison);
}

static inline void teardown(struct tbuf *b)
{
    free(b->a);
    if (b->b_mapped)
        munmap(b->b, (size_t)b->b_len * code_bytes(b->b_dt));
    else
        free(b->b);
    free(b->c);
    free(b->ws);
}

/* The operands of b: scales only for fp8 inputs, group arrays from the kernel-side copies. */
static inline struct gg_operands operands(struct tbuf *b)
{
    int scaled = b->p.scaling == GG_SCALING_TENSOR;
    return (struct gg_operands){.a = b->a, .b = b->b, .c = b->c,
                                .a_scale = scaled ? &b->a_scale : NULL,
                                .b_scale = scaled ? b->b_scale : NULL, .workspace = b->ws,
                                .workspace_bytes = b->ws_bytes, .group_lens_dev = b->lens_dev,
                                .group_offs_dev = b->offs_dev};
}

static inline enum gg_status run_kernel(struct tbuf *b, char *err, size_t err_len)
{
    struct gg_operands o = operands(b);
    err[0] = '\0';
    return b->kern->run(&b->p, &o, err, err_len);
}

/* ---- the reference --------------------------------------------------------------------- */

/* How the reference reads the operands: as the correct kernel does (all fields zero, or a NULL
   model), or as a mutant does. */
struct read_model {
    const int64_t *weights_of; /* expert whose weights group g reads (NULL: g itself) */
    int base_i32;   /* expert base g·stride_b cut to its low 32 bits, read as a signed value */
    int offset_u32; /* every element offset (the byte offset of an fp8 code) modulo 2^32 */
    enum gg_dtype a_as, b_as; /* decode the codes of A / B as these dtypes (NONE: their own) */
};

/* Group g's block of C: rows x cols, reduction length red, element (i, j) at c_at(). */
static inline void block_dims(const struct tcase *t, const struct tbuf *b, int64_t g,
                              int64_t *rows, int64_t *cols, int64_t *red)
{
    int64_t len = b->lens[g];
    *rows = t->op == GG_OP_GROUPED_WGRAD ? t->n : len;
    *cols = row_len_c(t);
    *red = t->op == GG_OP_GROUPED_FWD ? t->k : t->op == GG_OP_GROUPED_DGRAD ? t->n : len;
}

static inline int64_t c_at(const struct tcase *t, const struct tbuf *b, int64_t g, int64_t i,
                           int64_t j)
{
    if (t->op == GG_OP_GROUPED_WGRAD)
        return g * b->sc + i * b->ldc + j;
    return (b->offs[g] + i) * b->ldc + j;
}

/* The value of code i of x (dtype dt, decoded as `as` when set): bf16 by the test's own codec. */
static inline double code_value(enum gg_dtype dt, enum gg_dtype as, const uint8_t *x, int64_t i)
{
    uint32_t code = code_at(dt, x, i);
    if (dt == GG_DTYPE_BF16)
        return (double)bf16_decode((uint16_t)code);
    return gg_decode(as ? as : dt, code);
}

/* Where expert wg's weights start, as model m reads it. */
static inline int64_t weight_base(const struct tbuf *b, int64_t wg, const struct read_model *m)
{
    int64_t base = wg * b->sb;
    if (m && m->base_i32) {
        int64_t low = base & INT64_C(0xFFFFFFFF);
        return low >= INT64_C(0x80000000) ? low - (INT64_C(1) << 32) : low;
    }
    return base;
}

/* The element offset actually read for offset off under model m. */
static inline int64_t read_offset(int64_t off, const struct read_model *m)
{
    return m && m->offset_u32 ? off & INT64_C(0xFFFFFFFF) : off;
}

/* Element r of reduction vector v of side which (0: A, 1: B) of group g, the weights of group g
   starting at wbase: fwd A row v of X_g, B row v of W_g; dgrad A row v of dY_g, B column v of
   W_g; wgrad A column v of dY_g, B column v of X_g. */
static inline int64_t elem_of(const struct tcase *t, const struct tbuf *b, int which, int64_t g,
                              int64_t v, int64_t r, int64_t wbase)
{
    switch (t->op) {
    case GG_OP_GROUPED_FWD:
        return which ? wbase + v * b->ldb + r : (b->offs[g] + v) * b->lda + r;
    case GG_OP_GROUPED_DGRAD:
        return which ? wbase + r * b->ldb + v : (b->offs[g] + v) * b->lda + r;
    default:
        return which ? (b->offs[g] + r) * b->ldb + v : (b->offs[g] + r) * b->lda + v;
    }
}

/* Decodes reduction vector v of side which of group g into out[0 .. red), read as model m (NULL:
   the correct kernel) reads it: the row or column (i, or j, of the output block), from the
   expert base and offsets the model computes, each code decoded as the model decodes it. */
static inline void gather(const struct tcase *t, const struct tbuf *b, int which, int64_t g,
                          int64_t v, const struct read_model *m, double *out)
{
    int64_t rows, cols, red;
    block_dims(t, b, g, &rows, &cols, &red);
    int64_t wbase = weight_base(b, m && m->weights_of ? m->weights_of[g] : g, m);
    enum gg_dtype dt = which ? b->b_dt : b->a_dt;
    enum gg_dtype as = m == NULL ? GG_DTYPE_NONE : which ? m->b_as : m->a_as;
    const uint8_t *x = which ? b->b : b->a;
    for (int64_t r = 0; r < red; r++)
        out[r] = code_value(dt, as, x, read_offset(elem_of(t, b, which, g, v, r, wbase), m));
}

/* Σ a·w over n terms in order, and Σ|aw|: the products of bf16 or fp8 values are exact in
   double, and the inputs are small enough that the double sum's rounding is far below the fp32
   bound. */
static inline void dot(const double *a, const double *w, int64_t n, double *sum, double *abs_sum)
{
    double s = 0.0, s_abs = 0.0;
    for (int64_t r = 0; r < n; r++) {
        double prod = a[r] * w[r];
        s += prod;
        s_abs += fabs(prod);
    }
    *sum = s;
    *abs_sum = s_abs;
}

/* The scale a_scale · b_scale of group g (exact in double; 1 without scaling). */
static inline double scale_of(const struct tcase *t, const struct tbuf *b, int64_t g)
{
    if (b->p.scaling != GG_SCALING_TENSOR)
        return 1.0;
    return (double)b->a_scale * (double)b->b_scale[t->op == GG_OP_GROUPED_WGRAD ? 0 : g];
}

/* The exact sum Σ a·b of element (i, j) of group g and Σ|ab|, with the operands read as model m
   reads them; returns the scale of the group. */
static inline double ref_element(const struct tcase *t, const struct tbuf *b, int64_t g,
                                 int64_t i, int64_t j, const struct read_model *m, double *sum,
                                 double *abs_sum)
{
    int64_t rows, cols, red;
    block_dims(t, b, g, &rows, &cols, &red);
    double *va = xcalloc(red, sizeof(double)), *vb = xcalloc(red, sizeof(double));
    gather(t, b, 0, g, i, m, va);
    gather(t, b, 1, g, j, m, vb);
    dot(va, vb, red, sum, abs_sum);
    free(va);
    free(vb);
    return scale_of(t, b, g);
}

/*
 * Checks every logical element against the reference read as model m (NULL: the correct
 * product) within within_fp32_bound() over h = red + split roundings (split-K adds up to
 * split-1 additions of partials), plus 2 with fp8 scales (the fp32 scale product and the
 * scaling, relative to |acc| <= Σ|ab|, so the Σ|ab| term is |s|·Σ|ab|); bitwise RN_fp32 when
 * exact. Then every other element of the buffer (row padding, group padding, guard) must still
 * hold the sentinel. Returns the number of violations and logs the first as information (the
 * assertion on the count is the failure; for a mutant a violation is the expected outcome).
 */
static inline int64_t check_against(const struct tcase *t, const struct tbuf *b,
                                    const struct read_model *m, int exact)
{
    char *logical = xcalloc(b->c_len, 1);
    int64_t bad = 0, split = split_of(t), scaled = b->p.scaling == GG_SCALING_TENSOR;
    for (int64_t g = 0; g < t->groups; g++) {
        int64_t rows, cols, red;
        block_dims(t, b, g, &rows, &cols, &red);
        if (rows == 0 || cols == 0)
            continue; /* no outputs, and (an empty expert's) operands are not read */
        double s = scale_of(t, b, g);
        double *va = xcalloc(red, sizeof(double)), *vb = xcalloc(cols * red, sizeof(double));
        for (int64_t j = 0; j < cols; j++)
            gather(t, b, 1, g, j, m, vb + j * red);
        for (int64_t i = 0; i < rows; i++) {
            gather(t, b, 0, g, i, m, va);
            for (int64_t j = 0; j < cols; j++) {
                int64_t at = c_at(t, b, g, i, j);
                logical[at] = 1;
                double sum, sum_abs, out = out_value(b->c, t->c_dtype, at);
                dot(va, vb + j * red, red, &sum, &sum_abs);
                int ok = !is_sentinel(b->c, t->c_dtype, at) &&
                         within_fp32_bound(t->c_dtype, out, s * sum, fabs(s) * sum_abs,
                                           red + split + 2 * scaled, ldexp(1.0, -126), exact);
                if (!ok && bad++ == 0)
                    cr_log_info("%s%s%s op %d %s x %s -> %s split %lld: group %lld element "
                                "(%lld, %lld) is %.9g, reference %.9g (sum|ab| %.3g)",
                                b->kern->name, t->mutant ? " mutant " : "",
                                t->mutant ? t->mutant : "", (int)t->op, gg_dtype_name(b->a_dt),
                                gg_dtype_name(b->b_dt), gg_dtype_name(t->c_dtype),
                                (long long)split, (long long)g, (long long)i, (long long)j, out,
                                s * sum, fabs(s) * sum_abs);
            }
        }
        free(va);
        free(vb);
    }
    int64_t first, stray = stray_writes(b->c, t->c_dtype, b->c_len, logical, &first);
    if (stray > 0 && bad == 0)
        cr_log_info("%s op %d split %lld: element %lld outside the output was written",
                    b->kern->name, (int)t->op, (long long)split, (long long)first);
    free(logical);
    return bad + stray;
}

/* check_against() the correct product, exactly when the data make every sum exact in f32. */
static inline int64_t check_output(const struct tcase *t, const struct tbuf *b)
{
    return check_against(t, b, NULL, t->int_data && t->c_dtype == GG_DTYPE_F32);
}

/* Runs one case and checks it, including the workspace guard band; returns the number of
   violations. */
static inline int64_t run_and_check(const struct tcase *t)
{
    struct tbuf b;
    setup(t, &b, 0xFF);
    char err[256];
    enum gg_status st = run_kernel(&b, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s run failed: %s", b.kern->name, err);
    int64_t bad = check_output(t, &b);
    int64_t hits = ws_guard_hits(b.ws, b.ws_bytes);
    if (hits > 0)
        cr_log_info("%s: %lld bytes past the reported workspace written", b.kern->name,
                    (long long)hits);
    teardown(&b);
    return bad + hits;
}

/* ---- shape catalogue ------------------------------------------------------------------- */

/* Fixed group patterns (relative to the tile) followed by random ones: sizes 0, 1, tile-1,
   tile, tile+1, empty groups first, last and everywhere, all groups empty, and groups on
   either side of the reduction step. */
#define N_FIXED_PATTERNS 9
static inline void pattern(struct tcase *t, int idx, int64_t tile, int64_t tile_red,
                           uint64_t *rng)
{
    switch (idx) {
    case 0: set_lens(t, 5, (const int64_t[]){0, 1, tile - 1, tile, tile + 1}); break;
    case 1: set_lens(t, 3, (const int64_t[]){0, 0, 0}); break;
    case 2: set_lens(t, 5, (const int64_t[]){0, tile + 1, 0, 3, 0}); break;
    case 3: set_lens(t, 1, (const int64_t[]){2 * tile + 5}); break;
    case 4: set_lens(t, 3, (const int64_t[]){5, 0, 0}); break;
    case 5: set_lens(t, 3, (const int64_t[]){0, 0, 7}); break;
    case 6: set_lens(t, 3, (const int64_t[]){5, 0, 7}); break;
    case 7: set_lens(t, 2, (const int64_t[]){tile_red + 1, tile_red}); break;
    case 8: set_lens(t, 2, (const int64_t[]){tile_red + 1, tile_red - 1}); break;
    default: {
        const int64_t choice[] = {0, 1, tile - 1, tile, tile + 1, 0, 2};
        t->groups = 1 + splitmix_below(rng, 6);
        for (int64_t g = 0; g < t->groups; g++)
            t->lens[g] = splitmix_below(rng, 3) == 0 ? splitmix_below(rng, 2 * tile)
                                                     : choice[splitmix_below(rng, 7)];
        break;
    }
    }
}

/* N or K around the tile edges (the reduction step tile_red for the reduction dimension). */
static inline int64_t pick_dim(uint64_t *rng, int64_t tile, int64_t tile_red, int is_red)
{
    const int64_t small[] = {1, 7, tile - 1, tile, tile + 1, 2 * tile + 3};
    if (is_red && splitmix_below(rng, 3) == 0)
        return tile_red + 1 - 2 * splitmix_below(rng, 2); /* tile_k ± 1 */
    return small[splitmix_below(rng, 6)];
}

/* Random padding on every leading dimension and stride (pad_c at least pad_c_min). */
static inline void draw_padding(struct tcase *t, int64_t pad_c_min, uint64_t *rng)
{
    t->pad_a = splitmix_below(rng, 2) * 3;
    t->pad_b = splitmix_below(rng, 2) * 5;
    t->pad_c = splitmix_below(rng, 2) * 2 + pad_c_min;
    t->pad_sb = splitmix_below(rng, 2) * 11;
    t->pad_sc = splitmix_below(rng, 2) * 13;
}

/* Shape idx of the catalogue for t->op on kernel k: group pattern idx (relative to the row
   tile, for wgrad to the reduction step), N and K around the tile edges (fwd reduces over K,
   dgrad over N, wgrad over the group sizes), random padding, and the data seed. */
static inline void catalogue_shape(struct tcase *t, int idx, const struct gg_kernel *k,
                                   uint64_t *rng)
{
    int wgrad = t->op == GG_OP_GROUPED_WGRAD;
    pattern(t, idx, wgrad ? k->tile_k : k->tile_m, k->tile_k, rng);
    t->n = pick_dim(rng, wgrad ? k->tile_m : k->tile_n, k->tile_k, t->op == GG_OP_GROUPED_DGRAD);
    t->k = pick_dim(rng, k->tile_n, k->tile_k, t->op == GG_OP_GROUPED_FWD);
    draw_padding(t, idx % 2, rng);
    t->seed = splitmix64(rng);
}

/* ---- properties every grouped kernel has ------------------------------------------------- */

/* The bits of every element of group g's dW block are zero (+0). */
static inline int64_t count_nonzero_block(const struct tcase *t, const struct tbuf *b, int64_t g)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < t->n; i++)
        for (int64_t j = 0; j < t->k; j++)
            bad += out_bits(b->c, t->c_dtype, c_at(t, b, g, i, j)) != 0;
    return bad;
}

/* wgrad case t: a group with M_g = 0 (a reduction of length 0) owns an N x K block of exact
   zeros, and the whole output passes. */
static inline void expect_empty_wgrad_groups_zero(const struct tcase *t)
{
    struct tbuf b;
    char err[256];
    setup(t, &b, 0xFF);
    cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    for (int64_t g = 0; g < t->groups; g++)
        if (t->lens[g] == 0)
            cr_expect_eq(count_nonzero_block(t, &b, g), 0,
                         "%s c %s split %lld: empty group %lld not zero", b.kern->name,
                         gg_dtype_name(t->c_dtype), (long long)t->split, (long long)g);
    cr_expect_eq(check_output(t, &b), 0);
    teardown(&b);
}

/* With split_k > 1 the output of t does not depend on the workspace's initial contents (NaN
   partials, large finite partials), nothing past the reported size is touched, and the output
   passes. */
static inline void expect_workspace_poison_independent(const struct tcase *t)
{
    struct tbuf b1, b2;
    char err[256];
    setup(t, &b1, 0xFF);
    setup(t, &b2, 0x42);
    cr_assert_gt(b1.ws_bytes, 0);
    cr_assert_eq(run_kernel(&b1, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(run_kernel(&b2, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(memcmp(b1.c, b2.c, (size_t)b1.c_len * out_elem_bytes(t->c_dtype)), 0,
                 "%s op %d split %lld: output depends on the workspace poison", b1.kern->name,
                 (int)t->op, (long long)t->split);
    cr_expect(ws_guard_hits(b1.ws, b1.ws_bytes) == 0 && ws_guard_hits(b2.ws, b2.ws_bytes) == 0,
              "%s op %d split %lld: write past the reported workspace", b1.kern->name,
              (int)t->op, (long long)t->split);
    cr_expect_eq(check_output(t, &b1), 0);
    teardown(&b1);
    teardown(&b2);
}

/* run() reads the group offsets from the kernel-side copy (group_offs_dev), like a GPU kernel:
   with the host arrays gone after workspace_bytes(), t still passes. */
static inline void expect_device_offsets_read(const struct tcase *t)
{
    struct tbuf b;
    char err[256];
    setup(t, &b, 0xFF);
    b.p.group_lens = NULL;
    b.p.group_offs = NULL;
    cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(check_output(t, &b), 0, "%s op %d", b.kern->name, (int)t->op);
    teardown(&b);
}

/* Sets up t (its kernel and dtypes kept) as fwd on three groups of 4, 5, 6 rows, N = K = 20,
   split_k 2, in b, and checks that run() refuses, as GG_E_INVAL with a message, device offsets
   that do not reach m or decrease and lda below K; b is left set up for more checks. */
static inline void setup_and_expect_inconsistent_refused(struct tcase *t, struct tbuf *b)
{
    char err[256];
    t->op = GG_OP_GROUPED_FWD;
    t->split = 2;
    t->n = t->k = 20;
    t->seed = 1;
    set_lens(t, 3, (const int64_t[]){4, 5, 6});
    setup(t, b, 0);
    b->offs_dev[3] = 14; /* does not reach m */
    cr_expect_eq(run_kernel(b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b->offs_dev[3] = 15;
    b->offs_dev[2] = 3; /* decreasing */
    cr_expect_eq(run_kernel(b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b->offs_dev[2] = 9;
    int64_t lda = b->p.lda;
    b->p.lda = 5; /* below K */
    cr_expect_eq(run_kernel(b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b->p.lda = lda;
}

/* What every grouped kernel does with p, a grouped problem it takes whose first option is
   split_k: expect_common_supports(); accepts every grouped op; refuses the other ops and split_k
   outside 1..64, and accepts split_k 64. */
static inline void expect_grouped_supports(const struct gg_kernel *k, struct gg_problem p)
{
    expect_common_supports(k, p);
    struct gg_problem q;
    for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++)
        q = p, q.op = (enum gg_op)op, expect_accepted(k, q, gg_op_name(q.op));
    for (int op = GG_OP_BATCHED; op < GG_OP_COUNT; op++)
        q = p, q.op = (enum gg_op)op, expect_refused(k, q, "grouped");
    struct gg_kopt opts[2 + MAX_EXTRA_OPTS];
    cr_assert(p.n_opts >= 1 && p.n_opts <= 2 + MAX_EXTRA_OPTS);
    cr_assert_str_eq(p.opts[0].key, "split_k");
    memcpy(opts, p.opts, (size_t)p.n_opts * sizeof *opts);
    q = p, q.opts = opts;
    const int64_t bad_splits[] = {0, -1, 65, 1000};
    for (int i = 0; i < 4; i++) {
        opts[0].value = bad_splits[i];
        expect_refused(k, q, "split_k");
    }
    opts[0].value = 64;
    expect_accepted(k, q, "split_k 64");
}

#endif /* GROUPED_FIXTURE_H */

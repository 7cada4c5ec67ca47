/*
 * grouped_bf16_fixture.h — one materialised case of a BF16 grouped kernel for the kernel tests:
 * the problem (kernel, op, options, mutant, padded leading dimensions), inputs drawn from the
 * tests' own generator, C pre-filled with a NaN sentinel plus a guard, a poisoned workspace of
 * exactly the reported size followed by a guard band, and a naive double-precision reference
 * with the per-element error bound the kernels must meet.
 */
#ifndef GROUPED_BF16_FIXTURE_H
#define GROUPED_BF16_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gg_kernel.h"
#include "splitmix.h"

#define MAX_GROUPS 24
#define MAX_EXTRA_OPTS 4
#define GUARD_ELEMS 64
#define WS_GUARD_BYTES 8192
#define WS_GUARD_BYTE 0xA7u
#define SENTINEL_BF16 0x7FA5u /* a NaN no correct kernel writes */
#define SENTINEL_F32 0x7FA5A5A5u

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
    enum gg_dtype c_dtype;
    int64_t split;
    int64_t groups;
    int64_t lens[MAX_GROUPS];
    int64_t n, k;
    int64_t pad_a, pad_b, pad_c, pad_sb, pad_sc; /* extra elements per row / per group */
    int packed;   /* leave every leading dimension and stride 0 for the kernel to resolve */
    int int_data; /* small integers: every partial sum is exact in fp32 */
    uint64_t seed;
    struct gg_kopt extra[MAX_EXTRA_OPTS]; /* options besides split_k */
    int n_extra;
};

struct tbuf {
    const struct gg_kernel *kern;
    struct gg_problem p;
    struct gg_kopt opts[MAX_EXTRA_OPTS + 1];
    int64_t lens[MAX_GROUPS], offs[MAX_GROUPS + 1];
    int64_t lens_dev[MAX_GROUPS], offs_dev[MAX_GROUPS + 1];
    int64_t lda, ldb, ldc, sb, sc; /* resolved */
    uint16_t *a, *b;
    void *c;
    int64_t a_len, b_len, c_len; /* elements; c_len includes GUARD_ELEMS */
    unsigned char *ws;           /* ws_bytes (the reported size) + WS_GUARD_BYTES */
    size_t ws_bytes;
};

static inline const struct gg_kernel *find_kernel(const char *name)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, name ? name : "grouped_bf16_cpu_tiled") == 0)
            return list[i];
    return NULL;
}

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

static inline size_t c_elem_size(enum gg_dtype dt)
{
    return dt == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
}

static inline void fill_bf16(uint16_t *x, int64_t len, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++) {
        float v;
        if (int_data)
            v = (float)(splitmix_below(rng, 7) - 3);
        else /* uniform in ±[0, 2) times a power of two in 2^-3 .. 2^3 */
            v = ldexpf((float)splitmix_below(rng, 1 << 20) / (float)(1 << 19) - 1.0f,
                       (int)splitmix_below(rng, 7) - 3);
        x[i] = bf16_encode(v);
    }
}

static inline void fill_sentinel(void *c, enum gg_dtype dt, int64_t len)
{
    for (int64_t i = 0; i < len; i++) {
        if (dt == GG_DTYPE_BF16) {
            ((uint16_t *)c)[i] = SENTINEL_BF16;
        } else {
            uint32_t s = SENTINEL_F32;
            memcpy((float *)c + i, &s, sizeof s);
        }
    }
}

static inline int is_sentinel(const void *c, enum gg_dtype dt, int64_t i)
{
    if (dt == GG_DTYPE_BF16)
        return ((const uint16_t *)c)[i] == SENTINEL_BF16;
    uint32_t u;
    memcpy(&u, (const float *)c + i, sizeof u);
    return u == SENTINEL_F32;
}

static inline double out_value(const void *c, enum gg_dtype dt, int64_t i)
{
    return dt == GG_DTYPE_BF16 ? (double)bf16_decode(((const uint16_t *)c)[i])
                               : (double)((const float *)c)[i];
}

static inline void *xcalloc(int64_t n, size_t size)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    cr_assert_not_null(p);
    return p;
}

/* Fills C with the sentinel and the workspace with byte `poison`, its guard band with
   WS_GUARD_BYTE: the state before every run. */
static inline void repoison(struct tbuf *b, unsigned char poison)
{
    fill_sentinel(b->c, b->p.c_dtype, b->c_len);
    if (b->ws) {
        memset(b->ws, poison, b->ws_bytes);
        memset(b->ws + b->ws_bytes, WS_GUARD_BYTE, WS_GUARD_BYTES);
    }
}

/* Builds the problem and the buffers: inputs drawn from t->seed, C filled with the sentinel,
   the workspace (exactly workspace_bytes, then a guard band) filled with byte `poison`. */
static inline void setup(const struct tcase *t, struct tbuf *b, unsigned char poison)
{
    memset(b, 0, sizeof *b);
    b->kern = find_kernel(t->kernel);
    cr_assert_not_null(b->kern, "kernel %s not registered", t->kernel);
    cr_assert(t->groups <= MAX_GROUPS);
    b->offs[0] = 0;
    for (int64_t g = 0; g < t->groups; g++) {
        b->lens[g] = t->lens[g];
        b->offs[g + 1] = b->offs[g] + t->lens[g];
    }
    memcpy(b->lens_dev, b->lens, sizeof b->lens);
    memcpy(b->offs_dev, b->offs, sizeof b->offs);
    int64_t m = b->offs[t->groups];
    b->lda = row_len_a(t) + t->pad_a;
    b->ldb = t->k + t->pad_b;
    b->ldc = row_len_c(t) + t->pad_c;
    b->sb = t->n * b->ldb + t->pad_sb;
    b->sc = t->n * b->ldc + t->pad_sc;
    if (t->packed) {
        b->lda = row_len_a(t);
        b->ldb = t->k;
        b->ldc = row_len_c(t);
        b->sb = t->n * t->k;
        b->sc = t->n * t->k;
    }
    b->opts[0] = (struct gg_kopt){"split_k", t->split};
    for (int i = 0; i < t->n_extra; i++)
        b->opts[1 + i] = t->extra[i];
    b->p = (struct gg_problem){
        .op = t->op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16, .c_dtype = t->c_dtype,
        .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_NONE, .b_layout = GG_LAYOUT_NK,
        .groups = t->groups, .m = m, .n = t->n, .k = t->k,
        .lda = t->packed ? 0 : b->lda, .ldb = t->packed ? 0 : b->ldb,
        .ldc = t->packed ? 0 : b->ldc, .stride_b = t->packed ? 0 : b->sb,
        .stride_c = t->packed ? 0 : b->sc, .group_lens = b->lens, .group_offs = b->offs,
        .opts = b->opts, .n_opts = 1 + t->n_extra, .mutant = t->mutant};
    int wgrad = t->op == GG_OP_GROUPED_WGRAD;
    b->a_len = m * b->lda;
    b->b_len = wgrad ? m * b->ldb : t->groups * b->sb;
    b->c_len = (wgrad ? t->groups * b->sc : m * b->ldc) + GUARD_ELEMS;
    b->a = xcalloc(b->a_len, sizeof(uint16_t));
    b->b = xcalloc(b->b_len, sizeof(uint16_t));
    b->c = xcalloc(b->c_len, c_elem_size(t->c_dtype));
    uint64_t rng = t->seed;
    fill_bf16(b->a, b->a_len, t->int_data, &rng);
    fill_bf16(b->b, b->b_len, t->int_data, &rng);
    b->ws_bytes = b->kern->workspace_bytes(&b->p);
    if (b->ws_bytes > 0)
        b->ws = xcalloc((int64_t)(b->ws_bytes + WS_GUARD_BYTES), 1);
    repoison(b, poison);
}

static inline void teardown(struct tbuf *b)
{
    free(b->a);
    free(b->b);
    free(b->c);
    free(b->ws);
}

static inline enum gg_status run_kernel(struct tbuf *b, char *err, size_t err_len)
{
    struct gg_operands o = {.a = b->a, .b = b->b, .c = b->c, .workspace = b->ws,
                            .workspace_bytes = b->ws_bytes, .group_lens_dev = b->lens_dev,
                            .group_offs_dev = b->offs_dev};
    err[0] = '\0';
    return b->kern->run(&b->p, &o, err, err_len);
}

/* Bytes of the guard band after the reported workspace that were overwritten. */
static inline int64_t ws_guard_hits(const struct tbuf *b)
{
    int64_t hits = 0;
    for (size_t i = 0; b->ws && i < WS_GUARD_BYTES; i++)
        hits += b->ws[b->ws_bytes + i] != WS_GUARD_BYTE;
    return hits;
}

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

/* Naive reference in double for element (i, j) of group g, with the weights of group wg
   (fwd/dgrad; wg = g for the true product): the exact sum (products of bf16 values are exact
   and the inputs are small enough that the double sum's rounding is far below the fp32 bound)
   and Σ|ab|. */
static inline void ref_element_w(const struct tcase *t, const struct tbuf *b, int64_t g,
                                 int64_t wg, int64_t i, int64_t j, double *sum, double *abs_sum)
{
    int64_t rows, cols, red;
    block_dims(t, b, g, &rows, &cols, &red);
    double s = 0.0, s_abs = 0.0;
    for (int64_t r = 0; r < red; r++) {
        int64_t ia, ib;
        switch (t->op) {
        case GG_OP_GROUPED_FWD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = wg * b->sb + j * b->ldb + r;
            break;
        case GG_OP_GROUPED_DGRAD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = wg * b->sb + r * b->ldb + j;
            break;
        default:
            ia = (b->offs[g] + r) * b->lda + i;
            ib = (b->offs[g] + r) * b->ldb + j;
            break;
        }
        double prod = (double)bf16_decode(b->a[ia]) * (double)bf16_decode(b->b[ib]);
        s += prod;
        s_abs += fabs(prod);
    }
    *sum = s;
    *abs_sum = s_abs;
}

/* |out - c| <= u_o/(1-u_o)·|out| + γ_h(2^-23)·Σ|ab| + tiny, h = red + split (split-K adds up
   to split-1 additions of partials to each sum); bitwise RN_fp32(c) when exact. */
static inline int within_bound(const struct tcase *t, double out, double ref, double ref_abs,
                               int64_t red, int exact)
{
    if (exact)
        return (float)ref == (float)out;
    double u_o = t->c_dtype == GG_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -24);
    double h = (double)(red + t->split) * ldexp(1.0, -23);
    return fabs(out - ref) <= u_o / (1 - u_o) * fabs(out) + h / (1 - h) * ref_abs +
                                  ldexp(1.0, -126);
}

/*
 * Checks every logical element of group g's block against the reference computed with the
 * weights of group wg_of[g] (NULL: the group's own), then that every other element of the
 * buffer (row padding, group padding, guard) still holds the sentinel. Returns the number of
 * violations and logs the first (as information for a mutant, whose faults are expected).
 */
static inline int64_t check_output_w(const struct tcase *t, const struct tbuf *b, int exact,
                                     const int64_t *wg_of)
{
    char *logical = xcalloc(b->c_len, 1);
    int64_t bad = 0;
    for (int64_t g = 0; g < t->groups; g++) {
        int64_t rows, cols, red;
        block_dims(t, b, g, &rows, &cols, &red);
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < cols; j++) {
                int64_t at = c_at(t, b, g, i, j);
                logical[at] = 1;
                double ref, ref_abs, out = out_value(b->c, t->c_dtype, at);
                ref_element_w(t, b, g, wg_of ? wg_of[g] : g, i, j, &ref, &ref_abs);
                int ok = !is_sentinel(b->c, t->c_dtype, at) &&
                         within_bound(t, out, ref, ref_abs, red, exact);
                if (!ok && bad++ == 0)
                    cr_log(t->mutant ? CR_LOG_INFO : CR_LOG_ERROR,
                           "%s%s%s op %d c_dtype %d split %lld: group %lld element (%lld, %lld) "
                           "is %.9g, reference %.9g (sum|ab| %.3g)",
                           b->kern->name, t->mutant ? " mutant " : "", t->mutant ? t->mutant : "",
                           (int)t->op, (int)t->c_dtype, (long long)t->split, (long long)g,
                           (long long)i, (long long)j, out, ref, ref_abs);
            }
        }
    }
    for (int64_t i = 0; i < b->c_len; i++) {
        if (!logical[i] && !is_sentinel(b->c, t->c_dtype, i) && bad++ == 0)
            cr_log(t->mutant ? CR_LOG_INFO : CR_LOG_ERROR,
                   "%s op %d split %lld: element %lld outside the output was written",
                   b->kern->name, (int)t->op, (long long)t->split, (long long)i);
    }
    free(logical);
    return bad;
}

static inline int64_t check_output(const struct tcase *t, const struct tbuf *b, int exact)
{
    return check_output_w(t, b, exact, NULL);
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
    int64_t bad = check_output(t, &b, t->int_data && t->c_dtype == GG_DTYPE_F32);
    int64_t hits = ws_guard_hits(&b);
    if (hits > 0)
        cr_log_error("%s: %lld bytes past the reported workspace written", b.kern->name,
                     (long long)hits);
    teardown(&b);
    return bad + hits;
}

#endif /* GROUPED_BF16_FIXTURE_H */

/*
 * test_kernels_cpu_grouped.c — grouped_bf16_cpu_tiled against a naive double-precision loop:
 * fwd, dgrad and wgrad with bf16 and f32 output and split_k 1..3, on group sizes and N, K on
 * either side of the tile edges, empty groups in every position, and padded leading dimensions
 * whose padding must stay untouched. Also: exact results on small-integer data, output
 * independence from the workspace's initial contents, supports() and workspace_bytes().
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gg_kernel.h"

#define MAX_GROUPS 16
#define GUARD_ELEMS 64
#define SENTINEL_BF16 0x7FA5u     /* a NaN no correct kernel writes */
#define SENTINEL_F32 0x7FA5A5A5u

/* ---- test's own bf16 codec and random numbers ------------------------------------------- */

static float bf16_decode(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* RNE; only finite inputs are encoded by this test. */
static uint16_t bf16_encode(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t rng_below(uint64_t *s, int64_t n)
{
    return (int64_t)(rng_next(s) % (uint64_t)n);
}

/* ---- one materialised case ------------------------------------------------------------- */

struct tcase {
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
};

struct tbuf {
    struct gg_problem p;
    struct gg_kopt opt;
    int64_t lens[MAX_GROUPS], offs[MAX_GROUPS + 1];
    int64_t offs_dev[MAX_GROUPS + 1];
    int64_t lda, ldb, ldc, sb, sc; /* resolved */
    uint16_t *a, *b;
    void *c;
    int64_t a_len, b_len, c_len; /* elements; c_len includes GUARD_ELEMS */
    void *ws;
    size_t ws_bytes;
};

static const struct gg_kernel *kernel(void)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, "grouped_bf16_cpu_tiled") == 0)
            return list[i];
    return NULL;
}

static int64_t row_len_a(const struct tcase *t)
{
    return t->op == GG_OP_GROUPED_FWD ? t->k : t->n;
}

static int64_t row_len_c(const struct tcase *t)
{
    return t->op == GG_OP_GROUPED_FWD ? t->n : t->k;
}

static void fill_bf16(uint16_t *x, int64_t len, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++) {
        float v;
        if (int_data)
            v = (float)(rng_below(rng, 7) - 3);
        else /* uniform in ±[0, 2) times a power of two in 2^-3 .. 2^3 */
            v = ldexpf((float)rng_below(rng, 1 << 20) / (float)(1 << 19) - 1.0f,
                       (int)rng_below(rng, 7) - 3);
        x[i] = bf16_encode(v);
    }
}

static void fill_sentinel(void *c, enum gg_dtype dt, int64_t len)
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

static int is_sentinel(const void *c, enum gg_dtype dt, int64_t i)
{
    if (dt == GG_DTYPE_BF16)
        return ((const uint16_t *)c)[i] == SENTINEL_BF16;
    uint32_t u;
    memcpy(&u, (const float *)c + i, sizeof u);
    return u == SENTINEL_F32;
}

static double out_value(const void *c, enum gg_dtype dt, int64_t i)
{
    return dt == GG_DTYPE_BF16 ? (double)bf16_decode(((const uint16_t *)c)[i])
                               : (double)((const float *)c)[i];
}

static void *xcalloc(int64_t n, size_t size)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    cr_assert_not_null(p);
    return p;
}

/* Builds the problem and the buffers: inputs drawn from t->seed, C filled with the sentinel,
   the workspace (exactly workspace_bytes) filled with byte `poison`. */
static void setup(const struct tcase *t, struct tbuf *b, unsigned char poison)
{
    memset(b, 0, sizeof *b);
    cr_assert(t->groups <= MAX_GROUPS);
    b->offs[0] = 0;
    for (int64_t g = 0; g < t->groups; g++) {
        b->lens[g] = t->lens[g];
        b->offs[g + 1] = b->offs[g] + t->lens[g];
    }
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
    b->opt = (struct gg_kopt){"split_k", t->split};
    b->p = (struct gg_problem){
        .op = t->op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16, .c_dtype = t->c_dtype,
        .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_NONE, .b_layout = GG_LAYOUT_NK,
        .groups = t->groups, .m = m, .n = t->n, .k = t->k,
        .lda = t->packed ? 0 : b->lda, .ldb = t->packed ? 0 : b->ldb,
        .ldc = t->packed ? 0 : b->ldc, .stride_b = t->packed ? 0 : b->sb,
        .stride_c = t->packed ? 0 : b->sc, .group_lens = b->lens, .group_offs = b->offs,
        .opts = &b->opt, .n_opts = 1, .mutant = NULL};
    int wgrad = t->op == GG_OP_GROUPED_WGRAD;
    b->a_len = m * b->lda;
    b->b_len = wgrad ? m * b->ldb : t->groups * b->sb;
    b->c_len = (wgrad ? t->groups * b->sc : m * b->ldc) + GUARD_ELEMS;
    b->a = xcalloc(b->a_len, sizeof(uint16_t));
    b->b = xcalloc(b->b_len, sizeof(uint16_t));
    b->c = xcalloc(b->c_len, t->c_dtype == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float));
    uint64_t rng = t->seed;
    fill_bf16(b->a, b->a_len, t->int_data, &rng);
    fill_bf16(b->b, b->b_len, t->int_data, &rng);
    fill_sentinel(b->c, t->c_dtype, b->c_len);
    b->ws_bytes = kernel()->workspace_bytes(&b->p);
    if (b->ws_bytes > 0) {
        b->ws = malloc(b->ws_bytes);
        cr_assert_not_null(b->ws);
        memset(b->ws, poison, b->ws_bytes);
    }
}

static void teardown(struct tbuf *b)
{
    free(b->a);
    free(b->b);
    free(b->c);
    free(b->ws);
}

static enum gg_status run_kernel(struct tbuf *b, char *err, size_t err_len)
{
    struct gg_operands o = {.a = b->a, .b = b->b, .c = b->c, .workspace = b->ws,
                            .workspace_bytes = b->ws_bytes, .group_lens_dev = b->lens,
                            .group_offs_dev = b->offs_dev};
    err[0] = '\0';
    return kernel()->run(&b->p, &o, err, err_len);
}

/* Group g's block of C: rows x cols, reduction length red, element (i, j) at c_at(). */
static void block_dims(const struct tcase *t, const struct tbuf *b, int64_t g, int64_t *rows,
                       int64_t *cols, int64_t *red)
{
    int64_t len = b->lens[g];
    *rows = t->op == GG_OP_GROUPED_WGRAD ? t->n : len;
    *cols = row_len_c(t);
    *red = t->op == GG_OP_GROUPED_FWD ? t->k : t->op == GG_OP_GROUPED_DGRAD ? t->n : len;
}

static int64_t c_at(const struct tcase *t, const struct tbuf *b, int64_t g, int64_t i, int64_t j)
{
    if (t->op == GG_OP_GROUPED_WGRAD)
        return g * b->sc + i * b->ldc + j;
    return (b->offs[g] + i) * b->ldc + j;
}

/* Naive reference in double: the exact sum (products of bf16 values are exact and the inputs
   are small enough that the double sum's rounding is far below the fp32 bound) and Σ|ab|. */
static void ref_element(const struct tcase *t, const struct tbuf *b, int64_t g, int64_t i,
                        int64_t j, double *sum, double *abs_sum)
{
    int64_t rows, cols, red;
    block_dims(t, b, g, &rows, &cols, &red);
    double s = 0.0, s_abs = 0.0;
    for (int64_t r = 0; r < red; r++) {
        int64_t ia, ib;
        switch (t->op) {
        case GG_OP_GROUPED_FWD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = g * b->sb + j * b->ldb + r;
            break;
        case GG_OP_GROUPED_DGRAD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = g * b->sb + r * b->ldb + j;
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

/*
 * Checks every logical element against the reference with
 *   |out - c| <= u_o/(1-u_o)·|out| + γ_h(2^-23)·Σ|ab| + tiny,  h = red + split
 * (split-K adds up to split-1 additions of partials to each sum), or bitwise equality with
 * RN_fp32(c) when exact; then that every other element of the buffer (row padding, group
 * padding, guard) still holds the sentinel. Returns the number of violations.
 */
static int64_t check_output(const struct tcase *t, const struct tbuf *b, int exact)
{
    char *logical = xcalloc(b->c_len, 1);
    double u_o = t->c_dtype == GG_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -24);
    double tiny = ldexp(1.0, -126);
    int64_t bad = 0;
    for (int64_t g = 0; g < t->groups; g++) {
        int64_t rows, cols, red;
        block_dims(t, b, g, &rows, &cols, &red);
        double h = (double)(red + t->split) * ldexp(1.0, -23);
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < cols; j++) {
                int64_t at = c_at(t, b, g, i, j);
                logical[at] = 1;
                double ref, ref_abs, out = out_value(b->c, t->c_dtype, at);
                ref_element(t, b, g, i, j, &ref, &ref_abs);
                int ok = exact ? (float)ref == (float)out && !is_sentinel(b->c, t->c_dtype, at)
                               : fabs(out - ref) <= u_o / (1 - u_o) * fabs(out) +
                                                        h / (1 - h) * ref_abs + tiny;
                if (!ok && bad++ == 0)
                    cr_log_error("op %d c_dtype %d split %lld: group %lld element (%lld, %lld) "
                                 "is %.9g, reference %.9g (sum|ab| %.3g)",
                                 (int)t->op, (int)t->c_dtype, (long long)t->split, (long long)g,
                                 (long long)i, (long long)j, out, ref, ref_abs);
            }
        }
    }
    for (int64_t i = 0; i < b->c_len; i++) {
        if (!logical[i] && !is_sentinel(b->c, t->c_dtype, i) && bad++ == 0)
            cr_log_error("op %d split %lld: element %lld outside the output was written",
                         (int)t->op, (long long)t->split, (long long)i);
    }
    free(logical);
    return bad;
}

/* Runs one case and checks it; returns the number of violations. */
static int64_t run_and_check(const struct tcase *t)
{
    struct tbuf b;
    setup(t, &b, 0xFF);
    char err[256];
    enum gg_status st = run_kernel(&b, err, sizeof err);
    cr_assert_eq(st, GG_OK, "run failed: %s", err);
    int64_t bad = check_output(t, &b, t->int_data && t->c_dtype == GG_DTYPE_F32);
    teardown(&b);
    return bad;
}

/* ---- shape catalogue ------------------------------------------------------------------- */

static void set_lens(struct tcase *t, int64_t groups, const int64_t *lens)
{
    t->groups = groups;
    for (int64_t g = 0; g < groups; g++)
        t->lens[g] = lens[g];
}

/* Fixed group patterns (relative to the tile) followed by random ones: sizes 0, 1, tile-1,
   tile, tile+1, empty groups first, last and everywhere, and all groups empty. */
#define N_FIXED_PATTERNS 7
static void pattern(struct tcase *t, int idx, int64_t tile, int64_t tile_red, uint64_t *rng)
{
    switch (idx) {
    case 0: set_lens(t, 5, (const int64_t[]){0, 1, tile - 1, tile, tile + 1}); break;
    case 1: set_lens(t, 3, (const int64_t[]){0, 0, 0}); break;
    case 2: set_lens(t, 5, (const int64_t[]){0, tile + 1, 0, 3, 0}); break;
    case 3: set_lens(t, 1, (const int64_t[]){2 * tile + 5}); break;
    case 4: set_lens(t, 3, (const int64_t[]){5, 0, 0}); break;
    case 5: set_lens(t, 3, (const int64_t[]){0, 0, 7}); break;
    case 6: set_lens(t, 2, (const int64_t[]){tile_red + 1, tile_red}); break;
    default: {
        const int64_t choice[] = {0, 1, tile - 1, tile, tile + 1, 0, 2};
        t->groups = 1 + rng_below(rng, 6);
        for (int64_t g = 0; g < t->groups; g++)
            t->lens[g] = rng_below(rng, 3) == 0 ? rng_below(rng, 2 * tile)
                                                 : choice[rng_below(rng, 7)];
        break;
    }
    }
}

/* N and K around the tile edges (the reduction step TILE_K for the reduction dimension). */
static int64_t pick_dim(uint64_t *rng, int64_t tile, int64_t tile_red, int is_red)
{
    const int64_t small[] = {1, 7, tile - 1, tile, tile + 1, 2 * tile + 3};
    if (is_red && rng_below(rng, 4) == 0)
        return tile_red + 1 - 2 * rng_below(rng, 2); /* tile_k ± 1 */
    return small[rng_below(rng, 6)];
}

/* fwd, dgrad or wgrad with one output dtype over split_k 1..3 and every pattern. */
static void run_matrix(enum gg_op op, enum gg_dtype c_dtype, uint64_t seed)
{
    const struct gg_kernel *k = kernel();
    cr_assert_not_null(k);
    uint64_t rng = seed;
    for (int64_t split = 1; split <= 3; split++) {
        for (int idx = 0; idx < N_FIXED_PATTERNS + 10; idx++) {
            struct tcase t = {.op = op, .c_dtype = c_dtype, .split = split};
            int64_t tile = op == GG_OP_GROUPED_WGRAD ? k->tile_k : k->tile_m;
            pattern(&t, idx, tile, k->tile_k, &rng);
            /* fwd reduces over K, dgrad over N; wgrad over the group sizes drawn above */
            t.n = pick_dim(&rng, op == GG_OP_GROUPED_WGRAD ? k->tile_m : k->tile_n, k->tile_k,
                           op == GG_OP_GROUPED_DGRAD);
            t.k = pick_dim(&rng, k->tile_n, k->tile_k, op == GG_OP_GROUPED_FWD);
            t.pad_a = rng_below(&rng, 2) * 3;
            t.pad_b = rng_below(&rng, 2) * 5;
            t.pad_c = rng_below(&rng, 2) * 2 + (idx % 2);
            t.pad_sb = rng_below(&rng, 2) * 11;
            t.pad_sc = rng_below(&rng, 2) * 13;
            t.seed = rng_next(&rng);
            int64_t bad = run_and_check(&t);
            cr_expect_eq(bad, 0,
                         "op %d c_dtype %d split %lld pattern %d (G %lld, N %lld, K %lld): %lld "
                         "bad elements",
                         (int)op, (int)c_dtype, (long long)split, idx, (long long)t.groups,
                         (long long)t.n, (long long)t.k, (long long)bad);
        }
    }
}

Test(kernels_cpu_grouped, fwd_bf16) { run_matrix(GG_OP_GROUPED_FWD, GG_DTYPE_BF16, 11); }
Test(kernels_cpu_grouped, fwd_f32) { run_matrix(GG_OP_GROUPED_FWD, GG_DTYPE_F32, 12); }
Test(kernels_cpu_grouped, dgrad_bf16) { run_matrix(GG_OP_GROUPED_DGRAD, GG_DTYPE_BF16, 13); }
Test(kernels_cpu_grouped, dgrad_f32) { run_matrix(GG_OP_GROUPED_DGRAD, GG_DTYPE_F32, 14); }
Test(kernels_cpu_grouped, wgrad_bf16) { run_matrix(GG_OP_GROUPED_WGRAD, GG_DTYPE_BF16, 15); }
Test(kernels_cpu_grouped, wgrad_f32) { run_matrix(GG_OP_GROUPED_WGRAD, GG_DTYPE_F32, 16); }

/* ---- empty groups ---------------------------------------------------------------------- */

/* fwd and dgrad with every group empty write nothing (check_output: everything is padding). */
Test(kernels_cpu_grouped, all_groups_empty_fwd_dgrad_write_nothing)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    enum gg_dtype dts[] = {GG_DTYPE_BF16, GG_DTYPE_F32};
    for (int o = 0; o < 2; o++)
        for (int d = 0; d < 2; d++)
            for (int64_t split = 1; split <= 3; split++) {
                struct tcase t = {.op = ops[o], .c_dtype = dts[d], .split = split, .n = 70,
                                  .k = 33, .seed = 5};
                set_lens(&t, 4, (const int64_t[]){0, 0, 0, 0});
                cr_expect_eq(run_and_check(&t), 0, "op %d dtype %d split %lld", (int)ops[o],
                             (int)dts[d], (long long)split);
            }
}

/* Bitwise +0 in every element of group g's dW block. */
static int64_t count_nonzero_block(const struct tcase *t, const struct tbuf *b, int64_t g)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < t->n; i++)
        for (int64_t j = 0; j < t->k; j++) {
            int64_t at = c_at(t, b, g, i, j);
            uint32_t bits = 0;
            if (t->c_dtype == GG_DTYPE_BF16)
                bits = ((const uint16_t *)b->c)[at];
            else
                memcpy(&bits, (const float *)b->c + at, sizeof bits);
            bad += bits != 0;
        }
    return bad;
}

/* wgrad: a group with M_g = 0 (a reduction of length 0) owns an N x K block of exact zeros,
   whether every group is empty or only some, for any split_k. */
Test(kernels_cpu_grouped, wgrad_empty_groups_write_exact_zeros)
{
    const int64_t patterns[][4] = {{0, 0, 0, 0}, {0, 9, 0, 300}, {65, 0, 0, 1}};
    enum gg_dtype dts[] = {GG_DTYPE_BF16, GG_DTYPE_F32};
    for (int pi = 0; pi < 3; pi++)
        for (int d = 0; d < 2; d++)
            for (int64_t split = 1; split <= 5; split += 2) {
                struct tcase t = {.op = GG_OP_GROUPED_WGRAD, .c_dtype = dts[d], .split = split,
                                  .n = 67, .k = 130, .pad_c = 3, .pad_sc = 7, .seed = 9};
                set_lens(&t, 4, patterns[pi]);
                struct tbuf b;
                setup(&t, &b, 0xFF);
                char err[256];
                cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
                for (int64_t g = 0; g < t.groups; g++)
                    if (t.lens[g] == 0)
                        cr_expect_eq(count_nonzero_block(&t, &b, g), 0,
                                     "pattern %d dtype %d split %lld: empty group %lld not zero",
                                     pi, (int)dts[d], (long long)split, (long long)g);
                cr_expect_eq(check_output(&t, &b, 0), 0);
                teardown(&b);
            }
}

/* ---- exact mode, defaults, workspace ---------------------------------------------------- */

/* Small integers with f32 output: every product and partial sum is an integer below 2^24, so
   the output must equal the exact result bit for bit, whatever the summation order. */
Test(kernels_cpu_grouped, small_integers_exact_f32)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int o = 0; o < 3; o++)
        for (int64_t split = 1; split <= 3; split++) {
            struct tcase t = {.op = ops[o], .c_dtype = GG_DTYPE_F32, .split = split, .n = 129,
                              .k = 257, .pad_c = 1, .int_data = 1, .seed = 77};
            set_lens(&t, 4, (const int64_t[]){300, 0, 64, 1});
            cr_expect_eq(run_and_check(&t), 0, "op %d split %lld", (int)ops[o], (long long)split);
        }
}

/* All leading dimensions and strides 0: the kernel resolves the packed defaults itself. */
Test(kernels_cpu_grouped, zero_leading_dimensions_mean_packed)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int o = 0; o < 3; o++)
        for (int64_t split = 1; split <= 2; split++) {
            struct tcase t = {.op = ops[o], .c_dtype = GG_DTYPE_F32, .split = split, .n = 65,
                              .k = 63, .packed = 1, .int_data = 1, .seed = 3};
            set_lens(&t, 3, (const int64_t[]){70, 0, 5});
            cr_expect_eq(run_and_check(&t), 0, "op %d split %lld", (int)ops[o], (long long)split);
        }
}

/* With split_k > 1 the output must not depend on the workspace's initial contents. */
Test(kernels_cpu_grouped, split_k_output_independent_of_workspace_poison)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    const int64_t splits[] = {2, 3, 7, 64};
    for (int o = 0; o < 3; o++)
        for (int s = 0; s < 4; s++) {
            struct tcase t = {.op = ops[o], .c_dtype = GG_DTYPE_BF16, .split = splits[s],
                              .n = 100, .k = 90, .pad_c = 2, .seed = 21};
            set_lens(&t, 4, (const int64_t[]){0, 130, 3, 0});
            struct tbuf b1, b2;
            char err[256];
            setup(&t, &b1, 0xFF); /* NaN partials */
            setup(&t, &b2, 0x42); /* large finite partials */
            cr_assert_gt(b1.ws_bytes, 0);
            cr_assert_eq(run_kernel(&b1, err, sizeof err), GG_OK, "%s", err);
            cr_assert_eq(run_kernel(&b2, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(memcmp(b1.c, b2.c, (size_t)b1.c_len * sizeof(uint16_t)), 0,
                         "op %d split %lld: output depends on the workspace poison", (int)ops[o],
                         (long long)splits[s]);
            cr_expect_eq(check_output(&t, &b1, 0), 0);
            teardown(&b1);
            teardown(&b2);
        }
}

static struct gg_problem base_problem(struct gg_kopt *opt, const int64_t *lens, const int64_t *offs)
{
    return (struct gg_problem){.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                               .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_BF16,
                               .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_NONE,
                               .groups = 2, .m = 100, .n = 64, .k = 32, .group_lens = lens,
                               .group_offs = offs, .opts = opt, .n_opts = 1};
}

Test(kernels_cpu_grouped, workspace_bytes_zero_without_split_k)
{
    const struct gg_kernel *k = kernel();
    cr_assert_not_null(k);
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_kopt opt = {"split_k", 1};
    struct gg_problem p = base_problem(&opt, lens, offs);
    cr_expect_eq(k->workspace_bytes(&p), 0);
    p.n_opts = 0;
    cr_expect_eq(k->workspace_bytes(&p), 0);
    p.n_opts = 1;
    for (opt.value = 2; opt.value <= 64; opt.value *= 2)
        cr_expect_gt(k->workspace_bytes(&p), 0, "split_k %lld", (long long)opt.value);
}

/* ---- supports() and errors --------------------------------------------------------------- */

static void expect_refused(struct gg_problem p, const char *needle)
{
    char why[256] = "";
    cr_expect_eq(kernel()->supports(&p, why, sizeof why), 0, "accepted, expected '%s'", needle);
    cr_expect_neq(why[0], '\0', "no reason given");
    cr_expect_not_null(strstr(why, needle), "reason '%s' does not mention '%s'", why, needle);
}

Test(kernels_cpu_grouped, supports_refuses_with_reason)
{
    cr_assert_not_null(kernel());
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_kopt opt = {"split_k", 1};
    struct gg_problem p = base_problem(&opt, lens, offs), q;
    char why[256];
    cr_expect_eq(kernel()->supports(&p, why, sizeof why), 1);
    p.c_dtype = GG_DTYPE_F32;
    cr_expect_eq(kernel()->supports(&p, why, sizeof why), 1);
    for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++) {
        q = p;
        q.op = (enum gg_op)op;
        cr_expect_eq(kernel()->supports(&q, why, sizeof why), 1, "op %d", op);
    }
    q = p, q.a_dtype = q.b_dtype = GG_DTYPE_E4M3, expect_refused(q, "bf16");
    q = p, q.b_dtype = GG_DTYPE_E5M2, expect_refused(q, "bf16");
    q = p, q.scaling = GG_SCALING_MX, expect_refused(q, "mx");
    q = p, q.scaling = GG_SCALING_TENSOR, expect_refused(q, "scaling");
    q = p, q.c_dtype = GG_DTYPE_F16, expect_refused(q, "output");
    q = p, q.acc_dtype = GG_DTYPE_F16, expect_refused(q, "accumulator");
    q = p, q.op = GG_OP_BATCHED, expect_refused(q, "grouped");
    q = p, q.op = GG_OP_DENSE, expect_refused(q, "grouped");
    q = p, q.mutant = "no_such_mutant", expect_refused(q, "mutant");
    const int64_t bad_splits[] = {0, -1, 65, 1000};
    for (int i = 0; i < 4; i++) {
        opt.value = bad_splits[i];
        expect_refused(p, "split_k");
    }
    opt.value = 64;
    cr_expect_eq(kernel()->supports(&p, why, sizeof why), 1);
}

/* Inconsistent problems are GG_E_INVAL with a message; unsupported ones GG_E_UNSUPPORTED. */
Test(kernels_cpu_grouped, run_rejects_inconsistent_problems)
{
    struct tcase t = {.op = GG_OP_GROUPED_FWD, .c_dtype = GG_DTYPE_BF16, .split = 2, .n = 20,
                      .k = 20, .seed = 1};
    set_lens(&t, 3, (const int64_t[]){4, 5, 6});
    struct tbuf b;
    char err[256];
    setup(&t, &b, 0);

    b.offs_dev[3] = 14; /* does not reach m */
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b.offs_dev[3] = 15;
    b.offs_dev[2] = 3; /* decreasing */
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b.offs_dev[2] = 9;

    void *ws = b.ws;
    b.ws = NULL; /* split-K without its workspace */
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b.ws = ws;
    b.ws_bytes -= 1;
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    b.ws_bytes += 1;

    b.p.lda = 5; /* below K */
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b.p.lda = 0;

    b.p.scaling = GG_SCALING_MX;
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect_neq(err[0], '\0');
    b.p.scaling = GG_SCALING_NONE;

    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(check_output(&t, &b, 0), 0);
    teardown(&b);
}

/* run() reads the group offsets from the kernel-side copy (group_offs_dev), like a GPU kernel:
   with the host arrays gone after workspace_bytes() the result is unchanged. */
Test(kernels_cpu_grouped, run_reads_device_group_offsets)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int o = 0; o < 3; o++) {
        struct tcase t = {.op = ops[o], .c_dtype = GG_DTYPE_F32, .split = 2, .n = 40, .k = 70,
                          .int_data = 1, .seed = 8};
        set_lens(&t, 3, (const int64_t[]){0, 66, 2});
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0xFF);
        b.p.group_lens = NULL;
        b.p.group_offs = NULL;
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &b, 1), 0, "op %d", (int)ops[o]);
        teardown(&b);
    }
}

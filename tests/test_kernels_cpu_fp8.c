/*
 * test_kernels_cpu_fp8.c — grouped_fp8_cpu_persistent and grouped_fp8_cpu_tiled against a naive
 * double-precision loop over exactly decoded codes: fwd, dgrad and wgrad, every accepted pair of
 * OCP and fnuz FP8 inputs, bf16 and f32 output, per-expert B scales, split_k and worker counts,
 * group sizes and N, K around the tile edges, empty groups, padded leading dimensions whose
 * padding must stay untouched. Also: exact small-integer results, persistent and tiled outputs
 * bitwise equal, workspace independence and size, supports(), and each mutant of the family
 * changing the output exactly as the bug it re-creates would (the 32-bit offset mutants on a B
 * operand reserved past 4 GiB of which only the used experts are touched).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernels/gg_kernel.h"
#include "reference/gg_ref.h"
#include "splitmix.h"

#define MAX_GROUPS 8
#define GUARD_ELEMS 64
#define WS_GUARD 256              /* bytes past the reported workspace that must stay intact */
#define SENTINEL_BF16 0x7FA5u     /* a NaN no correct kernel writes */
#define SENTINEL_F32 0x7FA5A5A5u
#define HUGE_B_BYTES (INT64_C(1) << 30) /* B buffers above this are reserved, not allocated */

static const char *const KERNELS[2] = {"grouped_fp8_cpu_persistent", "grouped_fp8_cpu_tiled"};

/* Every input pair the family accepts. */
static const enum gg_dtype PAIRS[][2] = {
    {GG_DTYPE_E4M3, GG_DTYPE_E4M3},         {GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_DTYPE_E5M2, GG_DTYPE_E4M3},         {GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ}, {GG_DTYPE_E5M2FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_DTYPE_E5M2FNUZ, GG_DTYPE_E5M2FNUZ},
};
#define N_PAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

/* ---- one materialised case ------------------------------------------------------------- */

struct tcase {
    const char *kernel;
    enum gg_op op;
    enum gg_dtype a_dt, b_dt, c_dt;
    int64_t split, workers; /* workers 0: option left out (the kernel's default) */
    int64_t groups;
    int64_t lens[MAX_GROUPS];
    int64_t n, k;
    int64_t pad_a, pad_b, pad_c, pad_sb, pad_sc; /* extra elements per row / per group */
    int64_t stride_b;  /* > 0: explicit stride_b (huge strides for the 32-bit mutants) */
    int int_data;      /* small integers and power-of-two scales: every result exact */
    const char *mutant;
    uint64_t seed;
};

struct tbuf {
    struct gg_problem p;
    struct gg_kopt opts[2];
    int64_t lens[MAX_GROUPS], offs[MAX_GROUPS + 1], offs_dev[MAX_GROUPS + 1];
    int64_t lda, ldb, ldc, sb, sc;
    uint8_t *a, *b;
    void *c;
    float a_scale, b_scale[MAX_GROUPS];
    int64_t a_len, b_len, c_len; /* elements; c_len includes GUARD_ELEMS */
    int b_mapped;
    unsigned char *ws;
    size_t ws_bytes;
};

static const struct gg_kernel *find_kernel(const char *name)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, name) == 0)
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

/* A random finite code of t over its whole range (subnormals and the largest values included),
   or a small integer in [-3, 3]. */
static uint8_t draw_code(enum gg_dtype t, int int_data, uint64_t *rng)
{
    if (int_data)
        return (uint8_t)gg_encode(t, (double)(splitmix_below(rng, 7) - 3), GG_SAT_FINITE);
    for (;;) {
        uint8_t c = (uint8_t)splitmix64(rng);
        if (isfinite(gg_decode(t, c)))
            return c;
    }
}

static void fill_codes(uint8_t *x, int64_t len, enum gg_dtype t, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++)
        x[i] = draw_code(t, int_data, rng);
}

/* A scale in [2^lo, 2^hi): a power of two for exact data, else with a random significand. */
static float draw_scale(int int_data, int lo, int hi, uint64_t *rng)
{
    int e = lo + (int)splitmix_below(rng, hi - lo);
    float f = int_data ? 1.0f : 1.0f + (float)splitmix_below(rng, 1 << 23) / (float)(1 << 23);
    return ldexpf(f, e);
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
    return gg_load(dt, c, i);
}

static size_t c_elem_bytes(enum gg_dtype dt)
{
    return dt == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
}

static void *xcalloc(int64_t n, size_t size)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    cr_assert_not_null(p);
    return p;
}

/* B of more than HUGE_B_BYTES is an untouched anonymous reservation: only the weights of experts
   with tokens are written (and so backed by memory), the rest read as zero pages. */
static uint8_t *alloc_b(struct tbuf *b)
{
    if (b->b_len <= HUGE_B_BYTES)
        return xcalloc(b->b_len, 1);
    void *p = mmap(NULL, (size_t)b->b_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cr_assert_neq(p, MAP_FAILED, "cannot reserve %lld bytes", (long long)b->b_len);
    b->b_mapped = 1;
    return p;
}

/* Builds the problem and the buffers: inputs and scales drawn from t->seed, C filled with the
   sentinel, the workspace (workspace_bytes plus a guard) filled with byte `poison`. */
static void setup(const struct tcase *t, struct tbuf *b, unsigned char poison)
{
    memset(b, 0, sizeof *b);
    cr_assert(t->groups <= MAX_GROUPS);
    const struct gg_kernel *k = find_kernel(t->kernel);
    cr_assert_not_null(k, "kernel %s not registered", t->kernel);
    for (int64_t g = 0; g < t->groups; g++) {
        b->lens[g] = t->lens[g];
        b->offs[g + 1] = b->offs[g] + t->lens[g];
    }
    memcpy(b->offs_dev, b->offs, sizeof b->offs);
    int64_t m = b->offs[t->groups];
    int wgrad = t->op == GG_OP_GROUPED_WGRAD;
    b->lda = row_len_a(t) + t->pad_a;
    b->ldb = t->k + t->pad_b;
    b->ldc = row_len_c(t) + t->pad_c;
    b->sb = t->stride_b > 0 ? t->stride_b : t->n * b->ldb + t->pad_sb;
    b->sc = t->n * b->ldc + t->pad_sc;
    int n_opts = 0;
    b->opts[n_opts++] = (struct gg_kopt){"split_k", t->split > 0 ? t->split : 1};
    if (t->workers > 0)
        b->opts[n_opts++] = (struct gg_kopt){"workers", t->workers};
    b->p = (struct gg_problem){
        .op = t->op, .a_dtype = t->a_dt, .b_dtype = t->b_dt, .c_dtype = t->c_dt,
        .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_TENSOR, .b_layout = GG_LAYOUT_NK,
        .groups = t->groups, .m = m, .n = t->n, .k = t->k, .lda = b->lda, .ldb = b->ldb,
        .ldc = b->ldc, .stride_b = b->sb, .stride_c = b->sc, .group_lens = b->lens,
        .group_offs = b->offs, .opts = b->opts, .n_opts = n_opts, .mutant = t->mutant};
    b->a_len = m * b->lda;
    b->b_len = wgrad ? m * b->ldb : (t->groups > 0 ? (t->groups - 1) * b->sb + t->n * b->ldb : 0);
    b->c_len = (wgrad ? t->groups * b->sc : m * b->ldc) + GUARD_ELEMS;
    b->a = xcalloc(b->a_len, 1);
    b->b = alloc_b(b);
    b->c = xcalloc(b->c_len, c_elem_bytes(t->c_dt));
    uint64_t rng = t->seed;
    fill_codes(b->a, b->a_len, t->a_dt, t->int_data, &rng);
    if (wgrad || !b->b_mapped)
        fill_codes(b->b, b->b_len, t->b_dt, t->int_data, &rng);
    else
        for (int64_t g = 0; g < t->groups; g++)
            if (t->lens[g] > 0)
                fill_codes(b->b + g * b->sb, t->n * b->ldb, t->b_dt, t->int_data, &rng);
    b->a_scale = draw_scale(t->int_data, -1, 2, &rng);
    for (int64_t g = 0; g < MAX_GROUPS; g++) /* wgrad reads b_scale[0] only */
        b->b_scale[g] = wgrad && g > 0 ? NAN : draw_scale(t->int_data, -4, 4, &rng);
    fill_sentinel(b->c, t->c_dt, b->c_len);
    b->ws_bytes = k->workspace_bytes(&b->p);
    b->ws = malloc(b->ws_bytes + WS_GUARD);
    cr_assert_not_null(b->ws);
    memset(b->ws, poison, b->ws_bytes + WS_GUARD);
}

static void teardown(struct tbuf *b)
{
    free(b->a);
    if (b->b_mapped)
        munmap(b->b, (size_t)b->b_len);
    else
        free(b->b);
    free(b->c);
    free(b->ws);
}

static enum gg_status run_kernel(const char *name, struct tbuf *b, char *err, size_t err_len)
{
    struct gg_operands o = {.a = b->a, .b = b->b, .c = b->c, .a_scale = &b->a_scale,
                            .b_scale = b->b_scale, .workspace = b->ws_bytes ? b->ws : NULL,
                            .workspace_bytes = b->ws_bytes, .group_lens_dev = b->lens,
                            .group_offs_dev = b->offs_dev};
    err[0] = '\0';
    return find_kernel(name)->run(&b->p, &o, err, err_len);
}

/* ---- the reference, and the test's own model of each mutant --------------------------------- */

/* Group g's block of C: rows x cols, reduction length red. */
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

/* Where expert g's weights start: g·stride_b, or under i32_group_base the low 32 bits of that
   product read as a signed 32-bit value. */
static int64_t model_weight_base(const struct tbuf *b, int64_t g, const char *mutant)
{
    int64_t base = g * b->sb;
    if (mutant && strcmp(mutant, "i32_group_base") == 0) {
        int64_t low = base & INT64_C(0xFFFFFFFF);
        return low >= INT64_C(0x80000000) ? low - (INT64_C(1) << 32) : low;
    }
    return base;
}

/* The byte actually read for byte offset off: under i32_byte_limit off modulo 2^32. */
static int64_t model_load(int64_t off, const char *mutant)
{
    return mutant && strcmp(mutant, "i32_byte_limit") == 0 ? off & INT64_C(0xFFFFFFFF) : off;
}

/* Value of a code as the kernel should read it; fnuz_as_ocp reads fnuz codes as OCP. */
static double model_decode(enum gg_dtype t, uint8_t code, const char *mutant)
{
    if (mutant && strcmp(mutant, "fnuz_as_ocp") == 0) {
        if (t == GG_DTYPE_E4M3FNUZ)
            t = GG_DTYPE_E4M3;
        else if (t == GG_DTYPE_E5M2FNUZ)
            t = GG_DTYPE_E5M2;
    }
    return gg_decode(t, code);
}

/* Exact (in double) sum Σ a·b of element (i, j) of group g, and Σ|ab|, with the operands read
   as the kernel under `mutant` reads them (NULL: the correct kernel). Returns the scale
   a_scale · b_scale in double (exact: a product of two floats). */
static double ref_element(const struct tcase *t, const struct tbuf *b, int64_t g, int64_t i,
                          int64_t j, const char *mutant, double *sum, double *abs_sum)
{
    int64_t rows, cols, red;
    block_dims(t, b, g, &rows, &cols, &red);
    double s = 0.0, s_abs = 0.0;
    int64_t wbase = model_weight_base(b, g, mutant);
    for (int64_t r = 0; r < red; r++) {
        int64_t ia, ib;
        switch (t->op) {
        case GG_OP_GROUPED_FWD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = wbase + j * b->ldb + r;
            break;
        case GG_OP_GROUPED_DGRAD:
            ia = (b->offs[g] + i) * b->lda + r;
            ib = wbase + r * b->ldb + j;
            break;
        default:
            ia = (b->offs[g] + r) * b->lda + i;
            ib = (b->offs[g] + r) * b->ldb + j;
            break;
        }
        double prod = model_decode(t->a_dt, b->a[model_load(ia, mutant)], mutant) *
                      model_decode(t->b_dt, b->b[model_load(ib, mutant)], mutant);
        s += prod;
        s_abs += fabs(prod);
    }
    *sum = s;
    *abs_sum = s_abs;
    return (double)b->a_scale * (double)b->b_scale[t->op == GG_OP_GROUPED_WGRAD ? 0 : g];
}

/*
 * Checks every logical element against the reference of `model` (the mutant whose effect is
 * modelled, NULL for the correct product) with
 *   |out - c| <= u_o/(1-u_o)·|out| + γ_h(2^-23)·|s|·Σ|ab| + tiny,  h = red + split + 2
 * (split-K adds up to split-1 additions of partials; the fp32 scale product and the scaling
 * add two roundings, relative to |acc| <= Σ|ab|), or bitwise equality with the exact value when
 * exact; NaN must match NaN. Then every other element of the buffer (row padding, group padding,
 * guard) must still hold the sentinel. Returns the number of violations; logs the first one
 * when verbose.
 */
static int64_t check_against(const struct tcase *t, const struct tbuf *b, const char *model,
                             int exact, int verbose)
{
    char *logical = xcalloc(b->c_len, 1);
    double u_o = t->c_dt == GG_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -24);
    double tiny = ldexp(1.0, -126);
    int64_t bad = 0, split = t->split > 0 ? t->split : 1;
    for (int64_t g = 0; g < t->groups; g++) {
        int64_t rows, cols, red;
        block_dims(t, b, g, &rows, &cols, &red);
        double h = (double)(red + split + 2) * ldexp(1.0, -23);
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < cols; j++) {
                int64_t at = c_at(t, b, g, i, j);
                logical[at] = 1;
                double sum, sum_abs, out = out_value(b->c, t->c_dt, at);
                double s = ref_element(t, b, g, i, j, model, &sum, &sum_abs);
                double ref = s * sum;
                int ok;
                if (isnan(ref) || isnan(out))
                    ok = isnan(ref) && isnan(out) && !is_sentinel(b->c, t->c_dt, at);
                else if (exact)
                    ok = (float)ref == (float)out && !is_sentinel(b->c, t->c_dt, at);
                else
                    ok = fabs(out - ref) <=
                         u_o / (1 - u_o) * fabs(out) + h / (1 - h) * fabs(s) * sum_abs + tiny;
                if (!ok && bad++ == 0 && verbose)
                    cr_log_error("%s op %d %s x %s -> %s split %lld: group %lld element "
                                 "(%lld, %lld) is %.9g, reference %.9g (sum|ab| %.3g)",
                                 t->kernel, (int)t->op, gg_dtype_name(t->a_dt),
                                 gg_dtype_name(t->b_dt), gg_dtype_name(t->c_dt),
                                 (long long)split, (long long)g, (long long)i, (long long)j,
                                 out, ref, s * sum_abs);
            }
        }
    }
    for (int64_t i = 0; i < b->c_len; i++) {
        if (!logical[i] && !is_sentinel(b->c, t->c_dt, i) && bad++ == 0 && verbose)
            cr_log_error("%s op %d: element %lld outside the output was written", t->kernel,
                         (int)t->op, (long long)i);
    }
    free(logical);
    return bad;
}

static int64_t check_output(const struct tcase *t, const struct tbuf *b)
{
    return check_against(t, b, NULL, t->int_data && t->c_dt == GG_DTYPE_F32, 1);
}

/* The workspace guard past the reported size is untouched. */
static int ws_guard_intact(const struct tbuf *b, unsigned char poison)
{
    for (size_t i = 0; i < WS_GUARD; i++)
        if (b->ws[b->ws_bytes + i] != poison)
            return 0;
    return 1;
}

/* Runs one case and checks it; returns the number of violations. */
static int64_t run_and_check(const struct tcase *t)
{
    struct tbuf b;
    setup(t, &b, 0xFF);
    char err[256];
    enum gg_status st = run_kernel(t->kernel, &b, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s run failed: %s", t->kernel, err);
    int64_t bad = check_output(t, &b) + !ws_guard_intact(&b, 0xFF);
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
#define N_FIXED_PATTERNS 6
static void pattern(struct tcase *t, int idx, int64_t tile, int64_t tile_red, uint64_t *rng)
{
    switch (idx) {
    case 0: set_lens(t, 5, (const int64_t[]){0, 1, tile - 1, tile, tile + 1}); break;
    case 1: set_lens(t, 3, (const int64_t[]){0, 0, 0}); break;
    case 2: set_lens(t, 5, (const int64_t[]){0, tile + 1, 0, 3, 0}); break;
    case 3: set_lens(t, 1, (const int64_t[]){2 * tile + 5}); break;
    case 4: set_lens(t, 3, (const int64_t[]){5, 0, 7}); break;
    case 5: set_lens(t, 2, (const int64_t[]){tile_red + 1, tile_red - 1}); break;
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

/* N and K around the tile edges (the reduction step for the reduction dimension). */
static int64_t pick_dim(uint64_t *rng, int64_t tile, int64_t tile_red, int is_red)
{
    const int64_t small[] = {1, 7, tile - 1, tile, tile + 1, 2 * tile + 3};
    if (is_red && splitmix_below(rng, 3) == 0)
        return tile_red + 1 - 2 * splitmix_below(rng, 2); /* tile_k ± 1 */
    return small[splitmix_below(rng, 6)];
}

/* One op over both kernels, split_k 1..3, every pattern, cycling through the dtype pairs, the
   output dtypes, padding and worker counts. */
static void run_matrix(enum gg_op op, uint64_t seed)
{
    uint64_t rng = seed;
    int idx_run = 0;
    for (int kn = 0; kn < 2; kn++) {
        const struct gg_kernel *k = find_kernel(KERNELS[kn]);
        cr_assert_not_null(k, "kernel %s not registered", KERNELS[kn]);
        for (int64_t split = 1; split <= 3; split++) {
            for (int idx = 0; idx < N_FIXED_PATTERNS + 4; idx++, idx_run++) {
                struct tcase t = {.kernel = KERNELS[kn], .op = op, .split = split};
                t.a_dt = PAIRS[idx_run % N_PAIRS][0];
                t.b_dt = PAIRS[idx_run % N_PAIRS][1];
                t.c_dt = (idx_run / N_PAIRS) % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16;
                t.workers = kn == 0 ? splitmix_below(&rng, 5) : 0; /* 0: default */
                int64_t tile = op == GG_OP_GROUPED_WGRAD ? k->tile_k : k->tile_m;
                pattern(&t, idx, tile, k->tile_k, &rng);
                t.n = pick_dim(&rng, op == GG_OP_GROUPED_WGRAD ? k->tile_m : k->tile_n, k->tile_k,
                               op == GG_OP_GROUPED_DGRAD);
                t.k = pick_dim(&rng, k->tile_n, k->tile_k, op == GG_OP_GROUPED_FWD);
                t.pad_a = splitmix_below(&rng, 2) * 3;
                t.pad_b = splitmix_below(&rng, 2) * 5;
                t.pad_c = splitmix_below(&rng, 2) * 2 + (idx % 2);
                t.pad_sb = splitmix_below(&rng, 2) * 11;
                t.pad_sc = splitmix_below(&rng, 2) * 13;
                t.seed = splitmix64(&rng);
                int64_t bad = run_and_check(&t);
                cr_expect_eq(bad, 0,
                             "%s op %d %s x %s -> %s split %lld pattern %d (G %lld, N %lld, "
                             "K %lld): %lld bad elements",
                             t.kernel, (int)op, gg_dtype_name(t.a_dt), gg_dtype_name(t.b_dt),
                             gg_dtype_name(t.c_dt), (long long)split, idx, (long long)t.groups,
                             (long long)t.n, (long long)t.k, (long long)bad);
            }
        }
    }
}

Test(kernels_cpu_fp8, fwd_random_shapes) { run_matrix(GG_OP_GROUPED_FWD, 31); }
Test(kernels_cpu_fp8, dgrad_random_shapes) { run_matrix(GG_OP_GROUPED_DGRAD, 32); }
Test(kernels_cpu_fp8, wgrad_random_shapes) { run_matrix(GG_OP_GROUPED_WGRAD, 33); }

/* ---- exact results, scales, the two execution models --------------------------------------- */

/* Small integers and power-of-two scales with f32 output: every product and partial sum is an
   integer below 2^24 and the scaling is exact, so the output equals the exact value bitwise. */
Test(kernels_cpu_fp8, small_integers_exact_f32)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 3; o++)
            for (int pr = 0; pr < N_PAIRS; pr += 3) {
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = PAIRS[pr][0],
                                  .b_dt = PAIRS[pr][1], .c_dt = GG_DTYPE_F32, .split = 1 + o,
                                  .n = 97, .k = 130, .pad_c = 1, .int_data = 1,
                                  .seed = 77 + (uint64_t)pr};
                set_lens(&t, 4, (const int64_t[]){130, 0, 64, 1});
                cr_expect_eq(run_and_check(&t), 0, "%s op %d pair %d", KERNELS[kn], (int)ops[o],
                             pr);
            }
}

/* fwd and dgrad scale group g by b_scale[g]: the same weights in every expert, the same rows in
   every group and scales 2^g give outputs exactly 2^g times group 0's. wgrad reads b_scale[0]
   only (setup() leaves NaN in the others). */
Test(kernels_cpu_fp8, per_expert_b_scales)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 2; o++) {
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = GG_DTYPE_E4M3,
                              .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .split = 1, .n = 70,
                              .k = 90, .seed = 4};
            set_lens(&t, 3, (const int64_t[]){9, 9, 9});
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0xFF);
            int64_t rows = 9 * b.lda, wsize = t.n * b.ldb;
            for (int64_t g = 1; g < 3; g++) {
                memcpy(b.a + g * rows, b.a, (size_t)rows);
                memcpy(b.b + g * b.sb, b.b, (size_t)wsize);
                b.b_scale[g] = ldexpf(b.b_scale[0], (int)g);
            }
            cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
            int64_t mismatches = 0, cols = row_len_c(&t);
            for (int64_t g = 1; g < 3; g++)
                for (int64_t i = 0; i < 9; i++)
                    for (int64_t j = 0; j < cols; j++)
                        mismatches += out_value(b.c, t.c_dt, c_at(&t, &b, g, i, j)) !=
                                      ldexp(out_value(b.c, t.c_dt, c_at(&t, &b, 0, i, j)), (int)g);
            cr_expect_eq(mismatches, 0, "%s op %d", KERNELS[kn], (int)ops[o]);
            cr_expect_eq(check_output(&t, &b), 0);
            teardown(&b);
        }
    struct tcase w = {.kernel = KERNELS[0], .op = GG_OP_GROUPED_WGRAD, .a_dt = GG_DTYPE_E5M2,
                      .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_BF16, .split = 2, .n = 40,
                      .k = 50, .seed = 5};
    set_lens(&w, 4, (const int64_t[]){3, 0, 80, 1});
    cr_expect_eq(run_and_check(&w), 0, "wgrad must use b_scale[0] for every group");
}

/* The persistent pool (any worker count, more workers than tiles included) and the tiled loop
   produce bitwise identical outputs: each output is one work item's sum, or a fixed-order sum
   of its split-K partials, whoever computes it. */
Test(kernels_cpu_fp8, persistent_matches_tiled_bitwise)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    const int64_t workers[] = {1, 2, 3, 7, 64};
    for (int o = 0; o < 3; o++)
        for (int64_t split = 1; split <= 4; split += 3) {
            struct tcase t = {.kernel = KERNELS[1], .op = ops[o], .a_dt = GG_DTYPE_E4M3,
                              .b_dt = GG_DTYPE_E5M2, .c_dt = GG_DTYPE_F32, .split = split,
                              .n = 150, .k = 140, .pad_c = 3, .seed = 99};
            set_lens(&t, 5, (const int64_t[]){0, 130, 1, 0, 64});
            struct tbuf ref, b;
            char err[256];
            setup(&t, &ref, 0x11);
            cr_assert_eq(run_kernel(t.kernel, &ref, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&t, &ref), 0);
            for (int w = 0; w < 5; w++) {
                struct tcase tp = t;
                tp.kernel = KERNELS[0];
                tp.workers = workers[w];
                setup(&tp, &b, 0x22);
                cr_assert_eq(run_kernel(tp.kernel, &b, err, sizeof err), GG_OK, "%s", err);
                cr_expect_eq(memcmp(b.c, ref.c, (size_t)b.c_len * sizeof(float)), 0,
                             "op %d split %lld workers %lld differs from the tiled kernel",
                             (int)ops[o], (long long)split, (long long)workers[w]);
                teardown(&b);
            }
            teardown(&ref);
        }
}

/* ---- empty groups ---------------------------------------------------------------------- */

/* fwd and dgrad with every group empty write nothing (check_output: everything is padding). */
Test(kernels_cpu_fp8, all_groups_empty_fwd_dgrad_write_nothing)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 2; o++)
            for (int64_t split = 1; split <= 3; split++) {
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = GG_DTYPE_E4M3FNUZ,
                                  .b_dt = GG_DTYPE_E4M3FNUZ, .c_dt = GG_DTYPE_BF16,
                                  .split = split, .n = 70, .k = 33, .seed = 5};
                set_lens(&t, 4, (const int64_t[]){0, 0, 0, 0});
                cr_expect_eq(run_and_check(&t), 0, "%s op %d split %lld", KERNELS[kn],
                             (int)ops[o], (long long)split);
            }
}

/* Bitwise +0 in every element of group g's dW block. */
static int64_t count_nonzero_block(const struct tcase *t, const struct tbuf *b, int64_t g)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < t->n; i++)
        for (int64_t j = 0; j < t->k; j++)
            bad += gg_load_code(t->c_dt, b->c, c_at(t, b, g, i, j)) != 0;
    return bad;
}

/* wgrad: a group with M_g = 0 owns an N x K block of exact zeros, whether every group is empty
   or only some, for any split_k and both kernels. */
Test(kernels_cpu_fp8, wgrad_empty_groups_write_exact_zeros)
{
    const int64_t patterns[][4] = {{0, 0, 0, 0}, {0, 9, 0, 300}, {129, 0, 0, 1}};
    for (int kn = 0; kn < 2; kn++)
        for (int pi = 0; pi < 3; pi++)
            for (int64_t split = 1; split <= 5; split += 2) {
                struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_WGRAD,
                                  .a_dt = GG_DTYPE_E5M2, .b_dt = GG_DTYPE_E4M3,
                                  .c_dt = pi % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16, .split = split,
                                  .n = 67, .k = 130, .pad_c = 3, .pad_sc = 7, .seed = 9};
                set_lens(&t, 4, patterns[pi]);
                struct tbuf b;
                char err[256];
                setup(&t, &b, 0xFF);
                cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
                for (int64_t g = 0; g < t.groups; g++)
                    if (t.lens[g] == 0)
                        cr_expect_eq(count_nonzero_block(&t, &b, g), 0,
                                     "%s pattern %d split %lld: empty group %lld not zero",
                                     KERNELS[kn], pi, (long long)split, (long long)g);
                cr_expect_eq(check_output(&t, &b), 0);
                teardown(&b);
            }
}

/* ---- workspace ------------------------------------------------------------------------- */

/* With split_k > 1 the output does not depend on the workspace's initial contents, and nothing
   past the reported size is touched. */
Test(kernels_cpu_fp8, split_k_output_independent_of_workspace_poison)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    const int64_t splits[] = {2, 3, 7, 64};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 3; o++)
            for (int s = 0; s < 4; s++) {
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = GG_DTYPE_E4M3,
                                  .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_BF16,
                                  .split = splits[s], .workers = 3, .n = 100, .k = 90,
                                  .pad_c = 2, .seed = 21};
                set_lens(&t, 4, (const int64_t[]){0, 130, 3, 0});
                struct tbuf b1, b2;
                char err[256];
                setup(&t, &b1, 0xFF); /* NaN partials */
                setup(&t, &b2, 0x42); /* large finite partials */
                cr_assert_gt(b1.ws_bytes, 0);
                cr_assert_eq(run_kernel(t.kernel, &b1, err, sizeof err), GG_OK, "%s", err);
                cr_assert_eq(run_kernel(t.kernel, &b2, err, sizeof err), GG_OK, "%s", err);
                cr_expect_eq(memcmp(b1.c, b2.c, (size_t)b1.c_len * sizeof(uint16_t)), 0,
                             "%s op %d split %lld: output depends on the workspace poison",
                             KERNELS[kn], (int)ops[o], (long long)splits[s]);
                cr_expect(ws_guard_intact(&b1, 0xFF) && ws_guard_intact(&b2, 0x42),
                          "%s op %d split %lld: write past the reported workspace", KERNELS[kn],
                          (int)ops[o], (long long)splits[s]);
                cr_expect_eq(check_output(&t, &b1), 0);
                teardown(&b1);
                teardown(&b2);
            }
}

static struct gg_problem base_problem(struct gg_kopt *opts, int n_opts, const int64_t *lens,
                                      const int64_t *offs)
{
    return (struct gg_problem){.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_E4M3,
                               .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_BF16,
                               .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_TENSOR,
                               .groups = 2, .m = 100, .n = 64, .k = 32, .group_lens = lens,
                               .group_offs = offs, .opts = opts, .n_opts = n_opts};
}

/* No workspace without split-K; with it, the same size for both kernels (the tile list does
   not depend on the execution model), and one byte less is refused by run(). */
Test(kernels_cpu_fp8, workspace_bytes_reported_exactly)
{
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_kopt opt[2] = {{"split_k", 1}, {"workers", 4}};
    struct gg_problem p = base_problem(opt, 2, lens, offs);
    const struct gg_kernel *kp = find_kernel(KERNELS[0]), *kt = find_kernel(KERNELS[1]);
    cr_assert(kp && kt);
    cr_expect_eq(kp->workspace_bytes(&p), 0);
    cr_expect_eq(kt->workspace_bytes(&p), 0);
    p.n_opts = 0;
    cr_expect_eq(kp->workspace_bytes(&p), 0);
    p.n_opts = 2;
    for (opt[0].value = 2; opt[0].value <= 64; opt[0].value *= 2) {
        cr_expect_gt(kp->workspace_bytes(&p), 0, "split_k %lld", (long long)opt[0].value);
        cr_expect_eq(kp->workspace_bytes(&p), kt->workspace_bytes(&p));
    }
    for (int kn = 0; kn < 2; kn++) {
        struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_WGRAD, .a_dt = GG_DTYPE_E4M3,
                          .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .split = 3, .n = 65,
                          .k = 70, .seed = 2};
        set_lens(&t, 2, (const int64_t[]){10, 0});
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0);
        b.ws_bytes -= 1;
        cr_expect_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_E_INVAL, "%s", KERNELS[kn]);
        cr_expect_neq(err[0], '\0');
        b.ws_bytes += 1;
        cr_expect_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
        teardown(&b);
    }
}

/* ---- supports() and errors --------------------------------------------------------------- */

static void expect_refused(const char *kernel, struct gg_problem p, const char *needle)
{
    char why[256] = "";
    cr_expect_eq(find_kernel(kernel)->supports(&p, why, sizeof why), 0,
                 "%s accepted, expected '%s'", kernel, needle);
    cr_expect_neq(why[0], '\0', "no reason given");
    cr_expect_not_null(strstr(why, needle), "reason '%s' does not mention '%s'", why, needle);
}

static void expect_accepted(const char *kernel, struct gg_problem p, const char *what)
{
    char why[256] = "";
    cr_expect_eq(find_kernel(kernel)->supports(&p, why, sizeof why), 1, "%s %s: %s", kernel,
                 what, why);
}

Test(kernels_cpu_fp8, supports_accepts_and_refuses_with_reasons)
{
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    for (int kn = 0; kn < 2; kn++) {
        const char *kname = KERNELS[kn];
        const struct gg_kernel *k = find_kernel(kname);
        cr_assert_not_null(k);
        cr_expect_eq(k->ops, GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                                 GG_OP_BIT(GG_OP_GROUPED_WGRAD));
        struct gg_kopt opt[2] = {{"split_k", 1}, {"workers", 2}};
        struct gg_problem p = base_problem(opt, 2, lens, offs), q;
        for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++)
            for (int pr = 0; pr < N_PAIRS; pr++)
                for (int c = 0; c < 2; c++) {
                    q = p, q.op = (enum gg_op)op, q.a_dtype = PAIRS[pr][0];
                    q.b_dtype = PAIRS[pr][1], q.c_dtype = c ? GG_DTYPE_F32 : GG_DTYPE_BF16;
                    expect_accepted(kname, q, "accepted pair");
                }
        for (int i = 0; k->mutants[i] != NULL; i++) {
            q = p, q.mutant = k->mutants[i];
            expect_accepted(kname, q, k->mutants[i]);
        }
        q = p, q.a_dtype = q.b_dtype = GG_DTYPE_E5M2;
        expect_refused(kname, q, "e5m2 x e5m2 is not supported");
        q = p, q.a_dtype = GG_DTYPE_E4M3FNUZ, expect_refused(kname, q, "fnuz mixed with OCP");
        q = p, q.b_dtype = GG_DTYPE_E5M2FNUZ, expect_refused(kname, q, "fnuz mixed with OCP");
        q = p, q.a_dtype = q.b_dtype = GG_DTYPE_BF16, expect_refused(kname, q, "fp8 inputs only");
        q = p, q.b_dtype = GG_DTYPE_E2M1, expect_refused(kname, q, "fp8 inputs only");
        q = p, q.scaling = GG_SCALING_NONE, expect_refused(kname, q, "tensor-wise");
        q = p, q.scaling = GG_SCALING_MX, expect_refused(kname, q, "tensor-wise");
        q = p, q.scaling = GG_SCALING_BLOCK128, expect_refused(kname, q, "tensor-wise");
        q = p, q.c_dtype = GG_DTYPE_F16, expect_refused(kname, q, "output");
        q = p, q.c_dtype = GG_DTYPE_E4M3, expect_refused(kname, q, "output");
        q = p, q.acc_dtype = GG_DTYPE_F16, expect_refused(kname, q, "accumulator");
        q = p, q.op = GG_OP_BATCHED, expect_refused(kname, q, "grouped");
        q = p, q.op = GG_OP_MOE_SORTED, expect_refused(kname, q, "grouped");
        q = p, q.bias_dtype = GG_DTYPE_BF16, expect_refused(kname, q, "bias");
        q = p, q.b_layout = GG_LAYOUT_KN, expect_refused(kname, q, "b_layout");
        q = p, q.mutant = "no_such_mutant", expect_refused(kname, q, "mutant");
        q = p, q.mutant = "zero_len_ptr_skip", expect_refused(kname, q, "mutant");
        const int64_t bad_splits[] = {0, -1, 65, 1000};
        for (int i = 0; i < 4; i++) {
            opt[0].value = bad_splits[i];
            expect_refused(kname, p, "split_k");
        }
        opt[0].value = 64;
        expect_accepted(kname, p, "split_k 64");
    }
    /* workers is the persistent kernel's option; the tiled kernel ignores it */
    const int64_t lens2[] = {40, 60}, offs2[] = {0, 40, 100};
    struct gg_kopt opt[1] = {{"workers", 0}};
    struct gg_problem p = base_problem(opt, 1, lens2, offs2);
    const int64_t bad_workers[] = {0, -3, 65};
    for (int i = 0; i < 3; i++) {
        opt[0].value = bad_workers[i];
        expect_refused(KERNELS[0], p, "workers");
        expect_accepted(KERNELS[1], p, "ignores workers");
    }
    for (opt[0].value = 1; opt[0].value <= 64; opt[0].value *= 4)
        expect_accepted(KERNELS[0], p, "workers in range");
}

/* Inconsistent problems are GG_E_INVAL with a message; unsupported ones GG_E_UNSUPPORTED. */
Test(kernels_cpu_fp8, run_rejects_inconsistent_problems)
{
    for (int kn = 0; kn < 2; kn++) {
        struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_FWD, .a_dt = GG_DTYPE_E4M3,
                          .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_BF16, .split = 2, .n = 20,
                          .k = 20, .seed = 1};
        set_lens(&t, 3, (const int64_t[]){4, 5, 6});
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0);
        const char *name = t.kernel;

        b.offs_dev[3] = 14; /* does not reach m */
        cr_expect_eq(run_kernel(name, &b, err, sizeof err), GG_E_INVAL);
        cr_expect_neq(err[0], '\0');
        b.offs_dev[3] = 15;
        b.offs_dev[2] = 3; /* decreasing */
        cr_expect_eq(run_kernel(name, &b, err, sizeof err), GG_E_INVAL);
        b.offs_dev[2] = 9;
        b.p.lda = 5; /* below K */
        cr_expect_eq(run_kernel(name, &b, err, sizeof err), GG_E_INVAL);
        b.p.lda = 0;
        b.p.a_dtype = b.p.b_dtype = GG_DTYPE_E5M2;
        cr_expect_eq(run_kernel(name, &b, err, sizeof err), GG_E_UNSUPPORTED);
        cr_expect_not_null(strstr(err, "e5m2 x e5m2"));
        b.p.a_dtype = b.p.b_dtype = GG_DTYPE_E4M3;

        struct gg_operands o = {.a = b.a, .b = b.b, .c = b.c, .a_scale = NULL,
                                .b_scale = b.b_scale, .workspace = b.ws,
                                .workspace_bytes = b.ws_bytes, .group_lens_dev = b.lens,
                                .group_offs_dev = b.offs_dev};
        cr_expect_eq(find_kernel(name)->run(&b.p, &o, err, sizeof err), GG_E_INVAL);
        cr_expect_not_null(strstr(err, "a_scale"), "%s", err);
        o.a_scale = &b.a_scale, o.b_scale = NULL;
        cr_expect_eq(find_kernel(name)->run(&b.p, &o, err, sizeof err), GG_E_INVAL);
        cr_expect_not_null(strstr(err, "b_scale"), "%s", err);

        cr_expect_eq(run_kernel(name, &b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &b), 0);
        teardown(&b);
    }
}

/* run() reads the group offsets from the kernel-side copy (group_offs_dev), like a GPU kernel. */
Test(kernels_cpu_fp8, run_reads_device_group_offsets)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 3; o++) {
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = GG_DTYPE_E4M3,
                              .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .split = 2, .n = 40,
                              .k = 70, .int_data = 1, .seed = 8};
            set_lens(&t, 3, (const int64_t[]){0, 66, 2});
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0xFF);
            b.p.group_lens = NULL;
            b.p.group_offs = NULL;
            cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&t, &b), 0, "%s op %d", KERNELS[kn], (int)ops[o]);
            teardown(&b);
        }
}

/* NaN codes propagate to their row's outputs (OCP e4m3 0x7F, e5m2 0x7E, fnuz 0x80); the fnuz
   codes 0x7F (240) and e5m2fnuz 0x7C (32768) are finite, not OCP NaN/Inf. */
Test(kernels_cpu_fp8, special_codes_decode_as_hardware)
{
    const enum gg_dtype types[][2] = {{GG_DTYPE_E4M3, GG_DTYPE_E5M2},
                                      {GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ}};
    const uint8_t codes[][3] = {{0x7F, 0x7E, 0x00}, {0x80, 0x7F, 0x7C}};
    for (int kn = 0; kn < 2; kn++)
        for (int ti = 0; ti < 2; ti++) {
            struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_FWD,
                              .a_dt = types[ti][0], .b_dt = types[ti][1], .c_dt = GG_DTYPE_F32,
                              .split = 1, .n = 20, .k = 30, .seed = 6};
            set_lens(&t, 1, (const int64_t[]){4});
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0);
            b.a[0 * b.lda + 3] = codes[ti][0]; /* row 0: a NaN code of A */
            b.a[1 * b.lda + 5] = ti ? codes[ti][1] : 0x00; /* row 1: fnuz 240 */
            b.b[2 * b.ldb + 7] = ti ? codes[ti][2] : codes[ti][1]; /* column 2 */
            cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
            cr_expect(isnan(out_value(b.c, t.c_dt, c_at(&t, &b, 0, 0, 0))), "row 0 not NaN");
            cr_expect(ti == 0 || isfinite(out_value(b.c, t.c_dt, c_at(&t, &b, 0, 1, 0))),
                      "fnuz 0x7F must be finite");
            cr_expect_eq(check_output(&t, &b), 0, "%s types %d", KERNELS[kn], ti);
            teardown(&b);
        }
}

/* ---- mutants --------------------------------------------------------------------------- */

/* Counts the elements on which the correct reference is violated, quietly. */
static int64_t wrong_vs_correct(const struct tcase *t, const struct tbuf *b)
{
    return check_against(t, b, NULL, 0, 0);
}

/* Replaces the fnuz codes that are specials in the OCP format of the same layout (e4m3 0x7F,
   0xFF; e5m2 0x7C..0x7F, 0xFC..0xFF) by 1.0, so that the OCP reading is finite. */
static void strip_ocp_specials(uint8_t *x, int64_t len, enum gg_dtype t)
{
    uint8_t first = t == GG_DTYPE_E5M2FNUZ ? 0x7C : 0x7F;
    uint8_t one = (uint8_t)gg_encode(t, 1.0, GG_SAT_FINITE);
    for (int64_t i = 0; i < len; i++)
        if ((x[i] & 0x7F) >= first)
            x[i] = one;
}

/* fnuz_as_ocp: on fnuz data without special codes every operand value doubles, so each output
   is exactly 4 times the correct one (f32, power-of-two factor); 0x80 (fnuz NaN) is read as -0
   and 0x7F (e4m3fnuz 240) as NaN. The correct kernel passes the same data. */
Test(kernels_cpu_fp8, mutant_fnuz_as_ocp_reads_twice_the_value)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int kn = 0; kn < 2; kn++)
        for (int o = 0; o < 3; o++) {
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dt = GG_DTYPE_E5M2FNUZ,
                              .b_dt = GG_DTYPE_E4M3FNUZ, .c_dt = GG_DTYPE_F32, .split = 1 + o,
                              .n = 70, .k = 66, .seed = 12};
            set_lens(&t, 3, (const int64_t[]){33, 0, 65});
            struct tbuf good, bad;
            char err[256];
            setup(&t, &good, 0);
            strip_ocp_specials(good.a, good.a_len, t.a_dt);
            strip_ocp_specials(good.b, good.b_len, t.b_dt);
            struct tcase tm = t;
            tm.mutant = "fnuz_as_ocp";
            setup(&tm, &bad, 0);
            memcpy(bad.a, good.a, (size_t)good.a_len);
            memcpy(bad.b, good.b, (size_t)good.b_len);
            cr_assert_eq(run_kernel(t.kernel, &good, err, sizeof err), GG_OK, "%s", err);
            cr_assert_eq(run_kernel(t.kernel, &bad, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&t, &good), 0, "correct kernel fails");
            cr_expect_eq(check_against(&tm, &bad, "fnuz_as_ocp", 0, 1), 0,
                         "mutant does not read fnuz codes as OCP");
            int64_t not_quadrupled = 0, nonzero = 0;
            for (int64_t i = 0; i < good.c_len; i++) {
                double x = out_value(good.c, t.c_dt, i), y = out_value(bad.c, t.c_dt, i);
                if (is_sentinel(good.c, t.c_dt, i))
                    continue;
                nonzero += x != 0;
                not_quadrupled += y != 4 * x;
            }
            cr_expect_eq(not_quadrupled, 0, "%s op %d: mutant output is not 4x", KERNELS[kn],
                         (int)ops[o]);
            cr_expect_gt(nonzero, 0);
            cr_expect_gt(wrong_vs_correct(&t, &bad), 0);
            teardown(&good);
            teardown(&bad);
        }
    /* specials: fnuz NaN 0x80 becomes -0, e4m3fnuz 240 (0x7F) becomes NaN */
    struct tcase t = {.kernel = KERNELS[0], .op = GG_OP_GROUPED_FWD, .a_dt = GG_DTYPE_E4M3FNUZ,
                      .b_dt = GG_DTYPE_E4M3FNUZ, .c_dt = GG_DTYPE_BF16, .split = 1, .n = 16,
                      .k = 16, .mutant = "fnuz_as_ocp", .seed = 13};
    set_lens(&t, 1, (const int64_t[]){2});
    struct tbuf b;
    char err[256];
    setup(&t, &b, 0);
    strip_ocp_specials(b.a, b.a_len, t.a_dt);
    strip_ocp_specials(b.b, b.b_len, t.b_dt);
    b.a[0 * b.lda + 1] = 0x80;
    b.a[1 * b.lda + 1] = 0x7F;
    cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
    cr_expect(!isnan(out_value(b.c, t.c_dt, c_at(&t, &b, 0, 0, 0))), "0x80 still NaN");
    cr_expect(isnan(out_value(b.c, t.c_dt, c_at(&t, &b, 0, 1, 0))), "0x7F not read as NaN");
    teardown(&b);
}

/*
 * Runs t on both kernels, correct and with t.mutant, on the same data, and checks that the
 * correct kernel passes, the mutant matches the test's model of the bug within the bound, and
 * the mutant is wrong on at least min_wrong elements of the correct product.
 */
static void expect_mutant_as_modelled(struct tcase t, int64_t min_wrong)
{
    const char *mutant = t.mutant;
    for (int kn = 0; kn < 2; kn++) {
        t.kernel = KERNELS[kn];
        struct tbuf b;
        char err[256];
        t.mutant = NULL;
        setup(&t, &b, 0);
        cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &b), 0, "%s: correct kernel fails", t.kernel);
        fill_sentinel(b.c, t.c_dt, b.c_len);
        b.p.mutant = mutant;
        cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_against(&t, &b, mutant, 0, 1), 0, "%s: %s not as modelled", t.kernel,
                     mutant);
        int64_t wrong = wrong_vs_correct(&t, &b);
        cr_expect_geq(wrong, min_wrong, "%s: %s wrong on %lld elements only", t.kernel, mutant,
                      (long long)wrong);
        teardown(&b);
    }
}

/* i32_group_base: experts 2^31 elements apart (B reserved, 4 GiB + 4 KiB, only experts 0 and 2
   backed). Expert 2 starts at 2^32, whose low 32 bits are 0: the mutant reads expert 0's
   weights for group 2 (the empty group 1 would start at -2^31, but has no tiles). */
Test(kernels_cpu_fp8, mutant_i32_group_base_reads_wrong_expert)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    for (int o = 0; o < 2; o++) {
        struct tcase t = {.op = ops[o], .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3,
                          .c_dt = GG_DTYPE_BF16, .split = 1 + o, .n = 70, .k = 50,
                          .stride_b = INT64_C(1) << 31, .mutant = "i32_group_base", .seed = 14};
        set_lens(&t, 3, (const int64_t[]){5, 0, 7});
        expect_mutant_as_modelled(t, 7 * 40);
    }
}

/* i32_byte_limit: expert 2 starts 2 KiB below 2^32 bytes, so its weights straddle 4 GiB. The
   mutant reads the part past 2^32 from the start of the buffer (expert 0's first bytes), and the
   part below correctly: fwd outputs of columns whose weight row crosses are wrong, those before
   are right. */
Test(kernels_cpu_fp8, mutant_i32_byte_limit_wraps_past_4_gib)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    for (int o = 0; o < 2; o++) {
        struct tcase t = {.op = ops[o], .a_dt = GG_DTYPE_E5M2, .b_dt = GG_DTYPE_E4M3,
                          .c_dt = GG_DTYPE_F32, .split = 2 - o, .n = 100, .k = 40,
                          .stride_b = (INT64_C(1) << 31) - 1024, .mutant = "i32_byte_limit",
                          .seed = 15};
        set_lens(&t, 3, (const int64_t[]){5, 0, 7});
        expect_mutant_as_modelled(t, 7 * 20);
        /* fwd: rows 0..50 of W_2 lie below 2^32 (51·40 + 8 = 2048), so columns 0..50 are right */
        if (ops[o] != GG_OP_GROUPED_FWD)
            continue;
        t.kernel = KERNELS[1];
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0);
        cr_assert_eq(run_kernel(t.kernel, &b, err, sizeof err), GG_OK, "%s", err);
        int64_t wrong_left = 0, right_right = 0;
        for (int64_t i = 0; i < 7; i++)
            for (int64_t j = 0; j < t.n; j++) {
                double sum, sum_abs, out = out_value(b.c, t.c_dt, c_at(&t, &b, 2, i, j));
                double s = ref_element(&t, &b, 2, i, j, NULL, &sum, &sum_abs);
                int ok = fabs(out - s * sum) <= ldexp(1.0, -16) * fabs(s) * sum_abs;
                wrong_left += j <= 50 && !ok;
                right_right += j > 51 && ok;
            }
        cr_expect_eq(wrong_left, 0, "columns below the 4 GiB line must be right");
        cr_expect_lt(right_right, 7, "columns past the 4 GiB line must be wrong");
        teardown(&b);
    }
}

/*
 * test_kernels_cpu_batched.c — the batched kernels (bf16 with B as NK or KN, a8w8 block-scaled,
 * a16wfp4 and afp4wfp4 MX-scaled) against a naive double-precision loop over the exactly
 * dequantised inputs, with and without bias, bf16 and f32 output, split_k 1..3, on shapes on
 * either side of the tile edges and padded leading dimensions and strides whose padding must stay
 * untouched. Also: exact results on small-integer data, empty shapes, independence from the
 * workspace's contents, supports() and run() refusals, and the n_tail mutant of every kernel.
 */
#include "kernel_fixture.h"
#include "reference/gg_ref.h"
#include "splitmix.h"

/* One kernel of the family and the recipe it implements. */
struct family {
    const char *name;
    enum gg_dtype a_dtype, b_dtype;
    enum gg_scaling scaling;
};

static const struct family BF16 = {"batched_bf16_cpu_tiled", GG_DTYPE_BF16, GG_DTYPE_BF16,
                                   GG_SCALING_NONE};
static const struct family A8W8 = {"batched_a8w8_cpu_tiled", GG_DTYPE_E4M3, GG_DTYPE_E4M3,
                                   GG_SCALING_BLOCK128};
static const struct family A16WFP4 = {"batched_a16wfp4_cpu_tiled", GG_DTYPE_BF16, GG_DTYPE_E2M1,
                                      GG_SCALING_MX_B};
static const struct family AFP4WFP4 = {"batched_afp4wfp4_cpu_tiled", GG_DTYPE_E2M1,
                                       GG_DTYPE_E2M1, GG_SCALING_MX};
static const struct family *const FAMILIES[] = {&BF16, &A8W8, &A16WFP4, &AFP4WFP4};
#define N_FAMILIES 4

/* ---- one materialised case ------------------------------------------------------------- */

struct tcase {
    const struct family *f;
    enum gg_layout layout;
    enum gg_dtype c_dtype, bias_dtype;
    int64_t batch, m, n, k, split;
    int64_t pad_a, pad_b, pad_c, pad_sa, pad_sb, pad_sc; /* extra elements per row / matrix */
    int packed;   /* every leading dimension and stride 0: the kernel resolves them */
    int int_data; /* small integers and power-of-two scales: every partial sum is exact */
    const char *mutant;
    uint64_t seed;
};

struct tbuf {
    struct gg_problem p;
    struct gg_kopt opt;
    const struct gg_kernel *kern;
    int64_t lda, ldb, ldc, sa, sb, sc; /* resolved */
    int64_t a_len, b_len, c_len;       /* elements; c_len includes GUARD_ELEMS */
    int64_t a_sc_len, b_sc_len, groups_k;
    void *a, *b, *c, *a_scale, *b_scale, *bias;
    unsigned char *ws; /* ws_bytes (the reported size) + the guard band */
    size_t ws_bytes;
    double *da, *db; /* dequantised logical inputs: da[b][i][kk], db[b][j][kk] */
};

static int64_t elem_bytes(enum gg_dtype t, int64_t n)
{
    return gg_dtype_bytes(t, n > 0 ? n : 1);
}

/* A finite code of t: e2m1 any of its 16 codes; otherwise a small integer in [-3, 3] or a
   value uniform in ±[0, 2) times 2^-3 .. 2^3, rounded to t. */
static uint32_t random_code(enum gg_dtype t, int int_data, uint64_t *rng)
{
    if (t == GG_DTYPE_E2M1)
        return (uint32_t)splitmix_below(rng, 16);
    double v = int_data ? (double)(splitmix_below(rng, 7) - 3)
                        : ldexp((double)splitmix_below(rng, 1 << 20) / (1 << 19) - 1.0,
                                (int)splitmix_below(rng, 7) - 3);
    return gg_encode(t, v, GG_SAT_FINITE);
}

static void fill_codes(enum gg_dtype t, void *base, int64_t len, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++)
        gg_store_code(t, base, i, random_code(t, int_data, rng));
}

/* fp32 scales: powers of two in 2^-2 .. 2^2 (exact data) or (1 + u/8)·2^(-3..1). */
static void fill_f32_scales(float *s, int64_t len, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++)
        s[i] = int_data ? ldexpf(1.0f, (int)splitmix_below(rng, 5) - 2)
                        : ldexpf(1.0f + (float)splitmix_below(rng, 1024) / 8192.0f,
                                 (int)splitmix_below(rng, 5) - 3);
}

/* E8M0 codes around 127: 125 .. 129 (exact data) or 118 .. 136. */
static void fill_e8m0(uint8_t *s, int64_t len, int int_data, uint64_t *rng)
{
    for (int64_t i = 0; i < len; i++)
        s[i] = (uint8_t)(int_data ? 125 + splitmix_below(rng, 5) : 118 + splitmix_below(rng, 19));
}

/* Element (b, j, kk) of B in either layout. */
static int64_t b_index(const struct tcase *t, const struct tbuf *bf, int64_t b, int64_t j,
                       int64_t kk)
{
    return t->layout == GG_LAYOUT_KN ? b * bf->sb + kk * bf->ldb + j
                                     : b * bf->sb + j * bf->ldb + kk;
}

/* The exact dequantised inputs: decoded codes times their scales (every scale multiplies one
   element: a_scale[row][kk/128] or 2^(e-127) of its 1x32 block; b_scale[b] is folded into B). */
static void dequantise(const struct tcase *t, struct tbuf *bf)
{
    int64_t B = t->batch, m = t->m, n = t->n, k = t->k;
    bf->da = xcalloc(B * m * k, sizeof(double));
    bf->db = xcalloc(B * n * k, sizeof(double));
    enum gg_scaling s = t->f->scaling;
    for (int64_t b = 0; b < B; b++)
        for (int64_t kk = 0; kk < k; kk++) {
            for (int64_t i = 0; i < m; i++) {
                double v = gg_load(t->f->a_dtype, bf->a, b * bf->sa + i * bf->lda + kk);
                int64_t row = b * m + i;
                if (s == GG_SCALING_BLOCK128)
                    v *= ((const float *)bf->a_scale)[row * bf->groups_k + kk / 128];
                else if (s == GG_SCALING_MX)
                    v *= gg_decode(GG_DTYPE_E8M0,
                                   ((const uint8_t *)bf->a_scale)[row * bf->groups_k + kk / 32]);
                bf->da[(b * m + i) * k + kk] = v;
            }
            for (int64_t j = 0; j < n; j++) {
                double v = gg_load(t->f->b_dtype, bf->b, b_index(t, bf, b, j, kk));
                if (s == GG_SCALING_BLOCK128)
                    v *= ((const float *)bf->b_scale)[b];
                else if (s == GG_SCALING_MX || s == GG_SCALING_MX_B)
                    v *= gg_decode(GG_DTYPE_E8M0, ((const uint8_t *)bf->b_scale)
                                                      [(b * n + j) * bf->groups_k + kk / 32]);
                bf->db[(b * n + j) * k + kk] = v;
            }
        }
}

/* Builds the problem and the buffers: inputs and scales drawn from t->seed, C filled with the
   sentinel, the workspace (exactly workspace_bytes, then a guard band) filled with byte
   `poison`. */
static void setup(const struct tcase *t, struct tbuf *bf, unsigned char poison)
{
    memset(bf, 0, sizeof *bf);
    const struct family *f = t->f;
    bf->kern = kernel_named(f->name);
    int kn = t->layout == GG_LAYOUT_KN;
    int64_t ea = f->a_dtype == GG_DTYPE_E2M1 ? 2 : 1, eb = f->b_dtype == GG_DTYPE_E2M1 ? 2 : 1;
    bf->lda = t->k + ea * t->pad_a;
    bf->ldb = (kn ? t->n : t->k) + eb * t->pad_b;
    bf->ldc = t->n + t->pad_c;
    bf->sa = t->m * bf->lda + ea * t->pad_sa;
    bf->sb = (kn ? t->k : t->n) * bf->ldb + eb * t->pad_sb;
    bf->sc = t->m * bf->ldc + t->pad_sc;
    if (t->packed) {
        bf->lda = t->k;
        bf->ldb = kn ? t->n : t->k;
        bf->ldc = t->n;
        bf->sa = t->m * t->k;
        bf->sb = t->n * t->k;
        bf->sc = t->m * t->n;
    }
    bf->groups_k = f->scaling == GG_SCALING_BLOCK128 ? (t->k + 127) / 128 : t->k / 32;
    bf->opt = (struct gg_kopt){"split_k", t->split};
    bf->p = (struct gg_problem){
        .op = GG_OP_BATCHED, .a_dtype = f->a_dtype, .b_dtype = f->b_dtype,
        .c_dtype = t->c_dtype, .acc_dtype = GG_DTYPE_F32, .scaling = f->scaling,
        .b_layout = t->layout, .groups = t->batch, .m = t->m, .n = t->n, .k = t->k,
        .lda = t->packed ? 0 : bf->lda, .ldb = t->packed ? 0 : bf->ldb,
        .ldc = t->packed ? 0 : bf->ldc, .stride_a = t->packed ? 0 : bf->sa,
        .stride_b = t->packed ? 0 : bf->sb, .stride_c = t->packed ? 0 : bf->sc,
        .bias_dtype = t->bias_dtype, .opts = &bf->opt, .n_opts = 1, .mutant = t->mutant};
    bf->a_len = t->batch * bf->sa;
    bf->b_len = t->batch * bf->sb;
    bf->c_len = t->batch * bf->sc + GUARD_ELEMS;
    bf->a = xcalloc(elem_bytes(f->a_dtype, bf->a_len), 1);
    bf->b = xcalloc(elem_bytes(f->b_dtype, bf->b_len), 1);
    bf->c = xcalloc(elem_bytes(t->c_dtype, bf->c_len), 1);
    uint64_t rng = t->seed;
    fill_codes(f->a_dtype, bf->a, bf->a_len, t->int_data, &rng);
    fill_codes(f->b_dtype, bf->b, bf->b_len, t->int_data, &rng);
    fill_sentinel(bf->c, t->c_dtype, bf->c_len);
    if (f->scaling == GG_SCALING_BLOCK128) {
        bf->a_sc_len = t->batch * t->m * bf->groups_k;
        bf->b_sc_len = t->batch;
        bf->a_scale = xcalloc(bf->a_sc_len, sizeof(float));
        bf->b_scale = xcalloc(bf->b_sc_len, sizeof(float));
        fill_f32_scales(bf->a_scale, bf->a_sc_len, t->int_data, &rng);
        fill_f32_scales(bf->b_scale, bf->b_sc_len, t->int_data, &rng);
    } else if (f->scaling == GG_SCALING_MX || f->scaling == GG_SCALING_MX_B) {
        bf->a_sc_len = f->scaling == GG_SCALING_MX ? t->batch * t->m * bf->groups_k : 0;
        bf->b_sc_len = t->batch * t->n * bf->groups_k;
        bf->a_scale = bf->a_sc_len > 0 ? xcalloc(bf->a_sc_len, 1) : NULL;
        bf->b_scale = xcalloc(bf->b_sc_len, 1);
        if (bf->a_scale)
            fill_e8m0(bf->a_scale, bf->a_sc_len, t->int_data, &rng);
        fill_e8m0(bf->b_scale, bf->b_sc_len, t->int_data, &rng);
    }
    if (t->bias_dtype != GG_DTYPE_NONE) {
        bf->bias = xcalloc(elem_bytes(t->bias_dtype, t->batch * t->n), 1);
        fill_codes(t->bias_dtype, bf->bias, t->batch * t->n, t->int_data, &rng);
    }
    dequantise(t, bf);
    bf->ws_bytes = bf->kern->workspace_bytes(&bf->p);
    bf->ws = ws_alloc(bf->ws_bytes, poison);
}

static void teardown(struct tbuf *bf)
{
    void *ptrs[] = {bf->a, bf->b, bf->c, bf->a_scale, bf->b_scale, bf->bias, bf->ws, bf->da,
                    bf->db};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        free(ptrs[i]);
}

static struct gg_operands operands(const struct tbuf *bf)
{
    return (struct gg_operands){.a = bf->a, .b = bf->b, .c = bf->c, .a_scale = bf->a_scale,
                                .b_scale = bf->b_scale, .bias = bf->bias,
                                .workspace = bf->ws, .workspace_bytes = bf->ws_bytes};
}

static enum gg_status run_kernel(struct tbuf *bf, char *err, size_t err_len)
{
    struct gg_operands o = operands(bf);
    err[0] = '\0';
    return bf->kern->run(&bf->p, &o, err, err_len);
}

static int64_t c_at(const struct tbuf *bf, int64_t b, int64_t i, int64_t j)
{
    return b * bf->sc + i * bf->ldc + j;
}

/* Reference of element (b, i, j) in double (the products of the dequantised values are exact
   or within 2^-53, far below the fp32 bound) plus bias, and Σ|ab| + |bias|. */
static void ref_element(const struct tcase *t, const struct tbuf *bf, int64_t b, int64_t i,
                        int64_t j, double *sum, double *abs_sum)
{
    const double *a = bf->da + (b * t->m + i) * t->k, *w = bf->db + (b * t->n + j) * t->k;
    double s = 0.0, s_abs = 0.0;
    for (int64_t kk = 0; kk < t->k; kk++) {
        s += a[kk] * w[kk];
        s_abs += fabs(a[kk] * w[kk]);
    }
    if (t->bias_dtype != GG_DTYPE_NONE) {
        double bias = gg_load(t->bias_dtype, bf->bias, b * t->n + j);
        s += bias;
        s_abs += fabs(bias);
    }
    *sum = s;
    *abs_sum = s_abs;
}

/*
 * Checks every logical element against the reference with
 *   |out - c| <= u_o/(1-u_o)·|out| + γ_h(2^-23)·(Σ|ab| + |bias|) + tiny,
 *   h = K + split + 2·(scale groups) + 4
 * (split-K adds split-1 partial sums; each scale group one multiply and one add; b_scale and
 * bias one rounding each), or bitwise equality with RN_fp32(c) when exact; then that every other
 * element of C (row and batch padding, guard) still holds the sentinel. Returns the violations;
 * when col_mask >= 0 only column col_mask is checked against the reference.
 */
static int64_t check_output_cols(const struct tcase *t, const struct tbuf *bf, int exact,
                                 int64_t col_mask)
{
    char *logical = xcalloc(bf->c_len, 1);
    int64_t h = t->k + t->split + 2 * (t->k / 32 + 1) + 4, bad = 0;
    for (int64_t b = 0; b < t->batch; b++)
        for (int64_t i = 0; i < t->m; i++)
            for (int64_t j = 0; j < t->n; j++) {
                int64_t at = c_at(bf, b, i, j);
                logical[at] = 1;
                if (col_mask >= 0 && j != col_mask)
                    continue;
                double ref, ref_abs, out = out_value(bf->c, t->c_dtype, at);
                ref_element(t, bf, b, i, j, &ref, &ref_abs);
                int ok = !is_sentinel(bf->c, t->c_dtype, at) &&
                         within_fp32_bound(t->c_dtype, out, ref, ref_abs, h, 0x1p-126, exact);
                if (!ok && bad++ == 0)
                    cr_log_info("%s c %s bias %s split %lld: (%lld, %lld, %lld) is %.9g, "
                                "reference %.9g (sum|ab| %.3g)",
                                t->f->name, gg_dtype_name(t->c_dtype),
                                gg_dtype_name(t->bias_dtype), (long long)t->split, (long long)b,
                                (long long)i, (long long)j, out, ref, ref_abs);
            }
    int64_t first, stray = stray_writes(bf->c, t->c_dtype, bf->c_len, logical, &first);
    if (stray > 0 && bad == 0)
        cr_log_info("%s: element %lld outside the output was written", t->f->name,
                    (long long)first);
    free(logical);
    return bad + stray;
}

static int64_t check_output(const struct tcase *t, const struct tbuf *bf, int exact)
{
    return check_output_cols(t, bf, exact, -1);
}

/* Runs one case and checks it, including the workspace guard band; returns the number of
   violations. */
static int64_t run_and_check(const struct tcase *t)
{
    struct tbuf bf;
    setup(t, &bf, 0xFF);
    char err[256];
    enum gg_status st = run_kernel(&bf, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s run failed: %s", t->f->name, err);
    int64_t bad = check_output(t, &bf, t->int_data && t->c_dtype == GG_DTYPE_F32);
    int64_t hits = ws_guard_hits(bf.ws, bf.ws_bytes);
    if (hits > 0)
        cr_log_info("%s: %lld bytes past the reported workspace written", t->f->name,
                    (long long)hits);
    teardown(&bf);
    return bad + hits;
}

/* ---- random shapes around the tile edges ------------------------------------------------- */

static int64_t pick(uint64_t *rng, const int64_t *choice, int64_t count)
{
    return choice[splitmix_below(rng, count)];
}

/* One kernel over split_k 1..3 and 12 shapes each: M and N on either side of the 64 tile,
   K on either side of the 128/256 K step (multiples of 32 for MX), batches 1..3, every output
   and bias dtype, padding on every leading dimension and stride. */
static void run_matrix(const struct family *f, enum gg_layout layout, uint64_t seed)
{
    static const int64_t ms[] = {1, 2, 17, 63, 64, 65, 130};
    static const int64_t ns[] = {1, 15, 16, 17, 63, 64, 65, 129};
    static const int64_t ks_any[] = {1, 7, 127, 128, 129, 255, 256, 257, 300};
    static const int64_t ks_mx[] = {32, 64, 96, 224, 256, 288};
    static const enum gg_dtype biases[] = {GG_DTYPE_NONE, GG_DTYPE_BF16, GG_DTYPE_F32};
    int mx = f->scaling == GG_SCALING_MX || f->scaling == GG_SCALING_MX_B;
    uint64_t rng = seed;
    for (int64_t split = 1; split <= 3; split++)
        for (int idx = 0; idx < 12; idx++) {
            struct tcase t = {.f = f, .layout = layout, .split = split,
                              .c_dtype = idx % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16,
                              .bias_dtype = biases[idx % 3], .batch = 1 + splitmix_below(&rng, 3)};
            t.m = pick(&rng, ms, 7);
            t.n = pick(&rng, ns, 8);
            t.k = mx ? pick(&rng, ks_mx, 6) : pick(&rng, ks_any, 9);
            t.pad_a = splitmix_below(&rng, 2) * 3;
            t.pad_b = splitmix_below(&rng, 2) * 5;
            t.pad_c = splitmix_below(&rng, 2) * 2 + (idx % 2);
            t.pad_sa = splitmix_below(&rng, 2) * 7;
            t.pad_sb = splitmix_below(&rng, 2) * 11;
            t.pad_sc = splitmix_below(&rng, 2) * 13;
            t.seed = splitmix64(&rng);
            cr_expect_eq(run_and_check(&t), 0,
                         "%s layout %d split %lld shape %d (B %lld, M %lld, N %lld, K %lld)",
                         f->name, (int)layout, (long long)split, idx, (long long)t.batch,
                         (long long)t.m, (long long)t.n, (long long)t.k);
        }
}

Test(kernels_cpu_batched, bf16_nk) { run_matrix(&BF16, GG_LAYOUT_NK, 31); }
Test(kernels_cpu_batched, bf16_kn) { run_matrix(&BF16, GG_LAYOUT_KN, 32); }
Test(kernels_cpu_batched, a8w8) { run_matrix(&A8W8, GG_LAYOUT_NK, 33); }
Test(kernels_cpu_batched, a16wfp4) { run_matrix(&A16WFP4, GG_LAYOUT_NK, 34); }
Test(kernels_cpu_batched, afp4wfp4) { run_matrix(&AFP4WFP4, GG_LAYOUT_NK, 35); }

/* a8w8 on fnuz e4m3 inputs (the MI300 encoding) decodes them with the fnuz table. */
Test(kernels_cpu_batched, a8w8_fnuz)
{
    struct family fnuz = A8W8;
    fnuz.a_dtype = fnuz.b_dtype = GG_DTYPE_E4M3FNUZ;
    struct tcase t = {.f = &fnuz, .c_dtype = GG_DTYPE_BF16, .bias_dtype = GG_DTYPE_F32,
                      .batch = 2, .m = 33, .n = 70, .k = 300, .split = 2, .seed = 4};
    cr_expect_eq(run_and_check(&t), 0);
}

/* ---- exact mode, packed defaults, empty shapes ------------------------------------------ */

/* Small integers, power-of-two scales and f32 output: every product, scaled partial and sum is
   exact in fp32, so the output must equal the exact result bit for bit. */
Test(kernels_cpu_batched, small_integers_exact_f32)
{
    for (int fi = 0; fi < N_FAMILIES; fi++)
        for (int64_t split = 1; split <= 3; split++)
            for (int lay = 0; lay < (FAMILIES[fi] == &BF16 ? 2 : 1); lay++) {
                struct tcase t = {.f = FAMILIES[fi], .layout = (enum gg_layout)lay,
                                  .c_dtype = GG_DTYPE_F32, .bias_dtype = GG_DTYPE_BF16,
                                  .batch = 3, .m = 67, .n = 81, .k = 288, .split = split,
                                  .pad_c = 1, .pad_sc = 5, .int_data = 1, .seed = 77};
                cr_expect_eq(run_and_check(&t), 0, "%s split %lld layout %d",
                             FAMILIES[fi]->name, (long long)split, lay);
            }
}

/* All leading dimensions and strides 0: the kernel resolves the packed defaults itself. */
Test(kernels_cpu_batched, zero_leading_dimensions_mean_packed)
{
    for (int fi = 0; fi < N_FAMILIES; fi++)
        for (int lay = 0; lay < (FAMILIES[fi] == &BF16 ? 2 : 1); lay++) {
            struct tcase t = {.f = FAMILIES[fi], .layout = (enum gg_layout)lay,
                              .c_dtype = GG_DTYPE_F32, .batch = 2, .m = 65, .n = 66, .k = 160,
                              .split = 2, .packed = 1, .int_data = 1, .seed = 3};
            cr_expect_eq(run_and_check(&t), 0, "%s layout %d", FAMILIES[fi]->name, lay);
        }
}

/* M = 0 or N = 0 write nothing; K = 0 writes the bias (or exact zeros) everywhere. */
Test(kernels_cpu_batched, empty_shapes)
{
    const int64_t shapes[][4] = {{2, 0, 40, 64}, {2, 40, 0, 64}, {3, 5, 70, 0}, {1, 0, 0, 0}};
    for (int fi = 0; fi < N_FAMILIES; fi++)
        for (int s = 0; s < 4; s++)
            for (int bias = 0; bias < 2; bias++)
                for (int64_t split = 1; split <= 2; split++) {
                    struct tcase t = {.f = FAMILIES[fi], .c_dtype = GG_DTYPE_F32,
                                      .bias_dtype = bias ? GG_DTYPE_F32 : GG_DTYPE_NONE,
                                      .batch = shapes[s][0], .m = shapes[s][1],
                                      .n = shapes[s][2], .k = shapes[s][3], .split = split,
                                      .pad_c = 3, .int_data = 1, .seed = 5};
                    cr_expect_eq(run_and_check(&t), 0, "%s shape %d bias %d split %lld",
                                 FAMILIES[fi]->name, s, bias, (long long)split);
                }
}

/* A zero batch count is an empty problem, not an error. */
Test(kernels_cpu_batched, zero_batches_write_nothing)
{
    for (int fi = 0; fi < N_FAMILIES; fi++) {
        struct tcase t = {.f = FAMILIES[fi], .c_dtype = GG_DTYPE_BF16, .batch = 0, .m = 9,
                          .n = 9, .k = 64, .split = 3, .seed = 6};
        cr_expect_eq(run_and_check(&t), 0, "%s", FAMILIES[fi]->name);
    }
}

/* ---- workspace ----------------------------------------------------------------------------- */

/* With split_k > 1 the output must not depend on the workspace's initial contents, and nothing
   past the reported size is touched. */
Test(kernels_cpu_batched, split_k_output_independent_of_workspace_poison)
{
    const int64_t splits[] = {2, 3, 7, 64};
    for (int fi = 0; fi < N_FAMILIES; fi++)
        for (int s = 0; s < 4; s++) {
            struct tcase t = {.f = FAMILIES[fi], .c_dtype = GG_DTYPE_BF16,
                              .bias_dtype = GG_DTYPE_BF16, .batch = 2, .m = 70, .n = 100,
                              .k = 320, .split = splits[s], .pad_c = 2, .seed = 21};
            struct tbuf b1, b2;
            char err[256];
            setup(&t, &b1, 0xFF); /* NaN partials */
            setup(&t, &b2, 0x42); /* large finite partials */
            cr_assert_gt(b1.ws_bytes, 0);
            cr_assert_eq(run_kernel(&b1, err, sizeof err), GG_OK, "%s", err);
            cr_assert_eq(run_kernel(&b2, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(memcmp(b1.c, b2.c, (size_t)b1.c_len * sizeof(uint16_t)), 0,
                         "%s split %lld: output depends on the workspace poison",
                         FAMILIES[fi]->name, (long long)splits[s]);
            cr_expect_eq(ws_guard_hits(b1.ws, b1.ws_bytes) + ws_guard_hits(b2.ws, b2.ws_bytes), 0,
                         "%s split %lld: write past the reported workspace", FAMILIES[fi]->name,
                         (long long)splits[s]);
            cr_expect_eq(check_output(&t, &b1, 0), 0);
            teardown(&b1);
            teardown(&b2);
        }
}

static struct gg_problem base_problem(const struct family *f, struct gg_kopt *opt)
{
    return (struct gg_problem){.op = GG_OP_BATCHED, .a_dtype = f->a_dtype, .b_dtype = f->b_dtype,
                               .c_dtype = GG_DTYPE_BF16, .acc_dtype = GG_DTYPE_F32,
                               .scaling = f->scaling, .groups = 4, .m = 100, .n = 64, .k = 256,
                               .opts = opt, .n_opts = 1};
}

/* Workspace: none without split-K or without tiles, split · (one wave of tiles) · 64·64 fp32
   otherwise (4 batches of 2 x 1 tiles fit one wave). */
Test(kernels_cpu_batched, workspace_bytes)
{
    for (int fi = 0; fi < N_FAMILIES; fi++) {
        const struct gg_kernel *k = kernel_named(FAMILIES[fi]->name);
        struct gg_kopt opt = {"split_k", 1};
        struct gg_problem p = base_problem(FAMILIES[fi], &opt);
        cr_expect_eq(k->workspace_bytes(&p), 0);
        p.n_opts = 0;
        cr_expect_eq(k->workspace_bytes(&p), 0);
        p.n_opts = 1;
        opt.value = 3;
        cr_expect_eq(k->workspace_bytes(&p), (size_t)3 * 8 * 64 * 64 * sizeof(float));
        p.m = 0;
        cr_expect_eq(k->workspace_bytes(&p), 0);
    }
}

/* ---- descriptors, supports() and errors ------------------------------------------------- */

Test(kernels_cpu_batched, descriptors)
{
    for (int fi = 0; fi < N_FAMILIES; fi++) {
        const struct gg_kernel *k = kernel_named(FAMILIES[fi]->name);
        cr_expect_eq(k->abi_version, GG_KERNEL_ABI_VERSION);
        cr_expect_eq(k->ops, GG_OP_BIT(GG_OP_BATCHED));
        cr_expect_eq(k->backend, GG_BACKEND_CPU);
        cr_expect_eq(k->tile_m, 64);
        cr_expect_eq(k->tile_n, 64);
        cr_expect_eq(k->tile_k, FAMILIES[fi] == &A8W8 ? 128 : 256);
        cr_assert_not_null(k->mutants);
        cr_expect_str_eq(k->mutants[0], "n_tail");
        cr_expect_str_eq(k->mutants[1], "i32_store_offset");
        cr_expect_str_eq(k->mutants[2], "stride_a_packed");
        cr_expect_null(k->mutants[3]);
        cr_expect_not_null(k->summary);
    }
}

Test(kernels_cpu_batched, supports_refuses_with_reason)
{
    for (int fi = 0; fi < N_FAMILIES; fi++) {
        const struct family *f = FAMILIES[fi];
        const struct gg_kernel *k = kernel_named(f->name);
        struct gg_kopt opt = {"split_k", 1};
        struct gg_problem p = base_problem(f, &opt), q;
        expect_common_supports(k, p);
        q = p, q.c_dtype = GG_DTYPE_F32, expect_accepted(k, q, "f32 output");
        q = p, q.bias_dtype = GG_DTYPE_BF16, expect_accepted(k, q, "bf16 bias");
        q = p, q.bias_dtype = GG_DTYPE_F32, expect_accepted(k, q, "f32 bias");
        q = p, q.mutant = "n_tail", expect_accepted(k, q, "its mutant");
        q = p, q.b_layout = GG_LAYOUT_KN;
        if (f == &BF16)
            expect_accepted(k, q, "layout kn");
        else
            expect_refused(k, q, "layout");
        q = p, q.op = GG_OP_GROUPED_FWD, expect_refused(k, q, "batched");
        q = p, q.op = GG_OP_DENSE, expect_refused(k, q, "batched");
        q = p, q.scaling = GG_SCALING_TENSOR, expect_refused(k, q, "scaling");
        q = p, q.a_dtype = GG_DTYPE_E5M2, expect_refused(k, q, "dtypes");
        q = p, q.b_dtype = GG_DTYPE_F32, expect_refused(k, q, "dtypes");
        q = p, q.bias_dtype = GG_DTYPE_F16, expect_refused(k, q, "bias");
        const int64_t bad_splits[] = {0, -1, 65};
        for (int i = 0; i < 3; i++) {
            q = p;
            struct gg_kopt bad = {"split_k", bad_splits[i]};
            q.opts = &bad;
            expect_refused(k, q, "split_k");
        }
        int mx = f->scaling == GG_SCALING_MX || f->scaling == GG_SCALING_MX_B;
        q = p, q.k = 100;
        if (mx)
            expect_refused(k, q, "multiple of 32");
        else
            expect_accepted(k, q, "K = 100");
        if (f->a_dtype == GG_DTYPE_E2M1) {
            q = p, q.lda = 257, expect_refused(k, q, "e2m1");
            q = p, q.stride_a = 100 * 256 + 1, expect_refused(k, q, "e2m1");
        }
        if (f->b_dtype == GG_DTYPE_E2M1) {
            q = p, q.ldb = 259, expect_refused(k, q, "e2m1");
            q = p, q.stride_b = 64 * 256 + 3, expect_refused(k, q, "e2m1");
            q = p, q.ldb = 258, q.stride_b = 64 * 258, expect_accepted(k, q, "even ldb");
        }
    }
}

/* Inconsistent problems are GG_E_INVAL with a message; unsupported ones GG_E_UNSUPPORTED. */
Test(kernels_cpu_batched, run_rejects_inconsistent_problems)
{
    for (int fi = 0; fi < N_FAMILIES; fi++) {
        const struct family *f = FAMILIES[fi];
        struct tcase t = {.f = f, .c_dtype = GG_DTYPE_BF16, .bias_dtype = GG_DTYPE_F32,
                          .batch = 2, .m = 20, .n = 20, .k = 64, .split = 2, .seed = 1};
        struct tbuf bf;
        char err[256];
        setup(&t, &bf, 0);
        void *saved;
#define EXPECT_INVAL_WITHOUT(field)                                                                \
    do {                                                                                           \
        saved = bf.field, bf.field = NULL;                                                         \
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_E_INVAL, "%s without " #field,          \
                     f->name);                                                                     \
        cr_expect_neq(err[0], '\0');                                                               \
        bf.field = saved;                                                                          \
    } while (0)
        EXPECT_INVAL_WITHOUT(a);
        EXPECT_INVAL_WITHOUT(b);
        EXPECT_INVAL_WITHOUT(c);
        EXPECT_INVAL_WITHOUT(bias);
        EXPECT_INVAL_WITHOUT(ws);
        if (f->scaling == GG_SCALING_BLOCK128 || f->scaling == GG_SCALING_MX)
            EXPECT_INVAL_WITHOUT(a_scale);
        if (f->scaling != GG_SCALING_NONE)
            EXPECT_INVAL_WITHOUT(b_scale);
#undef EXPECT_INVAL_WITHOUT
        bf.ws_bytes -= 1;
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_E_INVAL);
        bf.ws_bytes += 1;
        bf.p.lda = 10; /* below K */
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_E_INVAL);
        cr_expect_neq(err[0], '\0');
        bf.p.lda = bf.lda;
        bf.p.stride_c = 20 * bf.ldc - 1; /* batches of C would overlap */
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_E_INVAL);
        bf.p.stride_c = bf.sc;
        bf.p.scaling = GG_SCALING_TENSOR;
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_E_UNSUPPORTED);
        cr_expect_neq(err[0], '\0');
        bf.p.scaling = f->scaling;
        cr_expect_eq(run_kernel(&bf, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &bf, 0), 0, "%s", f->name);
        teardown(&bf);
    }
}

/* ---- mutant n_tail ---------------------------------------------------------------------------- */

/*
 * n_tail re-creates an off-by-one tail mask: the last, partial N tile loads B one column short,
 * so its last column sums zeros and holds only the bias. With N not a multiple of tile_n, every
 * element but column N-1 is bitwise the correct kernel's, column N-1 is the bias rounded (and
 * fails the reference check), and the correct kernel passes; with N a multiple of tile_n (no
 * tail) the mutant is bitwise the correct kernel.
 */
static void check_n_tail(const struct family *f, enum gg_layout layout, int64_t n,
                         enum gg_dtype bias_dtype, int64_t split)
{
    struct tcase good = {.f = f, .layout = layout, .c_dtype = GG_DTYPE_BF16,
                         .bias_dtype = bias_dtype, .batch = 3, .m = 70, .n = n, .k = 256,
                         .split = split, .pad_c = 3, .seed = 99};
    struct tcase bad = good;
    bad.mutant = "n_tail";
    struct tbuf bg, bm;
    char err[256];
    setup(&good, &bg, 0xFF);
    setup(&bad, &bm, 0xFF);
    cr_assert_eq(run_kernel(&bg, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(run_kernel(&bm, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(check_output(&good, &bg, 0), 0, "%s: correct kernel fails", f->name);
    int has_tail = n % 64 != 0;
    int64_t same_elsewhere = 0, tail_is_bias = 0, tail_differs = 0;
    for (int64_t b = 0; b < good.batch; b++)
        for (int64_t i = 0; i < good.m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t at = c_at(&bg, b, i, j);
                int differs = out_bits(bg.c, good.c_dtype, at) != out_bits(bm.c, bad.c_dtype, at);
                if (!has_tail || j != n - 1) {
                    same_elsewhere += differs;
                    continue;
                }
                double bias = bias_dtype == GG_DTYPE_NONE
                                  ? 0.0 : gg_load(bias_dtype, bm.bias, b * n + j);
                double want = gg_decode(GG_DTYPE_BF16, gg_encode(GG_DTYPE_BF16, bias,
                                                                 GG_SAT_NONE));
                tail_is_bias += gg_load(GG_DTYPE_BF16, bm.c, at) == want;
                tail_differs += differs;
            }
    cr_expect_eq(same_elsewhere, 0, "%s N %lld: mutant changed %lld elements off the tail column",
                 f->name, (long long)n, (long long)same_elsewhere);
    if (has_tail) {
        int64_t rows = good.batch * good.m;
        cr_expect_eq(tail_is_bias, rows, "%s N %lld: %lld of %lld tail elements hold the bias",
                     f->name, (long long)n, (long long)tail_is_bias, (long long)rows);
        cr_expect_gt(tail_differs, rows / 2, "%s N %lld: the tail column barely changed",
                     f->name, (long long)n);
        cr_expect_geq(check_output_cols(&bad, &bm, 0, n - 1), rows / 2,
                      "%s N %lld: the reference check misses the tail column", f->name,
                      (long long)n);
    }
    teardown(&bg);
    teardown(&bm);
}

Test(kernels_cpu_batched, n_tail_mutant_masks_the_last_column_of_the_tail_tile)
{
    const int64_t ns[] = {5, 64 + 5, 2 * 64 + 17, 128};
    for (int fi = 0; fi < N_FAMILIES; fi++)
        for (int s = 0; s < 4; s++) {
            enum gg_dtype bias = s % 2 ? GG_DTYPE_F32 : GG_DTYPE_NONE;
            check_n_tail(FAMILIES[fi], GG_LAYOUT_NK, ns[s], bias, 1 + s % 2);
            if (FAMILIES[fi] == &BF16)
                check_n_tail(FAMILIES[fi], GG_LAYOUT_KN, ns[s], bias, 1);
        }
}

/*
 * test_kernels_cpu_mx.c — the MX-FP8 CPU kernels (mx_e4m3_cpu_grouped, _gemv, _tiled and
 * moe_mx_e4m3_cpu_sorted) against a naive double loop over the OCP MX dot product
 * Σ_blocks 2^(xa+xb-254)·Σ_32 PaPb: e4m3/e5m2 payloads, bf16/f32 output, bias, split-K, padded
 * leading dimensions whose padding must stay untouched, empty groups and experts, padding
 * entries of the sorted layout, E8M0 special codes; bitwise agreement of the four kernels;
 * workspace independence; supports() and workspace_bytes(); and each mutant of the family.
 */
#include "kernel_fixture.h"
#include "reference/gg_ref.h"
#include "splitmix.h"

#define MAX_G 8

#define GROUPED "mx_e4m3_cpu_grouped"
#define GEMV "mx_e4m3_cpu_gemv"
#define TILED "mx_e4m3_cpu_tiled"
#define MOE "moe_mx_e4m3_cpu_sorted"

/* ---- one case -------------------------------------------------------------------------- */

struct spec {
    const char *kernel;
    enum gg_dtype a_dt, b_dt, c_dt, bias_dt; /* bias_dt GG_DTYPE_NONE: no bias */
    int64_t groups, lens[MAX_G]; /* grouped: rows per group; moe: entries per expert */
    int64_t m, n, k;             /* dense M or moe T; grouped m is the sum of lens */
    int64_t topk, block_m;       /* moe */
    int pad_only_blocks;         /* moe: experts without tokens get one block of padding */
    int64_t split;
    int64_t pad_a, pad_b, pad_c, pad_sb; /* extra elements per row / per matrix */
    unsigned scale_lo, scale_span;       /* E8M0 codes drawn from lo .. lo+span-1 */
    const char *mutant;
    uint64_t seed;
};

/* A materialised case: the problem, its operands, and the (A row, C row, matrix) triples of
   every logical output row. X and its scales have one spare row, and C a guard of at least one
   row, so that a kernel computing a padding entry of the sorted layout stays inside the test's
   memory. */
struct mxt {
    struct spec s;
    enum gg_op op;
    struct gg_problem p;
    struct gg_kopt opt;
    int64_t lens[MAX_G], offs[MAX_G + 1], offs_dev[MAX_G + 1];
    int32_t *sorted, *sorted_dev, *experts, *experts_dev;
    int64_t a_rows, c_rows, mats, lda, ldb, ldc, sb, blocks;
    uint8_t *a, *b, *sa, *sb_codes;
    void *bias, *c;
    int64_t c_len; /* elements, guard included */
    int64_t *row_a, *row_c, *row_mat, n_rows;
    unsigned char *ws; /* ws_bytes (the reported size) + the guard band */
    size_t ws_bytes;
};

static enum gg_op op_of(const char *name)
{
    if (strcmp(name, GROUPED) == 0)
        return GG_OP_GROUPED_FWD;
    return strcmp(name, MOE) == 0 ? GG_OP_MOE_SORTED : GG_OP_DENSE;
}

/* A random finite payload code of dt. */
static uint8_t payload(enum gg_dtype dt, uint64_t *rng)
{
    for (;;) {
        uint8_t c = (uint8_t)splitmix64(rng);
        if (isfinite(gg_decode(dt, c)))
            return c;
    }
}

static double out_at(const struct mxt *t, int64_t i)
{
    return out_value(t->c, t->s.c_dt, i);
}

/* The sorted layout: the T·topk ids shuffled and dealt to the experts in order, lens[e] each,
   sorted within an expert and padded with the id T·topk to whole blocks of block_m. */
static void make_routing(struct mxt *t, uint64_t *rng)
{
    int64_t pairs = t->s.m * t->s.topk, bm = t->s.block_m, len = 0, dealt = 0, at = 0;
    for (int64_t e = 0; e < t->s.groups; e++) {
        int64_t blocks = (t->s.lens[e] + bm - 1) / bm;
        len += (blocks == 0 && t->s.pad_only_blocks ? 1 : blocks) * bm;
        dealt += t->s.lens[e];
    }
    cr_assert_eq(dealt, pairs, "expert loads must sum to T*topk");
    int32_t *perm = xcalloc(pairs, sizeof *perm);
    for (int64_t i = 0; i < pairs; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = pairs - 1; i > 0; i--) {
        int64_t j = splitmix_below(rng, i + 1);
        int32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    t->sorted = xcalloc(len, sizeof(int32_t));
    t->experts = xcalloc(len / bm, sizeof(int32_t));
    dealt = 0;
    for (int64_t e = 0; e < t->s.groups; e++) {
        int64_t n = t->s.lens[e], blocks = (n + bm - 1) / bm;
        if (blocks == 0 && t->s.pad_only_blocks)
            blocks = 1;
        for (int64_t i = 0; i < blocks * bm; i++)
            t->sorted[at + i] = i < n ? perm[dealt + i] : (int32_t)pairs;
        for (int64_t i = 1; i < n; i++)
            for (int64_t j = at + i; j > at && t->sorted[j - 1] > t->sorted[j]; j--) {
                int32_t x = t->sorted[j];
                t->sorted[j] = t->sorted[j - 1];
                t->sorted[j - 1] = x;
            }
        for (int64_t b = 0; b < blocks; b++)
            t->experts[at / bm + b] = (int32_t)e;
        at += blocks * bm;
        dealt += n;
    }
    free(perm);
    t->sorted_dev = xcalloc(len, sizeof(int32_t));
    t->experts_dev = xcalloc(len / bm, sizeof(int32_t));
    memcpy(t->sorted_dev, t->sorted, (size_t)len * sizeof(int32_t));
    memcpy(t->experts_dev, t->experts, (size_t)(len / bm) * sizeof(int32_t));
    t->p.sorted_len = len;
    t->p.sorted_ids = t->sorted;
    t->p.expert_ids = t->experts;
    t->n_rows = 0;
    t->row_a = xcalloc(pairs, sizeof(int64_t));
    t->row_c = xcalloc(pairs, sizeof(int64_t));
    t->row_mat = xcalloc(pairs, sizeof(int64_t));
    for (int64_t i = 0; i < len; i++) {
        if (t->sorted[i] >= pairs)
            continue;
        t->row_a[t->n_rows] = t->sorted[i] / t->s.topk;
        t->row_c[t->n_rows] = t->sorted[i];
        t->row_mat[t->n_rows++] = t->experts[i / bm];
    }
}

/* The logical rows of a grouped or dense case. */
static void make_rows(struct mxt *t)
{
    t->row_a = xcalloc(t->a_rows, sizeof(int64_t));
    t->row_c = xcalloc(t->a_rows, sizeof(int64_t));
    t->row_mat = xcalloc(t->a_rows, sizeof(int64_t));
    t->n_rows = t->a_rows;
    for (int64_t g = 0; g < t->mats; g++)
        for (int64_t r = t->offs[g]; r < t->offs[g + 1]; r++) {
            t->row_a[r] = t->row_c[r] = r;
            t->row_mat[r] = g;
        }
}

/* Builds the case: codes and scales from s->seed, C at the sentinel, and a workspace of exactly
   workspace_bytes() filled with byte poison, then a guard band. */
static void setup(struct mxt *t, const struct spec *s, unsigned char poison)
{
    memset(t, 0, sizeof *t);
    t->s = *s;
    t->op = op_of(s->kernel);
    uint64_t rng = s->seed;
    int moe = t->op == GG_OP_MOE_SORTED, grouped = t->op == GG_OP_GROUPED_FWD;
    t->mats = t->op == GG_OP_DENSE ? 1 : s->groups;
    cr_assert(t->mats <= MAX_G);
    for (int64_t g = 0; g < s->groups && !moe; g++) {
        t->lens[g] = s->lens[g];
        t->offs[g + 1] = t->offs[g] + s->lens[g];
    }
    if (t->op == GG_OP_DENSE)
        t->offs[1] = s->m;
    memcpy(t->offs_dev, t->offs, sizeof t->offs);
    t->a_rows = grouped ? t->offs[s->groups] : s->m;
    t->c_rows = moe ? s->m * s->topk : t->a_rows;
    t->lda = s->k + s->pad_a;
    t->ldb = s->k + s->pad_b;
    t->ldc = s->n + s->pad_c;
    t->sb = s->n * t->ldb + s->pad_sb;
    t->blocks = s->k / 32;
    t->opt = (struct gg_kopt){"split_k", s->split > 0 ? s->split : 1};
    t->p = (struct gg_problem){
        .op = t->op, .a_dtype = s->a_dt, .b_dtype = s->b_dt, .c_dtype = s->c_dt,
        .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_MX, .b_layout = GG_LAYOUT_NK,
        .groups = moe || grouped ? s->groups : 1, .m = grouped ? t->a_rows : s->m, .n = s->n,
        .k = s->k, .lda = t->lda, .ldb = t->ldb, .ldc = t->ldc, .stride_b = t->sb,
        .group_lens = grouped ? t->lens : moe ? t->s.lens : NULL,
        .group_offs = grouped ? t->offs : NULL, .bias_dtype = s->bias_dt,
        .topk = moe ? s->topk : 0, .block_m = moe ? s->block_m : 0, .opts = &t->opt,
        .n_opts = 1, .mutant = s->mutant};
    int64_t a_len = (t->a_rows + 1) * t->lda, b_len = t->mats * t->sb;
    t->a = xcalloc(a_len, 1);
    t->b = xcalloc(b_len, 1);
    t->sa = xcalloc((t->a_rows + 1) * t->blocks, 1);
    t->sb_codes = xcalloc(t->mats * s->n * t->blocks, 1);
    for (int64_t i = 0; i < a_len; i++)
        t->a[i] = payload(s->a_dt, &rng);
    for (int64_t i = 0; i < b_len; i++)
        t->b[i] = payload(s->b_dt, &rng);
    unsigned lo = s->scale_span ? s->scale_lo : 122, span = s->scale_span ? s->scale_span : 10;
    for (int64_t i = 0; i < (t->a_rows + 1) * t->blocks; i++)
        t->sa[i] = (uint8_t)(lo + splitmix_below(&rng, span));
    for (int64_t i = 0; i < t->mats * s->n * t->blocks; i++)
        t->sb_codes[i] = (uint8_t)(lo + splitmix_below(&rng, span));
    if (s->bias_dt != GG_DTYPE_NONE) {
        t->bias = xcalloc(t->mats * s->n, sizeof(float));
        for (int64_t i = 0; i < t->mats * s->n; i++)
            gg_store_code(s->bias_dt, t->bias, i,
                          gg_encode(s->bias_dt, (double)(splitmix_below(&rng, 2001) - 1000) / 64.0,
                                    GG_SAT_FINITE));
    }
    t->c_len = t->c_rows * t->ldc + s->n + GUARD_ELEMS;
    t->c = xcalloc(t->c_len, out_elem_bytes(s->c_dt));
    fill_sentinel(t->c, s->c_dt, t->c_len);
    if (moe)
        make_routing(t, &rng);
    else
        make_rows(t);
    const struct gg_kernel *k = kernel_named(s->kernel);
    t->ws_bytes = k->workspace_bytes ? k->workspace_bytes(&t->p) : 0;
    t->ws = ws_alloc(t->ws_bytes, poison);
}

static void teardown(struct mxt *t)
{
    free(t->a);
    free(t->b);
    free(t->sa);
    free(t->sb_codes);
    free(t->bias);
    free(t->c);
    free(t->ws);
    free(t->sorted);
    free(t->sorted_dev);
    free(t->experts);
    free(t->experts_dev);
    free(t->row_a);
    free(t->row_c);
    free(t->row_mat);
}

static enum gg_status run_kernel(struct mxt *t, char *err, size_t err_len)
{
    struct gg_operands o = {.a = t->a, .b = t->b, .c = t->c, .a_scale = t->sa,
                            .b_scale = t->sb_codes, .bias = t->bias, .workspace = t->ws,
                            .workspace_bytes = t->ws_bytes,
                            .group_lens_dev = t->op == GG_OP_GROUPED_FWD ? t->lens : NULL,
                            .group_offs_dev = t->op == GG_OP_GROUPED_FWD ? t->offs_dev : NULL,
                            .sorted_ids_dev = t->sorted_dev, .expert_ids_dev = t->experts_dev};
    err[0] = '\0';
    return kernel_named(t->s.kernel)->run(&t->p, &o, err, err_len);
}

static void run_ok(struct mxt *t)
{
    char err[256];
    enum gg_status st = run_kernel(t, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s failed: %s", t->s.kernel, err);
}

/* ---- reference ------------------------------------------------------------------------- */

/*
 * Output (row i of the logical rows, column n) in double: Σ over the first `blocks` blocks of
 * 2^(xa+xb-254)·Σ_32 PaPb (each block sum exact in double; NaN for a 0xFF scale) plus the bias,
 * and the matching Σ|ab|.
 */
static void ref_element(const struct mxt *t, int64_t i, int64_t n, int64_t blocks, double *sum,
                        double *abs_sum)
{
    const uint8_t *arow = t->a + t->row_a[i] * t->lda, *xa = t->sa + t->row_a[i] * t->blocks;
    int64_t w = t->row_mat[i];
    const uint8_t *brow = t->b + w * t->sb + n * t->ldb;
    const uint8_t *xb = t->sb_codes + (w * t->s.n + n) * t->blocks;
    double s = 0.0, sa = 0.0;
    for (int64_t kb = 0; kb < blocks; kb++) {
        double bs = 0.0, ba = 0.0;
        for (int64_t q = kb * 32; q < kb * 32 + 32; q++) {
            double prod = gg_decode(t->s.a_dt, arow[q]) * gg_decode(t->s.b_dt, brow[q]);
            bs += prod;
            ba += fabs(prod);
        }
        if (xa[kb] == 0xFF || xb[kb] == 0xFF) {
            s = NAN;
            continue;
        }
        s += ldexp(bs, xa[kb] + xb[kb] - 254);
        sa += ldexp(ba, xa[kb] + xb[kb] - 254);
    }
    if (t->s.bias_dt != GG_DTYPE_NONE) {
        double bv = gg_load(t->s.bias_dt, t->bias, w * t->s.n + n);
        s += bv;
        sa += fabs(bv);
    }
    *sum = s;
    *abs_sum = sa;
}

static int64_t c_index(const struct mxt *t, int64_t i, int64_t n)
{
    return t->row_c[i] * t->ldc + n;
}

/* Whether out is within the bound of within_fp32_bound() over h = K + split + 2 fp32 roundings
   of the reference c (NaN where the reference is NaN). */
static int within_bound(const struct mxt *t, double out, double ref, double ref_abs)
{
    int64_t h = t->s.k + (t->s.split > 0 ? t->s.split : 1) + 2;
    return within_fp32_bound(t->s.c_dt, out, ref, ref_abs, h, 0x1p-120, 0);
}

/* Checks every logical output against the reference over `blocks` blocks of K, and that every
   other element of C (row padding, unrouted rows, guard) holds the sentinel. Returns the
   number of logical outputs out of bound and, in *stray, the written non-output elements (or,
   with stray NULL, adds them to the count). Logs the first violation as information. */
static int64_t check_blocks(const struct mxt *t, int64_t blocks, int64_t *stray)
{
    char *logical = xcalloc(t->c_len, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < t->n_rows; i++)
        for (int64_t n = 0; n < t->s.n; n++) {
            int64_t at = c_index(t, i, n);
            double ref, ref_abs, out = out_at(t, at);
            logical[at] = 1;
            ref_element(t, i, n, blocks, &ref, &ref_abs);
            if ((is_sentinel(t->c, t->s.c_dt, at) || !within_bound(t, out, ref, ref_abs)) &&
                bad++ == 0)
                cr_log_info("%s: row %lld col %lld is %.9g, reference %.9g (sum|ab| %.3g)",
                            t->s.kernel, (long long)t->row_c[i], (long long)n, out, ref, ref_abs);
        }
    int64_t first, wild = stray_writes(t->c, t->s.c_dt, t->c_len, logical, &first);
    if (wild > 0)
        cr_log_info("%s: element %lld outside the output was written", t->s.kernel,
                    (long long)first);
    free(logical);
    if (stray != NULL)
        *stray = wild;
    return bad + (stray == NULL ? wild : 0);
}

static int64_t check(const struct mxt *t)
{
    return check_blocks(t, t->blocks, NULL);
}

/* Sets up, runs and checks one case, including the workspace guard band; returns the number of
   violations. */
static int64_t run_and_check(const struct spec *s)
{
    struct mxt t;
    setup(&t, s, 0xFF);
    run_ok(&t);
    int64_t bad = check(&t), hits = ws_guard_hits(t.ws, t.ws_bytes);
    if (hits > 0)
        cr_log_info("%s: %lld bytes past the reported workspace written", s->kernel,
                    (long long)hits);
    teardown(&t);
    return bad + hits;
}

/* ---- correctness ----------------------------------------------------------------------- */

static const enum gg_dtype PAYLOADS[3][2] = {
    {GG_DTYPE_E4M3, GG_DTYPE_E4M3}, {GG_DTYPE_E5M2, GG_DTYPE_E5M2}, {GG_DTYPE_E4M3, GG_DTYPE_E5M2}};
static const enum gg_dtype BIASES[3] = {GG_DTYPE_NONE, GG_DTYPE_F32, GG_DTYPE_BF16};

/* Variant v of a spec: payload pair, output dtype, bias and padding drawn from v. */
static void vary(struct spec *s, int v)
{
    s->a_dt = PAYLOADS[v % 3][0];
    s->b_dt = PAYLOADS[v % 3][1];
    s->c_dt = (v / 3) % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16;
    s->bias_dt = BIASES[(v / 2) % 3];
    int pad = v % 4 == 1;
    s->pad_a = pad ? 16 : 0;
    s->pad_b = pad ? 32 : 0;
    s->pad_c = pad ? 5 : 0;
    s->pad_sb = pad ? 64 : 0;
    s->seed = 0x5EED0000u + (uint64_t)v;
}

Test(kernels_cpu_mx, grouped_shapes_around_the_tile)
{
    static const int64_t pats[][MAX_G] = {
        {0, 1, 31, 32, 33}, {70, 0, 0, 0, 0}, {0, 0, 5, 0, 64}, {3, 0, 0, 0, 0}};
    static const int64_t npat[] = {5, 5, 5, 1};
    static const int64_t ns[] = {1, 64, 70}, ks[] = {32, 160, 256};
    for (int v = 0; v < 24; v++) {
        struct spec s = {.kernel = GROUPED, .n = ns[v % 3], .k = ks[(v / 3) % 3],
                         .split = 1 + (v % 5 == 4 ? 2 : 0)};
        vary(&s, v);
        s.groups = npat[v % 4];
        memcpy(s.lens, pats[v % 4], sizeof s.lens);
        cr_expect_eq(run_and_check(&s), 0, "variant %d", v);
    }
}

Test(kernels_cpu_mx, gemv_shapes)
{
    static const int64_t ms[] = {1, 5, 16}, ns[] = {1, 8, 13, 40}, ks[] = {32, 96, 288};
    for (int v = 0; v < 24; v++) {
        struct spec s = {.kernel = GEMV, .m = ms[v % 3], .n = ns[v % 4], .k = ks[(v / 4) % 3]};
        vary(&s, v);
        cr_expect_eq(run_and_check(&s), 0, "variant %d", v);
    }
}

Test(kernels_cpu_mx, tiled_split_k)
{
    static const int64_t ms[] = {8, 33, 64}, splits[] = {1, 2, 3, 7};
    for (int v = 0; v < 24; v++) {
        /* K = 160 has 5 blocks: split 7 leaves trailing slices empty. */
        struct spec s = {.kernel = TILED, .m = ms[v % 3], .n = v % 2 ? 70 : 129,
                         .k = v % 3 ? 160 : 512, .split = splits[v % 4]};
        vary(&s, v);
        cr_expect_eq(run_and_check(&s), 0, "variant %d", v);
    }
}

Test(kernels_cpu_mx, moe_sorted_layouts)
{
    struct spec base = {.kernel = MOE, .n = 70, .k = 96, .topk = 2, .groups = 5,
                        .lens = {7, 0, 10, 9, 0}, .m = 13};
    static const int64_t block_ms[] = {1, 4, 16, 40};
    for (int v = 0; v < 12; v++) {
        struct spec s = base;
        vary(&s, v);
        s.block_m = block_ms[v % 4];
        s.pad_only_blocks = v % 2;
        cr_expect_eq(run_and_check(&s), 0, "variant %d", v);
    }
    /* Blocks longer than the row tile, and one expert taking every entry. */
    struct spec big = {.kernel = MOE, .n = 65, .k = 64, .topk = 2, .groups = 3,
                       .lens = {0, 45, 35}, .m = 40, .block_m = 64, .a_dt = GG_DTYPE_E4M3,
                       .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .seed = 9};
    cr_expect_eq(run_and_check(&big), 0);
    struct spec one = {.kernel = MOE, .n = 8, .k = 32, .topk = 3, .groups = 2, .lens = {0, 12},
                       .m = 4, .block_m = 5, .a_dt = GG_DTYPE_E5M2, .b_dt = GG_DTYPE_E5M2,
                       .c_dt = GG_DTYPE_BF16, .bias_dt = GG_DTYPE_F32, .seed = 10};
    cr_expect_eq(run_and_check(&one), 0);
}

/* The four kernels sum in the same order (products within a block, then blocks), so on the
   same 16 x K rows they must agree bit for bit. */
Test(kernels_cpu_mx, kernels_agree_bitwise)
{
    struct spec s = {.n = 77, .k = 320, .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3,
                     .c_dt = GG_DTYPE_F32, .bias_dt = GG_DTYPE_F32, .m = 16, .groups = 1,
                     .lens = {16}, .topk = 1, .block_m = 16, .seed = 77, .split = 1};
    const char *names[] = {GEMV, TILED, GROUPED, MOE};
    struct mxt t[4];
    for (int i = 0; i < 4; i++) {
        s.kernel = names[i];
        setup(&t[i], &s, 0xAB);
        run_ok(&t[i]);
        cr_expect_eq(check(&t[i]), 0, "%s", names[i]);
    }
    for (int i = 1; i < 4; i++) {
        cr_assert_eq(memcmp(t[0].a, t[i].a, (size_t)(16 * 320)), 0, "same data");
        cr_expect_eq(memcmp(t[0].c, t[i].c, (size_t)(16 * 77) * sizeof(float)), 0,
                     "%s differs from %s", names[i], names[0]);
    }
    for (int i = 0; i < 4; i++)
        teardown(&t[i]);
}

/* ---- structure --------------------------------------------------------------------------- */

Test(kernels_cpu_mx, empty_problems_write_nothing)
{
    struct spec empty = {.kernel = GROUPED, .groups = 3, .lens = {0, 0, 0}, .n = 40, .k = 64,
                         .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_BF16,
                         .bias_dt = GG_DTYPE_F32, .split = 2};
    struct mxt t;
    setup(&t, &empty, 0);
    run_ok(&t);
    for (int64_t i = 0; i < t.c_len; i++)
        cr_assert(is_sentinel(t.c, t.s.c_dt, i), "element %lld written", (long long)i);
    teardown(&t);
    struct spec m0 = empty;
    m0.kernel = GEMV;
    m0.m = 0;
    m0.split = 1;
    setup(&t, &m0, 0);
    run_ok(&t);
    for (int64_t i = 0; i < t.c_len; i++)
        cr_assert(is_sentinel(t.c, t.s.c_dt, i), "element %lld written", (long long)i);
    teardown(&t);
    struct spec n0 = {.kernel = TILED, .m = 9, .n = 0, .k = 64, .a_dt = GG_DTYPE_E4M3,
                      .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .split = 3};
    setup(&t, &n0, 0);
    cr_expect_eq(t.ws_bytes, 0, "no tiles, no workspace");
    run_ok(&t);
    for (int64_t i = 0; i < t.c_len; i++)
        cr_assert(is_sentinel(t.c, t.s.c_dt, i), "element %lld written", (long long)i);
    teardown(&t);
}

/* K = 0: every output is exactly the bias (f32 out) or zero. */
Test(kernels_cpu_mx, k_zero_gives_the_bias)
{
    const char *names[] = {GEMV, TILED, GROUPED, MOE};
    for (int i = 0; i < 4; i++) {
        struct spec s = {.kernel = names[i], .m = 9, .n = 20, .k = 0, .groups = 2,
                         .lens = {4, 14}, .topk = 2, .block_m = 4, .a_dt = GG_DTYPE_E4M3,
                         .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32,
                         .bias_dt = i % 2 ? GG_DTYPE_F32 : GG_DTYPE_NONE, .split = 2};
        if (strcmp(names[i], GEMV) == 0 || strcmp(names[i], MOE) == 0)
            s.split = 1;
        if (strcmp(names[i], GROUPED) == 0)
            s.lens[1] = 5;
        struct mxt t;
        setup(&t, &s, 0x11);
        run_ok(&t);
        for (int64_t r = 0; r < t.n_rows; r++)
            for (int64_t n = 0; n < s.n; n++) {
                double want = s.bias_dt == GG_DTYPE_NONE
                                  ? 0.0
                                  : gg_load(s.bias_dt, t.bias, t.row_mat[r] * s.n + n);
                cr_expect_eq(out_at(&t, c_index(&t, r, n)), want, "%s", names[i]);
            }
        cr_expect_eq(check(&t), 0, "%s", names[i]);
        teardown(&t);
    }
}

/* Two different workspace poisons give bitwise identical outputs, and nothing past the
   reported workspace is touched. */
Test(kernels_cpu_mx, workspace_poison_independent)
{
    const char *names[] = {TILED, GROUPED};
    for (int i = 0; i < 2; i++) {
        struct spec s = {.kernel = names[i], .m = 40, .groups = 3, .lens = {40, 0, 17},
                         .n = 130, .k = 224, .split = 3, .a_dt = GG_DTYPE_E4M3,
                         .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32, .seed = 31};
        struct mxt t1, t2;
        setup(&t1, &s, 0x00);
        setup(&t2, &s, 0xFF);
        cr_assert_gt(t1.ws_bytes, 0);
        run_ok(&t1);
        run_ok(&t2);
        cr_assert_eq(ws_guard_hits(t1.ws, t1.ws_bytes) + ws_guard_hits(t2.ws, t2.ws_bytes), 0,
                     "%s wrote past its workspace", names[i]);
        cr_expect_eq(memcmp(t1.c, t2.c, (size_t)t1.c_len * sizeof(float)), 0, "%s", names[i]);
        cr_expect_eq(check(&t1), 0);
        teardown(&t1);
        teardown(&t2);
    }
}

Test(kernels_cpu_mx, workspace_bytes_reported)
{
    const struct gg_kernel *k = kernel_named(TILED);
    struct spec s = {.kernel = TILED, .m = 40, .n = 130, .k = 256, .split = 1,
                     .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_F32};
    struct mxt t;
    setup(&t, &s, 0);
    cr_expect_eq(t.ws_bytes, 0, "no split-K, no workspace");
    teardown(&t);
    s.split = 3;
    setup(&t, &s, 0);
    /* 2 x 3 tiles, 3 slices of one fp32 tile each. */
    size_t want = (size_t)(3 * 2 * 3 * k->tile_m * k->tile_n) * sizeof(float);
    cr_expect_eq(t.ws_bytes, want);
    t.ws_bytes -= 1;
    char err[256];
    cr_expect_eq(run_kernel(&t, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "workspace") != NULL, "%s", err);
    teardown(&t);
    cr_expect_null(kernel_named(GEMV)->workspace_bytes);
    cr_expect_null(kernel_named(MOE)->workspace_bytes);
}

/* ---- special codes ------------------------------------------------------------------------ */

/* Plants special scales: B scales 0xFE in block 0 against an A scale 0x00 in logical row 0
   (the pair is worth 2^0) and 0x01 in every other row (2^1), and an A scale 0xFF in logical
   row 1, block 1. */
static void plant_specials(struct mxt *t)
{
    for (int64_t r = 0; r <= t->a_rows; r++)
        t->sa[r * t->blocks] = 0x01;
    t->sa[t->row_a[0] * t->blocks] = 0x00;
    for (int64_t w = 0; w < t->mats; w++)
        for (int64_t n = 0; n < t->s.n; n++)
            t->sb_codes[(w * t->s.n + n) * t->blocks] = 0xFE;
    t->sa[t->row_a[1] * t->blocks + 1] = 0xFF;
}

static const char *const ALL[] = {GROUPED, GEMV, TILED, MOE};

static struct spec special_spec(const char *name, const char *mutant)
{
    struct spec s = {.kernel = name, .m = 8, .n = 24, .k = 96, .groups = 2, .lens = {5, 3},
                     .topk = 1, .block_m = 4, .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3,
                     .c_dt = GG_DTYPE_F32, .split = 1, .mutant = mutant, .seed = 5,
                     .scale_lo = 126, .scale_span = 3};
    return s;
}

Test(kernels_cpu_mx, e8m0_specials_follow_the_spec)
{
    for (int i = 0; i < 4; i++) {
        struct spec s = special_spec(ALL[i], NULL);
        struct mxt t;
        setup(&t, &s, 0);
        plant_specials(&t);
        int64_t r2 = t.row_a[2] * t.lda + 7;
        t.a[r2] = 0x7F; /* E4M3 NaN */
        run_ok(&t);
        cr_expect_eq(check(&t), 0, "%s", ALL[i]);
        for (int64_t n = 0; n < s.n; n++) {
            cr_expect(isfinite(out_at(&t, c_index(&t, 0, n))), "%s: 2^-127·2^127 is 1",
                      ALL[i]);
            cr_expect(isnan(out_at(&t, c_index(&t, 1, n))), "%s: a 0xFF scale is NaN",
                      ALL[i]);
            cr_expect(isnan(out_at(&t, c_index(&t, 2, n))), "%s: NaN payload", ALL[i]);
        }
        teardown(&t);
    }
}

/* ---- supports() ------------------------------------------------------------------------------ */

static struct gg_problem base_problem(const char *name)
{
    static const int64_t lens[1] = {16}, offs[2] = {0, 16};
    return (struct gg_problem){.op = op_of(name), .a_dtype = GG_DTYPE_E4M3,
                               .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_BF16,
                               .acc_dtype = GG_DTYPE_F32, .scaling = GG_SCALING_MX,
                               .groups = 1, .m = 16, .n = 8, .k = 64, .group_lens = lens,
                               .group_offs = offs, .topk = 1, .block_m = 4};
}

Test(kernels_cpu_mx, supports_refuses_with_reasons)
{
    char why[256] = "";
    for (int i = 0; i < 4; i++) {
        const struct gg_kernel *k = kernel_named(ALL[i]);
        struct gg_problem p = base_problem(ALL[i]), q;
        expect_common_supports(k, p);
        q = p, q.k = 100;
        cr_expect_not(k->supports(&q, why, sizeof why));
        cr_expect_str_eq(why, "K = 100 is not a multiple of the MX block 32", "%s", k->name);
        struct gg_operands o = {0};
        cr_expect_eq(k->run(&q, &o, why, sizeof why), GG_E_UNSUPPORTED);
        q = p, q.scaling = GG_SCALING_TENSOR, expect_refused(k, q, "scaling");
        q = p, q.a_dtype = GG_DTYPE_BF16, expect_refused(k, q, "e4m3");
        q = p, q.b_dtype = GG_DTYPE_E4M3FNUZ, expect_refused(k, q, "");
        q = p, q.c_dtype = GG_DTYPE_E4M3, expect_refused(k, q, "output");
        q = p, q.bias_dtype = GG_DTYPE_E5M2, expect_refused(k, q, "bias");
        q = p, q.op = GG_OP_GROUPED_DGRAD, expect_refused(k, q, "");
        cr_assert_not_null(k->mutants);
        q = p, q.bias_dtype = GG_DTYPE_F32, q.b_dtype = GG_DTYPE_E5M2, q.c_dtype = GG_DTYPE_F32;
        expect_accepted(k, q, "e4m3 x e5m2 -> f32 with an f32 bias");
    }
    const struct gg_kernel *gemv = kernel_named(GEMV), *tiled = kernel_named(TILED);
    struct gg_problem p = base_problem(GEMV);
    p.m = 17;
    expect_refused(gemv, p, "17");
    struct gg_kopt split2 = {"split_k", 2};
    p = base_problem(GEMV);
    p.opts = &split2;
    p.n_opts = 1;
    expect_refused(gemv, p, "split_k");
    p.op = GG_OP_MOE_SORTED;
    expect_refused(kernel_named(MOE), p, "");
    p = base_problem(TILED);
    for (int64_t m = 0; m <= 70; m++) {
        p.m = m;
        cr_expect_eq(tiled->supports(&p, why, sizeof why), m >= 8 && m <= 64, "M = %lld: %s",
                     (long long)m, why);
    }
    struct gg_kopt bad_split[] = {{"split_k", 0}, {"split_k", 65}};
    p = base_problem(TILED);
    for (int i = 0; i < 2; i++) {
        p.opts = &bad_split[i];
        p.n_opts = 1;
        expect_refused(tiled, p, "split_k");
    }
}

/* ---- mutants ------------------------------------------------------------------------------- */

/* mx_k_tail: the last 32-block of K is dropped. The mutant's output is the product over the
   first K - 32 only, far outside the bound of the full product; the correct kernel passes. */
Test(kernels_cpu_mx, mutant_mx_k_tail_drops_the_last_block)
{
    for (int i = 0; i < 4; i++) {
        struct spec s = special_spec(ALL[i], NULL);
        s.c_dt = GG_DTYPE_BF16;
        s.bias_dt = GG_DTYPE_F32;
        cr_expect_eq(run_and_check(&s), 0, "%s correct", ALL[i]);
        s.mutant = "mx_k_tail";
        struct mxt t;
        setup(&t, &s, 0);
        run_ok(&t);
        int64_t stray = 0, outputs = t.n_rows * s.n;
        cr_expect_eq(check_blocks(&t, t.blocks - 1, &stray), 0,
                     "%s mutant computes K - 32", ALL[i]);
        cr_expect_gt(check_blocks(&t, t.blocks, &stray), outputs * 9 / 10,
                     "%s mutant fails most outputs", ALL[i]);
        cr_expect_eq(stray, 0);
        teardown(&t);
    }
}

/* e8m0_special: 0x00 read as 0 and 0xFF as +Inf. The block scaled by 2^-127·2^127 vanishes,
   and the 0xFF block gives ±Inf where the spec says NaN. */
Test(kernels_cpu_mx, mutant_e8m0_special_zero_and_inf)
{
    for (int i = 0; i < 4; i++) {
        struct spec s = special_spec(ALL[i], "e8m0_special");
        struct mxt t;
        setup(&t, &s, 0);
        plant_specials(&t);
        run_ok(&t);
        int64_t inf = 0, off = 0;
        for (int64_t n = 0; n < s.n; n++) {
            double ref, ref_abs, v0 = out_at(&t, c_index(&t, 0, n));
            ref_element(&t, 0, n, t.blocks, &ref, &ref_abs);
            off += !within_bound(&t, v0, ref, ref_abs);
            double v1 = out_at(&t, c_index(&t, 1, n));
            inf += isinf(v1) != 0;
        }
        cr_expect_gt(off, s.n / 2, "%s: the 2^-127 block must vanish under the mutant", ALL[i]);
        cr_expect_gt(inf, s.n / 2, "%s: the 0xFF block must give Inf under the mutant", ALL[i]);
        /* Rows without special scales are untouched by the bug. */
        for (int64_t r = 3; r < t.n_rows; r++)
            for (int64_t n = 0; n < s.n; n++) {
                double ref, ref_abs;
                ref_element(&t, r, n, t.blocks, &ref, &ref_abs);
                cr_expect(within_bound(&t, out_at(&t, c_index(&t, r, n)), ref, ref_abs));
            }
        teardown(&t);
    }
}

/* sorted_ids_padding: the padding id T·topk is computed like a token, so row T·topk of Y, one
   past the logical output, is written; every valid row is still right. */
Test(kernels_cpu_mx, mutant_sorted_ids_padding_writes_past_the_output)
{
    struct spec s = {.kernel = MOE, .n = 24, .k = 64, .topk = 2, .groups = 4,
                     .lens = {5, 0, 9, 4}, .m = 9, .block_m = 4, .pad_only_blocks = 1,
                     .a_dt = GG_DTYPE_E4M3, .b_dt = GG_DTYPE_E4M3, .c_dt = GG_DTYPE_BF16,
                     .seed = 12};
    cr_expect_eq(run_and_check(&s), 0, "correct kernel");
    s.mutant = "sorted_ids_padding";
    struct mxt t;
    setup(&t, &s, 0);
    run_ok(&t);
    int64_t stray = 0;
    cr_expect_eq(check_blocks(&t, t.blocks, &stray), 0, "valid rows unaffected");
    cr_expect_eq(stray, s.n, "row T*topk written");
    int64_t past = t.c_rows * t.ldc;
    for (int64_t n = 0; n < s.n; n++)
        cr_expect_not(is_sentinel(t.c, s.c_dt, past + n), "column %lld", (long long)n);
    teardown(&t);
}

/*
 * test_oracles_faults.c — every oracle catches the fault it exists for and points at the right
 * group: a corrupt element, an unwritten tile, a write into padding, NaN/Inf (also from special
 * input codes), hit canary bands,
 * a modified input, workspace dependence; and a correctly rounded output of any random shape
 * passes.
 */
#include "oracles_fixture.h"
#include "splitmix.h"

/* Grouped problem with empty groups at the start, in the middle and at the end. */
static struct fx_spec grouped_spec(enum gg_op op, enum gg_dtype c_dtype)
{
    struct fx_spec s = {.op = op, .groups = 7, .lens = {0, 40, 0, 33, 64, 20, 0}, .n = 48,
                        .k = 64, .c_dtype = c_dtype, .ldc_pad = 5, .stride_pad = 7, .seed = 11};
    return s;
}

/* The correct output of grouped_spec(op, c_dtype). */
static void make_grouped(struct fx *f, enum gg_op op, enum gg_dtype c_dtype)
{
    struct fx_spec s = grouped_spec(op, c_dtype);
    fx_make_rn(f, &s);
}

static const enum gg_op grouped_ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD,
                                         GG_OP_GROUPED_WGRAD};
static const enum gg_dtype out_types[] = {GG_DTYPE_BF16, GG_DTYPE_F32};

static int64_t group_elems(const struct fx *f, int64_t g)
{
    struct gg_out_block b = fx_block(f, g);
    return b.rows * b.cols;
}

/* The group with the most outputs: the one the tests corrupt. */
static int64_t busiest_group(const struct fx *f)
{
    int64_t best = 0;
    for (int64_t g = 1; g < f->p.groups; g++)
        if (group_elems(f, g) > group_elems(f, best))
            best = g;
    return best;
}

Test(oracle_faults, correct_output_passes)
{
    for (int o = 0; o < 3; o++) {
        for (int d = 0; d < 2; d++) {
            struct fx f;
            make_grouped(&f, grouped_ops[o], out_types[d]);
            struct gg_compare cmp;
            struct gg_verdict v;
            fx_verdict(&f, 16, 16, NULL, &cmp, &v);
            cr_expect_eq(v.cls, GG_CLASS_PASS, "op %d %s: %s", o, gg_dtype_name(out_types[d]),
                         v.detail);
            cr_expect_str_eq(v.signature, "pass");
            cr_expect_eq(cmp.n_bound + cmp.n_nan + cmp.n_unwritten, 0);
            cr_expect_leq(cmp.max_ratio, 1.0);
            cr_expect_gt(cmp.snr_db, d == 0 ? 52.0 : 140.0);
            cr_expect_eq(cmp.region, GG_REGION_NONE);
            cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
            for (int64_t g = 0; g < f.p.groups; g++) {
                cr_expect_eq(cmp.groups[g].elems, group_elems(&f, g));
                cr_expect_eq(cmp.groups[g].first_bad, -1);
                if (cmp.groups[g].elems == 0)
                    cr_expect(isinf(cmp.groups[g].snr_db) && cmp.groups[g].snr_db > 0);
            }
            gg_compare_free(&cmp);
            fx_free(&f);
        }
    }
}

/* One element off by 2% of its value: within SNR, past its bound; then off by far more. */
Test(oracle_faults, corrupt_element)
{
    for (int o = 0; o < 3; o++) {
        for (int d = 0; d < 2; d++) {
            struct fx f;
            make_grouped(&f, grouped_ops[o], out_types[d]);
            int64_t g = busiest_group(&f), r = fx_block(&f, g).rows / 2, col = 7;
            double ref = fx_ref(&f, g, r, col);
            fx_set(&f, g, r, col, ref * 1.02 + 0.5);
            struct gg_compare cmp;
            struct gg_verdict v;
            fx_verdict(&f, 16, 16, NULL, &cmp, &v);
            cr_expect_eq(v.cls, GG_CLASS_SNR, "%s", v.detail);
            cr_expect_eq(cmp.groups[g].n_bound, 1);
            cr_expect_eq(cmp.n_bound, 1);
            cr_expect_eq(cmp.groups[g].first_bad, fx_packed(&f, g, r, col));
            cr_expect_gt(cmp.groups[g].max_ratio, 1.0);
            fx_expect_one_fail_group(&v, g);
            for (int64_t h = 0; h < f.p.groups; h++)
                if (h != g)
                    cr_expect_eq(cmp.groups[h].first_bad, -1);
            gg_compare_free(&cmp);

            /* A gross error also drags the group's SNR below the threshold. */
            fx_set(&f, g, r, col, ref + 1000.0);
            fx_verdict(&f, 16, 16, NULL, &cmp, &v);
            cr_expect_eq(v.cls, GG_CLASS_SNR);
            cr_expect_lt(cmp.groups[g].snr_db, v.snr_fail_db);
            cr_expect_eq(v.worst_group, g);
            cr_expect(strstr(v.detail, "group") != NULL, "%s", v.detail);
            gg_compare_free(&cmp);
            fx_free(&f);
        }
    }
}

/* A pooled SNR hides one bad expert: the per-group SNR catches it. */
Test(oracle_faults, per_group_snr_beats_pooled)
{
    struct fx_spec s = {.op = GG_OP_GROUPED_FWD, .groups = 4, .lens = {200, 0, 8, 200}, .n = 64,
                        .k = 64, .c_dtype = GG_DTYPE_BF16, .seed = 5};
    struct fx f;
    fx_make_rn(&f, &s);
    /* Relative noise of rms 0.6% on group 2 (about 44 dB). */
    struct gg_out_block b = fx_block(&f, 2);
    for (int64_t r = 0; r < b.rows; r++)
        for (int64_t col = 0; col < b.cols; col++)
            fx_set(&f, 2, r, col, fx_ref(&f, 2, r, col) * (1.0 + ((r + col) % 2 ? 0.006 : -0.006)));
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_verdict(&f, 16, 16, NULL, &cmp, &v);
    cr_expect_gt(cmp.snr_db, 50.0, "pooled %.1f", cmp.snr_db);
    cr_expect_lt(cmp.groups[2].snr_db, 50.0);
    cr_expect_eq(v.cls, GG_CLASS_SNR);
    cr_expect_eq(v.worst_group, 2);
    fx_expect_one_fail_group(&v, 2);
    gg_compare_free(&cmp);
    fx_free(&f);
}

/* A 16x16 tile left as the sentinel. */
Test(oracle_faults, unwritten_tile)
{
    for (int o = 0; o < 3; o++) {
        struct fx f;
        make_grouped(&f, grouped_ops[o], GG_DTYPE_BF16);
        int64_t g = busiest_group(&f);
        for (int64_t r = 16; r < 32; r++)
            for (int64_t col = 16; col < 32; col++)
                fx_set_code(&f, g, r, col, gg_oracle_sentinel(GG_DTYPE_BF16));
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_UNWRITTEN, "%s", v.detail);
        cr_expect_eq(cmp.groups[g].n_unwritten, 256);
        cr_expect_eq(cmp.n_unwritten, 256);
        cr_expect_eq(cmp.groups[g].first_bad, fx_packed(&f, g, 16, 16));
        cr_expect_eq(cmp.region, GG_REGION_SINGLE_TILE);
        fx_expect_one_fail_group(&v, g);
        gg_compare_free(&cmp);
        fx_free(&f);
    }
}

/* Writes between rows (ldc padding) and between groups (stride padding). */
Test(oracle_faults, padding_write)
{
    for (int o = 0; o < 3; o++) {
        struct fx f;
        make_grouped(&f, grouped_ops[o], GG_DTYPE_BF16);
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
        int64_t g = busiest_group(&f);
        struct gg_out_block b = fx_block(&f, g);
        int64_t at = b.base + 3 * b.ld + b.cols + 2; /* inside the padding of row 3 */
        gg_store_code(GG_DTYPE_BF16, f.c, at, 0x3F80);
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), at);
        gg_store_code(GG_DTYPE_BF16, f.c, at, gg_oracle_sentinel(GG_DTYPE_BF16));
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
        if (grouped_ops[o] == GG_OP_GROUPED_WGRAD) {
            /* The stride gap after group 0's block. */
            struct gg_out_block b0 = fx_block(&f, 0);
            at = b0.base + (b0.rows - 1) * b0.ld + b0.cols + 6;
            cr_assert_lt(at, fx_block(&f, 1).base);
            gg_store_code(GG_DTYPE_BF16, f.c, at, 0);
            cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), at);
        }
        struct gg_observations obs = {.padding_hit = 1};
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, 16, 16, &obs, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_OOB_WRITE);
        cr_expect(strstr(v.signature, "/guard_post/structural") != NULL, "%s", v.signature);
        gg_compare_free(&cmp);
        fx_free(&f);
    }
    /* No padding at all: nothing to look at, even in a buffer of garbage. */
    struct fx_spec s = grouped_spec(GG_OP_GROUPED_FWD, GG_DTYPE_F32);
    s.ldc_pad = 0;
    struct fx f;
    fx_make(&f, &s);
    memset(f.c, 0, f.c_bytes);
    cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1);
    fx_free(&f);
}

Test(oracle_faults, nan_and_inf)
{
    for (int d = 0; d < 2; d++) {
        enum gg_dtype ct = out_types[d];
        struct fx f;
        make_grouped(&f, GG_OP_GROUPED_DGRAD, ct);
        fx_set(&f, 5, 3, 4, NAN);
        fx_set(&f, 5, 4, 4, INFINITY);
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN, "%s", v.detail);
        cr_expect_eq(cmp.groups[5].n_nan, 2);
        cr_expect_eq(cmp.n_nan, 2);
        cr_expect_eq(cmp.groups[5].first_bad, fx_packed(&f, 5, 3, 4));
        cr_expect(strstr(v.signature, "/nan") != NULL, "%s", v.signature);
        /* NaN/Inf elements stay out of the SNR. */
        cr_expect(isfinite(cmp.groups[5].snr_db));
        gg_compare_free(&cmp);
        /* A NaN reference needs a NaN output. */
        fx_write_rn(&f);
        f.ref[fx_packed(&f, 3, 0, 0)] = NAN;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN);
        cr_expect_eq(cmp.groups[3].n_nan, 1);
        gg_compare_free(&cmp);
        fx_set(&f, 3, 0, 0, NAN);
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
        gg_compare_free(&cmp);
        fx_free(&f);
    }
}

/* Inputs with special codes (±Inf, NaN, -0, ±max, ±min subnormal): the correct output passes;
   an output that turns the infinities of the inputs into the largest finite value (an e5m2
   decoder reading Inf as 57344 does so) is a NaN mismatch; an infinite reference takes the
   same infinity, or NaN when its finite terms could overflow the fp32 accumulator. */
Test(oracle_faults, special_codes_inputs)
{
    for (int d = 0; d < 2; d++) {
        struct fx_spec s = grouped_spec(GG_OP_GROUPED_FWD, out_types[d]);
        s.codes = 0.01;
        struct fx f;
        fx_make_rn(&f, &s);
        int64_t inf = 0, nan = 0, inf_at = -1, inf_g = 0, inf_r = 0, inf_col = 0;
        for (int64_t g = 0; g < f.p.groups; g++) {
            struct gg_out_block b = fx_block(&f, g);
            for (int64_t r = 0; r < b.rows; r++)
                for (int64_t col = 0; col < b.cols; col++) {
                    double x = fx_ref(&f, g, r, col);
                    nan += isnan(x);
                    if (isinf(x) && inf++ == 0) {
                        inf_at = fx_packed(&f, g, r, col);
                        inf_g = g, inf_r = r, inf_col = col;
                    }
                }
        }
        cr_assert(inf > 0 && nan > 0 && inf + nan < f.n_out, "inf %lld nan %lld of %lld",
                  (long long)inf, (long long)nan, (long long)f.n_out);
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
        gg_compare_free(&cmp);
        /* the infinity as ±max (finite where the reference is infinite) */
        double inf_ref = f.ref[inf_at];
        fx_set(&f, inf_g, inf_r, inf_col, copysign(gg_dtype_max(f.p.c_dtype), inf_ref));
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN, "%s", v.detail);
        cr_expect_eq(cmp.n_nan, 1);
        gg_compare_free(&cmp);
        /* the other infinity, and NaN, are mismatches while the finite terms are small */
        fx_set(&f, inf_g, inf_r, inf_col, -inf_ref);
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN, "%s", v.detail);
        gg_compare_free(&cmp);
        fx_set(&f, inf_g, inf_r, inf_col, NAN);
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN, "%s", v.detail);
        gg_compare_free(&cmp);
        /* finite terms summing to the fp32 limit may overflow to the other infinity: NaN */
        cr_expect_lt(f.abs[inf_at], 1e30, "Σ|ab| of the finite terms only");
        f.abs[inf_at] = 0x1.fffffep127;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
        gg_compare_free(&cmp);
        fx_set(&f, inf_g, inf_r, inf_col, -inf_ref);
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_NAN, "%s", v.detail);
        gg_compare_free(&cmp);
        fx_free(&f);
    }
}

Test(oracle_faults, canary_band)
{
    const size_t sizes[] = {1, 255, 256, 257, 4096, 5000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        uint8_t *band = malloc(n);
        cr_assert_not_null(band);
        gg_oracle_canary_fill(band, n);
        for (size_t j = 0; j < n; j++)
            cr_assert_eq(band[j], gg_oracle_canary(j));
        cr_expect_eq(gg_oracle_canary_check(band, n), -1);
        band[0] ^= 1;
        cr_expect_eq(gg_oracle_canary_check(band, n), 0);
        band[0] ^= 1;
        band[n - 1] ^= 0x80;
        cr_expect_eq(gg_oracle_canary_check(band, n), (int64_t)(n - 1));
        band[n / 2] = (uint8_t)~band[n / 2];
        cr_expect_eq(gg_oracle_canary_check(band, n), (int64_t)(n / 2));
        free(band);
    }
    cr_expect_eq(gg_oracle_canary_check(NULL, 0), -1);
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .c_dtype = GG_DTYPE_BF16, .groups = 1};
    struct gg_observations pre = {.guard_hit = 1, .guard_pre = 1}, post = {.guard_hit = 1};
    struct gg_verdict v;
    gg_verdict_make(&p, "k", 0, 0, 0, NULL, &pre, &v);
    cr_expect_eq(v.cls, GG_CLASS_OOB_WRITE);
    cr_expect(strstr(v.signature, "/guard_pre/") != NULL, "%s", v.signature);
    gg_verdict_make(&p, "k", 0, 0, 0, NULL, &post, &v);
    cr_expect(strstr(v.signature, "/guard_post/") != NULL, "%s", v.signature);
    cr_expect(strstr(v.detail, "after") != NULL, "%s", v.detail);
}

Test(oracle_faults, input_modified)
{
    struct fx_spec s = grouped_spec(GG_OP_GROUPED_FWD, GG_DTYPE_BF16);
    struct fx f;
    fx_make(&f, &s);
    size_t a_bytes = (size_t)gg_dtype_bytes(GG_DTYPE_BF16, f.a_span);
    struct gg_hash before = gg_oracle_hash(f.a, a_bytes);
    cr_expect(gg_hash_equal(before, gg_oracle_hash(f.a, a_bytes)));
    uint8_t *bytes = f.a;
    bytes[a_bytes - 1] ^= 0x01;
    cr_expect_not(gg_hash_equal(before, gg_oracle_hash(f.a, a_bytes)));
    bytes[a_bytes - 1] ^= 0x01;
    cr_expect(gg_hash_equal(before, gg_oracle_hash(f.a, a_bytes)));
    /* Length is part of the content. */
    cr_expect_not(gg_hash_equal(before, gg_oracle_hash(f.a, a_bytes - 1)));
    struct gg_hash e1 = gg_oracle_hash(NULL, 0), e2 = gg_oracle_hash("x", 0);
    cr_expect(gg_hash_equal(e1, e2));
    /* Known XXH3-128 value of the empty input (xxHash test vectors). */
    cr_expect_eq(e1.lo, 0x6001C324468D497Full);
    cr_expect_eq(e1.hi, 0x99AA06D3014798D8ull);

    fx_write_rn(&f);
    struct gg_observations obs = {.input_modified = 1};
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_verdict(&f, 16, 16, &obs, &cmp, &v);
    cr_expect_eq(v.cls, GG_CLASS_INPUT_MODIFIED);
    gg_compare_free(&cmp);
    fx_free(&f);
}

Test(oracle_faults, workspace_dependence)
{
    enum { N = 10000 };
    uint8_t *x = malloc(N), *y = malloc(N);
    cr_assert(x && y);
    for (int i = 0; i < N; i++)
        x[i] = y[i] = (uint8_t)(i * 7);
    cr_expect_eq(gg_oracle_first_diff(x, y, N), -1);
    cr_expect_eq(gg_oracle_first_diff(x, y, 0), -1);
    const int at[] = {0, 1, 4095, 4096, 5000, N - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        y[at[i]] ^= 0x10;
        cr_expect_eq(gg_oracle_first_diff(x, y, N), at[i]);
        cr_expect_eq(gg_oracle_first_diff(y, x, N), at[i]);
        y[at[i]] ^= 0x10;
    }
    y[6000] = 0;
    y[7000] = 0;
    cr_expect_eq(gg_oracle_first_diff(x, y, N), 6000);
    cr_expect_eq(gg_oracle_first_diff(x, y, 6000), -1);
    free(x);
    free(y);

    struct fx f;
    make_grouped(&f, GG_OP_GROUPED_WGRAD, GG_DTYPE_F32);
    struct gg_observations obs = {.workspace_dep = 1};
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_verdict(&f, 16, 16, &obs, &cmp, &v);
    cr_expect_eq(v.cls, GG_CLASS_WORKSPACE);
    cr_expect(strstr(v.signature, "workspace/") == v.signature, "%s", v.signature);
    gg_compare_free(&cmp);
    fx_free(&f);
}

/* f64 outputs hold the 32-bit sentinel in both halves of each element. */
Test(oracle_faults, f64_output)
{
    uint64_t s = gg_oracle_sentinel(GG_DTYPE_F64);
    uint64_t sentinel = s << 32 | s;
    double unwritten;
    memcpy(&unwritten, &sentinel, sizeof unwritten);
    cr_expect(isnan(unwritten));
    double c[2 * 3] = {1.5, 0, unwritten, -2.0, 0, 0};
    memcpy(&c[1], &sentinel, sizeof sentinel);
    memcpy(&c[4], &sentinel, sizeof sentinel);
    memcpy(&c[5], &sentinel, sizeof sentinel);
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .c_dtype = GG_DTYPE_F64, .groups = 1, .m = 2, .n = 1, .k = 4,
                           .ldc = 3};
    char err[128];
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    /* Elements 0 and 3 are the output; 1, 2 (and 4, 5 past the span) are padding. */
    cr_expect_eq(gg_oracle_padding_check(&p, c), -1);
    const double ref[2] = {1.5, -2.0}, abs[2] = {2.0, 3.0};
    struct gg_compare cmp;
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, NULL, 0, 0, &cmp), GG_OK);
    cr_expect_eq(cmp.n_unwritten + cmp.n_nan + cmp.n_bound, 0);
    cr_expect(isinf(cmp.snr_db));
    gg_compare_free(&cmp);
    memcpy(&c[3], &sentinel, sizeof sentinel);
    c[1] = 0.0;
    cr_expect_eq(gg_oracle_padding_check(&p, c), 1);
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, NULL, 0, 0, &cmp), GG_OK);
    cr_expect_eq(cmp.n_unwritten, 1);
    cr_expect_eq(cmp.groups[0].first_bad, 1);
    gg_compare_free(&cmp);
}

/* Case i of a random shape. Each draw is its own statement: the order in which the initialisers
   of one struct are evaluated is unspecified, and the shapes must not depend on the compiler. */
static struct fx_spec random_spec(uint64_t *st, int i)
{
    static const enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD,
                                     GG_OP_BATCHED, GG_OP_DENSE};
    struct fx_spec s = {.seed = 1000 + (uint64_t)i};
    s.op = ops[splitmix_below(st, 5)];
    s.groups = 1 + splitmix_below(st, 9);
    s.m = splitmix_below(st, 71);
    s.n = splitmix_below(st, 71);
    s.k = splitmix_below(st, 71);
    s.c_dtype = out_types[splitmix_below(st, 2)];
    s.ints = (int)splitmix_below(st, 2);
    for (int64_t g = 0; g < s.groups; g++)
        s.lens[g] = splitmix_below(st, 3) == 0 ? 0 : splitmix_below(st, 71);
    s.ldc_pad = splitmix_below(st, 2) ? splitmix_below(st, 4) : 0;
    s.stride_pad = splitmix_below(st, 2) ? splitmix_below(st, 6) : 0;
    return s;
}

/* The negative test: a correctly rounded output never fails, whatever the shape. */
Test(oracle_faults, random_correct_outputs_pass)
{
    uint64_t st = 2024;
    const int64_t tiles[] = {0, 8, 16};
    for (int i = 0; i < 60; i++) {
        struct fx_spec s = random_spec(&st, i);
        struct fx f;
        fx_make_rn(&f, &s);
        int64_t tile = tiles[splitmix_below(&st, 3)];
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, tile, tile, NULL, &cmp, &v);
        cr_expect_eq(v.cls, GG_CLASS_PASS,
                     "case %d (op %d, groups %lld, m %lld n %lld k %lld, %s, ints %d): %s", i,
                     (int)s.op, (long long)f.p.groups, (long long)f.p.m, (long long)s.n,
                     (long long)s.k, gg_dtype_name(s.c_dtype), s.ints, v.detail);
        cr_expect_str_eq(v.signature, "pass");
        cr_expect_eq(gg_oracle_padding_check(&f.p, f.c), -1, "case %d", i);
        cr_expect_leq(cmp.max_ratio, 1.0, "case %d", i);
        gg_compare_free(&cmp);
        fx_free(&f);
    }
}

/* Every metric of two comparisons, each group's, the region and the source SNR are equal. */
static void expect_same_compare(const struct gg_compare *one, const struct gg_compare *many,
                                const char *what)
{
    cr_assert_eq(one->n_groups, many->n_groups, "%s", what);
    cr_expect_eq(memcmp(one->groups, many->groups, (size_t)one->n_groups * sizeof *one->groups),
                 0, "%s", what);
    cr_expect_eq(one->region, many->region, "%s", what);
    cr_expect_eq(one->n_bound, many->n_bound, "%s", what);
    cr_expect_eq(one->n_nan, many->n_nan, "%s", what);
    cr_expect_eq(one->n_unwritten, many->n_unwritten, "%s", what);
    cr_expect_eq(one->src_n, many->src_n, "%s", what);
    cr_expect_eq(memcmp(&one->snr_db, &many->snr_db, sizeof one->snr_db), 0, "%s", what);
    cr_expect_eq(memcmp(&one->src_snr_db, &many->src_snr_db, sizeof one->src_snr_db), 0, "%s",
                 what);
    cr_expect_eq(memcmp(&one->ref_src_snr_db, &many->ref_src_snr_db, sizeof one->ref_src_snr_db),
                 0, "%s", what);
    cr_expect_eq(one->max_ratio, many->max_ratio, "%s", what);
}

/* A large output is scanned by groups on several threads and merged in group order: every
   metric, each group's, the bad elements' region and the source SNR equal those of one thread.
   So do those of the same comparison fed a run of groups at a time (a reference that comes over
   in chunks), whatever the runs; groups out of order are refused. */
Test(oracle_faults, parallel_scan_equals_one_thread)
{
    enum { G = 40, ROWS = 128, N = 512 };
    static int64_t lens[G], offs[G + 1];
    for (int g = 0; g < G; g++) {
        lens[g] = ROWS;
        offs[g + 1] = offs[g] + ROWS;
    }
    struct gg_problem p = {.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                           .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_F32, .groups = G,
                           .m = G * ROWS, .n = N, .k = 64, .group_lens = lens,
                           .group_offs = offs};
    char err[128];
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    int64_t n = (int64_t)G * ROWS * N;
    float *c = malloc((size_t)n * sizeof *c);
    double *ref = malloc((size_t)n * sizeof *ref), *abs = malloc((size_t)n * sizeof *abs);
    double *src = malloc((size_t)n * sizeof *src);
    cr_assert(c && ref && abs && src);
    uint64_t s = 7;
    for (int64_t i = 0; i < n; i++) {
        ref[i] = (double)(splitmix64(&s) >> 11) * 0x1p-53 - 0.5;
        abs[i] = fabs(ref[i]) + 1.0;
        src[i] = ref[i] * (1 + 0x1p-9);
        c[i] = (float)ref[i];
    }
    /* Bad elements in the last rows of groups 3 and 31 (past τ), one unwritten in group 17,
       elements past the warning level only in group 9. */
    for (int64_t col = 0; col < N; col++) {
        c[(3 * ROWS + ROWS - 1) * N + col] += 0.25f;
        c[(31 * ROWS + ROWS - 1) * N + col] -= 0.25f;
        c[(9 * ROWS + 5) * N + col] += 2e-6f;
    }
    uint32_t sentinel = gg_oracle_sentinel(GG_DTYPE_F32);
    memcpy(&c[17 * ROWS * N + 11], &sentinel, sizeof sentinel);
    struct gg_compare one, many;
    gg_ref_threads(1);
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, src, 64, 64, &one), GG_OK);
    gg_ref_threads(2);
    cr_assert_eq(gg_par_threads(G, n / G > 0 ? (1 << 20) / (n / G) + 1 : 1), 2,
                 "the scan would not split");
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, src, 64, 64, &many), GG_OK);
    cr_expect_gt(one.n_bound, 0);
    cr_expect_eq(one.n_unwritten, 1);
    expect_same_compare(&one, &many, "two threads");
    gg_compare_free(&many);
    /* Runs of 1, 7, 13, 19 groups: the last one ends at G. */
    struct gg_compare_run *run = NULL;
    cr_assert_eq(gg_compare_begin(&p, c, 64, 64, 1, &run), GG_OK);
    for (int64_t g0 = 0, len = 1; g0 < G; len += 6) {
        int64_t g1 = g0 + len < G ? g0 + len : G, at = gg_compare_group_start(run, g0);
        cr_assert_eq(at, g0 * ROWS * N);
        cr_assert_eq(gg_compare_groups(run, g0, g1, ref + at, abs + at, src + at), GG_OK);
        cr_expect_eq(gg_compare_groups(run, g0, g1, ref + at, abs + at, src + at), GG_E_INVAL,
                     "a run given twice");
        g0 = g1;
    }
    cr_assert_eq(gg_compare_end(run, &many), GG_OK);
    expect_same_compare(&one, &many, "runs of groups");
    gg_compare_free(&many);
    cr_assert_eq(gg_compare_begin(&p, c, 64, 64, 1, &run), GG_OK);
    cr_expect_eq(gg_compare_groups(run, 0, 3, ref, abs, NULL), GG_E_INVAL, "a source missing");
    cr_expect_eq(gg_compare_groups(run, 0, 3, ref, abs, src), GG_OK);
    cr_expect_eq(gg_compare_end(run, &many), GG_E_INVAL, "groups left out");
    gg_compare_free(&one);
    /* Groups 5 to 9 with an exact zero reference: given as zeros, or as a run without arrays. */
    size_t at = 5 * ROWS * N, len = 5 * ROWS * N;
    memset(ref + at, 0, len * sizeof *ref);
    memset(abs + at, 0, len * sizeof *abs);
    memset(src + at, 0, len * sizeof *src);
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, src, 64, 64, &one), GG_OK);
    cr_assert_eq(gg_compare_begin(&p, c, 64, 64, 1, &run), GG_OK);
    cr_assert_eq(gg_compare_groups(run, 0, 5, ref, abs, src), GG_OK);
    cr_assert_eq(gg_compare_groups(run, 5, 10, NULL, NULL, NULL), GG_OK);
    cr_assert_eq(gg_compare_groups(run, 10, G, ref + 2 * at, abs + 2 * at, src + 2 * at), GG_OK);
    cr_assert_eq(gg_compare_end(run, &many), GG_OK);
    expect_same_compare(&one, &many, "a run of zero groups");
    cr_expect_gt(one.groups[7].n_bound, 0, "the kernel's non-zero outputs are past the bound");
    gg_compare_free(&many);
    gg_compare_free(&one);
    free(c), free(ref), free(abs), free(src);
}

/* A group larger than a part of the scan is judged in parts of whole rows: its worst element,
   first bad element and region are those of the whole group, with one thread or two. */
Test(oracle_faults, large_group_scanned_in_parts)
{
    enum { M = 2100, N = 1000 }; /* 2.1M outputs: three parts */
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                           .c_dtype = GG_DTYPE_F32, .groups = 1, .m = M, .n = N, .k = 64};
    char err[128];
    cr_assert_eq(gg_problem_check(&p, err, sizeof err), GG_OK, "%s", err);
    int64_t n = (int64_t)M * N;
    float *c = malloc((size_t)n * sizeof *c);
    double *ref = malloc((size_t)n * sizeof *ref), *abs = malloc((size_t)n * sizeof *abs);
    cr_assert(c && ref && abs);
    uint64_t s = 11;
    for (int64_t i = 0; i < n; i++) {
        ref[i] = (double)(splitmix64(&s) >> 11) * 0x1p-53 - 0.5;
        abs[i] = fabs(ref[i]) + 1.0;
        c[i] = (float)ref[i];
    }
    /* Bad elements in the last (partial) row tile only, the worst at (2099, 5). */
    for (int64_t r = 2090; r < M; r++)
        c[r * N + 7] += 0.25f;
    c[2099 * N + 5] += 0.5f;
    struct gg_compare one, two;
    gg_ref_threads(1);
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, NULL, 64, 64, &one), GG_OK);
    gg_ref_threads(2);
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, NULL, 64, 64, &two), GG_OK);
    expect_same_compare(&one, &two, "a large group on two threads");
    const struct gg_group_metrics *gm = &one.groups[0];
    cr_expect_eq(gm->elems, n);
    cr_expect_eq(gm->n_bound, 11);
    cr_expect_eq(gm->first_bad, 2090 * N + 7);
    cr_expect_eq(gm->worst.row, 2099);
    cr_expect_eq(gm->worst.col, 5);
    cr_expect_eq(one.region, GG_REGION_ROWS_TAIL);
    gg_compare_free(&one);
    gg_compare_free(&two);
    free(c), free(ref), free(abs);
}

/* The rounding floor of an fp8 output: a reference past the format's range rounds to its NaN
   code, which is also the sentinel, and adds nothing; the others add (RN(ref) - ref)². */
Test(oracle_faults, rounding_floor_of_fp8_outputs)
{
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_E4M3, .b_dtype = GG_DTYPE_E4M3,
                           .c_dtype = GG_DTYPE_E4M3, .groups = 1, .m = 1, .n = 4, .k = 32};
    char err[128];
    if (gg_problem_check(&p, err, sizeof err) != GG_OK)
        cr_skip_test("e4m3 outputs are refused: %s", err);
    const double ref[4] = {1.0, 1.05, 500.0, -3.3}, abs[4] = {1.0, 1.05, 500.0, 3.3};
    uint8_t c[4];
    double want = 0.0;
    for (int i = 0; i < 4; i++) {
        c[i] = (uint8_t)gg_encode(GG_DTYPE_E4M3, ref[i], GG_SAT_FINITE);
        double rn = gg_decode(GG_DTYPE_E4M3, gg_encode(GG_DTYPE_E4M3, ref[i], GG_SAT_NONE)) -
                    ref[i];
        want += isfinite(rn) ? rn * rn : 0.0;
    }
    cr_assert(!isfinite(gg_decode(GG_DTYPE_E4M3, gg_encode(GG_DTYPE_E4M3, 500.0, GG_SAT_NONE))));
    struct gg_compare cmp;
    cr_assert_eq(gg_compare_output(&p, c, ref, abs, NULL, 0, 0, &cmp), GG_OK);
    cr_expect_eq(cmp.rn_err, want, "rounding floor %g, expected %g", cmp.rn_err, want);
    gg_compare_free(&cmp);
}

/*
 * test_oracles_verdict.c — verdicts: class precedence, exit codes and names, headline metrics,
 * and signatures of planted faults (which groups fail, where in the output, how badly), which
 * must name the bug and not the case.
 */
#include <stdio.h>

#include "oracles_fixture.h"

/* Four groups of 40 rows (no empty group), N = 48, K = 64, bf16 out. */
static struct fx_spec plain_spec(void)
{
    struct fx_spec s = {.op = GG_OP_GROUPED_FWD, .groups = 4, .lens = {40, 40, 40, 40}, .n = 48,
                        .k = 64, .c_dtype = GG_DTYPE_BF16, .ldc_pad = 3, .seed = 3};
    return s;
}

/* The correct output of plain_spec(). */
static void make_plain(struct fx *f)
{
    struct fx_spec s = plain_spec();
    fx_make_rn(f, &s);
}

/* Adds delta to the elements of group g in rows [r0, r1) and columns [c0, c1). */
static void corrupt(struct fx *f, int64_t g, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                    double delta)
{
    for (int64_t r = r0; r < r1; r++)
        for (int64_t col = c0; col < c1; col++)
            fx_set(f, g, r, col, fx_ref(f, g, r, col) + delta);
}

/* Verdict of f with 16x16 tiles; returns the class, fills sig. */
static enum gg_class judge(const struct fx *f, const struct gg_observations *obs, char *sig,
                           struct gg_verdict *out)
{
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_verdict(f, 16, 16, obs, &cmp, &v);
    gg_compare_free(&cmp);
    if (sig)
        snprintf(sig, GG_SIGNATURE_MAX, "%s", v.signature);
    if (out)
        *out = v;
    return v.cls;
}

/* Field i (0-based) of a signature. */
static void field(const char *sig, int i, char *buf, size_t len)
{
    const char *s = sig;
    for (int j = 0; j < i && s; j++) {
        s = strchr(s, '/');
        s = s ? s + 1 : NULL;
    }
    cr_assert_not_null(s, "signature %s has no field %d", sig, i);
    size_t n = strcspn(s, "/");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

static void expect_field(const char *sig, int i, const char *want)
{
    char got[GG_SIGNATURE_MAX];
    field(sig, i, got, sizeof got);
    cr_expect_str_eq(got, want, "field %d of %s", i, sig);
}

Test(oracle_verdict, names_and_exit_codes)
{
    for (int c = 0; c < GG_CLASS_COUNT; c++) {
        cr_expect_eq(gg_class_from_name(gg_class_name((enum gg_class)c)), (enum gg_class)c);
        int code = gg_class_exit_code((enum gg_class)c);
        cr_expect_eq(code, c == 0 ? 0 : c == GG_CLASS_DEVICE ? 21 : 10 + c);
        cr_expect_neq(code, 20, "20 is replay's 'did not reproduce'");
        for (int d = 0; d < c; d++) {
            cr_expect_neq(code, gg_class_exit_code((enum gg_class)d));
            cr_expect_neq(gg_class_precedence((enum gg_class)c),
                          gg_class_precedence((enum gg_class)d));
        }
        cr_expect(strlen(gg_class_help((enum gg_class)c)) > 0);
        if (c != GG_CLASS_PASS)
            cr_expect(gg_class_more_severe((enum gg_class)c, GG_CLASS_PASS));
        cr_expect_not(gg_class_more_severe(GG_CLASS_PASS, (enum gg_class)c));
    }
    cr_expect(gg_class_more_severe(GG_CLASS_CRASH, GG_CLASS_SNR));
    cr_expect_not(gg_class_more_severe(GG_CLASS_SNR, GG_CLASS_CRASH));
    cr_expect_str_eq(gg_class_name(GG_CLASS_PASS), "pass");
    cr_expect_str_eq(gg_class_name(GG_CLASS_OOB_WRITE), "oob_write");
    cr_expect_str_eq(gg_class_name(GG_CLASS_NONDETERMINISM), "nondeterminism");
    cr_expect_str_eq(gg_class_name(GG_CLASS_SNR), "snr");
    cr_expect_eq(gg_class_from_name("bogus"), GG_CLASS_COUNT);
    cr_expect_eq(gg_class_from_name(NULL), GG_CLASS_COUNT);
    const char *regions[] = {"none", "all", "rows_tail", "cols_tail", "single_tile", "scattered",
                             "guard_pre", "guard_post"};
    for (int r = 0; r < GG_REGION_COUNT; r++)
        cr_expect_str_eq(gg_region_name((enum gg_region)r), regions[r]);
}

/* Every class that fires is shadowed by each class before it in the enum. */
Test(oracle_verdict, precedence)
{
    struct fx f;
    make_plain(&f);
    fx_set_code(&f, 0, 1, 1, gg_oracle_sentinel(GG_DTYPE_BF16)); /* unwritten */
    fx_set(&f, 1, 2, 2, NAN);                                     /* nan */
    fx_set(&f, 2, 3, 3, fx_ref(&f, 2, 3, 3) + 100.0);             /* snr */
    struct gg_observations obs = {.guard_hit = 1, .padding_hit = 1, .input_modified = 1,
                                  .workspace_dep = 1, .nondeterministic = 1};
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_OOB_WRITE);
    obs.guard_hit = 0;
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_OOB_WRITE);
    obs.padding_hit = 0;
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_INPUT_MODIFIED);
    obs.input_modified = 0;
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_UNWRITTEN);
    fx_set(&f, 0, 1, 1, fx_ref(&f, 0, 1, 1));
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_NAN);
    fx_set(&f, 1, 2, 2, fx_ref(&f, 1, 2, 2));
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_WORKSPACE);
    obs.workspace_dep = 0;
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_NONDETERMINISM);
    obs.nondeterministic = 0;
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_SNR);
    fx_set(&f, 2, 3, 3, fx_ref(&f, 2, 3, 3));
    cr_expect_eq(judge(&f, &obs, NULL, NULL), GG_CLASS_PASS);
    cr_expect_eq(judge(&f, NULL, NULL, NULL), GG_CLASS_PASS);
    /* Nothing to judge at all. */
    struct gg_verdict v;
    gg_verdict_make(&f.p, "k", 16, 16, 32, NULL, NULL, &v);
    cr_expect_eq(v.cls, GG_CLASS_PASS);
    cr_expect_eq(v.worst_group, -1);
    fx_free(&f);
}

Test(oracle_verdict, metrics_and_detail)
{
    struct fx f;
    make_plain(&f);
    corrupt(&f, 2, 0, 10, 0, 48, 5.0);
    struct gg_verdict v;
    char sig[GG_SIGNATURE_MAX];
    cr_assert_eq(judge(&f, NULL, sig, &v), GG_CLASS_SNR);
    cr_expect_eq(v.worst_group, 2);
    cr_expect_lt(v.worst_snr_db, 50.0);
    cr_expect_eq(v.snr_fail_db, 50.0);
    cr_expect_gt(v.max_ratio, 1.0);
    fx_expect_one_fail_group(&v, 2);
    char want[64];
    snprintf(want, sizeof want, "group 2: snr %.1f dB < 50 dB, 480 elements past bound",
             v.worst_snr_db);
    cr_expect(strncmp(v.detail, want, strlen(want)) == 0, "detail '%s'", v.detail);
    cr_expect(strstr(v.detail, "max ratio") != NULL);
    fx_free(&f);
}

Test(oracle_verdict, fail_groups_capped)
{
    struct fx_spec s = {.op = GG_OP_GROUPED_FWD, .groups = 20, .n = 8, .k = 16,
                        .c_dtype = GG_DTYPE_F32, .seed = 9};
    for (int g = 0; g < 20; g++)
        s.lens[g] = 3;
    struct fx f;
    fx_make_rn(&f, &s);
    for (int64_t g = 0; g < 20; g++)
        corrupt(&f, g, 0, 1, 0, 1, 1.0);
    struct gg_verdict v;
    cr_assert_eq(judge(&f, NULL, NULL, &v), GG_CLASS_SNR);
    cr_expect_eq(v.n_fail_groups, 20);
    for (int i = 0; i < GG_VERDICT_GROUPS_MAX; i++)
        cr_expect_eq(v.fail_groups[i], i);
    fx_free(&f);
}

/* The whole signature of one planted fault. */
Test(oracle_verdict, signature_layout)
{
    struct fx f;
    make_plain(&f);
    corrupt(&f, 1, 17, 19, 18, 20, 3.0);
    char sig[GG_SIGNATURE_MAX];
    cr_assert_eq(judge(&f, NULL, sig, NULL), GG_CLASS_SNR);
    cr_expect_str_eq(sig, "snr/grouped_bf16_cpu_tiled/bf16-bf16-bf16/grouped_fwd/"
                          "m:aligned,n:aligned,k:aligned/g:single/single_tile/degraded");
    /* A gross error is garbage; a NaN is nan; a structural class says so. */
    corrupt(&f, 1, 17, 19, 18, 20, 1e4);
    judge(&f, NULL, sig, NULL);
    expect_field(sig, 7, "garbage");
    fx_set(&f, 1, 17, 18, NAN);
    judge(&f, NULL, sig, NULL);
    expect_field(sig, 0, "nan");
    expect_field(sig, 7, "nan");
    /* Structural classes carry no group pattern: where the run's other errors sit says nothing
       about a modified input. */
    struct gg_observations obs = {.input_modified = 1};
    judge(&f, &obs, sig, NULL);
    cr_expect_str_eq(sig, "input_modified/grouped_bf16_cpu_tiled/bf16-bf16-bf16/grouped_fwd/"
                          "m:aligned,n:aligned,k:aligned/g:none/none/structural");
    fx_free(&f);
}

/* Shape classes per dimension, and none of the raw sizes. */
Test(oracle_verdict, shape_classes)
{
    struct fx_spec s = {.op = GG_OP_GROUPED_FWD, .groups = 2, .lens = {9, 30}, .n = 1, .k = 40,
                        .c_dtype = GG_DTYPE_BF16, .seed = 4};
    struct fx f;
    fx_make_rn(&f, &s);
    corrupt(&f, 1, 0, 1, 0, 1, 100.0);
    char sig[GG_SIGNATURE_MAX];
    judge(&f, NULL, sig, NULL);
    expect_field(sig, 4, "m:tail,n:one,k:tail");
    cr_expect(strstr(sig, "39") == NULL && strstr(sig, "40") == NULL, "%s", sig);
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_compare(&f, 0, 0, &cmp);
    gg_verdict_make(&f.p, "k", 0, 0, 0, &cmp, NULL, &v);
    expect_field(v.signature, 4, "m:any,n:one,k:any");
    gg_compare_free(&cmp);
    gg_verdict_make(&f.p, "k", 64, 64, 64, NULL, &(struct gg_observations){.nondeterministic = 1},
                    &v);
    expect_field(v.signature, 4, "m:lt_tile,n:one,k:lt_tile");
    fx_free(&f);
    /* wgrad: rows of C are N, columns K, the reduction M; a zero dimension is zero. */
    struct fx_spec w = {.op = GG_OP_GROUPED_WGRAD, .groups = 2, .lens = {0, 0}, .n = 32, .k = 20,
                        .c_dtype = GG_DTYPE_F32, .seed = 4};
    fx_make_rn(&f, &w);
    corrupt(&f, 0, 0, 1, 0, 1, 1.0);
    judge(&f, NULL, sig, NULL);
    expect_field(sig, 3, "grouped_wgrad");
    expect_field(sig, 4, "m:zero,n:aligned,k:tail");
    fx_free(&f);
}

/* Which groups fail. */
static void expect_groups(const struct fx_spec *s, const int *bad, int n_bad, const char *want)
{
    struct fx f;
    fx_make_rn(&f, s);
    for (int i = 0; i < n_bad; i++)
        corrupt(&f, bad[i], 0, 1, 0, 1, 50.0);
    char sig[GG_SIGNATURE_MAX], w[32];
    cr_expect_eq(judge(&f, NULL, sig, NULL), GG_CLASS_SNR);
    snprintf(w, sizeof w, "g:%s", want);
    expect_field(sig, 5, w);
    fx_free(&f);
}

Test(oracle_verdict, group_patterns)
{
    struct fx_spec s = plain_spec();
    expect_groups(&s, (int[]){0}, 1, "first");
    expect_groups(&s, (int[]){3}, 1, "last");
    expect_groups(&s, (int[]){1}, 1, "single");
    expect_groups(&s, (int[]){1, 2}, 2, "many");
    expect_groups(&s, (int[]){0, 1, 2, 3}, 4, "all");
    /* 40, 0, 40, 40, 0, 40 */
    struct fx_spec e = s;
    e.groups = 6;
    memcpy(e.lens, (int64_t[]){40, 0, 40, 40, 0, 40}, 6 * sizeof(int64_t));
    expect_groups(&e, (int[]){2, 3, 5}, 3, "after_empty"); /* every group after an empty one */
    expect_groups(&e, (int[]){2}, 1, "after_empty");       /* directly after */
    expect_groups(&e, (int[]){2, 5}, 2, "after_empty");
    expect_groups(&e, (int[]){3}, 1, "single");
    expect_groups(&e, (int[]){0, 3}, 2, "many");
    expect_groups(&e, (int[]){0}, 1, "first");
    /* A leading empty group does not make every failure "after empty". */
    struct fx_spec l = s;
    l.groups = 3;
    memcpy(l.lens, (int64_t[]){0, 40, 40}, 3 * sizeof(int64_t));
    expect_groups(&l, (int[]){2}, 1, "last");
    /* wgrad: an empty group owns its zeros and may be the only one failing. */
    struct fx_spec w = {.op = GG_OP_GROUPED_WGRAD, .groups = 3, .lens = {30, 0, 30}, .n = 16,
                        .k = 16, .c_dtype = GG_DTYPE_F32, .seed = 8};
    expect_groups(&w, (int[]){1}, 1, "empty");
    expect_groups(&w, (int[]){2}, 1, "after_empty");
}

/* Where the bad elements lie (tiles of 16 x 16). */
static void expect_region(const struct fx_spec *s, int64_t g, int64_t r0, int64_t r1, int64_t c0,
                          int64_t c1, enum gg_region want)
{
    struct fx f;
    fx_make_rn(&f, s);
    corrupt(&f, g, r0, r1, c0, c1, 50.0);
    struct gg_compare cmp;
    struct gg_verdict v;
    fx_verdict(&f, 16, 16, NULL, &cmp, &v);
    cr_expect_eq(cmp.region, want, "region %s, want %s", gg_region_name(cmp.region),
                 gg_region_name(want));
    expect_field(v.signature, 6, gg_region_name(want));
    gg_compare_free(&cmp);
    fx_free(&f);
}

Test(oracle_verdict, regions)
{
    /* Group 1 has 40 rows: rows 32-39 are its partial row tile. N = 48 is aligned. */
    struct fx_spec s = plain_spec();
    expect_region(&s, 1, 32, 40, 0, 48, GG_REGION_ROWS_TAIL);
    expect_region(&s, 1, 35, 36, 0, 48, GG_REGION_ROWS_TAIL);
    expect_region(&s, 1, 17, 20, 18, 30, GG_REGION_SINGLE_TILE);
    expect_region(&s, 1, 0, 40, 0, 48, GG_REGION_ALL);
    expect_region(&s, 1, 0, 30, 0, 48, GG_REGION_ALL);
    expect_region(&s, 1, 0, 30, 0, 1, GG_REGION_SCATTERED);
    /* N = 40: columns 32-39 are the partial column tile; rows 48 are aligned. */
    struct fx_spec c = s;
    c.n = 40;
    memcpy(c.lens, (int64_t[]){48, 48, 48, 48}, 4 * sizeof(int64_t));
    expect_region(&c, 2, 0, 48, 32, 40, GG_REGION_COLS_TAIL);
    expect_region(&c, 2, 0, 48, 39, 40, GG_REGION_COLS_TAIL);
    /* The same tail bug in two groups of different sizes is one signature. */
    char a[GG_SIGNATURE_MAX], b[GG_SIGNATURE_MAX];
    struct fx f;
    fx_make_rn(&f, &s);
    corrupt(&f, 1, 32, 40, 0, 48, 50.0);
    judge(&f, NULL, a, NULL);
    fx_free(&f);
    struct fx_spec t = s;
    t.lens[1] = 57;
    t.lens[3] = 23; /* total M stays a multiple of the tile */
    t.n = 64;
    fx_make_rn(&f, &t);
    corrupt(&f, 1, 48, 57, 0, 64, 50.0);
    judge(&f, NULL, b, NULL);
    fx_free(&f);
    cr_expect_str_eq(a, b);
    cr_expect(strstr(a, "/rows_tail/") != NULL, "%s", a);
}

/*
 * An error below τ everywhere fails on SNR alone; the elements past the probabilistic warning
 * level (8·√h·u_acc) still locate it. f32 output, K = 2048, one group of 20 rows: rows 16-19 are
 * off by τ/2.
 */
Test(oracle_verdict, snr_only_failure_is_located)
{
    struct fx_spec s = {.op = GG_OP_GROUPED_FWD, .groups = 1, .lens = {20}, .n = 16, .k = 2048,
                        .c_dtype = GG_DTYPE_F32, .seed = 12};
    for (int tail = 1; tail >= 0; tail--) {
        struct fx f;
        fx_make_rn(&f, &s);
        const struct gg_threshold *t = gg_threshold_for(&f.p);
        for (int64_t r = tail ? 16 : 0; r < 20; r++) {
            for (int64_t col = 0; col < 16; col++) {
                double ref = fx_ref(&f, 0, r, col), abs = f.abs[fx_packed(&f, 0, r, col)];
                fx_set(&f, 0, r, col, ref + 0.5 * gg_oracle_bound(t, ref, abs, 2048));
            }
        }
        struct gg_compare cmp;
        struct gg_verdict v;
        fx_verdict(&f, 16, 16, NULL, &cmp, &v);
        cr_expect_eq(cmp.n_bound, 0);
        cr_expect_lt(cmp.groups[0].snr_db, 90.0);
        cr_expect_eq(v.cls, GG_CLASS_SNR, "%s", v.detail);
        cr_expect_eq(cmp.region, tail ? GG_REGION_ROWS_TAIL : GG_REGION_ALL, "%s",
                     gg_region_name(cmp.region));
        gg_compare_free(&cmp);
        fx_free(&f);
    }
}

/*
 * The source level blames the kernel only when its source SNR is also more than 1 dB below the
 * exact reference's own: the recipe's loss is no fault of the kernel's. One group of 4096 exact
 * outputs on the e4m3->bf16 row (source level 25 dB), judged on the source SNRs alone.
 */
Test(oracle_verdict, source_snr_blames_the_kernel_only_beyond_the_recipe_loss)
{
    static const struct { double out_db, ref_db; enum gg_class cls; int advisory; } want[] = {
        {0.0, 0.0, GG_CLASS_PASS, 1},    {20.0, 20.5, GG_CLASS_PASS, 1},
        {20.0, 21.5, GG_CLASS_SNR, 0},   {10.0, 30.0, GG_CLASS_SNR, 0},
        {24.0, 23.0, GG_CLASS_PASS, 1},  {26.0, 40.0, GG_CLASS_PASS, 0},
    };
    struct gg_problem p = {.op = GG_OP_DENSE, .a_dtype = GG_DTYPE_E4M3, .b_dtype = GG_DTYPE_E4M3,
                           .c_dtype = GG_DTYPE_BF16, .acc_dtype = GG_DTYPE_F32, .groups = 1,
                           .m = 64, .n = 64, .k = 64};
    struct gg_group_metrics gm = {.elems = 4096, .sig = 1.0, .snr_db = INFINITY, .first_bad = -1,
                                  .worst = {.row = -1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct gg_compare cmp = {.groups = &gm, .n_groups = 1, .sig = 1.0, .snr_db = INFINITY,
                                 .src_snr_db = want[i].out_db, .ref_src_snr_db = want[i].ref_db,
                                 .src_n = 4096};
        struct gg_verdict v;
        gg_verdict_make(&p, "k", 16, 16, 32, &cmp, NULL, &v);
        cr_expect_eq(v.cls, want[i].cls, "%g vs %g dB: %s", want[i].out_db, want[i].ref_db,
                     v.detail);
        cr_expect_eq(v.advisory[0] != '\0', want[i].advisory, "%g vs %g dB: '%s'",
                     want[i].out_db, want[i].ref_db, v.advisory);
        if (want[i].cls == GG_CLASS_SNR)
            cr_expect(strstr(v.detail, "the exact reference reaches") != NULL, "%s", v.detail);
    }
}

/* SNR against the unquantised source, for an fp8 row (25 dB for e4m3). The output is the
   correctly rounded reference, so whatever the source loses the recipe lost: below the level it
   is an advisory beside a pass. */
Test(oracle_verdict, source_snr)
{
    struct fx f;
    make_plain(&f);
    f.p.a_dtype = f.p.b_dtype = GG_DTYPE_E4M3; /* judged by the e4m3->bf16 row */
    double *src = malloc((size_t)f.n_out * sizeof(double));
    cr_assert_not_null(src);
    const double rel[] = {0.02, 0.1}; /* about 34 dB and 20 dB */
    for (int i = 0; i < 2; i++) {
        for (int64_t j = 0; j < f.n_out; j++)
            src[j] = f.ref[j] * (1.0 + (j % 2 ? rel[i] : -rel[i]));
        struct gg_compare cmp;
        struct gg_verdict v;
        cr_assert_eq(gg_compare_output(&f.p, f.c, f.ref, f.abs, src, 16, 16, &cmp), GG_OK);
        gg_verdict_make(&f.p, "mx", 16, 16, 32, &cmp, NULL, &v);
        cr_expect(fabs(cmp.src_snr_db - -20 * log10(rel[i])) < 0.5, "src snr %.2f",
                  cmp.src_snr_db);
        cr_expect(fabs(cmp.ref_src_snr_db - -20 * log10(rel[i])) < 0.5, "ref src snr %.2f",
                  cmp.ref_src_snr_db);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
        cr_expect_eq(strstr(v.advisory, "source snr") != NULL, i == 1, "'%s'", v.advisory);
        gg_compare_free(&cmp);
    }
    /* Only outputs with signal count towards the outputs the source SNR needs: the same 20 dB
       source error on 2 outputs among exact zeros decides nothing. */
    for (int64_t j = 0; j < f.n_out; j++)
        src[j] = 0.0;
    for (int64_t g = 0; g < f.p.groups; g++)
        for (int64_t r = 0; r < 40; r++)
            for (int64_t col = 0; col < 48; col++) {
                int64_t j = fx_packed(&f, g, r, col);
                int keep = g == 3 && r == 0 && col < 2;
                if (!keep) {
                    f.ref[j] = f.abs[j] = 0.0;
                    fx_set(&f, g, r, col, 0.0);
                } else {
                    src[j] = f.ref[j] * (1.0 + (col ? 0.1 : -0.1));
                }
            }
    {
        struct gg_compare cmp;
        struct gg_verdict v;
        cr_assert_eq(gg_compare_output(&f.p, f.c, f.ref, f.abs, src, 16, 16, &cmp), GG_OK);
        gg_verdict_make(&f.p, "mx", 16, 16, 32, &cmp, NULL, &v);
        cr_expect_eq(cmp.src_n, 2);
        cr_expect_lt(cmp.src_snr_db, 21.0);
        cr_expect_eq(v.cls, GG_CLASS_PASS, "%s", v.detail);
        gg_compare_free(&cmp);
    }
    /* Without a source the metric is NaN. */
    struct gg_compare cmp;
    fx_compare(&f, 16, 16, &cmp);
    cr_expect(isnan(cmp.src_snr_db));
    gg_compare_free(&cmp);
    free(src);
    fx_free(&f);
}

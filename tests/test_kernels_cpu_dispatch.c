/*
 * test_kernels_cpu_dispatch.c — the dispatch modes of the BF16 grouped kernels: the serial
 * (one launch per group) and streams (small groups on concurrent threads, large ones after)
 * kernels against the tile-list kernel and a naive double-precision loop on random shapes with
 * empty groups, stream counts, thresholds and both sources of the group lengths; their exact
 * workspace sizes, determinism and supports(); and, for every mutant of the family, the faulty
 * behaviour of the real bug it re-creates on a small shape while the correct kernel passes.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "grouped_fixture.h"

#define SLOT_BYTES ((size_t)64 * 64 * sizeof(float)) /* one tile of fp32 partials */

static const char *const KERNELS[] = {"grouped_bf16_cpu_tiled", "grouped_bf16_cpu_serial",
                                      "grouped_bf16_cpu_streams"};

/* Runs t and returns its output (c_len elements, caller frees) after checking the status. */
static void *run_output(const struct tcase *t, unsigned char poison, int64_t *c_len,
                        int64_t *guard_hits)
{
    struct tbuf b;
    char err[256];
    setup(t, &b, poison);
    cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s: %s", b.kern->name, err);
    size_t bytes = (size_t)b.c_len * out_elem_bytes(t->c_dtype);
    void *out = malloc(bytes);
    cr_assert_not_null(out);
    memcpy(out, b.c, bytes);
    *c_len = b.c_len;
    if (guard_hits)
        *guard_hits = ws_guard_hits(b.ws, b.ws_bytes);
    teardown(&b);
    return out;
}

/* t on its kernel: within the bound of the reference, padding and workspace guard untouched,
   and bitwise equal to grouped_bf16_cpu_tiled with the same split_k (the dispatch modes cut
   the same tiles and slices and sum the partials in the same order). Returns violations. */
static int64_t compare_with_tiled(const struct tcase *t)
{
    int64_t bad = run_and_check(t);
    struct tcase tiled = *t;
    tiled.kernel = "grouped_bf16_cpu_tiled";
    int64_t len_k, len_t;
    void *ck = run_output(t, 0x3C, &len_k, NULL), *ct = run_output(&tiled, 0x3C, &len_t, NULL);
    cr_assert_eq(len_k, len_t);
    if (memcmp(ck, ct, (size_t)len_k * out_elem_bytes(t->c_dtype)) != 0) {
        cr_log_info("%s differs from the tiled kernel", t->kernel);
        bad++;
    }
    free(ck);
    free(ct);
    return bad;
}

/* Random group lengths around the tile (64 rows, 256 along a wgrad reduction), with empty
   groups anywhere; n and k around the tile edges. */
static void random_shape(struct tcase *t, uint64_t *rng)
{
    const int64_t choice[] = {0, 0, 1, 63, 64, 65, 130, 257};
    t->groups = 1 + splitmix_below(rng, 12);
    for (int64_t g = 0; g < t->groups; g++)
        t->lens[g] = splitmix_below(rng, 3) == 0 ? splitmix_below(rng, 200)
                                                 : choice[splitmix_below(rng, 8)];
    const int64_t dims[] = {1, 7, 63, 64, 65, 131};
    t->n = dims[splitmix_below(rng, 6)];
    t->k = dims[splitmix_below(rng, 6)];
    draw_padding(t, 0, rng);
    t->split = 1 + splitmix_below(rng, 3);
    t->seed = splitmix64(rng);
}

/* One dispatch kernel (its index in KERNELS: parameters reach the test's process by value, so
   they hold no pointers) on one op: its random cases, each checked by compare_with_tiled(). */
struct versus_tiled {
    int kernel;
    enum gg_op op;
    uint64_t seed;
};

ParameterizedTestParameters(kernels_cpu_dispatch, matches_tiled)
{
    static struct versus_tiled cases[] = {
        {1, GG_OP_GROUPED_FWD, 31}, {1, GG_OP_GROUPED_DGRAD, 32}, {1, GG_OP_GROUPED_WGRAD, 33},
        {2, GG_OP_GROUPED_FWD, 34}, {2, GG_OP_GROUPED_DGRAD, 35}, {2, GG_OP_GROUPED_WGRAD, 36},
    };
    return cr_make_param_array(struct versus_tiled, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct versus_tiled *v, kernels_cpu_dispatch, matches_tiled)
{
    const int64_t thresholds[] = {0, 1, 64, 128, 1000};
    const char *kernel = KERNELS[v->kernel];
    uint64_t rng = v->seed;
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 10; i++) {
            struct tcase t = {.kernel = kernel, .op = v->op,
                              .c_dtype = d ? GG_DTYPE_F32 : GG_DTYPE_BF16};
            random_shape(&t, &rng);
            add_opt(&t, "lens_from", splitmix_below(&rng, 2));
            if (strcmp(kernel, "grouped_bf16_cpu_streams") == 0) {
                add_opt(&t, "streams", 1 + splitmix_below(&rng, 5));
                add_opt(&t, "threshold", thresholds[splitmix_below(&rng, 5)]);
            }
            cr_expect_eq(compare_with_tiled(&t), 0,
                         "%s op %d case %d/%d (G %lld, N %lld, K %lld, split %lld)", kernel,
                         (int)v->op, d, i, (long long)t.groups, (long long)t.n, (long long)t.k,
                         (long long)t.split);
        }
    }
}

/* Every group empty: fwd/dgrad write nothing, wgrad writes zeros, on every kernel. */
Test(kernels_cpu_dispatch, all_groups_empty)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD, GG_OP_GROUPED_WGRAD};
    for (int kk = 0; kk < 3; kk++)
        for (int o = 0; o < 3; o++)
            for (int64_t split = 1; split <= 2; split++) {
                struct tcase t = {.kernel = KERNELS[kk], .op = ops[o], .c_dtype = GG_DTYPE_BF16,
                                  .split = split, .n = 70, .k = 33, .pad_c = 1, .seed = 5};
                set_lens(&t, 4, (const int64_t[]){0, 0, 0, 0});
                cr_expect_eq(run_and_check(&t), 0, "%s op %d split %lld", KERNELS[kk],
                             (int)ops[o], (long long)split);
            }
}

/* The streams kernel (several streams, split-K helpers) and the serial kernel give bitwise
   identical outputs on repeated runs under different workspace poisons. */
Test(kernels_cpu_dispatch, repeated_runs_identical)
{
    for (int kk = 1; kk < 3; kk++) {
        struct tcase t = {.kernel = KERNELS[kk], .op = GG_OP_GROUPED_FWD,
                          .c_dtype = GG_DTYPE_BF16, .split = 3, .n = 64, .k = 600, .seed = 12};
        set_lens(&t, 8, (const int64_t[]){40, 0, 90, 17, 200, 3, 64, 129});
        add_opt(&t, "streams", 3);
        int64_t len0, len;
        void *first = run_output(&t, 0x00, &len0, NULL);
        for (int r = 0; r < 4; r++) {
            void *again = run_output(&t, (unsigned char)(0x5A + 0x31 * r), &len, NULL);
            cr_expect_eq(memcmp(first, again, (size_t)len * sizeof(uint16_t)), 0,
                         "%s: run %d differs", KERNELS[kk], r);
            free(again);
        }
        free(first);
    }
}

/* lens_from = 1 reads the host arrays of the problem, 0 the device copies: the other side may
   be garbage or NULL; the side read must be present and consistent. */
Test(kernels_cpu_dispatch, lens_from_selects_the_group_arrays)
{
    for (int kk = 0; kk < 3; kk++) {
        for (int64_t from = 0; from <= 1; from++) {
            struct tcase t = {.kernel = KERNELS[kk], .op = GG_OP_GROUPED_WGRAD,
                              .c_dtype = GG_DTYPE_F32, .split = 2, .n = 40, .k = 70,
                              .int_data = 1, .seed = 8};
            set_lens(&t, 3, (const int64_t[]){0, 66, 2});
            add_opt(&t, "lens_from", from);
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0xFF);
            int64_t saved_lens[MAX_GROUPS], saved_offs[MAX_GROUPS + 1];
            memcpy(saved_lens, b.lens, sizeof saved_lens);
            memcpy(saved_offs, b.offs, sizeof saved_offs);
            int64_t *other_lens = from ? b.lens_dev : b.lens;
            int64_t *other_offs = from ? b.offs_dev : b.offs;
            for (int64_t g = 0; g <= t.groups; g++)
                other_offs[g] = 1000 + g; /* garbage on the side not read */
            other_lens[1] = -5;
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s from %lld: %s", KERNELS[kk],
                         (long long)from, err);
            memcpy(b.lens, saved_lens, sizeof saved_lens); /* the checker reads b.lens/b.offs */
            memcpy(b.offs, saved_offs, sizeof saved_offs);
            cr_expect_eq(check_output(&t, &b), 0, "%s lens_from %lld", KERNELS[kk],
                         (long long)from);
            /* the side read is inconsistent or missing: refused with a message */
            int64_t *read_lens = from ? b.lens : b.lens_dev;
            read_lens[2] = 3;
            cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
            cr_expect_neq(err[0], '\0');
            read_lens[2] = 2;
            if (from) {
                b.p.group_lens = NULL;
                b.p.group_offs = NULL;
                cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL, "%s", KERNELS[kk]);
                cr_expect_not_null(strstr(err, "host"), "message '%s'", err);
            }
            teardown(&b);
        }
    }
}

/* workspace_bytes() is what each dispatch mode lays out: one launch's wave for the tile list,
   the sum of the per-group launches for serial, streams x the largest launch for streams. */
Test(kernels_cpu_dispatch, workspace_bytes_exact)
{
    /* fwd, N = 70 (two column tiles): group tiles {2·2, 0, 1·2, 1·2} = 8 */
    struct tcase t = {.op = GG_OP_GROUPED_FWD, .c_dtype = GG_DTYPE_BF16, .split = 3, .n = 70,
                      .k = 40, .seed = 1};
    set_lens(&t, 4, (const int64_t[]){100, 0, 5, 64});
    add_opt(&t, "streams", 3);
    struct tbuf b;
    setup(&t, &b, 0);
    cr_expect_eq(kernel_named(KERNELS[0])->workspace_bytes(&b.p), 3 * 8 * SLOT_BYTES);
    cr_expect_eq(kernel_named(KERNELS[1])->workspace_bytes(&b.p), 3 * 8 * SLOT_BYTES);
    cr_expect_eq(kernel_named(KERNELS[2])->workspace_bytes(&b.p), 3 * 3 * 4 * SLOT_BYTES);
    b.opts[0].value = 1; /* no split-K, no workspace */
    for (int kk = 0; kk < 3; kk++)
        cr_expect_eq(kernel_named(KERNELS[kk])->workspace_bytes(&b.p), 0, "%s", KERNELS[kk]);
    teardown(&b);
    /* wgrad, N = 65, K = 64: every group, empty or not, owns 2 x 1 tiles */
    t.op = GG_OP_GROUPED_WGRAD;
    t.n = 65;
    t.k = 64;
    t.split = 2;
    t.n_extra = 0;
    setup(&t, &b, 0);
    cr_expect_eq(kernel_named(KERNELS[0])->workspace_bytes(&b.p), 2 * 8 * SLOT_BYTES);
    cr_expect_eq(kernel_named(KERNELS[1])->workspace_bytes(&b.p), 2 * 8 * SLOT_BYTES);
    cr_expect_eq(kernel_named(KERNELS[2])->workspace_bytes(&b.p), 2 * 2 * 2 * SLOT_BYTES);
    teardown(&b);
}

Test(kernels_cpu_dispatch, supports_options_and_mutants)
{
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_kopt opt[3] = {{"split_k", 2}, {"streams", 2}, {"threshold", 128}};
    struct gg_problem p = {.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                           .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_BF16,
                           .acc_dtype = GG_DTYPE_F32, .groups = 2, .m = 100, .n = 64, .k = 32,
                           .group_lens = lens, .group_offs = offs, .opts = opt, .n_opts = 3};
    const struct gg_kernel *ks = kernel_named(KERNELS[2]);
    for (int kk = 0; kk < 3; kk++) {
        const struct gg_kernel *k = kernel_named(KERNELS[kk]);
        cr_assert_not_null(k->mutants);
        expect_grouped_supports(k, p);
        struct gg_kopt lf[2] = {{"lens_from", 2}, {"split_k", 1}};
        struct gg_problem q = p;
        q.opts = lf;
        q.n_opts = 2;
        expect_refused(k, q, "lens_from");
        lf[0].value = -1;
        expect_refused(k, q, "lens_from");
        lf[0].value = 1;
        expect_accepted(k, q, "lens_from 1");
    }
    struct gg_problem q = p;
    q.mutant = "shared_workspace_parallel";
    expect_refused(kernel_named(KERNELS[0]), q, "mutant");
    expect_refused(kernel_named(KERNELS[1]), q, "mutant");
    q.mutant = "zero_len_ptr_skip";
    expect_refused(kernel_named(KERNELS[0]), q, "mutant");
    expect_refused(ks, q, "mutant");
    const int64_t bad_streams[] = {0, -1, 17, 100};
    for (int i = 0; i < 4; i++) {
        opt[1].value = bad_streams[i];
        expect_refused(ks, p, "streams");
        expect_accepted(kernel_named(KERNELS[1]), p, "any streams (serial ignores it)");
    }
    opt[1].value = 16;
    expect_accepted(ks, p, "streams 16");
    opt[2].value = -1;
    expect_refused(ks, p, "threshold");
    opt[2].value = 0;
    expect_accepted(ks, p, "threshold 0");
}

/* ---- mutants ------------------------------------------------------------------------------- */

/* zero_len_ptr_skip (serial, fwd/dgrad): after an empty group every group computes with the
   weights of the expert before it; the correct kernel uses its own. wgrad is unaffected. */
Test(kernels_cpu_dispatch, mutant_zero_len_ptr_skip)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    const int64_t lens[] = {5, 0, 7, 3, 0, 0, 4};
    const int64_t wrong_w[] = {0, 1, 1, 2, 4, 5, 3}; /* expert each group reads (empty: any) */
    for (int o = 0; o < 2; o++) {
        struct tcase t = {.kernel = KERNELS[1], .op = ops[o], .c_dtype = GG_DTYPE_F32,
                          .split = 2, .n = 40, .k = 70, .int_data = 1, .seed = 44};
        set_lens(&t, 7, lens);
        cr_expect_eq(run_and_check(&t), 0, "correct serial kernel, op %d", (int)ops[o]);
        t.mutant = "zero_len_ptr_skip";
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0xFF);
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        const struct read_model skip = {.weights_of = wrong_w};
        cr_expect_eq(check_against(&t, &b, &skip, 1), 0,
                     "op %d: groups after an empty one must use the previous expert", (int)ops[o]);
        cr_expect_gt(check_output(&t, &b), 0, "op %d: the mutant went unnoticed", (int)ops[o]);
        teardown(&b);
    }
    struct tcase w = {.kernel = KERNELS[1], .mutant = "zero_len_ptr_skip",
                      .op = GG_OP_GROUPED_WGRAD, .c_dtype = GG_DTYPE_F32, .split = 1, .n = 20,
                      .k = 30, .int_data = 1, .seed = 45};
    set_lens(&w, 7, lens);
    cr_expect_eq(run_and_check(&w), 0, "wgrad walks no weight pointer");
}

/* wgrad_zero_uninit (every kernel): a wgrad group without tokens keeps the sentinel in its
   whole dW block instead of zeros; groups with tokens are right. */
Test(kernels_cpu_dispatch, mutant_wgrad_zero_uninit)
{
    for (int kk = 0; kk < 3; kk++)
        for (int64_t split = 1; split <= 2; split++) {
            struct tcase t = {.kernel = KERNELS[kk], .op = GG_OP_GROUPED_WGRAD,
                              .c_dtype = GG_DTYPE_BF16, .split = split, .n = 67, .k = 70,
                              .pad_c = 3, .seed = 9};
            set_lens(&t, 4, (const int64_t[]){0, 9, 0, 300});
            cr_expect_eq(run_and_check(&t), 0, "%s split %lld", KERNELS[kk], (long long)split);
            t.mutant = "wgrad_zero_uninit";
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0xFF);
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            for (int64_t g = 0; g < 4; g++) {
                int64_t sentinels = 0;
                for (int64_t i = 0; i < t.n; i++)
                    for (int64_t j = 0; j < t.k; j++)
                        sentinels += is_sentinel(b.c, t.c_dtype, c_at(&t, &b, g, i, j));
                cr_expect_eq(sentinels, t.lens[g] == 0 ? t.n * t.k : 0,
                             "%s split %lld group %lld", KERNELS[kk], (long long)split,
                             (long long)g);
            }
            cr_expect_eq(check_output(&t, &b), 2 * t.n * t.k, "%s", KERNELS[kk]);
            cr_expect_eq(ws_guard_hits(b.ws, b.ws_bytes), 0);
            teardown(&b);
        }
}

/* Runs t `runs` times and counts the runs whose output differs bitwise from `good`. */
static int runs_differing(const struct tcase *t, const void *good, int runs)
{
    int differ = 0;
    for (int r = 0; r < runs; r++) {
        int64_t len;
        void *out = run_output(t, (unsigned char)(0x11 * r), &len, NULL);
        differ += memcmp(out, good, (size_t)len * out_elem_bytes(t->c_dtype)) != 0;
        free(out);
    }
    return differ;
}

/* shared_workspace_parallel (streams): concurrent streams accumulate their split-K partials
   in the same workspace slice, so their tiles mix; the correct kernel is exact every time. */
Test(kernels_cpu_dispatch, mutant_shared_workspace_parallel)
{
    struct tcase t = {.kernel = KERNELS[2], .op = GG_OP_GROUPED_FWD, .c_dtype = GG_DTYPE_F32,
                      .split = 4, .n = 64, .k = 2048, .int_data = 1, .seed = 77};
    set_lens(&t, 8, (const int64_t[]){64, 64, 64, 64, 64, 64, 64, 64});
    add_opt(&t, "streams", 4);
    cr_expect_eq(run_and_check(&t), 0);
    int64_t len;
    void *good = run_output(&t, 0, &len, NULL);
    cr_expect_eq(runs_differing(&t, good, 3), 0, "the correct kernel is deterministic");
    t.mutant = "shared_workspace_parallel";
    int differ = runs_differing(&t, good, 6);
    cr_log_info("shared_workspace_parallel: %d of 6 runs wrong", differ);
    cr_expect_gt(differ, 0, "the race between streams never showed in 6 runs");
    free(good);
}

/* missing_fence (every kernel): the split-K reducer sums a slice another thread is still
   accumulating, so outputs are wrong, and differently so from run to run. */
Test(kernels_cpu_dispatch, mutant_missing_fence)
{
    for (int kk = 0; kk < 3; kk++) {
        struct tcase t = {.kernel = KERNELS[kk], .op = GG_OP_GROUPED_FWD,
                          .c_dtype = GG_DTYPE_F32, .split = 2, .n = 128, .k = 4096,
                          .int_data = 1, .seed = 78};
        set_lens(&t, 3, (const int64_t[]){200, 0, 56});
        cr_expect_eq(run_and_check(&t), 0, "%s", KERNELS[kk]);
        int64_t len;
        void *good = run_output(&t, 0, &len, NULL);
        t.mutant = "missing_fence";
        int differ = runs_differing(&t, good, 4);
        cr_log_info("missing_fence %s: %d of 4 runs wrong", KERNELS[kk], differ);
        cr_expect_gt(differ, 0, "%s: the reduction race never showed in 4 runs", KERNELS[kk]);
        free(good);
    }
}

/* workspace_underreport (every kernel): the reported size is one tile of partials short, the
   kernel accepts it and writes its last slot past the end (into the guard band); the output
   itself stays right. The correct kernel's reported size is exactly what it uses. */
Test(kernels_cpu_dispatch, mutant_workspace_underreport)
{
    const int64_t lens_tiled[] = {100, 0, 5}, lens_streams[] = {5, 0, 5};
    for (int kk = 0; kk < 3; kk++) {
        struct tcase t = {.kernel = KERNELS[kk], .op = GG_OP_GROUPED_FWD,
                          .c_dtype = GG_DTYPE_BF16, .split = 2, .n = 64, .k = 512, .seed = 3};
        set_lens(&t, 3, kk == 2 ? lens_streams : lens_tiled);
        cr_expect_eq(run_and_check(&t), 0, "%s", KERNELS[kk]);
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0xFF);
        size_t right = b.ws_bytes;
        teardown(&b);
        t.mutant = "workspace_underreport";
        setup(&t, &b, 0xFF);
        cr_expect_eq(b.ws_bytes, right - SLOT_BYTES, "%s", KERNELS[kk]);
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s: %s", KERNELS[kk], err);
        cr_expect_gt(ws_guard_hits(b.ws, b.ws_bytes), 0,
                     "%s: nothing written past the reported end", KERNELS[kk]);
        cr_expect_eq(check_output(&t, &b), 0, "%s", KERNELS[kk]);
        teardown(&b);
    }
}

/* tail_rows_unwritten (every kernel, fwd/dgrad): exactly the rows of the output's final
   partial row tile (the last group's rows past its last multiple of 64) keep the sentinel;
   nothing is lost when the last group ends on a tile edge, and wgrad is unaffected. */
Test(kernels_cpu_dispatch, mutant_tail_rows_unwritten)
{
    enum gg_op ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD};
    for (int kk = 0; kk < 3; kk++)
        for (int o = 0; o < 2; o++) {
            struct tcase t = {.kernel = KERNELS[kk], .mutant = "tail_rows_unwritten",
                              .op = ops[o], .c_dtype = GG_DTYPE_BF16, .split = 1 + o, .n = 50,
                              .k = 70, .pad_c = 2, .seed = 5};
            set_lens(&t, 4, (const int64_t[]){70, 0, 100, 0});
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0xFF);
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            int64_t cols = row_len_c(&t), unwritten = 0, misplaced = 0;
            for (int64_t row = 0; row < b.p.m; row++)
                for (int64_t j = 0; j < cols; j++) {
                    int s = is_sentinel(b.c, t.c_dtype, row * b.ldc + j);
                    unwritten += s;
                    misplaced += s != (row >= 70 + 64); /* group 2's rows 64..99 */
                }
            cr_expect_eq(unwritten, 36 * cols, "%s op %d", KERNELS[kk], (int)ops[o]);
            cr_expect_eq(misplaced, 0, "%s op %d", KERNELS[kk], (int)ops[o]);
            cr_expect_eq(check_output(&t, &b), 36 * cols);
            teardown(&b);
            set_lens(&t, 3, (const int64_t[]){70, 0, 128});
            cr_expect_eq(run_and_check(&t), 0, "%s: last group on a tile edge", KERNELS[kk]);
        }
    struct tcase w = {.mutant = "tail_rows_unwritten", .op = GG_OP_GROUPED_WGRAD,
                      .c_dtype = GG_DTYPE_BF16, .split = 1, .n = 50, .k = 70, .seed = 5};
    set_lens(&w, 2, (const int64_t[]){70, 100});
    cr_expect_eq(run_and_check(&w), 0, "wgrad is unaffected");
}

/* A mutant list carries every fault it names: under wgrad_zero_uninit,tail_rows_unwritten (in
   either order) a wgrad leaves exactly the dW blocks of its empty groups unwritten and a fwd
   exactly its final partial row tile, as each mutant alone does. */
Test(kernels_cpu_dispatch, mutant_list_carries_both_faults)
{
    static const char *const lists[] = {"wgrad_zero_uninit,tail_rows_unwritten",
                                        "tail_rows_unwritten,wgrad_zero_uninit"};
    for (int kk = 0; kk < 3; kk++)
        for (int l = 0; l < 2; l++) {
            struct tcase w = {.kernel = KERNELS[kk], .mutant = lists[l],
                              .op = GG_OP_GROUPED_WGRAD, .c_dtype = GG_DTYPE_BF16, .split = 1,
                              .n = 67, .k = 70, .pad_c = 3, .seed = 9};
            set_lens(&w, 4, (const int64_t[]){0, 9, 0, 300});
            struct tbuf b;
            char err[256];
            setup(&w, &b, 0xFF);
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&w, &b), 2 * w.n * w.k, "%s %s wgrad", KERNELS[kk],
                         lists[l]);
            teardown(&b);
            struct tcase f = {.kernel = KERNELS[kk], .mutant = lists[l],
                              .op = GG_OP_GROUPED_FWD, .c_dtype = GG_DTYPE_BF16, .split = 1,
                              .n = 50, .k = 70, .pad_c = 2, .seed = 5};
            set_lens(&f, 4, (const int64_t[]){70, 0, 100, 0});
            setup(&f, &b, 0xFF);
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&f, &b), 36 * row_len_c(&f), "%s %s fwd", KERNELS[kk],
                         lists[l]);
            teardown(&b);
        }
}

/* supports() takes a list of the kernel's own mutants and refuses, naming the item, one that
   is not the kernel's (a prefix of a name included), an empty item and a repeated one. */
Test(kernels_cpu_dispatch, supports_mutant_lists)
{
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_problem p = {.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                           .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_BF16,
                           .acc_dtype = GG_DTYPE_F32, .groups = 2, .m = 100, .n = 64, .k = 32,
                           .group_lens = lens, .group_offs = offs};
    for (int kk = 0; kk < 3; kk++) {
        const struct gg_kernel *k = kernel_named(KERNELS[kk]);
        struct gg_problem q = p;
        q.mutant = "wgrad_zero_uninit,tail_rows_unwritten";
        expect_accepted(k, q, q.mutant);
        q.mutant = "missing_fence,i32_cumulative_offset,workspace_underreport";
        expect_accepted(k, q, q.mutant);
        q.mutant = "wgrad_zero_uninit,no_such_mutant";
        expect_refused(k, q, "no mutant 'no_such_mutant'");
        q.mutant = "wgrad_zero,tail_rows_unwritten";
        expect_refused(k, q, "no mutant 'wgrad_zero'");
        q.mutant = "wgrad_zero_uninit,,tail_rows_unwritten";
        expect_refused(k, q, "item 2 is empty");
        q.mutant = "tail_rows_unwritten,";
        expect_refused(k, q, "item 2 is empty");
        q.mutant = "missing_fence,wgrad_zero_uninit,missing_fence";
        expect_refused(k, q, "'missing_fence' appears twice");
    }
    struct gg_problem q = p;
    q.mutant = "wgrad_zero_uninit,shared_workspace_parallel";
    expect_refused(kernel_named(KERNELS[0]), q, "no mutant 'shared_workspace_parallel'");
    expect_accepted(kernel_named(KERNELS[2]), q, q.mutant);
}

/* ---- i32_cumulative_offset: offsets past 2^32 on reserved, mostly untouched memory ------- */

#define HUGE_LD ((int64_t)1 << 22)
#define HUGE_G 3

/* lens {0, 1025, 8} with one leading dimension of 2^22: the last group starts at row 1025,
   and 1025·2^22 = 2^32 + 2^22 wraps in int32 to 2^22, row 1. Only the rows in use are
   touched; the big operand is a reserved mapping of 2^32-odd elements. */
struct huge {
    struct gg_problem p;
    struct gg_kopt opt;
    int64_t lens[HUGE_G], offs[HUGE_G + 1];
    uint16_t *a, *b, *c;
    size_t a_bytes, c_bytes; /* mapped sizes; 0 when heap memory */
    int64_t lda, ldb, ldc, n, k;
};

static void huge_setup(struct huge *h, enum gg_op op, const char *mutant)
{
    memset(h, 0, sizeof *h);
    const int64_t lens[HUGE_G] = {0, 1025, 8};
    for (int g = 0; g < HUGE_G; g++) {
        h->lens[g] = lens[g];
        h->offs[g + 1] = h->offs[g] + lens[g];
    }
    int64_t m = h->offs[HUGE_G];
    h->n = 16;
    h->k = 24;
    int wgrad = op == GG_OP_GROUPED_WGRAD;
    int64_t row_a = wgrad ? h->n : h->k;
    h->lda = wgrad ? HUGE_LD : h->k; /* wgrad: dY rows 2^22 apart */
    h->ldb = h->k;
    h->ldc = wgrad ? h->k : HUGE_LD; /* fwd: Y rows 2^22 apart */
    /* fwd without split-K: tiles are stored in list order, so the wrapped group 2 lands on
       rows 1..8 after group 1 wrote them */
    h->opt = (struct gg_kopt){"split_k", wgrad ? 2 : 1};
    h->p = (struct gg_problem){.op = op, .a_dtype = GG_DTYPE_BF16, .b_dtype = GG_DTYPE_BF16,
                               .c_dtype = GG_DTYPE_BF16, .acc_dtype = GG_DTYPE_F32,
                               .groups = HUGE_G, .m = m, .n = h->n, .k = h->k, .lda = h->lda,
                               .ldb = h->ldb, .ldc = h->ldc, .group_lens = h->lens,
                               .group_offs = h->offs, .opts = &h->opt, .n_opts = 1,
                               .mutant = mutant};
    uint64_t rng = 99;
    int64_t b_rows = wgrad ? m : HUGE_G * h->n;
    h->a_bytes = wgrad ? (size_t)(m * h->lda) * sizeof(uint16_t) : 0;
    h->a = wgrad ? reserve_sparse(h->a_bytes) : xcalloc(m * h->lda, sizeof(uint16_t));
    h->b = xcalloc(b_rows * h->ldb, sizeof(uint16_t));
    for (int64_t r = 0; r < m; r++)
        fill_codes((uint8_t *)(h->a + r * h->lda), row_a, GG_DTYPE_BF16, 1, &rng);
    fill_codes((uint8_t *)h->b, b_rows * h->ldb, GG_DTYPE_BF16, 1, &rng);
    if (wgrad) {
        h->c = xcalloc(HUGE_G * h->n * h->k, sizeof(uint16_t));
        fill_sentinel(h->c, GG_DTYPE_BF16, HUGE_G * h->n * h->k);
    } else {
        h->c_bytes = (size_t)(m * h->ldc) * sizeof(uint16_t);
        h->c = reserve_sparse(h->c_bytes);
        for (int64_t r = 0; r < m; r++)
            fill_sentinel(h->c + r * h->ldc, GG_DTYPE_BF16, h->n);
    }
}

static void huge_teardown(struct huge *h)
{
    if (h->a_bytes)
        munmap(h->a, h->a_bytes);
    else
        free(h->a);
    if (h->c_bytes)
        munmap(h->c, h->c_bytes);
    else
        free(h->c);
    free(h->b);
}

/* Sets up the huge case of op under mutant and runs grouped_bf16_cpu_tiled on it. */
static void huge_run(struct huge *h, enum gg_op op, const char *mutant)
{
    huge_setup(h, op, mutant);
    const struct gg_kernel *k = kernel_named(KERNELS[0]);
    size_t ws_bytes = k->workspace_bytes(&h->p);
    void *ws = xcalloc((int64_t)ws_bytes, 1);
    struct gg_operands o = {.a = h->a, .b = h->b, .c = h->c, .workspace = ws,
                            .workspace_bytes = ws_bytes, .group_lens_dev = h->lens,
                            .group_offs_dev = h->offs};
    char err[256] = "";
    cr_assert_eq(k->run(&h->p, &o, err, sizeof err), GG_OK, "%s", err);
    free(ws);
}

/* Exact value of output (i, j) of group g computed from A rows starting at a_row (instead of
   the group's own first row): small integers, so fp32 sums are exact. */
static double huge_ref(const struct huge *h, int64_t g, int64_t a_row, int64_t i, int64_t j)
{
    double s = 0;
    if (h->p.op == GG_OP_GROUPED_WGRAD) {
        for (int64_t r = 0; r < h->lens[g]; r++)
            s += (double)bf16_decode(h->a[(a_row + r) * h->lda + i]) *
                 (double)bf16_decode(h->b[(h->offs[g] + r) * h->ldb + j]);
    } else {
        for (int64_t r = 0; r < h->k; r++)
            s += (double)bf16_decode(h->a[(a_row + i) * h->lda + r]) *
                 (double)bf16_decode(h->b[(g * h->n + j) * h->ldb + r]);
    }
    return s;
}

/* Counts the elements of group g's output block (fwd: at output row out_row) that differ from
   the exact product with A rows from a_row. */
static int64_t huge_mismatches(const struct huge *h, int64_t g, int64_t a_row, int64_t out_row)
{
    int wgrad = h->p.op == GG_OP_GROUPED_WGRAD;
    int64_t bad = 0, rows = wgrad ? h->n : h->lens[g], cols = wgrad ? h->k : h->n;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t at = wgrad ? (g * h->n + i) * h->ldc + j : (out_row + i) * h->ldc + j;
            double ref = huge_ref(h, g, a_row, i, j);
            bad += (double)bf16_decode(h->c[at]) != (double)bf16_decode(bf16_encode((float)ref)) ||
                   h->c[at] == SENTINEL_BF16;
        }
    return bad;
}

/* The correct kernel on the huge case of op: group 1 from its own rows, group 2 from rows
   1025.. (fwd: written at rows 1025..). */
static void expect_huge_correct(enum gg_op op)
{
    struct huge h;
    huge_run(&h, op, NULL);
    cr_expect_eq(huge_mismatches(&h, 1, 0, 0), 0);
    cr_expect_eq(huge_mismatches(&h, 2, 1025, op == GG_OP_GROUPED_FWD ? 1025 : 0), 0,
                 "correct kernel: group 2 from rows 1025..");
    huge_teardown(&h);
}

/* wgrad: the last group's dY offset m_start·lda = 1025·2^22 wraps to 2^22, so dW_2 is computed
   from dY rows 1..8 (with the right X rows 1025..1032). */
Test(kernels_cpu_dispatch, mutant_i32_cumulative_offset_wgrad)
{
    expect_huge_correct(GG_OP_GROUPED_WGRAD);
    struct huge h;
    huge_run(&h, GG_OP_GROUPED_WGRAD, "i32_cumulative_offset");
    cr_expect_eq(huge_mismatches(&h, 1, 0, 0), 0, "group 1 starts at row 0: no wrap");
    cr_expect_eq(huge_mismatches(&h, 2, 1, 0), 0, "mutant: dW_2 from dY rows 1..8");
    cr_expect_gt(huge_mismatches(&h, 2, 1025, 0), 0);
    huge_teardown(&h);
}

/* fwd: the last group's output offset m_start·ldc wraps the same way: Y_2 lands on rows 1..8
   (over group 1's rows) and rows 1025..1032 stay unwritten. */
Test(kernels_cpu_dispatch, mutant_i32_cumulative_offset_fwd)
{
    expect_huge_correct(GG_OP_GROUPED_FWD);
    struct huge h;
    huge_run(&h, GG_OP_GROUPED_FWD, "i32_cumulative_offset");
    cr_expect_eq(huge_mismatches(&h, 2, 1025, 1), 0, "mutant: Y_2 written at rows 1..8");
    int64_t unwritten = 0;
    for (int64_t r = 1025; r < 1033; r++)
        for (int64_t j = 0; j < h.n; j++)
            unwritten += h.c[r * h.ldc + j] == SENTINEL_BF16;
    cr_expect_eq(unwritten, 8 * h.n, "rows 1025..1032 must stay unwritten");
    huge_teardown(&h);
}

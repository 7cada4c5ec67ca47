/*
 * test_kernels_cpu_grouped.c — grouped_bf16_cpu_tiled against a naive double-precision loop:
 * fwd, dgrad and wgrad with bf16 and f32 output and split_k 1..3, on group sizes and N, K on
 * either side of the tile edges, empty groups in every position, and padded leading dimensions
 * whose padding must stay untouched. Also: exact results on small-integer data, output
 * independence from the workspace's initial contents, supports() and workspace_bytes().
 */
#include "grouped_bf16_fixture.h"

static const struct gg_kernel *kernel(void)
{
    return find_kernel("grouped_bf16_cpu_tiled");
}

/* ---- shape catalogue ------------------------------------------------------------------- */

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
        t->groups = 1 + splitmix_below(rng, 6);
        for (int64_t g = 0; g < t->groups; g++)
            t->lens[g] = splitmix_below(rng, 3) == 0 ? splitmix_below(rng, 2 * tile)
                                                 : choice[splitmix_below(rng, 7)];
        break;
    }
    }
}

/* N and K around the tile edges (the reduction step TILE_K for the reduction dimension). */
static int64_t pick_dim(uint64_t *rng, int64_t tile, int64_t tile_red, int is_red)
{
    const int64_t small[] = {1, 7, tile - 1, tile, tile + 1, 2 * tile + 3};
    if (is_red && splitmix_below(rng, 4) == 0)
        return tile_red + 1 - 2 * splitmix_below(rng, 2); /* tile_k ± 1 */
    return small[splitmix_below(rng, 6)];
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
            t.pad_a = splitmix_below(&rng, 2) * 3;
            t.pad_b = splitmix_below(&rng, 2) * 5;
            t.pad_c = splitmix_below(&rng, 2) * 2 + (idx % 2);
            t.pad_sb = splitmix_below(&rng, 2) * 11;
            t.pad_sc = splitmix_below(&rng, 2) * 13;
            t.seed = splitmix64(&rng);
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

static const enum gg_op grouped_ops[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD,
                                         GG_OP_GROUPED_WGRAD};

/* run_and_check finds no violation in t under every grouped op and split_k 1..max_split. */
static void expect_clean_for_every_op_and_split(struct tcase t, int64_t max_split)
{
    for (int o = 0; o < 3; o++)
        for (int64_t split = 1; split <= max_split; split++) {
            t.op = grouped_ops[o];
            t.split = split;
            cr_expect_eq(run_and_check(&t), 0, "op %d split %lld", (int)t.op, (long long)split);
        }
}

/* Small integers with f32 output: every product and partial sum is an integer below 2^24, so
   the output must equal the exact result bit for bit, whatever the summation order. */
Test(kernels_cpu_grouped, small_integers_exact_f32)
{
    struct tcase t = {.c_dtype = GG_DTYPE_F32, .n = 129, .k = 257, .pad_c = 1, .int_data = 1,
                      .seed = 77};
    set_lens(&t, 4, (const int64_t[]){300, 0, 64, 1});
    expect_clean_for_every_op_and_split(t, 3);
}

/* All leading dimensions and strides 0: the kernel resolves the packed defaults itself. */
Test(kernels_cpu_grouped, zero_leading_dimensions_mean_packed)
{
    struct tcase t = {.c_dtype = GG_DTYPE_F32, .n = 65, .k = 63, .packed = 1, .int_data = 1,
                      .seed = 3};
    set_lens(&t, 3, (const int64_t[]){70, 0, 5});
    expect_clean_for_every_op_and_split(t, 2);
}

/* With split_k > 1 the output must not depend on the workspace's initial contents. */
Test(kernels_cpu_grouped, split_k_output_independent_of_workspace_poison)
{
    const int64_t splits[] = {2, 3, 7, 64};
    for (int o = 0; o < 3; o++)
        for (int s = 0; s < 4; s++) {
            struct tcase t = {.op = grouped_ops[o], .c_dtype = GG_DTYPE_BF16, .split = splits[s],
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
                         "op %d split %lld: output depends on the workspace poison", (int)t.op,
                         (long long)t.split);
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
    for (int o = 0; o < 3; o++) {
        struct tcase t = {.op = grouped_ops[o], .c_dtype = GG_DTYPE_F32, .split = 2, .n = 40,
                          .k = 70, .int_data = 1, .seed = 8};
        set_lens(&t, 3, (const int64_t[]){0, 66, 2});
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0xFF);
        b.p.group_lens = NULL;
        b.p.group_offs = NULL;
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &b, 1), 0, "op %d", (int)t.op);
        teardown(&b);
    }
}

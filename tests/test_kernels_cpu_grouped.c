/*
 * test_kernels_cpu_grouped.c — grouped_bf16_cpu_tiled against a naive double-precision loop:
 * fwd, dgrad and wgrad with bf16 and f32 output and split_k 1..3, on group sizes and N, K on
 * either side of the tile edges, empty groups in every position, and padded leading dimensions
 * whose padding must stay untouched. Also: exact results on small-integer data, output
 * independence from the workspace's initial contents, supports() and workspace_bytes().
 */
#include "grouped_fixture.h"

static const struct gg_kernel *kernel(void)
{
    return kernel_named("grouped_bf16_cpu_tiled");
}

/* fwd, dgrad or wgrad with one output dtype over split_k 1..3 and every pattern. */
static void run_matrix(enum gg_op op, enum gg_dtype c_dtype, uint64_t seed)
{
    const struct gg_kernel *k = kernel();
    uint64_t rng = seed;
    for (int64_t split = 1; split <= 3; split++) {
        for (int idx = 0; idx < N_FIXED_PATTERNS + 10; idx++) {
            struct tcase t = {.op = op, .c_dtype = c_dtype, .split = split};
            catalogue_shape(&t, idx, k, &rng);
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
                expect_empty_wgrad_groups_zero(&t);
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
            expect_workspace_poison_independent(&t);
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

Test(kernels_cpu_grouped, supports_refuses_with_reason)
{
    const struct gg_kernel *k = kernel();
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    struct gg_kopt opt = {"split_k", 1};
    struct gg_problem p = base_problem(&opt, lens, offs), q;
    expect_grouped_supports(k, p);
    p.c_dtype = GG_DTYPE_F32;
    expect_grouped_supports(k, p);
    q = p, q.a_dtype = q.b_dtype = GG_DTYPE_E4M3, expect_refused(k, q, "bf16");
    q = p, q.b_dtype = GG_DTYPE_E5M2, expect_refused(k, q, "bf16");
    q = p, q.scaling = GG_SCALING_MX, expect_refused(k, q, "mx");
    q = p, q.scaling = GG_SCALING_TENSOR, expect_refused(k, q, "scaling");
}

/* Inconsistent problems are GG_E_INVAL with a message; unsupported ones GG_E_UNSUPPORTED. */
Test(kernels_cpu_grouped, run_rejects_inconsistent_problems)
{
    struct tcase t = {.c_dtype = GG_DTYPE_BF16};
    struct tbuf b;
    char err[256];
    setup_and_expect_inconsistent_refused(&t, &b);

    unsigned char *ws = b.ws;
    b.ws = NULL; /* split-K without its workspace */
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    b.ws = ws;
    b.ws_bytes -= 1;
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL);
    b.ws_bytes += 1;

    b.p.scaling = GG_SCALING_MX;
    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect_neq(err[0], '\0');
    b.p.scaling = GG_SCALING_NONE;

    cr_expect_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(check_output(&t, &b), 0);
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
        expect_device_offsets_read(&t);
    }
}

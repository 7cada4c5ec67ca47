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
#include "grouped_fixture.h"

static const char *const KERNELS[2] = {"grouped_fp8_cpu_persistent", "grouped_fp8_cpu_tiled"};

/* Every input pair the family accepts. */
static const enum gg_dtype PAIRS[][2] = {
    {GG_DTYPE_E4M3, GG_DTYPE_E4M3},         {GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_DTYPE_E5M2, GG_DTYPE_E4M3},         {GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ}, {GG_DTYPE_E5M2FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_DTYPE_E5M2FNUZ, GG_DTYPE_E5M2FNUZ},
};
#define N_PAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

/* ---- random shapes -------------------------------------------------------------------- */

/* One op over both kernels, split_k 1..3, every pattern, cycling through the dtype pairs, the
   output dtypes, padding and worker counts. */
static void run_matrix(enum gg_op op, uint64_t seed)
{
    uint64_t rng = seed;
    int idx_run = 0;
    for (int kn = 0; kn < 2; kn++) {
        const struct gg_kernel *k = kernel_named(KERNELS[kn]);
        for (int64_t split = 1; split <= 3; split++) {
            for (int idx = 0; idx < N_FIXED_PATTERNS + 4; idx++, idx_run++) {
                struct tcase t = {.kernel = KERNELS[kn], .op = op, .split = split};
                t.a_dtype = PAIRS[idx_run % N_PAIRS][0];
                t.b_dtype = PAIRS[idx_run % N_PAIRS][1];
                t.c_dtype = (idx_run / N_PAIRS) % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16;
                t.workers = kn == 0 ? splitmix_below(&rng, 5) : 0; /* 0: default */
                catalogue_shape(&t, idx, k, &rng);
                int64_t bad = run_and_check(&t);
                cr_expect_eq(bad, 0,
                             "%s op %d %s x %s -> %s split %lld pattern %d (G %lld, N %lld, "
                             "K %lld): %lld bad elements",
                             t.kernel, (int)op, gg_dtype_name(t.a_dtype), gg_dtype_name(t.b_dtype),
                             gg_dtype_name(t.c_dtype), (long long)split, idx, (long long)t.groups,
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
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = PAIRS[pr][0],
                                  .b_dtype = PAIRS[pr][1], .c_dtype = GG_DTYPE_F32, .split = 1 + o,
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
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = GG_DTYPE_E4M3,
                              .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_F32, .split = 1,
                              .n = 70, .k = 90, .seed = 4};
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
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            int64_t mismatches = 0, cols = row_len_c(&t);
            for (int64_t g = 1; g < 3; g++)
                for (int64_t i = 0; i < 9; i++)
                    for (int64_t j = 0; j < cols; j++) {
                        double y0 = out_value(b.c, t.c_dtype, c_at(&t, &b, 0, i, j));
                        mismatches += out_value(b.c, t.c_dtype, c_at(&t, &b, g, i, j)) !=
                                      ldexp(y0, (int)g);
                    }
            cr_expect_eq(mismatches, 0, "%s op %d", KERNELS[kn], (int)ops[o]);
            cr_expect_eq(check_output(&t, &b), 0);
            teardown(&b);
        }
    struct tcase w = {.kernel = KERNELS[0], .op = GG_OP_GROUPED_WGRAD, .a_dtype = GG_DTYPE_E5M2,
                      .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_BF16, .split = 2, .n = 40,
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
            struct tcase t = {.kernel = KERNELS[1], .op = ops[o], .a_dtype = GG_DTYPE_E4M3,
                              .b_dtype = GG_DTYPE_E5M2, .c_dtype = GG_DTYPE_F32, .split = split,
                              .n = 150, .k = 140, .pad_c = 3, .seed = 99};
            set_lens(&t, 5, (const int64_t[]){0, 130, 1, 0, 64});
            struct tbuf ref, b;
            char err[256];
            setup(&t, &ref, 0x11);
            cr_assert_eq(run_kernel(&ref, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&t, &ref), 0);
            for (int w = 0; w < 5; w++) {
                struct tcase tp = t;
                tp.kernel = KERNELS[0];
                tp.workers = workers[w];
                setup(&tp, &b, 0x22);
                cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
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
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = GG_DTYPE_E4M3FNUZ,
                                  .b_dtype = GG_DTYPE_E4M3FNUZ, .c_dtype = GG_DTYPE_BF16,
                                  .split = split, .n = 70, .k = 33, .seed = 5};
                set_lens(&t, 4, (const int64_t[]){0, 0, 0, 0});
                cr_expect_eq(run_and_check(&t), 0, "%s op %d split %lld", KERNELS[kn],
                             (int)ops[o], (long long)split);
            }
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
                                  .a_dtype = GG_DTYPE_E5M2, .b_dtype = GG_DTYPE_E4M3,
                                  .c_dtype = pi % 2 ? GG_DTYPE_F32 : GG_DTYPE_BF16, .split = split,
                                  .n = 67, .k = 130, .pad_c = 3, .pad_sc = 7, .seed = 9};
                set_lens(&t, 4, patterns[pi]);
                expect_empty_wgrad_groups_zero(&t);
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
                struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = GG_DTYPE_E4M3,
                                  .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_BF16,
                                  .split = splits[s], .workers = 3, .n = 100, .k = 90, .pad_c = 2,
                                  .seed = 21};
                set_lens(&t, 4, (const int64_t[]){0, 130, 3, 0});
                expect_workspace_poison_independent(&t);
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
    const struct gg_kernel *kp = kernel_named(KERNELS[0]), *kt = kernel_named(KERNELS[1]);
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
        struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_WGRAD,
                          .a_dtype = GG_DTYPE_E4M3, .b_dtype = GG_DTYPE_E4M3,
                          .c_dtype = GG_DTYPE_F32, .split = 3, .n = 65, .k = 70, .seed = 2};
        set_lens(&t, 2, (const int64_t[]){10, 0});
        struct tbuf b;
        char err[256];
        setup(&t, &b, 0);
        b.ws_bytes -= 1;
        cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_INVAL, "%s", KERNELS[kn]);
        cr_expect_neq(err[0], '\0');
        b.ws_bytes += 1;
        cr_expect_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        teardown(&b);
    }
}

/* ---- supports() and errors --------------------------------------------------------------- */

Test(kernels_cpu_fp8, supports_accepts_and_refuses_with_reasons)
{
    const int64_t lens[] = {40, 60}, offs[] = {0, 40, 100};
    for (int kn = 0; kn < 2; kn++) {
        const struct gg_kernel *k = kernel_named(KERNELS[kn]);
        cr_expect_eq(k->ops, GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |
                                 GG_OP_BIT(GG_OP_GROUPED_WGRAD));
        struct gg_kopt opt[2] = {{"split_k", 1}, {"workers", 2}};
        struct gg_problem p = base_problem(opt, 2, lens, offs), q;
        for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++)
            for (int pr = 0; pr < N_PAIRS; pr++)
                for (int c = 0; c < 2; c++) {
                    q = p, q.op = (enum gg_op)op, q.a_dtype = PAIRS[pr][0];
                    q.b_dtype = PAIRS[pr][1], q.c_dtype = c ? GG_DTYPE_F32 : GG_DTYPE_BF16;
                    expect_accepted(k, q, "accepted pair");
                }
        expect_grouped_supports(k, p);
        q = p, q.a_dtype = q.b_dtype = GG_DTYPE_E5M2;
        expect_refused(k, q, "e5m2 x e5m2 is not supported");
        q = p, q.a_dtype = GG_DTYPE_E4M3FNUZ, expect_refused(k, q, "fnuz mixed with OCP");
        q = p, q.b_dtype = GG_DTYPE_E5M2FNUZ, expect_refused(k, q, "fnuz mixed with OCP");
        q = p, q.a_dtype = q.b_dtype = GG_DTYPE_BF16, expect_refused(k, q, "fp8 inputs only");
        q = p, q.b_dtype = GG_DTYPE_E2M1, expect_refused(k, q, "fp8 inputs only");
        q = p, q.scaling = GG_SCALING_NONE, expect_refused(k, q, "tensor-wise");
        q = p, q.scaling = GG_SCALING_MX, expect_refused(k, q, "tensor-wise");
        q = p, q.scaling = GG_SCALING_BLOCK128, expect_refused(k, q, "tensor-wise");
        q = p, q.c_dtype = GG_DTYPE_E4M3, expect_refused(k, q, "output");
        q = p, q.bias_dtype = GG_DTYPE_BF16, expect_refused(k, q, "bias");
        q = p, q.b_layout = GG_LAYOUT_KN, expect_refused(k, q, "b_layout");
        q = p, q.mutant = "zero_len_ptr_skip", expect_refused(k, q, "mutant");
    }
    /* workers is the persistent kernel's option; the tiled kernel ignores it */
    const int64_t lens2[] = {40, 60}, offs2[] = {0, 40, 100};
    struct gg_kopt opt[1] = {{"workers", 0}};
    struct gg_problem p = base_problem(opt, 1, lens2, offs2);
    const int64_t bad_workers[] = {0, -3, 65};
    for (int i = 0; i < 3; i++) {
        opt[0].value = bad_workers[i];
        expect_refused(kernel_named(KERNELS[0]), p, "workers");
        expect_accepted(kernel_named(KERNELS[1]), p, "ignores workers");
    }
    for (opt[0].value = 1; opt[0].value <= 64; opt[0].value *= 4)
        expect_accepted(kernel_named(KERNELS[0]), p, "workers in range");
}

/* Inconsistent problems are GG_E_INVAL with a message; unsupported ones GG_E_UNSUPPORTED. */
Test(kernels_cpu_fp8, run_rejects_inconsistent_problems)
{
    for (int kn = 0; kn < 2; kn++) {
        struct tcase t = {.kernel = KERNELS[kn], .a_dtype = GG_DTYPE_E4M3,
                          .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_BF16};
        struct tbuf b;
        char err[256];
        setup_and_expect_inconsistent_refused(&t, &b);
        b.p.a_dtype = b.p.b_dtype = GG_DTYPE_E5M2;
        cr_expect_eq(run_kernel(&b, err, sizeof err), GG_E_UNSUPPORTED);
        cr_expect_not_null(strstr(err, "e5m2 x e5m2"));
        b.p.a_dtype = b.p.b_dtype = GG_DTYPE_E4M3;

        struct gg_operands o = operands(&b);
        o.a_scale = NULL;
        cr_expect_eq(b.kern->run(&b.p, &o, err, sizeof err), GG_E_INVAL);
        cr_expect_not_null(strstr(err, "a_scale"), "%s", err);
        o.a_scale = &b.a_scale, o.b_scale = NULL;
        cr_expect_eq(b.kern->run(&b.p, &o, err, sizeof err), GG_E_INVAL);
        cr_expect_not_null(strstr(err, "b_scale"), "%s", err);

        cr_expect_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
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
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = GG_DTYPE_E4M3,
                              .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_F32, .split = 2,
                              .n = 40, .k = 70, .int_data = 1, .seed = 8};
            set_lens(&t, 3, (const int64_t[]){0, 66, 2});
            expect_device_offsets_read(&t);
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
                              .a_dtype = types[ti][0], .b_dtype = types[ti][1],
                              .c_dtype = GG_DTYPE_F32, .split = 1, .n = 20, .k = 30, .seed = 6};
            set_lens(&t, 1, (const int64_t[]){4});
            struct tbuf b;
            char err[256];
            setup(&t, &b, 0);
            b.a[0 * b.lda + 3] = codes[ti][0]; /* row 0: a NaN code of A */
            b.a[1 * b.lda + 5] = ti ? codes[ti][1] : 0x00; /* row 1: fnuz 240 */
            b.b[2 * b.ldb + 7] = ti ? codes[ti][2] : codes[ti][1]; /* column 2 */
            cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
            cr_expect(isnan(out_value(b.c, t.c_dtype, c_at(&t, &b, 0, 0, 0))), "row 0 not NaN");
            cr_expect(ti == 0 || isfinite(out_value(b.c, t.c_dtype, c_at(&t, &b, 0, 1, 0))),
                      "fnuz 0x7F must be finite");
            cr_expect_eq(check_output(&t, &b), 0, "%s types %d", KERNELS[kn], ti);
            teardown(&b);
        }
}

/* ---- mutants --------------------------------------------------------------------------- */

/* The OCP format of the same bit layout as fnuz dtype t (t itself when not fnuz). */
static enum gg_dtype ocp_of(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3FNUZ ? GG_DTYPE_E4M3 : t == GG_DTYPE_E5M2FNUZ ? GG_DTYPE_E5M2 : t;
}

/* How the kernel under mutant reads the operands of t: i32_group_base keeps the low 32 bits of
   an expert's base g·stride_b as a signed value, i32_byte_limit every byte offset modulo 2^32,
   fnuz_as_ocp reads fnuz codes as OCP. */
static struct read_model model_of(const struct tcase *t, const char *mutant)
{
    struct read_model m = {0};
    m.base_i32 = strcmp(mutant, "i32_group_base") == 0;
    m.offset_u32 = strcmp(mutant, "i32_byte_limit") == 0;
    if (strcmp(mutant, "fnuz_as_ocp") == 0) {
        m.a_as = ocp_of(t->a_dtype);
        m.b_as = ocp_of(t->b_dtype);
    }
    return m;
}

/* Counts the elements on which the correct reference is violated. */
static int64_t wrong_vs_correct(const struct tcase *t, const struct tbuf *b)
{
    return check_against(t, b, NULL, 0);
}

/* Counts the elements on which the model of mutant is violated. */
static int64_t wrong_vs_model(const struct tcase *t, const struct tbuf *b, const char *mutant)
{
    struct read_model m = model_of(t, mutant);
    return check_against(t, b, &m, 0);
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
            struct tcase t = {.kernel = KERNELS[kn], .op = ops[o], .a_dtype = GG_DTYPE_E5M2FNUZ,
                              .b_dtype = GG_DTYPE_E4M3FNUZ, .c_dtype = GG_DTYPE_F32, .split = 1 + o,
                              .n = 70, .k = 66, .seed = 12};
            set_lens(&t, 3, (const int64_t[]){33, 0, 65});
            struct tbuf good, bad;
            char err[256];
            setup(&t, &good, 0);
            strip_ocp_specials(good.a, good.a_len, t.a_dtype);
            strip_ocp_specials(good.b, good.b_len, t.b_dtype);
            struct tcase tm = t;
            tm.mutant = "fnuz_as_ocp";
            setup(&tm, &bad, 0);
            memcpy(bad.a, good.a, (size_t)good.a_len);
            memcpy(bad.b, good.b, (size_t)good.b_len);
            cr_assert_eq(run_kernel(&good, err, sizeof err), GG_OK, "%s", err);
            cr_assert_eq(run_kernel(&bad, err, sizeof err), GG_OK, "%s", err);
            cr_expect_eq(check_output(&t, &good), 0, "correct kernel fails");
            cr_expect_eq(wrong_vs_model(&tm, &bad, "fnuz_as_ocp"), 0,
                         "mutant does not read fnuz codes as OCP");
            int64_t not_quadrupled = 0, nonzero = 0;
            for (int64_t i = 0; i < good.c_len; i++) {
                double x = out_value(good.c, t.c_dtype, i), y = out_value(bad.c, t.c_dtype, i);
                if (is_sentinel(good.c, t.c_dtype, i))
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
    struct tcase t = {.kernel = KERNELS[0], .op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_E4M3FNUZ,
                      .b_dtype = GG_DTYPE_E4M3FNUZ, .c_dtype = GG_DTYPE_BF16, .split = 1, .n = 16,
                      .k = 16, .mutant = "fnuz_as_ocp", .seed = 13};
    set_lens(&t, 1, (const int64_t[]){2});
    struct tbuf b;
    char err[256];
    setup(&t, &b, 0);
    strip_ocp_specials(b.a, b.a_len, t.a_dtype);
    strip_ocp_specials(b.b, b.b_len, t.b_dtype);
    b.a[0 * b.lda + 1] = 0x80;
    b.a[1 * b.lda + 1] = 0x7F;
    cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    cr_expect(!isnan(out_value(b.c, t.c_dtype, c_at(&t, &b, 0, 0, 0))), "0x80 still NaN");
    cr_expect(isnan(out_value(b.c, t.c_dtype, c_at(&t, &b, 0, 1, 0))), "0x7F not read as NaN");
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
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(check_output(&t, &b), 0, "%s: correct kernel fails", t.kernel);
        fill_sentinel(b.c, t.c_dtype, b.c_len);
        b.p.mutant = mutant;
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(wrong_vs_model(&t, &b, mutant), 0, "%s: %s not as modelled", t.kernel,
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
        struct tcase t = {.op = ops[o], .a_dtype = GG_DTYPE_E4M3, .b_dtype = GG_DTYPE_E4M3,
                          .c_dtype = GG_DTYPE_BF16, .split = 1 + o, .n = 70, .k = 50,
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
        struct tcase t = {.op = ops[o], .a_dtype = GG_DTYPE_E5M2, .b_dtype = GG_DTYPE_E4M3,
                          .c_dtype = GG_DTYPE_F32, .split = 2 - o, .n = 100, .k = 40,
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
        cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
        int64_t wrong_left = 0, right_right = 0;
        for (int64_t i = 0; i < 7; i++)
            for (int64_t j = 0; j < t.n; j++) {
                double sum, sum_abs, out = out_value(b.c, t.c_dtype, c_at(&t, &b, 2, i, j));
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

/* e5m2_inf_as_max: the e5m2 infinities 0x7C/0xFC are read as ±57344. Row 0 of A holds +Inf and
   row 1 -Inf (A e5m2, B e4m3 without zeros): the correct kernel gives ±Inf there with the sign of
   each product, the mutant a finite value, and both agree on every other row; an e4m3 operand
   (whose 0x7C is the finite 288) is not touched. */
Test(kernels_cpu_fp8, mutant_e5m2_inf_as_max_reads_inf_as_max)
{
    for (int kn = 0; kn < 2; kn++) {
        struct tcase t = {.kernel = KERNELS[kn], .op = GG_OP_GROUPED_FWD,
                          .a_dtype = GG_DTYPE_E5M2, .b_dtype = GG_DTYPE_E4M3,
                          .c_dtype = GG_DTYPE_BF16, .split = 1, .n = 24, .k = 40, .seed = 16};
        set_lens(&t, 2, (const int64_t[]){3, 2});
        struct tbuf good, bad;
        char err[256];
        setup(&t, &good, 0);
        for (int64_t i = 0; i < good.b_len; i++)
            if ((good.b[i] & 0x7F) == 0) /* no zero weights: no Inf·0 */
                good.b[i] |= 0x38;
        good.a[0 * good.lda + 7] = 0x7C;
        good.a[1 * good.lda + 9] = 0xFC;
        struct tcase tm = t;
        tm.mutant = "e5m2_inf_as_max";
        setup(&tm, &bad, 0);
        memcpy(bad.a, good.a, (size_t)good.a_len);
        memcpy(bad.b, good.b, (size_t)good.b_len);
        cr_assert_eq(run_kernel(&good, err, sizeof err), GG_OK, "%s", err);
        cr_assert_eq(run_kernel(&bad, err, sizeof err), GG_OK, "%s", err);
        for (int64_t g = 0; g < 2; g++)
            for (int64_t r = 0; r < t.lens[g]; r++)
                for (int64_t j = 0; j < t.n; j++) {
                    double x = out_value(good.c, t.c_dtype, c_at(&t, &good, g, r, j));
                    double y = out_value(bad.c, t.c_dtype, c_at(&t, &bad, g, r, j));
                    if (g > 0 || r > 1) {
                        cr_expect(x == y && isfinite(x), "group %lld row %lld differs",
                                  (long long)g, (long long)r);
                        continue;
                    }
                    double w = gg_decode(GG_DTYPE_E4M3, good.b[j * good.ldb + (r ? 9 : 7)]);
                    cr_expect_eq(x, (r ? -w : w) > 0 ? INFINITY : -INFINITY, "row %lld",
                                 (long long)r);
                    cr_expect(isfinite(y), "%s: row %lld col %lld still infinite", KERNELS[kn],
                              (long long)r, (long long)j);
                }
        teardown(&good);
        teardown(&bad);
    }
    /* e4m3 0x7C (288) is finite for both */
    struct tcase t = {.kernel = KERNELS[1], .op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_E4M3,
                      .b_dtype = GG_DTYPE_E4M3, .c_dtype = GG_DTYPE_F32, .split = 1, .n = 8,
                      .k = 16, .mutant = "e5m2_inf_as_max", .seed = 17};
    set_lens(&t, 1, (const int64_t[]){2});
    struct tbuf b;
    char err[256];
    setup(&t, &b, 0);
    b.a[3] = 0x7C;
    cr_assert_eq(run_kernel(&b, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(check_output(&t, &b), 0);
    teardown(&b);
}

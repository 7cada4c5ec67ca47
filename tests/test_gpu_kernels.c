/*
 * test_gpu_kernels.c — the GPU kernels against the harness's oracles: every GPU kernel passes
 * case files of its family, agrees bitwise with its CPU twin on exactly representable data, and
 * every GPU mutant gives the class its corpus/mutants case expects while the same case passes on
 * the correct kernel. Skips when the build has no GPU kernels or the machine no device.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gpu_fixture.h"

#ifdef GG_HAVE_GPU_KERNELS

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/builtin/gg_builtin.h"
#include "fuzz/store/gg_store.h"

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s/%s.case", GG_SOURCE_DIR, dir, name);
}

/* The case passes on k (no mutant). */
static void expect_pass(const char *dir, const char *name, const struct gg_kernel *k)
{
    char path[512];
    path_of(path, sizeof path, dir, name);
    struct gpu_outcome o;
    gpu_run_case(path, k, "", &o);
    cr_expect_eq(o.v.cls, GG_CLASS_PASS, "%s on %s: %s (%s)", name, k->name,
                 gg_class_name(o.v.cls), o.v.detail);
    gpu_outcome_free(&o);
}

static const char *const bf16_seeds[] = {
    "fwd_basic",           "dgrad_basic",       "wgrad_basic",       "fwd_splitk",
    "fwd_empty_first",     "fwd_empty_last",    "fwd_all_empty",     "fwd_empty_every_other",
    "dgrad_empty_first_last", "wgrad_all_empty", "wgrad_empty_first_splitk",
    "wgrad_many_groups",   "fwd_ints_exact",    "fwd_weights_past_2_31",
};

static void bf16_family(const struct gg_kernel *k)
{
    gpu_require_device();
    for (size_t i = 0; i < sizeof bf16_seeds / sizeof bf16_seeds[0]; i++)
        expect_pass("corpus/seeds", bf16_seeds[i], k);
}

Test(gpu_kernels, bf16_persistent_passes_seeds)
{
    bf16_family(&gg_kernel_grouped_bf16_gpu_persistent);
}

Test(gpu_kernels, bf16_tiled_passes_seeds)
{
    bf16_family(&gg_kernel_grouped_bf16_gpu_tiled);
}

Test(gpu_kernels, bf16_streams_passes_seeds)
{
    bf16_family(&gg_kernel_grouped_bf16_gpu_streams);
}

Test(gpu_kernels, fp8_tiled_passes_seeds)
{
    gpu_require_device();
    const struct gg_kernel *k = &gg_kernel_grouped_fp8_gpu_tiled;
    expect_pass("corpus/seeds", "fp8_dgrad_fnuz", k);
    expect_pass("corpus/seeds", "fp8_wgrad_hybrid_splitk", k);
    /* The fp8 mutant cases without their mutant (fnuz fwd, huge sparse weights). */
    expect_pass("corpus/mutants", "fnuz_as_ocp", k);
    expect_pass("corpus/mutants", "i32_group_base", k);
    expect_pass("corpus/mutants", "i32_byte_limit", k);
    expect_pass("corpus/mutants", "e5m2_inf_as_max", k); /* Inf, NaN codes and -0 in W */
}

/* Small-integer data: every product and partial sum is exact, so the GPU tensor-core sums and
   the CPU twin's sums are the same numbers, bit for bit. */
static void same_as_cpu(const char *name, const struct gg_kernel *gpu, const struct gg_kernel *cpu)
{
    char path[512];
    path_of(path, sizeof path, "corpus/seeds", name);
    struct gpu_outcome o;
    gpu_run_case(path, gpu, "", &o);
    size_t bytes = 0;
    void *ref = cpu_run_output(path, cpu, &bytes);
    cr_assert_eq(bytes, o.c_bytes);
    cr_expect_eq(gg_oracle_first_diff(o.out, ref, bytes), -1, "%s and %s differ on %s",
                 gpu->name, cpu->name, name);
    free(ref);
    gpu_outcome_free(&o);
}

Test(gpu_kernels, bitwise_twins_on_exact_data)
{
    gpu_require_device();
    same_as_cpu("fwd_ints_exact", &gg_kernel_grouped_bf16_gpu_tiled,
                &gg_kernel_grouped_bf16_cpu_tiled);
    same_as_cpu("fwd_ints_exact", &gg_kernel_grouped_bf16_gpu_persistent,
                &gg_kernel_grouped_bf16_cpu_tiled);
    same_as_cpu("fwd_ints_exact", &gg_kernel_grouped_bf16_gpu_streams,
                &gg_kernel_grouped_bf16_cpu_streams);
}

/* The persistent wgmma kernel loads by TMA where tensor maps describe the operands, and by every
   thread's cp.async with GGFUZZ_GPU_TMA=0: on cases whose boxes reach past K, N, a group's rows and
   M (zeros from the copy engine, rows C does not take), both pass and agree bit for bit. */
static void loads_agree(const char *name, const struct gg_kernel *k)
{
    char path[512];
    snprintf(path, sizeof path, "%s/gpu/%s.case", GG_TEST_DATA, name);
    struct gpu_outcome tma, cp;
    gpu_run_case(path, k, "", &tma);
    setenv("GGFUZZ_GPU_TMA", "0", 1);
    gpu_run_case(path, k, "", &cp);
    unsetenv("GGFUZZ_GPU_TMA");
    cr_expect_eq(tma.v.cls, GG_CLASS_PASS, "%s on %s by TMA: %s (%s)", name, k->name,
                 gg_class_name(tma.v.cls), tma.v.detail);
    cr_expect_eq(cp.v.cls, GG_CLASS_PASS, "%s on %s by cp.async: %s (%s)", name, k->name,
                 gg_class_name(cp.v.cls), cp.v.detail);
    cr_assert_eq(tma.c_bytes, cp.c_bytes);
    cr_expect_eq(gg_oracle_first_diff(tma.out, cp.out, tma.c_bytes), -1,
                 "%s on %s: TMA and cp.async loads differ", name, k->name);
    gpu_outcome_free(&tma);
    gpu_outcome_free(&cp);
}

Test(gpu_kernels, tma_and_cp_async_loads_agree)
{
    gpu_require_device();
    loads_agree("tma_bf16_fwd_tails", &gg_kernel_grouped_bf16_gpu_persistent);
    loads_agree("tma_bf16_dgrad_tails", &gg_kernel_grouped_bf16_gpu_persistent);
    loads_agree("tma_bf16_wgrad_tails", &gg_kernel_grouped_bf16_gpu_persistent);
    loads_agree("tma_fp8_fwd_tails", &gg_kernel_grouped_fp8_gpu_tiled);
    loads_agree("tma_fp8_wgrad_tails", &gg_kernel_grouped_fp8_gpu_tiled);
}

/* The mutant's case gives the class it expects on k, and passes without the mutant. */
static void mutant_caught(const char *name, const struct gg_kernel *k)
{
    char path[512];
    path_of(path, sizeof path, "corpus/mutants", name);
    struct gpu_outcome o;
    gpu_run_case(path, k, NULL, &o);
    cr_expect(gg_expect_holds(o.expect, &o.v), "mutant %s on %s: expected %s, got %s (%s)", name,
              k->name, o.expect, gg_class_name(o.v.cls), o.v.detail);
    gpu_outcome_free(&o);
    gpu_run_case(path, k, "", &o);
    cr_expect_eq(o.v.cls, GG_CLASS_PASS, "%s without the mutant on %s: %s (%s)", name, k->name,
                 gg_class_name(o.v.cls), o.v.detail);
    gpu_outcome_free(&o);
}

static const char *const list_mutants[] = {"wgrad_zero_uninit", "workspace_underreport",
                                           "tail_rows_unwritten", "i32_cumulative_offset"};

Test(gpu_kernels, bf16_tiled_mutants_caught)
{
    gpu_require_device();
    for (size_t i = 0; i < sizeof list_mutants / sizeof list_mutants[0]; i++)
        mutant_caught(list_mutants[i], &gg_kernel_grouped_bf16_gpu_tiled);
}

Test(gpu_kernels, bf16_persistent_mutants_caught)
{
    gpu_require_device();
    for (size_t i = 0; i < sizeof list_mutants / sizeof list_mutants[0]; i++)
        mutant_caught(list_mutants[i], &gg_kernel_grouped_bf16_gpu_persistent);
}

/* A real missing barrier in the split-K handoff: a timing race, so the two runs differ. (Its own
   tests, so compute-sanitizer racecheck can be pointed at them alone.) */
static void fence_caught(const struct gg_kernel *k)
{
    char path[512];
    snprintf(path, sizeof path, "%s/gpu/missing_fence_64_tiles.case", GG_TEST_DATA);
    struct gpu_outcome o;
    gpu_run_case(path, k, NULL, &o);
    cr_expect(gg_expect_holds(o.expect, &o.v), "missing_fence on %s (64 tiles): expected %s, "
              "got %s (%s)", k->name, o.expect, gg_class_name(o.v.cls), o.v.detail);
    gpu_outcome_free(&o);
    /* The corpus case has two 128x128 tiles: the race is caught, but its class depends on how
       the two tiles' races went in each of the runner's three runs (the same way in the first
       and third run reads as workspace dependence, in all three as snr). */
    path_of(path, sizeof path, "corpus/mutants", "missing_fence");
    gpu_run_case(path, k, NULL, &o);
    cr_expect(o.v.cls == GG_CLASS_NONDETERMINISM || o.v.cls == GG_CLASS_WORKSPACE ||
                  o.v.cls == GG_CLASS_SNR,
              "missing_fence corpus case on %s: got %s (%s)", k->name, gg_class_name(o.v.cls),
              o.v.detail);
    gpu_outcome_free(&o);
    gpu_run_case(path, k, "", &o);
    cr_expect_eq(o.v.cls, GG_CLASS_PASS, "missing_fence case without the mutant on %s: %s",
                 k->name, o.v.detail);
    gpu_outcome_free(&o);
}

Test(gpu_kernels, missing_fence_tiled)
{
    gpu_require_device();
    fence_caught(&gg_kernel_grouped_bf16_gpu_tiled);
}

Test(gpu_kernels, missing_fence_persistent)
{
    gpu_require_device();
    fence_caught(&gg_kernel_grouped_bf16_gpu_persistent);
}

Test(gpu_kernels, bf16_streams_mutants_caught)
{
    gpu_require_device();
    mutant_caught("zero_len_ptr_skip", &gg_kernel_grouped_bf16_gpu_streams);
    mutant_caught("shared_workspace_parallel", &gg_kernel_grouped_bf16_gpu_streams);
}

Test(gpu_kernels, fp8_mutants_caught)
{
    gpu_require_device();
    mutant_caught("fnuz_as_ocp", &gg_kernel_grouped_fp8_gpu_tiled);
    mutant_caught("i32_group_base", &gg_kernel_grouped_fp8_gpu_tiled);
    mutant_caught("i32_byte_limit", &gg_kernel_grouped_fp8_gpu_tiled);
    mutant_caught("e5m2_inf_as_max", &gg_kernel_grouped_fp8_gpu_tiled);
}

Test(gpu_kernels, batched_pass_seeds)
{
    gpu_require_device();
    expect_pass("corpus/seeds", "batched_bf16_nk", &gg_kernel_batched_bf16_gpu_tiled);
    expect_pass("corpus/seeds", "batched_bf16_kn_bias", &gg_kernel_batched_bf16_gpu_tiled);
    expect_pass("corpus/seeds", "batched_a8w8", &gg_kernel_batched_a8w8_gpu_tiled);
}

Test(gpu_kernels, batched_n_tail_caught)
{
    gpu_require_device();
    mutant_caught("n_tail", &gg_kernel_batched_bf16_gpu_tiled);
}

Test(gpu_kernels, mx_mutants_caught)
{
    gpu_require_device();
    mutant_caught("mx_k_tail", &gg_kernel_mx_e4m3_gpu_grouped);
    mutant_caught("e8m0_special", &gg_kernel_mx_e4m3_gpu_gemv);
}

Test(gpu_kernels, moe_sorted_padding_caught)
{
    gpu_require_device();
    mutant_caught("sorted_ids_padding", &gg_kernel_moe_mx_e4m3_gpu_sorted);
}

/* Every GPU kernel is in the builtin table under its backend's name. */
Test(gpu_kernels, registered_with_backend_names)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    const struct gg_kernel *mine[] = {
        &gg_kernel_grouped_bf16_gpu_persistent, &gg_kernel_grouped_bf16_gpu_tiled,
        &gg_kernel_grouped_bf16_gpu_streams, &gg_kernel_grouped_fp8_gpu_tiled,
        &gg_kernel_batched_bf16_gpu_tiled,     &gg_kernel_batched_a8w8_gpu_tiled,
        &gg_kernel_mx_e4m3_gpu_grouped,        &gg_kernel_mx_e4m3_gpu_gemv,
        &gg_kernel_moe_mx_e4m3_gpu_sorted};
    for (size_t j = 0; j < sizeof mine / sizeof mine[0]; j++) {
        int found = 0;
        for (size_t i = 0; i < count; i++)
            found |= list[i] == mine[j];
        cr_expect(found, "%s not in the builtin table", mine[j]->name);
        cr_expect(strstr(mine[j]->name, "_cuda_") || strstr(mine[j]->name, "_hip_"),
                  "%s does not name its backend", mine[j]->name);
        cr_expect_neq(mine[j]->backend, GG_BACKEND_CPU);
    }
}

#else

Test(gpu_kernels, skipped_without_gpu_build)
{
    gpu_require_device();
}

#endif

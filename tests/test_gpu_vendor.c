/*
 * test_gpu_vendor.c — the cuBLAS and cuBLASLt adapters through gg_run_case: every case of the
 * test data and of the seed corpus that an adapter supports must pass (same oracles as every
 * kernel), refusals come with a reason, and each adapter passes at least a few cases of its
 * family, among them FP8 fwd, dgrad and wgrad cases written here for cuBLASLt's aligned layouts.
 * Skipped without a usable device or a build without the adapters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "case_files.h"
#include "fuzz/run/gg_run.h"
#include "fuzz/run/device/gg_device.h"

static void need_kernel(const char *name)
{
    gg_registry_init();
    if (!gg_registry_find(name))
        cr_skip_test("%s is not built (configure with -DGG_CUDA=ON)", name);
    struct gg_device *d;
    char err[512];
    if (gg_device_get(&d, err, sizeof err) != GG_OK)
        cr_skip_test("no usable GPU: %s", err);
}

/* Runs case c on kernel; returns 1 when it ran (and must pass), 0 when refused. */
static int run_on(const struct gg_case *c, const char *kernel, const char *what)
{
    struct gg_run_opts o = {.kernel = kernel, .mutant = "none"}; /* cases may name a mutant */
    struct gg_run_result r;
    char err[1024] = "";
    enum gg_status st = gg_run_case(c, &o, &r, err, sizeof err);
    if (st == GG_E_UNSUPPORTED) {
        cr_expect(err[0] != '\0', "%s: refusal without a reason", what);
        cr_log_info("%s refused: %s", what, err);
        /* What the library cannot do is for supports() to say, not a failed run. */
        cr_expect(strstr(err, " failed: ") == NULL, "%s: refused only at run time: %s", what, err);
        return 0;
    }
    cr_expect_eq(st, GG_OK, "%s on %s: %s", what, kernel, err);
    if (st == GG_OK)
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s on %s: %s (%s)", what, kernel,
                     r.verdict.signature, r.verdict.detail);
    gg_run_result_free(&r);
    return st == GG_OK;
}

/* Runs every case of dir on kernel; returns the number that ran. */
static int run_dir(const char *dir, const char *kernel)
{
    size_t n = 0;
    char **names = case_files(dir, &n);
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        char path[2048], err[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct gg_case c;
        cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
        ran += run_on(&c, kernel, names[i]);
        gg_case_free(&c);
    }
    case_files_free(names, n);
    return ran;
}

static int run_text(const char *text, const char *kernel)
{
    struct gg_case c;
    char err[1024];
    cr_assert_eq(gg_case_parse(text, strlen(text), "inline", &c, err, sizeof err), GG_OK, "%s",
                 err);
    int ran = run_on(&c, kernel, text);
    gg_case_free(&c);
    return ran;
}

static int run_family(const char *kernel)
{
    return run_dir(GG_TEST_DATA "/cases", kernel) + run_dir(GG_SOURCE_DIR "/corpus/seeds", kernel);
}

Test(gpu_vendor, cublas_grouped_passes_grouped_bf16_cases)
{
    const char *k = "grouped_bf16_cublas_grouped";
    need_kernel(k);
    int ran = run_family(k);
    /* fwd, dgrad, wgrad with empty groups, K = 0 wgrad groups and weights past 2^31 elements. */
    ran += run_text("ggfuzz-case 1\nop grouped_wgrad\nkernel x\ndtypes a=bf16 b=bf16 c=bf16\n"
                    "groups 5\ngroup_lens 0 33 0 1 70\nn 40\nk 24\nseed 0x77\n", k);
    cr_expect_geq(ran, 8, "only %d cases ran", ran);
}

Test(gpu_vendor, cublas_strided_passes_batched_bf16_cases)
{
    const char *k = "batched_bf16_cublas_strided";
    need_kernel(k);
    int ran = run_family(k);
    ran += run_text("ggfuzz-case 1\nop batched\nkernel x\ndtypes a=bf16 b=bf16 c=bf16\n"
                    "layout b=kn\nbatch 3\nm 33\nn 70\nk 129\nseed 0x78\n", k);
    ran += run_text("ggfuzz-case 1\nop batched\nkernel x\ndtypes a=bf16 b=bf16 c=f32\n"
                    "batch 2\nm 5\nn 64\nk 0\nseed 0x79\n", k);
    cr_expect_geq(ran, 3, "only %d cases ran", ran);
}

/* Runs the inline cases on kernel; returns the number that ran. */
static int run_texts(const char *const *cases, size_t n, const char *kernel)
{
    int ran = 0;
    for (size_t i = 0; i < n; i++)
        ran += run_text(cases[i], kernel);
    return ran;
}

Test(gpu_vendor, cublaslt_fp8_passes_tensor_scaled_forward_cases)
{
    const char *k = "grouped_fp8_cublaslt_tensor";
    need_kernel(k);
    int ran = run_family(k);
    static const char *const cases[] = {
        "ggfuzz-case 1\nop grouped_fwd\nkernel x\ndtypes a=e4m3 b=e4m3 c=bf16\nscaling tensor\n"
        "groups 4\ngroup_lens 64 0 17 100\nn 128\nk 256\nseed 0x80\n",
        "ggfuzz-case 1\nop grouped_fwd\nkernel x\ndtypes a=e5m2 b=e4m3 c=f32\nscaling tensor\n"
        "groups 3\ngroup_lens 1 0 45\nn 48\nk 96\nseed 0x81\n",
        "ggfuzz-case 1\nop grouped_fwd\nkernel x\ndtypes a=e4m3 b=e5m2 c=bf16\nscaling tensor\n"
        "groups 2\ngroup_lens 31 9\nn 16\nk 4112\nseed 0x82\n",
    };
    ran += run_texts(cases, sizeof cases / sizeof cases[0], k);
    cr_expect_geq(ran, 3, "only %d cases ran", ran);
    /* What cuBLASLt's FP8 path does not do is refused with a reason, not run. */
    cr_expect_eq(run_text("ggfuzz-case 1\nop grouped_dgrad\nkernel x\ndtypes a=e5m2 b=e5m2 "
                          "c=bf16\nscaling tensor\ngroups 1\ngroup_lens 16\nn 16\nk 16\n"
                          "seed 1\n", k),
                 0);
    cr_expect_eq(run_text("ggfuzz-case 1\nop grouped_wgrad\nkernel x\ndtypes a=e4m3 b=e4m3 "
                          "c=f32\nscaling tensor\ngroups 1\ngroup_lens 16\nn 16\nk 24\n"
                          "seed 2\n", k),
                 0);
}

/* dgrad and wgrad on the transposed copies: empty experts first, in the middle and last, token
   counts that are not multiples of 16 (wgrad pads its reduction with zeros), one token, and
   every output and input type pair cuBLASLt takes. */
Test(gpu_vendor, cublaslt_fp8_passes_tensor_scaled_dgrad_and_wgrad_cases)
{
    const char *k = "grouped_fp8_cublaslt_tensor";
    need_kernel(k);
    static const char *const cases[] = {
        "ggfuzz-case 1\nop grouped_dgrad\nkernel x\ndtypes a=e4m3 b=e4m3 c=bf16\n"
        "scaling tensor\ngroups 4\ngroup_lens 40 0 17 64\nn 64\nk 128\nseed 0x83\n",
        "ggfuzz-case 1\nop grouped_dgrad\nkernel x\ndtypes a=e5m2 b=e4m3 c=f32\n"
        "scaling tensor\ngroups 3\ngroup_lens 0 1 33\nn 48\nk 32\nseed 0x84\n",
        "ggfuzz-case 1\nop grouped_wgrad\nkernel x\ndtypes a=e4m3 b=e4m3 c=f32\n"
        "scaling tensor\ngroups 4\ngroup_lens 33 0 16 7\nn 64\nk 48\nseed 0x85\n",
        "ggfuzz-case 1\nop grouped_wgrad\nkernel x\ndtypes a=e5m2 b=e4m3 c=bf16\n"
        "scaling tensor\ngroups 3\ngroup_lens 100 1 0\nn 32\nk 128\nseed 0x86\n",
    };
    int n = (int)(sizeof cases / sizeof cases[0]);
    int ran = run_texts(cases, (size_t)n, k);
    cr_expect_eq(ran, n, "only %d of %d dgrad/wgrad cases ran", ran, n);
}

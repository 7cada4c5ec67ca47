/*
 * test_fuzz_device_absent.c — kernels whose backend needs a device that is not here: the
 * presence query says why (the build has no GPU support, or the runtime found no device), and
 * the self-test refuses such a kernel when it is named instead of reporting its mutants missed.
 * Where the device is present the tests that need its absence skip themselves.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/gg_fuzz.h"
#include "fuzz/gpu/gg_device.h"

static char err[2048];

static int any_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    (void)p, (void)why, (void)why_len;
    return 1;
}

static enum gg_status never_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *msg, size_t msg_len)
{
    (void)p, (void)o;
    snprintf(msg, msg_len, "a kernel whose device is absent never runs");
    return GG_E_INTERNAL;
}

static const char *const mutants[] = {"missing_fence", NULL};

static const struct gg_kernel cuda_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION, .name = "grouped_bf16_cuda_absent",
    .backend = GG_BACKEND_CUDA, .ops = GG_OP_BIT(GG_OP_GROUPED_FWD), .mutants = mutants,
    .supports = any_supports, .run = never_run};

Test(device_absent, cpu_kernels_need_no_device)
{
    char why[512] = "";
    cr_expect_eq(gg_device_present(GG_BACKEND_CPU, why, sizeof why), 1);
    cr_expect_str_empty(why);
}

Test(device_absent, the_reason_names_the_build_or_the_runtime)
{
    char why[512] = "";
    if (gg_device_present(GG_BACKEND_CUDA, why, sizeof why))
        cr_skip_test("a CUDA device is present");
    if (gg_device_built())
        cr_expect(strncmp(why, "no CUDA device (cudaGetDeviceCount", 34) == 0, "%s", why);
    else
        cr_expect(strstr(why, "built without GPU support") != NULL, "%s", why);
    why[0] = '\0';
    cr_expect_eq(gg_device_present(GG_BACKEND_HIP, why, sizeof why), 0, "no build drives HIP");
    cr_expect(why[0] != '\0');
}

Test(device_absent, selftest_refuses_a_named_kernel_it_cannot_run)
{
    char why[512];
    if (gg_device_present(GG_BACKEND_CUDA, why, sizeof why))
        cr_skip_test("a CUDA device is present");
    gg_registry_init();
    cr_assert_eq(gg_registry_add(&cuda_kernel, err, sizeof err), GG_OK, "%s", err);
    struct gg_selftest_config cfg = {.kernel = cuda_kernel.name, .runs_per_mutant = 1,
                                     .workers = 1, .seed = 1};
    struct gg_selftest_result res;
    cr_expect_eq(gg_selftest_run(&cfg, &res, err, sizeof err), GG_E_UNSUPPORTED, "%s", err);
    cr_expect(strstr(err, "kernel grouped_bf16_cuda_absent cannot run here: ") == err, "%s", err);
    cr_expect(strstr(err, why) != NULL, "'%s' lacks '%s'", err, why);
    cr_expect_eq(res.mutants + res.kernels, 0, "nothing ran");
}

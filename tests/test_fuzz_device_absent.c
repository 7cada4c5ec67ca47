/*
 * test_fuzz_device_absent.c — kernels whose backend needs a device that is not here: the
 * presence query says why (the build has no GPU support, or the runtime found no device), and
 * the self-test refuses such a kernel when it is named instead of reporting its mutants missed.
 * Where the device is present the tests that need its absence skip themselves.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/campaign/gg_campaign.h"
#include "fuzz/run/device/gg_device.h"

static char err[2048];

/* The vendor this build drives (a CPU-only build counts as CUDA's for the messages) and the
   other one, which no build drives at the same time. */
#ifdef GG_GPU_HIP
#define OWN GG_BACKEND_HIP
#define OTHER GG_BACKEND_CUDA
#define NO_DEVICE "no HIP device (hipGetDeviceCount"
#else
#define OWN GG_BACKEND_CUDA
#define OTHER GG_BACKEND_HIP
#define NO_DEVICE "no CUDA device (cudaGetDeviceCount"
#endif

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

static const struct gg_kernel gpu_kernel = {
    .abi_version = GG_KERNEL_ABI_VERSION, .name = "grouped_bf16_gpu_absent",
    .backend = OWN, .ops = GG_OP_BIT(GG_OP_GROUPED_FWD), .mutants = mutants,
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
    if (gg_device_present(OWN, why, sizeof why))
        cr_skip_test("a device is present");
    if (gg_device_built())
        cr_expect(strncmp(why, NO_DEVICE, strlen(NO_DEVICE)) == 0, "%s", why);
    else
        cr_expect(strstr(why, "built without GPU support") != NULL, "%s", why);
    why[0] = '\0';
    cr_expect_eq(gg_device_present(OTHER, why, sizeof why), 0, "a build drives one vendor");
    cr_expect(why[0] != '\0');
}

Test(device_absent, selftest_refuses_a_named_kernel_it_cannot_run)
{
    char why[512];
    if (gg_device_present(OWN, why, sizeof why))
        cr_skip_test("a device is present");
    gg_registry_init();
    cr_assert_eq(gg_registry_add(&gpu_kernel, err, sizeof err), GG_OK, "%s", err);
    struct gg_selftest_config cfg = {.kernel = gpu_kernel.name, .runs_per_mutant = 1,
                                     .workers = 1, .seed = 1};
    struct gg_selftest_result res;
    cr_expect_eq(gg_selftest_run(&cfg, &res, err, sizeof err), GG_E_UNSUPPORTED, "%s", err);
    cr_expect(strstr(err, "kernel grouped_bf16_gpu_absent cannot run here: ") == err, "%s", err);
    cr_expect(strstr(err, why) != NULL, "'%s' lacks '%s'", err, why);
    cr_expect_eq(res.mutants + res.kernels, 0, "nothing ran");
}

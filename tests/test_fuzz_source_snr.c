/*
 * test_fuzz_source_snr.c — the SNR against the unquantised source blames a kernel only for what
 * it loses beyond the recipe: an exact kernel on fp8 inputs (the test plugin fp8_exact.so) passes
 * a case whose recipe quantises the weights to zeros, with an advisory that names the recipe's
 * loss, and the same kernel made lossy is still flagged on unscaled and tensor-scaled e4m3.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"

#define KERNEL "grouped_fp8_plugin_exact"

static void setup(void)
{
    char err[1024];
    gg_registry_init();
    if (!gg_registry_find(KERNEL))
        cr_assert_eq(gg_plugin_load(GG_FP8_EXACT_PLUGIN, err, sizeof err), GG_OK, "%s", err);
}

TestSuite(source_snr, .init = setup);

/* Runs c with mutant; r is the caller's to free. */
static void run(struct gg_case *c, const char *mutant, struct gg_run_result *r)
{
    char err[1024];
    struct gg_run_opts o = {.mutant = mutant};
    cr_assert_eq(gg_run_case(c, &o, r, err, sizeof err), GG_OK, "%s", err);
}

/* B = normal(0, 1e-9) quantised to e4m3 without a scale is all zeros: the exact reference is 0,
   0 dB against the source, and so is every correct kernel. */
Test(source_snr, a_recipe_that_loses_the_data_is_an_advisory_not_a_fault)
{
    struct gg_case c;
    char err[1024];
    cr_assert_eq(gg_case_load(GG_TEST_DATA "/cases/grouped_fwd_e4m3_unscaled_underflow.case", &c,
                              err, sizeof err),
                 GG_OK, "%s", err);
    struct gg_run_result r;
    run(&c, "none", &r);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s: %s", r.verdict.signature, r.verdict.detail);
    cr_expect_lt(r.cmp.src_snr_db, 25.0);
    cr_expect_eq(r.cmp.src_snr_db, r.cmp.ref_src_snr_db);
    cr_expect(strstr(r.verdict.advisory, "the recipe's own loss") != NULL, "advisory '%s'",
              r.verdict.advisory);
    for (int64_t g = 0; g < r.cmp.n_groups; g++)
        cr_expect(isinf(r.cmp.groups[g].snr_db), "group %lld is exact", (long long)g);
    gg_run_result_free(&r);
    gg_case_free(&c);
}

Test(source_snr, a_kernel_that_loses_accuracy_is_still_flagged)
{
    static const char *const scaling[] = {"none", "tensor"};
    for (size_t i = 0; i < 2; i++) {
        char text[512], err[1024];
        snprintf(text, sizeof text,
                 "ggfuzz-case 1\nop grouped_fwd\nkernel " KERNEL "\ndtypes a=e4m3 b=e4m3 c=bf16\n"
                 "scaling %s\ngroups 3\ngroup_lens 64 40 70\nn 64\nk 256\n"
                 "data a=normal(0,1) b=normal(0,%s)\nseed 7\n",
                 scaling[i], i ? "0.01" : "1");
        struct gg_case c;
        cr_assert_eq(gg_case_parse(text, strlen(text), "test", &c, err, sizeof err), GG_OK, "%s",
                     err);
        struct gg_run_result r;
        run(&c, "none", &r);
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "scaling %s: %s", scaling[i], r.verdict.detail);
        cr_expect_str_eq(r.verdict.advisory, "", "scaling %s", scaling[i]);
        cr_expect_gt(r.cmp.src_snr_db, 25.0, "scaling %s", scaling[i]);
        gg_run_result_free(&r);
        run(&c, "drop_mantissa", &r);
        cr_expect_eq(r.verdict.cls, GG_CLASS_SNR, "scaling %s: %s", scaling[i], r.verdict.detail);
        cr_expect_lt(r.cmp.src_snr_db, r.cmp.ref_src_snr_db - 1.0, "scaling %s", scaling[i]);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
}

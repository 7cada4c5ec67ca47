/*
 * test_fuzz_layout_mutants.c — the mutants that are wrong only for a layout away from packed
 * (ldb_packed, stride_a_packed, wgrad_ldc_packed, b_align16): each one's case in corpus/mutants
 * gives its expected fault, the correct kernel passes the same case, and the mutant passes it
 * with the layout packed; and the correct CPU kernels pass generated cases whose leading
 * dimensions, strides and offsets are away from packed.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/store/gg_store.h"

static void setup(void)
{
    gg_registry_init();
}

TestSuite(fuzz_layout_mutants, .init = setup, .timeout = 300);

static struct gg_run_result run(const struct gg_case *c, const char *what)
{
    struct gg_run_result r;
    struct gg_run_opts o = {.certify_samples = 16};
    char err[512];
    cr_assert_eq(gg_run_case_isolated(c, &o, 120, &r, err, sizeof err), GG_OK, "%s: %s", what,
                 err);
    return r;
}

Test(fuzz_layout_mutants, each_case_catches_its_mutant_and_only_off_packed)
{
    static const char *const names[] = {"ldb_packed", "stride_a_packed", "wgrad_ldc_packed",
                                        "b_align16"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512], err[512];
        snprintf(path, sizeof path, "%s/corpus/mutants/%s.case", GG_SOURCE_DIR, names[i]);
        struct gg_case c;
        cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
        cr_expect_str_eq(c.mutant, names[i]);
        const struct gg_kernel *k = gg_registry_find(c.kernel);
        cr_assert_not_null(k, "%s", c.kernel);
        int listed = 0;
        for (const char *const *m = k->mutants; m && *m; m++)
            listed |= strcmp(*m, names[i]) == 0;
        cr_expect(listed, "%s is not a mutant of %s", names[i], c.kernel);
        /* The layout the case moves away from packed. */
        unsigned edges[GG_FREEDOMS_MAX], away = 0;
        cr_assert_eq(gg_freedoms_of_case(&c, edges), 0);
        for (int f = 0; f < gg_n_freedoms; f++)
            away |= edges[f] & ~GG_EDGE_BIT(GG_EDGE_PACKED) & GG_EDGES_LAYOUT;
        cr_expect_neq(away, 0u, "%s: every layout packed", names[i]);
        struct gg_run_result r = run(&c, names[i]);
        const char *expect = gg_case_meta(&c, "expect");
        cr_expect(expect && r.verdict.cls != GG_CLASS_PASS && gg_expect_holds(expect, &r.verdict),
                  "%s: expected %s, got %s", names[i], expect ? expect : "-",
                  r.verdict.signature);
        gg_run_result_free(&r);
        /* The correct kernel passes the same case. */
        c.mutant[0] = '\0';
        r = run(&c, names[i]);
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s without the mutant: %s", names[i],
                     r.verdict.signature);
        gg_run_result_free(&r);
        /* The mutant passes it packed. */
        snprintf(c.mutant, sizeof c.mutant, "%s", names[i]);
        c.lda = c.ldb = c.ldc = c.stride_a = c.stride_b = c.stride_c = 0;
        c.off_a = c.off_b = c.off_c = 0;
        r = run(&c, names[i]);
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s packed: %s", names[i],
                     r.verdict.signature);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
}

/* Generated cases of every correct CPU kernel with some layout away from packed pass: the
   kernels and the reference follow leading dimensions, strides and offsets. */
Test(fuzz_layout_mutants, correct_cpu_kernels_pass_cases_off_packed)
{
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (k->backend != GG_BACKEND_CPU || strstr(k->name, "_cpu_") == NULL)
            continue;
        struct gg_gen_config cfg = {.kernel = k, .faults = GG_FAULTS_SNR | GG_FAULTS_ZERO,
                                    .max_host_bytes = (int64_t)1 << 30};
        struct gg_gen_caps *caps;
        char err[512];
        cr_assert_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_OK, "%s", err);
        cfg.caps = caps;
        int ran = 0;
        for (uint64_t n = 0; n < 200 && ran < 4; n++) {
            struct gg_case c;
            cr_assert_eq(gg_generate(&cfg, 31, n, &c, err, sizeof err), GG_OK, "%s", err);
            int away = c.lda || c.ldb || c.ldc || c.stride_a || c.stride_b || c.stride_c ||
                       c.off_a || c.off_b || c.off_c;
            if (away) {
                struct gg_run_result r = run(&c, k->name);
                char *text = NULL;
                gg_case_format(&c, 0, &text);
                cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s: %s\n%s", k->name,
                             r.verdict.signature, text ? text : "");
                free(text);
                gg_run_result_free(&r);
                ran++;
            }
            gg_case_free(&c);
        }
        cr_expect_eq(ran, 4, "%s: %d cases off packed", k->name, ran);
        gg_gen_caps_free(caps);
    }
}

/*
 * test_corpus_replay.c — every committed regression case (corpus/seeds and corpus/mutants) parses,
 * runs (each in a child process), and reproduces its stored expectation, and its id is unique among them. The SNR suite's
 * cases (corpus/suite) run through `ggfuzz suite` in the suite tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/store/gg_store.h"

Test(corpus, every_case_reproduces_its_expectation, .timeout = 300)
{
    char **files, **mutants, err[1024];
    size_t n, n_mutants;
    cr_assert_eq(gg_corpus_list(GG_SOURCE_DIR "/corpus/seeds", &files, &n, NULL, NULL, err,
                                sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_corpus_list(GG_SOURCE_DIR "/corpus/mutants", &mutants, &n_mutants, NULL, NULL,
                                err, sizeof err), GG_OK, "%s", err);
    files = realloc(files, (n + n_mutants) * sizeof *files);
    cr_assert_not_null(files);
    memcpy(files + n, mutants, n_mutants * sizeof *mutants);
    n += n_mutants;
    free(mutants); /* the strings now belong to files */
    cr_assert_geq(n, 10, "the corpus should hold the seed cases");
    char (*ids)[GG_CASE_ID_HEX + 1] = calloc(n, sizeof *ids);
    cr_assert_not_null(ids);
    for (size_t i = 0; i < n; i++) {
        struct gg_case c;
        cr_assert_eq(gg_case_load(files[i], &c, err, sizeof err), GG_OK, "%s", err);
        gg_case_id(&c, ids[i]);
        for (size_t j = 0; j < i; j++)
            cr_expect_str_neq(ids[i], ids[j], "%s duplicates %s", files[i], files[j]);
        struct gg_run_result r;
        struct gg_run_opts o = {.certify_samples = 64};
        /* In a child process: a case may expect a crash (read_past_end). */
        cr_assert_eq(gg_run_case_isolated(&c, &o, 120, &r, err, sizeof err), GG_OK, "%s: %s",
                     files[i], err);
        const char *expect = gg_case_meta(&c, "expect");
        cr_expect(gg_expect_holds(expect, &r.verdict), "%s: expected %s, got %s (%s)", files[i],
                  expect ? expect : "class=pass", r.verdict.signature, r.verdict.detail);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
    free(ids);
    gg_corpus_list_free(files, n);
}

/*
 * test_corpus_replay.c — every committed case in corpus/ parses, runs, and reproduces its stored
 * expectation; its canonical text round-trips; and its id is unique across the corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/gg_fuzz.h"

Test(corpus, every_case_reproduces_its_expectation, .timeout = 300)
{
    char **files, err[1024];
    size_t n;
    cr_assert_eq(gg_corpus_list(GG_SOURCE_DIR "/corpus", &files, &n, err, sizeof err), GG_OK, "%s", err);
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
        cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s: %s", files[i], err);
        const char *expect = gg_case_meta(&c, "expect");
        cr_expect(gg_expect_holds(expect, &r.verdict), "%s: expected %s, got %s (%s)", files[i],
                  expect ? expect : "class=pass", r.verdict.signature, r.verdict.detail);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
    free(ids);
    gg_corpus_list_free(files, n);
}

/*
 * fuzz_case_parse.c — libFuzzer harness of the case-file parser (gg_case_parse). Any input is
 * either refused with a message, or parses to a case whose canonical text (gg_case_format, with
 * metadata) parses again to the same text and the same id, and whose host-memory estimate
 * (gg_case_mem_estimate) is not negative. A broken rule aborts, which libFuzzer reports as a
 * crash and saves the input; the sanitizers and libFuzzer's -malloc_limit_mb / -rss_limit_mb catch
 * memory errors and unbounded allocations. docs/testing.md, "The case-parser fuzzer", says how to
 * run it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/gg_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *rule, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_case_parse: %s\n", rule);
    if (a)
        fprintf(stderr, "--- first:\n%s\n", a);
    if (b)
        fprintf(stderr, "--- second:\n%s\n", b);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gg_case c, again;
    char err[1024] = "";
    if (gg_case_parse((const char *)data, size, "input", &c, err, sizeof err) != GG_OK) {
        if (!err[0])
            broken("a refused input has no message", NULL, NULL);
        return 0;
    }
    char *text = NULL, *text2 = NULL;
    if (gg_case_format(&c, 1, &text) != GG_OK)
        broken("a parsed case cannot be printed", NULL, NULL);
    if (gg_case_parse(text, strlen(text), "canonical", &again, err, sizeof err) != GG_OK)
        broken("the canonical text of a parsed case is refused", text, err);
    if (gg_case_format(&again, 1, &text2) != GG_OK)
        broken("a re-parsed case cannot be printed", text, NULL);
    if (strcmp(text, text2) != 0)
        broken("printing, parsing and printing again changes the text", text, text2);
    char id[GG_CASE_ID_HEX + 1], id2[GG_CASE_ID_HEX + 1];
    gg_case_id(&c, id);
    gg_case_id(&again, id2);
    if (strcmp(id, id2) != 0)
        broken("the id changes when the canonical text is parsed again", id, id2);
    if (gg_case_mem_estimate(&c) < 0)
        broken("the memory estimate is negative", text, NULL);
    free(text);
    free(text2);
    gg_case_free(&again);
    gg_case_free(&c);
    return 0;
}

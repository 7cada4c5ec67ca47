/*
 * test_fuzz_case_malformed.c — malformed case files are refused with "PATH:LINE: message", LINE
 * the line at fault. Each file in data/malformed states its expectation on its first line
 * ("# expect LINE SUBSTRING"), except files whose first line is the fault itself (headers,
 * binary data), listed in a table here. A fuzz-style test truncates and corrupts a valid case
 * at every byte: the parser never crashes and always answers with a located message.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_files.h"
#include "fuzz/case/gg_case.h"

#define MALFORMED GG_TEST_DATA "/malformed"

/* Files that cannot carry an "# expect" comment. */
static const struct {
    const char *file;
    int line;
    const char *message;
} TABLE[] = {
    {"empty.case", 1, "not a ggfuzz case (expected 'ggfuzz-case 1')"},
    {"comments_only.case", 1, "not a ggfuzz case (expected 'ggfuzz-case 1')"},
    {"wrong_header.case", 1, "not a ggfuzz case (expected 'ggfuzz-case 1')"},
    {"no_header.case", 1, "not a ggfuzz case (expected 'ggfuzz-case 1')"},
    {"future_version.case", 1, "case format version 2 is newer than this ggfuzz (1)"},
    {"binary_nul.case", 3, "binary or non-ASCII data"},
    {"binary_junk.case", 1, "binary or non-ASCII data"},
};

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Expected line and message substring of a file: its "# expect" line, else the table. */
static void expectation(const char *file, const char *text, int *line, char *sub, size_t sub_len)
{
    int consumed = 0;
    if (sscanf(text, "# expect %d %n", line, &consumed) == 1 && consumed > 0) {
        const char *s = text + consumed, *e = strchr(s, '\n');
        cr_assert_not_null(e);
        snprintf(sub, sub_len, "%.*s", (int)(e - s), s);
        return;
    }
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (strcmp(TABLE[i].file, file) == 0) {
            *line = TABLE[i].line;
            snprintf(sub, sub_len, "%s", TABLE[i].message);
            return;
        }
    cr_assert_fail("%s has no expectation", file);
}

/* The message is "name:LINE: ..." with a positive LINE; returns LINE. */
static int located_line(const char *msg, const char *name)
{
    size_t n = strlen(name);
    cr_assert_eq(strncmp(msg, name, n), 0, "'%s' does not start with '%s'", msg, name);
    cr_assert_eq(msg[n], ':', "%s", msg);
    char *end;
    long line = strtol(msg + n + 1, &end, 10);
    cr_assert(end > msg + n + 1 && *end == ':' && end[1] == ' ', "%s", msg);
    cr_assert_gt(line, 0, "%s", msg);
    return (int)line;
}

Test(fuzz_case_malformed, every_file_is_refused_at_its_line)
{
    size_t files;
    char **names = case_files(MALFORMED, &files);
    cr_assert_geq(files, 70);
    for (size_t i = 0; i < files; i++) {
        const char *name = names[i];
        char path[1024], sub[256], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", MALFORMED, name);
        size_t len;
        char *text = read_file(path, &len);
        int line;
        expectation(name, text, &line, sub, sizeof sub);
        free(text);

        struct gg_case c;
        enum gg_status st = gg_case_load(path, &c, err, sizeof err);
        cr_assert(st == GG_E_PARSE || st == GG_E_INVAL, "%s: status %d (%s)", name, st, err);
        cr_assert_eq(located_line(err, path), line, "%s: %s", name, err);
        cr_assert_not_null(strstr(err, sub), "%s: '%s' lacks '%s'", name, err, sub);
        cr_assert_null(c.items);
        cr_assert_null(c.meta);
        cr_assert_null(c.lens);
        gg_case_free(&c);
    }
    case_files_free(names, files);
}

Test(fuzz_case_malformed, line_longer_than_64_kib)
{
    const char *head = "ggfuzz-case 1\nop dense\n# ";
    size_t hl = strlen(head), n = hl + 70000;
    char *text = malloc(n);
    memcpy(text, head, hl);
    memset(text + hl, 'x', n - hl);
    struct gg_case c;
    char err[256];
    cr_assert_eq(gg_case_parse(text, n, "long", &c, err, sizeof err), GG_E_PARSE);
    cr_assert_str_eq(err, "long:3: line longer than 65536 bytes");
    free(text);
}

Test(fuzz_case_malformed, text_need_not_be_nul_terminated)
{
    /* "n 25" followed by a digit outside len: the parser must read "n 25" only. */
    const char *full = "ggfuzz-case 1\nop dense\nkernel x\ndtypes a=bf16 b=bf16 c=f32\n"
                       "m 1\nk 8\nseed 1\nn 257";
    size_t len = strlen(full) - 1;
    char *text = malloc(len);
    memcpy(text, full, len);
    struct gg_case c;
    char err[256] = "";
    cr_assert_eq(gg_case_parse(text, len, "t", &c, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(c.n, 25);
    gg_case_free(&c);
    free(text);
}

/* Parses len bytes copied to an exact-size buffer; success, or a located message. */
static void parse_never_crashes(const char *text, size_t len)
{
    char *buf = malloc(len ? len : 1);
    memcpy(buf, text, len);
    struct gg_case c;
    char err[512] = "";
    enum gg_status st = gg_case_parse(buf, len, "fuzz", &c, err, sizeof err);
    if (st == GG_OK) {
        cr_assert_eq(gg_case_check(&c, NULL, 0), GG_OK);
        char *t = NULL;
        cr_assert_eq(gg_case_format(&c, 1, &t), GG_OK);
        struct gg_case back;
        cr_assert_eq(gg_case_parse(t, strlen(t), "again", &back, err, sizeof err), GG_OK, "%s",
                     err);
        char *t2 = NULL;
        cr_assert_eq(gg_case_format(&back, 1, &t2), GG_OK);
        cr_assert_str_eq(t, t2);
        free(t);
        free(t2);
        gg_case_free(&back);
    } else {
        cr_assert(st == GG_E_PARSE || st == GG_E_INVAL, "status %d", st);
        located_line(err, "fuzz");
        cr_assert_null(c.items);
        cr_assert_null(c.meta);
    }
    gg_case_free(&c);
    free(buf);
}

/* Every prefix of valid, and valid with each byte replaced by each of a few values. */
static void truncate_and_flip(const char *valid)
{
    size_t len = strlen(valid);
    for (size_t cut = 0; cut <= len; cut++)
        parse_never_crashes(valid, cut);
    static const unsigned char values[] = {0x00, '\n', ' ', '9', '-', '#', '@', '=', '*', 0x80,
                                           0xff};
    char *copy = malloc(len);
    for (size_t i = 0; i < len; i++)
        for (size_t v = 0; v < sizeof values; v++) {
            memcpy(copy, valid, len);
            copy[i] = (char)values[v];
            parse_never_crashes(copy, len);
        }
    free(copy);
}

Test(fuzz_case_malformed, truncation_and_byte_flips_never_crash)
{
    truncate_and_flip("ggfuzz-case 1\n"
                      "op grouped_fwd\n"
                      "kernel grouped_bf16_cpu_tiled\n"
                      "options split_k=2 streams=3\n"
                      "mutant m\n"
                      "dtypes a=e4m3 b=e5m2 c=bf16 acc=f64\n"
                      "scaling mx rule=floor sat=none\n"
                      "groups 7\n"
                      "group_lens 0 128 0*3 rand(0,64)*2\n"
                      "n 256\n"
                      "k 512\n"
                      "ld a=600 c=300\n"
                      "stride b=200000\n"
                      "offset a=1 b=2 c=3\n"
                      "data a=normal(0,1) b=outliers(1,0.001,100)\n"
                      "plant e8m0=0.01\n"
                      "seed 0x5f3759df\n"
                      "@expect class=snr\n"
                      "@note caf\xc3\xa9\n");
}

Test(fuzz_case_malformed, moe_and_bias_truncation_and_byte_flips_never_crash)
{
    truncate_and_flip("ggfuzz-case 1\n"
                      "op moe_sorted\n"
                      "kernel moe_fp8_cpu_ref\n"
                      "dtypes a=e4m3 b=e4m3 c=bf16\n"
                      "scaling block128 sat=none\n"
                      "bias bf16\n"
                      "groups 4\n"
                      "group_lens 9 0*2 3\n"
                      "m 4\n"
                      "topk 3\n"
                      "block_m 16\n"
                      "n 32\n"
                      "k 160\n"
                      "ld c=40\n"
                      "data a=normal(0,1) b=ints(3) bias=uniform(-1,1)\n"
                      "seed 0x11\n");
}

/*
 * test_cli_freedoms.c — a campaign's coverage of the kernel ABI's freedoms as a user sees it:
 * fuzzer_stats' freedoms_exercised and one freedom_<op>_<field> line per freedom of the
 * kernel's ops, counting each case that ran once per freedom in one value class; the log's
 * final freedoms line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#include "fuzz/gen/gg_gen.h"
#include "fuzz/store/gg_store.h"

TestSuite(cli_freedoms, .timeout = 300);

static char out[1 << 17];

/* The cells of fuzzer_stats key in s; fails when the line is missing or malformed. */
static void cells_of(const struct gg_fuzzer_stats *s, const char *key, int64_t *cells)
{
    const char *v = gg_fuzzer_stats_get(s, key);
    cr_assert_not_null(v, "no %s in fuzzer_stats", key);
    cr_assert_eq(gg_freedom_cells_parse(v, cells), 0, "%s: %s", key, v);
}

Test(cli_freedoms, fuzzer_stats_and_the_log_count_the_classes_the_cases_ran)
{
    char dir[64], err[512], path[256];
    cli_temp_dir(dir, sizeof dir, "freedoms");
    int code = cli_ggfuzz_in(dir, "fuzz corpus --kernel grouped_bf16_cpu_tiled --runs 400 "
                             "--workers 2 --seed 7 --no-minimize", out, sizeof out);
    cr_assert_eq(code, 0, "%s", out);
    const char *line = strstr(out, "INFO: freedoms: ");
    cr_assert_not_null(line, "%s", out);
    int x = 0, y = 0;
    cr_expect_eq(sscanf(line, "INFO: freedoms: %d of %d exercised", &x, &y), 2, "%s", line);
    cr_expect(x > 0 && x <= y, "%d of %d", x, y);
    snprintf(path, sizeof path, "%s/ggfuzz-out/fuzzer_stats", dir);
    struct gg_fuzzer_stats s;
    cr_assert_eq(gg_fuzzer_stats_read(path, &s, err, sizeof err), GG_OK, "%s", err);
    const char *ex = gg_fuzzer_stats_get(&s, "freedoms_exercised");
    cr_assert_not_null(ex);
    int sx = 0, sy = 0;
    cr_expect_eq(sscanf(ex, "%d/%d", &sx, &sy), 2, "%s", ex);
    cr_expect(sx == x && sy == y, "fuzzer_stats %s, log %d of %d", ex, x, y);
    cr_expect_not_null(gg_fuzzer_stats_get(&s, "freedoms_refused"));
    /* Only the kernel's ops have lines; every case that ran counts once per op's freedom in
       one value class (huge alone besides: an i64 case whose ld reaches 2^31). */
    cr_expect_null(gg_fuzzer_stats_get(&s, "freedom_batched_lda"));
    cr_expect_null(gg_fuzzer_stats_get(&s, "freedom_dense_off_a"));
    long long execs = atoll(gg_fuzzer_stats_get(&s, "execs_done"));
    static const char *const ops[] = {"grouped_fwd", "grouped_dgrad", "grouped_wgrad"};
    int64_t counted = 0, away = 0;
    for (int o = 0; o < 3; o++) {
        char key[64];
        int64_t cells[GG_EDGE_COUNT];
        snprintf(key, sizeof key, "freedom_%s_lda", ops[o]);
        cells_of(&s, key, cells);
        cr_expect_eq(cells[GG_EDGE_MIS1], GG_FREEDOM_ABSENT, "bf16 rows are whole 2 bytes");
        counted += cells[GG_EDGE_PACKED] + cells[GG_EDGE_PAD_SMALL] + cells[GG_EDGE_PAD_TILE];
        away += cells[GG_EDGE_PAD_SMALL] + cells[GG_EDGE_PAD_TILE];
        snprintf(key, sizeof key, "freedom_%s_off_c", ops[o]);
        cells_of(&s, key, cells);
        cr_expect_eq(cells[GG_EDGE_PAD_SMALL], GG_FREEDOM_ABSENT, "an offset has no pad class");
        cr_expect_geq(cells[GG_EDGE_MIS2], 0);
    }
    cr_expect(counted <= execs && counted * 10 >= execs * 9, "%lld of %lld cases counted",
              (long long)counted, execs);
    cr_expect(away * 5 >= execs && away * 2 <= execs, "lda away from packed in %lld of %lld",
              (long long)away, execs);
    int64_t groups[GG_EDGE_COUNT];
    cells_of(&s, "freedom_grouped_fwd_group_lens", groups);
    cr_expect_gt(groups[GG_EDGE_EMPTY_INSIDE], 0);
    gg_fuzzer_stats_free(&s);
    cli_remove_dir(dir);
}

/* The row of freedom name in a Markdown table: its first count (packed), or -1. */
static long long md_packed(const char *md, const char *name)
{
    char head[128];
    snprintf(head, sizeof head, "| `%s` | ", name);
    const char *at = strstr(md, head);
    if (at == NULL)
        return -1;
    at = strchr(at + strlen(head), '|');
    return at ? atoll(at + 1) : -1;
}

/* `ggfuzz report` shows the coverage: a campaign's freedoms as tables in index.html and
   summary.md, what was never exercised and why; a campaign of shards with each freedom's
   counts summed over its shards. */
Test(cli_freedoms, the_report_shows_the_table_and_sums_the_shards)
{
    char dir[64], args[512], err[512], path[256];
    cli_temp_dir(dir, sizeof dir, "freedoms-report");
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "fuzz --campaign camp --shard %d/2 --kernel "
                 "mx_e4m3_cpu_gemv --runs 150 --workers 1 --seed 9 --no-minimize", i);
        cr_assert_eq(cli_ggfuzz_in(dir, args, out, sizeof out), 0, "%s", out);
    }
    cr_assert_eq(cli_ggfuzz_in(dir, "report --campaign camp -o rep", out, sizeof out), 0, "%s",
                 out);
    long long packed = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/camp/shard-%d/fuzzer_stats", dir, i);
        struct gg_fuzzer_stats s;
        cr_assert_eq(gg_fuzzer_stats_read(path, &s, err, sizeof err), GG_OK, "%s", err);
        int64_t cells[GG_EDGE_COUNT];
        cells_of(&s, "freedom_dense_ldb", cells);
        packed += cells[GG_EDGE_PACKED];
        gg_fuzzer_stats_free(&s);
    }
    snprintf(path, sizeof path, "%s/rep/summary.md", dir);
    char *md = file_slurp(NULL, path, NULL);
    cr_expect(strstr(md, "### ABI freedoms"), "%s", md);
    cr_expect(strstr(md, "cells (a freedom of the kernel ABI and an edge class) that the kernel "
                         "takes were exercised"), "%s", md);
    cr_expect_eq(md_packed(md, "dense.ldb"), packed, "dense.ldb packed: the report %lld, the "
                 "shards %lld\n%s", md_packed(md, "dense.ldb"), packed, md);
    /* The GEMV kernel has dense only: no other op's freedom, no group sizes. */
    cr_expect_null(strstr(md, "`grouped_fwd.lda`"));
    cr_expect_null(strstr(md, "no_empty"));
    cr_expect(strstr(md, "| freedom | tensor | packed | pad_small | pad_tile | mis1 | mis2 | "
                         "mis4 | mis8 | huge |"), "%s", md);
    snprintf(path, sizeof path, "%s/rep/index.html", dir);
    char *html = file_slurp(NULL, path, NULL);
    cr_expect(strstr(html, "<h3 id=\"c1-freedoms\">ABI freedoms</h3>"), "no section");
    cr_expect(strstr(html, "<code>dense.off_b</code>"), "no row of dense.off_b");
    free(md);
    free(html);
    cli_remove_dir(dir);
}

/* What was never exercised is named with why: a campaign too short to draw every class. */
Test(cli_freedoms, the_report_names_what_was_never_exercised)
{
    char dir[64];
    cli_temp_dir(dir, sizeof dir, "freedoms-never");
    cr_assert_eq(cli_ggfuzz_in(dir, "fuzz corpus --kernel grouped_fp8_cpu_tiled --runs 3 "
                               "--workers 1 --seed 4 --no-minimize", out, sizeof out), 0, "%s",
                 out);
    cr_expect(strstr(out, "; never drawn: "), "%s", out);
    cr_assert_eq(cli_ggfuzz_in(dir, "report --campaign ggfuzz-out -o rep", out, sizeof out), 0,
                 "%s", out);
    char path[128];
    snprintf(path, sizeof path, "%s/rep/summary.md", dir);
    char *md = file_slurp(NULL, path, NULL);
    cr_expect(strstr(md, "**Never exercised, never drawn:** grouped_"), "%s", md);
    cr_expect(strstr(md, " **0** |"), "%s", md);
    free(md);
    cli_remove_dir(dir);
}

/* A hand-written fuzzer_stats: a refused class is named as refused by the kernel, a freedom of
   a later ggfuzz shows under its key, and a malformed line is left out of the tables. */
Test(cli_freedoms, the_report_names_refused_classes)
{
    char dir[64], path[128];
    cli_temp_dir(dir, sizeof dir, "freedoms-refused");
    file_put(dir, "fuzzer_stats",
             "kernel            : some_kernel_cpu\n"
             "execs_done        : 10\n"
             "freedom_dense_lda : packed=10 pad_small=refused pad_tile=refused mis2=0\n"
             "freedom_dense_scale_ld : packed=10 pad_small=3\n"
             "freedom_dense_ldb : packed=ten\n");
    cr_assert_eq(cli_ggfuzz_in(dir, "report --campaign . -o rep", out, sizeof out), 0, "%s", out);
    snprintf(path, sizeof path, "%s/rep/summary.md", dir);
    char *md = file_slurp(NULL, path, NULL);
    cr_expect(strstr(md, "**3 of 4** cells"), "%s", md);
    cr_expect(strstr(md, "; 2 more the kernel refuses"), "%s", md);
    cr_expect(strstr(md, "**Never exercised, never drawn:** dense.lda mis2."), "%s", md);
    cr_expect(strstr(md, "refused by the kernel** (its supports() on every configuration): "
                         "dense.lda pad_small pad_tile."), "%s", md);
    cr_expect(strstr(md, "| `dense.lda` | A [M,K] | 10 | refused | refused | **0** |"), "%s",
              md);
    cr_expect(strstr(md, "| `dense_scale_ld` |  | 10 | 3 |"), "%s", md);
    cr_expect_null(strstr(md, "`dense.ldb`"), "%s", md);
    free(md);
    cli_remove_dir(dir);
}

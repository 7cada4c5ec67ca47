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

/*
 * test_fuzz_sync.c — the corpus that shards share (fuzz/store/gg_sync.c): a pull returns what a
 * peer kept since the last one, once; the cursors survive a restart; a line being written (no
 * newline yet) waits until it is whole, and a writer that starts again cuts a torn line off; a
 * case file not visible yet holds the cursor for a few pulls and is then skipped; a line that is
 * no case id is skipped; the shard directories are listed by index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/store/gg_store.h"

static char root[64], corpus[128];
static struct gg_gen_config gen;

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ggfuzz-sync-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(corpus, sizeof corpus, "%s/shard-1/corpus", root);
    cr_assert_eq(gg_mkdir_p(corpus), 0);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/shard-0", root);
    cr_assert_eq(gg_mkdir_p(dir), 0);
    snprintf(dir, sizeof dir, "%s/shard-12", root);
    cr_assert_eq(gg_mkdir_p(dir), 0);
    gg_registry_init();
    gen = (struct gg_gen_config){.kernel = gg_registry_find("grouped_bf16_cpu_tiled"),
                                 .faults = GG_FAULTS_ALL};
    cr_assert_not_null(gen.kernel);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

/* Case number i saved into the peer's corpus; its id into id. With publish, logged too. */
static void keep(struct gg_sync *peer, uint64_t i, char id[GG_CASE_ID_HEX + 1], int publish)
{
    struct gg_case c;
    char err[1024], path[256];
    cr_assert_eq(gg_generate(&gen, 7, i, &c, err, sizeof err), GG_OK, "%s", err);
    gg_case_id(&c, id);
    snprintf(path, sizeof path, "%s/%s.case", corpus, id);
    cr_assert_eq(gg_case_save(&c, path, err, sizeof err), GG_OK, "%s", err);
    gg_case_free(&c);
    if (publish)
        cr_assert_eq(gg_sync_publish(peer, id, err, sizeof err), GG_OK, "%s", err);
}

/* Pulls with self: how many cases came. */
static size_t pull(struct gg_sync *self, struct gg_sync_stats *ss)
{
    struct gg_case *cases;
    size_t n;
    char err[1024];
    cr_assert_eq(gg_sync_pull(self, &cases, &n, ss, err, sizeof err), GG_OK, "%s", err);
    for (size_t i = 0; i < n; i++)
        gg_case_free(&cases[i]);
    free(cases);
    return n;
}

/* Appends raw text to the peer's log. */
static void append_log(const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/shard-1/corpus.log", root);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Shard 1 (the peer, which keeps cases) and shard 0 (self, which pulls them). */
static void open_both(struct gg_sync *peer, struct gg_sync *self)
{
    char err[256];
    cr_assert_eq(gg_sync_open(peer, root, 1, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_sync_open(self, root, 0, err, sizeof err), GG_OK, "%s", err);
}

TestSuite(fuzz_sync, .init = setup, .fini = teardown);

Test(fuzz_sync, shard_directories_are_listed_by_index)
{
    int *idx;
    size_t n;
    char err[256];
    cr_assert_eq(gg_shard_list(root, &idx, &n, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(n, 3);
    cr_expect_eq(idx[0], 0);
    cr_expect_eq(idx[1], 1);
    cr_expect_eq(idx[2], 12);
    free(idx);
}

Test(fuzz_sync, a_pull_returns_what_is_new_once_and_the_cursors_survive)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char err[256], id[GG_CASE_ID_HEX + 1];
    open_both(&peer, &self);
    for (uint64_t i = 0; i < 3; i++)
        keep(&peer, i, id, 1);
    cr_expect_eq(pull(&self, &ss), 3);
    cr_expect_eq(pull(&self, &ss), 0);
    keep(&peer, 3, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    cr_expect_eq(ss.imported, 4);
    cr_expect_eq(ss.peers, 2, "shards 1 and 12 are peers of shard 0");
    gg_sync_close(&self);
    /* A restarted shard goes on from its saved cursors. */
    cr_assert_eq(gg_sync_open(&self, root, 0, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(pull(&self, &ss), 0);
    keep(&peer, 4, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    gg_sync_close(&self);
    gg_sync_close(&peer);
}

Test(fuzz_sync, a_line_is_read_once_it_is_whole_and_a_torn_one_is_cut)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char err[256], id[GG_CASE_ID_HEX + 1], text[64];
    open_both(&peer, &self);
    keep(&peer, 0, id, 0);
    snprintf(text, sizeof text, "%.10s", id);
    append_log(text); /* half a line: being written */
    cr_expect_eq(pull(&self, &ss), 0);
    snprintf(text, sizeof text, "%s\n", id + 10);
    append_log(text);
    cr_expect_eq(pull(&self, &ss), 1);
    /* A torn line (its writer killed), cut off when the writer starts again. */
    keep(&peer, 1, id, 0);
    snprintf(text, sizeof text, "%.7s", id);
    append_log(text);
    gg_sync_close(&peer);
    cr_assert_eq(gg_sync_open(&peer, root, 1, err, sizeof err), GG_OK, "%s", err);
    keep(&peer, 2, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    cr_expect_eq(ss.skipped, 0);
    gg_sync_close(&self);
    gg_sync_close(&peer);
}

Test(fuzz_sync, a_missing_case_holds_the_cursor_then_is_skipped_as_is_garbage)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char id[GG_CASE_ID_HEX + 1];
    open_both(&peer, &self);
    append_log("0123456789abcdef0123456789abcdef\n"); /* no such case file */
    keep(&peer, 0, id, 1);
    cr_expect_eq(pull(&self, &ss), 0, "the missing case holds the cursor");
    cr_expect_eq(pull(&self, &ss), 0);
    cr_expect_eq(pull(&self, &ss), 1, "skipped after a few pulls, the next case read");
    cr_expect_eq(ss.skipped, 1);
    append_log("../../etc/passwd\n");
    keep(&peer, 1, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    cr_expect_eq(ss.skipped, 2);
    gg_sync_close(&self);
    gg_sync_close(&peer);
}

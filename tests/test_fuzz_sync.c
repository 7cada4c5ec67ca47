/*
 * test_fuzz_sync.c — the corpus that shards share (fuzz/store/gg_sync.c): a pull returns what a
 * peer kept since the last one, once; the cursors survive a restart; a line being written (no
 * newline yet) waits until it is whole, and a writer that starts again cuts a torn line off; a
 * case file not visible yet holds the cursor for a few pulls and is then skipped; a line that is
 * no case id is skipped; the shard directories are listed by index, under their own names only.
 * What peers place is read without waiting and in bounded amounts: a log or a case that is a
 * FIFO is passed over with a warning, a line longer than a case id is skipped a bounded chunk
 * per pull, and a cursor into a log made afresh starts again at 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/store/gg_store.h"

static char root[64], corpus[128];
static struct gg_gen_config gen;
static char notes[1 << 14]; /* the lines the pulls told, one per line */

static void take_note(void *ctx, const char *line)
{
    (void)ctx;
    size_t used = strlen(notes);
    snprintf(notes + used, sizeof notes - used, "%s\n", line);
}

/* How many times text occurs in the notes. */
static int noted(const char *text)
{
    int count = 0;
    for (const char *p = notes; (p = strstr(p, text)) != NULL; p++)
        count++;
    return count;
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ggfuzz-sync-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(corpus, sizeof corpus, "%s/shard-1/corpus", root);
    cr_assert_eq(gg_mkdir_p(corpus), 0);
    char dir[128];
    const char *others[] = {"shard-0", "shard-12", "shard-01", "shard-007", "shard-1x"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, others[i]);
        cr_assert_eq(gg_mkdir_p(dir), 0);
    }
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
    self->note = take_note;
    notes[0] = '\0';
}

TestSuite(fuzz_sync, .init = setup, .fini = teardown, .timeout = 30);

/* shard-01, shard-007 and shard-1x (made by setup) are not the names of shards 1 and 7. */
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

/* Expects the line "<head><path><tail>" among the notes exactly once. */
static void expect_noted_once(const char *head, const char *path, const char *tail)
{
    char want[512];
    snprintf(want, sizeof want, "%s%s%s", head, path, tail);
    cr_expect_eq(noted(want), 1, "'%s' not told once: %s", want, notes);
}

static void close_both(struct gg_sync *peer, struct gg_sync *self)
{
    gg_sync_close(self);
    gg_sync_close(peer);
}

/* open_both(), and the path of the peer's log into log. */
static void open_with_log(struct gg_sync *peer, struct gg_sync *self, char *log, size_t len)
{
    open_both(peer, self);
    snprintf(log, len, "%s/shard-1/corpus.log", root);
}

Test(fuzz_sync, a_log_that_is_a_fifo_is_passed_over_with_one_warning)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char path[256];
    open_with_log(&peer, &self, path, sizeof path);
    cr_assert_eq(mkfifo(path, 0644), 0);
    cr_expect_eq(pull(&self, &ss), 0);
    cr_expect_eq(pull(&self, &ss), 0);
    expect_noted_once("WARNING: ", path, ": cannot read: not a regular file");
    /* A regular log again: read, and the warning given again should it go bad once more. */
    cr_assert_eq(unlink(path), 0);
    char id[GG_CASE_ID_HEX + 1];
    keep(&peer, 0, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    close_both(&peer, &self);
}

Test(fuzz_sync, a_case_that_is_a_fifo_is_skipped_with_its_name)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    const char *fifo_id = "0123456789abcdef0123456789abcdef";
    char path[256], id[GG_CASE_ID_HEX + 1];
    open_both(&peer, &self);
    snprintf(path, sizeof path, "%s/%s.case", corpus, fifo_id);
    cr_assert_eq(mkfifo(path, 0644), 0);
    append_log("0123456789abcdef0123456789abcdef\n");
    keep(&peer, 0, id, 1);
    cr_expect_eq(pull(&self, &ss), 1, "the next case is read");
    cr_expect_eq(ss.skipped, 1);
    expect_noted_once("WARNING: ", path, ": cannot read: not a regular file; skipped");
    close_both(&peer, &self);
}

/* A 3 GiB log of one line (sparse: no disk used): each pull reads one chunk of it, the line is
   told once and its bytes are passed over. */
Test(fuzz_sync, a_huge_line_is_read_a_chunk_per_pull_and_told_once)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char path[256];
    open_with_log(&peer, &self, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)3 << 30), 0);
    close(fd);
    cr_expect_eq(pull(&self, &ss), 0);
    cr_expect_leq(ss.bytes, GG_SYNC_CHUNK);
    cr_expect_eq(pull(&self, &ss), 0);
    cr_expect_leq(ss.bytes, 2 * GG_SYNC_CHUNK);
    cr_expect_eq(self.peers[0].offset, 2 * GG_SYNC_CHUNK, "the cursor moves past what was read");
    expect_noted_once("WARNING: ", path, ": the line at byte 0 is longer than a case id; "
                      "skipped to its end");
    close_both(&peer, &self);
}

/* A long line that ends, then a case: read once the line is passed over, also by a shard that
   started again in the middle of the line. */
Test(fuzz_sync, a_long_line_is_skipped_to_its_end_across_a_restart)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char path[256], err[256], id[GG_CASE_ID_HEX + 1];
    open_with_log(&peer, &self, path, sizeof path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (long i = 0; i < GG_SYNC_CHUNK + 100; i++)
        fputc('f', f); /* hex digits, but far too many for a case id */
    fputc('\n', f);
    fclose(f);
    keep(&peer, 0, id, 1);
    cr_expect_eq(pull(&self, &ss), 0, "the first chunk is inside the long line");
    gg_sync_close(&self);
    cr_assert_eq(gg_sync_open(&self, root, 0, err, sizeof err), GG_OK, "%s", err);
    self.note = take_note;
    cr_expect_eq(pull(&self, &ss), 1, "the rest of the line skipped, the case read");
    cr_expect_eq(ss.skipped, 1, "the rest of the long line is no line of its own");
    cr_expect_eq(noted("longer than a case id"), 1, "%s", notes);
    close_both(&peer, &self);
}

/* The peer's directory made afresh: its new log is shorter than the cursor, or as long but
   with other cases; either way its cases are read from the start, with an INFO line. */
Test(fuzz_sync, a_cursor_into_a_log_made_afresh_starts_again)
{
    struct gg_sync peer, self;
    struct gg_sync_stats ss = {0};
    char path[256], err[256], id[GG_CASE_ID_HEX + 1], cmd[512];
    open_both(&peer, &self);
    for (uint64_t i = 0; i < 4; i++)
        keep(&peer, i, id, 1);
    cr_expect_eq(pull(&self, &ss), 4);
    gg_sync_close(&self);
    gg_sync_close(&peer);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/shard-1'", root);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(gg_mkdir_p(corpus), 0);
    open_both(&peer, &self);
    for (uint64_t i = 10; i < 12; i++)
        keep(&peer, i, id, 1);
    cr_expect_eq(pull(&self, &ss), 2, "a shorter log read from its start");
    snprintf(path, sizeof path, "%s/shard-1/corpus.log", root);
    char tail[128];
    snprintf(tail, sizeof tail, ": shorter (%d bytes) than this shard's cursor (%d)",
             2 * (GG_CASE_ID_HEX + 1), 4 * (GG_CASE_ID_HEX + 1));
    expect_noted_once("INFO: ", path, tail);
    /* Again, now with a log as long as the cursor and longer, of other cases. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/shard-1'", root);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(gg_mkdir_p(corpus), 0);
    for (uint64_t i = 20; i < 23; i++)
        keep(&peer, i, id, 1);
    cr_expect_eq(pull(&self, &ss), 3, "a log of other bytes read from its start");
    cr_expect_eq(noted("other bytes than this shard read before its cursor"), 1, "%s", notes);
    cr_expect_eq(pull(&self, &ss), 0);
    /* The marks survive a restart: a log that goes on is not read again. */
    gg_sync_close(&self);
    cr_assert_eq(gg_sync_open(&self, root, 0, err, sizeof err), GG_OK, "%s", err);
    self.note = take_note;
    keep(&peer, 23, id, 1);
    cr_expect_eq(pull(&self, &ss), 1);
    cr_expect_eq(noted("INFO:"), 2, "%s", notes);
    close_both(&peer, &self);
}

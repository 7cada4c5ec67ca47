/*
 * test_cli_merge.c — `ggfuzz merge` on stores that others may have placed files in: a file named
 * like a finding that cannot be read or parsed (truncated, a FIFO) is skipped with a WARNING
 * naming it and every readable finding is merged (exit 5); each store is read once whatever
 * names lead to it (a stray shard-01, a link to a shard, a store named twice); counts summing
 * past 2^63 saturate and the signature is still written. The merge of sharded campaigns as a
 * whole is in test_cli_shard.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#define SEED_CASE GG_SOURCE_DIR "/corpus/seeds/fwd_basic.case"
#define FIND_A "snr-00000000000000aa.case"
#define FIND_B "nan-00000000000000bb.case"

static char out[1 << 16];
static char root[64];

static int ggfuzz(const char *args)
{
    return cli_ggfuzz_in(root, args, out, sizeof out);
}

TestSuite(cli_merge, .timeout = 30);

/* Writes root/rel (its directory made) with text. */
static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Files finding `name` (the seed case, signature sig) in store dir with count sightings. */
static void put_finding(const char *dir, const char *name, const char *sig, const char *count)
{
    char text[4096], rel[256];
    FILE *f = fopen(SEED_CASE, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    *strstr(text, "@expect") = '\0';
    snprintf(text + strlen(text), sizeof text - strlen(text),
             "@expect class=%.3s sig=%s\n@finding count=%s first_seen=2026-01-01T00:00:00Z "
             "last_seen=2026-01-02T00:00:00Z seed=0x1 kernel=grouped_bf16_cpu_tiled\n", name,
             sig, count);
    snprintf(rel, sizeof rel, "%s/%s", dir, name);
    put(rel, text);
}

/* Two shards: signature A seen 2 + 1 times, B once. */
static void two_shards(void)
{
    cli_temp_dir(root, sizeof root, "cli-merge");
    put_finding("c/shard-0/artifacts", FIND_A, "snr/a", "2");
    put_finding("c/shard-1/artifacts", FIND_A, "snr/a", "1");
    put_finding("c/shard-1/artifacts", FIND_B, "nan/b", "1");
}

/* The count on the @finding line of root/rel (-1 when the file or the line is missing). */
static long long count_of(const char *rel)
{
    char path[512], line[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    long long count = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "@finding count=", 15) == 0)
            count = atoll(line + 15);
    if (f)
        fclose(f);
    return count;
}

Test(cli_merge, an_unreadable_finding_is_skipped_with_its_name_and_the_rest_merged)
{
    two_shards();
    put("c/shard-1/artifacts/snr-0123456789abcdef.case", "ggfuzz-case 1\nop grouped_fwd\n");
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/c/shard-0/artifacts/crash-00000000000000ff.case", root);
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    cr_expect_eq(ggfuzz("merge c"), 5, "%s", out);
    cr_expect(strstr(out, "WARNING: c/shard-1/artifacts/snr-0123456789abcdef.case:2: missing key "
                          "'kernel' (truncated file?); not merged"), "%s", out);
    cr_expect(strstr(out, "WARNING: c/shard-0/artifacts/crash-00000000000000ff.case: cannot "
                          "read: not a regular file; not merged"), "%s", out);
    cr_expect(strstr(out, "2 signatures, 0 buckets, 4 sightings; 2 files written; 2 unreadable "
                          "files skipped"), "%s", out);
    cr_expect_eq(count_of("c/artifacts/" FIND_A), 3);
    cr_expect_eq(count_of("c/artifacts/" FIND_B), 1);
    /* Nothing skipped: exit 0. */
    cr_assert_eq(unlink(fifo), 0);
    snprintf(fifo, sizeof fifo, "%s/c/shard-1/artifacts/snr-0123456789abcdef.case", root);
    cr_assert_eq(unlink(fifo), 0);
    cr_expect_eq(ggfuzz("merge c"), 0, "%s", out);
    cr_expect_null(strstr(out, "WARNING"), "%s", out);
    cli_remove_dir(root);
}

Test(cli_merge, each_store_is_read_once_whatever_names_lead_to_it)
{
    two_shards();
    char path[256];
    snprintf(path, sizeof path, "%s/c/shard-01", root);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/c/shard-2", root);
    cr_assert_eq(symlink("shard-1", path), 0);
    cr_expect_eq(ggfuzz("merge c"), 0, "%s", out);
    cr_expect(strstr(out, "WARNING: c/shard-2/artifacts: the same store as c/shard-1/artifacts "
                          "(named twice, or through a link); read once"), "%s", out);
    cr_expect(strstr(out, "2 signatures, 0 buckets, 4 sightings"), "%s", out);
    cr_expect_eq(count_of("c/artifacts/" FIND_A), 3);
    cr_expect_eq(count_of("c/artifacts/" FIND_B), 1);
    cr_expect_eq(ggfuzz("merge c/shard-1/artifacts c/shard-1/artifacts -o m"), 0, "%s", out);
    cr_expect(strstr(out, "WARNING: c/shard-1/artifacts: the same store as c/shard-1/artifacts"),
              "%s", out);
    cr_expect_eq(count_of("m/" FIND_A), 1);
    cli_remove_dir(root);
}

Test(cli_merge, counts_past_2_63_saturate_and_the_signature_is_written)
{
    two_shards();
    put_finding("c/shard-0/artifacts", FIND_A, "snr/a", "9223372036854775807");
    cr_expect_eq(ggfuzz("merge c"), 0, "%s", out);
    cr_expect(strstr(out, "2 signatures, 0 buckets, 9223372036854775807 sightings"), "%s", out);
    cr_expect_eq(count_of("c/artifacts/" FIND_A), 9223372036854775807LL);
    cr_expect_eq(count_of("c/artifacts/" FIND_B), 1);
    /* And merged again: the saturated count stays, nothing is rewritten. */
    cr_expect_eq(ggfuzz("merge c"), 0, "%s", out);
    cr_expect(strstr(out, "0 files written"), "%s", out);
    cli_remove_dir(root);
}

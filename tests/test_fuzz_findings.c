/*
 * test_fuzz_findings.c — the findings store keeps one reproducible case per signature with its
 * count and first/last sighting, keeps the smaller of two cases, stays whole under concurrent
 * writers; and the known-signatures file loads as a set (a missing or irregular file refused, a
 * campaign directory read as its stores).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/store/gg_store.h"

/* A fresh directory under TMPDIR. */
static char *temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/ggfindings.XXXXXX", base && base[0] ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d, "mkdtemp failed");
    return strdup(d);
}

/* Names in dir (dot-files included, "." and ".." not); returns how many. */
static int count_entries(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n += len >= sl && strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* Removes dir and the plain files in it. */
static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* A grouped forward case with the given group sizes and N. */
static void make_case(struct gg_case *c, const char *lens, int groups, int n)
{
    char text[512], err[256];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\n"
             "mutant zero_len_ptr_skip\ndtypes a=bf16 b=bf16 c=bf16 acc=f32\nscaling none\n"
             "groups %d\ngroup_lens %s\nn %d\nk 32\nseed 0x1234\n@note from the test\n",
             groups, lens, n);
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", c, err, sizeof err), GG_OK, "%s", err);
}

static struct gg_verdict verdict(enum gg_class cls, const char *sig)
{
    struct gg_verdict v = {.cls = cls, .worst_group = -1};
    snprintf(v.signature, sizeof v.signature, "%s", sig);
    return v;
}

static const char SIG_A[] = "snr/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/small/"
                            "g:after-empty/all/garbage";
static const char SIG_B[] = "nan/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/small/"
                            "g:all/all/nan-inf";

static void record(const char *dir, const struct gg_case *c, const struct gg_verdict *v,
                   int want_new, char *path, size_t path_len)
{
    char err[512];
    int is_new = -1;
    cr_assert_eq(gg_findings_record(dir, c, v, 0xabcdefULL, &is_new, path, path_len, err,
                                    sizeof err), GG_OK, "%s", err);
    cr_expect_eq(is_new, want_new);
}

static void load(const char *path, struct gg_case *c)
{
    char err[512];
    cr_assert_eq(gg_case_load(path, c, err, sizeof err), GG_OK, "%s", err);
}

/* The value of field key in the @finding line of the case at path, in out. */
static void finding_field(const char *path, const char *key, char *out, size_t cap)
{
    struct gg_case c;
    load(path, &c);
    const char *f = gg_case_meta(&c, "finding");
    cr_assert_not_null(f, "%s has no @finding", path);
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    const char *p = strstr(f, pat);
    cr_assert_not_null(p, "no %s in '%s'", key, f);
    p += strlen(pat);
    snprintf(out, cap, "%.*s", (int)strcspn(p, " "), p);
    gg_case_free(&c);
}

static long long finding_count(const char *path)
{
    char buf[32];
    finding_field(path, "count", buf, sizeof buf);
    return atoll(buf);
}

/* Rewrites the sighting times of the stored finding at path to a fixed past instant. */
static void backdate(const char *path)
{
    struct gg_case c;
    char err[512];
    load(path, &c);
    cr_assert_eq(gg_case_set_meta(&c, "finding", "count=1 first_seen=2001-02-03T04:05:06Z "
                                  "last_seen=2001-02-03T04:05:06Z seed=0x1 kernel=old"), GG_OK);
    cr_assert_eq(gg_case_save(&c, path, err, sizeof err), GG_OK, "%s", err);
    gg_case_free(&c);
}

TestSuite(findings, .timeout = 60);

Test(findings, a_new_signature_is_a_new_file_that_reproduces)
{
    /* A real fault: the n_tail mutant drops the last column of a partial N tile. */
    static const char text[] = "ggfuzz-case 1\nop batched\nkernel batched_bf16_cpu_tiled\n"
                               "mutant n_tail\ndtypes a=bf16 b=bf16 c=bf16 acc=f32\n"
                               "scaling none\nbatch 2\nm 70\nn 100\nk 128\nseed 0x5b1c0006\n";
    char err[512], path[1024];
    char *dir = temp_dir();
    gg_registry_init();
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, strlen(text), "n_tail", &c, err, sizeof err), GG_OK, "%s",
                 err);
    struct gg_run_opts o = {0};
    struct gg_run_result r;
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    cr_assert_neq(r.verdict.cls, GG_CLASS_PASS);

    record(dir, &c, &r.verdict, 1, path, sizeof path);
    const char *base = strrchr(path, '/') + 1;
    char want[64];
    snprintf(want, sizeof want, "%s-", gg_class_name(r.verdict.cls));
    cr_expect(strncmp(base, want, strlen(want)) == 0, "%s", base);
    cr_expect_eq(strlen(base), strlen(want) + 16 + strlen(".case"), "%s", base);
    for (size_t i = strlen(want); i < strlen(want) + 16; i++)
        cr_expect(strchr("0123456789abcdef", base[i]) != NULL, "%s", base);
    cr_expect_eq(count_entries(dir, ".case"), 1);

    struct gg_case stored;
    load(path, &stored);
    char id_run[GG_CASE_ID_HEX + 1], id_stored[GG_CASE_ID_HEX + 1];
    gg_case_id(&c, id_run);
    gg_case_id(&stored, id_stored);
    cr_expect_str_eq(id_stored, id_run);
    const char *expect = gg_case_meta(&stored, "expect");
    cr_assert_not_null(expect);
    cr_expect(strstr(expect, r.verdict.signature) != NULL, "%s", expect);
    const char *f = gg_case_meta(&stored, "finding");
    cr_assert_not_null(f);
    cr_expect(strstr(f, "count=1 ") != NULL, "%s", f);
    cr_expect(strstr(f, "seed=0x0000000000abcdef") != NULL, "%s", f);
    cr_expect(strstr(f, "kernel=batched_bf16_cpu_tiled") != NULL, "%s", f);
    cr_expect(strstr(f, "mutant=n_tail") != NULL, "%s", f);
    char first[32], last[32];
    finding_field(path, "first_seen", first, sizeof first);
    finding_field(path, "last_seen", last, sizeof last);
    cr_expect_str_eq(first, last);
    cr_expect_eq(strlen(first), strlen("2024-01-02T03:04:05Z"), "%s", first);
    cr_expect_eq(first[strlen(first) - 1], 'Z', "%s", first);

    /* Replaying the stored case gives the verdict its @expect names. */
    struct gg_run_result again;
    cr_assert_eq(gg_run_case(&stored, &o, &again, err, sizeof err), GG_OK, "%s", err);
    cr_expect(gg_expect_holds(expect, &again.verdict), "%s vs %s", expect,
              again.verdict.signature);
    struct gg_verdict other = verdict(r.verdict.cls, SIG_B);
    cr_expect_not(gg_expect_holds(expect, &other));

    gg_run_result_free(&again);
    gg_run_result_free(&r);
    gg_case_free(&stored);
    gg_case_free(&c);
    remove_dir(dir);
}

Test(findings, a_known_signature_counts_and_keeps_first_seen)
{
    char path[1024], path2[1024], v1[32];
    char *dir = temp_dir();
    struct gg_case c;
    make_case(&c, "8 0 8 8", 4, 64);
    struct gg_verdict v = verdict(GG_CLASS_SNR, SIG_A);
    record(dir, &c, &v, 1, path, sizeof path);
    backdate(path);
    record(dir, &c, &v, 0, path2, sizeof path2);
    cr_expect_str_eq(path2, path);
    cr_expect_eq(finding_count(path), 2);
    finding_field(path, "first_seen", v1, sizeof v1);
    cr_expect_str_eq(v1, "2001-02-03T04:05:06Z");
    finding_field(path, "last_seen", v1, sizeof v1);
    cr_expect_str_neq(v1, "2001-02-03T04:05:06Z");
    cr_expect_eq(strncmp(v1, "20", 2), 0, "%s", v1);
    /* The stored case (not larger) and its other metadata stay. */
    finding_field(path, "kernel", v1, sizeof v1);
    cr_expect_str_eq(v1, "old");
    struct gg_case stored;
    load(path, &stored);
    cr_expect_str_eq(gg_case_meta(&stored, "note"), "from the test");
    cr_expect_eq(count_entries(dir, ".case"), 1);
    cr_expect_eq(count_entries(dir, ""), 2, "only the finding and the lock file remain");
    gg_case_free(&stored);
    gg_case_free(&c);
    remove_dir(dir);
}

Test(findings, a_smaller_case_replaces_the_stored_one_and_a_larger_does_not)
{
    char path[1024];
    char *dir = temp_dir();
    struct gg_case big, fewer_groups, fewer_elems, larger;
    make_case(&big, "8 0 8 8", 4, 64);
    make_case(&fewer_groups, "30 0", 2, 128);  /* more elements, fewer groups: smaller */
    make_case(&fewer_elems, "30 0", 2, 64);    /* same groups, fewer elements: smaller */
    make_case(&larger, "1 0 1 1 1", 5, 8);     /* fewer elements, more groups: larger */
    struct gg_verdict v = verdict(GG_CLASS_SNR, SIG_A);
    record(dir, &big, &v, 1, path, sizeof path);
    cr_assert_eq(gg_case_set_meta(&big, "triage", "ignored: metadata of a later sighting"), GG_OK);

    char id_want[GG_CASE_ID_HEX + 1], id_got[GG_CASE_ID_HEX + 1];
    struct gg_case stored;
    const struct gg_case *seq[] = {&fewer_groups, &fewer_elems, &larger, &big};
    const struct gg_case *kept[] = {&fewer_groups, &fewer_elems, &fewer_elems, &fewer_elems};
    for (int i = 0; i < 4; i++) {
        struct gg_case edited;
        cr_assert_eq(gg_case_copy(&edited, seq[i]), GG_OK);
        cr_assert_eq(gg_case_set_meta(&edited, "note", "a later sighting"), GG_OK);
        record(dir, &edited, &v, 0, NULL, 0);
        gg_case_free(&edited);
        load(path, &stored);
        gg_case_id(kept[i], id_want);
        gg_case_id(&stored, id_got);
        cr_expect_str_eq(id_got, id_want, "after sighting %d", i);
        /* The metadata of the first record stays with the smaller case. */
        cr_expect_str_eq(gg_case_meta(&stored, "note"), "from the test");
        cr_expect_null(gg_case_meta(&stored, "triage"));
        cr_expect(gg_expect_holds(gg_case_meta(&stored, "expect"), &v));
        gg_case_free(&stored);
        cr_expect_eq(finding_count(path), i + 2);
    }
    gg_case_free(&big);
    gg_case_free(&fewer_groups);
    gg_case_free(&fewer_elems);
    gg_case_free(&larger);
    remove_dir(dir);
}

/* A case that gives the fault alone beats one that needs preceding cases (@after), whatever
   their sizes; the @after lines stay with the case they belong to; a sighting only counts. */
Test(findings, a_case_that_fails_alone_beats_one_that_needs_preceding_cases)
{
    char path[1024], err[512];
    char *dir = temp_dir();
    struct gg_case small_after, big_alone, smaller_after, prior;
    make_case(&prior, "4 4", 2, 16);
    make_case(&small_after, "8 0", 2, 32);
    make_case(&big_alone, "8 0 8 8", 4, 64);
    make_case(&smaller_after, "8", 1, 32);
    cr_assert_eq(gg_case_after_add(&small_after, &prior, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_after_add(&smaller_after, &prior, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_after_add(&smaller_after, &prior, err, sizeof err), GG_OK, "%s", err);
    struct gg_verdict v = verdict(GG_CLASS_SNR, SIG_A);
    record(dir, &small_after, &v, 1, path, sizeof path);
    struct gg_case stored;
    load(path, &stored);
    cr_expect_eq(gg_case_after_count(&stored), 1);
    struct gg_case *cases;
    int n = 0;
    cr_assert_eq(gg_case_after_cases(&stored, path, &cases, &n, err, sizeof err), GG_OK, "%s",
                 err);
    char id_want[GG_CASE_ID_HEX + 1], id_got[GG_CASE_ID_HEX + 1];
    cr_assert_eq(n, 1);
    gg_case_id(&prior, id_want);
    gg_case_id(&cases[0], id_got);
    cr_expect_str_eq(id_got, id_want, "the @after line gives back the preceding case");
    gg_case_after_free(cases, n);
    gg_case_free(&stored);

    /* Larger, but alone: replaces it, without the @after line of the stored case. */
    record(dir, &big_alone, &v, 0, NULL, 0);
    load(path, &stored);
    gg_case_id(&big_alone, id_want);
    gg_case_id(&stored, id_got);
    cr_expect_str_eq(id_got, id_want);
    cr_expect_eq(gg_case_after_count(&stored), 0);
    cr_expect_str_eq(gg_case_meta(&stored, "note"), "from the test");
    gg_case_free(&stored);

    /* Smaller, but it needs preceding cases: the case alone stays; a sighting only counts. */
    record(dir, &smaller_after, &v, 0, NULL, 0);
    cr_assert_eq(gg_findings_sighting(dir, &v, err, sizeof err), GG_OK, "%s", err);
    load(path, &stored);
    gg_case_id(&stored, id_got);
    cr_expect_str_eq(id_got, id_want);
    cr_expect_eq(gg_case_after_count(&stored), 0);
    gg_case_free(&stored);
    cr_expect_eq(finding_count(path), 4);
    struct gg_verdict other = verdict(GG_CLASS_NAN, SIG_B);
    cr_expect_eq(gg_findings_sighting(dir, &other, err, sizeof err), GG_E_IO,
                 "a sighting of a signature the store does not hold");

    /* Between two cases that need preceding ones the smaller wins, with its own @after lines. */
    char *dir2 = temp_dir();
    record(dir2, &small_after, &v, 1, path, sizeof path);
    record(dir2, &smaller_after, &v, 0, NULL, 0);
    load(path, &stored);
    gg_case_id(&smaller_after, id_want);
    gg_case_id(&stored, id_got);
    cr_expect_str_eq(id_got, id_want);
    cr_expect_eq(gg_case_after_count(&stored), 2);
    gg_case_free(&stored);
    gg_case_free(&prior);
    gg_case_free(&small_after);
    gg_case_free(&big_alone);
    gg_case_free(&smaller_after);
    remove_dir(dir);
    remove_dir(dir2);
}

Test(findings, two_signatures_give_two_files)
{
    char pa[1024], pb[1024], pc[1024];
    char *dir = temp_dir();
    struct gg_case c;
    make_case(&c, "8 0 8 8", 4, 64);
    struct gg_verdict a = verdict(GG_CLASS_SNR, SIG_A), b = verdict(GG_CLASS_NAN, SIG_B);
    record(dir, &c, &a, 1, pa, sizeof pa);
    record(dir, &c, &b, 1, pb, sizeof pb);
    cr_expect_str_neq(pa, pb);
    cr_expect(strstr(pb, "/nan-") != NULL, "%s", pb);
    cr_expect_eq(count_entries(dir, ".case"), 2);
    record(dir, &c, &a, 0, pc, sizeof pc);
    cr_expect_str_eq(pc, pa);
    cr_expect_eq(finding_count(pa), 2);
    cr_expect_eq(finding_count(pb), 1);

    /* The listing of the corpus sees the findings, not the lock file. */
    char **files, err[512];
    size_t n;
    cr_assert_eq(gg_corpus_list(dir, &files, &n, NULL, NULL, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect_eq(n, 2);
    gg_corpus_list_free(files, n);
    gg_case_free(&c);
    remove_dir(dir);
}

Test(findings, a_pass_or_a_bad_signature_is_refused)
{
    char err[512] = "";
    char *dir = temp_dir();
    struct gg_case c;
    make_case(&c, "8 0 8 8", 4, 64);
    struct gg_verdict pass = verdict(GG_CLASS_PASS, "pass");
    struct gg_verdict blank = verdict(GG_CLASS_SNR, "snr with spaces");
    struct gg_verdict empty = verdict(GG_CLASS_SNR, "");
    int is_new = -1;
    cr_expect_eq(gg_findings_record(dir, &c, &pass, 1, &is_new, NULL, 0, err, sizeof err),
                 GG_E_INVAL);
    cr_expect_eq(is_new, 0);
    cr_expect_eq(gg_findings_record(dir, &c, &blank, 1, NULL, NULL, 0, err, sizeof err),
                 GG_E_INVAL);
    cr_expect_eq(gg_findings_record(dir, &c, &empty, 1, NULL, NULL, 0, err, sizeof err),
                 GG_E_INVAL);
    cr_expect_neq(err[0], '\0');
    cr_expect_eq(count_entries(dir, ".case"), 0);
    gg_case_free(&c);
    remove_dir(dir);
}

Test(findings, concurrent_writers_lose_no_count_and_tear_no_file)
{
    char path[1024];
    char *dir = temp_dir();
    struct gg_case small, big;
    make_case(&small, "4 0", 2, 16);
    make_case(&big, "8 0 8 8", 4, 64);
    struct gg_verdict v = verdict(GG_CLASS_SNR, SIG_A);
    enum { WRITERS = 4, EACH = 25 };
    pid_t pid[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        cr_assert_geq(pid[w], 0);
        if (pid[w] == 0) {
            char err[512];
            int bad = 0;
            for (int i = 0; i < EACH; i++) {
                /* Writers alternate a large and a small case, so replacements race too. */
                const struct gg_case *c = (i + w) % 2 ? &small : &big;
                bad |= gg_findings_record(dir, c, &v, (uint64_t)w, NULL, NULL, 0, err,
                                          sizeof err) != GG_OK;
            }
            _exit(bad);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status;
        cr_assert_eq(waitpid(pid[w], &status, 0), pid[w]);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", w);
    }
    record(dir, &big, &v, 0, path, sizeof path);
    cr_expect_eq(finding_count(path), WRITERS * EACH + 1);
    struct gg_case stored;
    load(path, &stored);
    char id_want[GG_CASE_ID_HEX + 1], id_got[GG_CASE_ID_HEX + 1];
    gg_case_id(&small, id_want);
    gg_case_id(&stored, id_got);
    cr_expect_str_eq(id_got, id_want);
    cr_expect_eq(count_entries(dir, ".case"), 1);
    cr_expect_eq(count_entries(dir, ""), 2, "a temporary file was left behind");
    gg_case_free(&stored);
    gg_case_free(&small);
    gg_case_free(&big);
    remove_dir(dir);
}

/* ---- known signatures ------------------------------------------------------------------------ */

Test(findings, sigset_skips_comments_and_blank_lines)
{
    char *dir = temp_dir(), path[1024], err[512];
    snprintf(path, sizeof path, "%s/known.txt", dir);
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fprintf(fp, "# tracked bugs\n\n%s\n   \n  %s   # issue 12\n#%s\n", SIG_A, SIG_B,
            "snr/commented/out");
    fclose(fp);
    struct gg_sigset s;
    cr_assert_eq(gg_sigset_load(path, &s, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(s.n, 2);
    cr_expect(gg_sigset_has(&s, SIG_A));
    cr_expect(gg_sigset_has(&s, SIG_B));
    cr_expect_not(gg_sigset_has(&s, "snr/commented/out"));
    cr_expect_not(gg_sigset_has(&s, "# tracked bugs"));
    cr_expect_not(gg_sigset_has(&s, "snr/grouped_bf16_cpu_serial"));
    cr_expect_not(gg_sigset_has(&s, ""));
    gg_sigset_free(&s);
    cr_expect_eq(s.n, 0);
    cr_expect_null(s.sigs);
    remove_dir(dir);
}

/* A missing path or a FIFO is refused with its name (the FIFO at once: the test's timeout
   bounds the wait); a directory holding no store is an empty set that says it read none. */
Test(findings, a_missing_or_irregular_sigset_file_is_refused)
{
    char *dir = temp_dir(), path[1024], err[512];
    snprintf(path, sizeof path, "%s/absent.txt", dir);
    struct gg_sigset s;
    cr_expect_eq(gg_sigset_load(path, &s, err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, path) && strstr(err, "No such file or directory"), "%s", err);
    cr_expect_eq(s.n, 0);
    cr_expect_not(gg_sigset_has(&s, SIG_A));
    snprintf(path, sizeof path, "%s/known.fifo", dir);
    cr_assert_eq(mkfifo(path, 0644), 0);
    cr_expect_eq(gg_sigset_load(path, &s, err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, path) && strstr(err, "not a regular file"), "%s", err);
    cr_assert_eq(unlink(path), 0);
    /* A directory is read as a findings store: this one holds none. */
    cr_expect_eq(gg_sigset_load(dir, &s, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(s.n, 0);
    cr_expect_eq(s.stores, 0);
    gg_sigset_free(&s);
    remove_dir(dir);
}

/* The directory of a campaign is read as its stores: artifacts/ and each shard's. */
Test(findings, a_campaign_directory_is_read_as_its_stores)
{
    char *dir = temp_dir(), err[512], store[1024], path[1024], cmd[1100];
    struct gg_case c;
    make_case(&c, "4", 1, 16);
    struct gg_verdict va = verdict(GG_CLASS_SNR, SIG_A), vb = verdict(GG_CLASS_NAN, SIG_B);
    snprintf(store, sizeof store, "%s/artifacts", dir);
    record(store, &c, &va, 1, path, sizeof path);
    snprintf(store, sizeof store, "%s/shard-3", dir);
    cr_assert_eq(mkdir(store, 0755), 0);
    snprintf(store, sizeof store, "%s/shard-3/artifacts", dir);
    record(store, &c, &vb, 1, path, sizeof path);
    struct gg_sigset s;
    cr_assert_eq(gg_sigset_load(dir, &s, err, sizeof err), GG_OK, "%s", err);
    cr_expect(gg_sigset_has(&s, SIG_A));
    cr_expect(gg_sigset_has(&s, SIG_B));
    cr_expect_eq(s.stores, 2);
    gg_sigset_free(&s);
    /* The store itself is one store. */
    cr_assert_eq(gg_sigset_load(store, &s, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(s.n, 1);
    cr_expect_eq(s.stores, 1);
    gg_sigset_free(&s);
    gg_case_free(&c);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    free(dir);
}

/* ---- buckets ------------------------------------------------------------------------------- */

/* Removes dir/buckets (its plain files), then dir. */
static void remove_store(char *dir)
{
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/%s", dir, GG_BUCKETS_SUBDIR);
    remove_dir(strdup(sub));
    remove_dir(dir);
}

/* runs=N: how many runs a replay may take to reproduce a race's expectation. */
Test(findings, an_expectation_may_allow_several_runs)
{
    cr_expect_eq(gg_expect_runs(NULL), 1);
    cr_expect_eq(gg_expect_runs("class=snr sig=snr/k"), 1);
    cr_expect_eq(gg_expect_runs("class=nondeterminism|snr runs=16"), 16);
    cr_expect_eq(gg_expect_runs("class=nondeterminism runs=0"), 1);
    cr_expect_eq(gg_expect_runs("class=nondeterminism runs=100000"), GG_EXPECT_MAX_RUNS);
    struct gg_verdict v = verdict(GG_CLASS_SNR, "snr/k/x");
    cr_expect(gg_expect_holds("class=nondeterminism|snr runs=16", &v));
}

Test(findings, a_bucket_form_drops_the_magnitude_and_joins_snr_and_nan)
{
    char form_a[GG_SIGNATURE_MAX], form_b[GG_SIGNATURE_MAX], id_a[GG_BUCKET_ID_HEX + 1],
        id_b[GG_BUCKET_ID_HEX + 1];
    gg_bucket_form(SIG_A, NULL, form_a, sizeof form_a);
    cr_expect_str_eq(form_a, "value/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/small/"
                             "g:after-empty/some");
    gg_bucket_form("nan/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/small/g:after-empty/"
                   "single_tile/nan-inf", NULL, form_b, sizeof form_b);
    cr_expect_str_eq(form_a, form_b);
    /* Data that still needs planted values: their place decides op, shape, groups and region. */
    struct gg_case planted;
    make_case(&planted, "0 1", 2, 8);
    planted.dist_b.kind = GG_DIST_CODES;
    gg_bucket_form("nan/grouped_fp8_cpu_tiled/e5m2-e4m3-f32/grouped_fwd/m:tail/g:all/"
                   "rows_tail/nan-inf", &planted, form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "value/grouped_fp8_cpu_tiled/e4m3-e5m2-f32/planted");
    /* An output that reaches past 2^32 bytes: the bug needs 64-bit addressing, whatever class
       the wrapped address gave. */
    planted.dist_b.kind = GG_DIST_NORMAL;
    planted.off_c = (int64_t)1 << 31;
    gg_bucket_form("crash/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/m:one/g:all/"
                   "c_unused/structural", &planted, form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "address/grouped_bf16_cpu_serial/bf16-bf16/c");
    gg_case_free(&planted);
    /* A wgrad whose default group stride (n rows of ld c) carries dW past 2^32 bytes: the same
       bug as in the forward op, whatever the class. */
    struct gg_case wgrad;
    char text[512], err[256];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_wgrad\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=f32\ngroups 3\ngroup_lens 0*3\nn 1\nk 1\n"
             "ld c=536870976\nseed 1\n");
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", &wgrad, err, sizeof err), GG_OK, "%s",
                 err);
    gg_bucket_form("oob_write/grouped_bf16_cpu_tiled/bf16-bf16-f32/grouped_wgrad/m:zero,n:one,"
                   "k:one/g:none/guard_post/structural", &wgrad, form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "address/grouped_bf16_cpu_tiled/bf16-bf16/c");
    /* A wrapped read finds whatever lies there: a verdict that changes is no race there. */
    gg_bucket_form("nondeterminism/grouped_bf16_cpu_tiled/bf16-bf16-f32/grouped_wgrad/m:zero,"
                   "n:one,k:one/g:none/none/structural", &wgrad, form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "address/grouped_bf16_cpu_tiled/bf16-bf16/c");
    gg_case_free(&wgrad);
    gg_bucket_form("crash/k/bf16-bf16-f32/grouped_fwd/small/g:all/a_past_end/structural", NULL,
                   form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "memory/k/bf16-bf16-f32/grouped_fwd/a_past_end");
    /* One element and one under a tile are both small; a race keeps kernel and inputs. */
    gg_bucket_form("snr/k/bf16-bf16-f32/grouped_fwd/m:one,n:lt_tile,k:tail/g:all/all/garbage",
                   NULL, form_b, sizeof form_b);
    cr_expect_str_eq(form_b,
                     "value/k/bf16-bf16-f32/grouped_fwd/m:small,n:small,k:tail/g:all/some");
    gg_bucket_form("nondeterminism/k/bf16-bf16-bf16/grouped_wgrad/m:one,n:one,k:one/g:none/none/"
                   "structural", NULL, form_b, sizeof form_b);
    cr_expect_str_eq(form_b, "race/k/bf16-bf16");
    gg_bucket_id(form_a, id_a);
    gg_bucket_id(form_b, id_b);
    cr_expect_eq(strlen(id_a), GG_BUCKET_ID_HEX);
    cr_expect_str_neq(id_a, id_b);
}

/* A store's buckets: the representative filed once (a smaller one replaces it, keeping the first
   sighting), members tagged with @bucket, counts and sightings summed from the members, members
   not yet filed counted as untriaged, and the store read as a known set. */
Test(findings, buckets_are_read_back_from_their_members)
{
    char *dir = temp_dir(), a[1024], b[1024], c_path[1024], err[512], id[GG_BUCKET_ID_HEX + 1],
         again[GG_BUCKET_ID_HEX + 1];
    struct gg_case big, small, other;
    make_case(&big, "3 0 5", 3, 64);
    make_case(&small, "0 1", 2, 8);
    make_case(&other, "4", 1, 16);
    struct gg_verdict va = verdict(GG_CLASS_SNR, SIG_A), vb = verdict(GG_CLASS_NAN, SIG_B);
    struct gg_verdict vc = verdict(GG_CLASS_CRASH, "crash/grouped_bf16_cpu_serial/bf16-bf16-bf16/"
                                                   "grouped_fwd/small/g:all/all/structural");
    record(dir, &big, &va, 1, a, sizeof a);
    record(dir, &big, &va, 0, a, sizeof a);
    record(dir, &other, &vb, 1, b, sizeof b);
    record(dir, &other, &vc, 1, c_path, sizeof c_path);
    int is_new = -1;
    cr_assert_eq(gg_bucket_file(dir, &big, SIG_A, NULL, 7, id, &is_new, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect_eq(is_new, 1);
    cr_assert_eq(gg_bucket_file(dir, &small, SIG_A, NULL, 7, again, &is_new, err, sizeof err), GG_OK);
    cr_expect_eq(is_new, 0);
    cr_expect_str_eq(again, id);
    char text[64];
    snprintf(text, sizeof text, "id=%s", id);
    cr_assert_eq(gg_findings_tag(dir, a, "bucket", text, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_findings_tag(dir, b, "bucket", text, err, sizeof err), GG_OK, "%s", err);
    /* A later sighting keeps the tag. */
    record(dir, &small, &va, 0, a, sizeof a);

    struct gg_bucket_list l;
    cr_assert_eq(gg_buckets_scan(dir, &l, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(l.n, 1);
    cr_expect_str_eq(l.b[0].id, id);
    cr_expect_str_eq(l.b[0].cls, "snr");
    cr_expect_eq(l.b[0].members, 2);
    cr_expect_eq(l.b[0].count, 4, "3 sightings of A, 1 of B");
    cr_expect_eq(l.b[0].groups, 2, "the smaller representative replaced the first");
    cr_expect_neq(l.b[0].first_seen[0], '\0');
    cr_expect_eq(l.n_members, 3);
    cr_expect_eq(l.untriaged, 1);
    cr_expect_str_eq(gg_buckets_of(&l, SIG_B), id);
    cr_expect_null(gg_buckets_of(&l, vc.signature));
    /* The representative replays: its @expect is its own signature. */
    struct gg_case rep;
    cr_assert_eq(gg_case_load(l.b[0].path, &rep, err, sizeof err), GG_OK, "%s", err);
    cr_expect(strstr(gg_case_meta(&rep, "expect"), SIG_A) != NULL);
    cr_expect(strstr(gg_case_meta(&rep, "bucket"), id) != NULL);
    gg_case_free(&rep);
    gg_buckets_free(&l);

    struct gg_sigset known;
    char key[GG_BUCKET_ID_HEX + 8];
    snprintf(key, sizeof key, "bucket-%s", id);
    cr_assert_eq(gg_sigset_load(dir, &known, err, sizeof err), GG_OK, "%s", err);
    cr_expect(gg_sigset_has(&known, SIG_A));
    cr_expect(gg_sigset_has(&known, vc.signature));
    cr_expect(gg_sigset_has(&known, key));
    gg_sigset_free(&known);
    gg_case_free(&big);
    gg_case_free(&small);
    gg_case_free(&other);
    remove_store(dir);
}

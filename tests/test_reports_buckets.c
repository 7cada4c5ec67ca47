/*
 * test_reports_buckets.c — the campaign part of the report names bugs, not signatures: it leads
 * with one section per bucket (form, representative and its replay command, members folded
 * under it, sightings, GPUs, kernel and mutant), signatures appear only under their bucket or as
 * not yet triaged (a history-dependent one marked), and the report's size follows the bugs, not
 * the signatures. Several nights (a history directory, or campaigns given side by side) make a
 * trend with the new bugs of each night; a campaign of shards reads as one.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "reports/gg_report.h"
#include "report_fixture.h"

#define REPORT_DATA GG_TEST_DATA "/report"
#define BUCKETS REPORT_DATA "/buckets"

/* The fixture: two buckets, their members, and one history-dependent signature in none. */
#define BUG_UNWRITTEN "b2ae7d4cf5edaac9"
#define BUG_VALUE "1a8d3166c7d25cfa"
static const char *const members[][2] = {
    {BUG_UNWRITTEN, "unwritten/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_fwd/m:lt_tile,"
                    "n:lt_tile,k:one/g:all/all/structural"},
    {BUG_UNWRITTEN, "unwritten/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_fwd/m:tail,n:one,"
                    "k:aligned/g:last/all/structural"},
    {BUG_UNWRITTEN, "unwritten/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/m:tail,"
                    "n:lt_tile,k:lt_tile/g:last/single_tile/structural"},
    {BUG_VALUE, "nan/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_fwd/m:tail,n:aligned,"
                "k:lt_tile/g:after_empty/scattered/nan"},
    {BUG_VALUE, "nan/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_dgrad/m:aligned,n:lt_tile,"
                "k:aligned/g:all/scattered/nan"}};
#define UNTRIAGED "snr/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_fwd/m:aligned,n:lt_tile," \
                  "k:aligned/g:after_empty/all/garbage"

static void scratch(char dir[64])
{
    snprintf(dir, 64, "/tmp/ggfuzz-buckets-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void remove_tree(const char *dir)
{
    sh("rm -rf '%s'%s", dir, "");
}

/* Where needle first is in hay (for the order of sections); a missing one fails. */
static size_t at(const char *hay, const char *needle)
{
    const char *p = strstr(hay, needle);
    cr_assert_not_null(p, "missing: %s", needle);
    return (size_t)(p - hay);
}

/* Writes the report of the campaign directories dirs (and history, may be NULL) into out,
   tables only; returns index.html and summary.md. */
static void report(const char *const *dirs, int n, const char *history, const char *out,
                   char **html, char **md)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char err[2048];
    cr_assert_eq(gg_report_write_nights(NULL, dirs, n, history, out, NULL, err, sizeof err),
                 GG_OK, "%s", err);
    *html = file_slurp(out, "index.html", NULL);
    *md = file_slurp(out, "summary.md", NULL);
}

/* The replay command of a file of the fixture's store, as the report prints it. */
static void replay_of(const char *rel, char *cmd, size_t len)
{
    char path[PATH_MAX], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/artifacts/%s", BUCKETS, rel);
    cr_assert_not_null(realpath(path, real), "%s", path);
    snprintf(cmd, len, "ggfuzz --replay %s", real);
}

Test(reports_buckets, the_campaign_leads_with_its_bugs)
{
    char dir[64], *html, *md;
    scratch(dir);
    const char *dirs[] = {BUCKETS};
    report(dirs, 1, NULL, dir, &html, &md);

    /* The page: a lead line, the bugs' table in their order, a section per bug. */
    cr_expect(strstr(html, "<p class=\"lead\"><b>2 bugs (2 new)</b> &middot; 6 signatures, 1 "
                           "not yet triaged") != NULL, "%s", html);
    size_t bugs = at(html, "<h3 id=\"c1-bugs\">Bugs (2)</h3>");
    cr_expect_lt(bugs, at(html, "<h3 id=\"c1-time\">"), "bugs before the plots");
    cr_expect_lt(at(html, "<h3 id=\"c1-time\">"), at(html, "<h3 id=\"c1-untriaged\">"));
    cr_expect_lt(at(html, "<h3 id=\"c1-untriaged\">"), at(html, "<h3 id=\"c1-stats\">"));
    cr_expect_lt(at(html, "<tr data-bucket=\"" BUG_UNWRITTEN "\">"),
                 at(html, "<tr data-bucket=\"" BUG_VALUE "\">"), "most severe class first");
    cr_expect_eq(count(html, "<tr data-bucket="), 2);
    cr_expect_eq(count(html, "<div class=\"bug\""), 2);
    cr_expect(strstr(html, "<h4>Bug 1: <code>unwritten/grouped_bf16_cpu_serial/bf16-bf16-f32/"
                           "grouped_fwd/m:small,n:small,k:zero/g:all/some</code>") != NULL);
    cr_expect(strstr(html, " &middot; grouped_bf16_cpu_serial + mutant zero_len_ptr_skip,"
                           "tail_rows_unwritten &middot; 3 signatures, seen 9 times, first "
                           "2026-12-05T17:20:43Z, last 2026-12-05T17:21:02Z &middot; GPU 0, 1"
                           "</p>") != NULL, "bug 1's facts");
    cr_expect(strstr(html, "2 signatures, seen 3 times, first 2026-12-05T17:20:36Z, last "
                           "2026-12-05T17:20:43Z &middot; GPU 1</p>") != NULL, "bug 2's facts");
    char cmd[PATH_MAX + 32];
    replay_of("buckets/unwritten-" BUG_UNWRITTEN ".case", cmd, sizeof cmd);
    cr_expect_eq(count(html, cmd), 1, "%s", cmd);
    cr_expect_eq(count(md, cmd), 1, "%s", cmd);
    replay_of("buckets/value-" BUG_VALUE ".case", cmd, sizeof cmd);
    cr_expect_eq(count(html, cmd), 1, "%s", cmd);
    cr_expect_eq(count(md, cmd), 1, "%s", cmd);
    cr_expect(strstr(html, "<details class=\"members\"><summary>3 member signatures</summary>"));
    cr_expect(strstr(html, "<details class=\"members\"><summary>2 member signatures</summary>"));

    /* The history-dependent signature, in no bucket, keeps its mark. */
    cr_expect(strstr(html, "Not yet triaged (1 signature)</h3>") != NULL);
    cr_expect(strstr(html, "<b>Fails only after 1 earlier case</b>") != NULL);
    replay_of("snr-17f95443836b0ed9.case", cmd, sizeof cmd);
    cr_expect_eq(count(html, cmd), 1, "%s", cmd);

    /* The Markdown, in the same order. */
    cr_expect(strstr(md, "**2 bugs (2 new)** \xc2\xb7 6 signatures, 1 not yet triaged") != NULL,
              "%s", md);
    cr_expect_lt(at(md, "### Bugs (2)"), at(md, "### Not yet triaged (1 signature)"));
    cr_expect_lt(at(md, "| 1 | " BUG_UNWRITTEN " | unwritten | 3 | 9 |"),
                 at(md, "| 2 | " BUG_VALUE " | snr | 2 | 3 |"));
    cr_expect(strstr(md, "#### Bug 1: unwritten, bucket " BUG_UNWRITTEN) != NULL);
    cr_expect(strstr(md, "**Fails only after 1 earlier case**") != NULL);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_buckets, signatures_appear_only_under_their_bug)
{
    char dir[64], *html, *md;
    scratch(dir);
    const char *dirs[] = {BUCKETS};
    report(dirs, 1, NULL, dir, &html, &md);
    const char *bug_at[] = {strstr(html, "id=\"c1-b1\""), strstr(html, "id=\"c1-b2\""),
                            strstr(html, "id=\"c1-untriaged\"")};
    cr_assert(bug_at[0] && bug_at[1] && bug_at[2]);
    for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
        /* In the page once, in its bug's member table; in the Markdown once, in its list. */
        cr_expect_eq(count(html, members[i][1]), 1, "member %zu", i);
        cr_expect_eq(count(md, members[i][1]), 1, "member %zu", i);
        const char *p = strstr(html, members[i][1]);
        int first = strcmp(members[i][0], BUG_UNWRITTEN) == 0;
        cr_expect(p > bug_at[first ? 0 : 1] && p < bug_at[first ? 1 : 2], "member %zu is under "
                  "bucket %s", i, members[i][0]);
    }
    /* The untriaged one: heading and case text in the page, its line in the Markdown. */
    cr_expect_eq(count(html, UNTRIAGED), 2);
    cr_expect(strstr(html, UNTRIAGED) > bug_at[2]);
    cr_expect_eq(count(md, UNTRIAGED), 1);
    free(html);
    free(md);
    remove_tree(dir);
}

/* A member or untriaged finding of signature number i of a made-up campaign. */
static void add_finding(const char *store, int i, const char *bucket)
{
    char name[64], text[1024];
    snprintf(name, sizeof name, "unwritten-%016x.case", 0x1000 + i);
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\n"
             "mutant tail_rows_unwritten\ndtypes a=bf16 b=bf16 c=f32\nscaling none\ngroups 1\n"
             "group_lens 3\nn 10\nk 1\ndata a=uniform(-1,1) b=uniform(-1,1)\nseed 0x%x\n"
             "@observed group 0: 30 of 30 outputs unwritten, first at packed index 0\n"
             "@expect class=unwritten sig=unwritten/grouped_bf16_cpu_serial/bf16-bf16-f32/"
             "grouped_fwd/m:lt_tile,n:lt_tile,k:one/g:made_up_%d/all/structural\n"
             "@finding count=%d first_seen=2026-12-05T17:20:40Z last_seen=2026-12-05T17:20:50Z "
             "seed=0x0000000000000005 kernel=grouped_bf16_cpu_serial mutant=tail_rows_unwritten\n"
             "%s%s%s",
             i + 1, i, 1 + i % 7, bucket ? "@bucket id=" : "", bucket ? bucket : "",
             bucket ? "\n" : "");
    file_put(store, name, text);
}

/* A campaign with the fixture's bugs, n more signatures of its first bug and n untriaged ones;
   the sizes of its index.html (tables only) and summary.md. */
static void sizes_with(int n, size_t *html_len, size_t *md_len)
{
    char dir[64], camp[128], store[160], out[128];
    scratch(dir);
    snprintf(camp, sizeof camp, "%s/campaign", dir);
    snprintf(store, sizeof store, "%s/artifacts", camp);
    snprintf(out, sizeof out, "%s/out", dir);
    sh("cp -r '%s' '%s'", BUCKETS, camp);
    for (int i = 0; i < n; i++) {
        add_finding(store, 2 * i, BUG_UNWRITTEN);
        add_finding(store, 2 * i + 1, NULL);
    }
    char *html, *md;
    const char *dirs[] = {camp};
    report(dirs, 1, NULL, out, &html, &md);
    char head[64];
    snprintf(head, sizeof head, "<b>2 bugs (2 new)</b> &middot; %d signatures", 6 + 2 * n);
    cr_expect(strstr(html, head) != NULL, "%s", head);
    free(html);
    free(md);
    free(file_slurp(out, "index.html", html_len));
    free(file_slurp(out, "summary.md", md_len));
    remove_tree(dir);
}

Test(reports_buckets, the_size_follows_the_bugs_not_the_signatures)
{
    size_t html_100, md_100, html_1000, md_1000;
    sizes_with(100, &html_100, &md_100);
    sizes_with(1000, &html_1000, &md_1000);
    /* 1,800 more signatures of the same two bugs add only digits. */
    cr_expect_lt(html_1000, html_100 + 200, "index.html: %zu bytes with 206 signatures, %zu "
                 "with 2006", html_100, html_1000);
    cr_expect_lt(md_1000, md_100 + 200, "summary.md: %zu and %zu bytes", md_100, md_1000);
    cr_expect_lt(md_1000, 16 * 1024, "summary.md of 2006 signatures: %zu bytes", md_1000);
    cr_expect_lt(html_1000, 96 * 1024, "index.html of 2006 signatures: %zu bytes", html_1000);
}

Test(reports_buckets, more_members_than_shown_tell_how_to_list_them)
{
    char dir[64], camp[128], store[160], out[128], *html, *md;
    scratch(dir);
    snprintf(camp, sizeof camp, "%s/campaign", dir);
    snprintf(store, sizeof store, "%s/artifacts", camp);
    snprintf(out, sizeof out, "%s/out", dir);
    sh("cp -r '%s' '%s'", BUCKETS, camp);
    for (int i = 0; i < 60; i++)
        add_finding(store, i, i < 50 ? BUG_UNWRITTEN : NULL);
    const char *dirs[] = {camp};
    report(dirs, 1, NULL, out, &html, &md);
    char grep[512];
    snprintf(grep, sizeof grep, "grep -l &#39;^@bucket id=" BUG_UNWRITTEN "&#39; %s/*.case",
             store);
    cr_expect(strstr(html, "<summary>53 member signatures</summary>") != NULL);
    cr_expect(strstr(html, "and 13 more, the most frequent first above") != NULL);
    cr_expect(strstr(html, grep) != NULL, "%s", grep);
    snprintf(grep, sizeof grep, "- and 45 more: `grep -l '^@bucket id=" BUG_UNWRITTEN "' "
             "%s/*.case`", store);
    cr_expect(strstr(md, grep) != NULL, "%s", grep);
    /* The command lists exactly the bug's members. */
    char cmd[600], n[32];
    snprintf(cmd, sizeof cmd, "grep -l '^@bucket id=" BUG_UNWRITTEN "' %s/*.case | wc -l",
             store);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(n, sizeof n, p));
    pclose(p);
    cr_expect_eq(atoi(n), 53);
    /* 11 untriaged: 10 with their replay commands in the Markdown, then the command for all. */
    snprintf(grep, sizeof grep, "And 1 more: `grep -L '^@bucket ' %s/*.case`", store);
    cr_expect(strstr(md, grep) != NULL, "%s", grep);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_buckets, a_bucket_without_its_representative_leaves_its_members_untriaged)
{
    char dir[64], camp[128], out[128], *html, *md;
    scratch(dir);
    snprintf(camp, sizeof camp, "%s/campaign", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    sh("cp -r '%s' '%s'", BUCKETS, camp);
    sh("rm '%s/artifacts/buckets/value-%s.case'", camp, BUG_VALUE);
    const char *dirs[] = {camp};
    report(dirs, 1, NULL, out, &html, &md);
    cr_expect(strstr(html, "<b>1 bug (2 new)</b> &middot; 6 signatures, 3 not yet triaged"),
              "fuzzer_stats still says 2 new: %s", html);
    cr_expect(strstr(html, "Not yet triaged (3 signatures)</h3>") != NULL);
    cr_expect_eq(count(html, "names bucket <code>" BUG_VALUE "</code>, which has no "
                             "representative"), 2);
    cr_expect_eq(count(md, "names bucket " BUG_VALUE ", which has no representative"), 2);
    free(html);
    free(md);
    remove_tree(dir);
}

/* Sets statistic key of the campaign directory dir's fuzzer_stats to value. */
static void set_stat(const char *dir, const char *key, const char *value)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sed -i 's/^%s *:.*/%s : %s/' '%s/fuzzer_stats'", key, key, value,
             dir);
    cr_assert_eq(system(cmd), 0);
}

static void set_start(const char *dir, const char *stamp)
{
    set_stat(dir, "start_time", stamp);
}

/* A history of three nights, named out of order: the first finds the two bugs, the second only
   the unwritten one, the third both again and a third bug; and a directory that is no night. */
static void make_history(const char *hist)
{
    char night[256];
    cr_assert_eq(mkdir(hist, 0755), 0);
    snprintf(night, sizeof night, "%s/c-first", hist);
    sh("cp -r '%s' '%s'", BUCKETS, night);
    set_start(night, "2026-12-01T02:00:00Z");
    snprintf(night, sizeof night, "%s/a-second", hist);
    sh("cp -r '%s' '%s'", BUCKETS, night);
    set_start(night, "2026-12-02T02:00:00Z");
    sh("cd '%s/artifacts' && rm buckets/value-%s.case nan-*.case", night, BUG_VALUE);
    set_stat(night, "buckets", "1");
    set_stat(night, "buckets_new", "1");
    snprintf(night, sizeof night, "%s/b-third", hist);
    sh("cp -r '%s' '%s'", BUCKETS, night);
    set_start(night, "2026-12-03T02:00:00Z");
    sh("cd '%s/artifacts/buckets' && sed 's/id=%s/id=00000000000000aa/' "
       "unwritten-" BUG_UNWRITTEN ".case > unwritten-00000000000000aa.case", night,
       BUG_UNWRITTEN);
    snprintf(night, sizeof night, "%s/notes", hist);
    cr_assert_eq(mkdir(night, 0755), 0);
    file_put(night, "README", "not a night\n");
}

Test(reports_buckets, the_nights_of_a_history)
{
    char dir[64], hist[128], out[128], *html, *md;
    scratch(dir);
    snprintf(hist, sizeof hist, "%s/nightly", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    make_history(hist);
    report(NULL, 0, hist, out, &html, &md);
    cr_expect(strstr(md, "## Nights (3)") != NULL, "%s", md);
    /* By start time; the second night's bug was seen the night before, the third's new one
       was not. */
    size_t first = at(md, "| 2026-12-01 02:00 | `"), second = at(md, "| 2026-12-02 02:00 | `"),
           third = at(md, "| 2026-12-03 02:00 | `");
    cr_expect(first < second && second < third);
    cr_expect(strstr(md, "c-first` | grouped\\_bf16\\_cpu\\_serial + mutant zero\\_len\\_ptr\\_skip,"
                         "tail\\_rows\\_unwritten | 151 | 14.3 | 6 | 1 | 2 | 2 |") != NULL);
    cr_expect(strstr(md, "a-second` | grouped\\_bf16\\_cpu\\_serial + mutant zero\\_len\\_ptr\\_skip,"
                         "tail\\_rows\\_unwritten | 151 | 14.3 | 4 | 1 | 1 | 0 |") != NULL);
    cr_expect(strstr(md, "b-third` | grouped\\_bf16\\_cpu\\_serial + mutant zero\\_len\\_ptr\\_skip,"
                         "tail\\_rows\\_unwritten | 151 | 14.3 | 6 | 1 | 3 | 1 |") != NULL);
    cr_expect(strstr(md, "notes") == NULL, "a directory without a campaign is no night");
    /* The latest night in full, its new bug marked. */
    cr_expect_eq(count(md, "## Campaign "), 1);
    cr_expect(strstr(md, "b-third`\n\n**3 bugs (1 new since the earlier nights)**") != NULL);
    cr_expect(strstr(md, "| 00000000000000aa **new** |") != NULL, "%s", md);
    cr_expect_eq(count(html, "<span class=\"new\">NEW</span>"), 2, "table and section");
    cr_expect(strstr(html, "<a href=\"#campaign-1\">2026-12-03 02:00</a>") != NULL);
    free(html);
    free(md);

    /* A night that cannot be read is listed with the reason; the others still make the trend. */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/c-first", hist);
    file_put(bad, "fuzzer_stats", "start_time        : 2026-12-01T02:00:00Z\nno colon here\n");
    report(NULL, 0, hist, out, &html, &md);
    cr_expect(strstr(md, "c-first/fuzzer\\_stats:2: not a 'key : value' line |") != NULL, "%s", md);
    cr_expect(strstr(md, "| 00000000000000aa **new** |") != NULL);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_buckets, campaigns_given_are_nights_too)
{
    char dir[64], hist[128], out[128], a[160], b[160], *html, *md;
    scratch(dir);
    snprintf(hist, sizeof hist, "%s/nightly", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    make_history(hist);
    snprintf(a, sizeof a, "%s/a-second", hist);
    snprintf(b, sizeof b, "%s/b-third", hist);
    const char *dirs[] = {b, a};
    report(dirs, 2, NULL, out, &html, &md);
    cr_expect(strstr(md, "## Nights (2)") != NULL);
    cr_expect(strstr(md, "The campaigns given, by start time.") != NULL);
    cr_expect_lt(at(md, "| 2026-12-02 02:00 |"), at(md, "| 2026-12-03 02:00 |"));
    /* Both in full, in the order given: the third night's two older bugs are not new. */
    cr_expect_lt(at(md, "b-third`\n\n**3 bugs (2 new since the earlier nights)**"),
                 at(md, "a-second`\n\n**1 bug (1 new)**"), "%s", md);
    free(html);
    free(md);

    /* With the history: a night given is one night, shown in full; no other is. */
    const char *one[] = {a};
    report(one, 1, hist, out, &html, &md);
    cr_expect(strstr(md, "## Nights (3)") != NULL);
    cr_expect(strstr(md, " and those given, by start time.") != NULL);
    cr_expect_eq(count(md, "## Campaign "), 1);
    cr_expect(strstr(md, "a-second`\n\n**1 bug (0 new since the earlier nights)**") != NULL,
              "%s", md);
    cr_expect(strstr(html, "<a href=\"#campaign-1\">2026-12-02 02:00</a>") != NULL);
    free(html);
    free(md);

    /* A history that holds no night is refused. */
    char err[1024];
    snprintf(a, sizeof a, "%s/nightly/notes", dir);
    cr_expect_eq(gg_report_write_nights(NULL, NULL, 0, a, out, NULL, err, sizeof err),
                 GG_E_PARSE);
    cr_expect(strstr(err, "notes: no campaign directory in it") != NULL, "%s", err);
    remove_tree(dir);
}

Test(reports_buckets, a_campaign_of_shards_reads_as_one)
{
    char dir[64], camp[128], out[128], sdir[192], *html, *md;
    scratch(dir);
    snprintf(camp, sizeof camp, "%s/campaign", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert_eq(mkdir(camp, 0755), 0);
    sh("cp -r '%s/artifacts' '%s/artifacts'", BUCKETS, camp);
    for (int i = 0; i < 2; i++) {
        snprintf(sdir, sizeof sdir, "%s/shard-%d", camp, i);
        cr_assert_eq(mkdir(sdir, 0755), 0);
        sh("cp '%s/fuzzer_stats' '%s'", BUCKETS, sdir);
    }
    set_start(sdir, "2026-12-05T17:00:00Z");
    const char *dirs[] = {camp};
    report(dirs, 1, NULL, out, &html, &md);
    cr_expect(strstr(html, "<b>2 bugs</b> &middot; 6 signatures, 1 not yet triaged \xc2\xb7 302 "
                           "cases in 10.6 s (28.6 a second)") != NULL, "%s", html);
    cr_expect(strstr(html, "<dt>shards</dt><dd>2</dd>") != NULL);
    cr_expect(strstr(html, "<dt>started</dt><dd>2026-12-05T17:00:00Z</dd>") != NULL);
    cr_expect(strstr(html, "<dt>faults by class</dt><dd>unwritten 110, nan 8, snr 16</dd>"),
              "%s", html);
    cr_expect(strstr(html, "(a campaign of shards keeps them per shard)") != NULL);
    cr_expect(strstr(md, "| shards | 2 |") != NULL);
    free(html);
    free(md);
    remove_tree(dir);
}

static int gnuplot_on_path(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

Test(reports_buckets, plots_over_time_per_gpu_and_per_night)
{
    if (!gnuplot_on_path())
        cr_skip_test("gnuplot is not installed");
    unsetenv("GGFUZZ_GNUPLOT");
    char dir[64], hist[128], out[128], err[2048];
    scratch(dir);
    snprintf(hist, sizeof hist, "%s/nightly", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    make_history(hist);
    struct gg_report_out res;
    cr_assert_eq(gg_report_write_nights(NULL, NULL, 0, hist, out, &res, err, sizeof err), GG_OK,
                 "%s", err);
    cr_expect_eq(res.plots_failed, 0, "%s", res.note);
    cr_expect_eq(res.plots, 3, "over time, per GPU, per night: %s", res.note);
    char *html = file_slurp(out, "index.html", NULL), *md = file_slurp(out, "summary.md", NULL);
    cr_expect_eq(count(html, "src=\"data:image/png;base64,iVBORw0KGgo"), 3);
    cr_expect(strstr(html, "alt=\"bugs, signatures, coverage and cases per second over time\""));
    cr_expect(strstr(html, "alt=\"cases per second per GPU\""));
    cr_expect(strstr(html, "alt=\"bugs and cases per night\""));
    cr_expect(strstr(md, "](campaign_1.png)") && strstr(md, "](campaign_1_gpus.png)") &&
              strstr(md, "](nights.png)"));
    free(html);
    free(md);

    /* plot_data of an older ggfuzz (no bucket columns): the signatures alone, still a plot. */
    char night[256];
    snprintf(night, sizeof night, "%s/b-third", hist);
    file_put(night, "plot_data",
             "# relative_time, execs_done, execs_per_sec, faults_total, "
             "faults_unique\n0.0, 0, 0.0, 0, 0\n1.0, 9, 9.0, 2, 1\n"
             "2.0, 20, 10.0, 5, 3\n");
    cr_assert_eq(gg_report_write_nights(NULL, NULL, 0, hist, out, &res, err, sizeof err), GG_OK,
                 "%s", err);
    cr_expect_eq(res.plots_failed, 0, "%s", res.note);
    cr_expect_eq(res.plots, 3, "%s", res.note);
    remove_tree(dir);
}

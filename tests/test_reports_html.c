/*
 * test_reports_html.c — the HTML and Markdown report: a suite result with one bad expert shows
 * its rows, the bad group highlighted and embedded PNG plots that decode to the files beside
 * them; without gnuplot the report has tables only and says so; malformed inputs are refused
 * with the file and the field named; a campaign directory of an older ggfuzz, whose store has
 * no buckets, lists its signatures as not yet triaged with their cases and replay commands.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"

#include "reports/gg_report.h"
#include "report_fixture.h"

#define REPORT_DATA GG_TEST_DATA "/report"
#define SUITE REPORT_DATA "/suite_bad_expert.json"
#define CAMPAIGN REPORT_DATA "/campaign"

/* The three findings of the campaign fixture. */
static const char *const findings[][2] = {
    {"snr-b5078d7afabc4317.case", "snr/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_fwd/"
                                  "m:tail,n:tail,k:tail/g:all/all/garbage"},
    {"snr-f170d9c80bb64411.case", "snr/grouped_bf16_cpu_serial/bf16-bf16-f32/grouped_fwd/"
                                  "m:tail,n:lt_tile,k:tail/g:all/all/garbage"},
    {"snr-f70bd51c7c6b4a19.case", "snr/grouped_bf16_cpu_serial/bf16-bf16-bf16/grouped_dgrad/"
                                  "m:lt_tile,n:aligned,k:aligned/g:all/all/garbage"}};

static void scratch(char dir[64])
{
    snprintf(dir, 64, "/tmp/ggfuzz-report-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Removes a scratch directory and the files in it (one level). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            remove_tree(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    char *dirs = strdup(path ? path : ""), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char exe[512];
        snprintf(exe, sizeof exe, "%s/gnuplot", d);
        found = access(exe, X_OK) == 0;
    }
    free(dirs);
    return found;
}

/* Decodes the base64 text at s (up to the closing quote) into a malloc'd buffer. */
static unsigned char *unbase64(const char *s, size_t *len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strcspn(s, "\"");
    unsigned char *out = malloc(n / 4 * 3 + 3);
    cr_assert_not_null(out);
    size_t at = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        const char *p = strchr(alphabet, s[i]);
        cr_assert(p != NULL && s[i] != '\0', "not base64: '%c'", s[i]);
        acc = acc << 6 | (unsigned)(p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[at++] = (unsigned char)(acc >> bits & 0xff);
        }
    }
    *len = at;
    return out;
}

/* The PNG embedded under alt text alt must be the bytes of dir/png. */
static void expect_embedded(const char *html, const char *alt, const char *dir, const char *png)
{
    char key[256];
    snprintf(key, sizeof key, "alt=\"%s\" src=\"data:image/png;base64,", alt);
    const char *at = strstr(html, key);
    cr_assert_not_null(at, "no embedded plot '%s'", alt);
    size_t n, file_len;
    unsigned char *bytes = unbase64(at + strlen(key), &n);
    char *file = file_slurp(dir, png, &file_len);
    cr_expect_eq(n, file_len, "%s: %zu bytes embedded, %zu on disk", png, n, file_len);
    cr_expect(n == file_len && memcmp(bytes, file, n) == 0, "%s differs from its embedding", png);
    cr_expect(n > 8 && memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", png);
    free(bytes);
    free(file);
}

/* No temporary plot file stays behind in dir. */
static void expect_clean(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        cr_expect(strncmp(e->d_name, ".plot-", 6) != 0 && strstr(e->d_name, ".tmp.") == NULL,
                  "left behind: %s", e->d_name);
    closedir(d);
}

/* The parts of a report of the suite fixture that do not depend on plots. */
static void expect_suite_tables(const char *html, const char *md)
{
    const char *labels[] = {
        "dsv3_ep8_balanced_fwd_decode_bf16",   "dsv3_ep8_skewed_fwd_prefill_bf16",
        "qwen3_ep8_extreme_dgrad_decode_bf16", "mixtral_ep1_skewed_fwd_prefill_mxfp8",
        "dense_smallm_decode_bf16",            "dsv3_ep8_extreme_fwd_decode_bf16"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++) {
        /* In the table a name may break after each '_'. */
        char cell[256];
        size_t at = (size_t)snprintf(cell, sizeof cell, "<td><b>");
        for (const char *p = labels[i]; *p; p++)
            at += (size_t)snprintf(cell + at, sizeof cell - at, *p == '_' ? "_<wbr>" : "%c", *p);
        snprintf(cell + at, sizeof cell - at, "</b>");
        cr_expect(strstr(html, cell) != NULL, "case %s missing", labels[i]);
    }
    cr_expect(strstr(html, "<div class=\"gate fail\">GATE FAIL</div>") != NULL);
    cr_expect_eq(count(html, "<tr class=\""), 7 + count(html, "<tr class=\"bad\">"),
                 "one row per case");
    cr_expect(strstr(html, "<tr class=\"fail\" id=\"case-2\">") != NULL, "failing row");
    cr_expect(strstr(html, "<tr class=\"regressed\" id=\"case-4\">") != NULL, "regressed row");
    cr_expect(strstr(html, "<tr class=\"skipped\" id=\"case-5\">") != NULL, "skipped row");
    cr_expect(strstr(html, "<tr class=\"error\" id=\"case-6\">") != NULL, "error row");
    /* The one bad expert: group 5 of the failing case, and no other group, highlighted. */
    cr_expect_eq(count(html, "<tr class=\"bad\">"), 1);
    cr_expect(strstr(html, "<tr class=\"bad\"><td class=\"num\">5</td><td class=\"num\">61</td>"
                           "<td class=\"num\">12.3</td>") != NULL, "group 5 highlighted");
    cr_expect(strstr(html, "1 group below threshold:</b> <b>g5</b> (12.3 dB)") != NULL);
    /* Every input string is escaped. */
    cr_expect(strstr(html, "limit &lt;64 GiB&gt; &amp; more") != NULL);
    cr_expect(strstr(html, "<64 GiB>") == NULL);

    cr_expect(strstr(md, "**Gate: FAIL**") != NULL);
    cr_expect(strstr(md, "| 2 | dsv3\\_ep8\\_skewed\\_fwd\\_prefill\\_bf16 |") != NULL, "%s", md);
    cr_expect(strstr(md, "| **5** | 61 | **12.3** | **-37.7** | **below threshold** |") != NULL);
    cr_expect(strstr(md, "limit &lt;64 GiB&gt; &amp; more") != NULL);
}

Test(reports_html, suite_with_one_bad_expert)
{
    if (!gnuplot_on_path())
        cr_skip_test("gnuplot is not installed");
    unsetenv("GGFUZZ_GNUPLOT");
    char dir[64], err[1024];
    scratch(dir);
    struct gg_report_out out;
    cr_assert_eq(gg_report_write(SUITE, NULL, 0, dir, &out, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(out.plots_failed, 0, "%s", out.note);
    cr_expect_eq(out.plots, 1 + 5, "the margin plot and one per worst case with groups");
    cr_expect_str_empty(out.note);

    char *html = file_slurp(dir, "index.html", NULL), *md = file_slurp(dir, "summary.md", NULL);
    expect_suite_tables(html, md);
    cr_expect_eq(count(html, "<img "), 6);
    cr_expect_eq(count(html, "src=\"data:image/png;base64,iVBORw0KGgo"), 6, "PNG data URIs");
    expect_embedded(html, "SNR margin per case", dir, "snr_margin.png");
    expect_embedded(html, "SNR per group of dsv3_ep8_skewed_fwd_prefill_bf16", dir,
                    "groups_1.png");
    cr_expect(strstr(html, "<link") == NULL && strstr(html, "<script") == NULL,
              "the page loads nothing");
    cr_expect(strstr(html, "class=\"note\"") == NULL, "no note when every plot was made");
    cr_expect(strstr(md, "![SNR margin per case](snr_margin.png)") != NULL);
    cr_expect(strstr(md, "](groups_1.png)") != NULL);
    expect_clean(dir);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_html, without_gnuplot_tables_only)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], err[1024];
    scratch(dir);
    struct gg_report_out out;
    cr_assert_eq(gg_report_write(SUITE, NULL, 0, dir, &out, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(out.plots, 0);
    cr_expect(strstr(out.note, "GGFUZZ_GNUPLOT=/nonexistent/gnuplot") != NULL, "%s", out.note);

    char *html = file_slurp(dir, "index.html", NULL), *md = file_slurp(dir, "summary.md", NULL);
    expect_suite_tables(html, md);
    cr_expect(strstr(html, "<img") == NULL);
    cr_expect(strstr(html, "<p class=\"note\">Plots were skipped") != NULL);
    cr_expect(strstr(md, "![") == NULL);
    cr_expect(strstr(md, "> Plots were skipped") != NULL);
    char png[128];
    snprintf(png, sizeof png, "%s/snr_margin.png", dir);
    cr_expect_neq(access(png, F_OK), 0, "no plot files");
    expect_clean(dir);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_html, gnuplot_failure_is_reported)
{
    /* An executable that is not gnuplot: every plot fails, the report is still written. */
    setenv("GGFUZZ_GNUPLOT", "/bin/false", 1);
    char dir[64], err[1024];
    scratch(dir);
    struct gg_report_out out;
    cr_assert_eq(gg_report_write(SUITE, NULL, 0, dir, &out, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(out.plots, 0);
    cr_expect_eq(out.plots_failed, 6);
    cr_expect(strstr(out.note, "6 plots failed: gnuplot exited with status 1") != NULL, "%s",
              out.note);
    char *html = file_slurp(dir, "index.html", NULL);
    cr_expect(strstr(html, "<img") == NULL);
    cr_expect(strstr(html, "Some plots could not be made") != NULL);
    expect_clean(dir);
    free(html);
    remove_tree(dir);
}

Test(reports_html, malformed_suite_names_file_and_field)
{
    static const char *const docs[][2] = {
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1, \"cases\": [{\"id\": \"a\", \"kernel\": "
         "\"k\", \"verdict\": \"maybe\"}]}", "cases[0].verdict: not one of pass"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1, \"cases\": [{\"id\": \"a\", \"kernel\": "
         "\"k\", \"verdict\": \"pass\", \"groups\": [{\"g\": 0, \"snr_db\": 1}, {\"g\": 1, "
         "\"snr_db\": \"high\"}]}]}", "cases[0].groups[1].snr_db: expected a number or null, "
         "found a string"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1, \"cases\": [{\"kernel\": \"k\", "
         "\"verdict\": \"pass\"}]}", "cases[0].id: missing"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1}", "cases: missing"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 2, \"cases\": []}", "version: version 2"},
        {"{\"format\": \"ggfuzz-run\", \"version\": 1, \"cases\": []}", "format: not"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1, \"gate\": {\"reasons\": \"x\"}, "
         "\"cases\": []}", "gate.reasons: expected an array"},
        {"{\"format\": \"ggfuzz-suite\", \"version\": 1, \"gate\": {\"reasons\": [\"a\", 3]}, "
         "\"cases\": []}", "gate.reasons[1]: expected a string, found a number"},
        {"[1, 2]", "(top level): expected an object, found an array"},
    };
    char dir[64], out_dir[96], err[1024], path[128];
    scratch(dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        file_put(dir, "bad.json", docs[i][0]);
        snprintf(path, sizeof path, "%s/bad.json", dir);
        err[0] = '\0';
        cr_expect_eq(gg_report_html_write(path, NULL, out_dir, err, sizeof err), GG_E_PARSE,
                     "document %zu", i);
        cr_expect(strncmp(err, path, strlen(path)) == 0, "names the file: %s", err);
        cr_expect(strstr(err, docs[i][1]) != NULL, "document %zu: '%s' lacks '%s'", i, err,
                  docs[i][1]);
        cr_expect_neq(access(out_dir, F_OK), 0, "nothing is written for a bad input");
    }
    cr_expect_eq(gg_report_html_write(REPORT_DATA "/suite_bad_field.json", NULL, out_dir, err,
                                      sizeof err), GG_E_PARSE);
    cr_expect(strstr(err, "suite_bad_field.json: cases[1].threshold_db: expected a number or "
                          "null, found a string") != NULL, "%s", err);
    cr_expect_eq(gg_report_html_write(REPORT_DATA "/suite_truncated.json", NULL, out_dir, err,
                                      sizeof err), GG_E_PARSE);
    cr_expect(strstr(err, "suite_truncated.json:") && strstr(err, "not valid JSON"), "%s", err);
    cr_expect_eq(gg_report_html_write(REPORT_DATA "/no_such.json", NULL, out_dir, err, sizeof err),
                 GG_E_IO);
    cr_expect(strstr(err, "no_such.json: cannot read") != NULL, "%s", err);
    cr_expect_eq(gg_report_html_write(NULL, NULL, out_dir, err, sizeof err), GG_E_INVAL);
    remove_tree(dir);
}

Test(reports_html, optional_fields_and_exact_groups)
{
    /* What a suite run writes beside the required fields: null class and SNRs, an empty reason
       list, a mutant, the verdict's detail, and groups whose SNR is exact. */
    static const char doc[] =
        "{\"format\": \"ggfuzz-suite\", \"version\": 1, \"mutant\": \"missing_fence\", "
        "\"gate\": {\"verdict\": \"pass\", \"baseline\": null, \"reasons\": []}, \"cases\": ["
        "{\"id\": \"c1\", \"kernel\": \"grouped_bf16_cpu_tiled\", \"mutant\": \"missing_fence\", "
        "\"verdict\": \"pass\", \"class\": \"pass\", \"threshold_db\": 90.0, "
        "\"worst_group\": null, \"worst_group_snr_db\": null, \"margin_db\": null, "
        "\"groups\": [{\"g\": 0, \"rows\": 0, \"snr_db\": null, \"exact\": false}, "
        "{\"g\": 1, \"rows\": 4, \"snr_db\": null, \"exact\": true}]}, "
        "{\"id\": \"c2\", \"kernel\": \"k\", \"verdict\": \"skipped\", \"class\": null, "
        "\"detail\": \"kernel k does not support this case\", \"groups\": []}]}";
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], path[96], out_dir[96], err[1024];
    scratch(dir);
    file_put(dir, "suite.json", doc);
    snprintf(path, sizeof path, "%s/suite.json", dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    cr_assert_eq(gg_report_html_write(path, NULL, out_dir, err, sizeof err), GG_OK, "%s", err);
    char *html = file_slurp(out_dir, "index.html", NULL),
         *md = file_slurp(out_dir, "summary.md", NULL);
    cr_expect(strstr(html, "<div class=\"gate pass\">GATE PASS</div>") != NULL);
    cr_expect(strstr(html, "grouped_bf16_cpu_tiled + mutant missing_fence") != NULL);
    cr_expect(strstr(html, "<dt>mutant</dt><dd>missing_fence</dd>") != NULL);
    cr_expect(strstr(html, "<td class=\"num\">exact</td>") != NULL, "exact worst group");
    cr_expect(strstr(html, "No case has per-group numbers.") != NULL, "exact groups are not worst");
    cr_expect(strstr(html, "kernel k does not support this case") != NULL, "detail shown");
    cr_expect(strstr(md, "| exact |") != NULL, "%s", md);
    free(html);
    free(md);
    remove_tree(dir);
}

/* The campaign fixture's report: statistics, and, since an older ggfuzz filed no buckets, every
   signature as not yet triaged with its case and replay command. */
static void expect_campaign(const char *html, const char *md)
{
    cr_expect(strstr(html, "grouped_bf16_cpu_serial") && strstr(html, "zero_len_ptr_skip"));
    cr_expect(strstr(html, "<h3 id=\"c1-bugs\">Bugs (0)</h3>") != NULL);
    cr_expect(strstr(html, "<h3 id=\"c1-untriaged\">Not yet triaged (3 signatures)</h3>") !=
              NULL);
    cr_expect(strstr(html, "This store has no buckets") != NULL);
    cr_expect(strstr(md, "### Bugs (0)") != NULL);
    cr_expect(strstr(md, "### Not yet triaged (3 signatures)") != NULL);
    for (size_t i = 0; i < sizeof findings / sizeof *findings; i++) {
        char path[PATH_MAX], real[PATH_MAX], cmd[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/artifacts/%s", CAMPAIGN, findings[i][0]);
        cr_assert_not_null(realpath(path, real));
        snprintf(cmd, sizeof cmd, "ggfuzz --replay %s", real);
        cr_expect_eq(count(html, findings[i][1]), 2, "signature %zu: heading, case text", i);
        cr_expect_eq(count(md, findings[i][1]), 1, "signature %zu in the Markdown", i);
        cr_expect_eq(count(html, cmd), 1, "html replay command %s", cmd);
        cr_expect_eq(count(md, cmd), 1, "md replay command %s", cmd);
    }
    /* The minimised cases, inline (folded) and escaped in the page. */
    cr_expect(strstr(html, "group_lens 0*4096 11\nn 256\nk 2048") != NULL);
    cr_expect(strstr(html, "@observed group 4096: snr 0.0 dB &lt; 50 dB") != NULL);
    cr_expect(strstr(md, "```sh\nggfuzz --replay ") != NULL);
}

Test(reports_html, campaign_signatures_and_replay_commands)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], err[1024];
    scratch(dir);
    cr_assert_eq(gg_report_html_write(NULL, CAMPAIGN, dir, err, sizeof err), GG_OK, "%s", err);
    char *html = file_slurp(dir, "index.html", NULL), *md = file_slurp(dir, "summary.md", NULL);
    expect_campaign(html, md);
    cr_expect(strstr(html, "<dt>executions</dt><dd>27</dd>") != NULL);
    cr_expect(strstr(html, "<dt>faults by class</dt><dd>snr 3</dd>") != NULL);
    cr_expect(strstr(html, "id=\"suite\"") == NULL, "no suite section without a suite");
    free(html);
    free(md);

    /* The findings store itself: its statistics come from the directory above it. */
    cr_assert_eq(gg_report_html_write(NULL, CAMPAIGN "/artifacts", dir, err, sizeof err), GG_OK,
                 "%s", err);
    html = file_slurp(dir, "index.html", NULL);
    md = file_slurp(dir, "summary.md", NULL);
    expect_campaign(html, md);
    cr_expect(strstr(html, "<dt>executions</dt><dd>27</dd>") != NULL);
    free(html);
    free(md);
    remove_tree(dir);
}

/* Copies CAMPAIGN/from/name to dir/name. */
static void copy_fixture(const char *from, const char *name, const char *dir)
{
    char src[256];
    snprintf(src, sizeof src, "%s%s", CAMPAIGN, from);
    char *text = file_slurp(src, name, NULL);
    file_put(dir, name, text);
    free(text);
}

Test(reports_html, statistics_and_findings_in_one_directory)
{
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[64], out_dir[96], err[1024];
    scratch(dir);
    copy_fixture("", "fuzzer_stats", dir);
    /* where a case's time went, as a campaign of a GPU kernel records it */
    char *stats = file_slurp(dir, "fuzzer_stats", NULL), with[1 << 14];
    snprintf(with, sizeof with,
             "%scase_ms_worker    : 22.710\ncase_ms_setup     : 0.460\n"
             "case_ms_device_buffers : 9.600\ncase_ms_release   : 5.430\n"
             "gpu_busy_estimate : 0.63\n",
             stats);
    file_put(dir, "fuzzer_stats", with);
    free(stats);
    copy_fixture("", "plot_data", dir);
    for (size_t i = 0; i < sizeof findings / sizeof *findings; i++)
        copy_fixture("/artifacts", findings[i][0], dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    cr_assert_eq(gg_report_html_write(NULL, dir, out_dir, err, sizeof err), GG_OK, "%s", err);
    char *html = file_slurp(out_dir, "index.html", NULL);
    cr_expect(strstr(html, "<dt>executions</dt><dd>27</dd>") != NULL);
    cr_expect(strstr(html, "<dt>a case in a worker</dt><dd>22.710 ms: setup 0.460, device "
                           "buffers 9.600, release 5.430</dd>") != NULL,
              "where a case's time went");
    cr_expect(strstr(html, "<dt>GPU busy (estimate)</dt><dd>0.63</dd>") != NULL);
    char *md = file_slurp(out_dir, "summary.md", NULL);
    cr_expect(strstr(md, "| a case in a worker | 22.710 ms: setup 0.460, device buffers 9.600, "
                         "release 5.430 |") != NULL,
              "%s", md);
    free(md);
    cr_expect(strstr(html, "Not yet triaged (3 signatures)</h3>") != NULL);
    for (size_t i = 0; i < sizeof findings / sizeof *findings; i++)
        cr_expect(strstr(html, findings[i][1]) != NULL, "signature %zu", i);
    free(html);
    remove_tree(dir);
}

Test(reports_html, suite_and_campaign_with_plots)
{
    if (!gnuplot_on_path())
        cr_skip_test("gnuplot is not installed");
    unsetenv("GGFUZZ_GNUPLOT");
    char dir[64], err[1024];
    scratch(dir);
    const char *camps[] = {CAMPAIGN, CAMPAIGN "/artifacts"};
    struct gg_report_out out;
    cr_assert_eq(gg_report_write(SUITE, camps, 2, dir, &out, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(out.plots, 6 + 2 + 1, "suite, two campaigns, their nights: %s", out.note);
    char *html = file_slurp(dir, "index.html", NULL), *md = file_slurp(dir, "summary.md", NULL);
    expect_suite_tables(html, md);
    expect_embedded(html, "bugs, signatures, coverage and cases per second over time", dir,
                    "campaign_1.png");
    expect_embedded(html, "bugs and cases per night", dir, "nights.png");
    cr_expect(strstr(html, "id=\"campaign-2\"") != NULL);
    cr_expect(strstr(md, "![bugs, signatures, coverage and cases per second over "
                         "time](campaign_2.png)") != NULL);
    expect_clean(dir);
    free(html);
    free(md);
    remove_tree(dir);
}

Test(reports_html, bad_campaign_directories)
{
    char dir[64], out_dir[96], err[1024], path[128];
    scratch(dir);
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    cr_expect_eq(gg_report_html_write(NULL, REPORT_DATA "/no_such_dir", out_dir, err, sizeof err),
                 GG_E_IO);
    cr_expect(strstr(err, "no_such_dir: cannot open the campaign directory") != NULL, "%s", err);
    /* An empty directory is not a campaign. */
    cr_expect_eq(gg_report_html_write(NULL, dir, out_dir, err, sizeof err), GG_E_PARSE);
    cr_expect(strstr(err, "not a campaign directory") != NULL, "%s", err);
    /* A broken plot_data row is named by file and line. */
    file_put(dir, "fuzzer_stats", "kernel            : k\nexecs_done        : 2\n");
    file_put(dir, "plot_data",
             "# relative_time, execs_done, faults_total\n0.0, 0, 0\n1.0, two, 0\n");
    snprintf(path, sizeof path, "%s/plot_data:3:", dir);
    cr_expect_eq(gg_report_html_write(NULL, dir, out_dir, err, sizeof err), GG_E_PARSE);
    cr_expect(strstr(err, path) != NULL && strstr(err, "expected 3 comma-separated numbers"),
              "%s", err);
    file_put(dir, "plot_data", "# when, what\n0.0, 0\n");
    cr_expect_eq(gg_report_html_write(NULL, dir, out_dir, err, sizeof err), GG_E_PARSE);
    cr_expect(strstr(err, "relative_time") != NULL, "%s", err);
    /* Statistics alone (no plot_data, no findings) make a report. */
    snprintf(path, sizeof path, "%s/plot_data", dir);
    unlink(path);
    setenv("GGFUZZ_GNUPLOT", "/nonexistent/gnuplot", 1);
    cr_expect_eq(gg_report_html_write(NULL, dir, out_dir, err, sizeof err), GG_OK, "%s", err);
    char *html = file_slurp(out_dir, "index.html", NULL);
    cr_expect(strstr(html, "No plot_data rows in this directory.") != NULL);
    cr_expect(strstr(html, "No findings store was found.") != NULL);
    free(html);
    remove_tree(dir);
}

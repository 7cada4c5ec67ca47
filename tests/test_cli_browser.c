/*
 * test_cli_browser.c — the HTML report in a real browser. `ggfuzz report` writes the index.html
 * of a campaign with two bugs and a signature in no bucket; headless Chromium opens it inside a
 * page of the test's, which reads the loaded document and writes what it found into its own:
 * the title, every image decoded, no script, the bucket table with the fixture's two buckets in
 * their order, the bugs' sections before the signatures not yet triaged. The browser's console
 * must stay silent (a script error is logged there). The page is also opened alone, as a person
 * would, and its DOM must hold the bucket table.
 *
 * Chromium is GGFUZZ_TEST_CHROMIUM, else chromium or chromium-browser on PATH (`sh .ci/deps browser`).
 * Without it the test is skipped with a message, unless GGFUZZ_TEST_BROWSER_REQUIRED=1 (set by .ci/run),
 * which makes a missing browser a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"
#include "fuzz/case/gg_case.h"

#define BUCKETS GG_TEST_DATA "/report/buckets"
#define BUG_UNWRITTEN "b2ae7d4cf5edaac9"
#define BUG_VALUE "1a8d3166c7d25cfa"

/* The test's page: loads index.html in a frame and lists what the loaded document holds. */
static const char probe_page[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probe</title></head><body>\n"
    "<pre id=\"result\">not loaded</pre>\n"
    "<iframe id=\"report\" src=\"index.html\" width=\"1280\" height=\"900\"></iframe>\n"
    "<script>\n"
    "var errors = [];\n"
    "window.addEventListener('error', function (e) { errors.push(String(e.message)); });\n"
    "document.getElementById('report').addEventListener('load', function () {\n"
    "  var out = [];\n"
    "  try {\n"
    "    var d = this.contentDocument, i;\n"
    "    out.push('title ' + d.title);\n"
    "    var broken = 0;\n"
    "    for (i = 0; i < d.images.length; i++)\n"
    "      if (!d.images[i].complete || d.images[i].naturalWidth === 0) broken++;\n"
    "    out.push('images ' + d.images.length + ' broken ' + broken);\n"
    "    out.push('scripts ' + d.scripts.length);\n"
    "    var rows = d.querySelectorAll('table.buckets tbody tr');\n"
    "    for (i = 0; i < rows.length; i++)\n"
    "      out.push('bucket ' + rows[i].getAttribute('data-bucket') + ' cells ' +\n"
    "               rows[i].cells.length);\n"
    "    out.push('bug sections ' + d.querySelectorAll('div.bug').length);\n"
    "    out.push('member lists ' + d.querySelectorAll('div.bug details.members').length);\n"
    "    var hs = d.querySelectorAll('section h3');\n"
    "    for (i = 0; i < hs.length; i++) out.push('h3 ' + hs[i].textContent);\n"
    "  } catch (e) { out.push('exception ' + e); }\n"
    "  for (var k = 0; k < errors.length; k++) out.push('error ' + errors[k]);\n"
    "  out.push('end');\n"
    "  document.getElementById('result').textContent = out.join('\\n');\n"
    "});\n"
    "</script></body></html>\n";

/* The browser to drive, or NULL. */
static const char *chromium(char *buf, size_t len)
{
    const char *env = getenv("GGFUZZ_TEST_CHROMIUM");
    if (env && env[0])
        return access(env, X_OK) == 0 ? env : NULL;
    const char *names[] = {"chromium", "chromium-browser"};
    const char *path = getenv("PATH");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *dirs = strdup(path && path[0] ? path : "/usr/bin:/bin"), *save = NULL;
        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            snprintf(buf, len, "%s/%s", d, names[i]);
            if (access(buf, X_OK) == 0) {
                free(dirs);
                return buf;
            }
        }
        free(dirs);
    }
    return NULL;
}

/* Loads file://page in headless Chromium (a fresh profile under dir) and puts the DOM it dumps
   into dom and its log into log_path; returns the exit code. */
static int load(const char *browser, const char *dir, const char *page, char *dom, size_t len,
                const char *log_path)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "profile=$(mktemp -d '%s/profile-XXXXXX') && timeout 120 '%s' --headless "
             "--no-sandbox --disable-gpu --disable-quic --no-first-run "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--allow-file-access-from-files --enable-logging=stderr --v=0 "
             "--user-data-dir=\"$profile\" --dump-dom 'file://%s' 2>'%s'; rc=$?; "
             "rm -rf \"$profile\"; exit $rc",
             dir, browser, page, log_path);
    return cli_shell(cmd, dom, len);
}

static char dom[1 << 20];

Test(cli_browser, the_report_loads_in_chromium_with_its_bucket_table, .timeout = 300)
{
    char buf[4096];
    const char *browser = chromium(buf, sizeof buf);
    const char *required = getenv("GGFUZZ_TEST_BROWSER_REQUIRED");
    if (browser == NULL && required && strcmp(required, "1") == 0)
        cr_assert_fail("GGFUZZ_TEST_BROWSER_REQUIRED=1 but no chromium was found (GGFUZZ_TEST_CHROMIUM, or "
                       "chromium on PATH: sh .ci/deps browser)");
    if (browser == NULL) {
        fprintf(stderr, "test_cli_browser: skipped: chromium is not installed (GGFUZZ_TEST_CHROMIUM, or "
                "chromium on PATH: sh .ci/deps browser)\n");
        cr_skip_test("chromium is not installed (GGFUZZ_TEST_CHROMIUM, or chromium on PATH): the report "
                     "is not opened in a browser");
    }

    char dir[256], out[8192], args[1024], path[512], log_path[512];
    cli_temp_dir(dir, sizeof dir, "browser");
    snprintf(args, sizeof args, "report --campaign %s -o %s", BUCKETS, dir);
    cr_assert_eq(cli_ggfuzz_in(dir, args, out, sizeof out), 0, "%s", out);
    snprintf(path, sizeof path, "%s/probe.html", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(probe_page, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/index.html", dir);
    char *html = NULL;
    size_t html_len = 0;
    char err[512];
    cr_assert_eq(gg_file_read(path, 1 << 24, &html, &html_len, err, sizeof err), GG_OK, "%s",
                 err);
    size_t images = 0;
    for (const char *p = html; (p = strstr(p, "<img ")) != NULL; p++)
        images++;
    free(html);

    /* In the test's page: what the loaded report holds. */
    snprintf(log_path, sizeof log_path, "%s/chromium.log", dir);
    snprintf(path, sizeof path, "%s/probe.html", dir);
    cr_assert_eq(load(browser, dir, path, dom, sizeof dom, log_path), 0, "%s", dom);
    char want[256];
    cr_expect(strstr(dom, "\nend</pre>") != NULL, "the probe did not finish: %s", dom);
    cr_expect(strstr(dom, ">title ggfuzz report\n") != NULL, "%s", dom);
    snprintf(want, sizeof want, "\nimages %zu broken 0\n", images);
    cr_expect(strstr(dom, want) != NULL, "%zu images, all decoded: %s", images, dom);
    cr_expect(strstr(dom, "\nscripts 0\n") != NULL, "%s", dom);
    const char *rows = strstr(dom, "\nbucket " BUG_UNWRITTEN " cells 9\nbucket " BUG_VALUE
                                   " cells 9\nbug sections 2\nmember lists 2\n");
    cr_expect(rows != NULL, "the bucket table, in order, and a section per bug: %s", dom);
    const char *bugs = strstr(dom, "\nh3 Bugs (2)\n"),
               *untriaged = strstr(dom, "\nh3 Not yet triaged (1 signature)\n");
    cr_expect(bugs && untriaged && bugs < untriaged, "bugs lead: %s", dom);
    cr_expect(strstr(dom, "\nexception ") == NULL && strstr(dom, "\nerror ") == NULL, "%s",
              dom);
    char log[1 << 14] = "";
    snprintf(args, sizeof args, "grep 'CONSOLE' '%s' || true", log_path);
    cli_shell(args, log, sizeof log);
    cr_expect_str_empty(log, "the browser's console: %s", log);

    /* Alone, as a person opens it. */
    snprintf(path, sizeof path, "%s/index.html", dir);
    cr_assert_eq(load(browser, dir, path, dom, sizeof dom, log_path), 0, "%s", dom);
    cr_expect(strstr(dom, "<table class=\"buckets\" id=\"c1-buckets\">") != NULL, "%s", dom);
    cr_expect(strstr(dom, "<tr data-bucket=\"" BUG_UNWRITTEN "\">") != NULL);
    cli_shell(args, log, sizeof log);
    cr_expect_str_empty(log, "the browser's console: %s", log);
    cli_remove_dir(dir);
}

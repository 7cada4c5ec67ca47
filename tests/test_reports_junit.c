/*
 * test_reports_junit.c — the JUnit XML writer: the file is well-formed XML (checked by xmllint,
 * Debian's libxml2-utils), the counts in the testsuite attributes match the cases, and hostile
 * text (markup characters, quotes, control characters, invalid UTF-8) survives as escaped text
 * that an XML parser reads back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "reports/gg_report.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs a shell command; returns its exit code and its stdout in out (xmllint --xpath ends its
   answer with a newline of its own, taken off here). */
static int sh(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    if (n > 0 && out[n - 1] == '\n')
        out[n - 1] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void need_xmllint(void)
{
    char out[256];
    if (sh("command -v xmllint", out, sizeof out) != 0)
        cr_skip_test("xmllint (libxml2-utils) is not installed");
}

static const char HOSTILE[] = "a<b & c>d \"quoted\" 'single' tab\tnl\nbell\x07 esc\x1b bad\xff\xfe "
                              "utf8 \xce\xbc\xe2\x80\x94 ]]> end";

static void write_sample(const char *path)
{
    const struct gg_junit_case cases[] = {
        {"suite.quick.deepseek-v3", "dsv3_ep8 on grouped_bf16_cpu_tiled", 1.5, GG_JUNIT_PASS, NULL,
         NULL, NULL, "PASS line"},
        {"suite.quick.qwen3", HOSTILE, 0.25, GG_JUNIT_FAILURE, HOSTILE, "snr", HOSTILE, NULL},
        {"suite.quick.qwen3", "skipped one", 0, GG_JUNIT_SKIPPED, "kernel does not support", NULL,
         NULL, NULL},
        {"suite.quick.mixtral", "broken", 0, GG_JUNIT_ERROR, "case needs 9 GiB", "error", NULL, NULL},
        {"suite.quick.mixtral", "regressed", 2, GG_JUNIT_FAILURE, "dropped 3 dB", "regressed", NULL,
         NULL},
    };
    struct gg_junit_suite s = {"ggfuzz suite quick", "2026-01-02T03:04:05Z", "host<1>", 3.75,
                               cases, sizeof cases / sizeof cases[0]};
    char err[512];
    cr_assert_eq(gg_report_junit_write(&s, path, err, sizeof err), GG_OK, "%s", err);
}

Test(reports_junit, well_formed_with_counts)
{
    need_xmllint();
    char path[] = "/tmp/ggfuzz-junit-XXXXXX.xml";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    close(fd);
    write_sample(path);
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", path);
    cr_expect_eq(sh(cmd, out, sizeof out), 0, "xmllint: %s", out);
    const char *xml = slurp(path);
    cr_expect(strstr(xml, "<testsuite name=\"ggfuzz suite quick\" tests=\"5\" failures=\"2\" "
                          "errors=\"1\" skipped=\"1\""), "%s", xml);
    cr_expect(strstr(xml, "hostname=\"host&lt;1&gt;\""), "%s", xml);
    cr_expect(strstr(xml, "<skipped message=\"kernel does not support\"/>"), "%s", xml);
    cr_expect(strstr(xml, "<error message=\"case needs 9 GiB\" type=\"error\"/>"), "%s", xml);
    cr_expect(strstr(xml, "<system-out>PASS line</system-out>"), "%s", xml);
    cr_expect_null(strstr(xml, "\x07"));
    cr_expect_null(strstr(xml, "\xff"));
    /* Counting elements with an XPath: every failure belongs to a test case. */
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'count(//testcase/failure)' '%s'", path);
    cr_expect_eq(sh(cmd, out, sizeof out), 0);
    cr_expect_eq(atoi(out), 2, "%s", out);
    unlink(path);
}

Test(reports_junit, hostile_text_reads_back)
{
    need_xmllint();
    char path[] = "/tmp/ggfuzz-junit-XXXXXX.xml";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    close(fd);
    write_sample(path);
    char cmd[512], out[4096];
    /* The attribute keeps tab and newline (escaped as character references), the body too; the
       bell, escape and invalid bytes come back as U+FFFD. */
    static const char expect[] = "a<b & c>d \"quoted\" 'single' tab\tnl\nbell\xef\xbf\xbd esc"
                                 "\xef\xbf\xbd bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xce\xbc\xe2\x80\x94"
                                 " ]]> end";
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[2]/failure/@message)' '%s'",
             path);
    cr_assert_eq(sh(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, expect);
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[2]/failure)' '%s'", path);
    cr_assert_eq(sh(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, expect);
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[2]/@name)' '%s'", path);
    cr_assert_eq(sh(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, expect);
    unlink(path);
}

Test(reports_junit, unwritable_path_is_an_io_error)
{
    struct gg_junit_suite s = {"x", NULL, NULL, 0, NULL, 0};
    char err[512] = "";
    cr_expect_eq(gg_report_junit_write(&s, "/nonexistent-dir/junit.xml", err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, "/nonexistent-dir/junit.xml"), "%s", err);
}

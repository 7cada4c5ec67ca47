/*
 * gg_report_junit.c — JUnit XML for CI systems: testsuites / testsuite / testcase with failure,
 * error and skipped elements. Every string is escaped for XML 1.0: the five markup characters
 * become entities, and what XML 1.0 cannot carry at all (control characters other than tab, LF
 * and CR; invalid UTF-8; the non-characters U+FFFE and U+FFFF) becomes U+FFFD. The file is
 * written to a temporary name and renamed, so a reader never sees half a report.
 */
#include <stdio.h>
#include <string.h>

#include "reports/gg_report.h"

/* Length of the valid UTF-8 sequence XML may carry at s (1-4), or 0. */
static int xml_char_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 ? 2 : 0;
    if (n == 0)
        return 0;
    unsigned cp = c & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

/* Writes s escaped; attr also escapes the characters attribute values normalise (tab, LF, CR). */
static void put_escaped(FILE *f, const char *s, int attr)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int n = xml_char_len(p);
        if (n == 0) {
            fputs("\xEF\xBF\xBD", f);
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs(attr ? "&quot;" : "\"", f); break;
        case '\'': fputs(attr ? "&apos;" : "'", f); break;
        case '\t': fputs(attr ? "&#9;" : "\t", f); break;
        case '\n': fputs(attr ? "&#10;" : "\n", f); break;
        case '\r': fputs("&#13;", f); break;
        default: fwrite(p, 1, (size_t)n, f); break;
        }
        p += n;
    }
}

/* ` name="value"` */
static void put_attr(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s=\"", name);
    put_escaped(f, value, 1);
    fputc('"', f);
}

static void count(const struct gg_junit_suite *s, size_t n[4])
{
    memset(n, 0, 4 * sizeof n[0]);
    for (size_t i = 0; i < s->n_cases; i++)
        n[s->cases[i].outcome]++;
}

static void put_case(FILE *f, const struct gg_junit_case *c)
{
    static const char *const element[] = {NULL, "failure", "error", "skipped"};
    fputs("    <testcase", f);
    put_attr(f, "classname", c->classname);
    put_attr(f, "name", c->name);
    fprintf(f, " time=\"%.3f\">\n", c->seconds);
    if (c->outcome != GG_JUNIT_PASS) {
        fprintf(f, "      <%s", element[c->outcome]);
        if (c->message)
            put_attr(f, "message", c->message);
        if (c->type && c->outcome != GG_JUNIT_SKIPPED)
            put_attr(f, "type", c->type);
        if (c->text && c->outcome != GG_JUNIT_SKIPPED) {
            fputc('>', f);
            put_escaped(f, c->text, 0);
            fprintf(f, "</%s>\n", element[c->outcome]);
        } else {
            fputs("/>\n", f);
        }
    }
    if (c->system_out) {
        fputs("      <system-out>", f);
        put_escaped(f, c->system_out, 0);
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

enum gg_status gg_report_junit_write(const struct gg_junit_suite *s, const char *path, char *err,
                                     size_t err_len)
{
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "JUnit XML", err, err_len);
    if (st != GG_OK)
        return st;
    FILE *f = a.f;
    size_t n[4];
    count(s, n);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
    put_attr(f, "name", s->name);
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
            s->n_cases, n[GG_JUNIT_FAILURE], n[GG_JUNIT_ERROR], n[GG_JUNIT_SKIPPED], s->seconds);
    fputs("  <testsuite", f);
    put_attr(f, "name", s->name);
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\"",
            s->n_cases, n[GG_JUNIT_FAILURE], n[GG_JUNIT_ERROR], n[GG_JUNIT_SKIPPED], s->seconds);
    if (s->timestamp)
        put_attr(f, "timestamp", s->timestamp);
    if (s->hostname)
        put_attr(f, "hostname", s->hostname);
    fputs(">\n", f);
    for (size_t i = 0; i < s->n_cases; i++)
        put_case(f, &s->cases[i]);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return gg_atomic_commit(&a, 0, err, err_len);
}

/*
 * report_fixture.h — what the report tests share: reading a written report file whole, writing
 * an input file, and counting a string's occurrences in a page.
 */
#ifndef GG_TEST_REPORT_FIXTURE_H
#define GG_TEST_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

/* The whole of dir/name, NUL-terminated (caller frees); *len its size (len may be NULL). */
static inline char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s is missing", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = (size_t)n;
    return buf;
}

/* Writes text to dir/name. */
static inline void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* How many times needle occurs in hay, not overlapping. */
static inline size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

#endif /* GG_TEST_REPORT_FIXTURE_H */

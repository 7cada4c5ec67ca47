/*
 * report_fixture.h — what the report tests share: files read and written whole
 * (file_fixture.h), and counting a string's occurrences in a page.
 */
#ifndef GG_TEST_REPORT_FIXTURE_H
#define GG_TEST_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "file_fixture.h"

/* How many times needle occurs in hay, not overlapping. */
static inline size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

#endif /* GG_TEST_REPORT_FIXTURE_H */

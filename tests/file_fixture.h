/*
 * file_fixture.h — what tests that write input files and read what ggfuzz wrote share: a file
 * written whole from a string, and a file read whole into one.
 */
#ifndef GG_TEST_FILE_FIXTURE_H
#define GG_TEST_FILE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

/* The whole of dir/name (dir NULL: the path name), NUL-terminated (caller frees); *len its size
   (len may be NULL). */
static inline char *file_slurp(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
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

/* Writes text to the file dir/name. */
static inline void file_put(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

#endif /* GG_TEST_FILE_FIXTURE_H */

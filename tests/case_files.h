/*
 * case_files.h — the *.case files of one test-data directory, listed by the tests themselves
 * (not by gg_corpus_list, which is under test), in name order so that every run visits them
 * in the same order.
 */
#ifndef CASE_FILES_H
#define CASE_FILES_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static inline int case_name_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Names (not paths) of the files in dir ending in ".case", sorted; *count of them. Free with
   case_files_free(). */
static inline char **case_files(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            names = realloc(names, cap * sizeof *names);
            cr_assert_not_null(names);
        }
        names[n] = strdup(e->d_name);
        cr_assert_not_null(names[n]);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, case_name_cmp);
    *count = n;
    return names;
}

static inline void case_files_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

#endif /* CASE_FILES_H */

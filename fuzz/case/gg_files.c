/*
 * gg_files.c — the file helpers every room shares: reading a whole file into memory, trimming
 * the lines of a text file, joining a directory and a name, asking whether a path is a directory
 * or a regular file, and listing the names of a directory that pass a filter, sorted.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/case/gg_case.h"

enum gg_status gg_file_read(const char *path, size_t max, char **out, size_t *out_len, char *err,
                            size_t err_len)
{
    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_len, "%s: cannot read: %s", path, strerror(errno));
        return GG_E_IO;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int e = 0;
    for (;;) {
        if (len == cap) {
            if (cap > max) {
                e = EFBIG;
                break;
            }
            cap = cap ? 2 * cap : 4096;
            if (cap - 1 > max)
                cap = max + 1;
            char *p = realloc(buf, cap + 1); /* and the terminating NUL */
            if (p == NULL) {
                e = ENOMEM;
                break;
            }
            buf = p;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            e = ferror(f) ? (errno ? errno : EIO) : 0;
            break;
        }
    }
    fclose(f);
    if (e != 0) {
        free(buf);
        snprintf(err, err_len, "%s: cannot read: %s", path, strerror(e));
        return e == ENOMEM ? GG_E_NOMEM : GG_E_IO;
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len != NULL)
        *out_len = len;
    return GG_OK;
}

char *gg_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

char *gg_path_join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

int gg_path_is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int gg_path_is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

enum gg_status gg_dir_list(const char *dir, int (*keep)(const char *dir, const char *name),
                           char ***names, size_t *n, char *err, size_t err_len)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        snprintf(err, err_len, "%s: cannot open: %s", dir, strerror(errno));
        return GG_E_IO;
    }
    size_t cap = 0;
    enum gg_status st = GG_OK;
    for (struct dirent *e; st == GG_OK && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || !keep(dir, e->d_name))
            continue;
        if (*n == cap) {
            char **grown = realloc(*names, (cap = cap ? 2 * cap : 16) * sizeof *grown);
            if (grown == NULL)
                st = GG_E_NOMEM;
            else
                *names = grown;
        }
        if (st == GG_OK && ((*names)[*n] = strdup(e->d_name)) != NULL)
            (*n)++;
        else
            st = GG_E_NOMEM;
    }
    closedir(d);
    if (st != GG_OK)
        snprintf(err, err_len, "%s: out of memory", dir);
    if (*n > 1)
        qsort(*names, *n, sizeof **names, cmp_name);
    return st;
}

void gg_dir_list_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

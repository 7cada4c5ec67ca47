/*
 * gg_files.c — the file helpers every room shares: opening a file that others may have placed
 * (a peer's log, a case in a shared corpus, a store's finding, a --known list) so that it is
 * read only when it is a regular file and never blocks the reader, reading a whole file of
 * bounded size into memory, trimming the lines of a text file, joining a directory and a name,
 * asking whether a path is a directory or a regular file, and listing the names of a directory
 * that pass a filter, sorted.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/case/gg_case.h"

/*
 * A FIFO opened for reading waits in open(2) for a writer, and a device may never answer: the
 * file is opened with O_NONBLOCK (which a FIFO's open honours at once), checked to be a regular
 * file on the descriptor itself (no window between a check and the open), and only then made
 * blocking again for the reads, which on a regular file never wait for another process.
 */
int gg_file_open(const char *path, struct stat *sb, char *err, size_t err_len)
{
    struct stat own;
    if (sb == NULL)
        sb = &own;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e = 0;
    if (fd < 0)
        e = errno;
    else if (fstat(fd, sb) != 0)
        e = errno;
    else if (!S_ISREG(sb->st_mode))
        e = EINVAL;
    else {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
            e = errno;
    }
    if (e == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    snprintf(err, err_len, "%s: cannot read: %s", path,
             e == EINVAL ? "not a regular file" : strerror(e));
    errno = e;
    return -1;
}

enum gg_status gg_file_read(const char *path, size_t max, char **out, size_t *out_len, char *err,
                            size_t err_len)
{
    *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    struct stat sb;
    int fd = gg_file_open(path, &sb, err, err_len);
    if (fd < 0)
        return GG_E_IO;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    /* A file already longer than max is refused before any byte is read; one that grows while
       it is read is refused once it passes max. */
    int e = (uintmax_t)sb.st_size > (uintmax_t)max ? EFBIG : 0;
    while (e == 0) {
        if (len == cap) {
            if (cap > max) {
                e = EFBIG;
                break;
            }
            cap = cap ? 2 * cap : (size_t)sb.st_size + 1 > 4096 ? (size_t)sb.st_size + 1 : 4096;
            if (cap - 1 > max)
                cap = max + 1;
            char *p = realloc(buf, cap + 1); /* and the terminating NUL */
            if (p == NULL) {
                e = ENOMEM;
                break;
            }
            buf = p;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            e = got < 0 ? errno : 0;
            break;
        }
        len += (size_t)got;
    }
    close(fd);
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

int gg_shell_word(char *buf, size_t len, const char *word)
{
    size_t at = strlen(buf);
    int plain = word[0] != '\0';
    for (const char *p = word; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("/._-+=:,@%", *p) != NULL;
    size_t quoted = 0;
    for (const char *p = word; *p; p++)
        quoted += *p == '\'' ? 4 : 1;
    size_t need = at + (at > 0) + (plain ? strlen(word) : quoted + 2) + 1;
    if (need > len)
        return -1;
    if (at > 0)
        buf[at++] = ' ';
    if (plain) {
        memcpy(buf + at, word, strlen(word) + 1);
        return 0;
    }
    buf[at++] = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            memcpy(buf + at, "'\\''", 4);
            at += 4;
        } else {
            buf[at++] = *p;
        }
    }
    buf[at++] = '\'';
    buf[at] = '\0';
    return 0;
}

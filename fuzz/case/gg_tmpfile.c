/*
 * gg_tmpfile.c — atomic writes (write the whole file to a temporary file, then rename it over
 * the target) and their temporary files: their names, which record the host and the process
 * that wrote them, and the removal of those a writer left behind because it was killed between
 * the write and the rename.
 *
 * A leftover is recognised by its name alone, "NAME.tmp.HOST.PID" (or "NAME.tmp.PID", as older
 * builds named them). It is removed when its writer is certainly gone: it was written on this
 * host (or names no host) and no process PID is alive here; or it has not been modified for
 * GG_TMPFILE_STALE_S, which no atomic write takes, whichever host wrote it. A directory shared by
 * several hosts therefore never loses another host's write in flight.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/case/gg_case.h"

#define TMP_MARK ".tmp."

/* This host's name ("localhost" when it has none). */
static void host_name(char *out, size_t len)
{
    if (gethostname(out, len) != 0 || out[0] == '\0')
        snprintf(out, len, "localhost");
    out[len - 1] = '\0';
}

char *gg_tmpfile_name(const char *path)
{
    char host[256];
    host_name(host, sizeof host);
    size_t len = strlen(path) + strlen(host) + sizeof TMP_MARK + 24;
    char *tmp = malloc(len);
    if (tmp != NULL)
        snprintf(tmp, len, "%s" TMP_MARK "%s.%ld", path, host, (long)getpid());
    return tmp;
}

/* 1 when a process pid is alive on this host. */
static int alive(long pid)
{
    return pid > 0 && pid <= INT_MAX && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* 1 when name is a temporary file of a write to a name ending in suffix whose writer is gone
   (see the top of the file); mtime is the file's last modification. */
static int abandoned(const char *name, const char *suffix, time_t mtime, const char *host)
{
    const char *mark = strstr(name, TMP_MARK);
    size_t len = strlen(suffix);
    if (mark == NULL || mark - name < (ptrdiff_t)len || strncmp(mark - len, suffix, len) != 0)
        return 0;
    const char *rest = mark + strlen(TMP_MARK), *dot = strrchr(rest, '.');
    const char *digits = dot ? dot + 1 : rest;
    char *end;
    long pid = strtol(digits, &end, 10);
    if (digits[0] < '0' || digits[0] > '9' || *end != '\0')
        return 0;
    if (difftime(time(NULL), mtime) > GG_TMPFILE_STALE_S)
        return 1;
    int here = dot == NULL || ((size_t)(dot - rest) == strlen(host) &&
                               strncmp(rest, host, (size_t)(dot - rest)) == 0);
    return here && !alive(pid);
}

int gg_tmpfile_sweep(const char *dir, const char *target_suffix)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    char host[256];
    host_name(host, sizeof host);
    int removed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strstr(e->d_name, TMP_MARK) == NULL)
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (path == NULL)
            break;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
            abandoned(e->d_name, target_suffix, sb.st_mtime, host) && unlink(path) == 0)
            removed++;
        free(path);
    }
    closedir(d);
    return removed;
}

static enum gg_status write_failed(const struct gg_atomic *a, int errnum, char *err, size_t err_len)
{
    snprintf(err, err_len, "%s: cannot write%s%s: %s", a->path, a->what[0] ? " " : "", a->what,
             strerror(errnum ? errnum : EIO));
    return GG_E_IO;
}

enum gg_status gg_atomic_open(struct gg_atomic *a, const char *path, const char *what, char *err,
                              size_t err_len)
{
    a->path = path;
    a->what = what ? what : "";
    a->f = NULL;
    a->bad = a->errnum = 0;
    a->tmp = gg_tmpfile_name(path);
    if (a->tmp == NULL) {
        snprintf(err, err_len, "%s: out of memory", path);
        return GG_E_NOMEM;
    }
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    a->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (a->f == NULL) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(a->tmp);
        }
        free(a->tmp);
        a->tmp = NULL;
        return write_failed(a, e, err, err_len);
    }
    return GG_OK;
}

void gg_atomic_fail(struct gg_atomic *a)
{
    a->bad = 1;
    if (a->errnum == 0)
        a->errnum = errno;
}

void gg_atomic_put(struct gg_atomic *a, const void *data, size_t n)
{
    if (n > 0 && fwrite(data, 1, n, a->f) != n)
        gg_atomic_fail(a);
}

/* The cause is the errno of the call that failed: one the writer recorded (a full disk seen by a
   buffer flush inside its fwrite), else that of the last flush, fsync or close; EIO when no call
   set one (a serialiser's error, or an error flag whose call was not recorded). */
enum gg_status gg_atomic_commit(struct gg_atomic *a, int durable, char *err, size_t err_len)
{
    int e = 0;
    errno = 0;
    if (a->bad || ferror(a->f))
        e = a->errnum ? a->errnum : EIO;
    else if (fflush(a->f) != 0 || (durable && fsync(fileno(a->f)) != 0))
        e = errno ? errno : EIO;
    errno = 0;
    if (fclose(a->f) != 0 && e == 0)
        e = errno ? errno : EIO;
    a->f = NULL;
    enum gg_status st = GG_OK;
    if (e == 0 && rename(a->tmp, a->path) != 0) {
        snprintf(err, err_len, "%s: cannot rename the temporary file: %s", a->path,
                 strerror(errno));
        st = GG_E_IO;
    } else if (e != 0) {
        st = write_failed(a, e, err, err_len);
    }
    if (st != GG_OK)
        unlink(a->tmp);
    free(a->tmp);
    a->tmp = NULL;
    return st;
}

enum gg_status gg_atomic_write(const char *path, const char *what, const void *data, size_t len,
                               int durable, char *err, size_t err_len)
{
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, what, err, err_len);
    if (st != GG_OK)
        return st;
    gg_atomic_put(&a, data, len);
    return gg_atomic_commit(&a, durable, err, err_len);
}

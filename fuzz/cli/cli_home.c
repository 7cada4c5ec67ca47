/*
 * cli_home.c — where ggfuzz finds its own files: the corpus (the seeds and the suite's tiers),
 * the ggfuzz Python package, libggfuzz.so and the ggfuzz executable (gg_cli_home(), gg_cli.h).
 * An installed ggfuzz finds them relative to the file its code was loaded from, PREFIX/bin/ggfuzz
 * or, in a Python host, PREFIX/lib/libggfuzz.so: under PREFIX/share/ggfuzz, PREFIX/lib and
 * PREFIX/bin (the install layout's relative paths are compiled in, GG_<FROM>_TO_<TO>), whatever
 * the current directory and whether the source tree still exists. A ggfuzz run from its build
 * tree has no such prefix and finds the source tree it was built from (GG_SOURCE_TREE, compiled
 * in); the last resort is the current directory, when it is a source tree.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "fuzz/case/gg_case.h"
#include "fuzz/cli/gg_cli.h"

#ifndef GG_SOURCE_TREE
#define GG_SOURCE_TREE "."
#endif
#ifndef GG_BIN_TO_DATA
#define GG_BIN_TO_DATA "../share/ggfuzz"
#endif
#ifndef GG_LIB_TO_DATA
#define GG_LIB_TO_DATA "../share/ggfuzz"
#endif
#ifndef GG_BIN_TO_LIB
#define GG_BIN_TO_LIB "../lib"
#endif
#ifndef GG_LIB_TO_BIN
#define GG_LIB_TO_BIN "../bin"
#endif
#define LIB_NAME "libggfuzz.so"
#define EXE_NAME "ggfuzz"

/* Each place: its path under the installed data directory, in a source tree, and what must
   exist below the path for it to count ("" the path itself). */
static const struct place {
    const char *what, *installed, *source, *marker;
} PLACES[] = {
    {"corpus", "corpus", "corpus", ""},
    {"python", "python", "kernels/python", "/ggfuzz/__main__.py"},
};

/* The file this code was loaded from into path (PATH_MAX bytes), and the length of its
   directory's part: libggfuzz.so when a host process loaded the library (*in_lib = 1), else the
   executable. The length, or -1 with errno set. */
static int self_path(char *path, int *in_lib)
{
    Dl_info self, exe;
    *in_lib = 0;
    /* The code is the executable's when it lies in the object of the program's entry point. */
    if (dladdr((void *)self_path, &self) != 0 && self.dli_fname != NULL &&
        self.dli_fname[0] != '\0' && dladdr((void *)getauxval(AT_ENTRY), &exe) != 0 &&
        self.dli_fbase != exe.dli_fbase) {
        if (realpath(self.dli_fname, path) == NULL)
            return -1;
        *in_lib = 1;
    } else {
        ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);
        if (n <= 0)
            return -1;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (slash == NULL) {
        errno = ENOENT;
        return -1;
    }
    return (int)(slash - path);
}

/* Appends candidate path (a NUL-separated list in list, *used bytes) when it fits. */
static void candidate(char *list, size_t len, size_t *used, const char *a, const char *b,
                      const char *c)
{
    int n = snprintf(list + *used, len - *used, "%s%s%s", a, b, c);
    if (n >= 0 && (size_t)n < len - *used)
        *used += (size_t)n + 1;
}

/* The candidates of what, in order of preference, as a NUL-separated list; 0, or -1 for an
   unknown what. */
static int candidates(const char *what, char *list, size_t len, size_t *used)
{
    char self[PATH_MAX], dir[PATH_MAX], data[PATH_MAX + 64];
    int in_lib = 0, n = self_path(self, &in_lib), have_dir = n >= 0;
    *used = 0;
    if (have_dir) {
        snprintf(dir, sizeof dir, "%.*s", n, self);
        snprintf(data, sizeof data, "%s/%s", dir, in_lib ? GG_LIB_TO_DATA : GG_BIN_TO_DATA);
    }
    if (strcmp(what, "lib") == 0 || strcmp(what, "exe") == 0) {
        int lib = what[0] == 'l';
        if (!have_dir)
            return 0;
        if (lib == in_lib) { /* the file this code was loaded from */
            candidate(list, len, used, self, "", "");
            return 0;
        }
        /* The other file of an installation (PREFIX/lib from PREFIX/bin and back), then the
           one beside this one (a build tree). */
        candidate(list, len, used, dir, in_lib ? "/" GG_LIB_TO_BIN "/" : "/" GG_BIN_TO_LIB "/",
                  lib ? LIB_NAME : EXE_NAME);
        candidate(list, len, used, dir, "/", lib ? LIB_NAME : EXE_NAME);
        return 0;
    }
    for (size_t i = 0; i < sizeof PLACES / sizeof PLACES[0]; i++) {
        const struct place *pl = &PLACES[i];
        if (strcmp(what, pl->what) != 0)
            continue;
        if (have_dir && gg_path_is_dir(data))
            candidate(list, len, used, data, "/", pl->installed);
        candidate(list, len, used, GG_SOURCE_TREE, "/", pl->source);
        candidate(list, len, used, pl->source, "", "");
        return 0;
    }
    return -1;
}

int gg_cli_home(const char *what, char *buf, size_t len)
{
    char list[4 * PATH_MAX + 256];
    size_t used = 0;
    const struct place *pl = NULL;
    for (size_t i = 0; i < sizeof PLACES / sizeof PLACES[0]; i++)
        if (strcmp(what, PLACES[i].what) == 0)
            pl = &PLACES[i];
    if (len == 0 || candidates(what, list, sizeof list, &used) != 0 || used == 0)
        return -1;
    buf[0] = '\0';
    for (size_t at = 0; at < used; at += strlen(list + at) + 1) {
        char probe[PATH_MAX + 64];
        snprintf(probe, sizeof probe, "%s%s", list + at, pl ? pl->marker : "");
        if (access(probe, F_OK) == 0) {
            char real[PATH_MAX];
            const char *found = realpath(list + at, real) != NULL ? real : list + at;
            if (strlen(found) >= len)
                return -1;
            strcpy(buf, found);
            return 0;
        }
    }
    /* None exists: the paths tried, for a message. */
    size_t n = 0;
    for (size_t at = 0; at < used && n + 1 < len; at += strlen(list + at) + 1) {
        int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", list + at);
        if (w < 0)
            break;
        n += (size_t)w < len - n ? (size_t)w : len - n - 1;
    }
    return 1;
}

/*
 * cli_python.c — hands a command line with a Python plugin to the Python host. A Python plugin
 * (a path ending in ".py", after --plugin or in GGFUZZ_PLUGINS) runs in a process where Python
 * drives libggfuzz.so through ctypes (kernels/python/ggfuzz), so the ggfuzz executable replaces
 * itself by `$GGFUZZ_PYTHON -m ggfuzz ARGS...` (default python3) with PYTHONPATH extended by the
 * package's directory (GGFUZZ_PYTHONPATH, default the source tree's kernels/python) and
 * GGFUZZ_LIB naming the libggfuzz.so beside the executable. Under the host (a plugin loader is
 * installed) there is nothing to hand over.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/run/gg_run.h"

#ifndef GG_PYTHON_DIR
#define GG_PYTHON_DIR "kernels/python"
#endif
#define LIB_NAME "libggfuzz.so"

/* The first Python plugin of a colon-separated list, copied to buf; NULL when none. */
static const char *script_in_list(const char *list, char *buf, size_t len)
{
    for (const char *p = list; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < len) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (gg_plugin_is_script(buf))
                return buf;
        }
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* The first Python plugin of the command line or GGFUZZ_PLUGINS, or NULL. */
static const char *python_plugin(int argc, char **argv, char *buf, size_t len)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin") == 0 && i + 1 < argc && gg_plugin_is_script(argv[i + 1]))
            return argv[i + 1];
        if (strncmp(argv[i], "--plugin=", 9) == 0 && gg_plugin_is_script(argv[i] + 9))
            return argv[i] + 9;
    }
    return script_in_list(getenv("GGFUZZ_PLUGINS"), buf, len);
}

/* Sets GGFUZZ_LIB to the library beside this executable; 0, or -1 after a message. */
static int set_library(const char *plugin)
{
    char exe[PATH_MAX], lib[PATH_MAX + sizeof LIB_NAME];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "ggfuzz: %s is a Python plugin: cannot find this executable "
                "(/proc/self/exe): %s\n", plugin, strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL)
        *slash = '\0';
    snprintf(lib, sizeof lib, "%s/%s", slash != NULL ? exe : ".", LIB_NAME);
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "ggfuzz: %s is a Python plugin, which needs %s beside ggfuzz: %s: %s\n",
                plugin, LIB_NAME, lib, strerror(errno));
        return -1;
    }
    return setenv("GGFUZZ_LIB", lib, 1);
}

/* Puts the package's directory first on PYTHONPATH; 0, or -1 after a message. */
static int set_package(const char *plugin)
{
    const char *dir = getenv("GGFUZZ_PYTHONPATH");
    if (dir == NULL || dir[0] == '\0')
        dir = GG_PYTHON_DIR;
    char main_py[PATH_MAX];
    snprintf(main_py, sizeof main_py, "%s/ggfuzz/__main__.py", dir);
    if (access(main_py, R_OK) != 0) {
        fprintf(stderr, "ggfuzz: %s is a Python plugin, which needs the ggfuzz Python package: "
                "%s: %s (set GGFUZZ_PYTHONPATH to the directory that holds ggfuzz/)\n", plugin,
                main_py, strerror(errno));
        return -1;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (path == NULL)
        return -1;
    snprintf(path, len, "%s%s%s", dir, old && old[0] ? ":" : "", old && old[0] ? old : "");
    int rc = setenv("PYTHONPATH", path, 1);
    free(path);
    return rc;
}

int gg_cli_python_handoff(int argc, char **argv)
{
    char buf[PATH_MAX];
    if (gg_plugin_has_script_loader())
        return -1;
    const char *plugin = python_plugin(argc, argv, buf, sizeof buf);
    if (plugin == NULL)
        return -1;
    if (set_library(plugin) != 0 || set_package(plugin) != 0)
        return GG_EXIT_HARNESS;
    const char *python = getenv("GGFUZZ_PYTHON");
    if (python == NULL || python[0] == '\0')
        python = "python3";
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (args == NULL) {
        fprintf(stderr, "ggfuzz: out of memory\n");
        return GG_EXIT_HARNESS;
    }
    int n = 0;
    args[n++] = (char *)python;
    args[n++] = "-m";
    args[n++] = "ggfuzz";
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    fflush(NULL);
    execvp(python, args);
    fprintf(stderr, "ggfuzz: %s is a Python plugin: cannot start the Python interpreter '%s' "
            "(GGFUZZ_PYTHON): %s\n", plugin, python, strerror(errno));
    free(args);
    return GG_EXIT_HARNESS;
}

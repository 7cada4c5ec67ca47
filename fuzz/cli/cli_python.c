/*
 * cli_python.c — hands a command line with a Python plugin to the Python host. A Python plugin
 * (a path ending in ".py", after --plugin or in GGFUZZ_PLUGINS) runs in a process where Python
 * drives libggfuzz.so through ctypes (kernels/python/ggfuzz), so the ggfuzz executable replaces
 * itself by `$GGFUZZ_PYTHON -m ggfuzz ARGS...` (default python3) with PYTHONPATH extended by the
 * package's directory (GGFUZZ_PYTHONPATH, else the installed package or the source tree's
 * kernels/python: gg_cli_home()) and GGFUZZ_LIB naming this ggfuzz's libggfuzz.so (installed in
 * PREFIX/lib, or built beside the executable). Under the host (a plugin loader is installed)
 * there is nothing to hand over.
 *
 * Once exec'd, the interpreter's exit code is ggfuzz's, so before that the interpreter is asked
 * to prove that it runs the package's host: `$GGFUZZ_PYTHON -m ggfuzz --handshake` must answer
 * "ggfuzz-host TOKEN" with the fresh TOKEN of GGFUZZ_HANDSHAKE in its environment. A program
 * that is not such a Python (/bin/true, a wrapper gone wrong) is refused with a message naming
 * GGFUZZ_PYTHON. The check costs one start of the interpreter without NumPy or the library
 * (tens of milliseconds), once per command: campaign workers start as the host directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/cli/gg_cli.h"
#include "fuzz/run/gg_run.h"

#define HANDSHAKE_ENV "GGFUZZ_HANDSHAKE"
#define HANDSHAKE_S 60.0 /* an interpreter's start on a cold network file system included */

extern char **environ;

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

/* Sets GGFUZZ_LIB to this ggfuzz's libggfuzz.so; 0, or -1 after a message. */
static int set_library(const char *plugin)
{
    char lib[PATH_MAX + 1024];
    int rc = gg_cli_home("lib", lib, sizeof lib);
    if (rc != 0) {
        fprintf(stderr, "ggfuzz: %s is a Python plugin, which needs libggfuzz.so%s%s\n", plugin,
                rc > 0 ? ": not found, tried " : " (this executable cannot be found)",
                rc > 0 ? lib : "");
        return -1;
    }
    return setenv("GGFUZZ_LIB", lib, 1);
}

/* Puts the package's directory first on PYTHONPATH; 0, or -1 after a message. */
static int set_package(const char *plugin)
{
    char home[PATH_MAX + 1024];
    const char *dir = getenv("GGFUZZ_PYTHONPATH");
    if (dir == NULL || dir[0] == '\0') {
        int rc = gg_cli_home("python", home, sizeof home);
        if (rc != 0) {
            fprintf(stderr, "ggfuzz: %s is a Python plugin, which needs the ggfuzz Python "
                    "package: %s%s (set GGFUZZ_PYTHONPATH to the directory that holds "
                    "ggfuzz/)\n", plugin, rc > 0 ? "not found, tried " : "cannot be found",
                    rc > 0 ? home : "");
            return -1;
        }
        dir = home;
    }
    char main_py[sizeof home + 32];
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

/* How the interpreter was chosen, for messages. */
static void python_named(const char *python, char *buf, size_t len)
{
    const char *env = getenv("GGFUZZ_PYTHON");
    if (env != NULL && env[0] != '\0')
        snprintf(buf, len, "GGFUZZ_PYTHON=%s", python);
    else
        snprintf(buf, len, "'%s' on PATH (GGFUZZ_PYTHON is not set)", python);
}

/* The handshake's answer: the bytes fd gives until its end (or a read error), NUL-terminated in
   buf; 0, or 1 when the deadline passed or more than len - 1 bytes came. */
static int read_answer(int fd, char *buf, size_t len, double deadline)
{
    size_t n = 0;
    for (;;) {
        char c;
        int got = gg_wire_read(fd, &c, 1, deadline);
        if (got == -1)
            break; /* the end of the answer (or an error, which the answer shows) */
        if (got == 1 || n + 1 >= len)
            return 1;
        buf[n++] = c;
    }
    buf[n] = '\0';
    return 0;
}

/* Asks `python -m ggfuzz --handshake` for the token (see the top of the file): 0 when python
   gave it, else GG_EXIT_HARNESS after a message naming GGFUZZ_PYTHON. */
static int handshake(const char *python, const char *plugin)
{
    char token[64], want[96], named[PATH_MAX + 64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(token, sizeof token, "%ld-%lld-%ld", (long)getpid(), (long long)ts.tv_sec,
             (long)ts.tv_nsec);
    snprintf(want, sizeof want, "ggfuzz-host %s\n", token);
    python_named(python, named, sizeof named);
    int fds[2];
    if (setenv(HANDSHAKE_ENV, token, 1) != 0 || pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "ggfuzz: %s is a Python plugin: cannot ask %s: %s\n", plugin, named,
                strerror(errno));
        unsetenv(HANDSHAKE_ENV);
        return GG_EXIT_HARNESS;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    char *args[] = {(char *)python, "-m", "ggfuzz", "--handshake", NULL};
    pid_t pid;
    fflush(NULL);
    int rc = posix_spawnp(&pid, python, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    unsetenv(HANDSHAKE_ENV);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fprintf(stderr, "ggfuzz: %s is a Python plugin: cannot start the Python interpreter "
                "'%s' (GGFUZZ_PYTHON): %s\n", plugin, python, strerror(rc));
        return GG_EXIT_HARNESS;
    }
    char answer[256];
    int got = read_answer(fds[0], answer, sizeof answer, gg_wire_now() + HANDSHAKE_S);
    close(fds[0]);
    if (got != 0)
        kill(pid, SIGKILL);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (got == 0 && WIFEXITED(wst) && WEXITSTATUS(wst) == 0 && strcmp(answer, want) == 0)
        return 0;
    char how[384];
    if (got != 0)
        snprintf(how, sizeof how, "gave no answer within %g s, or a longer one", HANDSHAKE_S);
    else if (answer[0] != '\0')
        snprintf(how, sizeof how, "answered '%.*s', not the host's token",
                 (int)strcspn(answer, "\n"), answer);
    else if (WIFSIGNALED(wst))
        snprintf(how, sizeof how, "died on signal %d (%s) without answering", WTERMSIG(wst),
                 strsignal(WTERMSIG(wst)));
    else
        snprintf(how, sizeof how, "exited with status %d without answering",
                 WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    fprintf(stderr, "ggfuzz: %s is a Python plugin, but %s does not run ggfuzz's Python host: "
            "`%s -m ggfuzz --handshake` %s; set GGFUZZ_PYTHON to a Python 3 interpreter with "
            "NumPy\n", plugin, named, python, how);
    return GG_EXIT_HARNESS;
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
    if (handshake(python, plugin) != 0)
        return GG_EXIT_HARNESS;
    gg_cli_set_exe(); /* for the commands the host prints to run this ggfuzz again */
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

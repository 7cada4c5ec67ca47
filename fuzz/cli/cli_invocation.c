/*
 * cli_invocation.c — the command that runs this ggfuzz again, pasted into a fresh shell in any
 * directory: the ggfuzz executable (plain `ggfuzz` when that name on PATH is this executable,
 * else its absolute path), and every plugin loaded, by absolute path; when one of them is a
 * Python plugin, the interpreter that runs it first (GGFUZZ_PYTHON=...). Every reproduce command
 * ggfuzz prints or writes (a campaign's replay lines, fuzzer_stats' command_line and
 * replay_command, the report) starts with it, so a finding of a plugin's kernel replays where it
 * is pasted. Under the Python host the executable is the one that handed the command line over
 * (GGFUZZ_EXE, which it sets), not the interpreter.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/run/gg_run.h"

#define EXE_ENV "GGFUZZ_EXE"

/* The first file named name on PATH that can be executed, into out (its path as PATH gives it,
   links not resolved: a virtual environment's python must stay one). 0, or -1 when none. */
static int on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    for (const char *p = path; p != NULL && *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && (size_t)snprintf(out, len, "%.*s/%s", (int)n, p, name) < len &&
            access(out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

/* A program name as a command may give it: name (searched on PATH) or a path (made absolute). */
static void program_path(const char *prog, char *out, size_t len)
{
    char cwd[PATH_MAX];
    if (strchr(prog, '/') == NULL && on_path(prog, out, len) == 0)
        return;
    if (prog[0] == '/' || strchr(prog, '/') == NULL || getcwd(cwd, sizeof cwd) == NULL ||
        (size_t)snprintf(out, len, "%s/%s", cwd, prog) >= len)
        snprintf(out, len, "%s", prog);
}

/* This ggfuzz: `ggfuzz` when PATH's ggfuzz is the same file, else its absolute path. */
static void executable(char *out, size_t len)
{
    char self[PATH_MAX] = "", found[PATH_MAX];
    const char *env = getenv(EXE_ENV);
    if (env != NULL && env[0] == '/')
        snprintf(self, sizeof self, "%s", env);
    else if (realpath("/proc/self/exe", self) == NULL)
        self[0] = '\0';
    struct stat a, b;
    if (self[0] == '\0' || (on_path("ggfuzz", found, sizeof found) == 0 &&
                            stat(found, &a) == 0 && stat(self, &b) == 0 &&
                            a.st_dev == b.st_dev && a.st_ino == b.st_ino))
        snprintf(out, len, "ggfuzz");
    else
        snprintf(out, len, "%s", self);
}

void gg_cli_invocation(char *buf, size_t len)
{
    char word[PATH_MAX + 32];
    buf[0] = '\0';
    int script = 0;
    for (size_t i = 0; i < gg_plugin_count(); i++)
        script |= gg_plugin_is_script(gg_plugin_path(i));
    if (script) {
        const char *python = getenv("GGFUZZ_PYTHON");
        char where[PATH_MAX];
        program_path(python && python[0] ? python : "python3", where, sizeof where);
        snprintf(word, sizeof word, "GGFUZZ_PYTHON=%s", where);
        gg_shell_word(buf, len, word);
    }
    executable(word, sizeof word);
    gg_shell_word(buf, len, word);
    for (size_t i = 0; i < gg_plugin_count(); i++)
        if (gg_shell_word(buf, len, "--plugin") == 0)
            gg_shell_word(buf, len, gg_plugin_path(i));
}

void gg_cli_replay_command(char *buf, size_t len, enum gg_reference_where reference)
{
    gg_cli_invocation(buf, len);
    gg_shell_word(buf, len, "--replay");
    if (reference != GG_REFERENCE_AUTO && gg_shell_word(buf, len, "--reference") == 0)
        gg_shell_word(buf, len, gg_reference_where_name(reference));
}

int gg_cli_set_exe(void)
{
    char self[PATH_MAX];
    return realpath("/proc/self/exe", self) != NULL ? setenv(EXE_ENV, self, 1) : -1;
}

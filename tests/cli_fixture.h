/*
 * cli_fixture.h — what the command-line tests share: running a shell command line (ggfuzz with
 * its arguments) and capturing what it prints, and temporary directories for their output.
 */
#ifndef GG_TEST_CLI_FIXTURE_H
#define GG_TEST_CLI_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "file_fixture.h"

/* Runs cmd through the shell; out (len bytes) gets what it prints on stdout (cmd redirects
   stderr as it wants), NUL-terminated. Returns the exit code; a death by signal fails the
   test. */
static inline int cli_shell(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "ggfuzz did not exit normally: %s", cmd);
    return WEXITSTATUS(st);
}

/* Runs `ggfuzz ARGS` in directory dir, stderr with stdout into out (len bytes); returns the
   exit code as cli_shell() does. */
static inline int cli_ggfuzz_in(const char *dir, const char *args, char *out, size_t len)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", dir, GGFUZZ_BIN, args);
    return cli_shell(cmd, out, len);
}

/* A fresh directory /tmp/ggfuzz-NAME-XXXXXX, its path in dir (len bytes). */
static inline void cli_temp_dir(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/ggfuzz-%s-XXXXXX", name);
    cr_assert_not_null(mkdtemp(dir));
}

/* Removes dir and everything below it. */
static inline void cli_remove_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Pastes the first command of log that follows `marker` (to the end of its line) into a fresh
   shell elsewhere: from /, with only PATH and HOME set. out (len bytes) gets what it prints;
   returns its exit code (-1: no such line). The command is shell text and used as it is. */
static inline int cli_paste(const char *log, const char *marker, char *out, size_t len)
{
    const char *at = strstr(log, marker);
    if (at == NULL)
        return -1;
    at += strlen(marker);
    size_t n = strcspn(at, "\n");
    char script[] = "/tmp/ggfuzz-paste-XXXXXX";
    int fd = mkstemp(script);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s\n", (int)n, at);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd / && env -i PATH=\"$PATH\" HOME=\"$HOME\" sh '%s' 2>&1", script);
    int rc = cli_shell(cmd, out, len);
    unlink(script);
    return rc;
}

#endif /* GG_TEST_CLI_FIXTURE_H */

/*
 * test_cli_env.c — the environment variables of ggfuzz: docs/environment.md names the variables
 * of the code's table, a set GGFUZZ_* variable ggfuzz does not know gets one WARNING line (once
 * per command, not again in each worker) and leaves the exit code alone, the variables ggfuzz
 * sets for its children and the test hooks get none, and an old GG_* name is still read with a
 * deprecation WARNING (its value goes to the new name, unless that is set too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"
#include "fuzz/cli/cli_int.h"

TestSuite(cli_env, .timeout = 120);

static char out[1 << 17];
static char root[64];

static void make_root(void)
{
    cli_temp_dir(root, sizeof root, "cli-env");
}

static void remove_root(void)
{
    cli_remove_dir(root);
}

/* Runs `env ENV ggfuzz ARGS` in the temporary root, the GGFUZZ_* variables of the test's own
   environment removed, stderr with stdout into out; returns the exit code. */
static int ggfuzz_env(const char *env, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && env $(env | sed -n 's/^\\(GGFUZZ_[^=]*\\)=.*/-u \\1/p') "
             "%s '%s' %s 2>&1", root, env, GGFUZZ_BIN, args);
    return cli_shell(cmd, out, sizeof out);
}

/* How many times needle is in hay. */
static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

Test(cli_env, the_docs_table_names_the_variables_of_the_code)
{
    FILE *f = fopen(GG_SOURCE_DIR "/docs/environment.md", "r");
    cr_assert_not_null(f);
    char line[4096], doc[64][64];
    int n = 0, in_table = 0;
    while (fgets(line, sizeof line, f) && n < 64) {
        if (strncmp(line, "## Variables", 12) == 0) {
            in_table = 1;
            continue;
        }
        if (in_table && line[0] == '#')
            break;
        /* a row: | `NAME`... | effect | */
        if (in_table && strncmp(line, "| `", 3) == 0) {
            size_t len = strcspn(line + 3, "`");
            snprintf(doc[n++], sizeof doc[0], "%.*s", (int)len, line + 3);
        }
    }
    fclose(f);
    cr_assert_gt(n, 0, "docs/environment.md has no table under '## Variables'");
    int m = 0;
    for (const struct gg_cli_env *e = gg_cli_env_vars; e->name; e++, m++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= strcmp(doc[i], e->name) == 0;
        cr_expect(found, "docs/environment.md's table lacks %s", e->name);
    }
    for (int i = 0; i < n; i++) {
        const struct gg_cli_env *e = gg_cli_env_vars;
        while (e->name && strcmp(e->name, doc[i]) != 0)
            e++;
        cr_expect_not_null(e->name, "docs/environment.md names %s, which ggfuzz's table does not",
                           doc[i]);
    }
    cr_expect_eq(n, m);
}

Test(cli_env, an_unknown_ggfuzz_variable_is_warned_about_once, .init = make_root,
     .fini = remove_root)
{
    cr_expect_eq(ggfuzz_env("GGFUZZ_PLUGIN=x.so GGFUZZ_SEEED=3", "list"), 0, "%s", out);
    cr_expect(strstr(out, "ggfuzz: WARNING: unknown environment variables GGFUZZ_PLUGIN, "
                          "GGFUZZ_SEEED (known: GGFUZZ_PLUGINS, "), "%s", out);
    cr_expect_eq(count(out, "WARNING"), 1, "%s", out);
    /* The exit code is the command's. */
    cr_expect_eq(ggfuzz_env("GGFUZZ_FOO=1", "run"), GG_EXIT_USAGE, "%s", out);
    cr_expect(strstr(out, "ggfuzz: WARNING: unknown environment variable GGFUZZ_FOO (known: "),
              "%s", out);
    /* Once for a campaign, not again in each of its workers. */
    cr_expect_eq(ggfuzz_env("GGFUZZ_FOO=1", "fuzz --kernel grouped_bf16_cpu_tiled --runs 4 "
                                            "--workers 2"), 0, "%s", out);
    cr_expect_eq(count(out, "unknown environment variable GGFUZZ_FOO"), 1, "%s", out);
}

Test(cli_env, the_variables_ggfuzz_sets_and_the_test_hooks_are_known, .init = make_root,
     .fini = remove_root)
{
    cr_expect_eq(ggfuzz_env("GGFUZZ_DEVICE=0 GGFUZZ_EXE=/x GGFUZZ_HANDSHAKE=t "
                            "GGFUZZ_TEST_ANYTHING=1 GGFUZZ_PLUGIN_TIMEOUT=5", "list"), 0, "%s",
                 out);
    cr_expect_null(strstr(out, "WARNING"), "%s", out);
}

Test(cli_env, an_old_name_is_read_with_a_deprecation_warning, .init = make_root,
     .fini = remove_root)
{
    static const char args[] = "report --suite " GG_TEST_DATA "/report/suite_bad_expert.json "
                               "-o report";
    cr_expect_eq(ggfuzz_env("GG_GNUPLOT=/nonexistent/gnuplot", args), 0, "%s", out);
    cr_expect(strstr(out, "ggfuzz: WARNING: GG_GNUPLOT is deprecated: use GGFUZZ_GNUPLOT (read "
                          "in its place in this release)\n"), "%s", out);
    cr_expect(strstr(out, "plots skipped: GGFUZZ_GNUPLOT=/nonexistent/gnuplot"), "%s", out);
    cr_expect_eq(count(out, "WARNING"), 1, "%s", out);
    /* Both set: the new name wins. */
    cr_expect_eq(ggfuzz_env("GG_GNUPLOT=/nonexistent/old GGFUZZ_GNUPLOT=/nonexistent/new", args),
                 0, "%s", out);
    cr_expect(strstr(out, "GG_GNUPLOT is deprecated: use GGFUZZ_GNUPLOT (ignored: that is set "
                          "too)"), "%s", out);
    cr_expect(strstr(out, "plots skipped: GGFUZZ_GNUPLOT=/nonexistent/new"), "%s", out);
    cr_expect_eq(ggfuzz_env("GG_GPU_TMA=0", "list"), 0, "%s", out);
    cr_expect(strstr(out, "ggfuzz: WARNING: GG_GPU_TMA is deprecated: use GGFUZZ_GPU_TMA"), "%s",
              out);
}

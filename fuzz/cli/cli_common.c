/*
 * cli_common.c — the usage text (its general part, the commands' sections in order, exit codes
 * and environment) and what the command files share: the words of --reference, plugin loading
 * (GGFUZZ_PLUGINS first, then each --plugin, which every command but merge and report takes),
 * and whether a kernel can run here (a GPU kernel needs its device).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/run/gg_run.h"
#include "fuzz/run/device/gg_device.h"
#include "fuzz/store/gg_store.h"

/* The usage text: this, then each command's section from its flag table, then EXIT_CODES. */
static const char USAGE[] =
    "usage: ggfuzz [--plugin PATH]... <command> [options] [args]\n"
    "\n"
    "commands:\n"
    "  run CASE|DIR...       run cases and print their verdicts\n"
    "  replay CASE|DIR...    run cases and check that each stored @expect verdict reproduces\n"
    "  --replay CASE|DIR...  same as replay\n"
    "  list                  list the kernels with their ops, tiles and mutants\n"
    "  minimize CASE         shrink a failing case while its signature reproduces\n"
    "  fuzz [CORPUS_DIR...] --kernel NAME   run a fuzzing campaign against a kernel\n"
    "  selftest              a short campaign against every mutant (each must be found)\n"
    "                        and every correct kernel (none may give a finding)\n"
    "  suite [--tier T] [--gate] ...  the SNR suite and release gate (suite --help)\n"
    "  merge CAMPAIGN|STORE... [-o STORE]   fold the findings stores of a campaign's\n"
    "                        shards (or any stores) into one\n"
    "  report [--suite F] [--campaign D] -o DIR   HTML and Markdown report (report --help)\n"
    "  bench CASE...         time a kernel on cases (bench --help)\n"
    "  --help, --version     this text; the version of ggfuzz, its kernel ABI and formats\n"
    "\n"
    "Every command takes -h, --help: its own section of this text.\n"
    "--plugin PATH (repeatable) may also come before the command.\n";

static const char EXIT_CODES[] =
    "exit codes: 0 all pass (replay: all expectations reproduced; cases refused beside ones\n"
    "that ran are listed, not failures); 2 usage; 3 malformed case, refused plugin or harness\n"
    "error; 4 nothing could run: every case or the kernel refused (unsupported, too large, or a\n"
    "GPU kernel without its device); 20 replay did not reproduce; 30 suite --gate failed; a\n"
    "finding's class (the most severe found, in this order):\n";

const struct gg_cli_command *const gg_cli_commands[] = {
    &gg_cli_run_command,      &gg_cli_list_command,  &gg_cli_minimize_command,
    &gg_cli_fuzz_command,     &gg_cli_selftest_command, &gg_cli_suite_command,
    &gg_cli_merge_command,    &gg_cli_report_command,   &gg_cli_bench_command, NULL};

/* The verdict classes, most severe first (the order of the exit code of a run): n of them. */
static int classes_by_severity(enum gg_class order[GG_CLASS_COUNT])
{
    int n = 0;
    for (int c = GG_CLASS_PASS + 1; c < GG_CLASS_COUNT; c++)
        order[n++] = (enum gg_class)c;
    for (int i = 1; i < n; i++) /* by precedence */
        for (int j = i; j > 0 && gg_class_more_severe(order[j], order[j - 1]); j--) {
            enum gg_class t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

void gg_cli_usage_print(FILE *f)
{
    fputs(USAGE, f);
    for (const struct gg_cli_command *const *c = gg_cli_commands; *c; c++) {
        fputc('\n', f);
        gg_cli_command_usage(f, "", *c);
    }
    fprintf(f, "\n%s", EXIT_CODES);
    enum gg_class order[GG_CLASS_COUNT];
    int n = classes_by_severity(order);
    for (int i = 0; i < n; i++)
        fprintf(f, "  %2d %-15s %s\n", gg_class_exit_code(order[i]), gg_class_name(order[i]),
                gg_class_help(order[i]));
    fputs("\nenvironment:\n", f);
    for (const struct gg_cli_env *e = gg_cli_env_vars; e->name; e++) {
        char help[1024];
        gg_cli_env_help(e, help, sizeof help);
        gg_cli_put_wrapped(f, help, fprintf(f, "  %-22s ", e->name), 25);
    }
}

void gg_cli_markdown_print(FILE *f)
{
    fputs("# ggfuzz command line\n\n"
          "<!-- Generated from the flag tables of fuzz/cli/ by `ggfuzz --help-markdown`: edit "
          "the tables, then run `ggfuzz --help-markdown > docs/cli.md`. -->\n\n"
          "```text\n", f);
    fputs(USAGE, f);
    fputs("```\n", f);
    for (const struct gg_cli_command *const *c = gg_cli_commands; *c; c++) {
        fputc('\n', f);
        gg_cli_command_markdown(f, *c);
    }
    fputs("\n## Exit codes\n\n", f);
    for (const char *p = EXIT_CODES; *p; p++) /* one paragraph */
        fputc(*p == '\n' && p[1] ? ' ' : *p, f);
    fputs("\n| code | class | meaning |\n|---|---|---|\n", f);
    enum gg_class order[GG_CLASS_COUNT];
    int n = classes_by_severity(order);
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %d | `%s` | ", gg_class_exit_code(order[i]), gg_class_name(order[i]));
        gg_cli_markdown_cell(f, gg_class_help(order[i]), 0);
        fputs(" |\n", f);
    }
    fputs("\n## Environment\n\n| variable | effect |\n|---|---|\n", f);
    for (const struct gg_cli_env *e = gg_cli_env_vars; e->name; e++) {
        char help[1024];
        gg_cli_env_help(e, help, sizeof help);
        fputs("| `", f);
        gg_cli_markdown_cell(f, e->name, 1);
        fputs("` | ", f);
        gg_cli_markdown_cell(f, help, 0);
        fputs(" |\n", f);
    }
}

const struct gg_cli_word gg_cli_reference_words[] = {
    {"host", GG_REFERENCE_HOST}, {"device", GG_REFERENCE_DEVICE}, {"auto", GG_REFERENCE_AUTO},
    {NULL, 0}};

int gg_cli_load_plugin(const char *path)
{
    char err[1024];
    if (gg_plugin_load(path, err, sizeof err) == GG_OK)
        return 0;
    fprintf(stderr, "ggfuzz: %s\n", err);
    return GG_EXIT_HARNESS;
}

int gg_cli_load_plugins(char **lead, int n)
{
    const char *env = getenv("GGFUZZ_PLUGINS");
    char err[1024];
    if (env && gg_plugin_load_list(env, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz: GGFUZZ_PLUGINS: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    for (int i = 0; i + 1 < n; i += 2)
        if (gg_cli_load_plugin(lead[i + 1]) != 0)
            return GG_EXIT_HARNESS;
    return 0;
}

void gg_cli_plugin_lead(struct gg_cli_plugins *pl, char **lead, int n_lead)
{
    for (int i = 0; i + 1 < n_lead && pl->n < GG_CLI_PLUGINS_MAX; i += 2)
        pl->paths[pl->n++] = lead[i + 1];
}

int gg_cli_apply_plugin(const char *arg, void *field, char *why, size_t why_len)
{
    struct gg_cli_plugins *pl = field;
    if (pl && pl->n >= GG_CLI_PLUGINS_MAX) {
        snprintf(why, why_len, "more than %d plugins", GG_CLI_PLUGINS_MAX);
        return GG_EXIT_USAGE;
    }
    if (gg_cli_load_plugin(arg) != 0)
        return GG_EXIT_HARNESS; /* the loader said why */
    if (pl)
        pl->paths[pl->n++] = arg;
    return 0;
}

int gg_cli_kernel_present(struct gg_cli_backends *b, const struct gg_kernel *k, char *msg,
                          size_t msg_len)
{
    int be = (int)k->backend;
    if (!b->asked[be]++)
        b->present[be] = gg_device_present(k->backend, b->why[be], sizeof b->why[be]);
    if (!b->present[be])
        snprintf(msg, msg_len, "kernel %s cannot run here: %s", k->name, b->why[be]);
    return b->present[be];
}

int gg_cli_kernel_refused(const char *name)
{
    gg_registry_init();
    const struct gg_kernel *k = gg_registry_find(name);
    struct gg_cli_backends b = {.asked = {0}};
    char msg[1024];
    if (!k || gg_cli_kernel_present(&b, k, msg, sizeof msg))
        return 0;
    fprintf(stderr, "ggfuzz: %s\n", msg);
    return GG_EXIT_REFUSED;
}

int gg_cli_each_case(const char *path, const char *verb, void (*each)(void *ctx, const char *file),
                     void *ctx)
{
    char **files = NULL, **skipped = NULL, err[512];
    size_t n = 0, n_skipped = 0;
    if (gg_corpus_list(path, &files, &n, &skipped, &n_skipped, err, sizeof err) != GG_OK) {
        printf("%-6s %s\n", "ERROR", err);
        return 1;
    }
    for (size_t i = 0; i < n_skipped; i++)
        printf("%-6s %s (skipped: its cases are not %s)\n", "ERROR", skipped[i], verb);
    gg_corpus_list_free(skipped, n_skipped);
    for (size_t i = 0; i < n; i++)
        each(ctx, files[i]);
    gg_corpus_list_free(files, n);
    return (int)n_skipped;
}

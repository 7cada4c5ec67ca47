/*
 * cli_flags.c — a command's flag table at work: the getopt_long options and optstring built from
 * its rows (with -h/--help, which every command takes), the parsing loop that hands each option
 * to the command's apply function or to gg_cli_common_option(), and the command's section of the
 * usage text. -h/--help prints that section; a usage error is one line naming the flag or value
 * at fault, then where to look ("try 'ggfuzz CMD --help'"), never the whole usage text.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"

enum {
    USAGE_WIDTH = 96, /* columns of the usage text */
    HELP_COLUMN = 24  /* where a flag's help starts */
};

/* getopt's value for row i: its short letter, else a value past every character. */
static int flag_val(const struct gg_cli_flag *f, int i)
{
    return f->short_name ? f->short_name : 256 + i;
}

int gg_cli_parse(const struct gg_cli_command *cmd, int argc, char **argv,
                 int (*apply)(int id, const char *arg, void *ctx), void *ctx,
                 struct gg_cli_plugins *pl)
{
    struct option longopts[GG_CLI_FLAGS_MAX + 2];
    char optstring[2 * GG_CLI_FLAGS_MAX + 3] = ":h"; /* ':': a missing value is told apart */
    int n = 0, len = 2;
    for (const struct gg_cli_flag *f = cmd->flags; f->name && n < GG_CLI_FLAGS_MAX; f++, n++) {
        longopts[n] = (struct option){f->name, f->arg ? required_argument : no_argument, NULL,
                                      flag_val(f, n)};
        if (f->short_name) {
            optstring[len++] = f->short_name;
            if (f->arg)
                optstring[len++] = ':';
        }
    }
    optstring[len] = '\0';
    longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n + 1] = (struct option){NULL, 0, NULL, 0};
    int ch, rc = GG_CLI_TAKEN, saved_opterr = opterr;
    optind = 1;
    opterr = 0; /* the messages are ours */
    while (rc == GG_CLI_TAKEN && (ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if (ch == 'h') {
            gg_cli_command_usage(stdout, "usage: ", cmd);
            rc = 0;
            break;
        }
        if (ch == '?' || ch == ':') {
            const char *at = argv[optind - 1];
            if (ch == '?' && optopt && strncmp(at, "--", 2) != 0)
                fprintf(stderr, "ggfuzz %s: unknown option '-%c'\n", cmd->name, optopt);
            else
                fprintf(stderr, "ggfuzz %s: %s '%s'\n", cmd->name,
                        ch == ':' ? "a value is missing after" : "unknown option", at);
            rc = GG_EXIT_USAGE;
            break;
        }
        int id = GG_CLI_UNKNOWN;
        for (int i = 0; i < n; i++)
            if (ch == flag_val(&cmd->flags[i], i))
                id = cmd->flags[i].id;
        rc = apply ? apply(id, optarg, ctx) : GG_CLI_OTHER;
        if (rc == GG_CLI_OTHER)
            rc = gg_cli_common_option(id, optarg, pl);
    }
    opterr = saved_opterr;
    if (rc == GG_EXIT_USAGE)
        gg_cli_usage_hint(cmd);
    return rc;
}

void gg_cli_usage_hint(const struct gg_cli_command *cmd)
{
    if (cmd != NULL)
        fprintf(stderr, "try 'ggfuzz %s --help'\n", cmd->name);
    else
        fprintf(stderr, "try 'ggfuzz --help'\n");
}

/* Writes text word by word from column col on, a line that would pass USAGE_WIDTH going on at
   column indent; ends the line. */
static void put_wrapped(FILE *f, const char *text, int col, int indent)
{
    for (int first = 1; *text; first = 0) {
        int word = (int)strcspn(text, " ");
        if (!first && col + 1 + word > USAGE_WIDTH)
            col = fprintf(f, "\n%*s", indent, "") - 1;
        else if (!first)
            col += fprintf(f, " ");
        col += fprintf(f, "%.*s", word, text);
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

void gg_cli_command_usage(FILE *f, const char *prefix, const struct gg_cli_command *cmd)
{
    fprintf(f, "%sggfuzz %s\n", prefix, cmd->usage);
    if (cmd->about)
        put_wrapped(f, cmd->about, fprintf(f, "  "), 2);
    for (const struct gg_cli_flag *fl = cmd->flags; fl->name; fl++) {
        char spec[64];
        int at = fl->short_name ? snprintf(spec, sizeof spec, "-%c, ", fl->short_name) : 0;
        snprintf(spec + at, sizeof spec - (size_t)at, "--%s%s%s", fl->name, fl->arg ? " " : "",
                 fl->arg ? fl->arg : "");
        put_wrapped(f, fl->help, fprintf(f, "  %-*s  ", HELP_COLUMN - 4, spec), HELP_COLUMN);
    }
}

/*
 * cli_flags.c — a command's flag table at work: each row's default stored in the command's
 * option struct before parsing, the getopt_long options and optstring built from the rows (with
 * -h/--help, which every command takes), each value read and checked by its row's type (or its
 * row's apply) and stored at the row's offset, and the command's section of the usage text and
 * of docs/cli.md, where each flag's default and the meaning of 0 come from its row. -h/--help
 * prints that section; a usage error is one line, "ggfuzz CMD: --flag: why", then where to look
 * ("try 'ggfuzz CMD --help'"), never the whole usage text.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"

enum {
    USAGE_WIDTH = 96, /* columns of the usage text */
    HELP_COLUMN = 24, /* where a flag's help starts */
    HELP_MAX = 2048   /* a flag's help with its note */
};

/* ---- values by type ------------------------------------------------------------------------ */

/* A number >= 0 (whole: a whole number below 2^63) into *out; -1 with why. */
static int read_number(const char *s, int whole, double *out, char *why, size_t len)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || !isfinite(v) ||
        (whole && (v != floor(v) || v >= 9223372036854775807.0))) {
        snprintf(why, len, "not a %s: '%s'", whole ? "count" : "number >= 0", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* A size (GG_CLI_SIZE) into *out; -1 with why. */
static int read_size(const char *s, int64_t *out, char *why, size_t len)
{
    size_t n = strspn(s, "0123456789"), digits = n;
    if (s[n] == '.') {
        size_t frac = strspn(s + n + 1, "0123456789");
        digits += frac;
        n += 1 + frac;
    }
    double mult = 1;
    const char *end = s + n;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (digits == 0 || *end != '\0') {
        snprintf(why, len, "cannot read size '%s' (digits with an optional K, M, G or T: 512M, "
                 "1.5G)", s);
        return -1;
    }
    double v = strtod(s, NULL) * mult;
    if (!(v >= 1)) {
        snprintf(why, len, "size '%s' is less than one byte", s);
        return -1;
    }
    if (!(v < 9223372036854775807.0)) {
        snprintf(why, len, "size '%s' is too large (at most 2^63 - 1 bytes)", s);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* The value of word s among f's words; -1 with why naming them. */
static int read_word(const struct gg_cli_flag *f, const char *s, int *out, char *why, size_t len)
{
    int n = 0;
    for (const struct gg_cli_word *w = f->words; w->word; w++, n++)
        if (strcmp(w->word, s) == 0) {
            *out = w->value;
            return 0;
        }
    size_t at = (size_t)snprintf(why, len, "'%s' is not ", s);
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(why + at, len - at, "%s%s", f->words[i].word,
                               i + 2 < n ? ", " : i + 2 == n ? " or " : "");
    return -1;
}

/* A count of f (whole, within its range and its field) into *out; -1 with why. */
static int read_count(const struct gg_cli_flag *f, const char *s, double *out, char *why,
                      size_t len)
{
    double top = f->size == sizeof(int) ? (double)INT_MAX : 9223372036854775807.0;
    if (f->max > 0 && f->max < top)
        top = f->max;
    if (read_number(s, 1, out, why, len) != 0)
        return -1;
    if (*out < f->min || *out > top) {
        if (f->max > 0)
            snprintf(why, len, "%g to %g, not %s", f->min, f->max, s);
        else if (*out < f->min)
            snprintf(why, len, "at least %g, not %s", f->min, s);
        else
            snprintf(why, len, "at most %g, not %s", top, s);
        return -1;
    }
    return 0;
}

/* Stores number v in f's field by its type. */
static void store_number(const struct gg_cli_flag *f, void *field, double v)
{
    switch (f->type) {
    case GG_CLI_COUNT:
        if (f->size == sizeof(int))
            *(int *)field = (int)v;
        else
            *(int64_t *)field = (int64_t)v;
        break;
    case GG_CLI_LIMIT: *(double *)field = v == 0 ? GG_NO_LIMIT : v; break;
    case GG_CLI_SIZE: *(int64_t *)field = (int64_t)v; break;
    case GG_CLI_SEED: *(uint64_t *)field = (uint64_t)v; break;
    default: *(double *)field = v; break;
    }
}

/* Reads arg by f's type into its field: 0, or -1 with why. */
static int read_value(const struct gg_cli_flag *f, const char *arg, void *field, char *why,
                      size_t len)
{
    double v;
    switch (f->type) {
    case GG_CLI_SWITCH: *(int *)field = 1; return 0;
    case GG_CLI_STRING: *(const char **)field = arg; return 0;
    case GG_CLI_COUNT:
        if (read_count(f, arg, &v, why, len) != 0)
            return -1;
        store_number(f, field, v);
        return 0;
    case GG_CLI_NUMBER:
    case GG_CLI_LIMIT:
        if (read_number(arg, 0, &v, why, len) != 0)
            return -1;
        if (f->type == GG_CLI_NUMBER && f->max > 0 && (v < f->min || v > f->max)) {
            snprintf(why, len, "a number from %g to %g, not '%s'", f->min, f->max, arg);
            return -1;
        }
        store_number(f, field, v);
        return 0;
    case GG_CLI_SECONDS:
        if (read_number(arg, 0, &v, why, len) != 0)
            return -1;
        if (v <= 0) {
            snprintf(why, len, "more than 0 seconds, not '%s'", arg);
            return -1;
        }
        *(double *)field = v;
        return 0;
    case GG_CLI_SIZE: return read_size(arg, field, why, len);
    case GG_CLI_WORD: return read_word(f, arg, field, why, len);
    case GG_CLI_SEED: {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(arg, &end, 0);
        if (errno || end == arg || *end || arg[0] == '-') {
            snprintf(why, len, "not a seed: '%s'", arg);
            return -1;
        }
        *(uint64_t *)field = u;
        return 0;
    }
    case GG_CLI_LIST: {
        struct gg_cli_list *l = field;
        if (l->n >= (int)f->max) {
            snprintf(why, len, "given more than %g times", f->max);
            return -1;
        }
        l->item[l->n++] = arg;
        return 0;
    }
    }
    return -1;
}

/* Stores f's default (set) in its field. */
static void store_default(const struct gg_cli_flag *f, void *field)
{
    if (f->type == GG_CLI_STRING) {
        *(const char **)field = f->dflt.str;
    } else if (f->type == GG_CLI_WORD) {
        char why[256];
        read_word(f, f->dflt.str, field, why, sizeof why);
    } else {
        store_number(f, field, f->dflt.num);
    }
}

/* ---- parsing ------------------------------------------------------------------------------- */

/* getopt's value for row i: its short letter, else a value past every character. */
static int flag_val(const struct gg_cli_flag *f, int i)
{
    return f->short_name ? f->short_name : 256 + i;
}

/* Takes option f's value arg into opts: GG_CLI_TAKEN, or the exit code after its message. */
static int take(const struct gg_cli_command *cmd, const struct gg_cli_flag *f, const char *arg,
                void *opts)
{
    char why[1024] = "";
    void *field = f->size ? (char *)opts + f->at : NULL;
    int rc = f->apply ? f->apply(arg, field, why, sizeof why)
             : read_value(f, arg, field, why, sizeof why) != 0 ? GG_EXIT_USAGE : 0;
    if (rc == 0)
        return GG_CLI_TAKEN;
    if (why[0] && strncmp(why, "--", 2) == 0)
        fprintf(stderr, "ggfuzz %s: %s\n", cmd->name, why);
    else if (why[0])
        fprintf(stderr, "ggfuzz %s: --%s: %s\n", cmd->name, f->name, why);
    return rc;
}

int gg_cli_parse(const struct gg_cli_command *cmd, int argc, char **argv, void *opts)
{
    struct option longopts[GG_CLI_FLAGS_MAX + 2];
    char optstring[2 * GG_CLI_FLAGS_MAX + 3] = ":h"; /* ':': a missing value is told apart */
    int n = 0, len = 2;
    for (const struct gg_cli_flag *f = cmd->flags; f->name && n < GG_CLI_FLAGS_MAX; f++, n++) {
        if (f->dflt.set && f->size)
            store_default(f, (char *)opts + f->at);
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
        for (int i = 0; i < n; i++)
            if (ch == flag_val(&cmd->flags[i], i))
                rc = take(cmd, &cmd->flags[i], optarg, opts);
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

/* ---- what the tables say ------------------------------------------------------------------- */

void gg_cli_flag_note(const struct gg_cli_flag *f, char *buf, size_t len)
{
    const char *zero = f->type == GG_CLI_LIMIT ? "no limit" : f->zero;
    char tail[256] = "";
    if (zero)
        snprintf(tail, sizeof tail, "; 0: %s", zero);
    if (f->dflt.set && (f->type == GG_CLI_STRING || f->type == GG_CLI_WORD))
        snprintf(buf, len, "default %s", f->dflt.str);
    else if (f->dflt.set && zero && f->dflt.num == 0)
        snprintf(buf, len, "default 0: %s", zero);
    else if (f->dflt.set)
        snprintf(buf, len, "default %g%s", f->dflt.num, tail);
    else if (f->dflt.text)
        snprintf(buf, len, "default: %s%s", f->dflt.text, tail);
    else
        snprintf(buf, len, "%s", zero ? tail + 2 : "");
}

/* The size a field of type t must have (0: any, for a row with apply). */
static size_t type_size(enum gg_cli_type t, size_t size)
{
    switch (t) {
    case GG_CLI_SWITCH: case GG_CLI_WORD: return sizeof(int);
    case GG_CLI_COUNT: return size == sizeof(int64_t) ? sizeof(int64_t) : sizeof(int);
    case GG_CLI_NUMBER: case GG_CLI_SECONDS: case GG_CLI_LIMIT: return sizeof(double);
    case GG_CLI_SIZE: return sizeof(int64_t);
    case GG_CLI_STRING: return sizeof(const char *);
    case GG_CLI_SEED: return sizeof(uint64_t);
    case GG_CLI_LIST: return sizeof(struct gg_cli_list);
    }
    return 0;
}

/* What is wrong with row f ("" when nothing), into why. */
static void row_fault(const struct gg_cli_flag *f, char *why, size_t len)
{
    int typed = f->type != GG_CLI_SWITCH && f->type != GG_CLI_STRING && f->type != GG_CLI_LIST;
    int w = 0;
    why[0] = '\0';
    if (!f->apply && f->size != type_size(f->type, f->size))
        snprintf(why, len, "its field's size %zu does not fit its type", f->size);
    else if ((f->arg == NULL) != (f->type == GG_CLI_SWITCH))
        snprintf(why, len, "a value placeholder is for a flag with a value");
    else if (typed && !f->dflt.set && !f->dflt.text)
        snprintf(why, len, "no default");
    else if (f->apply && f->dflt.set)
        snprintf(why, len, "a row with apply takes its default in words");
    else if (f->zero && f->type != GG_CLI_COUNT && f->type != GG_CLI_SEED)
        snprintf(why, len, "only counts and seeds say what 0 means");
    else if (f->type == GG_CLI_WORD && (f->words == NULL || !f->dflt.set ||
                                        read_word(f, f->dflt.str, &w, why, len) != 0))
        snprintf(why, len, "a word flag needs its words and one of them as its default");
    else if (f->type == GG_CLI_LIST && !(f->max >= 1 && f->max <= GG_CLI_LIST_MAX))
        snprintf(why, len, "a list needs 1 <= max <= %d", GG_CLI_LIST_MAX);
    else if (f->help == NULL || strstr(f->help, "default"))
        snprintf(why, len, "its help must say what it does, and its default only in the row");
}

int gg_cli_table_check(const struct gg_cli_command *cmd, char *why, size_t why_len)
{
    int n = 0;
    for (const struct gg_cli_flag *f = cmd->flags; f->name; f++, n++) {
        char fault[256];
        row_fault(f, fault, sizeof fault);
        for (const struct gg_cli_flag *g = cmd->flags; g < f && !fault[0]; g++)
            if (strcmp(g->name, f->name) == 0 || (f->short_name && g->short_name == f->short_name))
                snprintf(fault, sizeof fault, "its name is taken by an earlier row");
        if (fault[0]) {
            snprintf(why, why_len, "ggfuzz %s --%s: %s", cmd->name, f->name, fault);
            return -1;
        }
    }
    if (n >= GG_CLI_FLAGS_MAX) {
        snprintf(why, why_len, "ggfuzz %s: more than %d flags", cmd->name, GG_CLI_FLAGS_MAX - 1);
        return -1;
    }
    return 0;
}

/* ---- the usage text ------------------------------------------------------------------------ */

void gg_cli_put_wrapped(FILE *f, const char *text, int col, int indent)
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

/* Row fl's spelling ("-o, --output FILE") and its help with its note, into spec and help. */
static void flag_text(const struct gg_cli_flag *fl, char *spec, size_t spec_len, char *help,
                      size_t help_len)
{
    int at = fl->short_name ? snprintf(spec, spec_len, "-%c, ", fl->short_name) : 0;
    snprintf(spec + at, spec_len - (size_t)at, "--%s%s%s", fl->name, fl->arg ? " " : "",
             fl->arg ? fl->arg : "");
    char note[512];
    gg_cli_flag_note(fl, note, sizeof note);
    snprintf(help, help_len, note[0] ? "%s (%s)" : "%s", fl->help, note);
}

void gg_cli_command_usage(FILE *f, const char *prefix, const struct gg_cli_command *cmd)
{
    fprintf(f, "%sggfuzz %s\n", prefix, cmd->usage);
    if (cmd->about)
        gg_cli_put_wrapped(f, cmd->about, fprintf(f, "  "), 2);
    for (const struct gg_cli_flag *fl = cmd->flags; fl->name; fl++) {
        char spec[64], help[HELP_MAX];
        flag_text(fl, spec, sizeof spec, help, sizeof help);
        gg_cli_put_wrapped(f, help, fprintf(f, "  %-*s  ", HELP_COLUMN - 4, spec), HELP_COLUMN);
    }
}

void gg_cli_markdown_cell(FILE *f, const char *text, int code)
{
    for (const char *c = text; *c; c++) {
        int word_start = c == text || !isalnum((unsigned char)c[-1]);
        if (*c == '|' || (!code && (*c == '*' || *c == '<' || (*c == '_' && word_start))))
            fputc('\\', f);
        fputc(*c, f);
    }
}

void gg_cli_command_markdown(FILE *f, const struct gg_cli_command *cmd)
{
    fprintf(f, "## ggfuzz %s\n\n```text\nggfuzz %s\n```\n\n", cmd->name, cmd->usage);
    if (cmd->about) {
        gg_cli_markdown_cell(f, cmd->about, 0);
        fputs("\n\n", f);
    }
    fputs("| flag | meaning |\n|---|---|\n", f);
    for (const struct gg_cli_flag *fl = cmd->flags; fl->name; fl++) {
        char spec[64], help[HELP_MAX];
        flag_text(fl, spec, sizeof spec, help, sizeof help);
        fputs("| `", f);
        gg_cli_markdown_cell(f, spec, 1);
        fputs("` | ", f);
        gg_cli_markdown_cell(f, help, 0);
        fputs(" |\n", f);
    }
    fputs("| `-h, --help` | this section |\n", f);
}

/*
 * gg_report_coverage.c — the part of a campaign's report on its coverage of the kernel ABI's
 * freedoms (fuzz/gen/gg_freedoms.c), read from the freedom_<op>_<field> lines of fuzzer_stats
 * (summed over the shards of a campaign of shards): one table of the layout freedoms (leading
 * dimensions, strides, offsets) and one of the group sizes, a row per freedom and a column per
 * edge class holding the cases that ran in it; then how many of the cells the kernel takes were
 * exercised, and the cells no case exercised, each with why: never drawn, or refused by the
 * kernel's supports() on every configuration. A class the freedom's dtype cannot take is a
 * blank cell. Freedoms of a later ggfuzz, unknown to this one's table, show under their key.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen.h"
#include "reports/report_int.h"

#define PREFIX "freedom_"

/* One line of the table. */
struct row {
    char name[96];
    const char *what; /* the tensor, "" for a freedom this ggfuzz does not know */
    int64_t cells[GG_EDGE_COUNT];
    int groups;       /* a row of group classes */
};

/* The coverage rows of c's statistics in their order; *n of them (malloc'd, NULL when none). */
static struct row *rows_of(const struct gg_rcampaign *c, size_t *n)
{
    *n = 0;
    struct row *r = calloc(c->stats.n ? c->stats.n : 1, sizeof *r);
    for (size_t i = 0; r != NULL && i < c->stats.n; i++) {
        const char *k = c->stats.kv[i].key;
        struct row *w = &r[*n];
        if (strncmp(k, PREFIX, strlen(PREFIX)) != 0 ||
            gg_freedom_cells_parse(c->stats.kv[i].value, w->cells) != 0)
            continue;
        /* A key this ggfuzz does not know shows as it is, but for characters no name has. */
        snprintf(w->name, sizeof w->name, "%s", k + strlen(PREFIX));
        for (char *p = w->name; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '-')
                *p = '?';
        w->what = "";
        for (int j = 0; j < gg_n_freedoms; j++) {
            char key[96];
            gg_freedom_key(j, key, sizeof key);
            if (strcmp(key, k) == 0) {
                snprintf(w->name, sizeof w->name, "%s", gg_freedoms[j].name);
                w->what = gg_freedoms[j].what;
            }
        }
        for (int e = GG_EDGE_NO_EMPTY; e < GG_EDGE_COUNT; e++)
            w->groups |= w->cells[e] != GG_FREEDOM_ABSENT;
        (*n)++;
    }
    return r;
}

/* The classes any row of the kind (groups or not) has, as a mask. */
static unsigned columns(const struct row *r, size_t n, int groups)
{
    unsigned m = 0;
    for (size_t i = 0; i < n; i++)
        for (int e = 0; e < GG_EDGE_COUNT && r[i].groups == groups; e++)
            m |= r[i].cells[e] != GG_FREEDOM_ABSENT ? GG_EDGE_BIT(e) : 0;
    return m;
}

/* The summary of rows: counts and the lists of cells never drawn and refused. */
struct summary {
    struct gg_freedom_sum sum;
    char never[2048], refused[2048];
};

static void summarise(const struct row *r, size_t n, struct summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        gg_freedom_sum_add(&s->sum, r[i].cells);
        gg_freedom_list_add(s->never, sizeof s->never, r[i].name, r[i].cells, 0);
        gg_freedom_list_add(s->refused, sizeof s->refused, r[i].name, r[i].cells,
                            GG_FREEDOM_REFUSED);
    }
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* How a writer lays a table out: the header's start, a class's heading, the header's end, the
   rule under it per class and its end (Markdown), a row's start (name, tensor), its cells (a
   count's format), a row's end, the table's end. Names and tensors need no escaping: the
   parser keeps [A-Za-z0-9_.-] of a key, the table's tensors hold no special character. */
struct style {
    const char *open, *head, *head_end, *rule, *rule_end, *row, *absent, *refused, *zero, *count,
        *row_end, *close;
    /* The prose around the tables: the heading (%zu: the campaign's number), bold, a
       paragraph, and the legend under the tables. */
    const char *heading, *b, *b_end, *p, *p_end, *legend;
};

static const struct style HTML = {
    "<div class=\"scroll\"><table><tr><th>freedom</th><th>tensor</th>", "<th>%s</th>",
    "</tr>\n", "", "", "<tr><td><code>%s</code></td><td>%s</td>", "<td></td>",
    "<td class=\"num\" style=\"color:#888\">refused</td>",
    "<td class=\"num\" style=\"background:#f8d7da;font-weight:700\">0</td>",
    "<td class=\"num\">%lld</td>", "</tr>\n", "</table></div>\n",
    "<h3 id=\"c%zu-freedoms\">ABI freedoms</h3>\n", "<b>", "</b>", "<p>", "</p>\n",
    "<p class=\"small\">Cases that ran per class. packed: the packed value (an offset: a "
    "16-byte aligned pointer); pad_small: 1 to 63 elements past it; pad_tile: 64 or more; misN: "
    "a pitch or pointer N bytes off 16-byte alignment; huge: reaching 2^31 elements or bytes. 0: "
    "never drawn; refused: the kernel refused it; blank: its dtype cannot take the class. See "
    "docs/abi-coverage.md.</p>\n"};
static const struct style MD = {"| freedom | tensor |", " %s |", "\n|---|---|", "---:|", "\n",
                                 "| `%s` | %s |", " |", " refused |", " **0** |", " %lld |",
                                 "\n", "\n", "### ABI freedoms\n\n", "**", "**", "", "\n\n",
                                 "Cases that ran per class; **0**: never drawn; refused: the "
                                 "kernel refused it; blank: its dtype cannot take the class "
                                 "(docs/abi-coverage.md).\n\n"};

static void table(FILE *f, const struct style *st, const struct row *r, size_t n, int groups)
{
    unsigned cols = columns(r, n, groups);
    if (cols == 0)
        return;
    fputs(st->open, f);
    for (int e = 0; e < GG_EDGE_COUNT; e++)
        if (cols & GG_EDGE_BIT(e))
            fprintf(f, st->head, gg_edge_name((enum gg_edge)e));
    fputs(st->head_end, f);
    for (int e = 0; e < GG_EDGE_COUNT; e++)
        if (cols & GG_EDGE_BIT(e))
            fputs(st->rule, f);
    fputs(st->rule_end, f);
    for (size_t i = 0; i < n; i++) {
        if (r[i].groups != groups)
            continue;
        fprintf(f, st->row, r[i].name, r[i].what);
        for (int e = 0; e < GG_EDGE_COUNT; e++) {
            int64_t v = r[i].cells[e];
            if (!(cols & GG_EDGE_BIT(e)))
                continue;
            if (v == GG_FREEDOM_ABSENT || v == GG_FREEDOM_REFUSED || v == 0)
                fputs(v == 0 ? st->zero : v == GG_FREEDOM_ABSENT ? st->absent : st->refused, f);
            else
                fprintf(f, st->count, (long long)v);
        }
        fputs(st->row_end, f);
    }
    fputs(st->close, f);
}

/* ---- the part ---------------------------------------------------------------------------------- */

static void part(FILE *f, const struct style *st, const struct gg_rcampaign *c, size_t ci)
{
    size_t n;
    struct row *r = rows_of(c, &n);
    if (r == NULL || n == 0) {
        free(r);
        return;
    }
    struct summary s;
    summarise(r, n, &s);
    fprintf(f, st->heading, ci + 1);
    fprintf(f, "%s%s%d of %d%s cells (a freedom of the kernel ABI and an edge class) that the "
            "kernel takes were exercised by cases that ran", st->p, st->b, s.sum.exercised,
            s.sum.exercised + s.sum.never, st->b_end);
    if (s.sum.refused)
        fprintf(f, "; %d more the kernel refuses", s.sum.refused);
    fprintf(f, ".%s", st->p_end);
    if (s.sum.never)
        fprintf(f, "%s%sNever exercised, never drawn:%s %s.%s", st->p, st->b, st->b_end, s.never,
                st->p_end);
    if (s.sum.refused)
        fprintf(f, "%s%sNever exercised, refused by the kernel%s (its supports() on every "
                "configuration): %s.%s", st->p, st->b, st->b_end, s.refused, st->p_end);
    table(f, st, r, n, 0);
    table(f, st, r, n, 1);
    fputs(st->legend, f);
    free(r);
}

void gg_report_coverage_html(FILE *f, const struct gg_rcampaign *c, size_t ci)
{
    part(f, &HTML, c, ci);
}

void gg_report_coverage_md(FILE *f, const struct gg_rcampaign *c)
{
    part(f, &MD, c, 0);
}

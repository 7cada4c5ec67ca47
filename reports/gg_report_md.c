/*
 * gg_report_md.c — the Markdown summary (GitHub-flavoured) written beside index.html: the gate,
 * the case table, the groups of the worst cases with the failing ones in bold, the nights side
 * by side, and each campaign's bugs (buckets) with their representatives, replay commands and
 * member signatures, then its signatures not yet triaged. Plots are linked as the PNG files next
 * to it. Table cells escape '|' and HTML; code spans never hold a backtick.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

/* Text for a table cell or a paragraph: '|' and '\' escaped, HTML specials as entities, no
   line breaks. */
static void md(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '|': fputs("\\|", f); break;
        case '\\': fputs("\\\\", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '*': case '_': case '`': case '[': case ']': case '#':
            fputc('\\', f);
            fputc(*s, f);
            break;
        case '\n': case '\r': fputc(' ', f); break;
        default: fputc(*s, f); break;
        }
    }
}

/* A code span (in a table cell when cell is set, where '|' must still be escaped). */
static void code(FILE *f, const char *s, int cell)
{
    fputc('`', f);
    for (; s && *s; s++) {
        if (*s == '|' && cell)
            fputs("\\|", f);
        else
            fputc(*s == '`' ? '\'' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('`', f);
}

/* A fenced block long enough that no run of backticks inside closes it. */
static void fence(FILE *f, const char *info, const char *text)
{
    int longest = 0, run = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    int n = longest >= 3 ? longest + 1 : 3;
    fprintf(f, "%.*s%s\n", n, "``````````````````````````````", info);
    fputs(text, f);
    if (text[0] && text[strlen(text) - 1] != '\n')
        fputc('\n', f);
    fprintf(f, "%.*s\n\n", n, "``````````````````````````````");
}

static void db(FILE *f, struct gg_rnum v, int signed_)
{
    if (!v.set)
        fputs("-", f);
    else
        fprintf(f, signed_ ? "%+.1f" : "%.1f", v.v);
}

static void verdict(FILE *f, const char *v)
{
    int bad = gg_suite_verdict_bad(v);
    fputs(bad ? "**" : "", f);
    for (const char *p = v; *p; p++)
        fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
    fputs(bad ? "**" : "", f);
}

static void suite_part(FILE *f, const struct gg_report_doc *d)
{
    const struct gg_rsuite *s = d->suite;
    fputs("## SNR suite", f);
    if (s->tier[0]) {
        fputs(": tier ", f);
        md(f, s->tier);
    }
    fprintf(f, "\n\n**Gate: %s**\n\n", strcmp(s->gate_verdict, "pass") == 0 ? "PASS" : "FAIL");
    for (size_t i = 0; i < s->n_reasons; i++) {
        fputs("- ", f);
        md(f, s->reasons[i]);
        fputc('\n', f);
    }
    fprintf(f, "%s| cases | pass | fail | regressed | skipped | errors |\n"
               "|---:|---:|---:|---:|---:|---:|\n| %zu | %lld | %lld | %lld | %lld | %lld |\n\n",
            s->n_reasons ? "\n" : "", s->n_cases, (long long)s->n_pass, (long long)s->n_fail,
            (long long)s->n_regressed, (long long)s->n_skipped, (long long)s->n_errors);
    fputs("Suite result ", f);
    code(f, s->path, 0);
    if (s->hostname[0]) {
        fputs(", host ", f);
        md(f, s->hostname);
    }
    if (s->gpu[0]) {
        fputs(", GPU ", f);
        md(f, s->gpu);
    }
    if (s->started[0]) {
        fputs(", started ", f);
        md(f, s->started);
    }
    fputs(".\n\n### SNR per case against its threshold\n\n", f);
    if (d->margin_png[0])
        fprintf(f, "![SNR margin per case](%s)\n\n", d->margin_png);

    fputs("### Cases\n\n| # | case | kernel | shape | worst-group SNR (dB) | threshold (dB) | "
          "margin (dB) | pooled SNR (dB) | verdict | detail |\n"
          "|---:|---|---|---|---:|---:|---:|---:|---|---|\n", f);
    for (size_t i = 0; i < s->n_cases; i++) {
        const struct gg_rcase *c = &s->cases[i];
        fprintf(f, "| %zu | ", i + 1);
        md(f, c->label);
        fputs(" | ", f);
        md(f, c->kernel);
        if (c->mutant[0]) {
            fputs(" + mutant ", f);
            md(f, c->mutant);
        }
        fputs(" | ", f);
        if (c->shape[0])
            code(f, c->shape, 1);
        fputs(" | ", f);
        if (c->exact)
            fputs("exact", f);
        else
            db(f, c->worst_group_snr_db, 0);
        if (c->worst_group >= 0)
            fprintf(f, " (g%lld)", (long long)c->worst_group);
        fputs(" | ", f);
        db(f, c->threshold_db, 0);
        fputs(" | ", f);
        db(f, c->margin_db, 1);
        fputs(" | ", f);
        db(f, c->pooled_snr_db, 0);
        fputs(" | ", f);
        verdict(f, c->verdict);
        fputs(" | ", f);
        md(f, c->reason);
        if (c->advisory && c->advisory[0]) {
            fputs(c->reason[0] ? "; advisory: " : "advisory: ", f);
            md(f, c->advisory);
        }
        fputs(" |\n", f);
    }
    fputs("\n", f);
}

static void group_rows(FILE *f, const struct gg_rcase *c, const size_t *order, size_t n)
{
    fputs("| group | rows | SNR (dB) | margin (dB) | |\n|---:|---:|---:|---:|---|\n", f);
    for (size_t i = 0; i < n; i++) {
        const struct gg_rgroup *g = &c->groups[order ? order[i] : i];
        int bad = gg_report_group_bad(c, g);
        const char *b = bad ? "**" : "";
        fprintf(f, "| %s%lld%s | ", b, (long long)g->g, b);
        if (g->rows >= 0)
            fprintf(f, "%lld", (long long)g->rows);
        fputs(" | ", f);
        if (g->snr_db.set)
            fprintf(f, "%s%.1f%s", b, g->snr_db.v, b);
        else
            fputs(g->exact ? "exact" : g->rows == 0 ? "empty" : "-", f);
        fputs(" | ", f);
        if (g->snr_db.set && c->threshold_db.set)
            fprintf(f, "%s%+.1f%s", b, g->snr_db.v - c->threshold_db.v, b);
        fprintf(f, " | %s |\n", bad ? "**below threshold**" : "");
    }
    fputc('\n', f);
}

static void worst_part(FILE *f, const struct gg_report_doc *d)
{
    fputs("### Worst cases: SNR per group\n\n", f);
    if (d->n_worst == 0)
        fputs("No case has per-group numbers.\n\n", f);
    for (size_t k = 0; k < d->n_worst; k++) {
        const struct gg_rcase *c = &d->suite->cases[d->worst[k]];
        fprintf(f, "#### %zu. ", k + 1);
        md(f, c->label);
        fputs(": ", f);
        verdict(f, c->verdict);
        fputs("\n\n", f);
        md(f, c->kernel);
        if (c->shape[0]) {
            fputs(", ", f);
            code(f, c->shape, 0);
        }
        if (c->threshold_db.set)
            fprintf(f, ", threshold %.1f dB", c->threshold_db.v);
        if (c->pooled_snr_db.set)
            fprintf(f, ", pooled SNR %.1f dB", c->pooled_snr_db.v);
        size_t bad = 0;
        for (size_t i = 0; i < c->n_groups; i++)
            bad += gg_report_group_bad(c, &c->groups[i]);
        fprintf(f, ". %s%zu of %zu groups below threshold%s.\n\n", bad ? "**" : "", bad,
                c->n_groups, bad ? "**" : "");
        if (d->worst_png[k][0]) {
            fputs("![SNR per group of ", f);
            md(f, c->label);
            fprintf(f, "](%s)\n\n", d->worst_png[k]);
        }
        size_t *order = malloc((c->n_groups + 1) * sizeof *order);
        if (order == NULL)
            continue;
        gg_report_groups_by_snr(c, order);
        int all = c->n_groups <= GG_REPORT_GROUPS_INLINE;
        if (!all)
            fprintf(f, "The %d lowest of %zu groups:\n\n", GG_REPORT_GROUPS_SHOWN, c->n_groups);
        group_rows(f, c, all ? NULL : order, all ? c->n_groups : GG_REPORT_GROUPS_SHOWN);
        free(order);
    }
}

/* The campaign's share per GPU, when it was spread over GPUs. */
static void gpu_table(FILE *f, const struct gg_rcampaign *c)
{
    int ids[64];
    size_t n = gg_report_gpus(c, ids, 64);
    if (n == 0)
        return;
    fputs("| GPU |", f);
    for (int k = 0; k < GG_REPORT_GPU_COLUMNS; k++)
        fprintf(f, " %s |", gg_report_gpu_columns[k][1]);
    fputs("\n|---|", f);
    for (int k = 0; k < GG_REPORT_GPU_COLUMNS; k++)
        fputs("---|", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "\n| %d |", ids[i]);
        for (int k = 0; k < GG_REPORT_GPU_COLUMNS; k++) {
            const char *v = gg_report_gpu_stat(c, ids[i], gg_report_gpu_columns[k][0]);
            fputs(" ", f);
            md(f, v ? v : "");
            fputs(" |", f);
        }
        const char *retired = gg_report_gpu_stat(c, ids[i], "retired");
        if (retired && strcmp(retired, "0") != 0)
            fputs(" given up", f);
    }
    fputs("\n\n", f);
}

/* "seen N times, first T, last T" */
static void sightings(FILE *f, long long count, const char *first, const char *last)
{
    if (count >= 0)
        fprintf(f, "seen %lld time%s", count, count == 1 ? "" : "s");
    if (first[0]) {
        fputs(count >= 0 ? ", first " : "first ", f);
        md(f, first);
        fputs(", last ", f);
        md(f, last);
    }
}

/* Ends a paragraph and writes the command that replays case file path. */
static void replay_fence(FILE *f, const struct gg_rcampaign *c, const char *path)
{
    char cmd[4400];
    gg_report_replay_cmd(c, path, cmd, sizeof cmd);
    fputs("\n\n", f);
    fence(f, "sh", cmd);
}

/* One bug: its form, facts, representative with the command that replays it, and a compact
   list of its member signatures (the first GG_REPORT_MEMBERS_MD). */
static void bug_part(FILE *f, const struct gg_rcampaign *c, const struct gg_rbucket *r, size_t k)
{
    const struct gg_bucket *b = r->b;
    fprintf(f, "#### Bug %zu: ", k + 1);
    md(f, b->cls);
    fputs(", bucket ", f);
    md(f, b->id);
    fputs(r->new_tonight == 1 ? " (new)\n\n" : "\n\n", f);
    code(f, b->form, 0);
    fputs("\n\n", f);
    if (r->kernel[0]) {
        md(f, r->kernel);
        if (r->mutant[0]) {
            fputs(" + mutant ", f);
            md(f, r->mutant);
        }
        fputs(". ", f);
    }
    fprintf(f, "%zu signature%s, ", r->n_members, r->n_members == 1 ? "" : "s");
    sightings(f, b->count, b->first_seen, b->last_seen);
    if (r->gpus[0]) {
        fputs(", GPU ", f);
        md(f, r->gpus);
    }
    fprintf(f, ".\n\nRepresentative (%lld group%s, %lld output%s)", (long long)b->groups,
            b->groups == 1 ? "" : "s", (long long)b->elems, b->elems == 1 ? "" : "s");
    if (r->shape[0]) {
        fputs(" ", f);
        code(f, r->shape, 0);
    }
    if (r->observed[0]) {
        fputs(": ", f);
        md(f, r->observed);
    }
    if (r->read_error) {
        fputs(". ", f);
        md(f, r->read_error);
    }
    replay_fence(f, c, b->path);
    size_t shown = r->n_members < GG_REPORT_MEMBERS_MD ? r->n_members : GG_REPORT_MEMBERS_MD;
    if (shown > 0)
        fputs("Signatures:\n\n", f);
    for (size_t i = 0; i < shown; i++) {
        const struct gg_rfinding *fi = &c->findings[r->members[i]];
        fputs("- ", f);
        code(f, fi->signature, 0);
        if (fi->meta.count >= 0)
            fprintf(f, " (%lld)", fi->meta.count);
        fputc('\n', f);
    }
    if (shown < r->n_members) {
        char cmd[4400];
        gg_report_list_cmd(c, b->id, cmd, sizeof cmd);
        fprintf(f, "- and %zu more: ", r->n_members - shown);
        code(f, cmd, 0);
        fputc('\n', f);
    }
    fputs(shown ? "\n" : "", f);
}

static void bugs_part(FILE *f, const struct gg_rcampaign *c)
{
    fprintf(f, "### Bugs (%zu)\n\n", c->n_bugs);
    if (c->findings_dir == NULL) {
        fputs("No findings store was found.\n\n", f);
        return;
    }
    if (c->n_bugs == 0) {
        fprintf(f, "No bug is filed in a bucket%s.\n\n",
                c->n_findings ? "; the signatures found are below, not yet triaged" : "");
        return;
    }
    fputs("| # | bucket | class | signatures | sightings | first seen | last seen | GPU |\n"
          "|---:|---|---|---:|---:|---|---|---|\n", f);
    for (size_t k = 0; k < c->n_bugs; k++) {
        const struct gg_rbucket *r = &c->bugs[k];
        fprintf(f, "| %zu | ", k + 1);
        md(f, r->b->id);
        fputs(r->new_tonight == 1 ? " **new** | " : " | ", f);
        md(f, r->b->cls);
        fprintf(f, " | %zu | %lld | ", r->n_members, r->b->count);
        md(f, r->b->first_seen);
        fputs(" | ", f);
        md(f, r->b->last_seen);
        fputs(" | ", f);
        md(f, r->gpus);
        fputs(" |\n", f);
    }
    fputs("\n", f);
    for (size_t k = 0; k < c->n_bugs; k++)
        bug_part(f, c, &c->bugs[k], k);
}

/* Signatures in no bucket, each with its replay command (the first GG_REPORT_UNTRIAGED_MD). */
static void untriaged_part(FILE *f, const struct gg_rcampaign *c)
{
    if (c->n_untriaged == 0)
        return;
    fprintf(f, "### Not yet triaged (%zu signature%s)\n\n", c->n_untriaged,
            c->n_untriaged == 1 ? "" : "s");
    fputs("In no bucket yet: the minimiser had no time for them, the case cannot be read, or it "
          "fails only after earlier cases in its process.", f);
    if (c->buckets.n == 0)
        fputs(" This store has no buckets (an older ggfuzz, or `--no-minimize`).", f);
    fputs("\n\n", f);
    size_t shown = c->n_untriaged < GG_REPORT_UNTRIAGED_MD ? c->n_untriaged
                                                            : GG_REPORT_UNTRIAGED_MD;
    for (size_t k = 0; k < shown; k++) {
        const struct gg_rfinding *fi = &c->findings[c->untriaged[k]];
        fprintf(f, "%zu. ", k + 1);
        md(f, fi->cls);
        fputs(" ", f);
        code(f, fi->signature[0] ? fi->signature : "(no signature recorded)", 0);
        fputs(": ", f);
        sightings(f, fi->meta.count, fi->meta.first_seen, fi->meta.last_seen);
        if (fi->gpu >= 0)
            fprintf(f, ", GPU %d", fi->gpu);
        fputs(". ", f);
        md(f, fi->observed);
        if (fi->n_after > 0)
            fprintf(f, " **Fails only after %d earlier case%s** in the same process (its "
                    "`@after` lines, which the replay runs first); alone it passes.",
                    fi->n_after, fi->n_after == 1 ? "" : "s");
        if (fi->bucket[0]) {
            fputs(" Its `@bucket` line names bucket ", f);
            md(f, fi->bucket);
            fputs(", which has no representative in the store.", f);
        }
        if (fi->parse_error) {
            fputs(" This case does not parse: ", f);
            md(f, fi->parse_error);
        }
        replay_fence(f, c, fi->replay);
    }
    if (shown < c->n_untriaged) {
        char cmd[4400];
        gg_report_list_cmd(c, NULL, cmd, sizeof cmd);
        fprintf(f, "And %zu more: ", c->n_untriaged - shown);
        code(f, cmd, 0);
        fputs("\n\n", f);
    }
}

static void campaign_part(FILE *f, const struct gg_report_doc *d, size_t ci)
{
    const struct gg_rcampaign *c = &d->campaigns[ci];
    fputs("## Campaign ", f);
    code(f, c->dir, 0);
    fputs("\n\n", f);
    char head[128], rest[1024];
    gg_report_campaign_lead(c, head, sizeof head, rest, sizeof rest);
    fputs("**", f);
    md(f, head);
    fputs("** \xc2\xb7 ", f);
    md(f, rest);
    fputs("\n\n", f);
    const char *unverified = gg_report_stat(c, "not_verified");
    if (unverified) {
        fputs("**Not verified:** ", f);
        md(f, unverified);
        fputs(".\n\n", f);
    }
    bugs_part(f, c);
    if (d->campaign_png[ci][0])
        fprintf(f, "### Over time\n\n![bugs, signatures, coverage and cases per second over "
                "time](%s)\n\n", d->campaign_png[ci]);
    if (d->gpu_png[ci][0])
        fprintf(f, "![cases per second per GPU](%s)\n\nPer GPU over the whole run "
                "(fuzzer_stats): plot_data has no series per GPU.\n\n", d->gpu_png[ci]);
    untriaged_part(f, c);
    gg_report_coverage_md(f, c);
    static const char *const keys[][2] = {{"kernel", "kernel"},
                                          {"mutant", "mutant"},
                                          {"run_time", "run time (s)"},
                                          {"shards", "shards"},
                                          {"execs_done", "executions"},
                                          {"execs_per_sec", "executions / s"},
                                          {"features_total", "features"},
                                          {"faults_total", "faults"},
                                          {"buckets", "bugs (buckets)"},
                                          {"buckets_new", "new bugs"},
                                          {"faults_unique", "unique signatures"},
                                          {"untriaged", "signatures in no bucket yet"},
                                          {"refused", "cases refused"},
                                          {"errors", "cases that could not run"},
                                          {"case_ms_worker", "a case in a worker"},
                                          {"gpu_busy_estimate", "GPU busy (estimate)"},
                                          {"stop_reason", "stopped by"},
                                          {"seed", "seed"}};
    fputs("### Statistics\n\n", f);
    int any = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = gg_report_stat(c, keys[i][0]);
        if (v == NULL)
            continue;
        if (!any++)
            fputs("| | |\n|---|---|\n", f);
        char when[512];
        if (strcmp(keys[i][0], "case_ms_worker") == 0)
            v = gg_report_case_time(c, when, sizeof when);
        fprintf(f, "| %s | ", keys[i][1]);
        md(f, v);
        fputs(" |\n", f);
    }
    fputs(any ? "\n" : "No fuzzer_stats in this directory.\n\n", f);
    gpu_table(f, c);
}

static void count_cell(FILE *f, long long v)
{
    if (v >= 0)
        fprintf(f, " %lld |", v);
    else
        fputs(" - |", f);
}

/* The trend across nights: one row per night. */
static void nights_part(FILE *f, const struct gg_report_doc *d)
{
    const struct gg_rnights *t = d->nights;
    fprintf(f, "## Nights (%zu)\n\n", t->count);
    if (t->history) {
        fputs("Every campaign directory under ", f);
        code(f, t->history, 0);
        fputs(t->given ? " and those given" : "", f);
    } else {
        fputs("The campaigns given", f);
    }
    fputs(", by start time. A bug is new on a night when no earlier night here holds its "
          "bucket.\n\n", f);
    if (d->nights_png[0])
        fprintf(f, "![bugs and cases per night](%s)\n\n", d->nights_png);
    fputs("| night | directory | kernel | cases | cases / s | signatures | not yet triaged | "
          "bugs | new bugs |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n", f);
    for (size_t k = 0; k < t->count; k++) {
        const struct gg_rnight *n = &t->n[k];
        fputs("| ", f);
        md(f, n->label);
        fputs(" | ", f);
        code(f, n->dir, 1);
        fputs(" | ", f);
        if (n->error) {
            md(f, n->error);
            fputs(" | | | | | | |\n", f);
            continue;
        }
        md(f, n->kernel);
        if (n->mutant[0]) {
            fputs(" + mutant ", f);
            md(f, n->mutant);
        }
        fputs(" |", f);
        count_cell(f, n->cases);
        if (isfinite(n->rate))
            fprintf(f, " %.1f |", n->rate);
        else
            fputs(" - |", f);
        count_cell(f, n->signatures);
        count_cell(f, n->untriaged);
        count_cell(f, n->buckets);
        count_cell(f, n->buckets_new);
        fputc('\n', f);
    }
    fputc('\n', f);
}

void gg_report_md_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir)
{
    (void)out_dir; /* plots are linked by file name, beside the summary */
    fprintf(f, "# ggfuzz report\n\nGenerated %s by ggfuzz %s.\n\n", d->generated, GG_VERSION);
    if (d->note[0]) {
        fputs("> ", f);
        md(f, d->note);
        fputs("\n\n", f);
    }
    if (d->suite) {
        suite_part(f, d);
        worst_part(f, d);
    }
    if (d->nights && d->nights->count > 1)
        nights_part(f, d);
    for (size_t i = 0; i < d->n_campaigns; i++)
        campaign_part(f, d, i);
}

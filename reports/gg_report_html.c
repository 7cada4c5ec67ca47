/*
 * gg_report_html.c — the HTML page of a report: one self-contained file (inline CSS, every plot a
 * base64 PNG data URI, every input string escaped, no script). It opens with the gate verdict,
 * then the SNR margin of every suite case, the per-group SNR of the worst cases, the nights side by
 * side, and each campaign (gg_report_html_campaign.c). Also the escaping and the embedded plots
 * both files write with.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_int.h"

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0;padding:0 2rem 3rem;color:#222;background:#fafafa;line-height:1.4}"
    "header{padding:1.2rem 0 .6rem;border-bottom:2px solid #ddd;margin-bottom:1rem}"
    "h1{margin:0;font-size:1.6rem}"
    "h2{margin-top:2.4rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}"
    "h3{margin-top:1.8rem}"
    ".meta{color:#666;font-size:.9rem}"
    ".note{background:#fff8e1;border-left:4px solid #f9a825;padding:.5rem .8rem;margin:1rem 0}"
    ".gate{display:inline-block;font-size:1.4rem;font-weight:700;padding:.3rem 1rem;"
    "border-radius:6px;color:#fff;margin:.4rem 0}"
    ".gate.pass{background:#2e7d32}.gate.fail{background:#c62828}"
    ".counts span{display:inline-block;margin-right:1.2rem}"
    "table{border-collapse:collapse;font-size:.85rem;background:#fff;margin:.5rem 0}"
    "th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "tr.fail td,tr.error td{background:#fdecea}tr.regressed td{background:#fff3e0}"
    "tr.skipped td{color:#888}"
    "tr.bad td{background:#f8d7da;font-weight:700;color:#8e0000}"
    ".v{font-weight:700;padding:0 .4rem;border-radius:3px;color:#fff;font-size:.8rem;"
    "white-space:nowrap}"
    ".v.pass{background:#2e7d32}.v.fail,.v.error{background:#c62828}"
    ".v.regressed{background:#ef6c00}.v.skipped{background:#9e9e9e}"
    ".neg{color:#c62828;font-weight:700}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "img.plot{max-width:100%;border:1px solid #ddd;background:#fff;display:block;margin:.5rem 0}"
    "pre{background:#f5f5f5;border:1px solid #ddd;padding:.5rem;overflow-x:auto;font-size:.8rem;"
    "margin:.4rem 0}pre.case{white-space:pre-wrap;word-break:break-all}"
    "code{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.85em}"
    ".finding{background:#fff;border:1px solid #ddd;border-left:4px solid #c62828;"
    "padding:.4rem 1rem;margin:1rem 0}"
    ".finding h4{margin:.3rem 0;word-break:break-all}"
    ".small{font-size:.8rem;color:#555}"
    "code.shape{font-size:.75rem}code.shape span{white-space:nowrap}td.detail{min-width:12rem}"
    "td.when{white-space:nowrap}"
    "dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.5rem 0}"
    "dl.kv dt{color:#555}dl.kv dd{margin:0}"
    ".lead{font-size:1.05rem}"
    ".bug{background:#fff;border:1px solid #ddd;border-left:6px solid #c62828;"
    "padding:.4rem 1rem;margin:1rem 0}.bug h4{margin:.3rem 0;word-break:break-all}"
    ".finding{border-left-color:#ef6c00}"
    ".new{background:#c62828;color:#fff;font-size:.7rem;font-weight:700;padding:0 .3rem;"
    "border-radius:3px}"
    "summary{cursor:pointer;color:#1565c0}details table{margin-left:1rem}"
    "table.buckets code,details.members code{word-break:break-all}";

/* ---- output helpers ------------------------------------------------------------------------ */

/* Text with & < > " ' escaped. */
void gg_report_html_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

/* Escaped text that may break after '_', '/' and ',' (long case names and signatures). */
static void esc_wbr(FILE *f, const char *s)
{
    char one[2] = "";
    for (; s && *s; s++) {
        one[0] = *s;
        gg_report_html_esc(f, one);
        if (*s == '_' || *s == '/' || *s == ',')
            fputs("<wbr>", f);
    }
}

/* A dB value with one decimal, or a dash. signed_ adds '+' to positive values. */
static void db(FILE *f, struct gg_rnum v, int signed_)
{
    if (!v.set)
        fputs("&ndash;", f);
    else if (v.v < 0 && signed_)
        fprintf(f, "<span class=\"neg\">%.1f</span>", v.v);
    else
        fprintf(f, signed_ ? "%+.1f" : "%.1f", v.v);
}

static void verdict_badge(FILE *f, const char *verdict)
{
    fprintf(f, "<span class=\"v %s\">", verdict);
    for (const char *p = verdict; *p; p++)
        fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
    fputs("</span>", f);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The bytes of a file as base64 (RFC 4648, padded). */
static int write_base64(FILE *out, const char *path)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        return -1;
    unsigned char buf[3 * 1024];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        for (size_t i = 0; i < n; i += 3) {
            unsigned v = (unsigned)buf[i] << 16;
            if (i + 1 < n)
                v |= (unsigned)buf[i + 1] << 8;
            if (i + 2 < n)
                v |= buf[i + 2];
            char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63],
                         i + 1 < n ? b64[v >> 6 & 63] : '=', i + 2 < n ? b64[v & 63] : '='};
            fwrite(q, 1, 4, out);
        }
        if (n < sizeof buf)
            break;
    }
    int bad = ferror(in);
    fclose(in);
    return bad ? -1 : 0;
}

/* An embedded plot; nothing when the plot was not made. */
void gg_report_html_img(FILE *f, const char *out_dir, const char *png, const char *alt)
{
    if (png[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, png);
    fputs("<img class=\"plot\" alt=\"", f);
    gg_report_html_esc(f, alt);
    fputs("\" src=\"data:image/png;base64,", f);
    write_base64(f, path);
    fputs("\">\n", f);
}

/* ---- suite --------------------------------------------------------------------------------- */

static void suite_header(FILE *f, const struct gg_rsuite *s)
{
    fputs("<section id=\"suite\">\n<h2>SNR suite", f);
    if (s->tier[0]) {
        fputs(": tier ", f);
        gg_report_html_esc(f, s->tier);
    }
    fputs("</h2>\n", f);
    int pass = strcmp(s->gate_verdict, "pass") == 0;
    fprintf(f, "<div class=\"gate %s\">GATE %s</div>\n", pass ? "pass" : "fail",
            pass ? "PASS" : "FAIL");
    if (s->n_reasons > 0) {
        fputs("<ul>\n", f);
        for (size_t i = 0; i < s->n_reasons; i++) {
            fputs("<li>", f);
            gg_report_html_esc(f, s->reasons[i]);
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    fprintf(f, "<p class=\"counts\"><span><b>%zu</b> cases</span><span><b>%lld</b> pass</span>"
               "<span><b>%lld</b> fail</span><span><b>%lld</b> regressed</span>"
               "<span><b>%lld</b> skipped</span><span><b>%lld</b> errors</span></p>\n",
            s->n_cases, (long long)s->n_pass, (long long)s->n_fail, (long long)s->n_regressed,
            (long long)s->n_skipped, (long long)s->n_errors);
    fputs("<dl class=\"kv\">", f);
    const char *keys[] = {"file", "started", "host", "cpu", "gpu", "mutant", "ggfuzz", "baseline"};
    const char *vals[] = {s->path, s->started, s->hostname, s->cpu, s->gpu, s->mutant,
                          s->ggfuzz_version, s->baseline};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (vals[i] == NULL || vals[i][0] == '\0')
            continue;
        fprintf(f, "<dt>%s</dt><dd>", keys[i]);
        gg_report_html_esc(f, vals[i]);
        fputs("</dd>", f);
    }
    if (s->seconds.set)
        fprintf(f, "<dt>duration</dt><dd>%.1f s</dd>", s->seconds.v);
    if (s->thresholds_version >= 0)
        fprintf(f, "<dt>thresholds</dt><dd>version %lld</dd>", (long long)s->thresholds_version);
    if (s->gate_snr_drop_db.set && s->baseline[0])
        fprintf(f, "<dt>allowed SNR drop</dt><dd>%.1f dB</dd>", s->gate_snr_drop_db.v);
    fputs("</dl>\n", f);
}

/* A shape string whose words never break inside ("bf16-bf16-bf16" stays on one line). */
static void shape_code(FILE *f, const char *shape)
{
    fputs("<code class=\"shape\">", f);
    for (const char *p = shape; *p;) {
        size_t n = strcspn(p, " ");
        char word[160];
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        fputs("<span>", f);
        gg_report_html_esc(f, word);
        fputs("</span>", f);
        p += n;
        for (; *p == ' '; p++)
            fputc(' ', f);
    }
    fputs("</code>", f);
}

static void case_row(FILE *f, const struct gg_rcase *c, size_t i, int with_time)
{
    fprintf(f, "<tr class=\"%s\" id=\"case-%zu\"><td class=\"num\">%zu</td><td>", c->verdict,
            i + 1, i + 1);
    verdict_badge(f, c->verdict);
    fputs("</td><td><b>", f);
    esc_wbr(f, c->label);
    fputs("</b><br><span class=\"small\">", f);
    const char *tags[] = {c->model, c->routing, c->phase, c->recipe};
    for (size_t t = 0; t < sizeof tags / sizeof *tags; t++) {
        if (tags[t][0]) {
            gg_report_html_esc(f, tags[t]);
            fputs(" &middot; ", f);
        }
    }
    if (c->ep >= 0)
        fprintf(f, "EP%lld &middot; ", (long long)c->ep);
    gg_report_html_esc(f, c->kernel);
    if (c->mutant[0]) {
        fputs(" + mutant ", f);
        gg_report_html_esc(f, c->mutant);
    }
    fputs("</span></td><td>", f);
    shape_code(f, c->shape);
    fputs("</td><td class=\"num\">", f);
    if (c->exact)
        fputs("exact", f);
    else
        db(f, c->worst_group_snr_db, 0);
    if (c->worst_group >= 0)
        fprintf(f, " <span class=\"small\">(g%lld)</span>", (long long)c->worst_group);
    fputs("</td><td class=\"num\">", f);
    db(f, c->threshold_db, 0);
    fputs("</td><td class=\"num\">", f);
    db(f, c->margin_db, 1);
    fputs("</td><td class=\"num\">", f);
    db(f, c->pooled_snr_db, 0);
    fputs("</td><td class=\"num\">", f);
    if (c->snr_drop_db.set) {
        fprintf(f, "%s%.1f", c->snr_drop_db.v > 0 ? "&minus;" : "+", fabs(c->snr_drop_db.v));
        if (c->baseline_snr_db.set)
            fprintf(f, " <span class=\"small\">(was %.1f)</span>", c->baseline_snr_db.v);
    }
    fputs("</td>", f);
    if (with_time) {
        fputs("<td class=\"num\">", f);
        if (c->time_us.set)
            fprintf(f, "%.1f%s", c->time_us.v, c->perf_regressed ? " <b>slower</b>" : "");
        fputs("</td>", f);
    }
    fputs("<td class=\"detail\">", f);
    if (c->cls[0] && strcmp(c->cls, "pass") != 0) {
        fputs("<b>", f);
        gg_report_html_esc(f, c->cls);
        fputs("</b> ", f);
    }
    gg_report_html_esc(f, c->reason);
    if (c->signature[0]) {
        fputs("<br><code class=\"small\">", f);
        esc_wbr(f, c->signature);
        fputs("</code>", f);
    }
    fputs("</td></tr>\n", f);
}

static void case_table(FILE *f, const struct gg_rsuite *s)
{
    int with_time = 0;
    for (size_t i = 0; i < s->n_cases; i++)
        with_time |= s->cases[i].time_us.set;
    fputs("<h3 id=\"cases\">Cases</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>#</th>"
          "<th>verdict</th><th>case</th><th>shape</th><th>worst-group SNR (dB)</th>"
          "<th>threshold (dB)</th><th>margin (dB)</th><th>pooled SNR (dB)</th>"
          "<th>drop vs baseline (dB)</th>", f);
    if (with_time)
        fputs("<th>time (&micro;s)</th>", f);
    fputs("<th>detail</th></tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < s->n_cases; i++)
        case_row(f, &s->cases[i], i, with_time);
    fputs("</tbody></table></div>\n", f);
}

static void group_row(FILE *f, const struct gg_rcase *c, const struct gg_rgroup *g)
{
    int bad = gg_report_group_bad(c, g);
    fprintf(f, "<tr%s><td class=\"num\">%lld</td><td class=\"num\">", bad ? " class=\"bad\"" : "",
            (long long)g->g);
    if (g->rows >= 0)
        fprintf(f, "%lld", (long long)g->rows);
    fputs("</td><td class=\"num\">", f);
    if (g->snr_db.set)
        fprintf(f, "%.1f", g->snr_db.v);
    else
        fputs(g->exact ? "exact" : g->rows == 0 ? "empty" : "&ndash;", f);
    fputs("</td><td class=\"num\">", f);
    if (g->snr_db.set && c->threshold_db.set)
        db(f, (struct gg_rnum){g->snr_db.v - c->threshold_db.v, 1}, 1);
    fprintf(f, "</td><td>%s</td></tr>\n", bad ? "below threshold" : "");
}

static void group_table(FILE *f, const struct gg_rcase *c, const size_t *order, size_t n,
                        const char *caption)
{
    fputs("<table>", f);
    if (caption)
        fprintf(f, "<caption class=\"small\">%s</caption>", caption);
    fputs("<thead><tr><th>group</th><th>rows</th><th>SNR (dB)</th><th>margin (dB)</th><th>"
          "</th></tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < n; i++)
        group_row(f, c, &c->groups[order ? order[i] : i]);
    fputs("</tbody></table>\n", f);
}

/* One sentence that says where the error lives: the failing groups against the others. */
static void group_summary(FILE *f, const struct gg_rcase *c)
{
    size_t bad = 0, empty = 0;
    for (size_t i = 0; i < c->n_groups; i++) {
        bad += gg_report_group_bad(c, &c->groups[i]);
        empty += c->groups[i].rows == 0;
    }
    fprintf(f, "<p>%zu groups (%zu empty)", c->n_groups, empty);
    if (c->threshold_db.set)
        fprintf(f, ", threshold %.1f dB", c->threshold_db.v);
    if (c->pooled_snr_db.set)
        fprintf(f, ", pooled SNR %.1f dB", c->pooled_snr_db.v);
    fputs(". ", f);
    if (bad > 0) {
        fprintf(f, "<b class=\"neg\">%zu group%s below threshold:</b> ", bad, bad > 1 ? "s" : "");
        size_t shown = 0;
        for (size_t i = 0; i < c->n_groups && shown < 8; i++)
            if (gg_report_group_bad(c, &c->groups[i]))
                fprintf(f, "%s<b>g%lld</b> (%.1f dB)", shown++ ? ", " : "",
                        (long long)c->groups[i].g, c->groups[i].snr_db.v);
        if (bad > shown)
            fprintf(f, " and %zu more", bad - shown);
        double med = gg_report_median_passing(c);
        if (!isnan(med))
            fprintf(f, "; the other groups have a median of %.1f dB", med);
        fputs(".", f);
    } else {
        fputs("No group is below its threshold.", f);
    }
    fputs("</p>\n", f);
}

static void worst_case(FILE *f, const struct gg_report_doc *d, const char *out_dir, size_t k)
{
    const struct gg_rcase *c = &d->suite->cases[d->worst[k]];
    fprintf(f, "<h3 id=\"worst-%zu\">%zu. ", k + 1, k + 1);
    gg_report_html_esc(f, c->label);
    fputs(" ", f);
    verdict_badge(f, c->verdict);
    fputs("</h3>\n<p class=\"small\">", f);
    gg_report_html_esc(f, c->kernel);
    fputs(" &middot; <code>", f);
    gg_report_html_esc(f, c->shape);
    fputs("</code>", f);
    if (c->file[0]) {
        fputs(" &middot; <code>", f);
        gg_report_html_esc(f, c->file);
        fputs("</code>", f);
    }
    fputs("</p>\n", f);
    group_summary(f, c);
    char alt[160];
    snprintf(alt, sizeof alt, "SNR per group of %s", c->label);
    gg_report_html_img(f, out_dir, d->worst_png[k], alt);
    size_t *order = malloc((c->n_groups + 1) * sizeof *order);
    if (order == NULL)
        return;
    if (c->n_groups <= GG_REPORT_GROUPS_INLINE) {
        group_table(f, c, NULL, c->n_groups, NULL);
    } else {
        gg_report_groups_by_snr(c, order);
        group_table(f, c, order, GG_REPORT_GROUPS_SHOWN, "the lowest groups");
        fprintf(f, "<details><summary>all %zu groups</summary>\n", c->n_groups);
        group_table(f, c, NULL, c->n_groups, NULL);
        fputs("</details>\n", f);
    }
    free(order);
}

static void suite_section(FILE *f, const struct gg_report_doc *d, const char *out_dir)
{
    const struct gg_rsuite *s = d->suite;
    suite_header(f, s);
    fputs("<h3 id=\"margins\">SNR per case against its threshold</h3>\n", f);
    gg_report_html_img(f, out_dir, d->margin_png, "SNR margin per case");
    case_table(f, s);
    fputs("<h3 id=\"worst\">Worst cases: SNR per group</h3>\n", f);
    if (d->n_worst == 0)
        fputs("<p>No case has per-group numbers.</p>\n", f);
    for (size_t k = 0; k < d->n_worst; k++)
        worst_case(f, d, out_dir, k);
    fputs("</section>\n", f);
}

/* ---- nights -------------------------------------------------------------------------------- */

static void count_cell(FILE *f, long long v)
{
    if (v >= 0)
        fprintf(f, "<td class=\"num\">%lld</td>", v);
    else
        fputs("<td class=\"num\">&ndash;</td>", f);
}

static void nights_section(FILE *f, const struct gg_report_doc *d, const char *out_dir)
{
    const struct gg_rnights *t = d->nights;
    fprintf(f, "<section id=\"nights\">\n<h2>Nights (%zu)</h2>\n<p class=\"small\">", t->count);
    if (t->history) {
        fputs("Every campaign directory under <code>", f);
        gg_report_html_esc(f, t->history);
        fputs("</code>", f);
        fputs(t->given ? " and those given" : "", f);
    } else {
        fputs("The campaigns given", f);
    }
    fputs(", by start time. A bug is new on a night when no earlier night here holds its "
          "bucket.</p>\n", f);
    gg_report_html_img(f, out_dir, d->nights_png, "bugs and cases per night");
    fputs("<div class=\"scroll\"><table class=\"nights\"><thead><tr><th>night</th>"
          "<th>directory</th><th>kernel</th><th>cases</th><th>cases / s</th><th>run time (s)"
          "</th><th>signatures</th><th>not yet triaged</th><th>bugs</th><th>new bugs</th></tr>"
          "</thead><tbody>\n", f);
    for (size_t k = 0; k < t->count; k++) {
        const struct gg_rnight *n = &t->n[k];
        fputs("<tr><td class=\"when\">", f);
        if (n->campaign >= 0)
            fprintf(f, "<a href=\"#campaign-%d\">", n->campaign + 1);
        gg_report_html_esc(f, n->label);
        fputs(n->campaign >= 0 ? "</a></td><td><code>" : "</td><td><code>", f);
        gg_report_html_esc(f, n->dir);
        fputs("</code></td>", f);
        if (n->error) {
            fputs("<td colspan=\"8\" class=\"neg\">", f);
            gg_report_html_esc(f, n->error);
            fputs("</td></tr>\n", f);
            continue;
        }
        fputs("<td>", f);
        gg_report_html_esc(f, n->kernel);
        if (n->mutant[0]) {
            fputs(" + mutant ", f);
            gg_report_html_esc(f, n->mutant);
        }
        fputs("</td>", f);
        count_cell(f, n->cases);
        fputs("<td class=\"num\">", f);
        if (isfinite(n->rate))
            fprintf(f, "%.1f", n->rate);
        fputs("</td><td class=\"num\">", f);
        if (isfinite(n->run_time))
            fprintf(f, "%.0f", n->run_time);
        fputs("</td>", f);
        count_cell(f, n->signatures);
        count_cell(f, n->untriaged);
        count_cell(f, n->buckets);
        count_cell(f, n->buckets_new);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n</section>\n", f);
}

/* ---- the page ------------------------------------------------------------------------------ */

void gg_report_html_layout(FILE *f, const struct gg_report_doc *d, const char *out_dir)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>ggfuzz report</title>\n<style>%s</style>\n</head>\n<body>\n", css);
    fprintf(f, "<header><h1>ggfuzz report</h1><p class=\"meta\">generated %s by ggfuzz %s</p>"
               "</header>\n<nav><ul>\n", d->generated, GG_VERSION);
    if (d->suite)
        fputs("<li><a href=\"#suite\">SNR suite</a> (<a href=\"#margins\">margins</a>, "
              "<a href=\"#cases\">cases</a>, <a href=\"#worst\">worst cases</a>)</li>\n", f);
    if (d->nights && d->nights->count > 1)
        fprintf(f, "<li><a href=\"#nights\">nights</a>: %zu</li>\n", d->nights->count);
    for (size_t i = 0; i < d->n_campaigns; i++) {
        const struct gg_rcampaign *c = &d->campaigns[i];
        fprintf(f, "<li><a href=\"#campaign-%zu\">campaign <code>", i + 1);
        gg_report_html_esc(f, c->dir);
        fprintf(f, "</code></a>: %zu bug%s, %zu signature%s</li>\n", c->n_bugs,
                c->n_bugs == 1 ? "" : "s", c->n_findings, c->n_findings == 1 ? "" : "s");
    }
    fputs("</ul></nav>\n", f);
    if (d->note[0]) {
        fputs("<p class=\"note\">", f);
        gg_report_html_esc(f, d->note);
        fputs("</p>\n", f);
    }
    if (d->suite)
        suite_section(f, d, out_dir);
    if (d->nights && d->nights->count > 1)
        nights_section(f, d, out_dir);
    for (size_t i = 0; i < d->n_campaigns; i++)
        gg_report_html_campaign(f, d, out_dir, i);
    fputs("</body>\n</html>\n", f);
}

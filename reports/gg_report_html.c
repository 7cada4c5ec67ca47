/*
 * gg_report_html.c — `ggfuzz report`: reads the inputs, has the plots drawn, and writes the
 * self-contained HTML page (inline CSS, every plot a base64 PNG data URI, every input string
 * escaped, no script) beside the Markdown summary. The page opens with the gate verdict, then
 * the SNR margin of every suite case, the per-group SNR of the worst cases, the nights side by
 * side, and each campaign: its bugs (buckets) first, each with its representative case, the
 * command that replays it and its member signatures folded, then the signatures not yet
 * triaged, its plots over time and its statistics.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

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
static void esc(FILE *f, const char *s)
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
        esc(f, one);
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
static void plot_img(FILE *f, const char *out_dir, const char *png, const char *alt)
{
    if (png[0] == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, png);
    fputs("<img class=\"plot\" alt=\"", f);
    esc(f, alt);
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
        esc(f, s->tier);
    }
    fputs("</h2>\n", f);
    int pass = strcmp(s->gate_verdict, "pass") == 0;
    fprintf(f, "<div class=\"gate %s\">GATE %s</div>\n", pass ? "pass" : "fail",
            pass ? "PASS" : "FAIL");
    if (s->n_reasons > 0) {
        fputs("<ul>\n", f);
        for (size_t i = 0; i < s->n_reasons; i++) {
            fputs("<li>", f);
            esc(f, s->reasons[i]);
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
        esc(f, vals[i]);
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
        esc(f, word);
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
            esc(f, tags[t]);
            fputs(" &middot; ", f);
        }
    }
    if (c->ep >= 0)
        fprintf(f, "EP%lld &middot; ", (long long)c->ep);
    esc(f, c->kernel);
    if (c->mutant[0]) {
        fputs(" + mutant ", f);
        esc(f, c->mutant);
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
        esc(f, c->cls);
        fputs("</b> ", f);
    }
    esc(f, c->reason);
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
    esc(f, c->label);
    fputs(" ", f);
    verdict_badge(f, c->verdict);
    fputs("</h3>\n<p class=\"small\">", f);
    esc(f, c->kernel);
    fputs(" &middot; <code>", f);
    esc(f, c->shape);
    fputs("</code>", f);
    if (c->file[0]) {
        fputs(" &middot; <code>", f);
        esc(f, c->file);
        fputs("</code>", f);
    }
    fputs("</p>\n", f);
    group_summary(f, c);
    char alt[160];
    snprintf(alt, sizeof alt, "SNR per group of %s", c->label);
    plot_img(f, out_dir, d->worst_png[k], alt);
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
    plot_img(f, out_dir, d->margin_png, "SNR margin per case");
    case_table(f, s);
    fputs("<h3 id=\"worst\">Worst cases: SNR per group</h3>\n", f);
    if (d->n_worst == 0)
        fputs("<p>No case has per-group numbers.</p>\n", f);
    for (size_t k = 0; k < d->n_worst; k++)
        worst_case(f, d, out_dir, k);
    fputs("</section>\n", f);
}

/* ---- campaigns ----------------------------------------------------------------------------- */

/* The campaign's share per GPU, when it was spread over GPUs. */
static void gpu_table(FILE *f, const struct gg_rcampaign *c)
{
    int ids[64];
    size_t n = gg_report_gpus(c, ids, 64);
    if (n == 0)
        return;
    fputs("<table><tr><th>GPU</th>", f);
    for (int k = 0; k < GG_REPORT_GPU_COLUMNS; k++)
        fprintf(f, "<th>%s</th>", gg_report_gpu_columns[k][1]);
    fputs("</tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        const char *retired = gg_report_gpu_stat(c, ids[i], "retired");
        fprintf(f, "<tr><td>%d%s</td>", ids[i],
                retired && strcmp(retired, "0") != 0 ? " (given up)" : "");
        for (int k = 0; k < GG_REPORT_GPU_COLUMNS; k++) {
            const char *v = gg_report_gpu_stat(c, ids[i], gg_report_gpu_columns[k][0]);
            fputs("<td>", f);
            esc(f, v ? v : "");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void campaign_stats(FILE *f, const struct gg_rcampaign *c)
{
    static const char *const keys[][2] = {
        {"kernel", "kernel"}, {"mutant", "mutant"}, {"start_time", "started"},
        {"run_time", "run time (s)"}, {"shards", "shards"}, {"execs_done", "executions"},
        {"execs_per_sec", "executions / s"}, {"corpus_count", "corpus"},
        {"features_total", "features"}, {"faults_total", "faults"},
        {"buckets", "bugs (buckets)"}, {"buckets_new", "new bugs"},
        {"faults_unique", "unique signatures"}, {"faults_new", "new signatures"},
        {"untriaged", "signatures in no bucket yet"}, {"worker_restarts", "worker restarts"},
        {"timeouts", "timeouts"}, {"refused", "cases refused"},
        {"errors", "cases that could not run"}, {"stop_reason", "stopped by"}, {"seed", "seed"},
        {"command_line", "command"}};
    if (c->stats.n == 0) {
        fputs("<p>No fuzzer_stats in this directory.</p>\n", f);
        return;
    }
    fputs("<dl class=\"kv\">", f);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = gg_report_stat(c, keys[i][0]);
        if (v == NULL)
            continue;
        fprintf(f, "<dt>%s</dt><dd>", keys[i][1]);
        if (strcmp(keys[i][0], "command_line") == 0) {
            /* the whole command; a campaign of an older ggfuzz recorded its arguments only */
            fputs(strncmp(v, "fuzz ", 5) == 0 ? "<code>ggfuzz " : "<code>", f);
            esc(f, v);
            fputs("</code>", f);
        } else {
            esc(f, v);
        }
        fputs("</dd>", f);
    }
    /* Faults per class, where any. */
    fputs("<dt>faults by class</dt><dd>", f);
    int any = 0;
    for (size_t i = 0; i < c->stats.n; i++) {
        const char *k = c->stats.kv[i].key;
        if (strncmp(k, "faults_", 7) != 0 || gg_class_from_name(k + 7) == GG_CLASS_COUNT ||
            strcmp(c->stats.kv[i].value, "0") == 0)
            continue;
        fputs(any++ ? ", " : "", f);
        esc(f, k + 7);
        fputs(" ", f);
        esc(f, c->stats.kv[i].value);
    }
    fputs(any ? "</dd></dl>\n" : "none</dd></dl>\n", f);
    gpu_table(f, c);
}

/* "seen N times, first T, last T" of a finding or a bucket. */
static void sightings(FILE *f, long long count, const char *first, const char *last)
{
    if (count >= 0)
        fprintf(f, "seen %lld time%s", count, count == 1 ? "" : "s");
    if (first[0]) {
        fputs(count >= 0 ? ", first " : "first ", f);
        esc(f, first);
        fputs(", last ", f);
        esc(f, last);
    }
}

/* The command that replays case file replay (path as found, text its content), then the case
   folded under "what PATH". */
static void replay_and_case(FILE *f, const struct gg_rcampaign *c, const char *replay,
                            const char *what, const char *path, const char *text)
{
    char cmd[4400];
    gg_report_replay_cmd(c, replay, cmd, sizeof cmd);
    fputs("<p>Replay:</p><pre><code>", f);
    esc(f, cmd);
    fprintf(f, "</code></pre>\n<details><summary>%s <code>", what);
    esc(f, path);
    fputs("</code></summary><pre class=\"case\">", f);
    esc(f, text);
    fputs("</pre></details>\n", f);
}

/* A signature in no bucket: its verdict, sightings, marks and replay command; its case folded. */
static void finding_block(FILE *f, const struct gg_rcampaign *c, const struct gg_rfinding *fi,
                          size_t ci, size_t k)
{
    fprintf(f, "<div class=\"finding\" id=\"c%zu-u%zu\"><h4>%zu. ", ci + 1, k + 1, k + 1);
    esc(f, fi->cls);
    fputs(": <code>", f);
    esc(f, fi->signature[0] ? fi->signature : "(no signature recorded)");
    fputs("</code></h4>\n<p class=\"small\">", f);
    sightings(f, fi->meta.count, fi->meta.first_seen, fi->meta.last_seen);
    if (fi->gpu >= 0)
        fprintf(f, " &middot; GPU %d", fi->gpu);
    if (fi->shape[0]) {
        fputs(" &middot; <code>", f);
        esc(f, fi->shape);
        fputs("</code>", f);
    }
    fputs("</p>\n", f);
    if (fi->observed[0]) {
        fputs("<p>", f);
        esc(f, fi->observed);
        fputs("</p>\n", f);
    }
    if (fi->n_after > 0)
        fprintf(f, "<p class=\"note\"><b>Fails only after %d earlier case%s</b> in the same "
                "process (its <code>@after</code> lines, which the replay runs first); alone it "
                "passes.</p>\n", fi->n_after, fi->n_after == 1 ? "" : "s");
    if (fi->bucket[0]) {
        fputs("<p class=\"small\">Its <code>@bucket</code> line names bucket <code>", f);
        esc(f, fi->bucket);
        fputs("</code>, which has no representative in the store.</p>\n", f);
    }
    if (fi->parse_error) {
        fputs("<p class=\"neg\">This case does not parse: ", f);
        esc(f, fi->parse_error);
        fputs("</p>\n", f);
    }
    replay_and_case(f, c, fi->replay, "case", fi->path, fi->text);
    fputs("</div>\n", f);
}

/* The member signatures of bug r, folded; the first GG_REPORT_MEMBERS_HTML listed. */
static void bug_members(FILE *f, const struct gg_rcampaign *c, const struct gg_rbucket *r)
{
    fprintf(f, "<details class=\"members\"><summary>%zu member signature%s</summary>\n"
            "<table><thead><tr><th>signature</th><th>count</th><th>first seen</th>"
            "<th>last seen</th><th>GPU</th></tr></thead><tbody>\n", r->n_members,
            r->n_members == 1 ? "" : "s");
    size_t shown = r->n_members < GG_REPORT_MEMBERS_HTML ? r->n_members : GG_REPORT_MEMBERS_HTML;
    for (size_t i = 0; i < shown; i++) {
        const struct gg_rfinding *fi = &c->findings[r->members[i]];
        fputs("<tr><td><code>", f);
        esc(f, fi->signature);
        fputs("</code></td><td class=\"num\">", f);
        if (fi->meta.count >= 0)
            fprintf(f, "%lld", fi->meta.count);
        fputs("</td><td class=\"when\">", f);
        esc(f, fi->meta.first_seen);
        fputs("</td><td class=\"when\">", f);
        esc(f, fi->meta.last_seen);
        fputs("</td><td class=\"num\">", f);
        if (fi->gpu >= 0)
            fprintf(f, "%d", fi->gpu);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    if (shown < r->n_members) {
        char cmd[4400];
        gg_report_list_cmd(c, r->b->id, cmd, sizeof cmd);
        fprintf(f, "<p class=\"small\">and %zu more, the most frequent first above; all of them: "
                "<code>", r->n_members - shown);
        esc(f, cmd);
        fputs("</code></p>\n", f);
    }
    fputs("</details>\n", f);
}

static void bug_block(FILE *f, const struct gg_rcampaign *c, const struct gg_rbucket *r,
                      size_t ci, size_t k)
{
    const struct gg_bucket *b = r->b;
    fprintf(f, "<div class=\"bug\" id=\"c%zu-b%zu\"><h4>Bug %zu: <code>", ci + 1, k + 1, k + 1);
    esc(f, b->form);
    fputs("</code>", f);
    if (r->new_tonight == 1)
        fputs(" <span class=\"new\">NEW</span>", f);
    fputs("</h4>\n<p class=\"small\">bucket <code>", f);
    esc(f, b->id);
    fputs("</code> &middot; class ", f);
    esc(f, b->cls);
    if (r->kernel[0]) {
        fputs(" &middot; ", f);
        esc(f, r->kernel);
    }
    if (r->mutant[0]) {
        fputs(" + mutant ", f);
        esc(f, r->mutant);
    }
    fprintf(f, " &middot; %zu signature%s, ", r->n_members, r->n_members == 1 ? "" : "s");
    sightings(f, b->count, b->first_seen, b->last_seen);
    if (r->gpus[0]) {
        fputs(" &middot; GPU ", f);
        esc(f, r->gpus);
    }
    fprintf(f, "</p>\n<p>Representative (%lld group%s, %lld output%s)", (long long)b->groups,
            b->groups == 1 ? "" : "s", (long long)b->elems, b->elems == 1 ? "" : "s");
    if (r->shape[0]) {
        fputs(": <code>", f);
        esc(f, r->shape);
        fputs("</code>", f);
    }
    if (r->observed[0]) {
        fputs(". ", f);
        esc(f, r->observed);
    }
    fputs("</p>\n", f);
    if (r->read_error) {
        fputs("<p class=\"neg\">", f);
        esc(f, r->read_error);
        fputs("</p>\n", f);
    }
    replay_and_case(f, c, b->path, "representative case", b->path, r->text);
    bug_members(f, c, r);
    fputs("</div>\n", f);
}

/* The store's bugs: a table of the buckets, then one block per bucket. */
static void bugs_part(FILE *f, const struct gg_rcampaign *c, size_t ci)
{
    fprintf(f, "<h3 id=\"c%zu-bugs\">Bugs (%zu)</h3>\n", ci + 1, c->n_bugs);
    if (c->findings_dir == NULL) {
        fputs("<p>No findings store was found.</p>\n", f);
        return;
    }
    fputs("<p class=\"small\">A bug is a bucket of the findings store <code>", f);
    esc(f, c->findings_dir);
    fputs("</code>: the signatures whose cases minimise to one normal form, one root cause."
          "</p>\n", f);
    if (c->n_bugs == 0) {
        fprintf(f, "<p>No bug is filed in a bucket%s.</p>\n",
                c->n_findings ? "; the signatures found are below, not yet triaged" : "");
        return;
    }
    fprintf(f, "<div class=\"scroll\"><table class=\"buckets\" id=\"c%zu-buckets\"><thead><tr>"
            "<th>#</th><th>bucket</th><th>class</th><th>form</th><th>signatures</th>"
            "<th>sightings</th><th>first seen</th><th>last seen</th><th>GPU</th></tr></thead>"
            "<tbody>\n", ci + 1);
    for (size_t k = 0; k < c->n_bugs; k++) {
        const struct gg_rbucket *r = &c->bugs[k];
        const struct gg_bucket *b = r->b;
        fputs("<tr data-bucket=\"", f);
        esc(f, b->id);
        fprintf(f, "\"><td class=\"num\"><a href=\"#c%zu-b%zu\">%zu</a></td><td><code>", ci + 1,
                k + 1, k + 1);
        esc(f, b->id);
        fprintf(f, "</code>%s</td><td>", r->new_tonight == 1 ? " <span class=\"new\">NEW</span>" : "");
        esc(f, b->cls);
        fputs("</td><td><code>", f);
        esc(f, b->form);
        fprintf(f, "</code></td><td class=\"num\">%zu</td><td class=\"num\">%lld</td>"
                "<td class=\"when\">", r->n_members, b->count);
        esc(f, b->first_seen);
        fputs("</td><td class=\"when\">", f);
        esc(f, b->last_seen);
        fputs("</td><td>", f);
        esc(f, r->gpus);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    for (size_t k = 0; k < c->n_bugs; k++)
        bug_block(f, c, &c->bugs[k], ci, k);
}

/* Signatures in no bucket: the first GG_REPORT_UNTRIAGED_HTML in full, the rest counted. */
static void untriaged_part(FILE *f, const struct gg_rcampaign *c, size_t ci)
{
    if (c->n_untriaged == 0)
        return;
    fprintf(f, "<h3 id=\"c%zu-untriaged\">Not yet triaged (%zu signature%s)</h3>\n", ci + 1,
            c->n_untriaged, c->n_untriaged == 1 ? "" : "s");
    fputs("<p class=\"small\">Signatures in no bucket yet: the minimiser had no time for them "
          "(a campaign triages a signature when it sees it again), the case cannot be read, or "
          "it fails only after earlier cases in its process, which the minimiser does not take.",
          f);
    if (c->buckets.n == 0)
        fputs(" This store has no buckets: it was written by an older ggfuzz, or with "
              "<code>--no-minimize</code>.", f);
    fputs("</p>\n", f);
    size_t shown = c->n_untriaged < GG_REPORT_UNTRIAGED_HTML ? c->n_untriaged
                                                              : GG_REPORT_UNTRIAGED_HTML;
    for (size_t k = 0; k < shown; k++)
        finding_block(f, c, &c->findings[c->untriaged[k]], ci, k);
    if (shown < c->n_untriaged) {
        char cmd[4400];
        gg_report_list_cmd(c, NULL, cmd, sizeof cmd);
        fprintf(f, "<p>And %zu more, the most severe and frequent first above; all of them: "
                "<code>", c->n_untriaged - shown);
        esc(f, cmd);
        fputs("</code></p>\n", f);
    }
}

static void campaign_section(FILE *f, const struct gg_report_doc *d, const char *out_dir,
                             size_t ci)
{
    const struct gg_rcampaign *c = &d->campaigns[ci];
    fprintf(f, "<section id=\"campaign-%zu\">\n<h2>Campaign: <code>", ci + 1);
    esc(f, c->dir);
    fputs("</code></h2>\n", f);
    char head[128], rest[1024];
    gg_report_campaign_lead(c, head, sizeof head, rest, sizeof rest);
    fputs("<p class=\"lead\"><b>", f);
    esc(f, head);
    fputs("</b> &middot; ", f);
    esc(f, rest);
    fputs("</p>\n", f);
    const char *unverified = gg_report_stat(c, "not_verified");
    if (unverified) {
        fputs("<p class=\"note\"><b>Not verified:</b> ", f);
        esc(f, unverified);
        fputs(".</p>\n", f);
    }
    bugs_part(f, c, ci);
    fprintf(f, "<h3 id=\"c%zu-time\">Over time</h3>\n", ci + 1);
    if (c->n_ticks == 0)
        fprintf(f, "<p>No plot_data rows in this directory%s.</p>\n",
                c->shards ? " (a campaign of shards keeps them per shard)" : "");
    plot_img(f, out_dir, d->campaign_png[ci], "bugs, signatures, coverage and cases per second "
             "over time");
    if (d->gpu_png[ci][0]) {
        plot_img(f, out_dir, d->gpu_png[ci], "cases per second per GPU");
        fputs("<p class=\"small\">Per GPU over the whole run (fuzzer_stats): plot_data has no "
              "series per GPU.</p>\n", f);
    }
    untriaged_part(f, c, ci);
    gg_report_coverage_html(f, c, ci);
    fprintf(f, "<h3 id=\"c%zu-stats\">Statistics</h3>\n", ci + 1);
    campaign_stats(f, c);
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
        esc(f, t->history);
        fputs("</code>", f);
        fputs(t->given ? " and those given" : "", f);
    } else {
        fputs("The campaigns given", f);
    }
    fputs(", by start time. A bug is new on a night when no earlier night here holds its "
          "bucket.</p>\n", f);
    plot_img(f, out_dir, d->nights_png, "bugs and cases per night");
    fputs("<div class=\"scroll\"><table class=\"nights\"><thead><tr><th>night</th>"
          "<th>directory</th><th>kernel</th><th>cases</th><th>cases / s</th><th>run time (s)"
          "</th><th>signatures</th><th>not yet triaged</th><th>bugs</th><th>new bugs</th></tr>"
          "</thead><tbody>\n", f);
    for (size_t k = 0; k < t->count; k++) {
        const struct gg_rnight *n = &t->n[k];
        fputs("<tr><td class=\"when\">", f);
        if (n->campaign >= 0)
            fprintf(f, "<a href=\"#campaign-%d\">", n->campaign + 1);
        esc(f, n->label);
        fputs(n->campaign >= 0 ? "</a></td><td><code>" : "</td><td><code>", f);
        esc(f, n->dir);
        fputs("</code></td>", f);
        if (n->error) {
            fputs("<td colspan=\"8\" class=\"neg\">", f);
            esc(f, n->error);
            fputs("</td></tr>\n", f);
            continue;
        }
        fputs("<td>", f);
        esc(f, n->kernel);
        if (n->mutant[0]) {
            fputs(" + mutant ", f);
            esc(f, n->mutant);
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

static void page(FILE *f, const struct gg_report_doc *d, const char *out_dir)
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
        esc(f, c->dir);
        fprintf(f, "</code></a>: %zu bug%s, %zu signature%s</li>\n", c->n_bugs,
                c->n_bugs == 1 ? "" : "s", c->n_findings, c->n_findings == 1 ? "" : "s");
    }
    fputs("</ul></nav>\n", f);
    if (d->note[0]) {
        fputs("<p class=\"note\">", f);
        esc(f, d->note);
        fputs("</p>\n", f);
    }
    if (d->suite)
        suite_section(f, d, out_dir);
    if (d->nights && d->nights->count > 1)
        nights_section(f, d, out_dir);
    for (size_t i = 0; i < d->n_campaigns; i++)
        campaign_section(f, d, out_dir, i);
    fputs("</body>\n</html>\n", f);
}

enum gg_status gg_report_save(const char *path, gg_report_layout *lay_out,
                              const struct gg_report_doc *d, const char *out_dir, char *err,
                              size_t err_len)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        snprintf(err, err_len, "%s: out of memory", path);
        return GG_E_NOMEM;
    }
    lay_out(f, d, out_dir);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(text);
        snprintf(err, err_len, "%s: out of memory", path);
        return GG_E_NOMEM;
    }
    enum gg_status st = gg_atomic_write(path, "", text, len, 0, err, err_len);
    free(text);
    return st;
}

/* ---- orchestration ------------------------------------------------------------------------- */

/* Records the outcome of one plot: its file name in png, or the first failure in the note. */
static void plot_done(enum gg_status st, const char *name, char png[64], const char *msg,
                      struct gg_report_out *out)
{
    if (st == GG_OK) {
        snprintf(png, 64, "%s", name);
        out->plots++;
    } else if (out->plots_failed++ == 0) {
        snprintf(out->note, sizeof out->note, "%s", msg);
    }
}

static void make_plots(struct gg_report_doc *d, const char *out_dir, struct gg_report_out *out)
{
    struct gg_plotter p;
    gg_report_plot_init(&p, out_dir);
    if (!p.available) {
        snprintf(d->note, sizeof d->note, "Plots were skipped (%s); this report shows tables "
                 "only.", p.why);
        snprintf(out->note, sizeof out->note, "plots skipped: %s", p.why);
        return;
    }
    char msg[1024], name[64];
    if (d->suite && d->suite->n_cases > 0)
        plot_done(gg_report_plot_margins(&p, d->suite, "snr_margin.png", msg, sizeof msg),
                  "snr_margin.png", d->margin_png, msg, out);
    for (size_t k = 0; k < d->n_worst; k++) {
        snprintf(name, sizeof name, "groups_%zu.png", k + 1);
        plot_done(gg_report_plot_groups(&p, &d->suite->cases[d->worst[k]], name, msg, sizeof msg),
                  name, d->worst_png[k], msg, out);
    }
    for (size_t i = 0; i < d->n_campaigns; i++) {
        if (d->campaigns[i].n_ticks == 0)
            continue;
        snprintf(name, sizeof name, "campaign_%zu.png", i + 1);
        plot_done(gg_report_plot_campaign(&p, &d->campaigns[i], name, msg, sizeof msg), name,
                  d->campaign_png[i], msg, out);
    }
    for (size_t i = 0; i < d->n_campaigns; i++) {
        int ids[1];
        if (gg_report_gpus(&d->campaigns[i], ids, 1) == 0)
            continue;
        snprintf(name, sizeof name, "campaign_%zu_gpus.png", i + 1);
        plot_done(gg_report_plot_gpus(&p, &d->campaigns[i], name, msg, sizeof msg), name,
                  d->gpu_png[i], msg, out);
    }
    if (d->nights && d->nights->count > 1)
        plot_done(gg_report_plot_nights(&p, d->nights, "nights.png", msg, sizeof msg),
                  "nights.png", d->nights_png, msg, out);
    if (out->plots_failed > 0) {
        snprintf(msg, sizeof msg, "%s", out->note);
        snprintf(out->note, sizeof out->note, "%d plot%s failed: %.960s", out->plots_failed,
                 out->plots_failed > 1 ? "s" : "", msg);
        snprintf(d->note, sizeof d->note, "Some plots could not be made (%.960s).", out->note);
    }
}

enum gg_status gg_report_write_nights(const char *suite_json_path,
                                      const char *const *campaign_dirs, int n_campaigns,
                                      const char *history_dir, const char *out_dir,
                                      struct gg_report_out *out, char *err, size_t err_len)
{
    struct gg_report_out local;
    out = out ? out : &local;
    memset(out, 0, sizeof *out);
    if (out_dir == NULL || out_dir[0] == '\0' || n_campaigns < 0 ||
        n_campaigns > GG_REPORT_CAMPAIGNS_MAX ||
        (suite_json_path == NULL && n_campaigns == 0 && history_dir == NULL)) {
        snprintf(err, err_len, "a report needs an output directory and a suite result, up to "
                 "%d campaign directories or a history directory", GG_REPORT_CAMPAIGNS_MAX);
        return GG_E_INVAL;
    }
    struct gg_rsuite suite;
    struct gg_rcampaign camps[GG_REPORT_CAMPAIGNS_MAX];
    struct gg_rnights nights;
    memset(&suite, 0, sizeof suite);
    memset(camps, 0, sizeof camps);
    memset(&nights, 0, sizeof nights);
    enum gg_status st = GG_OK;
    if (suite_json_path != NULL)
        st = gg_report_suite_load(suite_json_path, &suite, err, err_len);
    for (int i = 0; i < n_campaigns && st == GG_OK; i++)
        st = gg_report_campaign_load(campaign_dirs[i], &camps[i], err, err_len);
    if (st == GG_OK && (history_dir != NULL || n_campaigns > 1))
        st = gg_report_nights_build(history_dir, camps, (size_t)n_campaigns, &nights, err,
                                    err_len);
    /* A history alone: its latest night is shown in full. */
    long latest = history_dir && n_campaigns == 0 ? gg_report_nights_latest(&nights) : -1;
    if (st == GG_OK && latest >= 0 &&
        (st = gg_report_campaign_load(nights.n[latest].dir, &camps[0], err, err_len)) == GG_OK) {
        nights.n[latest].campaign = 0;
        n_campaigns = 1;
    }
    if (st == GG_OK && history_dir != NULL && nights.count == 0) {
        snprintf(err, err_len, "%s: no campaign directory in it (a directory holding "
                 "fuzzer_stats, artifacts/ or shard-<I>/)", history_dir);
        st = GG_E_PARSE;
    }
    if (st == GG_OK)
        gg_report_nights_mark(&nights, camps);
    if (st == GG_OK && gg_mkdir_p(out_dir) != 0) {
        snprintf(err, err_len, "%s: cannot create the output directory: %s", out_dir,
                 strerror(errno));
        st = GG_E_IO;
    }
    if (st == GG_OK) {
        struct gg_report_doc d;
        memset(&d, 0, sizeof d);
        d.suite = suite_json_path ? &suite : NULL;
        d.campaigns = camps;
        d.n_campaigns = (size_t)n_campaigns;
        d.nights = &nights;
        time_t now = time(NULL);
        struct tm tm;
        strftime(d.generated, sizeof d.generated, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
        if (d.suite)
            d.n_worst = gg_report_worst_cases(d.suite, d.worst, GG_REPORT_WORST_MAX);
        make_plots(&d, out_dir, out);
        char path[4096];
        snprintf(path, sizeof path, "%s/index.html", out_dir);
        if ((st = gg_report_save(path, page, &d, out_dir, err, err_len)) == GG_OK) {
            snprintf(path, sizeof path, "%s/summary.md", out_dir);
            st = gg_report_save(path, gg_report_md_layout, &d, out_dir, err, err_len);
        }
    }
    gg_report_suite_free(&suite);
    for (int i = 0; i < GG_REPORT_CAMPAIGNS_MAX; i++)
        gg_report_campaign_free(&camps[i]);
    gg_report_nights_free(&nights);
    return st;
}

enum gg_status gg_report_write(const char *suite_json_path, const char *const *campaign_dirs,
                               int n_campaigns, const char *out_dir, struct gg_report_out *out,
                               char *err, size_t err_len)
{
    return gg_report_write_nights(suite_json_path, campaign_dirs, n_campaigns, NULL, out_dir,
                                  out, err, err_len);
}

enum gg_status gg_report_html_write(const char *suite_json_path, const char *campaign_dir,
                                    const char *out_dir, char *err, size_t err_len)
{
    const char *dirs[1] = {campaign_dir};
    return gg_report_write(suite_json_path, dirs, campaign_dir ? 1 : 0, out_dir, NULL, err,
                           err_len);
}

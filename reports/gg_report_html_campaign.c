/*
 * gg_report_html_campaign.c — a campaign's part of the HTML page: its bugs (buckets) first, each
 * with its representative case, the command that replays it and its member signatures folded,
 * then the signatures not yet triaged, its plots over time and per GPU, and its statistics.
 */
#include <stdio.h>
#include <string.h>

#include "reports/report_int.h"
#include "fuzz/store/gg_store.h"

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
            gg_report_html_esc(f, v ? v : "");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void campaign_stats(FILE *f, const struct gg_rcampaign *c)
{
    static const char *const keys[][2] = {{"kernel", "kernel"},
                                          {"mutant", "mutant"},
                                          {"start_time", "started"},
                                          {"run_time", "run time (s)"},
                                          {"shards", "shards"},
                                          {"execs_done", "executions"},
                                          {"execs_per_sec", "executions / s"},
                                          {"corpus_count", "corpus"},
                                          {"features_total", "features"},
                                          {"faults_total", "faults"},
                                          {"buckets", "bugs (buckets)"},
                                          {"buckets_new", "new bugs"},
                                          {"faults_unique", "unique signatures"},
                                          {"faults_new", "new signatures"},
                                          {"untriaged", "signatures in no bucket yet"},
                                          {"worker_restarts", "worker restarts"},
                                          {"timeouts", "timeouts"},
                                          {"refused", "cases refused"},
                                          {"errors", "cases that could not run"},
                                          {"case_ms_worker", "a case in a worker"},
                                          {"gpu_busy_estimate", "GPU busy (estimate)"},
                                          {"stop_reason", "stopped by"},
                                          {"seed", "seed"},
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
        char when[512];
        if (strcmp(keys[i][0], "case_ms_worker") == 0) {
            gg_report_html_esc(f, gg_report_case_time(c, when, sizeof when));
        } else if (strcmp(keys[i][0], "command_line") == 0) {
            /* the whole command; a campaign of an older ggfuzz recorded its arguments only */
            fputs(strncmp(v, "fuzz ", 5) == 0 ? "<code>ggfuzz " : "<code>", f);
            gg_report_html_esc(f, v);
            fputs("</code>", f);
        } else {
            gg_report_html_esc(f, v);
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
        gg_report_html_esc(f, k + 7);
        fputs(" ", f);
        gg_report_html_esc(f, c->stats.kv[i].value);
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
        gg_report_html_esc(f, first);
        fputs(", last ", f);
        gg_report_html_esc(f, last);
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
    gg_report_html_esc(f, cmd);
    fprintf(f, "</code></pre>\n<details><summary>%s <code>", what);
    gg_report_html_esc(f, path);
    fputs("</code></summary><pre class=\"case\">", f);
    gg_report_html_esc(f, text);
    fputs("</pre></details>\n", f);
}

/* A signature in no bucket: its verdict, sightings, marks and replay command; its case folded. */
static void finding_block(FILE *f, const struct gg_rcampaign *c, const struct gg_rfinding *fi,
                          size_t ci, size_t k)
{
    fprintf(f, "<div class=\"finding\" id=\"c%zu-u%zu\"><h4>%zu. ", ci + 1, k + 1, k + 1);
    gg_report_html_esc(f, fi->cls);
    fputs(": <code>", f);
    gg_report_html_esc(f, fi->signature[0] ? fi->signature : "(no signature recorded)");
    fputs("</code></h4>\n<p class=\"small\">", f);
    sightings(f, fi->meta.count, fi->meta.first_seen, fi->meta.last_seen);
    if (fi->gpu >= 0)
        fprintf(f, " &middot; GPU %d", fi->gpu);
    if (fi->shape[0]) {
        fputs(" &middot; <code>", f);
        gg_report_html_esc(f, fi->shape);
        fputs("</code>", f);
    }
    fputs("</p>\n", f);
    if (fi->observed[0]) {
        fputs("<p>", f);
        gg_report_html_esc(f, fi->observed);
        fputs("</p>\n", f);
    }
    if (fi->n_after > 0)
        fprintf(f, "<p class=\"note\"><b>Fails only after %d earlier case%s</b> in the same "
                "process (its <code>@after</code> lines, which the replay runs first); alone it "
                "passes.</p>\n", fi->n_after, fi->n_after == 1 ? "" : "s");
    if (fi->bucket[0]) {
        fputs("<p class=\"small\">Its <code>@bucket</code> line names bucket <code>", f);
        gg_report_html_esc(f, fi->bucket);
        fputs("</code>, which has no representative in the store.</p>\n", f);
    }
    if (fi->parse_error) {
        fputs("<p class=\"neg\">This case does not parse: ", f);
        gg_report_html_esc(f, fi->parse_error);
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
        gg_report_html_esc(f, fi->signature);
        fputs("</code></td><td class=\"num\">", f);
        if (fi->meta.count >= 0)
            fprintf(f, "%lld", fi->meta.count);
        fputs("</td><td class=\"when\">", f);
        gg_report_html_esc(f, fi->meta.first_seen);
        fputs("</td><td class=\"when\">", f);
        gg_report_html_esc(f, fi->meta.last_seen);
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
        gg_report_html_esc(f, cmd);
        fputs("</code></p>\n", f);
    }
    fputs("</details>\n", f);
}

static void bug_block(FILE *f, const struct gg_rcampaign *c, const struct gg_rbucket *r,
                      size_t ci, size_t k)
{
    const struct gg_bucket *b = r->b;
    fprintf(f, "<div class=\"bug\" id=\"c%zu-b%zu\"><h4>Bug %zu: <code>", ci + 1, k + 1, k + 1);
    gg_report_html_esc(f, b->form);
    fputs("</code>", f);
    if (r->new_tonight == 1)
        fputs(" <span class=\"new\">NEW</span>", f);
    fputs("</h4>\n<p class=\"small\">bucket <code>", f);
    gg_report_html_esc(f, b->id);
    fputs("</code> &middot; class ", f);
    gg_report_html_esc(f, b->cls);
    if (r->kernel[0]) {
        fputs(" &middot; ", f);
        gg_report_html_esc(f, r->kernel);
    }
    if (r->mutant[0]) {
        fputs(" + mutant ", f);
        gg_report_html_esc(f, r->mutant);
    }
    fprintf(f, " &middot; %zu signature%s, ", r->n_members, r->n_members == 1 ? "" : "s");
    sightings(f, b->count, b->first_seen, b->last_seen);
    if (r->gpus[0]) {
        fputs(" &middot; GPU ", f);
        gg_report_html_esc(f, r->gpus);
    }
    fprintf(f, "</p>\n<p>Representative (%lld group%s, %lld output%s)", (long long)b->groups,
            b->groups == 1 ? "" : "s", (long long)b->elems, b->elems == 1 ? "" : "s");
    if (r->shape[0]) {
        fputs(": <code>", f);
        gg_report_html_esc(f, r->shape);
        fputs("</code>", f);
    }
    if (r->observed[0]) {
        fputs(". ", f);
        gg_report_html_esc(f, r->observed);
    }
    fputs("</p>\n", f);
    if (r->read_error) {
        fputs("<p class=\"neg\">", f);
        gg_report_html_esc(f, r->read_error);
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
    gg_report_html_esc(f, c->findings_dir);
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
        gg_report_html_esc(f, b->id);
        fprintf(f, "\"><td class=\"num\"><a href=\"#c%zu-b%zu\">%zu</a></td><td><code>", ci + 1,
                k + 1, k + 1);
        gg_report_html_esc(f, b->id);
        fprintf(f, "</code>%s</td><td>", r->new_tonight == 1 ? " <span class=\"new\">NEW</span>" : "");
        gg_report_html_esc(f, b->cls);
        fputs("</td><td><code>", f);
        gg_report_html_esc(f, b->form);
        fprintf(f, "</code></td><td class=\"num\">%zu</td><td class=\"num\">%lld</td>"
                "<td class=\"when\">", r->n_members, b->count);
        gg_report_html_esc(f, b->first_seen);
        fputs("</td><td class=\"when\">", f);
        gg_report_html_esc(f, b->last_seen);
        fputs("</td><td>", f);
        gg_report_html_esc(f, r->gpus);
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
        gg_report_html_esc(f, cmd);
        fputs("</code></p>\n", f);
    }
}

void gg_report_html_campaign(FILE *f, const struct gg_report_doc *d, const char *out_dir,
                             size_t ci)
{
    const struct gg_rcampaign *c = &d->campaigns[ci];
    fprintf(f, "<section id=\"campaign-%zu\">\n<h2>Campaign: <code>", ci + 1);
    gg_report_html_esc(f, c->dir);
    fputs("</code></h2>\n", f);
    char head[128], rest[1024];
    gg_report_campaign_lead(c, head, sizeof head, rest, sizeof rest);
    fputs("<p class=\"lead\"><b>", f);
    gg_report_html_esc(f, head);
    fputs("</b> &middot; ", f);
    gg_report_html_esc(f, rest);
    fputs("</p>\n", f);
    const char *unverified = gg_report_stat(c, "not_verified");
    if (unverified) {
        fputs("<p class=\"note\"><b>Not verified:</b> ", f);
        gg_report_html_esc(f, unverified);
        fputs(".</p>\n", f);
    }
    bugs_part(f, c, ci);
    fprintf(f, "<h3 id=\"c%zu-time\">Over time</h3>\n", ci + 1);
    if (c->n_ticks == 0)
        fprintf(f, "<p>No plot_data rows in this directory%s.</p>\n",
                c->shards ? " (a campaign of shards keeps them per shard)" : "");
    gg_report_html_img(f, out_dir, d->campaign_png[ci],
                       "bugs, signatures, coverage and cases per second over time");
    if (d->gpu_png[ci][0]) {
        gg_report_html_img(f, out_dir, d->gpu_png[ci], "cases per second per GPU");
        fputs("<p class=\"small\">Per GPU over the whole run (fuzzer_stats): plot_data has no "
              "series per GPU.</p>\n", f);
    }
    untriaged_part(f, c, ci);
    gg_report_coverage_html(f, c, ci);
    fprintf(f, "<h3 id=\"c%zu-stats\">Statistics</h3>\n", ci + 1);
    campaign_stats(f, c);
    fputs("</section>\n", f);
}

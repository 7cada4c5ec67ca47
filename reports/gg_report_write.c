/*
 * gg_report_write.c — `ggfuzz report`: reads the inputs (a suite result, campaign directories,
 * a history of nights), has the plots drawn, and writes the HTML page (gg_report_html.c) and the
 * Markdown summary (gg_report_md.c) beside them, each laid out in memory and written atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reports/report_int.h"

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
        st = gg_suite_result_load(suite_json_path, &suite, err, err_len);
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
        st = gg_report_save(path, gg_report_html_layout, &d, out_dir, err, err_len);
        if (st == GG_OK) {
            snprintf(path, sizeof path, "%s/summary.md", out_dir);
            st = gg_report_save(path, gg_report_md_layout, &d, out_dir, err, err_len);
        }
    }
    gg_suite_result_free(&suite);
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

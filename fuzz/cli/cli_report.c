/*
 * cli_report.c — `ggfuzz report [--suite FILE.json] [--campaign DIR]... -o OUTDIR`: turns a suite
 * result and campaign directories into OUTDIR/index.html, OUTDIR/summary.md and their plots.
 * Exit 0 when written, 2 for a usage error, 3 when an input cannot be read or is malformed (the
 * message names the file and the field) or the output cannot be written.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "reports/gg_report.h"

enum { REPORT_SUITE, REPORT_CAMPAIGN, REPORT_HISTORY, REPORT_OUTPUT };

static const struct gg_cli_flag report_flags[] = {
    {"suite", 0, "FILE", REPORT_SUITE, "a suite result (ggfuzz suite --json FILE)"},
    {"campaign", 0, "DIR", REPORT_CAMPAIGN,
     "a campaign's statistics directory (fuzzer_stats, plot_data), its findings store or a "
     "campaign of shards (repeatable, up to 16; two or more are also compared as nights)"},
    {"history", 0, "DIR", REPORT_HISTORY,
     "a directory of campaign directories, one per night: the trend across them (bugs, new "
     "bugs, cases per night), and the latest night in full unless --campaign names one"},
    {"output", 'o', "DIR", REPORT_OUTPUT, "where the report goes (created when missing)"},
    {0}};
const struct gg_cli_command gg_cli_report_command = {
    "report", "report [--suite FILE.json] [--campaign DIR]... [--history DIR] -o OUTDIR",
    "Writes OUTDIR/index.html (one self-contained page), OUTDIR/summary.md and the PNG plots it "
    "links: pass/fail table, SNR against threshold per case, per-group SNR of the worst cases; "
    "for campaigns their bugs (buckets) first, each with its representative case, the command "
    "that replays it and its member signatures, then the signatures not yet triaged, and bugs, "
    "signatures, coverage and cases per second over time; for several nights the trend across "
    "them. Plots need gnuplot (GG_GNUPLOT or PATH); without it the report has tables only. "
    "Exit 0 written; 2 usage; 3 an input is unreadable or malformed, or the report cannot be "
    "written.",
    report_flags};

/* Prints "ggfuzz report: what [arg]" on stderr; returns the usage exit code. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "ggfuzz report: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    return GG_EXIT_USAGE;
}

/* The same after the options were parsed, with where to look. */
static int usage_error_hint(const char *what, const char *arg)
{
    usage_error(what, arg);
    gg_cli_usage_hint(&gg_cli_report_command);
    return GG_EXIT_USAGE;
}

/* What the options of report set. */
struct report_args {
    const char *suite, *out, *history, *campaigns[GG_REPORT_CAMPAIGNS_MAX];
    int n_campaigns;
};

static int report_option(int id, const char *arg, void *p)
{
    struct report_args *a = p;
    switch (id) {
    case REPORT_SUITE:
        if (a->suite != NULL)
            return usage_error("--suite given twice", NULL);
        a->suite = arg;
        break;
    case REPORT_CAMPAIGN:
        if (a->n_campaigns == GG_REPORT_CAMPAIGNS_MAX)
            return usage_error("too many --campaign directories", NULL);
        a->campaigns[a->n_campaigns++] = arg;
        break;
    case REPORT_HISTORY:
        if (a->history != NULL)
            return usage_error("--history given twice", NULL);
        a->history = arg;
        break;
    case REPORT_OUTPUT: a->out = arg; break;
    default: return GG_CLI_OTHER;
    }
    return GG_CLI_TAKEN;
}

int gg_cli_report(int argc, char **argv)
{
    struct report_args a = {.n_campaigns = 0};
    int rc = gg_cli_parse(&gg_cli_report_command, argc, argv, report_option, &a, NULL);
    if (rc != GG_CLI_TAKEN)
        return rc;
    const char *suite = a.suite, *out = a.out;
    if (optind < argc)
        return usage_error_hint("unexpected argument", argv[optind]);
    if (out == NULL)
        return usage_error_hint("-o OUTDIR is required", NULL);
    if (suite == NULL && a.n_campaigns == 0 && a.history == NULL)
        return usage_error_hint("give --suite FILE, --campaign DIR, --history DIR or more",
                                NULL);
    struct gg_report_out res;
    char err[2048];
    if (gg_report_write_nights(suite, a.campaigns, a.n_campaigns, a.history, out, &res, err,
                               sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz report: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    if (res.note[0])
        fprintf(stderr, "ggfuzz report: %s\n", res.note);
    printf("report written to %s/index.html and %s/summary.md (%d plot%s)\n", out, out,
           res.plots, res.plots == 1 ? "" : "s");
    return 0;
}

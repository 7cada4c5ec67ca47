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

/* What the options of report set. */
struct report_args {
    const char *suite, *out, *history;
    struct gg_cli_list campaigns;
};

/* --suite FILE or --history DIR, once each. */
static int apply_once(const char *arg, void *field, char *why, size_t why_len)
{
    if (*(const char **)field != NULL) {
        snprintf(why, why_len, "given twice");
        return GG_EXIT_USAGE;
    }
    *(const char **)field = arg;
    return 0;
}

static const struct gg_cli_flag report_flags[] = {
    {"suite", 0, GG_CLI_STRING, "FILE", GG_CLI_AT(struct report_args, suite),
     .apply = apply_once, .help = "a suite result (ggfuzz suite --json FILE)"},
    {"campaign", 0, GG_CLI_LIST, "DIR", GG_CLI_AT(struct report_args, campaigns),
     .max = GG_REPORT_CAMPAIGNS_MAX,
     .help = "a campaign's statistics directory (fuzzer_stats, plot_data), its findings store or a "
             "campaign of shards (repeatable, up to " GG_CLI_STR(GG_REPORT_CAMPAIGNS_MAX) "; two "
             "or more are also compared as nights)"},
    {"history", 0, GG_CLI_STRING, "DIR", GG_CLI_AT(struct report_args, history),
     .apply = apply_once,
     .help = "a directory of campaign directories, one per night: the trend across them (bugs, "
             "new bugs, cases per night), and the latest night in full unless --campaign names "
             "one"},
    {"output", 'o', GG_CLI_STRING, "DIR", GG_CLI_AT(struct report_args, out),
     .help = "where the report goes (created when missing)"},
    {0}};
const struct gg_cli_command gg_cli_report_command = {
    "report", "report [--suite FILE.json] [--campaign DIR]... [--history DIR] -o OUTDIR",
    "Writes OUTDIR/index.html (one self-contained page), OUTDIR/summary.md and the PNG plots it "
    "links: pass/fail table, SNR against threshold per case, per-group SNR of the worst cases; "
    "for campaigns their bugs (buckets) first, each with its representative case, the command "
    "that replays it and its member signatures, then the signatures not yet triaged, and bugs, "
    "signatures, coverage and cases per second over time; for several nights the trend across "
    "them. Plots need gnuplot (GGFUZZ_GNUPLOT or PATH); without it the report has tables only. "
    "Exit 0 written; 2 usage; 3 an input is unreadable or malformed, or the report cannot be "
    "written.",
    report_flags};

/* Prints "ggfuzz report: what [arg]" and where to look on stderr; returns the usage exit code. */
static int usage_error_hint(const char *what, const char *arg)
{
    fprintf(stderr, "ggfuzz report: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    gg_cli_usage_hint(&gg_cli_report_command);
    return GG_EXIT_USAGE;
}

int gg_cli_report(int argc, char **argv)
{
    struct report_args a;
    memset(&a, 0, sizeof a);
    int rc = gg_cli_parse(&gg_cli_report_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    const char *suite = a.suite, *out = a.out;
    if (optind < argc)
        return usage_error_hint("unexpected argument", argv[optind]);
    if (out == NULL)
        return usage_error_hint("-o OUTDIR is required", NULL);
    if (suite == NULL && a.campaigns.n == 0 && a.history == NULL)
        return usage_error_hint("give --suite FILE, --campaign DIR, --history DIR or more",
                                NULL);
    struct gg_report_out res;
    char err[2048];
    if (gg_report_write_nights(suite, a.campaigns.item, a.campaigns.n, a.history, out, &res, err,
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

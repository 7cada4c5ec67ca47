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

static const char report_usage[] =
    "usage: ggfuzz report [--suite FILE.json] [--campaign DIR]... -o OUTDIR\n"
    "\n"
    "Writes OUTDIR/index.html (one self-contained page), OUTDIR/summary.md and the PNG plots\n"
    "it links: pass/fail table, SNR against threshold per case, per-group SNR of the worst\n"
    "cases, and for campaigns executions and findings over time with every unique signature,\n"
    "its minimised case and the command that replays it. Plots need gnuplot (GG_GNUPLOT or\n"
    "PATH); without it the report has tables only.\n"
    "\n"
    "  --suite FILE       a suite result (ggfuzz suite --json FILE)\n"
    "  --campaign DIR     a campaign's statistics directory (fuzzer_stats, plot_data) or its\n"
    "                     findings store (repeatable, up to 16)\n"
    "  -o, --output DIR   where the report goes (created when missing)\n"
    "\n"
    "exit codes: 0 written; 2 usage; 3 an input is unreadable or malformed, or the report\n"
    "cannot be written.\n";

/* Prints "ggfuzz report: what [arg]" and the usage on stderr; returns the usage exit code. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "ggfuzz report: %s%s%s\n\n%s", what, arg ? " " : "", arg ? arg : "",
            report_usage);
    return GG_EXIT_USAGE;
}

int gg_cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"suite", required_argument, NULL, 's'}, {"campaign", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *suite = NULL, *out = NULL, *campaigns[GG_REPORT_CAMPAIGNS_MAX];
    int n_campaigns = 0, ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            if (suite != NULL)
                return usage_error("--suite given twice", NULL);
            suite = optarg;
            break;
        case 'c':
            if (n_campaigns == GG_REPORT_CAMPAIGNS_MAX)
                return usage_error("too many --campaign directories", NULL);
            campaigns[n_campaigns++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'h': fputs(report_usage, stdout); return 0;
        default: return usage_error("unknown option or missing value:", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (out == NULL)
        return usage_error("-o OUTDIR is required", NULL);
    if (suite == NULL && n_campaigns == 0)
        return usage_error("give --suite FILE, --campaign DIR or both", NULL);
    struct gg_report_out res;
    char err[2048];
    if (gg_report_write(suite, campaigns, n_campaigns, out, &res, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz report: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    if (res.note[0])
        fprintf(stderr, "ggfuzz report: %s\n", res.note);
    printf("report written to %s/index.html and %s/summary.md (%d plot%s)\n", out, out,
           res.plots, res.plots == 1 ? "" : "s");
    return 0;
}

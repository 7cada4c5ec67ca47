/*
 * cli_suite.c — `ggfuzz suite`: runs a tier of the SNR suite (or given case files) and gates on
 * it, or regenerates the suite corpus (--generate). Parses the options into gg_suite_opts and
 * turns the outcome into the exit code: 0 pass (or no --gate), 30 the gate failed, 2 usage,
 * 3 harness error (a case could not run, an output or the baseline could not be read or written).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/suite/gg_suite.h"
#include "fuzz/run/gg_run.h"

#define MAX_KERNELS 32

static const char suite_usage[] =
    "usage: ggfuzz suite [--tier quick|release|stress] [--kernel K]... [--gate] [--baseline FILE]\n"
    "                    [--save-baseline FILE] [--snr-drop DB] [--perf] [--junit FILE]\n"
    "                    [--json FILE] [--report DIR] [CASE|DIR...]\n"
    "       ggfuzz suite --generate DIR\n"
    "\n"
    "Runs the SNR suite: each case of DIR/TIER (default corpus/suite/quick) or of the given\n"
    "files on its own kernel, or on each --kernel that supports it (the others skip it), and\n"
    "judges the worst group's SNR against the threshold of its recipe.\n"
    "\n"
    "  --tier T             quick (CPU, minutes), release (the full grid, for a GPU node) or\n"
    "                       stress (past 2^31 elements and 2^32 bytes); default quick\n"
    "  --suite-dir DIR      where the tiers live (default corpus/suite)\n"
    "  --kernel K           run every case on K (repeatable)\n"
    "  --mutant M           run with mutant M, or the list M1,M2 ('none': the correct kernels);\n"
    "                       kernels without one of them skip the case\n"
    "  --gate               the gate's verdict is the exit code (30: failed)\n"
    "  --baseline FILE      a saved result: a worst-group SNR lower by more than --snr-drop\n"
    "                       regresses (cases matched by id and kernel)\n"
    "  --snr-drop DB        allowed SNR drop against the baseline (default 1.0)\n"
    "  --save-baseline FILE write this run's result as a baseline\n"
    "  --perf               time each passing case (median of --perf-runs, default 5) and\n"
    "                       regress when t > 1.005 t_base + 0.5 us (baseline time >= 4 us);\n"
    "                       meaningful for GPU kernels\n"
    "  --json FILE          the result as JSON; --junit FILE as JUnit XML\n"
    "  --report DIR         the HTML and Markdown report of the result\n"
    "  --max-mem SIZE       refuse cases needing more host memory (default: what is available)\n"
    "  --timeout S          kill a case after S seconds (default 1800; 0: none)\n"
    "  --no-fork            run cases in this process\n"
    "  --generate DIR       write the suite corpus into DIR/{quick,release,stress} and exit\n"
    "\n"
    "exit: 0 pass (without --gate: whenever every case ran), 30 the gate failed (a case below\n"
    "its threshold, a structural fault, an SNR drop or a perf regression), 2 usage, 3 a case\n"
    "could not run or an output could not be written, 4 a --kernel cannot run here (a GPU\n"
    "kernel without its device).\n";

static int generate(const char *dir)
{
    char err[1024];
    struct gg_suite_counts n;
    if (gg_suite_generate(dir, &n, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz suite: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    printf("suite written to %s:", dir);
    for (int t = 0; t < GG_SUITE_TIERS; t++)
        printf(" %s %d%s", gg_suite_tier_names[t], n.cases[t], t + 1 < GG_SUITE_TIERS ? "," : "");
    printf(" cases\n");
    return 0;
}

int gg_cli_suite(int argc, char **argv, char **plugins, int n_plugins)
{
    static const struct option longopts[] = {
        {"tier", required_argument, NULL, 't'},     {"suite-dir", required_argument, NULL, 'D'},
        {"kernel", required_argument, NULL, 'k'},   {"mutant", required_argument, NULL, 'm'},
        {"gate", no_argument, NULL, 'g'},           {"baseline", required_argument, NULL, 'b'},
        {"save-baseline", required_argument, NULL, 'B'},
        {"snr-drop", required_argument, NULL, 'd'}, {"perf", no_argument, NULL, 'P'},
        {"perf-runs", required_argument, NULL, 'R'}, {"junit", required_argument, NULL, 'J'},
        {"json", required_argument, NULL, 'j'},     {"report", required_argument, NULL, 'r'},
        {"max-mem", required_argument, NULL, 'M'},  {"timeout", required_argument, NULL, 'T'},
        {"no-fork", no_argument, NULL, 'F'},        {"generate", required_argument, NULL, 'G'},
        {"plugin", required_argument, NULL, 'p'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static const char *kernels[MAX_KERNELS];
    struct gg_suite_opts o = {.tier = "quick", .snr_drop_db = 1.0, .perf_runs = 5,
                              .timeout_s = 1800, .plugins = plugins, .n_plugins = n_plugins,
                              .out = stdout};
    const char *suite_dir = "corpus/suite", *gen_dir = NULL;
    double num = 0;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 't':
            o.tier = optarg;
            if (strcmp(optarg, "quick") && strcmp(optarg, "release") && strcmp(optarg, "stress")) {
                fprintf(stderr, "ggfuzz suite: --tier: quick, release or stress, not '%s'\n",
                        optarg);
                return GG_EXIT_USAGE;
            }
            break;
        case 'D': suite_dir = optarg; break;
        case 'k':
            if (o.n_kernels == MAX_KERNELS) {
                fprintf(stderr, "ggfuzz suite: at most %d --kernel options\n", MAX_KERNELS);
                return GG_EXIT_USAGE;
            }
            kernels[o.n_kernels++] = optarg;
            break;
        case 'm': o.mutant = optarg; break;
        case 'g': o.gate = 1; break;
        case 'b': o.baseline_path = optarg; break;
        case 'B': o.save_baseline_path = optarg; break;
        case 'd':
            if (gg_cli_number("--snr-drop", optarg, 0, &num) != 0)
                return GG_EXIT_USAGE;
            o.snr_drop_db = num;
            break;
        case 'P': o.perf = 1; break;
        case 'R':
            if (gg_cli_number("--perf-runs", optarg, 1, &num) != 0 || num < 1) {
                if (num < 1)
                    fprintf(stderr, "ggfuzz suite: --perf-runs: at least 1\n");
                return GG_EXIT_USAGE;
            }
            o.perf_runs = (int)num;
            break;
        case 'J': o.junit_path = optarg; break;
        case 'j': o.json_path = optarg; break;
        case 'r': o.report_dir = optarg; break;
        case 'M':
            if (gg_cli_size("--max-mem", optarg, &o.max_mem_bytes) != 0)
                return GG_EXIT_USAGE;
            break;
        case 'T':
            if (gg_cli_number("--timeout", optarg, 0, &num) != 0)
                return GG_EXIT_USAGE;
            o.timeout_s = num;
            break;
        case 'F': o.no_fork = 1; break;
        case 'G': gen_dir = optarg; break;
        case 'p':
            if (gg_cli_load_plugin(optarg) != 0)
                return GG_EXIT_HARNESS;
            break;
        case 'h': fputs(suite_usage, stdout); return 0;
        default: fputs(suite_usage, stderr); return GG_EXIT_USAGE;
        }
    }
    if (gen_dir)
        return generate(gen_dir);
    gg_registry_init();
    for (int i = 0; i < o.n_kernels; i++) {
        if (!gg_registry_find(kernels[i])) {
            fprintf(stderr, "ggfuzz suite: unknown kernel '%s' (ggfuzz list shows the kernels)\n",
                    kernels[i]);
            return GG_EXIT_USAGE;
        }
        int rc = gg_cli_kernel_refused(kernels[i]);
        if (rc != 0)
            return rc;
    }
    o.kernels = kernels;
    char tier_dir[4096];
    const char *one[1] = {tier_dir};
    if (optind < argc) {
        o.paths = (const char *const *)argv + optind;
        o.n_paths = argc - optind;
    } else {
        snprintf(tier_dir, sizeof tier_dir, "%s/%s", suite_dir, o.tier);
        o.paths = one;
        o.n_paths = 1;
    }
    struct gg_suite_summary sum;
    char err[1024];
    if (gg_suite_run(&o, &sum, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz suite: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    if (sum.errors || sum.output_failed)
        return GG_EXIT_HARNESS;
    return o.gate && sum.gate_failed ? GG_EXIT_GATE : 0;
}

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
#include "fuzz/cli/gg_cli.h"
#include "fuzz/suite/gg_suite.h"
#include "fuzz/run/gg_run.h"

#define MAX_KERNELS 32

enum { SUITE_TIER, SUITE_DIR, SUITE_KERNEL, SUITE_MUTANT, SUITE_GATE, SUITE_BASELINE,
       SUITE_SNR_DROP, SUITE_SAVE_BASELINE, SUITE_PERF, SUITE_PERF_RUNS, SUITE_JSON, SUITE_JUNIT,
       SUITE_REPORT, SUITE_REFERENCE, SUITE_MAX_MEM, SUITE_TIMEOUT, SUITE_NO_FORK, SUITE_GENERATE, SUITE_SHARD, SUITE_GPUS,
       SUITE_WORKERS, SUITE_STATUS_INTERVAL, SUITE_MERGE };

static const struct gg_cli_flag suite_flags[] = {
    {"tier", 0, "T", SUITE_TIER,
     "quick (CPU, minutes), release (the full grid, for a GPU node) or stress (past 2^31 "
     "elements and 2^32 bytes); default quick"},
    {"suite-dir", 0, "DIR", SUITE_DIR,
     "where the tiers live (default: the corpus installed with ggfuzz, PREFIX/share/ggfuzz/"
     "corpus/suite, else that of the source tree it was built from)"},
    {"kernel", 0, "K", SUITE_KERNEL, "run every case on K (repeatable)"},
    {"mutant", 0, "M", SUITE_MUTANT,
     "run with mutant M, or the list M1,M2 ('none': the correct kernels); kernels without one of "
     "them skip the case"},
    {"gate", 0, NULL, SUITE_GATE, "the gate's verdict is the exit code (30: failed)"},
    {"baseline", 0, "FILE", SUITE_BASELINE,
     "a saved result: a worst-group SNR lower by more than --snr-drop regresses (cases matched "
     "by id and kernel)"},
    {"snr-drop", 0, "DB", SUITE_SNR_DROP, "allowed SNR drop against the baseline (default 1.0)"},
    {"save-baseline", 0, "FILE", SUITE_SAVE_BASELINE, "write this run's result as a baseline"},
    {"perf", 0, NULL, SUITE_PERF,
     "time each passing case (median of --perf-runs) and regress when t > 1.005 t_base + 0.5 us "
     "(baseline time >= 4 us); meaningful for GPU kernels"},
    {"perf-runs", 0, "N", SUITE_PERF_RUNS, "runs each --perf time is the median of (default 5)"},
    {"json", 0, "FILE", SUITE_JSON, "the result as JSON"},
    {"junit", 0, "FILE", SUITE_JUNIT, "the result as JUnit XML"},
    {"report", 0, "DIR", SUITE_REPORT, "the HTML and Markdown report of the result"},
    {"reference", 0, "WHERE", SUITE_REFERENCE, GG_CLI_REFERENCE_HELP},
    {"max-mem", 0, "SIZE", SUITE_MAX_MEM,
     "refuse cases needing more host memory (default: what is available)"},
    {"timeout", 0, "S", SUITE_TIMEOUT, "kill a case after S seconds (default 1800; 0: none)"},
    {"no-fork", 0, NULL, SUITE_NO_FORK, "run cases in this process"},
    {"shard", 0, "I/N", SUITE_SHARD,
     "run shard I of N (0 <= I < N): the cases dealt to it by case identity, each recorded with "
     "its place in the whole run (write it with --json for --merge)"},
    {"gpus", 0, "all|auto|LIST", SUITE_GPUS,
     "run the cases on these GPUs at once (all or auto: every visible one; LIST: ordinals such "
     "as 0,1 or 0-7): one runner per GPU, bound to it, takes the next case not yet taken; the "
     "result is the one process's, in its order (--perf times on the first GPU; not with "
     "--no-fork)"},
    {"workers", 0, "N", SUITE_WORKERS,
     "run N cases at once (default: one per GPU of --gpus, else one): N runner processes, dealt "
     "to the GPUs in turn, take the next case not yet taken, and a case starts once its host "
     "and device memory fit beside the cases running (one that does not fit beside them waits "
     "to run alone); the result is the one process's, in its order (not with --no-fork)"},
    {"status-interval", 0, "S", SUITE_STATUS_INTERVAL,
     "a progress line (cases done of all, time spent, an estimate of what is left) every S "
     "seconds (default 60)"},
    {"merge", 0, NULL, SUITE_MERGE,
     "the arguments are the --json results of every shard of one run: merge them into the "
     "result, JUnit XML and report one process would have written (--gate, --json, --junit, "
     "--report, --save-baseline apply; give --baseline to the shards)"},
    {"generate", 0, "DIR", SUITE_GENERATE,
     "write the suite corpus into DIR/{quick,release,stress} and exit"},
    {"plugin", 0, "PATH", GG_CLI_PLUGIN, "as for run"},
    {0}};
const struct gg_cli_command gg_cli_suite_command = {
    "suite", "suite [options] [CASE|DIR...]",
    "Runs the SNR suite: each case of the tier's directory (default quick, of --suite-dir) or of the "
    "given files on its own kernel, or on each --kernel that supports it (the others skip it), "
    "and judges the worst group's SNR against the threshold of its recipe. Exit 0 pass (without "
    "--gate: whenever every case ran), 30 the gate failed (a case below its threshold, a "
    "structural fault, an SNR drop or a perf regression), 2 usage, 3 a case could not run or an "
    "output could not be written, 4 a --kernel cannot run here (a GPU kernel without its "
    "device).",
    suite_flags};

/* What the options of suite set. */
struct suite_args {
    struct gg_suite_opts o;
    const char *kernels[MAX_KERNELS];
    const char *suite_dir, *gen_dir;
    int merge;
    struct gg_gpus gpus;
};

static int suite_option(int id, const char *arg, void *p)
{
    struct suite_args *a = p;
    struct gg_suite_opts *o = &a->o;
    double num = 0;
    switch (id) {
    case SUITE_TIER:
        o->tier = arg;
        if (strcmp(arg, "quick") && strcmp(arg, "release") && strcmp(arg, "stress")) {
            fprintf(stderr, "ggfuzz suite: --tier: quick, release or stress, not '%s'\n", arg);
            return GG_EXIT_USAGE;
        }
        break;
    case SUITE_DIR: a->suite_dir = arg; break;
    case SUITE_KERNEL:
        if (o->n_kernels == MAX_KERNELS) {
            fprintf(stderr, "ggfuzz suite: at most %d --kernel options\n", MAX_KERNELS);
            return GG_EXIT_USAGE;
        }
        a->kernels[o->n_kernels++] = arg;
        break;
    case SUITE_MUTANT: o->mutant = arg; break;
    case SUITE_GATE: o->gate = 1; break;
    case SUITE_BASELINE: o->baseline_path = arg; break;
    case SUITE_SAVE_BASELINE: o->save_baseline_path = arg; break;
    case SUITE_SNR_DROP:
        return gg_cli_number("--snr-drop", arg, 0, &o->snr_drop_db) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case SUITE_PERF: o->perf = 1; break;
    case SUITE_PERF_RUNS:
        if (gg_cli_number("--perf-runs", arg, 1, &num) != 0 || num < 1) {
            if (num < 1)
                fprintf(stderr, "ggfuzz suite: --perf-runs: at least 1\n");
            return GG_EXIT_USAGE;
        }
        o->perf_runs = (int)num;
        break;
    case SUITE_JUNIT: o->junit_path = arg; break;
    case SUITE_JSON: o->json_path = arg; break;
    case SUITE_REPORT: o->report_dir = arg; break;
    case SUITE_REFERENCE:
        return gg_cli_reference(arg, &o->reference) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case SUITE_MAX_MEM:
        return gg_cli_size("--max-mem", arg, &o->max_mem_bytes) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case SUITE_TIMEOUT:
        return gg_cli_number("--timeout", arg, 0, &o->timeout_s) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case SUITE_NO_FORK: o->no_fork = 1; break;
    case SUITE_GENERATE: a->gen_dir = arg; break;
    case SUITE_SHARD:
        return gg_cli_shard("--shard", arg, &o->shard_index, &o->shard_count) ? GG_EXIT_USAGE
                                                                             : GG_CLI_TAKEN;
    case SUITE_GPUS: {
        int got = gg_cli_gpus(arg, &a->gpus);
        if (got)
            return got;
        o->gpus = &a->gpus;
        break;
    }
    case SUITE_WORKERS: {
        double num;
        if (gg_cli_number("--workers", arg, 1, &num) != 0)
            return GG_EXIT_USAGE;
        if (num < 1 || num > GG_GPUS_MAX) {
            fprintf(stderr, "ggfuzz suite: --workers: 1 to %d, not %s\n", GG_GPUS_MAX, arg);
            return GG_EXIT_USAGE;
        }
        o->workers = (int)num;
        break;
    }
    case SUITE_STATUS_INTERVAL:
        return gg_cli_period("--status-interval", arg, &o->status_interval_s) ? GG_EXIT_USAGE
                                                                              : GG_CLI_TAKEN;
    case SUITE_MERGE: a->merge = 1; break;
    default: return GG_CLI_OTHER;
    }
    return GG_CLI_TAKEN;
}

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

/* --merge: the shards' results named by the arguments into one. */
static int merge(const struct gg_suite_opts *o, int n, char **paths)
{
    if (o->baseline_path || o->shard_count || o->perf) {
        fprintf(stderr, "ggfuzz suite: --merge takes the shards' results as they are: give "
                "--baseline and --perf to the shards, and no --shard\n");
        return GG_EXIT_USAGE;
    }
    if (n < 1) {
        fprintf(stderr, "ggfuzz suite: --merge needs the shards' result files\n");
        return GG_EXIT_USAGE;
    }
    struct gg_suite_summary sum;
    char err[2048];
    if (gg_suite_merge((const char *const *)paths, n, o, &sum, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz suite: --merge: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    if (sum.errors || sum.output_failed)
        return GG_EXIT_HARNESS;
    return o->gate && sum.gate_failed ? GG_EXIT_GATE : 0;
}

int gg_cli_suite(int argc, char **argv, char **plugins, int n_plugins)
{
    struct suite_args a = {.o = {.tier = "quick", .snr_drop_db = 1.0, .perf_runs = 5,
                                 .timeout_s = 1800, .plugins = plugins, .n_plugins = n_plugins,
                                 .out = stdout}};
    int rc = gg_cli_parse(&gg_cli_suite_command, argc, argv, suite_option, &a, NULL);
    if (rc != GG_CLI_TAKEN)
        return rc;
    struct gg_suite_opts o = a.o;
    const char *suite_dir = a.suite_dir, *gen_dir = a.gen_dir, *const *kernels = a.kernels;
    if (gen_dir)
        return generate(gen_dir);
    if (a.merge)
        return merge(&o, argc - optind, argv + optind);
    if (((o.gpus && o.gpus->n > 1) || o.workers > 1) && o.no_fork) {
        fprintf(stderr, "ggfuzz suite: --gpus with several GPUs and --workers run each case in a "
                "process of its own below its runner: not with --no-fork\n");
        return GG_EXIT_USAGE;
    }
    gg_registry_init();
    for (int i = 0; i < o.n_kernels; i++) {
        if (!gg_registry_find(kernels[i])) {
            fprintf(stderr, "ggfuzz suite: unknown kernel '%s' (ggfuzz list shows the kernels)\n",
                    kernels[i]);
            return GG_EXIT_USAGE;
        }
        if ((rc = gg_cli_kernel_refused(kernels[i])) != 0)
            return rc;
    }
    o.kernels = kernels;
    char tier_dir[4096];
    const char *one[1] = {tier_dir};
    if (optind < argc) {
        o.paths = (const char *const *)argv + optind;
        o.n_paths = argc - optind;
    } else {
        char corpus[sizeof tier_dir - 64];
        if (suite_dir == NULL) {
            if ((rc = gg_cli_home("corpus", corpus, sizeof corpus)) != 0) {
                fprintf(stderr, "ggfuzz suite: no corpus with the suite's tiers: %s%s; give "
                        "--suite-dir DIR\n", rc > 0 ? "tried " : "",
                        rc > 0 ? corpus : "this executable cannot be found");
                return GG_EXIT_HARNESS;
            }
            strcat(corpus, "/suite");
            suite_dir = corpus;
        }
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

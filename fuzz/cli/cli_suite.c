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
#include "reports/gg_report.h"

#define MAX_KERNELS 32
/* A case's process is killed after this long unless --timeout says otherwise. */
#define SUITE_DEFAULT_TIMEOUT_S 1800

/* What the options of suite set. */
struct suite_args {
    struct gg_suite_opts o;
    struct gg_cli_list kernels;
    const char *suite_dir, *gen_dir;
    int tier, merge;
    struct gg_gpus gpus;
    struct gg_cli_shard shard;
};

/* In the order of gg_suite_tier_names. */
static const struct gg_cli_word tier_words[] = {
    {"quick", 0}, {"release", 1}, {"stress", 2}, {NULL, 0}};

#define A(field) GG_CLI_AT(struct suite_args, field)
static const struct gg_cli_flag suite_flags[] = {
    {"tier", 0, GG_CLI_WORD, "T", A(tier), .words = tier_words, GG_CLI_DEFAULT_STR("quick"),
     .help = "quick (CPU, minutes), release (the full grid, for a GPU node) or stress (past 2^31 "
             "elements and 2^32 bytes)"},
    {"suite-dir", 0, GG_CLI_STRING, "DIR", A(suite_dir),
     GG_CLI_DEFAULT_TEXT("the corpus installed with ggfuzz, PREFIX/share/ggfuzz/corpus/suite, "
                         "else that of the source tree it was built from"),
     .help = "where the tiers live"},
    {"kernel", 0, GG_CLI_LIST, "K", A(kernels), .max = MAX_KERNELS,
     .help = "run every case on K (repeatable)"},
    {"mutant", 0, GG_CLI_STRING, "M", A(o.mutant),
     .help = "run with mutant M, or the list M1,M2 ('none': the correct kernels); kernels "
             "without one of them skip the case"},
    {"gate", 0, GG_CLI_SWITCH, NULL, A(o.gate),
     .help = "the gate's verdict is the exit code (30: failed)"},
    {"baseline", 0, GG_CLI_STRING, "FILE", A(o.baseline_path),
     .help = "a saved result: a worst-group SNR lower by more than --snr-drop regresses (cases "
             "matched by id and kernel)"},
    {"snr-drop", 0, GG_CLI_NUMBER, "DB", A(o.snr_drop_db), GG_CLI_DEFAULT(1.0),
     .help = "allowed SNR drop against the baseline"},
    {"save-baseline", 0, GG_CLI_STRING, "FILE", A(o.save_baseline_path),
     .help = "write this run's result as a baseline"},
    {"perf", 0, GG_CLI_SWITCH, NULL, A(o.perf),
     .help = "time each passing case (median of --perf-runs) and regress when t > 1.005 t_base "
             "+ 0.5 us (baseline time >= 4 us); meaningful for GPU kernels"},
    {"perf-runs", 0, GG_CLI_COUNT, "N", A(o.perf_runs), .min = 1, GG_CLI_DEFAULT(5),
     .help = "runs each --perf time is the median of"},
    {"json", 0, GG_CLI_STRING, "FILE", A(o.json_path), .help = "the result as JSON"},
    {"junit", 0, GG_CLI_STRING, "FILE", A(o.junit_path), .help = "the result as JUnit XML"},
    {"report", 0, GG_CLI_STRING, "DIR", A(o.report_dir),
     .help = "the HTML and Markdown report of the result"},
    GG_CLI_REFERENCE_FLAG(struct suite_args, o.reference),
    GG_CLI_MAX_MEM_FLAG(struct suite_args, o.max_mem_bytes),
    GG_CLI_TIMEOUT_FLAG(struct suite_args, o.timeout_s, SUITE_DEFAULT_TIMEOUT_S,
                        "one past it is killed and gives a timeout verdict"),
    {"no-fork", 0, GG_CLI_SWITCH, NULL, A(o.no_fork), .help = "run cases in this process"},
    {"shard", 0, GG_CLI_STRING, "I/N", A(shard), .apply = gg_cli_apply_shard,
     GG_CLI_DEFAULT_TEXT("every case"),
     .help = "run shard I of N (0 <= I < N): the cases dealt to it by case identity, each "
             "recorded with its place in the whole run (write it with --json for --merge)"},
    GG_CLI_GPUS_FLAG(struct suite_args, gpus, "run the cases on",
                     " at once: one runner per GPU, bound to it, takes the next case not yet "
                     "taken; the result is the one process's, in its order (--perf times on "
                     "the first GPU; not with --no-fork)"),
    GG_CLI_WORKERS_FLAG(struct suite_args, o.workers, GG_GPUS_MAX,
                        "one per GPU of --gpus, else one",
                        ": N runner processes, dealt to the GPUs in turn, take the next case "
                        "not yet taken, and a case starts once its host and device memory fit "
                        "beside the cases running (one that does not fit beside them waits to "
                        "run alone); the result is the one process's, in its order (not with "
                        "--no-fork)"),
    {"status-interval", 0, GG_CLI_SECONDS, "S", A(o.status_interval_s),
     GG_CLI_DEFAULT(GG_SUITE_DEFAULT_STATUS_S),
     .help = "a progress line (cases done of all, time spent, an estimate of what is left) "
             "every S seconds"},
    {"merge", 0, GG_CLI_SWITCH, NULL, A(merge),
     .help = "the arguments are the --json results of every shard of one run: merge them into "
             "the result, JUnit XML and report one process would have written (--gate, --json, "
             "--junit, --report, --save-baseline apply; give --baseline to the shards)"},
    {"generate", 0, GG_CLI_STRING, "DIR", A(gen_dir),
     .help = "write the suite corpus into DIR/{quick,release,stress} and exit"},
    GG_CLI_PLUGIN_FLAG(.size = 0),
    {0}};
#undef A
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

/* The report of a suite result (gg_suite_opts.write_report). */
static enum gg_status write_report(const char *result_json, const char *out_dir, char *err,
                                   size_t err_len)
{
    return gg_report_html_write(result_json, NULL, out_dir, err, err_len);
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
    struct suite_args a;
    memset(&a, 0, sizeof a);
    int rc = gg_cli_parse(&gg_cli_suite_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    struct gg_suite_opts o = a.o;
    o.tier = gg_suite_tier_names[a.tier];
    o.plugins = plugins;
    o.n_plugins = n_plugins;
    o.out = stdout;
    o.write_junit = gg_report_suite_junit_write;
    o.write_report = write_report;
    o.shard_index = a.shard.index;
    o.shard_count = a.shard.count;
    o.gpus = a.gpus.n > 0 ? &a.gpus : NULL; /* none: as without --gpus */
    o.n_kernels = a.kernels.n;
    const char *suite_dir = a.suite_dir, *gen_dir = a.gen_dir, *const *kernels = a.kernels.item;
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

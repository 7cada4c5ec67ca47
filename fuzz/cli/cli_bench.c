/*
 * cli_bench.c — `ggfuzz bench`: times a kernel on case files (the shapes of a model, a finding,
 * a suite tier) and prints, per case, the median time of the timed runs and the TFLOP/s it
 * gives (gg_bench_case: inputs generated as for a run, on the device for a GPU kernel; no
 * oracle). Runs in this process, so a Python kernel is timed through its bridge as a campaign
 * calls it; a kernel that crashes ends the command.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/run/gg_run.h"

struct bench {
    struct gg_run_opts run;
    int warmup, reps;
    const char *csv_path;
    FILE *csv;
    int n_timed, n_refused, n_error;
    struct gg_cli_backends backends;
};

#define B(field) GG_CLI_AT(struct bench, field)
static const struct gg_cli_flag bench_flags[] = {
    {"kernel", 0, GG_CLI_STRING, "NAME", B(run.kernel),
     .help = "time this kernel instead of each case's own"},
    {"mutant", 0, GG_CLI_STRING, "NAME", B(run.mutant),
     .help = "run with this mutant, or with every one of a list A,B ('none' for the correct "
             "kernel)"},
    {"warmup", 0, GG_CLI_COUNT, "N", B(warmup), GG_CLI_DEFAULT(3),
     .help = "untimed runs before the timed ones"},
    {"reps", 0, GG_CLI_COUNT, "N", B(reps), .min = 1, .max = GG_BENCH_MAX_REPS,
     GG_CLI_DEFAULT(20), .help = "timed runs; the median is reported"},
    {"csv", 0, GG_CLI_STRING, "FILE", B(csv_path), .help = "also write one CSV row per case"},
    GG_CLI_MAX_MEM_FLAG(struct bench, run.max_mem_bytes),
    GG_CLI_PLUGIN_FLAG(.size = 0),
    {0}};
#undef B
const struct gg_cli_command gg_cli_bench_command = {
    "bench", "bench [options] CASE|DIR...",
    "time a kernel on each case: the median of the timed runs (GPU kernels: device time between "
    "events on the harness's stream, the inputs generated on the device; CPU kernels: wall time) "
    "and its TFLOP/s; the output is not checked (run and fuzz verify)",
    bench_flags};

static void bench_file(struct bench *b, const char *path)
{
    struct gg_case c;
    char err[1024] = "";
    struct gg_bench_result r;
    memset(&r, 0, sizeof r);
    enum gg_status st = gg_case_load(path, &c, err, sizeof err);
    if (st != GG_OK) {
        printf("%-6s %s: %s\n", "ERROR", path, err);
        b->n_error++;
        return;
    }
    const struct gg_kernel *k = gg_registry_find(b->run.kernel ? b->run.kernel : c.kernel);
    if (k && !gg_cli_kernel_present(&b->backends, k, err, sizeof err))
        st = GG_E_UNSUPPORTED;
    else
        st = gg_bench_case(&c, &b->run, b->warmup, b->reps, &r, err, sizeof err);
    if (st == GG_OK) {
        double tflops = r.median_ms > 0 ? r.flops / (r.median_ms * 1e9) : 0.0;
        printf("%-7s %s  %s%s%s  %s g=%lld m=%lld n=%lld k=%lld  %.4f ms (%.4f .. %.4f, %d runs, "
               "%s)  %.4g TFLOP/s\n", "TIMED", path, r.kernel, r.mutant[0] ? "+" : "", r.mutant,
               gg_op_name(r.op), (long long)r.groups, (long long)r.m, (long long)r.n,
               (long long)r.k, r.median_ms, r.min_ms, r.max_ms, r.reps,
               r.device ? "device events" : "wall clock", tflops);
        if (b->csv)
            fprintf(b->csv, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%.6g,%.6f,%.6f,%.6f,%.3f,%s\n", path,
                    r.kernel, r.mutant, gg_op_name(r.op), (long long)r.groups, (long long)r.m,
                    (long long)r.n, (long long)r.k, r.flops, r.median_ms, r.min_ms, r.max_ms,
                    tflops, r.device ? "device" : "wall");
        b->n_timed++;
    } else if (st == GG_E_UNSUPPORTED || st == GG_E_NOMEM) {
        printf("%-7s %s: %s\n", "REFUSED", path, err);
        b->n_refused++;
    } else {
        printf("%-6s %s: %s\n", "ERROR", path, err);
        b->n_error++;
    }
    fflush(stdout);
    gg_case_free(&c);
}

static void bench_each(void *ctx, const char *file)
{
    bench_file(ctx, file);
}

int gg_cli_bench(int argc, char **argv)
{
    struct bench b;
    memset(&b, 0, sizeof b);
    int rc = gg_cli_parse(&gg_cli_bench_command, argc, argv, &b);
    if (rc != GG_CLI_TAKEN)
        return rc;
    if (optind >= argc) {
        fprintf(stderr, "ggfuzz: bench needs at least one case file or directory\n");
        return GG_EXIT_USAGE;
    }
    if (b.run.kernel && (rc = gg_cli_kernel_refused(b.run.kernel)) != 0)
        return rc;
    gg_registry_init();
    if (b.csv_path) {
        if (!(b.csv = fopen(b.csv_path, "w"))) {
            fprintf(stderr, "ggfuzz: cannot write %s\n", b.csv_path);
            return GG_EXIT_HARNESS;
        }
        fprintf(b.csv, "case,kernel,mutant,op,groups,m,n,k,flops,median_ms,min_ms,max_ms,"
                       "tflops,timer\n");
    }
    for (int i = optind; i < argc; i++)
        b.n_error += gg_cli_each_case(argv[i], "timed", bench_each, &b);
    printf("%d cases: %d timed, %d refused, %d errors\n", b.n_timed + b.n_refused + b.n_error,
           b.n_timed, b.n_refused, b.n_error);
    if (b.csv && fclose(b.csv) != 0) {
        fprintf(stderr, "ggfuzz: cannot write %s\n", b.csv_path);
        return GG_EXIT_HARNESS;
    }
    return b.n_error ? GG_EXIT_HARNESS : b.n_refused ? GG_EXIT_REFUSED : 0;
}

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
    double warmup, reps;
    const char *csv_path;
    FILE *csv;
    int n_timed, n_refused, n_error;
    struct gg_cli_backends backends;
};

enum { B_KERNEL, B_MUTANT, B_WARMUP, B_REPS, B_CSV, B_MAX_MEM };

static const struct gg_cli_flag bench_flags[] = {
    {"kernel", 0, "NAME", B_KERNEL, "time this kernel instead of each case's own"},
    {"mutant", 0, "NAME", B_MUTANT, "as for run"},
    {"warmup", 0, "N", B_WARMUP, "untimed runs before the timed ones (default 3)"},
    {"reps", 0, "N", B_REPS, "timed runs; the median is reported (default 20, at most 1000)"},
    {"csv", 0, "FILE", B_CSV, "also write one CSV row per case"},
    {"max-mem", 0, "SIZE", B_MAX_MEM, "as for run"},
    {"plugin", 0, "PATH", GG_CLI_PLUGIN, "as for run"},
    {0}};
const struct gg_cli_command gg_cli_bench_command = {
    "bench", "bench [options] CASE|DIR...",
    "time a kernel on each case: the median of the timed runs (GPU kernels: device time between "
    "events on the harness's stream, the inputs generated on the device; CPU kernels: wall time) "
    "and its TFLOP/s; the output is not checked (run and fuzz verify)",
    bench_flags};

static int bench_option(int id, const char *arg, void *p)
{
    struct bench *b = p;
    switch (id) {
    case B_KERNEL: b->run.kernel = arg; break;
    case B_MUTANT: b->run.mutant = arg; break;
    case B_CSV: b->csv_path = arg; break;
    case B_WARMUP:
        return gg_cli_number("--warmup", arg, 1, &b->warmup) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case B_REPS:
        if (gg_cli_number("--reps", arg, 1, &b->reps))
            return GG_EXIT_USAGE;
        if (b->reps < 1 || b->reps > GG_BENCH_MAX_REPS) {
            fprintf(stderr, "ggfuzz: --reps: must be 1 .. %d: '%s'\n", GG_BENCH_MAX_REPS, arg);
            return GG_EXIT_USAGE;
        }
        break;
    case B_MAX_MEM:
        return gg_cli_size("--max-mem", arg, &b->run.max_mem_bytes) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    default: return GG_CLI_OTHER;
    }
    return GG_CLI_TAKEN;
}

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
        st = gg_bench_case(&c, &b->run, (int)b->warmup, (int)b->reps, &r, err, sizeof err);
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
    b.warmup = 3;
    b.reps = 20;
    int rc = gg_cli_parse(&gg_cli_bench_command, argc, argv, bench_option, &b, NULL);
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

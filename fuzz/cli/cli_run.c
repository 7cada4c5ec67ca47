/*
 * cli_run.c — `ggfuzz run`, `replay` (also `--replay`) and `list`: walks case files and
 * directories, runs each case (in a child process unless --no-fork), prints one report line per
 * case and turns the worst outcome into the exit code; `list` prints the registered kernels.
 * A case whose kernel cannot run here (a GPU kernel without its device) is refused without
 * running; a kernel named with --kernel that cannot run here ends the command before any case.
 * With --dump each run writes its arrays and index (reports/gg_report_dump.c) in the process
 * that runs it; an index a dead process left unfinished gets the outcome here.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/store/gg_store.h"
#include "reports/gg_report.h"

struct cli {
    struct gg_run_opts run;
    const char *json_path;
    double timeout_s; /* per case, in the child process (GG_NO_LIMIT: none) */
    int no_fork;
    int verbose;
    int replay;
    /* Outcome across cases. */
    enum gg_class worst;
    int n_pass, n_fail, n_error, n_refused, n_noreproduce;
    struct gg_report_json *json;
    struct gg_cli_backends backends;
    struct gg_cli_dump dump;
    int n_dumped;
};

/* Runs case c of file path: after its @after cases in the same process when it has them. */
static enum gg_status run_one(const struct cli *cli, const char *path, const struct gg_case *c,
                              const struct gg_run_opts *o, struct gg_run_result *res, char *err,
                              size_t err_len)
{
    struct gg_case *prior;
    int n_prior;
    enum gg_status st = gg_case_after_cases(c, path, &prior, &n_prior, err, err_len);
    if (st != GG_OK)
        return st;
    if (!cli->no_fork) {
        st = gg_run_sequence_isolated(prior, n_prior, c, o, cli->timeout_s, res, err, err_len);
    } else {
        gg_run_prior(prior, n_prior, o);
        st = gg_run_case(c, o, res, err, err_len);
    }
    gg_case_after_free(prior, n_prior);
    return st;
}

/* --dump --no-kernel: the inputs and the reference of a case, one line. */
static void dump_inputs(struct cli *cli, const char *path, const char *dir)
{
    struct gg_case c;
    char err[1024] = "", shape[160] = "";
    double t0 = gg_wire_now();
    enum gg_status st = gg_case_load(path, &c, err, sizeof err);
    if (st == GG_OK) {
        gg_case_shape(&c, shape, sizeof shape);
        st = gg_cli_dump_case_inputs(&c, path, dir, &cli->run, err, sizeof err);
    }
    if (st == GG_OK) {
        printf("%-6s %s  %s  inputs and reference in %s (no kernel run)  [%.2f s]\n", "DUMP",
               path, shape, dir, gg_wire_now() - t0);
        cli->n_dumped++;
    } else {
        struct gg_report_case rc = {.path = path, .status = st, .error = err};
        gg_report_text_case(stdout, &rc, 0, 0);
        if (st == GG_E_UNSUPPORTED || st == GG_E_NOMEM)
            cli->n_refused++;
        else
            cli->n_error++;
    }
    fflush(stdout);
    gg_case_free(&c);
}

static void run_file(struct cli *cli, const char *path)
{
    char *dump_dir = cli->dump.dir ? gg_cli_dump_dir(&cli->dump, path) : NULL;
    if (cli->dump.dir && !dump_dir) {
        printf("%-6s %s: out of memory\n", "ERROR", path);
        cli->n_error++;
        return;
    }
    if (cli->dump.no_kernel) {
        dump_inputs(cli, path, dump_dir);
        free(dump_dir);
        return;
    }
    struct gg_case c;
    char err[1024] = "";
    struct gg_run_result res;
    memset(&res, 0, sizeof res);
    struct gg_report_case rc = {.path = path};
    struct gg_run_opts opts = cli->run;
    struct gg_report_dump dump;
    if (dump_dir) {
        gg_report_dump_init(&dump, dump_dir, path);
        opts.observe = gg_report_dump_observe;
        opts.observe_ctx = &dump;
    }
    enum gg_status st = gg_case_load(path, &c, err, sizeof err);
    if (st == GG_OK) {
        rc.kase = &c;
        const struct gg_kernel *k = gg_registry_find(cli->run.kernel ? cli->run.kernel : c.kernel);
        if (k && !gg_cli_kernel_present(&cli->backends, k, err, sizeof err))
            st = GG_E_UNSUPPORTED;
        else
            st = run_one(cli, path, &c, &opts, &res, err, sizeof err);
    }
    rc.status = st;
    rc.error = err;
    if (st == GG_OK) {
        rc.result = &res;
        rc.expect = gg_case_meta(&c, "expect");
        rc.replay_ok = gg_expect_holds(rc.expect, &res.verdict);
        /* A race's expectation may take several runs to show (runs=N). */
        for (int i = 1; cli->replay && !rc.replay_ok && i < gg_expect_runs(rc.expect); i++) {
            struct gg_run_result again;
            memset(&again, 0, sizeof again);
            if (run_one(cli, path, &c, &opts, &again, err, sizeof err) != GG_OK) {
                gg_run_result_free(&again);
                break;
            }
            gg_run_result_free(&res);
            res = again;
            rc.replay_ok = gg_expect_holds(rc.expect, &res.verdict);
        }
        enum gg_class cls = res.verdict.cls;
        if (cls == GG_CLASS_PASS)
            cli->n_pass++;
        else
            cli->n_fail++;
        if (cli->replay && !rc.replay_ok)
            cli->n_noreproduce++;
        if (gg_class_more_severe(cls, cli->worst))
            cli->worst = cls;
    } else if (st == GG_E_UNSUPPORTED || st == GG_E_NOMEM) {
        cli->n_refused++;
    } else {
        cli->n_error++;
    }
    gg_report_text_case(stdout, &rc, cli->replay, cli->verbose);
    if (dump_dir) {
        char derr[1024] = "";
        if (gg_report_dump_finish(&dump, &rc, derr, sizeof derr) != GG_OK) {
            printf("%-6s %s\n", "ERROR", derr);
            cli->n_error++;
        } else {
            char *index = gg_path_join(dump.dir, "index.json");
            if (index && access(index, F_OK) == 0)
                printf("       dump %s\n", dump.dir);
            free(index);
        }
        gg_report_dump_free(&dump);
        free(dump_dir);
    }
    fflush(stdout);
    gg_report_json_add(cli->json, &rc);
    gg_run_result_free(&res);
    gg_case_free(&c);
}

static void run_each(void *ctx, const char *file)
{
    run_file(ctx, file);
}

/* Refused cases (a kernel that does not support them, more memory than allowed) are listed and
   counted; they decide the exit code only when no case ran at all. */
static int exit_code(const struct cli *cli)
{
    int refused = cli->n_refused > 0 && cli->n_pass + cli->n_fail == 0 ? GG_EXIT_REFUSED : 0;
    if (cli->replay)
        return cli->n_noreproduce ? GG_EXIT_NO_REPRO : cli->n_error ? GG_EXIT_HARNESS : refused;
    if (cli->worst != GG_CLASS_PASS)
        return gg_class_exit_code(cli->worst);
    return cli->n_error ? GG_EXIT_HARNESS : refused;
}

static const struct gg_cli_flag list_flags[] = {
    GG_CLI_PLUGIN_FLAG(.size = 0),
    {0}};
const struct gg_cli_command gg_cli_list_command = {
    "list", "list [options]", "the kernels with their backend, ops, tile and mutants", list_flags};

int gg_cli_list(int argc, char **argv)
{
    int rc = gg_cli_parse(&gg_cli_list_command, argc, argv, NULL);
    if (rc != GG_CLI_TAKEN)
        return rc;
    gg_registry_init();
    printf("%-28s %-8s %-42s %-12s %s\n", "kernel", "backend", "ops", "tile MxNxK", "mutants");
    static const char *backends[] = {"cpu", "cuda", "hip"};
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        char ops[128] = "", tile[48], muts[512] = "";
        for (int op = 0; op < GG_OP_COUNT; op++)
            if (k->ops & GG_OP_BIT(op))
                snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", ops[0] ? "," : "",
                         gg_op_name((enum gg_op)op));
        snprintf(tile, sizeof tile, "%lldx%lldx%lld", (long long)k->tile_m, (long long)k->tile_n,
                 (long long)k->tile_k);
        for (const char *const *m = k->mutants; m && *m; m++)
            snprintf(muts + strlen(muts), sizeof muts - strlen(muts), "%s%s", muts[0] ? "," : "", *m);
        printf("%-28s %-8s %-42s %-12s %s\n", k->name, backends[k->backend], ops, tile,
               muts[0] ? muts : "-");
        if (k->summary)
            printf("    %s\n", k->summary);
    }
    return 0;
}

/* A case's process is killed after this long unless --timeout says otherwise. */
#define RUN_DEFAULT_TIMEOUT_S 300

static const struct gg_cli_flag run_flags[] = {
    {"kernel", 0, GG_CLI_STRING, "NAME", GG_CLI_AT(struct cli, run.kernel),
     .help = "run every case on this kernel instead of the case's own"},
    {"mutant", 0, GG_CLI_STRING, "NAME", GG_CLI_AT(struct cli, run.mutant),
     .help = "run with this mutant, or with every one of a list A,B ('none' for the correct "
             "kernel)"},
    GG_CLI_MAX_MEM_FLAG(struct cli, run.max_mem_bytes),
    {"certify", 0, GG_CLI_COUNT, "N", GG_CLI_AT(struct cli, run.certify_samples),
     GG_CLI_DEFAULT(0),
     .help = "certify the reference on N outputs (and every group's corners) with MPFR, the "
             "vectors they read fetched from where the reference ran"},
    GG_CLI_REFERENCE_FLAG(struct cli, run.reference),
    GG_CLI_TIMEOUT_FLAG(struct cli, timeout_s, RUN_DEFAULT_TIMEOUT_S,
                        "one past it is killed and gives a timeout verdict"),
    {"no-fork", 0, GG_CLI_SWITCH, NULL, GG_CLI_AT(struct cli, no_fork),
     .help = "run cases in this process (for a debugger; a crashing kernel then ends ggfuzz)"},
    {"json", 0, GG_CLI_STRING, "FILE", GG_CLI_AT(struct cli, json_path),
     .help = "also write the results as JSON"},
    {"verbose", 'v', GG_CLI_SWITCH, NULL, GG_CLI_AT(struct cli, verbose),
     .help = "print per-group metrics"},
    {"dump", 0, GG_CLI_STRING, "DIR", GG_CLI_AT(struct cli, dump.dir),
     .help = "write each case's inputs, scales, group arrays, reference (values and per-element "
             "bound) and the kernel's output as .npy files with an index.json into DIR (one "
             "case file given: DIR itself; else DIR/<case file stem>/); a kernel that crashes "
             "leaves its inputs and reference"},
    {"no-kernel", 0, GG_CLI_SWITCH, NULL, GG_CLI_AT(struct cli, dump.no_kernel),
     .help = "with --dump: write the inputs and the reference only, running no kernel (the "
             "case's kernel need not exist here)"},
    GG_CLI_PLUGIN_FLAG(.size = 0),
    {0}};
const struct gg_cli_command gg_cli_run_command = {
    "run", "run|replay [options] CASE|DIR...",
    "replay (also --replay) checks that each case's stored @expect verdict reproduces", run_flags};

int gg_cli_run(int argc, char **argv, int replay)
{
    struct cli storage, *cli = &storage;
    memset(cli, 0, sizeof *cli);
    cli->replay = replay;
    int rc = gg_cli_parse(&gg_cli_run_command, argc, argv, cli);
    if (rc != GG_CLI_TAKEN)
        return rc;
    if (optind >= argc) {
        fprintf(stderr, "ggfuzz: %s needs at least one case file or directory\n", argv[0]);
        return GG_EXIT_USAGE;
    }
    if (cli->dump.no_kernel && !cli->dump.dir) {
        fprintf(stderr, "ggfuzz: --no-kernel needs --dump DIR\n");
        return GG_EXIT_USAGE;
    }
    if (!cli->dump.no_kernel && cli->run.kernel &&
        (rc = gg_cli_kernel_refused(cli->run.kernel)) != 0)
        return rc;
    if ((rc = gg_cli_dump_start(&cli->dump, argc - optind, argv + optind)) != 0)
        return rc;
    gg_registry_init();
    if (cli->json_path && !(cli->json = gg_report_json_open())) {
        fprintf(stderr, "ggfuzz: out of memory\n");
        return GG_EXIT_HARNESS;
    }
    for (int i = optind; i < argc; i++)
        cli->n_error += gg_cli_each_case(argv[i], "run", run_each, cli);
    gg_cli_dump_end(&cli->dump);
    int total = cli->n_pass + cli->n_fail + cli->n_refused + cli->n_error + cli->n_dumped;
    if (cli->dump.no_kernel)
        printf("%d cases: %d dumped (inputs and reference, no kernel run), %d refused, %d "
               "errors\n", total, cli->n_dumped, cli->n_refused, cli->n_error);
    else if (cli->replay) /* faults are expected in a regression corpus: what counts is reproduction */
        printf("%d cases: %d reproduced (%d pass, %d faults), %d did not reproduce, %d refused, "
               "%d errors\n", total, cli->n_pass + cli->n_fail - cli->n_noreproduce, cli->n_pass,
               cli->n_fail, cli->n_noreproduce, cli->n_refused, cli->n_error);
    else
        printf("%d cases: %d passed, %d failed, %d refused, %d errors\n", total, cli->n_pass,
               cli->n_fail, cli->n_refused, cli->n_error);
    int code = exit_code(cli);
    if (cli->json) {
        char err[512];
        if (gg_report_json_write(cli->json, cli->json_path, err, sizeof err) != GG_OK) {
            fprintf(stderr, "ggfuzz: %s\n", err);
            code = code ? code : GG_EXIT_HARNESS;
        }
        gg_report_json_free(cli->json);
    }
    return code;
}


/*
 * ggfuzz_main.c — the ggfuzz command line: `run`, `replay` (also `--replay`), `list`, `--help`,
 * `--version`. It parses arguments, loads the plugins of GGFUZZ_PLUGINS and `--plugin`, walks case
 * files and directories, runs each case, prints the report and turns the worst outcome into the
 * documented exit code. Only main() exits.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gg_fuzz.h"
#include "reports/gg_report.h"

/* Exit codes besides the per-class codes of gg_class_exit_code() (10 + class). */
enum {
    EXIT_USAGE = 2,      /* bad command line */
    EXIT_HARNESS = 3,    /* a case file is malformed, a plugin refused, or a case not run */
    EXIT_REFUSED = 4,    /* a case was refused: unsupported by the kernel or too large */
    EXIT_NO_REPRO = 20   /* replay: an expected verdict did not reproduce */
};

static const char usage_text[] =
    "usage: ggfuzz [--plugin PATH]... <command> [options] [args]\n"
    "\n"
    "commands:\n"
    "  run CASE|DIR...       run cases and print their verdicts\n"
    "  replay CASE|DIR...    run cases and check that each stored @expect verdict reproduces\n"
    "  --replay CASE|DIR...  same as replay\n"
    "  list                  list the kernels with their ops, tiles and mutants\n"
    "  --help, --version\n"
    "\n"
    "options of run, replay and list (also before the command):\n"
    "  --plugin PATH         load the kernels of a plugin .so (repeatable); the paths of\n"
    "                        GGFUZZ_PLUGINS (PATH:PATH...) are loaded before them\n"
    "\n"
    "options of run and replay:\n"
    "  --kernel NAME         run every case on this kernel instead of the case's own\n"
    "  --mutant NAME         run with this mutant ('none' for the correct kernel)\n"
    "  --max-mem SIZE        refuse cases needing more host memory (e.g. 512M, 8G; default:\n"
    "                        the memory available now)\n"
    "  --certify N           certify the reference on N outputs with MPFR (default 0)\n"
    "  --timeout S           kill a case's process after S seconds: a timeout finding\n"
    "                        (default 300; 0: no limit)\n"
    "  --no-fork             run cases in this process (for a debugger; a crashing kernel\n"
    "                        then ends ggfuzz)\n"
    "  --json FILE           also write the results as JSON\n"
    "  -v, --verbose         print per-group metrics\n"
    "\n"
    "exit codes: 0 all pass (replay: all expectations reproduced); 2 usage; 3 malformed case,\n"
    "refused plugin or harness error; 4 case refused (unsupported, too large); 20 replay did\n"
    "not reproduce; 11 crash, 12 timeout, 13 oob_write, 14 input_modified, 15 unwritten, 16 nan,\n"
    "17 workspace, 18 nondeterminism, 19 snr (the most severe fault found, in this order).\n";

struct cli {
    struct gg_run_opts run;
    const char *json_path;
    double timeout_s; /* per case, in the child process */
    int no_fork;
    int verbose;
    int replay;
    /* Outcome across cases. */
    enum gg_class worst;
    int n_pass, n_fail, n_error, n_refused, n_noreproduce;
    struct gg_report_json *json;
};

static int parse_size(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end != '\0')
        return -1;
    *out = (int64_t)(v * mult);
    return 0;
}

static void run_file(struct cli *cli, const char *path)
{
    struct gg_case c;
    char err[1024] = "";
    struct gg_run_result res;
    memset(&res, 0, sizeof res);
    struct gg_report_case rc = {.path = path};
    enum gg_status st = gg_case_load(path, &c, err, sizeof err);
    if (st == GG_OK) {
        rc.kase = &c;
        st = cli->no_fork ? gg_run_case(&c, &cli->run, &res, err, sizeof err)
                          : gg_run_case_isolated(&c, &cli->run, cli->timeout_s, &res, err, sizeof err);
    }
    rc.status = st;
    rc.error = err;
    if (st == GG_OK) {
        rc.result = &res;
        rc.expect = gg_case_meta(&c, "expect");
        rc.replay_ok = gg_expect_holds(rc.expect, &res.verdict);
        enum gg_class cls = res.verdict.cls;
        if (cls == GG_CLASS_PASS)
            cli->n_pass++;
        else
            cli->n_fail++;
        if (cli->replay && !rc.replay_ok)
            cli->n_noreproduce++;
        if (cls != GG_CLASS_PASS && (cli->worst == GG_CLASS_PASS || cls < cli->worst))
            cli->worst = cls;
    } else if (st == GG_E_UNSUPPORTED || st == GG_E_NOMEM) {
        cli->n_refused++;
    } else {
        cli->n_error++;
    }
    gg_report_text_case(stdout, &rc, cli->replay, cli->verbose);
    fflush(stdout);
    gg_report_json_add(cli->json, &rc);
    gg_run_result_free(&res);
    gg_case_free(&c);
}

/* Runs path: a case file, or every *.case below a directory in sorted order. */
static void run_path(struct cli *cli, const char *path)
{
    char **files = NULL, err[512];
    size_t n = 0;
    if (gg_corpus_list(path, &files, &n, err, sizeof err) != GG_OK) {
        printf("%-6s %s\n", "ERROR", err);
        cli->n_error++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        run_file(cli, files[i]);
    gg_corpus_list_free(files, n);
}

static int exit_code(const struct cli *cli)
{
    if (cli->replay)
        return cli->n_noreproduce ? EXIT_NO_REPRO : cli->n_error ? EXIT_HARNESS
               : cli->n_refused ? EXIT_REFUSED : 0;
    if (cli->worst != GG_CLASS_PASS)
        return gg_class_exit_code(cli->worst);
    return cli->n_error ? EXIT_HARNESS : cli->n_refused ? EXIT_REFUSED : 0;
}

/* Loads one plugin; a refusal is reported on stderr and becomes EXIT_HARNESS. */
static int load_plugin(const char *path)
{
    char err[1024];
    if (gg_plugin_load(path, err, sizeof err) == GG_OK)
        return 0;
    fprintf(stderr, "ggfuzz: %s\n", err);
    return EXIT_HARNESS;
}

/* The plugins of GGFUZZ_PLUGINS, then those of the leading `--plugin PATH` pairs of lead[0..n). */
static int load_plugins(char **lead, int n)
{
    const char *env = getenv("GGFUZZ_PLUGINS");
    char err[1024];
    if (env && gg_plugin_load_list(env, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz: GGFUZZ_PLUGINS: %s\n", err);
        return EXIT_HARNESS;
    }
    for (int i = 0; i + 1 < n; i += 2)
        if (load_plugin(lead[i + 1]) != 0)
            return EXIT_HARNESS;
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"plugin", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            if (load_plugin(optarg) != 0)
                return EXIT_HARNESS;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
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

static int cmd_run(struct cli *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kernel", required_argument, NULL, 'k'}, {"mutant", required_argument, NULL, 'm'},
        {"max-mem", required_argument, NULL, 'M'}, {"certify", required_argument, NULL, 'c'},
        {"json", required_argument, NULL, 'j'},   {"verbose", no_argument, NULL, 'v'},
        {"plugin", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
        {"timeout", required_argument, NULL, 't'}, {"no-fork", no_argument, NULL, 'F'},
        {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    cli->timeout_s = 300;
    while ((ch = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'k': cli->run.kernel = optarg; break;
        case 'm': cli->run.mutant = optarg; break;
        case 'j': cli->json_path = optarg; break;
        case 'v': cli->verbose = 1; break;
        case 'F': cli->no_fork = 1; break;
        case 't': {
            char *end;
            cli->timeout_s = strtod(optarg, &end);
            if (*end || end == optarg || !(cli->timeout_s >= 0)) {
                fprintf(stderr, "ggfuzz: --timeout: not a number of seconds: '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'p':
            if (load_plugin(optarg) != 0)
                return EXIT_HARNESS;
            break;
        case 'M':
            if (parse_size(optarg, &cli->run.max_mem_bytes) != 0) {
                fprintf(stderr, "ggfuzz: --max-mem: cannot read size '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'c': {
            char *end;
            cli->run.certify_samples = strtoll(optarg, &end, 10);
            if (*end || cli->run.certify_samples < 0) {
                fprintf(stderr, "ggfuzz: --certify: not a count: '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "ggfuzz: %s needs at least one case file or directory\n", argv[0]);
        return EXIT_USAGE;
    }
    if (cli->json_path && !(cli->json = gg_report_json_open())) {
        fprintf(stderr, "ggfuzz: out of memory\n");
        return EXIT_HARNESS;
    }
    for (int i = optind; i < argc; i++)
        run_path(cli, argv[i]);
    int total = cli->n_pass + cli->n_fail + cli->n_refused + cli->n_error;
    if (cli->replay) /* faults are expected in a regression corpus: what counts is reproduction */
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
            code = code ? code : EXIT_HARNESS;
        }
        gg_report_json_free(cli->json);
    }
    return code;
}

int main(int argc, char **argv)
{
    /* Leading `--plugin PATH` pairs belong to the command after them. */
    char **lead = argv + 1;
    int n_lead = 0;
    while (1 + n_lead < argc && strcmp(argv[1 + n_lead], "--plugin") == 0) {
        if (2 + n_lead >= argc) {
            fprintf(stderr, "ggfuzz: --plugin needs a path\n");
            return EXIT_USAGE;
        }
        n_lead += 2;
    }
    argc -= n_lead;
    argv += n_lead;
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("ggfuzz %s (kernel ABI %u, case format %d, thresholds %d)\n", GG_VERSION,
               GG_KERNEL_ABI_VERSION, GG_CASE_VERSION, GG_THRESHOLDS_VERSION);
        return 0;
    }
    int is_run = !strcmp(cmd, "run") || !strcmp(cmd, "replay") || !strcmp(cmd, "--replay");
    if ((is_run || !strcmp(cmd, "list")) && load_plugins(lead, n_lead) != 0)
        return EXIT_HARNESS;
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    struct cli cli;
    memset(&cli, 0, sizeof cli);
    if (is_run) {
        cli.replay = strcmp(cmd, "run") != 0;
        return cmd_run(&cli, argc - 1, argv + 1);
    }
    fprintf(stderr, "ggfuzz: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}

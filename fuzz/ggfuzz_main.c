/*
 * ggfuzz_main.c — the ggfuzz command line: `run`, `replay` (also `--replay`), `list`,
 * `minimize`, `fuzz`, `selftest`, `--help`, `--version` (and `worker`, which campaigns start). It
 * parses arguments, loads the plugins of GGFUZZ_PLUGINS and `--plugin`, walks case files and
 * directories, runs each case, prints the report and turns the worst outcome into the documented
 * exit code. Only main() exits.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    "  minimize CASE         shrink a failing case while its signature reproduces\n"
    "  fuzz [CORPUS_DIR...] --kernel NAME   run a fuzzing campaign against a kernel\n"
    "  selftest              a short campaign against every mutant (each must be found)\n"
    "                        and every correct kernel (none may give a finding)\n"
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
    "options of minimize (exit 0 when minimised, 3 when the case passes):\n"
    "  -o, --output FILE     the minimised case (default: CASE with .case replaced by\n"
    "                        .min.case); progress is saved there after each round\n"
    "  --max-total-time S    stop after S seconds (default 600)\n"
    "  --repeats R           keep a step only when R runs of R reproduce the signature\n"
    "                        (default 1; 2 for nondeterminism)\n"
    "  --timeout S           kill a run after S seconds (default 300)\n"
    "  --kernel, --mutant    as for run; written into the minimised case\n"
    "  --findings DIR        record the other faults met on the way in this findings store\n"
    "\n"
    "options of fuzz (libFuzzer conventions; the first CORPUS_DIR receives new cases):\n"
    "  --kernel NAME, --mutant NAME   the kernel under test (and one of its mutants)\n"
    "  --faults LIST         fault classes to aim at: snr,i64,zero,alias or all (default all)\n"
    "  --strategy S          targeted (default) or uniform (the untargeted baseline)\n"
    "  --max-total-time S    stop after S seconds; --runs N: after N cases (default: neither)\n"
    "  --seed N              campaign seed (0 or absent: chosen and printed)\n"
    "  --workers N           worker processes (default: one per CPU)\n"
    "  --timeout S           a case past S seconds (default 10) is re-run once with 4x, then\n"
    "                        kept as a timeout finding\n"
    "  --artifacts DIR       findings store (default ggfuzz-out/artifacts)\n"
    "  --stats-dir DIR       fuzzer_stats, plot_data, cur_input.* (default: DIR/..)\n"
    "  --known FILE          signatures that do not count as new (one per line)\n"
    "  --stop-file FILE      end the campaign cleanly once FILE exists (also SIGINT, SIGTERM)\n"
    "  --no-minimize         do not minimise new signatures (default: up to 30 s each)\n"
    "  --max-mem SIZE, --plugin PATH   as for run\n"
    "  exit: 0 no new finding, else the code of the most severe new finding; 3 harness error\n"
    "\n"
    "options of selftest (exit 0 when every mutant is found and every kernel is clean, else 1):\n"
    "  --max-total-time-per-mutant S   budget of each campaign (default 20)\n"
    "  --kernel NAME         only this kernel; --seed N, --workers N, --timeout S as for fuzz\n"
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

/* ---- minimize ------------------------------------------------------------------------------ */

/* A number ≥ 0 given to option opt; -1 (with a message) when s is not one. */
static int minimize_number(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (errno || end == s || *end || !(*out >= 0)) {
        fprintf(stderr, "ggfuzz: %s: not a number >= 0: '%s'\n", opt, s);
        return -1;
    }
    return 0;
}

/* One line describing the size of c: id, groups (or batch), sizes, n, k, output elements. */
static void minimize_print_case(const char *label, const struct gg_case *c, int64_t elems)
{
    char id[GG_CASE_ID_HEX + 1], sizes[160] = "";
    gg_case_id(c, id);
    size_t at = 0;
    int grouped = c->lens != NULL;
    for (int64_t g = 0; grouped && g < c->groups && at + 24 < sizeof sizes;) {
        int64_t run = 1;
        while (g + run < c->groups && c->lens[g + run] == c->lens[g])
            run++;
        at += (size_t)snprintf(sizes + at, sizeof sizes - at, run > 1 ? "%s%lld*%lld" : "%s%lld",
                               at ? " " : "", (long long)c->lens[g], (long long)run);
        g += run;
        if (g < c->groups && at + 24 >= sizeof sizes)
            snprintf(sizes + at, sizeof sizes - at, " ...");
    }
    printf("%-7s id=%s groups=%lld", label, id, (long long)(c->op == GG_OP_DENSE ? 1 : c->groups));
    if (grouped)
        printf(" group_lens=[%s]", sizes);
    if (!grouped || c->op == GG_OP_MOE_SORTED)
        printf(" m=%lld", (long long)c->m);
    printf(" n=%lld k=%lld outputs=%lld\n", (long long)c->n, (long long)c->k, (long long)elems);
}

/*
 * `ggfuzz minimize FILE`: runs FILE once for its signature, shrinks it with gg_minimize() and
 * writes the result (atomically, progress after each successful round) with its @expect and
 * @min lines. Exit 0 when minimised; 3 when FILE passes or cannot be read or minimised; 4 when
 * the case is refused.
 */
static int cmd_minimize(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"max-total-time", required_argument, NULL, 'T'},
        {"repeats", required_argument, NULL, 'r'}, {"timeout", required_argument, NULL, 't'},
        {"kernel", required_argument, NULL, 'k'},  {"mutant", required_argument, NULL, 'm'},
        {"findings", required_argument, NULL, 'f'}, {"plugin", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    struct gg_min_opts mo = {.max_total_time_s = 600, .timeout_s = 300};
    const char *out = NULL, *kernel = NULL, *mutant = NULL;
    double repeats = 0;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'k': kernel = optarg; break;
        case 'm': mutant = optarg; break;
        case 'f': mo.findings_dir = optarg; break;
        case 'T':
            if (minimize_number("--max-total-time", optarg, &mo.max_total_time_s) != 0)
                return EXIT_USAGE;
            break;
        case 't':
            if (minimize_number("--timeout", optarg, &mo.timeout_s) != 0)
                return EXIT_USAGE;
            break;
        case 'r':
            if (minimize_number("--repeats", optarg, &repeats) != 0 || repeats > 1000 ||
                (double)(int)repeats != repeats) {
                fprintf(stderr, "ggfuzz: --repeats: a whole number up to 1000\n");
                return EXIT_USAGE;
            }
            break;
        case 'p':
            if (load_plugin(optarg) != 0)
                return EXIT_HARNESS;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "ggfuzz: minimize needs exactly one case file\n");
        return EXIT_USAGE;
    }
    const char *path = argv[optind];
    char err[1024] = "", from[GG_CASE_ID_HEX + 1], *def_out = NULL;
    struct gg_case c;
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz: %s\n", err);
        return EXIT_HARNESS;
    }
    gg_case_id(&c, from);
    /* Overrides become part of the case, so the minimised file replays on its own. */
    if (kernel)
        snprintf(c.kernel, sizeof c.kernel, "%s", kernel);
    if (mutant)
        snprintf(c.mutant, sizeof c.mutant, "%s", strcmp(mutant, "none") ? mutant : "");
    struct gg_run_result res;
    enum gg_status st = gg_run_case_isolated(&c, &mo.run, mo.timeout_s, &res, err, sizeof err);
    struct gg_verdict v = res.verdict;
    gg_run_result_free(&res);
    int code = 0;
    if (st != GG_OK) {
        fprintf(stderr, "ggfuzz: %s: %s\n", path, err);
        code = st == GG_E_UNSUPPORTED || st == GG_E_NOMEM ? EXIT_REFUSED : EXIT_HARNESS;
    } else if (v.cls == GG_CLASS_PASS) {
        printf("%s passes on %s%s%s: nothing to minimise\n", path, c.kernel,
               c.mutant[0] ? "+" : "", c.mutant);
        code = EXIT_HARNESS;
    }
    if (code != 0) {
        gg_case_free(&c);
        return code;
    }
    if (out == NULL) {
        size_t n = strlen(path);
        if (n > 5 && strcmp(path + n - 5, ".case") == 0)
            n -= 5;
        if ((def_out = malloc(n + sizeof ".min.case")) == NULL) {
            gg_case_free(&c);
            fprintf(stderr, "ggfuzz: out of memory\n");
            return EXIT_HARNESS;
        }
        memcpy(def_out, path, n);
        memcpy(def_out + n, ".min.case", sizeof ".min.case");
        out = def_out;
    }
    /* Intermittent faults need the signature twice in a row before a step is kept. */
    mo.repeats = repeats > 0 ? (int)repeats : v.cls == GG_CLASS_NONDETERMINISM ? 2 : 1;
    mo.progress_path = out;
    char expect[GG_SIGNATURE_MAX + 64], line[256];
    snprintf(expect, sizeof expect, "class=%s sig=%s", gg_class_name(v.cls), v.signature);
    printf("minimizing %s: %s\n", path, v.signature);
    fflush(stdout);
    struct gg_min_stats ms;
    st = gg_case_set_meta(&c, "expect", expect);
    if (st == GG_OK)
        st = gg_minimize(&c, v.signature, &mo, &ms, err, sizeof err);
    if (st == GG_OK) {
        snprintf(line, sizeof line, "from=%s attempts=%d seconds=%.1f", from, ms.attempts,
                 ms.seconds);
        if ((st = gg_case_set_meta(&c, "min", line)) == GG_OK)
            st = gg_case_save(&c, out, err, sizeof err);
    }
    if (st != GG_OK) {
        fprintf(stderr, "ggfuzz: minimize %s: %s\n", path, err[0] ? err : "out of memory");
        code = EXIT_HARNESS;
    } else {
        struct gg_case orig;
        if (gg_case_load(path, &orig, err, sizeof err) == GG_OK) {
            minimize_print_case("before:", &orig, ms.elems_before);
            gg_case_free(&orig);
        }
        minimize_print_case("after:", &c, ms.elems_after);
        printf("%d rounds, %d runs (%d repeated candidates not run), %d steps kept, %d other "
               "faults, %.1f s -> %s\n", ms.rounds, ms.attempts, ms.cache_hits, ms.kept,
               ms.other_faults, ms.seconds, out);
    }
    free(def_out);
    gg_case_free(&c);
    return code;
}

/* ---- fuzz, selftest, worker ------------------------------------------------------------------ */

/* Raised by SIGINT, SIGTERM or SIGUSR1 during fuzz and selftest: the campaign ends cleanly. A
   second signal takes the default action (the handler resets itself). */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

/* A non-negative number of seconds (or a count when whole is set). */
static int campaign_number(const char *opt, const char *s, int whole, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || (whole && v != (double)(int64_t)v)) {
        fprintf(stderr, "ggfuzz: %s: not a %s: '%s'\n", opt, whole ? "count" : "number of seconds", s);
        return -1;
    }
    *out = v;
    return 0;
}

static int campaign_seed(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "ggfuzz: --seed: not a seed: '%s'\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The plugins to forward to workers: the leading --plugin pairs and those after the command. */
/* The options fuzz and selftest share: --timeout (t), --workers (w), --seed (s). */
static int worker_option(int ch, const char *arg, double *timeout_s, int *workers, uint64_t *seed)
{
    double v;
    if (ch == 't')
        return campaign_number("--timeout", arg, 0, timeout_s);
    if (ch == 's')
        return campaign_seed(arg, seed);
    if (campaign_number("--workers", arg, 1, &v) != 0 || v > 256)
        return -1;
    *workers = (int)v;
    return 0;
}

struct plugin_list {
    const char *paths[64];
    int n;
};

static int plugin_add(struct plugin_list *pl, const char *path)
{
    if (pl->n >= 64) {
        fprintf(stderr, "ggfuzz: too many plugins\n");
        return EXIT_USAGE;
    }
    if (load_plugin(path) != 0)
        return EXIT_HARNESS;
    pl->paths[pl->n++] = path;
    return 0;
}

static void plugin_lead(struct plugin_list *pl, char **lead, int n_lead)
{
    for (int i = 0; i + 1 < n_lead && pl->n < 64; i += 2)
        pl->paths[pl->n++] = lead[i + 1];
}

static const char *join_args(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
    return buf;
}

static int cmd_fuzz(int argc, char **argv, char **lead, int n_lead)
{
    static const struct option longopts[] = {
        {"kernel", required_argument, NULL, 'k'},   {"mutant", required_argument, NULL, 'm'},
        {"faults", required_argument, NULL, 'f'},   {"max-total-time", required_argument, NULL, 'T'},
        {"runs", required_argument, NULL, 'r'},     {"seed", required_argument, NULL, 's'},
        {"workers", required_argument, NULL, 'w'},  {"timeout", required_argument, NULL, 't'},
        {"artifacts", required_argument, NULL, 'a'}, {"stats-dir", required_argument, NULL, 'S'},
        {"strategy", required_argument, NULL, 'g'}, {"known", required_argument, NULL, 'K'},
        {"stop-file", required_argument, NULL, 'F'}, {"no-minimize", no_argument, NULL, 'N'},
        {"max-mem", required_argument, NULL, 'M'},  {"plugin", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    struct gg_campaign_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct plugin_list pl = {.n = 0};
    plugin_lead(&pl, lead, n_lead);
    double v;
    int ch, rc;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'k': cfg.kernel = optarg; break;
        case 'm': cfg.mutant = optarg; break;
        case 'a': cfg.artifacts_dir = optarg; break;
        case 'S': cfg.stats_dir = optarg; break;
        case 'K': cfg.known_path = optarg; break;
        case 'F': cfg.stop_file = optarg; break;
        case 'N': cfg.no_minimize = 1; break;
        case 'f':
            if (!(cfg.faults = gg_faults_parse(optarg))) {
                fprintf(stderr, "ggfuzz: --faults: expected a list of snr,i64,zero,alias or all: "
                        "'%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'g':
            if (strcmp(optarg, "targeted") && strcmp(optarg, "uniform")) {
                fprintf(stderr, "ggfuzz: --strategy: targeted or uniform, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
            cfg.strategy = strcmp(optarg, "uniform") ? GG_STRATEGY_TARGETED : GG_STRATEGY_UNIFORM;
            break;
        case 'T':
            if (campaign_number("--max-total-time", optarg, 0, &cfg.max_total_time_s) != 0)
                return EXIT_USAGE;
            break;
        case 'r':
            if (campaign_number("--runs", optarg, 1, &v) != 0)
                return EXIT_USAGE;
            cfg.max_runs = (int64_t)v;
            break;
        case 't':
        case 'w':
        case 's':
            if (worker_option(ch, optarg, &cfg.timeout_s, &cfg.workers, &cfg.seed) != 0)
                return EXIT_USAGE;
            break;
        case 'M':
            if (parse_size(optarg, &cfg.run.max_mem_bytes) != 0) {
                fprintf(stderr, "ggfuzz: --max-mem: cannot read size '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'p':
            if ((rc = plugin_add(&pl, optarg)) != 0)
                return rc;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (!cfg.kernel) {
        fprintf(stderr, "ggfuzz: fuzz needs --kernel NAME (ggfuzz list shows the kernels)\n");
        return EXIT_USAGE;
    }
    char cmdline[2048], err[2048];
    cfg.corpus_dirs = (const char *const *)argv + optind;
    cfg.n_corpus_dirs = argc - optind;
    cfg.plugins = pl.paths;
    cfg.n_plugins = pl.n;
    cfg.log = stderr;
    cfg.status_line = -1;
    cfg.command_line = join_args(argc, argv, cmdline, sizeof cmdline);
    cfg.stop_flag = &stop_requested;
    catch_stop_signals();
    struct gg_campaign_stats st;
    if (gg_campaign_run(&cfg, &st, err, sizeof err) != GG_OK || st.stop == GG_STOP_ERROR) {
        fprintf(stderr, "ggfuzz: %s\n", err[0] ? err : "the campaign failed");
        return EXIT_HARNESS;
    }
    return st.worst_new != GG_CLASS_PASS ? gg_class_exit_code(st.worst_new) : 0;
}

static int cmd_selftest(int argc, char **argv, char **lead, int n_lead)
{
    static const struct option longopts[] = {
        {"max-total-time-per-mutant", required_argument, NULL, 'T'},
        {"seed", required_argument, NULL, 's'},     {"kernel", required_argument, NULL, 'k'},
        {"workers", required_argument, NULL, 'w'},  {"timeout", required_argument, NULL, 't'},
        {"plugin", required_argument, NULL, 'p'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct gg_selftest_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct plugin_list pl = {.n = 0};
    plugin_lead(&pl, lead, n_lead);
    int ch, rc;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'k': cfg.kernel = optarg; break;
        case 'T':
            if (campaign_number("--max-total-time-per-mutant", optarg, 0, &cfg.per_mutant_s) != 0)
                return EXIT_USAGE;
            break;
        case 't':
        case 'w':
        case 's':
            if (worker_option(ch, optarg, &cfg.timeout_s, &cfg.workers, &cfg.seed) != 0)
                return EXIT_USAGE;
            break;
        case 'p':
            if ((rc = plugin_add(&pl, optarg)) != 0)
                return rc;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ggfuzz: selftest takes no arguments ('%s')\n", argv[optind]);
        return EXIT_USAGE;
    }
    cfg.plugins = pl.paths;
    cfg.n_plugins = pl.n;
    cfg.out = stdout;
    cfg.stop_flag = &stop_requested;
    catch_stop_signals();
    struct gg_selftest_result res;
    char err[2048];
    if (gg_selftest_run(&cfg, &res, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz: %s\n", err);
        return EXIT_HARNESS;
    }
    return res.found == res.mutants && res.clean == res.kernels && !res.stopped ? 0 : 1;
}

/* `ggfuzz worker` (not in --help): started by a campaign, answers case requests on its standard
   input and output. What a kernel prints to stdout goes to stderr instead. */
static int cmd_worker(void)
{
    int out = dup(STDOUT_FILENO);
    if (out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "ggfuzz worker: %s\n", strerror(errno));
        return EXIT_HARNESS;
    }
    char err[1024];
    if (gg_worker_main(STDIN_FILENO, out, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz worker: %s\n", err);
        return EXIT_HARNESS;
    }
    return 0;
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
    if (!strcmp(cmd, "minimize"))
        return load_plugins(lead, n_lead) != 0 ? EXIT_HARNESS : cmd_minimize(argc - 1, argv + 1);
    if (!strcmp(cmd, "fuzz") || !strcmp(cmd, "selftest") || !strcmp(cmd, "worker")) {
        if (load_plugins(lead, n_lead) != 0)
            return EXIT_HARNESS;
        if (!strcmp(cmd, "worker"))
            return cmd_worker();
        return !strcmp(cmd, "fuzz") ? cmd_fuzz(argc - 1, argv + 1, lead, n_lead)
                                    : cmd_selftest(argc - 1, argv + 1, lead, n_lead);
    }
    struct cli cli;
    memset(&cli, 0, sizeof cli);
    if (is_run) {
        cli.replay = strcmp(cmd, "run") != 0;
        return cmd_run(&cli, argc - 1, argv + 1);
    }
    fprintf(stderr, "ggfuzz: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}

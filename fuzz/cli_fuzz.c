/*
 * cli_fuzz.c — `ggfuzz fuzz`, `selftest` and `worker`: parse the campaign options, forward the
 * plugins to the workers, end a campaign cleanly on SIGINT, SIGTERM or SIGUSR1, and map its
 * outcome to the exit code. `worker` is what a campaign starts; it is not in --help.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/cli_int.h"
#include "fuzz/gg_fuzz.h"

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

/* The options fuzz and selftest share: --timeout (t), --workers (w), --seed (s). */
static int worker_option(int ch, const char *arg, double *timeout_s, int *workers, uint64_t *seed)
{
    double v;
    if (ch == 't')
        return gg_cli_number("--timeout", arg, 0, timeout_s);
    if (ch == 's')
        return gg_cli_seed(arg, seed);
    if (gg_cli_number("--workers", arg, 1, &v) != 0 || v > 256)
        return -1;
    *workers = (int)v;
    return 0;
}

static const char *join_args(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
    return buf;
}

int gg_cli_fuzz(int argc, char **argv, char **lead, int n_lead)
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
    struct gg_cli_plugins pl = {.n = 0};
    gg_cli_plugin_lead(&pl, lead, n_lead);
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
                return GG_EXIT_USAGE;
            }
            break;
        case 'g':
            if (strcmp(optarg, "targeted") && strcmp(optarg, "uniform")) {
                fprintf(stderr, "ggfuzz: --strategy: targeted or uniform, not '%s'\n", optarg);
                return GG_EXIT_USAGE;
            }
            cfg.strategy = strcmp(optarg, "uniform") ? GG_STRATEGY_TARGETED : GG_STRATEGY_UNIFORM;
            break;
        case 'T':
            if (gg_cli_number("--max-total-time", optarg, 0, &cfg.max_total_time_s) != 0)
                return GG_EXIT_USAGE;
            break;
        case 'r':
            if (gg_cli_number("--runs", optarg, 1, &v) != 0)
                return GG_EXIT_USAGE;
            cfg.max_runs = (int64_t)v;
            break;
        case 't':
        case 'w':
        case 's':
            if (worker_option(ch, optarg, &cfg.timeout_s, &cfg.workers, &cfg.seed) != 0)
                return GG_EXIT_USAGE;
            break;
        case 'M':
            if (gg_cli_size("--max-mem", optarg, &cfg.run.max_mem_bytes) != 0)
                return GG_EXIT_USAGE;
            break;
        default:
            if ((rc = gg_cli_common_option(ch, optarg, &pl)) >= 0)
                return rc;
            break;
        }
    }
    if (!cfg.kernel) {
        fprintf(stderr, "ggfuzz: fuzz needs --kernel NAME (ggfuzz list shows the kernels)\n");
        return GG_EXIT_USAGE;
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
        return GG_EXIT_HARNESS;
    }
    return st.worst_new != GG_CLASS_PASS ? gg_class_exit_code(st.worst_new) : 0;
}

int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead)
{
    static const struct option longopts[] = {
        {"max-total-time-per-mutant", required_argument, NULL, 'T'},
        {"runs-per-mutant", required_argument, NULL, 'r'},
        {"minimize-time", required_argument, NULL, 'z'},
        {"seed", required_argument, NULL, 's'},     {"kernel", required_argument, NULL, 'k'},
        {"workers", required_argument, NULL, 'w'},  {"timeout", required_argument, NULL, 't'},
        {"plugin", required_argument, NULL, 'p'},   {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct gg_selftest_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct gg_cli_plugins pl = {.n = 0};
    gg_cli_plugin_lead(&pl, lead, n_lead);
    double v;
    int ch, rc;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'k': cfg.kernel = optarg; break;
        case 'T':
            if (gg_cli_number("--max-total-time-per-mutant", optarg, 0, &cfg.per_mutant_s) != 0)
                return GG_EXIT_USAGE;
            break;
        case 'r':
            if (gg_cli_number("--runs-per-mutant", optarg, 1, &v) != 0)
                return GG_EXIT_USAGE;
            cfg.runs_per_mutant = (int64_t)v;
            break;
        case 'z':
            if (gg_cli_number("--minimize-time", optarg, 0, &cfg.minimize_s) != 0)
                return GG_EXIT_USAGE;
            break;
        case 't':
        case 'w':
        case 's':
            if (worker_option(ch, optarg, &cfg.timeout_s, &cfg.workers, &cfg.seed) != 0)
                return GG_EXIT_USAGE;
            break;
        default:
            if ((rc = gg_cli_common_option(ch, optarg, &pl)) >= 0)
                return rc;
            break;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ggfuzz: selftest takes no arguments ('%s')\n", argv[optind]);
        return GG_EXIT_USAGE;
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
        return GG_EXIT_HARNESS;
    }
    return res.found == res.mutants && res.clean == res.kernels && !res.stopped ? 0 : 1;
}

/* `ggfuzz worker` (not in --help): started by a campaign, answers case requests on its standard
   input and output. What a kernel prints to stdout goes to stderr instead. */
int gg_cli_worker(void)
{
    int out = dup(STDOUT_FILENO);
    if (out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "ggfuzz worker: %s\n", strerror(errno));
        return GG_EXIT_HARNESS;
    }
    char err[1024];
    if (gg_worker_main(STDIN_FILENO, out, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz worker: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    return 0;
}


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

#include "fuzz/cli/cli_int.h"
#include "fuzz/campaign/gg_campaign.h"

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

/* The options fuzz and selftest share, closing both option tables. */
#define CAMPAIGN_LONGOPTS                                                                  \
    {"kernel", required_argument, NULL, 'k'},  {"seed", required_argument, NULL, 's'},     \
    {"workers", required_argument, NULL, 'w'}, {"timeout", required_argument, NULL, 't'},  \
    {"plugin", required_argument, NULL, 'p'},  {"help", no_argument, NULL, 'h'},           \
    {NULL, 0, NULL, 0}

/* What an option handler returns besides an exit code (>= 0: the command returns it now). */
enum { OPT_TAKEN = -1, OPT_OTHER = -2 };

/* Where the shared options go: fields of the command's configuration, and the plugins. */
struct campaign_opts {
    const char **kernel;
    double *timeout_s;
    int *workers;
    uint64_t *seed;
    struct gg_cli_plugins pl;
};

/* The options of CAMPAIGN_LONGOPTS (an unknown one is a usage error). */
static int campaign_option(int ch, const char *arg, struct campaign_opts *co)
{
    double v;
    switch (ch) {
    case 'k': *co->kernel = arg; return OPT_TAKEN;
    case 't': return gg_cli_number("--timeout", arg, 0, co->timeout_s) ? GG_EXIT_USAGE : OPT_TAKEN;
    case 's': return gg_cli_seed(arg, co->seed) ? GG_EXIT_USAGE : OPT_TAKEN;
    case 'w':
        if (gg_cli_number("--workers", arg, 1, &v) != 0 || v > 256)
            return GG_EXIT_USAGE;
        *co->workers = (int)v;
        return OPT_TAKEN;
    default: return gg_cli_common_option(ch, arg, &co->pl);
    }
}

/* Parses the options of fuzz or selftest: own() takes the command's own ones (OPT_OTHER for the
   rest), campaign_option() the shared ones; the leading --plugin pairs join co's plugins.
   Returns OPT_TAKEN when all were taken (optind: the first argument), else the exit code. */
static int parse_options(int argc, char **argv, const struct option *longopts,
                         int (*own)(int ch, const char *arg, void *cfg), void *cfg,
                         struct campaign_opts *co, char **lead, int n_lead)
{
    gg_cli_plugin_lead(&co->pl, lead, n_lead);
    int ch, rc = OPT_TAKEN;
    optind = 1;
    while (rc == OPT_TAKEN && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
        if ((rc = own(ch, optarg, cfg)) == OPT_OTHER)
            rc = campaign_option(ch, optarg, co);
    return rc;
}

static const char *join_args(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
    return buf;
}

static int fuzz_option(int ch, const char *arg, void *p)
{
    struct gg_campaign_config *cfg = p;
    double v;
    switch (ch) {
    case 'm': cfg->mutant = arg; break;
    case 'a': cfg->artifacts_dir = arg; break;
    case 'S': cfg->stats_dir = arg; break;
    case 'K': cfg->known_path = arg; break;
    case 'F': cfg->stop_file = arg; break;
    case 'N': cfg->no_minimize = 1; break;
    case 'f':
        if (!(cfg->faults = gg_faults_parse(arg))) {
            fprintf(stderr, "ggfuzz: --faults: expected a list of snr,i64,zero,alias or all: "
                    "'%s'\n", arg);
            return GG_EXIT_USAGE;
        }
        break;
    case 'g':
        if (strcmp(arg, "targeted") && strcmp(arg, "uniform")) {
            fprintf(stderr, "ggfuzz: --strategy: targeted or uniform, not '%s'\n", arg);
            return GG_EXIT_USAGE;
        }
        cfg->strategy = strcmp(arg, "uniform") ? GG_STRATEGY_TARGETED : GG_STRATEGY_UNIFORM;
        break;
    case 'T':
        return gg_cli_number("--max-total-time", arg, 0, &cfg->max_total_time_s) ? GG_EXIT_USAGE
                                                                                 : OPT_TAKEN;
    case 'r':
        if (gg_cli_number("--runs", arg, 1, &v) != 0)
            return GG_EXIT_USAGE;
        cfg->max_runs = (int64_t)v;
        break;
    case 'M':
        return gg_cli_size("--max-mem", arg, &cfg->run.max_mem_bytes) ? GG_EXIT_USAGE : OPT_TAKEN;
    default: return OPT_OTHER;
    }
    return OPT_TAKEN;
}

int gg_cli_fuzz(int argc, char **argv, char **lead, int n_lead)
{
    static const struct option longopts[] = {
        {"mutant", required_argument, NULL, 'm'},   {"faults", required_argument, NULL, 'f'},
        {"max-total-time", required_argument, NULL, 'T'}, {"runs", required_argument, NULL, 'r'},
        {"artifacts", required_argument, NULL, 'a'}, {"stats-dir", required_argument, NULL, 'S'},
        {"strategy", required_argument, NULL, 'g'}, {"known", required_argument, NULL, 'K'},
        {"stop-file", required_argument, NULL, 'F'}, {"no-minimize", no_argument, NULL, 'N'},
        {"max-mem", required_argument, NULL, 'M'},  CAMPAIGN_LONGOPTS};
    struct gg_campaign_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct campaign_opts co = {&cfg.kernel, &cfg.timeout_s, &cfg.workers, &cfg.seed, {.n = 0}};
    int rc = parse_options(argc, argv, longopts, fuzz_option, &cfg, &co, lead, n_lead);
    if (rc != OPT_TAKEN)
        return rc;
    if (!cfg.kernel) {
        fprintf(stderr, "ggfuzz: fuzz needs --kernel NAME (ggfuzz list shows the kernels)\n");
        return GG_EXIT_USAGE;
    }
    if ((rc = gg_cli_kernel_refused(cfg.kernel)) != 0)
        return rc;
    char cmdline[2048], err[2048];
    cfg.corpus_dirs = (const char *const *)argv + optind;
    cfg.n_corpus_dirs = argc - optind;
    cfg.plugins = co.pl.paths;
    cfg.n_plugins = co.pl.n;
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

static int selftest_option(int ch, const char *arg, void *p)
{
    struct gg_selftest_config *cfg = p;
    double v;
    switch (ch) {
    case 'T':
        return gg_cli_number("--max-total-time-per-mutant", arg, 0, &cfg->per_mutant_s)
                   ? GG_EXIT_USAGE : OPT_TAKEN;
    case 'r':
        if (gg_cli_number("--runs-per-mutant", arg, 1, &v) != 0)
            return GG_EXIT_USAGE;
        cfg->runs_per_mutant = (int64_t)v;
        return OPT_TAKEN;
    case 'z':
        return gg_cli_number("--minimize-time", arg, 0, &cfg->minimize_s) ? GG_EXIT_USAGE
                                                                          : OPT_TAKEN;
    default: return OPT_OTHER;
    }
}

int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead)
{
    static const struct option longopts[] = {
        {"max-total-time-per-mutant", required_argument, NULL, 'T'},
        {"runs-per-mutant", required_argument, NULL, 'r'},
        {"minimize-time", required_argument, NULL, 'z'}, CAMPAIGN_LONGOPTS};
    struct gg_selftest_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct campaign_opts co = {&cfg.kernel, &cfg.timeout_s, &cfg.workers, &cfg.seed, {.n = 0}};
    int rc = parse_options(argc, argv, longopts, selftest_option, &cfg, &co, lead, n_lead);
    if (rc != OPT_TAKEN)
        return rc;
    if (optind < argc) {
        fprintf(stderr, "ggfuzz: selftest takes no arguments ('%s')\n", argv[optind]);
        return GG_EXIT_USAGE;
    }
    cfg.plugins = co.pl.paths;
    cfg.n_plugins = co.pl.n;
    cfg.out = stdout;
    cfg.stop_flag = &stop_requested;
    catch_stop_signals();
    struct gg_selftest_result res;
    char err[2048];
    enum gg_status st = gg_selftest_run(&cfg, &res, err, sizeof err);
    if (st != GG_OK) {
        fprintf(stderr, "ggfuzz: %s\n", err);
        return st == GG_E_UNSUPPORTED ? GG_EXIT_REFUSED : GG_EXIT_HARNESS;
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


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

/* The ids of both tables: the options fuzz and selftest share, then each one's own. */
enum { C_KERNEL, C_SEED, C_WORKERS, C_GPUS, C_TIMEOUT,
       F_MUTANT, F_FAULTS, F_STRATEGY, F_MAX_TOTAL_TIME, F_RUNS, F_ARTIFACTS, F_STATS_DIR, F_KNOWN,
       F_STOP_FILE, F_NO_MINIMIZE, F_MAX_MEM, F_REFERENCE, F_SHARD, F_CAMPAIGN, F_SYNC_INTERVAL,
       F_STATS_INTERVAL, F_STATUS_INTERVAL, S_PER_MUTANT, S_RUNS_PER_MUTANT, S_MINIMIZE_TIME };

static const struct gg_cli_flag fuzz_flags[] = {
    {"kernel", 0, "NAME", C_KERNEL, "the kernel under test"},
    {"mutant", 0, "NAME", F_MUTANT,
     "run the kernel with this mutant, or with a comma-separated list of them: every fault at "
     "once"},
    {"faults", 0, "LIST", F_FAULTS,
     "fault classes to aim at: snr,i64,zero,alias or all (default all)"},
    {"strategy", 0, "S", F_STRATEGY, "targeted (default) or uniform (the untargeted baseline)"},
    {"max-total-time", 0, "S", F_MAX_TOTAL_TIME, "stop after S seconds (default: no limit)"},
    {"runs", 0, "N", F_RUNS, "stop after N cases (default: no limit)"},
    {"seed", 0, "N", C_SEED, "campaign seed (0 or absent: chosen and printed)"},
    {"workers", 0, "N", C_WORKERS,
     "worker processes (default: one per CPU for CPU kernels, else one per GPU of --gpus, else "
     "one)"},
    {"gpus", 0, "all|auto|LIST", C_GPUS,
     "spread the workers over these GPUs (all or auto: every visible one; LIST: ordinals such as "
     "0,1 or 0-7), each worker bound to one for its life: it sees that GPU alone (through "
     "CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES) and GGFUZZ_DEVICE names it; fuzzer_stats "
     "counts cases and findings per GPU (default: one GPU, the first visible)"},
    {"timeout", 0, "S", C_TIMEOUT,
     "a case past S seconds (default 10) is re-run once with 4x, then kept as a timeout finding; "
     "a case whose worker dies is re-run and kept as a crash finding when it dies again on that "
     "signal (a worker killed by SIGKILL from outside is never a finding)"},
    {"artifacts", 0, "DIR", F_ARTIFACTS, "findings store (default ggfuzz-out/artifacts)"},
    {"stats-dir", 0, "DIR", F_STATS_DIR,
     "fuzzer_stats, plot_data, cur_input.* (default: the parent of the artifacts directory)"},
    {"known", 0, "FILE|DIR", F_KNOWN,
     "signatures and buckets (bucket-<id>) that do not count as new, one per line, or the "
     "findings directory of an earlier campaign (or its campaign directory: its artifacts/ and "
     "shard-*/artifacts); a missing path is refused"},
    {"stop-file", 0, "FILE", F_STOP_FILE,
     "end the campaign cleanly once FILE exists (also SIGINT, SIGTERM)"},
    {"no-minimize", 0, NULL, F_NO_MINIMIZE,
     "do not minimise new signatures (default: up to 30 s each)"},
    {"max-mem", 0, "SIZE", F_MAX_MEM, "as for run"},
    {"reference", 0, "WHERE", F_REFERENCE, GG_CLI_REFERENCE_HELP},
    {"shard", 0, "I/N", F_SHARD,
     "run as shard I of N (0 <= I < N) of a campaign spread over processes or nodes (default: "
     "the shard Slurm's SLURM_ARRAY_TASK_ID/_COUNT and SLURM_PROCID/SLURM_NTASKS name, if any)"},
    {"campaign", 0, "DIR", F_CAMPAIGN,
     "the directory the shards share (default ggfuzz-out when sharded): each works in "
     "DIR/shard-I/{corpus,artifacts,fuzzer_stats,plot_data}, takes the cases the others keep "
     "into its corpus, goes on where shard I stopped, and the last to end merges every "
     "shard's findings into DIR/artifacts; CORPUS_DIRs are then seeds only"},
    {"sync-interval", 0, "S", F_SYNC_INTERVAL,
     "a shard takes the other shards' new cases every S seconds (default 30)"},
    {"stats-interval", 0, "S", F_STATS_INTERVAL,
     "rewrite fuzzer_stats and add a plot_data row every S seconds (default 1)"},
    {"status-interval", 0, "S", F_STATUS_INTERVAL,
     "without a terminal, a status line (#cases, cases/s, corpus, features, faults, signatures) "
     "at least every S seconds (default 60), besides those at doubling case counts"},
    {"plugin", 0, "PATH", GG_CLI_PLUGIN, "as for run"},
    {0}};
const struct gg_cli_command gg_cli_fuzz_command = {
    "fuzz", "fuzz [options] [CORPUS_DIR...]",
    "libFuzzer conventions: the first CORPUS_DIR receives new cases. Exit 0 when there is no new "
    "finding, else the code of the most severe new finding; 3 harness error",
    fuzz_flags};

static const struct gg_cli_flag selftest_flags[] = {
    {"max-total-time-per-mutant", 0, "S", S_PER_MUTANT, "budget of each campaign (default 20)"},
    {"runs-per-mutant", 0, "N", S_RUNS_PER_MUTANT,
     "also end each campaign after N cases (with --workers 1 and a --seed, the same cases on "
     "every machine)"},
    {"minimize-time", 0, "S", S_MINIMIZE_TIME, "budget to minimise each finding (default 30)"},
    {"kernel", 0, "NAME", C_KERNEL, "only this kernel"},
    {"seed", 0, "N", C_SEED, "as for fuzz"},
    {"workers", 0, "N", C_WORKERS, "as for fuzz"},
    {"gpus", 0, "all|auto|LIST", C_GPUS, "as for fuzz"},
    {"timeout", 0, "S", C_TIMEOUT, "as for fuzz"},
    {"plugin", 0, "PATH", GG_CLI_PLUGIN, "as for run"},
    {0}};
const struct gg_cli_command gg_cli_selftest_command = {
    "selftest", "selftest [options]",
    "exit 0 when every mutant is found and every kernel is clean, else 1; kernels that cannot "
    "run here, GPU kernels without their device, are skipped",
    selftest_flags};

/* Where the options go: the command's own ones to own(), the shared ones to fields of the
   command's configuration, and the plugins. */
struct campaign_opts {
    int (*own)(int id, const char *arg, void *cfg); /* GG_CLI_OTHER: not the command's own */
    void *cfg;
    const char **kernel;
    double *timeout_s;
    int *workers;
    uint64_t *seed;
    struct gg_cli_plugins pl;
    struct gg_gpus gpus;
};

/* The apply function of fuzz and selftest: the command's own options, then the shared ones. */
static int campaign_option(int id, const char *arg, void *p)
{
    struct campaign_opts *co = p;
    double v;
    int rc = co->own(id, arg, co->cfg);
    if (rc != GG_CLI_OTHER)
        return rc;
    switch (id) {
    case C_KERNEL: *co->kernel = arg; return GG_CLI_TAKEN;
    case C_TIMEOUT:
        return gg_cli_number("--timeout", arg, 0, co->timeout_s) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case C_SEED: return gg_cli_seed(arg, co->seed) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case C_WORKERS:
        if (gg_cli_number("--workers", arg, 1, &v) != 0 || v > 256)
            return GG_EXIT_USAGE;
        *co->workers = (int)v;
        return GG_CLI_TAKEN;
    case C_GPUS: {
        int got = gg_cli_gpus(arg, &co->gpus);
        return got ? got : GG_CLI_TAKEN;
    }
    default: return GG_CLI_OTHER;
    }
}

/* Parses the options of fuzz or selftest into co; the leading --plugin pairs join co's plugins.
   Returns GG_CLI_TAKEN when all were taken (optind: the first argument), else the exit code. */
static int parse_options(const struct gg_cli_command *cmd, int argc, char **argv,
                         struct campaign_opts *co, char **lead, int n_lead)
{
    gg_cli_plugin_lead(&co->pl, lead, n_lead);
    return gg_cli_parse(cmd, argc, argv, campaign_option, co, &co->pl);
}

/* The command that runs this campaign again from a fresh shell: into its directory, then this
   ggfuzz with its plugins and the command's words argv[0..argc). */
static const char *campaign_command(int argc, char **argv, char *buf, size_t len)
{
    char cwd[4096], invocation[6144];
    buf[0] = '\0';
    if (getcwd(cwd, sizeof cwd) != NULL && gg_shell_word(buf, len, "cd") == 0)
        gg_shell_word(buf, len, cwd);
    gg_cli_invocation(invocation, sizeof invocation);
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, "%s%s", at ? " && " : "", invocation);
    for (int i = 0; i < argc; i++)
        gg_shell_word(buf, len, argv[i]);
    return buf;
}

static int fuzz_option(int id, const char *arg, void *p)
{
    struct gg_campaign_config *cfg = p;
    double v;
    switch (id) {
    case F_MUTANT: cfg->mutant = arg; break;
    case F_ARTIFACTS: cfg->artifacts_dir = arg; break;
    case F_STATS_DIR: cfg->stats_dir = arg; break;
    case F_KNOWN: cfg->known_path = arg; break;
    case F_STOP_FILE: cfg->stop_file = arg; break;
    case F_NO_MINIMIZE: cfg->no_minimize = 1; break;
    case F_FAULTS:
        if (!(cfg->faults = gg_faults_parse(arg))) {
            fprintf(stderr, "ggfuzz: --faults: expected a list of snr,i64,zero,alias or all: "
                    "'%s'\n", arg);
            return GG_EXIT_USAGE;
        }
        break;
    case F_STRATEGY:
        if (strcmp(arg, "targeted") && strcmp(arg, "uniform")) {
            fprintf(stderr, "ggfuzz: --strategy: targeted or uniform, not '%s'\n", arg);
            return GG_EXIT_USAGE;
        }
        cfg->strategy = strcmp(arg, "uniform") ? GG_STRATEGY_TARGETED : GG_STRATEGY_UNIFORM;
        break;
    case F_MAX_TOTAL_TIME:
        return gg_cli_number("--max-total-time", arg, 0, &cfg->max_total_time_s) ? GG_EXIT_USAGE
                                                                                 : GG_CLI_TAKEN;
    case F_RUNS:
        if (gg_cli_number("--runs", arg, 1, &v) != 0)
            return GG_EXIT_USAGE;
        cfg->max_runs = (int64_t)v;
        break;
    case F_REFERENCE:
        return gg_cli_reference(arg, &cfg->run.reference) ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case F_MAX_MEM:
        return gg_cli_size("--max-mem", arg, &cfg->run.max_mem_bytes) ? GG_EXIT_USAGE
                                                                      : GG_CLI_TAKEN;
    case F_SHARD:
        return gg_cli_shard("--shard", arg, &cfg->shard_index, &cfg->shard_count)
                   ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case F_CAMPAIGN: cfg->campaign_dir = arg; break;
    case F_SYNC_INTERVAL:
        return gg_cli_period("--sync-interval", arg, &cfg->sync_interval_s) ? GG_EXIT_USAGE
                                                                       : GG_CLI_TAKEN;
    case F_STATS_INTERVAL:
        return gg_cli_period("--stats-interval", arg, &cfg->stats_interval_s) ? GG_EXIT_USAGE
                                                                        : GG_CLI_TAKEN;
    case F_STATUS_INTERVAL:
        return gg_cli_period("--status-interval", arg, &cfg->status_interval_s) ? GG_EXIT_USAGE
                                                                         : GG_CLI_TAKEN;
    default: return GG_CLI_OTHER;
    }
    return GG_CLI_TAKEN;
}

/* Which shard the campaign is (an explicit --shard, else Slurm's environment) and where its
   campaign directory is; 0, or the exit code after a message. */
static int shard_of(struct gg_campaign_config *cfg)
{
    char how[256] = "--shard";
    if (cfg->shard_count == 0) {
        int got = gg_cli_shard_env(&cfg->shard_index, &cfg->shard_count, how, sizeof how);
        if (got < 0) {
            fprintf(stderr, "ggfuzz: cannot tell which shard this is: %s (give --shard I/N)\n",
                    how);
            return GG_EXIT_USAGE;
        }
    }
    if (cfg->shard_count == 0 && cfg->campaign_dir == NULL)
        return 0;
    if (cfg->artifacts_dir || cfg->stats_dir) {
        fprintf(stderr, "ggfuzz: a shard works in CAMPAIGN/shard-I/ (--campaign): --artifacts "
                "and --stats-dir do not go with %s\n",
                cfg->shard_count ? "a shard" : "--campaign");
        return GG_EXIT_USAGE;
    }
    if (cfg->campaign_dir == NULL)
        cfg->campaign_dir = "ggfuzz-out";
    if (cfg->shard_count == 0)
        cfg->shard_count = 1;
    fprintf(stderr, "INFO: shard %d/%d (%s) of campaign %s\n", cfg->shard_index,
            cfg->shard_count, how, cfg->campaign_dir);
    return 0;
}

int gg_cli_fuzz(int argc, char **argv, char **lead, int n_lead)
{
    struct gg_campaign_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct campaign_opts co = {fuzz_option, &cfg, &cfg.kernel, &cfg.timeout_s, &cfg.workers,
                               &cfg.seed, {.n = 0}, {.n = 0}};
    int rc = parse_options(&gg_cli_fuzz_command, argc, argv, &co, lead, n_lead);
    if (rc != GG_CLI_TAKEN)
        return rc;
    if (!cfg.kernel) {
        fprintf(stderr, "ggfuzz: fuzz needs --kernel NAME (ggfuzz list shows the kernels)\n");
        return GG_EXIT_USAGE;
    }
    if ((rc = gg_cli_kernel_refused(cfg.kernel)) != 0)
        return rc;
    if ((rc = shard_of(&cfg)) != 0)
        return rc;
    char cmdline[16384], replay[8192], err[2048];
    cfg.corpus_dirs = (const char *const *)argv + optind;
    cfg.n_corpus_dirs = argc - optind;
    cfg.plugins = co.pl.paths;
    cfg.n_plugins = co.pl.n;
    cfg.gpus = &co.gpus;
    cfg.worker_cmd = gg_cli_self(&cfg.n_worker_cmd);
    cfg.log = stderr;
    cfg.status_line = -1;
    cfg.command_line = campaign_command(argc, argv, cmdline, sizeof cmdline);
    gg_cli_replay_command(replay, sizeof replay, cfg.run.reference);
    cfg.replay_command = replay;
    cfg.stop_flag = &stop_requested;
    catch_stop_signals();
    struct gg_campaign_stats st;
    if (gg_campaign_run(&cfg, &st, err, sizeof err) != GG_OK || st.stop == GG_STOP_ERROR) {
        fprintf(stderr, "ggfuzz: %s\n", err[0] ? err : "the campaign failed");
        return GG_EXIT_HARNESS;
    }
    if (st.worst_new != GG_CLASS_PASS)
        return gg_class_exit_code(st.worst_new);
    char why[160];
    return gg_campaign_unverified(&st, why, sizeof why) ? GG_EXIT_HARNESS : 0;
}

static int selftest_option(int id, const char *arg, void *p)
{
    struct gg_selftest_config *cfg = p;
    double v;
    switch (id) {
    case S_PER_MUTANT:
        return gg_cli_number("--max-total-time-per-mutant", arg, 0, &cfg->per_mutant_s)
                   ? GG_EXIT_USAGE : GG_CLI_TAKEN;
    case S_RUNS_PER_MUTANT:
        if (gg_cli_number("--runs-per-mutant", arg, 1, &v) != 0)
            return GG_EXIT_USAGE;
        cfg->runs_per_mutant = (int64_t)v;
        return GG_CLI_TAKEN;
    case S_MINIMIZE_TIME:
        return gg_cli_number("--minimize-time", arg, 0, &cfg->minimize_s) ? GG_EXIT_USAGE
                                                                          : GG_CLI_TAKEN;
    default: return GG_CLI_OTHER;
    }
}

int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead)
{
    struct gg_selftest_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct campaign_opts co = {selftest_option, &cfg, &cfg.kernel, &cfg.timeout_s, &cfg.workers,
                               &cfg.seed, {.n = 0}, {.n = 0}};
    int rc = parse_options(&gg_cli_selftest_command, argc, argv, &co, lead, n_lead);
    if (rc != GG_CLI_TAKEN)
        return rc;
    if (optind < argc) {
        fprintf(stderr, "ggfuzz: selftest takes no arguments ('%s')\n", argv[optind]);
        return GG_EXIT_USAGE;
    }
    cfg.plugins = co.pl.paths;
    cfg.n_plugins = co.pl.n;
    cfg.gpus = &co.gpus;
    cfg.worker_cmd = gg_cli_self(&cfg.n_worker_cmd);
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


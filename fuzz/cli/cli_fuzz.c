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

/* What the options of fuzz set: the campaign's configuration, and what it points to. */
struct fuzz_args {
    struct gg_campaign_config cfg;
    struct gg_cli_plugins pl;
    struct gg_gpus gpus;
    struct gg_cli_shard shard;
};

/* What the options of selftest set. */
struct selftest_args {
    struct gg_selftest_config cfg;
    struct gg_cli_plugins pl;
    struct gg_gpus gpus;
};

/* The help of what fuzz and selftest share. */
#define CAMPAIGN_TIMEOUT_TAIL                                                                   \
    "one past it is re-run once with 4x the limit in a fresh worker, then kept as a timeout "   \
    "finding; a case whose worker dies is re-run and kept as a crash finding when it dies "     \
    "again on that signal (a worker killed by SIGKILL from outside is never a finding)"
#define CAMPAIGN_GPUS_HEAD "spread the workers over"
#define CAMPAIGN_GPUS_TAIL                                                                      \
    ", each worker bound to one for its life: it sees that GPU alone (through "                 \
    "CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES) and GGFUZZ_DEVICE names it; fuzzer_stats "    \
    "counts cases and findings per GPU"
#define CAMPAIGN_WORKERS_MAX 256
#define CAMPAIGN_WORKERS_DEFAULT                                                                \
    "one per CPU for CPU kernels; for GPU kernels " GG_CLI_STR(GG_CAMPAIGN_WORKERS_PER_GPU)    \
    " per GPU of --gpus (of one GPU without), at most one per CPU"
/* The rows fuzz and selftest share, for an option struct type with cfg and gpus. */
#define CAMPAIGN_FLAGS(type)                                                                    \
    GG_CLI_SEED_FLAG(type, cfg.seed),                                                           \
    GG_CLI_WORKERS_FLAG(type, cfg.workers, CAMPAIGN_WORKERS_MAX, CAMPAIGN_WORKERS_DEFAULT, ""), \
    GG_CLI_GPUS_FLAG(type, gpus, CAMPAIGN_GPUS_HEAD, CAMPAIGN_GPUS_TAIL),                       \
    GG_CLI_TIMEOUT_FLAG(type, cfg.timeout_s, GG_CAMPAIGN_DEFAULT_TIMEOUT_S, CAMPAIGN_TIMEOUT_TAIL)

/* --faults LIST into a mask of enum gg_faults. */
static int apply_faults(const char *arg, void *field, char *why, size_t why_len)
{
    if (!(*(unsigned *)field = gg_faults_parse(arg))) {
        snprintf(why, why_len, "expected a list of snr,i64,zero,alias or all: '%s'", arg);
        return GG_EXIT_USAGE;
    }
    return 0;
}

static const struct gg_cli_word strategy_words[] = {
    {"targeted", GG_STRATEGY_TARGETED}, {"uniform", GG_STRATEGY_UNIFORM}, {NULL, 0}};

#define F(field) GG_CLI_AT(struct fuzz_args, field)
static const struct gg_cli_flag fuzz_flags[] = {
    {"kernel", 0, GG_CLI_STRING, "NAME", F(cfg.kernel), .help = "the kernel under test"},
    {"mutant", 0, GG_CLI_STRING, "NAME", F(cfg.mutant),
     .help = "run the kernel with this mutant, or with a comma-separated list of them: every "
             "fault at once"},
    {"faults", 0, GG_CLI_STRING, "LIST", F(cfg.faults), .apply = apply_faults,
     GG_CLI_DEFAULT_TEXT("all"), .help = "fault classes to aim at: snr,i64,zero,alias or all"},
    {"strategy", 0, GG_CLI_WORD, "S", F(cfg.strategy), .words = strategy_words,
     GG_CLI_DEFAULT_STR("targeted"), .help = "targeted, or uniform: the untargeted baseline"},
    GG_CLI_MAX_TOTAL_TIME_FLAG(struct fuzz_args, cfg.max_total_time_s, 0),
    {"runs", 0, GG_CLI_COUNT, "N", F(cfg.max_runs), GG_CLI_DEFAULT(0), .zero = "no limit",
     .help = "stop after N cases"},
    CAMPAIGN_FLAGS(struct fuzz_args),
    {"artifacts", 0, GG_CLI_STRING, "DIR", F(cfg.artifacts_dir),
     GG_CLI_DEFAULT_TEXT("ggfuzz-out/artifacts"), .help = "findings store"},
    {"stats-dir", 0, GG_CLI_STRING, "DIR", F(cfg.stats_dir),
     GG_CLI_DEFAULT_TEXT("the parent of the artifacts directory"),
     .help = "fuzzer_stats, plot_data, cur_input.*"},
    {"known", 0, GG_CLI_STRING, "FILE|DIR", F(cfg.known_path),
     .help = "signatures and buckets (bucket-<id>) that do not count as new, one per line, or "
             "the findings directory of an earlier campaign (or its campaign directory: its "
             "artifacts/ and shard-*/artifacts); a missing path is refused"},
    {"stop-file", 0, GG_CLI_STRING, "FILE", F(cfg.stop_file),
     .help = "end the campaign cleanly once FILE exists (also SIGINT, SIGTERM)"},
    {"no-minimize", 0, GG_CLI_SWITCH, NULL, F(cfg.no_minimize),
     .help = "do not minimise new signatures (else each gets up to " GG_CLI_STR(
         GG_CAMPAIGN_DEFAULT_MINIMIZE_S) " s)"},
    {"minimize-share", 0, GG_CLI_NUMBER, "F", F(cfg.minimize_share),
     GG_CLI_DEFAULT(GG_CAMPAIGN_DEFAULT_MINIMIZE_SHARE), .min = 0.01, .max = 1,
     .help =
         "the share minimisers take: for a GPU kernel, of each GPU's time (one "
         "minimiser at a time on a GPU, waiting after each run so that its runs take at most "
         "this share of the wall time while the workers fuzz); for a CPU kernel, of the workers "
         "while new signatures wait to be minimised (one at least; the workers give way); "
         "each minimiser runs its candidates in one worker process of its own on the device "
         "of the worker that found the signature"},
    GG_CLI_MAX_MEM_FLAG(struct fuzz_args, cfg.run.max_mem_bytes),
    GG_CLI_REFERENCE_FLAG(struct fuzz_args, cfg.run.reference),
    {"shard", 0, GG_CLI_STRING, "I/N", F(shard), .apply = gg_cli_apply_shard,
     GG_CLI_DEFAULT_TEXT("the shard Slurm's SLURM_ARRAY_TASK_ID/_COUNT and "
                         "SLURM_PROCID/SLURM_NTASKS name, if any"),
     .help = "run as shard I of N (0 <= I < N) of a campaign spread over processes or nodes"},
    {"campaign", 0, GG_CLI_STRING, "DIR", F(cfg.campaign_dir),
     GG_CLI_DEFAULT_TEXT("ggfuzz-out when sharded"),
     .help = "the directory the shards share: each works in "
             "DIR/shard-I/{corpus,artifacts,fuzzer_stats,plot_data}, takes the cases the others "
             "keep into its corpus, goes on where shard I stopped, and the last to end merges "
             "every shard's findings into DIR/artifacts; CORPUS_DIRs are then seeds only"},
    {"sync-interval", 0, GG_CLI_SECONDS, "S", F(cfg.sync_interval_s),
     GG_CLI_DEFAULT(GG_CAMPAIGN_DEFAULT_SYNC_S),
     .help = "a shard takes the other shards' new cases every S seconds"},
    {"stats-interval", 0, GG_CLI_SECONDS, "S", F(cfg.stats_interval_s),
     GG_CLI_DEFAULT(GG_CAMPAIGN_DEFAULT_STATS_S),
     .help = "rewrite fuzzer_stats and add a plot_data row every S seconds"},
    {"status-interval", 0, GG_CLI_SECONDS, "S", F(cfg.status_interval_s),
     GG_CLI_DEFAULT(GG_CAMPAIGN_DEFAULT_STATUS_S),
     .help = "without a terminal, a status line (#cases, cases/s, corpus, features, faults, "
             "signatures) at least every S seconds, besides those at doubling case counts"},
    GG_CLI_PLUGIN_FLAG(F(pl)),
    {0}};
#undef F
const struct gg_cli_command gg_cli_fuzz_command = {
    "fuzz", "fuzz [options] [CORPUS_DIR...]",
    "libFuzzer conventions: the first CORPUS_DIR receives new cases. Exit 0 when there is no new "
    "finding, else the code of the most severe new finding; 3 harness error",
    fuzz_flags};

#define S(field) GG_CLI_AT(struct selftest_args, field)
static const struct gg_cli_flag selftest_flags[] = {
    {"max-total-time-per-mutant", 0, GG_CLI_SECONDS, "S", S(cfg.per_mutant_s),
     GG_CLI_DEFAULT(GG_SELFTEST_DEFAULT_PER_MUTANT_S), .help = "budget of each campaign"},
    {"runs-per-mutant", 0, GG_CLI_COUNT, "N", S(cfg.runs_per_mutant), GG_CLI_DEFAULT(0),
     .zero = "no limit",
     .help = "also end each campaign after N cases (with --workers 1 and a --seed, the same "
             "cases on every machine)"},
    {"minimize-time", 0, GG_CLI_SECONDS, "S", S(cfg.minimize_s),
     GG_CLI_DEFAULT(GG_CAMPAIGN_DEFAULT_MINIMIZE_S), .help = "budget to minimise each finding"},
    {"kernel", 0, GG_CLI_STRING, "NAME", S(cfg.kernel), GG_CLI_DEFAULT_TEXT("every kernel"),
     .help = "only this kernel"},
    CAMPAIGN_FLAGS(struct selftest_args),
    GG_CLI_PLUGIN_FLAG(S(pl)),
    {0}};
#undef S
const struct gg_cli_command gg_cli_selftest_command = {
    "selftest", "selftest [options]",
    "exit 0 when every mutant is found and every kernel is clean, else 1; kernels that cannot "
    "run here, GPU kernels without their device, are skipped",
    selftest_flags};

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
    struct fuzz_args a;
    memset(&a, 0, sizeof a);
    struct gg_campaign_config cfg;
    gg_cli_plugin_lead(&a.pl, lead, n_lead);
    int rc = gg_cli_parse(&gg_cli_fuzz_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    cfg = a.cfg;
    cfg.shard_index = a.shard.index;
    cfg.shard_count = a.shard.count;
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
    cfg.plugins = a.pl.paths;
    cfg.n_plugins = a.pl.n;
    cfg.gpus = &a.gpus;
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

int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead)
{
    struct selftest_args a;
    memset(&a, 0, sizeof a);
    gg_cli_plugin_lead(&a.pl, lead, n_lead);
    int rc = gg_cli_parse(&gg_cli_selftest_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    struct gg_selftest_config cfg = a.cfg;
    if (optind < argc) {
        fprintf(stderr, "ggfuzz: selftest takes no arguments ('%s')\n", argv[optind]);
        return GG_EXIT_USAGE;
    }
    cfg.plugins = a.pl.paths;
    cfg.n_plugins = a.pl.n;
    cfg.gpus = &a.gpus;
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


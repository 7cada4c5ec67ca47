/*
 * gg_campaign.h — public header of fuzz/campaign/: a campaign (a supervisor, its workers and
 * minimisers over a corpus and a findings store), its statistics files and the self-test.
 */
#ifndef GG_CAMPAIGN_H
#define GG_CAMPAIGN_H

#include "fuzz/gen/gg_gen.h"
#include "fuzz/minimize/gg_minimize.h"

/* ------------------------------------------------------------------------------------------ */
/* Campaigns (gg_campaign*.c), statistics (gg_stats.c), self-test (gg_selftest.c)              */
/* ------------------------------------------------------------------------------------------ */

/* Why a campaign ended. */
enum gg_stop {
    GG_STOP_NONE = 0,
    GG_STOP_TIME,    /* the time budget was spent */
    GG_STOP_RUNS,    /* the number of runs was reached */
    GG_STOP_FILE,    /* the stop file appeared */
    GG_STOP_SIGNAL,  /* the stop flag was raised (SIGINT, SIGTERM) */
    GG_STOP_FINDING, /* stop_after_findings new signatures were found */
    GG_STOP_ERROR    /* the campaign could not go on (no case can be drawn, workers do not start) */
};
/* "time budget", "runs", "stop file", "signal", "finding", "error", "none". */
const char *gg_stop_name(enum gg_stop s);

/* What the workers bound to one device of a campaign spread over devices (--gpus) did. */
struct gg_gpu_stats {
    int ordinal;                /* as --gpus listed it */
    int workers;                /* workers bound to it */
    int retired;                /* its workers kept failing to start: it was given up */
    int64_t execs, faults;      /* cases run to an outcome, and runs with a fault verdict */
    int64_t new_sigs;           /* new signatures first met on it */
    int64_t restarts;           /* its workers started again */
};

/* Where the workers' time went, summed over the cases that ran to a verdict: each phase of a
   run (struct gg_run_result's phase), the kernel's own time (its two runs under the two
   workspace poisons, from the first run's time), the part of the reference computed on the
   device, and a case's time from its dispatch to its result (worker: the round trip and
   everything the worker did). */
struct gg_phase_sums {
    int64_t cases;
    double worker, setup, alloc, inputs, runs, kernel, reference, device_reference, compare,
        release;
};

/* What a campaign did. Times are seconds since its start. */
struct gg_campaign_stats {
    enum gg_stop stop;
    uint64_t seed;
    double seconds;
    int64_t execs;              /* cases run to an outcome (replays, crashes and timeouts too) */
    int64_t replayed;           /* stored failures replayed first */
    int64_t possibly_fixed;     /* ... of which now pass */
    int64_t mutated;            /* cases drawn by mutating a corpus case (the rest: generated) */
    int64_t corpus_count;       /* cases kept: loaded from the corpus directories and added */
    int64_t new_units;          /* cases this campaign added to the corpus */
    int64_t features;           /* distinct features seen */
    int64_t faults_total;       /* runs with a fault verdict */
    int64_t faults[GG_CLASS_COUNT]; /* ... by class (index GG_CLASS_PASS unused) */
    int64_t unique_sigs;        /* distinct signatures found */
    int64_t new_sigs;           /* ... of which not in the known-signatures file */
    int64_t stored_sigs;        /* ... of which new to the artifacts directory */
    int64_t minimized;          /* signatures minimised */
    int64_t confirmations;      /* faults run again in fresh processes before filing */
    double confirm_s, minimize_s; /* wall time of the confirmation and minimiser children,
                                   summed (they run beside the workers) */
    int64_t buckets;            /* distinct buckets (bugs) met: signatures filed in them */
    int64_t new_buckets;        /* ... of which not in the known file */
    int64_t untriaged;          /* distinct signatures met that are in no bucket yet */
    enum gg_class worst_new;    /* most severe class among the new signatures (PASS: none) */
    int64_t worker_restarts, timeouts, refused, errors;
    int64_t worker_kills;       /* workers killed from outside (SIGKILL the supervisor did not
                                   send: kill -9, the OOM killer): harness events, not findings */
    int64_t crashes_unconfirmed; /* cases whose worker died (or exited) and whose re-run in a
                                   fresh worker did not end the same way: not findings */
    int64_t faults_history;     /* signatures filed as history-dependent: their case gives the
                                   fault only after other cases in one process (@after) */
    int64_t faults_unconfirmed; /* faults a worker gave after other cases that a fresh process
                                   gave neither alone nor after them: not findings */
    double slowest_s;           /* slowest run to an outcome */
    double min_snr_margin_db;   /* smallest SNR margin of a passing run (+inf: none) */
    int max_offset_bits;        /* largest offset a case reached, in bits */
    double last_new_s, last_fault_s; /* -1 when none */
    /* The first new signature. */
    double first_finding_s;     /* -1 when none */
    int64_t first_finding_execs;
    enum gg_class first_class;
    char first_signature[GG_SIGNATURE_MAX];
    char first_path[1024];      /* its file in the artifacts directory */
    int64_t first_groups;       /* groups of the case that found it */
    int64_t first_groups_min;   /* groups after minimisation (-1: not minimised) */
    /* A shard (campaign_dir set). */
    int resumed;                /* it went on from its directory's fuzzer_stats */
    uint64_t next_case;         /* the number of the next case its seed stream draws */
    int64_t imported;           /* cases the other shards kept, taken into the corpus here */
    double sync_s;              /* time spent reading the other shards' logs */
    long long merged_sigs;      /* signatures in the campaign's merged store at the end (-1:
                                   no merge) */
    /* A campaign spread over devices: each one's share. */
    int n_gpus;
    struct gg_gpu_stats gpu[GG_GPUS_MAX];
    /* The ABI's freedoms and edge classes the cases that ran exercised (of a resumed shard:
       since it went on). */
    struct gg_freedom_tally freedoms;
    /* Where the workers' time went; gpu_kernel: the kernel runs on a GPU (its device phases
       are told, and the GPU's busy fraction estimated from the kernel's and the device
       reference's time). */
    struct gg_phase_sums phases;
    int gpu_kernel;
};

/*
 * Whether a campaign verified too little for its silence to mean anything: no case got a verdict
 * (none ran once it stopped, or every one that ran was refused or could not run), or more than
 * half of the cases run could not run (errors: the kernel's run() failed, a case could not be
 * placed, a finding could not be stored). Returns 1 and a sentence saying which in why, else 0.
 * A campaign for which it holds ends with the harness's exit code unless a new finding says more.
 */
int gg_campaign_unverified(const struct gg_campaign_stats *s, char *why, size_t why_len);

/* What a configuration's 0 stands for (the command line shows these as its defaults). */
#define GG_CAMPAIGN_DEFAULT_TIMEOUT_S 10       /* per case */
#define GG_CAMPAIGN_DEFAULT_MINIMIZE_S 30      /* a minimiser's or a confirmation's time */
#define GG_CAMPAIGN_DEFAULT_MINIMIZE_SHARE 0.25 /* of a device's worker slots, minimisers */
#define GG_CAMPAIGN_DEFAULT_SYNC_S 30          /* a shard reads the others' new cases this often */
#define GG_CAMPAIGN_DEFAULT_STATS_S 1          /* fuzzer_stats and plot_data period */
#define GG_CAMPAIGN_DEFAULT_STATUS_S 60        /* a status line at least this often, no terminal */
#define GG_SELFTEST_DEFAULT_PER_MUTANT_S 20    /* budget of each selftest campaign */
/* Workers sharing one GPU by default: one worker's case keeps the GPU busy a small part of its
   time (the rest is the host's: buffers and mappings, the comparison, the round trip), so a GPU
   serves several; on an H100 six ran more cases than four, and the GPU busier
   (docs/benchmarks.md). */
#define GG_CAMPAIGN_WORKERS_PER_GPU 6

struct gg_campaign_config {
    const char *kernel;              /* the kernel under test */
    const char *mutant;              /* NULL or "": the correct kernel */
    unsigned faults;                 /* enum gg_faults mask (0: all) */
    enum gg_strategy strategy;
    double max_total_time_s;         /* 0: no limit */
    int64_t max_runs;                /* 0: no limit */
    uint64_t seed;                   /* 0: chosen from the clock and the process id */
    int workers;                     /* 0: one per online CPU for CPU kernels; for GPU kernels
                                        GG_CAMPAIGN_WORKERS_PER_GPU per device of gpus (one
                                        device without), at most one per online CPU */
    /* (optional) the devices to spread the workers over (--gpus): worker i is bound to device
       gpus->id[i % gpus->n] for its whole life, restarts included, and so is a minimiser to the
       device of the worker that found its signature. NULL or n 0: unbound. */
    const struct gg_gpus *gpus;
    double timeout_s;                /* per case (0: GG_CAMPAIGN_DEFAULT_TIMEOUT_S; GG_NO_LIMIT:
                                        none); a case past it runs once more with 4x the limit
                                        in a fresh worker before it is a timeout */
    const char *const *corpus_dirs;  /* loaded first; the first receives new cases */
    int n_corpus_dirs;
    const char *artifacts_dir;       /* findings (NULL: ggfuzz-out/artifacts) */
    const char *stats_dir;           /* fuzzer_stats, plot_data, cur_input.<w> (NULL: the
                                        artifacts directory's parent) */
    const char *known_path;          /* (optional) signatures that do not count as new */
    const char *stop_file;           /* (optional) the campaign ends once this file exists */
    int no_minimize;
    double minimize_s;               /* budget per new signature (0:
                                        GG_CAMPAIGN_DEFAULT_MINIMIZE_S), capped by the time
                                        left */
    double minimize_share;           /* while signatures wait for triage, minimisers take at
                                        most this share of each device's worker slots (of the
                                        workers of a CPU kernel), one at least, and the workers
                                        give way to them (0: GG_CAMPAIGN_DEFAULT_MINIMIZE_SHARE;
                                        1: one minimiser per worker) */
    int stop_after_findings;         /* end after this many new signatures (0: never) */
    /* One shard of a campaign spread over processes, GPUs or nodes: with campaign_dir set, the
       campaign works in campaign_dir/shard-<shard_index>/ (corpus/, artifacts/, fuzzer_stats,
       plot_data; artifacts_dir, stats_dir and the receiving corpus directory are ignored, every
       corpus_dirs entry is read as seeds), draws from a seed stream of its own (seed mixed with
       the index; shard 0 of 1 uses seed itself), goes on where a shard of that index stopped
       (its seed, case number and corpus; its stored findings are not replayed), takes the cases
       the other shards keep into its corpus every sync_interval_s (0:
       GG_CAMPAIGN_DEFAULT_SYNC_S), and at its end, when no other shard is still at work, folds
       every shard's findings into campaign_dir/artifacts (gg_store_merge). */
    const char *campaign_dir;
    int shard_index, shard_count;    /* 0 <= index < count; count 0 is taken as 1 */
    double sync_interval_s;
    struct gg_run_opts run;          /* memory limit and certification (kernel, mutant unused) */
    const char *worker_exe;          /* ggfuzz binary started as `worker` (NULL: /proc/self/exe) */
    const char *const *worker_cmd;   /* (optional) the command that starts ggfuzz, n_worker_cmd
                                        words before `[--plugin P]... worker` (a Python host's
                                        `python -m ggfuzz`); NULL: worker_exe */
    int n_worker_cmd;
    const char *const *plugins;      /* passed to each worker as --plugin */
    int n_plugins;
    double stats_interval_s;         /* fuzzer_stats and plot_data period (0:
                                        GG_CAMPAIGN_DEFAULT_STATS_S) */
    double status_interval_s;        /* without a terminal, a status line at least this often
                                        (0: GG_CAMPAIGN_DEFAULT_STATUS_S), besides those at
                                        doubling case counts */
    FILE *log;                       /* INFO, FAULT and final lines (NULL: silent) */
    int status_line;                 /* live status line on log: -1 when log is a terminal */
    const char *command_line;        /* (optional) recorded in fuzzer_stats: the command that
                                        runs this campaign again from a fresh shell */
    const char *replay_command;      /* (optional) the command a stored case's path is appended
                                        to to replay it from a fresh shell (NULL: "ggfuzz
                                        --replay"): in the log's replay lines and fuzzer_stats */
    const volatile sig_atomic_t *stop_flag; /* (optional) non-zero ends the campaign cleanly */
    /* (optional) called at every statistics tick with the live worker process ids. */
    void (*on_tick)(const struct gg_campaign_stats *s, const int *worker_pids, int n_workers,
                    void *user);
    void *user;
};

/*
 * Runs a campaign: replays the stored failures (cases with a non-pass @expect for this kernel and
 * mutant) of the corpus and artifacts directories, then runs generated and mutated cases until a
 * limit, the stop flag or the stop file ends it. Every case runs in a worker process (`worker`
 * command of worker_cmd or worker_exe); the campaign itself never runs a kernel. Each fault is
 * recorded with gg_findings_record() and each signature new to the artifacts directory is
 * minimised. st is filled also when the campaign ends early. Returns GG_OK when it ran (findings are in st), or a
 * status and message for a harness failure (bad directory, no worker would start).
 */
enum gg_status gg_campaign_run(const struct gg_campaign_config *cfg, struct gg_campaign_stats *st,
                               char *err, size_t err_len);

struct gg_selftest_config {
    double per_mutant_s;             /* budget of each campaign (0:
                                        GG_SELFTEST_DEFAULT_PER_MUTANT_S) */
    int64_t runs_per_mutant;         /* (optional) also end each campaign after this many cases:
                                        with one worker and a fixed seed the cases are the same
                                        on every machine, so a missed mutant is not a slow one */
    double minimize_s;               /* budget to minimise each finding (0:
                                        GG_CAMPAIGN_DEFAULT_MINIMIZE_S) */
    uint64_t seed;                   /* 0: chosen and printed */
    const char *kernel;              /* NULL: every registered kernel */
    int workers;                     /* as in gg_campaign_config */
    const struct gg_gpus *gpus;      /* as in gg_campaign_config */
    double timeout_s;                /* as in gg_campaign_config */
    const char *worker_exe;
    const char *const *worker_cmd;   /* as in gg_campaign_config */
    int n_worker_cmd;
    const char *const *plugins;
    int n_plugins;
    FILE *out;                       /* one line per mutant and per kernel (NULL: silent) */
    const volatile sig_atomic_t *stop_flag;
};

struct gg_selftest_result {
    int mutants, found;              /* mutants tried, and found */
    int kernels, clean;              /* correct kernels run, and without findings */
    int stopped;                     /* the stop flag ended it early */
};

/*
 * For every mutant of every kernel (or of cfg->kernel), a fresh campaign in temporary
 * directories that stops at the first finding; then every correct kernel for the same budget,
 * which must find nothing. The self-test passes when found == mutants and clean == kernels.
 */
enum gg_status gg_selftest_run(const struct gg_selftest_config *cfg, struct gg_selftest_result *res,
                               char *err, size_t err_len);

#endif /* GG_CAMPAIGN_H */

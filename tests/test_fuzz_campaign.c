/*
 * test_fuzz_campaign.c — campaigns through the library API, with real worker processes (the
 * ggfuzz binary): a correct kernel gives no finding and sane statistics files; a mutant is found
 * with its class and a minimised artifact that replays; a worker killed mid-campaign is replaced
 * and logged as a harness event, not a finding; a crash is a finding only when a re-run in a fresh
 * worker dies the same way; the stop file and the run limit end a campaign; stored failures are
 * replayed first, reported as possibly fixed when they pass, and known signatures do not count as
 * new; a campaign starts by removing the temporary files of writers that are gone and by resuming
 * the minimisations that a killed campaign left progress files of; a kernel's supports() that
 * crashes on a case the supervisor draws is a crash finding (the supervisor asks in a probe
 * process), and one that crashes on every problem ends the campaign with a message.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <criterion/criterion.h>

#include "fuzz/campaign/gg_campaign.h"

#define MUTANTS GG_SOURCE_DIR "/corpus/mutants"
#define CRASH_PLUGIN GG_TEST_PLUGINS "/crash_run.so"
#define SUPPORTS_PLUGIN GG_TEST_PLUGINS "/crash_supports.so"

/* Workers are the ggfuzz binary: it must be built. */
static void need_ggfuzz(void)
{
    cr_assert_eq(access(GGFUZZ_BIN, X_OK), 0, "%s is not built", GGFUZZ_BIN);
}

TestSuite(campaign, .init = need_ggfuzz, .timeout = 120);

/* A fresh directory for one campaign; its corpus/ and artifacts/ are made by the campaign. */
struct dirs {
    char root[64], corpus[96], artifacts[96];
};

static void make_dirs(struct dirs *d)
{
    snprintf(d->root, sizeof d->root, "/tmp/ggfuzz-campaign-XXXXXX");
    cr_assert_not_null(mkdtemp(d->root));
    snprintf(d->corpus, sizeof d->corpus, "%s/corpus", d->root);
    snprintf(d->artifacts, sizeof d->artifacts, "%s/artifacts", d->root);
}

static void remove_dirs(const struct dirs *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->root);
    cr_expect_eq(system(cmd), 0);
}

static struct gg_campaign_config config(const struct dirs *d, const char *kernel,
                                        const char *mutant, const char **corpus)
{
    corpus[0] = d->corpus;
    return (struct gg_campaign_config){.kernel = kernel,
                                       .mutant = mutant,
                                       .seed = 12345,
                                       .workers = 2,
                                       .timeout_s = 20,
                                       .corpus_dirs = corpus,
                                       .n_corpus_dirs = 1,
                                       .artifacts_dir = d->artifacts,
                                       .minimize_s = 20,
                                       .worker_exe = GGFUZZ_BIN,
                                       .stats_interval_s = 0.2};
}

static void run_campaign(const struct gg_campaign_config *cfg, struct gg_campaign_stats *st)
{
    char err[2048] = "";
    cr_assert_eq(gg_campaign_run(cfg, st, err, sizeof err), GG_OK, "%s", err);
}

/* Value of `key : value` in a fuzzer_stats file, as a number. */
static double stat_value(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    cr_assert_not_null(p, "no %s in fuzzer_stats:\n%s", key, text);
    p = strchr(p, ':');
    cr_assert_not_null(p);
    return strtod(p + 1, NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(campaign, a_correct_kernel_gives_nothing_and_sane_statistics)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_tiled", NULL, corpus);
    cfg.max_total_time_s = 2;
    struct gg_campaign_stats st;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.stop, GG_STOP_TIME);
    cr_expect_eq(st.seed, 12345u);
    cr_expect_gt(st.execs, 0);
    cr_expect_eq(st.unique_sigs, 0, "first: %s", st.first_signature);
    cr_expect_eq(st.faults_total, 0);
    cr_expect_eq(st.worst_new, GG_CLASS_PASS);
    cr_expect_gt(st.features, 0);
    cr_expect_gt(st.corpus_count, 0);
    cr_expect_eq(st.worker_restarts, 0);

    char path[256];
    snprintf(path, sizeof path, "%s/fuzzer_stats", d.root);
    const char *stats = slurp(path);
    cr_expect_eq((int64_t)stat_value(stats, "execs_done"), st.execs);
    cr_expect_gt(stat_value(stats, "execs_per_sec"), 0);
    cr_expect_eq(stat_value(stats, "faults_total"), 0);
    cr_expect_eq((int64_t)stat_value(stats, "corpus_count"), st.corpus_count);
    cr_expect(strstr(stats, "stop_reason       : time budget"), "%s", stats);
    cr_expect(strstr(stats, "kernel            : grouped_bf16_cpu_tiled"), "%s", stats);
    /* Where a case's time went: every case that ran to a verdict, its phases within the time
       from its dispatch to its result; a CPU kernel has no device phases and no GPU. */
    cr_expect_gt(st.phases.cases, 0);
    cr_expect_leq(st.phases.cases, st.execs);
    double worker = stat_value(stats, "case_ms_worker"),
           kernel = stat_value(stats, "case_ms_kernel");
    double phases = stat_value(stats, "case_ms_setup") + stat_value(stats, "case_ms_runs") +
                    stat_value(stats, "case_ms_reference") + stat_value(stats, "case_ms_compare") +
                    stat_value(stats, "case_ms_release");
    cr_expect_gt(kernel, 0, "%s", stats);
    cr_expect_gt(phases, 0, "%s", stats);
    cr_expect_leq(phases, worker * 1.001 + 0.01, "%s", stats);
    cr_expect_null(strstr(stats, "case_ms_device_buffers"), "%s", stats);
    cr_expect_null(strstr(stats, "gpu_busy_estimate"), "%s", stats);

    snprintf(path, sizeof path, "%s/plot_data", d.root);
    const char *plot = slurp(path);
    cr_expect_eq(strncmp(plot, "# relative_time, execs_done,", 28), 0, "%s", plot);
    int rows = 0;
    double last_execs = -1;
    for (const char *line = strchr(plot, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t, execs;
        cr_assert_eq(sscanf(line + 1, "%lf, %lf,", &t, &execs), 2, "%s", line + 1);
        cr_expect_geq(execs, last_execs, "execs go down in plot_data");
        last_execs = execs;
        rows++;
    }
    cr_expect_geq(rows, 2);
    cr_expect_eq((int64_t)last_execs, st.execs);

    /* New corpus cases were written to the first corpus directory. */
    char **files;
    size_t n;
    char err[512];
    cr_assert_eq(gg_corpus_list(d.corpus, &files, &n, NULL, NULL, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect_eq((int64_t)n, st.new_units);
    gg_corpus_list_free(files, n);
    remove_dirs(&d);
}

/* Finds mutant with the expected class, and every artifact replays to its signature. */
static void find_mutant(const char *kernel, const char *mutant, enum gg_class cls)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, kernel, mutant, corpus);
    cfg.max_total_time_s = 20;
    cfg.stop_after_findings = 1;
    struct gg_campaign_stats st;
    run_campaign(&cfg, &st);
    cr_assert_eq(st.stop, GG_STOP_FINDING, "%s+%s not found in %lld runs", kernel, mutant,
                 (long long)st.execs);
    /* Which fault of a value bug a campaign meets first (wrong values or NaN) depends on what a
       stray read finds: the family decides. */
    cr_expect_str_eq(gg_bucket_family(st.first_class), gg_bucket_family(cls),
                     "class %s, signature %s", gg_class_name(st.first_class),
                     st.first_signature);
    /* Faults seen before the stop are filed too (once a fresh process confirmed them). */
    cr_expect(!gg_class_more_severe(st.first_class, st.worst_new), "worst %s, first %s",
              gg_class_name(st.worst_new), gg_class_name(st.first_class));
    cr_expect_geq(st.first_finding_s, 0);
    cr_expect_gt(st.first_finding_execs, 0);
    cr_expect_geq(st.minimized, 1);
    cr_expect_geq(st.first_groups_min, 1);
    cr_expect_leq(st.first_groups_min, st.first_groups);

    /* Replaying the artifacts directory reproduces each saved signature. */
    char **files;
    size_t n;
    char err[1024];
    cr_assert_eq(gg_corpus_list(d.artifacts, &files, &n, NULL, NULL, err, sizeof err), GG_OK, "%s",
                 err);
    cr_assert_geq(n, 1);
    int first_seen = 0;
    for (size_t i = 0; i < n; i++) {
        struct gg_case c;
        cr_assert_eq(gg_case_load(files[i], &c, err, sizeof err), GG_OK, "%s", err);
        struct gg_run_result r;
        struct gg_run_opts o = {0};
        cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
        cr_expect(gg_expect_holds(gg_case_meta(&c, "expect"), &r.verdict), "%s: %s gives %s",
                  files[i], gg_case_meta(&c, "expect"), r.verdict.signature);
        /* Its @observed is what this case shows (a deterministic kernel: the same words). */
        const char *observed = gg_case_meta(&c, "observed");
        cr_expect(observed && strcmp(observed, r.verdict.detail) == 0,
                  "%s: @observed '%s', its run: '%s'", files[i], observed ? observed : "(none)",
                  r.verdict.detail);
        if (strcmp(files[i], st.first_path) == 0) {
            /* The campaign seed (12345) is stored with the finding. */
            const char *finding = gg_case_meta(&c, "finding");
            cr_expect(finding && strstr(finding, "seed=0x0000000000003039"), "%s: %s", files[i],
                      finding ? finding : "no @finding");
            first_seen = 1;
            /* Filed in a bucket whose representative is the minimised case. */
            char id[GG_BUCKET_ID_HEX + 1] = "";
            const char *bucket = gg_case_meta(&c, "bucket");
            cr_assert(bucket && gg_meta_field(bucket, "id", id, sizeof id), "%s: no @bucket",
                      files[i]);
            struct gg_bucket_list l;
            cr_assert_eq(gg_buckets_scan(d.artifacts, &l, err, sizeof err), GG_OK, "%s", err);
            int rep = 0;
            for (size_t b = 0; b < l.n; b++)
                if (strcmp(l.b[b].id, id) == 0)
                    rep = l.b[b].groups == st.first_groups_min && l.b[b].members >= 1;
            cr_expect(rep, "bucket %s of %s: no representative of %lld groups", id, files[i],
                      (long long)st.first_groups_min);
            gg_buckets_free(&l);
        }
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
    cr_expect(first_seen, "%s is not in the artifacts", st.first_path);
    gg_corpus_list_free(files, n);
    remove_dirs(&d);
}

Test(campaign, finds_the_zero_length_pointer_skip)
{
    find_mutant("grouped_bf16_cpu_serial", "zero_len_ptr_skip", GG_CLASS_SNR);
}

Test(campaign, finds_the_unwritten_wgrad_of_empty_groups)
{
    find_mutant("grouped_bf16_cpu_tiled", "wgrad_zero_uninit", GG_CLASS_UNWRITTEN);
}

/* Kills worker 0 at the first tick that has seen runs, then stops (SIGSTOP) the worker in slot 1
   so that its case runs past the time limit; notes the runs at the kill. */
struct killer {
    int killed_pid, stopped_pid;
    int64_t execs_at_kill;
};

static void kill_and_stop(const struct gg_campaign_stats *s, const int *pids, int n, void *user)
{
    struct killer *k = user;
    if (n < 2 || s->execs < 2)
        return;
    if (!k->killed_pid && pids[0] > 0) {
        k->killed_pid = pids[0];
        k->execs_at_kill = s->execs;
        kill(pids[0], SIGKILL);
    } else if (k->killed_pid && !k->stopped_pid && s->execs > k->execs_at_kill && pids[1] > 0) {
        k->stopped_pid = pids[1];
        kill(pids[1], SIGSTOP);
    }
}

/* Runs a campaign logging to a temporary file; returns the log (valid until the next call). */
/* Runs the campaign with its log in a temporary file: gg_campaign_run's status, its error in
   err and the log in *log (a static buffer). */
static enum gg_status run_logging(struct gg_campaign_config *cfg, struct gg_campaign_stats *st,
                                  const char **log, char *err, size_t err_len)
{
    static char buf[1 << 16];
    cfg->log = tmpfile();
    cr_assert_not_null(cfg->log);
    enum gg_status rc = gg_campaign_run(cfg, st, err, err_len);
    rewind(cfg->log);
    size_t n = fread(buf, 1, sizeof buf - 1, cfg->log);
    buf[n] = '\0';
    fclose(cfg->log);
    cfg->log = NULL;
    *log = buf;
    return rc;
}

static const char *run_logged(struct gg_campaign_config *cfg, struct gg_campaign_stats *st)
{
    const char *log;
    char err[2048] = "";
    cr_assert_eq(run_logging(cfg, st, &log, err, sizeof err), GG_OK, "%s", err);
    return log;
}

/* A one-run campaign with one worker and no minimisation on kernel of the plugin plugins[0],
   which is loaded here. */
static struct gg_campaign_config plugin_config(const struct dirs *d, const char *kernel,
                                               const char **corpus, const char **plugins)
{
    char err[512];
    cr_assert_eq(gg_plugin_load(plugins[0], err, sizeof err), GG_OK, "%s", err);
    struct gg_campaign_config cfg = config(d, kernel, NULL, corpus);
    cfg.workers = 1;
    cfg.max_runs = 1;
    cfg.no_minimize = 1;
    cfg.plugins = plugins;
    cfg.n_plugins = 1;
    return cfg;
}

Test(campaign, killed_and_hung_workers_are_replaced_and_the_campaign_goes_on)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_tiled", NULL, corpus);
    cfg.max_total_time_s = 6;
    cfg.timeout_s = 2;
    cfg.no_minimize = 1;
    struct killer k = {0};
    cfg.on_tick = kill_and_stop;
    cfg.user = &k;
    struct gg_campaign_stats st;
    const char *log = run_logged(&cfg, &st);
    cr_assert_neq(k.killed_pid, 0, "no worker was killed (%lld runs)", (long long)st.execs);
    cr_assert_neq(k.stopped_pid, 0, "no worker was stopped (%lld runs)", (long long)st.execs);
    cr_expect_eq(st.stop, GG_STOP_TIME);
    cr_expect_geq(st.worker_restarts, 2);
    cr_expect_gt(st.execs, k.execs_at_kill + 1, "no runs after the kill");
    /* The hung case was killed at the limit and re-run with 4x the limit in a fresh worker,
       where it passes: a timeout, but no timeout finding. */
    cr_expect_geq(st.timeouts, 1);
    cr_expect_eq(st.faults[GG_CLASS_TIMEOUT], 0);
    /* The killed worker is a harness event, whether it was running a case or idle; nothing may
       be found on the correct kernel. */
    cr_expect_eq(st.faults_total, 0);
    cr_expect_eq(st.worker_kills, 1);
    char want[128];
    snprintf(want, sizeof want, "worker 0 (pid %d) was killed by signal 9 (Killed) from outside",
             k.killed_pid);
    cr_expect(strstr(log, want) && strstr(log, "a harness event, not a finding"), "%s", log);
    char path[256];
    snprintf(path, sizeof path, "%s/fuzzer_stats", d.root);
    cr_expect_eq(stat_value(slurp(path), "worker_kills"), 1);
    remove_dirs(&d);
}

/* A stored crash of bad_crash_run on zero data (which its kernel gets right when it does not
   crash), replayed by a one-run campaign; the log is returned. */
static const char *replay_crash(const struct dirs *d, struct gg_campaign_stats *st)
{
    char path[256];
    cr_assert_eq(mkdir(d->corpus, 0755), 0);
    snprintf(path, sizeof path, "%s/crash.case", d->corpus);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("ggfuzz-case 1\nop grouped_fwd\nkernel bad_crash_run\ndtypes a=bf16 b=bf16 c=f32\n"
          "scaling none\ngroups 2\ngroup_lens 3 4\nn 8\nk 16\ndata a=const(0) b=const(0)\n"
          "seed 1\n@expect class=crash\n", f);
    fclose(f);
    const char *corpus[1], *plugins[] = {CRASH_PLUGIN};
    struct gg_campaign_config cfg = plugin_config(d, "bad_crash_run", corpus, plugins);
    const char *log = run_logged(&cfg, st);
    cr_expect_eq(st->replayed, 1);
    cr_expect_eq(st->execs, 1);
    cr_expect_eq(st->worker_kills, 0);
    return log;
}

Test(campaign, a_crash_is_a_finding_once_a_fresh_worker_confirms_it)
{
    struct dirs d;
    make_dirs(&d);
    unsetenv("BAD_PLUGIN_CRASH_ONCE");
    struct gg_campaign_stats st;
    const char *log = replay_crash(&d, &st);
    cr_expect_eq(st.faults[GG_CLASS_CRASH], 1, "%s", log);
    cr_expect_eq(st.faults_total, 1);
    cr_expect_eq(st.crashes_unconfirmed, 0);
    cr_expect_eq(st.worker_restarts, 2); /* after the crash and after its confirmation */
    cr_expect(strstr(log, "died on signal 11 (Segmentation fault), re-running in a fresh worker "
                          "to confirm"), "%s", log);
    cr_expect(strstr(log, "INFO: still failing: "), "%s", log);
    cr_expect(strstr(log, "FAULT crash (new)"), "%s", log);
    remove_dirs(&d);
}

Test(campaign, a_crash_that_does_not_reproduce_is_no_finding)
{
    struct dirs d;
    make_dirs(&d);
    char once[128];
    snprintf(once, sizeof once, "%s/crashed-once", d.root);
    cr_assert_eq(setenv("BAD_PLUGIN_CRASH_ONCE", once, 1), 0);
    struct gg_campaign_stats st;
    const char *log = replay_crash(&d, &st);
    unsetenv("BAD_PLUGIN_CRASH_ONCE");
    cr_expect_eq(access(once, F_OK), 0, "the kernel never crashed");
    cr_expect_eq(st.faults_total, 0, "%s", log);
    cr_expect_eq(st.crashes_unconfirmed, 1);
    cr_expect_eq(st.possibly_fixed, 1);
    cr_expect_eq(st.worker_restarts, 1);
    cr_expect(strstr(log, "died on signal 11 (Segmentation fault), which did not reproduce on "
                          "re-run"), "%s", log);
    /* Nothing was stored. */
    char **files;
    size_t n;
    char err[512];
    cr_assert_eq(gg_corpus_list(d.artifacts, &files, &n, NULL, NULL, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect_eq(n, 0);
    gg_corpus_list_free(files, n);
    char path[256];
    snprintf(path, sizeof path, "%s/fuzzer_stats", d.root);
    cr_expect_eq(stat_value(slurp(path), "crashes_unconfirmed"), 1);
    remove_dirs(&d);
}

/* A one-run campaign on bad_crash_supports, whose supports() dies on every problem whose N is
   not 64 (BAD_PLUGIN_SUPPORTS_ALWAYS: on every problem); returns gg_campaign_run's status, with
   the log in *log and the error in err. */
static enum gg_status supports_campaign(const struct dirs *d, struct gg_campaign_stats *st,
                                        const char **log, char *err, size_t err_len)
{
    const char *corpus[1], *plugins[] = {SUPPORTS_PLUGIN};
    struct gg_campaign_config cfg = plugin_config(d, "bad_crash_supports", corpus, plugins);
    return run_logging(&cfg, st, log, err, err_len);
}

/* The supervisor asks supports() about every case it draws, in a probe process: a supports()
   that crashes on a case kills the probe, not the campaign, and the case goes to a worker, where
   the same call makes a confirmed crash finding of it. */
Test(campaign, a_supports_that_crashes_on_a_case_is_a_crash_finding)
{
    struct dirs d;
    make_dirs(&d);
    struct gg_campaign_stats st;
    const char *log;
    char err[1024];
    cr_assert_eq(supports_campaign(&d, &st, &log, err, sizeof err), GG_OK, "%s\n%s", err, log);
    cr_expect(strstr(log, "WARNING: kernel bad_crash_supports, asked in a probe process: "
                          "supports() died on signal 11 (Segmentation fault); case 0 goes to a "
                          "worker as it is"), "%s", log);
    cr_expect_eq(st.faults[GG_CLASS_CRASH], 1, "%s", log);
    cr_expect(strstr(log, "FAULT crash (new)"), "%s", log);
    cr_expect_eq(st.execs, 1);
    remove_dirs(&d);
}

/* One that crashes on the capability probe's problems ends the campaign with a message. */
Test(campaign, a_supports_that_crashes_on_every_problem_ends_the_campaign)
{
    struct dirs d;
    make_dirs(&d);
    struct gg_campaign_stats st;
    const char *log;
    char err[1024];
    cr_assert_eq(setenv("BAD_PLUGIN_SUPPORTS_ALWAYS", "1", 1), 0);
    enum gg_status rc = supports_campaign(&d, &st, &log, err, sizeof err);
    unsetenv("BAD_PLUGIN_SUPPORTS_ALWAYS");
    cr_expect_eq(rc, GG_E_ABI, "%s\n%s", err, log);
    cr_expect_eq(st.stop, GG_STOP_ERROR);
    cr_expect(strstr(err, "generator: probing grouped_fwd a=bf16 b=bf16 c=bf16 scaling none: "
                          "kernel bad_crash_supports, asked in a probe process: supports() died "
                          "on signal 11 (Segmentation fault)"), "%s", err);
    cr_expect_eq(st.execs, 0);
    remove_dirs(&d);
}

/* Creates the stop file at the first tick. */
static void touch_stop(const struct gg_campaign_stats *s, const int *pids, int n, void *user)
{
    (void)s, (void)pids, (void)n;
    FILE *f = fopen(user, "w");
    if (f)
        fclose(f);
}

#define STATEFUL_PLUGIN GG_TEST_PLUGINS "/stateful.so"

/* A grouped forward case of the stateful test kernel: 2 groups of 16 rows, N = K = n. */
static void write_seed(const char *dir, const char *name, int n, unsigned seed)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_weight_cache\n"
            "dtypes a=bf16 b=bf16 c=bf16 acc=f32\nscaling none\ngroups 2\ngroup_lens 16 16\n"
            "n %d\nk %d\nseed 0x%x\n", n, n, seed);
    fclose(f);
}

/* A kernel that caches W by address and shape fails on a case only after an earlier case of
   the same shape in its process: the finding is filed with that case (@after), found by runs
   in fresh processes, and the stored file reproduces in one process but not alone. */
Test(campaign, a_fault_that_needs_earlier_cases_is_filed_with_them)
{
    struct dirs d;
    make_dirs(&d);
    char err[512];
    cr_assert_eq(gg_plugin_load(STATEFUL_PLUGIN, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(mkdir(d.corpus, 0755), 0);
    write_seed(d.corpus, "1.case", 48, 7);  /* another shape: not needed */
    write_seed(d.corpus, "2.case", 64, 1);  /* fills the cache */
    write_seed(d.corpus, "3.case", 64, 2);  /* same address and shape, other W: stale */
    const char *corpus[1], *plugins[] = {STATEFUL_PLUGIN};
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_weight_cache", "stale_weight_cache",
                                           corpus);
    cfg.workers = 1;
    cfg.max_runs = 3;
    cfg.no_minimize = 1;
    cfg.plugins = plugins;
    cfg.n_plugins = 1;
    struct gg_campaign_stats st;
    const char *log = run_logged(&cfg, &st);
    cr_expect_eq(st.faults_history, 1, "%s", log);
    cr_expect_eq(st.unique_sigs, 1, "%s", log);
    cr_expect_eq(st.faults_unconfirmed, 0, "%s", log);
    cr_expect(strstr(log, "gives snr/grouped_bf16_weight_cache/") &&
              strstr(log, "only after 1 of the 2 cases its worker ran before it"), "%s", log);
    cr_expect(strstr(log, "fails only after 1 earlier case in its process (@after)"), "%s", log);
    cr_expect(strstr(log, "-> ") && strstr(log, "/artifacts/snr-"), "%s", log);

    /* The stored finding: its @after case is 2.case; with it, in one process, it fails; alone
       it passes. */
    const char *p = strstr(log, "-> ") + 3;
    char path[512];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(p, "\n"), p);
    struct gg_case kase, *prior = NULL, want;
    int n_prior = 0;
    cr_assert_eq(gg_case_load(path, &kase, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_after_cases(&kase, path, &prior, &n_prior, err, sizeof err), GG_OK,
                 "%s", err);
    cr_assert_eq(n_prior, 1);
    char seed_path[256], id_want[GG_CASE_ID_HEX + 1], id_got[GG_CASE_ID_HEX + 1];
    snprintf(seed_path, sizeof seed_path, "%s/2.case", d.corpus);
    cr_assert_eq(gg_case_load(seed_path, &want, err, sizeof err), GG_OK, "%s", err);
    snprintf(want.mutant, sizeof want.mutant, "stale_weight_cache");
    gg_case_id(&want, id_want);
    gg_case_id(&prior[0], id_got);
    cr_expect_str_eq(id_got, id_want);
    struct gg_run_opts o = {0};
    struct gg_run_result r;
    cr_assert_eq(gg_run_sequence_isolated(prior, n_prior, &kase, &o, 20, &r, err, sizeof err),
                 GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_SNR);
    cr_expect(gg_expect_holds(gg_case_meta(&kase, "expect"), &r.verdict));
    gg_run_result_free(&r);
    cr_assert_eq(gg_run_case_isolated(&kase, &o, 20, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "alone it passes");
    gg_run_result_free(&r);
    gg_case_after_free(prior, n_prior);
    gg_case_free(&kase);
    gg_case_free(&want);
    remove_dirs(&d);
}

Test(campaign, the_stop_file_ends_it)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    char stop[128];
    snprintf(stop, sizeof stop, "%s/stop", d.root);
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_tiled", NULL, corpus);
    cfg.max_total_time_s = 100;
    cfg.stop_file = stop;
    cfg.on_tick = touch_stop;
    cfg.user = stop;
    struct gg_campaign_stats st;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.stop, GG_STOP_FILE);
    cr_expect_lt(st.seconds, 100);
    char path[256];
    snprintf(path, sizeof path, "%s/fuzzer_stats", d.root);
    cr_expect(strstr(slurp(path), "stop_reason       : stop file"));
    remove_dirs(&d);
}

Test(campaign, the_run_limit_ends_it)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_tiled", NULL, corpus);
    cfg.max_runs = 20;
    struct gg_campaign_stats st;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.stop, GG_STOP_RUNS);
    cr_expect_eq(st.execs, 20);
    remove_dirs(&d);
}

static void copy_case(const char *from, const char *to, const char *kernel, const char *mutant)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_load(from, &c, err, sizeof err), GG_OK, "%s", err);
    snprintf(c.kernel, sizeof c.kernel, "%s", kernel);
    snprintf(c.mutant, sizeof c.mutant, "%s", mutant);
    cr_assert_eq(gg_case_save(&c, to, err, sizeof err), GG_OK, "%s", err);
    gg_case_free(&c);
}

Test(campaign, stored_failures_are_replayed_first)
{
    struct dirs d;
    make_dirs(&d);
    cr_assert_eq(mkdir(d.corpus, 0755), 0);
    char path[256];
    /* A stored failure of the serial kernel's mutant, and the same case on the correct kernel,
       where it now passes. */
    snprintf(path, sizeof path, "%s/still.case", d.corpus);
    copy_case(MUTANTS "/zero_len_ptr_skip.case", path, "grouped_bf16_cpu_serial",
              "zero_len_ptr_skip");
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_serial", "zero_len_ptr_skip",
                                           corpus);
    cfg.max_runs = 1;
    cfg.no_minimize = 1;
    struct gg_campaign_stats st;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.replayed, 1);
    cr_expect_eq(st.possibly_fixed, 0);
    cr_expect_eq(st.execs, 1);
    cr_expect_eq(st.unique_sigs, 1);
    cr_expect_eq(st.new_sigs, 1);
    cr_expect_eq(st.first_class, GG_CLASS_SNR);
    cr_expect_eq(st.stored_sigs, 1);

    /* The signature now known: the same replay finds nothing new. */
    char known[256];
    snprintf(known, sizeof known, "%s/known.txt", d.root);
    FILE *f = fopen(known, "w");
    cr_assert_not_null(f);
    fprintf(f, "# tracked\n%s\n", st.first_signature);
    fclose(f);
    cfg.known_path = known;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.replayed, 1);
    cr_expect_eq(st.unique_sigs, 1);
    cr_expect_eq(st.new_sigs, 0);
    cr_expect_eq(st.stored_sigs, 0);
    cr_expect_eq(st.worst_new, GG_CLASS_PASS);

    /* On the correct kernel, a stored failure of it that now passes is possibly fixed. */
    snprintf(path, sizeof path, "%s/fixed.case", d.corpus);
    copy_case(MUTANTS "/zero_len_ptr_skip.case", path, "grouped_bf16_cpu_serial", "");
    cfg = config(&d, "grouped_bf16_cpu_serial", NULL, corpus);
    cfg.max_runs = 1;
    run_campaign(&cfg, &st);
    cr_expect_eq(st.replayed, 1);
    cr_expect_eq(st.possibly_fixed, 1);
    cr_expect_eq(st.unique_sigs, 0);
    remove_dirs(&d);
}

Test(campaign, a_finding_that_cannot_be_stored_says_so)
{
    struct dirs d;
    make_dirs(&d);
    cr_assert_eq(mkdir(d.corpus, 0755), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/still.case", d.corpus);
    copy_case(MUTANTS "/zero_len_ptr_skip.case", path, "grouped_bf16_cpu_serial",
              "zero_len_ptr_skip");
    /* The findings store cannot take its lock: a directory stands where the lock file goes. */
    cr_assert_eq(mkdir(d.artifacts, 0755), 0);
    snprintf(path, sizeof path, "%s/.lock", d.artifacts);
    cr_assert_eq(mkdir(path, 0755), 0);
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_serial", "zero_len_ptr_skip",
                                           corpus);
    cfg.max_runs = 1;
    struct gg_campaign_stats st;
    const char *log = run_logged(&cfg, &st);
    cr_expect_eq(st.unique_sigs, 1);
    cr_expect_eq(st.stored_sigs, 0);
    cr_expect_eq(st.minimized, 0);
    cr_expect(strstr(log, "FAULT snr (new, not stored) "), "%s", log);
    cr_expect(strstr(log, "-> not stored: ") && strstr(log, "cannot lock: Is a directory"), "%s",
              log);
    cr_expect_null(strstr(log, "stored before"), "%s", log);
    remove_dirs(&d);
}

/* What counts as a campaign that verified too little (gg_campaign_unverified). */
Test(campaign, too_few_verdicts_is_not_a_clean_campaign)
{
    struct gg_campaign_stats s = {0};
    char why[160];
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 0, "running, nothing yet: %s", why);
    s.stop = GG_STOP_TIME;
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 1);
    cr_expect(strstr(why, "no case ran"), "%s", why);
    s.execs = 10, s.errors = 4, s.refused = 6;
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 1);
    cr_expect(strstr(why, "none of the 10 cases could run (4 errors, 6 refused)"), "%s", why);
    s.refused = 5; /* one verdict, and fewer than half errors */
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 0, "%s", why);
    s.errors = 6, s.refused = 0; /* most runs errors */
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 1);
    cr_expect(strstr(why, "6 of the 10 cases could not run (errors): more than half"), "%s", why);
    s.errors = 5;
    cr_expect_eq(gg_campaign_unverified(&s, why, sizeof why), 0, "half is not most: %s", why);
}

Test(campaign, refuses_an_unknown_kernel_or_mutant)
{
    struct dirs d;
    make_dirs(&d);
    const char *corpus[1];
    struct gg_campaign_stats st;
    char err[512];
    struct gg_campaign_config cfg = config(&d, "no_such_kernel", NULL, corpus);
    cr_expect_eq(gg_campaign_run(&cfg, &st, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "no_such_kernel"), "%s", err);
    cfg = config(&d, "grouped_bf16_cpu_tiled", "no_such_mutant", corpus);
    cr_expect_eq(gg_campaign_run(&cfg, &st, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "no_such_mutant"), "%s", err);
    cr_expect_eq(st.stop, GG_STOP_ERROR);
    remove_dirs(&d);
}

/* Creates an empty file dir/name, modified age_s seconds ago. */
static void touch(const char *dir, const char *name, double age_s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fclose(f);
    time_t t = time(NULL) - (time_t)age_s;
    struct utimbuf times = {.actime = t, .modtime = t};
    cr_assert_eq(utime(path, &times), 0);
}

static int exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The id of a process that has ended. */
static int dead_pid(void)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(0);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    return (int)pid;
}

Test(campaign, temporary_files_of_writers_that_are_gone_are_removed_at_start)
{
    struct dirs d;
    make_dirs(&d);
    cr_assert_eq(mkdir(d.corpus, 0755), 0);
    cr_assert_eq(mkdir(d.artifacts, 0755), 0);
    char host[256] = "", name[512], live[512], other[512];
    cr_assert_eq(gethostname(host, sizeof host), 0);
    int dead = dead_pid();
    /* An atomic write's temporary file is named after the target, this host and this process. */
    char *tmp = gg_tmpfile_name("dir/x.case");
    snprintf(name, sizeof name, "dir/x.case.tmp.%s.%d", host, (int)getpid());
    cr_expect_str_eq(tmp, name);
    free(tmp);
    /* Gone: written here by a process that has ended (also in the old form without a host), or
       by anyone more than an hour ago. */
    snprintf(name, sizeof name, "a.case.tmp.%d", dead);
    touch(d.artifacts, name, 0);
    snprintf(name, sizeof name, "b.case.tmp.%s.%d", host, dead);
    touch(d.artifacts, name, 0);
    touch(d.corpus, name, 0);
    snprintf(name, sizeof name, "fuzzer_stats.tmp.%s.%d", host, dead);
    touch(d.root, name, 0);
    snprintf(name, sizeof name, ".min-snr-0123456789abcdef.case.tmp.%s.%d", host, dead);
    touch(d.artifacts, name, 0);
    touch(d.artifacts, "f.case.tmp.other-host.example.12", GG_TMPFILE_STALE_S + 60);
    /* Kept: a live writer here, a fresh file of another host, files that only look alike, the
       temporary file of someone else's write in the statistics directory. */
    snprintf(live, sizeof live, "d.case.tmp.%s.%d", host, (int)getpid());
    touch(d.artifacts, live, 0);
    snprintf(other, sizeof other, "e.case.tmp.other-host.example.%d", dead);
    touch(d.artifacts, other, 0);
    touch(d.artifacts, "notes.tmp.txt", GG_TMPFILE_STALE_S + 60);
    snprintf(name, sizeof name, "notes.txt.tmp.%s.%d", host, dead);
    touch(d.root, name, 0);

    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_tiled", NULL, corpus);
    cfg.max_runs = 1;
    struct gg_campaign_stats st;
    const char *log = run_logged(&cfg, &st);
    char want[256];
    snprintf(want, sizeof want, "INFO: removed 4 temporary files left by writers that are gone "
             "from %s\n", d.artifacts);
    cr_expect(strstr(log, want), "%s", log);
    struct dirs_left {
        const char *dir;
        int left;
    } expect[] = {{d.artifacts, 3}, {d.corpus, 0}, {d.root, 1}};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        int left = 0;
        DIR *dir = opendir(expect[i].dir);
        cr_assert_not_null(dir);
        for (struct dirent *e; (e = readdir(dir)) != NULL;)
            left += strstr(e->d_name, ".tmp.") != NULL;
        closedir(dir);
        cr_expect_eq(left, expect[i].left, "%s: %d temporary files left", expect[i].dir, left);
    }
    cr_expect(exists(d.artifacts, live) && exists(d.artifacts, other) &&
              exists(d.artifacts, "notes.tmp.txt") && exists(d.root, name));
    remove_dirs(&d);
}

/* The finding of the zero_len_ptr_skip mutant case in d's artifacts (its path in finding), and
   a progress file beside it holding a smaller case of the same signature, as a minimisation
   killed with its supervisor leaves. Returns the groups of the smaller case. */
static int64_t leave_progress(const struct dirs *d, char *finding, size_t len)
{
    char err[1024], progress[512];
    struct gg_case a;
    cr_assert_eq(gg_case_load(MUTANTS "/zero_len_ptr_skip.case", &a, err, sizeof err), GG_OK,
                 "%s", err);
    struct gg_run_opts o = {0};
    struct gg_run_result r;
    cr_assert_eq(gg_run_case(&a, &o, &r, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_findings_record(d->artifacts, &a, &r.verdict, 7, NULL, finding, len, err,
                                    sizeof err), GG_OK, "%s", err);
    struct gg_case b;
    cr_assert_eq(gg_case_load(finding, &b, err, sizeof err), GG_OK, "%s", err);
    struct gg_min_opts mo = {.max_total_time_s = 20, .timeout_s = 30};
    struct gg_min_stats ms;
    cr_assert_eq(gg_minimize(&b, r.verdict.signature, &mo, &ms, err, sizeof err), GG_OK, "%s",
                 err);
    cr_assert_lt(b.groups, a.groups);
    const char *base = strrchr(finding, '/') + 1;
    snprintf(progress, sizeof progress, "%s/.min-%s", d->artifacts, base);
    cr_assert_eq(gg_case_save(&b, progress, err, sizeof err), GG_OK, "%s", err);
    int64_t groups = b.groups;
    gg_run_result_free(&r);
    gg_case_free(&a);
    gg_case_free(&b);
    return groups;
}

static int64_t groups_of(const char *path)
{
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
    int64_t g = c.groups;
    gg_case_free(&c);
    return g;
}

Test(campaign, a_minimisation_left_by_a_killed_campaign_is_resumed)
{
    struct dirs d;
    make_dirs(&d);
    cr_assert_eq(mkdir(d.artifacts, 0755), 0);
    char finding[512], progress[600];
    int64_t groups = leave_progress(&d, finding, sizeof finding);
    snprintf(progress, sizeof progress, "%s/.min-%s", d.artifacts, strrchr(finding, '/') + 1);

    /* Without minimisation the progress still goes into the findings store. */
    const char *corpus[1];
    struct gg_campaign_config cfg = config(&d, "grouped_bf16_cpu_serial", "zero_len_ptr_skip",
                                           corpus);
    cfg.max_runs = 1;
    cfg.no_minimize = 1;
    struct gg_campaign_stats st;
    const char *log = run_logged(&cfg, &st);
    cr_expect(strstr(log, "INFO: stored the progress of the minimisation of "), "%s", log);
    cr_expect_neq(access(progress, F_OK), 0, "the progress file is still there");
    cr_expect_eq(groups_of(finding), groups);
    cr_expect_eq(st.minimized, 0);

    /* With minimisation it goes on from there and ends. */
    leave_progress(&d, finding, sizeof finding);
    cfg.no_minimize = 0;
    log = run_logged(&cfg, &st);
    cr_expect(strstr(log, "INFO: resuming the minimisation of "), "%s", log);
    cr_expect(strstr(log, " MIN "), "%s", log);
    cr_expect_eq(st.minimized, 1);
    cr_expect_neq(access(progress, F_OK), 0, "the progress file is still there");
    cr_expect_leq(groups_of(finding), groups);
    remove_dirs(&d);
}

/* One night against zero_len_ptr_skip: one worker and a run limit, so the same seed draws the
   same cases, and the minimiser files every signature before the campaign ends. */
static struct gg_campaign_config night(const struct dirs *d, const char **corpus)
{
    struct gg_campaign_config cfg = config(d, "grouped_bf16_cpu_serial", "zero_len_ptr_skip",
                                           corpus);
    cfg.workers = 1;
    cfg.max_runs = 40;
    cfg.faults = GG_FAULTS_ZERO;
    cfg.minimize_s = 30;
    return cfg;
}

/* Triage: one planted bug gives few buckets, every signature of the campaign is filed in one of
   them (members tagged @bucket, the representatives in the store's buckets/), and a second night
   against the same bug, with the first night's store as its known set and a store of its own,
   meets the same buckets and reports none new. */
Test(campaign, one_bug_one_bucket_and_a_second_night_knows_it, .timeout = 240)
{
    struct dirs d1, d2;
    make_dirs(&d1);
    make_dirs(&d2);
    const char *corpus1[1], *corpus2[1];
    struct gg_campaign_config cfg = night(&d1, corpus1);
    struct gg_campaign_stats st1, st2;
    run_campaign(&cfg, &st1);
    cr_assert_geq(st1.unique_sigs, 2, "%lld signatures", (long long)st1.unique_sigs);
    cr_expect_geq(st1.buckets, 1);
    cr_expect_leq(st1.buckets, 3, "one bug in %lld buckets", (long long)st1.buckets);
    cr_expect_eq(st1.new_buckets, st1.buckets);
    cr_expect_eq(st1.untriaged, 0, "a run limit lets the minimiser file every signature");
    char err[1024];
    struct gg_bucket_list l;
    cr_assert_eq(gg_buckets_scan(d1.artifacts, &l, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq((int64_t)l.n, st1.buckets);
    cr_expect_eq(l.untriaged, 0);
    gg_buckets_free(&l);

    struct gg_campaign_config cfg2 = night(&d2, corpus2);
    cfg2.known_path = d1.artifacts;
    run_campaign(&cfg2, &st2);
    cr_expect_eq(st2.new_sigs, 0, "the same seed draws the same cases");
    cr_expect_eq(st2.buckets, st1.buckets);
    cr_expect_eq(st2.new_buckets, 0, "%lld buckets new on the second night",
                 (long long)st2.new_buckets);
    remove_dirs(&d1);
    remove_dirs(&d2);
}

/*
 * gg_selftest.c — proves the fuzzer on its own kernels: a fresh campaign (empty temporary corpus
 * and artifacts) against every mutant must find it, and every correct kernel run for the same
 * budget must give no finding. Each campaign is gg_campaign_run(), so kernels still run in
 * worker processes. Prints one line per mutant (found, time to first detection, runs, class,
 * groups of the case before and after minimisation) and per kernel. Kernels whose backend needs a
 * device that is absent here are skipped, with one line per backend that says why; the verdict
 * covers the kernels that ran.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/campaign/gg_campaign.h"
#include "fuzz/run/device/gg_device.h"

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* A fresh directory for one campaign: corpus/ and artifacts/ inside it. */
static enum gg_status make_tmp(char *dir, size_t len, char *err, size_t err_len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/ggfuzz-selftest-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(err, err_len, "%s: cannot create a temporary directory: %s", dir,
                 strerror(errno));
        return GG_E_IO;
    }
    return GG_OK;
}

/* Runs one campaign in a fresh directory, removed afterwards unless keep is set by the caller
   later (*dir is left holding its name). */
/* The budget of each campaign. */
static double per_mutant_s(const struct gg_selftest_config *cfg)
{
    return cfg->per_mutant_s > 0 ? cfg->per_mutant_s : GG_SELFTEST_DEFAULT_PER_MUTANT_S;
}

static enum gg_status one_campaign(const struct gg_selftest_config *cfg, const char *kernel,
                                   const char *mutant, uint64_t seed, char *dir, size_t dir_len,
                                   struct gg_campaign_stats *st, char *err, size_t err_len)
{
    enum gg_status rc = make_tmp(dir, dir_len, err, err_len);
    if (rc != GG_OK)
        return rc;
    char corpus[4200], artifacts[4200];
    snprintf(corpus, sizeof corpus, "%s/corpus", dir);
    snprintf(artifacts, sizeof artifacts, "%s/artifacts", dir);
    const char *dirs[] = {corpus};
    struct gg_campaign_config cc = {
        .kernel = kernel,
        .mutant = mutant,
        .max_total_time_s = per_mutant_s(cfg),
        .max_runs = cfg->runs_per_mutant,
        .minimize_s = cfg->minimize_s,
        .seed = seed,
        .workers = cfg->workers,
        .gpus = cfg->gpus,
        .timeout_s = cfg->timeout_s,
        .corpus_dirs = dirs,
        .n_corpus_dirs = 1,
        .artifacts_dir = artifacts,
        .stats_dir = dir,
        .stop_after_findings = mutant ? 1 : 0,
        .worker_exe = cfg->worker_exe,
        .worker_cmd = cfg->worker_cmd,
        .n_worker_cmd = cfg->n_worker_cmd,
        .plugins = cfg->plugins,
        .n_plugins = cfg->n_plugins,
        .stop_flag = cfg->stop_flag};
    return gg_campaign_run(&cc, st, err, err_len);
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define N_BACKENDS (GG_BACKEND_HIP + 1)

/* The backends whose kernels cannot run here (each asked once): their kernels and mutants are
   skipped, and why[b] says why. */
struct skipped {
    int backend[N_BACKENDS];
    int kernels[N_BACKENDS], mutants[N_BACKENDS], total;
    char why[N_BACKENDS][512];
};

static const char *const backend_names[N_BACKENDS] = {"CPU", "CUDA", "HIP"};

static void find_skipped(const char *only, struct skipped *sk)
{
    memset(sk, 0, sizeof *sk);
    int asked[N_BACKENDS] = {0};
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        int b = (int)k->backend;
        if (only && strcmp(only, k->name) != 0)
            continue;
        if (!asked[b]++)
            sk->backend[b] = !gg_device_present(k->backend, sk->why[b], sizeof sk->why[b]);
        if (!sk->backend[b])
            continue;
        sk->kernels[b]++;
        sk->total++;
        for (const char *const *m = k->mutants; m && *m; m++)
            sk->mutants[b]++;
    }
}

static void print_header(FILE *out, uint64_t seed, double budget, const struct skipped *sk)
{
    if (!out)
        return;
    fprintf(out, "INFO: seed=%llu\n", (unsigned long long)seed);
    fprintf(out, "INFO: %g s per campaign\n", budget);
    for (int b = 0; b < N_BACKENDS; b++)
        if (sk->kernels[b])
            fprintf(out, "INFO: skipping %d %s kernel%s (%d mutant%s): %s\n", sk->kernels[b],
                    backend_names[b], sk->kernels[b] == 1 ? "" : "s", sk->mutants[b],
                    sk->mutants[b] == 1 ? "" : "s", sk->why[b]);
    fprintf(out, "%-28s %-26s %-7s %8s %8s  %-15s %s\n", "kernel", "mutant", "result", "first_s",
            "execs", "class", "groups");
    fflush(out);
}

enum gg_status gg_selftest_run(const struct gg_selftest_config *cfg, struct gg_selftest_result *res,
                               char *err, size_t err_len)
{
    memset(res, 0, sizeof *res);
    gg_registry_init();
    const struct gg_kernel *only = cfg->kernel ? gg_registry_find(cfg->kernel) : NULL;
    if (cfg->kernel && !only) {
        snprintf(err, err_len, "unknown kernel '%s' (ggfuzz list shows the kernels)", cfg->kernel);
        return GG_E_INVAL;
    }
    struct skipped sk;
    find_skipped(cfg->kernel, &sk);
    if (only && sk.backend[only->backend]) {
        snprintf(err, err_len, "kernel %s cannot run here: %s", only->name, sk.why[only->backend]);
        return GG_E_UNSUPPORTED;
    }
    uint64_t seed = cfg->seed;
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u) ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid();
    }
    FILE *out = cfg->out;
    print_header(out, seed, per_mutant_s(cfg), &sk);
    char dir[4096];
    struct gg_campaign_stats st;
    /* Pass 1: every mutant; pass 2: every correct kernel. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < gg_registry_count() && !res->stopped; i++) {
            const struct gg_kernel *k = gg_registry_at(i);
            if ((cfg->kernel && strcmp(cfg->kernel, k->name) != 0) || sk.backend[k->backend])
                continue;
            const char *const *muts = pass == 0 ? k->mutants : NULL;
            size_t n = 0;
            while (muts && muts[n])
                n++;
            for (size_t m = 0; m < (pass == 0 ? n : 1) && !res->stopped; m++) {
                const char *mutant = pass == 0 ? muts[m] : NULL;
                enum gg_status rc = one_campaign(cfg, k->name, mutant, seed, dir, sizeof dir, &st,
                                                 err, err_len);
                if (rc != GG_OK)
                    return rc;
                if (st.stop == GG_STOP_SIGNAL) {
                    res->stopped = 1;
                    remove_tree(dir);
                    break;
                }
                char why[160];
                int unverified = gg_campaign_unverified(&st, why, sizeof why);
                int ok = pass == 0 ? st.new_sigs > 0 : st.unique_sigs == 0 && !unverified;
                if (pass == 0) {
                    res->mutants++;
                    res->found += ok;
                } else {
                    res->kernels++;
                    res->clean += ok;
                }
                if (out && pass == 0 && ok)
                    fprintf(out, "%-28s %-26s %-7s %8.2f %8lld  %-15s %lld -> %lld\n", k->name,
                            mutant, "found", st.first_finding_s,
                            (long long)st.first_finding_execs, gg_class_name(st.first_class),
                            (long long)st.first_groups, (long long)st.first_groups_min);
                else if (out && pass == 0)
                    fprintf(out, "%-28s %-26s %-7s %8s %8lld  %-15s\n", k->name, mutant, "MISSED",
                            "-", (long long)st.execs, "-");
                else if (out)
                    fprintf(out, "%-28s %-26s %-7s %8.2f %8lld  %-15s\n", k->name, "(correct)",
                            ok ? "clean" : st.unique_sigs ? "FAULTS" : "UNRUN", st.seconds,
                            (long long)st.execs,
                            ok || !st.unique_sigs
                                ? "-"
                                : gg_class_name(st.worst_new != GG_CLASS_PASS ? st.worst_new
                                                                              : st.first_class));
                if (out && !ok && pass == 1 && !st.unique_sigs)
                    fprintf(out, "    %s; kept in %s\n", why, dir);
                else if (out && !ok && pass == 1)
                    fprintf(out, "    %lld signatures, first %s; kept in %s\n",
                            (long long)st.unique_sigs, st.first_signature, dir);
                if (out)
                    fflush(out);
                if (ok || pass == 0)
                    remove_tree(dir);
            }
        }
    }
    if (out) {
        fprintf(out, "selftest: %d of %d mutants found, %d of %d correct kernels clean",
                res->found, res->mutants, res->clean, res->kernels);
        if (sk.total)
            fprintf(out, "; %d kernel%s skipped (cannot run here)", sk.total,
                    sk.total == 1 ? "" : "s");
        fprintf(out, "%s\n", res->stopped ? " (interrupted)" : "");
    }
    return GG_OK;
}

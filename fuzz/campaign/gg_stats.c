/*
 * gg_stats.c — what a campaign tells the world about its progress: the statistics it writes to
 * `fuzzer_stats` and `plot_data` (through the store's statistics files, gg_stats_files.c), the
 * live status line for a terminal, and libFuzzer's `stat::` lines with the reason the campaign
 * stopped. Rates are execs over elapsed wall time; the supervisor keeps the counters.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fuzz/campaign/campaign_int.h"

const char *gg_stop_name(enum gg_stop s)
{
    static const char *const names[] = {
        [GG_STOP_NONE] = "none",       [GG_STOP_TIME] = "time budget",
        [GG_STOP_RUNS] = "runs",       [GG_STOP_FILE] = "stop file",
        [GG_STOP_SIGNAL] = "signal",   [GG_STOP_FINDING] = "finding",
        [GG_STOP_ERROR] = "error"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

/* Cases per second of wall time: of the campaign (rate) or of a count of its cases. */
static double rate_of(const struct gg_stats_view *v, int64_t execs)
{
    return v->elapsed_s > 0 ? (double)execs / v->elapsed_s : 0;
}

static double rate(const struct gg_stats_view *v)
{
    return rate_of(v, v->s->execs);
}

static void iso_time(double t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void camp_phases_add(struct gg_phase_sums *p, const struct gg_run_result *r, double worker_s)
{
    p->cases++;
    p->worker += worker_s;
    p->setup += r->phase.setup;
    p->alloc += r->phase.alloc;
    p->inputs += r->phase.inputs;
    p->runs += r->phase.runs;
    p->kernel += 2 * r->kernel_seconds; /* the runs under the two workspace poisons */
    p->reference += r->phase.reference;
    if (r->device_reference)
        p->device_reference += r->phase.reference;
    p->compare += r->phase.compare;
    p->release += r->phase.release;
}

/* The phases of a case in fuzzer_stats and the final lines (gg_case_phases) with their sums:
   rows[] gets those the campaign's kernel has; their count. */
struct phase_row {
    const char *key, *label;
    double sum;
};

static size_t phase_rows(const struct gg_campaign_stats *s, struct phase_row rows[GG_CASE_PHASES])
{
    const struct gg_phase_sums *p = &s->phases;
    /* in the order of gg_case_phases */
    const double sums[GG_CASE_PHASES] = {p->worker, p->setup,     p->alloc,   p->inputs, p->runs,
                                         p->kernel, p->reference, p->compare, p->release};
    size_t n = 0;
    for (size_t i = 0; i < GG_CASE_PHASES; i++)
        if (s->gpu_kernel || !gg_case_phases[i].gpu_only)
            rows[n++] = (struct phase_row){gg_case_phases[i].key, gg_case_phases[i].label, sums[i]};
    return n;
}

/* The GPU's busy fraction, estimated: the kernel's runs and the device reference over the wall
   time of the campaign's GPUs (-1: not a GPU kernel or no time yet). Several workers' GPU work
   overlaps, so the estimate may pass 1. */
static double gpu_busy(const struct gg_stats_view *v)
{
    const struct gg_campaign_stats *s = v->s;
    if (!s->gpu_kernel || v->elapsed_s <= 0)
        return -1;
    int gpus = s->n_gpus > 0 ? s->n_gpus : 1;
    return (s->phases.kernel + s->phases.device_reference) / (v->elapsed_s * gpus);
}

int gg_campaign_unverified(const struct gg_campaign_stats *s, char *why, size_t why_len)
{
    int64_t not_run = s->errors + s->refused;
    if (s->execs == 0 && s->stop != GG_STOP_NONE) {
        snprintf(why, why_len, "no case ran: the kernel was not verified");
        return 1;
    }
    if (s->execs > 0 && not_run >= s->execs) {
        snprintf(why, why_len, "none of the %lld cases could run (%lld errors, %lld refused): the "
                 "kernel was not verified", (long long)s->execs, (long long)s->errors,
                 (long long)s->refused);
        return 1;
    }
    if (s->execs > 0 && s->errors > s->execs / 2) {
        snprintf(why, why_len, "%lld of the %lld cases could not run (errors): more than half",
                 (long long)s->errors, (long long)s->execs);
        return 1;
    }
    if (why_len > 0)
        why[0] = '\0';
    return 0;
}

/* The statistics of v, in fuzzer_stats order. */
static enum gg_status stats_of(const struct gg_stats_view *v, struct gg_fuzzer_stats *out)
{
    const struct gg_campaign_stats *s = v->s;
    char start[32], now[32];
    iso_time(v->start_wall, start, sizeof start);
    iso_time(v->start_wall + v->elapsed_s, now, sizeof now);
    const char *mutant = v->mutant && v->mutant[0] ? v->mutant : "none";
    struct gg_fuzzer_stats *o = out;
    enum gg_status st = GG_OK;
#define ADD(key, ...) \
    do { \
        if (st == GG_OK) \
            st = gg_fuzzer_stats_add(o, key, __VA_ARGS__); \
    } while (0)
    ADD("start_time", "%s", start);
    ADD("last_update", "%s", now);
    ADD("run_time", "%.1f", v->elapsed_s);
    ADD("seed", "%llu", (unsigned long long)v->seed);
    ADD("command_line", "%s", v->command_line ? v->command_line : "");
    ADD("replay_command", "%s", v->replay_command ? v->replay_command : "ggfuzz --replay");
    ADD("artifacts", "%s", v->artifacts ? v->artifacts : "");
    ADD("ggfuzz_version", "%s", GG_VERSION);
    ADD("kernel", "%s", v->kernel);
    ADD("mutant", "%s", mutant);
    ADD("workers", "%d", v->workers);
    if (v->shard_count > 0)
        ADD("shard", "%d/%d", v->shard_index, v->shard_count);
    ADD("next_case", "%llu", (unsigned long long)s->next_case);
    ADD("execs_done", "%lld", (long long)s->execs);
    ADD("execs_per_sec", "%.1f", rate(v));
    ADD("replayed", "%lld", (long long)s->replayed);
    ADD("possibly_fixed", "%lld", (long long)s->possibly_fixed);
    if (v->shard_count > 0) {
        ADD("imported", "%lld", (long long)s->imported);
        ADD("sync_seconds", "%.3f", s->sync_s);
    }
    ADD("corpus_count", "%lld", (long long)s->corpus_count);
    ADD("new_units", "%lld", (long long)s->new_units);
    ADD("features_total", "%lld", (long long)s->features);
    ADD("last_new_feature_s", "%.1f", s->last_new_s);
    ADD("faults_total", "%lld", (long long)s->faults_total);
    for (int c = GG_CLASS_PASS + 1; c < GG_CLASS_COUNT; c++) {
        char key[32];
        snprintf(key, sizeof key, "faults_%s", gg_class_name((enum gg_class)c));
        ADD(key, "%lld", (long long)s->faults[c]);
    }
    ADD("faults_unique", "%lld", (long long)s->unique_sigs);
    ADD("faults_new", "%lld", (long long)s->new_sigs);
    ADD("faults_stored_new", "%lld", (long long)s->stored_sigs);
    ADD("minimized", "%lld", (long long)s->minimized);
    ADD("minimize_seconds", "%.1f", s->minimize_s);
    ADD("confirmations", "%lld", (long long)s->confirmations);
    ADD("confirm_seconds", "%.1f", s->confirm_s);
    ADD("buckets", "%lld", (long long)s->buckets);
    ADD("buckets_new", "%lld", (long long)s->new_buckets);
    ADD("untriaged", "%lld", (long long)s->untriaged);
    ADD("last_fault_s", "%.1f", s->last_fault_s);
    ADD("worker_restarts", "%lld", (long long)s->worker_restarts);
    ADD("worker_kills", "%lld", (long long)s->worker_kills);
    ADD("crashes_unconfirmed", "%lld", (long long)s->crashes_unconfirmed);
    ADD("faults_history", "%lld", (long long)s->faults_history);
    ADD("faults_unconfirmed", "%lld", (long long)s->faults_unconfirmed);
    ADD("timeouts", "%lld", (long long)s->timeouts);
    ADD("refused", "%lld", (long long)s->refused);
    ADD("errors", "%lld", (long long)s->errors);
    char why[160];
    if (gg_campaign_unverified(s, why, sizeof why))
        ADD("not_verified", "%s", why);
    ADD("min_snr_margin_db", "%.2f", s->min_snr_margin_db);
    ADD("max_offset_bits", "%d", s->max_offset_bits);
    ADD("slowest_exec_ms", "%.1f", 1e3 * s->slowest_s);
    if (s->phases.cases > 0) {
        struct phase_row rows[GG_CASE_PHASES];
        size_t n = phase_rows(s, rows);
        for (size_t i = 0; i < n; i++)
            ADD(rows[i].key, "%.3f", 1e3 * rows[i].sum / (double)s->phases.cases);
    }
    if (gpu_busy(v) >= 0)
        ADD("gpu_busy_estimate", "%.2f", gpu_busy(v));
    ADD("stop_reason", "%s", gg_stop_name(s->stop));
    if (s->n_gpus > 0) {
        struct gg_gpus gpus = {.n = s->n_gpus};
        char list[GG_GPUS_MAX * 6];
        for (int g = 0; g < s->n_gpus; g++)
            gpus.id[g] = s->gpu[g].ordinal;
        gg_gpus_format(&gpus, list, sizeof list);
        ADD("gpus", "%s", list);
    }
    for (int g = 0; g < s->n_gpus; g++) {
        const struct gg_gpu_stats *d = &s->gpu[g];
        char key[64];
#define ADD_GPU(name, ...) \
    do { \
        snprintf(key, sizeof key, "gpu%d_%s", d->ordinal, name); \
        ADD(key, __VA_ARGS__); \
    } while (0)
        ADD_GPU("workers", "%d", d->workers);
        ADD_GPU("execs_done", "%lld", (long long)d->execs);
        ADD_GPU("execs_per_sec", "%.1f", rate_of(v, d->execs));
        ADD_GPU("faults_total", "%lld", (long long)d->faults);
        ADD_GPU("faults_new", "%lld", (long long)d->new_sigs);
        ADD_GPU("worker_restarts", "%lld", (long long)d->restarts);
        ADD_GPU("retired", "%d", d->retired);
#undef ADD_GPU
    }
#undef ADD
    return st == GG_OK ? camp_freedom_stats(o, &s->freedoms) : st;
}

enum gg_status gg_stats_write(const char *dir, const struct gg_stats_view *v, char *err,
                              size_t err_len)
{
    struct gg_fuzzer_stats fs = {0};
    enum gg_status st = stats_of(v, &fs);
    if (st != GG_OK)
        snprintf(err, err_len, "%s/%s: out of memory", dir, GG_FUZZER_STATS_FILE);
    else
        st = gg_fuzzer_stats_write(dir, &fs, err, err_len);
    gg_fuzzer_stats_free(&fs);
    return st;
}

enum gg_status gg_stats_plot(const char *dir, const struct gg_stats_view *v, char *err,
                             size_t err_len)
{
    const struct gg_campaign_stats *s = v->s;
    struct gg_plot_row r = {.v = {
        [GG_PLOT_RELATIVE_TIME] = v->elapsed_s,
        [GG_PLOT_EXECS_DONE] = (double)s->execs,
        [GG_PLOT_EXECS_PER_SEC] = rate(v),
        [GG_PLOT_CORPUS_COUNT] = (double)s->corpus_count,
        [GG_PLOT_FEATURES_TOTAL] = (double)s->features,
        [GG_PLOT_FAULTS_TOTAL] = (double)s->faults_total,
        [GG_PLOT_FAULTS_UNIQUE] = (double)s->unique_sigs,
        [GG_PLOT_FAULTS_NEW] = (double)s->new_sigs,
        [GG_PLOT_WORKER_RESTARTS] = (double)s->worker_restarts,
        [GG_PLOT_TIMEOUTS] = (double)s->timeouts,
        [GG_PLOT_MIN_SNR_MARGIN_DB] = s->min_snr_margin_db,
        [GG_PLOT_MAX_OFFSET_BITS] = s->max_offset_bits,
        [GG_PLOT_BUCKETS] = (double)s->buckets,
        [GG_PLOT_BUCKETS_NEW] = (double)s->new_buckets,
    }};
    return gg_plot_data_append(dir, &r, err, err_len);
}

void gg_stats_status_line(FILE *f, const struct gg_stats_view *v)
{
    const struct gg_campaign_stats *s = v->s;
    char classes[256] = "";
    size_t used = 0;
    for (int c = GG_CLASS_PASS + 1; c < GG_CLASS_COUNT && used < sizeof classes; c++)
        if (s->faults[c])
            used += (size_t)snprintf(classes + used, sizeof classes - used, " %s:%lld",
                                     gg_class_name((enum gg_class)c), (long long)s->faults[c]);
    char left[32] = "";
    if (v->budget_s > 0)
        snprintf(left, sizeof left, " left %.0fs", fmax(0, v->budget_s - v->elapsed_s));
    char shard[40] = "";
    if (v->shard_count > 0)
        snprintf(shard, sizeof shard, "[shard %d/%d] ", v->shard_index, v->shard_count);
    fprintf(f, "\r%s#%lld exec/s %.0f corp %lld ft %lld faults %lld%s%s%s sigs %lld new %lld "
            "bugs %lld new %lld %.0fs%s\033[K", shard, (long long)s->execs, rate(v),
            (long long)s->corpus_count, (long long)s->features, (long long)s->faults_total,
            used ? " (" : "", classes + (used > 0), used ? ")" : "", (long long)s->unique_sigs,
            (long long)s->new_sigs, (long long)s->buckets, (long long)s->new_buckets,
            v->elapsed_s, left);
    fflush(f);
}

void gg_stats_clear_line(FILE *f)
{
    fputs("\r\033[K", f);
}

void gg_stats_final(FILE *f, const struct gg_stats_view *v)
{
    const struct gg_campaign_stats *s = v->s;
    fprintf(f, "stat::number_of_executed_units: %lld\n", (long long)s->execs);
    fprintf(f, "stat::average_exec_per_sec:     %.0f\n", rate(v));
    fprintf(f, "stat::new_units_added:          %lld\n", (long long)s->new_units);
    fprintf(f, "stat::slowest_unit_time_sec:    %.3f\n", s->slowest_s);
    fprintf(f, "stat::unique_faults:            %lld\n", (long long)s->unique_sigs);
    fprintf(f, "stat::new_faults:               %lld\n", (long long)s->new_sigs);
    fprintf(f, "stat::buckets:                  %lld\n", (long long)s->buckets);
    fprintf(f, "stat::new_buckets:              %lld\n", (long long)s->new_buckets);
    fprintf(f, "stat::untriaged:                %lld\n", (long long)s->untriaged);
    fprintf(f, "stat::worker_restarts:          %lld\n", (long long)s->worker_restarts);
    fprintf(f, "stat::timeouts:                 %lld\n", (long long)s->timeouts);
    fprintf(f, "stat::worker_kills:             %lld\n", (long long)s->worker_kills);
    fprintf(f, "stat::crashes_unconfirmed:      %lld\n", (long long)s->crashes_unconfirmed);
    fprintf(f, "stat::history_dependent:        %lld\n", (long long)s->faults_history);
    fprintf(f, "stat::faults_unconfirmed:       %lld\n", (long long)s->faults_unconfirmed);
    fprintf(f,
            "stat::triage:                   %lld confirmations (%.1f s), %lld minimised "
            "(%.1f s)\n",
            (long long)s->confirmations, s->confirm_s, (long long)s->minimized, s->minimize_s);
    fprintf(f, "stat::possibly_fixed:           %lld\n", (long long)s->possibly_fixed);
    fprintf(f, "stat::refused:                  %lld\n", (long long)s->refused);
    fprintf(f, "stat::errors:                   %lld\n", (long long)s->errors);
    if (s->phases.cases > 0) {
        struct phase_row rows[GG_CASE_PHASES];
        size_t n = phase_rows(s, rows);
        fprintf(f, "stat::case_time_ms:             %.2f a case in a worker:",
                1e3 * rows[0].sum / (double)s->phases.cases);
        for (size_t i = 1; i < n; i++) {
            double ms = 1e3 * rows[i].sum / (double)s->phases.cases;
            if (strcmp(rows[i].key, "case_ms_kernel") == 0)
                fprintf(f, " (%s %.2f)", rows[i].label, ms);
            else
                fprintf(f, "%s %s %.2f", i == 1 ? "" : ",", rows[i].label, ms);
        }
        fprintf(f, " (mean of %lld cases)\n", (long long)s->phases.cases);
    }
    if (gpu_busy(v) >= 0)
        fprintf(f,
                "stat::gpu_busy_estimate:        %.0f%% (the kernel's runs and the device "
                "reference over the wall time)\n",
                100 * gpu_busy(v));
    for (int g = 0; g < s->n_gpus; g++) {
        const struct gg_gpu_stats *d = &s->gpu[g];
        fprintf(f, "stat::gpu%d: %d worker%s, %lld units (%.0f/s), %lld faults, %lld new, %lld "
                "restarts%s\n", d->ordinal, d->workers, d->workers == 1 ? "" : "s", (long long)d->execs,
                rate_of(v, d->execs), (long long)d->faults,
                (long long)d->new_sigs, (long long)d->restarts, d->retired ? ", given up" : "");
    }
    camp_freedom_final(f, &s->freedoms);
    char why[128];
    switch (s->stop) {
    case GG_STOP_TIME: snprintf(why, sizeof why, "the time budget (%g s) was spent", v->budget_s); break;
    case GG_STOP_RUNS: snprintf(why, sizeof why, "%lld runs were done", (long long)v->max_runs); break;
    case GG_STOP_FILE: snprintf(why, sizeof why, "the stop file appeared"); break;
    case GG_STOP_SIGNAL: snprintf(why, sizeof why, "it was interrupted by a signal"); break;
    case GG_STOP_FINDING: snprintf(why, sizeof why, "a new finding was made"); break;
    case GG_STOP_ERROR: snprintf(why, sizeof why, "of an error"); break;
    default: snprintf(why, sizeof why, "of an unknown reason"); break;
    }
    fprintf(f, "INFO: stopped because %s (%s) after %.1f s\n", why, gg_stop_name(s->stop),
            v->elapsed_s);
}

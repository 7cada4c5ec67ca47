/*
 * gg_stats.c — what a campaign tells the world about its progress: `fuzzer_stats` (AFL's
 * `key : value` lines, rewritten atomically), `plot_data` (one CSV row per tick), the live status
 * line for a terminal, and libFuzzer's `stat::` lines with the reason the campaign stopped.
 * Rates are execs over elapsed wall time; the supervisor keeps the counters.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static double rate(const struct gg_stats_view *v)
{
    return v->elapsed_s > 0 ? (double)v->s->execs / v->elapsed_s : 0;
}

/* Joins dir and name into out; 0 or -1 when it does not fit. */
static int join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static void iso_time(double t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void write_body(FILE *f, const struct gg_stats_view *v)
{
    const struct gg_campaign_stats *s = v->s;
    char start[32], now[32];
    iso_time(v->start_wall, start, sizeof start);
    iso_time(v->start_wall + v->elapsed_s, now, sizeof now);
    fprintf(f, "start_time        : %s\n", start);
    fprintf(f, "last_update       : %s\n", now);
    fprintf(f, "run_time          : %.1f\n", v->elapsed_s);
    fprintf(f, "seed              : %llu\n", (unsigned long long)v->seed);
    fprintf(f, "command_line      : %s\n", v->command_line ? v->command_line : "");
    fprintf(f, "ggfuzz_version    : %s\n", GG_VERSION);
    fprintf(f, "kernel            : %s\n", v->kernel);
    fprintf(f, "mutant            : %s\n", v->mutant && v->mutant[0] ? v->mutant : "none");
    fprintf(f, "workers           : %d\n", v->workers);
    fprintf(f, "execs_done        : %lld\n", (long long)s->execs);
    fprintf(f, "execs_per_sec     : %.1f\n", rate(v));
    fprintf(f, "replayed          : %lld\n", (long long)s->replayed);
    fprintf(f, "possibly_fixed    : %lld\n", (long long)s->possibly_fixed);
    fprintf(f, "corpus_count      : %lld\n", (long long)s->corpus_count);
    fprintf(f, "new_units         : %lld\n", (long long)s->new_units);
    fprintf(f, "features_total    : %lld\n", (long long)s->features);
    fprintf(f, "last_new_feature_s: %.1f\n", s->last_new_s);
    fprintf(f, "faults_total      : %lld\n", (long long)s->faults_total);
    for (int c = GG_CLASS_PASS + 1; c < GG_CLASS_COUNT; c++) {
        char key[32];
        snprintf(key, sizeof key, "faults_%s", gg_class_name((enum gg_class)c));
        fprintf(f, "%-18s: %lld\n", key, (long long)s->faults[c]);
    }
    fprintf(f, "faults_unique     : %lld\n", (long long)s->unique_sigs);
    fprintf(f, "faults_new        : %lld\n", (long long)s->new_sigs);
    fprintf(f, "faults_stored_new : %lld\n", (long long)s->stored_sigs);
    fprintf(f, "minimized         : %lld\n", (long long)s->minimized);
    fprintf(f, "buckets           : %lld\n", (long long)s->buckets);
    fprintf(f, "buckets_new       : %lld\n", (long long)s->new_buckets);
    fprintf(f, "untriaged         : %lld\n", (long long)s->untriaged);
    fprintf(f, "last_fault_s      : %.1f\n", s->last_fault_s);
    fprintf(f, "worker_restarts   : %lld\n", (long long)s->worker_restarts);
    fprintf(f, "worker_kills      : %lld\n", (long long)s->worker_kills);
    fprintf(f, "crashes_unconfirmed: %lld\n", (long long)s->crashes_unconfirmed);
    fprintf(f, "timeouts          : %lld\n", (long long)s->timeouts);
    fprintf(f, "refused           : %lld\n", (long long)s->refused);
    fprintf(f, "errors            : %lld\n", (long long)s->errors);
    fprintf(f, "min_snr_margin_db : %.2f\n", s->min_snr_margin_db);
    fprintf(f, "max_offset_bits   : %d\n", s->max_offset_bits);
    fprintf(f, "slowest_exec_ms   : %.1f\n", 1e3 * s->slowest_s);
    fprintf(f, "stop_reason       : %s\n", gg_stop_name(s->stop));
}

enum gg_status gg_stats_write(const char *dir, const struct gg_stats_view *v, char *err,
                              size_t err_len)
{
    char path[4096];
    if (join(path, sizeof path, dir, "fuzzer_stats")) {
        snprintf(err, err_len, "%s: path too long", dir);
        return GG_E_INVAL;
    }
    char *tmp = gg_tmpfile_name(path);
    FILE *f = tmp ? fopen(tmp, "w") : NULL;
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, tmp ? strerror(errno) : "out of memory");
        free(tmp);
        return GG_E_IO;
    }
    write_body(f, v);
    int bad = ferror(f);
    enum gg_status st = GG_OK;
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        unlink(tmp);
        st = GG_E_IO;
    }
    free(tmp);
    return st;
}

enum gg_status gg_stats_plot(const char *dir, const struct gg_stats_view *v, char *err,
                             size_t err_len)
{
    char path[4096];
    if (join(path, sizeof path, dir, "plot_data")) {
        snprintf(err, err_len, "%s: path too long", dir);
        return GG_E_INVAL;
    }
    struct stat sb;
    int fresh = stat(path, &sb) != 0 || sb.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return GG_E_IO;
    }
    const struct gg_campaign_stats *s = v->s;
    if (fresh)
        fputs("# relative_time, execs_done, execs_per_sec, corpus_count, features_total, "
              "faults_total, faults_unique, faults_new, worker_restarts, timeouts, "
              "min_snr_margin_db, max_offset_bits, buckets, buckets_new\n", f);
    fprintf(f, "%.1f, %lld, %.1f, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %.2f, %d, %lld, %lld\n",
            v->elapsed_s, (long long)s->execs, rate(v), (long long)s->corpus_count,
            (long long)s->features, (long long)s->faults_total, (long long)s->unique_sigs,
            (long long)s->new_sigs, (long long)s->worker_restarts, (long long)s->timeouts,
            s->min_snr_margin_db, s->max_offset_bits, (long long)s->buckets,
            (long long)s->new_buckets);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return GG_E_IO;
    }
    return GG_OK;
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
    fprintf(f, "\r#%lld exec/s %.0f corp %lld ft %lld faults %lld%s%s%s sigs %lld new %lld "
            "bugs %lld new %lld %.0fs%s\033[K", (long long)s->execs, rate(v),
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
    fprintf(f, "stat::possibly_fixed:           %lld\n", (long long)s->possibly_fixed);
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

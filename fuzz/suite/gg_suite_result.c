/*
 * gg_suite_result.c — what is done with a suite result once its cases are in: a line per case,
 * the counts by verdict, the gate's reasons and the summary, and the outputs (the result JSON,
 * a baseline, and through the writers the command line hands in, JUnit XML and the report). A
 * run (gg_suite.c) and a merge of shards' results (gg_suite_merge.c) share them, so that both
 * judge and write alike.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/suite/suite_int.h"

static void fmt_db(const struct gg_rnum *v, char *buf, size_t len)
{
    if (v->set)
        snprintf(buf, len, "%.1f dB", v->v);
    else
        snprintf(buf, len, "exact");
}

void gg_suite_print_case(FILE *f, const struct gg_rcase *c)
{
    static const char *const tags[][2] = {{"pass", "PASS"}, {"fail", "FAIL"},
                                          {"regressed", "REGR"}, {"skipped", "SKIP"},
                                          {"error", "ERROR"}};
    const char *tag = "?";
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (!strcmp(c->verdict, tags[i][0]))
            tag = tags[i][1];
    char where[160] = "";
    if (c->model[0])
        snprintf(where, sizeof where, "%s ep%lld %s %s  ", c->model,
                 (long long)(c->ep >= 0 ? c->ep : 0), c->routing, c->phase);
    fprintf(f, "%-6s %s%s%s  %s%s [%s]", tag, c->kernel, c->mutant[0] ? "+" : "", c->mutant,
            where, c->shape, c->recipe);
    if (!c->cls[0]) {
        fprintf(f, "  %s\n       %s\n", c->label, c->reason);
        return;
    }
    char worst[32], thr[32], pooled[32];
    fmt_db(&c->worst_group_snr_db, worst, sizeof worst);
    fmt_db(&c->threshold_db, thr, sizeof thr);
    fmt_db(&c->pooled_snr_db, pooled, sizeof pooled);
    fprintf(f, "  worst group");
    if (c->worst_group >= 0)
        fprintf(f, " g%lld", (long long)c->worst_group);
    fprintf(f, " %s vs %s", worst, thr);
    if (c->margin_db.set)
        fprintf(f, " (%+.1f)", c->margin_db.v);
    fprintf(f, ", pooled %s  [%.2f s]  %s\n", pooled, c->seconds.v, c->label);
    if (!strcmp(c->verdict, "fail"))
        fprintf(f, "       signature %s\n       %s\n", c->signature, c->detail);
    else if (!strcmp(c->verdict, "regressed"))
        fprintf(f, "       %s\n", c->reason);
}

/* The cases judged against a baseline: those it holds a record of, and those it does not. */
static void baseline_counts(const struct gg_rsuite *res, int *found, int *missing)
{
    *found = *missing = 0;
    for (size_t i = 0; i < res->n_cases; i++) {
        const char *b = res->cases[i].baseline_record;
        *found += b && !strcmp(b, "found");
        *missing += b && !strcmp(b, "missing");
    }
}

/* A baseline that matches none of the cases it judged compared nothing: a golden result saved
   for another kernel, or a kernel renamed since. */
static int baseline_matches_none(const struct gg_rsuite *res)
{
    int found, missing;
    baseline_counts(res, &found, &missing);
    return found == 0 && missing > 0;
}

/* The gate's reasons, counted from the records: a failing class (SNR below threshold or a
   structural fault), an SNR drop past allowed_db against the baseline, a perf regression, a case
   that could not run, a baseline that holds none of the cases. */
static void gate_reasons(const struct gg_rsuite *res, double allowed_db, int n[GG_N_REASONS])
{
    memset(n, 0, GG_N_REASONS * sizeof *n);
    if (baseline_matches_none(res))
        baseline_counts(res, &(int){0}, &n[GG_R_UNMATCHED]);
    for (size_t i = 0; i < res->n_cases; i++) {
        const struct gg_rcase *c = &res->cases[i];
        if (!strcmp(c->verdict, "error"))
            n[GG_R_ERRORS]++;
        else if (c->cls[0] && strcmp(c->cls, gg_class_name(GG_CLASS_PASS)))
            n[strcmp(c->cls, gg_class_name(GG_CLASS_SNR)) ? GG_R_STRUCTURAL : GG_R_BELOW]++;
        else if (c->cls[0] && c->snr_drop_db.set && c->snr_drop_db.v > allowed_db)
            n[GG_R_DROPPED]++;
        n[GG_R_SLOWER] += c->perf_regressed != 0;
    }
}

size_t gg_suite_reasons(const struct gg_rsuite *res, double allowed_db,
                        char text[GG_N_REASONS][128])
{
    static const char *const what[GG_N_REASONS] = {
        "below threshold", "with a structural fault",
        "dropped more than the allowed SNR margin against the baseline",
        "slower than the baseline", "could not run",
        "not in the baseline, which holds a record of none of this run's cases"};
    int n[GG_N_REASONS];
    size_t k = 0;
    gate_reasons(res, allowed_db, n);
    for (int r = 0; r < GG_N_REASONS; r++)
        if (n[r])
            snprintf(text[k++], sizeof text[0], "%d case%s %s", n[r], n[r] == 1 ? "" : "s",
                     what[r]);
    return k;
}

void gg_suite_count(struct gg_rsuite *res, struct gg_suite_summary *sum)
{
    gg_suite_result_count(res);
    sum->cases = (int)res->n_counted;
    sum->pass = (int)res->n_pass;
    sum->fail = (int)res->n_fail;
    sum->regressed = (int)res->n_regressed;
    sum->skipped = (int)res->n_skipped;
    sum->errors = (int)res->n_errors;
    sum->gate_failed = sum->fail + sum->regressed + sum->errors > 0 || baseline_matches_none(res);
}

/* JUnit: one test case per case and kernel, grouped by tier and model (o's writer). */
static enum gg_status write_junit(const struct gg_suite_opts *o, const struct gg_rsuite *res,
                                  const char *path, char *err, size_t err_len)
{
    if (o->write_junit == NULL) {
        snprintf(err, err_len, "%s: no JUnit writer given", path);
        return GG_E_INVAL;
    }
    return o->write_junit(res, path, err, err_len);
}

/* The HTML and Markdown report of the result JSON at json_path (o's writer). */
static enum gg_status write_report(const struct gg_suite_opts *o, const char *json_path,
                                   char *err, size_t err_len)
{
    if (o->write_report == NULL) {
        snprintf(err, err_len, "%s: no report writer given", o->report_dir);
        return GG_E_INVAL;
    }
    return o->write_report(json_path, o->report_dir, err, err_len);
}

void gg_suite_write_outputs(const struct gg_suite_opts *o, const struct gg_rsuite *res,
                            struct gg_suite_summary *sum)
{
    char err[1024], path[4096];
    const char *json_path = o->json_path;
    if (!json_path && o->report_dir) { /* the report reads the result from a file */
        mkdir(o->report_dir, 0777);
        snprintf(path, sizeof path, "%s/suite.json", o->report_dir);
        json_path = path;
    }
    const char *targets[] = {json_path, o->save_baseline_path};
    for (int i = 0; i < 2; i++)
        if (targets[i] && gg_suite_result_save(res, targets[i], err, sizeof err) != GG_OK) {
            fprintf(o->out, "ggfuzz suite: %s\n", err);
            sum->output_failed = 1;
            if (i == 0)
                json_path = NULL;
        }
    if (o->junit_path && write_junit(o, res, o->junit_path, err, sizeof err) != GG_OK) {
        fprintf(o->out, "ggfuzz suite: %s\n", err);
        sum->output_failed = 1;
    }
    if (o->report_dir && json_path) {
        if (write_report(o, json_path, err, sizeof err) != GG_OK) {
            fprintf(o->out, "ggfuzz suite: report: %s\n", err);
            sum->output_failed = 1;
        } else {
            fprintf(o->out, "report: %s/index.html\n", o->report_dir);
        }
    }
}

void gg_suite_print_summary(FILE *f, const struct gg_rsuite *res,
                            const struct gg_suite_summary *sum, double seconds, int cpu_timed)
{
    const struct gg_suite_summary *m = sum;
    fprintf(f, "suite %s: %d cases: %d pass, %d fail, %d regressed, %d skipped, %d errors  "
               "[%.1f s]\n", res->tier[0] ? res->tier : "custom", m->cases, m->pass, m->fail,
            m->regressed, m->skipped, m->errors, seconds);
    struct gg_rnum ph[5] = {{0, 0}};
    for (size_t i = 0; i < res->n_cases; i++) {
        const struct gg_rcase *c = &res->cases[i];
        const struct gg_rnum *v[5] = {&c->setup_s, &c->inputs_s, &c->runs_s, &c->reference_s,
                                      &c->compare_s};
        for (int j = 0; j < 5; j++)
            if (v[j]->set)
                ph[j] = (struct gg_rnum){ph[j].v + v[j]->v, 1};
    }
    if (ph[0].set)
        fprintf(f, "time in the cases: setup %.1f s, inputs %.1f s, runs %.1f s, reference %.1f s, "
                   "compare %.1f s (a device reference overlaps the comparison)\n",
                ph[0].v, ph[1].v, ph[2].v, ph[3].v, ph[4].v);
    if (res->perf && cpu_timed)
        fprintf(f, "note: --perf timed CPU kernels: the perf rule is meant for GPU kernels and was "
                   "applied to the CPU times all the same\n");
    int found, missing;
    baseline_counts(res, &found, &missing);
    if (missing > 0 && found == 0)
        fprintf(f, "baseline %s holds no record of the %d case%s judged (same case id and "
                   "kernel): nothing was compared, the gate fails\n",
                res->baseline, missing, missing == 1 ? "" : "s");
    else if (missing > 0)
        fprintf(f, "WARNING: %d of %d case%s judged %s no record in baseline %s (same case id "
                   "and kernel): not compared\n",
                missing, found + missing, found + missing == 1 ? "" : "s",
                missing == 1 ? "has" : "have", res->baseline);
    fprintf(f, "gate: %s", m->gate_failed ? "FAIL" : "PASS");
    for (size_t i = 0; i < res->n_reasons; i++)
        fprintf(f, "%s%s", i ? "; " : " (", res->reasons[i]);
    fprintf(f, "%s\n", res->n_reasons ? ")" : "");
}

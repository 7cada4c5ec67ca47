/*
 * gg_report_text.c — the terminal report: one line per case with the verdict and the numbers a
 * kernel engineer looks at first (worst group SNR against its threshold, max error ratio, which
 * groups fail), then the signature and a one-line detail for failures.
 */
#include <math.h>
#include <stdio.h>

#include "reports/gg_report.h"

static void fmt_db(double db, char *buf, size_t len)
{
    if (isinf(db))
        snprintf(buf, len, db > 0 ? "exact" : "-inf dB");
    else
        snprintf(buf, len, "%.1f dB", db);
}

static void print_groups(FILE *f, const struct gg_verdict *v)
{
    if (v->n_fail_groups == 0)
        return;
    fprintf(f, ", failing groups");
    int64_t shown = v->n_fail_groups < GG_VERDICT_GROUPS_MAX ? v->n_fail_groups : GG_VERDICT_GROUPS_MAX;
    for (int64_t i = 0; i < shown; i++)
        fprintf(f, "%s%lld", i ? "," : " ", (long long)v->fail_groups[i]);
    if (v->n_fail_groups > shown)
        fprintf(f, ",... (%lld)", (long long)v->n_fail_groups);
}

void gg_report_text_case(FILE *f, const struct gg_report_case *rc, int replay, int verbose)
{
    char shape[160] = "";
    if (rc->kase)
        gg_case_shape(rc->kase, shape, sizeof shape);
    if (rc->status != GG_OK) {
        int refused = rc->status == GG_E_UNSUPPORTED || rc->status == GG_E_NOMEM;
        fprintf(f, "%-6s %s: %s\n", refused ? "REFUSED" : "ERROR", rc->path,
                rc->error ? rc->error : "failed");
        return;
    }
    const struct gg_verdict *v = &rc->result->verdict;
    const char *tag = replay ? (rc->replay_ok ? "OK" : "DIFF") : (v->cls == GG_CLASS_PASS ? "PASS" : "FAIL");
    char worst[32], thr[32];
    fmt_db(v->worst_snr_db, worst, sizeof worst);
    fmt_db(v->snr_fail_db, thr, sizeof thr);
    const struct gg_run_result *res = rc->result;
    fprintf(f, "%-6s %s  %s  %s%s%s  %s", tag, rc->path, gg_class_name(v->cls), res->kernel,
            res->mutant[0] ? "+" : "", res->mutant, shape);
    fprintf(f, "  worst group snr %s", worst);
    if (v->worst_group >= 0)
        fprintf(f, " (g%lld)", (long long)v->worst_group);
    fprintf(f, " vs %s, max err ratio %.3g", thr, v->max_ratio);
    print_groups(f, v);
    fprintf(f, "  [%.2f s]\n", rc->result->total_seconds);
    if (v->cls != GG_CLASS_PASS)
        fprintf(f, "       signature %s\n       %s\n", v->signature, v->detail);
    int n_after = rc->kase ? gg_case_after_count(rc->kase) : 0;
    if (n_after > 0)
        fprintf(f, "       ran after the %d case%s it fails only after (@after), in one process\n",
                n_after, n_after == 1 ? "" : "s");
    if (verbose && v->advisory[0])
        fprintf(f, "       advisory: %s\n", v->advisory);
    if (replay && !rc->replay_ok)
        fprintf(f, "       expected %s: did not reproduce\n", rc->expect ? rc->expect : "class=pass");
    if (verbose || res->certified > 0) {
        fprintf(f, "       reference on the %s", res->device_reference ? "device" : "host");
        if (res->certified > 0)
            fprintf(f, ", certified by MPFR on %lld outputs and the group corners",
                    (long long)res->certified);
        fprintf(f, "\n");
    }
    if (verbose)
        fprintf(f, "       time: setup %.2f s, inputs %.2f s, runs %.2f s, reference %.2f s, "
                   "compare %.2f s\n",
                res->phase.setup, res->phase.alloc + res->phase.inputs, res->phase.runs, res->phase.reference,
                res->phase.compare);
    if (verbose && rc->result->compared) {
        const struct gg_compare *cmp = &rc->result->cmp;
        if (!isnan(cmp->src_snr_db)) {
            char out_db[32], ref_db[32];
            fmt_db(cmp->src_snr_db, out_db, sizeof out_db);
            fmt_db(cmp->ref_src_snr_db, ref_db, sizeof ref_db);
            fprintf(f, "       source snr %s (the exact reference: %s) over %lld outputs with "
                       "signal\n", out_db, ref_db, (long long)cmp->src_n);
        }
        for (int64_t g = 0; g < cmp->n_groups; g++) {
            const struct gg_group_metrics *gm = &cmp->groups[g];
            char db[32];
            fmt_db(gm->snr_db, db, sizeof db);
            fprintf(f, "       group %lld: %lld outputs, snr %s, max ratio %.3g, past bound %lld, nan %lld, unwritten %lld",
                    (long long)g, (long long)gm->elems, db, gm->max_ratio, (long long)gm->n_bound,
                    (long long)gm->n_nan, (long long)gm->n_unwritten);
            if (!isnan(gm->src_snr_db)) {
                char ref_db[32];
                fmt_db(gm->src_snr_db, db, sizeof db);
                fmt_db(gm->ref_src_snr_db, ref_db, sizeof ref_db);
                fprintf(f, ", source snr %s (reference %s)", db, ref_db);
            }
            fputc('\n', f);
            if (gm->worst.row >= 0 && gm->max_ratio > 0)
                fprintf(f, "         worst element (%lld, %lld): out %.9g ref %.17g sum|ab| %.6g bound %.6g\n",
                        (long long)gm->worst.row, (long long)gm->worst.col, gm->worst.out,
                        gm->worst.ref, gm->worst.abs, gm->worst.tau);
        }
    }
}

/*
 * gg_report_json.c — machine-readable results (jansson): one object per case with the case id,
 * verdict, signature, advisory and the metrics of every group (with the SNRs against the
 * unquantised source where the case has one, its first bad element and its worst one), or why
 * it did not run (refused or an error), written atomically.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "reports/gg_report.h"
#include "reports/report_int.h"

struct gg_report_json {
    json_t *cases;
};

struct gg_report_json *gg_report_json_open(void)
{
    struct gg_report_json *j = calloc(1, sizeof *j);
    if (j && !(j->cases = json_array())) {
        free(j);
        return NULL;
    }
    return j;
}

json_t *gg_report_json_num(double x)
{
    if (isnan(x))
        return json_string("nan");
    if (isinf(x))
        return json_string(x > 0 ? "inf" : "-inf");
    return json_real(x);
}

/* JSON has no infinities: exact results are reported as null with "exact": true beside them. */
static json_t *db_value(double db)
{
    return isfinite(db) ? json_real(db) : json_null();
}

/* The SNRs against the unquantised source, the output's and the exact reference's, into o
   (nothing when the case has no source). */
static void src_fields(json_t *o, double src_db, double ref_src_db)
{
    if (isnan(src_db))
        return;
    json_object_set_new(o, "src_snr_db", db_value(src_db));
    json_object_set_new(o, "ref_src_snr_db", db_value(ref_src_db));
}

/* One group's metrics; pos is the packed index (reference order) of its first output and cols
   the width of its block, which place its first bad element (row and column in the block). */
static json_t *group_object(const struct gg_group_metrics *gm, int64_t pos, int64_t cols)
{
    json_t *o = json_pack("{s:I, s:o, s:b, s:f, s:I, s:I, s:I}", "outputs", (json_int_t)gm->elems,
                          "snr_db", db_value(gm->snr_db), "exact",
                          isinf(gm->snr_db) && gm->snr_db > 0, "max_ratio", gm->max_ratio,
                          "past_bound", (json_int_t)gm->n_bound, "nan", (json_int_t)gm->n_nan,
                          "unwritten", (json_int_t)gm->n_unwritten);
    if (!o)
        return NULL;
    src_fields(o, gm->src_snr_db, gm->ref_src_snr_db);
    if (gm->first_bad >= pos && cols > 0) {
        int64_t at = gm->first_bad - pos;
        json_object_set_new(o, "first_bad", json_pack("{s:I, s:I}", "row", (json_int_t)(at / cols),
                                                      "col", (json_int_t)(at % cols)));
    }
    if (gm->worst.row >= 0)
        json_object_set_new(
            o, "worst",
            json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "row", (json_int_t)gm->worst.row, "col",
                      (json_int_t)gm->worst.col, "output", gg_report_json_num(gm->worst.out),
                      "reference", gg_report_json_num(gm->worst.ref), "abs",
                      gg_report_json_num(gm->worst.abs), "bound",
                      gg_report_json_num(gm->worst.tau)));
    return o;
}

void gg_report_json_add(struct gg_report_json *j, const struct gg_report_case *rc)
{
    if (!j)
        return;
    json_t *o = json_pack("{s:s}", "path", rc->path);
    if (rc->kase) {
        char id[GG_CASE_ID_HEX + 1], shape[160];
        gg_case_id(rc->kase, id);
        gg_case_shape(rc->kase, shape, sizeof shape);
        json_object_set_new(o, "id", json_string(id));
        const struct gg_run_result *res = rc->status == GG_OK ? rc->result : NULL;
        json_object_set_new(o, "kernel", json_string(res ? res->kernel : rc->kase->kernel));
        json_object_set_new(o, "mutant", json_string(res ? res->mutant : rc->kase->mutant));
        json_object_set_new(o, "shape", json_string(shape));
    }
    if (rc->status != GG_OK) {
        json_object_set_new(o, "error", json_string(rc->error ? rc->error : "failed"));
        json_object_set_new(o, "refused", json_boolean(rc->status == GG_E_UNSUPPORTED ||
                                                       rc->status == GG_E_NOMEM));
        json_array_append_new(j->cases, o);
        return;
    }
    const struct gg_verdict *v = &rc->result->verdict;
    json_object_set_new(o, "class", json_string(gg_class_name(v->cls)));
    json_object_set_new(o, "signature", json_string(v->signature));
    json_object_set_new(o, "detail", json_string(v->detail));
    if (v->advisory[0])
        json_object_set_new(o, "advisory", json_string(v->advisory));
    json_object_set_new(o, "worst_snr_db", db_value(v->worst_snr_db));
    json_object_set_new(o, "worst_group", json_integer(v->worst_group));
    json_object_set_new(o, "snr_fail_db", json_real(v->snr_fail_db));
    json_object_set_new(o, "max_ratio", json_real(v->max_ratio));
    json_object_set_new(o, "seconds", json_real(rc->result->total_seconds));
    json_t *phase = json_object();
    json_object_set_new(phase, "setup", json_real(rc->result->phase.setup));
    json_object_set_new(phase, "inputs", json_real(rc->result->phase.alloc + rc->result->phase.inputs));
    json_object_set_new(phase, "runs", json_real(rc->result->phase.runs));
    json_object_set_new(phase, "reference", json_real(rc->result->phase.reference));
    json_object_set_new(phase, "compare", json_real(rc->result->phase.compare));
    json_object_set_new(o, "phase_seconds", phase);
    if (rc->expect) {
        json_object_set_new(o, "expect", json_string(rc->expect));
        json_object_set_new(o, "reproduced", json_boolean(rc->replay_ok));
    }
    if (rc->result->compared) {
        const struct gg_compare *cmp = &rc->result->cmp;
        struct gg_kopt opts[GG_CASE_MAX_OPTS];
        struct gg_problem p;
        gg_case_problem(rc->kase, opts, &p);
        src_fields(o, cmp->src_snr_db, cmp->ref_src_snr_db);
        json_t *groups = json_array();
        int64_t pos = 0;
        for (int64_t g = 0; g < cmp->n_groups; g++) {
            struct gg_out_block b;
            gg_problem_out_block(&p, g, &b);
            json_array_append_new(groups, group_object(&cmp->groups[g], pos, b.cols));
            pos += cmp->groups[g].elems;
        }
        json_object_set_new(o, "groups", groups);
    }
    json_array_append_new(j->cases, o);
}

enum gg_status gg_report_json_write(struct gg_report_json *j, const char *path, char *err,
                                    size_t err_len)
{
    struct gg_atomic a;
    enum gg_status st = gg_atomic_open(&a, path, "JSON report", err, err_len);
    if (st != GG_OK)
        return st;
    json_t *root = json_pack("{s:s, s:i, s:O}", "ggfuzz", GG_VERSION, "thresholds_version",
                             GG_THRESHOLDS_VERSION, "cases", j->cases);
    if (root == NULL)
        a.bad = 1;
    else if (json_dumpf(root, a.f, JSON_INDENT(2)) != 0)
        gg_atomic_fail(&a);
    json_decref(root);
    return gg_atomic_commit(&a, 0, err, err_len);
}

void gg_report_json_free(struct gg_report_json *j)
{
    if (j) {
        json_decref(j->cases);
        free(j);
    }
}

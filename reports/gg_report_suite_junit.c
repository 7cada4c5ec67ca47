/*
 * gg_report_suite_junit.c — the JUnit view of a suite result: one test case per case and
 * kernel, grouped by tier and model, whose outcome follows the case's verdict, and its XML file.
 * `ggfuzz suite` writes its JUnit XML through it, from the same records it saves as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report_int.h"

/* Room for the strings of one test case. */
struct jstrings {
    char name[320], classname[160], text[1024];
};

static void fmt_db(const struct gg_rnum *v, char *buf, size_t len)
{
    if (v->set)
        snprintf(buf, len, "%.1f dB", v->v);
    else
        snprintf(buf, len, "exact");
}

enum gg_status gg_report_suite_junit(const struct gg_rsuite *s, struct gg_junit_suite *js,
                                     char *err, size_t err_len)
{
    size_t n = s->n_cases;
    const char *tier = s->tier && s->tier[0] ? s->tier : "custom";
    /* One block: the test cases, then their strings, then the suite's name. */
    size_t head = (n ? n : 1) * sizeof(struct gg_junit_case);
    head = (head + _Alignof(struct jstrings) - 1) / _Alignof(struct jstrings) *
           _Alignof(struct jstrings);
    char *block = calloc(1, head + n * sizeof(struct jstrings) + 64);
    memset(js, 0, sizeof *js);
    if (block == NULL) {
        snprintf(err, err_len, "out of memory making the JUnit suite of %s", tier);
        return GG_E_NOMEM;
    }
    struct gg_junit_case *jc = (struct gg_junit_case *)(void *)block;
    struct jstrings *str = (struct jstrings *)(void *)(block + head);
    char *sname = (char *)(str + n);
    for (size_t i = 0; i < n; i++) {
        const struct gg_rcase *c = &s->cases[i];
        snprintf(str[i].classname, sizeof str[i].classname, "suite.%s.%s", tier,
                 c->model[0] ? c->model : "case");
        snprintf(str[i].name, sizeof str[i].name, "%s on %s", c->label, c->kernel);
        const char *v = c->verdict;
        jc[i].classname = str[i].classname;
        jc[i].name = str[i].name;
        jc[i].seconds = c->seconds.v;
        jc[i].outcome = !strcmp(v, "pass") ? GG_JUNIT_PASS
                        : !strcmp(v, "skipped") ? GG_JUNIT_SKIPPED
                        : !strcmp(v, "error") ? GG_JUNIT_ERROR : GG_JUNIT_FAILURE;
        jc[i].message = c->reason;
        jc[i].type = !strcmp(v, "regressed") ? "regressed" : c->cls[0] ? c->cls : "error";
        char worst[32], thr[32];
        fmt_db(&c->worst_group_snr_db, worst, sizeof worst);
        fmt_db(&c->threshold_db, thr, sizeof thr);
        snprintf(str[i].text, sizeof str[i].text, "%s\nworst group SNR %s vs %s\nsignature %s\n%s",
                 c->shape, worst, thr, c->signature, c->reason);
        jc[i].text = str[i].text;
    }
    snprintf(sname, 64, "ggfuzz suite %s", tier);
    *js = (struct gg_junit_suite){sname, s->started, s->hostname, s->seconds.v, jc, n};
    return GG_OK;
}

void gg_report_suite_junit_free(struct gg_junit_suite *js)
{
    free((void *)js->cases);
    memset(js, 0, sizeof *js);
}

enum gg_status gg_report_suite_junit_write(const struct gg_rsuite *s, const char *path, char *err,
                                           size_t err_len)
{
    struct gg_junit_suite js;
    enum gg_status st = gg_report_suite_junit(s, &js, err, err_len);
    if (st != GG_OK)
        return st;
    st = gg_report_junit_write(&js, path, err, err_len);
    gg_report_suite_junit_free(&js);
    return st;
}

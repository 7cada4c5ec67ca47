/*
 * test_suite_gate.c — the suite runner and gate on small suite-style cases: correct kernels pass
 * and the result JSON has every field of the contract; an SNR mutant fails the gate and the
 * output names the case; a baseline whose SNR is planted 3 dB higher flags the drop (and a wider
 * allowed drop does not); a baseline that holds none of the run's cases fails the gate, one that
 * lacks some warns, one with a record twice is refused; the perf rule against baseline times (the 4 us floor, 1.005·t + 0.5);
 * --kernel runs a case on every kernel that supports it and skips the others.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "fuzz/suite/gg_suite.h"

/* Empty groups before full ones, so a weight pointer that skips empty groups reads the wrong
   expert (mutant zero_len_ptr_skip). */
static const char CASE_FWD[] =
    "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\ndtypes a=bf16 b=bf16 c=bf16\n"
    "scaling none\ngroups 4\ngroup_lens 0 40 0 70\nn 96\nk 256\n"
    "data a=normal(0,1) b=uniform(-1,1)\nseed 0x11\n"
    "@suite model=test-moe ep=8 routing=skewed phase=decode recipe=bf16 tier=quick\n";
static const char CASE_DGRAD[] =
    "ggfuzz-case 1\nop grouped_dgrad\nkernel grouped_bf16_cpu_tiled\ndtypes a=bf16 b=bf16 c=bf16\n"
    "scaling none\ngroups 3\ngroup_lens 0 33 20\nn 64\nk 160\n"
    "data a=normal(0,1) b=uniform(-1,1)\nseed 0x12\n"
    "@suite model=test-moe ep=1 routing=extreme phase=decode recipe=bf16 tier=quick\n";

struct fixture {
    char dir[64];
    char out_path[128], json_path[128];
};

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void setup(struct fixture *fx)
{
    snprintf(fx->dir, sizeof fx->dir, "/tmp/ggfuzz-gate-XXXXXX");
    cr_assert_not_null(mkdtemp(fx->dir));
    char path[128];
    snprintf(path, sizeof path, "%s/a_fwd.case", fx->dir);
    write_file(path, CASE_FWD);
    snprintf(path, sizeof path, "%s/b_dgrad.case", fx->dir);
    write_file(path, CASE_DGRAD);
    snprintf(fx->out_path, sizeof fx->out_path, "%s/out.txt", fx->dir);
    snprintf(fx->json_path, sizeof fx->json_path, "%s/result.json", fx->dir);
}

static void teardown(struct fixture *fx)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    cr_assert_eq(system(cmd), 0);
}

/* Runs the suite over the fixture's directory with o (paths, out and json filled in here). */
static struct gg_suite_summary run(struct fixture *fx, struct gg_suite_opts *o, char *text,
                                   size_t len)
{
    const char *paths[1] = {fx->dir};
    o->paths = paths;
    o->n_paths = 1;
    o->tier = "quick";
    o->json_path = fx->json_path;
    o->out = fopen(fx->out_path, "w");
    cr_assert_not_null(o->out);
    if (o->snr_drop_db == 0)
        o->snr_drop_db = 1.0;
    struct gg_suite_summary sum;
    char err[1024];
    cr_assert_eq(gg_suite_run(o, &sum, err, sizeof err), GG_OK, "%s", err);
    fclose(o->out);
    FILE *f = fopen(fx->out_path, "r");
    size_t n = fread(text, 1, len - 1, f);
    text[n] = '\0';
    fclose(f);
    return sum;
}

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    cr_assert_not_null(j, "%s: %s", path, je.text);
    return j;
}

static char text[1 << 16];

Test(suite_gate, correct_kernels_pass_with_every_field)
{
    struct fixture fx;
    setup(&fx);
    struct gg_suite_opts o = {.gate = 1};
    struct gg_suite_summary s = run(&fx, &o, text, sizeof text);
    cr_expect_eq(s.cases, 2);
    cr_expect_eq(s.pass, 2, "%s", text);
    cr_expect_eq(s.gate_failed, 0);
    cr_expect(strstr(text, "gate: PASS"), "%s", text);
    cr_expect(strstr(text, "PASS   grouped_bf16_cpu_tiled  test-moe ep8 skewed decode  grouped_fwd "
                           "bf16-bf16-bf16 G=4 M=110 N=96 K=256 [bf16]  worst group g"), "%s", text);
    json_t *j = load(fx.json_path);
    cr_expect_str_eq(json_string_value(json_object_get(j, "format")), "ggfuzz-suite");
    cr_expect_eq(json_integer_value(json_object_get(j, "version")), 1);
    static const char *const top[] = {"tier", "thresholds_version", "ggfuzz_version", "started",
                                      "seconds", "host", "gate", "summary", "cases"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        cr_expect_not_null(json_object_get(j, top[i]), "missing %s", top[i]);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "gate"), "verdict")),
                     "pass");
    json_t *c = json_array_get(json_object_get(j, "cases"), 0);
    static const char *const fields[] = {
        "id", "file", "kernel", "model", "ep", "routing", "phase", "op", "recipe", "shape",
        "verdict", "class", "reason", "threshold_db", "worst_group", "worst_group_snr_db",
        "pooled_snr_db", "margin_db", "baseline_snr_db", "snr_drop_db", "groups", "time_us",
        "baseline_time_us", "perf_regressed", "signature"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cr_expect_not_null(json_object_get(c, fields[i]), "case lacks %s", fields[i]);
    cr_expect_eq(strlen(json_string_value(json_object_get(c, "id"))), GG_CASE_ID_HEX);
    cr_expect_eq(json_integer_value(json_object_get(c, "ep")), 8);
    cr_expect_str_eq(json_string_value(json_object_get(c, "op")), "grouped_fwd");
    cr_expect_eq(json_real_value(json_object_get(c, "threshold_db")), 50.0);
    double worst = json_real_value(json_object_get(c, "worst_group_snr_db"));
    cr_expect(worst > 50 && worst < 60, "%g", worst);
    cr_expect_lt(fabs(json_real_value(json_object_get(c, "margin_db")) - (worst - 50)), 1e-9);
    /* Every group is listed; an empty group has no SNR. */
    json_t *g = json_object_get(c, "groups");
    cr_assert_eq(json_array_size(g), 4);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(g, 1), "rows")), 40);
    cr_expect(json_is_null(json_object_get(json_array_get(g, 0), "snr_db")));
    cr_expect(json_is_real(json_object_get(json_array_get(g, 3), "snr_db")));
    json_decref(j);
    teardown(&fx);
}

Test(suite_gate, snr_mutant_fails_naming_the_case)
{
    struct fixture fx;
    setup(&fx);
    const char *kernels[] = {"grouped_bf16_cpu_serial"};
    struct gg_suite_opts o = {.gate = 1, .kernels = kernels, .n_kernels = 1,
                              .mutant = "zero_len_ptr_skip"};
    struct gg_suite_summary s = run(&fx, &o, text, sizeof text);
    cr_expect_eq(s.fail, 2, "%s", text);
    cr_expect_eq(s.gate_failed, 1);
    cr_expect(strstr(text, "FAIL   grouped_bf16_cpu_serial+zero_len_ptr_skip"), "%s", text);
    cr_expect(strstr(text, "a_fwd\n") && strstr(text, "b_dgrad\n"), "%s", text);
    cr_expect(strstr(text, "signature snr/grouped_bf16_cpu_serial"), "%s", text);
    cr_expect(strstr(text, "gate: FAIL (2 cases below threshold)"), "%s", text);
    json_t *j = load(fx.json_path);
    json_t *c = json_array_get(json_object_get(j, "cases"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(c, "verdict")), "fail");
    cr_expect_str_eq(json_string_value(json_object_get(c, "class")), "snr");
    cr_expect_lt(json_real_value(json_object_get(c, "margin_db")), 0);
    cr_expect_neq(strlen(json_string_value(json_object_get(c, "signature"))), 0);
    json_decref(j);
    teardown(&fx);
}

/* Adds delta to a numeric field of every case of a saved result. */
static void plant(const char *path, const char *field, double delta, double set)
{
    json_t *j = load(path);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(j, "cases"), i, c) {
        double v = isnan(set) ? json_number_value(json_object_get(c, field)) + delta : set;
        json_object_set_new(c, field, json_real(v));
    }
    cr_assert_eq(json_dump_file(j, path, 0), 0);
    json_decref(j);
}

/* The fixture, run once with its result saved as the baseline base (len bytes: the path). */
static void setup_with_baseline(struct fixture *fx, char *base, size_t len)
{
    setup(fx);
    snprintf(base, len, "%s/baseline.json", fx->dir);
    struct gg_suite_opts o = {.gate = 1, .save_baseline_path = base};
    cr_assert_eq(run(fx, &o, text, sizeof text).gate_failed, 0, "%s", text);
}

Test(suite_gate, baseline_catches_a_planted_3db_drop)
{
    struct fixture fx;
    char base[160];
    setup_with_baseline(&fx, base, sizeof base);
    /* Unchanged baseline: no drop. */
    struct gg_suite_opts same = {.gate = 1, .baseline_path = base};
    struct gg_suite_summary s = run(&fx, &same, text, sizeof text);
    cr_expect_eq(s.pass, 2, "%s", text);
    plant(base, "worst_group_snr_db", 3.0, NAN);
    struct gg_suite_opts b = {.gate = 1, .baseline_path = base};
    s = run(&fx, &b, text, sizeof text);
    cr_expect_eq(s.regressed, 2, "%s", text);
    cr_expect_eq(s.gate_failed, 1);
    cr_expect(strstr(text, "REGR   grouped_bf16_cpu_tiled"), "%s", text);
    cr_expect(strstr(text, "dropped 3.00 dB against the baseline"), "%s", text);
    json_t *j = load(fx.json_path);
    json_t *c = json_array_get(json_object_get(j, "cases"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(c, "verdict")), "regressed");
    cr_expect_lt(fabs(json_real_value(json_object_get(c, "snr_drop_db")) - 3.0), 1e-9);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "gate"), "baseline")),
                     base);
    json_decref(j);
    /* A wider allowed drop passes. */
    struct gg_suite_opts wide = {.gate = 1, .baseline_path = base, .snr_drop_db = 5.0};
    cr_expect_eq(run(&fx, &wide, text, sizeof text).gate_failed, 0, "%s", text);
    teardown(&fx);
}

/* Gives record i of the baseline at path (every record: i < 0) to kernel. */
static void record_kernel(const char *path, int i, const char *kernel)
{
    json_t *j = load(path), *cases = json_object_get(j, "cases"), *c;
    size_t k;
    json_array_foreach(cases, k, c)
        if (i < 0 || (size_t)i == k)
            json_object_set_new(c, "kernel", json_string(kernel));
    cr_assert_eq(json_dump_file(j, path, 0), 0);
    json_decref(j);
}

/* A baseline saved for another kernel (or before a kernel was renamed) compares nothing: the
   gate fails and says so. One that lacks some of the cases warns with their count. */
Test(suite_gate, a_baseline_that_matches_no_case_fails_the_gate)
{
    struct fixture fx;
    char base[160];
    setup_with_baseline(&fx, base, sizeof base);
    struct gg_suite_opts same = {.gate = 1, .baseline_path = base};
    cr_expect_eq(run(&fx, &same, text, sizeof text).gate_failed, 0, "%s", text);
    cr_expect(!strstr(text, "WARNING") && !strstr(text, "no record"), "%s", text);
    record_kernel(base, 0, "grouped_bf16_cuda_persistent");
    struct gg_suite_opts some = {.gate = 1, .baseline_path = base};
    struct gg_suite_summary s = run(&fx, &some, text, sizeof text);
    cr_expect_eq(s.gate_failed, 0, "%s", text);
    cr_expect(strstr(text, "WARNING: 1 of 2 cases judged has no record in baseline "), "%s", text);
    json_t *j = load(fx.json_path);
    json_t *cases = json_object_get(j, "cases");
    const char *rec[2];
    for (size_t i = 0; i < 2; i++)
        rec[i] = json_string_value(json_object_get(json_array_get(cases, i), "baseline_record"));
    cr_expect(rec[0] && rec[1] && strcmp(rec[0], rec[1]) != 0, "baseline_record %s, %s",
              rec[0] ? rec[0] : "(none)", rec[1] ? rec[1] : "(none)");
    json_decref(j);
    record_kernel(base, -1, "grouped_bf16_cuda_persistent");
    struct gg_suite_opts none = {.gate = 1, .baseline_path = base};
    s = run(&fx, &none, text, sizeof text);
    cr_expect_eq(s.pass, 2, "%s", text);
    cr_expect_eq(s.gate_failed, 1, "%s", text);
    cr_expect(strstr(text, "holds no record of the 2 cases judged"), "%s", text);
    cr_expect(strstr(text, "gate: FAIL (2 cases not in the baseline, which holds a record of "
                           "none of this run's cases)"), "%s", text);
    j = load(fx.json_path);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "gate"), "verdict")),
                     "fail");
    json_decref(j);
    teardown(&fx);
}

/* Two records of one case on one kernel: which would judge is arbitrary, so the baseline is
   refused, naming the file and the record. */
Test(suite_gate, a_baseline_with_a_record_twice_is_refused)
{
    struct fixture fx;
    char base[160];
    setup_with_baseline(&fx, base, sizeof base);
    json_t *j = load(base), *cases = json_object_get(j, "cases");
    const char *id = json_string_value(json_object_get(json_array_get(cases, 0), "id"));
    char want[256];
    snprintf(want, sizeof want, "cases[2] records case %s on kernel grouped_bf16_cpu_tiled again "
             "(first at cases[0])", id);
    json_array_append(cases, json_array_get(cases, 0));
    cr_assert_eq(json_dump_file(j, base, 0), 0);
    json_decref(j);
    const char *paths[1] = {fx.dir};
    struct gg_suite_opts dup = {.gate = 1, .baseline_path = base, .paths = paths, .n_paths = 1,
                                .out = fopen(fx.out_path, "w")};
    struct gg_suite_summary sum;
    char err[1024] = "";
    cr_expect_neq(gg_suite_run(&dup, &sum, err, sizeof err), GG_OK, "accepted: %s", err);
    fclose(dup.out);
    cr_expect(strstr(err, base) && strstr(err, want), "%s", err);
    teardown(&fx);
}

Test(suite_gate, perf_rule_against_baseline_times)
{
    struct fixture fx;
    setup(&fx);
    char base[160];
    snprintf(base, sizeof base, "%s/baseline.json", fx.dir);
    struct gg_suite_opts o = {.perf = 1, .perf_runs = 3, .save_baseline_path = base};
    struct gg_suite_summary s = run(&fx, &o, text, sizeof text);
    cr_expect_eq(s.pass, 2, "%s", text);
    cr_expect(strstr(text, "the perf rule is meant for GPU kernels"), "%s", text);
    json_t *j = load(fx.json_path);
    double t = json_real_value(json_object_get(json_array_get(json_object_get(j, "cases"), 0),
                                               "time_us"));
    cr_expect_gt(t, 0);
    json_decref(j);
    /* Under 4 us of baseline time a case is not judged, however much slower it is now. */
    plant(base, "time_us", 0, 3.0);
    struct gg_suite_opts floor = {.gate = 1, .perf = 1, .perf_runs = 3, .baseline_path = base};
    s = run(&fx, &floor, text, sizeof text);
    cr_expect_eq(s.regressed, 0, "%s", text);
    cr_expect(strstr(text, "not judged"), "%s", text);
    /* From 4 us on, t > 1.005 t_base + 0.5 us regresses. */
    plant(base, "time_us", 0, 4.0);
    struct gg_suite_opts slow = {.gate = 1, .perf = 1, .perf_runs = 3, .baseline_path = base};
    s = run(&fx, &slow, text, sizeof text);
    cr_expect_eq(s.regressed, 2, "%s", text);
    cr_expect(strstr(text, "SLOWER"), "%s", text);
    cr_expect(strstr(text, "slower than the baseline"), "%s", text);
    /* A generous baseline time passes. */
    plant(base, "time_us", 0, 1e12);
    struct gg_suite_opts fast = {.gate = 1, .perf = 1, .perf_runs = 3, .baseline_path = base};
    cr_expect_eq(run(&fx, &fast, text, sizeof text).regressed, 0, "%s", text);
    teardown(&fx);
}

Test(suite_gate, kernels_that_do_not_support_a_case_skip_it)
{
    struct fixture fx;
    setup(&fx);
    const char *kernels[] = {"grouped_bf16_cpu_streams", "grouped_fp8_cpu_tiled"};
    struct gg_suite_opts o = {.gate = 1, .kernels = kernels, .n_kernels = 2};
    struct gg_suite_summary s = run(&fx, &o, text, sizeof text);
    cr_expect_eq(s.cases, 4);
    cr_expect_eq(s.pass, 2, "%s", text);
    cr_expect_eq(s.skipped, 2, "%s", text);
    cr_expect_eq(s.gate_failed, 0);
    cr_expect(strstr(text, "SKIP   grouped_fp8_cpu_tiled"), "%s", text);
    /* A mutant the kernel lacks is a skip too, with the reason. */
    const char *one[] = {"grouped_bf16_cpu_tiled"};
    struct gg_suite_opts m = {.gate = 1, .kernels = one, .n_kernels = 1, .mutant = "mx_k_tail"};
    s = run(&fx, &m, text, sizeof text);
    cr_expect_eq(s.skipped, 2, "%s", text);
    cr_expect(strstr(text, "has no mutant 'mx_k_tail'"), "%s", text);
    teardown(&fx);
}

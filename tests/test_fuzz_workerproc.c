/*
 * test_fuzz_workerproc.c — cases run one after another in one `ggfuzz worker` process
 * (gg_workerproc_run): the process lives from case to case, a case that ends it gets the verdict
 * a forked child's would, and the next case starts a fresh one. The minimiser that runs its
 * candidates there ends at the normal form it reaches with a fresh process per run, and starts
 * over in fresh processes when the case it ended at failed only because of the runs before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/minimize/gg_minimize.h"

#define STATEFUL GG_TEST_PLUGINS "/stateful.so"

static const char *const plugins[] = {STATEFUL};

static void setup(void)
{
    char err[1024];
    gg_registry_init();
    if (!gg_registry_find("grouped_bf16_weight_cache"))
        cr_assert_eq(gg_plugin_load(STATEFUL, err, sizeof err), GG_OK, "%s", err);
}

static void init_proc(struct gg_workerproc *p)
{
    struct gg_worker_launch how = {
        .exe = GGFUZZ_BIN, .plugins = plugins, .n_plugins = 1, .gpu = -1};
    gg_workerproc_init(p, &how);
}

static void parse(const char *text, struct gg_case *c)
{
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "test", c, err, sizeof err), GG_OK, "%s", err);
}

/* Two cases of the stateful plugin's kernel whose W has one address and shape and other values:
   under its mutant the second, run after the first in one process, gets the first's weights. */
static void weight_cache_case(int seed, struct gg_case *c)
{
    char text[512];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_weight_cache\n"
             "mutant stale_weight_cache\ndtypes a=bf16 b=bf16 c=f32\ngroups 2\ngroup_lens 8 8\n"
             "n 32\nk 32\nseed %d\n",
             seed);
    parse(text, c);
}

Test(workerproc, runs_cases_in_one_process_and_a_fresh_one_after_a_crash, .init = setup)
{
    struct gg_workerproc p;
    init_proc(&p);
    struct gg_case first, second, crash;
    weight_cache_case(1, &first);
    weight_cache_case(2, &second);
    parse("ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\nmutant read_past_end\n"
          "dtypes a=bf16 b=bf16 c=bf16\ngroups 2\ngroup_lens 3 5\nn 64\nk 64\nguard inputs=end\n"
          "seed 1\n",
          &crash);
    struct gg_run_result r;
    char err[1024];
    cr_assert_eq(gg_workerproc_run(&p, &first, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    /* the same process: the second case gets the first's cached weights */
    cr_assert_eq(gg_workerproc_run(&p, &second, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_SNR, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    cr_expect_eq(p.starts, 1);
    /* alone, in a fresh process, it passes */
    cr_assert_eq(gg_run_case_isolated(&second, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    /* a read past the end of A, flush against unmapped memory, kills the process: the verdict
       says where, as a forked child's does */
    cr_assert_eq(gg_workerproc_run(&p, &crash, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_CRASH, "%s", r.verdict.signature);
    struct gg_run_result alone;
    cr_assert_eq(gg_run_case_isolated(&crash, NULL, 30, &alone, err, sizeof err), GG_OK, "%s", err);
    cr_expect_str_eq(r.verdict.signature, alone.verdict.signature);
    gg_run_result_free(&r);
    gg_run_result_free(&alone);
    cr_expect_eq(p.pid, 0, "the process that died is reaped");
    /* the next case starts a fresh process, which has no cached weights */
    cr_assert_eq(gg_workerproc_run(&p, &second, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    cr_expect_eq(p.starts, 2);
    gg_workerproc_close(&p);
    gg_case_free(&first);
    gg_case_free(&second);
    gg_case_free(&crash);
}

Test(workerproc, a_case_past_its_limit_is_a_timeout_and_a_mutant_override_applies, .init = setup)
{
    setenv("STATEFUL_PLUGIN_DELAY_MS", "3000", 1); /* inherited by the worker process */
    struct gg_workerproc p;
    init_proc(&p);
    struct gg_case c;
    weight_cache_case(1, &c);
    struct gg_run_result r;
    char err[1024];
    struct gg_run_opts o = {.mutant = "none"};
    cr_assert_eq(gg_workerproc_run(&p, &c, &o, 0.5, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_TIMEOUT, "%s", r.verdict.signature);
    cr_expect_str_eq(r.mutant, "");
    cr_expect_eq(p.pid, 0, "the process past its limit is killed");
    gg_run_result_free(&r);
    unsetenv("STATEFUL_PLUGIN_DELAY_MS");
    gg_workerproc_close(&p);
    gg_case_free(&c);
}

Test(workerproc, a_program_that_is_no_worker_is_a_harness_failure, .init = setup)
{
    struct gg_workerproc p;
    struct gg_worker_launch how = {.exe = "/bin/true", .gpu = -1};
    gg_workerproc_init(&p, &how);
    struct gg_case c;
    weight_cache_case(1, &c);
    struct gg_run_result r;
    char err[1024];
    cr_expect_eq(gg_workerproc_run(&p, &c, NULL, 5, &r, err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, "/bin/true exited before it started"), "%s", err);
    cr_expect(p.start_failed);
    /* one that dies on a signal, and one that answers with something else */
    static const char *const dies[] = {"/bin/sh", "-c", "kill -SEGV $$"};
    static const char *const talks[] = {"/bin/sh", "-c", "echo not-a-worker-hello; exec sleep 30"};
    struct gg_worker_launch bad[] = {{.exe = "/bin/sh", .cmd = dies, .n_cmd = 3, .gpu = -1},
                                     {.exe = "/bin/sh", .cmd = talks, .n_cmd = 3, .gpu = -1}};
    const char *want[] = {"/bin/sh died before it started",
                          "/bin/sh did not announce itself as a ggfuzz worker"};
    for (int i = 0; i < 2; i++) {
        gg_workerproc_init(&p, &bad[i]);
        cr_expect_eq(gg_workerproc_run(&p, &c, NULL, 5, &r, err, sizeof err), GG_E_IO);
        cr_expect(strstr(err, want[i]), "%s", err);
        cr_expect_eq(p.pid, 0);
    }
    gg_case_free(&c);
}

/* The normal form a minimisation reaches, and its statistics. */
static void minimise(struct gg_case *c, const char *sig, struct gg_workerproc *proc,
                     struct gg_min_stats *ms)
{
    struct gg_min_opts mo = {.max_total_time_s = 120, .timeout_s = 30, .proc = proc};
    char err[1024];
    cr_assert_eq(gg_minimize(c, sig, &mo, ms, err, sizeof err), GG_OK, "%s", err);
}

/* The tail mutant's case of the given groups minimised with a fresh process per run (a) and
   with p (b): both end at the same case. */
static void minimise_both(int groups, const char *lens, struct gg_workerproc *p,
                          struct gg_min_stats *a, struct gg_min_stats *b)
{
    char text[512], err[1024], id_fresh[GG_CASE_ID_HEX + 1], id_p[GG_CASE_ID_HEX + 1];
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "mutant tail_rows_unwritten\ndtypes a=bf16 b=bf16 c=bf16\ngroups %d\n"
             "group_lens %s\nn 96\nk 64\nseed 5\n",
             groups, lens);
    struct gg_case fresh, in_p;
    parse(text, &fresh);
    parse(text, &in_p);
    struct gg_run_result r;
    cr_assert_eq(gg_run_case_isolated(&fresh, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_assert_neq(r.verdict.cls, GG_CLASS_PASS);
    minimise(&fresh, r.verdict.signature, NULL, a);
    minimise(&in_p, r.verdict.signature, p, b);
    gg_case_id(&fresh, id_fresh);
    gg_case_id(&in_p, id_p);
    cr_expect_str_eq(id_p, id_fresh);
    cr_expect_lt(a->elems_after, a->elems_before);
    cr_expect_str_eq(b->signature, a->signature);
    cr_expect_str_eq(b->detail, a->detail);
    gg_run_result_free(&r);
    gg_case_free(&fresh);
    gg_case_free(&in_p);
}

Test(workerproc, the_minimiser_reaches_the_same_case_with_its_candidates_in_one_process,
     .init = setup)
{
    struct gg_workerproc p;
    init_proc(&p);
    struct gg_min_stats a, b;
    minimise_both(4, "70 0 130 9", &p, &a, &b);
    cr_expect_lt(a.groups_after, a.groups_before);
    cr_expect_eq(b.restarted_fresh, 0);
    cr_expect_eq(p.starts, 1, "every candidate ran in one process");
    cr_expect_gt(b.attempts, 10);
    gg_workerproc_close(&p);
}

Test(workerproc, the_minimiser_runs_its_candidates_in_fresh_processes_when_no_worker_starts,
     .init = setup)
{
    struct gg_workerproc p;
    struct gg_worker_launch how = {.exe = "/bin/false", .gpu = -1};
    gg_workerproc_init(&p, &how);
    struct gg_min_stats a, b;
    minimise_both(3, "70 0 130", &p, &a, &b);
    cr_expect_eq(p.starts, 1, "one failed start, then fresh processes");
}

Test(workerproc, the_minimiser_starts_over_in_fresh_processes_when_history_made_a_case_fail,
     .init = setup)
{
    struct gg_workerproc p;
    init_proc(&p);
    struct gg_case first, second;
    weight_cache_case(1, &first);
    weight_cache_case(2, &second);
    struct gg_run_result r;
    char err[1024], id_before[GG_CASE_ID_HEX + 1], id_after[GG_CASE_ID_HEX + 1];
    /* the worker process has run the first case: the second fails there, not alone */
    cr_assert_eq(gg_workerproc_run(&p, &first, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    gg_run_result_free(&r);
    cr_assert_eq(gg_workerproc_run(&p, &second, NULL, 30, &r, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(r.verdict.cls, GG_CLASS_SNR, "%s", r.verdict.signature);
    cr_assert_eq(gg_case_expand(&second, err, sizeof err), GG_OK, "%s", err);
    gg_case_id(&second, id_before);
    struct gg_min_stats ms;
    minimise(&second, r.verdict.signature, &p, &ms);
    cr_expect_eq(ms.restarted_fresh, 1);
    gg_case_id(&second, id_after);
    cr_expect_str_eq(id_after, id_before, "no candidate fails alone: the case stays as found");
    cr_expect_eq(ms.groups_after, ms.groups_before);
    gg_run_result_free(&r);
    gg_workerproc_close(&p);
    gg_case_free(&first);
    gg_case_free(&second);
}

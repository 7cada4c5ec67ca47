/*
 * test_fuzz_minimize.c — the minimiser on the mutants' corpus cases: the signature survives, no
 * size grows, a bug one group shows ends with one group, the result still fails with its mutant
 * and passes without it, progress and other faults land on disk, and tested candidates are not
 * run again.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/minimize/gg_minimize.h"

#define MUTANTS GG_SOURCE_DIR "/corpus/mutants/"
/* Budget of one minimisation: the cases below reach their fixpoint in a second or two; the
   budget only bounds a loaded machine. */
#define BUDGET_S 10.0
/* Runs one minimisation of these small cases may take, the cache working. */
#define MAX_ATTEMPTS 400

struct minimised {
    struct gg_case orig, c;
    struct gg_min_stats st;
    char sig[GG_SIGNATURE_MAX];
    char dir[64], progress[96], findings[96];
};

/* Verdict of c run in a child process, with mutant overriding the case's own when not NULL. */
static struct gg_verdict verdict_of(const struct gg_case *c, const char *mutant)
{
    struct gg_run_opts o = {.mutant = mutant};
    struct gg_run_result r;
    char err[512];
    enum gg_status st = gg_run_case_isolated(c, &o, 60, &r, err, sizeof err);
    cr_assert_eq(st, GG_OK, "run: %s", err);
    struct gg_verdict v = r.verdict;
    gg_run_result_free(&r);
    return v;
}

static int64_t total_rows(const struct gg_case *c)
{
    if (c->lens == NULL)
        return c->m;
    int64_t m = 0;
    for (int64_t g = 0; g < c->groups; g++)
        m += c->lens[g];
    return m;
}

/* Minimises case c (taken over by m) with progress and findings in a fresh directory, its runs
   paced to duty of the wall time (0: unpaced) until pace_fd says otherwise. */
static void minimise_paced(struct gg_case *c, int repeats, double duty, int pace_fd,
                           struct minimised *m)
{
    memset(m, 0, sizeof *m);
    char err[512];
    cr_assert_eq(gg_case_copy(&m->orig, c), GG_OK);
    m->c = *c;
    struct gg_verdict v = verdict_of(&m->c, NULL);
    cr_assert_neq(v.cls, GG_CLASS_PASS, "the starting case must fail");
    snprintf(m->sig, sizeof m->sig, "%s", v.signature);
    snprintf(m->dir, sizeof m->dir, "/tmp/ggfuzz-min-XXXXXX");
    cr_assert_not_null(mkdtemp(m->dir));
    snprintf(m->progress, sizeof m->progress, "%s/progress.case", m->dir);
    snprintf(m->findings, sizeof m->findings, "%s/findings", m->dir);
    cr_assert_eq(mkdir(m->findings, 0755), 0);
    struct gg_min_opts o = {.max_total_time_s = BUDGET_S,
                            .repeats = repeats,
                            .timeout_s = 60,
                            .progress_path = m->progress,
                            .findings_dir = m->findings,
                            .duty = duty,
                            .pace_fd = pace_fd};
    enum gg_status st = gg_minimize(&m->c, m->sig, &o, &m->st, err, sizeof err);
    cr_assert_eq(st, GG_OK, "minimize: %s", err);
}

static void minimise_case(struct gg_case *c, int repeats, struct minimised *m)
{
    minimise_paced(c, repeats, 0, 0, m);
}

static void minimise_file(const char *name, int repeats, struct minimised *m)
{
    char path[512], err[512];
    struct gg_case c;
    snprintf(path, sizeof path, MUTANTS "%s", name);
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
    minimise_case(&c, repeats, m);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void minimised_free(struct minimised *m)
{
    remove_tree(m->dir);
    gg_case_free(&m->orig);
    gg_case_free(&m->c);
}

/* Every other fault met on the way is a findings record with a signature of its own. */
static void check_findings(const struct minimised *m)
{
    DIR *d = opendir(m->findings);
    cr_assert_not_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strstr(e->d_name, ".case") == NULL || e->d_name[0] == '.')
            continue;
        char path[512], err[512];
        struct gg_case f;
        snprintf(path, sizeof path, "%s/%s", m->findings, e->d_name);
        cr_assert_eq(gg_case_load(path, &f, err, sizeof err), GG_OK, "%s", err);
        const char *expect = gg_case_meta(&f, "expect");
        cr_assert_not_null(expect, "%s has no @expect", path);
        cr_expect_null(strstr(expect, m->sig), "%s holds the signature being minimised", path);
        cr_expect_str_eq(f.mutant, m->orig.mutant);
        gg_case_free(&f);
        files++;
    }
    closedir(d);
    cr_expect_eq(files > 0, m->st.other_faults > 0, "%d files for %d other faults", files,
                 m->st.other_faults);
}

/* The properties every minimisation must have. */
static void check_minimised(const struct minimised *m)
{
    const struct gg_min_stats *st = &m->st;
    struct gg_verdict v = verdict_of(&m->c, NULL);
    cr_expect_str_eq(v.signature, m->sig, "the minimised case lost its signature");
    cr_expect_eq(verdict_of(&m->c, "none").cls, GG_CLASS_PASS,
                 "the minimised case fails without its mutant");
    cr_expect_leq(st->groups_after, st->groups_before);
    cr_expect_leq(st->elems_after, st->elems_before);
    cr_expect_lt(st->elems_after, st->elems_before, "nothing was shrunk");
    cr_expect_leq(m->c.n, m->orig.n);
    cr_expect_leq(m->c.k, m->orig.k);
    cr_expect_leq(total_rows(&m->c), total_rows(&m->orig));
    cr_expect_gt(st->kept, 0);
    cr_expect_leq(st->attempts, MAX_ATTEMPTS);
    cr_expect_geq(st->attempts, st->kept);

    struct gg_case p;
    char err[512], id[GG_CASE_ID_HEX + 1], pid[GG_CASE_ID_HEX + 1];
    cr_assert_eq(gg_case_load(m->progress, &p, err, sizeof err), GG_OK, "progress: %s", err);
    if (st->seconds < BUDGET_S) { /* stopped at the fixpoint, not by the clock */
        cr_expect_geq(st->rounds, 2, "a fixpoint takes a round that keeps nothing");
        gg_case_id(&m->c, id);
        gg_case_id(&p, pid);
        cr_expect_str_eq(pid, id, "progress is saved after the last successful round");
    }
    cr_expect_str_eq(verdict_of(&p, NULL).signature, m->sig, "progress lost the signature");
    gg_case_free(&p);
    check_findings(m);
}

/* A bug that needs an empty group: deleting that group fails, and merging it into its left
   neighbour later builds the very same case, which the cache answers without a run. */
static void expect_cache_answered(const struct minimised *m)
{
    cr_expect_gt(m->st.cache_hits, 0, "a repeated candidate ran again");
}

Test(minimize, zero_len_ptr_skip_keeps_the_empty_group)
{
    struct minimised m;
    minimise_file("zero_len_ptr_skip.case", 1, &m);
    check_minimised(&m);
    int64_t empty = 0;
    for (int64_t g = 0; g < m.c.groups; g++)
        empty += m.c.lens[g] == 0;
    cr_expect_gt(empty, 0, "an empty group is what the bug needs");
    expect_cache_answered(&m);
    minimised_free(&m);
}

Test(minimize, n_tail_batched_ends_with_one_batch)
{
    struct minimised m;
    minimise_file("n_tail.case", 1, &m);
    check_minimised(&m);
    cr_expect_eq(m.st.groups_after, 1);
    cr_expect_eq(m.c.groups, 1);
    /* The tail survives: N stays past one 64-wide tile and off its multiples. */
    cr_expect_gt(m.c.n, 64);
    cr_expect_neq(m.c.n % 64, 0);
    minimised_free(&m);
}

Test(minimize, wgrad_zero_uninit)
{
    struct minimised m;
    minimise_file("wgrad_zero_uninit.case", 1, &m);
    check_minimised(&m);
    cr_expect_lt(m.st.groups_after, m.st.groups_before);
    cr_expect_eq(m.c.n_opts, 0, "split_k is not needed by this bug");
    expect_cache_answered(&m);
    minimised_free(&m);
}

Test(minimize, mx_k_tail_keeps_k_in_mx_blocks)
{
    struct minimised m;
    minimise_file("mx_k_tail.case", 1, &m);
    check_minimised(&m);
    cr_expect_eq(m.c.groups, 1, "every group shows this bug: one is enough");
    cr_expect_eq(m.c.k % GG_MX_BLOCK, 0);
    cr_expect_lt(m.c.k, m.orig.k);
    minimised_free(&m);
}

Test(minimize, one_failing_group_among_eight_ends_alone)
{
    static const char text[] =
        "ggfuzz-case 1\n"
        "op grouped_fwd\n"
        "kernel mx_e4m3_cpu_grouped\n"
        "mutant mx_k_tail\n"
        "dtypes a=e4m3 b=e4m3 c=bf16 acc=f32\n"
        "scaling mx\n"
        "groups 8\n"
        "group_lens 0 0 0 33 0 0 0 0\n"
        "n 96\n"
        "k 256\n"
        "seed 0x5eed\n";
    struct gg_case c;
    char err[512];
    cr_assert_eq(gg_case_parse(text, sizeof text - 1, "eight", &c, err, sizeof err), GG_OK, "%s",
                 err);
    struct minimised m;
    minimise_case(&c, 1, &m);
    check_minimised(&m);
    cr_expect_eq(m.st.groups_before, 8);
    cr_expect_eq(m.st.groups_after, 1);
    cr_expect_gt(m.c.lens[0], 0);
    minimised_free(&m);
}

Test(minimize, moe_loads_keep_summing_to_the_routed_tokens)
{
    struct minimised m;
    minimise_file("sorted_ids_padding.case", 1, &m);
    check_minimised(&m);
    int64_t loads = 0;
    for (int64_t g = 0; g < m.c.groups; g++)
        loads += m.c.lens[g];
    cr_expect_eq(loads, m.c.m * m.c.topk);
    cr_expect_lt(m.c.groups, m.orig.groups);
    minimised_free(&m);
}

Test(minimize, repeats_run_every_kept_step_that_often)
{
    struct minimised m;
    minimise_file("n_tail.case", 2, &m);
    check_minimised(&m);
    cr_expect_geq(m.st.attempts, 2 * m.st.kept, "a kept step reproduced twice");
    minimised_free(&m);
}

Test(minimize, a_minimal_case_stays_as_it_is)
{
    struct minimised first, again;
    minimise_file("mx_k_tail.case", 1, &first);
    struct gg_case c;
    cr_assert_eq(gg_case_copy(&c, &first.c), GG_OK);
    minimise_case(&c, 1, &again);
    char a[GG_CASE_ID_HEX + 1], b[GG_CASE_ID_HEX + 1];
    gg_case_id(&first.c, a);
    gg_case_id(&again.c, b);
    cr_expect_str_eq(a, b);
    cr_expect_eq(again.st.kept, 0);
    cr_expect_eq(again.st.rounds, 1);
    cr_expect_eq(again.st.elems_after, again.st.elems_before);
    struct stat sb;
    cr_expect_neq(stat(again.progress, &sb), 0, "no successful round, no progress file");
    minimised_free(&first);
    minimised_free(&again);
}

/* Paced to half the wall time, a minimisation waits as long as its runs take at least, and
   ends where an unpaced one ends; a byte on its pace descriptor ends the waits. */
Test(minimize, a_paced_minimisation_waits_and_ends_where_an_unpaced_one_does)
{
    struct minimised plain, paced, released;
    minimise_file("n_tail.case", 1, &plain);
    struct gg_case c;
    cr_assert_eq(gg_case_copy(&c, &plain.orig), GG_OK);
    minimise_paced(&c, 1, 0.5, 0, &paced);
    cr_expect_eq(plain.st.paced_s, 0);
    cr_expect_gt(paced.st.paced_s, 0);
    cr_expect_leq(paced.st.paced_s, paced.st.seconds);
    /* After its last run it waited until the runs were at most half its time. */
    cr_expect_gt(paced.st.runs_s, 0);
    cr_expect_geq(paced.st.seconds, 2 * paced.st.runs_s, "runs %.3f s of %.3f s (waits %.3f s)",
                  paced.st.runs_s, paced.st.seconds, paced.st.paced_s);
    char a[GG_CASE_ID_HEX + 1], b[GG_CASE_ID_HEX + 1];
    gg_case_id(&plain.c, a);
    gg_case_id(&paced.c, b);
    cr_expect_str_eq(a, b);
    cr_expect_eq(paced.st.attempts, plain.st.attempts);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], "u", 1), 1);
    cr_assert_eq(gg_case_copy(&c, &plain.orig), GG_OK);
    minimise_paced(&c, 1, 0.01, fds[0], &released);
    cr_expect_lt(released.st.paced_s, 0.5, "waited %.3f s after the byte", released.st.paced_s);
    gg_case_id(&released.c, b);
    cr_expect_str_eq(a, b);
    close(fds[0]);
    close(fds[1]);
    minimised_free(&plain);
    minimised_free(&paced);
    minimised_free(&released);
}

/* ---- bucket mode: the normal form ---------------------------------------------------------- */

/* Minimises text in bucket mode; returns the bucket id of its normal form in id and the final
   case in out (owned by the caller). */
static void bucket_form_of(const char *text, char id[GG_BUCKET_ID_HEX + 1], struct gg_case *out,
                           struct gg_min_stats *st)
{
    char err[512], form[GG_SIGNATURE_MAX];
    cr_assert_eq(gg_case_parse(text, strlen(text), "bucket.case", out, err, sizeof err), GG_OK,
                 "%s", err);
    struct gg_verdict v = verdict_of(out, NULL);
    cr_assert_neq(v.cls, GG_CLASS_PASS, "the starting case must fail");
    struct gg_min_opts o = {.max_total_time_s = 60, .timeout_s = 60, .bucket = 1,
                            .stability_runs = 4};
    cr_assert_eq(gg_minimize(out, v.signature, &o, st, err, sizeof err), GG_OK, "%s", err);
    cr_expect(st->fixpoint, "the normal form is a fixpoint");
    /* A deterministic bug: every stability run (two of them on one CPU) gives its verdict. */
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)strcspn(st->signature, "/"), st->signature);
    cr_expect_not(st->unstable, "%s", st->signature);
    cr_expect_eq(st->classes_seen, 1u << gg_class_from_name(cls));
    gg_bucket_form(st->signature, out, form, sizeof form);
    gg_bucket_id(form, id);
    /* The signature reported is the final case's. */
    struct gg_verdict after = verdict_of(out, NULL);
    cr_expect_str_eq(after.signature, st->signature);
}

/* Three cases of one bug that differ in every circumstance the signature splits on (output
   dtype, tail or aligned rows, group pattern, sizes, data) end at one normal form; a case of
   another bug of the same kernel and op ends at another. */
Test(minimize, bucket_mode_brings_one_bug_to_one_normal_form)
{
    static const char *const same_bug[] = {
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\nmutant zero_len_ptr_skip\n"
        "dtypes a=bf16 b=bf16 c=bf16\ngroups 5\ngroup_lens 40 0 70 3 65\nn 96\nk 160\nseed 7\n",
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\nmutant zero_len_ptr_skip\n"
        "dtypes a=bf16 b=bf16 c=f32\ngroups 4\ngroup_lens 64 128 0 64\nn 128\nk 64\n"
        "data a=uniform(-2,2) b=normal(0,1)\nseed 99\n",
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\nmutant zero_len_ptr_skip\n"
        "dtypes a=bf16 b=bf16 c=f32\ngroups 3\ngroup_lens 0 0 17\nn 200\nk 3\nguard inputs=end\n"
        "seed 5\n",
        /* dgrad shows it too: the forward op, the simplest, takes it */
        "ggfuzz-case 1\nop grouped_dgrad\nkernel grouped_bf16_cpu_serial\nmutant zero_len_ptr_skip\n"
        "dtypes a=bf16 b=bf16 c=bf16\ngroups 3\ngroup_lens 0 33 9\nn 40\nk 72\nseed 11\n",
    };
    char first[GG_BUCKET_ID_HEX + 1] = "", id[GG_BUCKET_ID_HEX + 1];
    for (size_t i = 0; i < sizeof same_bug / sizeof same_bug[0]; i++) {
        struct gg_case c;
        struct gg_min_stats st;
        bucket_form_of(same_bug[i], id, &c, &st);
        if (i == 0) {
            snprintf(first, sizeof first, "%s", id);
            /* The normal form: an empty group before a one-row group, N = K = 1, fp32 out. */
            cr_expect_eq(c.op, GG_OP_GROUPED_FWD);
            cr_expect_eq(c.groups, 2);
            cr_expect_eq(c.lens[0], 0);
            cr_expect_eq(c.lens[1], 1);
            cr_expect_eq(c.n, 1);
            cr_expect_eq(c.k, 1);
            cr_expect_eq(c.c_dtype, GG_DTYPE_F32);
            cr_expect_eq(c.guard, GG_GUARD_BAND);
        }
        cr_expect_str_eq(id, first, "case %zu ends in another bucket: %s", i, st.signature);
        gg_case_free(&c);
    }
    static const char other_bug[] =
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\n"
        "mutant tail_rows_unwritten\ndtypes a=bf16 b=bf16 c=bf16\ngroups 3\n"
        "group_lens 70 3 65\nn 96\nk 160\nseed 7\n";
    struct gg_case c;
    struct gg_min_stats st;
    bucket_form_of(other_bug, id, &c, &st);
    cr_expect_str_neq(id, first, "two bugs share a bucket: %s", st.signature);
    gg_case_free(&c);
}

/* stop_at ends a bucket-mode minimisation at the first kept case whose signature it accepts. */
static int accept_any(const char *signature, void *arg)
{
    (void)signature;
    ++*(int *)arg;
    return 1;
}

Test(minimize, bucket_mode_stops_at_a_filed_signature)
{
    static const char text[] =
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_serial\nmutant zero_len_ptr_skip\n"
        "dtypes a=bf16 b=bf16 c=bf16\ngroups 5\ngroup_lens 40 0 70 3 65\nn 96\nk 160\nseed 7\n";
    char err[512];
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, sizeof text - 1, "stop.case", &c, err, sizeof err), GG_OK);
    struct gg_verdict v = verdict_of(&c, NULL);
    int calls = 0;
    struct gg_min_opts o = {.max_total_time_s = 60, .timeout_s = 60, .bucket = 1,
                            .stop_at = accept_any, .stop_arg = &calls};
    struct gg_min_stats st;
    cr_assert_eq(gg_minimize(&c, v.signature, &o, &st, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(calls, 1);
    cr_expect_eq(st.kept, 1);
    cr_expect(st.stopped_at);
    cr_expect_not(st.fixpoint);
    gg_case_free(&c);
}

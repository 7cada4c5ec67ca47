/*
 * test_fuzz_runner.c — the case runner end to end: a small test kernel re-creates each structural
 * and numerical fault on purpose (as a named mutant) and the runner must return the right class;
 * the in-tree kernel passes on random cases; bad cases are refused with a reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"

/* A naive grouped-fwd kernel with a workspace of one float per output, used as scratch. */
static int fake_supports(const struct gg_problem *p, char *why, size_t len)
{
    if (p->op != GG_OP_GROUPED_FWD || p->scaling != GG_SCALING_NONE) {
        snprintf(why, len, "test kernel: grouped_fwd without scaling only");
        return 0;
    }
    return 1;
}

static size_t fake_ws(const struct gg_problem *p)
{
    return (size_t)(p->m * p->n) * sizeof(float) + sizeof(float);
}

static unsigned nondet_counter;

static enum gg_status fake_run(const struct gg_problem *p, const struct gg_operands *o, char *err,
                               size_t len)
{
    (void)err, (void)len;
    float *ws = o->workspace;
    for (int64_t g = 0; g < p->groups; g++) {
        for (int64_t m = o->group_offs_dev[g]; m < o->group_offs_dev[g + 1]; m++) {
            for (int64_t n = 0; n < p->n; n++) {
                float acc = gg_mutant_is(p, "ws_uninit") ? ws[m * p->n + n] : 0.0f;
                for (int64_t k = 0; k < p->k; k++)
                    acc += (float)gg_load(p->a_dtype, o->a, m * p->lda + k) *
                           (float)gg_load(p->b_dtype, o->b, g * p->stride_b + n * p->ldb + k);
                if (gg_mutant_is(p, "corrupt_one") && g == p->groups - 1 && m == o->group_offs_dev[g] && n == 0)
                    acc = acc * 1.5f + 1.0f;
                if (gg_mutant_is(p, "nondet") && m == 0 && n == 0)
                    acc += (float)(nondet_counter++); /* differs on every run */
                if (gg_mutant_is(p, "nan_out") && m == 0 && n == 1)
                    acc = NAN;
                if (gg_mutant_is(p, "skip_row") && m == 0)
                    continue;
                gg_store_code(p->c_dtype, o->c, m * p->ldc + n, gg_encode(p->c_dtype, acc, GG_SAT_NONE));
            }
        }
    }
    if (gg_mutant_is(p, "oob_write"))
        ((uint8_t *)o->c)[gg_dtype_bytes(p->c_dtype, p->m * p->ldc)] ^= 1;
    if (gg_mutant_is(p, "oob_ws"))
        ((uint8_t *)o->workspace)[o->workspace_bytes] ^= 1;
    if (gg_mutant_is(p, "input_write"))
        ((uint8_t *)o->a)[0] ^= 0x40;
    if (gg_mutant_is(p, "pad_write") && p->ldc > p->n)
        gg_store_code(p->c_dtype, o->c, p->n, 0);
    return GG_OK;
}

static const char *const fake_mutants[] = {"ws_uninit", "corrupt_one", "nondet", "nan_out", "skip_row",
                                           "oob_write", "oob_ws", "input_write", "pad_write", NULL};
static const struct gg_kernel fake = {
    .abi_version = GG_KERNEL_ABI_VERSION, .name = "test_naive_cpu_fake", .backend = GG_BACKEND_CPU,
    .ops = GG_OP_BIT(GG_OP_GROUPED_FWD), .mutants = fake_mutants, .supports = fake_supports,
    .workspace_bytes = fake_ws, .run = fake_run};

static void setup(void)
{
    char err[256];
    gg_registry_init();
    if (!gg_registry_find(fake.name))
        cr_assert_eq(gg_registry_add(&fake, err, sizeof err), GG_OK, "%s", err);
}

static void load(struct gg_case *c, const char *text)
{
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "test", c, err, sizeof err), GG_OK, "%s", err);
}

static const char base_case[] = "ggfuzz-case 1\nop grouped_fwd\nkernel test_naive_cpu_fake\n"
                                "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 3\n"
                                "group_lens 5 0 7\nn 9\nk 40\nld c=12\nseed 11\n";

static enum gg_class run_with(const char *mutant, struct gg_verdict *v)
{
    struct gg_case c;
    load(&c, base_case);
    struct gg_run_opts o = {.mutant = mutant};
    struct gg_run_result r;
    char err[512];
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    *v = r.verdict;
    gg_run_result_free(&r);
    gg_case_free(&c);
    return v->cls;
}

TestSuite(runner, .init = setup);

Test(runner, correct_test_kernel_passes)
{
    struct gg_verdict v;
    cr_expect_eq(run_with("none", &v), GG_CLASS_PASS, "%s %s", v.signature, v.detail);
    cr_expect_str_eq(v.signature, "pass");
}

Test(runner, each_planted_fault_gives_its_class)
{
    static const struct { const char *mutant; enum gg_class cls; } want[] = {
        {"ws_uninit", GG_CLASS_WORKSPACE},     {"corrupt_one", GG_CLASS_SNR},
        {"nondet", GG_CLASS_NONDETERMINISM},   {"nan_out", GG_CLASS_NAN},
        {"skip_row", GG_CLASS_UNWRITTEN},      {"oob_write", GG_CLASS_OOB_WRITE},
        {"oob_ws", GG_CLASS_OOB_WRITE},        {"input_write", GG_CLASS_INPUT_MODIFIED},
        {"pad_write", GG_CLASS_OOB_WRITE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct gg_verdict v;
        enum gg_class got = run_with(want[i].mutant, &v);
        cr_expect_eq(got, want[i].cls, "mutant %s: got %s (%s)", want[i].mutant,
                     gg_class_name(got), v.detail);
        cr_expect(strncmp(v.signature, gg_class_name(want[i].cls), strlen(gg_class_name(want[i].cls))) == 0,
                  "mutant %s: signature %s", want[i].mutant, v.signature);
    }
}

/* The SNR is advisory on adversarial data (specials, outliers) and on nearly constant operands
   (every value within 20% of one: each output of a row repeats nearly the same sum). */
Test(runner, snr_is_advisory_on_degenerate_data)
{
    static const struct { const char *b; int advisory; } want[] = {
        {"normal(0,1)", 0},       {"uniform(0,1)", 0},     {"normal(1,0.1)", 0},
        {"const(-0.5)", 1},       {"normal(1,0.01)", 1},   {"uniform(2,2.2)", 1},
        {"specials(0.001)", 1},   {"outliers(1,0.01,100)", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char text[1024], err[512];
        snprintf(text, sizeof text, "%sdata a=normal(0,1) b=%s\n", base_case, want[i].b);
        struct gg_case c;
        load(&c, text);
        struct gg_run_opts o = {.mutant = "none"};
        struct gg_run_result r;
        cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(r.cmp.snr_advisory, want[i].advisory, "b=%s", want[i].b);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
}

Test(runner, corrupt_element_is_blamed_on_its_group)
{
    struct gg_verdict v;
    run_with("corrupt_one", &v);
    cr_expect_eq(v.n_fail_groups, 1);
    cr_expect_eq(v.fail_groups[0], 2);
}

Test(runner, builtin_kernel_passes_random_cases)
{
    for (int i = 0; i < 12; i++) {
        char text[1024];
        static const char *ops[] = {"grouped_fwd", "grouped_dgrad", "grouped_wgrad"};
        snprintf(text, sizeof text,
                 "ggfuzz-case 1\nop %s\nkernel grouped_bf16_cpu_tiled\noptions split_k=%d\n"
                 "dtypes a=bf16 b=bf16 c=%s\nscaling none\ngroups 6\n"
                 "group_lens rand(0,80)*6\nn %d\nk %d\nseed %d\n",
                 ops[i % 3], 1 + i % 4, i % 2 ? "f32" : "bf16", 1 + 37 * i % 150, 1 + 53 * i % 200, i + 1);
        struct gg_case c;
        load(&c, text);
        struct gg_run_result r;
        char err[512];
        struct gg_run_opts o = {.certify_samples = 16};
        cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "case %d: %s %s", i, r.verdict.signature, r.verdict.detail);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
}

Test(runner, refusals_carry_a_reason)
{
    struct gg_case c;
    load(&c, base_case);
    struct gg_run_result r;
    char err[512];
    struct gg_run_opts o = {.kernel = "no_such_kernel"};
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "unknown kernel 'no_such_kernel'"), "%s", err);
    o = (struct gg_run_opts){.max_mem_bytes = 1000};
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_NOMEM);
    cr_expect(strstr(err, "case needs"), "%s", err);
    gg_case_free(&c);
    load(&c, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=e4m3 b=e4m3 c=bf16\nscaling tensor\ngroups 1\ngroup_lens 4\nn 8\nk 32\nseed 1\n");
    o = (struct gg_run_opts){0};
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_UNSUPPORTED);
    cr_expect(strstr(err, "does not support"), "%s", err);
    gg_case_free(&c);
}

/* gg_mutant_is matches whole items of a comma-separated list: never a prefix, a suffix, a part
   spanning a comma or the list itself. */
Test(runner, mutant_is_matches_whole_list_items)
{
    struct gg_problem p = {.mutant = "ab,c"};
    cr_expect(gg_mutant_is(&p, "ab"));
    cr_expect(gg_mutant_is(&p, "c"));
    static const char *const not_items[] = {"a", "b", "abc", "ab,", ",c", "b,c", "ab,c", ""};
    for (size_t i = 0; i < sizeof not_items / sizeof not_items[0]; i++)
        cr_expect(!gg_mutant_is(&p, not_items[i]), "'%s' matched 'ab,c'", not_items[i]);
    p.mutant = "wgrad_zero_uninit";
    cr_expect(gg_mutant_is(&p, "wgrad_zero_uninit"));
    cr_expect(!gg_mutant_is(&p, "wgrad_zero"));
    cr_expect(!gg_mutant_is(&p, "wgrad_zero_uninit_"));
    p.mutant = NULL;
    cr_expect(!gg_mutant_is(&p, "ab"));
}

/* corpus/mutants/wgrad_zero_uninit.case and tail_rows_unwritten.case without their mutant:
   the first exposes only wgrad_zero_uninit (dW of the empty groups unwritten), the second only
   tail_rows_unwritten (the last partial row tile of a fwd unwritten). */
#define LIST_CASE_HEAD                                                                             \
    "ggfuzz-case 1\nkernel grouped_bf16_cpu_tiled\ndtypes a=bf16 b=bf16 c=bf16\nscaling none\n" \
    "groups 4\nk 96\n"
static const char *const list_cases[] = {
    LIST_CASE_HEAD "op grouped_wgrad\noptions split_k=2\ngroup_lens 0 90 0 300\nn 70\n"
                   "seed 0x2e70002\n",
    LIST_CASE_HEAD "op grouped_fwd\ngroup_lens 70 0 100 0\nn 80\nseed 0x2e70006\n"};

/* Runs list_cases[i] (plus extra lines) with the mutant override (NULL: the case's own). */
static enum gg_status run_list_case(int i, const char *extra, const char *mutant,
                                    struct gg_run_result *r, char *err, size_t err_len)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", list_cases[i], extra);
    struct gg_case c;
    load(&c, text);
    struct gg_run_opts o = {.mutant = mutant};
    enum gg_status st = gg_run_case(&c, &o, r, err, err_len);
    gg_case_free(&c);
    return st;
}

Test(runner, a_mutant_list_runs_every_fault_it_names)
{
    static const struct {
        const char *mutant;
        enum gg_class cls[2];
    } want[] = {
        {"none", {GG_CLASS_PASS, GG_CLASS_PASS}},
        {"wgrad_zero_uninit", {GG_CLASS_UNWRITTEN, GG_CLASS_PASS}},
        {"tail_rows_unwritten", {GG_CLASS_PASS, GG_CLASS_UNWRITTEN}},
        {"wgrad_zero_uninit,tail_rows_unwritten", {GG_CLASS_UNWRITTEN, GG_CLASS_UNWRITTEN}},
        {"tail_rows_unwritten,wgrad_zero_uninit", {GG_CLASS_UNWRITTEN, GG_CLASS_UNWRITTEN}},
    };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
        for (int i = 0; i < 2; i++) {
            struct gg_run_result r;
            char err[512];
            cr_assert_eq(run_list_case(i, "", want[w].mutant, &r, err, sizeof err), GG_OK,
                         "%s", err);
            cr_expect_eq(r.verdict.cls, want[w].cls[i], "case %d, mutant %s: %s (%s)", i,
                         want[w].mutant, gg_class_name(r.verdict.cls), r.verdict.detail);
            cr_expect_str_eq(r.mutant, strcmp(want[w].mutant, "none") ? want[w].mutant : "");
            gg_run_result_free(&r);
        }
    /* The list as the case file's own mutant line. */
    for (int i = 0; i < 2; i++) {
        struct gg_run_result r;
        char err[512];
        cr_assert_eq(run_list_case(i, "mutant wgrad_zero_uninit,tail_rows_unwritten\n", NULL, &r,
                                   err, sizeof err),
                     GG_OK, "%s", err);
        cr_expect_eq(r.verdict.cls, GG_CLASS_UNWRITTEN, "case %d: %s", i,
                     gg_class_name(r.verdict.cls));
        gg_run_result_free(&r);
    }
}

Test(runner, a_bad_mutant_list_is_refused_naming_the_item_and_the_kernel)
{
    static const struct {
        const char *mutant, *want;
    } bad[] = {
        {"wgrad_zero_uninit,no_such", "kernel grouped_bf16_cpu_tiled has no mutant 'no_such'"},
        {"wgrad_zero,tail_rows_unwritten",
         "kernel grouped_bf16_cpu_tiled has no mutant 'wgrad_zero'"},
        {"wgrad_zero_uninit,,tail_rows_unwritten",
         "kernel grouped_bf16_cpu_tiled: mutant list 'wgrad_zero_uninit,,tail_rows_unwritten': "
         "item 2 is empty"},
        {",tail_rows_unwritten",
         "kernel grouped_bf16_cpu_tiled: mutant list ',tail_rows_unwritten': item 1 is empty"},
        {"tail_rows_unwritten,", "item 2 is empty"},
        {"tail_rows_unwritten,wgrad_zero_uninit,tail_rows_unwritten",
         "kernel grouped_bf16_cpu_tiled: mutant list "
         "'tail_rows_unwritten,wgrad_zero_uninit,tail_rows_unwritten': 'tail_rows_unwritten' "
         "appears twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct gg_run_result r;
        char err[512] = "", line[128];
        cr_expect_eq(run_list_case(0, "", bad[i].mutant, &r, err, sizeof err), GG_E_INVAL,
                     "%s", bad[i].mutant);
        cr_expect(strstr(err, bad[i].want), "%s: %s", bad[i].mutant, err);
        /* The same list on the case's mutant line. */
        snprintf(line, sizeof line, "mutant %s\n", bad[i].mutant);
        err[0] = '\0';
        cr_expect_eq(run_list_case(0, line, NULL, &r, err, sizeof err), GG_E_INVAL, "%s",
                     bad[i].mutant);
        cr_expect(strstr(err, bad[i].want), "%s: %s", bad[i].mutant, err);
    }
    /* An override longer than the case's mutant field is refused, not cut to a shorter list. */
    struct gg_run_result r;
    char err[512] = "";
    cr_expect_eq(run_list_case(0, "",
                               "wgrad_zero_uninit,tail_rows_unwritten,missing_fence,"
                               "workspace_underreport",
                               &r, err, sizeof err),
                 GG_E_INVAL);
    cr_expect(strstr(err, "is longer than 63 characters"), "%s", err);
}

/* A kernel descriptor whose mutant name could not be one item of a list is refused. */
Test(runner, registry_refuses_mutant_names_that_are_not_list_items)
{
    static const char *const comma[] = {"fine", "a,b", NULL}, *const empty[] = {"", NULL};
    struct gg_kernel k = fake;
    char err[256] = "";
    k.name = "test_mutant_comma", k.mutants = comma;
    cr_expect_eq(gg_registry_add(&k, err, sizeof err), GG_E_ABI);
    cr_expect(strstr(err, "kernel test_mutant_comma: mutant name 'a,b' is empty or holds a ','"),
              "%s", err);
    k.name = "test_mutant_empty", k.mutants = empty;
    cr_expect_eq(gg_registry_add(&k, err, sizeof err), GG_E_ABI);
    cr_expect(strstr(err, "mutant name '' is empty"), "%s", err);
    cr_expect_null(gg_registry_find("test_mutant_comma"));
    cr_expect_null(gg_registry_find("test_mutant_empty"));
}

Test(runner, memory_estimate_counts_only_used_groups)
{
    /* 4100 experts of 512x1024 bf16 weights (4.3 GB) of which one holds tokens. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 4100\ngroup_lens 0*4099 8\n"
             "n 512\nk 1024\nseed 1\n");
    int64_t est = gg_case_mem_estimate(&c);
    cr_expect_lt(est, 64ll << 20, "estimate %lld", (long long)est);
    cr_expect_gt(est, 512ll * 1024 * 2);
    gg_case_free(&c);
}

/* Peak resident memory of this process, in bytes. */
static int64_t peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)ru.ru_maxrss * 1024;
}

Test(runner, memory_estimate_saturates_instead_of_wrapping)
{
    /* C holds 2^60 bf16 elements (2^61 bytes): C and its copy alone pass 2^62 bytes, and the
       reference's doubles 2^63. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop batched\nkernel batched_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=bf16\nbatch 1\nm 1073741824\nn 1073741824\nk 1\nseed 1\n");
    cr_expect_eq(gg_case_mem_estimate(&c), GG_SIZE_MAX);
    struct gg_run_result r;
    char err[512];
    struct gg_run_opts o = {.max_mem_bytes = 100ll << 30};
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_NOMEM);
    cr_expect(strstr(err, "case needs more than 2^63 bytes of host memory"), "%s", err);
    gg_case_free(&c);
}

Test(runner, moe_routing_is_admitted_before_it_is_built)
{
    /* Six loaded experts padded to block_m = 4·10^7 entries each: 1.8 GB of routing arrays. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop moe_sorted\nkernel moe_mx_e4m3_cpu_sorted\n"
             "dtypes a=e4m3 b=e4m3 c=bf16 acc=f32\nscaling mx\ngroups 8\n"
             "group_lens 5 0 9 4 0 12 1 7\nm 19\ntopk 2\nblock_m 40000000\nn 128\nk 256\nseed 1\n");
    int64_t est = gg_case_mem_estimate(&c);
    cr_expect_gt(est, 6ll * 40000000 * 8, "estimate %lld", (long long)est);
    struct gg_run_result r;
    char err[512];
    struct gg_run_opts o = {.max_mem_bytes = 1024};
    cr_expect_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_E_NOMEM);
    cr_expect(strstr(err, "--max-mem allows 1.0 KiB"), "%s", err);
    cr_expect_lt(peak_rss(), 100ll << 20, "peak %lld bytes", (long long)peak_rss());
    gg_case_free(&c);
}

Test(runner, an_operand_past_the_address_space_is_refused_by_name)
{
    /* C placed 2^55 elements (2^56 bytes) into its allocation: valid, but no machine maps it. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=bf16\ngroups 2\ngroup_lens 2 2\nn 64\nk 64\n"
             "offset c=36028797018963968\nseed 1\n");
    struct gg_run_result r;
    char err[512];
    cr_expect_eq(gg_run_case(&c, NULL, &r, err, sizeof err), GG_E_NOMEM);
    cr_expect(strstr(err, "operand C (256 elements at offset 36028797018963968)"), "%s", err);
    gg_case_free(&c);
}

Test(runner, an_output_past_2p32_bytes_costs_its_rows_only)
{
    /* Y of 5 rows 2^30 bf16 elements apart spans 8 GiB; its rows touch five pages. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=bf16\ngroups 2\ngroup_lens 3 2\nn 64\nk 64\n"
             "ld c=1073741824\nseed 1\n");
    cr_expect_lt(gg_case_mem_estimate(&c), 8ll << 20);
    struct gg_run_result r;
    char err[512];
    cr_assert_eq(gg_run_case(&c, NULL, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    struct gg_run_opts o = {.mutant = "i32_store_offset"};
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_UNWRITTEN, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    gg_case_free(&c);
    /* Three batches of C 2^31 f32 elements (2^33 bytes) apart: the mutant writes batches 1 and
       2 over batch 0. */
    load(&c, "ggfuzz-case 1\nop batched\nkernel batched_bf16_cpu_tiled\n"
             "dtypes a=bf16 b=bf16 c=f32\nbatch 3\nm 4\nn 32\nk 32\n"
             "stride c=2147483648\nseed 2\n");
    cr_assert_eq(gg_run_case(&c, NULL, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_UNWRITTEN, "%s", r.verdict.signature);
    gg_run_result_free(&r);
    cr_expect_lt(peak_rss(), 100ll << 20, "peak %lld bytes", (long long)peak_rss());
    gg_case_free(&c);
}

Test(runner, an_over_read_faults_only_where_the_input_ends_at_a_guard_page)
{
    /* read_past_end loads one row of A past the last row tile of the last group: inside the
       canary band it goes unseen, flush against the guard page the process dies. */
    static const char *const placements[] = {"", "guard inputs=end\n", "guard inputs=start\n"};
    static const enum gg_class expect[] = {GG_CLASS_PASS, GG_CLASS_CRASH, GG_CLASS_PASS};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
                 "mutant read_past_end\ndtypes a=bf16 b=bf16 c=bf16\ngroups 2\n"
                 "group_lens 3 5\nn 64\nk 64\n%sseed 1\n", placements[i]);
        struct gg_case c;
        load(&c, text);
        struct gg_run_result r;
        char err[512];
        cr_assert_eq(gg_run_case_isolated(&c, NULL, 60, &r, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(r.verdict.cls, expect[i], "%s: %s", placements[i], r.verdict.signature);
        if (expect[i] == GG_CLASS_CRASH) { /* the handler said where the fault hit */
            cr_expect(strstr(r.verdict.signature, "/g:none/a_past_end/structural"), "%s",
                      r.verdict.signature);
            cr_expect(strstr(r.verdict.detail, "read past the end of A"), "%s", r.verdict.detail);
        }
        gg_run_result_free(&r);
        struct gg_run_opts o = {.mutant = "none"};
        cr_assert_eq(gg_run_case(&c, &o, &r, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "correct kernel, %s: %s", placements[i],
                     r.verdict.signature);
        gg_run_result_free(&r);
        gg_case_free(&c);
    }
}

Test(runner, flush_placements_keep_the_alignment_and_fault_at_the_edge)
{
    for (int at_end = 0; at_end < 2; at_end++) {
        struct gg_hostbuf b;
        char err[256];
        cr_assert_eq(gg_hostbuf_alloc_flush(NULL, &b, 1000, at_end, err, sizeof err), GG_OK, "%s", err);
        cr_expect_eq((uintptr_t)b.data % GG_GUARD_ALIGN, 0);
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        if (at_end) /* 1000 bytes rounded to 1024: 24 bytes of band, then the page */
            cr_expect_eq((uintptr_t)(b.data + 1024) % page, 0);
        else
            cr_expect_eq((uintptr_t)b.data % page, 0);
        memset(b.data, 7, 1000);
        cr_expect_eq(gg_hostbuf_guard_hit(&b, &(int){0}), 0);
        pid_t pid = fork();
        if (pid == 0) { /* one byte past the edge of the accessible run */
            volatile uint8_t x = at_end ? b.data[1024] : b.data[-1];
            (void)x;
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "at_end %d", at_end);
        gg_hostbuf_free(NULL, &b);
    }
}

Test(runner, a_write_between_the_rows_of_c_is_named)
{
    /* i32_store_offset, f32 rows 6442451200 bytes apart: row 1 wraps to byte 2147483904, an
       inaccessible page between rows 0 and 1 of C. */
    struct gg_case c;
    load(&c, "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "mutant i32_store_offset\ndtypes a=bf16 b=bf16 c=f32\ngroups 1\ngroup_lens 3\n"
             "n 64\nk 64\nld c=1610612800\nseed 1\n");
    struct gg_run_result r;
    char err[512];
    cr_assert_eq(gg_run_case_isolated(&c, NULL, 60, &r, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(r.verdict.cls, GG_CLASS_CRASH, "%s", r.verdict.signature);
    cr_expect(strstr(r.verdict.signature, "/c_unused/"), "%s", r.verdict.signature);
    cr_expect(strstr(r.verdict.detail, "wrote an unused row of C"), "%s", r.verdict.detail);
    gg_run_result_free(&r);
    gg_case_free(&c);
}

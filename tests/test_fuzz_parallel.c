/*
 * test_fuzz_parallel.c — the host's threads change nothing but the time: a case's inputs (codes,
 * scales, the unquantised source) and its reference (the product and Σ|ab|) are bit-identical
 * for 1, 2, 3 and 7 threads of generation and decoding, on every quantisation of the generator
 * (plain, tensor per matrix, MX with packed E2M1, rowwise and blockwise grids, specials). The
 * BLAS's own thread count is held at 1 here: OpenBLAS may split a dgemm differently with more
 * threads, a reordering of the fp64 sums that the oracles' bound allows but that is not
 * bit-identical. The bias, drawn a chunk at a time, holds its distribution's values element by
 * element. And the memory estimate of a mid-size case bounds what the run really takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cblas.h>
#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"
#include "reference/gg_ref.h"

static void load(struct gg_case *c, const char *text)
{
    char err[512];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t", c, err, sizeof err), GG_OK, "%s", err);
}

/* Large enough that generation and decoding split over several threads. */
static const char *const CASES[] = {
    "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
    "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 4\ngroup_lens 40 0 70 18\n"
    "n 384\nk 1000\ndata a=normal(0,1) b=uniform(-1,1)\nseed 11\n",
    "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_fp8_cpu_tiled\n"
    "dtypes a=e5m2fnuz b=e4m3fnuz c=bf16 acc=f32\nscaling tensor\ngroups 3\n"
    "group_lens 90 0 37\nn 300\nk 700\ndata a=normal(0,1) b=normal(0,1)\nseed 12\n",
    "ggfuzz-case 1\nop grouped_dgrad\nkernel grouped_fp8_cpu_fine\n"
    "dtypes a=e5m2 b=e4m3 c=bf16 acc=f32\nscaling rowwise\ngroups 3\ngroup_lens 200 0 145\n"
    "n 296\nk 450\ndata a=normal(0,1) b=normal(0,1)\nseed 13\n",
    "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_fp8_cpu_fine\n"
    "dtypes a=e4m3fnuz b=e4m3fnuz c=f32 acc=f32\nscaling blockwise\ngroups 3\n"
    "group_lens 150 0 117\nn 300\nk 590\ndata a=normal(0,1) b=normal(0,1)\nseed 14\n",
    "ggfuzz-case 1\nop grouped_wgrad\nkernel grouped_fp8_cpu_fine\n"
    "dtypes a=e4m3 b=e4m3 c=f32 acc=f32\nscaling rowwise\ngroups 3\ngroup_lens 300 0 217\n"
    "n 200\nk 330\ndata a=normal(0,1) b=specials(0.01)\nseed 15\n",
    "ggfuzz-case 1\nop batched\nkernel batched_afp4wfp4_cpu_tiled\n"
    "dtypes a=e2m1 b=e2m1 c=f32 acc=f32\nscaling mx\nbias f32\nbatch 3\nm 190\nn 250\n"
    "k 640\ndata a=normal(0,1) b=normal(0,1)\nseed 16\n",
};

/* The inputs and reference of case text under n threads. */
struct made {
    struct gg_hash inputs;
    int64_t n_out, n_src[2];
    double *ref, *abs;
    float *src[2];
};

static void make(const char *text, int threads, struct made *m)
{
    struct gg_case c;
    struct gg_tensors t;
    char err[512];
    load(&c, text);
    gg_ref_threads(threads);
    openblas_set_num_threads(1);
    cr_assert_eq(gg_tensors_plan(&c, &t, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_tensors_make(&c, 0, &t, err, sizeof err), GG_OK, "%s", err);
    m->inputs = gg_tensors_hash_inputs(&t);
    m->n_out = gg_problem_out_elems(&t.p);
    m->ref = malloc((size_t)(m->n_out + 1) * sizeof(double));
    m->abs = malloc((size_t)(m->n_out + 1) * sizeof(double));
    cr_assert(m->ref && m->abs);
    cr_assert_eq(gg_ref_gemm(&t.p, &t.ops, m->ref, m->abs, err, sizeof err), GG_OK, "%s", err);
    for (int w = 0; w < 2; w++) {
        m->src[w] = NULL;
        m->n_src[w] = 0;
        if (t.src_a) {
            m->n_src[w] = w ? gg_problem_b_span(&t.src_p) : gg_problem_a_span(&t.src_p);
            m->src[w] = malloc((size_t)(m->n_src[w] + 1) * sizeof(float));
            memcpy(m->src[w], w ? t.src_b : t.src_a, (size_t)m->n_src[w] * sizeof(float));
        }
    }
    gg_tensors_free(&t);
    gg_case_free(&c);
    gg_ref_threads(1);
}

static void made_free(struct made *m)
{
    free(m->ref);
    free(m->abs);
    free(m->src[0]);
    free(m->src[1]);
}

Test(parallel, inputs_and_reference_are_the_same_on_any_thread_count)
{
    const int counts[] = {2, 3, 7};
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        struct made one;
        make(CASES[i], 1, &one);
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            struct made many;
            make(CASES[i], counts[k], &many);
            cr_expect(memcmp(&one.inputs, &many.inputs, sizeof one.inputs) == 0,
                      "case %zu: inputs differ on %d threads", i, counts[k]);
            cr_assert_eq(one.n_out, many.n_out);
            cr_expect(memcmp(one.ref, many.ref, (size_t)one.n_out * sizeof(double)) == 0,
                      "case %zu: reference differs on %d threads", i, counts[k]);
            cr_expect(memcmp(one.abs, many.abs, (size_t)one.n_out * sizeof(double)) == 0,
                      "case %zu: sum |ab| differs on %d threads", i, counts[k]);
            for (int w = 0; w < 2; w++)
                cr_expect(one.n_src[w] == many.n_src[w] &&
                              (!one.src[w] || memcmp(one.src[w], many.src[w],
                                                     (size_t)one.n_src[w] * sizeof(float)) == 0),
                          "case %zu: source operand %d differs on %d threads", i, w, counts[k]);
            made_free(&many);
        }
        made_free(&one);
    }
}

Test(parallel, the_bias_is_its_distribution_element_by_element)
{
    static const char *const dists[] = {"uniform(-2,2)", "normal(0.5,3)", "specials(0.1)"};
    for (size_t k = 0; k < sizeof dists / sizeof dists[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "ggfuzz-case 1\nop batched\nkernel batched_afp4wfp4_cpu_tiled\n"
                 "dtypes a=e2m1 b=e2m1 c=f32 acc=f32\nscaling mx\nbias f32\nbatch 5\nm 20\n"
                 "n 250\nk 64\ndata a=normal(0,1) b=normal(0,1) bias=%s\nseed 17\n",
                 dists[k]);
        struct gg_case c;
        struct gg_tensors t;
        char err[512];
        load(&c, text);
        cr_assert_eq(gg_tensors_plan(&c, &t, err, sizeof err), GG_OK, "%s", err);
        cr_assert_eq(gg_tensors_make(&c, 0, &t, err, sizeof err), GG_OK, "%s", err);
        int64_t n = gg_problem_bias_count(&t.p), wrong = 0;
        cr_assert_eq(n, 5 * 250); /* past one chunk of the fill */
        struct gg_dist d = c.dist_bias;
        d.fmt = GG_DTYPE_F32;
        for (int64_t i = 0; i < n; i++)
            wrong +=
                gg_load_code(GG_DTYPE_F32, t.ops.bias, i) !=
                gg_encode(GG_DTYPE_F32, gg_dist_sample(&d, c.seed, GG_STREAM_BIAS, (uint64_t)i),
                          GG_SAT_FINITE);
        cr_expect_eq(wrong, 0, "%s: %lld of %lld bias elements differ", dists[k], (long long)wrong,
                     (long long)n);
        gg_tensors_free(&t);
        gg_case_free(&c);
    }
}

Test(parallel, the_thread_count_follows_the_reference)
{
    gg_ref_threads(3);
    cr_expect_eq(gg_ref_thread_count(), 3);
    cr_expect_eq(gg_par_threads(1000, 100), 3);
    cr_expect_eq(gg_par_threads(250, 100), 2, "each thread gets min_per_thread at least");
    cr_expect_eq(gg_par_threads(50, 100), 1);
    gg_ref_threads(0);
    cr_expect_eq(gg_ref_thread_count(), 1);
}

/* Runs case text in a child and returns its peak resident bytes above what it held before. */
static int64_t run_peak(const char *text)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        struct gg_case c;
        char err[512];
        struct gg_run_result r;
        if (gg_case_parse(text, strlen(text), "t", &c, err, sizeof err) != GG_OK)
            _exit(2);
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        if (gg_run_case(&c, NULL, &r, err, sizeof err) != GG_OK || r.verdict.cls != GG_CLASS_PASS)
            _exit(3);
        getrusage(RUSAGE_SELF, &after);
        int64_t grown = ((int64_t)after.ru_maxrss - before.ru_maxrss) * 1024;
        _exit(write(fd[1], &grown, sizeof grown) == sizeof grown ? 0 : 4);
    }
    close(fd[1]);
    int64_t grown = -1;
    cr_assert_eq(read(fd[0], &grown, sizeof grown), (ssize_t)sizeof grown);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    return grown;
}

/* The estimate admits a case on what it will take: on a mid-size bf16 and an fp8 case (tens of
   MiB of weights, a reference of a few MiB) the peak grows by at most the estimate plus 16 MiB
   (the allocator's and the libraries' own), and the estimate is at most twice the peak. */
/* 1 in a build with AddressSanitizer, whose shadow memory and quarantine grow every allocation's
   resident size past what the estimate counts. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

Test(parallel, the_estimate_bounds_the_peak_of_a_mid_size_case)
{
    if (UNDER_ASAN)
        cr_skip_test("resident sizes under AddressSanitizer are not the estimate's");
    const char *cases[] = {
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
        "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 24\n"
        "group_lens 30 0 12 7 0 0 9 40 3 0 0 22 8 0 1 0 0 5 16 0 2 0 11 4\n"
        "n 1024\nk 2048\ndata a=normal(0,1) b=uniform(-1,1)\nseed 21\n",
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_fp8_cpu_tiled\n"
        "dtypes a=e4m3 b=e4m3 c=bf16 acc=f32\nscaling tensor\ngroups 12\n"
        "group_lens 30 0 12 7 0 0 9 40 3 0 0 22\nn 1024\nk 2048\n"
        "data a=normal(0,1) b=normal(0,1)\nseed 22\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gg_case c;
        load(&c, cases[i]);
        int64_t est = gg_case_mem_estimate(&c);
        gg_case_free(&c);
        int64_t peak = run_peak(cases[i]);
        cr_expect_leq(peak, est + (16ll << 20), "case %zu: peak %lld > estimate %lld", i,
                      (long long)peak, (long long)est);
        cr_expect_leq(est, 2 * peak, "case %zu: estimate %lld > 2 x peak %lld", i,
                      (long long)est, (long long)peak);
    }
}

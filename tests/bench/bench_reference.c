/*
 * bench_reference — cost of the OpenBLAS reference over raw dgemm. For a grouped fwd problem of
 * 8 groups × 256 rows, N = 1024, bf16 inputs and K from 256 to 8192, times (median of repetitions)
 * raw cblas_dgemm on already-decoded operands, gg_ref_gemm without and with Σ|ab|, and prints
 * GFLOP/s, the decode overhead of the reference and the cost of the |A|·|B| product.
 * Usage: bench_reference [--quick]
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference/gg_ref.h"

enum { GROUPS = 8, ROWS = 256, N = 1024, REPS = 5 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* bf16 codes of values uniform in [-1, 1) (truncated from fp32), and their exact decoding. */
static void fill_bf16(uint16_t *q, double *d, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        float f = (float)(2 * gg_rng_uniform(seed, 1, (uint64_t)i, 0) - 1);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        q[i] = (uint16_t)(bits >> 16);
        bits = (uint32_t)q[i] << 16;
        memcpy(&f, &bits, sizeof f);
        d[i] = f;
    }
}

/* The three timings for one K, in seconds. */
struct timing {
    double raw, ref, ref_abs;
};

static int bench_k(int64_t k, struct timing *out)
{
    int64_t m = GROUPS * ROWS;
    int64_t lens[GROUPS], offs[GROUPS + 1] = {0};
    for (int g = 0; g < GROUPS; g++) {
        lens[g] = ROWS;
        offs[g + 1] = offs[g] + ROWS;
    }
    struct gg_problem p = {.op = GG_OP_GROUPED_FWD, .a_dtype = GG_DTYPE_BF16,
                           .b_dtype = GG_DTYPE_BF16, .c_dtype = GG_DTYPE_F32,
                           .acc_dtype = GG_DTYPE_F32, .groups = GROUPS, .n = N, .k = k,
                           .group_lens = lens, .group_offs = offs};
    char err[256];
    if (gg_problem_check(&p, err, sizeof err) != GG_OK) {
        fprintf(stderr, "bench_reference: %s\n", err);
        return 1;
    }
    int64_t na = m * k, nb = (int64_t)GROUPS * N * k, nc = m * N;
    uint16_t *a = malloc((size_t)na * 2), *b = malloc((size_t)nb * 2);
    double *ad = malloc((size_t)na * 8), *bd = malloc((size_t)nb * 8);
    double *c = malloc((size_t)nc * 8), *abs = malloc((size_t)nc * 8);
    int rc = 1;
    if (!a || !b || !ad || !bd || !c || !abs) {
        fprintf(stderr, "bench_reference: out of memory at K = %lld\n", (long long)k);
        goto done;
    }
    fill_bf16(a, ad, na, 1);
    fill_bf16(b, bd, nb, 2);
    struct gg_operands o = {.a = a, .b = b};
    double t_raw[REPS], t_ref[REPS], t_abs[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (int g = 0; g < GROUPS; g++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, ROWS, N, (blasint)k, 1.0,
                        ad + offs[g] * k, (blasint)k, bd + (int64_t)g * N * k, (blasint)k, 0.0,
                        c + offs[g] * N, N);
        double t1 = now();
        if (gg_ref_gemm(&p, &o, c, NULL, err, sizeof err) != GG_OK)
            goto fail;
        double t2 = now();
        if (gg_ref_gemm(&p, &o, c, abs, err, sizeof err) != GG_OK)
            goto fail;
        double t3 = now();
        t_raw[r] = t1 - t0;
        t_ref[r] = t2 - t1;
        t_abs[r] = t3 - t2;
    }
    out->raw = median(t_raw, REPS);
    out->ref = median(t_ref, REPS);
    out->ref_abs = median(t_abs, REPS);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "bench_reference: %s\n", err);
done:
    free(a);
    free(b);
    free(ad);
    free(bd);
    free(c);
    free(abs);
    return rc;
}

int main(int argc, char **argv)
{
    static const int64_t all_k[] = {256, 512, 1024, 2048, 4096, 8192};
    static const int64_t quick_k[] = {256, 1024, 4096};
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
        return 2;
    }
    const int64_t *ks = quick ? quick_k : all_k;
    size_t nk = quick ? sizeof quick_k / sizeof *quick_k : sizeof all_k / sizeof *all_k;
    printf("grouped fwd, %d groups x %d rows, N = %d, bf16 inputs; median of %d; OpenBLAS %d "
           "threads\n",
           GROUPS, ROWS, N, REPS, openblas_get_num_threads());
    printf("%6s %14s %14s %12s %14s\n", "K", "raw GFLOP/s", "ref GFLOP/s", "overhead %",
           "|A||B| s");
    for (size_t i = 0; i < nk; i++) {
        struct timing t;
        if (bench_k(ks[i], &t) != 0)
            return 1;
        double flop = 2.0 * GROUPS * ROWS * N * (double)ks[i];
        printf("%6lld %14.1f %14.1f %12.1f %14.4f\n", (long long)ks[i], flop / t.raw * 1e-9,
               flop / t.ref * 1e-9, 100 * (t.ref - t.raw) / t.raw, t.ref_abs - t.ref);
        fflush(stdout);
    }
    return 0;
}

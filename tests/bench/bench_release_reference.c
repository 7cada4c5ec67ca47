/*
 * bench_release_reference — the host reference alone on the largest shapes of the release tier.
 * For each case file (default: the DeepSeek-V3 and Qwen3-235B decode cases below) it generates
 * the inputs (timed), then times (median of 3) gg_ref_gemm with Σ|ab| and bare cblas_dgemm of
 * the same group shapes on operands already in double, and prints fp64 GFLOP/s of each (the
 * problem's 2·outputs·reduction flops per product; the reference computes two products, the
 * value and |A|·|B|) and the reference's share of the bare DGEMM's rate.
 * With --device KERNEL (a GPU kernel that takes the cases), the device reference is timed too
 * (median of 3 gg_run_reference() calls on the device, inputs generated there first, untimed) and
 * its fp64 GFLOP/s printed; compare with the bare DGEMM of the device (e.g. torch.float64
 * matmul) on the same machine.
 * Usage: bench_release_reference [--threads N] [--device KERNEL] [CASE...]
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/gg_run.h"

enum { REPS = 3 };

static const char *const DEFAULT_CASES[] = {
    "corpus/suite/release/dsv3_ep1_balanced_dgrad_decode_bf16.case",
    "corpus/suite/release/dsv3_ep1_balanced_fwd_decode_bf16.case",
    "corpus/suite/release/qwen3_ep1_balanced_fwd_decode_bf16.case",
};

/* The middle one of three times. */
static double median3(const double t[3])
{
    double lo = t[0] < t[1] ? t[0] : t[1], hi = t[0] < t[1] ? t[1] : t[0];
    return t[2] < lo ? lo : t[2] > hi ? hi : t[2];
}

/* Bare dgemm of every group block (rows × cols over red), one reused pair of operands of the
   largest block; seconds. */
static double bare_dgemm(const struct gg_problem *p, double *a, double *b, double *c)
{
    double t0 = gg_wire_now();
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block blk;
        gg_problem_out_block(p, g, &blk);
        if (blk.rows * blk.cols * blk.red == 0)
            continue;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)blk.rows, (blasint)blk.cols,
                    (blasint)blk.red, 1.0, a, (blasint)blk.red, b, (blasint)blk.red, 0.0, c,
                    (blasint)blk.cols);
    }
    return gg_wire_now() - t0;
}

/* The device reference of case c on kernel: median of REPS; prints its line. */
static int bench_device(const struct gg_case *c, const char *kernel, const char *name)
{
    double t[REPS];
    char err[512];
    double flop = 0;
    for (int r = 0; r < REPS; r++) {
        struct gg_run_opts o = {.kernel = kernel, .reference = GG_REFERENCE_DEVICE};
        struct gg_reference_run rr;
        enum gg_status st = gg_run_reference(c, &o, &rr, err, sizeof err);
        t[r] = rr.seconds;
        flop = gg_problem_flops(&rr.t.p);
        gg_reference_run_free(&rr);
        if (st != GG_OK) {
            fprintf(stderr, "bench_release_reference: %s on the device: %s\n", name, err);
            return 1;
        }
    }
    double m = median3(t);
    printf("%-44s %8s %8.3f %9.1f  (device reference, %s)\n", name, "", m, 2 * flop / m * 1e-9,
           kernel);
    return 0;
}

static const char *device_kernel;

static int bench_case(const char *path)
{
    struct gg_case c;
    struct gg_tensors t;
    char err[512];
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK) {
        fprintf(stderr, "bench_release_reference: %s\n", err);
        return 1;
    }
    double t0 = gg_wire_now();
    if (gg_tensors_plan(&c, &t, err, sizeof err) != GG_OK ||
        gg_tensors_make(&c, 0, &t, err, sizeof err) != GG_OK) {
        fprintf(stderr, "bench_release_reference: %s: %s\n", path, err);
        return 1;
    }
    double gen = gg_wire_now() - t0;
    const struct gg_problem *p = &t.p;
    int64_t n = gg_problem_out_elems(p), max_rows = 0, max_cols = 0, max_red = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block blk;
        gg_problem_out_block(p, g, &blk);
        max_rows = blk.rows > max_rows ? blk.rows : max_rows;
        max_cols = blk.cols > max_cols ? blk.cols : max_cols;
        max_red = blk.red > max_red ? blk.red : max_red;
    }
    double *ref = malloc((size_t)(n + 1) * 8), *abs = malloc((size_t)(n + 1) * 8);
    double *a = calloc((size_t)(max_rows * max_red + 1), 8);
    double *b = calloc((size_t)(max_cols * max_red + 1), 8);
    double *cc = malloc((size_t)(max_rows * max_cols + 1) * 8);
    if (!ref || !abs || !a || !b || !cc) {
        fprintf(stderr, "bench_release_reference: out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < max_cols * max_red; i++)
        b[i] = (double)(i % 255) - 127.0;
    double t_ref[REPS], t_raw[REPS];
    for (int r = 0; r < REPS; r++) {
        double s = gg_wire_now();
        if (gg_ref_gemm(p, &t.ops, ref, abs, err, sizeof err) != GG_OK) {
            fprintf(stderr, "bench_release_reference: %s\n", err);
            return 1;
        }
        t_ref[r] = gg_wire_now() - s;
        t_raw[r] = bare_dgemm(p, a, b, cc);
    }
    double m_ref = median3(t_ref), m_raw = median3(t_raw);
    double flop = gg_problem_flops(p);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    printf("%-44s %8.2f %8.3f %9.1f %8.3f %9.1f %7.0f%%\n", name, gen, m_ref,
           2 * flop / m_ref * 1e-9, m_raw, flop / m_raw * 1e-9,
           100.0 * (2 * flop / m_ref) / (flop / m_raw));
    free(ref), free(abs), free(a), free(b), free(cc);
    gg_tensors_free(&t);
    int rc = device_kernel ? bench_device(&c, device_kernel, name) : 0;
    gg_case_free(&c);
    return rc;
}

int main(int argc, char **argv)
{
    int first = 1;
    for (;;) {
        if (argc > first + 1 && strcmp(argv[first], "--threads") == 0)
            gg_ref_threads(atoi(argv[first + 1]));
        else if (argc > first + 1 && strcmp(argv[first], "--device") == 0)
            device_kernel = argv[first + 1];
        else
            break;
        first += 2;
    }
    printf("host reference on %d threads (OpenBLAS %d); median of %d\n", gg_ref_thread_count(),
           openblas_get_num_threads(), REPS);
    printf("%-44s %8s %8s %9s %8s %9s %8s\n", "case", "gen s", "ref s", "ref GF/s", "dgemm s",
           "dgemm GF/s", "ref/dgemm");
    int rc = 0;
    if (first < argc)
        for (int i = first; i < argc; i++)
            rc |= bench_case(argv[i]);
    else
        for (size_t i = 0; i < sizeof DEFAULT_CASES / sizeof *DEFAULT_CASES; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", GG_SOURCE_DIR, DEFAULT_CASES[i]);
            rc |= bench_case(path);
        }
    return rc;
}

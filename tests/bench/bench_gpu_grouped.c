/*
 * bench_gpu_grouped.c — TFLOP/s of the grouped GEMM kernels on MoE shapes (DeepSeek-V3: 32
 * experts, N 4096, K 7168; Qwen3-235B: 16 experts, N 3072, K 4096; gpt-oss-20B: 32 experts,
 * N 5760, K 2880; 32768 routed rows), balanced and skewed routing, fwd, dgrad and wgrad: our bf16
 * and fp8 grouped kernels against the vendor kernels found by name in the builtin table (any not
 * registered is skipped). Each timing is the median of 20 cudaEvent-timed runs after 3 warm-up
 * runs. Prints a table with the ratio ours / vendor and writes a CSV.
 *
 *   bench_gpu_grouped OUT.csv [--quick]     (--quick: one shape, balanced routing)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gg_kernel.h"
#ifdef GG_HAVE_GPU_KERNELS
#include "kernels/gpu/gpu_kernels.h"

#define ROWS 32768
#define WARMUP 3
#define REPS 20

struct shape {
    const char *name;
    int64_t groups, n, k;
};

static const struct shape shapes[] = {
    {"deepseek_v3", 32, 4096, 7168},
    {"qwen3_235b", 16, 3072, 4096},
    {"gpt_oss_20b", 32, 5760, 2880},
};

static const struct gg_kernel *kernel_named(const char *name)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

/* Group lengths summing to ROWS: equal, or skewed (weights (g+1)^-1.2, the remainder to
   group 0). */
static void routing(int64_t groups, int skewed, int64_t *lens, int64_t *offs)
{
    double w[64], total = 0.0;
    for (int64_t g = 0; g < groups; g++)
        total += w[g] = skewed ? pow((double)(g + 1), -1.2) : 1.0;
    int64_t used = 0;
    for (int64_t g = 0; g < groups; g++)
        used += lens[g] = (int64_t)floor(ROWS * w[g] / total);
    lens[0] += ROWS - used;
    offs[0] = 0;
    for (int64_t g = 0; g < groups; g++)
        offs[g + 1] = offs[g] + lens[g];
}

struct bufs {
    void *a, *b, *c, *ws, *lens, *offs, *a_scale, *b_scale;
    size_t ws_bytes;
};

static int check(enum gg_status st, const char *err)
{
    if (st != GG_OK)
        fprintf(stderr, "bench_gpu_grouped: %s\n", err);
    return st == GG_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median milliseconds of k on p, or a negative value when it cannot run. */
static double time_kernel(const struct gg_kernel *k, const struct gg_problem *p, struct bufs *bf)
{
    char err[512] = "", why[256] = "";
    if (!k->supports(p, why, sizeof why)) {
        fprintf(stderr, "  %s: not supported: %s\n", k->name, why);
        return -1.0;
    }
    size_t ws = k->workspace_bytes ? k->workspace_bytes(p) : 0;
    if (ws > bf->ws_bytes) {
        gg_gpu_free(bf->ws);
        bf->ws = NULL;
        bf->ws_bytes = 0;
        if (!check(gg_gpu_malloc(&bf->ws, ws, err, sizeof err), err))
            return -1.0;
        bf->ws_bytes = ws;
    }
    struct gg_operands o = {bf->a, bf->b, bf->c, NULL, NULL, NULL, ws ? bf->ws : NULL, ws,
                            bf->lens, bf->offs, NULL, NULL, NULL};
    if (p->scaling == GG_SCALING_TENSOR) {
        o.a_scale = bf->a_scale;
        o.b_scale = bf->b_scale;
    }
    struct gg_gpu_timer t;
    double ms[REPS];
    if (!check(gg_gpu_timer_init(&t, err, sizeof err), err))
        return -1.0;
    int ok = 1;
    for (int i = 0; i < WARMUP + REPS && ok; i++) {
        ok = check(gg_gpu_timer_start(&t, err, sizeof err), err);
        enum gg_status st = ok ? k->run(p, &o, err, sizeof err) : GG_OK;
        if (st != GG_OK) {
            fprintf(stderr, "  %s: %s\n", k->name, err);
            ok = 0;
        }
        double m = 0.0;
        if (ok)
            ok = check(gg_gpu_timer_stop(&t, &m, err, sizeof err), err);
        if (i >= WARMUP)
            ms[i - WARMUP] = m;
    }
    gg_gpu_timer_free(&t);
    if (!ok || !check(gg_gpu_sync(err, sizeof err), err))
        return -1.0;
    qsort(ms, REPS, sizeof ms[0], cmp_double);
    return 0.5 * (ms[REPS / 2 - 1] + ms[REPS / 2]);
}

static const char *const op_names[] = {"fwd", "dgrad", "wgrad"};

/* One row: our kernel `ours` and the vendor kernel on the same problem (timed once: *vendor_ms
   is 0 until then). */
static void bench_pair(FILE *csv, const struct shape *s, const char *route, struct gg_problem *p,
                       struct bufs *bf, const struct gg_kernel *ours, const struct gg_kernel *vendor,
                       double *vendor_ms)
{
    double flop = 2.0 * (double)ROWS * (double)s->n * (double)s->k;
    double t_ours = ours ? time_kernel(ours, p, bf) : -1.0;
    double t_vend = *vendor_ms;
    if (t_vend == 0.0)
        t_vend = *vendor_ms = vendor ? time_kernel(vendor, p, bf) : -1.0;
    double tf_ours = t_ours > 0 ? flop / (t_ours * 1e9) : NAN;
    double tf_vend = t_vend > 0 ? flop / (t_vend * 1e9) : NAN;
    double ratio = tf_ours / tf_vend;
    printf("%-12s %-8s %-6s %-30s %8.1f  %-30s %8.1f  %6.2f\n", s->name, route,
           op_names[p->op], ours ? ours->name : "-", tf_ours, vendor ? vendor->name : "-",
           tf_vend, ratio);
    fprintf(csv, "%s,%s,%s,%s,%.4f,%.2f,%s,%.4f,%.2f,%.3f\n", s->name, route, op_names[p->op],
            ours ? ours->name : "", t_ours, tf_ours, vendor ? vendor->name : "", t_vend, tf_vend,
            ratio);
    fflush(stdout);
    fflush(csv);
}

static int bench_shape(FILE *csv, const struct shape *s, int skewed)
{
    char err[512] = "";
    int64_t lens[64] = {0}, offs[65] = {0};
    routing(s->groups, skewed, lens, offs);
    int64_t wide = s->n > s->k ? s->n : s->k;
    size_t a_bytes = (size_t)ROWS * (size_t)wide * 2, b_bytes = (size_t)(s->groups * s->n * s->k) * 2;
    size_t c_bytes = a_bytes > b_bytes ? a_bytes : b_bytes;
    struct bufs bf;
    memset(&bf, 0, sizeof bf);
    float ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    int ok = check(gg_gpu_malloc(&bf.a, a_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.b, b_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.c, c_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.lens, sizeof lens, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.offs, sizeof offs, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.a_scale, sizeof ones, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.b_scale, sizeof ones, err, sizeof err), err) &&
             /* 0x3C: bf16 0x3C3C ~ 0.0115, e4m3 0x3C = 1.5: finite sums at every K. */
             check(gg_gpu_fill(bf.a, 0x3C, a_bytes, err, sizeof err), err) &&
             check(gg_gpu_fill(bf.b, 0x3C, b_bytes, err, sizeof err), err) &&
             check(gg_gpu_copy(bf.lens, lens, sizeof lens, GG_GPU_H2D, err, sizeof err), err) &&
             check(gg_gpu_copy(bf.offs, offs, sizeof offs, GG_GPU_H2D, err, sizeof err), err) &&
             check(gg_gpu_copy(bf.a_scale, ones, sizeof ones, GG_GPU_H2D, err, sizeof err), err) &&
             check(gg_gpu_copy(bf.b_scale, ones, sizeof ones, GG_GPU_H2D, err, sizeof err), err);
    const char *route = skewed ? "skewed" : "balanced";
    const struct gg_kernel *bf16_ours[] = {&gg_kernel_grouped_bf16_gpu_persistent,
                                           &gg_kernel_grouped_bf16_gpu_tiled};
    const struct gg_kernel *bf16_vendor = kernel_named("grouped_bf16_cublas_grouped");
    const struct gg_kernel *fp8_ours = &gg_kernel_grouped_fp8_gpu_tiled;
    const struct gg_kernel *fp8_vendor = kernel_named("grouped_fp8_cublaslt_tensor");
    for (int op = GG_OP_GROUPED_FWD; ok && op <= GG_OP_GROUPED_WGRAD; op++) {
        struct gg_problem p;
        memset(&p, 0, sizeof p);
        p.op = (enum gg_op)op;
        p.a_dtype = p.b_dtype = p.c_dtype = GG_DTYPE_BF16;
        p.acc_dtype = GG_DTYPE_F32;
        p.groups = s->groups;
        p.m = ROWS;
        p.n = s->n;
        p.k = s->k;
        p.lda = op == GG_OP_GROUPED_FWD ? s->k : s->n;
        p.ldb = s->k;
        p.ldc = op == GG_OP_GROUPED_FWD ? s->n : s->k;
        p.stride_b = s->n * s->k;
        p.stride_c = op == GG_OP_GROUPED_WGRAD ? s->n * s->k : 0;
        p.group_lens = lens;
        p.group_offs = offs;
        double vendor_ms = 0.0;
        for (size_t i = 0; i < 2; i++)
            bench_pair(csv, s, route, &p, &bf, bf16_ours[i], bf16_vendor, &vendor_ms);
        p.a_dtype = p.b_dtype = GG_DTYPE_E4M3;
        p.scaling = GG_SCALING_TENSOR;
        vendor_ms = 0.0;
        bench_pair(csv, s, route, &p, &bf, fp8_ours, fp8_vendor, &vendor_ms);
    }
    gg_gpu_free(bf.a);
    gg_gpu_free(bf.b);
    gg_gpu_free(bf.c);
    gg_gpu_free(bf.ws);
    gg_gpu_free(bf.lens);
    gg_gpu_free(bf.offs);
    gg_gpu_free(bf.a_scale);
    gg_gpu_free(bf.b_scale);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.csv [--quick]\n", argv[0]);
        return 2;
    }
    if (gg_gpu_device_count() == 0) {
        fprintf(stderr, "bench_gpu_grouped: no GPU device\n");
        return 1;
    }
    int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    FILE *csv = fopen(argv[1], "w");
    if (csv == NULL) {
        fprintf(stderr, "bench_gpu_grouped: cannot write %s\n", argv[1]);
        return 1;
    }
    fprintf(csv, "shape,routing,op,ours,ours_ms,ours_tflops,vendor,vendor_ms,vendor_tflops,"
                 "ratio\n");
    printf("%-12s %-8s %-6s %-30s %8s  %-30s %8s  %6s\n", "shape", "routing", "op", "ours",
           "TFLOP/s", "vendor", "TFLOP/s", "ratio");
    int ok = 1;
    for (size_t i = 0; i < (quick ? 1 : sizeof shapes / sizeof shapes[0]) && ok; i++)
        for (int skewed = 0; skewed <= (quick ? 0 : 1) && ok; skewed++)
            ok = bench_shape(csv, &shapes[i], skewed);
    fclose(csv);
    return ok ? 0 : 1;
}

#else

int main(void)
{
    fprintf(stderr, "bench_gpu_grouped: built without GPU kernels (configure with -DGG_CUDA=ON)\n");
    return 1;
}

#endif

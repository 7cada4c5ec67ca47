/*
 * bench_gpu_grouped.c — TFLOP/s of the grouped GEMM kernels on MoE shapes (DeepSeek-V3: 32
 * experts, N 4096, K 7168; Qwen3-235B: 16 experts, N 3072, K 4096; gpt-oss-20B: 32 experts,
 * N 5760, K 2880; 32768 routed rows unless --rows), balanced and skewed routing, fwd, dgrad and
 * wgrad: our bf16 and fp8 grouped kernels against the vendor kernels found by name in the builtin
 * table (any not registered is skipped). Each timing is the median of 20 cudaEvent-timed runs after 3 warm-up
 * runs. Every timed kernel's output is then checked: C is poisoned with NaN, the kernel runs once
 * more, and the first and last rows of every group (wgrad: the first, middle and last row of
 * every group's weight gradient) must hold the closed-form value of the constant inputs, the
 * reduction's length times the product of the two input values, within 1% (bf16 rounding of the
 * output is 0.4%). A wrong output of ours fails the benchmark; a wrong vendor output is reported
 * as "WRONG" in the table and the CSV. Prints a table with the ratio ours / vendor and writes a
 * CSV.
 *
 * Python kernels (torch._grouped_mm and torch._scaled_grouped_mm, the grouped GEMMs users pick)
 * are timed in the same run through the bridge: each row's problem is written as a case file
 * (the same group sizes and the same constant inputs; FP8 with rowwise scales, the recipe of
 * torch._scaled_grouped_mm) and `ggfuzz --plugin FILE bench --kernel NAME` times it in its own
 * process (median of 20 runs after 3, device events on the harness's stream, the bridge's cost
 * included). Their outputs are not checked here (campaigns verify them). Each row then also gives
 * the Python kernel that ran its problem and the ratio ours / it.
 *
 *   bench_gpu_grouped OUT.csv [--quick] [--shape NAME] [--routing balanced|skewed]
 *                     [--op fwd|dgrad|wgrad] [--rows N] [--python FILE.py:KERNEL]...
 *                     [--no-python]
 *
 * --python (repeatable) names the Python kernels; by default the adapters of the source tree
 * (kernels/python/adapters: grouped_bf16_torch_grouped_mm, grouped_fp8_torch_scaled_grouped_mm)
 * when their files exist; --no-python times none.
 *
 * --quick: the first shape, balanced routing. --shape, --routing and --op keep only the rows
 * named (for a profiler run of one problem). --rows: routed rows other than 32768 (balanced
 * routing with N = groups x L gives every group L tokens: how a kernel's time grows with the
 * tokens per expert).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/gg_kernel.h"
#include "kernels/builtin/gg_builtin.h"
#include "reference/gg_ref.h"
#ifdef GG_HAVE_GPU_KERNELS
#include "kernels/gpu/gpu_kernels.h"

static int64_t g_rows = 32768; /* routed rows (--rows) */
#define WARMUP 3
#define REPS 20
#define CHECK_TOL 1e-2
#define FILL 0x3C /* bf16 0x3C3C ~ 0.0115, e4m3 0x3C = 1.5: finite sums at every K */

struct shape {
    const char *name;
    int64_t groups, n, k;
};

static const struct shape shapes[] = {
    {"deepseek_v3", 32, 4096, 7168},
    {"qwen3_235b", 16, 3072, 4096},
    {"gpt_oss_20b", 32, 5760, 2880},
};

/* The Python kernels timed through the bridge, and what `ggfuzz bench` measured for them. */
#define MAX_PY 4
#define MAX_PY_RESULTS 256
struct pykernel {
    char file[1024], name[128];
};
static struct pykernel g_py[MAX_PY];
static int g_npy;
struct pyresult {
    char stem[128];
    int kernel; /* index in g_py */
    double tflops;
};
static struct pyresult g_pyres[MAX_PY_RESULTS];
static int g_npyres;

static const struct gg_kernel *kernel_named(const char *name)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

/* Group lengths summing to g_rows: equal, or skewed (weights (g+1)^-1.2, the remainder to
   group 0). */
static void routing(int64_t groups, int skewed, int64_t *lens, int64_t *offs)
{
    double w[64], total = 0.0;
    for (int64_t g = 0; g < groups; g++)
        total += w[g] = skewed ? pow((double)(g + 1), -1.2) : 1.0;
    int64_t used = 0;
    for (int64_t g = 0; g < groups; g++)
        used += lens[g] = (int64_t)floor(g_rows * w[g] / total);
    lens[0] += g_rows - used;
    offs[0] = 0;
    for (int64_t g = 0; g < groups; g++)
        offs[g + 1] = offs[g] + lens[g];
}

struct bufs {
    void *a, *b, *c, *ws, *lens, *offs, *a_scale, *b_scale;
    size_t ws_bytes, c_bytes;
};

/* What one kernel did on one problem: the median milliseconds (negative when it could not
   run) and the largest relative error of the checked outputs. */
struct timing {
    double ms, rel_err;
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

/* The worse of two relative errors; a NaN (the poison read back) wins. */
static double worse(double w, double e)
{
    return e > w || e != e ? e : w;
}

/* The largest relative error, against `want`, of the `count` bf16 values at C + at (bytes). */
static double row_error(const struct bufs *bf, size_t at, int64_t count, double want, int *ok)
{
    static uint16_t row[8192];
    char err[512] = "";
    if (count > 8192 || !check(gg_gpu_copy(row, (const char *)bf->c + at, (size_t)count * 2,
                                           GG_GPU_D2H, err, sizeof err), err)) {
        *ok = 0;
        return INFINITY;
    }
    double worst = 0.0;
    for (int64_t j = 0; j < count; j++)
        worst = worse(worst, fabs(gg_decode(GG_DTYPE_BF16, row[j]) - want) /
                                 (want != 0.0 ? want : 1.0));
    return worst;
}

/* The largest relative error of C after a run of p on the constant inputs (see the header):
   each group's first and last rows (wgrad: the first, middle and last row of its N x K
   gradient) against the reduction's length times the inputs' product. */
static double output_error(const struct gg_problem *p, const struct bufs *bf, int *ok)
{
    double v = gg_decode(p->a_dtype, p->a_dtype == GG_DTYPE_BF16 ? FILL << 8 | FILL : FILL);
    double worst = 0.0;
    for (int64_t g = 0; g < p->groups && *ok; g++) {
        int64_t len = p->group_lens[g], off = p->group_offs[g];
        int64_t rows[3], nrows = 0, width = p->ldc;
        size_t base = 0;
        double red;
        if (p->op == GG_OP_GROUPED_WGRAD) {
            rows[0] = 0, rows[1] = p->n / 2, rows[2] = p->n - 1, nrows = 3;
            base = (size_t)(g * p->stride_c) * 2;
            red = (double)len;
        } else {
            rows[0] = off, rows[1] = off + len - 1, nrows = len > 0 ? 2 : 0;
            red = (double)(p->op == GG_OP_GROUPED_FWD ? p->k : p->n);
        }
        for (int64_t r = 0; r < nrows && *ok; r++)
            worst = worse(worst, row_error(bf, base + (size_t)(rows[r] * p->ldc) * 2, width,
                                           red * v * v, ok));
    }
    return worst;
}

/* ---- Python kernels through the bridge ---------------------------------------------------- */

static const char *const op_names[] = {"fwd", "dgrad", "wgrad"};

/* The case file name of a row's problem: shape_routing_op_dtype. */
static void row_stem(char *buf, size_t len, const char *shape, const char *route, int op, int fp8)
{
    snprintf(buf, len, "%s_%s_%s_%s", shape, route, op_names[op], fp8 ? "fp8" : "bf16");
}

/* Writes the problem of a row as a case file in dir: the group sizes of the routing, constant
   inputs of the values the table's own runs use (FP8: rowwise scales). */
static int write_case(const char *dir, const struct shape *s, int skewed, int op, int fp8)
{
    int64_t lens[64] = {0}, offs[65] = {0};
    routing(s->groups, skewed, lens, offs);
    char stem[128], path[1400];
    row_stem(stem, sizeof stem, s->name, skewed ? "skewed" : "balanced", op, fp8);
    snprintf(path, sizeof path, "%s/%s.case", dir, stem);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bench_gpu_grouped: cannot write %s\n", path);
        return 0;
    }
    const char *in = fp8 ? "e4m3" : "bf16";
    double v = gg_decode(fp8 ? GG_DTYPE_E4M3 : GG_DTYPE_BF16, fp8 ? FILL : FILL << 8 | FILL);
    fprintf(f, "ggfuzz-case 1\nop grouped_%s\nkernel %s\ndtypes a=%s b=%s c=bf16 acc=f32\n"
               "scaling %s\ngroups %lld\ngroup_lens", op_names[op], g_py[0].name, in, in,
            fp8 ? "rowwise" : "none", (long long)s->groups);
    for (int64_t g = 0; g < s->groups; g++)
        fprintf(f, " %lld", (long long)lens[g]);
    fprintf(f, "\nn %lld\nk %lld\ndata a=const(%.17g) b=const(%.17g)\nseed 1\n",
            (long long)s->n, (long long)s->k, v, v);
    return fclose(f) == 0;
}

/* Reads the CSV `ggfuzz bench` wrote for Python kernel i. */
static void read_results(const char *csv_path, int i)
{
    FILE *f = fopen(csv_path, "r");
    char line[4096];
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) && g_npyres < MAX_PY_RESULTS) {
        char *field[16];
        int n = 0;
        for (char *p = line; n < 16 && p != NULL; n++) {
            field[n] = p;
            p = strchr(p, ',');
            if (p != NULL)
                *p++ = '\0';
        }
        if (n < 13 || strcmp(field[0], "case") == 0)
            continue;
        const char *base = strrchr(field[0], '/');
        base = base ? base + 1 : field[0];
        struct pyresult *r = &g_pyres[g_npyres++];
        snprintf(r->stem, sizeof r->stem, "%.*s", (int)strcspn(base, "."), base);
        r->kernel = i;
        r->tflops = strtod(field[12], NULL);
    }
    fclose(f);
}

/* Writes every kept row's problem as a case and times each Python kernel on them with
   `ggfuzz bench` (its lines go to stderr). */
static void bench_python(const char *ggfuzz, int quick, int (*keep)(const struct shape *, int,
                                                                    int))
{
    char dir[] = "/tmp/bench_gpu_grouped.XXXXXX";
    if (g_npy == 0 || mkdtemp(dir) == NULL)
        return;
    int ok = 1;
    for (size_t i = 0; i < (quick ? 1 : sizeof shapes / sizeof shapes[0]); i++)
        for (int skewed = 0; skewed <= (quick ? 0 : 1); skewed++)
            for (int op = GG_OP_GROUPED_FWD; op <= GG_OP_GROUPED_WGRAD; op++)
                for (int fp8 = 0; ok && fp8 <= 1; fp8++)
                    if (keep(&shapes[i], skewed, op))
                        ok = write_case(dir, &shapes[i], skewed, op, fp8);
    for (int i = 0; ok && i < g_npy; i++) {
        char cmd[4096], csv[1400];
        snprintf(csv, sizeof csv, "%s/%s.csv", dir, g_py[i].name);
        snprintf(cmd, sizeof cmd, "'%s' --plugin '%s' bench --kernel '%s' --csv '%s' '%s' 1>&2",
                 ggfuzz, g_py[i].file, g_py[i].name, csv, dir);
        fprintf(stderr, "bench_gpu_grouped: %s\n", cmd);
        int rc = system(cmd);
        if (rc != 0)
            fprintf(stderr, "bench_gpu_grouped: ggfuzz bench of %s exited with %d (refused cases "
                            "exit 4)\n", g_py[i].name, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        read_results(csv, i);
        remove(csv);
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_gpu_grouped: could not remove %s\n", dir);
}

/* The Python kernel's TFLOP/s on a row's problem (NAN: none ran it) and its index in *which. */
static double python_tflops(const char *shape, const char *route, const struct gg_problem *p,
                            int *which)
{
    char stem[128];
    row_stem(stem, sizeof stem, shape, route, p->op, p->a_dtype != GG_DTYPE_BF16);
    for (int i = 0; i < g_npyres; i++)
        if (strcmp(g_pyres[i].stem, stem) == 0) {
            *which = g_pyres[i].kernel;
            return g_pyres[i].tflops;
        }
    *which = -1;
    return NAN;
}

/* k on p: the median milliseconds (negative when it cannot run) and, from one more run on a
   poisoned C, the output's largest relative error. */
static struct timing time_kernel(const struct gg_kernel *k, const struct gg_problem *p,
                                 struct bufs *bf)
{
    struct timing none = {-1.0, NAN};
    char err[512] = "", why[256] = "";
    if (!k->supports(p, why, sizeof why)) {
        fprintf(stderr, "  %s: not supported: %s\n", k->name, why);
        return none;
    }
    size_t ws = k->workspace_bytes ? k->workspace_bytes(p) : 0;
    if (ws > bf->ws_bytes) {
        gg_gpu_free(bf->ws);
        bf->ws = NULL;
        bf->ws_bytes = 0;
        if (!check(gg_gpu_malloc(&bf->ws, ws, err, sizeof err), err))
            return none;
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
        return none;
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
    ok = ok && check(gg_gpu_fill(bf->c, 0xFF, bf->c_bytes, err, sizeof err), err) &&
         check(k->run(p, &o, err, sizeof err), err) && check(gg_gpu_sync(err, sizeof err), err);
    struct timing r = none;
    if (ok)
        r.rel_err = output_error(p, bf, &ok);
    if (!ok)
        return none;
    qsort(ms, REPS, sizeof ms[0], cmp_double);
    r.ms = 0.5 * (ms[REPS / 2 - 1] + ms[REPS / 2]);
    return r;
}

/* "ok", or "WRONG" past the tolerance, for a row of the table. */
static const char *verdict(const struct timing *t)
{
    return t->ms < 0 ? "-" : t->rel_err <= CHECK_TOL ? "ok" : "WRONG";
}

/* One row: our kernel `ours` and the vendor kernel on the same problem (timed once: vendor->ms
   is 0 until then). Returns 0 when our kernel's output is wrong. */
static int bench_pair(FILE *csv, const struct shape *s, const char *route, struct gg_problem *p,
                      struct bufs *bf, const struct gg_kernel *ours,
                      const struct gg_kernel *vendor, struct timing *vt)
{
    double flop = 2.0 * (double)g_rows * (double)s->n * (double)s->k;
    struct timing none = {-1.0, NAN};
    struct timing ot = ours ? time_kernel(ours, p, bf) : none;
    if (vt->ms == 0.0)
        *vt = vendor ? time_kernel(vendor, p, bf) : none;
    double tf_ours = ot.ms > 0 ? flop / (ot.ms * 1e9) : NAN;
    double tf_vend = vt->ms > 0 ? flop / (vt->ms * 1e9) : NAN;
    double ratio = tf_ours / tf_vend;
    int py = -1;
    double tf_py = python_tflops(s->name, route, p, &py);
    printf("%-12s %-8s %-6s %-30s %8.1f %-5s  %-30s %8.1f %-5s  %6.2f  %-36s %8.1f  %6.2f\n",
           s->name, route, op_names[p->op], ours ? ours->name : "-", tf_ours, verdict(&ot),
           vendor ? vendor->name : "-", tf_vend, verdict(vt), ratio, py >= 0 ? g_py[py].name : "-",
           tf_py, tf_ours / tf_py);
    fprintf(csv, "%s,%s,%s,%s,%.4f,%.2f,%.3g,%s,%.4f,%.2f,%.3g,%.3f,%s,%.2f,%.3f\n", s->name,
            route, op_names[p->op], ours ? ours->name : "", ot.ms, tf_ours, ot.rel_err,
            vendor ? vendor->name : "", vt->ms, tf_vend, vt->rel_err, ratio,
            py >= 0 ? g_py[py].name : "", tf_py, tf_ours / tf_py);
    fflush(stdout);
    fflush(csv);
    if (ot.ms >= 0 && !(ot.rel_err <= CHECK_TOL))
        fprintf(stderr, "bench_gpu_grouped: %s's output is wrong (relative error %.3g)\n",
                ours->name, ot.rel_err);
    return ot.ms < 0 || ot.rel_err <= CHECK_TOL;
}

/* The rows --shape, --routing and --op keep (NULL: all). */
struct only {
    const char *shape, *routing, *op;
};

static int kept(const char *want, const char *name)
{
    return want == NULL || strcmp(want, name) == 0;
}

static struct only g_only;

/* Whether the row (shape, routing, op) is kept by --shape, --routing and --op. */
static int row_kept(const struct shape *s, int skewed, int op)
{
    return kept(g_only.shape, s->name) && kept(g_only.routing, skewed ? "skewed" : "balanced") &&
           kept(g_only.op, op_names[op]);
}

/* Adds the Python kernel FILE.py:KERNEL; 0 when the argument is not of that form. */
static int add_python(const char *arg)
{
    const char *colon = strrchr(arg, ':');
    if (colon == NULL || colon == arg || colon[1] == '\0' || g_npy == MAX_PY)
        return 0;
    snprintf(g_py[g_npy].file, sizeof g_py[g_npy].file, "%.*s", (int)(colon - arg), arg);
    snprintf(g_py[g_npy].name, sizeof g_py[g_npy].name, "%s", colon + 1);
    g_npy++;
    return 1;
}

/* The adapters of the source tree whose files exist. */
static void default_python(void)
{
    static const char *const adapters[][2] = {
        {"torch_grouped_mm.py", "grouped_bf16_torch_grouped_mm"},
        {"torch_scaled_grouped_mm.py", "grouped_fp8_torch_scaled_grouped_mm"},
    };
    for (size_t i = 0; i < sizeof adapters / sizeof adapters[0]; i++) {
        char file[1200], arg[1400];
        snprintf(file, sizeof file, "%s/kernels/python/adapters/%s", GG_SOURCE_DIR,
                 adapters[i][0]);
        snprintf(arg, sizeof arg, "%s:%s", file, adapters[i][1]);
        if (access(file, R_OK) == 0)
            add_python(arg);
    }
}

static int bench_shape(FILE *csv, const struct shape *s, int skewed, const struct only *only)
{
    char err[512] = "";
    int64_t lens[64] = {0}, offs[65] = {0};
    routing(s->groups, skewed, lens, offs);
    int64_t wide = s->n > s->k ? s->n : s->k;
    size_t a_bytes = (size_t)g_rows * (size_t)wide * 2, b_bytes = (size_t)(s->groups * s->n * s->k) * 2;
    struct bufs bf;
    memset(&bf, 0, sizeof bf);
    bf.c_bytes = a_bytes > b_bytes ? a_bytes : b_bytes;
    float ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    int ok = check(gg_gpu_malloc(&bf.a, a_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.b, b_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.c, bf.c_bytes, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.lens, sizeof lens, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.offs, sizeof offs, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.a_scale, sizeof ones, err, sizeof err), err) &&
             check(gg_gpu_malloc(&bf.b_scale, sizeof ones, err, sizeof err), err) &&
             check(gg_gpu_fill(bf.a, FILL, a_bytes, err, sizeof err), err) &&
             check(gg_gpu_fill(bf.b, FILL, b_bytes, err, sizeof err), err) &&
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
        if (!kept(only->op, op_names[op]))
            continue;
        struct gg_problem p;
        memset(&p, 0, sizeof p);
        p.op = (enum gg_op)op;
        p.a_dtype = p.b_dtype = p.c_dtype = GG_DTYPE_BF16;
        p.acc_dtype = GG_DTYPE_F32;
        p.groups = s->groups;
        p.m = g_rows;
        p.n = s->n;
        p.k = s->k;
        p.lda = op == GG_OP_GROUPED_FWD ? s->k : s->n;
        p.ldb = s->k;
        p.ldc = op == GG_OP_GROUPED_FWD ? s->n : s->k;
        p.stride_b = s->n * s->k;
        p.stride_c = op == GG_OP_GROUPED_WGRAD ? s->n * s->k : 0;
        p.group_lens = lens;
        p.group_offs = offs;
        struct timing vt = {0.0, NAN};
        for (size_t i = 0; i < 2; i++)
            ok &= bench_pair(csv, s, route, &p, &bf, bf16_ours[i], bf16_vendor, &vt);
        p.a_dtype = p.b_dtype = GG_DTYPE_E4M3;
        p.scaling = GG_SCALING_TENSOR;
        vt.ms = 0.0;
        ok &= bench_pair(csv, s, route, &p, &bf, fp8_ours, fp8_vendor, &vt);
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

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s OUT.csv [--quick] [--shape NAME] [--routing balanced|skewed] "
                    "[--op fwd|dgrad|wgrad] [--rows N] [--python FILE.py:KERNEL]... "
                    "[--no-python] [--ggfuzz PATH]\n", argv0);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-')
        return usage(argv[0]);
    int quick = 0, no_python = 0;
    const char *ggfuzz = GG_GGFUZZ_EXE;
    struct only only = {NULL, NULL, NULL};
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--python") == 0 && i + 1 < argc) {
            if (!add_python(argv[++i]))
                return usage(argv[0]);
            continue;
        }
        if (strcmp(argv[i], "--no-python") == 0) {
            no_python = 1;
            continue;
        }
        if (strcmp(argv[i], "--ggfuzz") == 0 && i + 1 < argc) {
            ggfuzz = argv[++i];
            continue;
        }
        const char **slot = strcmp(argv[i], "--shape") == 0     ? &only.shape
                            : strcmp(argv[i], "--routing") == 0 ? &only.routing
                            : strcmp(argv[i], "--op") == 0      ? &only.op
                                                                : NULL;
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
            g_rows = strtoll(argv[++i], NULL, 10);
        else if (slot != NULL && i + 1 < argc)
            *slot = argv[++i];
        else
            return usage(argv[0]);
    }
    if (g_rows < 1 || g_rows > ((int64_t)1 << 20)) {
        fprintf(stderr, "bench_gpu_grouped: --rows must be 1 .. 1048576\n");
        return 2;
    }
    if (gg_gpu_device_count() == 0) {
        fprintf(stderr, "bench_gpu_grouped: no GPU device\n");
        return 1;
    }
    g_only = only;
    if (no_python)
        g_npy = 0;
    else if (g_npy == 0)
        default_python();
    bench_python(ggfuzz, quick, row_kept);
    FILE *csv = fopen(argv[1], "w");
    if (csv == NULL) {
        fprintf(stderr, "bench_gpu_grouped: cannot write %s\n", argv[1]);
        return 1;
    }
    fprintf(csv, "shape,routing,op,ours,ours_ms,ours_tflops,ours_rel_err,vendor,vendor_ms,"
                 "vendor_tflops,vendor_rel_err,ratio,python,python_tflops,ratio_python\n");
    printf("%-12s %-8s %-6s %-30s %8s %-5s  %-30s %8s %-5s  %6s  %-36s %8s  %6s\n", "shape",
           "routing", "op", "ours", "TFLOP/s", "check", "vendor", "TFLOP/s", "check", "ratio",
           "python (bridge)", "TFLOP/s", "ratio");
    int ok = 1;
    for (size_t i = 0; i < (quick ? 1 : sizeof shapes / sizeof shapes[0]) && ok; i++)
        for (int skewed = 0; skewed <= (quick ? 0 : 1) && ok; skewed++)
            if (kept(only.shape, shapes[i].name) &&
                kept(only.routing, skewed ? "skewed" : "balanced"))
                ok = bench_shape(csv, &shapes[i], skewed, &only);
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

/*
 * test_gpu_datagen.c — data generated on the device is bit-identical to the host's: for every
 * distribution and every input dtype, with and without saturation, and for every quantisation
 * recipe (tensor-wise, per-matrix tensor-wise, MX under both scale rules with E8M0 planting and
 * without saturation, MX on B only, block128), a case is materialised on the host and its
 * operands generated again on the device from the same plans; every byte of A, B and their
 * scales must agree. Then seed-corpus cases run on the cuBLAS
 * grouped adapter (A and B generated on the device by the runner) keep their expected verdicts.
 * Skipped without a usable device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"
#include "fuzz/run/gg_run.h"
#include "fuzz/run/device/gg_device.h"

static struct gg_device *need_device(void)
{
    struct gg_device *d = NULL;
    char err[512];
    if (gg_device_get(&d, err, sizeof err) != GG_OK)
        cr_skip_test("no usable GPU: %s", err);
    return d;
}

static const char *const DISTS[] = {"normal(0,1)",          "normal(3,0.25)", "uniform(-2,5)",
                                    "ints(8)",              "const(-1.5)",    "outliers(1,0.01,100)",
                                    "nearsat",              "subnormal(0.5)", "specials(0.05)",
                                    "codes(0.05)"};
#define N_DISTS (sizeof DISTS / sizeof DISTS[0])

static const char *const DTYPES[] = {"bf16", "f16",      "f32",      "e4m3",
                                     "e5m2", "e4m3fnuz", "e5m2fnuz", "e2m1"};
#define N_DTYPES (sizeof DTYPES / sizeof DTYPES[0])
/* DTYPES[FP8_FIRST .. FP8_FIRST+3] are the fp8 formats, DTYPES[N_DTYPES-1] e2m1. */
#define FP8_FIRST 3

/* Downloads n device bytes and compares them with the host's; returns the first differing
   byte or -1. */
static int64_t first_diff(struct gg_device *d, const struct gg_devbuf *b, const uint8_t *host,
                          size_t n)
{
    uint8_t *got = malloc(n ? n : 1);
    char err[512];
    cr_assert_not_null(got);
    cr_assert_eq(gg_devbuf_download(d, b, 0, got, n, err, sizeof err), GG_OK, "%s", err);
    int64_t at = -1;
    for (size_t i = 0; i < n && at < 0; i++)
        if (got[i] != host[i])
            at = (int64_t)i;
    free(got);
    return at;
}

/* Generates both operands of the materialised case on the device and compares every byte of
   the data and scale buffers with the host's. Returns the number of elements compared. */
static int64_t compare_case(struct gg_device *d, const char *text)
{
    struct gg_case c;
    char err[1024];
    cr_assert_eq(gg_case_parse(text, strlen(text), "inline", &c, err, sizeof err), GG_OK,
                 "%s\n%s", err, text);
    struct gg_tensors t;
    cr_assert_eq(gg_tensors_plan(&c, &t, err, sizeof err), GG_OK, "%s\n%s", err, text);
    cr_assert_eq(gg_tensors_make(&c, 0, &t, err, sizeof err), GG_OK, "%s\n%s", err, text);
    int64_t compared = 0;
    for (int w = 0; w < 2; w++) {
        const struct gg_hostbuf *hd = w ? &t.b : &t.a, *hs = w ? &t.b_scale : &t.a_scale;
        const void *op = w ? t.ops.b : t.ops.a;
        struct gg_devbuf bd, bs;
        cr_assert_eq(gg_devbuf_alloc(d, &bd, hd->bytes, err, sizeof err), GG_OK, "%s", err);
        cr_assert_eq(gg_devbuf_alloc(d, &bs, hs->bytes, err, sizeof err), GG_OK, "%s", err);
        const struct gg_gen_plan *g = &t.gen[w];
        size_t off = (size_t)((const uint8_t *)op - hd->data);
        cr_assert_eq(gg_device_generate(d, g, bd.data + off,
                                        g->quant != GG_GEN_PLAIN && hs->bytes ? bs.data : NULL,
                                        err, sizeof err),
                     GG_OK, "%s", err);
        int64_t at = first_diff(d, &bd, hd->data, hd->bytes);
        cr_expect_eq(at, -1, "operand %c differs at byte %lld (of %zu)\n%s", "AB"[w],
                     (long long)at, hd->bytes, text);
        at = first_diff(d, &bs, hs->data, hs->bytes);
        cr_expect_eq(at, -1, "scales of %c differ at byte %lld (of %zu)\n%s", "AB"[w],
                     (long long)at, hs->bytes, text);
        compared += (int64_t)hd->bytes + (int64_t)hs->bytes;
        gg_devbuf_free(d, &bd);
        gg_devbuf_free(d, &bs);
    }
    gg_tensors_free(&t);
    gg_case_free(&c);
    return compared;
}

/* A grouped_fwd case with an empty middle group, padded leading dimensions and odd element
   offsets (E2M1 nibbles start mid-byte), K = 160: five MX blocks, one full and one partial
   block128 group. */
static void fwd_case(char *buf, size_t len, const char *a, const char *b, const char *scaling,
                     const char *dist_a, const char *dist_b, const char *extra, uint64_t seed)
{
    snprintf(buf, len,
             "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=%s b=%s c=f32 acc=f32\nscaling %s\ngroups 3\ngroup_lens 5 0 7\n"
             "n 40\nk 160\nld a=170 b=163 c=40\noffset a=3 b=5 c=0\ndata a=%s b=%s\n%sseed %#llx\n",
             a, b, scaling, dist_a, dist_b, extra, (unsigned long long)seed);
}

Test(gpu_datagen, every_distribution_and_dtype)
{
    struct gg_device *d = need_device();
    char text[2048];
    int64_t bytes = 0;
    for (size_t k = 0; k < N_DISTS; k++)
        for (size_t f = 0; f < N_DTYPES; f++) {
            fwd_case(text, sizeof text, DTYPES[f], DTYPES[f], "none", DISTS[k],
                     DISTS[(k + 1) % N_DISTS], "", 0x5eed0000u + 16 * k + f);
            bytes += compare_case(d, text);
            /* without saturation: Inf codes, and NaNs of both signs and every payload index */
            fwd_case(text, sizeof text, DTYPES[f], DTYPES[f], "none sat=none", DISTS[k],
                     DISTS[(k + 1) % N_DISTS], "", 0x5eed8000u + 16 * k + f);
            bytes += compare_case(d, text);
        }
    cr_log_info("plain: %lld bytes compared", (long long)bytes);
    cr_expect_gt(bytes, 0);
}

Test(gpu_datagen, recipes)
{
    struct gg_device *d = need_device();
    char text[2048];
    int64_t bytes = 0, cases = 0;
    for (size_t k = 0; k < N_DISTS; k++) {
        uint64_t seed = 0xda7a0000u + 64 * k;
        for (int f = FP8_FIRST; f < FP8_FIRST + 4; f++) {
            const char *x = DTYPES[f], *y = DTYPES[FP8_FIRST + (f + 1 - FP8_FIRST) % 4];
            /* tensor: A per tensor, B per matrix; both saturation modes */
            fwd_case(text, sizeof text, x, y, "tensor", DISTS[k], DISTS[k], "", seed++);
            bytes += compare_case(d, text), cases++;
            fwd_case(text, sizeof text, x, y, "tensor sat=none", DISTS[k], DISTS[k], "", seed++);
            bytes += compare_case(d, text), cases++;
            fwd_case(text, sizeof text, x, y, "block128", DISTS[k], DISTS[k], "", seed++);
            bytes += compare_case(d, text), cases++;
        }
        for (int f = FP8_FIRST; f < (int)N_DTYPES; f++) {
            const char *x = DTYPES[f];
            fwd_case(text, sizeof text, x, x, "mx rule=floor", DISTS[k], DISTS[k], "", seed++);
            bytes += compare_case(d, text), cases++;
            fwd_case(text, sizeof text, x, x, "mx rule=ceil", DISTS[k], DISTS[k],
                     "plant e8m0=0.2\n", seed++);
            bytes += compare_case(d, text), cases++;
            /* MX keeping its Inf and NaN elements under the finite values' scale */
            fwd_case(text, sizeof text, x, x, "mx rule=floor sat=none", DISTS[k], DISTS[k], "",
                     seed++);
            bytes += compare_case(d, text), cases++;
            fwd_case(text, sizeof text, "bf16", x, "mx_b", DISTS[k], DISTS[k], "", seed++);
            bytes += compare_case(d, text), cases++;
        }
    }
    cr_log_info("recipes: %lld cases, %lld bytes compared", (long long)cases, (long long)bytes);
    cr_expect_gt(bytes, 0);
}

/* The other operand layouts: dgrad, wgrad and batched (both B layouts) put A and B in other
   rowsets. */
Test(gpu_datagen, other_ops)
{
    struct gg_device *d = need_device();
    static const char *const texts[] = {
        "ggfuzz-case 1\nop grouped_dgrad\nkernel grouped_fp8_cpu_tiled\n"
        "dtypes a=e5m2fnuz b=e4m3fnuz c=bf16 acc=f32\nscaling tensor\ngroups 4\n"
        "group_lens 65 0 1 63\nn 129\nk 100\ndata a=normal(0,1) b=outliers(1,0.01,50)\n"
        "seed 0xf8a50005\n",
        "ggfuzz-case 1\nop grouped_wgrad\nkernel grouped_bf16_cpu_tiled\n"
        "dtypes a=bf16 b=bf16 c=f32 acc=f32\nscaling none\ngroups 3\ngroup_lens 7 0 9\n"
        "n 33\nk 17\ndata a=uniform(-1,1) b=specials(0.1)\nseed 0x77\n",
        "ggfuzz-case 1\nop batched\nkernel batched_bf16_cpu_tiled\n"
        "dtypes a=bf16 b=bf16 c=f32 acc=f32\nscaling none\nlayout b=kn\nbatch 3\nm 9\nn 31\n"
        "k 20\ndata a=normal(0,1) b=ints(4)\nseed 0x78\n",
        "ggfuzz-case 1\nop batched\nkernel batched_afp4wfp4_cpu_tiled\n"
        "dtypes a=e2m1 b=e2m1 c=f32 acc=f32\nscaling mx\nbatch 2\nm 7\nn 9\nk 96\n"
        "data a=normal(0,1) b=nearsat\nseed 0x79\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        cr_expect_gt(compare_case(d, texts[i]), 0);
}

/* Seed cases on the cuBLAS grouped adapter, whose inputs the runner now generates on the
   device: each keeps the verdict the case expects. */
Test(gpu_datagen, runner_verdicts_unchanged)
{
    need_device();
    static const char *const names[] = {"fwd_basic.case", "fwd_empty_first.case",
                                        "fwd_empty_last.case", "fwd_empty_every_other.case",
                                        "fwd_ints_exact.case"};
    const char *kernel = "grouped_bf16_cublas_grouped";
    gg_registry_init();
    if (!gg_registry_find(kernel))
        cr_skip_test("%s is not built", kernel);
    int ran = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[2048], err[1024] = "";
        snprintf(path, sizeof path, "%s/corpus/seeds/%s", GG_SOURCE_DIR, names[i]);
        struct gg_case c;
        cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
        struct gg_run_opts o = {.kernel = kernel, .mutant = "none"};
        struct gg_run_result r;
        enum gg_status st = gg_run_case(&c, &o, &r, err, sizeof err);
        if (st == GG_E_UNSUPPORTED) {
            cr_log_info("%s refused: %s", names[i], err);
        } else {
            cr_expect_eq(st, GG_OK, "%s: %s", names[i], err);
            if (st == GG_OK) {
                cr_expect_eq(r.verdict.cls, GG_CLASS_PASS, "%s: %s (%s)", names[i],
                             r.verdict.signature, r.verdict.detail);
                ran++;
            }
            gg_run_result_free(&r);
        }
        gg_case_free(&c);
    }
    cr_log_info("%d seed cases ran on %s", ran, kernel);
    cr_expect_gt(ran, 0);
}

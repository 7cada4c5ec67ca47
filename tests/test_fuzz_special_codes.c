/*
 * test_fuzz_special_codes.c — what codes(frac) delivers to a kernel, format by format and recipe
 * by recipe: the input codes (and MX scales) that the materialiser writes for A = codes(0.05),
 * unscaled, tensor-scaled, block128 and MX under both rules, with and without saturation. The
 * table below is the documented behaviour (docs/case-format.md): every listed code must appear,
 * the forbidden ones must not, and a tensor holding a special keeps the scale 1. Generation is
 * deterministic (two materialisations agree byte for byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"

#define MAX_CODES 16

struct row {
    const char *dtype, *scaling;
    uint32_t need[MAX_CODES];   /* codes of A that must appear (0 ends the list) */
    uint32_t forbid[MAX_CODES]; /* codes of A that must not */
    int scale_ff;               /* MX: 1 when some A scale must be 0xFF (NaN), 0 when none may */
};

/* ±Inf, NaN (three codes, both signs), -0, ±max, ±min subnormal, per format. The +0 code 0x00
   cannot be listed (0 ends a list): fnuz's -0 is +0 there. */
static const struct row ROWS[] = {
    /* unscaled and scale-1 tensors: the codes themselves; Inf only without saturation */
    {"e5m2", "none sat=none",
     {0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x80, 0x7B, 0xFB, 0x01, 0x81}, {0}, -1},
    {"e5m2", "tensor sat=none",
     {0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x80, 0x7B, 0xFB, 0x01, 0x81}, {0}, -1},
    {"e5m2", "tensor", {0x7D, 0x7E, 0x7F, 0xFD, 0x80, 0x7B, 0xFB, 0x01, 0x81}, {0x7C, 0xFC}, -1},
    {"e5m2", "block128 sat=none", {0x7C, 0xFC, 0x7F, 0xFF, 0x80, 0x7B, 0xFB, 0x01, 0x81}, {0}, -1},
    /* e4m3 has no Inf: ±Inf is an overflow, NaN without saturation, ±448 with it */
    {"e4m3", "tensor sat=none", {0x7F, 0xFF, 0x80, 0x7E, 0xFE, 0x01, 0x81}, {0}, -1},
    {"e4m3", "none", {0x7F, 0xFF, 0x80, 0x7E, 0xFE, 0x01, 0x81}, {0}, -1},
    /* fnuz: one NaN 0x80 (Inf too, without saturation), no -0 */
    {"e4m3fnuz", "tensor sat=none", {0x80, 0x7F, 0xFF, 0x01, 0x81}, {0}, -1},
    {"e5m2fnuz", "tensor", {0x80, 0x7F, 0xFF, 0x01, 0x81}, {0}, -1},
    /* MX without saturation: Inf and NaN stay element codes under the finite values' scale */
    {"e5m2", "mx rule=floor sat=none",
     {0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x80, 0x7B, 0xFB, 0x01}, {0}, 0},
    {"e4m3", "mx rule=ceil sat=none", {0x7F, 0xFF, 0x80, 0x7E, 0xFE}, {0}, 0},
    {"e2m1", "mx rule=floor sat=none", {0x7, 0xF, 0x8, 0x1, 0x9}, {0}, 0},
    /* MX with saturation: a block with an Inf or NaN gets the NaN scale (its codes 0) */
    {"e5m2", "mx rule=floor", {0x80, 0x7B, 0xFB}, {0x7C, 0xFC, 0x7D, 0x7E, 0x7F, 0xFF}, 1},
    {"e2m1", "mx rule=ceil", {0x7, 0xF, 0x8}, {0}, 1},
    /* 16-bit formats */
    {"bf16", "none sat=none",
     {0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x7FC1, 0xFFC0, 0xFF81, 0xFFC1, 0x8000, 0x7F7F, 0xFF7F,
      0x0001, 0x8001},
     {0}, -1},
    {"bf16", "none", {0x7FC0, 0xFFC1, 0x8000, 0x7F7F, 0xFF7F, 0x0001, 0x8001}, {0x7F80, 0xFF80},
     -1},
    {"f16", "none sat=none", {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x7E01, 0x8000, 0x7BFF, 0x0001},
     {0}, -1},
};

static void case_text(char *buf, size_t len, const struct row *r)
{
    snprintf(buf, len,
             "ggfuzz-case 1\nop dense\nkernel grouped_bf16_cpu_tiled\n"
             "dtypes a=%s b=%s c=f32 acc=f32\nscaling %s\nm 64\nn 8\nk 256\n"
             "data a=codes(0.05) b=normal(0,1)\nseed 0xc0de5\n",
             r->dtype, r->dtype, r->scaling);
}

static void materialise(const char *text, struct gg_case *c, struct gg_tensors *t)
{
    char err[1024];
    cr_assert_eq(gg_case_parse(text, strlen(text), "inline", c, err, sizeof err), GG_OK, "%s\n%s",
                 err, text);
    cr_assert_eq(gg_tensors_plan(c, t, err, sizeof err), GG_OK, "%s\n%s", err, text);
    cr_assert_eq(gg_tensors_make(c, 0, t, err, sizeof err), GG_OK, "%s\n%s", err, text);
}

static int has_code(const struct gg_tensors *t, uint32_t code)
{
    int64_t n = t->p.m * t->p.k;
    for (int64_t i = 0; i < n; i++)
        if (gg_load_code(t->p.a_dtype, t->ops.a, i) == code)
            return 1;
    return 0;
}

Test(fuzz_special_codes, every_format_and_recipe)
{
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        const struct row *r = &ROWS[i];
        char text[1024];
        case_text(text, sizeof text, r);
        struct gg_case c;
        struct gg_tensors t;
        materialise(text, &c, &t);
        for (int j = 0; j < MAX_CODES && r->need[j]; j++)
            cr_expect(has_code(&t, r->need[j]), "%s %s: code %#x missing", r->dtype, r->scaling,
                      r->need[j]);
        for (int j = 0; j < MAX_CODES && r->forbid[j]; j++)
            cr_expect(!has_code(&t, r->forbid[j]), "%s %s: code %#x present", r->dtype,
                      r->scaling, r->forbid[j]);
        if (t.p.scaling == GG_SCALING_TENSOR)
            cr_expect_eq(*(const float *)t.ops.a_scale, 1.0f, "%s %s: scale", r->dtype,
                         r->scaling);
        if (r->scale_ff >= 0) {
            int ff = 0;
            for (int64_t b = 0; b < gg_problem_a_scale_count(&t.p); b++)
                ff |= ((const uint8_t *)t.ops.a_scale)[b] == 0xFF;
            cr_expect_eq(ff, r->scale_ff, "%s %s: NaN scales", r->dtype, r->scaling);
        }
        gg_tensors_free(&t);
        gg_case_free(&c);
    }
}

/* The same case materialised twice gives the same codes and scales. */
Test(fuzz_special_codes, deterministic)
{
    const struct row *r = &ROWS[8];
    char text[1024];
    case_text(text, sizeof text, r);
    struct gg_case c1, c2;
    struct gg_tensors t1, t2;
    materialise(text, &c1, &t1);
    materialise(text, &c2, &t2);
    cr_assert_eq(t1.a.bytes, t2.a.bytes);
    cr_expect_eq(memcmp(t1.ops.a, t2.ops.a, (size_t)gg_dtype_bytes(t1.p.a_dtype, t1.p.m * t1.p.k)),
                 0);
    cr_expect_eq(memcmp(t1.ops.a_scale, t2.ops.a_scale,
                        (size_t)gg_problem_a_scale_count(&t1.p)),
                 0);
    gg_tensors_free(&t1);
    gg_tensors_free(&t2);
    gg_case_free(&c1);
    gg_case_free(&c2);
}

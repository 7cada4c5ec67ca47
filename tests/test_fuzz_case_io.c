/*
 * test_fuzz_case_io.c — the case model and valid case files: every file in data/cases parses
 * and round-trips (text and struct), programmatic cases of every op, optional key, scaling
 * recipe and bias round-trip, group sizes expand deterministically, moe_sorted cases map onto
 * the problem descriptor, the identity ignores metadata, comments and whitespace but no input
 * line, saving is atomic, and canonical texts are pinned.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "case_files.h"
#include "fuzz/case/gg_case.h"

#define CASES GG_TEST_DATA "/cases"

static void assert_dist_equal(const struct gg_dist *x, const struct gg_dist *y)
{
    cr_assert_eq(x->kind, y->kind);
    cr_assert_eq(x->fmt, y->fmt);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(x->p[i], y->p[i]);
}

/* Every field, arrays included. */
static void assert_case_equal(const struct gg_case *x, const struct gg_case *y)
{
    cr_assert_eq(x->op, y->op);
    cr_assert_str_eq(x->kernel, y->kernel);
    cr_assert_eq(x->n_opts, y->n_opts);
    for (int i = 0; i < x->n_opts; i++) {
        cr_assert_str_eq(x->opt_key[i], y->opt_key[i]);
        cr_assert_eq(x->opt_value[i], y->opt_value[i]);
    }
    cr_assert_str_eq(x->mutant, y->mutant);
    cr_assert_eq(x->a_dtype, y->a_dtype);
    cr_assert_eq(x->b_dtype, y->b_dtype);
    cr_assert_eq(x->c_dtype, y->c_dtype);
    cr_assert_eq(x->acc_dtype, y->acc_dtype);
    cr_assert_eq(x->scaling, y->scaling);
    cr_assert_eq(x->mx_rule, y->mx_rule);
    cr_assert_eq(x->quant_sat, y->quant_sat);
    cr_assert_eq(x->b_layout, y->b_layout);
    cr_assert_eq(x->groups, y->groups);
    cr_assert_eq(x->n_items, y->n_items);
    for (int i = 0; i < x->n_items; i++) {
        cr_assert_eq(x->items[i].is_rand, y->items[i].is_rand);
        cr_assert_eq(x->items[i].value, y->items[i].value);
        cr_assert_eq(x->items[i].lo, y->items[i].lo);
        cr_assert_eq(x->items[i].hi, y->items[i].hi);
        cr_assert_eq(x->items[i].repeat, y->items[i].repeat);
    }
    cr_assert_eq(x->m, y->m);
    cr_assert_eq(x->n, y->n);
    cr_assert_eq(x->k, y->k);
    cr_assert_eq(x->topk, y->topk);
    cr_assert_eq(x->block_m, y->block_m);
    cr_assert_eq(x->bias_dtype, y->bias_dtype);
    cr_assert_eq(x->lda, y->lda);
    cr_assert_eq(x->ldb, y->ldb);
    cr_assert_eq(x->ldc, y->ldc);
    cr_assert_eq(x->stride_a, y->stride_a);
    cr_assert_eq(x->stride_b, y->stride_b);
    cr_assert_eq(x->stride_c, y->stride_c);
    cr_assert_eq(x->off_a, y->off_a);
    cr_assert_eq(x->off_b, y->off_b);
    cr_assert_eq(x->off_c, y->off_c);
    assert_dist_equal(&x->dist_a, &y->dist_a);
    assert_dist_equal(&x->dist_b, &y->dist_b);
    assert_dist_equal(&x->dist_bias, &y->dist_bias);
    cr_assert_eq(x->plant_e8m0, y->plant_e8m0);
    cr_assert_eq(x->seed, y->seed);
    cr_assert_eq(x->lens == NULL, y->lens == NULL);
    cr_assert_eq(x->offs == NULL, y->offs == NULL);
    if (x->lens != NULL) {
        cr_assert_arr_eq(x->lens, y->lens, (size_t)x->groups * sizeof *x->lens);
        cr_assert_arr_eq(x->offs, y->offs, ((size_t)x->groups + 1) * sizeof *x->offs);
    }
    cr_assert_eq(x->n_meta, y->n_meta);
    for (int i = 0; i < x->n_meta; i++) {
        cr_assert_str_eq(x->meta[i].key, y->meta[i].key);
        cr_assert_str_eq(x->meta[i].text, y->meta[i].text);
    }
}

static char *format_ok(const struct gg_case *c, int with_meta)
{
    char *text = NULL;
    cr_assert_eq(gg_case_format(c, with_meta, &text), GG_OK);
    cr_assert_not_null(text);
    return text;
}

static void parse_ok(const char *text, struct gg_case *c)
{
    char err[512] = "";
    enum gg_status st = gg_case_parse(text, strlen(text), "test", c, err, sizeof err);
    cr_assert_eq(st, GG_OK, "parse failed: %s\n--- text ---\n%s", err, text);
}

/* format → parse gives c back; formatting that gives the same text again. */
static void assert_round_trip(const struct gg_case *c)
{
    char *t1 = format_ok(c, 1);
    struct gg_case back;
    parse_ok(t1, &back);
    assert_case_equal(c, &back);
    char *t2 = format_ok(&back, 1);
    cr_assert_str_eq(t1, t2);
    char id1[GG_CASE_ID_HEX + 1], id2[GG_CASE_ID_HEX + 1];
    gg_case_id(c, id1);
    gg_case_id(&back, id2);
    cr_assert_str_eq(id1, id2);
    free(t1);
    free(t2);
    gg_case_free(&back);
}

static void load_ok(const char *file, struct gg_case *c)
{
    char path[1024], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", CASES, file);
    cr_assert_eq(gg_case_load(path, c, err, sizeof err), GG_OK, "%s", err);
}

/* lens in [lo, hi] per item and offs the exclusive prefix sum. */
static void assert_expanded(const struct gg_case *c)
{
    cr_assert_not_null(c->lens);
    cr_assert_eq(c->offs[0], 0);
    int64_t g = 0;
    for (int i = 0; i < c->n_items; i++)
        for (int64_t r = 0; r < c->items[i].repeat; r++, g++) {
            const struct gg_group_item *it = &c->items[i];
            if (it->is_rand) {
                cr_assert(c->lens[g] >= it->lo && c->lens[g] <= it->hi);
            } else {
                cr_assert_eq(c->lens[g], it->value);
            }
            cr_assert_eq(c->offs[g + 1], c->offs[g] + c->lens[g]);
        }
    cr_assert_eq(g, c->groups);
}

Test(fuzz_case_io, every_valid_file_round_trips)
{
    size_t files;
    char **names = case_files(CASES, &files);
    cr_assert_geq(files, 11);
    for (size_t i = 0; i < files; i++) {
        struct gg_case c;
        load_ok(names[i], &c);
        cr_assert_eq(gg_case_check(&c, NULL, 0), GG_OK);
        if (c.op <= GG_OP_GROUPED_WGRAD || c.op == GG_OP_MOE_SORTED)
            assert_expanded(&c);
        assert_round_trip(&c);
        gg_case_free(&c);
    }
    case_files_free(names, files);
}

Test(fuzz_case_io, grouped_fwd_file_fields)
{
    struct gg_case c;
    load_ok("grouped_fwd_bf16.case", &c);
    cr_assert_eq(c.op, GG_OP_GROUPED_FWD);
    cr_assert_str_eq(c.kernel, "grouped_bf16_cpu_tiled");
    cr_assert_eq(c.n_opts, 1);
    cr_assert_str_eq(c.opt_key[0], "split_k");
    cr_assert_eq(c.opt_value[0], 2);
    cr_assert_str_eq(c.mutant, "");
    cr_assert_eq(c.a_dtype, GG_DTYPE_BF16);
    cr_assert_eq(c.acc_dtype, GG_DTYPE_F32);
    cr_assert_eq(c.scaling, GG_SCALING_NONE);
    cr_assert_eq(c.groups, 7);
    cr_assert_eq(c.n_items, 4);
    cr_assert_eq(c.items[2].value, 0);
    cr_assert_eq(c.items[2].repeat, 3);
    cr_assert(c.items[3].is_rand);
    cr_assert_eq(c.items[3].lo, 0);
    cr_assert_eq(c.items[3].hi, 64);
    cr_assert_eq(c.items[3].repeat, 2);
    cr_assert_eq(c.n, 256);
    cr_assert_eq(c.k, 512);
    cr_assert_eq(c.dist_a.kind, GG_DIST_NORMAL);
    cr_assert_eq(c.dist_b.kind, GG_DIST_INTS);
    cr_assert_eq(c.dist_b.p[0], 4.0);
    cr_assert_eq(c.dist_a.fmt, GG_DTYPE_BF16);
    cr_assert_eq(c.seed, 0x5f3759dfu);
    cr_assert_eq(c.n_meta, 2);
    cr_assert_str_eq(gg_case_meta(&c, "expect"), "class=snr");
    cr_assert_str_eq(gg_case_meta(&c, "note"), "hand-written example");
    cr_assert_null(gg_case_meta(&c, "found"));
    int64_t fixed[5] = {0, 128, 0, 0, 0};
    cr_assert_arr_eq(c.lens, fixed, sizeof fixed);
    assert_expanded(&c);
    gg_case_free(&c);
}

Test(fuzz_case_io, unordered_file_fields)
{
    struct gg_case c;
    load_ok("grouped_dgrad_fp8_tensor.case", &c);
    cr_assert_eq(c.op, GG_OP_GROUPED_DGRAD);
    cr_assert_eq(c.a_dtype, GG_DTYPE_E4M3);
    cr_assert_eq(c.b_dtype, GG_DTYPE_E5M2);
    cr_assert_eq(c.c_dtype, GG_DTYPE_F32);
    cr_assert_eq(c.acc_dtype, GG_DTYPE_F64);
    cr_assert_eq(c.scaling, GG_SCALING_TENSOR);
    cr_assert_eq(c.quant_sat, GG_SAT_NONE);
    cr_assert_eq(c.lda, 100);
    cr_assert_eq(c.ldb, 80);
    cr_assert_eq(c.ldc, 70);
    cr_assert_eq(c.stride_b, 8000);
    cr_assert_eq(c.stride_a, 0);
    cr_assert_eq(c.dist_a.kind, GG_DIST_OUTLIERS);
    cr_assert_eq(c.dist_a.fmt, GG_DTYPE_E4M3);
    cr_assert_eq(c.dist_b.fmt, GG_DTYPE_E5M2);
    cr_assert_eq(c.seed, 12345u);
    cr_assert_eq(c.n_meta, 0);
    gg_case_free(&c);
}

Test(fuzz_case_io, batched_and_dense_file_fields)
{
    struct gg_case c;
    load_ok("batched_kn.case", &c);
    cr_assert_eq(c.op, GG_OP_BATCHED);
    cr_assert_eq(c.b_layout, GG_LAYOUT_KN);
    cr_assert_eq(c.groups, 4);
    cr_assert_eq(c.m, 3);
    cr_assert_eq(c.n_items, 0);
    cr_assert_null(c.lens);
    cr_assert_eq(c.n_opts, 3);
    const char *keys[3] = {"split_k", "streams", "tile"};
    const int64_t vals[3] = {4, 2, -1};
    for (int i = 0; i < 3; i++) {
        cr_assert_str_eq(c.opt_key[i], keys[i]);
        cr_assert_eq(c.opt_value[i], vals[i]);
    }
    cr_assert_eq(c.seed, UINT64_MAX);
    cr_assert_eq(c.stride_c, 500);
    gg_case_free(&c);

    load_ok("dense_mx.case", &c);
    cr_assert_eq(c.op, GG_OP_DENSE);
    cr_assert_eq(c.groups, 1);
    cr_assert_eq(c.scaling, GG_SCALING_MX);
    cr_assert_eq(c.mx_rule, GG_MX_RULE_FLOOR);
    cr_assert_eq(c.b_dtype, GG_DTYPE_E2M1);
    cr_assert_eq(c.plant_e8m0, 0.01);
    cr_assert_eq(c.dist_a.kind, GG_DIST_NEARSAT);
    cr_assert_eq(c.dist_b.kind, GG_DIST_SPECIALS);
    gg_case_free(&c);

    load_ok("grouped_wgrad_empty.case", &c);
    cr_assert_str_eq(c.mutant, "wgrad_skip_zero");
    cr_assert_eq(c.n_items, 4); /* 0*2 31 0 1 */
    int64_t lens[5] = {0, 0, 31, 0, 1}, offs[6] = {0, 0, 0, 31, 31, 32};
    cr_assert_arr_eq(c.lens, lens, sizeof lens);
    cr_assert_arr_eq(c.offs, offs, sizeof offs);
    cr_assert_eq(c.off_a, 7);
    cr_assert_eq(c.off_b, 3);
    cr_assert_eq(c.off_c, 1);
    gg_case_free(&c);
}

/* The canonical form of a hand-ordered file: keys in order, defaults left out, seed in hex. */
Test(fuzz_case_io, golden_canonical_text)
{
    struct gg_case c;
    load_ok("grouped_dgrad_fp8_tensor.case", &c);
    char *text = format_ok(&c, 1);
    cr_assert_str_eq(text, "ggfuzz-case 1\n"
                           "op grouped_dgrad\n"
                           "kernel grouped_fp8_cpu_ref\n"
                           "dtypes a=e4m3 b=e5m2 c=f32 acc=f64\n"
                           "scaling tensor sat=none\n"
                           "groups 3\n"
                           "group_lens 17 0 rand(1,100)\n"
                           "n 96\n"
                           "k 64\n"
                           "ld a=100 b=80 c=70\n"
                           "stride b=8000\n"
                           "data a=outliers(1,0.001,100) b=uniform(-1,1)\n"
                           "seed 0x3039\n");
    free(text);
    gg_case_free(&c);

    load_ok("grouped_fwd_bf16.case", &c);
    text = format_ok(&c, 1);
    const char *golden = "ggfuzz-case 1\n"
                         "op grouped_fwd\n"
                         "kernel grouped_bf16_cpu_tiled\n"
                         "options split_k=2\n"
                         "dtypes a=bf16 b=bf16 c=bf16\n"
                         "scaling none\n"
                         "groups 7\n"
                         "group_lens 0 128 0*3 rand(0,64)*2\n"
                         "n 256\n"
                         "k 512\n"
                         "data a=normal(0,1) b=ints(4)\n"
                         "seed 0x5f3759df\n";
    cr_assert_eq(strncmp(text, golden, strlen(golden)), 0, "%s", text);
    cr_assert_str_eq(text + strlen(golden), "@expect class=snr\n@note hand-written example\n");
    free(text);

    /* The identity is XXH3-128 of the text without metadata, high half first. */
    char id[GG_CASE_ID_HEX + 1], want[GG_CASE_ID_HEX + 1];
    XXH128_hash_t h = XXH3_128bits(golden, strlen(golden));
    snprintf(want, sizeof want, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    gg_case_id(&c, id);
    cr_assert_str_eq(id, want);
    cr_assert_eq(strlen(id), GG_CASE_ID_HEX);
    cr_assert_eq(strspn(id, "0123456789abcdef"), GG_CASE_ID_HEX);
    gg_case_free(&c);
}

/* A checked case of op with every field at a plain value; the caller adds the rest. */
static void base_case(struct gg_case *c, enum gg_op op)
{
    gg_case_init(c);
    c->op = op;
    snprintf(c->kernel, sizeof c->kernel, "kernel_%s", gg_op_name(op));
    c->n = 48;
    c->k = 64;
    c->seed = 0xabcdef;
    if (op == GG_OP_BATCHED || op == GG_OP_DENSE) {
        c->groups = op == GG_OP_BATCHED ? 3 : 1;
        c->m = 5;
    } else {
        c->groups = 4;
        c->n_items = 3;
        c->items = calloc(3, sizeof *c->items);
        c->items[0] = (struct gg_group_item){.value = 0, .repeat = 2};
        c->items[1] = (struct gg_group_item){.value = 9, .repeat = 1};
        c->items[2] = (struct gg_group_item){.is_rand = 1, .lo = 1, .hi = 40, .repeat = 1};
    }
    if (op == GG_OP_MOE_SORTED) { /* 5 tokens, 2 experts each: loads 0 0 9 1 */
        c->m = 5;
        c->topk = 2;
        c->block_m = 4;
        c->items[2] = (struct gg_group_item){.value = 1, .repeat = 1};
    }
    char err[256] = "";
    cr_assert_eq(gg_case_check(c, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_expand(c, err, sizeof err), GG_OK, "%s", err);
}

static void set_dtypes(struct gg_case *c, enum gg_dtype a, enum gg_dtype b)
{
    c->a_dtype = c->dist_a.fmt = a;
    c->b_dtype = c->dist_b.fmt = b;
}

static void check_and_round_trip(struct gg_case *c)
{
    char err[256] = "";
    cr_assert_eq(gg_case_check(c, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_expand(c, err, sizeof err), GG_OK, "%s", err);
    assert_round_trip(c);
}

Test(fuzz_case_io, programmatic_cases_of_every_op_round_trip)
{
    for (int op = 0; op < GG_OP_COUNT; op++) {
        struct gg_case c;
        base_case(&c, (enum gg_op)op);
        check_and_round_trip(&c);

        /* Every optional key away from its default. */
        c.n_opts = 2;
        strcpy(c.opt_key[0], "split_k");
        c.opt_value[0] = 3;
        strcpy(c.opt_key[1], "streams");
        c.opt_value[1] = -2;
        strcpy(c.mutant, "some_mutant");
        c.c_dtype = GG_DTYPE_F32;
        c.acc_dtype = GG_DTYPE_F64;
        c.quant_sat = GG_SAT_NONE;
        c.lda = 1000;
        c.ldb = 1001;
        c.ldc = 1002;
        c.off_a = 1;
        c.off_b = 1LL << 33;
        c.off_c = 5;
        if (op == GG_OP_BATCHED) {
            c.b_layout = GG_LAYOUT_KN;
            c.stride_a = 1 << 20;
            c.stride_b = 1 << 21;
            c.stride_c = 1 << 22;
        } else if (op == GG_OP_GROUPED_WGRAD) {
            c.stride_c = 123456;
        } else if (op != GG_OP_DENSE) {
            c.stride_b = 654321;
        }
        cr_assert_eq(gg_dist_parse("uniform(-2,0.5)", &c.dist_a, NULL, 0), GG_OK);
        cr_assert_eq(gg_dist_parse("outliers(1,0.25,64)", &c.dist_b, NULL, 0), GG_OK);
        c.dist_a.fmt = c.a_dtype;
        c.dist_b.fmt = c.b_dtype;
        gg_case_set_meta(&c, "note", "every optional key");
        gg_case_set_meta(&c, "empty", "");
        check_and_round_trip(&c);

        /* fp8 with tensor scaling, then MX with the floor rule and planted scales. */
        set_dtypes(&c, GG_DTYPE_E4M3FNUZ, GG_DTYPE_BF16);
        c.scaling = GG_SCALING_TENSOR;
        check_and_round_trip(&c);
        if (op == GG_OP_GROUPED_FWD || op == GG_OP_DENSE || op == GG_OP_BATCHED ||
            op == GG_OP_MOE_SORTED) {
            c.b_layout = GG_LAYOUT_NK;
            set_dtypes(&c, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E2M1);
            c.scaling = GG_SCALING_MX;
            c.mx_rule = GG_MX_RULE_FLOOR;
            c.plant_e8m0 = 0.1;
            check_and_round_trip(&c);
            c.mx_rule = GG_MX_RULE_CEIL;
            c.plant_e8m0 = 1.0 / 3.0;
            check_and_round_trip(&c);
        }
        gg_case_free(&c);
    }
}

/* Operand types each scaling recipe takes (gg_kernel.h), and its name in case files. */
static const struct {
    enum gg_scaling scaling;
    enum gg_dtype a, b;
    const char *name;
} RECIPES[] = {
    {GG_SCALING_NONE, GG_DTYPE_BF16, GG_DTYPE_BF16, "none"},
    {GG_SCALING_TENSOR, GG_DTYPE_E4M3, GG_DTYPE_BF16, "tensor"},
    {GG_SCALING_MX, GG_DTYPE_E5M2, GG_DTYPE_E2M1, "mx"},
    {GG_SCALING_BLOCK128, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ, "block128"},
    {GG_SCALING_MX_B, GG_DTYPE_F16, GG_DTYPE_E2M1, "mx_b"},
    {GG_SCALING_ROWWISE, GG_DTYPE_E4M3, GG_DTYPE_E5M2, "rowwise"},
    {GG_SCALING_BLOCKWISE, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E4M3FNUZ, "blockwise"},
};

/* gg_case_check refuses c with a message that starts with prefix (the key at fault). */
static void assert_refused(const struct gg_case *c, const char *prefix)
{
    char err[256] = "";
    cr_assert_eq(gg_case_check(c, err, sizeof err), GG_E_INVAL, "accepted; expected '%s...'",
                 prefix);
    cr_assert_eq(strncmp(err, prefix, strlen(prefix)), 0, "'%s' lacks the prefix '%s'", err,
                 prefix);
}

/* The canonical text of c without metadata contains (want = 1) or lacks (0) needle. */
static void assert_text_has(const struct gg_case *c, const char *needle, int want)
{
    char *text = format_ok(c, 0);
    cr_assert_eq(strstr(text, needle) != NULL, want, "'%s' %s in\n%s", needle,
                 want ? "missing" : "present", text);
    free(text);
}

/* A bias of dtype t with data recipe dist (canonical text; NULL: the default) round-trips on
   the ops with an output bias and is refused on the others. c is left without a bias. */
static void bias_round_trip(struct gg_case *c, enum gg_dtype t, const char *dist)
{
    const struct gg_dist saved = c->dist_bias;
    if (dist != NULL)
        cr_assert_eq(gg_dist_parse(dist, &c->dist_bias, NULL, 0), GG_OK);
    c->bias_dtype = c->dist_bias.fmt = t;
    if (c->op == GG_OP_GROUPED_DGRAD || c->op == GG_OP_GROUPED_WGRAD) {
        assert_refused(c, "bias: ");
    } else {
        check_and_round_trip(c);
        char text[64];
        snprintf(text, sizeof text, "\nbias %s\n", gg_dtype_name(t));
        assert_text_has(c, text, 1);
        snprintf(text, sizeof text, " bias=%s\n", dist != NULL ? dist : "normal(0,1)");
        assert_text_has(c, text, 1);
    }
    c->bias_dtype = GG_DTYPE_NONE;
    c->dist_bias = saved;
}

Test(fuzz_case_io, every_recipe_and_bias_round_trips)
{
    for (int op = 0; op < GG_OP_COUNT; op++)
        for (size_t r = 0; r < sizeof RECIPES / sizeof RECIPES[0]; r++) {
            struct gg_case c;
            base_case(&c, (enum gg_op)op);
            set_dtypes(&c, RECIPES[r].a, RECIPES[r].b);
            c.scaling = RECIPES[r].scaling;
            int blocked = c.scaling >= GG_SCALING_MX && c.scaling != GG_SCALING_ROWWISE;
            int e8m0 = c.scaling == GG_SCALING_MX || c.scaling == GG_SCALING_MX_B;
            int dgrad_ok = c.scaling == GG_SCALING_BLOCKWISE; /* W's blocks read transposed */
            if (blocked && (op == GG_OP_GROUPED_WGRAD || (op == GG_OP_GROUPED_DGRAD && !dgrad_ok))) {
                assert_refused(&c, "scaling: "); /* the reduction is not along K */
                gg_case_free(&c);
                continue;
            }
            check_and_round_trip(&c);
            char line[64];
            snprintf(line, sizeof line, "\nscaling %s\n", RECIPES[r].name);
            assert_text_has(&c, line, 1);
            assert_text_has(&c, "bias", 0);

            /* The quantiser options of the recipe, then a bias of each type. */
            c.quant_sat = GG_SAT_NONE;
            if (e8m0) {
                c.mx_rule = GG_MX_RULE_FLOOR;
                c.plant_e8m0 = 0.25;
            }
            check_and_round_trip(&c);
            bias_round_trip(&c, GG_DTYPE_F32, NULL);
            bias_round_trip(&c, GG_DTYPE_BF16, "uniform(-3,0.5)");
            check_and_round_trip(&c);
            assert_text_has(&c, "bias", 0);
            gg_case_free(&c);
        }
}

/* The rules of the recipes, the bias and the moe routing, each refused naming its key. */
Test(fuzz_case_io, recipe_bias_and_moe_rules_name_the_key)
{
    struct gg_case c;
    base_case(&c, GG_OP_DENSE);
    c.scaling = GG_SCALING_MX_B;
    set_dtypes(&c, GG_DTYPE_BF16, GG_DTYPE_BF16);
    assert_refused(&c, "scaling: mx_b needs b in");
    set_dtypes(&c, GG_DTYPE_E4M3, GG_DTYPE_E2M1);
    assert_refused(&c, "scaling: mx_b needs an unscaled a");
    set_dtypes(&c, GG_DTYPE_F32, GG_DTYPE_E4M3FNUZ);
    c.k = 48;
    assert_refused(&c, "k: 48 is not a multiple of 32");
    c.k = 64;
    check_and_round_trip(&c);

    c.scaling = GG_SCALING_BLOCK128;
    assert_refused(&c, "scaling: block128 needs a and b in");
    set_dtypes(&c, GG_DTYPE_E5M2, GG_DTYPE_E2M1);
    assert_refused(&c, "scaling: block128 needs a and b in");
    set_dtypes(&c, GG_DTYPE_E5M2, GG_DTYPE_E4M3);
    c.k = 129; /* the last K group of 128 is partial */
    check_and_round_trip(&c);
    c.mx_rule = GG_MX_RULE_FLOOR;
    assert_refused(&c, "scaling: rule= applies to scaling mx and mx_b only");
    c.mx_rule = GG_MX_RULE_CEIL;
    c.plant_e8m0 = 0.5;
    assert_refused(&c, "plant: needs scaling mx or mx_b");
    c.plant_e8m0 = 0;
    c.scaling = GG_SCALING_TENSOR;
    set_dtypes(&c, GG_DTYPE_F16, GG_DTYPE_BF16);
    assert_refused(&c, "scaling: tensor needs an fp8");
    c.scaling = GG_SCALING_ROWWISE;
    assert_refused(&c, "scaling: rowwise needs a and b in");
    c.scaling = GG_SCALING_BLOCKWISE;
    set_dtypes(&c, GG_DTYPE_E4M3, GG_DTYPE_BF16);
    assert_refused(&c, "scaling: blockwise needs a and b in");
    set_dtypes(&c, GG_DTYPE_E4M3, GG_DTYPE_E4M3);
    c.k = 300; /* tail blocks along K and N */
    check_and_round_trip(&c);
    c.mx_rule = GG_MX_RULE_FLOOR;
    assert_refused(&c, "scaling: rule= applies to scaling mx and mx_b only");
    c.mx_rule = GG_MX_RULE_CEIL;
    c.scaling = GG_SCALING_NONE;

    c.bias_dtype = GG_DTYPE_F16;
    assert_refused(&c, "bias: f16 is not a bias type");
    c.bias_dtype = GG_DTYPE_NONE;
    c.dist_bias.p[1] = 2.0; /* a bias recipe without a bias would vanish from the text */
    assert_refused(&c, "data: bias= needs a bias");
    c.dist_bias.p[1] = 1.0;
    c.topk = 1;
    assert_refused(&c, "topk: not valid for op dense");
    c.topk = 0;
    c.block_m = 16;
    assert_refused(&c, "block_m: not valid for op dense");
    gg_case_free(&c);

    base_case(&c, GG_OP_MOE_SORTED); /* m 5, topk 2, loads 0 0 9 1 */
    c.topk = 0;
    assert_refused(&c, "topk: must be at least 1");
    c.topk = 3;
    assert_refused(&c, "group_lens: the expert loads sum to 10, but m x topk = 5 x 3 = 15");
    c.topk = 2;
    c.block_m = 0;
    assert_refused(&c, "block_m: must be between 1 and 2^40");
    c.block_m = 1;
    check_and_round_trip(&c);
    c.items[2] = (struct gg_group_item){.is_rand = 1, .lo = 1, .hi = 1, .repeat = 1};
    assert_refused(&c, "group_lens: item 3: rand() is not valid for op moe_sorted");
    c.items[2] = (struct gg_group_item){.value = 1, .repeat = 1};
    c.m = INT32_MAX;
    assert_refused(&c, "topk: m x topk = 2147483647 x 2 exceeds 2^31 - 1");
    c.m = 5;
    c.stride_a = 1000; /* X [T, K] is one matrix */
    assert_refused(&c, "stride: a is not used by op moe_sorted");
    c.stride_a = 0;
    c.ldc = 47; /* Y [T·topk, N] */
    assert_refused(&c, "ld: c=47 is less than the row length 48 (n) of C");
    c.ldc = 0;
    c.off_c = INT64_MAX - 5 * 2 * 48 + 1; /* Y spans m·topk·n = 480 elements */
    assert_refused(&c, "offset: operand C would end beyond 2^62 bytes");
    c.off_c = ((int64_t)1 << 61) - 5 * 2 * 48; /* bf16: the last byte of Y at 2^62 */
    check_and_round_trip(&c);
    c.off_c++;
    assert_refused(&c, "offset: operand C would end beyond 2^62 bytes");
    c.off_c = 0;
    check_and_round_trip(&c);
    gg_case_free(&c);
}

Test(fuzz_case_io, random_group_sizes_are_deterministic_and_in_range)
{
    struct gg_case c;
    gg_case_init(&c);
    const char *text = "ggfuzz-case 1\nop grouped_wgrad\nkernel x\ndtypes a=bf16 b=bf16 c=f32\n"
                       "groups 64\ngroup_lens rand(3,9)*40 rand(0,0) rand(5,5)*2 rand(0,1000)*21\n"
                       "n 8\nk 8\nseed 7\n";
    parse_ok(text, &c);
    assert_expanded(&c);
    for (int64_t g = 0; g < 40; g++) {
        double u = gg_rng_uniform(7, GG_STREAM_GROUPS, (uint64_t)g, 0);
        cr_assert_eq(c.lens[g], 3 + (int64_t)floor(u * 7.0));
    }
    cr_assert_eq(c.lens[40], 0);
    cr_assert_eq(c.lens[41], 5);
    cr_assert_eq(c.lens[42], 5);

    /* Expanding again, copying and re-parsing give the same sizes. */
    int64_t first[64];
    memcpy(first, c.lens, sizeof first);
    cr_assert_eq(gg_case_expand(&c, NULL, 0), GG_OK);
    cr_assert_arr_eq(c.lens, first, sizeof first);
    struct gg_case d;
    cr_assert_eq(gg_case_copy(&d, &c), GG_OK);
    assert_case_equal(&c, &d);
    cr_assert_neq(d.lens, c.lens);

    /* Another seed draws other sizes (64 draws; equal only by a fixed coincidence). */
    d.seed = 8;
    cr_assert_eq(gg_case_expand(&d, NULL, 0), GG_OK);
    assert_expanded(&d);
    cr_assert_neq(memcmp(d.lens, first, sizeof first), 0);
    cr_assert_arr_eq(c.lens, first, sizeof first);
    gg_case_free(&d);
    gg_case_free(&c);
}

Test(fuzz_case_io, group_lens_run_length_merging)
{
    struct gg_case c;
    base_case(&c, GG_OP_GROUPED_FWD);
    free(c.items);
    const struct gg_group_item items[] = {
        {.value = 0, .repeat = 1},  {.value = 0, .repeat = 1},
        {.value = 0, .repeat = 1},  {.value = 5, .repeat = 2},
        {.value = 5, .repeat = 1},  {.is_rand = 1, .lo = 1, .hi = 2, .repeat = 1},
        {.is_rand = 1, .lo = 1, .hi = 2, .repeat = 1}, {.value = 7, .repeat = 1},
    };
    c.n_items = 8;
    c.items = malloc(sizeof items);
    memcpy(c.items, items, sizeof items);
    c.groups = 9;
    cr_assert_eq(gg_case_expand(&c, NULL, 0), GG_OK);
    char *text = format_ok(&c, 0);
    cr_assert_not_null(strstr(text, "\ngroup_lens 0*3 5*3 rand(1,2) rand(1,2) 7\n"), "%s", text);

    /* Parsing merges adjacent equal constants, so the parsed struct is canonical. */
    struct gg_case back;
    parse_ok(text, &back);
    cr_assert_eq(back.n_items, 5);
    cr_assert_eq(back.items[0].repeat, 3);
    cr_assert_eq(back.items[1].value, 5);
    cr_assert_eq(back.items[1].repeat, 3);
    cr_assert_arr_eq(back.lens, c.lens, 9 * sizeof *c.lens);
    char *again = format_ok(&back, 0);
    cr_assert_str_eq(again, text);
    free(text);
    free(again);
    gg_case_free(&back);
    gg_case_free(&c);
}

static const char *const ID_BASE =
    "ggfuzz-case 1\n"
    "op grouped_fwd\n"
    "kernel grouped_bf16_cpu_tiled\n"
    "options split_k=2\n"
    "mutant m1\n"
    "dtypes a=e4m3 b=e4m3 c=bf16\n"
    "scaling mx\n"
    "groups 4\n"
    "group_lens 0 128 0 rand(0,64)\n"
    "n 256\n"
    "k 512\n"
    "ld a=600\n"
    "stride b=200000\n"
    "offset c=3\n"
    "guard inputs=end\n"
    "data a=normal(0,1) b=ints(4)\n"
    "plant e8m0=0.01\n"
    "seed 0x5f3759df\n";

static void id_of(const char *text, char id[GG_CASE_ID_HEX + 1])
{
    struct gg_case c;
    parse_ok(text, &c);
    gg_case_id(&c, id);
    gg_case_free(&c);
}

Test(fuzz_case_io, id_ignores_metadata_comments_whitespace_and_order)
{
    char base[GG_CASE_ID_HEX + 1], id[GG_CASE_ID_HEX + 1];
    id_of(ID_BASE, base);
    const char *same[] = {
        /* metadata */
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\noptions split_k=2\n"
        "mutant m1\ndtypes a=e4m3 b=e4m3 c=bf16\nscaling mx\ngroups 4\n"
        "group_lens 0 128 0 rand(0,64)\nn 256\nk 512\nld a=600\nstride b=200000\noffset c=3\n"
        "guard inputs=end\ndata a=normal(0,1) b=ints(4)\nplant e8m0=0.01\nseed 0x5f3759df\n"
        "@found today\n@expect class=snr sig=x\n",
        /* comments, blank lines, tabs, CRLF, defaults spelt out, decimal seed, any key order */
        "# leading comment\n\nggfuzz-case 1   # header comment\r\n"
        "seed 1597463007\r\n"
        "op\tgrouped_fwd\n"
        "   kernel   grouped_bf16_cpu_tiled   \n"
        "options split_k=2\n"
        "mutant m1 # the mutant\n"
        "dtypes b=e4m3 a=e4m3 c=bf16 acc=f32\n"
        "scaling mx rule=ceil sat=finite\n"
        "# comment between keys\n"
        "groups 4\n"
        "group_lens 0*1 128 0 rand(0,64)*1\n"
        "n 256\nk 0x200\nld a=600 b=0\nstride b=200000\noffset c=3 a=0\n"
        "guard   inputs=end\ndata b=ints(4)\nplant e8m0=1e-2\n",
        /* no bias and the default bias recipe, spelt out */
        "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\noptions split_k=2\n"
        "mutant m1\ndtypes a=e4m3 b=e4m3 c=bf16\nscaling mx\nbias none\ngroups 4\n"
        "group_lens 0 128 0 rand(0,64)\nn 256\nk 512\nld a=600\nstride b=200000\noffset c=3\n"
        "guard inputs=end\ndata a=normal(0,1) b=ints(4) bias=normal(0,1)\nplant e8m0=0.01\n"
        "seed 0x5f3759df\n",
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        id_of(same[i], id);
        cr_assert_str_eq(id, base, "variant %zu", i);
    }
}

/* malloc'd copy of text with the first occurrence of each from[i] replaced by to[i]. */
static char *replaced(const char *text, const char *const *from, const char *const *to, int n)
{
    char *s = strdup(text);
    for (int i = 0; i < n; i++) {
        char *at = strstr(s, from[i]);
        cr_assert_not_null(at, "'%s' not in the text", from[i]);
        size_t pre = (size_t)(at - s), len = strlen(s) + strlen(to[i]) + 1;
        char *t = malloc(len);
        snprintf(t, len, "%.*s%s%s", (int)pre, s, to[i], at + strlen(from[i]));
        free(s);
        s = t;
    }
    return s;
}

/* One edit of a case text: each from[i] (up to the first NULL) replaced by to[i]. */
struct edit {
    const char *from[4], *to[4];
};

/* Every edit of base gives an id of its own, different from the id of base. */
static void assert_edits_change_id(const char *base, const struct edit *edits, int count)
{
    char(*ids)[GG_CASE_ID_HEX + 1] = malloc(((size_t)count + 1) * sizeof *ids);
    id_of(base, ids[count]);
    for (int i = 0; i < count; i++) {
        int n = 0;
        while (n < 4 && edits[i].from[n] != NULL)
            n++;
        char *text = replaced(base, edits[i].from, edits[i].to, n);
        id_of(text, ids[i]);
        free(text);
    }
    for (int i = 0; i <= count; i++)
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(ids[i], ids[j], "edits %d and %d", i, j);
    free(ids);
}

Test(fuzz_case_io, id_changes_with_every_input_line)
{
    /* Change one input line of ID_BASE at a time (plus what keeps the case valid). */
    static const struct edit edits[] = {
        {{"op grouped_fwd", "scaling mx", "plant e8m0=0.01\n"},
         {"op grouped_dgrad", "scaling none", ""}},
        {{"kernel grouped_bf16_cpu_tiled"}, {"kernel grouped_bf16_cpu_other"}},
        {{"options split_k=2"}, {"options split_k=3"}},
        {{"mutant m1"}, {"mutant m2"}},
        {{"mutant m1"}, {"mutant m1,m2"}},
        {{"mutant m1"}, {"mutant m2,m1"}},
        {{"dtypes a=e4m3 b=e4m3 c=bf16"}, {"dtypes a=e4m3 b=e5m2 c=bf16"}},
        {{"scaling mx"}, {"scaling mx rule=floor"}},
        {{"scaling mx", "plant e8m0=0.01\n"}, {"scaling block128", ""}},
        {{"dtypes a=e4m3", "scaling mx"}, {"dtypes a=bf16", "scaling mx_b"}},
        {{"scaling mx\n"}, {"scaling mx\nbias f32\n"}},
        {{"scaling mx\n", "b=ints(4)"}, {"scaling mx\nbias f32\n", "b=ints(4) bias=ints(2)"}},
        {{"groups 4", "rand(0,64)"}, {"groups 5", "rand(0,64) 1"}},
        {{"group_lens 0 128 0 rand(0,64)"}, {"group_lens 0 128 0 rand(0,65)"}},
        {{"n 256"}, {"n 257"}},
        {{"k 512"}, {"k 544"}},
        {{"ld a=600"}, {"ld a=601"}},
        {{"stride b=200000"}, {"stride b=200001"}},
        {{"offset c=3"}, {"offset c=4"}},
        {{"guard inputs=end"}, {"guard inputs=start"}},
        {{"guard inputs=end\n"}, {""}},
        {{"data a=normal(0,1) b=ints(4)"}, {"data a=normal(0,2) b=ints(4)"}},
        {{"plant e8m0=0.01"}, {"plant e8m0=0.02"}},
        {{"seed 0x5f3759df"}, {"seed 0x5f3759de"}},
    };
    assert_edits_change_id(ID_BASE, edits, sizeof edits / sizeof edits[0]);
}

Test(fuzz_case_io, id_changes_with_every_moe_and_bias_line)
{
    static const char *const base = "ggfuzz-case 1\n"
                                    "op moe_sorted\n"
                                    "kernel moe_w8a16_cpu_ref\n"
                                    "dtypes a=bf16 b=e4m3 c=bf16\n"
                                    "scaling mx_b\n"
                                    "bias f32\n"
                                    "groups 3\n"
                                    "group_lens 4 0 8\n"
                                    "m 6\n"
                                    "topk 2\n"
                                    "block_m 4\n"
                                    "n 64\n"
                                    "k 96\n"
                                    "stride b=10000\n"
                                    "data a=normal(0,1) b=ints(4) bias=uniform(-1,1)\n"
                                    "seed 0x1\n";
    static const struct edit edits[] = {
        {{"op moe_sorted", "m 6\n", "topk 2\n", "block_m 4\n"}, {"op grouped_fwd", "", "", ""}},
        {{"scaling mx_b"}, {"scaling mx_b rule=floor"}},
        {{"scaling mx_b", "dtypes a=bf16"}, {"scaling block128", "dtypes a=e5m2"}},
        {{"bias f32"}, {"bias bf16"}},
        {{"bias f32\n", " bias=uniform(-1,1)"}, {"", ""}},
        {{"bias=uniform(-1,1)"}, {"bias=uniform(-1,2)"}},
        {{"groups 3", "group_lens 4 0 8"}, {"groups 4", "group_lens 4 0 8 0"}},
        {{"group_lens 4 0 8"}, {"group_lens 4 8 0"}},
        {{"m 6", "group_lens 4 0 8"}, {"m 5", "group_lens 4 0 6"}},
        {{"topk 2", "group_lens 4 0 8"}, {"topk 3", "group_lens 4 6 8"}},
        {{"block_m 4"}, {"block_m 8"}},
        {{"stride b=10000"}, {"stride b=10001"}},
        {{"seed 0x1"}, {"seed 0x2"}},
    };
    assert_edits_change_id(base, edits, sizeof edits / sizeof edits[0]);
}

Test(fuzz_case_io, save_then_load)
{
    const char *tmpdir = getenv("TMPDIR");
    char dir[200];
    snprintf(dir, sizeof dir, "%s/ggfuzz-case-io-XXXXXX", tmpdir && *tmpdir ? tmpdir : P_tmpdir);
    cr_assert_not_null(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/x.case", dir);

    struct gg_case c, back;
    load_ok("batched_kn.case", &c);
    cr_assert_eq(gg_case_save(&c, path, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_load(path, &back, err, sizeof err), GG_OK, "%s", err);
    assert_case_equal(&c, &back);
    gg_case_free(&back);

    /* Overwriting replaces the file; no temporary file is left behind. */
    gg_case_set_meta(&c, "note", "second version");
    cr_assert_eq(gg_case_save(&c, path, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_case_load(path, &back, err, sizeof err), GG_OK, "%s", err);
    cr_assert_str_eq(gg_case_meta(&back, "note"), "second version");
    gg_case_free(&back);
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            cr_assert_str_eq(e->d_name, "x.case");
            entries++;
        }
    closedir(d);
    cr_assert_eq(entries, 1);

    /* A directory that does not exist: an I/O error naming the path. */
    char bad_path[300];
    snprintf(bad_path, sizeof bad_path, "%s/missing/y.case", dir);
    cr_assert_eq(gg_case_save(&c, bad_path, err, sizeof err), GG_E_IO);
    cr_assert_eq(strncmp(err, bad_path, strlen(bad_path)), 0, "%s", err);
    cr_assert_eq(gg_case_load(bad_path, &back, err, sizeof err), GG_E_IO);
    cr_assert_not_null(strstr(err, ": cannot read: "), "%s", err);
    cr_assert_eq(strncmp(err, bad_path, strlen(bad_path)), 0, "%s", err);

    /* An atomic write whose content failed leaves the file as it was and no temporary file. */
    struct gg_atomic a;
    cr_assert_eq(gg_atomic_open(&a, path, "the test file", err, sizeof err), GG_OK, "%s", err);
    fputs("half a file", a.f);
    a.bad = 1;
    cr_assert_eq(gg_atomic_commit(&a, 1, err, sizeof err), GG_E_IO);
    char want[400];
    snprintf(want, sizeof want, "%s: cannot write the test file: ", path);
    cr_assert_eq(strncmp(err, want, strlen(want)), 0, "%s", err);
    cr_assert_eq(gg_case_load(path, &back, err, sizeof err), GG_OK, "%s", err);
    cr_assert_str_eq(gg_case_meta(&back, "note"), "second version");
    gg_case_free(&back);
    d = opendir(dir);
    entries = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        entries += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(entries, 1);

    unlink(path);
    rmdir(dir);
    gg_case_free(&c);
}

/* The problem of the case in file; p points into c and opts. */
static void load_problem(const char *file, struct gg_case *c, struct gg_kopt *opts,
                         struct gg_problem *p)
{
    load_ok(file, c);
    gg_case_problem(c, opts, p);
}

Test(fuzz_case_io, problem_from_case)
{
    struct gg_case c;
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    load_problem("grouped_fwd_bf16.case", &c, opts, &p);
    cr_assert_str_eq(c.mutant, ""); /* no mutant: p.mutant is NULL */
    cr_assert_eq(p.op, GG_OP_GROUPED_FWD);
    cr_assert_eq(p.groups, 7);
    cr_assert_eq(p.m, c.offs[7]);
    cr_assert_eq(p.group_lens, c.lens);
    cr_assert_eq(p.group_offs, c.offs);
    cr_assert_eq(p.n_opts, 1);
    cr_assert_eq(p.opts, opts);
    cr_assert_eq(opts[0].key, c.opt_key[0]);
    cr_assert_eq(gg_kopt_get(&p, "split_k", 1), 2);
    cr_assert_null(p.mutant);
    cr_assert_eq(p.lda, 0);
    cr_assert_eq(p.stride_b, 0);
    gg_case_free(&c);

    load_problem("batched_kn.case", &c, opts, &p);
    cr_assert_eq(p.groups, 4);
    cr_assert_eq(p.m, 3);
    cr_assert_eq(p.b_layout, GG_LAYOUT_KN);
    cr_assert_null(p.group_lens);
    cr_assert_null(p.group_offs);
    cr_assert_eq(p.ldb, 131);
    cr_assert_eq(p.stride_a, 100);
    gg_case_free(&c);

    load_problem("dense_mx.case", &c, opts, &p);
    cr_assert_eq(p.groups, 1);
    cr_assert_eq(p.m, 1);
    cr_assert_eq(p.scaling, GG_SCALING_MX);
    cr_assert_null(p.opts);
    cr_assert_eq(p.n_opts, 0);
    cr_assert_null(p.group_lens);
    gg_case_free(&c);

    load_problem("grouped_wgrad_empty.case", &c, opts, &p);
    cr_assert_str_eq(p.mutant, "wgrad_skip_zero");
    cr_assert_eq(p.m, 32);
    gg_case_free(&c);
}

/* A mutant list is one token of the mutant line: it parses, formats back to the same canonical
   line and reaches the problem as it is, each item matching. */
Test(fuzz_case_io, mutant_list_round_trips)
{
    const char *text = "ggfuzz-case 1\nop grouped_wgrad\nkernel grouped_bf16_cpu_tiled\n"
                       "mutant wgrad_zero_uninit,tail_rows_unwritten\ndtypes a=bf16 b=bf16 c=bf16\n"
                       "scaling none\ngroups 2\ngroup_lens 0 5\nn 3\nk 4\nseed 1\n";
    struct gg_case c;
    parse_ok(text, &c);
    cr_assert_str_eq(c.mutant, "wgrad_zero_uninit,tail_rows_unwritten");
    cr_assert_eq(gg_case_check(&c, NULL, 0), GG_OK);
    assert_round_trip(&c);
    char *t = format_ok(&c, 0);
    cr_assert_not_null(strstr(t, "\nmutant wgrad_zero_uninit,tail_rows_unwritten\n"), "%s", t);
    free(t);
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(&c, opts, &p);
    cr_assert_str_eq(p.mutant, "wgrad_zero_uninit,tail_rows_unwritten");
    cr_assert(gg_mutant_is(&p, "wgrad_zero_uninit") && gg_mutant_is(&p, "tail_rows_unwritten"));
    cr_assert(!gg_mutant_is(&p, "missing_fence"));
    gg_case_free(&c);
}

Test(fuzz_case_io, moe_sorted_files_and_problem)
{
    struct gg_case c;
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    load_problem("moe_sorted_bf16.case", &c, opts, &p);
    cr_assert_eq(c.op, GG_OP_MOE_SORTED);
    cr_assert_eq(c.groups, 8);
    cr_assert_eq(c.m, 10);
    cr_assert_eq(c.topk, 2);
    cr_assert_eq(c.block_m, 4);
    cr_assert_eq(c.bias_dtype, GG_DTYPE_NONE);
    int64_t lens[8] = {5, 0, 3, 3, 0, 0, 8, 1}, offs[9] = {0, 5, 5, 8, 11, 11, 11, 19, 20};
    cr_assert_arr_eq(c.lens, lens, sizeof lens);
    cr_assert_arr_eq(c.offs, offs, sizeof offs);
    cr_assert_eq(p.op, GG_OP_MOE_SORTED);
    cr_assert_eq(p.groups, 8);
    cr_assert_eq(p.m, 10); /* tokens, not the routed rows */
    cr_assert_eq(p.topk, 2);
    cr_assert_eq(p.block_m, 4);
    cr_assert_eq(p.group_lens, c.lens);
    cr_assert_eq(p.group_offs, c.offs);
    /* The sorted layout is built by the materialiser. */
    cr_assert_eq(p.sorted_len, 0);
    cr_assert_null(p.sorted_ids);
    cr_assert_null(p.expert_ids);
    cr_assert_eq(p.bias_dtype, GG_DTYPE_NONE);
    cr_assert_eq(p.scaling, GG_SCALING_NONE);
    gg_case_free(&c);

    load_problem("moe_sorted_a8w8_bias.case", &c, opts, &p);
    cr_assert_eq(c.scaling, GG_SCALING_BLOCK128);
    cr_assert_eq(c.quant_sat, GG_SAT_NONE);
    cr_assert_eq(c.bias_dtype, GG_DTYPE_F32);
    cr_assert_eq(c.dist_bias.kind, GG_DIST_UNIFORM);
    cr_assert_eq(c.dist_bias.p[0], -2.0);
    cr_assert_eq(c.dist_bias.p[1], 2.0);
    cr_assert_eq(c.dist_bias.fmt, GG_DTYPE_F32);
    cr_assert_eq(c.dist_a.fmt, GG_DTYPE_E4M3FNUZ);
    cr_assert_eq(p.bias_dtype, GG_DTYPE_F32);
    cr_assert_eq(p.m, 33);
    cr_assert_eq(p.topk, 4);
    cr_assert_eq(p.block_m, 16);
    cr_assert_eq(p.stride_b, 10000);
    cr_assert_eq(p.lda, 320);
    cr_assert_eq(p.ldc, 40);
    char *text = format_ok(&c, 1);
    cr_assert_str_eq(text, "ggfuzz-case 1\n"
                           "op moe_sorted\n"
                           "kernel moe_fp8_cpu_ref\n"
                           "dtypes a=e4m3fnuz b=e4m3fnuz c=bf16\n"
                           "scaling block128 sat=none\n"
                           "bias f32\n"
                           "groups 6\n"
                           "group_lens 40 0*2 50 42 0\n"
                           "m 33\n"
                           "topk 4\n"
                           "block_m 16\n"
                           "n 32\n"
                           "k 300\n"
                           "ld a=320 c=40\n"
                           "stride b=10000\n"
                           "data a=outliers(1,0.001,100) b=uniform(-1,1) bias=uniform(-2,2)\n"
                           "seed 0x4d\n");
    free(text);
    gg_case_free(&c);

    load_problem("dense_mx_b_bias.case", &c, opts, &p);
    cr_assert_eq(c.scaling, GG_SCALING_MX_B);
    cr_assert_eq(c.mx_rule, GG_MX_RULE_FLOOR);
    cr_assert_eq(c.bias_dtype, GG_DTYPE_BF16);
    cr_assert_eq(c.dist_bias.kind, GG_DIST_CONST);
    cr_assert_eq(c.dist_bias.fmt, GG_DTYPE_BF16);
    cr_assert_eq(c.plant_e8m0, 0.05);
    cr_assert_eq(p.scaling, GG_SCALING_MX_B);
    cr_assert_eq(p.bias_dtype, GG_DTYPE_BF16);
    cr_assert_eq(p.topk, 0);
    cr_assert_eq(p.block_m, 0);
    cr_assert_null(p.group_lens);
    gg_case_free(&c);

    load_problem("grouped_fwd_tensor_bias.case", &c, opts, &p);
    cr_assert_eq(p.bias_dtype, GG_DTYPE_BF16);
    cr_assert_eq(p.scaling, GG_SCALING_TENSOR);
    cr_assert_eq(p.group_lens, c.lens);
    cr_assert_eq(p.m, c.offs[3]);
    cr_assert_eq(p.topk, 0);
    gg_case_free(&c);
}

Test(fuzz_case_io, metadata_set_replace_and_validate)
{
    struct gg_case c;
    load_ok("grouped_fwd_bf16.case", &c);
    char before[GG_CASE_ID_HEX + 1], after[GG_CASE_ID_HEX + 1];
    gg_case_id(&c, before);
    cr_assert_eq(gg_case_set_meta(&c, "expect", "  class=zero  "), GG_OK);
    cr_assert_eq(c.n_meta, 2);
    cr_assert_str_eq(gg_case_meta(&c, "expect"), "class=zero");
    cr_assert_eq(gg_case_set_meta(&c, "env", "gpu=\"NVIDIA H100\" cpu=caf\xc3\xa9"), GG_OK);
    cr_assert_eq(c.n_meta, 3);
    cr_assert_str_eq(c.meta[2].key, "env");
    cr_assert_eq(gg_case_add_meta(&c, "env", "second", NULL, 0), GG_OK);
    cr_assert_eq(c.n_meta, 4);
    cr_assert_str_eq(gg_case_meta(&c, "env"), "gpu=\"NVIDIA H100\" cpu=caf\xc3\xa9");
    gg_case_id(&c, after);
    cr_assert_str_eq(before, after);
    assert_round_trip(&c);

    char err[256];
    cr_assert_eq(gg_case_set_meta(&c, "", "x"), GG_E_INVAL);
    cr_assert_eq(gg_case_set_meta(&c, "bad key", "x"), GG_E_INVAL);
    cr_assert_eq(gg_case_set_meta(&c, "note", "two\nlines"), GG_E_INVAL);
    cr_assert_eq(gg_case_add_meta(&c, "note", "bad \xff utf8", err, sizeof err), GG_E_INVAL);
    cr_assert_not_null(strstr(err, "UTF-8"), "%s", err);
    cr_assert_eq(c.n_meta, 4);
    cr_assert_str_eq(gg_case_meta(&c, "note"), "hand-written example");
    gg_case_free(&c);
}

Test(fuzz_case_io, check_messages_name_the_key)
{
    struct gg_case c;
    char err[256];
    base_case(&c, GG_OP_GROUPED_DGRAD);
    c.lda = 10; /* dgrad: A is dY [M, N], row length n = 48 */
    assert_refused(&c, "ld: ");
    c.lda = 48;
    c.ldc = 63; /* dgrad: C is dX [M, K] */
    assert_refused(&c, "ld: ");
    c.ldc = 0;
    c.groups = 5;
    assert_refused(&c, "group_lens: ");
    cr_assert_eq(gg_case_expand(&c, err, sizeof err), GG_E_INVAL);
    cr_assert_null(c.lens);
    c.groups = 4;
    c.n = -1;
    assert_refused(&c, "n: ");
    c.n = 48;
    c.stride_a = 100; /* dgrad A has no per-group stride */
    assert_refused(&c, "stride: ");
    c.stride_a = 0;
    c.scaling = GG_SCALING_MX;
    set_dtypes(&c, GG_DTYPE_E4M3, GG_DTYPE_E4M3);
    assert_refused(&c, "scaling: ");
    c.op = GG_OP_GROUPED_FWD;
    c.lda = 0; /* fwd: A is X [M, K] */
    c.k = 48;
    assert_refused(&c, "k: ");
    c.k = 64;
    cr_assert_eq(gg_case_check(&c, err, sizeof err), GG_OK, "%s", err);
    c.off_b = INT64_MAX;
    assert_refused(&c, "offset: ");
    gg_case_free(&c);
}

Test(fuzz_case_io, names_and_failed_parse_leave_an_empty_case)
{
    for (int op = 0; op < GG_OP_COUNT; op++)
        cr_assert_eq(gg_op_from_name(gg_op_name((enum gg_op)op)), op);
    cr_assert_eq(gg_op_from_name("grouped"), GG_OP_COUNT);
    cr_assert_eq(gg_op_from_name(NULL), GG_OP_COUNT);

    struct gg_case c, empty;
    gg_case_init(&empty);
    const char *text = "ggfuzz-case 1\nop grouped_fwd\nkernel k\n@note kept?\n"
                       "dtypes a=bf16 b=bf16 c=bf16\ngroups 2\ngroup_lens 1 2\nn 1\nk 1\n"
                       "seed 1\nbogus 1\n";
    char err[256];
    cr_assert_eq(gg_case_parse(text, strlen(text), "t.case", &c, err, sizeof err), GG_E_PARSE);
    cr_assert_str_eq(err, "t.case:11: unknown key 'bogus'");
    cr_assert_null(c.items);
    cr_assert_null(c.meta);
    cr_assert_null(c.lens);
    assert_case_equal(&c, &empty);
    gg_case_free(&c);
    gg_case_free(&c); /* freeing twice is safe */
}

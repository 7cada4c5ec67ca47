/*
 * test_fuzz_freedoms.c — the table of the kernel ABI's freedoms (fuzz/gen/gg_freedoms.c): it
 * holds a leading dimension and an offset of every operand of every op (B in both layouts of
 * batched), a stride of exactly the operands the case model lets have one, and the group sizes
 * of the grouped ops and moe_sorted, each row's geometry agreeing with the case checks; the
 * edge classes of hand-made cases; generation draws every class a kernel takes of every freedom
 * it has, a kernel's refusals are kept out of the cases and counted as refused; the mutator
 * moves a freedom between classes; the tally's fuzzer_stats line reads back.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/run/gg_run.h"

#define MAX_BYTES ((int64_t)1 << 30)

static void setup(void)
{
    gg_registry_init();
}

TestSuite(fuzz_freedoms, .init = setup, .timeout = 300);

/* A small case of op (and layout of B) with distinct sizes: M 6 (3 for batched, dense and moe's
   tokens, whose 3 x topk 2 = 6 output rows), N 5, K 7. */
static struct gg_case small(enum gg_op op, enum gg_layout layout)
{
    char text[512], err[256];
    const char *shape = op == GG_OP_BATCHED ? "batch 2\nm 3\n"
                        : op == GG_OP_DENSE ? "m 3\n"
                        : op == GG_OP_MOE_SORTED ? "groups 3\ngroup_lens 2 0 4\nm 3\ntopk 2\n"
                                                   "block_m 4\n"
                                                 : "groups 3\ngroup_lens 2 0 4\n";
    snprintf(text, sizeof text,
             "ggfuzz-case 1\nop %s\nkernel none\ndtypes a=bf16 b=bf16 c=bf16\n%s%sn 5\nk 7\n"
             "seed 1\n",
             gg_op_name(op), layout == GG_LAYOUT_KN ? "layout b=kn\n" : "", shape);
    struct gg_case c;
    cr_assert_eq(gg_case_parse(text, strlen(text), "small", &c, err, sizeof err), GG_OK, "%s\n%s",
                 err, text);
    return c;
}

static int64_t dim(enum gg_dim d, enum gg_op op)
{
    int rows3 = op == GG_OP_BATCHED || op == GG_OP_DENSE || op == GG_OP_MOE_SORTED;
    return d == GG_DIM_M ? (rows3 ? 3 : 6) : d == GG_DIM_N ? 5 : d == GG_DIM_K ? 7 : 6;
}

static int64_t *field(struct gg_case *c, enum gg_field f, int w)
{
    int64_t *ld[3] = {&c->lda, &c->ldb, &c->ldc}, *st[3] = {&c->stride_a, &c->stride_b,
                                                            &c->stride_c};
    int64_t *off[3] = {&c->off_a, &c->off_b, &c->off_c};
    return f == GG_FIELD_LD ? ld[w] : f == GG_FIELD_STRIDE ? st[w] : off[w];
}

/* The row of (op, layout, operand, field), or -1. */
static int row_of(enum gg_op op, int layout, int w, enum gg_field f)
{
    for (int i = 0; i < gg_n_freedoms; i++) {
        const struct gg_freedom *r = &gg_freedoms[i];
        if (r->op == op && r->operand == w && r->field == f &&
            (r->layout < 0 || r->layout == layout))
            return i;
    }
    return -1;
}

Test(fuzz_freedoms, the_table_covers_every_field_the_case_model_lets_a_caller_choose)
{
    char err[256];
    for (int op = 0; op < GG_OP_COUNT; op++) {
        for (int lay = 0; lay <= (op == GG_OP_BATCHED); lay++) {
            for (int w = 0; w < 3; w++) {
                cr_expect_geq(row_of(op, lay, w, GG_FIELD_LD), 0, "%s: no ld of operand %d",
                              gg_op_name(op), w);
                cr_expect_geq(row_of(op, lay, w, GG_FIELD_OFFSET), 0,
                              "%s: no offset of operand %d", gg_op_name(op), w);
                /* A stride row exactly where the case model takes a stride. */
                struct gg_case c = small(op, lay);
                *field(&c, GG_FIELD_STRIDE, w) = 1000;
                int takes = gg_case_check(&c, err, sizeof err) == GG_OK;
                cr_expect_eq(row_of(op, lay, w, GG_FIELD_STRIDE) >= 0, takes,
                             "%s layout %d operand %d: stride row %s, case model %s",
                             gg_op_name(op), lay, w,
                             row_of(op, lay, w, GG_FIELD_STRIDE) >= 0 ? "present" : "absent",
                             takes ? "takes it" : err);
                gg_case_free(&c);
            }
        }
        int items = op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD ||
                    op == GG_OP_GROUPED_WGRAD || op == GG_OP_MOE_SORTED;
        cr_expect_eq(row_of(op, 0, -1, GG_FIELD_GROUPS) >= 0, items, "%s: group sizes",
                     gg_op_name(op));
    }
    /* Names and keys are unique; every field of gg_problem a caller chooses is named. */
    static const char *const abi[] = {"lda", "ldb", "ldc", "stride_a", "stride_b", "stride_c",
                                      "off_a", "off_b", "off_c", "group_lens"};
    for (size_t a = 0; a < sizeof abi / sizeof abi[0]; a++) {
        int seen = 0;
        for (int i = 0; i < gg_n_freedoms; i++)
            seen += strcmp(strchr(gg_freedoms[i].name, '.') + 1, abi[a]) == 0;
        cr_expect_gt(seen, 0, "no freedom named *.%s", abi[a]);
    }
    for (int i = 0; i < gg_n_freedoms; i++) {
        char ki[96], kj[96];
        gg_freedom_key(i, ki, sizeof ki);
        cr_expect(strncmp(ki, "freedom_", 8) == 0 && !strchr(ki, '.'), "%s", ki);
        cr_expect(strncmp(gg_freedoms[i].name, gg_op_name(gg_freedoms[i].op),
                          strlen(gg_op_name(gg_freedoms[i].op))) == 0,
                  "%s is not named after its op", gg_freedoms[i].name);
        for (int j = 0; j < i; j++) {
            gg_freedom_key(j, kj, sizeof kj);
            cr_expect_str_neq(ki, kj);
        }
    }
}

Test(fuzz_freedoms, each_rows_geometry_is_the_case_models)
{
    char err[256];
    for (int i = 0; i < gg_n_freedoms; i++) {
        const struct gg_freedom *f = &gg_freedoms[i];
        if (f->field == GG_FIELD_GROUPS || f->field == GG_FIELD_OFFSET)
            continue;
        enum gg_layout lay = f->layout == GG_LAYOUT_KN ? GG_LAYOUT_KN : GG_LAYOUT_NK;
        int64_t rows = dim(f->rows, f->op), len = dim(f->len, f->op);
        struct gg_case c = small(f->op, lay);
        if (f->field == GG_FIELD_LD) {
            /* The row length: one element less is refused, the length itself taken. */
            *field(&c, GG_FIELD_LD, f->operand) = len - 1;
            cr_expect_neq(gg_case_check(&c, err, sizeof err), GG_OK, "%s below %lld", f->name,
                          (long long)len);
            *field(&c, GG_FIELD_LD, f->operand) = len;
            cr_expect_eq(gg_case_check(&c, err, sizeof err), GG_OK, "%s: %s", f->name, err);
        } else {
            /* The packed stride is rows x the (padded) leading dimension. */
            *field(&c, GG_FIELD_LD, f->operand) = len + 3;
            struct gg_tensors t;
            cr_assert_eq(gg_tensors_shape(&c, &t, err, sizeof err), GG_OK, "%s: %s", f->name,
                         err);
            const int64_t st[3] = {t.p.stride_a, t.p.stride_b, t.p.stride_c};
            cr_expect_eq(st[f->operand], rows * (len + 3), "%s: packed %lld, not %lld x %lld",
                         f->name, (long long)st[f->operand], (long long)rows,
                         (long long)(len + 3));
            gg_tensors_free(&t);
        }
        gg_case_free(&c);
    }
}

/* The classes of freedom `name` in c. */
static unsigned edges_of(const struct gg_case *c, const char *name)
{
    unsigned e[GG_FREEDOMS_MAX];
    cr_assert_eq(gg_freedoms_of_case(c, e), 0);
    for (int i = 0; i < gg_n_freedoms; i++)
        if (strcmp(gg_freedoms[i].name, name) == 0)
            return e[i];
    cr_assert_fail("no freedom %s", name);
    return 0;
}

#define B(e) GG_EDGE_BIT(GG_EDGE_##e)

Test(fuzz_freedoms, edge_classes_of_hand_made_cases)
{
    char err[256];
    const char *head = "ggfuzz-case 1\nop grouped_fwd\nkernel none\ndtypes a=bf16 b=e4m3 "
                       "c=f32\nscaling tensor\n";
    static const struct {
        const char *lines, *freedom;
        unsigned edges;
    } cases[] = {
        /* bf16 rows of 64 elements are 128 bytes: one more is 2 bytes off 16. */
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld a=65\n", "grouped_fwd.lda", B(PAD_SMALL) | B(MIS2)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld a=72\n", "grouped_fwd.lda", B(PAD_SMALL)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld a=192\n", "grouped_fwd.lda", B(PAD_TILE)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld a=66\n", "grouped_fwd.lda", B(PAD_SMALL) | B(MIS4)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\n", "grouped_fwd.lda", B(PACKED)},
        /* e4m3 weights: one byte a row more is an odd pitch. */
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld b=65\n", "grouped_fwd.ldb", B(PAD_SMALL) | B(MIS1)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nstride b=520\n", "grouped_fwd.stride_b",
         B(PAD_SMALL) | B(MIS8)},
        /* f32 output: 4 bytes off 16 per element. */
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\noffset c=1\n", "grouped_fwd.off_c", B(MIS4)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\noffset c=4\n", "grouped_fwd.off_c", B(PACKED)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\noffset a=4\n", "grouped_fwd.off_a", B(MIS8)},
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\noffset b=3\n", "grouped_fwd.off_b", B(MIS1)},
        /* Rows of X 2^29 apart: the second group's last row lies past 2^31 elements. */
        {"groups 2\ngroup_lens 3 4\nn 8\nk 64\nld a=536870912\n", "grouped_fwd.lda", B(HUGE)},
        /* Expert 1 of a packed W at 2^31 bytes: huge while packed. */
        {"groups 2\ngroup_lens 0 4\nn 32768\nk 65536\n", "grouped_fwd.stride_b", B(PACKED) | B(HUGE)},
        {"groups 3\ngroup_lens 0 4 0\nn 8\nk 64\n", "grouped_fwd.group_lens",
         B(EMPTY_FIRST) | B(EMPTY_LAST)},
        {"groups 3\ngroup_lens 2 0 4\nn 8\nk 64\n", "grouped_fwd.group_lens", B(EMPTY_INSIDE)},
        {"groups 2\ngroup_lens 0 0\nn 8\nk 64\n", "grouped_fwd.group_lens", B(ALL_EMPTY)},
        {"groups 70\ngroup_lens 1*70\nn 8\nk 64\n", "grouped_fwd.group_lens", B(NO_EMPTY) | B(MANY)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%sseed 1\n", head, cases[i].lines);
        struct gg_case c;
        cr_assert_eq(gg_case_parse(text, strlen(text), "edges", &c, err, sizeof err), GG_OK,
                     "%s\n%s", err, text);
        unsigned got = edges_of(&c, cases[i].freedom);
        cr_expect_eq(got, cases[i].edges, "case %zu, %s: classes %#x, expected %#x", i,
                     cases[i].freedom, got, cases[i].edges);
        gg_case_free(&c);
    }
    /* Freedoms of another op are in no class. */
    struct gg_case c = small(GG_OP_DENSE, GG_LAYOUT_NK);
    cr_expect_eq(edges_of(&c, "grouped_fwd.lda"), 0u);
    cr_expect_eq(edges_of(&c, "dense.lda"), B(PACKED));
    gg_case_free(&c);
    /* Batched B: the row of its layout only. */
    c = small(GG_OP_BATCHED, GG_LAYOUT_KN);
    c.ldb = 6;
    cr_expect_eq(edges_of(&c, "batched.ldb"), 0u);
    cr_expect_eq(edges_of(&c, "batched.ldb_kn"), B(PAD_SMALL) | B(MIS4));
    gg_case_free(&c);
}

/* A probed configuration of kernel; free with gg_gen_caps_free(cfg.caps). */
static struct gg_gen_config config_of(const struct gg_kernel *k, unsigned faults)
{
    struct gg_gen_config cfg = {.kernel = k, .faults = faults, .strategy = GG_STRATEGY_TARGETED,
                                .max_host_bytes = MAX_BYTES};
    struct gg_gen_caps *caps;
    char err[256];
    cr_assert_eq(gg_gen_caps_probe(&cfg, &caps, err, sizeof err), GG_OK, "%s", err);
    cfg.caps = caps;
    return cfg;
}

/* Draws n cases of cfg and tallies their classes into t (as though each ran). */
static void draw(const struct gg_gen_config *cfg, uint64_t n, struct gg_freedom_tally *t)
{
    char err[512];
    gg_freedom_tally_init(t, cfg->caps);
    for (uint64_t i = 0; i < n; i++) {
        struct gg_case c;
        cr_assert_eq(gg_generate(cfg, 77, i, &c, err, sizeof err), GG_OK, "%s", err);
        gg_freedom_tally_add(t, &c);
        gg_case_free(&c);
    }
}

/* Every kernel draws each class it takes of each freedom it has, the huge class included (the
   i64 strategy's); the non-packed cases are a fair share of each freedom's. */
Test(fuzz_freedoms, generation_draws_every_class_a_kernel_takes, .timeout = 600)
{
    static const struct {
        const char *kernel;
        uint64_t cases;
    } kernels[] = {{"grouped_bf16_cpu_tiled", 3000}, {"grouped_fp8_cpu_tiled", 3000},
                   {"grouped_fp8_cpu_fine", 3000},   {"batched_bf16_cpu_tiled", 2000},
                   {"batched_afp4wfp4_cpu_tiled", 1500}, {"mx_e4m3_cpu_gemv", 1500},
                   {"moe_mx_e4m3_cpu_sorted", 1500}};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        struct gg_gen_config cfg = config_of(gg_registry_find(kernels[k].kernel), 0);
        static struct gg_freedom_tally t;
        draw(&cfg, kernels[k].cases, &t);
        int freedoms = 0;
        for (int i = 0; i < gg_n_freedoms; i++) {
            if (t.edges[i] == 0)
                continue;
            freedoms++;
            int64_t cells[GG_EDGE_COUNT];
            gg_freedom_cells(&t, i, cells);
            for (int e = 0; e < GG_EDGE_COUNT; e++) {
                cr_expect_neq(cells[e], 0, "%s: %s %s never drawn", kernels[k].kernel,
                              gg_freedoms[i].name, gg_edge_name((enum gg_edge)e));
                cr_expect_neq(cells[e], GG_FREEDOM_REFUSED, "%s: %s %s refused",
                              kernels[k].kernel, gg_freedoms[i].name,
                              gg_edge_name((enum gg_edge)e));
            }
            if (gg_freedoms[i].field == GG_FIELD_GROUPS)
                continue;
            /* Offsets: the misaligned classes are the only ones away from packed. */
            int64_t moved = gg_freedoms[i].field == GG_FIELD_OFFSET
                                ? t.ran[i][GG_EDGE_MIS1] + t.ran[i][GG_EDGE_MIS2] +
                                      t.ran[i][GG_EDGE_MIS4] + t.ran[i][GG_EDGE_MIS8]
                                : t.ran[i][GG_EDGE_PAD_SMALL] + t.ran[i][GG_EDGE_PAD_TILE];
            int64_t all = t.ran[i][GG_EDGE_PACKED] + moved;
            cr_expect(moved * 5 >= all && moved * 2 <= all, "%s: %s away from packed in %lld of "
                      "%lld cases", kernels[k].kernel, gg_freedoms[i].name, (long long)moved,
                      (long long)all);
        }
        cr_expect_gt(freedoms, 5, "%s: %d freedoms", kernels[k].kernel, freedoms);
        gg_gen_caps_free((struct gg_gen_caps *)cfg.caps);
    }
}

/* A kernel that takes grouped fwd bf16 with X packed only. */
static int packed_x_only(const struct gg_problem *p, char *why, size_t len)
{
    int ok = p->op == GG_OP_GROUPED_FWD && p->a_dtype == GG_DTYPE_BF16 &&
             p->b_dtype == GG_DTYPE_BF16 && p->c_dtype == GG_DTYPE_BF16 &&
             p->scaling == GG_SCALING_NONE && p->bias_dtype == GG_DTYPE_NONE && p->lda == p->k;
    if (!ok)
        snprintf(why, len, "grouped fwd bf16 with X packed only");
    return ok;
}

/* A kernel's refusal of a freedom is probed once: no case draws it, and the tally names it
   refused (not never drawn); its other freedoms are drawn as usual. */
Test(fuzz_freedoms, refused_freedoms_are_counted_not_drawn)
{
    const struct gg_kernel k = {.abi_version = GG_KERNEL_ABI_VERSION,
                                .name = "test_packed_x_cpu",
                                .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),
                                .supports = packed_x_only};
    struct gg_gen_config cfg = config_of(&k, GG_FAULTS_SNR | GG_FAULTS_ZERO);
    static struct gg_freedom_tally t;
    draw(&cfg, 300, &t);
    int lda = -1, ldb = -1;
    for (int i = 0; i < gg_n_freedoms; i++) {
        lda = strcmp(gg_freedoms[i].name, "grouped_fwd.lda") == 0 ? i : lda;
        ldb = strcmp(gg_freedoms[i].name, "grouped_fwd.ldb") == 0 ? i : ldb;
    }
    int64_t cells[GG_EDGE_COUNT];
    gg_freedom_cells(&t, lda, cells);
    cr_expect_eq(cells[GG_EDGE_PACKED], 300);
    for (int e = GG_EDGE_PAD_SMALL; e <= GG_EDGE_HUGE; e++)
        if (e != GG_EDGE_MIS1)
            cr_expect_eq(cells[e], GG_FREEDOM_REFUSED, "lda %s: %lld",
                         gg_edge_name((enum gg_edge)e), (long long)cells[e]);
    cr_expect_eq(cells[GG_EDGE_MIS1], GG_FREEDOM_ABSENT, "bf16 has no odd pitch");
    gg_freedom_cells(&t, ldb, cells);
    cr_expect_gt(cells[GG_EDGE_PAD_SMALL], 0);
    cr_expect_gt(cells[GG_EDGE_MIS2], 0);
    char line[512];
    gg_freedom_cells(&t, lda, cells);
    gg_freedom_cells_format(cells, line, sizeof line);
    cr_expect(strstr(line, "packed=300 pad_small=refused") == line, "%s", line);
    gg_gen_caps_free((struct gg_gen_caps *)cfg.caps);
}

/* The index of freedom name. */
static int index_of(const char *name)
{
    for (int i = 0; i < gg_n_freedoms; i++)
        if (strcmp(gg_freedoms[i].name, name) == 0)
            return i;
    cr_assert_fail("no freedom %s", name);
    return -1;
}

/* From a packed parent the mutator moves layouts away from packed; from a parent whose X is
   padded by one element, it moves lda to each other class, back to packed too. */
Test(fuzz_freedoms, the_mutator_moves_freedoms_between_classes)
{
    char err[512];
    struct gg_gen_config cfg = config_of(gg_registry_find("grouped_bf16_cpu_tiled"), 0);
    struct gg_case parent = small(GG_OP_GROUPED_FWD, GG_LAYOUT_NK);
    snprintf(parent.kernel, sizeof parent.kernel, "grouped_bf16_cpu_tiled");
    unsigned before[GG_FREEDOMS_MAX], after[GG_FREEDOMS_MAX];
    cr_assert_eq(gg_freedoms_of_case(&parent, before), 0);
    int moved = 0, lda = index_of("grouped_fwd.lda");
    for (uint64_t n = 0; n < 300; n++) {
        struct gg_case c;
        cr_assert_eq(gg_mutate(&cfg, &parent, 5, n, &c, err, sizeof err), GG_OK, "%s", err);
        cr_assert_eq(gg_freedoms_of_case(&c, after), 0);
        int changed = 0;
        for (int i = 0; i < gg_n_freedoms; i++)
            changed |= gg_freedoms[i].field != GG_FIELD_GROUPS && after[i] != before[i];
        moved += changed;
        gg_case_free(&c);
    }
    cr_expect(moved >= 15 && moved <= 150, "%d of 300 mutations moved a layout", moved);
    parent.lda = 8; /* K 7: one element of padding */
    cr_assert_eq(gg_freedoms_of_case(&parent, before), 0);
    cr_assert_eq(before[lda], GG_EDGE_BIT(GG_EDGE_PAD_SMALL));
    unsigned reached = 0;
    for (uint64_t n = 0; n < 3000; n++) {
        struct gg_case c;
        cr_assert_eq(gg_mutate(&cfg, &parent, 6, n, &c, err, sizeof err), GG_OK, "%s", err);
        cr_assert_eq(gg_freedoms_of_case(&c, after), 0);
        reached |= after[lda];
        gg_case_free(&c);
    }
    unsigned want = GG_EDGE_BIT(GG_EDGE_PACKED) | GG_EDGE_BIT(GG_EDGE_PAD_SMALL) |
                    GG_EDGE_BIT(GG_EDGE_PAD_TILE) | GG_EDGE_BIT(GG_EDGE_MIS2) |
                    GG_EDGE_BIT(GG_EDGE_MIS4) | GG_EDGE_BIT(GG_EDGE_MIS8);
    cr_expect_eq(reached & want, want, "lda reached classes %#x of %#x", reached, want);
    gg_case_free(&parent);
    gg_gen_caps_free((struct gg_gen_caps *)cfg.caps);
}

Test(fuzz_freedoms, cells_format_and_parse_back)
{
    int64_t cells[GG_EDGE_COUNT], back[GG_EDGE_COUNT];
    for (int e = 0; e < GG_EDGE_COUNT; e++)
        cells[e] = GG_FREEDOM_ABSENT;
    cells[GG_EDGE_PACKED] = 812;
    cells[GG_EDGE_PAD_SMALL] = 0;
    cells[GG_EDGE_MIS1] = GG_FREEDOM_REFUSED;
    cells[GG_EDGE_HUGE] = 3;
    char line[256];
    gg_freedom_cells_format(cells, line, sizeof line);
    cr_expect_str_eq(line, "packed=812 pad_small=0 mis1=refused huge=3");
    cr_assert_eq(gg_freedom_cells_parse(line, back), 0);
    cr_expect_arr_eq(back, cells, sizeof cells);
    /* A class of a later version is skipped; a malformed cell is an error. */
    cr_expect_eq(gg_freedom_cells_parse("packed=1 mis16=4", back), 0);
    cr_expect_eq(back[GG_EDGE_PACKED], 1);
    cr_expect_eq(gg_freedom_cells_parse("packed=x", back), -1);
    cr_expect_eq(gg_freedom_cells_parse("packed", back), -1);
    cr_expect_eq(gg_freedom_cells_parse("packed=-3", back), -1);
    struct gg_freedom_sum s = {0};
    gg_freedom_sum_add(&s, cells);
    cr_expect(s.exercised == 2 && s.never == 1 && s.refused == 1);
    char list[256] = "";
    cr_expect_eq(gg_freedom_list_add(list, sizeof list, "dense.lda", cells, 0), 1);
    cr_expect_eq(gg_freedom_list_add(list, sizeof list, "dense.ldb", cells, GG_FREEDOM_REFUSED),
                 1);
    cr_expect_str_eq(list, "dense.lda pad_small; dense.ldb mis1");
}

/*
 * gg_report_dump.c — the dump of one case run (`ggfuzz run --dump DIR`): every array the kernel
 * received (inputs, scales, bias, group and routing arrays), the reference (fp64 values, Σ|ab|
 * and the output-independent part of each element's bound), and the kernel's output, each as a
 * .npy file (gg_report_npy.c) holding the array dense in C order, plus index.json, which names
 * each file with its dtype as the harness stores it, the NumPy descr of the raw bits, its shape
 * and the strides (in elements) the kernel saw, and the problem, the verdict, the failing groups
 * and each one's first failing element as the oracles found it.
 *
 * The dump is a run observer (gg_run_opts.observe), so it is written in the process that runs
 * the case: the inputs, the reference and an index whose state is "running" before the kernel
 * runs, the output and the final index after. A forked run whose process died leaves the index
 * at "running"; gg_report_dump_finish(), in the parent, then records the outcome there. Every
 * file is written atomically; when one cannot be, the files this dump wrote are removed again.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz/store/gg_store.h"
#include "reports/gg_report.h"
#include "reports/report_int.h"

#define INDEX_NAME "index.json"
#define DUMP_FORMAT "ggfuzz-dump"
#define DUMP_VERSION 1

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NPY_ORDER ">"
#else
#define NPY_ORDER "<"
#endif

/* Integer arrays have no gg_dtype: these stand beside the formats. */
enum elem { ELEM_FORMAT, ELEM_I64, ELEM_I32 };

/* One array of the dump: dense in its file, strided as the kernel saw it. */
struct array {
    const char *name;    /* file stem and index key */
    const char *about;   /* what it is, for the index and messages */
    enum elem elem;
    enum gg_dtype dtype; /* ELEM_FORMAT: the stored format */
    const void *base;    /* element [0][0][0]; NULL: no file (missing says why) */
    int ndim;            /* 1 to 3; the last stride is 1 */
    int64_t shape[3], strides[3];
    int64_t offset;      /* elements before base in the harness's allocation */
    const char *missing;
    /* (3-D) matrix i was never generated when holes[i] is 0 (the weights of a group without
       tokens): all zeros, written as a hole of the file, costing no disk. NULL: none. */
    const int64_t *holes;
};

/* Every name an array of a dump may have: a dump removes the files of the others, which an
   earlier dump into the same directory may have left. */
static const char *const ARRAY_NAMES[] = {
    "a", "b", "a_scale", "b_scale", "bias", "group_lens", "group_offs", "sorted_ids",
    "expert_ids", "ref", "abs", "bound", "c"};
#define N_NAMES (sizeof ARRAY_NAMES / sizeof ARRAY_NAMES[0])

static struct array mk(const char *name, const char *about, enum elem elem, enum gg_dtype dtype,
                       const void *base)
{
    struct array a;
    memset(&a, 0, sizeof a);
    a.name = name, a.about = about, a.elem = elem, a.dtype = dtype, a.base = base;
    return a;
}

static const char *type_name(const struct array *a)
{
    return a->elem == ELEM_I64 ? "i64" : a->elem == ELEM_I32 ? "i32" : gg_dtype_name(a->dtype);
}

/* The NumPy descr of the raw bits: the floats NumPy has as themselves, the others as unsigned
   integers of their width (E2M1: bytes of two codes). */
static const char *descr_of(const struct array *a)
{
    if (a->elem != ELEM_FORMAT)
        return a->elem == ELEM_I64 ? NPY_ORDER "i8" : NPY_ORDER "i4";
    switch (a->dtype) {
    case GG_DTYPE_F64: return NPY_ORDER "f8";
    case GG_DTYPE_F32: return NPY_ORDER "f4";
    case GG_DTYPE_F16: return NPY_ORDER "f2";
    case GG_DTYPE_BF16: return NPY_ORDER "u2";
    default: return "|u1";
    }
}

static int elem_bytes(const struct array *a)
{
    return a->elem == ELEM_I64 ? 8 : a->elem == ELEM_I32 ? 4 : gg_dtype_bits(a->dtype) / 8;
}

static int packed(const struct array *a)
{
    return a->elem == ELEM_FORMAT && gg_dtype_bits(a->dtype) == 4;
}

/* Shape d0 (× d1 (× d2)) with strides s0 (and s1) for the dimensions before the last, whose
   stride is 1. */
static void set_dims(struct array *a, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t s0,
                     int64_t s1)
{
    int64_t d[3] = {d0, d1, d2}, s[3] = {s0, s1, 0};
    a->ndim = ndim;
    for (int i = 0; i < 3; i++) {
        a->shape[i] = i < ndim ? d[i] : 0;
        a->strides[i] = i < ndim ? s[i] : 0;
    }
    a->strides[ndim - 1] = 1;
}

/* The same shape, packed. */
static void set_dense(struct array *a, int ndim, int64_t d0, int64_t d1, int64_t d2)
{
    set_dims(a, ndim, d0, d1, d2, ndim == 3 ? d1 * d2 : d1, d2);
}

static int64_t elems(const struct array *a)
{
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n = gg_size_mul(n, a->shape[i]);
    return n;
}

/* The output's logical shape: [M, N] fwd and dense, [M, K] dgrad, [G, N, K] wgrad, [B, M, N]
   batched, [T·topk, N] moe. Returns ndim. */
static int out_shape(const struct gg_problem *p, int64_t d[3])
{
    switch (p->op) {
    case GG_OP_GROUPED_DGRAD: d[0] = p->m, d[1] = p->k; return 2;
    case GG_OP_GROUPED_WGRAD: d[0] = p->groups, d[1] = p->n, d[2] = p->k; return 3;
    case GG_OP_BATCHED: d[0] = p->groups, d[1] = p->m, d[2] = p->n; return 3;
    case GG_OP_MOE_SORTED: d[0] = p->m * p->topk, d[1] = p->n; return 2;
    default: d[0] = p->m, d[1] = p->n; return 2;
    }
}

/* A, B and C as gg_kernel.h's table lays them out. */
static void operand_arrays(const struct gg_problem *p, const struct gg_case *c,
                           const struct gg_operands *o, struct array *a, struct array *b,
                           struct array *out)
{
    int64_t g = p->groups, m = p->m, n = p->n, k = p->k;
    *a = mk("a", "input A", ELEM_FORMAT, p->a_dtype, o->a);
    *b = mk("b", "input B", ELEM_FORMAT, p->b_dtype, o->b);
    *out = mk("c", "the kernel's output C", ELEM_FORMAT, p->c_dtype, NULL);
    a->offset = c->off_a, b->offset = c->off_b, out->offset = c->off_c;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD:
    case GG_OP_MOE_SORTED:
        set_dims(a, 2, m, p->op == GG_OP_GROUPED_DGRAD ? n : k, 0, p->lda, 1);
        set_dims(b, 3, g, n, k, p->stride_b, p->ldb);
        b->holes = p->group_lens;
        break;
    case GG_OP_GROUPED_WGRAD:
        set_dims(a, 2, m, n, 0, p->lda, 1);
        set_dims(b, 2, m, k, 0, p->ldb, 1);
        break;
    case GG_OP_BATCHED:
        set_dims(a, 3, g, m, k, p->stride_a, p->lda);
        if (p->b_layout == GG_LAYOUT_KN)
            set_dims(b, 3, g, k, n, p->stride_b, p->ldb);
        else
            set_dims(b, 3, g, n, k, p->stride_b, p->ldb);
        break;
    default:
        set_dims(a, 2, m, k, 0, p->lda, 1);
        set_dims(b, 2, n, k, 0, p->ldb, 1);
        break;
    }
    int64_t d[3] = {0, 0, 0};
    int nd = out_shape(p, d);
    if (nd == 3)
        set_dims(out, 3, d[0], d[1], d[2], p->stride_c, p->ldc);
    else
        set_dims(out, 2, d[0], d[1], 0, p->ldc, 1);
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The scales of the problem's recipe (gg_kernel.h): shapes of packed arrays. A shape that does
   not hold the recipe's count (no recipe forgotten) falls back to one dimension. */
static void scale_arrays(const struct gg_problem *p, const struct gg_operands *o,
                         struct array *sa, struct array *sb)
{
    int mx = p->scaling == GG_SCALING_MX || p->scaling == GG_SCALING_MX_B;
    enum gg_dtype t = mx ? GG_DTYPE_E8M0 : GG_DTYPE_F32;
    int64_t rows = gg_problem_a_rows(p), mats = gg_problem_b_mats(p), n = p->n, k = p->k;
    int64_t red = p->op == GG_OP_GROUPED_DGRAD ? n : k;
    *sa = mk("a_scale", "scales of A", ELEM_FORMAT, t, o->a_scale);
    *sb = mk("b_scale", "scales of B", ELEM_FORMAT, t, o->b_scale);
    switch (p->scaling) {
    case GG_SCALING_TENSOR: set_dense(sa, 1, 1, 0, 0), set_dense(sb, 1, mats, 0, 0); break;
    case GG_SCALING_MX:
    case GG_SCALING_MX_B:
        set_dense(sa, 2, rows, k / GG_MX_BLOCK, 0);
        set_dense(sb, 3, mats, n, k / GG_MX_BLOCK);
        break;
    case GG_SCALING_BLOCK128:
        set_dense(sa, 2, rows, cdiv(k, GG_BLOCK128), 0), set_dense(sb, 1, mats, 0, 0);
        break;
    case GG_SCALING_ROWWISE:
        if (p->op == GG_OP_GROUPED_WGRAD)
            set_dense(sa, 2, p->groups, n, 0), set_dense(sb, 2, p->groups, k, 0);
        else
            set_dense(sa, 1, rows, 0, 0), set_dense(sb, 2, mats, red == n ? k : n, 0);
        break;
    case GG_SCALING_BLOCKWISE:
        set_dense(sa, 2, rows, cdiv(red, GG_BLOCK128), 0);
        set_dense(sb, 3, mats, cdiv(n, GG_BLOCK128), cdiv(k, GG_BLOCK128));
        break;
    default: break;
    }
    if (sa->ndim && elems(sa) != gg_problem_a_scale_count(p))
        set_dense(sa, 1, gg_problem_a_scale_count(p), 0, 0);
    if (sb->ndim && elems(sb) != gg_problem_b_scale_count(p))
        set_dense(sb, 1, gg_problem_b_scale_count(p), 0, 0);
}

/* The arrays the kernel received, then the reference's (ref, abs, bound: dense fp64 buffers in
   the output's shape), then C (its base set by the caller). Returns how many. */
static size_t array_table(const struct gg_run_view *v, const double *dense[3], struct array *t)
{
    const struct gg_problem *p = &v->t->p;
    const struct gg_operands *o = &v->t->ops;
    size_t n = 0;
    struct array out;
    operand_arrays(p, v->kase, o, &t[0], &t[1], &out);
    n = 2;
    if (p->scaling != GG_SCALING_NONE) {
        scale_arrays(p, o, &t[n], &t[n + 1]);
        n += 2;
        if (!o->a_scale) /* mx_b: A unscaled */
            t[n - 2] = t[n - 1], n--;
    }
    if (o->bias) {
        t[n] = mk("bias", "the bias per matrix of B", ELEM_FORMAT, p->bias_dtype, o->bias);
        set_dense(&t[n++], 2, gg_problem_b_mats(p), p->n, 0);
    }
    if (p->group_lens) {
        t[n] = mk("group_lens", "rows per group", ELEM_I64, 0, p->group_lens);
        set_dense(&t[n++], 1, p->groups, 0, 0);
        t[n] = mk("group_offs", "the groups' first rows and the total", ELEM_I64, 0,
                  p->group_offs);
        set_dense(&t[n++], 1, p->groups + 1, 0, 0);
    }
    if (p->op == GG_OP_MOE_SORTED) {
        t[n] = mk("sorted_ids", "sorted (token, slot) ids, padded per expert", ELEM_I32, 0,
                  p->sorted_ids);
        set_dense(&t[n++], 1, p->sorted_len, 0, 0);
        t[n] = mk("expert_ids", "the expert of each block_m block", ELEM_I32, 0, p->expert_ids);
        set_dense(&t[n++], 1, p->block_m > 0 ? p->sorted_len / p->block_m : 0, 0, 0);
    }
    static const char *const about[3] = {
        "the reference: the exact product of the dequantised inputs, in fp64",
        "the sum of |a·b| over each output's terms (its finite ones where the reference is not "
        "finite)",
        "the bound's part that does not depend on the output: tau = rel*|out| + bound; NaN where "
        "the oracles do not judge"};
    static const char *const names[3] = {"ref", "abs", "bound"};
    int64_t d[3] = {0, 0, 0};
    int nd = out_shape(p, d);
    for (int i = 0; i < 3; i++) {
        t[n] = mk(names[i], about[i], ELEM_FORMAT, GG_DTYPE_F64, dense[i]);
        set_dense(&t[n++], nd, d[0], d[1], d[2]);
    }
    t[n++] = out;
    return n;
}

/* ---- Files --------------------------------------------------------------------------------- */

/* Records path, just written, in the dump's removal list; GG_OK, or GG_E_NOMEM after removing
   it again. */
static enum gg_status remember(struct gg_report_dump *d, const char *path, char *err,
                               size_t err_len)
{
    for (size_t i = 0; i < d->n_written; i++)
        if (strcmp(d->written[i], path) == 0)
            return GG_OK;
    char **grown = realloc(d->written, (d->n_written + 1) * sizeof *grown);
    char *copy = grown ? strdup(path) : NULL;
    if (grown)
        d->written = grown;
    if (!copy) {
        unlink(path);
        snprintf(err, err_len, "%s: out of memory", d->dir);
        return GG_E_NOMEM;
    }
    d->written[d->n_written++] = copy;
    return GG_OK;
}

/* Removes every file this dump wrote and says so after err's message. */
static void remove_written(struct gg_report_dump *d, char *err, size_t err_len)
{
    for (size_t i = 0; i < d->n_written; i++)
        unlink(d->written[i]);
    size_t n = strlen(err);
    if (d->n_written && n + 1 < err_len)
        snprintf(err + n, err_len - n, " (the %zu files this dump had written were removed)",
                 d->n_written);
    gg_report_dump_free(d);
}

static char *file_path(const struct gg_report_dump *d, const char *name, const char *ext)
{
    size_t len = strlen(d->dir) + strlen(name) + strlen(ext) + 2;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s/%s%s", d->dir, name, ext);
    return path;
}

/* Writes the rows of a (mats × rows × rowlen, strided) one after the other through w (a short
   write marks it failed with its errno); -1 when out of memory or when the file cannot be
   flushed or sized (errno says why). */
static int write_rows(struct gg_atomic *w, const struct array *a)
{
    FILE *f = w->f;
    int64_t mats = a->ndim == 3 ? a->shape[0] : 1, rows = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
    int64_t len = a->shape[a->ndim - 1], ms = a->ndim == 3 ? a->strides[0] : 0;
    int64_t ld = a->ndim >= 2 ? a->strides[a->ndim - 2] : 0;
    size_t ew = (size_t)elem_bytes(a), packed_len = (size_t)cdiv(len, 2);
    unsigned char *row = packed(a) ? malloc(packed_len + 1) : NULL;
    if (packed(a) && !row)
        return -1;
    for (int64_t i = 0; i < mats; i++) {
        if (a->holes && a->holes[i] == 0) {
            fseeko(f, (off_t)rows * (off_t)(row ? packed_len : ew * (size_t)len), SEEK_CUR);
            continue;
        }
        for (int64_t r = 0; r < rows; r++) {
            int64_t at = i * ms + r * ld;
            if (!row) {
                gg_atomic_put(w, (const char *)a->base + (size_t)at * ew, ew * (size_t)len);
                continue;
            }
            memset(row, 0, packed_len);
            for (int64_t j = 0; j < len; j++)
                row[j / 2] |= (unsigned char)(gg_load_code(a->dtype, a->base, at + j)
                                              << (j % 2 ? 4 : 0));
            gg_atomic_put(w, row, packed_len);
        }
    }
    free(row);
    /* A hole at the end: the file still has the array's length. */
    off_t end = ftello(f);
    return fflush(f) == 0 && ftruncate(fileno(f), end) == 0 ? 0 : -1;
}

static enum gg_status write_array(struct gg_report_dump *d, const struct array *a, char *err,
                                  size_t err_len)
{
    char *path = file_path(d, a->name, ".npy");
    if (!path) {
        snprintf(err, err_len, "%s: out of memory", d->dir);
        return GG_E_NOMEM;
    }
    int64_t shape[3] = {a->shape[0], a->shape[1], a->shape[2]};
    if (packed(a))
        shape[a->ndim - 1] = cdiv(shape[a->ndim - 1], 2);
    struct gg_atomic w;
    enum gg_status st = gg_report_npy_open(&w, path, a->about, descr_of(a), shape, a->ndim, err,
                                           err_len);
    if (st == GG_OK) {
        if (elems(a) > 0 && write_rows(&w, a) != 0)
            gg_atomic_fail(&w);
        st = gg_atomic_commit(&w, 0, err, err_len);
    }
    if (st == GG_OK)
        st = remember(d, path, err, err_len);
    free(path);
    return st;
}

/* ---- The index ----------------------------------------------------------------------------- */

/* A number; JSON has no NaN or infinities: those are the strings "nan", "inf" and "-inf". */
static json_t *num(double x)
{
    return gg_report_json_num(x);
}

static json_t *ints(const int64_t *v, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_integer(v[i]));
    return arr;
}

static json_t *array_json(const struct array *a)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:I}", "name", a->name, "about",
                          a->about, "dtype", type_name(a), "descr", descr_of(a), "shape",
                          ints(a->shape, a->ndim), "strides", ints(a->strides, a->ndim), "offset",
                          (json_int_t)a->offset);
    char file[64];
    snprintf(file, sizeof file, "%s.npy", a->name);
    json_object_set_new(o, "file", a->base ? json_string(file) : json_null());
    if (!a->base)
        json_object_set_new(o, "missing", json_string(a->missing ? a->missing : "not written"));
    if (packed(a))
        json_object_set_new(o, "packed",
                            json_string("two codes a byte along the last dimension, element 2i "
                                        "in the low nibble: the file's last dimension is "
                                        "ceil(shape[-1] / 2) bytes"));
    if (strcmp(a->name, "c") == 0) {
        char s[16];
        snprintf(s, sizeof s, "0x%x", gg_oracle_sentinel(a->dtype));
        json_object_set_new(o, "sentinel", json_string(s));
    }
    return o;
}

static json_t *problem_json(const struct gg_case *c, const struct gg_problem *p)
{
    char a[96], b[96];
    gg_dist_format(&c->dist_a, a, sizeof a);
    gg_dist_format(&c->dist_b, b, sizeof b);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "op",
        gg_op_name(p->op), "kernel", c->kernel, "mutant", c->mutant, "a_dtype",
        gg_dtype_name(p->a_dtype), "b_dtype", gg_dtype_name(p->b_dtype), "c_dtype",
        gg_dtype_name(p->c_dtype), "acc_dtype", gg_dtype_name(p->acc_dtype), "bias_dtype",
        gg_dtype_name(p->bias_dtype), "scaling", gg_scaling_name(p->scaling), "b_layout",
        p->b_layout == GG_LAYOUT_KN ? "kn" : "nk", "groups", (json_int_t)p->groups, "m",
        (json_int_t)p->m, "n", (json_int_t)p->n, "k", (json_int_t)p->k);
    static const char *const keys[] = {"lda", "ldb", "ldc", "stride_a", "stride_b", "stride_c",
                                       "off_a", "off_b", "off_c", "topk", "block_m", "sorted_len"};
    const int64_t vals[] = {p->lda, p->ldb, p->ldc, p->stride_a, p->stride_b, p->stride_c,
                            c->off_a, c->off_b, c->off_c, p->topk, p->block_m, p->sorted_len};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        json_object_set_new(o, keys[i], json_integer(vals[i]));
    json_object_set_new(o, "group_lens", p->group_lens ? ints(p->group_lens, (int)p->groups)
                                                       : json_null());
    json_object_set_new(o, "data_a", json_string(a));
    json_object_set_new(o, "data_b", json_string(b));
    char seed[24];
    snprintf(seed, sizeof seed, "0x%llx", (unsigned long long)c->seed);
    json_object_set_new(o, "seed", json_string(seed));
    return o;
}

/* The position of element (r, col) of group g's block in the output's logical shape. */
static json_t *out_index(const struct gg_problem *p, int64_t g, int64_t r, int64_t col)
{
    struct gg_out_block b;
    gg_problem_out_block(p, g, &b);
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
    case GG_OP_GROUPED_DGRAD: return json_pack("[I, I]", (json_int_t)(p->group_offs[g] + r),
                                               (json_int_t)col);
    case GG_OP_GROUPED_WGRAD:
    case GG_OP_BATCHED:
        return json_pack("[I, I, I]", (json_int_t)g, (json_int_t)r, (json_int_t)col);
    case GG_OP_MOE_SORTED:
        return json_pack("[I, I]", (json_int_t)(b.row_map ? b.row_map[r] : r), (json_int_t)col);
    default: return json_pack("[I, I]", (json_int_t)r, (json_int_t)col);
    }
}

/* Output element (r, col) of block b in out (laid out like C): 1 when it holds the sentinel,
   else 0 and its value. */
static int out_value(const struct gg_problem *p, const void *out, const struct gg_out_block *b,
                     int64_t r, int64_t col, double *v)
{
    int64_t i = (b->row_map ? (int64_t)b->row_map[r] * b->ld : b->base + r * b->ld) + col;
    uint32_t s = gg_oracle_sentinel(p->c_dtype);
    if (p->c_dtype == GG_DTYPE_F64) {
        uint64_t bits;
        memcpy(&bits, (const unsigned char *)out + 8 * i, sizeof bits);
        memcpy(v, &bits, sizeof bits);
        return bits == ((uint64_t)s << 32 | s);
    }
    uint32_t code = gg_load_code(p->c_dtype, out, i);
    *v = gg_decode(p->c_dtype, code);
    return code == s;
}

/* The groups' metrics, and for each group with a bad element its first one, as the oracles
   found it (group, row and column in the group's block, its place in the output). */
static void groups_json(json_t *root, const struct gg_run_view *v, const double *bound,
                        double rel)
{
    const struct gg_problem *p = &v->t->p;
    const struct gg_compare *cmp = &v->result->cmp;
    json_t *groups = json_array(), *fails = json_array();
    int64_t pos = 0;
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        const struct gg_group_metrics *gm = &cmp->groups[g];
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        json_t *o = json_pack("{s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:I}", "group", (json_int_t)g,
                              "rows", (json_int_t)b.rows, "cols", (json_int_t)b.cols, "snr_db",
                              num(gm->snr_db), "max_ratio", num(gm->max_ratio), "past_bound",
                              (json_int_t)gm->n_bound, "nan", (json_int_t)gm->n_nan,
                              "unwritten", (json_int_t)gm->n_unwritten);
        if (gm->worst.row >= 0)
            json_object_set_new(
                o, "worst",
                json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "row", (json_int_t)gm->worst.row,
                          "col", (json_int_t)gm->worst.col, "index",
                          out_index(p, g, gm->worst.row, gm->worst.col), "output",
                          num(gm->worst.out), "reference", num(gm->worst.ref), "abs",
                          num(gm->worst.abs), "bound", num(gm->worst.tau)));
        json_array_append_new(groups, o);
        if (gm->first_bad >= 0 && b.cols > 0) {
            int64_t r = (gm->first_bad - pos) / b.cols, col = (gm->first_bad - pos) % b.cols;
            double out = 0.0, ref = v->ref[gm->first_bad];
            int unwritten = out_value(p, v->out, &b, r, col, &out);
            const char *kind = unwritten                         ? "unwritten"
                               : !isfinite(ref) || !isfinite(out) ? "nan"
                                                                  : "bound";
            double tau = rel * (unwritten ? 0.0 : fabs(out)) + bound[gm->first_bad];
            json_array_append_new(
                fails, json_pack("{s:I, s:I, s:I, s:o, s:s, s:o, s:o, s:o}", "group",
                                 (json_int_t)g, "row", (json_int_t)r, "col", (json_int_t)col,
                                 "index", out_index(p, g, r, col), "kind", kind, "output",
                                 unwritten ? json_null() : num(out), "reference", num(ref),
                                 "bound", num(tau)));
        }
        pos += b.rows * b.cols;
    }
    json_object_set_new(root, "groups", groups);
    json_object_set_new(root, "failures", fails);
}

static json_t *verdict_json(const struct gg_verdict *v)
{
    int64_t n = v->n_fail_groups < GG_VERDICT_GROUPS_MAX ? v->n_fail_groups : GG_VERDICT_GROUPS_MAX;
    return json_pack("{s:s, s:s, s:s, s:o, s:I, s:o, s:o, s:I, s:o}", "class",
                     gg_class_name(v->cls), "signature", v->signature, "detail", v->detail,
                     "worst_snr_db", num(v->worst_snr_db), "worst_group",
                     (json_int_t)v->worst_group, "snr_fail_db", num(v->snr_fail_db),
                     "max_ratio", num(v->max_ratio), "n_failing_groups",
                     (json_int_t)v->n_fail_groups, "failing_groups",
                     ints(v->fail_groups, (int)n));
}

/* Writes the index atomically; what it says of the run comes from v (done or not). */
static enum gg_status write_index(struct gg_report_dump *d, const struct gg_run_view *v,
                                  const struct array *t, size_t n, const double *bound,
                                  double rel, char *err, size_t err_len)
{
    const struct gg_problem *p = &v->t->p;
    char id[GG_CASE_ID_HEX + 1], *text = NULL;
    gg_case_id(v->kase, id);
    gg_case_format(v->kase, 1, &text);
    const struct gg_threshold *th = gg_threshold_for(p);
    json_t *root = json_pack(
        "{s:s, s:i, s:s, s:{s:s, s:s, s:s}, s:o, s:s}", "format", DUMP_FORMAT, "version",
        DUMP_VERSION, "ggfuzz", GG_VERSION, "case", "path", d->case_path ? d->case_path : "",
        "id", id, "text", text ? text : "", "problem", problem_json(v->kase, p), "stored",
        "dense: each file holds its array contiguous in C order (np.load gives it as the "
        "harness stores it); strides are the harness's, in elements, as the kernel saw them");
    free(text);
    json_t *arrays = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(arrays, t[i].name, array_json(&t[i]));
    json_object_set_new(root, "arrays", arrays);
    json_object_set_new(root, "bound",
                        json_pack("{s:o, s:o, s:o, s:i, s:s, s:s}", "rel", num(rel), "c_max",
                                  num(gg_dtype_max(p->c_dtype)), "acc_max",
                                  num(GG_ORACLE_ACC_MAX), "thresholds_version",
                                  GG_THRESHOLDS_VERSION, "row", th->name, "rule",
                                  "|out - ref| <= rel*|out| + bound, per element"));
    const char *state = !v->done ? "running" : v->inputs_only ? "inputs" : "done";
    json_object_set_new(root, "state", json_string(state));
    if (v->done && !v->inputs_only) {
        json_object_set_new(root, "kernel", json_string(v->result->kernel));
        json_object_set_new(root, "mutant", json_string(v->result->mutant));
        json_object_set_new(root, "status", json_string(v->status == GG_OK ? "ok" : "error"));
        if (v->status != GG_OK)
            json_object_set_new(root, "error", json_string(v->error ? v->error : "failed"));
        if (v->status == GG_OK)
            json_object_set_new(root, "verdict", verdict_json(&v->result->verdict));
        if (v->status == GG_OK && v->result->compared && v->out)
            groups_json(root, v, bound, rel);
    }
    char *path = file_path(d, INDEX_NAME, "");
    enum gg_status st = GG_E_NOMEM;
    snprintf(err, err_len, "%s: out of memory", d->dir);
    if (root && path) {
        struct gg_atomic a;
        if ((st = gg_atomic_open(&a, path, "the dump's index", err, err_len)) == GG_OK) {
            if (json_dumpf(root, a.f, JSON_INDENT(1)) != 0)
                gg_atomic_fail(&a);
            st = gg_atomic_commit(&a, 0, err, err_len);
        }
        if (st == GG_OK)
            st = remember(d, path, err, err_len);
    }
    free(path);
    json_decref(root);
    return st;
}

/* ---- The observer -------------------------------------------------------------------------- */

/* src (reference order) in the output's logical order: the same but for moe, whose blocks list
   rows by sorted id. */
static void to_dense(const struct gg_problem *p, const double *src, double *dst, int64_t n)
{
    if (p->op != GG_OP_MOE_SORTED) {
        memcpy(dst, src, (size_t)n * sizeof *dst);
        return;
    }
    for (int64_t i = 0; i < n; i++) /* rows no expert holds, if any, stay NaN */
        dst[i] = NAN;
    int64_t pos = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        for (int64_t r = 0; r < b.rows; r++)
            for (int64_t col = 0; col < b.cols; col++)
                dst[(int64_t)b.row_map[r] * b.cols + col] = src[pos++];
    }
}

/* Removes the files an earlier dump into the directory left under names this one does not
   write, so that every file there is this dump's. */
static void remove_stale(const struct gg_report_dump *d, const struct array *t, size_t n)
{
    for (size_t i = 0; i < N_NAMES; i++) {
        int ours = 0;
        for (size_t j = 0; j < n && !ours; j++)
            ours = t[j].base && strcmp(t[j].name, ARRAY_NAMES[i]) == 0;
        char *path = ours ? NULL : file_path(d, ARRAY_NAMES[i], ".npy");
        if (path)
            unlink(path);
        free(path);
    }
}

enum gg_status gg_report_dump_observe(void *ctx, const struct gg_run_view *v, char *err,
                                      size_t err_len)
{
    struct gg_report_dump *d = ctx;
    const struct gg_problem *p = &v->t->p;
    int64_t n = gg_problem_out_elems(p);
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(double);
    double *bound = malloc(bytes), *dense[3] = {malloc(bytes), malloc(bytes), malloc(bytes)};
    double rel = 0.0;
    struct array t[16];
    enum gg_status st = GG_E_NOMEM;
    snprintf(err, err_len, "%s: out of memory for the dump's reference (%lld outputs)", d->dir,
             (long long)n);
    if (!bound || !dense[0] || !dense[1] || !dense[2])
        goto done;
    gg_oracle_bounds(p, v->ref, v->abs, bound, &rel);
    to_dense(p, v->ref, dense[0], n);
    to_dense(p, v->abs, dense[1], n);
    to_dense(p, bound, dense[2], n);
    size_t count = array_table(v, (const double **)dense, t);
    struct array *c = &t[count - 1];
    c->base = v->out;
    c->missing = !v->done ? "the kernel had not returned when the process ended" : v->no_out;
    if (gg_mkdir_p(d->dir) != 0) {
        snprintf(err, err_len, "%s: cannot create the dump's directory: %s", d->dir,
                 strerror(errno));
        st = GG_E_IO;
        goto done;
    }
    st = GG_OK;
    if (!d->arrays_written) { /* the inputs and the reference, once */
        remove_stale(d, t, count);
        for (size_t i = 0; i + 1 < count && st == GG_OK; i++)
            st = write_array(d, &t[i], err, err_len);
        d->arrays_written = st == GG_OK;
    }
    if (st == GG_OK && c->base)
        st = write_array(d, c, err, err_len);
    if (st == GG_OK)
        st = write_index(d, v, t, count, bound, rel, err, err_len);
    if (st != GG_OK)
        remove_written(d, err, err_len);
done:
    free(bound);
    for (int i = 0; i < 3; i++)
        free(dense[i]);
    return st;
}

void gg_report_dump_init(struct gg_report_dump *d, const char *dir, const char *case_path)
{
    memset(d, 0, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    d->case_path = case_path;
}

void gg_report_dump_free(struct gg_report_dump *d)
{
    gg_dir_list_free(d->written, d->n_written);
    d->written = NULL;
    d->n_written = 0;
}

enum gg_status gg_report_dump_finish(const struct gg_report_dump *d,
                                     const struct gg_report_case *rc, char *err, size_t err_len)
{
    char *path = file_path(d, INDEX_NAME, "");
    if (!path) {
        snprintf(err, err_len, "%s: out of memory", d->dir);
        return GG_E_NOMEM;
    }
    /* A process killed while it wrote leaves its temporary files; it is gone now. */
    gg_tmpfile_sweep(d->dir, ".npy");
    gg_tmpfile_sweep(d->dir, INDEX_NAME);
    json_t *root = access(path, F_OK) == 0 ? json_load_file(path, 0, NULL) : NULL;
    const char *state = json_string_value(json_object_get(root, "state"));
    enum gg_status st = GG_OK;
    if (state && strcmp(state, "running") == 0) {
        const struct gg_verdict *v = rc->status == GG_OK ? &rc->result->verdict : NULL;
        const char *why = v ? v->detail : rc->error ? rc->error : "the run failed";
        json_object_set_new(root, "state", json_string("ended"));
        json_object_set_new(root, "status", json_string(v ? "ok" : "error"));
        if (v)
            json_object_set_new(root, "verdict", verdict_json(v));
        else
            json_object_set_new(root, "error", json_string(why));
        if (rc->result) {
            json_object_set_new(root, "kernel", json_string(rc->result->kernel));
            json_object_set_new(root, "mutant", json_string(rc->result->mutant));
        }
        json_t *c = json_object_get(json_object_get(root, "arrays"), "c");
        json_object_set_new(c, "missing", json_string(why));
        struct gg_atomic a;
        if ((st = gg_atomic_open(&a, path, "the dump's index", err, err_len)) == GG_OK) {
            if (json_dumpf(root, a.f, JSON_INDENT(1)) != 0)
                gg_atomic_fail(&a);
            st = gg_atomic_commit(&a, 0, err, err_len);
        }
    }
    json_decref(root);
    free(path);
    return st;
}

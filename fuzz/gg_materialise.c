/*
 * gg_materialise.c — turns a case into buffers a kernel can run on: guarded host buffers for A,
 * B, C, the scales and the workspace; the "device" copies of the group arrays; inputs generated
 * row by row from the counter-based generator and quantised as the case's recipe says.
 *
 * Element (row, col) of an operand takes generator element row·rowlen + col of its stream, where
 * row counts rows across groups and batches: the data does not depend on leading dimensions,
 * offsets or which kernel runs. Rows of weights that belong to empty groups are never generated,
 * so a huge, mostly empty grouped problem only touches the memory of the groups that hold tokens.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/fuzz_int.h"

/* The rows of one operand: mats matrices of rows × rowlen, matrix i at i·mstride, row r at r·ld. */
struct rowset {
    int64_t mats, rows, rowlen, mstride, ld;
    int skip_empty_groups; /* matrix i is the weight of group i: skip it when the group is empty */
};

static struct rowset operand_rows(const struct gg_problem *p, int which)
{
    const int64_t one = 1;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        return which == 0 ? (struct rowset){one, p->m, p->k, 0, p->lda, 0}
                          : (struct rowset){p->groups, p->n, p->k, p->stride_b, p->ldb, 1};
    case GG_OP_GROUPED_DGRAD:
        return which == 0 ? (struct rowset){one, p->m, p->n, 0, p->lda, 0}
                          : (struct rowset){p->groups, p->n, p->k, p->stride_b, p->ldb, 1};
    case GG_OP_GROUPED_WGRAD:
        return which == 0 ? (struct rowset){one, p->m, p->n, 0, p->lda, 0}
                          : (struct rowset){one, p->m, p->k, 0, p->ldb, 0};
    case GG_OP_BATCHED:
        if (which == 0)
            return (struct rowset){p->groups, p->m, p->k, p->stride_a, p->lda, 0};
        return p->b_layout == GG_LAYOUT_KN
                   ? (struct rowset){p->groups, p->k, p->n, p->stride_b, p->ldb, 0}
                   : (struct rowset){p->groups, p->n, p->k, p->stride_b, p->ldb, 0};
    default:
        return which == 0 ? (struct rowset){one, p->m, p->k, 0, p->lda, 0}
                          : (struct rowset){one, p->n, p->k, 0, p->ldb, 0};
    }
}

static int mat_used(const struct gg_problem *p, const struct rowset *rs, int64_t i)
{
    return !rs->skip_empty_groups || p->group_lens[i] > 0;
}

static int is_quantised(enum gg_dtype t)
{
    return gg_dtype_is_float8(t) || t == GG_DTYPE_E2M1;
}

/* Per-operand generation recipe. */
struct recipe {
    const struct gg_dist *dist;
    enum gg_dtype dtype;
    uint64_t stream, scale_stream;
    void *data;        /* codes, laid out by the rowset */
    uint8_t *mx;       /* E8M0 scales, packed [logical rows][K/32], or NULL */
    float *tensor_scale_inv; /* or NULL */
    float *src;        /* unquantised values, packed, or NULL */
};

/* Calls fn on the source values of every used row. row_index is the logical row (across mats). */
typedef void (*row_fn)(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                       int64_t row_index, int64_t addr, const double *v, void *state);

static enum gg_status each_row(const struct gg_case *c, const struct gg_problem *p, int which,
                               const struct recipe *r, row_fn fn, void *state, char *err,
                               size_t err_len)
{
    struct rowset rs = operand_rows(p, which);
    double *v = malloc((size_t)(rs.rowlen > 0 ? rs.rowlen : 1) * sizeof *v);
    if (!v) {
        snprintf(err, err_len, "out of memory for a row of %lld values", (long long)rs.rowlen);
        return GG_E_NOMEM;
    }
    for (int64_t i = 0; i < rs.mats; i++) {
        if (!mat_used(p, &rs, i))
            continue;
        for (int64_t row = 0; row < rs.rows; row++) {
            int64_t logical = i * rs.rows + row;
            gg_dist_fill(r->dist, c->seed, r->stream, (uint64_t)(logical * rs.rowlen), rs.rowlen, v);
            fn(c, r, &rs, logical, i * rs.mstride + row * rs.ld, v, state);
        }
    }
    free(v);
    return GG_OK;
}

static void amax_row(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                     int64_t row_index, int64_t addr, const double *v, void *state)
{
    (void)c, (void)r, (void)row_index, (void)addr;
    double *amax = state; /* NaN once any value is NaN */
    for (int64_t j = 0; j < rs->rowlen && !isnan(*amax); j++)
        if (isnan(v[j]) || fabs(v[j]) > *amax)
            *amax = fabs(v[j]);
}

static void store_row(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                      int64_t row_index, int64_t addr, const double *v, void *state)
{
    const float *mult = state; /* tensor-wise quantisation multiplier, or NULL */
    if (r->src)
        for (int64_t j = 0; j < rs->rowlen; j++)
            r->src[row_index * rs->rowlen + j] = (float)v[j];
    if (r->mx) {
        int64_t blocks = rs->rowlen / GG_MX_BLOCK;
        for (int64_t b = 0; b < blocks; b++) {
            uint8_t scale;
            uint32_t codes[GG_MX_BLOCK];
            gg_mx_quantise_block(v + b * GG_MX_BLOCK, GG_MX_BLOCK, r->dtype, c->mx_rule, &scale,
                                 codes);
            int64_t si = row_index * blocks + b;
            uint8_t planted;
            if (c->plant_e8m0 > 0 &&
                gg_rng_plant_e8m0(c->seed, r->scale_stream, (uint64_t)si, c->plant_e8m0, &planted))
                scale = planted;
            r->mx[si] = scale;
            for (int j = 0; j < GG_MX_BLOCK; j++)
                gg_store_code(r->dtype, r->data, addr + b * GG_MX_BLOCK + j, codes[j]);
        }
        return;
    }
    double s = mult ? (double)*mult : 1.0;
    for (int64_t j = 0; j < rs->rowlen; j++)
        gg_store_code(r->dtype, r->data, addr + j, gg_encode(r->dtype, v[j] * s, c->quant_sat));
}

static enum gg_status fill_operand(const struct gg_case *c, const struct gg_problem *p, int which,
                                   struct recipe *r, char *err, size_t err_len)
{
    enum gg_status st;
    if (r->tensor_scale_inv) {
        double amax = 0;
        st = each_row(c, p, which, r, amax_row, &amax, err, err_len);
        if (st != GG_OK)
            return st;
        float s = gg_tensor_scale(amax, r->dtype);
        *r->tensor_scale_inv = (float)(1.0 / (double)s);
        return each_row(c, p, which, r, store_row, &s, err, err_len);
    }
    return each_row(c, p, which, r, store_row, NULL, err, err_len);
}

/* Allocates a guarded buffer for count elements of t after an offset of off elements. */
static enum gg_status operand_buf(struct gg_hostbuf *b, enum gg_dtype t, int64_t off,
                                  int64_t count, char *err, size_t err_len)
{
    return gg_hostbuf_alloc(b, (size_t)gg_dtype_bytes(t, off + count), err, err_len);
}

static void *at_offset(const struct gg_hostbuf *b, enum gg_dtype t, int64_t off)
{
    return b->data + gg_dtype_bytes(t, off);
}

static enum gg_status make_source(struct gg_tensors *t, char *err, size_t err_len)
{
    struct gg_problem *s = &t->src_p;
    *s = t->p;
    s->a_dtype = s->b_dtype = GG_DTYPE_F32;
    s->scaling = GG_SCALING_NONE;
    s->lda = s->ldb = s->ldc = 0;
    s->stride_a = s->stride_b = s->stride_c = 0;
    if (gg_problem_check(s, err, err_len) != GG_OK)
        return GG_E_INTERNAL;
    int64_t na = gg_problem_a_span(s), nb = gg_problem_b_span(s);
    t->src_a = calloc((size_t)(na > 0 ? na : 1), sizeof(float));
    t->src_b = calloc((size_t)(nb > 0 ? nb : 1), sizeof(float));
    if (!t->src_a || !t->src_b) {
        snprintf(err, err_len, "out of memory for the unquantised source operands");
        return GG_E_NOMEM;
    }
    t->src_ops = (struct gg_operands){.a = t->src_a, .b = t->src_b};
    return GG_OK;
}

/*
 * Records the page-rounded byte ranges of operand which that hold used rows, and makes the
 * whole pages between them read-only: they stay zero pages that cost no memory, a kernel that
 * writes there faults, and hashing can skip them.
 */
static enum gg_status protect_unused(struct gg_tensors *t, int which, const struct gg_hostbuf *buf,
                                     char *err, size_t err_len)
{
    const struct gg_problem *p = &t->p;
    enum gg_dtype dt = which ? p->b_dtype : p->a_dtype;
    const uint8_t *base = which ? t->ops.b : t->ops.a;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), skip = (size_t)(base - buf->data);
    struct rowset rs = operand_rows(p, which);
    struct gg_range *live = malloc((size_t)(rs.mats > 0 ? rs.mats : 1) * sizeof *live);
    if (!live) {
        snprintf(err, err_len, "out of memory for %lld ranges", (long long)rs.mats);
        return GG_E_NOMEM;
    }
    size_t n = 0;
    for (int64_t i = 0; i < rs.mats; i++) {
        if (!mat_used(p, &rs, i) || rs.rows == 0 || rs.rowlen == 0)
            continue;
        int64_t first = i * rs.mstride, end = first + (rs.rows - 1) * rs.ld + rs.rowlen;
        size_t lo = (skip + (size_t)gg_dtype_bytes(dt, first)) / page * page;
        size_t hi = (skip + (size_t)gg_dtype_bytes(dt, end) + page - 1) / page * page;
        if (n > 0 && lo <= live[n - 1].hi)
            live[n - 1].hi = hi;
        else
            live[n++] = (struct gg_range){lo, hi};
    }
    t->live[which] = live;
    t->n_live[which] = n;
    /* Gaps of whole pages inside the data; the last partial page shares the canary band. */
    size_t data_end = buf->bytes / page * page, at = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t gap_end = i < n ? live[i].lo : data_end;
        if (gap_end > data_end)
            gap_end = data_end;
        if (gap_end > at && mprotect(buf->data + at, gap_end - at, PROT_READ) != 0) {
            snprintf(err, err_len, "cannot protect unused input pages");
            return GG_E_INTERNAL;
        }
        if (i < n && live[i].hi > at)
            at = live[i].hi;
    }
    return GG_OK;
}

enum gg_status gg_tensors_make(const struct gg_case *c, size_t workspace_bytes,
                               struct gg_tensors *t, char *err, size_t err_len)
{
    memset(t, 0, sizeof *t);
    gg_case_problem(c, t->opts, &t->p);
    enum gg_status st = gg_problem_check(&t->p, err, err_len);
    if (st != GG_OK)
        return st;
    struct gg_problem *p = &t->p;
    int64_t na = gg_problem_a_span(p), nb = gg_problem_b_span(p), nc = gg_problem_c_span(p);
    if ((st = operand_buf(&t->a, p->a_dtype, c->off_a, na, err, err_len)) != GG_OK ||
        (st = operand_buf(&t->b, p->b_dtype, c->off_b, nb, err, err_len)) != GG_OK ||
        (st = operand_buf(&t->c, p->c_dtype, c->off_c, nc, err, err_len)) != GG_OK)
        return st;
    t->c_bytes = (size_t)gg_dtype_bytes(p->c_dtype, nc);
    int64_t nsa = gg_problem_a_scale_count(p), nsb = gg_problem_b_scale_count(p);
    size_t scale_size = p->scaling == GG_SCALING_TENSOR ? sizeof(float) : 1;
    if ((st = gg_hostbuf_alloc(&t->a_scale, (size_t)nsa * scale_size, err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(&t->b_scale, (size_t)nsb * scale_size, err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(&t->ws, workspace_bytes, err, err_len)) != GG_OK)
        return st;
    if (p->group_lens) {
        size_t g = (size_t)p->groups;
        t->lens_dev = malloc(g * sizeof(int64_t));
        t->offs_dev = malloc((g + 1) * sizeof(int64_t));
        if (!t->lens_dev || !t->offs_dev) {
            snprintf(err, err_len, "out of memory for %zu group entries", g);
            return GG_E_NOMEM;
        }
        memcpy(t->lens_dev, p->group_lens, g * sizeof(int64_t));
        memcpy(t->offs_dev, p->group_offs, (g + 1) * sizeof(int64_t));
    }
    t->ops = (struct gg_operands){
        .a = at_offset(&t->a, p->a_dtype, c->off_a),
        .b = at_offset(&t->b, p->b_dtype, c->off_b),
        .c = at_offset(&t->c, p->c_dtype, c->off_c),
        .a_scale = nsa ? t->a_scale.data : NULL,
        .b_scale = nsb ? t->b_scale.data : NULL,
        .workspace = workspace_bytes ? t->ws.data : NULL,
        .workspace_bytes = workspace_bytes,
        .group_lens_dev = t->lens_dev,
        .group_offs_dev = t->offs_dev,
    };
    if (is_quantised(p->a_dtype) || is_quantised(p->b_dtype))
        if ((st = make_source(t, err, err_len)) != GG_OK)
            return st;
    const enum gg_dtype types[2] = {p->a_dtype, p->b_dtype};
    struct gg_dist dists[2] = {c->dist_a, c->dist_b}; /* generated for the operand's format */
    dists[0].fmt = types[0];
    dists[1].fmt = types[1];
    struct gg_hostbuf *scales[2] = {&t->a_scale, &t->b_scale};
    void *data[2] = {(void *)t->ops.a, (void *)t->ops.b};
    float *src[2] = {t->src_a, t->src_b};
    for (int w = 0; w < 2; w++) {
        struct recipe r = {
            .dist = &dists[w],
            .dtype = types[w],
            .stream = w == 0 ? GG_STREAM_A : GG_STREAM_B,
            .scale_stream = w == 0 ? GG_STREAM_A_SCALE : GG_STREAM_B_SCALE,
            .data = data[w],
            .mx = p->scaling == GG_SCALING_MX ? scales[w]->data : NULL,
            .tensor_scale_inv = p->scaling == GG_SCALING_TENSOR ? (float *)scales[w]->data : NULL,
            .src = src[w],
        };
        if ((st = fill_operand(c, p, w, &r, err, err_len)) != GG_OK ||
            (st = protect_unused(t, w, w == 0 ? &t->a : &t->b, err, err_len)) != GG_OK)
            return st;
    }
    return GG_OK;
}

struct gg_hash gg_tensors_hash_inputs(const struct gg_tensors *t)
{
    struct gg_hash parts[64];
    size_t n = 0;
    const struct gg_hostbuf *ops[2] = {&t->a, &t->b};
    for (int w = 0; w < 2; w++) {
        /* Fold each operand's ranges into one part so the array stays bounded. */
        struct gg_hash acc = {0, 0};
        for (size_t i = 0; i < t->n_live[w]; i++) {
            const struct gg_range *r = &t->live[w][i];
            size_t hi = r->hi < ops[w]->bytes ? r->hi : ops[w]->bytes;
            struct gg_hash h = hi > r->lo ? gg_oracle_hash(ops[w]->data + r->lo, hi - r->lo)
                                          : (struct gg_hash){0, 0};
            struct gg_hash pair[2] = {acc, h};
            acc = gg_oracle_hash(pair, sizeof pair);
        }
        parts[n++] = acc;
    }
    parts[n++] = gg_oracle_hash(t->a_scale.data, t->a_scale.bytes);
    parts[n++] = gg_oracle_hash(t->b_scale.data, t->b_scale.bytes);
    if (t->lens_dev) {
        size_t g = (size_t)t->p.groups;
        parts[n++] = gg_oracle_hash(t->lens_dev, g * sizeof(int64_t));
        parts[n++] = gg_oracle_hash(t->offs_dev, (g + 1) * sizeof(int64_t));
    }
    return gg_oracle_hash(parts, n * sizeof parts[0]);
}

void gg_tensors_poison(struct gg_tensors *t, uint8_t ws_poison)
{
    enum gg_dtype ct = t->p.c_dtype;
    uint32_t s = gg_oracle_sentinel(ct);
    int64_t nc = gg_problem_c_span(&t->p);
    for (int64_t i = 0; i < nc; i++)
        gg_store_code(ct, t->ops.c, i, s);
    if (t->ops.workspace)
        memset(t->ops.workspace, ws_poison, t->ops.workspace_bytes);
}

void gg_tensors_free(struct gg_tensors *t)
{
    struct gg_hostbuf *bufs[] = {&t->a, &t->b, &t->c, &t->a_scale, &t->b_scale, &t->ws};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        gg_hostbuf_free(bufs[i]);
    free(t->lens_dev);
    free(t->offs_dev);
    free(t->src_a);
    free(t->src_b);
    free(t->live[0]);
    free(t->live[1]);
    memset(t, 0, sizeof *t);
}

/* Bytes of the used rows of one operand in dtype t. */
static int64_t used_bytes(const struct gg_problem *p, int which, enum gg_dtype t)
{
    struct rowset rs = operand_rows(p, which);
    int64_t used = 0;
    for (int64_t i = 0; i < rs.mats; i++)
        used += mat_used(p, &rs, i) ? rs.rows : 0;
    return gg_dtype_bytes(t, used * rs.ld);
}

int64_t gg_tensors_estimate(const struct gg_case *c)
{
    struct gg_tensors t;
    memset(&t, 0, sizeof t);
    char err[256];
    gg_case_problem(c, t.opts, &t.p);
    if (gg_problem_check(&t.p, err, sizeof err) != GG_OK)
        return 0;
    const struct gg_problem *p = &t.p;
    int64_t bytes = used_bytes(p, 0, p->a_dtype) + used_bytes(p, 1, p->b_dtype) +
                    gg_dtype_bytes(p->c_dtype, gg_problem_c_span(p)) * 2 /* C and its copy */ +
                    gg_problem_a_scale_count(p) + gg_problem_b_scale_count(p);
    if (is_quantised(p->a_dtype) || is_quantised(p->b_dtype))
        bytes += 4 * (gg_problem_a_span(p) + gg_problem_b_span(p));
    return bytes + 6 * 3 * GG_CANARY_BYTES;
}

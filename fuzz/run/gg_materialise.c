/*
 * gg_materialise.c — turns a case into buffers a kernel can run on: the problem and its moe
 * routing, guarded host buffers for A, B, C, the scales and the workspace, the "device" copies of
 * the group arrays, the unquantised source operands, and the inputs filled by the host generator
 * (gg_hostgen.c) unless the device generates them. Which rows of each operand exist is decided
 * here: rows of weights that belong to empty groups are never generated and their pages never
 * touched, so a huge, mostly empty grouped problem only touches the memory of the groups that
 * hold tokens. Also the hash of the inputs and the memory estimate of a run.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

/* The rows of C a kernel writes: every group's block (a wgrad group without tokens too: its dW
   is zeros), every (token, slot) row of a moe output. */
static struct rowset output_rows(const struct gg_problem *p)
{
    const int64_t one = 1;
    switch (p->op) {
    case GG_OP_GROUPED_FWD: return (struct rowset){one, p->m, p->n, 0, p->ldc, 0};
    case GG_OP_GROUPED_DGRAD: return (struct rowset){one, p->m, p->k, 0, p->ldc, 0};
    case GG_OP_GROUPED_WGRAD: return (struct rowset){p->groups, p->n, p->k, p->stride_c, p->ldc, 0};
    case GG_OP_BATCHED: return (struct rowset){p->groups, p->m, p->n, p->stride_c, p->ldc, 0};
    case GG_OP_MOE_SORTED: return (struct rowset){one, p->m * p->topk, p->n, 0, p->ldc, 0};
    default: return (struct rowset){one, p->m, p->n, 0, p->ldc, 0};
    }
}

/* The rows of A (which 0), B (1) or C (2). */
struct rowset gg_operand_rows(const struct gg_problem *p, int which)
{
    const int64_t one = 1;
    if (which == 2)
        return output_rows(p);
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
    case GG_OP_MOE_SORTED: /* X [T, K], W [E, N, K]: experts without tokens are skipped */
        return which == 0 ? (struct rowset){one, p->m, p->k, 0, p->lda, 0}
                          : (struct rowset){p->groups, p->n, p->k, p->stride_b, p->ldb, 1};
    default:
        return which == 0 ? (struct rowset){one, p->m, p->k, 0, p->lda, 0}
                          : (struct rowset){one, p->n, p->k, 0, p->ldb, 0};
    }
}

int gg_mat_used(const struct gg_problem *p, const struct rowset *rs, int64_t i)
{
    return !rs->skip_empty_groups || p->group_lens[i] > 0;
}

static int is_quantised(enum gg_dtype t)
{
    return gg_dtype_is_float8(t) || t == GG_DTYPE_E2M1;
}

/* Allocates a guarded buffer for count elements of t after an offset of off elements, placed
   as guard says; a failure names the operand. */
static enum gg_status operand_buf(struct gg_hostpool *pool, struct gg_hostbuf *b, char name,
                                  enum gg_guard guard, enum gg_dtype t, int64_t off, int64_t count,
                                  char *err, size_t err_len)
{
    char why[256];
    size_t bytes = (size_t)gg_dtype_bytes(t, gg_size_add(off, count));
    enum gg_status st = guard == GG_GUARD_BAND
                            ? gg_hostbuf_alloc(pool, b, bytes, why, sizeof why)
                            : gg_hostbuf_alloc_flush(pool, b, bytes, guard == GG_GUARD_END, why,
                                                     sizeof why);
    if (st != GG_OK)
        snprintf(err, err_len, "operand %c (%lld elements at offset %lld): %s", name,
                 (long long)count, (long long)off, why);
    return st;
}

static void *at_offset(const struct gg_hostbuf *b, enum gg_dtype t, int64_t off)
{
    return b->data + gg_dtype_bytes(t, off);
}

static int zero_mean_normal(const struct gg_dist *d)
{
    return d->kind == GG_DIST_NORMAL && d->p[0] == 0.0;
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
    t->has_source = 1;
    if (t->inputs_on_device) /* the device target generates the source beside the inputs */
        return GG_OK;
    /* Reserved like the operands: only the pages of the rows that hold data are touched. */
    int64_t na = gg_problem_a_span(s), nb = gg_problem_b_span(s);
    enum gg_status st;
    if ((st = gg_hostbuf_alloc(t->pool, &t->src_buf[0], (size_t)gg_dtype_bytes(GG_DTYPE_F32, na),
                               err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(t->pool, &t->src_buf[1], (size_t)gg_dtype_bytes(GG_DTYPE_F32, nb),
                               err, err_len)) != GG_OK)
        return st;
    t->src_a = t->src_buf[0].data;
    t->src_b = t->src_buf[1].data;
    t->src_ops = (struct gg_operands){.a = t->src_a, .b = t->src_b, .bias = t->ops.bias};
    return GG_OK;
}

/*
 * Records the page-rounded byte ranges of operand which (A, B or C) that hold used rows, and
 * protects the whole pages between them with prot: they stay untouched pages that cost no
 * memory, and hashing, the sentinel fill and the padding check skip them. Inputs get PROT_READ
 * (a kernel that writes there faults, a stray read sees zeros), the output PROT_NONE (any access
 * between its rows faults).
 */
static enum gg_status protect_unused(struct gg_tensors *t, int which, struct gg_hostbuf *buf,
                                     int prot, char *err, size_t err_len)
{
    const struct gg_problem *p = &t->p;
    enum gg_dtype dt = which == 2 ? p->c_dtype : which ? p->b_dtype : p->a_dtype;
    const uint8_t *base = which == 2 ? t->ops.c : which ? t->ops.b : t->ops.a;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), skip = (size_t)(base - buf->data);
    /* Pages are counted from the page holding the data's first byte: lead bytes before it (a
       buffer placed flush against its end guard need not start on a page). */
    size_t lead = (size_t)((uintptr_t)buf->data % page);
    struct rowset rs = gg_operand_rows(p, which);
    struct gg_range *live = NULL;
    size_t n = 0, cap = 0;
    /* One range per row when rows lie more than a page apart, else one per matrix. */
    int per_row = gg_dtype_bytes(dt, rs.ld - rs.rowlen) > (int64_t)page;
    for (int64_t i = 0; i < rs.mats; i++) {
        if (!gg_mat_used(p, &rs, i) || rs.rows == 0 || rs.rowlen == 0)
            continue;
        for (int64_t r = 0; r < (per_row ? rs.rows : 1); r++) {
            int64_t first = i * rs.mstride + r * rs.ld;
            int64_t end = per_row ? first + rs.rowlen : first + (rs.rows - 1) * rs.ld + rs.rowlen;
            size_t lo = (lead + skip + (size_t)gg_dtype_bytes(dt, first)) / page * page;
            size_t hi = (lead + skip + (size_t)gg_dtype_bytes(dt, end) + page - 1) / page * page;
            lo = lo > lead ? lo - lead : 0; /* back to offsets from the data */
            hi -= lead;
            if (n > 0 && lo <= live[n - 1].hi) {
                live[n - 1].hi = hi > live[n - 1].hi ? hi : live[n - 1].hi;
                continue;
            }
            if (n == cap) {
                struct gg_range *grown = realloc(live, (cap = cap ? 2 * cap : 16) * sizeof *live);
                if (!grown) {
                    free(live);
                    snprintf(err, err_len, "out of memory for the live ranges of an operand");
                    return GG_E_NOMEM;
                }
                live = grown;
            }
            live[n++] = (struct gg_range){lo, hi};
        }
    }
    t->live[which] = live;
    t->n_live[which] = n;
    /* Gaps of whole pages inside the data, counted from the page holding its first byte (q);
       partial pages at either end share a canary band. */
    uint8_t *page0 = buf->data - lead;
    size_t q_end = (lead + buf->bytes) / page * page, at = lead ? page : 0;
    for (size_t i = 0; i <= n && q_end > at; i++) {
        size_t gap_end = i < n ? live[i].lo + lead : q_end;
        if (gap_end > q_end)
            gap_end = q_end;
        if (gap_end > at) {
            if (mprotect(page0 + at, gap_end - at, prot) != 0) {
                snprintf(err, err_len, "cannot protect the unused pages of %s",
                         which == 2 ? "the output" : "an input");
                return GG_E_INTERNAL;
            }
            buf->sealed = 1;
        }
        if (i < n && live[i].hi + lead > at)
            at = live[i].hi + lead;
    }
    return GG_OK;
}

struct gg_hash gg_tensors_hash_inputs(const struct gg_tensors *t)
{
    struct gg_hash parts[16];
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
    parts[n++] = gg_oracle_hash(t->bias.data, t->bias.bytes);
    if (t->lens_dev) {
        size_t g = (size_t)t->p.groups;
        parts[n++] = gg_oracle_hash(t->lens_dev, g * sizeof(int64_t));
        parts[n++] = gg_oracle_hash(t->offs_dev, (g + 1) * sizeof(int64_t));
    }
    if (t->sorted_dev) {
        size_t len = (size_t)t->p.sorted_len;
        parts[n++] = gg_oracle_hash(t->sorted_dev, len * sizeof(int32_t));
        parts[n++] = gg_oracle_hash(t->experts_dev, len / (size_t)t->p.block_m * sizeof(int32_t));
    }
    return gg_oracle_hash(parts, n * sizeof parts[0]);
}

/*
 * The fused-MoE routing of a moe_sorted case: the m·topk (token, slot) ids are shuffled
 * (Fisher-Yates on the routing stream) and dealt to the experts in order, group_lens[e] each;
 * every expert's ids are sorted and padded with the out-of-range id m·topk to a multiple of
 * block_m, one expert id per block. Experts without tokens get no block.
 */
/* Sorted entries of the routing: every expert's load padded to a multiple of block_m
   (saturating; the moe case check bounds it by 2^40). */
static int64_t routing_entries(const struct gg_problem *p)
{
    int64_t len = 0;
    for (int64_t e = 0; e < p->groups; e++) {
        int64_t blocks = p->group_lens[e] / p->block_m + (p->group_lens[e] % p->block_m != 0);
        len = gg_size_add(len, gg_size_mul(blocks, p->block_m));
    }
    return len;
}

/* Host bytes of the routing: the shuffle of the m·topk ids, the sorted ids and the expert ids,
   each twice (the harness's copy and the kernel's). */
static int64_t routing_bytes(const struct gg_problem *p)
{
    if (p->op != GG_OP_MOE_SORTED)
        return 0;
    int64_t len = routing_entries(p), ids = gg_size_add(len, len / p->block_m + 1);
    return gg_size_mul(4, gg_size_add(p->m * p->topk, gg_size_mul(2, ids)));
}

static enum gg_status make_routing(const struct gg_case *c, struct gg_tensors *t, char *err,
                                   size_t err_len)
{
    struct gg_problem *p = &t->p;
    int64_t pairs = p->m * p->topk, len = routing_entries(p);
    int32_t *perm = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *perm);
    t->sorted = malloc((size_t)(len > 0 ? len : 1) * sizeof *t->sorted);
    t->experts = malloc((size_t)(len / p->block_m + 1) * sizeof *t->experts);
    t->sorted_dev = malloc((size_t)(len > 0 ? len : 1) * sizeof *t->sorted_dev);
    t->experts_dev = malloc((size_t)(len / p->block_m + 1) * sizeof *t->experts_dev);
    if (!perm || !t->sorted || !t->experts || !t->sorted_dev || !t->experts_dev) {
        free(perm);
        snprintf(err, err_len, "out of memory for the routing of %lld entries", (long long)len);
        return GG_E_NOMEM;
    }
    for (int64_t i = 0; i < pairs; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = pairs - 1; i > 0; i--) {
        int64_t j = (int64_t)(gg_rng_uniform(c->seed, GG_STREAM_ROUTING, (uint64_t)i, 0) * (double)(i + 1));
        int32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    int64_t at = 0, dealt = 0;
    for (int64_t e = 0; e < p->groups; e++) {
        int64_t n = p->group_lens[e], padded = (n + p->block_m - 1) / p->block_m * p->block_m;
        if (dealt + n > pairs) /* loads that exceed m·topk: gg_problem_check reports it */
            n = padded = 0;
        for (int64_t i = 0; i < padded; i++)
            t->sorted[at + i] = i < n ? perm[dealt + i] : (int32_t)pairs;
        for (int64_t i = 1; i < n; i++) /* insertion sort: ids ascending within the expert */
            for (int64_t j = at + i; j > at && t->sorted[j - 1] > t->sorted[j]; j--) {
                int32_t x = t->sorted[j];
                t->sorted[j] = t->sorted[j - 1];
                t->sorted[j - 1] = x;
            }
        for (int64_t blk = at / p->block_m; blk < (at + padded) / p->block_m; blk++)
            t->experts[blk] = (int32_t)e;
        at += padded;
        dealt += n;
    }
    free(perm);
    memcpy(t->sorted_dev, t->sorted, (size_t)at * sizeof *t->sorted);
    memcpy(t->experts_dev, t->experts, (size_t)(at / p->block_m) * sizeof *t->experts);
    p->sorted_len = at;
    p->sorted_ids = t->sorted;
    p->expert_ids = t->experts;
    return GG_OK;
}

/* bias[mats][N] from the bias distribution, encoded in the bias dtype: drawn a chunk at a time
   (gg_dist_fill, the values gg_dist_sample gives element by element), since a GPU kernel's bias
   is generated here while its operands are generated on the device. */
static void fill_bias(const struct gg_case *c, const struct gg_problem *p, void *bias)
{
    enum { CHUNK = 1024 };
    double v[CHUNK];
    struct gg_dist d = c->dist_bias;
    d.fmt = p->bias_dtype;
    int64_t n = gg_problem_bias_count(p);
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        gg_dist_fill(&d, c->seed, GG_STREAM_BIAS, (uint64_t)i0, m, v);
        for (int64_t j = 0; j < m; j++)
            gg_store_code(p->bias_dtype, bias, i0 + j,
                          gg_encode(p->bias_dtype, v[j], GG_SAT_FINITE));
    }
}

/* Copies n elements of size sz into a fresh allocation at *dst (the kernel's own copy). */
static int dup_array(void *dst_ptr, const void *src, size_t n, size_t sz)
{
    void **dst = dst_ptr;
    *dst = malloc(n ? n * sz : 1);
    if (*dst && n)
        memcpy(*dst, src, n * sz);
    return *dst != NULL;
}

enum gg_status gg_tensors_shape(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len)
{
    memset(t, 0, sizeof *t);
    gg_case_problem(c, t->opts, &t->p);
    return gg_problem_check_geometry(&t->p, err, err_len);
}

enum gg_status gg_tensors_route(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len)
{
    enum gg_status st;
    if (t->p.op == GG_OP_MOE_SORTED && (st = make_routing(c, t, err, err_len)) != GG_OK)
        return st;
    return gg_problem_check(&t->p, err, err_len);
}

enum gg_status gg_tensors_plan(const struct gg_case *c, struct gg_tensors *t, char *err,
                               size_t err_len)
{
    enum gg_status st = gg_tensors_shape(c, t, err, err_len);
    return st == GG_OK ? gg_tensors_route(c, t, err, err_len) : st;
}

enum gg_status gg_tensors_make(const struct gg_case *c, size_t workspace_bytes,
                               struct gg_tensors *t, char *err, size_t err_len)
{
    struct gg_problem *p = &t->p;
    enum gg_status st;
    int64_t na = gg_problem_a_span(p), nb = gg_problem_b_span(p), nc = gg_problem_c_span(p);
    t->guard = c->guard;
    if ((st = operand_buf(t->pool, &t->a, 'A', c->guard, p->a_dtype, c->off_a, na, err, err_len)) != GG_OK ||
        (st = operand_buf(t->pool, &t->b, 'B', c->guard, p->b_dtype, c->off_b, nb, err, err_len)) != GG_OK ||
        (st = operand_buf(t->pool, &t->c, 'C', GG_GUARD_BAND, p->c_dtype, c->off_c, nc, err, err_len)) != GG_OK)
        return st;
    t->c_bytes = (size_t)gg_dtype_bytes(p->c_dtype, nc);
    gg_faultnote_watch(0, &t->a);
    gg_faultnote_watch(1, &t->b);
    gg_faultnote_watch(2, &t->c);
    int64_t nsa = gg_problem_a_scale_count(p), nsb = gg_problem_b_scale_count(p);
    int mx_a = p->scaling == GG_SCALING_MX, mx_b = mx_a || p->scaling == GG_SCALING_MX_B;
    int64_t nbias = gg_problem_bias_count(p);
    if ((st = gg_hostbuf_alloc(t->pool, &t->a_scale, (size_t)gg_size_mul(nsa, mx_a ? 1 : 4), err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(t->pool, &t->b_scale, (size_t)gg_size_mul(nsb, mx_b ? 1 : 4), err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(t->pool, &t->bias, (size_t)gg_dtype_bytes(p->bias_dtype, nbias), err, err_len)) != GG_OK ||
        (st = gg_hostbuf_alloc(t->pool, &t->ws, workspace_bytes, err, err_len)) != GG_OK)
        return st;
    if (p->group_lens && (!dup_array(&t->lens_dev, p->group_lens, (size_t)p->groups, sizeof(int64_t)) ||
                          !dup_array(&t->offs_dev, p->group_offs, (size_t)p->groups + 1, sizeof(int64_t)))) {
        snprintf(err, err_len, "out of memory for %lld group entries", (long long)p->groups);
        return GG_E_NOMEM;
    }
    t->ops = (struct gg_operands){
        .a = at_offset(&t->a, p->a_dtype, c->off_a),
        .b = at_offset(&t->b, p->b_dtype, c->off_b),
        .c = at_offset(&t->c, p->c_dtype, c->off_c),
        .a_scale = nsa ? t->a_scale.data : NULL,
        .b_scale = nsb ? t->b_scale.data : NULL,
        .bias = nbias ? t->bias.data : NULL,
        .workspace = workspace_bytes ? t->ws.data : NULL,
        .workspace_bytes = workspace_bytes,
        .group_lens_dev = t->lens_dev,
        .group_offs_dev = t->offs_dev,
        .sorted_ids_dev = t->sorted_dev,
        .expert_ids_dev = t->experts_dev,
    };
    if (nbias)
        fill_bias(c, p, t->bias.data);
    /* The unquantised source is what the quantised inputs approximate. Its thresholds were
       calibrated on zero-mean normal data (docs/checks.md §4): other recipes (constants, near-max
       values, planted scale codes) quantise worse by design, so they get no source check. */
    if ((is_quantised(p->a_dtype) || is_quantised(p->b_dtype)) &&
        c->plant_e8m0 == 0 &&
        zero_mean_normal(&c->dist_a) && zero_mean_normal(&c->dist_b))
        if ((st = make_source(t, err, err_len)) != GG_OK)
            return st;
    struct gg_hostbuf *scales[2] = {&t->a_scale, &t->b_scale};
    void *data[2] = {(void *)t->ops.a, (void *)t->ops.b};
    float *src[2] = {t->src_a, t->src_b};
    for (int w = 0; w < 2; w++) {
        const struct gg_gen_plan *g = &t->gen[w];
        gg_hostgen_plan(c, p, w, &t->gen[w]);
        struct recipe r = {
            .dist = &g->dist,
            .dtype = g->dtype,
            .stream = g->stream,
            .scale_stream = g->scale_stream,
            .data = data[w],
            .q = g->quant,
            .per_mat = g->per_mat,
            .scales = scales[w]->data,
            .src = src[w],
            .plan = g,
        };
        if ((!t->inputs_on_device && (st = gg_hostgen_fill(c, p, w, &r, err, err_len)) != GG_OK) ||
            (st = protect_unused(t, w, w == 0 ? &t->a : &t->b, PROT_READ, err, err_len)) != GG_OK)
            return st;
    }
    return protect_unused(t, 2, &t->c, PROT_NONE, err, err_len);
}

void gg_tensors_free(struct gg_tensors *t)
{
    gg_faultnote_clear();
    struct gg_hostbuf *bufs[] = {&t->a,    &t->b,  &t->c,          &t->a_scale,   &t->b_scale,
                                 &t->bias, &t->ws, &t->src_buf[0], &t->src_buf[1]};
    struct gg_hostpool *pool = t->pool;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        gg_hostbuf_free(pool, bufs[i]);
    free(t->lens_dev);
    free(t->offs_dev);
    for (int w = 0; w < 3; w++)
        free(t->live[w]);
    free(t->sorted);
    free(t->experts);
    free(t->sorted_dev);
    free(t->experts_dev);
    memset(t, 0, sizeof *t);
}

/* Bytes of the used rows of one operand in dtype t: rows more than a page apart touch only
   their own pages (see protect_unused), closer rows the whole leading dimension. */
static int64_t used_bytes(const struct gg_problem *p, int which, enum gg_dtype t)
{
    struct rowset rs = gg_operand_rows(p, which);
    int64_t used = 0, page = sysconf(_SC_PAGESIZE);
    if (!rs.skip_empty_groups) /* every matrix is used: a batch count may be past 2^40 */
        used = gg_size_mul(rs.mats, rs.rows);
    for (int64_t i = 0; rs.skip_empty_groups && i < rs.mats; i++)
        used = gg_size_add(used, gg_mat_used(p, &rs, i) ? rs.rows : 0);
    int64_t gap = gg_dtype_bytes(t, rs.ld - rs.rowlen);
    int64_t row = gap > page ? gg_size_add(gg_dtype_bytes(t, rs.rowlen), page)
                             : gg_dtype_bytes(t, rs.ld);
    return gg_size_mul(used, row);
}

/* The output block of group g as gg_problem_out_block() gives it once the routing exists (an
   expert's block has as many rows as its load). */
static void sized_block(const struct gg_problem *p, int64_t g, struct gg_out_block *b)
{
    gg_problem_out_block(p, g, b);
    if (p->op == GG_OP_MOE_SORTED)
        b->rows = p->group_lens[g];
}

int64_t gg_tensors_estimate(const struct gg_tensors *t)
{
    const struct gg_problem *p = &t->p;
    int quantised = is_quantised(p->a_dtype) || is_quantised(p->b_dtype);
    /* Inputs generated on the device (and their reference computed there) touch no host page
       of A, B or the source, and need neither decode buffers nor a generation cache. */
    int host = !t->inputs_on_device;
    quantised = quantised && host;
    const int64_t terms[] = {
        host ? used_bytes(p, 0, p->a_dtype) : 0,
        host ? used_bytes(p, 1, p->b_dtype) : 0,
        gg_size_mul(2, used_bytes(p, 2, p->c_dtype)), /* C and its copy: written rows only */
        gg_size_mul(4, gg_size_add(gg_problem_a_scale_count(p), gg_problem_b_scale_count(p))),
        gg_dtype_bytes(p->bias_dtype, gg_problem_bias_count(p)),
        8 * 3 * GG_CANARY_BYTES,
        routing_bytes(p),
        /* the unquantised source operands in f32: pages of used rows only */
        quantised ? used_bytes(p, 0, GG_DTYPE_F32) : 0,
        quantised ? used_bytes(p, 1, GG_DTYPE_F32) : 0,
    };
    int64_t bytes = 0;
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        bytes = gg_size_add(bytes, terms[i]);
    /* Reference: c and |a||b| in double, plus the source product for quantised inputs, and
       the scratch of the group that needs most (gg_ref_gemm_scratch: buffers reused from group
       to group). */
    int64_t out = 0, gather = 0, largest = 0;
    /* The blocks of a batched problem are alike: one stands for all (a batch count may be
       past 2^40). */
    int64_t alike = p->op == GG_OP_BATCHED ? p->groups : 1;
    for (int64_t g = 0; g < (alike > 1 ? 1 : p->groups); g++) {
        struct gg_out_block b;
        sized_block(p, g, &b);
        out = gg_size_add(out, gg_size_mul(alike, gg_size_mul(b.rows, b.cols)));
        largest = b.rows * b.cols > largest ? b.rows * b.cols : largest;
        int64_t need = gg_ref_gemm_scratch(b.rows, b.cols, b.red, gg_ref_thread_count());
        gather = host && need > gather ? need : gather;
    }
    /* Generation: tensor scaling keeps the values of one scaled tensor (a matrix of B per
       expert, all of A) between its two passes, up to ROWCACHE_MAX_VALUES doubles. */
    int64_t cache = 0;
    if (host && (p->scaling == GG_SCALING_TENSOR || p->scaling == GG_SCALING_BLOCK128)) {
        for (int w = p->scaling == GG_SCALING_TENSOR ? 0 : 1; w < 2; w++) {
            struct rowset rs = gg_operand_rows(p, w);
            int64_t values = gg_size_mul(w ? rs.rows : gg_size_mul(rs.mats, rs.rows), rs.rowlen);
            values = values < ROWCACHE_MAX_VALUES ? values : ROWCACHE_MAX_VALUES;
            cache = values > cache ? values : cache;
        }
    }
    int source = is_quantised(p->a_dtype) || is_quantised(p->b_dtype);
    /* A reference on the device comes over a run of groups at a time, into two chunks in
       turn (one is compared while the next is computed). */
    int64_t run = largest > GG_REF_RUN_OUTPUTS ? largest : GG_REF_RUN_OUTPUTS;
    out = host || out <= run ? out : gg_size_mul(2, run);
    return gg_size_add(gg_size_add(gg_size_add(bytes, gather), gg_size_mul(8, cache)),
                       gg_size_mul(8 * (source ? 3 : 2), out));
}

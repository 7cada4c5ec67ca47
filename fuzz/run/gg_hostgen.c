/*
 * gg_hostgen.c — a run's inputs generated on the host: row by row from the counter-based
 * generator, over the reference's threads, and quantised as the case's recipe says (plain,
 * tensor scaling in two passes, MX and block128 blocks, grids of rowwise and blockwise scales);
 * and the generation plan of each operand, from which the device generator produces the same
 * codes and scales.
 *
 * Element (row, col) of an operand takes generator element row·rowlen + col of its stream, where
 * row counts rows across groups and batches: the data does not depend on leading dimensions,
 * offsets or which kernel runs. Rows of weights that belong to empty groups are never generated.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/run_int.h"

/* Values of the used rows of matrices [m0, m1), kept between the two passes of tensor scaling
   so that each value is generated once. v == NULL: not kept (too large); generate twice. */
struct rowcache {
    double *v;
    int filled;
};

/* Calls fn on the source values of every used row of matrices [m0, m1). row_index is the
   logical row (across matrices); tid the thread running it (gg_par_for). With a cache, the
   first call generates into it and the second reads from it. */
typedef void (*row_fn)(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                       int64_t row_index, int64_t addr, const double *v, void *state, int tid);

/* 1 when rows of the operand may be stored from different threads: 4-bit codes pack two
   elements per byte, so every row must start and end on a byte. */
static int rows_independent(enum gg_dtype t, const struct rowset *rs)
{
    return gg_dtype_bits(t) >= 8 || (rs->rowlen % 2 == 0 && rs->ld % 2 == 0 && rs->mstride % 2 == 0);
}

/* Rows generated per thread at least: below this a thread costs more than it saves. */
#define ROWS_MIN_ELEMS ((int64_t)1 << 16)

/* The rows of each_row: used[u] is the u-th used matrix; work item k is row k % rows of
   matrix used[k / rows], its values at cache->v + k·rowlen. */
struct row_job {
    const struct gg_case *c;
    const struct recipe *r;
    struct rowset rs;
    const int64_t *used;
    row_fn fn;
    void *state;
    struct rowcache *cache;
    atomic_int nomem;
};

static void row_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    struct row_job *j = ctx;
    const struct rowset *rs = &j->rs;
    int cached = j->cache && j->cache->v;
    double *v = cached ? NULL : malloc((size_t)(rs->rowlen > 0 ? rs->rowlen : 1) * sizeof *v);
    if (!cached && !v) {
        atomic_store(&j->nomem, 1);
        return;
    }
    for (int64_t k = lo; k < hi; k++) {
        int64_t i = j->used[k / rs->rows], row = k % rs->rows, logical = i * rs->rows + row;
        double *vals = cached ? j->cache->v + k * rs->rowlen : v;
        if (!cached || !j->cache->filled)
            gg_dist_fill(j->r->dist, j->c->seed, j->r->stream, (uint64_t)(logical * rs->rowlen),
                         rs->rowlen, vals);
        j->fn(j->c, j->r, rs, logical, i * rs->mstride + row * rs->ld, vals, j->state, tid);
    }
    free(v);
}

/* The used matrices of [m0, m1) into a fresh array (*n of them); NULL when out of memory. */
static int64_t *used_mats(const struct gg_problem *p, const struct rowset *rs, int64_t m0,
                          int64_t m1, int64_t *n)
{
    int64_t hi = m1 < rs->mats ? m1 : rs->mats, count = 0;
    int64_t *used = malloc((size_t)(hi > m0 ? hi - m0 : 1) * sizeof *used);
    for (int64_t i = m0; used && i < hi; i++)
        if (gg_mat_used(p, rs, i))
            used[count++] = i;
    *n = count;
    return used;
}

static enum gg_status each_row(const struct gg_case *c, const struct gg_problem *p, int which,
                               int64_t m0, int64_t m1, const struct recipe *r, row_fn fn,
                               void *state, struct rowcache *cache, char *err, size_t err_len)
{
    struct row_job j = {.c = c, .r = r, .rs = gg_operand_rows(p, which), .fn = fn, .state = state,
                        .cache = cache};
    int64_t n_used;
    int64_t *used = used_mats(p, &j.rs, m0, m1, &n_used);
    if (!used) {
        snprintf(err, err_len, "out of memory for the matrices of an operand");
        return GG_E_NOMEM;
    }
    j.used = used;
    atomic_init(&j.nomem, 0);
    int64_t rows = gg_size_mul(n_used, j.rs.rows);
    int64_t min_rows = rows_independent(r->dtype, &j.rs)
                           ? ROWS_MIN_ELEMS / (j.rs.rowlen > 0 ? j.rs.rowlen : 1) + 1
                           : rows + 1;
    gg_par_for(j.rs.rows > 0 ? rows : 0, min_rows, row_range, &j);
    free(used);
    if (atomic_load(&j.nomem)) {
        snprintf(err, err_len, "out of memory for a row of %lld values", (long long)j.rs.rowlen);
        return GG_E_NOMEM;
    }
    if (cache && cache->v)
        cache->filled = 1;
    return GG_OK;
}

/* Absolute maximum of n values; NaN when any is NaN. */
static double amax_of(const double *v, int64_t n, double amax)
{
    for (int64_t j = 0; j < n && !isnan(amax); j++)
        if (isnan(v[j]) || fabs(v[j]) > amax)
            amax = fabs(v[j]);
    return amax;
}

/* state: one absolute maximum per thread (GG_PAR_MAX_THREADS), joined by amax_join. */
static void amax_row(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                     int64_t row_index, int64_t addr, const double *v, void *state, int tid)
{
    (void)c, (void)r, (void)row_index, (void)addr;
    double *amax = state;
    amax[tid] = amax_of(v, rs->rowlen, amax[tid]);
}

/* The absolute maximum of the threads' maxima: NaN when any is, as amax_of over all values. */
static double amax_join(const double *amax)
{
    double m = 0.0;
    for (int t = 0; t < GG_PAR_MAX_THREADS; t++)
        m = isnan(m) || isnan(amax[t]) ? NAN : amax[t] > m ? amax[t] : m;
    return m;
}

/* Encodes n values times s (a quantisation multiplier) at addr. */
static void encode_run(const struct gg_case *c, const struct recipe *r, int64_t addr,
                       const double *v, int64_t n, double s)
{
    gg_encode_run(r->dtype, v, n, s, c->quant_sat, r->data, addr);
}

static void store_mx(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                     int64_t row_index, int64_t addr, const double *v)
{
    uint8_t *mx = r->scales;
    int64_t blocks = rs->rowlen / GG_MX_BLOCK;
    for (int64_t b = 0; b < blocks; b++) {
        uint8_t scale, planted;
        uint32_t codes[GG_MX_BLOCK];
        gg_mx_quantise_block_sat(v + b * GG_MX_BLOCK, GG_MX_BLOCK, r->dtype, c->mx_rule,
                                 c->quant_sat, &scale, codes);
        int64_t si = row_index * blocks + b;
        if (c->plant_e8m0 > 0 &&
            gg_rng_plant_e8m0(c->seed, r->scale_stream, (uint64_t)si, c->plant_e8m0, &planted))
            scale = planted;
        mx[si] = scale;
        for (int j = 0; j < GG_MX_BLOCK; j++)
            gg_store_code(r->dtype, r->data, addr + b * GG_MX_BLOCK + j, codes[j]);
    }
}

/* Per-token, per-128-K quantisation: each group of 128 gets s = max/amax, stored as 1/s. */
static void store_block128(const struct gg_case *c, const struct recipe *r,
                           const struct rowset *rs, int64_t row_index, int64_t addr,
                           const double *v)
{
    float *scales = r->scales;
    int64_t groups = (rs->rowlen + GG_BLOCK128 - 1) / GG_BLOCK128;
    for (int64_t b = 0; b < groups; b++) {
        int64_t n = rs->rowlen - b * GG_BLOCK128 < GG_BLOCK128 ? rs->rowlen - b * GG_BLOCK128 : GG_BLOCK128;
        float s = gg_tensor_scale(amax_of(v + b * GG_BLOCK128, n, 0.0), r->dtype);
        scales[row_index * groups + b] = (float)(1.0 / (double)s);
        encode_run(c, r, addr + b * GG_BLOCK128, v + b * GG_BLOCK128, n, s);
    }
}

static void store_row(const struct gg_case *c, const struct recipe *r, const struct rowset *rs,
                      int64_t row_index, int64_t addr, const double *v, void *state, int tid)
{
    (void)tid;
    if (r->src)
        for (int64_t j = 0; j < rs->rowlen; j++)
            r->src[row_index * rs->rowlen + j] = (float)v[j];
    if (r->q == GG_GEN_MX)
        store_mx(c, r, rs, row_index, addr, v);
    else if (r->q == GG_GEN_BLOCK128)
        store_block128(c, r, rs, row_index, addr, v);
    else /* state: the tensor's quantisation multiplier, NULL when plain */
        encode_run(c, r, addr, v, rs->rowlen, state ? (double)*(const float *)state : 1.0);
}

/* Tensor scaling over matrices [m0, m1): amax pass, then the store pass; the dequantisation
   factor 1/s goes to *scale_inv. */
static enum gg_status fill_tensor(const struct gg_case *c, const struct gg_problem *p, int which,
                                  int64_t m0, int64_t m1, const struct recipe *r,
                                  float *scale_inv, char *err, size_t err_len)
{
    struct rowset rs = gg_operand_rows(p, which);
    int64_t values = 0;
    for (int64_t i = m0; i < m1 && i < rs.mats; i++)
        values += gg_mat_used(p, &rs, i) ? rs.rows * rs.rowlen : 0;
    struct rowcache cache = {
        .v = values > 0 && values <= ROWCACHE_MAX_VALUES ? malloc((size_t)values * sizeof(double))
                                                         : NULL};
    double amax[GG_PAR_MAX_THREADS] = {0};
    enum gg_status st = each_row(c, p, which, m0, m1, r, amax_row, amax, &cache, err, err_len);
    if (st == GG_OK) {
        float s = gg_tensor_scale(amax_join(amax), r->dtype);
        *scale_inv = (float)(1.0 / (double)s);
        st = each_row(c, p, which, m0, m1, r, store_row, &s, &cache, err, err_len);
    }
    free(cache.v);
    return st;
}

/* Rows r0 .. r1-1 of row block rb of a grid plan. */
static void grid_rows_of(const struct gg_gen_plan *g, int64_t rb, int64_t *r0, int64_t *r1)
{
    if (g->grid_rows < 0) {
        *r0 = 0;
        *r1 = g->rows;
    } else if (g->grid_rows > 0) {
        *r0 = rb * g->grid_rows;
        *r1 = *r0 + g->grid_rows < g->rows ? *r0 + g->grid_rows : g->rows;
    } else {
        *r0 = g->row_offs[rb];
        *r1 = g->row_offs[rb + 1];
    }
}

/* The blocks of fill_grid: work item k is block row k % rblocks of matrix used[k / rblocks]. */
struct grid_job {
    const struct gg_case *c;
    const struct recipe *r;
    struct rowset rs;
    const int64_t *used;
    int64_t rblocks, cblocks;
    atomic_int nomem;
};

/* One block row of one matrix: an amax pass per column block, then the store pass with the
   blocks' multipliers (the values are generated twice). */
static void grid_block_row(const struct grid_job *j, int64_t i, int64_t rb, double *v,
                           double *amax, float *mult)
{
    const struct gg_gen_plan *g = j->r->plan;
    const struct rowset *rs = &j->rs;
    float *scales = j->r->scales;
    int64_t r0, r1;
    grid_rows_of(g, rb, &r0, &r1);
    for (int64_t cb = 0; cb < j->cblocks; cb++)
        amax[cb] = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t cb = 0; pass == 1 && cb < j->cblocks; cb++) {
            mult[cb] = gg_tensor_scale(amax[cb], j->r->dtype);
            scales[gg_gen_grid_slot(g, i, rb, cb * g->grid_cols)] = (float)(1.0 / (double)mult[cb]);
        }
        for (int64_t row = r0; row < r1; row++) {
            int64_t logical = i * rs->rows + row;
            gg_dist_fill(j->r->dist, j->c->seed, j->r->stream, (uint64_t)(logical * rs->rowlen),
                         rs->rowlen, v);
            for (int64_t cb = 0; cb < j->cblocks; cb++) {
                int64_t j0 = cb * g->grid_cols;
                int64_t n = rs->rowlen - j0 < g->grid_cols ? rs->rowlen - j0 : g->grid_cols;
                if (pass == 0)
                    amax[cb] = amax_of(v + j0, n, amax[cb]);
                else
                    encode_run(j->c, j->r, i * rs->mstride + row * rs->ld + j0, v + j0, n,
                               (double)mult[cb]);
            }
            if (pass == 1 && j->r->src)
                for (int64_t col = 0; col < rs->rowlen; col++)
                    j->r->src[logical * rs->rowlen + col] = (float)v[col];
        }
    }
}

static void grid_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct grid_job *j = ctx;
    double *v = malloc((size_t)(j->rs.rowlen + 1) * sizeof *v);
    double *amax = malloc((size_t)(j->cblocks + 1) * sizeof *amax);
    float *mult = malloc((size_t)(j->cblocks + 1) * sizeof *mult);
    if (!v || !amax || !mult)
        atomic_store(&j->nomem, 1);
    for (int64_t k = lo; v && amax && mult && k < hi; k++)
        grid_block_row(j, j->used[k / j->rblocks], k % j->rblocks, v, amax, mult);
    free(v), free(amax), free(mult);
}

/* Grid scaling (per row, per column, per 2-D block), each block row of each used matrix on its
   own (gg_par_for). Every scale starts at the neutral 1 (empty matrices and groups). */
static enum gg_status fill_grid(const struct gg_case *c, const struct gg_problem *p, int which,
                                const struct recipe *r, char *err, size_t err_len)
{
    const struct gg_gen_plan *g = r->plan;
    struct grid_job j = {.c = c, .r = r, .rs = gg_operand_rows(p, which),
                         .rblocks = gg_gen_grid_row_blocks(g), .cblocks = gg_gen_grid_col_blocks(g)};
    float *scales = r->scales;
    for (int64_t i = 0; i < j.rs.mats * j.rblocks * j.cblocks; i++)
        scales[i] = 1.0f;
    int64_t n_used;
    int64_t *used = used_mats(p, &j.rs, 0, j.rs.mats, &n_used);
    if (!used) {
        snprintf(err, err_len, "out of memory for the matrices of an operand");
        return GG_E_NOMEM;
    }
    j.used = used;
    atomic_init(&j.nomem, 0);
    int64_t items = gg_size_mul(n_used, j.rblocks);
    /* A block row is at least a row; the items are alike, so one each is enough. */
    int64_t per_item = gg_size_mul(j.rs.rowlen, j.rs.rows / (j.rblocks > 0 ? j.rblocks : 1) + 1);
    int64_t min_items = rows_independent(r->dtype, &j.rs) ? ROWS_MIN_ELEMS / (per_item + 1) + 1
                                                          : items + 1;
    gg_par_for(items, min_items, grid_range, &j);
    free(used);
    if (atomic_load(&j.nomem)) {
        snprintf(err, err_len, "out of memory for a row of %lld values", (long long)j.rs.rowlen);
        return GG_E_NOMEM;
    }
    return GG_OK;
}

enum gg_status gg_hostgen_fill(const struct gg_case *c, const struct gg_problem *p, int which,
                               const struct recipe *r, char *err, size_t err_len)
{
    int64_t mats = gg_operand_rows(p, which).mats;
    if (r->q == GG_GEN_GRID)
        return fill_grid(c, p, which, r, err, err_len);
    if (r->q != GG_GEN_TENSOR)
        return each_row(c, p, which, 0, mats, r, store_row, NULL, NULL, err, err_len);
    float *scales = r->scales;
    if (!r->per_mat)
        return fill_tensor(c, p, which, 0, mats, r, &scales[0], err, err_len);
    for (int64_t i = 0; i < mats; i++) {
        scales[i] = 1.0f; /* matrices of empty groups keep a neutral scale */
        enum gg_status st = fill_tensor(c, p, which, i, i + 1, r, &scales[i], err, err_len);
        if (st != GG_OK)
            return st;
    }
    return GG_OK;
}

/* A grid of rows × cols blocks (see gg_gen_core.h); rows 0: the groups' rows, -1: all rows. */
static enum gg_gen_quant grid(const struct gg_problem *p, int64_t rows, int64_t cols,
                              struct gg_gen_plan *g)
{
    g->grid_rows = rows;
    g->grid_cols = cols > 0 ? cols : 1;
    if (rows == 0) {
        g->row_groups = p->groups;
        g->row_offs = p->group_offs;
    }
    return GG_GEN_GRID;
}

/*
 * The quantisation of operand which under the problem's recipe, with the scale layout of
 * gg_kernel.h: rowwise is a grid of one row by the whole row where a stored row is an output
 * row (A; B as [N, K] whose rows are output columns), of all rows of a matrix by one column
 * where a stored column is an output column (dgrad's W, batched KN's B), of a group's rows by
 * one column for wgrad; blockwise is 1x128 for A and 128x128 for B as stored.
 */
static enum gg_gen_quant quant_of(const struct gg_problem *p, int which, struct gg_gen_plan *g)
{
    struct rowset rs = gg_operand_rows(p, which);
    int columns = p->op == GG_OP_GROUPED_DGRAD ||
                  (p->op == GG_OP_BATCHED && p->b_layout == GG_LAYOUT_KN);
    g->per_mat = 0;
    switch (p->scaling) {
    case GG_SCALING_TENSOR: g->per_mat = which == 1; return GG_GEN_TENSOR;
    case GG_SCALING_MX: return GG_GEN_MX;
    case GG_SCALING_MX_B: return which ? GG_GEN_MX : GG_GEN_PLAIN;
    case GG_SCALING_BLOCK128: g->per_mat = which == 1; return which ? GG_GEN_TENSOR : GG_GEN_BLOCK128;
    case GG_SCALING_ROWWISE:
        if (p->op == GG_OP_GROUPED_WGRAD)
            return grid(p, 0, 1, g);
        if (which == 1 && columns)
            return grid(p, -1, 1, g);
        return grid(p, 1, rs.rowlen, g);
    case GG_SCALING_BLOCKWISE:
        return which ? grid(p, GG_BLOCK128, GG_BLOCK128, g) : GG_GEN_BLOCK128;
    default: return GG_GEN_PLAIN;
    }
}

/* The generation plan of operand which (gg_gen_core.h): what the device generator needs to
   produce the same codes and scales as gg_hostgen_fill. */
void gg_hostgen_plan(const struct gg_case *c, const struct gg_problem *p, int which,
                     struct gg_gen_plan *g)
{
    struct rowset rs = gg_operand_rows(p, which);
    memset(g, 0, sizeof *g);
    g->dtype = which ? p->b_dtype : p->a_dtype;
    g->dist = which ? c->dist_b : c->dist_a;
    g->dist.fmt = g->dtype; /* generated for the operand's format */
    g->seed = c->seed;
    g->stream = which ? GG_STREAM_B : GG_STREAM_A;
    g->scale_stream = which ? GG_STREAM_B_SCALE : GG_STREAM_A_SCALE;
    g->quant = quant_of(p, which, g);
    g->sat = c->quant_sat;
    g->mx_rule = c->mx_rule;
    g->plant_e8m0 = c->plant_e8m0;
    g->mats = rs.mats;
    g->rows = rs.rows;
    g->rowlen = rs.rowlen;
    g->mstride = rs.mstride;
    g->ld = rs.ld;
    g->group_lens = rs.skip_empty_groups ? p->group_lens : NULL;
}

/*
 * gg_oracle_compare.c — compares a kernel's output with the reference, element by element and
 * group by group: unwritten (sentinel) elements, NaN/Inf mismatches, the per-element bound τ,
 * per-group and pooled SNR, the SNR against the unquantised source (beside the exact reference's
 * own, which tells the recipe's loss from the kernel's), and the region of the output where the
 * bad elements lie. One pass over the output, in parts of whole rows scanned in
 * parallel on a large output and merged in order; the reference may come a run of groups at a
 * time (gg_compare_begin), so no memory proportional to the output is needed. Also the bounds it
 * applies, element by element, for a caller that judges outputs elsewhere (a dump's check).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracles/gg_oracle_int.h"

/* Where a set of elements lies: each flag says "every element so far does". */
struct region_acc {
    int64_t n;        /* elements added */
    int64_t touched;  /* outputs of the groups holding at least one of them */
    int64_t mark;     /* n at the start of the current group */
    int rows_tail, cols_tail, one_tile;
    int64_t g, tr, tc; /* tile of the first element */
};

static void region_init(struct region_acc *a)
{
    memset(a, 0, sizeof *a);
    a->rows_tail = a->cols_tail = a->one_tile = 1;
}

/* x lies in the last, partial tile of a dimension of length len. */
static int in_tail(int64_t x, int64_t len, int64_t tile)
{
    return tile > 0 && len % tile != 0 && x >= len / tile * tile;
}

static void region_add(struct region_acc *a, int64_t g, int64_t r, int64_t col,
                       const struct gg_out_block *b, int64_t tile_m, int64_t tile_n)
{
    int64_t tr = tile_m > 0 ? r / tile_m : 0, tc = tile_n > 0 ? col / tile_n : 0;
    a->rows_tail &= in_tail(r, b->rows, tile_m);
    a->cols_tail &= in_tail(col, b->cols, tile_n);
    if (a->n == 0) {
        a->g = g;
        a->tr = tr;
        a->tc = tc;
    } else if (a->g != g || a->tr != tr || a->tc != tc) {
        a->one_tile = 0;
    }
    a->n++;
}

static void region_end_group(struct region_acc *a, int64_t group_elems)
{
    if (a->n > a->mark)
        a->touched += group_elems;
    a->mark = a->n;
}

/*
 * all: more than half of the outputs of the groups concerned; a tail when only one of the two
 * tails holds everything (both: the corner, named by the single tile when it is one); a single
 * tile needs both tile sizes.
 */
static enum gg_region region_classify(const struct region_acc *a, int64_t tile_m, int64_t tile_n)
{
    if (a->n == 0)
        return GG_REGION_NONE;
    if (2 * a->n > a->touched)
        return GG_REGION_ALL;
    if (a->rows_tail && !a->cols_tail)
        return GG_REGION_ROWS_TAIL;
    if (a->cols_tail && !a->rows_tail)
        return GG_REGION_COLS_TAIL;
    if (a->one_tile && tile_m > 0 && tile_n > 0)
        return GG_REGION_SINGLE_TILE;
    return a->rows_tail ? GG_REGION_ROWS_TAIL : GG_REGION_SCATTERED;
}

/* Appends b, the accumulator of one later group, to a (as if b's elements had been added to a
   one by one): the groups can be scanned apart and merged in group order. */
static void region_merge(struct region_acc *a, const struct region_acc *b)
{
    if (b->n == 0)
        return;
    a->rows_tail &= b->rows_tail;
    a->cols_tail &= b->cols_tail;
    if (a->n == 0) {
        a->g = b->g;
        a->tr = b->tr;
        a->tc = b->tc;
        a->one_tile = b->one_tile;
    } else {
        a->one_tile &= b->one_tile && a->g == b->g && a->tr == b->tr && a->tc == b->tc;
    }
    a->n += b->n;
    a->touched += b->touched;
    a->mark = a->n;
}

/* What one group's scan adds beside its metrics: its regions and its source sums (Σ src²,
   Σ (out - src)² and the reference's own Σ (ref - src)², over the same outputs). */
struct scan_part {
    struct region_acc bad;     /* past τ, NaN mismatches, unwritten */
    struct region_acc suspect; /* within τ but past the probabilistic warning level */
    double src_sig, src_err, ref_src_err;
    int64_t src_n;
};

/* State of one comparison pass (read-only while groups are scanned). */
struct scan {
    const struct gg_problem *p;
    const struct gg_threshold *t;
    const void *c;
    int64_t tile_m, tile_n;
};

/* A correctly rounded overflow: out is the infinity on ref's side and ref is within its bound
   of the largest finite value of the output format. */
static int overflow_ok(const struct scan *s, double out, double ref, double abs, int64_t h)
{
    double max = gg_dtype_max(s->p->c_dtype);
    return isinf(out) && signbit(out) == signbit(ref) &&
           fabs(ref) + gg_oracle_bound(s->t, max, abs, h) >= max;
}

/* An infinite reference (a term with an infinite factor) may come out NaN when the finite terms,
   whose Σ|ab| is abs (gg_ref_gemm), can overflow the fp32 accumulator to the other infinity. */
static int overflow_nan(const struct scan *s, double abs, int64_t h)
{
    return !(abs + gg_oracle_bound(s->t, GG_ORACLE_ACC_MAX, abs, h) < GG_ORACLE_ACC_MAX);
}

/* What the scan of one group needs besides its elements: its block, term count, packed
   position and the factors of τ and of the warning level. */
struct group_view {
    struct gg_out_block b;
    int64_t g, h, pos;
    struct gg_bound_factors tau, warn;
};

/* The value of bf16 code h (exact in float). */
static double bf16_value(uint32_t h)
{
    uint32_t u = h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* Outputs read at a time: a run of one row's columns. */
#define LOAD_RUN 256

/* The n outputs of C from storage index i on, decoded into val; unwritten[j] is 1 where the
   sentinel still stands (gg_oracle_out_load, with the common formats read in one loop). */
static void load_run(enum gg_dtype t, const void *c, int64_t i, int n, double *val,
                     uint8_t *unwritten)
{
    uint32_t sentinel = gg_oracle_sentinel(t);
    if (t == GG_DTYPE_F32) {
        const unsigned char *p = (const unsigned char *)c + 4 * i;
        for (int j = 0; j < n; j++) {
            uint32_t u;
            float f;
            memcpy(&u, p + 4 * j, sizeof u);
            memcpy(&f, &u, sizeof f);
            unwritten[j] = u == sentinel;
            val[j] = (double)f;
        }
    } else if (t == GG_DTYPE_BF16) {
        const unsigned char *p = (const unsigned char *)c + 2 * i;
        for (int j = 0; j < n; j++) {
            uint16_t h;
            memcpy(&h, p + 2 * j, sizeof h);
            unwritten[j] = h == sentinel;
            val[j] = bf16_value(h);
        }
    } else {
        for (int j = 0; j < n; j++) {
            val[j] = 0.0;
            unwritten[j] = (uint8_t)gg_oracle_out_load(t, c, i + j, &val[j]);
        }
    }
}

/* The n reference values ref rounded to the output format t (an f64 output: unchanged). A code
   equal to the sentinel is a value here (E2M1's -6, the NaN of an fp8 overflow), so only the f32
   and bf16 loops of load_run, which decode every code, are shared. */
static void round_run(enum gg_dtype t, const double *ref, int n, double *out)
{
    if (t == GG_DTYPE_F64) {
        memcpy(out, ref, (size_t)n * sizeof *out);
        return;
    }
    uint32_t codes[LOAD_RUN];
    uint8_t unused[LOAD_RUN];
    gg_encode_run(t, ref, n, 1.0, GG_SAT_NONE, codes, 0);
    if (t == GG_DTYPE_F32 || t == GG_DTYPE_BF16)
        load_run(t, codes, 0, n, out, unused);
    else
        for (int j = 0; j < n; j++)
            out[j] = gg_decode(t, gg_load_code(t, codes, j));
}

/* Judges one finite, written output against a finite reference (ref_rounded: it rounded to the
   output format). Returns 2 when past τ, 1 when past the warning level only, 0 otherwise. */
static int judge_finite(const struct group_view *v, double out, double ref, double ref_rounded,
                        const double *abs, struct gg_group_metrics *gm, int64_t r, int64_t col)
{
    double d = fabs(out - ref);
    double rn = ref_rounded - ref;
    gm->sig += ref * ref;
    gm->err += d * d;
    gm->rn_err += isfinite(rn) ? rn * rn : 0.0;
    if (!abs)
        return 0;
    double tau = gg_oracle_bound_with(&v->tau, out, *abs);
    double ratio = tau > 0 ? d / tau : (d > 0 ? INFINITY : 0.0);
    if (ratio > gm->max_ratio) {
        gm->max_ratio = ratio;
        gm->worst = (struct gg_worst_element){r, col, out, ref, *abs, tau};
    }
    if (d > tau)
        return 2;
    return d > gg_oracle_bound_with(&v->warn, out, *abs);
}

/* The bound's term count: the reduction length, plus one for a bias added to the accumulator,
   plus the two fp32 multiplications per 128-block of blockwise scales (gg_threshold.c). */
int64_t gg_oracle_terms(const struct gg_problem *p, const struct gg_out_block *b)
{
    int64_t h = b->red + (p->bias_dtype != GG_DTYPE_NONE);
    if (p->scaling == GG_SCALING_BLOCKWISE)
        h += 2 * ((b->red + GG_BLOCK128 - 1) / GG_BLOCK128);
    return h;
}

/* Index in C's storage of element (r, col) of block b: its row at base + r·ld, or at
   row_map[r]·ld for a moe expert (row r of the block is sorted id row_map[r]). */
static int64_t storage_index(const struct gg_out_block *b, int64_t r, int64_t col)
{
    return (b->row_map ? (int64_t)b->row_map[r] * b->ld : b->base + r * b->ld) + col;
}

static void group_view_make(const struct scan *s, int64_t g, int64_t pos, struct group_view *v)
{
    gg_problem_out_block(s->p, g, &v->b);
    v->g = g;
    v->pos = pos;
    v->h = gg_oracle_terms(s->p, &v->b);
    /* Warning level: the Higham-Mary probabilistic bound with λ = 8, 8·√h·u_acc, where it is
       tighter than γ_h (h > 64); rows with an empirical κ have no tighter model. */
    struct gg_threshold tw = *s->t;
    if (tw.kappa == 0 && v->h > 64)
        tw.kappa = 8.0 * sqrt((double)v->h) * tw.u_acc;
    gg_oracle_bound_factors(s->t, v->h, &v->tau);
    gg_oracle_bound_factors(&tw, v->h, &v->warn);
}

/* The reference a scan reads: ref, abs and src from packed position base on, or (ref NULL)
   exact zeros with a zero Σ|ab| and, with zero_src, a zero source product. */
struct ref_view {
    int64_t base;
    const double *ref, *abs, *src;
    int zero_src;
};

static const double zero_run[LOAD_RUN];

/* Compares rows [r0, r1) of group v with the reference rv into gm and part (its sums, counts,
   worst and first bad element, and regions so far). */
static void scan_rows(const struct scan *s, const struct group_view *v, int64_t r0, int64_t r1,
                      const struct ref_view *rv, struct gg_group_metrics *gm,
                      struct scan_part *part)
{
    region_init(&part->bad);
    region_init(&part->suspect);
    const struct gg_out_block *b = &v->b;
    int64_t h = v->h;
    gm->first_bad = -1;
    gm->worst.row = -1;
    double vals[LOAD_RUN], rnd[LOAD_RUN];
    uint8_t unwritten[LOAD_RUN];
    const double *ref = zero_run, *abs = zero_run, *src = rv->zero_src ? zero_run : NULL;
    for (int64_t r = r0; r < r1; r++) {
        for (int64_t col = 0; col < b->cols; col++) {
            int64_t i = v->pos + r * b->cols + col, at = col % LOAD_RUN;
            if (at == 0) { /* the next run of the row: its outputs and reference */
                int n = (int)(b->cols - col < LOAD_RUN ? b->cols - col : LOAD_RUN);
                load_run(s->p->c_dtype, s->c, storage_index(b, r, col), n, vals, unwritten);
                if (rv->ref) {
                    ref = rv->ref + (i - rv->base);
                    abs = rv->abs ? rv->abs + (i - rv->base) : NULL;
                    src = rv->src ? rv->src + (i - rv->base) : NULL;
                }
                round_run(s->p->c_dtype, ref, n, rnd);
            }
            double out = vals[at], rf = ref[at];
            int bad = 0, suspect = 0;
            if (unwritten[at]) {
                gm->n_unwritten++;
                bad = 1;
            } else if (abs && abs[at] > GG_ORACLE_ACC_MAX && isfinite(rf)) {
                /* Past the fp32 accumulator's range: overflow is allowed anywhere in the sum
                   (Inf, or NaN from Inf - Inf), so the element is not judged. */
            } else if (!isfinite(rf)) {
                bad = isnan(rf) ? !isnan(out)
                                : out != rf && !(isnan(out) && abs && overflow_nan(s, abs[at], h));
                gm->n_nan += bad;
            } else if (!isfinite(out)) {
                bad = !(abs && overflow_ok(s, out, rf, abs[at], h));
                gm->n_nan += bad;
            } else {
                int k = judge_finite(v, out, rf, rnd[at], abs ? &abs[at] : NULL, gm, r, col);
                gm->n_bound += k == 2;
                bad = k == 2;
                suspect = k == 1;
                if (src && isfinite(src[at])) {
                    part->src_sig += src[at] * src[at];
                    part->src_err += (out - src[at]) * (out - src[at]);
                    part->ref_src_err += (rf - src[at]) * (rf - src[at]);
                    part->src_n += src[at] != 0.0 || out != 0.0;
                }
            }
            if (bad && gm->first_bad < 0)
                gm->first_bad = i;
            if (bad)
                region_add(&part->bad, v->g, r, col, b, s->tile_m, s->tile_n);
            else if (suspect)
                region_add(&part->suspect, v->g, r, col, b, s->tile_m, s->tile_n);
        }
    }
}

/* Adds the sums and counts of pm to gm; its worst element replaces gm's when its ratio is
   larger (as if pm's elements came after gm's). */
static void metrics_add(struct gg_group_metrics *gm, const struct gg_group_metrics *pm)
{
    gm->sig += pm->sig;
    gm->err += pm->err;
    gm->rn_err += pm->rn_err;
    gm->n_bound += pm->n_bound;
    gm->n_nan += pm->n_nan;
    gm->n_unwritten += pm->n_unwritten;
    if (pm->max_ratio > gm->max_ratio) {
        gm->max_ratio = pm->max_ratio;
        gm->worst = pm->worst;
    }
}

/* Appends the regions and source sums of a later scan part pp to gp. */
static void scan_part_add(struct scan_part *gp, const struct scan_part *pp)
{
    region_merge(&gp->bad, &pp->bad);
    region_merge(&gp->suspect, &pp->suspect);
    gp->src_sig += pp->src_sig;
    gp->src_err += pp->src_err;
    gp->ref_src_err += pp->ref_src_err;
    gp->src_n += pp->src_n;
}

/* The region of the bad elements; when the SNR alone fails, that of the elements past the
   warning level, or the whole output when the error sits below it everywhere. */
static enum gg_region compare_region(const struct scan *s, const struct scan_part *all,
                                     const struct gg_compare *cmp)
{
    if (all->bad.n > 0)
        return region_classify(&all->bad, s->tile_m, s->tile_n);
    int pooled = gg_oracle_pooled_fails(s->t, cmp), snr_fails = gg_oracle_src_fails(s->t, cmp);
    for (int64_t g = 0; g < cmp->n_groups && !snr_fails; g++)
        snr_fails = gg_oracle_group_fails(s->t, &cmp->groups[g], pooled, 0);
    if (!snr_fails)
        return GG_REGION_NONE;
    return all->suspect.n > 0 ? region_classify(&all->suspect, s->tile_m, s->tile_n)
                              : GG_REGION_ALL;
}

/* A comparison under way: the groups come in order, a run of them at a time. */
struct gg_compare_run {
    struct gg_threshold t;
    struct scan s;
    int64_t *pos; /* packed position of each group's block; pos[groups] = total */
    struct scan_part *parts;
    struct gg_compare cmp;
    int64_t next;    /* the first group not yet scanned */
    int with_src;    /* a source product comes with the groups */
};

/*
 * Outputs of one part at most: a group is scanned in parts of whole rows, each into its own
 * metrics, merged in row order. The parts depend on the shape alone, so the result depends
 * neither on the thread count nor on how the groups came in runs.
 */
#define PART_OUTPUTS ((int64_t)1 << 20)
/* Outputs per thread at least: below this a thread costs more than it saves. */
#define SCAN_MIN_OUTPUTS ((int64_t)1 << 20)

/* Rows of one part of block b (a block without columns is one part). */
static int64_t part_rows(const struct gg_out_block *b)
{
    if (b->cols <= 0)
        return b->rows > 0 ? b->rows : 1;
    return b->cols < PART_OUTPUTS ? PART_OUTPUTS / b->cols : 1;
}

/* One part of one group of a run. */
struct scan_task {
    int64_t view; /* its group's entry in the run's views */
    int64_t r0, r1;
};

/* The parts of one run, scanned apart. */
struct scan_job {
    const struct scan *s;
    const struct group_view *views;
    const struct scan_task *tasks;
    struct gg_group_metrics *gm;
    struct scan_part *parts;
    struct ref_view rv;
};

static void scan_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct scan_job *j = ctx;
    for (int64_t i = lo; i < hi; i++) {
        const struct scan_task *k = &j->tasks[i];
        scan_rows(j->s, &j->views[k->view], k->r0, k->r1, &j->rv, &j->gm[i], &j->parts[i]);
    }
}

void gg_compare_abort(struct gg_compare_run *run)
{
    if (!run)
        return;
    free(run->cmp.groups);
    free(run->parts);
    free(run->pos);
    free(run);
}

enum gg_status gg_compare_begin(const struct gg_problem *p, const void *c, int64_t tile_m,
                                int64_t tile_n, int with_src, struct gg_compare_run **out)
{
    size_t n_groups = (size_t)(p->groups > 0 ? p->groups : 1);
    struct gg_compare_run *run = calloc(1, sizeof *run);
    *out = NULL;
    if (run) {
        run->cmp.groups = calloc(n_groups, sizeof *run->cmp.groups);
        run->parts = calloc(n_groups, sizeof *run->parts);
        run->pos = malloc((n_groups + 1) * sizeof *run->pos);
    }
    if (!run || !run->cmp.groups || !run->parts || !run->pos) {
        gg_compare_abort(run);
        return GG_E_NOMEM;
    }
    run->cmp.n_groups = p->groups;
    run->cmp.src_snr_db = run->cmp.ref_src_snr_db = NAN;
    run->with_src = with_src;
    run->t = gg_threshold_at(p);
    run->s = (struct scan){.p = p, .t = &run->t, .c = c, .tile_m = tile_m, .tile_n = tile_n};
    run->pos[0] = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        run->pos[g + 1] = run->pos[g] + b.rows * b.cols;
    }
    *out = run;
    return GG_OK;
}

int64_t gg_compare_group_start(const struct gg_compare_run *run, int64_t g)
{
    return run->pos[g];
}

/* Merges the parts of each group of a scanned run, in row order, into the run's groups. */
static void run_merge(struct gg_compare_run *run, const struct scan_job *j, int64_t n_views,
                      int64_t n_tasks)
{
    for (int64_t v = 0, i = 0; v < n_views; v++) {
        const struct group_view *gv = &j->views[v];
        struct gg_group_metrics *gm = &run->cmp.groups[gv->g];
        struct scan_part *gp = &run->parts[gv->g];
        memset(gm, 0, sizeof *gm);
        memset(gp, 0, sizeof *gp);
        region_init(&gp->bad);
        region_init(&gp->suspect);
        gm->elems = gv->b.rows * gv->b.cols;
        gm->first_bad = -1;
        gm->worst.row = -1;
        for (; i < n_tasks && j->tasks[i].view == v; i++) { /* its parts, in row order */
            metrics_add(gm, &j->gm[i]);
            if (gm->first_bad < 0)
                gm->first_bad = j->gm[i].first_bad;
            scan_part_add(gp, &j->parts[i]);
        }
        /* The group's regions start at its first element: every part is its own. */
        gp->bad.mark = gp->suspect.mark = 0;
        region_end_group(&gp->bad, gm->elems);
        region_end_group(&gp->suspect, gm->elems);
        gm->snr_db = gm->elems == 0 ? INFINITY : gg_oracle_snr_db(gm->sig, gm->err);
        gm->src_snr_db = run->with_src ? gg_oracle_snr_db(gp->src_sig, gp->src_err) : NAN;
        gm->ref_src_snr_db = run->with_src ? gg_oracle_snr_db(gp->src_sig, gp->ref_src_err) : NAN;
    }
}

/* Parts are judged apart, in parallel on the reference's threads when the run is large (a
   process running cases beside others has one), and merged in order. */
enum gg_status gg_compare_groups(struct gg_compare_run *run, int64_t g0, int64_t g1,
                                 const double *ref, const double *abs, const double *src)
{
    if (g0 != run->next || g1 < g0 || g1 > run->s.p->groups || (ref && !src != !run->with_src))
        return GG_E_INVAL;
    int64_t n_views = g1 - g0, n_tasks = 0;
    struct group_view *views = malloc((size_t)(n_views > 0 ? n_views : 1) * sizeof *views);
    if (!views)
        return GG_E_NOMEM;
    for (int64_t v = 0; v < n_views; v++) {
        group_view_make(&run->s, g0 + v, run->pos[g0 + v], &views[v]);
        int64_t rows = views[v].b.rows, per = part_rows(&views[v].b);
        n_tasks += rows > 0 ? (rows + per - 1) / per : 1;
    }
    size_t nt = (size_t)(n_tasks > 0 ? n_tasks : 1);
    struct scan_task *tasks = malloc(nt * sizeof *tasks);
    struct gg_group_metrics *gm = calloc(nt, sizeof *gm);
    struct scan_part *parts = calloc(nt, sizeof *parts);
    enum gg_status st = tasks && gm && parts ? GG_OK : GG_E_NOMEM;
    if (st == GG_OK) {
        int64_t i = 0;
        for (int64_t v = 0; v < n_views; v++) {
            int64_t rows = views[v].b.rows, per = part_rows(&views[v].b), r = 0;
            do {
                int64_t r1 = rows - r > per ? r + per : rows;
                tasks[i++] = (struct scan_task){v, r, r1};
                r = r1;
            } while (r < rows);
        }
        struct scan_job job = {&run->s, views, tasks, gm, parts,
                               {run->pos[g0], ref, abs, src, run->with_src}};
        int64_t total = run->pos[g1] - run->pos[g0], per_task = total / (int64_t)nt;
        if (total >= 2 * SCAN_MIN_OUTPUTS && n_tasks > 1)
            gg_par_for(n_tasks, SCAN_MIN_OUTPUTS / (per_task > 0 ? per_task : 1) + 1, scan_range,
                       &job);
        else
            scan_range(&job, 0, n_tasks, 0);
        run_merge(run, &job, n_views, n_tasks);
        run->next = g1;
    }
    free(views);
    free(tasks);
    free(gm);
    free(parts);
    return st;
}

enum gg_status gg_compare_end(struct gg_compare_run *run, struct gg_compare *out)
{
    memset(out, 0, sizeof *out);
    if (run->next != run->s.p->groups) {
        gg_compare_abort(run);
        return GG_E_INVAL;
    }
    struct gg_compare *cmp = &run->cmp;
    struct gg_group_metrics pool;
    struct scan_part all;
    memset(&pool, 0, sizeof pool);
    memset(&all, 0, sizeof all);
    region_init(&all.bad);
    region_init(&all.suspect);
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        metrics_add(&pool, &cmp->groups[g]);
        scan_part_add(&all, &run->parts[g]);
    }
    cmp->sig = pool.sig;
    cmp->err = pool.err;
    cmp->rn_err = pool.rn_err;
    cmp->n_bound = pool.n_bound;
    cmp->n_nan = pool.n_nan;
    cmp->n_unwritten = pool.n_unwritten;
    cmp->max_ratio = pool.max_ratio;
    cmp->snr_db = gg_oracle_snr_db(cmp->sig, cmp->err);
    if (run->with_src) {
        cmp->src_snr_db = gg_oracle_snr_db(all.src_sig, all.src_err);
        cmp->ref_src_snr_db = gg_oracle_snr_db(all.src_sig, all.ref_src_err);
        cmp->src_n = all.src_n;
    }
    cmp->region = compare_region(&run->s, &all, cmp);
    *out = *cmp;
    cmp->groups = NULL; /* now out's */
    gg_compare_abort(run);
    return GG_OK;
}

enum gg_status gg_compare_output(const struct gg_problem *p, const void *c, const double *ref,
                                 const double *abs, const double *src, int64_t tile_m,
                                 int64_t tile_n, struct gg_compare *out)
{
    struct gg_compare_run *run = NULL;
    memset(out, 0, sizeof *out);
    out->src_snr_db = out->ref_src_snr_db = NAN;
    enum gg_status st = gg_compare_begin(p, c, tile_m, tile_n, src != NULL, &run);
    if (st != GG_OK)
        return st;
    if ((st = gg_compare_groups(run, 0, p->groups, ref, abs, src)) != GG_OK) {
        gg_compare_abort(run);
        return st;
    }
    return gg_compare_end(run, out);
}

void gg_compare_free(struct gg_compare *cmp)
{
    if (!cmp)
        return;
    free(cmp->groups);
    cmp->groups = NULL;
    cmp->n_groups = 0;
}

/* τ(out) = rel·|out| + bound: gg_oracle_bound() at out = 0 holds every other term. */
void gg_oracle_bounds(const struct gg_problem *p, const double *ref, const double *abs,
                      double *bound, double *rel)
{
    struct gg_threshold t = gg_threshold_at(p);
    *rel = t.u_out / (1.0 - t.u_out);
    int64_t pos = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        int64_t h = gg_oracle_terms(p, &b), n = b.rows * b.cols;
        for (int64_t i = pos; i < pos + n; i++)
            bound[i] = abs[i] > GG_ORACLE_ACC_MAX && isfinite(ref[i]) ? NAN
                                                            : gg_oracle_bound(&t, 0.0, abs[i], h);
        pos += n;
    }
}

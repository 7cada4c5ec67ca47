/*
 * gg_oracle_compare.c — compares a kernel's output with the reference, element by element and
 * group by group: unwritten (sentinel) elements, NaN/Inf mismatches, the per-element bound τ,
 * per-group and pooled SNR, the SNR against the unquantised source, and the region of the output
 * where the bad elements lie. One pass (groups in parallel on a large output), no memory
 * proportional to the output. Also the bounds
 * it applies, element by element, for a caller that judges outputs elsewhere (a dump's check).
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

/* What one group's scan adds beside its metrics: its regions and its source sums. */
struct scan_part {
    struct region_acc bad;     /* past τ, NaN mismatches, unwritten */
    struct region_acc suspect; /* within τ but past the probabilistic warning level */
    double src_sig, src_err;
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

/* Judges one finite, written output against a finite reference. Returns 2 when past τ, 1 when
   past the warning level tw only, 0 otherwise. */
static int judge_finite(const struct scan *s, const struct gg_threshold *tw, double out,
                        double ref, const double *abs, int64_t i, int64_t h,
                        struct gg_group_metrics *gm, int64_t r, int64_t col)
{
    double d = fabs(out - ref);
    double rn = gg_decode(s->p->c_dtype, gg_encode(s->p->c_dtype, ref, GG_SAT_NONE)) - ref;
    gm->sig += ref * ref;
    gm->err += d * d;
    gm->rn_err += isfinite(rn) ? rn * rn : 0.0;
    if (!abs)
        return 0;
    double tau = gg_oracle_bound(s->t, out, abs[i], h);
    double ratio = tau > 0 ? d / tau : (d > 0 ? INFINITY : 0.0);
    if (ratio > gm->max_ratio) {
        gm->max_ratio = ratio;
        gm->worst = (struct gg_worst_element){r, col, out, ref, abs[i], tau};
    }
    if (d > tau)
        return 2;
    return d > gg_oracle_bound(tw, out, abs[i], h);
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

/* Compares group g, whose reference starts at packed position pos, into gm and part. */
static void scan_group(const struct scan *s, int64_t g, int64_t pos, const double *ref,
                       const double *abs, const double *src, struct gg_group_metrics *gm,
                       struct scan_part *part)
{
    region_init(&part->bad);
    region_init(&part->suspect);
    struct gg_out_block b;
    gg_problem_out_block(s->p, g, &b);
    gm->elems = b.rows * b.cols;
    gm->first_bad = -1;
    gm->worst.row = -1;
    /* Warning level: the Higham-Mary probabilistic bound with λ = 8, 8·√h·u_acc, where it is
       tighter than γ_h (h > 64); rows with an empirical κ have no tighter model. */
    int64_t h = gg_oracle_terms(s->p, &b);
    struct gg_threshold tw = *s->t;
    if (tw.kappa == 0 && h > 64)
        tw.kappa = 8.0 * sqrt((double)h) * tw.u_acc;
    for (int64_t r = 0; r < b.rows; r++) {
        for (int64_t col = 0; col < b.cols; col++) {
            int64_t i = pos + r * b.cols + col;
            double out = 0.0, rf = ref[i];
            int bad = 0, suspect = 0;
            if (gg_oracle_out_load(s->p->c_dtype, s->c, storage_index(&b, r, col), &out)) {
                gm->n_unwritten++;
                bad = 1;
            } else if (abs && abs[i] > GG_ORACLE_ACC_MAX && isfinite(rf)) {
                /* Past the fp32 accumulator's range: overflow is allowed anywhere in the sum
                   (Inf, or NaN from Inf - Inf), so the element is not judged. */
            } else if (!isfinite(rf)) {
                bad = isnan(rf) ? !isnan(out)
                                : out != rf && !(isnan(out) && abs && overflow_nan(s, abs[i], h));
                gm->n_nan += bad;
            } else if (!isfinite(out)) {
                bad = !(abs && overflow_ok(s, out, rf, abs[i], h));
                gm->n_nan += bad;
            } else {
                int v = judge_finite(s, &tw, out, rf, abs, i, h, gm, r, col);
                gm->n_bound += v == 2;
                bad = v == 2;
                suspect = v == 1;
                if (src && isfinite(src[i])) {
                    part->src_sig += src[i] * src[i];
                    part->src_err += (out - src[i]) * (out - src[i]);
                    part->src_n += src[i] != 0.0 || out != 0.0;
                }
            }
            if (bad && gm->first_bad < 0)
                gm->first_bad = i;
            if (bad)
                region_add(&part->bad, g, r, col, &b, s->tile_m, s->tile_n);
            else if (suspect)
                region_add(&part->suspect, g, r, col, &b, s->tile_m, s->tile_n);
        }
    }
    region_end_group(&part->bad, gm->elems);
    region_end_group(&part->suspect, gm->elems);
    gm->snr_db = gm->elems == 0 ? INFINITY : gg_oracle_snr_db(gm->sig, gm->err);
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

/*
 * Element rules: a sentinel is unwritten (and takes no further part); a NaN reference needs a
 * NaN output and an infinite one the same infinity (or NaN, when its finite terms can overflow
 * the accumulator); a finite reference with a NaN or infinite
 * output is a NaN mismatch unless it is a correctly rounded overflow; everything else enters the
 * SNR sums and the bound (abs NULL: no bound, SNR only). first_bad is the packed index.
 */
/* The groups of one comparison, scanned apart (each writes its own metrics and part). */
struct scan_job {
    const struct scan *s;
    const int64_t *pos; /* packed position of each group's block */
    const double *ref, *abs, *src;
    struct gg_group_metrics *groups;
    struct scan_part *parts;
};

static void scan_range(void *ctx, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    struct scan_job *j = ctx;
    for (int64_t g = lo; g < hi; g++)
        scan_group(j->s, g, j->pos[g], j->ref, j->abs, j->src, &j->groups[g], &j->parts[g]);
}

/* Outputs per thread at least: below this a thread costs more than it saves. */
#define SCAN_MIN_OUTPUTS ((int64_t)1 << 20)

enum gg_status gg_compare_output(const struct gg_problem *p, const void *c, const double *ref,
                                 const double *abs, const double *src, int64_t tile_m,
                                 int64_t tile_n, struct gg_compare *out)
{
    memset(out, 0, sizeof *out);
    out->src_snr_db = NAN;
    size_t n_groups = (size_t)(p->groups > 0 ? p->groups : 1);
    out->groups = calloc(n_groups, sizeof *out->groups);
    struct scan_part *parts = calloc(n_groups, sizeof *parts);
    int64_t *pos = malloc(n_groups * sizeof *pos);
    if (!out->groups || !parts || !pos) {
        free(out->groups);
        out->groups = NULL;
        free(parts);
        free(pos);
        return GG_E_NOMEM;
    }
    out->n_groups = p->groups;
    struct gg_threshold t = gg_threshold_at(p);
    struct scan s = {.p = p, .t = &t, .c = c, .tile_m = tile_m, .tile_n = tile_n};
    int64_t total = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        pos[g] = total;
        total += b.rows * b.cols;
    }
    /* Groups are judged apart, in parallel on the reference's threads when the output is large
       (a process running cases beside others has one), and merged in group order: the result
       does not depend on the thread count. */
    struct scan_job job = {&s, pos, ref, abs, src, out->groups, parts};
    int64_t per_group = p->groups > 0 ? total / p->groups : 0;
    if (total >= 2 * SCAN_MIN_OUTPUTS && p->groups > 1)
        gg_par_for(p->groups, SCAN_MIN_OUTPUTS / (per_group > 0 ? per_group : 1) + 1, scan_range,
                   &job);
    else
        scan_range(&job, 0, p->groups, 0);
    struct scan_part all;
    memset(&all, 0, sizeof all);
    region_init(&all.bad);
    region_init(&all.suspect);
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_group_metrics *gm = &out->groups[g];
        out->sig += gm->sig;
        out->err += gm->err;
        out->rn_err += gm->rn_err;
        out->n_bound += gm->n_bound;
        out->n_nan += gm->n_nan;
        out->n_unwritten += gm->n_unwritten;
        if (gm->max_ratio > out->max_ratio)
            out->max_ratio = gm->max_ratio;
        region_merge(&all.bad, &parts[g].bad);
        region_merge(&all.suspect, &parts[g].suspect);
        all.src_sig += parts[g].src_sig;
        all.src_err += parts[g].src_err;
        all.src_n += parts[g].src_n;
    }
    out->snr_db = gg_oracle_snr_db(out->sig, out->err);
    if (src) {
        out->src_snr_db = gg_oracle_snr_db(all.src_sig, all.src_err);
        out->src_n = all.src_n;
    }
    out->region = compare_region(&s, &all, out);
    free(parts);
    free(pos);
    return GG_OK;
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

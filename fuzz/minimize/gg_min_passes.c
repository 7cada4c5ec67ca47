/*
 * gg_min_passes.c — the minimiser's passes, each a way to shrink a case that is kept only when
 * the candidate still fails the same way (gg_minimize.c): delete groups (ddmin), unify group
 * sizes, shrink N and K together, shrink every size in tile coordinates (x = q·tile + r, q first
 * so tail bugs survive), make the layout packed and drop options, simplify the data towards small
 * integers; in bucket mode first the smallest sizes and last the simplest op, dtypes and
 * placement. Also the sizes a pass can shrink and the kernel's tile they are cut by.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/minimize/minimize_int.h"

/* Smaller sizes tried per group by the unify pass. */
#define UNIFY_MAX_VALUES 8

static int has_items(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD ||
           op == GG_OP_MOE_SORTED;
}

static int k_in_mx_blocks(const struct gg_case *c)
{
    return c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B;
}

/* ---- sizes --------------------------------------------------------------------------------- */

/* moe_sorted: the loads must sum to m·topk; m follows the loads, and topk drops to 1 when it
   no longer divides their sum. */
static void fit_tokens(struct gg_case *c)
{
    if (c->op != GG_OP_MOE_SORTED)
        return;
    int64_t sum = 0;
    for (int i = 0; i < c->n_items; i++)
        sum += c->items[i].value * c->items[i].repeat;
    if (c->topk < 1 || sum % c->topk != 0)
        c->topk = 1;
    c->m = sum / c->topk;
}

/* Replaces the group-size spec by one constant item per group (the expanded sizes). */
enum gg_status min_explode_items(struct gg_case *c, char *err, size_t err_len)
{
    if (!has_items(c->op))
        return GG_OK;
    enum gg_status st = gg_case_expand(c, err, err_len);
    if (st != GG_OK)
        return st;
    struct gg_group_item *items = calloc((size_t)c->groups, sizeof *items);
    if (items == NULL) {
        snprintf(err, err_len, "minimize: out of memory for %lld group sizes",
                 (long long)c->groups);
        return GG_E_NOMEM;
    }
    for (int64_t g = 0; g < c->groups; g++)
        items[g] = (struct gg_group_item){.value = c->lens[g], .repeat = 1};
    free(c->items);
    c->items = items;
    c->n_items = (int)c->groups;
    return GG_OK;
}

/* A size the minimiser can shrink: group (or expert) g, m, n, k or the batch count. */
enum size_kind { SIZE_GROUP, SIZE_M, SIZE_N, SIZE_K, SIZE_BATCH };
struct size_ref {
    enum size_kind kind;
    int64_t g;
};

static int64_t size_get(const struct gg_case *c, struct size_ref s)
{
    switch (s.kind) {
    case SIZE_GROUP: return c->items[s.g].value;
    case SIZE_M: return c->m;
    case SIZE_N: return c->n;
    case SIZE_K: return c->k;
    case SIZE_BATCH: return c->groups;
    }
    return 0;
}

static void size_set(struct gg_case *c, struct size_ref s, int64_t v)
{
    switch (s.kind) {
    case SIZE_GROUP: c->items[s.g].value = v; fit_tokens(c); break;
    case SIZE_M: c->m = v; break;
    case SIZE_N: c->n = v; break;
    case SIZE_K: c->k = v; break;
    case SIZE_BATCH: c->groups = v; break;
    }
}

/* Tries size s = v on a copy of cur; 1 when kept. */
static int try_size(struct ctx *x, struct gg_case *cur, struct size_ref s, int64_t v)
{
    struct gg_case cand;
    if (v < 0 || v == size_get(cur, s) || !min_clone_case(x, cur, &cand))
        return 0;
    size_set(&cand, s, v);
    return min_try_keep(x, cur, &cand);
}

/* Smallest t in [lo, hi] for which size s = base + t·step keeps the signature, by binary
   search (hi is where s is now and is not tested). Returns the number of kept steps. */
static int search_size(struct ctx *x, struct gg_case *cur, struct size_ref s, int64_t base,
                       int64_t step, int64_t lo, int64_t hi)
{
    int kept = 0;
    while (lo < hi && !min_stopped(x)) {
        int64_t mid = lo + (hi - lo) / 2;
        if (try_size(x, cur, s, base + mid * step)) {
            hi = mid;
            kept++;
        } else {
            lo = mid + 1;
        }
    }
    return kept;
}

/* The kernel's tile that cuts M, N and K, as the signature classes them (gg_verdict.c): the
   output's row tile, its column tile, and the K step along the reduction, which is N for dgrad
   (output columns K) and M for wgrad (output N x K). */
void min_tiles_of(enum gg_op op, const struct gg_kernel *k, int64_t tile[3])
{
    const int64_t tm = k->tile_m, tn = k->tile_n, tk = k->tile_k;
    tile[0] = op == GG_OP_GROUPED_WGRAD ? tk : tm;
    tile[1] = op == GG_OP_GROUPED_DGRAD ? tk : op == GG_OP_GROUPED_WGRAD ? tm : tn;
    tile[2] = op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD ? tn : tk;
}

/* The granule of a size (32 for K under MX scales, else 1), and its tile in granules (0: the
   kernel has none, or it is not a whole number of granules). */
static void size_units(const struct ctx *x, const struct gg_case *c, struct size_ref s,
                       int64_t *unit, int64_t *tile)
{
    *unit = s.kind == SIZE_K && k_in_mx_blocks(c) ? GG_MX_BLOCK : 1;
    int64_t t = s.kind == SIZE_N ? x->tile[1] : s.kind == SIZE_K ? x->tile[2]
              : s.kind == SIZE_BATCH ? 0 : x->tile[0];
    *tile = t > 0 && t % *unit == 0 ? t / *unit : 0;
}

/*
 * Shrinks one size in tile coordinates: with x = q·T + r (in granules), q first by binary
 * search with r held, then r: 0, then 1, then a binary search in [2, r]. Without a tile, a
 * binary search on x itself. The batch count stays at least 1.
 */
static int shrink_size(struct ctx *x, struct gg_case *cur, struct size_ref s)
{
    int64_t unit, tile;
    size_units(x, cur, s, &unit, &tile);
    int64_t v = size_get(cur, s) / unit, floor_v = s.kind == SIZE_BATCH ? 1 : 0;
    if (size_get(cur, s) % unit != 0 || v <= floor_v)
        return 0;
    if (tile == 0)
        return search_size(x, cur, s, 0, unit, floor_v, v);
    int64_t q = v / tile, r = v % tile;
    int kept = search_size(x, cur, s, r * unit, tile * unit, 0, q);
    q = size_get(cur, s) / unit / tile;
    int64_t base = q * tile * unit;
    if (r > 0 && try_size(x, cur, s, base))
        return kept + 1;
    if (r > 1 && try_size(x, cur, s, base + unit))
        return kept + 1;
    if (r > 2)
        kept += search_size(x, cur, s, base, unit, 2, r);
    return kept;
}

/* ---- passes -------------------------------------------------------------------------------- */

/*
 * Pass 0 (bucket mode), the smallest sizes at once: each group of more than one row to one row,
 * then M (batched, dense), N and K each to one granule, else to one tile. A bug that shows at
 * those sizes ends there whichever case found it; the later passes, which keep a tail's width,
 * find the smallest size of a bug that needs more.
 */
int min_pass_smallest(struct ctx *x, struct gg_case *cur)
{
    int kept = 0;
    for (int64_t g = 0; has_items(cur->op) && g < cur->groups && !min_stopped(x); g++)
        if (size_get(cur, (struct size_ref){SIZE_GROUP, g}) > 1)
            kept += try_size(x, cur, (struct size_ref){SIZE_GROUP, g}, 1);
    static const enum size_kind dims[] = {SIZE_M, SIZE_N, SIZE_K};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0] && !min_stopped(x); i++) {
        struct size_ref s = {dims[i], 0};
        if (s.kind == SIZE_M && cur->op != GG_OP_BATCHED && cur->op != GG_OP_DENSE)
            continue;
        int64_t unit, tile, v = size_get(cur, s);
        size_units(x, cur, s, &unit, &tile);
        if (v > unit && try_size(x, cur, s, unit))
            kept++;
        else if (tile > 1 && v > tile * unit && try_size(x, cur, s, tile * unit))
            kept++;
    }
    return kept;
}

/* Removes groups [lo, hi) of a case with one item per group. */
static void delete_groups(struct gg_case *c, int64_t lo, int64_t hi)
{
    memmove(c->items + lo, c->items + hi, (size_t)(c->groups - hi) * sizeof *c->items);
    c->groups -= hi - lo;
    c->n_items = (int)c->groups;
    fit_tokens(c);
}

/*
 * Pass 1, delete groups: ddmin over the group list, chunks of half the groups, then quarters,
 * and so on to single groups; at least one group stays. The batch count of a batched case has
 * no order to exploit (every batch's data hangs on its index): it is binary-searched down.
 */
int min_pass_delete(struct ctx *x, struct gg_case *cur)
{
    if (cur->op == GG_OP_BATCHED)
        return shrink_size(x, cur, (struct size_ref){SIZE_BATCH, 0});
    if (!has_items(cur->op))
        return 0;
    int kept = 0;
    for (int64_t chunk = (cur->groups + 1) / 2; chunk >= 1 && !min_stopped(x); chunk /= 2) {
        if (chunk > (cur->groups + 1) / 2)
            chunk = (cur->groups + 1) / 2;
        for (int64_t lo = 0; lo < cur->groups && cur->groups > 1 && !min_stopped(x);) {
            int64_t hi = lo + chunk < cur->groups ? lo + chunk : cur->groups;
            struct gg_case cand;
            if (hi - lo >= cur->groups || !min_clone_case(x, cur, &cand)) {
                lo = hi;
                continue;
            }
            delete_groups(&cand, lo, hi);
            if (min_try_keep(x, cur, &cand))
                kept++;   /* the next chunk now starts at lo */
            else
                lo = hi;
        }
    }
    return kept;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Merges neighbours: groups g and g+1 become one group of their summed size, which keeps M
   (and the moe loads' sum) while the group count falls. */
static int merge_neighbours(struct ctx *x, struct gg_case *cur)
{
    int kept = 0;
    for (int64_t g = 0; g + 1 < cur->groups && !min_stopped(x);) {
        struct gg_case cand;
        if (!min_clone_case(x, cur, &cand))
            break;
        cand.items[g].value += cand.items[g + 1].value;
        delete_groups(&cand, g + 1, g + 2);
        if (min_try_keep(x, cur, &cand))
            kept++;
        else
            g++;
    }
    return kept;
}

/* Pass 2, unify groups: neighbours merged, then each group takes the size of another group,
   smaller ones first. */
int min_pass_unify(struct ctx *x, struct gg_case *cur)
{
    if (!has_items(cur->op) || cur->groups < 2)
        return 0;
    int kept = merge_neighbours(x, cur);
    if (cur->groups < 2)
        return kept;
    int64_t *vals = malloc((size_t)cur->groups * sizeof *vals), n = 0;
    if (vals == NULL) {
        snprintf(x->err, x->err_len, "minimize: out of memory");
        x->fatal = GG_E_NOMEM;
        return 0;
    }
    for (int64_t g = 0; g < cur->groups; g++)
        vals[g] = cur->items[g].value;
    qsort(vals, (size_t)cur->groups, sizeof *vals, cmp_i64);
    for (int64_t g = 0; g < cur->groups; g++)
        if (n == 0 || vals[g] != vals[n - 1])
            vals[n++] = vals[g];
    for (int64_t g = 0; g < cur->groups && !min_stopped(x); g++) {
        struct size_ref s = {SIZE_GROUP, g};
        for (int64_t i = 0; i < n && i < UNIFY_MAX_VALUES && vals[i] < size_get(cur, s); i++)
            if (try_size(x, cur, s, vals[i])) {
                kept++;
                break;
            }
    }
    free(vals);
    return kept;
}

/* Pass 3, shrink N and K together: both lose 1/2, then 1/4, 1/8, ... of their size, back to
   1/2 after each success; K stays a whole number of MX blocks. */
int min_pass_nk(struct ctx *x, struct gg_case *cur)
{
    int64_t unit = k_in_mx_blocks(cur) ? GG_MX_BLOCK : 1;
    int kept = 0;
    for (int j = 1; j < 63 && !min_stopped(x);) {
        int64_t n = cur->n - (cur->n >> j), k = (cur->k - (cur->k >> j)) / unit * unit;
        if (n == cur->n && k == cur->k)
            break;
        struct gg_case cand;
        if (!min_clone_case(x, cur, &cand))
            break;
        cand.n = n;
        cand.k = k;
        if (min_try_keep(x, cur, &cand)) {
            kept++;
            j = 1;
        } else {
            j++;
        }
    }
    return kept;
}

/* Pass 4, every size in tile coordinates: group sizes (expert loads), m, n, k. */
int min_pass_tiles(struct ctx *x, struct gg_case *cur)
{
    int kept = 0;
    for (int64_t g = 0; has_items(cur->op) && g < cur->groups && !min_stopped(x); g++)
        kept += shrink_size(x, cur, (struct size_ref){SIZE_GROUP, g});
    if (cur->op == GG_OP_BATCHED || cur->op == GG_OP_DENSE)
        kept += shrink_size(x, cur, (struct size_ref){SIZE_M, 0});
    kept += shrink_size(x, cur, (struct size_ref){SIZE_N, 0});
    kept += shrink_size(x, cur, (struct size_ref){SIZE_K, 0});
    return kept;
}

/* Layout fields that canonicalise to 0 (packed, no offset). */
static const size_t LAYOUT_FIELDS[] = {
    offsetof(struct gg_case, lda),      offsetof(struct gg_case, ldb),
    offsetof(struct gg_case, ldc),      offsetof(struct gg_case, stride_a),
    offsetof(struct gg_case, stride_b), offsetof(struct gg_case, stride_c),
    offsetof(struct gg_case, off_a),    offsetof(struct gg_case, off_b),
    offsetof(struct gg_case, off_c),
};
#define N_LAYOUT_FIELDS (sizeof LAYOUT_FIELDS / sizeof LAYOUT_FIELDS[0])

static int64_t *layout_field(struct gg_case *c, size_t i)
{
    return (int64_t *)((char *)c + LAYOUT_FIELDS[i]);
}

static void drop_option(struct gg_case *c, int i)
{
    for (int j = i + 1; j < c->n_opts; j++) {
        memcpy(c->opt_key[j - 1], c->opt_key[j], sizeof c->opt_key[j]);
        c->opt_value[j - 1] = c->opt_value[j];
    }
    c->n_opts--;
}

/* Default bias recipe (what gg_case_init sets): kept valid when the bias is dropped. */
static void drop_bias(struct gg_case *c)
{
    struct gg_case d;
    gg_case_init(&d);
    c->bias_dtype = GG_DTYPE_NONE;
    c->dist_bias = d.dist_bias;
}

/* Pass 5, canonicalise: everything packed at once, then each leading dimension, stride and
   offset to 0 alone; each option removed alone; the bias and planted scale codes removed. */
int min_pass_canon(struct ctx *x, struct gg_case *cur)
{
    int kept = 0, nonzero = 0;
    struct gg_case cand;
    for (size_t i = 0; i < N_LAYOUT_FIELDS; i++)
        nonzero += *layout_field(cur, i) != 0;
    if (nonzero > 1 && min_clone_case(x, cur, &cand)) {
        for (size_t i = 0; i < N_LAYOUT_FIELDS; i++)
            *layout_field(&cand, i) = 0;
        kept += min_try_keep(x, cur, &cand);
    }
    for (size_t i = 0; i < N_LAYOUT_FIELDS && !min_stopped(x); i++)
        if (*layout_field(cur, i) != 0 && min_clone_case(x, cur, &cand)) {
            *layout_field(&cand, i) = 0;
            kept += min_try_keep(x, cur, &cand);
        }
    for (int i = 0; i < cur->n_opts && !min_stopped(x);) {
        if (!min_clone_case(x, cur, &cand))
            break;
        drop_option(&cand, i);
        if (min_try_keep(x, cur, &cand))
            kept++;
        else
            i++;
    }
    if (cur->bias_dtype != GG_DTYPE_NONE && min_clone_case(x, cur, &cand)) {
        drop_bias(&cand);
        kept += min_try_keep(x, cur, &cand);
    }
    if (cur->plant_e8m0 != 0.0 && min_clone_case(x, cur, &cand)) {
        cand.plant_e8m0 = 0.0;
        kept += min_try_keep(x, cur, &cand);
    }
    return kept;
}

/* The data recipes in order of simplicity: anything, ints(8), ints(1), const(1). */
static const struct gg_dist SIMPLE_DISTS[] = {
    {.kind = GG_DIST_INTS, .p = {8.0, 0.0, 0.0}},
    {.kind = GG_DIST_INTS, .p = {1.0, 0.0, 0.0}},
    {.kind = GG_DIST_CONST, .p = {1.0, 0.0, 0.0}},
};
#define N_SIMPLE_DISTS (int)(sizeof SIMPLE_DISTS / sizeof SIMPLE_DISTS[0])

/* Position of d in SIMPLE_DISTS, -1 when it is none of them. */
static int dist_rank(const struct gg_dist *d)
{
    for (int i = N_SIMPLE_DISTS - 1; i >= 0; i--)
        if (d->kind == SIMPLE_DISTS[i].kind && d->p[0] == SIMPLE_DISTS[i].p[0] &&
            d->p[1] == SIMPLE_DISTS[i].p[1] && d->p[2] == SIMPLE_DISTS[i].p[2])
            return i;
    return -1;
}

/* Pass 6, simplify data: the recipe of A, B and the bias each move down the simplicity order
   (the format the values are generated for stays). */
int min_pass_data(struct ctx *x, struct gg_case *cur)
{
    static const size_t dists[] = {offsetof(struct gg_case, dist_a),
                                   offsetof(struct gg_case, dist_b),
                                   offsetof(struct gg_case, dist_bias)};
    int kept = 0;
    int n = cur->bias_dtype != GG_DTYPE_NONE ? 3 : 2;
    for (int w = 0; w < n && !min_stopped(x); w++) {
        for (int i = dist_rank((struct gg_dist *)((char *)cur + dists[w])) + 1;
             i < N_SIMPLE_DISTS && !min_stopped(x); i++) {
            struct gg_case cand;
            if (!min_clone_case(x, cur, &cand))
                break;
            struct gg_dist *d = (struct gg_dist *)((char *)&cand + dists[w]);
            enum gg_dtype fmt = d->fmt;
            *d = SIMPLE_DISTS[i];
            d->fmt = fmt;
            kept += min_try_keep(x, cur, &cand);
        }
    }
    return kept;
}

/* Output dtypes in order of simplicity: an fp32 output carries no rounding of its own. */
static const enum gg_dtype SIMPLE_OUTPUTS[] = {GG_DTYPE_F32, GG_DTYPE_BF16, GG_DTYPE_F16};
#define N_SIMPLE_OUTPUTS (int)(sizeof SIMPLE_OUTPUTS / sizeof SIMPLE_OUTPUTS[0])

/* Input formats in order of simplicity: 16-bit, then the OCP fp8 pair, the fnuz pair, fp4. */
static const enum gg_dtype SIMPLE_INPUTS[] = {GG_DTYPE_BF16, GG_DTYPE_F16, GG_DTYPE_E4M3,
                                              GG_DTYPE_E5M2, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ,
                                              GG_DTYPE_E2M1};
#define N_SIMPLE_INPUTS (int)(sizeof SIMPLE_INPUTS / sizeof SIMPLE_INPUTS[0])

static int input_rank(enum gg_dtype t)
{
    for (int i = 0; i < N_SIMPLE_INPUTS; i++)
        if (SIMPLE_INPUTS[i] == t)
            return i;
    return -1;
}

/* The input dtypes in a canonical order: the pairs of SIMPLE_INPUTS in lexicographic order, the
   first before the current pair that still fails kept (a pair the kernel does not take is
   refused, not kept), so the same bug reached through e4m3 or e5m2, through A or B, ends on one
   pair. */
static int simplest_inputs(struct ctx *x, struct gg_case *cur)
{
    int ra = input_rank(cur->a_dtype), rb = input_rank(cur->b_dtype);
    if (ra < 0 || rb < 0)
        return 0;
    for (int i = 0; i < N_SIMPLE_INPUTS * N_SIMPLE_INPUTS && !min_stopped(x); i++) {
        if (i == ra * N_SIMPLE_INPUTS + rb)
            break;
        struct gg_case cand;
        if (!min_clone_case(x, cur, &cand))
            break;
        cand.a_dtype = cand.dist_a.fmt = SIMPLE_INPUTS[i / N_SIMPLE_INPUTS];
        cand.b_dtype = cand.dist_b.fmt = SIMPLE_INPUTS[i % N_SIMPLE_INPUTS];
        if (min_try_keep(x, cur, &cand))
            return 1;
    }
    return 0;
}

/* The grouped ops in order of simplicity: a bug that the forward op shows too (a decoder, an
   epilogue) is filed there, one that needs dgrad's transposed weights or wgrad's per-group
   reduction stays where it is. */
static const enum gg_op SIMPLE_OPS[] = {GG_OP_GROUPED_FWD, GG_OP_GROUPED_DGRAD,
                                        GG_OP_GROUPED_WGRAD};
#define N_SIMPLE_OPS (int)(sizeof SIMPLE_OPS / sizeof SIMPLE_OPS[0])

/* Each simpler op is tried with the sizes as they are, then with N and K swapped (dgrad's
   reduction over N becomes the forward op's reduction over K). */
static int simplest_op(struct ctx *x, struct gg_case *cur)
{
    for (int i = 0; i < N_SIMPLE_OPS && SIMPLE_OPS[i] != cur->op && !min_stopped(x); i++) {
        int grouped = 0;
        for (int j = i + 1; j < N_SIMPLE_OPS; j++)
            grouped |= SIMPLE_OPS[j] == cur->op;
        for (int swap = 0; grouped && swap < 2 && !min_stopped(x); swap++) {
            struct gg_case cand;
            if (!min_clone_case(x, cur, &cand))
                return 0;
            cand.op = SIMPLE_OPS[i];
            if (swap) {
                int64_t n = cand.n;
                cand.n = cand.k;
                cand.k = n;
            }
            if (min_try_keep(x, cur, &cand))
                return 1;
        }
    }
    return 0;
}

/* Pass 7 (bucket mode), the simplest op, dtypes and input placement: a grouped op down
   SIMPLE_OPS, the input pair in canonical order, C's dtype down SIMPLE_OUTPUTS (an op or dtype
   the kernel does not take is refused, not kept), the inputs back into their canary bands. */
int min_pass_simplest(struct ctx *x, struct gg_case *cur)
{
    int kept = simplest_op(x, cur);
    kept += simplest_inputs(x, cur);
    int rank = N_SIMPLE_OUTPUTS;
    for (int i = 0; i < N_SIMPLE_OUTPUTS; i++)
        if (cur->c_dtype == SIMPLE_OUTPUTS[i])
            rank = i;
    struct gg_case cand;
    for (int i = 0; i < rank && !min_stopped(x); i++)
        if (min_clone_case(x, cur, &cand)) {
            cand.c_dtype = SIMPLE_OUTPUTS[i];
            if (min_try_keep(x, cur, &cand)) {
                kept++;
                break;
            }
        }
    if (cur->guard != GG_GUARD_BAND && !min_stopped(x) && min_clone_case(x, cur, &cand)) {
        cand.guard = GG_GUARD_BAND;
        kept += min_try_keep(x, cur, &cand);
    }
    return kept;
}

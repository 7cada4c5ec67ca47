/*
 * gg_minimize.c — the minimiser: shrinks a failing case while its verdict keeps one signature.
 * A candidate counts when `repeats` runs of it out of `repeats`, each in its own process, give the
 * target signature. Passes run cheapest and highest-yield first, as rounds, until a round keeps
 * nothing or the time is up: delete groups (ddmin), unify group sizes, shrink N and K together,
 * shrink every size in tile coordinates (x = q·tile + r, q first so tail bugs survive), make the
 * layout packed and drop options, and simplify the data towards small integers. Every tested
 * candidate is remembered by case id, so nothing runs twice. Bucket mode keeps the class instead
 * of the signature, and adds a first pass to the smallest sizes and a last one to the simplest
 * op, dtypes and placement: the normal form that triage files buckets by; that form is then run
 * again to tell a race (a verdict that changes from run to run) from a deterministic bug.
 */
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/minimize/gg_minimize.h"

/* Passes run once more per bucket-mode minimisation of wrong values or workspace dependence, to
   see a race change its verdict. */
#define FLAKY_CHECKS 8
/* Smaller sizes tried per group by the unify pass. */
#define UNIFY_MAX_VALUES 8

/* Outcomes of tested candidates, by case id: an open-addressing set of 128-bit keys. */
struct cache {
    struct entry {
        uint64_t hi, lo;
        int used, keep;
    } *slots;
    size_t cap, n;
};

struct ctx {
    const char *signature;
    enum gg_class cls;       /* bucket mode: the class whose family to keep */
    char cand_sig[GG_SIGNATURE_MAX]; /* signature of the candidate tested last */
    const struct gg_min_opts *o;
    struct gg_min_stats *st;
    int repeats;
    int flaky_checks;        /* passes still to be run once more (bucket mode, see reproduces) */
    double timeout_s;       /* each run's limit (0: none) */
    double t0, deadline;    /* deadline INFINITY: none */
    int64_t tile[3];         /* the kernel's tile cutting rows (M), N and K (0: not tiled) */
    struct cache cache;
    char cur_id[GG_CASE_ID_HEX + 1];
    enum gg_status fatal;    /* a harness failure that ends the minimisation */
    char *err;
    size_t err_len;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int stopped(const struct ctx *x)
{
    return x->fatal != GG_OK || x->st->stopped_at || now_s() >= x->deadline;
}

static int has_items(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD ||
           op == GG_OP_MOE_SORTED;
}

static int k_in_mx_blocks(const struct gg_case *c)
{
    return c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B;
}

/* ---- the cache ----------------------------------------------------------------------------- */

static void id_key(const char id[GG_CASE_ID_HEX + 1], uint64_t *hi, uint64_t *lo)
{
    char half[17];
    memcpy(half, id, 16);
    half[16] = '\0';
    *hi = strtoull(half, NULL, 16);
    *lo = strtoull(id + 16, NULL, 16);
}

/* The slot of key (hi, lo): its own, or the empty one where it would go. */
static struct entry *cache_slot(const struct cache *k, uint64_t hi, uint64_t lo)
{
    size_t i = (size_t)(lo ^ hi) & (k->cap - 1);
    while (k->slots[i].used && (k->slots[i].hi != hi || k->slots[i].lo != lo))
        i = (i + 1) & (k->cap - 1);
    return &k->slots[i];
}

/* 1 and *keep when id was tested, else 0. */
static int cache_find(const struct cache *k, const char *id, int *keep)
{
    uint64_t hi, lo;
    id_key(id, &hi, &lo);
    const struct entry *e = k->cap ? cache_slot(k, hi, lo) : NULL;
    if (e == NULL || !e->used)
        return 0;
    *keep = e->keep;
    return 1;
}

/* Records id; the table doubles at half load. Returns GG_E_NOMEM when it cannot grow. */
static enum gg_status cache_put(struct cache *k, const char *id, int keep)
{
    if (2 * (k->n + 1) > k->cap) {
        struct cache grown = {.cap = k->cap ? 2 * k->cap : 256};
        grown.slots = calloc(grown.cap, sizeof *grown.slots);
        if (grown.slots == NULL)
            return GG_E_NOMEM;
        for (size_t i = 0; i < k->cap; i++)
            if (k->slots[i].used)
                *cache_slot(&grown, k->slots[i].hi, k->slots[i].lo) = k->slots[i];
        grown.n = k->n;
        free(k->slots);
        *k = grown;
    }
    uint64_t hi, lo;
    id_key(id, &hi, &lo);
    struct entry *e = cache_slot(k, hi, lo);
    if (!e->used)
        k->n++;
    *e = (struct entry){.hi = hi, .lo = lo, .used = 1, .keep = keep};
    return GG_OK;
}

/* ---- the predicate ------------------------------------------------------------------------- */

/* Records a different fault met on the way (findings_dir set), as the case that ran: effective
   kernel and mutant, no metadata of the case being minimised. */
static void record_other(struct ctx *x, const struct gg_case *c, const struct gg_run_result *r)
{
    x->st->other_faults++;
    if (x->o->findings_dir == NULL)
        return;
    struct gg_case f;
    if (gg_case_copy(&f, c) != GG_OK)
        return;
    for (int i = 0; i < f.n_meta; i++) {
        free(f.meta[i].key);
        free(f.meta[i].text);
    }
    free(f.meta);
    f.meta = NULL;
    f.n_meta = 0;
    snprintf(f.kernel, sizeof f.kernel, "%s", r->kernel);
    snprintf(f.mutant, sizeof f.mutant, "%s", r->mutant);
    char msg[256];
    int is_new;
    /* A store that cannot be written costs the finding, not the minimisation. */
    (void)gg_findings_record(x->o->findings_dir, &f, &r->verdict, 0, &is_new, NULL, 0, msg,
                             sizeof msg);
    gg_case_free(&f);
}

/* 1 when v fails the way the minimisation keeps: the target's class family (bucket mode) or
   signature. */
static int same_failure(const struct ctx *x, const struct gg_verdict *v)
{
    return v->cls != GG_CLASS_PASS &&
           (x->o->bucket ? strcmp(gg_bucket_family(v->cls), gg_bucket_family(x->cls)) == 0
                         : strcmp(v->signature, x->signature) == 0);
}

/* Runs c up to `repeats` times; 1 when every run gives the target signature. */
static int reproduces(struct ctx *x, const struct gg_case *c)
{
    for (int i = 0; i < x->repeats; i++) {
        if (stopped(x))
            return 0;
        struct gg_run_result r;
        char msg[1024];
        x->st->attempts++;
        enum gg_status st = gg_run_case_isolated(c, &x->o->run, x->timeout_s, &r, msg, sizeof msg);
        int same = st == GG_OK && same_failure(x, &r.verdict);
        /* While flaky checks last, a pass is run once more: a failure then is a race seen
           changing its verdict (the candidate is kept, and the bug filed as a race). */
        if (st == GG_OK && r.verdict.cls == GG_CLASS_PASS && x->flaky_checks > 0) {
            x->flaky_checks--;
            gg_run_result_free(&r);
            x->st->attempts++;
            st = gg_run_case_isolated(c, &x->o->run, x->timeout_s, &r, msg, sizeof msg);
            same = st == GG_OK && same_failure(x, &r.verdict);
            if (same) {
                x->st->unstable = 1;
                x->st->classes_seen |= 1u | 1u << r.verdict.cls;
            }
        }
        if (same)
            snprintf(x->cand_sig, sizeof x->cand_sig, "%s", r.verdict.signature);
        if (st == GG_OK && !same && r.verdict.cls != GG_CLASS_PASS)
            record_other(x, c, &r);
        gg_run_result_free(&r);
        if (!same)
            return 0;
    }
    return 1;
}

/* 1 when candidate c (edited, not yet checked) is valid, new and keeps the signature. */
static int interesting(struct ctx *x, struct gg_case *c)
{
    char msg[256], id[GG_CASE_ID_HEX + 1];
    if (stopped(x) || gg_case_check(c, msg, sizeof msg) != GG_OK ||
        gg_case_expand(c, msg, sizeof msg) != GG_OK)
        return 0;
    gg_case_id(c, id);
    int keep;
    if (strcmp(id, x->cur_id) == 0)
        return 0;
    /* In bucket mode a kept case is run again: its signature is part of the answer. */
    if (cache_find(&x->cache, id, &keep) && !(x->o->bucket && keep)) {
        x->st->cache_hits++;
        return keep;
    }
    keep = reproduces(x, c);
    if (stopped(x) && !keep) /* cut short by the clock: unknown, not a rejection */
        return 0;
    if (cache_put(&x->cache, id, keep) != GG_OK) {
        snprintf(x->err, x->err_len, "minimize: out of memory for the candidate cache");
        x->fatal = GG_E_NOMEM;
    }
    return keep;
}

/* The detail of one more run of the final case c, for its @observed line: what a replay of it
   shows, whatever the runs before it showed. */
static void final_detail(struct ctx *x, const struct gg_case *c)
{
    struct gg_run_result r;
    char msg[512];
    x->st->attempts++;
    if (gg_run_case_isolated(c, &x->o->run, x->timeout_s, &r, msg, sizeof msg) != GG_OK)
        return;
    if (same_failure(x, &r.verdict))
        snprintf(x->st->detail, sizeof x->st->detail, "%s", r.verdict.detail);
    gg_run_result_free(&r);
}

/* Starts a candidate: a copy of cur. 0 (and a fatal status) when out of memory. */
static int clone_case(struct ctx *x, const struct gg_case *cur, struct gg_case *cand)
{
    if (x->fatal == GG_OK && gg_case_copy(cand, cur) == GG_OK)
        return 1;
    if (x->fatal == GG_OK) {
        snprintf(x->err, x->err_len, "minimize: out of memory copying a candidate");
        x->fatal = GG_E_NOMEM;
    }
    return 0;
}

/* Tests cand: when interesting it replaces cur (returns 1), otherwise it is freed. */
static int try_keep(struct ctx *x, struct gg_case *cur, struct gg_case *cand)
{
    if (!interesting(x, cand)) {
        gg_case_free(cand);
        return 0;
    }
    gg_case_free(cur);
    *cur = *cand;
    gg_case_id(cur, x->cur_id);
    x->st->kept++;
    snprintf(x->st->signature, sizeof x->st->signature, "%s", x->cand_sig);
    /* (a race is filed as a race, not at the signature it happened to show as) */
    if (x->o->bucket && x->o->stop_at && !x->st->unstable &&
        x->o->stop_at(x->cand_sig, x->o->stop_arg))
        x->st->stopped_at = 1;
    return 1;
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
static enum gg_status explode_items(struct gg_case *c, char *err, size_t err_len)
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
    if (v < 0 || v == size_get(cur, s) || !clone_case(x, cur, &cand))
        return 0;
    size_set(&cand, s, v);
    return try_keep(x, cur, &cand);
}

/* Smallest t in [lo, hi] for which size s = base + t·step keeps the signature, by binary
   search (hi is where s is now and is not tested). Returns the number of kept steps. */
static int search_size(struct ctx *x, struct gg_case *cur, struct size_ref s, int64_t base,
                       int64_t step, int64_t lo, int64_t hi)
{
    int kept = 0;
    while (lo < hi && !stopped(x)) {
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
static void tiles_of(enum gg_op op, const struct gg_kernel *k, int64_t tile[3])
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
static int pass_smallest(struct ctx *x, struct gg_case *cur)
{
    int kept = 0;
    for (int64_t g = 0; has_items(cur->op) && g < cur->groups && !stopped(x); g++)
        if (size_get(cur, (struct size_ref){SIZE_GROUP, g}) > 1)
            kept += try_size(x, cur, (struct size_ref){SIZE_GROUP, g}, 1);
    static const enum size_kind dims[] = {SIZE_M, SIZE_N, SIZE_K};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0] && !stopped(x); i++) {
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
static int pass_delete(struct ctx *x, struct gg_case *cur)
{
    if (cur->op == GG_OP_BATCHED)
        return shrink_size(x, cur, (struct size_ref){SIZE_BATCH, 0});
    if (!has_items(cur->op))
        return 0;
    int kept = 0;
    for (int64_t chunk = (cur->groups + 1) / 2; chunk >= 1 && !stopped(x); chunk /= 2) {
        if (chunk > (cur->groups + 1) / 2)
            chunk = (cur->groups + 1) / 2;
        for (int64_t lo = 0; lo < cur->groups && cur->groups > 1 && !stopped(x);) {
            int64_t hi = lo + chunk < cur->groups ? lo + chunk : cur->groups;
            struct gg_case cand;
            if (hi - lo >= cur->groups || !clone_case(x, cur, &cand)) {
                lo = hi;
                continue;
            }
            delete_groups(&cand, lo, hi);
            if (try_keep(x, cur, &cand))
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
    for (int64_t g = 0; g + 1 < cur->groups && !stopped(x);) {
        struct gg_case cand;
        if (!clone_case(x, cur, &cand))
            break;
        cand.items[g].value += cand.items[g + 1].value;
        delete_groups(&cand, g + 1, g + 2);
        if (try_keep(x, cur, &cand))
            kept++;
        else
            g++;
    }
    return kept;
}

/* Pass 2, unify groups: neighbours merged, then each group takes the size of another group,
   smaller ones first. */
static int pass_unify(struct ctx *x, struct gg_case *cur)
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
    for (int64_t g = 0; g < cur->groups && !stopped(x); g++) {
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
static int pass_nk(struct ctx *x, struct gg_case *cur)
{
    int64_t unit = k_in_mx_blocks(cur) ? GG_MX_BLOCK : 1;
    int kept = 0;
    for (int j = 1; j < 63 && !stopped(x);) {
        int64_t n = cur->n - (cur->n >> j), k = (cur->k - (cur->k >> j)) / unit * unit;
        if (n == cur->n && k == cur->k)
            break;
        struct gg_case cand;
        if (!clone_case(x, cur, &cand))
            break;
        cand.n = n;
        cand.k = k;
        if (try_keep(x, cur, &cand)) {
            kept++;
            j = 1;
        } else {
            j++;
        }
    }
    return kept;
}

/* Pass 4, every size in tile coordinates: group sizes (expert loads), m, n, k. */
static int pass_tiles(struct ctx *x, struct gg_case *cur)
{
    int kept = 0;
    for (int64_t g = 0; has_items(cur->op) && g < cur->groups && !stopped(x); g++)
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
static int pass_canon(struct ctx *x, struct gg_case *cur)
{
    int kept = 0, nonzero = 0;
    struct gg_case cand;
    for (size_t i = 0; i < N_LAYOUT_FIELDS; i++)
        nonzero += *layout_field(cur, i) != 0;
    if (nonzero > 1 && clone_case(x, cur, &cand)) {
        for (size_t i = 0; i < N_LAYOUT_FIELDS; i++)
            *layout_field(&cand, i) = 0;
        kept += try_keep(x, cur, &cand);
    }
    for (size_t i = 0; i < N_LAYOUT_FIELDS && !stopped(x); i++)
        if (*layout_field(cur, i) != 0 && clone_case(x, cur, &cand)) {
            *layout_field(&cand, i) = 0;
            kept += try_keep(x, cur, &cand);
        }
    for (int i = 0; i < cur->n_opts && !stopped(x);) {
        if (!clone_case(x, cur, &cand))
            break;
        drop_option(&cand, i);
        if (try_keep(x, cur, &cand))
            kept++;
        else
            i++;
    }
    if (cur->bias_dtype != GG_DTYPE_NONE && clone_case(x, cur, &cand)) {
        drop_bias(&cand);
        kept += try_keep(x, cur, &cand);
    }
    if (cur->plant_e8m0 != 0.0 && clone_case(x, cur, &cand)) {
        cand.plant_e8m0 = 0.0;
        kept += try_keep(x, cur, &cand);
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
static int pass_data(struct ctx *x, struct gg_case *cur)
{
    static const size_t dists[] = {offsetof(struct gg_case, dist_a),
                                   offsetof(struct gg_case, dist_b),
                                   offsetof(struct gg_case, dist_bias)};
    int kept = 0;
    int n = cur->bias_dtype != GG_DTYPE_NONE ? 3 : 2;
    for (int w = 0; w < n && !stopped(x); w++) {
        for (int i = dist_rank((struct gg_dist *)((char *)cur + dists[w])) + 1;
             i < N_SIMPLE_DISTS && !stopped(x); i++) {
            struct gg_case cand;
            if (!clone_case(x, cur, &cand))
                break;
            struct gg_dist *d = (struct gg_dist *)((char *)&cand + dists[w]);
            enum gg_dtype fmt = d->fmt;
            *d = SIMPLE_DISTS[i];
            d->fmt = fmt;
            kept += try_keep(x, cur, &cand);
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
    for (int i = 0; i < N_SIMPLE_INPUTS * N_SIMPLE_INPUTS && !stopped(x); i++) {
        if (i == ra * N_SIMPLE_INPUTS + rb)
            break;
        struct gg_case cand;
        if (!clone_case(x, cur, &cand))
            break;
        cand.a_dtype = cand.dist_a.fmt = SIMPLE_INPUTS[i / N_SIMPLE_INPUTS];
        cand.b_dtype = cand.dist_b.fmt = SIMPLE_INPUTS[i % N_SIMPLE_INPUTS];
        if (try_keep(x, cur, &cand))
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
    for (int i = 0; i < N_SIMPLE_OPS && SIMPLE_OPS[i] != cur->op && !stopped(x); i++) {
        int grouped = 0;
        for (int j = i + 1; j < N_SIMPLE_OPS; j++)
            grouped |= SIMPLE_OPS[j] == cur->op;
        for (int swap = 0; grouped && swap < 2 && !stopped(x); swap++) {
            struct gg_case cand;
            if (!clone_case(x, cur, &cand))
                return 0;
            cand.op = SIMPLE_OPS[i];
            if (swap) {
                int64_t n = cand.n;
                cand.n = cand.k;
                cand.k = n;
            }
            if (try_keep(x, cur, &cand))
                return 1;
        }
    }
    return 0;
}

/* Pass 7 (bucket mode), the simplest op, dtypes and input placement: a grouped op down
   SIMPLE_OPS, the input pair in canonical order, C's dtype down SIMPLE_OUTPUTS (an op or dtype
   the kernel does not take is refused, not kept), the inputs back into their canary bands. */
static int pass_simplest(struct ctx *x, struct gg_case *cur)
{
    int kept = simplest_op(x, cur);
    kept += simplest_inputs(x, cur);
    int rank = N_SIMPLE_OUTPUTS;
    for (int i = 0; i < N_SIMPLE_OUTPUTS; i++)
        if (cur->c_dtype == SIMPLE_OUTPUTS[i])
            rank = i;
    struct gg_case cand;
    for (int i = 0; i < rank && !stopped(x); i++)
        if (clone_case(x, cur, &cand)) {
            cand.c_dtype = SIMPLE_OUTPUTS[i];
            if (try_keep(x, cur, &cand)) {
                kept++;
                break;
            }
        }
    if (cur->guard != GG_GUARD_BAND && !stopped(x) && clone_case(x, cur, &cand)) {
        cand.guard = GG_GUARD_BAND;
        kept += try_keep(x, cur, &cand);
    }
    return kept;
}

/* ---- driver -------------------------------------------------------------------------------- */

/* Every other stability run is pinned to one CPU of the process's set (the run's child inherits
   it): a schedule that a kernel's threads rarely meet on several CPUs, so that a race whose
   outcome the usual schedule fixes still changes the verdict. 1 when pinned. */
static int pin_one_cpu(const cpu_set_t *all)
{
    if (CPU_COUNT(all) < 2)
        return 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, all)) {
            CPU_SET(cpu, &one);
            break;
        }
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

/* Runs c `runs` more times, every other one on one CPU: another verdict than sig (a pass
   included) marks the bug unstable. The classes the runs gave are added to st->classes_seen. */
static void check_stability(struct ctx *x, const struct gg_case *c, const char *sig, int runs)
{
    cpu_set_t all;
    int have_set = sched_getaffinity(0, sizeof all, &all) == 0;
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)strcspn(sig, "/"), sig);
    enum gg_class kept = gg_class_from_name(cls);
    if (kept != GG_CLASS_COUNT)
        x->st->classes_seen |= 1u << kept;
    for (int i = 0; i < runs && x->fatal == GG_OK; i++) {
        struct gg_run_result r;
        char msg[1024];
        x->st->attempts++;
        int pinned = have_set && i % 2 == 0 && pin_one_cpu(&all);
        enum gg_status st = gg_run_case_isolated(c, &x->o->run, x->timeout_s, &r, msg, sizeof msg);
        if (pinned)
            sched_setaffinity(0, sizeof all, &all);
        if (st != GG_OK)
            continue; /* the harness could not run it: no verdict to compare */
        if (r.verdict.cls != GG_CLASS_TIMEOUT) {
            x->st->classes_seen |= 1u << r.verdict.cls;
            x->st->unstable |= strcmp(r.verdict.signature, sig) != 0;
        }
        gg_run_result_free(&r);
    }
}

/* A race can be lost the same way by every run of a small case, so a finding of the families a
   lost race shows as (wrong values, workspace dependence) is checked as found too, before it
   shrinks: half the stability runs. Not one that reaches past 2^31 elements: a wrapped read finds
   whatever lies there, which changes from run to run without any race. */
static int check_found_case(const struct ctx *x, const struct gg_case *c)
{
    const char *family = gg_bucket_family(x->cls);
    char far[4];
    if (!x->o->bucket || x->o->stability_runs < 2 ||
        (strcmp(family, gg_bucket_family(GG_CLASS_SNR)) != 0 &&
         strcmp(family, gg_bucket_family(GG_CLASS_WORKSPACE)) != 0))
        return 0;
    gg_bucket_far_operands(c, far);
    return far[0] == '\0';
}

/* Groups and logical output elements of an expanded case (moe_sorted: m·topk rows of n, which
   needs no routing). */
static void measure(const struct gg_case *c, int64_t *groups, int64_t *elems)
{
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(c, opts, &p);
    *groups = p.groups;
    *elems = p.op == GG_OP_MOE_SORTED ? p.m * p.topk * p.n : gg_problem_out_elems(&p);
}

typedef int (*pass_fn)(struct ctx *x, struct gg_case *cur);
static const pass_fn PASSES[] = {pass_delete, pass_unify, pass_nk, pass_tiles, pass_canon,
                                 pass_data};
static const pass_fn BUCKET_PASSES[] = {pass_smallest, pass_delete, pass_unify,  pass_nk,
                                        pass_tiles,    pass_canon,  pass_data,   pass_simplest};

enum gg_status gg_minimize(struct gg_case *c, const char *signature, const struct gg_min_opts *o,
                           struct gg_min_stats *st, char *err, size_t err_len)
{
    memset(st, 0, sizeof *st);
    struct ctx x = {
        .signature = signature,
        .o = o,
        .st = st,
        .repeats = o->repeats > 0 ? o->repeats : 1,
        /* 0 here: no limit (gg_run_case_isolated) */
        .timeout_s = o->timeout_s > 0   ? o->timeout_s
                     : o->timeout_s < 0 ? 0
                                        : GG_MIN_DEFAULT_TIMEOUT_S,
        .t0 = now_s(),
        .fatal = GG_OK,
        .err = err,
        .err_len = err_len,
    };
    x.deadline = o->max_total_time_s > 0   ? x.t0 + o->max_total_time_s
                 : o->max_total_time_s < 0 ? INFINITY
                                           : x.t0 + GG_MIN_DEFAULT_TIME_S;
    snprintf(st->signature, sizeof st->signature, "%s", signature);
    char cls[32];
    snprintf(cls, sizeof cls, "%.*s", (int)strcspn(signature, "/"), signature);
    x.cls = gg_class_from_name(cls);
    enum gg_status s;
    if (o->bucket && (x.cls == GG_CLASS_COUNT || x.cls == GG_CLASS_PASS)) {
        snprintf(err, err_len, "minimize: signature '%s' names no fault class", signature);
        return GG_E_INVAL;
    }
    if ((s = gg_case_check(c, err, err_len)) != GG_OK ||
        (s = explode_items(c, err, err_len)) != GG_OK ||
        (s = gg_case_expand(c, err, err_len)) != GG_OK)
        return s;
    gg_registry_init();
    const struct gg_kernel *k = gg_registry_find(o->run.kernel ? o->run.kernel : c->kernel);
    if (k != NULL)
        tiles_of(c->op, k, x.tile);
    measure(c, &st->groups_before, &st->elems_before);
    gg_case_id(c, x.cur_id);
    if ((s = cache_put(&x.cache, x.cur_id, 1)) != GG_OK) {
        snprintf(err, err_len, "minimize: out of memory");
        return s;
    }
    if (check_found_case(&x, c)) {
        check_stability(&x, c, signature, o->stability_runs / 2);
        x.flaky_checks = FLAKY_CHECKS;
    }
    const pass_fn *passes = o->bucket ? BUCKET_PASSES : PASSES;
    size_t n_passes = o->bucket ? sizeof BUCKET_PASSES / sizeof BUCKET_PASSES[0]
                                : sizeof PASSES / sizeof PASSES[0];
    while (!stopped(&x)) {
        int kept = 0;
        for (size_t i = 0; i < n_passes && !stopped(&x); i++) {
            int by_pass = passes[i](&x, c);
            kept += by_pass;
            /* Saved after every pass that shrank the case: a killed minimiser loses one pass. */
            if (by_pass > 0 && o->progress_path != NULL && x.fatal == GG_OK &&
                (s = gg_case_save(c, o->progress_path, err, err_len)) != GG_OK)
                x.fatal = s;
        }
        st->rounds++;
        if (kept == 0) {
            st->fixpoint = !stopped(&x);
            break;
        }
    }
    if (o->bucket && st->fixpoint && !st->stopped_at)
        check_stability(&x, c, st->signature, o->stability_runs);
    final_detail(&x, c);
    measure(c, &st->groups_after, &st->elems_after);
    st->seconds = now_s() - x.t0;
    free(x.cache.slots);
    return x.fatal;
}

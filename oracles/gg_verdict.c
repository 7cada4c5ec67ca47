/*
 * gg_verdict.c — verdicts: class names and exit codes, the class of a run by precedence from the
 * comparison and the structural observations, its headline metrics, one-line detail and advisory
 * (a source SNR that the recipe lost, not the kernel), and the signature that names the bug
 * (class/kernel/dtypes/op/shape/groups/region/magnitude), which is free of raw sizes so that
 * every case of one bug shares it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oracles/gg_oracle_int.h"

/* The verdict classes: name, exit code, precedence (when several fire, the lowest wins: a run
   that crashed says nothing about its values) and the help line. Adding a class is one row here
   and its enum value in gg_oracle.h. Exit codes are 10 + the enum value, except device: 20 was
   replay's "did not reproduce" before the class came. */
static const struct class_row {
    const char *name;
    int exit_code, precedence;
    const char *help;
} CLASSES[GG_CLASS_COUNT] = {
    [GG_CLASS_PASS] = {"pass", 0, 0, "every check passed"},
    [GG_CLASS_CRASH] = {"crash", 11, 1, "the kernel's process died on a signal"},
    [GG_CLASS_TIMEOUT] = {"timeout", 12, 2, "the kernel ran past its time limit"},
    [GG_CLASS_OOB_WRITE] = {"oob_write", 13, 3, "a guard band or padding element changed"},
    [GG_CLASS_INPUT_MODIFIED] = {"input_modified", 14, 4, "a read-only operand changed"},
    [GG_CLASS_UNWRITTEN] = {"unwritten", 15, 5, "an output element still holds the sentinel"},
    [GG_CLASS_NAN] = {"nan", 16, 6, "NaN or Inf where the reference is finite, or the reverse"},
    [GG_CLASS_WORKSPACE] = {"workspace", 17, 7,
                            "the output depends on the workspace's initial contents"},
    [GG_CLASS_NONDETERMINISM] = {"nondeterminism", 18, 8, "two identical runs differ"},
    [GG_CLASS_SNR] = {"snr", 19, 9, "wrong or too noisy: SNR below threshold or past a bound"},
    [GG_CLASS_DEVICE] = {"device", 21, 10, "a sticky GPU error (illegal address, launch failure)"},
};

static const char *const region_names[GG_REGION_COUNT] = {
    [GG_REGION_NONE] = "none",
    [GG_REGION_ALL] = "all",
    [GG_REGION_ROWS_TAIL] = "rows_tail",
    [GG_REGION_COLS_TAIL] = "cols_tail",
    [GG_REGION_SINGLE_TILE] = "single_tile",
    [GG_REGION_SCATTERED] = "scattered",
    [GG_REGION_GUARD_PRE] = "guard_pre",
    [GG_REGION_GUARD_POST] = "guard_post",
};


const char *gg_class_name(enum gg_class c)
{
    return (unsigned)c < GG_CLASS_COUNT ? CLASSES[c].name : "unknown";
}

enum gg_class gg_class_from_name(const char *name)
{
    for (int c = 0; name && c < GG_CLASS_COUNT; c++)
        if (strcmp(CLASSES[c].name, name) == 0)
            return (enum gg_class)c;
    return GG_CLASS_COUNT;
}

int gg_class_exit_code(enum gg_class c)
{
    return (unsigned)c < GG_CLASS_COUNT ? CLASSES[c].exit_code : 1;
}

const char *gg_class_help(enum gg_class c)
{
    return (unsigned)c < GG_CLASS_COUNT ? CLASSES[c].help : "unknown class";
}

int gg_class_precedence(enum gg_class c)
{
    return (unsigned)c < GG_CLASS_COUNT ? CLASSES[c].precedence : GG_CLASS_COUNT;
}

int gg_class_more_severe(enum gg_class a, enum gg_class b)
{
    return a != GG_CLASS_PASS && (b == GG_CLASS_PASS || gg_class_precedence(a) < gg_class_precedence(b));
}

const char *gg_region_name(enum gg_region r)
{
    return (unsigned)r < GG_REGION_COUNT ? region_names[r] : "unknown";
}

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

/* An empty group holds no tokens (grouped ops) or no outputs (batched, dense). A wgrad group
   with no tokens is empty although it owns its N×K zeros. */
static int group_empty(const struct gg_problem *p, const struct gg_compare *cmp, int64_t g)
{
    return is_grouped(p->op) ? p->group_lens[g] == 0 : cmp->groups[g].elems == 0;
}

/* Per-group failures of cmp against t, collected once. */
struct fails {
    int pooled;      /* the pooled SNR fails */
    int src;         /* the source SNR fails */
    int64_t n;       /* failing groups */
    int64_t first;   /* first failing group, or -1 */
    int64_t worst;   /* failing group with the lowest SNR, or -1 */
};

static void collect_fails(const struct gg_threshold *t, const struct gg_compare *cmp,
                          struct gg_verdict *v, struct fails *f)
{
    f->pooled = !cmp->snr_advisory && gg_oracle_pooled_fails(t, cmp);
    f->src = gg_oracle_src_fails(t, cmp);
    f->n = 0;
    f->first = f->worst = -1;
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        const struct gg_group_metrics *gm = &cmp->groups[g];
        if (gm->elems > 0 && (v->worst_group < 0 || gm->snr_db < v->worst_snr_db)) {
            v->worst_group = g;
            v->worst_snr_db = gm->snr_db;
        }
        if (!gg_oracle_group_fails(t, gm, f->pooled, cmp->snr_advisory))
            continue;
        if (f->n < GG_VERDICT_GROUPS_MAX)
            v->fail_groups[f->n] = g;
        if (f->first < 0)
            f->first = g;
        if (f->worst < 0 || gm->snr_db < cmp->groups[f->worst].snr_db)
            f->worst = g;
        f->n++;
    }
    v->n_fail_groups = f->n;
    v->max_ratio = cmp->max_ratio;
}

/* The class of highest precedence among those that fired. */
static enum gg_class pick_class(const struct gg_compare *cmp, const struct gg_observations *obs,
                                const struct fails *f)
{
    int fired[GG_CLASS_COUNT] = {0};
    if (obs) {
        fired[GG_CLASS_CRASH] = obs->crash_signal != 0;
        fired[GG_CLASS_TIMEOUT] = obs->timeout_s > 0;
        fired[GG_CLASS_OOB_WRITE] = obs->guard_hit || obs->padding_hit;
        fired[GG_CLASS_INPUT_MODIFIED] = obs->input_modified;
        fired[GG_CLASS_WORKSPACE] = obs->workspace_dep;
        fired[GG_CLASS_NONDETERMINISM] = obs->nondeterministic;
        fired[GG_CLASS_DEVICE] = obs->device_error;
    }
    if (cmp) {
        fired[GG_CLASS_UNWRITTEN] = cmp->n_unwritten > 0;
        fired[GG_CLASS_NAN] = cmp->n_nan > 0;
        fired[GG_CLASS_SNR] = f->n > 0 || f->src || cmp->n_bound > 0;
    }
    enum gg_class best = GG_CLASS_PASS;
    for (int c = GG_CLASS_PASS + 1; c < GG_CLASS_COUNT; c++)
        if (fired[c] && gg_class_more_severe((enum gg_class)c, best))
            best = (enum gg_class)c;
    return best;
}

/* First group of cmp with an unwritten element (cls UNWRITTEN) or a NaN mismatch (NAN). */
static int64_t first_group_with(const struct gg_compare *cmp, enum gg_class cls)
{
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        const struct gg_group_metrics *gm = &cmp->groups[g];
        if ((cls == GG_CLASS_UNWRITTEN ? gm->n_unwritten : gm->n_nan) > 0)
            return g;
    }
    return -1;
}

static void make_detail(const struct gg_compare *cmp, const struct gg_observations *obs,
                        const struct gg_threshold *t, const struct fails *f, struct gg_verdict *v)
{
    char *d = v->detail;
    size_t len = sizeof v->detail;
    const char *more = f->n > 1 ? " (and other groups)" : "";
    int64_t g;
    switch (v->cls) {
    case GG_CLASS_CRASH:
        if (obs->crash_signal < 0)
            snprintf(d, len, "the process running the kernel exited without a result");
        else if (obs->fault_where != GG_FAULT_NONE)
            snprintf(d, len, "the kernel %s %s %c and died on signal %d (%s)",
                     obs->fault_write < 0 ? "accessed" : obs->fault_write ? "wrote" : "read",
                     obs->fault_where == GG_FAULT_PAST_END       ? "past the end of"
                     : obs->fault_where == GG_FAULT_BEFORE_START ? "before the start of"
                                                                 : "an unused row of",
                     "ABC"[obs->fault_operand % 3], obs->crash_signal,
                     strsignal(obs->crash_signal));
        else
            snprintf(d, len, "the process running the kernel died on signal %d (%s)",
                     obs->crash_signal, strsignal(obs->crash_signal));
        break;
    case GG_CLASS_TIMEOUT:
        snprintf(d, len, "the kernel ran past its %g s limit and was killed", obs->timeout_s);
        break;
    case GG_CLASS_OOB_WRITE:
        if (obs->guard_hit)
            snprintf(d, len, "guard band %s the output or workspace hit",
                     obs->guard_pre ? "before" : "after");
        else
            snprintf(d, len, "padding of the output (between rows or groups) changed");
        break;
    case GG_CLASS_INPUT_MODIFIED:
        snprintf(d, len, "a read-only input (operands, scales or group arrays) changed");
        break;
    case GG_CLASS_UNWRITTEN:
        g = first_group_with(cmp, GG_CLASS_UNWRITTEN);
        snprintf(d, len, "group %lld: %lld of %lld outputs unwritten, first at packed index %lld%s",
                 (long long)g, (long long)cmp->groups[g].n_unwritten,
                 (long long)cmp->groups[g].elems, (long long)cmp->groups[g].first_bad, more);
        break;
    case GG_CLASS_NAN:
        g = first_group_with(cmp, GG_CLASS_NAN);
        snprintf(d, len, "group %lld: %lld NaN/Inf mismatches, first at packed index %lld%s",
                 (long long)g, (long long)cmp->groups[g].n_nan, (long long)cmp->groups[g].first_bad,
                 more);
        break;
    case GG_CLASS_WORKSPACE:
        snprintf(d, len, "output depends on the initial contents of the workspace");
        break;
    case GG_CLASS_NONDETERMINISM:
        snprintf(d, len, "two runs with identical inputs and workspace gave different outputs");
        break;
    case GG_CLASS_DEVICE:
        snprintf(d, len, "a sticky GPU error (illegal address or launch failure) lost the device");
        break;
    case GG_CLASS_SNR:
        if (f->worst < 0) {
            snprintf(d, len, "source snr %.1f dB < %g dB, where the exact reference reaches %.1f dB",
                     cmp->src_snr_db, t->snr_src_fail_db, cmp->ref_src_snr_db);
            break;
        }
        g = f->worst;
        snprintf(d, len, "group %lld: snr %.1f dB%s%g dB, %lld elements past bound, max ratio %.3g%s",
                 (long long)g, cmp->groups[g].snr_db,
                 cmp->groups[g].snr_db < t->snr_fail_db ? " < " : " >= ", t->snr_fail_db,
                 (long long)cmp->groups[g].n_bound, cmp->groups[g].max_ratio, more);
        break;
    default:
        if (v->worst_group >= 0)
            snprintf(d, len, "pass: worst snr %.1f dB (group %lld), max ratio %.3g",
                     v->worst_snr_db, (long long)v->worst_group, v->max_ratio);
        else
            snprintf(d, len, "pass: %s", cmp ? "no outputs" : "not compared");
        break;
    }
}

/* Class of a dimension of length x cut into tiles of tile (0: unknown tile). */
static const char *dim_class(int64_t x, int64_t tile)
{
    if (x == 0)
        return "zero";
    if (x == 1)
        return "one";
    if (tile <= 0)
        return "any";
    if (x < tile)
        return "lt_tile";
    return x % tile == 0 ? "aligned" : "tail";
}

/* m, n, k each classed against the tile that cuts it in the output: the row tile for the rows
   of C, the column tile for its columns, the K step for the reduction (M for wgrad). */
static void shape_class(const struct gg_problem *p, int64_t tm, int64_t tn, int64_t tk, char *buf,
                        size_t len)
{
    int64_t t_m = tm, t_n = tn, t_k = tk;
    if (p->op == GG_OP_GROUPED_DGRAD) {
        t_n = tk;
        t_k = tn;
    } else if (p->op == GG_OP_GROUPED_WGRAD) {
        t_m = tk;
        t_n = tm;
        t_k = tn;
    }
    snprintf(buf, len, "m:%s,n:%s,k:%s", dim_class(p->m, t_m), dim_class(p->n, t_n),
             dim_class(p->k, t_k));
}

/* Failing-group facts for the group pattern. */
struct group_scan {
    int64_t with_out, first_out, last_out; /* groups with outputs, first and last of them */
    int64_t fail_empty;                    /* failing groups that are empty */
    int all_after_empty;                   /* every failing group directly follows an empty one */
};

static void scan_groups(const struct gg_problem *p, const struct gg_compare *cmp,
                        const struct gg_threshold *t, const struct fails *f, struct group_scan *s)
{
    *s = (struct group_scan){0, -1, -1, 0, 1};
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        int fails = gg_oracle_group_fails(t, &cmp->groups[g], f->pooled, cmp->snr_advisory);
        if (fails && group_empty(p, cmp, g))
            s->fail_empty++;
        if (fails && (g == 0 || !group_empty(p, cmp, g - 1)))
            s->all_after_empty = 0;
        if (cmp->groups[g].elems > 0) {
            s->first_out = s->first_out < 0 ? g : s->first_out;
            s->last_out = g;
            s->with_out++;
        }
    }
}

/* The failing groups are exactly the groups with outputs after the last empty group e before
   the first failure, and some group with outputs before e passes: the run of groups after an
   empty one that a pointer advanced only for non-empty groups corrupts. */
static int tail_after_empty(const struct gg_problem *p, const struct gg_compare *cmp,
                            const struct fails *f)
{
    int64_t e = f->first - 1;
    while (e >= 0 && !group_empty(p, cmp, e))
        e--;
    if (e < 0)
        return 0;
    int64_t before = 0, after = 0;
    for (int64_t g = 0; g < cmp->n_groups; g++) {
        if (cmp->groups[g].elems == 0 || g == e)
            continue;
        if (g < e)
            before++;
        else
            after++;
    }
    return before > 0 && after == f->n;
}

/*
 * Which groups fail, by precedence: none; empty (only empty groups fail, e.g. a K = 0 wgrad that
 * never writes its zeros); all (every group with outputs); after_empty (each failing group
 * directly follows an empty group, or the failures are the whole run of groups after one);
 * first / last (the one failing group is the first / last group with outputs); single; many.
 */
static const char *group_pattern(const struct gg_problem *p, const struct gg_compare *cmp,
                                 const struct gg_threshold *t, const struct fails *f)
{
    if (f->n == 0)
        return "none";
    struct group_scan s;
    scan_groups(p, cmp, t, f, &s);
    if (s.fail_empty == f->n)
        return "empty";
    if (f->n == s.with_out)
        return "all";
    if (s.all_after_empty || tail_after_empty(p, cmp, f))
        return "after_empty";
    if (f->n > 1)
        return "many";
    return f->first == s.first_out ? "first" : f->first == s.last_out ? "last" : "single";
}

static int structural(enum gg_class c)
{
    return c != GG_CLASS_NAN && c != GG_CLASS_SNR;
}

/* Which groups fail says something only for the element classes: a workspace, determinism or
   guard fault shows in whichever groups the run happened to touch. */
static const char *group_pattern_of(const struct gg_problem *p, enum gg_class cls,
                                    const struct gg_compare *cmp, const struct gg_threshold *t,
                                    const struct fails *f)
{
    int element = cls == GG_CLASS_UNWRITTEN || cls == GG_CLASS_NAN || cls == GG_CLASS_SNR;
    return cmp && element ? group_pattern(p, cmp, t, f) : "none";
}

static enum gg_region verdict_region(const struct gg_verdict *v, const struct gg_compare *cmp,
                                     const struct gg_observations *obs)
{
    switch (v->cls) {
    case GG_CLASS_OOB_WRITE:
        return obs->guard_hit && obs->guard_pre ? GG_REGION_GUARD_PRE : GG_REGION_GUARD_POST;
    case GG_CLASS_UNWRITTEN:
    case GG_CLASS_NAN:
    case GG_CLASS_SNR: return cmp->region;
    default: return GG_REGION_NONE;
    }
}

/* The region field of a signature: the region's name, or for a fault on a guard page of an
   operand where it was (a_past_end, b_before_start, c_unused, ...). */
static void region_text(const struct gg_verdict *v, const struct gg_compare *cmp,
                        const struct gg_observations *obs, char *out, size_t len)
{
    static const char *const where[] = {"", "past_end", "before_start", "unused"};
    if (v->cls == GG_CLASS_CRASH && obs && obs->fault_where != GG_FAULT_NONE)
        snprintf(out, len, "%c_%s", "abc"[obs->fault_operand % 3], where[obs->fault_where]);
    else
        snprintf(out, len, "%s", gg_region_name(verdict_region(v, cmp, obs)));
}

static void make_signature(const struct gg_problem *p, const char *kernel_name, int64_t tm,
                           int64_t tn, int64_t tk, const struct gg_compare *cmp,
                           const struct gg_observations *obs, const struct gg_threshold *t,
                           const struct fails *f, struct gg_verdict *v)
{
    if (v->cls == GG_CLASS_PASS) {
        snprintf(v->signature, sizeof v->signature, "pass");
        return;
    }
    /* The kernel name is a field: no separators inside it. */
    char kernel[80];
    snprintf(kernel, sizeof kernel, "%s", kernel_name && kernel_name[0] ? kernel_name : "unknown");
    for (char *s = kernel; *s; s++)
        if (*s == '/' || *s == ' ')
            *s = '_';
    char shape[64];
    shape_class(p, tm, tn, tk, shape, sizeof shape);
    const char *magnitude = structural(v->cls)                        ? "structural"
                            : v->cls == GG_CLASS_NAN || cmp->n_nan > 0 ? "nan"
                            : v->worst_snr_db <= 0                     ? "garbage"
                                                                       : "degraded";
    char region[32];
    region_text(v, cmp, obs, region, sizeof region);
    snprintf(v->signature, sizeof v->signature, "%s/%s/%s-%s-%s/%s/%s/g:%s/%s/%s",
             gg_class_name(v->cls), kernel, gg_dtype_name(p->a_dtype), gg_dtype_name(p->b_dtype),
             gg_dtype_name(p->c_dtype),
             gg_op_name(p->op), shape,
             group_pattern_of(p, v->cls, cmp, t, f), region, magnitude);
}

void gg_verdict_make(const struct gg_problem *p, const char *kernel_name, int64_t tile_m,
                     int64_t tile_n, int64_t tile_k, const struct gg_compare *cmp,
                     const struct gg_observations *obs, struct gg_verdict *v)
{
    const struct gg_threshold at = gg_threshold_at(p), *t = &at;
    struct fails f = {0, 0, 0, -1, -1};
    memset(v, 0, sizeof *v);
    v->snr_fail_db = t->snr_fail_db;
    v->worst_group = -1;
    v->worst_snr_db = cmp ? INFINITY : NAN;
    if (cmp)
        collect_fails(t, cmp, v, &f);
    v->cls = pick_class(cmp, obs, &f);
    make_detail(cmp, obs, t, &f, v);
    if (cmp && gg_oracle_src_recipe_loss(t, cmp))
        snprintf(v->advisory, sizeof v->advisory,
                 "source snr %.1f dB < %g dB is the recipe's own loss: the exact product of the "
                 "quantised inputs reaches %.1f dB against the unquantised source",
                 cmp->src_snr_db, t->snr_src_fail_db, cmp->ref_src_snr_db);
    make_signature(p, kernel_name, tile_m, tile_n, tile_k, cmp, obs, t, &f, v);
}

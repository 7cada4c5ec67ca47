/*
 * gg_confirm.c — whether a fault a worker saw is the case's own. A worker runs many cases in one
 * process, so a kernel that keeps state between calls (converted weights cached by data pointer
 * and shape, an autotuner's choice, a workspace kept from the last call) can fail on a case only
 * because of the cases before it. Before such a fault is filed, the case runs alone in a fresh
 * process. When it fails there too it is the case's own. When it does not, the worker's recent
 * cases (its history, kept by the supervisor) run before it in one fresh process: a fault that
 * shows then is history-dependent, and delta debugging finds the cases it needs: the shortest
 * suffix of the history that still gives it (exponential, then binary search on its length),
 * then the cases of that suffix that can go (ddmin over complements). A fault that shows neither
 * way is tried alone a few times more (a race may need them) and is otherwise no finding.
 *
 * "Gives the fault" means a verdict of the same class: a lost race or a stale cache changes the
 * magnitude of an error from run to run, not what kind of fault it is.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/campaign/campaign_int.h"

/* ---- history ------------------------------------------------------------------------------- */

void gg_history_push(struct gg_history *h, char *text)
{
    int slot = (h->head + h->n) % GG_HISTORY_MAX;
    if (h->n == GG_HISTORY_MAX) {
        free(h->text[h->head]);
        h->head = (h->head + 1) % GG_HISTORY_MAX;
        slot = (h->head + h->n - 1) % GG_HISTORY_MAX;
    } else {
        h->n++;
    }
    h->text[slot] = text;
}

const char *gg_history_at(const struct gg_history *h, int i)
{
    return i >= 0 && i < h->n ? h->text[(h->head + i) % GG_HISTORY_MAX] : NULL;
}

void gg_history_clear(struct gg_history *h)
{
    for (int i = 0; i < h->n; i++)
        free(h->text[(h->head + i) % GG_HISTORY_MAX]);
    memset(h, 0, sizeof *h);
}

/* ---- the search ---------------------------------------------------------------------------- */

struct search {
    const struct gg_case *history; /* parsed history, oldest first */
    const struct gg_case *kase;
    enum gg_class cls;
    const struct gg_run_opts *o;
    double timeout_s, deadline;
    int max_runs;
    struct gg_confirm_report *rep;
    struct gg_case *seq;           /* scratch: the cases of one sequence */
};

static int spent(const struct search *s)
{
    return s->rep->runs >= s->max_runs || (s->deadline > 0 && gg_wire_now() >= s->deadline);
}

/* Runs history[idx[0..n-1]] then the case in one fresh process: 1 when the case gave the class. */
static int gives(struct search *s, const int *idx, int n)
{
    for (int i = 0; i < n; i++)
        s->seq[i] = s->history[idx[i]];
    struct gg_run_result r;
    char err[512];
    s->rep->runs++;
    enum gg_status st = gg_run_sequence_isolated(s->seq, n, s->kase, s->o, s->timeout_s, &r, err,
                                                 sizeof err);
    int hit = st == GG_OK && r.verdict.cls == s->cls;
    if (hit)
        snprintf(s->rep->detail, sizeof s->rep->detail, "%s", r.verdict.detail);
    if (st == GG_OK)
        gg_run_result_free(&r);
    return hit;
}

/* The suffix of length len of the n-case history, as indices. */
static void suffix(int *idx, int n, int len)
{
    for (int i = 0; i < len; i++)
        idx[i] = n - len + i;
}

/* The shortest suffix that gives the class, knowing that the whole history (n cases) does:
   lengths 1, 2, 4, ... until one gives it, then a binary search below it. */
static int shortest_suffix(struct search *s, int n, int *idx)
{
    int lo = 0, hi = n; /* lo: known not to give it (0: alone); hi: known to */
    for (int len = 1; len < hi && !spent(s); len *= 2) {
        suffix(idx, n, len);
        if (gives(s, idx, len)) {
            hi = len;
            break;
        }
        lo = len;
    }
    while (hi - lo > 1 && !spent(s)) {
        int mid = lo + (hi - lo) / 2;
        suffix(idx, n, mid);
        if (gives(s, idx, mid))
            hi = mid;
        else
            lo = mid;
    }
    suffix(idx, n, hi);
    return hi;
}

/* ddmin over complements: drops chunks of idx[0..n-1] (order kept) while the rest gives the
   class. Returns the new count. */
static int drop_unneeded(struct search *s, int *idx, int n)
{
    int parts = 2;
    int trial[GG_HISTORY_MAX];
    while (n > 1 && !spent(s)) {
        int removed = 0;
        for (int p = 0; p < parts && !spent(s); p++) {
            int lo = n * p / parts, hi = n * (p + 1) / parts, k = 0;
            for (int i = 0; i < n; i++)
                if (i < lo || i >= hi)
                    trial[k++] = idx[i];
            if (k < n && gives(s, trial, k)) {
                memcpy(idx, trial, (size_t)k * sizeof *idx);
                n = k;
                parts = parts > 2 ? parts - 1 : 2;
                removed = 1;
                break;
            }
        }
        if (!removed) {
            if (parts >= n)
                break;
            parts = parts * 2 < n ? parts * 2 : n;
        }
    }
    return n;
}

void gg_confirm_find(const struct gg_case *history, int n_history, const struct gg_case *c,
                     enum gg_class cls, const struct gg_run_opts *o, double timeout_s,
                     double budget_s, struct gg_confirm_report *rep)
{
    memset(rep, 0, sizeof *rep);
    double t0 = gg_wire_now();
    struct gg_case seq[GG_HISTORY_MAX];
    struct search s = {.history = history, .kase = c, .cls = cls, .o = o,
                       .timeout_s = timeout_s, .deadline = budget_s > 0 ? t0 + budget_s : 0,
                       .max_runs = GG_CONFIRM_MAX_RUNS, .rep = rep, .seq = seq};
    int idx[GG_HISTORY_MAX] = {0};
    if (n_history > GG_HISTORY_MAX)
        n_history = GG_HISTORY_MAX;
    rep->outcome = GG_CONFIRM_NOT_REPRODUCED;
    if (gives(&s, idx, 0)) {
        rep->outcome = GG_CONFIRM_ALONE;
    } else if (n_history > 0 && (suffix(idx, n_history, n_history), gives(&s, idx, n_history))) {
        int n = shortest_suffix(&s, n_history, idx);
        n = drop_unneeded(&s, idx, n);
        rep->outcome = GG_CONFIRM_AFTER;
        rep->n_kept = n;
        memcpy(rep->kept, idx, (size_t)n * sizeof *idx);
    } else {
        for (int i = 1; i < GG_CONFIRM_ALONE_TRIES && !spent(&s); i++)
            if (gives(&s, idx, 0)) {
                rep->outcome = GG_CONFIRM_ALONE;
                break;
            }
    }
    rep->seconds = gg_wire_now() - t0;
}

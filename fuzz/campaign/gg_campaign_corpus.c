/*
 * gg_campaign_corpus.c — what a campaign keeps and starts from: the features seen (structural
 * features, each with the smallest SNR-margin bucket a passing case reached), the corpus of kept
 * cases (in memory as parents to mutate, and in the first corpus directory), the queue of stored
 * failures to replay and corpus seeds to run before any case is drawn, and for a shard the cases
 * the other shards kept, imported as parents without running them.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/campaign/campaign_int.h"

#define CORPUS_MAX 8192         /* cases kept in memory; later ones replace random ones */

/* ---- features ------------------------------------------------------------------------------ */

static int ftable_grow(struct ftable *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024;
    struct ftable n = {.keys = calloc(cap, sizeof *n.keys), .best = calloc(cap, sizeof *n.best),
                       .used = calloc(cap, 1), .cap = cap, .n = t->n};
    if (!n.keys || !n.best || !n.used) {
        free(n.keys), free(n.best), free(n.used);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->used[i])
            continue;
        size_t h = camp_mix64(t->keys[i]) & (cap - 1);
        while (n.used[h])
            h = (h + 1) & (cap - 1);
        n.used[h] = 1, n.keys[h] = t->keys[i], n.best[h] = t->best[i];
    }
    free(t->keys), free(t->best), free(t->used);
    *t = n;
    return 0;
}

/* Looks key up: 1 when it was new (inserted with bucket), 0 when known (*closer = 1 if bucket
   beats its best, which is then lowered), -1 out of memory. */
static int ftable_see(struct ftable *t, uint32_t key, int bucket, int *closer)
{
    if (2 * (t->n + 1) > t->cap && ftable_grow(t) != 0)
        return -1;
    size_t h = camp_mix64(key) & (t->cap - 1);
    while (t->used[h] && t->keys[h] != key)
        h = (h + 1) & (t->cap - 1);
    if (!t->used[h]) {
        t->used[h] = 1, t->keys[h] = key, t->best[h] = bucket;
        t->n++;
        return 1;
    }
    if (bucket < t->best[h]) {
        t->best[h] = bucket;
        *closer = 1;
    }
    return 0;
}

void camp_ftable_free(struct ftable *t)
{
    free(t->keys), free(t->best), free(t->used);
    memset(t, 0, sizeof *t);
}

/* SNR margins in whole dB: a case counts as closer to failing when it lowers a feature's
   bucket. Exact results (+inf) sit above every bucket. */
static int margin_bucket(double margin_db)
{
    if (!(margin_db < 1e6))
        return INT_MAX;
    return margin_db < -1e6 ? INT_MIN + 1 : (int)floor(margin_db);
}

/* ---- corpus -------------------------------------------------------------------------------- */

static void corpus_add(struct campaign *c, const struct gg_case *kase, uint64_t salt)
{
    struct gg_case copy;
    if (gg_case_copy(&copy, kase) != GG_OK)
        return;
    if (c->n_corpus < CORPUS_MAX) {
        struct gg_case *n = realloc(c->corpus, (c->n_corpus + 1) * sizeof *n);
        if (!n) {
            gg_case_free(&copy);
            return;
        }
        c->corpus = n;
        c->corpus[c->n_corpus++] = copy;
    } else {
        size_t i = camp_mix64(salt) % c->n_corpus;
        gg_case_free(&c->corpus[i]);
        c->corpus[i] = copy;
    }
    c->st->corpus_count = (int64_t)c->n_corpus;
}

/* Writes an interesting case to the first corpus directory as <id>.case. */
static void corpus_save(struct campaign *c, struct gg_case *kase, const struct job *j)
{
    if (!c->corpus_out[0])
        return;
    char id[GG_CASE_ID_HEX + 1], path[PATH_MAX_LEN + GG_CASE_ID_HEX + 8], note[256], err[512];
    gg_case_id(kase, id);
    snprintf(path, sizeof path, "%s/%s.case", c->corpus_out, id);
    snprintf(note, sizeof note, "seed=0x%016llx case=%llu origin=%s exec=%lld",
             (unsigned long long)c->st->seed, (unsigned long long)j->index,
             camp_origin_names[j->origin], (long long)c->st->execs);
    gg_case_set_meta(kase, "found", note);
    if (gg_case_save(kase, path, err, sizeof err) != GG_OK)
        camp_log(c, "WARNING: %s\n", err);
    else if (c->syncing && gg_sync_publish(&c->sync, id, err, sizeof err) != GG_OK)
        camp_log(c, "WARNING: %s\n", err);
}

/* Novelty of a passing run: new features, or a margin closer to failing. */
void camp_observe_pass(struct campaign *c, struct job *j, const struct gg_run_result *r)
{
    struct gg_features f;
    gg_case_features(&j->c, c->k, r, &f);
    int bucket = margin_bucket(f.snr_margin_db), fresh = 0, closer = 0;
    for (int i = 0; i < f.n && i < GG_FEATURES_MAX; i++)
        if (ftable_see(&c->ft, f.v[i], bucket, &closer) == 1)
            fresh = 1;
    if (f.offset_bits > c->st->max_offset_bits) {
        closer = closer || c->st->max_offset_bits > 0;
        c->st->max_offset_bits = f.offset_bits;
    }
    if (f.snr_margin_db < c->st->min_snr_margin_db)
        c->st->min_snr_margin_db = f.snr_margin_db;
    c->st->features = (int64_t)c->ft.n;
    if (j->origin == ORIGIN_SEED) {
        corpus_add(c, &j->c, j->index);
        return;
    }
    if (!fresh && !closer)
        return;
    corpus_add(c, &j->c, j->index ^ (uint64_t)c->st->execs);
    c->st->new_units++;
    c->st->last_new_s = camp_elapsed(c);
    corpus_save(c, &j->c, j);
}

/* ---- loading ------------------------------------------------------------------------------- */

static int queue_push(struct campaign *c, struct gg_case *kase, enum origin o, const char *path)
{
    struct job *n = realloc(c->queue, (c->n_queue + 1) * sizeof *n);
    if (!n)
        return -1;
    c->queue = n;
    struct job *j = &c->queue[c->n_queue++];
    memset(j, 0, sizeof *j);
    j->c = *kase;
    j->origin = o;
    j->path = strdup(path);
    return 0;
}

static int same_target(const struct campaign *c, const struct gg_case *kase)
{
    return strcmp(kase->kernel, c->k->name) == 0 && strcmp(kase->mutant, c->mutant) == 0;
}

/* Logs the probe deaths since the last call (what: what became of the case it died on). */
void camp_log_probe_deaths(struct campaign *c, const char *what)
{
    const char *how;
    int64_t n = gg_probe_deaths(c->probe, &how);
    if (n != c->probe_deaths)
        camp_log(c, "WARNING: %s; %s\n", how, what);
    c->probe_deaths = n;
}

/* A passing case of any kernel becomes a seed when this kernel supports its problem, or when
   the probe died on it (the seed's run shows why). */
static int seed_fits(struct campaign *c, struct gg_case *kase, const char *what)
{
    if (!(c->k->ops & GG_OP_BIT(kase->op)))
        return 0;
    snprintf(kase->kernel, sizeof kase->kernel, "%s", c->k->name);
    snprintf(kase->mutant, sizeof kase->mutant, "%s", c->mutant);
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(kase, opts, &p);
    char why[512];
    int yes = gg_probe_ask(c->probe, &p, NULL, why, sizeof why);
    camp_log_probe_deaths(c, what);
    return yes != GG_PROBE_NO;
}

/* Queues the stored failures (of this kernel and mutant) and, from corpus directories, the
   passing cases as seeds. Files already queued (by real path) are skipped. */
static void load_dir(struct campaign *c, const char *dir, int is_corpus, char ***seen,
                     size_t *n_seen)
{
    char **files = NULL, **skipped = NULL, err[512];
    size_t n = 0, n_skipped = 0;
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return;
    if (gg_corpus_list(dir, &files, &n, &skipped, &n_skipped, err, sizeof err) != GG_OK) {
        camp_log(c, "WARNING: %s\n", err);
        return;
    }
    for (size_t i = 0; i < n_skipped; i++)
        camp_log(c, "WARNING: skipping %s\n", skipped[i]);
    gg_corpus_list_free(skipped, n_skipped);
    for (size_t i = 0; i < n; i++) {
        char *real = realpath(files[i], NULL);
        int dup = 0;
        for (size_t s = 0; real && s < *n_seen && !dup; s++)
            dup = strcmp((*seen)[s], real) == 0;
        char **grown = real && !dup ? realloc(*seen, (*n_seen + 1) * sizeof **seen) : NULL;
        if (!grown) {
            free(real);
            continue;
        }
        *seen = grown;
        (*seen)[(*n_seen)++] = real;
        struct gg_case kase;
        if (gg_case_load(files[i], &kase, err, sizeof err) != GG_OK) {
            camp_log(c, "WARNING: skipping %s\n", err);
            continue;
        }
        struct gg_verdict pass = {.cls = GG_CLASS_PASS};
        int failure = !gg_expect_holds(gg_case_meta(&kase, "expect"), &pass);
        int queued = 0;
        if (failure && same_target(c, &kase) && gg_case_after_count(&kase) > 0)
            camp_log(c, "INFO: not replayed by the workers: %s fails only after its @after "
                     "cases (ggfuzz --replay runs them first)\n", files[i]);
        else if (failure && same_target(c, &kase))
            queued = queue_push(c, &kase, ORIGIN_REPLAY, files[i]) == 0;
        else if (!failure && is_corpus && seed_fits(c, &kase, files[i]))
            queued = queue_push(c, &kase, ORIGIN_SEED, files[i]) == 0;
        if (!queued)
            gg_case_free(&kase);
    }
    gg_corpus_list_free(files, n);
}

void camp_load_stored(struct campaign *c)
{
    char **seen = NULL;
    size_t n_seen = 0;
    if (c->shards)
        load_dir(c, c->corpus_out, 1, &seen, &n_seen);
    for (int d = 0; d < c->cfg->n_corpus_dirs; d++)
        load_dir(c, c->cfg->corpus_dirs[d], 1, &seen, &n_seen);
    /* A shard that goes on replays none of its own findings: they were filed by this campaign,
       and a replay would count each one again. */
    if (!c->st->resumed)
        load_dir(c, c->artifacts, 0, &seen, &n_seen);
    for (size_t i = 0; i < n_seen; i++)
        free(seen[i]);
    free(seen);
    /* Stored failures first, then the seeds. */
    size_t r = 0;
    for (size_t i = 0; i < c->n_queue; i++)
        if (c->queue[i].origin == ORIGIN_REPLAY) {
            struct job t = c->queue[i];
            memmove(&c->queue[r + 1], &c->queue[r], (i - r) * sizeof t);
            c->queue[r++] = t;
        }
    if (c->n_queue)
        camp_log(c, "INFO: %zu stored failures to replay, %zu corpus seeds\n", r, c->n_queue - r);
}

/* ---- shards ------------------------------------------------------------------------------- */

/* A case another shard kept (on this kernel and mutant: it passed there) joins this shard's
   corpus as a parent to mutate, and its structural features join this shard's, so that the same
   is not kept again here; it is not run again, so importing costs no case. */
static void import_case(struct campaign *c, const struct gg_case *kase, uint64_t salt)
{
    struct gg_features f;
    gg_case_features(kase, c->k, NULL, &f);
    int closer = 0;
    for (int i = 0; i < f.n && i < GG_FEATURES_MAX; i++)
        ftable_see(&c->ft, f.v[i], margin_bucket(INFINITY), &closer);
    c->st->features = (int64_t)c->ft.n;
    corpus_add(c, kase, salt);
}

/* A shard reads the cases the other shards kept since it last looked and imports those its
   kernel supports. force: now, whatever the interval. */
void camp_sync_peers(struct campaign *c, int force)
{
    double now = gg_wire_now();
    if (!c->syncing || (!force && now < c->next_sync) || c->st->stop != GG_STOP_NONE)
        return;
    c->next_sync = now + (c->cfg->sync_interval_s > 0 ? c->cfg->sync_interval_s
                                                      : GG_CAMPAIGN_DEFAULT_SYNC_S);
    struct gg_case *cases = NULL;
    size_t n = 0, taken = 0;
    char err[1024];
    if (gg_sync_pull(&c->sync, &cases, &n, &c->sync_stats, err, sizeof err) != GG_OK)
        camp_log(c, "WARNING: cannot read the other shards' cases: %s\n", err);
    for (size_t i = 0; i < n; i++) {
        if (seed_fits(c, &cases[i], "the other shard's case is imported as it is")) {
            import_case(c, &cases[i], c->next_index ^ (uint64_t)i);
            taken++;
        }
        gg_case_free(&cases[i]);
    }
    free(cases);
    c->st->imported += (int64_t)taken;
    c->st->sync_s = c->sync_stats.seconds;
    if (n > 0)
        camp_log(c, "%s#%lld SYNC %zu new cases of %zu other shards, %zu imported (%.3f s reading "
                 "so far)\n", c->shard_tag, (long long)c->st->execs, n, c->sync_stats.peers,
                 taken, c->sync_stats.seconds);
}

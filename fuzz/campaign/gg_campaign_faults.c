/*
 * gg_campaign_faults.c — what becomes of a fault verdict: a fault of a case that ran after others
 * in its worker is confirmed first in a fresh process (gg_campaign_confirm.c); a fault is filed in
 * the findings store, its signature logged and counted the first time the campaign meets it and
 * queued for triage (gg_campaign_minimize.c), and later sightings only counted. The store's
 * buckets the campaign met are counted (new against the known file) and logged at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/campaign/campaign_int.h"


/* Groups (or batches, or experts) of the problem a case describes; 1 for dense. */
int64_t camp_case_groups(const struct gg_case *c)
{
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    gg_case_problem(c, opts, &p);
    return p.groups;
}

static int sig_seen(struct campaign *c, const char *sig, int add)
{
    for (size_t i = 0; i < c->n_sigs; i++)
        if (strcmp(c->sigs[i], sig) == 0)
            return 1;
    if (add) {
        char **n = realloc(c->sigs, (c->n_sigs + 1) * sizeof *n);
        char *s = strdup(sig);
        if (n && s) {
            c->sigs = n;
            c->sigs[c->n_sigs++] = s;
        } else {
            free(s);
            if (n)
                c->sigs = n;
        }
    }
    return 0;
}

/* "bucket-<id>": how a bucket is named in a known file. */
void camp_bucket_key(const char *id, char *out, size_t len)
{
    snprintf(out, len, "bucket-%s", id);
}

/* Counts bucket id as met in this campaign (once), new when the known file lacks it. Returns 1
   when it was not met before. */
int camp_meet_bucket(struct campaign *c, const char *id)
{
    for (size_t i = 0; i < c->n_met; i++)
        if (strcmp(c->met[i], id) == 0)
            return 0;
    char (*n)[GG_BUCKET_ID_HEX + 1] = realloc(c->met, (c->n_met + 1) * sizeof *n);
    if (!n)
        return 0;
    c->met = n;
    snprintf(c->met[c->n_met++], sizeof *n, "%s", id);
    char key[GG_BUCKET_ID_HEX + 16];
    camp_bucket_key(id, key, sizeof key);
    c->st->buckets++;
    if (!gg_sigset_has(&c->known, key))
        c->st->new_buckets++;
    return 1;
}

/* Reads the store's buckets again (after a minimiser filed one). */
void camp_rescan_buckets(struct campaign *c)
{
    struct gg_bucket_list l;
    char err[1024];
    if (gg_buckets_scan(c->artifacts, &l, err, sizeof err) != GG_OK) {
        camp_log(c, "WARNING: cannot read the buckets: %s\n", err);
        return;
    }
    gg_buckets_free(&c->buckets);
    c->buckets = l;
}

const struct gg_bucket *camp_bucket_info(const struct campaign *c, const char *id)
{
    for (size_t i = 0; i < c->buckets.n; i++)
        if (strcmp(c->buckets.b[i].id, id) == 0)
            return &c->buckets.b[i];
    return NULL;
}

/* Files a fault: records it in the store (kase with its @after cases when it has them), and
   logs and counts its signature the first time this campaign meets it. A new signature goes to
   triage unless it needs preceding cases (the minimiser runs a case alone). */
void camp_file_fault(struct campaign *c, struct gg_case *kase, const struct gg_verdict *v, int gpu)
{
    struct gg_campaign_stats *st = c->st;
    int n_after = gg_case_after_count(kase);
    char path[PATH_MAX_LEN] = "", err[1024], where[PATH_MAX_LEN + 1040];
    int stored_new = 0;
    int stored = gg_findings_record(c->artifacts, kase, v, st->seed, &stored_new, path,
                                    sizeof path, err, sizeof err) == GG_OK;
    if (!stored) {
        camp_log(c, "WARNING: cannot record a finding: %s\n", err);
        st->errors++;
    }
    if (sig_seen(c, v->signature, 1))
        return;
    st->unique_sigs++;
    if (n_after > 0)
        st->faults_history++;
    int is_new = !gg_sigset_has(&c->known, v->signature);
    if (stored_new)
        st->stored_sigs++;
    /* Whether the signature is new to the known file, and what became of its record. */
    const char *label = !stored ? (is_new ? "new, not stored" : "known, not stored")
                        : !is_new ? "known" : stored_new ? "new" : "stored before";
    snprintf(where, sizeof where, "%s%s", stored ? "" : "not stored: ", stored ? path : err);
    const char *bucket = gg_buckets_of(&c->buckets, v->signature);
    char in_bucket[GG_BUCKET_ID_HEX + 32] = "", after[160] = "";
    if (bucket)
        snprintf(in_bucket, sizeof in_bucket, "\n    bucket %s", bucket);
    if (n_after > 0)
        snprintf(after, sizeof after, "\n    fails only after %d earlier case%s in its process "
                 "(@after); alone it passes", n_after, n_after == 1 ? "" : "s");
    camp_log(c, "#%lld FAULT %s (%s) %s\n    %s%s\n    -> %s%s\n", (long long)st->execs,
             gg_class_name(v->cls), label, v->signature, v->detail, after, where, in_bucket);
    /* A signature filed in a bucket is counted there; the others are triaged (minimised to
       their bucket's normal form). */
    if (bucket)
        camp_meet_bucket(c, bucket);
    else if (stored && !c->cfg->no_minimize && path[0] && n_after == 0)
        camp_queue_min(c, path, v, gpu);
    if (!is_new)
        return;
    st->new_sigs++;
    if (gpu >= 0)
        st->gpu[gpu].new_sigs++;
    if (gg_class_more_severe(v->cls, st->worst_new))
        st->worst_new = v->cls;
    if (st->first_finding_s < 0) {
        st->first_finding_s = camp_elapsed(c);
        st->first_finding_execs = st->execs;
        st->first_class = v->cls;
        snprintf(st->first_signature, sizeof st->first_signature, "%s", v->signature);
        snprintf(st->first_path, sizeof st->first_path, "%s", stored ? path : "");
        st->first_groups = camp_case_groups(kase);
    }
    if (c->cfg->stop_after_findings > 0 && st->new_sigs >= c->cfg->stop_after_findings)
        camp_request_stop(c, GG_STOP_FINDING);
}

/* One more sighting of a signature filed already: its count, not its case (the case ran after
   others in its worker and was not run alone). */
void camp_count_sighting(struct campaign *c, const struct gg_verdict *v)
{
    char err[1024];
    if (gg_findings_sighting(c->artifacts, v, err, sizeof err) != GG_OK)
        camp_log(c, "WARNING: cannot count a finding: %s\n", err);
}

/* Classes whose case runs again first in a fresh worker before they are findings: the case
   ended its worker (crash, timeout) or left its device unusable (device). */
static int confirmed_by_restart(enum gg_class cls)
{
    return cls == GG_CLASS_CRASH || cls == GG_CLASS_TIMEOUT || cls == GG_CLASS_DEVICE;
}

/* A run with a fault verdict by worker w. A fault of a case that ran after others in its worker
   is run again in a fresh process before it is filed (its first sighting in this campaign; later
   ones only count), unless its class is confirmed by a fresh worker anyway or it replays a
   stored finding. */
void camp_handle_fault(struct campaign *c, struct worker *w, struct job *j,
                       const struct gg_run_result *r)
{
    struct gg_campaign_stats *st = c->st;
    const struct gg_verdict *v = &r->verdict;
    int gpu = w->gpu;
    st->faults_total++;
    if (gpu >= 0) {
        st->gpu[gpu].faults++;
        char ordinal[16];
        snprintf(ordinal, sizeof ordinal, "%d", c->gpus->id[gpu]);
        gg_case_set_meta(&j->c, "gpu", ordinal);
    }
    st->faults[v->cls]++;
    st->last_fault_s = camp_elapsed(c);
    if (j->origin == ORIGIN_REPLAY && gg_expect_holds(gg_case_meta(&j->c, "expect"), v))
        camp_log(c, "INFO: still failing: %s\n", j->path);
    else if (j->origin == ORIGIN_REPLAY)
        camp_log(c, "INFO: fails differently now: %s\n", j->path);
    gg_case_set_meta(&j->c, "observed", v->detail);
    if (j->origin != ORIGIN_REPLAY && !confirmed_by_restart(v->cls) && w->hist.n > 0) {
        struct pending_confirm *pc = camp_confirm_pending(c, v->signature);
        const struct unconfirmed_sig *u = camp_unconfirmed_of(c, v->signature, 0);
        if (pc)
            pc->extra++;
        else if (sig_seen(c, v->signature, 0))
            camp_count_sighting(c, v);
        else if ((u == NULL || u->tries < CONFIRM_TRIES_MAX) && camp_queue_confirm(c, w, j, v) != 0)
            camp_log(c, "WARNING: out of memory: %s not confirmed\n", v->signature);
        return;
    }
    camp_file_fault(c, &j->c, v, gpu);
}

/* Signatures of this campaign that no bucket holds yet. */
int64_t camp_count_untriaged(const struct campaign *c)
{
    int64_t n = 0;
    for (size_t i = 0; i < c->n_sigs; i++)
        n += gg_buckets_of(&c->buckets, c->sigs[i]) == NULL;
    return n;
}

/* The buckets met, one line each with its members, sightings and how to replay it. */
void camp_log_buckets(struct campaign *c)
{
    for (size_t i = 0; i < c->buckets.n; i++) {
        const struct gg_bucket *b = &c->buckets.b[i];
        int met = 0;
        for (size_t j = 0; j < c->n_met && !met; j++)
            met = strcmp(c->met[j], b->id) == 0;
        if (!met)
            continue;
        char cmd[3 * PATH_MAX_LEN], abs[PATH_MAX_LEN];
        snprintf(cmd, sizeof cmd, "%s",
                 c->cfg->replay_command ? c->cfg->replay_command : "ggfuzz --replay");
        gg_shell_word(cmd, sizeof cmd, realpath(b->path, abs) ? abs : b->path);
        camp_log(c, "INFO: bucket %s %s: %lld signatures, %lld sightings, %s .. %s\n"
                 "    replay: %s\n", b->id, b->form, b->members, b->count, b->first_seen,
                 b->last_seen, cmd);
    }
}

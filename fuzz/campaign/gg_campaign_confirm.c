/*
 * gg_campaign_confirm.c — the supervisor's side of confirming a fault in a fresh process: a fault
 * a worker gave after other cases waits in a queue with the worker's history, runs in a child in
 * one of the confirmation slots (gg_confirm_find, gg_confirm.c), and is then filed as the case's
 * own, filed with the earlier cases it needs (@after), or not filed; the signatures a fresh
 * process did not confirm are counted. A confirmation that could not run to its end is filed as
 * found, saying why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/campaign/campaign_int.h"

struct pending_confirm *camp_confirm_pending(struct campaign *c, const char *sig)
{
    for (size_t i = 0; i < c->n_confirms; i++)
        if (strcmp(c->confirms[i].v.signature, sig) == 0)
            return &c->confirms[i];
    for (int i = 0; i < c->n_cs; i++)
        if (c->cs[i].pid && strcmp(c->cs[i].cur.v.signature, sig) == 0)
            return &c->cs[i].cur;
    return NULL;
}

/* The entry of sig among the signatures a fresh process did not confirm (added when add). */
struct unconfirmed_sig *camp_unconfirmed_of(struct campaign *c, const char *sig, int add)
{
    for (size_t i = 0; i < c->n_unconf; i++)
        if (strcmp(c->unconf[i].sig, sig) == 0)
            return &c->unconf[i];
    struct unconfirmed_sig *n = add ? realloc(c->unconf, (c->n_unconf + 1) * sizeof *n) : NULL;
    if (n)
        c->unconf = n; /* the old block is gone even when strdup fails */
    char *copy = n ? strdup(sig) : NULL;
    if (!copy)
        return NULL;
    c->unconf[c->n_unconf] = (struct unconfirmed_sig){.sig = copy, .tries = 0};
    return &c->unconf[c->n_unconf++];
}

void camp_confirm_free(struct pending_confirm *pc)
{
    gg_case_free(&pc->kase);
    for (int i = 0; i < pc->n_hist; i++)
        free(pc->hist[i]);
    memset(pc, 0, sizeof *pc);
}

/* Queues the fault of j's run by worker w for a run in a fresh process, with w's history.
   Returns -1 when out of memory. */
int camp_queue_confirm(struct campaign *c, const struct worker *w, const struct job *j,
                       const struct gg_verdict *v)
{
    struct pending_confirm *n = realloc(c->confirms, (c->n_confirms + 1) * sizeof *n);
    if (!n)
        return -1;
    c->confirms = n;
    struct pending_confirm *pc = &c->confirms[c->n_confirms];
    memset(pc, 0, sizeof *pc);
    if (gg_case_copy(&pc->kase, &j->c) != GG_OK)
        return -1;
    pc->v = *v;
    pc->gpu = w->gpu;
    camp_job_name(j, pc->name, sizeof pc->name);
    for (int i = 0; i < w->hist.n; i++)
        if ((pc->hist[pc->n_hist] = strdup(gg_history_at(&w->hist, i))) != NULL)
            pc->n_hist++;
    c->n_confirms++;
    return 0;
}

/* The confirmation child: runs the case alone, else after the worker's history, and reports. */
static void confirm_child(struct campaign *c, const struct pending_confirm *pc, double budget,
                          int fd)
{
    if (c->gpus)
        gg_gpus_bind(c->gpus->id[pc->gpu >= 0 ? pc->gpu : 0]);
    struct gg_case hist[GG_HISTORY_MAX];
    int at[GG_HISTORY_MAX], n = 0;
    char err[1024];
    for (int i = 0; i < pc->n_hist; i++)
        if (gg_case_parse(pc->hist[i], strlen(pc->hist[i]), "history", &hist[n], err,
                          sizeof err) == GG_OK)
            at[n++] = i;
    struct gg_run_opts o = c->cfg->run;
    o.kernel = o.mutant = NULL; /* the case names them */
    struct gg_confirm_report rep;
    gg_confirm_find(hist, n, &pc->kase, pc->v.cls, &o, c->timeout, budget, &rep);
    for (int i = 0; i < rep.n_kept; i++)
        rep.kept[i] = at[rep.kept[i]];
    gg_wire_write(fd, &rep, sizeof rep);
    _exit(0);
}

int camp_running_confirms(const struct campaign *c)
{
    int n = 0;
    for (int i = 0; i < c->n_cs; i++)
        n += c->cs[i].pid != 0;
    return n;
}

/* Files a fault that could not be run again in a fresh process, saying so on it (and in the
   log when loud). */
static void file_unconfirmed(struct campaign *c, struct pending_confirm *pc, const char *why,
                             int loud)
{
    if (loud)
        camp_log(c,
                 "WARNING: %s: %s was not run again in a fresh process (%s); filed as "
                 "found\n",
                 pc->name, pc->v.signature, why);
    char note[160];
    snprintf(note, sizeof note, "not confirmed in a fresh process (%s): its run in a campaign "
             "worker followed other cases", why);
    gg_case_set_meta(&pc->kase, "note", note);
    camp_file_fault(c, &pc->kase, &pc->v, pc->gpu);
}

/* Starts the queued confirmations in the free slots. */
void camp_start_confirms(struct campaign *c)
{
    for (int i = 0; i < c->n_cs && c->n_confirms > 0; i++) {
        struct confirm_slot *slot = &c->cs[i];
        if (slot->pid)
            continue;
        double budget = camp_child_budget(c);
        int fd;
        slot->cur = c->confirms[0];
        slot->pid = (int)camp_fork_child(c, &fd);
        if (slot->pid == 0)
            confirm_child(c, &slot->cur, budget, fd);
        if (slot->pid < 0) { /* cannot fork now: filed as found rather than kept waiting */
            struct pending_confirm pc = c->confirms[0];
            slot->pid = 0;
            memset(&slot->cur, 0, sizeof slot->cur);
            memmove(&c->confirms[0], &c->confirms[1], --c->n_confirms * sizeof *c->confirms);
            file_unconfirmed(c, &pc, "no process could be started for it", 1);
            camp_confirm_free(&pc);
            return;
        }
        slot->fd = fd;
        slot->started = gg_wire_now();
        slot->budget = budget;
        memmove(&c->confirms[0], &c->confirms[1], --c->n_confirms * sizeof *c->confirms);
    }
}


/* After a confirmation ended (or was killed): files the fault as its own, with the cases it
   needs, or not at all. */
static void finish_confirm(struct campaign *c, struct confirm_slot *slot, const char *killed)
{
    struct gg_confirm_report rep;
    memset(&rep, 0, sizeof rep);
    int got = !killed && gg_wire_read(slot->fd, &rep, sizeof rep, gg_wire_now() + 1) == 0;
    close(slot->fd);
    slot->pid = 0;
    c->st->confirmations++;
    c->st->confirm_s += gg_wire_now() - slot->started;
    struct pending_confirm *pc = &slot->cur;
    char err[1024];
    if (!got) {
        file_unconfirmed(c, pc, killed ? killed : "its process failed", 1);
    } else if (rep.outcome == GG_CONFIRM_ALONE) {
        gg_case_set_meta(&pc->kase, "observed", rep.detail); /* as its replay shows it */
        camp_file_fault(c, &pc->kase, &pc->v, pc->gpu);
        for (int i = 0; i < pc->extra; i++)
            camp_count_sighting(c, &pc->v);
    } else if (rep.outcome == GG_CONFIRM_AFTER) {
        enum gg_status st = GG_OK;
        for (int i = 0; i < rep.n_kept && st == GG_OK; i++) {
            struct gg_case prior;
            const char *text = pc->hist[rep.kept[i]];
            st = gg_case_parse(text, strlen(text), "history", &prior, err, sizeof err);
            if (st == GG_OK)
                st = gg_case_after_add(&pc->kase, &prior, err, sizeof err);
            gg_case_free(&prior);
        }
        if (st == GG_OK) {
            gg_case_set_meta(&pc->kase, "observed", rep.detail);
            camp_log(c, "INFO: %s gives %s only after %d of the %d cases its worker ran before "
                     "it (%d runs in fresh processes, %.1f s)\n", pc->name, pc->v.signature,
                     rep.n_kept, pc->n_hist, rep.runs, rep.seconds);
            camp_file_fault(c, &pc->kase, &pc->v, pc->gpu);
        } else {
            gg_case_after_clear(&pc->kase);
            file_unconfirmed(c, pc, err, 1);
        }
    } else {
        c->st->faults_unconfirmed++;
        struct unconfirmed_sig *u = camp_unconfirmed_of(c, pc->v.signature, 1);
        if (u)
            u->tries++;
        camp_log(c, "WARNING: %s gave %s in its worker, but neither alone nor after the %d cases "
                 "its worker ran before it in a fresh process (%d runs): not a finding%s\n",
                 pc->name, pc->v.signature, pc->n_hist, rep.runs,
                 u && u->tries >= CONFIRM_TRIES_MAX
                     ? "; its further sightings are counted in faults_total only" : "");
    }
    camp_confirm_free(pc);
}

/* Checks on the confirmations; kill ends them now (and files the queued ones unconfirmed). */
void camp_poll_confirms(struct campaign *c, int kill_it)
{
    for (int i = 0; i < c->n_cs; i++) {
        struct confirm_slot *slot = &c->cs[i];
        int wst = 0;
        /* every sequence it may run, each case within its limit, and its search's budget
           (without a limit per case: the budget alone) */
        double limit = slot->budget + 2 * c->timeout * (slot->cur.n_hist + 1) * 3 + 5;
        int overdue = gg_wire_now() > slot->started + limit;
        if (slot->pid && camp_child_ended(slot->pid, kill_it || overdue, &wst))
            finish_confirm(c, slot, kill_it  ? "the campaign ended first"
                                    : overdue ? "its runs took longer than they may"
                                              : NULL);
    }
    if (kill_it)
        camp_file_queued_confirms(c, "the campaign ended first");
}

void camp_file_queued_confirms(struct campaign *c, const char *why)
{
    size_t n = c->n_confirms;
    if (n > 1)
        camp_log(c,
                 "WARNING: %zu faults were not run again in a fresh process (%s); filed as "
                 "found, each with a note saying so\n",
                 n, why);
    while (c->n_confirms > 0) {
        struct pending_confirm pc = c->confirms[0];
        memmove(&c->confirms[0], &c->confirms[1], --c->n_confirms * sizeof pc);
        file_unconfirmed(c, &pc, why, n == 1);
        camp_confirm_free(&pc);
    }
}

/*
 * gg_probe.c — a kernel's supports() and workspace_bytes() called in a co-process, for a process
 * that never runs kernel code itself (the campaign supervisor, whose generator asks about every
 * case it draws). The probe is forked from that process when the first question comes, so it
 * holds the same registry and plugins, and then answers one question at a time over a socket
 * pair: a problem, sent whole (the struct and every array it points to), answered by supports()
 * and, when asked for, workspace_bytes(). A question costs a round trip, not a process. A probe
 * that dies, or does not answer within the limit, is killed and reaped, the question is answered
 * GG_PROBE_DIED with what happened, and the next question starts a fresh probe.
 *
 * The probe is a fork without exec, like the trial child of gg_plugin.c: it suits the host
 * process of Python plugins (the interpreter's state is inherited) and GPU kernels whose
 * supports() touches the device (the supervisor itself has no device context to lose).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

#define PROBE_MAGIC 0x67677031u /* "ggp1" */
/* Refuses questions past this size (the sorted ids of the largest MoE cases fit many times). */
#define MAX_PAYLOAD ((uint64_t)1 << 30)
#define WHY_MAX 256

struct gg_probe {
    const struct gg_kernel *k;
    double limit;           /* seconds per question; 0: none */
    char limit_name[64];    /* what sets the limit, for messages */
    pid_t pid;              /* the running probe; 0: none */
    int fd;
    unsigned char *buf;     /* the payload of the question being asked (owned) */
    size_t cap;
    int64_t deaths;
    char death[512];        /* how the last one ended */
};

/* A question: this header, then `len` bytes of payload, the problem's arrays (group_lens,
   group_offs, sorted_ids, expert_ids: has bits 0 to 3), options and mutant list, each at an
   offset that is a multiple of 8 (so that the probe can point into its copy). p's pointers
   mean nothing on the wire; has says which of them were not NULL. */
enum { HAS_OPTS = 16, HAS_MUTANT = 32 };
struct question {
    uint32_t magic;
    uint32_t want_ws;
    uint32_t has;
    uint32_t pad;
    uint64_t len;
    struct gg_problem p;
};

/* An answer: supports()'s (what 0), then workspace_bytes()'s (what 1) when it was asked for and
   supports() said yes. */
struct answer {
    uint32_t magic;
    int32_t what;
    int32_t yes;
    uint64_t ws;
    char why[WHY_MAX];
};

/* The lengths of p's arrays (entries), as the header of gg_kernel.h defines them. */
static int64_t n_lens(const struct gg_problem *p)
{
    return p->group_lens ? p->groups : 0;
}
static int64_t n_offs(const struct gg_problem *p)
{
    return p->group_offs ? p->groups + 1 : 0;
}
static int64_t n_sorted(const struct gg_problem *p)
{
    return p->sorted_ids ? p->sorted_len : 0;
}
static int64_t n_experts(const struct gg_problem *p)
{
    return p->expert_ids && p->block_m > 0 ? p->sorted_len / p->block_m : 0;
}

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* One option on the wire: its value, then its key's bytes with the NUL (klen, 0 for a NULL
   key), padded to 8. */
struct wire_opt {
    int64_t value;
    uint64_t klen;
};

/* Appends n bytes at src (may be NULL: zeros) to the question's payload; -1 out of memory. */
static int put(struct gg_probe *pr, size_t *used, const void *src, size_t n)
{
    size_t need = *used + pad8(n);
    if (need > pr->cap) {
        size_t cap = pr->cap ? pr->cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *b = realloc(pr->buf, cap);
        if (b == NULL)
            return -1;
        pr->buf = b;
        pr->cap = cap;
    }
    memset(pr->buf + *used, 0, pad8(n));
    if (src != NULL && n > 0)
        memcpy(pr->buf + *used, src, n);
    *used = need;
    return 0;
}

/* The question of p, its payload in pr->buf. */
static int pack(struct gg_probe *pr, const struct gg_problem *p, int want_ws, struct question *q)
{
    memset(q, 0, sizeof *q);
    q->magic = PROBE_MAGIC;
    q->want_ws = (uint32_t)want_ws;
    q->p = *p;
    size_t used = 0;
    int rc = 0;
    const struct {
        const void *v;
        size_t bytes;
    } arrays[] = {{p->group_lens, (size_t)n_lens(p) * sizeof *p->group_lens},
                  {p->group_offs, (size_t)n_offs(p) * sizeof *p->group_offs},
                  {p->sorted_ids, (size_t)n_sorted(p) * sizeof *p->sorted_ids},
                  {p->expert_ids, (size_t)n_experts(p) * sizeof *p->expert_ids}};
    for (unsigned i = 0; i < 4; i++)
        if (arrays[i].v != NULL) {
            q->has |= 1u << i;
            rc |= put(pr, &used, arrays[i].v, arrays[i].bytes);
        }
    if (p->opts && p->n_opts > 0) {
        q->has |= HAS_OPTS;
        for (int i = 0; i < p->n_opts && rc == 0; i++) {
            const char *key = p->opts[i].key;
            struct wire_opt o = {.value = p->opts[i].value, .klen = key ? strlen(key) + 1 : 0};
            rc |= put(pr, &used, &o, sizeof o);
            rc |= put(pr, &used, key, o.klen);
        }
    }
    if (p->mutant) {
        q->has |= HAS_MUTANT;
        rc |= put(pr, &used, p->mutant, strlen(p->mutant) + 1);
    }
    q->len = used;
    return rc;
}

/* Takes n bytes of the payload (buf, len) at *at as a pointer; NULL when they run past it. */
static const void *take(const unsigned char *buf, uint64_t len, uint64_t *at, uint64_t n)
{
    if (n > len - *at)
        return NULL;
    const void *p = buf + *at;
    *at += pad8(n);
    if (*at > len)
        *at = len;
    return p;
}

/* Points the problem of question q at its arrays in the payload (buf, len); opts gets room
   for n_opts options (malloc'd, freed by the caller). 0, or -1 for a malformed question. */
static int unpack(struct question *q, const unsigned char *buf, struct gg_kopt **opts)
{
    struct gg_problem *p = &q->p;
    uint64_t at = 0, len = q->len;
    *opts = NULL;
    /* The arrays in the order of pack(), bit i of q->has each: entries and entry size. */
    const int64_t count[] = {n_lens(p), n_offs(p), n_sorted(p), n_experts(p)};
    const uint64_t size[] = {8, 8, 4, 4};
    const void *v[4] = {NULL, NULL, NULL, NULL};
    for (unsigned i = 0; i < 4; i++) {
        if (!(q->has & (1u << i)))
            continue;
        if (count[i] < 0 || count[i] > (int64_t)(MAX_PAYLOAD / 8) ||
            (v[i] = take(buf, len, &at, (uint64_t)count[i] * size[i])) == NULL)
            return -1;
    }
    p->group_lens = v[0];
    p->group_offs = v[1];
    p->sorted_ids = v[2];
    p->expert_ids = v[3];
    p->opts = NULL;
    if (q->has & HAS_OPTS) {
        if (p->n_opts <= 0 || p->n_opts > 4096 ||
            (*opts = calloc((size_t)p->n_opts, sizeof **opts)) == NULL)
            return -1;
        for (int i = 0; i < p->n_opts; i++) {
            const struct wire_opt *o = take(buf, len, &at, sizeof *o);
            if (o == NULL)
                return -1;
            const char *key = o->klen ? take(buf, len, &at, o->klen) : NULL;
            if (o->klen && (key == NULL || key[o->klen - 1] != '\0'))
                return -1;
            (*opts)[i] = (struct gg_kopt){.key = key, .value = o->value};
        }
        p->opts = *opts;
    }
    p->mutant = NULL;
    if (q->has & HAS_MUTANT) {
        uint64_t rest = len - at;
        const char *m = take(buf, len, &at, rest);
        if (m == NULL || rest == 0 || memchr(m, '\0', rest) == NULL)
            return -1;
        p->mutant = m;
    }
    return 0;
}

/* The probe: answers questions until the socket closes. Runs kernel code; never returns. */
static void probe_main(const struct gg_kernel *k, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        struct question q;
        ssize_t got;
        do
            got = read(fd, &q, 1);
        while (got < 0 && errno == EINTR);
        if (got == 0)
            _exit(0); /* the asker closed the socket */
        if (got < 0 || gg_wire_read(fd, (char *)&q + 1, sizeof q - 1, 0) != 0 ||
            q.magic != PROBE_MAGIC || q.len > MAX_PAYLOAD)
            _exit(2);
        if (q.len > cap) {
            free(buf);
            cap = q.len;
            if ((buf = malloc(cap)) == NULL)
                _exit(3);
        }
        struct gg_kopt *opts = NULL;
        if ((q.len > 0 && gg_wire_read(fd, buf, q.len, 0) != 0) || unpack(&q, buf, &opts) != 0)
            _exit(2);
        struct answer a;
        memset(&a, 0, sizeof a);
        a.magic = PROBE_MAGIC;
        a.yes = k->supports(&q.p, a.why, sizeof a.why) != 0;
        a.why[sizeof a.why - 1] = '\0';
        if (gg_wire_write(fd, &a, sizeof a) != 0)
            _exit(1);
        if (a.yes && q.want_ws) {
            a.what = 1;
            a.ws = k->workspace_bytes ? (uint64_t)k->workspace_bytes(&q.p) : 0;
            if (gg_wire_write(fd, &a, sizeof a) != 0)
                _exit(1);
        }
        free(opts);
    }
}

static int start(struct gg_probe *pr)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        /* Its own process group: a terminal's Ctrl-C is the supervisor's to handle. */
        setpgid(0, 0);
        close(sv[0]);
        probe_main(pr->k, sv[1]);
    }
    setpgid(pid, pid);
    close(sv[1]);
    pr->pid = pid;
    pr->fd = sv[0];
    return 0;
}

/* Ends the running probe (kill: it has not ended by itself) and returns its wait status. */
static int stop(struct gg_probe *pr, int kill_it)
{
    int wst = 0;
    if (pr->pid == 0)
        return 0;
    if (kill_it)
        kill(pr->pid, SIGKILL);
    close(pr->fd);
    while (waitpid(pr->pid, &wst, 0) < 0 && errno == EINTR)
        ;
    pr->pid = 0;
    pr->fd = -1;
    return wst;
}

enum gg_status gg_probe_open(const struct gg_kernel *k, double limit_s, const char *limit_name,
                             struct gg_probe **pr)
{
    *pr = calloc(1, sizeof **pr);
    if (*pr == NULL)
        return GG_E_NOMEM;
    (*pr)->k = k;
    (*pr)->limit = limit_s > 0 ? limit_s : 0;
    (*pr)->fd = -1;
    snprintf((*pr)->limit_name, sizeof (*pr)->limit_name, "%s", limit_name ? limit_name : "");
    return GG_OK;
}

void gg_probe_close(struct gg_probe *pr)
{
    if (pr == NULL)
        return;
    stop(pr, 1);
    free(pr->buf);
    free(pr);
}

/* The answer when the probe ended while it ran `what`: got is gg_wire_read's (1: past the
   limit) or 0 for an answer that was not one (the kernel wrote to a descriptor it does not
   own). Says how in why and pr->death. */
static int died(struct gg_probe *pr, const char *what, int got, char *why, size_t why_len)
{
    int wst = stop(pr, 1);
    char how[384];
    if (got == 0)
        snprintf(how, sizeof how, "%s wrote over the probe's answer (to a descriptor it does "
                 "not own)", what);
    else
        gg_child_end_text(what, wst, got == 1, pr->limit, pr->limit_name, how, sizeof how);
    snprintf(pr->death, sizeof pr->death, "kernel %s, asked in a probe process: %s", pr->k->name,
             how);
    snprintf(why, why_len, "%s", pr->death);
    pr->deaths++;
    return GG_PROBE_DIED;
}

int gg_probe_ask(struct gg_probe *pr, const struct gg_problem *p, size_t *ws, char *why,
                 size_t why_len)
{
    struct question q;
    if (pack(pr, p, ws != NULL, &q) != 0) {
        snprintf(why, why_len, "kernel %s: out of memory asking the probe process", pr->k->name);
        return GG_PROBE_DIED;
    }
    if (pr->pid == 0 && start(pr) != 0) {
        snprintf(pr->death, sizeof pr->death, "kernel %s: cannot start a probe process: %s",
                 pr->k->name, strerror(errno));
        snprintf(why, why_len, "%s", pr->death);
        pr->deaths++;
        return GG_PROBE_DIED;
    }
    double deadline = pr->limit > 0 ? gg_wire_now() + pr->limit : 0;
    if (gg_wire_write(pr->fd, &q, sizeof q) != 0 ||
        (q.len > 0 && gg_wire_write(pr->fd, pr->buf, q.len) != 0))
        return died(pr, "supports()", -1, why, why_len);
    struct answer a;
    for (int what = 0; what < 1 + (ws != NULL); what++) {
        const char *fn = what == 0 ? "supports()" : "workspace_bytes()";
        int got = gg_wire_read(pr->fd, &a, sizeof a, deadline);
        if (got != 0 || a.magic != PROBE_MAGIC || a.what != what)
            return died(pr, fn, got, why, why_len);
        if (what == 0 && !a.yes) {
            a.why[sizeof a.why - 1] = '\0';
            snprintf(why, why_len, "%s", a.why);
            return GG_PROBE_NO;
        }
        if (what == 1)
            *ws = (size_t)a.ws;
    }
    return GG_PROBE_YES;
}

int64_t gg_probe_deaths(const struct gg_probe *pr, const char **last)
{
    if (last != NULL)
        *last = pr->death;
    return pr->deaths;
}

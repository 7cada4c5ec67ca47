/*
 * gg_worker.c — the worker side of a campaign and the wire protocol every case-running child
 * shares: a length-prefixed case text goes in, a result record (status, message, run result and
 * per-group metrics) comes out. `ggfuzz worker` loops over requests on its standard input; the
 * forked child of gg_run_case_isolated() sends one reply the same way. Also here: the verdict of
 * a run that ended without a reply (crash or timeout), which both parents build, and what an
 * outside kill of such a process (SIGKILL) is, which neither turns into a verdict.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"
#include "fuzz/run/run_int.h"
#include "fuzz/run/device/gg_device.h"

double gg_wire_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A write to a peer that has gone must fail with EPIPE, not raise SIGPIPE in a supervisor:
   send() with MSG_NOSIGNAL on sockets, write() on pipes (whose writers are children). */
int gg_wire_write(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    int is_socket = 1;
    while (n > 0) {
        ssize_t w = is_socket ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
        if (w < 0 && is_socket && errno == ENOTSOCK) {
            is_socket = 0;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int gg_wire_read(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        double left = deadline - gg_wire_now();
        if (deadline > 0 && left <= 0)
            return 1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int rc = poll(&pfd, 1, deadline > 0 ? (int)(left * 1000) + 1 : -1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue; /* the deadline check above decides */
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

int gg_wire_send_case(int fd, const char *text, size_t len, const struct gg_run_opts *o)
{
    struct gg_wire_request q = {.magic = GG_WIRE_MAGIC,
                                .size = sizeof q,
                                .text_len = len,
                                .max_mem_bytes = o ? o->max_mem_bytes : 0,
                                .certify_samples = o ? o->certify_samples : 0,
                                .reference = o ? (int32_t)o->reference : 0};
    return gg_wire_write(fd, &q, sizeof q) == 0 && gg_wire_write(fd, text, len) == 0 ? 0 : -1;
}

/* Refuses requests past this size: a case text is a few hundred bytes. */
#define MAX_CASE_TEXT ((uint64_t)1 << 24)

int gg_wire_recv_case(int fd, char **text, size_t *len, struct gg_run_opts *o)
{
    struct gg_wire_request q;
    *text = NULL;
    /* A clean end of file comes before the first byte of a request. */
    ssize_t got;
    do
        got = read(fd, &q, 1);
    while (got < 0 && errno == EINTR);
    if (got == 0)
        return 1;
    if (got < 0 || gg_wire_read(fd, (char *)&q + 1, sizeof q - 1, 0) != 0)
        return -1;
    if (q.magic != GG_WIRE_MAGIC || q.size != sizeof q || q.text_len > MAX_CASE_TEXT)
        return -1;
    char *t = malloc(q.text_len + 1);
    if (!t || gg_wire_read(fd, t, q.text_len, 0) != 0) {
        free(t);
        return -1;
    }
    t[q.text_len] = '\0';
    memset(o, 0, sizeof *o);
    o->max_mem_bytes = q.max_mem_bytes;
    o->certify_samples = q.certify_samples;
    o->reference = (enum gg_reference_where)q.reference;
    *text = t;
    *len = q.text_len;
    return 0;
}

int gg_wire_send_result(int fd, enum gg_status st, const char *err, const struct gg_run_result *r)
{
    struct gg_wire_reply w;
    memset(&w, 0, sizeof w);
    w.magic = GG_WIRE_MAGIC;
    w.size = sizeof w;
    w.status = st;
    snprintf(w.err, sizeof w.err, "%s", err ? err : "");
    if (r) {
        w.res = *r;
        w.res.cmp.groups = NULL;
    }
    if (gg_wire_write(fd, &w, sizeof w) != 0)
        return -1;
    if (st == GG_OK && r && r->compared && r->cmp.n_groups > 0)
        return gg_wire_write(fd, r->cmp.groups, (size_t)r->cmp.n_groups * sizeof *r->cmp.groups);
    return 0;
}

int gg_wire_recv_result(int fd, double deadline, enum gg_status *st, char *err, size_t err_len,
                        struct gg_run_result *r, struct gg_wire_fault *fault)
{
    struct gg_wire_reply w;
    memset(r, 0, sizeof *r);
    /* magic and size first: a reply, or the fault note of a dying process */
    int got = gg_wire_read(fd, &w, 2 * sizeof(uint32_t), deadline);
    if (got != 0)
        return got;
    if (w.magic == GG_WIRE_FAULT_MAGIC && w.size == sizeof *fault && fault != NULL) {
        memcpy(fault, &w, 2 * sizeof(uint32_t));
        got = gg_wire_read(fd, (char *)fault + 2 * sizeof(uint32_t),
                           sizeof *fault - 2 * sizeof(uint32_t), deadline);
        return got == 0 ? 2 : got;
    }
    if (w.magic != GG_WIRE_MAGIC || w.size != sizeof w)
        return -1;
    got = gg_wire_read(fd, (char *)&w + 2 * sizeof(uint32_t), sizeof w - 2 * sizeof(uint32_t),
                       deadline);
    if (got != 0)
        return got;
    struct gg_group_metrics *groups = NULL;
    if (w.status == GG_OK && w.res.compared) {
        size_t n = w.res.cmp.n_groups > 0 ? (size_t)w.res.cmp.n_groups : 0;
        groups = calloc(n ? n : 1, sizeof *groups);
        if (!groups)
            return -1;
        if ((got = gg_wire_read(fd, groups, n * sizeof *groups, deadline)) != 0) {
            free(groups);
            return got;
        }
    }
    *r = w.res;
    r->cmp.groups = groups;
    if (!w.res.compared)
        memset(&r->cmp, 0, sizeof r->cmp);
    *st = w.status;
    snprintf(err, err_len, "%s", w.err);
    return 0;
}

int gg_killed_from_outside(int signo, char *msg, size_t msg_len)
{
    if (signo != SIGKILL)
        return 0;
    snprintf(msg, msg_len, "killed by signal %d (%s) from outside ggfuzz (out of memory?)", signo,
             strsignal(signo));
    return 1;
}

enum gg_status gg_run_ended_early(const struct gg_case *c, const struct gg_run_opts *o, int signo,
                                  double timeout_s, const struct gg_wire_fault *fault,
                                  struct gg_run_result *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    struct gg_case eff;
    enum gg_status st = gg_case_overridden(c, o, &eff, err, err_len);
    if (st != GG_OK) {
        gg_case_free(&eff);
        return st;
    }
    struct gg_tensors t;
    st = gg_tensors_plan(&eff, &t, err, err_len);
    if (st == GG_OK) {
        const struct gg_kernel *k = gg_registry_find(eff.kernel);
        struct gg_observations obs = {.crash_signal = signo, .timeout_s = signo ? 0 : timeout_s};
        if (fault && signo > 0 && fault->where > GG_FAULT_NONE && fault->where <= GG_FAULT_UNUSED &&
            fault->operand >= 0 && fault->operand < 3) {
            obs.fault_where = (enum gg_fault_where)fault->where;
            obs.fault_operand = fault->operand;
            obs.fault_write = fault->write;
        }
        snprintf(r->kernel, sizeof r->kernel, "%s", eff.kernel);
        snprintf(r->mutant, sizeof r->mutant, "%s", eff.mutant);
        gg_verdict_make(&t.p, eff.kernel, k ? k->tile_m : 0, k ? k->tile_n : 0,
                        k ? k->tile_k : 0, NULL, &obs, &r->verdict);
    }
    gg_tensors_free(&t);
    gg_case_free(&eff);
    return st;
}

enum gg_status gg_worker_main(int in_fd, int out_fd, char *err, size_t err_len)
{
    /* The supervisor handles interrupts and ends its workers; a worker outliving it would
       compute for nobody. */
    signal(SIGINT, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    gg_registry_init();
    gg_ref_threads(1);
    /* Keep the reference's and the oracles' arrays (up to 64 MiB each) on the heap from case to
       case: glibc would otherwise mmap and munmap each one, and every munmap of a touched
       mapping costs page faults and TLB shootdowns that dominate a tiny case. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    struct gg_hostpool pool = {.n = 0};
    gg_faultnote_install(out_fd);
    struct gg_wire_hello h = {.magic = GG_WIRE_MAGIC, .pid = (uint32_t)getpid()};
    if (gg_wire_write(out_fd, &h, sizeof h) != 0) {
        snprintf(err, err_len, "cannot write to the supervisor: %s", strerror(errno));
        return GG_E_IO;
    }
    for (;;) {
        char *text = NULL;
        size_t len = 0;
        struct gg_run_opts o;
        int got = gg_wire_recv_case(in_fd, &text, &len, &o);
        if (got != 0) {
            gg_hostpool_drain(&pool);
            if (got == 1)
                return GG_OK;
            snprintf(err, err_len, "broken request from the supervisor");
            return GG_E_IO;
        }
        o.pool = &pool;
        struct gg_case c;
        struct gg_run_result r;
        memset(&r, 0, sizeof r);
        char msg[1024] = "";
        enum gg_status st = gg_case_parse(text, len, "request", &c, msg, sizeof msg);
        free(text);
        if (st == GG_OK)
            st = gg_run_case(&c, &o, &r, msg, sizeof msg);
        int sent = gg_wire_send_result(out_fd, st, msg, st == GG_OK ? &r : NULL);
        gg_run_result_free(&r);
        gg_case_free(&c);
        if (sent != 0) {
            gg_hostpool_drain(&pool);
            snprintf(err, err_len, "cannot write to the supervisor: %s", strerror(errno));
            return GG_E_IO;
        }
        if (gg_device_lost()) /* a sticky GPU error: the supervisor starts a fresh worker */
            return GG_OK;
    }
}

/*
 * campaign_int.h — internal to fuzz/: the wire protocol between a process that runs cases and
 * the one that asked for them (gg_worker.c; used by gg_isolate.c and the campaign supervisor),
 * and the campaign statistics writers (gg_stats.c).
 */
#ifndef GG_CAMPAIGN_INT_H
#define GG_CAMPAIGN_INT_H

#include <stdio.h>

#include "fuzz/gg_fuzz.h"

/* ---- Wire protocol (gg_worker.c) --------------------------------------------------------- */

/*
 * A request is a struct gg_wire_request followed by text_len bytes of case text; a reply is a
 * struct gg_wire_reply followed, when status is GG_OK and res.compared, by res.cmp.n_groups
 * struct gg_group_metrics. Both ends are the same build of ggfuzz: magic and size catch a
 * mismatch.
 */
#define GG_WIRE_MAGIC 0x67677731u /* "ggw1" */

struct gg_wire_request {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_request) */
    uint64_t text_len;
    int64_t max_mem_bytes;    /* gg_run_opts of the run */
    int64_t certify_samples;
};

struct gg_wire_reply {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_reply) */
    enum gg_status status;
    char err[1024];
    struct gg_run_result res; /* res.cmp.groups is not meaningful on the wire */
};

/* What a process running a case sends, from its signal handler, when the kernel faulted on a
   guard page of an operand (gg_faultnote.c): it dies on the signal right after. */
#define GG_WIRE_FAULT_MAGIC 0x67676631u /* "ggf1" */
struct gg_wire_fault {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_fault) */
    int32_t where;            /* enum gg_fault_where */
    int32_t operand;          /* 0 A, 1 B, 2 C */
    int32_t write;            /* 1 write, 0 read, -1 not known */
};

/* What a worker sends once it is ready; the supervisor feeds it only after this. */
struct gg_wire_hello {
    uint32_t magic;
    uint32_t pid;
};

double gg_wire_now(void);
/* Writes all n bytes (sockets without SIGPIPE); 0 or -1. */
int gg_wire_write(int fd, const void *buf, size_t n);
/* Reads n bytes: 0 done, 1 the deadline (monotonic seconds, 0: none) passed, -1 end of file or
   error. */
int gg_wire_read(int fd, void *buf, size_t n, double deadline);

/* Sends case text (len bytes, gg_case_format) with the memory and certification options of o
   (may be NULL). */
int gg_wire_send_case(int fd, const char *text, size_t len, const struct gg_run_opts *o);
/* Receives a request: 0 with *text (malloc'd, NUL-terminated) and o filled, 1 at a clean end of
   file, -1 on a broken or mismatched request. */
int gg_wire_recv_case(int fd, char **text, size_t *len, struct gg_run_opts *o);

/* Sends the outcome of one run. */
int gg_wire_send_result(int fd, enum gg_status st, const char *err, const struct gg_run_result *r);
/* Receives it: 0 with *st, err and r filled (r owns its groups), 1 deadline, -1 end of file or a
   broken reply, 2 a fault note instead (*fault filled; the process is dying on the signal; fault
   may be NULL, which reads a note as a broken reply). r is left zeroed unless 0 is returned. */
int gg_wire_recv_result(int fd, double deadline, enum gg_status *st, char *err, size_t err_len,
                        struct gg_run_result *r, struct gg_wire_fault *fault);

/*
 * The verdict of a run that ended without a result: signo > 0 the process died on that signal,
 * -1 it exited without a report, 0 with timeout_s > 0 it ran past that limit and was killed.
 * fault (may be NULL) is the note of where the fault hit. o's kernel and mutant overrides apply
 * as in gg_run_case().
 */
enum gg_status gg_run_ended_early(const struct gg_case *c, const struct gg_run_opts *o, int signo,
                                  double timeout_s, const struct gg_wire_fault *fault,
                                  struct gg_run_result *r, char *err, size_t err_len);

/*
 * SIGKILL is not a signal a kernel raises as a bug: a process running a case that ends on it,
 * when its parent did not send it, was killed from outside (kill -9, the OOM killer). Returns 1
 * and says so in msg, to follow "... was" ("killed by signal 9 (Killed) from outside ggfuzz (out
 * of memory?)"), else 0 with msg untouched.
 */
int gg_killed_from_outside(int signo, char *msg, size_t msg_len);

/* ---- Statistics (gg_stats.c) ------------------------------------------------------------- */

/* Everything the stats writers show, kept up to date by the supervisor. */
struct gg_stats_view {
    const struct gg_campaign_stats *s;
    const char *kernel, *mutant;
    uint64_t seed;
    double start_wall;        /* time(NULL) at start */
    double elapsed_s;
    double budget_s;          /* 0: none */
    int64_t max_runs;         /* 0: none */
    int workers;
    const char *command_line; /* may be NULL */
};

/* Rewrites dir/fuzzer_stats atomically (temporary file and rename). */
enum gg_status gg_stats_write(const char *dir, const struct gg_stats_view *v, char *err,
                              size_t err_len);
/* Appends one row to dir/plot_data, writing the header first when the file is new. */
enum gg_status gg_stats_plot(const char *dir, const struct gg_stats_view *v, char *err,
                             size_t err_len);
/* The live status line (carriage return, no newline) and the clearing of it. */
void gg_stats_status_line(FILE *f, const struct gg_stats_view *v);
void gg_stats_clear_line(FILE *f);
/* libFuzzer-style final statistics and the reason the campaign stopped. */
void gg_stats_final(FILE *f, const struct gg_stats_view *v);

#endif /* GG_CAMPAIGN_INT_H */

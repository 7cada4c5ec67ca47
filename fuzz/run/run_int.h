/*
 * run_int.h — internal to fuzz/run/: what only the room's own files use of the registry, host
 * buffers, devices and the worker's side of the wire protocol, the output checks of a run
 * (gg_output.c), where a kernel's fault hit (gg_faultnote.c), the rows of an operand and their
 * generation on the host (gg_materialise.c, gg_hostgen.c), how a child process ended and byte
 * counts for messages.
 */
#ifndef GG_RUN_INT_H
#define GG_RUN_INT_H

#include "fuzz/run/gg_run.h"

/* Removes every kernel after the first count (undoes the kernels of a refused plugin;
   gg_registry.c). */
void gg_registry_truncate(size_t count);

/* Bytes of each canary band of a host buffer (gg_hostbuf.c; the layout is gg_run.h's): large
   enough that an overrun by a whole 64x64 fp32 tile lands in the band, not the page. */
#define GG_CANARY_BYTES 65536

/* The variable that tells a bound process its ordinal as --gpus listed it (gg_gpus.c). */
#define GG_GPUS_DEVICE_ENV "GGFUZZ_DEVICE"

/* c as it runs under o's kernel and mutant overrides ("none": the correct kernel), copied into
   *eff, which the caller frees whatever the status (gg_runner.c): GG_E_INVAL for a mutant list
   too long for a case, GG_E_NOMEM. */
enum gg_status gg_case_overridden(const struct gg_case *c, const struct gg_run_opts *o,
                                  struct gg_case *eff, char *err, size_t err_len);

/* ---- The worker's side of the wire protocol (gg_worker.c, gg_faultnote.c) ------------------- */

/*
 * A request is a struct gg_wire_request followed by text_len bytes of case text; a reply is a
 * struct gg_wire_reply followed, when status is GG_OK and res.compared, by res.cmp.n_groups
 * struct gg_group_metrics. Both ends are the same build of ggfuzz: magic and size catch a
 * mismatch.
 */
struct gg_wire_request {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_request) */
    uint64_t text_len;
    int64_t max_mem_bytes;    /* gg_run_opts of the run */
    int64_t certify_samples;
    int32_t reference;        /* enum gg_reference_where */
};

struct gg_wire_reply {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_reply) */
    enum gg_status status;
    char err[1024];
    struct gg_run_result res; /* res.cmp.groups is not meaningful on the wire */
};

/* The magic of a struct gg_wire_fault (gg_run.h). */
#define GG_WIRE_FAULT_MAGIC 0x67676631u /* "ggf1" */

/* Receives a request: 0 with *text (malloc'd, NUL-terminated) and o filled, 1 at a clean end of
   file, -1 on a broken or mismatched request. */
int gg_wire_recv_case(int fd, char **text, size_t *len, struct gg_run_opts *o);
/* Sends the outcome of one run. */
int gg_wire_send_result(int fd, enum gg_status st, const char *err, const struct gg_run_result *r);

/* The output's live part (gg_output.c): range i of C's live ranges in bytes from element 0 of C,
   clipped to C's span; 0 when nothing of C lies in it. */
int gg_output_range(const struct gg_tensors *t, size_t i, struct gg_range *r);
/* A copy of C laid out like C (c_bytes of reserved memory, untouched pages cost nothing): NULL
   when it cannot be reserved. Freed by gg_output_free(). */
void *gg_output_alloc(const struct gg_tensors *t);
void gg_output_free(const struct gg_tensors *t, void *copy);
/* Copies the live part of C into copy; 1 when the live part of C differs from copy's as values
   (two NaNs are equal whatever their sign and payload; the sentinel is not a written NaN). */
void gg_output_save(const struct gg_tensors *t, void *copy);
int gg_output_differs(const struct gg_tensors *t, const void *copy);
/* When the live part of C is large enough for several of the reference's threads: zeroes it on
   them, so that its pages are first touched (faulted) on every core; otherwise nothing. For a
   target that fills a fresh C from elsewhere (the device's output). */
void gg_output_touch(struct gg_tensors *t);
/* The same for n bytes at p (a fresh buffer whose every byte its user writes). */
void gg_par_zero(void *p, size_t n);
/* 1 when an element of C's padding inside its live part lost the sentinel. */
int gg_output_padding_hit(const struct gg_tensors *t);

/* Where a kernel's fault hit (gg_faultnote.c): the process that runs kernels installs the
   handler once with its reply channel; the runner watches the operand buffers of each case
   (operand 0 A, 1 B, 2 C) and says when a kernel runs. */
void gg_faultnote_install(int fd);
void gg_faultnote_watch(int operand, const struct gg_hostbuf *b);
void gg_faultnote_clear(void);
void gg_faultnote_kernel(int running);

/* ---- The rows of an operand (gg_materialise.c) and their generation (gg_hostgen.c) ---------- */

/* The rows of one operand: mats matrices of rows × rowlen, matrix i at i·mstride, row r at r·ld. */
struct rowset {
    int64_t mats, rows, rowlen, mstride, ld;
    int skip_empty_groups; /* matrix i is the weight of group i: skip it when the group is empty */
};
/* The rows of A (which 0), B (1) or C (2). */
struct rowset gg_operand_rows(const struct gg_problem *p, int which);
/* 1 when matrix i of rs holds generated rows (not the weight of an empty group). */
int gg_mat_used(const struct gg_problem *p, const struct rowset *rs, int64_t i);

/* Per-operand generation recipe. */
struct recipe {
    const struct gg_dist *dist;
    enum gg_dtype dtype;
    uint64_t stream, scale_stream;
    void *data;       /* codes, laid out by the rowset */
    enum gg_gen_quant q;
    int per_mat;      /* GG_GEN_TENSOR: one scale per matrix */
    void *scales;     /* E8M0 codes (GG_GEN_MX) or fp32 dequantisation factors */
    float *src;       /* unquantised values, packed, or NULL */
    const struct gg_gen_plan *plan; /* GG_GEN_GRID: the block shape */
};

/* Largest number of values kept between the two passes of tensor scaling (256 MiB). */
#define ROWCACHE_MAX_VALUES ((int64_t)1 << 25)

/* The inputs of operand which (0 A, 1 B) under recipe r, generated and quantised into its
   buffers (gg_hostgen.c). GG_OK or GG_E_NOMEM with a message. */
enum gg_status gg_hostgen_fill(const struct gg_case *c, const struct gg_problem *p, int which,
                               const struct recipe *r, char *err, size_t err_len);
/* The generation plan of operand which (gg_gen_core.h), from which the device generator
   produces the same codes and scales as gg_hostgen_fill. */
void gg_hostgen_plan(const struct gg_case *c, const struct gg_problem *p, int which,
                     struct gg_gen_plan *g);

/* Outputs of the reference that the device target hands over at a time (gg_devrun.c): its host
   arrays hold two such runs of groups (a larger group alone), never the whole output. */
#define GG_REF_RUN_OUTPUTS ((int64_t)1 << 26)

/* How a child process that was running `what` ended without its reply, for messages
   (gg_plugin.c): "WHAT did not return within LIMIT s (LIMIT_NAME)" when timed_out, else from its
   wait status wst "WHAT died on signal 11 (Segmentation fault)" or "WHAT ended the process (exit
   status 0)". */
void gg_child_end_text(const char *what, int wst, int timed_out, double limit,
                       const char *limit_name, char *buf, size_t len);

/* A byte count for messages: "1.5 KiB", "3.2 MiB", "2.00 GiB" (gg_runner.c). */
void gg_fmt_bytes(int64_t n, char *buf, size_t len);

#endif /* GG_RUN_INT_H */

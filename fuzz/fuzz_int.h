/*
 * fuzz_int.h — internal to fuzz/: the materialised tensors of one case.
 */
#ifndef GG_FUZZ_INT_H
#define GG_FUZZ_INT_H

#include "fuzz/gg_fuzz.h"
#include "fuzz/gpu/gg_device.h" /* struct gg_range */
#include "reference/gg_gen_core.h"

/* Everything one run of a case needs, owned here and freed by gg_tensors_free(). */
struct gg_tensors {
    struct gg_problem p;              /* checked, defaults filled; points into the case and opts */
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_hostbuf a, b, c, a_scale, b_scale, bias, ws;
    /* Byte ranges of A, B and C (page-rounded, relative to their data) that hold generated rows
       (C: the rows a kernel writes); the pages between them are read-only zeros that no
       correct kernel reads (C: pages no access may touch). */
    struct gg_range *live[3];
    size_t n_live[3];
    int64_t *lens_dev, *offs_dev;     /* the "device" copies of the group arrays */
    int32_t *sorted, *experts;        /* moe routing (the problem points here) */
    int32_t *sorted_dev, *experts_dev; /* and the kernel's copies */
    struct gg_operands ops;           /* pointers into the buffers above, offsets applied */
    size_t c_bytes;                   /* bytes of C's span */
    /* Unquantised source operands (f32, packed, same geometry) when the inputs are quantised. */
    struct gg_problem src_p;
    struct gg_operands src_ops;
    void *src_a, *src_b;              /* the data of src_buf[0] and src_buf[1] */
    struct gg_hostbuf src_buf[2];
    /* How A and B were generated: the device path regenerates them from these (gg_devrun.c). */
    struct gg_gen_plan gen[2];
    struct gg_hostpool *pool; /* (optional, not owned) buffers come from and go back here */
    enum gg_guard guard;      /* the case's placement of A and B */
};

/* Builds the problem of case c in t, defaults filled and geometry checked, without the moe
   routing: nothing is allocated, so the memory estimate and admission come first. Free t with
   gg_tensors_free() whatever the result. */
enum gg_status gg_tensors_shape(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len);
/* After gg_tensors_shape(): builds the moe routing (other ops have none) and checks the whole
   problem. The routing costs what gg_tensors_estimate() counts for it. */
enum gg_status gg_tensors_route(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len);
/* gg_tensors_shape(), then gg_tensors_route(): the problem a kernel's supports() sees. */
enum gg_status gg_tensors_plan(const struct gg_case *c, struct gg_tensors *t, char *err,
                               size_t err_len);
/* After gg_tensors_plan() (and setting t->pool, if any): allocates the guarded buffers and
   fills the inputs of every group that holds tokens. */
enum gg_status gg_tensors_make(const struct gg_case *c, size_t workspace_bytes,
                               struct gg_tensors *t, char *err, size_t err_len);
/* Hash of everything the kernel may only read: the live ranges of A and B, the scales and the
   group arrays. Reads no page that was never written, so it stays cheap on huge sparse inputs. */
struct gg_hash gg_tensors_hash_inputs(const struct gg_tensors *t);
/* The output's live part (gg_output.c): range i of C's live ranges in bytes from element 0 of C,
   clipped to C's span; 0 when nothing of C lies in it. */
int gg_output_range(const struct gg_tensors *t, size_t i, struct gg_range *r);
/* Pre-fills the live part of C with the NaN sentinel and the workspace with the poison byte. */
void gg_tensors_poison(struct gg_tensors *t, uint8_t ws_poison);
/* A copy of C laid out like C (c_bytes of reserved memory, untouched pages cost nothing): NULL
   when it cannot be reserved. Freed by gg_output_free(). */
void *gg_output_alloc(const struct gg_tensors *t);
void gg_output_free(const struct gg_tensors *t, void *copy);
/* Copies the live part of C into copy; 1 when the live part of C differs from copy's. */
void gg_output_save(const struct gg_tensors *t, void *copy);
int gg_output_differs(const struct gg_tensors *t, const void *copy);
/* 1 when an element of C's padding inside its live part lost the sentinel. */
int gg_output_padding_hit(const struct gg_tensors *t);
void gg_tensors_free(struct gg_tensors *t);
/* Host bytes a run of the problem touches (operands, copies, routing, reference), after
   gg_tensors_shape() alone; saturates at GG_SIZE_MAX. */
int64_t gg_tensors_estimate(const struct gg_tensors *t);

/* Where a kernel's fault hit (gg_faultnote.c): the process that runs kernels installs the
   handler once with its reply channel; the runner watches the operand buffers of each case
   (operand 0 A, 1 B, 2 C) and says when a kernel runs. */
void gg_faultnote_install(int fd);
void gg_faultnote_watch(int operand, const struct gg_hostbuf *b);
void gg_faultnote_clear(void);
void gg_faultnote_kernel(int running);

/* The findings store's shared parts (gg_findings.c), for its bucket files (gg_buckets.c): the
   exclusive lock on <dir>/.lock (created with dir when missing; held until *fd is closed), the
   time stamp of a sighting, and the order that keeps the smaller case (fewer groups, then fewer
   output elements; 1 when a is strictly smaller than b). */
#define GG_STAMP_MAX 32 /* "YYYY-MM-DDThh:mm:ssZ" and room for a longer stored stamp */
enum gg_status gg_store_lock(const char *dir, int *fd, char *err, size_t err_len);
void gg_store_now(char stamp[GG_STAMP_MAX]);
int gg_case_smaller(const struct gg_case *a, const struct gg_case *b);
/* Groups and logical output elements of an expanded case (moe_sorted: m·topk rows of n). */
void gg_case_size(const struct gg_case *c, int64_t *groups, int64_t *elems);

/* A byte count for messages: "1.5 KiB", "3.2 MiB", "2.00 GiB" (gg_runner.c). */
void gg_fmt_bytes(int64_t n, char *buf, size_t len);

#endif /* GG_FUZZ_INT_H */

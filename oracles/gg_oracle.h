/*
 * gg_oracle.h — public header of oracles/: pure checks that turn a kernel's output and the
 * reference into a verdict. No I/O, no allocation outside the documented outputs, no device calls.
 */
#ifndef GG_ORACLE_H
#define GG_ORACLE_H

#include <stdint.h>
#include <stddef.h>

#include "reference/gg_ref.h"

/* ------------------------------------------------------------------------------------------ */
/* Verdict classes (gg_verdict.c)                                                               */
/* ------------------------------------------------------------------------------------------ */

/* In order of precedence: when several fire, the verdict carries the first in this list. */
enum gg_class {
    GG_CLASS_PASS = 0,
    GG_CLASS_CRASH,          /* the kernel's process died on a signal */
    GG_CLASS_TIMEOUT,        /* the kernel ran past its time limit */
    GG_CLASS_OOB_WRITE,      /* a guard band or padding element changed */
    GG_CLASS_INPUT_MODIFIED, /* a read-only operand changed */
    GG_CLASS_UNWRITTEN,      /* an output element still holds the NaN sentinel */
    GG_CLASS_NAN,            /* NaN/Inf where the reference is finite, or the reverse */
    GG_CLASS_WORKSPACE,      /* output depends on the workspace's initial contents */
    GG_CLASS_NONDETERMINISM, /* two identical runs differ */
    GG_CLASS_SNR,            /* wrong or too noisy: SNR below threshold or an element past its bound */
    GG_CLASS_DEVICE,         /* a sticky GPU error (illegal address, launch failure): the device
                                context of the process running the kernel is lost */
    GG_CLASS_COUNT
};
const char *gg_class_name(enum gg_class c);
/* GG_CLASS_COUNT when name is unknown. */
enum gg_class gg_class_from_name(const char *name);
/* Process exit code for a class: 0 for pass, 21 for device, 10 + class otherwise (README). */
int gg_class_exit_code(enum gg_class c);
/* One line that says what the class means. */
const char *gg_class_help(enum gg_class c);
/* Rank of a class when several fire on one run: the lowest wins (crash before timeout before
   oob_write ... before snr before device). */
int gg_class_precedence(enum gg_class c);
/* 1 when class a, a fault, outranks b (any fault outranks pass). */
int gg_class_more_severe(enum gg_class a, enum gg_class b);

/* ------------------------------------------------------------------------------------------ */
/* Thresholds (gg_threshold.c): one versioned table, reasoned in docs/checks.md §3-§5           */
/* ------------------------------------------------------------------------------------------ */

#define GG_THRESHOLDS_VERSION 7

struct gg_threshold {
    const char *name;         /* row name, e.g. "bf16->bf16" */
    double snr_fail_db;       /* fail below, against the exact product of dequantised inputs */
    double snr_expected_db;   /* what a correct kernel gives on normal data (for margins) */
    double snr_src_fail_db;   /* fail below, against the unquantised source (0: not applicable) */
    double u_out;             /* unit roundoff of the output format */
    double eta_out;           /* half the output format's smallest subnormal */
    double u_acc;             /* accumulation unit in γ_h(u_acc) (fp32 tensor cores: 2^-23) */
    double kappa;             /* when > 0: empirical per-element factor κ replacing γ_h (fp8) */
    double k_ref;             /* when > 0: past a reduction this long the SNR levels fall with
                                 20·log10(red / k_ref) (error linear in the reduction) */
};
/* The row for the problem's dtypes and scaling. Never NULL (falls back to the loosest row). */
const struct gg_threshold *gg_threshold_for(const struct gg_problem *p);
/* The levels that judge p: its row, with the SNR levels of a k_ref row lowered for p's longest
   reduction. */
struct gg_threshold gg_threshold_at(const struct gg_problem *p);

/* ------------------------------------------------------------------------------------------ */
/* Element checks (gg_oracle_snr.c, gg_oracle_compare.c)                                        */
/* ------------------------------------------------------------------------------------------ */

/* 10·log10(sig / err): +inf when err = 0 (exact), -inf when sig = 0 < err. */
double gg_oracle_snr_db(double sig, double err);
/* Per-element bound τ = u_o/(1-u_o)·|out| + γ_h(u_acc)·abs + η_o (or κ·abs for fp8 rows),
   with γ_h(u) = h·u / (1 - h·u) (+inf when h·u ≥ 1). */
double gg_oracle_bound(const struct gg_threshold *t, double out, double abs, int64_t h);
/* Bit pattern of the NaN sentinel an output of dtype t is pre-filled with. */
uint32_t gg_oracle_sentinel(enum gg_dtype t);

/* The largest finite fp32 value: the accumulator of every kernel (acc_dtype f32). An output
   whose Σ|ab| passes it may overflow anywhere in its sum and is not judged. */
#define GG_ORACLE_ACC_MAX 0x1.fffffep127
/* The number of terms h that the bound of an output of block b counts: the reduction, one more
   for a bias, two more per 128-block of the reduction under blockwise scales. */
int64_t gg_oracle_terms(const struct gg_problem *p, const struct gg_out_block *b);
/*
 * The per-element bounds of gg_compare_output(), for a caller that judges outputs elsewhere:
 * bound[i] (gg_problem_out_elems(p) doubles in reference order, like ref and abs) gets the part
 * of τ that does not depend on the output, so that τ = *rel·|out| + bound[i] (to rounding);
 * NaN for an element the comparison does not judge (a finite reference whose Σ|ab| passes
 * GG_ORACLE_ACC_MAX). *rel is u_o/(1-u_o) of the problem's threshold row.
 */
void gg_oracle_bounds(const struct gg_problem *p, const double *ref, const double *abs,
                      double *bound, double *rel);

/* Metrics of one group (or batch). */
struct gg_group_metrics {
    int64_t elems;          /* outputs of the group */
    double sig, err;        /* Σ ref², Σ (out - ref)² over finite, written, comparable outputs */
    double rn_err;          /* Σ (RN_out(ref) - ref)²: what output rounding alone costs */
    double snr_db;          /* gg_oracle_snr_db(sig, err); +inf for an empty group */
    double max_ratio;       /* max |out - ref| / τ */
    int64_t n_bound;        /* elements with |out - ref| > τ */
    int64_t n_nan;          /* NaN/Inf mismatches */
    int64_t n_unwritten;    /* elements still holding the sentinel */
    int64_t first_bad;      /* packed index (reference order) of the first bad element, or -1 */
    /* Against the unquantised source, when given (NAN otherwise): the output's SNR, and the
       exact reference's own (the recipe's quantisation loss), over the same outputs. */
    double src_snr_db, ref_src_snr_db;
    struct gg_worst_element { /* the judged element of the largest ratio (row -1: none) */
        int64_t row, col;     /* in the group's block */
        double out, ref, abs, tau; /* output, reference, Σ|ab| and bound τ */
    } worst;
};

/* Where the bad elements of the output lie, for signatures. */
enum gg_region {
    GG_REGION_NONE = 0,
    GG_REGION_ALL,         /* most of the output */
    GG_REGION_ROWS_TAIL,   /* only rows of the last partial row tile of their group */
    GG_REGION_COLS_TAIL,   /* only columns of the last partial column tile */
    GG_REGION_SINGLE_TILE, /* inside one output tile */
    GG_REGION_SCATTERED,
    GG_REGION_GUARD_PRE,   /* before the output (guard band) */
    GG_REGION_GUARD_POST,  /* after the output or in padding */
    GG_REGION_COUNT
};
const char *gg_region_name(enum gg_region r);

/* Result of comparing an output with the reference. groups: p->groups entries, owned by the
   struct, freed by gg_compare_free(). */
struct gg_compare {
    struct gg_group_metrics *groups;
    int64_t n_groups;
    double sig, err, snr_db; /* pooled over all groups */
    double rn_err;           /* pooled Σ (RN_out(ref) - ref)² */
    double max_ratio;
    int64_t n_bound, n_nan, n_unwritten;
    double src_snr_db;      /* against the unquantised source, when given; NAN otherwise */
    double ref_src_snr_db;  /* the exact reference against the source, over the same outputs:
                               what the recipe's quantisation alone loses; NAN without a source */
    int64_t src_n;          /* outputs in it that carry signal: source or output non-zero */
    enum gg_region region;
    /* Set by the caller after the comparison when the inputs are adversarial (planted ±max and
       NaN specials, far outliers: sums of such values cancel, a correct fp32 accumulator loses
       digits no SNR level can model) or an operand is constant (the outputs of a row repeat one
       sum): the SNR is reported but only the per-element checks (bound, NaN, unwritten)
       decide. */
    int snr_advisory;
};

/*
 * Compares the output c (the kernel's buffer, encoded in p->c_dtype, laid out with p->ldc and
 * p->stride_c) with ref and abs (reference order, see gg_ref_gemm). src may be NULL; otherwise it
 * is the product of the unquantised source operands (same order) for the source SNR.
 * tile_m, tile_n: the kernel's output tile (0 when unknown) used to name the region.
 * Returns GG_OK or GG_E_NOMEM.
 */
enum gg_status gg_compare_output(const struct gg_problem *p, const void *c, const double *ref,
                                 const double *abs, const double *src, int64_t tile_m,
                                 int64_t tile_n, struct gg_compare *out);
void gg_compare_free(struct gg_compare *cmp);

/*
 * gg_compare_output() in parts, for a reference that arrives a run of groups at a time (computed
 * chunk by chunk, never whole in memory): begin (with_src: a source product comes with the
 * reference), then groups [g0, g1) in order, each call with g0 the end of the previous one and
 * ref, abs and src holding just those groups' outputs (packed from gg_compare_group_start(run,
 * g0); src given exactly when with_src), or ref NULL when the reference of those groups is
 * exactly zero, with a zero Σ|ab| and source product (groups with no reduction and no bias);
 * then end, which fills out and frees run. The result is gg_compare_output()'s, whatever the
 * split. abort frees a run that will not end. p and c must outlive the run. Returns GG_OK,
 * GG_E_NOMEM, or GG_E_INVAL for groups out of order or a source against with_src (end: not all
 * groups seen; run freed).
 */
struct gg_compare_run;
enum gg_status gg_compare_begin(const struct gg_problem *p, const void *c, int64_t tile_m,
                                int64_t tile_n, int with_src, struct gg_compare_run **run);
int64_t gg_compare_group_start(const struct gg_compare_run *run, int64_t g);
enum gg_status gg_compare_groups(struct gg_compare_run *run, int64_t g0, int64_t g1,
                                 const double *ref, const double *abs, const double *src);
enum gg_status gg_compare_end(struct gg_compare_run *run, struct gg_compare *out);
void gg_compare_abort(struct gg_compare_run *run);

/* ------------------------------------------------------------------------------------------ */
/* Structural checks (gg_oracle_guard.c, gg_oracle_hash.c)                                      */
/* ------------------------------------------------------------------------------------------ */

/* Canary byte at offset i of a guard band; a band is n bytes of gg_oracle_canary(i). */
static inline uint8_t gg_oracle_canary(size_t i)
{
    return (uint8_t)(0xA5u ^ (uint8_t)(i * 0x3Du));
}
void gg_oracle_canary_fill(uint8_t *band, size_t n);
/* Index of the first byte of band that is not its canary, or -1 when intact. */
int64_t gg_oracle_canary_check(const uint8_t *band, size_t n);

/* Output padding (elements between the rows of C that no group owns; for moe_sorted also every
   row no valid sorted id names) must keep the sentinel: returns the first changed element index
   (in c's storage) or -1. */
int64_t gg_oracle_padding_check(const struct gg_problem *p, const void *c);
/* A range [lo, hi) of element indices in C's storage. */
struct gg_elem_range {
    int64_t lo, hi;
};
/* gg_oracle_padding_check() over the padding inside the n sorted, disjoint ranges live only:
   the rest of C is never read (a sparse output whose pages between the written rows cannot be
   accessed). Costs O(n + the padding inside the ranges). */
int64_t gg_oracle_padding_check_live(const struct gg_problem *p, const void *c,
                                     const struct gg_elem_range *live, size_t n_live);

/* 128-bit content hash (XXH3-128) of n bytes, for input immutability. */
struct gg_hash {
    uint64_t lo, hi;
};
struct gg_hash gg_oracle_hash(const void *data, size_t n);
static inline int gg_hash_equal(struct gg_hash a, struct gg_hash b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

/* Index of the first differing byte of two n-byte buffers, or -1 when bitwise identical. */
int64_t gg_oracle_first_diff(const void *x, const void *y, size_t n);
/* The same for two n-byte outputs of dtype t, element-aligned, compared as values: every NaN is
   one value whatever its sign and payload, except that where t's sentinel is a pattern no
   computed NaN takes (gg_oracle_sentinel) it differs from a written NaN. Returns the offset of
   the first element that differs, or -1. Costs a memcmp unless bytes differ. */
int64_t gg_oracle_first_value_diff(enum gg_dtype t, const void *x, const void *y, size_t n);

/* ------------------------------------------------------------------------------------------ */
/* Verdicts and signatures (gg_verdict.c)                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Where a fault of the kernel's process hit the harness's own memory (gg_observations). */
enum gg_fault_where {
    GG_FAULT_NONE = 0,     /* not known: a wild address, or no fault */
    GG_FAULT_PAST_END,     /* the inaccessible page right after an operand's last byte */
    GG_FAULT_BEFORE_START, /* the inaccessible page right before its first byte */
    GG_FAULT_UNUSED        /* a protected page between the rows of an operand that are used */
};

/* The structural observations of one case run, gathered by the runner. */
struct gg_observations {
    int guard_hit;          /* a canary band around C or the workspace changed */
    int guard_pre;          /* ...before the buffer (else after) */
    int padding_hit;        /* a padding element of C changed */
    int input_modified;     /* a hash of A, B, scales or group arrays changed */
    int workspace_dep;      /* output differs under a second workspace poison */
    int nondeterministic;   /* output differs between two runs with the same poison */
    int crash_signal;       /* the kernel's process died on this signal (-1: exited without a
                               result; 0: no crash) */
    double timeout_s;       /* the kernel ran past this limit and was killed (0: none) */
    int device_error;       /* a sticky GPU error ended the run (the output was not compared) */
    /* With crash_signal: where the fault was, when it hit one of the harness's guard pages. */
    enum gg_fault_where fault_where;
    int fault_operand;      /* 0 A, 1 B, 2 C */
    int fault_write;        /* 1 a write, 0 a read, -1 not known */
};

#define GG_SIGNATURE_MAX 256
#define GG_VERDICT_GROUPS_MAX 16

struct gg_verdict {
    enum gg_class cls;
    double worst_snr_db;     /* lowest per-group SNR */
    int64_t worst_group;     /* its index, -1 when none */
    double snr_fail_db;      /* threshold used */
    double max_ratio;        /* max |out-ref|/τ over all outputs */
    int64_t n_fail_groups;   /* groups with any fault */
    int64_t fail_groups[GG_VERDICT_GROUPS_MAX]; /* their first indices */
    char signature[GG_SIGNATURE_MAX];
    char detail[256];        /* one human line: what fired and where */
    char advisory[256];      /* "" or a line on what is not the kernel's fault: a source SNR
                                below its level that the exact reference does not beat */
};

/*
 * Builds the verdict of one run from the comparison and the structural observations (either may
 * report nothing). kernel_name and the kernel's tiles go into the signature:
 *   class/kernel/a-b-c dtypes/op/shape class/group pattern/region/magnitude
 * cmp may be NULL when the output could not be compared (crash, timeout).
 */
void gg_verdict_make(const struct gg_problem *p, const char *kernel_name, int64_t tile_m,
                     int64_t tile_n, int64_t tile_k, const struct gg_compare *cmp,
                     const struct gg_observations *obs, struct gg_verdict *v);

#endif /* GG_ORACLE_H */

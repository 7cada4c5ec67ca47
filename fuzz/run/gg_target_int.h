/*
 * gg_target_int.h — internal to fuzz/run/: where a kernel's operands live while the run protocol
 * (gg_runner.c) drives it. A target places the materialised host tensors where the kernel reads
 * them, poisons the output and the workspace, runs the kernel, checks the guards and brings the
 * output back into the host C buffer, so that the protocol (two workspace poisons, a third run
 * when the outputs differ, input hashes before and after) and the oracles are written once. The
 * host target (gg_hostrun.c) runs a CPU kernel on the host buffers themselves; the device target
 * (gg_devrun.c) runs a GPU kernel on a device mirror of them.
 */
#ifndef GG_TARGET_INT_H
#define GG_TARGET_INT_H

#include "fuzz/run/run_int.h"

struct gg_target;

/* Receives a reference a run of groups at a time: the outputs of groups [g0, g1) (n of them,
   packed in reference order from group g0's first) in ref and abs, and src (NULL without an
   unquantised source) the source's product; or all three NULL when those groups' reference is
   exactly zero (no reduction, no bias: an empty expert's wgrad). The arrays are valid during
   the call only. */
struct gg_ref_sink {
    enum gg_status (*put)(void *ctx, int64_t g0, int64_t g1, int64_t n, const double *ref,
                          const double *abs, const double *src, char *err, size_t err_len);
    void *ctx;
};

/* The slots of a target. Every slot gets the target and reports its own failures as a status
   with a message in err; a slot marked (optional) may be NULL. */
struct gg_target_i {
    /* (optional) Places the operands where the kernel reads them (admission included) and
       makes what the other slots use. Called once, before any other slot. */
    enum gg_status (*prepare)(struct gg_target *tg, char *err, size_t err_len);
    /* The operands the kernel receives, after prepare. */
    const struct gg_operands *(*operands)(struct gg_target *tg);
    /* A hash of everything the kernel may only read (inputs, scales, bias, group arrays,
       routing), where the kernel reads it. */
    enum gg_status (*hash_inputs)(struct gg_target *tg, struct gg_hash *h, char *err,
                                  size_t err_len);
    /* Pre-fills the live part of C with the sentinel and the workspace with the byte ws_poison,
       done before the call returns. */
    enum gg_status (*poison)(struct gg_target *tg, uint8_t ws_poison, char *err, size_t err_len);
    /* Runs kernel k on the operands and returns once it has finished: *kst and kerr get what the
       kernel's run() returned, the status the target's own failure (e.g. an error of the
       kernel's asynchronous work that the wait reports, named after the kernel). The protocol
       times this call. */
    enum gg_status (*launch)(struct gg_target *tg, const struct gg_kernel *k, enum gg_status *kst,
                             char *kerr, size_t kerr_len, char *err, size_t err_len);
    /* Records a changed canary band around C or the workspace in obs->guard_hit and
       obs->guard_pre. */
    enum gg_status (*check_guards)(struct gg_target *tg, struct gg_observations *obs, char *err,
                                   size_t err_len);
    /* (optional) Copies the live part of C into the host C buffer (t->ops.c), which the
       protocol's padding check and output copies read. NULL: the kernel wrote it there. */
    enum gg_status (*fetch_output)(struct gg_target *tg, char *err, size_t err_len);
    /* (optional) Places the inputs again as prepare placed them (the kernel wrote into them):
       the reference then reads what the kernel was given. */
    enum gg_status (*restore_inputs)(struct gg_target *tg, char *err, size_t err_len);
    /* (optional) The reference where the kernel reads its inputs: ref and abs, and src (when the
       tensors have an unquantised source, t->has_source) the source's product, each as
       gg_ref_gemm() gives them, handed to sink in runs of whole groups in group order, so that
       no more than a bounded chunk of it is ever held; with certify > 0 the MPFR certification
       of ref on that many outputs, its vectors fetched from the target, after the last run.
       NULL: the reference runs on the host tensors. */
    enum gg_status (*reference)(struct gg_target *tg, const struct gg_ref_sink *sink,
                                int64_t certify, char *err, size_t err_len);
    /* (optional) 1 when a failure left the target unable to run anything more (a sticky device
       error): the failure is then a `device` observation (obs->device_error), not a harness
       error, and the process should exit after reporting it. */
    int (*lost)(struct gg_target *tg);
    /* (optional) Frees what prepare made, whatever prepare returned. */
    void (*release)(struct gg_target *tg);
};

/* A target bound to the tensors of one case run. */
struct gg_target {
    const struct gg_target_i *iface;
    struct gg_tensors *t; /* the materialised host tensors (not owned) */
    void *ctx;            /* the target's own state (set and freed by its slots) */
    double alloc_seconds; /* of prepare's time, what allocating its buffers and their guard
                             bands took (set by prepare; the rest places the inputs) */
};

/* The host target (gg_hostrun.c): a CPU kernel on the guarded host buffers, its faults noted
   (gg_faultnote.c). */
extern const struct gg_target_i gg_hostrun_iface;

/*
 * The device target (gg_devrun.c), for a kernel of backend CUDA or HIP: prepare takes the
 * process's device context, admits the case against the free device memory and builds guarded
 * device buffers (A and B generated on the device, the small arrays copied); inputs are hashed on
 * the device, every device guard is checked after each run, and C comes back into the host C.
 * A sticky device error makes lost() 1.
 */
extern const struct gg_target_i gg_devrun_iface;

/* The target that runs kernel k: the host target for a CPU kernel, else the device target. */
const struct gg_target_i *gg_run_target_of(const struct gg_kernel *k);

/* What every run of a case does before the kernel runs (gg_runner.c): the kernel and mutant
   admission (kernel and mutant overrides of o applied to the copy eff, *kp the kernel), the
   shape, the host-memory admission, the routing, supports() and the materialisation into t;
   with inputs_on_device and a GPU kernel, A and B are left for the device target to generate
   (t->inputs_on_device). r gets the kernel, the mutant and the memory
   estimate. The caller frees eff and t whatever the result. */
enum gg_status gg_run_setup(const struct gg_case *c, const struct gg_run_opts *o,
                            int inputs_on_device, const struct gg_kernel **kp,
                            struct gg_case *eff, struct gg_tensors *t, struct gg_run_result *r,
                            char *err, size_t err_len);

#endif /* GG_TARGET_INT_H */

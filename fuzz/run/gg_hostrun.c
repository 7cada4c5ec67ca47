/*
 * gg_hostrun.c — the host target of the run protocol (gg_target_int.h): a CPU kernel runs on the
 * guarded host buffers that gg_materialise.c made, with no copies. The kernel runs with its
 * faults noted (gg_faultnote.c), the inputs are hashed where they lie, and the guards are the
 * canary bands of the host C and workspace buffers.
 */
#include "fuzz/run/gg_target_int.h"

static const struct gg_operands *host_operands(struct gg_target *tg)
{
    return &tg->t->ops;
}

static enum gg_status host_hash_inputs(struct gg_target *tg, struct gg_hash *h, char *err,
                                       size_t err_len)
{
    (void)err, (void)err_len;
    *h = gg_tensors_hash_inputs(tg->t);
    return GG_OK;
}

static enum gg_status host_poison(struct gg_target *tg, uint8_t ws_poison, char *err,
                                  size_t err_len)
{
    (void)err, (void)err_len;
    gg_tensors_poison(tg->t, ws_poison);
    return GG_OK;
}

static enum gg_status host_launch(struct gg_target *tg, const struct gg_kernel *k,
                                  enum gg_status *kst, char *kerr, size_t kerr_len, char *err,
                                  size_t err_len)
{
    (void)err, (void)err_len;
    gg_faultnote_kernel(1);
    *kst = k->run(&tg->t->p, &tg->t->ops, kerr, kerr_len);
    gg_faultnote_kernel(0);
    return GG_OK;
}

/* The bands are not written again between runs: a run that finds one hit sets guard_pre from
   the first buffer (C, then the workspace) whose band changed. */
static enum gg_status host_check_guards(struct gg_target *tg, struct gg_observations *obs,
                                        char *err, size_t err_len)
{
    (void)err, (void)err_len;
    int pre = 0;
    if (gg_hostbuf_guard_hit(&tg->t->c, &pre) || gg_hostbuf_guard_hit(&tg->t->ws, &pre)) {
        obs->guard_hit = 1;
        obs->guard_pre = pre;
    }
    return GG_OK;
}

/* Nothing to place, fetch or free: the kernel reads and writes the host buffers. */
const struct gg_target_i gg_hostrun_iface = {
    .operands = host_operands,
    .hash_inputs = host_hash_inputs,
    .poison = host_poison,
    .launch = host_launch,
    .check_guards = host_check_guards,
};

/*
 * gg_runner.c — runs one case in this process and applies every oracle: admission (kernel,
 * mutant, supports(), host memory), materialisation, then the run protocol over the kernel's
 * target (gg_target_int.h: the host buffers, gg_hostrun.c, or a device mirror, gg_devrun.c):
 * input hashes, the kernel run under two workspace poisons (a third run tells
 * uninitialised-workspace reads from plain nondeterminism), guard bands and padding after each
 * run, the input hashes again; then the reference and the comparison, and finally the verdict.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/run/device/gg_device.h"
#include "fuzz/run/gg_target_int.h"

/* The workspace poisons of the first and second run (the third repeats the first). */
#define POISON_1 0x5Au
#define POISON_2 0xC3u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t mem_available(void)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : INT64_MAX;
}

int64_t gg_case_mem_estimate(const struct gg_case *c)
{
    struct gg_tensors t;
    char err[256];
    int64_t bytes = gg_tensors_shape(c, &t, err, sizeof err) == GG_OK ? gg_tensors_estimate(&t) : 0;
    gg_tensors_free(&t);
    return bytes;
}

void gg_fmt_bytes(int64_t n, char *buf, size_t len)
{
    if (n == GG_SIZE_MAX)
        snprintf(buf, len, "more than 2^63 bytes");
    else if (n >= (int64_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", (double)n / (double)(1 << 30));
    else if (n >= (int64_t)1 << 20)
        snprintf(buf, len, "%.1f MiB", (double)n / (double)(1 << 20));
    else
        snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
}

/* The host memory a case may take (ctx: its gg_run_opts): --max-mem, else what is available
   now. */
static int64_t host_limit(void *ctx)
{
    const struct gg_run_opts *o = ctx;
    return o && o->max_mem_bytes > 0 ? o->max_mem_bytes : mem_available();
}

/* The memory admission: the estimate of the shaped problem plus the workspace against the
   limit. Runs before anything the estimate counts is allocated. */
static enum gg_status admit_memory(const struct gg_tensors *t, size_t ws,
                                   const struct gg_run_opts *o, struct gg_run_result *r,
                                   char *err, size_t err_len)
{
    r->mem_bytes = gg_size_add(gg_tensors_estimate(t), (int64_t)ws);
    /* beside other cases of a node, once it fits beside what they hold (gg_ledger.c) */
    int64_t limit = gg_ledger_admit(GG_LEDGER_HOST, r->mem_bytes, host_limit, (void *)o);
    if (r->mem_bytes <= limit)
        return GG_OK;
    char need[32], have[32];
    gg_fmt_bytes(r->mem_bytes, need, sizeof need);
    gg_fmt_bytes(limit, have, sizeof have);
    snprintf(err, err_len, "case needs %s of host memory, %s %s", need,
             o && o->max_mem_bytes > 0 ? "--max-mem allows" : "only", have);
    return GG_E_NOMEM;
}

enum gg_status gg_case_overridden(const struct gg_case *c, const struct gg_run_opts *o,
                                  struct gg_case *eff, char *err, size_t err_len)
{
    memset(eff, 0, sizeof *eff);
    enum gg_status st = gg_case_copy(eff, c);
    if (st != GG_OK) {
        snprintf(err, err_len, "out of memory copying the case");
        return st;
    }
    if (o && o->kernel)
        snprintf(eff->kernel, sizeof eff->kernel, "%s", o->kernel);
    if (o && o->mutant && strlen(o->mutant) >= sizeof eff->mutant) {
        snprintf(err, err_len, "mutant list '%s' is longer than %d characters", o->mutant,
                 (int)sizeof eff->mutant - 1);
        return GG_E_INVAL;
    }
    if (o && o->mutant)
        snprintf(eff->mutant, sizeof eff->mutant, "%s", strcmp(o->mutant, "none") ? o->mutant : "");
    return GG_OK;
}

/* Kernel, mutant and support checks. */
static enum gg_status admit(const struct gg_case *c, const struct gg_run_opts *o,
                            const struct gg_kernel **kp, struct gg_case *eff, char *err,
                            size_t err_len)
{
    enum gg_status st = gg_case_overridden(c, o, eff, err, err_len);
    if (st != GG_OK)
        return st;
    const struct gg_kernel *k = gg_registry_find(eff->kernel);
    if (!k) {
        snprintf(err, err_len, "unknown kernel '%s' (ggfuzz list shows the kernels)", eff->kernel);
        return GG_E_INVAL;
    }
    if (!(k->ops & GG_OP_BIT(eff->op))) {
        snprintf(err, err_len, "kernel %s does not implement op %s", k->name, gg_op_name(eff->op));
        return GG_E_UNSUPPORTED;
    }
    if (eff->mutant[0] && !gg_mutant_list_check(eff->mutant, k->mutants, k->name, err, err_len))
        return GG_E_INVAL;
    *kp = k;
    return GG_OK;
}

/* Runs the kernel once on freshly poisoned C and workspace, timed (*seconds, when not NULL);
   checks the guards, brings C to the host and checks its padding afterwards. */
static enum gg_status run_once(struct gg_target *tg, const struct gg_kernel *k, uint8_t poison,
                               struct gg_observations *obs, double *seconds, char *err,
                               size_t err_len)
{
    const struct gg_target_i *f = tg->iface;
    enum gg_status st = f->poison(tg, poison, err, err_len);
    if (st != GG_OK)
        return st;
    char kerr[256] = "";
    enum gg_status kst = GG_OK;
    double t0 = now_s();
    st = f->launch(tg, k, &kst, kerr, sizeof kerr, err, err_len);
    if (seconds)
        *seconds = now_s() - t0;
    if (st != GG_OK)
        return st;
    if (kst != GG_OK) {
        snprintf(err, err_len, "kernel %s failed: %s", k->name, kerr[0] ? kerr : "no message");
        return kst;
    }
    if ((st = f->check_guards(tg, obs, err, err_len)) != GG_OK ||
        (f->fetch_output && (st = f->fetch_output(tg, err, err_len)) != GG_OK))
        return st;
    if (gg_output_padding_hit(tg->t))
        obs->padding_hit = 1;
    return GG_OK;
}

/* First run, then the workspace-poison and determinism runs. out1 receives the first output. */
static enum gg_status run_kernel(struct gg_target *tg, const struct gg_kernel *k, void *out1,
                                 struct gg_observations *obs, double *seconds, char *err,
                                 size_t err_len)
{
    struct gg_tensors *t = tg->t;
    enum gg_status st = run_once(tg, k, POISON_1, obs, seconds, err, err_len);
    if (st != GG_OK)
        return st;
    gg_output_save(t, out1);
    if ((st = run_once(tg, k, POISON_2, obs, NULL, err, err_len)) != GG_OK)
        return st;
    if (!gg_output_differs(t, out1))
        return GG_OK;
    /* Outputs differ: the same poison again separates workspace reads from races. */
    if ((st = run_once(tg, k, POISON_1, obs, NULL, err, err_len)) != GG_OK)
        return st;
    if (!gg_output_differs(t, out1) && tg->iface->operands(tg)->workspace)
        obs->workspace_dep = 1;
    else
        obs->nondeterministic = 1;
    return GG_OK;
}

/* The reference of a run: the product, its Σ|ab| and (quantised inputs) the product of the
   unquantised source, each in reference order. */
struct reference {
    double *ref, *abs, *src;
};

static void reference_free(struct reference *rf)
{
    free(rf->ref);
    free(rf->abs);
    free(rf->src);
    memset(rf, 0, sizeof *rf);
}

/* The run protocol on target tg: prepare, input hashes, the runs, the input hashes again; then,
   with a sink, the target's reference handed to it (inputs placed again first when the kernel
   changed them). A failure of a target that was lost is a `device` observation (the worker
   exits after reporting it, gg_worker.c). */
static enum gg_status run_target(struct gg_target *tg, const struct gg_kernel *k, void *out1,
                                 const struct gg_ref_sink *sink, int64_t certify,
                                 struct gg_observations *obs, struct gg_run_result *r, char *err,
                                 size_t err_len)
{
    const struct gg_target_i *f = tg->iface;
    struct gg_hash before, after;
    double t0 = now_s();
    enum gg_status st = f->prepare ? f->prepare(tg, err, err_len) : GG_OK;
    double t1 = now_s();
    r->phase.alloc = tg->alloc_seconds;
    r->phase.inputs = t1 - t0 - tg->alloc_seconds;
    if (st == GG_OK && (st = f->hash_inputs(tg, &before, err, err_len)) == GG_OK &&
        (st = run_kernel(tg, k, out1, obs, &r->kernel_seconds, err, err_len)) == GG_OK &&
        (st = f->hash_inputs(tg, &after, err, err_len)) == GG_OK)
        obs->input_modified = !gg_hash_equal(before, after);
    t0 = now_s();
    r->phase.runs = t0 - t1;
    int ref_failed = 0; /* the reference's own failure is no finding of the kernel's */
    if (st == GG_OK && sink &&
        ((obs->input_modified && (st = f->restore_inputs(tg, err, err_len)) != GG_OK) ||
         (st = f->reference(tg, sink, certify, err, err_len)) != GG_OK))
        ref_failed = 1;
    r->phase.reference = now_s() - t0;
    if (st != GG_OK && !ref_failed && f->lost && f->lost(tg)) {
        obs->device_error = 1;
        st = GG_OK;
    }
    if (f->release) {
        t0 = now_s();
        f->release(tg);
        r->phase.release = now_s() - t0;
    }
    return st;
}

/* An operand whose values all lie within 20% of one value (normal's ±6 std bound; const). Every
   output of a row (or column) then repeats nearly the same sum, and a group's SNR rests on a
   handful of independent values: a one-token fp8 dgrad group of const(-0.5) weights gave 1056
   copies of one tensor-core sum at 36 dB, a wgrad of normal(1, 0.01) activations 286 near-copies
   at 54 dB, every element within 0.5% of its bound. */
static int nearly_constant(const struct gg_dist *d)
{
    switch (d->kind) {
    case GG_DIST_CONST:
        return 1;
    case GG_DIST_NORMAL:
        return 6.0 * d->p[1] <= 0.2 * fabs(d->p[0]);
    case GG_DIST_UNIFORM:
        return d->p[1] - d->p[0] <= 0.2 * fabs(d->p[0] + d->p[1]);
    default:
        return 0;
    }
}

/* Data whose SNR is only advisory: planted specials (NaN, ±max) and special codes, and far
   outliers, whose sums cancel, and nearly constant operands. */
static int snr_advisory_data(const struct gg_dist *d)
{
    return d->kind == GG_DIST_SPECIALS || d->kind == GG_DIST_CODES ||
           d->kind == GG_DIST_OUTLIERS || nearly_constant(d);
}

/* Both operands at near-saturation values (±max and the rounding thresholds below it): their
   products are a few values of random sign whose sums cancel to the scales' rounding. An FP8
   dense case (e5m2 x e4m3, f16 out, rowwise, K 128) had every exact output below 1e-7 against
   Σ|ab| of 4e9: every element within its bound, and an SNR of 0 dB that no correct kernel can
   beat. */
static int snr_advisory_case(const struct gg_case *c)
{
    return snr_advisory_data(&c->dist_a) || snr_advisory_data(&c->dist_b) ||
           (c->dist_a.kind == GG_DIST_NEARSAT && c->dist_b.kind == GG_DIST_NEARSAT);
}

/* The arrays of t's reference (freed by reference_free whatever the result). */
static enum gg_status reference_alloc(const struct gg_tensors *t, struct reference *rf,
                                      char *err, size_t err_len)
{
    int64_t n = gg_problem_out_elems(&t->p);
    size_t bytes = (size_t)gg_size_mul(n > 0 ? n : 1, sizeof(double));
    rf->ref = malloc(bytes);
    rf->abs = malloc(bytes);
    rf->src = t->has_source ? malloc(bytes) : NULL;
    if (!rf->ref || !rf->abs || (t->has_source && !rf->src)) {
        snprintf(err, err_len, "out of memory for the reference (%lld outputs)", (long long)n);
        return GG_E_NOMEM;
    }
    gg_par_zero(rf->ref, bytes);
    gg_par_zero(rf->abs, bytes);
    if (rf->src)
        gg_par_zero(rf->src, bytes);
    return GG_OK;
}

/* Computes the reference of t on the host into rf (freed by reference_free whatever the
   result), certified by MPFR on o->certify_samples outputs. */
static enum gg_status reference_make(const struct gg_tensors *t, const struct gg_run_opts *o,
                                     struct reference *rf, char *err, size_t err_len)
{
    enum gg_status st = reference_alloc(t, rf, err, err_len);
    if (st != GG_OK)
        return st;
    st = gg_ref_gemm(&t->p, &t->ops, rf->ref, rf->abs, err, err_len);
    if (st == GG_OK && rf->src)
        st = gg_ref_gemm(&t->src_p, &t->src_ops, rf->src, NULL, err, err_len);
    if (st != GG_OK || !o || o->certify_samples <= 0)
        return st;
    int64_t bad = -1;
    if (gg_ref_certify(&t->p, &t->ops, rf->ref, rf->abs, o->certify_samples, 1, &bad) > 0) {
        snprintf(err, err_len, "reference failed MPFR certification at output %lld",
                 (long long)bad);
        return GG_E_INTERNAL;
    }
    return GG_OK;
}

/* The comparison's result in r (st: how it ended). */
static enum gg_status judged(enum gg_status st, const struct gg_case *c, struct gg_run_result *r,
                             char *err, size_t err_len)
{
    if (st == GG_OK)
        r->cmp.snr_advisory = snr_advisory_case(c);
    if (st != GG_OK)
        snprintf(err, err_len, "%s", st == GG_E_NOMEM ? "out of memory comparing outputs"
                                                      : "the reference left groups uncompared");
    r->compared = st == GG_OK;
    return st;
}

/* The comparison of the output with the reference. */
static enum gg_status judge(const struct gg_case *c, const struct gg_kernel *k,
                            const struct gg_tensors *t, const void *out,
                            const struct reference *rf, struct gg_run_result *r, char *err,
                            size_t err_len)
{
    return judged(gg_compare_output(&t->p, out, rf->ref, rf->abs, rf->src, k->tile_m, k->tile_n,
                                    &r->cmp),
                  c, r, err, err_len);
}

/* A sink that compares each run of groups as it arrives (a reference on the device), timed. */
struct compare_sink {
    struct gg_compare_run *run;
    double seconds;
};

static enum gg_status compare_put(void *ctx, int64_t g0, int64_t g1, int64_t n, const double *ref,
                                  const double *abs, const double *src, char *err, size_t err_len)
{
    (void)n;
    struct compare_sink *cs = ctx;
    double t0 = now_s();
    enum gg_status st = gg_compare_groups(cs->run, g0, g1, ref, abs, src);
    cs->seconds += now_s() - t0;
    if (st == GG_E_NOMEM)
        snprintf(err, err_len, "out of memory comparing outputs");
    else if (st != GG_OK)
        snprintf(err, err_len, "the reference came out of group order (groups %lld to %lld)",
                 (long long)g0, (long long)g1);
    return st;
}

enum gg_status gg_run_setup(const struct gg_case *c, const struct gg_run_opts *o,
                            int inputs_on_device, const struct gg_kernel **kp,
                            struct gg_case *eff, struct gg_tensors *t, struct gg_run_result *r,
                            char *err, size_t err_len)
{
    const struct gg_kernel *k = NULL;
    enum gg_status st = admit(c, o, &k, eff, err, err_len);
    if (st != GG_OK)
        return st;
    *kp = k;
    snprintf(r->kernel, sizeof r->kernel, "%s", eff->kernel);
    snprintf(r->mutant, sizeof r->mutant, "%s", eff->mutant);
    /* Admitted on the estimate before the routing is built, and again with the workspace that
       the kernel asks for once it has seen the whole problem. */
    if (o && o->reference == GG_REFERENCE_DEVICE && k->backend == GG_BACKEND_CPU) {
        snprintf(err, err_len, "kernel %s runs on the host: --reference device needs a GPU kernel",
                 k->name);
        return GG_E_UNSUPPORTED;
    }
    if ((st = gg_tensors_shape(eff, t, err, err_len)) != GG_OK)
        return st;
    t->inputs_on_device = inputs_on_device && k->backend != GG_BACKEND_CPU;
    if ((st = admit_memory(t, 0, o, r, err, err_len)) != GG_OK ||
        (st = gg_tensors_route(eff, t, err, err_len)) != GG_OK)
        return st;
    t->pool = o ? o->pool : NULL;
    char why[256] = "";
    if (!k->supports(&t->p, why, sizeof why)) {
        snprintf(err, err_len, "kernel %s does not support this case: %s", k->name,
                 why[0] ? why : "no reason given");
        return GG_E_UNSUPPORTED;
    }
    size_t ws = k->workspace_bytes ? k->workspace_bytes(&t->p) : 0;
    if ((st = admit_memory(t, ws, o, r, err, err_len)) != GG_OK)
        return st;
    return gg_tensors_make(eff, ws, t, err, err_len);
}

const struct gg_target_i *gg_run_target_of(const struct gg_kernel *k)
{
    return k->backend == GG_BACKEND_CPU ? &gg_hostrun_iface : &gg_devrun_iface;
}

/* Shows v (its case, tensors and reference filled in here) to o's observer, if any. A failure
   of the observer becomes the run's status, or is added to the run's own message. */
static enum gg_status observe(const struct gg_run_opts *o, const struct gg_case *c,
                              const struct gg_tensors *t, const struct reference *rf,
                              struct gg_run_view v, char *err, size_t err_len)
{
    if (!o || !o->observe)
        return v.status;
    v.kase = c;
    v.t = t;
    v.ref = rf->ref;
    v.abs = rf->abs;
    v.error = v.status != GG_OK ? err : NULL;
    char why[1024] = "";
    enum gg_status ost = o->observe(o->observe_ctx, &v, why, sizeof why);
    if (ost == GG_OK)
        return v.status;
    if (v.status == GG_OK) {
        snprintf(err, err_len, "%s", why);
        return ost;
    }
    size_t n = strlen(err);
    snprintf(err + n, err_len - n, "; %s", why);
    return v.status;
}

const char *gg_reference_where_name(enum gg_reference_where w)
{
    return w == GG_REFERENCE_HOST ? "host" : w == GG_REFERENCE_DEVICE ? "device" : "auto";
}

int gg_reference_where_parse(const char *s)
{
    for (int w = GG_REFERENCE_AUTO; w <= GG_REFERENCE_DEVICE; w++)
        if (!strcmp(s, gg_reference_where_name((enum gg_reference_where)w)))
            return w;
    return -1;
}

/* 1 when a GPU kernel's reference would go to the device: not asked for the host, a build that
   drives a GPU, no observer (it reads the inputs on the host). */
static int device_reference_wanted(const struct gg_run_opts *o)
{
    return (!o || (o->reference != GG_REFERENCE_HOST && !o->observe)) && gg_device_built();
}

/* The choices that cannot be met whatever the kernel: the device asked for where an observer
   needs the host inputs, or in a build without GPU support. */
static enum gg_status reference_where_check(const struct gg_run_opts *o, char *err,
                                            size_t err_len)
{
    if (!o || o->reference != GG_REFERENCE_DEVICE)
        return GG_OK;
    if (o->observe) {
        snprintf(err, err_len, "--dump reads the inputs on the host: use --reference host or auto");
        return GG_E_INVAL;
    }
    if (!gg_device_built()) {
        snprintf(err, err_len, "--reference device: this ggfuzz was built without GPU support");
        return GG_E_UNSUPPORTED;
    }
    return GG_OK;
}

enum gg_status gg_run_case(const struct gg_case *c, const struct gg_run_opts *o,
                           struct gg_run_result *r, char *err, size_t err_len)
{
    double t0 = now_s();
    memset(r, 0, sizeof *r);
    gg_registry_init();
    struct gg_case eff;
    gg_case_init(&eff);
    const struct gg_kernel *k = NULL;
    struct gg_tensors t;
    memset(&t, 0, sizeof t);
    struct reference rf = {0};
    void *out1 = NULL;
    int shown = 0; /* the observer saw the inputs: it sees the end too */
    const char *no_out = "the run ended before the kernel's output was compared";
    enum gg_status st = reference_where_check(o, err, err_len);
    if (st != GG_OK || (st = gg_run_setup(c, o, device_reference_wanted(o), &k, &eff, &t, r, err,
                                          err_len)) != GG_OK)
        goto done;
    /* A GPU kernel's inputs left to the device: its reference is computed there too, after the
       runs, and compared a run of groups at a time as it comes over. */
    r->device_reference = t.inputs_on_device;
    out1 = gg_output_alloc(&t);
    if (!out1) {
        snprintf(err, err_len, "out of memory for a copy of the output");
        st = GG_E_NOMEM;
        goto done;
    }
    /* An observer sees the inputs and the reference before the kernel can end the process. */
    if (o && o->observe) {
        if ((st = reference_make(&t, o, &rf, err, err_len)) != GG_OK ||
            (st = observe(o, &eff, &t, &rf, (struct gg_run_view){.status = GG_OK}, err,
                          err_len)) != GG_OK)
            goto done;
        shown = 1;
    }
    struct gg_observations obs = {0};
    struct gg_target tg = {.iface = gg_run_target_of(k), .t = &t};
    int64_t certify = o ? o->certify_samples : 0;
    struct gg_compare_run *cr = NULL;
    if (r->device_reference &&
        (st = gg_compare_begin(&t.p, out1, k->tile_m, k->tile_n, t.has_source, &cr)) != GG_OK) {
        snprintf(err, err_len, "out of memory comparing outputs");
        goto done;
    }
    struct compare_sink cs = {cr, 0.0};
    struct gg_ref_sink sink = {compare_put, &cs};
    r->phase.setup = now_s() - t0;
    st = run_target(&tg, k, out1, cr ? &sink : NULL, certify, &obs, r, err, err_len);
    if (cr && (st != GG_OK || obs.device_error))
        gg_compare_abort(cr);
    else if (cr)
        st = judged(gg_compare_end(cr, &r->cmp), &eff, r, err, err_len);
    r->phase.compare = cs.seconds;
    if (st == GG_OK && obs.device_error)
        no_out = "a device error ended the run: the output was not compared";
    /* A device error is judged from the observations alone: the output was not compared. */
    double t1 = now_s();
    if (st != GG_OK || (!obs.device_error && !cr && !rf.ref &&
                        (st = reference_make(&t, o, &rf, err, err_len)) != GG_OK))
        goto done;
    double t2 = now_s();
    if (!cr) {
        r->phase.reference += t2 - t1;
        if (!obs.device_error && (st = judge(&eff, k, &t, out1, &rf, r, err, err_len)) != GG_OK)
            goto done;
        r->phase.compare = now_s() - t2;
    }
    gg_verdict_make(&t.p, k->name, k->tile_m, k->tile_n, k->tile_k, r->compared ? &r->cmp : NULL,
                    &obs, &r->verdict);
    r->certified = r->device_reference || !obs.device_error ? certify : 0;
done:
    r->total_seconds = now_s() - t0;
    if (shown)
        st = observe(o, &eff, &t, &rf,
                     (struct gg_run_view){.done = 1, .status = st, .result = r,
                                          .out = r->compared ? out1 : NULL, .no_out = no_out},
                     err, err_len);
    double t_observed = now_s();
    reference_free(&rf);
    gg_output_free(&t, out1);
    gg_tensors_free(&t);
    gg_case_free(&eff);
    gg_ledger_release(); /* what it held is freed */
    double freed = now_s() - t_observed; /* the observer's own time is not the run's */
    r->phase.release += freed;
    r->total_seconds += freed;
    return st;
}

enum gg_status gg_run_inputs(const struct gg_case *c, const struct gg_run_opts *o, char *err,
                             size_t err_len)
{
    struct gg_run_result r;
    memset(&r, 0, sizeof r);
    struct gg_tensors t;
    struct reference rf = {0};
    enum gg_status st = gg_tensors_shape(c, &t, err, err_len);
    if (st == GG_OK && (st = admit_memory(&t, 0, o, &r, err, err_len)) == GG_OK &&
        (st = gg_tensors_route(c, &t, err, err_len)) == GG_OK) {
        t.pool = o ? o->pool : NULL;
        if ((st = gg_tensors_make(c, 0, &t, err, err_len)) == GG_OK &&
            (st = reference_make(&t, o, &rf, err, err_len)) == GG_OK)
            st = observe(o, c, &t, &rf,
                         (struct gg_run_view){.done = 1, .inputs_only = 1, .status = GG_OK,
                                              .result = &r, .no_out = "no kernel was run"},
                         err, err_len);
    }
    reference_free(&rf);
    gg_tensors_free(&t);
    return st;
}

void gg_run_result_free(struct gg_run_result *r)
{
    if (r->compared)
        gg_compare_free(&r->cmp);
    memset(r, 0, sizeof *r);
}

/* A sink that gathers the whole reference into rf (a reference computed alone). */
struct gather_whole {
    struct reference *rf;
    int64_t pos; /* packed position of the next run */
};

static enum gg_status gather_put(void *ctx, int64_t g0, int64_t g1, int64_t n, const double *ref,
                                 const double *abs, const double *src, char *err, size_t err_len)
{
    (void)g0, (void)g1, (void)err, (void)err_len;
    struct gather_whole *w = ctx;
    size_t bytes = (size_t)n * sizeof(double);
    double *to[3] = {w->rf->ref + w->pos, w->rf->abs + w->pos,
                     w->rf->src ? w->rf->src + w->pos : NULL};
    const double *from[3] = {ref, abs, src};
    for (int i = 0; i < 3; i++) { /* ref NULL: exact zeros */
        if (to[i] && from[i])
            memcpy(to[i], from[i], bytes);
        else if (to[i] && !ref)
            memset(to[i], 0, bytes);
    }
    w->pos += n;
    return GG_OK;
}

enum gg_status gg_run_reference(const struct gg_case *c, const struct gg_run_opts *o,
                                struct gg_reference_run *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    gg_registry_init();
    struct gg_run_result res;
    memset(&res, 0, sizeof res);
    gg_case_init(&r->kase);
    const struct gg_kernel *k = NULL;
    struct reference rf = {0};
    enum gg_status st = reference_where_check(o, err, err_len);
    if (st == GG_OK)
        st = gg_run_setup(c, o, device_reference_wanted(o), &k, &r->kase, &r->t, &res, err,
                          err_len);
    r->device = r->t.inputs_on_device;
    double t0 = now_s();
    if (st == GG_OK && !r->device) {
        st = reference_make(&r->t, o, &rf, err, err_len);
    } else if (st == GG_OK) {
        struct gg_target tg = {.iface = gg_run_target_of(k), .t = &r->t};
        struct gather_whole w = {&rf, 0};
        struct gg_ref_sink sink = {gather_put, &w};
        if ((st = reference_alloc(&r->t, &rf, err, err_len)) == GG_OK &&
            (st = tg.iface->prepare(&tg, err, err_len)) == GG_OK) {
            t0 = now_s();
            st = tg.iface->reference(&tg, &sink, o ? o->certify_samples : 0, err, err_len);
        }
        tg.iface->release(&tg);
    }
    r->seconds = now_s() - t0;
    r->n = gg_problem_out_elems(&r->t.p);
    r->ref = rf.ref;
    r->abs = rf.abs;
    r->src = rf.src;
    return st;
}

void gg_reference_run_free(struct gg_reference_run *r)
{
    free(r->ref);
    free(r->abs);
    free(r->src);
    gg_tensors_free(&r->t);
    gg_case_free(&r->kase);
    memset(r, 0, sizeof *r);
}

/*
 * gpu_fixture.h — runs a case file on a GPU kernel for the GPU tests, with the host harness's
 * materialisation and oracles: the inputs are generated on the host (gg_tensors_plan/make),
 * their live ranges copied into zeroed device buffers, C and the workspace mirrored on the
 * device with the host's canary bands around them, the kernel run under two workspace poisons
 * (and a third run when the outputs differ, as the runner does), the bands and the output copied
 * back, and the verdict made by gg_compare_output and gg_verdict_make against gg_ref_gemm.
 */
#ifndef GPU_FIXTURE_H
#define GPU_FIXTURE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/gg_run.h"
#include "fuzz/run/gg_run.h"
#include "kernels/gg_kernel.h"
#include "oracles/gg_oracle.h"
#include "reference/gg_ref.h"
#ifdef GG_HAVE_GPU_KERNELS
#include "kernels/gpu/gpu_kernels.h"
#endif

#define GPU_POISON_1 0x5Au
#define GPU_POISON_2 0xC3u

/* Skips the test when the build has no GPU kernels or the machine no device. */
static inline void gpu_require_device(void)
{
#ifdef GG_HAVE_GPU_KERNELS
    if (gg_gpu_device_count() > 0)
        return;
    cr_skip_test("no GPU device");
#else
    cr_skip_test("built without GPU kernels (GG_CUDA / GG_HIP)");
#endif
}

#ifdef GG_HAVE_GPU_KERNELS

/* The outcome of one case on one kernel. */
struct gpu_outcome {
    struct gg_verdict v;
    char expect[128]; /* the case's @expect line ("" when none) */
    void *out;        /* the first run's output, c_bytes bytes (owned; gpu_outcome_free) */
    size_t c_bytes;
};

static inline void gpu_outcome_free(struct gpu_outcome *o)
{
    free(o->out);
    o->out = NULL;
}

/* A device mirror of a host buffer: its canary bands, data and tail, same byte layout. */
struct gpu_mirror {
    const struct gg_hostbuf *h;
    uint8_t *dev;
    size_t len;
};

static inline void gpu_check(enum gg_status st, const char *err)
{
    cr_assert_eq(st, GG_OK, "device call failed: %s", err);
}

static inline void gpu_mirror_alloc(struct gpu_mirror *m, const struct gg_hostbuf *h)
{
    char err[256] = "";
    m->h = h;
    m->dev = NULL;
    m->len = h->data != NULL ? h->pre_len + h->bytes + h->post_len : 0;
    if (m->len == 0)
        return;
    cr_assert_eq(h->pre + h->pre_len, h->data, "host buffer bands are not contiguous");
    gpu_check(gg_gpu_malloc((void **)&m->dev, m->len, err, sizeof err), err);
    gpu_check(gg_gpu_fill(m->dev, 0, m->len, err, sizeof err), err);
}

/* The device address of host pointer p inside the mirrored buffer (NULL stays NULL). */
static inline void *gpu_mirror_ptr(const struct gpu_mirror *m, const void *p)
{
    if (p == NULL || m->dev == NULL)
        return NULL;
    return m->dev + ((const uint8_t *)p - m->h->pre);
}

static inline void gpu_mirror_copy(const struct gpu_mirror *m, enum gg_gpu_copy_kind kind)
{
    char err[256] = "";
    if (m->len == 0)
        return;
    if (kind == GG_GPU_H2D)
        gpu_check(gg_gpu_copy(m->dev, m->h->pre, m->len, kind, err, sizeof err), err);
    else
        gpu_check(gg_gpu_copy((void *)m->h->pre, m->dev, m->len, kind, err, sizeof err), err);
}

/* Copies the pages of an input that hold generated rows (the rest stays zero on the device). */
static inline void gpu_mirror_live(const struct gpu_mirror *m, const struct gg_range *live,
                                   size_t n)
{
    char err[256] = "";
    size_t at = m->h->pre_len;
    for (size_t i = 0; i < n; i++) {
        size_t hi = live[i].hi < m->h->bytes ? live[i].hi : m->h->bytes;
        if (hi > live[i].lo)
            gpu_check(gg_gpu_copy(m->dev + at + live[i].lo, m->h->data + live[i].lo,
                                  hi - live[i].lo, GG_GPU_H2D, err, sizeof err),
                      err);
    }
}

static inline void *gpu_array(const void *host, size_t bytes)
{
    char err[256] = "";
    void *d = NULL;
    if (host == NULL || bytes == 0)
        return NULL;
    gpu_check(gg_gpu_malloc(&d, bytes, err, sizeof err), err);
    gpu_check(gg_gpu_copy(d, host, bytes, GG_GPU_H2D, err, sizeof err), err);
    return d;
}

/* Everything of one GPU run of a case. */
struct gpu_case_run {
    struct gg_tensors t;
    struct gpu_mirror a, b, c, as, bs, bias, ws;
    void *lens, *offs, *sorted, *experts;
    struct gg_operands dops;
};

static inline void gpu_case_run_free(struct gpu_case_run *r)
{
    struct gpu_mirror *ms[] = {&r->a, &r->b, &r->c, &r->as, &r->bs, &r->bias, &r->ws};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        gg_gpu_free(ms[i]->dev);
    gg_gpu_free(r->lens);
    gg_gpu_free(r->offs);
    gg_gpu_free(r->sorted);
    gg_gpu_free(r->experts);
    gg_tensors_free(&r->t);
}

/* One run: fresh sentinel and poison on the host, mirrored to the device; the kernel; the output
   and the bands back on the host, then the guard and padding checks. */
static inline void gpu_run_once(const struct gg_kernel *k, struct gpu_case_run *r,
                                uint8_t poison, struct gg_observations *obs)
{
    char err[256] = "";
    gg_tensors_poison(&r->t, poison);
    gpu_mirror_copy(&r->c, GG_GPU_H2D);
    gpu_mirror_copy(&r->ws, GG_GPU_H2D);
    enum gg_status st = k->run(&r->t.p, &r->dops, err, sizeof err);
    cr_assert_eq(st, GG_OK, "kernel %s failed: %s", k->name, err);
    gpu_check(gg_gpu_sync(err, sizeof err), err);
    gpu_mirror_copy(&r->c, GG_GPU_D2H);
    gpu_mirror_copy(&r->ws, GG_GPU_D2H);
    int pre = 0;
    if (gg_hostbuf_guard_hit(&r->t.c, &pre) || gg_hostbuf_guard_hit(&r->t.ws, &pre)) {
        obs->guard_hit = 1;
        obs->guard_pre = pre;
    }
    if (gg_oracle_padding_check(&r->t.p, r->t.ops.c) >= 0)
        obs->padding_hit = 1;
}

/*
 * Runs the case file at path on kernel k (the case's kernel line is replaced; mutant NULL keeps
 * the case's mutant, "" runs the correct kernel) and fills out with the verdict. Fails the test
 * on any harness or device error.
 */
static inline void gpu_run_case(const char *path, const struct gg_kernel *k, const char *mutant,
                                struct gpu_outcome *out)
{
    char err[512] = "";
    struct gg_case c;
    gg_case_init(&c);
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s: %s", path, err);
    snprintf(c.kernel, sizeof c.kernel, "%s", k->name);
    if (mutant != NULL)
        snprintf(c.mutant, sizeof c.mutant, "%s", mutant);
    const char *expect = gg_case_meta(&c, "expect");
    memset(out, 0, sizeof *out);
    snprintf(out->expect, sizeof out->expect, "%s", expect ? expect : "");

    struct gpu_case_run r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(gg_tensors_plan(&c, &r.t, err, sizeof err), GG_OK, "%s: %s", path, err);
    char why[256] = "";
    cr_assert(k->supports(&r.t.p, why, sizeof why), "%s does not support %s: %s", k->name, path,
              why);
    size_t ws = k->workspace_bytes ? k->workspace_bytes(&r.t.p) : 0;
    cr_assert_eq(gg_tensors_make(&c, ws, &r.t, err, sizeof err), GG_OK, "%s: %s", path, err);

    gpu_mirror_alloc(&r.a, &r.t.a);
    gpu_mirror_alloc(&r.b, &r.t.b);
    gpu_mirror_alloc(&r.c, &r.t.c);
    gpu_mirror_alloc(&r.as, &r.t.a_scale);
    gpu_mirror_alloc(&r.bs, &r.t.b_scale);
    gpu_mirror_alloc(&r.bias, &r.t.bias);
    gpu_mirror_alloc(&r.ws, &r.t.ws);
    gpu_mirror_live(&r.a, r.t.live[0], r.t.n_live[0]);
    gpu_mirror_live(&r.b, r.t.live[1], r.t.n_live[1]);
    gpu_mirror_copy(&r.as, GG_GPU_H2D);
    gpu_mirror_copy(&r.bs, GG_GPU_H2D);
    gpu_mirror_copy(&r.bias, GG_GPU_H2D);
    const struct gg_problem *p = &r.t.p;
    size_t g = p->groups > 0 ? (size_t)p->groups : 0;
    if (r.t.lens_dev != NULL) {
        r.lens = gpu_array(r.t.lens_dev, g * sizeof(int64_t));
        r.offs = gpu_array(r.t.offs_dev, (g + 1) * sizeof(int64_t));
    }
    if (r.t.sorted_dev != NULL) {
        r.sorted = gpu_array(r.t.sorted_dev, (size_t)p->sorted_len * sizeof(int32_t));
        r.experts = gpu_array(r.t.experts_dev,
                              (size_t)(p->sorted_len / (p->block_m > 0 ? p->block_m : 1)) *
                                  sizeof(int32_t));
    }
    const struct gg_operands *h = &r.t.ops;
    r.dops = (struct gg_operands){
        .a = gpu_mirror_ptr(&r.a, h->a),
        .b = gpu_mirror_ptr(&r.b, h->b),
        .c = gpu_mirror_ptr(&r.c, h->c),
        .a_scale = gpu_mirror_ptr(&r.as, h->a_scale),
        .b_scale = gpu_mirror_ptr(&r.bs, h->b_scale),
        .bias = gpu_mirror_ptr(&r.bias, h->bias),
        .workspace = gpu_mirror_ptr(&r.ws, h->workspace),
        .workspace_bytes = h->workspace_bytes,
        .group_lens_dev = r.lens,
        .group_offs_dev = r.offs,
        .sorted_ids_dev = r.sorted,
        .expert_ids_dev = r.experts,
        .stream = NULL,
    };

    struct gg_observations obs;
    memset(&obs, 0, sizeof obs);
    out->c_bytes = r.t.c_bytes;
    out->out = malloc(r.t.c_bytes ? r.t.c_bytes : 1);
    cr_assert_not_null(out->out);
    gpu_run_once(k, &r, GPU_POISON_1, &obs);
    memcpy(out->out, r.t.ops.c, r.t.c_bytes);
    gpu_run_once(k, &r, GPU_POISON_2, &obs);
    if (gg_oracle_first_diff(out->out, r.t.ops.c, r.t.c_bytes) >= 0) {
        gpu_run_once(k, &r, GPU_POISON_1, &obs);
        if (gg_oracle_first_diff(out->out, r.t.ops.c, r.t.c_bytes) < 0 && r.t.ops.workspace)
            obs.workspace_dep = 1;
        else
            obs.nondeterministic = 1;
    }

    int64_t n = gg_problem_out_elems(p);
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(double);
    double *ref = malloc(bytes), *abs = malloc(bytes), *src = r.t.src_a ? malloc(bytes) : NULL;
    cr_assert(ref && abs && (!r.t.src_a || src));
    cr_assert_eq(gg_ref_gemm(p, &r.t.ops, ref, abs, err, sizeof err), GG_OK, "%s", err);
    if (src)
        cr_assert_eq(gg_ref_gemm(&r.t.src_p, &r.t.src_ops, src, NULL, err, sizeof err), GG_OK,
                     "%s", err);
    struct gg_compare cmp;
    cr_assert_eq(gg_compare_output(p, out->out, ref, abs, src, k->tile_m, k->tile_n, &cmp), GG_OK);
    gg_verdict_make(p, k->name, k->tile_m, k->tile_n, k->tile_k, &cmp, &obs, &out->v);
    gg_compare_free(&cmp);
    free(ref);
    free(abs);
    free(src);
    gpu_case_run_free(&r);
    gg_case_free(&c);
}

/* Runs the case on CPU kernel k (host buffers, the harness's own path) and returns its output
   in *out (c_bytes bytes, caller frees) for a bitwise comparison with the GPU twin. */
static inline void *cpu_run_output(const char *path, const struct gg_kernel *k, size_t *c_bytes)
{
    char err[512] = "";
    struct gg_case c;
    gg_case_init(&c);
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s: %s", path, err);
    snprintf(c.kernel, sizeof c.kernel, "%s", k->name);
    struct gg_tensors t;
    memset(&t, 0, sizeof t);
    cr_assert_eq(gg_tensors_plan(&c, &t, err, sizeof err), GG_OK, "%s", err);
    size_t ws = k->workspace_bytes ? k->workspace_bytes(&t.p) : 0;
    cr_assert_eq(gg_tensors_make(&c, ws, &t, err, sizeof err), GG_OK, "%s", err);
    gg_tensors_poison(&t, GPU_POISON_1);
    cr_assert_eq(k->run(&t.p, &t.ops, err, sizeof err), GG_OK, "%s", err);
    void *out = malloc(t.c_bytes ? t.c_bytes : 1);
    cr_assert_not_null(out);
    memcpy(out, t.ops.c, t.c_bytes);
    *c_bytes = t.c_bytes;
    gg_tensors_free(&t);
    gg_case_free(&c);
    return out;
}

#endif /* GG_HAVE_GPU_KERNELS */
#endif /* GPU_FIXTURE_H */

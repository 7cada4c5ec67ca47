/*
 * gg_devrun.c — the device target of the run protocol (gg_target_int.h): a GPU kernel runs on a
 * device mirror of the host tensors that gg_materialise.c made. A and B (and their scales)
 * are generated again on the device from the same plans and the same per-element core, bit for
 * bit the host's codes, so no operand crosses the bus and the unused rows of a huge weight tensor
 * stay unfilled on both sides; the small arrays (bias, group arrays, routing) are copied. Every
 * buffer has device canary bands, inputs are hashed on the device, the output and workspace are
 * poisoned on the device, and each run waits for the device. The output comes back into the host
 * C buffer so that the protocol (gg_runner.c), the reference and the oracles judge it unchanged.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/gg_target_int.h"
#include "fuzz/run/device/gg_device.h"

/* Device memory left free for the kernel's library (cuBLAS workspaces, module loading). */
#define DEVICE_RESERVE ((int64_t)512 << 20)

enum { BUF_A, BUF_B, BUF_C, BUF_AS, BUF_BS, BUF_BIAS, BUF_WS, BUF_LENS, BUF_OFFS, BUF_SORTED,
       BUF_EXPERTS, BUF_COUNT };

/* The device side of one case run: the device target's state. */
struct mirror {
    struct gg_device *dev;       /* NULL until the context was taken */
    struct gg_devbuf buf[BUF_COUNT];
    const void *host[BUF_COUNT]; /* host bytes each buffer mirrors */
    size_t bytes[BUF_COUNT];
    struct gg_operands ops;      /* device operands (the host offsets applied) */
    size_t c_off;                /* byte offset of C's span in its buffer */
    struct gg_devspan *spans;    /* what the kernel may only read */
    size_t n_spans;
    struct gg_devbuf src[2];     /* the unquantised source of A and B (device reference) */
};

static size_t offset_in(const void *p, const struct gg_hostbuf *b)
{
    return p ? (size_t)((const uint8_t *)p - b->data) : 0;
}

/* Which host bytes each device buffer mirrors. */
static void plan(struct mirror *m, const struct gg_tensors *t)
{
    const struct gg_problem *p = &t->p;
    const struct gg_hostbuf *hb[] = {&t->a, &t->b, &t->c, &t->a_scale, &t->b_scale, &t->bias,
                                     &t->ws};
    for (int i = BUF_A; i <= BUF_WS; i++) {
        m->host[i] = hb[i]->data;
        m->bytes[i] = hb[i]->bytes;
    }
    size_t g = (size_t)p->groups;
    m->host[BUF_LENS] = t->lens_dev;
    m->bytes[BUF_LENS] = t->lens_dev ? g * sizeof(int64_t) : 0;
    m->host[BUF_OFFS] = t->offs_dev;
    m->bytes[BUF_OFFS] = t->offs_dev ? (g + 1) * sizeof(int64_t) : 0;
    m->host[BUF_SORTED] = t->sorted_dev;
    m->bytes[BUF_SORTED] = t->sorted_dev ? (size_t)p->sorted_len * sizeof(int32_t) : 0;
    m->host[BUF_EXPERTS] = t->experts_dev;
    m->bytes[BUF_EXPERTS] =
        t->experts_dev ? (size_t)(p->sorted_len / p->block_m) * sizeof(int32_t) : 0;
}

/* Bytes of the unquantised source of operand which on the device (f32, packed). */
static int64_t source_bytes(const struct gg_tensors *t, int which)
{
    const struct gg_problem *s = &t->src_p;
    return gg_dtype_bytes(GG_DTYPE_F32, which ? gg_problem_b_span(s) : gg_problem_a_span(s));
}

/* Device scratch of the device reference: its output chunk (see gg_device_reference) and the
   source of both operands when the run has one. */
static int64_t reference_bytes(const struct gg_tensors *t)
{
    if (!t->inputs_on_device)
        return 0;
    int64_t out = gg_problem_out_elems(&t->p), chunk = GG_DEVICE_REF_CHUNK;
    int64_t bytes = gg_size_mul(out < chunk ? out : chunk, 17) + ((int64_t)4 << 20);
    if (t->has_source)
        bytes = gg_size_add(bytes, gg_size_add(source_bytes(t, 0), source_bytes(t, 1)));
    return bytes;
}

/* The device's free memory for gg_ledger_admit (ctx: a struct free_memory); -1 when it cannot be
   measured, with the status and message kept. */
struct free_memory {
    struct gg_device *dev;
    enum gg_status st;
    char *err;
    size_t err_len;
};

static int64_t device_free(void *ctx)
{
    struct free_memory *f = ctx;
    int64_t have = 0, total = 0;
    f->st = gg_device_mem_info(f->dev, &have, &total, f->err, f->err_len);
    return f->st == GG_OK ? have : -1;
}

/* Refuses a case whose buffers (whole spans: the device cannot reserve without committing) do
   not fit in the free device memory; beside other cases on this device, it is admitted once it
   fits beside what they hold (gg_ledger.c). */
static enum gg_status admit(struct mirror *m, const struct gg_tensors *t, char *err,
                            size_t err_len)
{
    int64_t need = gg_size_add(DEVICE_RESERVE, reference_bytes(t));
    for (int i = 0; i < BUF_COUNT; i++)
        need += (int64_t)(m->bytes[i] + 2 * GG_DEVICE_GUARD_BYTES + GG_DEVICE_ALIGN);
    struct free_memory f = {m->dev, GG_OK, err, err_len};
    int64_t have = gg_ledger_admit(GG_LEDGER_DEVICE, need, device_free, &f);
    if (have < 0)
        return f.st;
    if (need > have) {
        char a[32], b[32];
        gg_fmt_bytes(need, a, sizeof a);
        gg_fmt_bytes(have, b, sizeof b);
        snprintf(err, err_len, "case needs %s of device memory, only %s free", a, b);
        return GG_E_NOMEM;
    }
    gg_device_make_room(m->dev, need); /* what is kept for reuse goes when this case needs it */
    return GG_OK;
}

/* Appends a span of device memory the kernel must not change. */
static int add_span(struct mirror *m, size_t *cap, const void *ptr, size_t bytes)
{
    if (!ptr || !bytes)
        return 1;
    if (m->n_spans == *cap) {
        size_t grown = *cap ? 2 * *cap : 32;
        struct gg_devspan *s = realloc(m->spans, grown * sizeof *s);
        if (!s)
            return 0;
        m->spans = s;
        *cap = grown;
    }
    m->spans[m->n_spans++] = (struct gg_devspan){ptr, bytes};
    return 1;
}

/* Puts operand which (A or B) on the device: generated from its plan (with its scales, when it
   has any), or, for tensors made without a plan, copied from the host live ranges. The live
   ranges become read-only spans. *scales_done: the scale buffer was written here. */
static enum gg_status place_operand(struct mirror *m, const struct gg_tensors *t, int which,
                                    size_t *cap, int *scales_done, char *err, size_t err_len)
{
    struct gg_devbuf *b = &m->buf[which ? BUF_B : BUF_A];
    const uint8_t *host = m->host[which ? BUF_B : BUF_A];
    const struct gg_gen_plan *g = &t->gen[which];
    const void *op = which ? t->ops.b : t->ops.a;
    const struct gg_hostbuf *hb = which ? &t->b : &t->a;
    enum gg_status st;
    *scales_done = 0;
    if (g->dtype != GG_DTYPE_NONE) {
        struct gg_devbuf *sb = &m->buf[which ? BUF_BS : BUF_AS];
        void *scales = g->quant != GG_GEN_PLAIN && sb->bytes ? sb->data : NULL;
        if ((st = gg_device_generate(m->dev, g, b->data + offset_in(op, hb), scales, err,
                                     err_len)) != GG_OK)
            return st;
        *scales_done = scales != NULL;
    }
    for (size_t i = 0; i < t->n_live[which]; i++) {
        size_t lo = t->live[which][i].lo, hi = t->live[which][i].hi;
        hi = hi < b->bytes ? hi : b->bytes;
        if (hi <= lo)
            continue;
        if (g->dtype == GG_DTYPE_NONE &&
            (st = gg_devbuf_upload(m->dev, b, lo, host + lo, hi - lo, err, err_len)) != GG_OK)
            return st;
        if (cap && !add_span(m, cap, b->data + lo, hi - lo)) {
            snprintf(err, err_len, "out of memory for the input spans");
            return GG_E_NOMEM;
        }
    }
    return GG_OK;
}

/* Allocates buffer i: A, B and C sparsely over their live ranges (gg_devbuf_alloc_sparse), so
   that strides, leading dimensions and offsets that leave gigabytes between the used rows cost
   neither memory nor zeroing; A and B flush against unmapped memory where the case places them
   so (gg_devbuf_alloc_flush). */
static enum gg_status alloc_buf(struct mirror *m, const struct gg_tensors *t, int i, char *err,
                                size_t err_len)
{
    if (i != BUF_A && i != BUF_B && i != BUF_C)
        return gg_devbuf_alloc(m->dev, &m->buf[i], m->bytes[i], err, err_len);
    int w = i == BUF_A ? 0 : i == BUF_B ? 1 : 2;
    if (w < 2 && t->guard != GG_GUARD_BAND) /* the inputs' placement of the case */
        return gg_devbuf_alloc_flush(m->dev, &m->buf[i], m->bytes[i], t->live[w], t->n_live[w],
                                     t->guard == GG_GUARD_END, err, err_len);
    return gg_devbuf_alloc_sparse(m->dev, &m->buf[i], m->bytes[i], t->live[w], t->n_live[w], err,
                                  err_len);
}

/* Generates or uploads every input into its allocated buffer; with cap, the read-only spans
   are recorded too (cap NULL: placed again, the spans already known). */
static enum gg_status place_inputs(struct mirror *m, const struct gg_tensors *t, size_t *cap,
                                   char *err, size_t err_len)
{
    enum gg_status st;
    int generated[2];
    if ((st = place_operand(m, t, 0, cap, &generated[0], err, err_len)) != GG_OK ||
        (st = place_operand(m, t, 1, cap, &generated[1], err, err_len)) != GG_OK)
        return st;
    for (int i = BUF_AS; i < BUF_COUNT; i++) {
        if (i == BUF_WS)
            continue;
        int done = (i == BUF_AS && generated[0]) || (i == BUF_BS && generated[1]);
        if (!done && (st = gg_devbuf_upload(m->dev, &m->buf[i], 0, m->host[i], m->bytes[i], err,
                                            err_len)) != GG_OK)
            return st;
        if (cap && !add_span(m, cap, m->buf[i].data, m->bytes[i])) {
            snprintf(err, err_len, "out of memory for the input spans");
            return GG_E_NOMEM;
        }
    }
    return GG_OK;
}

/* Places the inputs into the allocated buffers and points the device operands at them. */
static enum gg_status build(struct mirror *m, const struct gg_tensors *t, char *err,
                            size_t err_len)
{
    enum gg_status st;
    size_t cap = 0;
    if ((st = place_inputs(m, t, &cap, err, err_len)) != GG_OK)
        return st;
    const struct gg_operands *h = &t->ops;
    m->c_off = offset_in(h->c, &t->c);
    m->ops = (struct gg_operands){
        .a = m->buf[BUF_A].data + offset_in(h->a, &t->a),
        .b = m->buf[BUF_B].data + offset_in(h->b, &t->b),
        .c = m->buf[BUF_C].data + m->c_off,
        .a_scale = h->a_scale ? m->buf[BUF_AS].data : NULL,
        .b_scale = h->b_scale ? m->buf[BUF_BS].data : NULL,
        .bias = h->bias ? m->buf[BUF_BIAS].data : NULL,
        .workspace = h->workspace ? m->buf[BUF_WS].data : NULL,
        .workspace_bytes = h->workspace_bytes,
        .group_lens_dev = h->group_lens_dev ? (const int64_t *)m->buf[BUF_LENS].data : NULL,
        .group_offs_dev = h->group_offs_dev ? (const int64_t *)m->buf[BUF_OFFS].data : NULL,
        .sorted_ids_dev = h->sorted_ids_dev ? (const int32_t *)m->buf[BUF_SORTED].data : NULL,
        .expert_ids_dev = h->expert_ids_dev ? (const int32_t *)m->buf[BUF_EXPERTS].data : NULL,
        .stream = gg_device_stream(m->dev),
    };
    return gg_device_sync(m->dev, "generating and uploading the inputs", err, err_len);
}

/* Takes the device context, plans, admits and allocates the mirror of tg->t (timed as its
   allocation), then builds it. */
static enum gg_status dev_prepare(struct gg_target *tg, char *err, size_t err_len)
{
    struct mirror *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_len, "out of memory for the device mirror");
        return GG_E_NOMEM;
    }
    tg->ctx = m;
    struct gg_device *dev = NULL;
    enum gg_status st = gg_device_get(&dev, err, err_len);
    if (st != GG_OK)
        return st;
    m->dev = dev;
    double t0 = gg_wire_now();
    plan(m, tg->t);
    if ((st = admit(m, tg->t, err, err_len)) != GG_OK)
        return st;
    gg_output_touch(tg->t); /* the output comes back here: its pages faulted on every core */
    for (int i = 0; i < BUF_COUNT; i++)
        if ((st = alloc_buf(m, tg->t, i, err, err_len)) != GG_OK)
            return st;
    tg->alloc_seconds = gg_wire_now() - t0;
    return build(m, tg->t, err, err_len);
}

/* The unquantised source of the inputs, generated on the device from A's and B's plans as f32
   in the packed layout of t->src_p, as gg_hostgen.c writes the host source; *so gets its
   operands (with the inputs' bias and routing). */
static enum gg_status make_source(struct mirror *m, const struct gg_tensors *t,
                                  struct gg_operands *so, char *err, size_t err_len)
{
    for (int w = 0; w < 2; w++) {
        struct gg_gen_plan g = t->gen[w];
        g.dtype = GG_DTYPE_F32;
        g.quant = GG_GEN_PLAIN;
        g.per_mat = 0;
        g.plant_e8m0 = 0.0;
        g.ld = g.rowlen;
        g.mstride = gg_size_mul(g.rows, g.rowlen);
        enum gg_status st =
            gg_devbuf_alloc(m->dev, &m->src[w], (size_t)source_bytes(t, w), err, err_len);
        if (st == GG_OK)
            st = gg_device_generate(m->dev, &g, m->src[w].data, NULL, err, err_len);
        if (st != GG_OK)
            return st;
    }
    *so = m->ops;
    so->a = m->src[0].data;
    so->b = m->src[1].data;
    so->a_scale = so->b_scale = NULL;
    return GG_OK;
}

/* The certification's view of the device inputs: the vector of each output it checks is fetched
   into a packed host copy (nothing is written into the host operand buffers, whose pages stay
   untouched) and decoded with the scales brought over whole. */
struct fetch {
    struct mirror *m;
    const struct gg_tensors *t;
    void *codes; /* room for the longest vector */
};

static int fetch_vector(void *ctx, int which, int64_t g, int64_t idx, double *out, char *err,
                        size_t err_len)
{
    struct fetch *f = ctx;
    struct gg_ref_operand d;
    gg_ref_operand(&f->t->p, &f->t->ops, which, g, &d);
    int64_t row = gg_ref_vec_row(&d, idx);
    if (gg_device_fetch_run(f->m->dev, d.dt, which ? f->m->ops.b : f->m->ops.a,
                            d.off + row * d.vec_step, d.red, d.red_step, f->codes, err,
                            err_len) != GG_OK)
        return -1;
    d.base = f->codes;
    d.off = 0;
    d.vec_step = 0;
    d.red_step = 1;
    d.tensor = d.sk == GG_REF_SCALE_TENSOR ? ((const float *)d.scale)[d.tensor_at] : 1.0;
    gg_ref_gather_operand(&d, row, out);
    return 0;
}

/* The checked outputs of a certification and their reference values, picked out of the chunks
   as they pass. */
struct point {
    int64_t i, j; /* packed index, position in checking order */
};

struct points {
    int64_t n, *idx;     /* packed indices, in checking order */
    struct point *order; /* the points sorted by packed index */
    double *c, *abs;
    int64_t next;        /* first entry of order not yet passed */
};

static int by_index(const void *x, const void *y)
{
    const struct point *a = x, *b = y;
    return a->i != b->i ? (a->i > b->i) - (a->i < b->i) : (a->j > b->j) - (a->j < b->j);
}

static void points_free(struct points *q)
{
    free(q->idx);
    free(q->order);
    free(q->c);
    free(q->abs);
    memset(q, 0, sizeof *q);
}

static enum gg_status points_make(const struct gg_problem *p, int64_t certify, struct points *q,
                                  char *err, size_t err_len)
{
    memset(q, 0, sizeof *q);
    if (certify <= 0)
        return GG_OK;
    q->n = gg_ref_certify_points(p, certify, 1, NULL);
    size_t n = (size_t)(q->n > 0 ? q->n : 1);
    q->idx = q->n >= 0 ? malloc(n * sizeof *q->idx) : NULL;
    q->order = malloc(n * sizeof *q->order);
    q->c = malloc(n * sizeof *q->c);
    q->abs = malloc(n * sizeof *q->abs);
    if (!q->idx || !q->order || !q->c || !q->abs) {
        points_free(q);
        snprintf(err, err_len, "out of memory for certification");
        return GG_E_NOMEM;
    }
    gg_ref_certify_points(p, certify, 1, q->idx);
    for (int64_t j = 0; j < q->n; j++)
        q->order[j] = (struct point){q->idx[j], j};
    qsort(q->order, (size_t)q->n, sizeof *q->order, by_index);
    return GG_OK;
}

/* Records the points among the n outputs from packed position pos on (c NULL: all zero). */
static void points_pick(struct points *q, int64_t pos, int64_t n, const double *c,
                        const double *abs)
{
    for (; q->next < q->n && q->order[q->next].i < pos + n; q->next++) {
        const struct point *pt = &q->order[q->next];
        q->c[pt->j] = c ? c[pt->i - pos] : 0.0;
        q->abs[pt->j] = c ? abs[pt->i - pos] : 0.0;
    }
}

/* MPFR certification of the device reference at the points q: the scales come over whole (into
   the host scale buffers), the vectors of the checked outputs one by one. */
static enum gg_status certify_device(struct mirror *m, struct gg_tensors *t,
                                     const struct points *q, char *err, size_t err_len)
{
    enum gg_status st = GG_OK;
    for (int i = BUF_AS; st == GG_OK && i <= BUF_BS; i++)
        if (m->bytes[i])
            st = gg_devbuf_download(m->dev, &m->buf[i], 0, (void *)m->host[i], m->bytes[i], err,
                                    err_len);
    if (st != GG_OK)
        return st;
    int64_t longest = 1;
    for (int64_t g = 0; g < t->p.groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(&t->p, g, &b);
        longest = b.red > longest ? b.red : longest;
    }
    struct fetch f = {m, t, malloc((size_t)gg_size_mul(longest, 8))};
    if (!f.codes) {
        snprintf(err, err_len, "out of memory for certification");
        return GG_E_NOMEM;
    }
    int64_t bad = -1;
    int64_t n = gg_ref_certify_at(&t->p, &t->ops, q->n, q->idx, q->c, q->abs, fetch_vector, &f,
                                  &bad, err, err_len);
    free(f.codes);
    if (n < 0)
        return strstr(err, "out of memory") ? GG_E_NOMEM : GG_E_DEVICE;
    if (n > 0) {
        snprintf(err, err_len, "device reference failed MPFR certification at output %lld",
                 (long long)bad);
        return GG_E_INTERNAL;
    }
    return GG_OK;
}

/* Host chunk of the reference: GG_REF_RUN_OUTPUTS, or fewer outputs for tests
   (GGFUZZ_TEST_REF_CHUNK, so that small cases go through several chunks). */
static int64_t host_chunk(void)
{
    const char *v = getenv("GGFUZZ_TEST_REF_CHUNK");
    long long n = v ? atoll(v) : 0;
    return n > 0 && n < GG_REF_RUN_OUTPUTS ? (int64_t)n : GG_REF_RUN_OUTPUTS;
}

/* The chunk arrays: room for the cap outputs of a run of groups, page-locked (pinned) or not. */
struct chunk {
    double *ref, *abs, *src;
    int pinned;
};

/* A reference this many times as large as its pinned chunks repays the time pinning takes:
   copies into page-locked memory run about four times faster, and pinning a byte costs about
   as much as copying seven into pageable memory. */
#define PIN_REPAYS 16

static double *chunk_array(struct gg_device *dev, size_t bytes, int pinned)
{
    return pinned ? gg_device_host_alloc(dev, bytes) : malloc(bytes);
}

static void chunk_free(struct gg_device *dev, struct chunk *ch)
{
    double *a[3] = {ch->ref, ch->abs, ch->src};
    for (int i = 0; i < 3; i++) {
        if (ch->pinned)
            gg_device_host_free(dev, a[i]);
        else
            free(a[i]);
    }
    memset(ch, 0, sizeof *ch);
}

/* Allocates a chunk, pinned when asked and possible, else pageable. */
static enum gg_status chunk_alloc(struct gg_device *dev, const struct gg_tensors *t, int64_t cap,
                                  int pinned, struct chunk *ch, char *err, size_t err_len)
{
    size_t bytes = (size_t)gg_size_mul(cap > 0 ? cap : 1, sizeof(double));
    for (int pin = pinned; pin >= 0; pin--) {
        ch->pinned = pin;
        ch->ref = chunk_array(dev, bytes, pin);
        ch->abs = chunk_array(dev, bytes, pin);
        ch->src = t->has_source ? chunk_array(dev, bytes, pin) : NULL;
        if (ch->ref && ch->abs && (!t->has_source || ch->src))
            return GG_OK;
        chunk_free(dev, ch);
    }
    snprintf(err, err_len, "out of memory for the reference (%lld outputs a chunk)",
             (long long)cap);
    return GG_E_NOMEM;
}

/* Outputs of the largest run of groups: a chunk, or the largest group, at most the whole. */
static int64_t chunk_cap(const struct gg_problem *p)
{
    int64_t chunk = host_chunk(), largest = 0, total = gg_problem_out_elems(p);
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        largest = b.rows * b.cols > largest ? b.rows * b.cols : largest;
    }
    int64_t cap = largest > chunk ? largest : chunk;
    return total < cap ? total : cap;
}

/* One run of groups handed to the sink on a thread of its own, while the next run is computed
   into the other chunk. */
struct handover {
    const struct gg_ref_sink *sink;
    const struct chunk *ch; /* NULL: a run of zero groups */
    int64_t g0, g1, n;
    int src;
    pthread_t th;
    int started;
    enum gg_status st;
    char err[256];
};

static void *handover_main(void *arg)
{
    struct handover *h = arg;
    const struct chunk *ch = h->ch;
    h->st = h->sink->put(h->sink->ctx, h->g0, h->g1, h->n, ch ? ch->ref : NULL,
                         ch ? ch->abs : NULL, ch && h->src ? ch->src : NULL, h->err,
                         sizeof h->err);
    return NULL;
}

/* Waits for the handover h (if one is under way); its failure becomes the result. */
static enum gg_status handover_wait(struct handover *h, char *err, size_t err_len)
{
    if (!h->started)
        return GG_OK;
    if (h->started == 1)
        pthread_join(h->th, NULL);
    h->started = 0;
    if (h->st != GG_OK)
        snprintf(err, err_len, "%s", h->err);
    return h->st;
}

/* The state of one streamed reference. */
struct stream {
    struct mirror *m;
    const struct gg_tensors *t;
    const struct gg_operands *so; /* the source's operands, NULL without one */
    struct chunk ch[2];
    struct handover ho[2];
    int next;                     /* the chunk the next run goes into */
    struct points q;
    const struct gg_ref_sink *sink;
};

/* The reference of groups [g0, g1) (n outputs from packed position pos on) into the next chunk
   (zero: those groups' reference is exactly zero and nothing is computed), while the previous
   run is compared in the other; then, once that comparison has ended (the sink takes the runs
   one after the other, in order), picked for certification and handed to the sink on its own
   thread (in this one when no thread can start). */
static enum gg_status reference_run(struct stream *S, int64_t g0, int64_t g1, int64_t pos,
                                    int64_t n, int zero, char *err, size_t err_len)
{
    struct handover *h = &S->ho[S->next];
    const struct chunk *ch = zero ? NULL : &S->ch[S->next];
    enum gg_status st = zero ? GG_OK
                             : gg_device_reference(S->m->dev, &S->t->p, &S->m->ops, g0, g1,
                                                   ch->ref, ch->abs, err, err_len);
    if (st == GG_OK && ch && S->so)
        st = gg_device_reference(S->m->dev, &S->t->src_p, S->so, g0, g1, ch->src, NULL, err,
                                 err_len);
    if (st == GG_OK)
        st = handover_wait(&S->ho[S->next ^ 1], err, err_len);
    if (st != GG_OK)
        return st;
    points_pick(&S->q, pos, n, ch ? ch->ref : NULL, ch ? ch->abs : NULL);
    *h = (struct handover){.sink = S->sink, .ch = ch, .g0 = g0, .g1 = g1, .n = n,
                           .src = S->so != NULL, .st = GG_OK};
    if (pthread_create(&h->th, NULL, handover_main, h) == 0) {
        h->started = 1;
    } else {
        handover_main(h);
        h->started = 2;
    }
    S->next ^= 1;
    return GG_OK;
}

static enum gg_status dev_reference(struct gg_target *tg, const struct gg_ref_sink *sink,
                                    int64_t certify, char *err, size_t err_len)
{
    struct mirror *m = tg->ctx;
    struct gg_tensors *t = tg->t;
    const struct gg_problem *p = &t->p;
    struct gg_operands so;
    struct stream S = {.m = m, .t = t, .sink = sink};
    int64_t cap = chunk_cap(p), total = gg_problem_out_elems(p);
    /* One chunk when the whole reference fits in it, else two in turn. */
    int chunks = cap < total ? 2 : 1;
    int pinned = total / PIN_REPAYS >= (int64_t)chunks * cap;
    enum gg_status st = points_make(p, certify, &S.q, err, err_len);
    for (int i = 0; i < chunks && st == GG_OK; i++)
        st = chunk_alloc(m->dev, t, cap, pinned, &S.ch[i], err, err_len);
    /* One chunk serves both turns: two computed runs are then never adjacent (only a zero
       run, which waits for the computed one before it, can separate them). */
    if (chunks == 1)
        S.ch[1] = S.ch[0];
    if (st == GG_OK && t->has_source && (st = make_source(m, t, &so, err, err_len)) == GG_OK)
        S.so = &so;
    /* Runs of whole groups, each at most a chunk (a larger group alone), or of groups whose
       reference is exactly zero (no reduction and no bias: the wgrad of an empty expert), which
       are neither computed nor copied. */
    int64_t g0 = 0, pos = 0, n = 0;
    int kind = -1; /* the current run's: 1 zero, 0 computed, -1 no output yet */
    for (int64_t g = 0; st == GG_OK && g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        int64_t count = b.rows * b.cols;
        int zero = b.red == 0 && p->bias_dtype == GG_DTYPE_NONE;
        if (n > 0 && count > 0 && (zero != kind || (!zero && n + count > cap))) {
            st = reference_run(&S, g0, g, pos, n, kind, err, err_len);
            g0 = g;
            pos += n;
            n = 0;
            kind = -1;
        }
        if (count > 0)
            kind = zero;
        n += count;
    }
    if (st == GG_OK && g0 < p->groups)
        st = reference_run(&S, g0, p->groups, pos, n, kind != 0, err, err_len);
    for (int i = 0; i < 2; i++) { /* every handover ends before its chunk is freed */
        char herr[256];
        enum gg_status hst = handover_wait(&S.ho[i], herr, sizeof herr);
        if (st == GG_OK && hst != GG_OK) {
            st = hst;
            snprintf(err, err_len, "%s", herr);
        }
    }
    for (int w = 0; w < 2; w++)
        gg_devbuf_free(m->dev, &m->src[w]);
    for (int i = 0; i < chunks; i++)
        chunk_free(m->dev, &S.ch[i]);
    if (st == GG_OK && certify > 0)
        st = certify_device(m, t, &S.q, err, err_len);
    points_free(&S.q);
    return st;
}

static enum gg_status dev_restore_inputs(struct gg_target *tg, char *err, size_t err_len)
{
    struct mirror *m = tg->ctx;
    enum gg_status st = place_inputs(m, tg->t, NULL, err, err_len);
    return st == GG_OK ? gg_device_sync(m->dev, "placing the inputs again", err, err_len) : st;
}

static const struct gg_operands *dev_operands(struct gg_target *tg)
{
    return &((struct mirror *)tg->ctx)->ops;
}

/* Device hashes of the read-only spans, folded into one hash. */
static enum gg_status dev_hash_inputs(struct gg_target *tg, struct gg_hash *h, char *err,
                                      size_t err_len)
{
    struct mirror *m = tg->ctx;
    uint64_t *words = calloc(m->n_spans ? m->n_spans : 1, sizeof *words);
    if (!words) {
        snprintf(err, err_len, "out of memory for the input hashes");
        return GG_E_NOMEM;
    }
    enum gg_status st = gg_device_hash(m->dev, m->spans, m->n_spans, words, err, err_len);
    if (st == GG_OK)
        *h = gg_oracle_hash(words, m->n_spans * sizeof *words);
    free(words);
    return st;
}

static enum gg_status dev_poison(struct gg_target *tg, uint8_t ws_poison, char *err,
                                 size_t err_len)
{
    struct mirror *m = tg->ctx;
    const struct gg_tensors *t = tg->t;
    enum gg_dtype ct = t->p.c_dtype;
    int eb = gg_dtype_bits(ct) >= 8 ? gg_dtype_bits(ct) / 8 : 1;
    enum gg_status st = GG_OK;
    struct gg_range r;
    for (size_t i = 0; st == GG_OK && i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            st = gg_device_fill(m->dev, (uint8_t *)m->ops.c + r.lo, r.hi - r.lo,
                                gg_oracle_sentinel(ct), eb, err, err_len);
    if (st == GG_OK && m->ops.workspace)
        st = gg_device_fill(m->dev, m->ops.workspace, m->ops.workspace_bytes, ws_poison, 1, err,
                            err_len);
    if (st == GG_OK)
        st = gg_device_sync(m->dev, "poisoning the output and workspace", err, err_len);
    return st;
}

/* Runs the kernel on the device operands and waits for all of the device's work. */
static enum gg_status dev_launch(struct gg_target *tg, const struct gg_kernel *k,
                                 enum gg_status *kst, char *kerr, size_t kerr_len, char *err,
                                 size_t err_len)
{
    struct mirror *m = tg->ctx;
    char what[160];
    *kst = k->run(&tg->t->p, &m->ops, kerr, kerr_len);
    snprintf(what, sizeof what, "kernel %s", k->name);
    return gg_device_sync(m->dev, what, err, err_len);
}

/* Every device buffer's bands; the first run that finds one hit decides guard_pre. */
static enum gg_status dev_check_guards(struct gg_target *tg, struct gg_observations *obs,
                                       char *err, size_t err_len)
{
    struct mirror *m = tg->ctx;
    const struct gg_devbuf *bufs[BUF_COUNT];
    for (int i = 0; i < BUF_COUNT; i++)
        bufs[i] = &m->buf[i];
    int hit = -1, pre = 0;
    enum gg_status st = gg_device_guards_check(m->dev, bufs, BUF_COUNT, &hit, &pre, err, err_len);
    if (st != GG_OK)
        return st;
    if (hit >= 0 && !obs->guard_hit) {
        obs->guard_hit = 1;
        obs->guard_pre = pre;
    }
    return GG_OK;
}

static enum gg_status dev_fetch_output(struct gg_target *tg, char *err, size_t err_len)
{
    struct mirror *m = tg->ctx;
    const struct gg_tensors *t = tg->t;
    enum gg_status st = GG_OK;
    struct gg_range r;
    for (size_t i = 0; st == GG_OK && i < t->n_live[2]; i++)
        if (gg_output_range(t, i, &r))
            st = gg_devbuf_download(m->dev, &m->buf[BUF_C], m->c_off + r.lo,
                                    (uint8_t *)t->ops.c + r.lo, r.hi - r.lo, err, err_len);
    return st;
}

/* A failure after the context was taken is a lost device when the context has hit a sticky
   error (gg_device.h). */
static int dev_lost(struct gg_target *tg)
{
    struct mirror *m = tg->ctx;
    return m && m->dev && gg_device_lost();
}

static void dev_release(struct gg_target *tg)
{
    struct mirror *m = tg->ctx;
    if (!m)
        return;
    if (m->dev)
        for (int i = 0; i < BUF_COUNT; i++)
            gg_devbuf_free(m->dev, &m->buf[i]);
    free(m->spans);
    free(m);
    tg->ctx = NULL;
}

const struct gg_target_i gg_devrun_iface = {
    .prepare = dev_prepare,
    .operands = dev_operands,
    .hash_inputs = dev_hash_inputs,
    .poison = dev_poison,
    .launch = dev_launch,
    .check_guards = dev_check_guards,
    .fetch_output = dev_fetch_output,
    .restore_inputs = dev_restore_inputs,
    .reference = dev_reference,
    .lost = dev_lost,
    .release = dev_release,
};

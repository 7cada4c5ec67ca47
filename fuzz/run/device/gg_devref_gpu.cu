/*
 * gg_devref_gpu.cu — the reference on the device: each output of each group is the fp64 sum of
 * the exactly decoded products (codes times their tensor, block, rowwise or MX scales), with its
 * Σ|ab| over alignment magnitudes, computed by a tiled fp64 kernel of our own (one source for
 * CUDA and HIP, no BLAS). The special values follow gg_ref_gemm exactly: a product with an Inf or
 * NaN factor never enters the sums, the output it touches gets its IEEE value (NaN for a NaN
 * factor, Inf·0 or both infinities, else the infinity), a sum of -0 terms is -0, and a bias is
 * added last. Only the summation order differs from the host's, so each value lies within
 * γ_red(2^-53)·Σ|ab| of the exact one, as the host's does. Groups are taken in chunks whose
 * outputs fit a bounded device buffer, and each chunk's outputs are copied into the host arrays.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/device/gg_device_int.h"

extern "C" {
#include "reference/gg_ref.h"
}
#include "fuzz/run/device/gg_device.h"

#define TM 64      /* outputs per tile along the rows (A's vectors) */
#define TN 64      /* along the columns (B's vectors) */
#define TK 16      /* reduction indices per step */
#define THREADS 256
/* Groups per launch (their descriptors are copied for each chunk). */
#define CHUNK_GROUPS 8192

enum { NF_NONE = 0, NF_POS = 1, NF_NEG = 2, NF_NAN = 3 };

/* One side of one group as the kernel reads it, with the decode table of its format. */
struct side {
    struct gg_ref_operand d;
    int bits;       /* storage bits of a code: 4, 8, 16, 32 or 64 */
    int kind;       /* 0 table (8-bit and E2M1), 1 bf16, 2 f16, 3 f32, 4 f64 */
    double lo;      /* alignment floor: the smallest normal of a ≤ 16-bit format, else 0 */
};

/* One group of a launch: its output block (rows × cols, packed at pos within the chunk), its
   first tile in the launch, and its bias (bias_at: the element of column 0; -1: none). */
struct group_desc {
    struct side a, b;
    int64_t rows, cols, red, pos, tile0, tiles_n, bias_at;
};

/* Everything a launch shares. tables: the decode tables of A, B and the bias (256 doubles each). */
struct launch {
    const struct group_desc *groups;
    int64_t n_groups, n_tiles, n_out;
    const double *tables;
    struct side bias_side; /* the bias as a vector of decoded elements (d.base: the bias) */
    double *c, *abs;
    uint8_t *cand; /* outputs whose sums are 0 with no special term: -0 candidates */
    int fault;     /* test support: GGFUZZ_TEST_DEVREF_FAULT */
};

__device__ static uint32_t load_code(const void *base, int bits, int64_t i)
{
    const uint8_t *p = (const uint8_t *)base;
    switch (bits) {
    case 4: return (i & 1) ? (uint32_t)(p[i >> 1] >> 4) : (uint32_t)(p[i >> 1] & 0x0Fu);
    case 8: return p[i];
    case 16: return ((const uint16_t *)base)[i];
    default: return ((const uint32_t *)base)[i];
    }
}

/* The exact value of element i of a side's storage. */
__device__ static double decode(const struct side *s, const double *table, int64_t i)
{
    const void *base = s->d.base;
    switch (s->kind) {
    case 0: return table[load_code(base, s->bits, i)];
    case 1: return (double)__uint_as_float(load_code(base, 16, i) << 16);
    case 2: {
        uint32_t h = load_code(base, 16, i), e = (h >> 10) & 31u, f = h & 1023u;
        double m = e == 31 ? (f ? __longlong_as_double(0x7FF8000000000000ll)
                                : __longlong_as_double(0x7FF0000000000000ll))
                   : e == 0 ? ldexp((double)f, -24) : ldexp((double)(f | 1024u), (int)e - 25);
        return (h & 0x8000u) ? -m : m;
    }
    case 3: return (double)__uint_as_float(load_code(base, 32, i));
    default: return ((const double *)base)[i];
    }
}

__device__ static double scale_of(const struct gg_ref_operand *d, int64_t row, int64_t t)
{
    if (d->sk == GG_REF_SCALE_NONE)
        return 1.0;
    if (d->sk == GG_REF_SCALE_TENSOR)
        return (double)((const float *)d->scale)[d->tensor_at];
    int64_t i = d->scale_at + row / d->vblock * d->vstride + t / d->block * d->rstride;
    if (d->sk == GG_REF_SCALE_F32)
        return (double)((const float *)d->scale)[i];
    uint8_t code = ((const uint8_t *)d->scale)[i];
    return code == 0xFF ? __longlong_as_double(0x7FF8000000000000ll) : ldexp(1.0, (int)code - 127);
}

/* Element t of vector v of a side: its value and its alignment magnitude (0 when the value is
   not finite: such a factor never enters a sum). */
__device__ static void element(const struct side *s, const double *table, int64_t v, int64_t t,
                               double *val, double *mag)
{
    int64_t row = s->d.map ? s->d.map[v] / s->d.map_div : v;
    double x = decode(s, table, s->d.off + row * s->d.vec_step + t * s->d.red_step);
    double sc = scale_of(&s->d, row, t);
    double m = fabs(x);
    if (m < s->lo && m != 0.0)
        m = s->lo;
    *val = x * sc;
    *mag = isfinite(*val) ? m * fabs(sc) : 0.0;
}

__device__ static uint8_t nf_class(double p)
{
    return isnan(p) ? NF_NAN : p > 0 ? NF_POS : NF_NEG;
}

/* The group of tile u (or of packed output u when by_pos): a binary search over the starts. */
__device__ static int64_t group_at(const struct launch *L, int64_t u, int by_pos)
{
    int64_t lo = 0, hi = L->n_groups - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        int64_t start = by_pos ? L->groups[mid].pos : L->groups[mid].tile0;
        if (start <= u)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* One TM × TN tile of one group per block: every thread sums 4 × 4 outputs. */
__global__ void __launch_bounds__(THREADS) product_kernel(struct launch L)
{
    __shared__ double as[TK][TM], am[TK][TM], bs[TK][TN], bm[TK][TN];
    __shared__ double tab[2][256];
    __shared__ int nonfinite;
    for (int i = threadIdx.x; i < 512; i += THREADS)
        tab[i >> 8][i & 255] = L.tables[i];
    int64_t tile = blockIdx.x;
    const struct group_desc *G = &L.groups[group_at(&L, tile, 0)];
    int64_t local = tile - G->tile0;
    int64_t r0 = local / G->tiles_n * TM, c0 = local % G->tiles_n * TN;
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    double acc[4][4], accm[4][4];
    uint8_t st[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            acc[i][j] = 0.0;
            accm[i][j] = 0.0;
            st[i][j] = NF_NONE;
        }
    int64_t red = G->red;
    if (L.fault == 2 && red > TK) /* test support: the last partial step of K is dropped */
        red -= red % TK ? red % TK : TK;
    __syncthreads();
    for (int64_t t0 = 0; t0 < red; t0 += TK) {
        if (threadIdx.x == 0)
            nonfinite = 0;
        __syncthreads();
        int any = 0;
        for (int e = threadIdx.x; e < TK * TM; e += THREADS) {
            for (int w = 0; w < 2; w++) {
                const struct side *s = w ? &G->b : &G->a;
                int64_t base_v = w ? c0 : r0, nvec = w ? G->cols : G->rows;
                int v, k; /* consecutive threads along the operand's contiguous direction */
                if (s->d.red_step == 1) {
                    k = e % TK;
                    v = e / TK;
                } else {
                    v = e % TM;
                    k = e / TM;
                }
                double val = 0.0, mag = 0.0;
                if (base_v + v < nvec && t0 + k < red)
                    element(s, tab[w], base_v + v, t0 + k, &val, &mag);
                any |= !isfinite(val);
                (w ? bs : as)[k][v] = val;
                (w ? bm : am)[k][v] = mag;
            }
        }
        if (any)
            nonfinite = 1;
        __syncthreads();
        if (!nonfinite) {
            for (int k = 0; k < TK; k++) {
                double a[4], b[4], ma[4], mb[4];
                for (int i = 0; i < 4; i++) {
                    a[i] = as[k][ty + 16 * i];
                    ma[i] = am[k][ty + 16 * i];
                    b[i] = bs[k][tx + 16 * i];
                    mb[i] = bm[k][tx + 16 * i];
                }
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        acc[i][j] = fma(a[i], b[j], acc[i][j]);
                        accm[i][j] = fma(ma[i], mb[j], accm[i][j]);
                    }
            }
        } else {
            for (int k = 0; k < TK; k++)
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        double a = as[k][ty + 16 * i], b = bs[k][tx + 16 * j];
                        if (isfinite(a) && isfinite(b)) {
                            acc[i][j] = fma(a, b, acc[i][j]);
                            accm[i][j] = fma(am[k][ty + 16 * i], bm[k][tx + 16 * j], accm[i][j]);
                        } else {
                            st[i][j] |= nf_class(a * b);
                        }
                    }
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int64_t r = r0 + ty + 16 * i, col = c0 + tx + 16 * j;
            if (r >= G->rows || col >= G->cols)
                continue;
            int64_t at = G->pos + r * G->cols + col;
            double v = acc[i][j];
            if (st[i][j] != NF_NONE)
                v = st[i][j] == NF_POS   ? __longlong_as_double(0x7FF0000000000000ll)
                    : st[i][j] == NF_NEG ? __longlong_as_double((long long)0xFFF0000000000000ull)
                                         : __longlong_as_double(0x7FF8000000000000ll);
            L.c[at] = v;
            if (L.abs)
                L.abs[at] = accm[i][j];
            L.cand[at] = st[i][j] == NF_NONE && v == 0.0 && accm[i][j] == 0.0 && G->red > 0;
        }
}

/* Per output: the sign of a zero whose terms are all -0 (a candidate is checked term by term,
   stopping at the first that is not -0), then the bias. */
__global__ void finish_kernel(struct launch L)
{
    __shared__ double tab[3][256];
    for (int i = threadIdx.x; i < 768; i += blockDim.x)
        tab[i >> 8][i & 255] = L.tables[i];
    __syncthreads();
    for (int64_t at = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; at < L.n_out;
         at += (int64_t)gridDim.x * blockDim.x) {
        const struct group_desc *G = &L.groups[group_at(&L, at, 1)];
        int64_t r = (at - G->pos) / G->cols, col = (at - G->pos) % G->cols;
        if (L.cand[at]) {
            int all = 1;
            for (int64_t t = 0; all && t < G->red; t++) {
                double a, b, m;
                element(&G->a, tab[0], r, t, &a, &m);
                element(&G->b, tab[1], col, t, &b, &m);
                double p = a * b;
                all = p == 0.0 && signbit(p);
            }
            if (all)
                L.c[at] = -0.0;
        }
        if (G->bias_at >= 0) {
            double x = decode(&L.bias_side, tab[2], G->bias_at + col);
            L.c[at] += x;
            if (L.abs)
                L.abs[at] += fabs(x);
        }
    }
}

/* How the kernels decode dtype dt; its table (8-bit and E2M1 formats) into table. */
static void side_format(enum gg_dtype dt, struct side *s, double *table)
{
    s->bits = gg_dtype_bits(dt);
    s->lo = s->bits <= 16 ? gg_dtype_min_normal(dt) : 0.0;
    const double *t = gg_decode_table(dt);
    s->kind = t ? 0 : dt == GG_DTYPE_BF16 ? 1 : dt == GG_DTYPE_F16 ? 2 : dt == GG_DTYPE_F32 ? 3 : 4;
    if (t)
        memcpy(table, t, (size_t)(s->bits == 4 ? 16 : 256) * sizeof(double));
}

/* The side of group g for the kernel: gg_ref_operand() on the device operands, with the moe row
   map moved to the device copy of the sorted ids. */
static void side_of(const struct gg_problem *p, const struct gg_operands *o, int which, int64_t g,
                    const struct side *fmt, struct side *s)
{
    *s = *fmt;
    gg_ref_operand(p, o, which, g, &s->d);
    if (s->d.map)
        s->d.map = o->sorted_ids_dev + (s->d.map - p->sorted_ids);
}

/* Test support: GGFUZZ_TEST_DEVREF_FAULT=group_offset shifts every group's output block by one
   row of the previous group; k_tail drops the last partial step of each reduction. */
static int planted_fault(void)
{
    const char *f = getenv("GGFUZZ_TEST_DEVREF_FAULT");
    if (!f)
        return 0;
    return !strcmp(f, "group_offset") ? 1 : !strcmp(f, "k_tail") ? 2 : 0;
}

/* Runs the kernels for the n_groups groups of gd, whose L.n_out outputs (L.n_tiles tiles) go to
   c and abs (host arrays at the chunk's first output), through the device buffers descs and out. */
static enum gg_status run_chunk(struct gg_device *dev, struct launch L, struct group_desc *gd,
                                int64_t n_groups, struct gg_devbuf *descs, struct gg_devbuf *out,
                                double *c, double *abs, char *err, size_t err_len)
{
    enum gg_status st = gg_devbuf_upload(dev, descs, 0, gd, (size_t)n_groups * sizeof *gd, err,
                                         err_len);
    if (st != GG_OK)
        return st;
    L.groups = (const struct group_desc *)descs->data;
    L.n_groups = n_groups;
    L.c = (double *)out->data;
    L.abs = abs ? L.c + L.n_out : NULL;
    L.cand = (uint8_t *)(L.c + 2 * L.n_out);
    cudaStream_t stream = (cudaStream_t)gg_device_stream(dev);
    product_kernel<<<(unsigned)L.n_tiles, THREADS, 0, stream>>>(L);
    int64_t blocks = (L.n_out + THREADS - 1) / THREADS;
    finish_kernel<<<(unsigned)(blocks > 4096 ? 4096 : blocks), THREADS, 0, stream>>>(L);
    if ((st = gg_device_check(dev, "the device reference", err, err_len)) != GG_OK ||
        (st = gg_devbuf_download(dev, out, 0, c, (size_t)L.n_out * sizeof(double), err,
                                 err_len)) != GG_OK)
        return st;
    return abs ? gg_devbuf_download(dev, out, (size_t)L.n_out * sizeof(double), abs,
                                    (size_t)L.n_out * sizeof(double), err, err_len)
               : GG_OK;
}

extern "C" enum gg_status gg_device_reference(struct gg_device *dev, const struct gg_problem *p,
                                              const struct gg_operands *o, int64_t g0,
                                              int64_t g1, double *c, double *abs, char *err,
                                              size_t err_len)
{
    struct side fa, fb;
    double tables[3 * 256];
    memset(tables, 0, sizeof tables);
    memset(&fa, 0, sizeof fa);
    memset(&fb, 0, sizeof fb);
    side_format(p->a_dtype, &fa, tables);
    side_format(p->b_dtype, &fb, tables + 256);
    struct launch L;
    memset(&L, 0, sizeof L);
    L.fault = planted_fault();
    if (p->bias_dtype != GG_DTYPE_NONE) {
        side_format(p->bias_dtype, &L.bias_side, tables + 512);
        L.bias_side.d.base = o->bias;
    }
    int64_t max_out = 0, total = 0;
    for (int64_t g = g0; g < g1; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        int64_t n = b.rows * b.cols;
        max_out = n > max_out ? n : max_out;
        total += n;
    }
    int64_t cap = max_out > GG_DEVICE_REF_CHUNK ? max_out : GG_DEVICE_REF_CHUNK;
    cap = total < cap ? (total > 0 ? total : 1) : cap;
    struct group_desc *gd = (struct group_desc *)calloc(CHUNK_GROUPS, sizeof *gd);
    if (!gd) {
        snprintf(err, err_len, "out of memory for the device reference's group table");
        return GG_E_NOMEM;
    }
    struct gg_devbuf descs, out, tab;
    memset(&descs, 0, sizeof descs);
    memset(&out, 0, sizeof out);
    memset(&tab, 0, sizeof tab);
    enum gg_status st = gg_devbuf_alloc(dev, &descs, CHUNK_GROUPS * sizeof *gd, err, err_len);
    if (st == GG_OK)
        st = gg_devbuf_alloc(dev, &out, (size_t)cap * (2 * sizeof(double) + 1), err, err_len);
    if (st == GG_OK && (st = gg_devbuf_alloc(dev, &tab, sizeof tables, err, err_len)) == GG_OK)
        st = gg_devbuf_upload(dev, &tab, 0, tables, sizeof tables, err, err_len);
    L.tables = (const double *)tab.data;
    int64_t n = 0, pos = 0, out0 = 0;
    for (int64_t g = g0; st == GG_OK && g <= g1; g++) {
        int64_t count = 0;
        struct gg_out_block b;
        if (g < g1) {
            gg_problem_out_block(p, g, &b);
            count = b.rows * b.cols;
        }
        /* The chunk so far is run when this group would not fit beside it (or at the end). */
        if (n > 0 && (g == g1 || n == CHUNK_GROUPS || pos + count > cap)) {
            L.n_out = pos;
            st = run_chunk(dev, L, gd, n, &descs, &out, c + out0, abs ? abs + out0 : NULL, err,
                           err_len);
            out0 += pos;
            n = 0;
            pos = 0;
            L.n_tiles = 0;
        }
        if (g == g1 || count == 0 || st != GG_OK)
            continue;
        struct group_desc *G = &gd[n++];
        side_of(p, o, 0, g, &fa, &G->a);
        side_of(p, o, 1, g, &fb, &G->b);
        G->rows = b.rows;
        G->cols = b.cols;
        G->red = G->a.d.red;
        G->pos = pos;
        if (L.fault == 1 && g > g0 && G->pos >= G->cols)
            G->pos -= G->cols;
        G->tiles_n = (b.cols + TN - 1) / TN;
        G->tile0 = L.n_tiles;
        G->bias_at = p->bias_dtype != GG_DTYPE_NONE ? (gg_problem_b_mats(p) == 1 ? 0 : g) * p->n
                                                    : -1;
        L.n_tiles += (b.rows + TM - 1) / TM * G->tiles_n;
        pos += count;
    }
    gg_devbuf_free(dev, &tab);
    gg_devbuf_free(dev, &out);
    gg_devbuf_free(dev, &descs);
    free(gd);
    return st;
}

__global__ void gather_kernel(const uint8_t *base, int bits, int64_t off, int64_t step, int64_t n,
                              uint8_t *out)
{
    int eb = bits >= 8 ? bits / 8 : 1;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n;
         j += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = off + j * step;
        if (bits == 4)
            out[j] = (uint8_t)load_code(base, 4, i);
        else
            for (int k = 0; k < eb; k++)
                out[j * eb + k] = base[i * eb + k];
    }
}

extern "C" enum gg_status gg_device_fetch_run(struct gg_device *dev, enum gg_dtype dt,
                                              const void *dev_base, int64_t off, int64_t n,
                                              int64_t step, void *out, char *err, size_t err_len)
{
    int bits = gg_dtype_bits(dt), eb = bits >= 8 ? bits / 8 : 1;
    if (n <= 0)
        return GG_OK;
    struct gg_devbuf tmp;
    memset(&tmp, 0, sizeof tmp);
    uint8_t *host = bits == 4 ? (uint8_t *)malloc((size_t)n) : (uint8_t *)out;
    if (!host) {
        snprintf(err, err_len, "out of memory fetching %lld codes", (long long)n);
        return GG_E_NOMEM;
    }
    enum gg_status st = gg_devbuf_alloc(dev, &tmp, (size_t)n * (size_t)eb, err, err_len);
    if (st == GG_OK) {
        int64_t blocks = (n + THREADS - 1) / THREADS;
        gather_kernel<<<(unsigned)(blocks > 1024 ? 1024 : blocks), THREADS, 0,
                        (cudaStream_t)gg_device_stream(dev)>>>((const uint8_t *)dev_base, bits,
                                                               off, step, n, tmp.data);
        if ((st = gg_device_check(dev, "fetching codes from the device", err, err_len)) == GG_OK)
            st = gg_devbuf_download(dev, &tmp, 0, host, (size_t)n * (size_t)eb, err, err_len);
    }
    if (bits == 4) { /* one code per byte from the device, two to a byte in out */
        memset(out, 0, (size_t)(n + 1) / 2);
        for (int64_t j = 0; st == GG_OK && j < n; j++)
            gg_store_code(dt, out, j, host[j]);
        free(host);
    }
    gg_devbuf_free(dev, &tmp);
    return st;
}

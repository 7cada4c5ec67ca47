/*
 * gg_devgen_gpu.cu — case data generated on the device: the operand described by a
 * gg_gen_plan is sampled, quantised and encoded by the same per-element core as on the host
 * (reference/gg_gen_core.h), so the device buffer holds exactly the host materialiser's codes and
 * scales. Only the rows of used matrices are written; everything else keeps the zeros of a fresh
 * device buffer. Tensor-wise and grid amax are maxima of bit patterns (exact, order-independent).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/device/gg_device_int.h"

extern "C" {
#include "reference/gg_gen_core.h"
}
#include "fuzz/run/device/gg_device.h"

#define THREADS 256
#define MAX_BLOCKS 8192

/* The plan as the kernels see it: device pointers for the used-matrix list, the grid's row
   offsets, the per-slot amax bits (tensor and grid scaling) and the per-slot multipliers s. */
struct devplan {
    struct gg_gen_plan g;
    const int64_t *used; /* indices of the generated matrices */
    int64_t n_used;
    const int64_t *row_offs; /* GG_GEN_GRID with grid_rows 0: row_groups + 1 entries */
    int64_t chunk, chunks; /* elements per work unit along the row, units per row */
    unsigned long long *amax;
    float *mult;
    uint8_t *data;
    void *scales;
};

/* Work unit u -> matrix, row and first column. */
struct unit {
    int64_t mat, row, col, n;
};

__device__ static struct unit unit_of(const struct devplan *d, int64_t u)
{
    int64_t per_mat = d->g.rows * d->chunks;
    struct unit w;
    w.mat = d->used[u / per_mat];
    int64_t in = u % per_mat;
    w.row = in / d->chunks;
    w.col = (in % d->chunks) * d->chunk;
    w.n = d->g.rowlen - w.col < d->chunk ? d->g.rowlen - w.col : d->chunk;
    return w;
}

__device__ static double sample_at(const struct devplan *d, const struct unit *w, int64_t j)
{
    uint64_t logical = (uint64_t)(w->mat * d->g.rows + w->row);
    return gg_core_sample(&d->g.dist, d->g.seed, d->g.stream,
                          logical * (uint64_t)d->g.rowlen + (uint64_t)(w->col + j));
}

/* Stores a code at element e of the operand, as gg_store_code does on the host. E2M1 nibbles of
   one byte may come from two threads: they are ORed into the zeroed buffer atomically. */
__device__ static void store_code(const struct devplan *d, int64_t e, uint32_t code)
{
    switch (gg_core_binfmt_of(d->g.dtype).nbits) {
    case 4: {
        uintptr_t byte = (uintptr_t)(d->data + (e >> 1));
        unsigned shift = (unsigned)(byte & 3u) * 8u + ((e & 1) ? 4u : 0u);
        atomicOr((unsigned int *)(byte & ~(uintptr_t)3), (code & 0xFu) << shift);
        break;
    }
    case 8: d->data[e] = (uint8_t)code; break;
    case 16: {
        uint16_t h = (uint16_t)code;
        memcpy(d->data + 2 * e, &h, 2);
        break;
    }
    case 32: memcpy(d->data + 4 * e, &code, 4); break;
    default: break;
    }
}

__device__ static int64_t addr_of(const struct devplan *d, const struct unit *w)
{
    return w->mat * d->g.mstride + w->row * d->g.ld + w->col;
}

/* The code of v · s (a NaN v as it is). Host and device like the core it calls: clang checks a
   kernel's body in the host pass too, where GG_DMUL names the host's product. */
GG_HD static inline uint32_t encode_scaled(const struct devplan *d, double v, double s)
{
    return gg_core_encode_scaled(d->g.dtype, v, s, d->g.sat);
}

/* Row block of row under a grid plan: a division, or the group whose rows hold it (the last
   group starting at or before row: empty groups before it hold no rows). */
__device__ static int64_t row_block_of(const struct devplan *d, int64_t row)
{
    if (d->g.grid_rows < 0)
        return 0;
    if (d->g.grid_rows > 0)
        return row / d->g.grid_rows;
    int64_t lo = 0, hi = d->g.row_groups - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (d->row_offs[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Slot of the scale of unit w: the tensor-wise scale of its matrix, or its grid block. */
__device__ static int64_t slot_of(const struct devplan *d, const struct unit *w)
{
    if (d->g.quant == GG_GEN_GRID)
        return gg_gen_grid_slot(&d->g, w->mat, row_block_of(d, w->row), w->col);
    return d->g.per_mat ? w->mat : 0;
}

/* Tensor and grid scaling, first pass: amax bits per slot. */
__global__ void amax_kernel(struct devplan d, int64_t units)
{
    int64_t slot = -1;
    unsigned long long m = 0;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += (int64_t)gridDim.x * blockDim.x) {
        struct unit w = unit_of(&d, u);
        int64_t s = slot_of(&d, &w);
        if (s != slot) {
            if (slot >= 0)
                atomicMax(&d.amax[slot], m);
            slot = s;
            m = 0;
        }
        unsigned long long a = gg_core_abs_bits(sample_at(&d, &w, 0));
        m = a > m ? a : m;
    }
    if (slot >= 0)
        atomicMax(&d.amax[slot], m);
}

/* Tensor and grid scaling: the multiplier s of every slot and its dequantisation factor 1/s
   (slots without a used element keep amax 0: s = 1). */
__global__ void tensor_scale_kernel(struct devplan d, int64_t slots)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < slots;
         i += (int64_t)gridDim.x * blockDim.x) {
        unsigned long long a = d.amax[i];
        double amax = gg_core_u2d(a > GG_CORE_INF_BITS ? GG_CORE_NAN_BITS : a);
        float s = gg_core_tensor_scale(amax, d.g.dtype);
        d.mult[i] = s;
        ((float *)d.scales)[i] = (float)(1.0 / (double)s);
    }
}

/* Plain, tensor and grid scaling: one element per unit, codes of v · s. */
__global__ void encode_kernel(struct devplan d, int64_t units)
{
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += (int64_t)gridDim.x * blockDim.x) {
        struct unit w = unit_of(&d, u);
        int scaled = d.g.quant == GG_GEN_TENSOR || d.g.quant == GG_GEN_GRID;
        double s = scaled ? (double)d.mult[slot_of(&d, &w)] : 1.0;
        store_code(&d, addr_of(&d, &w), encode_scaled(&d, sample_at(&d, &w, 0), s));
    }
}

/* MX: one 32-block per unit, quantised, its scale planted, codes stored. */
__global__ void mx_kernel(struct devplan d, int64_t units)
{
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += (int64_t)gridDim.x * blockDim.x) {
        struct unit w = unit_of(&d, u);
        double v[GG_MX_BLOCK];
        uint32_t codes[GG_MX_BLOCK];
        for (int j = 0; j < GG_MX_BLOCK; j++)
            v[j] = sample_at(&d, &w, j);
        uint8_t scale, planted;
        gg_core_mx_quantise_block(v, GG_MX_BLOCK, d.g.dtype, d.g.mx_rule, d.g.sat, &scale, codes);
        int64_t si = (w.mat * d.g.rows + w.row) * d.chunks + w.col / GG_MX_BLOCK;
        if (d.g.plant_e8m0 > 0 && gg_core_plant_e8m0(d.g.seed, d.g.scale_stream, (uint64_t)si,
                                                     d.g.plant_e8m0, &planted))
            scale = planted;
        ((uint8_t *)d.scales)[si] = scale;
        int64_t at = addr_of(&d, &w);
        for (int j = 0; j < GG_MX_BLOCK; j++)
            store_code(&d, at + j, codes[j]);
    }
}

/* Block128: one group of up to 128 per unit; amax, then the codes (values drawn twice). */
__global__ void block128_kernel(struct devplan d, int64_t units)
{
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < units;
         u += (int64_t)gridDim.x * blockDim.x) {
        struct unit w = unit_of(&d, u);
        unsigned long long m = 0;
        for (int64_t j = 0; j < w.n; j++) {
            unsigned long long a = gg_core_abs_bits(sample_at(&d, &w, j));
            m = a > m ? a : m;
        }
        float s = gg_core_tensor_scale(gg_core_u2d(m > GG_CORE_INF_BITS ? GG_CORE_NAN_BITS : m),
                                       d.g.dtype);
        ((float *)d.scales)[(w.mat * d.g.rows + w.row) * d.chunks + w.col / GG_BLOCK128] =
            (float)(1.0 / (double)s);
        int64_t at = addr_of(&d, &w);
        for (int64_t j = 0; j < w.n; j++)
            store_code(&d, at + j, encode_scaled(&d, sample_at(&d, &w, j), (double)s));
    }
}

static unsigned grid_of(int64_t units)
{
    int64_t b = (units + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

extern "C" enum gg_status gg_device_generate(struct gg_device *dev, const struct gg_gen_plan *g,
                                             void *data, void *scales, char *err,
                                             size_t err_len)
{
    struct devplan d;
    memset(&d, 0, sizeof d);
    d.g = *g;
    d.data = (uint8_t *)data;
    d.scales = scales;
    d.chunk = g->quant == GG_GEN_MX ? GG_MX_BLOCK : g->quant == GG_GEN_BLOCK128 ? GG_BLOCK128 : 1;
    d.chunks = (g->rowlen + d.chunk - 1) / d.chunk;
    if (g->quant == GG_GEN_MX)
        d.chunks = g->rowlen / GG_MX_BLOCK; /* K is a multiple of 32 (gg_problem_check) */
    int64_t slots = g->quant == GG_GEN_TENSOR ? (g->per_mat ? g->mats : 1) : 0;
    int64_t n_offs = 0;
    if (g->quant == GG_GEN_GRID) {
        slots = g->mats * gg_gen_grid_row_blocks(g) * gg_gen_grid_col_blocks(g);
        n_offs = g->grid_rows == 0 ? g->row_groups + 1 : 0;
    }
    /* Host side of the scratch: the used matrices, the grid's row offsets, then zeroed amax
       slots. */
    size_t used_bytes = (size_t)(g->mats > 0 ? g->mats : 1) * sizeof(int64_t);
    size_t offs_bytes = (size_t)n_offs * sizeof(int64_t);
    size_t head = used_bytes + offs_bytes;
    size_t bytes = head + (size_t)slots * (sizeof(unsigned long long) + sizeof(float));
    int64_t *used = (int64_t *)calloc(1, bytes);
    if (!used) {
        snprintf(err, err_len, "out of memory for the generation plan of %lld matrices",
                 (long long)g->mats);
        return GG_E_NOMEM;
    }
    for (int64_t i = 0; i < g->mats; i++)
        if (!g->group_lens || g->group_lens[i] > 0)
            used[d.n_used++] = i;
    if (n_offs > 0)
        memcpy((char *)used + used_bytes, g->row_offs, offs_bytes);
    struct gg_devbuf scratch;
    enum gg_status st = gg_devbuf_alloc(dev, &scratch, bytes, err, err_len);
    if (st == GG_OK)
        st = gg_devbuf_upload(dev, &scratch, 0, used, bytes, err, err_len);
    int64_t units = d.n_used * g->rows * d.chunks;
    if (st == GG_OK && (units > 0 || slots > 0)) {
        d.used = (const int64_t *)scratch.data;
        d.row_offs = (const int64_t *)(scratch.data + used_bytes);
        d.amax = (unsigned long long *)(scratch.data + head);
        d.mult = (float *)(scratch.data + head + (size_t)slots * sizeof(unsigned long long));
        cudaStream_t stream = (cudaStream_t)gg_device_stream(dev);
        switch (g->quant) {
        case GG_GEN_MX:
            if (units > 0)
                mx_kernel<<<grid_of(units), THREADS, 0, stream>>>(d, units);
            break;
        case GG_GEN_BLOCK128:
            if (units > 0)
                block128_kernel<<<grid_of(units), THREADS, 0, stream>>>(d, units);
            break;
        case GG_GEN_TENSOR:
        case GG_GEN_GRID:
            if (units > 0)
                amax_kernel<<<grid_of(units), THREADS, 0, stream>>>(d, units);
            tensor_scale_kernel<<<grid_of(slots), THREADS, 0, stream>>>(d, slots);
            [[fallthrough]];
        default:
            if (units > 0)
                encode_kernel<<<grid_of(units), THREADS, 0, stream>>>(d, units);
            break;
        }
        st = gg_device_check(dev, "generating an operand on the device", err, err_len);
        if (st == GG_OK) /* the scratch goes back to the pool: wait for its users */
            st = gg_device_sync(dev, "generating an operand on the device", err, err_len);
    }
    gg_devbuf_free(dev, &scratch);
    free(used);
    return st;
}

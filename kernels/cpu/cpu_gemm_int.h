/*
 * cpu_gemm_int.h — the GEMM machinery the CPU kernel families share: the packed fp32 tile engine
 * (cpu_gemm_tile.c), tile lists, split-K waves and their fixed-order reduction (cpu_gemm_sched.c),
 * and the grouped map of the families (kernels/family/family.h) on that engine
 * (cpu_grouped_map.c). Every kernel accumulates in fp32 with the same register-blocked
 * micro-kernel or its own, and rounds once in the shared epilogue. Included only from kernels/cpu/.
 */
#ifndef GG_CPU_GEMM_INT_H
#define GG_CPU_GEMM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_int.h"

static inline int64_t cpu_min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

static inline int64_t cpu_max64(int64_t x, int64_t y)
{
    return x > y ? x : y;
}

/* ceil(x / y) for x >= 0, y > 0. */
static inline int64_t cpu_ceil_div(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

/* ---- the tile engine (cpu_gemm_tile.c) ---------------------------------------------------- */

/* Output tile of the kernels built on the engine, and the register block of its micro-kernel:
   MICRO_M x MICRO_N fp32 accumulators. 2 x 16 is eight 4-lane vectors plus four for a row of B,
   which fits the 16 SSE registers of baseline x86-64; of the blocks measured (2x16, 4x8, 4x16,
   8x8) it was the fastest, and 4x16 and 8x8 spill. Tile accumulators have row stride TILE_N. */
#define CPU_GEMM_TILE_M 64
#define CPU_GEMM_TILE_N 64
#define CPU_GEMM_TILE_ELEMS ((int64_t)CPU_GEMM_TILE_M * CPU_GEMM_TILE_N)
#define CPU_GEMM_MICRO_M 2
#define CPU_GEMM_MICRO_N 16

/* An input operand: element e of dtype at base, bf16 decoded exactly, 8-bit codes and 4-bit E2M1
   codes (two per byte) through table. With wrap32 (8-bit codes only) every element offset is
   reduced modulo 2^32, as a load through a buffer descriptor with a 32-bit range does. */
struct cpu_gemm_operand {
    const void *base;
    enum gg_dtype dtype;
    const float *table;
    int wrap32;
};

/* Packing buffers of one thread: ap holds TILE_M x tile_k values in MICRO_M-row panels, bp
   tile_k x TILE_N in MICRO_N-column panels (tile_k the deepest K step the kernel packs). A step
   of kc values is laid out panel by panel: value (q, r) of a panel of width w (q the row of A or
   column of B, r the reduction index) at [(q / w)·w·kc + r·w + q mod w]. */
struct cpu_gemm_panels {
    float *ap, *bp;
};

/* The memory one thread of the engine works in: its packing buffers and its tile accumulator
   (TILE_M x TILE_N, row stride TILE_N). */
struct cpu_gemm_scratch {
    struct cpu_gemm_panels pn;
    float *acc;
};

/* Floats of one thread's scratch for K steps of up to tile_k. */
size_t cpu_gemm_scratch_floats(int64_t tile_k);
/* Scratch area i of an allocation of cpu_gemm_scratch_floats(tile_k) floats per thread. */
struct cpu_gemm_scratch cpu_gemm_scratch_at(float *buf, int64_t tile_k, int64_t i);

/*
 * The operands of one output tile of rows x cols:
 *   A(i, r) = a[a_off + i·a_si + r·a_sr],  B(r, j) = b[b_off + r·b_sr + j·b_sj];
 * only the first b_valid columns of B are loaded (a tail mask), the others count as zero.
 * a_overread (the mutant read_past_end) also loads row `rows` of A, one past the tile, and
 * discards it: an off-by-one load bound that changes no result but reads past A's end at the
 * last row tile.
 */
struct cpu_gemm_src {
    const struct cpu_gemm_operand *a, *b;
    int64_t a_off, a_si, a_sr;
    int64_t b_off, b_sj, b_sr;
    int64_t rows, cols, b_valid;
    int a_overread;
};

/* Where an epilogue writes: C of c_dtype (bf16 or f32) with row stride ldc, and the bias rows
   (bias_dtype GG_DTYPE_NONE: no bias). With wrap32 (the mutant i32_store_offset) the byte offset
   of every stored element is reduced modulo 2^32, as a store through a 32-bit byte offset does. */
struct cpu_gemm_out {
    void *c;
    enum gg_dtype c_dtype;
    int64_t ldc;
    const void *bias;
    enum gg_dtype bias_dtype;
    int wrap32;
};

/* The rows x cols logical elements of one stored tile: row i goes to C row c_rows[i] (or i when
   c_rows is NULL) at element offset c_off + row·ldc; the fp32 values are multiplied by *scale
   when scale is not NULL, and get bias[bias0 + j] added when there is a bias. */
struct cpu_gemm_dst {
    int64_t rows, cols;
    int64_t c_off;
    const int64_t *c_rows;
    const float *scale;
    int64_t bias0;
};

/* Decodes reduction steps rk .. rk + kc - 1 of the tile of src into the fp32 panels of pn (the
   columns of B past b_valid, and the rows and columns past the tile in its last panels, zero,
   so the micro-kernel always runs on whole panels). */
void cpu_gemm_pack_step(const struct cpu_gemm_src *src, int64_t rk, int64_t kc,
                        const struct cpu_gemm_panels *pn);

/* acc[i][j] += Σ_{r0 <= r < r0 + len} ap[r][i] · bp[r][j] over the rows x cols of a tile whose
   panels were packed kc deep, each term added in order of r with one fp32 multiply and one fp32
   add (products of bf16 or fp8 values are exact in fp32, so fused or unfused evaluation gives the
   same sums); acc has row stride TILE_N. */
void cpu_gemm_multiply(const struct cpu_gemm_panels *pn, int64_t rows, int64_t cols, int64_t kc,
                       int64_t r0, int64_t len, float *acc);

/* acc += the tile of src reduced over r0 .. r1 - 1, packed tile_k at a time. */
void cpu_gemm_accumulate(const struct cpu_gemm_src *src, int64_t r0, int64_t r1, int64_t tile_k,
                         const struct cpu_gemm_panels *pn, float *acc);

/* Zeroes the rows of acc that the micro-kernels of a tile of `rows` rows touch: the rows rounded
   up to whole MICRO_M panels, each a full TILE_N. */
void cpu_gemm_clear(float *acc, int64_t rows);

/* Epilogue: C = RN(acc · scale + bias) for the logical elements of d (acc row stride acc_ld),
   the scaling and the bias add each one fp32 operation, then one RNE rounding to bf16 (none for
   f32). The padding between rows is never touched; acc may be overwritten. */
void cpu_gemm_store(const struct cpu_gemm_out *out, const struct cpu_gemm_dst *d, float *acc,
                    int64_t acc_ld);

/* ---- tile lists, split-K and schedules (cpu_gemm_sched.c) --------------------------------- */

/* One tile of a list: the group (or batch, or matrix) g owning it, its origin in that group's
   block and its extent. */
struct cpu_tile {
    int64_t g, i0, j0, rows, cols;
};

/* Tiles of a block of rows x cols cut into tile_m x tile_n tiles: none when it is empty. */
int64_t cpu_block_tiles(int64_t rows, int64_t cols, int64_t tile_m, int64_t tile_n);

/* Tile `local` of group g's block of rows x cols, the tiles taken row by row. */
struct cpu_tile cpu_tile_in_block(int64_t g, int64_t local, int64_t rows, int64_t cols,
                                  int64_t tile_m, int64_t tile_n);

/* The tile list over groups 0 .. groups - 1: returns the total of tiles_of(ctx, g), and fills
   start[0 .. groups] with its prefix sums when start is not NULL. */
int64_t cpu_tile_prefix(int64_t groups, int64_t (*tiles_of)(const void *ctx, int64_t g),
                        const void *ctx, int64_t *start);

/* The group owning tile t of a list with prefix sums start[0 .. groups]: the last g with
   start[g] <= t (groups without tiles share their start with the next group). */
int64_t cpu_tile_owner(const int64_t *start, int64_t groups, int64_t t);

/* (tile, slice) items per split-K wave (split_k up to FAMILY_SPLIT_K_MAX): the workspace holds
   the fp32 partials of one wave, as a GPU holds those of its resident CTAs, so its size is
   bounded whatever the problem size. */
#define CPU_SPLIT_K_WAVE_ITEMS 1024

/* Tiles per wave: the whole list without split-K, else as many as fit the wave's items. */
int64_t cpu_splitk_wave(int64_t tiles, int64_t split);

/* Workspace bytes of a list of `tiles` tiles: split slots of slot_elems floats per tile of a
   wave; 0 without split-K. */
size_t cpu_splitk_ws(int64_t tiles, int64_t split, int64_t slot_elems);

/* Slice sl of a reduction of length len cut in slices of chunk:
   [r0, r1) = [sl·chunk, (sl+1)·chunk) ∩ [0, len), empty for trailing slices. */
void cpu_splitk_slice(int64_t len, int64_t chunk, int64_t sl, int64_t *r0, int64_t *r1);

/* Copies the rows x cols logical elements of acc into slot (both of row stride ld). */
void cpu_splitk_save(float *slot, const float *acc, int64_t ld, int64_t rows, int64_t cols);

/* acc = ((p_0 + p_1) + p_2) + ... over the split partials of one tile, which lie slot_elems
   apart from part; only the rows x cols elements are read (row stride ld). The fixed order of
   the sum makes the result independent of which thread computed which slice. */
void cpu_splitk_reduce(const float *part, int64_t split, int64_t slot_elems, int64_t ld,
                       int64_t rows, int64_t cols, float *acc);

/*
 * A tile list run as a sequence of phases, each a list of independent work items; a phase
 * starts only when the previous one is complete. Without split-K there is one phase, one item
 * per tile, which computes and stores its tile. With split-K S the tiles go in waves; wave w is
 * phase 2w (one item per (tile, slice), tile-major: the partial of the slice into workspace slot
 * item) and phase 2w+1 (one item per tile: the fixed-order reduction of its S slots, then the
 * epilogue).
 */
struct cpu_sched {
    int64_t tiles, split, wave, phases;
    int64_t slot_elems, ld; /* floats per workspace slot; row stride of slots and accumulators */
    float *ws;              /* split > 1: cpu_splitk_ws(tiles, split, slot_elems) bytes */
};

/*
 * A kernel's part in a schedule (ctx is its run state): locate() places tile t; compute() leaves
 * in acc (row stride ld) the fp32 sums of the tile over slice sl of split (the whole reduction
 * when split = 1); store() runs the epilogue of the tile from acc. scratch is the executing
 * thread's own memory and acc its tile accumulator.
 */
struct cpu_sched_kernel {
    const void *ctx;
    struct cpu_tile (*locate)(const void *ctx, int64_t t);
    void (*compute)(const void *ctx, const struct cpu_tile *tile, int64_t sl, int64_t split,
                    void *scratch, float *acc);
    void (*store)(const void *ctx, const struct cpu_tile *tile, void *scratch, float *acc);
};

void cpu_sched_init(struct cpu_sched *s, int64_t tiles, int64_t split, int64_t slot_elems,
                    int64_t ld, float *ws);

/* Items of phase ph; *t0 receives the first tile of its wave. */
int64_t cpu_sched_items(const struct cpu_sched *s, int64_t ph, int64_t *t0);

/* Runs item `item` of phase ph (wave starting at tile t0). */
void cpu_sched_run_item(const struct cpu_sched *s, const struct cpu_sched_kernel *k, int64_t ph,
                        int64_t t0, int64_t item, void *scratch, float *acc);

/* Runs every phase in order on the calling thread, items in list order. */
void cpu_sched_run(const struct cpu_sched *s, const struct cpu_sched_kernel *k, void *scratch,
                   float *acc);

/* ---- the grouped map on the tile engine (cpu_grouped_map.c) ------------------------------- */

/* Tiles of tile_m x tile_n that group g's block is cut into. */
int64_t cpu_grouped_tiles(const struct family_grouped_map *m, int64_t g, int64_t tile_m,
                          int64_t tile_n);

/* The operands of tile t of group block blk, with a and b the operands A and B. */
struct cpu_gemm_src cpu_grouped_src(const struct family_grouped_map *m,
                                    const struct family_grouped_block *blk,
                                    const struct cpu_tile *t, const struct cpu_gemm_operand *a,
                                    const struct cpu_gemm_operand *b);

/* The checks of run() of the grouped FP8 kernels: sizes, leading dimensions, the device group
   offsets, and the pointers of one-byte A and B, of C (bf16 or f32) and of the fp32 scales;
   with scales_by_output the scales are needed whenever C is written (tensor-wise scaling of an
   empty reduction), else when their operand is read. */
enum gg_status cpu_grouped_check_fp8(const struct gg_problem *p,
                                     const struct family_grouped_map *m,
                                     const struct gg_operands *o, int scales_by_output,
                                     char *err, size_t err_len);

#endif /* GG_CPU_GEMM_INT_H */

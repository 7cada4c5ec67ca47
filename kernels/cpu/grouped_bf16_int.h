/*
 * grouped_bf16_int.h — the machinery the BF16 grouped CPU kernels share (grouped_bf16_cpu.c):
 * problem checks, the workspace formula of one GEMM launch, and the launch itself (a tile list
 * computed by the shared tile engine, split-K slices run by two threads that reduce through the
 * workspace), with the mutants that live in it. What the kernels accept is the family's
 * (family_bf16_supports). The dispatch modes (grouped_bf16_dispatch.c) differ only in how they
 * cut the groups into launches.
 */
#ifndef GG_GROUPED_BF16_INT_H
#define GG_GROUPED_BF16_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_gemm_int.h"

/* Output tile owned by one work item, and the reduction step of one packing round. */
#define CPU_BF16_TILE_M CPU_GEMM_TILE_M
#define CPU_BF16_TILE_N CPU_GEMM_TILE_N
#define CPU_BF16_TILE_K 256
/* Bytes of one tile of fp32 partials (one workspace slot). */
#define CPU_BF16_SLOT_BYTES ((size_t)CPU_GEMM_TILE_ELEMS * sizeof(float))

/* A grouped problem as this machinery runs it: the addressing (geo.i32_row_offset is
   i32_cumulative_offset) and the switches of the other re-created bugs. */
struct cpu_bf16_map {
    struct family_grouped_map geo;
    int skip_empty_wgrad; /* wgrad_zero_uninit: wgrad groups without tokens are skipped */
    int tail_rows;        /* tail_rows_unwritten: the output's final partial row tile not stored */
    int missing_fence;    /* missing_fence: split-K reduction waits for slices to start only */
    int store_wrap32;     /* i32_store_offset: C's byte offsets stored through 32 bits */
    int overread;         /* read_past_end: a partial row tile loads one row of A too many */
};

/* One GEMM launch: the tiles of groups g0 .. g0 + ng - 1 in one flat list. tile_start holds
   the ng + 1 prefix sums of their tile counts; a single-group launch may leave it NULL and give
   the group's block in blk instead (so a dispatcher can place the group's operands itself). */
struct cpu_bf16_launch {
    const struct cpu_bf16_map *m;
    const uint16_t *a, *b;
    void *c;
    enum gg_dtype c_dtype;
    int64_t g0, ng;
    const int64_t *tile_start;
    struct family_grouped_block blk;
    int64_t tiles;
    float *ws; /* cpu_bf16_launch_ws(tiles, split) bytes; NULL without split-K */
};

/* Packing buffers of the two threads that run a launch (the caller and its split-K helper). */
struct cpu_bf16_worker {
    float *buf;
};

/* The map of p over the group offsets offs, with the mutant switches p asks for. */
void cpu_bf16_map_init(const struct gg_problem *p, const int64_t *offs, struct cpu_bf16_map *m);

/* For run(): supports(), then the map over the group arrays that option lens_from names (0: the
   device copies in o, 1: the host arrays in p), checked for consistency (lens[g] =
   offs[g+1] - offs[g] >= 0, offs[0] = 0, offs[G] = m), and the sizes and operand pointers. */
enum gg_status cpu_bf16_prepare(const struct gg_problem *p, const char *const *mutants,
                                const struct gg_operands *o, struct cpu_bf16_map *m, char *err,
                                size_t err_len);

/* Tiles group g contributes to a launch: 0 for a block without rows or columns, and for a wgrad
   group without tokens under wgrad_zero_uninit (otherwise it owns N x K tiles of zeros). */
int64_t cpu_bf16_group_tiles(const struct cpu_bf16_map *m, int64_t g);

/* Workspace bytes one launch of `tiles` tiles uses with split_k = split (0 when split = 1). */
size_t cpu_bf16_launch_ws(int64_t tiles, int64_t split);

/* The workspace size a kernel reports when it uses `used` bytes: one slot less under
   workspace_underreport, else used. */
size_t cpu_bf16_reported_ws(const struct gg_problem *p, size_t used);

/* For workspace_bytes(): the map of p over its host group offsets when p is a grouped problem
   with a valid split_k > 1 (returns 1), else 0 (no workspace). */
int cpu_bf16_ws_map(const struct gg_problem *p, struct cpu_bf16_map *m);

/* Checks that o's workspace can hold `used` bytes as the kernel reported them. */
enum gg_status cpu_bf16_check_ws(const struct gg_problem *p, const struct gg_operands *o,
                                 size_t used, char *err, size_t err_len);

enum gg_status cpu_bf16_worker_init(struct cpu_bf16_worker *w, char *err, size_t err_len);
void cpu_bf16_worker_free(struct cpu_bf16_worker *w);

/* Runs launch l with worker w (not shared with a concurrent launch). */
enum gg_status cpu_bf16_run_launch(const struct cpu_bf16_launch *l, struct cpu_bf16_worker *w,
                                   char *err, size_t err_len);

#endif /* GG_GROUPED_BF16_INT_H */

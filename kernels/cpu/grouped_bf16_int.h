/*
 * grouped_bf16_int.h — the machinery the BF16 grouped kernels share (grouped_bf16_cpu.c): the
 * addressing map of a grouped op, the block of C a group owns, option and problem checks, the
 * workspace formula of one GEMM launch, and the launch itself (a tile list computed by packed
 * micro-kernels, split-K slices run by two threads that reduce through the workspace). The
 * dispatch modes (grouped_bf16_dispatch.c) differ only in how they cut the groups into launches.
 */
#ifndef GG_GROUPED_BF16_INT_H
#define GG_GROUPED_BF16_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/cpu_int.h"

/* Output tile owned by one work item, and the reduction step of one packing round. */
#define CPU_GROUPED_TILE_M 64
#define CPU_GROUPED_TILE_N 64
#define CPU_GROUPED_TILE_K 256
/* Bytes of one tile of fp32 partials (one workspace slot). */
#define CPU_GROUPED_SLOT_BYTES ((size_t)CPU_GROUPED_TILE_M * CPU_GROUPED_TILE_N * sizeof(float))

/* Mutants re-created in the shared machinery (every BF16 grouped kernel offers them). */
#define CPU_GROUPED_MUTANTS_SHARED                                                             \
    "wgrad_zero_uninit", "workspace_underreport", "missing_fence", "tail_rows_unwritten",      \
        "i32_cumulative_offset"

/*
 * Every grouped op is C_g[i][j] = Σ_r A_g(i, r) · B_g(r, j) over one block of C, with
 *   A_g(i, r) = a[a_off + i·a_si + r·a_sr],  B_g(r, j) = b[b_off + r·b_sr + j·b_sj],
 *   C_g[i][j] = c[c_off + i·ldc + j]:
 *   fwd    rows M_g, cols N, reduction K     a_si = lda, a_sr = 1     b_sr = 1,   b_sj = ldb
 *   dgrad  rows M_g, cols K, reduction N     a_si = lda, a_sr = 1     b_sr = ldb, b_sj = 1
 *   wgrad  rows N,   cols K, reduction M_g   a_si = 1,   a_sr = lda   b_sr = ldb, b_sj = 1
 * The mutant flags switch on the re-created bugs of the shared machinery.
 */
struct cpu_grouped_map {
    enum gg_op op;
    int64_t groups, m, n, k;
    int64_t lda, ldb, ldc, stride_b, stride_c; /* defaults resolved */
    int64_t a_si, a_sr, b_sr, b_sj;
    const int64_t *offs; /* groups + 1 row offsets */
    int64_t split;       /* split_k option */
    int i32_offsets;     /* i32_cumulative_offset: m_start·ld computed in int32 */
    int skip_empty_wgrad; /* wgrad_zero_uninit: wgrad groups without tokens are skipped */
    int tail_rows;       /* tail_rows_unwritten: the output's final partial row tile not stored */
    int missing_fence;   /* missing_fence: split-K reduction waits for slices to start only */
    int underreport;     /* workspace_underreport: reported workspace one slot short */
};

/* The block of C that group g owns, where its operands start, and its reduction length.
   row0 is the group's first output row for fwd/dgrad (0 for wgrad). */
struct cpu_grouped_block {
    int64_t a_off, b_off, c_off;
    int64_t row0, rows, cols, red;
};

/* One GEMM launch: the tiles of groups g0 .. g0 + ng - 1 in one flat list. tile_start holds
   the ng + 1 prefix sums of their tile counts; a single-group launch may leave it NULL and give
   the group's block in blk instead (so a dispatcher can place the group's operands itself). */
struct cpu_grouped_launch {
    const struct cpu_grouped_map *m;
    const uint16_t *a, *b;
    void *c;
    enum gg_dtype c_dtype;
    int64_t g0, ng;
    const int64_t *tile_start;
    struct cpu_grouped_block blk;
    int64_t tiles;
    float *ws; /* cpu_grouped_launch_ws(tiles, split) bytes; NULL without split-K */
};

/* Packing buffers of the two threads that run a launch (the caller and its split-K helper). */
struct cpu_grouped_worker {
    float *buf;
};

/* supports() of every BF16 grouped kernel: ops, dtypes, scaling, the options split_k and
   lens_from, and p->mutant against the kernel's NULL-terminated list. */
int cpu_grouped_supports(const struct gg_problem *p, const char *const *mutants, char *why,
                         size_t why_len);

/* The map of p over the group offsets offs (packed defaults in every zero leading dimension). */
void cpu_grouped_map_init(const struct gg_problem *p, const int64_t *offs,
                          struct cpu_grouped_map *m);

/* For run(): supports(), then the map over the group arrays that option lens_from names (0: the
   device copies in o, 1: the host arrays in p), checked for consistency (lens[g] =
   offs[g+1] - offs[g] >= 0, offs[0] = 0, offs[G] = m), and the sizes and operand pointers. */
enum gg_status cpu_grouped_prepare(const struct gg_problem *p, const char *const *mutants,
                                   const struct gg_operands *o, struct cpu_grouped_map *m,
                                   char *err, size_t err_len);

struct cpu_grouped_block cpu_grouped_block_of(const struct cpu_grouped_map *m, int64_t g);

/* Tiles group g contributes to a launch: 0 for a block without rows or columns, and for a wgrad
   group without tokens under wgrad_zero_uninit (otherwise it owns N x K tiles of zeros). */
int64_t cpu_grouped_group_tiles(const struct cpu_grouped_map *m, int64_t g);

/* Workspace bytes one launch of `tiles` tiles uses with split_k = split (0 when split = 1). */
size_t cpu_grouped_launch_ws(int64_t tiles, int64_t split);

/* The workspace size a kernel reports when it uses `used` bytes: one slot less under
   workspace_underreport, else used. */
size_t cpu_grouped_reported_ws(const struct gg_problem *p, size_t used);

/* For workspace_bytes(): the map of p over its host group offsets when p is a grouped problem
   with a valid split_k > 1 (returns 1), else 0 (no workspace). */
int cpu_grouped_ws_map(const struct gg_problem *p, struct cpu_grouped_map *m);

/* Checks that o's workspace can hold `used` bytes as the kernel reported them. */
enum gg_status cpu_grouped_check_ws(const struct gg_problem *p, const struct gg_operands *o,
                                    size_t used, char *err, size_t err_len);

enum gg_status cpu_grouped_worker_init(struct cpu_grouped_worker *w, char *err, size_t err_len);
void cpu_grouped_worker_free(struct cpu_grouped_worker *w);

/* Runs launch l with worker w (not shared with a concurrent launch). */
enum gg_status cpu_grouped_run_launch(const struct cpu_grouped_launch *l,
                                      struct cpu_grouped_worker *w, char *err, size_t err_len);

#endif /* GG_GROUPED_BF16_INT_H */

/*
 * grouped_bf16_gpu.cu — the BF16 grouped GEMM kernels on the GPU (fwd NT, dgrad NN, variable-K
 * wgrad TN; bf16 in, fp32 tensor-core accumulation, bf16 or f32 out), twins of the CPU kernels
 * of grouped_bf16_cpu.c and grouped_bf16_dispatch.c: grouped_bf16_<gpu>_persistent (a fixed
 * grid over one tile list located from the device group offsets), grouped_bf16_<gpu>_tiled
 * (one CTA per tile, grid from the host group lengths) and grouped_bf16_<gpu>_streams (one
 * launch per group, small groups spread over concurrent streams with a workspace slice each).
 * supports() is the family's (kernels/family), so both backends accept exactly the same
 * problems.
 */
#include "kernels/gpu/gpu_gemm_int.h"
#include "kernels/gpu/gpu_transpose_int.h"

/* Workspace size a kernel reports for `used` bytes: one slot less under workspace_underreport
   (the formula forgets the last tile of partials, which then lands past the end). */
static size_t reported_ws(const struct gg_problem *p, size_t used)
{
    if (gg_mutant_is(p, "workspace_underreport") && used >= GPU_SLOT_BYTES)
        return used - GPU_SLOT_BYTES;
    return used;
}

/* The launch description of p for workspace_bytes(): geometry and mutant switches from the host
   offsets (no operands). Returns 0 when p has no workspace (no split-K or not runnable). */
static int ws_plan(const struct gg_problem *p, gpu_grouped *P)
{
    struct family_grouped_map m;
    if (!family_grouped_ws_map(p, &m))
        return 0;
    struct gg_operands none;
    memset(&none, 0, sizeof none);
    *P = gpu_grouped_of(p, &none, &m);
    return 1;
}

/* ---- one tile list over all groups: persistent and tiled ----------------------------------- */

static const char *const list_mutants[] = {FAMILY_BF16_MUTANTS_SHARED, "i32_store_offset",
                                           "read_past_end", NULL};

GG_GPU_ENTRY int list_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_bf16_supports(p, list_mutants, why, why_len);
}

GG_GPU_ENTRY size_t list_workspace_bytes(const struct gg_problem *p)
{
    gpu_grouped P;
    if (!ws_plan(p, &P))
        return 0;
    int64_t tiles = gpu_count_tiles(P, p->group_offs, 0, P.groups);
    return reported_ws(p, gpu_list_ws(tiles, P.split, 0));
}

/*
 * grouped_bf16_<gpu>_persistent on Hopper: a launch without split-K or mutant and with a bf16
 * output runs on the persistent wgmma kernel (gpu_wgmma_int.h, bf16 operands), dgrad and wgrad
 * on the K-major copies of gpu_kmajor_plan_of in the workspace. Everything else, and the mutants
 * (which live in the mma.sync engine), runs on the engine.
 */
static int wg_path(const struct gg_problem *p, int64_t split)
{
    return GG_GPU_HAVE_WGMMA && p->mutant == NULL && split <= 1 &&
           p->c_dtype == GG_DTYPE_BF16;
}

GG_GPU_ENTRY size_t persistent_workspace_bytes(const struct gg_problem *p)
{
    if (p->group_offs != NULL && p->groups >= 0) {
        struct family_grouped_map m;
        family_grouped_map_init(p, p->group_offs, &m);
        if (wg_path(p, m.split))
            return gpu_kmajor_plan_of(p->op, &m, 2).copies;
    }
    return list_workspace_bytes(p);
}

/* The wgmma launch of wg_path: the copies first where the op needs them. */
static enum gg_status wg_run(gpu_grouped P, const struct family_grouped_map *m, int64_t tiles,
                             const struct gg_operands *o, char *err, size_t err_len)
{
    gpu_kmajor_plan pl = gpu_kmajor_plan_of(P.op, m, 2);
    enum gg_status st = family_check_workspace(o, pl.copies > 0, pl.copies, P.split, err, err_len);
    if (st != GG_OK)
        return st;
    cudaStream_t s = (cudaStream_t)o->stream;
    if (tiles > 0 && pl.copies > 0 &&
        (st = gpu_kmajor_copies(pl, &P, (uint8_t *)o->workspace, 2, s, err, err_len)) != GG_OK)
        return st;
    gpu_finish_setup(&P);
    P.wg_formats = GPU_WG_BF16;
    gpu_exec x = {1, 0, s};
    return gpu_run_list<uint16_t>(P, tiles, NULL, x, err, err_len);
}

static enum gg_status list_run(const struct gg_problem *p, const struct gg_operands *o,
                               int persistent, char *err, size_t err_len)
{
    if (!list_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct family_grouped_map m;
    enum gg_status st = gpu_grouped_check(p, o, &m, sizeof(uint16_t), err, err_len);
    if (st != GG_OK)
        return st;
    gpu_grouped P = gpu_grouped_of(p, o, &m);
    int64_t tiles = gpu_count_tiles(P, p->group_offs, 0, P.groups);
    if (persistent && wg_path(p, P.split))
        return wg_run(P, &m, tiles, o, err, err_len);
    size_t used = gpu_list_ws(tiles, P.split, 0);
    if ((st = family_check_workspace(o, used > 0, reported_ws(p, used), P.split, err, err_len)) !=
        GG_OK)
        return st;
    gpu_exec x = {persistent, 0, (cudaStream_t)o->stream};
    return gpu_run_list<uint16_t>(P, tiles, o->workspace, x, err, err_len);
}

GG_GPU_ENTRY enum gg_status persistent_run(const struct gg_problem *p, const struct gg_operands *o,
                                     char *err, size_t err_len)
{
    return list_run(p, o, 1, err, err_len);
}

GG_GPU_ENTRY enum gg_status tiled_run(const struct gg_problem *p, const struct gg_operands *o,
                                char *err, size_t err_len)
{
    return list_run(p, o, 0, err, err_len);
}

#define GROUPED_OPS                                                                              \
    (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) |                           \
     GG_OP_BIT(GG_OP_GROUPED_WGRAD))

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_grouped_bf16_gpu_persistent = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("grouped_bf16", "persistent"),
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 tensor-core acc, bf16/f32 out; fixed grid "
               "over one tile list from the device offsets (wgmma on sm_90a for bf16 out without "
               "split-K), split-K with a fused reduction",
    .backend = GG_GPU_BACKEND,
    .ops = GROUPED_OPS,
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GPU_BK,
    .mutants = list_mutants,
    .supports = list_supports,
    .workspace_bytes = persistent_workspace_bytes,
    .run = persistent_run,
};
#endif

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_grouped_bf16_gpu_tiled = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("grouped_bf16", "tiled"),
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 tensor-core acc, bf16/f32 out; one CTA "
               "per tile, split-K with a fused reduction",
    .backend = GG_GPU_BACKEND,
    .ops = GROUPED_OPS,
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GPU_BK,
    .mutants = list_mutants,
    .supports = list_supports,
    .workspace_bytes = list_workspace_bytes,
    .run = tiled_run,
};
#endif

/* ---- per-group launches over concurrent streams ------------------------------------------- */

static const char *const streams_mutants[] = {"zero_len_ptr_skip", "shared_workspace_parallel",
                                              FAMILY_BF16_MUTANTS_SHARED, NULL};

GG_GPU_ENTRY int streams_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    return family_bf16_streams_supports(p, streams_mutants, why, why_len);
}

/* A stream's slice holds the largest single-group launch (partials only: the reduction is a
   separate launch on the same stream). */
static size_t stream_slice(const gpu_grouped &P, const int64_t *host_offs)
{
    size_t most = 0;
    for (int64_t g = 0; g < P.groups; g++) {
        size_t b = gpu_list_ws(gpu_group_tiles(P, g, host_offs), P.split, 1);
        most = b > most ? b : most;
    }
    return most;
}

GG_GPU_ENTRY size_t streams_workspace_bytes(const struct gg_problem *p)
{
    gpu_grouped P;
    int64_t streams = gg_kopt_get(p, "streams", FAMILY_STREAMS_DEFAULT);
    if (streams < 1 || streams > FAMILY_STREAMS_MAX || !ws_plan(p, &P))
        return 0;
    return reported_ws(p, (size_t)streams * stream_slice(P, p->group_offs));
}

/* The streams and events of one run, released by dispatch_free() whatever happened. */
struct dispatch {
    int64_t n;
    cudaStream_t s[FAMILY_STREAMS_MAX];
    cudaEvent_t done[FAMILY_STREAMS_MAX], start;
};

static void dispatch_free(struct dispatch *d)
{
    for (int64_t i = 0; i < d->n; i++) {
        (void)cudaEventDestroy(d->done[i]);
        (void)cudaStreamDestroy(d->s[i]);
    }
    if (d->start != NULL)
        (void)cudaEventDestroy(d->start);
}

static enum gg_status dispatch_init(struct dispatch *d, int64_t streams, cudaStream_t caller,
                                    char *err, size_t err_len)
{
    GG_GPU_CHECK(cudaEventCreateWithFlags(&d->start, cudaEventDisableTiming));
    GG_GPU_CHECK(cudaEventRecord(d->start, caller));
    for (; d->n < streams; d->n++) {
        GG_GPU_CHECK(cudaStreamCreateWithFlags(&d->s[d->n], cudaStreamNonBlocking));
        if (cudaEventCreateWithFlags(&d->done[d->n], cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaStreamDestroy(d->s[d->n]);
            return gpu_fail(err, err_len, "cudaEventCreateWithFlags", __FILE__, __LINE__,
                            "cannot create a stream event");
        }
        GG_GPU_CHECK(cudaStreamWaitEvent(d->s[d->n], d->start, 0));
    }
    return GG_OK;
}

/*
 * The dispatch loop of a grouped-GEMM library: walks the groups in order with the weight
 * pointer, launching each group with tiles on its stream (small groups round-robin on the
 * streams, each with its slice; large groups afterwards on the caller's stream with slice 0).
 * zero_len_ptr_skip skips an empty group before the weight pointer moves on, so every later
 * group reads the weights of the expert before it; shared_workspace_parallel hands every stream
 * slice 0.
 */
static enum gg_status dispatch_groups(const struct gg_problem *p, const gpu_grouped &P0,
                                      const struct gg_operands *o, struct dispatch *d,
                                      int large_pass, size_t slice, char *err, size_t err_len)
{
    int64_t threshold = gg_kopt_get(p, "threshold", FAMILY_THRESHOLD_DEFAULT), small = 0;
    int ptr_skip = gg_mutant_is(p, "zero_len_ptr_skip") && P0.op != GG_OP_GROUPED_WGRAD;
    int shared = gg_mutant_is(p, "shared_workspace_parallel");
    int64_t w_off = 0;
    for (int64_t g = 0; g < P0.groups; g++) {
        int64_t len = p->group_offs[g + 1] - p->group_offs[g];
        if (ptr_skip && len == 0)
            continue;
        gpu_grouped P = P0;
        P.g0 = g;
        P.ng = 1;
        P.b_off_fixed = w_off;
        w_off += P0.stride_b;
        int64_t tiles = gpu_group_tiles(P, g, p->group_offs);
        if (tiles == 0)
            continue;
        int is_small = len <= threshold;
        int64_t si = is_small ? small++ % d->n : 0;
        if (is_small == large_pass)
            continue;
        gpu_exec x = {0, 1, large_pass ? (cudaStream_t)o->stream : d->s[si]};
        void *ws = slice == 0 ? NULL : (uint8_t *)o->workspace + (shared ? 0 : si) * slice;
        enum gg_status st = gpu_run_list<uint16_t>(P, tiles, ws, x, err, err_len);
        if (st != GG_OK)
            return st;
    }
    return GG_OK;
}

GG_GPU_ENTRY enum gg_status streams_run(const struct gg_problem *p, const struct gg_operands *o,
                                  char *err, size_t err_len)
{
    if (!streams_supports(p, err, err_len))
        return GG_E_UNSUPPORTED;
    struct family_grouped_map m;
    enum gg_status st = gpu_grouped_check(p, o, &m, sizeof(uint16_t), err, err_len);
    if (st != GG_OK)
        return st;
    gpu_grouped P = gpu_grouped_of(p, o, &m);
    int64_t streams = gg_kopt_get(p, "streams", FAMILY_STREAMS_DEFAULT);
    size_t slice = stream_slice(P, p->group_offs);
    if ((st = family_check_workspace(o, slice > 0, reported_ws(p, (size_t)streams * slice),
                                     P.split, err, err_len)) != GG_OK)
        return st;
    struct dispatch d;
    memset(&d, 0, sizeof d);
    cudaStream_t caller = (cudaStream_t)o->stream;
    if ((st = dispatch_init(&d, streams, caller, err, err_len)) == GG_OK &&
        (st = dispatch_groups(p, P, o, &d, 0, slice, err, err_len)) == GG_OK) {
        for (int64_t i = 0; i < d.n && st == GG_OK; i++) {
            if (cudaEventRecord(d.done[i], d.s[i]) != cudaSuccess ||
                cudaStreamWaitEvent(caller, d.done[i], 0) != cudaSuccess)
                st = gpu_fail(err, err_len, "cudaStreamWaitEvent", __FILE__, __LINE__,
                              cudaGetErrorString(cudaGetLastError()));
        }
        if (st == GG_OK)
            st = dispatch_groups(p, P, o, &d, 1, slice, err, err_len);
    }
    dispatch_free(&d);
    return st;
}

#if !GG_GPU_DEVICE_PASS
extern "C" const struct gg_kernel gg_kernel_grouped_bf16_gpu_streams = {
    .abi_version = GG_KERNEL_ABI_VERSION,
    .name = GG_GPU_NAME("grouped_bf16", "streams"),
    .summary = "grouped fwd/dgrad/wgrad, bf16 in, fp32 tensor-core acc, bf16/f32 out; one launch "
               "per group, small groups over concurrent streams (options streams, threshold)",
    .backend = GG_GPU_BACKEND,
    .ops = GROUPED_OPS,
    .tile_m = GPU_BM,
    .tile_n = GPU_BN,
    .tile_k = GPU_BK,
    .mutants = streams_mutants,
    .supports = streams_supports,
    .workspace_bytes = streams_workspace_bytes,
    .run = streams_run,
};
#endif

/*
 * gg_kernel.h — the kernel ABI of ggfuzz.
 *
 * This is the only header a kernel author includes. It defines the vocabulary every part of
 * ggfuzz shares (status codes, dtypes, ops), the problem descriptor, the operand block and the
 * kernel descriptor. It includes nothing but the C standard library, so an out-of-tree kernel
 * (a plugin .so) builds against this file alone.
 *
 * Ownership: the harness owns every buffer it passes. A kernel never allocates or frees operand,
 * output or workspace memory, and must not keep pointers past the return of run().
 */
#ifndef GG_KERNEL_H
#define GG_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the layout or meaning of the structs below. */
#define GG_KERNEL_ABI_VERSION 3u

/* Harness and kernel failures (never numerical findings: those are verdicts). */
enum gg_status {
    GG_OK = 0,
    GG_E_INVAL = -1,       /* invalid argument or problem */
    GG_E_NOMEM = -2,       /* allocation failed or case does not fit in memory */
    GG_E_DEVICE = -3,      /* GPU runtime error */
    GG_E_UNSUPPORTED = -4, /* kernel does not support this problem */
    GG_E_IO = -5,          /* file system error */
    GG_E_ABI = -6,         /* plugin ABI mismatch or malformed kernel descriptor */
    GG_E_PARSE = -7,       /* malformed case file or option */
    GG_E_INTERNAL = -8     /* harness bug */
};

/*
 * Element types. 8-bit formats are stored one code per byte; E2M1 is stored two codes per byte,
 * element 2i in the low nibble and 2i+1 in the high nibble. E8M0 is the unsigned MX scale format.
 */
enum gg_dtype {
    GG_DTYPE_NONE = 0,
    GG_DTYPE_F64,
    GG_DTYPE_F32,
    GG_DTYPE_F16,
    GG_DTYPE_BF16,
    GG_DTYPE_E4M3,      /* OCP E4M3 ("e4m3fn"): bias 7, max 448, NaN 0x7F/0xFF, no Inf */
    GG_DTYPE_E5M2,      /* OCP E5M2: bias 15, max 57344, Inf and NaN */
    GG_DTYPE_E4M3FNUZ,  /* AMD e4m3fnuz: bias 8, max 240, NaN 0x80 only, no -0 */
    GG_DTYPE_E5M2FNUZ,  /* AMD e5m2fnuz: bias 16, max 57344, NaN 0x80 only, no -0 */
    GG_DTYPE_E2M1,      /* OCP MX FP4: max 6 */
    GG_DTYPE_E8M0,      /* OCP MX scale: 2^(x-127), 0xFF NaN, no zero, no sign */
    GG_DTYPE_COUNT
};

/* Operations. The operand roles per op are fixed (see struct gg_problem). */
enum gg_op {
    GG_OP_GROUPED_FWD = 0, /* Y_g = X_g · W_gᵀ  (NT) */
    GG_OP_GROUPED_DGRAD,   /* dX_g = dY_g · W_g (NN) */
    GG_OP_GROUPED_WGRAD,   /* dW_g = dY_gᵀ · X_g (TN, variable K = M_g; M_g = 0 gives dW_g = 0) */
    GG_OP_BATCHED,         /* C_b = A_b · B_bᵀ (B in [N,K]) or A_b · B_b (B in [K,N]) */
    GG_OP_DENSE,           /* C = A · Bᵀ, B in [N,K]; the small-M path */
    GG_OP_MOE_SORTED,      /* Y[v] = X[v / topk] · W_eᵀ for each valid sorted_ids entry v of a
                              block_m block whose expert is e (fused-MoE layout) */
    GG_OP_COUNT
};
#define GG_OP_BIT(op) (1u << (unsigned)(op))

/* How low-precision inputs are scaled: a recipe fixing the scale layout of both operands.
   Every scale multiplies decoded codes (it is a dequantisation factor, scale_inv = 1/s). */
enum gg_scaling {
    GG_SCALING_NONE = 0, /* a_scale and b_scale are NULL */
    GG_SCALING_TENSOR,   /* A: one fp32; B: one fp32 per matrix of B (per expert or batch) */
    GG_SCALING_MX,       /* A and B: one E8M0 code per 1x32 block along K */
    GG_SCALING_BLOCK128, /* A: fp32 per row and per 128 along K ("a8w8": per-token, per-128-K
                            group); B: one fp32 per matrix of B */
    GG_SCALING_MX_B,     /* A unscaled (a_scale NULL); B: one E8M0 code per 1x32 block along K
                            (weight-only MX, e.g. bf16 activations with e2m1 weights) */
    GG_SCALING_ROWWISE,  /* A: one fp32 per output row; B: one fp32 per output column of each
                            matrix of B (torch._scaled_mm / _scaled_grouped_mm rowwise) */
    GG_SCALING_BLOCKWISE /* A: fp32 per row and per 128 of the reduction (1x128); B: one fp32
                            per 128x128 block of each matrix of B (DeepSeek-V3 FP8 training) */
};

/* Layout of the B operand of a batched GEMM. */
enum gg_layout {
    GG_LAYOUT_NK = 0, /* B_b is [N, K] row-major: C = A · Bᵀ */
    GG_LAYOUT_KN      /* B_b is [K, N] row-major: C = A · B */
};

enum gg_backend { GG_BACKEND_CPU = 0, GG_BACKEND_CUDA, GG_BACKEND_HIP };

/* The MX block length along K, and the K group of GG_SCALING_BLOCK128 (also the side of the
   blocks of GG_SCALING_BLOCKWISE). */
#define GG_MX_BLOCK 32
#define GG_BLOCK128 128

/* A kernel option: a named integer (split_k, streams, ...). Unknown keys are ignored by kernels. */
struct gg_kopt {
    const char *key;
    int64_t value;
};

/*
 * The problem descriptor. All sizes, strides and offsets are int64_t and counted in elements.
 * Every matrix is row-major with the given leading dimension. When run() is called, leading
 * dimensions and strides are never 0: the harness has replaced zeros by the packed defaults.
 *
 * Operand roles and addressing, with g the group (or batch) index:
 *
 *   op            A (first input)              B (second input)             C (output)
 *   grouped fwd   X  [M,K]  a[m*lda + k]       W [G,N,K] b[g*sb + n*ldb + k]   Y  [M,N] c[m*ldc + n]
 *   grouped dgrad dY [M,N]  a[m*lda + n]       W [G,N,K] b[g*sb + n*ldb + k]   dX [M,K] c[m*ldc + k]
 *   grouped wgrad dY [M,N]  a[m*lda + n]       X [M,K]   b[m*ldb + k]          dW [G,N,K] c[g*sc + n*ldc + k]
 *   batched       A [B,M,K] a[g*sa + m*lda + k] B NK: b[g*sb + n*ldb + k]       C [B,M,N] c[g*sc + m*ldc + n]
 *                                              B KN: b[g*sb + k*ldb + n]
 *   dense         A [M,K]   a[m*lda + k]       B [N,K]   b[n*ldb + k]          C [M,N] c[m*ldc + n]
 *   moe sorted    X [T,K]   a[t*lda + k]       W [E,N,K] b[e*sb + n*ldb + k]   Y [T*topk,N] c[v*ldc + n]
 *
 * (sa, sb, sc are stride_a, stride_b, stride_c.) For grouped ops M is the total row count
 * group_offs[groups] and group g owns rows group_offs[g] .. group_offs[g+1]-1.
 *
 * MoE sorted (fused-MoE layout of vLLM/aiter): m = T tokens, groups = E experts. sorted_ids has
 * sorted_len = (number of blocks)·block_m int32 entries; each block of block_m entries belongs to
 * expert expert_ids[block]. An entry v < T·topk is a (token, slot) pair: output row v of Y gets
 * X[v / topk] · W_eᵀ. An entry v ≥ T·topk is padding and must be skipped. group_lens[e] counts
 * the valid entries of expert e (its blocks are contiguous, padding at their end).
 *
 * Scales, all packed, by recipe (only ops whose reduction is along K may use MX, MX_B and
 * BLOCK128: grouped fwd, batched NK, dense, moe sorted):
 *   TENSOR    a_scale float[1];  b_scale float[mats]
 *   MX        a_scale e8m0[rows of A][K/32];  b_scale e8m0[mats][N][K/32]
 *   BLOCK128  a_scale float[rows of A][ceil(K/128)];  b_scale float[mats]
 *   MX_B      a_scale NULL;  b_scale e8m0[mats][N][K/32]
 * where mats is the number of matrices of B (groups for grouped fwd/dgrad, batched and moe; 1 for
 * wgrad and dense) and the rows of A count across batches (batch b, row r is row b·m + r).
 *
 * ROWWISE (every op): one fp32 per output row from A and one per output column from B, so each
 * scale is constant along the reduction and factors out of it: C[i][j] = sa[i]·sb[j]·Σ codes.
 *   grouped fwd   a_scale float[M] (per row of X);    b_scale float[G][N] (per (g, n) of W)
 *   grouped dgrad a_scale float[M] (per row of dY);   b_scale float[G][K] (per (g, k), a column
 *                                                     of W_g [N,K]: the output columns are k)
 *   grouped wgrad a_scale float[G][N] (per (g, n): column n of dY_g, an output row of dW_g);
 *                 b_scale float[G][K] (per (g, k): column k of X_g, an output column of dW_g);
 *                 torch._scaled_grouped_mm's 2d x 2d layout (scale_a [G·N], scale_b [G·K])
 *   batched       a_scale float[B·M] (rows of A across batches); b_scale float[B][N] (NK: per
 *                 row n of B_b; KN: per column n)
 *   dense         a_scale float[M];  b_scale float[N]
 *   moe sorted    a_scale float[T] (per token, a row of X);  b_scale float[E][N]
 * BLOCKWISE (ops whose reduction is along K, and grouped dgrad; not wgrad, not batched KN): A
 * 1x128 along the reduction, B 128x128 over each matrix as stored, ceil for tails:
 *   fwd, batched NK, dense, moe sorted
 *                 a_scale float[rows of A][ceil(K/128)];
 *                 b_scale float[mats][ceil(N/128)][ceil(K/128)], block (n/128, k/128)
 *   grouped dgrad a_scale float[M][ceil(N/128)] (per row of dY and per 128 of its N);
 *                 b_scale float[G][ceil(N/128)][ceil(K/128)], the blocks of W_g [N,K] as
 *                 stored, read transposed: element (n, k) of W_g takes block (n/128, k/128)
 *   Wgrad reduces along the ragged M, which neither operand's blocks follow: refused.
 *
 * Bias (bias_dtype != GG_DTYPE_NONE; grouped fwd, batched, dense, moe): bias[mats][N], added to
 * the fp32 accumulator before the output rounding. A NULL bias (bias_dtype NONE) is legal.
 */
struct gg_problem {
    enum gg_op op;
    enum gg_dtype a_dtype, b_dtype, c_dtype; /* element types of A, B and C */
    enum gg_dtype acc_dtype;                 /* accumulator the kernel must use (GG_DTYPE_F32) */
    enum gg_scaling scaling;
    enum gg_layout b_layout; /* batched only; GG_LAYOUT_NK otherwise */
    int64_t groups;          /* G for grouped ops, batch count for batched, 1 for dense */
    int64_t m;               /* grouped: group_offs[groups]; batched: rows per batch; dense: M */
    int64_t n, k;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c; /* per group/batch strides where the table uses them */
    /* Host arrays of length groups and groups+1 (grouped ops only; NULL otherwise).
       group_offs is the exclusive prefix sum of group_lens. Owned by the harness. */
    const int64_t *group_lens;
    const int64_t *group_offs;
    enum gg_dtype bias_dtype; /* GG_DTYPE_NONE: no bias */
    /* MoE sorted only (0/NULL otherwise); host arrays owned by the harness. */
    int64_t topk, block_m, sorted_len;
    const int32_t *sorted_ids; /* sorted_len entries */
    const int32_t *expert_ids; /* sorted_len / block_m entries */
    const struct gg_kopt *opts; /* kernel options, n_opts entries; may be NULL */
    int n_opts;
    /* The mutants to run, or NULL for the correct kernel: one of the kernel's mutant names, or
       several as a comma-separated list without spaces ("a,b": the kernel carries every fault
       listed at once). The harness passes only lists whose items are each one of the kernel's
       mutants, once. Test an item with gg_mutant_is(), never with strcmp(). Lists came without
       an ABI version change: a single name is a one-item list, and a plugin built before them
       compares the whole string, so under a list of two or more it matches none of its mutants
       and runs correct. That is accepted: the run is judged as the correct kernel's, its faults
       go unexercised, and rebuilding the plugin against this header gives it lists. */
    const char *mutant;
};

/*
 * Operand block for run(). Pointers are host pointers for GG_BACKEND_CPU kernels and device
 * pointers for GPU kernels (except the *_host arrays). All are owned by the harness.
 * a_scale, b_scale: NULL when scaling == GG_SCALING_NONE.
 * workspace: NULL when workspace_bytes() returned 0; otherwise exactly that many bytes, filled
 * with a poison pattern the kernel must not depend on.
 * group_lens_dev/group_offs_dev, sorted_ids_dev/expert_ids_dev: the same arrays as in the
 * problem, in the kernel's memory space (for CPU kernels a separate host copy); NULL when the op
 * has none.
 * bias: NULL when p->bias_dtype is GG_DTYPE_NONE.
 * stream: cudaStream_t / hipStream_t for GPU kernels, NULL for CPU kernels.
 */
struct gg_operands {
    const void *a, *b;
    void *c;
    const void *a_scale, *b_scale;
    const void *bias;
    void *workspace;
    size_t workspace_bytes;
    const int64_t *group_lens_dev;
    const int64_t *group_offs_dev;
    const int32_t *sorted_ids_dev;
    const int32_t *expert_ids_dev;
    void *stream;
};

/*
 * A kernel descriptor. Required slots: name, run, supports. Optional slots say so.
 * Names follow <family>_<types>_<backend>_<variant>, e.g. grouped_bf16_cpu_tiled.
 */
struct gg_kernel {
    uint32_t abi_version; /* GG_KERNEL_ABI_VERSION the kernel was built against */
    const char *name;
    const char *summary;  /* (optional) one line for `ggfuzz list` */
    enum gg_backend backend;
    uint32_t ops;                /* GG_OP_BIT() mask of supported ops */
    int64_t tile_m, tile_n, tile_k; /* output tile and K step; 0 when not tiled */
    const char *const *mutants;  /* (optional) NULL-terminated list of mutant names: each
                                    non-empty, without ',' (the list separator of p->mutant) */
    /* Returns 1 when the kernel computes p correctly, else 0 and a reason in why. */
    int (*supports)(const struct gg_problem *p, char *why, size_t why_len);
    /* (optional) Workspace bytes the kernel needs for p; NULL means none. */
    size_t (*workspace_bytes)(const struct gg_problem *p);
    /* Runs p. Returns GG_OK, or a status and a message in err for a failure of the kernel's
       own machinery (never for numerically wrong output: the harness judges that). */
    enum gg_status (*run)(const struct gg_problem *p, const struct gg_operands *o, char *err,
                          size_t err_len);
};

/* The value of option key in p, or dflt when absent. */
static inline int64_t gg_kopt_get(const struct gg_problem *p, const char *key, int64_t dflt)
{
    for (int i = 0; p->opts && i < p->n_opts; i++)
        if (p->opts[i].key && strcmp(p->opts[i].key, key) == 0)
            return p->opts[i].value;
    return dflt;
}

/* True when name is one item of p's mutant list: the whole item ("a" is not in "ab,c"). */
static inline int gg_mutant_is(const struct gg_problem *p, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = p->mutant; s != NULL;) {
        size_t len = strcspn(s, ",");
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s = s[len] == ',' ? s + len + 1 : NULL;
    }
    return 0;
}

/*
 * Checks a mutant list (the form of gg_problem.mutant) against a kernel's NULL-terminated
 * mutants (NULL: none). Returns 1 when every item is one of them and none repeats; else 0 with
 * a reason in why (when why_len > 0) that names the item and the kernel (kernel: its name, or
 * NULL for "this kernel").
 */
static inline int gg_mutant_list_check(const char *list, const char *const *mutants,
                                       const char *kernel, char *why, size_t why_len)
{
    const char *pre = kernel != NULL ? "kernel " : "";
    const char *kname = kernel != NULL ? kernel : "this kernel";
    int item = 1;
    for (const char *s = list;; item++) {
        size_t len = strcspn(s, ",");
        int known = 0, seen = 0;
        for (const char *const *m = mutants; m != NULL && *m != NULL && !known; m++)
            known = strlen(*m) == len && strncmp(*m, s, len) == 0;
        for (const char *t = list; t < s && !seen; t += strcspn(t, ",") + 1)
            seen = strcspn(t, ",") == len && strncmp(t, s, len) == 0;
        if (len == 0 || seen || !known) {
            if (why == NULL || why_len == 0)
                return 0;
            if (len == 0)
                snprintf(why, why_len, "%s%s: mutant list '%s': item %d is empty", pre, kname,
                         list, item);
            else if (seen)
                snprintf(why, why_len, "%s%s: mutant list '%s': '%.*s' appears twice", pre,
                         kname, list, (int)len, s);
            else
                snprintf(why, why_len, "%s%s has no mutant '%.*s'", pre, kname, (int)len, s);
            return 0;
        }
        if (s[len] == '\0')
            return 1;
        s += len + 1;
    }
}

/*
 * Plugins. A plugin is a shared object built against this header alone. It exports:
 *
 *   const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;
 *   enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len);
 *
 * ggfuzz reads gg_plugin_abi_version first and refuses the plugin without calling anything when
 * it differs from its own. gg_plugin_register then calls host->add_kernel once per kernel; each
 * descriptor (and everything it points to) must stay valid until the process exits. The host
 * validates each descriptor (ABI version, required slots) and may refuse it with a status.
 * Returning a status other than GG_OK (with a message in err) refuses the whole plugin.
 */
#define GG_PLUGIN_ABI_SYMBOL "gg_plugin_abi_version"
#define GG_PLUGIN_REGISTER_SYMBOL "gg_plugin_register"

struct gg_plugin_host {
    uint32_t abi_version; /* GG_KERNEL_ABI_VERSION of the host */
    void *ctx;            /* pass back to add_kernel */
    enum gg_status (*add_kernel)(void *ctx, const struct gg_kernel *k, char *err, size_t err_len);
};
typedef enum gg_status (*gg_plugin_register_fn)(const struct gg_plugin_host *host, char *err,
                                                size_t err_len);

/* The two symbols a plugin defines (declared here so a plugin builds with -Wmissing-prototypes). */
extern const uint32_t gg_plugin_abi_version;
enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif /* GG_KERNEL_H */

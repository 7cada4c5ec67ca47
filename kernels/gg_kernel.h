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
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the layout or meaning of the structs below. */
#define GG_KERNEL_ABI_VERSION 1u

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
    GG_OP_COUNT
};
#define GG_OP_BIT(op) (1u << (unsigned)(op))

/* How low-precision inputs are scaled. */
enum gg_scaling {
    GG_SCALING_NONE = 0, /* a_scale and b_scale are NULL */
    GG_SCALING_TENSOR,   /* one fp32 dequantisation factor (scale_inv = 1/s) per operand */
    GG_SCALING_MX        /* one E8M0 code per 1x32 block along the reduction dimension */
};

/* Layout of the B operand of a batched GEMM. */
enum gg_layout {
    GG_LAYOUT_NK = 0, /* B_b is [N, K] row-major: C = A · Bᵀ */
    GG_LAYOUT_KN      /* B_b is [K, N] row-major: C = A · B */
};

enum gg_backend { GG_BACKEND_CPU = 0, GG_BACKEND_CUDA, GG_BACKEND_HIP };

/* The MX block length along the reduction dimension. */
#define GG_MX_BLOCK 32

/* A kernel option: a named integer (split_k, streams, ...). Unknown keys are ignored by kernels. */
struct gg_kopt {
    const char *key;
    int64_t value;
};

/*
 * The problem descriptor. All sizes, strides and offsets are int64_t and counted in elements.
 * Every matrix is row-major with the given leading dimension.
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
 *
 * (sa, sb, sc are stride_a, stride_b, stride_c.) For grouped ops M is the total row count
 * group_offs[groups] and group g owns rows group_offs[g] .. group_offs[g+1]-1.
 *
 * Scales (scaling == GG_SCALING_MX; only ops whose reduction dimension is K: fwd, batched NK,
 * dense): a_scale is E8M0 [rows of A, K/32] and b_scale is E8M0 [groups][N][K/32], both packed.
 * With GG_SCALING_TENSOR each of a_scale and b_scale points to one float: the factor that
 * multiplies decoded codes (scale_inv).
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
    const struct gg_kopt *opts; /* kernel options, n_opts entries; may be NULL */
    int n_opts;
    const char *mutant; /* name of the mutant to run, or NULL for the correct kernel */
};

/*
 * Operand block for run(). Pointers are host pointers for GG_BACKEND_CPU kernels and device
 * pointers for GPU kernels (except the *_host arrays). All are owned by the harness.
 * a_scale, b_scale: NULL when scaling == GG_SCALING_NONE.
 * workspace: NULL when workspace_bytes() returned 0; otherwise exactly that many bytes, filled
 * with a poison pattern the kernel must not depend on.
 * group_lens_dev/group_offs_dev: the same arrays in the kernel's memory space (for CPU kernels,
 * a separate host copy); NULL for ungrouped ops.
 * stream: cudaStream_t / hipStream_t for GPU kernels, NULL for CPU kernels.
 */
struct gg_operands {
    const void *a, *b;
    void *c;
    const void *a_scale, *b_scale;
    void *workspace;
    size_t workspace_bytes;
    const int64_t *group_lens_dev;
    const int64_t *group_offs_dev;
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
    const char *const *mutants;  /* (optional) NULL-terminated list of mutant names */
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

/* True when p asks for mutant name. */
static inline int gg_mutant_is(const struct gg_problem *p, const char *name)
{
    return p->mutant != NULL && strcmp(p->mutant, name) == 0;
}

/* In-tree kernels, in a fixed order; *count receives their number. The table is static. */
const struct gg_kernel *const *gg_kernels_builtin(size_t *count);

#ifdef __cplusplus
}
#endif
#endif /* GG_KERNEL_H */

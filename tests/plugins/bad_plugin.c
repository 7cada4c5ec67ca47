/*
 * bad_plugin.c — test-only plugins, each breaking the plugin contract of gg_kernel.h in one way.
 * tests/CMakeLists.txt builds it once per variant with BAD_<VARIANT> defined; ggfuzz must refuse
 * every variant with a message naming the problem and leave its registry as it was, except
 * run_error, a valid plugin whose kernel fails every run (a campaign logs those failures), and
 * crash_run, a valid plugin whose kernel kills its process with a signal (BAD_PLUGIN_SIGNAL, default
 * SIGSEGV) on every run, or, when BAD_PLUGIN_CRASH_ONCE names a file, only while that file does not
 * exist (it creates it, so the next run writes zeros: a crash that does not reproduce).
 * crash_supports is a valid plugin whose kernel (a correct bf16 grouped forward GEMM with fp32
 * output) dies in supports() (BAD_PLUGIN_SIGNAL, default SIGSEGV) on every problem whose N is
 * not 64 (the generator's capability probe asks only about N = K = 64, the cases it draws
 * seldom), or on every problem when BAD_PLUGIN_SUPPORTS_ALWAYS is set.
 * segv_register, hang_register and exit_register crash, hang or exit in gg_plugin_register;
 * segv_init crashes in an initialiser, when the object is loaded.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gg_kernel.h"

/* Variants that never reach add_kernel leave the helpers below unused. */
#define MAYBE_UNUSED __attribute__((unused))

MAYBE_UNUSED static int any_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    (void)p, (void)why, (void)why_len;
    return 1;
}

MAYBE_UNUSED static enum gg_status never_run(const struct gg_problem *p,
                                             const struct gg_operands *o, char *err,
                                             size_t err_len)
{
    (void)p, (void)o;
    snprintf(err, err_len, "kernels of a refused plugin never run");
    return GG_E_INTERNAL;
}

/* A kernel that registers fine and fails every launch, as a kernel asking for more shared memory
   than the device has would. */
MAYBE_UNUSED static enum gg_status run_error(const struct gg_problem *p,
                                             const struct gg_operands *o, char *err,
                                             size_t err_len)
{
    (void)p, (void)o;
    snprintf(err, err_len, "cudaLaunchKernel: too many resources requested for launch");
    return GG_E_DEVICE;
}

MAYBE_UNUSED static int f32_fwd_only(const struct gg_problem *p, char *why, size_t why_len)
{
    if (p->op == GG_OP_GROUPED_FWD && p->c_dtype == GG_DTYPE_F32)
        return 1;
    snprintf(why, why_len, "grouped_fwd with f32 output only");
    return 0;
}

/* Dies as the environment says (see the top of the file), else writes zeros to C. */
MAYBE_UNUSED static enum gg_status crash_run(const struct gg_problem *p,
                                             const struct gg_operands *o, char *err,
                                             size_t err_len)
{
    (void)err, (void)err_len;
    const char *sig = getenv("BAD_PLUGIN_SIGNAL");
    const char *once = getenv("BAD_PLUGIN_CRASH_ONCE");
    if (once == NULL || access(once, F_OK) != 0) {
        FILE *f = once ? fopen(once, "w") : NULL;
        if (f)
            fclose(f);
        raise(sig ? atoi(sig) : SIGSEGV);
    }
    for (int64_t m = 0; m < p->m; m++)
        memset((float *)o->c + m * p->ldc, 0, (size_t)p->n * sizeof(float));
    return GG_OK;
}

MAYBE_UNUSED static int crash_supports(const struct gg_problem *p, char *why, size_t why_len)
{
    const char *sig = getenv("BAD_PLUGIN_SIGNAL");
    if (getenv("BAD_PLUGIN_SUPPORTS_ALWAYS") != NULL || p->n != 64)
        raise(sig ? atoi(sig) : SIGSEGV);
    if (p->op == GG_OP_GROUPED_FWD && p->a_dtype == GG_DTYPE_BF16 &&
        p->b_dtype == GG_DTYPE_BF16 && p->c_dtype == GG_DTYPE_F32 &&
        p->scaling == GG_SCALING_NONE && p->bias_dtype == GG_DTYPE_NONE)
        return 1;
    snprintf(why, why_len, "grouped_fwd bf16 x bf16 -> f32 only");
    return 0;
}

MAYBE_UNUSED static float bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Y_g = X_g · W_gᵀ, bf16 inputs, fp32 accumulation and output. */
MAYBE_UNUSED static enum gg_status naive_fwd(const struct gg_problem *p,
                                             const struct gg_operands *o, char *err,
                                             size_t err_len)
{
    (void)err, (void)err_len;
    const uint16_t *a = o->a, *b = o->b;
    float *c = o->c;
    for (int64_t g = 0; g < p->groups; g++)
        for (int64_t m = p->group_offs[g]; m < p->group_offs[g + 1]; m++)
            for (int64_t n = 0; n < p->n; n++) {
                float acc = 0;
                for (int64_t k = 0; k < p->k; k++)
                    acc += bf16_value(a[m * p->lda + k]) *
                           bf16_value(b[g * p->stride_b + n * p->ldb + k]);
                c[m * p->ldc + n] = acc;
            }
    return GG_OK;
}

#define ABI GG_KERNEL_ABI_VERSION
#define KERNEL(name_, abi_, supports_, run_)                                                      \
    {.abi_version = (abi_), .name = (name_), .backend = GG_BACKEND_CPU,                           \
     .ops = GG_OP_BIT(GG_OP_GROUPED_FWD), .supports = (supports_), .run = (run_)}

/* The descriptors each variant hands to add_kernel, in order. */
MAYBE_UNUSED static const struct gg_kernel kernels[] = {
#if defined(BAD_NULL_RUN)
    KERNEL("bad_null_run", ABI, any_supports, NULL),
#elif defined(BAD_KERNEL_ABI)
    KERNEL("bad_kernel_abi", ABI - 1, any_supports, never_run),
#elif defined(BAD_IGNORES_REFUSAL)
    KERNEL("bad_no_supports", ABI, NULL, never_run),
#elif defined(BAD_PARTIAL)
    /* A valid kernel, then one that takes the name of the in-tree kernel. */
    KERNEL("bad_partial_first", ABI, any_supports, never_run),
    KERNEL("grouped_bf16_cpu_tiled", ABI, any_supports, never_run),
#elif defined(BAD_RUN_ERROR)
    KERNEL("bad_run_error", ABI, any_supports, run_error),
#elif defined(BAD_CRASH_RUN)
    KERNEL("bad_crash_run", ABI, f32_fwd_only, crash_run),
#elif defined(BAD_CRASH_SUPPORTS)
    KERNEL("bad_crash_supports", ABI, crash_supports, naive_fwd),
#else
    KERNEL("bad_plugin_kernel", ABI, any_supports, never_run),
#endif
};

#if defined(BAD_ABI_VERSION)
const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION - 1;
#elif !defined(BAD_NO_ABI_SYMBOL)
const uint32_t gg_plugin_abi_version = GG_KERNEL_ABI_VERSION;
#endif

#if defined(BAD_SEGV_INIT)
__attribute__((constructor)) static void crash_on_load(void)
{
    raise(SIGSEGV);
}
#endif

#if !defined(BAD_NO_REGISTER)
enum gg_status gg_plugin_register(const struct gg_plugin_host *host, char *err, size_t err_len)
{
#if defined(BAD_SEGV_REGISTER)
    (void)host, (void)err, (void)err_len;
    raise(SIGSEGV);
    return GG_OK;
#elif defined(BAD_HANG_REGISTER)
    (void)host, (void)err, (void)err_len;
    for (;;)
        pause();
#elif defined(BAD_EXIT_REGISTER)
    (void)host, (void)err, (void)err_len;
    exit(0);
#elif defined(BAD_ABI_VERSION)
    /* The host must refuse this plugin before calling it: if it does not, the test dies here. */
    (void)host, (void)err, (void)err_len;
    abort();
#elif defined(BAD_REGISTER_ERROR)
    (void)host;
    snprintf(err, err_len, "no licence for this kernel");
    return GG_E_UNSUPPORTED;
#elif defined(BAD_NO_KERNEL)
    (void)host, (void)err, (void)err_len;
    return GG_OK;
#else
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        enum gg_status st = host->add_kernel(host->ctx, &kernels[i], err, err_len);
#if !defined(BAD_IGNORES_REFUSAL)
        if (st != GG_OK)
            return st;
#endif
        (void)st;
    }
    return GG_OK;
#endif
}
#endif

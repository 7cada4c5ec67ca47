/*
 * kernel_fixture.h — what every kernel test needs around a run: the registered kernel by name,
 * allocations that fail the test when memory runs out (a sparse reservation for operands past
 * 4 GiB), the output sentinel (a NaN no correct kernel writes) and the scan for writes outside
 * the logical output, a workspace of exactly the reported size followed by a guard band, the
 * error bound of an fp32-accumulated dot product, and supports() expectations.
 */
#ifndef KERNEL_FIXTURE_H
#define KERNEL_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernels/gg_kernel.h"
#include "kernels/builtin/gg_builtin.h"

#define GUARD_ELEMS 64         /* sentinel elements after the last output element */
#define WS_GUARD_BYTES 8192    /* bytes after the reported workspace that must stay intact */
#define WS_GUARD_BYTE 0xA7u
#define SENTINEL_BF16 0x7FA5u  /* a NaN no correct kernel writes */
#define SENTINEL_F32 0x7FA5A5A5u

/* The built-in kernel called name; the test fails when there is none. */
static inline const struct gg_kernel *kernel_named(const char *name)
{
    size_t count = 0;
    const struct gg_kernel *const *list = gg_kernels_builtin(&count);
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    cr_assert_fail("kernel %s is not registered", name);
    return NULL;
}

/* n zeroed elements of size bytes (at least one, so that empty operands are not NULL). */
static inline void *xcalloc(int64_t n, size_t size)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    cr_assert_not_null(p);
    return p;
}

/* An anonymous reservation of bytes: pages read as zero and take memory only once written, so
   that operands past 2^32 bytes cost what the test touches. Release with munmap. */
static inline void *reserve_sparse(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    cr_assert_neq(p, MAP_FAILED, "cannot reserve %zu bytes", bytes);
    return p;
}

/* ---- the output and its sentinel --------------------------------------------------------- */

/* Bytes of one element of a bf16 or f32 output. */
static inline size_t out_elem_bytes(enum gg_dtype dt)
{
    return dt == GG_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
}

static inline void fill_sentinel(void *c, enum gg_dtype dt, int64_t len)
{
    uint32_t s = SENTINEL_F32;
    for (int64_t i = 0; i < len; i++) {
        if (dt == GG_DTYPE_BF16)
            ((uint16_t *)c)[i] = SENTINEL_BF16;
        else
            memcpy((float *)c + i, &s, sizeof s);
    }
}

static inline int is_sentinel(const void *c, enum gg_dtype dt, int64_t i)
{
    if (dt == GG_DTYPE_BF16)
        return ((const uint16_t *)c)[i] == SENTINEL_BF16;
    uint32_t u;
    memcpy(&u, (const float *)c + i, sizeof u);
    return u == SENTINEL_F32;
}

/* The bits of element i of a bf16 or f32 output. */
static inline uint32_t out_bits(const void *c, enum gg_dtype dt, int64_t i)
{
    if (dt == GG_DTYPE_BF16)
        return ((const uint16_t *)c)[i];
    uint32_t u;
    memcpy(&u, (const float *)c + i, sizeof u);
    return u;
}

/* The value of element i of a bf16 or f32 output (bf16 is the top half of an f32). */
static inline double out_value(const void *c, enum gg_dtype dt, int64_t i)
{
    uint32_t u = dt == GG_DTYPE_BF16 ? out_bits(c, dt, i) << 16 : out_bits(c, dt, i);
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* The elements of C (len of them) outside the logical output (logical[i] == 0) that no longer
   hold the sentinel; *first is the first of them, or -1. */
static inline int64_t stray_writes(const void *c, enum gg_dtype dt, int64_t len,
                                   const char *logical, int64_t *first)
{
    int64_t n = 0;
    *first = -1;
    for (int64_t i = 0; i < len; i++)
        if (!logical[i] && !is_sentinel(c, dt, i) && n++ == 0)
            *first = i;
    return n;
}

/* ---- the workspace ------------------------------------------------------------------------ */

/* Fills the workspace (bytes, as reported) with byte poison and its guard band with
   WS_GUARD_BYTE: the state before every run. */
static inline void ws_poison(unsigned char *ws, size_t bytes, unsigned char poison)
{
    if (ws == NULL)
        return;
    memset(ws, poison, bytes);
    memset(ws + bytes, WS_GUARD_BYTE, WS_GUARD_BYTES);
}

/* A workspace of exactly bytes followed by the guard band, poisoned; NULL when bytes is 0
   (a kernel without workspace gets none). */
static inline unsigned char *ws_alloc(size_t bytes, unsigned char poison)
{
    if (bytes == 0)
        return NULL;
    unsigned char *ws = malloc(bytes + WS_GUARD_BYTES);
    cr_assert_not_null(ws);
    ws_poison(ws, bytes, poison);
    return ws;
}

/* Bytes of the guard band after the reported workspace that were overwritten. */
static inline int64_t ws_guard_hits(const unsigned char *ws, size_t bytes)
{
    int64_t hits = 0;
    for (size_t i = 0; ws != NULL && i < WS_GUARD_BYTES; i++)
        hits += ws[bytes + i] != WS_GUARD_BYTE;
    return hits;
}

/* ---- the error bound ---------------------------------------------------------------------- */

/*
 * Whether out (rounded to c_dt) agrees with the exact ref whose Σ|ab| is ref_abs, for a sum of
 * h fp32 roundings:
 *   |out - ref| <= u_o/(1-u_o)·|out| + γ_h(2^-23)·ref_abs + tiny,  γ_h(u) = h·u / (1 - h·u),
 * u_o = 2^-8 (bf16) or 2^-24 (f32) the rounding of the output; exact: RN_fp32(ref) bit for bit.
 * A NaN on either side must be a NaN on both.
 */
static inline int within_fp32_bound(enum gg_dtype c_dt, double out, double ref, double ref_abs,
                                    int64_t h, double tiny, int exact)
{
    if (isnan(ref) || isnan(out))
        return isnan(ref) && isnan(out);
    if (exact)
        return (float)ref == (float)out;
    double u_o = c_dt == GG_DTYPE_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -24);
    double g = (double)h * ldexp(1.0, -23);
    return fabs(out - ref) <= u_o / (1 - u_o) * fabs(out) + g / (1 - g) * ref_abs + tiny;
}

/* ---- supports() ----------------------------------------------------------------------------- */

/* k refuses p with a reason that mentions needle. */
static inline void expect_refused(const struct gg_kernel *k, struct gg_problem p,
                                  const char *needle)
{
    char why[256] = "";
    cr_expect_eq(k->supports(&p, why, sizeof why), 0, "%s accepted, expected '%s'", k->name,
                 needle);
    cr_expect_neq(why[0], '\0', "%s: no reason given", k->name);
    cr_expect_not_null(strstr(why, needle), "%s: reason '%s' does not mention '%s'", k->name,
                       why, needle);
}

/* k accepts p (what names p in the failure message). */
static inline void expect_accepted(const struct gg_kernel *k, struct gg_problem p,
                                   const char *what)
{
    char why[256] = "";
    cr_expect_eq(k->supports(&p, why, sizeof why), 1, "%s refused %s: %s", k->name, what, why);
}

/* What every kernel does with p, a problem it takes: accepts p and p under each of its own
   mutants; refuses, naming the field, an f16 output, an f16 accumulator and an unknown mutant. */
static inline void expect_common_supports(const struct gg_kernel *k, struct gg_problem p)
{
    struct gg_problem q;
    expect_accepted(k, p, "the base problem");
    for (int i = 0; k->mutants != NULL && k->mutants[i] != NULL; i++) {
        q = p, q.mutant = k->mutants[i];
        expect_accepted(k, q, k->mutants[i]);
    }
    q = p, q.c_dtype = GG_DTYPE_F16, expect_refused(k, q, "output");
    q = p, q.acc_dtype = GG_DTYPE_F16, expect_refused(k, q, "accumulator");
    q = p, q.mutant = "no_such_mutant", expect_refused(k, q, "no_such_mutant");
}

#endif /* KERNEL_FIXTURE_H */

/*
 * gg_oracle_snr.c — the element-level mathematics of the oracles: the SNR in dB, the per-element
 * error bound τ of docs/checks.md §3, and the NaN sentinel every output is pre-filled with
 * (with the element reader that recognises it).
 */
#include <math.h>
#include <string.h>

#include "oracles/gg_oracle_int.h"

double gg_oracle_snr_db(double sig, double err)
{
    if (err == 0.0)
        return INFINITY;
    if (sig == 0.0)
        return -INFINITY;
    return 10.0 * log10(sig / err);
}

/* γ_h(u) = h·u / (1 - h·u) (Higham, Lemma 3.1); +inf once h·u reaches 1. */
static double gamma_h(int64_t h, double u)
{
    double hu = (double)(h > 0 ? h : 0) * u;
    return hu >= 1.0 ? INFINITY : hu / (1.0 - hu);
}

/*
 * τ = u_o/(1-u_o)·|out| + g·Σ|ab| + η_o with g = κ for rows that carry an empirical κ (fp8
 * accumulators) and g = γ_h(u_acc) otherwise. The first term covers the final rounding to the
 * output format (|out - ĉ| ≤ u_o/(1-u_o)·|out|), the second the accumulation along any summation
 * tree of depth ≤ h, the third underflow. Σ|ab| = 0 means every product is zero, so the middle
 * term is 0 even when γ is infinite.
 */
/*
 * Besides the relative terms, each of the h + 2 fp32 operations of an output (h accumulations,
 * a scale and a bias) may underflow: an absolute error of at most half the smallest fp32
 * subnormal each, 2^-150 (this matters for tiny data and for E8M0 scales near 2^-127).
 */
void gg_oracle_bound_factors(const struct gg_threshold *t, int64_t h, struct gg_bound_factors *f)
{
    f->rel = t->u_out / (1.0 - t->u_out);
    f->acc = t->kappa > 0.0 ? t->kappa : gamma_h(h, t->u_acc);
    f->eta = t->eta_out;
    f->under = (double)(h + 2) * 0x1p-150;
}

double gg_oracle_bound(const struct gg_threshold *t, double out, double abs, int64_t h)
{
    struct gg_bound_factors f;
    gg_oracle_bound_factors(t, h, &f);
    return gg_oracle_bound_with(&f, out, abs);
}

/*
 * Sentinels are signalling NaNs with a non-zero payload. No computed value can equal them:
 * arithmetic on a NaN returns a quiet NaN and the default NaN of x86 and GPUs is the canonical
 * one (f32 0x7FC00000/0xFFC00000, bf16 0x7FC0/0xFFC0, f16 0x7E00, f64 0x7FF8...). So an element
 * matches only when nobody stored to it, and a kernel that reads C and updates it leaves the
 * quieted pattern (0x7FE5A5A5 for f32): still a NaN, hence still caught, as a NaN mismatch.
 *   f32 0x7FA5A5A5, bf16 0x7FA5, f16 0x7D5A, f64 0x7FF5A5A5 in both 32-bit halves
 *   (0x7FF5A5A57FF5A5A5: gg_oracle_sentinel returns one half).
 * 8-bit formats use a NaN code: E4M3 0x7F (its only NaN, so it cannot tell a computed NaN from an
 * unwritten element), E5M2 0x7D (the signalling NaN), fnuz 0x80, E8M0 0xFF. E2M1 has no NaN:
 * its sentinel 0xF (-6) is a value a kernel may write, so E2M1 outputs cannot show unwritten
 * elements.
 */
uint32_t gg_oracle_sentinel(enum gg_dtype t)
{
    switch (t) {
    case GG_DTYPE_F64: return 0x7FF5A5A5u;
    case GG_DTYPE_F32: return 0x7FA5A5A5u;
    case GG_DTYPE_F16: return 0x7D5Au;
    case GG_DTYPE_BF16: return 0x7FA5u;
    case GG_DTYPE_E4M3: return 0x7Fu;
    case GG_DTYPE_E5M2: return 0x7Du;
    case GG_DTYPE_E4M3FNUZ:
    case GG_DTYPE_E5M2FNUZ: return 0x80u;
    case GG_DTYPE_E2M1: return 0xFu;
    case GG_DTYPE_E8M0: return 0xFFu;
    default: return 0u;
    }
}

int gg_oracle_out_load(enum gg_dtype t, const void *c, int64_t i, double *value)
{
    uint32_t s = gg_oracle_sentinel(t);
    if (t == GG_DTYPE_F64) {
        uint64_t bits;
        memcpy(&bits, (const unsigned char *)c + 8 * i, sizeof bits);
        if (bits == ((uint64_t)s << 32 | s))
            return 1;
        memcpy(value, &bits, sizeof bits);
        return 0;
    }
    uint32_t code = gg_load_code(t, c, i);
    if (code == s)
        return 1;
    *value = gg_decode(t, code);
    return 0;
}

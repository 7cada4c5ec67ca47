/*
 * gg_threshold.c — the versioned threshold table (GG_THRESHOLDS_VERSION): for each kind of input
 * and output format, the SNR fail levels and the constants of the per-element bound τ.
 * Changing a number here changes verdicts: bump GG_THRESHOLDS_VERSION with it.
 */
#include <math.h>

#include "oracles/gg_oracle.h"

/* What the reduction multiplies, which decides the error model. */
enum input_kind {
    IN_16BIT,     /* bf16 or f16 on both sides */
    IN_FP8_E4M3,  /* 8-bit floats, every one of the e4m3 family (OCP or fnuz; tensor or MX) */
    IN_FP8_E5M2,  /* 8-bit floats with one e5m2 operand */
    IN_FP8_E5M2X2, /* e5m2 on both sides */
    IN_E2M1,      /* an MX FP4 operand */
    IN_OTHER
};

struct row {
    enum input_kind in;
    enum gg_dtype out;
    struct gg_threshold t;
};

#define U_BF16 0x1p-8     /* bf16 unit roundoff, p = 8 */
#define ETA_BF16 0x1p-134 /* half of bf16's smallest subnormal 2^-133 */
#define U_F32 0x1p-24
#define ETA_F32 0x1p-150  /* half of 2^-149 */
#define U_ACC 0x1p-23     /* fp32 accumulation, 2u for truncating tensor cores (docs/checks.md §3.2) */
/* FP8 tensor-core accumulation (version 3; docs/checks.md §3.3): a Hopper FP8 MMA aligns its 32
   products to the largest exponent and keeps about 13 bits below it (DeepSeek-V3 reports ~14 for
   H800), so each product may lose 2^-13 of the largest and one k32 step up to 32·2^-13 = 2^-8 of
   its Σ|ab|; promoting every 64-128 K to fp32 keeps those step errors from growing with K, and
   they add at most linearly over the steps: 2^-8·Σ|ab| in all. Version 2's empirical 2^-12 (7-20x
   above cuBLASLt's maxima on N(0,1) data) was exceeded by cuBLASLt itself (ratio 1.64) and by the
   promoted wgmma kernel (1.43 times 2^-9 at K = 32) on specials data, where one large product sets
   the alignment of the others. */
#define KAPPA_FP8 0x1p-8
#define FP8_F32_FAIL_DB 60.0 /* fp32 out from 8-bit (and 4-bit) tensor-core inputs, version 3 */
#define K_REF_F32 7168.0     /* bf16->f32: the reduction past which the SNR levels fall (version 5) */

/*
 * Rows, with their reasoning (docs/checks.md §3-§5):
 *
 * bf16->bf16  16-bit inputs give exact products in fp32; the bf16 output rounding sets the SNR
 *             at 6.02·7 + 13.46 = 55.6 dB for every K (§4, measured 55.54-55.61 on CPU and
 *             cuBLAS); fail below 50 dB. τ uses γ_h(2^-23), which covers round-to-
 *             zero tensor cores (§3.2).
 * bf16->f32   same products and accumulator, fp32 output: cuBLAS on H100 measured 102 dB at
 *             K = 7168 (113.5 at 2048), the CPU 121 dB; fail below 90 dB. Those two
 *             points fall 20 dB per decade of K: the tensor cores' truncating fp32 additions
 *             give an error that grows linearly with the reduction, so past K_REF_F32 = 7168
 *             both levels fall with 20·log10(red / 7168) (version 5; flat before, which a
 *             campaign showed wrong: the mma.sync kernel gave 82.3-83.7 dB at K = 55391 with
 *             every element within 2·10^-4 of its bound, where the model expects 84.4 and the
 *             level is now 72.2).
 * e4m3->f32   fp8 inputs against the exact product of the dequantised inputs: H100 cuBLASLt
 * e5m2->f32   gives 77.9 dB on N(0,1) data (79.6 with an e5m2 operand), flat in K; fail
 *             below 60 dB (version 3; 70 dB before): on same-sign data the truncations of the
 *             13-bit tensor-core accumulator all go one way, so a promoted chunk's sum can lose
 *             ~5·2^-13 (20·log10(2^13/5) = 64 dB). Measured in campaigns: cuBLASLt 67.4 dB
 *             (uniform(0,1) x const) and 69.7 dB (normal x subnormal), the wgmma kernel 64.7 dB
 *             (subnormal x const, promotion every 128). Accumulation without promotion still
 *             falls under it from K ~ 4096 (54.5 dB at K = 7168).
 *             No γ_h models the fp8 accumulator, so τ uses κ = 2^-8 (KAPPA_FP8 above: the
 *             alignment loss of one k32 tensor-core step, bounded over promoted steps). Against
 *             the unquantised source: Primus-Turbo's 25 dB for e4m3 and MX-FP8 (expected 28.5 /
 *             27.6-28.5) and 20 dB once an e5m2 operand is involved (expected 22.5 / 24.6) (§5).
 *             Fast accumulation has no problem field and is not used.
 * e5m2x2      e5m2 on both sides (version 2): the two operands' quantisation noises add, 3 dB
 *             under one e5m2 operand's 22.5 (19.6 dB seen with MX floor scales at K = 35360), so
 *             the source level is 17 dB; the other levels are those of the e5m2 rows.
 * e4m3->bf16  fp8 inputs, bf16 output: the output rounding dominates again, 55.6 dB measured
 * e5m2->bf16  on H100; fail below 50 dB; κ and source levels as above.
 * e2m1->f32   MX FP4 inputs: the same accumulator model as fp8. The source SNR of a 2-bit
 * e2m1->bf16  significand (about 13-16 dB) is below any useful threshold: not applied.
 * fallback    anything else (f32 or f64 inputs, fp16 or 8-bit outputs): the loosest row, so an
 *             unmodelled combination never fails on rounding. u_out and η are those of E2M1, the
 *             coarsest output format (2^-2, half of its 0.5 subnormal), κ = 2^-8 is the fp8
 *             fast-accumulation level, 20 dB the lowest SNR level in use; the
 *             expected 25.5 dB is the rounding SNR of the coarsest 8-bit format, e5m2 (§4).
 *
 * Σ|ab| (version 6) counts a subnormal input factor at its format's smallest normal (gg_ref_gemm):
 * a tensor core aligns each product by its factors' exponents, a subnormal's being the format's
 * minimum with an unnormalised significand, so a product such as bf16 max x the smallest
 * subnormal (2^-5) moves the truncation window of its MMA up to 2^7 above its own magnitude. An
 * H100 campaign on special-code data found it: bf16 sums of 2 or 3 terms near 2^-5 in error by
 * 1.3-6 times the bound of version 5 on the wgmma kernels, fp8 dgrad sums of ~2,900 terms by
 * 1.06-1.19 times; the same campaigns under version 6 found nothing. No input without a
 * subnormal factor changes its bound.
 *
 * Rows are chosen by the operand dtypes alone, whatever the scaling recipe: every recipe
 * multiplies codes by exact scales before the reduction, so the reference carries the scales and
 * only the products' formats matter. Mixed inputs take the row of their most quantised operand:
 * bf16 x e2m1 (MX_B, weight-only MX FP4) takes the e2m1 rows and bf16 x e4m3 or bf16 x e5m2 the
 * fp8 rows (the empirical κ, as for the quantised kernels these mixes come from); e4m3 with
 * BLOCK128 scales (per-token, per-128-K "a8w8") takes the fp8 rows like tensor and MX scaling,
 * its source level included (finer scales only raise the source SNR). A bias adds one term to
 * each sum, which the oracles count in h.
 *
 * Source levels (version 7) judge the kernel against what the recipe itself keeps: a source SNR
 * below its level is the kernel's fault only when it is more than GG_ORACLE_SRC_MARGIN_DB below
 * the exact reference's own source SNR (gg_oracle_int.h); otherwise the case passes with an
 * advisory (unscaled e4m3 weights of normal(0, 1e-9) quantise to zeros: 0 dB, every output exact).
 *
 * ROWWISE and BLOCKWISE (fp8 on both sides) take the fp8 rows too. A kernel applies their
 * scales in fp32: rowwise as tensor scaling does, RN(acc · RN(sa[i] · sb[j])) once per output;
 * blockwise once per 128-block of the reduction, RN(partial · RN(sa · sb)) added to the fp32
 * total (DeepSeek-V3's promotion). Each scaled partial is then off by at most γ_2(2^-24) of its
 * own Σ|ab|, so all of them by 2^-23·Σ|ab| in all, far inside κ = 2^-8; the additions of the
 * partials are part of the summation tree that h counts. What the relative terms do not cover
 * is underflow: the oracles count the two fp32 multiplications of each block as operations
 * of the output (2·ceil(red/128) more, each at most 2^-150 absolute). No other recipe's bound
 * changes.
 */
static const struct row table[] = {
    {IN_16BIT, GG_DTYPE_BF16, {"bf16->bf16", 50.0, 55.6, 0.0, U_BF16, ETA_BF16, U_ACC, 0.0, 0.0}},
    {IN_16BIT, GG_DTYPE_F32, {"bf16->f32", 90.0, 102.0, 0.0, U_F32, ETA_F32, U_ACC, 0.0, K_REF_F32}},
    {IN_FP8_E4M3, GG_DTYPE_F32,
     {"e4m3->f32", FP8_F32_FAIL_DB, 77.9, 25.0, U_F32, ETA_F32, U_ACC, KAPPA_FP8, 0.0}},
    {IN_FP8_E5M2, GG_DTYPE_F32,
     {"e5m2->f32", FP8_F32_FAIL_DB, 77.9, 20.0, U_F32, ETA_F32, U_ACC, KAPPA_FP8, 0.0}},
    {IN_FP8_E4M3, GG_DTYPE_BF16,
     {"e4m3->bf16", 50.0, 55.6, 25.0, U_BF16, ETA_BF16, U_ACC, KAPPA_FP8, 0.0}},
    {IN_FP8_E5M2, GG_DTYPE_BF16,
     {"e5m2->bf16", 50.0, 55.6, 20.0, U_BF16, ETA_BF16, U_ACC, KAPPA_FP8, 0.0}},
    {IN_FP8_E5M2X2, GG_DTYPE_F32,
     {"e5m2x2->f32", FP8_F32_FAIL_DB, 77.9, 17.0, U_F32, ETA_F32, U_ACC, KAPPA_FP8, 0.0}},
    {IN_FP8_E5M2X2, GG_DTYPE_BF16,
     {"e5m2x2->bf16", 50.0, 55.6, 17.0, U_BF16, ETA_BF16, U_ACC, KAPPA_FP8, 0.0}},
    {IN_E2M1, GG_DTYPE_F32,
     {"e2m1->f32", FP8_F32_FAIL_DB, 77.9, 0.0, U_F32, ETA_F32, U_ACC, KAPPA_FP8, 0.0}},
    {IN_E2M1, GG_DTYPE_BF16, {"e2m1->bf16", 50.0, 55.6, 0.0, U_BF16, ETA_BF16, U_ACC, KAPPA_FP8, 0.0}},
};

static const struct gg_threshold fallback = {"fallback", 20.0, 25.5, 0.0, 0x1p-2, 0x1p-2, U_ACC,
                                             0x1p-8, 0.0};

static int is_16bit(enum gg_dtype t)
{
    return t == GG_DTYPE_BF16 || t == GG_DTYPE_F16;
}

static int is_e5m2(enum gg_dtype t)
{
    return t == GG_DTYPE_E5M2 || t == GG_DTYPE_E5M2FNUZ;
}

static int is_fp8(enum gg_dtype t)
{
    return t == GG_DTYPE_E4M3 || t == GG_DTYPE_E4M3FNUZ || is_e5m2(t);
}

/* An fp8 row admits a 16-bit partner operand (its products are still exact in fp32). */
static enum input_kind input_kind(enum gg_dtype a, enum gg_dtype b)
{
    if (a == GG_DTYPE_E2M1 || b == GG_DTYPE_E2M1)
        return IN_E2M1;
    if ((is_fp8(a) || is_fp8(b)) && (is_fp8(a) || is_16bit(a)) && (is_fp8(b) || is_16bit(b)))
        return is_e5m2(a) && is_e5m2(b) ? IN_FP8_E5M2X2
               : is_e5m2(a) || is_e5m2(b) ? IN_FP8_E5M2 : IN_FP8_E4M3;
    if (is_16bit(a) && is_16bit(b))
        return IN_16BIT;
    return IN_OTHER;
}

const struct gg_threshold *gg_threshold_for(const struct gg_problem *p)
{
    enum input_kind in = input_kind(p->a_dtype, p->b_dtype);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].in == in && table[i].out == p->c_dtype)
            return &table[i].t;
    return &fallback;
}

/* The longest reduction of p: K (fwd, batched, dense, MoE), N (dgrad), the largest group
   (wgrad, whose reduction runs over each group's tokens). */
static int64_t longest_reduction(const struct gg_problem *p)
{
    if (p->op == GG_OP_GROUPED_DGRAD)
        return p->n;
    if (p->op != GG_OP_GROUPED_WGRAD)
        return p->k;
    int64_t red = 0;
    for (int64_t g = 0; p->group_lens != NULL && g < p->groups; g++)
        red = p->group_lens[g] > red ? p->group_lens[g] : red;
    return red;
}

struct gg_threshold gg_threshold_at(const struct gg_problem *p)
{
    struct gg_threshold t = *gg_threshold_for(p);
    double red = (double)longest_reduction(p);
    if (t.k_ref > 0 && red > t.k_ref) {
        double fall = 20.0 * log10(red / t.k_ref);
        t.snr_fail_db -= fall;
        t.snr_expected_db -= fall;
    }
    return t;
}

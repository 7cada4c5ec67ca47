/*
 * gg_oracle_int.h — internal helpers shared by the files of oracles/ (never included from
 * another folder): reading one output element with its sentinel test, and the rules that decide
 * when an SNR is a statistically meaningful verdict.
 */
#ifndef GG_ORACLE_INT_H
#define GG_ORACLE_INT_H

#include <math.h>

#include "oracles/gg_oracle.h"

/*
 * Element i of an output of dtype t stored at c (packed codes; F64 as raw binary64). Returns 1
 * when the element still holds the sentinel of gg_oracle_sentinel(t); otherwise 0 and *value
 * receives its decoded value. (gg_oracle_snr.c)
 */
int gg_oracle_out_load(enum gg_dtype t, const void *c, int64_t i, double *value);

/* The factors of gg_oracle_bound() for one term count h, computed once for a group: τ(out, abs)
   is then gg_oracle_bound_with(), the same value bit for bit. (gg_oracle_snr.c) */
struct gg_bound_factors {
    double rel;   /* u_o/(1-u_o) */
    double acc;   /* κ, or γ_h(u_acc) */
    double eta;   /* η_o */
    double under; /* (h + 2)·2^-150 */
};
void gg_oracle_bound_factors(const struct gg_threshold *t, int64_t h, struct gg_bound_factors *f);

static inline double gg_oracle_bound_with(const struct gg_bound_factors *f, double out, double abs)
{
    double acc = abs > 0.0 ? f->acc * abs : 0.0;
    return f->rel * fabs(out) + acc + f->eta + f->under;
}

/*
 * SNR thresholds are statistical: a correctly rounded bf16 output has SNR >= -20·log10(2^-8) =
 * 48.2 dB per element, below the 50 dB fail level, and only the average over many elements
 * reaches 55.6 dB. Simulated RN_bf16 on normal data: 5e-6 of 16-element sets fall below 50 dB,
 * none of 2e5 sets of 32 or more (minimum 51.2 dB at 32, 52.1 dB at 64). So an SNR decides only
 * over at least this many outputs; smaller groups are judged by the element bound, and by the
 * pooled SNR when that fails. (Data whose energy sits in a few outputs, such as sparse outliers
 * at small K, has fewer effective samples than outputs and can still fall below.)
 */
#define GG_ORACLE_SNR_MIN_ELEMS 64

/* 1 when snr_db over elems outputs fails the level fail_db (0 or less: not applicable). */
static inline int gg_oracle_snr_fails(double snr_db, int64_t elems, double fail_db)
{
    return fail_db > 0 && elems >= GG_ORACLE_SNR_MIN_ELEMS && snr_db < fail_db;
}

static inline int64_t gg_oracle_total_elems(const struct gg_compare *cmp)
{
    int64_t total = 0;
    for (int64_t g = 0; g < cmp->n_groups; g++)
        total += cmp->groups[g].elems;
    return total;
}

/*
 * The SNR level a set of outputs must reach: the table's, unless output rounding alone already
 * costs more on this data. Low-entropy data (constants, small integers, values near the format's
 * maximum) rounds every output the same way, and then even the correctly rounded result can sit
 * below the table's level; such a set must stay within 6 dB of its own rounding floor instead.
 */
#define GG_ORACLE_ROUNDING_MARGIN_DB 6.0
static inline double gg_oracle_fail_level(const struct gg_threshold *t, double sig, double rn_err)
{
    double floor_db = gg_oracle_snr_db(sig, rn_err) - GG_ORACLE_ROUNDING_MARGIN_DB;
    return floor_db < t->snr_fail_db ? floor_db : t->snr_fail_db;
}

/* 1 when the pooled SNR of cmp fails t. */
static inline int gg_oracle_pooled_fails(const struct gg_threshold *t, const struct gg_compare *cmp)
{
    return gg_oracle_snr_fails(cmp->snr_db, gg_oracle_total_elems(cmp),
                               gg_oracle_fail_level(t, cmp->sig, cmp->rn_err));
}

/*
 * Outputs carrying signal that the source SNR needs before it decides. Quantisation noise is far
 * larger and more uneven than output rounding: on campaigns of correct kernels, sets of 66
 * outputs (3 of them non-zero) and 85 outputs gave 14.9 and 21.6 dB against levels of 20 and
 * 25 dB; and a wgrad whose 128 tokens all sit in the last of 882 experts has 1764 outputs of
 * which 2 are not exact zeros (10.1 dB against 20 on e5m2 data). Only outputs where the source
 * or the kernel is non-zero count (version 4; all outputs counted before).
 */
#define GG_ORACLE_SRC_MIN_ELEMS 1024

/* 1 when the pooled SNR against the unquantised source is below t's level (NaN: no source
   given), whoever lost it. */
static inline int gg_oracle_src_below(const struct gg_threshold *t, const struct gg_compare *cmp)
{
    return !isnan(cmp->src_snr_db) && cmp->src_n >= GG_ORACLE_SRC_MIN_ELEMS &&
           gg_oracle_snr_fails(cmp->src_snr_db, cmp->src_n, t->snr_src_fail_db);
}

/*
 * How far below the exact reference's own source SNR the output's may fall before the kernel is
 * blamed (version 7). No kernel can beat the reference against the source: it multiplies the same
 * quantised inputs, so a recipe that loses the data (weights of normal(0, 1e-9) quantised to e4m3
 * without a scale are all zeros) fails the source level with every output exact. A kernel that
 * passes its own levels against the reference (50 dB or more on every row with a source level)
 * adds an error energy E <= 10^-5·S to the reference's R; where the reference's source SNR is
 * within 1 dB of a source level (26 dB at most, R >= 10^-2.6·S), the triangle inequality bounds
 * the output's loss to 20·log10(1 + sqrt(E/R)) <= 0.53 dB. One dB leaves room for that; a kernel
 * that loses more than the recipe does by over 1 dB is at fault.
 */
#define GG_ORACLE_SRC_MARGIN_DB 1.0

/* 1 when the source SNR fails t and the kernel is to blame: below the level and more than the
   margin below what the exact reference reaches. */
static inline int gg_oracle_src_fails(const struct gg_threshold *t, const struct gg_compare *cmp)
{
    return gg_oracle_src_below(t, cmp) &&
           !(cmp->src_snr_db >= cmp->ref_src_snr_db - GG_ORACLE_SRC_MARGIN_DB);
}

/* 1 when the source SNR is below t's level but the recipe lost it: an advisory, no fault. */
static inline int gg_oracle_src_recipe_loss(const struct gg_threshold *t,
                                            const struct gg_compare *cmp)
{
    return gg_oracle_src_below(t, cmp) && !gg_oracle_src_fails(t, cmp);
}

/* 1 when group gm counts as failing: a bad element, or (unless the SNR is only advisory) its
   SNR below the threshold t, judged on its own when the group is large enough, else only when
   the pooled SNR fails too. */
static inline int gg_oracle_group_fails(const struct gg_threshold *t,
                                        const struct gg_group_metrics *gm, int pooled_fails,
                                        int snr_advisory)
{
    if (gm->n_bound + gm->n_nan + gm->n_unwritten > 0)
        return 1;
    if (snr_advisory)
        return 0;
    double level = gg_oracle_fail_level(t, gm->sig, gm->rn_err);
    if (gm->elems == 0 || !(gm->snr_db < level))
        return 0;
    return pooled_fails || gg_oracle_snr_fails(gm->snr_db, gm->elems, level);
}

#endif /* GG_ORACLE_INT_H */

/*
 * gg_rng.c — the counter-based generator behind all case data: Philox4x32-10 (Salmon, Moraes,
 * Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123 reference) and
 * the mapping from (seed, stream, element, draw) to 64 random bits. Only 32-bit integer products,
 * xors and adds are used, so a GPU kernel reproduces every bit. The generator is part of the
 * case-file format version: any change to this file changes every generated case.
 */
#include "reference/gg_ref.h"

/* Round multipliers and Weyl key increments (golden ratio and sqrt(3)-1 in 32-bit fixed point). */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10

/* hi:lo = a * b, the full 64-bit product of two 32-bit words. */
static void mulhilo32(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

/* One Philox S-box round: two multiplications, the high halves xored with the other counter
   words and the round key, then the word permutation of Random123's philox4x32round. */
static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo32(PHILOX_M0, c[0], &hi0, &lo0);
    mulhilo32(PHILOX_M1, c[2], &hi1, &lo1);
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

void gg_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < PHILOX_ROUNDS; r++) {
        if (r > 0) {
            k[0] += PHILOX_W0;
            k[1] += PHILOX_W1;
        }
        philox_round(c, k);
    }
    for (int w = 0; w < 4; w++)
        out[w] = c[w];
}

/* Key = (seed lo, seed hi); counter = (i lo, i hi, stream lo, j/2). Draws 2q and 2q+1 are the
   low and high 64-bit halves (words 0,1 and 2,3) of one Philox block. */
void gg_rng_pair(uint64_t seed, uint64_t stream, uint64_t i, uint32_t q, uint64_t out[2])
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream, q};
    uint32_t w[4];
    gg_philox4x32(ctr, key, w);
    out[0] = (uint64_t)w[0] | ((uint64_t)w[1] << 32);
    out[1] = (uint64_t)w[2] | ((uint64_t)w[3] << 32);
}

uint64_t gg_rng_u64(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    uint64_t pair[2];
    gg_rng_pair(seed, stream, i, j / 2u, pair);
    return pair[j % 2u];
}

/* The top 53 bits as a multiple of 2^-53: exact, in [0, 1 - 2^-53]. */
double gg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    return (double)(gg_rng_u64(seed, stream, i, j) >> 11) * 0x1p-53;
}

/* Draws used by the E8M0 planting: far above those of any distribution (gg_dist.c uses draws
   0..8), so planting on a scale stream is independent of the scale values drawn there. */
#define PLANT_DRAW_SELECT 16u
#define PLANT_DRAW_CHOICE 17u

int gg_rng_plant_e8m0(uint64_t seed, uint64_t stream, uint64_t i, double frac, uint8_t *code)
{
    static const uint8_t edge[4] = {0x00, 0x01, 0xFE, 0xFF};
    if (!(gg_rng_uniform(seed, stream, i, PLANT_DRAW_SELECT) < frac))
        return 0;
    /* The top two bits pick one of the four edge codes uniformly. */
    *code = edge[gg_rng_u64(seed, stream, i, PLANT_DRAW_CHOICE) >> 62];
    return 1;
}

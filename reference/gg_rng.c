/*
 * gg_rng.c — the counter-based generator behind all case data: Philox4x32-10 (Salmon, Moraes,
 * Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123 reference),
 * the mapping from (seed, stream, element, draw) to 64 random bits, and E8M0 planting. The
 * arithmetic lives in gg_gen_core.h, which the GPU generator compiles too; this file is its host
 * API. The generator is part of the case-file format version: any change to it changes every
 * generated case.
 */
#include "reference/gg_gen_core.h"

void gg_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    gg_core_philox(ctr, key, out);
}

void gg_rng_pair(uint64_t seed, uint64_t stream, uint64_t i, uint32_t q, uint64_t out[2])
{
    gg_core_rng_pair(seed, stream, i, q, out);
}

uint64_t gg_rng_u64(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    return gg_core_rng_u64(seed, stream, i, j);
}

double gg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t i, uint32_t j)
{
    return gg_core_rng_uniform(seed, stream, i, j);
}

int gg_rng_plant_e8m0(uint64_t seed, uint64_t stream, uint64_t i, double frac, uint8_t *code)
{
    return gg_core_plant_e8m0(seed, stream, i, frac, code);
}

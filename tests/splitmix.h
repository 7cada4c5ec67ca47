/*
 * splitmix.h — the tests' own deterministic generator (splitmix64), independent of the counter
 * RNG under test, so that randomised tests draw the same data on every run and every machine.
 */
#ifndef SPLITMIX_H
#define SPLITMIX_H

#include <stdint.h>

/* Next 64-bit output of the splitmix64 sequence whose state is *s. */
static inline uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* An integer in [0, n), n > 0 (modulo bias is irrelevant at test sizes). */
static inline int64_t splitmix_below(uint64_t *s, int64_t n)
{
    return (int64_t)(splitmix64(s) % (uint64_t)n);
}

#endif /* SPLITMIX_H */

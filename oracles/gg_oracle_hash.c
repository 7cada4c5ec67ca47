/*
 * gg_oracle_hash.c — the content hash that proves read-only operands unchanged: XXH3-128
 * (libxxhash), whose 128 bits make an accidental collision of a modified input negligible.
 */
#include <xxhash.h>

#include "oracles/gg_oracle.h"

struct gg_hash gg_oracle_hash(const void *data, size_t n)
{
    XXH128_hash_t h = XXH3_128bits(n ? data : "", n);
    return (struct gg_hash){h.low64, h.high64};
}

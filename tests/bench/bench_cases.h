/*
 * bench_cases.h — what the benchmarks that draw campaign cases share: which drawn cases count as
 * tiny (every size at most 128, at most 8 groups), whose rate they print beside the whole mix's.
 */
#ifndef GG_BENCH_CASES_H
#define GG_BENCH_CASES_H

#include "fuzz/case/gg_case.h"

static inline int bench_tiny_case(const struct gg_case *c)
{
    if (c->groups > 8 || c->n > 128 || c->k > 128 || c->m > 128 * 8)
        return 0;
    for (int64_t g = 0; c->lens && g < c->groups; g++)
        if (c->lens[g] > 128)
            return 0;
    return c->lens != NULL || c->m <= 128;
}

#endif /* GG_BENCH_CASES_H */

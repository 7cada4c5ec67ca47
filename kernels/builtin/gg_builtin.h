/*
 * gg_builtin.h — public header of kernels/builtin/: the table of in-tree kernels (CPU kernels,
 * and GPU kernels and vendor-library adapters when the build has them). The harness's registry
 * lists and looks kernels up through it; plugins add to what it holds at run time.
 */
#ifndef GG_BUILTIN_H
#define GG_BUILTIN_H

#include <stddef.h>

#include "kernels/gg_kernel.h"

/* In-tree kernels, in a fixed order; *count receives their number. The table is static. */
const struct gg_kernel *const *gg_kernels_builtin(size_t *count);

#endif /* GG_BUILTIN_H */

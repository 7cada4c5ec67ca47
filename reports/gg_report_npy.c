/*
 * gg_report_npy.c — NumPy's .npy file format, version 1.0, as np.load() reads it: the magic
 * "\x93NUMPY", the version bytes 1 and 0, a little-endian 16-bit header length, then a Python
 * dict literal {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with spaces and a
 * final newline so that the data starts at a multiple of 64 bytes, then the data in C order.
 * The file is written atomically (gg_atomic_open/commit): the caller writes the data through
 * the temporary file between the two calls.
 */
#include <stdio.h>
#include <string.h>

#include "reports/gg_report.h"

#define NPY_ALIGN 64
#define NPY_PREAMBLE 10 /* magic (6), version (2), header length (2) */

enum gg_status gg_report_npy_open(struct gg_atomic *a, const char *path, const char *what,
                                  const char *descr, const int64_t *shape, int ndim, char *err,
                                  size_t err_len)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int i = 0; i < ndim && n > 0 && (size_t)n < sizeof dict; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)shape[i],
                      ndim == 1 || i + 1 < ndim ? ", " : "");
    if (n > 0 && (size_t)n < sizeof dict) {
        if (ndim == 1) /* "(5, )" is not "(5,)" in every reader: cut the space */
            n--;
        n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    }
    if (n <= 0 || (size_t)n + NPY_ALIGN >= sizeof dict) {
        snprintf(err, err_len, "%s: cannot write %s: its shape does not fit a header", path,
                 what);
        return GG_E_INVAL;
    }
    size_t total = (NPY_PREAMBLE + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t header = total - NPY_PREAMBLE;
    memset(dict + n, ' ', header - 1 - (size_t)n);
    dict[header - 1] = '\n';
    enum gg_status st = gg_atomic_open(a, path, what, err, err_len);
    if (st != GG_OK)
        return st;
    unsigned char pre[NPY_PREAMBLE] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                       (unsigned char)(header & 0xFF),
                                       (unsigned char)(header >> 8)};
    gg_atomic_put(a, pre, sizeof pre);
    gg_atomic_put(a, dict, header);
    return GG_OK;
}

/*
 * gg_device_none.c — the device services of a build without GPU support: every call that would
 * need a device returns GG_E_UNSUPPORTED with a message that says how to configure a GPU build,
 * so the runner refuses GPU kernels (plugins included) with a reason instead of failing to link.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz/run/device/gg_device.h"

static enum gg_status unsupported(char *err, size_t err_len)
{
    snprintf(err, err_len,
             "ggfuzz was built without GPU support (configure with -DGG_CUDA=ON or -DGG_HIP=ON)");
    return GG_E_UNSUPPORTED;
}

int gg_device_built(void)
{
    return 0;
}

int gg_device_present(enum gg_backend backend, char *why, size_t why_len)
{
    if (backend == GG_BACKEND_CPU)
        return 1;
    unsupported(why, why_len);
    return 0;
}

int gg_device_count(char *why, size_t why_len)
{
    unsupported(why, why_len);
    return 0;
}

const char *gg_device_visible_env(void)
{
    return "CUDA_VISIBLE_DEVICES";
}

enum gg_status gg_device_get(struct gg_device **dev, char *err, size_t err_len)
{
    *dev = NULL;
    return unsupported(err, err_len);
}

int gg_device_lost(void)
{
    return 0;
}

void *gg_device_stream(const struct gg_device *d)
{
    (void)d;
    return NULL;
}

enum gg_status gg_device_mem_info(struct gg_device *d, int64_t *free_bytes, int64_t *total_bytes,
                                  char *err, size_t err_len)
{
    (void)d;
    *free_bytes = *total_bytes = 0;
    return unsupported(err, err_len);
}

void gg_device_make_room(struct gg_device *d, int64_t need)
{
    (void)d, (void)need;
}

void gg_device_alloc_stats(struct gg_device_alloc_stats *out)
{
    memset(out, 0, sizeof *out);
}

enum gg_status gg_device_sync(struct gg_device *d, const char *what, char *err, size_t err_len)
{
    (void)d, (void)what;
    return unsupported(err, err_len);
}

enum gg_status gg_device_check(struct gg_device *d, const char *what, char *err, size_t err_len)
{
    (void)d, (void)what;
    return unsupported(err, err_len);
}

enum gg_status gg_device_timer_start(struct gg_device *d, char *err, size_t err_len)
{
    (void)d;
    return unsupported(err, err_len);
}

enum gg_status gg_device_timer_stop(struct gg_device *d, double *ms, char *err, size_t err_len)
{
    (void)d, (void)ms;
    return unsupported(err, err_len);
}

enum gg_status gg_devbuf_alloc(struct gg_device *d, struct gg_devbuf *b, size_t bytes, char *err,
                               size_t err_len)
{
    (void)d, (void)bytes;
    memset(b, 0, sizeof *b);
    return unsupported(err, err_len);
}

enum gg_status gg_devbuf_alloc_sparse(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                                      const struct gg_range *live, size_t n, char *err,
                                      size_t err_len)
{
    (void)live, (void)n;
    return gg_devbuf_alloc(d, b, bytes, err, err_len);
}

enum gg_status gg_devbuf_alloc_flush(struct gg_device *d, struct gg_devbuf *b, size_t bytes,
                                     const struct gg_range *live, size_t n, int at_end, char *err,
                                     size_t err_len)
{
    (void)live, (void)n, (void)at_end;
    return gg_devbuf_alloc(d, b, bytes, err, err_len);
}

void gg_devbuf_free(struct gg_device *d, struct gg_devbuf *b)
{
    (void)d;
    memset(b, 0, sizeof *b);
}

enum gg_status gg_devbuf_upload(struct gg_device *d, struct gg_devbuf *b, size_t off,
                                const void *src, size_t n, char *err, size_t err_len)
{
    (void)d, (void)b, (void)off, (void)src, (void)n;
    return unsupported(err, err_len);
}

enum gg_status gg_devbuf_download(struct gg_device *d, const struct gg_devbuf *b, size_t off,
                                  void *dst, size_t n, char *err, size_t err_len)
{
    (void)d, (void)b, (void)off, (void)dst, (void)n;
    return unsupported(err, err_len);
}

enum gg_status gg_device_generate(struct gg_device *d, const struct gg_gen_plan *g, void *data,
                                  void *scales, char *err, size_t err_len)
{
    (void)d, (void)g, (void)data, (void)scales;
    return unsupported(err, err_len);
}

enum gg_status gg_device_fill(struct gg_device *d, void *dst, size_t n, uint32_t pattern,
                              int elem_bytes, char *err, size_t err_len)
{
    (void)d, (void)dst, (void)n, (void)pattern, (void)elem_bytes;
    return unsupported(err, err_len);
}

enum gg_status gg_device_guards_check(struct gg_device *d, const struct gg_devbuf *const *bufs,
                                      int n, int *hit, int *pre, char *err, size_t err_len)
{
    (void)d, (void)bufs, (void)n;
    *hit = -1;
    *pre = 0;
    return unsupported(err, err_len);
}

enum gg_status gg_device_hash(struct gg_device *d, const struct gg_devspan *spans, size_t n,
                              uint64_t *out, char *err, size_t err_len)
{
    (void)d, (void)spans, (void)n, (void)out;
    return unsupported(err, err_len);
}

void gg_device_test_fault(void *stream)
{
    (void)stream;
}

void gg_device_test_memset(void *dst, int byte, size_t n, void *stream)
{
    (void)dst, (void)byte, (void)n, (void)stream;
}

void *gg_device_host_alloc(struct gg_device *d, size_t bytes)
{
    (void)d, (void)bytes;
    return NULL;
}

void gg_device_host_free(struct gg_device *d, void *p)
{
    (void)d, (void)p;
}

enum gg_status gg_device_reference(struct gg_device *d, const struct gg_problem *p,
                                   const struct gg_operands *o, int64_t g0, int64_t g1, double *c,
                                   double *abs, char *err, size_t err_len)
{
    (void)d, (void)p, (void)o, (void)g0, (void)g1, (void)c, (void)abs;
    return unsupported(err, err_len);
}

enum gg_status gg_device_fetch_run(struct gg_device *d, enum gg_dtype dt, const void *dev_base,
                                   int64_t off, int64_t n, int64_t step, void *out, char *err,
                                   size_t err_len)
{
    (void)d, (void)dt, (void)dev_base, (void)off, (void)n, (void)step, (void)out;
    return unsupported(err, err_len);
}

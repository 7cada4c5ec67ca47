/*
 * test_gpu_device.c — the harness's device path end to end: test kernels with backend CUDA that
 * write past the output, write nothing, or change an input must give oob_write, unwritten and
 * input_modified through device guards, the device sentinel and device hashes; a case larger
 * than the device is refused with a reason; a kernel that faults on the device gives a `device`
 * verdict in its own process while the next process works; fresh processes started together find
 * the guard bands of their first case intact; a sparse buffer has memory only behind its live
 * ranges and its bands. Skipped without a usable device.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"
#include "fuzz/run/device/gg_device.h"

enum fault { F_NOTHING, F_PAST_END, F_INPUT, F_WILD };

static int any_supports(const struct gg_problem *p, char *why, size_t len)
{
    (void)p, (void)why, (void)len;
    return 1;
}

/* How many of the n bytes at p are not zero. */
static size_t nonzero_bytes(const uint8_t *p, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += p[i] != 0;
    return count;
}

/* Bytes of the packed bf16 output of a grouped fwd problem. */
static size_t out_bytes(const struct gg_problem *p)
{
    return (size_t)(p->m * p->ldc) * 2;
}

static enum gg_status fault_run(enum fault f, const struct gg_problem *p,
                                const struct gg_operands *o)
{
    switch (f) {
    case F_PAST_END:
        gg_device_test_memset(o->c, 0, out_bytes(p) + 1, o->stream);
        break;
    case F_INPUT:
        gg_device_test_memset((void *)o->a, 0x7F, 1, o->stream);
        break;
    case F_WILD:
        gg_device_test_fault(o->stream);
        break;
    default:
        break;
    }
    return GG_OK;
}

#define FAULT_KERNEL(tag, f)                                                                \
    static enum gg_status run_##tag(const struct gg_problem *p, const struct gg_operands *o, \
                                    char *err, size_t len)                                  \
    {                                                                                       \
        (void)err, (void)len;                                                               \
        return fault_run(f, p, o);                                                          \
    }                                                                                       \
    static const struct gg_kernel k_##tag = {                                               \
        .abi_version = GG_KERNEL_ABI_VERSION,                                               \
        .name = "test_gpu_" #tag,                                                           \
        .backend = GG_BACKEND_CUDA,                                                         \
        .ops = GG_OP_BIT(GG_OP_GROUPED_FWD),                                                \
        .supports = any_supports,                                                           \
        .run = run_##tag,                                                                   \
    };

FAULT_KERNEL(nothing, F_NOTHING)
FAULT_KERNEL(past_end, F_PAST_END)
FAULT_KERNEL(input, F_INPUT)
FAULT_KERNEL(wild, F_WILD)

static void register_all(void)
{
    gg_registry_init();
    const struct gg_kernel *ks[] = {&k_nothing, &k_past_end, &k_input, &k_wild};
    char err[256];
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (!gg_registry_find(ks[i]->name))
            cr_assert_eq(gg_registry_add(ks[i], err, sizeof err), GG_OK, "%s", err);
}

/* Skips the test when no device can be used; the probe runs in a child so that the test
   process itself stays free to fork before touching the device. */
static void need_device(void)
{
    if (!gg_device_built())
        cr_skip_test("built without GPU support");
    struct gg_case c;
    char err[512];
    const char *text = "ggfuzz-case 1\nop grouped_fwd\nkernel test_gpu_nothing\n"
                       "dtypes a=bf16 b=bf16 c=bf16\ngroups 1\ngroup_lens 1\nn 1\nk 1\n"
                       "seed 1\n";
    cr_assert_eq(gg_case_parse(text, strlen(text), "probe", &c, err, sizeof err), GG_OK, "%s", err);
    struct gg_run_result r;
    enum gg_status st = gg_run_case_isolated(&c, NULL, 60, &r, err, sizeof err);
    gg_case_free(&c);
    int usable = st == GG_OK;
    gg_run_result_free(&r);
    if (!usable)
        cr_skip_test("no usable GPU: %s", err);
}

/* The process's device context, for a test that uses the device itself (skipped without one). */
static struct gg_device *this_device(void)
{
    register_all();
    need_device();
    struct gg_device *d = NULL;
    char err[512];
    cr_assert_eq(gg_device_get(&d, err, sizeof err), GG_OK, "%s", err);
    return d;
}

static const char *CASE_FMT = "ggfuzz-case 1\nop grouped_fwd\nkernel %s\n"
                              "dtypes a=bf16 b=bf16 c=bf16\ngroups %s\ngroup_lens %s\n"
                              "n %d\nk %d\nseed 0x5eed\n";

static void make_case(struct gg_case *c, const char *kernel, const char *groups,
                      const char *lens, int n, int k)
{
    char text[512], err[512];
    snprintf(text, sizeof text, CASE_FMT, kernel, groups, lens, n, k);
    cr_assert_eq(gg_case_parse(text, strlen(text), "test", c, err, sizeof err), GG_OK, "%s", err);
}

/* Runs the small standard case on kernel in a child process; returns the verdict class. */
static enum gg_class run_small(const char *kernel, struct gg_verdict *v)
{
    struct gg_case c;
    make_case(&c, kernel, "3", "17 0 40", 72, 64);
    struct gg_run_result r;
    char err[1024];
    enum gg_status st = gg_run_case_isolated(&c, NULL, 120, &r, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s: %s", kernel, err);
    *v = r.verdict;
    gg_run_result_free(&r);
    gg_case_free(&c);
    return v->cls;
}

Test(gpu_device, guard_band_hit_is_oob_write)
{
    register_all();
    need_device();
    struct gg_verdict v;
    cr_expect_eq(run_small("test_gpu_past_end", &v), GG_CLASS_OOB_WRITE, "%s", v.detail);
    cr_expect(strstr(v.signature, "guard_post") != NULL, "%s", v.signature);
}

Test(gpu_device, unwritten_output_keeps_the_sentinel)
{
    register_all();
    need_device();
    struct gg_verdict v;
    cr_expect_eq(run_small("test_gpu_nothing", &v), GG_CLASS_UNWRITTEN, "%s", v.detail);
}

Test(gpu_device, input_write_is_input_modified)
{
    register_all();
    need_device();
    struct gg_verdict v;
    cr_expect_eq(run_small("test_gpu_input", &v), GG_CLASS_INPUT_MODIFIED, "%s", v.detail);
}

Test(gpu_device, case_larger_than_the_device_is_refused)
{
    register_all();
    need_device();
    /* W holds 10^4 experts of 4096 x 4096 bf16 (335 GB): only the last has tokens, so the host
       reserves it without touching it, but a device must hold the whole span. */
    struct gg_case c;
    make_case(&c, "test_gpu_nothing", "10000", "0*9999 4", 4096, 4096);
    struct gg_run_result r;
    char err[1024] = "";
    enum gg_status st = gg_run_case_isolated(&c, NULL, 120, &r, err, sizeof err);
    cr_expect_eq(st, GG_E_NOMEM, "%d: %s", st, err);
    cr_expect(strstr(err, "device memory") != NULL, "%s", err);
    gg_run_result_free(&r);
    gg_case_free(&c);
}

Test(gpu_device, sticky_error_is_a_device_finding_and_the_next_process_works)
{
    register_all();
    need_device();
    struct gg_verdict v;
    cr_expect_eq(run_small("test_gpu_wild", &v), GG_CLASS_DEVICE, "%s", v.detail);
    cr_expect(strncmp(v.signature, "device/test_gpu_wild/", 21) == 0, "%s", v.signature);
    cr_expect_eq(gg_class_from_name("device"), GG_CLASS_DEVICE);
    /* The device is usable again from a fresh process. */
    cr_expect_eq(run_small("test_gpu_past_end", &v), GG_CLASS_OOB_WRITE, "%s", v.detail);
    cr_expect_eq(gg_device_lost(), 0);
}

/* Runs c as this fresh process's first case and exits with the verdict class, or 64 - status
   when the run failed. */
static void first_case(const struct gg_case *c)
{
    struct gg_run_result r;
    char err[1024];
    enum gg_status st = gg_run_case(c, NULL, &r, err, sizeof err);
    _exit(st == GG_OK ? (int)r.verdict.cls : 64 - (int)st);
}

static const char *first_case_outcome(int wst, char *buf, size_t len)
{
    int code = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
    if (code >= 0 && code < GG_CLASS_COUNT)
        snprintf(buf, len, "%s", gg_class_name((enum gg_class)code));
    else if (code > 64)
        snprintf(buf, len, "run failed with status %d", 64 - code);
    else
        snprintf(buf, len, "died (wait status %d)", wst);
    return buf;
}

/* Campaign workers and the minimiser's runs are fresh processes that start on the device while
   others run there: the bands of a fresh process's first buffers must be complete copies of the
   canary, whatever the order in which the device serves the processes' first transfers. The
   kernel writes nothing, so any guard hit would outrank the expected `unwritten`. */
Test(gpu_device, fresh_processes_started_together_keep_their_first_guard_bands)
{
    register_all();
    need_device();
    enum { PROCS = 8, ROUNDS = 4 };
    struct gg_case c;
    make_case(&c, "test_gpu_nothing", "3", "17 0 40", 72, 64);
    for (int round = 0; round < ROUNDS; round++) {
        pid_t pid[PROCS];
        fflush(NULL);
        for (int i = 0; i < PROCS; i++) {
            pid[i] = fork();
            if (pid[i] == 0)
                first_case(&c);
            cr_assert_geq(pid[i], 0, "cannot fork");
        }
        for (int i = 0; i < PROCS; i++) {
            int wst = 0;
            char what[64];
            cr_assert_eq(waitpid(pid[i], &wst, 0), pid[i]);
            cr_expect(WIFEXITED(wst) && WEXITSTATUS(wst) == GG_CLASS_UNWRITTEN,
                      "round %d, process %d: %s", round, i,
                      first_case_outcome(wst, what, sizeof what));
        }
    }
    gg_case_free(&c);
}

Test(gpu_device, sparse_buffer_has_memory_only_behind_its_live_ranges)
{
    struct gg_device *d = this_device();
    char err[512];
    /* 4 GiB of which 4 KiB at the start and 8 KiB at 3 GiB are used. The bounds below read the
       device's free memory: run alone on the device (CTest runs this binary with --jobs 1 and
       RUN_SERIAL; criterion's default runs the other tests of this file beside it). */
    const size_t bytes = (size_t)4 << 30, far = (size_t)3 << 30;
    const struct gg_range live[2] = {{0, 4096}, {far, far + 8192}};
    int64_t free0 = 0, free1 = 0, total = 0;
    struct gg_devbuf b;
    cr_assert_eq(gg_device_mem_info(d, &free0, &total, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_devbuf_alloc_sparse(d, &b, bytes, live, 2, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_device_mem_info(d, &free1, &total, err, sizeof err), GG_OK, "%s", err);
    cr_expect(b.maps != NULL && b.n_maps >= 2, "the 4 GiB buffer was allocated whole");
    /* the read-only chunks of zeros mapped into unused granules are kept memory, which the
       free memory counts (they are given back when a case needs the room) */
    cr_expect_lt(free0 - free1, (int64_t)64 << 20, "%lld bytes used", (long long)(free0 - free1));
    /* both live ranges read back what was written, zeros where nothing was */
    static uint8_t in[8192], out[8192];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 7 + 1);
    cr_assert_eq(gg_devbuf_upload(d, &b, far, in, 8192, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_devbuf_upload(d, &b, 0, in, 4096, err, sizeof err), GG_OK, "%s", err);
    cr_assert_eq(gg_devbuf_download(d, &b, far, out, 8192, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(memcmp(in, out, 8192), 0);
    cr_assert_eq(gg_devbuf_download(d, &b, 4096, out, 4096, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(nonzero_bytes(out, 4096), 0, "the rest of a mapped granule is not zero");
    /* a granule with no live range reads zeros (the shared read-only chunks of zeros) */
    memset(out, 0xAB, sizeof out);
    cr_assert_eq(gg_devbuf_download(d, &b, (size_t)1 << 30, out, 4096, err, sizeof err), GG_OK,
                 "%s", err);
    cr_expect_eq(nonzero_bytes(out, 4096), 0, "an unused granule does not read zeros");
    /* intact bands, and a write past the end is seen */
    const struct gg_devbuf *bufs[1] = {&b};
    int hit = 0, pre = 0;
    cr_assert_eq(gg_device_guards_check(d, bufs, 1, &hit, &pre, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect_eq(hit, -1);
    uint8_t first;
    gg_oracle_canary_fill(&first, 1);
    gg_device_test_memset(b.data + bytes, first ^ 0xFF, 1, gg_device_stream(d));
    cr_assert_eq(gg_device_guards_check(d, bufs, 1, &hit, &pre, err, sizeof err), GG_OK, "%s",
                 err);
    cr_expect(hit == 0 && !pre, "hit %d pre %d", hit, pre);
    gg_devbuf_free(d, &b);
    cr_assert_eq(gg_device_mem_info(d, &free1, &total, err, sizeof err), GG_OK, "%s", err);
    cr_expect_lt(free0 - free1, (int64_t)8 << 20, "%lld bytes kept after the free",
                 (long long)(free0 - free1));
}

/* The rows of an operand a huge leading dimension apart (the i64 cases): each row's granule and
   the run of unused granules after it are one mapping each, the runs sharing one chunk of
   zeros; the rows read back what was written and the runs zeros. */
Test(gpu_device, rows_far_apart_take_two_mappings_a_row)
{
    struct gg_device *d = this_device();
    char err[512];
    enum { ROWS = 48 };
    const size_t ld = (size_t)32 << 20, row = 512, bytes = (ROWS - 1) * ld + row;
    struct gg_range live[ROWS];
    for (size_t i = 0; i < ROWS; i++)
        live[i] = (struct gg_range){i * ld, i * ld + row};
    struct gg_devbuf b;
    cr_assert_eq(gg_devbuf_alloc_sparse(d, &b, bytes, live, ROWS, err, sizeof err), GG_OK, "%s",
                 err);
    cr_assert(b.maps != NULL, "the buffer was allocated whole");
    /* a row's granule and the zeros up to the next row's (the first row shares its granule with
       the band before it, the last one with the band after it): 2 a row, one less at the end */
    cr_expect_leq(b.n_maps, 2 * ROWS, "%d mappings for %d rows", b.n_maps, (int)ROWS);
    static uint8_t in[512], out[4096];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 5 + 3);
    for (size_t r = 0; r < ROWS; r += 7)
        cr_assert_eq(gg_devbuf_upload(d, &b, r * ld, in, row, err, sizeof err), GG_OK, "%s", err);
    for (size_t r = 0; r < ROWS; r += 7) {
        cr_assert_eq(gg_devbuf_download(d, &b, r * ld, out, row, err, sizeof err), GG_OK, "%s",
                     err);
        cr_expect_eq(memcmp(in, out, row), 0, "row %zu", r);
        if (r + 1 < ROWS) { /* a granule between this row and the next */
            memset(out, 0xAB, sizeof out);
            cr_assert_eq(
                gg_devbuf_download(d, &b, r * ld + ld / 2, out, sizeof out, err, sizeof err), GG_OK,
                "%s", err);
            cr_expect_eq(nonzero_bytes(out, sizeof out), 0, "between rows %zu and %zu", r, r + 1);
        }
    }
    gg_devbuf_free(d, &b);
}

Test(gpu_device, bench_times_a_gpu_kernel_between_device_events)
{
    register_all();
    need_device();
    struct gg_case c;
    make_case(&c, "grouped_bf16_cuda_persistent", "3", "17 0 40", 72, 64);
    struct gg_bench_result r;
    char err[1024] = "";
    enum gg_status st = gg_bench_case(&c, NULL, 2, 7, &r, err, sizeof err);
    cr_assert_eq(st, GG_OK, "%s", err);
    cr_expect_eq(r.device, 1);
    cr_expect_eq(r.reps, 7);
    cr_expect(r.min_ms > 0.0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms,
              "%g %g %g", r.min_ms, r.median_ms, r.max_ms);
    cr_expect_eq(r.flops, 2.0 * 57 * 72 * 64);
    cr_expect_str_eq(r.kernel, "grouped_bf16_cuda_persistent");
    /* A kernel whose run() fails ends the timing with its message. */
    gg_case_free(&c);
    make_case(&c, "grouped_bf16_cuda_persistent", "3", "17 0 40", 72, 64);
    struct gg_run_opts o = {.kernel = "no_such_kernel"};
    cr_expect_eq(gg_bench_case(&c, &o, 0, 1, &r, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "no_such_kernel") != NULL, "%s", err);
    gg_case_free(&c);
}

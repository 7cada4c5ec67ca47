/*
 * bench_fuzz_throughput — cases per second on tiny shapes with every structural oracle on (issue
 * target: 500 cases/s per core). For each kernel named (default: a bf16, an fp8 and an MX kernel),
 * draws targeted campaign cases, keeps the tiny ones (G <= 8 groups or batches, every size <= 128),
 * runs them in this process on one core through gg_run_case (materialise, three runs with two
 * workspace poisons, guards, hashes, reference, comparison, verdict) and prints cases per second
 * of wall time and of this process's CPU time (per core: what the target is about; threads a
 * kernel starts count too), the CPU time per case and the kernel's share. A case that gives a
 * finding (on a correct kernel: a false alarm or a real bug) is printed to stderr. Usage: bench_fuzz_throughput [--cases N] [KERNEL...]
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/gen/gg_gen.h"
#include "reference/gg_ref.h"

#include "bench_cases.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Draws n tiny cases of kernel k; returns how many were drawn (<= n). */
static int draw(const struct gg_kernel *k, struct gg_case *cases, int n)
{
    struct gg_gen_config cfg = {.kernel = k, .faults = GG_FAULTS_ALL};
    struct gg_gen_caps *caps = NULL;
    char err[512];
    if (gg_gen_caps_probe(&cfg, &caps, err, sizeof err) != GG_OK) {
        fprintf(stderr, "%s: %s\n", k->name, err);
        return 0;
    }
    cfg.caps = caps;
    int got = 0;
    for (uint64_t i = 0; got < n && i < (uint64_t)n * 200; i++) {
        struct gg_case c;
        if (gg_generate(&cfg, 0x7b0u, i, &c, err, sizeof err) != GG_OK)
            continue;
        if (bench_tiny_case(&c))
            cases[got++] = c;
        else
            gg_case_free(&c);
    }
    gg_gen_caps_free(caps);
    return got;
}

static int bench_kernel(const char *name, int n)
{
    const struct gg_kernel *k = gg_registry_find(name);
    if (!k) {
        fprintf(stderr, "no kernel %s\n", name);
        return 1;
    }
    struct gg_case *cases = calloc((size_t)n, sizeof *cases);
    if (!cases)
        return 1;
    int got = draw(k, cases, n);
    struct gg_hostpool pool = {.n = 0};
    struct gg_run_opts o = {.max_mem_bytes = 1LL << 30, .pool = &pool};
    int runs = 0, faults = 0, errors = 0;
    double kernel_s = 0, t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < got; i++) {
        struct gg_run_result r;
        char err[1024];
        if (gg_run_case(&cases[i], &o, &r, err, sizeof err) == GG_OK) {
            runs++;
            kernel_s += r.kernel_seconds;
            if (r.verdict.cls != GG_CLASS_PASS) { /* a correct kernel's finding: say which */
                char *text = NULL;
                faults++;
                fprintf(stderr, "%s: case %d: %s (%s)\n", name, i, r.verdict.signature,
                        r.verdict.detail);
                if (gg_case_format(&cases[i], 0, &text) == GG_OK)
                    fprintf(stderr, "%s", text);
                free(text);
            }
        } else {
            errors++;
        }
        gg_run_result_free(&r);
    }
    double dt = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    gg_hostpool_drain(&pool);
    printf("%-30s %6d %8.1f %10.1f %10.3f %10.3f %6d %6d\n", name, runs, dt > 0 ? runs / dt : 0,
           cpu > 0 ? runs / cpu : 0, runs ? 1e3 * cpu / runs : 0,
           runs ? 1e3 * kernel_s / runs : 0, faults, errors);
    for (int i = 0; i < got; i++)
        gg_case_free(&cases[i]);
    free(cases);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 2000, first = 1;
    if (argc > 2 && strcmp(argv[1], "--cases") == 0) {
        n = atoi(argv[2]);
        first = 3;
    }
    if (n <= 0) {
        fprintf(stderr, "usage: bench_fuzz_throughput [--cases N] [KERNEL...]\n");
        return 2;
    }
    gg_registry_init();
    gg_ref_threads(1); /* one core and the allocator settings of a campaign worker */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    static const char *defaults[] = {"grouped_bf16_cpu_tiled", "grouped_fp8_cpu_tiled",
                                     "mx_e4m3_cpu_grouped", "batched_bf16_cpu_tiled"};
    printf("%-30s %6s %8s %10s %10s %10s %6s %6s\n", "kernel", "cases", "cases/s",
           "cases/cpu-s", "cpu ms/case", "kernel ms", "faults", "errors");
    int rc = 0;
    if (first < argc)
        for (int i = first; i < argc; i++)
            rc |= bench_kernel(argv[i], n);
    else
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            rc |= bench_kernel(defaults[i], n);
    return rc;
}

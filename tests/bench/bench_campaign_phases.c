/*
 * bench_campaign_phases — where a campaign case's wall time goes, for a kernel on the default
 * campaign generator's case mix. For each kernel named:
 *   1. a campaign (--workers W, one by default; --runs N, the seed given, no minimisation)
 *      through the library, with real worker processes: its cases per second of wall time from
 *      its first case to its last (the workers' start and the kernel's probe, and the
 *      confirmations it waits for at its end, are not a case's cost);
 *   2. the same number of cases drawn by the campaign's generator in this process (the draw and
 *      the kernel's admission, timed), then each run here as a worker runs it (one reference
 *      thread, the worker's buffer pool): the run's phases (setup: admission, host buffers and
 *      guards, host inputs; the device buffers and their guard bands; the inputs generated or
 *      uploaded there; runs: the kernel's runs with the input hashes, guards and the output
 *      brought back; reference; compare; release: everything freed) and the kernel's
 *      time (the first run's, times the runs a case takes);
 *   3. the tiny cases of the same draw only (bench_cases.h), run the same way.
 * It prints each phase's share of the campaign's wall time per case, then the size distribution of
 * the draw (by the host memory a case needs, gg_case_mem_estimate): the cases and faults of each
 * size class and its share of the run time; what is left is the worker round trip (the case sent,
 * the result read back) and the supervisor (novelty, corpus, files, confirmations). Beside each
 * phase: its time per case in the campaign's own workers (what they reported with their results).
 * With W workers a case has W times the campaign's wall time per case of a worker's time, and the
 * shares are of that. The GPU's busy fraction is estimated as the GPU work of a case (kernel runs
 * + a device reference, timed in part 2) times the campaign's cases per second; with several
 * workers their GPU work may overlap, so past 100% it says the GPU's work overlaps, not that it is
 * busier. The draw of part 2 is a case's draw in the supervisor; the run of part 2 matches the
 * campaign's when the mix is the same (same seed, same generator).
 * With --mutant M every case runs the kernel's mutant M (a flooding mutant: what faults cost).
 * For a GPU kernel it also counts the driver's virtual memory calls of part 2 (sparse and flush
 * buffers): how many of each a run makes and what each takes.
 * Usage: bench_campaign_phases [--cases N] [--seed S] [--workers W] [--mutant M] KERNEL...
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/campaign/gg_campaign.h"
#include "reference/gg_ref.h"

#include "bench_cases.h"

/* Sums over the cases run in this process. */
struct sums {
    int cases, errors, faults;
    double draw, wall, setup, alloc, inputs, runs, reference, compare, release, kernel, device_ref;
};

/* The size classes of the distribution: a case's host memory below each bound. */
static const struct {
    int64_t below;
    const char *name;
} SIZES[] = {
    {4 << 20, "< 4 MiB"}, {64 << 20, "4-64 MiB"}, {1 << 30, "64M-1 GiB"}, {INT64_MAX, ">= 1 GiB"}};
#define N_SIZES (sizeof SIZES / sizeof SIZES[0])

static size_t size_class(const struct gg_case *c)
{
    int64_t bytes = gg_case_mem_estimate(c);
    size_t i = 0;
    while (i + 1 < N_SIZES && bytes >= SIZES[i].below)
        i++;
    return i;
}

/* Runs c as a worker does and adds its times to s. */
static void run_one(const struct gg_case *c, struct gg_run_opts *o, struct sums *s)
{
    struct gg_run_result r;
    char err[1024];
    double t0 = gg_wire_now();
    enum gg_status st = gg_run_case(c, o, &r, err, sizeof err);
    s->wall += gg_wire_now() - t0;
    if (st != GG_OK) {
        s->errors++;
        return;
    }
    s->cases++;
    s->faults += r.verdict.cls != GG_CLASS_PASS;
    s->setup += r.phase.setup;
    s->alloc += r.phase.alloc;
    s->inputs += r.phase.inputs;
    s->release += r.phase.release;
    s->runs += r.phase.runs;
    s->reference += r.phase.reference;
    s->compare += r.phase.compare;
    s->kernel += 2 * r.kernel_seconds; /* two runs, with the two workspace poisons */
    if (r.device_reference)
        s->device_ref += r.phase.reference;
    gg_run_result_free(&r);
}

static void add(struct sums *to, const struct sums *s)
{
    to->cases += s->cases, to->errors += s->errors, to->faults += s->faults;
    to->draw += s->draw, to->wall += s->wall, to->setup += s->setup, to->alloc += s->alloc;
    to->inputs += s->inputs, to->runs += s->runs, to->reference += s->reference;
    to->compare += s->compare, to->release += s->release, to->kernel += s->kernel;
    to->device_ref += s->device_ref;
}

/* The first statistics tick with a case done, and the last one at which the count of cases
   grew: the campaign's start (its workers' start and the kernel's probe) and its end (the
   confirmations and minimisers it waits for once its cases are done) are not what a case
   costs. */
struct ticks {
    double first, last;
    int64_t first_execs, last_execs;
};

static void on_tick(const struct gg_campaign_stats *s, const int *pids, int n, void *user)
{
    struct ticks *f = user;
    (void)pids, (void)n;
    if (f->first == 0 && s->execs > 0) {
        f->first = gg_wire_now();
        f->first_execs = s->execs;
    }
    if (s->execs > f->last_execs) {
        f->last = gg_wire_now();
        f->last_execs = s->execs;
    }
}

/* Part 1: a campaign of n cases; its wall time per case between its first case and its last
   (0 when it failed). */
static double campaign_per_case(const char *kernel, const char *mutant, int n, uint64_t seed,
                                int workers, int64_t *execs, struct gg_phase_sums *phases)
{
    char dir[] = "/tmp/ggfuzz-bench-phases-XXXXXX", artifacts[64], err[2048];
    if (mkdtemp(dir) == NULL)
        return 0;
    snprintf(artifacts, sizeof artifacts, "%s/artifacts", dir);
    struct ticks ticks = {0};
    struct gg_campaign_config cfg = {.kernel = kernel,
                                     .mutant = mutant,
                                     .seed = seed,
                                     .workers = workers,
                                     .max_runs = n,
                                     .no_minimize = 1,
                                     .artifacts_dir = artifacts,
                                     .worker_exe = GG_GGFUZZ_EXE,
                                     .stats_interval_s = 0.05,
                                     .on_tick = on_tick,
                                     .user = &ticks};
    struct gg_campaign_stats st;
    enum gg_status rc = gg_campaign_run(&cfg, &st, err, sizeof err);
    double wall = ticks.last - ticks.first;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    if (rc != GG_OK || ticks.last_execs <= ticks.first_execs || ticks.first == 0) {
        fprintf(stderr, "%s: campaign: %s\n", kernel, err[0] ? err : "too few cases");
        return 0;
    }
    *execs = st.execs;
    *phases = st.phases;
    return wall / (double)(ticks.last_execs - ticks.first_execs);
}

/* A phase's row: its time per case here, its share of a worker's time per case, and its time
   per case in the campaign's workers (camp_sum over its cases; a negative sum: not told). */
static void row(const char *what, double seconds, double per_case, double camp_sum,
                const struct gg_phase_sums *camp)
{
    printf("  %-34s %9.3f ms %6.1f%%", what, 1e3 * seconds,
           per_case > 0 ? 100 * seconds / per_case : 0);
    if (camp->cases > 0 && camp_sum >= 0)
        printf(" %9.3f ms", 1e3 * camp_sum / (double)camp->cases);
    printf("\n");
}

/* The driver's virtual memory calls of this process between two counts, per run of runs: how
   many of each and their mean time. */
static void vmm_calls(const struct gg_device_alloc_stats *a, const struct gg_device_alloc_stats *b,
                      int runs)
{
    const struct {
        const char *name;
        struct gg_vmm_tally a, b;
    } calls[] = {{"map", a->map, b->map},
                 {"access", a->access, b->access},
                 {"unmap", a->unmap, b->unmap},
                 {"create", a->create, b->create},
                 {"release", a->release, b->release},
                 {"reserve", a->reserve, b->reserve},
                 {"address free", a->address_free, b->address_free}};
    double total = 0;
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        total += calls[i].b.seconds - calls[i].a.seconds, n += calls[i].b.calls - calls[i].a.calls;
    if (n == 0 || runs <= 0)
        return;
    printf("  driver virtual memory calls: %.1f a run, %.3f ms a run:", (double)n / runs,
           1e3 * total / runs);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        uint64_t c = calls[i].b.calls - calls[i].a.calls;
        if (c > 0)
            printf(" %s %.1f (%.1f us each)", calls[i].name, (double)c / runs,
                   1e6 * (calls[i].b.seconds - calls[i].a.seconds) / (double)c);
    }
    printf("\n");
}

static int bench(const char *name, const char *mutant, int n, uint64_t seed, int workers)
{
    const struct gg_kernel *k = gg_registry_find(name);
    if (k == NULL) {
        fprintf(stderr, "no kernel %s\n", name);
        return 1;
    }
    int64_t execs = 0;
    struct gg_phase_sums cp = {0};
    double campaign = campaign_per_case(name, mutant, n, seed, workers, &execs, &cp);
    /* Part 2: the campaign generator's cases, drawn and run here. */
    struct gg_gen_config cfg = {.kernel = k, .faults = GG_FAULTS_ALL};
    struct gg_gen_caps *caps = NULL;
    char err[1024];
    if (gg_gen_caps_probe(&cfg, &caps, err, sizeof err) != GG_OK) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    cfg.caps = caps;
    struct gg_hostpool pool = {.n = 0};
    struct gg_run_opts o = {.pool = &pool, .mutant = mutant};
    struct sums all = {0}, small = {0}, by_size[N_SIZES] = {{0}};
    struct gg_device_alloc_stats before;
    gg_device_alloc_stats(&before);
    for (uint64_t i = 0; i < (uint64_t)n; i++) {
        struct gg_case c;
        double t0 = gg_wire_now();
        enum gg_status st = gg_generate(&cfg, seed, i, &c, err, sizeof err);
        all.draw += gg_wire_now() - t0;
        if (st != GG_OK)
            continue;
        struct sums one = {0};
        run_one(&c, &o, &one);
        add(&all, &one);
        add(&by_size[size_class(&c)], &one);
        if (bench_tiny_case(&c))
            run_one(&c, &o, &small);
        gg_case_free(&c);
    }
    gg_hostpool_drain(&pool);
    gg_gen_caps_free(caps);
    struct gg_device_alloc_stats as;
    gg_device_alloc_stats(&as);
    double per = all.cases ? all.wall / all.cases : 0, draw = all.cases ? all.draw / all.cases : 0;
    double wall = campaign > 0 ? campaign : per + draw; /* the campaign's wall time per case */
    double whole = campaign > 0 ? workers * campaign : per + draw; /* a worker's time per case */
    printf("%s%s%s: campaign %.1f cases/s (%lld cases, %d worker%s); in process %.1f cases/s "
           "(%d cases, %d errors, %d faults); tiny cases %.1f/s (%d)\n",
           name, mutant ? " + " : "", mutant ? mutant : "", campaign > 0 ? 1 / campaign : 0,
           (long long)execs, workers, workers > 1 ? "s" : "", per > 0 ? 1 / per : 0, all.cases,
           all.errors, all.faults, small.cases && small.wall > 0 ? small.cases / small.wall : 0,
           small.cases);
    printf("  %-34s %9s    %6s   of a worker's time per case (%.3f ms); in the campaign's "
           "workers\n",
           "phase", "per case", "share", 1e3 * whole);
    int c = all.cases ? all.cases : 1;
    row("draw and admission (supervisor)", draw, whole, -1, &cp);
    row("setup: buffers, guards, host inputs", all.setup / c, whole, cp.setup, &cp);
    row("device buffers and guard bands", all.alloc / c, whole, cp.alloc, &cp);
    row("inputs generated on the device", all.inputs / c, whole, cp.inputs, &cp);
    row("runs: kernel, hashes, guards, copy", all.runs / c, whole, cp.runs, &cp);
    row("  of which the kernel's runs", all.kernel / c, whole, cp.kernel, &cp);
    row("reference", all.reference / c, whole, cp.reference, &cp);
    row("comparison", all.compare / c, whole, cp.compare, &cp);
    row("release: buffers freed", all.release / c, whole, cp.release, &cp);
    double rest = (all.wall - all.setup - all.alloc - all.inputs - all.runs - all.reference -
                   all.compare - all.release) /
                  c;
    if (rest >= 0)
        row("run not in phases", rest, whole, -1, &cp);
    else /* the reference runs on the device while the host compares what it has */
        printf("  phases overlap by %.3f ms a case\n", -1e3 * rest);
    if (campaign > 0 && whole - per - draw >= 0)
        row("worker round trip and supervisor", whole - per - draw, whole, -1, &cp);
    else if (campaign > 0)
        printf("  the campaign's workers ran faster than this process, by %.3f ms a case\n",
               1e3 * (per + draw - whole));
    if (campaign > 0 && cp.cases > 0)
        printf("  in the campaign's workers: %.3f ms a case from its dispatch to its result, "
               "%.3f ms between its result and the next case's dispatch\n",
               1e3 * cp.worker / (double)cp.cases, 1e3 * (whole - cp.worker / (double)cp.cases));
    printf("  GPU busy (kernel runs + device reference) / wall: %.1f%%\n",
           wall > 0 ? 100 * (all.kernel + all.device_ref) / c / wall : 0);
    printf("  %-12s %6s %7s %8s %11s %10s\n", "size (host)", "cases", "share", "faults",
           "ms per case", "of the run");
    for (size_t j = 0; j < N_SIZES; j++) {
        const struct sums *b = &by_size[j];
        int nb = b->cases + b->errors;
        printf("  %-12s %6d %6.1f%% %8d %11.2f %9.1f%%\n", SIZES[j].name, nb,
               n ? 100.0 * nb / n : 0, b->faults, nb ? 1e3 * b->wall / nb : 0,
               all.wall > 0 ? 100 * b->wall / all.wall : 0);
    }
    vmm_calls(&before, &as, all.cases + all.errors + small.cases + small.errors);
    if (as.pooled + as.allocated > 0) /* this process's runs, every kernel so far */
        printf("  device blocks: %llu from the pool, %llu allocated, %llu freed; flush spans: "
               "%llu reused, %llu mapped, %llu unmapped; sparse pieces: %llu kept granules, %llu "
               "new\n", (unsigned long long)as.pooled, (unsigned long long)as.allocated,
               (unsigned long long)as.freed, (unsigned long long)as.spans_reused,
               (unsigned long long)as.spans_mapped, (unsigned long long)as.spans_unmapped,
               (unsigned long long)as.granules_reused, (unsigned long long)as.granules_created);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 300, i = 1;
    uint64_t seed = 7;
    int workers = 1;
    const char *mutant = NULL;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "--cases") == 0)
            n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--workers") == 0)
            workers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--mutant") == 0)
            mutant = argv[i + 1];
        else
            break;
    }
    if (n <= 0 || workers <= 0 || i >= argc || argv[i][0] == '-') {
        fprintf(stderr,
                "usage: bench_campaign_phases [--cases N] [--seed S] [--workers W] [--mutant M] "
                "KERNEL...\n");
        return 2;
    }
    gg_registry_init();
    gg_ref_threads(1); /* a campaign worker's reference threads and allocator settings */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    int rc = 0;
    for (; i < argc; i++)
        rc |= bench(argv[i], mutant, n, seed, workers);
    return rc;
}

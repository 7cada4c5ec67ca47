/*
 * bench_fuzz_detection — time to first detection of faulty kernels from a cold start (empty
 * corpus), over several seeds, for the targeted strategy and the uniform baseline (issue
 * targets: median <= 10 s for the zero, i64 and alias mutants, <= 30 s for the rest, found within
 * 120 s in at least 9 of 10 seeds; targeted at least 10x faster than uniform).
 * What is measured: every in-tree kernel x mutant pair by default; with --kernel (repeatable)
 * the named kernels, and with --plugin (repeatable, loaded here and by every worker) and no
 * --kernel the plugins' kernels. A kernel with mutants contributes one target per mutant (or
 * per mutant --mutant names: a name or a comma-separated list); a kernel without mutants is
 * one faulty kernel to find as it is (a correct control should then be found by no seed).
 * Each campaign runs in its own child process with its own temporary directories and
 * --workers W; --jobs P campaigns run at once. The first seed of each target minimises its
 * finding, which gives the group counts before and after. Prints one line per target: the seeds
 * that found it, the median time to the first finding (a miss counts as never), the classes of
 * the first findings, and the uniform baseline's; writes every campaign to a CSV file.
 * Usage: bench_fuzz_detection [--seeds N] [--budget S] [--uniform-seeds N] [--uniform-budget S]
 *        [--jobs P] [--workers W] [--plugin LIB.so]... [--kernel NAME]...
 *        [--mutant NAME[,NAME]...] [--csv FILE] [--ggfuzz PATH]
 */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/campaign/gg_campaign.h"

#ifndef GG_GGFUZZ_EXE
#define GG_GGFUZZ_EXE "ggfuzz"
#endif

#define MAX_NAMED 64

struct opts {
    int seeds, uniform_seeds, jobs, workers;
    double budget, uniform_budget;
    const char *mutant, *csv, *exe;
    const char *kernels[MAX_NAMED], *plugins[MAX_NAMED];
    int n_kernels, n_plugins;
};

/* One campaign: a target (a kernel and one of its mutants, or a kernel without mutants: mutant
   NULL), a strategy and a seed; its outcome comes back through a pipe. */
struct job {
    const struct gg_kernel *k;
    const char *mutant;
    enum gg_strategy strategy;
    uint64_t seed;
    int minimize;
    pid_t pid;
    int fd;
    struct outcome {
        int ok, found;
        double first_s, seconds;
        int64_t execs, groups, groups_min;
        enum gg_class cls;
    } out;
};

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* The child: one campaign in a fresh directory, its outcome written to fd. */
static void child(const struct opts *o, const struct job *j, int fd)
{
    char dir[] = "/tmp/ggfuzz-detect-XXXXXX", corpus[64], artifacts[64];
    struct outcome out = {0};
    if (mkdtemp(dir)) {
        snprintf(corpus, sizeof corpus, "%s/corpus", dir);
        snprintf(artifacts, sizeof artifacts, "%s/artifacts", dir);
        const char *dirs[] = {corpus};
        int uniform = j->strategy == GG_STRATEGY_UNIFORM;
        struct gg_campaign_config cc = {
            .kernel = j->k->name,
            .mutant = j->mutant,
            .strategy = j->strategy,
            .max_total_time_s = uniform ? o->uniform_budget : o->budget,
            .seed = j->seed,
            .workers = o->workers,
            .corpus_dirs = dirs,
            .n_corpus_dirs = 1,
            .artifacts_dir = artifacts,
            .stats_dir = dir,
            .stop_after_findings = 1,
            .no_minimize = !j->minimize,
            .worker_exe = o->exe,
            .plugins = o->plugins,
            .n_plugins = o->n_plugins};
        struct gg_campaign_stats st;
        char err[1024];
        if (gg_campaign_run(&cc, &st, err, sizeof err) == GG_OK) {
            out.ok = 1;
            out.found = st.new_sigs > 0;
            out.first_s = st.first_finding_s;
            out.seconds = st.seconds;
            out.execs = out.found ? st.first_finding_execs : st.execs;
            out.groups = st.first_groups;
            out.groups_min = st.first_groups_min;
            out.cls = st.first_class;
        } else {
            fprintf(stderr, "%s+%s seed %llu: %s\n", j->k->name, j->mutant ? j->mutant : "-",
                    (unsigned long long)j->seed, err);
        }
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    ssize_t w = write(fd, &out, sizeof out);
    _exit(w == (ssize_t)sizeof out ? 0 : 1);
}

static int start(const struct opts *o, struct job *j)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        child(o, j, p[1]);
    }
    close(p[1]);
    j->pid = pid;
    j->fd = p[0];
    return 0;
}

/* Runs every job, at most o->jobs at a time. */
static void run_all(const struct opts *o, struct job *jobs, int n)
{
    int next = 0, running = 0;
    while (next < n || running > 0) {
        while (running < o->jobs && next < n) {
            if (start(o, &jobs[next]) == 0)
                running++;
            next++;
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0 && errno == ECHILD)
            break;
        for (int i = 0; i < next; i++)
            if (jobs[i].pid == pid) {
                /* The child has exited: its outcome is in the pipe. */
                jobs[i].pid = -pid;
                ssize_t got = read(jobs[i].fd, &jobs[i].out, sizeof jobs[i].out);
                if (got != (ssize_t)sizeof jobs[i].out)
                    memset(&jobs[i].out, 0, sizeof jobs[i].out);
                close(jobs[i].fd);
                jobs[i].pid = 0;
                running--;
                fprintf(stderr, ".");
            }
    }
    fprintf(stderr, "\n");
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of the detection times of n campaigns, a missed one counting as +inf. */
static double median_first(const struct job *j, int n)
{
    double t[64];
    for (int i = 0; i < n && i < 64; i++)
        t[i] = j[i].out.found ? j[i].out.first_s : INFINITY;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static int found_within(const struct job *j, int n, double limit)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += j[i].out.found && j[i].out.first_s <= limit;
    return c;
}

/* Appends v to a repeatable option's list; -1 when it is full. */
static int push(const char **list, int *n, const char *v)
{
    if (*n >= MAX_NAMED)
        return -1;
    list[(*n)++] = v;
    return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!v)
            return -1;
        if (!strcmp(a, "--seeds")) o->seeds = atoi(v);
        else if (!strcmp(a, "--uniform-seeds")) o->uniform_seeds = atoi(v);
        else if (!strcmp(a, "--budget")) o->budget = atof(v);
        else if (!strcmp(a, "--uniform-budget")) o->uniform_budget = atof(v);
        else if (!strcmp(a, "--jobs")) o->jobs = atoi(v);
        else if (!strcmp(a, "--workers")) o->workers = atoi(v);
        else if (!strcmp(a, "--kernel")) bad = push(o->kernels, &o->n_kernels, v);
        else if (!strcmp(a, "--plugin")) bad = push(o->plugins, &o->n_plugins, v);
        else if (!strcmp(a, "--mutant")) o->mutant = v;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--ggfuzz")) o->exe = v;
        else return -1;
        if (bad)
            return -1;
        i++;
    }
    return o->seeds > 0 && o->seeds <= 64 && o->uniform_seeds >= 0 && o->uniform_seeds <= 64 &&
                   o->jobs > 0 && o->workers > 0 && o->budget > 0 ? 0 : -1;
}

/* The jobs of one target: seeds targeted campaigns, then uniform_seeds uniform ones. */
static int add_target(const struct opts *o, const struct gg_kernel *k, const char *m,
                      struct job *jobs, int n)
{
    for (int s = 0; s < o->seeds + o->uniform_seeds; s++) {
        int uniform = s >= o->seeds;
        jobs[n++] = (struct job){.k = k, .mutant = m,
                                 .strategy = uniform ? GG_STRATEGY_UNIFORM : GG_STRATEGY_TARGETED,
                                 .seed = 1000u + (uint64_t)(uniform ? s - o->seeds : s),
                                 .minimize = s == 0};
    }
    return n;
}

/* The classes of the first findings of n campaigns with their counts ("nan", "nan 9, snr 1"),
   or "-" when none found. */
static void classes_of(const struct job *j, int n, char *buf, size_t len)
{
    int count[GG_CLASS_COUNT] = {0};
    for (int i = 0; i < n; i++)
        if (j[i].out.found && (unsigned)j[i].out.cls < GG_CLASS_COUNT)
            count[j[i].out.cls]++;
    size_t at = 0;
    int kinds = 0;
    for (int c = 0; c < GG_CLASS_COUNT; c++)
        kinds += count[c] > 0;
    buf[0] = '\0';
    for (int c = 0; c < GG_CLASS_COUNT && at < len; c++) {
        if (!count[c])
            continue;
        at += (size_t)snprintf(buf + at, len - at, kinds > 1 ? "%s%s %d" : "%s%s",
                               at ? ", " : "", gg_class_name((enum gg_class)c), count[c]);
    }
    if (!at)
        snprintf(buf, len, "-");
}

static void report(const struct opts *o, const struct job *jobs, int targets)
{
    int per = o->seeds + o->uniform_seeds;
    printf("%-28s %-26s %7s %9s %-20s %7s %9s %8s %s\n", "kernel", "mutant", "found", "targ_med",
           "classes", "u_found", "unif_med", "ratio", "groups");
    for (int p = 0; p < targets; p++) {
        const struct job *t = jobs + p * per, *u = t + o->seeds;
        double mt = median_first(t, o->seeds);
        double mu = o->uniform_seeds ? median_first(u, o->uniform_seeds) : NAN;
        char ratio[32], groups[48], classes[128], found[16], ufound[16];
        if (!o->uniform_seeds)
            snprintf(ratio, sizeof ratio, "-");
        else if (isinf(mu))
            snprintf(ratio, sizeof ratio, ">%.0f", o->uniform_budget / (mt > 0 ? mt : 1e-3));
        else
            snprintf(ratio, sizeof ratio, "%.1f", mu / (mt > 0 ? mt : 1e-3));
        if (t->out.found && t->out.groups_min >= 0)
            snprintf(groups, sizeof groups, "%lld -> %lld", (long long)t->out.groups,
                     (long long)t->out.groups_min);
        else
            snprintf(groups, sizeof groups, "-");
        classes_of(t, o->seeds, classes, sizeof classes);
        snprintf(found, sizeof found, "%d/%d", found_within(t, o->seeds, o->budget), o->seeds);
        snprintf(ufound, sizeof ufound, "%d/%d",
                 o->uniform_seeds ? found_within(u, o->uniform_seeds, o->uniform_budget) : 0,
                 o->uniform_seeds);
        printf("%-28s %-26s %7s %9.2f %-20s %7s %9.2f %8s %s\n", t->k->name,
               t->mutant ? t->mutant : "(as it is)", found, mt, classes, ufound, mu, ratio,
               groups);
    }
}

static void write_csv(const char *path, const struct job *jobs, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "kernel,mutant,strategy,seed,ran,found,first_s,seconds,execs,class,groups,"
               "groups_min\n");
    for (int i = 0; i < n; i++) {
        const struct job *j = &jobs[i];
        fprintf(f, "%s,%s,%s,%llu,%d,%d,%.3f,%.3f,%lld,%s,%lld,%lld\n", j->k->name,
                j->mutant ? j->mutant : "",
                j->strategy == GG_STRATEGY_UNIFORM ? "uniform" : "targeted",
                (unsigned long long)j->seed, j->out.ok, j->out.found, j->out.first_s,
                j->out.seconds, (long long)j->out.execs,
                j->out.found ? gg_class_name(j->out.cls) : "-", (long long)j->out.groups,
                (long long)j->out.groups_min);
    }
    fclose(f);
}

/* Whether kernel k is measured: named by --kernel, else loaded by --plugin (registry index at
   or past first_plugin), else in-tree with mutants. */
static int wanted(const struct opts *o, const struct gg_kernel *k, size_t index,
                  size_t first_plugin)
{
    if (o->n_kernels > 0) {
        for (int i = 0; i < o->n_kernels; i++)
            if (!strcmp(o->kernels[i], k->name))
                return 1;
        return 0;
    }
    if (o->n_plugins > 0)
        return index >= first_plugin;
    return k->mutants && k->mutants[0];
}

int main(int argc, char **argv)
{
    struct opts o = {.seeds = 10, .uniform_seeds = 3, .jobs = 2, .workers = 1, .budget = 120,
                     .uniform_budget = 120, .csv = "detection.csv", .exe = GG_GGFUZZ_EXE};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_fuzz_detection [--seeds N] [--budget S] [--uniform-seeds N] "
                        "[--uniform-budget S] [--jobs P] [--workers W] [--plugin LIB.so]... "
                        "[--kernel NAME]... [--mutant NAME[,NAME]...] [--csv FILE] "
                        "[--ggfuzz PATH]\n");
        return 2;
    }
    gg_registry_init();
    size_t first_plugin = gg_registry_count();
    for (int i = 0; i < o.n_plugins; i++) {
        char err[1024];
        if (gg_plugin_load(o.plugins[i], err, sizeof err) != GG_OK) {
            fprintf(stderr, "bench_fuzz_detection: %s\n", err);
            return 2;
        }
    }
    for (int i = 0; i < o.n_kernels; i++)
        if (!gg_registry_find(o.kernels[i])) {
            fprintf(stderr, "bench_fuzz_detection: unknown kernel '%s'\n", o.kernels[i]);
            return 2;
        }
    int per = o.seeds + o.uniform_seeds, cap = 0, n = 0, targets = 0;
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        int m = 0;
        while (k->mutants && k->mutants[m])
            m++;
        cap += per * (m > 0 ? m : 1);
    }
    struct job *jobs = calloc((size_t)(cap ? cap : 1), sizeof *jobs);
    if (!jobs)
        return 1;
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (!wanted(&o, k, i, first_plugin))
            continue;
        if (!k->mutants || !k->mutants[0]) {
            n = add_target(&o, k, NULL, jobs, n);
            targets++;
            continue;
        }
        struct gg_problem wanted_mutants = {.mutant = o.mutant};
        for (const char *const *m = k->mutants; *m; m++) {
            if (o.mutant && !gg_mutant_is(&wanted_mutants, *m))
                continue;
            n = add_target(&o, k, *m, jobs, n);
            targets++;
        }
    }
    printf("detection: %d targets, %d targeted seeds (%g s), %d uniform seeds (%g s), %d jobs x "
           "%d workers\n", targets, o.seeds, o.budget, o.uniform_seeds, o.uniform_budget, o.jobs,
           o.workers);
    fflush(stdout);
    run_all(&o, jobs, n);
    report(&o, jobs, targets);
    write_csv(o.csv, jobs, n);
    free(jobs);
    return 0;
}

/*
 * bench_triage — how well a campaign's findings collapse into bugs. For every in-tree mutant
 * (the kernel and mutant of its exposing case in corpus/mutants/, or those --mutant names), and
 * for kernels carrying two mutants at once (`--pair KERNEL:A,B`, repeatable, alone: the pairs only;
 * a default set without --pair or --mutant), a campaign of
 * --budget seconds on --workers workers from an empty corpus (night 1), then a second campaign
 * against the same bug with a store of its own, another seed and night 1's store as its known set
 * (night 2). Prints per target: the signatures met, the buckets (bugs) they were filed in, the
 * signatures left untriaged, the largest representative against the hand-written exposing case
 * (groups / output elements), and night 2's new buckets; then the median and the worst bucket
 * count. Targets: at most 3 buckets for one mutant, at least 2 for a pair, representatives no
 * larger than the exposing cases, and 0 new buckets on night 2. --jobs J runs J targets at once
 * (each its own campaigns of --workers workers: give it the cores). The nights can run apart:
 * --night 1 --keep DIR runs the first nights and keeps their stores, --night 2 --keep DIR the
 * second nights against them later (night 1's numbers read back from its store).
 * --mutants DIR reads the exposing cases from DIR instead of the source tree's corpus/mutants.
 * Usage: bench_triage [--budget S] [--workers W] [--jobs J] [--mutant NAME]...
 *        [--pair KERNEL:A,B]... [--no-second-night] [--night 1|2] [--keep DIR] [--ggfuzz PATH]
 *        [--mutants DIR]
 */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/campaign/gg_campaign.h"

#ifndef GG_GGFUZZ_EXE
#define GG_GGFUZZ_EXE "ggfuzz"
#endif
#define MUTANTS_DIR GG_SOURCE_DIR "/corpus/mutants"
#define MAX_TARGETS 64

struct opts {
    double budget;
    int workers, second_night, jobs;
    int night; /* 0: both (or one with --no-second-night), 1 or 2: that night alone */
    const char *keep, *exe, *mutants_dir;
    const char *only[MAX_TARGETS], *pairs[MAX_TARGETS];
    int n_only, n_pairs;
};

/* One bug (or two) to triage, with the size of its hand-written exposing case (-1: none). */
struct target {
    char kernel[GG_CASE_NAME_MAX], mutant[GG_CASE_NAME_MAX];
    int64_t case_groups, case_elems;
    int pair;
};

/* What one night gave. */
struct night {
    int ok;
    int64_t sigs, buckets, new_buckets, untriaged, execs;
    int64_t rep_groups, rep_elems; /* the largest representative */
};

/* Kernels that carry two of their mutants at once when no --pair is given. */
static const char *const DEFAULT_PAIRS[] = {
    "grouped_bf16_cpu_tiled:wgrad_zero_uninit,tail_rows_unwritten",
    "batched_bf16_cpu_tiled:n_tail,i32_store_offset",
    "grouped_fp8_cpu_tiled:fnuz_as_ocp,i32_group_base",
};

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void case_size(struct gg_case *c, int64_t *groups, int64_t *elems)
{
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_problem p;
    char err[256];
    *groups = *elems = -1;
    if (gg_case_expand(c, err, sizeof err) != GG_OK)
        return;
    gg_case_problem(c, opts, &p);
    *groups = p.groups;
    *elems = p.op == GG_OP_MOE_SORTED ? p.m * p.topk * p.n : gg_problem_out_elems(&p);
}

static int wanted(const struct opts *o, const char *mutant)
{
    if (o->n_only == 0)
        return o->n_pairs == 0; /* --pair alone: the pairs only */
    for (int i = 0; i < o->n_only; i++)
        if (strcmp(o->only[i], mutant) == 0)
            return 1;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct target *)a)->mutant, ((const struct target *)b)->mutant);
}

/* The targets: one per exposing case in corpus/mutants/, then the pairs. */
static int targets_of(const struct opts *o, struct target *t)
{
    int n = 0;
    DIR *d = opendir(o->mutants_dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < MAX_TARGETS;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        char path[1024], err[512];
        struct gg_case c;
        snprintf(path, sizeof path, "%s/%s", o->mutants_dir, e->d_name);
        if (gg_case_load(path, &c, err, sizeof err) != GG_OK) {
            fprintf(stderr, "bench_triage: %s\n", err);
            continue;
        }
        if (c.mutant[0] && wanted(o, c.mutant)) {
            struct target *x = &t[n++];
            memset(x, 0, sizeof *x);
            snprintf(x->kernel, sizeof x->kernel, "%s", c.kernel);
            snprintf(x->mutant, sizeof x->mutant, "%s", c.mutant);
            case_size(&c, &x->case_groups, &x->case_elems);
        }
        gg_case_free(&c);
    }
    if (d)
        closedir(d);
    qsort(t, (size_t)n, sizeof *t, cmp_name);
    int n_pairs = o->n_pairs ? o->n_pairs : (int)(sizeof DEFAULT_PAIRS / sizeof *DEFAULT_PAIRS);
    for (int i = 0; i < n_pairs && n < MAX_TARGETS && (o->n_only == 0 || o->n_pairs > 0); i++) {
        const char *spec = o->n_pairs ? o->pairs[i] : DEFAULT_PAIRS[i];
        const char *colon = strchr(spec, ':');
        if (!colon)
            continue;
        struct target *x = &t[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->kernel, sizeof x->kernel, "%.*s", (int)(colon - spec), spec);
        snprintf(x->mutant, sizeof x->mutant, "%s", colon + 1);
        x->case_groups = x->case_elems = -1;
        x->pair = 1;
    }
    return n;
}

/* A night's outcome as its store holds it: its signatures, buckets, untriaged signatures and
   largest representative. 0 when the store cannot be read. */
static int read_store(const char *artifacts, struct night *out, char *err, size_t err_len)
{
    struct gg_bucket_list l;
    if (gg_buckets_scan(artifacts, &l, err, err_len) != GG_OK)
        return 0;
    *out = (struct night){.ok = 1, .sigs = (int64_t)l.n_members, .buckets = (int64_t)l.n,
                          .untriaged = l.untriaged};
    for (size_t i = 0; i < l.n; i++)
        if (l.b[i].groups > out->rep_groups ||
            (l.b[i].groups == out->rep_groups && l.b[i].elems > out->rep_elems)) {
            out->rep_groups = l.b[i].groups;
            out->rep_elems = l.b[i].elems;
        }
    gg_buckets_free(&l);
    return 1;
}

/* One night in its own child process: a campaign into dir (known: the store of an earlier
   night, or NULL), its outcome read back from the store. */
static struct night run_night(const struct opts *o, const struct target *t, const char *dir,
                              uint64_t seed, const char *known)
{
    int p[2];
    struct night out = {0};
    if (pipe(p) != 0)
        return out;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char corpus[1024], artifacts[1024], err[1024];
        snprintf(corpus, sizeof corpus, "%s/corpus", dir);
        snprintf(artifacts, sizeof artifacts, "%s/artifacts", dir);
        const char *dirs[] = {corpus};
        struct gg_campaign_config cc = {.kernel = t->kernel,
                                        .mutant = t->mutant,
                                        .max_total_time_s = o->budget,
                                        .seed = seed,
                                        .workers = o->workers,
                                        .corpus_dirs = dirs,
                                        .n_corpus_dirs = 1,
                                        .artifacts_dir = artifacts,
                                        .stats_dir = dir,
                                        .known_path = known,
                                        .worker_exe = o->exe};
        struct gg_campaign_stats st;
        if (gg_campaign_run(&cc, &st, err, sizeof err) == GG_OK &&
            read_store(artifacts, &out, err, sizeof err)) {
            out.sigs = st.unique_sigs;
            out.buckets = st.buckets;
            out.new_buckets = st.new_buckets;
            out.untriaged = st.untriaged;
            out.execs = st.execs;
        } else {
            fprintf(stderr, "bench_triage: %s+%s: %s\n", t->kernel, t->mutant, err);
        }
        ssize_t w = write(p[1], &out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(p[1]);
    if (pid > 0) {
        int status;
        if (read(p[0], &out, sizeof out) != (ssize_t)sizeof out)
            memset(&out, 0, sizeof out);
        waitpid(pid, &status, 0);
    }
    close(p[0]);
    return out;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int parse(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-second-night")) {
            o->second_night = 0;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--budget")) o->budget = atof(v);
        else if (!strcmp(a, "--jobs")) o->jobs = atoi(v);
        else if (!strcmp(a, "--night")) o->night = atoi(v);
        else if (!strcmp(a, "--workers")) o->workers = atoi(v);
        else if (!strcmp(a, "--keep")) o->keep = v;
        else if (!strcmp(a, "--ggfuzz")) o->exe = v;
        else if (!strcmp(a, "--mutants")) o->mutants_dir = v;
        else if (!strcmp(a, "--mutant") && o->n_only < MAX_TARGETS) o->only[o->n_only++] = v;
        else if (!strcmp(a, "--pair") && o->n_pairs < MAX_TARGETS) o->pairs[o->n_pairs++] = v;
        else return -1;
        i++;
    }
    if (o->night == 2 && !o->keep)
        return -1; /* the first nights' stores are read from --keep */
    return o->budget > 0 && o->workers > 0 && o->jobs > 0 && o->night >= 0 && o->night <= 2 ? 0
                                                                                           : -1;
}

/* What one target gave: its nights (b.ok = 0 when the second did not run). */
struct outcome {
    struct night a, b;
};

/* Runs the nights of target i (of t) in root. */
static struct outcome run_target(const struct opts *o, const struct target *t, int i,
                                 const char *root)
{
    char d1[1100], d2[1100], known[1200], err[1024];
    struct outcome r = {{0}, {0}};
    snprintf(d1, sizeof d1, "%s/night1", root);
    snprintf(d2, sizeof d2, "%s/night2", root);
    snprintf(known, sizeof known, "%s/artifacts", d1);
    if (o->night == 2) {
        if (!read_store(known, &r.a, err, sizeof err))
            fprintf(stderr, "bench_triage: %s+%s: %s\n", t->kernel, t->mutant, err);
    } else {
        gg_mkdir_p(d1);
        r.a = run_night(o, t, d1, 1000 + (uint64_t)i, NULL);
    }
    if (o->night != 1 && o->second_night && r.a.ok) {
        gg_mkdir_p(d2);
        r.b = run_night(o, t, d2, 2000 + (uint64_t)i, known);
    }
    return r;
}

/* The directory of target i's nights: below --keep, or a fresh temporary one. 0 on failure. */
static int target_root(const struct opts *o, const struct target *t, char *root, size_t len)
{
    if (o->keep) {
        int n = snprintf(root, len, "%s/%s-%s", o->keep, t->kernel, t->mutant);
        return n >= 0 && (size_t)n < len && gg_mkdir_p(root) == 0;
    }
    snprintf(root, len, "/tmp/ggfuzz-triage-XXXXXX");
    return mkdtemp(root) != NULL;
}

/* Runs every target, o->jobs at a time (each in a child that reports on a pipe). */
static void run_all(const struct opts *o, const struct target *t, int n, struct outcome *r)
{
    int fds[MAX_TARGETS];
    pid_t pids[MAX_TARGETS];
    int next = 0, running = 0;
    while (next < n || running > 0) {
        if (next < n && running < o->jobs) {
            int i = next++, p[2];
            char root[1024];
            memset(&r[i], 0, sizeof r[i]);
            pids[i] = -1;
            if (!target_root(o, &t[i], root, sizeof root) || pipe(p) != 0)
                continue;
            fflush(NULL);
            if ((pids[i] = fork()) == 0) {
                close(p[0]);
                struct outcome x = run_target(o, &t[i], i, root);
                ssize_t w = write(p[1], &x, sizeof x);
                if (!o->keep)
                    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
                _exit(w == (ssize_t)sizeof x ? 0 : 1);
            }
            close(p[1]);
            fds[i] = p[0];
            if (pids[i] < 0)
                close(fds[i]);
            else
                running++;
            continue;
        }
        int status;
        pid_t done = wait(&status);
        for (int i = 0; i < next && done > 0; i++)
            if (pids[i] == done) {
                if (read(fds[i], &r[i], sizeof r[i]) != (ssize_t)sizeof r[i])
                    memset(&r[i], 0, sizeof r[i]);
                close(fds[i]);
                pids[i] = -1;
                running--;
                fprintf(stderr, "bench_triage: %s %s done\n", t[i].kernel, t[i].mutant);
            }
        if (done < 0)
            break;
    }
}

int main(int argc, char **argv)
{
    struct opts o = {.budget = 300, .workers = 2, .second_night = 1, .jobs = 1,
                     .exe = GG_GGFUZZ_EXE, .mutants_dir = MUTANTS_DIR};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_triage [--budget S] [--workers W] [--jobs J] "
                        "[--mutant NAME]... [--pair KERNEL:A,B]... [--no-second-night] "
                        "[--night 1|2] [--keep DIR] [--ggfuzz PATH] [--mutants DIR] (--night 2 "
                        "needs --keep)\n");
        return 2;
    }
    static struct target t[MAX_TARGETS];
    static struct outcome r[MAX_TARGETS];
    int n = targets_of(&o, t);
    int second = o.second_night && o.night != 1;
    printf("triage: %d targets, %g s per night on %d workers, %d at a time, %s\n", n, o.budget,
           o.workers, o.jobs, o.night == 1 ? "first night" : o.night == 2 ? "second night"
                              : second ? "two nights" : "one night");
    run_all(&o, t, n, r);
    printf("%-26s %-40s %6s %7s %9s %15s %15s %6s\n", "kernel", "mutant", "sigs", "buckets",
           "untriaged", "rep grp/out", "case grp/out", "new@2");
    int64_t singles[MAX_TARGETS];
    int n_singles = 0, fails = 0;
    for (int i = 0; i < n; i++) {
        const struct night *a = &r[i].a, *b = &r[i].b;
        char rep[32], cs[32], new2[16];
        snprintf(rep, sizeof rep, "%lld/%lld", (long long)a->rep_groups,
                 (long long)a->rep_elems);
        snprintf(cs, sizeof cs, t[i].case_groups < 0 ? "-" : "%lld/%lld",
                 (long long)t[i].case_groups, (long long)t[i].case_elems);
        snprintf(new2, sizeof new2, b->ok ? "%lld" : "-", (long long)b->new_buckets);
        int bad = !a->ok || a->buckets == 0 || (t[i].pair ? a->buckets < 2 : a->buckets > 3) ||
                  (t[i].case_groups >= 0 &&
                   (a->rep_groups > t[i].case_groups ||
                    (a->rep_groups == t[i].case_groups && a->rep_elems > t[i].case_elems))) ||
                  (b->ok && b->new_buckets > 0) || (second && !t[i].pair && !b->ok);
        fails += bad;
        printf("%-26s %-40s %6lld %7lld %9lld %15s %15s %6s%s\n", t[i].kernel, t[i].mutant,
               (long long)a->sigs, (long long)a->buckets, (long long)a->untriaged, rep, cs, new2,
               bad ? "  MISSES" : "");
        if (!t[i].pair && a->ok)
            singles[n_singles++] = a->buckets;
    }
    if (n_singles > 0) {
        qsort(singles, (size_t)n_singles, sizeof *singles, cmp_i64);
        printf("buckets per mutant: median %lld, worst %lld; %d of %d targets miss a target\n",
               (long long)singles[n_singles / 2], (long long)singles[n_singles - 1], fails, n);
    }
    return fails ? 1 : 0;
}

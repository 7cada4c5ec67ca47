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
 * larger than the exposing cases, and 0 new buckets on night 2.
 * Usage: bench_triage [--budget S] [--workers W] [--mutant NAME]... [--pair KERNEL:A,B]...
 *        [--no-second-night] [--keep DIR] [--ggfuzz PATH]
 */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/gg_fuzz.h"

#ifndef GG_GGFUZZ_EXE
#define GG_GGFUZZ_EXE "ggfuzz"
#endif
#define MUTANTS_DIR GG_SOURCE_DIR "/corpus/mutants"
#define MAX_TARGETS 64

struct opts {
    double budget;
    int workers, second_night;
    const char *keep, *exe;
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
    DIR *d = opendir(MUTANTS_DIR);
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < MAX_TARGETS;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        char path[1024], err[512];
        struct gg_case c;
        snprintf(path, sizeof path, "%s/%s", MUTANTS_DIR, e->d_name);
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
        struct gg_bucket_list l;
        if (gg_campaign_run(&cc, &st, err, sizeof err) == GG_OK &&
            gg_buckets_scan(artifacts, &l, err, sizeof err) == GG_OK) {
            out = (struct night){.ok = 1, .sigs = st.unique_sigs, .buckets = st.buckets,
                                 .new_buckets = st.new_buckets, .untriaged = st.untriaged,
                                 .execs = st.execs};
            for (size_t i = 0; i < l.n; i++)
                if (l.b[i].groups > out.rep_groups ||
                    (l.b[i].groups == out.rep_groups && l.b[i].elems > out.rep_elems)) {
                    out.rep_groups = l.b[i].groups;
                    out.rep_elems = l.b[i].elems;
                }
            gg_buckets_free(&l);
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
        else if (!strcmp(a, "--workers")) o->workers = atoi(v);
        else if (!strcmp(a, "--keep")) o->keep = v;
        else if (!strcmp(a, "--ggfuzz")) o->exe = v;
        else if (!strcmp(a, "--mutant") && o->n_only < MAX_TARGETS) o->only[o->n_only++] = v;
        else if (!strcmp(a, "--pair") && o->n_pairs < MAX_TARGETS) o->pairs[o->n_pairs++] = v;
        else return -1;
        i++;
    }
    return o->budget > 0 && o->workers > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct opts o = {.budget = 300, .workers = 2, .second_night = 1, .exe = GG_GGFUZZ_EXE};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_triage [--budget S] [--workers W] [--mutant NAME]... "
                        "[--pair KERNEL:A,B]... [--no-second-night] [--keep DIR] "
                        "[--ggfuzz PATH]\n");
        return 2;
    }
    static struct target t[MAX_TARGETS];
    int n = targets_of(&o, t);
    printf("triage: %d targets, %g s per night on %d workers%s\n", n, o.budget, o.workers,
           o.second_night ? ", two nights" : "");
    printf("%-26s %-40s %6s %7s %9s %15s %15s %6s\n", "kernel", "mutant", "sigs", "buckets",
           "untriaged", "rep grp/out", "case grp/out", "new@2");
    int64_t singles[MAX_TARGETS];
    int n_singles = 0, fails = 0;
    for (int i = 0; i < n; i++) {
        char root[1024], d1[1100], d2[1100], known[1200];
        if (o.keep) {
            int len = snprintf(root, sizeof root, "%s/%s-%s", o.keep, t[i].kernel, t[i].mutant);
            if (len < 0 || (size_t)len >= sizeof root || gg_mkdir_p(root) != 0)
                continue;
        } else {
            snprintf(root, sizeof root, "/tmp/ggfuzz-triage-XXXXXX");
            if (!mkdtemp(root))
                continue;
        }
        snprintf(d1, sizeof d1, "%s/night1", root);
        snprintf(d2, sizeof d2, "%s/night2", root);
        snprintf(known, sizeof known, "%s/artifacts", d1);
        gg_mkdir_p(d1);
        struct night a = run_night(&o, &t[i], d1, 1000 + (uint64_t)i, NULL), b = {0};
        if (o.second_night && a.ok) {
            gg_mkdir_p(d2);
            b = run_night(&o, &t[i], d2, 2000 + (uint64_t)i, known);
        }
        char rep[32], cs[32], new2[16];
        snprintf(rep, sizeof rep, "%lld/%lld", (long long)a.rep_groups, (long long)a.rep_elems);
        snprintf(cs, sizeof cs, t[i].case_groups < 0 ? "-" : "%lld/%lld",
                 (long long)t[i].case_groups, (long long)t[i].case_elems);
        snprintf(new2, sizeof new2, b.ok ? "%lld" : "-", (long long)b.new_buckets);
        int bad = !a.ok || a.buckets == 0 || (t[i].pair ? a.buckets < 2 : a.buckets > 3) ||
                  (t[i].case_groups >= 0 &&
                   (a.rep_groups > t[i].case_groups ||
                    (a.rep_groups == t[i].case_groups && a.rep_elems > t[i].case_elems))) ||
                  (b.ok && b.new_buckets > 0);
        fails += bad;
        printf("%-26s %-40s %6lld %7lld %9lld %15s %15s %6s%s\n", t[i].kernel, t[i].mutant,
               (long long)a.sigs, (long long)a.buckets, (long long)a.untriaged, rep, cs, new2,
               bad ? "  MISSES" : "");
        fflush(stdout);
        if (!t[i].pair && a.ok)
            singles[n_singles++] = a.buckets;
        if (!o.keep)
            nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    if (n_singles > 0) {
        qsort(singles, (size_t)n_singles, sizeof *singles, cmp_i64);
        printf("buckets per mutant: median %lld, worst %lld; %d of %d targets miss a target\n",
               (long long)singles[n_singles / 2], (long long)singles[n_singles - 1], fails, n);
    }
    return fails ? 1 : 0;
}

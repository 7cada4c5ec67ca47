/*
 * test_gpu_reference.c — the device reference against the host's. On every case of the quick
 * tier, the seeds and the mutant corpus that a GPU kernel supports, the reference computed on the
 * device must equal the host's within the fp64 rounding of a reordered sum, and the run's verdict
 * and signature must not depend on where the reference ran, for the correct kernels and for
 * every GPU mutant that has a corpus case (but races, whose class varies from run to run). A planted fault of the device reference (a wrong group
 * offset, a dropped reduction tail) must make the comparison fail.
 *
 * The bound. Decoded inputs have at most 24 significant bits, so every product a_t·b_t is exact
 * in binary64 and the only rounding is the summation's: in any order (with or without fused
 * multiply-adds) the computed sum of red terms lies within γ_red·Σ|a_t·b_t| of the exact one,
 * γ_n = n·u/(1 - n·u), u = 2^-53 (Higham, Accuracy and Stability, §3.1). Two orders differ by at
 * most 2·γ_red·Σ|ab|, with red + 1 terms when a bias is added; the host's Σ|ab| is itself rounded
 * (by at most γ_red relative), hence the factor (1 + γ_red). Special values (Inf, NaN, -0) and
 * exact zeros must agree exactly.
 *
 * Every device computation runs in a child process: the test process never touches the device
 * (not even to count devices), so the isolated runs it forks may use it. Skips without a device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_fixture.h"

#ifdef GG_HAVE_GPU_KERNELS

#include <dirent.h>

#include "fuzz/case/gg_case.h"
#include "fuzz/run/device/gg_device.h"

/* Skips without a usable device of this build's backend (that of its GPU kernels), asking in a
   child process (gg_device_present). */
static void require_device_untouched(void)
{
    char why[256] = "no GPU kernel in this build";
    gg_registry_init();
    for (size_t i = 0; i < gg_registry_count(); i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (k->backend != GG_BACKEND_CPU) {
            if (gg_device_present(k->backend, why, sizeof why))
                return;
            break;
        }
    }
    cr_skip_test("%s", why);
}

/* The reference of a case where `where` says, computed in a child and read back. */
struct refs {
    int64_t n;
    double *ref, *abs;
    int ok;
    char err[512];
};

static void refs_free(struct refs *r)
{
    free(r->ref);
    free(r->abs);
    memset(r, 0, sizeof *r);
}

static int write_all(FILE *f, const void *p, size_t n)
{
    return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static void child_reference(const struct gg_case *c, const char *kernel,
                            enum gg_reference_where where, FILE *f)
{
    struct gg_run_opts o = {.kernel = kernel, .reference = where};
    struct gg_reference_run r;
    char err[512] = "";
    enum gg_status st = gg_run_reference(c, &o, &r, err, sizeof err);
    int32_t ok = st == GG_OK;
    write_all(f, &ok, sizeof ok);
    write_all(f, err, sizeof err);
    if (ok) {
        write_all(f, &r.n, sizeof r.n);
        write_all(f, r.ref, (size_t)r.n * sizeof(double));
        write_all(f, r.abs, (size_t)r.n * sizeof(double));
    }
    fflush(f);
    gg_reference_run_free(&r);
}

static void reference_in_child(const struct gg_case *c, const char *kernel,
                               enum gg_reference_where where, struct refs *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = tmpfile();
    cr_assert(f);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        child_reference(c, kernel, where, f);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    rewind(f);
    int32_t ok = 0;
    if (!WIFEXITED(status) || fread(&ok, sizeof ok, 1, f) != 1 ||
        fread(out->err, sizeof out->err, 1, f) != 1) {
        snprintf(out->err, sizeof out->err, "the child computing the reference died (status %d)",
                 status);
        fclose(f);
        return;
    }
    if (ok && fread(&out->n, sizeof out->n, 1, f) == 1) {
        size_t bytes = (size_t)(out->n > 0 ? out->n : 1) * sizeof(double);
        out->ref = malloc(bytes);
        out->abs = malloc(bytes);
        cr_assert(out->ref && out->abs);
        out->ok = fread(out->ref, sizeof(double), (size_t)out->n, f) == (size_t)out->n &&
                  fread(out->abs, sizeof(double), (size_t)out->n, f) == (size_t)out->n;
    }
    fclose(f);
}

static double gamma_n(int64_t n)
{
    double nu = (double)n * 0x1p-53;
    return nu / (1.0 - nu);
}

/* Elements where the two references disagree beyond the bound; the first one described. */
static int64_t compare_refs(const struct gg_problem *p, const struct refs *h, const struct refs *d,
                            char *why, size_t why_len)
{
    int64_t bad = 0, pos = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        int64_t count = b.rows * b.cols;
        double gm = gamma_n(b.red + (p->bias_dtype != GG_DTYPE_NONE));
        for (int64_t i = pos; i < pos + count; i++) {
            double x = h->ref[i], y = d->ref[i], a = h->abs[i];
            int same;
            if (!isfinite(x) || !isfinite(y) || a == 0.0) /* specials and exact zeros: equal */
                same = (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
            else /* a sum that cancels to 0 in one order may leave a few ulps of Σ|ab| in another */
                same = fabs(x - y) <= 2.0 * gm * a * (1.0 + gm);
            same = same && fabs(d->abs[i] - a) <= 2.0 * gm * a;
            if (!same && bad++ == 0)
                snprintf(why, why_len, "group %lld output %lld: host %.17g (Σ|ab| %.17g), "
                         "device %.17g (Σ|ab| %.17g)", (long long)g, (long long)(i - pos), x, a,
                         y, d->abs[i]);
        }
        pos += count;
    }
    return bad;
}

/* The problem of case c run on kernel (its defaults filled and routing built) in t; it points
   into eff, which the caller frees after t. */
static int plan_of(const struct gg_case *c, const char *kernel, struct gg_case *eff,
                   struct gg_tensors *t)
{
    gg_case_init(eff);
    gg_case_copy(eff, c);
    snprintf(eff->kernel, sizeof eff->kernel, "%s", kernel);
    char err[256];
    return gg_tensors_plan(eff, t, err, sizeof err) == GG_OK;
}

/* Compares the two references of case c on kernel; 1 when both were computed (bad counts
   disagreements), 0 when the kernel does not take the case. */
static int cross_check(const char *label, const struct gg_case *c, const char *kernel,
                       int64_t *bad, char *why, size_t why_len)
{
    struct refs h, d;
    reference_in_child(c, kernel, GG_REFERENCE_DEVICE, &d);
    if (!d.ok) {
        int unsupported = strstr(d.err, "does not support") || strstr(d.err, "does not implement");
        cr_expect(unsupported, "%s on %s: device reference failed: %s", label, kernel, d.err);
        refs_free(&d);
        return 0;
    }
    reference_in_child(c, kernel, GG_REFERENCE_HOST, &h);
    cr_assert(h.ok, "%s on %s: host reference failed: %s", label, kernel, h.err);
    cr_assert_eq(h.n, d.n);
    struct gg_tensors t;
    struct gg_case eff;
    memset(&t, 0, sizeof t);
    cr_assert(plan_of(c, kernel, &eff, &t));
    *bad = compare_refs(&t.p, &h, &d, why, why_len);
    gg_tensors_free(&t);
    gg_case_free(&eff);
    refs_free(&h);
    refs_free(&d);
    return 1;
}

/* The GPU kernels of this build. */
static int gpu_kernels(const struct gg_kernel **out, int max)
{
    gg_registry_init();
    int n = 0;
    for (size_t i = 0; i < gg_registry_count() && n < max; i++) {
        const struct gg_kernel *k = gg_registry_at(i);
        if (k->backend != GG_BACKEND_CPU && !strstr(k->name, "cublas"))
            out[n++] = k;
    }
    return n;
}

/* Case files of a corpus directory (sorted). */
static int case_files(const char *dir, char names[][1024], int max)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", GG_SOURCE_DIR, dir);
    struct dirent **list;
    int n = scandir(path, &list, NULL, alphasort), got = 0;
    for (int i = 0; i < n; i++) {
        const char *s = list[i]->d_name;
        size_t len = strlen(s);
        if (got < max && len > 5 && !strcmp(s + len - 5, ".case"))
            snprintf(names[got++], 1024, "%s/%s", path, s);
        free(list[i]);
    }
    free(list);
    return got;
}

/* Every case of dir on the first GPU kernel that takes it: the references agree. Returns the
   number of cases compared. */
static int check_dir(const char *dir, int64_t *total_bad)
{
    static char names[256][1024];
    const struct gg_kernel *ks[64];
    int nk = gpu_kernels(ks, 64), nc = case_files(dir, names, 256), compared = 0;
    for (int i = 0; i < nc; i++) {
        struct gg_case c;
        char err[256];
        cr_assert_eq(gg_case_load(names[i], &c, err, sizeof err), GG_OK, "%s", err);
        c.mutant[0] = '\0'; /* the inputs and the reference do not depend on a mutant */
        for (int j = 0; j < nk; j++) {
            int64_t bad = 0;
            char why[512] = "";
            if (!cross_check(names[i], &c, ks[j]->name, &bad, why, sizeof why))
                continue;
            compared++;
            *total_bad += bad;
            cr_expect_eq(bad, 0, "%s on %s: %lld outputs differ; first: %s", names[i],
                         ks[j]->name, (long long)bad, why);
            break;
        }
        gg_case_free(&c);
    }
    return compared;
}

Test(gpu_reference, equal_on_quick_tier_seeds_and_mutant_cases, .timeout = 1200)
{
    require_device_untouched();
    int64_t bad = 0;
    int quick = check_dir("corpus/suite/quick", &bad);
    int seeds = check_dir("corpus/seeds", &bad);
    int mutants = check_dir("corpus/mutants", &bad);
    fprintf(stderr, "compared: %d quick-tier cases, %d seeds, %d mutant cases\n", quick, seeds,
            mutants);
    cr_expect_geq(quick, 10);
    cr_expect_geq(seeds, 15);
    cr_expect_geq(mutants, 5);
}

/* The verdict and signature of case path on kernel+mutant with the reference at where. */
static void verdict_at(const char *path, const char *kernel, const char *mutant,
                       enum gg_reference_where where, int64_t certify, struct gg_run_result *r,
                       enum gg_status *st, char *err, size_t err_len)
{
    struct gg_case c;
    cr_assert_eq(gg_case_load(path, &c, err, err_len), GG_OK, "%s", err);
    struct gg_run_opts o = {.kernel = kernel, .mutant = mutant, .reference = where,
                            .certify_samples = certify};
    memset(r, 0, sizeof *r);
    *st = gg_run_case_isolated(&c, &o, 300, r, err, err_len);
    gg_case_free(&c);
}

/* 1 when the case at path expects a race (nondeterminism among its classes): its class may
   differ from run to run whatever computes the reference. */
static int expects_race(const char *path)
{
    struct gg_case c;
    char err[256];
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK)
        return 0;
    const char *e = gg_case_meta(&c, "expect");
    int race = e && strstr(e, "nondeterminism");
    gg_case_free(&c);
    return race;
}

/* Host and device references give one verdict and signature. The device reference handed
   over in runs of a few groups (GGFUZZ_TEST_REF_CHUNK, a larger group alone) and certified at
   the points picked from them gives the comparison of the whole one, bit for bit, for a correct
   kernel. Each verdict comes from its own process, so the metrics are compared only where the
   output is the same in each: a mutant whose stores land on one place (i32_store_offset writes
   three rows over one) leaves whichever store came last, which the GPU's scheduling decides
   from process to process, while its class and signature stay. */
static int same_verdict(const char *path, const char *kernel, const char *mutant)
{
    struct gg_run_result h, d, dc;
    enum gg_status sh, sd, sdc;
    char eh[1024] = "", ed[1024] = "", edc[1024] = "";
    verdict_at(path, kernel, mutant, GG_REFERENCE_HOST, 0, &h, &sh, eh, sizeof eh);
    verdict_at(path, kernel, mutant, GG_REFERENCE_DEVICE, 0, &d, &sd, ed, sizeof ed);
    setenv("GGFUZZ_TEST_REF_CHUNK", "97", 1);
    verdict_at(path, kernel, mutant, GG_REFERENCE_DEVICE, 16, &dc, &sdc, edc, sizeof edc);
    unsetenv("GGFUZZ_TEST_REF_CHUNK");
    cr_expect_eq(sh, sd, "%s on %s+%s: host status %d (%s), device %d (%s)", path, kernel, mutant,
                 (int)sh, eh, (int)sd, ed);
    cr_expect_eq(sd, sdc, "%s on %s+%s: device status %d (%s), in runs %d (%s)", path, kernel,
                 mutant, (int)sd, ed, (int)sdc, edc);
    int ran = sh == GG_OK && sd == GG_OK && sdc == GG_OK;
    if (ran) {
        cr_expect_eq(h.verdict.cls, d.verdict.cls, "%s on %s+%s: host %s, device %s", path,
                     kernel, mutant, gg_class_name(h.verdict.cls), gg_class_name(d.verdict.cls));
        cr_expect_str_eq(h.verdict.signature, d.verdict.signature, "%s on %s+%s", path, kernel,
                         mutant);
        cr_expect(d.device_reference && !h.device_reference);
        cr_expect_str_eq(d.verdict.signature, dc.verdict.signature, "%s on %s+%s in runs", path,
                         kernel, mutant);
        cr_expect_eq(d.compared, dc.compared, "%s on %s+%s in runs", path, kernel, mutant);
        if (d.compared && dc.compared && strcmp(mutant, "none") == 0) {
            cr_expect_eq(memcmp(&d.cmp.snr_db, &dc.cmp.snr_db, sizeof d.cmp.snr_db), 0,
                         "%s on %s+%s in runs: SNR %.17g against %.17g", path, kernel, mutant,
                         d.cmp.snr_db, dc.cmp.snr_db);
            cr_expect_eq(d.cmp.max_ratio, dc.cmp.max_ratio, "%s on %s+%s in runs", path, kernel,
                         mutant);
            cr_expect_eq(d.cmp.region, dc.cmp.region, "%s on %s+%s in runs", path, kernel, mutant);
            cr_expect(d.cmp.n_groups == dc.cmp.n_groups &&
                          !memcmp(d.cmp.groups, dc.cmp.groups,
                                  (size_t)d.cmp.n_groups * sizeof *d.cmp.groups),
                      "%s on %s+%s in runs: group metrics differ", path, kernel, mutant);
        }
        cr_expect_eq(dc.certified, 16, "%s on %s+%s in runs", path, kernel, mutant);
    }
    gg_run_result_free(&h);
    gg_run_result_free(&d);
    gg_run_result_free(&dc);
    return ran;
}

Test(gpu_reference, same_verdicts_for_correct_kernels_and_mutants, .timeout = 1800)
{
    require_device_untouched();
    static char names[256][1024];
    const struct gg_kernel *ks[64];
    int nk = gpu_kernels(ks, 64), nq = case_files("corpus/suite/quick", names, 256);
    int runs = 0, mutant_runs = 0;
    for (int j = 0; j < nk; j++) {
        for (int i = 0; i < nq; i++)
            runs += same_verdict(names[i], ks[j]->name, "none");
        for (const char *const *m = ks[j]->mutants; m && *m; m++) {
            char path[512];
            snprintf(path, sizeof path, "%s/corpus/mutants/%s.case", GG_SOURCE_DIR, *m);
            if (access(path, R_OK) == 0 && !expects_race(path))
                mutant_runs += same_verdict(path, ks[j]->name, *m);
        }
    }
    fprintf(stderr, "same verdicts: %d correct-kernel runs, %d mutant runs\n", runs, mutant_runs);
    cr_expect_geq(runs, 10);
    cr_expect_geq(mutant_runs, 5);
}

/* A planted fault of the device reference must show in the comparison. */
static void planted(const char *fault, const char *dir, const char *name)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s/%s.case", GG_SOURCE_DIR, dir, name);
    struct gg_case c;
    cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
    const struct gg_kernel *ks[64];
    int nk = gpu_kernels(ks, 64), found = 0;
    setenv("GGFUZZ_TEST_DEVREF_FAULT", fault, 1);
    for (int j = 0; j < nk && !found; j++) {
        int64_t bad = 0;
        char why[512];
        if (cross_check(name, &c, ks[j]->name, &bad, why, sizeof why)) {
            found = 1;
            cr_expect_gt(bad, 0, "planted %s on %s: the references still agree", fault, name);
        }
    }
    unsetenv("GGFUZZ_TEST_DEVREF_FAULT");
    cr_expect(found, "no GPU kernel takes %s", name);
    gg_case_free(&c);
}

Test(gpu_reference, planted_faults_are_caught)
{
    require_device_untouched();
    planted("group_offset", "corpus/seeds", "fwd_basic");
    /* An empty expert's wgrad is not computed: the offset fault needs neighbouring experts with
       tokens, which wgrad_many_groups has. */
    planted("group_offset", "corpus/seeds", "wgrad_many_groups");
    planted("k_tail", "corpus/seeds", "fwd_basic");
    planted("k_tail", "corpus/seeds", "dgrad_basic");
}

#else

Test(gpu_reference, skipped_without_gpu_build)
{
    gpu_require_device();
}

#endif

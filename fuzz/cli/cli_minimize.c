/*
 * cli_minimize.c — `ggfuzz minimize FILE`: finds the case's signature, shrinks it with
 * gg_minimize() while that signature reproduces, and prints the sizes before and after.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/minimize/gg_minimize.h"

/* One line describing the size of c: id, groups (or batch), sizes, n, k, output elements. */
static void minimize_print_case(const char *label, const struct gg_case *c, int64_t elems)
{
    char id[GG_CASE_ID_HEX + 1], sizes[160] = "";
    gg_case_id(c, id);
    size_t at = 0;
    int grouped = c->lens != NULL;
    for (int64_t g = 0; grouped && g < c->groups && at + 24 < sizeof sizes;) {
        int64_t run = 1;
        while (g + run < c->groups && c->lens[g + run] == c->lens[g])
            run++;
        at += (size_t)snprintf(sizes + at, sizeof sizes - at, run > 1 ? "%s%lld*%lld" : "%s%lld",
                               at ? " " : "", (long long)c->lens[g], (long long)run);
        g += run;
        if (g < c->groups && at + 24 >= sizeof sizes)
            snprintf(sizes + at, sizeof sizes - at, " ...");
    }
    printf("%-7s id=%s groups=%lld", label, id, (long long)(c->op == GG_OP_DENSE ? 1 : c->groups));
    if (grouped)
        printf(" group_lens=[%s]", sizes);
    if (!grouped || c->op == GG_OP_MOE_SORTED)
        printf(" m=%lld", (long long)c->m);
    printf(" n=%lld k=%lld outputs=%lld\n", (long long)c->n, (long long)c->k, (long long)elems);
}

/* What the options of minimize set. */
struct min_args {
    struct gg_min_opts mo;
    const char *out, *kernel, *mutant;
    int repeats;
    struct gg_cli_plugins pl; /* for the worker process the candidates run in */
};

#define A(field) GG_CLI_AT(struct min_args, field)
static const struct gg_cli_flag minimize_flags[] = {
    {"output", 'o', GG_CLI_STRING, "FILE", A(out),
     GG_CLI_DEFAULT_TEXT("CASE with .case replaced by .min.case"),
     .help = "the minimised case; progress is saved there after each pass that shrank the case"},
    GG_CLI_MAX_TOTAL_TIME_FLAG(struct min_args, mo.max_total_time_s, GG_MIN_DEFAULT_TIME_S),
    {"repeats", 0, GG_CLI_COUNT, "R", A(repeats), .min = 1, .max = 1000,
     GG_CLI_DEFAULT_TEXT("1, or 2 for a nondeterminism finding"),
     .help = "keep a step only when R runs of R reproduce the signature"},
    GG_CLI_TIMEOUT_FLAG(struct min_args, mo.timeout_s, GG_MIN_DEFAULT_TIMEOUT_S,
                        "one past it is killed and gives a timeout verdict"),
    {"kernel", 0, GG_CLI_STRING, "NAME", A(kernel),
     .help = "run the case on this kernel instead of its own; written into the minimised case"},
    {"mutant", 0, GG_CLI_STRING, "NAME", A(mutant),
     .help = "run with this mutant, or with every one of a list A,B ('none' for the correct "
             "kernel); written into the minimised case"},
    {"findings", 0, GG_CLI_STRING, "DIR", A(mo.findings_dir),
     .help = "record the other faults met on the way in this findings store"},
    {"bucket", 0, GG_CLI_SWITCH, NULL, A(mo.bucket),
     .help = "minimise to the normal form that triage files buckets by: keep the class family "
             "(snr and nan are one), smallest sizes, simplest output dtype, placement and data; "
             "prints the bucket's form and id"},
    GG_CLI_PLUGIN_FLAG(A(pl)),
    {0}};
#undef A
const struct gg_cli_command gg_cli_minimize_command = {
    "minimize", "minimize [options] CASE", "exit 0 when minimised, 3 when the case passes",
    minimize_flags};

/*
 * `ggfuzz minimize FILE`: runs FILE once for its signature, shrinks it with gg_minimize() and
 * writes the result (atomically, progress after each pass that shrank it) with its @expect and
 * @min lines. Exit 0 when minimised; 3 when FILE passes or cannot be read or minimised; 4 when
 * the case is refused.
 */
static int not_a_note(const char *key)
{
    return strcmp(key, "note") != 0;
}

int gg_cli_minimize(int argc, char **argv, char **lead, int n_lead)
{
    struct min_args a;
    memset(&a, 0, sizeof a);
    gg_cli_plugin_lead(&a.pl, lead, n_lead);
    int rc = gg_cli_parse(&gg_cli_minimize_command, argc, argv, &a);
    if (rc != GG_CLI_TAKEN)
        return rc;
    struct gg_min_opts mo = a.mo;
    const char *out = a.out, *kernel = a.kernel, *mutant = a.mutant;
    if (optind + 1 != argc) {
        fprintf(stderr, "ggfuzz: minimize needs exactly one case file\n");
        return GG_EXIT_USAGE;
    }
    const char *path = argv[optind];
    char err[1024] = "", from[GG_CASE_ID_HEX + 1], *def_out = NULL;
    struct gg_case c;
    if (gg_case_load(path, &c, err, sizeof err) != GG_OK) {
        fprintf(stderr, "ggfuzz: %s\n", err);
        return GG_EXIT_HARNESS;
    }
    gg_case_id(&c, from);
    int n_after = gg_case_after_count(&c);
    if (n_after > 0) {
        char replay[8192];
        gg_cli_replay_command(replay, sizeof replay, GG_REFERENCE_AUTO);
        gg_shell_word(replay, sizeof replay, path);
        fprintf(stderr, "ggfuzz: %s fails only after the %d case%s of its @after lines: the "
                "minimiser runs a case alone, so it cannot shrink it (`%s` runs them first)\n",
                path, n_after, n_after == 1 ? "" : "s", replay);
        gg_case_free(&c);
        return GG_EXIT_HARNESS;
    }
    /* Overrides become part of the case, so the minimised file replays on its own. */
    if (kernel)
        snprintf(c.kernel, sizeof c.kernel, "%s", kernel);
    if (mutant && strlen(mutant) >= sizeof c.mutant) {
        fprintf(stderr, "ggfuzz: mutant list '%s' is longer than %d characters\n", mutant,
                (int)sizeof c.mutant - 1);
        gg_case_free(&c);
        return GG_EXIT_HARNESS;
    }
    if (mutant)
        snprintf(c.mutant, sizeof c.mutant, "%s", strcmp(mutant, "none") ? mutant : "");
    if ((rc = gg_cli_kernel_refused(c.kernel)) != 0) {
        gg_case_free(&c);
        return rc;
    }
    struct gg_run_result res;
    enum gg_status st = gg_run_case_isolated(&c, &mo.run, mo.timeout_s, &res, err, sizeof err);
    struct gg_verdict v = res.verdict;
    gg_run_result_free(&res);
    int code = 0;
    if (st != GG_OK) {
        fprintf(stderr, "ggfuzz: %s: %s\n", path, err);
        code = st == GG_E_UNSUPPORTED || st == GG_E_NOMEM ? GG_EXIT_REFUSED : GG_EXIT_HARNESS;
    } else if (v.cls == GG_CLASS_PASS) {
        printf("%s passes on %s%s%s: nothing to minimise\n", path, c.kernel,
               c.mutant[0] ? "+" : "", c.mutant);
        code = GG_EXIT_HARNESS;
    }
    if (code != 0) {
        gg_case_free(&c);
        return code;
    }
    if (out == NULL) {
        size_t n = strlen(path);
        if (n > 5 && strcmp(path + n - 5, ".case") == 0)
            n -= 5;
        if ((def_out = malloc(n + sizeof ".min.case")) == NULL) {
            gg_case_free(&c);
            fprintf(stderr, "ggfuzz: out of memory\n");
            return GG_EXIT_HARNESS;
        }
        memcpy(def_out, path, n);
        memcpy(def_out + n, ".min.case", sizeof ".min.case");
        out = def_out;
    }
    /* Intermittent faults need the signature twice in a row before a step is kept. */
    mo.repeats = a.repeats > 0 ? a.repeats : v.cls == GG_CLASS_NONDETERMINISM ? 2 : 1;
    /* Bucket mode may leave the signature (within its class family): no progress file, whose
       @expect would no longer hold. */
    mo.progress_path = mo.bucket ? NULL : out;
    char expect[GG_SIGNATURE_MAX + 64], line[256];
    snprintf(expect, sizeof expect, "class=%s sig=%s", gg_class_name(v.cls), v.signature);
    printf("minimizing %s: %s\n", path, v.signature);
    fflush(stdout);
    struct gg_min_stats ms;
    st = gg_case_set_meta(&c, "expect", expect);
    /* The candidates run one after another in a worker process (a GPU kernel's context and
       device memory then serve them all); the case found is checked in a fresh one. */
    int n_self;
    const char *const *self = gg_cli_self(&n_self);
    struct gg_worker_launch how = {.exe = self ? self[0] : "/proc/self/exe",
                                   .cmd = self,
                                   .n_cmd = n_self,
                                   .plugins = a.pl.paths,
                                   .n_plugins = a.pl.n,
                                   .gpu = -1};
    struct gg_workerproc proc;
    gg_workerproc_init(&proc, &how);
    mo.proc = &proc;
    if (st == GG_OK)
        st = gg_minimize(&c, v.signature, &mo, &ms, err, sizeof err);
    gg_workerproc_close(&proc);
    char form[GG_SIGNATURE_MAX], id[GG_BUCKET_ID_HEX + 1];
    if (st == GG_OK && mo.bucket) {
        snprintf(expect, sizeof expect, "class=%.*s sig=%s", (int)strcspn(ms.signature, "/"),
                 ms.signature, ms.signature);
        gg_bucket_form(ms.signature, &c, form, sizeof form);
        gg_bucket_id(form, id);
        st = gg_case_set_meta(&c, "expect", expect);
    }
    if (st == GG_OK) {
        /* Every @ line of the output is true of the minimised case: its own verdict and where it
           came from; the original's sightings, bucket and run (@finding, @bucket, @observed,
           @gpu, @found) are the original's. Notes stay. */
        gg_case_meta_drop(&c, not_a_note);
        snprintf(line, sizeof line, "from=%s attempts=%d seconds=%.1f", from, ms.attempts,
                 ms.seconds);
        if ((st = gg_case_set_meta(&c, "expect", expect)) == GG_OK &&
            (st = gg_case_set_meta(&c, "observed", ms.detail[0] ? ms.detail : "-")) == GG_OK &&
            (st = gg_case_set_meta(&c, "min", line)) == GG_OK)
            st = gg_case_save(&c, out, err, sizeof err);
    }
    if (st != GG_OK) {
        fprintf(stderr, "ggfuzz: minimize %s: %s\n", path, err[0] ? err : "out of memory");
        code = GG_EXIT_HARNESS;
    } else {
        struct gg_case orig;
        if (gg_case_load(path, &orig, err, sizeof err) == GG_OK) {
            minimize_print_case("before:", &orig, ms.elems_before);
            gg_case_free(&orig);
        }
        minimize_print_case("after:", &c, ms.elems_after);
        if (mo.bucket)
            printf("normal form: %s\nbucket %s: %s%s\n", ms.signature, id, form,
                   ms.fixpoint ? "" : " (cut short by the time limit: not a normal form yet)");
        printf("%d rounds, %d runs (%d repeated candidates not run), %d steps kept, %d other "
               "faults, %.1f s -> %s\n", ms.rounds, ms.attempts, ms.cache_hits, ms.kept,
               ms.other_faults, ms.seconds, out);
        if (ms.restarted_fresh)
            printf("the case the worker process reached failed otherwise in a fresh process (a "
                   "kernel that keeps state between calls): every run started over in a fresh "
                   "process\n");
    }
    free(def_out);
    gg_case_free(&c);
    return code;
}


/*
 * test_suite_generate.c — the SNR suite's generator: a fresh generation equals the committed
 * corpus byte for byte; the routing model gives the group sizes it promises (top-k slots per
 * token, only the hot experts under extreme routing); the quick tier is decode-only on CPU
 * kernels and a subset of the release grid; the stress tier crosses 2^31 elements and 2^32 bytes
 * while only a couple of experts hold tokens and fits a small host.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "case_files.h"
#include "file_fixture.h"
#include "fuzz/suite/gg_suite.h"
#include "fuzz/run/gg_run.h"

#define SUITE GG_SOURCE_DIR "/corpus/suite"

static void remove_tree(const char *root)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

Test(suite_generate, regenerates_the_committed_corpus)
{
    char root[] = "/tmp/ggfuzz-suite-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char err[1024] = "";
    struct gg_suite_counts n;
    cr_assert_eq(gg_suite_generate(root, &n, err, sizeof err), GG_OK, "%s", err);
    for (int t = 0; t < GG_SUITE_TIERS; t++) {
        char fresh[4200], committed[4200];
        snprintf(fresh, sizeof fresh, "%s/%s", root, gg_suite_tier_names[t]);
        snprintf(committed, sizeof committed, "%s/%s", SUITE, gg_suite_tier_names[t]);
        cr_assert_eq(access(committed, R_OK), 0, "%s is missing: generate it with `ggfuzz suite "
                     "--generate corpus/suite`", committed);
        size_t nf, nc;
        char **f = case_files(fresh, &nf), **c = case_files(committed, &nc);
        cr_assert_eq(nf, (size_t)n.cases[t]);
        cr_assert_eq(nf, nc, "tier %s: %zu generated, %zu committed (regenerate with ggfuzz suite "
                     "--generate corpus/suite)", gg_suite_tier_names[t], nf, nc);
        for (size_t i = 0; i < nf; i++) {
            cr_assert_str_eq(f[i], c[i]);
            char pf[4400], pc[4400];
            snprintf(pf, sizeof pf, "%s/%s", fresh, f[i]);
            snprintf(pc, sizeof pc, "%s/%s", committed, c[i]);
            size_t lf, lc;
            char *bf = file_slurp(NULL, pf, &lf), *bc = file_slurp(NULL, pc, &lc);
            cr_expect(lf == lc && memcmp(bf, bc, lf) == 0, "%s differs from the generator's output",
                      pc);
            free(bf);
            free(bc);
        }
        case_files_free(f, nf);
        case_files_free(c, nc);
    }
    /* A second generation into the same place replaces the files, not adds to them. */
    struct gg_suite_counts again;
    cr_assert_eq(gg_suite_generate(root, &again, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(memcmp(&again, &n, sizeof n), 0);
    remove_tree(root);
}

/* The properties below are checked on a fresh generation; the test above ties it to the
   committed corpus. */
static char gen_root[64];

static void generate(void)
{
    snprintf(gen_root, sizeof gen_root, "/tmp/ggfuzz-suite-XXXXXX");
    cr_assert_not_null(mkdtemp(gen_root));
    char err[1024];
    cr_assert_eq(gg_suite_generate(gen_root, NULL, err, sizeof err), GG_OK, "%s", err);
}

static void cleanup(void)
{
    remove_tree(gen_root);
}

/* Every case of a tier, parsed, with a callback. */
static void each_case(const char *tier, void (*fn)(const char *name, const struct gg_case *c,
                                                    void *user), void *user)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", gen_root, tier);
    size_t n;
    char **names = case_files(dir, &n);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        char path[4400], err[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct gg_case c;
        cr_assert_eq(gg_case_load(path, &c, err, sizeof err), GG_OK, "%s", err);
        fn(names[i], &c, user);
        gg_case_free(&c);
    }
    case_files_free(names, n);
}

/* Value of key in the @suite line, copied into buf ("" when absent). */
static const char *meta_get(const struct gg_case *c, const char *key, char *buf, size_t len)
{
    const char *m = gg_case_meta(c, "suite");
    cr_assert_not_null(m);
    size_t kl = strlen(key);
    buf[0] = '\0';
    for (const char *p = m; *p; p += strcspn(p, " "), p += strspn(p, " "))
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            snprintf(buf, len, "%.*s", (int)strcspn(p + kl + 1, " "), p + kl + 1);
            break;
        }
    return buf;
}

static long long meta_int(const struct gg_case *c, const char *key)
{
    char v[64];
    return meta_get(c, key, v, sizeof v)[0] ? strtoll(v, NULL, 0) : -1;
}

static int meta_is(const struct gg_case *c, const char *key, const char *value)
{
    char v[64];
    return !strcmp(meta_get(c, key, v, sizeof v), value);
}

struct routing_stats {
    int grouped, extreme, full;
    double max_over_mean[2]; /* ep1 prefill: balanced, skewed (largest seen) */
};

static void check_routing(const char *name, const struct gg_case *c, void *user)
{
    struct routing_stats *s = user;
    if (!c->lens || c->op == GG_OP_MOE_SORTED)
        return;
    s->grouped++;
    long long tokens = meta_int(c, "tokens"), topk = meta_int(c, "topk"), ep = meta_int(c, "ep");
    long long experts = meta_int(c, "experts");
    cr_assert(tokens > 0 && topk > 0 && ep > 0 && experts > 0, "%s: @suite lacks a field", name);
    cr_expect_eq(c->groups, experts / ep, "%s: local experts", name);
    int64_t sum = 0, max = 0, nonempty = 0;
    for (int64_t g = 0; g < c->groups; g++) {
        sum += c->lens[g];
        max = c->lens[g] > max ? c->lens[g] : max;
        nonempty += c->lens[g] > 0;
        cr_expect_leq(c->lens[g], tokens, "%s: an expert gets each token at most once", name);
    }
    if (meta_is(c, "routing", "extreme")) {
        s->extreme++;
        int64_t hot = topk < c->groups ? topk : c->groups;
        cr_expect_eq(nonempty, hot, "%s: extreme routing fills exactly the hot experts", name);
        cr_expect_eq(sum, hot * tokens, "%s", name);
    } else if (ep == 1) {
        s->full++;
        cr_expect_eq(sum, tokens * topk, "%s: every token fills top-k slots", name);
        if (meta_is(c, "phase", "prefill")) {
            double r = (double)max / ((double)sum / (double)c->groups);
            int k = meta_is(c, "routing", "skewed");
            s->max_over_mean[k] = r > s->max_over_mean[k] ? r : s->max_over_mean[k];
        }
    } else {
        cr_expect_leq(sum, tokens * topk, "%s", name);
    }
}

Test(suite_generate, routing_model, .init = generate, .fini = cleanup)
{
    struct routing_stats s = {0};
    each_case("release", check_routing, &s);
    cr_expect_gt(s.grouped, 500);
    cr_expect_gt(s.extreme, 100);
    cr_expect_gt(s.full, 100);
    /* Skewed popularity makes the busiest expert busier than uniform routing does. */
    cr_expect_gt(s.max_over_mean[1], s.max_over_mean[0]);
    cr_expect_lt(s.max_over_mean[0], 2.0);
}

struct coverage {
    char seen[64][48];
    int n;
    int cases;
};

static void see(struct coverage *cv, const char *what)
{
    for (int i = 0; i < cv->n; i++)
        if (!strcmp(cv->seen[i], what))
            return;
    cr_assert_lt(cv->n, 64);
    snprintf(cv->seen[cv->n++], sizeof cv->seen[0], "%s", what);
}

static int seen(const struct coverage *cv, const char *what)
{
    for (int i = 0; i < cv->n; i++)
        if (!strcmp(cv->seen[i], what))
            return 1;
    return 0;
}

static void check_quick(const char *name, const struct gg_case *c, void *user)
{
    struct coverage *cv = user;
    cv->cases++;
    cr_expect(meta_is(c, "phase", "decode"), "%s: the quick tier runs decode steps", name);
    cr_expect(meta_is(c, "tier", "quick"), "%s", name);
    const struct gg_kernel *k = gg_registry_find(c->kernel);
    cr_assert_not_null(k, "%s: kernel %s", name, c->kernel);
    cr_expect_eq(k->backend, GG_BACKEND_CPU, "%s", name);
    /* The same case (same identity) is in the release grid. */
    char path[4400], err[1024];
    snprintf(path, sizeof path, "%s/release/%s", gen_root, name);
    struct gg_case r;
    cr_assert_eq(gg_case_load(path, &r, err, sizeof err), GG_OK, "%s", err);
    char a[GG_CASE_ID_HEX + 1], b[GG_CASE_ID_HEX + 1];
    gg_case_id(c, a);
    gg_case_id(&r, b);
    cr_expect_str_eq(a, b, "%s", name);
    gg_case_free(&r);
    static const char *const keys[] = {"model", "recipe", "routing"};
    for (int i = 0; i < 3; i++) {
        char v[48];
        see(cv, meta_get(c, keys[i], v, sizeof v));
    }
    char ep[16];
    snprintf(ep, sizeof ep, "ep%lld", meta_int(c, "ep"));
    see(cv, ep);
    see(cv, gg_op_name(c->op));
}

Test(suite_generate, quick_tier_covers_the_grid_on_cpu, .init = generate, .fini = cleanup)
{
    gg_registry_init();
    struct coverage cv = {.n = 0};
    each_case("quick", check_quick, &cv);
    static const char *const must[] = {
        "deepseek-v3", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b",
        "llama-3.2-1b", "bf16", "e4m3", "e5m2", "mxfp8", "balanced", "skewed", "extreme",
        "ep1", "ep8", "grouped_fwd", "grouped_dgrad", "grouped_wgrad", "batched", "dense"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(seen(&cv, must[i]), "the quick tier has no %s case", must[i]);
    cr_expect_lt(cv.cases, 40);
}

struct stress {
    int cases, past_bytes;
};

static void check_stress(const char *name, const struct gg_case *c, void *user)
{
    struct stress *s = user;
    s->cases++;
    double elems = (double)c->groups * (double)c->n * (double)c->k;
    cr_expect_gt(elems, 2147483648.0, "%s: W must be past 2^31 elements", name);
    int bits = c->b_dtype == GG_DTYPE_BF16 ? 16 : 8;
    s->past_bytes += elems * bits / 8 > 4294967296.0;
    int64_t nonempty = 0;
    for (int64_t g = 0; g < c->groups; g++)
        nonempty += c->lens[g] > 0;
    cr_expect_leq(nonempty, 2, "%s", name);
    cr_expect_gt(c->lens[c->groups - 1], 0, "%s: the last expert holds tokens", name);
    int64_t mem = gg_case_mem_estimate(c);
    cr_expect_lt(mem, (int64_t)2 << 30, "%s: needs %lld bytes of host memory", name,
                 (long long)mem);
}

Test(suite_generate, stress_tier_crosses_the_limits_cheaply, .init = generate, .fini = cleanup)
{
    struct stress s = {0};
    each_case("stress", check_stress, &s);
    cr_expect_geq(s.cases, 6);
    cr_expect_geq(s.past_bytes, 3, "cases past 2^32 bytes of weights, in bf16 and in fp8");
}

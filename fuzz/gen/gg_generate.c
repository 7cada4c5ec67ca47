/*
 * gg_generate.c — campaign cases: what the kernel accepts (supports() probed on small problems
 * of a fixed menu of configurations, into a gg_gen_caps table or on every call), the admission
 * of a drawn case (checked, supported, within the memory bound), the choice among the selected
 * fault classes (gg_strategy_*.c) and the uniform baseline. Attempt t of case i draws from
 * stream GEN_STREAM + t: gg_rng_u64(seed, stream, i, j), j counting the draws.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen/gg_gen.h"
#include "fuzz/gen/gg_gen_int.h"

/* Stream of the generator ("gen"); attempt t adds t. */
#define GEN_STREAM UINT64_C(0x67656e0000)
/* Draws that fail admission before the generator falls back to a probe-sized case. */
#define GEN_ATTEMPTS 24
#define DEFAULT_MAX_BYTES ((int64_t)2 << 30)
/* Shares of cases whose inputs carry special codes (gen_codes). */
#define TARGETED_CODES 0.2
#define UNIFORM_CODES 0.1

/* ---- capabilities ------------------------------------------------------------------------- */

/* Dtype tuples of the probe menu, per recipe (the operand types gg_case_check allows): fp8
   also unscaled, for kernels that take their codes as they are. */
static const struct {
    enum gg_scaling s;
    enum gg_dtype a, b;
} TUPLES[] = {
    {GG_SCALING_NONE, GG_DTYPE_BF16, GG_DTYPE_BF16},
    {GG_SCALING_NONE, GG_DTYPE_F16, GG_DTYPE_F16},
    {GG_SCALING_NONE, GG_DTYPE_F32, GG_DTYPE_F32},
    {GG_SCALING_NONE, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_NONE, GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_SCALING_NONE, GG_DTYPE_E5M2, GG_DTYPE_E4M3},
    {GG_SCALING_NONE, GG_DTYPE_E5M2, GG_DTYPE_E5M2},
    {GG_SCALING_NONE, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_NONE, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_TENSOR, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_TENSOR, GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_SCALING_TENSOR, GG_DTYPE_E5M2, GG_DTYPE_E4M3},
    {GG_SCALING_TENSOR, GG_DTYPE_E5M2, GG_DTYPE_E5M2},
    {GG_SCALING_TENSOR, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_TENSOR, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ},
    {GG_SCALING_TENSOR, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_TENSOR, GG_DTYPE_E5M2FNUZ, GG_DTYPE_E5M2FNUZ},
    {GG_SCALING_MX, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_MX, GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_SCALING_MX, GG_DTYPE_E5M2, GG_DTYPE_E4M3},
    {GG_SCALING_MX, GG_DTYPE_E5M2, GG_DTYPE_E5M2},
    {GG_SCALING_MX, GG_DTYPE_E2M1, GG_DTYPE_E2M1},
    {GG_SCALING_MX_B, GG_DTYPE_BF16, GG_DTYPE_E2M1},
    {GG_SCALING_MX_B, GG_DTYPE_BF16, GG_DTYPE_E4M3},
    {GG_SCALING_BLOCK128, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_BLOCK128, GG_DTYPE_E4M3, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_BLOCK128, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3},
    {GG_SCALING_BLOCK128, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
    {GG_SCALING_ROWWISE, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_ROWWISE, GG_DTYPE_E4M3, GG_DTYPE_E5M2},
    {GG_SCALING_ROWWISE, GG_DTYPE_E5M2, GG_DTYPE_E4M3},
    {GG_SCALING_ROWWISE, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E5M2FNUZ},
    {GG_SCALING_BLOCKWISE, GG_DTYPE_E4M3, GG_DTYPE_E4M3},
    {GG_SCALING_BLOCKWISE, GG_DTYPE_E5M2, GG_DTYPE_E4M3},
    {GG_SCALING_BLOCKWISE, GG_DTYPE_E4M3FNUZ, GG_DTYPE_E4M3FNUZ},
};
static const enum gg_dtype OUT_TYPES[] = {GG_DTYPE_BF16, GG_DTYPE_F32, GG_DTYPE_F16};
static const enum gg_dtype BIAS_TYPES[] = {GG_DTYPE_NONE, GG_DTYPE_F32, GG_DTYPE_BF16};
/* Row counts probed for batched and dense (the small-M paths accept a range of M). */
static const int64_t M_MENU[] = {0, 1, 8, 16, 17, 64, 65, 256};
#define N_TUPLES ((int)(sizeof TUPLES / sizeof TUPLES[0]))

static int has_bias(enum gg_op op)
{
    return op != GG_OP_GROUPED_DGRAD && op != GG_OP_GROUPED_WGRAD;
}

static int64_t kernel_max_bytes(const struct gg_gen_config *cfg)
{
    return cfg->max_host_bytes > 0 ? cfg->max_host_bytes : DEFAULT_MAX_BYTES;
}

enum admission { ADMIT_OK, ADMIT_REFUSED, ADMIT_MEMORY };

/* The kernel's supports(p) and, when ws is not NULL and it says yes, its workspace_bytes(p):
   through the configuration's probe when it has one. GG_PROBE_YES, GG_PROBE_NO, or
   GG_PROBE_DIED (the probe's process died on p). */
static int kernel_answer(const struct gg_gen_config *cfg, const struct gg_problem *p, size_t *ws)
{
    char why[256];
    const struct gg_kernel *k = cfg->kernel;
    if (cfg->probe != NULL)
        return gg_probe_ask(cfg->probe, p, ws, why, sizeof why);
    if (!k->supports(p, why, sizeof why))
        return GG_PROBE_NO;
    if (ws != NULL)
        *ws = k->workspace_bytes ? k->workspace_bytes(p) : 0;
    return GG_PROBE_YES;
}

/*
 * Whether c is a case the runner would run: it passes gg_case_check, the kernel implements its
 * op and supports its problem (mutant included), and the host memory it needs (the runner's
 * estimate plus the workspace) is at most max_bytes (0: no bound). c is expanded on success.
 * A probe that died on c admits it, without the workspace's memory, so that the runner calls
 * the kernel again where a death is a finding; in the capability probe it refuses c and sets
 * g->died, which ends the probing.
 */
static enum admission admit_why(struct gen *g, struct gg_case *c, int64_t max_bytes)
{
    char why[256];
    const struct gg_kernel *k = g->cfg->kernel;
    if (g->died || !(k->ops & GG_OP_BIT(c->op)) || gg_case_check(c, why, sizeof why) != GG_OK ||
        gg_case_expand(c, why, sizeof why) != GG_OK)
        return ADMIT_REFUSED;
    struct gg_tensors t;
    enum admission a = ADMIT_REFUSED;
    size_t ws = 0;
    if (gg_tensors_shape(c, &t, why, sizeof why) != GG_OK)
        a = ADMIT_REFUSED;
    else if (max_bytes > 0 && gg_tensors_estimate(&t) > max_bytes)
        a = ADMIT_MEMORY; /* before the routing is built */
    else if (gg_tensors_route(c, &t, why, sizeof why) == GG_OK) {
        int yes = kernel_answer(g->cfg, &t.p, max_bytes > 0 ? &ws : NULL);
        a = yes == GG_PROBE_YES || (yes == GG_PROBE_DIED && !g->probing) ? ADMIT_OK
                                                                          : ADMIT_REFUSED;
        if (yes == GG_PROBE_DIED && g->probing)
            g->died = 1;
        if (yes == GG_PROBE_YES && max_bytes > 0 &&
            gg_size_add(gg_tensors_estimate(&t), (int64_t)ws) > max_bytes)
            a = ADMIT_MEMORY;
    }
    gg_tensors_free(&t);
    return a;
}

int gen_admit(struct gen *g, struct gg_case *c, int64_t max_bytes)
{
    return admit_why(g, c, max_bytes) == ADMIT_OK;
}

/* Drops the group sizes, options and layout of c. */
static void clear_shape(struct gg_case *c)
{
    free(c->items);
    c->items = NULL;
    c->n_items = 0;
    c->groups = 0;
    c->m = c->topk = c->block_m = 0;
    c->n_opts = 0;
    c->lda = c->ldb = c->ldc = 0;
    c->stride_a = c->stride_b = c->stride_c = 0;
    c->off_a = c->off_b = c->off_c = 0;
}

void gen_probe_shape(struct gen *g, struct gg_case *c, const struct gen_config *k, int64_t m)
{
    clear_shape(c);
    gen_apply_config(c, k);
    c->n = c->k = 64;
    if (gen_is_grouped(k->op) || k->op == GG_OP_MOE_SORTED)
        gen_push(g, c, k->op == GG_OP_MOE_SORTED ? 8 : 16, 2);
    if (k->op == GG_OP_MOE_SORTED) {
        c->m = 8;
        c->topk = 2;
        c->block_m = 16;
    } else if (k->op == GG_OP_BATCHED || k->op == GG_OP_DENSE) {
        c->groups = k->op == GG_OP_BATCHED ? 2 : 0;
        c->m = m;
    }
}

/* Probes option key of configuration k: known when an invalid value is refused, usable when
   value is accepted. */
static int probe_opt(struct gen *g, struct gg_case *c, const struct gen_config *k, int64_t m,
                     const char *key, int64_t invalid, int64_t value)
{
    int ok = 1;
    for (int pass = 0; pass < 2 && ok; pass++) {
        gen_probe_shape(g, c, k, m);
        gen_set_opt(g, c, key, pass == 0 ? invalid : value);
        int accepted = gen_admit(g, c, 0);
        ok = pass == 0 ? !accepted : accepted;
    }
    return ok;
}

static int64_t gcd(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Adds configuration k when the kernel accepts it for some M of the menu (batched, dense) or on
   the probe problem, with the options it knows. */
static void probe_config(struct gen *g, struct gg_case *c, struct gg_gen_caps *caps,
                         struct gen_config k)
{
    if (g->died)
        return; /* c stays the problem the probe died on */
    int rows = k.op == GG_OP_BATCHED || k.op == GG_OP_DENSE;
    int64_t m_probe = -1;
    k.m_lo = -1;
    k.m_hi = -1;
    /* Screen: most configurations are refused whatever M is; the menu is probed only for those
       accepted with a small or a large M. */
    int screened = !rows;
    for (int64_t m = 8; rows && !screened && m <= 256; m *= 32) {
        gen_probe_shape(g, c, &k, m);
        screened = gen_admit(g, c, 0);
    }
    int64_t took = 0, refused[sizeof M_MENU / sizeof M_MENU[0]];
    int n_refused = 0;
    k.m_first = 0;
    for (int i = 0; screened && i < (rows ? (int)(sizeof M_MENU / sizeof M_MENU[0]) : 1); i++) {
        gen_probe_shape(g, c, &k, M_MENU[i]);
        if (!gen_admit(g, c, 0)) {
            if (M_MENU[i] > 0)
                refused[n_refused++] = M_MENU[i];
            continue;
        }
        if (k.m_lo < 0)
            k.m_lo = M_MENU[i];
        k.m_hi = M_MENU[i];
        if (m_probe < 1)
            m_probe = M_MENU[i];
        if (M_MENU[i] > 0 && k.m_first == 0)
            k.m_first = M_MENU[i];
        took = gcd(took, M_MENU[i]);
    }
    if (k.m_lo < 0 || g->nomem)
        return;
    k.m_align = took > 1 ? took : 1;
    for (int i = 0; i < n_refused; i++)
        if (refused[i] % k.m_align == 0)
            k.m_align = 1; /* refused for another reason than its factor */
    if (k.m_hi == M_MENU[sizeof M_MENU / sizeof M_MENU[0] - 1])
        k.m_hi = GEN_M_UNBOUNDED;
    static const struct {
        unsigned bit;
        const char *key;
        int64_t invalid, value;
    } OPTS[] = {{GEN_OPT_SPLIT_K, "split_k", 0, 2},   {GEN_OPT_STREAMS, "streams", 0, 2},
                {GEN_OPT_THRESHOLD, "threshold", -1, 0}, {GEN_OPT_WORKERS, "workers", 0, 2},
                {GEN_OPT_LENS_FROM, "lens_from", 7, 1}};
    k.opts = 0;
    for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0]; i++)
        if (probe_opt(g, c, &k, m_probe, OPTS[i].key, OPTS[i].invalid, OPTS[i].value))
            k.opts |= OPTS[i].bit;
    gen_freedoms_probe(g, c, &k, m_probe);
    if (g->died || g->nomem)
        return;
    struct gen_config *v = realloc(caps->v, ((size_t)caps->n + 1) * sizeof *v);
    if (v == NULL) {
        g->nomem = 1;
        return;
    }
    caps->v = v;
    caps->v[caps->n++] = k;
    caps->ops |= GG_OP_BIT(k.op);
}

void gen_caps_release(struct gg_gen_caps *caps)
{
    free(caps->v);
    caps->v = NULL;
    caps->n = 0;
}

/* Every configuration of the menu the kernel (with the configured mutant) supports. A probe
   death ends the probing: GG_E_ABI, with err saying how and on which configuration. */
static enum gg_status probe_caps(const struct gg_gen_config *cfg, struct gg_gen_caps *caps,
                                 char *err, size_t err_len)
{
    memset(caps, 0, sizeof *caps);
    struct gen g = {.cfg = cfg, .probing = 1};
    struct gg_case c;
    gg_case_init(&c);
    snprintf(c.kernel, sizeof c.kernel, "%s", cfg->kernel->name);
    snprintf(c.mutant, sizeof c.mutant, "%s", cfg->mutant ? cfg->mutant : "");
    for (int op = 0; op < GG_OP_COUNT && !g.died; op++) {
        if (!(cfg->kernel->ops & GG_OP_BIT(op)))
            continue;
        for (int t = 0; t < N_TUPLES && !g.died; t++)
            for (size_t o = 0; o < sizeof OUT_TYPES / sizeof OUT_TYPES[0]; o++)
                for (int lay = 0; lay <= (op == GG_OP_BATCHED); lay++)
                    for (int b = 0; b < (has_bias((enum gg_op)op) ? 3 : 1); b++)
                        probe_config(&g, &c, caps,
                                     (struct gen_config){.op = (enum gg_op)op,
                                                         .a = TUPLES[t].a,
                                                         .b = TUPLES[t].b,
                                                         .c = OUT_TYPES[o],
                                                         .bias = BIAS_TYPES[b],
                                                         .scaling = TUPLES[t].s,
                                                         .layout = (enum gg_layout)lay});
    }
    if (g.died) {
        const char *how;
        gg_probe_deaths(cfg->probe, &how);
        snprintf(err, err_len, "generator: probing %s a=%s b=%s c=%s scaling %s: %s",
                 gg_op_name(c.op), gg_dtype_name(c.a_dtype), gg_dtype_name(c.b_dtype),
                 gg_dtype_name(c.c_dtype), gg_scaling_name(c.scaling), how);
    } else if (g.nomem) {
        snprintf(err, err_len, "generator: out of memory probing kernel %s", cfg->kernel->name);
    }
    gg_case_free(&c);
    if (g.died || g.nomem) {
        gen_caps_release(caps);
        return g.died ? GG_E_ABI : GG_E_NOMEM;
    }
    return GG_OK;
}

/* ---- strategies ----------------------------------------------------------------------------- */

/* The uniform baseline: op, dtypes and recipe among the supported configurations, 1..16 groups
   of 0..512 rows (M and the batch drawn alike), N and K uniform in 1..2048 (K a multiple of 32
   for E8M0 recipes), normal or uniform data (special codes in both inputs one case in
   UNIFORM_CODES), options uniform in their range; layouts as gen_freedoms_draw() draws them
   for it (uniform values, not edge classes). */
static void strategy_uniform(struct gen *g, struct gg_case *c)
{
    gen_use_config(g, c, ~0u);
    int64_t groups = gen_range(&g->r, 1, 16), lens[16];
    for (int64_t i = 0; i < groups; i++)
        lens[i] = gen_range(&g->r, 0, 512);
    gen_shape(g, c, lens, groups);
    if (c->op == GG_OP_BATCHED || c->op == GG_OP_DENSE)
        c->m = gen_range(&g->r, g->conf->m_lo, g->conf->m_hi < 512 ? g->conf->m_hi : 512);
    c->n = gen_range(&g->r, 1, 2048);
    c->k = c->scaling == GG_SCALING_MX || c->scaling == GG_SCALING_MX_B
               ? GG_MX_BLOCK * gen_range(&g->r, 1, 2048 / GG_MX_BLOCK)
               : gen_range(&g->r, 1, 2048);
    gen_dispatch(g, c, 0.5, 8);
    c->dist_a = gen_dist_plain(g);
    c->dist_b = gen_dist_plain(g);
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    if (gen_chance(&g->r, UNIFORM_CODES))
        gen_codes(g, c);
}

/* The targeted strategies, one per fault class a campaign can aim at (--faults): its name, its
   bit of the mask (bit i for row i) and how it draws a case (gg_strategy_<name>.c). Adding a
   strategy is a row here, its bit in gg_gen.h and its file. */
static const struct strategy {
    const char *name;
    unsigned bit;
    void (*draw)(struct gen *g, struct gg_case *c);
} STRATEGIES[] = {
    {"snr", GG_FAULTS_SNR, gen_strategy_snr},
    {"i64", GG_FAULTS_I64, gen_strategy_i64},
    {"zero", GG_FAULTS_ZERO, gen_strategy_zero},
    {"alias", GG_FAULTS_ALIAS, gen_strategy_alias},
};
#define N_STRATEGIES (int)(sizeof STRATEGIES / sizeof STRATEGIES[0])
_Static_assert(GG_FAULTS_ALL == (1u << N_STRATEGIES) - 1, "one strategy per fault bit");

/* A case of one of the fault classes in the mask `classes` (uniformly); returns the class drawn,
   or -1 when the mask is empty. With the snr class selected, one case in TARGETED_CODES, of
   whatever class, carries special codes in both inputs (gen_codes), aimed at the nan class: a
   kernel that decodes or propagates an Inf, NaN, -0, largest finite or smallest subnormal code
   wrongly shows it on any shape. Cases with planted E8M0 codes keep their small data. */
static int strategy_targeted(struct gen *g, struct gg_case *c, unsigned classes)
{
    if (classes == 0)
        return -1;
    int pick = (int)gen_range(&g->r, 0, __builtin_popcount(classes) - 1), i = 0;
    for (; i < N_STRATEGIES; i++)
        if ((classes & STRATEGIES[i].bit) && pick-- == 0)
            break;
    STRATEGIES[i].draw(g, c);
    if ((classes & GG_FAULTS_SNR) && c->plant_e8m0 == 0 && gen_chance(&g->r, TARGETED_CODES))
        gen_codes(g, c);
    gen_fit_data(c);
    return i;
}

/* ---- entry points --------------------------------------------------------------------------- */

unsigned gg_faults_parse(const char *s)
{
    unsigned mask = 0;
    if (s == NULL || *s == '\0')
        return 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        unsigned bit = 0;
        if (len == 3 && strncmp(p, "all", 3) == 0)
            bit = GG_FAULTS_ALL;
        for (int i = 0; i < N_STRATEGIES && bit == 0; i++)
            if (strlen(STRATEGIES[i].name) == len && strncmp(p, STRATEGIES[i].name, len) == 0)
                bit = STRATEGIES[i].bit;
        if (bit == 0)
            return 0;
        mask |= bit;
        if (p[len] == '\0')
            return mask;
        p += len + 1;
    }
}

/* Checks the kernel and the mutant list (each item one of the kernel's) and probes the
   capabilities into *caps (owned by the caller on success). */
static enum gg_status probe(const struct gg_gen_config *cfg, struct gg_gen_caps *caps, char *err,
                            size_t err_len)
{
    memset(caps, 0, sizeof *caps);
    if (cfg == NULL || cfg->kernel == NULL || cfg->kernel->supports == NULL) {
        snprintf(err, err_len, "generator: no kernel");
        return GG_E_INVAL;
    }
    const char *mutant = cfg->mutant ? cfg->mutant : "";
    char why[256];
    if (mutant[0] &&
        !gg_mutant_list_check(mutant, cfg->kernel->mutants, cfg->kernel->name, why, sizeof why)) {
        snprintf(err, err_len, "generator: %s", why);
        return GG_E_INVAL;
    }
    if (strlen(mutant) >= GG_CASE_NAME_MAX) {
        snprintf(err, err_len, "generator: mutant list '%s' is longer than %d characters",
                 mutant, GG_CASE_NAME_MAX - 1);
        return GG_E_INVAL;
    }
    enum gg_status st = probe_caps(cfg, caps, err, err_len);
    if (st != GG_OK)
        return st;
    if (caps->n == 0) {
        snprintf(err, err_len,
                 "generator: kernel %s%s%s supports none of the configurations the generator "
                 "draws",
                 cfg->kernel->name, mutant[0] ? " with mutant " : "", mutant);
        return GG_E_UNSUPPORTED;
    }
    return GG_OK;
}

enum gg_status gg_gen_caps_probe(const struct gg_gen_config *cfg, struct gg_gen_caps **caps,
                                 char *err, size_t err_len)
{
    *caps = malloc(sizeof **caps);
    if (*caps == NULL) {
        snprintf(err, err_len, "generator: out of memory");
        return GG_E_NOMEM;
    }
    enum gg_status st = probe(cfg, *caps, err, err_len);
    if (st != GG_OK) {
        gg_gen_caps_free(*caps);
        *caps = NULL;
    }
    return st;
}

void gg_gen_caps_free(struct gg_gen_caps *caps)
{
    if (caps != NULL)
        gen_caps_release(caps);
    free(caps);
}

enum gg_status gen_caps_of(const struct gg_gen_config *cfg, struct gg_gen_caps *own,
                           const struct gg_gen_caps **caps, char *err, size_t err_len)
{
    memset(own, 0, sizeof *own);
    *caps = own;
    if (cfg != NULL && cfg->caps != NULL && cfg->kernel != NULL) {
        *caps = cfg->caps;
        if (cfg->caps->n > 0)
            return GG_OK;
        snprintf(err, err_len, "generator: kernel %s supports no configuration",
                 cfg->kernel->name);
        return GG_E_UNSUPPORTED;
    }
    return probe(cfg, own, err, err_len);
}

struct gen gen_make(const struct gg_gen_config *cfg, const struct gg_gen_caps *caps,
                    uint64_t seed, uint64_t stream, uint64_t i)
{
    const struct gg_kernel *k = cfg->kernel;
    return (struct gen){.cfg = cfg,
                        .caps = caps,
                        .r = {.seed = seed, .stream = stream, .i = i},
                        .tile_m = k->tile_m > 0 ? k->tile_m : 64,
                        .tile_n = k->tile_n > 0 ? k->tile_n : 64,
                        .tile_k = k->tile_k > 0 ? k->tile_k : 128,
                        .max_bytes = kernel_max_bytes(cfg)};
}

/* A fresh case of the campaign: kernel, mutant and a data seed drawn from g. */
static void case_start(struct gen *g, struct gg_case *c)
{
    gg_case_init(c);
    snprintf(c->kernel, sizeof c->kernel, "%s", g->cfg->kernel->name);
    snprintf(c->mutant, sizeof c->mutant, "%s", g->cfg->mutant ? g->cfg->mutant : "");
    c->seed = gen_u64(&g->r);
}

/* The last resort: the probe problem of a drawn configuration (supported by construction). */
static int fallback(struct gen *g, struct gg_case *c)
{
    case_start(g, c);
    const struct gen_config *k = &g->caps->v[gen_range(&g->r, 0, g->caps->n - 1)];
    g->conf = k;
    gen_probe_shape(g, c, k, k->m_lo > 1 ? k->m_lo : k->m_first > 8 || k->m_hi < 8 ? k->m_first : 8);
    return !g->nomem && gen_admit(g, c, g->max_bytes);
}

/*
 * Attempts until one is admitted. A class whose draw needed more memory than the bound (the
 * i64 shapes of quantised recipes, whose estimate counts fp32 source copies) is left out of the
 * later attempts of this case; after GEN_ATTEMPTS, or with no class left, the probe problem of
 * a drawn configuration is the case.
 */
enum gg_status gen_draw(const struct gg_gen_config *cfg, const struct gg_gen_caps *caps,
                        uint64_t seed, uint64_t i, struct gg_case *c, char *err, size_t err_len)
{
    unsigned classes = cfg->faults & GG_FAULTS_ALL ? cfg->faults & GG_FAULTS_ALL : GG_FAULTS_ALL;
    for (uint64_t t = 0;; t++) {
        struct gen g = gen_make(cfg, caps, seed, GEN_STREAM + t, i);
        int targeted = cfg->strategy != GG_STRATEGY_UNIFORM, cls = -1;
        if (t == GEN_ATTEMPTS || (targeted && classes == 0)) {
            int ok = fallback(&g, c);
            if (ok)
                return GG_OK;
            gg_case_free(c);
            if (g.nomem)
                break;
            snprintf(err, err_len, "generator: no case of kernel %s fits in %lld bytes",
                     cfg->kernel->name, (long long)kernel_max_bytes(cfg));
            return GG_E_UNSUPPORTED;
        }
        case_start(&g, c);
        if (targeted)
            cls = strategy_targeted(&g, c, classes);
        else
            strategy_uniform(&g, c);
        gen_place(&g, c);
        gen_freedoms_draw(&g, c, !targeted);
        enum admission a = g.nomem ? ADMIT_REFUSED : admit_why(&g, c, g.max_bytes);
        if (g.nomem) {
            gg_case_free(c);
            break;
        }
        if (a == ADMIT_OK)
            return GG_OK;
        if (a == ADMIT_MEMORY && cls >= 0)
            classes &= ~(1u << cls);
        gg_case_free(c);
    }
    snprintf(err, err_len, "generator: out of memory");
    return GG_E_NOMEM;
}

enum gg_status gg_generate(const struct gg_gen_config *cfg, uint64_t seed, uint64_t i,
                           struct gg_case *c, char *err, size_t err_len)
{
    gg_case_init(c);
    struct gg_gen_caps own;
    const struct gg_gen_caps *caps;
    enum gg_status st = gen_caps_of(cfg, &own, &caps, err, err_len);
    if (st == GG_OK)
        st = gen_draw(cfg, caps, seed, i, c, err, err_len);
    gen_caps_release(&own);
    return st;
}

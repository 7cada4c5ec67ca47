/*
 * gg_case_keys.c — the keys of a case file: one table lists them in canonical order with the ops
 * they belong to, the ops that require them, their parser and their printer, so parsing and
 * printing cannot drift apart; and the tokens, names and numbers their values are made of. The
 * file around the keys (header, lines, metadata, the checks at the end) is gg_case_io.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/case/case_int.h"

#define OPS_GROUPED \
    (GG_OP_BIT(GG_OP_GROUPED_FWD) | GG_OP_BIT(GG_OP_GROUPED_DGRAD) | GG_OP_BIT(GG_OP_GROUPED_WGRAD))
#define OPS_BATCHED GG_OP_BIT(GG_OP_BATCHED)
#define OPS_DENSE GG_OP_BIT(GG_OP_DENSE)
#define OPS_MOE GG_OP_BIT(GG_OP_MOE_SORTED)
#define OPS_ALL (OPS_GROUPED | OPS_BATCHED | OPS_DENSE | OPS_MOE)
/* Ops with an output bias (gg_kernel.h). */
#define OPS_BIAS (GG_OP_BIT(GG_OP_GROUPED_FWD) | OPS_BATCHED | OPS_DENSE | OPS_MOE)

/* enum gg_scaling */
#define SCALING_NAMES gg_scaling_names
static const char *const RULE_NAMES[] = {"floor", "ceil"};            /* enum gg_mx_rule */
static const char *const SAT_NAMES[] = {"none", "finite"};            /* enum gg_sat */
static const char *const LAYOUT_NAMES[] = {"nk", "kn"};               /* enum gg_layout */
static const char *const GUARD_NAMES[] = {"band", "end", "start"};     /* enum gg_guard */
/* bias: the names and the dtypes they stand for ("none" is the default, no bias). */
static const char *const BIAS_NAMES[] = {"none", "f32", "bf16"};
static const enum gg_dtype BIAS_DTYPES[] = {GG_DTYPE_NONE, GG_DTYPE_F32, GG_DTYPE_BF16};
static const char *const ABC[] = {"a", "b", "c"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- messages ------------------------------------------------------------------------------ */

/* "name:line: key: message" for the current line: a malformed value. */
static enum gg_status bad(const struct pctx *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static enum gg_status bad(const struct pctx *x, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return case_at(x, x->line, GG_E_PARSE, "%s: %s", x->key, msg);
}

/* ---- tokens and numbers -------------------------------------------------------------------- */

int case_is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}

/* Next blank-separated token of *cur, NUL-terminated in place; NULL at the end. */
char *case_next_tok(char **cur)
{
    char *s = *cur;
    while (case_is_blank(*s))
        s++;
    if (*s == '\0') {
        *cur = s;
        return NULL;
    }
    char *e = s;
    while (*e != '\0' && !case_is_blank(*e))
        e++;
    if (*e != '\0')
        *e++ = '\0';
    *cur = e;
    return s;
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

static const char *name_of(const char *const *names, int n, int v)
{
    return v >= 0 && v < n ? names[v] : "?";
}

/* Decimal or 0x-hexadecimal digits: 0 ok, 1 malformed or empty, 2 above 2^64 - 1. */
int case_scan_u64(const char *s, uint64_t *v)
{
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0')
        return 1;
    uint64_t acc = 0;
    int over = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return 1;
        over |= __builtin_mul_overflow(acc, base, &acc) | __builtin_add_overflow(acc, d, &acc);
    }
    *v = acc;
    return over ? 2 : 0;
}

static enum gg_status number_error(const struct pctx *x, int why, const char *s)
{
    return why == 1 ? bad(x, "bad number '%.40s'", s) : bad(x, "number '%.40s' out of range", s);
}

static enum gg_status get_u64(const struct pctx *x, const char *s, uint64_t *v)
{
    int why = case_scan_u64(s, v);
    return why ? number_error(x, why, s) : GG_OK;
}

/* An int64 with optional leading '-'. */
static enum gg_status get_i64(const struct pctx *x, const char *s, int64_t *v)
{
    int neg = s[0] == '-';
    uint64_t mag;
    int why = case_scan_u64(s + neg, &mag);
    if (why == 0 && mag > (uint64_t)INT64_MAX + (uint64_t)neg)
        why = 2;
    if (why)
        return number_error(x, why, s);
    *v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return GG_OK;
}

/* Exactly one value token. */
static enum gg_status one_value(const struct pctx *x, char *args, char **tok)
{
    *tok = case_next_tok(&args);
    if (*tok == NULL)
        return bad(x, "expected a value");
    const char *extra = case_next_tok(&args);
    if (extra != NULL)
        return bad(x, "unexpected '%.40s' after the value", extra);
    return GG_OK;
}

/*
 * NAME=VALUE tokens with NAME one of names[0..n): vals[i] receives the value of names[i] (NULL
 * when absent). Each name at most once; at least one token unless allow_empty.
 */
static enum gg_status assigns(const struct pctx *x, char *args, const char *const *names, int n,
                              char **vals, int allow_empty)
{
    for (int i = 0; i < n; i++)
        vals[i] = NULL;
    int count = 0;
    for (char *t; (t = case_next_tok(&args)) != NULL; count++) {
        char *eq = strchr(t, '=');
        if (eq == NULL)
            return bad(x, "expected NAME=VALUE, got '%.40s'", t);
        *eq = '\0';
        int i = lookup(names, n, t);
        if (i < 0) {
            char list[128] = "";
            for (int j = 0; j < n; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                         names[j]);
            return bad(x, "unknown field '%.40s' (expected %s)", t, list);
        }
        if (vals[i] != NULL)
            return bad(x, "'%s' given twice", names[i]);
        vals[i] = eq + 1;
    }
    if (count == 0 && !allow_empty)
        return bad(x, "expected NAME=VALUE");
    return GG_OK;
}

/* "x, y or z" of names[0..n) into buf. */
static const char *name_list(const char *const *names, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int j = 0; j < n; j++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
                 j == 0 ? "" : j == n - 1 ? " or " : ", ", names[j]);
    return buf;
}

/* Shortest "%.{p}g" text of x that reads back as x. */
static void format_double(double v, char *buf, size_t len)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
    snprintf(buf, len, "%.17g", v);
}


/* ---- keys: parsers and printers ------------------------------------------------------------ */

#define FIELD(c, k, i, type) ((type *)((char *)(c) + (k)->field[i]))
#define CFIELD(c, k, i, type) ((const type *)((const char *)(c) + (k)->field[i]))

static enum gg_status parse_op(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                               char *args)
{
    (void)k;
    char *t;
    enum gg_status st = one_value(x, args, &t);
    if (st != GG_OK)
        return st;
    c->op = gg_op_from_name(t);
    if (c->op == GG_OP_COUNT) {
        const char *names[GG_OP_COUNT];
        char list[128];
        for (int op = 0; op < GG_OP_COUNT; op++)
            names[op] = gg_op_name((enum gg_op)op);
        return bad(x, "unknown op '%.40s' (expected %s)", t,
                   name_list(names, GG_OP_COUNT, list, sizeof list));
    }
    return GG_OK;
}

static void print_op(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fprintf(f, "%s %s\n", k->name, gg_op_name(c->op));
}

/* kernel, mutant: one name token into a char[GG_CASE_NAME_MAX] field. */
static enum gg_status parse_name(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                 char *args)
{
    char *t;
    enum gg_status st = one_value(x, args, &t);
    if (st != GG_OK)
        return st;
    if (strlen(t) >= GG_CASE_NAME_MAX)
        return bad(x, "name longer than %d characters", GG_CASE_NAME_MAX - 1);
    strcpy(FIELD(c, k, 0, char), t);
    return GG_OK;
}

static void print_name(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    const char *s = CFIELD(c, k, 0, char);
    if (s[0] != '\0' || k->required)
        fprintf(f, "%s %s\n", k->name, s);
}

/* groups, batch, m, n, k: one integer. */
static enum gg_status parse_int(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                char *args)
{
    char *t;
    enum gg_status st = one_value(x, args, &t);
    return st != GG_OK ? st : get_i64(x, t, FIELD(c, k, 0, int64_t));
}

static void print_int(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fprintf(f, "%s %lld\n", k->name, (long long)*CFIELD(c, k, 0, int64_t));
}

static enum gg_status parse_seed(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                 char *args)
{
    (void)k;
    char *t;
    enum gg_status st = one_value(x, args, &t);
    return st != GG_OK ? st : get_u64(x, t, &c->seed);
}

static void print_seed(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fprintf(f, "%s 0x%llx\n", k->name, (unsigned long long)c->seed);
}

/* options: KEY=INT pairs, kept sorted by key. */
static enum gg_status parse_options(const struct pctx *x, const struct key_def *k,
                                    struct gg_case *c, char *args)
{
    (void)k;
    for (char *t; (t = case_next_tok(&args)) != NULL;) {
        char *eq = strchr(t, '=');
        if (eq == NULL)
            return bad(x, "expected NAME=VALUE, got '%.40s'", t);
        *eq = '\0';
        size_t len = strlen(t);
        if (len == 0 || len >= sizeof c->opt_key[0] || strspn(t, "abcdefghijklmnopqrstuvwxyz"
                                                                 "0123456789_") != len)
            return bad(x, "option name '%.40s' must be [a-z0-9_]+, at most %zu characters", t,
                       sizeof c->opt_key[0] - 1);
        int64_t v;
        enum gg_status st = get_i64(x, eq + 1, &v);
        if (st != GG_OK)
            return st;
        int pos = 0;
        while (pos < c->n_opts && strcmp(c->opt_key[pos], t) < 0)
            pos++;
        if (pos < c->n_opts && strcmp(c->opt_key[pos], t) == 0)
            return bad(x, "'%s' given twice", t);
        if (c->n_opts == GG_CASE_MAX_OPTS)
            return bad(x, "too many options (at most %d)", GG_CASE_MAX_OPTS);
        memmove(c->opt_key[pos + 1], c->opt_key[pos],
                (size_t)(c->n_opts - pos) * sizeof c->opt_key[0]);
        memmove(&c->opt_value[pos + 1], &c->opt_value[pos],
                (size_t)(c->n_opts - pos) * sizeof c->opt_value[0]);
        strcpy(c->opt_key[pos], t);
        c->opt_value[pos] = v;
        c->n_opts++;
    }
    if (c->n_opts == 0)
        return bad(x, "expected NAME=VALUE");
    return GG_OK;
}

static void print_options(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    if (c->n_opts <= 0)
        return;
    int n = c->n_opts > GG_CASE_MAX_OPTS ? GG_CASE_MAX_OPTS : c->n_opts;
    int order[GG_CASE_MAX_OPTS];
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && strcmp(c->opt_key[order[j - 1]], c->opt_key[i]) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    fputs(k->name, f);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s=%lld", c->opt_key[order[i]], (long long)c->opt_value[order[i]]);
    fputc('\n', f);
}

static enum gg_status parse_dtypes(const struct pctx *x, const struct key_def *k,
                                   struct gg_case *c, char *args)
{
    (void)k;
    static const char *const names[] = {"a", "b", "c", "acc"};
    enum gg_dtype *dst[] = {&c->a_dtype, &c->b_dtype, &c->c_dtype, &c->acc_dtype};
    char *v[4];
    enum gg_status st = assigns(x, args, names, 4, v, 0);
    if (st != GG_OK)
        return st;
    for (int i = 0; i < 4; i++) {
        if (v[i] == NULL) {
            if (i < 3)
                return bad(x, "missing %s=", names[i]);
            continue;
        }
        *dst[i] = gg_dtype_from_name(v[i]);
        if (*dst[i] == GG_DTYPE_NONE)
            return bad(x, "unknown dtype '%.40s' for %s", v[i], names[i]);
    }
    return GG_OK;
}

static void print_dtypes(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fprintf(f, "%s a=%s b=%s c=%s", k->name, gg_dtype_name(c->a_dtype), gg_dtype_name(c->b_dtype),
            gg_dtype_name(c->c_dtype));
    if (c->acc_dtype != GG_DTYPE_F32)
        fprintf(f, " acc=%s", gg_dtype_name(c->acc_dtype));
    fputc('\n', f);
}

/* One of names[] into *out; what names the field in the message. */
static enum gg_status get_enum(const struct pctx *x, const char *const *names, int n,
                               const char *what, const char *s, int *out)
{
    int i = lookup(names, n, s);
    if (i < 0) {
        char list[128];
        return bad(x, "unknown %s '%.40s' (expected %s)", what, s,
                   name_list(names, n, list, sizeof list));
    }
    *out = i;
    return GG_OK;
}

static enum gg_status parse_scaling(const struct pctx *x, const struct key_def *k,
                                    struct gg_case *c, char *args)
{
    (void)k;
    static const char *const names[] = {"rule", "sat"};
    char *t = case_next_tok(&args), *v[2];
    int kind, rule = GG_MX_RULE_CEIL, sat = GG_SAT_FINITE;
    enum gg_status st;
    char list[128];
    if (t == NULL)
        return bad(x, "expected %s",
                   name_list(SCALING_NAMES, COUNT(SCALING_NAMES), list, sizeof list));
    if ((st = get_enum(x, SCALING_NAMES, COUNT(SCALING_NAMES), "scaling", t, &kind)) != GG_OK ||
        (st = assigns(x, args, names, 2, v, 1)) != GG_OK)
        return st;
    if (v[0] != NULL && kind != GG_SCALING_MX && kind != GG_SCALING_MX_B)
        return bad(x, "rule= applies to scaling mx and mx_b only");
    if ((v[0] != NULL && (st = get_enum(x, RULE_NAMES, 2, "rule", v[0], &rule)) != GG_OK) ||
        (v[1] != NULL && (st = get_enum(x, SAT_NAMES, 2, "sat", v[1], &sat)) != GG_OK))
        return st;
    c->scaling = (enum gg_scaling)kind;
    c->mx_rule = (enum gg_mx_rule)rule;
    c->quant_sat = (enum gg_sat)sat;
    return GG_OK;
}

static void print_scaling(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fprintf(f, "%s %s", k->name, name_of(SCALING_NAMES, COUNT(SCALING_NAMES), (int)c->scaling));
    if (c->mx_rule != GG_MX_RULE_CEIL)
        fprintf(f, " rule=%s", name_of(RULE_NAMES, COUNT(RULE_NAMES), (int)c->mx_rule));
    if (c->quant_sat != GG_SAT_FINITE)
        fprintf(f, " sat=%s", name_of(SAT_NAMES, COUNT(SAT_NAMES), (int)c->quant_sat));
    fputc('\n', f);
}

static enum gg_status parse_bias(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                 char *args)
{
    (void)k;
    char *t;
    int i;
    enum gg_status st = one_value(x, args, &t);
    if (st == GG_OK)
        st = get_enum(x, BIAS_NAMES, COUNT(BIAS_NAMES), "bias type", t, &i);
    if (st != GG_OK)
        return st;
    c->bias_dtype = BIAS_DTYPES[i];
    return GG_OK;
}

static void print_bias(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    if (c->bias_dtype != GG_DTYPE_NONE)
        fprintf(f, "%s %s\n", k->name, gg_dtype_name(c->bias_dtype));
}

/* A key of one SUB=NAME assignment naming a value of an enum (layout b=, guard inputs=); the
   enum's first name is the default and is not printed. */
static enum gg_status parse_one_enum(const struct pctx *x, char *args, const char *sub,
                                     const char *const *names, int n, const char *what, int *out)
{
    const char *const subs[] = {sub};
    char *v[1];
    enum gg_status st = assigns(x, args, subs, 1, v, 0);
    if (st != GG_OK)
        return st;
    if (v[0] == NULL)
        return bad(x, "missing %s=", sub);
    return get_enum(x, names, n, what, v[0], out);
}

static void print_one_enum(FILE *f, const struct key_def *k, const char *sub,
                           const char *const *names, int n, int value)
{
    if (value != 0)
        fprintf(f, "%s %s=%s\n", k->name, sub, name_of(names, n, value));
}

static enum gg_status parse_layout(const struct pctx *x, const struct key_def *k,
                                   struct gg_case *c, char *args)
{
    (void)k;
    int layout;
    enum gg_status st =
        parse_one_enum(x, args, "b", LAYOUT_NAMES, COUNT(LAYOUT_NAMES), "layout", &layout);
    if (st == GG_OK)
        c->b_layout = (enum gg_layout)layout;
    return st;
}

static void print_layout(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    print_one_enum(f, k, "b", LAYOUT_NAMES, COUNT(LAYOUT_NAMES), (int)c->b_layout);
}

/* guard inputs=band|end|start. */
static enum gg_status parse_guard(const struct pctx *x, const struct key_def *k,
                                  struct gg_case *c, char *args)
{
    (void)k;
    int guard;
    enum gg_status st =
        parse_one_enum(x, args, "inputs", GUARD_NAMES, COUNT(GUARD_NAMES), "placement", &guard);
    if (st == GG_OK)
        c->guard = (enum gg_guard)guard;
    return st;
}

static void print_guard(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    print_one_enum(f, k, "inputs", GUARD_NAMES, COUNT(GUARD_NAMES), (int)c->guard);
}

/* One group_lens token: V, V*R, rand(LO,HI) or rand(LO,HI)*R. */
static enum gg_status parse_item(const struct pctx *x, char *t, struct gg_group_item *it)
{
    enum gg_status st;
    *it = (struct gg_group_item){.repeat = 1};
    char *star = strrchr(t, '*');
    if (star != NULL) {
        *star = '\0';
        if ((st = get_i64(x, star + 1, &it->repeat)) != GG_OK)
            return st;
        if (it->repeat < 1)
            return bad(x, "repeat count %lld is below 1", (long long)it->repeat);
    }
    if (strncmp(t, "rand(", 5) != 0)
        return get_i64(x, t, &it->value);
    size_t n = strlen(t);
    char *comma = strchr(t, ',');
    if (t[n - 1] != ')' || comma == NULL)
        return bad(x, "bad item '%.40s' (expected rand(LO,HI))", t);
    t[n - 1] = '\0';
    *comma = '\0';
    it->is_rand = 1;
    if ((st = get_i64(x, t + 5, &it->lo)) != GG_OK || (st = get_i64(x, comma + 1, &it->hi)) != GG_OK)
        return st;
    return GG_OK;
}

/* group_lens: items in order; adjacent equal constants merge into one V*R item (canonical). */
static enum gg_status parse_lens(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                 char *args)
{
    (void)k;
    int cap = 0;
    for (char *t; (t = case_next_tok(&args)) != NULL;) {
        struct gg_group_item it;
        enum gg_status st = parse_item(x, t, &it);
        if (st != GG_OK)
            return st;
        struct gg_group_item *prev = c->n_items ? &c->items[c->n_items - 1] : NULL;
        if (prev != NULL && !prev->is_rand && !it.is_rand && prev->value == it.value) {
            if (__builtin_add_overflow(prev->repeat, it.repeat, &prev->repeat))
                return bad(x, "repeat count of %lld overflows", (long long)it.value);
            continue;
        }
        if (c->n_items == cap) {
            cap = cap ? 2 * cap : 8;
            struct gg_group_item *p = realloc(c->items, (size_t)cap * sizeof *p);
            if (p == NULL)
                return case_at(x, x->line, GG_E_NOMEM, "group_lens: out of memory");
            c->items = p;
        }
        c->items[c->n_items++] = it;
    }
    if (c->n_items == 0)
        return bad(x, "expected group sizes");
    return GG_OK;
}

static void print_item(FILE *f, const struct gg_group_item *it, int64_t repeat)
{
    if (it->is_rand)
        fprintf(f, " rand(%lld,%lld)", (long long)it->lo, (long long)it->hi);
    else
        fprintf(f, " %lld", (long long)it->value);
    if (repeat != 1)
        fprintf(f, "*%lld", (long long)repeat);
}

static void print_lens(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    fputs(k->name, f);
    for (int i = 0; i < c->n_items;) {
        const struct gg_group_item *it = &c->items[i];
        int64_t repeat = it->repeat;
        for (i++; !it->is_rand && i < c->n_items && !c->items[i].is_rand &&
                  c->items[i].value == it->value; i++)
            repeat += c->items[i].repeat;
        print_item(f, it, repeat);
    }
    fputc('\n', f);
}

/* ld, stride, offset: a=INT b=INT c=INT, any subset. */
static enum gg_status parse_triple(const struct pctx *x, const struct key_def *k,
                                   struct gg_case *c, char *args)
{
    char *v[3];
    enum gg_status st = assigns(x, args, ABC, 3, v, 0);
    for (int i = 0; st == GG_OK && i < 3; i++)
        if (v[i] != NULL)
            st = get_i64(x, v[i], FIELD(c, k, i, int64_t));
    return st;
}

static void print_triple(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    const char *sep = k->name;
    for (int i = 0; i < 3; i++) {
        int64_t v = *CFIELD(c, k, i, int64_t);
        if (v != 0) {
            fprintf(f, "%s %s=%lld", sep, ABC[i], (long long)v);
            sep = "";
        }
    }
    if (sep[0] == '\0')
        fputc('\n', f);
}

/* data: a=DIST b=DIST bias=DIST, any subset (bias= only with a bias, gg_case_check). */
static const char *const DATA_NAMES[] = {"a", "b", "bias"};

static enum gg_status parse_data(const struct pctx *x, const struct key_def *k, struct gg_case *c,
                                 char *args)
{
    (void)k;
    struct gg_dist *dst[COUNT(DATA_NAMES)] = {&c->dist_a, &c->dist_b, &c->dist_bias};
    char *v[COUNT(DATA_NAMES)];
    enum gg_status st = assigns(x, args, DATA_NAMES, COUNT(DATA_NAMES), v, 0);
    for (int i = 0; st == GG_OK && i < COUNT(DATA_NAMES); i++) {
        char msg[200];
        if (v[i] != NULL && gg_dist_parse(v[i], dst[i], msg, sizeof msg) != GG_OK)
            st = bad(x, "%s: %s", DATA_NAMES[i], msg);
    }
    return st;
}

/* a= and b= always, bias= exactly when the case has a bias. */
static void print_data(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    const struct gg_dist *d[COUNT(DATA_NAMES)] = {&c->dist_a, &c->dist_b, &c->dist_bias};
    int n = c->bias_dtype != GG_DTYPE_NONE ? 3 : 2;
    fputs(k->name, f);
    for (int i = 0; i < n; i++) {
        char text[128];
        gg_dist_format(d[i], text, sizeof text);
        fprintf(f, " %s=%s", DATA_NAMES[i], text);
    }
    fputc('\n', f);
}

static enum gg_status parse_plant(const struct pctx *x, const struct key_def *k,
                                  struct gg_case *c, char *args)
{
    (void)k;
    static const char *const names[] = {"e8m0"};
    char *v[1], *end;
    enum gg_status st = assigns(x, args, names, 1, v, 0);
    if (st != GG_OK)
        return st;
    if (v[0] == NULL)
        return bad(x, "missing e8m0=");
    errno = 0;
    c->plant_e8m0 = strtod(v[0], &end);
    if (v[0][0] == '\0' || *end != '\0' || errno == ERANGE || !isfinite(c->plant_e8m0))
        return bad(x, "bad number '%.40s'", v[0]);
    return GG_OK;
}

static void print_plant(FILE *f, const struct key_def *k, const struct gg_case *c)
{
    char num[40];
    if (c->plant_e8m0 != 0.0) {
        format_double(c->plant_e8m0, num, sizeof num);
        fprintf(f, "%s e8m0=%s\n", k->name, num);
    }
}

#define OFF(f) offsetof(struct gg_case, f)

/* Every key, in canonical order (case_int.h). */
const struct key_def case_keys[] = {
    {"op", OPS_ALL, OPS_ALL, parse_op, print_op, {0}},
    {"kernel", OPS_ALL, OPS_ALL, parse_name, print_name, {OFF(kernel)}},
    {"options", OPS_ALL, 0, parse_options, print_options, {0}},
    {"mutant", OPS_ALL, 0, parse_name, print_name, {OFF(mutant)}},
    {"dtypes", OPS_ALL, OPS_ALL, parse_dtypes, print_dtypes, {0}},
    {"scaling", OPS_ALL, 0, parse_scaling, print_scaling, {0}},
    {"bias", OPS_BIAS, 0, parse_bias, print_bias, {0}},
    {"layout", OPS_BATCHED, 0, parse_layout, print_layout, {0}},
    {"groups", OPS_GROUPED | OPS_MOE, OPS_GROUPED | OPS_MOE, parse_int, print_int, {OFF(groups)}},
    {"batch", OPS_BATCHED, OPS_BATCHED, parse_int, print_int, {OFF(groups)}},
    {"group_lens", OPS_GROUPED | OPS_MOE, OPS_GROUPED | OPS_MOE, parse_lens, print_lens, {0}},
    {"m", OPS_BATCHED | OPS_DENSE | OPS_MOE, OPS_BATCHED | OPS_DENSE | OPS_MOE, parse_int,
     print_int, {OFF(m)}},
    {"topk", OPS_MOE, OPS_MOE, parse_int, print_int, {OFF(topk)}},
    {"block_m", OPS_MOE, OPS_MOE, parse_int, print_int, {OFF(block_m)}},
    {"n", OPS_ALL, OPS_ALL, parse_int, print_int, {OFF(n)}},
    {"k", OPS_ALL, OPS_ALL, parse_int, print_int, {OFF(k)}},
    {"ld", OPS_ALL, 0, parse_triple, print_triple, {OFF(lda), OFF(ldb), OFF(ldc)}},
    {"stride", OPS_ALL, 0, parse_triple, print_triple,
     {OFF(stride_a), OFF(stride_b), OFF(stride_c)}},
    {"offset", OPS_ALL, 0, parse_triple, print_triple, {OFF(off_a), OFF(off_b), OFF(off_c)}},
    {"guard", OPS_ALL, 0, parse_guard, print_guard, {0}},
    {"data", OPS_ALL, 0, parse_data, print_data, {0}},
    {"plant", OPS_ALL, 0, parse_plant, print_plant, {0}},
    {"seed", OPS_ALL, OPS_ALL, parse_seed, print_seed, {0}},
};

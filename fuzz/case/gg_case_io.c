/*
 * gg_case_io.c — case files: the parser of the line-oriented text format (messages are
 * "name:line: ..."; it never reads past len, so the text need not be NUL-terminated), the
 * canonical printer, the identity hash of the canonical input lines, loading and atomic saving.
 * Each key's value is parsed and printed by its row of the table of keys (gg_case_keys.c); here
 * are the header, the lines, comments and metadata, and the checks once the last line is read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "fuzz/case/case_int.h"

#define MAX_LINE 65536          /* bytes of one line, without its '\n' */
#define HEADER "ggfuzz-case"

/* ---- parser context and messages ----------------------------------------------------------- */

static enum gg_status vat(const struct pctx *x, int line, enum gg_status st, const char *fmt,
                          va_list ap)
{
    if (x->err != NULL && x->err_len > 0) {
        int n = snprintf(x->err, x->err_len, "%s:%d: ", x->name, line);
        if (n >= 0 && (size_t)n < x->err_len)
            vsnprintf(x->err + n, x->err_len - (size_t)n, fmt, ap);
    }
    return st;
}

enum gg_status case_at(const struct pctx *x, int line, enum gg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vat(x, line, st, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- parsing ------------------------------------------------------------------------------- */

struct pstate {
    int have_header;
    int last_line;
    int key_line[CASE_N_KEYS]; /* line of each key, 0 when absent */
};

static enum gg_status parse_header(const struct pctx *x, char *s)
{
    char *magic = case_next_tok(&s), *ver = case_next_tok(&s);
    uint64_t v = 0;
    if (magic == NULL || strcmp(magic, HEADER) != 0 || ver == NULL || case_next_tok(&s) != NULL ||
        case_scan_u64(ver, &v) == 1 || v == 0)
        return case_at(x, x->line, GG_E_PARSE, "not a ggfuzz case (expected '%s %d')", HEADER,
                       GG_CASE_VERSION);
    if (v != GG_CASE_VERSION)
        return case_at(x, x->line, GG_E_PARSE,
                       "case format version %.20s is newer than this ggfuzz (%d)", ver,
                       GG_CASE_VERSION);
    return GG_OK;
}

/* An "@key text" line. */
static enum gg_status parse_meta(const struct pctx *x, struct gg_case *c, char *s)
{
    char *key = s + 1, *text = key;
    while (*text != '\0' && !case_is_blank(*text))
        text++;
    if (*text != '\0')
        *text++ = '\0';
    char msg[200];
    enum gg_status st = gg_case_add_meta(c, key, text, msg, sizeof msg);
    if (st != GG_OK)
        return case_at(x, x->line, st == GG_E_NOMEM ? st : GG_E_PARSE, "%s", msg);
    return GG_OK;
}

static enum gg_status parse_key_line(const struct pctx *cx, struct pstate *ps, struct gg_case *c,
                                     char *s)
{
    struct pctx x = *cx;
    char *key = case_next_tok(&s);
    int i = 0;
    while (i < CASE_N_KEYS && strcmp(case_keys[i].name, key) != 0)
        i++;
    if (i == CASE_N_KEYS)
        return case_at(&x, x.line, GG_E_PARSE, "unknown key '%.40s'", key);
    if (ps->key_line[i] != 0)
        return case_at(&x, x.line, GG_E_PARSE, "%s: given twice (first on line %d)", key,
                       ps->key_line[i]);
    ps->key_line[i] = x.line;
    x.key = case_keys[i].name;
    return case_keys[i].parse(&x, &case_keys[i], c, s);
}

/*
 * One line (n bytes, NUL-terminated copy). Control characters other than tab and CR are binary
 * data anywhere; bytes ≥ 0x80 only in comments and metadata text (checked as UTF-8 there).
 * A '#' at the start or after a blank starts a comment.
 */
static enum gg_status parse_line(const struct pctx *x, struct pstate *ps, struct gg_case *c,
                                 char *s, size_t n)
{
    size_t i0 = 0;
    while (i0 < n && case_is_blank(s[i0]))
        i0++;
    size_t comment = n;
    for (size_t i = i0; i < n; i++)
        if (s[i] == '#' && (i == i0 || case_is_blank(s[i - 1]))) {
            comment = i;
            break;
        }
    size_t ascii_end = i0 < n && s[i0] == '@' ? i0 : comment;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if ((b < 0x20 && b != '\t' && b != '\r') || b == 0x7F || (b >= 0x80 && i < ascii_end))
            return case_at(x, x->line, GG_E_PARSE, "binary or non-ASCII data");
    }
    while (n > i0 && case_is_blank(s[n - 1]))
        s[--n] = '\0';
    if (i0 == n || s[i0] == '#')
        return GG_OK;
    if (!ps->have_header) {
        ps->have_header = 1;
        s[comment] = '\0';
        return parse_header(x, s);
    }
    if (s[i0] == '@')
        return parse_meta(x, c, s + i0);
    s[comment] = '\0';
    return parse_key_line(x, ps, c, s + i0);
}

static int key_index(const char *name, size_t len)
{
    for (int i = 0; i < CASE_N_KEYS; i++)
        if (strlen(case_keys[i].name) == len && strncmp(case_keys[i].name, name, len) == 0)
            return i;
    return -1;
}

/* A semantic message "KEY: ..." points at the line of KEY, or at the last line. */
static int blame_line(const struct pstate *ps, const char *msg)
{
    const char *colon = strchr(msg, ':');
    int i = colon ? key_index(msg, (size_t)(colon - msg)) : -1;
    return i >= 0 && ps->key_line[i] ? ps->key_line[i] : ps->last_line;
}

/* After the last line: keys that do not belong to the op, missing keys, semantic checks. */
static enum gg_status finish(const struct pctx *x, const struct pstate *ps, struct gg_case *c)
{
    if (!ps->have_header)
        return case_at(x, 1, GG_E_PARSE, "not a ggfuzz case (expected '%s %d')", HEADER,
                       GG_CASE_VERSION);
    if (!ps->key_line[CASE_KEY_OP])
        return case_at(x, ps->last_line, GG_E_PARSE, "missing key 'op' (truncated file?)");
    for (int i = 0; i < CASE_N_KEYS; i++)
        if (ps->key_line[i] && !(case_keys[i].ops & GG_OP_BIT(c->op)))
            return case_at(x, ps->key_line[i], GG_E_PARSE, "%s: not valid for op %s",
                           case_keys[i].name, gg_op_name(c->op));
    for (int i = 0; i < CASE_N_KEYS; i++)
        if (!ps->key_line[i] && (case_keys[i].required & GG_OP_BIT(c->op)))
            return case_at(x, ps->last_line, GG_E_PARSE, "missing key '%s' (truncated file?)",
                           case_keys[i].name);
    if (c->op == GG_OP_DENSE)
        c->groups = 1;
    c->dist_a.fmt = c->a_dtype;
    c->dist_b.fmt = c->b_dtype;
    c->dist_bias.fmt = c->bias_dtype;
    char msg[256];
    enum gg_status st = gg_case_check(c, msg, sizeof msg);
    if (st == GG_OK)
        st = gg_case_expand(c, msg, sizeof msg);
    if (st != GG_OK)
        return case_at(x, blame_line(ps, msg), st, "%s", msg);
    return GG_OK;
}

enum gg_status gg_case_parse(const char *text, size_t len, const char *name, struct gg_case *c,
                             char *err, size_t err_len)
{
    gg_case_init(c);
    struct pctx x = {.name = name ? name : "<case>", .err = err, .err_len = err_len};
    struct pstate ps = {0};
    char *buf = malloc((len < MAX_LINE ? len : MAX_LINE) + 1);
    if (buf == NULL)
        return case_at(&x, 1, GG_E_NOMEM, "out of memory");
    enum gg_status st = GG_OK;
    for (size_t pos = 0; st == GG_OK && text != NULL && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = (nl ? (size_t)(nl - text) : len) - pos;
        x.line = ++ps.last_line;
        if (n > MAX_LINE) {
            st = case_at(&x, x.line, GG_E_PARSE, "line longer than %d bytes", MAX_LINE);
            break;
        }
        memcpy(buf, text + pos, n);
        buf[n] = '\0';
        pos += n + (nl != NULL);
        st = parse_line(&x, &ps, c, buf, n);
    }
    free(buf);
    if (ps.last_line == 0)
        ps.last_line = 1;
    if (st == GG_OK)
        st = finish(&x, &ps, c);
    if (st != GG_OK)
        gg_case_free(c);
    return st;
}

enum gg_status gg_case_load(const char *path, struct gg_case *c, char *err, size_t err_len)
{
    gg_case_init(c);
    char *buf;
    size_t len;
    enum gg_status st = gg_file_read(path, (size_t)GG_CASE_FILE_MAX, &buf, &len, err, err_len);
    if (st == GG_OK)
        st = gg_case_parse(buf, len, path, c, err, err_len);
    free(buf);
    return st;
}

/* ---- printing, identity, saving ------------------------------------------------------------ */

enum gg_status gg_case_format(const struct gg_case *c, int with_meta, char **out)
{
    *out = NULL;
    if ((unsigned)c->op >= GG_OP_COUNT)
        return GG_E_INVAL;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (f == NULL)
        return GG_E_NOMEM;
    fprintf(f, "%s %d\n", HEADER, GG_CASE_VERSION);
    for (int i = 0; i < CASE_N_KEYS; i++)
        if (case_keys[i].ops & GG_OP_BIT(c->op))
            case_keys[i].print(f, &case_keys[i], c);
    for (int i = 0; with_meta && i < c->n_meta; i++)
        fprintf(f, "@%s%s%s\n", c->meta[i].key, c->meta[i].text[0] ? " " : "", c->meta[i].text);
    int bad_stream = ferror(f);
    if (fclose(f) != 0 || bad_stream) {
        free(buf);
        return GG_E_NOMEM;
    }
    *out = buf;
    return GG_OK;
}

void gg_case_id(const struct gg_case *c, char id[GG_CASE_ID_HEX + 1])
{
    char *text;
    if (gg_case_format(c, 0, &text) != GG_OK) {
        memset(id, '0', GG_CASE_ID_HEX);
        id[GG_CASE_ID_HEX] = '\0';
        return;
    }
    XXH128_hash_t h = XXH3_128bits(text, strlen(text));
    snprintf(id, GG_CASE_ID_HEX + 1, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    free(text);
}

enum gg_status gg_case_save(const struct gg_case *c, const char *path, char *err, size_t err_len)
{
    char *text;
    if (gg_case_format(c, 1, &text) != GG_OK) {
        snprintf(err, err_len, "%s: cannot format the case", path);
        return GG_E_INVAL;
    }
    enum gg_status st = gg_atomic_write(path, "", text, strlen(text), 1, err, err_len);
    free(text);
    return st;
}

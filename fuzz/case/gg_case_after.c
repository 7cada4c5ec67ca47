/*
 * gg_case_after.c — the cases a history-dependent case must follow. A kernel that keeps state
 * between calls (a cache of converted weights keyed by pointer and shape, an autotuner's choice,
 * a workspace kept from the last call) can fail on a case only after certain other cases ran in
 * the same process. Such a case carries those cases, in the order they must run, as `@after`
 * metadata lines: each holds one preceding case's identity lines (the canonical text without its
 * header) joined by "; ", which no identity line contains. The lines are metadata, so the case's
 * own identity (and name) stays that of its last case.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/case/gg_case.h"

#define AFTER_KEY "after"
#define SEPARATOR "; "
#define HEADER "ggfuzz-case 1\n"

int gg_case_after_count(const struct gg_case *c)
{
    int n = 0;
    for (int i = 0; i < c->n_meta; i++)
        n += strcmp(c->meta[i].key, AFTER_KEY) == 0;
    return n;
}

enum gg_status gg_case_after_add(struct gg_case *c, const struct gg_case *prior, char *err,
                                 size_t err_len)
{
    char *text = NULL;
    if (gg_case_format(prior, 0, &text) != GG_OK) {
        snprintf(err, err_len, "@after: out of memory");
        return GG_E_NOMEM;
    }
    /* The identity lines after the header, each newline but the last made a separator. */
    const char *body = strchr(text, '\n');
    body = body ? body + 1 : text;
    size_t n = strlen(body);
    while (n > 0 && body[n - 1] == '\n')
        n--;
    char *line = malloc(2 * n + 1);
    enum gg_status st = GG_E_NOMEM;
    if (line != NULL) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (body[i] == '\n') {
                memcpy(line + k, SEPARATOR, strlen(SEPARATOR));
                k += strlen(SEPARATOR);
            } else {
                line[k++] = body[i];
            }
        }
        line[k] = '\0';
        st = gg_case_add_meta(c, AFTER_KEY, line, err, err_len);
    } else {
        snprintf(err, err_len, "@after: out of memory");
    }
    free(line);
    free(text);
    return st;
}

static int is_after(const char *key)
{
    return strcmp(key, AFTER_KEY) == 0;
}

void gg_case_after_clear(struct gg_case *c)
{
    gg_case_meta_drop(c, is_after);
}

/* Parses one @after text (the index-th, 1-based, for messages) into *out. */
static enum gg_status parse_one(const char *name, int index, const char *text,
                                struct gg_case *out, char *err, size_t err_len)
{
    size_t n = strlen(text);
    char *buf = malloc(strlen(HEADER) + n + 2);
    if (buf == NULL) {
        snprintf(err, err_len, "%s: @after %d: out of memory", name, index);
        return GG_E_NOMEM;
    }
    size_t k = strlen(HEADER);
    memcpy(buf, HEADER, k);
    for (const char *p = text; *p;) {
        if (strncmp(p, SEPARATOR, strlen(SEPARATOR)) == 0) {
            buf[k++] = '\n';
            p += strlen(SEPARATOR);
        } else {
            buf[k++] = *p++;
        }
    }
    buf[k++] = '\n';
    char where[512], msg[1024];
    snprintf(where, sizeof where, "%s: @after %d", name, index);
    enum gg_status st = gg_case_parse(buf, k, where, out, msg, sizeof msg);
    if (st != GG_OK)
        snprintf(err, err_len, "%s", msg);
    free(buf);
    return st;
}

enum gg_status gg_case_after_cases(const struct gg_case *c, const char *name,
                                   struct gg_case **out, int *n_out, char *err, size_t err_len)
{
    *out = NULL;
    *n_out = 0;
    int n = gg_case_after_count(c);
    if (n == 0)
        return GG_OK;
    struct gg_case *cases = calloc((size_t)n, sizeof *cases);
    if (cases == NULL) {
        snprintf(err, err_len, "%s: @after: out of memory", name);
        return GG_E_NOMEM;
    }
    int k = 0;
    enum gg_status st = GG_OK;
    for (int i = 0; i < c->n_meta && st == GG_OK; i++) {
        if (strcmp(c->meta[i].key, AFTER_KEY) != 0)
            continue;
        st = parse_one(name, k + 1, c->meta[i].text, &cases[k], err, err_len);
        if (st == GG_OK)
            k++;
    }
    if (st != GG_OK) {
        gg_case_after_free(cases, k);
        return st;
    }
    *out = cases;
    *n_out = k;
    return GG_OK;
}

void gg_case_after_free(struct gg_case *cases, int n)
{
    for (int i = 0; i < n; i++)
        gg_case_free(&cases[i]);
    free(cases);
}

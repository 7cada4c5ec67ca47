/*
 * case_int.h — internal to fuzz/case/: what the two files of the case-file format share: the
 * parser's context and its "name:line: ..." messages (gg_case_io.c), and the tokens of a line
 * and the table of keys with their parsers and printers (gg_case_keys.c).
 */
#ifndef GG_CASE_INT_H
#define GG_CASE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/case/gg_case.h"

/* ---- The parser's context and messages (gg_case_io.c) -------------------------------------- */

struct pctx {
    const char *name;
    int line;          /* 1-based number of the line being parsed */
    const char *key;   /* its key, for messages */
    char *err;
    size_t err_len;
};

/* "name:line: message". */
enum gg_status case_at(const struct pctx *x, int line, enum gg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- Tokens (gg_case_keys.c) ----------------------------------------------------------------- */

int case_is_blank(char ch);
/* Next blank-separated token of *cur, NUL-terminated in place; NULL at the end. */
char *case_next_tok(char **cur);
/* Decimal or 0x-hexadecimal digits: 0 ok, 1 malformed or empty, 2 above 2^64 - 1. */
int case_scan_u64(const char *s, uint64_t *v);

/* ---- The keys (gg_case_keys.c) --------------------------------------------------------------- */

struct key_def;
typedef enum gg_status (*parse_fn)(const struct pctx *x, const struct key_def *k,
                                   struct gg_case *c, char *args);
typedef void (*print_fn)(FILE *f, const struct key_def *k, const struct gg_case *c);

struct key_def {
    const char *name;
    unsigned ops;      /* GG_OP_BIT mask of the ops the key belongs to */
    unsigned required; /* ops that must give it */
    parse_fn parse;
    print_fn print;    /* prints the line, or nothing when the value is the default */
    size_t field[3];   /* offsets of the fields in struct gg_case (int64 keys, a/b/c triples) */
};

/* Every key, in canonical order; case_keys[CASE_KEY_OP] is "op". */
enum { CASE_KEY_OP = 0, CASE_N_KEYS = 23 };
extern const struct key_def case_keys[CASE_N_KEYS];

#endif /* GG_CASE_INT_H */

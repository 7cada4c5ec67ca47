/*
 * cli_dump.c — `run --dump DIR`: where each case's dump goes (DIR itself for a single case file,
 * else DIR/<stem>/ per case, the case file's name without ".case", "_" before a stem that is empty
 * or starts with '.', "-2", "-3", ... added when a stem repeats), and the dump of a case's inputs and reference without a kernel (`--no-kernel`,
 * and gg_cli_dump_inputs() of gg_cli.h, which the Python package's ggfuzz.cases.load calls).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/cli/gg_cli.h"
#include "fuzz/store/gg_store.h"
#include "reports/gg_report.h"

int gg_cli_dump_start(struct gg_cli_dump *d, int n_args, char **args)
{
    if (!d->dir)
        return 0;
    if (gg_mkdir_p(d->dir) != 0) {
        fprintf(stderr, "ggfuzz: %s: cannot create the --dump directory: %s\n", d->dir,
                strerror(errno));
        return GG_EXIT_HARNESS;
    }
    d->per_case = n_args != 1 || gg_path_is_dir(args[0]);
    return 0;
}

void gg_cli_dump_end(struct gg_cli_dump *d)
{
    gg_dir_list_free(d->used, d->n_used);
    d->used = NULL;
    d->n_used = 0;
}

static int used(const struct gg_cli_dump *d, const char *name)
{
    for (size_t i = 0; i < d->n_used; i++)
        if (strcmp(d->used[i], name) == 0)
            return 1;
    return 0;
}

/*
 * The name of a case's directory below DIR: one path component that is neither "." nor "..", so
 * that the dump stays inside DIR whatever the case file is called. The stem has no '/' (it
 * follows the last one); a stem that is empty or starts with '.' ("..case" gives ".", "...case"
 * "..", ".hidden.case" ".hidden") gets a leading '_' ("_.", "_..", "_.hidden").
 */
static void stem_name(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t stem = strlen(base);
    if (stem > 5 && strcmp(base + stem - 5, ".case") == 0)
        stem -= 5;
    snprintf(out, len, "%s%.*s", stem == 0 || base[0] == '.' ? "_" : "",
             (int)(stem < 200 ? stem : 200), base);
}

char *gg_cli_dump_dir(struct gg_cli_dump *d, const char *path)
{
    if (!d->per_case)
        return strdup(d->dir);
    char stem[256], name[300];
    stem_name(path, stem, sizeof stem);
    snprintf(name, sizeof name, "%s", stem);
    for (int i = 2; used(d, name); i++)
        snprintf(name, sizeof name, "%s-%d", stem, i);
    char **grown = realloc(d->used, (d->n_used + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    d->used = grown;
    if (!(d->used[d->n_used] = strdup(name)))
        return NULL;
    d->n_used++;
    return gg_path_join(d->dir, name);
}

enum gg_status gg_cli_dump_case_inputs(const struct gg_case *c, const char *path,
                                       const char *dir, const struct gg_run_opts *o, char *err,
                                       size_t err_len)
{
    struct gg_report_dump dump;
    gg_report_dump_init(&dump, dir, path);
    struct gg_run_opts opts = o ? *o : (struct gg_run_opts){0};
    opts.observe = gg_report_dump_observe;
    opts.observe_ctx = &dump;
    enum gg_status st = gg_run_inputs(c, &opts, err, err_len);
    gg_report_dump_free(&dump);
    return st;
}

int gg_cli_dump_inputs(const char *case_path, const char *dir, char *err, size_t err_len)
{
    char msg[1024] = "";
    if (!case_path || !dir) {
        snprintf(err, err_len, "a case file and a directory are needed");
        return GG_EXIT_USAGE;
    }
    struct gg_case c;
    enum gg_status st = gg_case_load(case_path, &c, msg, sizeof msg);
    if (st == GG_OK && gg_mkdir_p(dir) != 0) {
        snprintf(msg, sizeof msg, "%s: cannot create the directory: %s", dir, strerror(errno));
        st = GG_E_IO;
    }
    if (st == GG_OK)
        st = gg_cli_dump_case_inputs(&c, case_path, dir, NULL, msg, sizeof msg);
    gg_case_free(&c);
    if (err && err_len)
        snprintf(err, err_len, "%s", st == GG_OK ? "" : msg);
    return st == GG_OK ? 0
           : st == GG_E_NOMEM || st == GG_E_UNSUPPORTED ? GG_EXIT_REFUSED
                                                        : GG_EXIT_HARNESS;
}

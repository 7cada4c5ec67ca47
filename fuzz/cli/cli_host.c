/*
 * cli_host.c — what a host process that drives the command line through libggfuzz.so tells it
 * (gg_cli.h): the command that starts this program again, for the campaign's workers, and the
 * loader of Python plugins, which fuzz/run/gg_plugin.c calls for paths ending in ".py". Both
 * are set once, before gg_cli_main(), and read by the commands.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/cli/gg_cli.h"
#include "fuzz/run/gg_run.h"

#define SELF_MAX 16

/* The words of the self command (owned, strdup'ed), n_self of them; none until set. */
static char *self_words[SELF_MAX + 1];
static int n_self;

int gg_cli_set_self(int argc, const char *const *argv)
{
    if (argc < 0 || argc > SELF_MAX || (argc > 0 && argv == NULL))
        return -1;
    for (int i = 0; i < argc; i++)
        if (argv[i] == NULL)
            return -1;
    for (int i = 0; i < n_self; i++) {
        free(self_words[i]);
        self_words[i] = NULL;
    }
    n_self = 0;
    for (int i = 0; i < argc; i++) {
        if ((self_words[i] = strdup(argv[i])) == NULL)
            return -1;
        n_self = i + 1;
    }
    return 0;
}

const char *const *gg_cli_self(int *n)
{
    *n = n_self;
    return n_self > 0 ? (const char *const *)self_words : NULL;
}

void gg_cli_set_plugin_loader(gg_cli_plugin_loader_fn fn)
{
    gg_plugin_set_script_loader(fn);
}

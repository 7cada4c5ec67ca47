/*
 * cli_env.c — the environment variables of ggfuzz: one table of every variable it reads or sets
 * for its children, which the usage text, docs/cli.md and docs/environment.md are checked
 * against, and the check at start. Every variable of ggfuzz's own is named GGFUZZ_*; a variable
 * renamed to that prefix keeps its old name for one release (copied to the new name, with a
 * WARNING), and a GGFUZZ_* variable the table does not know gets one WARNING line: a misspelt
 * name would otherwise be ignored in silence. Neither changes an exit code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/cli/cli_int.h"

#define PREFIX "GGFUZZ_"

const struct gg_cli_env gg_cli_env_vars[] = {
    {"GGFUZZ_PLUGINS", "colon-separated plugin paths, loaded before those of --plugin", NULL, 0},
    {"GGFUZZ_PLUGIN_TIMEOUT",
     "seconds a plugin's loading and registration (a .py plugin's import) may take before it is "
     "refused (default 10; 0: no limit)", NULL, 0},
    {"GGFUZZ_PYTHON",
     "the Python that runs .py plugins (default: python3 on PATH), checked to run ggfuzz's host "
     "first", NULL, 0},
    {"GGFUZZ_PYTHONPATH",
     "where the ggfuzz Python package is (default: the installed one, PREFIX/share/ggfuzz/python, "
     "else kernels/python of the source tree)", NULL, 0},
    {"GGFUZZ_LIB",
     "the libggfuzz.so python -m ggfuzz loads (ggfuzz sets its own: PREFIX/lib when installed, the "
     "one beside it in a build tree)", NULL, 0},
    {"GGFUZZ_HANDSHAKE", "set by ggfuzz: the token python -m ggfuzz --handshake answers with",
     NULL, 1},
    {"GGFUZZ_EXE",
     "set by ggfuzz for its Python host: the executable its printed commands name (python -m "
     "ggfuzz started directly sets it to the ggfuzz of its library)", NULL, 1},
    {"GGFUZZ_GPU_TMA", "0: the GPU kernels load by cp.async instead of TMA (the same bits)",
     "GG_GPU_TMA", 0},
    {"GGFUZZ_GNUPLOT", "the gnuplot executable of report plots (default: gnuplot on PATH)",
     "GG_GNUPLOT", 0},
    {"TMPDIR", "where selftest makes its temporary campaigns, and suite --gpus and --workers "
               "their runners' results (default /tmp)", NULL, 0},
    {"CUDA_VISIBLE_DEVICES", "(HIP_VISIBLE_DEVICES) the GPUs --gpus ordinals index; ggfuzz sets "
                             "it to one GPU in each process it binds", NULL, 0},
    {"GGFUZZ_DEVICE", "set by ggfuzz in a process --gpus bound: the ordinal of its GPU", NULL, 1},
    {"SLURM_ARRAY_TASK_ID", "with SLURM_ARRAY_TASK_COUNT (_MIN, _STEP): fuzz runs as that shard",
     NULL, 0},
    {"SLURM_PROCID", "with SLURM_NTASKS: fuzz runs as that shard (times the array's)", NULL, 0},
    {"GGFUZZ_TEST_*", "hooks of ggfuzz's own tests and test plugins, not for use", NULL, 0},
    {NULL, NULL, NULL, 0}};

/* Whether row e names variable name (the length of the name, up to '='). */
static int env_names(const struct gg_cli_env *e, const char *name, size_t len)
{
    size_t n = strlen(e->name);
    if (n > 0 && e->name[n - 1] == '*')
        return len >= n - 1 && strncmp(name, e->name, n - 1) == 0;
    return len == n && strncmp(name, e->name, n) == 0;
}

/* The old names still set: a WARNING each, and the value moved to the new name unless that is
   set too (then the new one wins). */
static void env_renamed(void)
{
    for (const struct gg_cli_env *e = gg_cli_env_vars; e->name; e++) {
        const char *old = e->old ? getenv(e->old) : NULL;
        if (old == NULL)
            continue;
        int both = getenv(e->name) != NULL;
        fprintf(stderr, "ggfuzz: WARNING: %s is deprecated: use %s (%s)\n", e->old, e->name,
                both ? "ignored: that is set too" : "read in its place in this release");
        if (!both && setenv(e->name, old, 1) != 0)
            fprintf(stderr, "ggfuzz: WARNING: cannot set %s\n", e->name);
    }
}

void gg_cli_env_check(void)
{
    env_renamed();
    extern char **environ;
    char unknown[1024] = "";
    size_t at = 0;
    int n = 0;
    for (char **v = environ; v && *v; v++) {
        size_t len = strcspn(*v, "=");
        if (strncmp(*v, PREFIX, strlen(PREFIX)) != 0)
            continue;
        const struct gg_cli_env *e = gg_cli_env_vars;
        while (e->name && !env_names(e, *v, len))
            e++;
        if (e->name == NULL && at < sizeof unknown) {
            at += (size_t)snprintf(unknown + at, sizeof unknown - at, "%s%.*s", n ? ", " : "",
                                   (int)len, *v);
            n++;
        }
    }
    if (n == 0)
        return;
    char known[1024] = "";
    at = 0;
    for (const struct gg_cli_env *e = gg_cli_env_vars; e->name; e++)
        if (!e->by_ggfuzz && !strchr(e->name, '*') &&
            strncmp(e->name, PREFIX, strlen(PREFIX)) == 0 && at < sizeof known)
            at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", at ? ", " : "",
                                   e->name);
    fprintf(stderr, "ggfuzz: WARNING: unknown environment variable%s %s (known: %s)\n",
            n > 1 ? "s" : "", unknown, known);
}

void gg_cli_env_help(const struct gg_cli_env *e, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "%s", e->help);
    if (e->old && at < len)
        snprintf(buf + at, len - at, " (formerly %s, still read in this release with a "
                 "WARNING)", e->old);
}

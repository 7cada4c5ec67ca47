/*
 * cli_main.c — the ggfuzz command line as one call, gg_cli_main() (gg_cli.h), which the ggfuzz
 * executable and the Python host both run: hands a command line with a Python plugin to the
 * Python host when it does not run under it (cli_python.c), takes the leading `--plugin PATH`
 * pairs, checks the environment (cli_env.c), answers --help, --help-markdown (docs/cli.md, not
 * in --help) and --version, loads the plugins and hands over to the command's file
 * (fuzz/cli/cli_*.c). It returns the exit code; only main() exits.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/cli/gg_cli.h"
#include "fuzz/case/gg_case.h"

int gg_cli_main(int argc, char **argv)
{
    int rc = gg_cli_python_handoff(argc, argv);
    if (rc >= 0)
        return rc;
    /* Leading `--plugin PATH` pairs belong to the command after them. */
    char **lead = argv + 1;
    int n_lead = 0;
    while (1 + n_lead < argc && strcmp(argv[1 + n_lead], "--plugin") == 0) {
        if (2 + n_lead >= argc) {
            fprintf(stderr, "ggfuzz: --plugin needs a path\n");
            return GG_EXIT_USAGE;
        }
        n_lead += 2;
    }
    argc -= n_lead;
    argv += n_lead;
    if (argc < 2 || strcmp(argv[1], "worker") != 0)
        gg_cli_env_check(); /* once: not again in each worker the campaign starts */
    if (argc < 2) {
        fprintf(stderr, "ggfuzz: no command given\n");
        gg_cli_usage_hint(NULL);
        return GG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        gg_cli_usage_print(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--help-markdown")) { /* docs/cli.md */
        gg_cli_markdown_print(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("ggfuzz %s (kernel ABI %u, case format %d, thresholds %d)\n", GG_VERSION,
               GG_KERNEL_ABI_VERSION, GG_CASE_VERSION, GG_THRESHOLDS_VERSION);
        return 0;
    }
    if (gg_cli_load_plugins(lead, n_lead) != 0)
        return GG_EXIT_HARNESS;
    if (!strcmp(cmd, "run") || !strcmp(cmd, "replay") || !strcmp(cmd, "--replay"))
        return gg_cli_run(argc - 1, argv + 1, strcmp(cmd, "run") != 0);
    if (!strcmp(cmd, "list"))
        return gg_cli_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "minimize"))
        return gg_cli_minimize(argc - 1, argv + 1, lead, n_lead);
    if (!strcmp(cmd, "fuzz"))
        return gg_cli_fuzz(argc - 1, argv + 1, lead, n_lead);
    if (!strcmp(cmd, "selftest"))
        return gg_cli_selftest(argc - 1, argv + 1, lead, n_lead);
    if (!strcmp(cmd, "suite"))
        return gg_cli_suite(argc - 1, argv + 1, lead, n_lead);
    if (!strcmp(cmd, "merge"))
        return gg_cli_merge(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return gg_cli_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return gg_cli_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "worker"))
        return gg_cli_worker();
    fprintf(stderr, "ggfuzz: unknown command '%s'\n", cmd);
    gg_cli_usage_hint(NULL);
    return GG_EXIT_USAGE;
}

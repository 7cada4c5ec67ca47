/*
 * ggfuzz_main.c — the ggfuzz executable: the command line of gg_cli_main() (cli_main.c), whose
 * return value is the exit code. Only main() exits.
 */
#include "fuzz/cli/gg_cli.h"

int main(int argc, char **argv)
{
    return gg_cli_main(argc, argv);
}

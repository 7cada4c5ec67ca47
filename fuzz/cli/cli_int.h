/*
 * cli_int.h — what the files of the ggfuzz command line share: exit codes, the usage text,
 * option parsers that print their own message, plugin loading, and one entry point per command
 * (fuzz/cli_<command>.c). Commands return the process exit code; only main() exits.
 */
#ifndef GG_CLI_INT_H
#define GG_CLI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/gg_kernel.h"

/* Exit codes besides the per-class codes of gg_class_exit_code() (10 + class). */
enum {
    GG_EXIT_USAGE = 2,     /* bad command line */
    GG_EXIT_HARNESS = 3,   /* a case file is malformed, a plugin refused, or a case not run */
    GG_EXIT_REFUSED = 4,   /* a case was refused: unsupported by the kernel or too large */
    GG_EXIT_NO_REPRO = 20, /* replay: an expected verdict did not reproduce */
    GG_EXIT_GATE = 30      /* suite --gate: the release gate failed */
};

extern const char gg_cli_usage[];
/* Prints the usage text, then the exit code of every verdict class from the class table. */
void gg_cli_usage_print(FILE *f);

/* Parsers: 0 on success; -1 after printing a message naming opt (usage error). */
int gg_cli_size(const char *opt, const char *s, int64_t *out); /* 512M, 8G, 1.5GiB... */
int gg_cli_number(const char *opt, const char *s, int whole, double *out); /* >= 0; whole: a count */
int gg_cli_seed(const char *s, uint64_t *out);

/* Loads one plugin (0, or GG_EXIT_HARNESS after a message on stderr). */
int gg_cli_load_plugin(const char *path);
/* The plugins of GGFUZZ_PLUGINS, then those of the leading `--plugin PATH` pairs lead[0..n). */
int gg_cli_load_plugins(char **lead, int n);

/* Plugins to forward to worker processes: the leading pairs and those after the command. */
struct gg_cli_plugins {
    const char *paths[64];
    int n;
};
int gg_cli_plugin_add(struct gg_cli_plugins *pl, const char *path); /* loads it too */
void gg_cli_plugin_lead(struct gg_cli_plugins *pl, char **lead, int n_lead);

/* The end of every command's option switch: --plugin PATH ('p': loaded, and recorded in pl when
   pl is not NULL), --help ('h') and an unknown option. Returns -1 to go on parsing, else the exit
   code the command returns now. */
int gg_cli_common_option(int ch, const char *arg, struct gg_cli_plugins *pl);

/* Whether the kernels of each backend can run here (a GPU backend needs its device), asked at
   the first kernel of that backend. Zero-initialise. */
struct gg_cli_backends {
    int asked[GG_BACKEND_HIP + 1], present[GG_BACKEND_HIP + 1];
    char why[GG_BACKEND_HIP + 1][512];
};
/* 1 when k can run here; else 0 with "kernel K cannot run here: why" in msg. */
int gg_cli_kernel_present(struct gg_cli_backends *b, const struct gg_kernel *k, char *msg,
                          size_t msg_len);
/* For a kernel named on the command line: 0 when it can run here or is not registered (the
   command reports that); else GG_EXIT_REFUSED after saying why on stderr. */
int gg_cli_kernel_refused(const char *name);

/* Commands: argv[0] is the command's name. */
int gg_cli_list(int argc, char **argv);
int gg_cli_run(int argc, char **argv, int replay);
int gg_cli_minimize(int argc, char **argv);
int gg_cli_fuzz(int argc, char **argv, char **lead, int n_lead);
int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead);
int gg_cli_worker(void);
/* plugins: the --plugin paths given before the command (already loaded), for the workers. */
int gg_cli_suite(int argc, char **argv, char **plugins, int n_plugins);
int gg_cli_report(int argc, char **argv);

#endif /* GG_CLI_INT_H */

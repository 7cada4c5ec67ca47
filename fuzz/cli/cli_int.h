/*
 * cli_int.h — what the files of the ggfuzz command line share: exit codes, each command's flag
 * table and what is derived from it (getopt options, the parsing loop, the usage text), option
 * parsers that print their own message, plugin loading, and one entry point per command
 * (fuzz/cli/cli_<command>.c). Commands return the process exit code; only main() exits.
 */
#ifndef GG_CLI_INT_H
#define GG_CLI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz/run/gg_run.h"
#include "kernels/gg_kernel.h"

/* Exit codes besides the per-class codes of gg_class_exit_code() (10 + class). */
enum {
    GG_EXIT_USAGE = 2,     /* bad command line */
    GG_EXIT_HARNESS = 3,   /* a case file is malformed, a plugin refused, or a case not run */
    GG_EXIT_REFUSED = 4,   /* a case was refused: unsupported by the kernel or too large */
    GG_EXIT_SKIPPED = 5,   /* merge: merged, but input files that could not be read skipped */
    GG_EXIT_NO_REPRO = 20, /* replay: an expected verdict did not reproduce */
    GG_EXIT_GATE = 30      /* suite --gate: the release gate failed */
};

/* Parsers: 0 on success; -1 after printing a message naming opt (usage error). */
int gg_cli_size(const char *opt, const char *s, int64_t *out); /* 512M, 8G, 1.5GiB... */
int gg_cli_number(const char *opt, const char *s, int whole, double *out); /* >= 0; whole: a count */
int gg_cli_seed(const char *s, uint64_t *out);
/* The command that runs this ggfuzz again from a fresh shell in any directory: the executable
   (`ggfuzz` when PATH's is this one, else its absolute path), every plugin loaded by absolute
   path, and GGFUZZ_PYTHON=... first when one is a Python plugin (cli_invocation.c). */
void gg_cli_invocation(char *buf, size_t len);
/* The same with `--replay` (and `--reference W` unless W is auto): a case's path is appended. */
void gg_cli_replay_command(char *buf, size_t len, enum gg_reference_where reference);
/* Records this executable (GGFUZZ_EXE) for the Python host it hands a command line over to. */
int gg_cli_set_exe(void);
/* A period: seconds above 0 into *out. 0, or -1 after a message naming opt. */
int gg_cli_period(const char *opt, const char *s, double *out);
/* --reference host|device|auto into *out. */
int gg_cli_reference(const char *s, enum gg_reference_where *out);
/* The help text of --reference, shared by the commands that run cases. */
#define GG_CLI_REFERENCE_HELP                                                                   \
    "where the reference is computed: auto (default: on the device for a GPU kernel, on the "   \
    "host for a CPU kernel or with --dump), host, or device (an fp64 kernel on the inputs the "  \
    "device generated; refused for a CPU kernel)"
/* Shards (cli_shard.c). "I/N" with 0 <= I < N <= GG_CLI_SHARD_MAX into *index and *count. */
#define GG_CLI_SHARD_MAX 65536
int gg_cli_shard(const char *opt, const char *arg, int *index, int *count);
/* The shard Slurm's environment names (array task, and task of a step, combined): 1 with *index,
   *count and how (the variables, for the log) set; 0 when it names none or one shard of one;
   -1 with the reason in how when the variables do not fit together or make more than
   GG_CLI_SHARD_MAX shards. */
int gg_cli_shard_env(int *index, int *count, char *how, size_t how_len);

/* --gpus (cli_shard.c): 0 with g filled (a note, such as auto finding no device, is printed as
   INFO), else the exit code after the message: usage for a malformed or impossible list,
   harness for "all" without a device. */
struct gg_gpus;
int gg_cli_gpus(const char *arg, struct gg_gpus *g);

/* The self command a host set with gg_cli_set_self(), n words, or NULL (n 0) when none was set:
   workers are then this process's executable. */
const char *const *gg_cli_self(int *n);
/* When no plugin loader is installed and a plugin of argv (--plugin PATH, --plugin=PATH) or of
   GGFUZZ_PLUGINS is a Python plugin, replaces this process by the Python host with the same
   arguments (cli_python.c); returns GG_EXIT_HARNESS after a message when that fails, or -1 when
   there is nothing to hand over. */
int gg_cli_python_handoff(int argc, char **argv);

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

/* What a command leaves to the parsing loop: GG_CLI_PLUGIN (loaded, and recorded in pl when pl is
   not NULL). Returns GG_CLI_TAKEN to go on parsing, else the exit code the command returns now
   (GG_EXIT_USAGE for an option the command does not know). */
int gg_cli_common_option(int id, const char *arg, struct gg_cli_plugins *pl);

/* One row of a command's flag table: its getopt entry, how the command applies it and its line
   of the usage text all come from it (cli_flags.c). A table ends with a row whose name is NULL;
   -h/--help is every command's and is not in the tables. */
struct gg_cli_flag {
    const char *name;  /* the long name, without "--" */
    char short_name;   /* the one-letter form, or 0 */
    const char *arg;   /* placeholder of its required argument ("N", "PATH"); NULL: it takes none */
    int id;            /* what the command's apply function switches on (>= 0), or GG_CLI_PLUGIN */
    const char *help;  /* one paragraph, wrapped to the width of the usage text */
};
#define GG_CLI_FLAGS_MAX 32 /* rows of one table */

/* Ids the parsing loop hands to the command's apply function besides the rows' own. */
enum {
    GG_CLI_PLUGIN = -4,  /* --plugin PATH (a row's id) */
    GG_CLI_UNKNOWN = -5  /* an option no row has (getopt took it, the command did not) */
};
/* What an apply function returns besides an exit code (>= 0: the command returns it now). */
enum {
    GG_CLI_TAKEN = -1, /* applied: go on parsing */
    GG_CLI_OTHER = -2  /* not the command's own: gg_cli_common_option() takes it */
};

/* A command's section of the usage text and its flags. */
struct gg_cli_command {
    const char *name;   /* as typed after ggfuzz */
    const char *usage;  /* the synopsis, after "ggfuzz " */
    const char *about;  /* one paragraph between the synopsis and the flags, or NULL */
    const struct gg_cli_flag *flags;
};
extern const struct gg_cli_command gg_cli_run_command, gg_cli_list_command,
    gg_cli_minimize_command, gg_cli_fuzz_command, gg_cli_selftest_command, gg_cli_suite_command,
    gg_cli_merge_command, gg_cli_report_command, gg_cli_bench_command;
/* The commands in the order of the usage text, NULL-terminated. */
extern const struct gg_cli_command *const gg_cli_commands[];

/* Parses the options of argv by cmd's table (getopt_long; optind: the first argument after them).
   Each one goes to apply(id, arg, ctx) (apply NULL: as if it returned GG_CLI_OTHER), and on to
   gg_cli_common_option(id, arg, pl) when it returns GG_CLI_OTHER. Returns GG_CLI_TAKEN when every
   option was taken, else the exit code the command returns now. */
int gg_cli_parse(const struct gg_cli_command *cmd, int argc, char **argv,
                 int (*apply)(int id, const char *arg, void *ctx), void *ctx,
                 struct gg_cli_plugins *pl);
/* After a usage error's one-line message: "try 'ggfuzz CMD --help'" (cmd NULL: 'ggfuzz --help')
   on stderr. gg_cli_parse() prints it for the errors of the options it parses. */
void gg_cli_usage_hint(const struct gg_cli_command *cmd);
/* Prints cmd's section of the usage text: prefix, "ggfuzz " and its synopsis, its paragraph and
   one entry per flag. */
void gg_cli_command_usage(FILE *f, const char *prefix, const struct gg_cli_command *cmd);
/* Prints the whole usage text: the commands, each command's section, the exit code of every
   verdict class from the class table and the environment variables. */
void gg_cli_usage_print(FILE *f);

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

/* `run --dump DIR` (cli_dump.c): where each case's dump goes. Zero-initialise, set dir (NULL:
   no dump) and no_kernel. */
struct gg_cli_dump {
    const char *dir;
    int no_kernel;  /* --no-kernel: the inputs and the reference only */
    int per_case;   /* DIR/<stem>/ per case (more than one argument, or a directory) */
    char **used;    /* the subdirectory names given out */
    size_t n_used;
};
/* Creates DIR and decides on subdirectories from the run's n_args path arguments: 0, or
   GG_EXIT_HARNESS after a message naming DIR. */
int gg_cli_dump_start(struct gg_cli_dump *d, int n_args, char **args);
void gg_cli_dump_end(struct gg_cli_dump *d);
/* The directory of case file path's dump, inside DIR whatever the file is called (malloc'd; NULL
   when out of memory). */
char *gg_cli_dump_dir(struct gg_cli_dump *d, const char *path);
struct gg_case;
struct gg_run_opts;
/* Dumps case c (read from path) without a kernel into dir: gg_run_inputs() with the dump as its
   observer and o's memory limit (o may be NULL). */
enum gg_status gg_cli_dump_case_inputs(const struct gg_case *c, const char *path,
                                       const char *dir, const struct gg_run_opts *o, char *err,
                                       size_t err_len);

/* Calls each(ctx, file) for path, a case file, or for every *.case below a directory in sorted
   order. A path or a directory below it that cannot be read is an `ERROR` line (its cases get no
   call; `verb` says what they missed, e.g. "run") and the walk goes on. Returns the count of
   such errors. */
int gg_cli_each_case(const char *path, const char *verb, void (*each)(void *ctx, const char *file),
                     void *ctx);

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
int gg_cli_merge(int argc, char **argv);
int gg_cli_bench(int argc, char **argv);

#endif /* GG_CLI_INT_H */

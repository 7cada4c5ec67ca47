/*
 * cli_int.h — what the files of the ggfuzz command line share: exit codes, each command's flag
 * table and what is derived from it (getopt options, the defaults, the checks of the values by
 * their type, the usage text and docs/cli.md), the rows several commands share, plugin loading,
 * the environment variables, and one entry point per command (fuzz/cli/cli_<command>.c).
 * Commands return the process exit code; only main() exits.
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

/* The command that runs this ggfuzz again from a fresh shell in any directory: the executable
   (`ggfuzz` when PATH's is this one, else its absolute path), every plugin loaded by absolute
   path, and GGFUZZ_PYTHON=... first when one is a Python plugin (cli_invocation.c). */
void gg_cli_invocation(char *buf, size_t len);
/* The same with `--replay` (and `--reference W` unless W is auto): a case's path is appended. */
void gg_cli_replay_command(char *buf, size_t len, enum gg_reference_where reference);
/* Records this executable (GGFUZZ_EXE) for the Python host it hands a command line over to. */
int gg_cli_set_exe(void);
/* The shard Slurm's environment names (array task, and task of a step, combined): 1 with *index,
   *count and how (the variables, for the log) set; 0 when it names none or one shard of one;
   -1 with the reason in how when the variables do not fit together or make more than
   GG_CLI_SHARD_MAX shards. */
int gg_cli_shard_env(int *index, int *count, char *how, size_t how_len);

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
#define GG_CLI_PLUGINS_MAX 64
struct gg_cli_plugins {
    const char *paths[GG_CLI_PLUGINS_MAX];
    int n;
};
void gg_cli_plugin_lead(struct gg_cli_plugins *pl, char **lead, int n_lead);

/* ---- Flag tables (cli_flags.c) ------------------------------------------------------------- */

/* The type of a flag's value: how it is read and checked, the field it is stored in (at the
   row's offset in the command's option struct), and how the help states its default. */
enum gg_cli_type {
    GG_CLI_SWITCH,  /* no value: int field set to 1 */
    GG_CLI_COUNT,   /* a whole number in [min, max] (max 0: no upper bound): int or int64_t */
    GG_CLI_NUMBER,  /* a number >= 0 (a margin in dB, a share), in the row's range: double */
    GG_CLI_SECONDS, /* seconds > 0 (a period, a budget): double */
    GG_CLI_LIMIT,   /* seconds a case, a run or the command may take, 0: no limit (stored as
                       GG_NO_LIMIT): double */
    GG_CLI_SIZE,    /* bytes: digits with at most one '.' and an optional K, M, G or T (either
                       case, then optionally "iB" or "B"), at least 1 and below 2^63: int64_t */
    GG_CLI_STRING,  /* a name or a path, kept as the argument itself: const char * */
    GG_CLI_WORD,    /* one of the row's words: int (the word's value) */
    GG_CLI_SEED,    /* a 64-bit whole number (0x for hexadecimal): uint64_t */
    GG_CLI_LIST     /* a string, repeatable up to max times: struct gg_cli_list */
};

struct gg_cli_word {
    const char *word;
    int value;
};

/* A GG_CLI_LIST field: the arguments in the order given. */
#define GG_CLI_LIST_MAX 64
struct gg_cli_list {
    const char *item[GG_CLI_LIST_MAX];
    int n;
};

/* One row of a command's flag table: getopt's entry, the default stored before parsing, the
   check of its value and its line of the usage text (the help, then its default) all come
   from it. A table ends with a row whose name is NULL; -h/--help is every command's and is not
   in the tables. */
struct gg_cli_flag {
    const char *name;  /* the long name, without "--" */
    char short_name;   /* the one-letter form, or 0 */
    enum gg_cli_type type;
    const char *arg;   /* placeholder of its value ("N", "PATH"); NULL for a switch */
    size_t at, size;   /* its field in the option struct (GG_CLI_AT); size 0: none (apply only) */
    double min, max;   /* COUNT: the range (max 0: none above min); NUMBER: the range when max
                          > 0; LIST: max is the most items */
    const struct gg_cli_word *words; /* WORD: the words it takes, ending with a NULL word */
    /* The default, stored before the options are parsed: set, a number (COUNT, NUMBER,
       SECONDS, LIMIT, SIZE, SEED) or a string (STRING, WORD: the word); else text, the default
       in words, where the field's zero leaves it to the code below (the memory available
       now) and the help says what it is. Neither: the help states no default. */
    struct {
        int set;
        double num;
        const char *str;
        const char *text;
    } dflt;
    const char *zero;  /* COUNT, SEED: what 0 means, for the help (LIMIT: always no limit) */
    /* (optional) takes the value instead of the type's store: field is the row's field (NULL
       when size is 0). Returns 0; or an exit code with why in why_len bytes of why (printed
       "ggfuzz CMD: --flag: why", or "ggfuzz CMD: why" when why names the flag itself,
       starting with "--"), or with why empty after a message of its own. */
    int (*apply)(const char *arg, void *field, char *why, size_t why_len);
    const char *help;  /* one paragraph without the default, wrapped to the usage text */
};
#define GG_CLI_FLAGS_MAX 32 /* rows of one table */

/* Where a row's value goes: field of the option struct type. */
#define GG_CLI_AT(type, field) .at = offsetof(type, field), .size = sizeof(((type *)0)->field)
#define GG_CLI_DEFAULT(v) .dflt = {.set = 1, .num = (v)}
#define GG_CLI_DEFAULT_STR(s) .dflt = {.set = 1, .str = (s)}
#define GG_CLI_DEFAULT_TEXT(t) .dflt = {.text = (t)}
/* A constant's digits as a string, for a help that names it. */
#define GG_CLI_STR_(x) #x
#define GG_CLI_STR(x) GG_CLI_STR_(x)

/* The rows several commands share, one type and one wording wherever they appear. */
#define GG_CLI_PLUGIN_HELP                                                                      \
    "load the kernels of a plugin .so or .py (repeatable, also before the command); the paths " \
    "of GGFUZZ_PLUGINS (PATH:PATH...) are loaded before them; a plugin that crashes, exits or "  \
    "does not register (import) within GGFUZZ_PLUGIN_TIMEOUT seconds in a trial child process " \
    "is refused"
/* --plugin PATH: loaded; recorded for the workers when the row has a field (GG_CLI_AT of a
   struct gg_cli_plugins), else give .size = 0. */
#define GG_CLI_PLUGIN_FLAG(...)                                                                 \
    {"plugin", 0, GG_CLI_STRING, "PATH", __VA_ARGS__, .apply = gg_cli_apply_plugin,             \
     .help = GG_CLI_PLUGIN_HELP}
int gg_cli_apply_plugin(const char *arg, void *field, char *why, size_t why_len);
extern const struct gg_cli_word gg_cli_reference_words[];
#define GG_CLI_REFERENCE_FLAG(type, field)                                                      \
    {"reference", 0, GG_CLI_WORD, "WHERE", GG_CLI_AT(type, field),                             \
     .words = gg_cli_reference_words, GG_CLI_DEFAULT_STR("auto"),                              \
     .help = "where the reference is computed: auto (on the device for a GPU kernel, on the "  \
             "host for a CPU kernel or with --dump), host, or device (an fp64 kernel on the "  \
             "inputs the device generated; refused for a CPU kernel)"}
#define GG_CLI_MAX_MEM_FLAG(type, field)                                                        \
    {"max-mem", 0, GG_CLI_SIZE, "SIZE", GG_CLI_AT(type, field),                                \
     GG_CLI_DEFAULT_TEXT("the memory available now"),                                          \
     .help = "refuse cases needing more host memory (such as 512M, 8G, 1.5GiB)"}
#define GG_CLI_SEED_FLAG(type, field)                                                           \
    {"seed", 0, GG_CLI_SEED, "N", GG_CLI_AT(type, field), GG_CLI_DEFAULT(0),                   \
     .zero = "chosen and printed", .help = "the seed the cases are drawn from"}
/* --timeout S: seconds each run of a case may take, then what becomes of it (tail). */
#define GG_CLI_TIMEOUT_FLAG(type, field, dflt_s, tail)                                          \
    {"timeout", 0, GG_CLI_LIMIT, "S", GG_CLI_AT(type, field), GG_CLI_DEFAULT(dflt_s),          \
     .help = "seconds each run of a case may take: " tail}
#define GG_CLI_MAX_TOTAL_TIME_FLAG(type, field, dflt_s)                                         \
    {"max-total-time", 0, GG_CLI_LIMIT, "S", GG_CLI_AT(type, field), GG_CLI_DEFAULT(dflt_s),   \
     .help = "stop after S seconds"}
/* --workers N: how many processes run cases at once (at most max), then how (tail). */
#define GG_CLI_WORKERS_FLAG(type, field, max_n, dflt_text, tail)                                \
    {"workers", 0, GG_CLI_COUNT, "N", GG_CLI_AT(type, field), .min = 1, .max = (max_n),        \
     GG_CLI_DEFAULT_TEXT(dflt_text), .help = "N worker processes run cases at once" tail}
/* --gpus all|auto|LIST: the GPUs the command spreads its work over (head says what it does on
   them, tail how), into a struct gg_gpus. */
int gg_cli_apply_gpus(const char *arg, void *field, char *why, size_t why_len);
#define GG_CLI_GPUS_FLAG(type, field, head, tail)                                               \
    {"gpus", 0, GG_CLI_STRING, "all|auto|LIST", GG_CLI_AT(type, field),                         \
     .apply = gg_cli_apply_gpus, GG_CLI_DEFAULT_TEXT("one GPU, the first visible"),            \
     .help = head " these GPUs (all or auto: every visible one; LIST: ordinals such as 0,1 or " \
                  "0-7)" tail}
/* --shard I/N: 0 <= I < N <= GG_CLI_SHARD_MAX, into a struct gg_cli_shard. */
#define GG_CLI_SHARD_MAX 65536
struct gg_cli_shard {
    int index, count;
};
int gg_cli_apply_shard(const char *arg, void *field, char *why, size_t why_len);

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

/* What gg_cli_parse() returns when every option was taken (else an exit code). */
#define GG_CLI_TAKEN (-1)

/* Parses the options of argv by cmd's table into opts, the command's option struct: first every
   row's default is stored, then each option's value is checked and stored by its type (or its
   row's apply) with getopt_long (optind: the first argument after the options). -h/--help
   prints cmd's section of the usage text and returns 0. A bad option or value is one line
   ("ggfuzz CMD: --flag: why") and "try 'ggfuzz CMD --help'" on stderr, and GG_EXIT_USAGE.
   Returns GG_CLI_TAKEN when every option was taken, else the exit code the command returns
   now. */
int gg_cli_parse(const struct gg_cli_command *cmd, int argc, char **argv, void *opts);
/* After a usage error's one-line message: "try 'ggfuzz CMD --help'" (cmd NULL: 'ggfuzz --help')
   on stderr. gg_cli_parse() prints it for the errors of the options it parses. */
void gg_cli_usage_hint(const struct gg_cli_command *cmd);
/* What the help adds to row f's paragraph, in parentheses: its default and what 0 means
   ("default 10; 0: no limit", "default: the memory available now"); "" when nothing. */
void gg_cli_flag_note(const struct gg_cli_flag *f, char *buf, size_t len);
/* Whether cmd's table is well formed: every field's size fits its type, a typed row has a
   default, a word default is one of the row's words, a list has a bound, a help says nothing
   of the default. 0, or -1 with the row and the fault in why. */
int gg_cli_table_check(const struct gg_cli_command *cmd, char *why, size_t why_len);
/* Prints cmd's section of the usage text: prefix, "ggfuzz " and its synopsis, its paragraph and
   one entry per flag (its help and note). */
void gg_cli_command_usage(FILE *f, const char *prefix, const struct gg_cli_command *cmd);
/* Prints the whole usage text: the commands, each command's section, the exit code of every
   verdict class from the class table and the environment variables. */
void gg_cli_usage_print(FILE *f);
/* The same as Markdown, docs/cli.md (`ggfuzz --help-markdown`): each command's flags as a table. */
void gg_cli_markdown_print(FILE *f);
void gg_cli_command_markdown(FILE *f, const struct gg_cli_command *cmd);
/* Writes text as Markdown, in a table cell or a paragraph: '|' escaped, and unless it goes in
   a code span (code) '*', '<' and a '_' that starts a word, so that they read as typed. */
void gg_cli_markdown_cell(FILE *f, const char *text, int code);
/* Writes text word by word from column col on, a line that would pass the usage text's width
   going on at column indent; ends the line. */
void gg_cli_put_wrapped(FILE *f, const char *text, int col, int indent);

/* ---- Environment variables (cli_env.c) ----------------------------------------------------- */

/* One variable ggfuzz reads, or sets for its children. */
struct gg_cli_env {
    const char *name;  /* the variable, or a prefix ending in '*' */
    const char *help;  /* what it does, with its default */
    const char *old;   /* (optional) its name before the GGFUZZ_ prefix, read for one release */
    int by_ggfuzz;     /* set by ggfuzz for its children (a kernel or a plugin may read it); its
                          help says so */
};
extern const struct gg_cli_env gg_cli_env_vars[]; /* ends with a NULL name */
/* At start (not in a worker): a WARNING for each old name still set, whose value is copied to
   the new name unless that is set too, and one WARNING naming the GGFUZZ_* variables that are
   set and unknown, all on stderr. */
void gg_cli_env_check(void);
/* Row e's text for the usage text and docs/cli.md: its help, then its old name. */
void gg_cli_env_help(const struct gg_cli_env *e, char *buf, size_t len);

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
int gg_cli_minimize(int argc, char **argv, char **lead, int n_lead);
int gg_cli_fuzz(int argc, char **argv, char **lead, int n_lead);
int gg_cli_selftest(int argc, char **argv, char **lead, int n_lead);
int gg_cli_worker(void);
/* plugins: the --plugin paths given before the command (already loaded), for the workers. */
int gg_cli_suite(int argc, char **argv, char **plugins, int n_plugins);
int gg_cli_report(int argc, char **argv);
int gg_cli_merge(int argc, char **argv);
int gg_cli_bench(int argc, char **argv);

#endif /* GG_CLI_INT_H */

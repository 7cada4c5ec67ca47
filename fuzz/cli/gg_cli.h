/*
 * gg_cli.h — public header of fuzz/cli/: the entry points of the ggfuzz command line, as the
 * ggfuzz executable and a host process that loads libggfuzz.so (the Python package in
 * kernels/python/ggfuzz, through ctypes) call them. It includes only the kernel ABI, so a host
 * needs nothing else of the harness. libggfuzz.so exports these functions and no other symbol.
 */
#ifndef GG_CLI_H
#define GG_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gg_kernel.h"

/* Runs the command line argv[0..argc) (argv[0] is the program's name) and returns the process's
   exit code; it never exits. The ggfuzz executable's main() is this call. Without a plugin
   loader installed (below), a Python plugin among the arguments or GGFUZZ_PLUGINS makes it
   replace the process by the Python host (cli_python.c) and return only if that fails. */
int gg_cli_main(int argc, char **argv);

/* The command that starts this program again: argv[0..argc) is copied and becomes the start of
   every worker's command line (then `[--plugin P]... worker`). Without it workers run this
   process's executable. A Python host sets {sys.executable, "-m", "ggfuzz"}. At most 16 words;
   returns 0, or -1 when there are more or a word is NULL. */
int gg_cli_set_self(int argc, const char *const *argv);

/* Loads the Python plugin at path (a path ending in ".py"): imports it, calls
   host->add_kernel(host->ctx, k, ...) once per kernel, whose descriptors stay valid until the
   process exits, and returns GG_OK or a status with a message in err. Installing one also tells
   gg_cli_main() that it runs under its host. NULL removes it. */
typedef enum gg_status (*gg_cli_plugin_loader_fn)(const char *path,
                                                  const struct gg_plugin_host *host, char *err,
                                                  size_t err_len);
void gg_cli_set_plugin_loader(gg_cli_plugin_loader_fn fn);

/* The dump of `ggfuzz run --dump DIR --no-kernel CASE` (docs/replay.md): the inputs, scales,
   group arrays and the reference of the case file case_path as .npy files with index.json in
   dir (created with its parents), without running any kernel (the case's kernel need not be
   registered). Returns 0, or the exit code that command would give (3: the case is malformed
   or a file cannot be written; 4: the case does not fit in memory) with a message in err
   (err_len bytes; "" on success). */
int gg_cli_dump_inputs(const char *case_path, const char *dir, char *err, size_t err_len);

/* The layout of the ABI's structs as this library was compiled: entries {name, value}, the first
   {"GG_KERNEL_ABI_VERSION", version}, then for each struct {"gg_problem", sizeof} followed by
   {"gg_problem.field", offsetof} for each field, ending with a NULL name. A host that mirrors the
   structs (ctypes) compares its own layout with this table before it passes any of them. */
struct gg_cli_abi_entry {
    const char *name;
    size_t value;
};
const struct gg_cli_abi_entry *gg_cli_abi_layout(void);

/* Where this ggfuzz's own files are (cli_home.c): what is "corpus" (seeds/, mutants/ and suite/
   with the suite's tiers), "python" (the directory that holds the ggfuzz Python package), "lib"
   (libggfuzz.so) or "exe" (the ggfuzz executable; the running one when this code is in an
   executable). An installed ggfuzz (PREFIX/bin/ggfuzz, or PREFIX/lib/libggfuzz.so in a host) has
   them under PREFIX/share/ggfuzz, PREFIX/lib and PREFIX/bin, which it prefers; one run from its
   build tree has them in the source tree it was built from (libggfuzz.so and ggfuzz side by
   side); the current directory is the last resort. Returns 0 with the first that exists in buf
   (len bytes; an absolute path, links resolved); 1 when none exists, with the paths tried in
   buf, separated by ", "; -1 for an unknown what, a path longer than len, or when the file this
   code was loaded from cannot be found. */
int gg_cli_home(const char *what, char *buf, size_t len);

#endif /* GG_CLI_H */

/*
 * gg_plugin.c — loads kernel plugins: shared objects built against kernels/gg_kernel.h alone.
 * The ABI version symbol is read and checked before any plugin code runs; the kernels are then
 * registered through a host whose add_kernel validates each descriptor in the registry. Loading
 * is all or nothing: a refused plugin leaves the registry as it was and is closed, an accepted one
 * stays open for the life of the process because the registry points into it.
 *
 * A path ending in ".py" is a Python plugin: it goes to the script loader that a host process
 * installed (the Python package's, when ggfuzz runs under Python), with the same host, checks
 * and all-or-nothing registration (an exception at import is a clean refusal there, and the
 * module stays loaded for the life of the process).
 *
 * A plugin's code (a shared object's initialisers and gg_plugin_register, a Python file's import
 * and registration) first runs in a child forked from this process, under a time limit
 * (GGFUZZ_PLUGIN_TIMEOUT seconds, default 10, 0: none): a plugin that crashes, exits or hangs
 * there is refused with a message, and only after the child has loaded it cleanly does this
 * process load it for real.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"

#define PLUGIN_PATH_MAX 4096
#define PLUGIN_MSG_MAX 512
#define TRIAL_TIMEOUT_S 10.0
#define TIMEOUT_ENV "GGFUZZ_PLUGIN_TIMEOUT"

/* One registration in progress, behind host->ctx. Only the first refusal is kept: it names the
   problem, and later refusals of the same plugin are usually its consequence. */
/* The loader of Python plugins, installed by the host process (NULL: none). */
static gg_plugin_script_fn script_loader;

struct registration {
    size_t added;           /* kernels accepted so far */
    enum gg_status refused; /* status of the first refused kernel; GG_OK when none */
    char msg[PLUGIN_MSG_MAX];
};

static enum gg_status fail(char *err, size_t err_len, enum gg_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum gg_status fail(char *err, size_t err_len, enum gg_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return st;
}

/* host->add_kernel: the registry decides; the plugin sees its verdict and message too. The very
   descriptor registered already (the same plugin loaded twice, e.g. by GGFUZZ_PLUGINS and
   --plugin: dlopen returns the loaded object) is accepted as it is. */
static enum gg_status host_add_kernel(void *ctx, const struct gg_kernel *k, char *err,
                                      size_t err_len)
{
    struct registration *reg = ctx;
    if (k != NULL && k->name != NULL && gg_registry_find(k->name) == k) {
        reg->added++;
        return GG_OK;
    }
    char msg[PLUGIN_MSG_MAX];
    enum gg_status st = gg_registry_add(k, msg, sizeof msg);
    if (st == GG_OK) {
        reg->added++;
        return GG_OK;
    }
    if (reg->refused == GG_OK) {
        reg->refused = st;
        snprintf(reg->msg, sizeof reg->msg, "%s", msg);
    }
    if (err != NULL && err_len > 0)
        snprintf(err, err_len, "%s", msg);
    return st;
}

/* The plugin's own status when it is one of gg_status's failures, else GG_E_ABI. */
static enum gg_status plugin_status(enum gg_status st)
{
    return st <= GG_E_INVAL && st >= GG_E_INTERNAL ? st : GG_E_ABI;
}

/* Runs the plugin's register function (fn, or for a script the script loader); on refusal err
   gets "path: problem" and the kernels the plugin had added are removed again. */
static enum gg_status register_kernels(const char *path, gg_plugin_register_fn fn, char *err,
                                       size_t err_len)
{
    size_t before = gg_registry_count();
    struct registration reg = {0};
    struct gg_plugin_host host = {
        .abi_version = GG_KERNEL_ABI_VERSION, .ctx = &reg, .add_kernel = host_add_kernel};
    char perr[PLUGIN_MSG_MAX] = "";
    enum gg_status st = fn != NULL ? fn(&host, perr, sizeof perr)
                                   : script_loader(path, &host, perr, sizeof perr);
    perr[sizeof perr - 1] = '\0';
    if (reg.refused != GG_OK)
        st = fail(err, err_len, reg.refused, "%s: %s", path, reg.msg);
    else if (st != GG_OK)
        st = fail(err, err_len, plugin_status(st), "%s: registration failed: %s", path,
                  perr[0] ? perr : "no message");
    else if (reg.added == 0)
        st = fail(err, err_len, GG_E_ABI, "%s: registers no kernel", path);
    if (st != GG_OK)
        gg_registry_truncate(before);
    return st;
}

/* The symbol's address, or NULL with err set to "path: not a ggfuzz plugin: ...". */
static void *plugin_symbol(void *handle, const char *path, const char *name, char *err,
                           size_t err_len)
{
    void *sym = dlsym(handle, name);
    if (sym == NULL)
        snprintf(err, err_len, "%s: not a ggfuzz plugin: symbol %s missing", path, name);
    return sym;
}

/* Opens file (path as the user gave it, for messages), checks it and registers its kernels; a
   Python plugin is imported and registered by the script loader. mark_fd >= 0 (the trial
   child): one byte 'R' is written there just before a shared object's register function is
   called, so the parent can tell that call from the plugin's initialisers. */
static enum gg_status load(const char *path, const char *file, int mark_fd, char *err,
                           size_t err_len)
{
    if (gg_plugin_is_script(path))
        return register_kernels(path, NULL, err, err_len);
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        return fail(err, err_len, GG_E_IO, "%s: cannot load: %s", path,
                    why ? why : "unknown error");
    }
    enum gg_status st = GG_E_ABI;
    const uint32_t *version = plugin_symbol(handle, path, GG_PLUGIN_ABI_SYMBOL, err, err_len);
    if (version == NULL)
        goto refused;
    if (*version != GG_KERNEL_ABI_VERSION) {
        snprintf(err, err_len, "%s: plugin ABI version %u, this ggfuzz speaks %u", path,
                 (unsigned)*version, GG_KERNEL_ABI_VERSION);
        goto refused;
    }
    void *fn = plugin_symbol(handle, path, GG_PLUGIN_REGISTER_SYMBOL, err, err_len);
    if (fn == NULL)
        goto refused;
    if (mark_fd >= 0 && gg_wire_write(mark_fd, "R", 1) != 0)
        _exit(1); /* the parent is gone */
    st = register_kernels(path, (gg_plugin_register_fn)fn, err, err_len);
    if (st == GG_OK)
        return GG_OK; /* the handle stays open: registered kernels point into it */
refused:
    dlclose(handle);
    return st;
}

/* What the trial child reports after load() returned. */
struct trial_reply {
    char tag; /* 'D' */
    enum gg_status status;
    char msg[PLUGIN_MSG_MAX + PLUGIN_PATH_MAX];
};

/* The time limit of a trial from GGFUZZ_PLUGIN_TIMEOUT (seconds; 0: none). */
static enum gg_status trial_limit(double *limit, char *err, size_t err_len)
{
    const char *env = getenv(TIMEOUT_ENV);
    *limit = TRIAL_TIMEOUT_S;
    if (env == NULL || env[0] == '\0')
        return GG_OK;
    char *end;
    errno = 0;
    double v = strtod(env, &end);
    if (errno || end == env || *end != '\0' || !(v >= 0) || !isfinite(v))
        return fail(err, err_len, GG_E_INVAL, "%s: not a number of seconds >= 0: '%s'",
                    TIMEOUT_ENV, env);
    *limit = v;
    return GG_OK;
}

/* The trial child: loads the plugin into its copy of the registry and reports the outcome. */
static void trial_child(const char *path, const char *file, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct trial_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.tag = 'D';
    rep.status = load(path, file, fd, rep.msg, sizeof rep.msg);
    _exit(gg_wire_write(fd, &rep, sizeof rep) == 0 ? 0 : 1);
}

/* Loads the plugin in a forked child first. GG_OK when the child loaded it; the child's status
   and message when it refused the plugin; GG_E_ABI and a message naming what happened when the
   child died, exited or ran past the limit. */
static enum gg_status trial(const char *path, const char *file, char *err, size_t err_len)
{
    double limit;
    enum gg_status st = trial_limit(&limit, err, err_len);
    if (st != GG_OK)
        return st;
    int fds[2];
    if (pipe(fds) != 0)
        return fail(err, err_len, GG_E_IO, "%s: cannot create a pipe: %s", path, strerror(errno));
    fflush(NULL);
    double deadline = limit > 0 ? gg_wire_now() + limit : 0;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return fail(err, err_len, GG_E_NOMEM, "%s: cannot fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        trial_child(path, file, fds[1]);
    }
    close(fds[1]);
    struct trial_reply rep;
    memset(&rep, 0, sizeof rep);
    int in_register = 0;
    int got = gg_wire_read(fds[0], &rep.tag, 1, deadline);
    if (got == 0 && rep.tag == 'R') {
        in_register = 1;
        got = gg_wire_read(fds[0], &rep.tag, 1, deadline);
    }
    if (got == 0 && rep.tag == 'D')
        got = gg_wire_read(fds[0], (char *)&rep + 1, sizeof rep - 1, deadline);
    else if (got == 0)
        got = -1; /* not a reply: the plugin wrote to a descriptor it does not own */
    if (got == 1)
        kill(pid, SIGKILL);
    close(fds[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (got == 0) {
        rep.msg[sizeof rep.msg - 1] = '\0';
        if (rep.status != GG_OK)
            snprintf(err, err_len, "%s", rep.msg);
        return rep.status;
    }
    const char *where = gg_plugin_is_script(path) ? "the import (its module code)"
                        : in_register             ? "gg_plugin_register"
                                                  : "loading (its initialisers)";
    char how[256];
    gg_child_end_text(where, wst, got == 1, limit, TIMEOUT_ENV, how, sizeof how);
    return fail(err, err_len, GG_E_ABI, "%s: %s", path, how);
}

void gg_child_end_text(const char *what, int wst, int timed_out, double limit,
                       const char *limit_name, char *buf, size_t len)
{
    if (timed_out)
        snprintf(buf, len, "%s did not return within %g s (%s)", what, limit, limit_name);
    else if (WIFSIGNALED(wst))
        snprintf(buf, len, "%s died on signal %d (%s)", what, WTERMSIG(wst),
                 strsignal(WTERMSIG(wst)));
    else
        snprintf(buf, len, "%s ended the process (exit status %d)", what,
                 WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
}

void gg_plugin_set_script_loader(gg_plugin_script_fn fn)
{
    script_loader = fn;
}

int gg_plugin_has_script_loader(void)
{
    return script_loader != NULL;
}

int gg_plugin_is_script(const char *path)
{
    size_t len = path != NULL ? strlen(path) : 0;
    return len > 3 && strcmp(path + len - 3, ".py") == 0;
}

/* The plugins loaded, as absolute paths (part of the registry's state: its kernels point into
   them), for the commands that run this ggfuzz again elsewhere. */
#define PLUGINS_MAX 64
static char *loaded[PLUGINS_MAX];
static size_t n_loaded;

static void remember(const char *path)
{
    char *abs = realpath(path, NULL);
    for (size_t i = 0; abs && i < n_loaded; i++)
        if (strcmp(loaded[i], abs) == 0) {
            free(abs);
            return;
        }
    if (abs && n_loaded < PLUGINS_MAX)
        loaded[n_loaded++] = abs;
    else
        free(abs);
}

size_t gg_plugin_count(void)
{
    return n_loaded;
}

const char *gg_plugin_path(size_t i)
{
    return i < n_loaded ? loaded[i] : NULL;
}

static enum gg_status load_plugin(const char *path, char *err, size_t err_len);

enum gg_status gg_plugin_load(const char *path, char *err, size_t err_len)
{
    enum gg_status st = load_plugin(path, err, err_len);
    if (st == GG_OK)
        remember(path);
    return st;
}

static enum gg_status load_plugin(const char *path, char *err, size_t err_len)
{
    gg_registry_init(); /* in-tree kernels first: a plugin cannot take their names */
    if (path == NULL || path[0] == '\0')
        return fail(err, err_len, GG_E_INVAL, "plugin path is empty");
    if (gg_plugin_is_script(path) && script_loader == NULL)
        return fail(err, err_len, GG_E_ABI, "%s: a Python plugin needs ggfuzz's Python host "
                    "(the ggfuzz command starts it; or python3 -m ggfuzz)", path);
    /* A name without '/' would make dlopen search the library path; the user means a file. */
    char local[PLUGIN_PATH_MAX];
    const char *file = path;
    if (strchr(path, '/') == NULL && !gg_plugin_is_script(path)) {
        if ((size_t)snprintf(local, sizeof local, "./%s", path) >= sizeof local)
            return fail(err, err_len, GG_E_INVAL, "%.64s...: plugin path too long", path);
        file = local;
    }
    enum gg_status st = trial(path, file, err, err_len);
    return st == GG_OK ? load(path, file, -1, err, err_len) : st;
}

enum gg_status gg_plugin_load_list(const char *paths, char *err, size_t err_len)
{
    char path[PLUGIN_PATH_MAX];
    for (const char *p = paths; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ":");
        if (len >= sizeof path)
            return fail(err, err_len, GG_E_INVAL, "%.64s...: plugin path too long", p);
        if (len > 0) {
            memcpy(path, p, len);
            path[len] = '\0';
            enum gg_status st = gg_plugin_load(path, err, err_len);
            if (st != GG_OK)
                return st;
        }
        p += len + (p[len] == ':');
    }
    return GG_OK;
}

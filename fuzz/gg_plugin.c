/*
 * gg_plugin.c — loads kernel plugins: shared objects built against kernels/gg_kernel.h alone.
 * The ABI version symbol is read and checked before any plugin code runs; the kernels are then
 * registered through a host whose add_kernel validates each descriptor in the registry. Loading
 * is all or nothing: a refused plugin leaves the registry as it was and is closed, an accepted one
 * stays open for the life of the process because the registry points into it.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/gg_fuzz.h"

#define PLUGIN_PATH_MAX 4096
#define PLUGIN_MSG_MAX 512

/* One registration in progress, behind host->ctx. Only the first refusal is kept: it names the
   problem, and later refusals of the same plugin are usually its consequence. */
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

/* Runs the plugin's register function; on refusal err gets "path: problem" and the kernels the
   plugin had added are removed again. */
static enum gg_status register_kernels(const char *path, gg_plugin_register_fn fn, char *err,
                                       size_t err_len)
{
    size_t before = gg_registry_count();
    struct registration reg = {0};
    struct gg_plugin_host host = {
        .abi_version = GG_KERNEL_ABI_VERSION, .ctx = &reg, .add_kernel = host_add_kernel};
    char perr[PLUGIN_MSG_MAX] = "";
    enum gg_status st = fn(&host, perr, sizeof perr);
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

enum gg_status gg_plugin_load(const char *path, char *err, size_t err_len)
{
    gg_registry_init(); /* in-tree kernels first: a plugin cannot take their names */
    if (path == NULL || path[0] == '\0')
        return fail(err, err_len, GG_E_INVAL, "plugin path is empty");
    /* A name without '/' would make dlopen search the library path; the user means a file. */
    char local[PLUGIN_PATH_MAX];
    const char *file = path;
    if (strchr(path, '/') == NULL) {
        if ((size_t)snprintf(local, sizeof local, "./%s", path) >= sizeof local)
            return fail(err, err_len, GG_E_INVAL, "%.64s...: plugin path too long", path);
        file = local;
    }
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
    st = register_kernels(path, (gg_plugin_register_fn)fn, err, err_len);
    if (st == GG_OK)
        return GG_OK; /* the handle stays open: registered kernels point into it */
refused:
    dlclose(handle);
    return st;
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

/*
 * gg_registry.c — the kernel registry: in-tree kernels plus those added later (plugins). It is
 * filled once at start-up and read afterwards (the fault handler's note of the operand buffers,
 * gg_faultnote.c, is the only other global state of a process running kernels). A descriptor is
 * validated before it is accepted, so a malformed plugin kernel is refused with a message instead
 * of crashing the harness later.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz/run/run_int.h"
#include "kernels/builtin/gg_builtin.h"

#define REGISTRY_MAX 256

static const struct gg_kernel *registry[REGISTRY_MAX];
static size_t registry_len;
static int registry_ready;

enum gg_status gg_registry_add(const struct gg_kernel *k, char *err, size_t err_len)
{
    if (k == NULL) {
        snprintf(err, err_len, "kernel descriptor is NULL");
        return GG_E_ABI;
    }
    const char *name = k->name ? k->name : "(unnamed)";
    if (k->abi_version != GG_KERNEL_ABI_VERSION) {
        snprintf(err, err_len, "kernel %s: ABI version %u, this ggfuzz speaks %u", name,
                 k->abi_version, GG_KERNEL_ABI_VERSION);
        return GG_E_ABI;
    }
    const char *missing = !k->name ? "name" : !k->run ? "run" : !k->supports ? "supports" : NULL;
    if (missing) {
        snprintf(err, err_len, "kernel %s: required slot '%s' is NULL", name, missing);
        return GG_E_ABI;
    }
    if (k->ops == 0 || (k->ops >> GG_OP_COUNT) != 0) {
        snprintf(err, err_len, "kernel %s: ops mask 0x%x names no known op", name, k->ops);
        return GG_E_ABI;
    }
    if ((unsigned)k->backend > GG_BACKEND_HIP) {
        snprintf(err, err_len, "kernel %s: unknown backend %d", name, (int)k->backend);
        return GG_E_ABI;
    }
    /* A mutant name is one item of a mutant list: never empty, never holding the separator. */
    for (const char *const *m = k->mutants; m && *m; m++)
        if ((*m)[0] == '\0' || strchr(*m, ',')) {
            snprintf(err, err_len, "kernel %s: mutant name '%s' is empty or holds a ','", name,
                     *m);
            return GG_E_ABI;
        }
    if (gg_registry_find(k->name)) {
        snprintf(err, err_len, "kernel %s is already registered", name);
        return GG_E_INVAL;
    }
    if (registry_len == REGISTRY_MAX) {
        snprintf(err, err_len, "kernel %s: registry full (%d kernels)", name, REGISTRY_MAX);
        return GG_E_NOMEM;
    }
    registry[registry_len++] = k;
    return GG_OK;
}

void gg_registry_init(void)
{
    if (registry_ready)
        return;
    registry_ready = 1;
    size_t n = 0;
    const struct gg_kernel *const *table = gg_kernels_builtin(&n);
    char err[256];
    for (size_t i = 0; i < n; i++)
        (void)gg_registry_add(table[i], err, sizeof err); /* in-tree kernels are valid by test */
}

size_t gg_registry_count(void)
{
    return registry_len;
}

const struct gg_kernel *gg_registry_at(size_t i)
{
    return i < registry_len ? registry[i] : NULL;
}

void gg_registry_truncate(size_t count)
{
    while (registry_len > count)
        registry[--registry_len] = NULL;
}

const struct gg_kernel *gg_registry_find(const char *name)
{
    for (size_t i = 0; name && i < registry_len; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

/*
 * gg_gpus.c — the devices a campaign or a suite spreads its work over (`--gpus all|auto|LIST`),
 * and the binding of a process to one of them. A process is bound before it touches a device, by
 * its environment: the runtime's visibility variable (CUDA_VISIBLE_DEVICES or
 * HIP_VISIBLE_DEVICES) names that device alone, so the harness, a vendor library and a Python
 * framework (torch, JAX) in the process all see it as their device 0, and its free memory is what
 * the memory admission measures. GGFUZZ_DEVICE names the ordinal as --gpus listed it. Ordinals
 * are those the parent sees: under a visibility list of its own (Slurm's, for instance), ordinal
 * i is the list's i-th entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/run/run_int.h"

/* Adds ordinals lo..hi to g; -1 with the message on a repeat or too many. */
static int add_range(struct gg_gpus *g, long lo, long hi, const char *spec, char *err,
                     size_t err_len)
{
    for (long d = lo; d <= hi; d++) {
        for (int i = 0; i < g->n; i++)
            if (g->id[i] == d) {
                snprintf(err, err_len, "--gpus %s: device %ld is listed twice", spec, d);
                return -1;
            }
        if (g->n == GG_GPUS_MAX) {
            snprintf(err, err_len, "--gpus %s: more than %d devices", spec, GG_GPUS_MAX);
            return -1;
        }
        g->id[g->n++] = (int)d;
    }
    return 0;
}

/* A list "0,2,4-7": 0 with g filled, -1 with the message. */
static int parse_list(const char *spec, struct gg_gpus *g, char *err, size_t err_len)
{
    const char *p = spec;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            goto bad;
        long lo = strtol(p, &end, 10), hi = lo;
        if (*end == '-') {
            p = end + 1;
            if (*p < '0' || *p > '9')
                goto bad;
            hi = strtol(p, &end, 10);
        }
        if (lo > hi || hi >= 4096)
            goto bad;
        if (add_range(g, lo, hi, spec, err, err_len) != 0)
            return -1;
        if (*end == '\0')
            return 0;
        if (*end != ',')
            goto bad;
        p = end + 1;
    }
bad:
    snprintf(err, err_len, "--gpus: 'all', 'auto' or a list of device ordinals such as 0,1 or "
             "0-3, not '%s'", spec);
    return -1;
}

enum gg_status gg_gpus_parse(const char *spec, struct gg_gpus *g, char *note, size_t note_len,
                             char *err, size_t err_len)
{
    memset(g, 0, sizeof *g);
    note[0] = '\0';
    int all = strcmp(spec, "all") == 0, any = strcmp(spec, "auto") == 0;
    if (!all && !any && parse_list(spec, g, err, err_len) != 0)
        return GG_E_INVAL;
    char why[512] = "";
    int count = gg_device_count(why, sizeof why);
    if (all || any) {
        if (count < 1 && all) {
            snprintf(err, err_len, "--gpus all: %s", why);
            return GG_E_DEVICE;
        }
        if (count < 1)
            snprintf(note, note_len, "--gpus auto: %s; running as without --gpus", why);
        for (int d = 0; d < count && d < GG_GPUS_MAX; d++)
            g->id[g->n++] = d;
        return GG_OK;
    }
    if (count < 1) {
        snprintf(note, note_len, "--gpus %s: %s; the list only labels the processes", spec, why);
        return GG_OK;
    }
    for (int i = 0; i < g->n; i++)
        if (g->id[i] >= count) {
            snprintf(err, err_len, "--gpus %s: there is no device %d: %d visible (0-%d)", spec,
                     g->id[i], count, count - 1);
            return GG_E_INVAL;
        }
    return GG_OK;
}

void gg_gpus_format(const struct gg_gpus *g, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "", g->id[i]);
}

/* Entry ordinal of a comma-separated list, copied into out; 0 when the list is shorter. */
static int list_entry(const char *list, int ordinal, char *out, size_t len)
{
    for (int i = 0; list; i++) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (i == ordinal) {
            snprintf(out, len, "%.*s", (int)n, list);
            return n > 0;
        }
        list = end ? end + 1 : NULL;
    }
    return 0;
}

void gg_gpus_env(int ordinal, char *visible, size_t visible_len, char *device, size_t device_len)
{
    const char *var = gg_device_visible_env();
    char entry[256];
    if (!list_entry(getenv(var), ordinal, entry, sizeof entry))
        snprintf(entry, sizeof entry, "%d", ordinal);
    snprintf(visible, visible_len, "%s=%s", var, entry);
    snprintf(device, device_len, "%s=%d", GG_GPUS_DEVICE_ENV, ordinal);
}

int gg_gpus_bind(int ordinal)
{
    char visible[320], device[64];
    gg_gpus_env(ordinal, visible, sizeof visible, device, sizeof device);
    char *v = strchr(visible, '='), *d = strchr(device, '=');
    *v++ = '\0';
    *d++ = '\0';
    return setenv(visible, v, 1) == 0 && setenv(device, d, 1) == 0 ? 0 : -1;
}

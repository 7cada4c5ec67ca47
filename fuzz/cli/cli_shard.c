/*
 * cli_shard.c — which shard of a campaign or a suite this process is: `--shard I/N` (0 <= I < N),
 * or, for a campaign, Slurm's environment: an array task (SLURM_ARRAY_TASK_ID, _MIN, _STEP and
 * SLURM_ARRAY_TASK_COUNT) and a task of a step (SLURM_PROCID of SLURM_NTASKS), which combine
 * into index = array index · tasks + task of count = array tasks · tasks (a count past
 * GG_CLI_SHARD_MAX is an error naming the variables). An explicit --shard wins.
 * And which devices of its node it spreads its work over: `--gpus all|auto|LIST`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/cli/cli_int.h"
#include "fuzz/run/gg_run.h"

/* A whole number in [0, max] in s ending at *end; -1 when it is not one. */
static long long whole(const char *s, char **end, long long max)
{
    errno = 0;
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    long long v = strtoll(s, end, 10);
    return errno || v > max ? -1 : v;
}

int gg_cli_apply_shard(const char *arg, void *field, char *why, size_t why_len)
{
    struct gg_cli_shard *sh = field;
    char *end = NULL, *end2 = NULL;
    long long i = whole(arg, &end, GG_CLI_SHARD_MAX);
    long long n = i >= 0 && *end == '/' ? whole(end + 1, &end2, GG_CLI_SHARD_MAX) : -1;
    if (i < 0 || n < 1 || *end2 != '\0' || i >= n) {
        snprintf(why, why_len, "expected I/N with 0 <= I < N <= %d (shard I of N), not '%s'",
                 GG_CLI_SHARD_MAX, arg);
        return GG_EXIT_USAGE;
    }
    sh->index = (int)i;
    sh->count = (int)n;
    return 0;
}

/* Slurm's numbers are read up to this (2^31 - 1, Slurm's own limits are far below), so that a
   product of two of them never overflows and a count past GG_CLI_SHARD_MAX is seen as such. */
#define ENV_MAX 2147483647LL

/* The whole number of environment variable name, or dflt when it is not set; -1 when it is set
   to something else. */
static long long env_whole(const char *name, long long dflt)
{
    const char *v = getenv(name);
    char *end = NULL;
    if (v == NULL || v[0] == '\0')
        return dflt;
    long long n = whole(v, &end, ENV_MAX);
    return n >= 0 && *end == '\0' ? n : -1;
}

int gg_cli_shard_env(int *index, int *count, char *how, size_t how_len)
{
    long long a_id = env_whole("SLURM_ARRAY_TASK_ID", -2);
    long long a_n = env_whole("SLURM_ARRAY_TASK_COUNT", 1);
    long long a_min = env_whole("SLURM_ARRAY_TASK_MIN", 0);
    long long a_step = env_whole("SLURM_ARRAY_TASK_STEP", 1);
    long long t_id = env_whole("SLURM_PROCID", 0), t_n = env_whole("SLURM_NTASKS", 1);
    long long a_idx = 0;
    if (a_id == -2) { /* not an array job */
        a_n = 1;
    } else if (a_id < 0 || a_n < 1 || a_min < 0 || a_step < 1 || a_id < a_min ||
               (a_idx = (a_id - a_min) / a_step) >= a_n) {
        snprintf(how, how_len, "SLURM_ARRAY_TASK_ID=%s does not fit SLURM_ARRAY_TASK_MIN, _STEP "
                 "and _COUNT", getenv("SLURM_ARRAY_TASK_ID"));
        return -1;
    }
    if (t_id < 0 || t_n < 1 || t_id >= t_n) {
        snprintf(how, how_len, "SLURM_PROCID and SLURM_NTASKS are not a task of a step");
        return -1;
    }
    if (a_n * t_n > GG_CLI_SHARD_MAX) {
        if (a_n > 1 && t_n > 1)
            snprintf(how, how_len, "SLURM_ARRAY_TASK_COUNT=%lld array tasks times SLURM_NTASKS=%lld "
                     "tasks make %lld shards, more than %d", a_n, t_n, a_n * t_n,
                     GG_CLI_SHARD_MAX);
        else
            snprintf(how, how_len, "%s=%lld shards are more than %d",
                     a_n > 1 ? "SLURM_ARRAY_TASK_COUNT" : "SLURM_NTASKS", a_n * t_n,
                     GG_CLI_SHARD_MAX);
        return -1;
    }
    if (a_n * t_n <= 1)
        return 0;
    *index = (int)(a_idx * t_n + t_id);
    *count = (int)(a_n * t_n);
    if (a_n > 1 && t_n > 1)
        snprintf(how, how_len, "array task %lld of %lld, task %lld of %lld", a_idx, a_n, t_id,
                 t_n);
    else if (a_n > 1)
        snprintf(how, how_len, "SLURM_ARRAY_TASK_ID=%lld of SLURM_ARRAY_TASK_COUNT=%lld", a_id,
                 a_n);
    else
        snprintf(how, how_len, "SLURM_PROCID=%lld of SLURM_NTASKS=%lld", t_id, t_n);
    return 1;
}

/* gg_gpus_parse's messages name the flag ("--gpus all: ..."). */
int gg_cli_apply_gpus(const char *arg, void *field, char *why, size_t why_len)
{
    char note[768];
    enum gg_status st = gg_gpus_parse(arg, field, note, sizeof note, why, why_len);
    if (st != GG_OK)
        return st == GG_E_INVAL ? GG_EXIT_USAGE : GG_EXIT_HARNESS;
    if (note[0])
        fprintf(stderr, "INFO: %s\n", note);
    return 0;
}

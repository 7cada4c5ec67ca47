/*
 * test_cli_kill.c — `kill -9` against `ggfuzz fuzz` on a CPU mutant: the supervisor killed at 20
 * moments and restarted in the same directories each time, then 20 of a running campaign's
 * workers killed one after another. Each worker kill is a logged harness event, never a finding;
 * after a last campaign has started and ended no temporary or minimisation progress file is left,
 * no finding is a crash, and a replay of the artifacts reproduces every entry.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "splitmix.h"

#define KERNEL "grouped_bf16_cpu_tiled"
#define MUTANT "wgrad_zero_uninit"
#define ROUNDS 20
#define WORKER_KILLS 20

static char root[] = "/tmp/ggfuzz-kill-XXXXXX";
static char corpus[64], artifacts[64], stop[64];

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Starts `ggfuzz fuzz` on the test's directories with seed and budget, its output appended to
   root/log (log names it); returns the supervisor's pid. */
static pid_t start_campaign(int seed, const char *budget_s, const char *log)
{
    char seed_s[32], log_path[128];
    snprintf(seed_s, sizeof seed_s, "%d", seed);
    snprintf(log_path, sizeof log_path, "%s/%s", root, log);
    char *argv[] = {GGFUZZ_BIN, "fuzz", corpus, "--kernel", KERNEL, "--mutant", MUTANT,
                    "--artifacts", artifacts, "--workers", "2", "--timeout", "10",
                    "--seed", seed_s, "--max-total-time", (char *)budget_s, "--stop-file", stop,
                    NULL};
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Waits for the supervisor; its exit code (a death by signal fails the test unless it was
   SIGKILL and killed is set). */
static int wait_campaign(pid_t pid, int killed)
{
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    if (killed && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
        return -1;
    cr_assert(WIFEXITED(st), "the supervisor died on signal %d", WTERMSIG(st));
    return WEXITSTATUS(st);
}

/* The worker processes (children running `ggfuzz worker`) of supervisor pid: up to max. */
static int workers_of(pid_t pid, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; n < max && (e = readdir(d)) != NULL;) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *close_paren = strrchr(buf, ')');
        int ppid = 0;
        char state;
        if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2 || ppid != pid)
            continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        int is_worker = 0;
        for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
            is_worker |= strcmp(buf + i, "worker") == 0;
        if (is_worker)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

/* Names in dir (not below it) that are temporary or minimisation progress files; the first is
   left in first. */
static int leftovers(const char *dir, char *first, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".tmp.") || strncmp(e->d_name, ".min-", 5) == 0)
            if (n++ == 0)
                snprintf(first, len, "%s/%s", dir, e->d_name);
    closedir(d);
    return n;
}

static int all_leftovers(char *first, size_t len)
{
    return leftovers(root, first, len) + leftovers(corpus, first, len) +
           leftovers(artifacts, first, len);
}

static char *slurp(const char *path)
{
    static char buf[1 << 18];
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

static long stat_value(const char *key)
{
    char path[128];
    snprintf(path, sizeof path, "%s/fuzzer_stats", root);
    const char *p = strstr(slurp(path), key);
    cr_assert_not_null(p, "no %s in fuzzer_stats", key);
    return strtol(strchr(p, ':') + 1, NULL, 10);
}

Test(cli_kill, campaigns_survive_kill_9_of_supervisor_and_workers, .timeout = 240)
{
    cr_assert_eq(access(GGFUZZ_BIN, X_OK), 0);
    cr_assert_not_null(mkdtemp(root));
    snprintf(corpus, sizeof corpus, "%s/corpus", root);
    snprintf(artifacts, sizeof artifacts, "%s/artifacts", root);
    snprintf(stop, sizeof stop, "%s/stop", root);
    uint64_t rng = 15;

    /* The supervisor, killed at random moments: starting, drawing, storing, minimising. */
    for (int round = 0; round < ROUNDS; round++) {
        pid_t pid = start_campaign(round + 1, "60", "log-supervisor");
        sleep_ms(100 + splitmix_below(&rng, 2400));
        cr_assert_eq(kill(pid, SIGKILL), 0);
        wait_campaign(pid, 1);
    }
    char first[512] = "", path[128];
    int left = all_leftovers(first, sizeof first);
    snprintf(path, sizeof path, "%s/log-supervisor", root);
    const char *log = slurp(path);
    cr_log_info("%d supervisor kills: %d starts removed temporary files, %d resumed a "
                "minimisation; %d temporary or progress files left now (%s)", ROUNDS,
                count(log, "INFO: removed "), count(log, "INFO: resuming the minimisation"), left,
                first);

    /* Its workers, killed one after another while the campaign goes on. */
    pid_t pid = start_campaign(100, "60", "log-workers");
    int kills = 0;
    for (int i = 0; i < WORKER_KILLS; i++) {
        sleep_ms(100 + splitmix_below(&rng, 300));
        /* Listed just before the kill: a killed worker is a zombie (no command line) or gone. */
        pid_t w[4];
        int n = 0;
        for (int tries = 0; tries < 200 && (n = workers_of(pid, w, 4)) == 0; tries++)
            sleep_ms(25);
        cr_assert_gt(n, 0, "the campaign has no worker");
        kills += kill(w[i % n], SIGKILL) == 0;
    }
    sleep_ms(500);
    FILE *f = fopen(stop, "w");
    cr_assert_not_null(f);
    fclose(f);
    /* 0, or the code of a fault class the mutant gives (13-19); never crash (11), timeout (12) or
       a harness error (3). */
    int code = wait_campaign(pid, 0);
    cr_expect(code == 0 || (code >= 13 && code <= 19), "exit %d", code);
    unlink(stop);
    snprintf(path, sizeof path, "%s/log-workers", root);
    log = slurp(path);
    cr_expect_eq(count(log, "was killed by signal 9 (Killed) from outside"), kills, "%s", log);
    cr_expect_eq(count(log, "a harness event, not a finding"), kills);
    cr_expect_eq(stat_value("worker_kills"), kills);
    cr_expect_eq(stat_value("faults_crash"), 0);

    /* A last campaign starts on the same directories and ends on its own. */
    pid = start_campaign(200, "3", "log-last");
    code = wait_campaign(pid, 0);
    cr_expect(code == 0 || (code >= 13 && code <= 19), "exit %d", code);
    first[0] = '\0';
    cr_expect_eq(all_leftovers(first, sizeof first), 0, "left behind: %s", first);

    /* No crash among the findings, and every one of them replays. */
    int findings = 0;
    DIR *d = opendir(artifacts);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 5, ".case") != 0)
            continue;
        findings++;
        snprintf(path, sizeof path, "%s/%s", artifacts, e->d_name);
        cr_expect_null(strstr(slurp(path), "class=crash"), "%s is a crash finding", path);
        cr_expect_neq(strncmp(e->d_name, "crash-", 6), 0, "%s", path);
    }
    closedir(d);
    cr_expect_gt(findings, 0, "the mutant was never found");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "'%s' --replay '%s' > '%s/log-replay' 2>&1", GGFUZZ_BIN, artifacts,
             root);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/log-replay", root);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "replay: %s", slurp(path));
    cr_expect(strstr(slurp(path), ", 0 did not reproduce, 0 refused, 0 errors"), "%s",
              slurp(path));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

/*
 * test_fuzz_ledger.c — the memory ledger of cases run side by side (gg_ledger.c), with real
 * processes: a case that fits beside the one running starts at once and is told what the other
 * holds; one that does not fit waits until the other ends; one admitted beside another that then
 * asks to run alone waits for the other and holds back a third meanwhile; a case whose process
 * died holding memory is freed by its runner's release; device memory is counted per device and
 * measured by the first case that finds the device to itself; an admission whose measure, once
 * admitted, falls short waits to run alone. Each process writes what it did to
 * a pipe, so the order of events is checked, not timings.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/run/gg_run.h"

TestSuite(ledger, .timeout = 60);

static int fds[2];

static void say(const char *what)
{
    char line[32];
    snprintf(line, sizeof line, "%-7s", what); /* fixed width: one write, one event */
    if (write(fds[1], line, 7) != 7)
        _exit(9);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Reads the next event. */
static void next(char *buf)
{
    cr_assert_eq(read(fds[0], buf, 7), 7);
    buf[7] = '\0';
    for (int i = 6; i >= 0 && buf[i] == ' '; i--)
        buf[i] = '\0';
}

/* A case process on slot and device (-1: none): takes bytes of kind, measured free (see
   gg_ledger_take), says "<name>+" (and "<name>=" when others held some on its pool), holds it
   for ms, says "<name>-" and releases (unless it dies holding it). */
static pid_t case_on(int slot, int device, enum gg_ledger_kind kind, const char *name,
                     int64_t bytes, int64_t measured, int ms, int dies)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    gg_ledger_join(slot, device);
    char w[16];
    int64_t held = gg_ledger_take(kind, bytes, measured);
    snprintf(w, sizeof w, "%s%s", name, held ? "=" : "+");
    say(w);
    sleep_ms(ms);
    if (dies)
        _exit(3);
    snprintf(w, sizeof w, "%s-", name);
    say(w);
    gg_ledger_release();
    _exit(0);
}

/* A case of host memory, measured 1000 free. */
static pid_t holder(int slot, const char *name, int64_t bytes, int ms, int dies)
{
    return case_on(slot, -1, GG_LEDGER_HOST, name, bytes, 1000, ms, dies);
}

static void reap(pid_t pid)
{
    int wst;
    cr_assert_eq(waitpid(pid, &wst, 0), pid);
}

/* A ledger of slots with host_limit, and the pipe of events. */
static void start(int slots, int64_t host_limit)
{
    char err[256];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(gg_ledger_open(slots, host_limit, err, sizeof err), GG_OK, "%s", err);
}

/* Waits for the processes (0 ends the list), closes the ledger and the pipe. */
static void finish(pid_t a, pid_t b, pid_t c)
{
    pid_t all[3] = {a, b, c};
    for (int i = 0; i < 3 && all[i] > 0; i++)
        reap(all[i]);
    gg_ledger_close();
    close(fds[0]);
    close(fds[1]);
}

/* The next event is want. */
static void expect_next(const char *want)
{
    char e[8];
    next(e);
    cr_expect_str_eq(e, want);
}

Test(ledger, fitting_cases_run_together_the_others_wait)
{
    start(3, 100);
    pid_t a = holder(0, "a", 60, 300, 0);
    expect_next("a+");
    pid_t b = holder(1, "b", 30, 0, 0); /* 60 + 30 <= 100: beside a, told a holds memory */
    expect_next("b=");
    expect_next("b-");
    pid_t c = holder(2, "c", 50, 0, 0); /* 60 + 50 > 100: after a */
    expect_next("a-");
    expect_next("c+");
    expect_next("c-");
    finish(a, b, c);
}

Test(ledger, a_case_bigger_than_the_limit_runs_alone)
{
    start(2, 100);
    pid_t a = holder(0, "a", 10, 300, 0);
    expect_next("a+");
    pid_t b = holder(1, "b", 500, 0, 0); /* never fits beside a: waits, then runs alone */
    expect_next("a-");
    expect_next("b+");
    finish(a, b, 0);
}

Test(ledger, alone_holds_back_new_cases_until_the_others_end)
{
    start(3, 100);
    pid_t a = holder(0, "a", 20, 400, 0);
    expect_next("a+");
    pid_t b = fork();
    if (b == 0) {
        gg_ledger_join(1, -1);
        if (gg_ledger_take(GG_LEDGER_HOST, 30, 1000) != 20)
            _exit(4);
        say("b=");
        gg_ledger_alone(GG_LEDGER_HOST); /* its memory was not there after all */
        say("b+");
        sleep_ms(200);
        say("b-");
        gg_ledger_release();
        _exit(0);
    }
    expect_next("b=");
    sleep_ms(50);
    pid_t c = holder(2, "c", 1, 0, 0); /* would fit, but b waits to run alone */
    expect_next("a-");
    expect_next("b+");
    expect_next("b-");
    expect_next("c+");
    int wst;
    cr_assert_eq(waitpid(b, &wst, 0), b);
    cr_expect(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    finish(a, c, 0);
}

Test(ledger, a_dead_case_is_released_by_its_runner)
{
    start(2, 100);
    pid_t runner = fork(); /* slot 0's runner: its case dies holding 90, the runner releases */
    if (runner == 0) {
        gg_ledger_join(0, -1);
        pid_t a = holder(0, "a", 90, 0, 1);
        int wst;
        waitpid(a, &wst, 0);
        sleep_ms(200);
        say("r");
        gg_ledger_release();
        _exit(0);
    }
    expect_next("a+");
    pid_t b = holder(1, "b", 50, 0, 0);
    expect_next("r");
    expect_next("b+");
    finish(runner, b, 0);
}

Test(ledger, device_memory_is_counted_per_device)
{
    start(3, 0);
    /* device 0, measured 100 free: the device's limit */
    pid_t a = case_on(0, 0, GG_LEDGER_DEVICE, "a", 80, 100, 300, 0);
    expect_next("a+");
    /* device 1: to itself, whatever device 0 holds */
    pid_t b = case_on(1, 1, GG_LEDGER_DEVICE, "b", 80, 100, 0, 0);
    expect_next("b+");
    expect_next("b-");
    /* device 0 again: 80 + 30 > 100, after a (its own measure is ignored) */
    pid_t c = case_on(2, 0, GG_LEDGER_DEVICE, "c", 30, 1000, 0, 0);
    expect_next("a-");
    expect_next("c+");
    finish(a, b, c);
}

/* A measure of free memory that gives 100, then 25 (too little beside the others), then 100. */
static int64_t falling_then_free(void *ctx)
{
    int *calls = ctx;
    return (*calls)++ == 1 ? 25 : 100;
}

Test(ledger, an_admission_that_finds_too_little_waits_to_run_alone)
{
    start(2, 0);
    pid_t a = holder(0, "a", 20, 300, 0);
    expect_next("a+");
    pid_t b = fork();
    if (b == 0) {
        gg_ledger_join(1, -1);
        int calls = 0;
        int64_t have = gg_ledger_admit(GG_LEDGER_HOST, 30, falling_then_free, &calls);
        say(have == 100 && calls == 3 ? "b+" : "bad");
        gg_ledger_release();
        _exit(0);
    }
    expect_next("a-");
    expect_next("b+");
    finish(a, b, 0);
}

static int64_t unmeasurable(void *ctx)
{
    (void)ctx;
    return -1;
}

Test(ledger, without_a_ledger_nothing_waits)
{
    int calls = 0;
    cr_expect_eq(gg_ledger_admit(GG_LEDGER_HOST, INT64_MAX, falling_then_free, &calls), 100);
    cr_expect_eq(calls, 1);
    cr_expect_eq(gg_ledger_admit(GG_LEDGER_DEVICE, 1, unmeasurable, NULL), -1);
    cr_expect_not(gg_ledger_active());
    cr_expect_eq(gg_ledger_take(GG_LEDGER_HOST, INT64_MAX, 1), 0);
    gg_ledger_alone(GG_LEDGER_HOST);
    gg_ledger_release();
    char err[256];
    cr_expect_eq(gg_ledger_open(0, 0, err, sizeof err), GG_E_INVAL);
    cr_expect(strstr(err, "1 to"), "%s", err);
}

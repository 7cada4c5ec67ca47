/*
 * gg_faultnote.c — says where a kernel's fault hit. The process that runs kernels (a campaign
 * worker, the child of an isolated run) watches the operand buffers of the case in flight: their
 * mappings, with the inaccessible pages around and between the data. A SIGSEGV or SIGBUS handler,
 * on its own stack, classifies the fault address while a kernel runs (past the end of A, before
 * the start of B, an unused row of C, ...) and writes a note on the process's reply channel; the
 * process then dies on the signal as it would have, and the supervisor turns the note into the
 * crash verdict's detail and signature region.
 *
 * The state lives in one static record per process, written only outside the handler while no
 * kernel runs, and read by the handler with nothing but loads: a signal handler has no other way
 * to learn what the process was doing.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "fuzz/run/run_int.h"
#include "fuzz/run/run_int.h"

#define WATCH_MAX 3             /* A, B and C */
#define ALT_STACK_BYTES (64 * 1024)

static struct {
    int fd;                     /* the reply channel, -1 when not installed */
    volatile sig_atomic_t running;
    struct watch {
        uintptr_t map_lo, map_hi, data_lo, data_hi;
    } w[WATCH_MAX];
    int n[WATCH_MAX];           /* 1 when w[i] holds operand i's buffer */
} state = {.fd = -1};

/* The handler's own stack: a stack is 16-byte aligned (the ABI's rule; ASan checks it). */
static _Alignas(16) unsigned char alt_stack[ALT_STACK_BYTES];

/* 1 for a write, 0 for a read, -1 when the platform does not say. */
static int access_kind(const void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ctx;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0; /* page-fault error code: W/R */
#else
    (void)ctx;
    return -1;
#endif
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    /* A signal sent by a process (raise, kill) has no fault address. */
    for (int i = 0; state.running && state.fd >= 0 && si->si_code > 0 && i < WATCH_MAX; i++) {
        const struct watch *w = &state.w[i];
        if (!state.n[i] || a < w->map_lo || a >= w->map_hi)
            continue;
        struct gg_wire_fault f = {
            .magic = GG_WIRE_FAULT_MAGIC,
            .size = sizeof f,
            .where = a >= w->data_hi   ? GG_FAULT_PAST_END
                     : a < w->data_lo  ? GG_FAULT_BEFORE_START
                                       : GG_FAULT_UNUSED,
            .operand = i,
            .write = access_kind(ctx),
        };
        ssize_t done = write(state.fd, &f, sizeof f);
        (void)done;
        break;
    }
    /* SA_RESETHAND restored the default action: the signal, pending until the handler returns,
       ends the process as it would have without the handler. */
    raise(sig);
}

void gg_faultnote_install(int fd)
{
    state.fd = fd;
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

void gg_faultnote_watch(int operand, const struct gg_hostbuf *b)
{
    if (operand < 0 || operand >= WATCH_MAX)
        return;
    state.n[operand] = b->map != NULL;
    state.w[operand] = (struct watch){(uintptr_t)b->map, (uintptr_t)(b->map + b->map_len),
                                      (uintptr_t)b->data, (uintptr_t)(b->data + b->bytes)};
}

void gg_faultnote_clear(void)
{
    memset(state.n, 0, sizeof state.n);
}

void gg_faultnote_kernel(int running)
{
    state.running = running;
}

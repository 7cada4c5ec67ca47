/*
 * gg_run.h — public header of fuzz/run/: the kernel registry and plugins, the probe that asks a
 * kernel's supports() for a supervisor, host buffers with guard pages and canary bands, the
 * buffers of one run, running one case against the reference with every oracle (in this process,
 * in a forked child, or in a worker process fed over the wire protocol), timing a kernel, the
 * devices a run is spread over and the memory ledger of runs side by side: one section per
 * responsibility, each naming its files. What only fuzz/run uses is declared in run_int.h.
 */
#ifndef GG_RUN_H
#define GG_RUN_H

#include "fuzz/case/gg_case.h"
#include "fuzz/run/device/gg_device.h" /* struct gg_range */
#include "reference/gg_gen_core.h"

/* ------------------------------------------------------------------------------------------ */
/* Kernel registry (gg_registry.c): filled once at start-up, read afterwards                   */
/* ------------------------------------------------------------------------------------------ */

/* Adds the in-tree kernels once; later calls do nothing. */
void gg_registry_init(void);
/* Validates and adds a kernel (ABI version, required slots, unique name). */
enum gg_status gg_registry_add(const struct gg_kernel *k, char *err, size_t err_len);
size_t gg_registry_count(void);
const struct gg_kernel *gg_registry_at(size_t i);
const struct gg_kernel *gg_registry_find(const char *name);

/* ------------------------------------------------------------------------------------------ */
/* Plugins (gg_plugin.c)                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * Loads a kernel plugin (the contract at the end of gg_kernel.h) after the in-tree kernels: all
 * of its kernels are registered or none. The ABI version is checked before any plugin code is
 * called; each descriptor is validated by gg_registry_add(). A refused plugin is closed again;
 * an accepted one stays loaded until the process exits (the registry points into it), and
 * loading it again does nothing. The plugin is first loaded in a forked child with a time limit
 * (GGFUZZ_PLUGIN_TIMEOUT seconds, default 10, 0: none), so a plugin whose initialisers or
 * register function crash, exit or hang is refused without harm to this process. Returns GG_OK,
 * or a status and "PATH: problem" in err: GG_E_IO when it cannot be opened, GG_E_ABI for a
 * missing symbol, an ABI mismatch, a refused descriptor, no kernel at all, or a trial that died
 * on a signal, exited or ran past the limit ("PATH: gg_plugin_register died on signal 11
 * (Segmentation fault)"), GG_E_INVAL for a malformed GGFUZZ_PLUGIN_TIMEOUT, or the status the
 * plugin's register function returned.
 */
enum gg_status gg_plugin_load(const char *path, char *err, size_t err_len);
/* The plugins loaded so far, each once, by absolute path (i < gg_plugin_count()). */
size_t gg_plugin_count(void);
const char *gg_plugin_path(size_t i);
/* Loads each path of a colon-separated list (GGFUZZ_PLUGINS) in order, skipping empty entries;
   stops at the first refusal. */
enum gg_status gg_plugin_load_list(const char *paths, char *err, size_t err_len);
/*
 * Python plugins: a path ending in ".py" (gg_plugin_is_script) is handed to the script loader
 * the host process installed, which imports the file and calls host->add_kernel once per kernel
 * as gg_plugin_register does (same checks, all or nothing, "PATH: problem" messages), and
 * returns GG_OK or a status with a message in err. The import and registration first run in a
 * trial child as a shared object's code does, with the same limit and refusals ("PATH: the
 * import (its module code) died on signal 11 (Segmentation fault)"). Without a loader such a
 * path is refused with GG_E_ABI. The descriptors must stay valid until the process exits.
 */
typedef enum gg_status (*gg_plugin_script_fn)(const char *path, const struct gg_plugin_host *host,
                                              char *err, size_t err_len);
void gg_plugin_set_script_loader(gg_plugin_script_fn fn); /* NULL: none */
int gg_plugin_has_script_loader(void);
int gg_plugin_is_script(const char *path);

/* ------------------------------------------------------------------------------------------ */
/* A kernel's supports() and workspace_bytes() in a co-process (gg_probe.c)                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * For a process that never runs kernel code itself (the campaign supervisor): a probe is a
 * process forked from it on the first question, which answers questions about kernel k until
 * closed, one round trip each. A probe that dies or does not answer within limit_s seconds (0:
 * no limit; limit_name, e.g. "--timeout", names what sets it in messages) is killed; the next
 * question starts a fresh one. Owned by the caller: gg_probe_close() ends the probe and frees it.
 */
struct gg_probe;
enum gg_status gg_probe_open(const struct gg_kernel *k, double limit_s, const char *limit_name,
                             struct gg_probe **pr);
void gg_probe_close(struct gg_probe *pr); /* NULL: nothing */

enum gg_probe_answer { GG_PROBE_NO = 0, GG_PROBE_YES = 1, GG_PROBE_DIED = -1 };
/*
 * k->supports(p) in the probe: GG_PROBE_YES, or GG_PROBE_NO with the kernel's reason in why;
 * with ws not NULL and a yes, *ws = k->workspace_bytes(p) (0 when k has none). GG_PROBE_DIED
 * when the probe could not answer, with why naming the kernel, the function and how its process
 * ended ("kernel K, asked in a probe process: supports() died on signal 11 (Segmentation
 * fault)", "...: supports() did not return within 10 s (--timeout)"); the death is also counted
 * (gg_probe_deaths).
 */
int gg_probe_ask(struct gg_probe *pr, const struct gg_problem *p, size_t *ws, char *why,
                 size_t why_len);
/* Probe deaths so far; *last (when not NULL) is the message of the last one ("" before one),
   valid until the next question. */
int64_t gg_probe_deaths(const struct gg_probe *pr, const char **last);

/* ------------------------------------------------------------------------------------------ */
/* Host buffers with guard pages and canary bands (gg_hostbuf.c)                                */
/* ------------------------------------------------------------------------------------------ */

/* Layout: [PROT_NONE page][canary band][data ... ][canary band][PROT_NONE page]. The data is
   reserved (MAP_NORESERVE) and not touched: pages a case never writes cost no memory. */

struct gg_hostbuf {
    uint8_t *map;   /* whole mapping */
    size_t map_len;
    uint8_t *data;  /* bytes usable bytes */
    size_t bytes;
    uint8_t *pre, *post; /* canary bands, pre_len and post_len bytes */
    size_t pre_len, post_len;
    int owns;       /* 1: gg_hostbuf_free() unmaps (or gives the mapping back to its pool) */
    int sealed;     /* some data pages were protected: never reused from a pool */
    int flush;      /* laid out by gg_hostbuf_alloc_flush (pooled apart from band buffers) */
};

/*
 * A pool of small guarded mappings, reused from case to case so that a tiny case costs no
 * mmap, page faults or munmap (whose TLB shootdowns dominate a tiny case otherwise). Taken
 * buffers look exactly like fresh ones: data zeroed, both canary bands written anew. Mappings
 * with data past GG_HOSTPOOL_MAX_BYTES or with sealed pages are unmapped instead. Owned by one
 * thread (a worker process has one); zero-initialise, release with gg_hostpool_drain().
 */
#define GG_HOSTPOOL_SLOTS 16
#define GG_HOSTPOOL_MAX_BYTES ((size_t)1 << 20)
struct gg_hostpool {
    struct gg_hostbuf slot[GG_HOSTPOOL_SLOTS];
    int n;
};
void gg_hostpool_drain(struct gg_hostpool *pool);

/* A guarded buffer of bytes bytes, taken from pool when one fits (pool may be NULL). */
enum gg_status gg_hostbuf_alloc(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                char *err, size_t err_len);
/* Alignment of the first byte of a buffer placed flush against a guard page: a buffer of bytes
   bytes placed at the end leaves (-bytes mod GG_GUARD_ALIGN) bytes of canary before the page,
   the longest over-read that goes unseen. */
#define GG_GUARD_ALIGN 64
/* A buffer whose data ends (at_end) at, or starts right after, an inaccessible page, with no
   canary band between: the first byte past the end (or before the start) faults. On the other
   side the rest of the data's pages is slack, then another inaccessible page. Taken from pool
   when one of its flush mappings has room (pool may be NULL); a pooled slack is not rewritten. */
enum gg_status gg_hostbuf_alloc_flush(struct gg_hostpool *pool, struct gg_hostbuf *b, size_t bytes,
                                      int at_end, char *err, size_t err_len);
/* 0 when both canary bands are intact; else 1 and *pre = 1 if the band before was hit. */
int gg_hostbuf_guard_hit(const struct gg_hostbuf *b, int *pre);
/* Gives b back to pool (when it qualifies and there is room) or unmaps it. */
void gg_hostbuf_free(struct gg_hostpool *pool, struct gg_hostbuf *b);

/* ------------------------------------------------------------------------------------------ */
/* The buffers of one run (gg_materialise.c, gg_hostgen.c, gg_output.c)                        */
/* ------------------------------------------------------------------------------------------ */

/* Everything one run of a case needs, owned here and freed by gg_tensors_free(). */
struct gg_tensors {
    struct gg_problem p;              /* checked, defaults filled; points into the case and opts */
    struct gg_kopt opts[GG_CASE_MAX_OPTS];
    struct gg_hostbuf a, b, c, a_scale, b_scale, bias, ws;
    /* Byte ranges of A, B and C (page-rounded, relative to their data) that hold generated rows
       (C: the rows a kernel writes); the pages between them are read-only zeros that no
       correct kernel reads (C: pages no access may touch). */
    struct gg_range *live[3];
    size_t n_live[3];
    int64_t *lens_dev, *offs_dev;     /* the "device" copies of the group arrays */
    int32_t *sorted, *experts;        /* moe routing (the problem points here) */
    int32_t *sorted_dev, *experts_dev; /* and the kernel's copies */
    struct gg_operands ops;           /* pointers into the buffers above, offsets applied */
    size_t c_bytes;                   /* bytes of C's span */
    /* Unquantised source operands (f32, packed, same geometry) when the inputs are quantised. */
    struct gg_problem src_p;
    struct gg_operands src_ops;
    int has_source;                   /* src_p is set: the run has a source check */
    void *src_a, *src_b;              /* the data of src_buf[0] and src_buf[1] (host inputs) */
    struct gg_hostbuf src_buf[2];
    /* How A and B were generated: the device path regenerates them from these (gg_devrun.c). */
    struct gg_gen_plan gen[2];
    struct gg_hostpool *pool; /* (optional, not owned) buffers come from and go back here */
    enum gg_guard guard;      /* the case's placement of A and B */
    /* Set before gg_tensors_make() (and before the estimate) when only a device target reads A
       and B (timing, or a device reference): they are planned but left unfilled on the host
       (so are the scales and the source), and the device generates them. */
    int inputs_on_device;
};

/* Builds the problem of case c in t, defaults filled and geometry checked, without the moe
   routing: nothing is allocated, so the memory estimate and admission come first. Free t with
   gg_tensors_free() whatever the result. */
enum gg_status gg_tensors_shape(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len);
/* After gg_tensors_shape(): builds the moe routing (other ops have none) and checks the whole
   problem. The routing costs what gg_tensors_estimate() counts for it. */
enum gg_status gg_tensors_route(const struct gg_case *c, struct gg_tensors *t, char *err,
                                size_t err_len);
/* gg_tensors_shape(), then gg_tensors_route(): the problem a kernel's supports() sees. */
enum gg_status gg_tensors_plan(const struct gg_case *c, struct gg_tensors *t, char *err,
                               size_t err_len);
/* After gg_tensors_plan() (and setting t->pool, if any): allocates the guarded buffers and
   fills the inputs of every group that holds tokens. */
enum gg_status gg_tensors_make(const struct gg_case *c, size_t workspace_bytes,
                               struct gg_tensors *t, char *err, size_t err_len);
/* Hash of everything the kernel may only read: the live ranges of A and B, the scales and the
   group arrays. Reads no page that was never written, so it stays cheap on huge sparse inputs. */
struct gg_hash gg_tensors_hash_inputs(const struct gg_tensors *t);
/* Pre-fills the live part of C with the NaN sentinel and the workspace with the poison byte. */
void gg_tensors_poison(struct gg_tensors *t, uint8_t ws_poison);
void gg_tensors_free(struct gg_tensors *t);
/* Host bytes a run of the problem touches (operands, copies, routing, reference), after
   gg_tensors_shape() alone; saturates at GG_SIZE_MAX. */
int64_t gg_tensors_estimate(const struct gg_tensors *t);

/* ------------------------------------------------------------------------------------------ */
/* Running a case in this process (gg_runner.c)                                                */
/* ------------------------------------------------------------------------------------------ */

struct gg_run_view;
/* Shown a run's inputs, reference and output (gg_run_opts.observe): GG_OK, or a status with a
   message in err, which becomes the run's (the case is then not run further). */
typedef enum gg_status (*gg_run_observe_fn)(void *ctx, const struct gg_run_view *v, char *err,
                                            size_t err_len);

/* Where a run's reference is computed (--reference): auto is the device for a kernel that runs
   on a GPU (in a build with GPU support, unless an observer needs the inputs on the host), the
   host otherwise; host and device choose explicitly (device refuses a CPU kernel). */
enum gg_reference_where { GG_REFERENCE_AUTO = 0, GG_REFERENCE_HOST, GG_REFERENCE_DEVICE };
/* "auto", "host", "device" and back (-1 when unknown). */
const char *gg_reference_where_name(enum gg_reference_where w);
int gg_reference_where_parse(const char *s);

struct gg_run_opts {
    int64_t max_mem_bytes;  /* refuse cases whose estimate exceeds this; 0: available memory */
    int64_t certify_samples; /* MPFR-certified reference samples per case (0: none) */
    enum gg_reference_where reference; /* where the reference is computed */
    const char *kernel;     /* override the case's kernel (NULL: keep) */
    const char *mutant;     /* override the case's mutant or mutant list (NULL: keep; "none":
                               the correct kernel) */
    struct gg_hostpool *pool; /* (optional) host buffers are reused from here; this process only */
    /* (optional) Called in the process that runs the case, with observe_ctx: once the inputs
       and the reference exist, before the kernel runs (done 0), and once more when the run has
       ended (done 1), unless the process died first. Not carried to campaign workers. */
    gg_run_observe_fn observe;
    void *observe_ctx;
};

/* Bytes a case needs on the host (operands, guards, reference), touched memory only. */
int64_t gg_case_mem_estimate(const struct gg_case *c);

struct gg_run_result {
    char kernel[GG_CASE_NAME_MAX]; /* the kernel and mutant that ran (after overrides) */
    char mutant[GG_CASE_NAME_MAX];
    struct gg_verdict verdict;
    struct gg_compare cmp;   /* owned; freed by gg_run_result_free() */
    int compared;            /* cmp is valid */
    int64_t mem_bytes;       /* estimate used for the admission check */
    int device_reference;    /* 1: the reference was computed on the device, 0: on the host */
    int64_t certified;       /* outputs whose reference value MPFR certified (--certify) */
    double kernel_seconds;   /* wall time of the first kernel run */
    double total_seconds;
    /* Where the run's time went, in seconds: setup (admission, host buffers and guards, host
       inputs), alloc (a GPU kernel's device buffers and guard bands), inputs (its inputs
       generated or uploaded there), runs (the kernel's runs with the input hashes, guards and
       the output brought back), reference, compare (the output against the reference), release
       (everything freed). A reference on the device is compared a chunk at a time on a thread
       while the next chunk is computed, so reference and compare overlap. */
    struct {
        double setup, alloc, inputs, runs, reference, compare, release;
    } phase;
};
void gg_run_result_free(struct gg_run_result *r);

/* What an observer of a run sees. Everything is the run's and valid during the call only. */
struct gg_run_view {
    const struct gg_case *kase;   /* the case as run (kernel and mutant overrides applied) */
    const struct gg_tensors *t;   /* the problem and its materialised host inputs */
    const double *ref, *abs;      /* the reference and Σ|ab| (reference order, gg_ref_gemm) */
    int done;                     /* 0: the kernel is about to run; 1: the run has ended */
    int inputs_only;              /* 1: gg_run_inputs(), no kernel (result has no verdict) */
    /* done: the run's status and message (GG_OK: result holds the verdict) and the result */
    enum gg_status status;
    const char *error;
    const struct gg_run_result *result;
    const void *out;              /* done: the first run's output, laid out like C; or NULL */
    const char *no_out;           /* why out is NULL */
};

/*
 * Runs one case in this process: checks the kernel supports it, estimates memory, materialises
 * inputs with guard bands and poison, runs the kernel (twice with different workspace poisons,
 * three times when the outputs differ), computes the reference and applies every oracle.
 * Returns GG_OK with a verdict (which may be a fault), or a status and message for a case that
 * could not be run (unknown kernel, unsupported problem, out of memory).
 */
enum gg_status gg_run_case(const struct gg_case *c, const struct gg_run_opts *o,
                           struct gg_run_result *r, char *err, size_t err_len);

/*
 * The inputs of case c and their reference without any kernel: materialises them as
 * gg_run_case() does (the memory admission included; the case's kernel is not looked up) and
 * shows them to o->observe once, done 1, without output. GG_OK, or a status and message.
 */
enum gg_status gg_run_inputs(const struct gg_case *c, const struct gg_run_opts *o, char *err,
                             size_t err_len);

/* The reference of a case alone (gg_run_reference). */
struct gg_reference_run {
    double *ref, *abs, *src;    /* gg_problem_out_elems(&t.p) doubles each, reference order; src
                                   NULL without an unquantised source */
    int64_t n;
    int device;                 /* 1: computed on the device */
    double seconds;             /* the reference alone (the inputs' generation not counted) */
    struct gg_tensors t;        /* owned; t.p is the problem as it ran (defaults filled) */
    struct gg_case kase;        /* owned: the case as run, which t.p points into */
};
/*
 * The reference of case c without running its kernel: admitted and materialised as for
 * gg_run_case() (the kernel of c or o->kernel is looked up: where it runs decides where
 * o->reference auto puts the reference), then computed on the host (gg_ref_gemm) or on the device
 * (inputs generated there, gg_device_reference), certified on o->certify_samples outputs. For
 * benchmarks and the cross-check of the two references. Free r with gg_reference_run_free()
 * whatever the result.
 */
enum gg_status gg_run_reference(const struct gg_case *c, const struct gg_run_opts *o,
                                struct gg_reference_run *r, char *err, size_t err_len);
void gg_reference_run_free(struct gg_reference_run *r);

/* ------------------------------------------------------------------------------------------ */
/* Timing a kernel on a case (gg_bench.c)                                                      */
/* ------------------------------------------------------------------------------------------ */

/* The timing of a kernel on one case (gg_bench.c). */
#define GG_BENCH_MAX_REPS 1000
struct gg_bench_result {
    char kernel[GG_CASE_NAME_MAX]; /* the kernel and mutant that ran (after overrides) */
    char mutant[GG_CASE_NAME_MAX];
    enum gg_op op;                 /* the problem as it ran (defaults filled) */
    int64_t groups, m, n, k;
    double flops;                  /* gg_problem_flops() of the case */
    double median_ms, min_ms, max_ms; /* over the timed runs */
    int reps;                      /* timed runs */
    int device;                    /* 1: device time between events on the harness's stream;
                                      0: wall time of run() (a CPU kernel) */
};
/*
 * Times kernel runs on case c: the admission and supports() of gg_run_case() (o's overrides
 * and memory limit), the inputs made as for a run (for a GPU kernel generated on the device
 * only, never on the host), then warmup untimed runs and reps timed ones (1..GG_BENCH_MAX_REPS),
 * each waited for. No oracle judges the output: timing is not verification. A failed run() or a
 * device error ends it with the kernel's message.
 */
enum gg_status gg_bench_case(const struct gg_case *c, const struct gg_run_opts *o, int warmup,
                             int reps, struct gg_bench_result *r, char *err, size_t err_len);

/* ------------------------------------------------------------------------------------------ */
/* Worker processes and their wire protocol (gg_worker.c, gg_faultnote.c)                      */
/* ------------------------------------------------------------------------------------------ */

/* The loop of `ggfuzz worker`: announces itself on out_fd, then reads case requests from in_fd
   and answers each with the outcome of gg_run_case(), until end of file (GG_OK) or a broken
   pipe (GG_E_IO). */
enum gg_status gg_worker_main(int in_fd, int out_fd, char *err, size_t err_len);

/* How a worker process is started (gg_workerproc.c): exe, then words 1..n_cmd-1 of cmd (the
   rest of a command that starts ggfuzz, such as a Python host's `python -m ggfuzz`; cmd may be
   NULL), `--plugin P` for each plugin, and `worker`. */
struct gg_worker_launch {
    const char *exe;
    const char *const *cmd;
    int n_cmd;
    const char *const *plugins;
    int n_plugins;
    int gpu; /* the device ordinal it is bound to (gg_gpus_env; -1: this process's view) */
};
/* Waits for worker process pid, which has closed its end or is told to end: killed at once when
   kill_first, else given a moment to exit before it is. Returns the signal it died on of its
   own; -1 when it exited, or had to be killed because it did not; 0 when kill_first. */
int gg_worker_reap(int pid, int kill_first);
/* Seconds a worker process may take to announce itself before it counts as failed to start. */
#define GG_WORKER_START_LIMIT_S 30.0
/* Starts one in its own process group, with OPENBLAS_NUM_THREADS=1 unless the environment sets
   it, its standard input and output one end of a socket pair: 0 with *pid and *fd (the other
   end, close-on-exec), or -1 with a message. It announces itself (struct gg_wire_hello) once it
   is ready for requests. */
int gg_worker_launch(const struct gg_worker_launch *l, int *pid, int *fd, char *err,
                     size_t err_len);

/* One worker process that runs cases one after another for a caller that waits for each
   (gg_workerproc_run); started at the first run, and again at the run after one that ended it. */
struct gg_workerproc {
    struct gg_worker_launch how; /* its strings must outlive the process */
    int pid, fd;                 /* 0 and -1 while none runs */
    int starts;                  /* processes started so far */
    int start_failed;            /* the last run's GG_E_IO: no process could be started */
};
void gg_workerproc_init(struct gg_workerproc *p, const struct gg_worker_launch *how);
/*
 * gg_run_case_isolated() in the worker process: the same verdicts for a run that crashes (the
 * process died on a signal), exits or runs past timeout_s (<= 0: no limit; the process is
 * killed), and GG_E_IO for a process killed from outside or one that cannot be started. Unlike
 * a forked child, the process ran the caller's earlier cases: a kernel that keeps state between
 * calls may fail here only because of them (a caller that needs a case's own verdict runs it
 * in a fresh process too). o's observer is not carried.
 */
enum gg_status gg_workerproc_run(struct gg_workerproc *p, const struct gg_case *c,
                                 const struct gg_run_opts *o, double timeout_s,
                                 struct gg_run_result *r, char *err, size_t err_len);
/* Ends the process (if any). */
void gg_workerproc_close(struct gg_workerproc *p);

/*
 * A request carries the text of a case and its run options to a worker, a reply the outcome of
 * its run (their records, and the worker's side of the protocol, are run_int.h's). Both ends are
 * the same build of ggfuzz: magic and size catch a mismatch.
 */
#define GG_WIRE_MAGIC 0x67677731u /* "ggw1" */

/* What a process running a case sends, from its signal handler, when the kernel faulted on a
   guard page of an operand (gg_faultnote.c): it dies on the signal right after. */
struct gg_wire_fault {
    uint32_t magic;
    uint32_t size;            /* sizeof(struct gg_wire_fault) */
    int32_t where;            /* enum gg_fault_where */
    int32_t operand;          /* 0 A, 1 B, 2 C */
    int32_t write;            /* 1 write, 0 read, -1 not known */
};

/* What a worker sends once it is ready; the supervisor feeds it only after this. */
struct gg_wire_hello {
    uint32_t magic;
    uint32_t pid;
};

double gg_wire_now(void);
/* Writes all n bytes (sockets without SIGPIPE); 0 or -1. */
int gg_wire_write(int fd, const void *buf, size_t n);
/* Reads n bytes: 0 done, 1 the deadline (monotonic seconds, 0: none) passed, -1 end of file or
   error. */
int gg_wire_read(int fd, void *buf, size_t n, double deadline);

/* Sends case text (len bytes, gg_case_format) with the memory and certification options of o
   (may be NULL). */
int gg_wire_send_case(int fd, const char *text, size_t len, const struct gg_run_opts *o);
/* Receives the outcome of one run (gg_wire_send_result, run_int.h): 0 with *st, err and r
   filled (r owns its groups), 1 deadline, -1 end of file or a broken reply, 2 a fault note
   instead (*fault filled; the process is dying on the signal; fault may be NULL, which reads a
   note as a broken reply). r is left zeroed unless 0 is returned. */
int gg_wire_recv_result(int fd, double deadline, enum gg_status *st, char *err, size_t err_len,
                        struct gg_run_result *r, struct gg_wire_fault *fault);

/* ------------------------------------------------------------------------------------------ */
/* Running a case in a child process (gg_isolate.c; gg_worker.c)                               */
/* ------------------------------------------------------------------------------------------ */

/* A time limit of a configuration whose 0 takes a default (gg_campaign_config, gg_min_opts):
   none at all. The isolated runs below take any limit <= 0 as none. */
#define GG_NO_LIMIT (-1.0)

/*
 * gg_run_case() in a child process (gg_isolate.c): a kernel that kills its process gives a
 * `crash` verdict, one that runs past timeout_s (<= 0: no limit) is killed and gives `timeout`;
 * the caller goes on either way. A child killed from outside (SIGKILL this function did not
 * send: kill -9, the OOM killer) gives GG_E_IO and a message saying so, not a verdict. Forks
 * without exec: for CPU kernels.
 */
enum gg_status gg_run_case_isolated(const struct gg_case *c, const struct gg_run_opts *o,
                                    double timeout_s, struct gg_run_result *r, char *err,
                                    size_t err_len);
/*
 * The same for a case that must follow others in one process (a history-dependent finding):
 * the child runs prior[0..n_prior-1] in order, their verdicts discarded and each within
 * timeout_s, then c, whose verdict is the result. A death or hang before c is GG_E_IO with a
 * message saying so (c did not run). n_prior 0 is gg_run_case_isolated().
 */
enum gg_status gg_run_sequence_isolated(const struct gg_case *prior, int n_prior,
                                        const struct gg_case *c, const struct gg_run_opts *o,
                                        double timeout_s, struct gg_run_result *r, char *err,
                                        size_t err_len);
/* Runs prior[0..n_prior-1] in order in this process, their verdicts discarded and no observer
   called: the cases a history-dependent case follows. */
void gg_run_prior(const struct gg_case *prior, int n_prior, const struct gg_run_opts *o);

/*
 * The verdict of a run that ended without a result: signo > 0 the process died on that signal,
 * -1 it exited without a report, 0 with timeout_s > 0 it ran past that limit and was killed.
 * fault (may be NULL) is the note of where the fault hit. o's kernel and mutant overrides apply
 * as in gg_run_case().
 */
enum gg_status gg_run_ended_early(const struct gg_case *c, const struct gg_run_opts *o, int signo,
                                  double timeout_s, const struct gg_wire_fault *fault,
                                  struct gg_run_result *r, char *err, size_t err_len);

/*
 * SIGKILL is not a signal a kernel raises as a bug: a process running a case that ends on it,
 * when its parent did not send it, was killed from outside (kill -9, the OOM killer). Returns 1
 * and says so in msg, to follow "... was" ("killed by signal 9 (Killed) from outside ggfuzz (out
 * of memory?)"), else 0 with msg untouched.
 */
int gg_killed_from_outside(int signo, char *msg, size_t msg_len);

/* ------------------------------------------------------------------------------------------ */
/* The devices of a run (gg_gpus.c): --gpus, and binding a process to one device                */
/* ------------------------------------------------------------------------------------------ */

#define GG_GPUS_MAX 64

/* Device ordinals to spread work over, as the parent process sees them (n 0: none named). */
struct gg_gpus {
    int n;
    int id[GG_GPUS_MAX];
};

/*
 * Parses --gpus: "all" (every visible device; none is GG_E_DEVICE), "auto" (every visible device,
 * or none: then note says the run goes on unbound) or a list "0,2,4-7" (repeats refused; checked
 * against the visible count; with no device visible the list is kept and note says it only
 * labels the processes, which lets a host-only machine run the same command). The count is
 * asked in a child process (gg_device_count), so the caller never touches a device. GG_OK, or
 * GG_E_INVAL / GG_E_DEVICE with the message.
 */
enum gg_status gg_gpus_parse(const char *spec, struct gg_gpus *g, char *note, size_t note_len,
                             char *err, size_t err_len);
/* "0,1,3": the ordinals of g. */
void gg_gpus_format(const struct gg_gpus *g, char *buf, size_t len);
/* The two environment entries ("VAR=value") that bind a child to ordinal: the runtime's
   visibility variable naming that device alone (the ordinal-th entry of this process's own list
   when it has one) and GGFUZZ_DEVICE=ordinal. */
void gg_gpus_env(int ordinal, char *visible, size_t visible_len, char *device, size_t device_len);
/* Binds this process to ordinal through the same two variables (setenv). Call it before the
   process, or any library in it, has touched a device. 0, or -1 when setenv failed. */
int gg_gpus_bind(int ordinal);

/* ------------------------------------------------------------------------------------------ */
/* The memory ledger of processes that run cases side by side (gg_ledger.c)                     */
/* ------------------------------------------------------------------------------------------ */

/* What a case holds while it runs: host memory, and device memory of its runner's device. */
enum gg_ledger_kind { GG_LEDGER_HOST, GG_LEDGER_DEVICE, GG_LEDGER_KINDS };

/* Opens the ledger of slots runner processes (call it before forking them; they inherit it):
   host_limit is the node's host memory for cases (0: measured by the first case that finds the
   node to itself). GG_OK, or a status with the message. */
enum gg_status gg_ledger_open(int slots, int64_t host_limit, char *err, size_t err_len);
/* Unmaps the ledger (the process that opened it, after its runners ended). */
void gg_ledger_close(void);
/* Makes this process (a runner, and the case processes it forks) slot's holder, on device (-1:
   none); what the slot held is dropped. */
void gg_ledger_join(int slot, int device);
/* Whether this process holds a slot of a ledger (else the calls below do nothing). */
int gg_ledger_active(void);
/* Holds bytes of kind for this slot once they fit beside what the other slots hold (device:
   those of the same device), in the pool's limit (measured, when the pool has none yet and no
   other slot holds any, becomes it); waits for the others to end until then. Returns what the
   others held when it was taken (0: the case is alone). */
int64_t gg_ledger_take(enum gg_ledger_kind kind, int64_t bytes, int64_t measured);
/* For a case that does not fit beside the running ones after all: keeps what this slot holds of
   kind, admits no other case beside it, and returns when the others have ended. */
void gg_ledger_alone(enum gg_ledger_kind kind);
/* Drops what this slot holds (the case ended, however it ended). */
void gg_ledger_release(void);
/* An admission of need bytes of kind: measure(ctx) gives the memory free for the case now (< 0:
   it could not be measured, and is returned at once). Without a ledger, that measure. With
   one, the case first holds need once it fits beside the others (gg_ledger_take), and, when the
   memory measured then is less than need while others hold some, waits to run alone
   (gg_ledger_alone); returns the memory measured last, for the caller's own check. */
int64_t gg_ledger_admit(enum gg_ledger_kind kind, int64_t need, int64_t (*measure)(void *ctx),
                        void *ctx);

#endif /* GG_RUN_H */

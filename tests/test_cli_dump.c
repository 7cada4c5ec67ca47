/*
 * test_cli_dump.c — `ggfuzz run --dump DIR`: a seed's dump holds its inputs, group arrays,
 * reference and output as .npy files (NumPy format 1.0 headers, dense data) with an index.json
 * that names each file's dtype, descr, shape and the strides the kernel saw; a mutant's index
 * has its verdict, failing groups and each one's first failing element; a crashing kernel
 * leaves its inputs and reference and an index that says why C is missing; --no-kernel writes
 * the inputs and reference alone; several cases get a subdirectory each, inside DIR whatever
 * the case files are called; E2M1 data is stored
 * packed and the weights of empty experts as holes of the file; a file that cannot be written
 * is an error naming it and errno's own reason (exit code 3) and the dump's other files are
 * removed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "cli_fixture.h"
#include "fuzz/case/gg_case.h"
#include "fuzz/cli/gg_cli.h"

#define SEEDS GG_SOURCE_DIR "/corpus/seeds"
#define MUTANTS GG_SOURCE_DIR "/corpus/mutants"

static char out[1 << 16];
static char dir[256];

static void fresh_dir(void)
{
    cli_temp_dir(dir, sizeof dir, "cli-dump");
}

static void remove_dir(void)
{
    cli_remove_dir(dir);
}

TestSuite(cli_dump, .init = fresh_dir, .fini = remove_dir);

/* Runs `ggfuzz run --dump DIR/sub args` with stdout and stderr in out; returns the exit code. */
static int dump(const char *sub, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' run --dump '%s%s' %s 2>&1", GGFUZZ_BIN, dir, sub, args);
    return cli_shell(cmd, out, sizeof out);
}

static json_t *load_index(const char *sub)
{
    char path[512];
    json_error_t e;
    snprintf(path, sizeof path, "%s%s/index.json", dir, sub);
    json_t *ix = json_load_file(path, 0, &e);
    cr_assert_not_null(ix, "%s: %s (line %d)", path, e.text, e.line);
    cr_assert_str_eq(json_string_value(json_object_get(ix, "format")), "ggfuzz-dump");
    return ix;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    cr_assert_not_null(s, "no string '%s'", key);
    return s;
}

static int exists(const char *sub, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s/%s", dir, sub, name);
    return access(path, F_OK) == 0;
}

/* An integer list of the index equals want[0..n). */
static void expect_ints(json_t *arr, const long long *want, size_t n, const char *what)
{
    cr_assert(json_is_array(arr), "%s is not a list", what);
    cr_assert_eq(json_array_size(arr), n, "%s: %zu entries", what, json_array_size(arr));
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(json_integer_value(json_array_get(arr, i)), want[i], "%s[%zu]", what, i);
}

/* The .npy file of array name: its header says descr and shape (text as NumPy writes it), the
   data starts at a multiple of 64 bytes and the file holds exactly data_bytes after it. */
static void expect_npy(const char *sub, const char *name, const char *descr, const char *shape,
                       long long data_bytes)
{
    char path[512], head[256] = "";
    snprintf(path, sizeof path, "%s%s/%s.npy", dir, sub, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    unsigned char pre[10];
    cr_assert_eq(fread(pre, 1, 10, f), 10);
    cr_expect(memcmp(pre, "\x93NUMPY\x01\x00", 8) == 0, "%s: not an .npy 1.0 file", path);
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    cr_assert_lt(hlen, sizeof head);
    cr_assert_eq(fread(head, 1, hlen, f), hlen);
    cr_expect_eq((10 + hlen) % 64, 0, "%s: data at %zu", path, 10 + hlen);
    cr_expect_eq(head[hlen - 1], '\n');
    char want[160];
    snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
             shape);
    cr_expect(strncmp(head, want, strlen(want)) == 0, "%s: header %s, want %s", path, head, want);
    fclose(f);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_expect_eq((long long)sb.st_size, (long long)(10 + hlen) + data_bytes, "%s: %lld bytes",
                 path, (long long)sb.st_size);
}

Test(cli_dump, seed_case_arrays_and_index)
{
    cr_assert_eq(dump("", SEEDS "/fwd_basic.case"), 0, "%s", out);
    cr_expect(strstr(out, "dump ") != NULL, "%s", out);
    /* fwd_basic: G=4 lens 64 130 1 77 (M 272), N 256, K 512, bf16 out */
    expect_npy("", "a", "<u2", "(272, 512)", 272LL * 512 * 2);
    expect_npy("", "b", "<u2", "(4, 256, 512)", 4LL * 256 * 512 * 2);
    expect_npy("", "group_lens", "<i8", "(4,)", 4 * 8);
    expect_npy("", "group_offs", "<i8", "(5,)", 5 * 8);
    expect_npy("", "ref", "<f8", "(272, 256)", 272LL * 256 * 8);
    expect_npy("", "bound", "<f8", "(272, 256)", 272LL * 256 * 8);
    expect_npy("", "c", "<u2", "(272, 256)", 272LL * 256 * 2);
    cr_expect(!exists("", "a_scale.npy") && !exists("", "bias.npy"));
    json_t *ix = load_index("");
    cr_expect_str_eq(str(ix, "state"), "done");
    cr_expect_str_eq(str(ix, "status"), "ok");
    json_t *arrays = json_object_get(ix, "arrays"), *a = json_object_get(arrays, "a");
    cr_expect_str_eq(str(a, "file"), "a.npy");
    cr_expect_str_eq(str(a, "dtype"), "bf16");
    cr_expect_str_eq(str(a, "descr"), "<u2");
    expect_ints(json_object_get(a, "shape"), (long long[]){272, 512}, 2, "a.shape");
    expect_ints(json_object_get(a, "strides"), (long long[]){512, 1}, 2, "a.strides");
    json_t *b = json_object_get(arrays, "b");
    expect_ints(json_object_get(b, "strides"), (long long[]){256 * 512, 512, 1}, 3, "b.strides");
    expect_ints(json_object_get(json_object_get(arrays, "group_lens"), "shape"), (long long[]){4},
                1, "group_lens.shape");
    cr_expect_str_eq(str(json_object_get(arrays, "ref"), "dtype"), "f64");
    json_t *c = json_object_get(arrays, "c");
    cr_expect_str_eq(str(c, "file"), "c.npy");
    cr_expect_str_eq(str(c, "sentinel"), "0x7fa5");
    json_t *p = json_object_get(ix, "problem");
    cr_expect_str_eq(str(p, "op"), "grouped_fwd");
    cr_expect_str_eq(str(p, "c_dtype"), "bf16");
    expect_ints(json_object_get(p, "group_lens"), (long long[]){64, 130, 1, 77}, 4, "group_lens");
    json_t *bound = json_object_get(ix, "bound");
    cr_expect_float_eq(json_real_value(json_object_get(bound, "rel")), 0x1p-8 / (1 - 0x1p-8),
                       1e-18);
    json_t *v = json_object_get(ix, "verdict");
    cr_expect_str_eq(str(v, "class"), "pass");
    cr_expect_eq(json_array_size(json_object_get(v, "failing_groups")), 0);
    cr_expect_eq(json_array_size(json_object_get(ix, "groups")), 4);
    cr_expect_eq(json_array_size(json_object_get(ix, "failures")), 0);
    json_decref(ix);
}

Test(cli_dump, mutant_failing_groups_and_elements)
{
    cr_assert_eq(dump("", MUTANTS "/zero_len_ptr_skip.case"), 19, "%s", out);
    json_t *ix = load_index("");
    json_t *v = json_object_get(ix, "verdict");
    cr_expect_str_eq(str(v, "class"), "snr");
    expect_ints(json_object_get(v, "failing_groups"), (long long[]){2, 3, 4}, 3,
                "failing_groups");
    /* groups 2, 3 and 4 computed with the weights of experts 1, 2 and 3: every one fails from
       its first element on, row offs[g] of the output */
    json_t *fails = json_object_get(ix, "failures");
    cr_assert_eq(json_array_size(fails), 3);
    const long long rows[] = {40, 110, 113};
    for (size_t i = 0; i < 3; i++) {
        json_t *f = json_array_get(fails, i);
        cr_expect_eq(json_integer_value(json_object_get(f, "group")), (long long)i + 2);
        cr_expect_eq(json_integer_value(json_object_get(f, "row")), 0);
        cr_expect_eq(json_integer_value(json_object_get(f, "col")), 0);
        expect_ints(json_object_get(f, "index"), (long long[]){rows[i], 0}, 2, "index");
        cr_expect_str_eq(str(f, "kind"), "bound");
        double o = json_real_value(json_object_get(f, "output"));
        double r = json_real_value(json_object_get(f, "reference"));
        double t = json_real_value(json_object_get(f, "bound"));
        cr_expect_gt(fabs(o - r), t, "group %zu: |%g - %g| <= %g", i + 2, o, r, t);
    }
    json_t *g3 = json_array_get(json_object_get(ix, "groups"), 3);
    cr_expect_eq(json_integer_value(json_object_get(g3, "past_bound")), 287);
    cr_expect_eq(json_integer_value(json_object_get(g3, "rows")), 3);
    cr_expect(json_is_object(json_object_get(g3, "worst")));
    json_decref(ix);
}

Test(cli_dump, crash_keeps_inputs_and_reference)
{
    cr_assert_eq(dump("", MUTANTS "/read_past_end.case"), 11, "%s", out);
    json_t *ix = load_index("");
    cr_expect_str_eq(str(ix, "state"), "ended");
    cr_expect_str_eq(str(json_object_get(ix, "verdict"), "class"), "crash");
    json_t *c = json_object_get(json_object_get(ix, "arrays"), "c");
    cr_expect(json_is_null(json_object_get(c, "file")));
    cr_expect(strstr(str(c, "missing"), "signal 11") != NULL, "%s", str(c, "missing"));
    cr_expect(exists("", "a.npy") && exists("", "b.npy") && exists("", "ref.npy") &&
              exists("", "bound.npy"));
    cr_expect(!exists("", "c.npy"));
    json_decref(ix);
}

Test(cli_dump, no_kernel_writes_inputs_and_reference)
{
    cr_assert_eq(dump("", "--no-kernel --kernel no_such_kernel " MUTANTS "/n_tail.case"), 0,
                 "%s", out);
    cr_expect(strstr(out, "no kernel run") != NULL, "%s", out);
    json_t *ix = load_index("");
    cr_expect_str_eq(str(ix, "state"), "inputs");
    cr_expect(json_object_get(ix, "verdict") == NULL);
    json_t *c = json_object_get(json_object_get(ix, "arrays"), "c");
    cr_expect_str_eq(str(c, "missing"), "no kernel was run");
    /* batched n_tail: B=2 M=70 N=100 K=128 */
    expect_npy("", "a", "<u2", "(2, 70, 128)", 2LL * 70 * 128 * 2);
    expect_npy("", "ref", "<f8", "(2, 70, 100)", 2LL * 70 * 100 * 8);
    cr_expect(!exists("", "c.npy"));
    json_decref(ix);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' run --no-kernel " MUTANTS "/n_tail.case 2>&1", GGFUZZ_BIN);
    cr_expect_eq(cli_shell(cmd, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--no-kernel needs --dump") != NULL, "%s", out);
}

Test(cli_dump, a_directory_per_case)
{
    cr_assert_eq(dump("/d", "--no-kernel " SEEDS "/fwd_basic.case " SEEDS "/dgrad_basic.case "
                            SEEDS "/fwd_basic.case"), 0, "%s", out);
    cr_expect(exists("/d/fwd_basic", "index.json") && exists("/d/dgrad_basic", "index.json") &&
              exists("/d/fwd_basic-2", "index.json"), "%s", out);
    cr_expect(!exists("/d", "index.json"));
}

/* Case files named "..case", "...case" and ".hidden.case" (stems ".", ".." and ".hidden") dump
   into DIR/_., DIR/_.. and DIR/_.hidden: nothing is written into DIR itself or its parent, and
   the files there are left alone. */
Test(cli_dump, stems_of_dots_stay_inside_the_directory)
{
    static const char *const names[] = {"..case", "...case", ".hidden.case", "a.case"};
    static const char *const subs[] = {"/w/d/_.", "/w/d/_..", "/w/d/_.hidden", "/w/d/a"};
    char path[512], cmd[4096] = "--no-kernel";
    snprintf(path, sizeof path, "%s/w", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    static const char *const precious[] = {"/w/index.json", "/w/bias.npy"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s%s", dir, precious[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fputs("precious\n", f);
        fclose(f);
    }
    for (int i = 0; i < 4; i++) {
        char copy[2048];
        snprintf(copy, sizeof copy, "cp '%s/fwd_basic.case' '%s/%s'", SEEDS, dir, names[i]);
        cr_assert_eq(system(copy), 0);
        size_t n = strlen(cmd);
        snprintf(cmd + n, sizeof cmd - n, " '%s/%s'", dir, names[i]);
    }
    cr_assert_eq(dump("/w/d", cmd), 0, "%s", out);
    for (int i = 0; i < 4; i++)
        cr_expect(exists(subs[i], "index.json") && exists(subs[i], "ref.npy"), "%s: %s", subs[i],
                  out);
    cr_expect(!exists("/w/d", "index.json") && !exists("/w", "a.npy"), "%s", out);
    for (int i = 0; i < 2; i++) {
        char text[64] = "";
        snprintf(path, sizeof path, "%s%s", dir, precious[i]);
        FILE *f = fopen(path, "r");
        cr_expect_not_null(f, "%s was removed", path);
        if (f) {
            cr_expect_not_null(fgets(text, sizeof text, f));
            fclose(f);
        }
        cr_expect_str_eq(text, "precious\n", "%s was overwritten", path);
    }
}

Test(cli_dump, e2m1_packed_and_scales)
{
    cr_assert_eq(dump("", SEEDS "/batched_afp4wfp4.case"), 0, "%s", out);
    /* B=2 M=48 N=72 K=192, MX: 6 E8M0 scales per row */
    expect_npy("", "a", "|u1", "(2, 48, 96)", 2LL * 48 * 96);
    expect_npy("", "a_scale", "|u1", "(96, 6)", 96LL * 6);
    expect_npy("", "b_scale", "|u1", "(2, 72, 6)", 2LL * 72 * 6);
    expect_npy("", "bias", "<f4", "(2, 72)", 2LL * 72 * 4);
    json_t *ix = load_index("");
    json_t *a = json_object_get(json_object_get(ix, "arrays"), "a");
    cr_expect_str_eq(str(a, "dtype"), "e2m1");
    expect_ints(json_object_get(a, "shape"), (long long[]){2, 48, 192}, 3, "a.shape");
    cr_expect(strstr(str(a, "packed"), "low nibble") != NULL);
    cr_expect_str_eq(str(json_object_get(json_object_get(ix, "arrays"), "a_scale"), "dtype"),
                     "e8m0");
    json_decref(ix);
}

Test(cli_dump, empty_experts_are_holes)
{
    /* 4,100 experts of 512 x 1024 bf16 weights, only the last with tokens: 4.3 GB of B */
    cr_assert_eq(dump("", "--no-kernel " SEEDS "/fwd_weights_past_2_31.case"), 0, "%s", out);
    char path[512];
    snprintf(path, sizeof path, "%s/b.npy", dir);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_expect_gt((long long)sb.st_size, 4100LL * 512 * 1024 * 2);
    cr_expect_lt((long long)sb.st_blocks * 512, 16LL << 20, "%lld bytes on disk",
                 (long long)sb.st_blocks * 512);
}

Test(cli_dump, unwritable_file_is_an_error_and_leaves_nothing)
{
    char path[512];
    snprintf(path, sizeof path, "%s/c.npy", dir);
    cr_assert_eq(mkdir(path, 0755), 0); /* C's file cannot replace a directory */
    cr_assert_eq(dump("", SEEDS "/fwd_basic.case"), 3, "%s", out);
    cr_expect(strstr(out, "/c.npy: cannot rename") != NULL, "%s", out);
    cr_expect(strstr(out, "were removed") != NULL, "%s", out);
    cr_expect(!exists("", "a.npy") && !exists("", "ref.npy") && !exists("", "index.json"));
}

/* Makes the temporary file of this process's atomic write of DIR/name a link to /dev/full, where
   every write fails with ENOSPC: a full disk, without privileges. */
static void full_disk_for(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *tmp = gg_tmpfile_name(path);
    cr_assert_not_null(tmp);
    cr_assert_eq(symlink("/dev/full", tmp), 0, "%s", tmp);
    free(tmp);
}

/* A write that finds the disk full says so, whether its data fail inside fwrite (1 MiB, past
   any stdio buffer) or at the final flush (a few bytes), and leaves nothing behind. */
Test(cli_dump, a_full_disk_is_named_by_errnos_text)
{
    static char data[1 << 20];
    const size_t sizes[] = {sizeof data, 16};
    for (int i = 0; i < 2; i++) {
        char name[32], path[512], err[1024] = "";
        snprintf(name, sizeof name, "f%d.bin", i);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        full_disk_for(name);
        cr_expect_eq(gg_atomic_write(path, "data", data, sizes[i], 0, err, sizeof err), GG_E_IO);
        cr_expect(strstr(err, "No space left on device") != NULL, "%zu bytes: %s", sizes[i], err);
        cr_expect(!exists("", name));
    }
    /* The dump's own writer: its first array fails, every file it wrote is removed. */
    static const char *const names[] = {"a", "b", "group_lens", "group_offs", "ref", "abs",
                                        "bound"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.npy", names[i]);
        full_disk_for(file);
    }
    full_disk_for("index.json");
    char err[1024] = "";
    cr_expect_eq(gg_cli_dump_inputs(SEEDS "/fwd_basic.case", dir, err, sizeof err), 3);
    cr_expect(strstr(err, ".npy: cannot write") != NULL, "%s", err);
    cr_expect(strstr(err, "No space left on device") != NULL, "%s", err);
    cr_expect(!exists("", "a.npy") && !exists("", "index.json"), "%s", err);
}

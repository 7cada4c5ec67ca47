/*
 * test_cli_flags.c — the flag tables as the single source of each command's options: every
 * table is well formed, each type reads, checks and stores its value and its default at the
 * row's offset with one message style, each flag's help shows the default from its row, and
 * `--timeout 0` means no limit for run, suite, fuzz and minimize alike (a case that takes a
 * moment is not killed, where a limit far below its time kills it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli_fixture.h"
#include "fuzz/cli/cli_int.h"

TestSuite(cli_flags, .timeout = 300);

static char out[1 << 17];

/* Runs ggfuzz with args (stderr with stdout into out); returns the exit code. */
static int ggfuzz(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", GGFUZZ_BIN, args);
    return cli_shell(cmd, out, sizeof out);
}

/* text with every run of blanks and newlines made one space, into buf. */
static void one_line(const char *text, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < len; p++) {
        int blank = *p == ' ' || *p == '\n';
        if (blank && (n == 0 || buf[n - 1] == ' '))
            continue;
        buf[n++] = blank ? ' ' : *p;
    }
    buf[n] = '\0';
}

Test(cli_flags, every_table_is_well_formed)
{
    for (const struct gg_cli_command *const *c = gg_cli_commands; *c; c++) {
        char why[512] = "";
        cr_expect_eq(gg_cli_table_check(*c, why, sizeof why), 0, "%s", why);
    }
}

/* Each row's line in its command's --help and in ggfuzz --help ends with the note its row
   gives: the default ("(default 10; 0: no limit)", "(default: the memory available now)"). */
Test(cli_flags, every_flag_help_shows_its_default_from_the_table)
{
    static char all[1 << 17], flat_all[1 << 17], flat[1 << 17];
    cr_assert_eq(ggfuzz("--help"), 0, "%s", out);
    memcpy(all, out, sizeof all);
    one_line(all, flat_all, sizeof flat_all);
    int notes = 0;
    for (const struct gg_cli_command *const *c = gg_cli_commands; *c; c++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", (*c)->name);
        cr_assert_eq(ggfuzz(args), 0, "%s: %s", args, out);
        one_line(out, flat, sizeof flat);
        for (const struct gg_cli_flag *f = (*c)->flags; f->name; f++) {
            char note[512], want[4096], help[2048];
            gg_cli_flag_note(f, note, sizeof note);
            one_line(f->help, help, sizeof help);
            snprintf(want, sizeof want, note[0] ? "%s (%s)" : "%s", help, note);
            cr_expect(strstr(flat, want), "ggfuzz %s --help lacks '%s'", (*c)->name, want);
            cr_expect(strstr(flat_all, want), "ggfuzz --help lacks '%s'", want);
            notes += note[0] != 0;
        }
    }
    cr_expect_gt(notes, 40, "only %d flags state a default", notes);
    /* The same default in the help of each command that has the flag. */
    cr_expect(ggfuzz("fuzz --help") == 0 && strstr(out, "(default 10; 0: no limit)"), "%s", out);
    cr_expect(ggfuzz("minimize --help") == 0 && strstr(out, "stop after S seconds (default 600; "
                                                           "0: no limit)"), "%s", out);
}

/* ---- the types at work on a table of this test's own -------------------------------------- */

struct opts {
    int on, count, word;
    int64_t big, size;
    double number, share, seconds, limit, limit0;
    const char *name;
    uint64_t seed;
    struct gg_cli_list list;
};

static const struct gg_cli_word colours[] = {{"red", 3}, {"green", 5}, {"blue", 7}, {NULL, 0}};

#define O(field) GG_CLI_AT(struct opts, field)
static const struct gg_cli_flag test_flags[] = {
    {"on", 'o', GG_CLI_SWITCH, NULL, O(on), .help = "a switch"},
    {"count", 0, GG_CLI_COUNT, "N", O(count), .min = 1, .max = 8, GG_CLI_DEFAULT(2),
     .help = "a count"},
    {"big", 0, GG_CLI_COUNT, "N", O(big), GG_CLI_DEFAULT(0), .zero = "none",
     .help = "a large count"},
    {"size", 0, GG_CLI_SIZE, "SIZE", O(size), GG_CLI_DEFAULT_TEXT("all"), .help = "a size"},
    {"number", 0, GG_CLI_NUMBER, "X", O(number), GG_CLI_DEFAULT(1.5), .help = "a number"},
    {"share", 0, GG_CLI_NUMBER, "F", O(share), GG_CLI_DEFAULT(0.25), .min = 0.01, .max = 1,
     .help = "a number in a range"},
    {"seconds", 0, GG_CLI_SECONDS, "S", O(seconds), GG_CLI_DEFAULT(30), .help = "a period"},
    {"limit", 0, GG_CLI_LIMIT, "S", O(limit), GG_CLI_DEFAULT(300), .help = "a limit"},
    {"limit0", 0, GG_CLI_LIMIT, "S", O(limit0), GG_CLI_DEFAULT(0), .help = "no limit first"},
    {"name", 0, GG_CLI_STRING, "NAME", O(name), GG_CLI_DEFAULT_STR("x"), .help = "a name"},
    {"word", 0, GG_CLI_WORD, "W", O(word), .words = colours, GG_CLI_DEFAULT_STR("green"),
     .help = "a word"},
    {"seed", 0, GG_CLI_SEED, "N", O(seed), GG_CLI_DEFAULT(0), .zero = "chosen", .help = "a seed"},
    {"item", 0, GG_CLI_LIST, "I", O(list), .max = 2, .help = "an item (repeatable)"},
    {0}};
#undef O
static const struct gg_cli_command test_command = {"test", "test [options]", NULL, test_flags};

/* Parses "test ARGS" (split on spaces) into o with stderr in out; returns gg_cli_parse's. */
static int parse(const char *args, struct opts *o)
{
    char copy[1024], name[] = "test", *argv[32] = {name};
    int argc = 1;
    snprintf(copy, sizeof copy, "%s", args);
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && argc < 31;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    memset(o, 0, sizeof *o);
    char path[] = "/tmp/ggfuzz-cli-flags-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    int rc = gg_cli_parse(&test_command, argc, argv, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    return rc;
}

Test(cli_flags, the_types_store_defaults_and_values_at_their_rows)
{
    char why[256];
    cr_assert_eq(gg_cli_table_check(&test_command, why, sizeof why), 0, "%s", why);
    struct opts o;
    cr_assert_eq(parse("", &o), GG_CLI_TAKEN, "%s", out);
    cr_expect(o.on == 0 && o.count == 2 && o.big == 0 && o.size == 0 && o.number == 1.5 &&
              o.share == 0.25 && o.seconds == 30 && o.limit == 300 && o.limit0 == GG_NO_LIMIT &&
              o.seed == 0 && o.word == 5 && o.list.n == 0 && strcmp(o.name, "x") == 0);
    cr_assert_eq(parse("-o --count 8 --big 5000000000 --size 1.5K --number 0 --share 1 "
                       "--seconds 0.25 "
                       "--limit 0 --limit0 7 --name y --word blue --seed 0x10 --item a --item b",
                       &o),
                 GG_CLI_TAKEN, "%s", out);
    cr_expect(o.on == 1 && o.count == 8 && o.big == 5000000000LL && o.size == 1536 &&
              o.number == 0 && o.share == 1 && o.seconds == 0.25 && o.limit == GG_NO_LIMIT &&
              o.limit0 == 7 && strcmp(o.name, "y") == 0 && o.word == 7 && o.seed == 16 &&
              o.list.n == 2 && strcmp(o.list.item[1], "b") == 0);
    static const char *const bad[][2] = {
        {"--count 0", "ggfuzz test: --count: 1 to 8, not 0\n"},
        {"--count 2.5", "ggfuzz test: --count: not a count: '2.5'\n"},
        {"--big -1", "ggfuzz test: --big: not a count: '-1'\n"},
        {"--size 0", "ggfuzz test: --size: size '0' is less than one byte\n"},
        {"--number nan", "ggfuzz test: --number: not a number >= 0: 'nan'\n"},
        {"--share 0", "ggfuzz test: --share: a number from 0.01 to 1, not '0'\n"},
        {"--share 1.5", "ggfuzz test: --share: a number from 0.01 to 1, not '1.5'\n"},
        {"--seconds 0", "ggfuzz test: --seconds: more than 0 seconds, not '0'\n"},
        {"--limit inf", "ggfuzz test: --limit: not a number >= 0: 'inf'\n"},
        {"--word pink", "ggfuzz test: --word: 'pink' is not red, green or blue\n"},
        {"--seed -3", "ggfuzz test: --seed: not a seed: '-3'\n"},
        {"--item a --item b --item c", "ggfuzz test: --item: given more than 2 times\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(parse(bad[i][0], &o), GG_EXIT_USAGE, "%s", bad[i][0]);
        char want[256];
        snprintf(want, sizeof want, "%stry 'ggfuzz test --help'\n", bad[i][1]);
        cr_expect_str_eq(out, want, "%s", bad[i][0]);
    }
}

Test(cli_flags, notes_say_the_default_and_what_0_means)
{
    static const char *const want[] = {"",
                                       "default 2",
                                       "default 0: none",
                                       "default: all",
                                       "default 1.5",
                                       "default 0.25",
                                       "default 30",
                                       "default 300; 0: no limit",
                                       "default 0: no limit",
                                       "default x",
                                       "default green",
                                       "default 0: chosen",
                                       ""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char note[256];
        gg_cli_flag_note(&test_flags[i], note, sizeof note);
        cr_expect_str_eq(note, want[i], "--%s", test_flags[i].name);
    }
}

/* ---- --timeout 0 ---------------------------------------------------------------------------- */

/* A case that takes a moment on the CPU (a tenth of a second or so), and the same with the
   tail mutant, which fails. */
static const char SLOW[] = "ggfuzz-case 1\nop grouped_fwd\nkernel grouped_bf16_cpu_tiled\n"
                           "dtypes a=bf16 b=bf16 c=bf16\nscaling none\ngroups 2\n"
                           "group_lens 300 333\nn 520\nk 1024\nseed 3\n";

static char dir[64];

static int in_dir(const char *args)
{
    return cli_ggfuzz_in(dir, args, out, sizeof out);
}

Test(cli_flags, timeout_0_is_no_limit_for_every_command)
{
    cli_temp_dir(dir, sizeof dir, "cli-flags");
    file_put(dir, "slow.case", SLOW);
    char mutant[1024];
    snprintf(mutant, sizeof mutant, "%smutant tail_rows_unwritten\n", SLOW);
    file_put(dir, "slow_tail.case", mutant);
    /* A limit far below the case's time kills it, so a 0 read as 0 seconds would too. */
    cr_expect_eq(in_dir("run --timeout 0.002 slow.case"), 12, "%s", out);
    cr_expect(strstr(out, "timeout"), "%s", out);
    cr_expect_eq(in_dir("run --timeout 0 slow.case"), 0, "%s", out);
    cr_expect(strstr(out, "1 passed"), "%s", out);
    cr_expect_eq(in_dir("suite --timeout 0 slow.case"), 0, "%s", out);
    cr_expect(strstr(out, "timeout") == NULL, "%s", out);
    cr_expect_eq(in_dir("minimize --timeout 0 --max-total-time 0 slow_tail.case"), 0, "%s", out);
    cr_expect(strstr(out, "after:") && strstr(out, "timeout") == NULL, "%s", out);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir '%s/seeds' && cp '%s/slow.case' '%s/seeds/'", dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    cr_expect_eq(in_dir("fuzz corpus seeds --kernel grouped_bf16_cpu_tiled --timeout 0 "
                        "--runs 6 --workers 2 --seed 5"), 0, "%s", out);
    cr_expect(strstr(out, "timeout=none "), "%s", out);
    cr_expect(strstr(out, "FAULT") == NULL, "%s", out);
    cr_expect_eq(in_dir("fuzz --kernel grouped_bf16_cpu_tiled --runs 1 --workers 1"), 0, "%s",
                 out);
    cr_expect(strstr(out, "timeout=10s "), "the default: %s", out);
    cli_remove_dir(dir);
}

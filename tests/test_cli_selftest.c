/*
 * test_cli_selftest.c — the self-test CI runs: a fresh campaign against every mutant of every
 * in-tree kernel, each of which must be found, then every correct kernel, which must give no
 * finding. One worker and a fixed seed make the cases the same on every machine, so the budget is
 * a number of cases (--runs-per-mutant), not a time that a slow machine could miss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

TestSuite(cli_selftest, .timeout = 1200);

static char out[1 << 18];

Test(cli_selftest, every_mutant_is_found_and_every_correct_kernel_is_clean)
{
    char root[] = "/tmp/ggfuzz-selftest-XXXXXX", cmd[4096];
    cr_assert_not_null(mkdtemp(root));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' selftest --runs-per-mutant 100 --max-total-time-per-mutant 300 "
             "--minimize-time 2 --workers 1 --seed 1 2>&1",
             root, GGFUZZ_BIN);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "ggfuzz selftest did not exit normally");
    cr_expect_eq(WEXITSTATUS(st), 0, "%s", out);
    int found = -1, mutants = -2, clean = -1, kernels = -2;
    const char *s = strstr(out, "selftest: ");
    cr_assert_not_null(s, "%s", out);
    cr_assert_eq(sscanf(s, "selftest: %d of %d mutants found, %d of %d correct kernels clean", &found,
                        &mutants, &clean, &kernels), 4, "%s", s);
    cr_expect_eq(found, mutants, "%s", out);
    cr_expect_eq(clean, kernels, "%s", out);
    cr_expect_geq(mutants, 36, "every in-tree mutant runs: %s", out);
    cr_expect_geq(kernels, 13, "%s", out);
    cr_expect_null(strstr(out, "MISSED"), "%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

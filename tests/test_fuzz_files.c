/*
 * test_fuzz_files.c — opening and reading files that others may have placed (fuzz/case/
 * gg_files.c): a FIFO, a directory or a device is refused at once with its name, never waited
 * on; a missing file says so through errno; a file longer than the reader's bound is refused
 * before it is read; a case file that is a FIFO is refused by the case loader the same way.
 * Each test that could hang on a FIFO runs under a short Criterion timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "fuzz/case/gg_case.h"

static char root[64];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/ggfuzz-files-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

/* root/name into path. */
static void in_root(char *path, size_t len, const char *name)
{
    snprintf(path, len, "%s/%s", root, name);
}

TestSuite(fuzz_files, .init = setup, .fini = teardown, .timeout = 10);

Test(fuzz_files, a_fifo_is_refused_at_once_with_its_name)
{
    char path[128], err[512];
    in_root(path, sizeof path, "peer.log");
    cr_assert_eq(mkfifo(path, 0644), 0);
    struct stat sb;
    errno = 0;
    cr_expect_eq(gg_file_open(path, &sb, err, sizeof err), -1);
    cr_expect_eq(errno, EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s: cannot read: not a regular file", path);
    cr_expect_str_eq(err, want);
    char *text = NULL;
    cr_expect_eq(gg_file_read(path, 1 << 20, &text, NULL, err, sizeof err), GG_E_IO);
    cr_expect_null(text);
    cr_expect_str_eq(err, want);
}

Test(fuzz_files, a_case_file_that_is_a_fifo_is_refused_by_the_loader)
{
    char path[128], err[512];
    in_root(path, sizeof path, "snr-0123456789abcdef.case");
    cr_assert_eq(mkfifo(path, 0644), 0);
    struct gg_case c;
    cr_expect_eq(gg_case_load(path, &c, err, sizeof err), GG_E_IO);
    cr_expect(strstr(err, "not a regular file"), "%s", err);
    gg_case_free(&c);
}

Test(fuzz_files, a_directory_or_a_device_is_refused_and_a_missing_file_is_enoent)
{
    char path[128], err[512];
    errno = 0;
    cr_expect_eq(gg_file_open(root, NULL, err, sizeof err), -1);
    cr_expect_eq(errno, EINVAL);
    cr_expect(strstr(err, "not a regular file"), "%s", err);
    cr_expect_eq(gg_file_open("/dev/zero", NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "/dev/zero: cannot read: not a regular file"), "%s", err);
    in_root(path, sizeof path, "absent");
    errno = 0;
    cr_expect_eq(gg_file_open(path, NULL, err, sizeof err), -1);
    cr_expect_eq(errno, ENOENT);
    cr_expect(strstr(err, "No such file or directory"), "%s", err);
}

Test(fuzz_files, a_regular_file_and_a_link_to_one_are_read_whole)
{
    char path[128], link[128], err[512];
    in_root(path, sizeof path, "known.txt");
    in_root(link, sizeof link, "link.txt");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("snr/a\nsnr/b\n", f);
    fclose(f);
    cr_assert_eq(symlink(path, link), 0);
    char *text;
    size_t len;
    cr_assert_eq(gg_file_read(link, 1 << 20, &text, &len, err, sizeof err), GG_OK, "%s", err);
    cr_expect_eq(len, 12);
    cr_expect_str_eq(text, "snr/a\nsnr/b\n");
    free(text);
    struct stat sb;
    int fd = gg_file_open(path, &sb, err, sizeof err);
    cr_assert_geq(fd, 0, "%s", err);
    cr_expect_eq(sb.st_size, 12);
    cr_expect_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "the descriptor is left non-blocking");
    close(fd);
}

/* A sparse file of 3 GiB: refused by its size, before a byte of it is read or allocated. */
Test(fuzz_files, a_file_longer_than_the_bound_is_refused_before_it_is_read)
{
    char path[128], err[512];
    in_root(path, sizeof path, "huge.log");
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)3 << 30), 0);
    close(fd);
    char *text = NULL;
    cr_expect_eq(gg_file_read(path, 1 << 20, &text, NULL, err, sizeof err), GG_E_IO);
    cr_expect_null(text);
    cr_expect(strstr(err, "File too large"), "%s", err);
}

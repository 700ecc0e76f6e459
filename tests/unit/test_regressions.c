/* Regression tests for bugs the unit tests found (and that were then
 * fixed): each failed before its fix.  The getopt ones also prove that a
 * parse after a failed one starts clean. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/memory/layout.h"
#include "vmm/util/parse.h"
#include "boot/loader.h"
#include "devices/serial.h"
#include "tests/unit/helpers.h"
#include "vmm/cli/boot_options.h"
#include "vmm/snapshot/snapshot_file.h"

/* vmm/cli/boot_options.c parse_uint: `(max - d) / 10` underflows when the
 * digit is larger than max, so a value above max is accepted. */
START_TEST(parse_uint_digit_above_max)
{
    uint64_t v = 42;
    ck_assert_int_eq(parse_uint("7", 5, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("1", 0, &v), -ERANGE);
    ck_assert_uint_eq(v, 42);
}
END_TEST

/* vmm/cli/boot_options.c: an unknown short option inside a cluster ("-xy")
 * does not advance optind, so the message names the previous argument. */
START_TEST(options_cluster_message)
{
    struct boot_options o;
    char err[256] = "";
    char *a[] = {"boot", "--kernel", "k", "-xy", NULL};
    ck_assert_int_eq(boot_options_parse(&o, 4, a, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, "'-x") != NULL, "error names the wrong argument: %s", err);
}
END_TEST

/* vmm/cli/boot_options.c resets getopt with optind = 1, which keeps GNU
 * getopt's private "next character" pointer: after a parse that stopped
 * inside "-xy", the next parse resumes at the stale "y" and rejects a
 * valid command line.  optind = 0 asks glibc for a full reset. */
START_TEST(options_reparse_after_cluster)
{
    struct boot_options o;
    char err[256] = "";
    char *a[] = {"boot", "-xy", NULL};
    ck_assert_int_eq(boot_options_parse(&o, 2, a, err, sizeof(err)), -EINVAL);
    char *b[] = {"boot", "--kernel", "k", NULL};
    err[0] = 0;
    ck_assert_msg(boot_options_parse(&o, 3, b, err, sizeof(err)) == 0,
                  "valid options rejected after an earlier error: %s", err);
}
END_TEST

/* devices/serial.c: a FIFO reset (FCR bit 1) empties the receive FIFO but
 * never calls rx_ready, so a host that was told "FIFO full, wait for
 * rx_ready" (vmm/kvm/console.c pauses stdin) waits forever. */
static unsigned ready_calls;
static void k_tx(void *o, uint8_t b) { (void)o; (void)b; }
static void k_irq(void *o, int level) { (void)o; (void)level; }
static void k_ready(void *o) { (void)o; ready_calls++; }

START_TEST(serial_fifo_reset_signals_ready)
{
    static const struct serial_ops ops = {.tx = k_tx, .set_irq = k_irq, .rx_ready = k_ready};
    struct serial s;
    uint8_t v, buf[SERIAL_RX_FIFO + 10];
    memset(buf, 'x', sizeof(buf));
    serial_init(&s, &ops, NULL);
    v = 0x01;
    serial_io(&s, 1, &v, 1, true); /* IER.RDI: listening */
    ck_assert_uint_eq(serial_receive(&s, buf, sizeof(buf)), SERIAL_RX_FIFO); /* full */
    unsigned before = ready_calls;
    v = 0x03;
    serial_io(&s, 2, &v, 1, true); /* FCR: enable + clear RX */
    ck_assert_uint_eq(s.rx_count, 0);
    ck_assert_msg(ready_calls > before, "FIFO emptied by FCR without rx_ready");
    pthread_mutex_destroy(&s.lock);
}
END_TEST

/* boot/loader.c: an invalid vCPU count (mptable_write's -EINVAL) comes
 * back as -ENOMEM "guest RAM too small for boot structures". */
START_TEST(loader_bad_ncpus_reported_as_nomem)
{
    struct test_mem t;
    struct telf e;
    struct kernel_image img;
    struct boot_plan plan;
    test_mem_init(&t, MiB(16));
    telf_valid(&e);
    ck_assert_int_eq(kernel_parse(e.data, e.size, &img), 0);
    struct boot_request req = {.cmdline = "", .entry = ENTRY_AUTO, .ncpus = 0};
    int rc = loader_load(&img, &t.mem, &req, &plan);
    telf_free(&e);
    test_mem_free(&t);
    ck_assert_int_eq(rc, -EINVAL);
    ck_assert_msg(strstr(plan.error, "RAM") == NULL, "misleading error: %s", plan.error);
}
END_TEST

/* vmm/snapshot/snapshot_file.c: libfdt 1.6.1's fdt_check_full read through a NULL
 * pointer on this state file (found by fuzz_snapshot: a version-14 header
 * whose size_dt_struct runs past the end).  The reader now checks the
 * header itself first. */
START_TEST(snapshot_fdt_v14_null_read)
{
    FILE *f = fopen("tests/fuzz/regressions/snapshot-fdt-v14-null-read.bin", "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[65536];
    size_t len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    ck_assert_uint_gt(len, 40);
    struct snap_state *st = calloc(1, sizeof(*st));
    char err[256];
    ck_assert_int_eq(snap_decode(buf, len, st, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a valid device tree"));
    free(st);
}
END_TEST

Suite *regressions_suite(void)
{
    Suite *s = suite_create("regressions");
    TCase *tc = tcase_create("fixed_bugs");
    tcase_add_test(tc, parse_uint_digit_above_max);
    tcase_add_test(tc, options_reparse_after_cluster);
    tcase_add_test(tc, options_cluster_message);
    tcase_add_test(tc, serial_fifo_reset_signals_ready);
    tcase_add_test(tc, loader_bad_ncpus_reported_as_nomem);
    tcase_add_test(tc, snapshot_fdt_v14_null_read);
    suite_add_tcase(s, tc);
    return s;
}

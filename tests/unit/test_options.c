/* vmm/cli/boot_options.c: parse_uint and `airlock boot` option parsing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/memory/layout.h"
#include "vmm/util/parse.h"
#include "boot/loader.h"
#include "tests/unit/helpers.h"
#include "vmm/cli/boot_options.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

START_TEST(uint_valid)
{
    uint64_t v = 99;
    ck_assert_int_eq(parse_uint("0", 10, &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(parse_uint("007", 10, &v), 0);
    ck_assert_uint_eq(v, 7);
    ck_assert_int_eq(parse_uint("256", UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 256);
    ck_assert_int_eq(parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
    ck_assert_int_eq(parse_uint("100", 100, &v), 0); /* max itself */
    ck_assert_uint_eq(v, 100);
    ck_assert_int_eq(parse_uint("18446744073709551614", UINT64_MAX - 1, &v), 0);
    ck_assert_uint_eq(v, UINT64_MAX - 1);
}
END_TEST

START_TEST(uint_malformed)
{
    static const char *const bad[] = {"", "-1", "+1", " 1", "1 ", "1\n", "0x10", "1.5",
                                      "1e3", "12a", "a", "--", "\t7", "1,000"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 42;
        ck_assert_msg(parse_uint(bad[i], UINT64_MAX, &v) == -EINVAL, "'%s' accepted", bad[i]);
        ck_assert_uint_eq(v, 42); /* untouched on failure */
    }
    uint64_t v = 42;
    ck_assert_int_eq(parse_uint(NULL, UINT64_MAX, &v), -EINVAL);
    ck_assert_uint_eq(v, 42);
}
END_TEST

START_TEST(uint_range)
{
    uint64_t v = 42;
    ck_assert_int_eq(parse_uint("18446744073709551616", UINT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("18446744073709551620", UINT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("99999999999999999999", UINT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("184467440737095516150", UINT64_MAX, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("18446744073709551615", UINT64_MAX - 1, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("101", 100, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("110", 100, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("1000", 100, &v), -ERANGE);
    ck_assert_int_eq(parse_uint("255", 254, &v), -ERANGE);
    ck_assert_uint_eq(v, 42);
}
END_TEST

/* Parses argv; returns the result and leaves the message in err. */
static char err[256];
static struct boot_options o;

static int parse(int argc, char **argv)
{
    memset(err, 0, sizeof(err));
    return boot_options_parse(&o, argc, argv, err, sizeof(err));
}

static void expect_error(int argc, char **argv, const char *needle)
{
    ck_assert_int_eq(parse(argc, argv), -EINVAL);
    ck_assert_msg(strstr(err, needle) != NULL, "error \"%s\" lacks \"%s\"", err, needle);
}

START_TEST(defaults_and_all)
{
    char *a[] = {"boot", "--kernel", "vmlinux", NULL};
    ck_assert_int_eq(parse(ARGC(a), a), 0);
    ck_assert_str_eq(o.kernel, "vmlinux");
    ck_assert_ptr_null(o.initrd);
    ck_assert_str_eq(o.cmdline, BOOT_DEFAULT_CMDLINE);
    ck_assert_uint_eq(o.mem_mib, BOOT_DEFAULT_MEM_MIB);
    ck_assert_uint_eq(o.cpus, 1);
    ck_assert_str_eq(o.console, "stdio");
    ck_assert_str_eq(o.kvm_path, BOOT_DEFAULT_KVM);
    ck_assert_int_eq(o.entry, ENTRY_AUTO);
    ck_assert(!o.allow_pvm);

    char *b[] = {"boot", "--kernel=bz", "--initrd", "rd.gz", "--cmdline", "quiet", "--mem",
                 "8", "--cpus", "254", "--console", "none", "--entry", "pvh", "--kvm",
                 "/tmp/kvm", "--allow-pvm", NULL};
    ck_assert_int_eq(parse(ARGC(b), b), 0);
    ck_assert_str_eq(o.kernel, "bz");
    ck_assert_str_eq(o.initrd, "rd.gz");
    ck_assert_str_eq(o.cmdline, "quiet");
    ck_assert_uint_eq(o.mem_mib, LAYOUT_MEM_MIN_MIB);
    ck_assert_uint_eq(o.cpus, MPTABLE_MAX_CPUS);
    ck_assert_str_eq(o.console, "none");
    ck_assert_int_eq(o.entry, ENTRY_PVH);
    ck_assert_str_eq(o.kvm_path, "/tmp/kvm");
    ck_assert(o.allow_pvm);

    char *c[] = {"boot", "--entry", "linux64", "--mem", "1048576", "--kernel", "k", NULL};
    ck_assert_int_eq(parse(ARGC(c), c), 0);
    ck_assert_int_eq(o.entry, ENTRY_LINUX64);
    ck_assert_uint_eq(o.mem_mib, LAYOUT_MEM_MAX_MIB);
}
END_TEST

START_TEST(missing_kernel)
{
    char *a[] = {"boot", NULL};
    expect_error(ARGC(a), a, "--kernel");
    char *b[] = {"boot", "--mem", "64", NULL};
    expect_error(ARGC(b), b, "--kernel");
}
END_TEST

START_TEST(bad_mem)
{
    char *a[] = {"boot", "--kernel", "k", "--mem", "lots", NULL};
    expect_error(ARGC(a), a, "--mem 'lots'");
    char *b[] = {"boot", "--kernel", "k", "--mem", "7", NULL};
    expect_error(ARGC(b), b, "--mem");
    char *c[] = {"boot", "--kernel", "k", "--mem", "1048577", NULL};
    expect_error(ARGC(c), c, "--mem");
    char *d[] = {"boot", "--kernel", "k", "--mem", "18446744073709551616", NULL};
    expect_error(ARGC(d), d, "--mem");
    char *e[] = {"boot", "--kernel", "k", "--mem", "-64", NULL};
    expect_error(ARGC(e), e, "--mem");
    char *f[] = {"boot", "--kernel", "k", "--mem=", NULL};
    expect_error(ARGC(f), f, "--mem");
}
END_TEST

START_TEST(bad_cpus)
{
    char *a[] = {"boot", "--kernel", "k", "--cpus", "0", NULL};
    expect_error(ARGC(a), a, "--cpus '0'");
    char *b[] = {"boot", "--kernel", "k", "--cpus", "255", NULL};
    expect_error(ARGC(b), b, "--cpus '255'");
    char *c[] = {"boot", "--kernel", "k", "--cpus", "4294967297", NULL}; /* 2^32 + 1 */
    expect_error(ARGC(c), c, "--cpus");
    char *d[] = {"boot", "--kernel", "k", "--cpus", "two", NULL};
    expect_error(ARGC(d), d, "--cpus");
}
END_TEST

START_TEST(bad_entry)
{
    char *a[] = {"boot", "--kernel", "k", "--entry", "bios", NULL};
    expect_error(ARGC(a), a, "--entry 'bios'");
    char *b[] = {"boot", "--kernel", "k", "--entry", "PVH", NULL};
    expect_error(ARGC(b), b, "--entry");
    char *c[] = {"boot", "--kernel", "k", "--entry", "", NULL};
    expect_error(ARGC(c), c, "--entry");
}
END_TEST

START_TEST(unknown_and_missing_value)
{
    char *a[] = {"boot", "--kernel", "k", "--bogus", NULL};
    expect_error(ARGC(a), a, "unknown option '--bogus'");
    char *b[] = {"boot", "--kernel", NULL};
    expect_error(ARGC(b), b, "--kernel needs a value");
    char *c[] = {"boot", "--kernel", "k", "--mem", NULL};
    expect_error(ARGC(c), c, "--mem needs a value");
    char *d[] = {"boot", "--kernel", "k", "--allow-pvm=yes", NULL};
    expect_error(ARGC(d), d, "--allow-pvm");
    char *e[] = {"boot", "--kernel", "k", "-x", NULL};
    expect_error(ARGC(e), e, "unknown option '-x'");
    /* and a good parse still works after errors */
    char *f[] = {"boot", "--kernel", "k", NULL};
    ck_assert_int_eq(parse(ARGC(f), f), 0);
}
END_TEST

START_TEST(positional)
{
    char *a[] = {"boot", "--kernel", "k", "extra", NULL};
    expect_error(ARGC(a), a, "unexpected argument 'extra'");
    char *b[] = {"boot", "stray", "--kernel", "k", NULL}; /* before the options too */
    expect_error(ARGC(b), b, "unexpected argument 'stray'");
    char *c[] = {"boot", "--kernel", "k", "--", "--mem", NULL};
    expect_error(ARGC(c), c, "unexpected argument '--mem'");
}
END_TEST

START_TEST(help)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(null, 0);
    dup2(null, STDOUT_FILENO);
    char *a[] = {"boot", "--help", "--bogus", NULL};
    int r = parse(ARGC(a), a);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(null);
    ck_assert_int_eq(r, 1);
}
END_TEST

Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("parse_uint");
    tcase_add_test(tc, uint_valid);
    tcase_add_test(tc, uint_malformed);
    tcase_add_test(tc, uint_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("boot_options");
    tcase_add_test(tc, defaults_and_all);
    tcase_add_test(tc, missing_kernel);
    tcase_add_test(tc, bad_mem);
    tcase_add_test(tc, bad_cpus);
    tcase_add_test(tc, bad_entry);
    tcase_add_test(tc, unknown_and_missing_value);
    tcase_add_test(tc, positional);
    tcase_add_test(tc, help);
    suite_add_tcase(s, tc);
    return s;
}

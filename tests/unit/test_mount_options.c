/* --mount HOSTDIR:GUESTDIR[:ro|:rw] (vmm/cli/mount_options.c) and where
 * `airlock run`'s parser takes it (vmm/cli/run_options.c): each mistake one
 * line naming the value, the mode's default, GUESTDIR twice, the count,
 * the VM's virtio slots, the mounts of one folder sharing a disk, and the
 * modes that cannot take it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/cli/mount_options.h"
#include "vmm/cli/run_options.h"
#include "vmm/util/rmtree.h"

static char top[64], dir[96], file[96], arg[1200], err[1024];
static struct mount_list l;
static bool check_host; /* mount_list_add's; setup: true */

static void teardown(void)
{
    rmtree(top);
}

static void setup(void)
{
    snprintf(top, sizeof(top), "/tmp/airlock-mountopt.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(dir, sizeof(dir), "%s/src", top);
    snprintf(file, sizeof(file), "%s/file", top);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    memset(&l, 0, sizeof(l));
    check_host = true;
}

/* mount_list_add of HOST + rest: its result; err as it said.  Each value
 * stays where it was put, as argv's do (the list points at it). */
static int add(const char *host, const char *rest)
{
    static char kept[32][1200];
    static unsigned next;
    char *v = kept[next++ % 32];
    snprintf(arg, sizeof(arg), "%s%s", host, rest);
    snprintf(v, sizeof(kept[0]), "%s", arg);
    return mount_list_add(&l, v, check_host, err, sizeof(err));
}

START_TEST(good_values)
{
    ck_assert_int_eq(add(dir, ":/src"), 0);
    ck_assert_str_eq(l.m[0].host, dir);
    ck_assert_str_eq(l.m[0].guest, "/src");
    ck_assert(!l.m[0].rw); /* ro unless told */
    ck_assert_int_eq(add(dir, ":/work/a b:rw"), 0);
    ck_assert(l.m[1].rw);
    ck_assert_str_eq(l.m[1].guest, "/work/a b");
    ck_assert_int_eq(add(dir, ":/ro-again:ro"), 0);
    ck_assert(!l.m[2].rw);
    ck_assert_int_eq(add("/", ":/host-root"), 0); /* shape only: the store check comes later */
    ck_assert_uint_eq(l.n, 4);
}
END_TEST

START_TEST(bad_values)
{
    static const struct { const char *host, *rest, *want; } cases[] = {
        {"", ":/src", "want HOSTDIR:GUESTDIR[:ro|:rw]"},
        {"DIR", "", "want HOSTDIR:GUESTDIR[:ro|:rw]"},
        {"DIR", ":", "want HOSTDIR:GUESTDIR[:ro|:rw]"},
        {"DIR", "::rw", "want HOSTDIR:GUESTDIR[:ro|:rw]"},
        {"DIR", ":/a:ro:rw", "want HOSTDIR:GUESTDIR[:ro|:rw]"},
        {"DIR", ":/src:rx", "the mode 'rx': want ro or rw"},
        {"DIR", ":/src:", "the mode '': want ro or rw"},
        {"DIR", ":/src:RO", "the mode 'RO': want ro or rw"},
        {"DIR", ":src", "GUESTDIR 'src': want an absolute folder"},
        {"DIR", ":/", "GUESTDIR '/': want"},
        {"DIR", ":/a/../etc", "GUESTDIR '/a/../etc': want"},
        {"DIR", ":/a/./b", "GUESTDIR '/a/./b': want"},
        {"DIR", ":/a//b", "GUESTDIR '/a//b': want"},
        {"DIR", ":/a/", "GUESTDIR '/a/': want"},
        {"DIR", ":/proc", "GUESTDIR '/proc': want"},
        {"DIR", ":/dev/shm", "GUESTDIR '/dev/shm': want"},
        {"DIR", ":/sys/x", "GUESTDIR '/sys/x': want"},
        {"MISSING", ":/src", "HOSTDIR: No such file or directory"},
        {"FILE", ":/src", "HOSTDIR: not a folder"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char host[200];
        snprintf(host, sizeof(host), "%s", !strcmp(cases[i].host, "DIR") ? dir
                                           : !strcmp(cases[i].host, "FILE") ? file
                                           : !strcmp(cases[i].host, "MISSING") ? "/nonexistent/x"
                                                                              : cases[i].host);
        ck_assert_int_eq(add(host, cases[i].rest), -EINVAL);
        char head[1300];
        snprintf(head, sizeof(head), "--mount '%s': ", arg);
        ck_assert_msg(!strncmp(err, head, strlen(head)) && strstr(err, cases[i].want),
                      "%s%s: %s", host, cases[i].rest, err);
        ck_assert_ptr_null(strchr(err, '\n'));
    }
    ck_assert_uint_eq(l.n, 0);
    /* a GUESTDIR of 1024 bytes is one too many */
    static char big[1100];
    memset(big, 'x', sizeof(big) - 1);
    big[0] = ':';
    big[1] = '/';
    big[1025] = 0;
    ck_assert_int_eq(add(dir, big), -EINVAL);
    big[1024] = 0;
    ck_assert_int_eq(add(dir, big), 0);
}
END_TEST

/* airlock create's parse: HOSTDIR is the daemon's to check, so one
 * missing here, a file, or relative passes; the rest is still refused. */
START_TEST(host_unchecked)
{
    check_host = false;
    ck_assert_int_eq(add("/nonexistent/x", ":/src"), 0);
    ck_assert_int_eq(add(file, ":/f:rw"), 0);
    ck_assert_int_eq(add("rel/dir", ":/rel"), 0);
    ck_assert_str_eq(l.m[2].host, "rel/dir");
    ck_assert_int_eq(add("/nonexistent/x", ":/proc"), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "GUESTDIR '/proc': want"));
    ck_assert_int_eq(add("/nonexistent/x", ":/src:rx"), -EINVAL);
    ck_assert_int_eq(add("/nonexistent/x", ":/src"), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "GUESTDIR /src is mounted twice"));
    ck_assert_uint_eq(l.n, 3);
}
END_TEST

START_TEST(twice_and_too_many)
{
    ck_assert_int_eq(add(dir, ":/a"), 0);
    ck_assert_int_eq(add(dir, ":/a:rw"), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "GUESTDIR /a is mounted twice"));
    for (int i = 1; i < MOUNT_MAX; i++) {
        char rest[16];
        snprintf(rest, sizeof(rest), ":/m%d", i);
        ck_assert_int_eq(add(dir, rest), 0);
    }
    ck_assert_int_eq(add(dir, ":/one-more"), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "at most 8 mounts"));
}
END_TEST

/* run_options_parse with argv; its result, err as it said. */
static struct run_ctx r;
static struct run_args a;
static int parse(enum run_mode mode, const char *const *args)
{
    static char *argv[32];
    int argc = 0;
    for (; args[argc]; argc++)
        argv[argc] = (char *)args[argc];
    argv[argc] = NULL;
    memset(&r, 0, sizeof(r));
    r.mode = mode;
    return run_options_parse(&r, &a, argc, argv, err, sizeof(err));
}

START_TEST(run_takes_it)
{
    char m1[200], m2[200];
    snprintf(m1, sizeof(m1), "%s:/src", dir);
    snprintf(m2, sizeof(m2), "%s:/out:rw", dir);
    ck_assert_int_eq(parse(RUN_EXEC, (const char *const[]){"run", "--mount", m1, "--mount", m2,
                                                         "--", "true", NULL}), 0);
    ck_assert_uint_eq(r.mounts.n, 2);
    ck_assert(!r.mounts.m[0].rw && r.mounts.m[1].rw);
    /* a sandbox's VM takes it too (the daemon mounts them) */
    ck_assert_int_eq(parse(RUN_HOLD, (const char *const[]){"sandbox-vm", "--vsock-uds", "/x",
                                                         "--mount", m1, NULL}), 0);
    ck_assert_uint_eq(r.mounts.n, 1);
    /* the first bad value stops the parse, named */
    ck_assert_int_eq(parse(RUN_EXEC, (const char *const[]){"run", "--mount", "x", "--", "true",
                                                         NULL}), -EINVAL);
    ck_assert_str_eq(err, "--mount 'x': want HOSTDIR:GUESTDIR[:ro|:rw] (no ':' in either)");
    /* not for a snapshot, nor over one */
    ck_assert_int_eq(parse(RUN_SNAPSHOT, (const char *const[]){"snapshot", "--out", "/x",
                                                             "--mount", m1, NULL}), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--mount is not for airlock snapshot"));
    ck_assert_int_eq(parse(RUN_EXEC, (const char *const[]){"run", "--from-snapshot", "/x",
                                                         "--mount", m1, "--", "true", NULL}),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--mount cannot change a snapshot's VM"));
}
END_TEST

/* run_options_parse of "run", then `n` --mount values, "--" "true". */
static int parse_mounts(char m[][200], int n)
{
    const char *args[24] = {"run"};
    int k = 1;
    for (int i = 0; i < n; i++) {
        args[k++] = "--mount";
        args[k++] = m[i];
    }
    args[k++] = "--";
    args[k++] = "true";
    args[k] = NULL;
    return parse(RUN_EXEC, args);
}

/* The root image, the vsock device and 6 mounts of 6 folders fill the 8
 * slots; a seventh folder is one too many. */
START_TEST(run_slots)
{
    static char m[8][200], d[8][120];
    for (int i = 0; i < 7; i++) {
        snprintf(d[i], sizeof(d[i]), "%s/d%d", top, i);
        ck_assert_int_eq(mkdir(d[i], 0755), 0);
        snprintf(m[i], sizeof(m[i]), "%s:/m%d", d[i], i);
    }
    ck_assert_int_eq(parse_mounts(m, 6), 0);
    ck_assert_int_eq(parse_mounts(m, 7), -EINVAL);
    ck_assert_str_eq(err, "--mount: 7 mount disks, 0 --disk, the root image and the vsock "
                          "device need 9 virtio slots; the VM has 8");
}
END_TEST

/* Mounts of one folder and mode share one disk: 8 of one folder take one
 * (two in two modes); a different mode, another spelling of the folder,
 * a folder whose name begins with the first one's, a volume named as a
 * folder is written: each a disk of its own. */
START_TEST(shared_disks)
{
    for (int i = 0; i < MOUNT_MAX; i++) {
        char rest[16];
        snprintf(rest, sizeof(rest), ":/m%d", i);
        ck_assert_int_eq(add(dir, rest), 0);
        ck_assert_uint_eq(mount_list_owner(&l, (unsigned)i), 0);
    }
    ck_assert_uint_eq(mount_list_disks(&l), 1);

    memset(&l, 0, sizeof(l));
    char slash[120], longer[120];
    snprintf(slash, sizeof(slash), "%s/", dir);
    snprintf(longer, sizeof(longer), "%s2", dir);
    ck_assert_int_eq(mkdir(longer, 0755), 0);
    ck_assert_int_eq(add(dir, ":/a"), 0);                 /* 0: its own */
    ck_assert_int_eq(add(dir, ":/b:rw"), 0);              /* 1: rw, its own */
    ck_assert_int_eq(add(slash, ":/c"), 0);               /* 2: another spelling */
    ck_assert_int_eq(add(longer, ":/d"), 0);              /* 3: a longer name */
    ck_assert_int_eq(mount_list_add_volume(&l, "src:/e", err, sizeof(err)), 0); /* 4 */
    check_host = false;
    ck_assert_int_eq(add("src", ":/f"), 0);               /* 5: a folder "src", not the volume */
    ck_assert_int_eq(add("src", ":/g"), 0);               /* 6: the folder of 5 */
    ck_assert_int_eq(add(dir, ":/h:rw"), 0);              /* 7: the disk of 1 */
    static const unsigned owner[] = {0, 1, 2, 3, 4, 5, 5, 1};
    for (unsigned i = 0; i < 8; i++)
        ck_assert_uint_eq(mount_list_owner(&l, i), owner[i]);
    ck_assert_uint_eq(mount_list_disks(&l), 6);

    /* in run: 8 mounts of one folder, in two modes, take 2 slots */
    static char m[8][200];
    for (int i = 0; i < 8; i++)
        snprintf(m[i], sizeof(m[i]), "%s:/etc-%d%s", dir, i, i % 2 ? ":rw" : "");
    ck_assert_int_eq(parse_mounts(m, 8), 0);
    ck_assert_uint_eq(r.mounts.n, 8);
    ck_assert_uint_eq(mount_list_disks(&r.mounts), 2);
}
END_TEST

Suite *mount_options_suite(void)
{
    Suite *s = suite_create("mount_options");
    TCase *tc = tcase_create("mount_options");
    tcase_add_checked_fixture(tc, setup, teardown); /* teardown runs after a failure too */
    tcase_add_test(tc, good_values);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, host_unchecked);
    tcase_add_test(tc, twice_and_too_many);
    tcase_add_test(tc, run_takes_it);
    tcase_add_test(tc, run_slots);
    tcase_add_test(tc, shared_disks);
    suite_add_tcase(s, tc);
    return s;
}

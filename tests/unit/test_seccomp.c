/* vmm/seccomp.c: each thread kind's filter, installed in a forked child
 * (a filter cannot be removed, and the test runner must go on): allowed
 * calls work, a syscall off the list kills the process with SIGSYS, and the
 * argument filters hold (ioctl request numbers, AF_UNIX only). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/seccomp.h"

enum probe { P_WRITE, P_OPENAT, P_SOCKET_INET, P_SOCKETPAIR_UNIX, P_IOCTL_KVM_RUN,
             P_IOCTL_CREATE_VM, P_EXECVE };

/* Raw syscalls only after the filter: the C library (and the sanitizers)
 * may make calls of their own on the way out. */
static long probe_call(enum probe p)
{
    int sv[2];
    switch (p) {
    case P_WRITE: return syscall(SYS_write, -1, "", 0);
    case P_OPENAT: return syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY);
    case P_SOCKET_INET: return syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    case P_SOCKETPAIR_UNIX: return syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
    case P_IOCTL_KVM_RUN: return syscall(SYS_ioctl, -1, KVM_RUN, 0);
    case P_IOCTL_CREATE_VM: return syscall(SYS_ioctl, -1, KVM_CREATE_VM, 0);
    case P_EXECVE: return syscall(SYS_execve, "/bin/true", NULL, NULL);
    }
    return 0;
}

/* Runs `p` under `kind`'s filter in a child: the signal that ended it, or 0
 * when it came back (whatever the call returned). */
static int under_filter(enum seccomp_kind kind, enum probe p)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        seccomp_set_mode(SECCOMP_MODE_KILL);
        if (seccomp_apply(kind))
            syscall(SYS_exit_group, 99);
        probe_call(p);
        syscall(SYS_exit_group, 0);
    }
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    if (WIFEXITED(ws)) {
        ck_assert_int_eq(WEXITSTATUS(ws), 0); /* 99: the filter did not load */
        return 0;
    }
    ck_assert(WIFSIGNALED(ws));
    return WTERMSIG(ws);
}

START_TEST(allowed_calls_return)
{
    for (int k = 0; k < SECCOMP_KINDS; k++)
        ck_assert_int_eq(under_filter((enum seccomp_kind)k, P_WRITE), 0);
    ck_assert_int_eq(under_filter(SECCOMP_VCPU, P_IOCTL_KVM_RUN), 0);
    ck_assert_int_eq(under_filter(SECCOMP_LOOP, P_SOCKETPAIR_UNIX), 0);
    ck_assert_int_eq(under_filter(SECCOMP_WORKER, P_SOCKETPAIR_UNIX), 0);
}
END_TEST

START_TEST(forbidden_calls_kill)
{
    for (int k = 0; k < SECCOMP_KINDS; k++) {
        ck_assert_int_eq(under_filter((enum seccomp_kind)k, P_OPENAT), SIGSYS);
        ck_assert_int_eq(under_filter((enum seccomp_kind)k, P_EXECVE), SIGSYS);
        ck_assert_int_eq(under_filter((enum seccomp_kind)k, P_SOCKET_INET), SIGSYS);
    }
    /* Argument filters: the right syscall with the wrong argument. */
    ck_assert_int_eq(under_filter(SECCOMP_VCPU, P_IOCTL_CREATE_VM), SIGSYS);
    ck_assert_int_eq(under_filter(SECCOMP_LOOP, P_IOCTL_KVM_RUN), SIGSYS);
    ck_assert_int_eq(under_filter(SECCOMP_WORKER, P_IOCTL_KVM_RUN), SIGSYS);
    ck_assert_int_eq(under_filter(SECCOMP_VCPU, P_SOCKETPAIR_UNIX), SIGSYS);
}
END_TEST

START_TEST(counts_and_modes)
{
    /* Below Firecracker's own (vmm 50, api 31, vcpu 27): the figures the
     * README quotes come from here. */
    ck_assert_uint_gt(seccomp_count(SECCOMP_VCPU), 0);
    ck_assert_uint_lt(seccomp_count(SECCOMP_VCPU), 27);
    ck_assert_uint_lt(seccomp_count(SECCOMP_LOOP), 50);
    ck_assert_uint_lt(seccomp_count(SECCOMP_WORKER), 50);
    enum seccomp_mode m;
    ck_assert_int_eq(seccomp_parse_mode("trap", &m), 0);
    ck_assert_int_eq(m, SECCOMP_MODE_TRAP);
    ck_assert_int_eq(seccomp_parse_mode("", &m), -EINVAL);
    ck_assert_int_eq(seccomp_parse_mode("KILL", &m), -EINVAL);
}
END_TEST

Suite *seccomp_suite(void)
{
    Suite *s = suite_create("seccomp");
    TCase *t = tcase_create("filters");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, allowed_calls_return);
    tcase_add_test(t, forbidden_calls_kill);
    tcase_add_test(t, counts_and_modes);
    suite_add_tcase(s, t);
    return s;
}

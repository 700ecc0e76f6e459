/* vmm/snapshot/disk_control.c: the DISK-FILL / DISK-EMPTY requests of the
 * VM's control socket, from both ends: the VM's parser fed hostile text
 * and fd counts, and the daemon's calls over a real SOCK_SEQPACKET pair
 * (fds arriving, answers, timeouts, a VM that is gone). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/snapshot/disk_control.h"
#include "vmm/snapshot/snapshot_control.h"

static int parse(const char *text, unsigned nfds, struct disk_control_req *r, char *why)
{
    return disk_control_parse(text, strlen(text), nfds, r, why, 256);
}

START_TEST(parse_good)
{
    struct disk_control_req r;
    char why[256];
    ck_assert_int_eq(parse("DISK-FILL 3 ctr-0123 1048576", 2, &r, why), 0);
    ck_assert_int_eq(r.op, DISK_CONTROL_FILL);
    ck_assert_uint_eq(r.slot, 3);
    ck_assert_str_eq(r.serial, "ctr-0123");
    ck_assert_uint_eq(r.cow_cap, 1048576);
    /* the serial is everything between the slot and the last space */
    ck_assert_int_eq(parse("DISK-FILL 0 a b  c 0", 2, &r, why), 0);
    ck_assert_str_eq(r.serial, "a b  c");
    ck_assert_int_eq(parse("DISK-FILL 255 12345678901234567890 18446744073709551615", 2, &r, why), 0);
    ck_assert_uint_eq(r.cow_cap, UINT64_MAX);
    ck_assert_str_eq(r.serial, "12345678901234567890");
    ck_assert_int_eq(parse("DISK-EMPTY 7", 0, &r, why), 0);
    ck_assert_int_eq(r.op, DISK_CONTROL_EMPTY);
    ck_assert_uint_eq(r.slot, 7);
}
END_TEST

START_TEST(parse_hostile)
{
    static const struct {
        const char *text;
        unsigned nfds;
        const char *why;
    } bad[] = {
        {"DISK-FILL 0 s 0", 0, "bad fds: DISK-FILL takes 2"},
        {"DISK-FILL 0 s 0", 1, "bad fds"},
        {"DISK-FILL 0 s 0", 3, "bad fds"},
        {"DISK-EMPTY 0", 1, "bad fds: DISK-EMPTY takes none"},
        {"DISK-FILL 256 s 0", 2, "slot out of range"},
        {"DISK-FILL 99999999999999999999999 s 0", 2, "slot out of range"},
        {"DISK-EMPTY 4294967296", 0, "slot out of range"},
        {"DISK-FILL -1 s 0", 2, "the slot is not a number"},
        {"DISK-FILL +1 s 0", 2, "the slot is not a number"},
        {"DISK-FILL  1 s 0", 2, "the slot is not a number"},
        {"DISK-FILL x s 0", 2, "the slot is not a number"},
        {"DISK-EMPTY ", 0, "the slot is not a number"},
        {"DISK-EMPTY 1 2", 0, "want DISK-EMPTY <slot>"},
        {"DISK-FILL 1 s", 2, "want DISK-FILL"},
        {"DISK-FILL 1", 2, "want DISK-FILL"},
        {"DISK-FILL ", 2, "want DISK-FILL"},
        {"DISK-FILL 1  0", 2, "bad serial"},
        {"DISK-FILL 1 123456789012345678901 0", 2, "bad serial"},
        {"DISK-FILL 1 a\x01z 0", 2, "bad serial"},
        {"DISK-FILL 1 caf\xc3\xa9 0", 2, "bad serial"},
        {"DISK-FILL 1 s 18446744073709551616", 2, "the cow cap is not a number"},
        {"DISK-FILL 1 s -5", 2, "the cow cap is not a number"},
        {"DISK-FILL 1 s 0x10", 2, "the cow cap is not a number"},
        {"DISK-FILL 1 s ", 2, "the cow cap is not a number"},
        {"DISK-FILL", 2, "bad request"},
        {"DISK-", 0, "bad request"},
        {"DISK-SWAP 1", 0, "bad request"},
        {"disk-fill 1 s 0", 2, "bad request"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct disk_control_req r;
        char why[256] = "";
        ck_assert_msg(parse(bad[i].text, bad[i].nfds, &r, why) == -EINVAL, "%s", bad[i].text);
        ck_assert_msg(strstr(why, bad[i].why), "'%s': got '%s', want '%s'", bad[i].text, why,
                      bad[i].why);
    }
    /* a NUL inside, and more bytes than a request can hold */
    struct disk_control_req r;
    char why[256];
    ck_assert_int_eq(disk_control_parse("DISK-FILL 1 a\0b 0", 17, 2, &r, why, sizeof(why)), -EINVAL);
    char big[200];
    memset(big, '1', sizeof(big));
    memcpy(big, "DISK-EMPTY ", 11);
    ck_assert_int_eq(disk_control_parse(big, sizeof(big), 0, &r, why, sizeof(why)), -EINVAL);
    ck_assert_int_eq(disk_control_parse("DISK-EMPTY 1", 12, 0, &r, why, 4), 0);
}
END_TEST

static void pair(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* The daemon's calls, the VM's end read with snap_control_next; the VM's
 * answer is queued first, so one thread plays both ends. */
START_TEST(daemon_and_vm_ends)
{
    int sv[2];
    pair(sv);
    char base[] = "/tmp/airlock-dc-XXXXXX";
    int b = mkstemp(base);
    ck_assert_int_ge(b, 0);
    struct stat bst;
    ck_assert_int_eq(fstat(b, &bst), 0);
    char msg[256] = "";
    ck_assert_int_eq(snap_control_answer(sv[1], NULL), 0);
    ck_assert_int_eq(vm_control_disk_fill(sv[0], 2, "ctr x", b, b, 4096, 1000, msg, sizeof(msg)), 0);
    int fds[SNAP_CONTROL_MAX_FDS];
    unsigned n = 0;
    char text[SNAP_CONTROL_TEXT_MAX];
    size_t len = 0;
    ck_assert_int_eq(snap_control_next(sv[1], fds, &n, text, &len), SNAP_CONTROL_DISK);
    ck_assert_uint_eq(n, 2);
    struct stat st;
    ck_assert_int_eq(fstat(fds[0], &st), 0);
    ck_assert_uint_eq(st.st_ino, bst.st_ino);
    close(fds[0]);
    close(fds[1]);
    struct disk_control_req r;
    char why[256];
    ck_assert_int_eq(disk_control_parse(text, len, n, &r, why, sizeof(why)), 0);
    ck_assert_uint_eq(r.slot, 2);
    ck_assert_str_eq(r.serial, "ctr x");
    ck_assert_uint_eq(r.cow_cap, 4096);

    /* an ERR answer comes back as -EIO with its reason */
    ck_assert_int_eq(snap_control_answer(sv[1], "slot 5 is not a spare"), 0);
    ck_assert_int_eq(vm_control_disk_empty(sv[0], 5, 1000, msg, sizeof(msg)), -EIO);
    ck_assert_str_eq(msg, "slot 5 is not a spare");
    ck_assert_int_eq(snap_control_next(sv[1], fds, &n, text, &len), SNAP_CONTROL_DISK);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(disk_control_parse(text, len, n, &r, why, sizeof(why)), 0);
    ck_assert_int_eq(r.op, DISK_CONTROL_EMPTY);

    /* refused before anything is sent */
    ck_assert_int_eq(vm_control_disk_fill(sv[0], 0, "", b, b, 0, 10, msg, sizeof(msg)), -EINVAL);
    ck_assert_int_eq(vm_control_disk_fill(sv[0], 0, "123456789012345678901", b, b, 0, 10, msg,
                                          sizeof(msg)), -EINVAL);
    ck_assert_int_eq(vm_control_disk_fill(sv[0], 0, "a\nb", b, b, 0, 10, msg, sizeof(msg)), -EINVAL);
    ck_assert_int_eq(vm_control_disk_fill(sv[0], 0, "s", -1, b, 0, 10, msg, sizeof(msg)), -EBADF);
    /* no answer: a timeout (the request was sent: the VM end drains it) */
    ck_assert_int_eq(vm_control_disk_empty(sv[0], 0, 10, msg, sizeof(msg)), -ETIMEDOUT);
    ck_assert_int_eq(snap_control_next(sv[1], fds, &n, text, &len), SNAP_CONTROL_DISK);
    /* the VM is gone */
    close(sv[1]);
    int e = vm_control_disk_empty(sv[0], 0, 1000, msg, sizeof(msg));
    ck_assert_msg(e == -ECONNRESET || e == -EPIPE, "%d", e);
    close(sv[0]);
    close(b);
    unlink(base);
}
END_TEST

/* The VM's end takes no request from sock's next message: its one fd
 * (the read end of the pipe whose write end is w) closed everywhere, so
 * that a write sees EPIPE. */
static void refused_fds_closed(int sock, int w)
{
    int fds[SNAP_CONTROL_MAX_FDS];
    unsigned n = 7;
    char text[SNAP_CONTROL_TEXT_MAX];
    size_t len = 0;
    ck_assert_int_eq(snap_control_next(sock, fds, &n, text, &len), -EPROTO);
    ck_assert_uint_eq(n, 0);
    signal(SIGPIPE, SIG_IGN);
    ck_assert_int_eq(write(w, "x", 1), -1);
    ck_assert_int_eq(errno, EPIPE);
    close(w);
}

/* A message longer than any request is not one: its fds are closed. */
START_TEST(vm_end_truncated)
{
    int sv[2];
    pair(sv);
    char big[300];
    memset(big, 'x', sizeof(big));
    memcpy(big, "DISK-FILL 0 s ", 14);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(snap_control_send(sv[0], big, sizeof(big), &p[0], 1), 0);
    close(p[0]);
    refused_fds_closed(sv[1], p[1]);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* More fds than any request carries: no request, every fd closed; and
 * the sending end says why it could not send (errno, not just -EIO):
 * too many fds, or a VM that is gone. */
START_TEST(vm_end_too_many_fds)
{
    int sv[2];
    pair(sv);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    /* one fd more than a request's most, sent as the daemon would not */
    struct {
        struct cmsghdr h;
        int fd[SNAP_CONTROL_MAX_FDS + 1];
    } cm = {.h = {.cmsg_len = CMSG_LEN(sizeof(cm.fd)), .cmsg_level = SOL_SOCKET,
                  .cmsg_type = SCM_RIGHTS}};
    for (unsigned i = 0; i < SNAP_CONTROL_MAX_FDS + 1; i++)
        cm.fd[i] = p[0];
    ck_assert_int_eq(snap_control_send(sv[0], "SNAPSHOT", 8, cm.fd, SNAP_CONTROL_MAX_FDS + 1),
                     -EINVAL);
    struct iovec iov = {.iov_base = "SNAPSHOT", .iov_len = 8};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm,
                        .msg_controllen = sizeof(cm)};
    ck_assert_int_eq(sendmsg(sv[0], &mh, 0), 8);
    close(p[0]);
    refused_fds_closed(sv[1], p[1]);
    /* fds with an empty message: closed with it (0, as when the daemon
     * is gone) */
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(snap_control_send(sv[0], "", 0, &p[0], 1), 0);
    close(p[0]);
    int fds[SNAP_CONTROL_MAX_FDS];
    unsigned n = 7;
    char text[SNAP_CONTROL_TEXT_MAX];
    size_t len = 0;
    ck_assert_int_eq(snap_control_next(sv[1], fds, &n, text, &len), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(write(p[1], "x", 1), -1);
    ck_assert_int_eq(errno, EPIPE);
    close(p[1]);
    /* the VM is gone: the daemon's send fails with the socket's errno */
    close(sv[1]);
    int e = snap_control_send(sv[0], "RESUME", 6, NULL, 0);
    ck_assert_msg(e == -EPIPE || e == -ECONNRESET, "%d", e);
    close(sv[0]);
}
END_TEST

Suite *disk_control_suite(void)
{
    Suite *s = suite_create("disk_control");
    TCase *tc = tcase_create("disk_control");
    tcase_add_test(tc, parse_good);
    tcase_add_test(tc, parse_hostile);
    tcase_add_test(tc, daemon_and_vm_ends);
    tcase_add_test(tc, vm_end_truncated);
    tcase_add_test(tc, vm_end_too_many_fds);
    suite_add_tcase(s, tc);
    return s;
}

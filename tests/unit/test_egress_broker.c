/* vmm/egress/egress_broker.c: the egress decision and connect, the broker
 * process, and its SCM_RIGHTS channel fed hostile input from either side.
 * No network: only IP literals, names not on the allowlist (never looked
 * up; a getaddrinfo wrapper below counts real lookups) and listening
 * sockets this test opens on loopback. */
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/egress/egress_broker.h"

/* ---- counting name lookups --------------------------------------------- */

static atomic_int name_lookups; /* getaddrinfo calls that may ask DNS */

/* Interposes libc's getaddrinfo for this test binary: a call without
 * AI_NUMERICHOST could send the name to a resolver, which for a name not
 * on the allowlist is exactly the leak the broker must not make. */
int getaddrinfo(const char *restrict node, const char *restrict service,
                const struct addrinfo *restrict hints, struct addrinfo **restrict res)
{
    static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    if (!real)
        real = (int (*)(const char *, const char *, const struct addrinfo *,
                        struct addrinfo **))dlsym(RTLD_NEXT, "getaddrinfo");
    if (!hints || !(hints->ai_flags & AI_NUMERICHOST))
        atomic_fetch_add(&name_lookups, 1);
    return real ? real(node, service, hints, res) : EAI_SYSTEM;
}

/* ---- fixture ------------------------------------------------------------ */

static struct egress_policy *pol;
static int lsn = -1, lsn6 = -1;   /* listening on 127.0.0.1 / ::1 */
static int dead = -1, dead6 = -1; /* bound, not listening: refused */
static uint16_t port, port6, dead_port, dead_port6;
static int ctl = -1;
static pid_t broker = -1;

/* A TCP socket on the loopback address of family, listening or just bound;
 * its port in *p.  -1 when the family has no loopback here. */
static int loopback_socket(int family, bool listening, uint16_t *p)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof(*a);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        sl = sizeof(*a);
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || (listening && listen(fd, 8) < 0) ||
        getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        close(fd);
        return -1;
    }
    *p = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                 : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

static void setup(void)
{
    pol = calloc(1, sizeof(*pol));
    ck_assert_ptr_nonnull(pol);
    lsn = loopback_socket(AF_INET, true, &port);
    dead = loopback_socket(AF_INET, false, &dead_port);
    ck_assert_int_ge(lsn, 0);
    ck_assert_int_ge(dead, 0);
    lsn6 = loopback_socket(AF_INET6, true, &port6);
    dead6 = loopback_socket(AF_INET6, false, &dead_port6);
    atomic_store(&name_lookups, 0);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Waits up to 10 s for the broker to exit by itself; its wait status, or
 * -1 after killing it. */
static int reap_broker(void)
{
    int st = -1;
    for (int i = 0; i < 1000; i++) {
        pid_t r = waitpid(broker, &st, WNOHANG);
        if (r == broker || (r < 0 && errno == ECHILD)) {
            broker = -1;
            return st;
        }
        usleep(10000);
    }
    kill(broker, SIGKILL);
    waitpid(broker, NULL, 0);
    broker = -1;
    return -1;
}

static void teardown(void)
{
    close_fd(&ctl);
    if (broker > 0)
        reap_broker();
    close_fd(&lsn);
    close_fd(&lsn6);
    close_fd(&dead);
    close_fd(&dead6);
    free(pol);
}

static void allow_ip(const char *fmt, uint16_t p)
{
    char arg[80], err[256] = "";
    snprintf(arg, sizeof(arg), fmt, p);
    ck_assert_msg(egress_policy_add_cidr(pol, arg, err, sizeof(err)) == 0, "%s: %s", arg, err);
}

static void allow_host(const char *arg)
{
    char err[256] = "";
    ck_assert_msg(egress_policy_add_host(pol, arg, err, sizeof(err)) == 0, "%s: %s", arg, err);
}

/* Accepts fd's connection on listener l and passes a byte each way. */
static void exchange(int fd, int l)
{
    struct pollfd p = {.fd = l, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    struct sockaddr_storage peer, mine;
    socklen_t pl = sizeof(peer), ml = sizeof(mine);
    int a = accept4(l, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
    ck_assert_int_ge(a, 0);
    /* the accepted connection is fd's, not some other one */
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&mine, &ml), 0);
    ck_assert_uint_eq(pl, ml);
    ck_assert(!memcmp(&peer, &mine, pl));
    char c = 0;
    ck_assert_int_eq(write(fd, "x", 1), 1);
    ck_assert_int_eq(read(a, &c, 1), 1);
    ck_assert_int_eq(c, 'x');
    ck_assert_int_eq(write(a, "y", 1), 1);
    ck_assert_int_eq(read(fd, &c, 1), 1);
    ck_assert_int_eq(c, 'y');
    close(a);
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* handed back blocking */
}

static void expect(const struct egress_verdict *v, int fd, int status, const char *reason,
                   const char *addr)
{
    ck_assert_msg(v->status == status, "status %d (%s), want %d", v->status, v->reason, status);
    ck_assert_msg(strstr(v->reason, reason), "reason \"%s\" lacks \"%s\"", v->reason, reason);
    ck_assert_str_eq(v->addr, addr);
    if (status == 200) {
        ck_assert_int_ge(fd, 0);
        ck_assert_str_eq(v->reason, "");
    } else {
        ck_assert_int_eq(fd, -1);
        ck_assert_str_eq(v->rule, "");
    }
}

/* A 200 decided by rule "127.0.0.1:<port>": the socket, close-on-exec,
 * reaches our listener; it is closed after. */
static void expect_connected(const struct egress_verdict *v, int fd)
{
    char want[64];
    snprintf(want, sizeof(want), "127.0.0.1:%u", port);
    expect(v, fd, 200, "", "127.0.0.1");
    ck_assert_str_eq(v->rule, want);
    ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    exchange(fd, lsn);
    close(fd);
}

static void decide(const char *host, uint16_t p, struct egress_verdict *v, int *fd)
{
    memset(v, 0x55, sizeof(*v)); /* stale contents must not survive */
    egress_decide_and_connect(pol, host, p, v, fd);
}

/* ---- the decision, in this process ------------------------------------ */

START_TEST(unlisted_name_not_looked_up)
{
    struct egress_verdict v;
    int fd;
    allow_host("example.com");
    allow_host("*.example.org:*");
    static const char *const names[] = {
        "unlisted.invalid", "example.com.invalid", "example.org", "localhost",
        "127.1",            "2130706433",          "0x7f.1",      "",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        decide(names[i], 443, &v, &fd);
        expect(&v, fd, 403, "not on the allowlist", "");
    }
    decide("example.com", 80, &v, &fd); /* listed, other port */
    expect(&v, fd, 403, "not on the allowlist", "");
    ck_assert_int_eq(atomic_load(&name_lookups), 0);
}
END_TEST

START_TEST(loopback_literal_denied)
{
    struct egress_verdict v;
    int fd;
    allow_host("127.0.0.2:*"); /* a neighbour's address grants nothing */
    decide("127.0.0.1", port, &v, &fd);
    expect(&v, fd, 403, "loopback", "127.0.0.1");
    ck_assert_ptr_nonnull(strstr(v.reason, "127.0.0.1"));
    decide("0.0.0.0", port, &v, &fd); /* reaches this host on Linux */
    expect(&v, fd, 403, "unspecified", "0.0.0.0");
    decide("::ffff:127.0.0.1", port, &v, &fd);
    expect(&v, fd, 403, "loopback", "::ffff:127.0.0.1");
    decide("169.254.169.254", 80, &v, &fd);
    expect(&v, fd, 403, "link-local", "169.254.169.254");
    ck_assert_int_eq(atomic_load(&name_lookups), 0);
    /* nothing reached the listener */
    struct pollfd p = {.fd = lsn, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 0), 0);
}
END_TEST

START_TEST(allowed_literal_connects)
{
    struct egress_verdict v;
    int fd;
    allow_ip("127.0.0.1:%u", port);
    decide("127.0.0.1", port, &v, &fd);
    expect_connected(&v, fd);
    decide("127.0.0.1", (uint16_t)(port + 1), &v, &fd); /* right address, other port */
    expect(&v, fd, 403, "loopback", "127.0.0.1");
    ck_assert_int_eq(atomic_load(&name_lookups), 0);

    /* the IPv4-mapped form of the same address is the same address */
    if (lsn6 < 0) { /* no IPv6 sockets: no mapped addresses either */
        unit_skip("no IPv6 sockets on this host: the IPv4-mapped ::ffff:127.0.0.1 case not run");
        return;
    }
    decide("::ffff:127.0.0.1", port, &v, &fd);
    expect(&v, fd, 200, "", "::ffff:127.0.0.1");
    ck_assert_str_eq(v.rule, pol->rules[0].text);
    close(fd);
    struct pollfd p = {.fd = lsn, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    int a = accept(lsn, NULL, NULL);
    ck_assert_int_ge(a, 0);
    close(a);

}
END_TEST

START_TEST(allowed_but_refused)
{
    struct egress_verdict v;
    int fd;
    allow_ip("127.0.0.1:*", 0);
    decide("127.0.0.1", dead_port, &v, &fd);
    expect(&v, fd, 502, "Connection refused", "127.0.0.1");
    ck_assert_str_eq(v.rule, "");
}
END_TEST

START_TEST(ipv6_loopback)
{
    if (lsn6 < 0 || dead6 < 0) {
        unit_skip("no IPv6 loopback (::1) on this host");
        return;
    }
    struct egress_verdict v;
    int fd;
    char want[64];
    decide("::1", port6, &v, &fd);
    expect(&v, fd, 403, "loopback", "::1");

    allow_ip("[::1]:%u", port6);
    snprintf(want, sizeof(want), "[::1]:%u", port6);
    decide("::1", port6, &v, &fd);
    expect(&v, fd, 200, "", "::1");
    ck_assert_str_eq(v.rule, want);
    exchange(fd, lsn6);
    close(fd);

    decide("0:0:0:0:0:0:0:1", port6, &v, &fd); /* another spelling */
    expect(&v, fd, 200, "", "::1");
    close(fd);
    int a = accept(lsn6, NULL, NULL);
    ck_assert_int_ge(a, 0);
    close(a);

    decide("::1", (uint16_t)(port6 + 1), &v, &fd);
    expect(&v, fd, 403, "loopback", "::1");
    allow_ip("[::1]:%u", dead_port6);
    decide("::1", dead_port6, &v, &fd);
    expect(&v, fd, 502, "Connection refused", "::1");
    ck_assert_int_eq(atomic_load(&name_lookups), 0);
}
END_TEST

/* ---- the broker process ------------------------------------------------ */

static void start_broker(void)
{
    broker = unit_start_broker(pol, -1, &ctl);
}

/* Closing the control socket ends the broker; it exits 0 and is reaped. */
static void stop_broker(void)
{
    close_fd(&ctl);
    int st = reap_broker();
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "broker did not exit cleanly (status %#x)", st);
}

static void ask(const char *host, uint16_t p, struct egress_verdict *v, int *fd)
{
    memset(v, 0x55, sizeof(*v));
    ck_assert_int_eq(egress_broker_connect(ctl, host, p, true, 1, v, fd), 0);
}

/* The broker still answers a good request. */
static void still_serving(void)
{
    struct egress_verdict v;
    int fd;
    ask("127.0.0.1", port, &v, &fd);
    expect_connected(&v, fd);
}

START_TEST(broker_decides)
{
    allow_ip("127.0.0.1:%u", port);
    start_broker();
    struct egress_verdict v;
    int fd;
    ask("127.0.0.1", port, &v, &fd);
    expect_connected(&v, fd);

    ask("127.0.0.1", (uint16_t)(port + 1), &v, &fd);
    expect(&v, fd, 403, "loopback", "127.0.0.1");
    ask("unlisted.invalid", 443, &v, &fd);
    expect(&v, fd, 403, "not on the allowlist", "");

    char name[EGRESS_HOST_MAX + 2];
    memset(name, 'a', sizeof(name));
    name[EGRESS_HOST_MAX] = 0; /* the longest name goes to the broker */
    ask(name, 443, &v, &fd);
    expect(&v, fd, 403, "aaaa", ""); /* the name fills the reason */
    ck_assert_uint_eq(strlen(v.reason), sizeof(v.reason) - 1);
    name[EGRESS_HOST_MAX] = 'a';
    name[EGRESS_HOST_MAX + 1] = 0; /* one more is refused without asking */
    memset(&v, 0x55, sizeof(v));
    ck_assert_int_eq(egress_broker_connect(-1, name, 443, true, 1, &v, &fd), 0);
    expect(&v, fd, 403, "too long", "");
    ask(name, 443, &v, &fd);
    expect(&v, fd, 403, "too long", "");

    still_serving();
    stop_broker();
}
END_TEST

/* The broker resolves an allowed name with its seccomp filter on (the
 * files, nsswitch and resolver calls glibc makes are on its list): the
 * name comes from /etc/hosts here, and "localhost" is there on any host
 * we run on.  A filter missing one of those calls kills the broker, and
 * the answer is then "did not answer", not 200. */
START_TEST(broker_resolves_under_filter)
{
    char rule[64];
    snprintf(rule, sizeof(rule), "localhost:%u", port);
    allow_host(rule);
    allow_ip("127.0.0.1:%u", port); /* the address localhost has */
    start_broker();
    struct egress_verdict v;
    int fd;
    ask("localhost", port, &v, &fd);
    expect_connected(&v, fd);
    still_serving();
    stop_broker(); /* exits 0: not killed by its filter on the way */
}
END_TEST

/* Sends one message with nfd descriptors attached; bytes sent or -1.  No
 * ck_assert here or in recv_fd: the fake broker thread uses them. */
static ssize_t send_fds(int sock, const void *buf, size_t len, const int *fds, int nfd)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(8 * sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfd) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.space;
        mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfd * sizeof(int));
    }
    return sendmsg(sock, &mh, MSG_NOSIGNAL);
}

#define SEND_FDS(sock, buf, len, fds, nfd) \
    ck_assert_int_eq(send_fds((sock), (buf), (len), (fds), (nfd)), (ssize_t)(len))

/* Receives one message (5 s at most) and at most one descriptor; bytes,
 * or -1. */
static ssize_t recv_fd(int sock, void *buf, size_t len, int *fd)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    *fd = -1;
    if (poll(&p, 1, 5000) != 1)
        return -1;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.space,
                        .msg_controllen = sizeof(cm.space)};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (n >= 0 && c && c->cmsg_type == SCM_RIGHTS)
        memcpy(fd, CMSG_DATA(c), sizeof(int));
    return n;
}

/* The broker's request layout (private to egress_broker.c). */
struct req {
    uint64_t conn;
    uint16_t port;
    uint8_t tunnel;
    char host[EGRESS_HOST_MAX + 1];
};

/* A raw request on a fresh channel passed as egress_broker_connect does;
 * extra (if >= 0) rides along with the request.  The broker's answer; a
 * socket that came with it (200 only) is closed. */
static struct egress_verdict raw_request(const void *msg, size_t len, int extra)
{
    int ch[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch), 0);
    SEND_FDS(ctl, "r", 1, &ch[1], 1);
    close(ch[1]);
    SEND_FDS(ch[0], msg, len, &extra, extra >= 0);
    struct egress_verdict v;
    int fd;
    ck_assert_int_eq(recv_fd(ch[0], &v, sizeof(v), &fd), (ssize_t)sizeof(v));
    ck_assert_int_eq(fd >= 0, v.status == 200);
    close_fd(&fd);
    close(ch[0]);
    return v;
}

/* The read end of a pipe whose write end only the broker holds sees EOF
 * once the broker closed it. */
static void broker_closed(int rd)
{
    struct pollfd p = {.fd = rd, .events = POLLIN};
    ck_assert_msg(poll(&p, 1, 5000) == 1, "the broker kept a descriptor");
    char c;
    ck_assert_int_eq(read(rd, &c, 1), 0);
    close(rd);
}

START_TEST(broker_hostile_requests)
{
    allow_ip("127.0.0.1:%u", port);
    start_broker();
    struct egress_verdict v;
    struct req r = {.port = port};
    snprintf(r.host, sizeof(r.host), "127.0.0.1");

    v = raw_request(&r, 3, -1); /* short */
    expect(&v, -1, 502, "malformed", "");
    still_serving();
    v = raw_request("", 0, -1); /* empty */
    expect(&v, -1, 502, "malformed", "");
    still_serving();

    struct req nonul = {.port = port};
    memset(nonul.host, '1', sizeof(nonul.host));
    v = raw_request(&nonul, sizeof(nonul), -1); /* host without NUL */
    expect(&v, -1, 502, "malformed", "");
    still_serving();

    struct req zero = r;
    zero.port = 0;
    v = raw_request(&zero, sizeof(zero), -1);
    expect(&v, -1, 502, "malformed", "");
    still_serving();

    char big[sizeof(r) + 16] = {0};
    memcpy(big, &r, sizeof(r));
    v = raw_request(big, sizeof(big), -1); /* longer than a request */
    expect(&v, -1, 502, "malformed", "");
    still_serving();

    /* A good request with a descriptor attached: served, descriptor shut. */
    int pp[2];
    ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
    v = raw_request(&r, sizeof(r), pp[1]);
    close(pp[1]);
    ck_assert_int_eq(v.status, 200);
    broker_closed(pp[0]);
    int a = accept(lsn, NULL, NULL);
    ck_assert_int_ge(a, 0);
    close(a);
    still_serving();
    stop_broker();
}
END_TEST

START_TEST(broker_hostile_control)
{
    allow_ip("127.0.0.1:%u", port);
    start_broker();
    struct egress_verdict v;
    int fd;

    SEND_FDS(ctl, "r", 1, NULL, 0); /* no channel */
    still_serving();

    /* Two descriptors: the first is the channel, the second is closed. */
    int ch[2], pp[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch), 0);
    ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
    int two[2] = {ch[1], pp[1]};
    SEND_FDS(ctl, "r", 1, two, 2);
    close(ch[1]);
    close(pp[1]);
    broker_closed(pp[0]);
    struct req r = {.port = port};
    snprintf(r.host, sizeof(r.host), "unlisted.invalid");
    SEND_FDS(ch[0], &r, sizeof(r), NULL, 0);
    ck_assert_int_eq(recv_fd(ch[0], &v, sizeof(v), &fd), (ssize_t)sizeof(v));
    expect(&v, fd, 403, "not on the allowlist", "");
    close(ch[0]);

    /* More descriptors than the broker takes, and a longer message: the
     * message is dropped with every descriptor, the broker goes on. */
    int many[6];
    ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
    for (int i = 0; i < 6; i++)
        many[i] = pp[1];
    SEND_FDS(ctl, "r", 1, many, 6);
    ck_assert_int_eq(pipe2(ch, O_CLOEXEC), 0);
    SEND_FDS(ctl, "rr", 2, &ch[1], 1);
    close(pp[1]);
    close(ch[1]);
    broker_closed(pp[0]);
    broker_closed(ch[0]);
    still_serving();

    stop_broker();
}
END_TEST

/* A broker that died: the VM side gets an error and a 502, no fd. */
START_TEST(broker_gone)
{
    start_broker();
    kill(broker, SIGKILL);
    int st = reap_broker();
    ck_assert(WIFSIGNALED(st));
    struct egress_verdict v;
    int fd;
    memset(&v, 0x55, sizeof(v));
    ck_assert_int_lt(egress_broker_connect(ctl, "127.0.0.1", port, true, 1, &v, &fd), 0);
    ck_assert_int_eq(v.status, 502);
    ck_assert_int_eq(fd, -1);
}
END_TEST

/* ---- a hostile broker: the VM side trusts nothing it answers ----------- */

enum fake_answer { FAKE_200_NO_FD, FAKE_403_WITH_FD, FAKE_SHORT, FAKE_UNTERMINATED, FAKE_HANGUP };

struct fake {
    int ctl;
    enum fake_answer how;
    int pipe_rd; /* FAKE_403_WITH_FD: the other end of the fd sent */
};

static void *fake_broker(void *arg)
{
    struct fake *f = arg;
    char b;
    int chan, fd;
    struct req r;
    if (recv_fd(f->ctl, &b, 1, &chan) != 1 || chan < 0)
        return NULL;
    recv_fd(chan, &r, sizeof(r), &fd);
    struct egress_verdict v;
    memset(&v, 'A', sizeof(v));
    v.status = 403;
    int pp[2];
    switch (f->how) {
    case FAKE_200_NO_FD:
        v.status = 200;
        send_fds(chan, &v, sizeof(v), NULL, 0);
        break;
    case FAKE_403_WITH_FD:
        if (pipe2(pp, O_CLOEXEC) == 0) {
            f->pipe_rd = pp[0];
            send_fds(chan, &v, sizeof(v), &pp[1], 1);
            close(pp[1]);
        }
        break;
    case FAKE_SHORT:
        send_fds(chan, &v, 10, NULL, 0);
        break;
    case FAKE_UNTERMINATED:
        send_fds(chan, &v, sizeof(v), NULL, 0);
        break;
    case FAKE_HANGUP:
        break;
    }
    close(chan);
    return NULL;
}

static int fake_ask(enum fake_answer how, struct egress_verdict *v, int *fd, int *pipe_rd)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    struct fake f = {.ctl = sv[1], .how = how, .pipe_rd = -1};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fake_broker, &f), 0);
    int rc = egress_broker_connect(sv[0], "127.0.0.1", 443, true, 1, v, fd);
    pthread_join(t, NULL);
    close(sv[0]);
    close(sv[1]);
    *pipe_rd = f.pipe_rd;
    return rc;
}

/* An answer the VM side must refuse: -EPROTO, 502, no fd.  The read end
 * of the pipe the fake sent along, or -1. */
static int fake_refused(enum fake_answer how)
{
    struct egress_verdict v;
    int fd, rd;
    ck_assert_int_eq(fake_ask(how, &v, &fd, &rd), -EPROTO);
    ck_assert_int_eq(v.status, 502);
    ck_assert_int_eq(fd, -1);
    return rd;
}

START_TEST(hostile_broker_answers)
{
    fake_refused(FAKE_200_NO_FD);
    fake_refused(FAKE_SHORT);
    fake_refused(FAKE_HANGUP);
    int rd = fake_refused(FAKE_403_WITH_FD);
    ck_assert_int_ge(rd, 0);
    struct pollfd p = {.fd = rd, .events = POLLIN};
    ck_assert_msg(poll(&p, 1, 5000) == 1, "the stray fd was kept");
    close(rd);

    struct egress_verdict v;
    int fd;
    ck_assert_int_eq(fake_ask(FAKE_UNTERMINATED, &v, &fd, &rd), 0);
    ck_assert_int_eq(v.status, 403);
    ck_assert_int_eq(fd, -1);
    ck_assert_uint_eq(strlen(v.reason), sizeof(v.reason) - 1);
    ck_assert_uint_eq(strlen(v.rule), sizeof(v.rule) - 1);
    ck_assert_uint_eq(strlen(v.addr), sizeof(v.addr) - 1);
}
END_TEST

Suite *egress_broker_suite(void)
{
    Suite *s = suite_create("egress_broker");
    TCase *tc = tcase_create("decide");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unlisted_name_not_looked_up);
    tcase_add_test(tc, loopback_literal_denied);
    tcase_add_test(tc, allowed_literal_connects);
    tcase_add_test(tc, allowed_but_refused);
    tcase_add_test(tc, ipv6_loopback);
    suite_add_tcase(s, tc);
    tc = tcase_create("broker");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, broker_decides);
    tcase_add_test(tc, broker_resolves_under_filter);
    tcase_add_test(tc, broker_hostile_requests);
    tcase_add_test(tc, broker_hostile_control);
    tcase_add_test(tc, broker_gone);
    tcase_add_test(tc, hostile_broker_answers);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

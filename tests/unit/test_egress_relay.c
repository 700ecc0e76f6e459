/* The egress relay (vmm/egress/egress.c) end to end on this host: a guest
 * connection from egress_accept, a fake broker that allows one host and
 * hands out a socketpair as "the server", and what that server receives. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vmm/audit/audit.h"
#include "vmm/egress/egress.h"
#include "vmm/egress/egress_broker.h"
#include "vmm/jail/fdpass.h"
#include "vmm/jail/seccomp.h"

static int ctl[2];
static _Atomic int server = -1; /* the allowed upstream's far end */
static atomic_uint asked_evil;  /* requests that named the other host */

/* Answers like the broker: 200 with a socket for allowed.test, else 403. */
static void *fake_broker(void *arg)
{
    (void)arg;
    for (;;) {
        char r;
        int ch;
        if (fdpass_recv(ctl[1], &r, 1, &ch) != 1 || ch < 0)
            return NULL;
        char req[512] = {0};
        int none;
        ssize_t n = fdpass_recv(ch, req, sizeof(req) - 1, &none);
        struct egress_verdict v = {.status = 403};
        int srv[2] = {-1, -1};
        if (n > 0 && memmem(req, (size_t)n, "allowed.test", 12) &&
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, srv) == 0) {
            v.status = 200;
            strcpy(v.rule, "allowed.test");
            strcpy(v.addr, "192.0.2.1");
        } else {
            atomic_fetch_add(&asked_evil, 1);
            strcpy(v.reason, "not allowed");
        }
        fdpass_send(ch, &v, sizeof(v), srv[0]);
        if (srv[0] >= 0) {
            close(srv[0]);
            atomic_store(&server, srv[1]);
        }
        close(ch);
    }
}

/* What arrives on fd within ms (fd stays open). */
static size_t read_for(int fd, char *buf, size_t cap, int ms)
{
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < cap && poll(&p, 1, ms) == 1) {
        ssize_t n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static const char pipelined[] =
    "POST http://allowed.test/up HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n\r\nhello"
    "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n";

START_TEST(pipelined_request_to_another_host_never_reaches_upstream)
{
    seccomp_set_mode(SECCOMP_MODE_OFF); /* the relay threads run the unit test's code */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl), 0);
    pthread_t bt;
    ck_assert_int_eq(pthread_create(&bt, NULL, fake_broker, NULL), 0);
    static struct egress_config cfg = {.max_conns = 4, .max_bytes = 1 << 20, .rate_per_min = 60,
                                       .quiet = true};
    static struct audit au;
    static struct egress e;
    audit_none(&au);
    ck_assert_int_eq(egress_init(&e, &cfg, &au, ctl[0]), 0);
    ck_assert_int_eq(egress_start(&e), 0);
    int g = egress_accept(&e);
    ck_assert_int_ge(g, 0);
    ck_assert_int_eq(send(g, pipelined, sizeof(pipelined) - 1, MSG_NOSIGNAL),
                     (ssize_t)sizeof(pipelined) - 1);
    for (int i = 0; i < 500 && atomic_load(&server) < 0; i++)
        usleep(10000);
    int s = atomic_load(&server);
    ck_assert_int_ge(s, 0);
    char got[4096];
    size_t n = read_for(s, got, sizeof(got) - 1, 500);
    got[n] = 0;
    /* The first request, with its body, and nothing after it. */
    ck_assert_ptr_nonnull(strstr(got, "POST /up HTTP/1.1\r\nHost: allowed.test\r\n"));
    ck_assert_msg(n >= 5 && !memcmp(got + n - 5, "hello", 5), "the body did not end the stream: %s", got);
    ck_assert_msg(!strstr(got, "evil.test"), "the pipelined request reached the upstream: %s", got);
    static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    ck_assert_int_eq(send(s, resp, sizeof(resp) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(resp) - 1);
    close(s);
    n = read_for(g, got, sizeof(got) - 1, 2000);
    got[n] = 0;
    ck_assert_ptr_nonnull(strstr(got, "\r\n\r\nok"));
    close(g);
    egress_stop(&e);
    ck_assert_uint_eq(atomic_load(&asked_evil), 0);
    close(ctl[0]);
    pthread_join(bt, NULL);
    close(ctl[1]);
    seccomp_set_mode(SECCOMP_MODE_KILL);
}
END_TEST

Suite *egress_relay_suite(void)
{
    Suite *s = suite_create("egress_relay");
    TCase *tc = tcase_create("relay");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, pipelined_request_to_another_host_never_reaches_upstream);
    suite_add_tcase(s, tc);
    return s;
}

/* vmm/egress/egress_live.c: a sandbox's allowlist replaced while it runs.
 * The real broker process, under its filter, with the daemon's channel:
 * an open connection the new list does not admit is cut (both ends see
 * it close), one it still admits stays, new requests follow the new list,
 * a bad list changes nothing; and in this process, a connection decided
 * under a list that was replaced before it was handed out is checked
 * again, and the secrets' hosts stay in every list.  No network: loopback
 * listeners this test opens, admitted by --allow-ip rules. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/egress/egress_broker.h"
#include "vmm/egress/egress_live.h"
#include "vmm/egress/egress_rules.h"

static struct egress_policy *pol;
static int lsn[2] = {-1, -1}; /* two listeners on 127.0.0.1 */
static uint16_t port[2];
static int ctl = -1, upd = -1; /* the broker's request socket; the daemon's channel */

static int listener(uint16_t *p)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sl), 0);
    ck_assert_int_eq(listen(fd, 8), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &sl), 0);
    *p = ntohs(a.sin_port);
    return fd;
}

static void setup(void)
{
    pol = calloc(1, sizeof(*pol));
    ck_assert_ptr_nonnull(pol);
    for (int i = 0; i < 2; i++)
        lsn[i] = listener(&port[i]);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static pid_t broker = -1;

static void teardown(void)
{
    close_fd(&upd);
    close_fd(&ctl); /* the broker exits: reaped here, or killed after 10 s */
    for (int i = 0; broker > 0 && i < 1000; i++) {
        pid_t r = waitpid(broker, NULL, WNOHANG);
        if (r == broker || r < 0)
            broker = -1;
        else
            usleep(10000);
    }
    if (broker > 0) {
        kill(broker, SIGKILL);
        waitpid(broker, NULL, 0);
        broker = -1;
    }
    for (int i = 0; i < 2; i++)
        close_fd(&lsn[i]);
    free(pol);
}

/* "127.0.0.1:<port of listener i>" */
static const char *rule_for(int i)
{
    static char r[2][32];
    snprintf(r[i], sizeof(r[i]), "127.0.0.1:%u", port[i]);
    return r[i];
}

/* The daemon's side: this allowlist (allow_ip rules) to the broker. */
static int replace(const char *const *ip, size_t n, struct egress_rules_answer *a)
{
    char *msg = malloc(EGRESS_RULES_MSG_MAX);
    ck_assert_ptr_nonnull(msg);
    ssize_t len = egress_rules_encode(msg, EGRESS_RULES_MSG_MAX, NULL, 0, ip, n);
    ck_assert_int_gt(len, 0);
    memset(a, 0x55, sizeof(*a));
    int rc = egress_rules_exchange(upd, msg, (size_t)len, 5000, a);
    free(msg);
    return rc;
}

/* One byte from fd within 5 s (a hang is a failure that says where). */
static void read1(int fd, char want)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c = 0;
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    ck_assert_int_eq(read(fd, &c, 1), 1);
    ck_assert_int_eq(c, want);
}

/* Asks the broker for listener i as the VM side would; accepts the
 * connection there and passes a byte each way.  *peer: the server's end. */
static int open_to(int i, uint64_t conn, int *peer)
{
    struct egress_verdict v;
    int fd;
    ck_assert_int_eq(egress_broker_connect(ctl, "127.0.0.1", port[i], true, conn, &v, &fd), 0);
    ck_assert_msg(v.status == 200, "status %d: %s", v.status, v.reason);
    struct pollfd p = {.fd = lsn[i], .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    *peer = accept4(lsn[i], NULL, NULL, SOCK_CLOEXEC);
    ck_assert_int_ge(*peer, 0);
    ck_assert_int_eq(write(fd, "x", 1), 1);
    read1(*peer, 'x');
    ck_assert_int_eq(write(*peer, "y", 1), 1);
    read1(fd, 'y');
    return fd;
}

static void refused(int i, const char *why)
{
    struct egress_verdict v;
    int fd;
    ck_assert_int_eq(egress_broker_connect(ctl, "127.0.0.1", port[i], true, 99, &v, &fd), 0);
    ck_assert_msg(v.status == 403 && fd < 0, "status %d: %s", v.status, v.reason);
    ck_assert_msg(strstr(v.reason, why), "\"%s\" lacks \"%s\"", v.reason, why);
}

/* fd's connection has ended: EOF within 5 s (no byte of it). */
static bool ended(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;
    return poll(&p, 1, 5000) == 1 && read(fd, &c, 1) <= 0;
}

/* ... or is still open: nothing to read, no hangup. */
static bool still_open(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 200) == 0;
}

START_TEST(broker_cuts_what_the_new_list_drops)
{
    char why[200];
    ck_assert_int_eq(egress_policy_add_cidr(pol, rule_for(0), why, sizeof(why)), 0);
    ck_assert_int_eq(egress_policy_add_cidr(pol, rule_for(1), why, sizeof(why)), 0);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    upd = sv[0];
    broker = unit_start_broker(pol, sv[1], &ctl);
    ck_assert_int_eq(fcntl(sv[1], F_GETFD), -1); /* the channel is the broker's alone */

    int p0, p1, p2;
    int c0 = open_to(0, 7, &p0), c1 = open_to(1, 8, &p1), c2 = open_to(1, 9, &p2);
    /* conn 9 ends as the VM side ends one: shut down, closed */
    shutdown(c2, SHUT_RDWR);
    close(c2);
    ck_assert(ended(p2));

    struct egress_rules_answer a;
    const char *only0[] = {rule_for(0)};
    ck_assert_int_eq(replace(only0, 1, &a), 0);
    ck_assert_msg(a.rc == 0, "%s", a.err);
    ck_assert_uint_eq(a.nrules, 1);
    ck_assert_uint_eq(a.ncut, 1); /* 8, not 9, which had ended, nor 7, still admitted */
    ck_assert_uint_eq(a.cut[0], 8);
    ck_assert(ended(c1)); /* the VM side's copy, */
    ck_assert(ended(p1)); /* and the server's end */
    ck_assert(still_open(c0) && still_open(p0));
    ck_assert_int_eq(write(c0, "z", 1), 1); /* and it still carries bytes */
    read1(p0, 'z');
    refused(1, "not on the allowlist");
    close(c1);

    /* an empty list: egress is off, and what was open goes */
    ck_assert_int_eq(replace(NULL, 0, &a), 0);
    ck_assert(a.rc == 0 && a.nrules == 0 && a.ncut == 1 && a.cut[0] == 7);
    ck_assert(ended(c0) && ended(p0));
    refused(0, "egress is off");
    close(c0);

    /* back again: reachable */
    const char *both[] = {rule_for(0), rule_for(1)};
    ck_assert_int_eq(replace(both, 2, &a), 0);
    ck_assert(a.rc == 0 && a.nrules == 2 && a.ncut == 0);
    int p3, c3 = open_to(1, 10, &p3);

    /* a bad list changes nothing, and says why */
    static const char bad[] = "EGRESS-RULES\nallow-ip 10.1.2.3/8\n";
    ck_assert_int_eq(egress_rules_exchange(upd, bad, sizeof(bad) - 1, 5000, &a), 0);
    ck_assert_int_eq(a.rc, -EINVAL);
    ck_assert_ptr_nonnull(strstr(a.err, "allow_ip '10.1.2.3/8'"));
    ck_assert(still_open(c3));
    /* ... nor does one longer than any allowlist (cut by the socket) */
    char *huge = calloc(1, EGRESS_RULES_MSG_MAX + 100);
    memcpy(huge, bad, sizeof(bad) - 1);
    ck_assert_int_eq(egress_rules_exchange(upd, huge, EGRESS_RULES_MSG_MAX + 100, 5000, &a), 0);
    free(huge);
    ck_assert_int_eq(a.rc, -EINVAL);
    ck_assert_ptr_nonnull(strstr(a.err, "longer than"));
    int p4, c4 = open_to(0, 11, &p4);
    ck_assert(still_open(c3));
    close(c3);
    close(c4);
    close(p3);
    close(p4);
    close(p0);
    close(p1);
    close(p2);

    /* the daemon gone: the broker keeps serving with the list it has */
    close_fd(&upd);
    int p5, c5 = open_to(1, 12, &p5);
    close(c5);
    close(p5);
}
END_TEST

/* ---- in this process ---------------------------------------------------- */

static int chan[2] = {-1, -1};

static void live_setup(void)
{
    setup();
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan), 0);
}

static void live_teardown(void)
{
    close_fd(&chan[0]); /* the serving thread ends on EOF and closes chan[1] */
    teardown();
}

START_TEST(replaced_while_connecting)
{
    char why[200];
    ck_assert_int_eq(egress_policy_add_cidr(pol, rule_for(0), why, sizeof(why)), 0);
    ck_assert_int_eq(egress_live_init(pol, NULL, true), 0);
    ck_assert_int_eq(egress_live_serve(chan[1]), 0);
    upd = chan[0];
    chan[0] = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port[0]),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);

    /* decided under the first list, which is replaced before the hand-over */
    const struct egress_policy *held = egress_live_hold();
    ck_assert_uint_eq(held->n, 1);
    struct egress_rules_answer ans;
    const char *other[] = {rule_for(1)};
    ck_assert_int_eq(replace(other, 1, &ans), 0);
    ck_assert(ans.rc == 0 && ans.ncut == 0);
    ck_assert_uint_eq(held->n, 1); /* a held list is never changed under its decision */
    ck_assert_int_eq(egress_live_admit(held, "127.0.0.1", port[0], "127.0.0.1", 5, fd, why,
                                       sizeof(why)), -EACCES);
    ck_assert_msg(strstr(why, "the allowlist changed"), "%s", why);
    egress_live_release(held);

    /* decided under the list in force: admitted, and kept to be cut */
    const char *first[] = {rule_for(0)};
    ck_assert_int_eq(replace(first, 1, &ans), 0);
    held = egress_live_hold();
    ck_assert_int_eq(egress_live_admit(held, "127.0.0.1", port[0], "127.0.0.1", 6, fd, why,
                                       sizeof(why)), 0);
    egress_live_release(held);
    /* a stale one that the list in force still admits stays too */
    held = egress_live_hold();
    ck_assert_int_eq(replace(first, 1, &ans), 0);
    ck_assert_uint_eq(ans.ncut, 0);
    int fd2 = dup(fd);
    ck_assert_int_eq(egress_live_admit(held, "127.0.0.1", port[0], "127.0.0.1", 7, fd2, why,
                                       sizeof(why)), 0);
    egress_live_release(held);
    ck_assert_int_eq(replace(NULL, 0, &ans), 0);
    ck_assert_uint_eq(ans.ncut, 2);
    ck_assert(ans.cut[0] + ans.cut[1] == 13);
    ck_assert(ended(fd));
    close(fd);
    close(fd2);
}
END_TEST

START_TEST(secrets_hosts_stay)
{
    static struct secret_set set;
    memset(&set, 0, sizeof(set));
    set.n = 2;
    snprintf(set.s[0].name, sizeof(set.s[0].name), "API");
    snprintf(set.s[0].host, sizeof(set.s[0].host), "api.example.com");
    set.s[0].port = 443;
    snprintf(set.s[1].name, sizeof(set.s[1].name), "LOCAL");
    snprintf(set.s[1].host, sizeof(set.s[1].host), "10.9.8.7");
    set.s[1].port = 8443;
    ck_assert_int_eq(egress_live_init(pol, &set, true), 0);
    ck_assert_int_eq(egress_live_serve(chan[1]), 0);
    upd = chan[0];
    chan[0] = -1;
    struct egress_rules_answer a;
    ck_assert_int_eq(replace(NULL, 0, &a), 0);
    ck_assert_msg(a.rc == 0, "%s", a.err);
    ck_assert_uint_eq(a.nrules, 2);
    const struct egress_policy *p = egress_live_hold();
    ck_assert_ptr_nonnull(egress_match_name(p, "api.example.com", 443));
    ck_assert_str_eq(p->rules[1].text, "10.9.8.7:8443");
    egress_live_release(p);
    /* the list's own rule for a secret's host is not doubled */
    const char *ip[] = {"10.0.0.0/8:*"};
    char *msg = malloc(EGRESS_RULES_MSG_MAX);
    const char *allow[] = {"api.example.com"};
    ssize_t len = egress_rules_encode(msg, EGRESS_RULES_MSG_MAX, allow, 1, ip, 1);
    ck_assert_int_eq(egress_rules_exchange(upd, msg, (size_t)len, 5000, &a), 0);
    ck_assert_uint_eq(a.nrules, 3); /* api.example.com, 10.0.0.0/8, 10.9.8.7 (a literal: always) */
    /* with them, past the most rules a policy holds: refused whole */
    const char *many[EGRESS_MAX_RULES];
    char names[EGRESS_MAX_RULES][32];
    for (unsigned i = 0; i < EGRESS_MAX_RULES; i++) {
        snprintf(names[i], sizeof(names[i]), "h%u.example", i);
        many[i] = names[i];
    }
    len = egress_rules_encode(msg, EGRESS_RULES_MSG_MAX, many, EGRESS_MAX_RULES, NULL, 0);
    ck_assert_int_eq(egress_rules_exchange(upd, msg, (size_t)len, 5000, &a), 0);
    free(msg);
    ck_assert_int_eq(a.rc, -E2BIG);
    ck_assert_ptr_nonnull(strstr(a.err, "secret API"));
    p = egress_live_hold();
    ck_assert_uint_eq(p->n, 3); /* the last good one stays */
    egress_live_release(p);
}
END_TEST

Suite *egress_live_suite(void)
{
    Suite *s = suite_create("egress_live");
    TCase *tc = tcase_create("broker");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, broker_cuts_what_the_new_list_drops);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("in_process");
    tcase_add_checked_fixture(tc, live_setup, live_teardown);
    tcase_add_test(tc, replaced_while_connecting);
    tcase_add_test(tc, secrets_hosts_stay);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

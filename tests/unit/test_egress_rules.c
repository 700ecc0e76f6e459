/* vmm/egress/egress_rules.c: a sandbox's new allowlist as the daemon
 * sends it and the broker reads it (hostile bytes included: the broker
 * trusts nothing on the channel), and the daemon's wait for the answer
 * against a broker that answers wrong or not at all. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/egress/egress_rules.h"

static struct egress_policy *pol;
static char *buf;
static char err[512];

static void setup(void)
{
    pol = calloc(1, sizeof(*pol));
    buf = malloc(EGRESS_RULES_MSG_MAX + 64);
    ck_assert_ptr_nonnull(pol);
    ck_assert_ptr_nonnull(buf);
    err[0] = 0;
}

static void teardown(void)
{
    free(pol);
    free(buf);
}

static int decode(const char *msg)
{
    return egress_rules_decode(msg, strlen(msg), pol, err, sizeof(err));
}

START_TEST(round_trip)
{
    const char *allow[] = {"pypi.org", "*.pythonhosted.org:*", "1.2.3.4:80"};
    const char *ip[] = {"10.0.0.0/8:443", "[fd00::/8]:8443"};
    ssize_t n = egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, allow, 3, ip, 2);
    ck_assert_int_gt(n, 0);
    static const char want[] = "EGRESS-RULES\nallow pypi.org\nallow *.pythonhosted.org:*\n"
                               "allow 1.2.3.4:80\nallow-ip 10.0.0.0/8:443\nallow-ip [fd00::/8]:8443\n";
    ck_assert_uint_eq((size_t)n, sizeof(want) - 1);
    ck_assert(!memcmp(buf, want, sizeof(want) - 1));
    ck_assert_int_eq(egress_rules_decode(buf, (size_t)n, pol, err, sizeof(err)), 0);
    ck_assert_uint_eq(pol->n, 5);
    ck_assert_int_eq(pol->rules[0].kind, EGRESS_RULE_HOST);
    ck_assert_str_eq(pol->rules[0].host, "pypi.org");
    ck_assert_uint_eq(pol->rules[0].port, 443);
    ck_assert_int_eq(pol->rules[1].kind, EGRESS_RULE_WILDCARD);
    ck_assert_uint_eq(pol->rules[1].port, 0);
    ck_assert_int_eq(pol->rules[2].kind, EGRESS_RULE_CIDR); /* a literal in allow: an address */
    ck_assert_int_eq(pol->rules[3].kind, EGRESS_RULE_CIDR);
    ck_assert_uint_eq(pol->rules[3].prefix, 8);
    ck_assert_int_eq(pol->rules[4].family, AF_INET6);
    for (unsigned i = 0; i < 5; i++)
        ck_assert_str_eq(pol->rules[i].text, i < 3 ? allow[i] : ip[i - 3]);

    /* nothing at all: the header alone, an empty allowlist */
    n = egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, NULL, 0, NULL, 0);
    ck_assert_int_eq(n, (ssize_t)strlen(EGRESS_RULES_MAGIC));
    pol->n = 7;
    ck_assert_int_eq(egress_rules_decode(buf, (size_t)n, pol, err, sizeof(err)), 0);
    ck_assert_uint_eq(pol->n, 0);
}
END_TEST

START_TEST(encode_refuses)
{
    const char *one[1];
    one[0] = "a.com\nallow-ip 0.0.0.0/0:*"; /* a second line smuggled in */
    ck_assert_int_eq(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, one, 1, NULL, 0), -EINVAL);
    one[0] = "a.com\r";
    ck_assert_int_eq(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, NULL, 0, one, 1), -EINVAL);
    one[0] = "";
    ck_assert_int_eq(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, one, 1, NULL, 0), -EINVAL);
    char longest[EGRESS_RULE_TEXT_MAX + 1];
    memset(longest, 'a', sizeof(longest) - 1);
    longest[EGRESS_RULE_TEXT_MAX] = 0;
    one[0] = longest;
    ck_assert_int_eq(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, one, 1, NULL, 0), -EINVAL);
    longest[EGRESS_RULE_TEXT_MAX - 1] = 0; /* the longest a rule's text can be */
    ck_assert_int_gt(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, one, 1, NULL, 0), 0);
    /* the most lines of the longest rules fit EGRESS_RULES_MSG_MAX */
    const char *many[EGRESS_MAX_RULES + 1];
    for (unsigned i = 0; i <= EGRESS_MAX_RULES; i++)
        many[i] = longest;
    ck_assert_int_gt(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, many, EGRESS_MAX_RULES / 2,
                                         many, EGRESS_MAX_RULES / 2), 0);
    ck_assert_int_eq(egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, many, EGRESS_MAX_RULES / 2 + 1,
                                         many, EGRESS_MAX_RULES / 2), -E2BIG);
    one[0] = "a.com";
    ck_assert_int_eq(egress_rules_encode(buf, 20, one, 1, NULL, 0), -E2BIG); /* cap */
    ck_assert_int_eq(egress_rules_encode(buf, 5, NULL, 0, NULL, 0), -E2BIG);
}
END_TEST

/* Each hostile request is refused, naming why, and leaves no rule. */
START_TEST(decode_refuses)
{
    static const struct {
        const char *msg, *why;
    } bad[] = {
        {"", "no EGRESS-RULES header"},
        {"EGRESS-RULES", "no EGRESS-RULES header"},
        {"egress-rules\nallow a.com\n", "no EGRESS-RULES header"},
        {"EGRESS-RULES\r\nallow a.com\n", "no EGRESS-RULES header"},
        {"EGRESS-RULES\nallow a.com", "line 2: no line end"},
        {"EGRESS-RULES\nallow a.com\nallow b.com", "line 3: no line end"},
        {"EGRESS-RULES\ndeny a.com\n", "line 2: want"},
        {"EGRESS-RULES\nallow\n", "line 2: want"},
        {"EGRESS-RULES\nallow \n", "line 2: want"},
        {"EGRESS-RULES\nallow-ip \n", "line 2: want"},
        {"EGRESS-RULES\nallowx a.com\n", "line 2: want"},
        {"EGRESS-RULES\n\n", "line 2: want"},
        {"EGRESS-RULES\nallow a.com\r\n", "not printable ASCII"},
        {"EGRESS-RULES\nallow a.com b.com\n", "not printable ASCII"},
        {"EGRESS-RULES\nallow a.\x7f""com\n", "not printable ASCII"},
        {"EGRESS-RULES\nallow a.\xc3\xa9.com\n", "not printable ASCII"},
        {"EGRESS-RULES\nallow a.com:0\n", "allow 'a.com:0'"},
        {"EGRESS-RULES\nallow a_b..com\n", "allow 'a_b..com'"},
        {"EGRESS-RULES\nallow-ip 10.1.2.3/8\n", "allow_ip '10.1.2.3/8'"},
        {"EGRESS-RULES\nallow-ip pypi.org\n", "allow_ip 'pypi.org'"},
        {"EGRESS-RULES\nallow a.com\nallow-ip 300.1.1.1\n", "allow_ip '300.1.1.1'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pol->n = 5;
        err[0] = 0;
        ck_assert_msg(decode(bad[i].msg) == -EINVAL, "accepted case %zu", i);
        ck_assert_uint_eq(pol->n, 0);
        ck_assert_msg(strstr(err, bad[i].why), "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].why);
    }
    /* a NUL inside a rule (the length says where the message ends) */
    static const char nul[] = "EGRESS-RULES\nallow a.c\0m\n";
    ck_assert_int_eq(egress_rules_decode(nul, sizeof(nul) - 1, pol, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not printable ASCII"));
    /* a rule one byte too long for the policy's text */
    size_t n = (size_t)snprintf(buf, 64, "EGRESS-RULES\nallow ");
    memset(buf + n, 'a', EGRESS_RULE_TEXT_MAX);
    buf[n + EGRESS_RULE_TEXT_MAX] = '\n';
    ck_assert_int_eq(egress_rules_decode(buf, n + EGRESS_RULE_TEXT_MAX + 1, pol, err,
                                         sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "too long"));
    /* past the message's bound, whatever it holds */
    memcpy(buf, EGRESS_RULES_MAGIC, strlen(EGRESS_RULES_MAGIC));
    ck_assert_int_eq(egress_rules_decode(buf, EGRESS_RULES_MSG_MAX + 1, pol, err, sizeof(err)),
                     -EINVAL);
    /* one rule more than a policy holds */
    n = strlen(EGRESS_RULES_MAGIC);
    memcpy(buf, EGRESS_RULES_MAGIC, n);
    for (unsigned i = 0; i <= EGRESS_MAX_RULES; i++)
        n += (size_t)sprintf(buf + n, "allow h%u.example\n", i);
    ck_assert_int_eq(egress_rules_decode(buf, n, pol, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "too many egress rules"));
    ck_assert_uint_eq(pol->n, 0);
}
END_TEST

/* Random bytes after the header, and random cuts of a good request:
 * refused or taken, never more rules than lines, nothing read past len
 * (ASan). */
START_TEST(decode_random)
{
    unsigned seed = 35;
    for (int round = 0; round < 3000; round++) {
        size_t n = strlen(EGRESS_RULES_MAGIC), len = n + (size_t)(rand_r(&seed) % 200);
        char *m = malloc(len);
        ck_assert_ptr_nonnull(m);
        memcpy(m, EGRESS_RULES_MAGIC, n);
        static const char alphabet[] = "allow-ip \n*.:/[]0123456789abcdef\r\x01\x80";
        for (size_t i = n; i < len; i++)
            m[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
        size_t lines = 0;
        for (size_t i = n; i < len; i++)
            lines += m[i] == '\n';
        int rc = egress_rules_decode(m, len, pol, err, sizeof(err));
        ck_assert(rc == 0 || rc == -EINVAL);
        ck_assert(rc == 0 ? pol->n <= lines : pol->n == 0);
        free(m);
    }
    const char *allow[] = {"pypi.org", "*.example.com:8443"}, *ip[] = {"10.0.0.0/8"};
    ssize_t full = egress_rules_encode(buf, EGRESS_RULES_MSG_MAX, allow, 2, ip, 1);
    ck_assert_int_gt(full, 0);
    for (ssize_t cut = 0; cut < full; cut++) { /* only whole lines are a request */
        char *m = malloc((size_t)cut + 1);
        memcpy(m, buf, (size_t)cut);
        int rc = egress_rules_decode(m, (size_t)cut, pol, err, sizeof(err));
        bool at_line_end = cut >= (ssize_t)strlen(EGRESS_RULES_MAGIC) && buf[cut - 1] == '\n';
        ck_assert_msg((rc == 0) == at_line_end, "cut at %zd: %d (%s)", cut, rc, err);
        free(m);
    }
}
END_TEST

/* ---- the daemon's wait for the answer ---------------------------------- */

static int sv[2] = {-1, -1};

static void chan_setup(void)
{
    setup();
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void chan_teardown(void)
{
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    sv[0] = sv[1] = -1;
    teardown();
}

START_TEST(exchange_checks_the_answer)
{
    static const char msg[] = "EGRESS-RULES\nallow a.com\n";
    struct egress_rules_answer good = {.rc = 0, .nrules = 1, .ncut = 2, .cut = {7, 9}};
    struct egress_rules_answer a;
    /* good, and each way it can be wrong */
    struct egress_rules_answer bad_cut = good, bad_rules = good, bad_err = good;
    bad_cut.ncut = EGRESS_MAX_THREADS + 1;
    bad_rules.nrules = EGRESS_MAX_RULES + 1;
    memset(bad_err.err, 'x', sizeof(bad_err.err)); /* no NUL */
    const struct {
        const struct egress_rules_answer *a;
        size_t len;
        int rc;
    } cases[] = {
        {&good, sizeof(good), 0},         {&good, sizeof(good) - 1, -EPROTO},
        {&bad_cut, sizeof(good), -EPROTO}, {&bad_rules, sizeof(good), -EPROTO},
        {&bad_err, sizeof(good), -EPROTO},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* the answer is queued first: exchange sends, then finds it */
        ck_assert_int_eq(send(sv[1], cases[i].a, cases[i].len, 0), (ssize_t)cases[i].len);
        memset(&a, 0x55, sizeof(a));
        ck_assert_int_eq(egress_rules_exchange(sv[0], msg, sizeof(msg) - 1, 5000, &a), cases[i].rc);
        char req[256];
        ck_assert_int_eq(recv(sv[1], req, sizeof(req), 0), (ssize_t)sizeof(msg) - 1);
        ck_assert(!memcmp(req, msg, sizeof(msg) - 1));
        if (!cases[i].rc)
            ck_assert(a.ncut == 2 && a.cut[0] == 7 && a.cut[1] == 9 && a.nrules == 1);
    }
    /* one longer than an answer: cut, and refused */
    char big[sizeof(good) + 8] = {0};
    ck_assert_int_eq(send(sv[1], big, sizeof(big), 0), (ssize_t)sizeof(big));
    ck_assert_int_eq(egress_rules_exchange(sv[0], msg, sizeof(msg) - 1, 5000, &a), -EPROTO);
}
END_TEST

START_TEST(exchange_without_a_broker)
{
    static const char msg[] = "EGRESS-RULES\n";
    struct egress_rules_answer a;
    /* no answer: the bound */
    ck_assert_int_eq(egress_rules_exchange(sv[0], msg, sizeof(msg) - 1, 200, &a), -ETIMEDOUT);
    /* the broker is gone (its end closed): said as such */
    close(sv[1]);
    sv[1] = -1;
    ck_assert_int_eq(egress_rules_exchange(sv[0], msg, sizeof(msg) - 1, 200, &a), -ECONNRESET);
}
END_TEST

Suite *egress_rules_suite(void)
{
    Suite *s = suite_create("egress_rules");
    TCase *tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, encode_refuses);
    tcase_add_test(tc, decode_refuses);
    tcase_add_test(tc, decode_random);
    suite_add_tcase(s, tc);
    tc = tcase_create("exchange");
    tcase_add_checked_fixture(tc, chan_setup, chan_teardown);
    tcase_add_test(tc, exchange_checks_the_answer);
    tcase_add_test(tc, exchange_without_a_broker);
    suite_add_tcase(s, tc);
    return s;
}

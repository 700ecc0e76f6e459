/* vmm/egress/egress_policy.c: rule parsing, CONNECT target parsing, name and
 * address matching, address classes and the allow/deny decision, with the
 * inputs a hostile guest (targets) or a careless user (rules) would give. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "tests/unit/helpers.h"
#include "vmm/egress/egress_policy.h"

static struct egress_policy *pol;
static char err[256];

static void setup(void)
{
    pol = calloc(1, sizeof(*pol));
    ck_assert_ptr_nonnull(pol);
    err[0] = '\0';
}

static void teardown(void)
{
    free(pol);
}

/* The last rule added. */
static const struct egress_rule *last(void)
{
    ck_assert_uint_gt(pol->n, 0);
    return &pol->rules[pol->n - 1];
}

typedef int add_fn(struct egress_policy *, const char *, char *, size_t);

/* Adds a rule that must be accepted. */
static const struct egress_rule *add_ok(add_fn *add, const char *arg)
{
    unsigned n = pol->n;
    int rc = add(pol, arg, err, sizeof(err));
    ck_assert_msg(rc == 0, "\"%s\" rejected: %s", arg, err);
    ck_assert_uint_eq(pol->n, n + 1);
    return last();
}

/* A rule that must be refused with -EINVAL, an error naming `needle`, and
 * no rule added. */
static void add_fails(add_fn *add, const char *arg, const char *needle)
{
    unsigned n = pol->n;
    err[0] = '\0';
    ck_assert_msg(add(pol, arg, err, sizeof(err)) == -EINVAL, "\"%s\" accepted", arg);
    ck_assert_uint_eq(pol->n, n);
    ck_assert_msg(strstr(err, needle) != NULL, "\"%s\": error \"%s\" lacks \"%s\"", arg, err,
                  needle);
}

#define HOST_OK(arg) add_ok(egress_policy_add_host, (arg))
#define CIDR_OK(arg) add_ok(egress_policy_add_cidr, (arg))
#define HOST_FAILS(arg, needle) add_fails(egress_policy_add_host, (arg), (needle))
#define CIDR_FAILS(arg, needle) add_fails(egress_policy_add_cidr, (arg), (needle))

/* Parses a target from an exact-size heap copy (no NUL after it), so ASan
 * catches a read past len. */
static int target(const char *s, size_t len, char *host, size_t hostcap, uint16_t *port)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, len);
    int rc = egress_parse_target(copy, len, host, hostcap, port);
    free(copy);
    return rc;
}

static void target_ok(const char *s, const char *want_host, uint16_t want_port)
{
    char host[EGRESS_HOST_MAX + 1];
    uint16_t port = 0;
    ck_assert_msg(target(s, strlen(s), host, sizeof(host), &port) == 0, "\"%s\" rejected", s);
    ck_assert_str_eq(host, want_host);
    ck_assert_uint_eq(port, want_port);
}

static void target_fails(const char *s, size_t len)
{
    char host[EGRESS_HOST_MAX + 1];
    uint16_t port;
    ck_assert_msg(target(s, len, host, sizeof(host), &port) == -EINVAL, "\"%.*s\" accepted",
                  (int)len, s);
}

/* A sockaddr for an address literal (IPv4 or IPv6), in static storage. */
static const struct sockaddr *sa(const char *text)
{
    static struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1)
        in->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1)
        in6->sin6_family = AF_INET6;
    else
        ck_abort_msg("bad test address %s", text);
    return (const struct sockaddr *)&ss;
}

/* A sockaddr of a family the policy does not know. */
static const struct sockaddr_un unix_addr = {.sun_family = AF_UNIX};
#define unix_sa ((const struct sockaddr *)&unix_addr)

/* A string of n copies of c followed by tail. */
static char *repeat(char *buf, char c, size_t n, const char *tail)
{
    memset(buf, c, n);
    strcpy(buf + n, tail);
    return buf;
}

START_TEST(host_rule_exact)
{
    const struct egress_rule *r = HOST_OK("Api.Example.COM.");
    ck_assert_int_eq(r->kind, EGRESS_RULE_HOST);
    ck_assert_str_eq(r->host, "api.example.com");
    ck_assert_uint_eq(r->port, EGRESS_DEFAULT_PORT);
    ck_assert_str_eq(r->text, "Api.Example.COM.");
    ck_assert_ptr_eq(egress_match_name(pol, "api.example.com", 443), r);
    ck_assert_ptr_eq(egress_match_name(pol, "API.example.com.", 443), r);
    ck_assert_ptr_null(egress_match_name(pol, "api.example.com", 80));
    ck_assert_ptr_null(egress_match_name(pol, "x.api.example.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "example.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "api.example.co", 443));
    ck_assert_ptr_null(egress_match_name(pol, "api.example.com", 0));
}
END_TEST

START_TEST(host_rule_ports)
{
    const struct egress_rule *r8080 = HOST_OK("example.com:8080");
    ck_assert_uint_eq(r8080->port, 8080);
    ck_assert_ptr_eq(egress_match_name(pol, "example.com", 8080), r8080);
    ck_assert_ptr_null(egress_match_name(pol, "example.com", 443));
    const struct egress_rule *any = HOST_OK("any.example:*");
    ck_assert_uint_eq(any->port, 0);
    ck_assert_ptr_eq(egress_match_name(pol, "any.example", 1), any);
    ck_assert_ptr_eq(egress_match_name(pol, "any.example", 65535), any);
    ck_assert_ptr_null(egress_match_name(pol, "any.example", 0));
    ck_assert_uint_eq(HOST_OK("max.example:65535")->port, 65535);
    ck_assert_uint_eq(HOST_OK("min.example:1")->port, 1);
}
END_TEST

START_TEST(bad_ports)
{
    static const char *const bad[] = {"0", "65536", "", "+1", "443x", " 443", "-1", "0443",
                                      "99999999999999999999", "0x1bb", "44 3", "**"};
    char arg[64], t[64];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(arg, sizeof(arg), "example.com:%s", bad[i]);
        HOST_FAILS(arg, "port");
        snprintf(arg, sizeof(arg), "10.0.0.0/8:%s", bad[i]);
        CIDR_FAILS(arg, "port");
        snprintf(t, sizeof(t), "example.com:%s", bad[i]);
        target_fails(t, strlen(t));
    }
    target_fails("example.com:*", 13); /* "any port" is for rules only */
}
END_TEST

START_TEST(name_length_limits)
{
    char name[400], label63[70], label64[70];
    repeat(label63, 'a', 63, "");
    repeat(label64, 'b', 64, "");
    /* 63+1+63+1+63+1+61 = 253 characters: the longest legal name. */
    snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label63, label63, label63, label63);
    ck_assert_uint_eq(strlen(name), 253);
    ck_assert_str_eq(HOST_OK(name)->host, name);
    ck_assert_ptr_eq(egress_match_name(pol, name, 443), last());
    strcat(name, ".");
    HOST_OK(name); /* 253 plus the trailing dot */
    snprintf(name, sizeof(name), "%s.%s.%s.%.62s", label63, label63, label63, label63);
    ck_assert_uint_eq(strlen(name), 254);
    HOST_FAILS(name, "more than 253");
    ck_assert_ptr_null(egress_match_name(pol, name, 443));
    snprintf(name, sizeof(name), "%s.example.com", label64);
    HOST_FAILS(name, "max 63");
    snprintf(name, sizeof(name), "%s.example.com", label63);
    HOST_OK(name);
    repeat(name, 'c', 320, "");
    HOST_FAILS(name, "longer than");
    CIDR_FAILS(name, "longer than");
    target_fails(name, strlen(name));
}
END_TEST

START_TEST(name_syntax)
{
    HOST_FAILS("a..b", "empty label");
    HOST_FAILS(".example.com", "empty label");
    HOST_FAILS("example.com..", "empty label");
    HOST_FAILS(".", "empty label");
    HOST_FAILS("", "empty host");
    HOST_FAILS(":443", "empty host");
    HOST_FAILS("-a.example.com", "'-'");
    HOST_FAILS("a-.example.com", "'-'");
    HOST_FAILS("a_b.example.com", "0x5f");
    HOST_FAILS("exa mple.com", "0x20");
    HOST_FAILS("ex\xc3\xa4mple.com", "0xc3");
    HOST_FAILS("user@example.com", "0x40");
    /* Forms inet_aton reads as 127.0.0.1 are not names. */
    HOST_FAILS("127.1", "neither");
    HOST_FAILS("0x7f000001", "neither");
    HOST_FAILS("2130706433", "neither");
    HOST_FAILS("1.2.3.04", "neither");
    HOST_FAILS("example.123", "neither");
    ck_assert_str_eq(HOST_OK("x-1.9lives.example")->host, "x-1.9lives.example");
    ck_assert_str_eq(HOST_OK("localhost")->host, "localhost");
}
END_TEST

START_TEST(wildcard_rules)
{
    const struct egress_rule *w = HOST_OK("*.Example.com");
    ck_assert_int_eq(w->kind, EGRESS_RULE_WILDCARD);
    ck_assert_str_eq(w->host, "example.com");
    ck_assert_ptr_eq(egress_match_name(pol, "a.example.com", 443), w);
    ck_assert_ptr_eq(egress_match_name(pol, "a.b.example.com", 443), w);
    ck_assert_ptr_eq(egress_match_name(pol, "A.EXAMPLE.COM.", 443), w);
    ck_assert_ptr_null(egress_match_name(pol, "example.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "badexample.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "a.badexample.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, ".example.com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "com", 443));
    ck_assert_ptr_null(egress_match_name(pol, "a.example.com.evil", 443));
    ck_assert_ptr_null(egress_match_name(pol, "a.example.com", 80));
    /* Directly over a TLD: suspicious but legal. */
    ck_assert_str_eq(HOST_OK("*.com:*")->host, "com");
    ck_assert_ptr_eq(egress_match_name(pol, "evil.com", 22), last());
    HOST_FAILS("*", "wildcard");
    HOST_FAILS("*.", "wildcard");
    HOST_FAILS("*:443", "wildcard");
    HOST_FAILS("*example.com", "wildcard");
    HOST_FAILS("**.com", "wildcard");
    HOST_FAILS("*.*.com", "0x2a");
    HOST_FAILS("a.*.com", "0x2a");
    HOST_FAILS("*..com", "empty label");
}
END_TEST

START_TEST(ip_literal_allow)
{
    const struct egress_rule *r = HOST_OK("93.184.216.34");
    ck_assert_int_eq(r->kind, EGRESS_RULE_CIDR);
    ck_assert_int_eq(r->family, AF_INET);
    ck_assert_uint_eq(r->prefix, 32);
    ck_assert_uint_eq(r->port, 443);
    ck_assert_ptr_null(egress_match_name(pol, "93.184.216.34", 443));
    ck_assert_ptr_eq(egress_match_addr(pol, sa("93.184.216.34"), 443), r);
    ck_assert_ptr_null(egress_match_addr(pol, sa("93.184.216.35"), 443));
    r = HOST_OK("[2001:DB8::1]:8443");
    ck_assert_int_eq(r->family, AF_INET6);
    ck_assert_uint_eq(r->prefix, 128);
    ck_assert_uint_eq(r->port, 8443);
    ck_assert_ptr_eq(egress_match_addr(pol, sa("2001:db8::1"), 8443), r);
    ck_assert_ptr_null(egress_match_addr(pol, sa("2001:db8::2"), 8443));
    ck_assert_uint_eq(HOST_OK("2606:4700::1111")->prefix, 128);
    r = HOST_OK("[::ffff:1.2.3.4]");
    ck_assert_int_eq(r->family, AF_INET);
    ck_assert_uint_eq(r->prefix, 32);
    ck_assert_ptr_eq(egress_match_addr(pol, sa("1.2.3.4"), 443), r);
    HOST_FAILS("10.0.0.0/8", "--allow-ip");
    HOST_FAILS("[1.2.3.4]:443", "not an IPv6");
    HOST_FAILS("[example.com]", "not an IPv6");
    HOST_FAILS("[::1", "']'");
    HOST_FAILS("[::1]443", "after ']'");
}
END_TEST

START_TEST(cidr_rules)
{
    const struct egress_rule *r = CIDR_OK("10.0.0.0/8");
    ck_assert_int_eq(r->family, AF_INET);
    ck_assert_uint_eq(r->prefix, 8);
    ck_assert_uint_eq(r->addr[0], 10);
    ck_assert_uint_eq(r->port, 443);
    ck_assert_str_eq(r->text, "10.0.0.0/8");
    ck_assert_uint_eq(CIDR_OK("10.1.2.3")->prefix, 32);
    r = CIDR_OK("10.0.0.0/8:8080");
    ck_assert_uint_eq(r->prefix, 8);
    ck_assert_uint_eq(r->port, 8080);
    r = CIDR_OK("[fd00::/8]:443");
    ck_assert_int_eq(r->family, AF_INET6);
    ck_assert_uint_eq(r->prefix, 8);
    ck_assert_uint_eq(r->addr[0], 0xfd);
    r = CIDR_OK("fd00::1");
    ck_assert_uint_eq(r->prefix, 128);
    ck_assert_uint_eq(r->port, 443);
    ck_assert_uint_eq(CIDR_OK("::/0")->prefix, 0);
    r = CIDR_OK("0.0.0.0/0:*");
    ck_assert_uint_eq(r->prefix, 0);
    ck_assert_uint_eq(r->port, 0);
    ck_assert_uint_eq(CIDR_OK("fd00::/128")->prefix, 128);
    ck_assert_uint_eq(CIDR_OK("1.2.3.4/32")->prefix, 32);
    r = CIDR_OK("::ffff:10.0.0.0/104");
    ck_assert_int_eq(r->family, AF_INET);
    ck_assert_uint_eq(r->prefix, 8);
}
END_TEST

START_TEST(cidr_bad)
{
    CIDR_FAILS("10.0.0.0/33", "0..32");
    CIDR_FAILS("fd00::/129", "0..128");
    CIDR_FAILS("10.0.0.0/-1", "prefix");
    CIDR_FAILS("10.0.0.0/08", "prefix");
    CIDR_FAILS("10.0.0.0/", "prefix");
    CIDR_FAILS("10.0.0.0/8/8", "prefix");
    CIDR_FAILS("10.0.0.0/ 8", "prefix");
    CIDR_FAILS("10.0.0.0/4294967304", "prefix"); /* 2^32 + 8 */
    CIDR_FAILS("10.1.2.3/8", "10.0.0.0/8");
    CIDR_FAILS("fd00::1/8", "fd00::/8");
    CIDR_FAILS("256.0.0.0/8", "not an IPv4");
    CIDR_FAILS("10.0.0/8", "not an IPv4");
    CIDR_FAILS("010.0.0.0/8", "not an IPv4");
    CIDR_FAILS("example.com", "not an IPv4");
    CIDR_FAILS("fd00::/8:443", "prefix"); /* a port needs the brackets */
    CIDR_FAILS("[fd00::/8", "']'");
    CIDR_FAILS("[fd00::/8]x", "after ']'");
    CIDR_FAILS("[10.0.0.0/8]", "not an IPv6");
    CIDR_FAILS("[fe80::1%eth0]", "not an IPv6");
    CIDR_FAILS("", "empty host");
}
END_TEST

START_TEST(cidr_matching)
{
    const struct egress_rule *ten = CIDR_OK("10.0.0.0/8");
    const struct egress_rule *cg = CIDR_OK("100.64.0.0/10:*");
    const struct egress_rule *ula = CIDR_OK("[fd00::/8]:8443");
    const struct egress_rule *all6 = CIDR_OK("::/0");
    ck_assert_ptr_eq(egress_match_addr(pol, sa("10.255.1.2"), 443), ten);
    ck_assert_ptr_null(egress_match_addr(pol, sa("11.0.0.1"), 443));
    ck_assert_ptr_null(egress_match_addr(pol, sa("10.0.0.1"), 80));
    ck_assert_ptr_null(egress_match_addr(pol, sa("10.0.0.1"), 0));
    /* Mapped addresses are IPv4: they match the IPv4 rule, not ::/0. */
    ck_assert_ptr_eq(egress_match_addr(pol, sa("::ffff:10.1.2.3"), 443), ten);
    ck_assert_ptr_null(egress_match_addr(pol, sa("::ffff:11.1.2.3"), 443));
    ck_assert_ptr_eq(egress_match_addr(pol, sa("100.127.255.255"), 22), cg);
    ck_assert_ptr_null(egress_match_addr(pol, sa("100.128.0.0"), 22));
    ck_assert_ptr_null(egress_match_addr(pol, sa("100.63.255.255"), 22));
    ck_assert_ptr_eq(egress_match_addr(pol, sa("fd12::1"), 8443), ula);
    ck_assert_ptr_eq(egress_match_addr(pol, sa("fd12::1"), 443), all6);
    ck_assert_ptr_eq(egress_match_addr(pol, sa("2606:4700::1111"), 443), all6);
    ck_assert_ptr_null(egress_match_addr(pol, sa("fd12::1"), 8080));
    const struct egress_rule *m = CIDR_OK("::ffff:192.168.0.0/112");
    ck_assert_ptr_eq(egress_match_addr(pol, sa("192.168.7.7"), 443), m);
    ck_assert_ptr_null(egress_match_addr(pol, unix_sa, 443));
    ck_assert_ptr_null(egress_match_addr(pol, NULL, 443));
}
END_TEST

START_TEST(target_forms)
{
    target_ok("example.com:443", "example.com", 443);
    target_ok("Example.COM.:8080", "example.com", 8080);
    target_ok("[::1]:443", "::1", 443);
    target_ok("[2001:DB8::1]:80", "2001:db8::1", 80);
    target_ok("[::ffff:127.0.0.1]:443", "::ffff:127.0.0.1", 443);
    target_ok("1.2.3.4:65535", "1.2.3.4", 65535);
    ck_assert_int_eq(egress_host_is_ip("1.2.3.4"), 1);
    ck_assert_int_eq(egress_host_is_ip("::1"), 1);
    ck_assert_int_eq(egress_host_is_ip("example.com"), 0);
    static const char *const bad[] = {
        "[::1]",        "::1:443",          "example.com",   "example.com:", ":443",
        "[]:443",       "a..b:443",         "[::1]x:443",    "[::1:443",     "[1.2.3.4]:443",
        "127.1:443",    "0x7f000001:443",   "user@h.com:443", "[fe80::1%eth0]:443",
        "a b.com:443",  "*.example.com:443", "example.com:443:443", "http://example.com:443",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        target_fails(bad[i], strlen(bad[i]));
    target_fails("", 0);
}
END_TEST

START_TEST(target_nul_and_caps)
{
    static const char nul_mid[] = "exa\0mple.com:443";
    static const char nul_end[] = "example.com:443";
    target_fails(nul_mid, sizeof(nul_mid) - 1);
    target_fails(nul_end, sizeof(nul_end)); /* includes the terminator */
    /* Only len bytes count: a valid prefix of a longer buffer parses. */
    char host[EGRESS_HOST_MAX + 1];
    uint16_t port = 0;
    ck_assert_int_eq(target("example.com:4430", 15, host, sizeof(host), &port), 0);
    ck_assert_uint_eq(port, 443);
    /* Too small a host buffer is an error, not a truncation. */
    ck_assert_int_eq(target("example.com:443", 15, host, 11, &port), -EINVAL);
    ck_assert_int_eq(target("example.com:443", 15, host, 12, &port), 0);
    ck_assert_str_eq(host, "example.com");
    char big[600];
    repeat(big, 'a', 500, ".com:443");
    target_fails(big, strlen(big));
}
END_TEST

struct addr_case {
    const char *addr;
    enum egress_addr_class cls;
};

static void assert_classes(const struct addr_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum egress_addr_class got = egress_classify(sa(c[i].addr));
        ck_assert_msg(got == c[i].cls, "%s: %s, want %s", c[i].addr,
                      egress_addr_class_name(got), egress_addr_class_name(c[i].cls));
    }
}

static const struct addr_case v4_classes[] = {
    {"8.8.8.8", EGRESS_ADDR_PUBLIC}, {"93.184.216.34", EGRESS_ADDR_PUBLIC},
    {"127.0.0.1", EGRESS_ADDR_LOOPBACK}, {"127.255.255.254", EGRESS_ADDR_LOOPBACK},
    {"10.0.0.1", EGRESS_ADDR_PRIVATE}, {"172.16.0.1", EGRESS_ADDR_PRIVATE},
    {"172.31.255.255", EGRESS_ADDR_PRIVATE}, {"172.32.0.1", EGRESS_ADDR_PUBLIC},
    {"192.168.1.1", EGRESS_ADDR_PRIVATE}, {"169.254.169.254", EGRESS_ADDR_LINK_LOCAL},
    {"100.64.0.1", EGRESS_ADDR_CGNAT}, {"100.127.255.255", EGRESS_ADDR_CGNAT},
    {"100.128.0.0", EGRESS_ADDR_PUBLIC}, {"0.0.0.0", EGRESS_ADDR_UNSPECIFIED},
    {"0.1.2.3", EGRESS_ADDR_UNSPECIFIED}, {"255.255.255.255", EGRESS_ADDR_BROADCAST},
    {"255.255.255.254", EGRESS_ADDR_RESERVED}, {"240.0.0.1", EGRESS_ADDR_RESERVED},
    {"224.0.0.1", EGRESS_ADDR_MULTICAST}, {"239.255.255.255", EGRESS_ADDR_MULTICAST},
    {"192.0.2.1", EGRESS_ADDR_DOCUMENTATION}, {"198.51.100.1", EGRESS_ADDR_DOCUMENTATION},
    {"203.0.113.1", EGRESS_ADDR_DOCUMENTATION}, {"198.18.0.1", EGRESS_ADDR_RESERVED},
    {"192.0.0.8", EGRESS_ADDR_RESERVED},
};

START_TEST(classify_ipv4)
{
    assert_classes(v4_classes, sizeof(v4_classes) / sizeof(v4_classes[0]));
}
END_TEST

static const struct addr_case v6_classes[] = {
    {"2606:4700::1111", EGRESS_ADDR_PUBLIC}, {"2001:4860:4860::8888", EGRESS_ADDR_PUBLIC},
    {"::", EGRESS_ADDR_UNSPECIFIED}, {"::1", EGRESS_ADDR_LOOPBACK},
    {"::ffff:127.0.0.1", EGRESS_ADDR_LOOPBACK}, {"::ffff:8.8.8.8", EGRESS_ADDR_PUBLIC},
    {"::ffff:10.0.0.1", EGRESS_ADDR_PRIVATE}, {"::ffff:169.254.169.254", EGRESS_ADDR_LINK_LOCAL},
    {"::ffff:0.0.0.0", EGRESS_ADDR_UNSPECIFIED}, {"64:ff9b::7f00:1", EGRESS_ADDR_LOOPBACK},
    {"64:ff9b::a9fe:a9fe", EGRESS_ADDR_LINK_LOCAL}, {"64:ff9b::808:808", EGRESS_ADDR_PUBLIC},
    {"64:ff9b:1::1", EGRESS_ADDR_PRIVATE},
    {"::127.0.0.1", EGRESS_ADDR_RESERVED}, /* IPv4-compatible */
    {"::8.8.8.8", EGRESS_ADDR_RESERVED}, {"fc00::1", EGRESS_ADDR_PRIVATE},
    {"fdff::1", EGRESS_ADDR_PRIVATE}, {"fe80::1", EGRESS_ADDR_LINK_LOCAL},
    {"febf::1", EGRESS_ADDR_LINK_LOCAL}, {"fec0::1", EGRESS_ADDR_PRIVATE},
    {"ff02::1", EGRESS_ADDR_MULTICAST}, {"2001:db8::1", EGRESS_ADDR_DOCUMENTATION},
    {"3fff::1", EGRESS_ADDR_DOCUMENTATION}, {"2001::1", EGRESS_ADDR_RESERVED},
    {"2002:7f00:1::1", EGRESS_ADDR_RESERVED}, /* 6to4 */
    {"100::1", EGRESS_ADDR_RESERVED},
    {"4000::1", EGRESS_ADDR_RESERVED}, /* outside 2000::/3 */
    {"1::1", EGRESS_ADDR_RESERVED},
};

START_TEST(classify_ipv6)
{
    assert_classes(v6_classes, sizeof(v6_classes) / sizeof(v6_classes[0]));
    ck_assert_int_eq(egress_classify(unix_sa), EGRESS_ADDR_UNSUPPORTED);
    ck_assert_int_eq(egress_classify(NULL), EGRESS_ADDR_UNSUPPORTED);
}
END_TEST

START_TEST(class_names)
{
    static const char *const want[] = {"public", "loopback", "private", "link-local", "CGNAT",
                                       "multicast", "unspecified", "broadcast", "reserved",
                                       "documentation", "unsupported", "unknown"};
    for (unsigned c = 0; c < sizeof(want) / sizeof(want[0]); c++)
        ck_assert_str_eq(egress_addr_class_name((enum egress_addr_class)c), want[c]);
    ck_assert_str_eq(egress_addr_class_name((enum egress_addr_class)99), "unknown");
}
END_TEST

/* Runs the whole decision for host (already parsed) at addr:port. */
static const struct egress_rule *decide(const char *host, const char *addr, uint16_t port)
{
    const char *why = NULL;
    const struct egress_rule *name = egress_match_name(pol, host, port);
    const struct egress_rule *r = egress_check_addr(pol, name, sa(addr), port, &why);
    ck_assert_msg((r == NULL) == (why != NULL), "rule and reason disagree");
    return r;
}

/* The decision must deny, for `reason`. */
static void denied(const char *host, const char *addr, uint16_t port, const char *reason)
{
    const char *why = NULL;
    const struct egress_rule *name = egress_match_name(pol, host, port);
    ck_assert_ptr_null(egress_check_addr(pol, name, sa(addr), port, &why));
    ck_assert_msg(why && strcmp(why, reason) == 0, "%s at %s:%u: \"%s\", want \"%s\"", host,
                  addr, port, why ? why : "(null)", reason);
}

START_TEST(decision_names)
{
    const struct egress_rule *ex = HOST_OK("example.com");
    ck_assert_ptr_eq(decide("example.com", "93.184.216.34", 443), ex);
    ck_assert_ptr_eq(decide("example.com", "2606:4700::1111", 443), ex);
    denied("example.com", "127.0.0.1", 443, "resolves to loopback address");
    denied("example.com", "169.254.169.254", 443, "resolves to link-local address");
    denied("example.com", "10.1.1.1", 443, "resolves to private address");
    denied("example.com", "::ffff:127.0.0.1", 443, "resolves to loopback address");
    denied("example.com", "64:ff9b::7f00:1", 443, "resolves to loopback address");
    denied("example.com", "100.64.0.1", 443, "resolves to CGNAT address");
    denied("example.com", "fe80::1", 443, "resolves to link-local address");
    denied("example.com", "0.0.0.0", 443, "resolves to unspecified address");
    denied("example.com", "93.184.216.34", 80, "not on the allowlist");
    denied("other.com", "93.184.216.34", 443, "not on the allowlist");
}
END_TEST

START_TEST(decision_cidr)
{
    const char *why = NULL;
    const struct egress_rule *ex = HOST_OK("internal.example");
    const struct egress_rule *lit = HOST_OK("93.184.216.34");
    const struct egress_rule *net = CIDR_OK("10.0.0.5:8080");
    /* An IP-literal target is admitted only by an address rule. */
    ck_assert_ptr_eq(decide("93.184.216.34", "93.184.216.34", 443), lit);
    denied("8.8.8.8", "8.8.8.8", 443, "not on the allowlist");
    /* A listed name reaching a private address needs the address rule,
     * port included. */
    ck_assert_ptr_eq(decide("internal.example", "10.0.0.5", 8080), net);
    ck_assert_ptr_eq(decide("internal.example", "::ffff:10.0.0.5", 8080), net);
    denied("internal.example", "10.0.0.5", 443, "resolves to private address");
    denied("internal.example", "10.0.0.6", 8080, "not on the allowlist");
    ck_assert_ptr_eq(decide("internal.example", "1.1.1.1", 443), ex);
    /* The check re-validates the name rule it is handed. */
    ck_assert_ptr_null(egress_check_addr(pol, lit, sa("8.8.8.8"), 443, &why));
    ck_assert_str_eq(why, "not on the allowlist");
    ck_assert_ptr_null(egress_check_addr(pol, ex, sa("8.8.8.8"), 80, &why));
    ck_assert_ptr_null(egress_check_addr(pol, ex, sa("8.8.8.8"), 0, &why));
    ck_assert_ptr_null(egress_check_addr(pol, ex, unix_sa, 443, &why));
    ck_assert_str_eq(why, "resolves to non-IP address");
    ck_assert_ptr_null(egress_check_addr(pol, ex, sa("127.0.0.1"), 443, NULL));
    ck_assert_ptr_eq(egress_check_addr(pol, ex, sa("1.1.1.1"), 443, NULL), ex);
}
END_TEST

START_TEST(rule_cap)
{
    char arg[64];
    for (unsigned i = 0; i < EGRESS_MAX_RULES; i++) {
        snprintf(arg, sizeof(arg), i % 2 ? "h%u.example" : "10.0.%u.0/24", i);
        ck_assert_int_eq((i % 2 ? egress_policy_add_host : egress_policy_add_cidr)(
                             pol, arg, err, sizeof(err)),
                         0);
    }
    ck_assert_uint_eq(pol->n, EGRESS_MAX_RULES);
    HOST_FAILS("one-more.example", "too many");
    CIDR_FAILS("192.0.2.0/24", "too many");
    ck_assert_ptr_eq(egress_match_name(pol, "h127.example", 443),
                     &pol->rules[EGRESS_MAX_RULES - 1]);
}
END_TEST

START_TEST(null_err_buffer)
{
    ck_assert_int_eq(egress_policy_add_host(pol, "a..b", NULL, 0), -EINVAL);
    ck_assert_int_eq(egress_policy_add_cidr(pol, "10.0.0.0/33", NULL, 0), -EINVAL);
    ck_assert_int_eq(egress_policy_add_host(pol, NULL, NULL, 0), -EINVAL);
    /* A small buffer gets a truncated, terminated message. */
    char tiny[8];
    memset(tiny, 'x', sizeof(tiny));
    ck_assert_int_eq(egress_policy_add_host(pol, "a..b", tiny, sizeof(tiny)), -EINVAL);
    ck_assert_uint_eq(strlen(tiny), sizeof(tiny) - 1);
    ck_assert_uint_eq(pol->n, 0);
}
END_TEST

Suite *egress_policy_suite(void)
{
    Suite *s = suite_create("egress_policy");
    TCase *tc = tcase_create("rules");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, host_rule_exact);
    tcase_add_test(tc, host_rule_ports);
    tcase_add_test(tc, bad_ports);
    tcase_add_test(tc, name_length_limits);
    tcase_add_test(tc, name_syntax);
    tcase_add_test(tc, wildcard_rules);
    tcase_add_test(tc, ip_literal_allow);
    tcase_add_test(tc, cidr_rules);
    tcase_add_test(tc, cidr_bad);
    tcase_add_test(tc, cidr_matching);
    tcase_add_test(tc, rule_cap);
    tcase_add_test(tc, null_err_buffer);
    suite_add_tcase(s, tc);
    tc = tcase_create("targets");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, target_forms);
    tcase_add_test(tc, target_nul_and_caps);
    suite_add_tcase(s, tc);
    tc = tcase_create("addresses");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, classify_ipv4);
    tcase_add_test(tc, classify_ipv6);
    tcase_add_test(tc, class_names);
    tcase_add_test(tc, decision_names);
    tcase_add_test(tc, decision_cidr);
    suite_add_tcase(s, tc);
    return s;
}

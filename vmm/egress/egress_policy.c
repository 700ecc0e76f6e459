/* The egress allowlist: parsing rules and CONNECT targets, matching names
 * and addresses, classifying addresses.  Semantics in egress_policy.h. */
#include "vmm/egress/egress_policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errcap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes the message (when the caller wants one) and returns -EINVAL, so
 * every error path is one statement. */
static int fail(char *err, size_t errcap, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Plain decimal only: strtoul would take a sign, spaces and "0x", and a
 * leading zero reads as octal to some tools, so the rule the user sees
 * could differ from the one enforced. */
static int parse_decimal(const char *s, unsigned max, unsigned *out)
{
    unsigned v = 0;
    size_t i;
    if (!is_digit(s[0]) || (s[0] == '0' && s[1]))
        return -EINVAL;
    for (i = 0; is_digit(s[i]); i++) {
        v = v * 10 + (unsigned)(s[i] - '0');
        if (v > max)
            return -EINVAL;
    }
    if (s[i])
        return -EINVAL;
    *out = v;
    return 0;
}

/* PORT: 1..65535, or "*" (0, any port) when any_ok. */
static int parse_port(const char *s, bool any_ok, uint16_t *port, char *err, size_t errcap)
{
    unsigned v;
    if (any_ok && strcmp(s, "*") == 0) {
        *port = 0;
        return 0;
    }
    if (parse_decimal(s, 65535, &v) < 0 || v == 0)
        return fail(err, errcap, "port \"%s\" is not a number in 1..65535%s", s,
                    any_ok ? " or \"*\"" : "");
    *port = (uint16_t)v;
    return 0;
}

/* Lower-cases name in place, drops one trailing dot, and checks it is a DNS
 * host name (RFC 1123 2.1): labels of 1..63 letters, digits and '-', not
 * starting or ending with '-', 253 characters in all.  The last label must
 * not start with a digit: no TLD does, and the C library's resolver reads
 * such names ("127.1", "0x7f000001", "2130706433") as IPv4 addresses. */
static int name_normalize(char *name, char *err, size_t errcap)
{
    size_t len = strlen(name), start = 0, last = 0;
    if (len > 1 && name[len - 1] == '.')
        name[--len] = '\0';
    if (len > EGRESS_HOST_MAX)
        return fail(err, errcap, "host name is %zu characters, more than %d", len,
                    EGRESS_HOST_MAX);
    for (size_t i = 0; i <= len; i++) {
        char c = name[i];
        if (c == '.' || c == '\0') {
            if (i == start)
                return fail(err, errcap, "empty label in host name \"%s\"", name);
            if (i - start > 63)
                return fail(err, errcap, "label of %zu characters (max 63) in host name",
                            i - start);
            if (name[start] == '-' || name[i - 1] == '-')
                return fail(err, errcap, "label starts or ends with '-' in \"%s\"", name);
            last = start;
            start = i + 1;
            continue;
        }
        if (c >= 'A' && c <= 'Z')
            name[i] = (char)(c - 'A' + 'a');
        else if (!is_digit(c) && c != '-' && !(c >= 'a' && c <= 'z'))
            return fail(err, errcap, "character 0x%02x not allowed in a host name",
                        (unsigned char)c);
    }
    if (is_digit(name[last]))
        return fail(err, errcap, "\"%s\" is neither an IPv4 address nor a host name", name);
    return 0;
}

/* Splits "host", "host:port", "[v6]", "[v6]:port" and, when bare_v6, an
 * unbracketed IPv6 text (two or more colons) that takes no port.  host gets
 * the part without brackets; *port points into s or is NULL; *v6 says the
 * host must be an IPv6 literal. */
static int split_hostport(const char *s, char *host, size_t hostcap, const char **port,
                          bool *v6, bool bare_v6, char *err, size_t errcap)
{
    const char *h = s, *colon = strrchr(s, ':');
    size_t hlen;
    *port = NULL;
    *v6 = false;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close)
            return fail(err, errcap, "missing ']' after IPv6 address");
        if (close[1] != '\0' && close[1] != ':')
            return fail(err, errcap, "unexpected text after ']'");
        h = s + 1;
        hlen = (size_t)(close - h);
        *port = close[1] ? close + 2 : NULL;
        *v6 = true;
    } else if (colon && bare_v6 && strchr(s, ':') != colon) {
        hlen = strlen(s);
        *v6 = true;
    } else {
        hlen = colon ? (size_t)(colon - s) : strlen(s);
        *port = colon ? colon + 1 : NULL;
    }
    if (hlen == 0)
        return fail(err, errcap, "empty host");
    if (hlen >= hostcap)
        return fail(err, errcap, "host is longer than %zu characters", hostcap - 1);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    if (!*v6 && strchr(host, ':'))
        return fail(err, errcap, "an IPv6 address needs brackets: [%s]", host);
    return 0;
}

static bool is_v4_mapped(const uint8_t a[16])
{
    static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a, pfx, sizeof(pfx)) == 0;
}

/* An IPv4-mapped IPv6 address/prefix is the IPv4 one it embeds. */
static void unmap(int *family, uint8_t addr[16], unsigned *prefix)
{
    if (*family != AF_INET6 || !is_v4_mapped(addr) || (prefix && *prefix < 96))
        return;
    memmove(addr, addr + 12, 4);
    memset(addr + 4, 0, 12);
    *family = AF_INET;
    if (prefix)
        *prefix -= 96;
}

/* Parses an address literal: IPv6 when v6 (it came bracketed or bare with
 * colons), else strict dotted-quad IPv4.  Returns the family or 0. */
static int parse_literal(const char *s, bool v6, uint8_t addr[16])
{
    memset(addr, 0, 16);
    if (v6)
        return inet_pton(AF_INET6, s, addr) == 1 ? AF_INET6 : 0;
    return inet_pton(AF_INET, s, addr) == 1 ? AF_INET : 0;
}

static unsigned addr_bits(int family)
{
    return family == AF_INET ? 32 : 128;
}

static bool prefix_covers(const uint8_t *net, unsigned prefix, const uint8_t *a)
{
    unsigned full = prefix / 8, rem = prefix % 8;
    if (memcmp(net, a, full) != 0)
        return false;
    if (rem == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rem));
    return (a[full] & mask) == net[full];
}

/* Fills the CIDR fields; host bits below the prefix are an error. */
static int rule_set_cidr(struct egress_rule *r, int family, uint8_t addr[16], unsigned prefix,
                         char *err, size_t errcap)
{
    uint8_t net[16] = {0};
    char text[INET6_ADDRSTRLEN];
    unmap(&family, addr, &prefix);
    memcpy(net, addr, prefix / 8);
    if (prefix % 8)
        net[prefix / 8] = (uint8_t)(addr[prefix / 8] & (0xff << (8 - prefix % 8)));
    if (memcmp(net, addr, sizeof(net)) != 0) {
        inet_ntop(family, net, text, sizeof(text));
        return fail(err, errcap, "address has bits set below its prefix (network is %s/%u)",
                    text, prefix);
    }
    r->kind = EGRESS_RULE_CIDR;
    r->family = family;
    memcpy(r->addr, net, sizeof(r->addr));
    r->prefix = prefix;
    return 0;
}

/* Fills a name or wildcard rule from host (modified in place). */
static int rule_set_name(struct egress_rule *r, char *host, char *err, size_t errcap)
{
    char *name = host;
    r->kind = EGRESS_RULE_HOST;
    if (host[0] == '*') {
        if (host[1] != '.' || host[2] == '\0')
            return fail(err, errcap, "a wildcard is \"*.\" followed by a domain");
        r->kind = EGRESS_RULE_WILDCARD;
        name = host + 2;
    }
    int rc = name_normalize(name, err, errcap);
    if (rc == 0)
        memcpy(r->host, name, strlen(name) + 1);
    return rc;
}

/* Parses the host part of an --allow argument into r. */
static int parse_host_rule(struct egress_rule *r, char *host, bool v6, char *err, size_t errcap)
{
    uint8_t addr[16];
    int family = parse_literal(host, v6, addr);
    if (family)
        return rule_set_cidr(r, family, addr, addr_bits(family), err, errcap);
    if (v6)
        return fail(err, errcap, "\"%s\" is not an IPv6 address", host);
    if (strchr(host, '/'))
        return fail(err, errcap, "\"%s\" is an address range: use --allow-ip", host);
    return rule_set_name(r, host, err, errcap);
}

/* Parses the host part of an --allow-ip argument into r. */
static int parse_cidr_rule(struct egress_rule *r, char *host, bool v6, char *err, size_t errcap)
{
    uint8_t addr[16];
    char *slash = strchr(host, '/');
    if (slash)
        *slash = '\0';
    int family = parse_literal(host, v6, addr);
    if (!family)
        return fail(err, errcap, "\"%s\" is not an %s address", host, v6 ? "IPv6" : "IPv4");
    unsigned prefix = addr_bits(family);
    if (slash && parse_decimal(slash + 1, addr_bits(family), &prefix) < 0)
        return fail(err, errcap, "prefix \"/%s\" is not a number in 0..%u", slash + 1,
                    addr_bits(family));
    return rule_set_cidr(r, family, addr, prefix, err, errcap);
}

/* The part both options share: the count cap, the length, the audit text,
 * the split into host and port; then parse_host fills in the rest. */
static int rule_add(struct egress_policy *p, const char *arg,
                    int (*parse_host)(struct egress_rule *, char *, bool, char *, size_t),
                    char *err, size_t errcap)
{
    struct egress_rule r;
    char host[EGRESS_RULE_TEXT_MAX];
    const char *port_s;
    bool v6;
    if (p->n >= EGRESS_MAX_RULES)
        return fail(err, errcap, "too many egress rules (at most %d)", EGRESS_MAX_RULES);
    if (!arg || strnlen(arg, sizeof(r.text)) >= sizeof(r.text))
        return fail(err, errcap, "rule is longer than %zu characters", sizeof(r.text) - 1);
    memset(&r, 0, sizeof(r));
    memcpy(r.text, arg, strlen(arg) + 1);
    r.port = EGRESS_DEFAULT_PORT;
    int rc = split_hostport(arg, host, sizeof(host), &port_s, &v6, true, err, errcap);
    if (rc == 0 && port_s)
        rc = parse_port(port_s, true, &r.port, err, errcap);
    if (rc == 0)
        rc = parse_host(&r, host, v6, err, errcap);
    if (rc == 0)
        p->rules[p->n++] = r;
    return rc;
}

int egress_policy_add_host(struct egress_policy *p, const char *arg, char *err, size_t errcap)
{
    return rule_add(p, arg, parse_host_rule, err, errcap);
}

int egress_policy_add_cidr(struct egress_policy *p, const char *arg, char *err, size_t errcap)
{
    return rule_add(p, arg, parse_cidr_rule, err, errcap);
}

int egress_parse_target(const char *s, size_t len, char *host, size_t hostcap, uint16_t *port)
{
    char buf[EGRESS_RULE_TEXT_MAX], h[EGRESS_RULE_TEXT_MAX];
    const char *port_s;
    uint8_t addr[16];
    bool v6;
    if (!s || len == 0 || len >= sizeof(buf) || memchr(s, '\0', len))
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (split_hostport(buf, h, sizeof(h), &port_s, &v6, false, NULL, 0) < 0 || !port_s ||
        parse_port(port_s, false, port, NULL, 0) < 0)
        return -EINVAL;
    if (parse_literal(h, v6, addr)) {
        for (char *c = h; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
    } else if (v6 || name_normalize(h, NULL, 0) < 0) {
        return -EINVAL;
    }
    if (strlen(h) >= hostcap)
        return -EINVAL;
    memcpy(host, h, strlen(h) + 1);
    return 0;
}

int egress_host_is_ip(const char *host)
{
    uint8_t addr[16];
    return parse_literal(host, false, addr) || parse_literal(host, true, addr);
}

static bool port_ok(const struct egress_rule *r, uint16_t port)
{
    return port != 0 && (r->port == 0 || r->port == port);
}

static bool name_matches(const struct egress_rule *r, const char *name, size_t len)
{
    size_t n = strlen(r->host);
    if (r->kind == EGRESS_RULE_HOST)
        return strcmp(r->host, name) == 0;
    /* Strictly below the suffix: "a.example.com" but not "example.com"
     * nor "badexample.com". */
    return r->kind == EGRESS_RULE_WILDCARD && len > n + 1 && name[len - n - 1] == '.' &&
           strcmp(name + len - n, r->host) == 0;
}

const struct egress_rule *egress_match_name(const struct egress_policy *p, const char *host,
                                            uint16_t port)
{
    char name[EGRESS_HOST_MAX + 2];
    if (!host || strnlen(host, sizeof(name)) >= sizeof(name) || egress_host_is_ip(host))
        return NULL;
    memcpy(name, host, strlen(host) + 1);
    if (name_normalize(name, NULL, 0) < 0)
        return NULL;
    size_t len = strlen(name);
    for (unsigned i = 0; i < p->n; i++)
        if (port_ok(&p->rules[i], port) && name_matches(&p->rules[i], name, len))
            return &p->rules[i];
    return NULL;
}

/* The address in sa as family + bytes, IPv4-mapped unwrapped; 0 when sa
 * is not IPv4/IPv6. */
static int sa_address(const struct sockaddr *sa, uint8_t addr[16])
{
    int family = sa ? sa->sa_family : 0;
    memset(addr, 0, 16);
    if (family == AF_INET)
        memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    else if (family == AF_INET6)
        memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    else
        return 0;
    unmap(&family, addr, NULL);
    return family;
}

struct range {
    uint8_t net[16];
    unsigned prefix;
    enum egress_addr_class cls;
};

/* IANA IPv4 Special-Purpose Address Registry (RFC 6890 and updates); the
 * broadcast address sits before 240/4, which contains it. */
static const struct range v4_ranges[] = {
    {{0}, 8, EGRESS_ADDR_UNSPECIFIED},
    {{10}, 8, EGRESS_ADDR_PRIVATE},
    {{100, 64}, 10, EGRESS_ADDR_CGNAT},
    {{127}, 8, EGRESS_ADDR_LOOPBACK},
    {{169, 254}, 16, EGRESS_ADDR_LINK_LOCAL},
    {{172, 16}, 12, EGRESS_ADDR_PRIVATE},
    {{192, 0, 0}, 24, EGRESS_ADDR_RESERVED},
    {{192, 0, 2}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{192, 88, 99}, 24, EGRESS_ADDR_RESERVED}, /* 6to4 relay, RFC 7526 */
    {{192, 168}, 16, EGRESS_ADDR_PRIVATE},
    {{198, 18}, 15, EGRESS_ADDR_RESERVED}, /* benchmarking, RFC 2544 */
    {{198, 51, 100}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{203, 0, 113}, 24, EGRESS_ADDR_DOCUMENTATION},
    {{224}, 4, EGRESS_ADDR_MULTICAST},
    {{255, 255, 255, 255}, 32, EGRESS_ADDR_BROADCAST},
    {{240}, 4, EGRESS_ADDR_RESERVED},
};

/* IANA IPv6 Special-Purpose Address Registry.  ::/8 after the ranges
 * inside it takes the deprecated IPv4-compatible ::/96; 6to4 and Teredo embed an IPv4
 * address we would have to trust, so they are reserved too. */
static const struct range v6_ranges[] = {
    {{0}, 128, EGRESS_ADDR_UNSPECIFIED},
    {{[15] = 1}, 128, EGRESS_ADDR_LOOPBACK},
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, EGRESS_ADDR_PRIVATE}, /* RFC 8215 */
    {{0}, 8, EGRESS_ADDR_RESERVED},
    {{0x01}, 64, EGRESS_ADDR_RESERVED},                               /* discard */
    {{0x20, 0x01, 0x0d, 0xb8}, 32, EGRESS_ADDR_DOCUMENTATION},
    {{0x20, 0x01}, 23, EGRESS_ADDR_RESERVED}, /* IETF protocols, Teredo */
    {{0x20, 0x02}, 16, EGRESS_ADDR_RESERVED}, /* 6to4 */
    {{0x3f, 0xff}, 20, EGRESS_ADDR_DOCUMENTATION},
    {{0xfc}, 7, EGRESS_ADDR_PRIVATE},
    {{0xfe, 0x80}, 10, EGRESS_ADDR_LINK_LOCAL},
    {{0xfe, 0xc0}, 10, EGRESS_ADDR_PRIVATE}, /* site-local, deprecated */
    {{0xff}, 8, EGRESS_ADDR_MULTICAST},
};

static const uint8_t nat64_wkp[12] = {0x00, 0x64, 0xff, 0x9b};

static enum egress_addr_class range_lookup(const struct range *t, size_t n, const uint8_t *a,
                                           enum egress_addr_class otherwise)
{
    for (size_t i = 0; i < n; i++)
        if (prefix_covers(t[i].net, t[i].prefix, a))
            return t[i].cls;
    return otherwise;
}

static enum egress_addr_class classify_v4(const uint8_t *a)
{
    return range_lookup(v4_ranges, sizeof(v4_ranges) / sizeof(v4_ranges[0]), a,
                        EGRESS_ADDR_PUBLIC);
}

enum egress_addr_class egress_classify(const struct sockaddr *sa)
{
    uint8_t a[16];
    int family = sa_address(sa, a);
    if (family == AF_INET)
        return classify_v4(a);
    if (family != AF_INET6)
        return EGRESS_ADDR_UNSUPPORTED;
    /* The NAT64 translator connects to the embedded address (RFC 6052). */
    if (memcmp(a, nat64_wkp, sizeof(nat64_wkp)) == 0)
        return classify_v4(a + 12);
    enum egress_addr_class c =
        range_lookup(v6_ranges, sizeof(v6_ranges) / sizeof(v6_ranges[0]), a,
                     EGRESS_ADDR_PUBLIC);
    /* Only 2000::/3 is allocated for global unicast. */
    if (c == EGRESS_ADDR_PUBLIC && (a[0] & 0xe0) != 0x20)
        return EGRESS_ADDR_RESERVED;
    return c;
}

static const struct {
    const char *name, *reason;
} class_text[] = {
    [EGRESS_ADDR_PUBLIC] = {"public", "resolves to public address"},
    [EGRESS_ADDR_LOOPBACK] = {"loopback", "resolves to loopback address"},
    [EGRESS_ADDR_PRIVATE] = {"private", "resolves to private address"},
    [EGRESS_ADDR_LINK_LOCAL] = {"link-local", "resolves to link-local address"},
    [EGRESS_ADDR_CGNAT] = {"CGNAT", "resolves to CGNAT address"},
    [EGRESS_ADDR_MULTICAST] = {"multicast", "resolves to multicast address"},
    [EGRESS_ADDR_UNSPECIFIED] = {"unspecified", "resolves to unspecified address"},
    [EGRESS_ADDR_BROADCAST] = {"broadcast", "resolves to broadcast address"},
    [EGRESS_ADDR_RESERVED] = {"reserved", "resolves to reserved address"},
    [EGRESS_ADDR_DOCUMENTATION] = {"documentation", "resolves to documentation address"},
    [EGRESS_ADDR_UNSUPPORTED] = {"unsupported", "resolves to non-IP address"},
};

const char *egress_addr_class_name(enum egress_addr_class c)
{
    if ((unsigned)c >= sizeof(class_text) / sizeof(class_text[0]))
        return "unknown";
    return class_text[c].name;
}

const struct egress_rule *egress_match_addr(const struct egress_policy *p,
                                            const struct sockaddr *sa, uint16_t port)
{
    uint8_t a[16];
    int family = sa_address(sa, a);
    if (!family)
        return NULL;
    for (unsigned i = 0; i < p->n; i++) {
        const struct egress_rule *r = &p->rules[i];
        if (r->kind == EGRESS_RULE_CIDR && r->family == family && port_ok(r, port) &&
            prefix_covers(r->addr, r->prefix, a))
            return r;
    }
    return NULL;
}

const struct egress_rule *egress_check_addr(const struct egress_policy *p,
                                            const struct egress_rule *name_rule,
                                            const struct sockaddr *sa, uint16_t port,
                                            const char **reason)
{
    const char *dummy;
    const struct egress_rule *r = egress_match_addr(p, sa, port);
    if (!reason)
        reason = &dummy;
    if (r)
        return r;
    /* Re-check what the caller passed: a CIDR rule or a rule for another
     * port must not stand in for a name match. */
    if (!name_rule || name_rule->kind == EGRESS_RULE_CIDR || !port_ok(name_rule, port)) {
        *reason = "not on the allowlist";
        return NULL;
    }
    enum egress_addr_class c = egress_classify(sa);
    if (c == EGRESS_ADDR_PUBLIC)
        return name_rule;
    *reason = class_text[c].reason;
    return NULL;
}

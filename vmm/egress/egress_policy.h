/* Egress policy: which host:port a guest may ask the host to connect to.
 * Pure functions over a rule list, no I/O: the proxy parses the guest's
 * CONNECT target, matches the NAME here, resolves it itself, asks here about
 * each resolved address, and connects only to addresses that passed.
 *
 * Rules.
 *   --allow HOST[:PORT]    a name rule.  HOST is a DNS name ("api.example.com",
 *                          matched exactly, case-folded, one trailing dot
 *                          ignored) or "*.example.com" (any name strictly
 *                          below example.com, at any depth; never example.com
 *                          itself; "*.com" is legal).  An IP literal here
 *                          (1.2.3.4, [2001:db8::1]) becomes an exact-address
 *                          CIDR rule (/32, /128), since a literal is an
 *                          address, not a name.
 *   --allow-ip CIDR[:PORT] an address rule: "10.0.0.0/8", "10.1.2.3" (/32),
 *                          "[fd00::/8]:443", "fd00::1" (bare IPv6 takes no
 *                          port).  Host bits set below the prefix are an
 *                          error, not silently masked: "10.1.2.3/8" is a typo
 *                          for either /32 or 10.0.0.0/8 and we cannot tell
 *                          which.  An IPv4-mapped rule (::ffff:a.b.c.d/96+)
 *                          is stored as the IPv4 rule it means.
 *   PORT is 1..65535 in plain decimal (no sign, no leading zero) or "*" for
 *   any port (stored as 0); absent, it is 443.  At most EGRESS_MAX_RULES.
 *
 * Decision for one resolved address A of a target host:port:
 *   allowed  if a CIDR rule covers A and port         (deciding rule: it)
 *   allowed  if a name rule matched host and port, and A is public
 *                                                     (deciding rule: it)
 *   denied   otherwise: "not on the allowlist" when no name rule matched,
 *            else "resolves to <class> address".
 * So a name on the allowlist that resolves (or is rebound) to loopback,
 * RFC 1918, link-local (cloud metadata 169.254.169.254), CGNAT, ... is
 * refused unless an --allow-ip rule names that address and port.  A target
 * that is an IP literal never matches a name rule: only CIDR rules admit it.
 * A CIDR rule admits its addresses whatever name led there; that grants
 * nothing the guest could not get by CONNECTing to the literal.
 *
 * Addresses.  An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4
 * address everywhere: it is classified by, and matches only IPv4 rules on,
 * its embedded address, because a dual-stack socket connects to that IPv4
 * address.  NAT64 (64:ff9b::/96) is classified by the embedded IPv4 too (the
 * translator would connect there) but matches only IPv6 rules.  Public IPv6
 * is 2000::/3 less the special ranges; everything else is not public. */
#ifndef AIRLOCK_EGRESS_EGRESS_POLICY_H
#define AIRLOCK_EGRESS_EGRESS_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_MAX_RULES 128
#define EGRESS_HOST_MAX 253 /* DNS name limit, RFC 1035 2.3.4 (text form) */
#define EGRESS_DEFAULT_PORT 443
#define EGRESS_RULE_TEXT_MAX 300

enum egress_rule_kind { EGRESS_RULE_HOST, EGRESS_RULE_WILDCARD, EGRESS_RULE_CIDR };

struct egress_rule {
    enum egress_rule_kind kind;
    char host[EGRESS_HOST_MAX + 1]; /* lower-case; WILDCARD: suffix without "*." */
    int family;                     /* CIDR: AF_INET or AF_INET6 */
    uint8_t addr[16];               /* CIDR: network, host bits zero */
    unsigned prefix;                /* CIDR: 0..32 or 0..128 */
    uint16_t port;                  /* 1..65535, or 0 = any port */
    char text[EGRESS_RULE_TEXT_MAX]; /* as the user wrote it, for audit */
};

struct egress_policy {
    struct egress_rule rules[EGRESS_MAX_RULES];
    unsigned n;
};

/* Adds an --allow HOST[:PORT] rule.  0, or -EINVAL with what was wrong
 * written to err (errcap bytes; err may be NULL). */
int egress_policy_add_host(struct egress_policy *p, const char *arg, char *err, size_t errcap);

/* Adds an --allow-ip CIDR[:PORT] rule.  0 or -EINVAL as above. */
int egress_policy_add_cidr(struct egress_policy *p, const char *arg, char *err, size_t errcap);

/* Parses a CONNECT target "host:port" (authority form, IPv6 literal in
 * brackets) of exactly len bytes; any NUL in them is an error.  The port is
 * required.  host receives the lower-cased name without a trailing dot, or
 * the address literal without brackets (hostcap bytes, EGRESS_HOST_MAX + 1
 * is always enough).  Accepted hosts are DNS names as for --allow, dotted-
 * quad IPv4 and bracketed IPv6; 0 or -EINVAL. */
int egress_parse_target(const char *s, size_t len, char *host, size_t hostcap, uint16_t *port);

/* 1 when host is an IPv4 or IPv6 address literal (no brackets), else 0. */
int egress_host_is_ip(const char *host);

/* The first name rule that allows host:port, or NULL.  host as produced by
 * egress_parse_target; an IP literal, an invalid name or port 0 match
 * nothing. */
const struct egress_rule *egress_match_name(const struct egress_policy *p, const char *host,
                                            uint16_t port);

enum egress_addr_class {
    EGRESS_ADDR_PUBLIC,
    EGRESS_ADDR_LOOPBACK,      /* 127/8, ::1 */
    EGRESS_ADDR_PRIVATE,       /* RFC 1918, fc00::/7, fec0::/10, 64:ff9b:1::/48 */
    EGRESS_ADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
    EGRESS_ADDR_CGNAT,         /* 100.64/10, RFC 6598 */
    EGRESS_ADDR_MULTICAST,     /* 224/4, ff00::/8 */
    EGRESS_ADDR_UNSPECIFIED,   /* 0/8, :: */
    EGRESS_ADDR_BROADCAST,     /* 255.255.255.255 */
    EGRESS_ADDR_RESERVED,      /* 240/4, IETF and deprecated ranges, non-2000::/3 */
    EGRESS_ADDR_DOCUMENTATION, /* TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20 */
    EGRESS_ADDR_UNSUPPORTED,   /* not AF_INET / AF_INET6 */
};

/* The class of an AF_INET or AF_INET6 address (see the header comment for
 * mapped and NAT64 addresses).  sa must point at a whole sockaddr_in or
 * sockaddr_in6 of its family; NULL or another family is UNSUPPORTED. */
enum egress_addr_class egress_classify(const struct sockaddr *sa);

/* "public", "loopback", "private", "link-local", ... */
const char *egress_addr_class_name(enum egress_addr_class c);

/* The first CIDR rule covering sa and port, or NULL. */
const struct egress_rule *egress_match_addr(const struct egress_policy *p,
                                            const struct sockaddr *sa, uint16_t port);

/* The decision for one resolved address (see the header comment).
 * name_rule is egress_match_name's result for the target (NULL if none).
 * Returns the deciding rule, or NULL with *reason set to a static string. */
const struct egress_rule *egress_check_addr(const struct egress_policy *p,
                                            const struct egress_rule *name_rule,
                                            const struct sockaddr *sa, uint16_t port,
                                            const char **reason);

#endif

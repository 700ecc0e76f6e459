/* The allowlist channel's messages; see egress_rules.h. */
#include "vmm/egress/egress_rules.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define KW_ALLOW "allow "
#define KW_ALLOW_IP "allow-ip "

/* Whether rule can be one line of the request (the parser's own checks
 * come at decode: this only keeps the framing intact). */
static bool rule_fits(const char *rule)
{
    size_t rl = strlen(rule);
    return rl && rl < EGRESS_RULE_TEXT_MAX && !strpbrk(rule, "\r\n");
}

ssize_t egress_rules_encode(char *buf, size_t cap, const char *const *allow, size_t nallow,
                            const char *const *allow_ip, size_t nallow_ip)
{
    size_t at = sizeof(EGRESS_RULES_MAGIC) - 1;
    if (nallow + nallow_ip > EGRESS_MAX_RULES || cap < at)
        return -E2BIG;
    memcpy(buf, EGRESS_RULES_MAGIC, at);
    for (size_t i = 0; i < nallow + nallow_ip; i++) {
        const char *rule = i < nallow ? allow[i] : allow_ip[i - nallow];
        const char *kw = i < nallow ? KW_ALLOW : KW_ALLOW_IP;
        if (!rule_fits(rule))
            return -EINVAL;
        size_t kl = strlen(kw), rl = strlen(rule);
        if (cap - at < kl + rl + 1)
            return -E2BIG;
        memcpy(buf + at, kw, kl);
        memcpy(buf + at + kl, rule, rl);
        buf[at + kl + rl] = '\n';
        at += kl + rl + 1;
    }
    return (ssize_t)at;
}

static int bad(struct egress_policy *p, char *err, size_t cap, size_t line, const char *why)
{
    p->n = 0; /* all or nothing */
    snprintf(err, cap, "line %zu: %s", line, why);
    return -EINVAL;
}

int egress_rules_decode(const char *buf, size_t len, struct egress_policy *p, char *err,
                        size_t errcap)
{
    size_t ml = sizeof(EGRESS_RULES_MAGIC) - 1;
    p->n = 0;
    if (len > EGRESS_RULES_MSG_MAX)
        return bad(p, err, errcap, 0, "longer than an allowlist can be");
    if (len < ml || memcmp(buf, EGRESS_RULES_MAGIC, ml))
        return bad(p, err, errcap, 1, "not an allowlist (no EGRESS-RULES header)");
    size_t at = ml;
    for (size_t line = 2; at < len; line++) {
        const char *nl = memchr(buf + at, '\n', len - at);
        if (!nl)
            return bad(p, err, errcap, line, "no line end");
        size_t ll = (size_t)(nl - (buf + at));
        bool ip = ll > strlen(KW_ALLOW_IP) && !memcmp(buf + at, KW_ALLOW_IP, strlen(KW_ALLOW_IP));
        size_t kl = ip ? strlen(KW_ALLOW_IP) : strlen(KW_ALLOW);
        if (!ip && (ll <= kl || memcmp(buf + at, KW_ALLOW, kl)))
            return bad(p, err, errcap, line, "want \"allow RULE\" or \"allow-ip RULE\"");
        size_t rl = ll - kl;
        if (rl >= EGRESS_RULE_TEXT_MAX)
            return bad(p, err, errcap, line, "the rule is too long");
        char rule[EGRESS_RULE_TEXT_MAX];
        memcpy(rule, buf + at + kl, rl);
        rule[rl] = '\0';
        for (size_t i = 0; i < rl; i++)
            if ((unsigned char)rule[i] <= ' ' || (unsigned char)rule[i] >= 0x7f)
                return bad(p, err, errcap, line, "the rule holds a byte that is not printable ASCII");
        char why[200];
        int rc = ip ? egress_policy_add_cidr(p, rule, why, sizeof(why))
                    : egress_policy_add_host(p, rule, why, sizeof(why));
        if (rc) {
            snprintf(err, errcap, "%s '%s': %s", ip ? "allow_ip" : "allow", rule, why);
            p->n = 0;
            return -EINVAL;
        }
        at += ll + 1;
    }
    return 0;
}

int egress_rules_exchange(int fd, const char *msg, size_t len, unsigned timeout_ms,
                          struct egress_rules_answer *a)
{
    ssize_t n;
    while ((n = send(fd, msg, len, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EPIPE ? -ECONNRESET : -errno;
    if ((size_t)n != len)
        return -EPROTO; /* a SEQPACKET message goes whole or not at all */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, (int)timeout_ms)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return -ETIMEDOUT;
    if (r < 0)
        return -errno;
    struct egress_rules_answer got;
    /* A longer message is cut to the struct's size, and MSG_TRUNC says so. */
    struct iovec iov = {.iov_base = &got, .iov_len = sizeof(got)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n == 0)
        return -ECONNRESET;
    if (n < 0)
        return errno == ECONNRESET ? -ECONNRESET : -errno;
    if ((size_t)n != sizeof(got) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        got.ncut > EGRESS_MAX_THREADS || got.nrules > EGRESS_MAX_RULES ||
        !memchr(got.err, 0, sizeof(got.err)))
        return -EPROTO;
    *a = got;
    return 0;
}

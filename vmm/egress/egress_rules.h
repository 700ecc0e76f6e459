/* A sandbox's allowlist changed while it runs (PATCH /v1/sandboxes/{id}
 * with "allow" / "allow_ip"): the messages on the channel between
 * `airlock serve` and that sandbox's egress broker.
 *
 * The channel is a SOCK_SEQPACKET pair the daemon makes for each sandbox;
 * its VM process gets one end (`sandbox-vm --egress-control-fd N`), hands
 * it to the broker it forks and closes its own copy before the guest
 * runs.  So the VM-facing process, the one a device bug could compromise,
 * never holds it: the broker's policy still comes only from the daemon,
 * as it came only from the command line before.
 *
 * The request is text, one message:
 *     "EGRESS-RULES\n" then one line per rule, "allow RULE\n" or
 *     "allow-ip RULE\n" (RULE as `run --allow` / `--allow-ip` take it),
 * at most EGRESS_MAX_RULES lines and EGRESS_RULES_MSG_MAX bytes.  The
 * broker trusts nothing in it: it parses every rule again with the
 * policy's own parser.  The answer is one fixed-size struct
 * egress_rules_answer: the rules now in force and the connections it
 * closed (the VM side's ids, as in the "egress" audit records). */
#ifndef AIRLOCK_EGRESS_EGRESS_RULES_H
#define AIRLOCK_EGRESS_EGRESS_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmm/egress/egress.h"
#include "vmm/egress/egress_policy.h"

#define EGRESS_RULES_MAGIC "EGRESS-RULES\n"
/* The header, and each rule's keyword, text and line end. */
#define EGRESS_RULES_MSG_MAX \
    (sizeof(EGRESS_RULES_MAGIC) + EGRESS_MAX_RULES * (sizeof("allow-ip ") + EGRESS_RULE_TEXT_MAX))
/* A broker answers at once (it takes a lock and walks its connections). */
#define EGRESS_RULES_ANSWER_MS 10000

struct egress_rules_answer {
    int32_t rc;                          /* 0, or -errno (err says why) */
    uint32_t nrules;                     /* rules in force now, the secrets' hosts included */
    uint32_t ncut;                       /* connections closed: cut[0, ncut) */
    uint64_t cut[EGRESS_MAX_THREADS];
    char err[240];
};

/* The request for these rules (either list may be empty) into buf.  Its
 * length, or -EINVAL for a rule holding a NUL or a line end, or longer
 * than a rule can be; -E2BIG past EGRESS_MAX_RULES or cap. */
ssize_t egress_rules_encode(char *buf, size_t cap, const char *const *allow, size_t nallow,
                            const char *const *allow_ip, size_t nallow_ip);

/* A request of exactly len bytes into *p (emptied first).  0, or -EINVAL
 * with err naming what was wrong (the line, or the rule and why the
 * policy refused it). */
int egress_rules_decode(const char *buf, size_t len, struct egress_policy *p, char *err,
                        size_t errcap);

/* The daemon's side: sends msg on fd and waits at most timeout_ms for the
 * answer, which is checked (its size, ncut, err's NUL) before *a is set.
 * 0 (a->rc is then the broker's verdict), -ETIMEDOUT, -ECONNRESET when
 * the broker is gone, -EPROTO for an answer that is not one, or -errno. */
int egress_rules_exchange(int fd, const char *msg, size_t len, unsigned timeout_ms,
                          struct egress_rules_answer *a);

#endif

/* The egress broker's policy, which a sandbox's daemon may replace while
 * the sandbox runs (vmm/egress/egress_rules.h), and the connections the
 * broker handed out under it.
 *
 * A request's decision holds one policy whole (egress_live_hold), so a
 * replacement never mixes two lists in one decision.  A connection
 * decided under a policy that was replaced before it was handed out is
 * checked again against the one in force (egress_live_admit): no
 * connection outlives, unchecked, the allowlist that admitted it.
 *
 * When the policy may change, the broker keeps a duplicate of every
 * socket it hands the VM process and, on a replacement, shuts down
 * (SHUT_RDWR: the TCP connection ends for both holders) each one the new
 * policy would not admit.  The cut is the broker's, not the VM process's,
 * so a compromised VM process cannot keep a connection open past it.
 * The VM process shuts a connection down when it ends (egress.c), which
 * the broker notices (POLLHUP) and closes its duplicate; the table is
 * bounded by the VM side's own cap (EGRESS_MAX_THREADS). */
#ifndef AIRLOCK_EGRESS_EGRESS_LIVE_H
#define AIRLOCK_EGRESS_EGRESS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/egress/egress_policy.h"
#include "vmm/egress/secret.h"

/* In the broker, before its seccomp filter: the policy at start (copied),
 * the secrets whose host:port every later allowlist keeps (they are the
 * secrets', not the allowlist's; NULL: none), and whether the policy may
 * change (only then are connections kept track of).  0 or -ENOMEM. */
int egress_live_init(const struct egress_policy *initial, const struct secret_set *pinned,
                     bool changeable);

/* The policy in force now, for one decision; give it back with
 * egress_live_release. */
const struct egress_policy *egress_live_hold(void);
void egress_live_release(const struct egress_policy *p);

/* A connection connected under p (held) for the VM side's connection
 * `conn` to host:port at addr (the verdict's address text): 0 when the
 * policy in force now still admits it (and, when the policy may change,
 * a duplicate of fd is kept); -EACCES with why when a replacement since
 * no longer does; -EMFILE when the table is full.  The caller then
 * closes fd and refuses. */
int egress_live_admit(const struct egress_policy *p, const char *host, uint16_t port,
                      const char *addr, uint64_t conn, int fd, char *why, size_t cap);

/* Serves replacements arriving on fd (the daemon's channel) on a thread
 * of its own, until fd is closed.  Call after the broker's filter.  0 or
 * -errno. */
int egress_live_serve(int fd);

#endif

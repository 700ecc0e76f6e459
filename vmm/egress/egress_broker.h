/* The egress broker: the one part of airlock that resolves names and opens
 * sockets to the outside.  It is a small process forked before the VM
 * exists (so it holds no KVM fds, no guest memory, no threads of the
 * monitor), with the policy copied in at fork time.  The VM-facing process
 * only asks "host:port?" and gets back a verdict and, when allowed, a
 * connected TCP socket (SCM_RIGHTS): so the jail can later forbid that
 * process from creating network sockets at all, and a monitor compromised
 * through a device bug still cannot ask the broker for more than the
 * policy allows -- the broker re-decides every request itself.
 *
 * Each request travels on its own SOCK_SEQPACKET pair (one end passed over
 * the control socket), so concurrent requests need no matching and a slow
 * lookup blocks only its own connection.
 *
 * The decision (vmm/egress/egress_policy.h), made here:
 *   - an IP-literal target is checked against the --allow-ip rules only;
 *   - a name not matching any --allow rule is denied WITHOUT a DNS lookup
 *     (a lookup of a guest-chosen name is itself a way to leak data);
 *   - an allowed name is resolved once and its addresses tried in the
 *     resolver's order: each is checked (public, or named by an --allow-ip
 *     rule) and, if it passed, connected to (bounded); the first connect
 *     that succeeds wins, a refused or failing address moves on to the
 *     next.  No second lookup, so a DNS answer that changes (rebinding)
 *     cannot switch the target to an address that was not checked. */
#ifndef AIRLOCK_EGRESS_EGRESS_BROKER_H
#define AIRLOCK_EGRESS_EGRESS_BROKER_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/audit/audit.h"
#include "vmm/egress/credential_ca.h"
#include "vmm/egress/egress_policy.h"
#include "vmm/egress/secret.h"

#define EGRESS_CONNECT_TIMEOUT_MS 10000
#define EGRESS_BROKER_MAX_BUSY 64 /* requests in flight in the broker */

struct egress_verdict {
    int status;                      /* 200 allowed (fd valid), 403 denied, 502 failed */
    bool credential;                 /* 200: the fd leads to the credential proxy
                                      * (vmm/egress/credential_proxy.h), not to the host */
    char reason[160];                /* why not (403/502), for the guest and the log */
    char rule[EGRESS_RULE_TEXT_MAX]; /* the deciding rule as written (200) */
    char addr[64];                   /* the address checked: connected (200) or refused */
};

/* The credential path (--secret): the secrets with their values, which
 * the broker keeps (the caller wipes its own copies once the broker is
 * started), and what the broker sends back. */
struct egress_broker_creds {
    struct secret_set *secrets;    /* values loaded; n == 0: no credential path */
    const char *ca_file;           /* --ca-file: the upstreams' CAs, or NULL for the host's */
    const struct audit *audit;     /* "credential" records (the broker keeps its fd) */
    char ca_pem[CRED_CA_PEM_MAX];  /* out: the VM's CA certificate, for the guest */
    size_t ca_pem_len;
    char err[300];                 /* out: why the broker could not start */
};

/* Forks the broker; *ctl is the VM side's end of the control socket.
 * Call before any thread exists.  Returns once the broker has its seccomp
 * filter (vmm/jail/seccomp.h, the "broker" list; -errno when it could not
 * install it: then there is no broker) and, with secrets, its CA and TLS
 * contexts (-EINVAL with creds->err when they failed).  The broker exits
 * when every copy of *ctl is closed, or with its parent.  update_fd (3 or
 * above, or -1): a sandbox's allowlist channel (vmm/egress/egress_rules.h),
 * which the broker serves and this process closes, in every case; the
 * policy may then be replaced while the VM runs (vmm/egress/egress_live.h).
 * 0 or -errno. */
int egress_broker_start(const struct egress_policy *policy, struct egress_broker_creds *creds,
                        int update_fd, int *ctl);

/* One request: fills *v, and *fd (a connected, blocking socket: TCP to
 * the host, or the credential proxy when v->credential) when v->status is
 * 200, else *fd = -1.  `tunnel`: a CONNECT (only tunnels reach a host that
 * has a secret); conn: the VM side's id, for the broker's audit records.
 * 0, or -errno when the broker could not be asked (then v says 502). */
int egress_broker_connect(int ctl, const char *host, uint16_t port, bool tunnel, uint64_t conn,
                          struct egress_verdict *v, int *fd);

/* The decision and the connection, in the calling process: what the broker
 * runs for each request (exposed for the unit tests). */
void egress_decide_and_connect(const struct egress_policy *policy, const char *host,
                               uint16_t port, struct egress_verdict *v, int *fd);

#endif

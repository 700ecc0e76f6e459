/* Egress, the VM-facing half: each guest connection to host vsock port
 * AGENT_EGRESS_VSOCK_PORT carries the raw bytes of one HTTP proxy request
 * (the agent's relay forwards 127.0.0.1:3128 in the guest there).  For each
 * one a thread reads the request head (vmm/http/http_request.h), applies the
 * per-VM limits, asks the broker (vmm/egress/egress_broker.h) for a decision and a
 * connected socket, answers the guest (200 for CONNECT; 403 denied; 429
 * over a limit; 502 the connection failed; 400/405/... malformed), and then
 * relays bytes both ways within the byte caps.  Every attempt leaves an
 * "egress" audit record; allowed ones leave an "egress_end" record with the
 * bytes and the duration when they close.  Denied attempts are reported on
 * stderr too unless quiet.
 *
 * Threads are bounded by the vsock device's own connection cap
 * (VSOCK_MAX_CONNS); a thread over the egress limit only answers 429. */
#ifndef AIRLOCK_EGRESS_EGRESS_H
#define AIRLOCK_EGRESS_EGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/audit/audit.h"
#include "vmm/egress/egress_policy.h"
#include "vmm/egress/secret.h"

#define EGRESS_DEFAULT_MAX_CONNS 16     /* open at once */
#define EGRESS_DEFAULT_MAX_MIB   1024   /* each way, per connection */
#define EGRESS_DEFAULT_RATE      120    /* new connections per minute */
#define EGRESS_RATE_MAX          10000
#define EGRESS_HEAD_TIMEOUT_MS   30000  /* the guest must send its request head by then */
#define EGRESS_IDLE_TIMEOUT_MS   300000 /* a relay with no bytes either way for this long ends */

#define EGRESS_MAX_THREADS 256 /* = VSOCK_MAX_CONNS: never more guest connections */

struct egress_conn;

struct egress_config {
    struct egress_policy policy;
    unsigned max_conns;
    uint64_t max_bytes;   /* each way */
    unsigned rate_per_min;
    bool quiet;
    /* --secret: their placeholders (the values stay in the broker), so a
     * placeholder in a head this side can read (plain HTTP, CONNECT) is
     * refused as an exfiltration attempt */
    struct secret_set secrets;
    const char *ca_file;            /* --ca-file */
};

struct egress {
    const struct egress_config *cfg;
    const struct audit *audit;
    int broker;                   /* control socket to the broker */
    pthread_mutex_t lock;
    pthread_cond_t idle;          /* signalled when active drops to 0 */
    unsigned active;              /* relays holding a slot */
    unsigned threads;             /* connection threads alive */
    uint64_t next_id;
    bool stopping;
    uint64_t *starts;             /* ring of the last rate_per_min start times (ms) */
    unsigned starts_head, starts_n;
    struct egress_conn *conns[EGRESS_MAX_THREADS]; /* live, to cut on egress_stop */
    int handoff[2];               /* new connections, loop -> dispatcher thread */
};

/* cfg and audit must outlive e; broker is egress_broker_start's socket. */
int egress_init(struct egress *e, const struct egress_config *cfg, const struct audit *audit,
                int broker);
/* Starts the dispatcher thread that gives each connection its thread;
 * call before the event loop's seccomp filter goes on.  0 or -errno. */
int egress_start(struct egress *e);
/* A guest connection arrived: returns the fd the vsock device should own
 * (its peer goes to a new thread), or -errno (the guest gets RST). */
int egress_accept(struct egress *e);
/* Cuts every relay still open, waits (briefly) for their end records, and
 * refuses new connections.  Safe to call more than once. */
void egress_stop(struct egress *e);

#endif

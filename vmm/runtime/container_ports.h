/* A container's ports, as a container's are: whatever its processes
 * listen on, reachable at the container's addresses in its network
 * namespace.  The engines publish ports by sending connections there
 * (Docker's docker-proxy dials CONTAINER_IP:PORT and its iptables DNAT
 * rewrites to it; Podman's CNI portmap and netavark DNAT to it; a
 * Kubernetes Service or hostPort ends at the pod's IP), and none of them
 * tells the runtime which ports those are (docs/kubernetes.md, "Published
 * ports").  The VM has no NIC, so the init stand-in, which lives in that
 * namespace, mirrors the guest's listeners there:
 *   - every CONTAINER_PORTS_POLL_MS (faster in the container's first
 *     seconds) it reads the guest's /proc/net/tcp and tcp6 through the
 *     agent, and takes each port a socket LISTENs on at a wildcard
 *     address (0.0.0.0 or ::); one bound to 127.0.0.1 stays private to
 *     the guest, as it would to a container (the agent's egress proxy
 *     is one);
 *   - such a port P gets a listener on 0.0.0.0:P in the namespace through
 *     the forwarder (vmm/forward: its connections reach 127.0.0.1:P in
 *     the guest over vsock, with its bounds and audit records); a port
 *     nobody listens on has no listener, so a client is refused (RST) as
 *     by a container;
 *   - a port the guest stopped listening on for two reads in a row loses
 *     its listener (and the connections through it);
 *   - at most FORWARD_MAX_PORTS ports; more are not served.
 * Everything ends with container_ports_stop, before the VM goes. */
#ifndef AIRLOCK_RUNTIME_CONTAINER_PORTS_H
#define AIRLOCK_RUNTIME_CONTAINER_PORTS_H

#include <stddef.h>
#include <stdint.h>

struct audit; /* vmm/audit/audit.h, through vmm/forward */

#define CONTAINER_PORTS_POLL_MS 1000
#define CONTAINER_PORTS_FAST_MS 200     /* ... in the container's first seconds */
#define CONTAINER_PORTS_FAST_FOR_MS 10000
/* What is kept of a table (the listeners come first in it; the rest of a
 * longer one is read and dropped) and what is read at all (more drops the
 * agent connection). */
#define CONTAINER_PORTS_TABLE_KEEP (256u * 1024)
#define CONTAINER_PORTS_TABLE_MAX (64u << 20)

/* 65536 bits: a set of TCP ports. */
#define CONTAINER_PORTS_SET_WORDS (65536 / 64)

struct container_ports;

/* Starts mirroring the listeners of the guest whose agent is at `sock`
 * into the caller's network namespace, its records into `audit` (which
 * must outlive it).  Its threads block every signal.  0, or -errno. */
int container_ports_start(const char *sock, const struct audit *audit,
                          struct container_ports **out);
/* Ends the mirroring, every listener and connection; NULL is fine. */
void container_ports_stop(struct container_ports *p);

/* Adds to `set` the port of every LISTEN socket on a wildcard address in
 * a /proc/net/tcp or /proc/net/tcp6 table of len bytes (the guest's: any
 * bytes; a line that does not parse is skipped).  How many it added. */
unsigned container_ports_parse(const char *table, size_t len, uint64_t *set);

#endif

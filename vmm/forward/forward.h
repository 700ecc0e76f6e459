/* Inbound forwards: host listeners whose connections reach a guest TCP
 * port through the agent's forward service (proto.h, "Inbound
 * forwards").  One forwarder per VM, whoever holds the VM: `airlock run
 * -p` in the monitor, `airlock serve` for a sandbox's ports.  The caller
 * says how to reach the guest's vsock port (the dial); the forwarder owns
 * the listeners, a thread per connection, and the audit records.  Where
 * the VM's vsock device is in this process (`run -p`), the caller may
 * offer attach instead: each client's socket then goes to the device
 * itself, which moves its bytes with no thread or copy of ours and
 * reports back how the connection ended (forward_attach).
 *
 * Only the published guest ports are ever named in a hello, so a
 * listener reaches exactly its port, never the agent's command channel.
 * Bounds: FORWARD_MAX_PORTS per VM, FORWARD_MAX_CONNS connections at once
 * per port and FORWARD_MAX_CONNS_VM in all (more are closed at accept,
 * and audited), FORWARD_BUF bytes
 * held per direction of a connection (a client that never reads stops
 * the guest's sender, it never grows memory; attached, the device's own
 * per-connection cap), and an idle timeout. */
#ifndef AIRLOCK_FORWARD_FORWARD_H
#define AIRLOCK_FORWARD_FORWARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "guest/agent/proto.h"
#include "vmm/audit/audit.h"
#include "vmm/forward/forward_spec.h"

#define FORWARD_MAX_PORTS 64
#define FORWARD_MAX_CONNS 128     /* at once, per published port */
#define FORWARD_MAX_CONNS_VM 192  /* at once, all ports (the guest relay's share; vsock has 256) */
/* Threads a forwarder may run: one accepts, one per connection.  In the
 * monitor (run -p) the connections' share the egress threads' room under
 * its thread cap (vmm/cli/cmd_boot.c, SESSION_THREADS). */
#define FORWARD_MAX_THREADS (1 + FORWARD_MAX_CONNS_VM)
#define FORWARD_BUF       (32 * 1024)
#define FORWARD_IDLE_MS_DEFAULT (15 * 60 * 1000) /* no byte either way */
#define FORWARD_REPLY_MS  10000 /* the agent's answer to a hello */

/* How an attached connection ended (forward_attach.ended). */
enum forward_end {
    FORWARD_END_CLOSED,    /* both sides closed */
    FORWARD_END_RESET,     /* reset, an error, or forward_dial.detach */
    FORWARD_END_REFUSED,   /* forward_attach.answer said no */
    FORWARD_END_NO_ANSWER, /* nothing listens on the guest's forward service */
};

/* A client's socket handed to the VM's own vsock device
 * (forward_dial.attach), which then moves its bytes to and from the
 * guest's forward service itself: no thread, no socket pair and no copy
 * of the forwarder's.  pre (the hello) goes to the guest first; the
 * guest's first reply_len bytes (the agent's answer) go to answer, never
 * to the client. */
struct forward_attach {
    uint8_t pre[AGENT_FWD_HELLO_SIZE];
    uint8_t pre_len, reply_len;
    uint64_t tag;                 /* names it for forward_dial.detach */
    /* 0: carry on; else the connection ends (FORWARD_END_REFUSED). */
    int (*answer)(void *conn, const uint8_t *reply);
    /* Exactly once, from the device's thread, before the socket is
     * closed: bytes from the client and to it (pre and reply not
     * counted). */
    void (*ended)(void *conn, enum forward_end how, uint64_t in, uint64_t out);
    void *conn;
    _Atomic uint64_t *moved;      /* bytes either way, as they move */
};

struct forward_dial {
    /* A blocking fd connected to the guest's AGENT_FORWARD_VSOCK_PORT,
     * past the vsock handshake, or -errno.  Called from a connection's
     * thread. */
    int (*dial)(void *opaque);
    /* Optional, used instead of dial when set (the monitor's own `run
     * -p`, where the device is in this process): hands cfd (non-blocking)
     * to the vsock device for the guest's AGENT_FORWARD_VSOCK_PORT.  0:
     * cfd belongs to the device and a->ended will come; -errno: cfd is
     * still ours and no callback comes.  Never called with the
     * forwarder's lock held (ended takes it). */
    int (*attach)(void *opaque, int cfd, const struct forward_attach *a);
    /* Ends the attached connection with this tag (its ended says
     * FORWARD_END_RESET); -ENOENT when it ended already. */
    int (*detach)(void *opaque, uint64_t tag);
    void *opaque;
    const struct audit *audit; /* records of forwards and connections */
    unsigned idle_ms;          /* 0: FORWARD_IDLE_MS_DEFAULT */
};

/* One published port, as listed. */
struct forward_info {
    struct forward_spec spec; /* host_port: the bound one */
    char address[64];         /* "IP:PORT" as bound */
    unsigned conns;           /* open now */
    uint64_t total;           /* accepted since published */
};

struct forwarder;

int forwarder_new(const struct forward_dial *dial, struct forwarder **out);
/* Binds the spec's listener (in the caller's network namespace, which is
 * why `run` binds before it jails itself): the fd, with the bound address
 * in `address`, or -errno with err naming the address. */
int forward_listen(const struct forward_spec *s, char *address, size_t addrlen, char *err,
                   size_t errlen);
/* Publishes: the listener from forward_listen (owned from now on, even on
 * failure).  -EEXIST when the guest port is published already, -ENOSPC
 * past FORWARD_MAX_PORTS; err says which. */
int forwarder_adopt(struct forwarder *f, const struct forward_spec *s, int listen_fd,
                    const char *address, char *err, size_t errlen);
/* forward_listen and forwarder_adopt; `info` (may be NULL) gets the
 * bound address. */
int forwarder_add(struct forwarder *f, const struct forward_spec *s, struct forward_info *info,
                  char *err, size_t errlen);
/* Ends one: its listener and every connection through it (-ENOENT). */
int forwarder_remove(struct forwarder *f, uint16_t guest_port);
/* Up to max published ports, in the order published; how many there are. */
size_t forwarder_list(struct forwarder *f, struct forward_info *out, size_t max);
/* Connections open now, all ports. */
unsigned forwarder_conns(struct forwarder *f);
/* Ends every forward and connection and frees; NULL is fine. */
void forwarder_free(struct forwarder *f);

/* For a caller that dials itself (the daemon's HTTP route to a guest
 * port).  Sends the hello on vfd (a blocking connection to the guest's
 * forward service) and reads the agent's answer: 0, with the guest's TCP
 * stream on vfd from now on; the errno of the guest's connect
 * (ECONNREFUSED: nobody listens); or -errno of our own. */
int forward_handshake(int vfd, uint16_t guest_port);
/* Moves bytes both ways between cfd and vfd until both ends closed, an
 * error, or idle_ms (0: the default) with no byte; FORWARD_BUF held each
 * way.  How it ended ("closed", "reset", "idle timeout"), and the bytes
 * each way. */
const char *forward_pipe(int cfd, int vfd, unsigned idle_ms, uint64_t *in, uint64_t *out);

#endif

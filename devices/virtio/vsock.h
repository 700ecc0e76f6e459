/* virtio-vsock (virtio 1.2 §5.10), emulated in userspace: stream sockets
 * between the guest and host ports that the monitor maps to Unix sockets
 * (the Firecracker hybrid-vsock scheme).  Three queues: rx (0), tx (1),
 * event (2); no feature bits beyond VERSION_1 (no SEQPACKET).
 *
 * Every packet header is copied once out of the tx chain and checked
 * (length against the chain, type, both CIDs) before anything is done with
 * it; a packet that breaks the rules costs the guest that connection (RST),
 * never the monitor.  Flow control is credit based both ways (§5.10.6.3):
 * we advertise VSOCK_BUF_ALLOC bytes per connection and reset any
 * connection whose guest sends beyond it, so host-side buffering per
 * connection never exceeds that cap; at most VSOCK_MAX_CONNS connections
 * exist at once and REQUESTs beyond that get RST.
 *
 * The device knows no socket paths and no event loop: it talks to the
 * monitor through struct vsock_host_ops and is driven through the entry
 * points below.  The monitor's loop is assumed level-triggered: the device
 * asks to watch an fd only while it can act on what the fd reports (host
 * data: while the guest has credit and rx buffers).
 *
 * Not done: a timeout for host-initiated REQUESTs the guest never answers
 * (the client waits until the guest answers, resets, or the driver
 * resets); the device never sends CREDIT_REQUEST (guests send
 * CREDIT_UPDATE on their own as they consume). */
#ifndef AIRLOCK_DEVICES_VIRTIO_VSOCK_H
#define AIRLOCK_DEVICES_VIRTIO_VSOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/mmio.h"

#define VSOCK_QUEUE_MAX 256
#define VSOCK_RX_QUEUE  0
#define VSOCK_TX_QUEUE  1
#define VSOCK_EVT_QUEUE 2

#define VSOCK_HOST_CID  2
#define VSOCK_GUEST_CID_DEFAULT 3    /* the guest's address unless --cid says otherwise */
#define VSOCK_MAX_CONNS 256          /* concurrent connections (a limit: docs/security.md "Limits") */
#define VSOCK_BUF_ALLOC (256u << 10) /* our buf_alloc = per-connection host buffer cap */
#define VSOCK_MAX_PKT   (64u << 10)  /* payload bytes we put in one rx packet */
#define VSOCK_RST_QUEUE 64           /* RSTs waiting for rx buffers */
#define VSOCK_EPHEMERAL (1u << 30)   /* first host port for host-initiated connections */

/* §5.10.6 struct virtio_vsock_hdr, little-endian, 44 bytes. */
#define VSOCK_HDR_BYTES 44
#define VSOCK_TYPE_STREAM 1
enum {
    VSOCK_OP_INVALID = 0, VSOCK_OP_REQUEST = 1, VSOCK_OP_RESPONSE = 2, VSOCK_OP_RST = 3,
    VSOCK_OP_SHUTDOWN = 4, VSOCK_OP_RW = 5, VSOCK_OP_CREDIT_UPDATE = 6,
    VSOCK_OP_CREDIT_REQUEST = 7,
};
#define VSOCK_SHUTDOWN_RCV  1u
#define VSOCK_SHUTDOWN_SEND 2u
#define VSOCK_EVENT_TRANSPORT_RESET 0 /* §5.10.6.7; 5.10.6.6 in virtio 1.1 */

/* A header after it was copied out of guest memory (host byte order). */
struct vsock_hdr {
    uint64_t src_cid, dst_cid;
    uint32_t src_port, dst_port;
    uint32_t len;
    uint16_t type, op;
    uint32_t flags, buf_alloc, fwd_cnt;
};
void vsock_hdr_decode(const uint8_t raw[VSOCK_HDR_BYTES], struct vsock_hdr *h);
void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t raw[VSOCK_HDR_BYTES]);

struct virtio_vsock;

struct vsock_host_ops {
    /* The guest opened a connection to host port `port` (dst_cid 2): return
     * a connected, non-blocking host fd (the monitor connects to a Unix
     * socket PATH_<port>), or -errno (then the guest gets RST).  The fd
     * should be a socket: writes use MSG_NOSIGNAL, so a client that went
     * away is an error, not a SIGPIPE. */
    int (*connect_port)(void *opaque, uint32_t port);
    /* Interest in fd changed: the monitor (re)arms its event loop for
     * readable and/or writable; both false = stop watching (the device
     * still owns the fd).  The loop is level-triggered, and "stop" must
     * take the fd out of it (EPOLL_CTL_DEL): epoll reports EPOLLHUP and
     * EPOLLERR even for an fd registered with no events, which would spin.
     * Called only while the transport lock is held, from the event loop or
     * (on a driver reset, which closes every fd) from a vCPU thread.
     * Before the device closes an fd it was watching, it calls this with
     * both false. */
    void (*watch)(void *opaque, int fd, bool readable, bool writable);
    /* A guest REQUEST was refused (RST) because VSOCK_MAX_CONNS
     * connections are open.  Called for each refusal, so the monitor can
     * report the limit (once: vmm/audit/limits.h); the device itself knows no
     * audit log.  May be NULL. */
    void (*conn_cap)(void *opaque, unsigned max);
};

/* guest_cid must be in 3..0xfffffffe (§5.10.4: only the low 32 bits are
 * used; 0-2 and -1 are reserved).  0 or -EINVAL / -ENOMEM. */
int virtio_vsock_create(uint64_t guest_cid, const struct vsock_host_ops *ops, void *opaque,
                        struct virtio_vsock **out);
/* Closes every connection fd and frees the device. */
void virtio_vsock_destroy(struct virtio_vsock *v);
extern const struct virtio_device_ops virtio_vsock_ops;

/* The transport lock is held by the caller for all of these. */

/* A host client (fd, already through the monitor's "CONNECT <port>\n"
 * handshake) wants guest port `guest_port`: sends OP_REQUEST to the guest.
 * On success the fd is owned by the device from now on; it later writes
 * "OK <hostport>\n" to fd when the guest answers RESPONSE, or closes fd on
 * RST.  On failure (-ENOTCONN: the driver is not running; -EBUSY: at the
 * connection cap) the caller still owns fd. */
int virtio_vsock_connect_guest(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                               uint32_t guest_port);
/* An attached host fd (virtio_vsock_attach_guest): a host client that
 * speaks to the guest service itself, with no handshake on the fd.  The
 * inbound forwards (vmm/forward) hand their TCP clients over this way.
 * `pre` goes to the guest first, ahead of any byte read from fd; the
 * first `reply_len` bytes the guest sends are its answer, which goes to
 * `answer` and never to fd; everything after that either way is the
 * fd's stream. */
#define VSOCK_PRE_MAX   16
#define VSOCK_REPLY_MAX 8
enum vsock_end {
    VSOCK_END_CLOSED,    /* both sides closed their sending half */
    VSOCK_END_RESET,     /* an RST, an fd error, a driver reset, or virtio_vsock_end_attached */
    VSOCK_END_REFUSED,   /* `answer` said no */
    VSOCK_END_NO_ANSWER, /* the guest refused the REQUEST (nobody listens on the port) */
};
struct vsock_attach {
    uint8_t pre[VSOCK_PRE_MAX];
    uint8_t pre_len, reply_len; /* <= VSOCK_PRE_MAX, <= VSOCK_REPLY_MAX */
    uint64_t tag;               /* names it for virtio_vsock_end_attached */
    /* Called once, when reply_len bytes came: 0 carries on; anything
     * else ends the connection (VSOCK_END_REFUSED).  May be NULL. */
    int (*answer)(void *opaque, const uint8_t *reply);
    /* Called exactly once when the connection ends, however it ends
     * (the device destroyed included), before fd is closed: the bytes
     * read from fd for the guest and written to fd from the guest, pre
     * and reply not counted.  Transport lock held (except from
     * virtio_vsock_destroy). */
    void (*ended)(void *opaque, enum vsock_end how, uint64_t in, uint64_t out);
    void *opaque;
    /* May be NULL: bytes moved either way are added here as they move
     * (a reader elsewhere can tell an idle connection). */
    _Atomic uint64_t *moved;
};

/* Like virtio_vsock_connect_guest for an attached fd: no "OK" line, and
 * the callbacks above.  On failure (-EINVAL: a bad attach; the rest as
 * there) the caller still owns fd and no callback comes. */
int virtio_vsock_attach_guest(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                              uint32_t guest_port, const struct vsock_attach *a);
/* Ends the attached connection with this tag (RST to the guest; its
 * `ended` says VSOCK_END_RESET): 0, or -ENOENT when there is none. */
int virtio_vsock_end_attached(struct virtio_vsock *v, struct virtio_mmio *t, uint64_t tag);

/* The event loop saw `fd` readable/writable (EPOLLIN/EPOLLOUT/EPOLLHUP/
 * EPOLLERR bits). */
void virtio_vsock_fd_event(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                           uint32_t events);
/* Queues TRANSPORT_RESET on the event queue and drops every connection
 * (§5.10.6.7), e.g. after a restore.  Until the driver has handled it
 * (given the event buffer back), a connection virtio_vsock_connect_guest
 * or _attach_guest opens holds its REQUEST (its client waits), and sends
 * it then. */
void virtio_vsock_transport_reset(struct virtio_vsock *v, struct virtio_mmio *t);

/* What tests and the fuzzer check against the caps. */
struct virtio_vsock_stats {
    unsigned conns;            /* open connections */
    uint64_t buffered;         /* guest bytes held for host fds, all connections */
    uint32_t max_buffered;     /* the most held for one connection right now */
    uint64_t rst_dropped;      /* RSTs lost because the guest gave no rx buffers */
};
void virtio_vsock_stats(const struct virtio_vsock *v, struct virtio_vsock_stats *s);

#endif

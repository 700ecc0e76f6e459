/* Internal to the virtio-vsock device: the device state and the
 * connection table.  vsock.c owns the tx and event queues and the packet
 * rules, vsock_rx.c the rx queue, vsock_conn.c the host fds, the
 * per-connection buffer and the credit arithmetic (§5.10.6.3). */
#ifndef AIRLOCK_DEVICES_VIRTIO_VSOCK_CONN_H
#define AIRLOCK_DEVICES_VIRTIO_VSOCK_CONN_H

#include "devices/virtio/vsock.h"

/* rx chains held at once: one host read fills up to this many (Linux 6.1
 * offers 4 KiB rx buffers, so one read takes up to 128 KiB instead of a
 * recv per 4 KiB). */
#define VSOCK_RX_BATCH 32
/* Guest buffers one such read may span (chains are usually one or two). */
#define VSOCK_RX_IOV 256

enum vsock_conn_state {
    CONN_FREE,
    CONN_REQUESTING, /* host-initiated: REQUEST queued or sent, no RESPONSE yet */
    CONN_CONNECTED,
};

/* Control packets a connection owes the guest. */
enum { PEND_REQUEST = 1, PEND_RESPONSE = 2, PEND_CREDIT = 4, PEND_SHUTDOWN = 8 };

struct vsock_conn {
    enum vsock_conn_state state;
    int fd;
    uint32_t local_port, peer_port; /* host port, guest port */
    uint8_t pending;                /* PEND_* */
    bool request_held;              /* its REQUEST waits for the driver to handle a reset */
    bool fd_readable;               /* the loop said so and read() has not said EAGAIN */
    bool host_eof;                  /* read() returned 0: host sends no more */
    bool guest_no_send, guest_no_recv; /* SHUTDOWN flags the guest sent (sticky) */
    bool shut_wr;                   /* shutdown(fd, SHUT_WR) done */
    bool watch_r, watch_w;          /* what the monitor was last told */
    /* host -> guest credit: the guest's buffer and what it consumed. */
    uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt;
    /* guest -> host: bytes received, bytes written to fd, and the fwd_cnt
     * the guest last heard from us. */
    uint32_t rx_cnt, fwd_cnt, fwd_reported;
    uint8_t *buf;                   /* ring of buf_cap bytes, only while non-empty */
    uint32_t buf_cap, buf_head, buf_len; /* cap: a power of two <= VSOCK_BUF_ALLOC */
    /* Attached (virtio_vsock_attach_guest): how far pre went and the
     * answer came, and how the connection ends (for att.ended). */
    bool attached;
    uint8_t pre_sent, reply_got;
    enum vsock_end end;
    uint8_t reply[VSOCK_REPLY_MAX];
    struct vsock_attach att;
};

/* An RST owed to the guest for a connection that no longer (or never)
 * existed, addressed as a reply. */
struct vsock_rst {
    uint64_t src_cid;
    uint32_t src_port, dst_port;
};

struct virtio_vsock {
    uint64_t guest_cid;
    const struct vsock_host_ops *ops;
    void *opaque;
    struct vsock_conn conns[VSOCK_MAX_CONNS];
    unsigned nconns;
    unsigned rr;                    /* where the next rx scan starts (fairness) */
    uint32_t next_port;             /* next ephemeral host port to try */
    struct vsock_rst rsts[VSOCK_RST_QUEUE];
    unsigned rst_head, rst_len;
    uint64_t rst_dropped;
    bool event_pending;             /* TRANSPORT_RESET not yet delivered */
    /* TRANSPORT_RESET delivered but the driver has not yet handed the
     * event buffer back (Linux refills the event queue only after it has
     * reset its sockets): a connection made before then would be reset
     * with them, so host-initiated connects wait. */
    bool reset_unacked;
    uint16_t reset_avail;           /* the event queue's avail index at delivery */
    bool rx_starved;                /* work waits for rx buffers: read watches off */
    /* rx chains popped and not yet used, in the order the driver offered
     * them: rx[(rx_first + i) % VSOCK_RX_BATCH] for i < rx_held. */
    unsigned rx_first, rx_held;
    struct virtq_chain tx, rx[VSOCK_RX_BATCH];
};

/* Queues may be used only while the driver runs and has not broken one. */
static inline bool vsock_live(const struct virtio_mmio *t)
{
    return (t->status & VIRTIO_STATUS_DRIVER_OK) &&
           !(t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
}

/* ---- vsock_rx.c ---- */
/* Sends what is owed while rx buffers last; sets rx_starved when they
 * run out. */
void vsock_rx_flush(struct virtio_vsock *v, struct virtio_mmio *t);

/* ---- vsock_conn.c ---- */
struct vsock_conn *conn_find(struct virtio_vsock *v, uint32_t local_port, uint32_t peer_port);
struct vsock_conn *conn_by_fd(struct virtio_vsock *v, int fd);
/* A free slot set up for fd, or NULL at the cap. */
struct vsock_conn *conn_open(struct virtio_vsock *v, int fd, uint32_t local_port,
                             uint32_t peer_port, enum vsock_conn_state state);
/* Stops watching and closes the fd, frees the slot; no packet. */
void conn_close(struct virtio_vsock *v, struct vsock_conn *c);
/* conn_close, and an RST to the guest. */
void conn_reset(struct virtio_vsock *v, struct vsock_conn *c);
void conn_close_all(struct virtio_vsock *v);
/* Queues an RST (dropped, and counted, when the queue is full). */
void rst_queue(struct virtio_vsock *v, uint64_t src_cid, uint32_t src_port, uint32_t dst_port);
/* Bytes the guest can still take from us (0 when its numbers make no sense). */
uint32_t conn_credit(const struct vsock_conn *c);
/* Tells the monitor what to watch now, if that changed. */
void conn_watch(struct virtio_vsock *v, struct vsock_conn *c);
void conn_watch_all(struct virtio_vsock *v);
/* Guest payload for the host fd: written now, or buffered (the caller
 * checked it fits the cap).  -errno when the fd failed (reset it). */
int conn_send(struct vsock_conn *c, const uint8_t *data, uint32_t len);
/* Host-initiated: tells the host client its connection is up with
 * "OK <hostport>\n" (outside the guest's byte count).  -errno when the
 * line could not be written whole (reset it). */
int conn_hello(struct vsock_conn *c);
/* Adds n to an attached fd's activity counter. */
void conn_moved(struct vsock_conn *c, uint64_t n);
/* Writes what is buffered; -errno when the fd failed. */
int conn_flush(struct vsock_conn *c);
/* After any change: half-closes the fd, finishes a connection both sides
 * closed (RST, §5.10.6.5), asks for a CREDIT_UPDATE when the guest is
 * running out.  Returns false when c was closed. */
bool conn_progress(struct virtio_vsock *v, struct vsock_conn *c);

#endif

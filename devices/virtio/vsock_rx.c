/* virtio-vsock, device -> guest: what connections owe the guest (control
 * packets, host data, RSTs) goes into rx buffers as the driver offers them
 * (virtio 1.2 §5.10.6.4), within each connection's credit (§5.10.6.3). */
#include "devices/virtio/vsock_conn.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Makes v->rx an rx chain with room for a header.  Chains too small for
 * one carry nothing and go back empty (§5.10.6.4: every packet starts
 * with a whole header). */
static bool rx_take(struct virtio_vsock *v, struct virtio_mmio *t)
{
    if (!vsock_live(t))
        return false; /* a held chain stays held: a reset drops it */
    if (v->rx_held)
        return true;
    struct virtq *q = &t->queues[VSOCK_RX_QUEUE];
    for (unsigned n = 0; n < VIRTQ_MAX_SIZE; n++) {
        int rc = virtq_pop(q, t->mem, &v->rx);
        if (rc < 0)
            virtio_mmio_needs_reset(t);
        if (rc != 1)
            return false;
        if (v->rx.writable_len >= VSOCK_HDR_BYTES) {
            v->rx_held = true;
            return true;
        }
        if (virtq_push(q, t->mem, v->rx.head, 0)) {
            virtio_mmio_needs_reset(t);
            return false;
        }
    }
    return false;
}

/* Finishes the held rx chain: header at 0, h->len payload bytes already
 * written after it. */
static void rx_put(struct virtio_vsock *v, struct virtio_mmio *t, const struct vsock_hdr *h)
{
    uint8_t raw[VSOCK_HDR_BYTES];
    vsock_hdr_encode(h, raw);
    v->rx_held = false;
    /* rx_take checked the room and virtq_pop every buffer: cannot fail. */
    if (virtq_chain_write(t->mem, &v->rx, 0, raw, sizeof(raw)) ||
        virtq_push(&t->queues[VSOCK_RX_QUEUE], t->mem, v->rx.head, VSOCK_HDR_BYTES + h->len))
        virtio_mmio_needs_reset(t);
}

/* A packet of connection c; every one reports our credit (§5.10.6.3), so
 * it settles any CREDIT_UPDATE owed. */
static struct vsock_hdr conn_hdr(struct virtio_vsock *v, struct vsock_conn *c, uint16_t op,
                                 uint32_t flags, uint32_t len)
{
    c->fwd_reported = c->fwd_cnt;
    c->pending &= (uint8_t)~PEND_CREDIT;
    return (struct vsock_hdr){
        .src_cid = VSOCK_HOST_CID, .dst_cid = v->guest_cid,
        .src_port = c->local_port, .dst_port = c->peer_port, .len = len,
        .type = VSOCK_TYPE_STREAM, .op = op, .flags = flags,
        .buf_alloc = VSOCK_BUF_ALLOC, .fwd_cnt = c->fwd_cnt,
    };
}

static bool conn_can_read(const struct vsock_conn *c)
{
    return c->state == CONN_CONNECTED && c->fd_readable && !c->host_eof && !c->guest_no_recv &&
           conn_credit(c) > 0;
}

static bool conn_has_work(const struct vsock_conn *c)
{
    return c->state != CONN_FREE && (c->pending || conn_can_read(c));
}

static ssize_t fd_read(int fd, void *p, size_t n)
{
    ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
    if (r < 0 && errno == ENOTSOCK)
        r = read(fd, p, n);
    return r;
}

/* One read from the host fd into the held rx chain, at most the guest's
 * credit.  Returns true when the chain was used. */
static bool conn_read(struct virtio_vsock *v, struct virtio_mmio *t, struct vsock_conn *c)
{
    uint64_t room = v->rx.writable_len - VSOCK_HDR_BYTES;
    uint32_t credit = conn_credit(c);
    if (room > VSOCK_MAX_PKT)
        room = VSOCK_MAX_PKT;
    if (room > credit)
        room = credit;
    if (room == 0) {
        /* A header-only buffer cannot carry data: back to the guest. */
        v->rx_held = false;
        if (virtq_push(&t->queues[VSOCK_RX_QUEUE], t->mem, v->rx.head, 0))
            virtio_mmio_needs_reset(t);
        return true;
    }
    /* Straight from the fd into the chain's buffers, one read per buffer
     * while each comes back full (no copy in between). */
    uint64_t total = 0;
    ssize_t n = 0;
    while (total < room) {
        uint64_t len;
        uint8_t *p = virtq_chain_piece(t->mem, &v->rx, true, VSOCK_HDR_BYTES + total,
                                       room - total, &len);
        if (!p) {
            /* rx_take checked the room and virtq_pop every buffer. */
            if (total)
                break;
            virtio_mmio_needs_reset(t);
            return false;
        }
        n = fd_read(c->fd, p, len);
        if (n <= 0)
            break;
        total += (uint64_t)n;
        if ((uint64_t)n < len)
            break;
    }
    if (total) {
        /* A later read's EAGAIN or EOF shows again on the next read. */
        c->tx_cnt += (uint32_t)total;
        struct vsock_hdr h = conn_hdr(v, c, VSOCK_OP_RW, 0, (uint32_t)total);
        rx_put(v, t, &h);
        return true;
    }
    c->fd_readable = false;
    if (n == 0) {
        /* §5.10.6.5: the host sends no more; the guest may still send. */
        c->host_eof = true;
        c->pending |= PEND_SHUTDOWN;
        conn_progress(v, c);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_reset(v, c);
    }
    return false;
}

/* Uses the held rx chain for c's next packet, in the order the guest must
 * see them: REQUEST/RESPONSE before data, SHUTDOWN after the last data.
 * Returns true when the chain was used. */
static bool conn_emit(struct virtio_vsock *v, struct virtio_mmio *t, struct vsock_conn *c)
{
    static const struct {
        uint8_t bit;
        uint16_t op;
    } ctl[] = {{PEND_REQUEST, VSOCK_OP_REQUEST}, {PEND_RESPONSE, VSOCK_OP_RESPONSE}};
    for (unsigned i = 0; i < 2; i++) {
        if (c->pending & ctl[i].bit) {
            c->pending &= (uint8_t)~ctl[i].bit;
            struct vsock_hdr h = conn_hdr(v, c, ctl[i].op, 0, 0);
            rx_put(v, t, &h);
            return true;
        }
    }
    if (conn_can_read(c) && conn_read(v, t, c))
        return true;
    if (c->state == CONN_FREE)
        return false; /* the read failed: its RST is queued */
    uint16_t op = 0;
    uint32_t flags = 0;
    if (c->pending & PEND_CREDIT) {
        op = VSOCK_OP_CREDIT_UPDATE;
    } else if (c->pending & PEND_SHUTDOWN) {
        c->pending &= (uint8_t)~PEND_SHUTDOWN;
        op = VSOCK_OP_SHUTDOWN;
        flags = VSOCK_SHUTDOWN_SEND;
    } else {
        return false;
    }
    struct vsock_hdr h = conn_hdr(v, c, op, flags, 0);
    rx_put(v, t, &h);
    return true;
}

static void rst_emit(struct virtio_vsock *v, struct virtio_mmio *t)
{
    struct vsock_rst r = v->rsts[v->rst_head];
    v->rst_head = (v->rst_head + 1) % VSOCK_RST_QUEUE;
    v->rst_len--;
    struct vsock_hdr h = {
        .src_cid = r.src_cid, .dst_cid = v->guest_cid, .src_port = r.src_port,
        .dst_port = r.dst_port, .type = VSOCK_TYPE_STREAM, .op = VSOCK_OP_RST,
    };
    rx_put(v, t, &h);
}

/* The next connection with something for the guest, round robin so one
 * busy connection cannot starve the others. */
static struct vsock_conn *next_with_work(struct virtio_vsock *v)
{
    for (unsigned k = 0; k < VSOCK_MAX_CONNS; k++) {
        unsigned i = (v->rr + k) % VSOCK_MAX_CONNS;
        if (conn_has_work(&v->conns[i])) {
            v->rr = (i + 1) % VSOCK_MAX_CONNS;
            return &v->conns[i];
        }
    }
    return NULL;
}

/* Sends what is owed while rx buffers last: RSTs first, then each
 * connection in turn.  Bounded: each round uses a chain, or clears the
 * work it found (a read that said EAGAIN or EOF). */
void vsock_rx_flush(struct virtio_vsock *v, struct virtio_mmio *t)
{
    bool used = false;
    for (unsigned n = 0; n < 4 * VIRTQ_MAX_SIZE + VSOCK_MAX_CONNS + VSOCK_RST_QUEUE; n++) {
        struct vsock_conn *c = v->rst_len ? NULL : next_with_work(v);
        if (!v->rst_len && !c)
            break;
        if (!rx_take(v, t)) {
            /* Read watches off until the driver adds rx buffers. */
            v->rx_starved = true;
            break;
        }
        v->rx_starved = false;
        if (!c) {
            rst_emit(v, t);
            used = true;
        } else if (conn_emit(v, t, c)) {
            used = true;
        }
    }
    if (used)
        virtio_mmio_used(t, VSOCK_RX_QUEUE);
}

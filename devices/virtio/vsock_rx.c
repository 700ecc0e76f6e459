/* virtio-vsock, device -> guest: what connections owe the guest (control
 * packets, host data, RSTs) goes into rx buffers as the driver offers them
 * (virtio 1.2 §5.10.6.4), within each connection's credit (§5.10.6.3). */
#include "devices/virtio/vsock_conn.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* The i-th held rx chain (i < rx_held). */
static struct virtq_chain *rx_chain(struct virtio_vsock *v, unsigned i)
{
    return &v->rx[(v->rx_first + i) % VSOCK_RX_BATCH];
}

/* Holds one more rx chain (the caller checked rx_held < VSOCK_RX_BATCH),
 * one with room for a header.  Chains too small for one carry nothing
 * and go back empty (§5.10.6.4: every packet starts with a whole header). */
static bool rx_pop(struct virtio_vsock *v, struct virtio_mmio *t)
{
    struct virtq *q = &t->queues[VSOCK_RX_QUEUE];
    struct virtq_chain *ch = rx_chain(v, v->rx_held);
    for (unsigned n = 0; n < VIRTQ_MAX_SIZE; n++) {
        int rc = virtq_pop(q, t->mem, ch);
        if (rc < 0)
            virtio_mmio_needs_reset(t);
        if (rc != 1)
            return false;
        if (ch->writable_len >= VSOCK_HDR_BYTES) {
            v->rx_held++;
            return true;
        }
        if (virtq_push(q, t->mem, ch->head, 0)) {
            virtio_mmio_needs_reset(t);
            return false;
        }
    }
    return false;
}

/* Whether an rx chain is held for the next packet. */
static bool rx_take(struct virtio_vsock *v, struct virtio_mmio *t)
{
    if (!vsock_live(t))
        return false; /* held chains stay held: a reset drops them */
    return v->rx_held || rx_pop(v, t);
}

/* Gives the first held chain back with `written` bytes in it. */
static void rx_release(struct virtio_vsock *v, struct virtio_mmio *t, uint32_t written)
{
    uint16_t head = rx_chain(v, 0)->head;
    v->rx_first = (v->rx_first + 1) % VSOCK_RX_BATCH;
    v->rx_held--;
    if (virtq_push(&t->queues[VSOCK_RX_QUEUE], t->mem, head, written))
        virtio_mmio_needs_reset(t);
}

/* Finishes the first held chain: header at 0, h->len payload bytes
 * already written after it. */
static void rx_put(struct virtio_vsock *v, struct virtio_mmio *t, const struct vsock_hdr *h)
{
    uint8_t raw[VSOCK_HDR_BYTES];
    vsock_hdr_encode(h, raw);
    /* rx_pop checked the room and virtq_pop every buffer: cannot fail. */
    if (virtq_chain_write(t->mem, rx_chain(v, 0), 0, raw, sizeof(raw)))
        virtio_mmio_needs_reset(t);
    rx_release(v, t, VSOCK_HDR_BYTES + h->len);
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

/* Payload room of an rx chain: what follows the header, at most one
 * packet's worth. */
static uint64_t rx_room(const struct virtq_chain *ch)
{
    uint64_t room = ch->writable_len - VSOCK_HDR_BYTES;
    return room < VSOCK_MAX_PKT ? room : VSOCK_MAX_PKT;
}

/* An attached fd's preamble still owed, and the guest can take a byte. */
static bool conn_owes_pre(const struct vsock_conn *c)
{
    return c->attached && c->state == CONN_CONNECTED && c->pre_sent < c->att.pre_len &&
           !c->guest_no_recv && conn_credit(c) > 0;
}

static bool conn_can_read(const struct vsock_conn *c)
{
    return c->state == CONN_CONNECTED && c->fd_readable && !c->host_eof && !c->guest_no_recv &&
           conn_credit(c) > 0 && (!c->attached || c->pre_sent == c->att.pre_len);
}

static bool conn_has_work(const struct vsock_conn *c)
{
    return c->state != CONN_FREE && (c->pending || conn_owes_pre(c) || conn_can_read(c));
}

/* The preamble (or what credit and the chain allow of it) as an RW
 * packet, ahead of the fd's bytes. */
static bool conn_pre(struct virtio_vsock *v, struct virtio_mmio *t, struct vsock_conn *c)
{
    uint32_t n = (uint32_t)(c->att.pre_len - c->pre_sent);
    uint32_t credit = conn_credit(c);
    if (n > credit)
        n = credit;
    if (n > rx_room(rx_chain(v, 0)))
        n = (uint32_t)rx_room(rx_chain(v, 0));
    if (n == 0) {
        rx_release(v, t, 0); /* a header-only buffer: back to the guest */
        return true;
    }
    if (virtq_chain_write(t->mem, rx_chain(v, 0), VSOCK_HDR_BYTES, c->att.pre + c->pre_sent, n)) {
        virtio_mmio_needs_reset(t);
        return false;
    }
    c->pre_sent = (uint8_t)(c->pre_sent + n);
    c->tx_cnt += n;
    struct vsock_hdr h = conn_hdr(v, c, VSOCK_OP_RW, 0, n);
    rx_put(v, t, &h);
    return true;
}

/* Lays the payload areas of the first held chains, then more popped as
 * needed, out as one iovec for up to `want` bytes (the guest's credit).
 * Stops at a header-only chain (it carries the next control packet).
 * Fills cap[i] with what chain i takes; returns how many chains. */
static unsigned rx_gather(struct virtio_vsock *v, struct virtio_mmio *t, uint64_t want,
                          struct iovec *iov, unsigned *niov, uint32_t *cap)
{
    unsigned k = 0;
    *niov = 0;
    while (want && *niov < VSOCK_RX_IOV) {
        if (k == v->rx_held && (k == VSOCK_RX_BATCH || !rx_pop(v, t)))
            break;
        struct virtq_chain *ch = rx_chain(v, k);
        uint64_t lim = rx_room(ch) < want ? rx_room(ch) : want, got = 0;
        while (got < lim && *niov < VSOCK_RX_IOV) {
            uint64_t len;
            uint8_t *p = virtq_chain_piece(t->mem, ch, true, VSOCK_HDR_BYTES + got, lim - got, &len);
            if (!p)
                break; /* rx_pop checked the room and virtq_pop every buffer */
            iov[(*niov)++] = (struct iovec){.iov_base = p, .iov_len = len};
            got += len;
        }
        if (!got)
            break;
        cap[k++] = (uint32_t)got;
        want -= got;
        if (got < lim)
            break;
    }
    return k;
}

/* One read from the host fd straight into the held rx chains' buffers
 * (no copy in between), at most the guest's credit; each chain filled
 * becomes one RW packet.  Returns true when a chain was used. */
static bool conn_read(struct virtio_vsock *v, struct virtio_mmio *t, struct vsock_conn *c)
{
    if (rx_room(rx_chain(v, 0)) == 0) {
        /* A header-only buffer cannot carry data: back to the guest. */
        rx_release(v, t, 0);
        return true;
    }
    struct iovec iov[VSOCK_RX_IOV];
    uint32_t cap[VSOCK_RX_BATCH];
    unsigned niov;
    unsigned k = rx_gather(v, t, conn_credit(c), iov, &niov, cap);
    if (!k) {
        virtio_mmio_needs_reset(t); /* the first chain's buffer left guest RAM */
        return false;
    }
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = niov};
    ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
    if (n < 0 && errno == ENOTSOCK)
        n = read(c->fd, iov[0].iov_base, iov[0].iov_len);
    if (n > 0) {
        /* A later read's EAGAIN or EOF shows again on the next read. */
        for (unsigned i = 0; i < k && n > 0; i++) {
            uint32_t len = (uint64_t)n < cap[i] ? (uint32_t)n : cap[i];
            n -= len;
            c->tx_cnt += len;
            conn_moved(c, len);
            struct vsock_hdr h = conn_hdr(v, c, VSOCK_OP_RW, 0, len);
            rx_put(v, t, &h);
        }
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
    if (conn_owes_pre(c))
        return conn_pre(v, t, c);
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
 * busy connection cannot starve the others: the turn passes on only once
 * it was served (vsock_rx_flush), not when rx buffers ran out first. */
static struct vsock_conn *next_with_work(struct virtio_vsock *v)
{
    for (unsigned k = 0; k < VSOCK_MAX_CONNS; k++) {
        unsigned i = (v->rr + k) % VSOCK_MAX_CONNS;
        if (conn_has_work(&v->conns[i]))
            return &v->conns[i];
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
        } else {
            v->rr = (unsigned)(c - v->conns + 1) % VSOCK_MAX_CONNS;
            if (conn_emit(v, t, c))
                used = true;
        }
    }
    if (used)
        virtio_mmio_used(t, VSOCK_RX_QUEUE);
}

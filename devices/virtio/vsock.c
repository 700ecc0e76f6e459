/* virtio-vsock: the tx and event queues and the packet rules (virtio 1.2
 * §5.10.6).  The rx queue is in vsock_rx.c, the header codec in vsock_hdr.c;
 * connections, fds and buffers in vsock_conn.c. */
#include "devices/virtio/vsock_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

int virtio_vsock_create(uint64_t guest_cid, const struct vsock_host_ops *ops, void *opaque,
                        struct virtio_vsock **out)
{
    *out = NULL;
    if (guest_cid < 3 || guest_cid >= UINT32_MAX || !ops || !ops->connect_port || !ops->watch)
        return -EINVAL;
    struct virtio_vsock *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    v->guest_cid = guest_cid;
    v->ops = ops;
    v->opaque = opaque;
    v->next_port = VSOCK_EPHEMERAL;
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        v->conns[i].fd = -1;
    *out = v;
    return 0;
}

void virtio_vsock_destroy(struct virtio_vsock *v)
{
    if (!v)
        return;
    conn_close_all(v);
    free(v);
}

void virtio_vsock_stats(const struct virtio_vsock *v, struct virtio_vsock_stats *s)
{
    memset(s, 0, sizeof(*s));
    s->conns = v->nconns;
    s->rst_dropped = v->rst_dropped;
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++) {
        const struct vsock_conn *c = &v->conns[i];
        if (c->state == CONN_FREE)
            continue;
        s->buffered += c->buf_len;
        if (c->buf_len > s->max_buffered)
            s->max_buffered = c->buf_len;
    }
}

static uint64_t vsock_features(void *dev)
{
    (void)dev;
    return 0; /* stream only: no VIRTIO_VSOCK_F_SEQPACKET (§5.10.3) */
}

/* §5.10.4: le64 guest_cid; any offset and width, zero past it. */
static void vsock_config_read(void *dev, uint64_t off, uint8_t *data, unsigned len)
{
    struct virtio_vsock *v = dev;
    uint8_t cfg[8];
    virtio_put_le(cfg, v->guest_cid, 8);
    memset(data, 0, len);
    if (off >= sizeof(cfg))
        return;
    uint64_t n = sizeof(cfg) - off;
    memcpy(data, cfg + off, n < len ? n : len);
}

/* ---- guest -> device (tx queue) ----------------------------------------- */

/* A packet that broke the rules: its connection (if any) is reset, and
 * the sender hears RST, unless the packet was itself an RST. */
static void reject(struct virtio_vsock *v, struct vsock_conn *c, const struct vsock_hdr *h)
{
    if (c)
        conn_reset(v, c);
    else if (h->op != VSOCK_OP_RST)
        rst_queue(v, h->dst_cid, h->dst_port, h->src_port);
}

/* §5.10.6.5: the guest connects to host port dst_port. */
static void guest_request(struct virtio_vsock *v, struct vsock_conn *c, const struct vsock_hdr *h)
{
    if (c) {
        reject(v, c, h); /* a second REQUEST on a live connection */
        return;
    }
    if (v->nconns >= VSOCK_MAX_CONNS) {
        if (v->ops->conn_cap)
            v->ops->conn_cap(v->opaque, VSOCK_MAX_CONNS);
        reject(v, NULL, h);
        return;
    }
    int fd = v->ops->connect_port(v->opaque, h->dst_port);
    if (fd < 0) {
        reject(v, NULL, h);
        return;
    }
    c = conn_open(v, fd, h->dst_port, h->src_port, CONN_CONNECTED);
    c->peer_buf_alloc = h->buf_alloc;
    c->peer_fwd_cnt = h->fwd_cnt;
    c->pending |= PEND_RESPONSE;
}

/* §5.10.6.3: payload for the host fd.  The guest may send no more than
 * the credit we last told it, buf_alloc - (rx_cnt - fwd_reported); that
 * bounds what we buffer by VSOCK_BUF_ALLOC.  More is a violation. */
static void guest_rw(struct virtio_vsock *v, struct virtio_mmio *t, struct vsock_conn *c,
                     const struct virtq_chain *ch, uint32_t len)
{
    if (c->state != CONN_CONNECTED || c->guest_no_send ||
        len > VSOCK_BUF_ALLOC - (c->rx_cnt - c->fwd_reported)) {
        conn_reset(v, c);
        return;
    }
    c->rx_cnt += len;
    uint32_t off = 0;
    if (c->attached && c->reply_got < c->att.reply_len) {
        /* The guest's answer: into c->reply, never to the fd.  It counts
         * as taken (fwd_cnt), so the credit arithmetic stays whole. */
        uint32_t n = c->att.reply_len - c->reply_got;
        if (n > len)
            n = len;
        if (virtq_chain_read(t->mem, ch, VSOCK_HDR_BYTES, c->reply + c->reply_got, n)) {
            conn_reset(v, c);
            return;
        }
        c->reply_got = (uint8_t)(c->reply_got + n);
        c->fwd_cnt += n;
        off = n;
        if (c->reply_got == c->att.reply_len && c->att.answer &&
            c->att.answer(c->att.opaque, c->reply)) {
            c->end = VSOCK_END_REFUSED;
            conn_reset(v, c);
            return;
        }
    }
    /* Straight from guest memory to the fd, a buffer at a time (no copy
     * in between; each step moves at least a byte). */
    while (off < len) {
        uint64_t n;
        const uint8_t *p = virtq_chain_piece(t->mem, ch, false, VSOCK_HDR_BYTES + (uint64_t)off,
                                             len - off, &n);
        if (!p || conn_send(c, p, (uint32_t)n)) {
            conn_reset(v, c);
            return;
        }
        off += (uint32_t)n;
    }
}

/* One packet from the tx queue (§5.10.6).  The header is copied once;
 * everything below works on that copy. */
static void tx_packet(struct virtio_vsock *v, struct virtio_mmio *t, const struct virtq_chain *ch)
{
    uint8_t raw[VSOCK_HDR_BYTES];
    if (ch->readable_len < sizeof(raw) || virtq_chain_read(t->mem, ch, 0, raw, sizeof(raw)))
        return; /* no header: nobody to answer */
    struct vsock_hdr h;
    vsock_hdr_decode(raw, &h);
    if (h.src_cid != v->guest_cid)
        return; /* spoofed source: an RST would reach a socket that sent nothing */
    struct vsock_conn *c = h.dst_cid == VSOCK_HOST_CID ? conn_find(v, h.dst_port, h.src_port)
                                                       : NULL;
    /* len must describe exactly the bytes after the header; only RW
     * carries any. */
    if (h.type != VSOCK_TYPE_STREAM || h.dst_cid != VSOCK_HOST_CID ||
        h.len != ch->readable_len - sizeof(raw) || (h.len && h.op != VSOCK_OP_RW)) {
        reject(v, c, &h);
        return;
    }
    if (h.op == VSOCK_OP_REQUEST) {
        guest_request(v, c, &h);
        return;
    }
    if (!c) {
        reject(v, NULL, &h);
        return;
    }
    c->peer_buf_alloc = h.buf_alloc;
    c->peer_fwd_cnt = h.fwd_cnt;
    switch (h.op) {
    case VSOCK_OP_RESPONSE:
        if (c->state != CONN_REQUESTING || (!c->attached && conn_hello(c))) {
            conn_reset(v, c);
            return;
        }
        c->state = CONN_CONNECTED;
        break;
    case VSOCK_OP_RST:
        c->end = c->state == CONN_REQUESTING                  ? VSOCK_END_NO_ANSWER
                 : c->guest_no_send && c->host_eof && !c->buf_len ? VSOCK_END_CLOSED
                                                                 : VSOCK_END_RESET;
        conn_close(v, c);
        return;
    case VSOCK_OP_SHUTDOWN:
        if (c->state != CONN_CONNECTED) {
            conn_reset(v, c);
            return;
        }
        c->guest_no_send |= (h.flags & VSOCK_SHUTDOWN_SEND) != 0;
        c->guest_no_recv |= (h.flags & VSOCK_SHUTDOWN_RCV) != 0;
        break;
    case VSOCK_OP_RW:
        guest_rw(v, t, c, ch, h.len);
        if (c->state == CONN_FREE)
            return;
        break;
    case VSOCK_OP_CREDIT_UPDATE:
        break; /* the credit fields were taken above */
    case VSOCK_OP_CREDIT_REQUEST:
        c->pending |= PEND_CREDIT;
        break;
    default:
        conn_reset(v, c);
        return;
    }
    conn_progress(v, c);
}

/* Serves at most `size` tx chains per call (as blk does); the driver kicks
 * again for more.  A tx chain returns with used length 0. */
static void tx_drain(struct virtio_vsock *v, struct virtio_mmio *t)
{
    struct virtq *q = &t->queues[VSOCK_TX_QUEUE];
    for (unsigned n = 0; n < q->size; n++) {
        int rc = virtq_pop(q, t->mem, &v->tx);
        if (rc < 0)
            virtio_mmio_needs_reset(t);
        if (rc != 1)
            break;
        tx_packet(v, t, &v->tx);
        if (virtq_push(q, t->mem, v->tx.head, 0)) {
            virtio_mmio_needs_reset(t);
            break;
        }
    }
    virtio_mmio_used(t, VSOCK_TX_QUEUE);
}

/* ---- event queue -------------------------------------------------------- */

/* The driver has handled the last TRANSPORT_RESET: the connections the
 * host opened meanwhile send their REQUEST now (the next rx flush). */
static void reset_handled(struct virtio_vsock *v)
{
    v->reset_unacked = false;
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++) {
        struct vsock_conn *c = &v->conns[i];
        if (c->state != CONN_FREE && c->request_held) {
            c->request_held = false;
            c->pending |= PEND_REQUEST;
        }
    }
}

/* §5.10.6.7: struct virtio_vsock_event is one le32 id.  Chains too small
 * for it go back empty. */
static void event_flush(struct virtio_vsock *v, struct virtio_mmio *t)
{
    if (!v->event_pending || !vsock_live(t))
        return;
    struct virtq *q = &t->queues[VSOCK_EVT_QUEUE];
    bool used = false;
    for (unsigned n = 0; n < VIRTQ_MAX_SIZE && v->event_pending; n++) {
        int rc = virtq_pop(q, t->mem, &v->tx);
        if (rc < 0)
            virtio_mmio_needs_reset(t);
        if (rc != 1)
            break;
        uint8_t ev[4];
        virtio_put_le(ev, VSOCK_EVENT_TRANSPORT_RESET, 4);
        bool fits = v->tx.writable_len >= sizeof(ev) &&
                    !virtq_chain_write(t->mem, &v->tx, 0, ev, sizeof(ev));
        if (fits) {
            v->event_pending = false;
            /* The driver's answer will be a buffer made available after this. */
            if (virtq_avail_idx(q, t->mem, &v->reset_avail))
                reset_handled(v); /* rings unreadable: nothing to wait for */
        }
        used = true;
        if (virtq_push(q, t->mem, v->tx.head, fits ? sizeof(ev) : 0)) {
            virtio_mmio_needs_reset(t);
            break;
        }
    }
    if (used)
        virtio_mmio_used(t, VSOCK_EVT_QUEUE);
}

/* ---- entry points ------------------------------------------------------- */

static void vsock_queue_notify(void *dev, struct virtio_mmio *t, unsigned q)
{
    struct virtio_vsock *v = dev;
    if (q == VSOCK_RX_QUEUE)
        v->rx_starved = false; /* new rx buffers: try again */
    else if (q == VSOCK_TX_QUEUE)
        tx_drain(v, t);
    else if (q == VSOCK_EVT_QUEUE) {
        uint16_t idx;
        if (v->reset_unacked && !v->event_pending &&
            (virtq_avail_idx(&t->queues[VSOCK_EVT_QUEUE], t->mem, &idx) || idx != v->reset_avail))
            reset_handled(v); /* the driver handled the reset and refilled */
        event_flush(v, t);
    }
    vsock_rx_flush(v, t);
    conn_watch_all(v);
}

/* The driver reset the device: its queues and its sockets are gone. */
static void vsock_reset(void *dev)
{
    struct virtio_vsock *v = dev;
    conn_close_all(v);
    v->rst_len = v->rst_head = 0;
    v->rx_held = 0;
    v->rx_starved = v->event_pending = v->reset_unacked = false;
    v->next_port = VSOCK_EPHEMERAL;
}

static int connect_guest(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                         uint32_t guest_port, const struct vsock_attach *a)
{
    if (!vsock_live(t))
        return -ENOTCONN;
    if (fd < 0)
        return -EBADF;
    if (v->nconns >= VSOCK_MAX_CONNS)
        return -EBUSY;
    /* At most VSOCK_MAX_CONNS ports are taken: one of this many is free. */
    uint32_t port = 0;
    for (unsigned i = 0; i <= VSOCK_MAX_CONNS; i++) {
        port = v->next_port++;
        if (v->next_port < VSOCK_EPHEMERAL)
            v->next_port = VSOCK_EPHEMERAL;
        if (!conn_find(v, port, guest_port))
            break;
    }
    struct vsock_conn *c = conn_open(v, fd, port, guest_port, CONN_REQUESTING);
    /* After a TRANSPORT_RESET the REQUEST waits until the driver has
     * handled it (given an event buffer back): Linux resets its sockets in
     * that handler and would reset a connection made before.  Held, not
     * refused, so that a dial right after a restore is answered as soon as
     * the guest can, not at the dialer's next try. */
    if (v->event_pending || v->reset_unacked)
        c->request_held = true;
    else
        c->pending = PEND_REQUEST;
    if (a) {
        c->attached = true;
        c->att = *a;
        c->end = VSOCK_END_RESET;
    }
    vsock_rx_flush(v, t);
    conn_watch_all(v);
    return 0;
}

int virtio_vsock_connect_guest(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                               uint32_t guest_port)
{
    return connect_guest(v, t, fd, guest_port, NULL);
}

int virtio_vsock_attach_guest(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                              uint32_t guest_port, const struct vsock_attach *a)
{
    if (!a || !a->ended || a->pre_len > VSOCK_PRE_MAX || a->reply_len > VSOCK_REPLY_MAX)
        return -EINVAL;
    return connect_guest(v, t, fd, guest_port, a);
}

int virtio_vsock_end_attached(struct virtio_vsock *v, struct virtio_mmio *t, uint64_t tag)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++) {
        struct vsock_conn *c = &v->conns[i];
        if (c->state != CONN_FREE && c->attached && c->att.tag == tag) {
            c->end = VSOCK_END_RESET;
            conn_reset(v, c);
            vsock_rx_flush(v, t); /* the RST */
            conn_watch_all(v);
            return 0;
        }
    }
    return -ENOENT;
}

void virtio_vsock_fd_event(struct virtio_vsock *v, struct virtio_mmio *t, int fd,
                           uint32_t events)
{
    struct vsock_conn *c = conn_by_fd(v, fd);
    if (!c)
        return;
    if ((events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) && c->buf_len) {
        if (conn_flush(c))
            conn_reset(v, c);
        else
            conn_progress(v, c);
    }
    if (c->state != CONN_FREE && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        c->fd_readable = true;
    vsock_rx_flush(v, t);
    conn_watch_all(v);
}

void virtio_vsock_transport_reset(struct virtio_vsock *v, struct virtio_mmio *t)
{
    /* The guest drops every socket on this event, so no RST is owed. */
    conn_close_all(v);
    v->rst_len = v->rst_head = 0;
    v->event_pending = v->reset_unacked = true;
    event_flush(v, t);
}

const struct virtio_device_ops virtio_vsock_ops = {
    .name = "virtio-vsock",
    .device_id = VIRTIO_ID_VSOCK,
    .num_queues = 3,
    .queue_max = VSOCK_QUEUE_MAX,
    .features = vsock_features,
    .config_read = vsock_config_read,
    .queue_notify = vsock_queue_notify,
    .reset = vsock_reset,
};

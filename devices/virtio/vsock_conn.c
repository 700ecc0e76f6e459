/* The virtio-vsock connection table: host fds, the per-connection buffer
 * of guest bytes the host has not taken yet, and credit (§5.10.6.3). */
#include "devices/virtio/vsock_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A linear scan: VSOCK_MAX_CONNS is small, and a scan has no hash a guest
 * could aim its ports at. */
struct vsock_conn *conn_find(struct virtio_vsock *v, uint32_t local_port, uint32_t peer_port)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++) {
        struct vsock_conn *c = &v->conns[i];
        if (c->state != CONN_FREE && c->local_port == local_port && c->peer_port == peer_port)
            return c;
    }
    return NULL;
}

struct vsock_conn *conn_by_fd(struct virtio_vsock *v, int fd)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        if (v->conns[i].state != CONN_FREE && v->conns[i].fd == fd)
            return &v->conns[i];
    return NULL;
}

struct vsock_conn *conn_open(struct virtio_vsock *v, int fd, uint32_t local_port,
                             uint32_t peer_port, enum vsock_conn_state state)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++) {
        struct vsock_conn *c = &v->conns[i];
        if (c->state != CONN_FREE)
            continue;
        memset(c, 0, sizeof(*c));
        c->state = state;
        c->fd = fd;
        c->local_port = local_port;
        c->peer_port = peer_port;
        v->nconns++;
        return c;
    }
    return NULL;
}

void conn_close(struct virtio_vsock *v, struct vsock_conn *c)
{
    if (c->state == CONN_FREE)
        return;
    if (c->watch_r || c->watch_w)
        v->ops->watch(v->opaque, c->fd, false, false);
    if (c->attached)
        c->att.ended(c->att.opaque, c->end, c->tx_cnt - c->pre_sent, c->fwd_cnt - c->reply_got);
    close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof(*c));
    c->state = CONN_FREE;
    c->fd = -1;
    v->nconns--;
}

void rst_queue(struct virtio_vsock *v, uint64_t src_cid, uint32_t src_port, uint32_t dst_port)
{
    if (v->rst_len == VSOCK_RST_QUEUE) {
        /* The guest gives us no rx buffers yet keeps provoking RSTs: the
         * sockets left waiting are its own. */
        v->rst_dropped++;
        return;
    }
    v->rsts[(v->rst_head + v->rst_len++) % VSOCK_RST_QUEUE] =
        (struct vsock_rst){src_cid, src_port, dst_port};
}

void conn_reset(struct virtio_vsock *v, struct vsock_conn *c)
{
    rst_queue(v, VSOCK_HOST_CID, c->local_port, c->peer_port);
    conn_close(v, c);
}

void conn_close_all(struct virtio_vsock *v)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        conn_close(v, &v->conns[i]);
}

/* §5.10.6.3: credit = buf_alloc - (tx_cnt - fwd_cnt), in wrapping u32.  A
 * guest whose fwd_cnt runs backwards or past what we sent makes the
 * in-flight count exceed its buf_alloc: that is no credit, not a lot. */
uint32_t conn_credit(const struct vsock_conn *c)
{
    uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;
    return in_flight > c->peer_buf_alloc ? 0 : c->peer_buf_alloc - in_flight;
}

void conn_watch(struct virtio_vsock *v, struct vsock_conn *c)
{
    if (c->state == CONN_FREE)
        return;
    /* Readable only while a read could go somewhere: with the loop
     * level-triggered, watching without credit or rx buffers would spin. */
    bool r = c->state == CONN_CONNECTED && !c->host_eof && !c->guest_no_recv &&
             conn_credit(c) > 0 && !v->rx_starved;
    bool w = c->buf_len > 0;
    if (r == c->watch_r && w == c->watch_w)
        return;
    c->watch_r = r;
    c->watch_w = w;
    v->ops->watch(v->opaque, c->fd, r, w);
}

void conn_watch_all(struct virtio_vsock *v)
{
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        conn_watch(v, &v->conns[i]);
}

/* One non-blocking write; 0 bytes on EAGAIN, -errno when the fd failed.
 * MSG_NOSIGNAL: a host peer that went away is an error, not a SIGPIPE. */
static ssize_t fd_write(int fd, const uint8_t *p, size_t n)
{
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == ENOTSOCK)
        w = write(fd, p, n);
    if (w >= 0)
        return w;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    return -errno;
}

int conn_flush(struct vsock_conn *c)
{
    /* The ring holds at most two pieces. */
    for (int piece = 0; piece < 2 && c->buf_len; piece++) {
        uint32_t n = c->buf_cap - c->buf_head;
        if (n > c->buf_len)
            n = c->buf_len;
        ssize_t w = fd_write(c->fd, c->buf + c->buf_head, n);
        if (w < 0)
            return (int)w;
        c->buf_head = (c->buf_head + (uint32_t)w) & (c->buf_cap - 1);
        c->buf_len -= (uint32_t)w;
        c->fwd_cnt += (uint32_t)w;
        conn_moved(c, (uint64_t)w);
        if ((uint32_t)w < n)
            break;
    }
    if (c->buf_len == 0) {
        /* Most connections never buffer; those that did give the memory
         * back as soon as the host catches up. */
        free(c->buf);
        c->buf = NULL;
        c->buf_cap = c->buf_head = 0;
    }
    return 0;
}

/* Grows the ring to the next power of two that holds `need` bytes
 * (need <= VSOCK_BUF_ALLOC), unwrapping its contents: a connection that
 * lags by a few bytes holds a few KiB, not the cap. */
static int conn_grow(struct vsock_conn *c, uint32_t need)
{
    uint32_t cap = c->buf_cap ? c->buf_cap : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *nb = malloc(cap);
    if (!nb)
        return -ENOMEM;
    uint32_t first = c->buf_cap - c->buf_head < c->buf_len ? c->buf_cap - c->buf_head : c->buf_len;
    if (c->buf_len) {
        memcpy(nb, c->buf + c->buf_head, first);
        memcpy(nb + first, c->buf, c->buf_len - first);
    }
    free(c->buf);
    c->buf = nb;
    c->buf_cap = cap;
    c->buf_head = 0;
    return 0;
}

/* An attached fd's activity, for whoever watches it go idle. */
void conn_moved(struct vsock_conn *c, uint64_t n)
{
    if (c->attached && c->att.moved && n)
        atomic_fetch_add_explicit(c->att.moved, n, memory_order_relaxed);
}

int conn_send(struct vsock_conn *c, const uint8_t *data, uint32_t len)
{
    if (c->buf_len == 0) {
        ssize_t w = fd_write(c->fd, data, len);
        if (w < 0)
            return (int)w;
        c->fwd_cnt += (uint32_t)w;
        conn_moved(c, (uint64_t)w);
        data += w;
        len -= (uint32_t)w;
        if (len == 0)
            return 0;
    }
    if (len > VSOCK_BUF_ALLOC - c->buf_len)
        return -ENOBUFS; /* the caller checked credit; cannot happen */
    if (len > c->buf_cap - c->buf_len) {
        int rc = conn_grow(c, c->buf_len + len);
        if (rc)
            return rc;
    }
    uint32_t tail = (c->buf_head + c->buf_len) & (c->buf_cap - 1);
    uint32_t first = c->buf_cap - tail < len ? c->buf_cap - tail : len;
    memcpy(c->buf + tail, data, first);
    memcpy(c->buf, data + first, len - first);
    c->buf_len += len;
    return 0;
}

bool conn_progress(struct virtio_vsock *v, struct vsock_conn *c)
{
    if (c->state != CONN_CONNECTED)
        return true;
    bool drained = c->buf_len == 0;
    if (c->guest_no_send && drained && !c->shut_wr) {
        /* §5.10.6.5: the guest sends no more; the host reader sees EOF. */
        shutdown(c->fd, SHUT_WR);
        c->shut_wr = true;
    }
    /* Nothing more will flow either way: the peer of a SHUTDOWN answers
     * with RST (§5.10.6.5), which also ends a host-side half-close. */
    if (c->guest_no_send && drained && (c->guest_no_recv || c->host_eof)) {
        c->end = VSOCK_END_CLOSED;
        conn_reset(v, c);
        return false;
    }
    /* The guest's view of our free space is window - (rx_cnt -
     * fwd_reported); once it drops below half and the host has taken
     * bytes it has not heard of, tell it, so a sender blocked on zero
     * credit always hears (§5.10.6.3).  The window is the smaller of our
     * buf_alloc and the guest's own: Linux 6.1 (Debian's, and upstream
     * since) never has more in flight than its own buf_alloc
     * (virtio_transport_tx_buf_size), so with a guest socket smaller than
     * VSOCK_BUF_ALLOC a half-of-ours threshold is never reached and both
     * sides would wait for ever. */
    uint32_t window = c->peer_buf_alloc < VSOCK_BUF_ALLOC ? c->peer_buf_alloc : VSOCK_BUF_ALLOC;
    if (c->fwd_cnt != c->fwd_reported && c->rx_cnt - c->fwd_reported > window / 2)
        c->pending |= PEND_CREDIT;
    return true;
}

int conn_hello(struct vsock_conn *c)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "OK %u\n", c->local_port);
    /* A fresh socket's buffer takes a line this short at once; anything
     * less means the client is gone or broken. */
    ssize_t w = fd_write(c->fd, (const uint8_t *)line, (size_t)n);
    if (w < 0)
        return (int)w;
    return w == n ? 0 : -EAGAIN;
}

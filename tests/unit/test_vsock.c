/* devices/virtio/vsock.c driven the way a guest drives it: rx, tx and event
 * rings in fake guest memory, the device brought up through the
 * virtio-mmio registers; the host side is socketpair(AF_UNIX) ends handed
 * out by a fake connect_port, with every watch call recorded.  Well-formed
 * traffic both ways (byte-exact), credit in both directions, shutdown,
 * the connection cap, and hostile headers (virtio 1.2 §5.10.6). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio/vsock.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

#define MEM_SIZE  (32u << 20)
#define GUEST_CID 3
#define GUEST_BUF (64u << 10) /* the buf_alloc our fake guest advertises */
#define RXBUF     (4096 + VSOCK_HDR_BYTES)
#define MAX_PAIRS 320
#define MAX_FD    4096

struct pair {
    int dev, host; /* device's end, the test's "host client" end */
    uint32_t port;
};

struct vs_env {
    struct test_mem tm;
    struct test_ring r[3];
    struct virtio_mmio t;
    struct virtio_vsock *v;
    unsigned irqs;
    uint16_t rx_seen, evt_seen;
    int connect_rc; /* < 0: what connect_port fails with */
    unsigned nconnect;
    struct pair pairs[MAX_PAIRS];
    unsigned npairs, nwatch;
    bool wr[MAX_FD], ww[MAX_FD];
};

static void host_interrupt(void *opaque)
{
    ((struct vs_env *)opaque)->irqs++;
}

static void host_kick(void *opaque, unsigned q)
{
    (void)opaque;
    (void)q;
}

static const struct virtio_host_ops host_ops = {host_interrupt, host_kick};

/* The device's end gets a small send buffer so a host that does not read
 * makes the device buffer after a few KiB. */
static int fake_connect(void *opaque, uint32_t port)
{
    struct vs_env *e = opaque;
    e->nconnect++;
    if (e->connect_rc < 0)
        return e->connect_rc;
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    ck_assert_uint_lt(e->npairs, MAX_PAIRS);
    e->pairs[e->npairs++] = (struct pair){sv[0], sv[1], port};
    return sv[0];
}

static void fake_watch(void *opaque, int fd, bool r, bool w)
{
    struct vs_env *e = opaque;
    ck_assert_int_ge(fd, 0);
    ck_assert_int_lt(fd, MAX_FD);
    e->nwatch++;
    e->wr[fd] = r;
    e->ww[fd] = w;
}

static const struct vsock_host_ops vs_ops = {fake_connect, fake_watch};

static void env_init(struct vs_env *e)
{
    memset(e, 0, sizeof(*e));
    test_mem_init(&e->tm, MEM_SIZE);
    ring_init(&e->r[0], &e->tm.mem, 0x1000, 256);
    ring_init(&e->r[2], &e->tm.mem, 0x4000, 16);
    ring_init(&e->r[1], &e->tm.mem, 0x8000, 256); /* its data area serves all three */
    ck_assert_int_eq(virtio_vsock_create(GUEST_CID, &vs_ops, e, &e->v), 0);
    virtio_mmio_init(&e->t, &virtio_vsock_ops, e->v, &host_ops, e, &e->tm.mem);
    mmio_bring_up(&e->t, mmio_device_features(&e->t), e->r, 3);
}

static void env_free(struct vs_env *e)
{
    virtio_vsock_destroy(e->v);
    for (unsigned i = 0; i < e->npairs; i++)
        if (e->pairs[i].host >= 0)
            close(e->pairs[i].host);
    pthread_mutex_destroy(&e->t.lock);
    test_mem_free(&e->tm);
}

static bool needs_reset(struct vs_env *e)
{
    return mmio_rd(&e->t, MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET;
}

static struct virtio_vsock_stats stats(struct vs_env *e)
{
    struct virtio_vsock_stats s;
    virtio_vsock_stats(e->v, &s);
    return s;
}

/* Entry points the monitor calls with the transport lock held. */
static void fd_ev(struct vs_env *e, int fd, uint32_t events)
{
    pthread_mutex_lock(&e->t.lock);
    virtio_vsock_fd_event(e->v, &e->t, fd, events);
    pthread_mutex_unlock(&e->t.lock);
}

static int connect_guest(struct vs_env *e, int fd, uint32_t port)
{
    pthread_mutex_lock(&e->t.lock);
    int rc = virtio_vsock_connect_guest(e->v, &e->t, fd, port);
    pthread_mutex_unlock(&e->t.lock);
    return rc;
}

/* `n` rx buffers of `len` bytes, then the rx kick. */
static void rx_post(struct vs_env *e, unsigned n, uint32_t len)
{
    for (unsigned i = 0; i < n; i++)
        ring_publish(&e->r[0], ring_add_desc(&e->r[0], ring_alloc(&e->r[1], len), len, true));
    virtio_mmio_process(&e->t, VSOCK_RX_QUEUE);
}

/* The next packet the device put in rx: header, up to `cap` payload bytes
 * into data.  False when there is none. */
static bool rx_next(struct vs_env *e, struct vsock_hdr *h, void *data, uint32_t cap)
{
    if (e->rx_seen == ring_used_idx(&e->r[0]))
        return false;
    struct ring_used u = ring_used_elem(&e->r[0], e->rx_seen++);
    struct virtq_desc d = ring_get_desc(&e->r[0], (uint16_t)u.id);
    memset(h, 0, sizeof(*h));
    if (u.len == 0) {
        h->op = VSOCK_OP_INVALID; /* a buffer given back unused */
        return true;
    }
    ck_assert_uint_ge(u.len, VSOCK_HDR_BYTES);
    ck_assert_uint_le(u.len, d.len);
    uint8_t raw[VSOCK_HDR_BYTES];
    ring_read(&e->r[0], d.addr, raw, sizeof(raw));
    vsock_hdr_decode(raw, h);
    ck_assert_uint_eq(h->len + VSOCK_HDR_BYTES, u.len);
    ck_assert_uint_eq(h->dst_cid, GUEST_CID);
    ck_assert_uint_eq(h->type, VSOCK_TYPE_STREAM);
    if (data && h->len)
        ring_read(&e->r[0], d.addr + VSOCK_HDR_BYTES, data, h->len < cap ? h->len : cap);
    return true;
}

/* The next rx packet must be `op` between the given ports. */
static struct vsock_hdr expect(struct vs_env *e, uint16_t op, uint32_t src_port,
                               uint32_t dst_port)
{
    struct vsock_hdr h;
    ck_assert_msg(rx_next(e, &h, NULL, 0), "no packet, wanted op %u", op);
    ck_assert_uint_eq(h.op, op);
    ck_assert_uint_eq(h.src_port, src_port);
    ck_assert_uint_eq(h.dst_port, dst_port);
    return h;
}

static void expect_none(struct vs_env *e)
{
    struct vsock_hdr h;
    ck_assert_msg(!rx_next(e, &h, NULL, 0), "unexpected op %u", h.op);
}

/* A guest header for a stream packet, len 0. */
static struct vsock_hdr gh(uint16_t op, uint32_t src_port, uint32_t dst_port)
{
    return (struct vsock_hdr){.src_cid = GUEST_CID, .dst_cid = VSOCK_HOST_CID,
                              .src_port = src_port, .dst_port = dst_port,
                              .type = VSOCK_TYPE_STREAM, .op = op, .buf_alloc = GUEST_BUF};
}

/* Puts raw bytes on the tx queue, cut into descriptors at `cuts`. */
static void tx_raw(struct vs_env *e, const uint8_t *pkt, uint32_t total, const uint32_t *cuts,
                   unsigned ncuts)
{
    uint64_t g = ring_alloc(&e->r[1], total ? total : 1);
    ring_write(&e->r[1], g, pkt, total);
    struct ring_buf b[8];
    uint32_t start = 0;
    ck_assert_uint_lt(ncuts, 8);
    for (unsigned i = 0; i <= ncuts; i++) {
        uint32_t end = i < ncuts ? cuts[i] : total;
        b[i] = (struct ring_buf){g + start, end - start, false};
        start = end;
    }
    uint16_t before = ring_used_idx(&e->r[1]);
    ring_publish(&e->r[1], ring_chain(&e->r[1], b, ncuts + 1));
    virtio_mmio_process(&e->t, VSOCK_TX_QUEUE);
    ck_assert(!needs_reset(e));
    ck_assert_uint_eq(ring_used_idx(&e->r[1]), (uint16_t)(before + 1));
    ck_assert_uint_eq(ring_used_elem(&e->r[1], before).len, 0);
}

/* Header h (its len as given) and plen payload bytes, cut at `cuts`. */
static void tx_cut(struct vs_env *e, const struct vsock_hdr *h, const void *payload, uint32_t plen,
                   const uint32_t *cuts, unsigned ncuts)
{
    uint8_t *pkt = malloc(VSOCK_HDR_BYTES + plen);
    vsock_hdr_encode(h, pkt);
    if (plen)
        memcpy(pkt + VSOCK_HDR_BYTES, payload, plen);
    tx_raw(e, pkt, VSOCK_HDR_BYTES + plen, cuts, ncuts);
    free(pkt);
}

static void tx(struct vs_env *e, struct vsock_hdr h, const void *payload, uint32_t plen)
{
    h.len = plen;
    tx_cut(e, &h, payload, plen, NULL, 0);
}

/* Reads what the host client got, up to n bytes. */
static size_t host_read(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (uint8_t *)buf + got, n - got, MSG_DONTWAIT);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* Whether the host client sees EOF (or reset) now. */
static bool host_eof(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN);
}

static uint8_t pat(uint32_t i)
{
    return (uint8_t)(i * 31 + (i >> 8) + 5);
}

/* The guest connects from guest port gp to host port hp: one RESPONSE. */
static struct pair *open_conn(struct vs_env *e, uint32_t gp, uint32_t hp)
{
    unsigned before = e->npairs;
    tx(e, gh(VSOCK_OP_REQUEST, gp, hp), NULL, 0);
    ck_assert_uint_eq(e->npairs, before + 1);
    struct vsock_hdr h = expect(e, VSOCK_OP_RESPONSE, hp, gp);
    ck_assert_uint_eq(h.buf_alloc, VSOCK_BUF_ALLOC);
    ck_assert_uint_eq(h.fwd_cnt, 0);
    return &e->pairs[before];
}

START_TEST(identity_and_config)
{
    struct vs_env e;
    env_init(&e);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_DEVICE_ID), VIRTIO_ID_VSOCK);
    for (unsigned q = 0; q < 4; q++) {
        mmio_wr(&e.t, MMIO_QUEUE_SEL, q);
        ck_assert_uint_eq(mmio_rd(&e.t, MMIO_QUEUE_NUM_MAX), q < 3 ? VSOCK_QUEUE_MAX : 0);
    }
    ck_assert_uint_eq(mmio_device_features(&e.t), VIRTIO_BIT(VIRTIO_F_VERSION_1));
    /* §5.10.4: le64 guest_cid, any width, zero past its end. */
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG, 8), GUEST_CID);
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG, 4), GUEST_CID);
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG + 4, 4), 0);
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG, 1), GUEST_CID);
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG + 6, 8), 0);
    ck_assert_uint_eq(mmio_rd_n(&e.t, MMIO_CONFIG + 0xf8, 8), 0);
    env_free(&e);

    struct virtio_vsock *v = (void *)1;
    ck_assert_int_eq(virtio_vsock_create(2, &vs_ops, NULL, &v), -EINVAL);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(virtio_vsock_create(0xffffffffULL, &vs_ops, NULL, &v), -EINVAL);
    ck_assert_int_eq(virtio_vsock_create(1ULL << 32, &vs_ops, NULL, &v), -EINVAL);
    ck_assert_int_eq(virtio_vsock_create(1000, &vs_ops, NULL, &v), 0);
    virtio_vsock_destroy(v);
}
END_TEST

START_TEST(guest_connects_data_both_ways)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 32, RXBUF);
    struct pair *p = open_conn(&e, 40000, 1234);
    ck_assert_uint_eq(p->port, 1234);
    ck_assert(e.wr[p->dev]); /* reading the host once connected */
    ck_assert(!e.ww[p->dev]);
    ck_assert_uint_gt(e.irqs, 0);

    /* guest -> host: header and data in one descriptor, in two, and the
     * header itself split over three. */
    uint8_t out[3000], got[3000];
    for (unsigned i = 0; i < sizeof(out); i++)
        out[i] = pat(i);
    tx(&e, gh(VSOCK_OP_RW, 40000, 1234), out, 1000);
    struct vsock_hdr h = gh(VSOCK_OP_RW, 40000, 1234);
    h.len = 1000;
    tx_cut(&e, &h, out + 1000, 1000, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
    tx_cut(&e, &h, out + 2000, 1000, (uint32_t[]){7, 30, VSOCK_HDR_BYTES + 500}, 3);
    ck_assert_uint_eq(host_read(p->host, got, sizeof(got)), sizeof(out));
    ck_assert_mem_eq(got, out, sizeof(out));
    ck_assert_uint_eq(stats(&e).buffered, 0);

    /* host -> guest */
    uint8_t in[10000], back[10000];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = pat(i * 3 + 1);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    fd_ev(&e, p->dev, EPOLLIN);
    uint32_t total = 0, fwd = 0;
    while (rx_next(&e, &h, back + total, sizeof(back) - total)) {
        ck_assert_uint_eq(h.op, VSOCK_OP_RW);
        ck_assert_uint_eq(h.src_port, 1234);
        ck_assert_uint_eq(h.dst_port, 40000);
        ck_assert_uint_le(h.len, RXBUF - VSOCK_HDR_BYTES);
        fwd = h.fwd_cnt;
        total += h.len;
    }
    ck_assert_uint_eq(total, sizeof(in));
    ck_assert_mem_eq(back, in, sizeof(in));
    ck_assert_uint_eq(fwd, sizeof(out)); /* every packet reports what the host took */
    ck_assert(!needs_reset(&e));
    env_free(&e);
}
END_TEST

START_TEST(credit_stops_host_to_guest)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 64, RXBUF);
    struct vsock_hdr h = gh(VSOCK_OP_REQUEST, 500, 80);
    h.buf_alloc = 1000;
    tx(&e, h, NULL, 0);
    struct pair *p = &e.pairs[0];
    expect(&e, VSOCK_OP_RESPONSE, 80, 500);
    uint8_t in[3000];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = pat(i);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    fd_ev(&e, p->dev, EPOLLIN);
    uint8_t back[3000];
    uint32_t total = 0;
    while (rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 1000); /* exactly the guest's buf_alloc */
    ck_assert(!e.wr[p->dev]);       /* no credit: stop watching */
    fd_ev(&e, p->dev, EPOLLIN);     /* a stale event changes nothing */
    rx_post(&e, 4, RXBUF);
    expect_none(&e);

    /* The guest consumed 600 bytes: 600 more may come. */
    h = gh(VSOCK_OP_CREDIT_UPDATE, 500, 80);
    h.buf_alloc = 1000;
    h.fwd_cnt = 600;
    tx(&e, h, NULL, 0);
    while (rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 1600);
    ck_assert(!e.wr[p->dev]);
    h = gh(VSOCK_OP_CREDIT_UPDATE, 500, 80);
    h.buf_alloc = 5000;
    h.fwd_cnt = 1600;
    tx(&e, h, NULL, 0);
    ck_assert(e.wr[p->dev]); /* credit again: watching */
    fd_ev(&e, p->dev, EPOLLIN);
    while (rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 3000);
    ck_assert_mem_eq(back, in, sizeof(in));

    /* CREDIT_REQUEST gets a CREDIT_UPDATE. */
    tx(&e, gh(VSOCK_OP_CREDIT_REQUEST, 500, 80), NULL, 0);
    h = expect(&e, VSOCK_OP_CREDIT_UPDATE, 80, 500);
    ck_assert_uint_eq(h.buf_alloc, VSOCK_BUF_ALLOC);
    env_free(&e);
}
END_TEST

/* The host does not read: the device buffers up to its buf_alloc, and a
 * guest that sends past the credit it was given is reset. */
START_TEST(guest_exceeding_credit_is_reset)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 1, RXBUF);
    struct pair *p = open_conn(&e, 7, 9);
    static uint8_t chunk[VSOCK_MAX_PKT];
    for (unsigned i = 0; i < sizeof(chunk); i++)
        chunk[i] = pat(i);
    /* No rx buffers now, so no CREDIT_UPDATE reaches the guest: it may
     * send exactly VSOCK_BUF_ALLOC. */
    for (unsigned i = 0; i < VSOCK_BUF_ALLOC / sizeof(chunk); i++)
        tx(&e, gh(VSOCK_OP_RW, 7, 9), chunk, sizeof(chunk));
    struct virtio_vsock_stats s = stats(&e);
    ck_assert_uint_eq(s.conns, 1);
    ck_assert_uint_gt(s.buffered, 0);
    ck_assert_uint_le(s.max_buffered, VSOCK_BUF_ALLOC);
    ck_assert(e.ww[p->dev]); /* waiting for the host to take it */
    tx(&e, gh(VSOCK_OP_RW, 7, 9), chunk, 1);
    ck_assert_uint_eq(stats(&e).conns, 0);
    ck_assert_uint_eq(stats(&e).buffered, 0);
    rx_post(&e, 1, RXBUF);
    expect(&e, VSOCK_OP_RST, 9, 7);
    /* What the host did get is a prefix of what was sent, then EOF. */
    static uint8_t got[VSOCK_BUF_ALLOC];
    size_t n = host_read(p->host, got, sizeof(got));
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(got[i], chunk[i % sizeof(chunk)]);
    ck_assert(host_eof(p->host));
    env_free(&e);
}
END_TEST

/* The host drains a backlog: bytes arrive in order and the guest hears
 * the freed credit. */
START_TEST(backlog_flush_and_credit_update)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 1, RXBUF);
    struct pair *p = open_conn(&e, 7, 9);
    static uint8_t data[200000], got[200000];
    for (unsigned i = 0; i < sizeof(data); i++)
        data[i] = pat(i);
    for (uint32_t off = 0; off < sizeof(data); off += 50000)
        tx(&e, gh(VSOCK_OP_RW, 7, 9), data + off, 50000);
    ck_assert_uint_gt(stats(&e).buffered, 100000);
    rx_post(&e, 8, RXBUF);
    size_t n = 0;
    for (int round = 0; round < 1000 && n < sizeof(data); round++) {
        n += host_read(p->host, got + n, sizeof(got) - n);
        fd_ev(&e, p->dev, EPOLLOUT);
    }
    ck_assert_uint_eq(n, sizeof(data));
    ck_assert_mem_eq(got, data, sizeof(data));
    ck_assert_uint_eq(stats(&e).buffered, 0);
    ck_assert(!e.ww[p->dev]);
    struct vsock_hdr h = expect(&e, VSOCK_OP_CREDIT_UPDATE, 9, 7);
    ck_assert_uint_gt(h.fwd_cnt, 0);
    env_free(&e);
}
END_TEST

START_TEST(connect_port_failure_gets_rst)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 4, RXBUF);
    e.connect_rc = -ECONNREFUSED;
    tx(&e, gh(VSOCK_OP_REQUEST, 1111, 2222), NULL, 0);
    ck_assert_uint_eq(e.nconnect, 1);
    expect(&e, VSOCK_OP_RST, 2222, 1111);
    ck_assert_uint_eq(stats(&e).conns, 0);
    env_free(&e);
}
END_TEST

START_TEST(host_initiated_connection)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 8, RXBUF);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    ck_assert_int_eq(connect_guest(&e, sv[0], 5000), 0);
    struct vsock_hdr h;
    ck_assert(rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(h.dst_port, 5000);
    ck_assert_uint_ge(h.src_port, VSOCK_EPHEMERAL);
    uint32_t hp = h.src_port;
    char line[32];
    ck_assert_uint_eq(host_read(sv[1], line, sizeof(line)), 0); /* nothing before RESPONSE */
    /* Data before the RESPONSE is a violation of the handshake. */
    tx(&e, gh(VSOCK_OP_RESPONSE, 5000, hp), NULL, 0);
    char want[32];
    snprintf(want, sizeof(want), "OK %u\n", hp);
    size_t n = host_read(sv[1], line, sizeof(line));
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_mem_eq(line, want, n);
    tx(&e, gh(VSOCK_OP_RW, 5000, hp), "ping", 4);
    ck_assert_uint_eq(host_read(sv[1], line, sizeof(line)), 4);
    ck_assert_mem_eq(line, "ping", 4);
    ck_assert_int_eq(send(sv[1], "pong", 4, 0), 4);
    fd_ev(&e, sv[0], EPOLLIN);
    char back[8];
    ck_assert(rx_next(&e, &h, back, sizeof(back)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 4);
    ck_assert_mem_eq(back, "pong", 4);
    /* A second connection the guest refuses: the client sees EOF. */
    int sv2[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv2), 0);
    ck_assert_int_eq(connect_guest(&e, sv2[0], 6000), 0);
    ck_assert(rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_ne(h.src_port, hp);
    tx(&e, gh(VSOCK_OP_RST, 6000, h.src_port), NULL, 0);
    ck_assert(host_eof(sv2[1]));
    expect_none(&e); /* never an RST for an RST */
    /* RW on a connection still waiting for RESPONSE resets it. */
    int sv3[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv3), 0);
    ck_assert_int_eq(connect_guest(&e, sv3[0], 6001), 0);
    ck_assert(rx_next(&e, &h, NULL, 0));
    tx(&e, gh(VSOCK_OP_RW, 6001, h.src_port), "x", 1);
    expect(&e, VSOCK_OP_RST, h.src_port, 6001);
    ck_assert(host_eof(sv3[1]));
    ck_assert_uint_eq(stats(&e).conns, 1);
    close(sv[1]);
    close(sv2[1]);
    close(sv3[1]);
    env_free(&e);
}
END_TEST

START_TEST(connect_guest_needs_a_running_driver)
{
    struct vs_env e;
    env_init(&e);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    mmio_wr(&e.t, MMIO_STATUS, 0); /* driver reset */
    ck_assert_int_eq(connect_guest(&e, sv[0], 1), -ENOTCONN);
    close(sv[0]);
    close(sv[1]);
    env_free(&e);
}
END_TEST

START_TEST(shutdown_both_directions)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 16, RXBUF);
    struct pair *p = open_conn(&e, 33, 44);
    /* guest: no more sending.  The host reads the data, then EOF, and can
     * still send. */
    tx(&e, gh(VSOCK_OP_RW, 33, 44), "last", 4);
    struct vsock_hdr h = gh(VSOCK_OP_SHUTDOWN, 33, 44);
    h.flags = VSOCK_SHUTDOWN_SEND;
    tx(&e, h, NULL, 0);
    char buf[16];
    ck_assert_uint_eq(host_read(p->host, buf, sizeof(buf)), 4);
    ck_assert(host_eof(p->host));
    tx(&e, gh(VSOCK_OP_RW, 33, 44), "more", 4); /* after its own SHUTDOWN */
    expect(&e, VSOCK_OP_RST, 44, 33);
    ck_assert_uint_eq(stats(&e).conns, 0);

    /* host: half-close -> SHUTDOWN(SEND); the guest may still send, and
     * its own SHUTDOWN then ends the connection with RST. */
    p = open_conn(&e, 34, 44);
    ck_assert_int_eq(send(p->host, "bye", 3, 0), 3);
    shutdown(p->host, SHUT_WR);
    fd_ev(&e, p->dev, EPOLLIN);
    ck_assert(rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_mem_eq(buf, "bye", 3);
    h = expect(&e, VSOCK_OP_SHUTDOWN, 44, 34);
    ck_assert_uint_eq(h.flags, VSOCK_SHUTDOWN_SEND);
    ck_assert(!e.wr[p->dev]);
    tx(&e, gh(VSOCK_OP_RW, 34, 44), "ok", 2);
    ck_assert_uint_eq(host_read(p->host, buf, sizeof(buf)), 2);
    h = gh(VSOCK_OP_SHUTDOWN, 34, 44);
    h.flags = VSOCK_SHUTDOWN_SEND;
    tx(&e, h, NULL, 0);
    expect(&e, VSOCK_OP_RST, 44, 34);
    ck_assert(host_eof(p->host));

    /* guest close(): SHUTDOWN with both flags, answered by RST (§5.10.6.5). */
    p = open_conn(&e, 35, 44);
    h = gh(VSOCK_OP_SHUTDOWN, 35, 44);
    h.flags = VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV;
    tx(&e, h, NULL, 0);
    expect(&e, VSOCK_OP_RST, 44, 35);
    ck_assert(host_eof(p->host));
    /* guest RCV only: the device stops reading the host. */
    p = open_conn(&e, 36, 44);
    h = gh(VSOCK_OP_SHUTDOWN, 36, 44);
    h.flags = VSOCK_SHUTDOWN_RCV;
    tx(&e, h, NULL, 0);
    ck_assert(!e.wr[p->dev]);
    ck_assert_int_eq(send(p->host, "zzz", 3, 0), 3);
    fd_ev(&e, p->dev, EPOLLIN);
    expect_none(&e);
    /* guest RST closes the host side. */
    tx(&e, gh(VSOCK_OP_RST, 36, 44), NULL, 0);
    ck_assert(host_eof(p->host));
    expect_none(&e);
    ck_assert_uint_eq(stats(&e).conns, 0);
    env_free(&e);
}
END_TEST

START_TEST(many_connections_and_the_cap)
{
    struct vs_env e;
    env_init(&e);
    for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++) {
        if (i % 128 == 0)
            rx_post(&e, 128, 64);
        open_conn(&e, 10000 + i, 80 + i % 3);
    }
    ck_assert_uint_eq(stats(&e).conns, VSOCK_MAX_CONNS);
    rx_post(&e, 16, 64);
    tx(&e, gh(VSOCK_OP_REQUEST, 9999, 80), NULL, 0);
    expect(&e, VSOCK_OP_RST, 80, 9999);
    ck_assert_uint_eq(e.nconnect, VSOCK_MAX_CONNS); /* the monitor was not asked */
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    ck_assert_int_eq(connect_guest(&e, sv[0], 1), -EBUSY);
    close(sv[0]);
    close(sv[1]);
    /* Each connection is its own: data on one goes to its fd only. */
    tx(&e, gh(VSOCK_OP_RW, 10000 + 200, 80 + 200 % 3), "x", 1);
    char c;
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        ck_assert_uint_eq(host_read(e.pairs[i].host, &c, 1), i == 200);
    /* One closes, another may open. */
    tx(&e, gh(VSOCK_OP_RST, 10000 + 5, 80 + 5 % 3), NULL, 0);
    ck_assert(host_eof(e.pairs[5].host));
    open_conn(&e, 9999, 80);
    /* A REQUEST for a live connection resets it. */
    tx(&e, gh(VSOCK_OP_REQUEST, 9999, 80), NULL, 0);
    expect(&e, VSOCK_OP_RST, 80, 9999);
    ck_assert_uint_eq(stats(&e).conns, VSOCK_MAX_CONNS - 1);
    env_free(&e);
}
END_TEST

/* Header fields and framing a hostile guest controls. */
START_TEST(hostile_headers)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 64, RXBUF);
    struct pair *p = open_conn(&e, 1, 2);
    uint8_t pkt[VSOCK_HDR_BYTES + 16] = {0};
    struct vsock_hdr h;

    /* Shorter than a header (whole chain, or readable part): dropped. */
    h = gh(VSOCK_OP_RW, 1, 2);
    vsock_hdr_encode(&h, pkt);
    tx_raw(&e, pkt, VSOCK_HDR_BYTES - 1, NULL, 0);
    tx_raw(&e, pkt, 20, (uint32_t[]){10}, 1);
    expect_none(&e);
    ck_assert_uint_eq(stats(&e).conns, 1);

    /* Spoofed source CID: dropped without a word. */
    h = gh(VSOCK_OP_RW, 1, 2);
    h.src_cid = GUEST_CID + 1;
    tx(&e, h, "a", 1);
    h.src_cid = GUEST_CID | (1ULL << 32);
    tx(&e, h, "a", 1);
    expect_none(&e);
    ck_assert_uint_eq(stats(&e).conns, 1);

    /* Another destination CID: RST as from that CID. */
    h = gh(VSOCK_OP_REQUEST, 3, 4);
    h.dst_cid = 7;
    tx(&e, h, NULL, 0);
    h = expect(&e, VSOCK_OP_RST, 4, 3);
    ck_assert_uint_eq(h.src_cid, 7);
    ck_assert_uint_eq(e.nconnect, 1);

    /* len larger / smaller than the bytes after the header: the
     * connection is reset. */
    h = gh(VSOCK_OP_RW, 1, 2);
    h.len = 17;
    tx_cut(&e, &h, pkt, 16, NULL, 0);
    expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert(host_eof(p->host));
    ck_assert_uint_eq(host_read(p->host, pkt, 1), 0); /* nothing leaked through */
    p = open_conn(&e, 1, 2);
    h.len = 15;
    tx_cut(&e, &h, pkt, 16, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
    expect(&e, VSOCK_OP_RST, 2, 1);
    h.len = 0xffffffff;
    tx_cut(&e, &h, pkt, 16, NULL, 0);
    expect(&e, VSOCK_OP_RST, 2, 1);
    /* A payload on anything but RW. */
    h = gh(VSOCK_OP_REQUEST, 1, 2);
    tx(&e, h, "abc", 3);
    expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(e.nconnect, 2);

    /* Wrong type, unknown op (on a connection and off one), RW and
     * CREDIT_UPDATE on no connection: RST.  RST on none: silence. */
    p = open_conn(&e, 1, 2);
    h = gh(VSOCK_OP_RW, 1, 2);
    h.type = 2; /* SEQPACKET, not offered */
    tx(&e, h, "a", 1);
    expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert(host_eof(p->host));
    p = open_conn(&e, 1, 2);
    tx(&e, gh(99, 1, 2), NULL, 0);
    expect(&e, VSOCK_OP_RST, 2, 1);
    tx(&e, gh(VSOCK_OP_INVALID, 5, 6), NULL, 0);
    expect(&e, VSOCK_OP_RST, 6, 5);
    tx(&e, gh(VSOCK_OP_RW, 5, 6), "a", 1);
    expect(&e, VSOCK_OP_RST, 6, 5);
    tx(&e, gh(VSOCK_OP_CREDIT_UPDATE, 5, 6), NULL, 0);
    expect(&e, VSOCK_OP_RST, 6, 5);
    tx(&e, gh(VSOCK_OP_RESPONSE, 5, 6), NULL, 0); /* unsolicited */
    expect(&e, VSOCK_OP_RST, 6, 5);
    tx(&e, gh(VSOCK_OP_RST, 5, 6), NULL, 0);
    expect_none(&e);
    /* RESPONSE on a connection the guest opened: reset. */
    p = open_conn(&e, 1, 2);
    tx(&e, gh(VSOCK_OP_RESPONSE, 1, 2), NULL, 0);
    expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(stats(&e).conns, 0);
    ck_assert(!needs_reset(&e));
    env_free(&e);
}
END_TEST

START_TEST(hostile_credit_values)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 8, RXBUF);
    /* buf_alloc at its largest: packets are still bounded by the rx
     * buffers. */
    struct vsock_hdr h = gh(VSOCK_OP_REQUEST, 1, 2);
    h.buf_alloc = 0xffffffff;
    tx(&e, h, NULL, 0);
    struct pair *p = &e.pairs[0];
    expect(&e, VSOCK_OP_RESPONSE, 2, 1);
    static uint8_t big[20000];
    ck_assert_int_eq(send(p->host, big, 8000, 0), 8000);
    fd_ev(&e, p->dev, EPOLLIN);
    uint32_t total = 0;
    while (rx_next(&e, &h, NULL, 0)) {
        ck_assert_uint_le(h.len, RXBUF - VSOCK_HDR_BYTES);
        total += h.len;
    }
    ck_assert_uint_eq(total, 8000);
    /* fwd_cnt running backwards (or past what was sent): no credit, not
     * a huge one. */
    h = gh(VSOCK_OP_CREDIT_UPDATE, 1, 2);
    h.buf_alloc = 5000;
    h.fwd_cnt = 0; /* 8000 in flight > buf_alloc */
    tx(&e, h, NULL, 0);
    ck_assert(!e.wr[p->dev]);
    rx_post(&e, 8, RXBUF);
    ck_assert_int_eq(send(p->host, big, 100, 0), 100);
    fd_ev(&e, p->dev, EPOLLIN);
    expect_none(&e);
    h.fwd_cnt = 9000; /* past the 8000 sent */
    tx(&e, h, NULL, 0);
    fd_ev(&e, p->dev, EPOLLIN);
    expect_none(&e);
    h.fwd_cnt = 8000;
    h.buf_alloc = 0;
    tx(&e, h, NULL, 0);
    fd_ev(&e, p->dev, EPOLLIN);
    expect_none(&e);
    h.buf_alloc = 50;
    tx(&e, h, NULL, 0);
    fd_ev(&e, p->dev, EPOLLIN);
    ck_assert(rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.len, 50);
    ck_assert(!needs_reset(&e));
    env_free(&e);
}
END_TEST

START_TEST(rx_buffers_too_small)
{
    struct vs_env e;
    env_init(&e);
    /* Too small for a header: given back empty.  A header-only buffer
     * carries control packets but no data. */
    static const uint32_t lens[] = {0, 1, 2, VSOCK_HDR_BYTES - 1, VSOCK_HDR_BYTES,
                                    VSOCK_HDR_BYTES};
    for (unsigned i = 0; i < 6; i++)
        ring_publish(&e.r[0], ring_add_desc(&e.r[0], ring_alloc(&e.r[1], 64), lens[i], true));
    virtio_mmio_process(&e.t, VSOCK_RX_QUEUE);
    tx(&e, gh(VSOCK_OP_REQUEST, 1, 2), NULL, 0);
    struct vsock_hdr h;
    for (unsigned i = 0; i < 4; i++) {
        ck_assert(rx_next(&e, &h, NULL, 0));
        ck_assert_uint_eq(h.op, VSOCK_OP_INVALID); /* used length 0 */
    }
    expect(&e, VSOCK_OP_RESPONSE, 2, 1);
    struct pair *p = &e.pairs[0];
    ck_assert_int_eq(send(p->host, "data", 4, 0), 4);
    fd_ev(&e, p->dev, EPOLLIN);
    ck_assert(rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_INVALID); /* header-only: no room for data */
    expect_none(&e);
    /* Out of rx buffers: read watches stop until the driver adds some. */
    ck_assert(!e.wr[p->dev]);
    char buf[8];
    rx_post(&e, 1, RXBUF);
    ck_assert(rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_mem_eq(buf, "data", 4);
    ck_assert(!needs_reset(&e));
    env_free(&e);
}
END_TEST

START_TEST(transport_reset_event)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 8, RXBUF);
    struct pair *a = open_conn(&e, 1, 2), *b = open_conn(&e, 3, 4);
    /* No event buffer yet: the event waits for one; the sockets go now. */
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    ck_assert_uint_eq(stats(&e).conns, 0);
    ck_assert(host_eof(a->host));
    ck_assert(host_eof(b->host));
    expect_none(&e); /* no RSTs: the event resets every socket */
    ck_assert_uint_eq(ring_used_idx(&e.r[2]), 0);
    /* A 3-byte event buffer is too small and comes back empty. */
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ring_alloc(&e.r[1], 4), 3, true));
    uint64_t ev = ring_alloc(&e.r[1], 4);
    uint8_t junk[4] = {0xaa, 0xaa, 0xaa, 0xaa};
    ring_write(&e.r[2], ev, junk, 4);
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ev, 4, true));
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    ck_assert_uint_eq(ring_used_idx(&e.r[2]), 2);
    ck_assert_uint_eq(ring_used_elem(&e.r[2], 0).len, 0);
    ck_assert_uint_eq(ring_used_elem(&e.r[2], 1).len, 4);
    uint8_t id[4];
    ring_read(&e.r[2], ev, id, 4);
    ck_assert_uint_eq(rd32le(id), VSOCK_EVENT_TRANSPORT_RESET);
    /* Delivered once; a new event goes straight into a waiting buffer. */
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ring_alloc(&e.r[1], 4), 4, true));
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    ck_assert_uint_eq(ring_used_idx(&e.r[2]), 2);
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    ck_assert_uint_eq(ring_used_idx(&e.r[2]), 3);
    /* The guest reconnects. */
    open_conn(&e, 1, 2);
    env_free(&e);
}
END_TEST

START_TEST(driver_reset_closes_everything)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 8, RXBUF);
    struct pair *a = open_conn(&e, 1, 2);
    tx(&e, gh(VSOCK_OP_RW, 9, 9), NULL, 0); /* an RST left owed */
    mmio_wr(&e.t, MMIO_STATUS, 0);
    ck_assert_uint_eq(stats(&e).conns, 0);
    ck_assert(host_eof(a->host));
    ck_assert(!e.wr[a->dev] && !e.ww[a->dev]);
    /* Events for a closed fd are ignored. */
    fd_ev(&e, a->dev, EPOLLIN | EPOLLOUT | EPOLLHUP);
    env_free(&e);
}
END_TEST

/* An rx chain of two writable buffers: header in one, data in the other. */
START_TEST(rx_chain_of_two_buffers)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 1, RXBUF);
    struct pair *p = open_conn(&e, 1, 2);
    uint64_t hb = ring_alloc(&e.r[1], VSOCK_HDR_BYTES), db = ring_alloc(&e.r[1], 100);
    struct ring_buf b[2] = {{hb, VSOCK_HDR_BYTES, true}, {db, 100, true}};
    ring_publish(&e.r[0], ring_chain(&e.r[0], b, 2));
    virtio_mmio_process(&e.t, VSOCK_RX_QUEUE);
    uint8_t in[150];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = pat(i);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    fd_ev(&e, p->dev, EPOLLIN);
    uint16_t u = ring_used_idx(&e.r[0]);
    ck_assert_uint_eq(ring_used_elem(&e.r[0], (uint16_t)(u - 1)).len, VSOCK_HDR_BYTES + 100);
    uint8_t raw[VSOCK_HDR_BYTES], got[100];
    ring_read(&e.r[0], hb, raw, sizeof(raw));
    struct vsock_hdr h;
    vsock_hdr_decode(raw, &h);
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 100);
    ring_read(&e.r[0], db, got, sizeof(got));
    ck_assert_mem_eq(got, in, 100);
    e.rx_seen = u;
    env_free(&e);
}
END_TEST

/* RSTs the guest provokes while it offers no rx buffers wait in a bounded
 * queue; past it they are dropped and counted. */
START_TEST(rst_queue_is_bounded)
{
    struct vs_env e;
    env_init(&e);
    for (unsigned i = 0; i < VSOCK_RST_QUEUE + 6; i++)
        tx(&e, gh(VSOCK_OP_RW, 100 + i, 7), "a", 1);
    ck_assert_uint_eq(stats(&e).rst_dropped, 6);
    rx_post(&e, 128, 64);
    for (unsigned i = 0; i < VSOCK_RST_QUEUE; i++)
        expect(&e, VSOCK_OP_RST, 7, 100 + i);
    expect_none(&e);
    env_free(&e);
}
END_TEST

/* The host client goes away with guest bytes still buffered: the flush
 * fails and the guest hears RST.  With nothing buffered, its hang-up is
 * an EOF: SHUTDOWN. */
START_TEST(host_hangup)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 8, RXBUF);
    struct pair *p = open_conn(&e, 1, 2);
    static uint8_t chunk[VSOCK_MAX_PKT];
    tx(&e, gh(VSOCK_OP_RW, 1, 2), chunk, sizeof(chunk));
    ck_assert_uint_gt(stats(&e).buffered, 0);
    close(p->host);
    p->host = -1;
    fd_ev(&e, p->dev, EPOLLOUT | EPOLLHUP);
    expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(stats(&e).conns, 0);
    p = open_conn(&e, 3, 2);
    shutdown(p->host, SHUT_RDWR);
    fd_ev(&e, p->dev, EPOLLIN | EPOLLHUP);
    struct vsock_hdr h = expect(&e, VSOCK_OP_SHUTDOWN, 2, 3);
    ck_assert_uint_eq(h.flags, VSOCK_SHUTDOWN_SEND);
    ck_assert_uint_eq(stats(&e).conns, 1);
    env_free(&e);
}
END_TEST

/* A guest that behaves like Linux (sends within credit, consumes what
 * arrives and reports it with CREDIT_UPDATE) and a host client that reads
 * and writes as it can: 1 MiB each way at once, byte-exact. */
START_TEST(stream_both_ways_with_credit)
{
    enum { TOTAL = 1 << 20, GBUF = 64 << 10 };
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 64, RXBUF);
    struct pair *p = open_conn(&e, 77, 88);
    uint8_t *g2h = malloc(TOTAL), *h2g = malloc(TOTAL), *host_got = malloc(TOTAL),
            *guest_got = malloc(TOTAL);
    for (uint32_t i = 0; i < TOTAL; i++) {
        g2h[i] = pat(i);
        h2g[i] = pat(i * 7 + 3);
    }
    uint32_t g_sent = 0, h_sent = 0, h_got = 0, g_got = 0;
    uint32_t peer_alloc = VSOCK_BUF_ALLOC, peer_fwd = 0, g_reported = 0;
    for (int round = 0; round < 20000 && (h_got < TOTAL || g_got < TOTAL); round++) {
        /* guest -> host within the credit the device gave. */
        uint32_t credit = peer_alloc - (g_sent - peer_fwd);
        uint32_t n = TOTAL - g_sent < 16384 ? TOTAL - g_sent : 16384;
        if (n > credit)
            n = credit;
        if (n) {
            struct vsock_hdr h = gh(VSOCK_OP_RW, 77, 88);
            h.buf_alloc = GBUF;
            h.fwd_cnt = g_reported;
            h.len = n;
            tx_cut(&e, &h, g2h + g_sent, n, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
            g_sent += n;
        }
        /* The host client reads and writes what its socket allows. */
        h_got += (uint32_t)host_read(p->host, host_got + h_got, TOTAL - h_got);
        if (h_sent < TOTAL) {
            ssize_t w = send(p->host, h2g + h_sent, TOTAL - h_sent, MSG_DONTWAIT);
            if (w > 0)
                h_sent += (uint32_t)w;
        }
        fd_ev(&e, p->dev, EPOLLIN | EPOLLOUT);
        /* The guest takes what arrived and gives the buffers back. */
        struct vsock_hdr h;
        unsigned used = 0;
        while (rx_next(&e, &h, guest_got + g_got, TOTAL - g_got)) {
            used++;
            ck_assert_uint_eq(h.src_port, 88);
            ck_assert(h.op == VSOCK_OP_RW || h.op == VSOCK_OP_CREDIT_UPDATE);
            g_got += h.len;
            ck_assert_uint_le(g_got - g_reported, GBUF); /* the device kept to our credit */
            peer_alloc = h.buf_alloc;
            peer_fwd = h.fwd_cnt;
        }
        if (used)
            rx_post(&e, used, RXBUF);
        if (g_got != g_reported) {
            struct vsock_hdr cu = gh(VSOCK_OP_CREDIT_UPDATE, 77, 88);
            cu.buf_alloc = GBUF;
            cu.fwd_cnt = g_reported = g_got;
            tx(&e, cu, NULL, 0);
        }
    }
    ck_assert_uint_eq(h_got, TOTAL);
    ck_assert_uint_eq(g_got, TOTAL);
    ck_assert(memcmp(host_got, g2h, TOTAL) == 0);
    ck_assert(memcmp(guest_got, h2g, TOTAL) == 0);
    ck_assert_uint_eq(stats(&e).conns, 1);
    ck_assert(!needs_reset(&e));
    free(g2h);
    free(h2g);
    free(host_got);
    free(guest_got);
    env_free(&e);
}
END_TEST

/* Connections are served in turn: with data waiting on all of them, each
 * gets a packet before any gets a second. */
START_TEST(connections_take_turns)
{
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 4, RXBUF); /* just the RESPONSEs */
    for (uint32_t i = 0; i < 4; i++)
        open_conn(&e, 10 + i, 20);
    static uint8_t lots[16 * 4096];
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(send(e.pairs[i].host, lots, sizeof(lots), 0), (ssize_t)sizeof(lots));
        fd_ev(&e, e.pairs[i].dev, EPOLLIN);
    }
    expect_none(&e);
    ck_assert(!e.wr[e.pairs[0].dev]); /* starved of rx buffers: not watching */
    rx_post(&e, 8, RXBUF);
    struct vsock_hdr h;
    unsigned seen[4] = {0};
    for (unsigned k = 0; k < 8; k++) {
        ck_assert(rx_next(&e, &h, NULL, 0));
        ck_assert_uint_eq(h.op, VSOCK_OP_RW);
        seen[h.dst_port - 10]++;
    }
    for (unsigned i = 0; i < 4; i++)
        ck_assert_uint_eq(seen[i], 2);
    env_free(&e);
}
END_TEST

/* The backlog ring grows as the host lags and wraps as it catches up;
 * bytes stay in order through both, whatever the sizes. */
START_TEST(backlog_wraps_and_grows)
{
    enum { TOTAL = 600000 };
    struct vs_env e;
    env_init(&e);
    rx_post(&e, 64, RXBUF);
    struct pair *p = open_conn(&e, 7, 9);
    uint8_t *data = malloc(TOTAL), *got = malloc(TOTAL);
    for (uint32_t i = 0; i < TOTAL; i++)
        data[i] = pat(i * 13);
    uint32_t sent = 0, n = 0, peer_fwd = 0, sizes[] = {1, 3000, 20000, 777, 65536, 5000};
    struct vsock_hdr h;
    for (unsigned round = 0; round < 10000 && n < TOTAL; round++) {
        uint32_t credit = VSOCK_BUF_ALLOC - (sent - peer_fwd);
        uint32_t len = sizes[round % 6];
        if (len > TOTAL - sent)
            len = TOTAL - sent;
        if (len && len <= credit) {
            tx(&e, gh(VSOCK_OP_RW, 7, 9), data + sent, len);
            sent += len;
        }
        ck_assert_uint_le(stats(&e).max_buffered, VSOCK_BUF_ALLOC);
        /* The host takes a little at a time. */
        n += (uint32_t)host_read(p->host, got + n, round % 3 ? 2000 : 9000);
        fd_ev(&e, p->dev, EPOLLOUT);
        while (rx_next(&e, &h, NULL, 0)) {
            ck_assert_uint_eq(h.op, VSOCK_OP_CREDIT_UPDATE);
            peer_fwd = h.fwd_cnt;
            rx_post(&e, 1, RXBUF);
        }
    }
    ck_assert_uint_eq(n, TOTAL);
    ck_assert(memcmp(got, data, TOTAL) == 0);
    ck_assert_uint_eq(stats(&e).buffered, 0);
    free(data);
    free(got);
    env_free(&e);
}
END_TEST

Suite *vsock_suite(void)
{
    Suite *s = suite_create("virtio_vsock");
    TCase *tc = tcase_create("vsock");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, identity_and_config);
    tcase_add_test(tc, guest_connects_data_both_ways);
    tcase_add_test(tc, credit_stops_host_to_guest);
    tcase_add_test(tc, guest_exceeding_credit_is_reset);
    tcase_add_test(tc, backlog_flush_and_credit_update);
    tcase_add_test(tc, connect_port_failure_gets_rst);
    tcase_add_test(tc, host_initiated_connection);
    tcase_add_test(tc, connect_guest_needs_a_running_driver);
    tcase_add_test(tc, shutdown_both_directions);
    tcase_add_test(tc, many_connections_and_the_cap);
    tcase_add_test(tc, hostile_headers);
    tcase_add_test(tc, hostile_credit_values);
    tcase_add_test(tc, rx_buffers_too_small);
    tcase_add_test(tc, transport_reset_event);
    tcase_add_test(tc, driver_reset_closes_everything);
    tcase_add_test(tc, rx_chain_of_two_buffers);
    tcase_add_test(tc, rst_queue_is_bounded);
    tcase_add_test(tc, host_hangup);
    tcase_add_test(tc, stream_both_ways_with_credit);
    tcase_add_test(tc, connections_take_turns);
    tcase_add_test(tc, backlog_wraps_and_grows);
    suite_add_tcase(s, tc);
    return s;
}

/* devices/virtio/vsock.c driven the way a guest drives it (the shared
 * environment is in vsock_env.h): identity and config, connections both
 * ways with byte-exact data, credit in both directions.  Shutdown and
 * streaming are in test_vsock_flow.c, hostile drivers in
 * test_vsock_hostile.c (virtio 1.2 §5.10.6). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/vsock_env.h"

static void host_interrupt(void *opaque)
{
    ((struct vs_env *)opaque)->irqs++;
}

static void host_kick(void *opaque, unsigned q)
{
    (void)opaque;
    (void)q;
}

static const struct virtio_host_ops host_ops = {.interrupt = host_interrupt, .kick = host_kick};

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

static void fake_conn_cap(void *opaque, unsigned max)
{
    struct vs_env *e = opaque;
    e->ncap++;
    e->cap_max = max;
}

static const struct vsock_host_ops vs_ops = {fake_connect, fake_watch, fake_conn_cap};

void vs_init(struct vs_env *e)
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

void vs_free(struct vs_env *e)
{
    virtio_vsock_destroy(e->v);
    for (unsigned i = 0; i < e->npairs; i++)
        if (e->pairs[i].host >= 0)
            close(e->pairs[i].host);
    pthread_mutex_destroy(&e->t.lock);
    test_mem_free(&e->tm);
}

bool vs_needs_reset(struct vs_env *e)
{
    return mmio_rd(&e->t, MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET;
}

struct virtio_vsock_stats vs_stats(struct vs_env *e)
{
    struct virtio_vsock_stats s;
    virtio_vsock_stats(e->v, &s);
    return s;
}

/* Entry points the monitor calls with the transport lock held. */
void vs_fd_event(struct vs_env *e, int fd, uint32_t events)
{
    pthread_mutex_lock(&e->t.lock);
    virtio_vsock_fd_event(e->v, &e->t, fd, events);
    pthread_mutex_unlock(&e->t.lock);
}

int vs_connect_guest(struct vs_env *e, int fd, uint32_t port)
{
    pthread_mutex_lock(&e->t.lock);
    int rc = virtio_vsock_connect_guest(e->v, &e->t, fd, port);
    pthread_mutex_unlock(&e->t.lock);
    return rc;
}

/* `n` rx buffers of `len` bytes, then the rx kick. */
void vs_rx_post(struct vs_env *e, unsigned n, uint32_t len)
{
    for (unsigned i = 0; i < n; i++)
        ring_publish(&e->r[0], ring_add_desc(&e->r[0], ring_alloc(&e->r[1], len), len, true));
    virtio_mmio_process(&e->t, VSOCK_RX_QUEUE);
}

/* The next packet the device put in rx: header, up to `cap` payload bytes
 * into data.  False when there is none. */
bool vs_rx_next(struct vs_env *e, struct vsock_hdr *h, void *data, uint32_t cap)
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
struct vsock_hdr vs_expect(struct vs_env *e, uint16_t op, uint32_t src_port,
                               uint32_t dst_port)
{
    struct vsock_hdr h;
    ck_assert_msg(vs_rx_next(e, &h, NULL, 0), "no packet, wanted op %u", op);
    ck_assert_uint_eq(h.op, op);
    ck_assert_uint_eq(h.src_port, src_port);
    ck_assert_uint_eq(h.dst_port, dst_port);
    return h;
}

void vs_expect_none(struct vs_env *e)
{
    struct vsock_hdr h;
    ck_assert_msg(!vs_rx_next(e, &h, NULL, 0), "unexpected op %u", h.op);
}

/* A guest header for a stream packet, len 0. */
struct vsock_hdr vs_gh(uint16_t op, uint32_t src_port, uint32_t dst_port)
{
    return (struct vsock_hdr){.src_cid = GUEST_CID, .dst_cid = VSOCK_HOST_CID,
                              .src_port = src_port, .dst_port = dst_port,
                              .type = VSOCK_TYPE_STREAM, .op = op, .buf_alloc = GUEST_BUF};
}

/* Puts raw bytes on the tx queue, cut into descriptors at `cuts`. */
void vs_tx_raw(struct vs_env *e, const uint8_t *pkt, uint32_t total, const uint32_t *cuts,
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
    ck_assert(!vs_needs_reset(e));
    ck_assert_uint_eq(ring_used_idx(&e->r[1]), (uint16_t)(before + 1));
    ck_assert_uint_eq(ring_used_elem(&e->r[1], before).len, 0);
}

/* Header h (its len as given) and plen payload bytes, cut at `cuts`. */
void vs_tx_cut(struct vs_env *e, const struct vsock_hdr *h, const void *payload, uint32_t plen,
                   const uint32_t *cuts, unsigned ncuts)
{
    uint8_t *pkt = malloc(VSOCK_HDR_BYTES + plen);
    vsock_hdr_encode(h, pkt);
    if (plen)
        memcpy(pkt + VSOCK_HDR_BYTES, payload, plen);
    vs_tx_raw(e, pkt, VSOCK_HDR_BYTES + plen, cuts, ncuts);
    free(pkt);
}

void vs_tx(struct vs_env *e, struct vsock_hdr h, const void *payload, uint32_t plen)
{
    h.len = plen;
    vs_tx_cut(e, &h, payload, plen, NULL, 0);
}

/* Reads what the host client got, up to n bytes. */
size_t vs_host_read(int fd, void *buf, size_t n)
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
bool vs_host_eof(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN);
}

uint8_t vs_pat(uint32_t i)
{
    return (uint8_t)(i * 31 + (i >> 8) + 5);
}

/* The guest connects from guest port gp to host port hp: one RESPONSE. */
struct pair *vs_open_conn(struct vs_env *e, uint32_t gp, uint32_t hp)
{
    unsigned before = e->npairs;
    vs_tx(e, vs_gh(VSOCK_OP_REQUEST, gp, hp), NULL, 0);
    ck_assert_uint_eq(e->npairs, before + 1);
    struct vsock_hdr h = vs_expect(e, VSOCK_OP_RESPONSE, hp, gp);
    ck_assert_uint_eq(h.buf_alloc, VSOCK_BUF_ALLOC);
    ck_assert_uint_eq(h.fwd_cnt, 0);
    return &e->pairs[before];
}

START_TEST(identity_and_config)
{
    struct vs_env e;
    vs_init(&e);
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
    vs_free(&e);

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
    vs_init(&e);
    vs_rx_post(&e, 32, RXBUF);
    struct pair *p = vs_open_conn(&e, 40000, 1234);
    ck_assert_uint_eq(p->port, 1234);
    ck_assert(e.wr[p->dev]); /* reading the host once connected */
    ck_assert(!e.ww[p->dev]);
    ck_assert_uint_gt(e.irqs, 0);

    /* guest -> host: header and data in one descriptor, in two, and the
     * header itself split over three. */
    uint8_t out[3000], got[3000];
    for (unsigned i = 0; i < sizeof(out); i++)
        out[i] = vs_pat(i);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 40000, 1234), out, 1000);
    struct vsock_hdr h = vs_gh(VSOCK_OP_RW, 40000, 1234);
    h.len = 1000;
    vs_tx_cut(&e, &h, out + 1000, 1000, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
    vs_tx_cut(&e, &h, out + 2000, 1000, (uint32_t[]){7, 30, VSOCK_HDR_BYTES + 500}, 3);
    ck_assert_uint_eq(vs_host_read(p->host, got, sizeof(got)), sizeof(out));
    ck_assert_mem_eq(got, out, sizeof(out));
    ck_assert_uint_eq(vs_stats(&e).buffered, 0);

    /* host -> guest */
    uint8_t in[10000], back[10000];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = vs_pat(i * 3 + 1);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    vs_fd_event(&e, p->dev, EPOLLIN);
    uint32_t total = 0, fwd = 0;
    while (vs_rx_next(&e, &h, back + total, sizeof(back) - total)) {
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
    ck_assert(!vs_needs_reset(&e));
    vs_free(&e);
}
END_TEST

START_TEST(credit_stops_host_to_guest)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 64, RXBUF);
    struct vsock_hdr h = vs_gh(VSOCK_OP_REQUEST, 500, 80);
    h.buf_alloc = 1000;
    vs_tx(&e, h, NULL, 0);
    struct pair *p = &e.pairs[0];
    vs_expect(&e, VSOCK_OP_RESPONSE, 80, 500);
    uint8_t in[3000];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = vs_pat(i);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    vs_fd_event(&e, p->dev, EPOLLIN);
    uint8_t back[3000];
    uint32_t total = 0;
    while (vs_rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 1000); /* exactly the guest's buf_alloc */
    ck_assert(!e.wr[p->dev]);       /* no credit: stop watching */
    vs_fd_event(&e, p->dev, EPOLLIN);     /* a stale event changes nothing */
    vs_rx_post(&e, 4, RXBUF);
    vs_expect_none(&e);

    /* The guest consumed 600 bytes: 600 more may come. */
    h = vs_gh(VSOCK_OP_CREDIT_UPDATE, 500, 80);
    h.buf_alloc = 1000;
    h.fwd_cnt = 600;
    vs_tx(&e, h, NULL, 0);
    while (vs_rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 1600);
    ck_assert(!e.wr[p->dev]);
    h = vs_gh(VSOCK_OP_CREDIT_UPDATE, 500, 80);
    h.buf_alloc = 5000;
    h.fwd_cnt = 1600;
    vs_tx(&e, h, NULL, 0);
    ck_assert(e.wr[p->dev]); /* credit again: watching */
    vs_fd_event(&e, p->dev, EPOLLIN);
    while (vs_rx_next(&e, &h, back + total, sizeof(back) - total))
        total += h.len;
    ck_assert_uint_eq(total, 3000);
    ck_assert_mem_eq(back, in, sizeof(in));

    /* CREDIT_REQUEST gets a CREDIT_UPDATE. */
    vs_tx(&e, vs_gh(VSOCK_OP_CREDIT_REQUEST, 500, 80), NULL, 0);
    h = vs_expect(&e, VSOCK_OP_CREDIT_UPDATE, 80, 500);
    ck_assert_uint_eq(h.buf_alloc, VSOCK_BUF_ALLOC);
    vs_free(&e);
}
END_TEST

/* The host does not read: the device buffers up to its buf_alloc, and a
 * guest that sends past the credit it was given is reset. */
START_TEST(guest_exceeding_credit_is_reset)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 1, RXBUF);
    struct pair *p = vs_open_conn(&e, 7, 9);
    static uint8_t chunk[VSOCK_MAX_PKT];
    for (unsigned i = 0; i < sizeof(chunk); i++)
        chunk[i] = vs_pat(i);
    /* No rx buffers now, so no CREDIT_UPDATE reaches the guest: it may
     * send exactly VSOCK_BUF_ALLOC. */
    for (unsigned i = 0; i < VSOCK_BUF_ALLOC / sizeof(chunk); i++)
        vs_tx(&e, vs_gh(VSOCK_OP_RW, 7, 9), chunk, sizeof(chunk));
    struct virtio_vsock_stats s = vs_stats(&e);
    ck_assert_uint_eq(s.conns, 1);
    ck_assert_uint_gt(s.buffered, 0);
    ck_assert_uint_le(s.max_buffered, VSOCK_BUF_ALLOC);
    ck_assert(e.ww[p->dev]); /* waiting for the host to take it */
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 7, 9), chunk, 1);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ck_assert_uint_eq(vs_stats(&e).buffered, 0);
    vs_rx_post(&e, 1, RXBUF);
    vs_expect(&e, VSOCK_OP_RST, 9, 7);
    /* What the host did get is a prefix of what was sent, then EOF. */
    static uint8_t got[VSOCK_BUF_ALLOC];
    size_t n = vs_host_read(p->host, got, sizeof(got));
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(got[i], chunk[i % sizeof(chunk)]);
    ck_assert(vs_host_eof(p->host));
    vs_free(&e);
}
END_TEST

/* The host drains a backlog: bytes arrive in order and the guest hears
 * the freed credit. */
START_TEST(backlog_flush_and_credit_update)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 1, RXBUF);
    struct pair *p = vs_open_conn(&e, 7, 9);
    static uint8_t data[200000], got[200000];
    for (unsigned i = 0; i < sizeof(data); i++)
        data[i] = vs_pat(i);
    for (uint32_t off = 0; off < sizeof(data); off += 50000)
        vs_tx(&e, vs_gh(VSOCK_OP_RW, 7, 9), data + off, 50000);
    ck_assert_uint_gt(vs_stats(&e).buffered, 100000);
    vs_rx_post(&e, 8, RXBUF);
    size_t n = 0;
    for (int round = 0; round < 1000 && n < sizeof(data); round++) {
        n += vs_host_read(p->host, got + n, sizeof(got) - n);
        vs_fd_event(&e, p->dev, EPOLLOUT);
    }
    ck_assert_uint_eq(n, sizeof(data));
    ck_assert_mem_eq(got, data, sizeof(data));
    ck_assert_uint_eq(vs_stats(&e).buffered, 0);
    ck_assert(!e.ww[p->dev]);
    struct vsock_hdr h = vs_expect(&e, VSOCK_OP_CREDIT_UPDATE, 9, 7);
    ck_assert_uint_gt(h.fwd_cnt, 0);
    vs_free(&e);
}
END_TEST

START_TEST(connect_port_failure_gets_rst)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 4, RXBUF);
    e.connect_rc = -ECONNREFUSED;
    vs_tx(&e, vs_gh(VSOCK_OP_REQUEST, 1111, 2222), NULL, 0);
    ck_assert_uint_eq(e.nconnect, 1);
    vs_expect(&e, VSOCK_OP_RST, 2222, 1111);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    vs_free(&e);
}
END_TEST

START_TEST(host_initiated_connection)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv[0], 5000), 0);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(h.dst_port, 5000);
    ck_assert_uint_ge(h.src_port, VSOCK_EPHEMERAL);
    uint32_t hp = h.src_port;
    char line[32];
    ck_assert_uint_eq(vs_host_read(sv[1], line, sizeof(line)), 0); /* nothing before RESPONSE */
    /* Data before the RESPONSE is a violation of the handshake. */
    vs_tx(&e, vs_gh(VSOCK_OP_RESPONSE, 5000, hp), NULL, 0);
    char want[32];
    snprintf(want, sizeof(want), "OK %u\n", hp);
    size_t n = vs_host_read(sv[1], line, sizeof(line));
    ck_assert_uint_eq(n, strlen(want));
    ck_assert_mem_eq(line, want, n);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 5000, hp), "ping", 4);
    ck_assert_uint_eq(vs_host_read(sv[1], line, sizeof(line)), 4);
    ck_assert_mem_eq(line, "ping", 4);
    ck_assert_int_eq(send(sv[1], "pong", 4, 0), 4);
    vs_fd_event(&e, sv[0], EPOLLIN);
    char back[8];
    ck_assert(vs_rx_next(&e, &h, back, sizeof(back)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 4);
    ck_assert_mem_eq(back, "pong", 4);
    /* A second connection the guest refuses: the client sees EOF. */
    int sv2[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv2), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv2[0], 6000), 0);
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_ne(h.src_port, hp);
    vs_tx(&e, vs_gh(VSOCK_OP_RST, 6000, h.src_port), NULL, 0);
    ck_assert(vs_host_eof(sv2[1]));
    vs_expect_none(&e); /* never an RST for an RST */
    /* RW on a connection still waiting for RESPONSE resets it. */
    int sv3[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv3), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv3[0], 6001), 0);
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 6001, h.src_port), "x", 1);
    vs_expect(&e, VSOCK_OP_RST, h.src_port, 6001);
    ck_assert(vs_host_eof(sv3[1]));
    ck_assert_uint_eq(vs_stats(&e).conns, 1);
    close(sv[1]);
    close(sv2[1]);
    close(sv3[1]);
    vs_free(&e);
}
END_TEST

START_TEST(connect_guest_needs_a_running_driver)
{
    struct vs_env e;
    vs_init(&e);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    mmio_wr(&e.t, MMIO_STATUS, 0); /* driver reset */
    ck_assert_int_eq(vs_connect_guest(&e, sv[0], 1), -ENOTCONN);
    close(sv[0]);
    close(sv[1]);
    vs_free(&e);
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
    vsock_flow_tests(tc);
    vsock_hostile_tests(tc);
    vsock_host_tests(tc);
    vsock_attach_tests(tc);
    suite_add_tcase(s, tc);
    return s;
}

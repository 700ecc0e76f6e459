/* virtio-vsock streams (vsock_env.h): shutdown either way and close
 * (§5.10.6.5), host hang-ups, rx chains of several buffers, long transfers
 * both ways under credit (§5.10.6.3), fairness between connections, and
 * the host-side backlog ring. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/vsock_env.h"

START_TEST(shutdown_both_directions)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 16, RXBUF);
    struct pair *p = vs_open_conn(&e, 33, 44);
    /* guest: no more sending.  The host reads the data, then EOF, and can
     * still send. */
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 33, 44), "last", 4);
    struct vsock_hdr h = vs_gh(VSOCK_OP_SHUTDOWN, 33, 44);
    h.flags = VSOCK_SHUTDOWN_SEND;
    vs_tx(&e, h, NULL, 0);
    char buf[16];
    ck_assert_uint_eq(vs_host_read(p->host, buf, sizeof(buf)), 4);
    ck_assert(vs_host_eof(p->host));
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 33, 44), "more", 4); /* after its own SHUTDOWN */
    vs_expect(&e, VSOCK_OP_RST, 44, 33);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);

    /* host: half-close -> SHUTDOWN(SEND); the guest may still send, and
     * its own SHUTDOWN then ends the connection with RST. */
    p = vs_open_conn(&e, 34, 44);
    ck_assert_int_eq(send(p->host, "bye", 3, 0), 3);
    shutdown(p->host, SHUT_WR);
    vs_fd_event(&e, p->dev, EPOLLIN);
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_mem_eq(buf, "bye", 3);
    h = vs_expect(&e, VSOCK_OP_SHUTDOWN, 44, 34);
    ck_assert_uint_eq(h.flags, VSOCK_SHUTDOWN_SEND);
    ck_assert(!e.wr[p->dev]);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 34, 44), "ok", 2);
    ck_assert_uint_eq(vs_host_read(p->host, buf, sizeof(buf)), 2);
    h = vs_gh(VSOCK_OP_SHUTDOWN, 34, 44);
    h.flags = VSOCK_SHUTDOWN_SEND;
    vs_tx(&e, h, NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 44, 34);
    ck_assert(vs_host_eof(p->host));

    /* guest close(): SHUTDOWN with both flags, answered by RST (§5.10.6.5). */
    p = vs_open_conn(&e, 35, 44);
    h = vs_gh(VSOCK_OP_SHUTDOWN, 35, 44);
    h.flags = VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV;
    vs_tx(&e, h, NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 44, 35);
    ck_assert(vs_host_eof(p->host));
    /* guest RCV only: the device stops reading the host. */
    p = vs_open_conn(&e, 36, 44);
    h = vs_gh(VSOCK_OP_SHUTDOWN, 36, 44);
    h.flags = VSOCK_SHUTDOWN_RCV;
    vs_tx(&e, h, NULL, 0);
    ck_assert(!e.wr[p->dev]);
    ck_assert_int_eq(send(p->host, "zzz", 3, 0), 3);
    vs_fd_event(&e, p->dev, EPOLLIN);
    vs_expect_none(&e);
    /* guest RST closes the host side. */
    vs_tx(&e, vs_gh(VSOCK_OP_RST, 36, 44), NULL, 0);
    ck_assert(vs_host_eof(p->host));
    vs_expect_none(&e);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    vs_free(&e);
}
END_TEST

/* The host client goes away with guest bytes still buffered: the flush
 * fails and the guest hears RST.  With nothing buffered, its hang-up is
 * an EOF: SHUTDOWN. */
START_TEST(host_hangup)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    struct pair *p = vs_open_conn(&e, 1, 2);
    static uint8_t chunk[VSOCK_MAX_PKT];
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 1, 2), chunk, sizeof(chunk));
    ck_assert_uint_gt(vs_stats(&e).buffered, 0);
    /* The host took part of it: credit for that, as the guest's own
     * 64 KiB window (GUEST_BUF) is now more than half in flight. */
    vs_expect(&e, VSOCK_OP_CREDIT_UPDATE, 2, 1);
    close(p->host);
    p->host = -1;
    vs_fd_event(&e, p->dev, EPOLLOUT | EPOLLHUP);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    p = vs_open_conn(&e, 3, 2);
    shutdown(p->host, SHUT_RDWR);
    vs_fd_event(&e, p->dev, EPOLLIN | EPOLLHUP);
    struct vsock_hdr h = vs_expect(&e, VSOCK_OP_SHUTDOWN, 2, 3);
    ck_assert_uint_eq(h.flags, VSOCK_SHUTDOWN_SEND);
    ck_assert_uint_eq(vs_stats(&e).conns, 1);
    vs_free(&e);
}
END_TEST

/* An rx chain of two writable buffers: header in one, data in the other. */
START_TEST(rx_chain_of_two_buffers)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 1, RXBUF);
    struct pair *p = vs_open_conn(&e, 1, 2);
    uint64_t hb = ring_alloc(&e.r[1], VSOCK_HDR_BYTES), db = ring_alloc(&e.r[1], 100);
    struct ring_buf b[2] = {{hb, VSOCK_HDR_BYTES, true}, {db, 100, true}};
    ring_publish(&e.r[0], ring_chain(&e.r[0], b, 2));
    virtio_mmio_process(&e.t, VSOCK_RX_QUEUE);
    uint8_t in[150];
    for (unsigned i = 0; i < sizeof(in); i++)
        in[i] = vs_pat(i);
    ck_assert_int_eq(send(p->host, in, sizeof(in), 0), (ssize_t)sizeof(in));
    vs_fd_event(&e, p->dev, EPOLLIN);
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
    vs_free(&e);
}
END_TEST

/* A guest that behaves like Linux (sends within credit, consumes what
 * arrives and reports it with CREDIT_UPDATE) and a host client that reads
 * and writes as it can: 1 MiB each way at once, byte-exact. */
START_TEST(stream_both_ways_with_credit)
{
    enum { TOTAL = 1 << 20, GBUF = 64 << 10 };
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 64, RXBUF);
    struct pair *p = vs_open_conn(&e, 77, 88);
    uint8_t *g2h = malloc(TOTAL), *h2g = malloc(TOTAL), *host_got = malloc(TOTAL),
            *guest_got = malloc(TOTAL);
    for (uint32_t i = 0; i < TOTAL; i++) {
        g2h[i] = vs_pat(i);
        h2g[i] = vs_pat(i * 7 + 3);
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
            struct vsock_hdr h = vs_gh(VSOCK_OP_RW, 77, 88);
            h.buf_alloc = GBUF;
            h.fwd_cnt = g_reported;
            h.len = n;
            vs_tx_cut(&e, &h, g2h + g_sent, n, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
            g_sent += n;
        }
        /* The host client reads and writes what its socket allows. */
        h_got += (uint32_t)vs_host_read(p->host, host_got + h_got, TOTAL - h_got);
        if (h_sent < TOTAL) {
            ssize_t w = send(p->host, h2g + h_sent, TOTAL - h_sent, MSG_DONTWAIT);
            if (w > 0)
                h_sent += (uint32_t)w;
        }
        vs_fd_event(&e, p->dev, EPOLLIN | EPOLLOUT);
        /* The guest takes what arrived and gives the buffers back. */
        struct vsock_hdr h;
        unsigned used = 0;
        while (vs_rx_next(&e, &h, guest_got + g_got, TOTAL - g_got)) {
            used++;
            ck_assert_uint_eq(h.src_port, 88);
            ck_assert(h.op == VSOCK_OP_RW || h.op == VSOCK_OP_CREDIT_UPDATE);
            g_got += h.len;
            ck_assert_uint_le(g_got - g_reported, GBUF); /* the device kept to our credit */
            peer_alloc = h.buf_alloc;
            peer_fwd = h.fwd_cnt;
        }
        if (used)
            vs_rx_post(&e, used, RXBUF);
        if (g_got != g_reported) {
            struct vsock_hdr cu = vs_gh(VSOCK_OP_CREDIT_UPDATE, 77, 88);
            cu.buf_alloc = GBUF;
            cu.fwd_cnt = g_reported = g_got;
            vs_tx(&e, cu, NULL, 0);
        }
    }
    ck_assert_uint_eq(h_got, TOTAL);
    ck_assert_uint_eq(g_got, TOTAL);
    ck_assert(memcmp(host_got, g2h, TOTAL) == 0);
    ck_assert(memcmp(guest_got, h2g, TOTAL) == 0);
    ck_assert_uint_eq(vs_stats(&e).conns, 1);
    ck_assert(!vs_needs_reset(&e));
    free(g2h);
    free(h2g);
    free(host_got);
    free(guest_got);
    vs_free(&e);
}
END_TEST

/* Connections are served in turn: with data waiting on all of them, each
 * gets a read (one recvmsg filling up to VSOCK_RX_BATCH rx buffers) before
 * any gets a second, and a connection whose turn came when rx buffers had
 * run out keeps it. */
START_TEST(connections_take_turns)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 4, RXBUF); /* just the RESPONSEs */
    for (uint32_t i = 0; i < 4; i++)
        vs_open_conn(&e, 10 + i, 20);
    static uint8_t lots[16 * 4096];
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_int_eq(send(e.pairs[i].host, lots, sizeof(lots), 0), (ssize_t)sizeof(lots));
        vs_fd_event(&e, e.pairs[i].dev, EPOLLIN);
    }
    vs_expect_none(&e);
    ck_assert(!e.wr[e.pairs[0].dev]); /* starved of rx buffers: not watching */
    /* 8 buffers at a time: each read fills them all, one connection's. */
    for (unsigned turn = 0; turn < 5; turn++) {
        vs_rx_post(&e, 8, RXBUF);
        struct vsock_hdr h;
        for (unsigned k = 0; k < 8; k++) {
            ck_assert(vs_rx_next(&e, &h, NULL, 0));
            ck_assert_uint_eq(h.op, VSOCK_OP_RW);
            ck_assert_uint_eq(h.len, 4096);
            ck_assert_uint_eq(h.dst_port, 10 + turn % 4);
        }
        vs_expect_none(&e);
    }
    vs_free(&e);
}
END_TEST

/* The backlog ring grows as the host lags and wraps as it catches up;
 * bytes stay in order through both, whatever the sizes. */
START_TEST(backlog_wraps_and_grows)
{
    enum { TOTAL = 600000 };
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 64, RXBUF);
    struct pair *p = vs_open_conn(&e, 7, 9);
    uint8_t *data = malloc(TOTAL), *got = malloc(TOTAL);
    for (uint32_t i = 0; i < TOTAL; i++)
        data[i] = vs_pat(i * 13);
    uint32_t sent = 0, n = 0, peer_fwd = 0, sizes[] = {1, 3000, 20000, 777, 65536, 5000};
    struct vsock_hdr h;
    for (unsigned round = 0; round < 10000 && n < TOTAL; round++) {
        uint32_t credit = VSOCK_BUF_ALLOC - (sent - peer_fwd);
        uint32_t len = sizes[round % 6];
        if (len > TOTAL - sent)
            len = TOTAL - sent;
        if (len && len <= credit) {
            vs_tx(&e, vs_gh(VSOCK_OP_RW, 7, 9), data + sent, len);
            sent += len;
        }
        ck_assert_uint_le(vs_stats(&e).max_buffered, VSOCK_BUF_ALLOC);
        /* The host takes a little at a time. */
        n += (uint32_t)vs_host_read(p->host, got + n, round % 3 ? 2000 : 9000);
        vs_fd_event(&e, p->dev, EPOLLOUT);
        while (vs_rx_next(&e, &h, NULL, 0)) {
            ck_assert_uint_eq(h.op, VSOCK_OP_CREDIT_UPDATE);
            peer_fwd = h.fwd_cnt;
            vs_rx_post(&e, 1, RXBUF);
        }
    }
    ck_assert_uint_eq(n, TOTAL);
    ck_assert(memcmp(got, data, TOTAL) == 0);
    ck_assert_uint_eq(vs_stats(&e).buffered, 0);
    free(data);
    free(got);
    vs_free(&e);
}
END_TEST

/* The monitor's loop only delivers what the device asked to watch
 * (level-triggered): a bulk guest -> host stream with a host that reads
 * in fits and starts must never stall -- every byte the host takes out
 * comes back to the guest as credit, without any event the device did
 * not ask for.  A Linux-like guest sends min(credit, 64 KiB) packets, and
 * (as Debian's 6.1 does, virtio_transport_tx_buf_size) counts its credit
 * against min(our buf_alloc, its own), its own being GUEST_BUF here: the
 * device must send credit before the guest's smaller window runs dry. */
START_TEST(guest_to_host_bulk_never_stalls)
{
    enum { TOTAL = 8 << 20, PKT = 64 << 10 };
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 64, RXBUF);
    struct pair *p = vs_open_conn(&e, 5, 6);
    uint8_t *data = malloc(TOTAL), *got = malloc(TOTAL);
    for (uint32_t i = 0; i < TOTAL; i++)
        data[i] = vs_pat(i * 5 + 1);
    uint32_t sent = 0, n = 0, peer_fwd = 0, peer_alloc = VSOCK_BUF_ALLOC;
    unsigned idle = 0, x = 12345;
    struct vsock_hdr h;
    while (n < TOTAL) {
        uint32_t before = n + sent + peer_fwd;
        uint32_t window = peer_alloc < GUEST_BUF ? peer_alloc : GUEST_BUF;
        uint32_t credit = window - (sent - peer_fwd), len = TOTAL - sent;
        if (len > PKT)
            len = PKT;
        if (len > credit)
            len = credit;
        if (len) {
            vs_tx(&e, vs_gh(VSOCK_OP_RW, 5, 6), data + sent, len);
            sent += len;
        }
        /* The host: mostly big reads, sometimes a small one or none. */
        x = x * 1103515245u + 12345u;
        size_t want = (x >> 16) % 4 == 0 ? 0 : (x >> 16) % 4 == 1 ? 1000 : 300000;
        n += (uint32_t)vs_host_read(p->host, got + n, want < TOTAL - n ? want : TOTAL - n);
        /* The loop: an event only for what is watched and ready. */
        struct pollfd pf = {.fd = p->dev, .events = (short)((e.wr[p->dev] ? POLLIN : 0) |
                                                             (e.ww[p->dev] ? POLLOUT : 0))};
        if (pf.events && poll(&pf, 1, 0) == 1)
            vs_fd_event(&e, p->dev, (pf.revents & POLLIN ? EPOLLIN : 0) |
                                        (pf.revents & POLLOUT ? EPOLLOUT : 0) |
                                        (pf.revents & POLLHUP ? EPOLLHUP : 0));
        unsigned used = 0;
        while (vs_rx_next(&e, &h, NULL, 0)) {
            used++;
            ck_assert_uint_eq(h.op, VSOCK_OP_CREDIT_UPDATE);
            peer_fwd = h.fwd_cnt;
            peer_alloc = h.buf_alloc;
        }
        if (used)
            vs_rx_post(&e, used, RXBUF);
        idle = n + sent + peer_fwd == before ? idle + 1 : 0;
        if (idle > 64)
            ck_abort_msg("stalled: guest sent %u, host read %u, guest's credit %u (fwd %u), "
                         "device buffers %u, watching r=%d w=%d",
                         sent, n, window - (sent - peer_fwd), peer_fwd,
                         (unsigned)vs_stats(&e).buffered, e.wr[p->dev], e.ww[p->dev]);
    }
    ck_assert(memcmp(got, data, TOTAL) == 0);
    free(data);
    free(got);
    vs_free(&e);
}
END_TEST

void vsock_flow_tests(TCase *tc)
{
    tcase_add_test(tc, shutdown_both_directions);
    tcase_add_test(tc, host_hangup);
    tcase_add_test(tc, rx_chain_of_two_buffers);
    tcase_add_test(tc, stream_both_ways_with_credit);
    tcase_add_test(tc, connections_take_turns);
    tcase_add_test(tc, backlog_wraps_and_grows);
    tcase_add_test(tc, guest_to_host_bulk_never_stalls);
}

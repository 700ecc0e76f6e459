/* virtio-vsock against a hostile driver (vsock_env.h): the connection
 * cap, lying or malformed headers, absurd credit values, rx buffers too
 * small, unbounded RSTs, TRANSPORT_RESET (§5.10.6.7) and driver reset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/vsock_env.h"

START_TEST(many_connections_and_the_cap)
{
    struct vs_env e;
    vs_init(&e);
    for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++) {
        if (i % 128 == 0)
            vs_rx_post(&e, 128, 64);
        vs_open_conn(&e, 10000 + i, 80 + i % 3);
    }
    ck_assert_uint_eq(vs_stats(&e).conns, VSOCK_MAX_CONNS);
    ck_assert_uint_eq(e.ncap, 0);
    vs_rx_post(&e, 16, 64);
    vs_tx(&e, vs_gh(VSOCK_OP_REQUEST, 9999, 80), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 80, 9999);
    ck_assert_uint_eq(e.nconnect, VSOCK_MAX_CONNS); /* the monitor was not asked */
    /* ... but told the cap refused one, so it can report the limit */
    ck_assert_uint_eq(e.ncap, 1);
    ck_assert_uint_eq(e.cap_max, VSOCK_MAX_CONNS);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv[0], 1), -EBUSY);
    ck_assert_uint_eq(e.ncap, 1); /* the caller has -EBUSY and reports it itself */
    close(sv[0]);
    close(sv[1]);
    /* Each connection is its own: data on one goes to its fd only. */
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 10000 + 200, 80 + 200 % 3), "x", 1);
    char c;
    for (unsigned i = 0; i < VSOCK_MAX_CONNS; i++)
        ck_assert_uint_eq(vs_host_read(e.pairs[i].host, &c, 1), i == 200);
    /* One closes, another may open. */
    vs_tx(&e, vs_gh(VSOCK_OP_RST, 10000 + 5, 80 + 5 % 3), NULL, 0);
    ck_assert(vs_host_eof(e.pairs[5].host));
    vs_open_conn(&e, 9999, 80);
    /* A REQUEST for a live connection resets it. */
    vs_tx(&e, vs_gh(VSOCK_OP_REQUEST, 9999, 80), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 80, 9999);
    ck_assert_uint_eq(vs_stats(&e).conns, VSOCK_MAX_CONNS - 1);
    vs_free(&e);
}
END_TEST

/* Header fields and framing a hostile guest controls. */
START_TEST(hostile_headers)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 64, RXBUF);
    struct pair *p = vs_open_conn(&e, 1, 2);
    uint8_t pkt[VSOCK_HDR_BYTES + 16] = {0};
    struct vsock_hdr h;

    /* Shorter than a header (whole chain, or readable part): dropped. */
    h = vs_gh(VSOCK_OP_RW, 1, 2);
    vsock_hdr_encode(&h, pkt);
    vs_tx_raw(&e, pkt, VSOCK_HDR_BYTES - 1, NULL, 0);
    vs_tx_raw(&e, pkt, 20, (uint32_t[]){10}, 1);
    vs_expect_none(&e);
    ck_assert_uint_eq(vs_stats(&e).conns, 1);

    /* Spoofed source CID: dropped without a word. */
    h = vs_gh(VSOCK_OP_RW, 1, 2);
    h.src_cid = GUEST_CID + 1;
    vs_tx(&e, h, "a", 1);
    h.src_cid = GUEST_CID | (1ULL << 32);
    vs_tx(&e, h, "a", 1);
    vs_expect_none(&e);
    ck_assert_uint_eq(vs_stats(&e).conns, 1);

    /* Another destination CID: RST as from that CID. */
    h = vs_gh(VSOCK_OP_REQUEST, 3, 4);
    h.dst_cid = 7;
    vs_tx(&e, h, NULL, 0);
    h = vs_expect(&e, VSOCK_OP_RST, 4, 3);
    ck_assert_uint_eq(h.src_cid, 7);
    ck_assert_uint_eq(e.nconnect, 1);

    /* len larger / smaller than the bytes after the header: the
     * connection is reset. */
    h = vs_gh(VSOCK_OP_RW, 1, 2);
    h.len = 17;
    vs_tx_cut(&e, &h, pkt, 16, NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert(vs_host_eof(p->host));
    ck_assert_uint_eq(vs_host_read(p->host, pkt, 1), 0); /* nothing leaked through */
    p = vs_open_conn(&e, 1, 2);
    h.len = 15;
    vs_tx_cut(&e, &h, pkt, 16, (uint32_t[]){VSOCK_HDR_BYTES}, 1);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    h.len = 0xffffffff;
    vs_tx_cut(&e, &h, pkt, 16, NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    /* A payload on anything but RW. */
    h = vs_gh(VSOCK_OP_REQUEST, 1, 2);
    vs_tx(&e, h, "abc", 3);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(e.nconnect, 2);

    /* Wrong type, unknown op (on a connection and off one), RW and
     * CREDIT_UPDATE on no connection: RST.  RST on none: silence. */
    p = vs_open_conn(&e, 1, 2);
    h = vs_gh(VSOCK_OP_RW, 1, 2);
    h.type = 2; /* SEQPACKET, not offered */
    vs_tx(&e, h, "a", 1);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert(vs_host_eof(p->host));
    p = vs_open_conn(&e, 1, 2);
    vs_tx(&e, vs_gh(99, 1, 2), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    vs_tx(&e, vs_gh(VSOCK_OP_INVALID, 5, 6), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 6, 5);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 5, 6), "a", 1);
    vs_expect(&e, VSOCK_OP_RST, 6, 5);
    vs_tx(&e, vs_gh(VSOCK_OP_CREDIT_UPDATE, 5, 6), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 6, 5);
    vs_tx(&e, vs_gh(VSOCK_OP_RESPONSE, 5, 6), NULL, 0); /* unsolicited */
    vs_expect(&e, VSOCK_OP_RST, 6, 5);
    vs_tx(&e, vs_gh(VSOCK_OP_RST, 5, 6), NULL, 0);
    vs_expect_none(&e);
    /* RESPONSE on a connection the guest opened: reset. */
    p = vs_open_conn(&e, 1, 2);
    vs_tx(&e, vs_gh(VSOCK_OP_RESPONSE, 1, 2), NULL, 0);
    vs_expect(&e, VSOCK_OP_RST, 2, 1);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ck_assert(!vs_needs_reset(&e));
    vs_free(&e);
}
END_TEST

START_TEST(hostile_credit_values)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    /* buf_alloc at its largest: packets are still bounded by the rx
     * buffers. */
    struct vsock_hdr h = vs_gh(VSOCK_OP_REQUEST, 1, 2);
    h.buf_alloc = 0xffffffff;
    vs_tx(&e, h, NULL, 0);
    struct pair *p = &e.pairs[0];
    vs_expect(&e, VSOCK_OP_RESPONSE, 2, 1);
    static uint8_t big[20000];
    ck_assert_int_eq(send(p->host, big, 8000, 0), 8000);
    vs_fd_event(&e, p->dev, EPOLLIN);
    uint32_t total = 0;
    while (vs_rx_next(&e, &h, NULL, 0)) {
        ck_assert_uint_le(h.len, RXBUF - VSOCK_HDR_BYTES);
        total += h.len;
    }
    ck_assert_uint_eq(total, 8000);
    /* fwd_cnt running backwards (or past what was sent): no credit, not
     * a huge one. */
    h = vs_gh(VSOCK_OP_CREDIT_UPDATE, 1, 2);
    h.buf_alloc = 5000;
    h.fwd_cnt = 0; /* 8000 in flight > buf_alloc */
    vs_tx(&e, h, NULL, 0);
    ck_assert(!e.wr[p->dev]);
    vs_rx_post(&e, 8, RXBUF);
    ck_assert_int_eq(send(p->host, big, 100, 0), 100);
    vs_fd_event(&e, p->dev, EPOLLIN);
    vs_expect_none(&e);
    h.fwd_cnt = 9000; /* past the 8000 sent */
    vs_tx(&e, h, NULL, 0);
    vs_fd_event(&e, p->dev, EPOLLIN);
    vs_expect_none(&e);
    h.fwd_cnt = 8000;
    h.buf_alloc = 0;
    vs_tx(&e, h, NULL, 0);
    vs_fd_event(&e, p->dev, EPOLLIN);
    vs_expect_none(&e);
    h.buf_alloc = 50;
    vs_tx(&e, h, NULL, 0);
    vs_fd_event(&e, p->dev, EPOLLIN);
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.len, 50);
    ck_assert(!vs_needs_reset(&e));
    vs_free(&e);
}
END_TEST

START_TEST(rx_buffers_too_small)
{
    struct vs_env e;
    vs_init(&e);
    /* Too small for a header: given back empty.  A header-only buffer
     * carries control packets but no data. */
    static const uint32_t lens[] = {0, 1, 2, VSOCK_HDR_BYTES - 1, VSOCK_HDR_BYTES,
                                    VSOCK_HDR_BYTES};
    for (unsigned i = 0; i < 6; i++)
        ring_publish(&e.r[0], ring_add_desc(&e.r[0], ring_alloc(&e.r[1], 64), lens[i], true));
    virtio_mmio_process(&e.t, VSOCK_RX_QUEUE);
    vs_tx(&e, vs_gh(VSOCK_OP_REQUEST, 1, 2), NULL, 0);
    struct vsock_hdr h;
    for (unsigned i = 0; i < 4; i++) {
        ck_assert(vs_rx_next(&e, &h, NULL, 0));
        ck_assert_uint_eq(h.op, VSOCK_OP_INVALID); /* used length 0 */
    }
    vs_expect(&e, VSOCK_OP_RESPONSE, 2, 1);
    struct pair *p = &e.pairs[0];
    ck_assert_int_eq(send(p->host, "data", 4, 0), 4);
    vs_fd_event(&e, p->dev, EPOLLIN);
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_INVALID); /* header-only: no room for data */
    vs_expect_none(&e);
    /* Out of rx buffers: read watches stop until the driver adds some. */
    ck_assert(!e.wr[p->dev]);
    char buf[8];
    vs_rx_post(&e, 1, RXBUF);
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_mem_eq(buf, "data", 4);
    ck_assert(!vs_needs_reset(&e));
    vs_free(&e);
}
END_TEST

/* One host read fills several rx chains at once; a chain cut into 1-byte
 * buffers (header too) still gets its bytes in order, and the next chain
 * carries on where it stopped. */
START_TEST(rx_batch_over_fragmented_chains)
{
    enum { FRAG = VSOCK_HDR_BYTES + 100 };
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 1, RXBUF); /* for the RESPONSE */
    struct pair *p = vs_open_conn(&e, 1, 2);
    struct ring_buf b[FRAG];
    for (unsigned i = 0; i < FRAG; i++)
        b[i] = (struct ring_buf){ring_alloc(&e.r[1], 1), 1, true};
    ring_publish(&e.r[0], ring_chain(&e.r[0], b, FRAG));
    vs_rx_post(&e, 1, RXBUF);
    uint8_t out[300], got[300];
    for (unsigned i = 0; i < sizeof(out); i++)
        out[i] = vs_pat(i);
    ck_assert_int_eq(send(p->host, out, sizeof(out), 0), (ssize_t)sizeof(out));
    vs_fd_event(&e, p->dev, EPOLLIN);
    struct ring_used u = ring_used_elem(&e.r[0], e.rx_seen++);
    ck_assert_uint_eq(u.len, FRAG);
    for (unsigned i = 0; i < 100; i++)
        ring_read(&e.r[0], b[VSOCK_HDR_BYTES + i].gpa, &got[i], 1);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, got + 100, 200));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 200);
    ck_assert_mem_eq(got, out, sizeof(out));
    vs_expect_none(&e);
    ck_assert(!vs_needs_reset(&e));
    vs_free(&e);
}
END_TEST

/* RSTs the guest provokes while it offers no rx buffers wait in a bounded
 * queue; past it they are dropped and counted. */
START_TEST(rst_queue_is_bounded)
{
    struct vs_env e;
    vs_init(&e);
    for (unsigned i = 0; i < VSOCK_RST_QUEUE + 6; i++)
        vs_tx(&e, vs_gh(VSOCK_OP_RW, 100 + i, 7), "a", 1);
    ck_assert_uint_eq(vs_stats(&e).rst_dropped, 6);
    vs_rx_post(&e, 128, 64);
    for (unsigned i = 0; i < VSOCK_RST_QUEUE; i++)
        vs_expect(&e, VSOCK_OP_RST, 7, 100 + i);
    vs_expect_none(&e);
    vs_free(&e);
}
END_TEST

START_TEST(transport_reset_event)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    struct pair *a = vs_open_conn(&e, 1, 2), *b = vs_open_conn(&e, 3, 4);
    /* No event buffer yet: the event waits for one; the sockets go now. */
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ck_assert(vs_host_eof(a->host));
    ck_assert(vs_host_eof(b->host));
    vs_expect_none(&e); /* no RSTs: the event resets every socket */
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
    vs_open_conn(&e, 1, 2);
    vs_free(&e);
}
END_TEST

/* After a TRANSPORT_RESET, a host-initiated connection's REQUEST waits
 * until the driver has handled it (given an event buffer back): Linux
 * resets its sockets in that handler, and would reset a connection made
 * before.  The connection is taken, not refused: its client waits. */
START_TEST(host_connect_waits_for_reset_handled)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ring_alloc(&e.r[1], 4), 4, true));
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    ck_assert_uint_eq(ring_used_idx(&e.r[2]), 1); /* delivered */
    int sv[2], sv2[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv[0], 5000), 0);
    ck_assert_uint_eq(vs_stats(&e).conns, 1);
    vs_expect_none(&e);
    /* a notify with no new buffer is not the driver's answer yet... */
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    ck_assert_int_eq(vs_connect_guest(&e, sv2[0], 5001), 0);
    vs_expect_none(&e);
    /* ...the buffer given back is: both REQUESTs go, in their order */
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ring_alloc(&e.r[1], 4), 4, true));
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(h.dst_port, 5000);
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(h.dst_port, 5001);
    vs_expect_none(&e);
    /* a new reset drops the held ones too, and none is sent after */
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    int sv3[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv3), 0);
    ck_assert_int_eq(vs_connect_guest(&e, sv3[0], 5002), 0);
    pthread_mutex_lock(&e.t.lock);
    virtio_vsock_transport_reset(e.v, &e.t);
    pthread_mutex_unlock(&e.t.lock);
    ck_assert(vs_host_eof(sv3[1]));
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ring_publish(&e.r[2], ring_add_desc(&e.r[2], ring_alloc(&e.r[1], 4), 4, true));
    virtio_mmio_process(&e.t, VSOCK_EVT_QUEUE);
    vs_expect_none(&e);
    close(sv[1]);
    close(sv2[1]);
    close(sv3[1]);
    vs_free(&e);
}
END_TEST

START_TEST(driver_reset_closes_everything)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    struct pair *a = vs_open_conn(&e, 1, 2);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 9, 9), NULL, 0); /* an RST left owed */
    mmio_wr(&e.t, MMIO_STATUS, 0);
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ck_assert(vs_host_eof(a->host));
    ck_assert(!e.wr[a->dev] && !e.ww[a->dev]);
    /* Events for a closed fd are ignored. */
    vs_fd_event(&e, a->dev, EPOLLIN | EPOLLOUT | EPOLLHUP);
    vs_free(&e);
}
END_TEST

void vsock_hostile_tests(TCase *tc)
{
    tcase_add_test(tc, many_connections_and_the_cap);
    tcase_add_test(tc, hostile_headers);
    tcase_add_test(tc, hostile_credit_values);
    tcase_add_test(tc, rx_batch_over_fragmented_chains);
    tcase_add_test(tc, rx_buffers_too_small);
    tcase_add_test(tc, rst_queue_is_bounded);
    tcase_add_test(tc, transport_reset_event);
    tcase_add_test(tc, host_connect_waits_for_reset_handled);
    tcase_add_test(tc, driver_reset_closes_everything);
}

/* Attached host fds (virtio_vsock_attach_guest, devices/virtio/vsock.h):
 * the inbound forward's way, where the client's own socket is the
 * connection's host fd.  The preamble goes to the guest before any byte of
 * the fd's; the guest's first reply_len bytes go to `answer`, never to the
 * fd, however the guest cuts them; `ended` comes exactly once, with the
 * bytes each way and how, before the fd is closed. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/vsock_env.h"

struct att_rec {
    unsigned answers, ends;
    uint8_t reply[VSOCK_REPLY_MAX];
    int answer_rc;
    enum vsock_end how;
    uint64_t in, out;
    int fd;          /* the device's fd: still open when ended runs */
    bool fd_open;
    _Atomic uint64_t moved;
};

static int rec_answer(void *opaque, const uint8_t *reply)
{
    struct att_rec *r = opaque;
    r->answers++;
    memcpy(r->reply, reply, 4);
    return r->answer_rc;
}

static void rec_ended(void *opaque, enum vsock_end how, uint64_t in, uint64_t out)
{
    struct att_rec *r = opaque;
    r->ends++;
    r->how = how;
    r->in = in;
    r->out = out;
    r->fd_open = fcntl(r->fd, F_GETFD) >= 0;
}

static int attach(struct vs_env *e, int fd, uint32_t port, struct att_rec *r, uint64_t tag)
{
    struct vsock_attach a = {.pre = "HELLO!!!", .pre_len = 8, .reply_len = 4, .tag = tag,
                             .answer = rec_answer, .ended = rec_ended, .opaque = r,
                             .moved = &r->moved};
    r->fd = fd;
    pthread_mutex_lock(&e->t.lock);
    int rc = virtio_vsock_attach_guest(e->v, &e->t, fd, port, &a);
    pthread_mutex_unlock(&e->t.lock);
    return rc;
}

static int end_attached(struct vs_env *e, uint64_t tag)
{
    pthread_mutex_lock(&e->t.lock);
    int rc = virtio_vsock_end_attached(e->v, &e->t, tag);
    pthread_mutex_unlock(&e->t.lock);
    return rc;
}

/* REQUEST, the guest's RESPONSE, then the preamble as the first RW. */
static uint32_t open_attached(struct vs_env *e, int fd, uint32_t port, struct att_rec *r,
                              uint64_t tag)
{
    ck_assert_int_eq(attach(e, fd, port, r, tag), 0);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(h.dst_port, port);
    uint32_t hp = h.src_port;
    vs_tx(e, vs_gh(VSOCK_OP_RESPONSE, port, hp), NULL, 0);
    char pre[16];
    ck_assert(vs_rx_next(e, &h, pre, sizeof(pre)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 8);
    ck_assert_mem_eq(pre, "HELLO!!!", 8);
    return hp;
}

START_TEST(attached_preamble_reply_and_stream)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 16, RXBUF);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct att_rec r = {0};
    /* The client wrote before the guest even answered: its bytes come
     * after the preamble, never before it. */
    ck_assert_int_eq(send(sv[1], "early", 5, 0), 5);
    ck_assert_int_eq(attach(&e, sv[0], 1025, &r, 7), 0);
    vs_fd_event(&e, sv[0], EPOLLIN);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    ck_assert_uint_eq(h.op, VSOCK_OP_REQUEST);
    uint32_t hp = h.src_port;
    vs_expect_none(&e); /* nothing before the RESPONSE */
    vs_tx(&e, vs_gh(VSOCK_OP_RESPONSE, 1025, hp), NULL, 0);
    char buf[64];
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 8);
    ck_assert_mem_eq(buf, "HELLO!!!", 8);
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 5);
    ck_assert_mem_eq(buf, "early", 5);
    /* No "OK" line on the fd, ever. */
    ck_assert_uint_eq(vs_host_read(sv[1], buf, sizeof(buf)), 0);
    /* The answer in two pieces, the second with the stream's first bytes. */
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 1025, hp), "\0", 1);
    ck_assert_uint_eq(r.answers, 0);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 1025, hp), "\0\0\0pong", 7);
    ck_assert_uint_eq(r.answers, 1);
    ck_assert_mem_eq(r.reply, "\0\0\0\0", 4);
    ck_assert_uint_eq(vs_host_read(sv[1], buf, sizeof(buf)), 4);
    ck_assert_mem_eq(buf, "pong", 4);
    ck_assert_uint_eq(atomic_load(&r.moved), 9); /* "early" and "pong" */
    /* Both sides close: ended once, CLOSED, the bytes without pre and reply. */
    shutdown(sv[1], SHUT_WR);
    vs_fd_event(&e, sv[0], EPOLLIN);
    vs_expect(&e, VSOCK_OP_SHUTDOWN, hp, 1025);
    ck_assert_uint_eq(r.ends, 0);
    struct vsock_hdr sh = vs_gh(VSOCK_OP_SHUTDOWN, 1025, hp);
    sh.flags = VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV;
    vs_tx(&e, sh, NULL, 0);
    ck_assert_uint_eq(r.ends, 1);
    ck_assert_int_eq(r.how, VSOCK_END_CLOSED);
    ck_assert_uint_eq(r.in, 5);
    ck_assert_uint_eq(r.out, 4);
    ck_assert(r.fd_open);
    ck_assert(vs_host_eof(sv[1]));
    ck_assert_uint_eq(vs_stats(&e).conns, 0);
    ck_assert_int_eq(end_attached(&e, 7), -ENOENT);
    close(sv[1]);
    vs_free(&e);
    ck_assert_uint_eq(r.ends, 1);
}
END_TEST

START_TEST(attached_refusals)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 32, RXBUF);
    /* The answer says no: RST to the guest, REFUSED, nothing on the fd. */
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct att_rec r = {.answer_rc = 111};
    uint32_t hp = open_attached(&e, sv[0], 1025, &r, 1);
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 1025, hp), "\x6f\0\0\0junk", 8);
    ck_assert_uint_eq(r.answers, 1);
    ck_assert_uint_eq(r.ends, 1);
    ck_assert_int_eq(r.how, VSOCK_END_REFUSED);
    vs_expect(&e, VSOCK_OP_RST, hp, 1025);
    char buf[16];
    ck_assert(vs_host_eof(sv[1]));
    ck_assert_uint_eq(vs_host_read(sv[1], buf, sizeof(buf)), 0);
    close(sv[1]);
    /* Nobody listens on the guest port: the REQUEST gets RST. */
    int sv2[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv2), 0);
    struct att_rec r2 = {0};
    ck_assert_int_eq(attach(&e, sv2[0], 1025, &r2, 2), 0);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    vs_tx(&e, vs_gh(VSOCK_OP_RST, 1025, h.src_port), NULL, 0);
    ck_assert_uint_eq(r2.ends, 1);
    ck_assert_int_eq(r2.how, VSOCK_END_NO_ANSWER);
    ck_assert(vs_host_eof(sv2[1]));
    close(sv2[1]);
    /* The host ends one (idle timeout, a port removed): RESET, RST sent. */
    int sv3[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv3), 0);
    struct att_rec r3 = {0};
    uint32_t hp3 = open_attached(&e, sv3[0], 1025, &r3, 3);
    ck_assert_int_eq(end_attached(&e, 99), -ENOENT);
    ck_assert_int_eq(end_attached(&e, 3), 0);
    ck_assert_uint_eq(r3.ends, 1);
    ck_assert_int_eq(r3.how, VSOCK_END_RESET);
    vs_expect(&e, VSOCK_OP_RST, hp3, 1025);
    ck_assert(vs_host_eof(sv3[1]));
    close(sv3[1]);
    /* A driver reset ends the rest, each once. */
    int sv4[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv4), 0);
    struct att_rec r4 = {0};
    open_attached(&e, sv4[0], 1025, &r4, 4);
    mmio_wr(&e.t, MMIO_STATUS, 0);
    ck_assert_uint_eq(r4.ends, 1);
    ck_assert_int_eq(r4.how, VSOCK_END_RESET);
    close(sv4[1]);
    /* Bad attach arguments: refused, the fd stays the caller's. */
    struct vsock_attach bad = {.pre_len = VSOCK_PRE_MAX + 1, .ended = rec_ended};
    pthread_mutex_lock(&e.t.lock);
    ck_assert_int_eq(virtio_vsock_attach_guest(e.v, &e.t, 0, 1025, &bad), -EINVAL);
    bad.pre_len = 0;
    bad.reply_len = VSOCK_REPLY_MAX + 1;
    ck_assert_int_eq(virtio_vsock_attach_guest(e.v, &e.t, 0, 1025, &bad), -EINVAL);
    bad.reply_len = 0;
    bad.ended = NULL;
    ck_assert_int_eq(virtio_vsock_attach_guest(e.v, &e.t, 0, 1025, &bad), -EINVAL);
    pthread_mutex_unlock(&e.t.lock);
    vs_free(&e);
}
END_TEST

/* The guest's credit bounds the preamble too: with none, it waits; the
 * destroy of the device ends what is left. */
START_TEST(attached_preamble_waits_for_credit)
{
    struct vs_env e;
    vs_init(&e);
    vs_rx_post(&e, 16, RXBUF);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct att_rec r = {0};
    ck_assert_int_eq(attach(&e, sv[0], 1025, &r, 5), 0);
    struct vsock_hdr h;
    ck_assert(vs_rx_next(&e, &h, NULL, 0));
    uint32_t hp = h.src_port;
    struct vsock_hdr resp = vs_gh(VSOCK_OP_RESPONSE, 1025, hp);
    resp.buf_alloc = 3; /* room for 3 bytes of the 8 */
    vs_tx(&e, resp, NULL, 0);
    char buf[16];
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.op, VSOCK_OP_RW);
    ck_assert_uint_eq(h.len, 3);
    ck_assert_mem_eq(buf, "HEL", 3);
    ck_assert_int_eq(send(sv[1], "data", 4, 0), 4);
    vs_fd_event(&e, sv[0], EPOLLIN);
    vs_expect_none(&e);
    struct vsock_hdr cu = vs_gh(VSOCK_OP_CREDIT_UPDATE, 1025, hp);
    cu.buf_alloc = 64;
    cu.fwd_cnt = 3;
    vs_tx(&e, cu, NULL, 0);
    vs_fd_event(&e, sv[0], EPOLLIN);
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.len, 5);
    ck_assert_mem_eq(buf, "LO!!!", 5);
    ck_assert(vs_rx_next(&e, &h, buf, sizeof(buf)));
    ck_assert_uint_eq(h.len, 4);
    ck_assert_mem_eq(buf, "data", 4);
    close(sv[1]);
    vs_free(&e);
    ck_assert_uint_eq(r.ends, 1);
    ck_assert_uint_eq(r.in, 4);
}
END_TEST

void vsock_attach_tests(TCase *tc)
{
    tcase_add_test(tc, attached_preamble_reply_and_stream);
    tcase_add_test(tc, attached_refusals);
    tcase_add_test(tc, attached_preamble_waits_for_credit);
}

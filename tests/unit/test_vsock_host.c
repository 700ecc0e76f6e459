/* --vsock-uds clients (vmm/kvm/vsock_host.c) against the real device with the
 * fake guest of vsock_env.h: a client that connects and never sends its
 * CONNECT line must not keep others out. */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/vsock_env.h"
#include "vmm/kvm/evloop.h"
#include "vmm/kvm/vsock_host.h"

_Static_assert(offsetof(struct vdev, transport) == 0, "vs_env aliases the transport as a vdev");

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* One round of the event loop, as evloop_run does it, on this thread (so
 * the fake guest's rings need no lock). */
static void loop_once(struct evloop *l, int ms)
{
    struct epoll_event ev[32];
    int n = epoll_wait(l->epfd, ev, 32, ms);
    for (int i = 0; i < n; i++) {
        struct evloop_handler h = *(struct evloop_handler *)ev[i].data.ptr;
        if (h.fd >= 0)
            h.fn(h.opaque, h.fd, ev[i].events);
    }
}

static int dial(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

START_TEST(idle_clients_do_not_keep_others_out)
{
    static struct vs_env e; /* large */
    static struct vsock_host h;
    struct evloop loop;
    char dir[] = "/tmp/airlock-vsock-host.XXXXXX", path[80], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v.sock", dir);
    vs_init(&e);
    vs_rx_post(&e, 8, RXBUF);
    ck_assert_int_eq(evloop_init(&loop), 0);
    ck_assert_int_eq(vsock_host_open(&h, path, err, sizeof(err)), 0);
    ck_assert_int_eq(vsock_host_attach(&h, &loop, &e.vd, e.v), 0);

    /* Every handshake slot taken by a client that says nothing. */
    int idle[VSOCK_HOST_PENDING];
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++) {
        idle[i] = dial(path);
        loop_once(&loop, 50);
    }
    /* One more: its CONNECT must reach the guest, at the latest once the
     * idle ones time out (the old code closed it at once). */
    int c = dial(path);
    ck_assert_int_eq(send(c, "CONNECT 5000\n", 13, MSG_NOSIGNAL), 13);
    uint64_t t0 = now_ms();
    struct vsock_hdr hd;
    bool got = false;
    while (!got && now_ms() - t0 < VSOCK_HANDSHAKE_MS + 3 * VSOCK_HANDSHAKE_TICK_MS + 1000) {
        loop_once(&loop, 50);
        got = vs_rx_next(&e, &hd, NULL, 0);
    }
    ck_assert_msg(got, "the client behind %u idle ones never reached the guest", VSOCK_HOST_PENDING);
    ck_assert_uint_eq(hd.op, VSOCK_OP_REQUEST);
    ck_assert_uint_eq(hd.dst_port, 5000);
    /* It talks to the guest both ways. */
    vs_tx(&e, vs_gh(VSOCK_OP_RESPONSE, 5000, hd.src_port), NULL, 0);
    char line[32], want[32];
    snprintf(want, sizeof(want), "OK %u\n", hd.src_port);
    ck_assert_uint_eq(vs_host_read(c, line, strlen(want)), strlen(want));
    ck_assert_mem_eq(line, want, strlen(want));
    vs_tx(&e, vs_gh(VSOCK_OP_RW, 5000, hd.src_port), "ping", 4);
    ck_assert_uint_eq(vs_host_read(c, line, 4), 4);
    ck_assert_mem_eq(line, "ping", 4);
    /* The idle ones are closed once their time is up (the last was
     * accepted no earlier than the one that got through). */
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++) {
        t0 = now_ms();
        bool gone = vs_host_eof(idle[i]);
        while (!gone && now_ms() - t0 < VSOCK_HANDSHAKE_MS + 3 * VSOCK_HANDSHAKE_TICK_MS + 1000) {
            loop_once(&loop, 50);
            gone = vs_host_eof(idle[i]);
        }
        ck_assert_msg(gone, "idle client %u was never closed", i);
        close(idle[i]);
    }
    /* A line longer than any CONNECT is closed without waiting. */
    int l = dial(path);
    char junk[VSOCK_CONNECT_LINE_MAX + 8];
    memset(junk, 'A', sizeof(junk));
    ck_assert_int_eq(send(l, junk, sizeof(junk), MSG_NOSIGNAL), (ssize_t)sizeof(junk));
    t0 = now_ms();
    bool closed = false;
    while (!closed && now_ms() - t0 < VSOCK_HANDSHAKE_MS / 2) {
        loop_once(&loop, 50);
        closed = vs_host_eof(l);
    }
    ck_assert_msg(closed, "an overlong line was not refused at once");
    close(l);
    close(c);
    vsock_host_close(&h);
    evloop_destroy(&loop);
    vs_free(&e);
    rmdir(dir);
}
END_TEST

void vsock_host_tests(TCase *tc)
{
    tcase_add_test(tc, idle_clients_do_not_keep_others_out);
}

/* Shared by the virtio-vsock unit tests (test_vsock*.c): a device over
 * rx/tx/event rings in fake guest memory, brought up through the
 * virtio-mmio registers, with socketpair(AF_UNIX) ends as host fds handed
 * out by a fake connect_port that records every watch call. */
#ifndef AIRLOCK_TESTS_UNIT_VSOCK_ENV_H
#define AIRLOCK_TESTS_UNIT_VSOCK_ENV_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/vsock.h"
#include "vmm/kvm/virtio_devices.h"
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
    /* The transport, also as the monitor's slot (vmm/kvm/vsock_host.c takes a
     * struct vdev, whose first member is the transport). */
    union {
        struct virtio_mmio t;
        struct vdev vd;
    };
    struct virtio_vsock *v;
    unsigned irqs;
    uint16_t rx_seen, evt_seen;
    int connect_rc; /* < 0: what connect_port fails with */
    unsigned nconnect;
    unsigned ncap, cap_max; /* conn_cap calls, the max the last one named */
    struct pair pairs[MAX_PAIRS];
    unsigned npairs, nwatch;
    bool wr[MAX_FD], ww[MAX_FD];
};

/* Device, rings (rx at r[0], tx r[1], event r[2]; r[1]'s data area
 * serves all three), brought up with every feature. */
void vs_init(struct vs_env *e);
void vs_free(struct vs_env *e);
bool vs_needs_reset(struct vs_env *e);
struct virtio_vsock_stats vs_stats(struct vs_env *e);
/* The monitor's entry points, called with the transport lock held. */
void vs_fd_event(struct vs_env *e, int fd, uint32_t events);
int vs_connect_guest(struct vs_env *e, int fd, uint32_t port);
/* `n` rx buffers of `len` bytes, then the rx kick. */
void vs_rx_post(struct vs_env *e, unsigned n, uint32_t len);
/* The next rx packet (header; up to `cap` payload bytes into data); false
 * when there is none.  A buffer given back empty reads as op INVALID. */
bool vs_rx_next(struct vs_env *e, struct vsock_hdr *h, void *data, uint32_t cap);
/* The next rx packet must be `op` from src_port to dst_port. */
struct vsock_hdr vs_expect(struct vs_env *e, uint16_t op, uint32_t src_port, uint32_t dst_port);
void vs_expect_none(struct vs_env *e);
/* A guest stream header, len 0, buf_alloc GUEST_BUF. */
struct vsock_hdr vs_gh(uint16_t op, uint32_t src_port, uint32_t dst_port);
/* Raw bytes on the tx queue, cut into descriptors at `cuts`; the device
 * must use the chain (length 0) and stay healthy. */
void vs_tx_raw(struct vs_env *e, const uint8_t *pkt, uint32_t total, const uint32_t *cuts,
               unsigned ncuts);
/* Header h (its len as given) and payload, cut at `cuts`. */
void vs_tx_cut(struct vs_env *e, const struct vsock_hdr *h, const void *payload, uint32_t plen,
               const uint32_t *cuts, unsigned ncuts);
/* Header h with len = plen, and the payload, in one descriptor. */
void vs_tx(struct vs_env *e, struct vsock_hdr h, const void *payload, uint32_t plen);
/* What the host client can read now, up to n bytes. */
size_t vs_host_read(int fd, void *buf, size_t n);
/* Whether the host client sees EOF (or a reset) now. */
bool vs_host_eof(int fd);
uint8_t vs_pat(uint32_t i);
/* The guest connects from port gp to host port hp and gets RESPONSE. */
struct pair *vs_open_conn(struct vs_env *e, uint32_t gp, uint32_t hp);

/* Test groups in test_vsock_flow.c and test_vsock_hostile.c. */
void vsock_flow_tests(TCase *tc);
/* --vsock-uds clients' handshakes (test_vsock_host.c). */
void vsock_host_tests(TCase *tc);
void vsock_hostile_tests(TCase *tc);
/* Attached host fds (test_vsock_attach.c). */
void vsock_attach_tests(TCase *tc);

#endif

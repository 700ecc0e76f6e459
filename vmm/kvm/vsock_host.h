/* The host end of virtio-vsock, compatible with Firecracker's hybrid
 * vsock: a Unix socket at PATH that host programs connect to, writing
 * "CONNECT <port>\n" to reach guest port <port> (the device answers
 * "OK <hostport>\n"), and, for connections the guest opens to CID 2 port P,
 * the Unix socket PATH_P if someone listens there (else the guest gets RST). */
#ifndef AIRLOCK_KVM_VSOCK_HOST_H
#define AIRLOCK_KVM_VSOCK_HOST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/vsock.h"
#include "vmm/kvm/evloop.h"
#include "vmm/kvm/virtio_devices.h"

#define VSOCK_HOST_PENDING 16 /* clients still sending their CONNECT line */
#define VSOCK_CONNECT_LINE_MAX 32
/* A client gets this long to send its CONNECT line, or it is closed: an
 * idle one must not hold a slot forever.  While all slots are taken, new
 * clients wait in the listen backlog (they are not refused), so a client
 * gets through at the latest once the idle ones time out; the check runs
 * every VSOCK_HANDSHAKE_TICK_MS. */
#define VSOCK_HANDSHAKE_MS      3000
#define VSOCK_HANDSHAKE_TICK_MS 500

struct vsock_host_pending {
    int fd;
    uint64_t since_ms; /* CLOCK_MONOTONIC, when accepted */
};

struct vsock_host {
    char path[108];          /* sun_path */
    int listen_fd;
    struct evloop *loop;
    struct vdev *vdev;       /* the device's slot: its transport lock */
    struct virtio_vsock *dev;
    struct vsock_host_pending pending[VSOCK_HOST_PENDING];
    int tick_fd;          /* timerfd: times out idle handshakes; -1: none */
    bool accept_paused;   /* every slot taken: listen_fd is out of the loop */
    /* Ports airlock serves itself (egress): consulted before PATH_<port>;
     * returns the fd for the device, or -ENOENT when not its port. */
    int (*serve_port)(void *opaque, uint32_t port);
    void *serve_opaque;
    /* Jailed (vmm/jail/jail.c): PATH_<port> is out of reach, the parent
     * process dials it for us over this socket; -1: dial ourselves. */
    int dial_sock;
    /* The connection cap was reported (vmm/audit/limits.h: once per limit);
     * set from the vCPU thread or the loop. */
    atomic_bool cap_reported;
};

/* An empty host side: no socket, nothing to close yet. */
void vsock_host_init(struct vsock_host *h);

/* Checks, without creating anything, that `path` can become the
 * listening socket: short enough, not there yet, in an existing folder.
 * -errno with err naming the path. */
int vsock_host_check(const char *path, char *err, size_t errlen);

/* Creates the listening socket at `path` (which must not exist yet).
 * -errno with err naming the path. */
int vsock_host_open(struct vsock_host *h, const char *path, char *err, size_t errlen);

/* What the device calls back into (opaque = the struct vsock_host). */
extern const struct vsock_host_ops vsock_host_ops;

/* Starts accepting host clients once the device sits in its slot. */
int vsock_host_attach(struct vsock_host *h, struct evloop *loop, struct vdev *vdev,
                      struct virtio_vsock *dev);

/* Closes the listener and pending clients and removes the socket file. */
void vsock_host_close(struct vsock_host *h);

#endif

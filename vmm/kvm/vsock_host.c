#include "vmm/kvm/vsock_host.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/jail/fdpass.h"
#include "vmm/util/vsock_uds.h"
#include "vmm/audit/limits.h"

void vsock_host_init(struct vsock_host *h)
{
    memset(h, 0, sizeof(*h));
    h->listen_fd = -1;
    h->dial_sock = -1;
    h->tick_fd = -1;
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++)
        h->pending[i].fd = -1;
}

int vsock_host_check(const char *path, char *err, size_t errlen)
{
    /* PATH_<port> must fit too: leave room for "_4294967295". */
    if (strlen(path) + 12 > sizeof(((struct vsock_host *)0)->path)) {
        snprintf(err, errlen, "--vsock-uds %s: path too long for a Unix socket", path);
        return -ENAMETOOLONG;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        snprintf(err, errlen, "--vsock-uds %s: already exists (remove it first)", path);
        return -EEXIST;
    }
    /* The folder it goes in: what bind() would find wrong, said before
     * anything else is opened. */
    char dir[sizeof(((struct vsock_host *)0)->path)];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        slash[slash == dir] = '\0'; /* "/x" -> "/" */
        int e = stat(dir, &st) < 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
        if (e) {
            snprintf(err, errlen, "--vsock-uds %s: %s", path, strerror(e));
            return -e;
        }
    }
    return 0;
}

int vsock_host_open(struct vsock_host *h, const char *path, char *err, size_t errlen)
{
    vsock_host_init(h);
    int rc = vsock_host_check(path, err, errlen);
    if (rc)
        return rc;
    snprintf(h->path, sizeof(h->path), "%s", path);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        listen(h->listen_fd, 64) < 0) {
        int e = errno;
        snprintf(err, errlen, "--vsock-uds %s: %s", path, strerror(e));
        if (h->listen_fd >= 0)
            close(h->listen_fd);
        h->listen_fd = -1;
        return -e;
    }
    return 0;
}

/* Jailed: the parent process dials PATH_<port> for us (vmm/jail/jail.c) and
 * answers an int32 (0 or -errno) with the socket attached. */
static int dial_via_parent(int sock, uint32_t port)
{
    if (send(sock, &port, sizeof(port), MSG_NOSIGNAL) != (ssize_t)sizeof(port))
        return -ECONNREFUSED;
    int32_t rc;
    int fd;
    ssize_t n = fdpass_recv(sock, &rc, sizeof(rc), &fd);
    if (n == (ssize_t)sizeof(rc) && rc == 0 && fd >= 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return n == (ssize_t)sizeof(rc) && rc < 0 ? rc : -ECONNREFUSED;
}

static int host_connect_port(void *opaque, uint32_t port)
{
    struct vsock_host *h = opaque;
    if (h->serve_port) {
        int fd = h->serve_port(h->serve_opaque, port);
        if (fd != -ENOENT)
            return fd;
    }
    if (!h->path[0])
        return -ECONNREFUSED; /* no --vsock-uds: nothing on the host listens */
    return h->dial_sock >= 0 ? dial_via_parent(h->dial_sock, port) : vsock_uds_dial(h->path, port);
}

static void host_on_conn_event(void *opaque, int fd, uint32_t events)
{
    struct vsock_host *h = opaque;
    pthread_mutex_lock(&h->vdev->transport.lock);
    virtio_vsock_fd_event(h->dev, &h->vdev->transport, fd, events);
    pthread_mutex_unlock(&h->vdev->transport.lock);
}

static void host_watch(void *opaque, int fd, bool readable, bool writable)
{
    struct vsock_host *h = opaque;
    uint32_t ev = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
    if (!h->loop)
        return;
    if (!ev)
        evloop_remove(h->loop, fd);
    else if (evloop_modify(h->loop, fd, ev) == -ENOENT)
        evloop_add(h->loop, fd, ev, host_on_conn_event, h);
}

/* The connection cap (VSOCK_MAX_CONNS) refused a connection, either way
 * round: reported once per VM, however often the guest retries. */
static void host_conn_cap(void *opaque, unsigned max)
{
    struct vsock_host *h = opaque;
    if (!h || atomic_exchange(&h->cap_reported, true))
        return;
    limit_report("vsock_conns", max, 0,
                 "vsock connections at their cap (%u, VSOCK_MAX_CONNS): more are refused "
                 "(the guest gets RST, a host client is closed)",
                 max);
}

const struct vsock_host_ops vsock_host_ops = {
    .connect_port = host_connect_port,
    .watch = host_watch,
    .conn_cap = host_conn_cap,
};

static void host_on_accept(void *opaque, int lfd, uint32_t events);

static uint64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void pending_drop(struct vsock_host *h, struct vsock_host_pending *p, bool close_fd)
{
    evloop_remove(h->loop, p->fd);
    if (close_fd)
        close(p->fd);
    p->fd = -1;
    /* A slot is free: clients waiting in the backlog may come in. */
    if (h->accept_paused && evloop_add(h->loop, h->listen_fd, EPOLLIN, host_on_accept, h) == 0)
        h->accept_paused = false;
}

/* Closes the clients that did not send their line in time. */
static void host_on_tick(void *opaque, int fd, uint32_t events)
{
    struct vsock_host *h = opaque;
    uint64_t n;
    (void)events;
    if (read(fd, &n, sizeof(n)) < 0)
        return;
    uint64_t now = mono_ms();
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++)
        if (h->pending[i].fd >= 0 && now - h->pending[i].since_ms >= VSOCK_HANDSHAKE_MS)
            pending_drop(h, &h->pending[i], true);
}

/* "CONNECT <port>\n", nothing else: decimal port, no sign, no spaces. */
static int parse_connect(const char *line, size_t len, uint32_t *port)
{
    static const char prefix[] = "CONNECT ";
    size_t plen = sizeof(prefix) - 1;
    if (len <= plen + 1 || memcmp(line, prefix, plen) || line[len - 1] != '\n')
        return -EINVAL;
    uint64_t v = 0;
    for (size_t i = plen; i < len - 1; i++) {
        if (line[i] < '0' || line[i] > '9' || v > UINT32_MAX / 10)
            return -EINVAL;
        v = v * 10 + (uint64_t)(line[i] - '0');
    }
    if (v > UINT32_MAX)
        return -EINVAL;
    *port = (uint32_t)v;
    return 0;
}

static void host_on_handshake(void *opaque, int fd, uint32_t events)
{
    struct vsock_host *h = opaque;
    struct vsock_host_pending *p = NULL;
    (void)events;
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++)
        if (h->pending[i].fd == fd)
            p = &h->pending[i];
    if (!p)
        return;
    /* Peek, so bytes the client sends after its line stay in the socket
     * for the guest. */
    char buf[VSOCK_CONNECT_LINE_MAX];
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    char *nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;
    if (!nl) {
        if (n <= 0 || (size_t)n == sizeof(buf))
            pending_drop(h, p, true); /* gone, or a line longer than any CONNECT */
        return;
    }
    size_t len = (size_t)(nl - buf) + 1;
    uint32_t port;
    if (recv(fd, buf, len, 0) != (ssize_t)len || parse_connect(buf, len, &port)) {
        pending_drop(h, p, true);
        return;
    }
    pending_drop(h, p, false);
    pthread_mutex_lock(&h->vdev->transport.lock);
    int rc = virtio_vsock_connect_guest(h->dev, &h->vdev->transport, fd, port);
    pthread_mutex_unlock(&h->vdev->transport.lock);
    if (rc)
        close(fd); /* the device did not take it: no guest, or at its cap */
    if (rc == -EBUSY)
        host_conn_cap(h, VSOCK_MAX_CONNS);
}

static void host_on_accept(void *opaque, int lfd, uint32_t events)
{
    struct vsock_host *h = opaque;
    struct vsock_host_pending *p = NULL;
    (void)events;
    for (unsigned i = 0; i < VSOCK_HOST_PENDING && !p; i++)
        if (h->pending[i].fd < 0)
            p = &h->pending[i];
    if (!p) {
        /* Every slot is mid-handshake: leave new clients in the backlog
         * until one frees (a line, a close, or VSOCK_HANDSHAKE_MS). */
        evloop_remove(h->loop, lfd);
        h->accept_paused = true;
        return;
    }
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (evloop_add(h->loop, fd, EPOLLIN, host_on_handshake, h) == 0) {
        p->fd = fd;
        p->since_ms = mono_ms();
        return;
    }
    close(fd); /* the loop is full: refuse this one */
}

int vsock_host_attach(struct vsock_host *h, struct evloop *loop, struct vdev *vdev,
                      struct virtio_vsock *dev)
{
    h->loop = loop;
    h->vdev = vdev;
    h->dev = dev;
    if (h->listen_fd < 0)
        return 0; /* a device without a host socket (airlock run) */
    /* Armed here, before the seccomp filter: the loop then only reads it. */
    h->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct itimerspec every = {.it_interval = {0, VSOCK_HANDSHAKE_TICK_MS * 1000000L},
                               .it_value = {0, VSOCK_HANDSHAKE_TICK_MS * 1000000L}};
    if (h->tick_fd < 0 || timerfd_settime(h->tick_fd, 0, &every, NULL) < 0)
        return -errno;
    int e = evloop_add(loop, h->tick_fd, EPOLLIN, host_on_tick, h);
    return e ? e : evloop_add(loop, h->listen_fd, EPOLLIN, host_on_accept, h);
}

void vsock_host_close(struct vsock_host *h)
{
    for (unsigned i = 0; i < VSOCK_HOST_PENDING; i++) {
        if (h->pending[i].fd >= 0)
            close(h->pending[i].fd);
        h->pending[i].fd = -1;
    }
    if (h->listen_fd >= 0) {
        close(h->listen_fd);
        unlink(h->path);
    }
    if (h->tick_fd >= 0)
        close(h->tick_fd);
    h->listen_fd = h->tick_fd = -1;
}

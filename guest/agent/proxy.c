/* The guest end of egress: a TCP listener on 127.0.0.1:AGENT_PROXY_PORT
 * whose every connection the relay (relay.c) carries, byte for byte, to
 * the host over vsock (CID 2, port AGENT_EGRESS_VSOCK_PORT).  The guest
 * has no network device, so this is the only way out; the host parses the
 * HTTP proxy request (CONNECT or absolute URI) and applies the allowlist.
 * The relay does not look at the bytes: it has nothing to decide, and
 * untrusted code could open the vsock itself anyway.  It only exists so
 * that ordinary programs (HTTPS_PROXY=http://127.0.0.1:3128) can use it. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "guest/agent/relay.h"

static const char bad_gateway[] =
    "HTTP/1.1 502 Bad Gateway\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 24\r\n"
    "Connection: close\r\n"
    "\r\n"
    "airlock: egress refused\n";

/* How long a refused client may take to close after its 502. */
#define PROXY_DRAIN_S 2.0

/* The host refused (or never answered) the vsock connect: tell the client
 * in HTTP, since it speaks it.  The reply is far below a socket buffer, so
 * one non-blocking send is enough.  The client is then read to EOF (or for
 * PROXY_DRAIN_S) before the close: closing with its request unread would
 * send an RST, which can reach the client before it has read the 502. */
static void refuse(struct relay_pair *p)
{
    if (p->bfd >= 0)
        close(p->bfd);
    p->bfd = -1;
    ssize_t n = send(p->afd, bad_gateway, sizeof(bad_gateway) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 || shutdown(p->afd, SHUT_WR) < 0) {
        relay_close(p);
        return;
    }
    p->stage = RELAY_DRAIN;
    p->deadline = relay_now() + PROXY_DRAIN_S;
}

static int egress_listen(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(AGENT_PROXY_PORT),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void egress_accepted(struct relay_pair *p)
{
    struct sockaddr_vm a = {.svm_family = AF_VSOCK,
                            .svm_cid = VMADDR_CID_HOST,
                            .svm_port = AGENT_EGRESS_VSOCK_PORT};
    int fd = relay_connect(AF_VSOCK, &a, sizeof(a));
    if (fd < 0) {
        refuse(p);
        return;
    }
    p->bfd = fd;
    p->stage = RELAY_CONNECTING;
}

static void egress_connected(struct relay_pair *p, int err)
{
    if (err)
        refuse(p);
}

const struct relay_service relay_egress = {
    .name = "egress proxy on 127.0.0.1:3128",
    .max_pairs = RELAY_EGRESS_PAIRS,
    .listen = egress_listen,
    .accepted = egress_accepted,
    .connected = egress_connected,
};

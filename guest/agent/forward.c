/* The guest end of inbound forwards (proto.h, "Inbound forwards"): a
 * vsock listener on AGENT_FORWARD_VSOCK_PORT; each connection the host
 * opens names a TCP port in its hello, and the relay (relay.c) carries it
 * to 127.0.0.1:PORT.  The host decides which ports are published and
 * refuses the rest before anything reaches the guest; here only the
 * address is fixed: loopback, so nothing but the guest's own listeners
 * are reachable, and never through the agent's command channel, which is
 * vsock only. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "guest/agent/relay.h"
#include "vmm/agent_client/forward_hello.h"

static int forward_listen(void)
{
    int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_vm a = {.svm_family = AF_VSOCK,
                            .svm_cid = VMADDR_CID_ANY,
                            .svm_port = AGENT_FORWARD_VSOCK_PORT};
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 128)) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static void forward_accepted(struct relay_pair *p)
{
    p->stage = RELAY_HELLO;
    p->deadline = relay_now() + AGENT_FWD_HELLO_MS / 1000.0;
}

/* The answer is four bytes on a fresh socket: one non-blocking send. */
static void answer(struct relay_pair *p, int err)
{
    uint8_t reply[AGENT_FWD_REPLY_SIZE];
    agent_fwd_reply_encode(reply, err);
    send(p->afd, reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void forward_hello(struct relay_pair *p)
{
    ssize_t n = recv(p->afd, p->hello + p->hello_len, sizeof(p->hello) - p->hello_len,
                     MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        relay_close(p);
        return;
    }
    p->hello_len += (size_t)n;
    if (p->hello_len < sizeof(p->hello))
        return;
    uint16_t port;
    if (agent_fwd_hello_decode(p->hello, &port) < 0) {
        relay_close(p); /* not a host of ours: no answer */
        return;
    }
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = relay_connect(AF_INET, &a, sizeof(a));
    if (fd < 0) {
        answer(p, -fd);
        relay_close(p);
        return;
    }
    p->bfd = fd;
    p->deadline = 0; /* the connect to loopback ends at once, either way */
    p->stage = RELAY_CONNECTING;
}

static void forward_connected(struct relay_pair *p, int err)
{
    if (err) {
        answer(p, err);
        relay_close(p);
        return;
    }
    /* The answer goes first down the stream the relay now carries. */
    agent_fwd_reply_encode(p->down.buf, 0);
    p->down.len = AGENT_FWD_REPLY_SIZE;
}

const struct relay_service relay_forward = {
    .name = "forwards on vsock port 1025",
    .max_pairs = RELAY_MAX_PAIRS - RELAY_EGRESS_PAIRS,
    .listen = forward_listen,
    .accepted = forward_accepted,
    .hello = forward_hello,
    .connected = forward_connected,
};

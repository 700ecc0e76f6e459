/* A pod's messages; see pod_wire.h. */
#include "vmm/runtime/pod_wire.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "vmm/jail/fdpass.h"

int pod_wire_send(int sock, const char *msg, const int *fds, unsigned nfds)
{
    size_t len = strlen(msg);
    if (!len || len >= POD_WIRE_MAX || nfds > POD_WIRE_MAX_FDS)
        return -EMSGSIZE;
    return fdpass_sendv(sock, msg, len, fds, nfds);
}

int pod_wire_recv_fds(int sock, char *msg, size_t cap, int *fds, unsigned *nfds,
                      unsigned timeout_ms)
{
    unsigned got = 0, max = fds ? POD_WIRE_MAX_FDS : 0;
    if (nfds)
        *nfds = 0;
    for (unsigned i = 0; i < max; i++)
        fds[i] = -1;
    if (timeout_ms) {
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int r;
        while ((r = poll(&p, 1, (int)timeout_ms)) < 0 && errno == EINTR)
            ;
        if (r <= 0)
            return r < 0 ? -errno : -ETIMEDOUT;
    }
    /* one more fd than wanted is taken, so that a message with too many
     * is told from one with just enough */
    int all[POD_WIRE_MAX_FDS + 1];
    ssize_t n = fdpass_recvv(sock, msg, cap - 1, all, max + 1, &got);
    if (n < 0)
        return (int)n == -EMSGSIZE ? -EPROTO : (int)n;
    msg[n] = '\0';
    if (got > max || memchr(msg, '\0', (size_t)n)) {
        for (unsigned i = 0; i < got; i++)
            close(all[i]);
        return -EPROTO;
    }
    for (unsigned i = 0; i < max; i++)
        fds[i] = i < got ? all[i] : -1;
    if (nfds)
        *nfds = got;
    return (int)n;
}

int pod_wire_recv(int sock, char *msg, size_t cap, unsigned timeout_ms)
{
    return pod_wire_recv_fds(sock, msg, cap, NULL, NULL, timeout_ms);
}

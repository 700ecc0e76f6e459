#include "vmm/jail/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int fdpass_sendv(int sock, const void *buf, size_t len, const int *fds, unsigned nfds)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(FDPASS_MAX_FDS * sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > FDPASS_MAX_FDS)
        return -EINVAL;
    if (nfds) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.space;
        mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n == (ssize_t)len ? 0 : -EIO;
}

int fdpass_send(int sock, const void *buf, size_t len, int fd)
{
    return fdpass_sendv(sock, buf, len, &fd, fd >= 0 ? 1 : 0);
}

ssize_t fdpass_recvv(int sock, void *buf, size_t len, int *fds, unsigned max, unsigned *nfds)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE((FDPASS_MAX_FDS + 2) * sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.space,
                        .msg_controllen = sizeof(cm.space)};
    unsigned got = 0;
    for (unsigned i = 0; i < max; i++)
        fds[i] = -1;
    *nfds = 0;
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (got < max)
                fds[got++] = f;
            else
                close(f);
        }
    }
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        for (unsigned i = 0; i < got; i++) {
            close(fds[i]);
            fds[i] = -1;
        }
        return -EMSGSIZE;
    }
    *nfds = got;
    return n;
}

ssize_t fdpass_recv(int sock, void *buf, size_t len, int *fd)
{
    unsigned n;
    return fdpass_recvv(sock, buf, len, fd, 1, &n);
}

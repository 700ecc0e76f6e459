#include "vmm/jail/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int fdpass_send(int sock, const void *buf, size_t len, int fd)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.space;
        mh.msg_controllen = sizeof(cm.space);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -EIO;
}

ssize_t fdpass_recv(int sock, void *buf, size_t len, int *fd)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(4 * sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.space,
                        .msg_controllen = sizeof(cm.space)};
    *fd = -1;
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
            if (*fd < 0)
                *fd = f;
            else
                close(f);
        }
    }
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -EMSGSIZE;
    }
    return n;
}

#include "guest/agent/keep.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/agent_client/wire.h"

#define REC_HDR 6 /* u16 type, u32 n */

int keep_ring_init(struct keep_ring *k)
{
    memset(k, 0, sizeof(*k));
    k->buf = malloc(AGENT_KEEP_REPLAY + REC_HDR + AGENT_MAX_CHUNK);
    return k->buf ? 0 : -ENOMEM;
}

void keep_ring_free(struct keep_ring *k)
{
    free(k->buf);
    k->buf = NULL;
}

static uint32_t rec_len(const struct keep_ring *k, size_t at)
{
    return get32(k->buf + at + 2);
}

void keep_ring_add(struct keep_ring *k, uint16_t type, const uint8_t *data, size_t n)
{
    size_t cap = AGENT_KEEP_REPLAY + REC_HDR + AGENT_MAX_CHUNK;
    /* The oldest records go while the kept bytes would pass the replay's
     * size; what is left moves to the front when the end has no room. */
    while (k->tail > k->head && k->total + n - k->first > AGENT_KEEP_REPLAY) {
        uint32_t len = rec_len(k, k->head);
        k->head += REC_HDR + len;
        k->first += len;
    }
    if (k->head == k->tail) {
        k->head = k->tail = 0;
        k->first = k->total;
    }
    if (k->tail + REC_HDR + n > cap) {
        memmove(k->buf, k->buf + k->head, k->tail - k->head);
        k->tail -= k->head;
        k->head = 0;
    }
    if (n > AGENT_MAX_CHUNK || k->tail + REC_HDR + n > cap) { /* never: a chunk fits */
        k->head = k->tail = 0;
        k->total += n;
        k->first = k->total;
        return;
    }
    k->buf[k->tail] = (uint8_t)type;
    k->buf[k->tail + 1] = (uint8_t)(type >> 8);
    put32(k->buf + k->tail + 2, (uint32_t)n);
    memcpy(k->buf + k->tail + REC_HDR, data, n);
    k->tail += REC_HDR + n;
    k->total += n;
}

int keep_ring_replay(struct keep_ring *k, struct aconn *c, uint64_t have, uint64_t *from)
{
    if (have > k->total)
        return -EINVAL;
    *from = have < k->first ? k->first : have;
    uint64_t off = k->first;
    for (size_t at = k->head; at < k->tail;) {
        uint16_t type = (uint16_t)(k->buf[at] | k->buf[at + 1] << 8);
        uint32_t len = rec_len(k, at);
        if (off + len > *from) {
            size_t skip = (size_t)(*from > off ? *from - off : 0);
            int rc = aconn_send(c, type, k->buf + at + REC_HDR + skip, len - skip);
            if (rc)
                return rc;
        }
        off += len;
        at += REC_HDR + len;
    }
    return 0;
}

static socklen_t keep_addr(uint32_t pid, struct sockaddr_un *a)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "airlock-keep-%u", pid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int keep_listen(pid_t pid)
{
    struct sockaddr_un a;
    socklen_t len = keep_addr((uint32_t)pid, &a);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 4) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int keep_accept(int lfd, uint64_t *have)
{
    for (;;) {
        struct pollfd w = {.fd = lfd, .events = POLLIN};
        int pr = poll(&w, 1, AGENT_KEEP_WAIT_MS);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return pr ? -errno : -ETIMEDOUT;
        int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (s < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return -errno;
        }
        /* Only the agent's own processes (root) hand a host connection
         * over: a command of another user must not take a stream. */
        struct ucred cr;
        socklen_t cl = sizeof(cr);
        uint8_t msg[8];
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct iovec iov = {msg, sizeof(msg)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                            .msg_controllen = sizeof(ctl.buf)};
        struct pollfd p = {.fd = s, .events = POLLIN};
        ssize_t n = -1;
        if (!getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &cl) && cr.uid == 0 &&
            poll(&p, 1, 5000) == 1)
            n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
        close(s);
        struct cmsghdr *h = n == (ssize_t)sizeof(msg) ? CMSG_FIRSTHDR(&mh) : NULL;
        if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
            h->cmsg_len == CMSG_LEN(sizeof(int))) {
            int fd;
            memcpy(&fd, CMSG_DATA(h), sizeof(fd));
            *have = get64(msg);
            return fd;
        }
    }
}

int keep_hand_over(uint32_t pid, uint64_t have, int fd)
{
    struct sockaddr_un a;
    socklen_t len = keep_addr(pid, &a);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (struct sockaddr *)&a, len) < 0) {
        int e = errno;
        close(s);
        return e == ECONNREFUSED || e == ENOENT ? -ESRCH : -e;
    }
    uint8_t msg[8];
    put64(msg, have);
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = {msg, sizeof(msg)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(fd));
    ssize_t n = sendmsg(s, &mh, MSG_NOSIGNAL);
    int e = errno;
    close(s);
    return n == (ssize_t)sizeof(msg) ? 0 : -e;
}

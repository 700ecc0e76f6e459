/* The blocking I/O of an agent connection, below nothing but
 * agent_client.c's decoder (which calls nothing here): all of a buffer
 * written or sent, some bytes received, and the buffered reader both
 * ends use (layout in guest/agent/proto.h).  The agent links it too. */
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"

/* The one "all of it" loop: send() with MSG_NOSIGNAL on sockets (a peer
 * that went away is an error, not SIGPIPE), write() on pipes and files. */
static int xfer_all(int fd, const void *buf, size_t len, bool sock)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int agent_write_all(int fd, const void *buf, size_t len)
{
    return xfer_all(fd, buf, len, false);
}

int agent_send_all(int fd, const void *buf, size_t len)
{
    return xfer_all(fd, buf, len, true);
}

ssize_t agent_recv_some(int fd, void *buf, size_t cap)
{
    ssize_t n;
    do
        n = recv(fd, buf, cap, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return n == 0 ? -ECONNRESET : n;
}

/* ---- the reader both ends use ---- */

int agent_reader_init(struct agent_reader *r, int fd, enum agent_dir dir, uint8_t *buf,
                      size_t cap)
{
    r->fd = fd;
    r->buf = buf;
    r->cap = cap;
    r->pos = r->len = 0;
    r->version = 0;
    return agent_decoder_init(&r->dec, dir);
}

void agent_reader_free(struct agent_reader *r)
{
    agent_decoder_free(&r->dec);
}

int agent_reader_next(struct agent_reader *r, struct agent_msg *m)
{
    for (;;) {
        size_t used;
        int rc = agent_decode(&r->dec, r->buf + r->pos, r->len - r->pos, &used, m);
        r->pos += used;
        if (rc <= 0 || m->type != AGENT_READY)
            return rc;
        if (r->version || m->u.ready.version != AGENT_VERSION)
            return -EPROTO;
        r->version = m->u.ready.version;
    }
}

static int reader_took(struct agent_reader *r, ssize_t n)
{
    if (n < 0)
        return (int)n;
    r->pos = 0;
    r->len = (size_t)n;
    return 1;
}

int agent_reader_fill(struct agent_reader *r)
{
    return reader_took(r, agent_recv_some(r->fd, r->buf, r->cap));
}

int agent_reader_fill_frame(struct agent_reader *r)
{
    size_t want = agent_decode_want(&r->dec);
    return reader_took(r, agent_recv_some(r->fd, r->buf, want < r->cap ? want : r->cap));
}

int agent_reader_wait(struct agent_reader *r, struct agent_msg *m)
{
    for (;;) {
        int rc = agent_reader_next(r, m);
        if (rc)
            return rc;
        rc = agent_reader_fill(r);
        if (rc < 0)
            return rc;
    }
}

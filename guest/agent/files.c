/* FILE_PUT / FILE_GET: one regular file per request, streamed in
 * AGENT_MAX_CHUNK pieces.  A put that fails for any reason (open, write,
 * a total other than the announced size) leaves no file behind and is
 * answered with one ERROR after the host's FILE_END, so the stream stays
 * in step; a get answers FILE_DATA* FILE_END or ERROR.  A put with a
 * root_len (a tar's member) goes through beneath.h: a new file, made
 * where no symlink leads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/beneath.h"

/* Receives the put's data up to FILE_END; the first failure is kept in
 * *err and later chunks are discarded.  0, or -errno to drop the
 * connection (the host sent something that is not part of a put). */
static int put_receive(struct aconn *c, int fd, uint64_t size, uint64_t *total, int *err)
{
    for (;;) {
        struct agent_msg m;
        int rc = agent_reader_wait(&c->rd, &m);
        if (rc < 0)
            return rc;
        if (m.type == AGENT_FILE_END)
            return 0;
        if (m.type != AGENT_FILE_DATA)
            return -EPROTO;
        if (*err)
            continue;
        if (m.len > size - *total) {
            *err = EFBIG;
            continue;
        }
        rc = agent_write_all(fd, m.payload, m.len);
        if (rc)
            *err = -rc;
        *total += m.len;
    }
}

int agent_do_file_put(struct aconn *c, const struct agent_msg *m)
{
    /* The payload is overwritten by the next message: at.buf keeps the path. */
    static struct agent_at at;
    uint64_t size = m->u.file_put.size, total = 0;
    mode_t mode = m->u.file_put.mode & 07777;
    int err = -agent_at_open(&at, m->u.file_put.path, m->u.file_put.root_len);
    char path[AGENT_MAX_PATH];
    if (!at.beneath) { /* at.name is the payload's: keep a copy */
        snprintf(path, sizeof(path), "%s", at.name);
        at.name = path;
    }
    int fd = -1;
    if (!err)
        err = -agent_at_clear(&at);
    if (!err) {
        int how = at.beneath ? O_EXCL | O_NOFOLLOW : O_TRUNC;
        fd = openat(at.dirfd, at.name, O_WRONLY | O_CREAT | O_CLOEXEC | how, mode);
        if (fd < 0)
            err = errno;
        else if (fchmod(fd, mode)) /* the umask is not the host's intent */
            err = errno;
    }
    int rc = put_receive(c, fd, size, &total, &err);
    if (fd >= 0 && close(fd) && !err)
        err = errno;
    if (!err && total != size)
        err = EIO;
    if (fd >= 0 && (err || rc))
        unlinkat(at.dirfd, at.name, 0);
    agent_at_close(&at);
    if (rc)
        return rc;
    if (err)
        return aconn_send_error(c, err, AGENT_OP_FILE);
    return aconn_send(c, AGENT_FILE_END, NULL, 0);
}

int agent_do_file_get(struct aconn *c, const struct agent_msg *m)
{
    int fd = open(m->u.file_get.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return aconn_send_error(c, errno, AGENT_OP_FILE);
    struct stat st;
    int e = fstat(fd, &st) ? errno
            : S_ISDIR(st.st_mode) ? EISDIR
            : !S_ISREG(st.st_mode) ? EINVAL : 0;
    if (e) {
        close(fd);
        return aconn_send_error(c, e, AGENT_OP_FILE);
    }
    static uint8_t chunk[AGENT_MAX_CHUNK];
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = aconn_send_error(c, errno, AGENT_OP_FILE);
            break;
        }
        if (n == 0) {
            rc = aconn_send(c, AGENT_FILE_END, NULL, 0);
            break;
        }
        rc = aconn_send(c, AGENT_FILE_DATA, chunk, (size_t)n);
        if (rc)
            break;
    }
    close(fd);
    return rc;
}

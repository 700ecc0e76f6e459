/* One host connection: framing through the shared decoder, and the request
 * loop.  Requests run one after another; stray STDIN/STDIN_EOF/KILL/SIGNAL that
 * raced with the end of an exec are dropped, anything else out of place
 * ends the connection (the host is trusted, but a broken host must not
 * wedge the agent). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/agent.h"

int aconn_send(struct aconn *c, uint16_t type, const void *payload, size_t len)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_MAX_CHUNK];
    ssize_t n = agent_encode(f, sizeof(f), type, payload, len);
    if (n < 0)
        return (int)n;
    return agent_send_all(c->rd.fd, f, (size_t)n);
}

int aconn_send_error(struct aconn *c, int code, uint32_t op)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_ERROR_SIZE];
    /* Keep the code inside what the host accepts as an errno. */
    if (code <= 0 || code > 4095)
        code = EIO;
    ssize_t n = agent_encode_error(f, sizeof(f), (uint32_t)code, op);
    if (n < 0)
        return (int)n;
    return aconn_send(c, AGENT_ERROR, f + AGENT_HDR_SIZE, AGENT_ERROR_SIZE);
}

static int serve_one(struct aconn *c, const struct agent_msg *m)
{
    switch (m->type) {
    case AGENT_EXEC:
        return agent_do_exec(c, m);
    case AGENT_FILE_PUT:
        return agent_do_file_put(c, m);
    case AGENT_FILE_GET:
        return agent_do_file_get(c, m);
    case AGENT_RESEED:
        return agent_do_reseed(c, m);
    case AGENT_STAT:
        return agent_do_stat(c, m);
    case AGENT_LIST:
        return agent_do_list(c, m);
    case AGENT_MKDIR:
        return agent_do_mkdir(c, m);
    case AGENT_SYMLINK:
        return agent_do_symlink(c, m);
    case AGENT_RENAME:
        return agent_do_rename(c, m);
    case AGENT_REMOVE:
        return agent_do_remove(c, m);
    case AGENT_CHOWN:
        return agent_do_chown(c, m);
    case AGENT_CREDENTIALS:
        return agent_do_credentials(c, m);
    case AGENT_MOUNT:
        return agent_do_mount(c, m);
    case AGENT_SYNC: /* sync(2) returns once the disks have the data */
        sync();
        return aconn_send(c, AGENT_DONE, NULL, 0);
    case AGENT_WATCH:
        return agent_do_watch(c, m);
    case AGENT_ATTACH:
        return agent_do_attach(c, m);
    case AGENT_CONTAINER_END:
        return agent_do_ctr_end(c, m);
    case AGENT_STDIN:
    case AGENT_STDIN_EOF:
    case AGENT_KILL:
    case AGENT_SIGNAL:
    case AGENT_WINSIZE: /* for a command that has ended: nothing to do */
        return 0;
    default:
        aconn_send_error(c, EPROTO, AGENT_OP_PROTO);
        return -EPROTO;
    }
}

void agent_serve(int fd)
{
    struct aconn *c = calloc(1, sizeof(*c));
    if (!c || agent_reader_init(&c->rd, fd, AGENT_DIR_REQUEST, c->rbuf, sizeof(c->rbuf)) < 0) {
        free(c);
        return;
    }
    uint8_t ready[AGENT_READY_SIZE] = {AGENT_VERSION};
    if (aconn_send(c, AGENT_READY, ready, sizeof(ready)) == 0) {
        for (;;) {
            struct agent_msg m;
            int rc = agent_reader_wait(&c->rd, &m);
            if (rc < 0) {
                /* A malformed request gets a reason before the close. */
                if (rc != -ECONNRESET && rc != -EPIPE)
                    aconn_send_error(c, -rc, AGENT_OP_PROTO);
                break;
            }
            if (serve_one(c, &m) < 0)
                break;
        }
    }
    agent_reader_free(&c->rd);
    free(c);
}

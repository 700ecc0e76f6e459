/* The host's side of a WATCH (guest/agent/proto.h): the request and its
 * verdict by a deadline, then the EVENTs one at a time as the caller's
 * poll loop receives them.  Every EVENT has passed the decoder's checks
 * (agent_watch_codec.c) and is checked here to lie beneath the path asked
 * for, so nothing the guest sends leads a client outside it. */
#include <errno.h>

#include "vmm/agent_client/agent_conn.h"

int agent_watch_begin(int fd, const char *path, uint32_t flags, unsigned wait_ms,
                      struct agent_conn **out)
{
    uint8_t f[AGENT_HDR_SIZE + AGENT_WATCH_FIXED + AGENT_MAX_PATH];
    int rc;
    struct agent_conn *c = ac_ask(fd, f, agent_encode_watch(f, sizeof(f), path, flags), &rc);
    if (!c)
        return rc;
    struct agent_msg m;
    rc = ac_answer_by(c, agent_deadline_ms(wait_ms), &m);
    if (rc == 1)
        rc = m.type == AGENT_DONE ? 0 : m.type == AGENT_ERROR ? -(int)m.u.error.code : -EPROTO;
    if (rc) {
        ac_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int agent_watch_next(struct agent_conn *c, const char *root, struct agent_event *ev)
{
    struct agent_msg m;
    int rc = agent_reader_next(&c->rd, &m);
    if (rc <= 0)
        return rc;
    if (m.type == AGENT_DONE)
        return 2;
    if (m.type != AGENT_EVENT)
        return -EPROTO;
    *ev = m.u.event;
    /* An OVERFLOW may name no path; any other path, and a rename's
     * destination, must be the root or beneath it. */
    if ((ev->path[0] && !agent_watch_beneath(root, ev->path)) ||
        (ev->to[0] && !agent_watch_beneath(root, ev->to)))
        return -EPROTO;
    return 1;
}

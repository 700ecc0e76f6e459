/* The EVENT frames a WATCH has for the host, in a fixed buffer: the agent
 * keeps reading inotify while the host is slow (so the kernel's queue
 * does not overflow first), and what does not fit is reported, never
 * dropped in silence: one OVERFLOW frame where the loss began. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "guest/agent/watch.h"

/* OVERFLOW without a path: header, kind, flags, "" and "". */
#define OVERFLOW_FRAME (AGENT_HDR_SIZE + AGENT_EVENT_FIXED + 2)

void wq_init(struct wqueue *q)
{
    q->head = q->tail = 0;
    q->last = SIZE_MAX;
    q->lost = false;
}

bool wq_empty(const struct wqueue *q)
{
    return q->head == q->tail;
}

/* Room for n more bytes at the tail, moving what waits to the front
 * when that makes it. */
static bool room(struct wqueue *q, size_t n)
{
    if (q->tail + n <= sizeof(q->buf))
        return true;
    if (q->tail - q->head + n > sizeof(q->buf))
        return false;
    memmove(q->buf, q->buf + q->head, q->tail - q->head);
    if (q->last != SIZE_MAX)
        q->last = q->last >= q->head ? q->last - q->head : SIZE_MAX;
    q->tail -= q->head;
    q->head = 0;
    return true;
}

static void append(struct wqueue *q, const uint8_t *f, size_t n)
{
    q->last = q->tail;
    memcpy(q->buf + q->tail, f, n);
    q->tail += n;
}

void wq_push(struct wqueue *q, const struct agent_event *e)
{
    static uint8_t f[AGENT_HDR_SIZE + AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH];
    ssize_t n = agent_encode_event(f, sizeof(f), e);
    if (n < 0)
        return; /* the caller builds only events the codec takes */
    size_t used = q->tail - q->head;
    if (q->lost && used > sizeof(q->buf) / 2)
        return; /* still dropping: the OVERFLOW already says so */
    q->lost = false;
    /* The same news again while the last one still waits (a file written
     * in many small writes): nothing new for the host. */
    if (q->last != SIZE_MAX && q->last >= q->head && q->tail - q->last == (size_t)n &&
        !memcmp(q->buf + q->last, f, (size_t)n))
        return;
    if (room(q, (size_t)n + OVERFLOW_FRAME)) {
        append(q, f, (size_t)n);
        return;
    }
    /* The room kept for it is always there. */
    n = agent_encode_event(f, sizeof(f), &(struct agent_event){AGENT_EVENT_OVERFLOW, 0, "", ""});
    if (n > 0 && room(q, (size_t)n))
        append(q, f, (size_t)n);
    q->lost = true;
}

int wq_flush(struct wqueue *q, int fd)
{
    while (q->head < q->tail) {
        ssize_t n = send(fd, q->buf + q->head, q->tail - q->head, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        q->head += (size_t)n;
    }
    q->head = q->tail = 0;
    q->last = SIZE_MAX;
    return 0;
}

int wq_drain(struct wqueue *q, int fd)
{
    while (!wq_empty(q)) {
        int rc = wq_flush(q, fd);
        if (rc)
            return rc;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (!wq_empty(q) && poll(&p, 1, -1) < 0 && errno != EINTR)
            return -errno;
    }
    return 0;
}

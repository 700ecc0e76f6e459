#include "vmm/sandbox/watch_stream.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/http/http_query.h"
#include "vmm/sandbox/guest_fs.h"

json_t *watch_event_line(const struct agent_event *e)
{
    static const char *const kinds[] = {"create", "write", "remove", "rename", "chmod",
                                        "overflow"};
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(kinds[e->kind <= 5 ? e->kind : 5]));
    if (e->path[0])
        guest_fs_set_text(o, "path", e->path);
    if (e->kind == AGENT_EVENT_RENAME) {
        if (e->to[0])
            guest_fs_set_text(o, "to", e->to);
        else
            json_object_set_new(o, "to", json_null()); /* it left the watch */
    }
    if (e->kind != AGENT_EVENT_OVERFLOW)
        json_object_set_new(o, "dir", json_boolean(e->flags & AGENT_EVENT_F_DIR));
    return o;
}

/* The lines a slow client has not taken yet: a ring with two slots more
 * than WATCH_QUEUE_LINES, one for the overflow line, one for the path's
 * own end, which is never dropped (a reader knows a clean end by it). */
#define RING (WATCH_QUEUE_LINES + 2)
struct lines {
    json_t *l[RING];
    size_t head, n;
    bool lost; /* dropping since the last overflow line */
};

static void lines_add(struct lines *q, json_t *line)
{
    q->l[(q->head + q->n++) % RING] = line;
}

static void lines_push(struct lines *q, json_t *line, bool end, const struct watch_sink *sink,
                       void *ctx)
{
    if (end) { /* one, then DONE: only a lying agent sends more, and loses them */
        if (q->n < RING)
            lines_add(q, line);
        else
            json_decref(line);
        return;
    }
    if (q->lost && q->n > WATCH_QUEUE_LINES / 2) {
        json_decref(line); /* still dropping: the overflow line says so */
        return;
    }
    q->lost = false;
    if (q->n < WATCH_QUEUE_LINES) {
        lines_add(q, line);
        return;
    }
    json_decref(line);
    lines_add(q, sink->overflow(ctx));
    q->lost = true;
}

/* Queued lines to the client while its socket takes them without
 * waiting (all of them, waiting, with `wait`): a client that reads slowly
 * must not stop the agent's events from being read. */
static bool lines_send(struct lines *q, struct api_conn *c, bool wait,
                       const struct watch_sink *sink, void *ctx)
{
    for (; q->n && !c->broken; q->n--) {
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};
        if (!wait && poll(&p, 1, 0) != 1)
            return true;
        json_t *line = q->l[q->head];
        q->head = (q->head + 1) % RING;
        if (!sink->send(ctx, line)) {
            q->n--;
            return false;
        }
    }
    return !c->broken;
}

static void lines_free(struct lines *q)
{
    for (; q->n; q->n--, q->head = (q->head + 1) % RING)
        json_decref(q->l[q->head]);
}

/* Whether path is root itself, root's trailing '/'s aside: the agent's
 * last event, the path's removal or move, names it. */
static bool is_root(const char *root, const char *path)
{
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    return strlen(path) == rl && !strncmp(path, root, rl);
}

/* Every event the agent's bytes so far hold into q: 0 for more, 1 at the
 * watch's end, -errno for a broken stream. */
static int take_events(struct agent_conn *ac, const char *root, struct lines *q,
                       const struct watch_sink *sink, void *ctx)
{
    for (;;) {
        struct agent_event ev;
        int rc = agent_watch_next(ac, root, &ev);
        if (rc != 1)
            return rc == 2 ? 1 : rc;
        bool end = (ev.kind == AGENT_EVENT_REMOVE || ev.kind == AGENT_EVENT_RENAME) &&
                   is_root(root, ev.path);
        json_t *line = sink->line(ctx, &ev);
        if (line)
            lines_push(q, line, end, sink, ctx);
    }
}

int watch_follow(struct api_conn *c, struct agent_conn *ac, const char *root,
                 const struct watch_sink *sink, void *ctx)
{
    /* static __thread: too big for a connection thread's stack */
    static __thread struct lines q;
    q.head = q.n = 0;
    q.lost = false;
    int rc = 0;
    bool stopped = false; /* the sink ended the answer */
    while (!c->broken) {
        /* The agent is read whatever the client does: its events wait
         * here, bounded, rather than in the guest. */
        if ((rc = take_events(ac, root, &q, sink, ctx)) != 0)
            break;
        struct pollfd p[2] = {{.fd = ac->rd.fd, .events = POLLIN},
                              {.fd = c->fd, .events = POLLRDHUP | (q.n ? POLLOUT : 0)}};
        if (poll(p, 2, sink->tick ? 1000 : -1) < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            c->broken = true; /* gone: closing the agent's connection ends the watch */
            break;
        }
        if ((p[1].revents & POLLOUT) && !lines_send(&q, c, false, sink, ctx)) {
            stopped = true;
            break;
        }
        if (sink->tick && !sink->tick(ctx)) {
            stopped = true;
            break;
        }
        if (p[0].revents && (rc = agent_reader_fill(&ac->rd)) < 0)
            break;
        rc = 0;
    }
    if (!c->broken && !stopped && !lines_send(&q, c, true, sink, ctx))
        stopped = true;
    lines_free(&q);
    if (c->broken || stopped)
        return 1;
    sink->end(ctx, rc == 1 ? 0 : rc);
    return rc == 1 ? 0 : rc;
}

/* /v1's sink: JSON lines. */
static json_t *v1_line(void *ctx, const struct agent_event *e)
{
    (void)ctx;
    return watch_event_line(e);
}

static bool v1_send(void *ctx, json_t *line)
{
    struct api_conn *c = ctx;
    api_stream_line(c, line);
    return !c->broken;
}

static json_t *v1_overflow(void *ctx)
{
    (void)ctx;
    return json_pack("{s:s}", "type", "overflow");
}

static void v1_end(void *ctx, int rc)
{
    if (rc == 0)
        api_stream_end(ctx);
    else
        api_chunked_abort(ctx);
}

int watch_stream(struct api_conn *c, struct agent_conn *ac, const char *root)
{
    static const struct watch_sink sink = {v1_line, v1_send, v1_overflow, NULL, v1_end};
    api_stream_begin(c, 200);
    return watch_follow(c, ac, root, &sink, c);
}

/* A watch holds the lease while it is open, as a command does: delta +1
 * at its start (0 past WATCH_MAX: refused), -1 at its end. */
bool watch_lease_hold(struct registry *reg, struct sandbox *sb, int delta)
{
    pthread_mutex_lock(&reg->lock);
    bool ok = delta < 0 || sb->watches < WATCH_MAX;
    if (ok)
        sb->watches = (unsigned)((int)sb->watches + delta);
    sb->last_used_mono_ms = agent_mono_ms();
    pthread_mutex_unlock(&reg->lock);
    return ok;
}

void watch_get(struct api_conn *c, struct registry *reg, struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    bool recursive = false;
    if (guest_fs_path(c, path))
        return;
    if (query_bool(c->req.target, "recursive", &recursive) < 0)
        return api_error(c, 400, "recursive", "recursive: want true or false");
    if (!watch_lease_hold(reg, sb, 1))
        return api_error(c, 503, NULL, "%d watches are open on this sandbox already",
                         WATCH_MAX);
    int agent = guest_fs_dial(c, sb);
    struct agent_conn *ac = NULL;
    int rc = agent < 0 ? 0
             : agent_watch_begin(agent, path, recursive ? AGENT_WATCH_F_RECURSIVE : 0,
                                 GUEST_FS_WAIT_S * 1000, &ac);
    if (rc == -EMFILE || rc == -ENOSPC)
        api_error(c, 503, NULL, "%.1000s: the guest's inotify limits are reached (%s)", path,
                  strerror(-rc));
    else if (rc)
        guest_fs_error(c, path, -rc);
    else if (ac)
        watch_stream(c, ac, path);
    if (ac)
        ac_free(ac);
    if (agent >= 0)
        close(agent);
    watch_lease_hold(reg, sb, -1);
}

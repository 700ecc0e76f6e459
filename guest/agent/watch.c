/* WATCH (proto.h): a path's changes, from inotify, as EVENT frames until
 * the host closes the connection or the path goes away.  One connection
 * is one process, so the state is static; closing the inotify fd at the
 * end drops every watch it holds.
 *
 * A recursive watch has one inotify watch per folder (watch_walk.c adds
 * them, for folders made or moved in later too).  A folder's own events
 * come once, by name, from its parent's watch; its own watch's nameless
 * events only tell that it went (IN_IGNORED).  IN_MOVED_FROM and
 * IN_MOVED_TO are paired by cookie into one RENAME. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guest/agent/agent.h"
#include "guest/agent/watch.h"

#define FILE_MASK (IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
/* IN_MOVED_FROM and its IN_MOVED_TO are queued one after the other, but a
 * read may fall between them: this long for the second before the rename
 * is reported without a destination. */
#define RENAME_WAIT_MS 50

void watch_push(struct watch *w, uint32_t kind, bool dir, const char *path, const char *to)
{
    struct agent_event e = {kind, dir ? AGENT_EVENT_F_DIR : 0, path, to ? to : ""};
    wq_push(&w->q, &e);
}

/* A rename whose destination did not come: it left the watch. */
static void flush_rename(struct watch *w)
{
    if (!w->pending)
        return;
    w->pending = false;
    watch_push(w, AGENT_EVENT_RENAME, w->pending_dir, w->from, NULL);
    if (w->pending_dir)
        wtree_cut(&w->tree, w->ino, w->from);
}

/* The root's own events (no name): its attributes, or its end. */
static void root_event(struct watch *w, uint32_t mask)
{
    if (mask & IN_ATTRIB)
        watch_push(w, AGENT_EVENT_CHMOD, w->root_dir, w->root, NULL);
    if (mask & IN_MODIFY)
        watch_push(w, AGENT_EVENT_WRITE, false, w->root, NULL);
    /* The end is not queued: it goes after everything queued, even when
     * the queue is dropping (watch_loop), so a reader always sees it. */
    if (mask & IN_MOVE_SELF) {
        w->final = AGENT_EVENT_RENAME;
        w->ended = true;
    } else if (mask & (IN_DELETE_SELF | IN_UNMOUNT | IN_IGNORED)) {
        w->final = AGENT_EVENT_REMOVE;
        w->ended = true;
    }
}

static void on_event(struct watch *w, const struct inotify_event *ev)
{
    if (ev->mask & IN_Q_OVERFLOW) {
        flush_rename(w);
        watch_push(w, AGENT_EVENT_OVERFLOW, false, "", NULL);
        return;
    }
    bool named = ev->len && ev->name[0];
    if (ev->wd == w->root_wd && !named) {
        flush_rename(w);
        root_event(w, ev->mask);
        return;
    }
    const char *dir = wtree_path(&w->tree, ev->wd);
    if (!dir)
        return; /* a watch dropped already, with events still queued */
    if (!named) {
        if (ev->mask & IN_IGNORED)
            wtree_drop(&w->tree, ev->wd);
        return;
    }
    static char path[AGENT_MAX_PATH];
    if (wtree_join(path, dir, ev->name)) {
        watch_push(w, AGENT_EVENT_OVERFLOW, false, dir, NULL);
        return;
    }
    bool isdir = ev->mask & IN_ISDIR;
    if (w->pending && (ev->mask & IN_MOVED_TO) && ev->cookie == w->cookie) {
        w->pending = false;
        watch_push(w, AGENT_EVENT_RENAME, isdir, w->from, path);
        if (isdir && wtree_move(&w->tree, w->ino, w->from, path))
            watch_push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
        /* A folder made in it just before, whose IN_CREATE came when the
         * old name was already gone, is watched only now. */
        if (isdir && w->recursive)
            watch_walk(w, path, true, true);
        return;
    }
    flush_rename(w);
    if (ev->mask & IN_MOVED_FROM) {
        w->pending = true;
        w->cookie = ev->cookie;
        w->pending_dir = isdir;
        memcpy(w->from, path, sizeof(w->from));
    } else if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
        watch_push(w, AGENT_EVENT_CREATE, isdir, path, NULL);
        if (isdir && w->recursive)
            watch_walk(w, path, true, false);
    } else if (ev->mask & IN_MODIFY) {
        watch_push(w, AGENT_EVENT_WRITE, false, path, NULL);
    } else if (ev->mask & IN_ATTRIB) {
        watch_push(w, AGENT_EVENT_CHMOD, isdir, path, NULL);
    } else if (ev->mask & IN_DELETE) {
        watch_push(w, AGENT_EVENT_REMOVE, isdir, path, NULL);
    }
}

/* Everything inotify has now: 0, or -errno. */
static int read_events(struct watch *w)
{
    static char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(w->ino, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? 0 : -errno;
        for (char *p = buf; p < buf + n && !w->ended;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            on_event(w, ev);
            p += sizeof(*ev) + ev->len;
        }
        if (w->ended)
            return 0;
    }
}

/* The host's side while watching: it sends nothing, and its close ends
 * the watch.  0 while it is there; -ECONNRESET once it closed, -EPROTO
 * for a byte it sent. */
static int host_gone(struct aconn *c)
{
    char b;
    ssize_t n = recv(c->rd.fd, &b, 1, MSG_DONTWAIT);
    if (n == 0)
        return -ECONNRESET;
    if (n > 0)
        return -EPROTO;
    return errno == EAGAIN || errno == EINTR ? 0 : -errno;
}

static int watch_loop(struct aconn *c, struct watch *w)
{
    while (!w->ended) {
        struct pollfd p[2] = {{.fd = w->ino, .events = POLLIN},
                              {.fd = w->sock, .events = POLLIN | POLLRDHUP |
                                                         (wq_empty(&w->q) ? 0 : POLLOUT)}};
        int n = poll(p, 2, w->pending ? RENAME_WAIT_MS : -1);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n == 0)
            flush_rename(w);
        if (p[1].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
            int rc = host_gone(c);
            if (rc)
                return rc;
        }
        if (p[0].revents) {
            int rc = read_events(w);
            if (rc)
                return rc;
        }
        int rc = wq_flush(&w->q, w->sock);
        if (rc)
            return rc;
    }
    flush_rename(w);
    int rc = wq_drain(&w->q, w->sock);
    static uint8_t f[AGENT_EVENT_FIXED + 2 * AGENT_MAX_PATH];
    struct agent_event e = {w->final, w->root_dir ? AGENT_EVENT_F_DIR : 0, w->root, ""};
    size_t n = agent_event_payload(f, &e);
    if (!rc && n)
        rc = aconn_send(c, AGENT_EVENT, f, n);
    return rc ? rc : aconn_send(c, AGENT_DONE, NULL, 0);
}

/* The root's watch: a folder, or else a file. */
static int watch_root(struct watch *w)
{
    w->root_wd = inotify_add_watch(w->ino, w->root, WATCH_DIR_MASK);
    w->root_dir = w->root_wd >= 0;
    if (w->root_wd < 0 && errno == ENOTDIR)
        w->root_wd = inotify_add_watch(w->ino, w->root, FILE_MASK);
    return w->root_wd < 0 ? errno : 0;
}

int agent_do_watch(struct aconn *c, const struct agent_msg *m)
{
    /* static: the queue is too big for a stack; a watch that ended leaves
     * nothing behind for the next on this connection */
    static struct watch w;
    w.sock = c->rd.fd;
    w.recursive = m->u.watch.flags & AGENT_WATCH_F_RECURSIVE;
    w.ended = w.pending = false;
    w.tree = (struct wtree){0};
    wq_init(&w.q);
    memcpy(w.root, m->u.watch.path, strlen(m->u.watch.path) + 1);
    for (size_t l = strlen(w.root); l > 1 && w.root[l - 1] == '/'; l--)
        w.root[l - 1] = 0;
    if (c->rd.pos < c->rd.len) /* a frame after the WATCH: the host broke the rules */
        return -EPROTO;
    w.ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int e = w.ino < 0 ? errno : watch_root(&w);
    if (!e)
        e = -wtree_set(&w.tree, w.root_wd, w.root); /* its named events are looked up */
    if (!e && w.recursive && w.root_dir)
        watch_walk(&w, w.root, false, true);
    int rc = e ? aconn_send_error(c, e, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
    if (!e && !rc)
        rc = watch_loop(c, &w);
    if (w.ino >= 0)
        close(w.ino);
    wtree_free(&w.tree);
    return rc;
}

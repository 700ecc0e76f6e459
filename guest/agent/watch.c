/* WATCH (proto.h): a path's changes, from inotify, as EVENT frames until
 * the host closes the connection or the path goes away.  One connection
 * is one process, so the state is static; closing the inotify fd at the
 * end drops every watch it holds.
 *
 * inotify watches one folder per watch descriptor, so a recursive watch
 * adds one for each subfolder, and one for each folder made (or moved in)
 * later, which it then reads: a file made in a folder before its watch
 * was added is reported as created from that read, never missed (one
 * made in between is reported twice).  A folder's own events come once,
 * by name, from its parent's watch; its own watch's nameless events only
 * tell that it went (IN_IGNORED). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "guest/agent/agent.h"
#include "guest/agent/watch.h"

#define DIR_MASK (IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
                  IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK | IN_ONLYDIR)
#define FILE_MASK (IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
/* IN_MOVED_FROM and its IN_MOVED_TO are queued one after the other, but a
 * read may fall between them: this long for the second before the rename
 * is reported without a destination. */
#define RENAME_WAIT_MS 50

struct watch {
    int ino, sock;
    bool recursive, root_dir, ended;
    uint32_t final;            /* with ended: REMOVE or RENAME of the root */
    int root_wd;
    char root[AGENT_MAX_PATH]; /* as the host sent it, trailing '/'s dropped */
    struct wtree tree;
    struct wqueue q;
    /* an IN_MOVED_FROM waiting for its IN_MOVED_TO */
    bool pending;
    uint32_t cookie;
    bool pending_dir;
    char from[AGENT_MAX_PATH];
};

static void push(struct watch *w, uint32_t kind, bool dir, const char *path, const char *to)
{
    struct agent_event e = {kind, dir ? AGENT_EVENT_F_DIR : 0, path, to ? to : ""};
    wq_push(&w->q, &e);
}

/* Kernel filesystems whose files change without inotify events: a
 * recursive watch does not walk into them. */
static bool pseudo_fs(const char *path)
{
    struct statfs s;
    return statfs(path, &s) == 0 &&
           (s.f_type == PROC_SUPER_MAGIC || s.f_type == SYSFS_MAGIC ||
            s.f_type == DEBUGFS_MAGIC || s.f_type == TRACEFS_MAGIC ||
            s.f_type == CGROUP_SUPER_MAGIC || s.f_type == CGROUP2_SUPER_MAGIC);
}

/* A subfolder's watch (no symlink followed to get there); false when it
 * is not watched.  One the watch cannot take is an OVERFLOW naming it:
 * its events will be missed. */
static bool add_dir(struct watch *w, const char *path)
{
    if (pseudo_fs(path))
        return false;
    int wd = inotify_add_watch(w->ino, path, DIR_MASK | IN_DONT_FOLLOW);
    if (wd < 0) {
        if (errno != ENOENT && errno != ENOTDIR) /* gone already: its removal is reported */
            push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
        return false;
    }
    if (wd == w->root_wd)
        return false; /* a link back to the root through a bind mount */
    if (wtree_set(&w->tree, wd, path)) {
        if (!wtree_path(&w->tree, wd))
            inotify_rm_watch(w->ino, wd);
        push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
        return false;
    }
    return true;
}

/* Whether name in dirfd is a folder (not a link to one). */
static bool is_dir(int dirfd, const struct dirent *de)
{
    if (de->d_type != DT_UNKNOWN)
        return de->d_type == DT_DIR;
    struct stat st;
    return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Reads the folder `top` (watched already) and, breadth first, each
 * subfolder found, adding its watch before reading it; with `report`
 * every entry found is a CREATE (a folder made or moved in).  A work list
 * rather than recursion: depth costs neither stack nor open folders, and
 * the list is bounded by the folders watched. */
static void scan(struct watch *w, const char *top, bool report)
{
    size_t n = 0, cap = 16;
    char **todo = malloc(cap * sizeof(*todo));
    char *first = strdup(top);
    if (!todo || !first) {
        free(todo);
        free(first);
        push(w, AGENT_EVENT_OVERFLOW, false, top, NULL);
        return;
    }
    todo[n++] = first;
    static char child[AGENT_MAX_PATH];
    while (n) {
        char *dir = todo[--n];
        DIR *d = opendir(dir);
        if (!d && errno != ENOENT && errno != ENOTDIR) /* not gone: unreadable */
            push(w, AGENT_EVENT_OVERFLOW, false, dir, NULL);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            if (wtree_join(child, dir, de->d_name)) {
                push(w, AGENT_EVENT_OVERFLOW, false, dir, NULL);
                continue;
            }
            bool sub = is_dir(dirfd(d), de);
            if (report)
                push(w, AGENT_EVENT_CREATE, sub, child, NULL);
            if (!sub || !add_dir(w, child))
                continue;
            if (n == cap) {
                char **more = realloc(todo, 2 * cap * sizeof(*todo));
                if (!more) {
                    push(w, AGENT_EVENT_OVERFLOW, false, child, NULL);
                    continue;
                }
                todo = more;
                cap *= 2;
            }
            if (!(todo[n] = strdup(child)))
                push(w, AGENT_EVENT_OVERFLOW, false, child, NULL);
            else
                n++;
        }
        if (d)
            closedir(d);
        free(dir);
    }
    free(todo);
}

/* A rename whose destination did not come: it left the watch. */
static void flush_rename(struct watch *w)
{
    if (!w->pending)
        return;
    w->pending = false;
    push(w, AGENT_EVENT_RENAME, w->pending_dir, w->from, NULL);
    if (w->pending_dir)
        wtree_cut(&w->tree, w->ino, w->from);
}

/* A folder that appeared inside a recursive watch. */
static void new_dir(struct watch *w, const char *path)
{
    if (w->recursive && add_dir(w, path))
        scan(w, path, true);
}

/* The root's own events (no name): its attributes, or its end. */
static void root_event(struct watch *w, uint32_t mask)
{
    if (mask & IN_ATTRIB)
        push(w, AGENT_EVENT_CHMOD, w->root_dir, w->root, NULL);
    if (mask & IN_MODIFY)
        push(w, AGENT_EVENT_WRITE, false, w->root, NULL);
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
        push(w, AGENT_EVENT_OVERFLOW, false, "", NULL);
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
        push(w, AGENT_EVENT_OVERFLOW, false, dir, NULL);
        return;
    }
    bool isdir = ev->mask & IN_ISDIR;
    if (w->pending && (ev->mask & IN_MOVED_TO) && ev->cookie == w->cookie) {
        w->pending = false;
        push(w, AGENT_EVENT_RENAME, isdir, w->from, path);
        if (isdir && wtree_move(&w->tree, w->ino, w->from, path))
            push(w, AGENT_EVENT_OVERFLOW, false, path, NULL);
        return;
    }
    flush_rename(w);
    if (ev->mask & IN_MOVED_FROM) {
        w->pending = true;
        w->cookie = ev->cookie;
        w->pending_dir = isdir;
        memcpy(w->from, path, sizeof(w->from));
    } else if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
        push(w, AGENT_EVENT_CREATE, isdir, path, NULL);
        if (isdir)
            new_dir(w, path);
    } else if (ev->mask & IN_MODIFY) {
        push(w, AGENT_EVENT_WRITE, false, path, NULL);
    } else if (ev->mask & IN_ATTRIB) {
        push(w, AGENT_EVENT_CHMOD, isdir, path, NULL);
    } else if (ev->mask & IN_DELETE) {
        push(w, AGENT_EVENT_REMOVE, isdir, path, NULL);
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
    w->root_wd = inotify_add_watch(w->ino, w->root, DIR_MASK);
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
        scan(&w, w.root, false);
    int rc = e ? aconn_send_error(c, e, AGENT_OP_FILE) : aconn_send(c, AGENT_DONE, NULL, 0);
    if (!e && !rc)
        rc = watch_loop(c, &w);
    if (w.ino >= 0)
        close(w.ino);
    wtree_free(&w.tree);
    return rc;
}

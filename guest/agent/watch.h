/* The agent's WATCH (proto.h) in three parts: the folders being watched
 * (watch_tree.c: inotify's watch descriptors and the path each stands
 * for), the frames waiting for the host (watch_queue.c: bounded, a loss
 * reported as OVERFLOW), and the loop that turns inotify's events into
 * EVENTs (watch.c). */
#ifndef AIRLOCK_GUEST_AGENT_WATCH_H
#define AIRLOCK_GUEST_AGENT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/inotify.h>

#include "vmm/agent_client/agent_client.h"

/* ---- watch_tree.c ---- */

/* Watch descriptor -> the path its folder has now (as the host sees it:
 * the root as sent, then names), kept sorted by wd: at most
 * AGENT_WATCH_MAX_DIRS entries. */
struct wtree_ent {
    int wd;
    char *path;
};
struct wtree {
    struct wtree_ent *e;
    size_t n, cap;
};

/* The path of wd, or NULL for one not (or no longer) watched. */
const char *wtree_path(const struct wtree *t, int wd);
/* wd now stands for path (a copy): 0, -ENOSPC past AGENT_WATCH_MAX_DIRS,
 * -ENOMEM. */
int wtree_set(struct wtree *t, int wd, const char *path);
void wtree_drop(struct wtree *t, int wd);
/* A folder renamed inside the watch: every entry at `from` or beneath it
 * is put at `to` instead.  An entry whose new path would be too long
 * stops being watched (inotify_rm_watch on ino): how many did. */
size_t wtree_move(struct wtree *t, int ino, const char *from, const char *to);
/* A folder that left the watch: every entry at `path` or beneath it stops
 * being watched (its IN_IGNORED, still to come, then finds nothing). */
void wtree_cut(struct wtree *t, int ino, const char *path);
void wtree_free(struct wtree *t);
/* dir + "/" + name into out (AGENT_MAX_PATH bytes; dir "/" gives
 * "/name"): 0, or -ENAMETOOLONG. */
int wtree_join(char *out, const char *dir, const char *name);

/* ---- watch_queue.c ---- */

/* The frames waiting for the host.  An event that does not fit is
 * dropped and an OVERFLOW frame takes its place (room for one is always
 * kept); events are then dropped until the host has taken half of what
 * waits, so a flood gives one OVERFLOW per stall, not one per event. */
struct wqueue {
    uint8_t buf[AGENT_WATCH_QUEUE];
    size_t head, tail; /* buf[head, tail) waits */
    size_t last;       /* where the last frame pushed starts (coalescing) */
    bool lost;         /* dropping since the last OVERFLOW */
};

void wq_init(struct wqueue *q);
bool wq_empty(const struct wqueue *q);
/* Queues one EVENT frame; an event identical to the frame pushed last,
 * still unsent, is dropped as the same news (the kernel coalesces the
 * same way). */
void wq_push(struct wqueue *q, const struct agent_event *e);
/* Sends what the socket takes now without waiting: 0, or -errno. */
int wq_flush(struct wqueue *q, int fd);
/* Sends all of it, waiting: 0, or -errno. */
int wq_drain(struct wqueue *q, int fd);

/* ---- watch.c: one watch's state ---- */

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

/* One event for the host (to: NULL for none). */
void watch_push(struct watch *w, uint32_t kind, bool dir, const char *path, const char *to);

/* ---- watch_walk.c ---- */

/* The folders a watch needs, as inotify has them (the mask of a folder's
 * watch). */
#define WATCH_DIR_MASK (IN_CREATE | IN_MODIFY | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | \
                        IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK | IN_ONLYDIR)

/* The folder at `path` and, depth first, the folders in it: each one not
 * watched yet gets its watch, then is read, and with `report` what it
 * holds is reported as created (a folder made or moved in: what was made
 * in it before its watch is not missed).  With `known`, folders watched
 * already are walked too: after a folder was renamed, one made in it
 * under its old name, which could not be watched then, is found.  A
 * folder that cannot be watched or read is an OVERFLOW naming it. */
void watch_walk(struct watch *w, const char *path, bool report, bool known);

#endif

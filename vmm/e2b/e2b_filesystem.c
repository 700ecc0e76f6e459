#include "vmm/e2b/e2b_filesystem.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_conn.h"
#include "vmm/e2b/connect_call.h"
#include "vmm/e2b/e2b_fs_entry.h"
#include "vmm/e2b/e2b_user.h"
#include "vmm/e2b/proto_json.h"
#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_ops.h"
#include "vmm/sandbox/sandbox_life.h"
#include "vmm/sandbox/watch_stream.h"

/* One call's context: the user, an agent connection, the guest's names. */
struct fs_call {
    struct api_server *srv;
    struct connect_call *k;
    struct sandbox *sb;
    struct e2b_user u;
    int agent;
    struct e2b_names names;
    bool names_loaded;
};

static int fs_begin(struct fs_call *f)
{
    if (e2b_user_resolve(f->k->c, f->sb, &f->u))
        return -1;
    f->agent = guest_fs_dial(f->k->c, f->sb);
    return f->agent < 0 ? -1 : 0;
}

static void fs_end(struct fs_call *f)
{
    if (f->agent >= 0)
        close(f->agent);
    e2b_names_free(&f->names);
}

/* A path field of msg made absolute for the user; -1 with the error
 * answered. */
static int path_field(struct fs_call *f, const json_t *msg, const char *camel, const char *snake,
                      char out[AGENT_MAX_PATH])
{
    bool bad = false;
    const char *p = pj_string(pj_field(msg, camel, snake), &bad);
    char abs[AGENT_MAX_PATH];
    if (bad || !p || !p[0]) {
        connect_fail(f->k, "invalid_argument", "%s: want a path", camel);
        return -1;
    }
    if (memchr(p, '\0', strlen(p) + 1) != p + strlen(p) || e2b_user_path(&f->u, p, abs, sizeof(abs)) ||
        e2b_clean_path(abs, out, AGENT_MAX_PATH)) {
        connect_fail(f->k, "invalid_argument", "%s: too long", camel);
        return -1;
    }
    return 0;
}

/* The guest's errno about path as envd's code. */
static void fs_error(struct fs_call *f, const char *path, int e)
{
    char p[1100];
    snprintf(p, sizeof(p), "%.1000s", path);
    if (e == ENOENT)
        connect_fail(f->k, "not_found", "path not found: %s", p);
    else if (e == EACCES || e == EPERM)
        connect_fail(f->k, "permission_denied", "%s: %s", p, strerror(e));
    else if (e == ENOTDIR)
        connect_fail(f->k, "invalid_argument", "path is not a directory: %s", p);
    else if (e == EEXIST || e == ENOTEMPTY)
        connect_fail(f->k, "already_exists", "%s: %s", p, strerror(e));
    else
        guest_fs_error(f->k->c, path, e); /* transport and the rest, through the hook */
}

/* EntryInfo of path as the agent's STAT sees it; NULL with the error
 * answered. */
static json_t *stat_entry(struct fs_call *f, const char *path)
{
    char target[AGENT_MAX_PATH];
    struct agent_entry e;
    int rc = agent_stat(f->agent, path, &e, target);
    if (rc) {
        fs_error(f, path, -rc);
        return NULL;
    }
    if (!f->names_loaded && !e2b_names_load(f->agent, &f->names))
        f->names_loaded = true;
    return e2b_entry_info(&f->names, path, &e);
}

/* Whether path is a folder: 1, 0 with invalid_argument answered, -1 with
 * its stat's error answered. */
static int is_dir(struct fs_call *f, const char *path)
{
    json_t *self = stat_entry(f, path);
    if (!self)
        return -1;
    bool dir = !strcmp(json_string_value(json_object_get(self, "type")), "FILE_TYPE_DIRECTORY");
    json_decref(self);
    if (!dir)
        connect_fail(f->k, "invalid_argument", "path is not a directory: %.1000s", path);
    return dir;
}

static void stat_call(struct fs_call *f, const json_t *msg)
{
    char path[AGENT_MAX_PATH];
    if (path_field(f, msg, "path", NULL, path))
        return;
    json_t *e = stat_entry(f, path);
    if (e)
        connect_send(f->k, json_pack("{s:o}", "entry", e));
}

static void make_dir(struct fs_call *f, const json_t *msg)
{
    char path[AGENT_MAX_PATH];
    if (path_field(f, msg, "path", NULL, path))
        return;
    bool made = false;
    int rc = guest_mkdir(f->agent, path, 0755, (struct guest_owner){f->u.uid, f->u.gid}, true,
                         &made);
    if (rc == -EEXIST || rc == -ENOTDIR)
        return connect_fail(f->k, "invalid_argument", "path is a file: %.1000s", path);
    if (rc)
        return fs_error(f, path, -rc);
    if (!made)
        return connect_fail(f->k, "already_exists", "directory already exists: %.1000s", path);
    json_t *e = stat_entry(f, path);
    if (e)
        connect_send(f->k, json_pack("{s:o}", "entry", e));
}

static void move(struct fs_call *f, const json_t *msg)
{
    char from[AGENT_MAX_PATH], to[AGENT_MAX_PATH], dir[AGENT_MAX_PATH];
    if (path_field(f, msg, "source", NULL, from) || path_field(f, msg, "destination", NULL, to))
        return;
    struct agent_entry st;
    char target[AGENT_MAX_PATH];
    int rc = agent_stat(f->agent, from, &st, target); /* a missing source before any folder */
    guest_parent(to, dir);
    if (!rc && strcmp(dir, "/"))
        rc = guest_mkdir(f->agent, dir, 0755, (struct guest_owner){f->u.uid, f->u.gid}, true, NULL);
    if (!rc)
        rc = guest_move(f->agent, from, to, false);
    if (rc == -EBUSY)
        return connect_fail(f->k, "invalid_argument", "the root folder is not moved");
    if (rc)
        return fs_error(f, rc == -ENOENT ? from : to, -rc);
    json_t *e = stat_entry(f, to);
    if (e)
        connect_send(f->k, json_pack("{s:o}", "entry", e));
}

struct list_ctx {
    struct fs_call *f;
    const char *root;
    json_t *entries;
};

static int list_one(void *opaque, const char *rel, const struct agent_entry *e)
{
    struct list_ctx *l = opaque;
    char path[AGENT_MAX_PATH];
    if (snprintf(path, sizeof(path), "%s%s%s", l->root, strcmp(l->root, "/") ? "/" : "", rel) >=
        (int)sizeof(path))
        return 0;
    json_t *o = e2b_entry_info(&l->f->names, path, e);
    if (o)
        json_array_append_new(l->entries, o);
    return 0;
}

static void list_dir(struct fs_call *f, const json_t *msg)
{
    char path[AGENT_MAX_PATH];
    uint32_t depth;
    if (path_field(f, msg, "path", NULL, path))
        return;
    if (pj_uint32(pj_field(msg, "depth", NULL), 1, &depth))
        return connect_fail(f->k, "invalid_argument", "depth: want a number");
    if (depth < 1)
        depth = 1;
    if (is_dir(f, path) != 1)
        return;
    struct list_ctx l = {f, path, json_array()};
    int rc = guest_list(f->agent, path, depth > GUEST_LIST_MAX_DEPTH ? GUEST_LIST_MAX_DEPTH : depth,
                        list_one, &l);
    if (rc == -E2BIG) {
        json_decref(l.entries);
        return connect_fail(f->k, "resource_exhausted", "%.1000s: more than %d entries", path,
                            GUEST_LIST_MAX_ENTRIES);
    }
    if (rc) {
        json_decref(l.entries);
        return fs_error(f, path, -rc);
    }
    connect_send(f->k, json_pack("{s:o}", "entries", l.entries));
}

static void remove_call(struct fs_call *f, const json_t *msg)
{
    char path[AGENT_MAX_PATH];
    if (path_field(f, msg, "path", NULL, path))
        return;
    int rc = guest_remove(f->agent, path, true);
    if (rc == -EBUSY)
        return connect_fail(f->k, "invalid_argument", "the root folder is not removed");
    if (rc && rc != -ENOENT) /* envd removes as os.RemoveAll does: nothing there is fine */
        return fs_error(f, path, -rc);
    connect_send(f->k, json_object());
}

/* ---- WatchDir ---- */

struct watcher {
    struct fs_call *f;
    const char *root;
    int64_t keepalive_ms, last_ms;
    bool lost; /* an overflow ended it */
};

static json_t *fs_event(const char *name, const char *type)
{
    return json_pack("{s:{s:s,s:s}}", "filesystem", "name", name, "type", type);
}

static bool text_ok(const char *s)
{
    json_t *j = json_string(s);
    json_decref(j);
    return j != NULL;
}

/* The event's path below the watched folder ("" for the folder itself). */
static const char *rel_of(const struct watcher *w, const char *path)
{
    size_t rl = strlen(w->root);
    if (!strcmp(w->root, "/"))
        return path + 1;
    return strlen(path) > rl ? path + rl + 1 : "";
}

static json_t *w_line(void *ctx, const struct agent_event *e)
{
    struct watcher *w = ctx;
    static const char *const types[] = {"EVENT_TYPE_CREATE", "EVENT_TYPE_WRITE",
                                        "EVENT_TYPE_REMOVE", "EVENT_TYPE_RENAME",
                                        "EVENT_TYPE_CHMOD"};
    if (e->kind == AGENT_EVENT_OVERFLOW)
        return json_pack("{s:b}", "overflow", 1);
    json_t *a = json_array();
    if (!text_ok(rel_of(w, e->path))) { /* a name JSON cannot carry: said so */
        json_decref(a);
        return json_pack("{s:b}", "overflow", 1);
    }
    json_array_append_new(a, fs_event(rel_of(w, e->path), types[e->kind <= 4 ? e->kind : 0]));
    /* fsnotify's way: a rename inside the watch is the old name's RENAME
     * and the new name's CREATE */
    if (e->kind == AGENT_EVENT_RENAME && e->to[0] && text_ok(rel_of(w, e->to)))
        json_array_append_new(a, fs_event(rel_of(w, e->to), "EVENT_TYPE_CREATE"));
    return a;
}

static bool w_send(void *ctx, json_t *item)
{
    struct watcher *w = ctx;
    if (json_object_get(item, "overflow")) {
        json_decref(item);
        w->lost = true;
        connect_fail(w->f->k, "data_loss", "the watch lost events (the guest's queue or ours "
                     "overflowed): start a new one and list the folder again");
        return false;
    }
    size_t i;
    json_t *m;
    json_array_foreach(item, i, m) connect_send(w->f->k, json_incref(m));
    json_decref(item);
    w->last_ms = agent_mono_ms();
    return !w->f->k->c->broken;
}

static json_t *w_overflow(void *ctx)
{
    (void)ctx;
    return json_pack("{s:b}", "overflow", 1);
}

static bool w_tick(void *ctx)
{
    struct watcher *w = ctx;
    int64_t now = agent_mono_ms();
    if (w->f->k->deadline_ms && now >= w->f->k->deadline_ms) {
        connect_fail(w->f->k, "deadline_exceeded", "the call's Connect-Timeout-Ms passed");
        return false;
    }
    if (w->keepalive_ms && now - w->last_ms >= w->keepalive_ms) {
        connect_send(w->f->k, json_pack("{s:{}}", "keepalive"));
        w->last_ms = now;
    }
    return !w->f->k->c->broken;
}

static void w_end(void *ctx, int rc)
{
    struct watcher *w = ctx;
    if (rc == 0)
        connect_end(w->f->k); /* the folder itself went */
    else
        connect_cut(w->f->k);
}

static void watch_dir(struct fs_call *f, const json_t *msg)
{
    char path[AGENT_MAX_PATH];
    bool bad = false;
    if (path_field(f, msg, "path", NULL, path))
        return;
    bool recursive = pj_bool(pj_field(msg, "recursive", NULL), false, &bad);
    if (bad)
        return connect_fail(f->k, "invalid_argument", "recursive: want a bool");
    if (is_dir(f, path) != 1)
        return;
    if (!watch_lease_hold(&f->srv->reg, f->sb, 1))
        return connect_fail(f->k, "resource_exhausted", "%d watches are open on this sandbox "
                            "already", WATCH_MAX);
    int agent = guest_fs_dial(f->k->c, f->sb);
    struct agent_conn *ac = NULL;
    int rc = agent < 0 ? 0
             : agent_watch_begin(agent, path, recursive ? AGENT_WATCH_F_RECURSIVE : 0,
                                 GUEST_FS_WAIT_S * 1000, &ac);
    if (rc == -EMFILE || rc == -ENOSPC)
        connect_fail(f->k, "resource_exhausted", "%.1000s: the guest's inotify limits are "
                     "reached (%s)", path, strerror(-rc));
    else if (rc)
        fs_error(f, path, -rc);
    else if (ac) {
        char ka[16];
        struct watcher w = {f, path, 0, agent_mono_ms(), false};
        if (api_header(f->k->c, "Keepalive-Ping-Interval", ka, sizeof(ka)) == 1 && atoi(ka) > 0)
            w.keepalive_ms = (int64_t)atoi(ka) * 1000;
        static const struct watch_sink sink = {w_line, w_send, w_overflow, w_tick, w_end};
        connect_send(f->k, json_pack("{s:{}}", "start"));
        if (watch_follow(f->k->c, ac, path, &sink, &w) == 1 && !f->k->ended)
            connect_cut(f->k); /* the client left */
    }
    if (ac)
        ac_free(ac);
    if (agent >= 0)
        close(agent);
    watch_lease_hold(&f->srv->reg, f->sb, -1);
}

void e2b_filesystem(struct api_server *srv, struct api_conn *c, struct sandbox *sb,
                    const char *method)
{
    struct connect_call k;
    json_t *msg;
    if (connect_call_open(&k, c, &msg)) {
        connect_call_close(&k);
        return;
    }
    static const char *const unary[] = {"Stat", "MakeDir", "Move", "ListDir", "Remove"};
    static void (*const fns[])(struct fs_call *, const json_t *) = {stat_call, make_dir, move,
                                                                     list_dir, remove_call};
    int which = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(method, unary[i]))
            which = i;
    bool watch = !strcmp(method, "WatchDir");
    struct fs_call f = {.srv = srv, .k = &k, .sb = sb, .agent = -1};
    if (which < 0 && !watch)
        connect_fail(&k, "unimplemented", "filesystem.Filesystem/%.64s is not served by airlock "
                     "(the polling watchers: use WatchDir)", method);
    else if (watch != k.stream)
        connect_fail(&k, "invalid_argument", "filesystem.Filesystem/%s is a %s call", method,
                     watch ? "server-streaming (application/connect+json)"
                           : "unary (application/json)");
    else if (!fs_begin(&f))
        (watch ? watch_dir : fns[which])(&f, msg);
    fs_end(&f);
    json_decref(msg);
    connect_call_close(&k);
}

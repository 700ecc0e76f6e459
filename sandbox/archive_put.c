/* PUT .../archive?path=/DIR: the request body, a tar, extracted into DIR
 * as it arrives (sandbox/archive.h).  The members are checked by tar_in;
 * each is written through the agent beneath DIR (root_len, proto.h), so
 * neither a member nor a link guest code made can lead outside it. */
#include "sandbox/archive.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/guest_fs.h"
#include "sandbox/tar_in.h"
#include "util/printable.h"

struct put_sink {
    int agent;
    char path[AGENT_MAX_PATH]; /* the root with its '/', then the member */
    size_t root_len;
};

/* The member's full guest path in s->path. */
static const char *member(struct put_sink *s, const char *rel)
{
    snprintf(s->path + s->root_len, sizeof(s->path) - s->root_len, "%s", rel);
    return s->path;
}

static int put_dir(void *o, const char *rel, uint32_t mode)
{
    struct put_sink *s = o;
    return agent_mkdir(s->agent, member(s, rel), (uint32_t)s->root_len, mode);
}

static int put_symlink(void *o, const char *rel, const char *target)
{
    struct put_sink *s = o;
    return agent_symlink(s->agent, member(s, rel), (uint32_t)s->root_len, target);
}

static int put_file(void *o, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t)
{
    struct put_sink *s = o;
    return agent_file_put_from(s->agent, member(s, rel), (uint32_t)s->root_len, mode, size,
                               tar_in_data, t);
}

static ssize_t body_read(void *o, void *buf, size_t len)
{
    return api_body_read(o, buf, len);
}

/* DIR and the folders above it, made when missing (mkdir -p), as root:
 * 0, or -errno for the first that could not be made. */
static int make_dest(int agent, const char *dir, char *failed)
{
    struct agent_entry e;
    char target[AGENT_MAX_PATH];
    int rc = agent_stat(agent, dir, &e, target);
    if (rc == 0) /* a link to a folder is fine: the destination is the caller's */
        return e.kind == AGENT_ENTRY_DIR || e.kind == AGENT_ENTRY_SYMLINK ? 0 : -ENOTDIR;
    if (rc != -ENOENT)
        return rc;
    for (const char *p = dir + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        snprintf(failed, AGENT_MAX_PATH, "%.*s", (int)(p - dir), dir);
        rc = agent_mkdir(agent, failed, 0, 0755);
        if (rc || !*p)
            return rc;
    }
}

void archive_put(struct api_conn *c, const struct sandbox *sb)
{
    struct put_sink s;
    char dir[AGENT_MAX_PATH], failed[AGENT_MAX_PATH] = "", shown[1100];
    if (guest_fs_path(c, dir) || api_body_check(c, ARCHIVE_PUT_MAX))
        return;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dir[--dl] = '\0';
    s.root_len = (size_t)snprintf(s.path, sizeof(s.path), "%s%s", dir, dl > 1 ? "/" : "");
    if (s.root_len + 2 > AGENT_MAX_PATH) {
        api_error(c, 400, "path", "path: too long to hold anything");
        return;
    }
    s.agent = guest_fs_dial(c, sb);
    if (s.agent < 0)
        return;
    int rc = make_dest(s.agent, dir, failed);
    if (rc) {
        close(s.agent);
        if (rc == -ENOTDIR)
            api_error(c, 400, "path", "%s: not a directory", printable(dir, shown, sizeof(shown)));
        else
            guest_fs_error(c, failed[0] ? failed : dir, -rc);
        return;
    }
    struct tar_sink sink = {put_dir, put_symlink, put_file, &s};
    struct tar_in_result res;
    /* a member's name has the room the root and the NUL leave */
    rc = tar_in_extract(body_read, c, AGENT_MAX_PATH - 1 - s.root_len, &sink, &res);
    close(s.agent);
    if (rc) {
        json_t *o = json_object();
        /* the guest's refusal gets its errno's status */
        int status = res.sink_errno ? guest_fs_status(res.sink_errno) : res.status;
        char msg[1000];
        snprintf(msg, sizeof(msg), "%s%s%s", res.entry[0] ? res.entry : "",
                 res.entry[0] ? ": " : "", res.why);
        json_object_set_new(o, "error", json_string(msg));
        json_object_set_new(o, "field", json_string("body"));
        if (res.entry[0])
            json_object_set_new(o, "entry", json_string(res.entry));
        json_object_set_new(o, "entries_written", json_integer((json_int_t)res.written));
        c->close = c->close || c->body_left; /* the rest of the body stays unread */
        api_reply(c, status, o);
        return;
    }
    /* the tar's end may leave padding blocks unread: take them */
    char junk[4096];
    while (c->body_left && api_body_read(c, junk, sizeof(junk)) > 0)
        ;
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(dir));
    json_object_set_new(o, "entries", json_integer((json_int_t)res.written));
    json_object_set_new(o, "bytes", json_integer((json_int_t)res.bytes));
    api_reply(c, 200, o);
}

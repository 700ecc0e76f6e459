#include "vmm/sandbox/files.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "guest/agent/proto.h"
#include "vmm/http/http_query.h"
#include "vmm/sandbox/archive.h"
#include "vmm/sandbox/directory.h"
#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_ops.h"

/* `user=UID[:GID]`: who gets what the request makes (root's when absent).
 * 0, or -1 with a 400 sent. */
static int owner_param(struct api_conn *c, struct guest_owner *own)
{
    char v[32];
    *own = GUEST_OWNER_ROOT;
    int rc = query_param(c->req.target, "user", v, sizeof(v));
    if (rc == 0)
        return 0;
    unsigned long uid = 0, gid = 0;
    char *end = NULL;
    if (rc > 0 && v[0] >= '0' && v[0] <= '9') {
        uid = strtoul(v, &end, 10);
        gid = uid;
        if (*end == ':' && end[1] >= '0' && end[1] <= '9')
            gid = strtoul(end + 1, &end, 10);
    }
    if (rc < 0 || !end || *end || uid >= AGENT_CHOWN_KEEP || gid >= AGENT_CHOWN_KEEP) {
        api_error(c, 400, "user", "user: want UID or UID:GID");
        return -1;
    }
    own->uid = (uint32_t)uid;
    own->gid = (uint32_t)gid;
    return 0;
}

static ssize_t read_fd(void *opaque, void *buf, size_t len)
{
    return read(*(int *)opaque, buf, len);
}

/* `mode=OCTAL` (dflt when absent); 0, or -1 with a 400 sent. */
static int mode_param(struct api_conn *c, unsigned long dflt, unsigned long *mode)
{
    char mode_s[16];
    *mode = dflt;
    int m = query_param(c->req.target, "mode", mode_s, sizeof(mode_s));
    char *end = NULL;
    if (m > 0)
        *mode = strtoul(mode_s, &end, 8);
    if (m < 0 || (m > 0 && (!*mode_s || *end || *mode > 07777))) {
        api_error(c, 400, "mode", "mode: want octal permission bits, e.g. 644 or 0755");
        return -1;
    }
    return 0;
}

/* A boolean parameter; 0, or -1 with a 400 naming it. */
static int bool_param(struct api_conn *c, const char *name, bool *out)
{
    *out = false;
    if (query_bool(c->req.target, name, out) < 0) {
        api_error(c, 400, name, "%s: want true or false", name);
        return -1;
    }
    return 0;
}

void files_put(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    unsigned long mode;
    struct guest_owner own;
    bool parents;
    if (guest_fs_path(c, path) || mode_param(c, 0644, &mode) || owner_param(c, &own) ||
        bool_param(c, "parents", &parents))
        return;
    int fd = memfd_create("airlock-put", MFD_CLOEXEC);
    if (fd < 0) {
        api_error(c, 503, NULL, "cannot hold the upload: %s", strerror(errno));
        return;
    }
    if (api_body_to_fd(c, fd, FILES_MAX)) {
        close(fd);
        return;
    }
    lseek(fd, 0, SEEK_SET);
    int agent = guest_fs_dial(c, sb);
    if (agent < 0) {
        close(fd);
        return;
    }
    int rc = guest_write(agent, path, (uint32_t)mode, own, parents, c->req.body_len, read_fd, &fd);
    close(agent);
    close(fd);
    if (rc) {
        guest_fs_error(c, path, -rc);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    json_object_set_new(o, "size", json_integer((json_int_t)c->req.body_len));
    api_reply(c, 200, o);
}

int files_send(struct api_conn *c, const struct sandbox *sb, const char *path)
{
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return 0; /* answered (503) */
    int fd;
    uint64_t size;
    int rc = guest_read(agent, path, FILES_MAX, &fd, &size);
    close(agent);
    if (rc)
        return rc;
    api_reply_fd(c, 200, "application/octet-stream", fd, size);
    close(fd);
    return 0;
}

void files_get(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    if (guest_fs_path(c, path))
        return;
    int rc = files_send(c, sb, path);
    if (rc == -EFBIG)
        return api_error(c, 413, "path", "%.1000s: larger than %llu bytes", path, FILES_MAX);
    if (rc)
        return guest_fs_error(c, path, -rc);
}

void files_delete(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    bool recursive;
    if (guest_fs_path(c, path) || bool_param(c, "recursive", &recursive))
        return;
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return;
    int rc = guest_remove(agent, path, recursive);
    close(agent);
    if (rc == -ENOTEMPTY || rc == -EEXIST)
        api_error(c, 409, "path", "%.1000s: a folder that holds entries (recursive=true removes "
                  "them too)", path);
    else if (rc == -EBUSY)
        api_error(c, 400, "path", "%.1000s: the root folder is not removed", path);
    else if (rc)
        guest_fs_error(c, path, -rc);
    else
        api_reply_bytes(c, 204, NULL, NULL, NULL, 0);
}

void files_mkdir(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    unsigned long mode;
    struct guest_owner own;
    bool parents, made = false;
    if (guest_fs_path(c, path) || mode_param(c, 0755, &mode) || owner_param(c, &own) ||
        bool_param(c, "parents", &parents))
        return;
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return;
    int rc = guest_mkdir(agent, path, (uint32_t)mode, own, parents, &made);
    close(agent);
    if (rc == -EEXIST || rc == -ENOTDIR)
        api_error(c, 409, "path", "%.1000s: a file is in the way", path);
    else if (rc)
        guest_fs_error(c, path, -rc);
    else
        api_reply(c, made ? 201 : 200, json_pack("{s:s,s:b}", "path", path, "created", made));
}

void files_move(struct api_conn *c, const struct sandbox *sb)
{
    char from[AGENT_MAX_PATH], to[AGENT_MAX_PATH], target[AGENT_MAX_PATH];
    bool no_replace;
    int a = query_param(c->req.target, "from", from, sizeof(from));
    int b = query_param(c->req.target, "to", to, sizeof(to));
    if (a <= 0 || from[0] != '/')
        return api_error(c, 400, "from", "from: want ?from=/an/absolute/path");
    if (b <= 0 || to[0] != '/')
        return api_error(c, 400, "to", "to: want &to=/an/absolute/path");
    if (bool_param(c, "no_replace", &no_replace))
        return;
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return;
    struct agent_entry e;
    int rc = guest_move(agent, from, to, no_replace);
    if (!rc)
        rc = agent_stat(agent, to, &e, target);
    close(agent);
    if (rc == -EEXIST || rc == -ENOTEMPTY)
        return api_error(c, 409, "to", "%.1000s: something is there", to);
    if (rc == -EBUSY)
        return api_error(c, 400, "from", "the root folder is not moved");
    if (rc)
        return guest_fs_error(c, from, -rc);
    json_t *o = guest_fs_entry_json(&e, NULL);
    json_object_set_new(o, "path", json_string(to));
    api_reply(c, 200, o);
}

bool files_route_known(const char *rest)
{
    return !strcmp(rest, "files") || !strcmp(rest, "directory") || !strcmp(rest, "stat") ||
           !strcmp(rest, "archive") || !strcmp(rest, "move");
}

void files_route(struct api_conn *c, const struct sandbox *sb, const char *rest)
{
    const char *m = c->req.method;
    bool get = !strcmp(m, "GET"), put = !strcmp(m, "PUT"), post = !strcmp(m, "POST");
    bool del = !strcmp(m, "DELETE");
    if (!strcmp(rest, "files")) {
        if (get || put || del)
            (get ? files_get : put ? files_put : files_delete)(c, sb);
        else
            api_method_not_allowed(c, "GET, PUT, DELETE");
    } else if (!strcmp(rest, "archive")) {
        if (get || put)
            (get ? archive_get : archive_put)(c, sb);
        else
            api_method_not_allowed(c, "GET, PUT");
    } else if (!strcmp(rest, "directory")) {
        if (get || post)
            (get ? directory_list : files_mkdir)(c, sb);
        else
            api_method_not_allowed(c, "GET, POST");
    } else if (!strcmp(rest, "move")) {
        if (post)
            files_move(c, sb);
        else
            api_method_not_allowed(c, "POST");
    } else if (get) {
        directory_stat(c, sb);
    } else {
        api_method_not_allowed(c, "GET");
    }
}

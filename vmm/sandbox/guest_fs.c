#include "vmm/sandbox/guest_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "vmm/http/http_query.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/base64.h"
#include "vmm/util/printable.h"

int guest_fs_path(struct api_conn *c, char *path)
{
    int rc = query_param(c->req.target, "path", path, AGENT_MAX_PATH);
    if (rc <= 0 || path[0] != '/') {
        api_error(c, 400, "path", rc < 0 ? "path: a bad %%-escape, a NUL, or too long"
                                         : "path: want ?path=/an/absolute/path");
        return -1;
    }
    return 0;
}

int guest_fs_dial(struct api_conn *c, const struct sandbox *sb)
{
    int fd = vm_proc_dial(sb->sock);
    if (fd < 0) {
        api_error(c, 503, NULL, "the sandbox's agent does not answer: %s", strerror(-fd));
        return -1;
    }
    struct timeval tv = {.tv_sec = GUEST_FS_WAIT_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return fd;
}

int guest_fs_status(int e)
{
    return e == ENOENT || e == ENOTDIR ? 404 : e == EACCES || e == EPERM ? 403 : e == EFBIG ? 413
         : e == EPROTO || e == EBADMSG || e == EPROTONOSUPPORT || e == EMSGSIZE ? 502
         : e == EAGAIN || e == ETIMEDOUT ? 504
         : e == ECONNREFUSED || e == ECONNRESET || e == EPIPE ? 503 : 400;
}

void guest_fs_error(struct api_conn *c, const char *path, int e)
{
    int status = guest_fs_status(e);
    char p[1100];
    if (status == 502)
        api_error(c, status, NULL, "%s: the sandbox's agent sent a broken answer",
                  printable(path, p, sizeof(p)));
    else if (status == 504)
        api_error(c, status, NULL, "%s: the sandbox's agent did not answer in %d s",
                  printable(path, p, sizeof(p)), GUEST_FS_WAIT_S);
    else
        api_error(c, status, "path", "%s: %s", printable(path, p, sizeof(p)), strerror(e));
}

void guest_fs_set_text(json_t *o, const char *key, const char *s)
{
    json_t *v = json_string(s);
    if (v) {
        json_object_set_new(o, key, v);
        return;
    }
    char k[32];
    snprintf(k, sizeof(k), "%s_b64", key);
    char *b64 = base64_encode(s, strlen(s));
    json_object_set_new(o, k, b64 ? json_string(b64) : json_null());
    free(b64);
}

json_t *guest_fs_entry_json(const struct agent_entry *e, const char *name)
{
    static const char *const kinds[] = {"file", "dir", "symlink", "other"};
    json_t *o = json_object();
    if (name)
        guest_fs_set_text(o, "name", name);
    json_object_set_new(o, "type", json_string(kinds[e->kind <= 3 ? e->kind : 3]));
    json_object_set_new(o, "size", json_integer((json_int_t)e->size));
    json_object_set_new(o, "mode", json_integer(e->mode));
    json_object_set_new(o, "mtime", json_integer(e->mtime));
    json_object_set_new(o, "uid", json_integer(e->uid));
    json_object_set_new(o, "gid", json_integer(e->gid));
    if (e->kind == AGENT_ENTRY_SYMLINK)
        guest_fs_set_text(o, "target", e->target);
    return o;
}

#include "sandbox/files.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_client/agent_client.h"
#include "guest/agent/proto.h"
#include "http/http_query.h"
#include "sandbox/vm_proc.h"

/* The path parameter: absolute, at most AGENT_MAX_PATH; else a 400 sent. */
static int get_path(struct api_conn *c, char *path)
{
    int rc = query_param(c->req.target, "path", path, AGENT_MAX_PATH);
    if (rc <= 0 || path[0] != '/') {
        api_error(c, 400, "path", rc < 0 ? "path: a bad %%-escape, a NUL, or too long"
                                         : "path: want ?path=/an/absolute/path");
        return -1;
    }
    return 0;
}

/* The guest's errno for PATH as an answer. */
static void guest_error(struct api_conn *c, const char *path, int e)
{
    int status = e == ENOENT || e == ENOTDIR ? 404 : e == EACCES || e == EPERM ? 403
               : e == EFBIG ? 413 : e == ECONNREFUSED || e == ECONNRESET || e == EPIPE ? 503 : 400;
    api_error(c, status, "path", "%.1000s: %s", path, strerror(e));
}

void files_put(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH], mode_s[16];
    if (get_path(c, path))
        return;
    unsigned long mode = 0644;
    int m = query_param(c->req.target, "mode", mode_s, sizeof(mode_s));
    char *end = NULL;
    if (m > 0)
        mode = strtoul(mode_s, &end, 8);
    if (m < 0 || (m > 0 && (!*mode_s || *end || mode > 07777))) {
        api_error(c, 400, "mode", "mode: want octal permission bits, e.g. 644 or 0755");
        return;
    }
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
    int agent = vm_proc_dial(sb->sock);
    int rc = agent < 0 ? agent
                       : agent_file_put(agent, path, (uint32_t)mode, fd, c->req.body_len);
    if (agent >= 0)
        close(agent);
    close(fd);
    if (rc) {
        guest_error(c, path, -rc);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    json_object_set_new(o, "size", json_integer((json_int_t)c->req.body_len));
    api_reply(c, 200, o);
}

void files_get(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    if (get_path(c, path))
        return;
    int fd = memfd_create("airlock-get", MFD_CLOEXEC);
    if (fd < 0) {
        api_error(c, 503, NULL, "cannot hold the download: %s", strerror(errno));
        return;
    }
    int agent = vm_proc_dial(sb->sock);
    int rc = agent < 0 ? agent : agent_file_get(agent, path, fd, FILES_MAX);
    if (agent >= 0)
        close(agent);
    if (rc) {
        close(fd);
        if (rc == -EFBIG)
            api_error(c, 413, "path", "%.1000s: larger than %llu bytes", path, FILES_MAX);
        else
            guest_error(c, path, -rc);
        return;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    api_reply_fd(c, 200, "application/octet-stream", fd, (uint64_t)size);
    close(fd);
}

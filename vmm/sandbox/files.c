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

void files_put(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH], mode_s[16];
    if (guest_fs_path(c, path))
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
    int agent = guest_fs_dial(c, sb);
    if (agent < 0) {
        close(fd);
        return;
    }
    int rc = agent_file_put(agent, path, (uint32_t)mode, fd, c->req.body_len);
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

void files_get(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH];
    if (guest_fs_path(c, path))
        return;
    int fd = memfd_create("airlock-get", MFD_CLOEXEC);
    if (fd < 0) {
        api_error(c, 503, NULL, "cannot hold the download: %s", strerror(errno));
        return;
    }
    int agent = guest_fs_dial(c, sb);
    if (agent < 0) {
        close(fd);
        return;
    }
    int rc = agent_file_get(agent, path, fd, FILES_MAX);
    close(agent);
    if (rc) {
        close(fd);
        if (rc == -EFBIG)
            api_error(c, 413, "path", "%.1000s: larger than %llu bytes", path, FILES_MAX);
        else
            guest_fs_error(c, path, -rc);
        return;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    api_reply_fd(c, 200, "application/octet-stream", fd, (uint64_t)size);
    close(fd);
}

bool files_route_known(const char *rest)
{
    return !strcmp(rest, "files") || !strcmp(rest, "directory") || !strcmp(rest, "stat") ||
           !strcmp(rest, "archive");
}

void files_route(struct api_conn *c, const struct sandbox *sb, const char *rest)
{
    bool get = !strcmp(c->req.method, "GET"), put = !strcmp(c->req.method, "PUT");
    bool read_only = !strcmp(rest, "directory") || !strcmp(rest, "stat");
    if (!get && (!put || read_only))
        api_method_not_allowed(c, read_only ? "GET" : "GET, PUT");
    else if (!strcmp(rest, "files"))
        (get ? files_get : files_put)(c, sb);
    else if (!strcmp(rest, "archive"))
        (get ? archive_get : archive_put)(c, sb);
    else
        (!strcmp(rest, "stat") ? directory_stat : directory_list)(c, sb);
}

/* PUT .../archive?path=/DIR: the request body, a tar, extracted into DIR
 * as it arrives (vmm/sandbox/archive.h) by vmm/sandbox/guest_put.c. */
#include "vmm/sandbox/archive.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_put.h"
#include "vmm/util/printable.h"

static ssize_t body_read(void *o, void *buf, size_t len)
{
    return api_body_read(o, buf, len);
}

void archive_put(struct api_conn *c, const struct sandbox *sb)
{
    char dir[AGENT_MAX_PATH], failed[AGENT_MAX_PATH], shown[1100];
    if (guest_fs_path(c, dir) || api_body_check(c, ARCHIVE_PUT_MAX))
        return;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dir[--dl] = '\0';
    if (dl + (dl > 1) + 2 > AGENT_MAX_PATH) {
        api_error(c, 400, "path", "path: too long to hold anything");
        return;
    }
    int agent = guest_fs_dial(c, sb);
    if (agent < 0)
        return;
    int rc = guest_put_dest(agent, dir, failed);
    if (rc) {
        close(agent);
        if (rc == -ENOTDIR)
            api_error(c, 400, "path", "%s: not a directory", printable(dir, shown, sizeof(shown)));
        else
            guest_fs_error(c, failed[0] ? failed : dir, -rc);
        return;
    }
    struct tar_in_result res;
    rc = guest_put_tar(agent, dir, NULL, body_read, c, NULL, &res);
    close(agent);
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

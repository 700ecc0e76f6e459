#include "vmm/e2b/e2b_user.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/guest_fs.h"

struct grow {
    char *p;
    size_t n;
};

static int take(void *opaque, const void *buf, size_t len)
{
    struct grow *g = opaque;
    char *q = realloc(g->p, g->n + len + 1);
    if (!q)
        return -ENOMEM;
    memcpy(q + g->n, buf, len);
    g->p = q;
    g->n += len;
    return 0;
}

int e2b_user_resolve(struct api_conn *c, struct sandbox *sb, struct e2b_user *u)
{
    char name[E2B_USER_NAME_MAX + 1];
    int given = e2b_basic_name(c->req.authorization, name);
    if (given < 0) {
        api_error(c, 401, NULL, "%s", "Authorization: want Basic with base64 of \"USER:\"");
        return -1;
    }
    int fd = guest_fs_dial(c, sb);
    if (fd < 0)
        return -1;
    struct grow g = {0};
    int rc = agent_file_get_to(fd, "/etc/passwd", E2B_PASSWD_MAX, take, &g);
    close(fd);
    if (rc && rc != -ENOENT) {
        free(g.p);
        api_error(c, guest_fs_status(-rc), NULL, "cannot read the guest's /etc/passwd: %s",
                  strerror(-rc));
        return -1;
    }
    int found;
    if (given)
        found = e2b_passwd_find(g.p, g.n, name, 0, u);
    else if (sb->has_user)
        found = e2b_passwd_find(g.p, g.n, NULL, sb->uid, u);
    else if ((found = e2b_passwd_find(g.p, g.n, "user", 0, u)))
        found = e2b_passwd_find(g.p, g.n, "root", 0, u);
    free(g.p);
    if (found && !given && sb->has_user) { /* a uid without an entry: no home */
        *u = (struct e2b_user){.uid = sb->uid, .gid = sb->gid, .home = "/"};
        snprintf(u->name, sizeof(u->name), "%u", sb->uid);
        found = 0;
    }
    if (found && !given) { /* no passwd at all: root, as the kernel sees it */
        *u = (struct e2b_user){.name = "root", .home = "/root"};
        found = 0;
    }
    if (found) {
        api_error(c, 401, NULL, "user '%s' is not in the sandbox's /etc/passwd", name);
        return -1;
    }
    return 0;
}


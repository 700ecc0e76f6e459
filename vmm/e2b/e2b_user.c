#include "vmm/e2b/e2b_user.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
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
    return e2b_user_resolve_name(c, sb, given ? name : NULL, u);
}

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n > E2B_USER_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) /* a name's letters (POSIX portable, and '$') */
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-$", name[i]))
            return false;
    return true;
}

int e2b_user_resolve_name(struct api_conn *c, struct sandbox *sb, const char *name,
                          struct e2b_user *u)
{
    int given = name && name[0];
    if (given && !name_ok(name)) {
        api_error(c, 401, NULL, "%s", "the user's name: want 1 to 32 of [A-Za-z0-9._-$]");
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

int e2b_names_load(int agent, struct e2b_names *n)
{
    memset(n, 0, sizeof(*n));
    struct grow g = {0};
    int rc = agent_file_get_to(agent, "/etc/passwd", E2B_PASSWD_MAX, take, &g);
    if (rc && rc != -ENOENT) {
        free(g.p);
        return rc;
    }
    n->passwd = g.p;
    n->pn = g.n;
    g = (struct grow){0};
    rc = agent_file_get_to(agent, "/etc/group", E2B_PASSWD_MAX, take, &g);
    if (rc && rc != -ENOENT) {
        free(g.p);
        e2b_names_free(n);
        return rc;
    }
    n->group = g.p;
    n->gn = g.n;
    return 0;
}

void e2b_names_free(struct e2b_names *n)
{
    free(n->passwd);
    free(n->group);
    memset(n, 0, sizeof(*n));
}


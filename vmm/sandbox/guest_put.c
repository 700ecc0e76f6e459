/* A tar into a guest folder through the agent; see guest_put.h. */
#include "vmm/sandbox/guest_put.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct put_sink {
    int agent;
    const char *new_top;
    char path[AGENT_MAX_PATH]; /* the root with its '/', then the member */
    size_t root_len;
};

/* The member's full guest path in s->path; NULL when it does not fit. */
static const char *member(struct put_sink *s, const char *rel)
{
    size_t room = sizeof(s->path) - s->root_len;
    const char *rest = s->new_top ? strchr(rel, '/') : NULL;
    int n = !s->new_top ? snprintf(s->path + s->root_len, room, "%s", rel)
                        : snprintf(s->path + s->root_len, room, "%s%s", s->new_top, rest ? rest : "");
    return n < 0 || (size_t)n >= room ? NULL : s->path;
}

static int put_dir(void *o, const char *rel, uint32_t mode)
{
    struct put_sink *s = o;
    const char *p = member(s, rel);
    return p ? agent_mkdir(s->agent, p, (uint32_t)s->root_len, mode) : -ENAMETOOLONG;
}

static int put_symlink(void *o, const char *rel, const char *target)
{
    struct put_sink *s = o;
    const char *p = member(s, rel);
    return p ? agent_symlink(s->agent, p, (uint32_t)s->root_len, target) : -ENAMETOOLONG;
}

static int put_file(void *o, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t)
{
    struct put_sink *s = o;
    const char *p = member(s, rel);
    return p ? agent_file_put_from(s->agent, p, (uint32_t)s->root_len, mode, size, tar_in_data, t)
             : -ENAMETOOLONG;
}

int guest_put_dest(int agent, const char *dir, char *failed)
{
    struct agent_entry e;
    char target[AGENT_MAX_PATH];
    failed[0] = '\0';
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

int guest_put_tar(int agent, const char *dir, const char *new_top, tar_in_read_fn *read,
                  void *opaque, const struct tar_in_limits *lim, struct tar_in_result *res)
{
    struct put_sink s = {.agent = agent, .new_top = new_top};
    size_t dl = strlen(dir);
    s.root_len = (size_t)snprintf(s.path, sizeof(s.path), "%s%s", dir, dl > 1 ? "/" : "");
    if (s.root_len + 2 > AGENT_MAX_PATH) {
        memset(res, 0, sizeof(*res));
        res->status = 400;
        snprintf(res->why, sizeof(res->why), "path: too long to hold anything");
        return -1;
    }
    struct tar_sink sink = {put_dir, put_symlink, put_file, &s};
    /* a member's name has the room the root and the NUL leave */
    return tar_in_extract_within(read, opaque, AGENT_MAX_PATH - 1 - s.root_len, lim, &sink,
                                 res);
}

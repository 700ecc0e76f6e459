#include "vmm/sandbox/directory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/http/http_query.h"
#include "vmm/sandbox/guest_fs.h"
#include "vmm/sandbox/guest_ops.h"

struct listing {
    json_t *entries;
    bool deep; /* depth > 1: each entry names its path below the folder */
};

static int add_entry(void *opaque, const char *rel, const struct agent_entry *e)
{
    struct listing *l = opaque;
    json_t *o = guest_fs_entry_json(e, e->name);
    if (l->deep)
        guest_fs_set_text(o, "rel", rel);
    json_array_append_new(l->entries, o);
    return 0;
}

/* The path parameter and an agent connection: the fd, or -1 with the
 * answer sent. */
static int begin(struct api_conn *c, const struct sandbox *sb, char *path)
{
    return guest_fs_path(c, path) ? -1 : guest_fs_dial(c, sb);
}

void directory_list(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH], target[AGENT_MAX_PATH], depth_s[8];
    int d = query_param(c->req.target, "depth", depth_s, sizeof(depth_s));
    char *end = NULL;
    long depth = d > 0 ? strtol(depth_s, &end, 10) : 1;
    if (d < 0 || (d > 0 && (*end || depth < 1 || depth > GUEST_LIST_MAX_DEPTH)))
        return api_error(c, 400, "depth", "depth: want 1 to %d", GUEST_LIST_MAX_DEPTH);
    int agent = begin(c, sb, path);
    if (agent < 0)
        return;
    struct listing l = {json_array(), depth > 1};
    int rc = guest_list(agent, path, (unsigned)depth, add_entry, &l);
    struct agent_entry st;
    /* ENOTDIR: the path is a file (400), or a file is on its way (404) */
    bool not_dir = rc == -ENOTDIR && agent_stat(agent, path, &st, target) == 0;
    close(agent);
    if (rc) {
        json_decref(l.entries);
        if (rc == -E2BIG)
            api_error(c, 413, "path", "%.1000s: more than %d entries", path,
                      GUEST_LIST_MAX_ENTRIES);
        else if (not_dir)
            api_error(c, 400, "path", "%.1000s: not a directory", path);
        else
            guest_fs_error(c, path, -rc);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    json_object_set_new(o, "entries", l.entries);
    api_reply(c, 200, o);
}

void directory_stat(struct api_conn *c, const struct sandbox *sb)
{
    char path[AGENT_MAX_PATH], target[AGENT_MAX_PATH];
    int agent = begin(c, sb, path);
    if (agent < 0)
        return;
    struct agent_entry e;
    int rc = agent_stat(agent, path, &e, target);
    close(agent);
    if (rc) {
        guest_fs_error(c, path, -rc);
        return;
    }
    json_t *o = guest_fs_entry_json(&e, NULL);
    json_object_set_new(o, "path", json_string(path));
    api_reply(c, 200, o);
}

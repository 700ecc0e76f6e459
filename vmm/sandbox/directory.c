#include "vmm/sandbox/directory.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vmm/sandbox/guest_fs.h"

struct listing {
    json_t *entries;
    size_t n;
};

static int add_entry(void *opaque, const struct agent_entry *e)
{
    struct listing *l = opaque;
    if (++l->n > DIRECTORY_MAX_ENTRIES)
        return -E2BIG;
    json_array_append_new(l->entries, guest_fs_entry_json(e, e->name));
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
    char path[AGENT_MAX_PATH], target[AGENT_MAX_PATH];
    int agent = begin(c, sb, path);
    if (agent < 0)
        return;
    struct listing l = {json_array(), 0};
    int rc = agent_list(agent, path, add_entry, &l);
    struct agent_entry st;
    /* ENOTDIR: the path is a file (400), or a file is on its way (404) */
    bool not_dir = rc == -ENOTDIR && agent_stat(agent, path, &st, target) == 0;
    close(agent);
    if (rc) {
        json_decref(l.entries);
        if (rc == -E2BIG)
            api_error(c, 413, "path", "%.1000s: more than %d entries", path,
                      DIRECTORY_MAX_ENTRIES);
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

/* A create's mounts; see create_mounts.h. */
#include "vmm/sandbox/create_mounts.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/vm_proc.h"

static bool one(struct fields *f, struct create_mounts *cm, json_t *o)
{
    static const char *const known[] = {"source", "target", "readonly", NULL};
    const char *k;
    json_t *v;
    if (!json_is_object(o))
        return field_error(f, "mounts", "%s", "each mount is an object"), false;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (size_t i = 0; known[i] && !ok; i++)
            ok = !strcmp(k, known[i]);
        if (!ok)
            return field_error(f, "mounts", "unknown field '%.40s' in a mount", k), false;
    }
    json_t *src = json_object_get(o, "source"), *dst = json_object_get(o, "target");
    json_t *ro = json_object_get(o, "readonly");
    const char *s = json_string_value(src), *t = json_string_value(dst);
    size_t sl = s ? json_string_length(src) : 0, tl = t ? json_string_length(dst) : 0;
    if (!s || !t)
        return field_error(f, "mounts", "%s", "a mount needs a source and a target"), false;
    if (ro && !json_is_boolean(ro))
        return field_error(f, "mounts", "%s", "readonly: want true or false"), false;
    /* --mount's value is SOURCE:TARGET[:MODE]: neither may hold a ':' */
    if (s[0] != '/' || sl > FIELD_MAX_TEXT || strlen(s) != sl || strchr(s, ':'))
        return field_error(f, "mounts", "source '%.200s': want an absolute host folder without "
                           "':'", s), false;
    if (strlen(t) != tl || strchr(t, ':') || !agent_mount_path_ok(t, tl))
        return field_error(f, "mounts", "target '%.200s': want an absolute guest folder with no "
                           "empty, '.' or '..' part, no '/' at its end or ':', shorter than "
                           "1024 bytes, not /, /proc, /sys or /dev", t), false;
    for (unsigned i = 0; i < cm->n; i++)
        if (!strcmp(cm->target[i], t))
            return field_error(f, "mounts", "target %.200s is mounted twice", t), false;
    unsigned i = cm->n++;
    cm->rw[i] = ro && json_is_false(ro);
    snprintf(cm->spec[i], sizeof(cm->spec[i]), "%s:%s:%s", s, t, cm->rw[i] ? "rw" : "ro");
    memcpy(cm->target[i], t, tl + 1); /* agent_mount_path_ok: tl < AGENT_MOUNT_MAX_PATH */
    return true;
}

void create_mounts_parse(struct fields *f, struct create_mounts *cm)
{
    memset(cm, 0, sizeof(*cm));
    json_t *arr = f->failed ? NULL : json_object_get(f->obj, "mounts");
    if (!arr)
        return;
    if (!json_is_array(arr) || json_array_size(arr) > CREATE_MOUNTS_MAX)
        return field_error(f, "mounts", "%s", "an array of at most 8 mounts");
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
        if (!one(f, cm, o))
            return;
}

int create_mounts_deliver(const struct sandbox *sb, const struct create_mounts *cm, char *err,
                          size_t cap)
{
    if (!cm->n)
        return 0;
    int fd = vm_proc_dial(sb->sock);
    if (fd < 0) {
        snprintf(err, cap, "mounts: cannot reach the sandbox's agent: %s", strerror(-fd));
        return -1;
    }
    char why[AGENT_MOUNT_MAX_PATH + 256];
    int rc = 0;
    for (unsigned i = 0; i < cm->n && !rc; i++) {
        if (agent_mount(fd, i + 1, cm->rw[i] ? 0 : AGENT_MOUNT_F_RO, cm->target[i],
                        AGENT_MOUNT_WAIT_MS, why, sizeof(why))) {
            snprintf(err, cap, "mounts: %.1200s", why);
            rc = -1;
        }
    }
    close(fd);
    return rc;
}

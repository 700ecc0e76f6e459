/* A create's mounts; see create_mounts.h. */
#include "vmm/sandbox/create_mounts.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/vm_proc.h"

/* "mounts[I].NAME": the field an error names. */
static const char *name_of(char *buf, size_t cap, size_t i, const char *sub)
{
    snprintf(buf, cap, "mounts[%zu]%s%s", i, sub ? "." : "", sub ? sub : "");
    return buf;
}

/* A folder's source: absolute, no ':', allowed by the policy; into spec
 * with its target t. */
static bool source(struct fields *f, struct create_mounts *cm, size_t i, json_t *src,
                   const char *t, const struct mount_policy *p)
{
    char field[40], why[700], path[PATH_MAX];
    const char *s = json_string_value(src);
    size_t sl = json_string_length(src);
    name_of(field, sizeof(field), i, "source");
    /* --mount's value is SOURCE:TARGET[:MODE]: neither may hold a ':' */
    if (s[0] != '/' || sl > FIELD_MAX_TEXT || strlen(s) != sl || strchr(s, ':'))
        return field_error(f, field, "source '%.200s': want an absolute host folder without "
                           "':'", s), false;
    int http = p ? mount_roots_resolve(p->roots, p->tcp, s, path, sizeof(path), why, sizeof(why))
                 : (snprintf(path, sizeof(path), "%s", s), 0);
    if (http) {
        api_error(f->c, http, field, "%s", why);
        f->failed = true;
        return false;
    }
    snprintf(cm->spec[cm->n], sizeof(cm->spec[cm->n]), "%s:%s:%s", path, t,
             cm->rw[cm->n] ? "rw" : "ro");
    return true;
}

static bool one(struct fields *f, struct create_mounts *cm, size_t i, json_t *o,
                const struct mount_policy *p)
{
    static const char *const known[] = {"source", "volume", "target", "readonly", NULL};
    char field[40];
    const char *k;
    json_t *v;
    if (!json_is_object(o))
        return field_error(f, name_of(field, sizeof(field), i, NULL), "%s",
                           "each mount is an object"), false;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (size_t j = 0; known[j] && !ok; j++)
            ok = !strcmp(k, known[j]);
        if (!ok)
            return field_error(f, name_of(field, sizeof(field), i, NULL),
                               "unknown field '%.40s' in a mount", k), false;
    }
    json_t *src = json_object_get(o, "source"), *vol = json_object_get(o, "volume");
    json_t *dst = json_object_get(o, "target"), *ro = json_object_get(o, "readonly");
    const char *t = json_string_value(dst);
    size_t tl = t ? json_string_length(dst) : 0;
    if (src && vol)
        return field_error(f, name_of(field, sizeof(field), i, NULL), "%s",
                           "a mount has a source (a host folder) or a volume, not both"), false;
    if ((!src && !vol) || (src && !json_is_string(src)))
        return field_error(f, name_of(field, sizeof(field), i, vol ? "volume" : "source"), "%s",
                           "a mount needs a source (a host folder) or a volume, and a target"),
               false;
    if (vol && (!json_is_string(vol) ||
                !volume_name_ok(json_string_value(vol), json_string_length(vol))))
        return field_error(f, name_of(field, sizeof(field), i, "volume"), "%s",
                           "volume: want a name of a letter or digit, then up to 63 letters, "
                           "digits, '_', '.' or '-'"), false;
    if (!t)
        return field_error(f, name_of(field, sizeof(field), i, "target"), "%s",
                           "a mount needs a target (a guest folder)"), false;
    if (ro && !json_is_boolean(ro))
        return field_error(f, name_of(field, sizeof(field), i, "readonly"), "%s",
                           "readonly: want true or false"), false;
    if (strlen(t) != tl || strchr(t, ':') || !agent_mount_path_ok(t, tl))
        return field_error(f, name_of(field, sizeof(field), i, "target"),
                           "target '%.200s': want an absolute guest folder with no "
                           "empty, '.' or '..' part, no '/' at its end or ':', shorter than "
                           "1024 bytes, not /, /proc, /sys or /dev", t), false;
    for (unsigned j = 0; j < cm->n; j++) {
        if (!strcmp(cm->target[j], t))
            return field_error(f, name_of(field, sizeof(field), i, "target"),
                               "target %.200s is mounted twice", t), false;
        if (vol && cm->volume[j] && !strcmp(cm->name[j], json_string_value(vol)))
            return field_error(f, name_of(field, sizeof(field), i, "volume"),
                               "the volume %s is mounted twice", cm->name[j]), false;
    }
    unsigned n = cm->n;
    memcpy(cm->target[n], t, tl + 1); /* agent_mount_path_ok: tl < AGENT_MOUNT_MAX_PATH */
    if (vol) {
        cm->volume[n] = true;
        cm->rw[n] = !ro || json_is_false(ro);
        snprintf(cm->name[n], sizeof(cm->name[n]), "%s", json_string_value(vol));
    } else {
        cm->rw[n] = ro && json_is_false(ro);
        if (!source(f, cm, i, src, t, p))
            return false;
    }
    cm->n++;
    return true;
}

void create_mounts_parse(struct fields *f, struct create_mounts *cm,
                         const struct mount_policy *policy)
{
    memset(cm, 0, sizeof(*cm));
    json_t *arr = f->failed ? NULL : json_object_get(f->obj, "mounts");
    if (!arr)
        return;
    if (!json_is_array(arr) || json_array_size(arr) > CREATE_MOUNTS_MAX)
        return field_error(f, "mounts", "%s", "an array of at most 8 mounts and volumes");
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
        if (!one(f, cm, i, o, policy))
            return;
}

unsigned create_mounts_owner(const struct create_mounts *cm, unsigned i)
{
    if (cm->volume[i])
        return i;
    /* a folder's spec is SOURCE:TARGET:MODE, SOURCE without ':' */
    size_t sl = strcspn(cm->spec[i], ":");
    for (unsigned j = 0; j < i; j++)
        if (!cm->volume[j] && cm->rw[j] == cm->rw[i] && strcspn(cm->spec[j], ":") == sl &&
            !memcmp(cm->spec[j], cm->spec[i], sl))
            return j;
    return i;
}

unsigned create_mounts_device(const struct create_mounts *cm, unsigned i)
{
    unsigned before = 0, volumes = 0;
    i = create_mounts_owner(cm, i);
    for (unsigned j = 0; j < cm->n; j++) {
        volumes += cm->volume[j];
        before += j < i && cm->volume[j] == cm->volume[i] && create_mounts_owner(cm, j) == j;
    }
    return 1 + before + (cm->volume[i] ? 0 : volumes);
}

unsigned create_mounts_disks(const struct create_mounts *cm)
{
    unsigned last = 0; /* the disks are 1..n */
    for (unsigned i = 0; i < cm->n; i++) {
        unsigned d = create_mounts_device(cm, i);
        last = d > last ? d : last;
    }
    return last;
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
        if (agent_mount(fd, create_mounts_device(cm, i), cm->rw[i] ? 0 : AGENT_MOUNT_F_RO,
                        cm->target[i], AGENT_MOUNT_WAIT_MS, why, sizeof(why))) {
            snprintf(err, cap, "mounts: %.1200s", why);
            rc = -1;
        }
    }
    close(fd);
    return rc;
}

/* A create's volumes; see create_volumes.h. */
#include "vmm/sandbox/create_volumes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/volume/volume_check.h"
#include "vmm/volume/volume_hold.h"

/* One volume held and checked for the sandbox: 0 or an HTTP status. */
static int hold_one(const struct volume_store *vs, const struct volume_holder *me,
                    struct create_mounts *cm, unsigned i, char *did, size_t dcap, char *err,
                    size_t cap)
{
    struct volume_holder in_way;
    char who[80], why[600];
    bool readers_before;
    int rc = volume_hold(vs, cm->name[i], me, &readers_before, &in_way);
    if (rc == -ENOENT)
        return snprintf(err, cap, "no volume '%s' (POST /v1/volumes makes one)", cm->name[i]), 404;
    if (rc == -EBUSY) {
        volume_holder_text(&in_way, who, sizeof(who));
        snprintf(err, cap, "the volume %s is in use by %s (%s)%s", cm->name[i], who,
                 in_way.readonly ? "read-only" : "read-write",
                 me->readonly ? ": a reader waits for no writer" : ": one writer or readers");
        return 409;
    }
    if (rc)
        return snprintf(err, cap, "the volume %s: %s", cm->name[i],
                        rc == -EIO ? "its record is damaged" : strerror(-rc)), 500;
    if (volume_check(vs, cm->name[i], readers_before, did, dcap, why, sizeof(why))) {
        volume_release(vs, cm->name[i], me);
        return snprintf(err, cap, "the volume %s: %s", cm->name[i], why), 500;
    }
    char disk[PATH_MAX];
    volume_disk_path(vs, cm->name[i], disk, sizeof(disk));
    snprintf(cm->spec[i], sizeof(cm->spec[i]), "%s%s", disk, cm->rw[i] ? "" : ",ro");
    return 0;
}

int create_volumes_hold(const struct volume_store *vs, const char *id, struct create_mounts *cm,
                        json_t **shown, char *err, size_t cap, char *field_buf, size_t fcap)
{
    *shown = NULL;
    struct volume_holder me = {0};
    snprintf(me.sandbox, sizeof(me.sandbox), "%s", id);
    json_t *arr = NULL;
    for (unsigned i = 0; i < cm->n; i++) {
        if (!cm->volume[i])
            continue;
        char did[400];
        me.readonly = !cm->rw[i];
        int http = hold_one(vs, &me, cm, i, did, sizeof(did), err, cap);
        if (http) {
            snprintf(field_buf, fcap, "mounts[%u].volume", i);
            if (arr)
                volume_release_holder(vs, id);
            json_decref(arr);
            return http;
        }
        if (!arr)
            arr = json_array();
        json_array_append_new(arr, json_pack("{ss ss sb ss}", "volume", cm->name[i], "target",
                                             cm->target[i], "readonly", !cm->rw[i], "check", did));
    }
    *shown = arr;
    return 0;
}

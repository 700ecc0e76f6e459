/* /v1/volumes; see api_volumes.h. */
#include "vmm/sandbox/api_volumes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/sandbox/api_fields.h"
#include "vmm/volume/volume_hold.h"

static bool method_is(const struct api_conn *c, const char *m)
{
    return !strcmp(c->req.method, m);
}

static void create(const struct volume_store *vs, struct api_conn *c)
{
    json_t *o = body_object(c);
    if (!o)
        return;
    struct fields f = {c, o, false};
    only_known(&f, (const char *const[]){"name", "size_mib", NULL});
    const char *name = get_string(&f, "name", VOLUME_NAME_MAX + 1);
    long long mib = get_uint(&f, "size_mib", VOLUME_SIZE_MIN_MIB, VOLUME_SIZE_MAX_MIB,
                             VOLUME_SIZE_DEFAULT_MIB);
    if (!f.failed && !name)
        field_error(&f, "name", "%s", "a volume needs a name");
    if (!f.failed && !volume_name_ok(name, strlen(name)))
        field_error(&f, "name", "name '%.80s': want a letter or digit, then up to 63 letters, "
                    "digits, '_', '.' or '-'", name);
    static __thread struct volume_rec rec;
    char err[600];
    int rc = f.failed ? 0 : volume_create(vs, name, (uint32_t)mib, &rec, err, sizeof(err));
    if (f.failed) {
        json_decref(o);
        return;
    }
    if (rc == -EEXIST)
        api_error(c, 409, "name", "a volume named '%s' exists", name);
    else if (rc)
        api_error(c, 500, NULL, "volume %s: %s", name, err);
    else
        api_reply(c, 201, volume_rec_json(&rec));
    json_decref(o);
}

static void list(const struct volume_store *vs, struct api_conn *c)
{
    char **names;
    size_t n;
    int rc = volume_names(vs, &names, &n);
    if (rc)
        return api_error(c, 500, NULL, "cannot list the volumes: %s", strerror(-rc));
    static __thread struct volume_rec rec;
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (!volume_get(vs, names[i], &rec))
            json_array_append_new(arr, volume_rec_json(&rec));
        free(names[i]);
    }
    free(names);
    json_t *o = json_object();
    json_object_set_new(o, "volumes", arr);
    api_reply(c, 200, o);
}

void api_volumes(const struct volume_store *vs, struct api_conn *c, const char *name)
{
    if (!name) {
        if (method_is(c, "GET"))
            return list(vs, c);
        if (method_is(c, "POST"))
            return create(vs, c);
        return api_method_not_allowed(c, "GET, POST");
    }
    static __thread struct volume_rec rec;
    /* a name that cannot be a volume's names none (nor a file) */
    bool ok = volume_name_ok(name, strlen(name));
    if (method_is(c, "GET")) {
        int rc = ok ? volume_get(vs, name, &rec) : -ENOENT;
        if (rc == -ENOENT)
            return api_error(c, 404, NULL, "no volume '%.80s'", name);
        if (rc)
            return api_error(c, 500, NULL, "volume %s: %s", name,
                             rc == -EIO ? "its record is damaged" : strerror(-rc));
        return api_reply(c, 200, volume_rec_json(&rec));
    }
    if (method_is(c, "DELETE")) {
        int rc = ok ? volume_remove(vs, name, &rec) : -ENOENT;
        if (rc == -ENOENT)
            return api_error(c, 404, NULL, "no volume '%.80s'", name);
        if (rc == -EBUSY) {
            char holders[2048];
            volume_holders_text(&rec, holders, sizeof(holders));
            return api_error(c, 409, NULL, "the volume %s is in use by %s", name, holders);
        }
        if (rc)
            return api_error(c, 500, NULL, "volume %s: %s", name, strerror(-rc));
        return api_reply(c, 204, NULL);
    }
    api_method_not_allowed(c, "GET, DELETE");
}

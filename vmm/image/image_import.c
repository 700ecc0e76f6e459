/* An image into the store; see image_import.h. */
#include "vmm/image/image_import.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/image/image_ref.h"
#include "vmm/image/image_source.h"
#include "vmm/image/image_stop.h"
#include "vmm/image/image_user.h"
#include "vmm/image/rootfs_disk.h"
#include "vmm/util/rmtree.h"

/* A name from the path: its file name without .tar/.tgz/.tar.gz, other
 * bytes made '-'. */
static void name_from_path(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    snprintf(out, cap, "%s", base);
    size_t n = strlen(out);
    static const char *const ext[] = {".tar.gz", ".tgz", ".tar"};
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        size_t e = strlen(ext[i]);
        if (n > e && !strcmp(out + n - e, ext[i])) {
            out[n - e] = '\0';
            break;
        }
    }
    for (char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("._:@-", *c)))
            *c = '-';
    while (out[0] == '.' || out[0] == '-')
        memmove(out, out + 1, strlen(out));
    if (!out[0])
        snprintf(out, cap, "image");
}

/* What `run --image NAME` takes from the image's config. */
static json_t *defaults(const json_t *config)
{
    json_t *c = json_object_get(config, "config"), *out = json_object();
    static const char *const keep[] = {"Env", "WorkingDir", "User", "Entrypoint", "Cmd"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        json_t *v = json_object_get(c, keep[i]);
        if (v && !json_is_null(v))
            json_object_set(out, keep[i], v);
    }
    return out;
}

/* The config's User as numbers ("uid", "gid"), or why not ("user_error":
 * run then needs --user), into `user`; nothing without a User. */
static void resolve_user(int root, const json_t *config, json_t *user)
{
    const char *name = json_string_value(json_object_get(json_object_get(config, "config"), "User"));
    if (!name || !name[0])
        return;
    uint32_t uid, gid;
    char why[300];
    if (image_user_resolve(root, name, &uid, &gid, why, sizeof(why))) {
        json_object_set_new(user, "user_error", json_string(why));
        return;
    }
    json_object_set_new(user, "uid", json_integer(uid));
    json_object_set_new(user, "gid", json_integer(gid));
}

/* The same content imported before (under any name): its user. */
static json_t *earlier_user(const struct image_store *st, const char *id)
{
    json_t *other = image_store_find_id(st, id), *user = NULL;
    if (other) {
        user = json_object();
        static const char *const keys[] = {"uid", "gid", "user_error"};
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            if (json_object_get(other, keys[i]))
                json_object_set(user, keys[i], json_object_get(other, keys[i]));
    }
    json_decref(other);
    return user;
}

static int record(const struct image_store *st, struct image_import_result *res,
                  const json_t *config, json_t *user, uint64_t disk_bytes, char *err, size_t cap)
{
    char disk[PATH_MAX];
    image_store_disk_path(st, res->id, disk, sizeof(disk));
    json_t *rec = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I}", "name", res->name, "id", res->id,
                            "disk", disk, "config", defaults(config), "created",
                            (json_int_t)time(NULL), "bytes", (json_int_t)disk_bytes);
    if (rec)
        json_object_update(rec, user);
    int rc = rec ? image_store_put(st, res->name, rec, err, cap) : -1;
    json_decref(rec);
    return rc;
}

int image_import(const struct image_store *st, const struct image_import_req *req,
                 struct image_import_result *res, char *err, size_t cap)
{
    memset(res, 0, sizeof(*res));
    if (req->name && !image_name_ok(req->name))
        return snprintf(err, cap, "--name '%.140s': want 1-128 of letters, digits, . _ : @ -",
                        req->name), -1;
    if (req->name)
        snprintf(res->name, sizeof(res->name), "%s", req->name);
    else
        name_from_path(req->path, res->name, sizeof(res->name));
    if (image_is_builtin(res->name))
        return snprintf(err, cap, "the name '%s' is a built-in image's: give another with --name",
                        res->name), -1;
    /* Everything the import writes before the disk is done goes in here. */
    char work[PATH_MAX];
    int lock = image_store_work(st, work, sizeof(work), err, cap);
    if (lock < 0)
        return -1;
    struct layer_limits lim = {.max_bytes = req->max_bytes, .max_entries = IMAGE_MAX_ENTRIES,
                               .max_depth = IMAGE_MAX_DEPTH};
    static struct image_source src;
    if (image_source_open(req->path, work, &lim, &src, err, cap)) {
        rmtree(work);
        close(lock);
        return -1;
    }
    snprintf(res->id, sizeof(res->id), "%s", src.id);
    res->layers = src.nlayers;
    char disk[PATH_MAX];
    struct stat ds;
    image_store_disk_path(st, src.id, disk, sizeof(disk));
    json_t *user = stat(disk, &ds) == 0 ? earlier_user(st, src.id) : NULL;
    if (user) { /* the same content, imported before */
        res->cached = true;
        int rc = record(st, res, src.config, user, (uint64_t)ds.st_size, err, cap);
        json_decref(user);
        image_source_close(&src);
        rmtree(work);
        close(lock);
        return rc;
    }
    user = json_object(); /* a disk no record names is made again */
    char stage[PATH_MAX + 16], part[PATH_MAX + 16];
    snprintf(stage, sizeof(stage), "%s/stage", work);
    int rc = -1, root = -1;
    struct rootfs_owners owners = {0};
    struct layer_totals tot = {0};
    if (mkdir(stage, 0700) < 0 || (root = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        snprintf(err, cap, "%s: %s", stage, strerror(errno));
        goto out;
    }
    for (unsigned i = 0; i < src.nlayers; i++) {
        if (req->progress)
            fprintf(stderr, "airlock: %s: layer %u of %u\n", res->name, i + 1, src.nlayers);
        int fd = image_source_layer(&src, i, err, cap);
        if (fd < 0)
            goto out;
        struct layer_result lr;
        int e = layer_apply(fd, root, &lim, &tot, rootfs_owners_add, &owners, &lr);
        close(fd);
        if (e) {
            snprintf(err, cap, "layer %u: %.300s%s%.200s", i + 1, lr.entry, lr.entry[0] ? ": " : "",
                     lr.why);
            goto out;
        }
    }
    res->bytes = tot.bytes;
    res->skipped_devices = tot.skipped_devices;
    resolve_user(root, src.config, user);
    if (req->progress)
        fprintf(stderr, "airlock: %s: making the root disk\n", res->name);
    snprintf(part, sizeof(part), "%s/disk.ext4", work);
    char why[512];
    if (rootfs_disk_make(stage, &owners, part, IMAGE_HEADROOM_MIB, why, sizeof(why))) {
        snprintf(err, cap, "the root disk: %s", why);
        goto out;
    }
    if (rename(part, disk) < 0 || stat(disk, &ds) < 0) {
        snprintf(err, cap, "%s: %s", disk, strerror(errno));
        goto out;
    }
    rc = record(st, res, src.config, user, (uint64_t)ds.st_size, err, cap);
out:
    json_decref(user);
    if (root >= 0)
        close(root);
    rootfs_owners_free(&owners);
    image_source_close(&src);
    rmtree(work);
    close(lock);
    if (rc && image_stopped())
        snprintf(err, cap, "stopped by signal %d (%s)", image_stopped(), strsignal(image_stopped()));
    return rc;
}

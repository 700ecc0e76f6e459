/* airlock's image store: imported images as root disks, content-addressed.
 *
 *   $AIRLOCK_HOME, else /var/lib/airlock as root, else
 *   $XDG_DATA_HOME/airlock (~/.local/share/airlock):
 *     disks/<hex>.ext4     a root disk, named by its image's content id
 *     images/<name>.json   {"name", "id", "disk", "config", "created", "bytes"}
 *     tmp/import.XXXXXX/   one import's staging, unpacking and disk in
 *                          the making, flock'ed while it runs; removed by
 *                          the import, or (killed) by the next one
 *     mounts/<key>.ext4    a host folder as a disk for --mount, named by
 *                          the sha256 of the folder's metadata
 *                          (vmm/image/dir_disk.h), a cache
 *
 * A name is 1-128 of [A-Za-z0-9._:@-], not starting with '.' (a file name
 * and a docker-style reference both). */
#ifndef AIRLOCK_IMAGE_IMAGE_STORE_H
#define AIRLOCK_IMAGE_IMAGE_STORE_H

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

#define IMAGE_NAME_MAX 128

struct image_store {
    char root[PATH_MAX - 256];
};

/* Finds (and makes) the store's folders.  0 or -1 with err. */
int image_store_open(struct image_store *st, char *err, size_t cap);

bool image_name_ok(const char *name);

/* A record's path, a disk's path (hex: the id without "sha256:"). */
void image_store_record_path(const struct image_store *st, const char *name, char *out, size_t cap);
void image_store_disk_path(const struct image_store *st, const char *id, char *out, size_t cap);
/* The folder of the --mount disks. */
void image_store_mounts_path(const struct image_store *st, char *out, size_t cap);

/* Makes the caller's own folder under tmp/ (its path into out), first
 * removing those of imports that died; the fd holding its lock, which the
 * caller closes after removing the folder, or -1 with err. */
int image_store_work(const struct image_store *st, char *out, size_t cap, char *err, size_t ecap);

/* Reads the record of `name`; NULL with err (no such image, a broken record). */
json_t *image_store_get(const struct image_store *st, const char *name, char *err, size_t cap);
/* Writes it whole (a temp file renamed over).  0 or -1 with err. */
int image_store_put(const struct image_store *st, const char *name, json_t *rec, char *err,
                    size_t cap);

/* Calls fn(name, record, ctx) for each readable record, in no order,
 * until one returns non-zero: that value, 0, or -errno (no images/). */
typedef int image_store_fn(const char *name, json_t *rec, void *ctx);
int image_store_each(const struct image_store *st, image_store_fn *fn, void *ctx);
/* A record (a reference the caller drops) whose id is `id`; NULL when
 * none is. */
json_t *image_store_find_id(const struct image_store *st, const char *id);

#endif

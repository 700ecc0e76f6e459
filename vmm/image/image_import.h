/* `airlock image import`: an image (vmm/image/image_source.h) into the store
 * (vmm/image/image_store.h) as a root disk.  Layers are applied in order onto
 * a staging folder under the store's tmp/ (vmm/image/layer_apply.h), the disk
 * is made from it (vmm/image/rootfs_disk.h), and the record names it.  An
 * image whose content id already has a disk costs a lookup: only its name
 * is (re)written.  On failure nothing is left in tmp/ and no record
 * changes. */
#ifndef AIRLOCK_IMAGE_IMAGE_IMPORT_H
#define AIRLOCK_IMAGE_IMAGE_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/image/image_store.h"

#define IMAGE_DEFAULT_MAX_MIB 16384 /* the files of one image, unpacked */
#define IMAGE_MAX_ENTRIES     2000000
#define IMAGE_MAX_DEPTH       256
#define IMAGE_HEADROOM_MIB    256   /* free space in the root disk, before its overlay */

struct image_import_req {
    const char *path;
    const char *name;     /* NULL: from the path's file name */
    uint64_t max_bytes;
    bool progress;        /* a line per layer on stderr (a terminal) */
};

struct image_import_result {
    char name[IMAGE_NAME_MAX + 1];
    char id[80];
    bool cached;          /* the disk was there already */
    unsigned layers;
    uint64_t bytes;       /* of file data applied */
    uint64_t skipped_devices;
};

/* 0, or -1 with err: one line naming what was wrong. */
int image_import(const struct image_store *st, const struct image_import_req *req,
                 struct image_import_result *res, char *err, size_t cap);

#endif

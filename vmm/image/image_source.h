/* What `airlock image import PATH` reads: an OCI image layout (a folder
 * or a tar of one: `oci-layout`, `index.json`, `blobs/sha256/...`), a
 * `docker save` / `podman save` archive (`manifest.json`), or a plain
 * rootfs tarball (neither: the whole tar is the one layer).
 *
 * An archive is unpacked first into a private folder (regular files,
 * folders and, for old docker-save layers shared between images,
 * symlinks; nothing else), bounded by the limits; every blob is then
 * opened beneath that folder (RESOLVE_BENEATH, so a symlink cannot lead
 * out of it) and its sha256 checked against the digest that names it
 * (OCI: the manifest's; docker-save: the config's rootfs.diff_ids) before
 * a byte of it is applied.  The JSON is parsed by jansson, each document
 * bounded in size; a field of the wrong type is an error naming it. */
#ifndef AIRLOCK_IMAGE_IMAGE_SOURCE_H
#define AIRLOCK_IMAGE_IMAGE_SOURCE_H

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

#include "vmm/image/layer_apply.h"

#define IMAGE_MAX_LAYERS 256
#define IMAGE_JSON_MAX   (4u << 20) /* bytes of one manifest, index or config */
#define IMAGE_DIGEST_MAX 80         /* "sha256:" + 64 hex digits, and room */

enum image_format { IMAGE_OCI, IMAGE_DOCKER, IMAGE_ROOTFS_TAR };

struct image_source {
    enum image_format format;
    int dir_fd;                 /* the layout's folder (unpacked or given); -1 for a rootfs tar */
    int rootfs_fd;              /* IMAGE_ROOTFS_TAR: the tar itself */
    char unpacked[PATH_MAX];    /* the private folder an archive went into, "" if none */
    json_t *config;             /* the image config (OCI/docker), or NULL */
    char id[IMAGE_DIGEST_MAX];  /* what names this image's content: the manifest's or
                                 * config's digest, or the tar's sha256 */
    unsigned nlayers;
    struct image_layer {
        char path[PATH_MAX];        /* beneath dir_fd */
        char digest[IMAGE_DIGEST_MAX]; /* "sha256:<hex>" the blob must have */
    } layers[IMAGE_MAX_LAYERS];
};

/* Opens PATH into *src, unpacking an archive under tmp_dir.  0, or -1
 * with err naming what was wrong (and nothing left under tmp_dir). */
int image_source_open(const char *path, const char *tmp_dir, const struct layer_limits *lim,
                      struct image_source *src, char *err, size_t cap);

/* Layer i as an fd, its sha256 checked first (the fd is at its start).
 * fd, or -1 with err. */
int image_source_layer(struct image_source *src, unsigned i, char *err, size_t cap);

/* Closes it and removes the unpacked folder. */
void image_source_close(struct image_source *src);

#endif

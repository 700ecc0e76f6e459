/* A bundle's root folder (config.json's root.path, which the engine has
 * already mounted) as the VM's root disk, through the image store's disk
 * cache (vmm/image/dir_disk.h): `mke2fs -d` of the folder with its owners,
 * modes and extended attributes kept, cached so the second container of
 * an image does not build it again.
 *
 * The key: when the folder is an overlay mount (Docker's overlay2,
 * Podman's and containerd's overlay snapshotters), its lower layers are
 * what the image is and never change while mounted, so each lower folder
 * is walked as a --mount folder is (metadata, inodes included: an
 * unchanged layer keeps them), and the upper folder, which is new for
 * each container but holds the same few files the engine made (mount
 * points for /etc/hosts and the like), by content.  Any other folder is
 * walked as a whole.  The disk is then made from the merged folder, which
 * is what the container must see. */
#ifndef AIRLOCK_RUNTIME_ROOT_DISK_H
#define AIRLOCK_RUNTIME_ROOT_DISK_H

#include <stddef.h>

#include "vmm/image/dir_disk.h"

/* Free room in a root disk: what the container may write (its writes go
 * to the VM's copy-on-write overlay, never to the cached disk). */
#define ROOT_DISK_HEADROOM_MIB 1024
#define ROOT_DISK_MAX_LOWERS 128

/* An overlay mount's layers, parsed from /proc/self/mountinfo. */
struct overlay_layers {
    char *lower[ROOT_DISK_MAX_LOWERS]; /* top first, as lowerdir= lists them */
    unsigned nlower;
    char *upper; /* NULL for a read-only overlay */
};

/* Whether `dir` (a real path) is the mount point of an overlay, and its
 * layers (absolute paths only; a relative lowerdir makes it "not known":
 * 0).  1 found, 0 not an overlay or not known, -errno. */
int overlay_layers_of(const char *dir, struct overlay_layers *o);
/* The same from mountinfo text (unit tests, fuzzing). */
int overlay_layers_parse(const char *mountinfo, const char *dir, struct overlay_layers *o);
void overlay_layers_free(struct overlay_layers *o);

/* The root disk of `rootfs`: 0 with *out set (out->cached says whether
 * it was there), or -1 with err one line. */
int root_disk_get(const char *rootfs, struct dir_disk *out, char *err, size_t cap);

#endif

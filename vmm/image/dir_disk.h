/* A host folder as an ext4 disk for `--mount HOSTDIR:GUESTDIR` (docs/mounts.md),
 * cached in the image store while the folder is unchanged.
 *
 * The key is the sha256 of a physical walk of the folder (fts,
 * FTS_PHYSICAL: a symlink is an entry, never followed), entries in name
 * order: each entry's name relative to the folder, type and mode, uid,
 * gid, size, mtime and ctime in ns, device and inode, and a symlink's
 * target; plus the folder's real path and a version of how disks are
 * made.  Any write in the tree changes a ctime, so an unchanged key means
 * unchanged contents; mounting the same folder again costs the walk only.
 *
 * The disk is made with `mke2fs -d` (vmm/image/rootfs_disk.h), which copies
 * symlinks as links and never follows them, every entry owned by the
 * guest's default command user (AGENT_NOBODY, 65534) with its mode kept,
 * and DIR_DISK_HEADROOM_MIB of free room.  It is made under a temporary
 * name in the store's mounts/ and renamed to mounts/<key>.ext4 without
 * replacing one that is there (another process may be using it), then the
 * folder is walked again: a folder that changed meanwhile is made again
 * (DIR_DISK_TRIES in all), since its disk would not be what its key says.
 * A crash leaves at most a temporary ".NAME", removed a day later.
 *
 * The walk is bounded by the limits `airlock image import` uses (entries,
 * depth, bytes of file data: vmm/image/image_import.h); a name with a control
 * byte is refused (the disk's owners are set through a debugfs script,
 * one command a line), and so is a folder that holds the store itself.
 *
 * The cache keeps at most DIR_DISK_CACHE_DISKS disks and
 * DIR_DISK_CACHE_MIB of their blocks: after a new disk is made, the least
 * recently used others go (use = the access time each use sets; a disk's
 * mtime never changes once made, as a snapshot that holds it requires). */
#ifndef AIRLOCK_IMAGE_DIR_DISK_H
#define AIRLOCK_IMAGE_DIR_DISK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/image/image_store.h"
#include "vmm/image/layer_apply.h"

#define DIR_DISK_HEADROOM_MIB 256      /* free room, what a :rw mount may write */
#define DIR_DISK_OWNER        65534u   /* the guest's default command user */
#define DIR_DISK_TRIES        3
#define DIR_DISK_CACHE_DISKS  32
#define DIR_DISK_CACHE_MIB    (8 * 1024)
#define DIR_DISK_KEY_HEX      64

/* What a walk saw. */
struct dir_walk {
    char key[DIR_DISK_KEY_HEX + 1];
    uint64_t entries, bytes; /* bytes: regular files' sizes */
    unsigned depth;
};

struct dir_disk {
    char path[PATH_MAX];     /* the disk in the store */
    struct dir_walk walk;
    bool cached;             /* it was there: only the walk was done */
    unsigned walk_ms, make_ms; /* make_ms: 0 when cached */
};

/* The limits image import uses (vmm/image/image_import.h). */
void dir_disk_limits(struct layer_limits *lim);

/* Walks `dir` (a real path: no symlink in it) into *w.  0, or -1 with
 * err naming the entry and what was wrong (no prefix: the caller names
 * the folder). */
int dir_disk_walk(const char *dir, const struct layer_limits *lim, struct dir_walk *w, char *err,
                  size_t cap);

/* The disk of folder `dir` (as the user gave it: made a real path here),
 * from the cache or made now.  0, or -1 with err one line without the
 * folder's name (the caller says which --mount). */
int dir_disk_get(const struct image_store *st, const char *dir, const struct layer_limits *lim,
                 struct dir_disk *out, char *err, size_t cap);

/* The walk with another format string hashed first (a different kind of
 * disk made from the same tree must not share its key).  by_content: no
 * entry's identity (device, inode, times, links) and not the folder's own
 * path, but every regular file's bytes, so two copies of one tree (an
 * overlay's fresh upper folders) get one key; for small trees, as it
 * reads every byte. */
int dir_disk_walk_as(const char *dir, const char *format, bool by_content,
                     const struct layer_limits *lim, struct dir_walk *w, char *err, size_t cap);

/* Another kind of disk through the same cache (the OCI runtime's root
 * disks): its own key format, or a key function of its own (a tree whose
 * identity is not its inodes, e.g. an overlay mount keyed by its
 * layers), the tree's owners kept or made DIR_DISK_OWNER, its headroom. */
typedef int dir_disk_key_fn(void *opaque, const char *real, const struct layer_limits *lim,
                            struct dir_walk *w, char *err, size_t cap);
struct dir_disk_how {
    const char *format;    /* hashed first by the default walk */
    dir_disk_key_fn *key;  /* NULL: dir_disk_walk_as(real, format) */
    void *opaque;
    bool keep_owners;      /* rootfs_disk_make_kept, else every entry DIR_DISK_OWNER's */
    unsigned headroom_mib;
};
int dir_disk_get_how(const struct image_store *st, const char *dir, const struct layer_limits *lim,
                     const struct dir_disk_how *how, struct dir_disk *out, char *err, size_t cap);

/* Removes least recently used disks of mounts/ (never `keep`, a file
 * name, or NULL) until at most max_disks and max_bytes of blocks are
 * left, and temporaries older than a day.  How many disks went. */
unsigned dir_disk_evict(const struct image_store *st, const char *keep, unsigned max_disks,
                        uint64_t max_bytes);

#endif

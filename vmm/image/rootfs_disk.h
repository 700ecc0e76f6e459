/* A root disk from a staging folder, without root and without a loop
 * mount: e2fsprogs' `mke2fs -d` copies the tree into a fresh ext4 file,
 * then one `debugfs -w` script sets what an unprivileged copy cannot
 * keep: every entry's owner, mode and security.capability as the image's
 * layers said (struct rootfs_owners, filled by layer_apply's callback),
 * everything else owned by root (or one owner the caller names), each
 * entry named by its inode number (a path costs a read of every folder on
 * the way), the numbers from debugfs's listing of each folder, one run
 * per depth.  `e2fsck -fn` checks the result.  The tools are found on PATH, else in
 * /usr/sbin and /sbin (a user's PATH on Debian has no sbin); each dies
 * with the process that runs it (PR_SET_PDEATHSIG), and a signal caught
 * by image_stop.h kills it. */
#ifndef AIRLOCK_IMAGE_ROOTFS_DISK_H
#define AIRLOCK_IMAGE_ROOTFS_DISK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmm/image/layer_apply.h"

/* The owners the layers asked for, in order (a later one for the same
 * path wins, as the layers do). */
struct rootfs_owners {
    struct rootfs_owner {
        char *path;
        uid_t uid;
        gid_t gid;
        mode_t mode;
        void *caps;
        size_t caps_len;
    } *v;
    size_t n, cap;
};

/* A folder may hold at most this many entries: mke2fs -d (e2fsprogs
 * 1.47) looks each new name up in its folder, then looks for room in it,
 * both by reading the whole folder, so a folder of n entries costs time in
 * n squared (measured: 10,000 empty files 11 s, 20,000 48 s; 100,000
 * would be over 15 minutes).  Past it, the disk is refused before mke2fs
 * runs, naming the folder. */
#define ROOTFS_MAX_FOLDER_ENTRIES 10000

/* The tree's allocated bytes and entry count (its top included); -1 with
 * err naming the folder when one holds more than max_folder_entries, or
 * why it could not be read. */
int rootfs_tree_size(const char *stage, unsigned max_folder_entries, uint64_t *bytes,
                     uint64_t *inodes, char *err, size_t cap);

/* layer_apply's on_owner: appends a copy.  0 or -ENOMEM. */
int rootfs_owners_add(void *owners, const struct layer_owner *o);
void rootfs_owners_free(struct rootfs_owners *o);

/* Makes `out` (created, replaced if there) from the folder `stage`, with
 * headroom_mib of free space.  0, or -1 with err saying which step failed
 * and why. */
int rootfs_disk_make(const char *stage, const struct rootfs_owners *owners, const char *out,
                     unsigned headroom_mib, char *err, size_t cap);

/* The same with every entry (the disk's root folder included) owned by
 * uid:gid instead of root before `owners` apply: a host folder made into
 * a disk for a guest user (vmm/image/dir_disk.h). */
int rootfs_disk_make_owned(const char *stage, const struct rootfs_owners *owners, const char *out,
                           uid_t uid, gid_t gid, unsigned headroom_mib, char *err, size_t cap);

/* The same keeping every entry's owner, mode and extended attributes as
 * `mke2fs -d` copies them from the tree (no owners script): a tree whose
 * owners are already right, read by root (the OCI runtime's bundles). */
int rootfs_disk_make_kept(const char *stage, const char *out, unsigned headroom_mib, char *err,
                          size_t cap);

#endif

/* `--mount` for `airlock run` and `airlock sandbox-vm` (docs/mounts.md):
 * each HOSTDIR made into a disk, or found in the cache (vmm/image/dir_disk.h),
 * and attached after the root image and the --disk ones: read-only for
 * :ro (the device refuses writes, even the guest root's), under a
 * copy-on-write overlay for :rw (the guest's writes stay in the VM, the
 * cached disk is never written).  The guest knows a disk by its place
 * (/dev/vda, vdb, ...), which each mount_spec keeps for its MOUNT; the
 * --mounts of one folder and mode share the first one's disk
 * (mount_list_owner)
 * (run_thread.c; a sandbox's come from the daemon, which passes no
 * --disk: its mounts are disks 1..n in order). */
#ifndef AIRLOCK_CLI_RUN_MOUNTS_H
#define AIRLOCK_CLI_RUN_MOUNTS_H

#include <stddef.h>

#include "vmm/cli/boot_options.h"
#include "vmm/cli/mount_options.h"

/* Appends l's disks to o->disks (the caller checked they fit the VM's
 * slots); with --timings says on stderr, per mount, whether the disk was
 * cached or made and how long the walk and the making took.  A --volume
 * (docs/volumes.md) is the volume's own disk in the store of state_dir
 * (NULL: the default, user_dirs.h), held by this process (a second
 * writer, or a reader beside a writer, is refused naming the holder) and
 * checked with e2fsck first; what e2fsck repaired is said on stderr.  0,
 * or -EINVAL with err one line naming the --mount or --volume. */
int run_mounts_attach(struct mount_list *l, struct boot_options *o, const char *state_dir,
                      char *err, size_t errlen);

#endif

/* The snapshot directory: what `airlock snapshot --out DIR` creates and
 * `airlock run --from-snapshot DIR` opens.  Files:
 *   state.dtb    the state (vmm/snapshot/snapshot_file.h), written last
 *   memory       guest RAM (vmm/snapshot/snapshot_memory.h), plain or zlib
 *   diskN.cow    the overlay of cow disk N (devices/disk.h)
 * Everything is opened here, before the jail and the seccomp filters. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_DIR_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include "devices/disk.h"
#include "vmm/memory/layout.h"
#include "vmm/snapshot/snapshot_state.h"

#define SNAP_STATE_FILE  "state.dtb"
#define SNAP_MEMORY_FILE "memory"

/* Where a snapshot goes: files opened (created empty) before the jail and
 * the seccomp filter, which allow neither open() nor paths. */
struct snap_out {
    int state_fd, memory_fd;
    bool zlib;
    int overlay_fd[LAYOUT_VIRTIO_SLOTS]; /* per disk: -1 unless cow */
};

/* The name of disk i's overlay file in the snapshot directory. */
void snap_overlay_name(unsigned i, char out[SNAP_NAME_MAX]);

/* Creates DIR (mode 0700) or takes it if it exists and is empty: a
 * snapshot never replaces files, since a restored VM may be mapping its
 * memory file.  Then creates the files for a VM with these disks (each
 * must be ro or cow: a raw writable disk would be shared by every
 * restored VM).  -errno with err naming the path. */
int snap_dir_create(const char *dir, struct disk *const *disks, unsigned ndisks, bool zlib,
                    struct snap_out *o, char *err, size_t errlen);

/* Opens DIR for a restore: reads and decodes state.dtb into *st (the
 * caller frees it), opens the memory file and each disk's overlay
 * (overlay_fd[i] = -1 where the state names none).  memory_fd NULL: the
 * memory file is neither opened nor needed (a cold boot on the
 * snapshot's disks; a filesystem-only pause removes it).  -errno with err
 * naming the file and what is wrong with it. */
int snap_dir_open(const char *dir, struct snap_state **st, int *memory_fd, int *overlay_fd,
                  char *err, size_t errlen);

#endif

/* The snapshot directory: what `airlock snapshot --out DIR` creates and
 * `airlock run --from-snapshot DIR` opens.  Files:
 *   state.dtb    the state (snapshot/snapshot_file.h), written last
 *   memory       guest RAM (snapshot/snapshot_memory.h), plain or zlib
 *   diskN.cow    the overlay of cow disk N (devices/disk.h)
 * Everything is opened here, before the jail and the seccomp filters. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_DIR_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/session_snapshot.h"
#include "snapshot/snapshot_state.h"

/* Creates DIR (mode 0700) or takes it if it exists and is empty: a
 * snapshot never replaces files, since a restored VM may be mapping its
 * memory file.  Then creates the files for session s (its disks must be
 * ro or cow: a raw writable disk would be shared by every restored VM).
 * -errno with err naming the path. */
int snap_dir_create(const char *dir, struct boot_session *s, bool zlib, struct snap_out *o,
                    char *err, size_t errlen);

/* Opens DIR for a restore: reads and decodes state.dtb into *st (the
 * caller frees it), opens the memory file and each disk's overlay
 * (overlay_fd[i] = -1 where the state names none).  -errno with err
 * naming the file and what is wrong with it. */
int snap_dir_open(const char *dir, struct snap_state **st, int *memory_fd, int *overlay_fd,
                  char *err, size_t errlen);

#endif

/* Snapshots of a running session and restores into a new one: the order
 * of the pieces (KVM state, devices, disks' overlays, guest RAM, the state
 * file) and what must hold while they are taken. */
#ifndef AIRLOCK_CLI_SESSION_SNAPSHOT_H
#define AIRLOCK_CLI_SESSION_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/cli/session.h"
#include "vmm/snapshot/snapshot_dir.h"
#include "vmm/snapshot/snapshot_state.h"

/* Pauses the VM and writes it out; the VM stays paused (the caller stops
 * it).  -errno with err saying what failed. */
int session_snapshot_save(struct boot_session *s, const struct snap_out *o, char *err,
                          size_t errlen);

/* After the devices are attached and before any vCPU runs: the KVM
 * state, the devices' state and the disks' overlays from `st` (guest RAM
 * is already in), then a vsock TRANSPORT_RESET so the guest drops the
 * connections it had (the host side has none).  overlay_fd[i] is -1 for a
 * disk without one.  -errno with err naming what was refused. */
int session_snapshot_restore(struct boot_session *s, const struct snap_state *st,
                             const int *overlay_fd, char *err, size_t errlen);

/* Whether the session's disks, as opened now, are the files the
 * snapshot was taken with (snap_disk_check each): 0, or -ESTALE with err
 * naming the first that is not.  The caller has made them from st's list
 * (the counts agree). */
int session_disks_check(const struct boot_session *s, const struct snap_state *st, char *err,
                        size_t errlen);

/* Each disk's overlay from st's files (overlay_fd[i] -1: none) into the
 * session's disks: a restore's, and a cold boot's on a snapshot's disks
 * (--cold-boot).  -errno with err naming what was refused. */
int session_overlays_load(struct boot_session *s, const struct snap_state *st,
                          const int *overlay_fd, char *err, size_t errlen);

/* Whether disk i, as opened now, is the file the snapshot was taken
 * with (size, device, inode, mtime): 0, or -ESTALE with err naming it. */
int snap_disk_check(const struct snap_disk *sd, const struct disk *d, char *err, size_t errlen);

#endif

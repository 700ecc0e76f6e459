/* Container disks over a running VM's control socket (the SOCK_SEQPACKET
 * pair of vmm/snapshot/snapshot_control.h): one microVM per pod, each app
 * container's root disk added to the running VM in a spare virtio-blk slot
 * it was booted with (`airlock sandbox-vm --spare-disks N`; no hotplug).
 *
 *   "DISK-FILL <slot> <serial> <cow_cap_bytes>" with 2 fds (SCM_RIGHTS):
 *       the base image (O_RDONLY) and an empty file (O_RDWR) that becomes
 *       its copy-on-write overlay: the jailed VM opens no file itself.
 *       slot is the spare's index, 0..N-1 (its GET_ID while empty is
 *       "spare<slot>"); serial is what GET_ID answers once filled (1..20
 *       printable ASCII bytes, spaces too: it is everything between the
 *       slot and the last space); cow_cap 0 = the disk's size.
 *   "DISK-EMPTY <slot>" (no fds): the slot back to capacity 0, its disk
 *       and overlay closed; emptying an empty slot is OK.
 * Each is answered "OK" or "ERR <reason>". */
#ifndef AIRLOCK_SNAPSHOT_DISK_CONTROL_H
#define AIRLOCK_SNAPSHOT_DISK_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/disk.h"
#include "vmm/snapshot/snapshot_control.h"

#define DISK_CONTROL_FILL  1
#define DISK_CONTROL_EMPTY 2
/* The longest request: "DISK-FILL", a 10-digit slot, a 20-byte serial, a
 * 20-digit cap and their spaces (62 bytes), with room to spare. */
#define DISK_CONTROL_MSG_MAX SNAP_CONTROL_TEXT_MAX

struct disk_control_req {
    int op; /* DISK_CONTROL_FILL or DISK_CONTROL_EMPTY */
    unsigned slot;
    char serial[DISK_SERIAL_MAX + 1];
    uint64_t cow_cap;
};

/* The VM: parses a disk request of n bytes (untrusted, no NUL needed) that
 * came with nfds descriptors.  0 with *r, or -EINVAL with `why` naming
 * what is wrong ("bad fds: ...", "bad serial: ...", "slot ... out of
 * range", "bad request: ..."). */
int disk_control_parse(const char *data, size_t n, unsigned nfds, struct disk_control_req *r,
                       char *why, size_t cap);

/* The daemon's side.  Fill: base_fd and overlay_fd are sent, not closed
 * (the caller still owns its copies).  Both wait at most timeout_ms for
 * the answer: 0 for OK; -EIO with the VM's reason in msg; -ETIMEDOUT;
 * -ECONNRESET when the VM is gone; -EINVAL (a serial that cannot be sent:
 * empty, too long, or holding a byte outside printable ASCII), -EBADF (a
 * negative fd), or the errno of sendmsg. */
int vm_control_disk_fill(int sock, unsigned slot, const char *serial, int base_fd, int overlay_fd,
                         uint64_t cow_cap, unsigned timeout_ms, char *msg, size_t cap);
int vm_control_disk_empty(int sock, unsigned slot, unsigned timeout_ms, char *msg, size_t cap);

#endif

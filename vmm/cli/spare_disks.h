/* Spare virtio-blk slots (`airlock sandbox-vm --spare-disks N`): devices
 * booted empty (capacity 0, GET_ID "spare<k>") after the VM's other
 * disks, which the daemon fills with a container's root disk and empties
 * again over the control socket while the VM runs (vmm/snapshot/
 * disk_control.h; one microVM per Kubernetes pod). */
#ifndef AIRLOCK_CLI_SPARE_DISKS_H
#define AIRLOCK_CLI_SPARE_DISKS_H

#include <stddef.h>

#include "vmm/kvm/machine.h"

struct boot_session;

/* At most this many (the option's range; the VM's 8 virtio slots, shared
 * with its other disks and the vsock device, usually bound it first). */
#define SPARE_DISKS_MAX 8

/* The devices of s->opt.spare_disks spares, in m's slots after its disks.
 * 0 or -ENOMEM. */
int spare_disks_create(struct boot_session *s, struct machine_devices *m);

/* The first spare holding a disk, or -1. */
int spare_disks_first_filled(const struct boot_session *s);

/* Serves one disk request (its text, n bytes, and nfds fds): NULL when
 * done, else why not (into why).  fds the new disk took are set to -1;
 * the caller closes the rest. */
const char *spare_disks_request(struct boot_session *s, const char *text, size_t n, int *fds,
                                unsigned nfds, char *why, size_t cap);

/* At teardown: each spare's disk closed, its device destroyed. */
void spare_disks_destroy(struct boot_session *s);

#endif

/* The device set of a VM: every port and MMIO range the guest can touch and
 * the handler behind it.  One function registers it, called by `airlock
 * boot`/`run` on the VM's bus and by `airlock surface` on a bus with no VM,
 * so the surface report cannot drift from what boot does. */
#ifndef AIRLOCK_KVM_MACHINE_H
#define AIRLOCK_KVM_MACHINE_H

#include <stddef.h>

#include "vmm/memory/layout.h"
#include "devices/boot_timer.h"
#include "devices/bus.h"
#include "devices/i8042.h"
#include "devices/serial.h"
#include "vmm/memory/gmem.h"
#include "vmm/kvm/virtio_devices.h"

struct virtio_blk;
struct virtio_vsock;

/* The devices, already created by the caller (their callbacks are the
 * caller's business); the machine only places them. */
struct machine_devices {
    struct serial *serial;
    struct i8042 *kbd;
    struct boot_timer *timer;
    struct virtio_blk *blks[LAYOUT_VIRTIO_SLOTS]; /* slots 0.. in --disk order */
    unsigned nblks;
    struct virtio_vsock *vsock; /* NULL: no vsock device; else the slot after the disks */
};

/* Registers COM1, the i8042 ports, the boot timer's port and one virtio-mmio slot per device on
 * `bus` (the virtio transports get `mem` as guest memory; NULL is fine when
 * no queue will ever run).  No KVM: vdevs_wire() connects the slots to a
 * VM afterwards.  -errno with err explaining. */
int machine_register_devices(struct bus *bus, const struct gmem *mem, struct vdevs *vs,
                             const struct machine_devices *m, char *err, size_t errlen);

#endif

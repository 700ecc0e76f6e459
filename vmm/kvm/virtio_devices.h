/* The monitor's side of the virtio-mmio devices: their slots in guest
 * physical memory, their interrupt lines (irqfd), their queue notifications
 * (ioeventfd, handled on the event loop), and how they are announced on the
 * kernel command line. */
#ifndef AIRLOCK_KVM_VIRTIO_DEVICES_H
#define AIRLOCK_KVM_VIRTIO_DEVICES_H

#include <stddef.h>

#include "vmm/memory/layout.h"
#include "devices/virtio/mmio.h"
#include "vmm/kvm/evloop.h"
#include "vmm/kvm/vm.h"

struct vdev;

/* InterruptACK values taken in KVM: 1 (used buffers), 2 (configuration
 * change), 3 (both), one ioeventfd each. */
#define VDEV_ACK_VALUES 3

struct vdev_queue_ref {
    struct vdev *dev;
    unsigned queue;
};

struct vdev {
    struct virtio_mmio transport;
    struct vm *vm;
    unsigned slot;
    int irq_fd;                                 /* KVM_IRQFD: raises the line */
    int notify_fd[VIRTIO_MMIO_MAX_QUEUES];      /* KVM_IOEVENTFD on QueueNotify */
    int ack_fd[VDEV_ACK_VALUES];                /* KVM_IOEVENTFD on InterruptACK = i + 1 */
    struct vdev_queue_ref refs[VIRTIO_MMIO_MAX_QUEUES];
    char name[32];
};

struct vdevs {
    struct vdev devs[LAYOUT_VIRTIO_SLOTS];
    unsigned n;
};

/* Writes the user's kernel command line `line` with
 * "virtio_mmio.device=<size>@<addr>:<irq>" for slots [0, n) to out
 * (capacity cap): appended, or before the first "--" when there is one
 * (boot/kernel_cmdline.h: after it the kernel hands words to init).
 * -E2BIG if it does not fit. */
int vdevs_cmdline(char *out, size_t cap, const char *line, unsigned n);

/* The user's line back from what vdevs_cmdline made of it for n slots
 * (a snapshot keeps the whole line; a cold boot on its disks announces
 * them again).  -ENOENT when `full` does not hold those announcements. */
int vdevs_cmdline_undo(char *out, size_t cap, const char *full, unsigned n);

/* Puts a device in the next slot: its transport and its bus window, and
 * nothing that needs KVM, so `airlock surface` registers the same set on a
 * bus with no VM (vmm/kvm/machine.c).  -errno with err explaining. */
int vdevs_register(struct vdevs *vs, struct bus *bus, const struct gmem *mem,
                   const struct virtio_device_ops *ops, void *dev, char *err, size_t errlen);

/* Connects every registered slot to the VM: irqfd, one ioeventfd per
 * queue and one per InterruptACK value.  -errno with err explaining. */
int vdevs_wire(struct vdevs *vs, struct vm *vm, char *err, size_t errlen);

/* The event-loop handler of one queue's notification eventfd (opaque is a
 * struct vdev_queue_ref): a guest-triggered entry point, named by the
 * surface report. */
void vdev_on_notify(void *opaque, int fd, uint32_t events);

/* Has the event loop watch every queue's notification eventfd. */
int vdevs_attach(struct vdevs *vs, struct evloop *loop);

/* Closes the eventfds (after the vCPUs are gone). */
void vdevs_destroy(struct vdevs *vs);

#endif

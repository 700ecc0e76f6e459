#include "vmm/kvm/virtio_devices.h"
#include "boot/kernel_cmdline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

static uint64_t slot_base(unsigned slot)
{
    return LAYOUT_VIRTIO_MMIO_BASE + slot * LAYOUT_VIRTIO_MMIO_STRIDE;
}

static unsigned slot_irq(unsigned slot)
{
    return LAYOUT_VIRTIO_IRQ_BASE + slot;
}

_Static_assert(LAYOUT_VIRTIO_IRQ_BASE + LAYOUT_VIRTIO_SLOTS <= LAYOUT_IOAPIC_PINS,
               "every virtio line is routed by the MP table");
_Static_assert(LAYOUT_VIRTIO_MMIO_BASE >= LAYOUT_MMIO_GAP_START &&
                   LAYOUT_VIRTIO_MMIO_BASE + LAYOUT_VIRTIO_SLOTS * LAYOUT_VIRTIO_MMIO_STRIDE <=
                       LAYOUT_IOAPIC_BASE,
               "virtio windows sit in the MMIO gap, below the IOAPIC");

/* The announcements of slots [0, n), space-separated. */
static int announcements(char *ann, size_t cap, unsigned n)
{
    size_t len = 0;
    if (n > LAYOUT_VIRTIO_SLOTS)
        return -E2BIG;
    ann[0] = 0;
    for (unsigned i = 0; i < n; i++) {
        int w = snprintf(ann + len, cap - len, "%svirtio_mmio.device=%u@%#" PRIx64 ":%u",
                         i ? " " : "", VIRTIO_MMIO_WINDOW, slot_base(i), slot_irq(i));
        if (w < 0 || (size_t)w >= cap - len)
            return -E2BIG;
        len += (size_t)w;
    }
    return 0;
}

/* line with the announcements of slots [0, n) put in (or, undo, taken
 * out of it). */
static int announced(char *out, size_t cap, const char *line, unsigned n, bool undo)
{
    char ann[64 * LAYOUT_VIRTIO_SLOTS];
    if (announcements(ann, sizeof(ann), n))
        return -E2BIG;
    if (n == 0) {
        int w = snprintf(out, cap, "%s", line);
        return w >= 0 && (size_t)w < cap ? 0 : -E2BIG;
    }
    /* Before a "--": what follows it is init's argv, not the kernel's. */
    return undo ? kcmdline_remove(out, cap, line, ann) : kcmdline_insert(out, cap, line, ann);
}

int vdevs_cmdline(char *out, size_t cap, const char *line, unsigned n)
{
    return announced(out, cap, line, n, false);
}

int vdevs_cmdline_undo(char *out, size_t cap, const char *full, unsigned n)
{
    return announced(out, cap, full, n, true);
}

static void vdev_interrupt(void *opaque)
{
    struct vdev *d = opaque;
    uint64_t one = 1;
    /* An eventfd counter cannot overflow from these; a failed write would
     * only lose an interrupt the guest can recover from by polling. */
    if (write(d->irq_fd, &one, sizeof(one)) < 0) {
    }
}

static void vdev_kick(void *opaque, unsigned q)
{
    struct vdev *d = opaque;
    uint64_t one = 1;
    if (q < VIRTIO_MMIO_MAX_QUEUES && d->notify_fd[q] >= 0 &&
        write(d->notify_fd[q], &one, sizeof(one)) < 0) {
    }
}

/* The bits of every InterruptACK value written since the last call.  An
 * ioeventfd is signalled during the guest's write, before the vCPU runs
 * on, so whoever holds the transport lock sees every acknowledgement the
 * guest made before it. */
static uint32_t vdev_acked(void *opaque)
{
    struct vdev *d = opaque;
    uint32_t bits = 0;
    uint64_t count;
    for (unsigned i = 0; i < VDEV_ACK_VALUES; i++)
        if (d->ack_fd[i] >= 0 && read(d->ack_fd[i], &count, sizeof(count)) == sizeof(count))
            bits |= i + 1;
    return bits;
}

static const struct virtio_host_ops vdev_host_ops = {
    .interrupt = vdev_interrupt,
    .kick = vdev_kick,
    .acked = vdev_acked,
};

static int vfail(char *err, size_t errlen, const struct vdev *d, const char *what)
{
    int e = errno;
    snprintf(err, errlen, "%s: %s: %s", d->name, what, strerror(e));
    return -e;
}

int vdevs_register(struct vdevs *vs, struct bus *bus, const struct gmem *mem,
                   const struct virtio_device_ops *ops, void *dev, char *err, size_t errlen)
{
    if (vs->n >= LAYOUT_VIRTIO_SLOTS || ops->num_queues > VIRTIO_MMIO_MAX_QUEUES) {
        snprintf(err, errlen, "too many virtio devices (at most %d)", LAYOUT_VIRTIO_SLOTS);
        return -ENOSPC;
    }
    struct vdev *d = &vs->devs[vs->n];
    memset(d, 0, sizeof(*d));
    d->slot = vs->n;
    d->irq_fd = -1;
    for (unsigned q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
        d->notify_fd[q] = -1;
    for (unsigned i = 0; i < VDEV_ACK_VALUES; i++)
        d->ack_fd[i] = -1;
    snprintf(d->name, sizeof(d->name), "%s@%u", ops->name, d->slot);
    vs->n++; /* from here vdevs_destroy cleans it up */
    virtio_mmio_init(&d->transport, ops, dev, &vdev_host_ops, d, mem);
    int e = bus_register(bus, BUS_MMIO, slot_base(d->slot), VIRTIO_MMIO_WINDOW, d->name,
                         virtio_mmio_io, &d->transport);
    if (e) {
        errno = -e;
        return vfail(err, errlen, d, "registering its MMIO window");
    }
    return 0;
}

/* A new eventfd in *fd that KVM signals, instead of exiting, on a 4-byte
 * guest write of `value` to `addr`; any other value or width still exits
 * to virtio_mmio_io, which copes.  0, or -1 with errno set. */
static int ioeventfd_at(struct vm *vm, int *fd, uint64_t addr, uint64_t value)
{
    *fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct kvm_ioeventfd io = {
        .datamatch = value, .addr = addr, .len = 4, .fd = *fd,
        .flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
    };
    return *fd < 0 || ioctl(vm->fd, KVM_IOEVENTFD, &io) < 0 ? -1 : 0;
}

/* One slot's irqfd, one ioeventfd per queue (QueueNotify = its index) and
 * one per InterruptACK value: the guest's interrupt handler reads
 * InterruptStatus and writes it back to InterruptACK, and the write then
 * costs no exit (the read still does: KVM cannot answer it). */
static int vdev_wire(struct vdev *d, struct vm *vm, char *err, size_t errlen)
{
    uint64_t base = slot_base(d->slot);
    d->vm = vm;
    d->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct kvm_irqfd irqfd = {.fd = (uint32_t)d->irq_fd, .gsi = slot_irq(d->slot)};
    if (d->irq_fd < 0 || ioctl(vm->fd, KVM_IRQFD, &irqfd) < 0)
        return vfail(err, errlen, d, "KVM_IRQFD");
    for (unsigned q = 0; q < d->transport.ops->num_queues; q++) {
        if (ioeventfd_at(vm, &d->notify_fd[q], base + VIRTIO_MMIO_QUEUE_NOTIFY, q))
            return vfail(err, errlen, d, "KVM_IOEVENTFD");
        d->refs[q] = (struct vdev_queue_ref){d, q};
    }
    for (unsigned i = 0; i < VDEV_ACK_VALUES; i++)
        if (ioeventfd_at(vm, &d->ack_fd[i], base + VIRTIO_MMIO_INTERRUPT_ACK, i + 1))
            return vfail(err, errlen, d, "KVM_IOEVENTFD");
    return 0;
}

int vdevs_wire(struct vdevs *vs, struct vm *vm, char *err, size_t errlen)
{
    for (unsigned i = 0; i < vs->n; i++) {
        int e = vdev_wire(&vs->devs[i], vm, err, errlen);
        if (e)
            return e;
    }
    return 0;
}

void vdev_on_notify(void *opaque, int fd, uint32_t events)
{
    struct vdev_queue_ref *ref = opaque;
    uint64_t count;
    (void)fd;
    (void)events;
    if (read(ref->dev->notify_fd[ref->queue], &count, sizeof(count)) < 0)
        return; /* spurious wakeup */
    virtio_mmio_process(&ref->dev->transport, ref->queue);
}

int vdevs_attach(struct vdevs *vs, struct evloop *loop)
{
    for (unsigned i = 0; i < vs->n; i++) {
        struct vdev *d = &vs->devs[i];
        for (unsigned q = 0; q < d->transport.ops->num_queues; q++) {
            int e = evloop_add(loop, d->notify_fd[q], EPOLLIN, vdev_on_notify, &d->refs[q]);
            if (e)
                return e;
        }
    }
    return 0;
}

void vdevs_destroy(struct vdevs *vs)
{
    for (unsigned i = 0; i < vs->n; i++) {
        struct vdev *d = &vs->devs[i];
        if (d->irq_fd >= 0)
            close(d->irq_fd);
        for (unsigned q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
            if (d->notify_fd[q] >= 0)
                close(d->notify_fd[q]);
        for (unsigned i = 0; i < VDEV_ACK_VALUES; i++)
            if (d->ack_fd[i] >= 0)
                close(d->ack_fd[i]);
    }
    vs->n = 0;
}

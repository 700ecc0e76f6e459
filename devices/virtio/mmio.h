/* The virtio-mmio transport, version 2 (virtio 1.2 §4.2): the register
 * window a device presents to the guest, feature negotiation, the device
 * status state machine, queue setup and interrupts.  It knows nothing of
 * what a device does; devices plug in through virtio_device_ops.
 *
 * Threads: registers are accessed from vCPU threads, queues are processed
 * on the event loop; both hold `lock`. */
#ifndef AIRLOCK_DEVICES_VIRTIO_MMIO_H
#define AIRLOCK_DEVICES_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/queue.h"
#include "devices/virtio/virtio.h"
#include "vmm/memory/gmem.h"

#define VIRTIO_MMIO_MAX_QUEUES 4
#define VIRTIO_MMIO_WINDOW     0x200 /* registers + config space */
#define VIRTIO_MMIO_CONFIG     0x100 /* config space offset */
#define VIRTIO_MMIO_QUEUE_NOTIFY 0x050
#define VIRTIO_MMIO_INTERRUPT_ACK 0x064
#define VIRTIO_MMIO_MAGIC      0x74726976 /* "virt" */
#define VIRTIO_MMIO_VENDOR     0x4b4c5241 /* "ARLK" */

struct virtio_mmio;

/* What a device tells the transport. */
struct virtio_device_ops {
    const char *name;
    uint32_t device_id;
    unsigned num_queues;
    uint16_t queue_max;
    /* Device-specific feature bits offered (VERSION_1 is added by the
     * transport; EVENT_IDX and INDIRECT_DESC must not be set). */
    uint64_t (*features)(void *dev);
    /* Config space access, offset from the start of config space. */
    void (*config_read)(void *dev, uint64_t off, uint8_t *data, unsigned len);
    /* The driver made buffers available on queue q (event-loop thread,
     * transport lock held). */
    void (*queue_notify)(void *dev, struct virtio_mmio *t, unsigned q);
    /* The driver reset the device. */
    void (*reset)(void *dev);
};

/* What the monitor provides the transport. */
struct virtio_host_ops {
    /* Raise the device's interrupt line (irqfd in the monitor). */
    void (*interrupt)(void *opaque);
    /* The guest wrote QueueNotify through an MMIO exit: hand queue q to the
     * event loop (the monitor writes that queue's eventfd). */
    void (*kick)(void *opaque, unsigned q);
    /* Optional: the InterruptStatus bits the guest acknowledged without an
     * exit since the last call (the monitor's ioeventfds on InterruptACK).
     * The transport applies them, lock held, before it answers a read of
     * InterruptStatus or sets a bit in it, so an acknowledgement is never
     * applied after an interrupt raised later than it. */
    uint32_t (*acked)(void *opaque);
};

struct virtio_mmio {
    pthread_mutex_t lock;
    const struct virtio_device_ops *ops;
    void *dev;
    const struct virtio_host_ops *host;
    void *host_opaque;
    const struct gmem *mem;
    unsigned num_queues; /* ops->num_queues, at most VIRTIO_MMIO_MAX_QUEUES */
    uint32_t status;
    uint32_t device_features_sel, driver_features_sel;
    uint64_t driver_features;
    uint32_t queue_sel;
    uint32_t interrupt_status;
    uint32_t config_generation;
    struct virtq queues[VIRTIO_MMIO_MAX_QUEUES];
};

void virtio_mmio_init(struct virtio_mmio *t, const struct virtio_device_ops *ops, void *dev,
                      const struct virtio_host_ops *host, void *host_opaque,
                      const struct gmem *mem);

/* Bus handler for the device's window. */
void virtio_mmio_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write);

/* Event loop: queue q was notified.  Takes the lock and calls the device. */
void virtio_mmio_process(struct virtio_mmio *t, unsigned q);

/* Device, from queue_notify (lock held): tell the driver about used
 * buffers on queue q, if it wants to hear. */
void virtio_mmio_used(struct virtio_mmio *t, unsigned q);

/* Device or transport, lock held: the driver broke the rules; set
 * DEVICE_NEEDS_RESET and raise a config interrupt (§2.1.2). */
void virtio_mmio_needs_reset(struct virtio_mmio *t);

/* Device, lock held: its config space changed (virtio-blk's capacity when
 * a spare slot is filled or emptied).  Bumps ConfigGeneration and raises
 * the configuration-change interrupt (InterruptStatus bit 1) once the
 * driver has started the device. */
void virtio_mmio_config_changed(struct virtio_mmio *t);

/* Would FEATURES_OK stick with these driver features: VERSION_1 and only
 * bits we offer (also the check a snapshot's features must pass). */
bool virtio_mmio_features_acceptable(const struct virtio_mmio *t, uint64_t f);

/* The features both sides agreed on (valid after FEATURES_OK). */
static inline bool virtio_mmio_has(const struct virtio_mmio *t, unsigned bit)
{
    return (t->driver_features >> bit) & 1;
}

#endif

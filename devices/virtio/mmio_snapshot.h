/* A virtio-mmio transport's state in and out of a snapshot.  Loading treats
 * the saved state like a driver's register writes: the status must be one
 * a driver can reach, features ones we offer, every ready queue must pass
 * the same checks QueueReady does (virtq_validate), and ring indexes must
 * be consistent; anything else is an error, never a half-loaded device. */
#ifndef AIRLOCK_DEVICES_VIRTIO_MMIO_SNAPSHOT_H
#define AIRLOCK_DEVICES_VIRTIO_MMIO_SNAPSHOT_H

#include <stddef.h>

#include "devices/virtio/mmio.h"

#define SNAP_MAX_QUEUES VIRTIO_MMIO_MAX_QUEUES

struct snap_queue {
    uint16_t size;                 /* QueueNum the driver chose */
    uint8_t ready;                 /* 0 or 1 */
    uint64_t desc_gpa, avail_gpa, used_gpa;
    uint16_t last_avail, used_idx, signalled_used;
};

/* One virtio-mmio transport (its registers as the driver left them). */
struct snap_virtio {
    uint32_t device_id;            /* 2 blk, 19 vsock */
    uint32_t status;
    uint32_t device_features_sel, driver_features_sel, queue_sel;
    uint32_t interrupt_status, config_generation;
    uint64_t driver_features;
    uint32_t nqueues;              /* <= SNAP_MAX_QUEUES */
    struct snap_queue queues[SNAP_MAX_QUEUES];
};

/* The caller holds t->lock (a snapshot holds every transport's lock while
 * it saves guest RAM, so no device writes into it meanwhile). */
void virtio_mmio_save(struct virtio_mmio *t, struct snap_virtio *st);

/* Into a transport that was just initialised (virtio_mmio_init) for the
 * same device.  -EINVAL with err naming the field. */
int virtio_mmio_load(struct virtio_mmio *t, const struct snap_virtio *st, char *err,
                     size_t errlen);

#endif

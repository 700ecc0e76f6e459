#include "devices/virtio/mmio_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_ACK  VIRTIO_STATUS_ACKNOWLEDGE
#define S_DRV  VIRTIO_STATUS_DRIVER
#define S_FEAT VIRTIO_STATUS_FEATURES_OK
#define S_OK   VIRTIO_STATUS_DRIVER_OK

void virtio_mmio_save(struct virtio_mmio *t, struct snap_virtio *st)
{
    memset(st, 0, sizeof(*st));
    st->device_id = t->ops->device_id;
    st->status = t->status;
    st->device_features_sel = t->device_features_sel;
    st->driver_features_sel = t->driver_features_sel;
    st->queue_sel = t->queue_sel;
    st->interrupt_status = t->interrupt_status;
    st->config_generation = t->config_generation;
    st->driver_features = t->driver_features;
    st->nqueues = t->num_queues;
    for (unsigned i = 0; i < t->num_queues && i < SNAP_MAX_QUEUES; i++) {
        const struct virtq *q = &t->queues[i];
        st->queues[i] = (struct snap_queue){
            .size = q->size, .ready = q->ready, .desc_gpa = q->desc_gpa,
            .avail_gpa = q->avail_gpa, .used_gpa = q->used_gpa, .last_avail = q->last_avail,
            .used_idx = q->used_idx, .signalled_used = q->signalled_used,
        };
    }
}

/* The statuses a driver can leave a device in (§3.1.1), with FAILED and
 * DEVICE_NEEDS_RESET allowed on top of any. */
static bool status_reachable(uint32_t s)
{
    static const uint32_t steps[] = {0, S_ACK, S_ACK | S_DRV, S_ACK | S_DRV | S_FEAT,
                                     S_ACK | S_DRV | S_FEAT | S_OK};
    s &= ~(VIRTIO_STATUS_FAILED | VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (s == steps[i])
            return true;
    return false;
}

static int bad(char *err, size_t errlen, const char *what, unsigned long long v)
{
    snprintf(err, errlen, "virtio device state: %s (%#llx)", what, v);
    return -EINVAL;
}

static int load_queue(struct virtio_mmio *t, unsigned i, const struct snap_queue *s, char *err,
                      size_t errlen)
{
    struct virtq *q = &t->queues[i];
    if (s->ready > 1)
        return bad(err, errlen, "queue ready is not 0 or 1", s->ready);
    if (!s->ready)
        return 0; /* the driver sets it up again if it wants it */
    if (!(t->status & S_FEAT))
        return bad(err, errlen, "a queue is ready before FEATURES_OK", t->status);
    q->size = s->size;
    q->desc_gpa = s->desc_gpa;
    q->avail_gpa = s->avail_gpa;
    q->used_gpa = s->used_gpa;
    if (virtq_validate(q, t->mem))
        return bad(err, errlen, "a ready queue's size or rings fail the QueueReady checks",
                   s->size);
    /* Our devices complete every chain before the next and in order, and
     * only the vsock rx queue holds one popped chain between packets: the
     * chains in flight are exactly those from used_idx on.  Taking
     * last_avail back to used_idx lets the restored device pop them
     * again instead of losing them. */
    if ((uint16_t)(s->last_avail - s->used_idx) > s->size)
        return bad(err, errlen, "more chains in flight than the queue holds",
                   (uint16_t)(s->last_avail - s->used_idx));
    q->last_avail = s->used_idx;
    q->used_idx = s->used_idx;
    q->signalled_used = s->signalled_used;
    q->ready = true;
    return 0;
}

int virtio_mmio_load(struct virtio_mmio *t, const struct snap_virtio *st, char *err,
                     size_t errlen)
{
    int e = 0;
    pthread_mutex_lock(&t->lock);
    if (st->device_id != t->ops->device_id)
        e = bad(err, errlen, "device id differs from this slot's device", st->device_id);
    else if (st->nqueues != t->num_queues)
        e = bad(err, errlen, "queue count differs from the device's", st->nqueues);
    else if (!status_reachable(st->status))
        e = bad(err, errlen, "status no driver can reach", st->status);
    else if ((st->status & S_FEAT) && !virtio_mmio_features_acceptable(t, st->driver_features))
        e = bad(err, errlen, "driver features the device does not offer", st->driver_features);
    else if (st->interrupt_status & ~(VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG))
        e = bad(err, errlen, "interrupt status bits that do not exist", st->interrupt_status);
    if (!e) {
        t->status = st->status;
        t->driver_features = st->driver_features;
        t->device_features_sel = st->device_features_sel;
        t->driver_features_sel = st->driver_features_sel;
        t->queue_sel = st->queue_sel;
        t->interrupt_status = st->interrupt_status;
        t->config_generation = st->config_generation;
        for (unsigned i = 0; i < t->num_queues && !e; i++)
            e = load_queue(t, i, &st->queues[i], err, errlen);
    }
    pthread_mutex_unlock(&t->lock);
    return e;
}

#include "devices/virtio/mmio.h"

#include <string.h>

/* Register offsets (§4.2.2). */
enum {
    REG_MAGIC = 0x000, REG_VERSION = 0x004, REG_DEVICE_ID = 0x008, REG_VENDOR_ID = 0x00c,
    REG_DEVICE_FEATURES = 0x010, REG_DEVICE_FEATURES_SEL = 0x014,
    REG_DRIVER_FEATURES = 0x020, REG_DRIVER_FEATURES_SEL = 0x024,
    REG_QUEUE_SEL = 0x030, REG_QUEUE_NUM_MAX = 0x034, REG_QUEUE_NUM = 0x038,
    REG_QUEUE_READY = 0x044, REG_QUEUE_NOTIFY = VIRTIO_MMIO_QUEUE_NOTIFY,
    REG_INTERRUPT_STATUS = 0x060, REG_INTERRUPT_ACK = VIRTIO_MMIO_INTERRUPT_ACK, REG_STATUS = 0x070,
    REG_QUEUE_DESC_LOW = 0x080, REG_QUEUE_DESC_HIGH = 0x084,
    REG_QUEUE_DRIVER_LOW = 0x090, REG_QUEUE_DRIVER_HIGH = 0x094,
    REG_QUEUE_DEVICE_LOW = 0x0a0, REG_QUEUE_DEVICE_HIGH = 0x0a4,
    REG_SHM_LEN_LOW = 0x0b0, REG_SHM_BASE_HIGH = 0x0bc,
    REG_CONFIG_GENERATION = 0x0fc,
};

#define S_ACK   VIRTIO_STATUS_ACKNOWLEDGE
#define S_DRV   VIRTIO_STATUS_DRIVER
#define S_FEAT  VIRTIO_STATUS_FEATURES_OK
#define S_OK    VIRTIO_STATUS_DRIVER_OK

/* §3.1.1: the only forward steps a driver may take.  Writing 0 (reset) and
 * adding FAILED are always allowed; anything else is ignored. */
static const struct {
    uint32_t from, to;
} status_transitions[] = {
    {0, S_ACK},
    {S_ACK, S_ACK | S_DRV},
    {S_ACK | S_DRV, S_ACK | S_DRV | S_FEAT},
    {S_ACK | S_DRV | S_FEAT, S_ACK | S_DRV | S_FEAT | S_OK},
};

/* Features never offered: indirect descriptors (one less parser) and
 * EVENT_IDX (not shown to pay yet). */
#define FEATURES_NEVER (VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX))

void virtio_mmio_init(struct virtio_mmio *t, const struct virtio_device_ops *ops, void *dev,
                      const struct virtio_host_ops *host, void *host_opaque,
                      const struct gmem *mem)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->ops = ops;
    t->dev = dev;
    t->host = host;
    t->host_opaque = host_opaque;
    t->mem = mem;
    /* Bounds come from our arrays, not from what a device table claims. */
    t->num_queues = ops->num_queues < VIRTIO_MMIO_MAX_QUEUES ? ops->num_queues
                                                             : VIRTIO_MMIO_MAX_QUEUES;
    uint16_t max = ops->queue_max < VIRTQ_MAX_SIZE ? ops->queue_max : VIRTQ_MAX_SIZE;
    for (unsigned i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
        t->queues[i].max_size = i < t->num_queues ? max : 0;
}

static uint64_t offered_features(const struct virtio_mmio *t)
{
    return (t->ops->features(t->dev) | VIRTIO_BIT(VIRTIO_F_VERSION_1)) & ~FEATURES_NEVER;
}

/* The selected queue, or NULL when queue_sel is out of range. */
static struct virtq *selected_queue(struct virtio_mmio *t)
{
    return t->queue_sel < t->num_queues ? &t->queues[t->queue_sel] : NULL;
}

/* Queue registers may change only between FEATURES_OK and the queue being
 * enabled (§4.2.3.2), never after the device needs a reset. */
static struct virtq *configurable_queue(struct virtio_mmio *t)
{
    struct virtq *q = selected_queue(t);
    if (!q || q->ready || !(t->status & S_FEAT) || (t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET))
        return NULL;
    return q;
}

/* Acknowledgements that reached the monitor without an exit (host->acked). */
static void take_acks(struct virtio_mmio *t)
{
    if (t->host->acked)
        t->interrupt_status &= ~t->host->acked(t->host_opaque);
}

static void transport_reset(struct virtio_mmio *t)
{
    take_acks(t); /* one written before the reset must not clear a later bit */
    t->status = 0;
    t->device_features_sel = t->driver_features_sel = 0;
    t->driver_features = 0;
    t->queue_sel = 0;
    t->interrupt_status = 0;
    for (unsigned i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
        virtq_reset(&t->queues[i]);
    if (t->ops->reset)
        t->ops->reset(t->dev);
}

/* InterruptStatus bit 1 and the line (§4.2.2: "configuration change"). */
static void raise_config(struct virtio_mmio *t)
{
    take_acks(t);
    t->interrupt_status |= VIRTIO_MMIO_INT_CONFIG;
    t->host->interrupt(t->host_opaque);
}

void virtio_mmio_needs_reset(struct virtio_mmio *t)
{
    if (t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET)
        return;
    t->status |= VIRTIO_STATUS_DEVICE_NEEDS_RESET;
    raise_config(t);
}

void virtio_mmio_config_changed(struct virtio_mmio *t)
{
    /* §2.5.1: a driver reading a multi-field value sees the generation
     * move and reads again, so it never mixes the old and new capacity. */
    t->config_generation++;
    /* A device the driver has not started (status 0, or after a reset)
     * has no handler for the line yet: the driver reads the new config
     * when it starts.  One that needs a reset has had its interrupt. */
    if (t->status == 0 || (t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET))
        return;
    raise_config(t);
}

bool virtio_mmio_features_acceptable(const struct virtio_mmio *t, uint64_t f)
{
    return (f & VIRTIO_BIT(VIRTIO_F_VERSION_1)) && !(f & ~offered_features(t));
}

static void write_status(struct virtio_mmio *t, uint32_t v)
{
    if (v == 0) {
        transport_reset(t);
        return;
    }
    if (t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET) {
        if (v & VIRTIO_STATUS_FAILED)
            t->status |= VIRTIO_STATUS_FAILED;
        return; /* only a reset gets the device going again */
    }
    if (v == (t->status | VIRTIO_STATUS_FAILED)) {
        t->status = v;
        return;
    }
    for (size_t i = 0; i < sizeof(status_transitions) / sizeof(status_transitions[0]); i++) {
        if (status_transitions[i].from != t->status || status_transitions[i].to != v)
            continue;
        /* FEATURES_OK sticks only for features we offered, VERSION_1
         * included (§2.2.2: the driver re-reads the status to learn). */
        if ((v & S_FEAT) && !(t->status & S_FEAT) &&
            !virtio_mmio_features_acceptable(t, t->driver_features))
            return;
        t->status = v;
        return;
    }
}

static uint32_t read_reg(struct virtio_mmio *t, uint64_t off)
{
    struct virtq *q = selected_queue(t);
    switch (off) {
    case REG_MAGIC: return VIRTIO_MMIO_MAGIC;
    case REG_VERSION: return 2;
    case REG_DEVICE_ID: return t->ops->device_id;
    case REG_VENDOR_ID: return VIRTIO_MMIO_VENDOR;
    case REG_DEVICE_FEATURES:
        if (t->device_features_sel > 1)
            return 0;
        return (uint32_t)(offered_features(t) >> (32 * t->device_features_sel));
    case REG_QUEUE_NUM_MAX: return q ? q->max_size : 0;
    case REG_QUEUE_READY: return q ? q->ready : 0;
    case REG_INTERRUPT_STATUS: take_acks(t); return t->interrupt_status;
    case REG_STATUS: return t->status;
    case REG_CONFIG_GENERATION: return t->config_generation;
    default:
        /* No shared memory regions: their length reads as all-ones. */
        if (off >= REG_SHM_LEN_LOW && off <= REG_SHM_BASE_HIGH)
            return 0xffffffff;
        return 0;
    }
}

/* Sets the low or high half of a 64-bit queue address. */
static void set_half(uint64_t *addr, bool high, uint32_t v)
{
    if (high)
        *addr = (*addr & 0xffffffffULL) | ((uint64_t)v << 32);
    else
        *addr = (*addr & ~0xffffffffULL) | v;
}

static void write_queue_ready(struct virtio_mmio *t, uint32_t v)
{
    struct virtq *q = selected_queue(t);
    if (!q || !(t->status & S_FEAT) || (t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET))
        return; /* e.g. QUEUE_READY before FEATURES_OK: ignored */
    if (v == 0) {
        q->ready = false;
        return;
    }
    if (q->ready)
        return;
    if (virtq_validate(q, t->mem)) {
        virtio_mmio_needs_reset(t);
        return;
    }
    q->ready = true;
}

static void write_reg(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
    struct virtq *q;
    switch (off) {
    case REG_DEVICE_FEATURES_SEL: t->device_features_sel = v; break;
    case REG_DRIVER_FEATURES_SEL: t->driver_features_sel = v; break;
    case REG_DRIVER_FEATURES:
        /* Only while negotiating (§3.1.1 step 5), in the two defined halves. */
        if (t->status == (S_ACK | S_DRV) && t->driver_features_sel <= 1)
            set_half(&t->driver_features, t->driver_features_sel == 1, v);
        break;
    case REG_QUEUE_SEL: t->queue_sel = v; break;
    case REG_QUEUE_NUM:
        if ((q = configurable_queue(t)))
            q->size = v <= 0xffff ? (uint16_t)v : 0; /* 0 fails validation */
        break;
    case REG_QUEUE_READY: write_queue_ready(t, v); break;
    case REG_QUEUE_NOTIFY:
        if (v < t->num_queues && t->host->kick)
            t->host->kick(t->host_opaque, v);
        break;
    case REG_INTERRUPT_ACK: t->interrupt_status &= ~v; break;
    case REG_STATUS: write_status(t, v); break;
    case REG_QUEUE_DESC_LOW: case REG_QUEUE_DESC_HIGH:
        if ((q = configurable_queue(t)))
            set_half(&q->desc_gpa, off == REG_QUEUE_DESC_HIGH, v);
        break;
    case REG_QUEUE_DRIVER_LOW: case REG_QUEUE_DRIVER_HIGH:
        if ((q = configurable_queue(t)))
            set_half(&q->avail_gpa, off == REG_QUEUE_DRIVER_HIGH, v);
        break;
    case REG_QUEUE_DEVICE_LOW: case REG_QUEUE_DEVICE_HIGH:
        if ((q = configurable_queue(t)))
            set_half(&q->used_gpa, off == REG_QUEUE_DEVICE_HIGH, v);
        break;
    default: break; /* read-only or unknown: ignored */
    }
}

void virtio_mmio_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    struct virtio_mmio *t = opaque;
    pthread_mutex_lock(&t->lock);
    if (offset >= VIRTIO_MMIO_CONFIG) {
        /* Config space: any width (§4.2.2.2); it is read-only for our
         * devices, so writes are dropped. */
        if (!is_write) {
            memset(data, 0, len);
            t->ops->config_read(t->dev, offset - VIRTIO_MMIO_CONFIG, data, len);
        }
    } else if (len != 4 || (offset & 3)) {
        /* Registers are 32-bit and aligned (§4.2.2.2); others are ignored. */
        if (!is_write)
            memset(data, 0, len);
    } else if (is_write) {
        uint32_t v;
        memcpy(&v, data, 4);
        write_reg(t, offset, v);
    } else {
        uint32_t v = read_reg(t, offset);
        memcpy(data, &v, 4);
    }
    pthread_mutex_unlock(&t->lock);
}

void virtio_mmio_process(struct virtio_mmio *t, unsigned q)
{
    pthread_mutex_lock(&t->lock);
    if (q < t->num_queues && (t->status & S_OK) &&
        !(t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET) && t->queues[q].ready) {
        t->ops->queue_notify(t->dev, t, q);
        if (t->queues[q].broken)
            virtio_mmio_needs_reset(t);
    }
    pthread_mutex_unlock(&t->lock);
}

void virtio_mmio_used(struct virtio_mmio *t, unsigned q)
{
    if (q >= t->num_queues || !virtq_should_notify(&t->queues[q], t->mem))
        return;
    take_acks(t);
    t->interrupt_status |= VIRTIO_MMIO_INT_VRING;
    t->host->interrupt(t->host_opaque);
}

/* libFuzzer target: a hostile guest driving the virtio-mmio transport and
 * the split virtqueue.  The input is a sequence of operations: register
 * reads and writes at any offset and width, raw writes into a small fake
 * guest RAM that holds the rings, structured writes of descriptors and
 * available-ring entries (so the fuzzer reaches the queue code without
 * guessing addresses), and queue processing.  The dummy device pops every
 * chain, copies its data in and out and returns it.  Invariants that must
 * hold whatever the guest does are checked after every step; a breach
 * calls abort().
 *
 * Guest RAM: [0, 64 KiB) and, after a hole, [0x11000, 0x12000), so chains
 * that straddle the end of a region or span the hole are reachable. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/mmio.h"
#include "devices/virtio/queue.h"
#include "vmm/memory/gmem.h"

#define RAM0      0x10000u
#define RAM1_GPA  0x11000u
#define RAM1      0x1000u
#define NQUEUES   2
#define QMAX      256
#define DUMMY_FEATURES (VIRTIO_BIT(0) | VIRTIO_BIT(3) | VIRTIO_BIT(33) | \
                        VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
#define STATUS_KNOWN (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |            \
                      VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK |         \
                      VIRTIO_STATUS_DEVICE_NEEDS_RESET | VIRTIO_STATUS_FAILED)

#define CHECK(cond)        \
    do {                   \
        if (!(cond))       \
            abort();       \
    } while (0)

static const uint8_t dummy_config[12] = "airlock-fuzz";

struct dummy {
    bool in_notify;
    unsigned notifies;
    struct virtq_chain *chain, *ref; /* own allocations: ASan guards their ends */
    uint8_t buf[4096];
};

static struct gmem mem;
static unsigned interrupts;

static uint64_t d_features(void *dev)
{
    (void)dev;
    return DUMMY_FEATURES;
}

static void d_config_read(void *dev, uint64_t off, uint8_t *data, unsigned len)
{
    (void)dev;
    CHECK(len >= 1 && len <= 8);
    for (unsigned i = 0; i < len; i++)
        if (off < sizeof(dummy_config) && i < sizeof(dummy_config) - off)
            data[i] = dummy_config[off + i];
}

/* Everything a popped chain promises the device (queue.h). */
static void check_chain(const struct virtq *q, const struct virtq_chain *c)
{
    CHECK(c->head < q->size);
    CHECK(c->nbufs >= 1 && c->nbufs <= q->size && c->nbufs <= VIRTQ_MAX_SIZE);
    CHECK(c->nreadable <= c->nbufs);
    uint64_t rd = 0, wr = 0;
    for (unsigned i = 0; i < c->nbufs; i++) {
        const struct virtq_buf *b = &c->bufs[i];
        CHECK(b->writable == (i >= c->nreadable)); /* readable first */
        CHECK(gmem_ptr(&mem, b->gpa, b->len) != NULL);
        if (b->writable)
            wr += b->len;
        else
            rd += b->len;
    }
    CHECK(rd == c->readable_len && wr == c->writable_len);
}

/* A second, independent reading of §2.7 to diff virtq_pop against: a
 * chain may not revisit a descriptor (instead of a hop count), and every
 * guest field is fetched through gmem_read.  Same contract as virtq_pop. */
static int ref_pop(const struct virtq *q, struct virtq_chain *c)
{
    if (q->broken)
        return -EINVAL;
    if (!q->ready)
        return 0;
    uint16_t idx, head;
    if (gmem_read(&mem, &idx, q->avail_gpa + 2, 2))
        return -EINVAL;
    uint16_t pending = (uint16_t)(idx - q->last_avail);
    if (pending == 0)
        return 0;
    if (pending > q->size ||
        gmem_read(&mem, &head, q->avail_gpa + 4 + 2ULL * (q->last_avail & (q->size - 1)), 2) ||
        head >= q->size)
        return -EINVAL;
    static bool seen[65536];
    memset(seen, 0, q->size);
    memset(c, 0, offsetof(struct virtq_chain, bufs));
    c->head = head;
    for (uint16_t i = head;;) {
        struct virtq_desc d;
        if (seen[i] || gmem_read(&mem, &d, q->desc_gpa + 16ULL * i, sizeof(d)))
            return -EINVAL;
        seen[i] = true;
        bool w = d.flags & VIRTQ_DESC_F_WRITE;
        if ((d.flags & VIRTQ_DESC_F_INDIRECT) || !gmem_ptr(&mem, d.addr, d.len) ||
            (!w && c->nreadable != c->nbufs))
            return -EINVAL;
        CHECK(c->nbufs < VIRTQ_MAX_SIZE);
        c->bufs[c->nbufs++] = (struct virtq_buf){d.addr, d.len, w};
        if (w) {
            c->writable_len += d.len;
        } else {
            c->nreadable++;
            c->readable_len += d.len;
        }
        if (!(d.flags & VIRTQ_DESC_F_NEXT))
            return 1;
        if (d.next >= q->size)
            return -EINVAL;
        i = d.next;
    }
}

/* virtq_pop, checked against ref_pop on the same guest memory. */
static int pop_checked(struct dummy *d, struct virtq *q)
{
    struct virtq before = *q;
    int want = ref_pop(&before, d->ref);
    int rc = virtq_pop(q, &mem, d->chain);
    CHECK(rc == want);
    if (rc == 1) {
        CHECK(q->last_avail == (uint16_t)(before.last_avail + 1));
        const struct virtq_chain *a = d->chain, *b = d->ref;
        CHECK(a->head == b->head && a->nbufs == b->nbufs && a->nreadable == b->nreadable);
        CHECK(a->readable_len == b->readable_len && a->writable_len == b->writable_len);
        for (unsigned i = 0; i < a->nbufs; i++)
            CHECK(a->bufs[i].gpa == b->bufs[i].gpa && a->bufs[i].len == b->bufs[i].len &&
                  a->bufs[i].writable == b->bufs[i].writable);
    } else {
        CHECK(q->last_avail == before.last_avail); /* nothing consumed */
        CHECK(q->broken == (rc == -EINVAL));
    }
    return rc;
}

/* Reads the head and tail of the readable bytes, writes the head and tail
 * of the writable ones; returns what it wrote.  Out-of-range copies must
 * fail and copy nothing. */
static uint32_t use_chain(struct dummy *d, const struct virtq_chain *c)
{
    uint64_t n = c->readable_len < sizeof(d->buf) ? c->readable_len : sizeof(d->buf);
    CHECK(virtq_chain_read(&mem, c, 0, d->buf, n) == 0);
    CHECK(virtq_chain_read(&mem, c, c->readable_len - n, d->buf, n) == 0);
    CHECK(virtq_chain_read(&mem, c, c->readable_len, d->buf, 1) == -EFAULT);
    CHECK(virtq_chain_read(&mem, c, 1, d->buf, c->readable_len) == -EFAULT ||
          c->readable_len == 0);

    uint64_t w = c->writable_len < sizeof(d->buf) ? c->writable_len : sizeof(d->buf);
    memset(d->buf, 0xd5, w);
    CHECK(virtq_chain_write(&mem, c, 0, d->buf, w) == 0);
    CHECK(virtq_chain_write(&mem, c, c->writable_len - w, d->buf, w) == 0);
    CHECK(virtq_chain_write(&mem, c, c->writable_len, d->buf, 1) == -EFAULT);
    CHECK(virtq_chain_write(&mem, c, UINT64_MAX, d->buf, 2) == -EFAULT);
    return (uint32_t)w;
}

static void d_queue_notify(void *dev, struct virtio_mmio *t, unsigned qi)
{
    struct dummy *d = dev;
    CHECK(qi < NQUEUES);
    CHECK(t->status & VIRTIO_STATUS_DRIVER_OK);
    CHECK(!(t->status & VIRTIO_STATUS_DEVICE_NEEDS_RESET));
    struct virtq *q = &t->queues[qi];
    CHECK(q->ready && !q->broken);
    CHECK(virtq_validate(q, &mem) == 0);
    d->in_notify = true;
    d->notifies++;
    uint16_t used_before = q->used_idx;
    unsigned pops = 0;
    int rc;
    while ((rc = pop_checked(d, q)) == 1) {
        pops++;
        /* Writable buffers may overlap the avail ring, so the guest's index
         * can move under the device; still, each pop advances last_avail,
         * so the loop ends. */
        CHECK(pops <= 65536);
        check_chain(q, d->chain);
        uint32_t w = use_chain(d, d->chain);
        CHECK(virtq_push(q, &mem, d->chain->head, w) == 0);
        /* The used index the guest sees is the device's. */
        uint16_t idx;
        CHECK(gmem_read(&mem, &idx, q->used_gpa + 2, 2) == 0);
        CHECK(idx == q->used_idx);
    }
    CHECK(rc == 0 || rc == -EINVAL);
    CHECK((rc == -EINVAL) == q->broken);
    CHECK((uint16_t)(q->used_idx - used_before) == pops);
    virtio_mmio_used(t, qi);
    d->in_notify = false;
}

static void d_reset(void *dev)
{
    (void)dev;
}

static const struct virtio_device_ops dummy_ops = {
    .name = "fuzz", .device_id = 42, .num_queues = NQUEUES, .queue_max = QMAX,
    .features = d_features, .config_read = d_config_read,
    .queue_notify = d_queue_notify, .reset = d_reset,
};

static void h_interrupt(void *o)
{
    (void)o;
    interrupts++;
}

static void h_kick(void *o, unsigned q)
{
    (void)o;
    CHECK(q < NQUEUES);
}

static const struct virtio_host_ops host_ops = {.interrupt = h_interrupt, .kick = h_kick};

/* ---- input ----------------------------------------------------------------- */

struct input {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct input *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)*in->p << (8 * i);
    return v;
}

static void reg_wr(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
    virtio_mmio_io(t, off, (uint8_t *)&v, 4, true);
}

static uint32_t reg_rd(struct virtio_mmio *t, uint64_t off)
{
    uint32_t v = 0;
    virtio_mmio_io(t, off, (uint8_t *)&v, 4, false);
    return v;
}

/* A driver's whole bring-up (§3.1.1) in one step, with the queue layout
 * from the input: rings at a 16-aligned base, size from the input. */
static void op_bring_up(struct virtio_mmio *t, struct input *in)
{
    uint64_t features = VIRTIO_BIT(VIRTIO_F_VERSION_1) | (take(in, 1) & 0x9);
    const uint32_t ack = VIRTIO_STATUS_ACKNOWLEDGE, drv = VIRTIO_STATUS_DRIVER;
    reg_wr(t, 0x070, 0);
    reg_wr(t, 0x070, ack);
    reg_wr(t, 0x070, ack | drv);
    reg_wr(t, 0x024, 0);
    reg_wr(t, 0x020, (uint32_t)features);
    reg_wr(t, 0x024, 1);
    reg_wr(t, 0x020, (uint32_t)(features >> 32));
    reg_wr(t, 0x070, ack | drv | VIRTIO_STATUS_FEATURES_OK);
    for (unsigned q = 0; q < NQUEUES; q++) {
        uint8_t shape = (uint8_t)take(in, 1);
        uint32_t size = 1u << (shape % 9);
        uint32_t base = (uint32_t)take(in, 2) & ~15u;
        /* Optionally a gap after the table, so "descriptor `size`" is
         * memory the fuzzer controls rather than the avail ring. */
        uint32_t avail = base + size * 16 + (shape & 0x80 ? 0x100 : 0);
        uint32_t used = (avail + 6 + size * 2 + 3) & ~3u;
        reg_wr(t, 0x030, q);
        reg_wr(t, 0x038, size);
        reg_wr(t, 0x080, base);
        reg_wr(t, 0x090, avail);
        reg_wr(t, 0x0a0, used);
        reg_wr(t, 0x044, 1);
    }
    reg_wr(t, 0x070, reg_rd(t, 0x070) | VIRTIO_STATUS_DRIVER_OK);
}

/* Writes a descriptor of queue q's table (as configured, valid or not). */
static void op_desc(struct virtio_mmio *t, struct input *in)
{
    const struct virtq *q = &t->queues[take(in, 1) % NQUEUES];
    uint16_t idx = (uint16_t)take(in, 1);
    uint8_t mode = (uint8_t)take(in, 1);
    struct virtq_desc d;
    d.addr = mode & 0x80 ? take(in, 8) : take(in, 2) + (mode & 0x40 ? RAM1_GPA - 0x800 : 0);
    d.len = mode & 0x20 ? (uint32_t)take(in, 4) : (uint32_t)take(in, 1);
    d.flags = mode & 7;
    d.next = (uint16_t)take(in, 1);
    (void)gmem_write(&mem, q->desc_gpa + (uint64_t)idx * 16, &d, sizeof(d));
}

/* Publishes a head on queue q's available ring, as a driver does. */
static void op_publish(struct virtio_mmio *t, struct input *in)
{
    const struct virtq *q = &t->queues[take(in, 1) % NQUEUES];
    uint16_t head = (uint16_t)take(in, 1), idx;
    if (!q->size || gmem_read(&mem, &idx, q->avail_gpa + 2, 2))
        return;
    (void)gmem_write(&mem, q->avail_gpa + 4 + (uint64_t)(idx % q->size) * 2, &head, 2);
    idx = (uint16_t)(idx + (take(in, 1) & 1 ? take(in, 2) : 1));
    (void)gmem_write(&mem, q->avail_gpa + 2, &idx, 2);
}

/* Links `count` consecutive descriptors of queue q's table with NEXT (the
 * last one's `next` and flags from the input), so long chains and loops of
 * up to a whole 256-entry table are one step away. */
static void op_chain_run(struct virtio_mmio *t, struct input *in)
{
    const struct virtq *q = &t->queues[take(in, 1) % NQUEUES];
    uint16_t start = (uint16_t)take(in, 1);
    unsigned count = 1 + (unsigned)take(in, 1);
    uint8_t mode = (uint8_t)take(in, 1);
    uint16_t last_next = (uint16_t)take(in, 2);
    uint16_t base = (uint16_t)take(in, 2);
    unsigned nread = mode & 0x80 ? count : (unsigned)take(in, 1);
    uint16_t tsize = q->size ? q->size : 1;
    for (unsigned k = 0; k < count; k++) {
        uint16_t i = (uint16_t)((start + k) % tsize);
        bool last = k + 1 == count;
        struct virtq_desc dsc = {
            .addr = base + 8ULL * k, .len = mode & 0x0f,
            .flags = (uint16_t)((k >= nread ? VIRTQ_DESC_F_WRITE : 0) |
                                (last ? (mode >> 4) & 7 : VIRTQ_DESC_F_NEXT)),
            .next = last ? last_next : (uint16_t)((i + 1) % tsize),
        };
        (void)gmem_write(&mem, q->desc_gpa + 16ULL * i, &dsc, sizeof(dsc));
    }
}

static void step(struct virtio_mmio *t, struct dummy *d, struct input *in)
{
    uint8_t op = (uint8_t)take(in, 1);
    switch (op % 10) {
    case 0: /* aligned 32-bit register write (the common case) */
        reg_wr(t, (take(in, 1) * 4) & 0x1ff, (uint32_t)take(in, 4));
        break;
    case 1: /* aligned 32-bit register read */
        (void)reg_rd(t, (take(in, 1) * 4) & 0x1ff);
        break;
    case 2: { /* any offset, any width 1..8, either direction */
        uint64_t off = take(in, 2) & 0x3ff;
        unsigned len = 1 + (op >> 4) % 8;
        uint8_t buf[16];
        memset(buf, 0xee, sizeof(buf));
        uint64_t v = take(in, 8);
        memcpy(buf, &v, 8);
        virtio_mmio_io(t, off, buf, len, op & 0x80);
        for (unsigned i = len; i < sizeof(buf); i++)
            CHECK(i < 8 ? buf[i] == ((uint8_t *)&v)[i] : buf[i] == 0xee);
        if (!(op & 0x80) && off < 0x100 && (len != 4 || (off & 3)))
            for (unsigned i = 0; i < len; i++)
                CHECK(buf[i] == 0); /* bad-shape register reads read 0 */
        break;
    }
    case 3: { /* raw bytes into guest RAM */
        uint64_t gpa = take(in, 2) + (op & 0x80 ? RAM1_GPA - 0x800 : 0);
        unsigned len = 1 + (unsigned)take(in, 1) % 32;
        uint8_t buf[32];
        for (unsigned i = 0; i < len; i++)
            buf[i] = (uint8_t)take(in, 1);
        uint8_t *p = gmem_ptr(&mem, gpa, len);
        if (p)
            memcpy(p, buf, len);
        break;
    }
    case 4:
        virtio_mmio_process(t, (op >> 4) % (NQUEUES + 2));
        break;
    case 5:
        op_bring_up(t, in);
        break;
    case 6:
        op_desc(t, in);
        break;
    case 7:
        op_publish(t, in);
        break;
    case 8: /* avail flags: interrupt suppression */
        if (t->queues[op >> 7].size) {
            uint16_t f = (uint16_t)take(in, 1);
            (void)gmem_write(&mem, t->queues[op >> 7].avail_gpa, &f, 2);
        }
        break;
    case 9:
        op_chain_run(t, in);
        break;
    }
    CHECK(!d->in_notify);
}

/* What must hold after any step, whatever the guest did. */
static void check_transport(struct virtio_mmio *t)
{
    uint32_t s = t->status;
    CHECK(!(s & ~STATUS_KNOWN));
    /* One of the §3.1.1 steps: 0, ACK, +DRIVER, +FEATURES_OK, +DRIVER_OK. */
    uint32_t steps = s & 0x0f;
    CHECK(steps == 0 || steps == 1 || steps == 3 || steps == 11 || steps == 15);
    if (s & VIRTIO_STATUS_FEATURES_OK) {
        CHECK(t->driver_features & VIRTIO_BIT(VIRTIO_F_VERSION_1));
        CHECK(!(t->driver_features & ~(DUMMY_FEATURES | VIRTIO_BIT(VIRTIO_F_VERSION_1))));
        CHECK(!(t->driver_features &
                (VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX))));
    }
    CHECK(!(t->interrupt_status & ~3u));
    for (unsigned i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
        const struct virtq *q = &t->queues[i];
        if (i >= NQUEUES) {
            CHECK(!q->ready && q->size == 0 && q->max_size == 0);
            CHECK(q->desc_gpa == 0 && q->avail_gpa == 0 && q->used_gpa == 0);
            continue;
        }
        CHECK(q->max_size == QMAX);
        if (q->ready) {
            CHECK(s & VIRTIO_STATUS_FEATURES_OK);
            CHECK(virtq_validate(q, &mem) == 0);
        }
        if (q->broken)
            CHECK(s & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    }
    if (s & VIRTIO_STATUS_DEVICE_NEEDS_RESET)
        CHECK(interrupts >= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *ram0 = calloc(1, RAM0), *ram1 = calloc(1, RAM1);
    struct dummy *d = calloc(1, sizeof(*d));
    if (!ram0 || !ram1 || !d)
        abort();
    d->chain = malloc(sizeof(*d->chain));
    d->ref = malloc(sizeof(*d->ref));
    if (!d->chain || !d->ref)
        abort();
    memset(&mem, 0, sizeof(mem));
    CHECK(gmem_add_region(&mem, 0, ram0, RAM0) == 0);
    CHECK(gmem_add_region(&mem, RAM1_GPA, ram1, RAM1) == 0);
    interrupts = 0;

    struct virtio_mmio t;
    virtio_mmio_init(&t, &dummy_ops, d, &host_ops, NULL, &mem);
    struct input in = {data, size};
    for (unsigned steps = 0; in.n && steps < 4096; steps++) {
        step(&t, d, &in);
        check_transport(&t);
    }
    pthread_mutex_destroy(&t.lock);
    free(d->chain);
    free(d->ref);
    free(d);
    free(ram1);
    free(ram0);
    return 0;
}

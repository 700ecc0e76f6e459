#include "tests/unit/ring.h"

#include <check.h>
#include <string.h>

/* Ring sizes at `n` entries, with the event fields (§2.7.6, §2.7.8). */
#define DESC_BYTES(n)  ((uint64_t)(n) * 16)
#define AVAIL_BYTES(n) (6 + (uint64_t)(n) * 2)
#define USED_BYTES(n)  (6 + (uint64_t)(n) * 8)

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

/* ---- split virtqueue in guest memory ------------------------------------ */

void ring_write(const struct test_ring *r, uint64_t gpa, const void *src, uint64_t len)
{
    ck_assert_msg(gmem_write(r->mem, gpa, src, len) == 0, "ring_write %#llx+%#llx: not RAM",
                  (unsigned long long)gpa, (unsigned long long)len);
}

void ring_read(const struct test_ring *r, uint64_t gpa, void *dst, uint64_t len)
{
    ck_assert_msg(gmem_read(r->mem, dst, gpa, len) == 0, "ring_read %#llx+%#llx: not RAM",
                  (unsigned long long)gpa, (unsigned long long)len);
}

static void wr16_at(const struct test_ring *r, uint64_t gpa, uint16_t v)
{
    ring_write(r, gpa, &v, 2);
}

static uint16_t rd16_at(const struct test_ring *r, uint64_t gpa)
{
    uint16_t v;
    ring_read(r, gpa, &v, 2);
    return v;
}

uint64_t ring_footprint(uint16_t size)
{
    uint64_t avail = DESC_BYTES(size);
    uint64_t used = align_up(avail + AVAIL_BYTES(size), 4);
    return align_up(used + USED_BYTES(size), 16);
}

/* End of the RAM region that holds gpa. */
static uint64_t region_end(const struct gmem *mem, uint64_t gpa)
{
    for (unsigned i = 0; i < mem->nregions; i++) {
        const struct gmem_region *g = &mem->regions[i];
        if (gpa >= g->gpa && gpa - g->gpa < g->size)
            return g->gpa + g->size;
    }
    return gpa;
}

void ring_init(struct test_ring *r, const struct gmem *mem, uint64_t base, uint16_t size)
{
    ck_assert_msg((base & 15) == 0, "ring base %#llx not 16-aligned", (unsigned long long)base);
    memset(r, 0, sizeof(*r));
    r->mem = mem;
    r->size = size;
    r->desc = base;
    r->avail = base + DESC_BYTES(size);
    r->used = align_up(r->avail + AVAIL_BYTES(size), 4);
    r->data_next = base + ring_footprint(size);
    r->data_end = region_end(mem, base);
    void *p = gmem_ptr(mem, base, ring_footprint(size));
    ck_assert_msg(p != NULL, "rings at %#llx (size %u) are not RAM", (unsigned long long)base,
                  size);
    memset(p, 0, ring_footprint(size));
}

uint64_t ring_alloc(struct test_ring *r, uint64_t len)
{
    uint64_t at = r->data_next;
    ck_assert_msg(at <= r->data_end && len <= r->data_end - at, "ring_alloc: %llu bytes do not fit",
                  (unsigned long long)len);
    r->data_next = align_up(at + len, 16);
    if (r->data_next > r->data_end)
        r->data_next = r->data_end;
    void *p = gmem_ptr(r->mem, at, len);
    ck_assert_ptr_nonnull(p);
    memset(p, 0, len);
    return at;
}

void ring_set_desc(struct test_ring *r, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                   uint16_t next)
{
    struct virtq_desc d = {.addr = addr, .len = len, .flags = flags, .next = next};
    ring_write(r, r->desc + (uint64_t)i * 16, &d, sizeof(d));
}

struct virtq_desc ring_get_desc(const struct test_ring *r, uint16_t i)
{
    struct virtq_desc d;
    ring_read(r, r->desc + (uint64_t)i * 16, &d, sizeof(d));
    return d;
}

uint16_t ring_add_desc(struct test_ring *r, uint64_t addr, uint32_t len, bool writable)
{
    uint16_t i = (uint16_t)(r->next_desc % r->size);
    r->next_desc = (uint16_t)((i + 1) % r->size);
    ring_set_desc(r, i, addr, len, writable ? VIRTQ_DESC_F_WRITE : 0, 0);
    return i;
}

uint16_t ring_chain(struct test_ring *r, const struct ring_buf *bufs, unsigned n)
{
    ck_assert_uint_gt(n, 0);
    uint16_t head = (uint16_t)(r->next_desc % r->size);
    uint16_t i = head;
    for (unsigned k = 0; k < n; k++) {
        uint16_t next = (uint16_t)((i + 1) % r->size);
        uint16_t flags = (uint16_t)((bufs[k].writable ? VIRTQ_DESC_F_WRITE : 0) |
                                    (k + 1 < n ? VIRTQ_DESC_F_NEXT : 0));
        ring_set_desc(r, i, bufs[k].gpa, bufs[k].len, flags, k + 1 < n ? next : 0);
        i = next;
    }
    r->next_desc = i;
    return head;
}

void ring_set_avail_entry(struct test_ring *r, uint16_t slot, uint16_t head)
{
    wr16_at(r, r->avail + 4 + (uint64_t)slot * 2, head);
}

void ring_set_avail_idx(struct test_ring *r, uint16_t idx)
{
    r->avail_idx = idx;
    wr16_at(r, r->avail + 2, idx);
}

void ring_set_avail_flags(struct test_ring *r, uint16_t flags)
{
    wr16_at(r, r->avail, flags);
}

void ring_publish(struct test_ring *r, uint16_t head)
{
    ring_set_avail_entry(r, (uint16_t)(r->avail_idx % r->size), head);
    ring_set_avail_idx(r, (uint16_t)(r->avail_idx + 1));
}

uint16_t ring_used_idx(const struct test_ring *r)
{
    return rd16_at(r, r->used + 2);
}

uint16_t ring_used_flags(const struct test_ring *r)
{
    return rd16_at(r, r->used);
}

struct ring_used ring_used_elem(const struct test_ring *r, uint16_t n)
{
    struct ring_used u;
    ring_read(r, r->used + 4 + (uint64_t)(n % r->size) * 8, &u, sizeof(u));
    return u;
}

void ring_to_virtq(const struct test_ring *r, struct virtq *q)
{
    uint16_t max = q->max_size ? q->max_size : VIRTQ_MAX_SIZE;
    memset(q, 0, sizeof(*q));
    q->max_size = max;
    q->size = r->size;
    q->desc_gpa = r->desc;
    q->avail_gpa = r->avail;
    q->used_gpa = r->used;
    q->ready = true;
}

/* ---- virtio-mmio register driver ---------------------------------------- */

uint64_t mmio_rd_n(struct virtio_mmio *t, uint64_t off, unsigned len)
{
    ck_assert_uint_le(len, 8);
    uint8_t buf[8];
    memset(buf, 0xee, sizeof(buf));
    virtio_mmio_io(t, off, buf, len, false);
    uint64_t v = 0;
    memcpy(&v, buf, len); /* little-endian host */
    return v;
}

void mmio_wr_n(struct virtio_mmio *t, uint64_t off, uint64_t v, unsigned len)
{
    ck_assert_uint_le(len, 8);
    uint8_t buf[8];
    memcpy(buf, &v, sizeof(buf));
    virtio_mmio_io(t, off, buf, len, true);
}

uint32_t mmio_rd(struct virtio_mmio *t, uint64_t off)
{
    return (uint32_t)mmio_rd_n(t, off, 4);
}

void mmio_wr(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
    mmio_wr_n(t, off, v, 4);
}

uint64_t mmio_device_features(struct virtio_mmio *t)
{
    mmio_wr(t, MMIO_DEVICE_FEATURES_SEL, 1);
    uint64_t hi = mmio_rd(t, MMIO_DEVICE_FEATURES);
    mmio_wr(t, MMIO_DEVICE_FEATURES_SEL, 0);
    return hi << 32 | mmio_rd(t, MMIO_DEVICE_FEATURES);
}

uint32_t mmio_negotiate(struct virtio_mmio *t, uint64_t features)
{
    mmio_wr(t, MMIO_STATUS, 0);
    mmio_wr(t, MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    mmio_wr(t, MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    mmio_wr(t, MMIO_DRIVER_FEATURES_SEL, 0);
    mmio_wr(t, MMIO_DRIVER_FEATURES, (uint32_t)features);
    mmio_wr(t, MMIO_DRIVER_FEATURES_SEL, 1);
    mmio_wr(t, MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
    mmio_wr(t, MMIO_STATUS,
            VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    return mmio_rd(t, MMIO_STATUS);
}

uint32_t mmio_setup_queue(struct virtio_mmio *t, unsigned q, const struct test_ring *r)
{
    mmio_wr(t, MMIO_QUEUE_SEL, q);
    mmio_wr(t, MMIO_QUEUE_NUM, r->size);
    mmio_wr(t, MMIO_QUEUE_DESC_LOW, (uint32_t)r->desc);
    mmio_wr(t, MMIO_QUEUE_DESC_HIGH, (uint32_t)(r->desc >> 32));
    mmio_wr(t, MMIO_QUEUE_DRIVER_LOW, (uint32_t)r->avail);
    mmio_wr(t, MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(r->avail >> 32));
    mmio_wr(t, MMIO_QUEUE_DEVICE_LOW, (uint32_t)r->used);
    mmio_wr(t, MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(r->used >> 32));
    mmio_wr(t, MMIO_QUEUE_READY, 1);
    return mmio_rd(t, MMIO_QUEUE_READY);
}

uint32_t mmio_driver_ok(struct virtio_mmio *t)
{
    mmio_wr(t, MMIO_STATUS, mmio_rd(t, MMIO_STATUS) | VIRTIO_STATUS_DRIVER_OK);
    return mmio_rd(t, MMIO_STATUS);
}

void mmio_bring_up(struct virtio_mmio *t, uint64_t features, const struct test_ring *rings,
                   unsigned nrings)
{
    uint32_t st = mmio_negotiate(t, features);
    ck_assert_msg(st & VIRTIO_STATUS_FEATURES_OK, "features %#llx refused (status %#x)",
                  (unsigned long long)features, st);
    for (unsigned i = 0; i < nrings; i++)
        ck_assert_msg(mmio_setup_queue(t, i, &rings[i]) == 1, "queue %u not ready", i);
    st = mmio_driver_ok(t);
    ck_assert_msg(st & VIRTIO_STATUS_DRIVER_OK, "DRIVER_OK refused (status %#x)", st);
}

static void counting_interrupt(void *opaque)
{
    (*(unsigned *)opaque)++;
}

static void ignored_kick(void *opaque, unsigned q)
{
    (void)opaque;
    (void)q;
}

const struct virtio_host_ops ring_counting_host = {.interrupt = counting_interrupt,
                                                   .kick = ignored_kick};

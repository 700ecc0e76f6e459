/* Test-side driver of virtio: builds split virtqueues (virtio 1.2 §2.7) in
 * a fake guest memory the way a guest driver would, and drives a struct
 * virtio_mmio through its register window (§4.2.2) the way the guest's
 * virtio-mmio driver would.  Every write into guest memory goes through
 * gmem_write, so a test cannot scribble outside its fake RAM; a helper that
 * is given an address that is not RAM fails the running test.
 *
 * Typical use (device tests):
 *
 *     struct test_mem tm;  test_mem_init(&tm, 1 << 20);
 *     struct test_ring r;  ring_init(&r, &tm.mem, 0x1000, 16);
 *     ... virtio_mmio_init(&t, &dev_ops, dev, &host_ops, host, &tm.mem);
 *     mmio_bring_up(&t, features, &r, 1);          // queue 0 uses r
 *     uint64_t hdr = ring_alloc(&r, 16), st = ring_alloc(&r, 1);
 *     struct ring_buf b[] = {{hdr, 16, false}, {st, 1, true}};
 *     ring_publish(&r, ring_chain(&r, b, 2));
 *     virtio_mmio_process(&t, 0);
 *     ck_assert_uint_eq(ring_used_idx(&r), 1);
 *     struct ring_used u = ring_used_elem(&r, 0);   // {id, len}
 */
#ifndef AIRLOCK_TESTS_UNIT_RING_H
#define AIRLOCK_TESTS_UNIT_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/mmio.h"
#include "devices/virtio/queue.h"
#include "vmm/memory/gmem.h"

/* ---- split virtqueue in guest memory ------------------------------------ */

/* The driver's view of one queue: where its rings are and the driver-side
 * indices.  Fields may be changed directly by hostile tests. */
struct test_ring {
    const struct gmem *mem;
    uint16_t size;           /* queue size (entries) */
    uint64_t desc, avail, used; /* ring guest addresses */
    uint16_t avail_idx;      /* driver's shadow of avail->idx */
    uint16_t next_desc;      /* next descriptor ring_add_desc/ring_chain hands out */
    uint64_t data_next;      /* bump pointer for ring_alloc */
    uint64_t data_end;       /* end of the area ring_alloc may hand out */
};

/* One buffer of a chain to build: readable ones must come before writable
 * ones for a well-formed chain (§2.7.4.2), but ring_chain does not check. */
struct ring_buf {
    uint64_t gpa;
    uint32_t len;
    bool writable;
};

/* One used ring element (§2.7.8). */
struct ring_used {
    uint32_t id;
    uint32_t len;
};

/* Lays out a queue of `size` entries at guest address `base` (16-aligned):
 * descriptor table at base, available ring right after it, used ring after
 * that (4-aligned); zeroes all three.  Guest memory from the end of the used
 * ring (16-aligned) to the end of the RAM region holding `base` is the data
 * area ring_alloc hands out; with several rings in one region, lower
 * data_end (or allocate from one ring only) so that area does not run over
 * another ring.  The rings must be RAM (fails the test). */
void ring_init(struct test_ring *r, const struct gmem *mem, uint64_t base, uint16_t size);

/* Bytes the three rings of a `size`-entry queue occupy as ring_init lays
 * them out (what a test must leave free after `base`). */
uint64_t ring_footprint(uint16_t size);

/* Hands out `len` bytes of zeroed guest memory from the data area,
 * 16-aligned; fails the test when the area is exhausted. */
uint64_t ring_alloc(struct test_ring *r, uint64_t len);

/* Writes descriptor `i` (i < size is NOT checked: hostile tests may write
 * anywhere the table's memory allows, but the slot must be RAM). */
void ring_set_desc(struct test_ring *r, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                   uint16_t next);

/* Reads descriptor `i` back from guest memory. */
struct virtq_desc ring_get_desc(const struct test_ring *r, uint16_t i);

/* Takes the next free descriptor (wrapping modulo size), writes one
 * unchained buffer into it, and returns its index. */
uint16_t ring_add_desc(struct test_ring *r, uint64_t addr, uint32_t len, bool writable);

/* Takes n consecutive free descriptors (wrapping modulo size), writes bufs
 * into them linked with NEXT (the last has no NEXT), returns the head. */
uint16_t ring_chain(struct test_ring *r, const struct ring_buf *bufs, unsigned n);

/* Publishes `head` the way a driver does (§2.7.13): writes it into the
 * next available ring slot, then advances avail->idx by one. */
void ring_publish(struct test_ring *r, uint16_t head);

/* Raw writes for hostile tests: the available ring entry at `slot`
 * (slot < size not checked), avail->idx (also sets the shadow), and
 * avail->flags (e.g. VIRTQ_AVAIL_F_NO_INTERRUPT). */
void ring_set_avail_entry(struct test_ring *r, uint16_t slot, uint16_t head);
void ring_set_avail_idx(struct test_ring *r, uint16_t idx);
void ring_set_avail_flags(struct test_ring *r, uint16_t flags);

/* used->idx as the device last published it. */
uint16_t ring_used_idx(const struct test_ring *r);
/* used->flags. */
uint16_t ring_used_flags(const struct test_ring *r);
/* Used ring element number n (taken modulo size, as a driver does). */
struct ring_used ring_used_elem(const struct test_ring *r, uint16_t n);

/* Fills a bare struct virtq (no transport) with this ring's size and
 * addresses, marks it ready and resets its indices; keeps q->max_size, or
 * sets it to VIRTQ_MAX_SIZE when it is 0.  Does not validate. */
void ring_to_virtq(const struct test_ring *r, struct virtq *q);

/* Guest-memory byte helpers that fail the test when the range is not RAM. */
void ring_write(const struct test_ring *r, uint64_t gpa, const void *src, uint64_t len);
void ring_read(const struct test_ring *r, uint64_t gpa, void *dst, uint64_t len);

/* ---- virtio-mmio register driver ---------------------------------------- */

/* Register offsets of the virtio-mmio window (§4.2.2, version 2). */
enum {
    MMIO_MAGIC = 0x000, MMIO_VERSION = 0x004, MMIO_DEVICE_ID = 0x008, MMIO_VENDOR_ID = 0x00c,
    MMIO_DEVICE_FEATURES = 0x010, MMIO_DEVICE_FEATURES_SEL = 0x014,
    MMIO_DRIVER_FEATURES = 0x020, MMIO_DRIVER_FEATURES_SEL = 0x024,
    MMIO_QUEUE_SEL = 0x030, MMIO_QUEUE_NUM_MAX = 0x034, MMIO_QUEUE_NUM = 0x038,
    MMIO_QUEUE_READY = 0x044, MMIO_QUEUE_NOTIFY = 0x050,
    MMIO_INTERRUPT_STATUS = 0x060, MMIO_INTERRUPT_ACK = 0x064, MMIO_STATUS = 0x070,
    MMIO_QUEUE_DESC_LOW = 0x080, MMIO_QUEUE_DESC_HIGH = 0x084,
    MMIO_QUEUE_DRIVER_LOW = 0x090, MMIO_QUEUE_DRIVER_HIGH = 0x094,
    MMIO_QUEUE_DEVICE_LOW = 0x0a0, MMIO_QUEUE_DEVICE_HIGH = 0x0a4,
    MMIO_SHM_SEL = 0x0ac, MMIO_SHM_LEN_LOW = 0x0b0, MMIO_SHM_LEN_HIGH = 0x0b4,
    MMIO_SHM_BASE_LOW = 0x0b8, MMIO_SHM_BASE_HIGH = 0x0bc,
    MMIO_CONFIG_GENERATION = 0x0fc, MMIO_CONFIG = 0x100,
};

/* A 32-bit register read / write through virtio_mmio_io. */
uint32_t mmio_rd(struct virtio_mmio *t, uint64_t off);
void mmio_wr(struct virtio_mmio *t, uint64_t off, uint32_t v);

/* Access of any width (1..8 bytes) at any offset, as a guest could make;
 * the value is little-endian in the low `len` bytes.  Reads of a width the
 * transport ignores come back 0 (the buffer is pre-filled with 0xee so a
 * handler that forgets to fill it shows). */
uint64_t mmio_rd_n(struct virtio_mmio *t, uint64_t off, unsigned len);
void mmio_wr_n(struct virtio_mmio *t, uint64_t off, uint64_t v, unsigned len);

/* The 64-bit DeviceFeatures the transport offers (both halves). */
uint64_t mmio_device_features(struct virtio_mmio *t);

/* §3.1.1 steps 1-6: reset, ACKNOWLEDGE, DRIVER, write DriverFeatures
 * (both halves), FEATURES_OK.  Returns the status read back afterwards;
 * it has FEATURES_OK only if the device accepted the features. */
uint32_t mmio_negotiate(struct virtio_mmio *t, uint64_t features);

/* §4.2.3.2: selects queue q, writes QueueNum and the three ring addresses
 * from r, then QueueReady = 1.  Returns QueueReady read back. */
uint32_t mmio_setup_queue(struct virtio_mmio *t, unsigned q, const struct test_ring *r);

/* Adds DRIVER_OK (§3.1.1 step 8); returns the status read back. */
uint32_t mmio_driver_ok(struct virtio_mmio *t);

/* The whole §3.1.1 sequence: negotiate `features` (must be accepted),
 * set up queue i from rings[i] for i < nrings (each must become ready),
 * DRIVER_OK.  Fails the test on any refusal. */
void mmio_bring_up(struct virtio_mmio *t, uint64_t features, const struct test_ring *rings,
                   unsigned nrings);

/* A monitor for a device under test: each interrupt adds one to the
 * unsigned its host_opaque points to; kicks are ignored (the test calls
 * virtio_mmio_process itself, as the event loop would). */
extern const struct virtio_host_ops ring_counting_host;

#endif

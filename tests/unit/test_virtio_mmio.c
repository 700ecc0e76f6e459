/* devices/virtio/mmio.c: the virtio-mmio v2 transport (virtio 1.2 §4.2)
 * as a hostile driver sees it, with a dummy two-queue device and a fake
 * monitor that counts interrupts and kicks.  Each test is named after the
 * spec section whose rule it checks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/mmio.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

#define RAM       0x10000ULL
#define DUMMY_ID  42
#define QMAX      16
/* Device bits the dummy asks for: two of its own, one high one, and the
 * two the transport must never offer. */
#define DUMMY_FEATURES (VIRTIO_BIT(0) | VIRTIO_BIT(5) | VIRTIO_BIT(34) | \
                        VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX))
#define OFFERED (VIRTIO_BIT(0) | VIRTIO_BIT(5) | VIRTIO_BIT(34) | VIRTIO_BIT(VIRTIO_F_VERSION_1))
#define V1 VIRTIO_BIT(VIRTIO_F_VERSION_1)

#define ACK  VIRTIO_STATUS_ACKNOWLEDGE
#define DRV  VIRTIO_STATUS_DRIVER
#define FEAT VIRTIO_STATUS_FEATURES_OK
#define DOK  VIRTIO_STATUS_DRIVER_OK
#define NEEDS_RESET VIRTIO_STATUS_DEVICE_NEEDS_RESET
#define FAILED VIRTIO_STATUS_FAILED

static const uint8_t dummy_config[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};

struct dummy {
    unsigned notifies[VIRTIO_MMIO_MAX_QUEUES];
    unsigned pops;
    int last_pop;
    unsigned resets;
    uint8_t seen[64]; /* readable bytes of the last chain */
    struct virtq_chain chain;
};

struct fake_host {
    uint32_t acked; /* acknowledged "in KVM", not yet taken by the transport */
    unsigned interrupts;
    unsigned kicks[8];
    unsigned nkicks;
};

static uint64_t d_features(void *dev)
{
    (void)dev;
    return DUMMY_FEATURES;
}

static void d_config_read(void *dev, uint64_t off, uint8_t *data, unsigned len)
{
    (void)dev;
    for (unsigned i = 0; i < len; i++)
        if (off < sizeof(dummy_config) && i < sizeof(dummy_config) - off)
            data[i] = dummy_config[off + i];
}

/* Pops every chain, records its readable bytes, fills its writable ones
 * with 0xd0+i and returns it, then tells the driver. */
static void d_queue_notify(void *dev, struct virtio_mmio *t, unsigned qi)
{
    struct dummy *d = dev;
    struct virtq *q = &t->queues[qi];
    d->notifies[qi]++;
    int rc;
    while ((rc = virtq_pop(q, t->mem, &d->chain)) == 1) {
        d->pops++;
        uint64_t n = d->chain.readable_len < sizeof(d->seen) ? d->chain.readable_len
                                                             : sizeof(d->seen);
        ck_assert_int_eq(virtq_chain_read(t->mem, &d->chain, 0, d->seen, n), 0);
        uint8_t out[64];
        uint64_t w = d->chain.writable_len < sizeof(out) ? d->chain.writable_len : sizeof(out);
        for (unsigned i = 0; i < w; i++)
            out[i] = (uint8_t)(0xd0 + i);
        ck_assert_int_eq(virtq_chain_write(t->mem, &d->chain, 0, out, w), 0);
        ck_assert_int_eq(virtq_push(q, t->mem, d->chain.head, (uint32_t)w), 0);
    }
    d->last_pop = rc;
    virtio_mmio_used(t, qi);
}

static void d_reset(void *dev)
{
    ((struct dummy *)dev)->resets++;
}

static const struct virtio_device_ops dummy_ops = {
    .name = "dummy", .device_id = DUMMY_ID, .num_queues = 2, .queue_max = QMAX,
    .features = d_features, .config_read = d_config_read,
    .queue_notify = d_queue_notify, .reset = d_reset,
};

static void h_interrupt(void *o)
{
    ((struct fake_host *)o)->interrupts++;
}

static void h_kick(void *o, unsigned q)
{
    struct fake_host *h = o;
    if (h->nkicks < 8)
        h->kicks[h->nkicks] = q;
    h->nkicks++;
}

static uint32_t h_acked(void *o)
{
    struct fake_host *h = o;
    uint32_t bits = h->acked;
    h->acked = 0;
    return bits;
}

static const struct virtio_host_ops host_ops = {
    .interrupt = h_interrupt, .kick = h_kick, .acked = h_acked,
};

static struct test_mem tm;
static struct test_ring r0, r1;
static struct dummy *dev;
static struct fake_host host;
static struct virtio_mmio t;

static void setup(void)
{
    test_mem_init(&tm, RAM);
    ring_init(&r0, &tm.mem, 0x1000, QMAX);
    ring_init(&r1, &tm.mem, 0x2000, QMAX);
    r0.data_next = 0x4000; /* data areas apart from the rings and each other */
    r0.data_end = 0x8000;
    r1.data_next = 0x8000;
    dev = calloc(1, sizeof(*dev));
    ck_assert_ptr_nonnull(dev);
    memset(&host, 0, sizeof(host));
    virtio_mmio_init(&t, &dummy_ops, dev, &host_ops, &host, &tm.mem);
}

static void teardown(void)
{
    pthread_mutex_destroy(&t.lock);
    free(dev);
    test_mem_free(&tm);
}

static uint32_t status_of(struct virtio_mmio *tr)
{
    return mmio_rd(tr, MMIO_STATUS);
}

static uint32_t status(void)
{
    return status_of(&t);
}

static void set_status(uint32_t v)
{
    mmio_wr(&t, MMIO_STATUS, v);
}

static void bring_up(void)
{
    struct test_ring rings[2] = {r0, r1};
    mmio_bring_up(&t, V1, rings, 2);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
}

/* Up to FEATURES_OK with VERSION_1 only, no queue set up. */
static void features_ok(void)
{
    ck_assert_uint_eq(mmio_negotiate(&t, V1), ACK | DRV | FEAT);
}

/* Publishes one chain on r: 4 readable bytes "ping", 8 writable. */
static void publish_ping(struct test_ring *r)
{
    uint64_t in = ring_alloc(r, 4), out = ring_alloc(r, 8);
    ring_write(r, in, "ping", 4);
    struct ring_buf b[] = {{in, 4, false}, {out, 8, true}};
    ring_publish(r, ring_chain(r, b, 2));
}

/* The device entered NEEDS_RESET and told the driver with exactly one
 * config interrupt. */
static void assert_needs_reset(unsigned interrupts_before)
{
    ck_assert_uint_ne(status() & NEEDS_RESET, 0);
    ck_assert_uint_ne(mmio_rd(&t, MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG, 0);
    ck_assert_uint_eq(host.interrupts, interrupts_before + 1);
}

/* ---- §4.2.2 register layout -------------------------------------------- */

START_TEST(s4_2_2_identity_registers)
{
    ck_assert_uint_eq(mmio_rd(&t, MMIO_MAGIC), 0x74726976);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_VERSION), 2);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_DEVICE_ID), DUMMY_ID);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_VENDOR_ID), VIRTIO_MMIO_VENDOR);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_CONFIG_GENERATION), 0);
    ck_assert_uint_eq(status(), 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_NUM_MAX), QMAX); /* queue_sel 0 */
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
}
END_TEST

START_TEST(s4_2_2_identity_registers_read_only)
{
    mmio_wr(&t, MMIO_MAGIC, 0);
    mmio_wr(&t, MMIO_VERSION, 1);
    mmio_wr(&t, MMIO_DEVICE_ID, 0);
    mmio_wr(&t, MMIO_VENDOR_ID, 0);
    mmio_wr(&t, MMIO_DEVICE_FEATURES, 0);
    mmio_wr(&t, MMIO_QUEUE_NUM_MAX, 1024);
    mmio_wr(&t, MMIO_CONFIG_GENERATION, 7);
    mmio_wr(&t, MMIO_INTERRUPT_STATUS, 3);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_MAGIC), 0x74726976);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_VERSION), 2);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_DEVICE_ID), DUMMY_ID);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_VENDOR_ID), VIRTIO_MMIO_VENDOR);
    ck_assert_uint_eq(mmio_device_features(&t), OFFERED);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_NUM_MAX), QMAX);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_CONFIG_GENERATION), 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
}
END_TEST

START_TEST(s4_2_2_unknown_registers)
{
    static const uint64_t holes[] = {0x018, 0x01c, 0x028, 0x03c, 0x040, 0x048, 0x04c,
                                     0x054, 0x068, 0x074, 0x09c, 0x0a8, 0x0c0, 0x0f8};
    for (unsigned i = 0; i < sizeof(holes) / sizeof(holes[0]); i++) {
        mmio_wr(&t, holes[i], 0xffffffff);
        ck_assert_msg(mmio_rd(&t, holes[i]) == 0, "register %#llx reads non-zero",
                      (unsigned long long)holes[i]);
    }
    ck_assert_uint_eq(status(), 0);
}
END_TEST

START_TEST(s4_2_2_non_32bit_access_ignored)
{
    /* §4.2.2.2: registers are 32-bit, aligned; anything else reads 0. */
    static const unsigned widths[] = {1, 2, 3, 8};
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_uint_eq(mmio_rd_n(&t, MMIO_MAGIC, widths[i]), 0);
        ck_assert_uint_eq(mmio_rd_n(&t, MMIO_DEVICE_ID, widths[i]), 0);
    }
    for (uint64_t off = 1; off < 4; off++)
        ck_assert_uint_eq(mmio_rd_n(&t, MMIO_MAGIC + off, 4), 0);
    /* Writes of the wrong shape change nothing. */
    mmio_wr_n(&t, MMIO_STATUS, ACK, 1);
    mmio_wr_n(&t, MMIO_STATUS, ACK, 2);
    mmio_wr_n(&t, MMIO_STATUS, ACK, 8);
    mmio_wr_n(&t, MMIO_STATUS + 1, (uint64_t)ACK << 24, 4); /* unaligned */
    ck_assert_uint_eq(status(), 0);
    mmio_wr_n(&t, MMIO_QUEUE_SEL, 1, 2);
    ck_assert_uint_eq(t.queue_sel, 0);
}
END_TEST

START_TEST(s4_2_2_shm_len_reads_all_ones)
{
    /* No shared memory regions: length -1 for any ShmSel (§4.2.2). */
    for (uint32_t sel = 0; sel < 3; sel++) {
        mmio_wr(&t, MMIO_SHM_SEL, sel);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_SHM_LEN_LOW), 0xffffffff);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_SHM_LEN_HIGH), 0xffffffff);
    }
}
END_TEST

/* ---- §4.2.2 feature registers -------------------------------------------- */

START_TEST(s4_2_2_device_features_both_halves)
{
    mmio_wr(&t, MMIO_DEVICE_FEATURES_SEL, 0);
    uint32_t lo = mmio_rd(&t, MMIO_DEVICE_FEATURES);
    mmio_wr(&t, MMIO_DEVICE_FEATURES_SEL, 1);
    uint32_t hi = mmio_rd(&t, MMIO_DEVICE_FEATURES);
    ck_assert_uint_eq(lo, (1u << 0) | (1u << 5));
    ck_assert_uint_eq(hi, (1u << (VIRTIO_F_VERSION_1 - 32)) | (1u << 2));
    ck_assert_uint_eq(lo & (1u << VIRTIO_F_INDIRECT_DESC), 0); /* never offered */
    ck_assert_uint_eq(lo & (1u << VIRTIO_F_EVENT_IDX), 0);
    /* No third half. */
    mmio_wr(&t, MMIO_DEVICE_FEATURES_SEL, 2);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_DEVICE_FEATURES), 0);
    mmio_wr(&t, MMIO_DEVICE_FEATURES_SEL, 0xffffffff);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_DEVICE_FEATURES), 0);
}
END_TEST

START_TEST(s4_2_2_driver_features_only_while_negotiating)
{
    /* Before DRIVER: ignored. */
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0x21);
    ck_assert_uint_eq(t.driver_features, 0);
    set_status(ACK);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0x21);
    ck_assert_uint_eq(t.driver_features, 0);
    /* ACK | DRIVER: both halves writable, a third half not. */
    set_status(ACK | DRV);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0x21);
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 1);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 1);
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 2);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0xffffffff);
    ck_assert_uint_eq(t.driver_features, V1 | 0x21);
    /* After FEATURES_OK: frozen. */
    set_status(ACK | DRV | FEAT);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT);
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 0);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0);
    ck_assert_uint_eq(t.driver_features, V1 | 0x21);
    ck_assert(virtio_mmio_has(&t, 0));
    ck_assert(virtio_mmio_has(&t, 5));
    ck_assert(!virtio_mmio_has(&t, 1));
    set_status(ACK | DRV | FEAT | DOK);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 0);
    ck_assert_uint_eq(t.driver_features, V1 | 0x21);
}
END_TEST

START_TEST(s3_1_features_ok_refused_without_version_1)
{
    /* §3.1.1 step 6: the device leaves FEATURES_OK clear to refuse. */
    ck_assert_uint_eq(mmio_negotiate(&t, VIRTIO_BIT(0)), ACK | DRV);
    ck_assert_uint_eq(mmio_negotiate(&t, 0), ACK | DRV);
    /* Still negotiating: the driver may fix its features and retry. */
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 1);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 1);
    set_status(ACK | DRV | FEAT);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT);
}
END_TEST

START_TEST(s3_1_features_ok_refused_with_unoffered_bit)
{
    static const unsigned bits[] = {1, 4, VIRTIO_F_INDIRECT_DESC, VIRTIO_F_EVENT_IDX, 33, 63};
    for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        ck_assert_msg(mmio_negotiate(&t, V1 | VIRTIO_BIT(bits[i])) == (ACK | DRV),
                      "feature bit %u accepted", bits[i]);
    ck_assert_uint_eq(mmio_negotiate(&t, OFFERED), ACK | DRV | FEAT);
    ck_assert_uint_eq(mmio_negotiate(&t, V1 | VIRTIO_BIT(5)), ACK | DRV | FEAT);
    ck_assert(virtio_mmio_has(&t, 5));
    ck_assert(!virtio_mmio_has(&t, 0));
}
END_TEST

/* ---- §2.1 / §3.1.1 device status state machine --------------------------- */

START_TEST(s2_1_status_each_allowed_step)
{
    set_status(ACK);
    ck_assert_uint_eq(status(), ACK);
    set_status(ACK | DRV);
    ck_assert_uint_eq(status(), ACK | DRV);
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 1);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 1);
    set_status(ACK | DRV | FEAT);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT);
    set_status(ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
}
END_TEST

START_TEST(s2_1_status_skipping_a_step_ignored)
{
    mmio_wr(&t, MMIO_DRIVER_FEATURES_SEL, 1);
    set_status(DRV);
    set_status(ACK | DRV);
    set_status(ACK | DRV | FEAT);
    set_status(DOK);
    set_status(ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(status(), 0);
    set_status(ACK);
    set_status(ACK | FEAT);
    set_status(ACK | DRV | FEAT);
    set_status(ACK | DOK);
    ck_assert_uint_eq(status(), ACK);
    set_status(ACK | DRV);
    mmio_wr(&t, MMIO_DRIVER_FEATURES, 1);
    set_status(ACK | DRV | DOK); /* DRIVER_OK without FEATURES_OK */
    set_status(ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(status(), ACK | DRV);
}
END_TEST

START_TEST(s2_1_status_clearing_bits_ignored)
{
    bring_up();
    static const uint32_t lower[] = {ACK, ACK | DRV, ACK | DRV | FEAT, DRV | FEAT | DOK,
                                     ACK | FEAT | DOK};
    for (unsigned i = 0; i < sizeof(lower) / sizeof(lower[0]); i++) {
        set_status(lower[i]);
        ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
    }
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 1); /* nothing was reset */
}
END_TEST

START_TEST(s2_1_status_driver_cannot_set_needs_reset)
{
    bring_up();
    set_status(ACK | DRV | FEAT | DOK | NEEDS_RESET);
    set_status(ACK | DRV | FEAT | DOK | 0x10 | 0x20); /* reserved bits */
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(host.interrupts, 0);
}
END_TEST

/* Resets, then walks the status up to `stage` (one of the §3.1.1 steps). */
static void reach(uint32_t stage)
{
    set_status(0);
    if (stage & FEAT)
        features_ok();
    else if (stage)
        for (uint32_t v = ACK; v <= stage; v = v << 1 | 1)
            set_status(v);
    if (stage & DOK)
        set_status(stage);
    ck_assert_uint_eq(status(), stage);
}

START_TEST(s2_1_status_failed_always_settable)
{
    static const uint32_t stages[] = {0, ACK, ACK | DRV, ACK | DRV | FEAT, ACK | DRV | FEAT | DOK};
    for (unsigned i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
        reach(stages[i]);
        set_status(stages[i] | FAILED);
        ck_assert_uint_eq(status(), stages[i] | FAILED);
        /* A failed device makes no more progress. */
        set_status(ACK | DRV | FEAT | DOK | FAILED);
        set_status(ACK);
        set_status(stages[i] | FAILED | ACK | DRV | FEAT | DOK);
        ck_assert_uint_eq(status(), stages[i] | FAILED);
    }
}
END_TEST

START_TEST(s2_1_status_zero_resets_everything)
{
    bring_up();
    ring_set_avail_flags(&r1, 0);
    publish_ping(&r1);
    virtio_mmio_process(&t, 1); /* raises a VRING interrupt */
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
    mmio_wr(&t, MMIO_QUEUE_SEL, 1);
    mmio_wr(&t, MMIO_DEVICE_FEATURES_SEL, 1);
    unsigned resets = dev->resets; /* mmio_negotiate starts with a reset */

    set_status(0);
    ck_assert_uint_eq(status(), 0);
    ck_assert_uint_eq(dev->resets, resets + 1);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    ck_assert_uint_eq(t.driver_features, 0);
    ck_assert_uint_eq(t.queue_sel, 0);
    ck_assert_uint_eq(t.device_features_sel, 0);
    ck_assert_uint_eq(t.driver_features_sel, 0);
    for (unsigned i = 0; i < 2; i++) {
        const struct virtq *q = &t.queues[i];
        mmio_wr(&t, MMIO_QUEUE_SEL, i);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_NUM_MAX), QMAX); /* kept */
        ck_assert(!q->ready && !q->broken);
        ck_assert_uint_eq(q->size, 0);
        ck_assert_uint_eq(q->desc_gpa | q->avail_gpa | q->used_gpa, 0);
        ck_assert_uint_eq(q->last_avail, 0);
        ck_assert_uint_eq(q->used_idx, 0);
    }
    /* And the device works again from scratch. */
    ring_init(&r1, &tm.mem, 0x2000, QMAX);
    r1.data_next = 0x8000;
    bring_up();
    publish_ping(&r1);
    virtio_mmio_process(&t, 1);
    ck_assert_uint_eq(ring_used_idx(&r1), 1);
}
END_TEST

START_TEST(s2_1_status_zero_resets_after_failed)
{
    set_status(FAILED);
    ck_assert_uint_eq(status(), FAILED);
    set_status(0);
    ck_assert_uint_eq(status(), 0);
    bring_up();
}
END_TEST

/* ---- §4.2.3.2 virtqueue configuration ------------------------------------ */

START_TEST(s4_2_3_queue_ready_before_features_ok_ignored)
{
    set_status(ACK);
    set_status(ACK | DRV);
    ck_assert_uint_eq(mmio_setup_queue(&t, 0, &r0), 0);
    ck_assert_uint_eq(t.queues[0].size, 0); /* the addresses did not stick either */
    ck_assert_uint_eq(t.queues[0].desc_gpa, 0);
    ck_assert_uint_eq(status() & NEEDS_RESET, 0);
    ck_assert_uint_eq(host.interrupts, 0);
}
END_TEST

START_TEST(s4_2_3_queue_sel_out_of_range)
{
    features_ok();
    static const uint32_t sels[] = {2, 3, 4, 0x10000, 0xffffffff};
    for (unsigned i = 0; i < sizeof(sels) / sizeof(sels[0]); i++) {
        mmio_wr(&t, MMIO_QUEUE_SEL, sels[i]);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_NUM_MAX), 0);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
        mmio_wr(&t, MMIO_QUEUE_NUM, QMAX);
        mmio_wr(&t, MMIO_QUEUE_DESC_LOW, 0x1000);
        mmio_wr(&t, MMIO_QUEUE_DRIVER_LOW, 0x1100);
        mmio_wr(&t, MMIO_QUEUE_DEVICE_LOW, 0x1200);
        mmio_wr(&t, MMIO_QUEUE_READY, 1);
        ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
    }
    /* Nothing landed anywhere, in range or beyond, and no reset. */
    for (unsigned i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
        ck_assert(!t.queues[i].ready);
        ck_assert_uint_eq(t.queues[i].size, 0);
        ck_assert_uint_eq(t.queues[i].desc_gpa | t.queues[i].avail_gpa | t.queues[i].used_gpa, 0);
    }
    ck_assert_uint_eq(status(), ACK | DRV | FEAT);
    ck_assert_uint_eq(host.interrupts, 0);
}
END_TEST

START_TEST(s4_2_3_queue_notify_out_of_range_does_not_kick)
{
    bring_up();
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 2);
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, VIRTIO_MMIO_MAX_QUEUES);
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 0x10001); /* queue 1 in the low half: not a queue */
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 0xffffffff);
    ck_assert_uint_eq(host.nkicks, 0);
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 1);
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 0);
    ck_assert_uint_eq(host.nkicks, 2);
    ck_assert_uint_eq(host.kicks[0], 1);
    ck_assert_uint_eq(host.kicks[1], 0);
    /* A kick is only a hint: the device did no work in the vCPU thread. */
    ck_assert_uint_eq(dev->notifies[0] + dev->notifies[1], 0);
}
END_TEST

START_TEST(s4_2_3_process_out_of_range_or_not_live)
{
    features_ok();
    ck_assert_uint_eq(mmio_setup_queue(&t, 0, &r0), 1);
    publish_ping(&r0);
    virtio_mmio_process(&t, 0); /* no DRIVER_OK yet */
    ck_assert_uint_eq(dev->notifies[0], 0);
    ck_assert_uint_eq(mmio_driver_ok(&t), ACK | DRV | FEAT | DOK);
    virtio_mmio_process(&t, 1); /* queue 1 not ready */
    virtio_mmio_process(&t, 2);
    virtio_mmio_process(&t, 1000);
    virtio_mmio_used(&t, 7);
    ck_assert_uint_eq(dev->notifies[0] + dev->notifies[1], 0);
    ck_assert_uint_eq(host.interrupts, 0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(dev->notifies[0], 1);
    ck_assert_uint_eq(ring_used_idx(&r0), 1);
}
END_TEST

START_TEST(s4_2_3_queue_config_ignored_while_ready)
{
    bring_up();
    struct virtq before = t.queues[0];
    mmio_wr(&t, MMIO_QUEUE_SEL, 0);
    mmio_wr(&t, MMIO_QUEUE_NUM, 4);
    mmio_wr(&t, MMIO_QUEUE_DESC_LOW, 0x8000);
    mmio_wr(&t, MMIO_QUEUE_DESC_HIGH, 1);
    mmio_wr(&t, MMIO_QUEUE_DRIVER_LOW, 0x9000);
    mmio_wr(&t, MMIO_QUEUE_DRIVER_HIGH, 1);
    mmio_wr(&t, MMIO_QUEUE_DEVICE_LOW, 0xa000);
    mmio_wr(&t, MMIO_QUEUE_DEVICE_HIGH, 1);
    mmio_wr(&t, MMIO_QUEUE_READY, 1); /* again: no revalidation, no change */
    ck_assert_mem_eq(&t.queues[0], &before, sizeof(before));
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
}
END_TEST

START_TEST(s4_2_3_queue_ready_zero_then_reconfigure)
{
    /* §4.2.2: writing 0 to QueueReady disables the queue; it can then be
     * set up again and is validated again. */
    bring_up();
    mmio_wr(&t, MMIO_QUEUE_SEL, 1);
    mmio_wr(&t, MMIO_QUEUE_READY, 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
    publish_ping(&r1);
    virtio_mmio_process(&t, 1);
    ck_assert_uint_eq(dev->notifies[1], 0);
    mmio_wr(&t, MMIO_QUEUE_NUM, 8);
    mmio_wr(&t, MMIO_QUEUE_READY, 1);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 1);
    ck_assert_uint_eq(t.queues[1].size, 8);
}
END_TEST

/* Sets up queue 0 with one field of r0 changed by `bad`, then QueueReady. */
static void ready_with(void (*bad)(struct test_ring *))
{
    features_ok();
    struct test_ring r = r0;
    bad(&r);
    ck_assert_uint_eq(mmio_setup_queue(&t, 0, &r), 0);
    assert_needs_reset(0);
    ck_assert(!t.queues[0].ready);
}

static void bad_size_3(struct test_ring *r) { r->size = 3; }
static void bad_size_0(struct test_ring *r) { r->size = 0; }
static void bad_size_big(struct test_ring *r) { r->size = QMAX * 2; }
static void bad_desc_align(struct test_ring *r) { r->desc += 8; }
static void bad_used_outside(struct test_ring *r) { r->used = RAM - 8; }
static void bad_avail_high(struct test_ring *r) { r->avail += 1ULL << 32; }

START_TEST(s4_2_3_queue_ready_size_not_power_of_two)
{
    ready_with(bad_size_3);
}
END_TEST

START_TEST(s4_2_3_queue_ready_size_zero)
{
    ready_with(bad_size_0);
}
END_TEST

START_TEST(s4_2_3_queue_ready_size_above_max)
{
    ready_with(bad_size_big);
}
END_TEST

START_TEST(s4_2_3_queue_num_above_16_bits)
{
    /* QueueNum is 32 bits wide on the bus; 0x10010 must not truncate to a
     * valid 16. */
    features_ok();
    struct test_ring r = r0;
    r.size = QMAX;
    mmio_wr(&t, MMIO_QUEUE_SEL, 0);
    mmio_wr(&t, MMIO_QUEUE_NUM, 0x10000 | QMAX);
    mmio_wr(&t, MMIO_QUEUE_DESC_LOW, (uint32_t)r.desc);
    mmio_wr(&t, MMIO_QUEUE_DRIVER_LOW, (uint32_t)r.avail);
    mmio_wr(&t, MMIO_QUEUE_DEVICE_LOW, (uint32_t)r.used);
    mmio_wr(&t, MMIO_QUEUE_READY, 1);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_QUEUE_READY), 0);
    assert_needs_reset(0);
}
END_TEST

START_TEST(s4_2_3_queue_ready_desc_misaligned)
{
    ready_with(bad_desc_align);
}
END_TEST

START_TEST(s4_2_3_queue_ready_used_outside_ram)
{
    ready_with(bad_used_outside);
}
END_TEST

START_TEST(s4_2_3_queue_ready_avail_high_half)
{
    /* The high address halves count: 4 GiB up is not RAM here. */
    ready_with(bad_avail_high);
}
END_TEST

START_TEST(s4_2_3_after_needs_reset_only_reset_helps)
{
    ready_with(bad_size_3);
    unsigned irq = host.interrupts;
    /* Nothing moves forward... */
    set_status(ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | NEEDS_RESET);
    ck_assert_uint_eq(mmio_setup_queue(&t, 0, &r0), 0);
    ck_assert_uint_eq(mmio_setup_queue(&t, 1, &r1), 0);
    ck_assert_uint_eq(t.queues[1].size, 0);
    /* ...a second bad QueueReady raises no second interrupt... */
    ck_assert_uint_eq(host.interrupts, irq);
    /* ...FAILED may still be said... */
    set_status(status() | FAILED);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | NEEDS_RESET | FAILED);
    /* ...and reset clears it all. */
    set_status(0);
    ck_assert_uint_eq(status(), 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    bring_up();
}
END_TEST

START_TEST(s4_2_3_broken_queue_in_process_sets_needs_reset)
{
    bring_up();
    ring_publish(&r0, QMAX); /* head out of range */
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(dev->notifies[0], 1);
    ck_assert_int_eq(dev->last_pop, -EINVAL);
    assert_needs_reset(0);
    ck_assert_uint_eq(ring_used_idx(&r0), 0);
    /* The transport no longer hands the device any queue. */
    publish_ping(&r1);
    virtio_mmio_process(&t, 0);
    virtio_mmio_process(&t, 1);
    ck_assert_uint_eq(dev->notifies[0], 1);
    ck_assert_uint_eq(dev->notifies[1], 0);
    ck_assert_uint_eq(host.interrupts, 1);
}
END_TEST

START_TEST(s4_2_3_needs_reset_from_device)
{
    bring_up();
    pthread_mutex_lock(&t.lock);
    virtio_mmio_needs_reset(&t);
    virtio_mmio_needs_reset(&t); /* once is enough */
    pthread_mutex_unlock(&t.lock);
    assert_needs_reset(0);
}
END_TEST

/* ---- §4.2.3.3 / §4.2.3.4 notifications and interrupts -------------------- */

START_TEST(s4_2_3_round_trip_through_transport)
{
    bring_up();
    publish_ping(&r1);
    mmio_wr(&t, MMIO_QUEUE_NOTIFY, 1);
    ck_assert_uint_eq(host.nkicks, 1);
    ck_assert_uint_eq(host.kicks[0], 1);
    virtio_mmio_process(&t, 1);
    ck_assert_uint_eq(dev->pops, 1);
    ck_assert_mem_eq(dev->seen, "ping", 4);
    ck_assert_uint_eq(ring_used_idx(&r1), 1);
    struct ring_used u = ring_used_elem(&r1, 0);
    ck_assert_uint_eq(u.id, 0);
    ck_assert_uint_eq(u.len, 8);
    struct virtq_desc d = ring_get_desc(&r1, 1);
    uint8_t out[8];
    ring_read(&r1, d.addr, out, 8);
    const uint8_t want[8] = {0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7};
    ck_assert_mem_eq(out, want, 8);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
    ck_assert_uint_eq(host.interrupts, 1);
    ck_assert_uint_eq(ring_used_idx(&r0), 0); /* the other queue untouched */
}
END_TEST

START_TEST(s4_2_3_used_interrupt_only_when_should_notify)
{
    bring_up();
    /* Nothing used: no interrupt. */
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(dev->notifies[0], 1);
    ck_assert_uint_eq(host.interrupts, 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    /* The driver suppressed interrupts: none. */
    ring_set_avail_flags(&r0, VIRTQ_AVAIL_F_NO_INTERRUPT);
    publish_ping(&r0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(ring_used_idx(&r0), 1);
    ck_assert_uint_eq(host.interrupts, 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    /* Allowed again: the next used buffer interrupts. */
    ring_set_avail_flags(&r0, 0);
    publish_ping(&r0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(ring_used_idx(&r0), 2);
    ck_assert_uint_eq(host.interrupts, 1);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
}
END_TEST

START_TEST(s4_2_2_interrupt_ack_clears_bits)
{
    bring_up();
    publish_ping(&r0);
    virtio_mmio_process(&t, 0);
    pthread_mutex_lock(&t.lock);
    virtio_mmio_needs_reset(&t);
    pthread_mutex_unlock(&t.lock);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS),
                      VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG);
    mmio_wr(&t, MMIO_INTERRUPT_ACK, 0xfffffffc); /* bits never set: harmless */
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS),
                      VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG);
    mmio_wr(&t, MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
    mmio_wr_n(&t, MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG, 1); /* wrong width */
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
    mmio_wr(&t, MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    /* Acknowledging does not clear NEEDS_RESET: only a reset does. */
    ck_assert_uint_ne(status() & NEEDS_RESET, 0);
}
END_TEST

/* The monitor takes InterruptACK writes without an exit (ioeventfds) and
 * hands their bits over lazily: they apply before InterruptStatus is read
 * or set, never after, so an interrupt raised later survives them. */
START_TEST(s4_2_2_interrupt_ack_taken_by_the_monitor)
{
    bring_up();
    publish_ping(&r0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(host.interrupts, 1);
    host.acked = VIRTIO_MMIO_INT_VRING;
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
    ck_assert_uint_eq(host.acked, 0);
    /* acknowledged before the next used buffer: that one stays flagged */
    host.acked = VIRTIO_MMIO_INT_VRING;
    publish_ping(&r0);
    virtio_mmio_process(&t, 0);
    ck_assert_uint_eq(host.interrupts, 2);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
    /* the same for a configuration interrupt */
    host.acked = VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG;
    pthread_mutex_lock(&t.lock);
    virtio_mmio_needs_reset(&t);
    pthread_mutex_unlock(&t.lock);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
    /* a reset takes what is pending, so it cannot clear a later bit */
    host.acked = VIRTIO_MMIO_INT_VRING;
    set_status(0);
    ck_assert_uint_eq(host.acked, 0);
    ck_assert_uint_eq(mmio_rd(&t, MMIO_INTERRUPT_STATUS), 0);
}
END_TEST

/* ---- §4.2.2 device configuration space ---------------------------------- */

START_TEST(s4_2_2_config_reads_any_width_and_offset)
{
    uint8_t want[16] = {0};
    memcpy(want, dummy_config, sizeof(dummy_config));
    for (unsigned len = 1; len <= 8; len++)
        for (uint64_t off = 0; off + len <= sizeof(want); off++) {
            uint64_t exp = 0;
            memcpy(&exp, want + off, len);
            uint64_t got = mmio_rd_n(&t, MMIO_CONFIG + off, len);
            ck_assert_msg(got == exp, "config +%llu/%u: %#llx, want %#llx",
                          (unsigned long long)off, len, (unsigned long long)got,
                          (unsigned long long)exp);
        }
}
END_TEST

START_TEST(s4_2_2_config_reads_past_device_config)
{
    /* Beyond the device's 8 bytes, up to the end of the window: zeros. */
    for (uint64_t off = MMIO_CONFIG + 8; off + 4 <= VIRTIO_MMIO_WINDOW; off += 4)
        ck_assert_uint_eq(mmio_rd_n(&t, off, 4), 0);
    ck_assert_uint_eq(mmio_rd_n(&t, VIRTIO_MMIO_WINDOW - 1, 1), 0);
    ck_assert_uint_eq(mmio_rd_n(&t, MMIO_CONFIG + 6, 4), 0x8877);
    ck_assert_uint_eq(mmio_rd_n(&t, MMIO_CONFIG + 0x1000, 8), 0);
    ck_assert_uint_eq(mmio_rd_n(&t, UINT64_MAX - 3, 4), 0);
}
END_TEST

START_TEST(s4_2_2_config_writes_dropped)
{
    bring_up();
    for (unsigned len = 1; len <= 8; len *= 2)
        mmio_wr_n(&t, MMIO_CONFIG, 0xffffffffffffffffULL, len);
    mmio_wr_n(&t, MMIO_CONFIG + 3, 0, 4);
    mmio_wr_n(&t, MMIO_CONFIG + 0x80, 0xff, 1);
    ck_assert_uint_eq(mmio_rd_n(&t, MMIO_CONFIG, 8), 0x8877665544332211ULL);
    ck_assert_uint_eq(mmio_rd_n(&t, MMIO_CONFIG + 0x80, 1), 0);
    ck_assert_uint_eq(status(), ACK | DRV | FEAT | DOK);
    ck_assert_uint_eq(host.interrupts, 0);
}
END_TEST

/* ---- a device table that claims more than the transport holds ---------- */

static const struct virtio_device_ops greedy_ops = {
    .name = "greedy", .device_id = DUMMY_ID, .num_queues = VIRTIO_MMIO_MAX_QUEUES + 2,
    .queue_max = 1024, .features = d_features, .config_read = d_config_read,
    .queue_notify = d_queue_notify, .reset = d_reset,
};

/* The transport on the heap, so ASan sees an index past queues[]. */
static struct virtio_mmio *greedy;

static void greedy_setup(void)
{
    test_mem_init(&tm, RAM);
    memset(&host, 0, sizeof(host));
    dev = calloc(1, sizeof(*dev));
    greedy = malloc(sizeof(*greedy));
    ck_assert_ptr_nonnull(dev);
    ck_assert_ptr_nonnull(greedy);
    virtio_mmio_init(greedy, &greedy_ops, dev, &host_ops, &host, &tm.mem);
}

static void greedy_teardown(void)
{
    pthread_mutex_destroy(&greedy->lock);
    free(greedy);
    free(dev);
    test_mem_free(&tm);
}

START_TEST(s4_2_3_queue_sel_bounded_by_transport)
{
    ck_assert_uint_eq(mmio_negotiate(greedy, V1), ACK | DRV | FEAT);
    for (uint32_t sel = VIRTIO_MMIO_MAX_QUEUES; sel < VIRTIO_MMIO_MAX_QUEUES + 2; sel++) {
        mmio_wr(greedy, MMIO_QUEUE_SEL, sel);
        ck_assert_uint_eq(mmio_rd(greedy, MMIO_QUEUE_NUM_MAX), 0);
        mmio_wr(greedy, MMIO_QUEUE_NUM, 16);
        mmio_wr(greedy, MMIO_QUEUE_READY, 1);
        ck_assert_uint_eq(mmio_rd(greedy, MMIO_QUEUE_READY), 0);
        mmio_wr(greedy, MMIO_QUEUE_NOTIFY, sel);
        virtio_mmio_process(greedy, sel);
    }
    ck_assert_uint_eq(host.nkicks, 0);
    ck_assert_uint_eq(status_of(greedy), ACK | DRV | FEAT);
}
END_TEST

START_TEST(s4_2_2_queue_num_max_bounded_by_virtq)
{
    /* QueueNumMax tells the truth: no more than a virtq_chain can hold. */
    for (uint32_t sel = 0; sel < VIRTIO_MMIO_MAX_QUEUES; sel++) {
        mmio_wr(greedy, MMIO_QUEUE_SEL, sel);
        ck_assert_uint_eq(mmio_rd(greedy, MMIO_QUEUE_NUM_MAX), VIRTQ_MAX_SIZE);
    }
    ck_assert_uint_eq(mmio_negotiate(greedy, V1), ACK | DRV | FEAT);
    struct test_ring r;
    ring_init(&r, &tm.mem, 0x1000, 512);
    ck_assert_uint_eq(mmio_setup_queue(greedy, 0, &r), 0);
    ck_assert_uint_ne(status_of(greedy) & NEEDS_RESET, 0);
}
END_TEST

Suite *virtio_mmio_suite(void)
{
    Suite *s = suite_create("virtio_mmio");
    TCase *tc = tcase_create("transport");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, s4_2_2_identity_registers);
    tcase_add_test(tc, s4_2_2_identity_registers_read_only);
    tcase_add_test(tc, s4_2_2_unknown_registers);
    tcase_add_test(tc, s4_2_2_non_32bit_access_ignored);
    tcase_add_test(tc, s4_2_2_shm_len_reads_all_ones);
    tcase_add_test(tc, s4_2_2_device_features_both_halves);
    tcase_add_test(tc, s4_2_2_driver_features_only_while_negotiating);
    tcase_add_test(tc, s3_1_features_ok_refused_without_version_1);
    tcase_add_test(tc, s3_1_features_ok_refused_with_unoffered_bit);
    tcase_add_test(tc, s2_1_status_each_allowed_step);
    tcase_add_test(tc, s2_1_status_skipping_a_step_ignored);
    tcase_add_test(tc, s2_1_status_clearing_bits_ignored);
    tcase_add_test(tc, s2_1_status_driver_cannot_set_needs_reset);
    tcase_add_test(tc, s2_1_status_failed_always_settable);
    tcase_add_test(tc, s2_1_status_zero_resets_everything);
    tcase_add_test(tc, s2_1_status_zero_resets_after_failed);
    tcase_add_test(tc, s4_2_3_queue_ready_before_features_ok_ignored);
    tcase_add_test(tc, s4_2_3_queue_sel_out_of_range);
    tcase_add_test(tc, s4_2_3_queue_notify_out_of_range_does_not_kick);
    tcase_add_test(tc, s4_2_3_process_out_of_range_or_not_live);
    tcase_add_test(tc, s4_2_3_queue_config_ignored_while_ready);
    tcase_add_test(tc, s4_2_3_queue_ready_zero_then_reconfigure);
    tcase_add_test(tc, s4_2_3_queue_ready_size_not_power_of_two);
    tcase_add_test(tc, s4_2_3_queue_ready_size_zero);
    tcase_add_test(tc, s4_2_3_queue_ready_size_above_max);
    tcase_add_test(tc, s4_2_3_queue_num_above_16_bits);
    tcase_add_test(tc, s4_2_3_queue_ready_desc_misaligned);
    tcase_add_test(tc, s4_2_3_queue_ready_used_outside_ram);
    tcase_add_test(tc, s4_2_3_queue_ready_avail_high_half);
    tcase_add_test(tc, s4_2_3_after_needs_reset_only_reset_helps);
    tcase_add_test(tc, s4_2_3_broken_queue_in_process_sets_needs_reset);
    tcase_add_test(tc, s4_2_3_needs_reset_from_device);
    tcase_add_test(tc, s4_2_3_round_trip_through_transport);
    tcase_add_test(tc, s4_2_3_used_interrupt_only_when_should_notify);
    tcase_add_test(tc, s4_2_2_interrupt_ack_clears_bits);
    tcase_add_test(tc, s4_2_2_interrupt_ack_taken_by_the_monitor);
    tcase_add_test(tc, s4_2_2_config_reads_any_width_and_offset);
    tcase_add_test(tc, s4_2_2_config_reads_past_device_config);
    tcase_add_test(tc, s4_2_2_config_writes_dropped);
    suite_add_tcase(s, tc);
    TCase *greedy_tc = tcase_create("greedy device");
    tcase_add_checked_fixture(greedy_tc, greedy_setup, greedy_teardown);
    tcase_add_test(greedy_tc, s4_2_3_queue_sel_bounded_by_transport);
    tcase_add_test(greedy_tc, s4_2_2_queue_num_max_bounded_by_virtq);
    suite_add_tcase(s, greedy_tc);
    return s;
}

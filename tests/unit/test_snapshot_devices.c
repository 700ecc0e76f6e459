/* Device state in and out of snapshots (devices/virtio/mmio_snapshot.c,
 * serial_save/serial_load): what a running device saves comes back the
 * same, and a hostile state (a status no driver reaches, features never
 * offered, rings a driver could not have made ready, more chains in
 * flight than a queue holds) is refused with a message, never loaded. */
#include <errno.h>
#include <string.h>

#include "devices/serial.h"
#include "devices/virtio/mmio_snapshot.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

#define RAM  0x10000ULL
#define QMAX 16
#define V1   VIRTIO_BIT(VIRTIO_F_VERSION_1)

static uint64_t s_features(void *dev)
{
    (void)dev;
    return VIRTIO_BIT(3);
}

static void s_config(void *dev, uint64_t off, uint8_t *data, unsigned len)
{
    (void)dev;
    (void)off;
    memset(data, 0, len);
}

static void s_notify(void *dev, struct virtio_mmio *t, unsigned q)
{
    (void)dev;
    (void)t;
    (void)q;
}

static const struct virtio_device_ops sdev_ops = {
    .name = "snapdummy", .device_id = 7, .num_queues = 2, .queue_max = QMAX,
    .features = s_features, .config_read = s_config, .queue_notify = s_notify,
};

static void h_int(void *o)
{
    (void)o;
}

static void h_kick(void *o, unsigned q)
{
    (void)o;
    (void)q;
}

static const struct virtio_host_ops hops = {.interrupt = h_int, .kick = h_kick};

static struct test_mem tm;
static struct virtio_mmio live, fresh;
static struct snap_virtio st;
static char err[256];

/* A transport brought up by a driver, both queues ready, some chains
 * taken and returned on queue 0, one still in flight. */
static void setup(void)
{
    test_mem_init(&tm, RAM);
    struct test_ring rings[2];
    ring_init(&rings[0], &tm.mem, 0x1000, QMAX);
    ring_init(&rings[1], &tm.mem, 0x2000, QMAX);
    virtio_mmio_init(&live, &sdev_ops, NULL, &hops, NULL, &tm.mem);
    mmio_bring_up(&live, V1 | VIRTIO_BIT(3), rings, 2);
    live.queues[0].last_avail = 5;
    live.queues[0].used_idx = 4;
    live.queues[0].signalled_used = 4;
    live.interrupt_status = VIRTIO_MMIO_INT_VRING;
    live.config_generation = 3;
    pthread_mutex_lock(&live.lock);
    virtio_mmio_save(&live, &st);
    pthread_mutex_unlock(&live.lock);
    virtio_mmio_init(&fresh, &sdev_ops, NULL, &hops, NULL, &tm.mem);
    err[0] = 0;
}

static void teardown(void)
{
    pthread_mutex_destroy(&live.lock);
    pthread_mutex_destroy(&fresh.lock);
    test_mem_free(&tm);
}

START_TEST(virtio_round_trip)
{
    ck_assert_int_eq(virtio_mmio_load(&fresh, &st, err, sizeof(err)), 0);
    ck_assert_uint_eq(mmio_rd(&fresh, MMIO_STATUS), mmio_rd(&live, MMIO_STATUS));
    ck_assert_uint_eq(fresh.driver_features, V1 | VIRTIO_BIT(3));
    ck_assert_uint_eq(fresh.interrupt_status, VIRTIO_MMIO_INT_VRING);
    ck_assert_uint_eq(fresh.config_generation, 3);
    for (unsigned q = 0; q < 2; q++) {
        ck_assert(fresh.queues[q].ready);
        ck_assert_uint_eq(fresh.queues[q].size, live.queues[q].size);
        ck_assert_uint_eq(fresh.queues[q].desc_gpa, live.queues[q].desc_gpa);
        ck_assert_uint_eq(fresh.queues[q].avail_gpa, live.queues[q].avail_gpa);
        ck_assert_uint_eq(fresh.queues[q].used_gpa, live.queues[q].used_gpa);
    }
    /* the chain in flight will be popped again, not lost */
    ck_assert_uint_eq(fresh.queues[0].last_avail, 4);
    ck_assert_uint_eq(fresh.queues[0].used_idx, 4);
    /* saving the loaded device gives the same picture but for that */
    struct snap_virtio again;
    pthread_mutex_lock(&fresh.lock);
    virtio_mmio_save(&fresh, &again);
    pthread_mutex_unlock(&fresh.lock);
    st.queues[0].last_avail = 4;
    ck_assert(!memcmp(&again, &st, sizeof(st)));
}
END_TEST

/* Each hostile edit of a good state, and the words its error must have. */
static void expect_refused(const char *why)
{
    ck_assert_int_eq(virtio_mmio_load(&fresh, &st, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, why), "error '%s' lacks '%s'", err, why);
}

START_TEST(virtio_wrong_device)
{
    st.device_id = 2;
    expect_refused("device id");
}
END_TEST

START_TEST(virtio_wrong_queue_count)
{
    st.nqueues = 3;
    expect_refused("queue count");
}
END_TEST

START_TEST(virtio_unreachable_status)
{
    st.status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER_OK; /* no FEATURES_OK */
    expect_refused("status");
}
END_TEST

START_TEST(virtio_features_not_offered)
{
    st.driver_features |= VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
    expect_refused("features");
}
END_TEST

START_TEST(virtio_no_version_1)
{
    st.driver_features = VIRTIO_BIT(3);
    expect_refused("features");
}
END_TEST

START_TEST(virtio_bad_queue_size)
{
    st.queues[1].size = 3;
    expect_refused("QueueReady checks");
}
END_TEST

START_TEST(virtio_rings_outside_ram)
{
    st.queues[0].used_gpa = RAM - 8;
    expect_refused("QueueReady checks");
}
END_TEST

START_TEST(virtio_too_many_in_flight)
{
    st.queues[0].last_avail = (uint16_t)(st.queues[0].used_idx + QMAX + 1);
    expect_refused("in flight");
}
END_TEST

START_TEST(virtio_ready_not_boolean)
{
    st.queues[0].ready = 2;
    expect_refused("ready");
}
END_TEST

START_TEST(virtio_ready_before_features)
{
    st.status = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
    expect_refused("FEATURES_OK");
}
END_TEST

START_TEST(virtio_interrupt_bits)
{
    st.interrupt_status = 4;
    expect_refused("interrupt");
}
END_TEST

static int irq_level;

static void ser_irq(void *o, int level)
{
    (void)o;
    irq_level = level;
}

static void ser_tx(void *o, uint8_t b)
{
    (void)o;
    (void)b;
}

START_TEST(serial_round_trip)
{
    static const struct serial_ops ops = {.tx = ser_tx, .set_irq = ser_irq};
    struct serial a, b;
    serial_init(&a, &ops, NULL);
    serial_init(&b, &ops, NULL);
    uint8_t v = 0x80; /* DLAB, then a divisor, then 8N1 and THR-empty interrupts */
    serial_io(&a, 3, &v, 1, true);
    v = 0x01;
    serial_io(&a, 0, &v, 1, true);
    v = 0x03;
    serial_io(&a, 3, &v, 1, true);
    v = 0x02;
    serial_io(&a, 1, &v, 1, true);
    struct snap_serial s;
    serial_save(&a, &s);
    irq_level = 0;
    ck_assert_int_eq(serial_load(&b, &s), 0);
    struct snap_serial s2;
    serial_save(&b, &s2);
    ck_assert(!memcmp(&s, &s2, sizeof(s)));
    ck_assert_int_eq(irq_level, a.irq_level); /* the line follows the registers */
    s.thri_pending = 2;
    ck_assert_int_eq(serial_load(&b, &s), -EINVAL);
    pthread_mutex_destroy(&a.lock);
    pthread_mutex_destroy(&b.lock);
}
END_TEST

Suite *snapshot_devices_suite(void)
{
    Suite *s = suite_create("snapshot_devices");
    TCase *tc = tcase_create("virtio");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, virtio_round_trip);
    tcase_add_test(tc, virtio_wrong_device);
    tcase_add_test(tc, virtio_wrong_queue_count);
    tcase_add_test(tc, virtio_unreachable_status);
    tcase_add_test(tc, virtio_features_not_offered);
    tcase_add_test(tc, virtio_no_version_1);
    tcase_add_test(tc, virtio_bad_queue_size);
    tcase_add_test(tc, virtio_rings_outside_ram);
    tcase_add_test(tc, virtio_too_many_in_flight);
    tcase_add_test(tc, virtio_ready_not_boolean);
    tcase_add_test(tc, virtio_ready_before_features);
    tcase_add_test(tc, virtio_interrupt_bits);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("serial");
    tcase_add_test(ts, serial_round_trip);
    suite_add_tcase(s, ts);
    return s;
}

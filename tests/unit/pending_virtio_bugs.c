/* Failing tests for latent bugs in devices/virtio/{queue,mmio}.c that the
 * hostile-guest tests found.  NOT compiled into `make unit-test` (the name
 * is not test_*.c): each fails today, under ASan, and joins test_virtq.c /
 * test_virtio_mmio.c once the code is fixed.
 *
 * Neither is reachable by a guest with today's devices (virtio-blk offers
 * queue_max 256, vmm/virtio_devices.c refuses num_queues > 4); both are a
 * bound that the transport or queue takes on trust from the device table
 * instead of enforcing it where the array is indexed (DESIGN.md: "an index
 * like vqs[queue_sel] taken unchecked").
 *
 * Run (from the top, after `make unit-test` built the objects):
 *   cc -O1 -g -std=gnu11 -D_GNU_SOURCE -I. -fsanitize=address,undefined \
 *      $(pkg-config --cflags check) -o /tmp/pending tests/unit/pending_virtio_bugs.c \
 *      build/san/tests/unit/helpers.o build/san/tests/unit/ring.o \
 *      build/san/devices/virtio/queue.o build/san/devices/virtio/mmio.o \
 *      build/san/vmm/gmem.o $(pkg-config --libs check) -lpthread
 *   CK_FORK=no /tmp/pending
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/mmio.h"
#include "devices/virtio/queue.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

/* 1. devices/virtio/queue.c, virtq_validate (line 22) accepts any size up
 *    to q->max_size, but struct virtq_chain holds VIRTQ_MAX_SIZE (256)
 *    buffers and virtq_pop's walk is bounded by q->size alone, so a device
 *    whose queue_max is above 256 (virtio_mmio_init copies ops->queue_max
 *    unclamped, mmio.c line 52) lets a 257-descriptor chain write past
 *    chain->bufs.  Fix: in virtq_validate, `n > VIRTQ_MAX_SIZE` is also
 *    -EINVAL (and virtio_mmio_init clamps max_size to VIRTQ_MAX_SIZE so
 *    QueueNumMax tells the driver the truth). */
START_TEST(s2_7_validate_size_above_virtq_max_size)
{
    struct test_mem tm;
    test_mem_init(&tm, 0x20000);
    struct test_ring r;
    ring_init(&r, &tm.mem, 0x1000, 512);
    struct virtq q = {.max_size = 512};
    ring_to_virtq(&r, &q);
    /* Expected: refused.  Today: accepted... */
    ck_assert_int_eq(virtq_validate(&q, &tm.mem), -EINVAL);
    /* ...and then a 512-long chain overflows virtq_chain (ASan). */
    for (unsigned i = 0; i < 512; i++)
        ring_set_desc(&r, (uint16_t)i, 0x10000 + i, 1, i + 1 < 512 ? VIRTQ_DESC_F_NEXT : 0,
                      (uint16_t)(i + 1));
    ring_publish(&r, 0);
    struct virtq_chain *ch = malloc(sizeof(*ch));
    ck_assert_ptr_nonnull(ch);
    int rc = virtq_pop(&q, &tm.mem, ch);
    free(ch);
    test_mem_free(&tm);
    ck_assert_int_ne(rc, 1);
}
END_TEST

/* 2. devices/virtio/mmio.c, selected_queue (line 63), virtio_mmio_process (251)
 *    and virtio_mmio_used (262) compare queue indices with ops->num_queues only,
 *    never with VIRTIO_MMIO_MAX_QUEUES, the size of t->queues; a device
 *    table with num_queues > 4 lets QueueSel = 4.. index past the array
 *    (queues[] is the struct's last member: heap overflow).  Fix: clamp in
 *    virtio_mmio_init (num_queues = min(ops->num_queues, MAX)) kept in
 *    struct virtio_mmio and used for every bound, or refuse such ops. */
static uint64_t no_features(void *dev) { (void)dev; return 0; }
static void no_config(void *dev, uint64_t off, uint8_t *d, unsigned len)
{
    (void)dev; (void)off; (void)d; (void)len;
}
static void no_notify(void *dev, struct virtio_mmio *t, unsigned q) { (void)dev; (void)t; (void)q; }
static void no_irq(void *o) { (void)o; }

START_TEST(s4_2_3_queue_sel_bounded_by_queue_array)
{
    static const struct virtio_device_ops six = {
        .name = "six", .device_id = 1, .num_queues = 6, .queue_max = 16,
        .features = no_features, .config_read = no_config, .queue_notify = no_notify,
    };
    static const struct virtio_host_ops host = {.interrupt = no_irq};
    struct test_mem tm;
    test_mem_init(&tm, 0x10000);
    struct virtio_mmio *t = malloc(sizeof(*t));
    ck_assert_ptr_nonnull(t);
    virtio_mmio_init(t, &six, NULL, &host, NULL, &tm.mem);
    ck_assert_uint_eq(mmio_negotiate(t, VIRTIO_BIT(VIRTIO_F_VERSION_1)) & VIRTIO_STATUS_FEATURES_OK,
                      VIRTIO_STATUS_FEATURES_OK);
    mmio_wr(t, MMIO_QUEUE_SEL, 5);
    /* Expected: queue 5 does not exist.  Today: ASan, heap overflow. */
    ck_assert_uint_eq(mmio_rd(t, MMIO_QUEUE_NUM_MAX), 0);
    mmio_wr(t, MMIO_QUEUE_NUM, 16);
    pthread_mutex_destroy(&t->lock);
    free(t);
    test_mem_free(&tm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pending_virtio_bugs");
    TCase *tc = tcase_create("pending");
    tcase_add_test(tc, s2_7_validate_size_above_virtq_max_size);
    tcase_add_test(tc, s4_2_3_queue_sel_bounded_by_queue_array);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

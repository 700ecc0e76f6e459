/* devices/boot_timer.c: only one-byte writes of the two documented values
 * are marks; everything else a guest does there is ignored. */
#include <string.h>

#include "vmm/memory/layout.h"
#include "devices/boot_timer.h"
#include "devices/bus.h"
#include "tests/unit/helpers.h"

struct seen {
    unsigned n[3];
};

static void count_mark(void *opaque, enum boot_timer_mark what)
{
    struct seen *s = opaque;
    ck_assert(what == BOOT_TIMER_USERSPACE || what == BOOT_TIMER_AGENT_READY);
    s->n[what]++;
}

START_TEST(documented_values_mark)
{
    struct seen s = {{0}};
    struct boot_timer t = {.mark = count_mark, .opaque = &s};
    for (unsigned v = 0; v < 256; v++) {
        uint8_t b = (uint8_t)v;
        boot_timer_io(&t, 0, &b, 1, true);
    }
    ck_assert_uint_eq(s.n[BOOT_TIMER_USERSPACE], 1);
    ck_assert_uint_eq(s.n[BOOT_TIMER_AGENT_READY], 1);
    /* repeated marks are passed on; the receiver keeps the first */
    uint8_t b = BOOT_TIMER_AGENT_READY;
    boot_timer_io(&t, 0, &b, 1, true);
    ck_assert_uint_eq(s.n[BOOT_TIMER_AGENT_READY], 2);
}
END_TEST

START_TEST(wide_writes_ignored)
{
    struct seen s = {{0}};
    struct boot_timer t = {.mark = count_mark, .opaque = &s};
    uint8_t w[8] = {BOOT_TIMER_USERSPACE, 0, 0, 0, 0, 0, 0, 0};
    for (unsigned len = 2; len <= 8; len++)
        boot_timer_io(&t, 0, w, len, true);
    ck_assert_uint_eq(s.n[BOOT_TIMER_USERSPACE] + s.n[BOOT_TIMER_AGENT_READY], 0);
}
END_TEST

START_TEST(reads_all_ones_and_no_receiver)
{
    struct boot_timer t = {0};
    uint8_t d[8];
    memset(d, 0, sizeof(d));
    boot_timer_io(&t, 0, d, 4, false);
    ck_assert_uint_eq(rd32le(d), 0xffffffffu);
    ck_assert_uint_eq(d[4], 0);
    uint8_t b = BOOT_TIMER_USERSPACE;
    boot_timer_io(&t, 0, &b, 1, true); /* no receiver: must not crash */
}
END_TEST

START_TEST(through_the_bus)
{
    struct seen s = {{0}};
    struct boot_timer t = {.mark = count_mark, .opaque = &s};
    struct bus b;
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(bus_register(&b, BUS_PIO, LAYOUT_BOOT_TIMER_PORT, 1, "boot timer",
                                  boot_timer_io, &t), 0);
    uint8_t v = BOOT_TIMER_USERSPACE;
    ck_assert(bus_access(&b, BUS_PIO, LAYOUT_BOOT_TIMER_PORT, &v, 1, true));
    ck_assert_uint_eq(s.n[BOOT_TIMER_USERSPACE], 1);
    /* a neighbouring port is not the timer's */
    ck_assert(!bus_access(&b, BUS_PIO, LAYOUT_BOOT_TIMER_PORT + 1, &v, 1, true));
    ck_assert_uint_eq(s.n[BOOT_TIMER_USERSPACE], 1);
}
END_TEST

Suite *boot_timer_suite(void)
{
    Suite *s = suite_create("boot_timer");
    TCase *tc = tcase_create("boot_timer");
    tcase_add_test(tc, documented_values_mark);
    tcase_add_test(tc, wide_writes_ignored);
    tcase_add_test(tc, reads_all_ones_and_no_receiver);
    tcase_add_test(tc, through_the_bus);
    suite_add_tcase(s, tc);
    return s;
}

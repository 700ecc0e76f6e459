/* devices/i8042.c: the reset line, and nothing else. */
#include <string.h>

#include "vmm/memory/layout.h"
#include "devices/bus.h"
#include "devices/i8042.h"
#include "tests/unit/helpers.h"

static void count_reset(void *opaque)
{
    (*(unsigned *)opaque)++;
}

START_TEST(reset_command)
{
    unsigned resets = 0;
    struct i8042 kbd = {.reset = count_reset, .opaque = &resets};
    uint8_t v = I8042_CMD_RESET;
    i8042_cmd_io(&kbd, 0, &v, 1, true);
    ck_assert_uint_eq(resets, 1);
    /* every other command, and 0xfe on the data port, does nothing */
    for (unsigned c = 0; c < 256; c++) {
        v = (uint8_t)c;
        if (c != I8042_CMD_RESET)
            i8042_cmd_io(&kbd, 0, &v, 1, true);
        i8042_data_io(&kbd, 0, &v, 1, true);
    }
    ck_assert_uint_eq(resets, 1);
    /* a wide write whose low byte is 0xfe is the reset command */
    uint8_t w[4] = {0xfe, 0, 0, 0};
    i8042_cmd_io(&kbd, 0, w, 4, true);
    ck_assert_uint_eq(resets, 2);
    /* 0xfe in a higher byte is not */
    uint8_t h[4] = {0x00, 0xfe, 0xfe, 0xfe};
    i8042_cmd_io(&kbd, 0, h, 4, true);
    ck_assert_uint_eq(resets, 2);
}
END_TEST

START_TEST(no_reset_handler)
{
    struct i8042 kbd = {0};
    uint8_t v = I8042_CMD_RESET;
    i8042_cmd_io(&kbd, 0, &v, 1, true); /* must not crash */
    ck_assert_uint_eq(v, I8042_CMD_RESET);
}
END_TEST

START_TEST(status_reads_empty)
{
    unsigned resets = 0;
    struct i8042 kbd = {.reset = count_reset, .opaque = &resets};
    uint8_t d[8];
    memset(d, 0xaa, sizeof(d));
    i8042_cmd_io(&kbd, 0, d, 1, false);
    ck_assert_uint_eq(d[0], 0);
    ck_assert_uint_eq(d[1], 0xaa);
    memset(d, 0xaa, sizeof(d));
    i8042_cmd_io(&kbd, 0, d, 4, false);
    ck_assert_uint_eq(rd32le(d), 0);
    memset(d, 0xaa, sizeof(d));
    i8042_data_io(&kbd, 0, d, 2, false);
    ck_assert_uint_eq(rd16le(d), 0);
    ck_assert_uint_eq(resets, 0);
}
END_TEST

START_TEST(through_the_bus)
{
    unsigned resets = 0;
    struct i8042 kbd = {.reset = count_reset, .opaque = &resets};
    struct bus b;
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(bus_register(&b, BUS_PIO, LAYOUT_I8042_DATA_PORT, 1, "i8042 data",
                                  i8042_data_io, &kbd), 0);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, LAYOUT_I8042_CMD_PORT, 1, "i8042 cmd",
                                  i8042_cmd_io, &kbd), 0);
    uint8_t v = 0xff;
    ck_assert(bus_access(&b, BUS_PIO, LAYOUT_I8042_CMD_PORT, &v, 1, false));
    ck_assert_uint_eq(v, 0);
    v = I8042_CMD_RESET;
    ck_assert(bus_access(&b, BUS_PIO, LAYOUT_I8042_DATA_PORT, &v, 1, true));
    ck_assert_uint_eq(resets, 0);
    ck_assert(bus_access(&b, BUS_PIO, LAYOUT_I8042_CMD_PORT, &v, 1, true));
    ck_assert_uint_eq(resets, 1);
}
END_TEST

Suite *i8042_suite(void)
{
    Suite *s = suite_create("i8042");
    TCase *tc = tcase_create("i8042");
    tcase_add_test(tc, reset_command);
    tcase_add_test(tc, no_reset_handler);
    tcase_add_test(tc, status_reads_empty);
    tcase_add_test(tc, through_the_bus);
    suite_add_tcase(s, tc);
    return s;
}

/* devices/bus.c: range registration and dispatch. */
#include <errno.h>
#include <string.h>

#include "devices/bus.h"
#include "tests/unit/helpers.h"

struct rec {
    unsigned calls;
    uint64_t offset;
    unsigned len;
    bool is_write;
    uint8_t wrote[8];
};

static void rec_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    struct rec *r = opaque;
    r->calls++;
    r->offset = offset;
    r->len = len;
    r->is_write = is_write;
    if (is_write)
        memcpy(r->wrote, data, len);
    else
        for (unsigned i = 0; i < len; i++)
            data[i] = (uint8_t)(0x10 + offset + i);
}

START_TEST(register_rejects)
{
    struct bus b;
    struct rec r = {0};
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3f8, 8, "com1", rec_io, &r), 0);
    /* exact duplicate, inside, partial at either end, covering */
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3f8, 8, "dup", rec_io, &r), -EEXIST);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3fa, 1, "in", rec_io, &r), -EEXIST);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3f0, 9, "head", rec_io, &r), -EEXIST);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3ff, 4, "tail", rec_io, &r), -EEXIST);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x300, 0x200, "cover", rec_io, &r), -EEXIST);
    /* touching is not overlapping */
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3f0, 8, "below", rec_io, &r), 0);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x400, 1, "above", rec_io, &r), 0);
    /* the other space is separate */
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0x3f8, 8, "mmio", rec_io, &r), 0);
    /* empty, wrapping, no handler */
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0x1000, 0, "empty", rec_io, &r), -EINVAL);
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, UINT64_MAX - 3, 8, "wrap", rec_io, &r), -EINVAL);
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 1, UINT64_MAX, "wrap", rec_io, &r), -EINVAL);
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0x2000, 8, "nofn", NULL, &r), -EINVAL);
    ck_assert_uint_eq(b.space[BUS_PIO].n, 3);
    ck_assert_uint_eq(b.space[BUS_MMIO].n, 1);
}
END_TEST

START_TEST(register_full)
{
    struct bus b;
    struct rec r = {0};
    memset(&b, 0, sizeof(b));
    for (unsigned i = 0; i < BUS_MAX_RANGES; i++)
        ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0x1000 * (i + 1), 0x100, "dev", rec_io, &r),
                         0);
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0x100000, 0x100, "one more", rec_io, &r),
                     -ENOSPC);
    ck_assert_uint_eq(b.space[BUS_MMIO].n, BUS_MAX_RANGES);
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x60, 1, "pio still free", rec_io, &r), 0);
}
END_TEST

START_TEST(dispatch)
{
    struct bus b;
    struct rec a = {0}, c = {0};
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0xd0000000, 0x200, "a", rec_io, &a), 0);
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, 0xd0000200, 0x200, "c", rec_io, &c), 0);
    uint8_t data[8] = {0};

    ck_assert(bus_access(&b, BUS_MMIO, 0xd0000000, data, 4, false)); /* first byte */
    ck_assert_uint_eq(a.calls, 1);
    ck_assert_uint_eq(a.offset, 0);
    ck_assert_uint_eq(a.len, 4);
    ck_assert_uint_eq(data[0], 0x10);
    ck_assert_uint_eq(data[3], 0x13);

    ck_assert(bus_access(&b, BUS_MMIO, 0xd00001ff, data, 1, false)); /* last byte */
    ck_assert_uint_eq(a.calls, 2);
    ck_assert_uint_eq(a.offset, 0x1ff);
    ck_assert(bus_access(&b, BUS_MMIO, 0xd00001f8, data, 8, false)); /* last 8 bytes */
    ck_assert_uint_eq(a.calls, 3);

    uint8_t w[4] = {1, 2, 3, 4};
    ck_assert(bus_access(&b, BUS_MMIO, 0xd0000204, w, 4, true));
    ck_assert_uint_eq(c.calls, 1);
    ck_assert_uint_eq(c.offset, 4);
    ck_assert(c.is_write);
    ck_assert_mem_eq(c.wrote, w, 4);
    ck_assert_uint_eq(a.calls, 3);

    const struct bus_range *r = bus_find(&b, BUS_MMIO, 0xd00001ff);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->name, "a");
    ck_assert_ptr_null(bus_find(&b, BUS_MMIO, 0xd0000400));
    ck_assert_ptr_null(bus_find(&b, BUS_PIO, 0xd0000000));
    ck_assert_uint_eq(atomic_load(&b.space[BUS_MMIO].unclaimed), 0);
}
END_TEST

START_TEST(unclaimed)
{
    struct bus b;
    struct rec a = {0};
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(bus_register(&b, BUS_PIO, 0x3f8, 8, "com1", rec_io, &a), 0);
    uint8_t data[16];

    /* straddling the end of the range: not the handler's */
    memset(data, 0, sizeof(data));
    ck_assert(!bus_access(&b, BUS_PIO, 0x3ff, data, 2, false));
    ck_assert_uint_eq(rd16le(data), 0xffff);
    ck_assert(!bus_access(&b, BUS_PIO, 0x3fc, data, 8, false));
    ck_assert_uint_eq(rd64le(data), UINT64_MAX);
    /* straddling the start */
    ck_assert(!bus_access(&b, BUS_PIO, 0x3f7, data, 2, true));
    /* nothing there */
    memset(data, 0, sizeof(data));
    ck_assert(!bus_access(&b, BUS_PIO, 0x80, data, 1, false));
    ck_assert_uint_eq(data[0], 0xff);
    ck_assert_uint_eq(data[1], 0); /* only len bytes are filled */
    ck_assert(!bus_access(&b, BUS_MMIO, 0x3f8, data, 1, false));
    ck_assert_uint_eq(a.calls, 0);
    ck_assert_uint_eq(atomic_load(&b.space[BUS_PIO].unclaimed), 4);
    ck_assert_uint_eq(atomic_load(&b.space[BUS_MMIO].unclaimed), 1);

    /* len 0 and len > 8, even at an owned address */
    memset(data, 0x5a, sizeof(data));
    ck_assert(!bus_access(&b, BUS_PIO, 0x3f8, data, 0, false));
    ck_assert(!bus_access(&b, BUS_PIO, 0x3f8, data, 9, false));
    ck_assert(!bus_access(&b, BUS_PIO, 0x3f8, data, 16, true));
    ck_assert(!bus_access(&b, BUS_PIO, 0x3f8, data, UINT32_MAX, false));
    ck_assert_uint_eq(data[0], 0x5a); /* an invalid length writes nothing */
    ck_assert_uint_eq(data[15], 0x5a);
    ck_assert_uint_eq(a.calls, 0);
    ck_assert_uint_eq(atomic_load(&b.space[BUS_PIO].unclaimed), 8);
}
END_TEST

START_TEST(range_at_top)
{
    struct bus b;
    struct rec a = {0};
    memset(&b, 0, sizeof(b));
    /* the last 16 bytes below 2^64 (the end itself is not representable) */
    ck_assert_int_eq(bus_register(&b, BUS_MMIO, UINT64_MAX - 16, 16, "top", rec_io, &a), 0);
    uint8_t data[8];
    ck_assert(bus_access(&b, BUS_MMIO, UINT64_MAX - 8, data, 8, false));
    ck_assert(!bus_access(&b, BUS_MMIO, UINT64_MAX - 7, data, 8, false));
    ck_assert(!bus_access(&b, BUS_MMIO, UINT64_MAX, data, 1, false));
    ck_assert_uint_eq(a.calls, 1);
}
END_TEST

Suite *bus_suite(void)
{
    Suite *s = suite_create("bus");
    TCase *tc = tcase_create("bus");
    tcase_add_test(tc, register_rejects);
    tcase_add_test(tc, register_full);
    tcase_add_test(tc, dispatch);
    tcase_add_test(tc, unclaimed);
    tcase_add_test(tc, range_at_top);
    suite_add_tcase(s, tc);
    return s;
}

/* boot/memmap.c: the e820-style map both boot protocols hand the kernel. */
#include <string.h>

#include "vmm/memory/layout.h"
#include "boot/memmap.h"
#include "tests/unit/helpers.h"

/* Sorted, non-empty, non-overlapping; RAM entries are RAM; returns the
 * RAM total. */
static uint64_t check_map(const struct gmem *m, const struct memmap_entry *map, unsigned n)
{
    uint64_t ram = 0;
    ck_assert_uint_ge(n, 3);
    ck_assert_uint_le(n, MEMMAP_MAX);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_gt(map[i].size, 0);
        if (i + 1 < n)
            ck_assert_uint_le(map[i].addr + map[i].size, map[i + 1].addr);
        ck_assert(map[i].type == MEMMAP_RAM || map[i].type == MEMMAP_RESERVED);
        if (map[i].type == MEMMAP_RAM) {
            ram += map[i].size;
            ck_assert_ptr_nonnull(gmem_ptr(m, map[i].addr, map[i].size));
        }
    }
    /* base memory, then EBDA..1 MiB reserved (the MP table lives there) */
    ck_assert_uint_eq(map[0].addr, 0);
    ck_assert_uint_eq(map[0].size, LAYOUT_EBDA_START);
    ck_assert_uint_eq(map[0].type, MEMMAP_RAM);
    ck_assert_uint_eq(map[1].addr, LAYOUT_EBDA_START);
    ck_assert_uint_eq(map[1].addr + map[1].size, LAYOUT_HIMEM_START);
    ck_assert_uint_eq(map[1].type, MEMMAP_RESERVED);
    ck_assert_uint_eq(map[2].addr, LAYOUT_HIMEM_START);
    ck_assert_uint_eq(map[2].type, MEMMAP_RAM);
    ck_assert_uint_eq(ram, m->ram_bytes - (LAYOUT_HIMEM_START - LAYOUT_EBDA_START));
    return ram;
}

START_TEST(small)
{
    struct test_mem t;
    struct memmap_entry map[MEMMAP_MAX];
    test_mem_init(&t, MiB(64));
    unsigned n = memmap_build(&t.mem, map);
    ck_assert_uint_eq(n, 3);
    check_map(&t.mem, map, n);
    ck_assert_uint_eq(map[2].addr + map[2].size, MiB(64));
    test_mem_free(&t);
}
END_TEST

START_TEST(exactly_gap)
{
    struct gmem m;
    struct memmap_entry map[MEMMAP_MAX];
    ck_assert_int_eq(gmem_init(&m, LAYOUT_MMIO_GAP_START >> 20), 0);
    unsigned n = memmap_build(&m, map);
    ck_assert_uint_eq(n, 3);
    check_map(&m, map, n);
    ck_assert_uint_eq(map[2].addr + map[2].size, LAYOUT_MMIO_GAP_START);
    gmem_destroy(&m);
}
END_TEST

START_TEST(above_gap)
{
    struct gmem m;
    struct memmap_entry map[MEMMAP_MAX];
    ck_assert_int_eq(gmem_init(&m, 6144), 0);
    unsigned n = memmap_build(&m, map);
    ck_assert_uint_eq(n, 4);
    check_map(&m, map, n);
    ck_assert_uint_eq(map[2].addr + map[2].size, LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq(map[3].addr, LAYOUT_MMIO_GAP_END);
    ck_assert_uint_eq(map[3].size, GiB(6) - LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq(map[3].type, MEMMAP_RAM);
    /* nothing in the MMIO gap is called RAM */
    for (unsigned i = 0; i < n; i++)
        ck_assert(map[i].addr >= LAYOUT_MMIO_GAP_END ||
                  map[i].addr + map[i].size <= LAYOUT_MMIO_GAP_START);
    gmem_destroy(&m);
}
END_TEST

START_TEST(bounded_by_memmap_max)
{
    /* a fake guest with every region slot used still fits in MEMMAP_MAX */
    struct test_mem t;
    struct memmap_entry map[MEMMAP_MAX + 1];
    memset(map, 0xab, sizeof(map));
    test_mem_init(&t, MiB(4));
    for (unsigned i = 1; i < GMEM_MAX_REGIONS; i++)
        ck_assert_int_eq(test_mem_add(&t, GiB(4) + i * MiB(1), 0x1000), 0);
    unsigned n = memmap_build(&t.mem, map);
    ck_assert_uint_eq(n, 3 + GMEM_MAX_REGIONS - 1);
    ck_assert_uint_le(n, MEMMAP_MAX);
    ck_assert_uint_eq(map[MEMMAP_MAX].addr, 0xababababababababULL); /* no write past */
    check_map(&t.mem, map, n);
    test_mem_free(&t);
}
END_TEST

Suite *memmap_suite(void)
{
    Suite *s = suite_create("memmap");
    TCase *tc = tcase_create("memmap");
    tcase_add_test(tc, small);
    tcase_add_test(tc, exactly_gap);
    tcase_add_test(tc, above_gap);
    tcase_add_test(tc, bounded_by_memmap_max);
    suite_add_tcase(s, tc);
    return s;
}

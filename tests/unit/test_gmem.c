/* vmm/memory/gmem: the one checked accessor from guest-physical to host pointers. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/memory/layout.h"
#include "tests/unit/helpers.h"
#include "vmm/memory/gmem.h"

#define RSZ 0x10000ULL

START_TEST(ptr_inside)
{
    struct test_mem t;
    test_mem_init(&t, RSZ);
    uint8_t *base = t.bufs[0];
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0, 1), base);
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0x1234, 16), base + 0x1234);
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0, RSZ), base);           /* the whole region */
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0x100, 0), base + 0x100); /* len 0 inside */
    test_mem_free(&t);
}
END_TEST

START_TEST(ptr_end_boundary)
{
    struct test_mem t;
    test_mem_init(&t, RSZ);
    uint8_t *base = t.bufs[0];
    /* end == size is inside (docs/design.md: `end > size` is the right test) */
    ck_assert_ptr_eq(gmem_ptr(&t.mem, RSZ - 1, 1), base + RSZ - 1);
    ck_assert_ptr_eq(gmem_ptr(&t.mem, RSZ - 8, 8), base + RSZ - 8);
    /* one byte past the end is not */
    ck_assert_ptr_null(gmem_ptr(&t.mem, RSZ - 8, 9));
    ck_assert_ptr_null(gmem_ptr(&t.mem, RSZ, 1));
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0, RSZ + 1));
    /* len 0 exactly at the end: one past the end is outside the region */
    ck_assert_ptr_null(gmem_ptr(&t.mem, RSZ, 0));
    ck_assert_ptr_null(gmem_ptr(&t.mem, RSZ + 1, 0));
    test_mem_free(&t);
}
END_TEST

START_TEST(ptr_overflow)
{
    struct test_mem t;
    test_mem_init(&t, RSZ);
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0x10, UINT64_MAX));
    ck_assert_ptr_null(gmem_ptr(&t.mem, RSZ - 1, UINT64_MAX));
    ck_assert_ptr_null(gmem_ptr(&t.mem, UINT64_MAX, 1));
    ck_assert_ptr_null(gmem_ptr(&t.mem, UINT64_MAX, 2)); /* gpa+len wraps to 1 */
    ck_assert_ptr_null(gmem_ptr(&t.mem, UINT64_MAX - 0xf, 0x20));
    /* A region near the top of the address space: wrap-around stays out. */
    ck_assert_int_eq(test_mem_add(&t, UINT64_MAX - 0xfff, 0x1000), -EOVERFLOW);
    ck_assert_int_eq(test_mem_add(&t, UINT64_MAX - 0x1fff, 0x1000), 0);
    ck_assert_ptr_nonnull(gmem_ptr(&t.mem, UINT64_MAX - 0x1fff, 0x1000));
    ck_assert_ptr_null(gmem_ptr(&t.mem, UINT64_MAX - 0x1fff, 0x1001));
    ck_assert_ptr_null(gmem_ptr(&t.mem, UINT64_MAX - 0x1000, UINT64_MAX));
    test_mem_free(&t);
}
END_TEST

START_TEST(ptr_two_regions)
{
    struct test_mem t;
    test_mem_init(&t, 0x1000);
    ck_assert_int_eq(test_mem_add(&t, 0x1000, 0x1000), 0); /* adjacent */
    ck_assert_int_eq(test_mem_add(&t, 0x4000, 0x1000), 0); /* gap [0x2000,0x4000) */
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0xfff, 1), (uint8_t *)t.bufs[0] + 0xfff);
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0x1000, 1), t.bufs[1]);
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0x1000, 0), t.bufs[1]);
    /* contiguous in guest addresses, but two host buffers: rejected */
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0xfff, 2));
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0, 0x2000));
    /* the gap */
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0x2000, 1));
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0x3fff, 1));
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0x1fff, 0x2002));
    ck_assert_ptr_eq(gmem_ptr(&t.mem, 0x4fff, 1), (uint8_t *)t.bufs[2] + 0xfff);
    ck_assert_ptr_null(gmem_ptr(&t.mem, 0x3fff, 2));
    ck_assert_uint_eq(t.mem.ram_bytes, 0x3000);
    ck_assert_uint_eq(gmem_low_end(&t.mem), 0x1000);
    test_mem_free(&t);
}
END_TEST

START_TEST(add_region_rejects)
{
    struct test_mem t;
    test_mem_init(&t, 0x2000);
    ck_assert_int_eq(test_mem_add(&t, 0x1000, 0x1000), -EEXIST); /* inside */
    ck_assert_int_eq(test_mem_add(&t, 0x1fff, 0x10), -EEXIST);   /* tail overlap */
    ck_assert_int_eq(test_mem_add(&t, 0, 0x2000), -EEXIST);      /* duplicate */
    ck_assert_int_eq(test_mem_add(&t, 0x2000, 0), -EINVAL);      /* empty */
    ck_assert_int_eq(test_mem_add(&t, 0x10000, 0x1000), 0);
    ck_assert_int_eq(test_mem_add(&t, 0xf800, 0x1000), -EEXIST); /* head overlap */
    ck_assert_int_eq(test_mem_add(&t, 0x8000, 0x10000), -EEXIST); /* covers it */
    ck_assert_int_eq(test_mem_add(&t, 0x2000, 0x1000), 0);
    ck_assert_int_eq(test_mem_add(&t, 0x20000, 0x1000), 0);
    ck_assert_uint_eq(t.mem.nregions, GMEM_MAX_REGIONS);
    uint8_t dummy[16];
    ck_assert_int_eq(gmem_add_region(&t.mem, 0x40000, dummy, sizeof(dummy)), -EINVAL);
    ck_assert_uint_eq(t.mem.nregions, GMEM_MAX_REGIONS);
    test_mem_free(&t);
}
END_TEST

START_TEST(read_write)
{
    struct test_mem t;
    test_mem_init(&t, 0x1000);
    ck_assert_int_eq(test_mem_add(&t, 0x1000, 0x1000), 0);
    uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    ck_assert_int_eq(gmem_write(&t.mem, 0xff8, in, 8), 0);
    ck_assert_int_eq(gmem_read(&t.mem, out, 0xff8, 8), 0);
    ck_assert_mem_eq(in, out, 8);
    ck_assert_int_eq(gmem_write(&t.mem, 0xffc, in, 8), -EFAULT); /* spans regions */
    ck_assert_int_eq(gmem_read(&t.mem, out, 0x1ffc, 8), -EFAULT);
    ck_assert_int_eq(gmem_read(&t.mem, out, UINT64_MAX - 3, 8), -EFAULT);
    ck_assert_uint_eq(((uint8_t *)t.bufs[1])[0], 0); /* nothing partially written */
    test_mem_free(&t);
}
END_TEST

START_TEST(init_small)
{
    struct gmem m;
    ck_assert_int_eq(gmem_init(&m, 64), 0);
    ck_assert_uint_eq(m.nregions, 1);
    ck_assert_uint_eq(m.regions[0].gpa, 0);
    ck_assert_uint_eq(m.regions[0].size, MiB(64));
    ck_assert_uint_eq(m.ram_bytes, MiB(64));
    ck_assert_uint_eq(gmem_low_end(&m), MiB(64));
    /* on a huge-page boundary in the host, so KVM can map 2 MiB at once */
    ck_assert_uint_eq((uintptr_t)m.regions[0].host % GMEM_HUGE_PAGE, 0);
    ck_assert_ptr_nonnull(gmem_ptr(&m, MiB(64) - 4, 4));
    ck_assert_ptr_null(gmem_ptr(&m, MiB(64) - 4, 5));
    gmem_destroy(&m);
    ck_assert_uint_eq(m.nregions, 0);
}
END_TEST

/* gmem_map_zero: fresh zeroes over a page-aligned range of one region;
 * the bytes around it stay. */
START_TEST(map_zero)
{
    struct gmem m;
    ck_assert_int_eq(gmem_init(&m, 8), 0);
    uint8_t *p = m.regions[0].host;
    memset(p, 0x5a, MiB(8));
    ck_assert_int_eq(gmem_map_zero(&m, MiB(2), MiB(2)), 0);
    ck_assert_uint_eq(p[MiB(2) - 1], 0x5a);
    ck_assert_uint_eq(p[MiB(2)], 0);
    ck_assert_uint_eq(p[MiB(4) - 1], 0);
    ck_assert_uint_eq(p[MiB(4)], 0x5a);
    ck_assert_int_eq(gmem_map_zero(&m, 0, 0), 0);
    ck_assert_int_eq(gmem_map_zero(&m, 100, 4096), -EINVAL);
    ck_assert_int_eq(gmem_map_zero(&m, 0, 100), -EINVAL);
    ck_assert_int_eq(gmem_map_zero(&m, MiB(8) - 4096, 8192), -EFAULT);
    ck_assert_int_eq(gmem_map_zero(&m, UINT64_MAX - 4095, 4096), -EFAULT);
    ck_assert_uint_eq(p[MiB(8) - 1], 0x5a);
    gmem_destroy(&m);
}
END_TEST

START_TEST(init_exactly_gap)
{
    struct gmem m;
    ck_assert_int_eq(gmem_init(&m, LAYOUT_MMIO_GAP_START >> 20), 0);
    ck_assert_uint_eq(m.nregions, 1);
    ck_assert_uint_eq(gmem_low_end(&m), LAYOUT_MMIO_GAP_START);
    gmem_destroy(&m);
}
END_TEST

START_TEST(init_split_around_gap)
{
    struct gmem m;
    uint64_t mib = 5120; /* 5 GiB: 3 below the gap, 2 above 4 GiB */
    ck_assert_int_eq(gmem_init(&m, mib), 0);
    ck_assert_uint_eq(m.nregions, 2);
    ck_assert_uint_eq(m.regions[0].gpa, 0);
    ck_assert_uint_eq(m.regions[0].size, LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq(m.regions[1].gpa, LAYOUT_MMIO_GAP_END);
    ck_assert_uint_eq(m.regions[1].size, MiB(mib) - LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq(m.ram_bytes, MiB(mib));
    ck_assert_uint_eq(gmem_low_end(&m), LAYOUT_MMIO_GAP_START);
    ck_assert_uint_eq((uintptr_t)m.regions[0].host % GMEM_HUGE_PAGE, 0);
    ck_assert_uint_eq((uintptr_t)m.regions[1].host % GMEM_HUGE_PAGE, 0);
    ck_assert_ptr_nonnull(gmem_ptr(&m, LAYOUT_MMIO_GAP_START - 1, 1));
    ck_assert_ptr_null(gmem_ptr(&m, LAYOUT_MMIO_GAP_START, 1));
    ck_assert_ptr_null(gmem_ptr(&m, LAYOUT_IOAPIC_BASE, 4));
    ck_assert_ptr_null(gmem_ptr(&m, LAYOUT_MMIO_GAP_END - 1, 2));
    ck_assert_ptr_nonnull(gmem_ptr(&m, LAYOUT_MMIO_GAP_END, 1));
    ck_assert_ptr_nonnull(gmem_ptr(&m, GiB(6) - 8, 8));
    ck_assert_ptr_null(gmem_ptr(&m, GiB(6), 1));
    /* the mapping is usable at both ends of the high region */
    uint32_t v = 0xdeadbeef, r = 0;
    ck_assert_int_eq(gmem_write(&m, GiB(6) - 4, &v, 4), 0);
    ck_assert_int_eq(gmem_read(&m, &r, GiB(6) - 4, 4), 0);
    ck_assert_uint_eq(r, v);
    gmem_destroy(&m);
}
END_TEST

START_TEST(init_rejects_sizes)
{
    struct gmem m;
    ck_assert_int_eq(gmem_init(&m, 0), -EINVAL);
    ck_assert_uint_eq(m.nregions, 0);
    ck_assert_int_eq(gmem_init(&m, LAYOUT_MEM_MIN_MIB - 1), -EINVAL);
    ck_assert_int_eq(gmem_init(&m, LAYOUT_MEM_MAX_MIB + 1), -EINVAL);
    ck_assert_int_eq(gmem_init(&m, UINT64_MAX), -EINVAL);
    ck_assert_int_eq(gmem_init(&m, UINT64_MAX >> 20), -EINVAL); /* MiB() would overflow */
    ck_assert_uint_eq(m.nregions, 0);
    ck_assert_int_eq(gmem_init(&m, LAYOUT_MEM_MIN_MIB), 0);
    ck_assert_uint_eq(m.ram_bytes, MiB(LAYOUT_MEM_MIN_MIB));
    gmem_destroy(&m);
}
END_TEST


/* A 5-page scratch file of known bytes, and its mapping (what the loader
 * is given: the data and the fd it came from). */
struct scratch {
    int fd;
    uint8_t *data;
    size_t size;
};

static void scratch_open(struct scratch *f)
{
    char path[] = "/tmp/airlock-gmem-test.XXXXXX";
    f->size = 5 * 4096;
    f->fd = mkstemp(path);
    ck_assert_int_ge(f->fd, 0);
    unlink(path);
    uint8_t *buf = malloc(f->size);
    for (size_t i = 0; i < f->size; i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    ck_assert_int_eq(write(f->fd, buf, f->size), (ssize_t)f->size);
    free(buf);
    f->data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
    ck_assert_ptr_ne(f->data, MAP_FAILED);
}

static void scratch_close(struct scratch *f)
{
    munmap(f->data, f->size);
    close(f->fd);
}

START_TEST(load_file_maps_or_copies)
{
    struct gmem mem;
    ck_assert_int_eq(gmem_init(&mem, LAYOUT_MEM_MIN_MIB), 0);
    struct scratch f;
    scratch_open(&f);
    /* aligned: pages mapped; unaligned starts and odd lengths: the edges
     * copied; fd -1: all copied.  The guest sees the same bytes each way. */
    const struct { uint64_t gpa, off, len; int use_fd; } cases[] = {
        {0x100000, 0, 5 * 4096, 1},     {0x200000, 4096, 3 * 4096 + 17, 1},
        {0x300100, 0x100, 4 * 4096, 1}, {0x400100, 0x200, 4 * 4096, 1},
        {0x500000, 0, 5 * 4096, 0},     {0x600ff0, 0xff0, 0x20, 1},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_eq(gmem_load_file(&mem, cases[i].gpa, f.data + cases[i].off,
                                        cases[i].use_fd ? f.fd : -1, cases[i].off, cases[i].len), 0);
        uint8_t *g = gmem_ptr(&mem, cases[i].gpa, cases[i].len);
        ck_assert_msg(!memcmp(g, f.data + cases[i].off, cases[i].len), "case %u differs", i);
        /* the guest writes: private to it, never the file's */
        memset(g, 0xee, cases[i].len);
    }
    uint8_t b;
    ck_assert_int_eq(pread(f.fd, &b, 1, 4096), 1);
    ck_assert_uint_eq(b, (uint8_t)(4096 * 7 + 3));
    ck_assert_uint_eq(f.data[4096], (uint8_t)(4096 * 7 + 3));
    /* outside guest RAM, or running off its end: refused, nothing mapped */
    ck_assert_int_eq(gmem_load_file(&mem, MiB(LAYOUT_MEM_MIN_MIB) - 4096, f.data, f.fd, 0, 2 * 4096),
                     -EFAULT);
    ck_assert_int_eq(gmem_load_file(&mem, UINT64_MAX - 10, f.data, f.fd, 0, 4096), -EFAULT);
    scratch_close(&f);
    gmem_destroy(&mem);
}
END_TEST

Suite *gmem_suite(void)
{
    Suite *s = suite_create("gmem");
    TCase *tc = tcase_create("gmem");
    tcase_add_test(tc, ptr_inside);
    tcase_add_test(tc, ptr_end_boundary);
    tcase_add_test(tc, ptr_overflow);
    tcase_add_test(tc, ptr_two_regions);
    tcase_add_test(tc, add_region_rejects);
    tcase_add_test(tc, read_write);
    tcase_add_test(tc, load_file_maps_or_copies);
    tcase_add_test(tc, init_small);
    tcase_add_test(tc, init_exactly_gap);
    tcase_add_test(tc, map_zero);
    tcase_add_test(tc, init_split_around_gap);
    tcase_add_test(tc, init_rejects_sizes);
    suite_add_tcase(s, tc);
    return s;
}

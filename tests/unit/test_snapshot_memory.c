/* vmm/snapshot/snapshot_memory: guest RAM to a file and back, plain (holes, mapped
 * back copy-on-write) and zlib; files of the wrong size, truncated,
 * corrupt or too long get a clean error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/helpers.h"
#include "vmm/memory/layout.h"
#include "vmm/snapshot/snapshot_memory.h"

#define LOW  (64u * 4096)  /* region at gpa 0 */
#define HIGH (16u * 4096)  /* region at gpa 1 MiB, after a "gap" */
#define HIGH_GPA 0x100000u

static char err[256];

/* Two page-aligned anonymous regions, as gmem_init makes them around the
 * MMIO gap (gmem_destroy unmaps them). */
static void two_regions(struct gmem *mem, uint64_t high)
{
    memset(mem, 0, sizeof(*mem));
    uint64_t sizes[2] = {LOW, high}, gpas[2] = {0, HIGH_GPA};
    for (int i = 0; i < 2; i++) {
        void *p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert(p != MAP_FAILED);
        ck_assert_int_eq(gmem_add_region(mem, gpas[i], p, sizes[i]), 0);
    }
}

/* Some non-zero pages in both regions, the rest zero; a partly zero page
 * too. */
static void scribble(struct gmem *mem)
{
    uint8_t *lo = mem->regions[0].host, *hi = mem->regions[1].host;
    for (unsigned i = 0; i < 4096; i++) {
        lo[i] = (uint8_t)(i * 7 + 1);            /* page 0 */
        lo[5 * 4096 + i] = (uint8_t)(i ^ 0x5a);  /* page 5 */
        hi[(HIGH - 4096) + i] = (uint8_t)(i + 3); /* the last page */
    }
    lo[20 * 4096 + 100] = 0xee; /* page 20: one byte */
    memset(lo + 30 * 4096, 0xff, 8 * 4096);
}

static void assert_same(const struct gmem *a, const struct gmem *b)
{
    ck_assert_uint_eq(a->nregions, b->nregions);
    for (unsigned i = 0; i < a->nregions; i++) {
        ck_assert_uint_eq(a->regions[i].size, b->regions[i].size);
        ck_assert_msg(!memcmp(a->regions[i].host, b->regions[i].host, a->regions[i].size),
                      "region %u differs", i);
    }
}

static int temp_file(void)
{
    char path[] = "/tmp/airlock-snapmem-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    return fd;
}

static void expect_error(int rc, int want, const char *fragment)
{
    ck_assert_msg(rc == want, "rc %d, want %d (error \"%s\")", rc, want, err);
    ck_assert_msg(strstr(err, fragment), "error \"%s\" lacks \"%s\"", err, fragment);
    ck_assert_msg(!strncmp(err, "memory: ", 8) && !strchr(err, '\n'), "error \"%s\"", err);
}

/* Writes a scribbled two-region RAM to a new temporary file. */
static int written(struct gmem *src, bool zlib)
{
    two_regions(src, HIGH);
    scribble(src);
    int fd = temp_file();
    ck_assert_msg(snap_memory_write(src, fd, zlib, err, sizeof(err)) == 0, "%s", err);
    return fd;
}

START_TEST(plain_round_trip)
{
    struct gmem src, dst;
    int fd = written(&src, false);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, LOW + HIGH);
    /* The regions are concatenated: the high region starts at LOW. */
    uint8_t page[4096];
    ck_assert_int_eq(pread(fd, page, 4096, LOW + HIGH - 4096), 4096);
    ck_assert(!memcmp(page, (uint8_t *)src.regions[1].host + HIGH - 4096, 4096));

    two_regions(&dst, HIGH);
    memset(dst.regions[0].host, 0x77, LOW); /* what was there goes */
    ck_assert_msg(snap_memory_read(&dst, fd, false, err, sizeof(err)) == 0, "%s", err);
    close(fd); /* the mapping keeps the file */
    assert_same(&src, &dst);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* The guest's writes after a restore stay private: the file (and so
 * another VM restored from it) does not see them. */
START_TEST(plain_read_is_copy_on_write)
{
    struct gmem src, dst;
    int fd = written(&src, false);
    two_regions(&dst, HIGH);
    ck_assert_int_eq(snap_memory_read(&dst, fd, false, err, sizeof(err)), 0);
    memset(dst.regions[0].host, 0x42, 4096);
    memset(dst.regions[1].host, 0x43, 4096);
    uint8_t page[4096];
    ck_assert_int_eq(pread(fd, page, 4096, 0), 4096);
    ck_assert(!memcmp(page, src.regions[0].host, 4096));
    ck_assert_int_eq(pread(fd, page, 4096, LOW), 4096);
    ck_assert(!memcmp(page, src.regions[1].host, 4096));
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* Whether the host page at p is mapped from a file (/proc/self/maps: a
 * non-zero inode) rather than anonymous memory. */
static bool file_backed(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    bool found = false, file = false;
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi, inode;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &inode) == 3 &&
            (uintptr_t)p >= lo && (uintptr_t)p < hi) {
            found = true;
            file = inode != 0;
        }
    }
    fclose(f);
    ck_assert_msg(found, "%p is not mapped", p);
    return file;
}

/* A plain file maps back 2 MiB piece by piece: a piece with data from the
 * file, a piece that is all hole as fresh anonymous memory; the bytes are
 * the saved ones either way, whatever the RAM held before. */
START_TEST(plain_read_maps_only_pieces_with_data)
{
    struct gmem src, dst;
    ck_assert_int_eq(gmem_init(&src, 16), 0);
    uint8_t *s = src.regions[0].host;
    s[MiB(2) + 4096] = 1;          /* piece 1 */
    s[MiB(12) - 1] = 2;            /* the last byte of piece 5... */
    memset(s + MiB(12), 3, 4096);  /* ...and the first page of piece 6 */
    int fd = temp_file();
    ck_assert_msg(snap_memory_write(&src, fd, false, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(gmem_init(&dst, 16), 0);
    uint8_t *d = dst.regions[0].host;
    memset(d, 0x77, MiB(16));
    ck_assert_msg(snap_memory_read(&dst, fd, false, err, sizeof(err)) == 0, "%s", err);
    close(fd);
    assert_same(&src, &dst);
    const bool with_data[8] = {false, true, false, false, false, true, true, false};
    for (unsigned i = 0; i < 8; i++)
        ck_assert_msg(file_backed(d + MiB(2) * i) == with_data[i], "piece %u", i);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

START_TEST(zlib_round_trip)
{
    struct gmem src, dst;
    int fd = written(&src, true);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_int_lt(st.st_size, (LOW + HIGH) / 4); /* mostly zero pages */
    two_regions(&dst, HIGH);
    /* Stale bytes in pages the file has as zero must go. */
    memset(dst.regions[0].host + 10 * 4096, 0x77, 4096);
    memset(dst.regions[1].host, 0x77, HIGH);
    ck_assert_msg(snap_memory_read(&dst, fd, true, err, sizeof(err)) == 0, "%s", err);
    assert_same(&src, &dst);
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* An untouched guest costs (almost) nothing on disk. */
START_TEST(plain_zero_pages_are_holes)
{
    struct gmem mem;
    ck_assert_int_eq(gmem_init(&mem, 64), 0);
    int fd = temp_file();
    ck_assert_int_eq(snap_memory_write(&mem, fd, false, err, sizeof(err)), 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, 64ull << 20);
    ck_assert_msg(st.st_blocks * 512 <= 64 * 1024, "%lld bytes allocated",
                  (long long)st.st_blocks * 512);
    close(fd);
    gmem_destroy(&mem);
}
END_TEST

START_TEST(write_refuses_non_empty_file)
{
    struct gmem mem;
    two_regions(&mem, HIGH);
    int fd = temp_file();
    ck_assert_int_eq(write(fd, "x", 1), 1);
    expect_error(snap_memory_write(&mem, fd, false, err, sizeof(err)), -EEXIST,
                 "the output file is not empty (1 bytes)");
    close(fd);
    gmem_destroy(&mem);
}
END_TEST

START_TEST(plain_wrong_size)
{
    struct gmem src, dst;
    int fd = written(&src, false);
    two_regions(&dst, HIGH);
    ck_assert_int_eq(ftruncate(fd, LOW + HIGH - 4096), 0);
    expect_error(snap_memory_read(&dst, fd, false, err, sizeof(err)), -EINVAL,
                 "file is 323584 bytes, guest RAM is 327680");
    ck_assert_int_eq(ftruncate(fd, LOW + HIGH + 1), 0);
    expect_error(snap_memory_read(&dst, fd, false, err, sizeof(err)), -EINVAL,
                 "file is 327681 bytes, guest RAM is 327680");
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* Guest RAM that is not page aligned cannot take a mapping: an error, not
 * a copy behind the caller's back. */
START_TEST(plain_unaligned_ram)
{
    struct gmem src;
    int fd = written(&src, false);
    struct test_mem t;
    test_mem_init(&t, LOW + 1);
    ck_assert_int_eq(ftruncate(fd, LOW + 1), 0);
    expect_error(snap_memory_read(&t.mem, fd, false, err, sizeof(err)), -EINVAL,
                 "cannot map file offset 0 over guest RAM at 0x0");
    test_mem_free(&t);
    close(fd);
    gmem_destroy(&src);
}
END_TEST

/* gmem_map_private's own checks: one region, page-aligned everything. */
START_TEST(map_private_checks)
{
    struct gmem src;
    int fd = written(&src, false);
    struct gmem dst;
    two_regions(&dst, HIGH);
    ck_assert_int_eq(gmem_map_private(&dst, LOW - 4096, 8192, fd, 0), -EFAULT); /* spans the gap */
    ck_assert_int_eq(gmem_map_private(&dst, HIGH_GPA + HIGH, 4096, fd, 0), -EFAULT);
    ck_assert_int_eq(gmem_map_private(&dst, 0, 4096, fd, 100), -EINVAL);
    ck_assert_int_eq(gmem_map_private(&dst, 0, 100, fd, 0), -EINVAL);
    ck_assert_int_eq(gmem_map_private(&dst, 16, 4096, fd, 0), -EINVAL);
    ck_assert_int_eq(gmem_map_private(&dst, HIGH_GPA, 4096, fd, LOW), 0);
    ck_assert(!memcmp(dst.regions[1].host, src.regions[1].host, 4096));
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* Cuts the zlib file to `len` bytes and expects `fragment`. */
static void zlib_cut(unsigned len, const char *fragment)
{
    struct gmem src, dst;
    int fd = written(&src, true);
    ck_assert_int_eq(ftruncate(fd, len), 0);
    two_regions(&dst, HIGH);
    expect_error(snap_memory_read(&dst, fd, true, err, sizeof(err)), -EINVAL, fragment);
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}

START_TEST(zlib_truncated)
{
    struct gmem src;
    int fd = written(&src, true);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    close(fd);
    gmem_destroy(&src);
    unsigned full = (unsigned)st.st_size;
    zlib_cut(0, "zlib stream is truncated (the file ends at 0 bytes)");
    zlib_cut(1, "truncated");
    zlib_cut(full / 2, "truncated");
    zlib_cut(full - 1, "truncated"); /* the adler32 trailer is cut */
}
END_TEST

START_TEST(zlib_corrupt)
{
    struct gmem src, dst;
    int fd = written(&src, true);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    two_regions(&dst, HIGH);
    /* The last byte is adler32's: the data inflates, the check fails. */
    uint8_t b;
    ck_assert_int_eq(pread(fd, &b, 1, st.st_size - 1), 1);
    b ^= 1;
    ck_assert_int_eq(pwrite(fd, &b, 1, st.st_size - 1), 1);
    expect_error(snap_memory_read(&dst, fd, true, err, sizeof(err)), -EINVAL,
                 "corrupt zlib stream");
    /* Not zlib at all. */
    ck_assert_int_eq(pwrite(fd, "PK\3\4", 4, 0), 4);
    expect_error(snap_memory_read(&dst, fd, true, err, sizeof(err)), -EINVAL,
                 "corrupt zlib stream at file offset");
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

/* A stream of another RAM size: shorter or longer, both refused. */
START_TEST(zlib_wrong_length)
{
    struct gmem src, big, small;
    int fd = written(&src, true);
    two_regions(&big, HIGH + 4096);
    expect_error(snap_memory_read(&big, fd, true, err, sizeof(err)), -EINVAL,
                 "zlib stream holds 327680 bytes, guest RAM is 331776");
    two_regions(&small, HIGH - 4096);
    expect_error(snap_memory_read(&small, fd, true, err, sizeof(err)), -EINVAL,
                 "zlib stream is longer than guest RAM (323584 bytes)");
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&big);
    gmem_destroy(&small);
}
END_TEST

START_TEST(zlib_trailing_bytes)
{
    struct gmem src, dst;
    int fd = written(&src, true);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_int_eq(pwrite(fd, "junk", 4, st.st_size), 4);
    two_regions(&dst, HIGH);
    expect_error(snap_memory_read(&dst, fd, true, err, sizeof(err)), -EINVAL,
                 "data after the end of the zlib stream");
    close(fd);
    gmem_destroy(&src);
    gmem_destroy(&dst);
}
END_TEST

Suite *snapshot_memory_suite(void)
{
    Suite *s = suite_create("snapshot_memory");
    TCase *tc = tcase_create("memory");
    tcase_add_test(tc, plain_round_trip);
    tcase_add_test(tc, plain_read_is_copy_on_write);
    tcase_add_test(tc, plain_read_maps_only_pieces_with_data);
    tcase_add_test(tc, zlib_round_trip);
    tcase_add_test(tc, plain_zero_pages_are_holes);
    tcase_add_test(tc, write_refuses_non_empty_file);
    tcase_add_test(tc, plain_wrong_size);
    tcase_add_test(tc, plain_unaligned_ram);
    tcase_add_test(tc, map_private_checks);
    tcase_add_test(tc, zlib_truncated);
    tcase_add_test(tc, zlib_corrupt);
    tcase_add_test(tc, zlib_wrong_length);
    tcase_add_test(tc, zlib_trailing_bytes);
    suite_add_tcase(s, tc);
    return s;
}

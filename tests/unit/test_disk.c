/* devices/disk.c and disk_cow.c: --disk parsing and its error messages,
 * raw I/O with range checks, ro, discard, and the copy-on-write overlay
 * (base never changed, partial clusters, the cap). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/disk.h"
#include "tests/unit/helpers.h"

/* The byte a test image holds at offset i. */
static uint8_t pat(uint64_t i)
{
    return (uint8_t)(i * 7 + (i >> 9) * 13 + 1);
}

/* A temp image of `size` pattern bytes; its path goes to path[PATH_MAX]. */
static void mkimage(char *path, const char *name, uint64_t size)
{
    snprintf(path, PATH_MAX, "/tmp/%sXXXXXX", name);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    uint8_t buf[4096];
    for (uint64_t off = 0; off < size; off += sizeof(buf)) {
        size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = pat(off + i);
        ck_assert_int_eq(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
    }
    close(fd);
}

/* Whether the file still holds exactly the pattern, `size` bytes. */
static bool image_pristine(const char *path, uint64_t size)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    bool ok = (uint64_t)st.st_size == size;
    uint8_t buf[4096];
    for (uint64_t off = 0; ok && off < size; off += sizeof(buf)) {
        size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
        ok = pread(fd, buf, n, (off_t)off) == (ssize_t)n;
        for (size_t i = 0; ok && i < n; i++)
            ok = buf[i] == pat(off + i);
    }
    close(fd);
    return ok;
}

static struct disk *open_ok(const char *spec)
{
    char err[512];
    struct disk *d = NULL;
    int rc = disk_open(spec, &d, err, sizeof(err));
    ck_assert_msg(rc == 0, "disk_open(%s) = %d: %s", spec, rc, err);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* disk_open must fail with rc and an error containing each needle. */
static void open_fails(const char *spec, int rc, const char *needle1, const char *needle2)
{
    char err[512];
    struct disk *d = (struct disk *)1;
    int got = disk_open(spec, &d, err, sizeof(err));
    ck_assert_msg(got == rc, "disk_open(%s) = %d, want %d (%s)", spec, got, rc, err);
    ck_assert_ptr_null(d);
    ck_assert_msg(!strncmp(err, "--disk ", 7), "error \"%s\" does not name --disk", err);
    ck_assert_msg(strchr(err, '\n') == NULL, "error \"%s\" is not one line", err);
    ck_assert_msg(strstr(err, needle1), "error \"%s\" lacks \"%s\"", err, needle1);
    if (needle2)
        ck_assert_msg(strstr(err, needle2), "error \"%s\" lacks \"%s\"", err, needle2);
}

static int rd(struct disk *d, uint64_t off, void *buf, size_t len)
{
    struct iovec v = {buf, len};
    return disk_readv(d, off, &v, 1);
}

static int wr(struct disk *d, uint64_t off, const void *buf, size_t len)
{
    struct iovec v = {(void *)buf, len};
    return disk_writev(d, off, &v, 1);
}

/* The disk's bytes [off, off+len) equal the pattern. */
static bool reads_pattern(struct disk *d, uint64_t off, size_t len)
{
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(rd(d, off, buf, len), 0);
    bool ok = true;
    for (size_t i = 0; ok && i < len; i++)
        ok = buf[i] == pat(off + i);
    free(buf);
    return ok;
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

START_TEST(open_plain)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 1 << 20);
    struct disk *d = open_ok(path);
    ck_assert_uint_eq(disk_sectors(d), 2048);
    ck_assert(!disk_read_only(d));
    ck_assert(!disk_is_cow(d));
    ck_assert(disk_can_discard(d));
    ck_assert_str_eq(disk_path(d), path);
    ck_assert_str_eq(disk_serial(d), strrchr(path, '/') + 1); /* 19 bytes */
    ck_assert_uint_eq(disk_overlay_bytes(d), 0);
    ck_assert_int_eq(disk_flush(d), 0);
    disk_close(d);
    disk_close(NULL);
    unlink(path);
}
END_TEST

START_TEST(serials)
{
    char path[PATH_MAX], spec[PATH_MAX + 64];
    mkimage(path, "airlock-disk-a-long-name-", 4096);
    struct disk *d = open_ok(path);
    ck_assert_uint_eq(strlen(disk_serial(d)), DISK_SERIAL_MAX);
    ck_assert(!strncmp(disk_serial(d), "airlock-disk-a-long-", DISK_SERIAL_MAX));
    disk_close(d);
    snprintf(spec, sizeof(spec), "%s,serial=ABC-123 x", path);
    d = open_ok(spec);
    ck_assert_str_eq(disk_serial(d), "ABC-123 x");
    disk_close(d);
    snprintf(spec, sizeof(spec), "%s,serial=12345678901234567890", path);
    d = open_ok(spec);
    ck_assert_str_eq(disk_serial(d), "12345678901234567890");
    disk_close(d);
    snprintf(spec, sizeof(spec), "%s,serial=123456789012345678901", path);
    open_fails(spec, -EINVAL, "bad serial '123456789012345678901'", "1 to 20");
    snprintf(spec, sizeof(spec), "%s,serial=", path);
    open_fails(spec, -EINVAL, "bad serial ''", NULL);
    snprintf(spec, sizeof(spec), "%s,serial=\ttab", path);
    open_fails(spec, -EINVAL, "bad serial", NULL);
    snprintf(spec, sizeof(spec), "%s,serial=a,serial=b", path);
    open_fails(spec, -EINVAL, "'serial' given twice", NULL);
    unlink(path);
}
END_TEST

START_TEST(open_errors)
{
    open_fails("/nonexistent-airlock/x.img", -ENOENT,
               "--disk /nonexistent-airlock/x.img: No such file or directory", NULL);
    open_fails("/tmp", -EISDIR, "--disk /tmp: is a directory, not a disk image", NULL);
    open_fails("/tmp,ro", -EISDIR, "--disk /tmp: is a directory, not a disk image", NULL);
    open_fails("/tmp,cow", -EISDIR, "is a directory", NULL);
    open_fails("/dev/null,ro", -EINVAL, "--disk /dev/null: not a regular file", NULL);

    char path[PATH_MAX], spec[PATH_MAX + 64];
    mkimage(path, "airlock-disk-", 1000);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want),
             "--disk %s: size 1000 bytes is not a multiple of 512: the last 488 bytes", path);
    open_fails(path, -EINVAL, want, NULL);
    snprintf(spec, sizeof(spec), "%s,cow", path);
    open_fails(spec, -EINVAL, "not a multiple of 512", NULL);
    ck_assert_int_eq(truncate(path, 0), 0);
    open_fails(path, -EINVAL, "file is empty", NULL);
    unlink(path);
}
END_TEST

START_TEST(option_errors)
{
    char path[PATH_MAX], spec[PATH_MAX + 64], want[PATH_MAX + 128];
    mkimage(path, "airlock-disk-", 8192);
    snprintf(spec, sizeof(spec), "%s,bogus", path);
    snprintf(want, sizeof(want),
             "--disk %s,bogus: unknown option 'bogus' (want ro, cow, cow=SIZE, serial=ID)", path);
    open_fails(spec, -EINVAL, want, NULL);
    snprintf(spec, sizeof(spec), "%s,RO", path);
    open_fails(spec, -EINVAL, "unknown option 'RO'", NULL);
    snprintf(spec, sizeof(spec), "%s,ro=1", path);
    open_fails(spec, -EINVAL, "unknown option 'ro=1'", NULL);
    snprintf(spec, sizeof(spec), "%s,,ro", path);
    open_fails(spec, -EINVAL, "empty option", NULL);
    snprintf(spec, sizeof(spec), "%s,", path);
    open_fails(spec, -EINVAL, "empty option", NULL);
    open_fails(",ro", -EINVAL, "--disk ,ro: no file name", NULL);
    open_fails("", -EINVAL, "no file name", NULL);
    snprintf(spec, sizeof(spec), "%s,ro,cow", path);
    open_fails(spec, -EINVAL, "'ro' and 'cow' contradict", NULL);
    snprintf(spec, sizeof(spec), "%s,cow,cow=4K", path);
    open_fails(spec, -EINVAL, "'cow' given twice", NULL);
    static const char *const bad_sizes[] = {
        "", "K", "12Q", "1KK", "-4K", " 4K", "4K ", "0", "4095", "1K", "0x1000",
        "18446744073709551616", "99999999999999999999G", "17179869184G",
    };
    for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
        snprintf(spec, sizeof(spec), "%s,cow=%s", path, bad_sizes[i]);
        snprintf(want, sizeof(want), "bad overlay size '%s'", bad_sizes[i]);
        open_fails(spec, -EINVAL, want, "K, M or G");
    }
    /* a failed open leaves nothing behind: the file is untouched */
    ck_assert(image_pristine(path, 8192));
    unlink(path);
}
END_TEST

START_TEST(good_sizes)
{
    char path[PATH_MAX], spec[PATH_MAX + 64];
    mkimage(path, "airlock-disk-", 8192);
    static const char *const sizes[] = {"4096", "4K", "4k", "1M", "1m", "3G", "16777215G"};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        snprintf(spec, sizeof(spec), "%s,cow=%s", path, sizes[i]);
        struct disk *d = open_ok(spec);
        ck_assert(disk_is_cow(d));
        ck_assert(!disk_read_only(d));
        ck_assert(!disk_can_discard(d));
        disk_close(d);
    }
    snprintf(spec, sizeof(spec), "%s,serial=x,ro", path);
    struct disk *d = open_ok(spec);
    ck_assert(disk_read_only(d));
    ck_assert_str_eq(disk_serial(d), "x");
    disk_close(d);
    unlink(path);
}
END_TEST

START_TEST(fifo_refused)
{
    char path[] = "/tmp/airlock-disk-fifo-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(path));
    char fifo[PATH_MAX], spec[PATH_MAX + 8];
    snprintf(fifo, sizeof(fifo), "%s/f", path);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    snprintf(spec, sizeof(spec), "%s,ro", fifo);
    open_fails(spec, -EINVAL, "not a regular file", NULL); /* and does not hang */
    unlink(fifo);
    rmdir(path);
}
END_TEST

/* A file that cannot be opened for writing: immutable (stops root too);
 * plain fails naming the cure, ro and cow work. */
START_TEST(not_writable)
{
    char path[PATH_MAX], spec[PATH_MAX + 8];
    mkimage(path, "airlock-disk-", 4096);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    int flags = 0;
    bool immutable = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    if (immutable) {
        int f = flags | FS_IMMUTABLE_FL;
        immutable = ioctl(fd, FS_IOC_SETFLAGS, &f) == 0;
    }
    if (!immutable && geteuid() != 0)
        ck_assert_int_eq(chmod(path, 0400), 0);
    if (!immutable && geteuid() == 0) /* root opens a mode-0400 file for writing */
        unit_skip("FS_IMMUTABLE_FL cannot be set on %s and this runs as root: no unwritable file",
                  path);
    if (immutable || geteuid() != 0) {
        open_fails(path, immutable ? -EPERM : -EACCES, "cannot open for writing",
                   "add ,ro or ,cow");
        snprintf(spec, sizeof(spec), "%s,ro", path);
        disk_close(open_ok(spec));
        snprintf(spec, sizeof(spec), "%s,cow", path);
        struct disk *d = open_ok(spec);
        uint8_t buf[512];
        memset(buf, 0x5a, sizeof(buf));
        ck_assert_int_eq(wr(d, 0, buf, sizeof(buf)), 0);
        disk_close(d);
    }
    if (immutable)
        ck_assert_int_eq(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
    close(fd);
    ck_assert(image_pristine(path, 4096));
    unlink(path);
}
END_TEST

START_TEST(raw_io)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 64 * 1024);
    struct disk *d = open_ok(path);
    uint8_t a[512], b[1024], back[1536];
    memset(a, 0x11, sizeof(a));
    memset(b, 0x22, sizeof(b));
    struct iovec v[3] = {{a, sizeof(a)}, {NULL, 0}, {b, sizeof(b)}};
    ck_assert_int_eq(disk_writev(d, 4096, v, 3), 0);
    ck_assert_int_eq(rd(d, 4096, back, sizeof(back)), 0);
    ck_assert(all_bytes(back, 512, 0x11) && all_bytes(back + 512, 1024, 0x22));
    ck_assert(reads_pattern(d, 0, 4096));
    ck_assert(reads_pattern(d, 4096 + 1536, 64 * 1024 - 4096 - 1536));
    /* the bytes are in the file itself */
    int fd = open(path, O_RDONLY);
    ck_assert_int_eq(pread(fd, back, sizeof(back), 4096), (ssize_t)sizeof(back));
    ck_assert(all_bytes(back, 512, 0x11) && all_bytes(back + 512, 1024, 0x22));
    close(fd);
    /* a scattered read */
    uint8_t x[512], y[512];
    struct iovec rv[2] = {{x, sizeof(x)}, {y, sizeof(y)}};
    ck_assert_int_eq(disk_readv(d, 4096 + 512, rv, 2), 0);
    ck_assert(all_bytes(x, 512, 0x22) && all_bytes(y, 512, 0x22));
    /* the last sector, and nothing */
    ck_assert(reads_pattern(d, 64 * 1024 - 512, 512));
    ck_assert_int_eq(disk_readv(d, 64 * 1024, NULL, 0), 0);
    ck_assert_int_eq(disk_flush(d), 0);
    disk_close(d);
    unlink(path);
}
END_TEST

START_TEST(range_checks)
{
    char path[PATH_MAX], spec[PATH_MAX + 8];
    mkimage(path, "airlock-disk-", 8192);
    for (int cow = 0; cow < 2; cow++) {
        snprintf(spec, sizeof(spec), "%s%s", path, cow ? ",cow" : "");
        struct disk *d = open_ok(spec);
        uint8_t buf[1024] = {0};
        ck_assert_int_eq(rd(d, 100, buf, 512), -EINVAL);
        ck_assert_int_eq(wr(d, 100, buf, 512), -EINVAL);
        ck_assert_int_eq(rd(d, 0, buf, 100), -EINVAL);
        ck_assert_int_eq(wr(d, 0, buf, 513), -EINVAL);
        ck_assert_int_eq(rd(d, 8192, buf, 512), -EINVAL);
        ck_assert_int_eq(wr(d, 7680, buf, 1024), -EINVAL);
        ck_assert_int_eq(rd(d, UINT64_MAX - 511, buf, 512), -EINVAL);
        ck_assert_int_eq(wr(d, UINT64_MAX & ~511ULL, buf, 1024), -EINVAL);
        ck_assert_int_eq(rd(d, 7680, buf, 512), 0);
        struct iovec huge[2] = {{buf, SIZE_MAX}, {buf, 2}};
        ck_assert_int_eq(disk_readv(d, 0, huge, 2), -EINVAL);
        ck_assert_int_eq(disk_readv(d, 0, huge, -1), -EINVAL);
        ck_assert_int_eq(disk_readv(d, 0, NULL, 1), -EINVAL);
        ck_assert_int_eq(disk_writev(d, 0, huge, IOV_MAX + 1), -EINVAL);
        ck_assert_int_eq(disk_discard(d, 0, 512, false), cow ? -EOPNOTSUPP : 0);
        if (!cow) {
            ck_assert_int_eq(disk_discard(d, 512, 100, true), -EINVAL);
            ck_assert_int_eq(disk_discard(d, 8192, 512, true), -EINVAL);
            ck_assert_int_eq(disk_discard(d, UINT64_MAX & ~511ULL, 1024, true), -EINVAL);
        }
        disk_close(d);
    }
    unlink(path);
}
END_TEST

START_TEST(read_only)
{
    char path[PATH_MAX], spec[PATH_MAX + 8];
    mkimage(path, "airlock-disk-", 8192);
    snprintf(spec, sizeof(spec), "%s,ro", path);
    struct disk *d = open_ok(spec);
    ck_assert(disk_read_only(d));
    ck_assert(!disk_can_discard(d));
    uint8_t buf[512];
    memset(buf, 0xee, sizeof(buf));
    ck_assert_int_eq(wr(d, 0, buf, sizeof(buf)), -EROFS);
    ck_assert_int_eq(disk_discard(d, 0, 512, false), -EROFS);
    ck_assert_int_eq(disk_discard(d, 0, 512, true), -EROFS);
    ck_assert_int_eq(disk_flush(d), 0);
    ck_assert(reads_pattern(d, 0, 8192));
    disk_close(d);
    ck_assert(image_pristine(path, 8192));
    unlink(path);
}
END_TEST

START_TEST(discard_and_zero)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 64 * 1024);
    struct disk *d = open_ok(path);
    uint8_t buf[8192];
    ck_assert_int_eq(disk_discard(d, 8192, 8192, true), 0);
    ck_assert_int_eq(rd(d, 8192, buf, sizeof(buf)), 0);
    ck_assert(all_bytes(buf, sizeof(buf), 0));
    ck_assert(reads_pattern(d, 0, 8192));
    ck_assert(reads_pattern(d, 16384, 64 * 1024 - 16384));
    /* a discard may or may not zero, but must not touch its neighbours */
    ck_assert_int_eq(disk_discard(d, 32768, 4096, false), 0);
    ck_assert(reads_pattern(d, 16384, 32768 - 16384));
    ck_assert(reads_pattern(d, 32768 + 4096, 64 * 1024 - 32768 - 4096));
    ck_assert_int_eq(disk_discard(d, 0, 0, true), 0);
    ck_assert_int_eq(rd(d, 64 * 1024 - 512, buf, 512), 0); /* size unchanged */
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 64 * 1024);
    disk_close(d);
    unlink(path);
}
END_TEST

START_TEST(same_file)
{
    char p1[PATH_MAX], p2[PATH_MAX], s[PATH_MAX + 16], link[PATH_MAX + 8];
    mkimage(p1, "airlock-disk-", 4096);
    mkimage(p2, "airlock-disk-", 4096);
    snprintf(link, sizeof(link), "%s.ln", p1);
    ck_assert_int_eq(symlink(p1, link), 0);
    struct disk *rw1 = open_ok(p1), *rw2 = open_ok(link), *other = open_ok(p2);
    snprintf(s, sizeof(s), "%s,ro", p1);
    struct disk *ro1 = open_ok(s), *ro2 = open_ok(s);
    snprintf(s, sizeof(s), "%s,cow", p1);
    struct disk *cow1 = open_ok(s);
    ck_assert(disk_same_file(rw1, rw2));  /* same inode through a symlink */
    ck_assert(disk_same_file(rw1, ro1));
    ck_assert(disk_same_file(cow1, rw1));
    ck_assert(!disk_same_file(ro1, ro2));
    ck_assert(!disk_same_file(ro1, cow1));
    ck_assert(!disk_same_file(rw1, other));
    ck_assert(!disk_same_file(other, ro1));
    disk_close(rw1);
    disk_close(rw2);
    disk_close(other);
    disk_close(ro1);
    disk_close(ro2);
    disk_close(cow1);
    unlink(link);
    unlink(p1);
    unlink(p2);
}
END_TEST

/* The file shrinking under an open disk is an I/O error, not a short read
 * passed off as data. */
START_TEST(file_shrinks)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 8192);
    struct disk *d = open_ok(path);
    ck_assert_int_eq(truncate(path, 4096), 0);
    uint8_t buf[1024];
    ck_assert_int_eq(rd(d, 3584, buf, sizeof(buf)), -EIO);
    ck_assert_int_eq(rd(d, 0, buf, 512), 0);
    disk_close(d);
    unlink(path);
}
END_TEST


/* ---- copy-on-write overlay ---------------------------------------------- */

#define CL DISK_COW_CLUSTER

static struct disk *open_cow(const char *path, const char *cap)
{
    char spec[PATH_MAX + 32];
    snprintf(spec, sizeof(spec), "%s,cow%s%s", path, cap ? "=" : "", cap ? cap : "");
    return open_ok(spec);
}

START_TEST(cow_writes_stay_private)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 64 * 1024);
    struct disk *d = open_cow(path, NULL);
    uint8_t buf[CL], back[CL];
    memset(buf, 0x77, sizeof(buf));
    ck_assert_int_eq(wr(d, 2 * CL, buf, CL), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), CL);
    ck_assert_int_eq(rd(d, 2 * CL, back, CL), 0);
    ck_assert(all_bytes(back, CL, 0x77));
    ck_assert(reads_pattern(d, 0, 2 * CL));
    ck_assert(reads_pattern(d, 3 * CL, 64 * 1024 - 3 * CL));
    /* a read across base, overlay, base in one vector */
    static uint8_t span[3 * CL];
    ck_assert_int_eq(rd(d, CL, span, sizeof(span)), 0);
    for (size_t i = 0; i < CL; i++) {
        ck_assert_uint_eq(span[i], pat(CL + i));
        ck_assert_uint_eq(span[CL + i], 0x77);
        ck_assert_uint_eq(span[2 * CL + i], pat(3 * CL + i));
    }
    ck_assert_int_eq(disk_flush(d), 0);
    ck_assert(image_pristine(path, 64 * 1024));
    disk_close(d);
    ck_assert(image_pristine(path, 64 * 1024));
    /* a new cow disk starts from the base again: the overlay is gone */
    d = open_cow(path, NULL);
    ck_assert(reads_pattern(d, 0, 64 * 1024));
    disk_close(d);
    unlink(path);
}
END_TEST

START_TEST(cow_partial_clusters)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 64 * 1024);
    struct disk *d = open_cow(path, NULL);
    uint8_t buf[5120];
    memset(buf, 0x31, 512);
    /* 512 bytes in the middle of cluster 1: its other 3.5 KiB come along */
    ck_assert_int_eq(wr(d, CL + 1024, buf, 512), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), CL);
    ck_assert(reads_pattern(d, 0, CL + 1024));
    ck_assert(reads_pattern(d, CL + 1536, 64 * 1024 - CL - 1536));
    /* a second write into the same, now held, cluster */
    memset(buf, 0x32, 512);
    ck_assert_int_eq(wr(d, CL, buf, 512), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), CL);
    /* 5 KiB from the last 512 bytes of cluster 3: partial head, whole
     * cluster 4, partial tail in cluster 5 */
    memset(buf, 0x33, sizeof(buf));
    ck_assert_int_eq(wr(d, 4 * CL - 512, buf, sizeof(buf)), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), 4 * CL);
    uint8_t back[8 * CL];
    ck_assert_int_eq(rd(d, 0, back, sizeof(back)), 0);
    for (uint64_t i = 0; i < sizeof(back); i++) {
        uint8_t want = pat(i);
        if (i >= CL && i < CL + 512)
            want = 0x32;
        else if (i >= CL + 1024 && i < CL + 1536)
            want = 0x31;
        else if (i >= 4 * CL - 512 && i < 4 * CL - 512 + sizeof(buf))
            want = 0x33;
        ck_assert_msg(back[i] == want, "byte %llu: %#x, want %#x", (unsigned long long)i,
                      back[i], want);
    }
    disk_close(d);
    ck_assert(image_pristine(path, 64 * 1024));
    unlink(path);
}
END_TEST

/* A scratch file for a saved overlay. */
static int scratch(void)
{
    char path[] = "/tmp/airlock-cow-snap.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    return fd;
}

START_TEST(cow_snapshot_round_trip)
{
    char path[PATH_MAX], err[200];
    mkimage(path, "airlock-disk-", 100 * CL + 512); /* a partial last cluster */
    struct disk *d = open_cow(path, NULL);
    uint8_t buf[CL];
    memset(buf, 0x5a, sizeof(buf));
    ck_assert_int_eq(wr(d, 3 * CL, buf, CL), 0);
    ck_assert_int_eq(wr(d, 99 * CL + 7 * 512, buf, 512), 0);
    memset(buf, 0, sizeof(buf)); /* a held cluster of zeros is still held */
    ck_assert_int_eq(wr(d, 64 * CL, buf, CL), 0);
    int fd = scratch();
    ck_assert_int_eq(disk_snapshot_save(d, fd), 0);
    disk_close(d);
    /* into a fresh overlay: the same disk the saved one showed */
    struct disk *r = open_cow(path, NULL);
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), 0);
    ck_assert_uint_eq(disk_overlay_bytes(r), 3 * CL);
    uint8_t back[CL];
    ck_assert_int_eq(rd(r, 3 * CL, back, CL), 0);
    ck_assert(all_bytes(back, CL, 0x5a));
    ck_assert_int_eq(rd(r, 64 * CL, back, CL), 0);
    ck_assert(all_bytes(back, CL, 0));
    ck_assert(reads_pattern(r, 0, 3 * CL));
    ck_assert(reads_pattern(r, 65 * CL, 34 * CL));
    ck_assert(image_pristine(path, 100 * CL + 512));
    disk_close(r);
    /* hostile files: each refused with a reason, none half-loaded past the check */
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_int_eq(ftruncate(fd, st.st_size - 1), 0); /* data cut short */
    r = open_cow(path, NULL);
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "ends early"));
    disk_close(r);
    ck_assert_int_eq(ftruncate(fd, st.st_size + 1), 0); /* one byte too many */
    r = open_cow(path, NULL);
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "more data"));
    disk_close(r);
    ck_assert_int_eq(ftruncate(fd, 5), 0); /* bitmap cut short */
    r = open_cow(path, NULL);
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "bitmap"));
    disk_close(r);
    /* a bit past the disk's 101 clusters (word 1, bit 37) */
    uint8_t words[16] = {0};
    words[8 + 37 / 8] = (uint8_t)(1u << (37 % 8));
    ck_assert_int_eq(ftruncate(fd, 0), 0);
    ck_assert_int_eq(pwrite(fd, words, sizeof(words), 0), (ssize_t)sizeof(words));
    r = open_cow(path, NULL);
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "beyond the end"));
    disk_close(r);
    /* more clusters than the new overlay's cap */
    memset(words, 0xff, 8);
    memset(words + 8, 0, 8);
    ck_assert_int_eq(pwrite(fd, words, sizeof(words), 0), (ssize_t)sizeof(words));
    r = open_cow(path, "8K");
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "cap"));
    ck_assert_uint_eq(disk_overlay_bytes(r), 0);
    disk_close(r);
    /* a disk that is not cow has no overlay to load or save */
    r = open_ok(path);
    ck_assert_int_eq(disk_snapshot_save(r, fd), -EINVAL);
    ck_assert_int_eq(disk_snapshot_load(r, fd, err, sizeof(err)), -EINVAL);
    disk_close(r);
    close(fd);
    unlink(path);
}
END_TEST

START_TEST(cow_cap)
{
    char path[PATH_MAX];
    mkimage(path, "airlock-disk-", 64 * 1024);
    struct disk *d = open_cow(path, "8K");
    uint8_t buf[3 * CL];
    memset(buf, 0x44, sizeof(buf));
    ck_assert_int_eq(wr(d, 0, buf, 512), 0);
    ck_assert_int_eq(wr(d, 5 * CL, buf, CL), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), 2 * CL);
    /* a third cluster is over the cap */
    ck_assert_int_eq(wr(d, 2 * CL, buf, 512), -ENOSPC);
    /* a write over a held and an unheld cluster fails whole: the held one
     * keeps its bytes */
    memset(buf, 0x55, sizeof(buf));
    ck_assert_int_eq(wr(d, 4 * CL, buf, 2 * CL), -ENOSPC);
    uint8_t back[CL];
    ck_assert_int_eq(rd(d, 5 * CL, back, CL), 0);
    ck_assert(all_bytes(back, CL, 0x44));
    ck_assert(reads_pattern(d, 4 * CL, CL));
    ck_assert(reads_pattern(d, 2 * CL, CL));
    /* rewriting held clusters needs no room */
    ck_assert_int_eq(wr(d, 0, buf, CL), 0);
    ck_assert_int_eq(wr(d, 5 * CL, buf, 512), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), 2 * CL);
    ck_assert_int_eq(disk_flush(d), 0);
    disk_close(d);
    /* the cap is rounded down to whole clusters */
    d = open_cow(path, "8191");
    ck_assert_int_eq(wr(d, 0, buf, CL), 0);
    ck_assert_int_eq(wr(d, CL, buf, 512), -ENOSPC);
    disk_close(d);
    ck_assert(image_pristine(path, 64 * 1024));
    unlink(path);
}
END_TEST

/* Default cap: the whole disk, even when its last cluster is short. */
START_TEST(cow_default_cap_whole_disk)
{
    char path[PATH_MAX];
    uint64_t size = 3 * CL + 1536;
    mkimage(path, "airlock-disk-", size);
    struct disk *d = open_cow(path, NULL);
    uint8_t *buf = malloc(size);
    memset(buf, 0x66, size);
    ck_assert_int_eq(wr(d, 0, buf, (size_t)size), 0);
    ck_assert_uint_eq(disk_overlay_bytes(d), 4 * CL);
    memset(buf, 0, size);
    ck_assert_int_eq(rd(d, 0, buf, (size_t)size), 0);
    ck_assert(all_bytes(buf, (size_t)size, 0x66));
    disk_close(d);
    /* a partial write into the short last cluster copies only what exists */
    d = open_cow(path, NULL);
    ck_assert_int_eq(wr(d, size - 512, buf, 512), 0);
    ck_assert(reads_pattern(d, 0, (size_t)(size - 512)));
    disk_close(d);
    free(buf);
    ck_assert(image_pristine(path, size));
    unlink(path);
}
END_TEST

/* The overlay lives in $TMPDIR and is never visible there; a $TMPDIR that
 * does not exist is an error naming it. */
START_TEST(cow_tmpdir)
{
    char path[PATH_MAX], dir[] = "/tmp/airlock-disk-tmpdir-XXXXXX";
    mkimage(path, "airlock-disk-", 8192);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", dir, 1);
    struct disk *d = open_cow(path, NULL);
    uint8_t buf[512] = {1};
    ck_assert_int_eq(wr(d, 0, buf, sizeof(buf)), 0);
    ck_assert_int_eq(rmdir(dir), 0); /* empty: the overlay has no name */
    disk_close(d);
    char spec[PATH_MAX + 8];
    snprintf(spec, sizeof(spec), "%s,cow", path);
    open_fails(spec, -ENOENT, "cannot create the copy-on-write overlay in /tmp/airlock-disk-tmpdir-",
               "No such file or directory");
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    unlink(path);
}
END_TEST

/* Seeded random writes and reads against a model of the disk. */
START_TEST(cow_random_against_model)
{
    char path[PATH_MAX];
    const uint64_t size = 16 * CL + 2048;
    mkimage(path, "airlock-disk-", size);
    struct disk *d = open_cow(path, NULL);
    uint8_t *model = malloc(size), *buf = malloc(size), *back = malloc(size);
    for (uint64_t i = 0; i < size; i++)
        model[i] = pat(i);
    uint32_t seed = 12345;
    for (int iter = 0; iter < 400; iter++) {
        seed = seed * 1103515245 + 12345;
        uint64_t sectors = size / 512;
        uint64_t s = (seed >> 8) % sectors;
        seed = seed * 1103515245 + 12345;
        uint64_t n = 1 + (seed >> 8) % (sectors - s < 24 ? sectors - s : 24);
        uint64_t off = s * 512, len = n * 512;
        /* two iovecs split at a random sector, to exercise slicing */
        seed = seed * 1103515245 + 12345;
        uint64_t cut = ((seed >> 8) % (n + 1)) * 512;
        if (iter % 3) {
            for (uint64_t i = 0; i < len; i++)
                buf[i] = (uint8_t)(iter + i);
            memcpy(model + off, buf, len);
            struct iovec v[2] = {{buf, cut}, {buf + cut, len - cut}};
            ck_assert_int_eq(disk_writev(d, off, v, 2), 0);
        } else {
            struct iovec v[2] = {{back, cut}, {back + cut, len - cut}};
            ck_assert_int_eq(disk_readv(d, off, v, 2), 0);
            ck_assert_int_eq(memcmp(back, model + off, len), 0);
        }
    }
    ck_assert_int_eq(rd(d, 0, back, (size_t)size), 0);
    ck_assert_int_eq(memcmp(back, model, size), 0);
    ck_assert_uint_le(disk_overlay_bytes(d), 17 * CL);
    disk_close(d);
    ck_assert(image_pristine(path, size));
    free(model);
    free(buf);
    free(back);
    unlink(path);
}
END_TEST

Suite *disk_suite(void)
{
    Suite *s = suite_create("disk");
    TCase *tc = tcase_create("raw");
    tcase_add_test(tc, open_plain);
    tcase_add_test(tc, serials);
    tcase_add_test(tc, open_errors);
    tcase_add_test(tc, option_errors);
    tcase_add_test(tc, good_sizes);
    tcase_add_test(tc, fifo_refused);
    tcase_add_test(tc, not_writable);
    tcase_add_test(tc, raw_io);
    tcase_add_test(tc, range_checks);
    tcase_add_test(tc, read_only);
    tcase_add_test(tc, discard_and_zero);
    tcase_add_test(tc, same_file);
    tcase_add_test(tc, file_shrinks);
    suite_add_tcase(s, tc);
    tc = tcase_create("cow");
    tcase_add_test(tc, cow_writes_stay_private);
    tcase_add_test(tc, cow_partial_clusters);
    tcase_add_test(tc, cow_cap);
    tcase_add_test(tc, cow_snapshot_round_trip);
    tcase_add_test(tc, cow_default_cap_whole_disk);
    tcase_add_test(tc, cow_tmpdir);
    tcase_add_test(tc, cow_random_against_model);
    suite_add_tcase(s, tc);
    return s;
}

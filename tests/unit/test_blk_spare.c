/* Spare virtio-blk slots (devices/virtio/blk.c's virtio_blk_create_spare
 * and virtio_blk_swap) and container disks from passed fds
 * (devices/disk.c's disk_open_fds), driven as a guest and the control
 * thread drive them: a device with no disk, a fill (capacity, serial,
 * ConfigGeneration, the configuration-change interrupt), writes that reach
 * the overlay and never the base, an empty (capacity 0, IOERR), and the
 * hostile parameters a fill can be given. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/disk.h"
#include "devices/virtio/blk.h"
#include "tests/unit/helpers.h"
#include "tests/unit/ring.h"

#define MEM_SIZE  (4u << 20)
#define RING_BASE 0x1000
#define ST_UNSET  0xee
#define IMG_SIZE  (64u * 1024)

struct spare_env {
    struct test_mem tm;
    struct test_ring r;
    struct virtio_mmio t;
    struct virtio_blk *b;
    unsigned irqs;
    char base[PATH_MAX], ovl[PATH_MAX];
};

static uint8_t pat(uint64_t i)
{
    return (uint8_t)(i * 5 + (i >> 9) * 11 + 3);
}

/* A pattern image of `size` bytes; its path in path. */
static void mkimage(char *path, uint64_t size)
{
    snprintf(path, PATH_MAX, "/tmp/airlock-spare-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    uint8_t *img = malloc(size ? size : 1);
    for (uint64_t i = 0; i < size; i++)
        img[i] = pat(i);
    ck_assert_int_eq(pwrite(fd, img, size, 0), (ssize_t)size);
    free(img);
    close(fd);
}

static bool base_pristine(const char *path, uint64_t size)
{
    int fd = open(path, O_RDONLY);
    uint8_t *p = malloc(size);
    bool ok = fd >= 0 && pread(fd, p, size, 0) == (ssize_t)size;
    for (uint64_t i = 0; ok && i < size; i++)
        ok = p[i] == pat(i);
    free(p);
    close(fd);
    return ok;
}

static void env_init(struct spare_env *e)
{
    memset(e, 0, sizeof(*e));
    ck_assert_int_eq(virtio_blk_create_spare("spare1", &e->b), 0);
    test_mem_init(&e->tm, MEM_SIZE);
    ring_init(&e->r, &e->tm.mem, RING_BASE, VIRTIO_BLK_QUEUE_MAX);
    virtio_mmio_init(&e->t, &virtio_blk_ops, e->b, &ring_counting_host, &e->irqs, &e->tm.mem);
    mmio_bring_up(&e->t, mmio_device_features(&e->t), &e->r, 1);
    mkimage(e->base, IMG_SIZE);
    snprintf(e->ovl, sizeof(e->ovl), "/tmp/airlock-spare-ovl-XXXXXX");
    int fd = mkstemp(e->ovl);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void env_free(struct spare_env *e)
{
    struct disk *old;
    ck_assert_int_eq(virtio_blk_swap(&e->t, NULL, &old), 0);
    disk_close(old);
    virtio_blk_destroy(e->b);
    pthread_mutex_destroy(&e->t.lock);
    test_mem_free(&e->tm);
    unlink(e->base);
    unlink(e->ovl);
}

/* The disk a DISK-FILL would make: the base read-only, the overlay
 * read-write.  The fds are the disk's on success, closed here otherwise. */
static int open_fill(struct spare_env *e, const char *serial, uint64_t cap, struct disk **d,
                     char *err, size_t errlen)
{
    int b = open(e->base, O_RDONLY | O_CLOEXEC), o = open(e->ovl, O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(b, 0);
    ck_assert_int_ge(o, 0);
    int rc = disk_open_fds(b, o, cap, serial, d, err, errlen);
    if (rc) {
        close(b);
        close(o);
    }
    return rc;
}

/* open_fill that must succeed. */
static struct disk *fill_ok(struct spare_env *e, const char *serial)
{
    char err[256];
    struct disk *d;
    ck_assert_msg(open_fill(e, serial, 0, &d, err, sizeof(err)) == 0, "%s", err);
    return d;
}

static uint64_t capacity(struct spare_env *e)
{
    return mmio_rd_n(&e->t, MMIO_CONFIG, 8);
}

/* One request with one data buffer (writable for IN / GET_ID). */
static uint8_t rq(struct spare_env *e, uint32_t type, uint64_t sector, uint64_t data,
                  uint32_t len)
{
    bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
    uint64_t h = ring_alloc(&e->r, 16), st = ring_alloc(&e->r, 1);
    uint8_t hdr[16] = {0};
    wr32(hdr, 0, type);
    wr64(hdr, 8, sector);
    ring_write(&e->r, h, hdr, 16);
    *(uint8_t *)test_mem_at(&e->tm, st, 1) = ST_UNSET;
    struct ring_buf b[3] = {{h, 16, false}, {data, len, in}, {st, 1, true}};
    unsigned n = 3;
    if (!len) {
        b[1] = b[2];
        n = 2;
    }
    uint16_t before = ring_used_idx(&e->r);
    ring_publish(&e->r, ring_chain(&e->r, b, n));
    virtio_mmio_process(&e->t, 0);
    ck_assert_uint_eq(ring_used_idx(&e->r), (uint16_t)(before + 1));
    ck_assert(!(mmio_rd(&e->t, MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET));
    return *(uint8_t *)test_mem_at(&e->tm, st, 1);
}

static uint64_t buf(struct spare_env *e, uint32_t len, uint8_t v)
{
    uint64_t g = ring_alloc(&e->r, len);
    memset(test_mem_at(&e->tm, g, len), v, len);
    return g;
}

static void assert_serial(struct spare_env *e, const char *want)
{
    uint64_t id = buf(e, 20, 0xcc);
    ck_assert_uint_eq(rq(e, VIRTIO_BLK_T_GET_ID, 0, id, 20), VIRTIO_BLK_S_OK);
    char w[20] = {0};
    memcpy(w, want, strlen(want));
    ck_assert_int_eq(memcmp(test_mem_at(&e->tm, id, 20), w, 20), 0);
}

START_TEST(empty_spare)
{
    struct spare_env e;
    env_init(&e);
    ck_assert(virtio_blk_is_spare(e.b));
    ck_assert_ptr_null(virtio_blk_disk(e.b));
    uint64_t f = mmio_device_features(&e.t);
    ck_assert(!(f & VIRTIO_BIT(VIRTIO_BLK_F_RO)));
    ck_assert(!(f & VIRTIO_BIT(VIRTIO_BLK_F_DISCARD)));
    ck_assert(!(f & VIRTIO_BIT(VIRTIO_BLK_F_WRITE_ZEROES)));
    ck_assert_uint_eq(capacity(&e), 0);
    assert_serial(&e, "spare1");
    uint64_t d = buf(&e, 512, 0x5a);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, d, 512), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 0, d, 512), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, UINT64_MAX, d, 512), VIRTIO_BLK_S_IOERR);
    /* DISCARD was not offered: UNSUPP, whatever the segment says */
    uint64_t seg = buf(&e, 16, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_DISCARD, 0, seg, 16), VIRTIO_BLK_S_UNSUPP);
    /* emptying an empty spare changes nothing and raises nothing */
    unsigned gen = mmio_rd(&e.t, MMIO_CONFIG_GENERATION), irqs = e.irqs;
    struct disk *old = (struct disk *)1;
    ck_assert_int_eq(virtio_blk_swap(&e.t, NULL, &old), 0);
    ck_assert_ptr_null(old);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_CONFIG_GENERATION), gen);
    ck_assert_uint_eq(e.irqs, irqs);
    env_free(&e);
}
END_TEST

START_TEST(fill_then_empty)
{
    struct spare_env e;
    env_init(&e);
    struct disk *d = fill_ok(&e, "ctr one"), *old;
    ck_assert(disk_is_cow(d) && !disk_read_only(d) && !disk_can_discard(d));
    ck_assert_uint_eq(disk_overlay_cap(d), IMG_SIZE);
    uint32_t gen = mmio_rd(&e.t, MMIO_CONFIG_GENERATION);
    unsigned irqs = e.irqs;
    ck_assert_int_eq(virtio_blk_swap(&e.t, d, &old), 0);
    ck_assert_ptr_null(old);
    ck_assert_ptr_eq(virtio_blk_disk(e.b), d);
    /* the driver learns of it: bit 1, an interrupt, a new generation */
    ck_assert_uint_eq(e.irqs, irqs + 1);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
                      VIRTIO_MMIO_INT_CONFIG);
    ck_assert_uint_ne(mmio_rd(&e.t, MMIO_CONFIG_GENERATION), gen);
    mmio_wr(&e.t, MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_INTERRUPT_STATUS), 0);
    ck_assert_uint_eq(capacity(&e), IMG_SIZE / 512);
    assert_serial(&e, "ctr one");
    /* reads see the base; a write lands in the overlay only */
    uint64_t g = buf(&e, 4096, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 4096), VIRTIO_BLK_S_OK);
    const uint8_t *p = test_mem_at(&e.tm, g, 4096);
    for (unsigned i = 0; i < 4096; i++)
        ck_assert_uint_eq(p[i], pat(4096 + i));
    uint64_t w = buf(&e, 1024, 0x77);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 9, w, 1024), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
    g = buf(&e, 2048, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 2048), VIRTIO_BLK_S_OK);
    p = test_mem_at(&e.tm, g, 2048);
    for (unsigned i = 0; i < 2048; i++)
        ck_assert_uint_eq(p[i], i >= 512 && i < 1536 ? 0x77 : pat(4096 + i));
    ck_assert(base_pristine(e.base, IMG_SIZE));
    struct stat st;
    ck_assert_int_eq(stat(e.ovl, &st), 0);
    ck_assert_int_ge(st.st_size, 8192); /* the held cluster, at its disk offset */
    /* a second fill of a full slot is refused and changes nothing */
    close(open(e.ovl, O_RDWR | O_TRUNC));
    struct disk *d2 = fill_ok(&e, "other");
    ck_assert_int_eq(virtio_blk_swap(&e.t, d2, &old), -EBUSY);
    disk_close(d2);
    ck_assert_ptr_eq(virtio_blk_disk(e.b), d);
    /* empty: capacity 0, the interrupt again, requests fail */
    irqs = e.irqs;
    gen = mmio_rd(&e.t, MMIO_CONFIG_GENERATION);
    ck_assert_int_eq(virtio_blk_swap(&e.t, NULL, &old), 0);
    ck_assert_ptr_eq(old, d);
    disk_close(old);
    ck_assert_uint_eq(e.irqs, irqs + 1);
    ck_assert_uint_ne(mmio_rd(&e.t, MMIO_CONFIG_GENERATION), gen);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
                      VIRTIO_MMIO_INT_CONFIG);
    ck_assert_uint_eq(capacity(&e), 0);
    assert_serial(&e, "spare1");
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 2048), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 9, w, 1024), VIRTIO_BLK_S_IOERR);
    ck_assert(base_pristine(e.base, IMG_SIZE));
    env_free(&e);
}
END_TEST

/* A request the guest queued before the empty and the device serves after
 * it: IOERR, and nothing of the closed disk touched (ASan would see it). */
START_TEST(queued_request_after_empty)
{
    struct spare_env e;
    env_init(&e);
    struct disk *old;
    ck_assert_int_eq(virtio_blk_swap(&e.t, fill_ok(&e, "q"), &old), 0);
    uint64_t h = ring_alloc(&e.r, 16), st = buf(&e, 1, ST_UNSET), g = buf(&e, 512, 0);
    uint8_t hdr[16] = {0};
    wr32(hdr, 0, VIRTIO_BLK_T_IN);
    ring_write(&e.r, h, hdr, 16);
    struct ring_buf b[3] = {{h, 16, false}, {g, 512, true}, {st, 1, true}};
    ring_publish(&e.r, ring_chain(&e.r, b, 3)); /* kicked, not yet served */
    ck_assert_int_eq(virtio_blk_swap(&e.t, NULL, &old), 0);
    disk_close(old);
    virtio_mmio_process(&e.t, 0);
    ck_assert_uint_eq(*(uint8_t *)test_mem_at(&e.tm, st, 1), VIRTIO_BLK_S_IOERR);
    env_free(&e);
}
END_TEST

/* Before the driver started the device there is no handler for the line:
 * the generation moves, the interrupt waits for nothing. */
START_TEST(fill_before_driver)
{
    struct spare_env e;
    env_init(&e);
    mmio_wr(&e.t, MMIO_STATUS, 0); /* reset */
    unsigned irqs = e.irqs;
    struct disk *old;
    ck_assert_int_eq(virtio_blk_swap(&e.t, fill_ok(&e, "early"), &old), 0);
    ck_assert_uint_eq(e.irqs, irqs);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_INTERRUPT_STATUS), 0);
    ck_assert_uint_eq(capacity(&e), IMG_SIZE / 512);
    env_free(&e);
}
END_TEST

START_TEST(swap_refuses)
{
    struct spare_env e;
    env_init(&e);
    char err[256];
    struct disk *old, *rw;
    /* a device that is not a spare */
    char spec[PATH_MAX + 8];
    snprintf(spec, sizeof(spec), "%s", e.base);
    ck_assert_msg(disk_open(spec, &rw, err, sizeof(err)) == 0, "%s", err);
    struct virtio_blk *plain;
    struct virtio_mmio t;
    ck_assert_int_eq(virtio_blk_create(rw, &plain), 0);
    virtio_mmio_init(&t, &virtio_blk_ops, plain, &ring_counting_host, &e.irqs, &e.tm.mem);
    ck_assert_int_eq(virtio_blk_swap(&t, NULL, &old), -EPERM);
    ck_assert_uint_eq(mmio_rd_n(&t, MMIO_CONFIG, 8), IMG_SIZE / 512);
    /* a raw writable disk into a spare: DISCARD was never offered */
    ck_assert_int_eq(virtio_blk_swap(&e.t, rw, &old), -EINVAL);
    ck_assert_ptr_null(virtio_blk_disk(e.b));
    virtio_blk_destroy(plain);
    pthread_mutex_destroy(&t.lock);
    disk_close(rw);
    /* serials a spare cannot answer with */
    struct virtio_blk *b;
    ck_assert_int_eq(virtio_blk_create_spare("", &b), -EINVAL);
    ck_assert_int_eq(virtio_blk_create_spare("123456789012345678901", &b), -EINVAL);
    env_free(&e);
}
END_TEST

/* Each bad input names itself and leaves both fds the caller's. */
static void expect_refused(int base, int ovl, uint64_t cap, const char *serial, const char *msg)
{
    struct disk *d = (struct disk *)1;
    char err[256] = "";
    bool base_open = fcntl(base, F_GETFD) >= 0, ovl_open = fcntl(ovl, F_GETFD) >= 0;
    ck_assert_int_ne(disk_open_fds(base, ovl, cap, serial, &d, err, sizeof(err)), 0);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, msg), "got '%s', want '%s'", err, msg);
    ck_assert(!base_open || fcntl(base, F_GETFD) >= 0);
    ck_assert(!ovl_open || fcntl(ovl, F_GETFD) >= 0);
}

START_TEST(hostile_fill_parameters)
{
    char base[PATH_MAX], odd[PATH_MAX], ovl[PATH_MAX], full[PATH_MAX];
    mkimage(base, 8192);
    mkimage(odd, 1000);
    mkimage(full, 4096);
    snprintf(ovl, sizeof(ovl), "/tmp/airlock-spare-ovl-XXXXXX");
    close(mkstemp(ovl));
    int b = open(base, O_RDONLY), o = open(ovl, O_RDWR);
    int b_rw = open(base, O_RDWR), o_ro = open(ovl, O_RDONLY), o_app = open(ovl, O_RDWR | O_APPEND);
    int oddfd = open(odd, O_RDONLY), fullfd = open(full, O_RDWR), dir = open("/tmp", O_RDONLY);
    int same = open(base, O_RDWR);
    char empty_path[PATH_MAX];
    snprintf(empty_path, sizeof(empty_path), "/tmp/airlock-spare-empty-XXXXXX");
    close(mkstemp(empty_path));
    int emptyfd = open(empty_path, O_RDONLY);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    expect_refused(-1, o, 0, "s", "base: not an open file");
    expect_refused(9999, o, 0, "s", "base: not an open file");
    expect_refused(b, -1, 0, "s", "overlay: not an open file");
    expect_refused(dir, o, 0, "s", "base: not a regular file");
    expect_refused(p[0], o, 0, "s", "base: not a regular file");
    expect_refused(b, p[1], 0, "s", "overlay: not a regular file");
    expect_refused(b_rw, o, 0, "s", "base: must be opened read-only");
    int b_path = open(base, O_PATH);
    expect_refused(b_path, o, 0, "s", "base: must be opened read-only");
    close(b_path);
    expect_refused(b, o_ro, 0, "s", "overlay: must be opened read-write");
    expect_refused(b, o_app, 0, "s", "not O_APPEND");
    expect_refused(emptyfd, o, 0, "s", "base: size 0 bytes");
    expect_refused(oddfd, o, 0, "s", "base: size 1000 bytes");
    expect_refused(b, fullfd, 0, "s", "overlay: not empty");
    /* the base itself as the overlay: never empty, so never written */
    expect_refused(b, same, 0, "s", "overlay: not empty");
    expect_refused(b, o, 1, "s", "cow cap 1");
    expect_refused(b, o, 4095, "s", "cow cap 4095");
    expect_refused(b, o, 0, "", "serial");
    expect_refused(b, o, 0, NULL, "serial");
    expect_refused(b, o, 0, "123456789012345678901", "serial");
    expect_refused(b, o, 0, "tab\there", "serial");
    expect_refused(b, o, 0, "\x7f", "serial");
    /* a small cap holds: one cluster, then ENOSPC */
    struct disk *d;
    char err[256];
    ck_assert_int_eq(disk_open_fds(b, o, 4096, "capped", &d, err, sizeof(err)), 0);
    ck_assert_uint_eq(disk_overlay_cap(d), 4096);
    uint8_t blk[4096];
    memset(blk, 1, sizeof(blk));
    struct iovec v = {blk, sizeof(blk)};
    ck_assert_int_eq(disk_writev(d, 0, &v, 1), 0);
    ck_assert_int_eq(disk_writev(d, 4096, &v, 1), -ENOSPC);
    ck_assert_str_eq(disk_serial(d), "capped");
    disk_close(d); /* b and o with it */
    ck_assert(base_pristine(base, 8192));
    ck_assert_int_lt(fcntl(b, F_GETFD), 0);
    close(b_rw), close(o_ro), close(o_app), close(oddfd), close(fullfd), close(dir), close(same);
    close(emptyfd), close(p[0]), close(p[1]);
    unlink(base), unlink(odd), unlink(ovl), unlink(full), unlink(empty_path);
}
END_TEST

Suite *blk_spare_suite(void)
{
    Suite *s = suite_create("blk_spare");
    TCase *tc = tcase_create("spare");
    tcase_add_test(tc, empty_spare);
    tcase_add_test(tc, fill_then_empty);
    tcase_add_test(tc, queued_request_after_empty);
    tcase_add_test(tc, fill_before_driver);
    tcase_add_test(tc, swap_refuses);
    tcase_add_test(tc, hostile_fill_parameters);
    suite_add_tcase(s, tc);
    return s;
}

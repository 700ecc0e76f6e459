/* devices/virtio/blk.c driven the way a guest drives it: real split rings
 * in fake guest memory, the device brought up through the virtio-mmio
 * registers, requests served through virtio_mmio_process.  Well-formed
 * requests, and hostile ones (bad framing, lengths, ranges, directions,
 * segment counts), each checked for its status byte, used length, and the
 * disk file's bytes. */
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

#define MEM_SIZE  (8u << 20)
#define RING_BASE 0x1000
#define ST_UNSET  0xee /* a status byte the device has not written */

struct blk_env {
    struct test_mem tm;
    struct test_ring r;
    struct virtio_mmio t;
    struct disk *d;
    struct virtio_blk *b;
    char path[PATH_MAX];
    uint64_t size;
    unsigned irqs;
};

static uint8_t pat(uint64_t i)
{
    return (uint8_t)(i * 7 + (i >> 9) * 13 + 1);
}

static void host_interrupt(void *opaque)
{
    ((struct blk_env *)opaque)->irqs++;
}

/* QueueNotify arrives with the transport lock held; the tests call
 * virtio_mmio_process themselves, as the event loop would. */
static void host_kick(void *opaque, unsigned q)
{
    (void)opaque;
    (void)q;
}

static const struct virtio_host_ops host_ops = {.interrupt = host_interrupt, .kick = host_kick};

/* A device over a fresh pattern image of `size` bytes opened with `opts`
 * (e.g. ",ro"), queue 0 of 256 entries, brought up with every feature. */
static void env_init(struct blk_env *e, uint64_t size, const char *opts)
{
    memset(e, 0, sizeof(*e));
    e->size = size;
    snprintf(e->path, sizeof(e->path), "/tmp/airlock-blk-XXXXXX");
    int fd = mkstemp(e->path);
    ck_assert_int_ge(fd, 0);
    uint8_t *img = malloc(size);
    for (uint64_t i = 0; i < size; i++)
        img[i] = pat(i);
    ck_assert_int_eq(pwrite(fd, img, size, 0), (ssize_t)size);
    free(img);
    close(fd);
    char spec[PATH_MAX + 64], err[256];
    snprintf(spec, sizeof(spec), "%s%s", e->path, opts);
    ck_assert_msg(disk_open(spec, &e->d, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(virtio_blk_create(e->d, &e->b), 0);
    test_mem_init(&e->tm, MEM_SIZE);
    ring_init(&e->r, &e->tm.mem, RING_BASE, VIRTIO_BLK_QUEUE_MAX);
    virtio_mmio_init(&e->t, &virtio_blk_ops, e->b, &host_ops, e, &e->tm.mem);
    mmio_bring_up(&e->t, mmio_device_features(&e->t), &e->r, 1);
}

static void env_free(struct blk_env *e)
{
    virtio_blk_destroy(e->b);
    disk_close(e->d);
    pthread_mutex_destroy(&e->t.lock);
    test_mem_free(&e->tm);
    unlink(e->path);
}

static bool needs_reset(struct blk_env *e)
{
    return mmio_rd(&e->t, MMIO_STATUS) & VIRTIO_STATUS_DEVICE_NEEDS_RESET;
}

/* A 16-byte request header in guest memory, in a buffer of `len` bytes
 * (len > 16: data may follow it in the same buffer). */
static uint64_t hdr(struct blk_env *e, uint32_t type, uint64_t sector, uint32_t len)
{
    uint64_t g = ring_alloc(&e->r, len);
    uint8_t h[16];
    wr32(h, 0, type);
    wr32(h, 4, 0);
    wr64(h, 8, sector);
    ring_write(&e->r, g, h, sizeof(h));
    return g;
}

/* `len` bytes of guest memory filled with `v`. */
static uint64_t buf(struct blk_env *e, uint32_t len, uint8_t v)
{
    uint64_t g = ring_alloc(&e->r, len ? len : 1);
    memset(test_mem_at(&e->tm, g, len), v, len);
    return g;
}

static uint8_t peek(struct blk_env *e, uint64_t gpa)
{
    return *(uint8_t *)test_mem_at(&e->tm, gpa, 1);
}

/* Publishes one chain, lets the device serve it, and returns its used
 * element; the device must have used exactly it and stayed healthy. */
static struct ring_used serve(struct blk_env *e, const struct ring_buf *bufs, unsigned n)
{
    uint16_t before = ring_used_idx(&e->r);
    uint16_t head = ring_chain(&e->r, bufs, n);
    ring_publish(&e->r, head);
    virtio_mmio_process(&e->t, 0);
    ck_assert_uint_eq(ring_used_idx(&e->r), (uint16_t)(before + 1));
    ck_assert(!needs_reset(e));
    struct ring_used u = ring_used_elem(&e->r, before);
    ck_assert_uint_eq(u.id, head);
    return u;
}

/* A request with one data buffer (writable for IN / GET_ID, readable
 * otherwise) of `len` bytes at `data`; returns the status, *used the used
 * length. */
static uint8_t rq(struct blk_env *e, uint32_t type, uint64_t sector, uint64_t data, uint32_t len,
                  uint32_t *used)
{
    bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
    uint64_t st = buf(e, 1, ST_UNSET);
    struct ring_buf b[3] = {{hdr(e, type, sector, 16), 16, false}, {data, len, in}, {st, 1, true}};
    if (len) {
        *used = serve(e, b, 3).len;
    } else {
        b[1] = b[2];
        *used = serve(e, b, 2).len;
    }
    return peek(e, st);
}

/* Whether guest bytes [gpa, gpa+len) equal the image's [off, off+len). */
static bool guest_has_pattern(struct blk_env *e, uint64_t gpa, uint64_t off, uint64_t len)
{
    const uint8_t *p = test_mem_at(&e->tm, gpa, len);
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != pat(off + i))
            return false;
    return true;
}

/* Whether the file's bytes [off, off+len) all equal v (v < 0: the
 * original pattern). */
static bool file_has(struct blk_env *e, uint64_t off, uint64_t len, int v)
{
    int fd = open(e->path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    uint8_t *p = malloc(len);
    ck_assert_int_eq(pread(fd, p, len, (off_t)off), (ssize_t)len);
    close(fd);
    bool ok = true;
    for (uint64_t i = 0; ok && i < len; i++)
        ok = p[i] == (v < 0 ? pat(off + i) : (uint8_t)v);
    free(p);
    return ok;
}

static bool file_pristine(struct blk_env *e)
{
    return file_has(e, 0, e->size, -1);
}

START_TEST(identity_and_features)
{
    static const char *const opts[] = {"", ",ro", ",cow"};
    for (int i = 0; i < 3; i++) {
        struct blk_env e;
        env_init(&e, 64 * 1024, opts[i]);
        ck_assert_uint_eq(mmio_rd(&e.t, MMIO_DEVICE_ID), VIRTIO_ID_BLOCK);
        ck_assert_uint_eq(mmio_rd(&e.t, MMIO_QUEUE_NUM_MAX), VIRTIO_BLK_QUEUE_MAX);
        mmio_wr(&e.t, MMIO_QUEUE_SEL, 1);
        ck_assert_uint_eq(mmio_rd(&e.t, MMIO_QUEUE_NUM_MAX), 0); /* one queue */
        uint64_t f = mmio_device_features(&e.t);
        uint64_t always = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
                          VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) |
                          VIRTIO_BIT(VIRTIO_BLK_F_FLUSH) | VIRTIO_BIT(VIRTIO_BLK_F_TOPOLOGY);
        uint64_t dz = VIRTIO_BIT(VIRTIO_BLK_F_DISCARD) | VIRTIO_BIT(VIRTIO_BLK_F_WRITE_ZEROES);
        uint64_t want = always | (i == 0 ? dz : 0) | (i == 1 ? VIRTIO_BIT(VIRTIO_BLK_F_RO) : 0);
        ck_assert_uint_eq(f, want);
        env_free(&e);
    }
}
END_TEST

START_TEST(config_space)
{
    struct blk_env e;
    env_init(&e, 3u << 20, "");
    uint8_t want[256] = {0};
    wr64(want, 0, (3u << 20) / 512);
    wr32(want, 8, VIRTIO_BLK_SIZE_MAX);
    wr32(want, 12, VIRTIO_BLK_QUEUE_MAX - 2);
    wr32(want, 20, 512);
    wr32(want, 28, VIRTIO_BLK_OPT_IO_BYTES / 512); /* topology: opt_io_size only */
    wr16(want, 34, 1);
    wr32(want, 36, VIRTIO_BLK_MAX_DISCARD_SECTORS);
    wr32(want, 40, 1);
    wr32(want, 44, VIRTIO_BLK_DISCARD_ALIGNMENT);
    wr32(want, 48, VIRTIO_BLK_MAX_WRITE_ZEROES_SECTORS);
    wr32(want, 52, 1);
    static const unsigned widths[] = {1, 2, 4, 8};
    for (unsigned off = 0; off < 0x100; off++) {
        for (unsigned w = 0; w < 4; w++) {
            unsigned n = widths[w];
            if (off + n > 0x100)
                continue;
            uint64_t exp = 0;
            memcpy(&exp, want + off, n);
            ck_assert_msg(mmio_rd_n(&e.t, MMIO_CONFIG + off, n) == exp, "config %#x width %u",
                          off, n);
        }
    }
    /* straight to the op: offsets past the struct, or near 2^64 */
    uint8_t out[8];
    memset(out, 0xaa, sizeof(out));
    virtio_blk_ops.config_read(e.b, UINT64_MAX - 3, out, sizeof(out));
    ck_assert_uint_eq(rd64le(out), 0);
    memset(out, 0xaa, sizeof(out));
    virtio_blk_ops.config_read(e.b, VIRTIO_BLK_CONFIG_BYTES - 4, out, sizeof(out));
    ck_assert_uint_eq(rd64le(out), 0);
    memset(out, 0xaa, sizeof(out));
    virtio_blk_ops.config_read(e.b, 36, out, sizeof(out));
    ck_assert_uint_eq(rd32le(out), VIRTIO_BLK_MAX_DISCARD_SECTORS);
    env_free(&e);
    /* ro and cow disks show no discard limits */
    env_init(&e, 8192, ",cow");
    for (unsigned off = 36; off < VIRTIO_BLK_CONFIG_BYTES; off += 4)
        ck_assert_uint_eq(mmio_rd(&e.t, MMIO_CONFIG + off), 0);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_CONFIG), 16);
    env_free(&e);
}
END_TEST

START_TEST(read_request)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint64_t d1 = buf(&e, 512, 0), d2 = buf(&e, 1024, 0), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_IN, 3, 16), 16, false},
                           {d1, 512, true}, {d2, 1024, true}, {st, 1, true}};
    unsigned irqs = e.irqs;
    struct ring_used u = serve(&e, b, 4);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(u.len, 1536 + 1);
    ck_assert(guest_has_pattern(&e, d1, 3 * 512, 512));
    ck_assert(guest_has_pattern(&e, d2, 4 * 512, 1024));
    ck_assert_uint_eq(e.irqs, irqs + 1);
    ck_assert_uint_eq(mmio_rd(&e.t, MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING,
                      VIRTIO_MMIO_INT_VRING);
    /* the last sector of the disk */
    uint32_t used;
    uint64_t d3 = buf(&e, 512, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 127, d3, 512, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, d3, 127 * 512, 512));
    env_free(&e);
}
END_TEST

/* Framing is the driver's choice (§2.7.4): a header split over two
 * buffers, data and status in one. */
START_TEST(read_shared_buffers)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint64_t h = hdr(&e, VIRTIO_BLK_T_IN, 9, 16);
    uint64_t ds = buf(&e, 1025, ST_UNSET);
    struct ring_buf b[] = {{h, 10, false}, {h + 10, 6, false}, {ds, 1025, true}};
    struct ring_used u = serve(&e, b, 3);
    ck_assert_uint_eq(u.len, 1025);
    ck_assert_uint_eq(peek(&e, ds + 1024), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, ds, 9 * 512, 1024));
    env_free(&e);
}
END_TEST

START_TEST(write_request)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    /* header and the first 512 data bytes in one buffer, 1024 more apart */
    uint64_t hd = hdr(&e, VIRTIO_BLK_T_OUT, 20, 16 + 512);
    memset(test_mem_at(&e.tm, hd + 16, 512), 0x5a, 512);
    uint64_t d2 = buf(&e, 1024, 0xa5), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hd, 16 + 512, false}, {d2, 1024, false}, {st, 1, true}};
    struct ring_used u = serve(&e, b, 3);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(u.len, 1);
    ck_assert(file_has(&e, 20 * 512, 512, 0x5a));
    ck_assert(file_has(&e, 21 * 512, 1024, 0xa5));
    ck_assert(file_has(&e, 0, 20 * 512, -1));
    ck_assert(file_has(&e, 23 * 512, e.size - 23 * 512, -1));
    env_free(&e);
}
END_TEST

START_TEST(flush_request)
{
    struct blk_env e;
    env_init(&e, 8192, "");
    uint32_t used;
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 1);
    /* the sector field is unused for a flush */
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, UINT64_MAX, 0, 0, &used), VIRTIO_BLK_S_OK);
    /* a flush carries no data either way */
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, buf(&e, 512, 0), 512, &used),
                      VIRTIO_BLK_S_IOERR);
    uint64_t w = buf(&e, 512, 0x11), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_FLUSH, 0, 16), 16, false}, {w, 512, true},
                           {st, 1, true}};
    ck_assert_uint_eq(serve(&e, b, 3).len, 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    env_free(&e);
}
END_TEST

START_TEST(get_id_request)
{
    struct blk_env e;
    env_init(&e, 8192, ",serial=SN-0042");
    uint32_t used;
    uint64_t id = buf(&e, 20, 0xcc);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_GET_ID, 0, id, 20, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 21);
    char want[20] = "SN-0042";
    ck_assert_int_eq(memcmp(test_mem_at(&e.tm, id, 20), want, 20), 0);
    /* a short buffer gets the first bytes; a long one 20 and no more */
    id = buf(&e, 4, 0xcc);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_GET_ID, 0, id, 4, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 5);
    ck_assert_int_eq(memcmp(test_mem_at(&e.tm, id, 4), "SN-0", 4), 0);
    id = buf(&e, 32, 0xcc);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_GET_ID, 0, id, 32, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 21);
    ck_assert_int_eq(memcmp(test_mem_at(&e.tm, id, 20), want, 20), 0);
    ck_assert_uint_eq(peek(&e, id + 20), 0xcc);
    /* GET_ID with no room, or with readable data */
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_GET_ID, 0, 0, 0, &used), VIRTIO_BLK_S_IOERR);
    uint64_t r = buf(&e, 20, 0xcc), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_GET_ID, 0, 16), 16, false}, {r, 20, false},
                           {st, 1, true}};
    ck_assert_uint_eq(serve(&e, b, 3).len, 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(peek(&e, r), 0xcc);
    env_free(&e);
    /* the default serial: the file name, cut to 20 bytes */
    env_init(&e, 8192, "");
    id = buf(&e, 20, 0xcc);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_GET_ID, 0, id, 20, &used), VIRTIO_BLK_S_OK);
    char name[21] = {0};
    strncpy(name, strrchr(e.path, '/') + 1, 20);
    ck_assert_int_eq(memcmp(test_mem_at(&e.tm, id, 20), name, 20), 0);
    env_free(&e);
}
END_TEST

START_TEST(read_only_refuses_writes)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, ",ro");
    uint32_t used;
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 0, buf(&e, 4096, 0xee), 4096, &used),
                      VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(used, 1);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_WRITE_ZEROES, 0, buf(&e, 16, 0), 16, &used),
                      VIRTIO_BLK_S_UNSUPP);
    ck_assert(file_pristine(&e));
    uint64_t d = buf(&e, 4096, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, d, 4096, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, d, 0, 4096));
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &used), VIRTIO_BLK_S_OK);
    env_free(&e);
}
END_TEST

START_TEST(past_capacity)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, ""); /* 128 sectors */
    uint32_t used;
    uint64_t d = buf(&e, 1024, 0x77);
    static const uint64_t sectors[] = {128, 129, 1ULL << 55, 1ULL << 63, UINT64_MAX,
                                       UINT64_MAX - 1};
    for (size_t i = 0; i < sizeof(sectors) / sizeof(sectors[0]); i++) {
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, sectors[i], d, 512, &used),
                          VIRTIO_BLK_S_IOERR);
        ck_assert_uint_eq(used, 1);
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, sectors[i], d, 512, &used),
                          VIRTIO_BLK_S_IOERR);
    }
    /* starts inside, ends outside */
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 127, d, 1024, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 127, d, 1024, &used), VIRTIO_BLK_S_IOERR);
    ck_assert(file_pristine(&e));
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 127, d, 512, &used), VIRTIO_BLK_S_OK);
    ck_assert(file_has(&e, 127 * 512, 512, 0x77));
    env_free(&e);
}
END_TEST

START_TEST(bad_lengths)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint32_t used;
    uint64_t d = buf(&e, 1024, 0x42);
    static const uint32_t lens[] = {0, 1, 100, 511, 513, 1023};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        memset(test_mem_at(&e.tm, d, 1024), 0x42, 1024);
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, d, lens[i], &used), VIRTIO_BLK_S_IOERR);
        ck_assert_uint_eq(used, 1);
        ck_assert_uint_eq(peek(&e, d), 0x42); /* nothing read into it */
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 0, d, lens[i], &used), VIRTIO_BLK_S_IOERR);
    }
    ck_assert(file_pristine(&e));
    env_free(&e);
}
END_TEST

/* A chain with no writable byte has nowhere for a status: it is returned
 * with length 0, nothing done, and the queue keeps working. */
START_TEST(no_status_byte)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint64_t d = buf(&e, 512, 0x99);
    struct ring_buf w[] = {{hdr(&e, VIRTIO_BLK_T_OUT, 0, 16), 16, false}, {d, 512, false}};
    ck_assert_uint_eq(serve(&e, w, 2).len, 0);
    /* the "status" in a readable descriptor */
    uint64_t st = buf(&e, 1, ST_UNSET);
    struct ring_buf f[] = {{hdr(&e, VIRTIO_BLK_T_FLUSH, 0, 16), 16, false}, {st, 1, false}};
    ck_assert_uint_eq(serve(&e, f, 2).len, 0);
    ck_assert_uint_eq(peek(&e, st), ST_UNSET);
    struct ring_buf r[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false}, {d, 512, false},
                           {st, 1, false}};
    ck_assert_uint_eq(serve(&e, r, 3).len, 0);
    ck_assert_uint_eq(peek(&e, st), ST_UNSET);
    ck_assert_uint_eq(peek(&e, d), 0x99);
    /* a header alone, and a lone zero-length buffer */
    struct ring_buf h[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false}};
    ck_assert_uint_eq(serve(&e, h, 1).len, 0);
    struct ring_buf z[] = {{d, 0, true}};
    ck_assert_uint_eq(serve(&e, z, 1).len, 0);
    ck_assert(file_pristine(&e));
    uint32_t used;
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, d, 512, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, d, 0, 512));
    env_free(&e);
}
END_TEST

/* A readable status after writable data breaks the ring's own rule
 * (§2.7.4.2): the queue, not the device, refuses it, with NEEDS_RESET. */
START_TEST(readable_after_writable)
{
    struct blk_env e;
    env_init(&e, 8192, "");
    uint64_t d = buf(&e, 512, 0x13), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false}, {d, 512, true},
                           {st, 1, false}};
    ring_publish(&e.r, ring_chain(&e.r, b, 3));
    virtio_mmio_process(&e.t, 0);
    ck_assert(needs_reset(&e));
    ck_assert_uint_eq(ring_used_idx(&e.r), 0);
    ck_assert_uint_eq(peek(&e, d), 0x13);
    ck_assert_uint_eq(peek(&e, st), ST_UNSET);
    env_free(&e);
}
END_TEST

START_TEST(short_header)
{
    struct blk_env e;
    env_init(&e, 8192, "");
    static const uint32_t lens[] = {0, 1, 8, 15};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        uint64_t st = buf(&e, 1, ST_UNSET);
        struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_FLUSH, 0, 16), lens[i], false},
                               {st, 1, true}};
        ck_assert_uint_eq(serve(&e, b, 2).len, 1);
        ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    }
    /* only a status byte */
    uint64_t st = buf(&e, 1, ST_UNSET);
    struct ring_buf s[] = {{st, 1, true}};
    ck_assert_uint_eq(serve(&e, s, 1).len, 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    /* a header split 8 + 8 is fine */
    uint64_t h = hdr(&e, VIRTIO_BLK_T_FLUSH, 0, 16);
    st = buf(&e, 1, ST_UNSET);
    struct ring_buf ok[] = {{h, 8, false}, {h + 8, 8, false}, {st, 1, true}};
    serve(&e, ok, 3);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    env_free(&e);
}
END_TEST

/* Data only in the direction the type moves it. */
START_TEST(direction_mismatch)
{
    struct blk_env e;
    env_init(&e, 8192, "");
    uint64_t r = buf(&e, 512, 0x21), w = buf(&e, 512, 0x12), st = buf(&e, 1, ST_UNSET);
    struct ring_buf in[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false}, {r, 512, false},
                            {w, 512, true}, {st, 1, true}};
    ck_assert_uint_eq(serve(&e, in, 4).len, 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(peek(&e, w), 0x12);
    st = buf(&e, 1, ST_UNSET);
    struct ring_buf out[] = {{hdr(&e, VIRTIO_BLK_T_OUT, 0, 16), 16, false}, {r, 512, false},
                             {w, 512, true}, {st, 1, true}};
    ck_assert_uint_eq(serve(&e, out, 4).len, 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(peek(&e, w), 0x12);
    /* IN whose only data is readable; OUT whose only data is writable */
    st = buf(&e, 1, ST_UNSET);
    struct ring_buf in2[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false}, {r, 512, false},
                             {st, 1, true}};
    serve(&e, in2, 3);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    st = buf(&e, 1, ST_UNSET);
    struct ring_buf out2[] = {{hdr(&e, VIRTIO_BLK_T_OUT, 0, 16), 16, false}, {w, 512, true},
                              {st, 1, true}};
    serve(&e, out2, 3);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(peek(&e, w), 0x12);
    ck_assert(file_pristine(&e));
    env_free(&e);
}
END_TEST

/* seg_max data segments work, one more does not; so for size_max. */
START_TEST(segment_limits)
{
    struct blk_env e;
    env_init(&e, 4u << 20, "");
    static struct ring_buf b[VIRTIO_BLK_QUEUE_MAX];
    uint64_t data = buf(&e, VIRTIO_BLK_SEG_MAX * 512 + 1, 0);
    b[0] = (struct ring_buf){hdr(&e, VIRTIO_BLK_T_IN, 1, 16), 16, false};
    for (unsigned i = 0; i < VIRTIO_BLK_SEG_MAX; i++)
        b[1 + i] = (struct ring_buf){data + i * 512, 512, true};
    uint64_t st = buf(&e, 1, ST_UNSET);
    b[VIRTIO_BLK_SEG_MAX + 1] = (struct ring_buf){st, 1, true};
    ck_assert_uint_eq(serve(&e, b, VIRTIO_BLK_SEG_MAX + 2).len, VIRTIO_BLK_SEG_MAX * 512 + 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, data, 512, VIRTIO_BLK_SEG_MAX * 512));
    /* 255 data pieces: the last buffer holds data and the status */
    memset(test_mem_at(&e.tm, data, VIRTIO_BLK_SEG_MAX * 512), 0, VIRTIO_BLK_SEG_MAX * 512);
    uint64_t last = buf(&e, 513, ST_UNSET);
    b[VIRTIO_BLK_SEG_MAX + 1] = (struct ring_buf){last, 513, true};
    ck_assert_uint_eq(serve(&e, b, VIRTIO_BLK_SEG_MAX + 2).len, 1);
    ck_assert_uint_eq(peek(&e, last + 512), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(peek(&e, data), 0);
    /* one segment over size_max; two at size_max */
    uint64_t big = buf(&e, 2u << 20, 0);
    uint32_t used;
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, big, VIRTIO_BLK_SIZE_MAX + 512, &used),
                      VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 0, big, VIRTIO_BLK_SIZE_MAX + 512, &used),
                      VIRTIO_BLK_S_IOERR);
    ck_assert(file_pristine(&e));
    st = buf(&e, 1, ST_UNSET);
    struct ring_buf two[] = {{hdr(&e, VIRTIO_BLK_T_IN, 0, 16), 16, false},
                             {big, VIRTIO_BLK_SIZE_MAX, true},
                             {big + VIRTIO_BLK_SIZE_MAX, VIRTIO_BLK_SIZE_MAX, true},
                             {st, 1, true}};
    ck_assert_uint_eq(serve(&e, two, 4).len, 2 * VIRTIO_BLK_SIZE_MAX + 1);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, big, 0, 2 * VIRTIO_BLK_SIZE_MAX));
    env_free(&e);
}
END_TEST

START_TEST(unknown_types)
{
    struct blk_env e;
    env_init(&e, 8192, "");
    static const uint32_t types[] = {2, 3, 5, 10, 12, 14, 15, 16, 26, 0x80000000u, UINT32_MAX};
    uint32_t used;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        ck_assert_uint_eq(rq(&e, types[i], 0, buf(&e, 512, 0), 512, &used), VIRTIO_BLK_S_UNSUPP);
        ck_assert_uint_eq(used, 1);
    }
    ck_assert(file_pristine(&e));
    env_free(&e);
}
END_TEST

/* The file shrinking under the device: the read fails, the queue lives. */
START_TEST(io_error)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    ck_assert_int_eq(truncate(e.path, 4096), 0);
    uint32_t used;
    uint64_t d = buf(&e, 4096, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 16, d, 4096, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(used, 1);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, d, 4096, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 4097);
    env_free(&e);
}
END_TEST

START_TEST(cow_through_device)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, ",cow");
    uint32_t used;
    uint64_t w = buf(&e, 1536, 0x3c);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 9, w, 1536, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &used), VIRTIO_BLK_S_OK);
    ck_assert(file_pristine(&e));
    uint64_t r = buf(&e, 8192, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 0, r, 8192, &used), VIRTIO_BLK_S_OK);
    const uint8_t *p = test_mem_at(&e.tm, r, 8192);
    for (unsigned i = 0; i < 8192; i++)
        ck_assert_uint_eq(p[i], i >= 9 * 512 && i < 12 * 512 ? 0x3c : pat(i));
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_DISCARD, 0, buf(&e, 16, 0), 16, &used),
                      VIRTIO_BLK_S_UNSUPP);
    env_free(&e);
    /* the cap: one cluster fits, a second is an I/O error */
    env_init(&e, 64 * 1024, ",cow=4K");
    w = buf(&e, 4096, 0x3d);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 0, w, 4096, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 8, w, 512, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 7, w, 512, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(disk_overlay_bytes(e.d), 4096);
    ck_assert(file_pristine(&e));
    env_free(&e);
}
END_TEST

/* `len` bytes of guest memory on a page boundary, filled with `v`. */
static uint64_t page_buf(struct blk_env *e, uint32_t len, uint8_t v)
{
    uint64_t g = (buf(e, len + 4095, 0) + 4095) & ~(uint64_t)4095;
    memset(test_mem_at(&e->tm, g, len), v, len);
    return g;
}

/* Whether guest [gpa, gpa+len) is, on the host, one mapping of the disk's
 * file at offset `off` (read from /proc/self/maps: the inode and offset
 * of the mapping that holds it). */
static bool mapped_from_file(struct blk_env *e, uint64_t gpa, uint64_t len, uint64_t off)
{
    uintptr_t p = (uintptr_t)test_mem_at(&e->tm, gpa, len);
    struct stat st;
    ck_assert_int_eq(stat(e->path, &st), 0);
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[PATH_MAX + 128];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long start, end, foff, ino;
        if (sscanf(line, "%lx-%lx %*s %lx %*s %lu", &start, &end, &foff, &ino) == 4 &&
            start <= p && p + len <= end)
            found = ino == st.st_ino && foff + (p - start) == off;
    }
    fclose(f);
    return found;
}

/* A read of whole pages that no write can change (a ro disk, a cow disk's
 * base) maps the file's pages into guest RAM instead of copying them; the
 * guest's later writes stay its own.  Everything else is copied. */
START_TEST(shared_pages_mapped)
{
    static const char *const opts[] = {",ro", ",cow"};
    for (int k = 0; k < 2; k++) {
        struct blk_env e;
        env_init(&e, 64 * 1024, opts[k]);
        uint32_t used;
        uint64_t g = page_buf(&e, 8192, 0xaa);
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 8192, &used), VIRTIO_BLK_S_OK);
        ck_assert_uint_eq(used, 8193);
        ck_assert(guest_has_pattern(&e, g, 4096, 8192));
        ck_assert(mapped_from_file(&e, g, 8192, 4096));
        /* the guest writes its copy; the file does not change */
        memset(test_mem_at(&e.tm, g, 8192), 0x55, 8192);
        ck_assert(file_pristine(&e));
        /* read again over the written pages: the file's bytes once more */
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 8192, &used), VIRTIO_BLK_S_OK);
        ck_assert(guest_has_pattern(&e, g, 4096, 8192));
        /* not on a page boundary in the guest, or on the disk: copied */
        uint64_t u = page_buf(&e, 8192, 0) + 512;
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, u, 4096, &used), VIRTIO_BLK_S_OK);
        ck_assert(guest_has_pattern(&e, u, 4096, 4096));
        ck_assert(!mapped_from_file(&e, u, 4096, 4096));
        uint64_t h = page_buf(&e, 4096, 0);
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 9, h, 4096, &used), VIRTIO_BLK_S_OK);
        ck_assert(guest_has_pattern(&e, h, 9 * 512, 4096));
        ck_assert(!mapped_from_file(&e, h, 4096, 9 * 512));
        env_free(&e);
    }
    /* cow: a range the overlay holds part of is copied, with the overlay's
     * bytes, and the rest of the disk still maps */
    struct blk_env e;
    env_init(&e, 64 * 1024, ",cow");
    uint32_t used;
    uint64_t w = page_buf(&e, 4096, 0x3c);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_OUT, 16, w, 4096, &used), VIRTIO_BLK_S_OK);
    uint64_t g = page_buf(&e, 8192, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 8192, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, g, 4096, 4096));
    const uint8_t *p = test_mem_at(&e.tm, g + 4096, 4096);
    for (unsigned i = 0; i < 4096; i++)
        ck_assert_uint_eq(p[i], 0x3c);
    ck_assert(!mapped_from_file(&e, g, 8192, 4096));
    /* one chain, two pieces: the base's is mapped, the overlay's copied */
    uint64_t a = page_buf(&e, 4096, 0), b2 = page_buf(&e, 4096, 0), st = buf(&e, 1, ST_UNSET);
    struct ring_buf bufs[] = {{hdr(&e, VIRTIO_BLK_T_IN, 8, 16), 16, false},
                              {a, 4096, true}, {b2, 4096, true}, {st, 1, true}};
    ck_assert_uint_eq(serve(&e, bufs, 4).len, 8193);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, a, 4096, 4096));
    ck_assert(mapped_from_file(&e, a, 4096, 4096));
    ck_assert_uint_eq(*(uint8_t *)test_mem_at(&e.tm, b2, 1), 0x3c);
    ck_assert(!mapped_from_file(&e, b2, 4096, 8192));
    ck_assert(file_pristine(&e));
    env_free(&e);
    /* a writable raw disk: always copied (its file changes under writes) */
    env_init(&e, 64 * 1024, "");
    g = page_buf(&e, 4096, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, g, 4096, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, g, 4096, 4096));
    ck_assert(!mapped_from_file(&e, g, 4096, 4096));
    env_free(&e);
}
END_TEST

/* The budget of mappings is the process's (earlier tests in this process
 * may have spent some of it): once spent, reads are copied, and still
 * right.  Each read takes another offset of the file, so a read that was
 * copied shows as the mapping of the offset before. */
START_TEST(shared_pages_budget)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, ",cow");
    uint32_t used;
    uint64_t g = page_buf(&e, 4096, 0);
    unsigned mapped = 0, i;
    for (i = 0; i <= VIRTIO_BLK_MAPS_MAX; i++) {
        ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8 * (i % 16), g, 4096, &used), VIRTIO_BLK_S_OK);
        e.r.data_next = g + 4096; /* reuse the headers' space */
        if (!mapped_from_file(&e, g, 4096, 4096 * (i % 16)))
            break;
        mapped++;
    }
    ck_assert_uint_le(mapped, VIRTIO_BLK_MAPS_MAX);
    ck_assert_uint_ge(mapped, VIRTIO_BLK_MAPS_MAX / 2);
    ck_assert(guest_has_pattern(&e, g, 4096 * (i % 16), 4096));
    uint64_t h = page_buf(&e, 4096, 0);
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_IN, 8, h, 4096, &used), VIRTIO_BLK_S_OK);
    ck_assert(guest_has_pattern(&e, h, 4096, 4096));
    ck_assert(!mapped_from_file(&e, h, 4096, 4096));
    env_free(&e);
}
END_TEST

/* One discard / write-zeroes segment: {le64 sector, le32 num, le32 flags}. */
static uint64_t seg(struct blk_env *e, uint64_t sector, uint32_t num, uint32_t flags)
{
    uint64_t g = ring_alloc(&e->r, 16);
    uint8_t s[16];
    wr64(s, 0, sector);
    wr32(s, 8, num);
    wr32(s, 12, flags);
    ring_write(&e->r, g, s, 16);
    return g;
}

START_TEST(discard_and_write_zeroes)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint32_t used;
    const uint32_t WZ = VIRTIO_BLK_T_WRITE_ZEROES, DI = VIRTIO_BLK_T_DISCARD;
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 8, 16, 0), 16, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(used, 1);
    ck_assert(file_has(&e, 8 * 512, 16 * 512, 0));
    ck_assert(file_has(&e, 0, 8 * 512, -1));
    ck_assert(file_has(&e, 24 * 512, e.size - 24 * 512, -1));
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 40, 8, VIRTIO_BLK_WZ_F_UNMAP), 16, &used),
                      VIRTIO_BLK_S_OK);
    ck_assert(file_has(&e, 40 * 512, 8 * 512, 0));
    ck_assert_uint_eq(rq(&e, DI, 0, seg(&e, 64, 8, 0), 16, &used), VIRTIO_BLK_S_OK);
    ck_assert(file_has(&e, 56 * 512, 8 * 512, -1));
    ck_assert(file_has(&e, 72 * 512, e.size - 72 * 512, -1));
    /* §5.2.6.2: unmap on a discard, or unknown flags, are UNSUPP */
    ck_assert_uint_eq(rq(&e, DI, 0, seg(&e, 0, 8, VIRTIO_BLK_WZ_F_UNMAP), 16, &used),
                      VIRTIO_BLK_S_UNSUPP);
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 0, 8, 2), 16, &used), VIRTIO_BLK_S_UNSUPP);
    ck_assert_uint_eq(rq(&e, DI, 0, seg(&e, 0, 8, 0x80000000u), 16, &used),
                      VIRTIO_BLK_S_UNSUPP);
    /* bad segments: none, two, a partial one, zero sectors, out of range,
     * over the limit, or writable */
    ck_assert_uint_eq(rq(&e, WZ, 0, 0, 0, &used), VIRTIO_BLK_S_IOERR);
    uint64_t two = seg(&e, 0, 8, 0);
    seg(&e, 8, 8, 0);
    ck_assert_uint_eq(rq(&e, WZ, 0, two, 32, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 0, 8, 0), 12, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 0, 0, 0), 16, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 120, 9, 0), 16, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, DI, 0, seg(&e, UINT64_MAX, 1, 0), 16, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, DI, 0, seg(&e, 0, UINT32_MAX, 0), 16, &used), VIRTIO_BLK_S_IOERR);
    ck_assert_uint_eq(rq(&e, WZ, 0, seg(&e, 0, VIRTIO_BLK_MAX_WRITE_ZEROES_SECTORS + 1, 0), 16,
                         &used),
                      VIRTIO_BLK_S_IOERR);
    uint64_t ws = seg(&e, 0, 8, 0), st = buf(&e, 1, ST_UNSET);
    struct ring_buf b[] = {{hdr(&e, WZ, 0, 16), 16, false}, {ws, 16, true}, {st, 1, true}};
    serve(&e, b, 3);
    ck_assert_uint_eq(peek(&e, st), VIRTIO_BLK_S_IOERR);
    ck_assert(file_has(&e, 0, 8 * 512, -1));
    env_free(&e);
}
END_TEST

/* Several chains per notification, one interrupt for the batch, none when
 * the driver asks for none. */
START_TEST(batch_and_interrupts)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint64_t d[3], st[3];
    for (int i = 0; i < 3; i++) {
        d[i] = buf(&e, 512, 0);
        st[i] = buf(&e, 1, ST_UNSET);
        struct ring_buf b[] = {{hdr(&e, VIRTIO_BLK_T_IN, (uint64_t)i, 16), 16, false},
                               {d[i], 512, true}, {st[i], 1, true}};
        ring_publish(&e.r, ring_chain(&e.r, b, 3));
    }
    unsigned irqs = e.irqs;
    virtio_mmio_process(&e.t, 0);
    ck_assert_uint_eq(ring_used_idx(&e.r), 3);
    ck_assert_uint_eq(e.irqs, irqs + 1);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(peek(&e, st[i]), VIRTIO_BLK_S_OK);
        ck_assert(guest_has_pattern(&e, d[i], (uint64_t)i * 512, 512));
        ck_assert_uint_eq(ring_used_elem(&e.r, (uint16_t)i).len, 513);
    }
    /* nothing new: no interrupt */
    virtio_mmio_process(&e.t, 0);
    ck_assert_uint_eq(e.irqs, irqs + 1);
    ring_set_avail_flags(&e.r, VIRTQ_AVAIL_F_NO_INTERRUPT);
    uint32_t used;
    ck_assert_uint_eq(rq(&e, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &used), VIRTIO_BLK_S_OK);
    ck_assert_uint_eq(e.irqs, irqs + 1);
    env_free(&e);
}
END_TEST

/* Seeded random chains: random buffers (some outside RAM, some
 * overlapping), random headers.  The device must answer each chain or the
 * queue must refuse it, never crash or leave the disk's size changed. */
START_TEST(hostile_random_chains)
{
    struct blk_env e;
    env_init(&e, 64 * 1024, "");
    uint64_t arena = buf(&e, 64 * 1024, 0);
    uint32_t seed = 0xb10c;
#define RND() (seed = seed * 1103515245u + 12345u, seed >> 8)
    for (int iter = 0; iter < 2000; iter++) {
        struct ring_buf b[6];
        unsigned n = 1 + RND() % 6;
        for (unsigned i = 0; i < n; i++) {
            uint32_t len = RND() % 4 ? RND() % 2048 : (RND() % 3) * 512 + 16;
            uint64_t gpa = arena + RND() % (64 * 1024 - 2048);
            if (RND() % 50 == 0)
                gpa = MEM_SIZE - RND() % 64; /* runs off the end of RAM */
            b[i] = (struct ring_buf){gpa, len, i > 0 && RND() % 2};
        }
        if (b[0].gpa + 16 <= MEM_SIZE) {
            static const uint32_t types[] = {0, 1, 4, 8, 11, 13, 2};
            uint8_t h[16];
            wr32(h, 0, types[RND() % 7]);
            wr32(h, 4, RND());
            wr64(h, 8, RND() % 3 ? RND() % 140 : (uint64_t)RND() << 40);
            ring_write(&e.r, b[0].gpa, h, 16);
            if (b[0].len >= 32 && b[0].gpa + 32 <= MEM_SIZE) {
                wr64(h, 0, RND() % 140);
                wr32(h, 8, RND() % 16);
                wr32(h, 12, RND() % 4 ? 0 : RND());
                ring_write(&e.r, b[0].gpa + 16, h, 16);
            }
        }
        uint16_t before = ring_used_idx(&e.r);
        ring_publish(&e.r, ring_chain(&e.r, b, n));
        virtio_mmio_process(&e.t, 0);
        if (needs_reset(&e)) {
            ring_init(&e.r, &e.tm.mem, RING_BASE, VIRTIO_BLK_QUEUE_MAX);
            e.r.data_next = arena + 64 * 1024;
            mmio_bring_up(&e.t, mmio_device_features(&e.t), &e.r, 1);
        } else {
            ck_assert_uint_eq(ring_used_idx(&e.r), (uint16_t)(before + 1));
            ck_assert_uint_le(ring_used_elem(&e.r, before).len, 5 * 2048 + 1);
        }
    }
#undef RND
    struct stat st;
    ck_assert_int_eq(stat(e.path, &st), 0);
    ck_assert_int_eq(st.st_size, 64 * 1024);
    env_free(&e);
}
END_TEST

Suite *blk_suite(void)
{
    Suite *s = suite_create("virtio_blk");
    TCase *tc = tcase_create("requests");
    tcase_add_test(tc, identity_and_features);
    tcase_add_test(tc, config_space);
    tcase_add_test(tc, read_request);
    tcase_add_test(tc, read_shared_buffers);
    tcase_add_test(tc, write_request);
    tcase_add_test(tc, flush_request);
    tcase_add_test(tc, get_id_request);
    tcase_add_test(tc, read_only_refuses_writes);
    tcase_add_test(tc, io_error);
    tcase_add_test(tc, cow_through_device);
    tcase_add_test(tc, shared_pages_mapped);
    tcase_add_test(tc, shared_pages_budget);
    tcase_add_test(tc, discard_and_write_zeroes);
    tcase_add_test(tc, batch_and_interrupts);
    suite_add_tcase(s, tc);
    tc = tcase_create("hostile");
    tcase_add_test(tc, past_capacity);
    tcase_add_test(tc, bad_lengths);
    tcase_add_test(tc, no_status_byte);
    tcase_add_test(tc, readable_after_writable);
    tcase_add_test(tc, short_header);
    tcase_add_test(tc, direction_mismatch);
    tcase_add_test(tc, segment_limits);
    tcase_add_test(tc, unknown_types);
    tcase_add_test(tc, hostile_random_chains);
    suite_add_tcase(s, tc);
    return s;
}

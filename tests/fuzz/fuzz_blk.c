/* libFuzzer target: hostile virtio-blk requests against the real device
 * and the real disk backends (raw, ro, cow with a small cap).  The input
 * describes requests, not raw memory, so the fuzzer spends its time in the
 * request parser and the disk layer rather than in finding a valid ring
 * (fuzz_virtio covers the ring itself):
 *   byte 0: which disk; then per request: type, sector, and 1..6 buffers
 *   each with a length, a direction and where it points (inside the data
 *   area, at its edge, or at a wild address).
 * Invariants: no crash or sanitizer report; the raw disk never changes
 * size; the ro and cow base files are never written (their size and first
 * bytes stay as created); used lengths never exceed the writable bytes. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/disk.h"
#include "devices/virtio/blk.h"
#include "devices/virtio/mmio.h"

#define RAM       0x40000u
#define DESC_GPA  0x0u
#define AVAIL_GPA 0x1000u
#define USED_GPA  0x2000u
#define DATA_GPA  0x4000u
#define QSIZE     16
#define DISK_BYTES (64 * 1024)
#define CHECK(c) do { if (!(c)) abort(); } while (0)

enum { D_RAW, D_RO, D_COW, NDISKS };
static const char *const names[NDISKS] = {"raw", "ro", "cow"};

static struct gmem mem;
static uint8_t *ram;
static struct disk *disks[NDISKS];
static struct virtio_blk *blks[NDISKS];
static struct virtio_mmio transports[NDISKS];
static int watch_fd[NDISKS]; /* our own look at each disk file */

static void no_irq(void *o) { (void)o; }
static const struct virtio_host_ops host = {.interrupt = no_irq};

static void setup_once(void)
{
    /* Page aligned, as guest RAM is, so that reads of the ro and cow disks
     * take the path that maps file pages over RAM (until the process's
     * budget of mappings is spent). */
    CHECK(posix_memalign((void **)&ram, GMEM_PAGE, RAM) == 0);
    memset(ram, 0, RAM);
    CHECK(gmem_add_region(&mem, 0, ram, RAM) == 0);
    for (int i = 0; i < NDISKS; i++) {
        char path[64], spec[96], err[256];
        snprintf(path, sizeof(path), "/tmp/airlock-fuzz-blk-%d-%s.img", (int)getpid(), names[i]);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0);
        uint8_t block[512];
        memset(block, 0xa5, sizeof(block));
        for (unsigned off = 0; off < DISK_BYTES; off += sizeof(block))
            CHECK(pwrite(fd, block, sizeof(block), off) == (ssize_t)sizeof(block));
        snprintf(spec, sizeof(spec), "%s%s", path,
                 i == D_RO ? ",ro" : i == D_COW ? ",cow=16K" : "");
        CHECK(disk_open(spec, &disks[i], err, sizeof(err)) == 0);
        watch_fd[i] = fd;
        unlink(path); /* the open descriptors keep it alive */
        CHECK(virtio_blk_create(disks[i], &blks[i]) == 0);
        virtio_mmio_init(&transports[i], &virtio_blk_ops, blks[i], &host, NULL, &mem);
    }
}

static void wr(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
    virtio_mmio_io(t, off, (uint8_t *)&v, 4, true);
}

static uint32_t rd(struct virtio_mmio *t, uint64_t off)
{
    uint32_t v = 0;
    virtio_mmio_io(t, off, (uint8_t *)&v, 4, false);
    return v;
}

static void bring_up(struct virtio_mmio *t)
{
    wr(t, 0x070, 0);
    wr(t, 0x070, 1);
    wr(t, 0x070, 3);
    wr(t, 0x024, 1);
    wr(t, 0x020, 1); /* VERSION_1 */
    wr(t, 0x024, 0);
    wr(t, 0x020, (uint32_t)t->ops->features(t->dev));
    wr(t, 0x070, 11);
    wr(t, 0x030, 0);
    wr(t, 0x038, QSIZE);
    wr(t, 0x080, DESC_GPA);
    wr(t, 0x090, AVAIL_GPA);
    wr(t, 0x0a0, USED_GPA);
    wr(t, 0x044, 1);
    wr(t, 0x070, 15);
    CHECK(rd(t, 0x070) == 15);
}

/* Where a buffer points: mostly inside the data area, sometimes at its
 * very end, sometimes anywhere (the device must refuse those cleanly). */
static uint64_t buf_addr(uint8_t sel, uint16_t len, const uint8_t **p, size_t *n)
{
    uint64_t base = DATA_GPA + (uint64_t)(sel & 0x3f) * 0x800;
    switch (sel >> 6) {
    case 0:
    case 1: return base;
    case 2: return RAM - len; /* ends exactly at the top of RAM */
    default: {
        uint64_t wild = 0;
        size_t take = *n < 8 ? *n : 8;
        memcpy(&wild, *p, take);
        *p += take;
        *n -= take;
        return wild;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup_once();
        ready = 1;
    }
    if (size < 1)
        return 0;
    int d = data[0] % NDISKS;
    struct virtio_mmio *t = &transports[d];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    memset(ram, 0, DATA_GPA);
    bring_up(t);

    uint16_t head = 0, avail = 0;
    uint64_t writable_total[QSIZE] = {0};
    bool rings_exposed = false; /* a buffer overlaps the rings themselves */
    /* Up to QSIZE/... requests, each a chain of 1..6 descriptors. */
    while (n >= 6 && head + 6 <= QSIZE) {
        uint8_t type = p[0];
        uint64_t sector = (uint64_t)p[1] | ((uint64_t)p[2] << 8);
        if (p[3] & 0x80)
            sector = ~0ULL - p[3]; /* near the top of the sector space */
        unsigned nbufs = 1 + p[4] % 6;
        p += 5;
        n -= 5;
        /* The header lives at a fixed place in the data area. */
        uint8_t hdr[16] = {0};
        hdr[0] = type < 0xf0 ? type % 16 : type;
        memcpy(hdr + 8, &sector, 8);
        uint64_t hdr_gpa = DATA_GPA + 0x30000 + head * 16;
        memcpy(ram + hdr_gpa, hdr, sizeof(hdr));
        uint16_t first = head;
        uint64_t wsum = 0;
        for (unsigned b = 0; b < nbufs && n >= 4; b++) {
            uint16_t len = (uint16_t)(p[0] | (p[1] << 8));
            uint8_t flags = p[2], sel = p[3];
            p += 4;
            n -= 4;
            uint64_t addr = b == 0 && !(flags & 0x80) ? hdr_gpa : buf_addr(sel, len, &p, &n);
            if (b == 0 && !(flags & 0x80))
                len = 16;
            struct virtq_desc desc = {.addr = addr, .len = len,
                                      .flags = (uint16_t)(flags & VIRTQ_DESC_F_WRITE),
                                      .next = (uint16_t)(head + 1)};
            if (b + 1 < nbufs)
                desc.flags |= VIRTQ_DESC_F_NEXT;
            if (desc.flags & VIRTQ_DESC_F_WRITE)
                wsum += len;
            if (addr < DATA_GPA)
                rings_exposed = true; /* the guest may aim data at its own rings */
            memcpy(ram + DESC_GPA + head * 16u, &desc, sizeof(desc));
            head++;
        }
        if (head == first)
            break; /* the input ran out before this request had a buffer */
        /* Terminate the chain at its last descriptor. */
        struct virtq_desc last;
        memcpy(&last, ram + DESC_GPA + (head - 1u) * 16u, sizeof(last));
        last.flags &= (uint16_t)~VIRTQ_DESC_F_NEXT;
        memcpy(ram + DESC_GPA + (head - 1u) * 16u, &last, sizeof(last));
        writable_total[first] = wsum;
        memcpy(ram + AVAIL_GPA + 4 + (avail % QSIZE) * 2u, &first, 2);
        avail++;
    }
    memcpy(ram + AVAIL_GPA + 2, &avail, 2);
    virtio_mmio_process(t, 0);

    /* Every used element names a chain head we offered, with a length no
     * larger than that chain's writable bytes. */
    uint16_t used;
    memcpy(&used, ram + USED_GPA + 2, 2);
    CHECK(rings_exposed || used <= avail);
    for (uint16_t i = 0; i < used && !rings_exposed; i++) {
        uint32_t id, len;
        memcpy(&id, ram + USED_GPA + 4 + i * 8u, 4);
        memcpy(&len, ram + USED_GPA + 8 + i * 8u, 4);
        CHECK(id < QSIZE && len <= writable_total[id]);
    }
    /* Files: never resized; ro and the cow base never written. */
    for (int i = 0; i < NDISKS; i++) {
        struct stat st;
        CHECK(fstat(watch_fd[i], &st) == 0 && st.st_size == DISK_BYTES);
        if (i != D_RAW) {
            uint8_t b[512];
            CHECK(pread(watch_fd[i], b, sizeof(b), 0) == (ssize_t)sizeof(b));
            for (unsigned k = 0; k < sizeof(b); k++)
                CHECK(b[k] == 0xa5);
        }
    }
    return 0;
}

/* The probe as a hostile virtio driver: it negotiates with the virtio-blk
 * device in slot 0, then sends the cases a broken or malicious guest could
 * (virtio 1.2 §2.7, §3.1, §4.2, §5.2) and checks what the device answered:
 * an error status, DEVICE_NEEDS_RESET, or an ignored write.  After each
 * queue-breaking case it resets the device and checks a good request still
 * works.  Interrupts stay off: it polls the used ring and the status. */
#include "probe.h"

#define VBASE 0xd0000000ULL
enum {
    R_MAGIC = 0x000, R_VERSION = 0x004, R_DEVICE_ID = 0x008, R_DRV_FEAT = 0x020,
    R_DRV_FEAT_SEL = 0x024, R_QSEL = 0x030, R_QNUM_MAX = 0x034, R_QNUM = 0x038,
    R_QREADY = 0x044, R_NOTIFY = 0x050, R_STATUS = 0x070, R_DESC_LO = 0x080,
    R_DESC_HI = 0x084, R_AVAIL_LO = 0x090, R_AVAIL_HI = 0x094, R_USED_LO = 0x0a0,
    R_USED_HI = 0x0a4, R_CONFIG = 0x100,
};
#define ST_ACK 1
#define ST_DRIVER 2
#define ST_DRIVER_OK 4
#define ST_FEATURES_OK 8
#define ST_NEEDS_RESET 64
#define F_NEXT 1
#define F_WRITE 2
#define BLK_IN 0
#define BLK_OUT 1
#define BLK_GET_ID 8
#define BLK_S_OK 0
#define BLK_S_IOERR 1
#define QSIZE 8

/* Fixed places in guest RAM (the probe itself lives at 2 MiB). */
#define DESC_GPA   0x400000ULL
#define AVAIL_GPA  0x401000ULL
#define USED_GPA   0x402000ULL
#define HDR_GPA    0x403000ULL
#define DATA_GPA   0x404000ULL
#define STATUS_GPA 0x406000ULL

struct desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};
struct blk_hdr {
    uint32_t type, reserved;
    uint64_t sector;
};

static volatile struct desc *const desc = (volatile struct desc *)DESC_GPA;
static volatile uint16_t *const avail = (volatile uint16_t *)AVAIL_GPA; /* flags, idx, ring */
static volatile uint16_t *const used_idx = (volatile uint16_t *)(USED_GPA + 2);
static volatile struct blk_hdr *const hdr = (volatile struct blk_hdr *)HDR_GPA;
static volatile uint8_t *const data = (volatile uint8_t *)DATA_GPA;
static volatile uint8_t *const status = (volatile uint8_t *)STATUS_GPA;

static uint16_t next_avail, seen_used;
static unsigned passed, failed;

static uint32_t rd(uint32_t off) { return mmio_read32(VBASE + off); }
static void wr(uint32_t off, uint32_t v) { mmio_write32(VBASE + off, v); }

static void report(const char *name, int ok)
{
    puts_serial(ok ? "VIRTIO ok " : "VIRTIO FAIL ");
    puts_serial(name);
    puts_serial("\n");
    if (ok)
        passed++;
    else
        failed++;
}

static void zero(volatile void *p, unsigned n)
{
    volatile uint8_t *b = p;
    for (unsigned i = 0; i < n; i++)
        b[i] = 0;
}

/* Reset, negotiate VERSION_1, and (if qnum) set up queue 0 and DRIVER_OK.
 * Returns the status register afterwards. */
static uint32_t setup(uint32_t qnum, uint64_t desc_gpa)
{
    wr(R_STATUS, 0);
    zero(desc, 4096);
    zero(avail, 4096);
    zero((volatile void *)USED_GPA, 4096);
    next_avail = seen_used = 0;
    wr(R_STATUS, ST_ACK);
    wr(R_STATUS, ST_ACK | ST_DRIVER);
    wr(R_DRV_FEAT_SEL, 1);
    wr(R_DRV_FEAT, 1); /* VERSION_1 is bit 32 */
    wr(R_DRV_FEAT_SEL, 0);
    wr(R_DRV_FEAT, 0);
    wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
    if (!qnum)
        return rd(R_STATUS);
    wr(R_QSEL, 0);
    wr(R_QNUM, qnum);
    wr(R_DESC_LO, (uint32_t)desc_gpa);
    wr(R_DESC_HI, (uint32_t)(desc_gpa >> 32));
    wr(R_AVAIL_LO, (uint32_t)AVAIL_GPA);
    wr(R_AVAIL_HI, 0);
    wr(R_USED_LO, (uint32_t)USED_GPA);
    wr(R_USED_HI, 0);
    wr(R_QREADY, 1);
    wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
    return rd(R_STATUS);
}

static void set_desc(unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
    desc[i].addr = addr;
    desc[i].len = len;
    desc[i].flags = flags;
    desc[i].next = next;
}

static void offer(uint16_t head, uint16_t advance)
{
    avail[2 + next_avail % QSIZE] = head;
    __asm__ volatile("" ::: "memory");
    next_avail = (uint16_t)(next_avail + advance);
    avail[1] = next_avail;
    __asm__ volatile("mfence" ::: "memory");
    wr(R_NOTIFY, 0);
}

enum { WAIT_USED = 1, WAIT_NEEDS_RESET = 2, WAIT_TIMEOUT = 0 };

/* Polls until the device used a chain or asked for a reset (bounded). */
static int wait_device(void)
{
    for (unsigned i = 0; i < 2000000; i++) {
        if (*used_idx != seen_used) {
            seen_used = *used_idx;
            return WAIT_USED;
        }
        if ((i & 255) == 0 && (rd(R_STATUS) & ST_NEEDS_RESET))
            return WAIT_NEEDS_RESET;
    }
    return WAIT_TIMEOUT;
}

/* A well-formed request: header, one data buffer, status byte. */
static int blk_request(uint32_t type, uint64_t sector, uint32_t len)
{
    hdr->type = type;
    hdr->reserved = 0;
    hdr->sector = sector;
    *status = 0xee;
    set_desc(0, HDR_GPA, 16, F_NEXT, 1);
    set_desc(1, DATA_GPA, len, (uint16_t)(F_NEXT | (type == BLK_OUT ? 0 : F_WRITE)), 2);
    set_desc(2, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    return wait_device() == WAIT_USED ? *status : -1;
}

static int good_read_works(void)
{
    if (!(setup(QSIZE, DESC_GPA) & ST_DRIVER_OK))
        return 0;
    zero(data, 512);
    return blk_request(BLK_IN, 0, 512) == BLK_S_OK && data[0] == 'A' && data[1] == 'I' &&
           data[7] == '-';
}

/* A case that must make the device ask for a reset (and then recover). */
static void expect_needs_reset(const char *name, int got)
{
    report(name, got == WAIT_NEEDS_RESET && good_read_works());
}

static void transport_cases(void)
{
    report("identity: magic, version 2, block device",
           rd(R_MAGIC) == 0x74726976 && rd(R_VERSION) == 2 && rd(R_DEVICE_ID) == 2);

    wr(R_STATUS, 0);
    wr(R_STATUS, ST_ACK);
    wr(R_STATUS, ST_ACK | ST_DRIVER);
    wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK); /* no VERSION_1 written */
    report("FEATURES_OK refused without VERSION_1 (3.1.1)", !(rd(R_STATUS) & ST_FEATURES_OK));

    wr(R_STATUS, 0);
    wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
    report("skipping status steps is ignored (2.1)", rd(R_STATUS) == 0);

    wr(R_STATUS, 0);
    wr(R_STATUS, ST_ACK);
    wr(R_STATUS, ST_ACK | ST_DRIVER);
    wr(R_QSEL, 0);
    wr(R_QNUM, QSIZE);
    wr(R_QREADY, 1);
    report("QUEUE_READY before FEATURES_OK is ignored (4.2.3.2)", rd(R_QREADY) == 0);

    setup(0, 0);
    wr(R_QSEL, 7);
    report("queue_sel out of range: QueueNumMax reads 0", rd(R_QNUM_MAX) == 0);

    uint8_t b = *(volatile uint8_t *)(VBASE + R_MAGIC);
    report("byte-wide register read is ignored (reads 0)", b == 0);

    uint32_t cap_lo = rd(R_CONFIG), cap_hi = rd(R_CONFIG + 4);
    report("config space: capacity of 2048 sectors", cap_lo == 2048 && cap_hi == 0);
    report("config space past its end reads 0", rd(R_CONFIG + 0xf0) == 0);

    /* Queue configurations the device must refuse at QUEUE_READY. */
    uint32_t st = setup(6, DESC_GPA);
    report("queue size 6 (not a power of two) -> NEEDS_RESET (2.7)",
           (st & ST_NEEDS_RESET) && good_read_works());
    st = setup(QSIZE, DESC_GPA + 8);
    report("misaligned descriptor table -> NEEDS_RESET (2.7)", (st & ST_NEEDS_RESET) && good_read_works());
    st = setup(QSIZE, 0xfff00000000ULL);
    report("descriptor table outside RAM -> NEEDS_RESET", (st & ST_NEEDS_RESET) && good_read_works());
    st = setup(1024, DESC_GPA);
    report("queue size above QueueNumMax -> NEEDS_RESET", (st & ST_NEEDS_RESET) && good_read_works());
}

static void queue_cases(void)
{
    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT, 0); /* points at itself */
    offer(0, 1);
    expect_needs_reset("descriptor loop (2.7.5)", wait_device());

    setup(QSIZE, DESC_GPA);
    for (unsigned i = 0; i < QSIZE; i++)
        set_desc(i, HDR_GPA, 16, F_NEXT, (uint16_t)((i + 1) % QSIZE));
    offer(0, 1);
    expect_needs_reset("chain longer than the queue (2.7.5)", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT, 200);
    offer(0, 1);
    expect_needs_reset("next out of range (2.7.5)", wait_device());

    setup(QSIZE, DESC_GPA);
    offer(50, 1);
    expect_needs_reset("avail ring head out of range (2.7.6)", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT, 1);
    set_desc(1, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 100);
    expect_needs_reset("avail idx jumps past the queue size (2.7.6)", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT, 1);
    set_desc(1, 0x7fff00000000ULL, 512, F_NEXT | F_WRITE, 2);
    set_desc(2, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    expect_needs_reset("buffer beyond guest memory", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT, 1);
    set_desc(1, 0xfffffffffffff000ULL, 0x2000, F_NEXT | F_WRITE, 2);
    set_desc(2, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    expect_needs_reset("addr + len wraps past 2^64", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, HDR_GPA, 16, F_NEXT | 4 /* INDIRECT */, 1);
    set_desc(1, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    expect_needs_reset("indirect descriptor (not offered)", wait_device());

    setup(QSIZE, DESC_GPA);
    set_desc(0, STATUS_GPA, 1, F_NEXT | F_WRITE, 1);
    set_desc(1, HDR_GPA, 16, 0, 0);
    offer(0, 1);
    expect_needs_reset("readable after writable (2.7.4.2)", wait_device());
}

static void request_cases(void)
{
    report("good read of sector 0 returns the disk's bytes", good_read_works());

    setup(QSIZE, DESC_GPA);
    data[0] = 'W';
    report("good write", blk_request(BLK_OUT, 1, 512) == BLK_S_OK);
    zero(data, 512);
    report("and read back", blk_request(BLK_IN, 1, 512) == BLK_S_OK && data[0] == 'W');

    report("GET_ID", blk_request(BLK_GET_ID, 0, 20) == BLK_S_OK && data[0] != 0);

    report("sector past capacity -> IOERR (5.2.6)", blk_request(BLK_IN, 2048, 512) == BLK_S_IOERR);
    report("sector + length past capacity -> IOERR", blk_request(BLK_IN, 2047, 1024) == BLK_S_IOERR);
    report("length not a multiple of 512 -> IOERR", blk_request(BLK_IN, 0, 100) == BLK_S_IOERR);
    report("huge sector (overflow) -> IOERR", blk_request(BLK_IN, 0xffffffffffffffffULL, 512) == BLK_S_IOERR);

    /* Read into a device-readable buffer: the device must not write it. */
    hdr->type = BLK_IN;
    hdr->sector = 0;
    *status = 0xee;
    data[0] = 'x';
    set_desc(0, HDR_GPA, 16, F_NEXT, 1);
    set_desc(1, DATA_GPA, 512, F_NEXT, 2);
    set_desc(2, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    int w = wait_device();
    report("read into a read-only descriptor: refused, buffer untouched",
           (w == WAIT_USED && *status == BLK_S_IOERR && data[0] == 'x') ||
               (w == WAIT_NEEDS_RESET && data[0] == 'x'));

    setup(QSIZE, DESC_GPA);
    hdr->type = BLK_IN;
    set_desc(0, HDR_GPA, 16, 0, 0); /* no status byte at all */
    offer(0, 1);
    w = wait_device();
    report("request without a status byte: device survives",
           (w == WAIT_USED || w == WAIT_NEEDS_RESET) && good_read_works());

    setup(QSIZE, DESC_GPA);
    *status = 0xee;
    set_desc(0, HDR_GPA, 8, F_NEXT, 1); /* header cut short */
    set_desc(1, STATUS_GPA, 1, F_WRITE, 0);
    offer(0, 1);
    w = wait_device();
    report("header too short -> error status",
           (w == WAIT_USED && *status != BLK_S_OK) || w == WAIT_NEEDS_RESET);

    report("after all that, a good read still works", good_read_works());
}

void probe_virtio(void)
{
    transport_cases();
    queue_cases();
    request_cases();
    wr(R_STATUS, 0);
    puts_serial("VIRTIO-DONE passed=");
    put_hex(passed);
    puts_serial(" failed=");
    put_hex(failed);
    puts_serial("\n");
}

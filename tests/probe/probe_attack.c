/* probe.attack: the probe as a hostile guest against every device airlock
 * emulates.  Each case prints "ATTACK ok|FAIL <what>"; the suite ends with
 * "ATTACK-DONE passed=N failed=N".  Expected answers are the virtio 1.2
 * spec's or airlock's documented behaviour (devices/bus.c: an access
 * outside every range, or reaching past a range's end, is dropped and
 * reads all-ones; devices/serial.c: byte registers, a wider access touches
 * the first only; devices/virtio/mmio.c: 32-bit aligned registers, other
 * widths ignored and read 0, status transitions per §3.1.1).
 *
 * Expects `--disk IMG` (first bytes "AI") and `--vsock-uds PATH`: slot 0
 * virtio-blk, slot 1 virtio-vsock, slots 2..7 empty.  The vsock cases are
 * in probe_vsock.c, the driver in probe_vq.c. */
#include "probe_attack.h"

void attack_summary(void);

#define COM1 0x3f8
#define BLK_SLOT_BASE VIRTIO_BASE
#define VSOCK_SLOT_BASE (VIRTIO_BASE + VIRTIO_STRIDE)

/* ---- a virtio-blk driver just good enough to prove the device works ----- */
#define BLK_Q     0x580000ULL
#define BLK_HDR   0x590000ULL
#define BLK_DATA  0x591000ULL
#define BLK_STAT  0x592000ULL
static struct vq blkq;

static void blk_setup(uint64_t base)
{
    vdev_begin(base);
    vq_setup(&blkq, base, 0, BLK_Q, 8);
    vset(base, R_STATUS, ST_ALL_OK);
}

/* Posts a read of sector 0 in descriptors 0..2 (not kicked). */
static void blk_post_read(void)
{
    volatile uint32_t *h = (volatile uint32_t *)(uintptr_t)BLK_HDR;
    h[0] = 0; /* VIRTIO_BLK_T_IN */
    h[1] = 0;
    h[2] = h[3] = 0; /* sector 0 */
    wr8(BLK_STAT, 0xee);
    wr32(BLK_DATA, 0);
    vq_desc(&blkq, 0, BLK_HDR, 16, F_NEXT, 1);
    vq_desc(&blkq, 1, BLK_DATA, 512, F_NEXT | F_WRITE, 2);
    vq_desc(&blkq, 2, BLK_STAT, 1, F_WRITE, 0);
    vq_post(&blkq, 0, 1);
}

static int blk_read_done(void)
{
    return vq_wait(&blkq) == WAIT_USED && rd8(BLK_STAT) == 0 && rd8(BLK_DATA) == 'A' &&
           rd8(BLK_DATA + 1) == 'I';
}

int blk_good(uint64_t base)
{
    blk_setup(base);
    if (vreg(base, R_STATUS) != ST_ALL_OK)
        return 0;
    blk_post_read();
    vq_kick(&blkq);
    return blk_read_done();
}

/* ---- the 8250 UART, ports 0x3f8..0x3ff ----------------------------------- */
static void uart_restore(void)
{
    outb(COM1 + 3, 0x03); /* LCR: 8N1, DLAB off */
    outb(COM1 + 1, 0x00); /* IER */
    outb(COM1 + 2, 0x02); /* FCR: clear rx */
    outb(COM1 + 2, 0x00);
    outb(COM1 + 4, 0x08); /* MCR: OUT2, as at power-on */
}

static void uart_cases(void)
{
    const char *p = "uart";
    /* Every port, every width, hostile values.  THR (0x3f8) only in
     * loopback, so nothing reaches the console. */
    outb(COM1 + 4, 0x10); /* MCR.LOOP */
    for (unsigned port = COM1; port <= COM1 + 7; port++) {
        static const uint32_t vals[] = {0xffffffff, 0x00000000, 0x80808080, 0x7f7f7f7f};
        for (unsigned i = 0; i < 4; i++) {
            if (port == COM1 + 4 || port == COM1 + 3)
                continue; /* MCR/LCR keep loopback and DLAB as set: below */
            outb((uint16_t)port, (uint8_t)vals[i]);
            outw((uint16_t)port, (uint16_t)vals[i]);
            outl((uint16_t)port, vals[i]);
            (void)inb((uint16_t)port);
            (void)inw((uint16_t)port);
            (void)inl((uint16_t)port);
        }
    }
    uart_restore();
    attack_report2(p, "every port x every width x hostile values: still transmits (LSR.THRE)",
                   (inb(COM1 + 5) & 0x60) == 0x60);

    outb(COM1 + 1, 0xff);
    attack_report2(p, "IER=0xff keeps only the 4 defined bits", inb(COM1 + 1) == 0x0f);
    outb(COM1 + 1, 0);
    /* Loopback: what we send comes back, so report only after leaving it. */
    outb(COM1 + 4, 0xff);
    int mcr = inb(COM1 + 4) == 0x1f;
    outb(COM1 + 2, 0x02);
    outw(COM1, 0x4241);
    int w2 = (inb(COM1 + 5) & 1) && inb(COM1) == 'A' && !(inb(COM1 + 5) & 1);
    outl(COM1, 0x44434241);
    int w4 = inb(COM1) == 'A' && !(inb(COM1 + 5) & 1) && inb(COM1 + 1) == 0;
    for (unsigned i = 0; i < 300; i++)
        outb(COM1, (uint8_t)i); /* far past the rx FIFO */
    unsigned got = 0;
    while ((inb(COM1 + 5) & 1) && got < 1000)
        (void)inb(COM1), got++;
    uart_restore();
    attack_report2(p, "MCR=0xff keeps only the 5 defined bits", mcr);
    attack_report2(p, "2-byte write to THR (loopback) sends the low byte only", w2);
    attack_report2(p, "4-byte write to THR sends one byte and leaves IER alone", w4);
    attack_report2(p, "300 bytes looped into the 64-byte rx FIFO: 64 kept, drains", got == 64);

    outb(COM1 + 3, 0x80);
    outb(COM1, 0xff);
    outb(COM1 + 1, 0xff);
    int dl = inb(COM1) == 0xff && inb(COM1 + 1) == 0xff;
    outb(COM1, 12);
    outb(COM1 + 1, 0);
    outb(COM1 + 3, 0x03);
    attack_report2(p, "divisor latch takes 0xffff and gives it back (DLAB)", dl && inb(COM1 + 1) == 0);

    outb(COM1 + 5, 0x00);
    outb(COM1 + 6, 0x00);
    attack_report2(p, "LSR and MSR are read-only", inb(COM1 + 5) == 0x60 && inb(COM1 + 6) == 0xb0);
    outb(COM1 + 2, 0xff);
    attack_report2(p, "FCR=0xff: IIR reports FIFOs on, no interrupt", inb(COM1 + 2) == 0xc1);
    outb(COM1 + 2, 0);
    attack_report2(p, "2-byte read of LSR: LSR, zero above", inw(COM1 + 5) == 0x0060);
    outb(COM1 + 7, 0xa5);
    attack_report2(p, "4-byte read of MCR..SCR (fits): MCR, zero above", inl(COM1 + 4) == 0x00000008);
    attack_report2(p, "4-byte read from LSR reaches past 0x3ff: all-ones", inl(COM1 + 5) == 0xffffffff);
    attack_report2(p, "2-byte read at SCR reaches past 0x3ff: all-ones", inw(COM1 + 7) == 0xffff);
    outw(COM1 + 7, 0x5a5a);
    outl(COM1 + 6, 0x5a5a5a5a);
    attack_report2(p, "writes reaching past 0x3ff are dropped (SCR unchanged)", inb(COM1 + 7) == 0xa5);
    attack_report2(p, "just outside: ports 0x3f7 and 0x400 read all-ones",
                   inb(COM1 - 1) == 0xff && inb(COM1 + 8) == 0xff && inl(0x400) == 0xffffffff);

    /* Interrupt storm: each THRI enable raises the line, each disable drops it. */
    for (unsigned i = 0; i < 3000; i++) {
        outb(COM1 + 1, 0x02);
        outb(COM1 + 1, 0x00);
    }
    uart_restore();
    attack_report2(p, "6000 IER writes toggling the THRE interrupt: still transmits",
                   inb(COM1 + 5) == 0x60 && inb(COM1 + 2) == 0x01);
}

/* ---- the i8042, ports 0x60 and 0x64 (0xfe on 0x64 resets: never sent) --- */
static void i8042_cases(void)
{
    const char *p = "i8042";
    for (unsigned v = 0; v < 256; v++) {
        outb(0x60, (uint8_t)v);
        if (v != 0xfe)
            outb(0x64, (uint8_t)v);
    }
    attack_report2(p, "every byte to data, every byte but 0xfe to command: ignored",
                   inb(0x60) == 0 && inb(0x64) == 0);
    outw(0x60, 0xfefe);
    outl(0x60, 0xfefefefe);
    outw(0x63, 0xfefe); /* reaches 0x64 from below: dropped as a whole */
    outw(0x64, 0xfefe); /* reaches past 0x64: dropped as a whole */
    outl(0x64, 0xfefefefe);
    /* A reset would end the VM here, and the count would come up short. */
    attack_report2(p, "wide writes of 0xfe reaching past a 1-port range: dropped, no reset",
                   inb(0x64) == 0 && inb(0x60) == 0);
    attack_report2(p, "wide reads reaching past each 1-port range: all-ones",
                   inw(0x60) == 0xffff && inl(0x60) == 0xffffffff && inw(0x64) == 0xffff &&
                       inl(0x64) == 0xffffffff);
    attack_report2(p, "neighbours 0x5f 0x62 0x63 0x65 read all-ones",
                   inb(0x5f) == 0xff && inb(0x62) == 0xff && inb(0x63) == 0xff && inb(0x65) == 0xff);
}

/* ---- unclaimed ports and MMIO --------------------------------------------- */
static int mmio_all_ones(uint64_t a)
{
    int ok = rd8(a) == 0xff && rd16(a) == 0xffff && rd32(a) == 0xffffffff;
#ifdef HAVE_RW64
    ok = ok && rd64(a) == ~0ULL;
#endif
    return ok;
}

static void mmio_scribble(uint64_t a)
{
    wr8(a, 0);
    wr16(a, 0);
    wr32(a, 0);
#ifdef HAVE_RW64
    wr64(a, 0);
#endif
}

static void unclaimed_cases(void)
{
    const char *p = "unclaimed";
    static const uint16_t ports[] = {0x0000, 0x0080, 0x02e8, 0x0cf8, 0x0cfc, 0x3f0, 0xfffc};
    int ok = 1;
    for (unsigned i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
        outb(ports[i], 0);
        outw(ports[i], 0);
        outl(ports[i], 0);
        ok = ok && inb(ports[i]) == 0xff && inw(ports[i]) == 0xffff && inl(ports[i]) == 0xffffffff;
    }
    attack_report2(p, "ports nobody owns: writes dropped, reads all-ones at 1/2/4 bytes", ok);
    ok = inw(0xffff) == 0xffff && inl(0xfffe) == 0xffffffff;
    attack_report2(p, "port accesses wrapping past 0xffff read all-ones", ok);

    static const uint64_t addrs[] = {
        0x80000000ULL, 0xc0000000ULL, 0xcffff000ULL,
        VIRTIO_BASE + VIRTIO_WINDOW,                      /* just past slot 0 */
        VIRTIO_BASE + VIRTIO_STRIDE - 0x100,              /* the gap before slot 1 */
        VIRTIO_BASE + VIRTIO_STRIDE + VIRTIO_WINDOW,      /* just past slot 1 */
        VIRTIO_BASE + 2 * VIRTIO_STRIDE,                  /* slot 2: empty */
        VIRTIO_BASE + 7 * VIRTIO_STRIDE,                  /* slot 7: empty */
        VIRTIO_BASE + 8 * VIRTIO_STRIDE,                  /* past the last slot */
        0xfebff000ULL,                                    /* below the IOAPIC */
    };
    ok = 1;
    for (unsigned i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        mmio_scribble(addrs[i]);
        ok = ok && mmio_all_ones(addrs[i]) && mmio_all_ones(addrs[i] + 3);
    }
    attack_report2(p, "MMIO nobody owns (gaps, after each window, empty slots): writes dropped, reads all-ones", ok);
    ok = 1;
    for (uint64_t a = VIRTIO_BASE + VIRTIO_WINDOW; a < VIRTIO_BASE + 2 * VIRTIO_STRIDE; a += 0x100)
        if (a % VIRTIO_STRIDE >= VIRTIO_WINDOW)
            ok = ok && rd32(a) == 0xffffffff && rd32(a + 0xfc) == 0xffffffff;
    attack_report2(p, "every 256 bytes of slot 0 and 1 past their 0x200 window read all-ones", ok);
    /* A read across a page boundary is two accesses (KVM splits it): the
     * half past slot 0's page is unclaimed, the half in slot 1 is a 2-byte
     * register read (0); past slot 1's page is an empty slot. */
    wr32(VIRTIO_BASE + VIRTIO_STRIDE - 2, 0);
    ok = rd32(VIRTIO_BASE + VIRTIO_STRIDE - 2) == 0x0000ffff &&
         rd32(VIRTIO_BASE + 2 * VIRTIO_STRIDE - 2) == 0xffffffff &&
         vreg(VIRTIO_BASE + VIRTIO_STRIDE, R_MAGIC) == 0x74726976;
    attack_report2(p, "MMIO reads and writes across the page boundary between slots", ok);

    /* String I/O: one exit carries many accesses (run->io.count). */
    static uint32_t sbuf[64];
    for (unsigned i = 0; i < 64; i++)
        sbuf[i] = 0;
    {
        void *d = sbuf;
        unsigned long n = 64;
        __asm__ volatile("cld; rep insl" : "+D"(d), "+c"(n) : "d"((uint16_t)0x2e8) : "memory");
    }
    ok = 1;
    for (unsigned i = 0; i < 64; i++)
        ok = ok && sbuf[i] == 0xffffffff;
    {
        void *d = sbuf;
        unsigned long n = 200;
        __asm__ volatile("cld; rep insb" : "+D"(d), "+c"(n) : "d"((uint16_t)(0x3f8 + 5)) : "memory");
    }
    ok = ok && ((uint8_t *)sbuf)[0] == 0x60 && ((uint8_t *)sbuf)[199] == 0x60 && sbuf[50] == 0xffffffff;
    {
        const void *src = sbuf;
        unsigned long n = 128;
        __asm__ volatile("cld; rep outsw" : "+S"(src), "+c"(n) : "d"((uint16_t)0x2e8) : "memory");
        src = sbuf;
        n = 64;
        __asm__ volatile("cld; rep outsl" : "+S"(src), "+c"(n) : "d"((uint16_t)0x60) : "memory");
    }
    attack_report2(p, "rep insl/insb/outsw/outsl: unclaimed all-ones, LSR 200 times, wide writes dropped",
                   ok && inb(0x2e8) == 0xff);

    ok = rd32(VIRTIO_BASE + VIRTIO_WINDOW - 2) == 0xffffffff &&
         rd16(VIRTIO_BASE + VIRTIO_WINDOW - 1) == 0xffff;
#ifdef HAVE_RW64
    ok = ok && rd64(VIRTIO_BASE + VIRTIO_WINDOW - 4) == ~0ULL;
#endif
    attack_report2(p, "MMIO reads reaching past a window's end read all-ones", ok);
    wr32(VIRTIO_BASE + VIRTIO_WINDOW - 2, 0);
    attack_report2(p, "a write reaching past a window's end is dropped", blk_good(BLK_SLOT_BASE));
}

/* ---- every virtio-mmio register, every width ------------------------------ */
static int slot_good(uint64_t base)
{
    return base == BLK_SLOT_BASE ? blk_good(base) : vsock_good(base);
}

static void register_cases(const char *p, uint64_t base, uint32_t id)
{
    int ok = vreg(base, R_MAGIC) == 0x74726976 && vreg(base, R_VERSION) == 2 &&
             vreg(base, R_DEVICE_ID) == id && vreg(base, R_VENDOR) == 0x4b4c5241;
    attack_report2(p, "identity: magic, version 2, device id, vendor", ok);

    /* Non-32-bit or misaligned register accesses are ignored and read 0. */
    ok = 1;
    for (uint32_t off = 0; off < R_CONFIG; off++) {
        ok = ok && rd8(base + off) == 0;
        if (off <= R_CONFIG - 2)
            ok = ok && rd16(base + off) == 0;
        if ((off & 3) && off <= R_CONFIG - 4)
            ok = ok && rd32(base + off) == 0;
#ifdef HAVE_RW64
        if (off <= R_CONFIG - 8)
            ok = ok && rd64(base + off) == 0;
#endif
    }
    attack_report2(p, "every register offset at 1/2/8 bytes and misaligned 4: reads 0", ok);

    /* Read-only registers keep their value under writes of every width. */
    static const uint32_t ro[] = {R_MAGIC, R_VERSION, R_DEVICE_ID, R_VENDOR, R_QNUM_MAX, R_CFG_GEN};
    uint32_t before[6];
    for (unsigned i = 0; i < 6; i++)
        before[i] = vreg(base, ro[i]);
    for (unsigned i = 0; i < 6; i++) {
        wr32(base + ro[i], 0xffffffff);
        wr16(base + ro[i], 0);
        wr8(base + ro[i], 0x55);
    }
    ok = 1;
    for (unsigned i = 0; i < 6; i++)
        ok = ok && vreg(base, ro[i]) == before[i];
    attack_report2(p, "read-only registers ignore writes of every width", ok);

    vset(base, R_DEV_FEAT_SEL, 1);
    ok = vreg(base, R_DEV_FEAT) == 1; /* VERSION_1 and nothing else up there */
    vset(base, R_DEV_FEAT_SEL, 0);
    ok = ok && !(vreg(base, R_DEV_FEAT) & (3u << 28)); /* no INDIRECT_DESC, EVENT_IDX */
    vset(base, R_DEV_FEAT_SEL, 0xffffffff);
    ok = ok && vreg(base, R_DEV_FEAT) == 0;
    vset(base, R_DEV_FEAT_SEL, 2);
    ok = ok && vreg(base, R_DEV_FEAT) == 0;
    attack_report2(p, "DeviceFeatures: VERSION_1, no INDIRECT/EVENT_IDX, 0 for sel 2 and 0xffffffff", ok);

    static const uint32_t bad_sel[] = {3, 4, 0x10000, 0xffffffff};
    vdev_begin(base);
    ok = 1;
    for (unsigned i = 0; i < 4; i++) {
        if (bad_sel[i] == 3 && id == 19)
            continue; /* vsock has queues 0..2: 3 is the first bad one */
        vset(base, R_QSEL, bad_sel[i]);
        vset(base, R_QNUM, 8);
        vset(base, R_DESC_LO, 0x1000);
        vset(base, R_QREADY, 1);
        vset(base, R_NOTIFY, bad_sel[i]);
        ok = ok && vreg(base, R_QNUM_MAX) == 0 && vreg(base, R_QREADY) == 0 &&
             !(vreg(base, R_STATUS) & ST_NEEDS_RESET);
    }
    attack_report2(p, "queue_sel 3/4/0x10000/0xffffffff: no queue, writes ignored", ok);

    vdev_begin(base);
    vset(base, R_QSEL, 0);
    ok = vreg(base, R_SHM_LEN_LO) == 0xffffffff && vreg(base, R_SHM_LEN_LO + 4) == 0xffffffff;
    vset(base, R_SHM_SEL, 0xffffffff);
    ok = ok && vreg(base, R_SHM_LEN_LO) == 0xffffffff;
    attack_report2(p, "shared memory regions: none (length reads all-ones)", ok);

    /* Write hostile values of every width to every register offset. */
    static const uint32_t vals[] = {0xffffffff, 0x80000000, 0x00010000, 0x00000007};
    for (unsigned v = 0; v < 4; v++) {
        for (uint32_t off = 0; off < VIRTIO_WINDOW; off += 4) {
            if (off == R_STATUS && vals[v] == 0x00000007)
                continue;
            wr32(base + off, vals[v]);
            wr8(base + off + 1, (uint8_t)vals[v]);
            wr16(base + off + 2, (uint16_t)vals[v]);
            wr32(base + off + 2, vals[v]);
#ifdef HAVE_RW64
            wr64(base + off, (uint64_t)vals[v] << 32 | vals[v]);
#endif
        }
    }
    ok = vreg(base, R_MAGIC) == 0x74726976 && vreg(base, R_DEVICE_ID) == id;
    attack_report2(p, "hostile values at every offset x every width: device intact, works after a reset",
                   ok && slot_good(base));

    /* Config space: any width reads the same bytes; writes are dropped. */
    uint32_t c0 = vreg(base, R_CONFIG), c1 = vreg(base, R_CONFIG + 4);
    ok = rd8(base + R_CONFIG + 1) == (uint8_t)(c0 >> 8) &&
         rd16(base + R_CONFIG + 3) == (uint16_t)((c0 >> 24) | (c1 << 8)) &&
         rd32(base + R_CONFIG + 2) == ((c0 >> 16) | (c1 << 16));
#ifdef HAVE_RW64
    ok = ok && rd64(base + R_CONFIG) == ((uint64_t)c1 << 32 | c0);
#endif
    wr32(base + R_CONFIG, ~c0);
    wr8(base + R_CONFIG + 4, 0xff);
    ok = ok && vreg(base, R_CONFIG) == c0 && vreg(base, R_CONFIG + 4) == c1;
    ok = ok && (id == 2 ? c0 == 2048 && c1 == 0 : c0 == 3 && c1 == 0);
    ok = ok && vreg(base, VIRTIO_WINDOW - 4) == 0 && rd8(base + VIRTIO_WINDOW - 1) == 0;
    attack_report2(p, "config space at every width, misaligned too; writes dropped; past the fields reads 0", ok);
}

/* ---- the status state machine (§3.1.1, the table in mmio.c) ------------- */
static uint32_t status_after(uint64_t base, const uint32_t *seq, unsigned n)
{
    vset(base, R_STATUS, 0);
    for (unsigned i = 0; i < n; i++)
        vset(base, R_STATUS, seq[i]);
    return vreg(base, R_STATUS);
}

static void status_cases(const char *p, uint64_t base)
{
    const uint32_t A = ST_ACK, D = ST_DRIVER, F = ST_FEATURES_OK, K = ST_DRIVER_OK;
    uint32_t s1[] = {A, A | F};
    attack_report2(p, "FEATURES_OK before DRIVER: ignored", status_after(base, s1, 2) == A);
    uint32_t s2[] = {A, A | D, A | D | K};
    attack_report2(p, "DRIVER_OK before FEATURES_OK: ignored", status_after(base, s2, 3) == (A | D));
    uint32_t s3[] = {A | D | F | K};
    attack_report2(p, "everything at once from reset: ignored", status_after(base, s3, 1) == 0);
    uint32_t s4[] = {D};
    attack_report2(p, "DRIVER without ACKNOWLEDGE: ignored", status_after(base, s4, 1) == 0);
    uint32_t s5[] = {0xffffffff, 0x7f, 0x40};
    attack_report2(p, "0xffffffff, 0x7f, NEEDS_RESET from the driver: ignored",
                   status_after(base, s5, 3) == 0);

    uint32_t st = vdev_begin(base);
    vset(base, R_STATUS, A | D);
    vset(base, R_STATUS, A);
    attack_report2(p, "clearing bits (FEATURES_OK, DRIVER) is ignored",
                   st == (A | D | F) && vreg(base, R_STATUS) == (A | D | F));

    vdev_begin(base);
    vset(base, R_STATUS, A | D | F | ST_FAILED);
    st = vreg(base, R_STATUS);
    vset(base, R_STATUS, A | D | F | K | ST_FAILED);
    vset(base, R_STATUS, A | D | F | K);
    attack_report2(p, "FAILED sticks; no step forward after it",
                   st == (A | D | F | ST_FAILED) && vreg(base, R_STATUS) == st);
    vset(base, R_STATUS, 0);
    attack_report2(p, "reset clears FAILED", vreg(base, R_STATUS) == 0);

    /* Features: only offered ones, only while negotiating. */
    vset(base, R_STATUS, 0);
    vset(base, R_STATUS, A);
    vset(base, R_STATUS, A | D);
    vset(base, R_DRV_FEAT_SEL, 1);
    vset(base, R_DRV_FEAT, 1);
    vset(base, R_DRV_FEAT_SEL, 0);
    vset(base, R_DRV_FEAT, 1u << 28); /* INDIRECT_DESC: never offered */
    vset(base, R_STATUS, A | D | F);
    int refused = !(vreg(base, R_STATUS) & F);
    vset(base, R_DRV_FEAT, 1u << 29); /* EVENT_IDX */
    vset(base, R_STATUS, A | D | F);
    refused = refused && !(vreg(base, R_STATUS) & F);
    vset(base, R_DRV_FEAT, 0);
    vset(base, R_DRV_FEAT_SEL, 1);
    vset(base, R_DRV_FEAT, 0x80000001); /* bit 63 */
    vset(base, R_STATUS, A | D | F);
    refused = refused && !(vreg(base, R_STATUS) & F);
    attack_report2(p, "FEATURES_OK refused with INDIRECT_DESC, EVENT_IDX or bit 63 (3.1.1)", refused);

    vset(base, R_STATUS, 0);
    vset(base, R_STATUS, A);
    vset(base, R_STATUS, A | D);
    vset(base, R_DRV_FEAT_SEL, 1);
    vset(base, R_DRV_FEAT, 1);
    vset(base, R_DRV_FEAT_SEL, 2);
    vset(base, R_DRV_FEAT, 0xffffffff); /* no such half: ignored */
    vset(base, R_DRV_FEAT_SEL, 0xffffffff);
    vset(base, R_DRV_FEAT, 0xffffffff);
    vset(base, R_STATUS, A | D | F);
    int accepted = vreg(base, R_STATUS) == (A | D | F);
    vset(base, R_DRV_FEAT_SEL, 0);
    vset(base, R_DRV_FEAT, 1u << 28); /* after FEATURES_OK: too late, ignored */
    vset(base, R_STATUS, 0);
    attack_report2(p, "DriverFeatures beyond sel 1 ignored; FEATURES_OK then accepted", accepted);

    /* NEEDS_RESET: nothing but reset (or FAILED) moves it. */
    vdev_begin(base);
    vset(base, R_QSEL, 0);
    vset(base, R_QNUM, 0); /* size 0: QUEUE_READY must fail */
    vset(base, R_QREADY, 1);
    st = vreg(base, R_STATUS);
    vset(base, R_STATUS, A | D | F | K);
    vset(base, R_QNUM, 8);
    vset(base, R_QREADY, 1);
    attack_report2(p, "queue size 0 -> NEEDS_RESET; then status and queue writes ignored",
                   (st & ST_NEEDS_RESET) && vreg(base, R_STATUS) == st && vreg(base, R_QREADY) == 0 &&
                       (vreg(base, R_INT_STATUS) & 2));
    vset(base, R_INT_ACK, 0xffffffff);
    attack_report2(p, "InterruptACK 0xffffffff clears every bit", vreg(base, R_INT_STATUS) == 0);
}

/* Device-specific: queue registers locked after QUEUE_READY, a request
 * before DRIVER_OK, reset with a request in flight (virtio-blk). */
static void blk_status_cases(void)
{
    const char *p = "blk@0";
    uint64_t base = BLK_SLOT_BASE;
    blk_setup(base);
    vset(base, R_QSEL, 0);
    vset(base, R_DESC_LO, 0xdead0000);
    vset(base, R_QNUM, 1024);
    vset(base, R_USED_LO, 0);
    blk_post_read();
    vq_kick(&blkq);
    attack_report2(p, "queue registers written after QUEUE_READY are ignored", blk_read_done());

    vdev_begin(base);
    vq_setup(&blkq, base, 0, BLK_Q, 8);
    blk_post_read();
    vq_kick(&blkq);
    int early = vq_wait_short(&blkq);
    vset(base, R_STATUS, ST_ALL_OK);
    vq_kick(&blkq);
    attack_report2(p, "a request before DRIVER_OK waits; served after it",
                   early == WAIT_TIMEOUT && blk_read_done());

    blk_setup(base);
    blk_post_read();
    vq_kick(&blkq);
    vset(base, R_STATUS, 0); /* reset mid-request */
    attack_report2(p, "reset with a request in flight, then a good read", blk_good(base));

    vdev_begin(base);
    vq_setup(&blkq, base, 0, BLK_Q, 8);
    vset(base, R_QREADY, 0);
    vset(base, R_QNUM, 16);
    vset(base, R_QREADY, 1);
    vset(base, R_STATUS, ST_ALL_OK);
    blkq.size = 16;
    blk_post_read();
    vq_kick(&blkq);
    attack_report2(p, "QUEUE_READY 0 then a new size, before DRIVER_OK: revalidated, works",
                   blk_read_done());
}

/* ---- storms --------------------------------------------------------------- */
static void storm_cases(const char *p, uint64_t base, unsigned nqueues)
{
    if (base == BLK_SLOT_BASE)
        blk_setup(base);
    else
        vsock_start(base);
    for (unsigned i = 0; i < 5000; i++)
        vset(base, R_NOTIFY, i % nqueues); /* ioeventfd: no exit */
    for (unsigned i = 0; i < 2000; i++)
        vset(base, R_NOTIFY, 0x100 + i); /* no such queue: an exit each */
    for (unsigned i = 0; i < 1000; i++)
        wr16(base + R_NOTIFY, 0); /* wrong width: an exit, ignored */
    int ok;
    if (base == BLK_SLOT_BASE) {
        blk_post_read();
        vq_kick(&blkq);
        ok = blk_read_done();
    } else {
        ok = vsock_ping(base);
    }
    attack_report2(p, "8000 QUEUE_NOTIFY writes (good, bad index, bad width), then a good request",
                   ok);

    for (unsigned i = 0; i < 300; i++) {
        vdev_begin(base);
        vset(base, R_QSEL, 0);
        vset(base, R_QNUM, 3); /* not a power of two: NEEDS_RESET + config interrupt */
        vset(base, R_QREADY, 1);
    }
    int nr = (vreg(base, R_STATUS) & ST_NEEDS_RESET) && (vreg(base, R_INT_STATUS) & 2);
    vset(base, R_INT_ACK, 3);
    attack_report2(p, "300 config-change interrupts (NEEDS_RESET), then a good request",
                   nr && slot_good(base));

    for (unsigned i = 0; i < 300; i++) {
        vset(base, R_STATUS, 0);
        vset(base, R_STATUS, ST_ACK);
        vset(base, R_STATUS, 0);
    }
    attack_report2(p, "300 rapid resets, then a good request", slot_good(base));
}

static void blk_request_storm(void)
{
    blk_setup(BLK_SLOT_BASE);
    int ok = 1;
    for (unsigned round = 0; round < 100 && ok; round++) {
        blk_post_read();
        for (unsigned k = 0; k < 20; k++)
            vq_kick(&blkq);
        ok = blk_read_done();
    }
    attack_report2("blk@0", "100 reads, each kicked 20 times, all answered", ok);
}

void probe_attack(void)
{
    uart_cases();
    i8042_cases();
    unclaimed_cases();

    register_cases("blk@0", BLK_SLOT_BASE, 2);
    status_cases("blk@0", BLK_SLOT_BASE);
    blk_status_cases();
    storm_cases("blk@0", BLK_SLOT_BASE, 1);
    blk_request_storm();

    register_cases("vsock@1", VSOCK_SLOT_BASE, 19);
    status_cases("vsock@1", VSOCK_SLOT_BASE);
    storm_cases("vsock@1", VSOCK_SLOT_BASE, 3);
    vsock_attacks(VSOCK_SLOT_BASE);

    attack_report("after everything: blk still reads, vsock still answers",
                  blk_good(BLK_SLOT_BASE) && vsock_good(VSOCK_SLOT_BASE));
    vset(BLK_SLOT_BASE, R_STATUS, 0);
    vset(VSOCK_SLOT_BASE, R_STATUS, 0);
    attack_summary();
}

/* The probe as a hostile virtio-vsock driver (virtio 1.2 §5.10): every
 * hostile-virtqueue case of probe_virtio.c on the vsock queues, and the
 * packet cases a guest could send: lengths that disagree with the
 * descriptors (CVE-2019-18960's pattern), headers split across
 * descriptors, zero-length descriptors, bad CIDs, unknown ops and types,
 * packets for connections that do not exist, absurd credit, a REQUEST
 * flood past VSOCK_MAX_CONNS.  Expected answers follow devices/virtio/
 * vsock.h: a packet that breaks the rules costs its connection (RST) or,
 * with no connection, gets RST unless it was an RST itself; a packet with
 * no whole header or a spoofed source CID is dropped without an answer.
 *
 * Host side (run-tests): `--vsock-uds PATH`, nothing at PATH_9 (DEAD_PORT),
 * and a listener at PATH_1024 (LIVE_PORT) that accepts and reads. */
#include "probe_attack.h"

#define RXQ    0x600000ULL
#define TXQ    0x610000ULL
#define EVQ    0x620000ULL
#define RX_BUF 0x640000ULL /* 8 x 0x100 */
#define EV_BUF 0x648000ULL
#define TX_HDR 0x650000ULL
#define TX_PAY 0x651000ULL
#define BIG    0x700000ULL /* 256 KiB + 1 of payload */
#define RX_N   8
#define TX_N   64

#define DEAD_PORT 9
#define LIVE_PORT 1024
#define HOST_CID  2
#define HDR       44
#define BUF_ALLOC (256u << 10) /* VSOCK_BUF_ALLOC */
#define MAX_CONNS 256          /* VSOCK_MAX_CONNS */
#define RST_QUEUE 64           /* VSOCK_RST_QUEUE */
enum { OP_INVALID, OP_REQUEST, OP_RESPONSE, OP_RST, OP_SHUTDOWN, OP_RW, OP_CREDIT_UPDATE, OP_CREDIT_REQUEST };

struct __attribute__((packed)) vhdr {
    uint64_t src_cid, dst_cid;
    uint32_t src_port, dst_port, len;
    uint16_t type, op;
    uint32_t flags, buf_alloc, fwd_cnt;
};
_Static_assert(sizeof(struct vhdr) == HDR, "virtio_vsock_hdr is 44 bytes");

static struct vq rxq, txq, evq;
static uint64_t vbase, gcid;
static uint32_t next_port = 40000;
static const char *const P = "vsock@1";

static void rx_give(unsigned i)
{
    vq_desc(&rxq, i, RX_BUF + 0x100 * (uint64_t)i, 0x100, F_WRITE, 0);
    vq_post(&rxq, (uint16_t)i, 1);
}

static int start(uint64_t base, int rx_buffers)
{
    vbase = base;
    vdev_begin(base);
    vq_setup(&rxq, base, 0, RXQ, RX_N);
    vq_setup(&txq, base, 1, TXQ, TX_N);
    vq_setup(&evq, base, 2, EVQ, 4);
    vset(base, R_STATUS, ST_ALL_OK);
    for (unsigned i = 0; rx_buffers && i < RX_N; i++)
        rx_give(i);
    for (unsigned i = 0; i < 4; i++) {
        vq_desc(&evq, i, EV_BUF + 16 * i, 16, F_WRITE, 0);
        vq_post(&evq, (uint16_t)i, 1);
    }
    vq_kick(&rxq);
    vq_kick(&evq);
    gcid = vreg(base, R_CONFIG) | (uint64_t)vreg(base, R_CONFIG + 4) << 32;
    return vreg(base, R_STATUS) == ST_ALL_OK;
}

int vsock_start(uint64_t base) { return start(base, 1); }

static void hdr_at(uint64_t gpa, uint64_t src_cid, uint64_t dst_cid, uint32_t sport, uint32_t dport,
                   uint32_t len, uint16_t type, uint16_t op, uint32_t flags, uint32_t buf_alloc,
                   uint32_t fwd_cnt)
{
    volatile struct vhdr *h = (volatile struct vhdr *)(uintptr_t)gpa;
    h->src_cid = src_cid;
    h->dst_cid = dst_cid;
    h->src_port = sport;
    h->dst_port = dport;
    h->len = len;
    h->type = type;
    h->op = op;
    h->flags = flags;
    h->buf_alloc = buf_alloc;
    h->fwd_cnt = fwd_cnt;
}

/* Offers the chain starting at descriptor 0 on tx and waits for it. */
static int tx_go(void)
{
    vq_post(&txq, 0, 1);
    vq_kick(&txq);
    return vq_wait(&txq);
}

/* A packet in one descriptor: header, then paylen bytes (len field apart). */
static int send_full(uint64_t src_cid, uint64_t dst_cid, uint16_t type, uint16_t op, uint32_t sport,
                     uint32_t dport, uint32_t len, uint32_t paylen, uint32_t flags, uint32_t buf_alloc,
                     uint32_t fwd_cnt)
{
    hdr_at(TX_HDR, src_cid, dst_cid, sport, dport, len, type, op, flags, buf_alloc, fwd_cnt);
    vq_desc(&txq, 0, TX_HDR, HDR + paylen, 0, 0);
    return tx_go();
}

static int send_op(uint16_t op, uint32_t sport, uint32_t dport)
{
    return send_full(gcid, HOST_CID, 1, op, sport, dport, 0, 0, 0, 65536, 0);
}

struct pkt {
    struct vhdr h;
    uint32_t used_len;
};

/* The next rx packet (its buffer goes straight back to the device). */
static int rx_next_n(struct pkt *p, unsigned bound, int give_back)
{
    int w = bound ? vq_wait_n(&rxq, bound) : vq_wait(&rxq);
    if (w != WAIT_USED)
        return w;
    uint32_t id = rxq.last_id;
    if (id >= RX_N)
        return WAIT_TIMEOUT;
    volatile struct vdesc *d = (volatile struct vdesc *)(uintptr_t)(RXQ + 16 * (uint64_t)id);
    uint64_t a = d->addr;
    const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)a;
    uint8_t *dst = (uint8_t *)&p->h;
    for (unsigned i = 0; i < HDR; i++)
        dst[i] = src[i];
    p->used_len = rxq.last_len;
    if (give_back) {
        rx_give(id);
        vq_kick(&rxq);
    }
    return WAIT_USED;
}

static int rx_next(struct pkt *p) { return rx_next_n(p, 0, 1); }

/* The next packet is `op` from (src_cid, hport) to our port gport, no payload. */
static int expect_from(uint64_t src_cid, uint16_t op, uint32_t gport, uint32_t hport)
{
    struct pkt p;
    if (rx_next(&p) != WAIT_USED)
        return 0;
    return p.h.op == op && p.h.src_cid == src_cid && p.h.dst_cid == gcid && p.h.dst_port == gport &&
           p.h.src_port == hport && p.h.type == 1 && p.h.len == 0 && p.used_len == HDR;
}

static int expect(uint16_t op, uint32_t gport, uint32_t hport)
{
    return expect_from(HOST_CID, op, gport, hport);
}

/* A REQUEST to a port with nothing behind it: the next packet must be its RST. */
static int dead_probe(void)
{
    uint32_t port = next_port++;
    return send_op(OP_REQUEST, port, DEAD_PORT) == WAIT_USED && expect(OP_RST, port, DEAD_PORT);
}

int vsock_good(uint64_t base) { return start(base, 1) && dead_probe(); }

int vsock_ping(uint64_t base)
{
    (void)base;
    uint32_t port = next_port++;
    if (send_op(OP_REQUEST, port, DEAD_PORT) != WAIT_USED)
        return 0;
    for (unsigned i = 0; i < 2 * RST_QUEUE; i++) { /* skip what was owed before */
        struct pkt p;
        if (rx_next(&p) != WAIT_USED)
            return 0;
        if (p.h.dst_port == port)
            return p.h.op == OP_RST && p.h.src_port == DEAD_PORT;
    }
    return 0;
}

static int conn_open(uint32_t port)
{
    return send_op(OP_REQUEST, port, LIVE_PORT) == WAIT_USED && expect(OP_RESPONSE, port, LIVE_PORT);
}

/* Asks for our credit: CREDIT_UPDATE with buf_alloc and the bytes taken. */
static int credit_is(uint32_t port, uint32_t fwd)
{
    if (send_op(OP_CREDIT_REQUEST, port, LIVE_PORT) != WAIT_USED)
        return 0;
    struct pkt p;
    if (rx_next(&p) != WAIT_USED)
        return 0;
    return p.h.op == OP_CREDIT_UPDATE && p.h.dst_port == port && p.h.src_port == LIVE_PORT &&
           p.h.buf_alloc == BUF_ALLOC && p.h.fwd_cnt == fwd;
}

/* ---- hostile queues --------------------------------------------------- */

/* Must end in DEVICE_NEEDS_RESET, after which a reset device works. */
static void needs_reset(const char *name, struct vq *watch)
{
    int w = vq_wait(watch);
    attack_report2(P, name, w == WAIT_NEEDS_RESET && vsock_good(vbase));
}

static void tx_queue_cases(void)
{
    start(vbase, 1);
    vq_desc(&txq, 0, TX_HDR, HDR, F_NEXT, 0);
    tx_go();
    needs_reset("tx: descriptor loop (2.7.5)", &txq);

    start(vbase, 1);
    for (unsigned i = 0; i < TX_N; i++)
        vq_desc(&txq, i, TX_HDR, 1, F_NEXT, (uint16_t)((i + 1) % TX_N));
    vq_post(&txq, 0, 1);
    vq_kick(&txq);
    needs_reset("tx: chain longer than the queue (2.7.5)", &txq);

    start(vbase, 1);
    vq_desc(&txq, 0, TX_HDR, HDR, F_NEXT, 200);
    vq_post(&txq, 0, 1);
    vq_kick(&txq);
    needs_reset("tx: next out of range (2.7.5)", &txq);

    start(vbase, 1);
    vq_post(&txq, 100, 1);
    vq_kick(&txq);
    needs_reset("tx: avail ring head out of range (2.7.6)", &txq);

    start(vbase, 1);
    hdr_at(TX_HDR, gcid, HOST_CID, next_port++, DEAD_PORT, 0, 1, OP_REQUEST, 0, 0, 0);
    vq_desc(&txq, 0, TX_HDR, HDR, 0, 0);
    vq_post(&txq, 0, 200);
    vq_kick(&txq);
    needs_reset("tx: avail idx jumps past the queue size (2.7.6)", &txq);

    static const struct {
        uint64_t addr;
        uint32_t len;
        uint16_t flags;
        const char *name;
    } bad[] = {
        {0x7fff00000000ULL, 64, 0, "tx: payload beyond guest memory"},
        {0xfffffffffffff000ULL, 0x2000, 0, "tx: payload addr + len wraps past 2^64"},
        {0x0fffff00ULL, 0x1000, 0, "tx: payload runs off the end of RAM"},
        {TX_PAY, 16, F_INDIRECT, "tx: indirect descriptor (not offered)"},
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        start(vbase, 1);
        hdr_at(TX_HDR, gcid, HOST_CID, next_port++, DEAD_PORT, 16, 1, OP_RW, 0, 0, 0);
        vq_desc(&txq, 0, TX_HDR, HDR, F_NEXT, 1);
        vq_desc(&txq, 1, bad[i].addr, bad[i].len, bad[i].flags, 0);
        vq_post(&txq, 0, 1);
        vq_kick(&txq);
        needs_reset(bad[i].name, &txq);
    }

    start(vbase, 1);
    hdr_at(TX_HDR, gcid, HOST_CID, next_port++, DEAD_PORT, 0, 1, OP_REQUEST, 0, 0, 0);
    vq_desc(&txq, 0, TX_PAY, 16, F_NEXT | F_WRITE, 1);
    vq_desc(&txq, 1, TX_HDR, HDR, 0, 0);
    vq_post(&txq, 0, 1);
    vq_kick(&txq);
    needs_reset("tx: readable after writable (2.7.4.2)", &txq);

    /* Queue layouts refused at QUEUE_READY, on each of the three queues. */
    static const char *const qname[] = {"vsock@1 rx", "vsock@1 tx", "vsock@1 event"};
    for (unsigned q = 0; q < 3; q++) {
        static const struct {
            uint16_t size;
            uint64_t desc;
            const char *what;
        } lay[] = {
            {6, TXQ, "size 6 (not a power of two)"},
            {8, TXQ + 8, "misaligned descriptor table"},
            {8, 0xfff00000000ULL, "descriptor table outside RAM"},
            {512, TXQ, "size 512 above QueueNumMax 256"},
        };
        for (unsigned k = 0; k < 4; k++) {
            vdev_begin(vbase);
            struct vq t = {.base = vbase, .index = q, .mem = TXQ, .size = lay[k].size};
            vq_program(&t, lay[k].desc);
            vset(vbase, R_QREADY, 1);
            int nr = (vreg(vbase, R_STATUS) & ST_NEEDS_RESET) && vreg(vbase, R_QREADY) == 0;
            attack_report2(qname[q], lay[k].what, nr && vsock_good(vbase));
        }
    }
    attack_report2(P, "QueueNumMax is 256 on queues 0-2, 0 on 3",
                   (vset(vbase, R_QSEL, 0), vreg(vbase, R_QNUM_MAX) == 256) &&
                       (vset(vbase, R_QSEL, 2), vreg(vbase, R_QNUM_MAX) == 256) &&
                       (vset(vbase, R_QSEL, 3), vreg(vbase, R_QNUM_MAX) == 0));
}

/* rx chains are read only when the device has a packet for the guest:
 * each case offers one broken rx chain, then provokes an RST. */
static void rx_queue_cases(void)
{
    static const char *const names[] = {
        "rx: descriptor loop", "rx: next out of range", "rx: avail head out of range",
        "rx: avail idx jumps past the queue size", "rx: buffer beyond guest memory",
        "rx: indirect descriptor", "rx: readable after writable",
    };
    for (unsigned c = 0; c < 7; c++) {
        start(vbase, 0);
        uint16_t head = 0, advance = 1;
        switch (c) {
        case 0: vq_desc(&rxq, 0, RX_BUF, 0x100, F_WRITE | F_NEXT, 0); break;
        case 1: vq_desc(&rxq, 0, RX_BUF, 0x100, F_WRITE | F_NEXT, 99); break;
        case 2: head = 9; break;
        case 3: vq_desc(&rxq, 0, RX_BUF, 0x100, F_WRITE, 0); advance = 50; break;
        case 4: vq_desc(&rxq, 0, 0x7fff00000000ULL, 0x100, F_WRITE, 0); break;
        case 5: vq_desc(&rxq, 0, RX_BUF, 0x100, F_WRITE | F_INDIRECT, 0); break;
        default:
            vq_desc(&rxq, 0, RX_BUF, 0x80, F_WRITE | F_NEXT, 1);
            vq_desc(&rxq, 1, RX_BUF + 0x80, 0x80, 0, 0);
        }
        vq_post(&rxq, head, advance);
        vq_kick(&rxq);
        send_op(OP_REQUEST, next_port++, DEAD_PORT);
        needs_reset(names[c], &rxq);
    }

    /* Chains too small for a header go back empty; the next one is used. */
    static const char *const small[] = {
        "rx: a 20-byte buffer goes back empty, the next gets the RST",
        "rx: a device-readable buffer goes back empty, the next gets the RST",
    };
    for (unsigned c = 0; c < 2; c++) {
        start(vbase, 0);
        vq_desc(&rxq, 0, RX_BUF, c == 0 ? 20 : 0x100, c == 0 ? F_WRITE : 0, 0);
        vq_post(&rxq, 0, 1);
        rx_give(1);
        vq_kick(&rxq);
        uint32_t port = next_port++;
        send_op(OP_REQUEST, port, DEAD_PORT);
        struct pkt p;
        int first = rx_next_n(&p, 0, 0) == WAIT_USED && rxq.last_id == 0 && rxq.last_len == 0;
        int second = rx_next_n(&p, 0, 0) == WAIT_USED && rxq.last_id == 1 && p.h.op == OP_RST &&
                     p.h.dst_port == port && p.used_len == HDR;
        attack_report2(P, small[c], first && second && vreg(vbase, R_STATUS) == ST_ALL_OK);
    }

    /* A header written across three writable descriptors arrives whole. */
    start(vbase, 0);
    vq_desc(&rxq, 0, RX_BUF + 0x100, 20, F_WRITE | F_NEXT, 1);
    vq_desc(&rxq, 1, RX_BUF + 0x200, 0, F_WRITE | F_NEXT, 2);
    vq_desc(&rxq, 2, RX_BUF + 0x300, 0x80, F_WRITE, 0);
    vq_post(&rxq, 0, 1);
    vq_kick(&rxq);
    uint32_t port = next_port++;
    send_op(OP_REQUEST, port, DEAD_PORT);
    int ok = vq_wait(&rxq) == WAIT_USED && rxq.last_id == 0 && rxq.last_len == HDR;
    struct vhdr h;
    uint8_t *hb = (uint8_t *)&h;
    for (unsigned i = 0; i < HDR; i++)
        hb[i] = i < 20 ? rd8(RX_BUF + 0x100 + i) : rd8(RX_BUF + 0x300 + i - 20);
    attack_report2(P, "rx: header across 20 + 0 + 128-byte buffers arrives whole",
                   ok && h.op == OP_RST && h.dst_port == port && h.src_cid == HOST_CID &&
                       h.dst_cid == gcid);

    /* The event queue is read only for a TRANSPORT_RESET (never, here). */
    start(vbase, 1);
    vq_desc(&evq, 0, EV_BUF, 16, F_WRITE | F_NEXT, 0);
    vq_post(&evq, 0, 1);
    vq_kick(&evq);
    attack_report2(P, "event: a looping chain the device has no reason to read is not read",
                   vq_wait_short(&evq) == WAIT_TIMEOUT && dead_probe() &&
                       vreg(vbase, R_STATUS) == ST_ALL_OK);
}

/* ---- packets ------------------------------------------------------------- */

static void packet_cases(void)
{
    start(vbase, 1);
    uint32_t port = next_port++;
    send_op(OP_REQUEST, port, DEAD_PORT);
    attack_report2(P, "REQUEST to a port with nothing behind it -> RST, addressed as a reply",
                   expect(OP_RST, port, DEAD_PORT));

    /* Packets for a connection that does not exist: RST, except RST. */
    static const uint16_t ops[] = {OP_RESPONSE, OP_SHUTDOWN, OP_RW, OP_CREDIT_UPDATE, OP_CREDIT_REQUEST,
                                   OP_INVALID, 8, 0xffff};
    int ok = 1;
    for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        port = next_port++;
        send_op(ops[i], port, LIVE_PORT);
        ok = ok && expect(OP_RST, port, LIVE_PORT);
    }
    attack_report2(P, "RESPONSE/SHUTDOWN/RW/CREDIT_*/op 0/8/0xffff with no connection -> RST each", ok);
    send_op(OP_RST, next_port++, LIVE_PORT);
    attack_report2(P, "RST with no connection: no answer", dead_probe());

    static const uint16_t types[] = {0, 2 /* SEQPACKET: not offered */, 0xffff};
    ok = 1;
    for (unsigned i = 0; i < 3; i++) {
        port = next_port++;
        send_full(gcid, HOST_CID, types[i], OP_REQUEST, port, LIVE_PORT, 0, 0, 0, 65536, 0);
        ok = ok && expect(OP_RST, port, LIVE_PORT);
    }
    attack_report2(P, "REQUEST with type 0, 2 (SEQPACKET), 0xffff -> RST", ok);

    static const uint64_t dst[] = {0, 1, 3, 0xffffffffULL, ~0ULL};
    ok = 1;
    for (unsigned i = 0; i < 5; i++) {
        port = next_port++;
        send_full(gcid, dst[i], 1, OP_REQUEST, port, LIVE_PORT, 0, 0, 0, 65536, 0);
        ok = ok && expect_from(dst[i], OP_RST, port, LIVE_PORT);
    }
    attack_report2(P, "REQUEST to CID 0, 1, 3 (itself), 2^32-1, 2^64-1 -> RST from that CID", ok);

    static const uint64_t src[] = {HOST_CID, 0, 4, 0x100000003ULL, ~0ULL};
    for (unsigned i = 0; i < 5; i++)
        send_full(src[i], HOST_CID, 1, OP_REQUEST, next_port++, DEAD_PORT, 0, 0, 0, 65536, 0);
    attack_report2(P, "spoofed source CIDs (2, 0, 4, 2^32+3, 2^64-1): dropped, no answer", dead_probe());

    /* No whole header in the readable part: nobody to answer. */
    hdr_at(TX_HDR, gcid, HOST_CID, next_port++, DEAD_PORT, 0, 1, OP_REQUEST, 0, 0, 0);
    vq_desc(&txq, 0, TX_HDR, HDR - 1, 0, 0);
    ok = tx_go() == WAIT_USED && txq.last_len == 0;
    attack_report2(P, "43-byte header: dropped, used length 0, no answer", ok && dead_probe());
    for (unsigned i = 0; i < 5; i++)
        vq_desc(&txq, i, TX_HDR, 0, i < 4 ? F_NEXT : 0, (uint16_t)(i + 1));
    ok = tx_go() == WAIT_USED;
    attack_report2(P, "chain of five zero-length descriptors: dropped, no answer", ok && dead_probe());
    vq_desc(&txq, 0, TX_HDR, HDR, F_WRITE, 0);
    ok = tx_go() == WAIT_USED;
    attack_report2(P, "header in a device-writable descriptor: dropped, no answer", ok && dead_probe());

    /* CVE-2019-18960: len disagrees with the chain. */
    port = next_port++;
    send_full(gcid, HOST_CID, 1, OP_RW, port, DEAD_PORT, 4096, 16, 0, 65536, 0);
    attack_report2(P, "RW, len 4096 but 16 bytes in the chain, no connection -> RST",
                   expect(OP_RST, port, DEAD_PORT));
    port = next_port++;
    send_full(gcid, HOST_CID, 1, OP_REQUEST, port, LIVE_PORT, 10, 10, 0, 65536, 0);
    attack_report2(P, "REQUEST carrying 10 payload bytes (len 10) -> RST, no connection",
                   expect(OP_RST, port, LIVE_PORT) && credit_is(port, 0) == 0);
    port = next_port++;
    send_full(gcid, HOST_CID, 1, OP_REQUEST, port, DEAD_PORT, 0xffffffff, 0, 0, 65536, 0);
    attack_report2(P, "REQUEST with len 0xffffffff -> RST", expect(OP_RST, port, DEAD_PORT));

    /* A header split across descriptors is the same header. */
    port = next_port++;
    hdr_at(TX_HDR, gcid, HOST_CID, port, DEAD_PORT, 0, 1, OP_REQUEST, 0, 65536, 0);
    vq_desc(&txq, 0, TX_HDR, 20, F_NEXT, 1);
    vq_desc(&txq, 1, TX_HDR + 20, 24, 0, 0);
    tx_go();
    attack_report2(P, "REQUEST header split 20 + 24 -> parsed whole (RST from the dead port)",
                   expect(OP_RST, port, DEAD_PORT));
    port = next_port++;
    hdr_at(TX_HDR, gcid, HOST_CID, port, DEAD_PORT, 0, 1, OP_REQUEST, 0, 65536, 0);
    for (unsigned i = 0; i < HDR; i++)
        vq_desc(&txq, i, TX_HDR + i, 1, i + 1 < HDR ? F_NEXT : 0, (uint16_t)(i + 1));
    tx_go();
    attack_report2(P, "REQUEST header in 44 one-byte descriptors -> parsed whole",
                   expect(OP_RST, port, DEAD_PORT));
}

/* Cases on a live connection (the host listener at LIVE_PORT). */
static void connection_cases(void)
{
    start(vbase, 1);
    uint32_t port = next_port++;
    attack_report2(P, "REQUEST to a listening host port -> RESPONSE", conn_open(port));

    send_full(gcid, HOST_CID, 1, OP_RW, port, LIVE_PORT, 16, 16, 0, 65536, 0);
    attack_report2(P, "RW of 16 bytes reaches the host (CREDIT_UPDATE fwd_cnt 16)", credit_is(port, 16));

    hdr_at(TX_HDR, gcid, HOST_CID, port, LIVE_PORT, 16, 1, OP_RW, 0, 65536, 0);
    vq_desc(&txq, 0, TX_HDR, HDR, F_NEXT, 1);
    vq_desc(&txq, 1, TX_PAY, 0, F_NEXT, 2);
    vq_desc(&txq, 2, TX_PAY, 8, F_NEXT, 3);
    vq_desc(&txq, 3, TX_PAY, 0, F_NEXT, 4);
    vq_desc(&txq, 4, TX_PAY + 8, 8, 0, 0);
    tx_go();
    attack_report2(P, "RW payload split by zero-length descriptors: all 16 bytes arrive",
                   credit_is(port, 32));

    hdr_at(TX_HDR, gcid, HOST_CID, port, LIVE_PORT, 8, 1, OP_RW, 0, 65536, 0);
    vq_desc(&txq, 0, TX_HDR, 30, F_NEXT, 1);
    vq_desc(&txq, 1, TX_HDR + 30, 14 + 8, 0, 0);
    tx_go();
    attack_report2(P, "RW whose header and payload share a split descriptor: parsed", credit_is(port, 40));

    send_full(gcid, HOST_CID, 1, OP_CREDIT_UPDATE, port, LIVE_PORT, 0, 0, 0, 0xffffffff, 0xffffffff);
    send_full(gcid, HOST_CID, 1, OP_CREDIT_UPDATE, port, LIVE_PORT, 0, 0, 0, 0, 0x80000000);
    attack_report2(P, "absurd credit (buf_alloc 2^32-1 / 0, fwd_cnt 2^32-1 / 2^31): no answer, alive",
                   credit_is(port, 40));

    send_full(gcid, HOST_CID, 1, OP_RW, port, LIVE_PORT, 4096, 16, 0, 65536, 0);
    attack_report2(P, "RW, len 4096 but 16 bytes in the chain (CVE-2019-18960) -> RST, connection gone",
                   expect(OP_RST, port, LIVE_PORT) && send_op(OP_CREDIT_REQUEST, port, LIVE_PORT) &&
                       expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_full(gcid, HOST_CID, 1, OP_RW, port, LIVE_PORT, 8, 16, 0, 65536, 0);
    attack_report2(P, "RW, len 8 but 16 bytes in the chain -> RST", expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    hdr_at(TX_HDR, gcid, HOST_CID, port, LIVE_PORT, BUF_ALLOC + 1, 1, OP_RW, 0, 65536, 0);
    vq_desc(&txq, 0, TX_HDR, HDR, F_NEXT, 1);
    vq_desc(&txq, 1, BIG, BUF_ALLOC + 1, 0, 0);
    tx_go();
    attack_report2(P, "RW of buf_alloc + 1 bytes (beyond our credit) -> RST",
                   expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_op(OP_REQUEST, port, LIVE_PORT);
    attack_report2(P, "a second REQUEST on a live connection -> RST", expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_full(gcid, HOST_CID, 1, 0x99, port, LIVE_PORT, 0, 0, 0, 65536, 0);
    attack_report2(P, "unknown op 0x99 on a live connection -> RST", expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_full(gcid, HOST_CID, 1, OP_RESPONSE, port, LIVE_PORT, 0, 0, 0, 65536, 0);
    attack_report2(P, "RESPONSE on a connection the guest opened -> RST", expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_full(gcid, HOST_CID, 1, OP_SHUTDOWN, port, LIVE_PORT, 0, 0, 3, 65536, 0);
    attack_report2(P, "SHUTDOWN both ways -> RST (5.10.6.5)", expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_op(OP_RST, port, LIVE_PORT);
    attack_report2(P, "RST from the guest closes silently; the port is then unknown (RST)",
                   send_op(OP_CREDIT_REQUEST, port, LIVE_PORT) && expect(OP_RST, port, LIVE_PORT));

    port = next_port++;
    conn_open(port);
    send_full(gcid, HOST_CID, 1, OP_RW, port, LIVE_PORT, 16, 16, 0, 65536, 0);
    vset(vbase, R_STATUS, 0); /* reset with a live connection and data in flight */
    attack_report2(P, "reset with a live connection: a good REQUEST after", vsock_good(vbase));
}

static void flood_cases(void)
{
    start(vbase, 1);
    int ok = 1;
    for (unsigned i = 0; i < MAX_CONNS && ok; i++)
        ok = conn_open(20000 + i);
    attack_report2(P, "256 connections (VSOCK_MAX_CONNS) -> RESPONSE each", ok);
    send_op(OP_REQUEST, 20000 + MAX_CONNS, LIVE_PORT);
    attack_report2(P, "REQUEST 257 -> RST", expect(OP_RST, 20000 + MAX_CONNS, LIVE_PORT));
    send_op(OP_RST, 20000, LIVE_PORT);
    attack_report2(P, "after the guest closes one, a new REQUEST -> RESPONSE", conn_open(30000));
    attack_report2(P, "at the cap, a dead port still answers RST", dead_probe());

    /* RSTs owed while the guest gives no rx buffers: at most RST_QUEUE wait. */
    start(vbase, 0);
    for (unsigned i = 0; i < 100; i++)
        send_op(OP_REQUEST, 50000 + i, DEAD_PORT);
    for (unsigned i = 0; i < RX_N; i++)
        rx_give(i);
    vq_kick(&rxq);
    unsigned n = 0;
    struct pkt p;
    while (n < 200 && rx_next_n(&p, 100000, 1) == WAIT_USED && p.h.op == OP_RST)
        n++;
    attack_report2(P, "100 RSTs owed with no rx buffers: the first 64 arrive, the rest dropped",
                   n == RST_QUEUE && dead_probe());

    start(vbase, 1);
    send_op(OP_REQUEST, next_port++, LIVE_PORT);
    vset(vbase, R_STATUS, 0);
    attack_report2(P, "reset right after a REQUEST, then a good one", vsock_good(vbase));
}

void vsock_attacks(uint64_t base)
{
    vbase = base;
    tx_queue_cases();
    rx_queue_cases();
    packet_cases();
    connection_cases();
    flood_cases();
    vset(base, R_STATUS, 0);
}

/* libFuzzer target: a hostile guest and busy host clients against the real
 * virtio-vsock device, with socketpair(AF_UNIX) ends as the host fds.  The
 * input is a script of steps, so the fuzzer spends its time in the packet
 * rules and the connection state machine rather than in building rings
 * (fuzz_virtio covers those; here the rings are always well formed):
 *   tx packet  header fields from the input (ops, ports and CIDs drawn from
 *              small sets so they meet live connections, len exact or off,
 *              buf_alloc / fwd_cnt raw), payload, cut into 1..4 descriptors
 *   rx / event buffers of a chosen size, kicks
 *   host: write, read, half-close, close a client; connect_guest;
 *   attach_guest (a preamble and a reply of fuzzed lengths) and
 *   end_attached; TRANSPORT_RESET
 * Invariants: no crash or sanitizer report; the device never sets
 * DEVICE_NEEDS_RESET (the rings are fine, only the packets are hostile);
 * host-side buffering per connection never exceeds VSOCK_BUF_ALLOC and
 * connections never exceed VSOCK_MAX_CONNS; an rx used length never
 * exceeds its buffer and always holds the whole packet it announces; an
 * attached connection's answer comes at most once and never after its
 * end, and its end exactly once (checked after a driver reset at the end
 * of each input). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio/mmio.h"
#include "devices/virtio/vsock.h"

#define RAM       0x200000u
#define QSIZE     64
#define RING(q)   ((uint64_t)(q) * 0x1000) /* desc; avail at +0x400, used at +0x800 */
#define RX_BUFS   0x4000u                  /* QSIZE slots of RX_SLOT */
#define RX_SLOT   0x2000u
#define EV_BUFS   0x84000u                 /* QSIZE slots of 16 */
#define TX_DATA   0x90000u                 /* one packet at a time */
#define TX_MAX    (RAM - TX_DATA)
#define GUEST_CID 3
#define MAX_HOST  256
#define CHECK(c) do { if (!(c)) abort(); } while (0)

static struct gmem mem;
static uint8_t *ram;
static struct virtio_vsock *dev;
static struct virtio_mmio t;

/* Host client ends: [i] pairs with the device's fd dev_fd[i]. */
static int host_fd[MAX_HOST], dev_fd[MAX_HOST];
static unsigned nhost;

struct drv_q {
    uint16_t avail, used_seen;
    bool busy[QSIZE]; /* descriptor handed to the device, not yet used */
    uint32_t len[QSIZE];
};
static struct drv_q rxq, evq;
static uint16_t tx_avail;
static uint8_t pkt[TX_MAX];

static void no_irq(void *o) { (void)o; }
static const struct virtio_host_ops mmio_host = {.interrupt = no_irq};

/* Attached fds (virtio_vsock_attach_guest): tags 0..ntags-1 this input,
 * how often each was answered and ended (at most once; ended exactly
 * once by the input's end), and never answered after it ended. */
#define MAX_TAGS 512
static unsigned ntags;
static uint8_t tag_ends[MAX_TAGS], tag_answers[MAX_TAGS];

static int att_answer(void *opaque, const uint8_t *reply)
{
    unsigned tag = (unsigned)(uintptr_t)opaque;
    CHECK(tag < ntags && !tag_ends[tag]);
    tag_answers[tag]++;
    return reply[0] & 1; /* odd: refused */
}

static void att_ended(void *opaque, enum vsock_end how, uint64_t in, uint64_t out)
{
    unsigned tag = (unsigned)(uintptr_t)opaque;
    CHECK(tag < ntags && how <= VSOCK_END_NO_ANSWER);
    (void)in;
    (void)out;
    tag_ends[tag]++;
}

static uint64_t take(const uint8_t **p, size_t *n, unsigned bytes);

static int attach(int fd, uint32_t port, const uint8_t **p, size_t *n)
{
    if (ntags == MAX_TAGS)
        return -ENOSPC;
    struct vsock_attach a = {.answer = att_answer, .ended = att_ended};
    a.pre_len = (uint8_t)(take(p, n, 1) % (VSOCK_PRE_MAX + 1));
    a.reply_len = (uint8_t)(take(p, n, 1) % (VSOCK_REPLY_MAX + 1));
    memset(a.pre, 'h', sizeof(a.pre));
    a.tag = ntags;
    a.opaque = (void *)(uintptr_t)ntags;
    int rc = virtio_vsock_attach_guest(dev, &t, fd, port, &a);
    if (rc == 0) {
        tag_ends[ntags] = tag_answers[ntags] = 0;
        ntags++;
    }
    return rc;
}

static int add_pair(int *dev_end)
{
    int sv[2];
    if (nhost == MAX_HOST || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
        return -EMFILE;
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    host_fd[nhost] = sv[1];
    dev_fd[nhost++] = sv[0];
    *dev_end = sv[0];
    return 0;
}

static int fake_connect(void *opaque, uint32_t port)
{
    (void)opaque;
    int fd;
    if (port % 5 == 4)
        return -ECONNREFUSED; /* some ports have no listener */
    return add_pair(&fd) ? -EMFILE : fd;
}

static void fake_watch(void *opaque, int fd, bool r, bool w)
{
    (void)opaque;
    (void)r;
    (void)w;
    CHECK(fd >= 0);
}

static const struct vsock_host_ops vs_ops = {fake_connect, fake_watch};

static void wr(uint64_t off, uint32_t v)
{
    virtio_mmio_io(&t, off, (uint8_t *)&v, 4, true);
}

static uint32_t rd(uint64_t off)
{
    uint32_t v = 0;
    virtio_mmio_io(&t, off, (uint8_t *)&v, 4, false);
    return v;
}

static void bring_up(void)
{
    wr(0x070, 0); /* closes every device fd */
    for (unsigned i = 0; i < nhost; i++)
        close(host_fd[i]);
    nhost = 0;
    memset(ram, 0, 0x4000);
    memset(&rxq, 0, sizeof(rxq));
    memset(&evq, 0, sizeof(evq));
    tx_avail = 0;
    wr(0x070, 1);
    wr(0x070, 3);
    wr(0x024, 1);
    wr(0x020, 1); /* VERSION_1 */
    wr(0x024, 0);
    wr(0x020, 0);
    wr(0x070, 11);
    for (unsigned q = 0; q < 3; q++) {
        wr(0x030, q);
        wr(0x038, QSIZE);
        wr(0x080, (uint32_t)RING(q));
        wr(0x090, (uint32_t)RING(q) + 0x400);
        wr(0x0a0, (uint32_t)RING(q) + 0x800);
        wr(0x044, 1);
    }
    wr(0x070, 15);
    CHECK(rd(0x070) == 15);
}

static void set_desc(unsigned q, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
                     uint16_t next)
{
    struct virtq_desc d = {addr, len, flags, next};
    memcpy(ram + RING(q) + i * 16u, &d, sizeof(d));
}

static void publish(unsigned q, uint16_t *avail, uint16_t head)
{
    memcpy(ram + RING(q) + 0x400 + 4 + (*avail % QSIZE) * 2u, &head, 2);
    (*avail)++;
    __atomic_store_n((uint16_t *)(ram + RING(q) + 0x400 + 2), *avail, __ATOMIC_RELEASE);
}

/* Takes back what the device used on an rx-like queue, checking lengths. */
static void reap(unsigned q, struct drv_q *d)
{
    uint16_t used;
    memcpy(&used, ram + RING(q) + 0x800 + 2, 2);
    CHECK((uint16_t)(used - d->used_seen) <= QSIZE);
    for (; d->used_seen != used; d->used_seen++) {
        uint32_t id, len;
        memcpy(&id, ram + RING(q) + 0x800 + 4 + (d->used_seen % QSIZE) * 8u, 4);
        memcpy(&len, ram + RING(q) + 0x800 + 8 + (d->used_seen % QSIZE) * 8u, 4);
        CHECK(id < QSIZE && d->busy[id] && len <= d->len[id]);
        if (q == VSOCK_RX_QUEUE && len) {
            uint8_t *h = ram + RX_BUFS + id * RX_SLOT;
            uint32_t plen;
            memcpy(&plen, h + 24, 4);
            CHECK(len >= VSOCK_HDR_BYTES && plen == len - VSOCK_HDR_BYTES);
        }
        d->busy[id] = false;
    }
}

/* Offers up to n buffers of len bytes (clamped to the slot). */
static void offer(unsigned q, struct drv_q *d, unsigned n, uint32_t len)
{
    uint64_t base = q == VSOCK_RX_QUEUE ? RX_BUFS : EV_BUFS;
    uint32_t slot = q == VSOCK_RX_QUEUE ? RX_SLOT : 16;
    if (len & 0x8000)
        len = VSOCK_HDR_BYTES - 2 + (len & 7); /* around one header */
    if (len > slot)
        len = slot;
    for (uint16_t i = 0; i < QSIZE && n; i++) {
        if (d->busy[i])
            continue;
        set_desc(q, i, base + (uint64_t)i * slot, len, VIRTQ_DESC_F_WRITE, 0);
        d->busy[i] = true;
        d->len[i] = len;
        publish(q, &d->avail, i);
        n--;
    }
    virtio_mmio_process(&t, q);
}

static uint64_t take(const uint8_t **p, size_t *n, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && *n; i++, (*p)++, (*n)--)
        v |= (uint64_t)**p << (8 * i);
    return v;
}

/* One guest packet from the input. */
static void tx_packet(const uint8_t **p, size_t *n)
{
    uint8_t sel = (uint8_t)take(p, n, 1), ports = (uint8_t)take(p, n, 1);
    uint32_t plen = (uint32_t)take(p, n, 2);
    if (sel & 0x80)
        plen = plen * 4 % (TX_MAX - VSOCK_HDR_BYTES); /* up to past the credit */
    /* Each take() in its own statement: the input is read in this order. */
    struct vsock_hdr h = {.src_cid = GUEST_CID, .dst_cid = VSOCK_HOST_CID,
                          .src_port = ports & 3, .dst_port = (ports >> 2) & 3, .len = plen,
                          .type = VSOCK_TYPE_STREAM, .op = (uint16_t)(sel & 0x7)};
    if (sel & 0x40)
        h.src_cid = take(p, n, 1);
    if (sel & 0x20)
        h.dst_cid = take(p, n, 1);
    if (sel & 0x10)
        h.type = (uint16_t)take(p, n, 2);
    h.flags = (uint32_t)take(p, n, 1) & 7;
    h.buf_alloc = (uint32_t)take(p, n, 4);
    h.fwd_cnt = (uint32_t)take(p, n, 4);
    if (ports & 0x40)
        h.dst_port += VSOCK_EPHEMERAL; /* host-initiated connections' ports */
    if (ports & 0x80)
        h.len += (uint32_t)(int8_t)take(p, n, 1); /* a lie about len */
    uint32_t total = VSOCK_HDR_BYTES + plen;
    if (ports & 0x20)
        total = (uint32_t)take(p, n, 1) % VSOCK_HDR_BYTES; /* not even a header */
    vsock_hdr_encode(&h, pkt);
    for (uint32_t i = VSOCK_HDR_BYTES; i < total; i++)
        pkt[i] = (uint8_t)i;
    memcpy(ram + TX_DATA, pkt, total);
    /* 1..4 descriptors, cut anywhere (the header too). */
    unsigned ncut = (unsigned)take(p, n, 1) % 4;
    uint32_t start = 0;
    for (unsigned i = 0; i <= ncut; i++) {
        uint32_t end = i < ncut ? start + (uint32_t)take(p, n, 1) : total;
        if (end > total)
            end = total;
        set_desc(VSOCK_TX_QUEUE, (uint16_t)i, TX_DATA + start, end - start,
                 i < ncut ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(i + 1));
        start = end;
    }
    publish(VSOCK_TX_QUEUE, &tx_avail, 0);
    virtio_mmio_process(&t, VSOCK_TX_QUEUE);
}

static void host_step(uint8_t cmd, const uint8_t **p, size_t *n)
{
    if (!nhost)
        return;
    unsigned k = (unsigned)take(p, n, 1) % nhost;
    uint8_t buf[8192];
    uint32_t ev = 0;
    switch (cmd) {
    case 0: { /* the client writes */
        uint32_t len = (uint32_t)take(p, n, 2) % sizeof(buf);
        memset(buf, 0x5a, len);
        if (send(host_fd[k], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
            ev = EPOLLIN;
        break;
    }
    case 1: /* the client reads everything */
        while (recv(host_fd[k], buf, sizeof(buf), MSG_DONTWAIT) > 0)
            ;
        ev = EPOLLOUT;
        break;
    case 2:
        shutdown(host_fd[k], SHUT_WR);
        ev = EPOLLIN;
        break;
    default:
        shutdown(host_fd[k], SHUT_RDWR);
        ev = EPOLLIN | EPOLLOUT | EPOLLHUP;
        break;
    }
    pthread_mutex_lock(&t.lock);
    virtio_vsock_fd_event(dev, &t, dev_fd[k], ev);
    pthread_mutex_unlock(&t.lock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        ram = calloc(1, RAM);
        CHECK(ram && gmem_add_region(&mem, 0, ram, RAM) == 0);
        CHECK(virtio_vsock_create(GUEST_CID, &vs_ops, NULL, &dev) == 0);
        virtio_mmio_init(&t, &virtio_vsock_ops, dev, &mmio_host, NULL, &mem);
        ready = 1;
    }
    bring_up();
    const uint8_t *p = data;
    size_t n = size;
    for (unsigned steps = 0; n && steps < 256; steps++) {
        uint8_t cmd = (uint8_t)take(&p, &n, 1);
        switch (cmd % 10) {
        case 0: case 1: case 2: tx_packet(&p, &n); break;
        case 3: offer(VSOCK_RX_QUEUE, &rxq, 1 + cmd / 10 % 16, (uint32_t)take(&p, &n, 2)); break;
        case 4: offer(VSOCK_EVT_QUEUE, &evq, 1, (uint32_t)take(&p, &n, 1)); break;
        case 5: case 6: host_step(cmd / 10 % 4, &p, &n); break;
        case 7: {
            int fd;
            if (cmd / 10 % 4 == 3) { /* the host ends an attached one (or none) */
                pthread_mutex_lock(&t.lock);
                virtio_vsock_end_attached(dev, &t, (uint64_t)take(&p, &n, 1) % (ntags + 1));
                pthread_mutex_unlock(&t.lock);
            } else if (add_pair(&fd) == 0) {
                uint32_t port = (uint32_t)take(&p, &n, 1) % 4;
                pthread_mutex_lock(&t.lock);
                int rc = cmd / 10 % 4 == 2 ? attach(fd, port, &p, &n)
                                           : virtio_vsock_connect_guest(dev, &t, fd, port);
                pthread_mutex_unlock(&t.lock);
                if (rc) { /* still ours: forget the pair */
                    close(fd);
                    close(host_fd[--nhost]);
                }
            }
            break;
        }
        case 8:
            pthread_mutex_lock(&t.lock);
            virtio_vsock_transport_reset(dev, &t);
            pthread_mutex_unlock(&t.lock);
            break;
        default: virtio_mmio_process(&t, VSOCK_RX_QUEUE); break;
        }
        reap(VSOCK_RX_QUEUE, &rxq);
        reap(VSOCK_EVT_QUEUE, &evq);
        CHECK(!(rd(0x070) & VIRTIO_STATUS_DEVICE_NEEDS_RESET));
        struct virtio_vsock_stats s;
        virtio_vsock_stats(dev, &s);
        CHECK(s.max_buffered <= VSOCK_BUF_ALLOC && s.conns <= VSOCK_MAX_CONNS);
    }
    /* A driver reset ends whatever is left: every attached connection
     * has then ended exactly once. */
    wr(0x070, 0);
    for (unsigned i = 0; i < ntags; i++)
        CHECK(tag_ends[i] == 1 && tag_answers[i] <= 1);
    ntags = 0;
    return 0;
}

#include "devices/virtio/blk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct virtio_blk {
    struct disk *disk; /* NULL: an empty spare slot, capacity 0 */
    bool spare;        /* its disk comes and goes (virtio_blk_swap) */
    char spare_serial[DISK_SERIAL_MAX + 1]; /* GET_ID while it has none */
    uint64_t features;
    uint8_t config[VIRTIO_BLK_CONFIG_BYTES]; /* little-endian, rebuilt on a swap */
    struct virtq_chain chain;                /* the chain being served */
    struct iovec iov[VIRTIO_BLK_SEG_MAX];    /* its data, as host memory */
    uint64_t gpa[VIRTIO_BLK_SEG_MAX];        /* and where each piece is in the guest */
};

/* Pieces every device of this process may still map rather than copy: one
 * VM per process, and the budget bounds that VM's mappings whatever the
 * number of disks. */
static atomic_uint maps_left = VIRTIO_BLK_MAPS_MAX;

/* A request after every check, before any I/O. */
struct blk_request {
    uint32_t type;
    uint64_t offset, len; /* disk bytes (IN, OUT, DISCARD, WRITE_ZEROES) */
    uint64_t id_len;      /* GET_ID: serial bytes to write */
    int iovcnt;           /* IN, OUT: the data is b->iov[0..iovcnt) */
};

/* struct virtio_blk_config (§5.2.4): the offsets of the fields we fill;
 * geometry and writeback stay 0 (not offered), and of the topology only
 * opt_io_size is set. */
enum {
    CFG_CAPACITY = 0, CFG_SIZE_MAX = 8, CFG_SEG_MAX = 12, CFG_BLK_SIZE = 20, CFG_OPT_IO_SIZE = 28,
    CFG_NUM_QUEUES = 34, CFG_MAX_DISCARD_SECTORS = 36, CFG_MAX_DISCARD_SEG = 40,
    CFG_DISCARD_ALIGNMENT = 44, CFG_MAX_WRITE_ZEROES_SECTORS = 48,
    CFG_MAX_WRITE_ZEROES_SEG = 52, CFG_WRITE_ZEROES_MAY_UNMAP = 56,
};

static void config_build(struct virtio_blk *b)
{
    uint8_t *c = b->config;
    memset(c, 0, sizeof(b->config));
    virtio_put_le(c + CFG_CAPACITY, b->disk ? disk_sectors(b->disk) : 0, 8);
    virtio_put_le(c + CFG_SIZE_MAX, VIRTIO_BLK_SIZE_MAX, 4);
    virtio_put_le(c + CFG_SEG_MAX, VIRTIO_BLK_SEG_MAX, 4);
    virtio_put_le(c + CFG_BLK_SIZE, DISK_SECTOR, 4);
    virtio_put_le(c + CFG_OPT_IO_SIZE, VIRTIO_BLK_OPT_IO_BYTES / DISK_SECTOR, 4);
    virtio_put_le(c + CFG_NUM_QUEUES, 1, 2);
    if (b->features & VIRTIO_BIT(VIRTIO_BLK_F_DISCARD)) {
        virtio_put_le(c + CFG_MAX_DISCARD_SECTORS, VIRTIO_BLK_MAX_DISCARD_SECTORS, 4);
        virtio_put_le(c + CFG_MAX_DISCARD_SEG, 1, 4);
        virtio_put_le(c + CFG_DISCARD_ALIGNMENT, VIRTIO_BLK_DISCARD_ALIGNMENT, 4);
        virtio_put_le(c + CFG_MAX_WRITE_ZEROES_SECTORS, VIRTIO_BLK_MAX_WRITE_ZEROES_SECTORS, 4);
        virtio_put_le(c + CFG_MAX_WRITE_ZEROES_SEG, 1, 4);
        /* ZERO_RANGE keeps the blocks allocated, so write-zeroes never
         * deallocates: §5.2.6.2 wants the field clear then. */
        c[CFG_WRITE_ZEROES_MAY_UNMAP] = 0;
    }
}

int virtio_blk_create(struct disk *disk, struct virtio_blk **out)
{
    *out = NULL;
    struct virtio_blk *b = calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    b->disk = disk;
    b->features = VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) |
                  VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) | VIRTIO_BIT(VIRTIO_BLK_F_FLUSH) |
                  VIRTIO_BIT(VIRTIO_BLK_F_TOPOLOGY);
    if (disk_read_only(disk))
        b->features |= VIRTIO_BIT(VIRTIO_BLK_F_RO);
    if (disk_can_discard(disk))
        b->features |= VIRTIO_BIT(VIRTIO_BLK_F_DISCARD) | VIRTIO_BIT(VIRTIO_BLK_F_WRITE_ZEROES);
    config_build(b);
    *out = b;
    return 0;
}

int virtio_blk_create_spare(const char *serial, struct virtio_blk **out)
{
    *out = NULL;
    size_t n = strlen(serial);
    if (n == 0 || n > DISK_SERIAL_MAX)
        return -EINVAL;
    struct virtio_blk *b = calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    b->spare = true;
    memcpy(b->spare_serial, serial, n + 1);
    /* Features are agreed once, at the driver's start: never RO (a disk
     * filled later takes writes, into its overlay), never DISCARD or
     * WRITE_ZEROES (its disks are copy-on-write). */
    b->features = VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) |
                  VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) | VIRTIO_BIT(VIRTIO_BLK_F_FLUSH) |
                  VIRTIO_BIT(VIRTIO_BLK_F_TOPOLOGY);
    config_build(b);
    *out = b;
    return 0;
}

void virtio_blk_destroy(struct virtio_blk *b)
{
    free(b);
}

bool virtio_blk_is_spare(const struct virtio_blk *b)
{
    return b->spare;
}

struct disk *virtio_blk_disk(const struct virtio_blk *b)
{
    return b->disk;
}

/* Under the transport's lock, which the event loop holds for the whole of
 * serving a queue (virtio_mmio_process): no request is between its parse
 * and its I/O on the old disk, so the caller may close it at once, and a
 * request served later meets the new disk (or none: IOERR). */
int virtio_blk_swap(struct virtio_mmio *t, struct disk *d, struct disk **old)
{
    struct virtio_blk *b = t->dev;
    *old = NULL;
    if (t->ops != &virtio_blk_ops || !b->spare)
        return -EPERM;
    if (d && (disk_read_only(d) || disk_can_discard(d)))
        return -EINVAL; /* RO and DISCARD were not offered */
    pthread_mutex_lock(&t->lock);
    int rc = d && b->disk ? -EBUSY : 0;
    if (!rc && (d || b->disk)) { /* emptying an empty slot changes nothing */
        *old = b->disk;
        b->disk = d;
        config_build(b);
        virtio_mmio_config_changed(t);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static uint64_t blk_features(void *dev)
{
    return ((struct virtio_blk *)dev)->features;
}

/* §4.2.2.2 tells a driver which widths to use for each field; a hostile
 * one may use any, so any offset and width is served without reading past
 * the struct, and bytes past it read as zero. */
static void blk_config_read(void *dev, uint64_t off, uint8_t *data, unsigned len)
{
    struct virtio_blk *b = dev;
    memset(data, 0, len);
    if (off >= sizeof(b->config))
        return;
    uint64_t n = sizeof(b->config) - off;
    memcpy(data, b->config + off, n < len ? n : len);
}

/* The disk range of `len` bytes from `sector`, when it is whole sectors
 * inside the disk (overflow-checked: sector is the guest's). */
static bool blk_range(const struct virtio_blk *b, uint64_t sector, uint64_t len,
                      struct blk_request *r)
{
    uint64_t cap = b->disk ? disk_sectors(b->disk) : 0;
    if (len == 0 || len % DISK_SECTOR || sector > cap || len / DISK_SECTOR > cap - sector)
        return false;
    r->offset = sector * DISK_SECTOR; /* sector <= cap < 2^55: no overflow */
    r->len = len;
    return true;
}

/* Turns [start, start+len) of the chain's readable (or writable) bytes into
 * b->iov (and their guest addresses into b->gpa), split at buffer
 * boundaries: at most VIRTIO_BLK_SEG_MAX pieces of at most
 * VIRTIO_BLK_SIZE_MAX bytes, each through gmem_ptr. */
static int blk_map(struct virtio_blk *b, const struct gmem *mem, const struct virtq_chain *c,
                   bool writable, uint64_t start, uint64_t len, int *iovcnt)
{
    unsigned first = writable ? c->nreadable : 0, end = writable ? c->nbufs : c->nreadable;
    int n = 0;
    for (unsigned i = first; i < end && len; i++) {
        const struct virtq_buf *buf = &c->bufs[i];
        if (start >= buf->len) {
            start -= buf->len;
            continue;
        }
        uint64_t take = buf->len - start < len ? buf->len - start : len;
        if (n == VIRTIO_BLK_SEG_MAX || take > VIRTIO_BLK_SIZE_MAX)
            return -E2BIG;
        void *p = gmem_ptr(mem, buf->gpa + start, take);
        if (!p)
            return -EFAULT;
        b->gpa[n] = buf->gpa + start;
        b->iov[n++] = (struct iovec){p, (size_t)take};
        len -= take;
        start = 0;
    }
    if (len)
        return -EFAULT;
    *iovcnt = n;
    return 0;
}

/* DISCARD / WRITE_ZEROES: exactly one segment (max_*_seg is 1), read once. */
static uint8_t parse_discard(struct virtio_blk *b, const struct gmem *mem,
                             const struct virtq_chain *c, uint64_t rdata, uint64_t wdata,
                             struct blk_request *r)
{
    if (!(b->features & VIRTIO_BIT(VIRTIO_BLK_F_DISCARD)))
        return VIRTIO_BLK_S_UNSUPP; /* not offered */
    uint8_t seg[VIRTIO_BLK_SEG_BYTES];
    if (wdata || rdata != sizeof(seg) ||
        virtq_chain_read(mem, c, VIRTIO_BLK_HDR_BYTES, seg, sizeof(seg)))
        return VIRTIO_BLK_S_IOERR;
    uint64_t sector = virtio_get_le(seg, 8);
    uint32_t nsect = (uint32_t)virtio_get_le(seg + 8, 4), flags = (uint32_t)virtio_get_le(seg + 12, 4);
    /* §5.2.6.2: unknown flags, and unmap on a discard, are UNSUPP. */
    if ((flags & ~VIRTIO_BLK_WZ_F_UNMAP) ||
        (r->type == VIRTIO_BLK_T_DISCARD && (flags & VIRTIO_BLK_WZ_F_UNMAP)))
        return VIRTIO_BLK_S_UNSUPP;
    uint32_t max = r->type == VIRTIO_BLK_T_DISCARD ? VIRTIO_BLK_MAX_DISCARD_SECTORS
                                                   : VIRTIO_BLK_MAX_WRITE_ZEROES_SECTORS;
    if (nsect > max || !blk_range(b, sector, (uint64_t)nsect * DISK_SECTOR, r))
        return VIRTIO_BLK_S_IOERR;
    return VIRTIO_BLK_S_OK;
}

/* Checks a request against the chain that carries it (§5.2.6): the 16-byte
 * header, then data, then one status byte.  rdata / wdata are the data
 * bytes in each direction; a request may carry data only in the direction
 * its type moves it. */
static uint8_t blk_parse(struct virtio_blk *b, const struct gmem *mem, const struct virtq_chain *c,
                         struct blk_request *r)
{
    uint8_t hdr[VIRTIO_BLK_HDR_BYTES];
    memset(r, 0, sizeof(*r));
    if (c->readable_len < sizeof(hdr) || virtq_chain_read(mem, c, 0, hdr, sizeof(hdr)))
        return VIRTIO_BLK_S_IOERR;
    r->type = (uint32_t)virtio_get_le(hdr, 4);
    uint64_t sector = virtio_get_le(hdr + 8, 8);
    uint64_t rdata = c->readable_len - sizeof(hdr), wdata = c->writable_len - 1;
    switch (r->type) {
    case VIRTIO_BLK_T_IN:
        if (rdata || !blk_range(b, sector, wdata, r) ||
            blk_map(b, mem, c, true, 0, wdata, &r->iovcnt))
            return VIRTIO_BLK_S_IOERR;
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_OUT:
        /* §5.2.6.2: with RO offered, a write is IOERR and writes nothing. */
        if (!b->disk || disk_read_only(b->disk) || wdata || !blk_range(b, sector, rdata, r) ||
            blk_map(b, mem, c, false, sizeof(hdr), rdata, &r->iovcnt))
            return VIRTIO_BLK_S_IOERR;
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_FLUSH:
        return rdata || wdata ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_GET_ID:
        if (rdata || !wdata)
            return VIRTIO_BLK_S_IOERR;
        r->id_len = wdata < DISK_SERIAL_MAX ? wdata : DISK_SERIAL_MAX;
        return VIRTIO_BLK_S_OK;
    case VIRTIO_BLK_T_DISCARD:
    case VIRTIO_BLK_T_WRITE_ZEROES:
        return parse_discard(b, mem, c, rdata, wdata, r);
    default:
        return VIRTIO_BLK_S_UNSUPP;
    }
}

/* Whether piece i of a read at disk offset `off` may take the file's pages
 * in place of a copy: whole pages on both sides, bytes no write can change,
 * and the budget not spent.  Returns the file's fd or -1. */
static int blk_shared_piece(const struct virtio_blk *b, int i, uint64_t off)
{
    uint64_t len = b->iov[i].iov_len;
    if (!b->disk || !atomic_load(&maps_left) || (off | len | b->gpa[i]) & (GMEM_PAGE - 1))
        return -1;
    return disk_shared_fd(b->disk, off, len);
}

/* Takes one from the budget; false when it is spent (another device may
 * have taken the last since blk_shared_piece looked). */
static bool blk_take_map(void)
{
    unsigned n = atomic_load(&maps_left);
    while (n && !atomic_compare_exchange_weak(&maps_left, &n, n - 1))
        ;
    return n != 0;
}

/* IN: pieces of the base image that no write can change are mapped into
 * guest RAM copy-on-write, not copied.  The guest's page cache then holds
 * the host's page cache pages, shared by every VM booting the image until
 * one writes to its copy; in the lab that also keeps TCG's translations of
 * the guest's binaries from one VM to the next (docs/benchmarks.md).  Any
 * piece that cannot be mapped is read as before. */
static int blk_read(struct virtio_blk *b, const struct gmem *mem, const struct blk_request *r)
{
    uint64_t off = r->offset;
    int i = 0;
    /* fd: blk_shared_piece's answer for piece i, asked once per piece. */
    int fd = blk_shared_piece(b, 0, off);
    while (i < r->iovcnt) {
        if (fd >= 0 && blk_take_map()) {
            /* After a failed mapping (the host's limit on mappings, say)
             * the piece holds its old bytes or zeroes: it is read instead. */
            if (gmem_map_private(mem, b->gpa[i], b->iov[i].iov_len, fd, off) == 0) {
                off += b->iov[i++].iov_len;
                fd = i < r->iovcnt ? blk_shared_piece(b, i, off) : -1;
                continue;
            }
        }
        /* The run of pieces up to the next one that maps, in one call. */
        int j = i + 1;
        uint64_t end = off + b->iov[i].iov_len;
        fd = -1;
        while (j < r->iovcnt && (fd = blk_shared_piece(b, j, end)) < 0)
            end += b->iov[j++].iov_len;
        int rc = disk_readv(b->disk, off, b->iov + i, j - i);
        if (rc)
            return rc;
        off = end;
        i = j;
    }
    return 0;
}

/* Does a parsed request; *written gets the data bytes put in the guest's
 * buffers (the status byte is counted by the caller). */
static uint8_t blk_run(struct virtio_blk *b, const struct gmem *mem, const struct virtq_chain *c,
                       const struct blk_request *r, uint32_t *written)
{
    int rc;
    *written = 0;
    /* An empty spare: blk_range let no IN, OUT or discard through; a
     * FLUSH has nothing to make durable for a disk that is gone. */
    if (!b->disk && r->type != VIRTIO_BLK_T_GET_ID)
        return VIRTIO_BLK_S_IOERR;
    switch (r->type) {
    case VIRTIO_BLK_T_IN:
        rc = blk_read(b, mem, r);
        if (!rc)
            *written = (uint32_t)r->len; /* <= SEG_MAX * SIZE_MAX < 2^32 */
        break;
    case VIRTIO_BLK_T_OUT:
        rc = disk_writev(b->disk, r->offset, b->iov, r->iovcnt);
        break;
    case VIRTIO_BLK_T_FLUSH:
        rc = disk_flush(b->disk);
        break;
    case VIRTIO_BLK_T_GET_ID: {
        /* §5.2.6: NUL-padded, no NUL when all 20 bytes are used. */
        char id[DISK_SERIAL_MAX] = {0};
        const char *s = b->disk ? disk_serial(b->disk) : b->spare_serial;
        memcpy(id, s, strnlen(s, sizeof(id)));
        rc = virtq_chain_write(mem, c, 0, id, r->id_len);
        if (!rc)
            *written = (uint32_t)r->id_len;
        break;
    }
    default: /* DISCARD, WRITE_ZEROES: parse let nothing else through */
        rc = disk_discard(b->disk, r->offset, r->len, r->type == VIRTIO_BLK_T_WRITE_ZEROES);
        break;
    }
    return rc ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
}

/* Serves one chain; returns the used length (§2.7.8): the bytes written
 * into the writable buffers, data plus the status byte.  A failed request
 * counts only its status byte (a failed read may have put some disk bytes
 * in the data buffers, never host memory).  A chain with no writable byte
 * has nowhere to put a status: it is returned with length 0 and nothing
 * done; the queue stays usable, only that request is lost to its sender.
 * The status is the last writable byte (§5.2.6), wherever the buffers
 * split. */
static uint32_t blk_serve(struct virtio_blk *b, const struct gmem *mem,
                          const struct virtq_chain *c)
{
    if (c->writable_len == 0)
        return 0;
    struct blk_request r;
    uint32_t written = 0;
    uint8_t status = blk_parse(b, mem, c, &r);
    if (status == VIRTIO_BLK_S_OK)
        status = blk_run(b, mem, c, &r, &written);
    if (virtq_chain_write(mem, c, c->writable_len - 1, &status, 1))
        return 0; /* cannot happen: virtq_pop checked every buffer */
    return written + 1;
}

/* §5.2.6: serves the request queue.  At most `size` chains per call: a
 * driver that refills the ring as fast as it is drained cannot keep the
 * event loop here, and it kicks for each new buffer (the device never
 * sets VIRTQ_USED_F_NO_NOTIFY), so nothing is left unserved. */
static void blk_queue_notify(void *dev, struct virtio_mmio *t, unsigned q)
{
    struct virtio_blk *b = dev;
    if (q != 0)
        return;
    struct virtq *vq = &t->queues[0];
    for (unsigned n = 0; n < vq->size; n++) {
        /* -EINVAL: the driver broke the ring; the transport sets
         * DEVICE_NEEDS_RESET when we return. */
        if (virtq_pop(vq, t->mem, &b->chain) != 1)
            break;
        uint32_t used = blk_serve(b, t->mem, &b->chain);
        if (virtq_push(vq, t->mem, b->chain.head, used))
            break;
    }
    virtio_mmio_used(t, 0);
}

const struct virtio_device_ops virtio_blk_ops = {
    .name = "virtio-blk",
    .device_id = VIRTIO_ID_BLOCK,
    .num_queues = 1,
    .queue_max = VIRTIO_BLK_QUEUE_MAX,
    .features = blk_features,
    .config_read = blk_config_read,
    .queue_notify = blk_queue_notify,
    .reset = NULL, /* no state outlives a request */
};

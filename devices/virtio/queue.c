#include "devices/virtio/queue.h"

#include <errno.h>
#include <string.h>

/* Ring sizes at a given queue size (§2.7.5, §2.7.6, §2.7.8), including the
 * event fields, so a ring is checked at its largest. */
#define DESC_BYTES(n)  ((uint64_t)(n) * 16)
#define AVAIL_BYTES(n) (6 + (uint64_t)(n) * 2)
#define USED_BYTES(n)  (6 + (uint64_t)(n) * 8)

void virtq_reset(struct virtq *q)
{
    uint16_t max = q->max_size;
    memset(q, 0, sizeof(*q));
    q->max_size = max;
}

int virtq_validate(const struct virtq *q, const struct gmem *mem)
{
    uint16_t n = q->size;
    /* VIRTQ_MAX_SIZE too: a chain is at most `size` long and struct
     * virtq_chain holds VIRTQ_MAX_SIZE buffers, whatever a device claims. */
    if (n == 0 || n > q->max_size || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
        return -EINVAL;
    if ((q->desc_gpa & 15) || (q->avail_gpa & 1) || (q->used_gpa & 3))
        return -EINVAL;
    if (!gmem_ptr(mem, q->desc_gpa, DESC_BYTES(n)) || !gmem_ptr(mem, q->avail_gpa, AVAIL_BYTES(n)) ||
        !gmem_ptr(mem, q->used_gpa, USED_BYTES(n)))
        return -EINVAL;
    return 0;
}

/* A 16-bit ring field, read once with acquire ordering.  The queue was
 * validated when it became ready and guest RAM never moves, so the pointer
 * is good; the NULL check is for a queue that was never validated. */
static int ring_load16(const struct gmem *mem, uint64_t gpa, uint16_t *out)
{
    uint16_t *p = gmem_ptr(mem, gpa, 2);
    if (!p)
        return -EINVAL;
    *out = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    return 0;
}

static int virtq_break(struct virtq *q)
{
    q->broken = true;
    return -EINVAL;
}

/* Copies descriptor `idx` into *d (once) and checks it. */
static int desc_fetch(const struct virtq *q, const struct gmem *mem, uint16_t idx,
                      struct virtq_desc *d)
{
    const void *p = gmem_ptr(mem, q->desc_gpa + (uint64_t)idx * 16, 16);
    if (!p)
        return -EINVAL;
    memcpy(d, p, sizeof(*d));
    if (d->flags & VIRTQ_DESC_F_INDIRECT)
        return -EINVAL; /* not offered, so not allowed */
    if (!gmem_ptr(mem, d->addr, d->len))
        return -EINVAL; /* outside RAM, or addr + len wraps */
    return 0;
}

int virtq_avail_idx(const struct virtq *q, const struct gmem *mem, uint16_t *idx)
{
    return ring_load16(mem, q->avail_gpa + 2, idx) ? -EFAULT : 0;
}

int virtq_pop(struct virtq *q, const struct gmem *mem, struct virtq_chain *chain)
{
    if (q->broken)
        return -EINVAL;
    if (!q->ready)
        return 0;
    uint16_t avail_idx;
    if (ring_load16(mem, q->avail_gpa + 2, &avail_idx))
        return virtq_break(q);
    uint16_t pending = (uint16_t)(avail_idx - q->last_avail);
    if (pending == 0)
        return 0;
    if (pending > q->size)
        return virtq_break(q); /* the driver claims more than the ring holds */

    uint16_t head;
    if (ring_load16(mem, q->avail_gpa + 4 + (uint64_t)(q->last_avail % q->size) * 2, &head) ||
        head >= q->size)
        return virtq_break(q);

    chain->head = head;
    chain->nbufs = chain->nreadable = 0;
    chain->readable_len = chain->writable_len = 0;
    uint16_t idx = head;
    /* A chain visits each descriptor at most once, so it has at most `size`
     * links; one more means a loop. */
    for (unsigned hops = 0;; hops++) {
        struct virtq_desc d;
        if (hops >= q->size || hops >= VIRTQ_MAX_SIZE || desc_fetch(q, mem, idx, &d))
            return virtq_break(q);
        bool writable = d.flags & VIRTQ_DESC_F_WRITE;
        if (!writable && chain->nbufs > chain->nreadable)
            return virtq_break(q); /* readable after writable (§2.7.4.2) */
        chain->bufs[chain->nbufs++] = (struct virtq_buf){d.addr, d.len, writable};
        /* Each len is < 2^32 and there are at most 256: no overflow. */
        if (writable) {
            chain->writable_len += d.len;
        } else {
            chain->nreadable++;
            chain->readable_len += d.len;
        }
        if (!(d.flags & VIRTQ_DESC_F_NEXT))
            break;
        if (d.next >= q->size)
            return virtq_break(q);
        idx = d.next;
    }
    q->last_avail++;
    return 1;
}

int virtq_push(struct virtq *q, const struct gmem *mem, uint16_t head, uint32_t written)
{
    if (q->broken || !q->ready || head >= q->size)
        return -EINVAL;
    uint32_t *elem = gmem_ptr(mem, q->used_gpa + 4 + (uint64_t)(q->used_idx % q->size) * 8, 8);
    uint16_t *idx = gmem_ptr(mem, q->used_gpa + 2, 2);
    if (!elem || !idx)
        return virtq_break(q);
    elem[0] = head;
    elem[1] = written;
    q->used_idx++;
    /* The element must be visible before the index that publishes it. */
    __atomic_store_n(idx, q->used_idx, __ATOMIC_RELEASE);
    return 0;
}

bool virtq_should_notify(struct virtq *q, const struct gmem *mem)
{
    if (q->used_idx == q->signalled_used)
        return false;
    /* Order our used-index store before reading the driver's flags. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint16_t flags;
    if (ring_load16(mem, q->avail_gpa, &flags))
        return false;
    q->signalled_used = q->used_idx;
    return !(flags & VIRTQ_AVAIL_F_NO_INTERRUPT);
}

/* Copies [off, off+len) of c's readable (or writable) buffers, taken as
 * one string, to (or from) host. */
static int chain_span(const struct gmem *mem, const struct virtq_chain *c, bool writable,
                      uint64_t off, uint8_t *host, uint64_t len)
{
    uint64_t total = writable ? c->writable_len : c->readable_len;
    if (off > total || len > total - off)
        return -EFAULT;
    unsigned first = writable ? c->nreadable : 0;
    unsigned end = writable ? c->nbufs : c->nreadable;
    for (unsigned i = first; i < end && len; i++) {
        const struct virtq_buf *b = &c->bufs[i];
        if (off >= b->len) {
            off -= b->len;
            continue;
        }
        uint64_t n = b->len - off < len ? b->len - off : len;
        uint8_t *g = gmem_ptr(mem, b->gpa + off, n);
        if (!g)
            return -EFAULT;
        if (writable)
            memcpy(g, host, n);
        else
            memcpy(host, g, n);
        host += n;
        len -= n;
        off = 0;
    }
    return len ? -EFAULT : 0;
}

int virtq_chain_read(const struct gmem *mem, const struct virtq_chain *c, uint64_t off,
                     void *dst, uint64_t len)
{
    return chain_span(mem, c, false, off, dst, len);
}

int virtq_chain_write(const struct gmem *mem, const struct virtq_chain *c, uint64_t off,
                      const void *src, uint64_t len)
{
    return chain_span(mem, c, true, off, (uint8_t *)src, len);
}

void *virtq_chain_piece(const struct gmem *mem, const struct virtq_chain *c, bool writable,
                        uint64_t off, uint64_t max, uint64_t *len)
{
    *len = 0;
    unsigned first = writable ? c->nreadable : 0;
    unsigned end = writable ? c->nbufs : c->nreadable;
    for (unsigned i = first; i < end && max; i++) {
        const struct virtq_buf *b = &c->bufs[i];
        if (off >= b->len) {
            off -= b->len;
            continue;
        }
        uint64_t n = b->len - off < max ? b->len - off : max;
        void *g = gmem_ptr(mem, b->gpa + off, n);
        if (g)
            *len = n;
        return g;
    }
    return NULL;
}

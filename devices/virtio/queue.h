/* The split virtqueue (virtio 1.2 §2.7), device side, with every check in
 * docs/design.md.  The rings live in guest memory and are hostile: each ring
 * field is read once into a local, each descriptor is copied once, every
 * index is checked against the queue size, a chain is at most `size` long,
 * and every address goes through gmem_ptr.  A malformed chain makes
 * virtq_pop return -EINVAL and marks the queue broken; the transport then
 * sets DEVICE_NEEDS_RESET.  Indirect descriptors are not offered. */
#ifndef AIRLOCK_DEVICES_VIRTIO_QUEUE_H
#define AIRLOCK_DEVICES_VIRTIO_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/memory/gmem.h"

#define VIRTQ_MAX_SIZE 256

/* §2.7.5 descriptor flags */
#define VIRTQ_DESC_F_NEXT     1
#define VIRTQ_DESC_F_WRITE    2
#define VIRTQ_DESC_F_INDIRECT 4
/* §2.7.6 / §2.7.8 ring flags */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq {
    uint16_t max_size;  /* what QueueNumMax reports */
    uint16_t size;      /* what the driver chose (QueueNum) */
    bool ready;
    bool broken;        /* the driver broke the queue's rules */
    bool event_idx;     /* VIRTIO_F_EVENT_IDX negotiated */
    uint64_t desc_gpa, avail_gpa, used_gpa;
    uint16_t last_avail; /* next avail ring entry to take */
    uint16_t used_idx;   /* next used ring entry to fill */
    uint16_t signalled_used; /* used_idx when the driver was last notified */
};

/* One buffer of a chain: where it is and which way data flows. */
struct virtq_buf {
    uint64_t gpa;
    uint32_t len;
    bool writable; /* device writes into it */
};

/* A descriptor chain, copied out of guest memory and validated: readable
 * buffers first, then writable ones (§2.7.4.2), totals overflow-free. */
struct virtq_chain {
    uint16_t head;
    unsigned nbufs;
    unsigned nreadable; /* bufs[0..nreadable) are device-readable */
    uint64_t readable_len, writable_len;
    struct virtq_buf bufs[VIRTQ_MAX_SIZE];
};

/* Resets the queue to its power-on state (keeps max_size). */
void virtq_reset(struct virtq *q);

/* Checks the configuration the driver wrote before it may become ready:
 * size a power of two in 1..max_size, each ring inside guest RAM at its full
 * size and aligned (desc 16, avail 2, used 4; §2.7).  0 or -EINVAL. */
int virtq_validate(const struct virtq *q, const struct gmem *mem);

/* Takes the next available chain.  Returns 1 with *chain filled, 0 when the
 * driver has offered nothing new, -EINVAL when the driver broke a rule (the
 * queue is then broken and stays so until reset). */
int virtq_pop(struct virtq *q, const struct gmem *mem, struct virtq_chain *chain);

/* The driver's avail index as it is in guest memory now (how many chains it
 * has ever made available, mod 2^16).  0, or -EFAULT. */
int virtq_avail_idx(const struct virtq *q, const struct gmem *mem, uint16_t *idx);

/* Returns a chain to the driver with `written` bytes written into its
 * writable buffers.  0, or -EINVAL (used ring not in memory: broken). */
int virtq_push(struct virtq *q, const struct gmem *mem, uint16_t head, uint32_t written);

/* Whether the driver wants an interrupt for what was pushed since the last
 * time this returned true (§2.7.7, §2.7.10: flags or used_event). */
bool virtq_should_notify(struct virtq *q, const struct gmem *mem);

/* Copy between a chain's buffers and host memory, as if the readable (or
 * writable) buffers were one byte string.  -EFAULT if the range is outside
 * the chain or a buffer left guest RAM. */
int virtq_chain_read(const struct gmem *mem, const struct virtq_chain *c, uint64_t off,
                     void *dst, uint64_t len);
int virtq_chain_write(const struct gmem *mem, const struct virtq_chain *c, uint64_t off,
                      const void *src, uint64_t len);

/* Where [off, off + max) of c's readable (or writable) bytes, taken as one
 * string, starts: a pointer into guest memory and, in *len, how many bytes
 * from there are contiguous (1..max; buffers of length 0 are skipped), so
 * a syscall can read or write them in place.  NULL with *len 0 when max is
 * 0, off is at or past the end, or the buffer is not in guest RAM. */
void *virtq_chain_piece(const struct gmem *mem, const struct virtq_chain *c, bool writable,
                        uint64_t off, uint64_t max, uint64_t *len);

#endif

/* virtio-blk (virtio 1.2 §5.2) over a struct disk: one request queue,
 * requests served synchronously on the event loop.  Every request is
 * parsed into a checked struct before any I/O (docs/design.md rules 1-4); a bad
 * request fails with a status byte, never with a crash or a broken queue.
 *
 * Offered: SEG_MAX, SIZE_MAX, BLK_SIZE (512), FLUSH, TOPOLOGY (an
 * optimal I/O size only, VIRTIO_BLK_OPT_IO_BYTES); RO for a ro disk;
 * DISCARD and WRITE_ZEROES for a writable raw disk (fallocate), not for ro
 * or cow.  Requests: IN, OUT, FLUSH, GET_ID, DISCARD, WRITE_ZEROES; any
 * other type gets VIRTIO_BLK_S_UNSUPP. */
#ifndef AIRLOCK_DEVICES_VIRTIO_BLK_H
#define AIRLOCK_DEVICES_VIRTIO_BLK_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/disk.h"
#include "devices/virtio/mmio.h"

/* §5.2.3 feature bits */
#define VIRTIO_BLK_F_SIZE_MAX     1
#define VIRTIO_BLK_F_SEG_MAX      2
#define VIRTIO_BLK_F_RO           5
#define VIRTIO_BLK_F_BLK_SIZE     6
#define VIRTIO_BLK_F_FLUSH        9
#define VIRTIO_BLK_F_TOPOLOGY     10
#define VIRTIO_BLK_F_DISCARD      13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

/* §5.2.6 request types and status values */
#define VIRTIO_BLK_T_IN           0
#define VIRTIO_BLK_T_OUT          1
#define VIRTIO_BLK_T_FLUSH        4
#define VIRTIO_BLK_T_GET_ID       8
#define VIRTIO_BLK_T_DISCARD      11
#define VIRTIO_BLK_T_WRITE_ZEROES 13
#define VIRTIO_BLK_S_OK           0
#define VIRTIO_BLK_S_IOERR        1
#define VIRTIO_BLK_S_UNSUPP       2
#define VIRTIO_BLK_WZ_F_UNMAP     1u /* virtio_blk_discard_write_zeroes.flags */

#define VIRTIO_BLK_HDR_BYTES      16 /* type, reserved, sector */
#define VIRTIO_BLK_SEG_BYTES      16 /* one discard / write-zeroes segment */

/* Limits the device announces (config space, §5.2.4) and enforces. */
#define VIRTIO_BLK_QUEUE_MAX      256
/* Linux's virtio_blk puts the header and the status in descriptors of
 * their own, so a full queue carries queue size - 2 data segments. */
#define VIRTIO_BLK_SEG_MAX        (VIRTIO_BLK_QUEUE_MAX - 2)
/* One segment at most 1 MiB, so one request moves at most 254 MiB: what a
 * conforming driver can send is also what one synchronous preadv on the
 * event loop may take. */
#define VIRTIO_BLK_SIZE_MAX       (1u << 20)
#define VIRTIO_BLK_MAX_DISCARD_SECTORS      (1u << 21) /* 1 GiB: fallocate is cheap */
/* 32 MiB: a file system without ZERO_RANGE gets real zero writes. */
#define VIRTIO_BLK_MAX_WRITE_ZEROES_SECTORS (1u << 16)
#define VIRTIO_BLK_DISCARD_ALIGNMENT        8 /* sectors: 4 KiB host blocks */
/* The optimal I/O size (topology's opt_io_size): every request costs a
 * VM exit, a host syscall and an interrupt whatever its size, so fewer,
 * larger reads are cheaper.  Linux reads ahead twice this (512 KiB, not
 * its default 128 KiB), so a program's first run faults its file in with
 * a quarter of the requests (docs/benchmarks.md, "Cut: the exits airlock
 * never sees"). */
#define VIRTIO_BLK_OPT_IO_BYTES             (256u << 10)

/* Reads that may map the base image's pages into guest RAM instead of
 * copying them (each can split a guest RAM mapping in two; the host allows
 * a process about 65530): later reads are copied. */
#define VIRTIO_BLK_MAPS_MAX                 4096u

/* Bytes of struct virtio_blk_config the device fills in: up to and
 * including write_zeroes_may_unmap and its padding.  Reads beyond it
 * return zeroes. */
#define VIRTIO_BLK_CONFIG_BYTES   60

struct virtio_blk;

/* A device over `disk` (not owned: the caller closes it after destroying
 * the device).  0 or -ENOMEM. */
int virtio_blk_create(struct disk *disk, struct virtio_blk **out);
void virtio_blk_destroy(struct virtio_blk *b);

/* A spare slot: a device with no disk (capacity 0; reads and writes fail
 * with IOERR) that GET_ID answers with `serial` (1..20 bytes) until a disk
 * fills it.  It is offered writable, without DISCARD/WRITE_ZEROES, since
 * features are agreed once at boot.  0, -EINVAL or -ENOMEM. */
int virtio_blk_create_spare(const char *serial, struct virtio_blk **out);
bool virtio_blk_is_spare(const struct virtio_blk *b);
/* Its disk now (NULL: an empty spare). */
struct disk *virtio_blk_disk(const struct virtio_blk *b);

/* Fills (d) or empties (d NULL) the spare behind transport t: the capacity
 * and GET_ID follow the new disk, ConfigGeneration moves and the driver
 * gets a configuration-change interrupt, so Linux's virtio_blk re-reads
 * the capacity.  The old disk goes to *old, no longer used by the device:
 * the caller closes it.  Takes t's lock: call it from any thread but not
 * from inside a device callback.  Emptying an empty spare is 0 and
 * changes nothing.  -EPERM (not a spare), -EBUSY (filling a full one),
 * -EINVAL (d is
 * read-only or raw-writable: the features offered were neither). */
int virtio_blk_swap(struct virtio_mmio *t, struct disk *d, struct disk **old);

/* Pass with the struct virtio_blk pointer as `dev` to virtio_mmio_init. */
extern const struct virtio_device_ops virtio_blk_ops;

#endif

/* Disk backends behind virtio-blk: a raw image file used in place, read
 * only, or under a private copy-on-write overlay.  One --disk option is one
 * struct disk.  Everything the user named is opened and checked in
 * disk_open, before the sandbox goes on; the I/O calls only use the fds.
 *
 * Offsets and lengths are bytes.  Every I/O call checks its range against
 * the disk itself (the device checks first, but this module does not trust
 * its caller to have done so). */
#ifndef AIRLOCK_DEVICES_DISK_H
#define AIRLOCK_DEVICES_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define DISK_SECTOR      512u
#define DISK_SERIAL_MAX  20 /* virtio 1.2 §5.2.6: the ID string is at most 20 bytes */

/* Copy-on-write clusters are 4 KiB: the page size and the block size of
 * the guest's ext4, so nearly every guest write covers whole clusters and
 * needs no copy-up read from the base; the cap counts close to what the
 * guest really wrote; and the overlay's holes line up with the host file
 * system's blocks.  The bitmap costs 32 KiB per GiB of disk. */
#define DISK_COW_CLUSTER 4096u

struct disk;

/* Opens one --disk option's value, PATH[,ro][,cow[=SIZE]][,serial=ID]:
 *   ro        the file is opened read-only; the device is read-only
 *   cow       the file is opened read-only and never changed; guest writes
 *             go to an unlinked sparse overlay in $TMPDIR (default /tmp)
 *             that vanishes with the process
 *   cow=SIZE  the overlay holds at most SIZE bytes (K/M/G = powers of 1024,
 *             at least one cluster); a write past that fails (-ENOSPC).
 *             Without SIZE the cap is the disk's size, which the overlay
 *             can never exceed anyway
 *   serial=ID what GET_ID returns: 1..20 printable ASCII bytes (default:
 *             the file's base name, cut to 20 bytes)
 * A path cannot contain ','.  The file must be a non-empty regular file
 * whose size is a multiple of 512: a tail would be invisible to the guest,
 * so it is refused rather than silently dropped.  Returns 0 with *out, or
 * -errno with `err` one line naming the option and the path (or the whole
 * value when an option is wrong). */
int disk_open(const char *spec, struct disk **out, char *err, size_t errlen);

/* A copy-on-write disk from files another process opened (a container's
 * root arriving at a running VM, which may open no file itself): base_fd
 * the image, opened O_RDONLY, a non-empty regular file whose size is a
 * multiple of 512; overlay_fd an empty regular file opened O_RDWR (not
 * O_APPEND, not the base itself) that takes the guest's writes; cow_cap
 * the most the overlay may hold (bytes, 0 = the disk's size, else at
 * least one cluster); serial 1..20 printable ASCII bytes.  The base is
 * never written.  On success the disk owns both fds; on failure they stay
 * the caller's, and `err` names what was wrong ("base: ...", "overlay:
 * ...", "serial ...", "cow cap ..."). */
int disk_open_fds(int base_fd, int overlay_fd, uint64_t cow_cap, const char *serial,
                  struct disk **out, char *err, size_t errlen);

/* Closes the file; a cow overlay disappears with it.  NULL is allowed. */
void disk_close(struct disk *d);

/* Capacity in 512-byte sectors. */
uint64_t disk_sectors(const struct disk *d);
bool disk_read_only(const struct disk *d);
/* Whether writes go to an overlay. */
bool disk_is_cow(const struct disk *d);
/* Whether disk_discard works (a writable raw file). */
bool disk_can_discard(const struct disk *d);
/* NUL-terminated, at most DISK_SERIAL_MAX bytes before the NUL. */
const char *disk_serial(const struct disk *d);
const char *disk_path(const struct disk *d);
/* The file as it was when opened (a restore checks it is still that file). */
void disk_identity(const struct disk *d, uint64_t *size, uint64_t *dev, uint64_t *ino,
                   int64_t *mtime_ns);
/* Bytes the cow overlay holds (allocated clusters x cluster size); 0 when
 * not cow. */
uint64_t disk_overlay_bytes(const struct disk *d);
/* The most the cow overlay may hold (bytes; 0 when not cow). */
uint64_t disk_overlay_cap(const struct disk *d);

/* Called (on the thread doing the I/O) the first time the cow overlay's
 * cap turns a write away, with that write's length: the guest gets an I/O
 * error, and the monitor says so once.  Not called for a full host disk. */
typedef void disk_full_fn(void *opaque, const struct disk *d, uint64_t refused);
void disk_set_on_full(struct disk *d, disk_full_fn *fn, void *opaque);

/* Reads / writes [offset, offset + the iovecs' total).  offset and the
 * total must be multiples of 512 and inside the disk; at most IOV_MAX
 * iovecs.  0, or -EINVAL (range), -EROFS (write to a ro disk), -ENOSPC
 * (cow overlay full, or host disk full), -EIO (the file shrank), or the
 * errno of the failed system call. */
int disk_readv(struct disk *d, uint64_t offset, const struct iovec *iov, int iovcnt);
int disk_writev(struct disk *d, uint64_t offset, const struct iovec *iov, int iovcnt);

/* The file a read of [offset, offset+len) copies from unchanged, when no
 * write through this disk can change those bytes: a ro disk's file, or a
 * cow disk's base where the overlay holds none of the range.  Its fd, or
 * -1 (a writable raw disk, a range outside the disk, or one the overlay
 * holds part of).  The caller may then map the file's pages (MAP_PRIVATE)
 * instead of reading them; like a read, that assumes nobody changes or
 * cuts the file on the host while the disk is open (a cut file's mapped
 * pages raise SIGBUS where a read would fail with -EIO). */
int disk_shared_fd(const struct disk *d, uint64_t offset, uint64_t len);

/* Makes completed writes durable (fdatasync).  A ro disk has nothing to
 * flush and a cow overlay is thrown away at exit, so both return 0. */
int disk_flush(struct disk *d);

/* Discards (zero false: the contents become unspecified) or zeroes (zero
 * true: reads return zeroes) [offset, offset+len), both multiples of 512
 * inside the disk.  Only a writable raw file supports it (-EOPNOTSUPP for
 * cow, -EROFS for ro). */
int disk_discard(struct disk *d, uint64_t offset, uint64_t len, bool zero);

/* True when a and b are the same file (st_dev and st_ino) and at least one
 * of them may write it (neither ro nor cow): two devices would then see
 * each other's writes behind their caches, so the monitor refuses the pair.
 * Two ro or cow opens of one file are fine: neither changes it. */
bool disk_same_file(const struct disk *a, const struct disk *b);

/* Snapshots of a cow disk's overlay, as one file: the cluster bitmap
 * (one bit per DISK_COW_CLUSTER of the disk, in 64-bit little-endian
 * words), then the data of each held cluster in cluster order.  Its
 * length is therefore fixed by the bitmap, which the load checks before
 * copying anything into the new VM's (private, fresh) overlay.  -EINVAL
 * for a disk that is not cow or a file that does not fit this disk (err
 * says how), -errno for I/O. */
int disk_snapshot_save(struct disk *d, int fd);
int disk_snapshot_load(struct disk *d, int fd, char *err, size_t errlen);

/* An empty unlinked file in dir, for a copy-on-write overlay: O_TMPFILE
 * where the file system has it, else mkstemp + unlink at once.  The fd
 * (read-write, close-on-exec), or -errno. */
int disk_overlay_file(const char *dir);

/* ---- shared by disk.c and disk_cow.c only ------------------------------- */

struct disk_cow;

/* An overlay over base_fd (not owned) of `size` bytes, holding at most
 * `cap` bytes, created unlinked in directory `dir`.  0 or -errno. */
int disk_cow_create(int base_fd, uint64_t size, uint64_t cap, const char *dir,
                    struct disk_cow **out);
/* The same over overlay_fd, an empty file opened read-write, which the
 * overlay owns from a success on (a failure leaves it the caller's). */
int disk_cow_attach(int base_fd, uint64_t size, uint64_t cap, int overlay_fd,
                    struct disk_cow **out);
void disk_cow_destroy(struct disk_cow *c);
/* As disk_readv / disk_writev, range already checked; len is the total. */
int disk_cow_readv(struct disk_cow *c, uint64_t off, const struct iovec *iov, int iovcnt,
                   uint64_t len);
int disk_cow_writev(struct disk_cow *c, uint64_t off, const struct iovec *iov, int iovcnt,
                    uint64_t len);
uint64_t disk_cow_bytes(const struct disk_cow *c);
/* Whether the overlay holds any cluster of [off, off+len). */
bool disk_cow_holds_any(const struct disk_cow *c, uint64_t off, uint64_t len);
uint64_t disk_cow_cap(const struct disk_cow *c);
/* How many writes the cap has refused. */
uint64_t disk_cow_refused(const struct disk_cow *c);
int disk_cow_save(struct disk_cow *c, int fd);
int disk_cow_load(struct disk_cow *c, int fd, char *err, size_t errlen);


#endif

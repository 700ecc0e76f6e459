/* Whole transfers to and from a disk backend's files, shared by the raw
 * backend (disk.c) and the copy-on-write overlay (disk_cow.c). */
#ifndef AIRLOCK_DEVICES_DISK_IO_H
#define AIRLOCK_DEVICES_DISK_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/* preadv / pwritev until everything moved: retries short transfers and
 * EINTR.  A read that meets end of file is -EIO. */
int disk_rw_all(int fd, const struct iovec *iov, int iovcnt, uint64_t off, bool write);

#endif

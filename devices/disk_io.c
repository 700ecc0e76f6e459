#include "devices/disk_io.h"

#include <errno.h>
#include <sys/uio.h>

int disk_rw_all(int fd, const struct iovec *iov, int iovcnt, uint64_t off, bool write)
{
    int i = 0;
    size_t skip = 0; /* bytes of iov[i] already moved */
    /* Each pass moves at least one byte or skips an empty iovec, or fails. */
    for (;;) {
        while (i < iovcnt && iov[i].iov_len == skip) {
            i++;
            skip = 0;
        }
        if (i == iovcnt)
            return 0;
        struct iovec first = {(uint8_t *)iov[i].iov_base + skip, iov[i].iov_len - skip};
        ssize_t r;
        if (skip) /* resume inside iov[i] with a one-element vector */
            r = write ? pwritev(fd, &first, 1, (off_t)off) : preadv(fd, &first, 1, (off_t)off);
        else
            r = write ? pwritev(fd, iov + i, iovcnt - i, (off_t)off)
                      : preadv(fd, iov + i, iovcnt - i, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO; /* end of file: the image shrank under us */
        off += (uint64_t)r;
        size_t moved = (size_t)r;
        while (moved && i < iovcnt) {
            size_t left = iov[i].iov_len - skip;
            if (moved < left) {
                skip += moved;
                moved = 0;
            } else {
                moved -= left;
                i++;
                skip = 0;
            }
        }
    }
}

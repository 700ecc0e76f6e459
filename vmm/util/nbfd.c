#include "vmm/util/nbfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int nbfd_twin(int fd)
{
    struct stat st, twin;
    if (fstat(fd, &st) < 0)
        return -errno;
    /* Only these: reopening another character device could have side
     * effects (a tape rewinds on close), and no other kind stalls. */
    if (!S_ISFIFO(st.st_mode) && !(S_ISCHR(st.st_mode) && isatty(fd)))
        return -ENOTSUP;
    char path[40];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int t = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (t < 0)
        return -errno;
    /* The same pipe or tty, not whatever that name now leads to. */
    if (fstat(t, &twin) < 0 || twin.st_dev != st.st_dev || twin.st_ino != st.st_ino ||
        twin.st_rdev != st.st_rdev) {
        close(t);
        return -ENXIO;
    }
    return t;
}

void nbfd_say(int fd, const char *msg, size_t len)
{
    ssize_t n;
    while (len && ((n = write(fd, msg, len)) > 0 || (n < 0 && errno == EINTR))) {
        if (n > 0) {
            msg += n;
            len -= (size_t)n;
        }
    }
}

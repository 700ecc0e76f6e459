#include "vmm/util/vsock_uds.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int vsock_uds_dial(const char *path, uint32_t port)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int w = snprintf(addr.sun_path, sizeof(addr.sun_path), "%s_%u", path, port);
    if (w < 0 || (size_t)w >= sizeof(addr.sun_path))
        return -ENAMETOOLONG;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    /* A local listener accepts at once or not at all: EINPROGRESS cannot
     * happen for AF_UNIX, EAGAIN (backlog full) is a refusal. */
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

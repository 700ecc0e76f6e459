/* Pid files; see pid_file.h. */
#include "vmm/runtime/pid_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int pid_file_write(const char *path, pid_t pid)
{
    char tmp[PATH_MAX + 16], num[24];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int n = snprintf(num, sizeof(num), "%d", (int)pid);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, num, (size_t)n);
    int e = w == n ? 0 : EIO;
    if (close(fd) < 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) < 0)
        e = errno;
    if (e)
        unlink(tmp);
    return -e;
}

#include "vmm/util/open_resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

int open_resolve(int dir, const char *rel, int flags, uint64_t resolve)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = resolve | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, dir, rel[0] ? rel : ".", &how, sizeof(how));
    return fd < 0 ? -errno : (int)fd;
}

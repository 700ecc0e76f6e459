#include "vmm/memory/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mapped_file_open(struct mapped_file *f, const char *option, const char *path, size_t max,
                     char *err, size_t errlen)
{
    f->data = NULL;
    f->size = 0;
    f->fd = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s %s: %s", option, path, strerror(e));
        return -e;
    }
    struct stat st;
    int ret = 0;
    if (fstat(fd, &st) < 0) {
        ret = -errno;
        snprintf(err, errlen, "%s %s: %s", option, path, strerror(-ret));
    } else if (S_ISDIR(st.st_mode)) {
        ret = -EISDIR;
        snprintf(err, errlen, "%s %s: is a directory, not a file", option, path);
    } else if (!S_ISREG(st.st_mode)) {
        ret = -EINVAL;
        snprintf(err, errlen, "%s %s: not a regular file", option, path);
    } else if (st.st_size == 0) {
        ret = -EINVAL;
        snprintf(err, errlen, "%s %s: file is empty", option, path);
    } else if ((uint64_t)st.st_size > max) {
        ret = -EFBIG;
        snprintf(err, errlen, "%s %s: %lld bytes is more than the %zu MiB allowed", option, path,
                 (long long)st.st_size, max >> 20);
    } else {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            ret = -errno;
            snprintf(err, errlen, "%s %s: cannot map: %s", option, path, strerror(-ret));
        } else {
            f->data = p;
            f->size = (size_t)st.st_size;
            f->fd = fd;
            return 0;
        }
    }
    close(fd);
    return ret;
}

void mapped_file_close(struct mapped_file *f)
{
    /* fd is valid exactly when data is (a zeroed struct has fd 0). */
    if (f->data) {
        munmap((void *)f->data, f->size);
        close(f->fd);
    }
    f->data = NULL;
    f->size = 0;
    f->fd = -1;
}

/* smp-unlock IN OUT: writes OUT, the vmlinux IN with the kernel's
 * one-CPU lock patch already applied (smp_unlock.h says why).  OUT is
 * only for guests with one CPU: airlock picks it for those alone. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/smp_unlock/smp_unlock.h"

static uint8_t *read_all(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    uint8_t *buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0) {
            if (n == 0)
                errno = EIO; /* shrank under us */
            free(buf);
            buf = NULL;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    *size = got;
    return buf;
}

static int write_all(const char *path, const uint8_t *buf, size_t size)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, buf + done, size - done);
        if (n < 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            errno = e;
            return -1;
        }
        done += (size_t)n;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: smp-unlock VMLINUX OUT\n");
        return 2;
    }
    size_t size;
    uint8_t *buf = read_all(argv[1], &size);
    if (!buf) {
        fprintf(stderr, "smp-unlock: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct smp_unlock_stats st;
    char err[256];
    if (smp_unlock(buf, size, &st, err, sizeof(err))) {
        fprintf(stderr, "smp-unlock: %s: %s\n", argv[1], err);
        free(buf);
        return 1;
    }
    if (write_all(argv[2], buf, size)) {
        fprintf(stderr, "smp-unlock: %s: %s\n", argv[2], strerror(errno));
        free(buf);
        return 1;
    }
    free(buf);
    fprintf(stderr, "smp-unlock: %s: %zu lock prefixes on %zu pages of text made DS prefixes "
            "(%zu entries: %zu outside the text, %zu not a lock prefix)\n",
            argv[2], st.patched, st.pages, st.entries, st.outside, st.not_lock);
    return 0;
}

#include "vmm/snapshot/snapshot_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/snapshot/snapshot_file.h"

#define STATE_MAX (64u << 20) /* as snap_decode: far above any real state */

void snap_overlay_name(unsigned i, char out[SNAP_NAME_MAX])
{
    snprintf(out, SNAP_NAME_MAX, "disk%u.cow", i);
}

static int dir_is_empty(int dirfd)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -errno;
    }
    int empty = 1;
    struct dirent *e;
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = 0;
    closedir(d);
    return empty;
}

static int create_file(int dirfd, const char *dir, const char *name, int *fd, char *err,
                       size_t errlen)
{
    *fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (*fd >= 0)
        return 0;
    int e = errno;
    snprintf(err, errlen, "--out %s/%s: %s", dir, name, strerror(e));
    return -e;
}

int snap_dir_create(const char *dir, struct disk *const *disks, unsigned ndisks, bool zlib,
                    struct snap_out *o, char *err, size_t errlen)
{
    *o = (struct snap_out){.state_fd = -1, .memory_fd = -1, .zlib = zlib};
    for (unsigned i = 0; i < LAYOUT_VIRTIO_SLOTS; i++)
        o->overlay_fd[i] = -1;
    for (unsigned i = 0; i < ndisks; i++) {
        if (!disk_read_only(disks[i]) && !disk_is_cow(disks[i])) {
            snprintf(err, errlen,
                     "--disk %s: a snapshot needs ro or cow disks (every VM restored from it "
                     "would write to this file)", disk_path(disks[i]));
            return -EINVAL;
        }
    }
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        int e = errno;
        snprintf(err, errlen, "--out %s: %s", dir, strerror(e));
        return -e;
    }
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int empty = dirfd >= 0 ? dir_is_empty(dirfd) : -errno;
    if (empty <= 0) {
        snprintf(err, errlen, "--out %s: %s", dir,
                 empty == 0 ? "not empty (a snapshot never replaces files: a restored VM may "
                              "be mapping them)"
                            : strerror(-empty));
        if (dirfd >= 0)
            close(dirfd);
        return empty == 0 ? -EEXIST : empty;
    }
    int e = create_file(dirfd, dir, SNAP_MEMORY_FILE, &o->memory_fd, err, errlen);
    for (unsigned i = 0; !e && i < ndisks; i++) {
        if (!disk_is_cow(disks[i]))
            continue;
        char name[SNAP_NAME_MAX];
        snap_overlay_name(i, name);
        e = create_file(dirfd, dir, name, &o->overlay_fd[i], err, errlen);
    }
    /* Last: a directory whose state file is empty is an unfinished snapshot,
     * and a restore refuses it. */
    if (!e)
        e = create_file(dirfd, dir, SNAP_STATE_FILE, &o->state_fd, err, errlen);
    close(dirfd);
    return e;
}

static int open_in(int dirfd, const char *dir, const char *name, int *fd, char *err,
                   size_t errlen)
{
    *fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (*fd >= 0)
        return 0;
    int e = errno;
    snprintf(err, errlen, "--from-snapshot %s/%s: %s", dir, name, strerror(e));
    return -e;
}

/* state.dtb, whole, bounded. */
static int read_state(int fd, const char *dir, void **buf, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > STATE_MAX) {
        snprintf(err, errlen, "--from-snapshot %s/%s: %s", dir, SNAP_STATE_FILE,
                 st.st_size == 0 ? "empty (the snapshot did not finish)"
                                 : "not a regular file of at most 64 MiB");
        return -EINVAL;
    }
    *len = (size_t)st.st_size;
    *buf = malloc(*len);
    if (!*buf)
        return -ENOMEM;
    size_t got = 0;
    while (got < *len) {
        ssize_t n = read(fd, (char *)*buf + got, *len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "--from-snapshot %s/%s: %s", dir, SNAP_STATE_FILE,
                     n < 0 ? strerror(errno) : "shorter than it was");
            return -EIO;
        }
        got += (size_t)n;
    }
    return 0;
}

int snap_dir_open(const char *dir, struct snap_state **stp, int *memory_fd, int *overlay_fd,
                  char *err, size_t errlen)
{
    *stp = NULL;
    int mfd = -1;
    if (memory_fd)
        *memory_fd = -1;
    for (unsigned i = 0; i < LAYOUT_VIRTIO_SLOTS; i++)
        overlay_fd[i] = -1;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        int e = errno;
        snprintf(err, errlen, "--from-snapshot %s: %s", dir, strerror(e));
        return -e;
    }
    int sfd;
    void *buf = NULL;
    size_t len = 0;
    struct snap_state *st = calloc(1, sizeof(*st));
    int e = st ? open_in(dirfd, dir, SNAP_STATE_FILE, &sfd, err, errlen) : -ENOMEM;
    if (!e) {
        e = read_state(sfd, dir, &buf, &len, err, errlen);
        close(sfd);
    }
    if (!e) {
        char why[256];
        if ((e = snap_decode(buf, len, st, why, sizeof(why))))
            snprintf(err, errlen, "--from-snapshot %s/%s: %s", dir, SNAP_STATE_FILE, why);
    }
    free(buf);
    if (!e && memory_fd)
        e = open_in(dirfd, dir, st->memory, &mfd, err, errlen);
    for (unsigned i = 0; !e && i < st->ndisks; i++)
        if (st->disks[i].overlay[0])
            e = open_in(dirfd, dir, st->disks[i].overlay, &overlay_fd[i], err, errlen);
    close(dirfd);
    if (e) {
        if (mfd >= 0)
            close(mfd);
        for (unsigned i = 0; i < LAYOUT_VIRTIO_SLOTS; i++)
            if (overlay_fd[i] >= 0)
                close(overlay_fd[i]);
        free(st);
        return e == -ENOMEM ? (snprintf(err, errlen, "out of memory"), e) : e;
    }
    *stp = st;
    if (memory_fd)
        *memory_fd = mfd;
    return 0;
}

/* A folder copy-out's tar made into a tree beneath a staging folder; see
 * run_copy_tree.h.  Runs in the waiting parent under the "copyout"
 * seccomp list (vmm/jail/seccomp.c): every call here is on it. */
#include "vmm/cli/run_copy_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/util/open_resolve.h"
#include "vmm/util/printable.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)

/* A folder whose mode is set once the tar is done (until then it is
 * 0700, so its own members can be made in it). */
struct dir_mode {
    char *rel;
    uint32_t mode;
};

struct disk {
    int root;
    struct dir_mode *dirs;
    size_t n, cap;
    uint64_t name_bytes, max_names;
};

struct reader {
    int fd;
    uint64_t off, max;
};

static ssize_t tar_read(void *opaque, void *buf, size_t len)
{
    struct reader *r = opaque;
    if (r->off >= r->max)
        return -1; /* past the bound: no tar of this copy is that long */
    if (len > r->max - r->off)
        len = (size_t)(r->max - r->off);
    ssize_t n;
    while ((n = pread(r->fd, buf, len, (off_t)r->off)) < 0 && errno == EINTR)
        ;
    if (n > 0)
        r->off += (uint64_t)n;
    return n;
}

/* The folder that holds rel's last component, opened beneath the root
 * (O_PATH); *base is that component.  buf holds a copy of rel. */
static int parent_of(const struct disk *d, const char *rel, char *buf, const char **base)
{
    snprintf(buf, PATH_MAX, "%s", rel);
    char *slash = strrchr(buf, '/');
    if (!slash) {
        *base = rel;
        return open_resolve(d->root, "", O_PATH | O_DIRECTORY, BENEATH);
    }
    *slash = '\0';
    *base = rel + (slash - buf) + 1;
    return open_resolve(d->root, buf, O_PATH | O_DIRECTORY, BENEATH);
}

static int disk_dir(void *opaque, const char *rel, uint32_t mode)
{
    struct disk *d = opaque;
    char buf[PATH_MAX];
    const char *base;
    if ((d->name_bytes += strlen(rel) + 1) > d->max_names)
        return -E2BIG;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        struct dir_mode *v = realloc(d->dirs, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        d->dirs = v;
        d->cap = cap;
    }
    int p = parent_of(d, rel, buf, &base);
    if (p < 0)
        return p;
    int rc = mkdirat(p, base, 0700) < 0 ? -errno : 0;
    close(p);
    if (rc)
        return rc;
    if (!(d->dirs[d->n].rel = strdup(rel)))
        return -ENOMEM;
    d->dirs[d->n++].mode = mode & 0777;
    return 0;
}

static int disk_symlink(void *opaque, const char *rel, const char *target)
{
    struct disk *d = opaque;
    char buf[PATH_MAX];
    const char *base;
    int p = parent_of(d, rel, buf, &base);
    if (p < 0)
        return p;
    int rc = symlinkat(target, p, base) < 0 ? -errno : 0;
    close(p);
    return rc;
}

static int disk_file(void *opaque, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t)
{
    struct disk *d = opaque;
    char buf[PATH_MAX];
    const char *base;
    (void)size; /* tar_in_data hands out exactly that many bytes */
    int p = parent_of(d, rel, buf, &base);
    if (p < 0)
        return p;
    /* O_EXCL: a name the tar used before (a link among them) is not
     * written through; mode 0 until the data is in */
    int f = open_resolve(p, base, O_WRONLY | O_CREAT | O_EXCL, BENEATH);
    close(p);
    if (f < 0)
        return f;
    char data[65536];
    ssize_t n;
    int rc = 0;
    while (!rc && (n = tar_in_data(t, data, sizeof(data))) > 0)
        rc = agent_write_all(f, data, (size_t)n);
    if (!rc && n < 0)
        rc = -EIO; /* tar_in names the broken archive */
    if (!rc && fchmod(f, mode & 0777) < 0)
        rc = -errno;
    close(f);
    return rc;
}

/* The folders' modes, the deepest first (each came after its parent). */
static int set_dir_modes(struct disk *d, char *err, size_t errlen)
{
    char shown[600];
    for (size_t i = d->n; i-- > 0;) {
        int fd = open_resolve(d->root, d->dirs[i].rel, O_RDONLY | O_DIRECTORY, BENEATH);
        int rc = fd < 0 ? fd : fchmod(fd, d->dirs[i].mode) < 0 ? -errno : 0;
        if (fd >= 0)
            close(fd);
        if (rc) {
            snprintf(err, errlen, "%s: %s", printable(d->dirs[i].rel, shown, sizeof(shown)),
                     strerror(-rc));
            return -1;
        }
    }
    return 0;
}

int run_copy_tree_unpack(int tar_fd, int stage_fd, size_t stage_len,
                         const struct run_copy_tree_limits *lim, char *err, size_t errlen)
{
    struct disk d = {.root = stage_fd, .max_names = lim->max_names};
    struct reader r = {tar_fd, 0, lim->max_archive};
    struct tar_sink sink = {disk_dir, disk_symlink, disk_file, &d};
    struct tar_in_result res;
    /* every path made, the staging folder's own included, fits PATH_MAX */
    size_t room = stage_len + 2 < PATH_MAX ? PATH_MAX - stage_len - 2 : 0;
    int rc = room ? tar_in_extract_within(tar_read, &r, room, &lim->tar, &sink, &res) : -1;
    if (!room) {
        snprintf(err, errlen, "its folder's path is too long");
    } else if (rc) {
        const char *why = res.sink_errno == E2BIG ? "more folders' names than the copy can hold"
                        : res.sink_errno == ELOOP || res.sink_errno == EXDEV
                            ? "a path through a symlink (never followed)"
                            : res.why;
        /* the member as the user knows it: below HOST, not below our top */
        const char *entry = res.entry;
        size_t tl = strlen(RUN_COPY_TREE_TOP);
        if (!strncmp(entry, RUN_COPY_TREE_TOP "/", tl + 1))
            entry += tl + 1;
        snprintf(err, errlen, "%s%s%s", entry, entry[0] ? ": " : "", why);
    } else {
        struct stat st;
        if (fstatat(stage_fd, RUN_COPY_TREE_TOP, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "the tar holds no folder " RUN_COPY_TREE_TOP);
            rc = -1;
        } else {
            rc = set_dir_modes(&d, err, errlen);
        }
    }
    for (size_t i = 0; i < d.n; i++)
        free(d.dirs[i].rel);
    free(d.dirs);
    return rc;
}

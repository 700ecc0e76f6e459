/* One image layer onto a staging folder; see layer_apply.h. */
#include "vmm/image/layer_apply.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/image/image_stop.h"
#include "vmm/util/open_resolve.h"
#include "vmm/util/printable.h"
#include "vmm/util/tar_name.h"

#define NAME_CAP 4096
#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

/* ---- the names this layer wrote (an opaque marker or a whiteout spares
 * them: they hide the layers below, not this one) ---- */

struct name_set {
    char **slot;
    size_t cap, n;
};

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool set_has(const struct name_set *set, const char *name)
{
    if (!set->cap)
        return false;
    for (size_t i = fnv(name) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
        if (!set->slot[i])
            return false;
        if (!strcmp(set->slot[i], name))
            return true;
    }
}

static int set_add(struct name_set *set, const char *name)
{
    if (set_has(set, name))
        return 0;
    if ((set->n + 1) * 2 > set->cap) { /* grow: at most half full */
        size_t cap = set->cap ? set->cap * 2 : 1024;
        char **slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return -ENOMEM;
        for (size_t k = 0; k < set->cap; k++) {
            if (!set->slot[k])
                continue;
            size_t i = fnv(set->slot[k]) & (cap - 1);
            while (slot[i])
                i = (i + 1) & (cap - 1);
            slot[i] = set->slot[k];
        }
        free(set->slot);
        set->slot = slot;
        set->cap = cap;
    }
    size_t i = fnv(name) & (set->cap - 1);
    while (set->slot[i])
        i = (i + 1) & (set->cap - 1);
    if (!(set->slot[i] = strdup(name)))
        return -ENOMEM;
    set->n++;
    return 0;
}

static void set_free(struct name_set *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slot[i]);
    free(set->slot);
    memset(set, 0, sizeof(*set));
}

/* ---- paths beneath the root, never through a symlink ---- */

static int open_beneath(int root, const char *path, int flags)
{
    return open_resolve(root, path, flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
}

/* The folder holding rel's last component, made (0755) where missing; its
 * fd, *base pointing into rel.  -errno (ELOOP/EXDEV: a symlink or ".." on
 * the way; ENOTDIR: a file where a folder should be).  One component at
 * a time, each opened beneath the one before: nothing can lead out. */
static int parent_of(int root, char *rel, const char **base)
{
    int fd = open_beneath(root, "", O_PATH | O_DIRECTORY);
    char *part = rel, *slash;
    while (fd >= 0 && (slash = strchr(part, '/'))) {
        *slash = '\0';
        int next = open_beneath(fd, part, O_PATH | O_DIRECTORY);
        if (next == -ENOENT)
            next = mkdirat(fd, part, 0755) < 0 && errno != EEXIST
                       ? -errno
                       : open_beneath(fd, part, O_PATH | O_DIRECTORY);
        *slash = '/';
        close(fd);
        fd = next;
        part = slash + 1;
    }
    *base = part;
    return fd;
}

/* Removes name in dir, a whole folder tree included (depth-bounded by the
 * tree's own names). */
static int remove_tree(int dir, const char *name, unsigned depth)
{
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dir, name, 0) < 0 ? -errno : 0;
    if (depth > 4096)
        return -ELOOP;
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -errno;
    }
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = remove_tree(dirfd(d), e->d_name, depth + 1);
    closedir(d);
    return rc ? rc : unlinkat(dir, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* ---- one layer ---- */

struct apply {
    struct archive *a;
    int root;
    const struct layer_limits *lim;
    struct layer_totals *tot;
    struct name_set mine;
    struct layer_result *res;
};

static int fail(struct apply *ap, const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct apply *ap, const char *entry, const char *fmt, ...)
{
    printable(entry ? entry : "", ap->res->entry, sizeof(ap->res->entry));
    va_list va;
    va_start(va, fmt);
    vsnprintf(ap->res->why, sizeof(ap->res->why), fmt, va);
    va_end(va);
    return -1;
}

/* An opaque marker in folder `dir` (relative): everything in it that this
 * layer did not write goes. */
static int opaque(struct apply *ap, const char *dir)
{
    int fd = open_beneath(ap->root, dir, O_RDONLY | O_DIRECTORY);
    if (fd == -ENOENT)
        return 0;
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return fd < 0 ? fd : -errno;
    }
    int rc = 0;
    char path[NAME_CAP + 256];
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", e->d_name);
        if (!set_has(&ap->mine, path))
            rc = remove_tree(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    return rc;
}

/* The file's data, at its offsets (holes stay holes), within the limit. */
static int write_data(struct apply *ap, int fd, int64_t size)
{
    const void *buf;
    size_t len;
    la_int64_t off;
    int r;
    while ((r = archive_read_data_block(ap->a, &buf, &len, &off)) == ARCHIVE_OK) {
        if (image_stopped())
            return -EINTR;
        if (off < 0 || (uint64_t)off + len > (uint64_t)size)
            return -EFBIG;
        for (size_t done = 0; done < len;) {
            ssize_t w = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
            if (w < 0)
                return -errno;
            done += (size_t)w;
        }
    }
    if (r != ARCHIVE_EOF)
        return -EIO;
    return ftruncate(fd, size) < 0 ? -errno : 0;
}

static int one(struct apply *ap, struct archive_entry *e,
               int (*on_owner)(void *, const struct layer_owner *), void *opaque_arg)
{
    const char *raw = archive_entry_pathname(e);
    char rel[NAME_CAP];
    const char *why = NULL;
    int clean = raw ? tar_name_clean(raw, rel, sizeof(rel), &why) : -1;
    if (clean < 0)
        return fail(ap, raw, "%s", why ? why : "no name");
    if (clean == 0)
        return 0; /* the root itself */
    for (const char *c = rel; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) /* no file system tool quotes it safely */
            return fail(ap, raw, "a control character in the name");
    unsigned depth = 1;
    for (const char *c = rel; *c; c++)
        depth += *c == '/';
    if (depth > ap->lim->max_depth)
        return fail(ap, raw, "deeper than %u folders", ap->lim->max_depth);
    mode_t type = archive_entry_filetype(e);
    char tmp[NAME_CAP];
    snprintf(tmp, sizeof(tmp), "%s", rel);
    const char *base;
    int dir = parent_of(ap->root, tmp, &base);
    if (dir < 0)
        return fail(ap, raw, "its folder: %s", dir == -ELOOP || dir == -EXDEV
                                                    ? "a symlink or '..' on the way"
                                                    : strerror(-dir));
    int rc = 0;
    /* Whiteouts: hide what the layers below have (never this layer's). */
    if (!strncmp(base, WH_PREFIX, strlen(WH_PREFIX))) {
        size_t dlen = (size_t)(base - tmp);
        char folder[NAME_CAP];
        snprintf(folder, sizeof(folder), "%.*s", dlen ? (int)dlen - 1 : 0, tmp);
        if (!strcmp(base, WH_OPAQUE)) {
            rc = opaque(ap, folder);
        } else {
            const char *victim = base + strlen(WH_PREFIX);
            char vpath[NAME_CAP + 2];
            snprintf(vpath, sizeof(vpath), "%s%s%s", folder, folder[0] ? "/" : "", victim);
            if (!victim[0] || !strcmp(victim, ".") || !strcmp(victim, ".."))
                rc = -EINVAL;
            else if (!set_has(&ap->mine, vpath))
                rc = remove_tree(dir, victim, 0);
        }
        close(dir);
        return rc ? fail(ap, raw, "whiteout: %s", strerror(-rc)) : 0;
    }
    const char *link = archive_entry_hardlink(e);
    mode_t perm = archive_entry_perm(e) & 07777;
    struct stat st;
    bool exists = fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
    /* A later entry replaces an earlier one; a folder stays a folder when
     * a folder comes again (its contents are kept). */
    if (exists && !(type == AE_IFDIR && !link && S_ISDIR(st.st_mode)))
        rc = remove_tree(dir, base, 0);
    if (!rc && link) {
        char target[NAME_CAP];
        const char *lwhy = NULL;
        if (tar_name_clean(link, target, sizeof(target), &lwhy) != 1) {
            close(dir);
            return fail(ap, raw, "hardlink to '%.200s': %s", link, lwhy ? lwhy : "the root");
        }
        const char *tbase;
        int tdir = parent_of(ap->root, target, &tbase);
        struct stat ts;
        if (tdir < 0 || fstatat(tdir, tbase, &ts, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(ts.st_mode))
            rc = -EPERM;
        else if (linkat(tdir, tbase, dir, base, 0) < 0)
            rc = -errno;
        if (tdir >= 0)
            close(tdir);
        if (rc) {
            close(dir);
            return fail(ap, raw, "hardlink to '%.200s': %s", link,
                        rc == -EPERM ? "not a regular file already in the image" : strerror(-rc));
        }
    } else if (!rc && type == AE_IFREG) {
        int64_t size = archive_entry_size(e);
        if (size < 0 || ap->tot->bytes + (uint64_t)size > ap->lim->max_bytes) {
            close(dir);
            return fail(ap, raw, "the image's files pass --max-size (%llu MiB)",
                        (unsigned long long)(ap->lim->max_bytes >> 20));
        }
        ap->tot->bytes += (uint64_t)size;
        int fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        rc = fd < 0 ? -errno : write_data(ap, fd, size);
        if (!rc && fchmod(fd, perm) < 0)
            rc = -errno;
        if (fd >= 0)
            close(fd);
    } else if (!rc && type == AE_IFDIR) {
        if (mkdirat(dir, base, 0755) < 0 && errno != EEXIST)
            rc = -errno;
        int fd = rc ? -1 : openat(dir, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (!rc && (fd < 0 || fchmod(fd, perm | 0700) < 0)) /* we must still write into it */
            rc = -errno;
        if (fd >= 0)
            close(fd);
    } else if (!rc && type == AE_IFLNK) {
        const char *target = archive_entry_symlink(e);
        if (!target || !target[0] || strlen(target) >= NAME_CAP)
            rc = -EINVAL;
        else if (symlinkat(target, dir, base) < 0) /* stored, never followed */
            rc = -errno;
    } else if (!rc) { /* a device node, fifo or socket: not in a VM's root disk */
        ap->tot->skipped_devices++;
        close(dir);
        return 0;
    }
    close(dir);
    if (rc)
        return fail(ap, raw, "%s", strerror(-rc));
    if (set_add(&ap->mine, rel))
        return fail(ap, raw, "out of memory");
    if (!on_owner)
        return 0;
    size_t caps_len = 0;
    const void *caps = NULL;
    archive_entry_xattr_reset(e);
    const char *xname;
    const void *xval;
    size_t xlen;
    while (archive_entry_xattr_next(e, &xname, &xval, &xlen) == ARCHIVE_OK)
        if (!strcmp(xname, "security.capability")) {
            caps = xval;
            caps_len = xlen;
        }
    struct layer_owner o = {.path = rel, .uid = (uid_t)archive_entry_uid(e),
                            .gid = (gid_t)archive_entry_gid(e),
                            .mode = (link ? S_IFREG : type) | perm, .caps = caps,
                            .caps_len = caps_len};
    rc = on_owner(opaque_arg, &o);
    return rc ? fail(ap, raw, "its owner: %s", strerror(-rc)) : 0;
}

int layer_apply(int fd, int root_fd, const struct layer_limits *lim, struct layer_totals *tot,
                int (*on_owner)(void *opaque, const struct layer_owner *o), void *opaque_arg,
                struct layer_result *res)
{
    struct apply ap = {.root = root_fd, .lim = lim, .tot = tot, .res = res};
    memset(res, 0, sizeof(*res));
    ap.a = archive_read_new();
    if (!ap.a)
        return fail(&ap, NULL, "out of memory");
    archive_read_support_filter_all(ap.a);
    archive_read_support_format_tar(ap.a);
    int rc = 0;
    if (archive_read_open_fd(ap.a, fd, 65536) != ARCHIVE_OK) {
        rc = fail(&ap, NULL, "not a tar archive: %s", archive_error_string(ap.a));
    } else {
        struct archive_entry *e;
        int r;
        while (!rc && (r = archive_read_next_header(ap.a, &e)) == ARCHIVE_OK) {
            if (image_stopped()) {
                rc = fail(&ap, NULL, "stopped by a signal");
                break;
            }
            if (++tot->entries > lim->max_entries) {
                rc = fail(&ap, archive_entry_pathname(e), "more than %llu entries",
                          (unsigned long long)lim->max_entries);
                break;
            }
            rc = one(&ap, e, on_owner, opaque_arg);
        }
        if (!rc && r != ARCHIVE_EOF)
            rc = fail(&ap, NULL, "a broken archive: %s", archive_error_string(ap.a));
    }
    archive_read_free(ap.a);
    set_free(&ap.mine);
    return rc;
}

/* A host folder as a cached ext4 disk; see dir_disk.h. */
#include "vmm/image/dir_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vmm/image/image_import.h"
#include "vmm/image/rootfs_disk.h"
#include "vmm/util/printable.h"
#include "vmm/util/rmtree.h"

/* Changes whenever a disk made from the same tree would differ (its
 * owner, its room, the tool's options): old disks then simply miss. */
#define DIR_DISK_FORMAT "airlock-mount-disk-1 owner=65534 headroom=256"

void dir_disk_limits(struct layer_limits *lim)
{
    *lim = (struct layer_limits){.max_bytes = (uint64_t)IMAGE_DEFAULT_MAX_MIB << 20,
                                 .max_entries = IMAGE_MAX_ENTRIES,
                                 .max_depth = IMAGE_MAX_DEPTH};
}

static uint64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- the walk ---- */

static int by_name(const FTSENT **a, const FTSENT **b)
{
    return strcmp((*a)->fts_name, (*b)->fts_name);
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* One entry into the hash: its name, then its metadata as fixed-width
 * words (this host's order: the key never leaves it), then a link's
 * target.  Names hold no NUL, so the NUL after each keeps them apart.
 * By content: no identity (device, inode, times, link count) but a
 * regular file's bytes, so two copies of one tree have one key. */
static int hash_entry(EVP_MD_CTX *ctx, const char *rel, const struct stat *st,
                      const char *target, int content_fd)
{
    bool by_content = content_fd != -1;
    uint64_t m[12] = {
        (uint64_t)st->st_mode, (uint64_t)st->st_uid, (uint64_t)st->st_gid,
        (uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
        (uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec, (uint64_t)st->st_dev,
        (uint64_t)st->st_ino, (uint64_t)st->st_nlink, (uint64_t)st->st_rdev,
    };
    if (by_content)
        memset(&m[4], 0, 7 * sizeof(m[0]));
    if (!EVP_DigestUpdate(ctx, rel, strlen(rel) + 1) || !EVP_DigestUpdate(ctx, m, sizeof(m)) ||
        (target && !EVP_DigestUpdate(ctx, target, strlen(target) + 1)))
        return -1;
    static unsigned char buf[65536];
    ssize_t n;
    while (content_fd >= 0 && (n = read(content_fd, buf, sizeof(buf))) > 0)
        if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
            return -1;
    return 0;
}

/* What is wrong with entry e, or NULL: the bounds, an unreadable entry. */
static const char *entry_problem(const FTSENT *e, const struct layer_limits *lim,
                                 struct dir_walk *w, char *why, size_t cap)
{
    switch (e->fts_info) {
    case FTS_DNR: case FTS_ERR: case FTS_NS:
        snprintf(why, cap, "%s", strerror(e->fts_errno));
        return why;
    case FTS_DC:
        return "a folder that contains itself (a bind mount?)";
    }
    if (has_control(e->fts_name))
        return "a control character in the name";
    if ((unsigned)e->fts_level > lim->max_depth) {
        snprintf(why, cap, "deeper than %u folders (the limit image import uses)", lim->max_depth);
        return why;
    }
    if (++w->entries > lim->max_entries) {
        snprintf(why, cap, "more than %llu entries (the limit image import uses)",
                 (unsigned long long)lim->max_entries);
        return why;
    }
    if (S_ISREG(e->fts_statp->st_mode))
        w->bytes += (uint64_t)e->fts_statp->st_size;
    if (w->bytes > lim->max_bytes) {
        snprintf(why, cap, "more than %llu MiB of files (the limit image import uses)",
                 (unsigned long long)(lim->max_bytes >> 20));
        return why;
    }
    if ((unsigned)e->fts_level > w->depth)
        w->depth = (unsigned)e->fts_level;
    return NULL;
}

static int walk_tree(FTS *fts, EVP_MD_CTX *ctx, size_t root_len, const struct layer_limits *lim,
                     bool by_content, struct dir_walk *w, char *err, size_t cap)
{
    FTSENT *e;
    static char target[PATH_MAX];
    while ((errno = 0, e = fts_read(fts))) {
        if (e->fts_info == FTS_DP)
            continue; /* a folder again, on the way out */
        const char *rel = e->fts_pathlen > root_len ? e->fts_path + root_len + 1 : "";
        char why[200];
        const char *bad = entry_problem(e, lim, w, why, sizeof(why));
        if (bad) {
            char shown[300];
            snprintf(err, cap, "%s: %s", rel[0] ? printable(rel, shown, sizeof(shown)) : ".", bad);
            return -1;
        }
        const char *link = NULL;
        if (S_ISLNK(e->fts_statp->st_mode)) {
            ssize_t n = readlink(e->fts_accpath, target, sizeof(target) - 1);
            if (n < 0) {
                char shown[300];
                snprintf(err, cap, "%s: %s", printable(rel, shown, sizeof(shown)), strerror(errno));
                return -1;
            }
            target[n] = '\0';
            link = target;
        }
        /* -1: by identity; -2: by content, nothing to read */
        int fd = !by_content ? -1 : !S_ISREG(e->fts_statp->st_mode) ? -2
                 : open(e->fts_accpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (by_content && fd == -1) {
            char shown[300];
            snprintf(err, cap, "%s: %s", printable(rel, shown, sizeof(shown)), strerror(errno));
            return -1;
        }
        int rc = hash_entry(ctx, rel, e->fts_statp, link, fd);
        if (fd >= 0)
            close(fd);
        if (rc) {
            snprintf(err, cap, "sha256: out of memory");
            return -1;
        }
    }
    if (errno) {
        snprintf(err, cap, "reading it: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int dir_disk_walk_as(const char *dir, const char *format, bool by_content,
                     const struct layer_limits *lim, struct dir_walk *w, char *err, size_t cap)
{
    memset(w, 0, sizeof(*w));
    char *const paths[] = {(char *)dir, NULL};
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    FTS *fts = NULL;
    int rc = -1;
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
        !EVP_DigestUpdate(ctx, format, strlen(format) + 1) ||
        /* by content, where the tree is does not matter either (each
         * container's overlay has an upper folder of its own) */
        (!by_content && !EVP_DigestUpdate(ctx, dir, strlen(dir) + 1))) {
        snprintf(err, cap, "sha256: out of memory");
        goto out;
    }
    /* FTS_PHYSICAL: links are entries (their own lstat), never followed;
     * FTS_NOCHDIR: the process's working folder stays put. */
    if (!(fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, by_name))) {
        snprintf(err, cap, "%s", strerror(errno));
        goto out;
    }
    if (walk_tree(fts, ctx, strlen(dir), lim, by_content, w, err, cap))
        goto out;
    unsigned char md[32];
    unsigned mdlen = 0;
    if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != sizeof(md)) {
        snprintf(err, cap, "sha256 failed");
        goto out;
    }
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(w->key + 2 * i, 3, "%02x", md[i]);
    rc = 0;
out:
    if (fts)
        fts_close(fts);
    EVP_MD_CTX_free(ctx);
    return rc;
}

int dir_disk_walk(const char *dir, const struct layer_limits *lim, struct dir_walk *w, char *err,
                  size_t cap)
{
    return dir_disk_walk_as(dir, DIR_DISK_FORMAT, false, lim, w, err, cap);
}

/* ---- the disk ---- */

/* A use: the access time is the cache's recency (never the mtime, which
 * a snapshot of a VM using the disk checks). */
static void touch(const char *path)
{
    struct timespec t[2] = {{.tv_nsec = UTIME_NOW}, {.tv_nsec = UTIME_OMIT}};
    utimensat(AT_FDCWD, path, t, 0);
}

static bool is_file(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* Makes the disk of `real` under a temporary name and renames it to
 * out->path unless a disk is there already.  0, or -1 with err. */
static int make_one(const char *mounts, const char *real, const struct dir_disk_how *how,
                    struct dir_disk *out, char *err, size_t cap)
{
    char tmp[PATH_MAX + 96];
    snprintf(tmp, sizeof(tmp), "%s/.%s.%d.ext4", mounts, out->walk.key, (int)getpid());
    struct rootfs_owners none = {0};
    char why[512];
    if (how->keep_owners ? rootfs_disk_make_kept(real, tmp, how->headroom_mib, why, sizeof(why))
                         : rootfs_disk_make_owned(real, &none, tmp, DIR_DISK_OWNER, DIR_DISK_OWNER,
                                                  how->headroom_mib, why, sizeof(why))) {
        snprintf(err, cap, "making its disk: %s", why);
        return -1;
    }
    /* RENAME_NOREPLACE: a disk another process made for the same key may
     * be in use, by a running VM or a snapshot of one; it stays. */
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out->path, RENAME_NOREPLACE) < 0) {
        int e = errno;
        unlink(tmp);
        if (e != EEXIST) {
            snprintf(err, cap, "%s: %s", out->path, strerror(e));
            return -1;
        }
    }
    return 0;
}

/* Whether the store lies in (or is) `real`: its disks would be copied
 * into themselves, and every use would change the folder. */
static bool holds_store(const struct image_store *st, const char *real)
{
    char root[PATH_MAX];
    if (!realpath(st->root, root))
        return false;
    size_t n = strlen(real);
    return !strcmp(real, "/") || (!strncmp(root, real, n) && (root[n] == '/' || !root[n]));
}

/* The key of `real` as `how` says. */
static int key_of(const char *real, const struct dir_disk_how *how, const struct layer_limits *lim,
                  struct dir_walk *w, char *err, size_t cap)
{
    if (how->key)
        return how->key(how->opaque, real, lim, w, err, cap);
    return dir_disk_walk_as(real, how->format, false, lim, w, err, cap);
}

int dir_disk_get(const struct image_store *st, const char *dir, const struct layer_limits *lim,
                 struct dir_disk *out, char *err, size_t cap)
{
    static const struct dir_disk_how mount = {.format = DIR_DISK_FORMAT,
                                              .headroom_mib = DIR_DISK_HEADROOM_MIB};
    return dir_disk_get_how(st, dir, lim, &mount, out, err, cap);
}

int dir_disk_get_how(const struct image_store *st, const char *dir, const struct layer_limits *lim,
                     const struct dir_disk_how *how, struct dir_disk *out, char *err, size_t cap)
{
    memset(out, 0, sizeof(*out));
    char real[PATH_MAX], mounts[PATH_MAX - 128]; /* the store's root leaves room */
    struct stat s;
    if (!realpath(dir, real) || stat(real, &s) < 0)
        return snprintf(err, cap, "%s", strerror(errno)), -1;
    if (!S_ISDIR(s.st_mode))
        return snprintf(err, cap, "not a folder"), -1;
    if (holds_store(st, real))
        return snprintf(err, cap, "holds airlock's image store (%s; AIRLOCK_HOME moves it)",
                        st->root), -1;
    image_store_mounts_path(st, mounts, sizeof(mounts));
    for (unsigned try = 0; try < DIR_DISK_TRIES; try++) {
        uint64_t t0 = mono_ms();
        if (key_of(real, how, lim, &out->walk, err, cap))
            return -1;
        out->walk_ms += (unsigned)(mono_ms() - t0);
        snprintf(out->path, sizeof(out->path), "%s/%s.ext4", mounts, out->walk.key);
        if (is_file(out->path)) {
            out->cached = !out->make_ms;
            touch(out->path);
            return 0;
        }
        t0 = mono_ms();
        if (make_one(mounts, real, how, out, err, cap))
            return -1;
        out->make_ms += (unsigned)(mono_ms() - t0);
        /* The tree copied must be the tree keyed: walked again, it must
         * still have this key, else the disk goes and the loop makes the
         * new key's. */
        struct dir_walk again;
        t0 = mono_ms();
        if (key_of(real, how, lim, &again, err, cap))
            return -1;
        out->walk_ms += (unsigned)(mono_ms() - t0);
        if (!strcmp(again.key, out->walk.key)) {
            touch(out->path);
            dir_disk_evict(st, strrchr(out->path, '/') + 1, DIR_DISK_CACHE_DISKS,
                           (uint64_t)DIR_DISK_CACHE_MIB << 20);
            return 0;
        }
        unlink(out->path);
    }
    snprintf(err, cap, "it kept changing while its disk was made (%d tries)", DIR_DISK_TRIES);
    return -1;
}

/* ---- the cache's bound ---- */

struct cached {
    char name[DIR_DISK_KEY_HEX + 8];
    struct timespec used;
    uint64_t bytes;
};

static int newest_first(const void *a, const void *b)
{
    const struct timespec *x = &((const struct cached *)a)->used,
                          *y = &((const struct cached *)b)->used;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? 1 : -1;
    return x->tv_nsec < y->tv_nsec ? 1 : x->tv_nsec > y->tv_nsec ? -1 : 0;
}

/* A disk's name: <64 hex>.ext4. */
static bool disk_name(const char *n)
{
    return strlen(n) == DIR_DISK_KEY_HEX + 5 && !strcmp(n + DIR_DISK_KEY_HEX, ".ext4") &&
           strspn(n, "0123456789abcdef") == DIR_DISK_KEY_HEX;
}

unsigned dir_disk_evict(const struct image_store *st, const char *keep, unsigned max_disks,
                        uint64_t max_bytes)
{
    char mounts[PATH_MAX], p[PATH_MAX + 300];
    image_store_mounts_path(st, mounts, sizeof(mounts));
    DIR *d = opendir(mounts);
    if (!d)
        return 0;
    struct cached *v = NULL;
    size_t n = 0, capn = 0;
    uint64_t bytes = 0, kept = 0;
    time_t day_ago = time(NULL) - 86400;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat s;
        snprintf(p, sizeof(p), "%s/%s", mounts, de->d_name);
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || lstat(p, &s) < 0)
            continue;
        if (de->d_name[0] == '.') { /* a temporary (or its work folder) a crash left */
            if (s.st_mtime < day_ago && S_ISDIR(s.st_mode))
                rmtree(p);
            else if (s.st_mtime < day_ago)
                unlink(p);
            continue;
        }
        if (!disk_name(de->d_name) || !S_ISREG(s.st_mode))
            continue;
        bytes += (uint64_t)s.st_blocks * 512;
        if (keep && !strcmp(de->d_name, keep)) {
            kept = 1;
            continue;
        }
        if (n == capn) {
            struct cached *nv = realloc(v, (capn = capn ? 2 * capn : 64) * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        memcpy(v[n].name, de->d_name, DIR_DISK_KEY_HEX + 6); /* disk_name: its length */
        v[n].used = s.st_atim;
        v[n].bytes = (uint64_t)s.st_blocks * 512;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof(*v), newest_first);
    unsigned gone = 0;
    while (n && (n + kept > max_disks || bytes > max_bytes)) {
        n--; /* the least recently used */
        snprintf(p, sizeof(p), "%s/%s", mounts, v[n].name);
        if (unlink(p) == 0) {
            bytes -= v[n].bytes;
            gone++;
        }
    }
    free(v);
    return gone;
}

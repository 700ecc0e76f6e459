/* The copy-on-write overlay of a --disk ...,cow disk.
 *
 * The base image is only ever read.  Guest writes go to a sparse overlay
 * file laid out like the disk (disk offset = overlay offset), created
 * unlinked so it vanishes with the process however the process ends.  A
 * bitmap says which DISK_COW_CLUSTER-sized clusters the overlay holds;
 * a read takes each cluster from the overlay if it holds it, else from the
 * base.  A write that covers only part of a cluster the overlay does not
 * hold yet first copies the rest of that cluster from the base.
 *
 * The cap counts allocated clusters x cluster size and is checked for the
 * whole request before anything is written, so a write that would exceed
 * it fails whole (-ENOSPC) and the overlay never grows past it. */
#include "devices/disk.h"
#include "devices/disk_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct disk_cow {
    int base_fd;            /* not owned */
    int fd;                 /* the overlay */
    uint64_t size;          /* disk bytes */
    uint64_t nclusters;
    uint64_t allocated;     /* clusters the overlay holds */
    uint64_t max_clusters;  /* the cap */
    uint64_t refused;       /* writes the cap turned away */
    uint64_t *bitmap;       /* bit c: the overlay holds cluster c */
    uint8_t *bounce;        /* one cluster, for copy-up */
    struct iovec scratch[IOV_MAX]; /* a slice of the caller's iovecs */
};

#define CS ((uint64_t)DISK_COW_CLUSTER)

static bool held(const struct disk_cow *c, uint64_t cl)
{
    return (c->bitmap[cl / 64] >> (cl % 64)) & 1;
}

static void hold(struct disk_cow *c, uint64_t cl)
{
    if (!held(c, cl)) {
        c->bitmap[cl / 64] |= 1ULL << (cl % 64);
        c->allocated++;
    }
}

int disk_overlay_file(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return -errno;
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/airlock-cow-XXXXXX", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (unlink(path) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int disk_cow_attach(int base_fd, uint64_t size, uint64_t cap, int overlay_fd,
                    struct disk_cow **out)
{
    *out = NULL;
    struct disk_cow *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->base_fd = base_fd;
    c->fd = -1; /* the caller's until the end: a failure leaves it open */
    c->size = size;
    c->nclusters = size / CS + (size % CS != 0);
    c->max_clusters = cap / CS < c->nclusters ? cap / CS : c->nclusters;
    /* calloc of a large bitmap is mapped lazily: untouched parts of a big
     * disk's bitmap cost no memory. */
    c->bitmap = calloc(c->nclusters / 64 + 1, sizeof(uint64_t));
    c->bounce = malloc(CS);
    if (!c->bitmap || !c->bounce) {
        disk_cow_destroy(c);
        return -ENOMEM;
    }
    c->fd = overlay_fd;
    *out = c;
    return 0;
}

int disk_cow_create(int base_fd, uint64_t size, uint64_t cap, const char *dir,
                    struct disk_cow **out)
{
    *out = NULL;
    int fd = disk_overlay_file(dir);
    if (fd < 0)
        return fd;
    int e = disk_cow_attach(base_fd, size, cap, fd, out);
    if (e)
        close(fd);
    return e;
}

void disk_cow_destroy(struct disk_cow *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    free(c->bitmap);
    free(c->bounce);
    free(c);
}

uint64_t disk_cow_bytes(const struct disk_cow *c)
{
    return c->allocated * CS;
}

uint64_t disk_cow_cap(const struct disk_cow *c)
{
    return c->max_clusters * CS;
}

uint64_t disk_cow_refused(const struct disk_cow *c)
{
    return c->refused;
}

static size_t bitmap_words(const struct disk_cow *c)
{
    return (size_t)(c->nclusters / 64 + (c->nclusters % 64 != 0));
}

/* write()/read() until all of it moved (plain, not positioned: snapshot
 * files are written and read front to back). */
static int xfer(int fd, void *buf, size_t len, bool out)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = out ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO; /* EIO: the file ended early */
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int disk_cow_save(struct disk_cow *c, int fd)
{
    size_t words = bitmap_words(c);
    for (size_t w = 0; w < words; w++) {
        uint8_t le[8];
        for (unsigned i = 0; i < 8; i++)
            le[i] = (uint8_t)(c->bitmap[w] >> (8 * i));
        int e = xfer(fd, le, sizeof(le), true);
        if (e)
            return e;
    }
    for (uint64_t cl = 0; cl < c->nclusters; cl++) {
        if (!held(c, cl))
            continue;
        struct iovec v = {c->bounce, CS};
        int e = disk_rw_all(c->fd, &v, 1, cl * CS, false);
        if (!e)
            e = xfer(fd, c->bounce, CS, true);
        if (e)
            return e;
    }
    return 0;
}

int disk_cow_load(struct disk_cow *c, int fd, char *err, size_t errlen)
{
    size_t words = bitmap_words(c);
    uint64_t count = 0;
    for (size_t w = 0; w < words; w++) {
        uint8_t le[8];
        int e = xfer(fd, le, sizeof(le), false);
        if (e) {
            snprintf(err, errlen, "overlay: the cluster bitmap is cut short");
            return e == -EIO ? -EINVAL : e;
        }
        uint64_t v = 0;
        for (unsigned i = 0; i < 8; i++)
            v |= (uint64_t)le[i] << (8 * i);
        /* Bits past the disk's last cluster cannot be set by a save. */
        if (w == words - 1 && c->nclusters % 64 && (v >> (c->nclusters % 64))) {
            snprintf(err, errlen, "overlay: clusters held beyond the end of the disk");
            return -EINVAL;
        }
        c->bitmap[w] = v;
        count += (uint64_t)__builtin_popcountll(v);
    }
    if (count > c->max_clusters) {
        snprintf(err, errlen, "overlay: %llu clusters held, more than its cap of %llu",
                 (unsigned long long)count, (unsigned long long)c->max_clusters);
        memset(c->bitmap, 0, words * sizeof(uint64_t));
        return -EINVAL;
    }
    c->allocated = count;
    for (uint64_t cl = 0; cl < c->nclusters; cl++) {
        if (!held(c, cl))
            continue;
        int e = xfer(fd, c->bounce, CS, false);
        struct iovec v = {c->bounce, CS};
        if (!e)
            e = disk_rw_all(c->fd, &v, 1, cl * CS, true);
        if (e) {
            snprintf(err, errlen, "overlay: %s at cluster %llu",
                     e == -EIO ? "the data ends early" : strerror(-e), (unsigned long long)cl);
            return e == -EIO ? -EINVAL : e;
        }
    }
    uint8_t extra;
    if (read(fd, &extra, 1) != 0) {
        snprintf(err, errlen, "overlay: more data than its bitmap holds");
        return -EINVAL;
    }
    return 0;
}

/* c->scratch = bytes [skip, skip+len) of iov; returns the count.  The
 * caller's range lies within iov's total, so the slice has at most iovcnt
 * entries. */
static int slice(struct disk_cow *c, const struct iovec *iov, int iovcnt, uint64_t skip,
                 uint64_t len)
{
    int n = 0;
    for (int i = 0; i < iovcnt && len; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        uint64_t take = iov[i].iov_len - skip < len ? iov[i].iov_len - skip : len;
        c->scratch[n++] = (struct iovec){(uint8_t *)iov[i].iov_base + skip, (size_t)take};
        len -= take;
        skip = 0;
    }
    return n;
}

/* Copies bytes [skip, skip+len) of iov to dst. */
static void gather(uint8_t *dst, const struct iovec *iov, int iovcnt, uint64_t skip, uint64_t len)
{
    for (int i = 0; i < iovcnt && len; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        uint64_t take = iov[i].iov_len - skip < len ? iov[i].iov_len - skip : len;
        memcpy(dst, (uint8_t *)iov[i].iov_base + skip, take);
        dst += take;
        len -= take;
        skip = 0;
    }
}

/* Moves disk bytes [pos, end) between fd and iov bytes starting at
 * pos - off. */
static int run_io(struct disk_cow *c, int fd, const struct iovec *iov, int iovcnt, uint64_t off,
                  uint64_t pos, uint64_t end, bool write)
{
    int n = slice(c, iov, iovcnt, pos - off, end - pos);
    return disk_rw_all(fd, c->scratch, n, pos, write);
}

int disk_cow_readv(struct disk_cow *c, uint64_t off, const struct iovec *iov, int iovcnt,
                   uint64_t len)
{
    uint64_t end = off + len, pos = off;
    /* Runs of clusters that live in the same file are read in one call;
     * each pass advances pos by at least one cluster's worth or to end. */
    while (pos < end) {
        bool ovl = held(c, pos / CS);
        uint64_t run_end = (pos / CS + 1) * CS;
        while (run_end < end && held(c, run_end / CS) == ovl)
            run_end += CS;
        if (run_end > end)
            run_end = end;
        int rc = run_io(c, ovl ? c->fd : c->base_fd, iov, iovcnt, off, pos, run_end, false);
        if (rc)
            return rc;
        pos = run_end;
    }
    return 0;
}

bool disk_cow_holds_any(const struct disk_cow *c, uint64_t off, uint64_t len)
{
    for (uint64_t cl = off / CS; len && cl <= (off + len - 1) / CS; cl++)
        if (held(c, cl))
            return true;
    return false;
}

/* Cluster cl's bytes: [cl*CS, min((cl+1)*CS, size)) (the last may be short). */
static uint64_t cluster_end(const struct disk_cow *c, uint64_t cl)
{
    uint64_t e = (cl + 1) * CS;
    return e < c->size ? e : c->size;
}

/* Part [pos, pend) of a cluster the overlay does not hold: build the whole
 * cluster from the base plus the new bytes, then write it at once. */
static int copy_up(struct disk_cow *c, const struct iovec *iov, int iovcnt, uint64_t off,
                   uint64_t pos, uint64_t pend)
{
    uint64_t cl = pos / CS, start = cl * CS, clen = cluster_end(c, cl) - start;
    struct iovec b = {c->bounce, (size_t)clen};
    int rc = disk_rw_all(c->base_fd, &b, 1, start, false);
    if (rc)
        return rc;
    gather(c->bounce + (pos - start), iov, iovcnt, pos - off, pend - pos);
    rc = disk_rw_all(c->fd, &b, 1, start, true);
    if (rc)
        return rc;
    hold(c, cl);
    return 0;
}

/* Whether [pos, pend), inside one cluster, can go straight to the overlay:
 * it covers the whole cluster, or the overlay already holds it. */
static bool direct(const struct disk_cow *c, uint64_t pos, uint64_t pend)
{
    uint64_t cl = pos / CS;
    return held(c, cl) || (pos == cl * CS && pend == cluster_end(c, cl));
}

int disk_cow_writev(struct disk_cow *c, uint64_t off, const struct iovec *iov, int iovcnt,
                    uint64_t len)
{
    uint64_t end = off + len;
    uint64_t first = off / CS, last = (end - 1) / CS, need = 0;
    for (uint64_t cl = first; cl <= last; cl++)
        need += !held(c, cl);
    if (need > c->max_clusters - c->allocated) {
        c->refused++;
        return -ENOSPC;
    }

    uint64_t pos = off;
    /* Only the first and last clusters can be partial; the clusters
     * between are whole and go out in one run.  Each pass advances pos. */
    while (pos < end) {
        uint64_t pend = cluster_end(c, pos / CS) < end ? cluster_end(c, pos / CS) : end;
        if (!direct(c, pos, pend)) {
            int rc = copy_up(c, iov, iovcnt, off, pos, pend);
            if (rc)
                return rc;
            pos = pend;
            continue;
        }
        uint64_t run_end = pend;
        while (run_end < end) {
            uint64_t next = cluster_end(c, run_end / CS) < end ? cluster_end(c, run_end / CS) : end;
            if (!direct(c, run_end, next))
                break;
            run_end = next;
        }
        int rc = run_io(c, c->fd, iov, iovcnt, off, pos, run_end, true);
        if (rc)
            return rc;
        /* Held only once written: a failed write leaves the base's bytes
         * visible rather than a half-built cluster. */
        for (uint64_t cl = pos / CS; cl <= (run_end - 1) / CS; cl++)
            hold(c, cl);
        pos = run_end;
    }
    return 0;
}

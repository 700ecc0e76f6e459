/* The raw-file disk backend and --disk option parsing; the copy-on-write
 * overlay is in disk_cow.c. */
#include "devices/disk.h"
#include "devices/disk_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct disk {
    int fd;
    uint64_t size; /* bytes, a multiple of DISK_SECTOR */
    bool ro, cow;
    dev_t st_dev;
    ino_t st_ino;
    int64_t mtime_ns;         /* when opened: a snapshot records it */
    struct disk_cow *overlay; /* when cow */
    disk_full_fn *on_full;    /* the overlay's cap first refused a write */
    void *on_full_opaque;
    bool full_reported;
    char *path;
    char serial[DISK_SERIAL_MAX + 1];
};

/* What one --disk value asks for. */
struct disk_spec {
    char *path; /* points into the caller's copy of the value */
    bool ro, cow, has_cap, has_serial;
    uint64_t cap;
    char serial[DISK_SERIAL_MAX + 1];
};

#define OPTIONS_WANTED "(want ro, cow, cow=SIZE, serial=ID)"

/* SIZE: decimal digits, then optionally K, M or G (powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return -ERANGE;
        v = v * 10 + digit;
    }
    if (p == s)
        return -EINVAL;
    unsigned shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    default: break;
    }
    if (*p != '\0')
        return -EINVAL;
    if (v > (UINT64_MAX >> shift))
        return -ERANGE;
    *out = v << shift;
    return 0;
}

/* ID: 1..20 printable ASCII bytes, as the guest shows it verbatim. */
static int parse_serial(const char *s, char *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > DISK_SERIAL_MAX)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e)
            return -EINVAL;
    memcpy(out, s, n + 1);
    return 0;
}

/* One option of the value; `spec` is the whole value for the message. */
static int parse_option(struct disk_spec *sp, char *opt, const char *spec, char *err,
                        size_t errlen)
{
    if (!strcmp(opt, "ro")) {
        sp->ro = true;
    } else if (!strcmp(opt, "cow") || !strncmp(opt, "cow=", 4)) {
        if (sp->cow) {
            snprintf(err, errlen, "--disk %s: 'cow' given twice", spec);
            return -EINVAL;
        }
        sp->cow = true;
        if (opt[3] == '=') {
            int rc = parse_size(opt + 4, &sp->cap);
            if (rc || sp->cap < DISK_COW_CLUSTER) {
                snprintf(err, errlen,
                         "--disk %s: bad overlay size '%s' (want a number of bytes with an "
                         "optional K, M or G suffix, at least 4K)",
                         spec, opt + 4);
                return -EINVAL;
            }
            sp->has_cap = true;
        }
    } else if (!strncmp(opt, "serial=", 7)) {
        if (sp->has_serial) {
            snprintf(err, errlen, "--disk %s: 'serial' given twice", spec);
            return -EINVAL;
        }
        if (parse_serial(opt + 7, sp->serial)) {
            snprintf(err, errlen,
                     "--disk %s: bad serial '%s' (want 1 to %d printable ASCII characters)", spec,
                     opt + 7, DISK_SERIAL_MAX);
            return -EINVAL;
        }
        sp->has_serial = true;
    } else {
        snprintf(err, errlen, "--disk %s: unknown option '%s' " OPTIONS_WANTED, spec, opt);
        return -EINVAL;
    }
    return 0;
}

/* Splits `buf` (a writable copy of `spec`) at commas: PATH then options. */
static int parse_spec(char *buf, const char *spec, struct disk_spec *sp, char *err,
                      size_t errlen)
{
    memset(sp, 0, sizeof(*sp));
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '\0';
    sp->path = buf;
    if (!*sp->path) {
        snprintf(err, errlen, "--disk %s: no file name before the options", spec);
        return -EINVAL;
    }
    /* Each pass consumes one option, so the loop ends with the string. */
    while (comma) {
        char *opt = comma + 1;
        comma = strchr(opt, ',');
        if (comma)
            *comma = '\0';
        if (!*opt) {
            snprintf(err, errlen, "--disk %s: empty option " OPTIONS_WANTED, spec);
            return -EINVAL;
        }
        int rc = parse_option(sp, opt, spec, err, errlen);
        if (rc)
            return rc;
    }
    if (sp->ro && sp->cow) {
        snprintf(err, errlen,
                 "--disk %s: 'ro' and 'cow' contradict each other (ro: the guest cannot write; "
                 "cow: its writes go to a throwaway overlay)",
                 spec);
        return -EINVAL;
    }
    return 0;
}

/* The default serial: the file's base name, cut to 20 bytes, with bytes
 * a serial may not hold (see parse_serial) shown as '_'. */
static void default_serial(const char *path, char *out)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strnlen(base, DISK_SERIAL_MAX);
    for (size_t i = 0; i < n; i++)
        out[i] = (base[i] < 0x20 || base[i] > 0x7e) ? '_' : base[i];
    out[n] = '\0';
}

/* Opens and checks the image file; fills fd, size, st_dev, st_ino. */
static int open_image(struct disk *d, char *err, size_t errlen)
{
    bool writable = !d->ro && !d->cow;
    /* O_NONBLOCK so a FIFO cannot hang the open; it is refused below. */
    int fd = open(d->path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        if (e == EISDIR)
            snprintf(err, errlen, "--disk %s: is a directory, not a disk image", d->path);
        else if (writable && (e == EACCES || e == EPERM || e == EROFS || e == ETXTBSY))
            snprintf(err, errlen,
                     "--disk %s: cannot open for writing: %s (add ,ro or ,cow to use it without "
                     "writing to it)",
                     d->path, strerror(e));
        else
            snprintf(err, errlen, "--disk %s: %s", d->path, strerror(e));
        return -e;
    }
    d->fd = fd;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        snprintf(err, errlen, "--disk %s: %s", d->path, strerror(e));
        return -e;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--disk %s: is a directory, not a disk image", d->path);
        return -EISDIR;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--disk %s: not a regular file (a disk is an image file)", d->path);
        return -EINVAL;
    }
    if (st.st_size == 0) {
        snprintf(err, errlen, "--disk %s: file is empty", d->path);
        return -EINVAL;
    }
    if (st.st_size % DISK_SECTOR) {
        snprintf(err, errlen,
                 "--disk %s: size %lld bytes is not a multiple of 512: the last %lld bytes "
                 "would not be visible to the guest (pad or cut the file)",
                 d->path, (long long)st.st_size, (long long)(st.st_size % DISK_SECTOR));
        return -EINVAL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        snprintf(err, errlen, "--disk %s: %s", d->path, strerror(e));
        return -e;
    }
    d->size = (uint64_t)st.st_size;
    d->st_dev = st.st_dev;
    d->st_ino = st.st_ino;
    d->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return 0;
}

static int open_overlay(struct disk *d, const struct disk_spec *sp, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    /* Default cap: the whole disk (every cluster, the last one even when
     * partial), which is also the most an overlay can ever hold. */
    uint64_t cap = sp->has_cap ? sp->cap : UINT64_MAX;
    int rc = disk_cow_create(d->fd, d->size, cap, dir, &d->overlay);
    if (rc)
        snprintf(err, errlen, "--disk %s: cannot create the copy-on-write overlay in %s: %s",
                 d->path, dir, strerror(-rc));
    return rc;
}

int disk_open(const char *spec, struct disk **out, char *err, size_t errlen)
{
    *out = NULL;
    if (errlen)
        err[0] = '\0';
    char *buf = strdup(spec);
    struct disk *d = calloc(1, sizeof(*d));
    if (!buf || !d) {
        free(buf);
        free(d);
        snprintf(err, errlen, "--disk %s: out of memory", spec);
        return -ENOMEM;
    }
    d->fd = -1;
    struct disk_spec sp;
    int rc = parse_spec(buf, spec, &sp, err, errlen);
    if (rc)
        goto fail;
    d->ro = sp.ro;
    d->cow = sp.cow;
    d->path = strdup(sp.path);
    if (!d->path) {
        snprintf(err, errlen, "--disk %s: out of memory", spec);
        rc = -ENOMEM;
        goto fail;
    }
    if (sp.has_serial)
        memcpy(d->serial, sp.serial, sizeof(d->serial));
    else
        default_serial(d->path, d->serial);
    rc = open_image(d, err, errlen);
    if (!rc && d->cow)
        rc = open_overlay(d, &sp, err, errlen);
    if (rc)
        goto fail;
    free(buf);
    *out = d;
    return 0;
fail:
    free(buf);
    disk_close(d);
    return rc;
}

/* One of disk_open_fds' files: a regular file opened with access mode
 * `acc`; its stat in *st.  A message naming `what` otherwise. */
static int check_fd(int fd, const char *what, int acc, struct stat *st, char *err,
                    size_t errlen)
{
    int fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
    if (fl < 0 || fstat(fd, st) < 0) {
        snprintf(err, errlen, "%s: not an open file", what);
        return -EBADF;
    }
    if (!S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", what);
        return -EINVAL;
    }
    /* O_APPEND makes Linux's pwrite ignore its offset: the overlay's
     * clusters would all land at its end.  An O_PATH fd reads as O_RDONLY
     * but cannot be read. */
    if ((fl & O_ACCMODE) != acc || (fl & (O_APPEND | O_PATH))) {
        snprintf(err, errlen, "%s: must be opened %s", what,
                 acc == O_RDONLY ? "read-only (O_RDONLY)" : "read-write (O_RDWR), not O_APPEND");
        return -EINVAL;
    }
    return 0;
}

int disk_open_fds(int base_fd, int overlay_fd, uint64_t cow_cap, const char *serial,
                  struct disk **out, char *err, size_t errlen)
{
    *out = NULL;
    struct stat b, o;
    int rc = check_fd(base_fd, "base", O_RDONLY, &b, err, errlen);
    if (!rc)
        rc = check_fd(overlay_fd, "overlay", O_RDWR, &o, err, errlen);
    if (rc)
        return rc;
    if (b.st_size == 0 || b.st_size % DISK_SECTOR) {
        snprintf(err, errlen, "base: size %lld bytes is not a positive multiple of 512",
                 (long long)b.st_size);
        return -EINVAL;
    }
    if (o.st_size != 0 || (o.st_dev == b.st_dev && o.st_ino == b.st_ino)) {
        snprintf(err, errlen, "overlay: %s", o.st_size ? "not empty" : "is the base itself");
        return -EINVAL;
    }
    if (cow_cap && cow_cap < DISK_COW_CLUSTER) {
        snprintf(err, errlen, "cow cap %llu: want 0 (the disk's size) or at least %u bytes",
                 (unsigned long long)cow_cap, DISK_COW_CLUSTER);
        return -EINVAL;
    }
    char id[DISK_SERIAL_MAX + 1];
    if (!serial || parse_serial(serial, id)) {
        snprintf(err, errlen, "serial: want 1 to %d printable ASCII bytes", DISK_SERIAL_MAX);
        return -EINVAL;
    }
    struct disk *d = calloc(1, sizeof(*d));
    if (!d || !(d->path = strdup(id))) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    memcpy(d->serial, id, sizeof(id));
    rc = disk_cow_attach(base_fd, (uint64_t)b.st_size, cow_cap ? cow_cap : UINT64_MAX,
                         overlay_fd, &d->overlay);
    if (rc) {
        snprintf(err, errlen, "out of memory");
        free(d->path);
        free(d);
        return rc;
    }
    d->fd = base_fd;
    d->cow = true;
    d->size = (uint64_t)b.st_size;
    d->st_dev = b.st_dev;
    d->st_ino = b.st_ino;
    d->mtime_ns = (int64_t)b.st_mtim.tv_sec * 1000000000 + b.st_mtim.tv_nsec;
    *out = d;
    return 0;
}

void disk_close(struct disk *d)
{
    if (!d)
        return;
    disk_cow_destroy(d->overlay);
    if (d->fd >= 0)
        close(d->fd);
    free(d->path);
    free(d);
}

uint64_t disk_sectors(const struct disk *d)
{
    return d->size / DISK_SECTOR;
}

bool disk_read_only(const struct disk *d)
{
    return d->ro;
}

bool disk_is_cow(const struct disk *d)
{
    return d->cow;
}

bool disk_can_discard(const struct disk *d)
{
    return !d->ro && !d->cow;
}

const char *disk_serial(const struct disk *d)
{
    return d->serial;
}

void disk_identity(const struct disk *d, uint64_t *size, uint64_t *dev, uint64_t *ino,
                   int64_t *mtime_ns)
{
    *size = d->size;
    *dev = (uint64_t)d->st_dev;
    *ino = (uint64_t)d->st_ino;
    *mtime_ns = d->mtime_ns;
}

const char *disk_path(const struct disk *d)
{
    return d->path;
}

uint64_t disk_overlay_bytes(const struct disk *d)
{
    return d->overlay ? disk_cow_bytes(d->overlay) : 0;
}

uint64_t disk_overlay_cap(const struct disk *d)
{
    return d->overlay ? disk_cow_cap(d->overlay) : 0;
}

int disk_snapshot_save(struct disk *d, int fd)
{
    return d->overlay ? disk_cow_save(d->overlay, fd) : -EINVAL;
}

int disk_snapshot_load(struct disk *d, int fd, char *err, size_t errlen)
{
    if (!d->overlay) {
        snprintf(err, errlen, "%s: the snapshot has an overlay for it, but it is not cow", d->path);
        return -EINVAL;
    }
    return disk_cow_load(d->overlay, fd, err, errlen);
}

bool disk_same_file(const struct disk *a, const struct disk *b)
{
    bool writes = disk_can_discard(a) || disk_can_discard(b);
    return writes && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* [off, off+len) is a whole number of sectors inside the disk. */
static bool range_ok(const struct disk *d, uint64_t off, uint64_t len)
{
    return off % DISK_SECTOR == 0 && len % DISK_SECTOR == 0 && off <= d->size &&
           len <= d->size - off;
}

/* The iovecs' total, or -EINVAL for a bad vector or range. */
static int io_check(const struct disk *d, uint64_t off, const struct iovec *iov, int iovcnt,
                    uint64_t *len)
{
    if (iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt > 0 && !iov))
        return -EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > UINT64_MAX - total)
            return -EINVAL;
        total += iov[i].iov_len;
    }
    if (!range_ok(d, off, total))
        return -EINVAL;
    *len = total;
    return 0;
}

int disk_readv(struct disk *d, uint64_t offset, const struct iovec *iov, int iovcnt)
{
    uint64_t len;
    int rc = io_check(d, offset, iov, iovcnt, &len);
    if (rc || len == 0)
        return rc;
    if (d->overlay)
        return disk_cow_readv(d->overlay, offset, iov, iovcnt, len);
    return disk_rw_all(d->fd, iov, iovcnt, offset, false);
}

int disk_shared_fd(const struct disk *d, uint64_t offset, uint64_t len)
{
    if (!range_ok(d, offset, len))
        return -1;
    if (d->overlay)
        return disk_cow_holds_any(d->overlay, offset, len) ? -1 : d->fd;
    return d->ro ? d->fd : -1;
}

int disk_writev(struct disk *d, uint64_t offset, const struct iovec *iov, int iovcnt)
{
    if (d->ro)
        return -EROFS;
    uint64_t len;
    int rc = io_check(d, offset, iov, iovcnt, &len);
    if (rc || len == 0)
        return rc;
    if (d->overlay) {
        uint64_t refused = disk_cow_refused(d->overlay);
        rc = disk_cow_writev(d->overlay, offset, iov, iovcnt, len);
        if (disk_cow_refused(d->overlay) != refused && !d->full_reported && d->on_full) {
            d->full_reported = true;
            d->on_full(d->on_full_opaque, d, len);
        }
        return rc;
    }
    return disk_rw_all(d->fd, iov, iovcnt, offset, true);
}

void disk_set_on_full(struct disk *d, disk_full_fn *fn, void *opaque)
{
    d->on_full = fn;
    d->on_full_opaque = opaque;
}

int disk_flush(struct disk *d)
{
    if (d->ro || d->cow)
        return 0;
    return fdatasync(d->fd) < 0 ? -errno : 0;
}

/* Writes zeroes the slow way, for file systems without ZERO_RANGE. */
static int write_zeroes(int fd, uint64_t off, uint64_t len)
{
    static const uint8_t zeroes[64 * 1024];
    while (len) {
        size_t n = len < sizeof(zeroes) ? (size_t)len : sizeof(zeroes);
        struct iovec v = {(void *)zeroes, n};
        int rc = disk_rw_all(fd, &v, 1, off, true);
        if (rc)
            return rc;
        off += n;
        len -= n;
    }
    return 0;
}

int disk_discard(struct disk *d, uint64_t offset, uint64_t len, bool zero)
{
    if (d->ro)
        return -EROFS;
    if (d->cow)
        return -EOPNOTSUPP;
    if (!range_ok(d, offset, len))
        return -EINVAL;
    if (len == 0)
        return 0;
    /* KEEP_SIZE: the image never changes size under the guest. */
    int mode = FALLOC_FL_KEEP_SIZE | (zero ? FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE);
    if (fallocate(d->fd, mode, (off_t)offset, (off_t)len) == 0)
        return 0;
    int e = errno;
    if (e != EOPNOTSUPP && e != ENOSYS)
        return -e;
    /* virtio 1.2 §5.2.6.2: a discard MAY deallocate, so doing nothing is a
     * correct discard; write-zeroes MUST leave zeroes. */
    return zero ? write_zeroes(d->fd, offset, len) : 0;
}

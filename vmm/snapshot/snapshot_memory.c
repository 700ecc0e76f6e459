#include "vmm/snapshot/snapshot_memory.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PAGE     4096u
#define RUN_MAX  (1u << 20)   /* bytes per pwrite of a run of non-zero pages */
#define BUF_SIZE (256u << 10) /* zlib's input and output buffers (a page multiple) */

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(err, errlen, "memory: ");
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static bool is_zero(const uint8_t *p, size_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

static size_t min_size(uint64_t a, size_t b)
{
    return a < b ? (size_t)a : b;
}

static int write_all(int fd, const uint8_t *p, size_t n, uint64_t off, char *err, size_t errlen)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return fail(err, errlen, w < 0 ? -errno : -EIO, "write at offset %llu: %s",
                        (unsigned long long)off, w < 0 ? strerror(errno) : "wrote nothing");
        p += w, n -= (size_t)w, off += (uint64_t)w;
    }
    return 0;
}

/* Writes the runs of non-zero pages of one region; zero pages stay holes. */
static int write_plain_region(const struct gmem_region *r, int fd, uint64_t foff, char *err,
                              size_t errlen)
{
    uint64_t i = 0;
    while (i < r->size) {
        size_t n = min_size(r->size - i, PAGE);
        if (is_zero(r->host + i, n)) {
            i += n;
            continue;
        }
        uint64_t start = i;
        for (i += n; i < r->size && i - start < RUN_MAX; i += n) {
            n = min_size(r->size - i, PAGE);
            if (is_zero(r->host + i, n))
                break;
        }
        int rc = write_all(fd, r->host + start, i - start, foff + start, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* Deflates next_in..avail_in with `flush`, writing what comes out at *off. */
static int deflate_out(z_stream *z, int flush, uint8_t *out, int fd, uint64_t *off, char *err,
                       size_t errlen)
{
    do {
        z->next_out = out;
        z->avail_out = BUF_SIZE;
        int zrc = deflate(z, flush);
        if (zrc == Z_STREAM_ERROR)
            return fail(err, errlen, -EIO, "zlib: deflate failed");
        size_t n = BUF_SIZE - z->avail_out;
        int rc = write_all(fd, out, n, *off, err, errlen);
        if (rc)
            return rc;
        *off += n;
    } while (z->avail_out == 0);
    return 0;
}

static int write_zlib(const struct gmem *mem, int fd, char *err, size_t errlen)
{
    z_stream z = {0};
    uint8_t *out = malloc(BUF_SIZE);
    if (!out || deflateInit(&z, 1) != Z_OK) {
        free(out);
        return fail(err, errlen, -ENOMEM, "zlib: out of memory");
    }
    uint64_t off = 0;
    int rc = 0;
    for (unsigned r = 0; !rc && r < mem->nregions; r++) {
        const struct gmem_region *g = &mem->regions[r];
        /* avail_in is an unsigned int: feed big regions in pieces. */
        for (uint64_t i = 0; !rc && i < g->size;) {
            size_t n = min_size(g->size - i, 1u << 30);
            z.next_in = g->host + i;
            z.avail_in = (uInt)n;
            rc = deflate_out(&z, Z_NO_FLUSH, out, fd, &off, err, errlen);
            i += n;
        }
    }
    if (!rc)
        rc = deflate_out(&z, Z_FINISH, out, fd, &off, err, errlen);
    deflateEnd(&z);
    free(out);
    return rc;
}

int snap_memory_write(const struct gmem *mem, int fd, bool zlib, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st))
        return fail(err, errlen, -errno, "fstat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(err, errlen, -EINVAL, "the output is not a regular file");
    /* A file a restored VM maps must not change under it (see the header). */
    if (st.st_size != 0)
        return fail(err, errlen, -EEXIST, "the output file is not empty (%lld bytes)",
                    (long long)st.st_size);
    if (zlib)
        return write_zlib(mem, fd, err, errlen);
    uint64_t off = 0;
    for (unsigned r = 0; r < mem->nregions; r++) {
        int rc = write_plain_region(&mem->regions[r], fd, off, err, errlen);
        if (rc)
            return rc;
        off += mem->regions[r].size;
    }
    /* The trailing zero pages: a hole up to RAM's size. */
    if (ftruncate(fd, (off_t)off))
        return fail(err, errlen, -errno, "ftruncate to %llu bytes: %s",
                    (unsigned long long)off, strerror(errno));
    return 0;
}

/* Where the file's next data lies at or after region offset `at` (of a
 * region whose bytes start at file offset foff): the region's size when
 * none does; `at` itself when the file system cannot tell (every byte is
 * then taken as data). */
static uint64_t next_data(int fd, uint64_t foff, uint64_t at, uint64_t size)
{
    off_t d = lseek(fd, (off_t)(foff + at), SEEK_DATA);
    if (d < 0)
        return errno == ENXIO ? size : at;
    return (uint64_t)d - foff < size ? (uint64_t)d - foff : size;
}

/* Where the data found at region offset `at` ends (the next hole). */
static uint64_t next_hole(int fd, uint64_t foff, uint64_t at, uint64_t size)
{
    off_t h = lseek(fd, (off_t)(foff + at), SEEK_HOLE);
    if (h < 0)
        return size;
    return (uint64_t)h - foff < size ? (uint64_t)h - foff : size;
}

/* Maps one region's bytes of the file (foff on) over it, copy-on-write,
 * 2 MiB piece by piece: a piece that holds data is the file's pages, a
 * piece that is all hole (zero pages are not written) is fresh anonymous
 * memory instead.  Why: a restored guest's new allocations mostly land in
 * its free memory, the holes; anonymous memory there faults in huge pages
 * as a booted guest's does (one nested fault per 2 MiB, gmem_map), where
 * the file's pages come 4 KiB a fault, a page cache page and a copy each. */
static int map_region(const struct gmem *mem, const struct gmem_region *g, int fd, uint64_t foff,
                      char *err, size_t errlen)
{
    const uint64_t piece = GMEM_HUGE_PAGE;
    for (uint64_t at = 0; at < g->size;) {
        uint64_t data = next_data(fd, foff, at, g->size);
        uint64_t start = data >= g->size               ? g->size
                         : (data & ~(piece - 1)) > at ? data & ~(piece - 1)
                                                      : at;
        int rc = start > at ? gmem_map_zero(mem, g->gpa + at, start - at) : 0;
        if (rc)
            return fail(err, errlen, rc, "cannot map fresh memory over guest RAM at 0x%llx: %s",
                        (unsigned long long)(g->gpa + at), strerror(-rc));
        if (start >= g->size)
            break;
        uint64_t end = (next_hole(fd, foff, data, g->size) + piece - 1) & ~(piece - 1);
        end = end < g->size ? end : g->size;
        if (end <= start)
            end = g->size; /* cannot happen with a sane lseek; never loop */
        rc = gmem_map_private(mem, g->gpa + start, end - start, fd, foff + start);
        if (rc)
            return fail(err, errlen, rc, "cannot map file offset %llu over guest RAM at 0x%llx: %s",
                        (unsigned long long)(foff + start), (unsigned long long)(g->gpa + start),
                        strerror(-rc));
        at = end;
    }
    return 0;
}

static int read_plain(const struct gmem *mem, int fd, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st))
        return fail(err, errlen, -errno, "fstat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(err, errlen, -EINVAL, "not a regular file");
    if ((uint64_t)st.st_size != mem->ram_bytes)
        return fail(err, errlen, -EINVAL, "file is %lld bytes, guest RAM is %llu",
                    (long long)st.st_size, (unsigned long long)mem->ram_bytes);
    uint64_t off = 0;
    for (unsigned r = 0; r < mem->nregions; r++) {
        int rc = map_region(mem, &mem->regions[r], fd, off, err, errlen);
        if (rc)
            return rc;
        off += mem->regions[r].size;
    }
    return 0;
}

/* The reading side of a zlib memory file. */
struct inflater {
    z_stream z;
    int fd;
    uint64_t file_off; /* next byte of the file to read */
    uint64_t produced; /* bytes inflated so far */
    bool eof, ended;   /* the file is all read; the stream reached its end */
    uint8_t *in;
};

static int refill(struct inflater *f, char *err, size_t errlen)
{
    ssize_t got;
    do
        got = pread(f->fd, f->in, BUF_SIZE, (off_t)f->file_off);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return fail(err, errlen, -errno, "read at offset %llu: %s",
                    (unsigned long long)f->file_off, strerror(errno));
    f->file_off += (uint64_t)got;
    f->z.next_in = f->in;
    f->z.avail_in = (uInt)got;
    f->eof = got == 0;
    return 0;
}

/* Inflates up to n bytes into out; fewer only when the stream ends
 * (f->ended).  A corrupt stream or a file that ends mid-stream is an
 * error. */
static int inflate_some(struct inflater *f, uint8_t *out, size_t n, size_t *got, char *err,
                        size_t errlen)
{
    f->z.next_out = out;
    f->z.avail_out = (uInt)n;
    while (f->z.avail_out && !f->ended) {
        int rc = f->z.avail_in || f->eof ? 0 : refill(f, err, errlen);
        if (rc)
            return rc;
        int zrc = inflate(&f->z, Z_NO_FLUSH);
        if (zrc == Z_STREAM_END)
            f->ended = true;
        else if (zrc == Z_BUF_ERROR && f->eof)
            return fail(err, errlen, -EINVAL,
                        "zlib stream is truncated (the file ends at %llu bytes)",
                        (unsigned long long)f->file_off);
        else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return fail(err, errlen, zrc == Z_MEM_ERROR ? -ENOMEM : -EINVAL,
                        "corrupt zlib stream at file offset ~%llu (%s)",
                        (unsigned long long)(f->file_off - f->z.avail_in),
                        f->z.msg ? f->z.msg : zError(zrc));
    }
    *got = n - f->z.avail_out;
    f->produced += *got;
    return 0;
}

/* Copies inflated bytes into RAM a page at a time, leaving alone a page
 * that is zero on both sides: reading an untouched anonymous page does not
 * allocate it, writing would. */
static void place(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i += PAGE) {
        size_t k = min_size(n - i, PAGE);
        if (!is_zero(src + i, k))
            memcpy(dst + i, src + i, k);
        else if (!is_zero(dst + i, k))
            memset(dst + i, 0, k);
    }
}

static int inflate_ram(struct inflater *f, const struct gmem *mem, uint8_t *bounce, char *err,
                       size_t errlen)
{
    for (unsigned r = 0; r < mem->nregions; r++) {
        const struct gmem_region *g = &mem->regions[r];
        for (uint64_t i = 0; i < g->size;) {
            size_t n = min_size(g->size - i, BUF_SIZE), got;
            int rc = inflate_some(f, bounce, n, &got, err, errlen);
            if (rc)
                return rc;
            if (got < n)
                return fail(err, errlen, -EINVAL,
                            "zlib stream holds %llu bytes, guest RAM is %llu",
                            (unsigned long long)f->produced, (unsigned long long)mem->ram_bytes);
            place(g->host + i, bounce, n);
            i += n;
        }
    }
    /* RAM is full: the stream must end here, and the file with it. */
    size_t got;
    int rc = inflate_some(f, bounce, 1, &got, err, errlen);
    if (rc)
        return rc;
    if (got)
        return fail(err, errlen, -EINVAL, "zlib stream is longer than guest RAM (%llu bytes)",
                    (unsigned long long)mem->ram_bytes);
    if (!f->z.avail_in && (rc = refill(f, err, errlen)))
        return rc;
    if (f->z.avail_in)
        return fail(err, errlen, -EINVAL, "data after the end of the zlib stream");
    return 0;
}

static int read_zlib(const struct gmem *mem, int fd, char *err, size_t errlen)
{
    struct inflater f = {.fd = fd};
    uint8_t *bounce = malloc(BUF_SIZE);
    f.in = malloc(BUF_SIZE);
    if (!bounce || !f.in || inflateInit(&f.z) != Z_OK) {
        free(bounce);
        free(f.in);
        return fail(err, errlen, -ENOMEM, "zlib: out of memory");
    }
    int rc = inflate_ram(&f, mem, bounce, err, errlen);
    inflateEnd(&f.z);
    free(f.in);
    free(bounce);
    return rc;
}

int snap_memory_read(const struct gmem *mem, int fd, bool zlib, char *err, size_t errlen)
{
    return zlib ? read_zlib(mem, fd, err, errlen) : read_plain(mem, fd, err, errlen);
}

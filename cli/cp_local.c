#include "cli/cp_local.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/printable.h"

/* A member's name with its first component replaced (or dropped: top
 * NULL); 0 to skip the member (the dropped top itself), -1 too long. */
static int rename_top(const char *name, const char *top, char *out, size_t cap)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    const char *rest = strchr(name, '/');
    while (rest && rest[0] == '/')
        rest++;
    if (!rest || !*rest) {
        if (!top)
            return 0;
        rest = "";
    }
    int n = top ? snprintf(out, cap, "%s%s%s", top, *rest ? "/" : "", rest)
                : snprintf(out, cap, "%s", rest);
    return n < 0 || (size_t)n >= cap ? -1 : 1;
}

/* The tar name of a member archive_read_disk named `name` ("SRC/...", as
 * SRC was given): top and the rest, or the rest alone with `contents`.
 * 1, 0 to leave it out (the top itself, with contents), -1 too long. */
static int pack_name(const char *name, const char *src, const char *top, bool contents,
                     char *out, size_t cap)
{
    size_t sl = strlen(src);
    const char *rest = !strcmp(name, src) ? ""
                     : !strncmp(name, src, sl) && src[sl - 1] == '/' ? name + sl
                     : !strncmp(name, src, sl) && name[sl] == '/' ? name + sl + 1 : NULL;
    if (!rest)
        return -1;
    if (contents && !*rest)
        return 0;
    int n = contents ? snprintf(out, cap, "%s", rest)
                     : snprintf(out, cap, "%s%s%s", top, *rest ? "/" : "", rest);
    return n < 0 || (size_t)n >= cap ? -1 : 1;
}

static la_ssize_t to_fd(struct archive *a, void *opaque, const void *buf, size_t len)
{
    (void)a;
    const char *p = buf;
    for (size_t left = len; left;) {
        ssize_t n = write(*(int *)opaque, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        left -= (size_t)n;
    }
    return (la_ssize_t)len;
}

/* Copies the current file's data from the disk reader to the tar. */
static int copy_data(struct archive *disk, struct archive *w)
{
    char buf[65536];
    la_ssize_t n;
    while ((n = archive_read_data(disk, buf, sizeof(buf))) > 0)
        if (archive_write_data(w, buf, (size_t)n) != n)
            return -1;
    return n < 0 ? -1 : 0;
}

int cp_local_pack(const char *src, const char *top, bool contents, int out_fd, char *err,
                  size_t errlen)
{
    struct archive *disk = archive_read_disk_new(), *w = archive_write_new();
    char shown[600];
    int rc = -1;
    if (!disk || !w) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* a link is copied as a link; no ACLs, xattrs or file flags: the guest
     * gets names, data, modes and times */
    archive_read_disk_set_symlink_physical(disk);
    archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL |
                                             ARCHIVE_READDISK_NO_FFLAGS);
    archive_write_set_format_pax_restricted(w);
    if (archive_read_disk_open(disk, src) != ARCHIVE_OK ||
        archive_write_open(w, &out_fd, NULL, to_fd, NULL) != ARCHIVE_OK) {
        snprintf(err, errlen, "%s: %s", printable(src, shown, sizeof(shown)),
                 archive_error_string(disk) ? archive_error_string(disk) : strerror(errno));
        goto out;
    }
    for (;;) {
        struct archive_entry *e = archive_entry_new();
        int r = e ? archive_read_next_header2(disk, e) : ARCHIVE_FATAL;
        if (r == ARCHIVE_EOF) {
            archive_entry_free(e);
            break;
        }
        if (r < ARCHIVE_WARN) {
            snprintf(err, errlen, "%s: %s", printable(src, shown, sizeof(shown)),
                     archive_error_string(disk) ? archive_error_string(disk) : "cannot read");
            archive_entry_free(e);
            goto out;
        }
        archive_read_disk_descend(disk);
        const char *name = archive_entry_pathname(e);
        char out[8192];
        int k = pack_name(name, src, top, contents, out, sizeof(out));
        mode_t type = archive_entry_filetype(e);
        if (k < 0) {
            snprintf(err, errlen, "%s: a name too long", printable(name, shown, sizeof(shown)));
            archive_entry_free(e);
            goto out;
        }
        if (k && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
            fprintf(stderr, "airlock: warning: %s: a device, fifo or socket, left out\n",
                    printable(name, shown, sizeof(shown)));
        } else if (k) {
            archive_entry_set_pathname(e, out);
            /* WARN: a name that is not text in this locale goes byte for byte */
            if (archive_write_header(w, e) < ARCHIVE_WARN ||
                (type == AE_IFREG && copy_data(disk, w))) {
                snprintf(err, errlen, "%s: %s", printable(name, shown, sizeof(shown)),
                         archive_error_string(w) ? archive_error_string(w)
                         : archive_error_string(disk) ? archive_error_string(disk)
                                                      : "cannot copy");
                archive_entry_free(e);
                goto out;
            }
        }
        archive_entry_free(e);
    }
    if (archive_write_close(w) != ARCHIVE_OK) {
        snprintf(err, errlen, "cannot write the tar: %s",
                 archive_error_string(w) ? archive_error_string(w) : strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (disk)
        archive_read_free(disk);
    if (w)
        archive_write_free(w);
    return rc;
}

struct feed {
    cp_read_fn *read;
    void *opaque;
    char buf[65536];
};

static la_ssize_t from_feed(struct archive *a, void *opaque, const void **buf)
{
    struct feed *f = opaque;
    *buf = f->buf;
    ssize_t n = f->read(f->opaque, f->buf, sizeof(f->buf));
    if (n < 0)
        archive_set_error(a, EIO, "the tar broke off");
    return n < 0 ? -1 : n;
}

int cp_local_unpack(cp_read_fn *read, void *opaque, const char *dest, const char *new_top,
                    char *err, size_t errlen)
{
    struct feed *f = malloc(sizeof(*f));
    struct archive *a = archive_read_new(), *disk = archive_write_disk_new();
    char shown[600];
    int rc = -1, dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC), here = -1;
    if (!f || !a || !disk || dfd < 0) {
        snprintf(err, errlen, "%s: %s", printable(dest, shown, sizeof(shown)),
                 dfd < 0 ? strerror(errno) : "out of memory");
        goto out;
    }
    f->read = read;
    f->opaque = opaque;
    archive_read_support_format_tar(a);
    archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                                             ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                             ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                             ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
    /* the names are relative to dest: extract from inside it */
    here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (here < 0 || fchdir(dfd) || archive_read_open(a, f, NULL, from_feed, NULL) != ARCHIVE_OK) {
        snprintf(err, errlen, "%s: %s", printable(dest, shown, sizeof(shown)),
                 archive_error_string(a) ? archive_error_string(a) : strerror(errno));
        goto out;
    }
    struct archive_entry *e;
    int r;
    while ((r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
        if (r < ARCHIVE_WARN) {
            snprintf(err, errlen, "the tar: %s",
                     archive_error_string(a) ? archive_error_string(a) : "unreadable");
            goto out;
        }
        char name[8192];
        const char *raw = archive_entry_pathname(e);
        if (!raw) /* a UTF-8 pax name this locale cannot show: its bytes */
            raw = archive_entry_pathname_utf8(e);
        int k = raw ? rename_top(raw, new_top, name, sizeof(name)) : -1;
        if (k < 0) {
            snprintf(err, errlen, "%s: a name that cannot be copied",
                     printable(raw ? raw : "", shown, sizeof(shown)));
            goto out;
        }
        if (!k)
            continue;
        archive_entry_set_pathname(e, name);
        if (archive_write_header(disk, e) < ARCHIVE_WARN) {
            snprintf(err, errlen, "%s: %s", printable(name, shown, sizeof(shown)),
                     archive_error_string(disk));
            goto out;
        }
        const void *buf;
        size_t len;
        la_int64_t off;
        while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK)
            if (archive_write_data_block(disk, buf, len, off) < ARCHIVE_OK) {
                r = ARCHIVE_FATAL;
                break;
            }
        if (r != ARCHIVE_EOF || archive_write_finish_entry(disk) < ARCHIVE_WARN) {
            snprintf(err, errlen, "%s: %s", printable(name, shown, sizeof(shown)),
                     archive_error_string(a) ? archive_error_string(a)
                     : archive_error_string(disk) ? archive_error_string(disk) : "cannot write");
            goto out;
        }
    }
    /* folders' modes and times are set at the end (a 0555 folder takes its files first) */
    if (archive_write_close(disk) != ARCHIVE_OK) {
        snprintf(err, errlen, "%s: %s", printable(dest, shown, sizeof(shown)),
                 archive_error_string(disk));
        goto out;
    }
    rc = 0;
out:
    if (here >= 0) {
        if (fchdir(here))
            rc = -1;
        close(here);
    }
    if (dfd >= 0)
        close(dfd);
    if (a)
        archive_read_free(a);
    if (disk)
        archive_write_free(disk);
    free(f);
    return rc;
}

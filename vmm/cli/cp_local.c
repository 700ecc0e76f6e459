#include "vmm/cli/cp_local.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/printable.h"

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

#include "vmm/util/tar_pack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/printable.h"

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

int tar_pack(const char *src, const char *top, bool contents, int out_fd, char *err,
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

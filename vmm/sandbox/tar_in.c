#include "vmm/sandbox/tar_in.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/printable.h"
#include "vmm/util/tar_name.h"

struct tar_in {
    struct archive *a;
    tar_in_read_fn *read;
    void *read_opaque;
    char buf[65536];
    uint64_t left;   /* the current file member's bytes not yet handed out */
    int broken;      /* archive_read_data failed: the archive, not the sink */
};

/* libarchive's read callback: the client's body, piece by piece. */
static la_ssize_t feed(struct archive *a, void *opaque, const void **buf)
{
    (void)a;
    struct tar_in *t = opaque;
    *buf = t->buf;
    ssize_t n = t->read(t->read_opaque, t->buf, sizeof(t->buf));
    if (n < 0) {
        archive_set_error(t->a, EIO, "the upload stopped before its end");
        return -1;
    }
    return n;
}

ssize_t tar_in_data(void *opaque, void *buf, size_t len)
{
    struct tar_in *t = opaque;
    if (t->broken || !t->left)
        return t->broken ? -1 : 0;
    if (len > t->left)
        len = (size_t)t->left;
    la_ssize_t n = archive_read_data(t->a, buf, len);
    if (n <= 0) { /* a member cut short is a broken archive, not an empty read */
        t->broken = 1;
        return -1;
    }
    t->left -= (uint64_t)n;
    return n;
}

/* Sets the refusal in res; returns -1. */
static int refuse(struct tar_in_result *res, int status, const char *name, const char *why)
{
    res->status = status;
    printable(name ? name : "", res->entry, sizeof(res->entry));
    snprintf(res->why, sizeof(res->why), "%s", why);
    return -1;
}

/* One member, checked, to the sink. */
static int one(struct tar_in *t, struct archive_entry *e, size_t max_name,
               const struct tar_in_limits *lim, const struct tar_sink *sink,
               struct tar_in_result *res)
{
    const char *raw = archive_entry_pathname(e);
    if (!raw) /* a UTF-8 pax name the daemon's C locale cannot show: its bytes */
        raw = archive_entry_pathname_utf8(e);
    char rel[AGENT_MAX_PATH];
    const char *why = NULL;
    int clean = raw ? tar_name_clean(raw, rel, max_name + 1 < sizeof(rel) ? max_name + 1
                                                                             : sizeof(rel), &why)
                    : -1;
    if (clean < 0)
        return refuse(res, 400, raw, why ? why : "a name that cannot be read");
    char msg[200], limit[40];
    if (++res->entries > lim->max_entries) {
        snprintf(msg, sizeof(msg), "past the limit of %llu members",
                 (unsigned long long)lim->max_entries);
        return refuse(res, 413, raw, msg);
    }
    if (archive_entry_hardlink(e))
        return refuse(res, 400, raw, "a hardlink (not supported: send the file itself)");
    mode_t type = archive_entry_filetype(e);
    uint32_t mode = archive_entry_perm(e) & 07777;
    if (type != AE_IFDIR && !clean)
        return refuse(res, 400, raw, "the root of the archive must be a folder");
    int rc;
    if (type == AE_IFDIR) {
        rc = clean ? sink->dir(sink->opaque, rel, mode) : 0;
    } else if (type == AE_IFLNK) {
        const char *target = archive_entry_symlink(e);
        if (!target)
            target = archive_entry_symlink_utf8(e);
        if (!target || !target[0] || strlen(target) >= AGENT_MAX_PATH)
            return refuse(res, 400, raw, "a symlink without a target, or one over 4095 bytes");
        rc = sink->symlink(sink->opaque, rel, target);
    } else if (type == AE_IFREG) {
        la_int64_t size = archive_entry_size(e);
        if (!archive_entry_size_is_set(e) || size < 0 || (uint64_t)size > AGENT_MAX_FILE)
            return refuse(res, 400, raw, "a file size that is missing or over 4 GiB");
        if ((res->bytes += (uint64_t)size) > lim->max_bytes) {
            snprintf(msg, sizeof(msg), "past the limit of %s of file data",
                     size_text(lim->max_bytes, limit, sizeof(limit)));
            return refuse(res, 413, raw, msg);
        }
        t->left = (uint64_t)size;
        rc = sink->file(sink->opaque, rel, mode, (uint64_t)size, t);
        if (t->broken) {
            snprintf(msg, sizeof(msg), "the archive broke inside this member (%.150s)",
                     archive_error_string(t->a) ? archive_error_string(t->a) : "truncated");
            return refuse(res, 400, raw, msg);
        }
    } else {
        return refuse(res, 400, raw, "a device, fifo or socket (not supported)");
    }
    if (rc) {
        res->sink_errno = -rc;
        return refuse(res, 500, raw, strerror(-rc));
    }
    return 0;
}

int tar_in_extract(tar_in_read_fn *read, void *read_opaque, size_t max_name,
                   const struct tar_sink *sink, struct tar_in_result *res)
{
    return tar_in_extract_within(read, read_opaque, max_name, NULL, sink, res);
}

int tar_in_extract_within(tar_in_read_fn *read, void *read_opaque, size_t max_name,
                          const struct tar_in_limits *lim, const struct tar_sink *sink,
                          struct tar_in_result *res)
{
    static const struct tar_in_limits upload = {TAR_IN_MAX_ENTRIES, TAR_IN_MAX_BYTES};
    if (!lim)
        lim = &upload;
    memset(res, 0, sizeof(*res));
    struct tar_in *t = calloc(1, sizeof(*t));
    struct archive *a = t ? archive_read_new() : NULL;
    if (!a) {
        free(t);
        return refuse(res, 503, NULL, "out of memory");
    }
    t->a = a;
    t->read = read;
    t->read_opaque = read_opaque;
    /* tar only, plain or gzip: xz and bzip2 decoders take memory the
     * archive's header asks for (xz: up to 1 GiB), a client's choice */
    archive_read_support_format_tar(a);
    archive_read_support_filter_gzip(a);
    int rc = 0;
    if (archive_read_open(a, t, NULL, feed, NULL) != ARCHIVE_OK) {
        char msg[200];
        snprintf(msg, sizeof(msg), "not a tar archive: %.150s",
                 archive_error_string(a) ? archive_error_string(a) : "unreadable");
        rc = refuse(res, 400, NULL, msg);
    } else {
        struct archive_entry *e;
        int r;
        while (!rc && (r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
            if (r == ARCHIVE_WARN || r == ARCHIVE_OK) {
                rc = one(t, e, max_name, lim, sink, res);
                res->written += !rc;
                continue;
            }
            char msg[200];
            snprintf(msg, sizeof(msg), "not a tar archive, or a broken one after %llu members: %.120s",
                     (unsigned long long)res->entries,
                     archive_error_string(a) ? archive_error_string(a) : "unreadable");
            rc = refuse(res, 400, NULL, msg);
        }
    }
    archive_read_free(a);
    free(t);
    return rc;
}

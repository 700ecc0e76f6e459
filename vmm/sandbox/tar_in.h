/* Reading a tar a client uploads (PUT .../archive): libarchive parses it
 * (ustar, pax, GNU; plain or gzip), and every member is checked before a
 * byte of it reaches the sink that writes it (the guest, or a test's
 * recorder): a relative name of plain components (no "..", no absolute
 * path, no empty or over-long component), a regular file, folder or
 * symlink (a hardlink, device, fifo or socket is refused, not skipped:
 * leaving it out silently would hand back a different tree), a size the
 * limits allow.  The first refusal ends the upload and names the member;
 * members before it have been written (a tar is a stream: extraction
 * begins before its end is known). */
#ifndef AIRLOCK_SANDBOX_TAR_IN_H
#define AIRLOCK_SANDBOX_TAR_IN_H

#include <stdint.h>
#include <sys/types.h>

#include "vmm/agent_client/agent_client.h"

/* Limits of one upload (docs/sandboxes.md). */
#define TAR_IN_MAX_ENTRIES 100000
#define TAR_IN_MAX_BYTES   (16ull << 30) /* the members' data, after gzip */

/* What one archive may hold: members read, and their file data (after
 * gzip).  A refusal past either is status 413 and names the member. */
struct tar_in_limits {
    uint64_t max_entries, max_bytes;
};

struct tar_in;

/* Where checked members go.  `rel` is the member's clean relative name
 * ("a/b", never "", "." or with ".."); each returns 0 or -errno (the
 * guest's).  `file` reads exactly `size` bytes with tar_in_data. */
struct tar_sink {
    int (*dir)(void *opaque, const char *rel, uint32_t mode);
    int (*symlink)(void *opaque, const char *rel, const char *target);
    int (*file)(void *opaque, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t);
    void *opaque;
};

/* Why an upload stopped. */
struct tar_in_result {
    int status;            /* 0, or the HTTP status: 400 the archive, 413 a limit, else the sink's */
    int sink_errno;        /* the sink's errno when it refused */
    char entry[512];       /* the member, printable (\xNN escapes), "" if none */
    char why[256];
    uint64_t entries;      /* members read */
    uint64_t written;      /* of those, the ones the sink took (or skipped: the root) */
    uint64_t bytes;        /* file data announced by the members read */
};

/* The archive's bytes come from `read` (up to len bytes; 0 at the end, <0
 * when they stopped coming).  `max_name` bounds a clean name's length (the
 * room its destination leaves).  0 when every member was written, else -1
 * with *res saying why. */
typedef ssize_t tar_in_read_fn(void *opaque, void *buf, size_t len);
int tar_in_extract(tar_in_read_fn *read, void *read_opaque, size_t max_name,
                   const struct tar_sink *sink, struct tar_in_result *res);
/* The same within `lim` (NULL: an upload's TAR_IN_MAX_*). */
int tar_in_extract_within(tar_in_read_fn *read, void *read_opaque, size_t max_name,
                          const struct tar_in_limits *lim, const struct tar_sink *sink,
                          struct tar_in_result *res);

/* A file member's data for the sink (an agent_read_fn): up to len bytes;
 * 0 at its end; -1 when the archive broke (truncated, corrupt). */
ssize_t tar_in_data(void *t, void *buf, size_t len);

/* Names are cleaned by vmm/util/tar_name.h. */

#endif

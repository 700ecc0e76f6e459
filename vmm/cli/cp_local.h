/* airlock cp's host side: a tar (the daemon's answer) onto the local
 * disk, with libarchive (the other way is vmm/util/tar_pack.h).  The tar's
 * top member is renamed on the way, which is how `docker cp`'s "into a
 * folder" / "as this name" / "the contents of" cases come out. */
#ifndef AIRLOCK_CLI_CP_LOCAL_H
#define AIRLOCK_CLI_CP_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Extracts a tar read through `read` (up to len bytes; 0 at its end, <0
 * when it broke off) into folder dest.  The first component of each
 * member's name is replaced by new_top, or dropped when new_top is NULL
 * (then the top member itself is skipped).  Names are checked as
 * libarchive's secure extraction does (no "..", no absolute names, no
 * writing through a symlink the tar made); modes and mtimes are kept.
 * 0, or -1 with err. */
typedef ssize_t cp_read_fn(void *opaque, void *buf, size_t len);
int cp_local_unpack(cp_read_fn *read, void *opaque, const char *dest, const char *new_top,
                    char *err, size_t errlen);

#endif

/* A snapshot's memory file: guest RAM, its regions concatenated in order
 * (so the file offset of a byte is its offset in RAM, not its gpa).
 *
 * Plain: exactly RAM's size; all-zero pages are holes, so an untouched
 * guest costs nothing on disk; reading it back maps the file over guest
 * RAM copy-on-write, so a restore reads only what the guest touches.
 * zlib (a zlib-wrapped deflate stream, level 1 for speed): smaller, but a
 * restore inflates all of it; its adler32 catches corruption.
 *
 * A VM restored from a plain file keeps it mapped: that file must never be
 * rewritten in place (a truncation would SIGBUS the guest, a rewrite would
 * change its untouched pages).  snap_memory_write therefore refuses a
 * non-empty file: write to a new one (O_CREAT | O_EXCL, or a temporary name
 * and rename). */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_MEMORY_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/memory/gmem.h"

/* Writes all of guest RAM to fd, an empty regular file, from offset 0 (the
 * fd's own offset is not used).  Returns 0 or -errno with err as
 * "memory: WHAT". */
int snap_memory_write(const struct gmem *mem, int fd, bool zlib, char *err, size_t errlen);

/* Puts the file's contents in guest RAM.  Plain: the file must be exactly
 * RAM's size and every region page aligned; its pages are mapped over RAM
 * (gmem_map_private), and fd may be closed afterwards.  zlib: the stream
 * must inflate to exactly RAM's size and end the file; pages that are zero
 * in the stream are written only where RAM is not already zero, so
 * untouched guest pages stay untouched.  Returns 0 or -errno with err as
 * "memory: WHAT" (-EINVAL for a file of the wrong size, a corrupt, short or
 * long stream); on error RAM holds part of the file. */
int snap_memory_read(const struct gmem *mem, int fd, bool zlib, char *err, size_t errlen);

#endif

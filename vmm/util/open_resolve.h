/* openat2(2) with its resolve flags: a path inside a tree that is not
 * ours (an image's layers, an unpacked archive) opened so that neither
 * `..` nor a symlink can lead out of it. */
#ifndef AIRLOCK_UTIL_OPEN_RESOLVE_H
#define AIRLOCK_UTIL_OPEN_RESOLVE_H

#include <stdint.h>

/* rel ("" means dir itself) beneath dir with flags | O_CLOEXEC and the
 * RESOLVE_* bits in `resolve` (RESOLVE_NO_MAGICLINKS always added).  The
 * fd or -errno (EXDEV/ELOOP: the path tried to leave, or met a symlink
 * RESOLVE_NO_SYMLINKS forbids). */
int open_resolve(int dir, const char *rel, int flags, uint64_t resolve);

#endif

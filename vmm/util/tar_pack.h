/* A host file or folder as a tar, with libarchive: what `airlock cp`, a
 * folder --copy-in and a folder `airlock image import` send on.  Links
 * are packed as links, never followed; names, data, modes and times go,
 * no ACLs, xattrs or file flags. */
#ifndef AIRLOCK_UTIL_TAR_PACK_H
#define AIRLOCK_UTIL_TAR_PACK_H

#include <stdbool.h>
#include <stddef.h>

/* Writes a tar of src (a file, folder or symlink, not followed) to out_fd:
 * its top member named `top`, or, with `contents`, only what the folder
 * holds, named as within it.  Devices, fifos and sockets are left out,
 * each with a warning line.  0, or -1 with err naming what failed. */
int tar_pack(const char *src, const char *top, bool contents, int out_fd, char *err,
             size_t errlen);

#endif

/* `airlock run --copy-out GUEST:HOST` of a folder, the waiting parent's
 * half (vmm/cli/run_copy.h has the whole story): the tar the VM process wrote
 * is read back with vmm/sandbox/tar_in.c's checks and made into a tree inside
 * a fresh, empty staging folder, which the caller then renames into place.
 *
 * The tar came from a jailed process a hostile guest may have taken over,
 * so nothing in it is trusted: names are cleaned ("..", absolute names
 * refused), members and file data are bounded, hardlinks and devices
 * refused, and every path is opened beneath the staging folder with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so a symlink the tar made ("a ->
 * /etc") can never be written through ("a/passwd" fails and is named).
 * Symlinks are made as links and never followed.  Files and folders get
 * the member's permission bits (mode & 0777: setuid, setgid and sticky
 * are dropped; the host's umask does not apply), a folder's only once
 * everything in it is written. */
#ifndef AIRLOCK_CLI_RUN_COPY_TREE_H
#define AIRLOCK_CLI_RUN_COPY_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/sandbox/tar_in.h"

/* The tar's one top member: the folder that becomes HOST. */
#define RUN_COPY_TREE_TOP "tree"

struct run_copy_tree_limits {
    struct tar_in_limits tar;  /* members, file data */
    uint64_t max_archive;      /* bytes of tar read, headers included */
    uint64_t max_names;        /* the folders' names held until their modes are set */
};

/* Reads the tar in tar_fd (from offset 0, with pread) into the staging
 * folder stage_fd (empty; `stage_len` bytes is the length of its path, so
 * every path made fits PATH_MAX).  0 when every member was written and
 * RUN_COPY_TREE_TOP is a folder in it; else -1 with one line in err
 * ("MEMBER: why").  Whatever was made stays for the caller to remove. */
int run_copy_tree_unpack(int tar_fd, int stage_fd, size_t stage_len,
                         const struct run_copy_tree_limits *lim, char *err, size_t errlen);

#endif

/* A guest file, folder or symlink as a tar, over one agent connection:
 * the sandbox API's GET .../archive and `airlock run --copy-out` of a
 * folder both use it.  First the whole tree is walked (STAT, then LIST
 * one folder at a time) and held, bounded, so a missing path, a tree over
 * the limits or a broken answer is a plain error before any byte of the
 * tar is written; then the members go out through libarchive (pax, so
 * long names and large files fit), each file read with FILE_GET.
 *
 * The tar's top member is named `top`; below it the members keep the
 * guest's names, in sorted order per folder.  Folders whole, symlinks as
 * links (never followed), modes and mtimes kept, owners not (root);
 * devices, fifos and sockets are left out (a top that is one is refused).
 * The guest is hostile: every count, size and name it gives is bounded
 * (struct guest_tree_limits), and a file that grows or shrinks between
 * its listing and its read fails the write rather than making a member
 * other than its header announced. */
#ifndef AIRLOCK_SANDBOX_GUEST_TREE_H
#define AIRLOCK_SANDBOX_GUEST_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/agent_client/agent_client.h"

struct guest_tree_limits {
    uint64_t max_entries; /* members, the top included */
    uint64_t max_bytes;   /* file data */
    uint64_t max_names;   /* the members' names and link targets together, held while walking */
};

struct guest_tree_member;

struct guest_tree {
    int agent;
    const struct guest_tree_limits *lim;
    struct guest_tree_member *v;
    size_t n, cap;
    uint64_t name_bytes, bytes;
    struct agent_entry top; /* what STAT said of the path (its target not kept) */
    /* Why a walk failed: an errno (EFBIG: past a limit, ENAMETOOLONG: a
     * path too long, EINVAL: a device, fifo or socket at the top,
     * ENOMEM, EPROTO: a broken answer, else the guest's own), and one
     * line naming the path. */
    int err;
    char why[1200];
};

/* Walks guest `path` (absolute, no trailing '/') over `agent` within
 * `lim` (which must outlive t).  0, or -1 with t->err and t->why.
 * guest_tree_free releases t either way. */
int guest_tree_walk(struct guest_tree *t, int agent, const char *path,
                    const struct guest_tree_limits *lim);

/* Where the tar's bytes go: 0, or nonzero to stop. */
typedef int guest_tree_out_fn(void *opaque, const void *buf, size_t len);

/* Writes the walked tree as a tar, its top member named `top`.  0 once
 * the tar is complete; -ENOMEM before any byte went out; -EIO when it
 * could not be completed (out refused, a file changed or went away, the
 * agent broke off): what went out then is no whole tar. */
int guest_tree_write(struct guest_tree *t, const char *path, const char *top,
                     guest_tree_out_fn *out, void *opaque);

void guest_tree_free(struct guest_tree *t);

#endif

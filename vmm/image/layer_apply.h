/* Applying one image layer (a tar, plain or compressed: libarchive finds
 * out) onto a staging folder, as the OCI image spec's "Applying
 * Changesets" says: entries in order, `.wh.NAME` removes NAME from the
 * layers below, `.wh..wh..opq` empties its folder of what the layers
 * below put there, a later entry replaces an earlier one of the same name.
 *
 * The archive is hostile.  Every name is cleaned (no "..", no absolute
 * path) and every path is opened beneath the staging folder with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so a symlink in the tree (`a ->
 * /etc`) is never followed by a later write (`a/passwd`): that write
 * fails and names the entry.  A hardlink may only name a regular file
 * already in the tree.  Device nodes, fifos and sockets are skipped and
 * counted.  Sizes, entry counts and depth are bounded (struct
 * layer_limits), sparse files stay sparse.
 *
 * Owners, and the modes the staging folder cannot keep (a process that is
 * not root cannot chown), are handed to a callback per entry, so the root
 * disk's builder can set them in the filesystem image afterwards. */
#ifndef AIRLOCK_IMAGE_LAYER_APPLY_H
#define AIRLOCK_IMAGE_LAYER_APPLY_H

#include <stdint.h>
#include <sys/types.h>

struct layer_limits {
    uint64_t max_bytes;   /* file data written, all layers (a decompression bomb ends here) */
    uint64_t max_entries; /* entries read, all layers */
    unsigned max_depth;   /* components in a name */
};

/* What the whole import has used so far, across layers. */
struct layer_totals {
    uint64_t bytes, entries;
    uint64_t skipped_devices; /* device nodes, fifos, sockets */
};

/* An entry as the image wants it, for the owners and modes pass. */
struct layer_owner {
    const char *path;     /* clean, relative to the root */
    uid_t uid;
    gid_t gid;
    mode_t mode;          /* type and permission bits, setuid/setgid/sticky included */
    const void *caps;     /* security.capability's value, or NULL */
    size_t caps_len;
};

struct layer_result {
    char entry[512];      /* the entry that stopped it, printable */
    char why[256];
};

/* Applies the layer read from fd onto the folder root_fd.  `on_owner`
 * (may be NULL) sees every entry written, after it is.  0, or -1 with
 * *res naming the entry and why (the staging folder is then the caller's
 * to remove). */
int layer_apply(int fd, int root_fd, const struct layer_limits *lim, struct layer_totals *tot,
                int (*on_owner)(void *opaque, const struct layer_owner *o), void *opaque,
                struct layer_result *res);

#endif

/* A tar extracted into a guest folder over one agent connection: the
 * sandbox API's PUT .../archive and `airlock run --copy-in` of a folder
 * both use it.  The members are checked by tar_in; each is written
 * through the agent beneath the folder (root_len, proto.h), so neither a
 * member nor a link guest code made can lead outside it.  Files, folders
 * and links are made as root with the members' modes. */
#ifndef AIRLOCK_SANDBOX_GUEST_PUT_H
#define AIRLOCK_SANDBOX_GUEST_PUT_H

#include "vmm/sandbox/tar_in.h"

/* Guest folder `dir` and the folders above it, made when missing (mkdir
 * -p, 0755): 0; -ENOTDIR when dir is something else than a folder or a
 * link; else -errno for the first folder that could not be made, named
 * in failed (AGENT_MAX_PATH bytes; "" when it was dir's own STAT). */
int guest_put_dest(int agent, const char *dir, char *failed);

/* Extracts the tar read through `read` into guest folder `dir` (which
 * exists), within `lim` (NULL: an upload's limits).  With new_top, each
 * member's first name component is replaced by it (the tar's top folder
 * lands as that name).  0, or -1 with *res saying why (res->sink_errno:
 * the guest refused a member). */
int guest_put_tar(int agent, const char *dir, const char *new_top, tar_in_read_fn *read,
                  void *opaque, const struct tar_in_limits *lim, struct tar_in_result *res);

#endif

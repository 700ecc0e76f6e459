/* Where a request's path points, as (dirfd, name) for the *at() calls: the
 * path itself, or with root_len (proto.h) a name resolved beneath a root
 * folder with no symlink and no "..", so a tar the host extracts cannot be
 * steered out of its folder by links guest code planted there; and a
 * MOUNT's folder, made the same way. */
#ifndef AIRLOCK_GUEST_AGENT_BENEATH_H
#define AIRLOCK_GUEST_AGENT_BENEATH_H

#include <stdint.h>

#include "guest/agent/proto.h"

struct agent_at {
    int dirfd;         /* AT_FDCWD, or the name's folder (ours to close) */
    const char *name;  /* the path (no root), or its last component */
    int beneath;       /* root_len was given: replace, never follow */
    char buf[AGENT_MAX_PATH];
};

/* 0, or -errno (ELOOP or EXDEV: a symlink or ".." on the way; EINVAL: the
 * last component is empty, "." or ".."). */
int agent_at_open(struct agent_at *at, const char *path, uint32_t root_len);
void agent_at_close(struct agent_at *at);
/* Makes room for a new entry at `at`: an existing non-folder there is
 * removed when `beneath` (a tar entry replaces what was there); else
 * nothing.  0 or -errno. */
int agent_at_clear(const struct agent_at *at);

/* The folder at the absolute, clean `path` (agent_mount_path_ok), made
 * with its missing parents (0755): each component is made and then opened
 * beneath the one before with no symlink and no ".." (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a link in the image on the
 * way (`/work -> /etc`) is refused (ELOOP), never followed.  An O_PATH fd
 * of the folder (ours to close), or -errno. */
int agent_mkdirs_beneath(const char *path);

#endif

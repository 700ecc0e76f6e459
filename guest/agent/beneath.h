/* Where a request's path points, as (dirfd, name) for the *at() calls: the
 * path itself, or with root_len (proto.h) a name resolved beneath a root
 * folder with no symlink and no "..", so a tar the host extracts cannot be
 * steered out of its folder by links guest code planted there. */
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

#endif

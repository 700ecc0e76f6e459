/* A volume's disk checked before each attach with e2fsck: what a guest
 * that crashed, or a VM killed mid-write, left behind is repaired (the
 * journal replayed, what it points to made whole) before any guest
 * mounts it again.  `e2fsck -p` first (it fixes what is safe to fix
 * unattended), `e2fsck -fy` when -p refuses (exit 4: "run it by hand").
 * A disk other readers hold is only read (`e2fsck -n`): it was checked
 * as its first reader attached and no one wrote it since. */
#ifndef AIRLOCK_VOLUME_VOLUME_CHECK_H
#define AIRLOCK_VOLUME_VOLUME_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/volume/volume_store.h"

/* 0 with `did` one line: "clean", "journal replayed by e2fsck -p: LAST
 * LINE" (a VM ended with it mounted), "repaired by e2fsck -p: LAST LINE"
 * or "repaired by e2fsck -fy: LAST LINE" (either after "journal replayed
 * and "); -EIO with err saying what e2fsck
 * left (its status and last line), or -errno when it could not run. */
int volume_check(const struct volume_store *vs, const char *name, bool readers_before, char *did,
                 size_t dcap, char *err, size_t ecap);

#endif

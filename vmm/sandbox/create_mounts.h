/* A create's "mounts" (docs/mounts.md, docs/volumes.md): host folders and
 * named volumes for the sandbox.  A folder becomes a `--mount
 * SOURCE:TARGET[:rw]` of the sandbox's VM, which makes (or finds in its
 * cache) the folder's disk and attaches it; a volume, once the daemon
 * holds it for the sandbox and e2fsck checked it (create_volumes.h), a
 * `--disk` of its own file (read-write, or read-only).  Once the VM's
 * agent answers, the daemon mounts them in the guest: the daemon gives a
 * VM no other --disk, and the VM puts --disk ones before --mount ones, so
 * the volumes are disks 1..v in order and the folders v+1.. in order
 * (the folders' disks: mounts of one source folder share one,
 * create_mounts_owner).
 * A VM with mounts boots cold (a pooled or restored VM cannot take more
 * disks).
 *
 *   "mounts": [{"source": "/abs/host/dir", "target": "/guest/dir",
 *               "readonly": true},
 *              {"volume": "NAME", "target": "/data", "readonly": false}]
 *
 * source is read by the daemon's VM process, as the daemon's user, on the
 * daemon's host, and must lie under a --mount-root when the daemon has
 * one (mount_roots.h); readonly: a folder's default true (false lets the
 * guest write, its writes staying in the VM), a volume's false (its
 * writes are the volume's).  A bad entry is a 400 naming its field,
 * "mounts[2].target". */
#ifndef AIRLOCK_SANDBOX_CREATE_MOUNTS_H
#define AIRLOCK_SANDBOX_CREATE_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "guest/agent/proto.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/mount_roots.h"
#include "vmm/sandbox/registry.h"
#include "vmm/volume/volume_name.h"

#define CREATE_MOUNTS_MAX 8

struct create_mounts {
    unsigned n;
    /* a folder's --mount value; a volume's --disk value once held */
    char spec[CREATE_MOUNTS_MAX][FIELD_MAX_TEXT + AGENT_MOUNT_MAX_PATH + 8];
    char target[CREATE_MOUNTS_MAX][AGENT_MOUNT_MAX_PATH];
    bool rw[CREATE_MOUNTS_MAX];
    bool volume[CREATE_MOUNTS_MAX];
    char name[CREATE_MOUNTS_MAX][VOLUME_NAME_MAX + 1]; /* a volume's */
};

/* Who asks, for the sources they may name. */
struct mount_policy {
    const struct mount_roots *roots;
    bool tcp;
};

/* Reads f's "mounts" (absent: n = 0); a bad entry answers 400 naming it
 * ("mounts[0].source"), a source the policy refuses 403 (f->failed
 * either way).  A NULL policy takes every source as given. */
void create_mounts_parse(struct fields *f, struct create_mounts *cm,
                         const struct mount_policy *policy);

/* Whose disk folder mount i's is: the first folder mount of the same
 * source and mode (read-only or not), i itself when none is before it.
 * A folder bound at several targets is one disk, one --mount (the first
 * one's spec), and one MOUNT per target of that disk: the guest's kernel
 * mounts the disk's one filesystem again at each, so what is written
 * through one target shows at the others, as with binds of one folder.
 * A volume is its own. */
unsigned create_mounts_owner(const struct create_mounts *cm, unsigned i);

/* How many disks the mounts take: the volumes and the folder mounts that
 * own theirs. */
unsigned create_mounts_disks(const struct create_mounts *cm);

/* Mount i's disk number in its VM (the order above: volumes, then the
 * folders' disks in their owners' order). */
unsigned create_mounts_device(const struct create_mounts *cm, unsigned i);

/* After the VM answered: each mount's MOUNT to its agent.  0, or -1 with
 * err naming the mount and why. */
int create_mounts_deliver(const struct sandbox *sb, const struct create_mounts *cm, char *err,
                          size_t cap);

#endif

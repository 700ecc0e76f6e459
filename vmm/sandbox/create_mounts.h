/* A create's "mounts" (docs/mounts.md): host folders for the sandbox.
 * Each becomes a `--mount SOURCE:TARGET[:rw]` of the sandbox's VM, which
 * makes (or finds in its cache) the folder's disk and attaches it; once
 * the VM's agent answers, the daemon mounts them in the guest, in order:
 * the daemon gives a sandbox's VM no --disk, so mount i is disk i + 1.
 * A VM with mounts boots cold (a pooled or restored VM cannot take more
 * disks).
 *
 *   "mounts": [{"source": "/abs/host/dir", "target": "/guest/dir",
 *               "readonly": true}]
 *
 * source is read by the daemon's VM process, as the daemon's user, on the
 * daemon's host; readonly (default true): false lets the guest write, its
 * writes staying in the VM. */
#ifndef AIRLOCK_SANDBOX_CREATE_MOUNTS_H
#define AIRLOCK_SANDBOX_CREATE_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "guest/agent/proto.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/registry.h"

#define CREATE_MOUNTS_MAX 8

struct create_mounts {
    unsigned n;
    char spec[CREATE_MOUNTS_MAX][FIELD_MAX_TEXT + AGENT_MOUNT_MAX_PATH + 8]; /* --mount's value */
    char target[CREATE_MOUNTS_MAX][AGENT_MOUNT_MAX_PATH];
    bool rw[CREATE_MOUNTS_MAX];
};

/* Reads f's "mounts" (absent: n = 0); a bad entry answers 400 naming
 * "mounts" (f->failed). */
void create_mounts_parse(struct fields *f, struct create_mounts *cm);

/* After the VM answered: each mount's MOUNT to its agent.  0, or -1 with
 * err naming the mount and why. */
int create_mounts_deliver(const struct sandbox *sb, const struct create_mounts *cm, char *err,
                          size_t cap);

#endif

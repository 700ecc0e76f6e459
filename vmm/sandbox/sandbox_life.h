/* What every layer that serves sandboxes does to one: renew its lease,
 * copy its audit records out, and destroy it. */
#ifndef AIRLOCK_SANDBOX_SANDBOX_LIFE_H
#define AIRLOCK_SANDBOX_SANDBOX_LIFE_H

#include "vmm/sandbox/api_routes.h"

/* A request that uses the sandbox renews its lease. */
void sandbox_touch(struct api_server *srv, struct sandbox *sb);

/* A request that runs or follows a command holds its sandbox's lease
 * while it lasts (+1 at its start, -1 at its end: a sandbox is not idle
 * while a command streams to someone).  Either end renews the lease. */
void sandbox_hold(struct api_server *srv, struct sandbox *sb, int delta);

/* The sandbox's new audit lines into the daemon's --audit log, and
 * counted (vmm/sandbox/audit_tally.h). */
void sandbox_forward_audit(struct api_server *srv, struct sandbox *sb);

/* Stops the VM (a read-write volume's writes synced first), lets go of
 * its volumes (volume_release_holder: only destroying a sandbox does;
 * its VM process ending does not) and frees the slot once unused; the
 * caller's reference is dropped. */
void sandbox_destroy(struct api_server *srv, struct sandbox *sb);

#endif

/* airlock sandbox-vm --control-fd N: the daemon's snapshots of the running
 * VM (vmm/snapshot/snapshot_control.h), served by a thread of their own. */
#ifndef AIRLOCK_CLI_RUN_CONTROL_H
#define AIRLOCK_CLI_RUN_CONTROL_H

#include "vmm/cli/run_ctx.h"

/* Starts the thread (r->control_fd >= 0).  0 or an errno. */
int run_control_start(struct run_ctx *r);

#endif

/* The daemon's state folder (`airlock serve --state DIR`): what outlives
 * the daemon process, paused sandboxes (sandboxes/ID/) and named volumes
 * (volumes/).  One daemon at a time per folder: two would each take the
 * other's paused sandboxes for their own. */
#ifndef AIRLOCK_SANDBOX_DAEMON_STATE_H
#define AIRLOCK_SANDBOX_DAEMON_STATE_H

#include <stddef.h>

#define DAEMON_STATE_LOCK      "lock"
#define DAEMON_STATE_SANDBOXES "sandboxes"
#define DAEMON_STATE_VOLUMES   "volumes"

/* Makes dir and its sub-folders (0700) and locks it for this process (the
 * lock holds the daemon's pid, for the error another daemon prints).  The
 * lock's fd, kept open as long as the daemon lives; else -1 with err
 * naming the folder and why (another daemon's pid when it is in use). */
int daemon_state_open(const char *dir, char *err, size_t cap);

#endif

/* Snapshots of a running sandbox: the control socket between `airlock
 * serve` and one `airlock sandbox-vm` (a SOCK_SEQPACKET pair, the VM's end
 * at a fixed fd).  The daemon sends "SNAPSHOT" with the snapshot's files
 * as SCM_RIGHTS (state, memory, then one overlay per copy-on-write disk,
 * in disk order: the jailed VM may open no file itself); the VM pauses,
 * writes them as `airlock snapshot` would, resumes, and answers "OK" or
 * "ERR <reason>".  One request at a time. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_CONTROL_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_CONTROL_H

#include <stddef.h>

#include "snapshot/snapshot_state.h"

#define SNAP_CONTROL_MAX_FDS (2 + SNAP_MAX_DISKS)
#define SNAP_CONTROL_MSG_MAX 512

/* The daemon: asks for a snapshot into fds[0..nfds).  0 or -errno. */
int snap_control_request(int sock, const int *fds, unsigned nfds);
/* ... and waits at most timeout_ms for the answer: 0 for OK; -EIO with
 * the VM's reason in msg; -ETIMEDOUT; -ECONNRESET when the VM is gone. */
int snap_control_answer_wait(int sock, unsigned timeout_ms, char *msg, size_t cap);

/* The VM: the next request.  1 with *nfds fds taken (the caller closes
 * them); 0 when the daemon closed its end; -EPROTO for anything that is
 * not a request (its fds closed here). */
int snap_control_next(int sock, int *fds, unsigned *nfds);
/* ... and its answer: msg NULL for OK. */
int snap_control_answer(int sock, const char *msg);

#endif

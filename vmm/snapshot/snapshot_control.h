/* Snapshots of a running sandbox, and its credentials: the control socket
 * between `airlock serve` and one `airlock sandbox-vm` (a SOCK_SEQPACKET
 * pair, the VM's end at a fixed fd).
 *
 * "CREDENTIALS" (no fds) asks for what the VM's agent must be told when
 * the sandbox has secrets (--secret): the agent's CREDENTIALS payload
 * (guest/agent/proto.h: the placeholders and the VM's CA certificate),
 * which the VM made when it started; the answer is "OK" and the payload,
 * or "ERR <reason>".  The daemon checks it as it would any agent payload
 * and sends it to the agent itself.
 *  The daemon sends "SNAPSHOT" with the snapshot's files
 * as SCM_RIGHTS (state, memory, then one overlay per copy-on-write disk,
 * in disk order: the jailed VM may open no file itself); the VM pauses,
 * writes them as `airlock snapshot` would, resumes, and answers "OK" or
 * "ERR <reason>".  "SNAPSHOT-STOP" is the same but the VM stays paused
 * once it saved itself (a sandbox's pause: the process is ended next, and
 * a guest that ran on would be ahead of what was saved, its output already
 * with the daemon); a save that failed resumes it all the same.  One
 * request at a time. */
#ifndef AIRLOCK_SNAPSHOT_SNAPSHOT_CONTROL_H
#define AIRLOCK_SNAPSHOT_SNAPSHOT_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmm/snapshot/snapshot_state.h"

#define SNAP_CONTROL_MAX_FDS (2 + SNAP_MAX_DISKS)
#define SNAP_CONTROL_MSG_MAX 512

/* One request: `len` bytes of text and nfds (at most SNAP_CONTROL_MAX_FDS)
 * fds as SCM_RIGHTS.  0 or -errno. */
int snap_control_send(int sock, const char *text, size_t len, const int *fds, unsigned nfds);
/* The daemon: asks for a snapshot into fds[0..nfds) (stop: and the VM
 * to stay paused after it).  0 or -errno. */
int snap_control_request(int sock, const int *fds, unsigned nfds, bool stop);
/* ... and waits at most timeout_ms for the answer: 0 for OK; -EIO with
 * the VM's reason in msg; -ETIMEDOUT; -ECONNRESET when the VM is gone. */
int snap_control_answer_wait(int sock, unsigned timeout_ms, char *msg, size_t cap);

/* The VM: the next request.  1 (a snapshot) with *nfds fds taken (the
 * caller closes them); 2 (credentials, no fds); 5 (a disk request of
 * vmm/snapshot/disk_control.h: its bytes in text, at least
 * SNAP_CONTROL_TEXT_MAX of room, *textlen of them, unparsed, and its fds,
 * which the caller closes); 0 when the daemon closed its end; -EPROTO for
 * anything that is not a request (its fds closed here). */
int snap_control_next(int sock, int *fds, unsigned *nfds, char *text, size_t *textlen);
#define SNAP_CONTROL_SNAPSHOT      1
#define SNAP_CONTROL_CREDENTIALS   2
#define SNAP_CONTROL_SNAPSHOT_STOP 3
#define SNAP_CONTROL_RESUME        4
#define SNAP_CONTROL_DISK          5
/* The longest request text, and how a disk request starts. */
#define SNAP_CONTROL_TEXT_MAX      96
#define SNAP_CONTROL_DISK_PREFIX   "DISK-"

/* The daemon: "RESUME" (no fds), for a VM that SNAPSHOT-STOP left paused
 * when what it saved cannot be kept; the answer as
 * snap_control_answer_wait's. */
int snap_control_resume(int sock, unsigned timeout_ms, char *msg, size_t cap);

/* The largest credentials answer ("OK" and a CREDENTIALS payload). */
/* 8 secrets of NAME=placeholder (vmm/egress/secret.h: 128 + 1 + 4000 bytes
 * and a NUL each), and the CA's PEM. */
#define SNAP_CONTROL_CRED_MAX (2 + 8 + 8 * 4130 + 16384)

/* The daemon: asks for the credentials payload and waits at most
 * timeout_ms; its length in buf, -EIO with the VM's reason in msg,
 * -ETIMEDOUT, -EMSGSIZE, or -ECONNRESET when the VM is gone. */
ssize_t snap_control_credentials(int sock, unsigned timeout_ms, unsigned char *buf, size_t cap,
                                 char *msg, size_t msgcap);
/* The VM: answers a credentials request with the payload at msg + 2
 * (len bytes; msg[0, 2) is room for the "OK" in front of it). */
int snap_control_credentials_answer(int sock, unsigned char *msg, size_t len);
/* ... and its answer: msg NULL for OK. */
int snap_control_answer(int sock, const char *msg);

#endif

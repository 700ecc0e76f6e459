/* The pod's side of pod.h: the sandbox container's init stand-in serves
 * POD_SOCK, filling a spare disk slot of the pod's VM for each member
 * that joins and, once the member's connection closes, ending the member
 * in the guest and emptying its slot.
 *
 * A member asks "FILL SERIAL NAME" with two fds (its root disk, read
 * only; an empty overlay file) and gets "OK SLOT" or "ERR reason"; then
 * it holds the connection, and may ask "OOM PID" ("YES" or "NO": whether
 * the guest's kernel killed that process for memory; the pod's stand-in
 * is the one reader of the guest's log).  Only the stand-in's own user may
 * connect (the folder is 0700 too). */
#ifndef AIRLOCK_RUNTIME_POD_SERVER_H
#define AIRLOCK_RUNTIME_POD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pod_server;

/* Listens on DIR/POD_SOCK for the VM whose agent is at agent_sock and
 * whose control socket is control_fd (both stay the caller's), with
 * `slots` spare disks; serves on threads of its own.  0, or -1 with err. */
int pod_server_start(const char *dir, const char *agent_sock, int control_fd, unsigned slots,
                     struct pod_server **out, char *err, size_t cap);

/* Whether the pod VM's kernel killed guest process `pid` (the agent's
 * view) for memory: the guest's log read anew first, as for a member's
 * "OOM PID".  The sandbox container's stand-in asks it of its own first
 * process, the pod's pause: the log is the whole VM's, its members' kills
 * are theirs. */
bool pod_server_oom_killed(struct pod_server *s, uint32_t pid);

#endif

/* The messages between a pod's stand-in and its members' (pod.h): one
 * line of text per SOCK_SEQPACKET message, at most POD_WIRE_MAX bytes,
 * with file descriptors alongside (SCM_RIGHTS). */
#ifndef AIRLOCK_RUNTIME_POD_WIRE_H
#define AIRLOCK_RUNTIME_POD_WIRE_H

#include <stddef.h>

#define POD_WIRE_MAX    256
#define POD_WIRE_MAX_FDS 2

/* Sends msg (a NUL-terminated line) and nfds fds.  0 or -errno. */
int pod_wire_send(int sock, const char *msg, const int *fds, unsigned nfds);

/* The next message as a NUL-terminated string, waiting at most
 * timeout_ms (0: for ever).  Its length; 0 when the peer closed;
 * -ETIMEDOUT; -EPROTO for a message with fds, a truncated one or one
 * holding a NUL (its fds closed); -errno. */
int pod_wire_recv(int sock, char *msg, size_t cap, unsigned timeout_ms);

/* The same, taking up to POD_WIRE_MAX_FDS fds (fds[i] -1 when fewer came:
 * *nfds says how many). */
int pod_wire_recv_fds(int sock, char *msg, size_t cap, int *fds, unsigned *nfds,
                      unsigned timeout_ms);

#endif
